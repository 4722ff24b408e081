//! What `plumb doctor` says about sandboxing on this machine: user namespaces, bubblewrap (a
//! real `true` run with the real layout), cgroups, whether gVisor's `runsc` is there, and
//! which toolchains work inside bwrap (each one's version command run there).
//! Each check names the fix when it fails.

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::bwrap::{BWRAP_MISSING, BwrapSandbox};
use crate::cgroup::Support;
use crate::sys;
use crate::toolchains::{ToolchainKind, Toolchains};
use crate::{CommandSpec, Sandbox, SandboxError};

/// What was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    /// Unprivileged user namespaces, which bwrap needs when plumb does not run as root.
    UserNamespaces,
    /// bubblewrap is installed and runs a command with plumb's layout.
    Bwrap,
    /// Per-command cgroups for memory, processes and CPUs.
    Cgroups,
    /// gVisor's `runsc` is installed.
    Runsc,
}

impl CheckKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::UserNamespaces => "user namespaces",
            CheckKind::Bwrap => "bwrap",
            CheckKind::Cgroups => "cgroups",
            CheckKind::Runsc => "runsc",
        }
    }
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendStatus {
    pub kind: CheckKind,
    pub works: bool,
    /// What was found, as a sentence.
    pub detail: String,
    /// What to do about it, when it does not work.
    pub fix: Option<String>,
}

fn read_number(path: &str) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn user_namespaces() -> BackendStatus {
    let status = |works: bool, detail: &str, fix: Option<&str>| BackendStatus {
        kind: CheckKind::UserNamespaces,
        works,
        detail: detail.to_owned(),
        fix: fix.map(str::to_owned),
    };
    if sys::is_root() {
        return status(
            true,
            "running as root: bwrap makes its namespaces without a user namespace",
            None,
        );
    }
    if read_number("/proc/sys/user/max_user_namespaces") == Some(0) {
        return status(
            false,
            "user namespaces are disabled (user.max_user_namespaces = 0)",
            Some("run `sysctl -w user.max_user_namespaces=15000` as root"),
        );
    }
    if read_number("/proc/sys/kernel/unprivileged_userns_clone") == Some(0) {
        return status(
            false,
            "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)",
            Some("run `sysctl -w kernel.unprivileged_userns_clone=1` as root"),
        );
    }
    if read_number("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == Some(1) {
        return status(
            false,
            "AppArmor restricts unprivileged user namespaces \
             (kernel.apparmor_restrict_unprivileged_userns = 1)",
            Some(
                "install an AppArmor profile that allows userns for /usr/bin/bwrap, or run \
                 `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` as root",
            ),
        );
    }
    status(true, "unprivileged user namespaces are enabled", None)
}

async fn bwrap() -> BackendStatus {
    let failed = |detail: String, fix: &str| BackendStatus {
        kind: CheckKind::Bwrap,
        works: false,
        detail,
        fix: Some(fix.to_owned()),
    };
    let sandbox = match BwrapSandbox::new() {
        Ok(sandbox) => sandbox,
        Err(_) => {
            return failed(
                "bubblewrap (bwrap) is not installed".to_owned(),
                "install it with `apt-get install bubblewrap`, or pass --sandbox none",
            );
        }
    };
    match tokio::time::timeout(Duration::from_secs(20), sandbox.probe()).await {
        Ok(Ok(())) => BackendStatus {
            kind: CheckKind::Bwrap,
            works: true,
            detail: "bubblewrap runs `true` with plumb's sandbox layout".to_owned(),
            fix: None,
        },
        Ok(Err(SandboxError::Unavailable { .. })) => failed(
            BWRAP_MISSING.to_owned(),
            "install it with `apt-get install bubblewrap`",
        ),
        Ok(Err(err)) => failed(
            format!("bubblewrap is installed but cannot run a command: {err}"),
            "see the user namespaces check; inside a container, the container must allow \
             creating namespaces (Docker: `--security-opt seccomp=unconfined --security-opt \
             apparmor=unconfined`); or use --sandbox gvisor",
        ),
        Err(_) => failed(
            "bubblewrap did not finish `true` within 20 seconds".to_owned(),
            "check the machine's load and bwrap's version (`bwrap --version`, 0.8 or newer)",
        ),
    }
}

