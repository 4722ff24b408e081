//! The change as text and as a listing: every diff is between two trees the shadow repository
//! holds (the baseline's and the copy's as staged, or a kept attempt's), so git never reads the
//! copy to make one. Fixed options (`--full-index`, no external diff or text conversion, the
//! shadow's attributes) make the same content give the same bytes.

use crate::diff::{self, ChangedFile, Entry, EntryMode, Patch};
use crate::error::WorkspaceError;
use crate::git::{GitFailure, MAX_STDOUT};
use crate::ids::CommitId;
use crate::workspace::{KEPT_PREFIX, Workspace, parse_commit, sanitize_kept, unexpected};

impl Workspace {
    /// The diff from the baseline to the copy as it is now, new, deleted and renamed files included; the
    /// same content always gives the same bytes (full index lines, fixed config). Binary changes are refused
    /// with [`WorkspaceError::BinaryChange`]; an empty copy-equals-baseline diff is an empty patch.
    pub fn patch(&self) -> Result<Patch, WorkspaceError> {
        let tree = self.stage()?.tree;
        let base = self.baseline.as_str();
        let out = self.git.run(&[
            "diff",
            "-M",
            "--numstat",
            "-z",
            "--no-ext-diff",
            "--no-textconv",
            base,
            &tree,
            "--",
        ])?;
        let binary = diff::binary_paths(&out.stdout).ok_or_else(|| unexpected("diff --numstat"))?;
        if !binary.is_empty() {
            return Err(WorkspaceError::BinaryChange { paths: binary });
        }
        let files = self.raw_listing(&tree)?;
        let out = self
            .git
            .run_capped(&[
                "diff",
                "-M",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--full-index",
                base,
                &tree,
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
        let tree = self.stage()?.tree;
        self.raw_listing(&tree)
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

    fn raw_listing(&self, tree: &str) -> Result<Vec<ChangedFile>, WorkspaceError> {
        let out = self.git.run(&[
            "diff",
            "-M",
            "--raw",
            "--no-abbrev",
            "-z",
            "--no-ext-diff",
            self.baseline.as_str(),
            tree,
            "--",
        ])?;
        diff::parse_raw(&out.stdout).ok_or_else(|| unexpected("diff --raw"))
    }
}
