//! Test configuration: which files and which parts of them decide what the test runner runs.
//!
//! Files that exist only to configure tests (`conftest.py`, `pytest.ini`, `tox.ini`, jest and
//! vitest configs) are flagged on any change. Shared files are flagged only when their test part
//! changed, compared as parsed values so reformatting is not a change: `pyproject.toml`'s
//! `tool.pytest`, `setup.cfg`'s `[tool:pytest]`, `Cargo.toml`'s test targets and switches,
//! `package.json`'s `jest` key and `test` script, `go.mod`'s replace directives. A shared file that
//! no longer parses is flagged when its text changed, since its test part cannot be compared.
//! So are the files a jest or vitest configuration names to run around the tests (see
//! `setup_files`).

use std::collections::HashMap;

use super::setup_files::TestSetupFiles;
use super::{TamperFlag, TamperKind};

/// The flag for one side-by-side look at a file; `None` on a side where the file is absent.
/// `setup` names the files a jest or vitest configuration runs around the tests.
pub(super) fn check(
    path: &str,
    before: Option<&str>,
    after: Option<&str>,
    setup: &TestSetupFiles,
) -> Option<TamperFlag> {
    if before.is_none() && after.is_none() {
        return None;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let what = match name {
        "conftest.py" => conftest(before, after),
        "pytest.ini" | ".pytest.ini" | "pytest.toml" | ".pytest.toml" | "tox.ini" => {
            whole_file(before, after).map(|verb| format!("the test configuration file was {verb}"))
        }
        _ if name.starts_with("jest.config.")
            || name.starts_with("vitest.config.")
            || name.starts_with("vitest.workspace.") =>
        {
            whole_file(before, after).map(|verb| format!("the test configuration file was {verb}"))
        }
        "pyproject.toml" => pyproject(before, after),
        "setup.cfg" => setup_cfg(before, after),
        "Cargo.toml" => cargo_toml(before, after),
        "package.json" => package_json(before, after),
        "go.mod" => go_mod(before, after),
        _ => setup.find(path).and_then(|named| {
            whole_file(before, after).map(|verb| {
                format!(
                    "a file that {} names in {} (run around the tests) was {verb}",
                    super::hidden::shown(&named.named_by),
                    named.key
                )
            })
        }),
    }?;
    Some(TamperFlag {
        kind: TamperKind::TestConfigChanged,
        path: path.to_string(),
        line: None,
        detail: format!("{}: {what}", super::hidden::shown(path)),
    })
}

/// "added", "deleted" or "changed"; `None` when the text is the same.
pub(super) fn whole_file(before: Option<&str>, after: Option<&str>) -> Option<&'static str> {
    match (before, after) {
        (None, Some(_)) => Some("added"),
        (Some(_), None) => Some("deleted"),
        (Some(before), Some(after)) if before != after => Some("changed"),
        _ => None,
    }
}

/// Hooks and statements in a conftest.py that can change which tests run or what their outcome
/// reads as, named in the flag so a person looks at them first.
const CONFTEST_RISKS: &[(&str, &str)] = &[
    (
        "def pytest_collection_modifyitems",
        "defines pytest_collection_modifyitems",
    ),
    ("def pytest_ignore_collect", "defines pytest_ignore_collect"),
    (
        "def pytest_runtest_makereport",
        "defines pytest_runtest_makereport",
    ),
    (
        "def pytest_runtest_protocol",
        "defines pytest_runtest_protocol",
    ),
    ("def pytest_runtest_call", "defines pytest_runtest_call"),
    ("def pytest_pyfunc_call", "defines pytest_pyfunc_call"),
    (
        "def pytest_report_teststatus",
        "defines pytest_report_teststatus",
    ),
    ("def pytest_sessionfinish", "defines pytest_sessionfinish"),
    ("collect_ignore", "sets collect_ignore"),
    ("os._exit", "calls os._exit"),
    ("sys.exit", "calls sys.exit"),
];

/// A conftest.py is flagged on any change (even a reformat: it is code that runs in every test
/// session); the sentence names the risky hooks the new text has.
fn conftest(before: Option<&str>, after: Option<&str>) -> Option<String> {
    let verb = whole_file(before, after)?;
    let risks: Vec<&str> = after
        .map(|text| {
            CONFTEST_RISKS
                .iter()
                .filter(|(pattern, _)| text.contains(pattern))
                .map(|(_, label)| *label)
                .collect()
        })
        .unwrap_or_default();
    Some(match risks.as_slice() {
        [] => format!("a conftest.py was {verb}"),
        [one] => format!("a conftest.py was {verb}; it {one}"),
        [init @ .., last] => format!(
            "a conftest.py was {verb}; it {} and {last}",
            init.join(", ")
        ),
    })
}

