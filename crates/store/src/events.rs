//! A task's events: appended by its worker while the attempt is current, read back in order from
//! any sequence number (what a resumed event stream asks for).

use sqlx::Row as _;

use crate::error::Result;
use crate::pool::{BeginWrite as _, on_pool};
use crate::records::{Claim, EventRecord};
use crate::rows::append_event;
use crate::{Store, now_ms};

/// The most events one read returns.
const MAX_READ: i64 = 1000;

impl Store {
    /// Appends an event of the claimed attempt; returns its sequence number. `StaleAttempt` when
    /// the attempt is no longer the task's current one (what a late finisher writes is dropped).
    pub async fn append_event(
        &self,
        claim: &Claim,
        kind: &str,
        body: &serde_json::Value,
    ) -> Result<i64> {
        let now = now_ms();
        let text = body.to_string();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            let seq = append_event!(tx, &claim.task_id, claim.attempt, kind, text, now)?;
            tx.commit().await?;
            Ok(seq)
        })
    }

    /// The tenant's task's events after `after` (0 for all), in order, at most `limit` (1–1000).
    pub async fn events(
        &self,
        tenant: &str,
        id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<EventRecord>> {
        self.task(tenant, id).await?;
        let limit = limit.clamp(1, MAX_READ);
        on_pool!(self, pool => {
            let rows = sqlx::query(
                "SELECT task_id, seq, attempt, at_ms, kind, body FROM events \
                 WHERE task_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            )
            .bind(id)
            .bind(after)
            .bind(limit)
            .fetch_all(pool)
            .await?;
            let mut events = Vec::with_capacity(rows.len());
            for row in rows {
                let body: String = row.try_get("body")?;
                events.push(EventRecord {
                    task_id: row.try_get("task_id")?,
                    seq: row.try_get("seq")?,
                    attempt: row.try_get("attempt")?,
                    at_ms: row.try_get("at_ms")?,
                    kind: row.try_get("kind")?,
                    body: crate::rows::json(id, "an event", &body)?,
                });
            }
            Ok(events)
        })
    }
}
