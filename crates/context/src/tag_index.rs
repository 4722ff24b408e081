//! The tags of every source file of a tree, parsed in parallel and kept in a cache keyed by each
//! file's content hash, so a second build re-parses only the files that changed.
//!
//! The walk is the repo map's (ignore files honoured, hidden files and links skipped, names
//! sorted); files are read through the confined reader only. A file whose size and modification
//! time are what the cache recorded is taken from the cache without being read; any other file is
//! read and hashed (SHA-256), and parsed only when no cached file has that hash (a file moved or
//! copied is not parsed again). A file modified within [`RACY_NANOS`] before the cache was written
//! is always hashed: its size and time could hide a second edit in the same tick (git's "racy
//! clean" problem).
//!
//! The cache is bytes in and bytes out ([`TagCache::from_bytes`], [`TagCache::to_bytes`]): where it
//! lives is the caller's choice, always outside the tree (a repository must not be able to hand plumb
//! tags its files do not have). Bytes that do not parse, or of another cache version, give an empty
//! cache. The bytes are `postcard` (compact binary, serde) behind a magic line, with each tag's
//! role kept once in a table: on SymPy a warm build read 25 MB of JSON before, most of its time.
//! A cached file's tags are shared (`Arc`) between the cache and the index, never copied.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use plumb_workspace::Tree;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::pool;
use crate::repo_map::{self, FileEntry};
use crate::syntax::Language;
use crate::tags::{self, Tag, TagKind};

/// Bumped whenever the tags a query finds, or the format, change: an older cache is then ignored.
const CACHE_VERSION: u32 = 2;
/// The first bytes of a cache file.
const MAGIC: &[u8] = b"plumb tag cache\n";
/// How close before the cache's writing a modification must be to be re-checked by hash.
pub const RACY_NANOS: u64 = 2_000_000_000;
const MAX_THREADS: usize = 8;

/// One file of the tree: its path relative to the root (`/`-separated) and its tags (none for a
/// file in a language we do not parse).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedFile {
    pub path: String,
    pub language: Option<Language>,
    /// Shared with the cache's entry for the file.
    pub tags: Arc<Vec<Tag>>,
}

/// How a build went: what it had to parse and what the cache saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct IndexStats {
    /// Files in the tree (every file the walk found).
    pub files: usize,
    /// Source files parsed in this build.
    pub parsed: usize,
    /// Source files read and hashed (changed, new, or not trusted by time).
    pub hashed: usize,
    /// Source files whose tags came from the cache.
    pub cached: usize,
}

/// Every file of a tree with its tags, in path order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TagIndex {
    pub files: Vec<IndexedFile>,
    pub stats: IndexStats,
}

/// The cache: per path, what the file was and its tags.
#[derive(Debug, Clone, Default)]
pub struct TagCache {
    version: u32,
    /// When the cache was last brought up to date (nanoseconds since the Unix epoch).
    written_ns: u64,
    entries: HashMap<String, CacheEntry>,
    changed: bool,
}

#[derive(Debug, Clone)]
struct CacheEntry {
    size: u64,
    modified_ns: u64,
    sha256: [u8; 32],
    tags: Arc<Vec<Tag>>,
}

/// The cache as it is written: entries in path order, each tag's role an index into `roles`.
#[derive(Serialize, Deserialize)]
struct Stored<'a> {
    version: u32,
    written_ns: u64,
    #[serde(borrow)]
    roles: Vec<Cow<'a, str>>,
    #[serde(borrow)]
    entries: Vec<StoredEntry<'a>>,
}

#[derive(Serialize, Deserialize)]
struct StoredEntry<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
    size: u64,
    modified_ns: u64,
    sha256: [u8; 32],
    #[serde(borrow)]
    tags: Vec<StoredTag<'a>>,
}

#[derive(Serialize, Deserialize)]
struct StoredTag<'a> {
    line: u32,
    definition: bool,
    role: u32,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    text: Cow<'a, str>,
}

impl TagCache {
    /// A cache from bytes [`TagCache::to_bytes`] wrote; empty when they are not such bytes.
    pub fn from_bytes(bytes: &[u8]) -> TagCache {
        let Some(body) = bytes.strip_prefix(MAGIC) else {
            return TagCache::default();
        };
        match postcard::from_bytes::<Stored>(body) {
            Ok(stored) if stored.version == CACHE_VERSION => {
                TagCache::from_stored(stored).unwrap_or_default()
            }
            _ => TagCache::default(),
        }
    }

