//! Decompression bombs: each is stopped while streaming, after writing no more than the cap it
//! hit, and leaves nothing behind. The "10 GB" bomb is generated as it is read, so the test pulls
//! only the bytes the unpacker asks for.

use std::cell::Cell;
use std::io::{self, Cursor, Read};
use std::rc::Rc;

use plumb_workspace::intake::{
    ArchiveCaps, ArchiveKind, EntryRule, IntakeError, unpack_archive, unpack_tar_stream,
};
use pretty_assertions::assert_eq;

use super::archive::{Z, gzip, tar_end, tar_entry, tar_of, zip_of};
use super::tree;

const MIB: u64 = 1 << 20;

/// The rule an entry broke, with its `written` replaced by whether it stayed within `cap`.
fn stopped(result: Result<impl Sized, IntakeError>, cap: u64) -> (String, String, bool) {
    match result {
        Err(IntakeError::Entry { entry, rule }) => {
            let (name, written) = match rule {
                EntryRule::FileTooLarge { written, .. } => ("FileTooLarge", Some(written)),
                EntryRule::TotalTooLarge { written, .. } => ("TotalTooLarge", Some(written)),
                EntryRule::Ratio { written, .. } => ("Ratio", Some(written)),
                EntryRule::Damaged { .. } => ("Damaged", None),
                _ => ("other", None),
            };
            (entry, name.to_owned(), written.is_none_or(|w| w <= cap))
        }
        Err(other) => (other.to_string(), String::new(), false),
        Ok(_) => ("unpacked".to_owned(), String::new(), false),
    }
}

#[test]
fn a_zip_entry_past_the_file_cap_or_the_ratio_is_stopped_at_the_cap() {
    let tmp = tempfile::TempDir::new().unwrap();
    let zeros = vec![0u8; 8 << 20];
    let zip = zip_of(&[Z::File("zeros.bin", &zeros, 0o644)]);
    let small_files = ArchiveCaps {
        max_file_bytes: MIB,
        ..ArchiveCaps::default()
    };
    // 8 MiB of zeros deflate to about 8 KiB: 200 times that is under 2 MiB.
    let ratio_cap = (zip.len() as u64 * 200).max(MIB);

    let actual = (
        stopped(
            unpack_archive(
                Cursor::new(&zip),
                ArchiveKind::Zip,
                &tmp.path().join("a"),
                &small_files,
            ),
            MIB,
        ),
        stopped(
            unpack_archive(
                Cursor::new(&zip),
                ArchiveKind::Zip,
                &tmp.path().join("b"),
                &ArchiveCaps::default(),
            ),
            ratio_cap,
        ),
        tree(tmp.path()),
    );

    let expected = (
        ("zeros.bin".to_owned(), "FileTooLarge".to_owned(), true),
        ("zeros.bin".to_owned(), "Ratio".to_owned(), true),
        Default::default(),
    );
    assert_eq!(actual, expected);
}

#[test]
fn a_zip_entry_that_inflates_past_its_declared_size_is_stopped_there() {
    let tmp = tempfile::TempDir::new().unwrap();
    let zeros = vec![0u8; 4 << 20];
    let mut zip = zip_of(&[Z::File("small.txt", &zeros, 0o644)]);
    // Declare 1000 bytes in the local header and the central directory.
    let declared = 1000u32.to_le_bytes();
    let local = zip.windows(4).position(|w| w == b"PK\x03\x04").unwrap();
    zip[local + 22..local + 26].copy_from_slice(&declared);
    let central = zip.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    zip[central + 24..central + 28].copy_from_slice(&declared);

    let result = unpack_archive(
        Cursor::new(&zip),
        ArchiveKind::Zip,
        &tmp.path().join("d"),
        &ArchiveCaps::default(),
    );
    let detail = match &result {
        Err(IntakeError::Entry {
            rule: EntryRule::Damaged { detail },
            ..
        }) => detail.clone(),
        _ => String::new(),
    };
    let actual = (stopped(result, 1000), detail, tree(tmp.path()));

    let expected = (
        ("small.txt".to_owned(), "Damaged".to_owned(), true),
        "File is larger than its declared uncompressed size".to_owned(),
        Default::default(),
    );
    assert_eq!(actual, expected);
}

