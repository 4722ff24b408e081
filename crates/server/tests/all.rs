//! plumb-server's integration tests, compiled as one binary: the API served on a loopback port
//! over a real store and job queue, driven by a real HTTP client.

// Test helpers outside `#[test]` functions may panic too: a failed fixture is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
