//! Folders of build and test output that no walk of the model's tools should enter: the repo map,
//! the tag index, "code up front" and `search_code`.
//!
//! A task's setup (`cargo test --no-run`, `npm install`, a first pytest run) writes such folders
//! into the workspace before the first request, and a repository without a `.gitignore` for them
//! — every HumanEvalPack task, many small projects — would otherwise show the model hundreds of
//! lines of `target/debug/deps/…` in place of its code. The shadow git already keeps them out of
//! the patch; this keeps them out of what the model reads.
//!
//! A folder is build output when it is named `node_modules` or `__pycache__`, or when it holds a
//! `CACHEDIR.TAG` file (the Cache Directory Tagging convention: Cargo writes one in every target
//! folder, wherever `CARGO_TARGET_DIR` puts it; so do several other build tools). A folder merely
//! named `target` or `build` is left alone: it may be source.

use std::path::Path;

/// Folder names that are never source.
const NAMES: [&str; 2] = ["node_modules", "__pycache__"];

/// The file whose presence marks a cache folder.
const CACHE_TAG: &str = "CACHEDIR.TAG";

/// True when `dir` (a folder, by its path) is build output the walks skip. The tag file is looked
/// up by `symlink_metadata`, never opened or followed.
pub fn is_build_output_dir(dir: &Path) -> bool {
    let named = dir
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| NAMES.contains(&name));
    named || dir.join(CACHE_TAG).symlink_metadata().is_ok()
}

/// For `ignore::WalkBuilder::filter_entry`: false for a build output folder (not descended into),
/// true for everything else.
pub fn keep_entry(entry: &ignore::DirEntry) -> bool {
    let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
    !(is_dir && entry.depth() > 0 && is_build_output_dir(entry.path()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn tagged_and_named_folders_are_build_output_and_a_plain_target_folder_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for dir in ["target", "out", "node_modules", "pkg/__pycache__", "src"] {
            fs::create_dir_all(root.join(dir)).unwrap();
        }
        fs::write(
            root.join("out/CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55",
        )
        .unwrap();

        let found: Vec<bool> = ["target", "out", "node_modules", "pkg/__pycache__", "src"]
            .iter()
            .map(|dir| is_build_output_dir(&root.join(dir)))
            .collect();

        assert_eq!(found, [false, true, true, true, false]);
    }

    #[test]
    fn a_walk_with_the_filter_lists_source_and_not_the_tagged_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::create_dir_all(root.join("target/debug")).unwrap();
        fs::write(root.join("src/lib.rs"), "fn a() {}\n").unwrap();
        fs::write(
            root.join("target/CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55",
        )
        .unwrap();
        fs::write(root.join("target/debug/out.d"), "src/lib.rs\n").unwrap();

        let mut files: Vec<String> = ignore::WalkBuilder::new(root)
            .require_git(false)
            .filter_entry(keep_entry)
            .build()
            .flatten()
            .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
            .map(|entry| {
                let rel = entry.path().strip_prefix(root).unwrap();
                rel.to_string_lossy().replace('\\', "/")
            })
            .collect();
        files.sort();

        assert_eq!(files, ["src/lib.rs"]);
    }
}
