//! The host's toolchains under the wall, with real projects run by the real tools under bwrap
//! (and the Rust case under gVisor): a plain crate's `cargo test`, a crate with a crates.io
//! dependency fetched by a command with the network and tested offline from the read-only
//! cache, a Go module (and its build cache: warmed by a command with the network, copied for
//! each offline one, which compiles nothing and cannot write the seed), a Node project's
//! `npm test` (`node --test`), Maven's `mvn -v`; and the credentials of a planted `HOME` that
//! must stay out.
//!
//! A Maven *project* is not run: its surefire plugin and JUnit come from Maven Central, which
//! this machine cannot reach (the allowed registries are crates.io, PyPI, Debian and npm), and
//! Debian packages neither. Where a toolchain is missing the test says so and fails: these
//! tests never skip silently (`scripts/setup-test-deps.sh --tests` installs Go and Node).

use std::path::{Path, PathBuf};
use std::time::Duration;

use plumb_sandbox::{
    BwrapSandbox, CommandOutput, CommandSpec, EnvPolicy, Network, Sandbox, ToolchainKind,
    Toolchains,
};
use pretty_assertions::assert_eq;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use super::bwrap_support::require_bwrap;
use super::run_dirs::{Place, RunDirs, parent_env};

/// This process's environment, as plumb would detect toolchains from it (read, never changed).
fn host_env() -> Vec<(String, String)> {
    [
        "PATH",
        "HOME",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
        "GOROOT",
        "JAVA_HOME",
    ]
    .iter()
    .filter_map(|name| Some(((*name).to_owned(), std::env::var(name).ok()?)))
    .collect()
}

/// A run directory (`work/`, `shadow.git/`) and a toolchain cache beside it, as plumb lays out
/// a run, with a bwrap backend given the host's toolchains.
struct Fixture {
    run: RunDirs,
    cache: PathBuf,
    sandbox: BwrapSandbox,
}

impl Fixture {
    fn new(host: &[(String, String)]) -> Self {
        require_bwrap();
        let run = RunDirs::new("toolchains-run-", Place::Target);
        let cache = run.run_dir.path().canonicalize().unwrap().join("toolcache");
        let toolchains = Toolchains::detect(host, cache.clone());
        let mut parent = parent_env(&[]);
        parent.retain(|(name, _)| name != "PATH");
        parent.extend(host.iter().filter(|(n, _)| n == "PATH").cloned());
        let sandbox = BwrapSandbox::new()
            .unwrap()
            .with_env_policy(EnvPolicy::from_parent(parent))
            .with_toolchains(toolchains);
        Self {
            run,
            cache,
            sandbox,
        }
    }

    fn work(&self) -> PathBuf {
        self.run.run_dir.path().canonicalize().unwrap().join("work")
    }

