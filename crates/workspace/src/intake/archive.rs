//! Archive uploads (zip, tar, tar.gz) unpacked into a new or empty folder as regular files and
//! folders only. The rules every entry's name passes and the capped writer are in `unpack.rs`.
//!
//! Refused, each naming the entry: links of every kind (tar symlinks and hard links, and zip
//! entries whose Unix mode, in the high half of the external attributes, says `S_IFLNK`, whatever
//! system the zip claims to be made on: a reader that ignores those bits writes the link's target
//! as a plain file, and one that honours them writes a link), devices, FIFOs, sockets, sparse tar
//! entries, encrypted zip entries and compression methods other than deflate and store.
//!
//! Zip, in order: the central directory is read, its entry count checked, every entry's name and
//! kind checked and claimed (so a refusal comes before anything is written), the local headers
//! checked against the central directory (overlapping entries, the non-recursive bomb, and local
//! headers the directory does not list are refused), then the files written. The zip reader
//! itself stops an entry that inflates past its declared size; the caps stop it sooner if the
//! declared size is large.
//!
//! Tar and tar.gz are read as a stream, one entry at a time: a refusal can come after earlier
//! entries were written, and the guard removes them. Ratio: a zip entry is compared with its own
//! compressed size and the archive with its length; a tar.gz has one compressed stream, so the
//! bytes written so far are compared with the compressed bytes read so far.

use std::cell::Cell;
use std::fmt;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::dest::DestGuard;
use super::error::{EntryRule, IntakeError};
use super::unpack::{Compressed, Unpacker, entry_parts};

/// The archive formats an upload may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveKind {
    Zip,
    Tar,
    TarGz,
}

impl ArchiveKind {
    /// The format the first bytes of an upload show (at least 262 for a tar), or `None`. A gzip
    /// stream is taken for a tar.gz; what it holds is only known when it is read.
    pub fn detect(prefix: &[u8]) -> Option<ArchiveKind> {
        if [b"PK\x03\x04", b"PK\x05\x06"]
            .iter()
            .any(|magic| prefix.starts_with(*magic))
        {
            Some(ArchiveKind::Zip)
        } else if prefix.starts_with(&[0x1f, 0x8b]) {
            Some(ArchiveKind::TarGz)
        } else if prefix.get(257..262) == Some(b"ustar".as_slice()) {
            Some(ArchiveKind::Tar)
        } else {
            None
        }
    }
}

impl fmt::Display for ArchiveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArchiveKind::Zip => "zip",
            ArchiveKind::Tar => "tar",
            ArchiveKind::TarGz => "tar.gz",
        })
    }
}

/// How much an archive may unpack to. Counted on the bytes written, never on headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveCaps {
    /// Entries of any kind, folders included.
    pub max_entries: u64,
    /// Unpacked bytes of all files together.
    pub max_total_bytes: u64,
    /// Unpacked bytes of one file.
    pub max_file_bytes: u64,
    /// Most unpacked bytes per compressed byte, for one zip entry and for the whole archive.
    pub max_ratio: u64,
    /// Unpacked bytes the ratio never refuses: a small file of zeros compresses a thousandfold
    /// and is no bomb.
    pub ratio_floor_bytes: u64,
}

impl Default for ArchiveCaps {
    /// 20,000 entries, 512 MiB in all, 64 MiB a file, 200:1 past the first MiB. Deflate reaches
    /// about 1000:1 on a run of one byte and rarely passes 20:1 on source code.
    fn default() -> Self {
        ArchiveCaps {
            max_entries: 20_000,
            max_total_bytes: 512 << 20,
            max_file_bytes: 64 << 20,
            max_ratio: 200,
            ratio_floor_bytes: 1 << 20,
        }
    }
}

/// What an unpack wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnpackSummary {
    /// Entries read, folders and skipped metadata entries included.
    pub entries: u64,
    /// Regular files written.
    pub files: u64,
    /// Bytes written, all files together.
    pub bytes: u64,
    /// The project's top: the archive's single top-level folder when it holds nothing else
    /// (`dest/project-main`), otherwise `dest`.
    pub root: PathBuf,
}

