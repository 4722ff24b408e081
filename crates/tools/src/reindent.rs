//! A second try for `edit_file` when `old_text` is not in the file as written: the same lines with
//! different indentation, or with `read_file`'s line numbers still in front of them.
//!
//! Small models (and tired large ones) drop or add a level of indentation when they copy lines,
//! or copy `12| ` along with the code. When the lines match once with each line's leading
//! whitespace ignored, and the difference is the same prefix on every line, the edit is made with
//! the new text shifted by that same prefix — so a flattened copy of an indented block replaces
//! the block at its real depth. Anything less certain (two places match, the lines are shifted by
//! different amounts, a new line lacks the prefix to remove) is no match, and the model gets the
//! usual "found 0 times" note. The syntax check after the edit still applies.

/// Where an edit matched once its indentation was set aside, and what goes there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reindented {
    /// Byte range of the matched lines in the file (the last line's newline excluded).
    pub start: usize,
    pub end: usize,
    /// `new_text`, shifted to the file's indentation.
    pub replacement: String,
    /// What was adjusted, for the model: "indentation", "line numbers".
    pub adjusted: &'static str,
}

/// How the file's lines differ from `old_text`'s: a prefix added to or taken from every line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shift {
    Add(String),
    Remove(String),
}

/// Finds `old` in `text` ignoring leading whitespace (and `read_file` line numbers), once.
pub(crate) fn indentation_match(text: &str, old: &str, new: &str) -> Option<Reindented> {
    let found = find(text, old, new)?;
    // Offsets come from whole lines, so they fall on character boundaries; checked all the same.
    (text.get(..found.start).is_some() && text.get(found.end..).is_some()).then_some(found)
}

/// The edited text: `text` with the match replaced.
pub(crate) fn apply(text: &str, found: &Reindented) -> Option<String> {
    Some(format!(
        "{}{}{}",
        text.get(..found.start)?,
        found.replacement,
        text.get(found.end..)?
    ))
}

fn find(text: &str, old: &str, new: &str) -> Option<Reindented> {
    let (old, new, adjusted) = match strip_line_numbers(old) {
        Some(stripped) => {
            let new = strip_line_numbers(new).unwrap_or_else(|| new.to_string());
            (stripped, new, "line numbers")
        }
        None => (old.to_string(), new.to_string(), "indentation"),
    };
    let old_lines: Vec<&str> = trim_blank_ends(old.lines().collect());
    if old_lines.iter().all(|line| line.trim().is_empty()) {
        return None;
    }
    let mut file_lines = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let body = body.strip_suffix('\r').unwrap_or(body);
        file_lines.push((offset, body));
        offset += line.len();
    }
    let n = old_lines.len();
    let mut found = None;
    for start in 0..file_lines.len().saturating_sub(n - 1) {
        let window = &file_lines[start..start + n];
        let same = window
            .iter()
            .zip(&old_lines)
            .all(|((_, file), old)| file.trim() == old.trim());
        if same {
            if found.is_some() {
                return None;
            }
            found = Some(start);
        }
    }
    let start = found?;
    let window = &file_lines[start..start + n];
    let shift = common_shift(
        window.iter().map(|(_, line)| *line),
        old_lines.iter().copied(),
    )?;
    let replacement = shift_lines(new.strip_suffix('\n').unwrap_or(&new), &shift)?;
    let (first_offset, _) = window[0];
    let (last_offset, last_line) = window[n - 1];
    Some(Reindented {
        start: first_offset,
        end: last_offset + last_line.len(),
        replacement,
        adjusted,
    })
}

/// `text` without `read_file`'s "  12| " prefixes, when every non-blank line has one.
fn strip_line_numbers(text: &str) -> Option<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            out.push(String::new());
            continue;
        }
        let trimmed = line.trim_start();
        let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
        let rest = trimmed.get(digits..)?.strip_prefix('|')?;
        if digits == 0 {
            return None;
        }
        out.push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
    }
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    Some(joined)
}

fn trim_blank_ends(mut lines: Vec<&str>) -> Vec<&str> {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    while lines.first().is_some_and(|l| l.trim().is_empty()) {
        lines.remove(0);
    }
    lines
}

fn leading(line: &str) -> &str {
    line.get(..line.len() - line.trim_start().len())
        .unwrap_or_default()
}

/// The one prefix that turns every non-blank `old` line's indentation into the file's.
fn common_shift<'a>(
    file: impl Iterator<Item = &'a str>,
    old: impl Iterator<Item = &'a str>,
) -> Option<Shift> {
    let mut shift: Option<Shift> = None;
    for (file_line, old_line) in file.zip(old) {
        if old_line.trim().is_empty() {
            continue;
        }
        let (f, o) = (leading(file_line), leading(old_line));
        let this = if let Some(extra) = f.strip_prefix(o) {
            Shift::Add(extra.to_string())
        } else if let Some(extra) = o.strip_prefix(f) {
            Shift::Remove(extra.to_string())
        } else {
            return None;
        };
        match &shift {
            None => shift = Some(this),
            Some(existing) if *existing == this => {}
            // An empty shift reads as both Add("") and Remove(""): one of them is used.
            Some(_) => return None,
        }
    }
    shift
}

fn shift_lines(new: &str, shift: &Shift) -> Option<String> {
    let mut out = Vec::new();
    for line in new.split('\n') {
        if line.trim().is_empty() {
            out.push(line.to_string());
            continue;
        }
        out.push(match shift {
            Shift::Add(prefix) => format!("{prefix}{line}"),
            Shift::Remove(prefix) => line.strip_prefix(prefix.as_str())?.to_string(),
        });
    }
    Some(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn edit(text: &str, old: &str, new: &str) -> Option<String> {
        apply(text, &indentation_match(text, old, new)?)
    }

    const FILE: &str =
        "def f():\n    total = 1\n    if total:\n        return total\n    return 0\n";

    #[test]
    fn a_flattened_copy_replaces_the_block_at_its_real_depth() {
        let after = edit(
            FILE,
            "if total:\n    return total",
            "if total > 0:\n    return total + 1",
        )
        .unwrap();
        assert_eq!(
            after,
            "def f():\n    total = 1\n    if total > 0:\n        return total + 1\n    return 0\n"
        );
    }

    #[test]
    fn too_much_indentation_is_taken_off() {
        let after = edit(FILE, "        return 0\n", "        return -1\n").unwrap();
        assert_eq!(
            after,
            "def f():\n    total = 1\n    if total:\n        return total\n    return -1\n"
        );
    }

    #[test]
    fn read_file_line_numbers_are_dropped() {
        let found = indentation_match(FILE, " 2|     total = 1\n", " 2|     total = 2\n").unwrap();
        assert_eq!(found.adjusted, "line numbers");
        assert_eq!(FILE.get(found.start..found.end), Some("    total = 1"));
        assert_eq!(found.replacement, "    total = 2");
    }

    #[test]
    fn two_places_or_uneven_shifts_are_no_match() {
        let twice = "a:\n    x = 1\nb:\n    x = 1\n";
        assert_eq!(indentation_match(twice, "x = 1", "x = 2"), None);
        // The file's lines are 4 and 8 deep; the copy has both at 0: no one prefix fits.
        assert_eq!(
            indentation_match(FILE, "if total:\nreturn total", "if total:\nreturn 2"),
            None
        );
        // A line to shift left that lacks the prefix.
        assert_eq!(
            indentation_match(FILE, "        return 0", "return 0\n    x"),
            None
        );
        assert_eq!(indentation_match(FILE, "\n  \n", "x"), None);
        assert_eq!(indentation_match(FILE, "nowhere", "x"), None);
    }
}
