//! Limits under bwrap, enforced by the kernel: fork bomb, memory bomb, infinite loop, a
//! process ignoring SIGTERM, a double-forking daemon, 100 MB of output, a disk fill. After
//! each, no process of the sandbox is alive.

use std::time::Duration;

use pretty_assertions::assert_eq;

use super::bwrap_support::{BwrapFixture, by_cgroup, processes_with, py};

#[tokio::test]
async fn a_fork_bomb_is_stopped_by_the_process_limit_and_the_machine_is_fine() {
    let fx = BwrapFixture::new();
    let marker = format!("plumb-fork-bomb-{}", fx.token());
    // Never run a fork bomb where nothing would stop it.
    let check = fx.run(&fx.spec(&["true"])).await;
    assert!(
        by_cgroup(&check, "processes"),
        "no pids cgroup on this machine, so no process limit could stop a fork bomb: {:?}; \
         see `plumb doctor`",
        check.enforced
    );
    let script = format!("bomb() {{ bomb | bomb & }}; bomb; sleep 2 # {marker}");
    let mut spec = fx.spec(&["sh", "-c", &script]);
    spec.limits.max_processes = 64;
    spec.limits.timeout = Duration::from_secs(10);

    let out = fx.run(&spec).await;
    let survivors = processes_with(&marker);
    let after = fx.run(&fx.spec(&["sh", "-c", "echo fine"])).await;

    assert!(out.duration < Duration::from_secs(15), "{:?}", out.duration);
    assert_eq!(
        (
            out.limits_hit.contains(&"processes".to_owned()),
            survivors,
            after.stdout
        ),
        (true, Vec::new(), "fine\n".to_owned()),
        "{:?}",
        out.limits_hit
    );
}

#[tokio::test]
async fn a_memory_bomb_is_killed_and_reported() {
    let fx = BwrapFixture::new();
    let mut spec = fx.spec(&py(
        "b = bytearray(1 << 30)\nprint('allocated', len(b))",
        &[],
    ));
    spec.limits.memory_bytes = 256 << 20;

    let out = fx.run(&spec).await;

    if by_cgroup(&out, "memory") {
        // The OOM killer's SIGKILL, passed on by bwrap as 128 + 9.
        assert_eq!(
            (out.stdout.as_str(), out.exit_code, out.limits_hit),
            ("", Some(137), vec!["memory".to_owned()])
        );
    } else {
        assert_eq!(
            (out.stdout.as_str(), out.stderr.contains("MemoryError")),
            ("", true),
            "{}",
            out.stderr
        );
    }
}

#[tokio::test]
async fn an_infinite_loop_is_killed_at_the_timeout() {
    let fx = BwrapFixture::new();
    let marker = format!("plumb-loop-{}", fx.token());
    let script = format!("echo looping; while :; do :; done # {marker}");
    let mut spec = fx.spec(&["sh", "-c", &script]);
    spec.limits.timeout = Duration::from_secs(1);

    let out = fx.run(&spec).await;

    assert!(out.duration < Duration::from_secs(5), "{:?}", out.duration);
    assert_eq!(
        (
            out.stdout.as_str(),
            out.timed_out,
            out.signal,
            out.limits_hit,
            processes_with(&marker)
        ),
        (
            "looping\n",
            true,
            Some(9),
            vec!["timeout".to_owned()],
            Vec::new()
        )
    );
}

#[tokio::test]
async fn a_process_ignoring_sigterm_is_killed() {
    let fx = BwrapFixture::new();
    let marker = format!("plumb-trap-{}", fx.token());
    // The shell and a background child both ignore SIGTERM; the child carries the marker too.
    let script = format!(
        "trap '' TERM INT HUP; \
         python3 -c 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); \
         time.sleep(300)' {marker} & \
         echo trapped; while :; do sleep 1; done # {marker}"
    );
    let mut spec = fx.spec(&["sh", "-c", &script]);
    spec.limits.timeout = Duration::from_secs(1);

    let out = fx.run(&spec).await;

    assert!(out.duration < Duration::from_secs(5), "{:?}", out.duration);
    assert_eq!(
        (out.stdout.as_str(), out.timed_out, processes_with(&marker)),
        ("trapped\n", true, Vec::new())
    );
}

