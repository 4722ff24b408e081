//! plumb-context: syntax checking, the repo map and prompt assembly.
//!
//! - [`syntax`]: which languages we parse, and the edit check that refuses an edit adding a syntax error.
//! - [`build_output`]: the build and test output folders (`target/`, `node_modules/`) no walk enters.
//! - [`callables`]: every function and method of one source file, at any depth, with its owner.
//! - [`notes`]: the project notes (`AGENTS.md`, …) from the root down to the folders in play.
//! - [`outline`]: the definitions (classes, functions, methods, …) of one source file.
//! - [`repo_map`]: a directory outline with those definitions, for the repo map and `list_files`.
//! - [`prompt`]: what the model sees in every request; `history.rs` bounds the history in it,
//!   [`compaction`] summarises it when it passes its budget, and [`size`] counts a request's parts
//!   for the journal.
//! - [`tags`]: the names a source file defines and the names it uses (tree-sitter tags queries).
//! - [`tag_index`]: the tags of every file of a tree, cached by content hash between builds.
//! - [`rank`]: files and definitions ranked for a task (personalised PageRank over who uses what).
//! - [`ranked_map`]: the ranked repo map, an outline of the top-ranked definitions within a token budget.
//! - [`run_map`]: the map a run shows: the whole outline when it fits the budget, else the ranked map;
//!   [`tag_cache_file`] keeps the tags behind it between runs.
//! - [`templates`]: the texts the model reads, as named templates (`prompts/`) filled from typed values.
//! - [`rust_tests`]: the test part of a Rust source file (its `#[cfg(test)]` items), for the ladder.

// Unit tests read their own fixtures; the library itself reads workspace files only through
// plumb_workspace::Tree (clippy.toml's disallowed-methods, checked on the non-test build).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod build_output;
mod c_family;
pub mod callables;
pub mod compaction;
mod history;
pub mod leading;
pub mod notes;
pub mod outline;
mod parser;
mod pool;
pub mod prompt;
mod python_indent;
pub mod rank;
pub mod ranked_map;
pub mod relevant;
pub mod repo_map;
pub mod run_map;
pub mod rust_tests;
pub mod size;
pub mod syntax;
pub mod tag_cache_file;
pub mod tag_index;
pub mod tags;
pub mod templates;
