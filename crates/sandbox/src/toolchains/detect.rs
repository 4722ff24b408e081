//! Finding each toolchain on the host, once, when a sandbox is built: which program the
//! command's `PATH` names, where it really lives, and which host folders and variables it
//! needs to run inside. Only files are looked at (no host program is run), and only through
//! the environment given, so tests pass a made-up host down instead of changing the process.
//!
//! What each toolchain needs (the rest of the host `HOME` is never named here):
//! - rust: a `cargo` that is rustup's shim (it resolves to a file named `rustup`) needs
//!   rustup's home (`RUSTUP_HOME`, else `~/.rustup`: its `settings.toml` and `toolchains/`, no
//!   credentials live there) and the toolchain chosen on the host (`RUSTUP_TOOLCHAIN`, else
//!   `default_toolchain` of `settings.toml`), because the sandbox's `HOME` is empty. A cargo
//!   that is not rustup's (Debian's `/usr/bin/cargo`) needs nothing but its cache.
//! - go: `GOROOT` is where the resolved `go` sits (`<root>/bin/go`), as `go` itself reckons it,
//!   unless the host sets `GOROOT`.
//! - node: the installation prefix of the resolved `node` (`<prefix>/bin/node`), so that
//!   nvm's `npm`, a link into `<prefix>/lib/node_modules`, resolves inside too.
//! - java/maven: `JAVA_HOME` (the host's, else where the resolved `java` sits) and Maven's home
//!   (where the resolved `mvn` sits).
//!
//! A folder is shown only if it is not the system's (already shown), not `/`, and not the host
//! `HOME` or a folder above it (which would show all of `HOME`): a toolchain installed straight
//! into `~/bin` is left to the `PATH` rule of `host_view.rs`.

use std::path::{Path, PathBuf};

use super::{Toolchain, ToolchainKind};

/// The host as detection sees it: its environment and a way to resolve links.
pub(super) struct Host<'a> {
    env: &'a [(String, String)],
}

impl<'a> Host<'a> {
    pub(super) fn new(env: &'a [(String, String)]) -> Self {
        Self { env }
    }

    fn var(&self, name: &str) -> Option<&'a str> {
        self.env
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    fn home(&self) -> Option<PathBuf> {
        self.var("HOME").map(PathBuf::from)
    }

    /// The first executable `name` in an absolute directory of `PATH`, as named there and as
    /// resolved.
    fn which(&self, name: &str) -> Option<(PathBuf, PathBuf)> {
        let path = self.var("PATH")?;
        path.split(':')
            .map(Path::new)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
            .and_then(|p| {
                let real = p.canonicalize().ok()?;
                Some((p, real))
            })
    }

    /// `dir` when it may be shown read-only: it exists, is not the system's and shows no more
    /// of the host `HOME` than itself.
    fn showable(&self, dir: &Path) -> Option<PathBuf> {
        let dir = dir.canonicalize().ok().filter(|d| d.is_dir())?;
        let home = self.home().and_then(|h| h.canonicalize().ok());
        let too_wide = dir.parent().is_none() || home.is_some_and(|h| h.starts_with(&dir));
        (!too_wide && !is_system(&dir)).then_some(dir)
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The system folders `host_view.rs` already shows read-only.
fn is_system(path: &Path) -> bool {
    ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc"]
        .iter()
        .any(|s| path.starts_with(s))
}

/// `<prefix>` of a resolved `<prefix>/bin/<program>`.
fn prefix_of(real: &Path) -> Option<&Path> {
    let bin = real.parent()?;
    (bin.file_name()? == "bin").then_some(())?;
    bin.parent()
}

/// Every toolchain found on `host`, in a fixed order: rust, go, node, java/maven.
pub(super) fn all(host: &Host<'_>) -> Vec<Toolchain> {
    [rust(host), go(host), node(host), java(host)]
        .into_iter()
        .flatten()
        .collect()
}

fn rust(host: &Host<'_>) -> Option<Toolchain> {
    let (program, real) = host.which("cargo")?;
    let mut found = Toolchain::new(ToolchainKind::Rust, program);
    if real.file_name().is_some_and(|n| n == "rustup") {
        let rustup_home = host
            .var("RUSTUP_HOME")
            .map(PathBuf::from)
            .or_else(|| host.home().map(|h| h.join(".rustup")))?;
        let rustup_home = host.showable(&rustup_home)?;
        let chosen = host
            .var("RUSTUP_TOOLCHAIN")
            .map(str::to_owned)
            .or_else(|| default_toolchain(&rustup_home))
            .and_then(|name| installed_toolchain(&rustup_home, &name));
        found
            .env
            .push(("RUSTUP_HOME".to_owned(), path_text(&rustup_home)?));
        found.detail = match &chosen {
            Some(name) => format!("rustup toolchain {name}"),
            None => "rustup, no default toolchain chosen on this machine".to_owned(),
        };
        found.rustup_toolchain = chosen;
        found.read_only.push(rustup_home);
    } else {
        found.detail = format!("cargo at {}", real.display());
    }
    Some(found)
}

/// `default_toolchain` of rustup's `settings.toml` (a line `default_toolchain = "NAME"`).
fn default_toolchain(rustup_home: &Path) -> Option<String> {
    let text = std::fs::read_to_string(rustup_home.join("settings.toml")).ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "default_toolchain").then(|| value.trim().trim_matches('"').to_owned())
    })
}

