//! Names that read as a path they are not: a file called `docs∕..∕..∕etc∕passwd` (U+2215
//! DIVISION SLASH), `config．py` (U+FF0E FULLWIDTH FULL STOP) or `‥` (U+2025 TWO DOT LEADER) is
//! one plain name to git and the kernel, but a person reading the diff sees folders, a `..` that
//! climbs out, or another file's name. The characters are the punctuation and symbols that look
//! like `/`, `\` or `.` (`plumb_protocol::chars::looks_like_path_syntax`).
//!
//! The new name of every change but a deletion is looked at, and so is a link's new target (a
//! target is resolved by the kernel, where such a character is no separator at all, so the link
//! leads elsewhere than it reads). One flag per name, naming each character and what it looks
//! like.

use plumb_protocol::chars::looks_like_path_syntax;

use super::hidden::shown;
use super::{ChangeStatus, FileChange, FileMode, TamperFlag, TamperKind};

/// The flags for the change's new name and, for a link, its new target.
pub(super) fn check(change: &FileChange) -> Vec<TamperFlag> {
    if change.status == ChangeStatus::Deleted {
        return Vec::new();
    }
    let mut flags = Vec::new();
    if let Some(found) = lookalikes(&change.path) {
        flags.push(flag(
            change,
            format!("{}: the file name holds {found}", spelled(&change.path)),
        ));
    }
    let new_target = match (&change.after_mode, &change.before_mode) {
        (Some(FileMode::Symlink { target }), Some(FileMode::Symlink { target: old }))
            if old == target && change.status == ChangeStatus::Modified =>
        {
            None
        }
        (Some(FileMode::Symlink { target }), _) => Some(target),
        _ => None,
    };
    if let Some(target) = new_target
        && let Some(found) = lookalikes(target)
    {
        flags.push(flag(
            change,
            format!(
                "{}: the link's target {} holds {found}",
                spelled(&change.path),
                spelled(target)
            ),
        ));
    }
    flags
}

/// `text` as [`shown`] gives it, with the look-alikes spelled out too: a detail must not read
/// as the path the name pretends to be.
fn spelled(text: &str) -> String {
    shown(text)
        .chars()
        .map(|c| match looks_like_path_syntax(c) {
            Some(_) => format!("<U+{:04X}>", u32::from(c)),
            None => c.to_string(),
        })
        .collect()
}

fn flag(change: &FileChange, detail: String) -> TamperFlag {
    TamperFlag {
        kind: TamperKind::ConfusablePath,
        path: change.path.clone(),
        line: None,
        detail,
    }
}

/// "U+2215, which looks like `/`, and U+FF0E, which looks like `.`" for the distinct
/// look-alike characters of `text`, in order; `None` when it has none.
fn lookalikes(text: &str) -> Option<String> {
    let mut seen: Vec<char> = Vec::new();
    for c in text.chars() {
        if looks_like_path_syntax(c).is_some() && !seen.contains(&c) {
            seen.push(c);
        }
    }
    let named: Vec<String> = seen
        .iter()
        .filter_map(|c| {
            looks_like_path_syntax(*c)
                .map(|like| format!("U+{:04X}, which looks like `{like}`", u32::from(*c)))
        })
        .collect();
    match named.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        [init @ .., last] => Some(format!("{} and {last}", init.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn change(status: ChangeStatus, path: &str, after_mode: FileMode) -> FileChange {
        FileChange {
            status,
            path: path.into(),
            before: None,
            after: None,
            before_mode: None,
            after_mode: Some(after_mode),
        }
    }

    #[test]
    fn a_name_that_reads_as_a_climb_out_is_flagged_with_each_character() {
        let fixture = change(
            ChangeStatus::Added,
            "docs/a\u{2215}\u{2025}\u{2215}etc\u{ff0e}conf",
            FileMode::Regular,
        );
        let actual = check(&fixture);
        let expected = vec![TamperFlag {
            kind: TamperKind::ConfusablePath,
            path: "docs/a\u{2215}\u{2025}\u{2215}etc\u{ff0e}conf".into(),
            line: None,
            detail: "docs/a<U+2215><U+2025><U+2215>etc<U+FF0E>conf: the file name holds U+2215, which looks like `/`, U+2025, which looks like `..` and U+FF0E, which looks like `.`".into(),
        }];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_link_target_is_looked_at_a_deleted_name_and_plain_names_are_not() {
        let link = change(
            ChangeStatus::Added,
            "latest",
            FileMode::Symlink {
                target: "\u{2024}\u{2024}/secrets".into(),
            },
        );
        let deleted = FileChange {
            status: ChangeStatus::Deleted,
            ..change(ChangeStatus::Deleted, "old\u{2215}name", FileMode::Regular)
        };
        let plain = change(ChangeStatus::Added, "src/café/ノート.py", FileMode::Regular);
        let actual: Vec<Vec<String>> = [link, deleted, plain]
            .iter()
            .map(|c| check(c).into_iter().map(|f| f.detail).collect())
            .collect();
        let expected = vec![
            vec!["latest: the link's target <U+2024><U+2024>/secrets holds U+2024, which looks like `.`".to_string()],
            Vec::new(),
            Vec::new(),
        ];
        assert_eq!(actual, expected);
    }
}
