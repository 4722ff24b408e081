//! The workspace: a throwaway copy of the repository and its shadow git.
//!
//! Layout of a run directory:
//! - `work/`: the copy the agent edits (the only place the sandbox makes writable);
//! - `shadow.git/`: a bare git dir holding the checkpoints, outside the copy so nothing the agent runs can
//!   rewrite history, hooks or config;
//! - `home/`: an empty `HOME` for git, so no user configuration leaks in.
//!
//! `prepare` steps, in order: check the source and the run directory (before writing anything), create the
//! run directory, copy the tree, `git init` the shadow dir, write its `info/exclude` and `info/attributes`,
//! stage everything, write the tree, commit it with a fixed identity and date, and point `refs/heads/plumb`
//! (HEAD) and the internal baseline ref at it.
//!
//! Refs: HEAD is `refs/heads/plumb` and moves with checkpoints and rollbacks; the baseline lives at
//! [`BASELINE_REF`], outside `refs/plumb/`, so [`Workspace::keep_ref`] can never move it.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::confine;
use crate::copy::{CopyLimits, CopyReport, copy_tree};
use crate::diff::{self, ChangedFile, Entry, EntryMode, Patch};
use crate::error::{ConfineError, WorkspaceError};
use crate::git::{Git, GitFailure, MAX_STDOUT};
use crate::ids::{self, CommitId, sanitize_label, sanitize_ref_name};
use crate::reader::Tree;
use crate::run_dir::{absolute_run_dir, canonical_source, ensure_empty};

/// Folder of the copy inside the run directory.
pub const WORK_DIR: &str = "work";
/// The shadow git dir inside the run directory.
pub const SHADOW_DIR: &str = "shadow.git";
/// The empty `HOME` given to git.
pub const HOME_DIR: &str = "home";
/// Where the baseline commit is kept.
pub const BASELINE_REF: &str = "refs/plumb-internal/baseline";
/// The ref holding the tree as copied from the source, before any setup phase moved the baseline.
pub const SOURCE_REF: &str = "refs/plumb-internal/source";
/// The branch HEAD points at.
const BRANCH_REF: &str = "refs/heads/plumb";
/// Namespace of [`Workspace::keep_ref`].
const KEPT_PREFIX: &str = "refs/plumb/";
/// `name` as [`Workspace::keep_ref`] would have written it (the prefix, then a sanitised name).
fn sanitize_kept(name: &str) -> String {
    name.strip_prefix(KEPT_PREFIX)
        .map(|rest| format!("{KEPT_PREFIX}{}", sanitize_ref_name(rest)))
        .unwrap_or_default()
}

/// Message of the baseline commit.
const BASELINE_LABEL: &str = "baseline";

/// Build output that test runs leave behind; excluded in the shadow git so it never pollutes the patch.
const SHADOW_EXCLUDE: &str = "\
# written by plumb: build and test output never belongs in a patch
__pycache__/
*.pyc
.pytest_cache/
.ruff_cache/
.mypy_cache/
node_modules/
target/
.plumb-report/
";

/// Attributes that outrank anything in the copy's `.gitattributes`: no filter, no end-of-line or encoding
/// conversion, so the shadow git stores and diffs exactly the bytes on disk and never runs a filter program.
const SHADOW_ATTRIBUTES: &str = "\
# written by plumb: store bytes as they are
* -text -eol -crlf -ident -filter -working-tree-encoding
";

/// A prepared copy of a repository with its shadow git. Cheap to clone; every method runs git afresh, so
/// two handles on the same run directory see the same state.
#[derive(Debug, Clone)]
pub struct Workspace {
    run_dir: PathBuf,
    root: PathBuf,
    git: Git,
    baseline: CommitId,
    base_tree: String,
}

/// One commit on the checkpoint branch, as listed by [`Workspace::history`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub commit: CommitId,
    /// The sanitised label it was committed with.
    pub label: String,
}

