//! The prompt's size round by round over a long run on a large Python tree (`plumb-bench prompt
//! --tree DIR --test-cmd CMD [--rounds N]`): the run's own loop, tools and helpers (sandbox
//! `none`, the embedded model's helpers) driven by a scripted model whose calls are made from
//! the tree — an outline of a folder, windows of its Python files read from the top and further
//! down, searches for the names they define, the tests run every eighth round — so nothing
//! depends on one tree's contents. The same script runs twice: at today's defaults (the last
//! `limits.full_results_kept` results whole, older ones one line, the history's other bounds),
//! and with every result kept whole (`full_results_kept` past the number of rounds) for
//! comparison. Each request's size is the journal's (`model_request`'s `size`, estimated at
//! three bytes a token; see docs/prompt.md for how that compares with the model's tokenizer).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result, bail};
use plumb_config::Config;
use plumb_model::{ScriptModel, ScriptTurn};
use plumb_protocol::{Event, PromptSize, SandboxKind, ToolCall};
use plumb_sandbox::{NoSandbox, Toolchains};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use crate::machine::Machine;

/// Target: the prompt of every round under this many tokens at the default budgets.
pub const TARGET_TOKENS: u64 = 8_000;

/// The default number of rounds.
pub const DEFAULT_ROUNDS: usize = 30;

/// Python files the script reads and searches, spread over the tree.
const FILES: usize = 12;

/// The files and names the script works with, found in the tree.
struct Material {
    /// Python files, relative, spread over the tree in path order.
    files: Vec<String>,
    /// Function names defined in those files.
    names: Vec<String>,
}

fn python_files(root: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .with_context(|| format!("could not list {}", dir.display()))?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let path = entry.path();
            let kind = entry.file_type()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if kind.is_dir() && !name.starts_with('.') && name != "__pycache__" {
                stack.push(path);
            } else if kind.is_file()
                && name.ends_with(".py")
                && !name.starts_with("test_")
                && name != "__init__.py"
                && let Ok(relative) = path.strip_prefix(root)
            {
                found.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    Ok(found)
}

fn material(root: &Path) -> Result<Material> {
    let all = python_files(root)?;
    if all.len() < FILES {
        bail!(
            "{} holds {} Python source files; the prompt bench needs a large Python tree (e.g. an unpacked sdist of SymPy)",
            root.display(),
            all.len()
        );
    }
    let step = all.len() / FILES;
    let files: Vec<String> = all.iter().step_by(step).take(FILES).cloned().collect();
    let mut names = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        if let Some(name) = text.lines().find_map(|line| {
            line.strip_prefix("def ")
                .and_then(|rest| rest.split_once('('))
                .map(|(name, _)| name.to_string())
        }) {
            names.push(name);
        }
    }
    if names.is_empty() {
        bail!(
            "no top-level Python function found in {} of {}",
            files.join(", "),
            root.display()
        );
    }
    Ok(Material { files, names })
}

fn call(n: usize, name: &str, arguments: Value) -> ScriptTurn {
    ScriptTurn {
        content: format!("Step {n}: I look further."),
        tool_calls: vec![ToolCall {
            id: format!("call_{n}"),
            name: name.to_string(),
            arguments,
        }],
        alternatives: Vec::new(),
    }
}

/// The script: one call a round, cycling through outline, reads, searches and test runs.
fn script(material: &Material, rounds: usize) -> Vec<ScriptTurn> {
    (0..rounds)
        .map(|n| {
            let file = &material.files[n % material.files.len()];
            let name = &material.names[n % material.names.len()];
            let folder = file.rsplit_once('/').map_or(".", |(folder, _)| folder);
            match n % 8 {
                0 => call(n, "list_files", json!({"path": folder})),
                1 | 4 => call(n, "read_file", json!({"path": file})),
                2 | 5 => call(n, "search_code", json!({"query": name})),
                3 => call(n, "read_file", json!({"path": file, "start_line": 120})),
                6 => call(
                    n,
                    "read_file",
                    json!({"path": file, "start_line": 60, "lines": 200}),
                ),
                _ => call(n, "run_tests", json!({})),
            }
        })
        .collect()
}

