//! The modules of the one integration-test binary.

mod score;
mod tasks;