/// Unpacks `archive` of `kind` into `dest` (new, or an empty folder) under `caps`. On any error,
/// what was written under `dest` is removed again (and `dest` too when this call made it).
pub fn unpack_archive<R: Read + Seek>(
    archive: R,
    kind: ArchiveKind,
    dest: &Path,
    caps: &ArchiveCaps,
) -> Result<UnpackSummary, IntakeError> {
    match kind {
        ArchiveKind::Zip => unpack_zip(archive, dest, caps),
        ArchiveKind::Tar | ArchiveKind::TarGz => unpack_tar_stream(archive, kind, dest, caps),
    }
}

/// [`unpack_archive`] for a tar or tar.gz read as a stream (an upload's body, with no file
/// behind it). A zip is refused: its directory is at its end.
pub fn unpack_tar_stream<R: Read>(
    stream: R,
    kind: ArchiveKind,
    dest: &Path,
    caps: &ArchiveCaps,
) -> Result<UnpackSummary, IntakeError> {
    let gzip = match kind {
        ArchiveKind::Tar => false,
        ArchiveKind::TarGz => true,
        ArchiveKind::Zip => {
            return Err(IntakeError::Unreadable {
                kind,
                detail: "a zip is read from its end, so it cannot be unpacked as a stream".into(),
            });
        }
    };
    let guard = DestGuard::prepare(dest)?;
    let mut unpacker = Unpacker::new(caps, guard.open()?, guard.path());
    let consumed = Rc::new(Cell::new(0));
    let counted = Counted {
        inner: stream,
        count: Rc::clone(&consumed),
    };
    let reader: Box<dyn Read + '_> = if gzip {
        Box::new(flate2::read::GzDecoder::new(counted))
    } else {
        Box::new(counted)
    };
    let unreadable = |err: io::Error| IntakeError::Unreadable {
        kind,
        detail: super::shown(&err.to_string()),
    };
    let mut tar = tar::Archive::new(reader);
    for entry in tar.entries().map_err(unreadable)? {
        let mut entry = entry.map_err(unreadable)?;
        unpacker.count_entry()?;
        let name = entry.path_bytes().into_owned();
        let shown = super::shown(&String::from_utf8_lossy(&name));
        let refuse = |rule| IntakeError::Entry {
            entry: shown.clone(),
            rule,
        };
        let header = entry.header();
        let is_dir = match header.entry_type() {
            tar::EntryType::Regular | tar::EntryType::Continuous => false,
            tar::EntryType::Directory => true,
            // Metadata the reader already applied (or, for a global header, that names no file).
            tar::EntryType::XGlobalHeader
            | tar::EntryType::XHeader
            | tar::EntryType::GNULongName
            | tar::EntryType::GNULongLink => continue,
            tar::EntryType::Symlink => return Err(refuse(EntryRule::Symlink)),
            tar::EntryType::Link => return Err(refuse(EntryRule::HardLink)),
            other => {
                return Err(refuse(EntryRule::Special {
                    kind: tar_kind(other),
                }));
            }
        };
        let executable = header.mode().is_ok_and(|mode| mode & 0o111 != 0);
        let Some(parts) = entry_parts(&name).map_err(refuse)? else {
            continue;
        };
        unpacker.claim(&parts, is_dir).map_err(refuse)?;
        if is_dir {
            unpacker.make_dir(&parts)?;
        } else {
            let compressed = StreamCompressed(&consumed);
            unpacker.write_file(&parts, executable, &mut entry, &compressed, &shown)?;
        }
    }
    let summary = summary(&unpacker);
    guard.keep();
    Ok(summary)
}

