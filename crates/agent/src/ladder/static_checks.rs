//! The ladder's steps that read the change without running anything: syntax and the tamper scan.
//!
//! Both read the change as the shadow git staged it (the blobs the patch carries, with their
//! modes), never the files in the copy: a file there may be a link a test run made, and following
//! it would put a host file's text into the checks, the report and the model's next prompt.

use plumb_config::Config;
use plumb_context::syntax::{Language, syntax_problems};
use plumb_protocol::{CheckReport, CheckStatus, CheckStep};
use plumb_verify::tamper::{
    self, ChangeStatus, FileChange, FileMode, Nested, NestedKind, TamperFlag, TamperKind,
    TamperPolicy, TestSetupFiles, TestsAdded, is_runner_config,
};
use plumb_workspace::{ChangeKind, ChangedFile, Entry, EntryMode, KeptOutKind, Workspace};

use super::cx::{Cx, Ladder, report};
use crate::RunError;
use crate::ending::Ending;

/// The tamper policy of the settings: `tamper_block` adds kinds to the defaults, `tamper_unblock`
/// turns default-blocked kinds back into flags.
pub(crate) fn tamper_policy(config: &Config) -> Result<TamperPolicy, RunError> {
    let kinds = |key: &str, names: &[String]| -> Result<Vec<TamperKind>, RunError> {
        names
            .iter()
            .map(|name| {
                TamperKind::parse(name).ok_or_else(|| {
                    RunError::BadInput(format!(
                        "{key} in plumb.toml names `{name}`; use {}",
                        TamperKind::names()
                    ))
                })
            })
            .collect()
    };
    let unblock = kinds("tamper_unblock", &config.tamper_unblock)?;
    if let Some(kind) = unblock
        .iter()
        .find(|kind| !TamperKind::BLOCKED_BY_DEFAULT.contains(kind))
    {
        return Err(RunError::BadInput(format!(
            "tamper_unblock names `{}`, which does not block by default; only {} do (leave it out of tamper_block instead)",
            kind.as_str(),
            TamperKind::BLOCKED_BY_DEFAULT
                .map(TamperKind::as_str)
                .join(" and ")
        )));
    }
    Ok(TamperPolicy {
        block: kinds("tamper_block", &config.tamper_block)?,
        unblock,
    })
}

/// Every changed file with its baseline and staged text and modes, for the scans.
pub(crate) fn file_changes(
    workspace: &Workspace,
    changed: &[ChangedFile],
) -> Result<Vec<FileChange>, Ending> {
    changed
        .iter()
        .map(|file| {
            let status = match &file.status {
                ChangeKind::Added => ChangeStatus::Added,
                ChangeKind::Modified => ChangeStatus::Modified,
                ChangeKind::Deleted => ChangeStatus::Deleted,
                ChangeKind::Renamed { from } => ChangeStatus::Renamed { from: from.clone() },
            };
            let (before, before_mode) = stored(workspace, file.before.as_ref())?;
            let (after, after_mode) = stored(workspace, file.after.as_ref())?;
            Ok(FileChange {
                status,
                path: file.path.clone(),
                before,
                after,
                before_mode,
                after_mode,
            })
        })
        .collect()
}

/// The files the jest and vitest configurations name to run around the tests: those of the
/// baseline's configurations in the folders of the change (a configuration names files below
/// its own folder; one naming a file elsewhere through `..` is not followed), and those of the
/// configurations the change brings.
pub(crate) fn setup_files(
    workspace: &Workspace,
    changes: &[FileChange],
) -> Result<TestSetupFiles, Ending> {
    let in_play = |config: &str| {
        let folder = config.rsplit_once('/').map(|(dir, _)| dir).unwrap_or("");
        changes.iter().any(|change| {
            folder.is_empty()
                || change
                    .path
                    .strip_prefix(folder)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    };
    let mut configs: Vec<(String, String)> = Vec::new();
    let listed = workspace.baseline_paths().map_err(Ending::infra)?;
    for path in listed
        .iter()
        .filter(|path| is_runner_config(path) && in_play(path))
    {
        if let Some(text) = workspace.baseline_text(path).map_err(Ending::infra)? {
            configs.push((path.clone(), text));
        }
    }
    for change in changes.iter().filter(|c| is_runner_config(&c.path)) {
        if let Some(after) = &change.after {
            configs.push((change.path.clone(), after.clone()));
        }
    }
    Ok(TestSetupFiles::from_configs(
        configs
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str())),
    ))
}

