//! The attack suite (issue 20): the harness itself, running on the host, tried as an attacker
//! would — through a prepared repository (committed links, settings, special files) or a
//! scripted model that makes the agent write what a fooled model would. Beside `escape.rs`, which
//! tries the wall around commands; these try everything plumb does outside that wall.
//!
//! Every case checks the host side as well as the refusal: no canary token anywhere plumb wrote
//! (journal, report, patch, stdout, stderr) and nothing changed outside ([`support::Outside`]).
//! Each module is one class of attack.

mod children;
mod deadline;
mod disk;
mod host_work;
mod ladder;
mod nested_repos;
mod patch_hazards;
mod prompt_links;
mod repo_settings;
mod runner_config;
mod screen;
mod special_files;
pub(crate) mod support;
mod terminal;
