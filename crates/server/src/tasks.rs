//! The task endpoints: start one, list them, read one, and a person's decisions on it — approve
//! the diff with a given SHA-256, reject, cancel, roll back.

use axum::Json;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use plumb_store::{Decision, NewTask, PageCursor, StoreError, TaskFilter};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Tenant};
use crate::spec::{RepoSource, TaskRequest, title};
use crate::views::{ApproveBody, StateName, TaskList, TaskView};
use crate::{AppState, home};
use axum::extract::State;

/// Starts a task: checks the request against the server's settings, stores it queued, and puts it
/// on the job queue.
#[utoipa::path(
    post, path = "/api/tasks", tag = "tasks", request_body = TaskRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Queued", body = TaskView),
        (status = 400, description = "A field cannot be used", body = ErrorBody),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 413, description = "The body is over 1 MiB", body = ErrorBody),
        (status = 415, description = "The body is not sent as JSON", body = ErrorBody),
    )
)]
pub async fn create_task(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiJson(request): ApiJson<TaskRequest>,
) -> ApiResult<impl IntoResponse> {
    let mut request = request.checked(state.settings())?;
    // The tenant's own round limit lowers the server's (the worker applies it again).
    if let Some(limit) = state.store().tenant_limits(&tenant).await?.max_rounds {
        let limit = u32::try_from(limit).unwrap_or(u32::MAX);
        request.max_rounds = Some(request.max_rounds.map_or(limit, |rounds| rounds.min(limit)));
    }
    if let RepoSource::Upload { id } = &request.repo {
        match state.store().upload(&tenant, id).await {
            Ok(_) => {}
            Err(StoreError::UploadNotFound(_)) => {
                return Err(ApiError::bad_field(
                    "repo.id",
                    format!(
                        "repo.id {id:?} is not one of your uploads: POST the archive to /api/uploads first"
                    ),
                ));
            }
            Err(error) => return Err(error.into()),
        }
    }
    let new = NewTask {
        tenant: tenant.clone(),
        queue: state.settings().queue.clone(),
        title: title(&request.ticket),
        spec: serde_json::to_value(&request)
            .map_err(|error| ApiError::bad_request(format!("the request: {error}")))?,
        max_attempts: state.settings().max_attempts,
    };
    let task = state.store().create_task(&new).await?;
    if let Err(error) = state.push(&task.id).await {
        // A task no worker will ever see must not look queued.
        let _ = state.store().request_cancel(&tenant, &task.id).await;
        return Err(error.into());
    }
    let mut headers = HeaderMap::new();
    if let Ok(location) = HeaderValue::from_str(&format!("/api/tasks/{}", task.id)) {
        headers.insert(header::LOCATION, location);
    }
    Ok((StatusCode::CREATED, headers, Json(TaskView::from(task))))
}

/// Which tasks to list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// Only tasks in this state.
    state: Option<StateName>,
    /// At most this many (1-500, default 50).
    limit: Option<u32>,
    /// The `next` of the previous page.
    before: Option<String>,
}

/// The tenant's tasks, newest first, a page at a time.
#[utoipa::path(
    get, path = "/api/tasks", tag = "tasks", params(ListQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of tasks", body = TaskList),
        (status = 400, description = "A parameter cannot be used", body = ErrorBody),
        (status = 401, description = "No live token", body = ErrorBody),
    )
)]
pub async fn list_tasks(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<TaskList>> {
    let before = query.before.as_deref().map(parse_cursor).transpose()?;
    let limit = match query.limit {
        None => 0,
        Some(limit @ 1..=500) => i64::from(limit),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "limit {other} is out of range: give 1-500"
            )));
        }
    };
    let filter = TaskFilter {
        state: query.state.map(Into::into),
        before,
        limit,
    };
    let page = state.store().list_tasks(&tenant, &filter).await?;
    Ok(Json(TaskList {
        tasks: page.tasks.into_iter().map(TaskView::from).collect(),
        next: page
            .next
            .map(|cursor| format!("{}.{}", cursor.created_ms, cursor.id)),
    }))
}

