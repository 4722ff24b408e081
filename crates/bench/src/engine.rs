//! The engine measurements on one fixture, in this order (each repeated `runs` times):
//!
//! 1. workspace copy: `Workspace::prepare` into a fresh run folder, against `cp -a` and
//!    `git clone --local -q` of the same source (spawned, timed whole);
//! 2. checkpoint: append a line to one file of the copy, then `checkpoint` (timed alone); and a
//!    checkpoint with nothing changed, which every round of the loop pays once;
//! 3. rollback: change two files and add one, then `rollback(baseline)` (timed alone; the copy is
//!    checked to equal the baseline afterwards);
//! 4. search: `search` + `render` for a common word with the tool's limit of 50, in-process and
//!    through a fresh `plumb-bench __search` process, against `rg` with the equivalent flags
//!    (spawned, its stdout drained through a pipe). Every search runs once untimed first.
//!
//! Nothing is deleted until the end: on ext4 without a journal, creating files soon after
//! deleting many is several times slower (the inode allocator skips recently freed inodes), so
//! cleaning up between runs would slow the copies that follow.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use plumb_tools::search::{DEFAULT_LIMIT, SearchRequest, render, search};
use plumb_workspace::{Tree, Workspace};

use crate::measure::{Samples, isolated_git, repeat, run_drained, run_quiet, timed};
use crate::table::Row;

/// The word searched for: common in both fixtures.
pub const QUERY: &str = "total";
/// Target: our search within this factor of rg.
pub const SEARCH_TARGET: f64 = 1.5;
/// Target: one checkpoint under this many ms.
pub const CHECKPOINT_TARGET_MS: f64 = 50.0;

/// A repository to measure on.
pub struct Fixture {
    pub name: String,
    pub root: PathBuf,
    /// Three files of the repository (relative) that the measurements change.
    pub files: [String; 3],
}

/// The rows, and the checkpoint costs the harness breakdown refers to.
pub struct EngineResult {
    pub rows: Vec<Row>,
    pub checkpoint_changed: Samples,
    pub checkpoint_unchanged: Samples,
}

/// Runs every engine measurement on `fixture`, with run folders under `scratch`.
pub fn measure(fx: &Fixture, runs: usize, scratch: &Path, rg: bool) -> Result<EngineResult> {
    let name = fx.name.as_str();
    let mut rows = Vec::new();
    let (workspace, prepare) = copy_workspace(fx, runs, scratch)?;
    rows.push(Row::timed(
        "workspace copy: `Workspace::prepare`",
        name,
        &prepare,
    ));
    let cp = repeat(runs, |i| {
        let dst = scratch.join(format!("cp-{}-{i}", fx.name));
        run_quiet(Command::new("cp").arg("-a").arg(&fx.root).arg(&dst))
    })?;
    rows.push(Row::timed("workspace copy: `cp -a` (with .git)", name, &cp));
    if fx.root.join(".git").exists() {
        let clone = repeat(runs, |i| {
            let dst = scratch.join(format!("clone-{}-{i}", fx.name));
            let mut cmd = Command::new("git");
            cmd.args(["clone", "--local", "-q"]).arg(&fx.root).arg(&dst);
            run_quiet(isolated_git(&mut cmd))
        })?;
        rows.push(Row::timed(
            "workspace copy: `git clone --local -q`",
            name,
            &clone,
        ));
    } else {
        rows.push(Row::text(
            "workspace copy: `git clone --local -q`",
            name,
            "n/a".into(),
            "not a git repository".into(),
        ));
    }

    let root = workspace.root().to_path_buf();
    let changed = repeat(runs, |i| {
        append(&root.join(&fx.files[0]), i)?;
        let (_, took) = timed(|| Ok(workspace.checkpoint("bench")?))?;
        Ok(took)
    })?;
    let unchanged = repeat(
        runs,
        |_| Ok(timed(|| Ok(workspace.checkpoint("bench")?))?.1),
    )?;
    rows.push(
        Row::timed("checkpoint (1 file changed)", name, &changed).target(
            &format!("< {CHECKPOINT_TARGET_MS:.0} ms"),
            changed.median() < CHECKPOINT_TARGET_MS,
        ),
    );
    rows.push(Row::timed("checkpoint (nothing changed)", name, &unchanged));

    workspace.rollback(workspace.baseline())?;
    let rollback = repeat(runs, |i| {
        append(&root.join(&fx.files[1]), i)?;
        append(&root.join(&fx.files[2]), i)?;
        fs::write(root.join(format!("bench_new_{i}.py")), "x = 1\n")?;
        let (_, took) = timed(|| Ok(workspace.rollback(workspace.baseline())?))?;
        if !workspace.changed_files()?.is_empty() {
            bail!("the rollback left changes behind in {}", root.display());
        }
        Ok(took)
    })?;
    rows.push(Row::timed(
        "rollback (2 files changed, 1 added)",
        name,
        &rollback,
    ));

    rows.extend(search_rows(name, &root, runs, rg)?);
    Ok(EngineResult {
        rows,
        checkpoint_changed: changed,
        checkpoint_unchanged: unchanged,
    })
}