impl Workspace {
    /// Copies `source`'s tree into `run_dir/work` and creates the shadow git dir at `run_dir/shadow.git`
    /// (outside the copy), then commits the baseline. `run_dir` must not exist or be empty, and must not lie
    /// inside `source`. Nothing is written into `source` and no git command runs on it.
    pub fn prepare(source: &Path, run_dir: &Path) -> Result<Workspace, WorkspaceError> {
        Self::prepare_with(source, run_dir, &CopyLimits::default()).map(|(ws, _)| ws)
    }

    /// [`Workspace::prepare`] within `limits`; the report names the files left out for their size.
    pub fn prepare_with(
        source: &Path,
        run_dir: &Path,
        limits: &CopyLimits,
    ) -> Result<(Workspace, CopyReport), WorkspaceError> {
        let source = canonical_source(source)?;
        let run_dir = absolute_run_dir(run_dir)?;
        if run_dir.starts_with(&source) {
            return Err(WorkspaceError::RunDirInsideSource {
                run_dir,
                source_dir: source,
            });
        }
        ensure_empty(&run_dir)?;
        fs::create_dir_all(&run_dir)
            .map_err(|e| WorkspaceError::io("create the run directory", &run_dir, e))?;
        let run_dir = run_dir
            .canonicalize()
            .map_err(|e| WorkspaceError::io("resolve the run directory", &run_dir, e))?;

        let root = run_dir.join(WORK_DIR);
        let home = run_dir.join(HOME_DIR);
        let git_dir = run_dir.join(SHADOW_DIR);
        for dir in [&root, &home] {
            fs::create_dir(dir).map_err(|e| WorkspaceError::io("create the folder", dir, e))?;
        }
        let copied = copy_tree(&source, &root, limits)?;

        let git = Git::new(git_dir.clone(), root.clone(), home);
        git.init()?;
        let info = git_dir.join("info");
        fs::create_dir_all(&info).map_err(|e| WorkspaceError::io("create the folder", &info, e))?;
        write_file(&info.join("exclude"), SHADOW_EXCLUDE)?;
        write_file(&info.join("attributes"), SHADOW_ATTRIBUTES)?;

        git.run(&["add", "--all"])?;
        let tree = write_tree(&git)?;
        let baseline = commit_tree(&git, &tree, None, BASELINE_LABEL)?;
        let refs = format!(
            "update {BRANCH_REF} {baseline}\nupdate {BASELINE_REF} {baseline}\nupdate {SOURCE_REF} {baseline}\n"
        );
        git.run_with_input(&["update-ref", "--stdin"], refs.as_bytes())?;

        let workspace = Workspace {
            run_dir,
            root,
            git,
            baseline,
            base_tree: tree,
        };
        Ok((workspace, copied))
    }

    /// Reopens a workspace that [`Workspace::prepare`] created (for later commands like `plumb apply`).
    pub fn open(run_dir: &Path) -> Result<Workspace, WorkspaceError> {
        let not_prepared = || WorkspaceError::NotPrepared {
            path: run_dir.to_path_buf(),
        };
        let run_dir = run_dir.canonicalize().map_err(|_| not_prepared())?;
        let root = run_dir.join(WORK_DIR);
        let git_dir = run_dir.join(SHADOW_DIR);
        let home = run_dir.join(HOME_DIR);
        if !root.is_dir() || !git_dir.join("HEAD").is_file() || !home.is_dir() {
            return Err(not_prepared());
        }
        let git = Git::new(git_dir, root.clone(), home);
        let spec_commit = format!("{BASELINE_REF}^{{commit}}");
        let spec_tree = format!("{SOURCE_REF}^{{tree}}");
        let out = git.run(&["rev-parse", &spec_commit, &spec_tree])?;
        let (baseline, base_tree) = out
            .text("rev-parse")?
            .split_once('\n')
            .ok_or_else(|| unexpected("rev-parse"))?;
        let baseline = parse_commit(baseline, "rev-parse")?;
        let base_tree = parse_object(base_tree, "rev-parse")?;
        Ok(Workspace {
            run_dir,
            root,
            git,
            baseline,
            base_tree,
        })
    }