fn parse_cursor(text: &str) -> ApiResult<PageCursor> {
    text.split_once('.')
        .and_then(|(created_ms, id)| {
            Some(PageCursor {
                created_ms: created_ms.parse().ok()?,
                id: id.to_owned(),
            })
        })
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "before {text:?} is not a page cursor: pass the `next` of the previous page"
            ))
        })
}

/// One task.
#[utoipa::path(
    get, path = "/api/tasks/{id}", tag = "tasks",
    params(("id" = String, Path, description = "The task's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The task", body = TaskView),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No such task for this tenant", body = ErrorBody),
    )
)]
pub async fn get_task(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<TaskView>> {
    Ok(Json(state.store().task(&tenant, &id).await?.into()))
}

/// Approves the task's diff: refused (409) unless the task awaits approval and `sha256` is the
/// SHA-256 of the diff it holds. For a repository that is a folder on this server the change is
/// then applied to it (or committed on `branch`), as `plumb apply` does.
#[utoipa::path(
    post, path = "/api/tasks/{id}/approve", tag = "decisions", request_body = ApproveBody,
    params(("id" = String, Path, description = "The task's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Approved", body = TaskView),
        (status = 400, description = "The body cannot be used", body = ErrorBody),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No such task for this tenant", body = ErrorBody),
        (status = 409, description = "Not awaiting approval, another diff's SHA-256, or a change that cannot be applied to the server's folder", body = ErrorBody),
        (status = 413, description = "The body is over 1 MiB", body = ErrorBody),
        (status = 415, description = "The body is not sent as JSON", body = ErrorBody),
    )
)]
pub async fn approve(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<ApproveBody>,
) -> ApiResult<Json<TaskView>> {
    let sha256 = body.sha256.trim().to_ascii_lowercase();
    if sha256.len() != 64 || !sha256.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return Err(ApiError::bad_request(
            "sha256 must be the 64 hex digits of the diff's SHA-256, as GET …/diff shows it",
        ));
    }
    Ok(Json(
        home::approve(&state, &tenant, &id, sha256, body.branch)
            .await?
            .into(),
    ))
}

/// Rejects the change a task holds.
#[utoipa::path(
    post, path = "/api/tasks/{id}/reject", tag = "decisions",
    params(("id" = String, Path, description = "The task's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Rejected", body = TaskView),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No such task for this tenant", body = ErrorBody),
        (status = 409, description = "Not awaiting approval", body = ErrorBody),
    )
)]
pub async fn reject(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<TaskView>> {
    Ok(Json(
        state
            .store()
            .decide(&tenant, &id, &Decision::Reject)
            .await?
            .into(),
    ))
}

/// Rolls a task back: discards a change awaiting approval, or undoes an approved one (for a
/// folder on this server, its files put back as `plumb undo` does).
#[utoipa::path(
    post, path = "/api/tasks/{id}/rollback", tag = "decisions",
    params(("id" = String, Path, description = "The task's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Rolled back", body = TaskView),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No such task for this tenant", body = ErrorBody),
        (status = 409, description = "Neither awaiting approval nor approved, or an applied change that cannot be undone", body = ErrorBody),
    )
)]
pub async fn rollback(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<TaskView>> {
    Ok(Json(home::roll_back(&state, &tenant, &id).await?.into()))
}

/// Cancels a task: at once when it is queued or awaiting approval; a running one is ended by its
/// worker within seconds, rolled back (the task shows `cancel_requested` until then).
#[utoipa::path(
    post, path = "/api/tasks/{id}/cancel", tag = "decisions",
    params(("id" = String, Path, description = "The task's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Cancelled, or asked to be", body = TaskView),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No such task for this tenant", body = ErrorBody),
        (status = 409, description = "Already ended", body = ErrorBody),
    )
)]
pub async fn cancel(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<TaskView>> {
    Ok(Json(
        state.store().request_cancel(&tenant, &id).await?.into(),
    ))
}