/// A tar.gz of one entry that declares `size` bytes of zeros, compressed as it is read;
/// `produced` counts the uncompressed bytes made so far.
struct LazyBomb {
    gz: flate2::read::GzEncoder<io::Chain<Cursor<Vec<u8>>, Counting>>,
}

struct Counting {
    left: u64,
    produced: Rc<Cell<u64>>,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        buf[..n].fill(0);
        self.left -= n as u64;
        self.produced.set(self.produced.get() + n as u64);
        Ok(n)
    }
}

impl LazyBomb {
    fn new(size: u64, produced: Rc<Cell<u64>>) -> LazyBomb {
        let mut header = tar::Header::new_gnu();
        header.set_path("bomb.bin").unwrap();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(0o644);
        header.set_size(size);
        header.set_cksum();
        let head = Cursor::new(header.as_bytes().to_vec());
        let body = Counting {
            left: size,
            produced,
        };
        LazyBomb {
            gz: flate2::read::GzEncoder::new(head.chain(body), flate2::Compression::fast()),
        }
    }
}

impl Read for LazyBomb {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.gz.read(buf)
    }
}

#[test]
fn a_tar_gz_declaring_ten_gigabytes_is_stopped_after_writing_at_most_the_cap() {
    let tmp = tempfile::TempDir::new().unwrap();
    let produced = Rc::new(Cell::new(0));
    let bomb = LazyBomb::new(10 << 30, Rc::clone(&produced));
    let caps = ArchiveCaps {
        max_file_bytes: MIB,
        ..ArchiveCaps::default()
    };

    let result = unpack_tar_stream(bomb, ArchiveKind::TarGz, &tmp.path().join("dest"), &caps);
    let actual = (
        stopped(result, MIB),
        produced.get() < 8 * MIB,
        tree(tmp.path()),
    );

    let expected = (
        ("bomb.bin".to_owned(), "FileTooLarge".to_owned(), true),
        true,
        Default::default(),
    );
    assert_eq!(actual, expected);
}

#[test]
fn a_tar_gz_past_the_ratio_and_a_tar_past_the_total_are_stopped_at_their_caps() {
    let tmp = tempfile::TempDir::new().unwrap();
    let zeros = vec![0u8; 16 << 20];
    let tar_gz = gzip(&tar_of(&[("zeros.bin", &zeros, 0o644)]));
    let ratio_cap = (tar_gz.len() as u64 * 200).max(MIB);
    let part = vec![7u8; 400 << 10];
    let mut three = Vec::new();
    for name in ["a.bin", "b.bin", "c.bin"] {
        tar_entry(&mut three, name, tar::EntryType::Regular, 0o644, &part, "");
    }
    tar_end(&mut three);
    let total = ArchiveCaps {
        max_total_bytes: MIB,
        ..ArchiveCaps::default()
    };

    let actual = (
        stopped(
            unpack_archive(
                Cursor::new(&tar_gz),
                ArchiveKind::TarGz,
                &tmp.path().join("a"),
                &ArchiveCaps::default(),
            ),
            ratio_cap,
        ),
        stopped(
            unpack_archive(
                Cursor::new(&three),
                ArchiveKind::Tar,
                &tmp.path().join("b"),
                &total,
            ),
            MIB,
        ),
        tree(tmp.path()),
    );

    let expected = (
        ("zeros.bin".to_owned(), "Ratio".to_owned(), true),
        ("c.bin".to_owned(), "TotalTooLarge".to_owned(), true),
        Default::default(),
    );
    assert_eq!(actual, expected);
}
