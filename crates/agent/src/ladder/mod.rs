//! The check ladder (docs/contracts.md §5): at `done` the harness runs the checks itself and never
//! takes the model's word. `answer.rs` runs the steps in order; each step is a file of its own.

mod answer;
mod cx;
mod inline_tests;
mod judged;
mod lint_check;
mod original;
mod reproduce;
mod static_checks;
mod suite;
mod test_checks;
mod whole_suite;

pub(crate) use cx::{Cx, DoneAnswer, Ladder, refuse};
pub(crate) use original::original_source;
pub(crate) use static_checks::tamper_policy;
