//! Test suites; each spawns the built `plumb-llm` binary.

mod serve;