    /// `None` when a tag names a role the table does not have.
    fn from_stored(stored: Stored) -> Option<TagCache> {
        let roles: Vec<String> = stored.roles.into_iter().map(Cow::into_owned).collect();
        let mut entries = HashMap::with_capacity(stored.entries.len());
        for entry in stored.entries {
            let tags = entry
                .tags
                .into_iter()
                .map(|tag| {
                    Some(Tag {
                        line: usize::try_from(tag.line).ok()?,
                        kind: if tag.definition {
                            TagKind::Definition
                        } else {
                            TagKind::Reference
                        },
                        role: roles.get(usize::try_from(tag.role).ok()?)?.clone(),
                        name: tag.name.into_owned(),
                        text: tag.text.into_owned(),
                    })
                })
                .collect::<Option<Vec<Tag>>>()?;
            entries.insert(
                entry.path.into_owned(),
                CacheEntry {
                    size: entry.size,
                    modified_ns: entry.modified_ns,
                    sha256: entry.sha256,
                    tags: Arc::new(tags),
                },
            );
        }
        Some(TagCache {
            version: stored.version,
            written_ns: stored.written_ns,
            entries,
            changed: false,
        })
    }

    /// The bytes to keep for the next build.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut roles: Vec<Cow<str>> = Vec::new();
        let mut role_ids: HashMap<&str, u32> = HashMap::new();
        let mut paths: Vec<&String> = self.entries.keys().collect();
        paths.sort();
        let mut entries = Vec::with_capacity(paths.len());
        for path in paths {
            let Some(entry) = self.entries.get(path) else {
                continue;
            };
            let tags = entry
                .tags
                .iter()
                .map(|tag| {
                    let role = *role_ids.entry(tag.role.as_str()).or_insert_with(|| {
                        roles.push(Cow::Borrowed(tag.role.as_str()));
                        u32::try_from(roles.len() - 1).unwrap_or(u32::MAX)
                    });
                    StoredTag {
                        line: u32::try_from(tag.line).unwrap_or(u32::MAX),
                        definition: tag.kind == TagKind::Definition,
                        role,
                        name: Cow::Borrowed(tag.name.as_str()),
                        text: Cow::Borrowed(tag.text.as_str()),
                    }
                })
                .collect();
            entries.push(StoredEntry {
                path: Cow::Borrowed(path.as_str()),
                size: entry.size,
                modified_ns: entry.modified_ns,
                sha256: entry.sha256,
                tags,
            });
        }
        let stored = Stored {
            version: self.version,
            written_ns: self.written_ns,
            roles,
            entries,
        };
        // On a failure nothing is kept: the next build parses again, which is slow but right.
        postcard::to_extend(&stored, MAGIC.to_vec()).unwrap_or_default()
    }

    /// Whether the last build changed anything worth writing back.
    pub fn changed(&self) -> bool {
        self.changed
    }
}

/// The name of the cache file of the tree at `root` (a canonical path): its SHA-256, so trees in
/// different places never share one and the name says nothing about the path.
pub fn cache_file_name(root: &Path) -> String {
    format!(
        "{:x}.tags",
        Sha256::digest(root.as_os_str().as_encoded_bytes())
    )
}

/// What a source file looked like on disk when it was walked.
struct Seen {
    size: u64,
    modified_ns: u64,
}

