//! Where a stored task's repository comes from, made into a folder the engine copies: a folder on
//! this machine as it is, a git URL cloned under the intake policy, an uploaded archive unpacked
//! as regular files only. Clones and archives land in the run's own folder and go with it.

use std::path::{Path, PathBuf};

use plumb_server::RepoSource;
use plumb_store::Store;
use plumb_workspace::intake::{
    ArchiveCaps, ArchiveKind, CloneRequest, IntakeError, UrlPolicy, clone_repository,
    unpack_archive,
};

/// The folder holding the task's repository; `scratch` (a folder that does not exist yet) is
/// where a fetched source goes. `policy` holds git URLs to public addresses and caps the clone.
pub(crate) async fn prepare(
    source: &RepoSource,
    tenant: &str,
    store: &Store,
    scratch: &Path,
    policy: &UrlPolicy,
) -> Result<PathBuf, String> {
    match source {
        RepoSource::Path { path } => {
            let folder = PathBuf::from(path);
            if !folder.is_absolute() || !folder.is_dir() {
                return Err(format!(
                    "repo.path {path} is not an absolute path to a folder on this worker"
                ));
            }
            Ok(folder)
        }
        RepoSource::Git { url, rev } => {
            let (url, rev, dest, policy) =
                (url.clone(), rev.clone(), scratch.to_owned(), policy.clone());
            let cloned = tokio::task::spawn_blocking(move || {
                let request = CloneRequest {
                    url: &url,
                    dest: &dest,
                    branch: rev.as_deref(),
                    depth: None,
                };
                clone_repository(&request, &policy)
            })
            .await
            .map_err(|err| format!("the clone stopped: {err}"))?
            .map_err(|err| intake_failure("repo.url", err))?;
            Ok(cloned.root)
        }
        RepoSource::Upload { id } => {
            let (_, content) = store
                .upload(tenant, id)
                .await
                .map_err(|err| format!("repo.id: {err}"))?;
            let Some(kind) = ArchiveKind::detect(&content) else {
                return Err(format!("upload {id} is not a zip, tar or tar.gz archive"));
            };
            let dest = scratch.to_owned();
            let summary = tokio::task::spawn_blocking(move || {
                unpack_archive(
                    std::io::Cursor::new(content),
                    kind,
                    &dest,
                    &ArchiveCaps::default(),
                )
            })
            .await
            .map_err(|err| format!("the unpacking stopped: {err}"))?
            .map_err(|err| intake_failure("repo.id", err))?;
            Ok(summary.root)
        }
    }
}

/// An intake refusal as a task's reason: the request's field when the input is at fault.
fn intake_failure(field: &str, err: IntakeError) -> String {
    if err.is_infra() {
        format!("this worker could not fetch the repository: {err}")
    } else {
        format!("{field}: {err}")
    }
}
