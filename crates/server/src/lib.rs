//! plumb-server: the HTTP API of `plumb serve` on axum — tasks started, listed, read, streamed as
//! server-sent events, their diffs downloaded and decided on — over the store and the job queue
//! of `plumb-store`. Which tenant a request acts for comes from its bearer token; another
//! tenant's task reads as unknown (404), so ids do not leak. The web page at `/` (`web`) is a
//! client of the same API, its files compiled in. The workers that run the tasks are
//! not here: `plumb serve` starts them beside the API, and `plumb worker` runs them anywhere that
//! reaches the database.

mod artefacts;
mod error;
mod evals;
mod events;
mod extract;
mod home;
mod openapi;
mod settings;
mod spec;
mod tasks;
mod tenant;
mod views;
mod web;

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post, put};
use plumb_store::{JobQueue, SecretKey, Store};
use tokio_util::sync::CancellationToken;

pub use error::{ApiError, ErrorBody};
pub use home::{BringHome, HomeRefusal};
pub use openapi::{ApiDoc, document as openapi_document};
pub use settings::{Capabilities, Intake, Limits, ModelOffer, ServerSettings};
pub use spec::{RepoSource, TaskRequest};
pub use views::file_changes;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
    /// How an approved change reaches a repository on this machine; none: approval only decides.
    home: Option<Arc<dyn BringHome>>,
    /// Seals tenants' model keys; none: tenants cannot keep keys here.
    secret_key: Option<SecretKey>,
}

struct Inner {
    store: Store,
    queue: tokio::sync::Mutex<JobQueue>,
    settings: ServerSettings,
    shutdown: CancellationToken,
}

impl AppState {
    /// The API's state over `store`, putting tasks on `queue`; `shutdown` ends live event
    /// streams so a graceful shutdown does not wait for them.
    pub fn new(
        store: Store,
        queue: JobQueue,
        settings: ServerSettings,
        shutdown: CancellationToken,
    ) -> AppState {
        AppState {
            inner: Arc::new(Inner {
                store,
                queue: tokio::sync::Mutex::new(queue),
                settings,
                shutdown,
            }),
            home: None,
            secret_key: None,
        }
    }

    /// This state, keeping tenants' model keys sealed under `secret_key`.
    pub fn with_secret_key(mut self, secret_key: Option<SecretKey>) -> AppState {
        self.secret_key = secret_key;
        self
    }

    pub(crate) fn secret_key(&self) -> Option<&SecretKey> {
        self.secret_key.as_ref()
    }

    /// This state, bringing approved changes of server-path tasks home through `home`.
    pub fn with_home(mut self, home: Arc<dyn BringHome>) -> AppState {
        self.home = Some(home);
        self
    }

    pub(crate) fn home(&self) -> Option<&Arc<dyn BringHome>> {
        self.home.as_ref()
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn settings(&self) -> &ServerSettings {
        &self.inner.settings
    }

    pub(crate) fn shutdown(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    pub(crate) async fn push(&self, task_id: &str) -> plumb_store::Result<()> {
        self.inner.queue.lock().await.push(task_id).await
    }
}

/// The most a JSON body may hold (a ticket is capped lower by the settings).
const MAX_JSON_BODY: usize = 1 << 20;

/// Every route of the API.
pub fn router(state: AppState) -> Router {
    let upload_limit = state.settings().capabilities.limits.max_upload_bytes;
    let api = Router::new()
        .route("/api/capabilities", get(capabilities))
        .route("/api/openapi.json", get(openapi_json))
        .route(
            "/api/tasks",
            post(tasks::create_task).get(tasks::list_tasks),
        )
        .route("/api/tasks/{id}", get(tasks::get_task))
        .route("/api/tasks/{id}/events", get(events::events))
        .route("/api/tasks/{id}/diff", get(artefacts::diff))
        .route("/api/tasks/{id}/patch", get(artefacts::patch))
        .route("/api/tasks/{id}/bundle", get(artefacts::bundle))
        .route("/api/tasks/{id}/report", get(artefacts::report))
        .route("/api/tasks/{id}/approve", post(tasks::approve))
        .route("/api/tasks/{id}/reject", post(tasks::reject))
        .route("/api/tasks/{id}/cancel", post(tasks::cancel))
        .route("/api/tasks/{id}/rollback", post(tasks::rollback))
        .route("/api/tenant", get(tenant::get_tenant))
        .route("/api/evals", get(evals::list_evals))
        .route("/api/evals/{id}/report", get(evals::eval_report))
        .route(
            "/api/tenant/keys/{provider}",
            put(tenant::put_key).delete(tenant::delete_key),
        )
        .layer(DefaultBodyLimit::max(MAX_JSON_BODY));
    let uploads = Router::new()
        .route("/api/uploads", post(artefacts::upload))
        .layer(DefaultBodyLimit::max(upload_limit));
    api.merge(uploads)
        .merge(web::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

/// What this server offers: models, sandbox, limits, where repositories may come from.
#[utoipa::path(
    get, path = "/api/capabilities", tag = "server",
    responses((status = 200, description = "What the server offers", body = Capabilities))
)]
pub async fn capabilities(State(state): State<AppState>) -> Json<Capabilities> {
    Json(state.settings().capabilities.clone())
}

/// This API's OpenAPI 3.1 document.
async fn openapi_json() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        openapi::document(),
    )
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint: GET /api/openapi.json lists them")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not take that method: GET /api/openapi.json lists what each takes",
    )
}

/// Serves `router` on `listener` until `shutdown` is cancelled; requests in flight finish first.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
}
