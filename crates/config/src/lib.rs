//! `plumb.toml`: the settings of a run, layered global → repository → `-c key=value` overrides.
//!
//! Each layer is a TOML table; layers are merged key by key (a later layer wins, tables merge
//! recursively), and each file and the merged table are checked against [`Config`], so a typo in
//! any layer is an error that names the key and the file it came from. The repository's file may
//! only tighten what the user's layers allow (`rules.rs`), and every effective setting knows where
//! it came from (`provenance.rs`).

mod layers;
mod models;
mod provenance;
mod repo_file;
mod review;
mod rules;

use std::path::PathBuf;

use plumb_protocol::SandboxKind;
use serde::{Deserialize, Serialize};

pub use layers::{ConfigError, ConfigSources, FlagSetting, FlagValue, Loaded, load};
pub use models::{
    Helpers, HelpersInEffect, Local, ModelService, PriceOverride, Prices, Provider, Providers,
};
pub use provenance::provenance_of;
pub use repo_file::REPO_FILES;
pub use review::{Approval, Review};

/// The hard ceiling on rounds, whatever the settings say (docs/contracts.md §4).
pub const MAX_ROUNDS_CEILING: u32 = 100;

/// All settings of a run. Every field has the default of docs/contracts.md §8.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The model spec used when `--model` is not given.
    pub model: String,
    /// The project's test command (one line, split like a shell would but never run by one).
    pub test_command: Option<String>,
    /// A command run once in the sandbox before the agent starts (e.g. installing dependencies);
    /// what it writes becomes part of the baseline, not of the patch.
    pub setup_command: Option<String>,
    /// Whether the setup command may use the network. The agent's own commands never may.
    pub setup_network: bool,
    pub sandbox: SandboxKind,
    /// Strict sandbox: a seccomp filter that refuses ptrace, io_uring, non-unix sockets and keyrings.
    pub strict_sandbox: bool,
    /// More host folders the sandbox shows read-only (e.g. `~/.rustup` for a cargo on PATH).
    pub sandbox_read_only: Vec<PathBuf>,
    /// Whether commands get the host's rust (rustup), go, node and java/maven toolchains: their
    /// folders read-only, the variables they need, and a package cache only the setup phase may
    /// fill. Off shows them only what `PATH` and `sandbox_read_only` give.
    pub sandbox_toolchains: bool,
    pub limits: Limits,
    pub run: RunPolicy,
    /// Tamper flags that block instead of asking a person to look, on top of the two that block by
    /// default (`symlink_out_of_tree`, `bidi_control`): any of `test_modified`, `test_deleted`,
    /// `test_renamed`, `test_config_changed`, `skip_marker_added`, `symlink_out_of_tree`,
    /// `symlink_in_tree`, `mode_changed`, `executable_added`, `gitlink_changed`,
    /// `automation_changed`, `build_file_changed`, `bidi_control`, `invisible_character`.
    pub tamper_block: Vec<String>,
    /// Default-blocked tamper kinds (`symlink_out_of_tree`, `bidi_control`) that only flag instead,
    /// for a person to review. Loosens a security check, so it belongs in the user's own settings
    /// or `-c`, never in a repository's `plumb.toml`. A kind `tamper_block` names still blocks.
    pub tamper_unblock: Vec<String>,
    /// Paths (relative, prefix match by folder) the agent may not edit or create files in.
    pub protected_paths: Vec<String>,
    /// Where runs (workspaces, journals) are kept; default `$PLUMB_HOME/runs` or `~/.local/state/plumb/runs`.
    pub runs_dir: Option<PathBuf>,
    /// How many finished run folders are kept in `runs_dir`.
    pub runs: Runs,
    pub providers: Providers,
    pub model_service: ModelService,
    pub prices: Prices,
    pub local: Local,
    pub helpers: Helpers,
    pub review: Review,
    pub approval: Approval,
    pub mcp: Mcp,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            model: "local".to_string(),
            test_command: None,
            setup_command: None,
            setup_network: false,
            sandbox: SandboxKind::Bwrap,
            strict_sandbox: false,
            sandbox_read_only: Vec::new(),
            sandbox_toolchains: true,
            limits: Limits::default(),
            run: RunPolicy::default(),
            tamper_block: Vec::new(),
            tamper_unblock: Vec::new(),
            protected_paths: Vec::new(),
            runs_dir: None,
            runs: Runs::default(),
            providers: Providers::default(),
            model_service: ModelService::default(),
            prices: Prices::default(),
            local: Local::default(),
            helpers: Helpers::default(),
            review: Review::default(),
            approval: Approval::default(),
            mcp: Mcp::default(),
        }
    }
}

