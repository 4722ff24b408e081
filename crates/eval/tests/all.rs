//! plumb-eval's integration tests, compiled as one binary (see `suite/`).
// clippy's allow-unwrap-in-tests covers `#[test]` functions only, not the helpers beside them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
