//! Which linters are installed, found on PATH without running anything (library code starts no
//! processes). The caller's sandbox sees the same read-only system, so what is found here is what
//! the sandboxed run finds.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Linter, RuffVia, is_python};

/// The linters found on a search path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LintTools {
    pub ruff: Option<RuffVia>,
    pub cargo: bool,
    pub go: bool,
}

impl LintTools {
    /// Looks on this process's PATH.
    pub fn detect() -> Self {
        Self::from_search_path(std::env::var_os("PATH").as_deref())
    }

    /// Looks on the given PATH value: `ruff` itself, or else a `ruff` next to the real file of
    /// `python3` (pip installs it beside the interpreter it belongs to, so `python3 -m ruff` runs);
    /// `cargo`; `go`.
    pub fn from_search_path(search_path: Option<&OsStr>) -> Self {
        let dirs: Vec<PathBuf> = search_path
            .map(|value| std::env::split_paths(value).collect())
            .unwrap_or_default();
        let find = |name: &str| {
            dirs.iter()
                .map(|dir| dir.join(name))
                .find(|path| is_executable(path))
        };
        let ruff = if find("ruff").is_some() {
            Some(RuffVia::Binary)
        } else {
            find("python3")
                .and_then(|python| python.canonicalize().ok())
                .and_then(|python| python.parent().map(|dir| dir.join("ruff")))
                .filter(|ruff| is_executable(ruff))
                .map(|_| RuffVia::PythonModule)
        };
        LintTools {
            ruff,
            cargo: find("cargo").is_some(),
            go: find("go").is_some(),
        }
    }

    /// The linters for these changed files (relative to `root`), in the order ruff, cargo, go:
    /// ruff for Python files; `cargo check` for Rust files when `root` has a `Cargo.toml`;
    /// `go vet` for Go files when `root` has a `go.mod`. Each only when installed.
    pub fn linters_for(&self, changed_paths: &[String], root: &Path) -> Vec<Linter> {
        let any = |wanted: fn(&str) -> bool| changed_paths.iter().any(|path| wanted(path));
        let mut linters = Vec::new();
        if let Some(via) = self.ruff
            && any(is_python)
        {
            linters.push(Linter::Ruff(via));
        }
        if self.cargo && any(|path| path.ends_with(".rs")) && root.join("Cargo.toml").is_file() {
            linters.push(Linter::CargoCheck);
        }
        if self.go && any(|path| path.ends_with(".go")) && root.join("go.mod").is_file() {
            linters.push(Linter::GoVet);
        }
        linters
    }
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}
