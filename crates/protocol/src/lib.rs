//! Shared serde types for plumb, with no I/O: messages and tool calls, run events and journal lines,
//! outcomes, check reports and the final report; the characters that do not show as themselves
//! (`chars`) and how any text is made safe for a person's screen (`display`). Every other crate
//! speaks these types, so they sit at the bottom of the dependency graph and never import anything
//! of plumb's.

pub mod chars;
pub mod display;
mod events;
mod helpers;
mod messages;
mod numbers;
mod prompt_size;
mod report;
mod review;
mod settings;

pub use events::{Event, JOURNAL_VERSION, JournalLine, LoggedMessage, RunMeta};
pub use helpers::{HelperState, ModelProfile};
pub use messages::{Message, ModelReply, Role, SUMMARY_TOOL, ToolCall, ToolSpec, Usage};
pub use numbers::thousands;
pub use prompt_size::PromptSize;
pub use report::{
    CheckReport, CheckStatus, CheckStep, FinalReport, Outcome, SandboxKind, TestCounts, Timings,
};
pub use review::{Review, ReviewNote, ReviewStep, ReviewVerdict};
pub use settings::{IgnoredSetting, Provenance, Setting, SettingSource};
