//! The scoring tree: a fresh copy of the base tree, and putting the test patch's files back to
//! their base state before the test patch goes on (SWE-bench's eval script runs `git checkout
//! <base> <files the test patch modifies>` and `rm -f <files it creates>`, so an agent's edits
//! to those test files never reach the scoring run).
//!
//! Nothing here is ever written through a link: the copy is made into a folder this module
//! creates, each file created new (`O_EXCL`), links copied as links and never followed (sources
//! opened with `O_NOFOLLOW`); when a file is put back, every folder on its way that is not a real
//! folder (a link the agent's patch put there, a file) is replaced by one first. Special files
//! (sockets, fifos, devices) are left out.

use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt, symlink};
use std::path::{Component, Path, PathBuf};

use super::files::PatchFile;

/// Copies `from` (a folder) to `to`, which must not exist yet.
pub(crate) fn copy(from: &Path, to: &Path) -> Result<(), String> {
    let kind = from
        .symlink_metadata()
        .map_err(|err| describe("read the base tree", from, &err))?;
    if !kind.is_dir() {
        return Err(format!(
            "the base tree {} is not a folder; the environment must hand the scorer a folder",
            from.display()
        ));
    }
    fs::create_dir(to).map_err(|err| describe("create", to, &err))?;
    copy_folder(from, to)
}

fn copy_folder(from: &Path, to: &Path) -> Result<(), String> {
    let entries = fs::read_dir(from).map_err(|err| describe("list", from, &err))?;
    for entry in entries {
        let entry = entry.map_err(|err| describe("list", from, &err))?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(|err| describe("read", &source, &err))?;
        if kind.is_dir() {
            fs::create_dir(&target).map_err(|err| describe("create", &target, &err))?;
            copy_folder(&source, &target)?;
            let mode = source
                .symlink_metadata()
                .map_err(|err| describe("read", &source, &err))?
                .permissions();
            fs::set_permissions(&target, mode).map_err(|err| describe("set", &target, &err))?;
        } else if kind.is_symlink() {
            copy_link(&source, &target)?;
        } else if kind.is_file() {
            copy_file(&source, &target)?;
        }
    }
    Ok(())
}

fn copy_link(source: &Path, target: &Path) -> Result<(), String> {
    let points_to = fs::read_link(source).map_err(|err| describe("read", source, &err))?;
    symlink(points_to, target).map_err(|err| describe("create", target, &err))
}

/// A regular file, its permission bits kept; `target` must not exist.
fn copy_file(source: &Path, target: &Path) -> Result<(), String> {
    let mut input = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(source)
        .map_err(|err| describe("open", source, &err))?;
    let metadata = input
        .metadata()
        .map_err(|err| describe("read", source, &err))?;
    if !metadata.is_file() {
        return Ok(());
    }
    let mut output = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(target)
        .map_err(|err| describe("create", target, &err))?;
    io::copy(&mut input, &mut output).map_err(|err| describe("copy", source, &err))?;
    let mode = metadata.permissions().mode() & 0o7777;
    output
        .set_permissions(fs::Permissions::from_mode(mode))
        .map_err(|err| describe("set", target, &err))
}

/// Puts each file the test patch touches back as it is in `base` (or removes it from `tree` when
/// the test patch creates it), so the test patch applies to the base version of its files.
pub(crate) fn reset_test_files(
    files: &[PatchFile],
    base: &Path,
    tree: &Path,
) -> Result<(), String> {
    for file in files {
        match (&file.source, &file.target) {
            (Some(source), _) => restore(source, base, tree)?,
            (None, Some(target)) => {
                if let Some(relative) = inside(target) {
                    remove_leaf(tree, &relative)?;
                }
            }
            (None, None) => {}
        }
    }
    Ok(())
}

/// `path` as it is in `base`, written to `tree` (removed there when `base` has no such file).
fn restore(path: &str, base: &Path, tree: &Path) -> Result<(), String> {
    // A path that leaves the tree is the test patch's mistake; `git apply` refuses it later.
    let Some(relative) = inside(path) else {
        return Ok(());
    };
    let from = base.join(&relative);
    let in_base = real_folders_to(base, &relative) && from.symlink_metadata().is_ok();
    remove_leaf(tree, &relative)?;
    if !in_base {
        return Ok(());
    }
    let to = make_folders_to(tree, &relative)?;
    let kind = from
        .symlink_metadata()
        .map_err(|err| describe("read", &from, &err))?;
    if kind.is_symlink() {
        copy_link(&from, &to)
    } else if kind.is_file() {
        copy_file(&from, &to)
    } else {
        Ok(())
    }
}

/// The path's folders, each of them created as a real folder in `root` (a link or a file in
/// the way is removed first); returns the full path of the leaf.
fn make_folders_to(root: &Path, relative: &Path) -> Result<PathBuf, String> {
    let mut at = root.to_path_buf();
    let parts: Vec<Component> = relative.components().collect();
    let (leaf, folders) = parts
        .split_last()
        .ok_or_else(|| format!("an empty path in the test patch under {}", root.display()))?;
    for part in folders {
        at.push(part);
        match at.symlink_metadata() {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => fs::remove_file(&at).map_err(|err| describe("remove", &at, &err))?,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(describe("read", &at, &err)),
        }
        fs::create_dir(&at).map_err(|err| describe("create", &at, &err))?;
    }
    at.push(leaf);
    Ok(at)
}

