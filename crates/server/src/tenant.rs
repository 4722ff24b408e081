//! The signed-in tenant's own settings: its limits (set by an operator with `plumb tenant
//! limits`, read here) and the model keys it brings (BYOK). A key is sealed under the server's
//! secret key before it is stored, goes to a worker only to be put in the provider's header, and
//! is never answered back: a tenant sees which providers it has a key for and since when.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use plumb_store::{ModelKeyRecord, TenantLimits};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath, Tenant};

/// A model provider a tenant may bring a key for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderName {
    Openai,
    Anthropic,
    OpenaiCompat,
}

impl ProviderName {
    fn as_str(self) -> &'static str {
        match self {
            ProviderName::Openai => "openai",
            ProviderName::Anthropic => "anthropic",
            ProviderName::OpenaiCompat => "openai-compat",
        }
    }
}

/// The tenant's limits; `null` leaves the server's own.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TenantLimitsView {
    /// Tasks preparing, running, checking or reviewing at once; more wait in the queue.
    pub max_running: Option<i64>,
    /// Rounds per task (a task asking for more gets this many).
    pub max_rounds: Option<i64>,
    /// Estimated dollars per task.
    pub max_usd: Option<f64>,
}

impl From<TenantLimits> for TenantLimitsView {
    fn from(limits: TenantLimits) -> TenantLimitsView {
        TenantLimitsView {
            max_running: limits.max_running,
            max_rounds: limits.max_rounds,
            max_usd: limits.max_usd,
        }
    }
}

/// A model key the tenant keeps: which provider, since when. Never the key.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct KeyView {
    pub provider: String,
    pub updated_ms: i64,
}

impl From<ModelKeyRecord> for KeyView {
    fn from(record: ModelKeyRecord) -> KeyView {
        KeyView {
            provider: record.provider,
            updated_ms: record.updated_ms,
        }
    }
}

/// The signed-in tenant.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TenantView {
    pub tenant: String,
    pub limits: TenantLimitsView,
    pub keys: Vec<KeyView>,
    /// Whether this server keeps model keys (its operator gave it a secret key).
    pub keys_enabled: bool,
}

/// A model key to keep.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyBody {
    /// The key as the provider issued it (1-4096 visible ASCII characters).
    pub key: String,
}

/// The signed-in tenant: its limits and which model keys it keeps.
#[utoipa::path(
    get, path = "/api/tenant", tag = "tenant",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The tenant", body = TenantView),
        (status = 401, description = "No live token", body = ErrorBody),
    )
)]
pub async fn get_tenant(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
) -> ApiResult<Json<TenantView>> {
    let limits = state.store().tenant_limits(&tenant).await?;
    let keys = state.store().model_keys(&tenant).await?;
    Ok(Json(TenantView {
        tenant,
        limits: limits.into(),
        keys: keys.into_iter().map(KeyView::from).collect(),
        keys_enabled: state.secret_key().is_some(),
    }))
}

/// Keeps the tenant's own key for a provider (replacing one kept before); the tenant's tasks on
/// that provider's models use it from their next run.
#[utoipa::path(
    put, path = "/api/tenant/keys/{provider}", tag = "tenant",
    params(("provider" = ProviderName, Path, description = "The provider the key is for")),
    request_body = KeyBody,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Kept (the key is not answered back)", body = KeyView),
        (status = 400, description = "Not a key or not a provider", body = ErrorBody),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 409, description = "This server keeps no model keys", body = ErrorBody),
        (status = 413, description = "The body is over 1 MiB", body = ErrorBody),
        (status = 415, description = "The body is not sent as JSON", body = ErrorBody),
    )
)]
pub async fn put_key(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(provider): ApiPath<ProviderName>,
    ApiJson(body): ApiJson<KeyBody>,
) -> ApiResult<Json<KeyView>> {
    let Some(secret) = state.secret_key() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "keys_disabled",
            "this server keeps no model keys: its operator starts it with PLUMB_SECRET_KEY \
             (or --secret-key-file) to allow them",
        ));
    };
    let record = state
        .store()
        .set_model_key(&tenant, provider.as_str(), &body.key, secret)
        .await?;
    Ok(Json(record.into()))
}

/// Forgets the tenant's key for a provider: its tasks use the server's key again.
#[utoipa::path(
    delete, path = "/api/tenant/keys/{provider}", tag = "tenant",
    params(("provider" = ProviderName, Path, description = "The provider the key is for")),
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Forgotten"),
        (status = 400, description = "Not a provider", body = ErrorBody),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No key kept for that provider", body = ErrorBody),
    )
)]
pub async fn delete_key(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(provider): ApiPath<ProviderName>,
) -> ApiResult<StatusCode> {
    if state
        .store()
        .delete_model_key(&tenant, provider.as_str())
        .await?
    {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!(
            "no {} key is kept for tenant {tenant}",
            provider.as_str()
        )))
    }
}
