//! What a run leaves, as clients read it — the diff (JSON, with its SHA-256 and per-file counts),
//! the patch (a download), the report — and archives uploaded for new tasks.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use plumb_store::{ArtefactName, TaskState};
use plumb_workspace::intake::{ArchiveCaps, ArchiveKind, unpack_archive};

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiPath, Tenant};
use crate::views::{DiffView, UploadView, file_changes};

/// The bytes of a task's artefact; 409 naming the state when the run has not left one.
async fn artefact(
    state: &AppState,
    tenant: &str,
    id: &str,
    name: ArtefactName,
) -> ApiResult<plumb_store::Artefact> {
    let task = state.store().task(tenant, id).await?;
    match state.store().artefact(tenant, id, name).await? {
        Some(artefact) => Ok(artefact),
        None => Err(ApiError::new(
            StatusCode::CONFLICT,
            "wrong_state",
            format!(
                "task {id} is {}: it has no {} (yet)",
                task.state.as_str(),
                name.as_str()
            ),
        )),
    }
}

/// A state in which the stored patch is the change a person decides on (or decided on).
fn shows_diff(state: TaskState) -> bool {
    matches!(
        state,
        TaskState::AwaitingApproval
            | TaskState::Approved
            | TaskState::Rejected
            | TaskState::RolledBack
    )
}

/// The task's diff, its SHA-256 (what approval names) and each file's counts.
#[utoipa::path(
    get, path = "/api/tasks/{id}/diff", tag = "artefacts",
    params(("id" = String, Path, description = "The task's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The diff", body = DiffView),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No such task for this tenant", body = ErrorBody),
        (status = 409, description = "The run has left no diff", body = ErrorBody),
    )
)]
pub async fn diff(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<DiffView>> {
    let patch = artefact(&state, &tenant, &id, ArtefactName::Patch).await?;
    let task = state.store().task(&tenant, &id).await?;
    if !shows_diff(task.state) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "wrong_state",
            format!(
                "task {id} is {}: its diff is shown once the checks passed",
                task.state.as_str()
            ),
        ));
    }
    let text = String::from_utf8_lossy(&patch.content).into_owned();
    Ok(Json(DiffView {
        sha256: patch.sha256,
        files: file_changes(&text),
        patch: text,
    }))
}

/// The task's change as a `git bundle`: one commit on the branch `plumb/<task>` on top of the
/// commit the run started from, for `git fetch FILE plumb/<task>`. Never a push.
#[utoipa::path(
    get, path = "/api/tasks/{id}/bundle", tag = "artefacts",
    params(("id" = String, Path, description = "The task's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The bundle", content_type = "application/x-git-bundle", body = Vec<u8>),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No such task for this tenant", body = ErrorBody),
        (status = 409, description = "The run has left no bundle", body = ErrorBody),
    )
)]
pub async fn bundle(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let bundle = artefact(&state, &tenant, &id, ArtefactName::Bundle).await?;
    let disposition = format!("attachment; filename=\"{id}.bundle\"");
    Ok((
        [
            (header::CONTENT_TYPE, "application/x-git-bundle".to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        bundle.content,
    ))
}

/// The task's patch as a file to download (`git apply` takes it).
#[utoipa::path(
    get, path = "/api/tasks/{id}/patch", tag = "artefacts",
    params(("id" = String, Path, description = "The task's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The patch", content_type = "text/x-diff", body = String),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No such task for this tenant", body = ErrorBody),
        (status = 409, description = "The run has left no diff", body = ErrorBody),
    )
)]
pub async fn patch(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let patch = artefact(&state, &tenant, &id, ArtefactName::Patch).await?;
    let disposition = format!("attachment; filename=\"{id}.patch\"");
    Ok((
        [
            (
                header::CONTENT_TYPE,
                "text/x-diff; charset=utf-8".to_owned(),
            ),
            (header::CONTENT_DISPOSITION, disposition),
            (
                header::HeaderName::from_static("x-plumb-sha256"),
                patch.sha256,
            ),
        ],
        patch.content,
    ))
}

/// The run's final report: outcome, rounds, the check ladder's evidence, the review, cost.
#[utoipa::path(
    get, path = "/api/tasks/{id}/report", tag = "artefacts",
    params(("id" = String, Path, description = "The task's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The report", body = Object),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No such task for this tenant", body = ErrorBody),
        (status = 409, description = "The run has not ended", body = ErrorBody),
    )
)]
pub async fn report(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let report = artefact(&state, &tenant, &id, ArtefactName::Report).await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], report.content))
}

/// Keeps an archive (zip, tar or tar.gz, as the body) for a task to name. The bytes are checked
/// here by unpacking them under the caps a worker applies; a refusal names the entry.
#[utoipa::path(
    post, path = "/api/uploads", tag = "uploads",
    request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Kept", body = UploadView),
        (status = 400, description = "Not a zip, tar or tar.gz, or an entry the caps refuse", body = ErrorBody),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 413, description = "Over the server's upload cap", body = ErrorBody),
    )
)]
pub async fn upload(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> ApiResult<impl IntoResponse> {
    let max = state.settings().capabilities.limits.max_upload_bytes;
    let body = body.map_err(|_| {
        ApiError::too_large(format!(
            "the archive is over this server's cap of {max} bytes: trim the repository (build \
             output, data files) and upload again"
        ))
    })?;
    let Some(kind) = ArchiveKind::detect(&body) else {
        return Err(ApiError::bad_request(
            "the body is not a zip, tar or tar.gz archive: send the archive's bytes as the body",
        ));
    };
    check_archive(body.clone(), kind).await?;
    let upload = state.store().put_upload(&tenant, &body).await?;
    Ok((StatusCode::CREATED, Json(UploadView::from(upload))))
}

/// Unpacks the archive into a throwaway folder under the caps a worker applies, so a hostile or
/// oversized archive is refused now, with the entry named, rather than failing a task later.
async fn check_archive(body: Bytes, kind: ArchiveKind) -> ApiResult<()> {
    let checked = tokio::task::spawn_blocking(move || {
        let scratch = tempfile::Builder::new().prefix("plumb-upload-").tempdir()?;
        let dest = scratch.path().join("check");
        Ok::<_, std::io::Error>(unpack_archive(
            std::io::Cursor::new(body),
            kind,
            &dest,
            &ArchiveCaps::default(),
        ))
    })
    .await
    .map_err(|err| ApiError::internal(format!("the archive check stopped: {err}")))?
    .map_err(|err| ApiError::internal(format!("no folder to check the archive in: {err}")))?;
    match checked {
        Ok(_) => Ok(()),
        Err(err) if err.is_infra() => Err(ApiError::internal(err.to_string())),
        Err(err) => Err(ApiError::bad_request(err.to_string())),
    }
}
