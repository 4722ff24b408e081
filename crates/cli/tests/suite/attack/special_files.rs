//! Links, FIFOs, sockets and devices made by the agent's own test run, then met by every tool and
//! by the ladder: each is refused (never opened: a FIFO would block the harness for ever), the run
//! goes on to its end, and nothing from outside reaches what plumb writes.

use plumb_protocol::Outcome;
use plumb_test_support::Script;
use serde_json::json;

use super::support::{Outside, fix_within, repo_with, tool_outputs};
use crate::suite::common::report;

/// A pytest file that makes a link out, a FIFO, a socket and (as root, without a sandbox) a
/// device, then passes.
fn maker(outside: &Outside, device: bool) -> String {
    let secret = outside.secret().display().to_string();
    let device_line = if device {
        "    os.mknod('billing/device.py', 0o600 | stat.S_IFCHR, os.makedev(1, 3))\n"
    } else {
        ""
    };
    format!(
        "import os, socket, stat\n\n\ndef test_make():\n    os.symlink('{secret}', 'billing/linked.py')\n    os.mkfifo('billing/pipe.py')\n    s = socket.socket(socket.AF_UNIX)\n    s.bind('billing/sock.py')\n{device_line}"
    )
}

/// The calls a fooled model makes on each special file.
fn visits(script: Script, names: &[&str]) -> Script {
    let mut script = script;
    for name in names {
        let path = format!("billing/{name}");
        script = script
            .tool("read_file", json!({"path": path}))
            .tool(
                "edit_file",
                json!({"path": path, "old_text": "a", "new_text": "b"}),
            )
            .tool("list_files", json!({"path": path}))
            .tool("search_code", json!({"query": "a", "path": path}));
    }
    script
        .tool("list_files", json!({}))
        .tool("search_code", json!({"query": "PLUMB-CANARY"}))
        .tool("done", json!({"summary": "x"}))
}

fn attack(sandbox: &str, device: bool) {
    let outside = Outside::new();
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let mut names = vec!["linked.py", "pipe.py", "sock.py"];
    if device {
        names.push("device.py");
    }
    let script = visits(
        Script::new()
            .tool(
                "create_file",
                json!({"path": "tests/test_make.py", "content": maker(&outside, device)}),
            )
            .tool("run_tests", json!({"tests": ["tests/test_make.py"]})),
        &names,
    );
    let output = fix_within(
        180,
        repo.path(),
        home.path(),
        script,
        &["--sandbox", sandbox, "-c", "limits.max_rounds=40"],
    );
    let report = report(&output);
    let made = tool_outputs(&report, "run_tests");
    assert!(
        made.first().is_some_and(|out| out.contains("1 passed")),
        "the test did not make the files: {made:?}"
    );
    let reads = tool_outputs(&report, "read_file");
    assert_eq!(reads.len(), names.len(), "{reads:?}");
    for (name, out) in names.iter().zip(&reads) {
        assert!(
            out.contains("not a regular file") || out.contains("inside the project folder"),
            "read_file {name}: {out}"
        );
    }
    let edits = tool_outputs(&report, "edit_file");
    assert!(
        edits.iter().all(|out| !out.starts_with("Edited")),
        "{edits:?}"
    );
    assert_ne!(report.outcome, Outcome::Success);
    assert_ne!(report.outcome, Outcome::InfraError, "{:?}", report.reason);
    outside.assert_untouched(home.path(), &output);
}

#[test]
fn behind_bwrap_links_fifos_and_sockets_a_test_made_are_refused_by_every_tool() {
    attack("bwrap", false);
}

#[test]
fn without_a_sandbox_a_device_a_test_made_is_refused_too() {
    assert!(
        rustix_is_root(),
        "this test makes a device node and must run as root (CI does)"
    );
    attack("none", true);
}

fn rustix_is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}
