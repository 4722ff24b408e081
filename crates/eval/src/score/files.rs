//! The files a unified diff touches, read from its headers the way SWE-bench's harness reads a
//! test patch: `diff --git a/X b/Y` (or a plain diff's `--- a/X` / `+++ b/Y` pair), with
//! `/dev/null` or `new file mode` for a file the patch creates and `deleted file mode` for one it
//! removes. Hunks are counted, so a removed line that starts with `-- ` is never read as a header.

/// One file of a patch: its path before (`None`: created) and after (`None`: deleted), without
/// the `a/` and `b/` prefixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatchFile {
    pub(crate) source: Option<String>,
    pub(crate) target: Option<String>,
}

/// The files SWE-bench's `NON_TEST_EXTS` leaves out of the test run's arguments (the official
/// list, `csv` without its dot included).
const NON_TEST_EXTS: &[&str] = &[
    ".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml",
];

/// Every file `patch` touches, in the order it names them.
pub(crate) fn files(patch: &str) -> Vec<PatchFile> {
    let mut files: Vec<PatchFile> = Vec::new();
    // Whether the last entry came from a `diff --git` line and still waits for its `---`/`+++`.
    let mut git_entry_open = false;
    let mut hunk = Hunk::default();
    for line in patch.lines() {
        if hunk.is_open() {
            hunk.take(line);
            continue;
        }
        if let Some(rest) = line.strip_prefix("diff --git ") {
            files.push(from_git_line(rest));
            git_entry_open = true;
        } else if line.starts_with("new file mode") {
            if let Some(file) = files.last_mut() {
                file.source = None;
            }
        } else if line.starts_with("deleted file mode") {
            if let Some(file) = files.last_mut() {
                file.target = None;
            }
        } else if let Some(rest) = line.strip_prefix("--- ") {
            let source = header_path(rest, "a/");
            if git_entry_open {
                if let Some(file) = files.last_mut() {
                    file.source = source;
                }
            } else {
                files.push(PatchFile {
                    source,
                    target: None,
                });
            }
        } else if let Some(rest) = line.strip_prefix("+++ ") {
            if let Some(file) = files.last_mut() {
                file.target = header_path(rest, "b/");
            }
            git_entry_open = false;
        } else if line.starts_with("@@ ") {
            hunk = Hunk::parse(line);
            git_entry_open = false;
        }
    }
    files
}

/// The test files SWE-bench's `get_test_directives` hands the runner: each file the patch leaves
/// in place, less the data files of [`NON_TEST_EXTS`]. (The official list keeps a file the test
/// patch deletes, which no runner can run; it is left out here.)
pub(crate) fn test_directives(patch: &str) -> Vec<String> {
    let mut directives: Vec<String> = Vec::new();
    for file in files(patch) {
        let Some(target) = file.target else {
            continue;
        };
        if NON_TEST_EXTS.iter().any(|ext| target.ends_with(ext)) || directives.contains(&target) {
            continue;
        }
        directives.push(target);
    }
    directives
}

/// `a/X b/Y` of a `diff --git` line: both paths (the header alone cannot tell a created or
/// deleted file; the lines after it do). Git writes both the same unless the file is renamed,
/// so the split is at ` b/` after the middle, as the official `a/.* b/(.*)` splits at the last.
fn from_git_line(rest: &str) -> PatchFile {
    if rest.starts_with('"') {
        let mut quoted = rest.splitn(2, "\" ");
        let source = quoted.next().map(|word| format!("{word}\""));
        let target = quoted.next();
        return PatchFile {
            source: source.and_then(|word| header_path(&word, "a/")),
            target: target.and_then(|word| header_path(word, "b/")),
        };
    }
    match rest.rfind(" b/") {
        Some(at) => PatchFile {
            source: header_path(rest.get(..at).unwrap_or_default(), "a/"),
            target: header_path(rest.get(at + 1..).unwrap_or_default(), "b/"),
        },
        None => PatchFile {
            source: None,
            target: None,
        },
    }
}

/// The path of a `---`/`+++` header (or half a `diff --git` line): `None` for `/dev/null`; the
/// quotes git puts around unusual names taken off; a plain diff's tab and date cut.
fn header_path(text: &str, prefix: &str) -> Option<String> {
    let text = text
        .split('\t')
        .next()
        .unwrap_or(text)
        .trim_end_matches('\r');
    if text == "/dev/null" {
        return None;
    }
    let text = unquoted(text);
    let path = text.strip_prefix(prefix).unwrap_or(&text);
    (!path.is_empty()).then(|| path.to_owned())
}

