//! Branch names as git takes them, checked before anything runs: the rules of `git
//! check-ref-format` for a ref (no `..`, no control characters, none of space `~ ^ : ? * [ \`, no
//! `@{`, no part starting with `.` or ending with `.lock`, no empty part, no `.` at the end) and
//! those git adds for a branch (not `HEAD`, not a lone `@`, no leading `-`). plumb adds two of its
//! own: no character that does not show as itself (a name on the approval screen must read as what
//! it is), and no part longer than a file name can be. Each refusal names the rule broken.

use plumb_protocol::chars::{is_bidi_control, is_invisible};

/// The longest part between slashes: git stores a branch as a file (`<part>.lock` while it writes).
const MAX_PART_BYTES: usize = 200;

/// The rule a branch name breaks, as a clause that follows "the branch name … is refused: ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BranchNameError {
    #[error("it is empty")]
    Empty,
    #[error("HEAD is git's name for the checked-out commit, never a branch's")]
    Head,
    #[error("a lone @ is git's short name for HEAD")]
    At,
    #[error("it starts with -, so git would read it as an option")]
    LeadingDash,
    #[error("it holds the control character {0}, which git never allows in a name")]
    Control(String),
    #[error(
        "it holds {0}, a character that does not show as itself (invisible or direction-changing), so the name would read as another"
    )]
    Hidden(String),
    #[error("it holds {0}; git allows no space, ~, ^, :, ?, *, [ or \\ in a name")]
    Forbidden(String),
    #[error("it holds .., which git reads as a range of commits (a..b)")]
    DoubleDot,
    #[error("it holds @{{, which git reads as a reflog entry (name@{{1}})")]
    AtBrace,
    #[error("it starts or ends with / or holds //, and every part between slashes needs a name")]
    EmptyPart,
    #[error("its part {0:?} starts with ., which git refuses")]
    DotPart(String),
    #[error("its part {0:?} ends with .lock, the ending of git's lock files")]
    LockPart(String),
    #[error("it ends with ., which git refuses")]
    TrailingDot,
    #[error(
        "its part {0:?}… is longer than {MAX_PART_BYTES} bytes, more than a file name can hold"
    )]
    TooLong(String),
}

/// Checks `name` as a new branch's name (without `refs/heads/`).
pub fn check_branch_name(name: &str) -> Result<(), BranchNameError> {
    match name {
        "" => return Err(BranchNameError::Empty),
        "HEAD" => return Err(BranchNameError::Head),
        "@" => return Err(BranchNameError::At),
        _ => {}
    }
    if name.starts_with('-') {
        return Err(BranchNameError::LeadingDash);
    }
    for c in name.chars() {
        if c.is_ascii_control() {
            return Err(BranchNameError::Control(code_point(c)));
        }
        if is_invisible(c) || is_bidi_control(c) {
            return Err(BranchNameError::Hidden(code_point(c)));
        }
        match c {
            ' ' => return Err(BranchNameError::Forbidden("a space".to_string())),
            '~' | '^' | ':' | '?' | '*' | '[' | '\\' => {
                return Err(BranchNameError::Forbidden(c.to_string()));
            }
            _ => {}
        }
    }
    if name.contains("..") {
        return Err(BranchNameError::DoubleDot);
    }
    if name.contains("@{") {
        return Err(BranchNameError::AtBrace);
    }
    for part in name.split('/') {
        if part.is_empty() {
            return Err(BranchNameError::EmptyPart);
        }
        if part.starts_with('.') {
            return Err(BranchNameError::DotPart(part.to_string()));
        }
        if part.ends_with(".lock") {
            return Err(BranchNameError::LockPart(part.to_string()));
        }
        if part.len() > MAX_PART_BYTES {
            return Err(BranchNameError::TooLong(part.chars().take(20).collect()));
        }
    }
    if name.ends_with('.') {
        return Err(BranchNameError::TrailingDot);
    }
    Ok(())
}

fn code_point(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn each_refusal_names_its_rule() {
        let names = [
            "fix/bill-412",
            "",
            "HEAD",
            "@",
            "-f",
            "a\tb",
            "a\u{202e}b",
            "a b",
            "a~1",
            "a..b",
            "a@{1}",
            "a//b",
            "a/",
            "a/.hidden",
            "a/b.lock",
            "a.",
        ];

        let refused: Vec<String> = names
            .iter()
            .map(|name| match check_branch_name(name) {
                Ok(()) => "ok".to_string(),
                Err(rule) => rule.to_string(),
            })
            .collect();

        assert_eq!(
            refused,
            vec![
                "ok",
                "it is empty",
                "HEAD is git's name for the checked-out commit, never a branch's",
                "a lone @ is git's short name for HEAD",
                "it starts with -, so git would read it as an option",
                "it holds the control character U+0009, which git never allows in a name",
                "it holds U+202E, a character that does not show as itself (invisible or direction-changing), so the name would read as another",
                "it holds a space; git allows no space, ~, ^, :, ?, *, [ or \\ in a name",
                "it holds ~; git allows no space, ~, ^, :, ?, *, [ or \\ in a name",
                "it holds .., which git reads as a range of commits (a..b)",
                "it holds @{, which git reads as a reflog entry (name@{1})",
                "it starts or ends with / or holds //, and every part between slashes needs a name",
                "it starts or ends with / or holds //, and every part between slashes needs a name",
                "its part \".hidden\" starts with ., which git refuses",
                "its part \"b.lock\" ends with .lock, the ending of git's lock files",
                "it ends with ., which git refuses",
            ]
        );
    }
}