/// One side of a changed file: its text when it is a regular file, and its mode (a link's
/// target inside it).
fn stored(
    workspace: &Workspace,
    entry: Option<&Entry>,
) -> Result<(Option<String>, Option<FileMode>), Ending> {
    let Some(entry) = entry else {
        return Ok((None, None));
    };
    let text = workspace.blob_text(entry).map_err(Ending::workspace)?;
    Ok(match entry.mode {
        EntryMode::Regular => (text, Some(FileMode::Regular)),
        EntryMode::Executable => (text, Some(FileMode::Executable)),
        EntryMode::Symlink => (
            None,
            Some(FileMode::Symlink {
                target: text.unwrap_or_default(),
            }),
        ),
        EntryMode::Gitlink => (None, Some(FileMode::Gitlink)),
    })
}

/// The text of one side when it is a regular file (a link or a gitlink has none to parse).
fn stored_text(workspace: &Workspace, entry: Option<&Entry>) -> Option<String> {
    let entry = entry.filter(|e| matches!(e.mode, EntryMode::Regular | EntryMode::Executable))?;
    workspace.blob_text(entry).ok().flatten()
}

impl Ladder {
    pub(crate) fn check_syntax(&self, cx: &Cx<'_>, changed: &[ChangedFile]) -> CheckReport {
        let mut problems = Vec::new();
        let mut parsed = 0usize;
        for file in changed {
            let Some(language) = Language::from_path(std::path::Path::new(&file.path)) else {
                continue;
            };
            let Some(now) = stored_text(cx.workspace, file.after.as_ref()) else {
                continue;
            };
            parsed += 1;
            let found = syntax_problems(language, &now);
            let Some(first) = found.first() else {
                continue;
            };
            let before = stored_text(cx.workspace, file.before.as_ref())
                .map(|text| syntax_problems(language, &text).len())
                .unwrap_or(0);
            if found.len() > before {
                problems.push(format!(
                    "{} line {}: {}",
                    file.path, first.line, first.message
                ));
            }
        }
        if problems.is_empty() {
            report(
                CheckStep::Syntax,
                CheckStatus::Passed,
                format!("{parsed} changed source files parse"),
            )
        } else {
            report(
                CheckStep::Syntax,
                CheckStatus::Failed,
                format!("new syntax errors: {}", problems.join("; ")),
            )
        }
    }

    /// What staging kept out of the patch that the baseline did not have: the `.git`s and the
    /// `.gitmodules` the agent left (a setup's are not its doing).
    pub(crate) fn nested(&self, cx: &Cx<'_>) -> Result<Vec<Nested>, Ending> {
        let kept = cx.workspace.kept_out().map_err(Ending::workspace)?;
        Ok(kept
            .into_iter()
            .filter(|k| !self.known_nested.contains(k))
            .map(|k| Nested {
                path: k.path,
                kind: match k.kind {
                    KeptOutKind::GitFolder => NestedKind::GitFolder,
                    KeptOutKind::GitFile => NestedKind::GitFile,
                    KeptOutKind::GitLink => NestedKind::GitLink,
                    KeptOutKind::GitSpecial => NestedKind::GitSpecial,
                    KeptOutKind::GitmodulesAdded => NestedKind::GitmodulesAdded,
                    KeptOutKind::GitmodulesChanged => NestedKind::GitmodulesChanged,
                    KeptOutKind::GitmodulesDeleted => NestedKind::GitmodulesDeleted,
                },
            })
            .collect())
    }