    /// Canonical path of the copy (the folder the agent works in).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The run directory holding the copy, the shadow git and git's empty home.
    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// The shadow git dir (outside the copy).
    pub fn git_dir(&self) -> &Path {
        self.git.git_dir()
    }

    /// The commit of the untouched tree. The same source tree always gives the same baseline commit.
    pub fn baseline(&self) -> &CommitId {
        &self.baseline
    }

    /// The git tree id of the tree as copied from the source (equal sources, equal ids). A setup
    /// phase may move the baseline ([`Workspace::rebaseline`]); this stays the source's tree.
    pub fn base_tree(&self) -> &str {
        &self.base_tree
    }

    /// Commits the current state of the copy with `label` (sanitised by [`sanitize_label`], passed on stdin).
    /// When the tree equals HEAD's tree, no commit is made and HEAD is returned, so repeated checkpoints of an
    /// unchanged copy are free and give the same id.
    pub fn checkpoint(&self, label: &str) -> Result<CommitId, WorkspaceError> {
        self.git.run(&["add", "--all"])?;
        let tree = write_tree(&self.git)?;
        let out = self
            .git
            .run(&["rev-parse", "HEAD^{commit}", "HEAD^{tree}"])?;
        let (head, head_tree) = out
            .text("rev-parse")?
            .split_once('\n')
            .ok_or_else(|| unexpected("rev-parse"))?;
        let head = parse_commit(head, "rev-parse")?;
        if head_tree.trim() == tree {
            return Ok(head);
        }
        let commit = commit_tree(&self.git, &tree, Some(&head), &sanitize_label(label))?;
        // Compare-and-swap against the HEAD we read, so a concurrent move is an error, not a lost commit.
        self.git.run(&[
            "update-ref",
            "--end-of-options",
            BRANCH_REF,
            commit.as_str(),
            head.as_str(),
        ])?;
        Ok(commit)
    }

    /// Makes the current state the new baseline (checkpoints it and moves the baseline ref): for a
    /// setup phase whose output (installed dependencies, generated files) must not be part of the
    /// patch. [`Workspace::base_tree`] keeps naming the tree as copied from the source.
    pub fn rebaseline(&mut self, label: &str) -> Result<CommitId, WorkspaceError> {
        let commit = self.checkpoint(label)?;
        self.git.run(&[
            "update-ref",
            "--end-of-options",
            BASELINE_REF,
            commit.as_str(),
        ])?;
        self.baseline = commit.clone();
        Ok(commit)
    }

    /// Writes the tree of `commit` into `dest` (a new or empty folder outside the copy), leaving the
    /// copy, HEAD and the shadow index alone. The check ladder uses it to run the new tests against
    /// the baseline source.
    pub fn materialize(&self, commit: &CommitId, dest: &Path) -> Result<(), WorkspaceError> {
        self.ensure_commit(commit)?;
        ensure_empty(dest)?;
        fs::create_dir_all(dest).map_err(|e| WorkspaceError::io("create the folder", dest, e))?;
        let dest = dest
            .canonicalize()
            .map_err(|e| WorkspaceError::io("resolve the folder", dest, e))?;
        if dest.starts_with(&self.root) {
            return Err(WorkspaceError::RunDirInsideSource {
                run_dir: dest,
                source_dir: self.root.clone(),
            });
        }
        let index = self
            .run_dir
            .join(format!("materialize-{}.index", std::process::id()));
        let git = self.git.with_work_tree(dest);
        let result = git
            .run_with_index(&["read-tree", "--end-of-options", commit.as_str()], &index)
            .and_then(|_| git.run_with_index(&["checkout-index", "--all", "--force"], &index));
        let _ = fs::remove_file(&index);
        result.map(|_| ())
    }

