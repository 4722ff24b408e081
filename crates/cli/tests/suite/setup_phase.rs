//! The setup phase: a command from the settings runs before the agent, its output becomes the
//! baseline (never the patch), and it gets the network only when the settings say so — the agent's
//! commands never do.

use std::io::ErrorKind;
use std::net::TcpListener;

use plumb_protocol::{Event, Outcome};
use plumb_test_support::billing_example;
use pretty_assertions::assert_eq;

use super::common::{Fixture, journal_events, report, stderr};

/// A setup script that writes a generated file and tries to reach `port` on the host.
fn setup_script(port: u16) -> String {
    format!(
        "import socket\n\
         open('generated_settings.py', 'w').write('GENERATED = True\\n')\n\
         try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('NETWORK reached')\n\
         except OSError as err:\n    print('NETWORK refused', type(err).__name__)\n"
    )
}

fn reached(listener: &TcpListener) -> bool {
    match listener.accept() {
        Ok(_) => true,
        Err(err) if err.kind() == ErrorKind::WouldBlock => false,
        Err(err) => panic!("listener: {err}"),
    }
}

/// Runs BILL-412 with the setup script; the fixture is returned so its run folder stays.
fn run_with_setup(network: bool) -> (std::process::Output, bool, Fixture) {
    let fixture = Fixture::billing();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::fs::write(fixture.repo_path().join("setup_env.py"), setup_script(port)).unwrap();
    let script = billing_example().join("bill-412.script.jsonl");
    let network_setting = format!("setup_network={network}");
    let output = fixture.fix_in_default_sandbox(
        &script,
        &[
            "-c",
            "setup_command=python3 setup_env.py",
            "-c",
            &network_setting,
        ],
    );
    let reached = reached(&listener);
    (output, reached, fixture)
}

#[test]
fn setup_output_is_baseline_not_patch_and_has_no_network_unless_allowed() {
    let (output, reached, _fixture) = run_with_setup(false);

    let report = report(&output);
    let setup_output: Vec<String> = journal_events(&report)
        .into_iter()
        .filter_map(|e| match e {
            Event::Setup {
                output, network, ..
            } => Some(format!("{network} {}", output.trim())),
            _ => None,
        })
        .collect();
    let actual = (
        output.status.code(),
        report.outcome,
        report.patch.contains("generated_settings.py"),
        reached,
        setup_output.len(),
        setup_output
            .first()
            .is_some_and(|o| o.starts_with("false NETWORK refused")),
    );
    assert_eq!(
        actual,
        (Some(0), Outcome::Success, false, false, 1, true),
        "stderr: {}",
        stderr(&output)
    );
}

#[test]
fn setup_network_is_the_one_door_and_only_the_setup_goes_through_it() {
    let (output, reached, _fixture) = run_with_setup(true);

    let report = report(&output);
    assert_eq!(
        (output.status.code(), report.outcome, reached),
        (Some(0), Outcome::Success, true),
        "stderr: {}",
        stderr(&output)
    );
}

#[test]
fn a_failing_setup_is_bad_input_that_says_what_to_change() {
    let fixture = Fixture::billing();
    let script = billing_example().join("bill-412.script.jsonl");

    let output = fixture.fix_in_default_sandbox(
        &script,
        &["-c", "setup_command=python3 -c 'raise SystemExit(4)'"],
    );

    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "the setup command `python3 -c raise SystemExit(4)` failed (exit 4); fix setup_command"
        ),
        "{err}"
    );
}