/// Indexes every file of `tree`, using and updating `cache`.
pub fn build(tree: &Tree, cache: &mut TagCache) -> TagIndex {
    let root = tree.root();
    let walked = repo_map::walk(root, root);
    let trusted_before = cache.written_ns.saturating_sub(RACY_NANOS);

    let mut stats = IndexStats {
        files: walked.len(),
        ..IndexStats::default()
    };
    let mut files = Vec::with_capacity(walked.len());
    let mut entries = HashMap::with_capacity(walked.len());
    let mut to_read: Vec<(usize, &FileEntry, Language, Seen)> = Vec::new();
    // Old entries not taken as they are: their tags may still serve a file with the same content.
    let mut stale: Vec<CacheEntry> = Vec::new();
    for file in &walked {
        let path = slash_path(&file.rel);
        let language = Language::from_path(&file.rel).filter(|_| file.is_file);
        let index = files.len();
        files.push(IndexedFile {
            path: path.clone(),
            language,
            tags: Arc::default(),
        });
        let Some(language) = language else {
            continue;
        };
        let Some(seen) = seen(&file.path) else {
            continue;
        };
        match cache.entries.remove(&path) {
            Some(entry)
                if entry.size == seen.size
                    && entry.modified_ns == seen.modified_ns
                    && entry.modified_ns < trusted_before =>
            {
                stats.cached += 1;
                if let Some(slot) = files.get_mut(index) {
                    slot.tags = Arc::clone(&entry.tags);
                }
                entries.insert(path, entry);
            }
            other => {
                stale.extend(other);
                to_read.push((index, file, language, seen));
            }
        }
    }
    // Whatever is left in the old entries is a file that is gone.
    let gone = !cache.entries.is_empty();
    stale.extend(cache.entries.drain().map(|(_, entry)| entry));

    let read = if to_read.is_empty() {
        Vec::new()
    } else {
        // Built only when some file must be read: a warm build with nothing changed skips it.
        let by_hash: HashMap<[u8; 32], &Arc<Vec<Tag>>> = entries
            .values()
            .chain(&stale)
            .map(|entry: &CacheEntry| (entry.sha256, &entry.tags))
            .collect();
        read_all(tree, &to_read, &by_hash)
    };
    for ((index, _, _, seen), outcome) in to_read.iter().zip(read) {
        let Some((sha256, tags, parsed)) = outcome else {
            continue;
        };
        stats.hashed += 1;
        if parsed {
            stats.parsed += 1;
        } else {
            stats.cached += 1;
        }
        let Some(slot) = files.get_mut(*index) else {
            continue;
        };
        entries.insert(
            slot.path.clone(),
            CacheEntry {
                size: seen.size,
                modified_ns: seen.modified_ns,
                sha256,
                tags: Arc::clone(&tags),
            },
        );
        slot.tags = tags;
    }

    cache.changed = stats.hashed > 0 || gone || cache.version != CACHE_VERSION;
    cache.entries = entries;
    cache.version = CACHE_VERSION;
    if cache.changed {
        cache.written_ns = now_ns();
    }
    TagIndex { files, stats }
}

/// A file read: its SHA-256, its tags, and whether they had to be parsed.
type ReadFile = ([u8; 32], Arc<Vec<Tag>>, bool);

/// For each file to read: its hash, its tags, and whether they had to be parsed (`None` when the
/// file could not be read as text). Spread over the cores.
fn read_all(
    tree: &Tree,
    to_read: &[(usize, &FileEntry, Language, Seen)],
    by_hash: &HashMap<[u8; 32], &Arc<Vec<Tag>>>,
) -> Vec<Option<ReadFile>> {
    let one = |(_, file, language, _): &(usize, &FileEntry, Language, Seen)| {
        let source = repo_map::read_source(tree, &file.path)?;
        let sha256: [u8; 32] = Sha256::digest(source.as_bytes()).into();
        Some(match by_hash.get(&sha256) {
            Some(tags) => (sha256, Arc::clone(tags), false),
            None => {
                let tags = tags::tags(*language, &source);
                (sha256, Arc::new(tags), true)
            }
        })
    };
    pool::map_slice(to_read, pool::threads(MAX_THREADS), one)
        .into_iter()
        .map(Option::flatten)
        .collect()
}

