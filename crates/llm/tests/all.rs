//! Integration tests of `plumb-llm`, compiled as one test binary.
// clippy's allow-unwrap-in-tests covers `#[test]` functions only, not the helpers beside them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
