//! Scoring as SWE-bench does.
