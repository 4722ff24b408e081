//! The generated repository: 60 packages of billing-like Python modules (1,800 Python files and
//! about 210,000 lines, the size of the article's code base), the BENCH-7 module and suite from
//! [`crate::scenario`], a `pytest.ini`, committed as a git repository.
//!
//! Steps: refuse a non-empty target folder, write the packages (each an `__init__.py` and its
//! modules, names and lengths drawn from a fixed-seed [`Lcg`]), write the hand-written files, then
//! `git init`, `git add -A` and `git commit` with an isolated git environment and a fixed identity
//! and date, so the same seed gives the same commit on every machine.

use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::measure::isolated_git;
use crate::pymod::{NOUNS, SUFFIXES, module_text};
use crate::rng::Lcg;
use crate::scenario;

const SEED: u64 = 412;
const DOMAINS: [&str; 12] = [
    "billing",
    "invoices",
    "payments",
    "ledger",
    "customers",
    "orders",
    "shipping",
    "inventory",
    "catalog",
    "reports",
    "pricing",
    "taxes",
];
const LAYERS: [&str; 5] = ["core", "api", "models", "services", "utils"];
/// Python files in all: package `__init__.py`s, modules and the three test files.
const PYTHON_FILES: usize = 1_800;
const TEST_FILES: usize = 3;
/// A module's length is drawn from this range (the last piece overshoots by a few lines).
const MODULE_LINES: (usize, usize) = (50, 175);

/// Counts of a fixture's files (its `.git` left out).
#[derive(Debug, Default, Clone, Copy)]
pub struct TreeStats {
    pub files: usize,
    pub python_files: usize,
    pub lines: usize,
    pub bytes: usize,
    pub packages: usize,
}

/// Writes the repository into `root` (missing or empty) and commits it.
pub fn generate(root: &Path) -> Result<TreeStats> {
    if root.exists() && fs::read_dir(root)?.next().is_some() {
        bail!(
            "{} is not empty; pass --dir a new or empty folder for the generated repository",
            root.display()
        );
    }
    fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
    let mut out = Writer {
        root,
        stats: TreeStats::default(),
    };
    let mut rng = Lcg::new(SEED);
    let packages: Vec<String> = DOMAINS
        .iter()
        .flat_map(|domain| LAYERS.iter().map(move |layer| format!("{domain}_{layer}")))
        .collect();
    let modules = PYTHON_FILES - packages.len() - TEST_FILES;
    let (base, extra) = (modules / packages.len(), modules % packages.len());
    let mut first_modules = Vec::new();
    for (index, package) in packages.iter().enumerate() {
        out.write(
            &format!("{package}/__init__.py"),
            &format!("\"\"\"The {} package.\"\"\"\n", package.replace('_', " ")),
        )?;
        let mut count = base + usize::from(index < extra);
        if package == scenario::FIX_PACKAGE {
            out.write(scenario::FIX_MODULE, scenario::INVOICE_MATH)?;
            count -= 1;
        }
        let mut names = Vec::new();
        while names.len() < count {
            let (noun, suffix) = (rng.pick(&NOUNS), rng.pick(&SUFFIXES));
            let name = format!("{noun}_{suffix}");
            if names.contains(&name) {
                continue;
            }
            let lines = rng.between(MODULE_LINES.0, MODULE_LINES.1);
            let text = module_text(package, noun, suffix, lines, &mut rng);
            out.write(&format!("{package}/{name}.py"), &text)?;
            names.push(name);
        }
        if let Some(first) = names.first() {
            first_modules.push(format!("{package}.{first}"));
        }
        out.stats.packages += 1;
    }
    let sample = |names: &[String]| -> Vec<String> { names.iter().step_by(10).cloned().collect() };
    for (path, text) in scenario::test_files(&sample(&packages), &sample(&first_modules)) {
        out.write(path, &text)?;
    }
    out.write("pytest.ini", scenario::PYTEST_INI)?;
    out.write(".gitignore", scenario::GITIGNORE)?;
    out.write("README.md", scenario::README)?;
    commit(root)?;
    Ok(out.stats)
}

struct Writer<'a> {
    root: &'a Path,
    stats: TreeStats,
}

impl Writer<'_> {
    fn write(&mut self, rel: &str, text: &str) -> Result<()> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        self.stats.files += 1;
        self.stats.python_files += usize::from(rel.ends_with(".py"));
        self.stats.lines += text.lines().count();
        self.stats.bytes += text.len();
        Ok(())
    }
}

fn commit(root: &Path) -> Result<()> {
    let steps: [&[&str]; 3] = [
        &["init", "-q", "-b", "main"],
        &["add", "-A"],
        &["commit", "-q", "-m", "acme-billing: generated code base"],
    ];
    for args in steps {
        let status = isolated_git(Command::new("git").current_dir(root).args(args))
            .status()
            .context("running git; is it installed? (scripts/setup-test-deps.sh installs it)")?;
        if !status.success() {
            bail!(
                "git {} failed in {} ({status})",
                args.join(" "),
                root.display()
            );
        }
    }
    Ok(())
}
