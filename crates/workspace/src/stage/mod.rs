//! Staging: the copy's state as a git tree, made by plumb's own walk. Git never opens a file of
//! the copy: not to stage it (`git add` followed a gitfile to any repository on the host, failed
//! on a nested repository without a commit, blocked on a FIFO where it looked for a nested
//! repository's `HEAD` or for a `.gitignore`), not to diff it (diffs are between trees), not to
//! roll it back (`rollback.rs` checks the target out into a fresh folder).
//!
//! What is staged, as `git add --all` would, with these differences:
//! - a `.git` anywhere (folder, file, link or anything else, in any spelling a file system takes
//!   for it) is never entered nor staged: the files around it are content like any other, so a
//!   nested repository is its files, never a gitlink; each is reported in [`Staged::kept_out`];
//! - the top `.gitmodules` is content in the baseline; after it, the tree keeps the one it had
//!   (the agent's is reported, never staged): it is what makes git read submodules;
//! - FIFOs, sockets and devices are skipped (as git does) without being opened.
//!
//! Ignored names (`rules.rs`) are left out unless the tree before held them (a tracked file
//! stays tracked, as in git). Ignored folders are not entered, so build output costs one name.
//!
//! The walk has two passes. The first lists the tree (names and `lstat`), counting every name it
//! meets and the length of every file it would read: past [`WorkspaceLimits`] it stops at once,
//! before reading any content. The second hashes the listed files into objects (`objects.rs`,
//! through descriptors opened without following a link and without waiting; a file whose `lstat`
//! has not changed since it was last hashed is not read again, `cache.rs`) and writes the
//! folders' trees, deepest first. Both look at the deadline as they go. Folders are opened from
//! the root each time (`openat2` beneath it, no links), so no depth of tree holds descriptors.

mod before;
pub(crate) mod cache;
pub(crate) mod objects;
pub(crate) mod rules;

use before::current_entry;
pub(crate) use before::{Before, Tracked};

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Instant, SystemTime};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use self::cache::{Stamp, StatCache};
use self::objects::{ObjectError, Objects, Oid, TreeEntry, TreeMode, to_hex};
use crate::copy::human_bytes;
use crate::error::WorkspaceError;
use crate::reader::open_under;

/// How much a workspace may hold after a command (`limits.max_workspace_files`,
/// `limits.max_workspace_bytes`). Ignored build output counts one name per ignored file or folder
/// the walk meets, never its content: plumb never reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceLimits {
    /// Files, folders, links and other names, all counted.
    pub max_files: u64,
    /// The lengths of the files staging would read, added up.
    pub max_bytes: u64,
}

impl WorkspaceLimits {
    /// Half a million names (a large monorepo's checkout holds a few hundred thousand) and 4 GiB
    /// (twice the largest copy `limits.max_copy_bytes` allows by default).
    pub const DEFAULT: WorkspaceLimits = WorkspaceLimits {
        max_files: 500_000,
        max_bytes: 4 << 30,
    };
}

impl Default for WorkspaceLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A `.git` or `.gitmodules` staging left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptOut {
    /// Relative to the root, `/`-separated (bytes that are not UTF-8 replaced).
    pub path: String,
    pub kind: KeptOutKind,
}

/// What a [`KeptOut`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptOutKind {
    /// A folder named `.git`: a nested repository.
    GitFolder,
    /// A file named `.git`: a gitfile, which points git at a repository anywhere.
    GitFile,
    /// A symbolic link named `.git`.
    GitLink,
    /// A FIFO, socket or device named `.git`.
    GitSpecial,
    /// A `.gitmodules` at the top that the tree before did not have.
    GitmodulesAdded,
    /// The top `.gitmodules`, changed.
    GitmodulesChanged,
    /// The top `.gitmodules`, deleted.
    GitmodulesDeleted,
}

/// What one staging made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Staged {
    /// The tree's id (hex).
    pub(crate) tree: String,
    /// In path order.
    pub(crate) kept_out: Vec<KeptOut>,
    /// What a rollback in place removes besides the changed files: every `.git` and every FIFO,
    /// socket or device that is not ignored, in walk order.
    pub(crate) strays: Vec<PathBuf>,
    /// Folders that are not ignored and hold nothing staged, deepest first (a rollback removes
    /// those the target lacks when they are empty).
    pub(crate) empty_folders: Vec<PathBuf>,
    /// A `.gitignore` that is itself ignored and untracked: rules in force that the tree does not
    /// show (a rollback in place cannot trust its own view of what is ignored then).
    pub(crate) hidden_rules: bool,
}

/// Why a staging stopped.
pub(crate) enum StageFailure {
    /// Something changed a file between the listing and its read (only a process still running
    /// in the copy can): worth one more try.
    Changed(String),
    Failed(WorkspaceError),
}

