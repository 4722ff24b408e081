//! The two fixtures and their harness tasks: the generated repository (written by [`crate::generated`]
//! into `--dir` or a temporary folder, with its BENCH-7 script written beside it) and
//! `examples/billing` with BILL-412 and its eight-round script, found from this crate's folder.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::engine::Fixture;
use crate::generated::{TreeStats, generate};
use crate::harness::Case;
use crate::scenario;

/// A fixture with its task and its size.
pub struct Prepared {
    pub fixture: Fixture,
    pub case: Case,
    pub stats: TreeStats,
}

/// The generated repository in `dir`; the script goes into `scratch`. Also returns the seconds
/// generation took.
pub fn generated(dir: &Path, scratch: &Path) -> Result<(Prepared, f64)> {
    let started = Instant::now();
    let stats = generate(dir)?;
    let seconds = started.elapsed().as_secs_f64();
    let script = scratch.join("bench-7.script.jsonl");
    fs::write(&script, scenario::script())?;
    let root = dir.canonicalize()?;
    let prepared = Prepared {
        fixture: Fixture {
            name: "generated".to_string(),
            root: root.clone(),
            files: [
                scenario::FIX_MODULE.to_string(),
                format!("{}/__init__.py", scenario::FIX_PACKAGE),
                "taxes_utils/__init__.py".to_string(),
            ],
        },
        case: Case {
            repo: root,
            ticket: scenario::TICKET.to_string(),
            script,
        },
        stats,
    };
    Ok((prepared, seconds))
}

/// `examples/billing` of this checkout.
pub fn billing() -> Result<Prepared> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/billing");
    let root = dir
        .canonicalize()
        .with_context(|| format!("finding the BILL-412 example at {}", dir.display()))?;
    let ticket = fs::read_to_string(root.join("BILL-412.md"))?;
    Ok(Prepared {
        fixture: Fixture {
            name: "billing".to_string(),
            root: root.clone(),
            files: [
                "billing/invoice_totals.py".to_string(),
                "billing/tax.py".to_string(),
                "billing/models.py".to_string(),
            ],
        },
        case: Case {
            repo: root.clone(),
            ticket,
            script: root.join("bill-412.script.jsonl"),
        },
        stats: tree_stats(&root)?,
    })
}

/// Counts the files of `root`, leaving out `.git` and Python caches.
fn tree_stats(root: &Path) -> Result<TreeStats> {
    let mut stats = TreeStats::default();
    let mut pending: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                if ![".git", "__pycache__", ".pytest_cache"]
                    .contains(&name.to_string_lossy().as_ref())
                {
                    pending.push(entry.path());
                }
                continue;
            }
            let bytes = fs::read(entry.path())?;
            stats.files += 1;
            stats.bytes += bytes.len();
            stats.lines += bytes.iter().filter(|b| **b == b'\n').count();
            if name.to_string_lossy().ends_with(".py") {
                stats.python_files += 1;
                stats.packages += usize::from(name == "__init__.py");
            }
        }
    }
    Ok(stats)
}
