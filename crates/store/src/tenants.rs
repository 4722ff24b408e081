//! What an operator allows each tenant — tasks running at once, rounds per task, dollars per
//! task — and the model keys a tenant brings (sealed by `secrets.rs`; listed without the key).

use sqlx::Row as _;

use crate::error::{Result, StoreError};
use crate::pool::{BeginWrite as _, on_pool};
use crate::secrets::{ModelKey, SecretKey, check_model_key, check_provider};
use crate::tokens::check_tenant;
use crate::{Store, now_ms};

/// A tenant's limits; `None` leaves the server's own.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct TenantLimits {
    /// Tasks of the tenant preparing, running, checking or reviewing at once, over all workers.
    pub max_running: Option<i64>,
    /// Rounds per task.
    pub max_rounds: Option<i64>,
    /// Estimated dollars per task.
    pub max_usd: Option<f64>,
}

impl TenantLimits {
    fn check(&self) -> Result<(), String> {
        if self.max_running.is_some_and(|n| n < 1) || self.max_rounds.is_some_and(|n| n < 1) {
            return Err("max_running and max_rounds are at least 1 when given".to_owned());
        }
        if self
            .max_usd
            .is_some_and(|usd| !usd.is_finite() || usd <= 0.0)
        {
            return Err("max_usd is a positive number of dollars when given".to_owned());
        }
        Ok(())
    }
}

/// A model key as listed: which provider, since when; never the key.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ModelKeyRecord {
    pub provider: String,
    pub updated_ms: i64,
}

impl Store {
    /// Sets `tenant`'s limits (all three: a `None` clears that one).
    pub async fn set_tenant_limits(&self, tenant: &str, limits: &TenantLimits) -> Result<()> {
        check_tenant(tenant).map_err(StoreError::Invalid)?;
        limits.check().map_err(StoreError::Invalid)?;
        let now = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            sqlx::query(
                "INSERT INTO tenant_limits (tenant, max_running, max_rounds, max_usd, updated_ms) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant) DO UPDATE SET \
                 max_running = $2, max_rounds = $3, max_usd = $4, updated_ms = $5",
            )
            .bind(tenant)
            .bind(limits.max_running)
            .bind(limits.max_rounds)
            .bind(limits.max_usd)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// `tenant`'s limits (none set: all `None`).
    pub async fn tenant_limits(&self, tenant: &str) -> Result<TenantLimits> {
        on_pool!(self, pool => {
            let row = sqlx::query(
                "SELECT max_running, max_rounds, max_usd FROM tenant_limits WHERE tenant = $1",
            )
            .bind(tenant)
            .fetch_optional(pool)
            .await?;
            match row {
                Some(row) => Ok(TenantLimits {
                    max_running: row.try_get("max_running")?,
                    max_rounds: row.try_get("max_rounds")?,
                    max_usd: row.try_get("max_usd")?,
                }),
                None => Ok(TenantLimits::default()),
            }
        })
    }

    /// Keeps `key` as `tenant`'s key for `provider`, sealed under `secret` (replacing one set
    /// before).
    pub async fn set_model_key(
        &self,
        tenant: &str,
        provider: &str,
        key: &str,
        secret: &SecretKey,
    ) -> Result<ModelKeyRecord> {
        check_tenant(tenant).map_err(StoreError::Invalid)?;
        check_provider(provider).map_err(StoreError::Invalid)?;
        check_model_key(key).map_err(StoreError::Invalid)?;
        let (nonce, sealed) = secret.seal(tenant, provider, key)?;
        let now = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            sqlx::query(
                "INSERT INTO tenant_keys (tenant, provider, nonce, sealed, updated_ms) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant, provider) DO UPDATE SET \
                 nonce = $3, sealed = $4, updated_ms = $5",
            )
            .bind(tenant)
            .bind(provider)
            .bind(&nonce)
            .bind(&sealed)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(ModelKeyRecord {
            provider: provider.to_owned(),
            updated_ms: now,
        })
    }

    /// The providers `tenant` has a key for.
    pub async fn model_keys(&self, tenant: &str) -> Result<Vec<ModelKeyRecord>> {
        on_pool!(self, pool => {
            let rows = sqlx::query(
                "SELECT provider, updated_ms FROM tenant_keys WHERE tenant = $1 ORDER BY provider",
            )
            .bind(tenant)
            .fetch_all(pool)
            .await?;
            let mut keys = Vec::with_capacity(rows.len());
            for row in rows {
                keys.push(ModelKeyRecord {
                    provider: row.try_get("provider")?,
                    updated_ms: row.try_get("updated_ms")?,
                });
            }
            Ok(keys)
        })
    }

    /// Forgets `tenant`'s key for `provider`; whether there was one.
    pub async fn delete_model_key(&self, tenant: &str, provider: &str) -> Result<bool> {
        check_provider(provider).map_err(StoreError::Invalid)?;
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            let gone = sqlx::query("DELETE FROM tenant_keys WHERE tenant = $1 AND provider = $2")
                .bind(tenant)
                .bind(provider)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.commit().await?;
            Ok(gone > 0)
        })
    }

    /// `tenant`'s key for `provider`, opened with `secret`; `None` when the tenant set none.
    pub async fn model_key(
        &self,
        tenant: &str,
        provider: &str,
        secret: &SecretKey,
    ) -> Result<Option<ModelKey>> {
        let sealed: Option<(Vec<u8>, Vec<u8>)> = on_pool!(self, pool => {
            let row = sqlx::query(
                "SELECT nonce, sealed FROM tenant_keys WHERE tenant = $1 AND provider = $2",
            )
            .bind(tenant)
            .bind(provider)
            .fetch_optional(pool)
            .await?;
            match row {
                Some(row) => Some((row.try_get("nonce")?, row.try_get("sealed")?)),
                None => None,
            }
        });
        sealed
            .map(|(nonce, sealed)| secret.open(tenant, provider, &nonce, &sealed))
            .transpose()
    }

    /// Whether `tenant` has any key stored (a worker without the secret key must not run its
    /// tasks on the operator's keys instead).
    pub async fn has_model_keys(&self, tenant: &str) -> Result<bool> {
        Ok(!self.model_keys(tenant).await?.is_empty())
    }
}
