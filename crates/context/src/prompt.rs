//! Prompt assembly (being written).
