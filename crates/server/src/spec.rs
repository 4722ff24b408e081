//! A task as a client asks for it (`POST /api/tasks`) and as the store keeps it for the worker
//! that runs it: where the repository comes from, the ticket, and settings that may only tighten
//! the server's.

use std::path::Path;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::settings::ServerSettings;

/// Where a task's repository comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RepoSource {
    /// An `https://` git URL, cloned by the worker under the server's URL policy (public
    /// addresses only, no redirects, size and time caps).
    Git {
        url: String,
        /// A branch or tag; the remote's default branch when absent.
        #[serde(default)]
        rev: Option<String>,
    },
    /// An archive (zip, tar, tar.gz) uploaded with `POST /api/uploads`, unpacked by the worker as
    /// regular files only.
    Upload { id: String },
    /// An absolute path to a folder on the server's machine, copied (never changed): for a local
    /// operator, and refused unless the server was started with `--allow-server-paths`.
    Path { path: String },
}

/// A task request: the body of `POST /api/tasks`, and what a worker reads back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "repo": {"kind": "git", "url": "https://github.com/acme/billing.git", "rev": "main"},
    "ticket": "Invoice totals are off by a cent when a discount applies",
    "max_rounds": 8
}))]
pub struct TaskRequest {
    pub repo: RepoSource,
    /// The ticket's text (Markdown).
    pub ticket: String,
    /// One of the models `GET /api/capabilities` lists; the server's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// At most this many rounds; more than the server allows is lowered to its limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rounds: Option<u32>,
    /// At most this many estimated dollars for the run; it may only lower the server's and the
    /// tenant's budgets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_usd: Option<f64>,
    /// The repository's test command (run in the sandbox); detected when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_command: Option<String>,
}

/// The longest test command taken.
const MAX_TEST_COMMAND: usize = 1000;

impl TaskRequest {
    /// The request as it will be stored: checked against the server's settings, the model named,
    /// the limits clamped. Each refusal names the field and what to change.
    pub fn checked(mut self, settings: &ServerSettings) -> Result<TaskRequest, ApiError> {
        let ticket = self.ticket.trim();
        if ticket.is_empty() {
            return Err(ApiError::bad_field(
                "ticket",
                "ticket is empty: give the ticket's text",
            ));
        }
        if self.ticket.len() > settings.capabilities.limits.max_ticket_bytes {
            return Err(ApiError::bad_field(
                "ticket",
                format!(
                    "ticket is {} bytes; this server takes at most {}: shorten it",
                    self.ticket.len(),
                    settings.capabilities.limits.max_ticket_bytes
                ),
            ));
        }
        let model = self
            .model
            .take()
            .unwrap_or_else(|| settings.capabilities.default_model.clone());
        if !settings
            .capabilities
            .models
            .iter()
            .any(|offered| offered.id == model)
        {
            let offered: Vec<&str> = settings
                .capabilities
                .models
                .iter()
                .map(|offered| offered.id.as_str())
                .collect();
            return Err(ApiError::bad_field(
                "model",
                format!(
                    "model {model:?} is not one this server offers: use one of {}",
                    offered.join(", ")
                ),
            ));
        }
        self.model = Some(model);
        let limit = settings.capabilities.limits.max_rounds;
        self.max_rounds = Some(match self.max_rounds {
            Some(0) => {
                return Err(ApiError::bad_field(
                    "max_rounds",
                    "max_rounds is 0: give at least 1, or leave it out for the server's limit",
                ));
            }
            Some(rounds) => rounds.min(limit),
            None => limit,
        });
        if let Some(command) = &self.test_command
            && (command.trim().is_empty()
                || command.len() > MAX_TEST_COMMAND
                || command.contains('\0'))
        {
            return Err(ApiError::bad_field(
                "test_command",
                format!(
                    "test_command must be 1-{MAX_TEST_COMMAND} bytes of text, or left out to detect it"
                ),
            ));
        }
        if let Some(usd) = self.max_usd
            && !(usd.is_finite() && usd > 0.0)
        {
            return Err(ApiError::bad_field(
                "max_usd",
                "max_usd must be a number of dollars above 0, or left out for the server's budget",
            ));
        }
        self.repo = checked_repo(self.repo, settings)?;
        Ok(self)
    }
}

fn checked_repo(repo: RepoSource, settings: &ServerSettings) -> Result<RepoSource, ApiError> {
    let intake = &settings.capabilities.intake;
    match &repo {
        RepoSource::Git { url, rev } => {
            if !intake.git {
                return Err(ApiError::bad_field(
                    "repo.kind",
                    "repo.kind git is off on this server: upload an archive instead",
                ));
            }
            // The URL's form now; the addresses it resolves to when a worker clones it.
            if let Err(err) = plumb_workspace::intake::check_url(url) {
                return Err(ApiError::bad_field("repo.url", format!("repo.url: {err}")));
            }
            if let Some(rev) = rev
                && (rev.is_empty()
                    || rev.starts_with('-')
                    || rev.len() > 255
                    || rev.chars().any(|c| c.is_control() || c == ' '))
            {
                return Err(ApiError::bad_field(
                    "repo.rev",
                    format!("repo.rev {rev:?} is not a branch or tag name"),
                ));
            }
        }
        RepoSource::Upload { .. } => {
            if !intake.uploads {
                return Err(ApiError::bad_field(
                    "repo.kind",
                    "repo.kind upload is off on this server: give a git URL instead",
                ));
            }
        }
        RepoSource::Path { path } => {
            if !intake.server_paths {
                return Err(ApiError::bad_field(
                    "repo.kind",
                    "repo.kind path is off on this server (an operator turns it on with \
                     --allow-server-paths): give a git URL or an upload",
                ));
            }
            let folder = Path::new(path);
            if !folder.is_absolute() || !folder.is_dir() {
                return Err(ApiError::bad_field(
                    "repo.path",
                    format!("repo.path {path:?} is not an absolute path to a folder on the server"),
                ));
            }
        }
    }
    Ok(repo)
}

/// The ticket's first line that says something, for lists (at most 120 characters).
pub fn title(ticket: &str) -> String {
    let line = ticket
        .lines()
        .map(|line| line.trim().trim_start_matches('#').trim())
        .find(|line| !line.is_empty())
        .unwrap_or("");
    let mut title: String = line.chars().take(120).collect();
    if line.chars().count() > 120 {
        title.push('…');
    }
    title
}
