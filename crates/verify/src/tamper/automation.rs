//! Files that make something else run or decide: CI pipelines, git attributes (filters and diff
//! drivers), submodules and hooks, editor tasks, direnv scripts, instructions for coding agents
//! and plumb's own settings. A fix for a ticket seldom needs one, and once applied each acts far
//! from the tests the ladder ran (on the CI's secrets, in the user's git, in the next agent's
//! prompt), so any change to one (added, edited, deleted or moved away) is flagged.

use super::hidden::shown;
use super::{ChangeStatus, FileChange, TamperFlag, TamperKind, change_verb};

/// Top-level folders and what their files are.
const FOLDERS: &[(&str, &str)] = &[
    (".github", "GitHub CI workflow or repository setting"),
    (".gitlab", "GitLab CI or repository setting"),
    (".circleci", "CircleCI pipeline"),
    (".buildkite", "Buildkite CI pipeline"),
    (".azure-pipelines", "Azure Pipelines CI file"),
    (".woodpecker", "Woodpecker CI pipeline"),
    (".husky", "git hook (husky)"),
    (".githooks", "git hook"),
    (".git-hooks", "git hook"),
    (
        ".vscode",
        "editor task or settings file (an editor runs it)",
    ),
    (".devcontainer", "dev container setting (an editor runs it)"),
    (
        ".plumb",
        "plumb settings or notes file (the next run reads it)",
    ),
];

/// File names at the top of the tree and what they are.
const TOP_FILES: &[(&str, &str)] = &[
    (".gitlab-ci.yml", "GitLab CI pipeline"),
    ("Jenkinsfile", "Jenkins CI pipeline"),
    (".travis.yml", "Travis CI pipeline"),
    ("azure-pipelines.yml", "Azure Pipelines CI file"),
    ("azure-pipelines.yaml", "Azure Pipelines CI file"),
    ("bitbucket-pipelines.yml", "Bitbucket Pipelines CI"),
    (".drone.yml", "Drone CI pipeline"),
    (".woodpecker.yml", "Woodpecker CI pipeline"),
    ("appveyor.yml", "AppVeyor CI file"),
    (".appveyor.yml", "AppVeyor CI file"),
    ("cloudbuild.yaml", "Cloud Build pipeline"),
    ("cloudbuild.yml", "Cloud Build pipeline"),
    (".gitmodules", "git submodules file"),
    (".pre-commit-config.yaml", "git hook (pre-commit)"),
    (".pre-commit-hooks.yaml", "git hook (pre-commit)"),
    ("lefthook.yml", "git hook (lefthook)"),
    (".lefthook.yml", "git hook (lefthook)"),
    ("CODEOWNERS", "code owners file (who must approve changes)"),
    ("plumb.toml", "plumb settings file (the next run reads it)"),
    (
        ".cursorrules",
        "coding-agent instructions file (the next agent reads it)",
    ),
];

/// File names at any depth and what they are.
const ANY_DEPTH: &[(&str, &str)] = &[
    (
        ".gitattributes",
        "git attributes file (filters, diff and merge drivers)",
    ),
    (".envrc", "direnv script (runs on entering the folder)"),
    (
        "AGENTS.md",
        "coding-agent instructions file (the next agent reads it)",
    ),
    (
        "CLAUDE.md",
        "coding-agent instructions file (the next agent reads it)",
    ),
];

/// What kind of automation file `path` is, if it is one.
fn what(path: &str) -> Option<&'static str> {
    let parts: Vec<&str> = path.split('/').filter(|part| !part.is_empty()).collect();
    let (first, name) = (parts.first()?, parts.last()?);
    let found = |table: &[(&str, &'static str)], key: &str| {
        table
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, what)| *what)
    };
    if parts.len() > 1
        && let Some(what) = found(FOLDERS, first)
    {
        return Some(what);
    }
    if parts.len() == 1
        && let Some(what) = found(TOP_FILES, name)
    {
        return Some(what);
    }
    found(ANY_DEPTH, name)
}

/// The flag for a change to an automation file, at its new or (for a move) its old path.
pub(super) fn check(change: &FileChange) -> Option<TamperFlag> {
    let what = what(&change.path).or_else(|| match &change.status {
        ChangeStatus::Renamed { from } => self::what(from),
        _ => None,
    })?;
    Some(TamperFlag {
        kind: TamperKind::AutomationChanged,
        path: change.path.clone(),
        line: None,
        detail: format!(
            "{}: a {what} was {}",
            shown(&change.path),
            change_verb(change)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn change(status: ChangeStatus, path: &str) -> FileChange {
        FileChange {
            status,
            path: path.into(),
            before: None,
            after: Some(String::new()),
            before_mode: None,
            after_mode: None,
        }
    }

    #[test]
    fn ci_hooks_attributes_and_agent_files_are_flagged_lookalikes_are_not() {
        let changes = [
            change(ChangeStatus::Added, ".github/workflows/x.yml"),
            change(ChangeStatus::Modified, ".gitattributes"),
            change(ChangeStatus::Added, "vendor/lib/.gitattributes"),
            change(ChangeStatus::Deleted, ".gitlab-ci.yml"),
            change(ChangeStatus::Added, ".husky/pre-commit"),
            change(
                ChangeStatus::Renamed {
                    from: ".circleci/config.yml".into(),
                },
                "old/circleci.yml",
            ),
            change(ChangeStatus::Modified, "docs/AGENTS.md"),
            change(ChangeStatus::Added, "plumb.toml"),
            // Not automation: a folder named like one below the top, a file named like a folder.
            change(ChangeStatus::Added, "docs/.github/notes.md"),
            change(ChangeStatus::Added, ".github"),
            change(ChangeStatus::Added, "src/plumb.toml"),
            change(ChangeStatus::Modified, "billing/tax.py"),
        ];
        let actual: Vec<String> = changes
            .iter()
            .filter_map(check)
            .map(|flag| flag.detail)
            .collect();
        let expected = vec![
            ".github/workflows/x.yml: a GitHub CI workflow or repository setting was added",
            ".gitattributes: a git attributes file (filters, diff and merge drivers) was changed",
            "vendor/lib/.gitattributes: a git attributes file (filters, diff and merge drivers) was added",
            ".gitlab-ci.yml: a GitLab CI pipeline was deleted",
            ".husky/pre-commit: a git hook (husky) was added",
            "old/circleci.yml: a CircleCI pipeline was renamed from .circleci/config.yml",
            "docs/AGENTS.md: a coding-agent instructions file (the next agent reads it) was changed",
            "plumb.toml: a plumb settings file (the next run reads it) was added",
        ];
        assert_eq!(actual, expected);
    }
}