    /// The commit HEAD points at: the latest checkpoint, or the target of the latest rollback.
    pub fn head(&self) -> Result<CommitId, WorkspaceError> {
        let out = self.git.run(&["rev-parse", "--verify", "HEAD^{commit}"])?;
        parse_commit(out.text("rev-parse")?, "rev-parse")
    }

    /// Resets the copy to `commit` exactly and moves HEAD there: tracked content is restored, files git
    /// does not track and does not ignore are removed (nested repositories and a `.git` at the top of the
    /// copy included); ignored build output (e.g. `__pycache__/`) stays. Commits after `commit` become
    /// unreachable unless [`Workspace::keep_ref`] kept them.
    pub fn rollback(&self, commit: &CommitId) -> Result<(), WorkspaceError> {
        self.ensure_commit(commit)?;
        self.git
            .run(&["reset", "--quiet", "--hard", commit.as_str(), "--"])?;
        self.git
            .run(&["clean", "-f", "-f", "-d", "--quiet", "--"])?;
        let top_git = self.root.join(".git");
        match fs::symlink_metadata(&top_git) {
            Ok(meta) if meta.is_dir() => fs::remove_dir_all(&top_git),
            Ok(_) => fs::remove_file(&top_git),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(err),
        }
        .map_err(|e| WorkspaceError::io("remove", &top_git, e))
    }

    /// Points `refs/plumb/<name>` at `commit` (`name` sanitised by [`sanitize_ref_name`]) and returns the
    /// full ref name. Used to keep a failed attempt for inspection after the rollback.
    pub fn keep_ref(&self, name: &str, commit: &CommitId) -> Result<String, WorkspaceError> {
        self.ensure_commit(commit)?;
        let full = format!("{KEPT_PREFIX}{}", sanitize_ref_name(name));
        self.git
            .run(&["update-ref", "--end-of-options", &full, commit.as_str()])?;
        Ok(full)
    }

    /// The diff from the baseline to the copy as it is now, new, deleted and renamed files included; the
    /// same content always gives the same bytes (full index lines, fixed config). Binary changes are refused
    /// with [`WorkspaceError::BinaryChange`]; an empty copy-equals-baseline diff is an empty patch.
    pub fn patch(&self) -> Result<Patch, WorkspaceError> {
        self.stage()?;
        let base = self.baseline.as_str();
        let out = self.git.run(&[
            "diff",
            "--cached",
            "-M",
            "--numstat",
            "-z",
            "--no-ext-diff",
            "--no-textconv",
            base,
            "--",
        ])?;
        let binary = diff::binary_paths(&out.stdout).ok_or_else(|| unexpected("diff --numstat"))?;
        if !binary.is_empty() {
            return Err(WorkspaceError::BinaryChange { paths: binary });
        }
        let files = self.raw_listing()?;
        let out = self
            .git
            .run_capped(&[
                "diff",
                "--cached",
                "-M",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--full-index",
                base,
                "--",
            ])
            .map_err(|failure| match failure {
                GitFailure::TooLarge { .. } => WorkspaceError::PatchTooLarge {
                    limit_bytes: MAX_STDOUT,
                },
                GitFailure::Other(err) => err,
            })?;
        let text = String::from_utf8(out.stdout).map_err(|err| WorkspaceError::NotUtf8 {
            paths: diff::non_utf8_files(err.as_bytes()),
        })?;
        Ok(Patch::new(text, files))
    }

    /// The diff from the baseline to the commit a kept ref (`refs/plumb/…`, see
    /// [`Workspace::keep_ref`]) points at: a failed attempt's change, for scoring it after the
    /// rollback. Binary changes show as git's one-line notice.
    pub fn kept_diff(&self, kept_ref: &str) -> Result<String, WorkspaceError> {
        if !kept_ref.starts_with(KEPT_PREFIX) || kept_ref != sanitize_kept(kept_ref) {
            return Err(unexpected("kept ref name"));
        }
        let out = self
            .git
            .run_capped(&[
                "diff",
                "-M",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--full-index",
                self.baseline.as_str(),
                kept_ref,
                "--",
            ])
            .map_err(|failure| match failure {
                GitFailure::TooLarge { .. } => WorkspaceError::PatchTooLarge {
                    limit_bytes: MAX_STDOUT,
                },
                GitFailure::Other(err) => err,
            })?;
        String::from_utf8(out.stdout).map_err(|err| WorkspaceError::NotUtf8 {
            paths: diff::non_utf8_files(err.as_bytes()),
        })
    }

