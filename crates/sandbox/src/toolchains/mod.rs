//! The language toolchains a sandboxed command may use — rust (rustup), go, node/npm,
//! java/maven — found on the host when the sandbox is built (`detect.rs`) and put in force for
//! each command: their host folders shown read-only at their own paths (so shims and absolute
//! paths work), the variables they need set to them, and their package caches in one folder
//! outside the workspace.
//!
//! Without this a private, empty `HOME` and the environment allowlist leave rustup's `cargo`
//! shim with no toolchain ("rustup could not choose a version of cargo to run") and Go, npm
//! and Maven with no place for the packages the setup phase fetched.
//!
//! The cache folder ([`Toolchains::cache_dir`], per run by default; the eval runner may share
//! one between runs) holds `cargo/` (`CARGO_HOME`: registry and git checkouts), `go/`
//! (`GOPATH`, with the module cache `go/pkg/mod`), `npm/` (npm's cache) and
//! `maven/repository` (Maven's local repository). A command with [`Network::Host`] (the setup
//! phase the user allowed) may write it; every other command sees it read-only, so nothing the
//! agent runs can change what a later test run loads. Offline commands are told so
//! (`CARGO_NET_OFFLINE`, `GOPROXY=off`, `npm_config_offline`, `MAVEN_ARGS=--offline`), so a
//! missing package fails at once instead of after a network timeout.
//!
//! Build output stays private: cargo's `target/` in the workspace (the shadow git ignores it),
//! Go's build cache a private copy per command of a seed only the setup phase writes
//! (`go_build.rs`: a cache shared between commands could be written by one the agent runs and
//! read by a later test run), and Go's test results never taken from a cache (`-count=1`).
//!
//! What is never shown: the rest of the host `HOME` — `~/.cargo` (its `credentials.toml`,
//! `config.toml`), `~/.npmrc`, `~/.m2/settings.xml`, `~/.ssh`. The price: a user's cargo or
//! Maven mirror settings do not apply inside.

mod detect;
mod go_build;

use std::path::{Path, PathBuf};

use crate::{Network, SandboxError};

/// Which toolchain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolchainKind {
    Rust,
    Go,
    Node,
    /// A JDK, with Maven when `mvn` is there.
    Java,
}

impl ToolchainKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolchainKind::Rust => "rust",
            ToolchainKind::Go => "go",
            ToolchainKind::Node => "node",
            ToolchainKind::Java => "java/maven",
        }
    }

    /// The command that shows the toolchain works, e.g. `cargo --version`.
    pub fn version_argv(self, program: &Path) -> Vec<String> {
        let program = program.to_string_lossy().into_owned();
        let flag = match self {
            ToolchainKind::Rust | ToolchainKind::Node => "--version",
            ToolchainKind::Go => "version",
            ToolchainKind::Java if program.ends_with("mvn") => "-v",
            ToolchainKind::Java => "-version",
        };
        vec![program, flag.to_owned()]
    }
}

/// One toolchain found on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    pub kind: ToolchainKind,
    /// The program as the host's `PATH` names it (`cargo`, `go`, `node`, `mvn` or `java`).
    pub program: PathBuf,
    /// What was found, e.g. "rustup toolchain stable-x86_64-unknown-linux-gnu".
    pub detail: String,
    /// Host folders it needs, shown read-only at their own path.
    read_only: Vec<PathBuf>,
    /// Variables it needs that do not depend on the command.
    env: Vec<(String, String)>,
    /// rustup's toolchain chosen on the host, set unless the workspace names its own.
    rustup_toolchain: Option<String>,
}

impl Toolchain {
    fn new(kind: ToolchainKind, program: PathBuf) -> Self {
        Self {
            kind,
            program,
            detail: String::new(),
            read_only: Vec::new(),
            env: Vec::new(),
            rustup_toolchain: None,
        }
    }
}

/// The toolchains a sandbox gives its commands, and their cache folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toolchains {
    found: Vec<Toolchain>,
    cache: PathBuf,
}

