//! The environment a sandboxed command sees: an allowlist, never a denylist.
//!
//! A command gets, in increasing precedence:
//! 1. the allowlisted variables ([`EnvPolicy::INHERITED`], plus any names a configuration
//!    adds) copied from the parent environment given at construction; `PATH` falls back to
//!    [`EnvPolicy::DEFAULT_PATH`] when the parent has none;
//! 2. fixed values: `HOME` and `TMPDIR` pointing at the command's private directories,
//!    `PYTHONDONTWRITEBYTECODE=1` (no `__pycache__` litter in the diff),
//!    `PYTHONUNBUFFERED=1` (output survives a kill), and `CI=true`, which makes test runners
//!    and package managers non-interactive (no watch mode, no prompts, no spinners);
//! 3. the command's own extra variables ([`crate::CommandSpec::env`]).
//!
//! Nothing else is inherited: no tokens, keys, `SSH_AUTH_SOCK`, `AWS_*`, `OPENAI_API_KEY`.
//! The parent environment is passed in, never read behind the caller's back, so tests do
//! not depend on or change process-global state.

use std::collections::BTreeMap;
use std::path::Path;

use crate::SandboxError;

/// Which variables a command inherits, with their values taken from the parent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EnvPolicy {
    inherited: BTreeMap<String, String>,
}

impl EnvPolicy {
    /// The variables inherited from the parent by default.
    pub const INHERITED: [&'static str; 6] = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"];

    /// `PATH` when the parent has none.
    pub const DEFAULT_PATH: &'static str =
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    /// Keeps only the allowlisted variables of `parent`, e.g. `std::env::vars()`.
    pub fn from_parent(parent: impl IntoIterator<Item = (String, String)>) -> Self {
        Self::from_parent_allowing(parent, &[] as &[&str])
    }

    /// Like [`EnvPolicy::from_parent`], also inheriting the variables named in `also`
    /// (a configuration's additions, e.g. `RUSTUP_HOME`). Name only what holds no secret.
    pub fn from_parent_allowing(
        parent: impl IntoIterator<Item = (String, String)>,
        also: &[impl AsRef<str>],
    ) -> Self {
        let allowed =
            |name: &str| Self::INHERITED.contains(&name) || also.iter().any(|a| a.as_ref() == name);
        let inherited = parent
            .into_iter()
            .filter(|(name, _)| allowed(name))
            .collect();
        Self { inherited }
    }

    /// The policy for this process's environment; variables that are not UTF-8 are skipped
    /// rather than panicking as `std::env::vars` would.
    pub fn from_process() -> Self {
        Self::from_parent(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    /// The inherited variables and their values, sorted by name.
    pub fn inherited(&self) -> impl Iterator<Item = (&str, &str)> {
        self.inherited.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The complete environment for one command, sorted by name. `home` and `tmp` are the
    /// paths *as the command sees them* (a namespacing backend may mount them elsewhere).
    pub fn environment(
        &self,
        home: &Path,
        tmp: &Path,
        extra: &[(String, String)],
    ) -> Result<Vec<(String, String)>, SandboxError> {
        let mut env = self.inherited.clone();
        env.entry("PATH".to_owned())
            .or_insert_with(|| Self::DEFAULT_PATH.to_owned());
        let fixed = [
            ("HOME", path_value(home)?),
            ("TMPDIR", path_value(tmp)?),
            ("PYTHONDONTWRITEBYTECODE", "1".to_owned()),
            ("PYTHONUNBUFFERED", "1".to_owned()),
            ("CI", "true".to_owned()),
        ];
        for (name, value) in fixed {
            env.insert(name.to_owned(), value);
        }
        for (name, value) in extra {
            if name.is_empty() || name.contains(['=', '\0']) || value.contains('\0') {
                return Err(SandboxError::InvalidEnv { name: name.clone() });
            }
            env.insert(name.clone(), value.clone());
        }
        Ok(env.into_iter().collect())
    }
}

fn path_value(path: &Path) -> Result<String, SandboxError> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| SandboxError::Scratch {
            path: path.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the path is not UTF-8, so it cannot be an environment value",
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn keeps_only_the_allowlist_and_adds_fixed_values() {
        let parent = vars(&[
            ("PATH", "/usr/bin:/bin"),
            ("LANG", "C.UTF-8"),
            ("HOME", "/root"),
            ("GITHUB_TOKEN", "ghp_x"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("SSH_AUTH_SOCK", "/tmp/agent"),
        ]);
        let policy = EnvPolicy::from_parent(parent);

        let actual = policy
            .environment(
                Path::new("/s/home"),
                Path::new("/s/tmp"),
                &vars(&[("EXTRA", "1"), ("CI", "false")]),
            )
            .unwrap();

        let expected = vars(&[
            ("CI", "false"),
            ("EXTRA", "1"),
            ("HOME", "/s/home"),
            ("LANG", "C.UTF-8"),
            ("PATH", "/usr/bin:/bin"),
            ("PYTHONDONTWRITEBYTECODE", "1"),
            ("PYTHONUNBUFFERED", "1"),
            ("TMPDIR", "/s/tmp"),
        ]);
        assert_eq!(actual, expected);
    }

    #[test]
    fn path_has_a_fallback_and_names_can_be_added() {
        let parent = vars(&[("RUSTUP_HOME", "/opt/rustup"), ("CARGO_HOME", "/opt/cargo")]);
        let policy = EnvPolicy::from_parent_allowing(parent, &["RUSTUP_HOME"]);

        let actual: Vec<(String, String)> = policy
            .environment(Path::new("/h"), Path::new("/t"), &[])
            .unwrap()
            .into_iter()
            .filter(|(k, _)| k == "PATH" || k.ends_with("_HOME"))
            .collect();

        let expected = vars(&[
            ("PATH", EnvPolicy::DEFAULT_PATH),
            ("RUSTUP_HOME", "/opt/rustup"),
        ]);
        assert_eq!(actual, expected);
    }

    #[test]
    fn invalid_extra_names_are_refused() {
        let policy = EnvPolicy::default();

        let actual = policy
            .environment(Path::new("/h"), Path::new("/t"), &vars(&[("A=B", "1")]))
            .map_err(|e| e.to_string());

        let expected = Err(
            "the environment variable name `A=B` is invalid; use a non-empty name without `=` or NUL, and a value without NUL"
                .to_owned(),
        );
        assert_eq!(actual, expected);
    }
}
