//! Archive uploads: good archives of each kind unpack byte-exactly, hostile entries are refused
//! by name, and a refusal leaves nothing behind. Archives are built here, hostile ones by writing
//! header fields the archive libraries would not write.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Cursor, Write};
use std::path::Path;

use plumb_workspace::intake::{
    ArchiveCaps, ArchiveKind, IntakeError, UnpackSummary, unpack_archive,
};
use pretty_assertions::assert_eq;
use zip::write::SimpleFileOptions;

use super::{file_entry, tree};

/// One entry of a zip built by [`zip_of`].
pub enum Z<'a> {
    File(&'a str, &'a [u8], u32),
    Dir(&'a str),
    Link(&'a str, &'a str),
}

pub fn zip_of(entries: &[Z<'_>]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for entry in entries {
        match entry {
            Z::File(name, content, mode) => {
                let options = SimpleFileOptions::default()
                    .compression_method(zip::CompressionMethod::Deflated)
                    .unix_permissions(*mode);
                zip.start_file(*name, options).unwrap();
                zip.write_all(content).unwrap();
            }
            Z::Dir(name) => zip
                .add_directory(*name, SimpleFileOptions::default())
                .unwrap(),
            Z::Link(name, target) => zip
                .add_symlink(*name, *target, SimpleFileOptions::default())
                .unwrap(),
        }
    }
    zip.finish().unwrap().into_inner()
}

/// Calls `patch` on every central directory header of `zip` (where the made-by system and the
/// external attributes are).
pub fn patch_central(zip: &mut [u8], patch: impl Fn(&mut [u8])) {
    let starts: Vec<usize> = zip
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"PK\x01\x02")
        .map(|(at, _)| at)
        .collect();
    for at in starts {
        patch(&mut zip[at..at + 46]);
    }
}

/// Appends one tar entry with the raw `name` and `link` (the tar library refuses `..` and
/// absolute names, which is what these tests need to write).
pub fn tar_entry(
    out: &mut Vec<u8>,
    name: &str,
    kind: tar::EntryType,
    mode: u32,
    data: &[u8],
    link: &str,
) {
    let mut header = tar::Header::new_gnu();
    {
        let old = header.as_old_mut();
        old.name[..name.len()].copy_from_slice(name.as_bytes());
        old.linkname[..link.len()].copy_from_slice(link.as_bytes());
    }
    header.set_entry_type(kind);
    header.set_mode(mode);
    header.set_size(data.len() as u64);
    header.set_cksum();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out.resize(out.len().next_multiple_of(512), 0);
}

/// A tar of regular files (name, content, mode), with the end-of-archive blocks.
pub fn tar_of(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, content, mode) in files {
        tar_entry(&mut out, name, tar::EntryType::Regular, *mode, content, "");
    }
    tar_end(&mut out);
    out
}

