//! Workers and their attempts: claim a task, heartbeat, move it along, finish it; and the sweep
//! that retries (or fails) a task whose worker stopped sending heartbeats.

use std::time::Duration;

use sqlx::Row as _;

use crate::error::{Result, StoreError};
use crate::pool::{BeginWrite as _, on_pool};
use crate::records::{AttemptEnd, AttemptRecord, Claim, Signals};
use crate::rows::{append_event, state_event};
use crate::state::TaskState;
use crate::{Store, now_ms};

/// Refuses (`TenantBusy`) a new attempt on a task of `$tenant` while the tenant's other tasks
/// running reach its `max_running`. The limit's row is updated (to itself) first: on PostgreSQL
/// that locks it, so two workers claiming the same tenant's tasks at once count one after the
/// other (SQLite's write transactions already run one at a time).
macro_rules! check_running_limit {
    ($tx:ident, $tenant:expr, $id:expr) => {{
        let limit = sqlx::query(
            "UPDATE tenant_limits SET updated_ms = updated_ms WHERE tenant = $1 \
             RETURNING max_running",
        )
        .bind($tenant)
        .fetch_optional(&mut *$tx)
        .await?;
        let limit: Option<i64> = match limit {
            Some(row) => row.try_get("max_running")?,
            None => None,
        };
        if let Some(limit) = limit {
            let running: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM tasks WHERE tenant = $1 AND id <> $2 \
                 AND state IN ('preparing', 'running', 'checking', 'reviewing')",
            )
            .bind($tenant)
            .bind($id)
            .fetch_one(&mut *$tx)
            .await?;
            if running >= limit {
                return Err(StoreError::TenantBusy {
                    tenant: $tenant.to_owned(),
                    running,
                });
            }
        }
    }};
}

fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)
}

