//! The modules of the one integration-test binary.

mod tasks;