/// Git's C-style quoting (`"a/sp\303\251cial \"name\""`) undone.
fn unquoted(text: &str) -> String {
    let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
        return text.to_owned();
    };
    let mut bytes: Vec<u8> = Vec::new();
    let mut chars = inner.bytes().peekable();
    while let Some(byte) = chars.next() {
        if byte != b'\\' {
            bytes.push(byte);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(digit @ b'0'..=b'7') => {
                let mut value = u32::from(digit - b'0');
                for _ in 0..2 {
                    match chars.peek() {
                        Some(next @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(next - b'0');
                            chars.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(u8::try_from(value).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The lines left in the current hunk, old and new side.
#[derive(Debug, Default)]
struct Hunk {
    old: u64,
    new: u64,
}

impl Hunk {
    /// `@@ -12,5 +12,7 @@ context`: a count left out is 1.
    fn parse(line: &str) -> Hunk {
        let mut words = line.split_whitespace().skip(1);
        let count = |word: Option<&str>, sign: char| {
            word.and_then(|w| w.strip_prefix(sign))
                .map(|range| match range.split_once(',') {
                    Some((_, count)) => count.parse().unwrap_or(0),
                    None => 1,
                })
                .unwrap_or(0)
        };
        let old = count(words.next(), '-');
        let new = count(words.next(), '+');
        Hunk { old, new }
    }

    fn is_open(&self) -> bool {
        self.old > 0 || self.new > 0
    }

    fn take(&mut self, line: &str) {
        match line.as_bytes().first() {
            Some(b'-') => self.old = self.old.saturating_sub(1),
            Some(b'+') => self.new = self.new.saturating_sub(1),
            Some(b'\\') => {}
            // A context line; an empty line is a context line whose space an editor took off.
            _ => {
                self.old = self.old.saturating_sub(1);
                self.new = self.new.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn file(source: Option<&str>, target: Option<&str>) -> PatchFile {
        PatchFile {
            source: source.map(str::to_owned),
            target: target.map(str::to_owned),
        }
    }

    /// A modified file whose hunk removes a line that looks like a header, a created file, a
    /// deleted file, a data file, a quoted name, and a plain diff without `diff --git`.
    const PATCH: &str = "\
diff --git a/tests/test_x.py b/tests/test_x.py
index 1111111..2222222 100644
--- a/tests/test_x.py
+++ b/tests/test_x.py
@@ -1,3 +1,3 @@
 import x
---- a/not/a/header.py
+++++ b/not/a/header.py
 def test(): pass
diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1 @@
+def test_new(): pass
diff --git a/tests/test_old.py b/tests/test_old.py
deleted file mode 100644
index 4444444..0000000
--- a/tests/test_old.py
+++ /dev/null
@@ -1 +0,0 @@
-def test_old(): pass
diff --git a/tests/data.json b/tests/data.json
--- a/tests/data.json
+++ b/tests/data.json
@@ -1 +1 @@
-{}
+[]
diff --git \"a/tests/sp\\303\\251cial.py\" \"b/tests/sp\\303\\251cial.py\"
--- \"a/tests/sp\\303\\251cial.py\"
+++ \"b/tests/sp\\303\\251cial.py\"
@@ -1 +1 @@
-a
+b
--- a/plain.py\t2024-01-01 00:00:00
+++ b/plain.py\t2024-01-02 00:00:00
@@ -1 +1 @@
-a
+b
";

    #[test]
    fn headers_name_each_file_and_hunks_are_skipped() {
        let actual = files(PATCH);

        let expected = vec![
            file(Some("tests/test_x.py"), Some("tests/test_x.py")),
            file(None, Some("tests/test_new.py")),
            file(Some("tests/test_old.py"), None),
            file(Some("tests/data.json"), Some("tests/data.json")),
            file(Some("tests/spécial.py"), Some("tests/spécial.py")),
            file(Some("plain.py"), Some("plain.py")),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn directives_are_the_test_files_left_in_place() {
        let actual = test_directives(PATCH);

        let expected = vec![
            "tests/test_x.py".to_owned(),
            "tests/test_new.py".to_owned(),
            "tests/spécial.py".to_owned(),
            "plain.py".to_owned(),
        ];
        assert_eq!(actual, expected);
    }
}