fn cgroups() -> BackendStatus {
    let support = Support::get();
    let detail = support.describe();
    if support.is_complete() {
        return BackendStatus {
            kind: CheckKind::Cgroups,
            works: true,
            detail,
            fix: None,
        };
    }
    let fallback = if sys::is_root() {
        "memory falls back to RLIMIT_AS, processes are not limited"
    } else {
        "memory falls back to RLIMIT_AS, processes to RLIMIT_NPROC"
    };
    BackendStatus {
        kind: CheckKind::Cgroups,
        works: false,
        detail: format!("{detail}; {fallback}, CPUs are not limited"),
        fix: Some(
            "run plumb where it may make cgroups: as root with cgroups mounted read-write, or \
             in a systemd unit with `Delegate=yes` (cgroup v2)"
                .to_owned(),
        ),
    }
}

fn runsc() -> BackendStatus {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([Path::new("/usr/bin").to_path_buf()])
        .map(|dir| dir.join("runsc"))
        .find(|p| p.is_file());
    match found {
        Some(path) => BackendStatus {
            kind: CheckKind::Runsc,
            works: true,
            detail: format!("gVisor's runsc is installed at {}", path.display()),
            fix: None,
        },
        None => BackendStatus {
            kind: CheckKind::Runsc,
            works: false,
            detail: "gVisor's runsc is not installed".to_owned(),
            fix: Some(
                "install it from https://gvisor.dev/docs/user_guide/install/ to use \
                 --sandbox gvisor"
                    .to_owned(),
            ),
        },
    }
}

/// Checks everything `plumb doctor` reports about sandboxing, in a fixed order.
pub async fn check_backends() -> Vec<BackendStatus> {
    vec![user_namespaces(), bwrap().await, cgroups(), runsc()]
}

/// Whether one toolchain found on the host works inside the bwrap sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolchainStatus {
    pub kind: ToolchainKind,
    pub works: bool,
    /// E.g. "cargo 1.95.0 (…) via rustup toolchain stable-x86_64-unknown-linux-gnu — works in
    /// bwrap", or what failed and how to fix it.
    pub detail: String,
}

/// Runs each toolchain's version command (`cargo --version`, `go version`, `node --version`,
/// `mvn -v`) inside bwrap with the toolchains as a run gets them; an empty list when none is
/// on `PATH`.
pub async fn check_toolchains() -> Vec<ToolchainStatus> {
    let (Ok(cache), Ok(work)) = (tempfile::tempdir(), tempfile::tempdir()) else {
        return Vec::new();
    };
    let toolchains = Toolchains::from_process(cache.path().join("toolcache"));
    let sandbox = BwrapSandbox::new().map(|s| s.with_toolchains(toolchains.clone()));
    let mut out = Vec::new();
    for toolchain in toolchains.found() {
        let status = |works: bool, detail: String| ToolchainStatus {
            kind: toolchain.kind,
            works,
            detail,
        };
        let sandbox = match &sandbox {
            Ok(sandbox) => sandbox,
            Err(err) => {
                out.push(status(
                    false,
                    format!("{}; not tried: {err}", toolchain.detail),
                ));
                continue;
            }
        };
        let mut spec = CommandSpec::new(
            toolchain.kind.version_argv(&toolchain.program),
            work.path().to_path_buf(),
        );
        spec.limits.timeout = Duration::from_secs(30);
        let result = sandbox.run(&spec, &CancellationToken::new()).await;
        out.push(match result {
            Ok(run) if run.success() => {
                let text = format!("{}{}", run.stdout, run.stderr);
                let version = plain(text.lines().next().unwrap_or("").trim());
                status(
                    true,
                    format!("{version} via {} — works in bwrap", toolchain.detail),
                )
            }
            Ok(run) => {
                let text = format!("{}{}", run.stderr, run.stdout);
                let why = text.lines().next().unwrap_or("no output").trim().to_owned();
                status(
                    false,
                    format!(
                        "{} fails in bwrap (exit {:?}): {why}; see `plumb doctor`'s bwrap line, or set sandbox_read_only to the folders it needs",
                        toolchain.detail, run.exit_code
                    ),
                )
            }
            Err(err) => status(false, format!("{} fails in bwrap: {err}", toolchain.detail)),
        });
    }
    out
}

/// `text` without terminal colour sequences (`ESC [ … m`), which Maven prints even to a pipe.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn colour_sequences_are_left_out() {
        let actual = plain("\u{1b}[1mApache Maven 3.8.7\u{1b}[m");

        assert_eq!(actual, "Apache Maven 3.8.7");
    }
}
