//! Under gVisor, timeouts and cancellation take down the whole sandbox — runsc, its gofer,
//! the sandbox process and its stubs — and nothing a command starts outlives it.

use std::time::Duration;

use plumb_sandbox::Sandbox;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::{GvisorFixture, ProcessWatch};

const TIMEOUT: Duration = Duration::from_secs(2);
/// Timeout, the grace period after the kill, and cleanup, with room for a loaded machine.
const LATEST_END: Duration = Duration::from_secs(8);

#[tokio::test]
async fn an_infinite_loop_is_killed_at_the_timeout_and_nothing_survives() {
    let fx = GvisorFixture::new().await;
    let mut spec = fx.sh("echo started; while :; do :; done");
    spec.limits.timeout = TIMEOUT;
    let watch = ProcessWatch::start(fx.marker());

    let out = fx.run(&spec).await;
    let (seen, survivors) = watch.survivors();

    assert!(seen >= 3, "only {seen} runsc processes were seen");
    assert!(out.duration < LATEST_END, "{:?}", out.duration);
    assert_eq!(
        (
            out.timed_out,
            out.stdout.as_str(),
            out.limits_hit.clone(),
            survivors,
            fx.leftovers()
        ),
        (
            true,
            "started\n",
            vec!["timeout".to_owned()],
            Vec::new(),
            Vec::new()
        ),
        "{out:#?}"
    );
}

#[tokio::test]
async fn a_process_ignoring_sigterm_is_killed() {
    let fx = GvisorFixture::new().await;
    let mut spec = fx.sh("trap '' TERM INT HUP; echo trapped; sleep 100");
    spec.limits.timeout = TIMEOUT;
    let watch = ProcessWatch::start(fx.marker());

    let out = fx.run(&spec).await;
    let (_, survivors) = watch.survivors();

    assert!(out.duration < LATEST_END, "{:?}", out.duration);
    assert_eq!(
        (
            out.timed_out,
            out.stdout.as_str(),
            survivors,
            fx.leftovers()
        ),
        (true, "trapped\n", Vec::new(), Vec::new()),
        "{out:#?}"
    );
}

#[tokio::test]
async fn a_double_forking_daemon_does_not_survive() {
    let fx = GvisorFixture::new().await;
    // The daemon leaves the session twice over and appends to `beat` ten times a second.
    let spec = fx.sh(
        "(setsid sh -c 'while :; do echo . >> beat; sleep 0.1; done' > /dev/null 2>&1 &); \
         while [ ! -s beat ]; do sleep 0.05; done; echo parent done",
    );
    let watch = ProcessWatch::start(fx.marker());

    let out = fx.run(&spec).await;
    let (_, survivors) = watch.survivors();
    let beats_after = std::fs::read_to_string(fx.work().join("beat")).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    let beats_later = std::fs::read_to_string(fx.work().join("beat")).unwrap();

    assert!(out.duration < LATEST_END, "{:?}", out.duration);
    assert_eq!(
        (
            out.exit_code,
            out.stdout.as_str(),
            beats_later.len() - beats_after.len(),
            survivors,
            fx.leftovers()
        ),
        (Some(0), "parent done\n", 0, Vec::new(), Vec::new()),
        "{out:#?}"
    );
}

#[tokio::test]
async fn cancel_kills_the_whole_sandbox() {
    let fx = GvisorFixture::new().await;
    let spec = fx.sh("sleep 100 & echo started > started; sleep 100");
    let cancel = CancellationToken::new();
    let canceller = {
        let cancel = cancel.clone();
        let started = fx.work().join("started");
        tokio::spawn(async move {
            while !started.exists() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            cancel.cancel();
        })
    };
    let watch = ProcessWatch::start(fx.marker());

    let out = fx.sandbox.run(&spec, &cancel).await.unwrap();
    tokio::time::timeout(LATEST_END, canceller)
        .await
        .expect("the command never wrote `started`")
        .unwrap();
    let (_, survivors) = watch.survivors();

    assert!(out.duration < LATEST_END, "{:?}", out.duration);
    assert_eq!(
        (out.cancelled, out.timed_out, survivors, fx.leftovers()),
        (true, false, Vec::new(), Vec::new()),
        "{out:#?}"
    );
}

#[tokio::test]
async fn output_of_100_mb_is_capped_to_the_tail() {
    let fx = GvisorFixture::new().await;
    let mut spec = fx.sh("head -c 100000000 /dev/zero | tr '\\0' x; echo; echo the end");
    spec.limits.timeout = Duration::from_secs(120);
    let cap = spec.limits.output_bytes;

    let out = fx.run(&spec).await;

    let total = 100_000_000 + "\nthe end\n".len();
    assert_eq!(
        (
            out.exit_code,
            out.stdout.len(),
            out.stdout_truncated_bytes,
            out.stdout.ends_with("xxx\nthe end\n"),
            out.limits_hit.clone(),
        ),
        (
            Some(0),
            cap,
            (total - cap) as u64,
            true,
            vec!["output cap".to_owned()]
        ),
        "{:?}",
        (out.exit_code, &out.stderr, out.duration)
    );
}
