//! The lint delta (docs/contracts.md §5, step 6): diagnostics in the changed files that the
//! baseline did not have, so an invented helper (`round_paise`, ruff's F821) is caught before the
//! tests.
//!
//! The steps, each a plain function because the caller runs the commands in its sandbox:
//! 1. [`linters_for`]: which linters apply to the changed files and are installed here;
//! 2. [`lint_command`]: the argv to run at the root of the baseline tree and of the patched tree;
//! 3. [`parse_diagnostics`]: each run's output as [`Diagnostic`]s with root-relative paths;
//! 4. [`in_files`] and [`new_diagnostics`]: keep the changed files' diagnostics that have no equal
//!    in the baseline run (compared without line numbers, which move when lines are added).

mod cargo;
mod go;
mod ruff;
mod tools;

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use tools::LintTools;

/// One diagnostic: `path` relative to the root the linter ran in (with `/`), `line` 1-based (0 if
/// the linter gave none), `code` the linter's rule (`F821`, `E0425`, `unused_variables`, `vet`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    pub path: String,
    pub line: usize,
    pub code: String,
    pub message: String,
}

/// The linters plumb runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Linter {
    /// `ruff check --select F` (pyflakes' rules: undefined names, unused imports, …).
    Ruff(RuffVia),
    /// `cargo check`, errors and warnings.
    CargoCheck,
    /// `go vet`, including its type-check errors.
    GoVet,
}

/// How ruff is started: its own executable, or through the Python that has it installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuffVia {
    Binary,
    PythonModule,
}

impl Linter {
    /// The linter's name for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Linter::Ruff(_) => "ruff",
            Linter::CargoCheck => "cargo check",
            Linter::GoVet => "go vet",
        }
    }
}

/// The linters for these changed files (paths relative to `root`) that are installed on this
/// machine's PATH; see [`LintTools::linters_for`].
pub fn linters_for(changed_paths: &[String], root: &Path) -> Vec<Linter> {
    LintTools::detect().linters_for(changed_paths, root)
}

fn is_python(path: &str) -> bool {
    path.ends_with(".py") || path.ends_with(".pyi")
}

/// The argv to run at the root of a tree. Ruff is given the Python files among `files` (after
/// `--`, so a file name cannot be read as an option); `linters_for` only picks ruff when there is
/// one, since ruff without files checks the whole folder. Cargo and go check the whole project,
/// and [`in_files`] keeps the changed files' part.
pub fn lint_command(linter: Linter, files: &[String]) -> Vec<String> {
    let python_files = || files.iter().filter(|file| is_python(file)).cloned();
    let ruff_args = [
        "check",
        "--select",
        "F",
        "--output-format",
        "json",
        "--no-cache",
        "--",
    ];
    let argv: Vec<String> = match linter {
        Linter::Ruff(RuffVia::Binary) => ["ruff"]
            .into_iter()
            .chain(ruff_args)
            .map(String::from)
            .chain(python_files())
            .collect(),
        Linter::Ruff(RuffVia::PythonModule) => ["python3", "-m", "ruff"]
            .into_iter()
            .chain(ruff_args)
            .map(String::from)
            .chain(python_files())
            .collect(),
        Linter::CargoCheck => ["cargo", "check", "--message-format", "json", "--quiet"]
            .map(String::from)
            .to_vec(),
        Linter::GoVet => ["go", "vet", "./..."].map(String::from).to_vec(),
    };
    argv
}

/// Reads one linter run. `root` is the folder the command ran in, as the command saw it: paths
/// under it become relative, so runs in two different trees compare. `Err` is a sentence saying
/// why the output holds no verdict (the tool is missing, its config is broken, the build failed
/// before checking); the caller reports the lint step as not run with it rather than passed.
pub fn parse_diagnostics(
    linter: Linter,
    root: &Path,
    stdout: &str,
    stderr: &str,
) -> Result<Vec<Diagnostic>, String> {
    let diagnostics = match linter {
        Linter::Ruff(_) => ruff::parse(stdout, stderr)?,
        Linter::CargoCheck => cargo::parse(stdout, stderr)?,
        Linter::GoVet => go::parse(stdout, stderr)?,
    };
    Ok(diagnostics
        .into_iter()
        .map(|diagnostic| Diagnostic {
            path: relative(root, &diagnostic.path),
            ..diagnostic
        })
        .collect())
}

/// The diagnostics whose file is one of `paths`.
pub fn in_files(diagnostics: &[Diagnostic], paths: &[String]) -> Vec<Diagnostic> {
    diagnostics
        .iter()
        .filter(|diagnostic| paths.contains(&diagnostic.path))
        .cloned()
        .collect()
}

/// New diagnostics: those in `after` with no equal (path, code, message) in `before`; line
/// numbers shift, so they are compared without them, as multisets (a second copy of an old
/// diagnostic is new). In `after`'s order.
pub fn new_diagnostics(before: &[Diagnostic], after: &[Diagnostic]) -> Vec<Diagnostic> {
    let key = |d: &'_ Diagnostic| (d.path.clone(), d.code.clone(), d.message.clone());
    let mut remaining: HashMap<(String, String, String), usize> = HashMap::new();
    for diagnostic in before {
        *remaining.entry(key(diagnostic)).or_default() += 1;
    }
    after
        .iter()
        .filter(|diagnostic| match remaining.get_mut(&key(diagnostic)) {
            Some(count) if *count > 0 => {
                *count -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

/// `raw` relative to `root` (also to its canonical form, as ruff prints resolved paths), with `/`
/// and without a leading `./`; a path outside `root` stays as it is.
fn relative(root: &Path, raw: &str) -> String {
    let path = Path::new(raw);
    let canonical_root = root.canonicalize().ok();
    let stripped = path
        .strip_prefix(root)
        .ok()
        .or_else(|| {
            canonical_root
                .as_deref()
                .and_then(|root| path.strip_prefix(root).ok())
        })
        .map(|rest| rest.to_string_lossy().into_owned())
        .unwrap_or_else(|| raw.to_string());
    let mut text = stripped.replace('\\', "/");
    while let Some(rest) = text.strip_prefix("./") {
        text = rest.to_string();
    }
    text
}

/// The first lines of a tool's error output, for an `Err` sentence.
fn stderr_summary(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .take(3)
        .collect();
    if lines.is_empty() {
        return "it printed nothing on stderr".to_string();
    }
    let joined = lines.join(" / ");
    if joined.chars().count() > 300 {
        format!("{}…", joined.chars().take(300).collect::<String>())
    } else {
        joined
    }
}
