//! Nested repositories left in the tree: a `.git` below the root (a folder: a repository a test
//! made; a file: a gitfile, which points git at any repository on the machine; a link or
//! anything else of that name) and a top `.gitmodules` that is not the baseline's. The workspace
//! never stages any of them (they are never in the patch, and git never reads them), so these
//! flags are not findings in the patch's text: they come from what staging left out, and tell a
//! person the tree held one.

use super::TamperFlag;
use super::hidden::shown;
use super::kinds::TamperKind;

/// What was left out at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NestedKind {
    GitFolder,
    GitFile,
    GitLink,
    /// A FIFO, socket or device named `.git`.
    GitSpecial,
    GitmodulesAdded,
    GitmodulesChanged,
    GitmodulesDeleted,
}

/// One `.git` or `.gitmodules` left out of the patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nested {
    pub path: String,
    pub kind: NestedKind,
}

/// One flag per left-out path, in the order given.
pub fn nested_flags(found: &[Nested]) -> Vec<TamperFlag> {
    found
        .iter()
        .map(|nested| {
            let what = match nested.kind {
                NestedKind::GitFolder => {
                    "a git folder (a nested repository) was left in the tree; it is kept out of the patch"
                }
                NestedKind::GitFile => {
                    "a git file (it points git at another repository) was left in the tree; it is kept out of the patch"
                }
                NestedKind::GitLink => {
                    "a symbolic link named .git was left in the tree; it is kept out of the patch"
                }
                NestedKind::GitSpecial => {
                    "a FIFO, socket or device named .git was left in the tree; it is kept out of the patch"
                }
                NestedKind::GitmodulesAdded => {
                    "a .gitmodules file was added; it is kept out of the patch"
                }
                NestedKind::GitmodulesChanged => {
                    "the .gitmodules file was changed; the change is kept out of the patch"
                }
                NestedKind::GitmodulesDeleted => {
                    "the .gitmodules file was deleted; the deletion is kept out of the patch"
                }
            };
            TamperFlag {
                kind: TamperKind::NestedRepository,
                path: nested.path.clone(),
                line: None,
                detail: format!("{}: {what}", shown(&nested.path)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn each_left_out_path_is_one_flag_naming_it_with_hidden_characters_spelled_out() {
        let found = [
            Nested {
                path: "vendor/lib/.git".into(),
                kind: NestedKind::GitFile,
            },
            Nested {
                path: "x\u{202e}/.git".into(),
                kind: NestedKind::GitFolder,
            },
            Nested {
                path: ".gitmodules".into(),
                kind: NestedKind::GitmodulesDeleted,
            },
        ];

        let actual: Vec<(TamperKind, String)> = nested_flags(&found)
            .into_iter()
            .map(|flag| (flag.kind, flag.detail))
            .collect();

        let expected = vec![
            (
                TamperKind::NestedRepository,
                "vendor/lib/.git: a git file (it points git at another repository) was left in the tree; it is kept out of the patch".to_string(),
            ),
            (
                TamperKind::NestedRepository,
                "x<U+202E>/.git: a git folder (a nested repository) was left in the tree; it is kept out of the patch".to_string(),
            ),
            (
                TamperKind::NestedRepository,
                ".gitmodules: the .gitmodules file was deleted; the deletion is kept out of the patch".to_string(),
            ),
        ];
        assert_eq!(actual, expected);
    }
}
