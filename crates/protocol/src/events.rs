//! Run events and journal lines. The same `Event` stream feeds the journal writer, the terminal
//! progress printer and (later) the server's SSE feed, so every front end sees one story.

use serde::{Deserialize, Serialize};

use crate::{CheckReport, FinalReport, Message, ModelReply, Outcome, SandboxKind, TestCounts};

/// Version of the journal line format. Version 2 records each model request as the messages it
/// shares with the request before it plus the new ones ([`LoggedMessage`]); a version 1 line has
/// no `shared` and every message in full, which reads the same way (`shared` 0).
pub const JOURNAL_VERSION: u32 = 2;

/// The first line of every journal: what a replay needs to reach the same patch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    pub run_id: String,
    pub plumb_version: String,
    /// Where the repository came from, as the user gave it.
    pub repo: String,
    /// The shadow-git commit of the untouched tree.
    pub base_commit: String,
    /// The git tree id of the untouched tree: equal trees have equal ids, whatever the clock.
    pub base_tree: String,
    pub model: String,
    pub ticket: String,
    pub test_command: Vec<String>,
    pub sandbox: SandboxKind,
    /// The effective configuration, as TOML text.
    pub config: String,
    /// The tests the task named as failing before the fix and passing after it (`plumb fix
    /// --fail-to-pass`, SWE-bench's FAIL_TO_PASS).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_to_pass: Vec<String>,
}

/// Something that happened in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    RunStarted {
        meta: Box<RunMeta>,
    },
    /// A loud note: commands run without a sandbox, a repository setting was ignored.
    Warning {
        message: String,
    },
    /// Which small-model helpers are on for this run and why, and why the others are not.
    Helpers {
        helpers: Vec<crate::HelperState>,
    },
    /// The setup phase ran (before the agent, with the network only if the settings allow it).
    Setup {
        argv: Vec<String>,
        network: bool,
        exit_code: Option<i32>,
        duration_ms: u64,
        /// The tail of its output.
        output: String,
    },
    BaselineTests {
        counts: TestCounts,
        exit_code: Option<i32>,
        duration_ms: u64,
    },
    /// A request to the model. The journal keeps only what is new: the first `shared` messages
    /// are those of the request before it (in the same journal), `messages` the rest. An event as
    /// the run emits it has `shared` 0 and every message sent in full; the journal writer
    /// shortens it (see `plumb_agent::journal_requests` for the way back).
    ModelRequest {
        round: u32,
        #[serde(default, skip_serializing_if = "is_zero")]
        shared: usize,
        messages: Vec<LoggedMessage>,
        /// The request's size part by part (absent in journals written before it was counted).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<crate::PromptSize>,
    },
    ModelReply {
        round: u32,
        reply: ModelReply,
        duration_ms: u64,
    },
    /// The candidates helper tried one sampled reply's write on the workspace and undid it.
    /// `attempt` 0 is the model's first reply; `used` marks the one the round goes on with (it
    /// follows as this round's `model_reply`, whose usage counts every candidate).
    CandidateTried {
        round: u32,
        attempt: u32,
        reply: ModelReply,
        duration_ms: u64,
        /// What trying it showed, in words.
        verdict: String,
        used: bool,
    },
    ToolStarted {
        round: u32,
        call_id: String,
        name: String,
        arguments: serde_json::Value,
    },
    ToolFinished {
        round: u32,
        call_id: String,
        name: String,
        ok: bool,
        /// One line for progress displays.
        summary: String,
        /// The full result (the model sees a shortened one).
        output: String,
        duration_ms: u64,
    },
    Checkpoint {
        label: String,
        commit: String,
    },
    Check {
        check: CheckReport,
    },
    /// A note the harness adds to the model's context (a failed `done`, a stuck warning).
    Note {
        round: u32,
        text: String,
    },
    /// The history passed its budget and its older rounds were replaced by a summary
    /// (`plumb-agent`'s compaction). `reply` is the model's answer to the summary request (the
    /// `model_request` line before this one), absent when the model was not asked; `by_model`
    /// says whether the summary is the model's or, when its answer could not be used, the loop's
    /// own list of what was done. `plumb replay` gives the model's summary back at the same point.
    Compacted {
        round: u32,
        /// The turns (calls, results, notes, an earlier summary) the summary replaced.
        replaced_turns: u32,
        summary: String,
        by_model: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply: Option<ModelReply>,
        /// The history's size (estimated tokens) before and after.
        history_before: u64,
        history_after: u64,
    },
    /// A reviewer read the verified change (docs/contracts.md §5 step 7).
    Reviewed {
        review: Box<crate::Review>,
    },
    RolledBack {
        to_commit: String,
        attempt_ref: Option<String>,
    },
    RunFinished {
        outcome: Outcome,
        report: Box<FinalReport>,
    },
}

/// One message of a [`Event::ModelRequest`] as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LoggedMessage {
    /// An assistant message that is exactly the reply of round `reply_of_round`, which that
    /// round's `model_reply` line holds in full.
    ReplyOf { reply_of_round: u32 },
    /// The message as it was sent; when `left_out` is not 0 the journal kept only the head and
    /// tail of its longer texts, and that many bytes of them are missing.
    Sent {
        #[serde(flatten)]
        message: Message,
        #[serde(default, skip_serializing_if = "is_zero")]
        left_out: u64,
    },
}

impl LoggedMessage {
    /// A message as sent, in full.
    pub fn sent(message: Message) -> Self {
        LoggedMessage::Sent {
            message,
            left_out: 0,
        }
    }
}

fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// One line of a journal file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalLine {
    pub v: u32,
    /// Milliseconds since the Unix epoch.
    pub ts: u64,
    pub run: String,
    pub seq: u64,
    pub event: Event,
}