fn unpack_zip<R: Read + Seek>(
    mut archive: R,
    dest: &Path,
    caps: &ArchiveCaps,
) -> Result<UnpackSummary, IntakeError> {
    let kind = ArchiveKind::Zip;
    let unreadable = |detail: String| IntakeError::Unreadable {
        kind,
        detail: super::shown(&detail),
    };
    let length = archive
        .seek(SeekFrom::End(0))
        .and_then(|length| archive.seek(SeekFrom::Start(0)).map(|_| length))
        .map_err(|err| unreadable(err.to_string()))?;
    let mut zip = zip::ZipArchive::new(archive).map_err(|err| unreadable(err.to_string()))?;
    if zip.len() as u64 > caps.max_entries {
        return Err(IntakeError::TooManyEntries {
            limit: caps.max_entries,
        });
    }
    if zip.has_duplicate_names() {
        return Err(unreadable(
            "its central directory lists one name more than once".into(),
        ));
    }
    let guard = DestGuard::prepare(dest)?;
    let mut unpacker = Unpacker::new(caps, guard.open()?, guard.path());
    let mut plan = Vec::with_capacity(zip.len());
    for index in 0..zip.len() {
        let entry = zip
            .by_index_data(index)
            .map_err(|err| unreadable(err.to_string()))?;
        unpacker.count_entry()?;
        let name = entry
            .name()
            .map_err(|err| unreadable(err.to_string()))?
            .into_owned();
        let shown = super::shown(&name);
        let refuse = |rule| IntakeError::Entry {
            entry: shown.clone(),
            rule,
        };
        // The Unix mode, whatever system the zip says made it: see the module header.
        let mode = entry.external_attributes() >> 16;
        let named_dir = name.ends_with('/') || name.ends_with('\\');
        let is_dir = match mode & 0o170_000 {
            0o100_000 | 0 if !entry.is_symlink() => named_dir,
            0o040_000 => true,
            0o120_000 => return Err(refuse(EntryRule::Symlink)),
            0o020_000 => {
                return Err(refuse(EntryRule::Special {
                    kind: "character device",
                }));
            }
            0o060_000 => {
                return Err(refuse(EntryRule::Special {
                    kind: "block device",
                }));
            }
            0o010_000 => {
                return Err(refuse(EntryRule::Special {
                    kind: "FIFO (named pipe)",
                }));
            }
            0o140_000 => return Err(refuse(EntryRule::Special { kind: "socket" })),
            _ if entry.is_symlink() => return Err(refuse(EntryRule::Symlink)),
            _ => {
                return Err(refuse(EntryRule::Special {
                    kind: "file of unknown type",
                }));
            }
        };
        if entry.encrypted() {
            return Err(refuse(EntryRule::Encrypted));
        }
        let method = entry.compression();
        if !matches!(
            method,
            zip::CompressionMethod::Stored | zip::CompressionMethod::Deflated
        ) {
            return Err(refuse(EntryRule::Compression {
                method: method.to_string(),
            }));
        }
        let Some(parts) = entry_parts(name.as_bytes()).map_err(refuse)? else {
            continue;
        };
        unpacker.claim(&parts, is_dir).map_err(refuse)?;
        let executable = !is_dir && mode & 0o111 != 0;
        plan.push((
            index,
            parts,
            is_dir,
            executable,
            entry.compressed_size(),
            shown,
        ));
    }
    zip.validate_header_consistency()
        .map_err(|err| unreadable(err.to_string()))?;
    for (index, parts, is_dir, executable, compressed_size, shown) in plan {
        if is_dir {
            unpacker.make_dir(&parts)?;
            continue;
        }
        let mut file = zip.by_index(index).map_err(|err| IntakeError::Entry {
            entry: shown.clone(),
            rule: EntryRule::Damaged {
                detail: super::shown(&err.to_string()),
            },
        })?;
        let compressed = ZipCompressed {
            entry: compressed_size,
            archive: length,
        };
        unpacker.write_file(&parts, executable, &mut file, &compressed, &shown)?;
    }
    let summary = summary(&unpacker);
    guard.keep();
    Ok(summary)
}

fn summary(unpacker: &Unpacker<'_>) -> UnpackSummary {
    UnpackSummary {
        entries: unpacker.entries,
        files: unpacker.files,
        bytes: unpacker.bytes,
        root: unpacker.root(),
    }
}

fn tar_kind(kind: tar::EntryType) -> &'static str {
    match kind {
        tar::EntryType::Char => "character device",
        tar::EntryType::Block => "block device",
        tar::EntryType::Fifo => "FIFO (named pipe)",
        tar::EntryType::GNUSparse => "sparse file",
        _ => "tar entry of a type other than file or folder",
    }
}

/// A reader that counts the bytes taken from the one it wraps.
struct Counted<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// A tar stream's compressed bytes: only the whole stream's count means anything.
struct StreamCompressed<'a>(&'a Cell<u64>);

impl Compressed for StreamCompressed<'_> {
    fn entry(&self) -> Option<u64> {
        None
    }

    fn total(&self) -> u64 {
        self.0.get()
    }
}

/// A zip entry's compressed size (the reader takes no more than that from the archive) and the
/// archive's length.
struct ZipCompressed {
    entry: u64,
    archive: u64,
}

impl Compressed for ZipCompressed {
    fn entry(&self) -> Option<u64> {
        Some(self.entry)
    }

    fn total(&self) -> u64 {
        self.archive
    }
}
