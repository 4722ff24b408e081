//! Resolving a record's `repo` field to a [`RepoSource`] on this machine, never by a download.
//!
//! In order:
//! 1. a git URL (`https://…`, `git@host:…`, …) is refused: the harness does not clone at run time;
//! 2. a path (relative to the task file's folder) that exists is classified: a git repository
//!    (a `.git` inside, or a bare repository) is [`RepoSource::Git`] and needs a hex
//!    `base_commit`; a `.tar`, `.tar.gz` or `.tgz` file is [`RepoSource::Archive`]; any other
//!    folder is [`RepoSource::Folder`];
//! 3. a GitHub name `owner/name` (as SWE-bench's records have) is looked up under `--repos DIR`
//!    only: `owner__name.git`, `owner__name`, `owner/name.git`, `owner/name`, `name.git`, `name`,
//!    then an archive of the tree at the base commit, `name-<prefix>.tar.gz` or
//!    `owner__name-<prefix>.tar.gz` (also `.tgz`, `.tar`), where the prefix is 7 or more hex
//!    digits of `base_commit`.
//!
//! Paths come back absolute, so the runner need not know where the task file was.

use std::path::{Path, PathBuf};

use crate::task::RepoSource;

use super::fields::FieldError;

/// Where relative paths and GitHub names are looked up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Places<'a> {
    /// The task file's folder.
    pub task_dir: &'a Path,
    /// `--repos DIR`, already checked to be a folder.
    pub repos_dir: Option<&'a Path>,
}

const ARCHIVE_SUFFIXES: [&str; 3] = [".tar.gz", ".tgz", ".tar"];

/// Resolves `repo`; the error names the field at fault (`repo` or `base_commit`).
pub(crate) fn resolve(
    repo: &str,
    base_commit: Option<&str>,
    places: Places<'_>,
) -> Result<RepoSource, FieldError> {
    if is_url(repo) {
        return Err(FieldError::new(
            "repo",
            format!(
                "`{repo}` is a URL and plumb never downloads a repository at run time; clone it \
                 first and name the clone in `repo`, or put a mirror under --repos"
            ),
        ));
    }
    let path = places.task_dir.join(repo);
    if path.exists() {
        return classify(&path, base_commit);
    }
    match (github_name(repo), places.repos_dir) {
        (Some((owner, name)), Some(dir)) => look_up(dir, owner, name, base_commit),
        (Some(_), None) => Err(FieldError::new(
            "repo",
            format!(
                "`{repo}` is a GitHub name, not a path under {}; pass --repos DIR with a git \
                 mirror of it (DIR/{}.git) or an archive of its tree at the base commit",
                shown(places.task_dir),
                repo.replace('/', "__")
            ),
        )),
        (None, _) => Err(FieldError::new(
            "repo",
            format!(
                "no file or folder `{repo}` (paths are relative to the task file's folder {}); \
                 name a git repository, a folder or a .tar/.tar.gz archive of the tree",
                shown(places.task_dir)
            ),
        )),
    }
}

fn shown(dir: &Path) -> String {
    if dir.as_os_str().is_empty() {
        ".".to_owned()
    } else {
        dir.display().to_string()
    }
}

fn is_url(repo: &str) -> bool {
    let schemes = [
        "https://",
        "http://",
        "ssh://",
        "git://",
        "file://",
        "git+ssh://",
    ];
    if schemes.iter().any(|s| repo.starts_with(s)) {
        return true;
    }
    // scp-like `user@host:path`, the form GitHub shows for SSH clones.
    match (repo.find('@'), repo.find(':')) {
        (Some(at), Some(colon)) => {
            at > 0 && at < colon && !repo.get(..at).is_some_and(|user| user.contains('/'))
        }
        _ => false,
    }
}

