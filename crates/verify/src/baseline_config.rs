//! The test configuration the check ladder judges with: the baseline's, whatever the agent
//! changed, so that a fix must pass on tests the agent could not reconfigure (a new conftest.py
//! whose hook reports every test as passed, a `-p plugin` added to pytest.ini, …). The changed
//! configuration itself stays a tamper flag for a person.
//!
//! For each changed file the tamper scan counts as test configuration
//! ([`crate::tamper::is_test_config_change`], one notion of "test configuration" for both),
//! [`baseline_test_config`] says what the file must hold in the tree the ladder's test steps run
//! in. A file that only configures tests (conftest.py at any depth, pytest.ini, tox.ini, jest and
//! vitest configs, the setup files they name, and any other the scan names and this module does
//! not know) is as at the baseline, or absent when it is new. A shared file keeps the agent's other changes (a fix may
//! need a new dependency) and gets the baseline's test part: pyproject.toml's `[tool.pytest]`,
//! setup.cfg's `[tool:pytest]`, Cargo.toml's test targets and switches, package.json's `jest` and
//! `scripts.test`, go.mod's replace directives. A shared file that does not parse on either side
//! is taken whole from the baseline. A TOML or JSON file is written anew (keys sorted, comments
//! left out): it is read by the test runner only, never shown or kept. Nothing here reads or
//! writes files.

use crate::tamper::{TestSetupFiles, is_test_config_change};

/// What one changed file must be in the tree the ladder judges the tests in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JudgedFile {
    /// As the agent left it: not test configuration, or its test part is unchanged.
    Keep,
    /// This text (the baseline's file, or the agent's with the baseline's test part).
    Write(String),
    /// Absent: a test configuration file the agent added.
    Remove,
}

/// What `path` (relative, with `/`) must hold so that the tests run with the baseline's test
/// configuration, given its text at the baseline (`before`) and now (`after`), `None` where
/// the file is absent. For a rename, ask once for the old path (`after` = `None`) and once for
/// the new one (`before` = `None`).
pub fn baseline_test_config(
    path: &str,
    before: Option<&str>,
    after: Option<&str>,
    setup: &TestSetupFiles,
) -> JudgedFile {
    if !is_test_config_change(path, before, after, setup) {
        return JudgedFile::Keep;
    }
    let Some(after) = after else {
        return whole(before);
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    let spliced = match name {
        "pyproject.toml" => pyproject(before, after),
        "setup.cfg" => Some(ini_with_section(before, after, "tool:pytest")),
        "Cargo.toml" => cargo_toml(before, after),
        "package.json" => package_json(before, after),
        "go.mod" => Some(go_mod(before, after)),
        _ => None,
    };
    match spliced {
        Some(text) => JudgedFile::Write(text),
        None => whole(before),
    }
}

/// The baseline's file, or none.
fn whole(before: Option<&str>) -> JudgedFile {
    match before {
        Some(text) => JudgedFile::Write(text.to_string()),
        None => JudgedFile::Remove,
    }
}

fn parse_toml(text: Option<&str>) -> Option<toml::Table> {
    text.unwrap_or_default().parse::<toml::Table>().ok()
}

/// `after` with `[tool.pytest]` (and its `ini_options`) as in `before`.
fn pyproject(before: Option<&str>, after: &str) -> Option<String> {
    let old = parse_toml(before)?;
    let mut new = parse_toml(Some(after))?;
    let old_part = old.get("tool").and_then(|tool| tool.get("pytest")).cloned();
    let tool = new
        .entry("tool")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let tool = tool.as_table_mut()?;
    match old_part {
        Some(part) => {
            tool.insert("pytest".to_string(), part);
        }
        None => {
            tool.remove("pytest");
        }
    }
    if tool.is_empty() {
        new.remove("tool");
    }
    Some(new.to_string())
}

/// The keys of a Cargo target that decide whether and how its tests run (as the tamper scan
/// compares them).
const CARGO_SWITCHES: &[&str] = &["test", "harness", "doctest", "name"];

/// `after` with the baseline's `[[test]]` targets, `[lib]` and `[[bin]]` test switches and
/// `package.autotests`.
fn cargo_toml(before: Option<&str>, after: &str) -> Option<String> {
    let old = parse_toml(before)?;
    let mut new = parse_toml(Some(after))?;
    set_or_remove(&mut new, "test", old.get("test").cloned());
    let old_lib = old.get("lib").and_then(toml::Value::as_table);
    if old_lib.is_some() || new.contains_key("lib") {
        let lib = new
            .entry("lib")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()?;
        for key in CARGO_SWITCHES {
            set_or_remove(lib, key, old_lib.and_then(|t| t.get(*key)).cloned());
        }
    }
    let old_bins: Vec<&toml::Table> = old
        .get("bin")
        .and_then(toml::Value::as_array)
        .map(|bins| bins.iter().filter_map(toml::Value::as_table).collect())
        .unwrap_or_default();
    if let Some(bins) = new.get_mut("bin").and_then(toml::Value::as_array_mut) {
        for bin in bins.iter_mut().filter_map(toml::Value::as_table_mut) {
            let same = old_bins
                .iter()
                .find(|old| old.get("name").is_some() && old.get("name") == bin.get("name"));
            // The name stays: it is what matched the baseline's target.
            for key in CARGO_SWITCHES.iter().filter(|key| **key != "name") {
                set_or_remove(bin, key, same.and_then(|t| t.get(*key)).cloned());
            }
        }
    }
    let old_autotests = old
        .get("package")
        .and_then(|package| package.get("autotests"))
        .cloned();
    if let Some(package) = new.get_mut("package").and_then(toml::Value::as_table_mut) {
        set_or_remove(package, "autotests", old_autotests);
    }
    Some(new.to_string())
}

fn set_or_remove(table: &mut toml::Table, key: &str, value: Option<toml::Value>) {
    match value {
        Some(value) => {
            table.insert(key.to_string(), value);
        }
        None => {
            table.remove(key);
        }
    }
}

/// `after` with the baseline's `jest` settings and `scripts.test`.
fn package_json(before: Option<&str>, after: &str) -> Option<String> {
    let old: serde_json::Value = match before {
        Some(text) => serde_json::from_str(text).ok()?,
        None => serde_json::Value::Object(serde_json::Map::new()),
    };
    let mut new: serde_json::Value = serde_json::from_str(after).ok()?;
    let object = new.as_object_mut()?;
    match old.get("jest") {
        Some(jest) => {
            object.insert("jest".to_string(), jest.clone());
        }
        None => {
            object.remove("jest");
        }
    }
    let old_test = old.pointer("/scripts/test").cloned();
    match (
        object.get_mut("scripts").and_then(|s| s.as_object_mut()),
        old_test,
    ) {
        (Some(scripts), Some(test)) => {
            scripts.insert("test".to_string(), test);
        }
        (Some(scripts), None) => {
            scripts.remove("test");
        }
        (None, Some(test)) => {
            let mut scripts = serde_json::Map::new();
            scripts.insert("test".to_string(), test);
            object.insert("scripts".to_string(), serde_json::Value::Object(scripts));
        }
        (None, None) => {}
    }
    serde_json::to_string_pretty(&new)
        .ok()
        .map(|text| text + "\n")
}

/// `after` without its `[wanted]` section, then the baseline's `[wanted]` section as it was.
fn ini_with_section(before: Option<&str>, after: &str, wanted: &str) -> String {
    let (mut kept, _) = split_section(after, wanted);
    let (_, section) = split_section(before.unwrap_or_default(), wanted);
    if !section.is_empty() {
        if kept.last().is_some_and(|line| !line.trim().is_empty()) {
            kept.push("");
        }
        kept.extend(section);
    }
    lines_to_text(&kept)
}

/// The lines outside every `[wanted]` section, and those inside (headers included).
fn split_section<'a>(text: &'a str, wanted: &str) -> (Vec<&'a str>, Vec<&'a str>) {
    let mut outside = Vec::new();
    let mut inside = Vec::new();
    let mut in_wanted = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(header) = trimmed
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            in_wanted = header.trim() == wanted;
        }
        if in_wanted {
            inside.push(line);
        } else {
            outside.push(line);
        }
    }
    (outside, inside)
}

