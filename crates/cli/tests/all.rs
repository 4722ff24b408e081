//! Integration tests of the `plumb` binary, compiled as one test binary.

mod suite;
