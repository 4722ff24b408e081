//! A task's events as server-sent events: every stored event exactly once and in order, from the
//! one after `Last-Event-ID` (or `?after=`), live while the task runs and replayed after it ended.
//! Each SSE event's id is the event's sequence number, so a client that lost its connection
//! reconnects with `Last-Event-ID` and misses nothing. The stream ends once the task is in a
//! final state and every event has been sent.
//!
//! Events come from the store, not from the process that runs the task: a stream served here
//! shows a run on a worker on another machine the same way.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use plumb_store::EventRecord;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiPath, ApiQuery, Tenant};
use crate::views::{EventFrame, EventView};

/// Where the stream starts.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    /// Send the events after this sequence number (0: all). The `Last-Event-ID` header, when
    /// present, wins.
    after: Option<i64>,
}

/// How many events one read of the store takes.
const READ_BATCH: i64 = 200;

/// The task's events as `text/event-stream`.
#[utoipa::path(
    get, path = "/api/tasks/{id}/events", tag = "tasks",
    params(
        ("id" = String, Path, description = "The task's id"),
        ("Last-Event-ID" = Option<i64>, Header, description = "The last sequence number received"),
        EventsQuery,
    ),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Server-sent events: `id` the sequence number, `event` the kind, `data` an EventView", content_type = "text/event-stream", body = EventFrame),
        (status = 400, description = "A bad Last-Event-ID or after", body = ErrorBody),
        (status = 401, description = "No live token", body = ErrorBody),
        (status = 404, description = "No such task for this tenant", body = ErrorBody),
    )
)]
pub async fn events(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    ApiPath(id): ApiPath<String>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<EventsQuery>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    // An unknown task is a 404 now, not an empty stream.
    state.store().task(&tenant, &id).await?;
    let after = match headers.get("last-event-id") {
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse::<i64>().ok())
            .filter(|seq| *seq >= 0)
            .ok_or_else(|| {
                ApiError::bad_request(
                    "Last-Event-ID must be the id of an event this stream sent (a whole number)",
                )
            })?,
        None => match query.after {
            Some(after) if after < 0 => {
                return Err(ApiError::bad_request("after must be 0 or more"));
            }
            Some(after) => after,
            None => 0,
        },
    };
    let cursor = Cursor {
        poll: state.settings().event_poll,
        state,
        tenant,
        id,
        after,
        pending: VecDeque::new(),
        ended: false,
    };
    let stream = futures_util::stream::unfold(cursor, next_event);
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

struct Cursor {
    state: AppState,
    tenant: String,
    id: String,
    /// The last sequence number sent.
    after: i64,
    pending: VecDeque<EventRecord>,
    /// The task is final and every event has been read.
    ended: bool,
    poll: Duration,
}

async fn next_event(mut cursor: Cursor) -> Option<(Result<Event, Infallible>, Cursor)> {
    loop {
        if let Some(record) = cursor.pending.pop_front() {
            cursor.after = record.seq;
            return Some((Ok(sse_event(record)), cursor));
        }
        if cursor.ended {
            return None;
        }
        let store = cursor.state.store();
        // A store that fails ends the stream; the client reconnects with `Last-Event-ID`.
        let read = store
            .events(&cursor.tenant, &cursor.id, cursor.after, READ_BATCH)
            .await
            .ok()?;
        if !read.is_empty() {
            cursor.pending.extend(read);
            continue;
        }
        let task = store.task(&cursor.tenant, &cursor.id).await.ok()?;
        if task.state.is_final() {
            // A state is written in one transaction with its event: once the task reads final,
            // one more read has every event it will ever have.
            let rest = store
                .events(&cursor.tenant, &cursor.id, cursor.after, READ_BATCH)
                .await
                .ok()?;
            cursor.ended = rest.len() < usize::try_from(READ_BATCH).unwrap_or(usize::MAX);
            cursor.pending.extend(rest);
            continue;
        }
        tokio::select! {
            () = tokio::time::sleep(cursor.poll) => {}
            () = cursor.state.shutdown().cancelled() => return None,
        }
    }
}

fn sse_event(record: EventRecord) -> Event {
    let view = EventView {
        seq: record.seq,
        attempt: record.attempt,
        at_ms: record.at_ms,
        kind: record.kind,
        body: record.body,
    };
    let event = Event::default()
        .id(view.seq.to_string())
        .event(sse_name(&view.kind));
    event
        .json_data(&view)
        .unwrap_or_else(|_| Event::default().id(view.seq.to_string()).data("{}"))
}

/// An event name SSE can carry (no line breaks); kinds are plumb's own snake_case names.
fn sse_name(kind: &str) -> String {
    kind.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}
