//! cargo test: libtest's `test result:` lines (one per test binary and for the doc-tests, summed),
//! its `failures:` blocks, narrowing by name filter.

use plumb_protocol::TestCounts;

use crate::output;

/// Cargo's own progress words on stderr, which say nothing about failures.
const CARGO_STATUS: &[&str] = &[
    "Compiling",
    "Checking",
    "Finished",
    "Running",
    "Doc-tests",
    "Downloading",
    "Downloaded",
    "Updating",
    "Locking",
    "Adding",
    "Blocking",
    "Fresh",
];

/// Sums every `test result: ok. 3 passed; 1 failed; 2 ignored; 0 measured; 1 filtered out` line:
/// ignored tests count as skipped, filtered-out ones as deselected.
pub(crate) fn counts(text: &str) -> Option<TestCounts> {
    let mut counts = TestCounts::default();
    let mut found = false;
    for line in text.lines() {
        let Some(result) = line.trim().strip_prefix("test result: ") else {
            continue;
        };
        let Some((_status, numbers)) = result.split_once(". ") else {
            continue;
        };
        found = true;
        for part in numbers.split("; ") {
            match output::count_and_word(part) {
                Some((count, "passed")) => counts.passed += count,
                Some((count, "failed")) => counts.failed += count,
                Some((count, "ignored")) => counts.skipped += count,
                Some((count, "filtered out")) => counts.deselected += count,
                Some(_) | None => {}
            }
        }
    }
    found.then_some(counts)
}

/// Each `failures:` block up to its `test result:` line; without any (a build error, a crash),
/// the last lines of stderr without cargo's progress lines, after stdout.
pub(crate) fn excerpt(stdout: &str, stderr: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut inside = false;
    for line in stdout.lines() {
        if !inside && line.trim_end() == "failures:" {
            inside = true;
        }
        if inside {
            kept.push(line);
            if line.starts_with("test result:") {
                inside = false;
            }
        }
    }
    if !kept.is_empty() {
        return kept.join("\n");
    }
    let stderr: Vec<&str> = stderr
        .lines()
        .filter(|line| !is_cargo_status(line))
        .collect();
    output::tail(&output::joined(stdout, &stderr.join("\n")))
}

fn is_cargo_status(line: &str) -> bool {
    let word = line.trim_start().split(' ').next().unwrap_or("");
    line.starts_with(' ') && CARGO_STATUS.contains(&word)
}

/// One test: the filter right after `cargo test`; several: after `--`, where libtest takes any
/// number of filters.
pub(crate) fn narrow(argv: &[String], program: usize, tests: &[String]) -> Vec<String> {
    let mut argv = argv.to_vec();
    let subcommand = argv
        .iter()
        .enumerate()
        .skip(program + 1)
        .find(|(_, word)| *word == "test")
        .map(|(at, _)| at);
    match (tests, subcommand) {
        ([test], Some(at)) => argv.insert(at + 1, test.clone()),
        _ => {
            if !argv.iter().any(|word| word == "--") {
                argv.push("--".to_string());
            }
            argv.extend(tests.iter().cloned());
        }
    }
    argv
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    #[test]
    fn narrows_one_or_several() {
        let actual = [
            narrow(
                &words("cargo test --workspace"),
                0,
                &words("parser::tests::eof"),
            ),
            narrow(&words("cargo test"), 0, &words("a b")),
            narrow(&words("cargo test -- --test-threads 1"), 0, &words("a b")),
        ];
        let expected = [
            words("cargo test parser::tests::eof --workspace"),
            words("cargo test -- a b"),
            words("cargo test -- --test-threads 1 a b"),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn status_lines() {
        let actual = [
            is_cargo_status("   Compiling demo v0.1.0 (/tmp/demo)"),
            is_cargo_status("     Running unittests src/lib.rs"),
            is_cargo_status("error: could not compile `demo`"),
            is_cargo_status("Running my own thing"),
        ];
        assert_eq!(actual, [true, true, false, false]);
    }
}
