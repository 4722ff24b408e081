//! Characters a reader does not see as they are: bidirectional controls (the Trojan Source class,
//! where the text reads differently from what the compiler runs), terminal controls (ESC and the
//! sequences it starts, carriage return, backspace: printed by `cat` or a diff tool, they erase
//! or rewrite what a person sees) and other invisible characters, in file names and on the lines a
//! change adds.
//!
//! Bidirectional controls are U+202A–U+202E, U+2066–U+2069, U+200E/U+200F and U+061C; terminal
//! controls are the C0 set but tab and newline, DEL and the C1 set; the invisible ones are every
//! other character of Unicode's Cf (format) category, plus the line and paragraph separators
//! U+2028/U+2029 (line breaks to JavaScript, not to a diff viewer). A line ending `\r\n` is a
//! line ending, not a control on the line. A byte order mark at the very start of a file is left alone. Added lines
//! are judged as in `markers` (a line already in the baseline text is not new). One flag per file
//! and class, naming the first lines and characters, so a file full of them stays one sentence.

use std::fmt::Write as _;

use plumb_protocol::chars::{is_bidi_control as is_bidi, is_invisible, is_terminal_control};

use super::markers::added_lines;
use super::{ChangeStatus, FileChange, FileMode, TamperFlag, TamperKind};

/// How many line numbers and characters one flag names.
const NAMED: usize = 5;

/// The three classes, as flag kinds.
fn class(c: char) -> Option<TamperKind> {
    if is_bidi(c) {
        Some(TamperKind::BidiControl)
    } else if is_terminal_control(c) {
        Some(TamperKind::ControlCharacter)
    } else if is_invisible(c) {
        Some(TamperKind::InvisibleCharacter)
    } else {
        None
    }
}

/// `text` with every bidirectional, invisible or control character (tab included) spelled out
/// as `<U+XXXX>`, so a detail shows what is there instead of being reordered or hidden by it.
pub(crate) fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\t' || class(c).is_some() {
            let _ = write!(out, "<U+{:04X}>", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// How a character is named in a detail: its code point, and for the common ones its name.
fn named(c: char) -> String {
    let name = match c {
        '\u{202a}' => "left-to-right embedding",
        '\u{202b}' => "right-to-left embedding",
        '\u{202c}' => "pop directional formatting",
        '\u{202d}' => "left-to-right override",
        '\u{202e}' => "right-to-left override",
        '\u{2066}' => "left-to-right isolate",
        '\u{2067}' => "right-to-left isolate",
        '\u{2068}' => "first strong isolate",
        '\u{2069}' => "pop directional isolate",
        '\u{200e}' => "left-to-right mark",
        '\u{200f}' => "right-to-left mark",
        '\u{061c}' => "Arabic letter mark",
        '\u{200b}' => "zero width space",
        '\u{200c}' => "zero width non-joiner",
        '\u{200d}' => "zero width joiner",
        '\u{2060}' => "word joiner",
        '\u{feff}' => "zero width no-break space",
        '\u{ad}' => "soft hyphen",
        '\u{2028}' => "line separator",
        '\u{2029}' => "paragraph separator",
        '\u{0}' => "NUL",
        '\u{1b}' => "escape",
        '\r' => "carriage return",
        '\u{7}' => "bell",
        '\u{8}' => "backspace",
        '\u{7f}' => "delete",
        '\u{9b}' => "control sequence introducer",
        '\u{9d}' => "operating system command",
        _ => "",
    };
    if name.is_empty() {
        format!("U+{:04X}", u32::from(c))
    } else {
        format!("U+{:04X} ({name})", u32::from(c))
    }
}

/// "A", "A and B", "A, B and C"; past [`NAMED`] items, "… and N more".
fn listed(items: &[String]) -> String {
    let (shown_items, rest) = items.split_at(items.len().min(NAMED));
    match (shown_items, rest.len()) {
        ([], _) => String::new(),
        ([one], 0) => one.clone(),
        ([init @ .., last], 0) => format!("{} and {last}", init.join(", ")),
        (all, more) => format!("{} and {more} more", all.join(", ")),
    }
}

/// The classes' characters in `text`, in order of first appearance, per class.
fn found(text: &str) -> Vec<(TamperKind, Vec<char>)> {
    let mut out: Vec<(TamperKind, Vec<char>)> = Vec::new();
    for c in text.chars() {
        let Some(kind) = class(c) else {
            continue;
        };
        match out.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, chars)) if !chars.contains(&c) => chars.push(c),
            Some(_) => {}
            None => out.push((kind, vec![c])),
        }
    }
    out.sort_by_key(|(kind, _)| *kind);
    out
}

/// A flag for each class of character in the change's (new) file name.
pub(super) fn in_path(change: &FileChange) -> Vec<TamperFlag> {
    if change.status == ChangeStatus::Deleted {
        return Vec::new();
    }
    found(&change.path)
        .into_iter()
        .map(|(kind, chars)| {
            let names: Vec<String> = chars.into_iter().map(named).collect();
            TamperFlag {
                kind,
                path: change.path.clone(),
                line: None,
                detail: format!(
                    "{}: the file name holds {}",
                    shown(&change.path),
                    listed(&names)
                ),
            }
        })
        .collect()
}

