//! Integration tests of the `plumb` binary, compiled as one test binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