/// `owner/name` with GitHub's characters in each part.
fn github_name(repo: &str) -> Option<(&str, &str)> {
    let (owner, name) = repo.split_once('/')?;
    let part_ok = |part: &str| {
        !part.is_empty()
            && !part.starts_with('.')
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    (part_ok(owner) && part_ok(name)).then_some((owner, name))
}

fn is_git_repository(dir: &Path) -> bool {
    let bare =
        dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir();
    dir.join(".git").exists() || bare
}

fn classify(path: &Path, base_commit: Option<&str>) -> Result<RepoSource, FieldError> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    if path.is_dir() {
        if !is_git_repository(path) {
            return Ok(RepoSource::Folder(absolute));
        }
        check_commit(base_commit)?;
        return Ok(RepoSource::Git(absolute));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if path.is_file() && ARCHIVE_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        return Ok(RepoSource::Archive(absolute));
    }
    Err(FieldError::new(
        "repo",
        format!(
            "{} is neither a git repository, a folder nor a .tar/.tar.gz/.tgz archive; name one of those",
            path.display()
        ),
    ))
}

/// A git repository's tree is read at `base_commit`, so it must be there and look like a commit id.
fn check_commit(base_commit: Option<&str>) -> Result<(), FieldError> {
    match base_commit {
        None => Err(FieldError::new(
            "base_commit",
            "`base_commit` is missing; a git repository needs the commit whose tree the task starts from",
        )),
        Some(commit) if is_commit_id(commit) => Ok(()),
        Some(commit) => Err(FieldError::new(
            "base_commit",
            format!(
                "`{commit}` is not a commit id; write 7 to 40 hex digits (`git rev-parse HEAD`)"
            ),
        )),
    }
}

fn is_commit_id(text: &str) -> bool {
    (7..=40).contains(&text.len()) && text.chars().all(|c| c.is_ascii_hexdigit())
}

fn look_up(
    dir: &Path,
    owner: &str,
    name: &str,
    base_commit: Option<&str>,
) -> Result<RepoSource, FieldError> {
    let flat = format!("{owner}__{name}");
    let candidates = [
        format!("{flat}.git"),
        flat.clone(),
        format!("{owner}/{name}.git"),
        format!("{owner}/{name}"),
        format!("{name}.git"),
        name.to_owned(),
    ];
    for candidate in &candidates {
        let path = dir.join(candidate);
        if path.exists() {
            return classify(&path, base_commit);
        }
    }
    let commit = base_commit.filter(|c| is_commit_id(c));
    if let Some(archive) = commit.and_then(|c| find_archive(dir, &[name, &flat], c)) {
        return classify(&archive, base_commit);
    }
    let mut tried: Vec<String> = candidates.to_vec();
    match commit {
        Some(commit) => {
            let prefix = commit.get(..7).unwrap_or(commit);
            tried.push(format!("{name}-{prefix}….tar.gz"));
            tried.push(format!("{flat}-{prefix}….tar.gz"));
        }
        None => tried.push(format!(
            "(no archive: `base_commit` {} names no commit to match `{name}-<commit>.tar.gz` against)",
            base_commit.map_or("is missing and".to_owned(), |c| format!("`{c}`"))
        )),
    }
    Err(FieldError::new(
        "repo",
        format!(
            "`{owner}/{name}` is not under --repos {}: tried {}; put a git mirror or an archive of \
             the tree at `base_commit` there under one of those names",
            dir.display(),
            tried.join(", ")
        ),
    ))
}

/// `<stem>-<hex>.tar.gz` (or `.tgz`, `.tar`) in `dir` whose hex, 7 digits or more, begins
/// `commit`; the first in name order, so the choice does not depend on the file system.
fn find_archive(dir: &Path, stems: &[&str], commit: &str) -> Option<PathBuf> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let commit = commit.to_ascii_lowercase();
    names
        .into_iter()
        .find(|file| {
            stems.iter().any(|stem| {
                let Some(rest) = file.strip_prefix(stem).and_then(|r| r.strip_prefix('-')) else {
                    return false;
                };
                ARCHIVE_SUFFIXES.iter().any(|suffix| {
                    rest.strip_suffix(suffix).is_some_and(|hex| {
                        hex.len() >= 7
                            && hex.chars().all(|c| c.is_ascii_hexdigit())
                            && commit.starts_with(&hex.to_ascii_lowercase())
                    })
                })
            })
        })
        .map(|file| dir.join(file))
}

#[cfg(test)]
mod tests {
    use std::fs;

    use pretty_assertions::assert_eq;

