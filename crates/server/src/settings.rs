//! What a server is set up with, and what it tells clients it can do (`GET /api/capabilities`).

use std::time::Duration;

use serde::Serialize;
use utoipa::ToSchema;

/// A model a client may ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ModelOffer {
    /// What a task request names (`model`).
    pub id: String,
    /// A line on what it is.
    pub description: String,
}

/// The limits every task is held to; a request may lower them, never raise them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Limits {
    pub max_rounds: u32,
    pub max_ticket_bytes: usize,
    pub max_upload_bytes: usize,
}

/// Where repositories may come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Intake {
    /// `https://` git URLs, cloned from public addresses only.
    pub git: bool,
    /// Archives uploaded with `POST /api/uploads` (zip, tar, tar.gz).
    pub uploads: bool,
    /// Folders on the server's machine (off unless the operator turned it on).
    pub server_paths: bool,
}

/// What the server offers, as clients read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Capabilities {
    pub version: String,
    pub models: Vec<ModelOffer>,
    /// The model a task gets when it names none.
    pub default_model: String,
    /// The sandbox every command of a run goes through (`bwrap`, `gvisor`, …; never `none`).
    pub sandbox: String,
    pub limits: Limits,
    pub intake: Intake,
}

/// A server's settings.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// The job queue tasks go on (the workers' `--queue`).
    pub queue: String,
    /// How many attempts a task gets when workers die under it.
    pub max_attempts: i64,
    pub capabilities: Capabilities,
    /// How often a live event stream looks for new events in the store.
    pub event_poll: Duration,
}
