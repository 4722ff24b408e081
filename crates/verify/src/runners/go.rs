//! go test: package lines (`ok`, `FAIL`, `?`) and, with `-v`, per-test `--- PASS/FAIL/SKIP` lines.
//!
//! With `-v` (any `=== RUN`, `--- PASS` or `--- SKIP` line) the top-level tests are counted;
//! subtests are left to the per-test outcomes. Without it only packages can be counted: a package
//! that passed is one passed, one that failed is one failed. A package that did not build is an
//! error either way, and so is a failed package with no failed test (a panic, a timeout).

use plumb_protocol::TestCounts;

use crate::output;

/// What one package line of `go test` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Package {
    Passed,
    Failed,
    /// `[build failed]`, `[setup failed]`.
    Broken,
    /// `[no test files]`, `[no tests to run]`.
    NoTests,
}

pub(crate) fn counts(text: &str) -> Option<TestCounts> {
    let mut tests = TestCounts::default();
    let mut packages = TestCounts::default();
    let mut verbose = false;
    let mut found = false;
    let mut failed_test_in_package = false;
    for line in text.lines() {
        let top_level = !line.starts_with([' ', '\t']);
        let trimmed = line.trim_start();
        if trimmed.starts_with("=== RUN") {
            verbose = true;
            continue;
        }
        if let Some(result) = trimmed.strip_prefix("--- ") {
            let counted = match result.split(':').next() {
                Some("PASS") => {
                    verbose = true;
                    &mut tests.passed
                }
                Some("SKIP") => {
                    verbose = true;
                    &mut tests.skipped
                }
                Some("FAIL") => {
                    failed_test_in_package = true;
                    &mut tests.failed
                }
                _ => continue,
            };
            if top_level {
                *counted += 1;
            }
            found = true;
            continue;
        }
        let Some(package) = package_line(line) else {
            continue;
        };
        found = true;
        match package {
            Package::Passed => packages.passed += 1,
            Package::NoTests => {}
            Package::Failed => {
                packages.failed += 1;
                if !failed_test_in_package {
                    tests.errors += 1;
                }
            }
            Package::Broken => {
                packages.errors += 1;
                tests.errors += 1;
            }
        }
        failed_test_in_package = false;
    }
    if !found {
        return None;
    }
    Some(if verbose { tests } else { packages })
}

/// Go prints `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`, `FAIL\tpkg [build failed]` and
/// `?   \tpkg\t[no test files]`, always with these tabs.
fn package_line(line: &str) -> Option<Package> {
    if let Some(rest) = line.strip_prefix("ok  \t") {
        return Some(if rest.contains("[no tests to run]") {
            Package::NoTests
        } else {
            Package::Passed
        });
    }
    if line.starts_with("?   \t") {
        return Some(Package::NoTests);
    }
    let rest = line.strip_prefix("FAIL\t")?;
    Some(
        if rest.contains("[build failed]") || rest.contains("[setup failed]") {
            Package::Broken
        } else {
            Package::Failed
        },
    )
}

/// The output without what passed: no `=== RUN`, `--- PASS`, `--- SKIP`, `ok` or `?` lines.
pub(crate) fn excerpt(stdout: &str, stderr: &str) -> String {
    let text = output::joined(stdout, stderr);
    let kept: Vec<&str> = text.lines().filter(|line| !is_noise(line)).collect();
    output::tail(&kept.join("\n"))
}

fn is_noise(line: &str) -> bool {
    let trimmed = line.trim_start();
    [
        "=== RUN",
        "=== PAUSE",
        "=== CONT",
        "=== NAME",
        "--- PASS",
        "--- SKIP",
    ]
    .iter()
    .any(|prefix| trimmed.starts_with(prefix))
        || line.starts_with("ok  \t")
        || line.starts_with("?   \t")
        || line == "PASS"
}

/// `-run` with the names anchored: `^(TestA|TestB)$`. Go splits the pattern at `/` into one
/// pattern per subtest level, so a single `TestA/case` becomes `^(TestA)$/^(case)$`; with several
/// ids only their top-level names are used, which runs a few more tests than asked, never fewer.
pub(crate) fn narrow(argv: &[String], tests: &[String]) -> Vec<String> {
    let pattern = match tests {
        [single] => single
            .split('/')
            .map(|level| format!("^({})$", escape(level)))
            .collect::<Vec<_>>()
            .join("/"),
        _ => {
            let mut names: Vec<String> = Vec::new();
            for test in tests {
                let name = escape(test.split('/').next().unwrap_or(test));
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            format!("^({})$", names.join("|"))
        }
    };
    let mut argv = argv.to_vec();
    argv.push("-run".to_string());
    argv.push(pattern);
    argv
}

fn escape(name: &str) -> String {
    let mut escaped = String::with_capacity(name.len());
    for c in name.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    #[test]
    fn narrows_with_an_anchored_run_pattern() {
        let actual = [
            narrow(&words("go test ./..."), &words("TestA TestB TestA/sub")),
            narrow(&words("go test ./..."), &words("TestA/with_case")),
            narrow(&words("go test ./..."), &words("TestX.y")),
        ];
        let expected = [
            words("go test ./... -run ^(TestA|TestB)$"),
            words("go test ./... -run ^(TestA)$/^(with_case)$"),
            words("go test ./... -run ^(TestX\\.y)$"),
        ];
        assert_eq!(actual, expected);
    }
}
