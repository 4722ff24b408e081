//! plumb-tools: the model-facing tools of DESIGN.md §3.

pub mod search;
pub mod shorten;