#[tokio::test]
async fn a_double_forking_daemon_does_not_outlive_the_command() {
    let fx = BwrapFixture::new();
    let marker = format!("plumb-daemon-{}", fx.token());
    let spec = fx.spec(&py(
        r#"
import os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("python3", ["python3", "-c", "import time; time.sleep(300)", sys.argv[1]])
    os._exit(0)
os.wait()
print("parent done")
"#,
        &[&marker],
    ));

    let out = fx.run(&spec).await;

    assert!(out.duration < Duration::from_secs(5), "{:?}", out.duration);
    assert_eq!(
        (out.exit_code, out.stdout.as_str(), processes_with(&marker)),
        (Some(0), "parent done\n", Vec::new())
    );
}

#[tokio::test]
async fn a_hundred_megabytes_of_output_are_capped() {
    let fx = BwrapFixture::new();
    let spec = fx.spec(&["sh", "-c", "yes plumb | head -c 100000000"]);
    let cap = spec.limits.output_bytes;

    let out = fx.run(&spec).await;

    assert_eq!(
        (
            out.exit_code,
            out.stdout.len(),
            out.stdout_truncated_bytes,
            out.limits_hit
        ),
        (
            Some(0),
            cap,
            100_000_000 - cap as u64,
            vec!["output cap".to_owned()]
        )
    );
}

#[tokio::test]
async fn a_disk_fill_is_stopped_by_the_file_size_limit() {
    let fx = BwrapFixture::new();
    let mut spec = fx.spec(&[
        "sh",
        "-c",
        "head -c 5000000 /dev/zero > big.bin; echo \"workspace: $?\"; \
         head -c 5000000 /dev/zero > /tmp/big.bin; echo \"tmp: $?\"",
    ]);
    spec.limits.max_file_bytes = 1 << 20;

    let out = fx.run(&spec).await;
    let written = std::fs::metadata(fx.work().join("big.bin")).unwrap().len();

    // 153 = 128 + SIGXFSZ: the kernel stopped `head` at the limit.
    assert_eq!(
        (out.stdout.as_str(), written),
        ("workspace: 153\ntmp: 153\n", 1 << 20)
    );
}

#[tokio::test]
async fn cancel_kills_the_sandbox_and_leaves_nothing_running() {
    let fx = BwrapFixture::new();
    let marker = format!("plumb-cancel-{}", fx.token());
    let sleeper = format!("python3 -c 'import time; time.sleep(300)' {marker}");
    let script = format!("{sleeper} & {sleeper}");
    let spec = fx.spec(&["sh", "-c", &script]);
    let cancel = tokio_util::sync::CancellationToken::new();
    let canceller = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            cancel.cancel();
        })
    };

    let out = plumb_sandbox::Sandbox::run(&fx.sandbox, &spec, &cancel)
        .await
        .unwrap();
    canceller.await.unwrap();

    assert!(out.duration < Duration::from_secs(5), "{:?}", out.duration);
    assert_eq!((out.cancelled, processes_with(&marker)), (true, Vec::new()));
}

#[tokio::test]
async fn dropping_a_run_part_way_leaves_nothing_running() {
    let fx = BwrapFixture::new();
    let marker = format!("plumb-dropped-{}", fx.token());
    let sleeper = format!("python3 -c 'import time; time.sleep(300)' {marker}");
    let script = format!("{sleeper} & {sleeper}");
    let spec = fx.spec(&["sh", "-c", &script]);
    let cancel = tokio_util::sync::CancellationToken::new();

    let run = plumb_sandbox::Sandbox::run(&fx.sandbox, &spec, &cancel);
    let abandoned = tokio::time::timeout(Duration::from_millis(500), run).await;

    assert_eq!(
        (abandoned.is_err(), processes_with(&marker)),
        (true, Vec::new())
    );
}