/// Size and modification time of a walked file, without opening it.
fn seen(path: &Path) -> Option<Seen> {
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let modified_ns = meta
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some(Seen {
        size: meta.len(),
        modified_ns: u64::try_from(modified_ns).unwrap_or(u64::MAX),
    })
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn slash_path(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::tags::TagKind;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// Sets a file's modification time into the past, so the cache trusts it by time.
    fn age(root: &Path, rel: &str) {
        let file = fs::File::options()
            .write(true)
            .open(root.join(rel))
            .unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        file.set_modified(old).unwrap();
    }

    fn names(index: &TagIndex, path: &str, kind: TagKind) -> Vec<String> {
        index
            .files
            .iter()
            .find(|f| f.path == path)
            .map(|f| {
                f.tags
                    .iter()
                    .filter(|t| t.kind == kind)
                    .map(|t| t.name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn repository() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "billing/tax.py",
            "def apply_gst(x):\n    return x * rate()\n",
        );
        write(dir.path(), "billing/money.py", "class Money:\n    pass\n");
        write(dir.path(), "README.md", "# billing\n");
        for rel in ["billing/tax.py", "billing/money.py", "README.md"] {
            age(dir.path(), rel);
        }
        dir
    }

    #[test]
    fn a_first_build_parses_every_source_file_and_lists_the_rest() {
        let dir = repository();
        let tree = Tree::new(dir.path()).unwrap();
        let mut cache = TagCache::default();
        let index = build(&tree, &mut cache);
        let paths: Vec<&str> = index.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["README.md", "billing/money.py", "billing/tax.py"]);
        assert_eq!(
            index.stats,
            IndexStats {
                files: 3,
                parsed: 2,
                hashed: 2,
                cached: 0
            }
        );
        assert_eq!(
            names(&index, "billing/tax.py", TagKind::Definition),
            ["apply_gst"]
        );
        assert_eq!(
            names(&index, "billing/tax.py", TagKind::Reference),
            ["rate"]
        );
        assert!(cache.changed());
    }

    #[test]
    fn a_second_build_reads_only_what_changed_and_a_moved_file_is_not_parsed_again() {
        let dir = repository();
        let tree = Tree::new(dir.path()).unwrap();
        let first = build(&tree, &mut TagCache::default());
        let mut cache = TagCache::default();
        build(&tree, &mut cache);
        let mut cache = TagCache::from_bytes(&cache.to_bytes());

        let warm = build(&tree, &mut cache);
        assert_eq!(warm.files, first.files);
        assert_eq!(
            (warm.stats.parsed, warm.stats.hashed, warm.stats.cached),
            (0, 0, 2)
        );
        assert!(!cache.changed());

        write(
            dir.path(),
            "billing/tax.py",
            "def apply_vat(x):\n    return x\n",
        );
        age(dir.path(), "billing/tax.py");
        fs::rename(
            dir.path().join("billing/money.py"),
            dir.path().join("billing/cash.py"),
        )
        .unwrap();
        let changed = build(&tree, &mut cache);
        assert_eq!(
            names(&changed, "billing/tax.py", TagKind::Definition),
            ["apply_vat"]
        );
        assert_eq!(
            names(&changed, "billing/cash.py", TagKind::Definition),
            ["Money"]
        );
        // tax.py is parsed; cash.py is read and hashed but its tags come from money.py's entry.
        assert_eq!(
            (
                changed.stats.parsed,
                changed.stats.hashed,
                changed.stats.cached
            ),
            (1, 2, 1)
        );
        assert!(cache.changed());
        assert!(changed.files.iter().all(|f| f.path != "billing/money.py"));
    }

    #[test]
    fn a_file_changed_just_before_the_cache_was_written_is_checked_by_its_hash() {
        let dir = repository();
        write(dir.path(), "billing/tax.py", "def fresh():\n    pass\n");
        let tree = Tree::new(dir.path()).unwrap();
        let mut cache = TagCache::default();
        build(&tree, &mut cache);
        // Same size, same second: only the hash can tell.
        write(dir.path(), "billing/tax.py", "def fresk():\n    pass\n");
        let again = build(&tree, &mut cache);
        assert_eq!(
            names(&again, "billing/tax.py", TagKind::Definition),
            ["fresk"]
        );
    }

    #[test]
    fn bytes_that_are_not_a_cache_give_an_empty_one() {
        let other_version = postcard::to_extend(
            &Stored {
                version: 99,
                written_ns: 0,
                roles: Vec::new(),
                entries: Vec::new(),
            },
            MAGIC.to_vec(),
        )
        .unwrap();
        let mut cut = {
            let dir = repository();
            let tree = Tree::new(dir.path()).unwrap();
            let mut cache = TagCache::default();
            build(&tree, &mut cache);
            cache.to_bytes()
        };
        cut.truncate(cut.len() - 3);
        for bytes in [
            &b""[..],
            b"{",
            b"{\"version\": 1, \"written_ns\": 0, \"entries\": {}}",
            &other_version,
            &cut,
        ] {
            let cache = TagCache::from_bytes(bytes);
            assert!(cache.entries.is_empty());
        }
    }
}
