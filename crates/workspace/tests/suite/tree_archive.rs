//! A starting tree packed with `pack_tree` comes back whole through `unpack_archive`: files with
//! their bytes and modes, folders, links as links; `.git` left out; a tree over the cap refused. A
//! repository packed for an upload holds what a copy would, without links.

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use std::path::{Path, PathBuf};

use plumb_workspace::{
    PackedSource, SourceTreeError, intake, pack_source, pack_tree, unpack_archive,
};

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

#[test]
fn a_repository_packed_for_upload_is_what_a_copy_holds_and_the_server_intake_takes_it() {
    let tmp = TempDir::new().unwrap();
    let source = plain_source(tmp.path());
    write(&source, ".gitignore", "build/\n");
    write(&source, "build/out.o", "object\n");
    write(&source, ".plumbignore", "answers.txt\n");
    write(&source, "answers.txt", "the answer\n");
    write(&source, ".git/HEAD", "ref: refs/heads/main\n");
    link(&source, "docs/link.py", "../a.py");
    let before = listing(&source);

    // The server's own intake (regular files and folders only) unpacks it.
    let (packed, root) = upload_round_trip(tmp.path(), &source);

    assert_eq!(packed.links_left_out, vec!["docs/link.py".to_owned()]);
    assert_eq!(listing(&source), before, "packing changed the source");
    assert_eq!(
        root,
        tmp.path().join("back").join(plumb_workspace::UPLOAD_TOP)
    );
    assert!(root.join("a.py").is_file());
    for left_out in ["build/out.o", "answers.txt", ".git/HEAD", "docs/link.py"] {
        assert!(
            std::fs::symlink_metadata(root.join(left_out)).is_err(),
            "{left_out} was uploaded"
        );
    }
}

#[test]
fn a_repository_that_is_one_folder_keeps_its_level_through_the_intake() {
    let tmp = TempDir::new().unwrap();
    let source = tmp.path().join("only-src");
    write(&source, "src/lib.py", "X = 1\n");
    let (_, root) = upload_round_trip(tmp.path(), &source);
    assert!(root.join("src/lib.py").is_file(), "{root:?}");
}

/// Packs `source` for an upload (scratch and archive under `tmp`) and unpacks it with the server's
/// own intake into `tmp/back`; what `pack_source` reported, and the project's top.
fn upload_round_trip(tmp: &Path, source: &Path) -> (PackedSource, PathBuf) {
    let scratch = tmp.join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let archive = tmp.join("upload.tar.gz");
    let packed = pack_source(
        source,
        &scratch,
        &archive,
        &plumb_workspace::CopyLimits::default(),
    )
    .unwrap();
    let summary = intake::unpack_archive(
        std::fs::File::open(&archive).unwrap(),
        intake::ArchiveKind::TarGz,
        &tmp.join("back"),
        &intake::ArchiveCaps::default(),
    )
    .unwrap();
    (packed, summary.root)
}