/// Compares the test part of a file on both sides: `part` turns a text into a comparable value
/// (`Err` when it does not parse; `Ok(None)` when the part is absent).
pub(super) fn compare_part<T: PartialEq>(
    before: Option<&str>,
    after: Option<&str>,
    part: impl Fn(&str) -> Result<Option<T>, ()>,
    name: &str,
) -> Option<String> {
    let parsed_before = before.map(&part).transpose();
    let parsed_after = after.map(&part).transpose();
    let (Ok(before_part), Ok(after_part)) = (parsed_before, parsed_after) else {
        // One side does not parse: any edit may have changed the test part.
        return (before != after).then(|| {
            format!("the file does not parse, so a change to {name} cannot be ruled out")
        });
    };
    match (before_part.flatten(), after_part.flatten()) {
        (None, None) => None,
        (None, Some(_)) => Some(format!("{name} were added")),
        (Some(_), None) => Some(format!("{name} were removed")),
        (Some(old), Some(new)) => (old != new).then(|| format!("{name} were changed")),
    }
}

pub(super) fn parse_toml(text: &str) -> Result<toml::Table, ()> {
    text.parse::<toml::Table>().map_err(|_| ())
}

fn pyproject(before: Option<&str>, after: Option<&str>) -> Option<String> {
    compare_part(
        before,
        after,
        |text| {
            let table = parse_toml(text)?;
            Ok(table
                .get("tool")
                .and_then(|tool| tool.get("pytest"))
                .cloned())
        },
        "the [tool.pytest] settings",
    )
}

/// The `[tool:pytest]` section of an INI file as its meaningful lines (comments and blank lines
/// dropped, whitespace trimmed).
fn setup_cfg(before: Option<&str>, after: Option<&str>) -> Option<String> {
    compare_part(
        before,
        after,
        |text| Ok(ini_section(text, "tool:pytest")),
        "the [tool:pytest] settings",
    )
}

fn ini_section(text: &str, wanted: &str) -> Option<Vec<String>> {
    let mut section: Option<Vec<String>> = None;
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if let Some(header) = line
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            inside = header.trim() == wanted;
            if inside {
                section.get_or_insert_with(Vec::new);
            }
        } else if inside && !line.is_empty() && !line.starts_with(['#', ';']) {
            section.get_or_insert_with(Vec::new).push(line.to_string());
        }
    }
    section
}

/// The parts of a Cargo manifest that decide which tests exist and how they run.
fn cargo_toml(before: Option<&str>, after: Option<&str>) -> Option<String> {
    const SWITCHES: &[&str] = &["test", "harness", "doctest"];
    compare_part(
        before,
        after,
        |text| {
            let table = parse_toml(text)?;
            let switches = |target: &toml::Value| -> Vec<Option<toml::Value>> {
                SWITCHES
                    .iter()
                    .map(|key| target.get(key).cloned())
                    .chain([target.get("name").cloned()])
                    .collect()
            };
            let part = (
                table.get("test").cloned(),
                table.get("lib").map(switches),
                table
                    .get("bin")
                    .and_then(toml::Value::as_array)
                    .map(|bins| bins.iter().map(switches).collect::<Vec<_>>()),
                table
                    .get("package")
                    .and_then(|package| package.get("autotests"))
                    .cloned(),
            );
            Ok((part != (None, None, None, None)).then_some(part))
        },
        "the test targets ([[test]], test/harness/doctest switches, autotests)",
    )
}

/// `package.json`'s `jest` settings and its `test` script (what `npm test` runs).
fn package_json(before: Option<&str>, after: Option<&str>) -> Option<String> {
    compare_part(
        before,
        after,
        |text| {
            let value: serde_json::Value = serde_json::from_str(text).map_err(|_| ())?;
            let part = (
                value.get("jest").cloned(),
                value.pointer("/scripts/test").cloned(),
            );
            Ok((part != (None, None)).then_some(part))
        },
        "the jest settings or the test script",
    )
}

/// `go.mod` replace directives, which can point a dependency at a local stand-in. Reports the
/// directives added and removed.
fn go_mod(before: Option<&str>, after: Option<&str>) -> Option<String> {
    let old = replace_directives(before.unwrap_or_default());
    let new = replace_directives(after.unwrap_or_default());
    let added = multiset_minus(&new, &old);
    let removed = multiset_minus(&old, &new);
    let mut parts = Vec::new();
    if !added.is_empty() {
        parts.push(format!("adds `{}`", added.join("`, `")));
    }
    if !removed.is_empty() {
        parts.push(format!("removes `{}`", removed.join("`, `")));
    }
    (!parts.is_empty()).then(|| format!("the replace directives changed ({})", parts.join("; ")))
}

fn replace_directives(text: &str) -> Vec<String> {
    let mut directives = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or_default().trim();
        if in_block {
            if line.starts_with(')') {
                in_block = false;
            } else if !line.is_empty() {
                directives.push(line.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        } else if let Some(rest) = line.strip_prefix("replace") {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
            } else if !rest.is_empty() && line.starts_with("replace ") {
                directives.push(rest.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
    }
    directives
}

/// The items of `left` not matched by an equal item of `right`, in `left`'s order.
fn multiset_minus(left: &[String], right: &[String]) -> Vec<String> {
    let mut remaining: HashMap<&str, usize> = HashMap::new();
    for item in right {
        *remaining.entry(item).or_default() += 1;
    }
    left.iter()
        .filter(|item| match remaining.get_mut(item.as_str()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}
