//! plumb-store's integration tests, compiled as one binary; each runs on SQLite and on PostgreSQL.

// Test helpers outside `#[test]` functions may panic too: a failed fixture is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