fn lines_to_text(lines: &[&str]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// `after` without its replace directives, then the baseline's, as they were.
fn go_mod(before: Option<&str>, after: &str) -> String {
    let (mut kept, _) = split_replace(after);
    let (_, replaces) = split_replace(before.unwrap_or_default());
    if !replaces.is_empty() {
        if kept.last().is_some_and(|line| !line.trim().is_empty()) {
            kept.push("");
        }
        kept.extend(replaces);
    }
    lines_to_text(&kept)
}

/// The lines of a go.mod outside its replace directives (single lines and `replace ( … )`
/// blocks), and those of the directives.
fn split_replace(text: &str) -> (Vec<&str>, Vec<&str>) {
    let mut outside = Vec::new();
    let mut replaces = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default().trim();
        if in_block {
            replaces.push(line);
            if code.starts_with(')') {
                in_block = false;
            }
        } else if code == "replace (" || code == "replace(" {
            replaces.push(line);
            in_block = true;
        } else if code.starts_with("replace ") {
            replaces.push(line);
        } else {
            outside.push(line);
        }
    }
    (outside, replaces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn judged(path: &str, before: Option<&str>, after: Option<&str>) -> JudgedFile {
        baseline_test_config(path, before, after, &TestSetupFiles::default())
    }

    #[test]
    fn files_that_only_configure_tests_are_the_baselines() {
        let actual = [
            judged(
                "tests/deep/conftest.py",
                None,
                Some("def pytest_runtest_makereport(): pass\n"),
            ),
            judged("conftest.py", Some("import pytest\n"), Some("import os\n")),
            judged(
                "pytest.ini",
                Some("[pytest]\naddopts = -q\n"),
                Some("[pytest]\naddopts = -q -p evil\n"),
            ),
            judged(
                "tests/pytest.ini",
                None,
                Some("[pytest]\naddopts = -p evil\n"),
            ),
            judged("tox.ini", Some("[pytest]\n"), None),
            judged(
                "jest.config.js",
                Some("module.exports = {};\n"),
                Some("module.exports = {setupFiles: ['x']};\n"),
            ),
            judged("billing/tax.py", Some("a = 1\n"), Some("a = 2\n")),
            judged("conftest.py", Some("same\n"), Some("same\n")),
        ];
        let expected = [
            JudgedFile::Remove,
            JudgedFile::Write("import pytest\n".to_string()),
            JudgedFile::Write("[pytest]\naddopts = -q\n".to_string()),
            JudgedFile::Remove,
            JudgedFile::Write("[pytest]\n".to_string()),
            JudgedFile::Write("module.exports = {};\n".to_string()),
            JudgedFile::Keep,
            JudgedFile::Keep,
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn pyproject_keeps_the_agents_other_changes_and_gets_the_baselines_pytest_settings() {
        let before = "[project]\nname = \"billing\"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        let after = "[project]\nname = \"billing\"\ndependencies = [\"money\"]\n\n[tool.pytest.ini_options]\naddopts = \"-q -p evil\"\n";
        let added = "[project]\nname = \"billing\"\n\n[tool.pytest.ini_options]\naddopts = \"-p evil\"\n\n[tool.ruff]\nline-length = 99\n";
        let actual = [
            judged("pyproject.toml", Some(before), Some(after)),
            judged("sub/pyproject.toml", None, Some(added)),
            judged("pyproject.toml", Some(before), Some("[project\nbroken")),
        ];
        let expected = [
            JudgedFile::Write(
                "[project]\ndependencies = [\"money\"]\nname = \"billing\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n".to_string(),
            ),
            JudgedFile::Write(
                "[project]\nname = \"billing\"\n\n[tool.ruff]\nline-length = 99\n".to_string(),
            ),
            JudgedFile::Write(before.to_string()),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn setup_cfg_gets_the_baselines_pytest_section() {
        let before = "[metadata]\nname = billing\n\n[tool:pytest]\naddopts = -q\n";
        let after = "[metadata]\nname = billing\nversion = 2\n\n[tool:pytest]\naddopts = -q -p evil\n\n[flake8]\nmax-line-length = 99\n";
        let actual = [
            judged("setup.cfg", Some(before), Some(after)),
            judged(
                "setup.cfg",
                Some("[metadata]\nname = b\n"),
                Some("[metadata]\nname = b\n[tool:pytest]\naddopts = -p evil\n"),
            ),
        ];
        let expected = [
            JudgedFile::Write(
                "[metadata]\nname = billing\nversion = 2\n\n[flake8]\nmax-line-length = 99\n\n[tool:pytest]\naddopts = -q\n".to_string(),
            ),
            JudgedFile::Write("[metadata]\nname = b\n".to_string()),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn cargo_toml_keeps_new_dependencies_and_gets_the_baselines_test_targets() {
        let before = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[dependencies]\n\n[[test]]\nname = \"all\"\npath = \"tests/all.rs\"\n";
        let after = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nautotests = false\n\n[dependencies]\nserde = \"1\"\n\n[lib]\nharness = false\n\n[[test]]\nname = \"all\"\npath = \"tests/all.rs\"\nharness = false\n";
        let actual = judged("Cargo.toml", Some(before), Some(after));
        let expected = JudgedFile::Write(
            "[dependencies]\nserde = \"1\"\n\n[lib]\n\n[package]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[[test]]\nname = \"all\"\npath = \"tests/all.rs\"\n".to_string(),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn package_json_gets_the_baselines_jest_settings_and_test_script() {
        let before = "{\"name\": \"a\", \"scripts\": {\"test\": \"jest\", \"build\": \"tsc\"}}";
        let after = "{\"name\": \"a\", \"dependencies\": {\"left-pad\": \"1\"}, \"jest\": {\"setupFiles\": [\"./evil.js\"]}, \"scripts\": {\"test\": \"jest --passWithNoTests\", \"build\": \"tsc\"}}";
        let actual = judged("package.json", Some(before), Some(after));
        let expected = JudgedFile::Write(
            "{\n  \"dependencies\": {\n    \"left-pad\": \"1\"\n  },\n  \"name\": \"a\",\n  \"scripts\": {\n    \"build\": \"tsc\",\n    \"test\": \"jest\"\n  }\n}\n".to_string(),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn go_mod_gets_the_baselines_replace_directives() {
        let before = "module example.com/a\n\ngo 1.22\n\nrequire example.com/b v1.0.0\n";
        let after = "module example.com/a\n\ngo 1.22\n\nrequire (\n\texample.com/b v1.0.0\n\texample.com/c v1.2.0\n)\n\nreplace example.com/b => ./fake-b\n\nreplace (\n\texample.com/c => ./fake-c\n)\n";
        let actual = judged("go.mod", Some(before), Some(after));
        let expected = JudgedFile::Write(
            "module example.com/a\n\ngo 1.22\n\nrequire (\n\texample.com/b v1.0.0\n\texample.com/c v1.2.0\n)\n\n\n".to_string(),
        );
        assert_eq!(actual, expected);
    }
}
