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
//! stage everything (plumb's own walk, `stage/`), commit the tree with a fixed identity and date, and point
//! `refs/heads/plumb` (HEAD) and the internal baseline ref at it.
//!
//! Refs: HEAD is `refs/heads/plumb` and moves with checkpoints and rollbacks; the baseline lives at
//! [`BASELINE_REF`], outside `refs/plumb/`, so [`Workspace::keep_ref`] can never move it.
//!
//! Git never reads the copy (see `git.rs`), and every step on it is bounded: staging by
//! [`WorkspaceLimits`] and the deadline ([`Workspace::set_deadline`]), each git call by the deadline.
//! The diffs are in `diffs.rs`, the rollback and check trees in `rollback.rs`.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::confine;
use crate::copy::{CopyLimits, CopyReport, copy_tree};
use crate::error::{ConfineError, WorkspaceError};
use crate::git::Git;
use crate::ids::{self, CommitId, sanitize_label, sanitize_ref_name};
use crate::reader::Tree;
use crate::run_dir::{absolute_run_dir, canonical_source, ensure_empty};
use crate::stage::cache::StatCache;
use crate::stage::objects::Objects;
use crate::stage::{Before, KeptOut, Stage, StageFailure, Staged, Tracked, WorkspaceLimits};

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
pub(crate) const BRANCH_REF: &str = "refs/heads/plumb";
/// Namespace of [`Workspace::keep_ref`].
pub(crate) const KEPT_PREFIX: &str = "refs/plumb/";
/// `name` as [`Workspace::keep_ref`] would have written it (the prefix, then a sanitised name).
pub(crate) fn sanitize_kept(name: &str) -> String {
    name.strip_prefix(KEPT_PREFIX)
        .map(|rest| format!("{KEPT_PREFIX}{}", sanitize_ref_name(rest)))
        .unwrap_or_default()
}

/// Message of the baseline commit.
const BASELINE_LABEL: &str = "baseline";

/// Build output that test runs leave behind; excluded in the shadow git so it never pollutes the patch.
pub(crate) const SHADOW_EXCLUDE: &str = "\
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
    pub(crate) run_dir: PathBuf,
    pub(crate) root: PathBuf,
    pub(crate) git: Git,
    pub(crate) baseline: CommitId,
    base_tree: String,
    limits: WorkspaceLimits,
    /// What staging hashed, shared by the clones of this handle.
    cache: Arc<Mutex<StatCache>>,
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
        // Kept for a person running git by hand on the shadow dir; staging applies the same list.
        write_file(&info.join("exclude"), SHADOW_EXCLUDE)?;
        write_file(&info.join("attributes"), SHADOW_ATTRIBUTES)?;

        let cache = Arc::new(Mutex::new(StatCache::default()));
        let tree = stage_tree(&root, &git, limits.workspace, &cache, &Before::Nothing)?.tree;
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
            limits: limits.workspace,
            cache,
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
            limits: WorkspaceLimits::DEFAULT,
            cache: Arc::default(),
        })
    }

    /// Every step on the copy from now on ends by `deadline` (the run's wall clock; the finish
    /// moves it by its grace), or says it ran out of time. `None`: no deadline.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.git.set_deadline(deadline);
    }

    /// The deadline steps on the copy end by.
    pub fn deadline(&self) -> Option<Instant> {
        self.git.deadline()
    }

    /// How much the copy may hold when it is staged.
    pub fn set_limits(&mut self, limits: WorkspaceLimits) {
        self.limits = limits;
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
        let tree = self.stage()?.tree;
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

    /// The commit HEAD points at: the latest checkpoint, or the target of the latest rollback.
    pub fn head(&self) -> Result<CommitId, WorkspaceError> {
        let out = self.git.run(&["rev-parse", "--verify", "HEAD^{commit}"])?;
        parse_commit(out.text("rev-parse")?, "rev-parse")
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

    /// What staging left out of the copy's state now: every `.git` below the root and a changed
    /// top `.gitmodules` (see `stage/`), in path order.
    pub fn kept_out(&self) -> Result<Vec<KeptOut>, WorkspaceError> {
        Ok(self.stage()?.kept_out)
    }

    /// The copy as it is now, staged as a tree from HEAD's.
    pub(crate) fn stage(&self) -> Result<Staged, WorkspaceError> {
        let listing = self
            .git
            .run(&["ls-tree", "-r", "-z", "--full-tree", "HEAD^{tree}"])?;
        let tracked = Tracked::parse(&listing.stdout).ok_or_else(|| unexpected("ls-tree"))?;
        stage_tree(
            &self.root,
            &self.git,
            self.limits,
            &self.cache,
            &Before::Tree(tracked),
        )
    }

    /// Refuses ids the shadow repository does not hold (or that are not commits) as bad input.
    pub(crate) fn ensure_commit(&self, commit: &CommitId) -> Result<(), WorkspaceError> {
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

/// Stages the copy at `root` into `git`'s objects, once more if a file changed while it was read
/// (a process still writing in the copy).
fn stage_tree(
    root: &Path,
    git: &Git,
    limits: WorkspaceLimits,
    cache: &Mutex<StatCache>,
    before: &Before,
) -> Result<Staged, WorkspaceError> {
    let objects = Objects::new(git.git_dir());
    let stage = Stage {
        root,
        objects: &objects,
        exclude: SHADOW_EXCLUDE,
        limits,
        deadline: git.deadline(),
        cache,
    };
    let mut tries = 0;
    loop {
        tries += 1;
        match stage.run(before) {
            Ok(staged) => return Ok(staged),
            Err(StageFailure::Failed(err)) => return Err(err),
            Err(StageFailure::Changed(path)) if tries >= 2 => {
                return Err(WorkspaceError::ChangedWhileStaged { path });
            }
            Err(StageFailure::Changed(_)) => {}
        }
    }
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

pub(crate) fn parse_commit(text: &str, command: &str) -> Result<CommitId, WorkspaceError> {
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

pub(crate) fn unexpected(command: &str) -> WorkspaceError {
    WorkspaceError::GitOutput {
        command: command.to_owned(),
        detail: "not the object id or listing expected".to_owned(),
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), WorkspaceError> {
    fs::write(path, text).map_err(|e| WorkspaceError::io("write", path, e))
}
