//! plumb-context: syntax checking, the repo map and prompt assembly.

pub mod prompt;
