//! The part of `plumb serve`'s HTTP API that `plumb mcp --server` uses: upload an archive, start a
//! task, follow its server-sent events, read its record, report and diff, ask it to cancel. Every
//! refusal the server gives (`{"error", "message", "field"}`) comes back as the caller's to fix;
//! an unreachable server or a 5xx as this machine's.

use std::time::Duration;

use plumb_mcp::ToolFailure;
use reqwest::{Client, RequestBuilder, Response, StatusCode};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Failure;

/// A task as `GET /api/tasks/{id}` shows it (the fields `plumb mcp` reads).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct TaskView {
    pub id: String,
    pub state: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub request: Option<Value>,
    #[serde(default)]
    pub outcome: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub rounds: Option<i64>,
}

/// `GET /api/tasks/{id}/diff`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct DiffView {
    pub sha256: String,
    pub patch: String,
}

#[derive(Debug, Deserialize)]
struct UploadView {
    id: String,
}

#[derive(Debug, Deserialize)]
struct TaskList {
    tasks: Vec<TaskView>,
}

/// One event of a task's stream.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct EventView {
    pub seq: i64,
    pub kind: String,
    pub body: Value,
}

#[derive(Debug, Deserialize)]
struct ErrorBody {
    error: String,
    message: String,
}

/// Why a call to the server did not answer as hoped.
#[derive(Debug, Clone)]
pub(crate) struct ApiFailure {
    /// The HTTP status, when the server answered.
    pub status: Option<u16>,
    /// The API's error code (`wrong_state`, `not_found`, …), when it gave one.
    pub code: String,
    pub message: String,
}

impl From<ApiFailure> for ToolFailure {
    fn from(failure: ApiFailure) -> ToolFailure {
        match failure.status {
            Some(status) if status < 500 => ToolFailure::BadInput(failure.message),
            _ => ToolFailure::Infra(failure.message),
        }
    }
}

/// States a task is still on its way through.
const GOING: [&str; 5] = ["queued", "preparing", "running", "checking", "reviewing"];

/// Whether a task's run has ended (held for approval, or final).
pub(crate) fn settled(state: &str) -> bool {
    !GOING.contains(&state)
}

/// A client of one server, with one token.
pub(crate) struct Api {
    base: String,
    token: String,
    client: Client,
}

impl Api {
    pub(crate) fn new(server: &str, token: &str) -> Result<Api, Failure> {
        let url = reqwest::Url::parse(server).map_err(|err| {
            Failure::bad_input(format!(
                "--server {server} is not a URL ({err}); give the server's address, e.g. http://127.0.0.1:8417"
            ))
        })?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(Failure::bad_input(format!(
                "--server {server}: give an http:// or https:// address of a plumb serve"
            )));
        }
        if token.trim().is_empty() {
            return Err(Failure::bad_input(
                "the API token is empty: pass --token T or set PLUMB_TOKEN",
            ));
        }
        let client = Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|err| Failure::infra(format!("no HTTP client: {err}")))?;
        Ok(Api {
            base: server.trim_end_matches('/').to_owned(),
            token: token.trim().to_owned(),
            client,
        })
    }

    /// The server's address as given, without a trailing `/`.
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    async fn send(&self, request: RequestBuilder, what: &str) -> Result<Response, ApiFailure> {
        let response = request
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|err| ApiFailure {
                status: None,
                code: String::new(),
                message: format!(
                    "could not reach plumb serve at {} ({what}): {err}",
                    self.base
                ),
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let text = response.text().await.unwrap_or_default();
        let (code, said) = match serde_json::from_str::<ErrorBody>(&text) {
            Ok(body) => (body.error, body.message),
            Err(_) => (String::new(), text.chars().take(300).collect()),
        };
        let message = if status == StatusCode::UNAUTHORIZED {
            format!(
                "plumb serve at {} refused the token ({what}): {said}; check --token or PLUMB_TOKEN",
                self.base
            )
        } else {
            format!("plumb serve refused {what} ({status}): {said}")
        };
        Err(ApiFailure {
            status: Some(status.as_u16()),
            code,
            message,
        })
    }

    async fn json<T: DeserializeOwned>(response: Response, what: &str) -> Result<T, ApiFailure> {
        response.json().await.map_err(|err| ApiFailure {
            status: None,
            code: String::new(),
            message: format!("plumb serve's answer to {what} is not what plumb expects: {err}"),
        })
    }

    pub(crate) async fn get<T: DeserializeOwned>(
        &self,
        path: &str,
        what: &str,
    ) -> Result<T, ApiFailure> {
        let request = self.client.get(format!("{}{path}", self.base));
        Self::json(self.send(request, what).await?, what).await
    }

    pub(crate) async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: Option<&Value>,
        what: &str,
    ) -> Result<T, ApiFailure> {
        let mut request = self.client.post(format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(body);
        }
        Self::json(self.send(request, what).await?, what).await
    }

    /// Keeps an archive on the server; its upload id.
    pub(crate) async fn upload(&self, archive: Vec<u8>) -> Result<String, ApiFailure> {
        let what = "the repository's upload";
        let request = self
            .client
            .post(format!("{}/api/uploads", self.base))
            .header("content-type", "application/octet-stream")
            .body(archive);
        let kept: UploadView = Self::json(self.send(request, what).await?, what).await?;
        Ok(kept.id)
    }

    /// The newest `limit` tasks of the token's tenant.
    pub(crate) async fn tasks(&self, limit: u32) -> Result<Vec<TaskView>, ApiFailure> {
        let list: TaskList = self
            .get(&format!("/api/tasks?limit={limit}"), "the task list")
            .await?;
        Ok(list.tasks)
    }

    /// The task's events after `after`, as they come.
    pub(crate) async fn events(&self, task: &str, after: i64) -> Result<EventStream, ApiFailure> {
        let request = self.client.get(format!(
            "{}/api/tasks/{task}/events?after={after}",
            self.base
        ));
        let response = self.send(request, "the task's events").await?;
        Ok(EventStream {
            response,
            frames: SseFrames::default(),
        })
    }
}

