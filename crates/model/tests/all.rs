//! Integration tests of plumb-model, compiled as one binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
