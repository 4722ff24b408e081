//! The output cap and the rlimits the `none` backend applies.

use plumb_sandbox::Sandbox;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::support::{Fixture, sh};

/// What a capped stream looked like, without printing a megabyte on failure.
#[derive(Debug, PartialEq)]
struct Capped {
    kept_bytes: usize,
    truncated_bytes: u64,
    tail_matches: bool,
    last_line: String,
}

#[tokio::test]
async fn big_output_keeps_the_tail_and_counts_what_was_dropped() {
    let fx = Fixture::new();
    // About 6.9 MB on each stream, written at the same time.
    let spec = fx.spec(&sh("seq 1 1000000 >&2 & seq 1 1000000; wait"));
    let cap = spec.limits.output_bytes;
    let full: String = (1..=1_000_000).map(|n| format!("{n}\n")).collect();
    let expected_tail = &full.as_bytes()[full.len() - cap..];

    let out = fx
        .sandbox
        .run(&spec, &CancellationToken::new())
        .await
        .unwrap();
    let capped = |text: &str, truncated: u64| Capped {
        kept_bytes: text.len(),
        truncated_bytes: truncated,
        tail_matches: text.as_bytes() == expected_tail,
        last_line: text.lines().last().unwrap_or("").to_owned(),
    };
    let actual = (
        out.exit_code,
        capped(&out.stdout, out.stdout_truncated_bytes),
        capped(&out.stderr, out.stderr_truncated_bytes),
        out.limits_hit,
    );

    let expected_stream = || Capped {
        kept_bytes: cap,
        truncated_bytes: (full.len() - cap) as u64,
        tail_matches: true,
        last_line: "1000000".to_owned(),
    };
    assert_eq!(
        actual,
        (
            Some(0),
            expected_stream(),
            expected_stream(),
            vec!["output cap".to_owned()]
        )
    );
}

#[tokio::test]
async fn file_size_limit_stops_a_big_write() {
    let fx = Fixture::new();
    let mut spec = fx.spec(&sh(
        "head -c 5000000 /dev/zero > big.bin; echo \"head exited $?\"",
    ));
    spec.limits.max_file_bytes = 1 << 20;

    let out = fx
        .sandbox
        .run(&spec, &CancellationToken::new())
        .await
        .unwrap();
    let written = std::fs::metadata(fx.root().join("big.bin")).unwrap().len();

    // 153 = 128 + SIGXFSZ: the kernel stopped `head` at the limit.
    let actual = (out.exit_code, out.stdout, written);
    assert_eq!(actual, (Some(0), "head exited 153\n".to_owned(), 1 << 20));
}

#[tokio::test]
async fn rlimits_are_set_as_hard_limits() {
    let fx = Fixture::new();
    let mut spec = fx.spec(&sh("ulimit -c; ulimit -H -c; ulimit -f; ulimit -H -f"));
    spec.limits.max_file_bytes = 1 << 20;

    let out = fx
        .sandbox
        .run(&spec, &CancellationToken::new())
        .await
        .unwrap();

    // `ulimit -f` counts 512-byte blocks: 1 MiB is 2048.
    assert_eq!(out.stdout, "0\n0\n2048\n2048\n");
}