/// Removes the leaf of `relative` from `root` (a file, a link, or a whole folder), if it is there
/// below real folders only; a link on the way means the leaf is not in the tree at all.
fn remove_leaf(root: &Path, relative: &Path) -> Result<(), String> {
    if !real_folders_to(root, relative) {
        return Ok(());
    }
    let at = root.join(relative);
    match at.symlink_metadata() {
        // `remove_dir_all` does not follow links inside the folder.
        Ok(meta) if meta.is_dir() => {
            fs::remove_dir_all(&at).map_err(|err| describe("remove", &at, &err))
        }
        Ok(_) => fs::remove_file(&at).map_err(|err| describe("remove", &at, &err)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(describe("read", &at, &err)),
    }
}

/// Every folder on the way to the leaf of `relative` is a real folder in `root`.
fn real_folders_to(root: &Path, relative: &Path) -> bool {
    let mut at = root.to_path_buf();
    let parts: Vec<Component> = relative.components().collect();
    let Some((_, folders)) = parts.split_last() else {
        return false;
    };
    folders.iter().all(|part| {
        at.push(part);
        at.symlink_metadata().is_ok_and(|meta| meta.is_dir())
    })
}

/// A patch path as a path below the tree: relative, no `..`, no `.git`; `None` otherwise.
fn inside(path: &str) -> Option<PathBuf> {
    let relative = Path::new(path);
    let plain = relative.components().all(|part| match part {
        Component::Normal(name) => name != ".git",
        _ => false,
    });
    (plain && relative.components().next().is_some()).then(|| relative.to_path_buf())
}

fn describe(action: &str, path: &Path, err: &io::Error) -> String {
    format!("could not {action} {}: {err}", path.display())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use pretty_assertions::assert_eq;

    use super::*;

    /// Every entry below `root`: `path → "file:<text>:<mode>" | "link:<target>" | "dir"`.
    fn listing(root: &Path) -> BTreeMap<String, String> {
        let mut found = BTreeMap::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(folder) = stack.pop() {
            for entry in fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                let name = path.strip_prefix(root).unwrap().display().to_string();
                let meta = path.symlink_metadata().unwrap();
                let value = if meta.is_symlink() {
                    format!("link:{}", fs::read_link(&path).unwrap().display())
                } else if meta.is_dir() {
                    stack.push(path.clone());
                    "dir".to_owned()
                } else {
                    let text = fs::read_to_string(&path).unwrap();
                    format!("file:{text}:{:o}", meta.permissions().mode() & 0o777)
                };
                found.insert(name, value);
            }
        }
        found
    }

    fn entries(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(path, value)| ((*path).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn the_copy_keeps_files_modes_and_links_as_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("base");
        fs::create_dir_all(base.join("src")).unwrap();
        fs::write(base.join("src/a.py"), "a").unwrap();
        fs::write(base.join("run.sh"), "#!/bin/sh").unwrap();
        fs::set_permissions(base.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        symlink("src/a.py", base.join("alias.py")).unwrap();
        symlink("/etc/passwd", base.join("outside")).unwrap();
        let tree = dir.path().join("tree");

        copy(&base, &tree).unwrap();
        let actual = listing(&tree);

        let expected = entries(&[
            ("alias.py", "link:src/a.py"),
            ("outside", "link:/etc/passwd"),
            ("run.sh", "file:#!/bin/sh:755"),
            ("src", "dir"),
            ("src/a.py", "file:a:644"),
        ]);
        assert_eq!(actual, expected);
    }

    /// The agent edited a test file, created one the test patch creates, and replaced the
    /// tests folder's parent link target: each goes back to the base state, and the host file
    /// a link points at is never written.
    #[test]
    fn test_files_go_back_to_their_base_state_without_writing_through_links() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("base");
        fs::create_dir_all(base.join("tests")).unwrap();
        fs::write(base.join("tests/test_x.py"), "base x").unwrap();
        fs::write(base.join("tests/test_y.py"), "base y").unwrap();
        let outside = dir.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("test_y.py"), "host file").unwrap();
        let tree = dir.path().join("tree");
        copy(&base, &tree).unwrap();
        fs::write(tree.join("tests/test_x.py"), "agent x").unwrap();
        fs::write(tree.join("tests/test_new.py"), "agent new").unwrap();
        // The agent's patch turned `more` into a link to a host folder.
        symlink(&outside, tree.join("more")).unwrap();
        fs::create_dir_all(base.join("more")).unwrap();
        fs::write(base.join("more/test_y.py"), "base more y").unwrap();
        let files = [
            PatchFile {
                source: Some("tests/test_x.py".to_owned()),
                target: Some("tests/test_x.py".to_owned()),
            },
            PatchFile {
                source: None,
                target: Some("tests/test_new.py".to_owned()),
            },
            PatchFile {
                source: Some("more/test_y.py".to_owned()),
                target: Some("more/test_y.py".to_owned()),
            },
            PatchFile {
                source: Some("../escape.py".to_owned()),
                target: Some("../escape.py".to_owned()),
            },
        ];

        reset_test_files(&files, &base, &tree).unwrap();
        let actual = (listing(&tree), listing(&outside));

        let expected = (
            entries(&[
                ("more", "dir"),
                ("more/test_y.py", "file:base more y:644"),
                ("tests", "dir"),
                ("tests/test_x.py", "file:base x:644"),
                ("tests/test_y.py", "file:base y:644"),
            ]),
            entries(&[("test_y.py", "file:host file:644")]),
        );
        assert_eq!(actual, expected);
    }
}