    /// Writes `files` (path, text) into the workspace.
    fn project(&self, files: &[(&str, &str)]) {
        for (path, text) in files {
            let path = self.work().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    async fn run(&self, argv: &[&str], network: Network) -> CommandOutput {
        let mut spec =
            CommandSpec::new(argv.iter().map(|a| (*a).to_owned()).collect(), self.work());
        spec.network = network;
        spec.limits.timeout = Duration::from_secs(240);
        self.sandbox
            .run(&spec, &CancellationToken::new())
            .await
            .unwrap()
    }
}

/// Fails loudly when `program` is not on this machine's `PATH`.
fn require(program: &str, install: &str) {
    let found = std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .any(|dir| Path::new(dir).join(program).is_file());
    assert!(
        found,
        "`{program}` is not installed, and this test runs it inside the sandbox: {install} \
         (scripts/setup-test-deps.sh --tests does)"
    );
}

/// `program` on this process's `PATH`.
fn which(program: &str) -> PathBuf {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{program}` is not on PATH"))
}

/// The start of cargo's summary line (its time left out), else the whole output.
fn passed(out: &CommandOutput) -> String {
    let line = summary(out, "test result:");
    line.split(';').take(2).collect::<Vec<_>>().join(";")
}

/// The line of a test runner's output that starts with `prefix`, else the whole output.
fn summary(out: &CommandOutput, prefix: &str) -> String {
    let text = format!("{}{}", out.stdout, out.stderr);
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with(prefix))
        .map_or(text.clone(), str::to_owned)
}

const ADDER_TOML: &str = "[package]\nname = \"adder\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const ADDER_LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n\
    #[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n}\n";

#[tokio::test]
async fn a_plain_crate_tests_with_the_rustup_toolchain_and_without_it_does_not() {
    require("cargo", "install Rust with rustup");
    let with = Fixture::new(&host_env());
    with.project(&[("Cargo.toml", ADDER_TOML), ("src/lib.rs", ADDER_LIB)]);
    let without = Fixture::new(&host_env());
    let without = Fixture {
        sandbox: without.sandbox.with_toolchains(Toolchains::none()),
        ..without
    };
    without.project(&[("Cargo.toml", ADDER_TOML), ("src/lib.rs", ADDER_LIB)]);

    let rustup_shim = which("cargo").canonicalize().unwrap().ends_with("rustup");
    let ok = with
        .run(&["cargo", "test", "--offline"], Network::Off)
        .await;
    let failed = without
        .run(&["cargo", "test", "--offline"], Network::Off)
        .await;

    let actual = (
        ok.exit_code,
        passed(&ok),
        // Only a rustup shim fails without its home; a system cargo works either way.
        !rustup_shim
            || failed
                .stderr
                .contains("rustup could not choose a version of cargo"),
    );
    let expected = (
        Some(0),
        "test result: ok. 1 passed; 0 failed".to_owned(),
        true,
    );
    assert_eq!(actual, expected, "with toolchains: {}", ok.stderr);
}

#[tokio::test]
async fn a_dependency_fetched_with_the_network_builds_offline_from_the_read_only_cache() {
    require("cargo", "install Rust with rustup");
    let fx = Fixture::new(&host_env());
    fx.project(&[
        (
            "Cargo.toml",
            "[package]\nname = \"uses_itoa\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\nitoa = \"=1.0.11\"\n",
        ),
        (
            "src/lib.rs",
            "pub fn text(n: u32) -> String {\n    itoa::Buffer::new().format(n).to_owned()\n}\n\n\
             #[cfg(test)]\nmod tests {\n    #[test]\n    fn formats() {\n        assert_eq!(super::text(42), \"42\");\n    }\n}\n",
        ),
    ]);
    let cache = fx.cache.display().to_string();
    let write_probe = format!("touch {cache}/cargo/planted && echo wrote || echo refused");

    let before_fetch = fx.run(&["cargo", "test"], Network::Off).await;
    let fetch = fx.run(&["cargo", "fetch"], Network::Host).await;
    let test = fx.run(&["cargo", "test"], Network::Off).await;
    let offline_write = fx.run(&["sh", "-c", &write_probe], Network::Off).await;
    let online_write = fx.run(&["sh", "-c", &write_probe], Network::Host).await;

    let actual = (
        before_fetch.success(),
        fetch.exit_code,
        passed(&test),
        offline_write.stdout.trim().to_owned(),
        online_write.stdout.trim().to_owned(),
    );
    let expected = (
        false,
        Some(0),
        "test result: ok. 1 passed; 0 failed".to_owned(),
        "refused".to_owned(),
        "wrote".to_owned(),
    );
    assert_eq!(
        actual, expected,
        "fetch: {}\ntest: {}",
        fetch.stderr, test.stderr
    );
}

/// A go module with one passing test.
const GO_ADDER: [(&str, &str); 3] = [
    ("go.mod", "module example.com/adder\n\ngo 1.19\n"),
    (
        "add.go",
        "package adder\n\nfunc Add(a, b int) int { return a + b }\n",
    ),
    (
        "add_test.go",
        "package adder\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"2+2\")\n\t}\n}\n",
    ),
];

#[tokio::test]
async fn a_go_module_tests_offline() {
    require("go", "apt-get install golang-go");
    let fx = Fixture::new(&host_env());
    fx.project(&GO_ADDER);

    let out = fx.run(&["go", "test", "./..."], Network::Off).await;

    let actual = (out.exit_code, summary(&out, "ok"));
    let first_word = actual
        .1
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(
        (actual.0, first_word),
        (Some(0), "ok example.com/adder".to_owned()),
        "{}{}",
        out.stdout,
        out.stderr
    );
}

/// Whether a `go … -x` run compiled anything (`-x` prints each `compile` it runs).
fn compiled(out: &CommandOutput) -> bool {
    out.stderr.contains("/compile -o")
}

#[tokio::test]
async fn go_builds_offline_from_a_private_copy_of_the_cache_the_setup_phase_warmed() {
    require("go", "apt-get install golang-go");
    let fx = Fixture::new(&host_env());
    fx.project(&GO_ADDER);
    let seed = fx.cache.join("go/build");
    let plant = "touch \"$GOCACHE/planted\" && echo \"$GOCACHE\"";

    let cold = fx.run(&["go", "test", "-x", "./..."], Network::Off).await;
    let setup = fx.run(&["go", "test", "./..."], Network::Host).await;
    let warm = fx.run(&["go", "test", "-x", "./..."], Network::Off).await;
    let planted = fx.run(&["sh", "-c", plant], Network::Off).await;

    let private_copies: Vec<_> = std::fs::read_dir(format!("{}.private", fx.cache.display()))
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let actual = (
        (cold.exit_code, compiled(&cold)),
        (setup.exit_code, seed.is_dir()),
        (
            warm.exit_code,
            compiled(&warm),
            warm.stdout.contains("(cached)"),
        ),
        planted.exit_code,
        planted
            .stdout
            .trim()
            .starts_with(&format!("{}.private/", fx.cache.display())),
        seed.join("planted").exists(),
        private_copies,
    );
    assert_eq!(
        actual,
        (
            (Some(0), true),
            (Some(0), true),
            (Some(0), false, false),
            Some(0),
            true,
            false,
            Vec::new(),
        ),
        "cold: {}\nsetup: {}{}\nwarm: {}{}\nplanted: {}{}",
        cold.stdout,
        setup.stdout,
        setup.stderr,
        warm.stdout,
        warm.stderr
            .lines()
            .filter(|l| l.contains("compile"))
            .take(5)
            .collect::<Vec<_>>()
            .join("\n"),
        planted.stdout,
        planted.stderr
    );
}

#[tokio::test]
async fn a_node_project_tests_with_npm_offline() {
    require("node", "apt-get install nodejs npm");
    require("npm", "apt-get install npm");
    let fx = Fixture::new(&host_env());
    fx.project(&[
        (
            "package.json",
            "{\"name\": \"adder\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"node --test\"}}\n",
        ),
        ("add.js", "module.exports = (a, b) => a + b;\n"),
        (
            "test/add.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\n\
             const add = require('../add');\n\ntest('adds', () => assert.strictEqual(add(2, 2), 4));\n",
        ),
    ]);

    let out = fx.run(&["npm", "test"], Network::Off).await;

    let actual = (out.exit_code, summary(&out, "# pass"));
    assert_eq!(actual, (Some(0), "# pass 1".to_owned()), "{}", out.stderr);
}

#[tokio::test]
async fn maven_runs_with_its_jdk() {
    require("mvn", "apt-get install maven");
    let fx = Fixture::new(&host_env());

    let out = fx.run(&["mvn", "-v"], Network::Off).await;

    let actual = (
        out.exit_code,
        out.stdout.contains("Apache Maven"),
        out.stdout.contains("Java version"),
    );
    assert_eq!(
        actual,
        (Some(0), true, true),
        "{}{}",
        out.stdout,
        out.stderr
    );
}

/// A `HOME` with the credentials every toolchain keeps there, and a rustup shim in its
/// `.cargo/bin` (a copy of the host's) that uses the host's rustup home.
fn planted_home() -> (TempDir, Vec<(String, String)>) {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let secrets = [
        ".cargo/credentials.toml",
        ".cargo/credentials",
        ".cargo/config.toml",
        ".npmrc",
        ".m2/settings.xml",
        ".ssh/id_rsa",
    ];
    for file in secrets {
        std::fs::create_dir_all(h.join(file).parent().unwrap()).unwrap();
        std::fs::write(h.join(file), "token = \"planted-secret\"\n").unwrap();
    }
    let host = host_env();
    let var = |n: &str| host.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let real_home = PathBuf::from(var("HOME").unwrap());
    let rustup_home = var("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| real_home.join(".rustup"));
    std::fs::create_dir_all(h.join(".cargo/bin")).unwrap();
    std::fs::copy(which("rustup"), h.join(".cargo/bin/rustup")).unwrap();
    std::os::unix::fs::symlink("rustup", h.join(".cargo/bin/cargo")).unwrap();
    let env = vec![
        ("HOME".to_owned(), h.display().to_string()),
        (
            "PATH".to_owned(),
            format!("{}:/usr/bin:/bin", h.join(".cargo/bin").display()),
        ),
        ("RUSTUP_HOME".to_owned(), rustup_home.display().to_string()),
    ];
    (home, env)
}

#[tokio::test]
async fn credentials_in_home_stay_out_while_its_toolchain_works() {
    require("rustup", "install Rust with rustup");
    let (home, host) = planted_home();
    let fx = Fixture::new(&host);
    let h = home.path().canonicalize().unwrap().display().to_string();
    let script = format!(
        "for f in .cargo/credentials.toml .cargo/credentials .cargo/config.toml .npmrc \
         .m2/settings.xml .ssh/id_rsa; do cat {h}/$f 2>/dev/null && echo \"READ $f\"; done; \
         grep -rl planted-secret \"$HOME\" \"$CARGO_HOME\" 2>/dev/null; \
         echo \"CARGO_HOME=$CARGO_HOME\"; cargo --version >/dev/null && echo cargo works"
    );

    let out = fx.run(&["sh", "-c", &script], Network::Off).await;

    let rust_found = Toolchains::detect(&host, fx.cache.clone())
        .found()
        .iter()
        .any(|t| t.kind == ToolchainKind::Rust);
    let actual = (rust_found, out.stdout.clone());
    let expected = (
        true,
        format!(
            "CARGO_HOME={}\ncargo works\n",
            fx.cache.join("cargo").display()
        ),
    );
    assert_eq!(actual, expected, "{}", out.stderr);
}

#[tokio::test]
async fn doctor_runs_each_toolchain_inside_bwrap() {
    require("cargo", "install Rust with rustup");
    require_bwrap();

    let statuses = plumb_sandbox::check_toolchains().await;

    let rust = statuses.iter().find(|s| s.kind == ToolchainKind::Rust);
    let actual = rust.map(|s| {
        (
            s.works,
            s.detail.starts_with("cargo "),
            s.detail.ends_with("works in bwrap"),
        )
    });
    assert_eq!(actual, Some((true, true, true)), "{statuses:?}");
}

#[tokio::test]
async fn a_plain_crate_tests_under_gvisor_with_a_dependency_from_the_cache() {
    require("cargo", "install Rust with rustup");
    super::gvisor::require_gvisor().await;
    let run = RunDirs::new("toolchains-gvisor-", Place::Target);
    let root = run.run_dir.path().canonicalize().unwrap();
    let cache = root.join("toolcache");
    let sandbox = plumb_sandbox::GvisorSandbox::new(root.join("scratch"))
        .unwrap()
        .with_env_policy(EnvPolicy::from_parent(parent_env(&[])))
        .with_toolchains(Toolchains::detect(&host_env(), cache));
    let work = root.join("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(
        work.join("Cargo.toml"),
        format!("{ADDER_TOML}\n[dependencies]\nitoa = \"=1.0.11\"\n"),
    )
    .unwrap();
    std::fs::write(work.join("src/lib.rs"), ADDER_LIB).unwrap();
    let run_in = |argv: &[&str], network: Network| {
        let mut spec =
            CommandSpec::new(argv.iter().map(|a| (*a).to_owned()).collect(), work.clone());
        spec.network = network;
        spec.limits.timeout = Duration::from_secs(240);
        spec
    };
    let cancel = CancellationToken::new();

    let fetch = sandbox
        .run(&run_in(&["cargo", "fetch"], Network::Host), &cancel)
        .await
        .unwrap();
    let test = sandbox
        .run(&run_in(&["cargo", "test"], Network::Off), &cancel)
        .await
        .unwrap();

    let actual = (fetch.exit_code, test.exit_code, passed(&test));
    let expected = (
        Some(0),
        Some(0),
        "test result: ok. 1 passed; 0 failed".to_owned(),
    );
    assert_eq!(
        actual, expected,
        "fetch: {}\ntest: {}",
        fetch.stderr, test.stderr
    );
}
