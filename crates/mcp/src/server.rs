//! The MCP server: plumb's tools declared with `rmcp`'s tool router, their JSON schemas generated
//! from [`crate::types`], the work handed to a [`Backend`].
//!
//! Five tools, none of which approves, applies or undoes: `coding_task` (runs a ticket and returns
//! the verified diff, its SHA-256 and the `plumb apply` command a *person* runs),
//! `coding_task_status`, `coding_task_diff`, `coding_task_cancel`, `runs_list`. A caller's failure
//! (a repository outside the allowed folders, an unknown run) is a tool result with `isError`,
//! worded for the calling model to act on; arguments that do not fit the schema are refused by the
//! SDK before any work starts.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{Implementation, ProgressNotificationParam, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, tool, tool_handler, tool_router};
use tokio::sync::mpsc;

use crate::backend::{Backend, ProgressNote, ToolFailure};
use crate::types::{
    CancelAnswer, CodingTaskArgs, RunArgs, RunDiff, RunStatus, RunsList, RunsListArgs, TaskResult,
};

/// What the server tells a client about itself when it connects.
const INSTRUCTIONS: &str = "plumb fixes a ticket in a sandboxed throwaway copy of a repository \
and proves the change with the project's own tests (a check ladder: syntax, a test that fails \
before and passes after, the full suite, lint, tamper traps, a review). `coding_task` returns the \
verified diff and its SHA-256; it never writes the repository, and no tool here can approve or \
apply a change: a person reads the diff and runs the returned `apply_command` (`plumb apply RUN \
--sha SHA`, or the approval by SHA-256 on the plumb serve that ran the task).";

/// The MCP face of plumb over one [`Backend`]; cheap to clone (the HTTP transport makes one per
/// request).
#[derive(Clone)]
pub struct PlumbMcp {
    backend: Arc<dyn Backend>,
    tool_router: ToolRouter<PlumbMcp>,
}

impl PlumbMcp {
    pub fn new(backend: Arc<dyn Backend>) -> Self {
        Self {
            backend,
            tool_router: Self::tool_router(),
        }
    }

    /// The names of the tools this server offers, in the order it lists them.
    pub fn tool_names(&self) -> Vec<String> {
        self.tool_router
            .list_all()
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect()
    }
}

#[tool_router]
impl PlumbMcp {
    /// Fixes a ticket in a sandboxed throwaway copy of a local repository and returns the
    /// outcome, the check ladder's evidence, the review and the verified diff with its SHA-256.
    /// Sends a progress notification per step when the request carries a progress token. The
    /// repository is never written: a person applies the diff with the returned `apply_command`.
    #[tool(
        name = "coding_task",
        annotations(
            title = "Fix a ticket (verified diff, held for a person)",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn coding_task(
        &self,
        Parameters(args): Parameters<CodingTaskArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<TaskResult>, String> {
        let (progress, notes) = mpsc::unbounded_channel();
        let forwarder = tokio::spawn(forward_progress(notes, context.clone()));
        let result = self
            .backend
            .coding_task(args, progress, context.ct.clone())
            .await;
        // The backend dropped its sender: every note goes out before the answer.
        let _ = forwarder.await;
        result.map(Json).map_err(failure_text)
    }

    /// Where a run is: running (its latest round and step) or finished (its outcome and reason).
    #[tool(
        name = "coding_task_status",
        annotations(
            title = "A run's state",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn coding_task_status(
        &self,
        Parameters(args): Parameters<RunArgs>,
    ) -> Result<Json<RunStatus>, String> {
        self.backend
            .status(&args.run)
            .await
            .map(Json)
            .map_err(failure_text)
    }

    /// A finished run's diff: the verified patch with its SHA-256 and `apply_command`, or the
    /// failed attempt's diff (for reading only) when the run rolled back.
    #[tool(
        name = "coding_task_diff",
        annotations(
            title = "A run's diff",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn coding_task_diff(
        &self,
        Parameters(args): Parameters<RunArgs>,
    ) -> Result<Json<RunDiff>, String> {
        self.backend
            .diff(&args.run)
            .await
            .map(Json)
            .map_err(failure_text)
    }

    /// Stops a run this server started; it ends `cancelled`, its copy rolled back. The caller's
    /// repository was never written.
    #[tool(
        name = "coding_task_cancel",
        annotations(
            title = "Cancel a run",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn coding_task_cancel(
        &self,
        Parameters(args): Parameters<RunArgs>,
    ) -> Result<Json<CancelAnswer>, String> {
        self.backend
            .cancel(&args.run)
            .await
            .map(Json)
            .map_err(failure_text)
    }

    /// The newest runs, running and finished (through a plumb serve: the tenant's newest tasks).
    #[tool(
        name = "runs_list",
        annotations(
            title = "List runs",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn runs_list(
        &self,
        Parameters(args): Parameters<RunsListArgs>,
    ) -> Result<Json<RunsList>, String> {
        self.backend
            .runs(args)
            .await
            .map(Json)
            .map_err(failure_text)
    }
}

#[tool_handler]
impl ServerHandler for PlumbMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("plumb", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// The tool's error text: what went wrong and, for the caller's own mistakes, what to change.
fn failure_text(failure: ToolFailure) -> String {
    match failure {
        ToolFailure::BadInput(message) => message,
        ToolFailure::Infra(message) => format!("plumb could not finish the task: {message}"),
    }
}

/// Sends each note as a progress notification, numbered so the progress always rises (the
/// spec's rule), until the backend drops its sender. Without a progress token there is no one
/// to send them to; the notes are read and dropped so the run never waits on them.
async fn forward_progress(
    mut notes: mpsc::UnboundedReceiver<ProgressNote>,
    context: RequestContext<RoleServer>,
) {
    let token = context.meta.get_progress_token();
    let mut sent = 0u32;
    while let Some(note) = notes.recv().await {
        let Some(token) = &token else { continue };
        sent += 1;
        let message = format!("round {}: {}", note.round, note.message);
        let param =
            ProgressNotificationParam::new(token.clone(), f64::from(sent)).with_message(message);
        // A client that went away does not stop the run; its cancel does.
        let _ = context.peer.notify_progress(param).await;
    }
}
