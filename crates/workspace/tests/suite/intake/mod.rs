//! The intake for `plumb serve`: archive uploads unpacked under caps, git URLs under the policy,
//! and real clones from a local https server.

mod archive;
mod bombs;
mod clone;
mod server;
mod url;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use plumb_workspace::sha256_hex;

/// Every entry under `dir`: files as `mode sha256`, links as `-> target`, folders as `/`. The
/// `.git` of a clone is left out.
pub fn tree(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            if rel == ".git" {
                continue;
            }
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).unwrap();
                out.insert(rel, format!("-> {}", target.display()));
            } else if meta.is_dir() {
                out.insert(format!("{rel}/"), "/".to_owned());
                folders.push(path);
            } else {
                let mode = meta.permissions().mode() & 0o777;
                let hash = sha256_hex(&fs::read(&path).unwrap());
                out.insert(rel, format!("{mode:o} {hash}"));
            }
        }
    }
    out
}

/// The `tree` entry of a file with `content` and `mode`.
pub fn file_entry(mode: u32, content: &[u8]) -> String {
    format!("{mode:o} {}", sha256_hex(content))
}

/// Bytes no compressor shrinks, from a fixed seed (xorshift).
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect()
}