/// A task's server-sent events, one [`EventView`] at a time.
pub(crate) struct EventStream {
    response: Response,
    frames: SseFrames,
}

impl EventStream {
    /// The next event; `None` once the server ended the stream.
    pub(crate) async fn next(&mut self) -> Result<Option<EventView>, String> {
        loop {
            if let Some(data) = self.frames.next_data() {
                return serde_json::from_str(&data)
                    .map(Some)
                    .map_err(|err| format!("an event plumb cannot read ({err}): {data}"));
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.frames.push(&bytes),
                Ok(None) => return Ok(None),
                Err(err) => return Err(format!("the event stream broke: {err}")),
            }
        }
    }
}

/// Splits a `text/event-stream` body into its events' `data`, however the bytes arrive.
#[derive(Debug, Default)]
struct SseFrames {
    pending: Vec<u8>,
}

impl SseFrames {
    /// Takes the bytes as they came; `\r` is dropped, so `\r\n` ends a line as `\n` does (the
    /// events' JSON never holds a raw one).
    fn push(&mut self, bytes: &[u8]) {
        self.pending
            .extend(bytes.iter().copied().filter(|byte| *byte != b'\r'));
    }

    /// The data of the next whole event (its `data:` lines joined), skipping events that carry
    /// none (the keep-alive comments). Split on bytes, so a character cut between two chunks
    /// is whole again before it is read.
    fn next_data(&mut self) -> Option<String> {
        loop {
            let end = self.pending.windows(2).position(|pair| pair == b"\n\n")?;
            let frame: Vec<u8> = self.pending.drain(..end + 2).collect();
            let frame = String::from_utf8_lossy(&frame[..end]);
            let data: Vec<&str> = frame
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|rest| rest.strip_prefix(' ').unwrap_or(rest))
                .collect();
            if !data.is_empty() {
                return Some(data.join("\n"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_and_keep_alives_come_out_whole() {
        let mut frames = SseFrames::default();
        frames.push(b": keep-alive\n\nid: 1\nevent: state\ndata: {\"seq\":1,");
        assert_eq!(frames.next_data(), None);
        frames.push(b"\"kind\":\"state\"}\r\n\r\nid: 2\ndata: a\ndata: b\n\n");
        assert_eq!(
            frames.next_data().as_deref(),
            Some("{\"seq\":1,\"kind\":\"state\"}")
        );
        assert_eq!(frames.next_data().as_deref(), Some("a\nb"));
        assert_eq!(frames.next_data(), None);
        // "é" cut between two chunks.
        frames.push(b"data: caf\xc3");
        assert_eq!(frames.next_data(), None);
        frames.push(b"\xa9\n\n");
        assert_eq!(frames.next_data().as_deref(), Some("café"));
    }

    #[test]
    fn a_refusal_is_the_callers_and_an_outage_this_machines() {
        let refused = ApiFailure {
            status: Some(400),
            code: "bad_request".into(),
            message: "ticket is empty".into(),
        };
        assert!(matches!(
            ToolFailure::from(refused),
            ToolFailure::BadInput(_)
        ));
        for status in [None, Some(503)] {
            let down = ApiFailure {
                status,
                code: String::new(),
                message: "down".into(),
            };
            assert!(matches!(ToolFailure::from(down), ToolFailure::Infra(_)));
        }
    }
}
