//! How large a model request is, part by part, as the journal records it with each request.

use serde::{Deserialize, Serialize};

/// The tokens of each part of one request. `counted` says how: plumb's estimate unless a
/// tokenizer counted them. Parts: the rules (system messages), the tool descriptions, the first
/// message's ticket, project notes and test line (`project`), repo map and code shown up front,
/// then the history's calls (the model's replies), tool results and harness notes (with the
/// guided next step).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptSize {
    pub counted: String,
    pub rules: u64,
    pub tools: u64,
    pub ticket: u64,
    pub project: u64,
    pub repo_map: u64,
    pub code: u64,
    pub calls: u64,
    pub results: u64,
    pub notes: u64,
    pub total: u64,
}
