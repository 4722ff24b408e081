//! The API's errors: every one a JSON body `{error, message}` with the status its type calls for
//! — 400 for what a client sent wrong (the message names the field and what to change), 401
//! without a valid token, 404 for an unknown or another tenant's id, 409 for a wrong state or a
//! stale SHA-256. The status comes from the error's type, never from reading a message.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use plumb_store::StoreError;
use serde::Serialize;
use utoipa::ToSchema;

/// The body of every error the API answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ErrorBody {
    /// A stable code: `bad_request`, `unauthorized`, `not_found`, `wrong_state`, `sha_mismatch`,
    /// `too_large`, `method_not_allowed`, `unavailable`, `keys_disabled`, `internal`.
    pub error: String,
    /// What went wrong and what to change, in a sentence.
    pub message: String,
    /// The request's field the message is about (`ticket`, `repo.url`, `max_rounds`, …), when it
    /// is about one: a form shows the message beside it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// An error answered to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: ErrorBody,
}

impl ApiError {
    pub fn new(status: StatusCode, error: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            body: ErrorBody {
                error: error.to_owned(),
                message: message.into(),
                field: None,
            },
        }
    }

    /// 400: the request names something that cannot be used.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 400: the request's `field` cannot be used.
    pub fn bad_field(field: &str, message: impl Into<String>) -> ApiError {
        let mut error = ApiError::bad_request(message);
        error.body.field = Some(field.to_owned());
        error
    }

    /// 404: no such thing for this tenant.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 401: no token, or one that is unknown or revoked.
    pub fn unauthorized() -> ApiError {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "send `Authorization: Bearer plumb_…` with a live token; an operator makes one with \
             `plumb token create --tenant NAME`",
        )
    }

    /// 500: the server's own failure (its disk, a missing tool), nothing the client can fix.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// 413: a body over the server's cap.
    pub fn too_large(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", message)
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        let message = error.to_string();
        match error {
            StoreError::NotFound(_)
            | StoreError::UploadNotFound(_)
            | StoreError::EvalReportNotFound(_) => ApiError::not_found(message),
            StoreError::WrongState { .. } => {
                ApiError::new(StatusCode::CONFLICT, "wrong_state", message)
            }
            StoreError::ShaMismatch { .. } => {
                ApiError::new(StatusCode::CONFLICT, "sha_mismatch", message)
            }
            StoreError::Invalid(_) => ApiError::bad_request(message),
            // The database or the queue is down: the client may try again later.
            StoreError::Database(_) | StoreError::Queue(_) | StoreError::BadUrl { .. } => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
            }
            StoreError::StaleAttempt { .. }
            | StoreError::Held { .. }
            | StoreError::TenantBusy { .. }
            | StoreError::Migrate(_)
            | StoreError::Corrupt { .. }
            | StoreError::System(_) => {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// A handler's result.
pub type ApiResult<T> = Result<T, ApiError>;