    /// The files changed since the baseline (added, modified, deleted, renamed), from the same staging as
    /// [`Workspace::patch`].
    pub fn changed_files(&self) -> Result<Vec<ChangedFile>, WorkspaceError> {
        self.stage()?;
        self.raw_listing()
    }

    /// The text of `rel` (a workspace-relative path as `changed_files` gives it) in the baseline, or
    /// `None` when the baseline has no such file or it is not UTF-8 text.
    pub fn baseline_text(&self, rel: &str) -> Result<Option<String>, WorkspaceError> {
        self.text_at(&self.baseline, rel)
    }

    /// Every path in the baseline's tree (relative, `/`-separated; a name that is not UTF-8 with
    /// its bytes replaced), for the checks that look for files by name.
    pub fn baseline_paths(&self) -> Result<Vec<String>, WorkspaceError> {
        let out = self.git.run(&[
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            "--full-tree",
            self.baseline.as_str(),
        ])?;
        Ok(out
            .stdout
            .split(|byte| *byte == 0)
            .filter(|name| !name.is_empty())
            .map(|name| String::from_utf8_lossy(name).into_owned())
            .collect())
    }

    /// The text of `rel` in the checkpoint `commit`, or `None` when it has no such file or it is not
    /// UTF-8 text.
    pub fn text_at(&self, commit: &CommitId, rel: &str) -> Result<Option<String>, WorkspaceError> {
        let listed = self.git.run(&[
            "ls-tree",
            "-z",
            "--full-name",
            "--object-only",
            commit.as_str(),
            "--",
            rel,
        ])?;
        let blob = String::from_utf8_lossy(&listed.stdout)
            .trim_end_matches('\0')
            .to_owned();
        if blob.is_empty() {
            return Ok(None);
        }
        let blob = parse_commit(&blob, "ls-tree")?;
        let out = self.git.run(&["cat-file", "blob", blob.as_str()])?;
        Ok(String::from_utf8(out.stdout).ok())
    }

    /// The content of one side of a changed file as the shadow git stores it, or `None` when it is not
    /// UTF-8 text, is a gitlink (another repository's commit), or is larger than one git call may print.
    /// For a link it is the target, always (bytes that are not UTF-8 replaced, which keeps every `/` and
    /// `.`). This is what the patch carries, never the file in the copy.
    pub fn blob_text(&self, entry: &Entry) -> Result<Option<String>, WorkspaceError> {
        if entry.mode == EntryMode::Gitlink {
            return Ok(None);
        }
        match self
            .git
            .run_capped(&["cat-file", "blob", entry.id.as_str()])
        {
            Ok(out) if entry.mode == EntryMode::Symlink => {
                Ok(Some(String::from_utf8_lossy(&out.stdout).into_owned()))
            }
            Ok(out) => Ok(String::from_utf8(out.stdout).ok()),
            Err(GitFailure::TooLarge { .. }) => Ok(None),
            Err(GitFailure::Other(err)) => Err(err),
        }
    }

    /// The bytes of a blob the shadow git stores (a file's content, a link's target).
    pub(crate) fn blob_bytes(&self, id: &crate::ObjectId) -> Result<Vec<u8>, WorkspaceError> {
        Ok(self.git.run(&["cat-file", "blob", id.as_str()])?.stdout)
    }

