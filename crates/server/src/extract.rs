//! What handlers take from a request, with every refusal answered as an [`ApiError`]: the tenant
//! behind the bearer token, a JSON body, a query string, a path parameter.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::AppState;
use crate::error::ApiError;

/// The tenant a request acts for: the owner of its bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant(pub String);

impl FromRequestParts<AppState> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Tenant, ApiError> {
        let secret = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(ApiError::unauthorized)?;
        match state.store().tenant_for_token(secret).await? {
            Some(tenant) => Ok(Tenant(tenant)),
            None => Err(ApiError::unauthorized()),
        }
    }
}

/// A JSON body; one that does not parse is a 400 naming what serde could not read.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<ApiJson<T>, ApiError> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(JsonRejection::MissingJsonContentType(_)) => Err(ApiError::new(
                axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as JSON with `Content-Type: application/json`",
            )),
            Err(rejection) if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError::too_large(
                    "the JSON body is over this server's cap of 1 MiB: shorten the ticket",
                ))
            }
            Err(rejection) => Err(ApiError::bad_request(format!(
                "the body is not one this endpoint reads: {}",
                rejection.body_text()
            ))),
        }
    }
}

/// A query string; one that does not parse is a 400 naming the parameter.
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<ApiQuery<T>, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(value)| ApiQuery(value))
            .map_err(|rejection: QueryRejection| {
                ApiError::bad_request(format!(
                    "the query string is not one this endpoint reads: {}",
                    rejection.body_text()
                ))
            })
    }
}

/// A path parameter (a task id); one that does not parse is a 400.
#[derive(Debug)]
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<ApiPath<T>, ApiError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(value)| ApiPath(value))
            .map_err(|rejection: PathRejection| {
                ApiError::bad_request(format!(
                    "the path is not one this API reads: {}",
                    rejection.body_text()
                ))
            })
    }
}
