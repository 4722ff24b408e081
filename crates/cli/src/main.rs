//! The `plumb` binary: parses the command line, builds a `RunSpec` and drives `plumb-agent`'s
//! `Run`. Progress goes to stderr; with `--json` the final report is the only thing on stdout.
//! Exit codes (docs/contracts.md §7): 0 verified patch, 1 no patch (rolled back), 2 bad input, 3
//! infrastructure. Every byte for a person goes out through `screen`, the one door to the terminal.

mod approve;
mod args;
mod config_show;
mod diff_view;
mod doctor;
mod eval;
mod eval_import;
mod eval_progress;
mod eval_queue;
mod eval_task;
mod fix;
mod home;
mod launch;
mod map;
mod mcp;
mod models;
mod progress;
mod prune;
mod replay;
mod screen;
mod secret_key;
mod serve;
mod serve_home;
mod setup;
mod store_url;
mod task_engine;
mod task_source;
mod tenant;
mod token;
mod worker;

use clap::Parser as _;

use crate::args::{Cli, Command};
use crate::screen::say;

/// An error that ends the process with a code and one sentence.
#[derive(Debug)]
pub(crate) struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    pub(crate) fn bad_input(message: impl Into<String>) -> Self {
        Self {
            code: 2,
            message: message.into(),
        }
    }

    pub(crate) fn infra(message: impl Into<String>) -> Self {
        Self {
            code: 3,
            message: message.into(),
        }
    }
}

impl From<plumb_agent::RunError> for Failure {
    fn from(err: plumb_agent::RunError) -> Self {
        Self {
            code: err.exit_code(),
            message: err.to_string(),
        }
    }
}

fn main() {
    screen::report_panics();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and usage errors quote the command line; they go through the door too, uncoloured.
        Err(err) => {
            let text = err.render().to_string();
            if err.use_stderr() {
                screen::err(&text);
            } else {
                screen::out(&text);
            }
            std::process::exit(err.exit_code());
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            say!("plumb: could not start the async runtime: {err}");
            std::process::exit(3);
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Command::Fix(args) => fix::run(args, &cli.config).await,
            Command::Apply(args) => home::apply(args, &cli.config),
            Command::Undo(args) => home::undo(args, &cli.config),
            Command::Runs(args) => home::runs(args, &cli.config),
            Command::Show(args) => home::show(args, &cli.config),
            Command::Replay(args) => replay::run(args, &cli.config).await,
            Command::Map(args) => map::run(args),
            Command::Doctor => Ok(doctor::run().await),
            Command::Models(args) => models::run(args, &cli.config).await,
            Command::Config(args) => config_show::run(args, &cli.config),
            Command::Eval(args) => eval::run(args, &cli.config).await,
            Command::Worker(args) => worker::run(args, &cli.config).await,
            Command::Serve(args) => serve::run(args, &cli.config).await,
            Command::Mcp(args) => mcp::run(args, &cli.config).await,
            Command::Token(args) => token::run(args).await,
            Command::Tenant(args) => tenant::run(args).await,
        }
    });
    match result {
        Ok(code) => std::process::exit(code),
        Err(failure) => {
            say!("plumb: {}", failure.message);
            std::process::exit(failure.code);
        }
    }
}
