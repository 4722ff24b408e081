//! Tenants' API tokens: made with a secret shown once, stored as the secret's SHA-256, listed
//! without it, revoked. A request's bearer secret is looked up by its hash, so the store never
//! holds anything that would let a reader of the database act as a tenant.

use sha2::{Digest as _, Sha256};
use sqlx::Row as _;

use crate::error::{Result, StoreError};
use crate::pool::{BeginWrite as _, on_pool};
use crate::{Store, now_ms};

/// What every token's secret starts with, so a leaked one is recognisable (secret scanners look
/// for such prefixes).
pub const TOKEN_PREFIX: &str = "plumb_";

/// A token as listed: never its secret.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TokenRecord {
    pub id: String,
    pub tenant: String,
    pub label: String,
    pub created_ms: i64,
    pub revoked_ms: Option<i64>,
}

/// A tenant's name: 1–64 of `a-z`, `0-9`, `-`, `_`, `.`; it appears in ids, logs and URLs.
pub fn check_tenant(tenant: &str) -> Result<(), String> {
    let fits = !tenant.is_empty()
        && tenant.len() <= 64
        && tenant.bytes().all(|byte| {
            byte.is_ascii_lowercase() || byte.is_ascii_digit() || matches!(byte, b'-' | b'_' | b'.')
        });
    if fits {
        Ok(())
    } else {
        Err(format!(
            "tenant {tenant:?} is not a tenant name: use 1-64 of a-z, 0-9, '-', '_', '.'"
        ))
    }
}

/// `len` random bytes from the operating system, as lowercase hex.
pub(crate) fn random_hex(len: usize) -> Result<String> {
    let mut bytes = vec![0_u8; len];
    getrandom::fill(&mut bytes)
        .map_err(|error| StoreError::System(format!("no randomness from the system: {error}")))?;
    Ok(hex(&bytes))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn secret_hash(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

const TOKEN_COLUMNS: &str = "id, tenant, label, created_ms, revoked_ms";

macro_rules! token_record {
    ($row:expr) => {{
        let row = &$row;
        TokenRecord {
            id: row.try_get("id")?,
            tenant: row.try_get("tenant")?,
            label: row.try_get("label")?,
            created_ms: row.try_get("created_ms")?,
            revoked_ms: row.try_get("revoked_ms")?,
        }
    }};
}

impl Store {
    /// Makes a token for `tenant`; returns it and its secret, which is not kept and cannot be
    /// shown again.
    pub async fn create_token(&self, tenant: &str, label: &str) -> Result<(TokenRecord, String)> {
        check_tenant(tenant).map_err(StoreError::Invalid)?;
        // 256 bits: a hash lookup of a guess is as good as a brute-force search.
        let secret = format!("{TOKEN_PREFIX}{}", random_hex(32)?);
        let id = format!("k{}", random_hex(6)?);
        let now = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            sqlx::query(
                "INSERT INTO tokens (id, tenant, label, secret_sha256, created_ms) \
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(&id)
            .bind(tenant)
            .bind(label)
            .bind(secret_hash(&secret))
            .bind(now)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        let record = TokenRecord {
            id,
            tenant: tenant.to_owned(),
            label: label.to_owned(),
            created_ms: now,
            revoked_ms: None,
        };
        Ok((record, secret))
    }

    /// Every token, revoked ones included, oldest first.
    pub async fn list_tokens(&self) -> Result<Vec<TokenRecord>> {
        on_pool!(self, pool => {
            let sql = sqlx::AssertSqlSafe(format!(
                "SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_ms, id"
            ));
            let rows = sqlx::query(sql).fetch_all(pool).await?;
            let mut tokens = Vec::with_capacity(rows.len());
            for row in rows {
                tokens.push(token_record!(row));
            }
            Ok(tokens)
        })
    }

    /// Revokes token `id`: its secret is refused from now on. Revoking twice is not an error.
    pub async fn revoke_token(&self, id: &str) -> Result<TokenRecord> {
        let now = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            let sql = sqlx::AssertSqlSafe(format!(
                "UPDATE tokens SET revoked_ms = COALESCE(revoked_ms, $2) WHERE id = $1 \
                 RETURNING {TOKEN_COLUMNS}"
            ));
            let row = sqlx::query(sql)
                .bind(id)
                .bind(now)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or_else(|| StoreError::Invalid(format!(
                    "no token {id:?}: `plumb token list` shows the tokens there are"
                )))?;
            let record = token_record!(row);
            tx.commit().await?;
            Ok(record)
        })
    }

    /// The tenant a bearer secret acts for; none when it is unknown or revoked.
    pub async fn tenant_for_token(&self, secret: &str) -> Result<Option<String>> {
        if !secret.starts_with(TOKEN_PREFIX) {
            return Ok(None);
        }
        on_pool!(self, pool => {
            let row = sqlx::query(
                "SELECT tenant FROM tokens WHERE secret_sha256 = $1 AND revoked_ms IS NULL",
            )
            .bind(secret_hash(secret))
            .fetch_optional(pool)
            .await?;
            match row {
                Some(row) => Ok(Some(row.try_get("tenant")?)),
                None => Ok(None),
            }
        })
    }
}
