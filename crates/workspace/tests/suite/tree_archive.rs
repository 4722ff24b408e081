//! A starting tree packed with `pack_tree` comes back whole through `unpack_archive`: files with
//! their bytes and modes, folders, links as links; `.git` left out; a tree over the cap refused.

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use plumb_workspace::{SourceTreeError, pack_tree, unpack_archive};

use super::{link, listing, make_executable, plain_source, write};

#[test]
fn a_packed_tree_unpacks_to_the_same_tree_without_git() {
    let tmp = TempDir::new().unwrap();
    let source = plain_source(tmp.path());
    write(&source, "bin/run.sh", "#!/bin/sh\n");
    make_executable(&source, "bin/run.sh");
    link(&source, "docs/link.py", "../a.py");
    write(&source, ".git/HEAD", "ref: refs/heads/main\n");
    write(&source, "pkg/.git/config", "[core]\n");
    let archive = tmp.path().join("tree.tar.gz");
    let packed = pack_tree(&source, &archive, 1 << 20).unwrap();
    assert!(packed > 0);
    let back = tmp.path().join("back");
    unpack_archive(&archive, &back, 1 << 20).unwrap();
    // `listing` leaves `.git` out of both sides; the unpacked tree must not have one at all.
    assert_eq!(listing(&back), listing(&source));
    assert!(!back.join(".git").exists() && !back.join("pkg/.git").exists());
    assert_eq!(
        std::fs::read_link(back.join("docs/link.py")).unwrap(),
        std::path::Path::new("../a.py")
    );

    let refused = pack_tree(&source, &tmp.path().join("small.tar.gz"), 10).unwrap_err();
    assert!(matches!(refused, SourceTreeError::BadInput(_)), "{refused}");
}
