//! plumb-eval's integration tests, compiled as one binary (ARCHITECTURE.md, "How the code is written"): each part of the crate adds
//! a module under `suite/`.

// clippy's allow-unwrap-in-tests covers `#[test]` functions only, not the helpers beside them: a
// failed fixture is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
