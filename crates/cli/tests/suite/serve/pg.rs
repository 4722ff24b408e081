//! A PostgreSQL server of the test's own — `initdb` in a temporary folder, `pg_ctl` on a free port
//! — so a test may stop and restart it without disturbing the other tests that share the cluster
//! `scripts/setup-test-deps.sh --tests` starts. Debian's server binaries are required; a machine
//! without them fails the test saying so (never a skip). PostgreSQL refuses to run as root, so
//! when the tests run as root the server runs as the `postgres` user the package creates.

use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

impl Postgres {
    /// A fresh cluster, started, with a superuser `plumb` trusted on the loopback address.
    pub fn start() -> Postgres {
        let bin = server_bin();
        let dir = tempfile::tempdir().unwrap();
        if as_root() {
            let owned = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(owned.success(), "chown of {} failed", dir.path().display());
        }
        let port = super::free_port();
        let pg = Postgres { dir, bin, port };
        pg.run(
            "initdb",
            &[
                "-D",
                &pg.data(),
                "-U",
                "plumb",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        pg.pg_ctl(&["start"]);
        pg
    }

    /// What `--db` takes to reach it.
    pub fn url(&self) -> String {
        format!("postgres://plumb@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops the server, ending every connection as an operator's restart does.
    pub fn stop(&self) {
        self.pg_ctl(&["stop", "-m", "fast"]);
    }

    /// Starts the stopped server again on the same port.
    pub fn start_again(&self) {
        self.pg_ctl(&["start"]);
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn pg_ctl(&self, action: &[&str]) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("server.log").display().to_string();
        let data = self.data();
        let mut args = vec!["-D", data.as_str(), "-l", &log, "-o", &options, "-w"];
        args.extend_from_slice(action);
        self.run("pg_ctl", &args);
    }

    /// One of the server's programs, run as `postgres` when the tests run as root.
    fn server_command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if as_root() {
            let mut command = Command::new("runuser");
            command
                .args(["-u", "postgres", "--"])
                .arg(path)
                .current_dir("/");
            command
        } else {
            Command::new(path)
        }
    }

    /// Runs one of the server's programs; it must succeed.
    fn run(&self, program: &str, args: &[&str]) {
        let output = self
            .server_command(program)
            .args(args)
            .output()
            .unwrap_or_else(|error| panic!("{program} could not start: {error}"));
        let log = std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
        assert!(
            output.status.success(),
            "{program} {args:?} failed: {}{}\nserver log:\n{log}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self
            .server_command("pg_ctl")
            .args(["-D", data.as_str(), "-m", "immediate", "stop"])
            .output();
    }
}

/// Whether the tests run as root (`/proc/self` belongs to the process's effective user).
fn as_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}

/// The newest installed server's programs (`/usr/lib/postgresql/N/bin` on Debian).
fn server_bin() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            Path::new(&bin)
                .join("initdb")
                .is_file()
                .then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).unwrap_or_else(|| {
        panic!(
            "PostgreSQL's server programs are not installed (no /usr/lib/postgresql/N/bin/initdb): \
             run scripts/setup-test-deps.sh --tests"
        )
    })
}
