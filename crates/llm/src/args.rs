//! Command-line flags: `--model PATH [--ctx N] [--threads N] [--batch N] [--parallel N] [--state-dir DIR]
//! [--verbose]`.
//!
//! Each flag takes `--flag VALUE` or `--flag=VALUE`. Errors are sentences naming the flag and what to change;
//! `main` prints them as a protocol error line.

use std::path::PathBuf;

/// The usage text printed by `--help` (to stderr: stdout carries only protocol lines).
pub const USAGE: &str =
    "usage: plumb-llm --model PATH [--ctx N (default 8192)] [--threads N (default: all cores)] \
[--batch N (default 512)] [--parallel N (default 4)] [--state-dir DIR] [--verbose]
Serves a local GGUF model over JSON Lines on stdin/stdout. A request may ask for up to --parallel replies (\"n\"),
sampled side by side in one batch. With --state-dir, the evaluated state of a prompt sent with \"persist\": true is
kept in DIR and loaded when a later process starts with the same prompt.";

/// Parsed flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    pub model: PathBuf,
    pub ctx: u32,
    pub threads: u32,
    pub batch: u32,
    /// The most sequences one request may sample side by side.
    pub parallel: u32,
    /// Where the states of persisted prompts are kept; none without the flag.
    pub state_dir: Option<PathBuf>,
    pub verbose: bool,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Serve(Args),
    Help,
}

const MIN_CTX: u32 = 64;
/// Four replies a round is plumb's default for the embedded model.
const DEFAULT_PARALLEL: u32 = 4;
/// llama.cpp keeps a fixed table per sequence; more than this is never useful on a CPU.
const MAX_PARALLEL: u32 = 16;

/// Parses the flags after the program name. `default_threads` is used when `--threads` is absent.
pub fn parse(
    args: impl IntoIterator<Item = String>,
    default_threads: u32,
) -> Result<Command, String> {
    let mut model = None;
    let mut ctx = 8192;
    let mut threads = default_threads.max(1);
    let mut batch = 512;
    let mut parallel = DEFAULT_PARALLEL;
    let mut state_dir = None;
    let mut verbose = false;

    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value; write {name} VALUE."))
        };
        match flag.as_str() {
            "--model" => model = Some(PathBuf::from(value("--model")?)),
            "--ctx" => ctx = number("--ctx", &value("--ctx")?, MIN_CTX)?,
            "--threads" => threads = number("--threads", &value("--threads")?, 1)?,
            "--batch" => batch = number("--batch", &value("--batch")?, 1)?,
            "--parallel" => {
                parallel = number("--parallel", &value("--parallel")?, 1)?;
                if parallel > MAX_PARALLEL {
                    return Err(format!(
                        "--parallel {parallel} is too many; give at most {MAX_PARALLEL}."
                    ));
                }
            }
            "--state-dir" => state_dir = Some(PathBuf::from(value("--state-dir")?)),
            "--verbose" => verbose = true,
            "--help" | "-h" => return Ok(Command::Help),
            other => {
                return Err(format!(
                    "Unknown argument {other:?}. Use --model PATH, --ctx N, --threads N, --batch N, --parallel N, \
                     --state-dir DIR or --verbose."
                ));
            }
        }
    }

    let model =
        model.ok_or("--model is missing; pass --model PATH with the path of a GGUF model file.")?;
    if !model.is_file() {
        return Err(format!(
            "The model file {} does not exist. Pass --model with the path of a GGUF file \
             (`plumb models fetch 0.5b` downloads one).",
            model.display()
        ));
    }
    Ok(Command::Serve(Args {
        model,
        ctx,
        threads,
        batch: batch.min(ctx),
        parallel,
        state_dir,
        verbose,
    }))
}

fn number(flag: &str, value: &str, min: u32) -> Result<u32, String> {
    value
        .parse::<u32>()
        .ok()
        .filter(|n| *n >= min)
        .ok_or_else(|| {
            format!("{flag} {value:?} is not valid; give a whole number of at least {min}.")
        })
}

#[cfg(test)]
mod tests {
    use super::{Args, Command, parse};
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn reads_flags_in_both_spellings_and_applies_defaults() {
        let model = std::env::current_exe().unwrap().display().to_string();
        let cases = [
            args(&["--model", &model]),
            args(&[
                &format!("--model={model}"),
                "--ctx=4096",
                "--threads",
                "3",
                "--batch",
                "64",
                "--parallel=2",
                "--state-dir=/tmp/states",
                "--verbose",
            ]),
            args(&["--model", &model, "--ctx", "128"]),
        ];

        let actual: Vec<Result<Command, String>> =
            cases.into_iter().map(|case| parse(case, 2)).collect();

        let serve = |ctx, threads, batch, parallel, state_dir: Option<&str>, verbose| {
            Ok(Command::Serve(Args {
                model: PathBuf::from(&model),
                ctx,
                threads,
                batch,
                parallel,
                state_dir: state_dir.map(PathBuf::from),
                verbose,
            }))
        };
        assert_eq!(
            actual,
            vec![
                serve(8192, 2, 512, 4, None, false),
                serve(4096, 3, 64, 2, Some("/tmp/states"), true),
                serve(128, 2, 128, 4, None, false)
            ]
        );
    }

    #[test]
    fn explains_bad_arguments() {
        let cases = [
            args(&[]),
            args(&["--model", "/nonexistent/m.gguf"]),
            args(&["--model"]),
            args(&["--ctx", "ten"]),
            args(&["--threads", "0"]),
            args(&["--temperature", "1"]),
            args(&["--parallel", "17"]),
        ];

        let actual: Vec<Result<Command, String>> =
            cases.into_iter().map(|case| parse(case, 2)).collect();

        let expected: Vec<Result<Command, String>> = vec![
            Err("--model is missing; pass --model PATH with the path of a GGUF model file.".to_owned()),
            Err("The model file /nonexistent/m.gguf does not exist. Pass --model with the path of a GGUF file \
                 (`plumb models fetch 0.5b` downloads one)."
                .to_owned()),
            Err("--model needs a value; write --model VALUE.".to_owned()),
            Err("--ctx \"ten\" is not valid; give a whole number of at least 64.".to_owned()),
            Err("--threads \"0\" is not valid; give a whole number of at least 1.".to_owned()),
            Err("Unknown argument \"--temperature\". Use --model PATH, --ctx N, --threads N, --batch N, --parallel N, \
                 --state-dir DIR or --verbose."
                .to_owned()),
            Err("--parallel 17 is too many; give at most 16.".to_owned()),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn help_wins() {
        assert_eq!(parse(args(&["--help"]), 2), Ok(Command::Help));
    }
}
