//! The folders `plumb mcp` may take a repository from (`mcp.allowed_roots`, default the current
//! folder), and the check of a caller's `repo` against them: an absolute path to a folder that
//! exists and, with every link resolved, lies inside one of them.

use std::path::{Path, PathBuf};

use plumb_mcp::ToolFailure;

use crate::Failure;

/// The allowed folders, canonical.
pub(crate) struct Roots(Vec<PathBuf>);

impl Roots {
    /// The settings' list (relative entries from the current folder), or the current folder alone.
    pub(crate) fn resolve(configured: &[PathBuf]) -> Result<Roots, Failure> {
        let here = std::env::current_dir().map_err(|err| {
            Failure::bad_input(format!(
                "the current folder cannot be read: {err}; start plumb mcp in a folder that exists"
            ))
        })?;
        let listed: Vec<PathBuf> = if configured.is_empty() {
            vec![here]
        } else {
            configured.iter().map(|root| here.join(root)).collect()
        };
        listed
            .iter()
            .map(|root| {
                root.canonicalize().map_err(|err| {
                    Failure::bad_input(format!(
                        "mcp.allowed_roots: {} cannot be opened ({err}); list folders that exist",
                        root.display()
                    ))
                })
            })
            .collect::<Result<_, _>>()
            .map(Roots)
    }

    /// The repository folder, if it is one inside the allowed roots.
    pub(crate) fn check_repo(&self, repo: &str) -> Result<PathBuf, ToolFailure> {
        if repo.contains("://") || repo.starts_with("git@") {
            return Err(ToolFailure::BadInput(format!(
                "repo {repo} looks like a URL; plumb mcp takes a local folder: clone it into an allowed folder first and pass its path"
            )));
        }
        let path = Path::new(repo);
        if !path.is_absolute() {
            return Err(ToolFailure::BadInput(format!(
                "repo {repo} is a relative path; pass the repository folder's absolute path"
            )));
        }
        let resolved = path.canonicalize().map_err(|_| {
            ToolFailure::BadInput(format!(
                "repo {repo} does not exist; pass the folder of the repository to fix"
            ))
        })?;
        if !resolved.is_dir() {
            return Err(ToolFailure::BadInput(format!(
                "repo {repo} is a file, not a folder; pass the folder of the repository to fix"
            )));
        }
        if !self.contains(&resolved) {
            return Err(ToolFailure::BadInput(format!(
                "repo {repo} is outside the folders this plumb mcp may take ({}); the user can add it to mcp.allowed_roots in their plumb.toml",
                self.text()
            )));
        }
        Ok(resolved)
    }

    /// Whether a canonical path lies inside one of the roots.
    pub(crate) fn contains(&self, path: &Path) -> bool {
        self.0.iter().any(|root| path.starts_with(root))
    }

    /// The roots, comma-separated, for messages.
    pub(crate) fn text(&self) -> String {
        let roots: Vec<String> = self.0.iter().map(|r| r.display().to_string()).collect();
        roots.join(", ")
    }
}