    /// Flags for a person; a flag of a kind the tamper policy blocks fails the step, naming what
    /// to remove. Tests only added to an existing test file are evidence, not a flag. What staging
    /// kept out (`nested`) is flagged after the patch's own findings; `setup` names the files the
    /// jest and vitest configurations run around the tests.
    pub(crate) fn check_tamper(
        &mut self,
        changes: &[FileChange],
        nested: &[Nested],
        setup: &TestSetupFiles,
    ) -> CheckReport {
        let mut flags = tamper::scan(changes, setup);
        flags.extend(tamper::nested_flags(nested));
        let added = added_note(&tamper::tests_added(changes));
        self.flags = flags
            .iter()
            .map(|flag| (flag.kind.as_str().to_owned(), flag.detail.clone()))
            .collect();
        let blocking = self.tamper_policy.blocking(&flags);
        if !blocking.is_empty() {
            return report(
                CheckStep::Tamper,
                CheckStatus::Failed,
                blocked_evidence(&self.tamper_policy, &blocking),
            );
        }
        if flags.is_empty() {
            report(
                CheckStep::Tamper,
                CheckStatus::Passed,
                format!(
                    "no existing test, test setting, skip marker or patch hazard changed{added}"
                ),
            )
        } else {
            report(
                CheckStep::Tamper,
                CheckStatus::Flagged,
                format!(
                    "a person must look: {}{added}",
                    self.flags
                        .iter()
                        .map(|(_, detail)| detail.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            )
        }
    }
}

/// "; tests added to A (N lines), B (M lines)", or nothing.
fn added_note(added: &[TestsAdded]) -> String {
    if added.is_empty() {
        return String::new();
    }
    let files: Vec<String> = added
        .iter()
        .map(|file| {
            let lines = if file.lines == 1 { "line" } else { "lines" };
            format!("{} ({} {lines})", file.path, file.lines)
        })
        .collect();
    format!("; tests added to {}", files.join(", "))
}

/// Each blocked hazard with what to do about it, and where each block comes from.
fn blocked_evidence(policy: &TamperPolicy, blocking: &[&TamperFlag]) -> String {
    let items: Vec<String> = blocking
        .iter()
        .map(|flag| format!("{} ({})", flag.detail, flag.kind.remedy()))
        .collect();
    let mut kinds: Vec<TamperKind> = blocking.iter().map(|flag| flag.kind).collect();
    kinds.sort();
    kinds.dedup();
    let (by_default, by_settings): (Vec<TamperKind>, Vec<TamperKind>) = kinds
        .into_iter()
        .partition(|kind| policy.blocks_by_default(*kind));
    let names = |kinds: &[TamperKind]| {
        kinds
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = format!("the patch may not carry: {}.", items.join("; "));
    if !by_default.is_empty() {
        text.push_str(&format!(
            " Blocked by default: {} (tamper_unblock in your own settings makes a person review it instead).",
            names(&by_default)
        ));
    }
    if !by_settings.is_empty() {
        text.push_str(&format!(
            " Blocked by tamper_block in plumb.toml: {}.",
            names(&by_settings)
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn policy(block: &[&str], unblock: &[&str]) -> Result<TamperPolicy, String> {
        let config = Config {
            tamper_block: block.iter().map(|s| s.to_string()).collect(),
            tamper_unblock: unblock.iter().map(|s| s.to_string()).collect(),
            ..Config::default()
        };
        tamper_policy(&config).map_err(|err| err.to_string())
    }

    #[test]
    fn the_settings_give_the_policy_and_wrong_names_say_what_to_use() {
        let actual = vec![
            policy(&["automation_changed"], &["bidi_control"]),
            policy(&["symlinks"], &[]).map_err(|err| err.chars().take(60).collect()),
            policy(&[], &["test_modified"]),
        ];
        let expected = vec![
            Ok(TamperPolicy {
                block: vec![TamperKind::AutomationChanged],
                unblock: vec![TamperKind::BidiControl],
            }),
            Err("tamper_block in plumb.toml names `symlinks`; use test_modifi".to_string()),
            Err("tamper_unblock names `test_modified`, which does not block by default; only symlink_out_of_tree and bidi_control do (leave it out of tamper_block instead)".to_string()),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn blocked_evidence_names_each_hazard_its_remedy_and_where_the_block_comes_from() {
        let flag = |kind, detail: &str| TamperFlag {
            kind,
            path: "x".into(),
            line: None,
            detail: detail.into(),
        };
        let flags = [
            flag(
                TamperKind::SymlinkOutOfTree,
                "AGENTS.md: a new symbolic link to /etc/passwd, which leads out of the project",
            ),
            flag(
                TamperKind::AutomationChanged,
                ".gitattributes: a git attributes file (filters, diff and merge drivers) was added",
            ),
        ];
        let policy = TamperPolicy {
            block: vec![TamperKind::AutomationChanged],
            unblock: Vec::new(),
        };
        let blocking = policy.blocking(&flags);
        let actual = blocked_evidence(&policy, &blocking);
        assert_eq!(
            actual,
            "the patch may not carry: AGENTS.md: a new symbolic link to /etc/passwd, which leads out of the project (remove the link); .gitattributes: a git attributes file (filters, diff and merge drivers) was added (leave the file as it was). Blocked by default: symlink_out_of_tree (tamper_unblock in your own settings makes a person review it instead). Blocked by tamper_block in plumb.toml: automation_changed."
        );
    }
}
