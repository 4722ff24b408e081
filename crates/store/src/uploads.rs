//! Archives a tenant uploads for its tasks, kept in the database so that a worker on another
//! machine reads the same bytes the server received.

use sha2::{Digest as _, Sha256};
use sqlx::Row as _;

use crate::error::{Result, StoreError};
use crate::pool::{BeginWrite as _, on_pool};
use crate::tokens::{hex, random_hex};
use crate::{Store, now_ms};

/// An upload as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UploadRecord {
    pub id: String,
    pub sha256: String,
    pub size: i64,
    pub created_ms: i64,
}

impl Store {
    /// Keeps `content` for `tenant`; returns its record (the id a task names it by).
    pub async fn put_upload(&self, tenant: &str, content: &[u8]) -> Result<UploadRecord> {
        // Not guessable: an id alone never reaches another tenant's bytes (reads check the
        // tenant too), and ids in logs say nothing about one another.
        let id = format!("u{}", random_hex(12)?);
        let sha256 = hex(&Sha256::digest(content));
        let size = i64::try_from(content.len()).unwrap_or(i64::MAX);
        let now = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            sqlx::query(
                "INSERT INTO uploads (id, tenant, sha256, size, content, created_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(&id)
            .bind(tenant)
            .bind(&sha256)
            .bind(size)
            .bind(content)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(UploadRecord {
            id,
            sha256,
            size,
            created_ms: now,
        })
    }

    /// The tenant's upload `id` and its bytes.
    pub async fn upload(&self, tenant: &str, id: &str) -> Result<(UploadRecord, Vec<u8>)> {
        on_pool!(self, pool => {
            let row = sqlx::query(
                "SELECT id, sha256, size, content, created_ms FROM uploads \
                 WHERE id = $1 AND tenant = $2",
            )
            .bind(id)
            .bind(tenant)
            .fetch_optional(pool)
            .await?
            .ok_or_else(|| StoreError::UploadNotFound(id.to_owned()))?;
            let record = UploadRecord {
                id: row.try_get("id")?,
                sha256: row.try_get("sha256")?,
                size: row.try_get("size")?,
                created_ms: row.try_get("created_ms")?,
            };
            Ok((record, row.try_get("content")?))
        })
    }

    /// Forgets the tenant's upload `id` (a task that named it has been unpacked).
    pub async fn delete_upload(&self, tenant: &str, id: &str) -> Result<()> {
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            sqlx::query("DELETE FROM uploads WHERE id = $1 AND tenant = $2")
                .bind(id)
                .bind(tenant)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(())
        })
    }
}
