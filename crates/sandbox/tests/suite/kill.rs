//! Timeouts and cancellation kill the whole process tree, and nothing can hang the call.

use std::time::Duration;

use plumb_sandbox::{CommandOutput, GRACE_AFTER_KILL, Sandbox};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::support::{Fixture, none_enforced, read_pid, sh, still_alive, without_duration};

const SIGKILL: i32 = 9;

/// The output of a command killed by the harness after printing `stdout`.
fn killed(stdout: &str, timed_out: bool, cancelled: bool) -> CommandOutput {
    CommandOutput {
        exit_code: None,
        signal: Some(SIGKILL),
        stdout: stdout.to_owned(),
        stderr: String::new(),
        timed_out,
        cancelled,
        stdout_truncated_bytes: 0,
        stderr_truncated_bytes: 0,
        duration: Duration::ZERO,
        enforced: none_enforced(),
        limits_hit: if timed_out {
            vec!["timeout".to_owned()]
        } else {
            Vec::new()
        },
    }
}

#[tokio::test]
async fn timeout_kills_the_whole_tree() {
    let fx = Fixture::new();
    let mut spec = fx.spec(&sh(
        "sleep 100 & echo $! > grandchild.pid; echo started; sleep 100",
    ));
    spec.limits.timeout = Duration::from_secs(1);

    let out = fx
        .sandbox
        .run(&spec, &CancellationToken::new())
        .await
        .unwrap();
    let grandchild = read_pid(&fx.root(), "grandchild.pid");

    assert!(out.duration < Duration::from_secs(5), "{:?}", out.duration);
    assert!(!still_alive(grandchild), "grandchild {grandchild} survived");
    assert_eq!(without_duration(out), killed("started\n", true, false));
}

#[tokio::test]
async fn a_process_ignoring_sigterm_still_dies() {
    let fx = Fixture::new();
    // An ignored signal stays ignored across exec, so `sleep` ignores TERM too.
    let mut spec = fx.spec(&sh(
        "trap '' TERM INT HUP; echo $$ > shell.pid; echo trapped; sleep 100",
    ));
    spec.limits.timeout = Duration::from_secs(1);

    let out = fx
        .sandbox
        .run(&spec, &CancellationToken::new())
        .await
        .unwrap();
    let shell = read_pid(&fx.root(), "shell.pid");

    assert!(out.duration < Duration::from_secs(5), "{:?}", out.duration);
    assert!(!still_alive(shell), "shell {shell} survived");
    assert_eq!(without_duration(out), killed("trapped\n", true, false));
}

#[tokio::test]
async fn cancel_kills_the_whole_tree() {
    let fx = Fixture::new();
    let spec = fx.spec(&sh(
        "sleep 100 & echo $! > grandchild.pid; echo started; sleep 100",
    ));
    let cancel = CancellationToken::new();
    let canceller = {
        let cancel = cancel.clone();
        let pid_file = fx.root().join("grandchild.pid");
        tokio::spawn(async move {
            while !pid_file.exists() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            cancel.cancel();
        })
    };

    let out = fx.sandbox.run(&spec, &cancel).await.unwrap();
    canceller.await.unwrap();
    let grandchild = read_pid(&fx.root(), "grandchild.pid");

    assert!(out.duration < Duration::from_secs(5), "{:?}", out.duration);
    assert!(!still_alive(grandchild), "grandchild {grandchild} survived");
    assert_eq!(without_duration(out), killed("started\n", false, true));
}

#[tokio::test]
async fn background_leftovers_die_when_the_command_exits() {
    let fx = Fixture::new();
    let spec = fx.spec(&sh("sleep 100 & echo $! > background.pid; echo done"));

    let out = fx
        .sandbox
        .run(&spec, &CancellationToken::new())
        .await
        .unwrap();
    let background = read_pid(&fx.root(), "background.pid");

    assert!(out.duration < Duration::from_secs(5), "{:?}", out.duration);
    assert!(!still_alive(background), "background {background} survived");
    assert_eq!(
        (out.exit_code, out.stdout.as_str(), out.timed_out),
        (Some(0), "done\n", false)
    );
}

#[tokio::test]
async fn an_escaped_process_holding_the_pipe_cannot_hang_the_call() {
    let fx = Fixture::new();
    // `setsid` leaves our process group, so killpg cannot reach it; it keeps stdout open.
    let spec = fx.spec(&sh(
        "setsid sh -c 'echo $$ > escaped.pid; exec sleep 100' & \
         while [ ! -s escaped.pid ]; do sleep 0.05; done; echo done",
    ));

    let out = fx
        .sandbox
        .run(&spec, &CancellationToken::new())
        .await
        .unwrap();
    let escaped = read_pid(&fx.root(), "escaped.pid");
    std::process::Command::new("kill")
        .args(["-9", &escaped.to_string()])
        .status()
        .unwrap();

    assert!(
        out.duration < GRACE_AFTER_KILL + Duration::from_secs(3),
        "{:?}",
        out.duration
    );
    assert_eq!(
        (out.exit_code, out.stdout.as_str(), out.timed_out),
        (Some(0), "done\n", false)
    );
}

/// The watch that would end a command if plumb died (one `sh` per command) ends with the call,
/// however the command ends, and a dropped call takes it along too.
#[tokio::test]
async fn no_watch_outlives_its_command() {
    let fx = Fixture::new();
    let mut slow = fx.spec(&["sleep", "100"]);
    slow.limits.timeout = Duration::from_millis(300);
    let watches = || {
        let name = format!("plumb-watch:{}\0", std::process::id());
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(Result::ok)
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .filter(|cmdline| String::from_utf8_lossy(cmdline).contains(&name))
            .count()
    };

    let done = fx
        .sandbox
        .run(&fx.spec(&["true"]), &CancellationToken::new())
        .await;
    let after_exit = watches();
    let timed_out = fx.sandbox.run(&slow, &CancellationToken::new()).await;
    let after_timeout = watches();
    let dropped = tokio::time::timeout(
        Duration::from_millis(300),
        fx.sandbox
            .run(&fx.spec(&["sleep", "100"]), &CancellationToken::new()),
    )
    .await;
    // A dropped call kills its watch without waiting for it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after_drop = watches();

    assert_eq!(
        (
            done.unwrap().success(),
            after_exit,
            timed_out.unwrap().timed_out,
            after_timeout,
            dropped.is_err(),
            after_drop,
        ),
        (true, 0, true, 0, true, 0)
    );
}
