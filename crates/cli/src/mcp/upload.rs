//! The caller's repository packed for `plumb mcp --server`'s upload: the files a `plumb fix` copy
//! would hold (ignore files and size limits applied, `.git` left out), as a `.tar.gz`; what was
//! left out is said in progress notes, so the caller knows what the server's run did not see.

use std::path::Path;

use plumb_mcp::{ProgressNote, ToolFailure};
use tokio::sync::mpsc;

/// The repository as `plumb fix` would copy it, as a `.tar.gz`'s bytes; what was left out is
/// said in progress notes.
pub(super) async fn pack(
    repo: &Path,
    progress: &mpsc::UnboundedSender<ProgressNote>,
) -> Result<Vec<u8>, ToolFailure> {
    let source = repo.to_path_buf();
    let packed = tokio::task::spawn_blocking(move || -> Result<_, ToolFailure> {
        let scratch = tempfile::tempdir()
            .map_err(|err| ToolFailure::Infra(format!("no scratch folder: {err}")))?;
        let out = scratch.path().join("repo.tar.gz");
        let packed = plumb_workspace::pack_source(
            &source,
            scratch.path(),
            &out,
            &plumb_workspace::CopyLimits::default(),
        )
        .map_err(|err| {
            if err.is_infra() {
                ToolFailure::Infra(err.to_string())
            } else {
                ToolFailure::BadInput(format!("repo {}: {err}", source.display()))
            }
        })?;
        let bytes = std::fs::read(&out)
            .map_err(|err| ToolFailure::Infra(format!("reading {}: {err}", out.display())))?;
        Ok((bytes, packed))
    })
    .await
    .map_err(|err| ToolFailure::Infra(format!("packing the repository stopped: {err}")))??;
    let (bytes, packed) = packed;
    let mut left_out = packed.copied.warnings();
    if !packed.links_left_out.is_empty() {
        left_out.push(format!(
            "symbolic links are not uploaded (the server takes regular files only): {}",
            packed.links_left_out.join(", ")
        ));
    }
    for line in left_out {
        let _ = progress.send(ProgressNote {
            round: 0,
            message: line,
        });
    }
    Ok(bytes)
}
