//! Integration tests of plumb-workspace, compiled as one binary.

// Test helpers outside `#[test]` functions may panic too: a failed fixture is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
