//! `plumb-bench`: measures plumb's speed targets and prints Markdown tables of medians (stdout;
//! progress goes to stderr). Run it through `scripts/bench.sh`. Two tables, chosen by the first
//! argument:
//!
//! - `engine` (the default): the engine's targets on two fixtures. Order: the machine, the
//!   fixtures (the generated repository, then `examples/billing`), the engine measurements on
//!   each ([`engine`]), the harness runs on each ([`harness`]), then the table, the harness
//!   breakdown and the command that repeats the run.
//! - `sandbox`: spawn overhead per command of the `none`, `bwrap` and `gvisor` backends
//!   ([`sandbox`]), then its table ([`sandbox_report`]).
//! - `sse`: the server-sent events parser on one long line of 1, 4 and 16 MiB ([`sse`]).
//! - `search`: `search_code` beside ripgrep on a large tree given with `--tree` ([`search_tree`]).
//! - `all`: the engine page, then the sandbox page.
//!
//! Usage: see [`USAGE`]. An option of one table is refused when only the other runs, so no
//! one believes it had an effect.

mod engine;
mod fixtures;
mod generated;
mod harness;
mod machine;
mod measure;
mod prompt_rounds;
mod pymod;
mod report;
mod rng;
mod sandbox;
mod sandbox_report;
mod scenario;
mod search_tree;
mod sse;
mod table;

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use tokio::runtime::Runtime;

use crate::harness::HarnessResult;

const DEFAULT_RUNS: usize = 7;
const USAGE: &str = "usage: plumb-bench [engine|sandbox|sse|all] [options]
  engine            the engine's table (the default)
  sandbox           spawn overhead of the none, bwrap and gvisor sandboxes per command
  sse               the server-sent events parser on one line of 1, 4 and 16 MiB
  search            search_code beside rg on a large tree (--tree DIR)
  prompt            the prompt's size round by round over a scripted run on a large Python
                    tree (--tree DIR --test-cmd CMD), at the defaults and with every result whole
  all               the engine's and the sandbox's tables, the engine's first
engine, sse and search options:
  --runs N          repeat every measurement N times (default 7)
search and prompt options:
  --tree DIR        the tree to search or run on (e.g. an unpacked sdist of SymPy)
prompt options:
  --test-cmd CMD    the tests the scripted run calls (e.g. one test file of the tree)
  --rounds N        rounds of the scripted run (default 30)
  --dir PATH        write the generated repository into PATH (a new or empty folder) and keep it
sandbox options:
  --true-runs N     run `true` N times per backend (default 50)
  --pytest-runs N   run the BILL-412 suite N times per backend (default 10)";

/// Which tables to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tables {
    Engine,
    Sandbox,
    Sse,
    Search,
    Prompt,
    All,
}

impl Tables {
    fn engine(self) -> bool {
        matches!(self, Tables::Engine | Tables::All)
    }

    /// Whether `--runs` means something: the engine's and the parser's tables repeat.
    fn repeats(self) -> bool {
        matches!(
            self,
            Tables::Engine | Tables::Sse | Tables::Search | Tables::All
        )
    }