    use super::*;

    const COMMIT: &str = "b40a0f4e33823e6d0f341f7e8684e359a99060d1";

    fn resolve_in(
        dir: &Path,
        repos: Option<&Path>,
        repo: &str,
        commit: Option<&str>,
    ) -> Result<RepoSource, FieldError> {
        resolve(
            repo,
            commit,
            Places {
                task_dir: dir,
                repos_dir: repos,
            },
        )
    }

    #[test]
    fn paths_are_classified_by_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("work/.git")).unwrap();
        fs::create_dir_all(root.join("bare.git/objects")).unwrap();
        fs::create_dir_all(root.join("bare.git/refs")).unwrap();
        fs::write(root.join("bare.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::create_dir_all(root.join("plain")).unwrap();
        fs::write(root.join("tree.tgz"), b"").unwrap();
        fs::write(root.join("notes.txt"), b"").unwrap();

        let actual: Vec<Result<RepoSource, String>> = [
            ("work", Some("abcdef0")),
            ("bare.git", Some(COMMIT)),
            ("plain", None),
            ("tree.tgz", None),
            ("notes.txt", None),
            ("work", None),
            ("work", Some("main")),
        ]
        .iter()
        .map(|(repo, commit)| resolve_in(root, None, repo, *commit).map_err(|e| e.field))
        .collect();

        let expected: Vec<Result<RepoSource, String>> = vec![
            Ok(RepoSource::Git(root.join("work"))),
            Ok(RepoSource::Git(root.join("bare.git"))),
            Ok(RepoSource::Folder(root.join("plain"))),
            Ok(RepoSource::Archive(root.join("tree.tgz"))),
            Err("repo".into()),
            Err("base_commit".into()),
            Err("base_commit".into()),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn urls_are_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();

        let actual: Vec<String> = ["https://github.com/o/n.git", "git@github.com:o/n.git"]
            .iter()
            .map(
                |repo| match resolve_in(dir.path(), None, repo, Some(COMMIT)) {
                    Ok(source) => format!("resolved to {source:?}"),
                    Err(error) => error.message,
                },
            )
            .collect();

        let expected: Vec<String> = ["https://github.com/o/n.git", "git@github.com:o/n.git"]
            .iter()
            .map(|repo| {
                format!(
                    "`{repo}` is a URL and plumb never downloads a repository at run time; clone it \
                     first and name the clone in `repo`, or put a mirror under --repos"
                )
            })
            .collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn github_names_find_archives_by_commit_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let repos = dir.path();
        fs::write(repos.join("marshmallow-b40a0f4e33.tar.gz"), b"").unwrap();
        fs::write(repos.join("other__proj-1234567.tgz"), b"").unwrap();

        let actual = (
            resolve_in(
                repos,
                Some(repos),
                "marshmallow-code/marshmallow",
                Some(COMMIT),
            ),
            resolve_in(repos, Some(repos), "other/proj", Some("1234567890")),
            resolve_in(repos, Some(repos), "other/proj", Some("7654321")).map_err(|e| e.message),
        );

        let expected = (
            Ok(RepoSource::Archive(
                repos.join("marshmallow-b40a0f4e33.tar.gz"),
            )),
            Ok(RepoSource::Archive(repos.join("other__proj-1234567.tgz"))),
            Err(format!(
                "`other/proj` is not under --repos {}: tried other__proj.git, other__proj, \
                 other/proj.git, other/proj, proj.git, proj, proj-7654321….tar.gz, \
                 other__proj-7654321….tar.gz; put a git mirror or an archive of the tree at \
                 `base_commit` there under one of those names",
                repos.display()
            )),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_github_name_without_repos_says_to_pass_it() {
        let dir = tempfile::tempdir().unwrap();

        let actual = resolve_in(dir.path(), None, "o/n", Some(COMMIT)).map_err(|e| e.message);

        let expected = Err(format!(
            "`o/n` is a GitHub name, not a path under {}; pass --repos DIR with a git mirror of it \
             (DIR/o__n.git) or an archive of its tree at the base commit",
            dir.path().display()
        ));
        assert_eq!(actual, expected);
    }
}
