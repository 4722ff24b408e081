//! Validated values that reach git: commit ids, checkpoint labels and ref names.
//!
//! Nothing the model or a user wrote is passed to git unchecked: commit ids must be full lowercase hex,
//! labels are reduced to a safe printable charset (and travel on stdin, never as an argument), and ref names
//! to `[A-Za-z0-9_-]`, so no value can start with `-`, contain `..`, a newline, or a ref-name metacharacter.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::WorkspaceError;

/// A full git object id of a commit: 40 (SHA-1) or 64 (SHA-256) lowercase hexadecimal digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CommitId(String);

impl CommitId {
    /// Accepts exactly 40 or 64 lowercase hex digits, nothing else (no abbreviations, no revision syntax).
    pub fn parse(value: &str) -> Result<CommitId, WorkspaceError> {
        if is_full_hex(value) {
            Ok(CommitId(value.to_owned()))
        } else {
            Err(WorkspaceError::InvalidCommitId {
                value: value.chars().take(80).collect(),
            })
        }
    }

    /// The hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// True for 40 or 64 lowercase hex digits: the shape of every full object id (commits and trees alike).
pub(crate) fn is_full_hex(value: &str) -> bool {
    (value.len() == 40 || value.len() == 64)
        && value
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for CommitId {
    type Error = WorkspaceError;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        CommitId::parse(&value)
    }
}

impl From<CommitId> for String {
    fn from(id: CommitId) -> String {
        id.0
    }
}

/// Longest checkpoint label kept, in characters.
pub const MAX_LABEL_CHARS: usize = 120;
/// Longest ref name kept (the part after `refs/plumb/`), in characters.
pub const MAX_REF_NAME_CHARS: usize = 64;

/// Reduces a checkpoint label to one line of safe printable ASCII: letters, digits, space and
/// `_ . , : ; = + / # @ ( ) [ ] -`; anything else (newlines, control and non-ASCII characters) becomes `_`.
/// Runs of whitespace collapse, leading `-` and spaces are dropped, the result is cut to
/// [`MAX_LABEL_CHARS`], and an empty result becomes `checkpoint`.
pub fn sanitize_label(label: &str) -> String {
    let mut out = String::new();
    let mut last_space = true;
    for ch in label.chars() {
        let mapped = match ch {
            c if c.is_ascii_alphanumeric() => c,
            ' ' | '\t' | '\n' | '\r' => ' ',
            '_' | '.' | ',' | ':' | ';' | '=' | '+' | '/' | '#' | '@' | '(' | ')' | '[' | ']'
            | '-' => ch,
            _ => '_',
        };
        if mapped == ' ' {
            if !last_space {
                out.push(' ');
            }
            last_space = true;
        } else {
            out.push(mapped);
            last_space = false;
        }
    }
    let trimmed: String = out
        .trim_start_matches(['-', ' '])
        .chars()
        .take(MAX_LABEL_CHARS)
        .collect();
    let trimmed = trimmed.trim_end();
    if trimmed.is_empty() {
        "checkpoint".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// Reduces a ref name to `[A-Za-z0-9_-]`: every other character becomes `-`, runs of `-` collapse, leading
/// and trailing `-` are dropped, the result is cut to [`MAX_REF_NAME_CHARS`], and an empty result becomes
/// `unnamed`. The result is always a valid single ref-name component that cannot be read as an option.
pub fn sanitize_ref_name(name: &str) -> String {
    let mut out = String::new();
    for ch in name.chars() {
        let mapped = if ch.is_ascii_alphanumeric() || ch == '_' {
            ch
        } else {
            '-'
        };
        if mapped == '-' && (out.is_empty() || out.ends_with('-')) {
            continue;
        }
        out.push(mapped);
    }
    let cut: String = out.chars().take(MAX_REF_NAME_CHARS).collect();
    let cut = cut.trim_end_matches('-');
    if cut.is_empty() {
        "unnamed".to_owned()
    } else {
        cut.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn commit_id_accepts_only_full_lowercase_hex() {
        let inputs = [
            "0123456789abcdef0123456789abcdef01234567",
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "0123456789ABCDEF0123456789abcdef01234567",
            "0123456",
            "HEAD",
            "--upload-pack=x",
            "0123456789abcdef0123456789abcdef01234567 ",
            "",
        ];
        let actual: Vec<bool> = inputs.iter().map(|s| CommitId::parse(s).is_ok()).collect();
        assert_eq!(
            actual,
            vec![true, true, false, false, false, false, false, false]
        );
    }

    #[test]
    fn labels_are_one_safe_line() {
        let inputs = [
            "edit src/a.py",
            "--upload-pack=x",
            "../../x",
            "line one\nline two\r\n",
            "  - - ",
            "naïve $(rm -rf /) `x` 'q' \"d\"",
        ];
        let actual: Vec<String> = inputs.iter().map(|s| sanitize_label(s)).collect();
        let expected = vec![
            "edit src/a.py",
            "upload-pack=x",
            "../../x",
            "line one line two",
            "checkpoint",
            "na_ve _(rm -rf /) _x_ _q_ _d_",
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn long_labels_are_cut() {
        let actual = sanitize_label(&"x".repeat(500)).len();
        assert_eq!(actual, MAX_LABEL_CHARS);
    }

    #[test]
    fn ref_names_are_one_safe_component() {
        let inputs = [
            "attempt-1",
            "--upload-pack=x",
            "../../x",
            "a..b.lock",
            "x@{1}",
            "new\nline",
            "",
            "---",
        ];
        let actual: Vec<String> = inputs.iter().map(|s| sanitize_ref_name(s)).collect();
        let expected = vec![
            "attempt-1",
            "upload-pack-x",
            "x",
            "a-b-lock",
            "x-1",
            "new-line",
            "unnamed",
            "unnamed",
        ];
        assert_eq!(actual, expected);
    }
}