pub fn tar_end(out: &mut Vec<u8>) {
    out.resize(out.len() + 1024, 0);
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// An error as a test compares it: `entry: Rule` for an entry's refusal, else its message.
pub fn describe(err: &IntakeError) -> String {
    match err {
        IntakeError::Entry { entry, rule } => format!("{entry}: {rule:?}"),
        other => other.to_string(),
    }
}

fn unpack(
    bytes: &[u8],
    kind: ArchiveKind,
    dest: &Path,
    caps: &ArchiveCaps,
) -> Result<UnpackSummary, IntakeError> {
    unpack_archive(Cursor::new(bytes), kind, dest, caps)
}

#[test]
fn good_archives_of_each_kind_unpack_byte_exactly_with_exec_bits_and_name_their_single_folder() {
    let tmp = tempfile::TempDir::new().unwrap();
    let readme = b"# project\n".as_slice();
    let script = b"#!/bin/sh\necho run\n".as_slice();
    let data: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    let zip = zip_of(&[
        Z::Dir("project/"),
        Z::File("project/README.md", readme, 0o644),
        Z::File("project/run.sh", script, 0o755),
        Z::Dir("project/empty/"),
        Z::File("project/bin/data.bin", &data, 0o600),
    ]);
    let tar = tar_of(&[
        ("project/README.md", readme, 0o644),
        ("project/run.sh", script, 0o775),
        ("project/bin/data.bin", &data, 0o600),
    ]);
    let tar_gz = gzip(&tar);
    let flat = tar_of(&[
        ("README.md", readme, 0o644),
        ("src/a.py", b"A = 1\n", 0o644),
    ]);

    let mut actual = Vec::new();
    for (name, bytes, kind) in [
        ("zip", &zip, ArchiveKind::Zip),
        ("tar", &tar, ArchiveKind::Tar),
        ("tar.gz", &tar_gz, ArchiveKind::TarGz),
        ("flat", &flat, ArchiveKind::Tar),
    ] {
        let dest = tmp.path().join(name);
        let summary = unpack(bytes, kind, &dest, &ArchiveCaps::default()).unwrap();
        let root = summary
            .root
            .strip_prefix(&dest)
            .unwrap()
            .display()
            .to_string();
        actual.push((
            name,
            ArchiveKind::detect(bytes),
            (summary.files, summary.bytes, root),
            tree(&dest),
        ));
    }

    let project = |empty: bool| {
        let mut entries = BTreeMap::from([
            ("project/".to_owned(), "/".to_owned()),
            ("project/README.md".to_owned(), file_entry(0o644, readme)),
            ("project/run.sh".to_owned(), file_entry(0o755, script)),
            ("project/bin/".to_owned(), "/".to_owned()),
            ("project/bin/data.bin".to_owned(), file_entry(0o644, &data)),
        ]);
        if empty {
            entries.insert("project/empty/".to_owned(), "/".to_owned());
        }
        entries
    };
    let files = 3u64;
    let bytes = (readme.len() + script.len() + data.len()) as u64;
    let expected = vec![
        (
            "zip",
            Some(ArchiveKind::Zip),
            (files, bytes, "project".to_owned()),
            project(true),
        ),
        (
            "tar",
            Some(ArchiveKind::Tar),
            (files, bytes, "project".to_owned()),
            project(false),
        ),
        (
            "tar.gz",
            Some(ArchiveKind::TarGz),
            (files, bytes, "project".to_owned()),
            project(false),
        ),
        (
            "flat",
            Some(ArchiveKind::Tar),
            (2, (readme.len() + 6) as u64, String::new()),
            BTreeMap::from([
                ("README.md".to_owned(), file_entry(0o644, readme)),
                ("src/".to_owned(), "/".to_owned()),
                ("src/a.py".to_owned(), file_entry(0o644, b"A = 1\n")),
            ]),
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn hostile_entries_are_refused_by_name_and_nothing_is_left_in_or_beside_the_destination() {
    let text = b"x\n".as_slice();
    let mut dos_link = zip_of(&[Z::Link("innocent.txt", "/etc/passwd")]);
    // Made on MS-DOS, as a zip may claim, with the link bits still set: still a link.
    patch_central(&mut dos_link, |header| header[5] = 0);
    let mut device = zip_of(&[Z::File("dev/tty0", text, 0o644)]);
    patch_central(&mut device, |header| {
        header[38..42].copy_from_slice(&((0o020_644u32) << 16).to_le_bytes());
    });
    let special = |name: &str, kind: tar::EntryType, link: &str| {
        let mut out = Vec::new();
        tar_entry(&mut out, "ok.txt", tar::EntryType::Regular, 0o644, text, "");
        tar_entry(&mut out, name, kind, 0o644, b"", link);
        tar_end(&mut out);
        out
    };
    let few = ArchiveCaps {
        max_entries: 2,
        ..ArchiveCaps::default()
    };
    let three = [("a", text, 0o644), ("b", text, 0o644), ("c", text, 0o644)];
    let cases: Vec<(&str, Vec<u8>, ArchiveKind, ArchiveCaps)> = vec![
        (
            "zip ..",
            zip_of(&[Z::File("../evil", text, 0o644)]),
            ArchiveKind::Zip,
            ArchiveCaps::default(),
        ),
        (
            "zip /",
            zip_of(&[Z::File("/etc/x", text, 0o644)]),
            ArchiveKind::Zip,
            ArchiveCaps::default(),
        ),
        (
            "zip drive",
            zip_of(&[Z::File("C:\\x", text, 0o644)]),
            ArchiveKind::Zip,
            ArchiveCaps::default(),
        ),
        (
            "zip link",
            zip_of(&[
                Z::File("a.txt", text, 0o644),
                Z::Link("link", "/etc/passwd"),
            ]),
            ArchiveKind::Zip,
            ArchiveCaps::default(),
        ),
        (
            "zip dos link",
            dos_link,
            ArchiveKind::Zip,
            ArchiveCaps::default(),
        ),
        (
            "zip device",
            device,
            ArchiveKind::Zip,
            ArchiveCaps::default(),
        ),
        (
            "zip .git",
            zip_of(&[Z::File("sub/.git/config", text, 0o644)]),
            ArchiveKind::Zip,
            ArchiveCaps::default(),
        ),
        (
            "zip twice",
            zip_of(&[
                Z::File("a.txt", text, 0o644),
                Z::File("./a.txt", text, 0o644),
            ]),
            ArchiveKind::Zip,
            ArchiveCaps::default(),
        ),
        (
            "zip under file",
            zip_of(&[Z::File("a", text, 0o644), Z::File("a/b", text, 0o644)]),
            ArchiveKind::Zip,
            ArchiveCaps::default(),
        ),
        (
            "zip escape",
            zip_of(&[Z::File("red\u{1b}[31m.txt", text, 0o644)]),
            ArchiveKind::Zip,
            ArchiveCaps::default(),
        ),
        (
            "zip count",
            zip_of(&[
                Z::File("a", text, 0o644),
                Z::File("b", text, 0o644),
                Z::File("c", text, 0o644),
            ]),
            ArchiveKind::Zip,
            few,
        ),
        (
            "tar ..",
            tar_of(&[("ok.txt", text, 0o644), ("../evil", text, 0o644)]),
            ArchiveKind::Tar,
            ArchiveCaps::default(),
        ),
        (
            "tar /",
            tar_of(&[("/etc/x", text, 0o644)]),
            ArchiveKind::Tar,
            ArchiveCaps::default(),
        ),
        (
            "tar hard link",
            special("hard", tar::EntryType::Link, "/etc/passwd"),
            ArchiveKind::Tar,
            ArchiveCaps::default(),
        ),
        (
            "tar symlink",
            special("link", tar::EntryType::Symlink, "/etc/passwd"),
            ArchiveKind::Tar,
            ArchiveCaps::default(),
        ),
        (
            "tar char device",
            special("null0", tar::EntryType::Char, ""),
            ArchiveKind::Tar,
            ArchiveCaps::default(),
        ),
        (
            "tar fifo",
            special("pipe", tar::EntryType::Fifo, ""),
            ArchiveKind::Tar,
            ArchiveCaps::default(),
        ),
        (
            "tar twice",
            tar_of(&[("a.txt", text, 0o644), ("a.txt", text, 0o644)]),
            ArchiveKind::Tar,
            ArchiveCaps::default(),
        ),
        (
            "tar.gz .git",
            gzip(&tar_of(&[(".git/hooks/post-checkout", text, 0o755)])),
            ArchiveKind::TarGz,
            ArchiveCaps::default(),
        ),
        ("tar count", tar_of(&three), ArchiveKind::Tar, few),
    ];

    let mut actual = Vec::new();
    for (label, bytes, kind, caps) in &cases {
        let tmp = tempfile::TempDir::new().unwrap();
        let err = unpack(bytes, *kind, &tmp.path().join("dest"), caps).unwrap_err();
        actual.push((*label, describe(&err), tree(tmp.path())));
    }

    let refused = |label: &'static str, what: &str| (label, what.to_owned(), BTreeMap::new());
    let count = "the archive holds more than 2 entries (max_entries); leave out build output and \
                 dependencies, or upload a smaller part of the project";
    let expected = vec![
        refused("zip ..", "../evil: ParentDir"),
        refused("zip /", "/etc/x: Absolute"),
        refused("zip drive", "C:\\x: Absolute"),
        refused("zip link", "link: Symlink"),
        refused("zip dos link", "innocent.txt: Symlink"),
        refused(
            "zip device",
            "dev/tty0: Special { kind: \"character device\" }",
        ),
        refused("zip .git", "sub/.git/config: GitDir"),
        refused("zip twice", "./a.txt: Duplicate"),
        refused("zip under file", "a/b: UnderFile"),
        refused("zip escape", "red<U+001B>[31m.txt: ControlChar"),
        refused("zip count", count),
        refused("tar ..", "../evil: ParentDir"),
        refused("tar /", "/etc/x: Absolute"),
        refused("tar hard link", "hard: HardLink"),
        refused("tar symlink", "link: Symlink"),
        refused(
            "tar char device",
            "null0: Special { kind: \"character device\" }",
        ),
        refused("tar fifo", "pipe: Special { kind: \"FIFO (named pipe)\" }"),
        refused("tar twice", "a.txt: Duplicate"),
        refused("tar.gz .git", ".git/hooks/post-checkout: GitDir"),
        refused("tar count", count),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn a_refusal_names_the_entry_and_the_rule_in_a_sentence() {
    let tmp = tempfile::TempDir::new().unwrap();
    let link = zip_of(&[Z::Link("docs/latest", "/etc/passwd")]);
    let slip = tar_of(&[("../../.bashrc", b"x".as_slice(), 0o644)]);

    let actual = [
        unpack(
            &link,
            ArchiveKind::Zip,
            &tmp.path().join("a"),
            &ArchiveCaps::default(),
        ),
        unpack(
            &slip,
            ArchiveKind::Tar,
            &tmp.path().join("b"),
            &ArchiveCaps::default(),
        ),
    ]
    .map(|result| result.unwrap_err().to_string());

    let expected = [
        "the archive entry `docs/latest` is a symbolic link; plumb unpacks regular files and \
         folders only (a link could point anywhere on the server)",
        "the archive entry `../../.bashrc` climbs out of the archive's folder with `..`; every \
         entry must stay inside it",
    ];
    assert_eq!(actual, expected);
}

#[test]
fn an_existing_empty_destination_is_emptied_again_and_a_full_one_is_never_touched() {
    let tmp = tempfile::TempDir::new().unwrap();
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let full = tmp.path().join("full");
    fs::create_dir(&full).unwrap();
    fs::write(full.join("keep.txt"), "mine\n").unwrap();
    let bad = tar_of(&[
        ("ok/a.txt", b"a".as_slice(), 0o644),
        ("/etc/x", b"x".as_slice(), 0o644),
    ]);
    let good = tar_of(&[("a.txt", b"a".as_slice(), 0o644)]);

    let into_empty =
        describe(&unpack(&bad, ArchiveKind::Tar, &empty, &ArchiveCaps::default()).unwrap_err());
    let into_full =
        describe(&unpack(&good, ArchiveKind::Tar, &full, &ArchiveCaps::default()).unwrap_err());
    let actual = (into_empty, into_full, tree(tmp.path()));

    let expected = (
        "/etc/x: Absolute".to_owned(),
        format!(
            "{} is not a new or empty folder; plumb unpacks and clones only into one",
            full.display()
        ),
        BTreeMap::from([
            ("empty/".to_owned(), "/".to_owned()),
            ("full/".to_owned(), "/".to_owned()),
            ("full/keep.txt".to_owned(), file_entry(0o644, b"mine\n")),
        ]),
    );
    assert_eq!(actual, expected);
}

#[test]
fn the_kind_is_detected_from_the_first_bytes() {
    let tar = tar_of(&[("a", b"a".as_slice(), 0o644)]);
    let samples: [&[u8]; 5] = [
        &zip_of(&[Z::File("a", b"a", 0o644)]),
        &tar,
        &gzip(&tar),
        b"PK\x05\x06 an empty zip",
        b"plain text, not an archive",
    ];

    let actual = samples.map(ArchiveKind::detect);

    let expected = [
        Some(ArchiveKind::Zip),
        Some(ArchiveKind::Tar),
        Some(ArchiveKind::TarGz),
        Some(ArchiveKind::Zip),
        None,
    ];
    assert_eq!(actual, expected);
}