/// What one command gets of the toolchains.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ForCommand {
    /// Host folders shown read-only (the toolchains', and the cache when offline).
    pub(crate) read_only: Vec<PathBuf>,
    /// Host folders shown read-write: the cache, for a command with the network.
    pub(crate) writable: Vec<PathBuf>,
    /// Variables, below the command's own.
    pub(crate) env: Vec<(String, String)>,
    /// The command's copy of Go's build cache seed (in `writable`), removed when this is
    /// dropped: keep it until the command is over.
    pub(crate) go_build: Option<go_build::PrivateCopy>,
}

impl Toolchains {
    /// No toolchains: the sandbox as it was before them (`sandbox_toolchains = false`).
    pub fn none() -> Self {
        Self::default()
    }

    /// The toolchains found through `host_env` (the host's `PATH`, `HOME`, `RUSTUP_HOME`,
    /// `RUSTUP_TOOLCHAIN`, `GOROOT`, `JAVA_HOME`), with their caches under `cache_dir`, which
    /// is made when a command needs it.
    pub fn detect(host_env: &[(String, String)], cache_dir: PathBuf) -> Self {
        Self {
            found: detect::all(&detect::Host::new(host_env)),
            cache: cache_dir,
        }
    }

    /// [`Toolchains::detect`] on this process's environment.
    pub fn from_process(cache_dir: PathBuf) -> Self {
        let env: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        Self::detect(&env, cache_dir)
    }

    /// What was found, in the order rust, go, node, java/maven.
    pub fn found(&self) -> &[Toolchain] {
        &self.found
    }

    /// The folder holding the package caches.
    pub fn cache_dir(&self) -> &Path {
        &self.cache
    }