/// Numbers that bound a run and what the model sees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    pub max_rounds: u32,
    pub search_results: usize,
    pub file_window: usize,
    pub file_window_max: usize,
    pub tool_output_lines: usize,
    pub full_results_kept: usize,
    /// The share of the model's context window one request may fill: what the rules, the tools'
    /// descriptions and the first message leave of it is the history's budget, past which its
    /// older rounds are summarised and its whole results shrink early.
    pub prompt_share: f64,
    /// The most tokens (plumb's estimate) the history may take, whatever the window (0: only the
    /// share bounds it; for a model whose window plumb does not know, nothing does).
    pub history_tokens: u64,
    pub stuck_repeats: u32,
    pub command_timeout_secs: u64,
    pub memory_mb: u64,
    pub cpus: u32,
    /// Wall-clock budget of a whole run, in seconds (0 = none).
    pub wall_clock_secs: u64,
    /// Token budget of a whole run (0 = none).
    pub max_tokens: u64,
    /// Estimated cost budget in USD (0 = none).
    pub max_usd: f64,
    /// Characters of outline `list_files` shows (twice this).
    pub repo_map_chars: usize,
    /// Tokens of repo map in the first message: the whole outline when it fits, else the map
    /// ranked for the ticket.
    pub repo_map_tokens: usize,
    /// A repository file longer than this is left out of the workspace, with a warning.
    pub max_file_bytes: u64,
    /// The workspace copy's files together may not be longer than this; a longer tree is refused.
    pub max_copy_bytes: u64,
    /// After every command, the workspace may hold at most this many names (files, folders,
    /// links; ignored build output one name per ignored folder or file): past it the run ends.
    pub max_workspace_files: u64,
    /// After every command, the lengths of the workspace's files (ignored build output not
    /// counted) may add up to at most this: past it the run ends, before any is read.
    pub max_workspace_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_rounds: 30,
            search_results: 50,
            file_window: 100,
            file_window_max: 400,
            tool_output_lines: 60,
            full_results_kept: 5,
            // Half the window: 8,192 tokens of the embedded model's 16,384, the other half left
            // for its reply and the estimate's error. No request of the confirm subsets' runs
            // came near it (docs/prompt.md).
            prompt_share: 0.5,
            history_tokens: 0,
            stuck_repeats: 3,
            command_timeout_secs: 300,
            memory_mb: 4096,
            cpus: 2,
            wall_clock_secs: 0,
            max_tokens: 0,
            max_usd: 0.0,
            repo_map_chars: 6000,
            // Aider's default map size. No map of the tune and confirm subsets comes near it.
            repo_map_tokens: 1024,
            // 50 MiB a file, 2 GiB in all: see `plumb_workspace::CopyLimits`.
            max_file_bytes: 50 << 20,
            max_copy_bytes: 2 << 30,
            // Half a million names, 4 GiB: see `plumb_workspace::WorkspaceLimits`.
            max_workspace_files: 500_000,
            max_workspace_bytes: 4 << 30,
        }
    }
}

/// `plumb mcp`: what another agent calling plumb's tools may ask of this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Mcp {
    /// The folders whose repositories `coding_task` takes (each with everything under it); a
    /// relative entry is relative to the folder `plumb mcp` starts in. Empty: that folder alone.
    pub allowed_roots: Vec<PathBuf>,
    /// How many `coding_task` runs go at once; a call past it is refused with a message.
    pub max_tasks: u32,
}

impl Default for Mcp {
    fn default() -> Self {
        Self {
            allowed_roots: Vec::new(),
            max_tasks: 1,
        }
    }
}

/// Pruning of finished run folders, after each run. A run still going (its folder locked by
/// another plumb) is never touched, and the run that just ended always stays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Runs {
    /// The newest this many finished runs keep their folders (the one just ended counts); older
    /// ones are removed. 0 keeps every run.
    pub keep: usize,
    /// Of those, the newest this many also keep their workspace (the copy, the shadow git, the
    /// check trees); older ones keep only the report, the journal and the patch. 0 keeps every one.
    pub keep_workspaces: usize,
}

impl Default for Runs {
    fn default() -> Self {
        Self {
            keep: 20,
            keep_workspaces: 3,
        }
    }
}

/// What the `run` tool may execute: argv prefixes, each element matched exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunPolicy {
    pub allowed_commands: Vec<Vec<String>>,
}

impl Default for RunPolicy {
    fn default() -> Self {
        let prefixes: [&[&str]; 8] = [
            &["python", "-m", "pytest"],
            &["python3", "-m", "pytest"],
            &["pytest"],
            &["cargo", "test"],
            &["cargo", "check"],
            &["go", "test"],
            &["go", "vet"],
            &["npm", "test"],
        ];
        Self {
            allowed_commands: prefixes
                .iter()
                .map(|p| p.iter().map(|s| s.to_string()).collect())
                .collect(),
        }
    }
}

impl Config {
    /// The round limit, capped at the hard ceiling.
    pub fn max_rounds(&self) -> u32 {
        self.limits.max_rounds.clamp(1, MAX_ROUNDS_CEILING)
    }

    /// The effective configuration as TOML text (for the journal's first line).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}
