//! A patch as a person sees it: each line's part from a real parse of git's unified diff, its
//! size, and its colours. A hunk ends when its header's counts are used up, never at a line that
//! merely looks like a header, so an added line whose text begins with `++ ` (shown `+++ `) is an
//! added line: it cannot pass for a file header, change the colours of what follows or the count.

use crate::screen::{Colour, Shown};

/// What a line of a diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// `diff --git`, and the lines after it before the first hunk (`index`, modes, renames,
    /// `---`/`+++`, `Binary files … differ`).
    FileHeader,
    /// `@@ -a,b +c,d @@`.
    HunkHeader,
    Added,
    Removed,
    Context,
    /// `\ No newline at end of file`.
    NoNewline,
}

/// How big a patch is: files changed (mode changes, renames and binary files included), lines
/// added and removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Size {
    pub files: usize,
    pub added: usize,
    pub removed: usize,
}

impl Size {
    /// `2 files, +12 -3 lines`.
    pub(crate) fn words(&self) -> String {
        format!(
            "{} {}, +{} -{} lines",
            self.files,
            if self.files == 1 { "file" } else { "files" },
            self.added,
            self.removed
        )
    }
}

/// Each line of `diff` (without its newline) and its part.
pub(crate) fn parts(diff: &str) -> Vec<(Part, &str)> {
    let mut parts = Vec::new();
    // Lines the current hunk still holds on each side.
    let (mut old, mut new) = (0usize, 0usize);
    // Whether the last line was the end of a hunk, which a no-newline marker may follow.
    let mut after_hunk_line = false;
    // Split at newlines only: a carriage return stays in its line, to be shown.
    let lines = diff
        .split_inclusive('\n')
        .map(|line| line.strip_suffix('\n').unwrap_or(line));
    for line in lines {
        if old > 0 || new > 0 {
            let part = match line.as_bytes().first() {
                Some(b'+') if new > 0 => {
                    new -= 1;
                    Some(Part::Added)
                }
                Some(b'-') if old > 0 => {
                    old -= 1;
                    Some(Part::Removed)
                }
                // An empty line is a context line whose space was lost.
                Some(b' ') | None if old > 0 && new > 0 => {
                    old -= 1;
                    new -= 1;
                    Some(Part::Context)
                }
                Some(b'\\') => Some(Part::NoNewline),
                _ => None,
            };
            if let Some(part) = part {
                parts.push((part, line));
                after_hunk_line = true;
                continue;
            }
            // The hunk ended early: what follows is read as headers again.
            (old, new) = (0, 0);
        }
        if after_hunk_line && line.starts_with('\\') {
            parts.push((Part::NoNewline, line));
            continue;
        }
        after_hunk_line = false;
        if let Some(counts) = hunk_counts(line) {
            (old, new) = counts;
            parts.push((Part::HunkHeader, line));
        } else {
            parts.push((Part::FileHeader, line));
        }
    }
    parts
}

/// The size of `diff`, from its parts: every `diff --git` header is a file (so a mode change, a
/// rename or a binary file with no hunk counts), every added and removed line is counted.
pub(crate) fn size(diff: &str) -> Size {
    let mut size = Size::default();
    for (part, line) in parts(diff) {
        match part {
            Part::FileHeader if line.starts_with("diff --git ") => size.files += 1,
            Part::Added => size.added += 1,
            Part::Removed => size.removed += 1,
            Part::FileHeader | Part::HunkHeader | Part::Context | Part::NoNewline => {}
        }
    }
    size
}

/// `diff` escaped for a screen, added lines green, removed red, hunk heads cyan, file heads bold
/// (colours only when `colour`).
pub(crate) fn shown(diff: &str, colour: bool) -> Shown {
    let mut shown = Shown::new(colour);
    for (part, line) in parts(diff) {
        match part {
            Part::FileHeader => shown.painted(Colour::Bold, line),
            Part::HunkHeader => shown.painted(Colour::Cyan, line),
            Part::Added => shown.painted(Colour::Green, line),
            Part::Removed => shown.painted(Colour::Red, line),
            Part::Context | Part::NoNewline => shown.text(line),
        };
        shown.text("\n");
    }
    shown
}

/// `@@ -12,5 +12,6 @@ context` → (5, 6); a count left out is 1. None for any other line.
fn hunk_counts(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let count = |range: &str| -> Option<usize> {
        match range.split_once(',') {
            Some((start, count)) => {
                start.parse::<usize>().ok()?;
                count.parse().ok()
            }
            None => range.parse::<usize>().ok().map(|_| 1),
        }
    };
    Some((count(old)?, count(new)?))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const DIFF: &str = "\
diff --git a/x.py b/x.py
index 1111111..2222222 100644
--- a/x.py
+++ b/x.py
@@ -1,3 +1,4 @@
 keep
-old
+++ b/fake.py
+@@ -1 +1 @@
 end
\\ No newline at end of file
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/logo.png b/logo.png
index 3333333..4444444 100644
Binary files a/logo.png and b/logo.png differ
diff --git a/new.txt b/new.txt
new file mode 100644
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+-- not a removal
";

    #[test]
    fn an_added_line_that_looks_like_a_header_is_counted_and_coloured_as_added() {
        let actual: Vec<(Part, &str)> = parts(DIFF).into_iter().skip(4).take(6).collect();

        let expected = vec![
            (Part::HunkHeader, "@@ -1,3 +1,4 @@"),
            (Part::Context, " keep"),
            (Part::Removed, "-old"),
            (Part::Added, "+++ b/fake.py"),
            (Part::Added, "+@@ -1 +1 @@"),
            (Part::Context, " end"),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn the_size_counts_files_by_header_and_lines_by_hunk() {
        let actual = (size(DIFF), size(DIFF).words(), size(""));

        let expected = (
            Size {
                files: 4,
                added: 3,
                removed: 1,
            },
            "4 files, +3 -1 lines".to_string(),
            Size::default(),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_hunk_that_ends_early_leaves_the_next_file_readable() {
        let diff = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,5 +1,5 @@\n-x\n+y\ndiff --git a/b b/b\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-p\n+q\n";

        let actual = size(diff);

        assert_eq!(
            actual,
            Size {
                files: 2,
                added: 2,
                removed: 2
            }
        );
    }

    #[test]
    fn the_shown_diff_is_escaped_and_painted_by_part() {
        let diff = "@@ -1 +1 @@\n-old\n+new\u{1b}[2K\n";

        let actual = (
            shown(diff, false).as_str().to_string(),
            shown(diff, true).as_str().to_string(),
        );

        assert_eq!(
            actual,
            (
                "@@ -1 +1 @@\n-old\n+new<U+001B>[2K\n".to_string(),
                "\x1b[36m@@ -1 +1 @@\x1b[0m\n\x1b[31m-old\x1b[0m\n\x1b[32m+new<U+001B>[2K\x1b[0m\n"
                    .to_string()
            )
        );
    }
}
