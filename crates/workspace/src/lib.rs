//! plumb-workspace: the throwaway copy of a repository the agent works in, and everything that keeps it
//! honest: shadow-git checkpoints outside the copy, rollback, the patch against the baseline, and path
//! confinement for every path a model names.
//!
//! The user's repository is only read (a walk of its files) while a run goes; the one place that writes to it
//! is `home/`, after a person approved the exact diff (`plumb fix`'s question, `plumb apply --sha`). All git calls go to the shadow dir with an isolated environment (see `git.rs`), except
//! `source_tree.rs`, which reads a task repository's objects (never its working tree, index or refs) to
//! write one commit's tree for `plumb eval`. Git never reads the copy: `stage/` turns it into trees
//! with plumb's own walk, `diffs.rs` compares trees, `rollback.rs` checks out into fresh folders, and
//! `discard.rs` removes what a command filled within the run's time.
//!
//! `intake/` turns what `plumb serve` receives from outside (an archive upload, a git URL) into a
//! folder to prepare a workspace from, under caps and a URL policy.

mod bundle;
mod confine;
mod copy;
mod diff;
mod diffs;
mod discard;
mod error;
mod git;
mod home;
mod ids;
pub mod intake;
mod reader;
mod restore;
mod rollback;
mod run_dir;
mod setup_snapshot;
mod source_tree;
mod stage;
mod tree_archive;
mod upload_pack;
mod workspace;

pub use bundle::{BundleError, BundleRequest, MadeBundle, bundle_change};
pub use confine::{MAX_LINKS, is_hidden_char};
pub use copy::{CopyLimits, CopyReport, PLUMBIGNORE, SkippedFile};
pub use diff::{ChangeKind, ChangedFile, Entry, EntryMode, ObjectId, Patch, sha256_hex};
pub use discard::{DISCARDED_PREFIX, discard_tree};
pub use error::{ConfineError, WorkspaceError};
pub use home::{
    APPLIED_FILE, Applied, Blob, BranchCommit, BranchNameError, CHANGE_FILE, ChangeRecord,
    Destination, FileKind, FileState, HomeError, HomeState, Identity, NewBranch, SAVED_DIR, Slot,
    Touched, apply_to_tree, check_branch_name, commit_on_branch, undo, write_record,
};
#[doc(hidden)]
pub use home::{Faults, NoFaults, Step, apply_to_tree_with, commit_on_branch_with, undo_with};
pub use ids::{CommitId, MAX_LABEL_CHARS, MAX_REF_NAME_CHARS, sanitize_label, sanitize_ref_name};
pub use plumb_protocol::chars::{is_bidi_control, is_invisible};
pub use reader::{ReadError, SpecialKind, Tree};
pub use setup_snapshot::{
    RestoreMode, Restored, Stamps, has_snapshot, restore_changes, save_changes,
};
pub use source_tree::{SourceTreeError, export_commit, unpack_archive};
pub use stage::{KeptOut, KeptOutKind, WorkspaceLimits};
pub use tree_archive::pack_tree;
pub use upload_pack::{PackedSource, UPLOAD_TOP, pack_source};
pub use workspace::{
    BASELINE_REF, Checkpoint, HOME_DIR, SHADOW_DIR, SOURCE_REF, WORK_DIR, Workspace,
};
