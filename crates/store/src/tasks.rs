//! Tasks as a tenant sees them: queue one, read one, list them, and a person's decisions —
//! approve the diff with a given SHA-256, reject, roll back, cancel.

use sqlx::Row as _;

use crate::error::{Result, StoreError};
use crate::pool::{BeginWrite as _, on_pool};
use crate::records::{NewTask, PageCursor, TaskFilter, TaskPage, TaskRecord};
use crate::rows::{TASK_COLUMNS, append_event, state_event, task_record};
use crate::state::TaskState;
use crate::{Store, new_task_id, now_ms};

/// A person's decision on a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Approve the diff whose SHA-256 the person was shown.
    Approve {
        sha256: String,
    },
    Reject,
    /// Discard a change waiting for approval, or mark an applied one undone.
    RollBack,
}

impl Decision {
    fn state(&self) -> TaskState {
        match self {
            Decision::Approve { .. } => TaskState::Approved,
            Decision::Reject => TaskState::Rejected,
            Decision::RollBack => TaskState::RolledBack,
        }
    }
}

const DEFAULT_PAGE: i64 = 50;
const MAX_PAGE: i64 = 500;

impl Store {
    /// Queues a task; its first event is `state` `queued`.
    pub async fn create_task(&self, new: &NewTask) -> Result<TaskRecord> {
        let now = now_ms();
        let id = new_task_id(now);
        let spec = new.spec.to_string();
        let max_attempts = new.max_attempts.max(1);
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            sqlx::query(
                "INSERT INTO tasks (id, tenant, queue, state, title, spec, attempt, max_attempts, \
                 next_seq, created_ms, updated_ms) \
                 VALUES ($1, $2, $8, $3, $4, $5, 0, $6, 0, $7, $7)",
            )
            .bind(&id)
            .bind(&new.tenant)
            .bind(TaskState::Queued.as_str())
            .bind(&new.title)
            .bind(&spec)
            .bind(max_attempts)
            .bind(now)
            .bind(&new.queue)
            .execute(&mut *tx)
            .await?;
            append_event!(tx, &id, -1, "state", state_event(TaskState::Queued, None), now)?;
            tx.commit().await?;
        });
        self.task(&new.tenant, &id).await
    }

    /// The tenant's task `id`; another tenant's task is `NotFound` too.
    pub async fn task(&self, tenant: &str, id: &str) -> Result<TaskRecord> {
        self.task_any_tenant(id)
            .await?
            .filter(|task| task.tenant == tenant)
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))
    }

    /// Task `id` whoever owns it: for workers, which act for the server, never for a client.
    pub async fn task_any_tenant(&self, id: &str) -> Result<Option<TaskRecord>> {
        on_pool!(self, pool => {
            let sql = sqlx::AssertSqlSafe(format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1"));
            let row = sqlx::query(sql).bind(id).fetch_optional(pool).await?;
            match row {
                Some(row) => Ok(Some(task_record!(row))),
                None => Ok(None),
            }
        })
    }

    /// The tenant's newest task titled `title` (an eval's attempt is found again this way when the
    /// eval resumes).
    pub async fn task_titled(&self, tenant: &str, title: &str) -> Result<Option<TaskRecord>> {
        on_pool!(self, pool => {
            let sql = sqlx::AssertSqlSafe(format!(
                "SELECT {TASK_COLUMNS} FROM tasks WHERE tenant = $1 AND title = $2 \
                 ORDER BY created_ms DESC, id DESC LIMIT 1"
            ));
            let row = sqlx::query(sql).bind(tenant).bind(title).fetch_optional(pool).await?;
            match row {
                Some(row) => Ok(Some(task_record!(row))),
                None => Ok(None),
            }
        })
    }

    /// A page of the tenant's tasks, newest first, in one state if the filter names one.
    pub async fn list_tasks(&self, tenant: &str, filter: &TaskFilter) -> Result<TaskPage> {
        let limit = match filter.limit {
            0 => DEFAULT_PAGE,
            limit => limit.clamp(1, MAX_PAGE),
        };
        let state = filter.state.map(TaskState::as_str);
        let (before_ms, before_id) = match &filter.before {
            Some(cursor) => (Some(cursor.created_ms), Some(cursor.id.clone())),
            None => (None, None),
        };
        let mut tasks = on_pool!(self, pool => {
            let sql = sqlx::AssertSqlSafe(format!(
                "SELECT {TASK_COLUMNS} FROM tasks WHERE tenant = $1 \
                 AND ($2 IS NULL OR state = $2) \
                 AND ($3 IS NULL OR created_ms < $3 OR (created_ms = $3 AND id < $4)) \
                 ORDER BY created_ms DESC, id DESC LIMIT $5"
            ));
            let rows = sqlx::query(sql)
                .bind(tenant)
                .bind(state)
                .bind(before_ms)
                .bind(before_id)
                .bind(limit + 1)
                .fetch_all(pool)
                .await?;
            let mut tasks = Vec::with_capacity(rows.len());
            for row in rows {
                tasks.push(task_record!(row));
            }
            tasks
        });
        let more = tasks.len() > usize::try_from(limit).unwrap_or(usize::MAX);
        tasks.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        let next = match tasks.last() {
            Some(last) if more => Some(PageCursor {
                created_ms: last.created_ms,
                id: last.id.clone(),
            }),
            _ => None,
        };
        Ok(TaskPage { tasks, next })
    }

    /// A person's decision. Approval is refused unless the task awaits approval and `sha256` is
    /// the stored diff's; each decision is a `state` event.
    pub async fn decide(&self, tenant: &str, id: &str, decision: &Decision) -> Result<TaskRecord> {
        self.decide_noting(tenant, id, decision, None).await
    }

    /// [`Store::decide`], with `note` (what the decision did, such as where a change was
    /// applied) as the `reason` of its `state` event.
    pub async fn decide_noting(
        &self,
        tenant: &str,
        id: &str,
        decision: &Decision,
        note: Option<&str>,
    ) -> Result<TaskRecord> {
        let wanted = decision.state();
        let now = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            let row = sqlx::query(
                "UPDATE tasks SET updated_ms = updated_ms WHERE id = $1 AND tenant = $2 \
                 RETURNING state, diff_sha256",
            )
            .bind(id)
            .bind(tenant)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
            let state = crate::rows::state(id, &row.try_get::<String, _>("state")?)?;
            if !state.may_become(wanted) {
                return Err(StoreError::WrongState { task: id.to_owned(), state, wanted });
            }
            if let Decision::Approve { sha256 } = decision {
                let stored: Option<String> = row.try_get("diff_sha256")?;
                if stored.as_deref() != Some(sha256.as_str()) {
                    return Err(StoreError::ShaMismatch {
                        task: id.to_owned(),
                        stored: stored.unwrap_or_else(|| "(none)".to_owned()),
                        given: sha256.clone(),
                    });
                }
            }
            sqlx::query("UPDATE tasks SET state = $2, updated_ms = $3 WHERE id = $1")
                .bind(id)
                .bind(wanted.as_str())
                .bind(now)
                .execute(&mut *tx)
                .await?;
            append_event!(tx, id, -1, "state", state_event(wanted, note), now)?;
            tx.commit().await?;
        });
        self.task(tenant, id).await
    }

    /// Cancels a task: at once when it is queued or awaiting approval; a live one is flagged, and
    /// its worker (which reads the flag with every heartbeat) ends the run rolled back and reports
    /// `cancelled`. Returns the task as it is after the call.
    pub async fn request_cancel(&self, tenant: &str, id: &str) -> Result<TaskRecord> {
        let now = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            let row = sqlx::query(
                "UPDATE tasks SET updated_ms = updated_ms WHERE id = $1 AND tenant = $2 \
                 RETURNING state, cancel_requested_ms",
            )
            .bind(id)
            .bind(tenant)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
            let state = crate::rows::state(id, &row.try_get::<String, _>("state")?)?;
            let already: Option<i64> = row.try_get("cancel_requested_ms")?;
            if state.is_live() {
                if already.is_none() {
                    sqlx::query("UPDATE tasks SET cancel_requested_ms = $2 WHERE id = $1")
                        .bind(id)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                    let body = serde_json::json!({ "state": state }).to_string();
                    append_event!(tx, id, -1, "cancel_requested", body, now)?;
                }
            } else if state.may_become(TaskState::Cancelled) {
                sqlx::query("UPDATE tasks SET state = $2, updated_ms = $3 WHERE id = $1")
                    .bind(id)
                    .bind(TaskState::Cancelled.as_str())
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                let body = state_event(TaskState::Cancelled, Some("cancelled by a person"));
                append_event!(tx, id, -1, "state", body, now)?;
            } else {
                return Err(StoreError::WrongState {
                    task: id.to_owned(),
                    state,
                    wanted: TaskState::Cancelled,
                });
            }
            tx.commit().await?;
        });
        self.task(tenant, id).await
    }
}