/// The estimated size of every fixer request of one run, in order.
fn sizes_of_a_run(
    tree: &Path,
    ticket: &str,
    test_command: &str,
    turns: Vec<ScriptTurn>,
    kept_whole: Option<usize>,
    runtime: &Runtime,
) -> Result<Sizes> {
    let scratch = tempfile::tempdir()?;
    let run_dir = scratch.path().join("run");
    std::fs::create_dir_all(&run_dir)?;
    let mut config = Config {
        sandbox: SandboxKind::None,
        test_command: Some(test_command.to_string()),
        ..Config::default()
    };
    config.limits.max_rounds = u32::try_from(turns.len()).unwrap_or(u32::MAX);
    if let Some(kept) = kept_whole {
        config.limits.full_results_kept = kept;
        // No history budget either: it would shrink the whole results early.
        config.limits.prompt_share = 0.0;
        config.limits.history_tokens = 0;
    }
    // The run's input channel starts its router on the runtime.
    let _runtime = runtime.enter();
    let spec = plumb_agent::RunSpec {
        repo_label: tree.display().to_string(),
        repo: tree.to_path_buf(),
        ticket: ticket.to_string(),
        model: Box::new(ScriptModel::from_turns("local".into(), turns)),
        reviewer: None,
        config,
        test_command: None,
        sandbox: Box::new(
            NoSandbox::new(run_dir.join("sandbox"))
                .with_toolchains(Toolchains::from_process(run_dir.join("toolcache"))),
        ),
        run_id: "prompt-rounds".into(),
        run_dir: run_dir.clone(),
        journal_path: None,
        inbox: plumb_agent::input::channel().1,
        observer: None,
        expect_base_tree: None,
        fail_to_pass: Vec::new(),
        setup_cache: None,
        settings: plumb_protocol::Provenance::default(),
    };
    let report = runtime
        .block_on(plumb_agent::run(spec))
        .with_context(|| format!("the scripted run on {} could not start", tree.display()))?;
    let journal = plumb_agent::read_journal(Path::new(&report.journal)).map_err(|why| {
        anyhow::anyhow!("could not read the run's journal {}: {why}", report.journal)
    })?;
    // A compaction's own request (the `model_request` just before its `compacted` line) is not
    // a round's.
    let mut sizes = Vec::new();
    let mut compactions = 0;
    for line in &journal {
        match &line.event {
            Event::ModelRequest {
                size: Some(size), ..
            } => sizes.push(size.clone()),
            Event::Compacted { .. } => {
                sizes.pop();
                compactions += 1;
            }
            _ => {}
        }
    }
    Ok(Sizes { sizes, compactions })
}

/// The size of each round's request in one run, and how many times its history was compacted.
struct Sizes {
    sizes: Vec<PromptSize>,
    compactions: usize,
}

/// Both runs on `tree`, rendered as a table.
pub fn measure(
    tree: &Path,
    test_command: &str,
    rounds: usize,
    machine: &Machine,
    runtime: &Runtime,
) -> Result<String> {
    let material = material(tree)?;
    let ticket = format!(
        "{} gives a wrong result for an empty input.\n\nCalling {}() with no arguments should return the neutral value, but it raises an error. See {}.",
        material.names[0], material.names[0], material.files[0]
    );
    let default_run = sizes_of_a_run(
        tree,
        &ticket,
        test_command,
        script(&material, rounds),
        None,
        runtime,
    )?;
    let whole = sizes_of_a_run(
        tree,
        &ticket,
        test_command,
        script(&material, rounds),
        Some(rounds + 1),
        runtime,
    )?;
    Ok(render(
        tree,
        test_command,
        &default_run,
        &whole.sizes,
        machine,
    ))
}

/// The fixed head of a request (rules, tools, the first message) and its history (calls,
/// results, the harness's notes).
fn head_and_history(size: &PromptSize) -> (u64, u64) {
    (
        size.rules + size.tools + size.ticket + size.project + size.repo_map + size.code,
        size.calls + size.results + size.notes,
    )
}

fn render(
    tree: &Path,
    test_command: &str,
    default_run: &Sizes,
    whole: &[PromptSize],
    machine: &Machine,
) -> String {
    let default = &default_run.sizes;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "prompt tokens per round (estimate: bytes/3) on {}, test command `{test_command}`, {} and {} requests\n",
        tree.display(),
        default.len(),
        whole.len()
    );
    let _ = writeln!(
        out,
        "| round | defaults | of it: head | of it: history | every result whole |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|");
    for round in 0..default.len().max(whole.len()) {
        let total = |sizes: &[PromptSize]| {
            sizes
                .get(round)
                .map_or("–".to_string(), |size| size.total.to_string())
        };
        let (head, history) =
            default
                .get(round)
                .map_or(("–".to_string(), "–".to_string()), |size| {
                    let (head, history) = head_and_history(size);
                    (head.to_string(), history.to_string())
                });
        let _ = writeln!(
            out,
            "| {} | {} | {head} | {history} | {} |",
            round + 1,
            total(default),
            total(whole)
        );
    }
    let peak = default.iter().map(|size| size.total).max().unwrap_or(0);
    let peak_whole = whole.iter().map(|size| size.total).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "\nlargest prompt: {peak} at the defaults ({}: target under {TARGET_TOKENS}), {peak_whole} with every result whole",
        if peak < TARGET_TOKENS {
            "met"
        } else {
            "missed"
        }
    );
    if let Some(first) = default.first() {
        let _ = writeln!(
            out,
            "the head at the defaults: rules {}, tools {}, ticket {}, project notes and test line {}, repo map {}, code shown up front {}",
            first.rules, first.tools, first.ticket, first.project, first.repo_map, first.code
        );
    }
    let _ = writeln!(
        out,
        "history compacted {} times at the defaults (the scripted model gives no summary, so plumb's own list of calls stands in for the model's)",
        default_run.compactions
    );
    let _ = writeln!(
        out,
        "machine: {} cores, {}, {} build",
        machine.nproc, machine.cpu, machine.profile
    );
    out
}