impl From<WorkspaceError> for StageFailure {
    fn from(err: WorkspaceError) -> Self {
        StageFailure::Failed(err)
    }
}

/// Where a staging reads and writes, and within what.
pub(crate) struct Stage<'a> {
    /// The copy (canonical).
    pub(crate) root: &'a Path,
    pub(crate) objects: &'a Objects,
    /// plumb's own exclude list.
    pub(crate) exclude: &'a str,
    pub(crate) limits: WorkspaceLimits,
    pub(crate) deadline: Option<Instant>,
    /// What earlier stagings of this copy hashed.
    pub(crate) cache: &'a Mutex<StatCache>,
}

/// One folder of the listing.
struct Folder {
    rel: PathBuf,
    parent: Option<usize>,
    name: Vec<u8>,
    /// Inside an ignored folder entered only for the tracked files below it.
    all_ignored: bool,
    level: rules::Level,
    items: Vec<Item>,
    /// Filled by the second pass: the trees of the folders inside.
    subtrees: Vec<TreeEntry>,
}

/// One staged name of a folder.
enum Item {
    File {
        name: OsString,
        exec: bool,
        stamp: Stamp,
    },
    Link {
        name: OsString,
    },
    /// An entry kept as the tree before had it.
    Stored(TreeEntry),
}