    /// The mounts and variables of one command in `workdir` whose private `HOME` is `home`
    /// (as the command sees it), making the cache folders it uses.
    pub(crate) fn for_command(
        &self,
        network: Network,
        workdir: &Path,
        home: &Path,
    ) -> Result<ForCommand, SandboxError> {
        let mut out = ForCommand::default();
        if self.found.is_empty() {
            return Ok(out);
        }
        let offline = network == Network::Off;
        let cache = |sub: &str| self.cache.join(sub).to_string_lossy().into_owned();
        let home = |sub: &str| home.join(sub).to_string_lossy().into_owned();
        let mut set = |name: &str, value: String| out.env.push((name.to_owned(), value));
        let mut subdirs = Vec::new();
        let mut go_build_copy = None;
        for toolchain in &self.found {
            for (name, value) in &toolchain.env {
                set(name, value.clone());
            }
            match toolchain.kind {
                ToolchainKind::Rust => {
                    subdirs.push("cargo");
                    set("CARGO_HOME", cache("cargo"));
                    // A project's own rust-toolchain file is the project's choice: the shim
                    // reads it from the workspace with rustup's home shown.
                    let own = ["rust-toolchain.toml", "rust-toolchain"]
                        .iter()
                        .any(|f| workdir.join(f).is_file());
                    if let (Some(name), false) = (&toolchain.rustup_toolchain, own) {
                        set("RUSTUP_TOOLCHAIN", name.clone());
                    }
                    if offline {
                        set("CARGO_NET_OFFLINE", "true".to_owned());
                    }
                }
                ToolchainKind::Go => {
                    subdirs.push("go/pkg/mod");
                    set("GOPATH", cache("go"));
                    set("GOMODCACHE", cache("go/pkg/mod"));
                    if offline {
                        go_build_copy = go_build::private_copy(&self.cache);
                    }
                    match &go_build_copy {
                        Some(copy) => set("GOCACHE", copy.path().to_string_lossy().into_owned()),
                        None if offline => set("GOCACHE", home(".cache/go-build")),
                        None => {
                            subdirs.push("go/build");
                            set("GOCACHE", cache("go/build"));
                        }
                    }
                    set("GOTOOLCHAIN", "local".to_owned());
                    set("GOTELEMETRY", "off".to_owned());
                    // -modcacherw: the module cache stays removable by plumb's pruning. No
                    // `-mod=` is forced: Go's default uses a project's `vendor/` when it has one
                    // (`-mod=mod` made it ignore vendor/ and download into the read-only cache,
                    // found by the oracle on the imported Go split) and reads the cache otherwise.
                    // -count=1 (only `go test` knows it; the others ignore it here): a test result
                    // is never read from a cache, so the flaky check and the ladder see real runs.
                    set("GOFLAGS", "-modcacherw -count=1".to_owned());
                    if offline {
                        set("GOPROXY", "off".to_owned());
                    }
                }
                ToolchainKind::Node => {
                    subdirs.push("npm");
                    set("npm_config_cache", cache("npm"));
                    set("npm_config_logs_dir", home(".npm/_logs"));
                    set("npm_config_update_notifier", "false".to_owned());
                    set("npm_config_fund", "false".to_owned());
                    set("npm_config_audit", "false".to_owned());
                    if offline {
                        set("npm_config_offline", "true".to_owned());
                    }
                }
                ToolchainKind::Java => {
                    subdirs.push("maven/repository");
                    set(
                        "MAVEN_OPTS",
                        format!("-Dmaven.repo.local={}", cache("maven/repository")),
                    );
                    // Honoured by Maven 3.9 and later; older ones fail fast without the network.
                    if offline {
                        set("MAVEN_ARGS", "--offline".to_owned());
                    }
                }
            }
            out.read_only.extend(toolchain.read_only.iter().cloned());
        }
        for sub in subdirs {
            let dir = self.cache.join(sub);
            std::fs::create_dir_all(&dir).map_err(|source| SandboxError::Scratch {
                path: dir.clone(),
                source,
            })?;
        }
        if offline {
            out.read_only.push(self.cache.clone());
        } else {
            out.writable.push(self.cache.clone());
        }
        if let Some(copy) = go_build_copy {
            out.writable.push(copy.path().to_path_buf());
            out.go_build = Some(copy);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn rust_only(cache: &Path) -> Toolchains {
        let mut rust = Toolchain::new(ToolchainKind::Rust, "/h/.cargo/bin/cargo".into());
        rust.read_only.push("/h/.rustup".into());
        rust.env
            .push(("RUSTUP_HOME".to_owned(), "/h/.rustup".to_owned()));
        rust.rustup_toolchain = Some("stable-x".to_owned());
        Toolchains {
            found: vec![rust],
            cache: cache.to_path_buf(),
        }
    }

    #[test]
    fn the_cache_is_writable_only_with_the_network_and_a_project_toolchain_file_wins() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("toolcache");
        let work = dir.path().join("work");
        let pinned = dir.path().join("pinned");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&pinned).unwrap();
        std::fs::write(pinned.join("rust-toolchain.toml"), "[toolchain]\n").unwrap();
        let toolchains = rust_only(&cache);
        let home = Path::new("/home/sandbox");

        let actual = [
            toolchains.for_command(Network::Host, &work, home).unwrap(),
            toolchains.for_command(Network::Off, &pinned, home).unwrap(),
        ];

        let vars = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let cargo_home = cache.join("cargo").display().to_string();
        let expected = [
            ForCommand {
                read_only: vec!["/h/.rustup".into()],
                writable: vec![cache.clone()],
                env: vars(&[
                    ("RUSTUP_HOME", "/h/.rustup"),
                    ("CARGO_HOME", &cargo_home),
                    ("RUSTUP_TOOLCHAIN", "stable-x"),
                ]),
                go_build: None,
            },
            ForCommand {
                read_only: vec!["/h/.rustup".into(), cache.clone()],
                writable: Vec::new(),
                env: vars(&[
                    ("RUSTUP_HOME", "/h/.rustup"),
                    ("CARGO_HOME", &cargo_home),
                    ("CARGO_NET_OFFLINE", "true"),
                ]),
                go_build: None,
            },
        ];
        assert_eq!(actual, expected);
        assert!(cache.join("cargo").is_dir());
    }
}
