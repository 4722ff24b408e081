//! A starting tree packed as a `.tar.gz` that [`crate::unpack_archive`] takes back: files, folders
//! and symbolic links (as links, never followed), paths relative to the tree's top, any `.git`
//! left out, the content capped. `plumb eval --db` ships each task's tree to the workers this way,
//! so a worker needs nothing of the machine the eval started on.

use std::fs;
use std::io;
use std::path::Path;

use crate::source_tree::SourceTreeError;

/// Packs the tree at `tree` into `out` (a `.tar.gz`); the bytes of content packed. Refused when
/// the content passes `max_bytes`.
pub fn pack_tree(tree: &Path, out: &Path, max_bytes: u64) -> Result<u64, SourceTreeError> {
    let infra = |what: &Path, err: io::Error| {
        SourceTreeError::Infra(format!("packing {}: {err}", what.display()))
    };
    let file = fs::File::create(out).map_err(|err| infra(out, err))?;
    let gzip = flate2::write::GzEncoder::new(io::BufWriter::new(file), flate2::Compression::fast());
    let mut builder = tar::Builder::new(gzip);
    builder.follow_symlinks(false);
    let mut total = 0_u64;
    add_folder(&mut builder, tree, Path::new(""), max_bytes, &mut total)?;
    let gzip = builder.into_inner().map_err(|err| infra(out, err))?;
    let mut writer = gzip.finish().map_err(|err| infra(out, err))?;
    io::Write::flush(&mut writer).map_err(|err| infra(out, err))?;
    Ok(total)
}

fn add_folder<W: io::Write>(
    builder: &mut tar::Builder<W>,
    root: &Path,
    rel: &Path,
    max_bytes: u64,
    total: &mut u64,
) -> Result<(), SourceTreeError> {
    let dir = root.join(rel);
    let infra =
        |err: io::Error| SourceTreeError::Infra(format!("packing {}: {err}", dir.display()));
    let mut entries: Vec<fs::DirEntry> = fs::read_dir(&dir)
        .map_err(infra)?
        .collect::<Result<_, _>>()
        .map_err(infra)?;
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        if entry.file_name() == ".git" {
            continue;
        }
        let name = rel.join(entry.file_name());
        let kind = entry.file_type().map_err(infra)?;
        if kind.is_dir() {
            builder.append_dir(&name, entry.path()).map_err(|err| {
                SourceTreeError::Infra(format!("packing {}: {err}", name.display()))
            })?;
            add_folder(builder, root, &name, max_bytes, total)?;
        } else if kind.is_file() || kind.is_symlink() {
            if kind.is_file() {
                *total += entry.metadata().map_err(infra)?.len();
                if *total > max_bytes {
                    return Err(SourceTreeError::BadInput(format!(
                        "the tree at {} holds more than {max_bytes} bytes",
                        root.display()
                    )));
                }
            }
            builder
                .append_path_with_name(entry.path(), &name)
                .map_err(|err| {
                    SourceTreeError::Infra(format!("packing {}: {err}", name.display()))
                })?;
        }
        // FIFOs, sockets and devices are no part of a source tree.
    }
    Ok(())
}
