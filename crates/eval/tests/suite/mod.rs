//! The modules of the one integration-test binary.

mod import;
mod score;
mod tasks;
