//! The store's side of the job queue's bookkeeping: when a task's job was last pushed and last
//! taken. A queued task whose last take is newer than its last push has no job on the queue — a
//! push failed after it was queued again (a tenant at its limit, a worker that stopped, the sweep
//! of a dead worker's task) — and would wait forever; [`Store::unqueued`] finds those for the
//! sweep to push again. A job pushed twice is harmless: the claim runs a task once.

use std::time::Duration;

use sqlx::Row as _;

use crate::Store;
use crate::error::Result;
use crate::now_ms;
use crate::pool::on_pool;

impl Store {
    /// Notes that a job for task `id` was put on the queue just now.
    pub async fn mark_pushed(&self, id: &str) -> Result<()> {
        self.mark("UPDATE tasks SET pushed_ms = $2 WHERE id = $1", id)
            .await
    }

    /// Notes that a job for queued task `id` was taken off the queue just now (whatever its claim
    /// answers, that job is spent).
    pub async fn mark_taken(&self, id: &str) -> Result<()> {
        self.mark(
            "UPDATE tasks SET taken_ms = $2 WHERE id = $1 AND state = 'queued'",
            id,
        )
        .await
    }

    async fn mark(&self, sql: &'static str, id: &str) -> Result<()> {
        let now = now_ms();
        on_pool!(self, pool => {
            sqlx::query(sql).bind(id).bind(now).execute(pool).await?;
        });
        Ok(())
    }

    /// The queued tasks of job queue `queue` with no job on it: never pushed, or taken since the
    /// last push, for longer than `grace` (a push in flight is not raced).
    pub async fn unqueued(&self, queue: &str, grace: Duration) -> Result<Vec<String>> {
        let grace_ms = i64::try_from(grace.as_millis()).unwrap_or(i64::MAX);
        let cutoff = now_ms().saturating_sub(grace_ms);
        on_pool!(self, pool => {
            let rows = sqlx::query(
                "SELECT id FROM tasks WHERE state = 'queued' AND queue = $1 \
                 AND (pushed_ms IS NULL OR (taken_ms IS NOT NULL AND pushed_ms <= taken_ms)) \
                 AND COALESCE(taken_ms, created_ms) < $2 ORDER BY id",
            )
            .bind(queue)
            .bind(cutoff)
            .fetch_all(pool)
            .await?;
            rows.iter().map(|row| Ok(row.try_get::<String, _>("id")?)).collect()
        })
    }
}
