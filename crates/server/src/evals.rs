//! The reports of evals whose attempts ran through this server's queue (`plumb eval --db`): a list
//! with each eval's summary, and its static HTML page (`plumb eval`'s `report.html`) to download.
//! The page is the eval's own — inline CSS and SVG, no script — and is sent with a policy that
//! lets it run nothing and fetch nothing, as an attachment, so a browser never runs it as part of
//! the server's origin.

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use serde::Serialize;
use utoipa::ToSchema;

use crate::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiPath, Tenant};

/// One eval's report.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EvalView {
    pub id: String,
    /// The eval's name (its output folder's).
    pub title: String,
    /// The eval's `summary.json`: tasks, resolved, pass@k, cost, … (`docs/eval.md`).
    #[schema(value_type = Object)]
    pub summary: serde_json::Value,
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// The tenant's eval reports.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EvalList {
    /// The most recently updated first.
    pub evals: Vec<EvalView>,
}

/// The policy an eval's page is sent with: a sandbox with no script, its own inline styles and
/// images only.
const REPORT_POLICY: &str =
    "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'";

/// The tenant's eval reports (evals run with `plumb eval --db` keep theirs under the tenant
/// `eval`).
#[utoipa::path(
    get, path = "/api/evals", tag = "evals",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The eval reports", body = EvalList),
        (status = 401, description = "No live token", body = ErrorBody),
    )
)]
pub async fn list_evals(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
) -> ApiResult<Json<EvalList>> {
    let records = state.store().eval_reports(&tenant).await?;
    let evals = records
        .into_iter()
        .map(|record| EvalView {
            summary: serde_json::from_str(&record.summary).unwrap_or(serde_json::Value::Null),
            id: record.id,
            title: record.title,
            created_ms: record.created_ms,
            updated_ms: record.updated_ms,
        })
        .collect();
    Ok(Json(EvalList { evals }))
}

/// An eval's HTML report, as a file to download.
#[utoipa::path(
    get, path = "/api/evals/{id}/report", tag = "evals",
    params(("id" = String, Path, description = "The eval's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The report", content_type = "text/html", body = String),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No such eval report for this tenant", body = ErrorBody),
    )
)]
pub async fn eval_report(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let html = state.store().eval_report_html(&tenant, &id).await?;
    let name: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    Ok((
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
            (header::CONTENT_SECURITY_POLICY, REPORT_POLICY.to_owned()),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"plumb-eval-{name}.html\""),
            ),
        ],
        html,
    ))
}
