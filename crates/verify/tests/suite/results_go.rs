//! Per-test outcomes of `go test -json`, from a hand-written fixture (`fixtures/go/README.md`:
//! go is not installed on these machines).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use plumb_protocol::TestCounts;
use plumb_verify::{
    Runner, TestOutcome, TestResults, failure_excerpt, parse_command, parse_counts, read_results,
    with_report,
};
use pretty_assertions::assert_eq;

use super::fixtures;

fn tests(entries: &[(&str, TestOutcome)]) -> BTreeMap<String, TestOutcome> {
    entries
        .iter()
        .map(|(id, outcome)| (id.to_string(), *outcome))
        .collect()
}

#[test]
fn json_events_become_per_test_outcomes() {
    let cmd = parse_command("go test ./...").unwrap();
    let (stdout, stderr) = fixtures::output("go", "json_mixed");
    let report_path = Path::new("/unused/.plumb-report/report");
    let actual = (
        with_report(&cmd, report_path),
        read_results(&cmd, report_path, SystemTime::now(), &stdout, &stderr),
        // The summary and the excerpt read `-json` output as the text go prints without it.
        parse_counts(Runner::Go, &stdout, &stderr),
        failure_excerpt(Runner::Go, &stdout, &stderr),
    );
    let expected = (
        ["go", "test", "-json", "./..."].map(String::from).to_vec(),
        Some(TestResults {
            tests: tests(&[
                ("example.com/shop/broken", TestOutcome::Error),
                ("example.com/shop/cart/TestTotal", TestOutcome::Passed),
                // The package died in TestHang: its error is the test's, not the package's too.
                ("example.com/shop/money/TestHang", TestOutcome::Error),
                ("example.com/shop/tax/TestGST", TestOutcome::Failed),
                ("example.com/shop/tax/TestGST/reduced", TestOutcome::Failed),
                ("example.com/shop/tax/TestGST/standard", TestOutcome::Passed),
                ("example.com/shop/tax/TestLater", TestOutcome::Skipped),
                ("example.com/shop/tax/TestRound", TestOutcome::Passed),
            ]),
            collected: None,
            counts: TestCounts {
                passed: 3,
                failed: 2,
                skipped: 1,
                errors: 2,
                ..TestCounts::default()
            },
        }),
        Some(TestCounts {
            passed: 2,
            failed: 1,
            skipped: 1,
            errors: 2,
            ..TestCounts::default()
        }),
        [
            "    gst_test.go:21: got 180, want 162",
            "    --- FAIL: TestGST/reduced (0.00s)",
            "--- FAIL: TestGST (0.00s)",
            "    gst_test.go:30: not yet",
            "FAIL",
            "FAIL\texample.com/shop/tax\t0.003s",
            "panic: test timed out after 2s",
            "\trunning tests:",
            "\t\tTestHang (2s)",
            "",
            "goroutine 6 [running]:",
            "FAIL\texample.com/shop/money\t2.005s",
            "# example.com/shop/broken [example.com/shop/broken.test]",
            "broken/broken.go:3:1: syntax error: non-declaration statement outside function body",
            "FAIL\texample.com/shop/broken [build failed]",
        ]
        .join("\n"),
    );
    assert_eq!(actual, expected);
}

#[test]
fn output_without_events_never_ran() {
    let cmd = parse_command("go test ./...").unwrap();
    let actual = read_results(
        &cmd,
        Path::new("/unused/.plumb-report/report"),
        SystemTime::now(),
        "",
        "go: cannot find main module, but found .git/config in /work\n",
    );
    assert_eq!(actual, None);
}
