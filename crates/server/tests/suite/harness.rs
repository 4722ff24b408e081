//! A server on a loopback port over a fresh SQLite store, a client with a tenant's token, and a
//! stand-in worker that moves a task through the store as plumb's engine would.

use std::time::Duration;

use plumb_server::{AppState, Capabilities, Intake, Limits, ModelOffer, ServerSettings};
use plumb_store::{ArtefactName, AttemptEnd, Claim, Store, TaskState};
use tokio_util::sync::CancellationToken;

pub struct Server {
    pub base: String,
    pub store: Store,
    pub client: reqwest::Client,
    pub shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub fn settings(server_paths: bool) -> ServerSettings {
    ServerSettings {
        queue: "api-tests".to_owned(),
        max_attempts: 2,
        capabilities: Capabilities {
            version: "test".to_owned(),
            models: vec![ModelOffer {
                id: "local".to_owned(),
                description: "the embedded model".to_owned(),
            }],
            default_model: "local".to_owned(),
            sandbox: "bwrap".to_owned(),
            limits: Limits {
                max_rounds: 12,
                max_ticket_bytes: 4096,
                max_upload_bytes: 64 * 1024,
            },
            intake: Intake {
                git: true,
                uploads: true,
                server_paths,
            },
        },
        event_poll: Duration::from_millis(50),
    }
}

pub async fn start(server_paths: bool) -> Server {
    start_with(server_paths, None).await
}

/// [`start`] keeping tenants' model keys sealed under `secret_key`.
pub async fn start_with(server_paths: bool, secret_key: Option<plumb_store::SecretKey>) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sqlite(&dir.path().join("plumb.db"))
        .await
        .unwrap();
    let queue_settings = plumb_store::QueueSettings {
        name: "api-tests".to_owned(),
        ..plumb_store::QueueSettings::default()
    };
    let queue = store.job_queue(&queue_settings).await.unwrap();
    let shutdown = CancellationToken::new();
    let state = AppState::new(
        store.clone(),
        queue,
        settings(server_paths),
        shutdown.clone(),
    )
    .with_secret_key(secret_key);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(plumb_server::serve(
        listener,
        plumb_server::router(state),
        shutdown.clone(),
    ));
    Server {
        base,
        store,
        client: reqwest::Client::new(),
        shutdown,
        _dir: dir,
    }
}

impl Server {
    pub async fn token(&self, tenant: &str) -> String {
        self.store.create_token(tenant, "test").await.unwrap().1
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn get(&self, token: &str, path: &str) -> (u16, serde_json::Value) {
        let response = self
            .client
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        answer(response).await
    }

    pub async fn post(
        &self,
        token: &str,
        path: &str,
        body: &serde_json::Value,
    ) -> (u16, serde_json::Value) {
        let response = self
            .client
            .post(self.url(path))
            .bearer_auth(token)
            .json(body)
            .send()
            .await
            .unwrap();
        answer(response).await
    }

    /// Starts a task on a git URL; returns its id.
    pub async fn create(&self, token: &str, ticket: &str) -> String {
        let body = serde_json::json!({
            "repo": {"kind": "git", "url": "https://example.com/acme/billing.git"},
            "ticket": ticket,
        });
        let (status, task) = self.post(token, "/api/tasks", &body).await;
        assert_eq!(status, 201, "{task}");
        task["id"].as_str().unwrap().to_owned()
    }

    /// Moves task `id` as a worker would: claimed, running, `events` run events, checked, and
    /// ending awaiting approval of `patch`. Returns the patch's SHA-256.
    pub async fn run_to_approval(&self, id: &str, events: usize, patch: &str) -> String {
        let claim = self.claim(id).await;
        self.store
            .advance(&claim, TaskState::Running)
            .await
            .unwrap();
        for round in 0..events {
            let body = serde_json::json!({"type": "tool_call", "round": round});
            self.store
                .append_event(&claim, "tool_call", &body)
                .await
                .unwrap();
        }
        self.store
            .advance(&claim, TaskState::Checking)
            .await
            .unwrap();
        let sha = self
            .store
            .put_artefact(&claim, ArtefactName::Patch, patch.as_bytes())
            .await
            .unwrap();
        let end = AttemptEnd {
            state: TaskState::AwaitingApproval,
            outcome: "success".to_owned(),
            reason: None,
            diff_sha256: Some(sha.clone()),
        };
        self.store.finish(&claim, &end).await.unwrap();
        sha
    }

    /// `method` with a JSON body (or none); the status and the body (`null` when empty).
    pub async fn send(
        &self,
        method: reqwest::Method,
        token: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let mut request = self
            .client
            .request(method, self.url(path))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        if text.is_empty() {
            return (status, serde_json::Value::Null);
        }
        (status, serde_json::from_str(&text).unwrap())
    }

    pub async fn claim(&self, id: &str) -> Claim {
        self.store
            .claim(id, "test-worker", Duration::from_secs(60))
            .await
            .unwrap()
    }
}

async fn answer(response: reqwest::Response) -> (u16, serde_json::Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let json = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("status {status}: the body is not JSON: {text}"));
    (status, json)
}

/// Asserts an error body: `{error, message}` with that code and a message that says `says`.
pub fn assert_error(answer: &(u16, serde_json::Value), status: u16, code: &str, says: &str) {
    let (got, body) = answer;
    assert_eq!(*got, status, "{body}");
    assert_eq!(body["error"], code, "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains(says), "{message:?} does not say {says:?}");
}
