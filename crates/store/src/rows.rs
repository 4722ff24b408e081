//! Reading stored rows back into records, the same for both backends.

use crate::error::{Result, StoreError};
use crate::state::TaskState;

pub(crate) fn state(task: &str, name: &str) -> Result<TaskState> {
    TaskState::parse(name).ok_or_else(|| StoreError::Corrupt {
        task: task.to_owned(),
        what: format!("an unknown state {name:?}"),
    })
}

pub(crate) fn json(task: &str, what: &str, text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|error| StoreError::Corrupt {
        task: task.to_owned(),
        what: format!("{what} that is not JSON ({error})"),
    })
}

/// The columns of `tasks`, in the order `task_record!` reads them.
pub(crate) const TASK_COLUMNS: &str = "id, tenant, queue, state, title, spec, attempt, max_attempts, \
     cancel_requested_ms, outcome, reason, diff_sha256, rounds, tokens, cost_usd, created_ms, updated_ms";

/// A `tasks` row as a `TaskRecord`.
macro_rules! task_record {
    ($row:expr) => {{
        use sqlx::Row as _;
        let row = &$row;
        let id: String = row.try_get("id")?;
        let state: String = row.try_get("state")?;
        let spec: String = row.try_get("spec")?;
        $crate::records::TaskRecord {
            state: $crate::rows::state(&id, &state)?,
            spec: $crate::rows::json(&id, "a spec", &spec)?,
            tenant: row.try_get("tenant")?,
            queue: row.try_get("queue")?,
            title: row.try_get("title")?,
            attempt: row.try_get("attempt")?,
            max_attempts: row.try_get("max_attempts")?,
            cancel_requested_ms: row.try_get("cancel_requested_ms")?,
            outcome: row.try_get("outcome")?,
            reason: row.try_get("reason")?,
            diff_sha256: row.try_get("diff_sha256")?,
            figures: $crate::records::RunFigures::from_columns(
                row.try_get("rounds")?,
                row.try_get("tokens")?,
                row.try_get("cost_usd")?,
            ),
            created_ms: row.try_get("created_ms")?,
            updated_ms: row.try_get("updated_ms")?,
            id,
        }
    }};
}
pub(crate) use task_record;

/// Appends an event inside the transaction `$tx` and yields its sequence number. With
/// `$attempt >= 0` the task's current attempt must be that one, else `StaleAttempt`; with -1
/// (a person's decision, the server's sweep) the event is filed under the current attempt.
macro_rules! append_event {
    ($tx:expr, $task:expr, $attempt:expr, $kind:expr, $body:expr, $now:expr) => {{
        use sqlx::Row as _;
        let task: &str = $task;
        let guard: i64 = $attempt;
        let counter = sqlx::query(
            "UPDATE tasks SET next_seq = next_seq + 1, updated_ms = $2 \
             WHERE id = $1 AND ($3 < 0 OR attempt = $3) RETURNING next_seq, attempt",
        )
        .bind(task)
        .bind($now)
        .bind(guard)
        .fetch_optional(&mut *$tx)
        .await?;
        match counter {
            None => Err($crate::error::StoreError::StaleAttempt {
                task: task.to_owned(),
                attempt: guard,
            }),
            Some(row) => {
                let seq: i64 = row.try_get("next_seq")?;
                let attempt: i64 = row.try_get("attempt")?;
                let body: String = $body;
                sqlx::query(
                    "INSERT INTO events (task_id, seq, attempt, at_ms, kind, body) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(task)
                .bind(seq)
                .bind(attempt)
                .bind($now)
                .bind($kind)
                .bind(body)
                .execute(&mut *$tx)
                .await?;
                Ok::<i64, $crate::error::StoreError>(seq)
            }
        }
    }};
}
pub(crate) use append_event;

/// The body of a `state` event.
pub(crate) fn state_event(state: TaskState, reason: Option<&str>) -> String {
    serde_json::json!({ "state": state, "reason": reason }).to_string()
}
