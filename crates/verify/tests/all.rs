//! The integration tests of plumb-verify, compiled as one binary.
// clippy's allow-unwrap-in-tests covers `#[test]` functions only, not the helpers beside them.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Tests read their own fixtures; the confined reader is for what the agent and repository control.
#![allow(clippy::disallowed_methods)]

mod suite;
