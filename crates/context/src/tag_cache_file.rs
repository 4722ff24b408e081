//! The tag cache of one tree as a file of plumb's cache folder: `<cache home>/tags/<SHA-256 of the
//! tree's path>.tags`, shared by `plumb map` and the runs on the same repository (a run's
//! workspace is a copy, so its cache is named by the user's folder it was copied from).
//!
//! Never inside the repository: a repository must not be able to hand plumb tags its files do not
//! have. A file that cannot be read is an empty cache; one that cannot be written costs the next
//! build its parsing, nothing else. Writes go to a file beside the cache and are renamed over it,
//! so a reader (another run on the same repository) never sees half a cache. Each write also
//! removes the folder's caches not written for [`STALE_AFTER`]: one is kept per repository path,
//! and an eval over many checkouts would otherwise leave one per checkout for good.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::tag_index::{TagCache, cache_file_name};

/// A cache not written for this long is removed by the next write of another: a repository in
/// use is written whenever one of its files changes, and one that was not only costs a cold
/// build.
pub const STALE_AFTER: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// Where the tags of the tree at `root` (a canonical path) are kept under `cache_home`.
pub fn cache_path(cache_home: &Path, root: &Path) -> PathBuf {
    cache_home.join("tags").join(cache_file_name(root))
}

/// The cache at `path`; empty when there is none or it cannot be read.
// plumb's own file in its cache folder, never a workspace file: the confined reader is for those.
#[allow(clippy::disallowed_methods)]
pub fn load(path: &Path) -> TagCache {
    fs::read(path)
        .map(|bytes| TagCache::from_bytes(&bytes))
        .unwrap_or_default()
}

/// Keeps `cache` at `path` when a build changed it.
pub fn keep(path: &Path, cache: &TagCache) -> io::Result<()> {
    if !cache.changed() {
        return Ok(());
    }
    write_atomically(path, &cache.to_bytes())?;
    if let Some(dir) = path.parent() {
        remove_stale(dir, SystemTime::now());
    }
    Ok(())
}

/// Removes the caches in `dir` last written more than [`STALE_AFTER`] before `now`: only files
/// named as [`cache_path`] names them (a SHA-256 in hex, `.tags`), whatever else is there.
/// Best effort: a cache that cannot be removed stays.
fn remove_stale(dir: &Path, now: SystemTime) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_cache = name.to_str().is_some_and(|name| {
            name.strip_suffix(".tags")
                .is_some_and(|hash| hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        });
        let stale = entry
            .metadata()
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|written| now.duration_since(written).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if is_cache && stale && entry.file_type().is_ok_and(|kind| kind.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Writes `bytes` to a file beside `path`, then renames it over `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = PathBuf::from(temporary);
    fs::write(&temporary, bytes)?;
    fs::rename(&temporary, path).inspect_err(|_| {
        let _ = fs::remove_file(&temporary);
    })
}

#[cfg(test)]
mod tests {
    use plumb_workspace::Tree;

    use super::*;
    use crate::tag_index;

    /// A repository of one Python module.
    fn one_module() -> tempfile::TempDir {
        let repo = tempfile::tempdir().unwrap();
        fs::write(
            repo.path().join("tax.py"),
            "def apply_gst(amount):\n    return amount\n",
        )
        .unwrap();
        repo
    }

    #[test]
    fn a_kept_cache_spares_the_next_build_its_parsing() {
        let home = tempfile::tempdir().unwrap();
        let repo = one_module();
        let tree = Tree::new(repo.path()).unwrap();
        let path = cache_path(home.path(), tree.root());
        assert!(path.starts_with(home.path().join("tags")));

        let mut cache = load(&path);
        let first = tag_index::build(&tree, &mut cache);
        assert_eq!((first.stats.parsed, first.stats.cached), (1, 0));
        keep(&path, &cache).unwrap();

        let mut cache = load(&path);
        let second = tag_index::build(&tree, &mut cache);
        assert_eq!((second.stats.parsed, second.stats.cached), (0, 1));
        assert_eq!(second.files, first.files);
    }

    #[test]
    fn a_foreign_file_is_an_empty_cache_and_an_unchanged_cache_is_not_written() {
        let home = tempfile::tempdir().unwrap();
        let path = cache_path(home.path(), Path::new("/some/repo"));
        keep(&path, &TagCache::default()).unwrap();
        assert!(!path.exists(), "an unchanged cache is not written");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, b"not a cache").unwrap();
        let repo = one_module();
        let index = tag_index::build(&Tree::new(repo.path()).unwrap(), &mut load(&path));
        assert_eq!(index.stats.parsed, 1);
    }

    #[test]
    fn a_write_removes_the_caches_not_written_for_a_month_and_nothing_else() {
        let home = tempfile::tempdir().unwrap();
        let old = cache_path(home.path(), Path::new("/gone/checkout"));
        let recent = cache_path(home.path(), Path::new("/in/use"));
        let dir = old.parent().unwrap().to_path_buf();
        fs::create_dir_all(&dir).unwrap();
        let other = dir.join("notes.txt");
        for path in [&old, &recent, &other] {
            fs::write(path, b"x").unwrap();
        }
        let long_ago = SystemTime::now() - STALE_AFTER - Duration::from_secs(3600);
        for path in [&old, &other] {
            fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }

        let repo = one_module();
        let tree = Tree::new(repo.path()).unwrap();
        let path = cache_path(home.path(), tree.root());
        let mut cache = load(&path);
        tag_index::build(&tree, &mut cache);
        keep(&path, &cache).unwrap();

        assert!(path.exists());
        assert!(!old.exists(), "a month-old cache is removed");
        assert!(recent.exists(), "a recent one stays");
        assert!(
            other.exists(),
            "a file that is not a cache stays, however old"
        );
    }
}