impl Stage<'_> {
    /// Stages the copy as it is now, from `before`.
    pub(crate) fn run(&self, before: &Before) -> Result<Staged, StageFailure> {
        let root_fd = rustix::fs::open(
            self.root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|err| WorkspaceError::io("open the workspace", self.root, err.into()))?;
        let mut strays = Vec::new();
        let mut hidden_rules = false;
        let (mut folders, mut kept_out) =
            self.list(&root_fd, before, &mut strays, &mut hidden_rules)?;
        kept_out.sort_by(|a, b| a.path.cmp(&b.path));
        let mut empty_folders = Vec::new();
        let tree = self.hash(&root_fd, &mut folders, &mut empty_folders)?;
        Ok(Staged {
            tree: to_hex(&tree),
            kept_out,
            strays,
            empty_folders,
            hidden_rules,
        })
    }

    /// The first pass: every folder to stage with its files, within the limits.
    fn list(
        &self,
        root_fd: &OwnedFd,
        before: &Before,
        strays: &mut Vec<PathBuf>,
        hidden_rules: &mut bool,
    ) -> Result<(Vec<Folder>, Vec<KeptOut>), StageFailure> {
        let exclude = rules::exclude(self.root, self.exclude);
        let mut folders = vec![Folder {
            rel: PathBuf::new(),
            parent: None,
            name: Vec::new(),
            all_ignored: false,
            level: None,
            items: Vec::new(),
            subtrees: Vec::new(),
        }];
        let mut kept_out = Vec::new();
        let mut names_seen = 0u64;
        let mut bytes = 0u64;
        let mut top_gitmodules_seen: Vec<Vec<u8>> = Vec::new();
        let mut index = 0;
        while index < folders.len() {
            let rel = folders
                .get(index)
                .map(|f| f.rel.clone())
                .unwrap_or_default();
            let Ok(dir) = open_under(
                root_fd,
                &rel,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            ) else {
                // Gone, replaced by a link, or unreadable: git too leaves out what it cannot open.
                index += 1;
                continue;
            };
            let names = self.names(&dir, &mut names_seen)?;
            let abs_dir = self.root.join(&rel);
            let all_ignored = folders.get(index).is_some_and(|f| f.all_ignored);
            if !all_ignored && let Some(folder) = folders.get_mut(index) {
                folder.level = rules::level(&dir, &abs_dir);
            }
            for name in names {
                let Ok(stat) = rustix::fs::statat(dir.as_fd(), &name, AtFlags::SYMLINK_NOFOLLOW)
                else {
                    continue;
                };
                let kind = FileType::from_raw_mode(stat.st_mode);
                let child = rel.join(&name);
                if rules::is_git_name(&name) {
                    strays.push(child.clone());
                    kept_out.push(KeptOut {
                        path: shown(&child),
                        kind: match kind {
                            FileType::Directory => KeptOutKind::GitFolder,
                            FileType::RegularFile => KeptOutKind::GitFile,
                            FileType::Symlink => KeptOutKind::GitLink,
                            _ => KeptOutKind::GitSpecial,
                        },
                    });
                    continue;
                }
                if index == 0
                    && rules::is_gitmodules_name(&name)
                    && let Before::Tree(tracked) = before
                {
                    top_gitmodules_seen.push(name.as_bytes().to_vec());
                    let kept = tracked
                        .top_gitmodules
                        .iter()
                        .find(|e| e.name == name.as_bytes());
                    let now = current_entry(&dir, &name, kind, stat.st_mode);
                    if kept.map(|e| (e.mode, e.id)) != now {
                        kept_out.push(KeptOut {
                            path: shown(&child),
                            kind: if kept.is_some() {
                                KeptOutKind::GitmodulesChanged
                            } else {
                                KeptOutKind::GitmodulesAdded
                            },
                        });
                    }
                    if let (Some(entry), Some(root)) = (kept, folders.first_mut()) {
                        root.items.push(Item::Stored(entry.clone()));
                    }
                    continue;
                }
                let is_dir = kind == FileType::Directory;
                let abs = abs_dir.join(&name);
                let ignored = all_ignored
                    || rules::ignored(
                        std::iter::successors(Some(index), |i| {
                            folders.get(*i).and_then(|f| f.parent)
                        })
                        .filter_map(|i| folders.get(i).map(|f| &f.level)),
                        &exclude,
                        &abs,
                        is_dir,
                    );
                let child_bytes = child.as_os_str().as_bytes();
                let tracked = |folder: bool| match before {
                    Before::Nothing => false,
                    Before::Tree(t) if folder => t.folders.contains(child_bytes),
                    Before::Tree(t) => t.files.contains(child_bytes),
                };
                match kind {
                    FileType::Directory if !ignored || tracked(true) => {
                        folders.push(Folder {
                            rel: child.clone(),
                            parent: Some(index),
                            name: name.as_bytes().to_vec(),
                            all_ignored: ignored,
                            level: None,
                            items: Vec::new(),
                            subtrees: Vec::new(),
                        });
                    }
                    FileType::RegularFile if !ignored || tracked(false) => {
                        let len = u64::try_from(stat.st_size).unwrap_or(u64::MAX);
                        bytes = bytes.saturating_add(len);
                        if bytes > self.limits.max_bytes {
                            return Err(WorkspaceError::TooManyBytes {
                                limit: human_bytes(self.limits.max_bytes),
                            }
                            .into());
                        }
                        if let Some(folder) = folders.get_mut(index) {
                            folder.items.push(Item::File {
                                name,
                                exec: stat.st_mode & 0o100 != 0,
                                stamp: Stamp::of(&stat),
                            });
                        }
                    }
                    FileType::Symlink if !ignored || tracked(false) => {
                        if let Some(folder) = folders.get_mut(index) {
                            folder.items.push(Item::Link { name });
                        }
                    }
                    FileType::Fifo
                    | FileType::Socket
                    | FileType::CharacterDevice
                    | FileType::BlockDevice
                    | FileType::Unknown
                        if !ignored =>
                    {
                        strays.push(child.clone());
                    }
                    // Ignored, or a FIFO, socket or device: never content, never opened.
                    _ => *hidden_rules |= name == ".gitignore",
                }
            }
            index += 1;
        }
        if let Before::Tree(tracked) = before {
            for entry in &tracked.top_gitmodules {
                if !top_gitmodules_seen.contains(&entry.name) {
                    kept_out.push(KeptOut {
                        path: String::from_utf8_lossy(&entry.name).into_owned(),
                        kind: KeptOutKind::GitmodulesDeleted,
                    });
                    if let Some(root) = folders.first_mut() {
                        root.items.push(Item::Stored(entry.clone()));
                    }
                }
            }
        }
        Ok((folders, kept_out))
    }

    /// The names in the folder open at `dir`, counted into `seen`: past the limit the walk stops
    /// at once (a folder of a million names is not read whole first).
    fn names(&self, dir: &OwnedFd, seen: &mut u64) -> Result<Vec<OsString>, StageFailure> {
        let mut names = Vec::new();
        let Ok(mut listing) = rustix::fs::Dir::read_from(dir) else {
            return Ok(names);
        };
        while let Some(entry) = listing.read() {
            let Ok(entry) = entry else { break };
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            *seen += 1;
            if *seen > self.limits.max_files {
                return Err(WorkspaceError::TooManyFiles {
                    limit: self.limits.max_files,
                }
                .into());
            }
            if seen.is_multiple_of(256) {
                self.in_time()?;
            }
            names.push(OsStr::from_bytes(name).to_os_string());
        }
        Ok(names)
    }

    /// The second pass: objects for the files, trees for the folders, deepest first (a folder is
    /// listed after its parent); returns the root's tree.
    fn hash(
        &self,
        root_fd: &OwnedFd,
        folders: &mut [Folder],
        empty_folders: &mut Vec<PathBuf>,
    ) -> Result<Oid, StageFailure> {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let mut root_tree = None;
        for index in (0..folders.len()).rev() {
            self.in_time()?;
            let Some(folder) = folders.get_mut(index) else {
                continue;
            };
            let mut entries = std::mem::take(&mut folder.subtrees);
            let items = std::mem::take(&mut folder.items);
            let rel = folder.rel.clone();
            let all_ignored = folder.all_ignored;
            let (parent, name) = (folder.parent, std::mem::take(&mut folder.name));
            if !items.is_empty() {
                let dir = open_under(
                    root_fd,
                    &rel,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                )
                .map_err(|_| StageFailure::Changed(shown(&rel)))?;
                for item in items {
                    entries.push(self.object(&dir, &rel, item, &mut cache)?);
                }
            }
            let Some(parent) = parent else {
                root_tree = Some(self.write_tree(&mut entries)?);
                continue;
            };
            // A folder with nothing staged in it is not in the tree (git tracks no empty folder).
            if entries.is_empty() {
                if !all_ignored {
                    empty_folders.push(rel);
                }
                continue;
            }
            let id = self.write_tree(&mut entries)?;
            if let Some(parent) = folders.get_mut(parent) {
                parent.subtrees.push(TreeEntry {
                    name,
                    mode: TreeMode::Tree,
                    id,
                });
            }
        }
        match root_tree {
            Some(tree) => Ok(tree),
            None => Ok(self.write_tree(&mut [])?),
        }
    }

    /// The object of one listed item of the folder open at `dir`.
    fn object(
        &self,
        dir: &OwnedFd,
        rel: &Path,
        item: Item,
        cache: &mut StatCache,
    ) -> Result<TreeEntry, StageFailure> {
        match item {
            Item::Stored(entry) => Ok(entry),
            Item::Link { name } => {
                let target = rustix::fs::readlinkat(dir.as_fd(), &name, Vec::new())
                    .map_err(|_| StageFailure::Changed(shown(&rel.join(&name))))?;
                let id = self
                    .objects
                    .write_blob(target.as_bytes())
                    .map_err(|err| self.store_error(err))?;
                Ok(TreeEntry {
                    name: name.as_bytes().to_vec(),
                    mode: TreeMode::Symlink,
                    id,
                })
            }
            Item::File { name, exec, stamp } => {
                let mode = if exec {
                    TreeMode::Executable
                } else {
                    TreeMode::Regular
                };
                let path = rel.join(&name).into_os_string().into_vec();
                if let Some(id) = cache.get(&path, &stamp) {
                    return Ok(TreeEntry {
                        name: name.into_vec(),
                        mode,
                        id,
                    });
                }
                let changed = || StageFailure::Changed(shown(&rel.join(&name)));
                let read_at = SystemTime::now();
                let fd = rustix::fs::openat(
                    dir.as_fd(),
                    &name,
                    OFlags::RDONLY
                        | OFlags::NOFOLLOW
                        | OFlags::NONBLOCK
                        | OFlags::NOCTTY
                        | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(|err| match err {
                    rustix::io::Errno::ACCESS | rustix::io::Errno::PERM => StageFailure::Failed(
                        WorkspaceError::io("read", self.root.join(rel).join(&name), err.into()),
                    ),
                    _ => changed(),
                })?;
                let now = rustix::fs::fstat(&fd).map_err(|_| changed())?;
                if FileType::from_raw_mode(now.st_mode) != FileType::RegularFile
                    || Stamp::of(&now) != stamp
                {
                    return Err(changed());
                }
                let mut file = std::fs::File::from(fd);
                let id = match self.objects.write_file(&mut file, stamp.len, self.deadline) {
                    Ok(id) => id,
                    Err(ObjectError::Changed) => return Err(changed()),
                    Err(ObjectError::OutOfTime) => return Err(self.out_of_time()),
                    Err(ObjectError::Io(err)) => return Err(self.store_error(err)),
                };
                cache.put(path, stamp, id, read_at);
                Ok(TreeEntry {
                    name: name.into_vec(),
                    mode,
                    id,
                })
            }
        }
    }

    fn write_tree(&self, entries: &mut [TreeEntry]) -> Result<Oid, StageFailure> {
        self.objects
            .write_tree(entries)
            .map_err(|err| self.store_error(err))
    }

    fn store_error(&self, err: std::io::Error) -> StageFailure {
        StageFailure::Failed(WorkspaceError::io(
            "write an object into the shadow repository beside",
            self.root,
            err,
        ))
    }

    fn in_time(&self) -> Result<(), StageFailure> {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(self.out_of_time());
        }
        Ok(())
    }

    fn out_of_time(&self) -> StageFailure {
        StageFailure::Failed(WorkspaceError::OutOfTime {
            doing: "staging the workspace".to_owned(),
        })
    }
}

/// A relative path as a message shows it.
fn shown(rel: &Path) -> String {
    rel.to_string_lossy().replace('\\', "/")
}