    /// The checkpoints from HEAD back to the baseline, newest first.
    pub fn history(&self) -> Result<Vec<Checkpoint>, WorkspaceError> {
        let out = self.git.run(&[
            "log",
            "--first-parent",
            "--no-decorate",
            "--format=%H %s",
            "--end-of-options",
            "HEAD",
        ])?;
        out.text("log")?
            .lines()
            .map(|line| {
                let (id, label) = line.split_once(' ').unwrap_or((line, ""));
                Ok(Checkpoint {
                    commit: parse_commit(id, "log")?,
                    label: label.to_owned(),
                })
            })
            .collect()
    }

    /// Confines a model-given path to the copy: resolves `..` and every symbolic link of the existing part
    /// before checking, and returns an absolute path inside [`Workspace::root`]. Refuses absolute paths,
    /// anything that leads outside (through links too, `/proc/self/root` included) and any `.git`
    /// component. A path that does not exist yet is fine as long as its missing tail is plain names.
    pub fn resolve(&self, user_path: &str) -> Result<PathBuf, ConfineError> {
        confine::resolve(&self.root, user_path)
    }

    /// The copy as a [`Tree`]: the confined reader every read of its files for a model goes through.
    pub fn tree(&self) -> Tree {
        Tree::from_canonical(self.root.clone())
    }

    fn stage(&self) -> Result<(), WorkspaceError> {
        self.git.run(&["add", "--all"]).map(drop)
    }

    fn raw_listing(&self) -> Result<Vec<ChangedFile>, WorkspaceError> {
        let out = self.git.run(&[
            "diff",
            "--cached",
            "-M",
            "--raw",
            "--no-abbrev",
            "-z",
            "--no-ext-diff",
            self.baseline.as_str(),
            "--",
        ])?;
        diff::parse_raw(&out.stdout).ok_or_else(|| unexpected("diff --raw"))
    }

    /// Refuses ids the shadow repository does not hold (or that are not commits) as bad input.
    fn ensure_commit(&self, commit: &CommitId) -> Result<(), WorkspaceError> {
        let unknown = || WorkspaceError::UnknownCommit {
            commit: commit.to_string(),
        };
        // --batch-check answers "<id> missing" (exit 0) for absent objects, so a git failure stays an
        // infrastructure error instead of passing for an unknown commit.
        let query = format!("{commit}\n");
        let out = self
            .git
            .run_with_input(&["cat-file", "--batch-check"], query.as_bytes())?;
        let answer = out.text("cat-file --batch-check")?;
        let mut fields = answer.split(' ');
        match (fields.next(), fields.next()) {
            (Some(id), Some("commit")) if id == commit.as_str() => Ok(()),
            (Some(id), Some(_)) if id == commit.as_str() => Err(unknown()),
            _ => Err(unexpected("cat-file --batch-check")),
        }
    }
}

fn write_tree(git: &Git) -> Result<String, WorkspaceError> {
    let out = git.run(&["write-tree"])?;
    parse_object(out.text("write-tree")?, "write-tree")
}

fn commit_tree(
    git: &Git,
    tree: &str,
    parent: Option<&CommitId>,
    label: &str,
) -> Result<CommitId, WorkspaceError> {
    let mut args = vec!["commit-tree", tree];
    if let Some(parent) = parent {
        args.extend(["-p", parent.as_str()]);
    }
    let message = format!("{label}\n");
    let out = git.run_with_input(&args, message.as_bytes())?;
    parse_commit(out.text("commit-tree")?, "commit-tree")
}

fn parse_commit(text: &str, command: &str) -> Result<CommitId, WorkspaceError> {
    CommitId::parse(text.trim()).map_err(|_| unexpected(command))
}

fn parse_object(text: &str, command: &str) -> Result<String, WorkspaceError> {
    let id = text.trim();
    if ids::is_full_hex(id) {
        Ok(id.to_owned())
    } else {
        Err(unexpected(command))
    }
}

fn unexpected(command: &str) -> WorkspaceError {
    WorkspaceError::GitOutput {
        command: command.to_owned(),
        detail: "not the object id or listing expected".to_owned(),
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), WorkspaceError> {
    fs::write(path, text).map_err(|e| WorkspaceError::io("write", path, e))
}