/// A flag for each class of character on the lines the change adds (and in a link's new target).
pub(super) fn in_added_lines(change: &FileChange) -> Vec<TamperFlag> {
    let lines: Vec<(usize, String)> = match (&change.after, &change.after_mode) {
        (Some(after), _) => {
            let after = after.strip_prefix('\u{feff}').unwrap_or(after);
            added_lines(change.before.as_deref(), after)
                .into_iter()
                .map(|(number, line)| (number, line.to_string()))
                .collect()
        }
        (None, Some(FileMode::Symlink { target })) => match &change.before_mode {
            Some(FileMode::Symlink { target: old }) if old == target => Vec::new(),
            _ => vec![(1, target.clone())],
        },
        (None, _) => Vec::new(),
    };
    // Per class: the line numbers and the distinct characters, in order of appearance.
    let mut per_kind: Vec<(TamperKind, Vec<usize>, Vec<char>)> = Vec::new();
    for (number, line) in &lines {
        for (kind, chars) in found(line) {
            if !per_kind.iter().any(|(k, ..)| *k == kind) {
                per_kind.push((kind, Vec::new(), Vec::new()));
            }
            if let Some((_, numbers, seen)) = per_kind.iter_mut().find(|(k, ..)| *k == kind) {
                numbers.push(*number);
                for c in chars {
                    if !seen.contains(&c) {
                        seen.push(c);
                    }
                }
            }
        }
    }
    per_kind.sort_by_key(|(kind, ..)| *kind);
    let link = change.after.is_none();
    per_kind
        .into_iter()
        .filter_map(|(kind, numbers, chars)| {
            let first = *numbers.first()?;
            let names: Vec<String> = chars.into_iter().map(named).collect();
            let path = shown(&change.path);
            let detail = if link {
                format!("{path}: the link's target holds {}", listed(&names))
            } else if numbers.len() == 1 {
                format!(
                    "{path} line {first}: the added line holds {}",
                    listed(&names)
                )
            } else {
                let numbers: Vec<String> = numbers.iter().map(usize::to_string).collect();
                format!(
                    "{path} lines {}: the added lines hold {}",
                    listed(&numbers),
                    listed(&names)
                )
            };
            Some(TamperFlag {
                kind,
                path: change.path.clone(),
                line: Some(first),
                detail,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn modified(path: &str, before: &str, after: &str) -> FileChange {
        FileChange {
            status: ChangeStatus::Modified,
            path: path.into(),
            before: Some(before.into()),
            after: Some(after.into()),
            before_mode: Some(FileMode::Regular),
            after_mode: Some(FileMode::Regular),
        }
    }

    fn flag(kind: TamperKind, path: &str, line: Option<usize>, detail: &str) -> TamperFlag {
        TamperFlag {
            kind,
            path: path.into(),
            line,
            detail: detail.into(),
        }
    }

    #[test]
    fn bidi_controls_on_added_lines_block_a_kept_line_does_not() {
        // The Trojan Source "commenting out" example: the check reads as a comment.
        let before =
            "ok = True\n/* \u{202e} } \u{2066}if (admin)\u{2069} \u{2066} begin admins only */\n";
        let after = format!(
            "{before}/* \u{202e} }} \u{2066}if (isAdmin)\u{2069} \u{2066} begin */\nx = 1\n"
        );
        let actual = in_added_lines(&modified("auth.js", before, &after));
        let expected = vec![flag(
            TamperKind::BidiControl,
            "auth.js",
            Some(3),
            "auth.js line 3: the added line holds U+202E (right-to-left override), U+2066 (left-to-right isolate) and U+2069 (pop directional isolate)",
        )];
        assert_eq!(actual, expected);
    }

    #[test]
    fn invisible_and_control_characters_are_one_flag_per_file_and_class_naming_the_first_lines() {
        let after: String = (1..=7)
            .map(|n| format!("name{n} = \"a\u{200b}b\"\n"))
            .collect();
        // A line that erases itself on a terminal, and a carriage return inside a line (a CRLF
        // line ending is not one: it is the end of the line).
        let change = FileChange {
            status: ChangeStatus::Added,
            path: "names.py".into(),
            before: None,
            after: Some(format!(
                "\u{feff}{after}tab\tand\rreturn\nos.system('x')  \u{1b}[2K\u{1b}[Gok = 1\r\n"
            )),
            before_mode: None,
            after_mode: Some(FileMode::Regular),
        };
        let actual = in_added_lines(&change);
        let expected = vec![
            flag(
                TamperKind::InvisibleCharacter,
                "names.py",
                Some(1),
                "names.py lines 1, 2, 3, 4, 5 and 2 more: the added lines hold U+200B (zero width space)",
            ),
            flag(
                TamperKind::ControlCharacter,
                "names.py",
                Some(8),
                "names.py lines 8 and 9: the added lines hold U+000D (carriage return) and U+001B (escape)",
            ),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_file_name_with_a_bidi_control_is_shown_spelled_out() {
        let change = FileChange {
            status: ChangeStatus::Added,
            path: "billing/notes\u{202e}txt.py".into(),
            before: None,
            after: Some("NOTE = 1\n".into()),
            before_mode: None,
            after_mode: Some(FileMode::Regular),
        };
        let actual = in_path(&change);
        let expected = vec![flag(
            TamperKind::BidiControl,
            "billing/notes\u{202e}txt.py",
            None,
            "billing/notes<U+202E>txt.py: the file name holds U+202E (right-to-left override)",
        )];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_link_target_is_scanned_like_an_added_line() {
        let change = FileChange {
            status: ChangeStatus::Added,
            path: "docs/latest".into(),
            before: None,
            after: None,
            before_mode: None,
            after_mode: Some(FileMode::Symlink {
                target: "v2\u{200f}/index.md".into(),
            }),
        };
        let actual = in_added_lines(&change);
        let expected = vec![flag(
            TamperKind::BidiControl,
            "docs/latest",
            Some(1),
            "docs/latest: the link's target holds U+200F (right-to-left mark)",
        )];
        assert_eq!(actual, expected);
    }

    #[test]
    fn shown_spells_out_only_what_hides() {
        let actual = shown("naïve\tfile\u{202e}\n.py");
        assert_eq!(actual, "naïve<U+0009>file<U+202E><U+000A>.py");
    }
}
