//! `plumb-llm`: runs a local GGUF model with llama.cpp on the CPU and serves it over JSON Lines.
//!
//! plumb starts this binary once per run and keeps it alive so the KV cache (the prompt prefix) carries over
//! between rounds. Order: ask for `SIGKILL` when the parent dies (a killed plumb must not leave a runner keeping
//! the cores busy), start reading stdin ([`input`]), parse flags, load the model and context, print the `ready`
//! line, then answer each stdin line with one stdout line until stdin closes (exit 0; a request being answered
//! then is abandoned, as nobody will read its reply). Start-up failures print one `{"event":"error"}` line and
//! exit 2 (bad flags or model file) or 1 (llama.cpp failed to load it). Protocol types are in [`protocol`]; the
//! model side is in [`engine`].

mod args;
mod cache;
mod engine;
mod generate;
mod input;
mod lookup;
mod persist;
mod protocol;
mod rss;
mod sampling;
mod text;

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use serde::Serialize;

use crate::args::{Args, Command};
use crate::engine::{ContextSettings, Engine, EngineError, StateNote};
use crate::input::Input;
use crate::persist::StateStore;
use crate::protocol::{ChoiceReply, ErrorKind, ErrorReply, Event, Reply, Request, millis};

fn main() -> ExitCode {
    // Linux keeps this across the exec plumb started us with; a failure leaves only the stdin check below.
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    let input = Input::start();
    let default_threads =
        std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(1));
    let args = match args::parse(std::env::args().skip(1), default_threads) {
        Ok(Command::Serve(args)) => args,
        Ok(Command::Help) => {
            eprintln!("{}", args::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(message) => return fail(message, 2),
    };
    match serve(&args, &input) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(message, 1),
    }
}

/// Prints a start-up error as a protocol line and returns the exit code.
fn fail(message: String, code: u8) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    if write_line(&mut stdout, &Event::Error { message }).is_err() {
        eprintln!("plumb-llm: could not write to stdout");
    }
    ExitCode::from(code)
}

fn serve(args: &Args, input: &Input) -> Result<(), String> {
    let started = Instant::now();
    let mut backend =
        LlamaBackend::init().map_err(|err| format!("llama.cpp did not initialise ({err})"))?;
    if !args.verbose {
        backend.void_logs();
    }
    let model = LlamaModel::load_from_file(&backend, &args.model, &LlamaModelParams::default()).map_err(|err| {
        format!(
            "llama.cpp could not load the model {} ({err}). Check that it is a complete GGUF file; fetch it again \
             if it was cut short.",
            args.model.display()
        )
    })?;
    let settings = ContextSettings {
        n_ctx: args.ctx,
        threads: args.threads,
        batch: args.batch,
        parallel: args.parallel,
    };
    let store = args
        .state_dir
        .clone()
        .map(|dir| StateStore::new(dir, &args.model));
    let mut engine = Engine::new(&backend, &model, settings, store, input.closed())?;

    let mut stdout = std::io::stdout().lock();
    let ready = Event::Ready {
        n_ctx: engine.n_ctx(),
        load_ms: millis(started.elapsed()),
        model: args
            .model
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    write_line(&mut stdout, &ready)?;
    if args.verbose {
        eprintln!(
            "plumb-llm: loaded {} in {:.0} ms ({} threads, batch {})",
            args.model.display(),
            started.elapsed().as_secs_f64() * 1000.0,
            args.threads,
            args.batch
        );
    }

    while let Some(line) = input.next_line() {
        let line = line?;
        let Ok(text) = std::str::from_utf8(&line) else {
            write_line(
                &mut stdout,
                &bad_request(None, "The request line is not valid UTF-8.".to_owned()),
            )?;
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        match Request::parse(text) {
            Ok(request) => answer(&mut engine, &request, args.verbose, &mut stdout)?,
            Err(bad) => write_line(&mut stdout, &bad_request(bad.id, bad.message))?,
        }
    }
    Ok(())
}

fn answer(
    engine: &mut Engine<'_>,
    request: &Request,
    verbose: bool,
    out: &mut impl Write,
) -> Result<(), String> {
    match engine.run(request) {
        Ok(generation) => {
            let output_tokens: usize = generation.choices.iter().map(|c| c.output_tokens).sum();
            if verbose {
                eprintln!(
                    "plumb-llm: id {}: prompt {} tokens ({} cached) in {:.0} ms, {} tokens in {} sequences in {:.0} ms \
                     ({} decodes, {} of {} drafts kept)",
                    request.id,
                    generation.prompt_tokens,
                    generation.cached_tokens,
                    generation.prompt_time.as_secs_f64() * 1000.0,
                    output_tokens,
                    generation.choices.len(),
                    generation.gen_time.as_secs_f64() * 1000.0,
                    generation.drafts.decodes,
                    generation.drafts.accepted,
                    generation.drafts.drafted,
                );
                for note in &generation.state {
                    match note {
                        StateNote::Loaded(path) => {
                            eprintln!("plumb-llm: loaded the prompt state {}", path.display());
                        }
                        StateNote::Saved(path) => {
                            eprintln!("plumb-llm: saved the prompt state {}", path.display());
                        }
                        StateNote::Failed(why) => eprintln!("plumb-llm: prompt state: {why}"),
                    }
                }
            }
            let choices: Vec<ChoiceReply> = generation
                .choices
                .into_iter()
                .map(|choice| ChoiceReply {
                    text: choice.text,
                    output_tokens: choice.output_tokens,
                    finish: choice.finish,
                    duplicate_of: choice.duplicate_of,
                })
                .collect();
            let first = choices.first().cloned().unwrap_or(ChoiceReply {
                text: String::new(),
                output_tokens: 0,
                finish: protocol::Finish::Length,
                duplicate_of: None,
            });
            let reply = Reply {
                id: request.id,
                text: first.text,
                prompt_tokens: generation.prompt_tokens,
                cached_tokens: generation.cached_tokens,
                output_tokens,
                prompt_ms: millis(generation.prompt_time),
                gen_ms: millis(generation.gen_time),
                finish: first.finish,
                choices,
                drafted: generation.drafts.drafted,
                accepted: generation.drafts.accepted,
                decodes: generation.drafts.decodes,
                peak_rss_kb: rss::peak_rss_kb(),
            };
            write_line(out, &reply)
        }
        Err(EngineError::Abandoned) => {
            if verbose {
                eprintln!("plumb-llm: id {}: abandoned, stdin closed", request.id);
            }
            Ok(())
        }
        Err(err) => {
            if verbose {
                eprintln!("plumb-llm: id {}: {err}", request.id);
            }
            let reply = ErrorReply {
                id: Some(request.id),
                error: err.to_string(),
                kind: err.kind(),
            };
            write_line(out, &reply)
        }
    }
}

fn bad_request(id: Option<u64>, error: String) -> ErrorReply {
    ErrorReply {
        id,
        error,
        kind: ErrorKind::BadRequest,
    }
}

/// Writes one JSON line and flushes it; a closed stdout means plumb is gone, which ends the process.
fn write_line(out: &mut impl Write, value: &impl Serialize) -> Result<(), String> {
    let mut line =
        serde_json::to_vec(value).map_err(|err| format!("could not encode a reply ({err})"))?;
    line.push(b'\n');
    out.write_all(&line)
        .and_then(|()| out.flush())
        .map_err(|err| format!("could not write to stdout ({err})"))
}
