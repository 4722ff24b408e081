//! Integration tests for plumb-eval, compiled as one binary (STYLE.md): the cases are in `suite/`.

// Test helpers outside `#[test]` functions may panic too: a failed fixture is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