impl Store {
    /// Takes task `id` for `worker` on a new attempt, the task `preparing`. A queued task is taken
    /// at once. A live task is taken only when its attempt's last heartbeat is older than `lease`
    /// (its worker is taken for dead; that attempt ends `lost`); while the heartbeat is fresh the
    /// answer is `Held`, so a long run is never run twice. A task out of attempts is failed with
    /// the reason instead (one a person asked to cancel, cancelled), and the answer is
    /// `WrongState` with that state.
    pub async fn claim(&self, id: &str, worker: &str, lease: Duration) -> Result<Claim> {
        let now = now_ms();
        let (claim, exhausted) = on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            let row = sqlx::query(
                "UPDATE tasks SET updated_ms = updated_ms WHERE id = $1 \
                 RETURNING tenant, state, attempt, max_attempts, cancel_requested_ms",
            )
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
            let state = crate::rows::state(id, &row.try_get::<String, _>("state")?)?;
            let attempt: i64 = row.try_get("attempt")?;
            let max_attempts: i64 = row.try_get("max_attempts")?;
            let cancelled = row.try_get::<Option<i64>, _>("cancel_requested_ms")?.is_some();
            let mut exhausted = None;
            if state.is_live() {
                let holder = sqlx::query(
                    "SELECT worker, heartbeat_ms FROM attempts WHERE task_id = $1 AND number = $2",
                )
                .bind(id)
                .bind(attempt)
                .fetch_optional(&mut *tx)
                .await?;
                let (holder, heartbeat_ms) = match holder {
                    Some(row) => (row.try_get::<String, _>("worker")?, row.try_get::<i64, _>("heartbeat_ms")?),
                    None => (String::new(), 0),
                };
                let age_ms = now.saturating_sub(heartbeat_ms);
                if age_ms < lease_ms(lease) {
                    return Err(StoreError::Held { task: id.to_owned(), worker: holder, age_ms });
                }
                let reason = format!(
                    "worker {holder} sent no heartbeat for {} s",
                    age_ms / 1000
                );
                sqlx::query(
                    "UPDATE attempts SET finished_ms = $3, outcome = 'lost', reason = $4 \
                     WHERE task_id = $1 AND number = $2",
                )
                .bind(id)
                .bind(attempt)
                .bind(now)
                .bind(&reason)
                .execute(&mut *tx)
                .await?;
                if cancelled {
                    exhausted = Some((TaskState::Cancelled, format!("{reason}; cancelled by a person")));
                } else if attempt >= max_attempts {
                    let reason = format!("{reason}; no attempts left ({attempt} of {max_attempts})");
                    exhausted = Some((TaskState::Failed, reason));
                }
            } else if state != TaskState::Queued {
                return Err(StoreError::WrongState {
                    task: id.to_owned(),
                    state,
                    wanted: TaskState::Preparing,
                });
            }
            if let Some((end, reason)) = exhausted {
                let outcome = if end == TaskState::Cancelled { "cancelled" } else { "infra_error" };
                sqlx::query(
                    "UPDATE tasks SET state = $2, outcome = $3, reason = $4, \
                     cancel_requested_ms = NULL, updated_ms = $5 WHERE id = $1",
                )
                .bind(id)
                .bind(end.as_str())
                .bind(outcome)
                .bind(&reason)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                append_event!(tx, id, -1, "state", state_event(end, Some(&reason)), now)?;
                tx.commit().await?;
                (None, Some(end))
            } else {
                let tenant: String = row.try_get("tenant")?;
                check_running_limit!(tx, &tenant, id);
                let number = attempt + 1;
                sqlx::query("UPDATE tasks SET state = $2, attempt = $3, updated_ms = $4 WHERE id = $1")
                    .bind(id)
                    .bind(TaskState::Preparing.as_str())
                    .bind(number)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(
                    "INSERT INTO attempts (task_id, number, worker, started_ms, heartbeat_ms) \
                     VALUES ($1, $2, $3, $4, $4)",
                )
                .bind(id)
                .bind(number)
                .bind(worker)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                let body = serde_json::json!({
                    "state": TaskState::Preparing, "attempt": number, "worker": worker,
                })
                .to_string();
                append_event!(tx, id, number, "state", body, now)?;
                tx.commit().await?;
                (Some(Claim { task_id: id.to_owned(), attempt: number, worker: worker.to_owned() }), None)
            }
        });
        match (claim, exhausted) {
            (Some(claim), _) => Ok(claim),
            (None, end) => Err(StoreError::WrongState {
                task: id.to_owned(),
                state: end.unwrap_or(TaskState::Failed),
                wanted: TaskState::Preparing,
            }),
        }
    }

    /// The worker's sign of life for its attempt; brings back whether a person asked to cancel.
    /// `StaleAttempt` when the attempt is no longer current: the worker must stop.
    pub async fn heartbeat(&self, claim: &Claim) -> Result<Signals> {
        let now = now_ms();
        on_pool!(self, pool => {
            let alive = sqlx::query(
                "UPDATE attempts SET heartbeat_ms = $3 WHERE task_id = $1 AND number = $2 \
                 AND worker = $4 AND finished_ms IS NULL \
                 AND number = (SELECT attempt FROM tasks WHERE id = $1) RETURNING number",
            )
            .bind(&claim.task_id)
            .bind(claim.attempt)
            .bind(now)
            .bind(&claim.worker)
            .fetch_optional(pool)
            .await?;
            if alive.is_none() {
                return Err(StoreError::StaleAttempt { task: claim.task_id.clone(), attempt: claim.attempt });
            }
            let row = sqlx::query("SELECT cancel_requested_ms FROM tasks WHERE id = $1")
                .bind(&claim.task_id)
                .fetch_one(pool)
                .await?;
            let cancel: Option<i64> = row.try_get("cancel_requested_ms")?;
            Ok(Signals { cancel_requested: cancel.is_some() })
        })
    }

    /// Moves a claimed task along its run (`running`, `checking`, `reviewing`).
    pub async fn advance(&self, claim: &Claim, to: TaskState) -> Result<()> {
        if !matches!(
            to,
            TaskState::Running | TaskState::Checking | TaskState::Reviewing
        ) {
            return Err(StoreError::WrongState {
                task: claim.task_id.clone(),
                state: TaskState::Running,
                wanted: to,
            });
        }
        self.move_claimed(claim, to, None, None, None).await
    }

    /// Ends the claimed attempt: `awaiting_approval` with the diff's SHA-256, or `failed`,
    /// `cancelled` or (an eval's attempt) `scored`, with the engine's outcome and reason.
    pub async fn finish(&self, claim: &Claim, end: &AttemptEnd) -> Result<()> {
        let allowed = match end.state {
            TaskState::AwaitingApproval => end.diff_sha256.is_some(),
            TaskState::Failed | TaskState::Cancelled | TaskState::Scored => true,
            _ => false,
        };
        if !allowed {
            return Err(StoreError::WrongState {
                task: claim.task_id.clone(),
                state: TaskState::Running,
                wanted: end.state,
            });
        }
        self.move_claimed(
            claim,
            end.state,
            Some(end.outcome.as_str()),
            end.reason.as_deref(),
            end.diff_sha256.as_deref(),
        )
        .await
    }

    async fn move_claimed(
        &self,
        claim: &Claim,
        to: TaskState,
        outcome: Option<&str>,
        reason: Option<&str>,
        diff_sha256: Option<&str>,
    ) -> Result<()> {
        let now = now_ms();
        let id = claim.task_id.as_str();
        let ends = outcome.is_some();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            let row = sqlx::query(
                "UPDATE tasks SET updated_ms = updated_ms WHERE id = $1 RETURNING state, attempt",
            )
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
            let state = crate::rows::state(id, &row.try_get::<String, _>("state")?)?;
            let attempt: i64 = row.try_get("attempt")?;
            if attempt != claim.attempt || !state.is_live() {
                return Err(StoreError::StaleAttempt { task: id.to_owned(), attempt: claim.attempt });
            }
            if !state.may_become(to) {
                return Err(StoreError::WrongState { task: id.to_owned(), state, wanted: to });
            }
            if ends {
                sqlx::query(
                    "UPDATE tasks SET state = $2, outcome = $3, reason = $4, diff_sha256 = $5, \
                     cancel_requested_ms = NULL, updated_ms = $6 WHERE id = $1",
                )
                .bind(id)
                .bind(to.as_str())
                .bind(outcome)
                .bind(reason)
                .bind(diff_sha256)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                sqlx::query(
                    "UPDATE attempts SET finished_ms = $3, outcome = $4, reason = $5 \
                     WHERE task_id = $1 AND number = $2",
                )
                .bind(id)
                .bind(claim.attempt)
                .bind(now)
                .bind(outcome)
                .bind(reason)
                .execute(&mut *tx)
                .await?;
            } else {
                sqlx::query("UPDATE tasks SET state = $2, updated_ms = $3 WHERE id = $1")
                    .bind(id)
                    .bind(to.as_str())
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
            }
            append_event!(tx, id, claim.attempt, "state", state_event(to, reason), now)?;
            tx.commit().await?;
            Ok(())
        })
    }

    /// Gives a claimed task back to the queue: its worker is stopping (SIGTERM, Ctrl-C) and a
    /// person did not ask to cancel. The attempt ends `stopped`; the task is `queued` for a fresh
    /// attempt while it has attempts left, else `failed` with the reason.
    pub async fn release(&self, claim: &Claim, reason: &str) -> Result<TaskState> {
        let now = now_ms();
        let id = claim.task_id.as_str();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            let row = sqlx::query(
                "UPDATE tasks SET updated_ms = updated_ms WHERE id = $1 \
                 RETURNING state, attempt, max_attempts",
            )
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
            let state = crate::rows::state(id, &row.try_get::<String, _>("state")?)?;
            let attempt: i64 = row.try_get("attempt")?;
            let max_attempts: i64 = row.try_get("max_attempts")?;
            if attempt != claim.attempt || !state.is_live() {
                return Err(StoreError::StaleAttempt { task: id.to_owned(), attempt: claim.attempt });
            }
            sqlx::query(
                "UPDATE attempts SET finished_ms = $3, outcome = 'stopped', reason = $4 \
                 WHERE task_id = $1 AND number = $2",
            )
            .bind(id)
            .bind(attempt)
            .bind(now)
            .bind(reason)
            .execute(&mut *tx)
            .await?;
            let (next, outcome, reason) = if attempt < max_attempts {
                (TaskState::Queued, None, format!("{reason}; retried on a fresh workspace"))
            } else {
                let reason = format!("{reason}; no attempts left ({attempt} of {max_attempts})");
                (TaskState::Failed, Some("infra_error"), reason)
            };
            sqlx::query(
                "UPDATE tasks SET state = $2, outcome = $3, reason = $4, updated_ms = $5 WHERE id = $1",
            )
            .bind(id)
            .bind(next.as_str())
            .bind(outcome)
            .bind(&reason)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            append_event!(tx, id, -1, "state", state_event(next, Some(&reason)), now)?;
            tx.commit().await?;
            Ok(next)
        })
    }

    /// Every live task of job queue `queue` whose attempt's heartbeat is older than `lease`: back to `queued` for a
    /// fresh attempt while it has attempts left, else `failed` with the reason. Returns the tasks
    /// it moved and where to, so the caller can put the queued ones back on the job queue.
    pub async fn sweep_lost(
        &self,
        queue: &str,
        lease: Duration,
    ) -> Result<Vec<(String, TaskState)>> {
        let cutoff = now_ms().saturating_sub(lease_ms(lease));
        let stale: Vec<String> = on_pool!(self, pool => {
            let rows = sqlx::query(
                "SELECT t.id FROM tasks t JOIN attempts a ON a.task_id = t.id AND a.number = t.attempt \
                 WHERE t.state IN ('preparing', 'running', 'checking', 'reviewing') \
                 AND a.heartbeat_ms < $1 AND t.queue = $2 ORDER BY t.id",
            )
            .bind(cutoff)
            .bind(queue)
            .fetch_all(pool)
            .await?;
            let mut ids = Vec::with_capacity(rows.len());
            for row in rows {
                ids.push(row.try_get::<String, _>("id")?);
            }
            ids
        });
        let mut moved = Vec::new();
        for id in stale {
            if let Some(state) = self.requeue_if_lost(&id, lease).await? {
                moved.push((id, state));
            }
        }
        Ok(moved)
    }

    /// One task of the sweep, checked again inside its own transaction (a heartbeat may have come
    /// meanwhile).
    async fn requeue_if_lost(&self, id: &str, lease: Duration) -> Result<Option<TaskState>> {
        let now = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            let row = sqlx::query(
                "UPDATE tasks SET updated_ms = updated_ms WHERE id = $1 \
                 RETURNING tenant, state, attempt, max_attempts, cancel_requested_ms",
            )
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
            let state = crate::rows::state(id, &row.try_get::<String, _>("state")?)?;
            let attempt: i64 = row.try_get("attempt")?;
            let max_attempts: i64 = row.try_get("max_attempts")?;
            let holder = sqlx::query(
                "SELECT worker, heartbeat_ms FROM attempts WHERE task_id = $1 AND number = $2",
            )
            .bind(id)
            .bind(attempt)
            .fetch_one(&mut *tx)
            .await?;
            let worker: String = holder.try_get("worker")?;
            let age_ms = now.saturating_sub(holder.try_get::<i64, _>("heartbeat_ms")?);
            if !state.is_live() || age_ms < lease_ms(lease) {
                return Ok(None);
            }
            let lost = format!("worker {worker} sent no heartbeat for {} s", age_ms / 1000);
            sqlx::query(
                "UPDATE attempts SET finished_ms = $3, outcome = 'lost', reason = $4 \
                 WHERE task_id = $1 AND number = $2",
            )
            .bind(id)
            .bind(attempt)
            .bind(now)
            .bind(&lost)
            .execute(&mut *tx)
            .await?;
            let cancelled = row.try_get::<Option<i64>, _>("cancel_requested_ms")?.is_some();
            let (next, reason) = if cancelled {
                (TaskState::Cancelled, format!("{lost}; cancelled by a person"))
            } else if attempt < max_attempts {
                (TaskState::Queued, format!("{lost}; retried on a fresh workspace"))
            } else {
                (TaskState::Failed, format!("{lost}; no attempts left ({attempt} of {max_attempts})"))
            };
            let outcome = match next {
                TaskState::Failed => Some("infra_error"),
                TaskState::Cancelled => Some("cancelled"),
                _ => None,
            };
            sqlx::query(
                "UPDATE tasks SET state = $2, outcome = $3, reason = $4, cancel_requested_ms = NULL, \
                 updated_ms = $5 WHERE id = $1",
            )
            .bind(id)
            .bind(next.as_str())
            .bind(outcome)
            .bind(&reason)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            append_event!(tx, id, -1, "state", state_event(next, Some(&reason)), now)?;
            tx.commit().await?;
            Ok(Some(next))
        })
    }

    /// The task's attempts, first to last.
    pub async fn attempts(&self, tenant: &str, id: &str) -> Result<Vec<AttemptRecord>> {
        self.task(tenant, id).await?;
        on_pool!(self, pool => {
            let rows = sqlx::query(
                "SELECT task_id, number, worker, started_ms, heartbeat_ms, finished_ms, outcome, \
                 reason FROM attempts WHERE task_id = $1 ORDER BY number",
            )
            .bind(id)
            .fetch_all(pool)
            .await?;
            let mut attempts = Vec::with_capacity(rows.len());
            for row in rows {
                attempts.push(AttemptRecord {
                    task_id: row.try_get("task_id")?,
                    number: row.try_get("number")?,
                    worker: row.try_get("worker")?,
                    started_ms: row.try_get("started_ms")?,
                    heartbeat_ms: row.try_get("heartbeat_ms")?,
                    finished_ms: row.try_get("finished_ms")?,
                    outcome: row.try_get("outcome")?,
                    reason: row.try_get("reason")?,
                });
            }
            Ok(attempts)
        })
    }
}