    fn sandbox(self) -> bool {
        matches!(self, Tables::Sandbox | Tables::All)
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Args {
    tables: Tables,
    runs: usize,
    dir: Option<PathBuf>,
    tree: Option<PathBuf>,
    test_command: Option<String>,
    rounds: usize,
    sandbox: sandbox::Options,
}

/// A whole number above 0 following `flag`.
fn count(flag: &str, value: Option<&String>) -> Result<usize> {
    let value = value.with_context(|| format!("{flag} needs a number, e.g. {flag} 5"))?;
    value
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .with_context(|| format!("{flag} {value}: give a whole number above 0"))
}

fn parse_args(raw: &[String]) -> Result<Args> {
    let mut args = Args {
        tables: Tables::Engine,
        runs: DEFAULT_RUNS,
        dir: None,
        tree: None,
        test_command: None,
        rounds: prompt_rounds::DEFAULT_ROUNDS,
        sandbox: sandbox::Options {
            true_runs: sandbox::DEFAULT_TRUE_RUNS,
            pytest_runs: sandbox::DEFAULT_PYTEST_RUNS,
        },
    };
    let (mut engine_flag, mut runs_flag, mut sandbox_flag) = (None, None, None);
    let mut iter = raw.iter().enumerate();
    while let Some((index, arg)) = iter.next() {
        match arg.as_str() {
            "engine" | "sandbox" | "sse" | "search" | "prompt" | "all" if index == 0 => {
                args.tables = match arg.as_str() {
                    "sandbox" => Tables::Sandbox,
                    "sse" => Tables::Sse,
                    "search" => Tables::Search,
                    "prompt" => Tables::Prompt,
                    "all" => Tables::All,
                    _ => Tables::Engine,
                };
            }
            "--runs" => {
                args.runs = count(arg, iter.next().map(|(_, v)| v))?;
                runs_flag = Some(arg);
            }
            "--dir" => {
                let (_, value) = iter.next().context("--dir needs a folder")?;
                args.dir = Some(PathBuf::from(value));
                engine_flag = Some(arg);
            }
            "--tree" => {
                let (_, value) = iter.next().context("--tree needs a folder to search")?;
                args.tree = Some(PathBuf::from(value));
            }
            "--test-cmd" => {
                let (_, value) = iter
                    .next()
                    .context("--test-cmd needs a command, e.g. --test-cmd 'python3 -m pytest -q tests/test_core.py'")?;
                args.test_command = Some(value.clone());
            }
            "--rounds" => {
                args.rounds = count(arg, iter.next().map(|(_, v)| v))?;
            }
            "--true-runs" => {
                args.sandbox.true_runs = count(arg, iter.next().map(|(_, v)| v))?;
                sandbox_flag = Some(arg);
            }
            "--pytest-runs" => {
                args.sandbox.pytest_runs = count(arg, iter.next().map(|(_, v)| v))?;
                sandbox_flag = Some(arg);
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    if let (Some(flag), false) = (runs_flag, args.tables.repeats()) {
        bail!(
            "{flag} is an option of the engine, sse and search tables; drop it or run `plumb-bench engine`, `sse`, `search` or `all`"
        );
    }
    if let (Some(flag), false) = (engine_flag, args.tables.engine()) {
        bail!(
            "{flag} is an option of the engine table; drop it or run `plumb-bench engine` or `all`"
        );
    }
    if let (Some(flag), false) = (sandbox_flag, args.tables.sandbox()) {
        bail!(
            "{flag} is an option of the sandbox table; run `plumb-bench sandbox {flag} N` or `all`"
        );
    }
    match (&args.tree, args.tables) {
        (None, Tables::Search) => bail!(
            "the search table needs the tree to search: `plumb-bench search --tree DIR` (an unpacked sdist, a checkout)"
        ),
        (None, Tables::Prompt) => bail!(
            "the prompt table needs a large Python tree to run on: `plumb-bench prompt --tree DIR --test-cmd CMD`"
        ),
        (Some(_), tables) if tables != Tables::Search && tables != Tables::Prompt => {
            bail!(
                "--tree is an option of the search and prompt tables; run `plumb-bench search --tree DIR`"
            )
        }
        _ => {}
    }
    match (&args.test_command, args.tables) {
        (None, Tables::Prompt) => bail!(
            "the prompt table needs the tests its run may call: --test-cmd CMD (e.g. one test file of the tree)"
        ),
        (Some(_), tables) if tables != Tables::Prompt => {
            bail!(
                "--test-cmd is an option of the prompt table; run `plumb-bench prompt --tree DIR --test-cmd CMD`"
            )
        }
        _ => {}
    }
    if args.rounds != prompt_rounds::DEFAULT_ROUNDS && args.tables != Tables::Prompt {
        bail!("--rounds is an option of the prompt table; run `plumb-bench prompt --rounds N`");
    }
    Ok(args)
}

fn main() -> Result<()> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().map(String::as_str) == Some("__search") {
        let (Some(root), Some(query)) = (raw.get(1), raw.get(2)) else {
            bail!("usage: plumb-bench __search ROOT QUERY [--regex]");
        };
        let regex = raw.get(3).map(String::as_str) == Some("--regex");
        return engine::search_once(&PathBuf::from(root), query, regex);
    }
    let args = parse_args(&raw)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    if args.tables.engine() {
        run_engine(&args, &raw, &runtime)?;
    }
    if args.tables.sandbox() {
        if args.tables.engine() {
            println!();
        }
        run_sandbox(args.sandbox, &runtime)?;
    }
    if let (Tables::Search, Some(tree)) = (args.tables, &args.tree) {
        eprintln!(
            "bench: search_code beside rg on {}, {} runs",
            tree.display(),
            args.runs
        );
        print!(
            "{}",
            search_tree::measure(tree, args.runs, &machine::describe())?
        );
    }
    if let (Tables::Prompt, Some(tree), Some(test_command)) =
        (args.tables, &args.tree, &args.test_command)
    {
        eprintln!(
            "bench: the prompt over {} scripted rounds on {}",
            args.rounds,
            tree.display()
        );
        print!(
            "{}",
            prompt_rounds::measure(
                tree,
                test_command,
                args.rounds,
                &machine::describe(),
                &runtime
            )?
        );
    }
    if args.tables == Tables::Sse {
        eprintln!("bench: the server-sent events parser, {} runs", args.runs);
        let rows = sse::measure(args.runs)?;
        print!("{}", sse::render(&rows, args.runs, &machine::describe()));
    }
    Ok(())
}

/// The engine's page: fixtures, engine measurements, harness runs.
fn run_engine(args: &Args, raw: &[String], runtime: &Runtime) -> Result<()> {
    let temp = tempfile::Builder::new().prefix("plumb-bench-").tempdir()?;
    let scratch = temp.path().join("scratch");
    std::fs::create_dir_all(&scratch)?;
    let machine = machine::describe();
    let rg = machine.rg.is_some();

    let gen_dir = args
        .dir
        .clone()
        .unwrap_or_else(|| temp.path().join("acme-billing"));
    eprintln!("bench: generating the repository in {}", gen_dir.display());
    let (generated, gen_seconds) = fixtures::generated(&gen_dir, &scratch)?;
    let billing = fixtures::billing()?;
    let fixtures = [generated, billing];

    let mut rows = Vec::new();
    let mut engines = Vec::new();
    for prepared in &fixtures {
        eprintln!("bench: engine measurements on {}", prepared.fixture.name);
        let result = engine::measure(&prepared.fixture, args.runs, &scratch, rg)?;
        rows.extend(result.rows);
        engines.push((result.checkpoint_changed, result.checkpoint_unchanged));
    }
    let home = temp.path().join("plumb-home");
    let mut harnesses: Vec<HarnessResult> = Vec::new();
    for prepared in &fixtures {
        eprintln!("bench: harness runs on {}", prepared.fixture.name);
        let result = harness::measure(&prepared.case, args.runs, &home, runtime)?;
        rows.extend(report::harness_rows(&prepared.fixture.name, &result));
        harnesses.push(result);
    }

    print!(
        "{}",
        report::render(&report::Report {
            machine: &machine,
            runs: args.runs,
            raw_args: raw,
            fixtures: &fixtures,
            gen_seconds,
            kept_dir: args.dir.as_deref(),
            temp_dir: temp.path(),
            rows: &rows,
            harnesses: &harnesses,
            checkpoints: &engines,
        })
    );
    Ok(())
}

/// The sandbox page: spawn overhead per command of each backend.
fn run_sandbox(opts: sandbox::Options, runtime: &Runtime) -> Result<()> {
    let temp = tempfile::Builder::new()
        .prefix("plumb-bench-sandbox-")
        .tempdir()?;
    let facts = sandbox_report::facts(runtime);
    let result = sandbox::measure(opts, temp.path(), runtime)?;
    print!(
        "{}",
        sandbox_report::render(&sandbox_report::Page {
            facts: &facts,
            opts,
            result: &result,
            temp_dir: temp.path(),
        })
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse(words: &[&str]) -> Result<Args> {
        let raw: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        parse_args(&raw)
    }

    #[test]
    fn the_first_word_chooses_the_tables_and_their_options() {
        let actual = parse(&["sandbox", "--true-runs", "20", "--pytest-runs", "3"]).unwrap();

        let expected = Args {
            tables: Tables::Sandbox,
            runs: DEFAULT_RUNS,
            dir: None,
            tree: None,
            test_command: None,
            rounds: prompt_rounds::DEFAULT_ROUNDS,
            sandbox: sandbox::Options {
                true_runs: 20,
                pytest_runs: 3,
            },
        };
        assert_eq!(actual, expected);
    }

    #[test]
    fn the_search_table_needs_its_tree_and_only_it_takes_one() {
        let actual = (
            parse(&["search", "--tree", "/tmp/sympy", "--runs", "3"])
                .map(|args| (args.tables, args.tree, args.runs))
                .unwrap(),
            parse(&["search"]).map(|_| ()).unwrap_err().to_string(),
            parse(&["--tree", "/tmp/sympy"])
                .map(|_| ())
                .unwrap_err()
                .to_string(),
        );

        let expected = (
            (Tables::Search, Some(PathBuf::from("/tmp/sympy")), 3),
            "the search table needs the tree to search: `plumb-bench search --tree DIR` (an unpacked sdist, a checkout)".to_string(),
            "--tree is an option of the search and prompt tables; run `plumb-bench search --tree DIR`".to_string(),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn the_prompt_table_needs_a_tree_and_a_test_command() {
        let actual = (
            parse(&[
                "prompt",
                "--tree",
                "/tmp/sympy",
                "--test-cmd",
                "pytest -q t.py",
                "--rounds",
                "12",
            ])
            .map(|args| (args.tables, args.tree, args.test_command, args.rounds))
            .unwrap(),
            parse(&["prompt", "--tree", "/tmp/sympy"])
                .map(|_| ())
                .unwrap_err()
                .to_string(),
            parse(&["search", "--tree", "/tmp/sympy", "--test-cmd", "pytest"])
                .map(|_| ())
                .unwrap_err()
                .to_string(),
        );

        let expected = (
            (
                Tables::Prompt,
                Some(PathBuf::from("/tmp/sympy")),
                Some("pytest -q t.py".to_string()),
                12,
            ),
            "the prompt table needs the tests its run may call: --test-cmd CMD (e.g. one test file of the tree)".to_string(),
            "--test-cmd is an option of the prompt table; run `plumb-bench prompt --tree DIR --test-cmd CMD`".to_string(),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn an_option_of_the_other_table_is_refused() {
        let actual: Vec<String> = [
            parse(&["--true-runs", "5"]),
            parse(&["sandbox", "--runs", "3"]),
            parse(&["--runs", "sandbox"]),
        ]
        .into_iter()
        .map(|r| r.map(|_| ()).unwrap_err().to_string())
        .collect();

        assert_eq!(
            actual,
            [
                "--true-runs is an option of the sandbox table; run `plumb-bench sandbox --true-runs N` or `all`",
                "--runs is an option of the engine, sse and search tables; drop it or run `plumb-bench engine`, `sse`, `search` or `all`",
                "--runs sandbox: give a whole number above 0",
            ]
        );
    }
}
