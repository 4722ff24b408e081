//! What staging learnt about the files it hashed, so an unchanged file costs one `lstat` next
//! time instead of a read (git's index does the same for `git add`).
//!
//! A file's blob id is reused while its `lstat` is the one it had when it was hashed: device,
//! inode, length, modification and change times. The change time (`ctime`) is the part nothing
//! but the kernel sets: any write, rename, `chmod` or `touch` moves it to the time of that change.
//! A file is remembered only if its change time was already [`SETTLED`] before it was read, so a
//! later change cannot land within the same clock tick as the remembered time and go unnoticed
//! (git's "racily clean" entries, avoided the same way). A file written just before a checkpoint is
//! read again at the next one, and remembered then.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::objects::Oid;

/// How long before it was read a file must have last changed to be remembered.
const SETTLED: Duration = Duration::from_secs(2);

/// A file's `lstat`, as far as telling a change goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) len: u64,
    pub(crate) mtime: (i64, i64),
    pub(crate) ctime: (i64, i64),
}

impl Stamp {
    pub(crate) fn of(stat: &rustix::fs::Stat) -> Stamp {
        Stamp {
            dev: stat.st_dev,
            ino: stat.st_ino,
            len: u64::try_from(stat.st_size).unwrap_or(u64::MAX),
            #[allow(clippy::unnecessary_cast)] // the field types differ between targets
            mtime: (stat.st_mtime as i64, stat.st_mtime_nsec as i64),
            #[allow(clippy::unnecessary_cast)]
            ctime: (stat.st_ctime as i64, stat.st_ctime_nsec as i64),
        }
    }
}

/// Blob ids by path (relative to the copy, as bytes), while the stamp holds.
#[derive(Debug, Default)]
pub(crate) struct StatCache {
    known: HashMap<Vec<u8>, (Stamp, Oid)>,
}

impl StatCache {
    /// The blob id of `path` when it was hashed with this very stamp.
    pub(crate) fn get(&self, path: &[u8], stamp: &Stamp) -> Option<Oid> {
        self.known
            .get(path)
            .filter(|(known, _)| known == stamp)
            .map(|(_, id)| *id)
    }

    /// Remembers `id` for `path`, hashed with `stamp` after `read_at`, if it had settled by then.
    pub(crate) fn put(&mut self, path: Vec<u8>, stamp: Stamp, id: Oid, read_at: SystemTime) {
        let settled = read_at
            .checked_sub(SETTLED)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .is_some_and(|limit| {
                let (secs, nanos) = stamp.ctime;
                let limit = (
                    i64::try_from(limit.as_secs()).unwrap_or(i64::MAX),
                    i64::from(limit.subsec_nanos()),
                );
                (secs, nanos) < limit
            });
        if settled {
            self.known.insert(path, (stamp, id));
        } else {
            self.known.remove(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn stamp(ctime_secs: i64) -> Stamp {
        Stamp {
            dev: 1,
            ino: 2,
            len: 3,
            mtime: (ctime_secs, 0),
            ctime: (ctime_secs, 0),
        }
    }

    #[test]
    fn only_a_settled_file_is_remembered_and_only_while_its_stamp_holds() {
        let now = SystemTime::now();
        let secs = i64::try_from(now.duration_since(UNIX_EPOCH).unwrap().as_secs()).unwrap();
        let mut cache = StatCache::default();
        cache.put(b"old".to_vec(), stamp(secs - 10), [1; 20], now);
        cache.put(b"fresh".to_vec(), stamp(secs), [2; 20], now);

        let actual = (
            cache.get(b"old", &stamp(secs - 10)),
            cache.get(b"old", &stamp(secs - 9)),
            cache.get(b"fresh", &stamp(secs)),
        );

        assert_eq!(actual, (Some([1; 20]), None, None));
    }
}
