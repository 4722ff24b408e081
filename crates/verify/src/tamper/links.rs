//! Symbolic links in the patch. Once the patch is applied, a link is part of the user's
//! repository, and the next run (or any tool, editor or build that reads the file) follows it: a
//! link out of the tree hands a host file to whoever reads it.
//!
//! The target is resolved lexically from the link's folder, as the kernel would from the tree's
//! root wherever it is checked out: an absolute target is out; `..` past the root is out (even
//! when it would come back in under the same folder name here, the user's folder is named
//! otherwise). A link into the tree is flagged, since it can still point at a file that is
//! itself a link, or make one path two.

use super::hidden::shown;
use super::{ChangeStatus, FileChange, FileMode, TamperFlag, TamperKind};

/// Most characters of a target a detail shows.
const TARGET_CHARS: usize = 160;

/// The flag for a link the change adds, moves, or points elsewhere.
pub(super) fn check(change: &FileChange) -> Option<TamperFlag> {
    let Some(FileMode::Symlink { target }) = &change.after_mode else {
        return None;
    };
    let unchanged =
        matches!(&change.before_mode, Some(FileMode::Symlink { target: old }) if old == target);
    if unchanged && change.status == ChangeStatus::Modified {
        return None;
    }
    let what = match (&change.status, &change.before_mode) {
        (ChangeStatus::Added, _) => "a new symbolic link to",
        (ChangeStatus::Renamed { .. }, _) => "a symbolic link moved here, to",
        (_, Some(FileMode::Symlink { .. })) => "a symbolic link now pointing to",
        _ => "a file replaced by a symbolic link to",
    };
    let path = shown(&change.path);
    let shown_target = short(target);
    let (kind, detail) = match resolve(&change.path, target) {
        None => (
            TamperKind::SymlinkOutOfTree,
            format!("{path}: {what} {shown_target}, which leads out of the project"),
        ),
        Some(inside) => (
            TamperKind::SymlinkInTree,
            format!(
                "{path}: {what} {shown_target} (inside the project: {})",
                shown(&inside)
            ),
        ),
    };
    Some(TamperFlag {
        kind,
        path: change.path.clone(),
        line: None,
        detail,
    })
}

/// The target as a detail shows it: control characters spelled out, cut to [`TARGET_CHARS`].
fn short(target: &str) -> String {
    let shown_target = shown(target);
    if shown_target.chars().count() <= TARGET_CHARS {
        return shown_target;
    }
    let head: String = shown_target.chars().take(TARGET_CHARS).collect();
    format!("{head}…")
}

/// Where a link at `link` (a tree path) to `target` leads, as a tree path (`""` for the root), or
/// `None` when it leads out.
fn resolve(link: &str, target: &str) -> Option<String> {
    if target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = link.split('/').filter(|part| !part.is_empty()).collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn link(
        status: ChangeStatus,
        path: &str,
        before: Option<FileMode>,
        target: &str,
    ) -> FileChange {
        FileChange {
            status,
            path: path.into(),
            before: None,
            after: None,
            before_mode: before,
            after_mode: Some(FileMode::Symlink {
                target: target.into(),
            }),
        }
    }

    #[test]
    fn targets_resolve_from_the_links_folder() {
        let cases = [
            ("AGENTS.md", "/etc/passwd"),
            ("docs/guide.md", "../README.md"),
            ("docs/guide.md", "../../README.md"),
            ("a/b/c", "../../x/./y"),
            ("a/b/c", "../../../work/a"),
            ("a/b/c", "..//b//"),
            ("top", "."),
            ("top", ""),
        ];
        let actual: Vec<Option<String>> = cases
            .iter()
            .map(|(path, target)| resolve(path, target))
            .collect();
        let expected = vec![
            None,
            Some("README.md".into()),
            None,
            Some("x/y".into()),
            None,
            Some("a/b".into()),
            Some(String::new()),
            Some(String::new()),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn links_out_block_links_in_flag_unchanged_links_pass() {
        let changes = [
            link(
                ChangeStatus::Added,
                "AGENTS.md",
                None,
                "/home/me/.ssh/id_rsa",
            ),
            link(
                ChangeStatus::Modified,
                "billing/README",
                Some(FileMode::Regular),
                "../../../../etc/hosts",
            ),
            link(ChangeStatus::Added, "docs/latest", None, "v2\u{202e}"),
            link(
                ChangeStatus::Modified,
                "docs/current",
                Some(FileMode::Symlink {
                    target: "v1".into(),
                }),
                "v1",
            ),
            FileChange {
                status: ChangeStatus::Added,
                path: "plain.txt".into(),
                before: None,
                after: Some("text".into()),
                before_mode: None,
                after_mode: Some(FileMode::Regular),
            },
        ];
        let actual: Vec<TamperFlag> = changes.iter().filter_map(check).collect();
        let expected = vec![
            TamperFlag {
                kind: TamperKind::SymlinkOutOfTree,
                path: "AGENTS.md".into(),
                line: None,
                detail: "AGENTS.md: a new symbolic link to /home/me/.ssh/id_rsa, which leads out of the project".into(),
            },
            TamperFlag {
                kind: TamperKind::SymlinkOutOfTree,
                path: "billing/README".into(),
                line: None,
                detail: "billing/README: a file replaced by a symbolic link to ../../../../etc/hosts, which leads out of the project".into(),
            },
            TamperFlag {
                kind: TamperKind::SymlinkInTree,
                path: "docs/latest".into(),
                line: None,
                detail: "docs/latest: a new symbolic link to v2<U+202E> (inside the project: docs/v2<U+202E>)".into(),
            },
        ];
        assert_eq!(actual, expected);
    }
}