/// The installed toolchain `name` stands for: the folder of that name in `toolchains/`, or
/// the one whose name is `name` plus the host triple (`stable` for `stable-x86_64-...`).
fn installed_toolchain(rustup_home: &Path, name: &str) -> Option<String> {
    let dir = rustup_home.join("toolchains");
    if dir.join(name).is_dir() {
        return Some(name.to_owned());
    }
    let prefix = format!("{name}-");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    names.sort();
    names.into_iter().next()
}

fn go(host: &Host<'_>) -> Option<Toolchain> {
    let (program, real) = host.which("go")?;
    let root = match host.var("GOROOT") {
        Some(root) => PathBuf::from(root),
        None => prefix_of(&real)?.to_path_buf(),
    };
    let mut found = Toolchain::new(ToolchainKind::Go, program);
    found.detail = format!("GOROOT {}", root.display());
    found.env.push(("GOROOT".to_owned(), path_text(&root)?));
    found.read_only.extend(host.showable(&root));
    Some(found)
}

fn node(host: &Host<'_>) -> Option<Toolchain> {
    let (program, real) = host.which("node")?;
    let mut found = Toolchain::new(ToolchainKind::Node, program);
    found.detail = format!("node at {}", real.display());
    found
        .read_only
        .extend(prefix_of(&real).and_then(|p| host.showable(p)));
    Some(found)
}

fn java(host: &Host<'_>) -> Option<Toolchain> {
    let (java_program, java_real) = host.which("java")?;
    let java_home = match host.var("JAVA_HOME") {
        Some(home) => PathBuf::from(home),
        None => prefix_of(&java_real)?.to_path_buf(),
    };
    let mvn = host.which("mvn");
    let program = mvn.as_ref().map_or(java_program, |(p, _)| p.clone());
    let mut found = Toolchain::new(ToolchainKind::Java, program);
    found.detail = format!("JAVA_HOME {}", java_home.display());
    found
        .env
        .push(("JAVA_HOME".to_owned(), path_text(&java_home)?));
    found.read_only.extend(host.showable(&java_home));
    if let Some((_, mvn_real)) = &mvn {
        found
            .read_only
            .extend(prefix_of(mvn_real).and_then(|p| host.showable(p)));
    }
    Some(found)
}

fn path_text(path: &Path) -> Option<String> {
    path.to_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn executable(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_rustup_home_an_nvm_node_and_a_go_root_are_found_and_home_itself_is_not_shown() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let home = root.join("home");
        executable(&home.join(".cargo/bin/rustup"));
        symlink("rustup", home.join(".cargo/bin/cargo")).unwrap();
        std::fs::create_dir_all(home.join(".rustup/toolchains/stable-x86_64-unknown-linux-gnu"))
            .unwrap();
        std::fs::write(
            home.join(".rustup/settings.toml"),
            "version = \"12\"\ndefault_toolchain = \"stable\"\n",
        )
        .unwrap();
        let nvm = home.join(".nvm/versions/node/v20.1.0");
        executable(&nvm.join("bin/node"));
        executable(&root.join("opt/go/bin/go"));
        // A java straight in HOME's bin: its prefix would be HOME, which is never shown.
        executable(&home.join("bin/java"));
        let path = [
            home.join(".cargo/bin"),
            nvm.join("bin"),
            root.join("opt/go/bin"),
            home.join("bin"),
        ]
        .map(|p| p.display().to_string())
        .join(":");
        let env = vec![
            ("HOME".to_owned(), home.display().to_string()),
            ("PATH".to_owned(), path),
        ];

        type Found = (String, String, Vec<PathBuf>, Vec<(String, String)>);
        let actual: Vec<Found> = all(&Host::new(&env))
            .into_iter()
            .map(|t| (t.kind.as_str().to_owned(), t.detail, t.read_only, t.env))
            .collect();

        let text = |p: &Path| p.display().to_string();
        let expected = vec![
            (
                "rust".to_owned(),
                "rustup toolchain stable-x86_64-unknown-linux-gnu".to_owned(),
                vec![home.join(".rustup")],
                vec![("RUSTUP_HOME".to_owned(), text(&home.join(".rustup")))],
            ),
            (
                "go".to_owned(),
                format!("GOROOT {}", root.join("opt/go").display()),
                vec![root.join("opt/go")],
                vec![("GOROOT".to_owned(), text(&root.join("opt/go")))],
            ),
            (
                "node".to_owned(),
                format!("node at {}", nvm.join("bin/node").display()),
                vec![nvm],
                Vec::new(),
            ),
            (
                "java/maven".to_owned(),
                format!("JAVA_HOME {}", home.display()),
                Vec::new(),
                vec![("JAVA_HOME".to_owned(), text(&home))],
            ),
        ];
        assert_eq!(actual, expected);
    }
}
