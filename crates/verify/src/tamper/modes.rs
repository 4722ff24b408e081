//! Modes in the patch: a new executable (something to run, by a person, a hook or a build), an
//! existing file made executable or not, a link turned back into a file, and gitlinks (a commit
//! of another repository, which is what a nested repository or a submodule is staged as). A file
//! turned into a link is the `links` rule's.

use super::hidden::shown;
use super::{ChangeStatus, FileChange, FileMode, TamperFlag, TamperKind};

/// The flag for the change's mode, if it says something a person must see.
pub(super) fn check(change: &FileChange) -> Option<TamperFlag> {
    let before = change.before_mode.as_ref();
    let after = change.after_mode.as_ref()?;
    let (kind, what) = match (before, after) {
        (_, FileMode::Symlink { .. }) => return None,
        (Some(FileMode::Gitlink), FileMode::Gitlink)
            if change.status == ChangeStatus::Modified =>
        {
            (
                TamperKind::GitlinkChanged,
                "the gitlink (mode 160000) now names another commit of the other repository"
                    .to_string(),
            )
        }
        (Some(FileMode::Gitlink), FileMode::Gitlink) => return None,
        (_, FileMode::Gitlink) => (
            TamperKind::GitlinkChanged,
            "a gitlink (mode 160000: a commit of another repository, as a submodule or a nested repository is staged) was added".to_string(),
        ),
        (None, FileMode::Executable) => (
            TamperKind::ExecutableAdded,
            "a new executable file (mode 100755)".to_string(),
        ),
        (None, FileMode::Regular) => return None,
        (Some(old), new) if old == new => return None,
        (Some(FileMode::Regular), FileMode::Executable) => (
            TamperKind::ModeChanged,
            "made executable (mode 100644 to 100755)".to_string(),
        ),
        (Some(FileMode::Executable), FileMode::Regular) => (
            TamperKind::ModeChanged,
            "no longer executable (mode 100755 to 100644)".to_string(),
        ),
        (Some(old), new) => (
            TamperKind::ModeChanged,
            format!(
                "{} became {} (mode {} to {})",
                described(old),
                described(new),
                old.octal(),
                new.octal()
            ),
        ),
    };
    Some(TamperFlag {
        kind,
        path: change.path.clone(),
        line: None,
        detail: format!("{}: {what}", shown(&change.path)),
    })
}

fn described(mode: &FileMode) -> &'static str {
    match mode {
        FileMode::Regular => "a regular file",
        FileMode::Executable => "an executable file",
        FileMode::Symlink { .. } => "a symbolic link",
        FileMode::Gitlink => "a gitlink",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn change(status: ChangeStatus, before: Option<FileMode>, after: FileMode) -> FileChange {
        FileChange {
            status,
            path: "scripts/release.sh".into(),
            before: None,
            after: None,
            before_mode: before,
            after_mode: Some(after),
        }
    }

    #[test]
    fn each_mode_change_says_what_it_was() {
        let link = FileMode::Symlink { target: "x".into() };
        let changes = [
            change(ChangeStatus::Added, None, FileMode::Executable),
            change(ChangeStatus::Added, None, FileMode::Regular),
            change(
                ChangeStatus::Modified,
                Some(FileMode::Regular),
                FileMode::Executable,
            ),
            change(
                ChangeStatus::Renamed {
                    from: "old.sh".into(),
                },
                Some(FileMode::Executable),
                FileMode::Regular,
            ),
            change(
                ChangeStatus::Modified,
                Some(link.clone()),
                FileMode::Executable,
            ),
            change(ChangeStatus::Added, None, FileMode::Gitlink),
            change(
                ChangeStatus::Modified,
                Some(FileMode::Gitlink),
                FileMode::Gitlink,
            ),
            // The links rule's, and an unchanged executable.
            change(ChangeStatus::Modified, Some(FileMode::Regular), link),
            change(
                ChangeStatus::Modified,
                Some(FileMode::Executable),
                FileMode::Executable,
            ),
        ];
        let actual: Vec<(TamperKind, String)> = changes
            .iter()
            .filter_map(check)
            .map(|flag| (flag.kind, flag.detail))
            .collect();
        let expected: Vec<(TamperKind, String)> = [
            (TamperKind::ExecutableAdded, "a new executable file (mode 100755)"),
            (TamperKind::ModeChanged, "made executable (mode 100644 to 100755)"),
            (TamperKind::ModeChanged, "no longer executable (mode 100755 to 100644)"),
            (
                TamperKind::ModeChanged,
                "a symbolic link became an executable file (mode 120000 to 100755)",
            ),
            (
                TamperKind::GitlinkChanged,
                "a gitlink (mode 160000: a commit of another repository, as a submodule or a nested repository is staged) was added",
            ),
            (
                TamperKind::GitlinkChanged,
                "the gitlink (mode 160000) now names another commit of the other repository",
            ),
        ]
        .into_iter()
        .map(|(kind, what)| (kind, format!("scripts/release.sh: {what}")))
        .collect();
        assert_eq!(actual, expected);
    }
}