/// Prepares `runs` workspaces, timing each; the last one serves the other measurements.
fn copy_workspace(fx: &Fixture, runs: usize, scratch: &Path) -> Result<(Workspace, Samples)> {
    let mut samples = Samples::default();
    let mut last = None;
    for i in 0..runs.max(1) {
        let run_dir = scratch.join(format!("ws-{}-{i}", fx.name));
        let (workspace, took) = timed(|| Ok(Workspace::prepare(&fx.root, &run_dir)?))?;
        samples.push(crate::measure::ms(took));
        last = Some(workspace);
    }
    let workspace = last.context("no workspace was prepared")?;
    Ok((workspace, samples))
}

fn search_rows(name: &str, root: &Path, runs: usize, rg: bool) -> Result<Vec<Row>> {
    let tree = Tree::new(root)?;
    let request = SearchRequest {
        tree: &tree,
        dir: None,
        query: QUERY,
        regex: false,
        limit: DEFAULT_LIMIT,
    };
    let once = || -> Result<usize> {
        let result = search(&request)?;
        Ok(render(&result, QUERY, DEFAULT_LIMIT).len() + result.total)
    };
    once()?;
    let ours = repeat(runs, |_| Ok(timed(once)?.1))?;
    let exe = std::env::current_exe()?;
    let fresh_cmd = || {
        let mut cmd = Command::new(&exe);
        cmd.arg("__search").arg(root).arg(QUERY);
        cmd
    };
    run_drained(&mut fresh_cmd())?;
    let fresh = repeat(runs, |_| run_drained(&mut fresh_cmd()))?;
    let matches = search(&request)?;
    let label = format!(
        "search_code `{QUERY}` ({} matching lines in {} files), in-process",
        matches.total, matches.files
    );
    let mut rows = vec![
        Row::timed(label, name, &ours),
        Row::timed(
            "search_code, fresh process (`plumb-bench __search`)",
            name,
            &fresh,
        ),
    ];
    let rg_label = format!("`rg --hidden -g '!.git' -S -n {QUERY} DIR` (stdout drained)");
    let target = format!("≤ {SEARCH_TARGET}× rg");
    if !rg {
        rows.push(Row::text(
            rg_label,
            name,
            "n/a".into(),
            "rg not installed".into(),
        ));
        for what in ["in-process", "fresh process"] {
            rows.push(
                Row::text(
                    format!("search_code ÷ rg, {what}"),
                    name,
                    "n/a".into(),
                    "—".into(),
                )
                .target_unjudged(
                    &target,
                    "not measured: rg is missing (scripts/setup-test-deps.sh installs it)",
                ),
            );
        }
        return Ok(rows);
    }
    let rg_cmd = || {
        let mut cmd = Command::new("rg");
        cmd.args(["--hidden", "-g", "!.git", "-S", "-n", QUERY])
            .arg(root);
        cmd
    };
    run_drained(&mut rg_cmd())?;
    let reference = repeat(runs, |_| run_drained(&mut rg_cmd()))?;
    rows.push(Row::timed(rg_label, name, &reference));
    for (what, samples) in [("in-process", &ours), ("fresh process", &fresh)] {
        let ratio = samples.median() / reference.median();
        let ratio_min = samples.min() / reference.min();
        rows.push(
            Row::text(
                format!("search_code ÷ rg, {what} (ratio of medians / of mins)"),
                name,
                format!("{ratio:.2}×"),
                format!("{ratio_min:.2}×"),
            )
            .target(&target, ratio <= SEARCH_TARGET),
        );
    }
    Ok(rows)
}

/// Appends a line to `path`: a one-line change git has to notice and hash.
fn append(path: &Path, i: usize) -> Result<()> {
    let mut file = OpenOptions::new()
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    writeln!(file, "# bench edit {i}")?;
    Ok(())
}

/// `plumb-bench __search ROOT QUERY [--regex]`: one search and its rendering on stdout, for the
/// fresh-process measurements.
pub fn search_once(root: &Path, query: &str, regex: bool) -> Result<()> {
    let tree = Tree::new(root)?;
    let request = SearchRequest {
        tree: &tree,
        dir: None,
        query,
        regex,
        limit: DEFAULT_LIMIT,
    };
    let result = search(&request)?;
    println!("{}", render(&result, query, DEFAULT_LIMIT));
    Ok(())
}
