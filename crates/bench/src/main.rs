//! `plumb-bench`: measures the engine's speed targets on two fixtures and prints a Markdown table
//! of medians (stdout; progress goes to stderr). Run it through `scripts/bench.sh`.
//!
//! Order: the machine, the fixtures (the generated repository, then `examples/billing`), the
//! engine measurements on each ([`engine`]), the harness runs on each ([`harness`]), then the
//! table, the harness breakdown and the command that repeats the run.
//!
//! Usage: `plumb-bench [--runs N] [--dir PATH]`; `--runs` repeats each measurement N times
//! (default 7), `--dir` writes the generated repository there (a new or empty folder) instead of a
//! temporary one.

mod engine;
mod fixtures;
mod generated;
mod harness;
mod machine;
mod measure;
mod pymod;
mod report;
mod rng;
mod scenario;
mod table;

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::harness::HarnessResult;

const DEFAULT_RUNS: usize = 7;
const USAGE: &str = "usage: plumb-bench [--runs N] [--dir PATH]
  --runs N    repeat every measurement N times (default 7)
  --dir PATH  write the generated repository into PATH (a new or empty folder) and keep it";

struct Args {
    runs: usize,
    dir: Option<PathBuf>,
}

fn parse_args(raw: &[String]) -> Result<Args> {
    let mut args = Args {
        runs: DEFAULT_RUNS,
        dir: None,
    };
    let mut iter = raw.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--runs" => {
                let value = iter
                    .next()
                    .context("--runs needs a number, e.g. --runs 7")?;
                args.runs = value
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .with_context(|| format!("--runs {value}: give a whole number above 0"))?;
            }
            "--dir" => {
                let value = iter.next().context("--dir needs a folder")?;
                args.dir = Some(PathBuf::from(value));
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    Ok(args)
}

fn main() -> Result<()> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().map(String::as_str) == Some("__search") {
        let (Some(root), Some(query)) = (raw.get(1), raw.get(2)) else {
            bail!("usage: plumb-bench __search ROOT QUERY");
        };
        return engine::search_once(&PathBuf::from(root), query);
    }
    let args = parse_args(&raw)?;
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let home = temp.path().join("plumb-home");
    let mut harnesses: Vec<HarnessResult> = Vec::new();
    for prepared in &fixtures {
        eprintln!("bench: harness runs on {}", prepared.fixture.name);
        let result = harness::measure(&prepared.case, args.runs, &home, &runtime)?;
        rows.extend(report::harness_rows(&prepared.fixture.name, &result));
        harnesses.push(result);
    }

    print!(
        "{}",
        report::render(&report::Report {
            machine: &machine,
            runs: args.runs,
            raw_args: &raw,
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
