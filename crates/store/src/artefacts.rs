//! A run's files kept per attempt — the patch, the report, the journal, the review — with their
//! SHA-256, and its figures (rounds, tokens, dollars) on the task; written only while the attempt
//! is current.

use sha2::{Digest as _, Sha256};
use sqlx::Row as _;

use crate::error::{Result, StoreError};
use crate::pool::{BeginWrite as _, on_pool};
use crate::records::{Artefact, ArtefactName, Claim, RunFigures};
use crate::{Store, now_ms};

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

impl Store {
    /// Keeps what the claimed attempt's run spent on its task, for the task list.
    /// `StaleAttempt` when the attempt is no longer current.
    pub async fn set_figures(&self, claim: &Claim, figures: &RunFigures) -> Result<()> {
        let now = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            let done = sqlx::query(
                "UPDATE tasks SET rounds = $3, tokens = $4, cost_usd = $5, updated_ms = $6 \
                 WHERE id = $1 AND attempt = $2",
            )
            .bind(&claim.task_id)
            .bind(claim.attempt)
            .bind(figures.rounds)
            .bind(figures.tokens)
            .bind(figures.usd)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            if done.rows_affected() == 0 {
                return Err(StoreError::StaleAttempt {
                    task: claim.task_id.clone(),
                    attempt: claim.attempt,
                });
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// Keeps `content` as the claimed attempt's artefact `name` (a second write replaces the
    /// first); returns its SHA-256. `StaleAttempt` when the attempt is no longer current.
    pub async fn put_artefact(
        &self,
        claim: &Claim,
        name: ArtefactName,
        content: &[u8],
    ) -> Result<String> {
        let sha256 = sha256_hex(content);
        let now = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            let current = sqlx::query(
                "UPDATE tasks SET updated_ms = $3 WHERE id = $1 AND attempt = $2 RETURNING attempt",
            )
            .bind(&claim.task_id)
            .bind(claim.attempt)
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?;
            if current.is_none() {
                return Err(StoreError::StaleAttempt {
                    task: claim.task_id.clone(),
                    attempt: claim.attempt,
                });
            }
            sqlx::query(
                "INSERT INTO artefacts (task_id, attempt, name, sha256, content) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (task_id, attempt, name) \
                 DO UPDATE SET sha256 = excluded.sha256, content = excluded.content",
            )
            .bind(&claim.task_id)
            .bind(claim.attempt)
            .bind(name.as_str())
            .bind(&sha256)
            .bind(content)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(sha256)
    }

    /// The artefact `name` of the tenant's task's current attempt, if it left one.
    pub async fn artefact(
        &self,
        tenant: &str,
        id: &str,
        name: ArtefactName,
    ) -> Result<Option<Artefact>> {
        let task = self.task(tenant, id).await?;
        on_pool!(self, pool => {
            let row = sqlx::query(
                "SELECT attempt, sha256, content FROM artefacts \
                 WHERE task_id = $1 AND attempt = $2 AND name = $3",
            )
            .bind(id)
            .bind(task.attempt)
            .bind(name.as_str())
            .fetch_optional(pool)
            .await?;
            match row {
                Some(row) => Ok(Some(Artefact {
                    attempt: row.try_get("attempt")?,
                    sha256: row.try_get("sha256")?,
                    content: row.try_get("content")?,
                })),
                None => Ok(None),
            }
        })
    }
}
