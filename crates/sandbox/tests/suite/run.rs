//! Running a command: exit code, output, working directory, errors before the start.

use plumb_sandbox::{CommandOutput, Sandbox, SandboxKind};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::support::{Fixture, none_enforced, sh, without_duration};

#[tokio::test]
async fn reports_exit_code_and_both_streams_from_the_workdir() {
    let fx = Fixture::new();
    // `cat` would hang if stdin were inherited instead of /dev/null.
    let spec = fx.spec(&sh("cat; pwd; echo oops >&2; exit 3"));

    let actual = fx
        .sandbox
        .run(&spec, &CancellationToken::new())
        .await
        .unwrap();

    let expected = CommandOutput {
        exit_code: Some(3),
        signal: None,
        stdout: format!("{}\n", fx.root().display()),
        stderr: "oops\n".to_owned(),
        timed_out: false,
        cancelled: false,
        stdout_truncated_bytes: 0,
        stderr_truncated_bytes: 0,
        duration: std::time::Duration::ZERO,
        enforced: none_enforced(),
        limits_hit: Vec::new(),
    };
    assert_eq!(without_duration(actual), expected);
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error_that_says_what_to_do() {
    let fx = Fixture::new();
    let spec = fx.spec(&["plumb-no-such-program", "--version"]);

    let err = fx
        .sandbox
        .run(&spec, &CancellationToken::new())
        .await
        .unwrap_err();
    let actual = (err.to_string(), err.is_infra());

    let expected = (
        "could not start `plumb-no-such-program`: not found; install it or change the command"
            .to_owned(),
        false,
    );
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn bad_specs_are_refused_before_anything_runs() {
    let fx = Fixture::new();
    let empty = fx.spec(&[]);
    let mut relative = fx.spec(&["true"]);
    relative.workdir = "some/dir".into();
    let mut missing = fx.spec(&["true"]);
    missing.workdir = fx.root().join("gone");

    let mut actual = Vec::new();
    for spec in [&empty, &relative, &missing] {
        let err = fx
            .sandbox
            .run(spec, &CancellationToken::new())
            .await
            .unwrap_err();
        actual.push((err.to_string(), err.is_infra()));
    }

    let expected = vec![
        (
            "the command is empty; give at least the program to run".to_owned(),
            false,
        ),
        (
            "cannot run a command in some/dir: the path is not absolute".to_owned(),
            true,
        ),
        (
            format!(
                "cannot run a command in {}: No such file or directory (os error 2)",
                missing.workdir.display()
            ),
            true,
        ),
    ];
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn an_already_cancelled_command_never_starts() {
    let fx = Fixture::new();
    let spec = fx.spec(&sh("echo started > started.txt"));
    let cancel = CancellationToken::new();
    cancel.cancel();

    let out = fx.sandbox.run(&spec, &cancel).await.unwrap();
    let actual = (
        out.cancelled,
        out.exit_code,
        fx.root().join("started.txt").exists(),
    );

    assert_eq!(actual, (true, None, false));
}

#[test]
fn none_says_what_it_does_not_enforce() {
    let fx = Fixture::new();

    let actual = (fx.sandbox.kind(), fx.sandbox.describe());

    let expected = (
        SandboxKind::None,
        "no sandbox: commands run directly on this machine; only the time \
         limit, the output cap and the file-size limit are enforced — no memory, CPU or \
         process limits, no read-only system, and the network is open"
            .to_owned(),
    );
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn limits_at_their_maximum_do_not_overflow() {
    let fx = Fixture::new();
    let mut spec = fx.spec(&["true"]);
    spec.limits.timeout = std::time::Duration::MAX;
    spec.limits.max_file_bytes = u64::MAX;
    spec.limits.output_bytes = usize::MAX;

    let out = fx
        .sandbox
        .run(&spec, &CancellationToken::new())
        .await
        .unwrap();

    assert_eq!((out.exit_code, out.timed_out), (Some(0), false));
}
