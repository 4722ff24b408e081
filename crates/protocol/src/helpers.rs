//! The small-model helpers as a run had them: the model's profile that switches their defaults,
//! and for each helper whether it was on and why (the journal's `helpers` event, the report).

use serde::{Deserialize, Serialize};

/// What a model is, as far as the helpers care: a small model (the embedded 1.5B, a small model
/// a user serves) gets the helpers by default; a capable one none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelProfile {
    Small,
    #[default]
    Capable,
}

impl ModelProfile {
    pub fn as_str(self) -> &'static str {
        match self {
            ModelProfile::Small => "small",
            ModelProfile::Capable => "capable",
        }
    }
}

/// One helper in one run: on or off, and the reason in a few words ("pytest and the ticket
/// gives figures", "off by helpers.figures=false", "the model is capable").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelperState {
    pub name: String,
    pub on: bool,
    pub why: String,
}
