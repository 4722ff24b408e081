//! The batch runner.
