//! The tamper scan on the BILL-412 example's ways of gaming the tests, one rule at a time, each
//! with a change it must flag and one it must leave alone.

use plumb_verify::tamper::{
    self, ChangeStatus, FileChange, FileMode, TamperFlag, TamperKind, TamperPolicy, TestSetupFiles,
    TestsAdded, is_test_file, tests_added,
};
use pretty_assertions::assert_eq;

/// The scan with no jest or vitest configuration naming setup files (see the setup-file test).
fn scan(changes: &[FileChange]) -> Vec<TamperFlag> {
    tamper::scan(changes, &TestSetupFiles::default())
}

fn added(path: &str, after: &str) -> FileChange {
    FileChange {
        status: ChangeStatus::Added,
        path: path.into(),
        before: None,
        after: Some(after.into()),
        before_mode: None,
        after_mode: Some(FileMode::Regular),
    }
}

fn modified(path: &str, before: &str, after: &str) -> FileChange {
    FileChange {
        status: ChangeStatus::Modified,
        path: path.into(),
        before: Some(before.into()),
        after: Some(after.into()),
        before_mode: Some(FileMode::Regular),
        after_mode: Some(FileMode::Regular),
    }
}

fn deleted(path: &str, before: &str) -> FileChange {
    FileChange {
        status: ChangeStatus::Deleted,
        path: path.into(),
        before: Some(before.into()),
        after: None,
        before_mode: Some(FileMode::Regular),
        after_mode: None,
    }
}

fn renamed(from: &str, to: &str, text: &str) -> FileChange {
    FileChange {
        status: ChangeStatus::Renamed { from: from.into() },
        path: to.into(),
        before: Some(text.into()),
        after: Some(text.into()),
        before_mode: Some(FileMode::Regular),
        after_mode: Some(FileMode::Regular),
    }
}

fn flag(kind: TamperKind, path: &str, line: Option<usize>, detail: &str) -> TamperFlag {
    TamperFlag {
        kind,
        path: path.into(),
        line,
        detail: detail.into(),
    }
}

fn config_flag(path: &str, detail: &str) -> TamperFlag {
    flag(TamperKind::TestConfigChanged, path, None, detail)
}

fn marker_flag(path: &str, line: usize, detail: &str) -> TamperFlag {
    flag(TamperKind::SkipMarkerAdded, path, Some(line), detail)
}

const INVOICE_TEST: &str = "\
from invoice import gst

def test_gst_on_900():
    assert gst(900) == 162
";

const FIX: &str = "def gst(amount):\n    return round(amount * 0.18)\n";

#[test]
fn test_files_are_known_by_path() {
    let paths = [
        "tests/test_invoice_totals.py",
        "test/helpers.py",
        "pkg/test_gst.py",
        "pkg/gst_test.py",
        "app/tests.py",
        "tax/gst_test.go",
        "web/gst.test.tsx",
        "web/gst.spec.js",
        "web/__tests__/gst.js",
        "src/test/java/com/acme/GstTest.java",
        "tests/invoice.rs",
        "tax/testdata/golden.json",
        "tests/conftest.py",
        "src/lib.rs",
        "src/invoice.py",
        "src/contest.py",
        "web/gst.test.md",
        "latest_results.py",
    ];
    let actual: Vec<(&str, bool)> = paths.iter().map(|p| (*p, is_test_file(p))).collect();
    let expected = vec![
        ("tests/test_invoice_totals.py", true),
        ("test/helpers.py", true),
        ("pkg/test_gst.py", true),
        ("pkg/gst_test.py", true),
        ("app/tests.py", true),
        ("tax/gst_test.go", true),
        ("web/gst.test.tsx", true),
        ("web/gst.spec.js", true),
        ("web/__tests__/gst.js", true),
        ("src/test/java/com/acme/GstTest.java", true),
        ("tests/invoice.rs", true),
        ("tax/testdata/golden.json", true),
        // Test configuration, flagged by its own rule.
        ("tests/conftest.py", false),
        // Rust unit tests beside the code are not test files by path.
        ("src/lib.rs", false),
        ("src/invoice.py", false),
        ("src/contest.py", false),
        ("web/gst.test.md", false),
        ("latest_results.py", false),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn an_edited_existing_test_is_flagged_a_new_test_file_is_not() {
    let changes = [
        modified(
            "tests/test_invoice_totals.py",
            INVOICE_TEST,
            &INVOICE_TEST.replace("162", "180"),
        ),
        modified("invoice.py", "def gst(amount):\n    return 0\n", FIX),
        added("tests/test_gst.py", INVOICE_TEST),
    ];
    let actual = scan(&changes);
    let expected = vec![flag(
        TamperKind::TestModified,
        "tests/test_invoice_totals.py",
        None,
        "tests/test_invoice_totals.py: an existing test file was modified",
    )];
    assert_eq!(actual, expected);
}

#[test]
fn a_modified_status_with_the_same_text_is_not_an_edit() {
    // A mode change reaches the scan as "modified" with equal texts.
    let changes = [modified(
        "tests/test_invoice_totals.py",
        INVOICE_TEST,
        INVOICE_TEST,
    )];
    assert_eq!(scan(&changes), Vec::<TamperFlag>::new());
}

#[test]
fn a_deleted_test_is_flagged_a_deleted_source_file_is_not() {
    let changes = [
        deleted("tests/test_refunds.py", INVOICE_TEST),
        deleted("old_tax.py", FIX),
    ];
    let actual = scan(&changes);
    let expected = vec![flag(
        TamperKind::TestDeleted,
        "tests/test_refunds.py",
        None,
        "tests/test_refunds.py: an existing test file was deleted",
    )];
    assert_eq!(actual, expected);
}

#[test]
fn a_renamed_test_is_flagged_a_file_renamed_into_the_tests_is_not() {
    let changes = [
        renamed(
            "tests/test_refunds.py",
            "tests/test_refunds_old.py",
            INVOICE_TEST,
        ),
        renamed(
            "scripts/check_gst.py",
            "tests/test_check_gst.py",
            INVOICE_TEST,
        ),
    ];
    let actual = scan(&changes);
    let expected = vec![flag(
        TamperKind::TestRenamed,
        "tests/test_refunds_old.py",
        None,
        "tests/test_refunds_old.py: an existing test file was renamed from tests/test_refunds.py",
    )];
    assert_eq!(actual, expected);
}

#[test]
fn a_conftest_that_skips_everything_is_flagged_with_its_hook_and_marker() {
    let conftest = "\
import pytest

def pytest_collection_modifyitems(config, items):
    for item in items:
        item.add_marker(pytest.mark.skip(reason=\"later\"))
";
    let actual = scan(&[added("tests/conftest.py", conftest)]);
    let expected = vec![
        config_flag(
            "tests/conftest.py",
            "tests/conftest.py: a conftest.py was added; it defines pytest_collection_modifyitems",
        ),
        marker_flag(
            "tests/conftest.py",
            5,
            "tests/conftest.py line 5: adds pytest.mark.skip",
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn conftests_that_exit_or_rewrite_outcomes_are_named() {
    let exits = "import os\n\nos._exit(0)\n";
    let rewrites = "\
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = \"passed\"

def pytest_report_teststatus(report, config):
    return \"passed\", \".\", \"PASSED\"
";
    let changes = [
        added("conftest.py", exits),
        modified("tests/conftest.py", "import pytest\n", rewrites),
        deleted("tests/unit/conftest.py", "import pytest\n"),
    ];
    let actual = scan(&changes);
    let expected = vec![
        config_flag(
            "conftest.py",
            "conftest.py: a conftest.py was added; it calls os._exit",
        ),
        config_flag(
            "tests/conftest.py",
            "tests/conftest.py: a conftest.py was changed; it defines pytest_runtest_makereport \
             and defines pytest_report_teststatus",
        ),
        config_flag(
            "tests/unit/conftest.py",
            "tests/unit/conftest.py: a conftest.py was deleted",
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn a_moved_conftest_is_a_deletion_and_an_addition_a_lookalike_name_is_nothing() {
    let changes = [
        renamed(
            "tests/conftest.py",
            "tests/unit/conftest.py",
            "import pytest\n",
        ),
        added(
            "src/conftest_helpers.py",
            "def fixture_data():\n    return {}\n",
        ),
    ];
    let actual = scan(&changes);
    let expected = vec![
        config_flag(
            "tests/conftest.py",
            "tests/conftest.py: a conftest.py was deleted",
        ),
        config_flag(
            "tests/unit/conftest.py",
            "tests/unit/conftest.py: a conftest.py was added",
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn pytest_ini_tox_ini_and_jest_configs_are_flagged_on_any_change() {
    let changes = [
        added(
            "pytest.ini",
            "[pytest]\naddopts = --deselect tests/test_invoice_totals.py::test_gst_on_900\n",
        ),
        modified(
            "tox.ini",
            "[tox]\nenvlist = py311\n",
            "[tox]\nenvlist = py312\n",
        ),
        added(
            "web/jest.config.js",
            "module.exports = { testPathIgnorePatterns: ['gst'] };\n",
        ),
        deleted("web/vitest.config.ts", "export default {};\n"),
        // Same text: nothing changed that matters.
        modified("pytest.ini", "[pytest]\n", "[pytest]\n"),
        // Only the name looks like a config file.
        added("docs/pytest.ini.md", "How we configure pytest.\n"),
    ];
    let actual = scan(&changes);
    let expected = vec![
        config_flag(
            "pytest.ini",
            "pytest.ini: the test configuration file was added",
        ),
        config_flag(
            "tox.ini",
            "tox.ini: the test configuration file was changed",
        ),
        config_flag(
            "web/jest.config.js",
            "web/jest.config.js: the test configuration file was added",
        ),
        config_flag(
            "web/vitest.config.ts",
            "web/vitest.config.ts: the test configuration file was deleted",
        ),
    ];
    assert_eq!(actual, expected);
}

const PYPROJECT: &str = "\
[project]
name = \"invoice\"
version = \"1.0.0\"

[tool.pytest.ini_options]
testpaths = [\"tests\"]
";

#[test]
fn pyproject_is_flagged_only_when_its_pytest_settings_change() {
    let changes = [
        // The pytest settings gain a deselect.
        modified(
            "pyproject.toml",
            PYPROJECT,
            &PYPROJECT.replace(
                "testpaths = [\"tests\"]",
                "testpaths = [\"tests\"]\naddopts = \"-k 'not gst'\"",
            ),
        ),
        // A version bump and a reformat of the pytest table: no change to the settings.
        modified(
            "sub/pyproject.toml",
            PYPROJECT,
            &PYPROJECT
                .replace("1.0.0", "1.0.1")
                .replace("[\"tests\"]", "[ \"tests\" ]"),
        ),
        // Settings given as a dotted key are still pytest settings.
        modified(
            "other/pyproject.toml",
            "[project]\nname = \"x\"\n",
            "tool.pytest.ini_options.addopts = \"-x\"\n[project]\nname = \"x\"\n",
        ),
        // A file that no longer parses cannot be cleared.
        modified("broken/pyproject.toml", PYPROJECT, "[project\n"),
    ];
    let actual = scan(&changes);
    let expected = vec![
        config_flag(
            "pyproject.toml",
            "pyproject.toml: the [tool.pytest] settings were changed",
        ),
        config_flag(
            "other/pyproject.toml",
            "other/pyproject.toml: the [tool.pytest] settings were added",
        ),
        config_flag(
            "broken/pyproject.toml",
            "broken/pyproject.toml: the file does not parse, so a change to the [tool.pytest] \
             settings cannot be ruled out",
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn setup_cfg_is_flagged_only_when_its_tool_pytest_section_changes() {
    let before = "[metadata]\nname = invoice\n\n[tool:pytest]\ntestpaths = tests\n";
    let changes = [
        modified(
            "setup.cfg",
            before,
            &before.replace(
                "testpaths = tests",
                "testpaths = tests\naddopts = -p no:gst",
            ),
        ),
        modified(
            "lib/setup.cfg",
            before,
            // Another section and a comment in the pytest one.
            &before
                .replace("name = invoice", "name = invoice2")
                .replace("[tool:pytest]\n", "[tool:pytest]\n# the suite\n"),
        ),
    ];
    let actual = scan(&changes);
    let expected = vec![config_flag(
        "setup.cfg",
        "setup.cfg: the [tool:pytest] settings were changed",
    )];
    assert_eq!(actual, expected);
}

#[test]
fn cargo_toml_is_flagged_only_when_its_test_targets_change() {
    let before = "[package]\nname = \"invoice\"\n\n[dependencies]\nserde = \"1\"\n";
    let changes = [
        modified(
            "Cargo.toml",
            before,
            &format!("{before}\n[[test]]\nname = \"gst\"\nharness = false\n"),
        ),
        modified(
            "crates/tax/Cargo.toml",
            before,
            &format!("{before}\n[lib]\ntest = false\n"),
        ),
        modified(
            "crates/bill/Cargo.toml",
            before,
            &before.replace("[package]\n", "[package]\nautotests = false\n"),
        ),
        modified(
            "crates/other/Cargo.toml",
            before,
            &before.replace("serde = \"1\"", "serde = \"1.0.200\""),
        ),
    ];
    let actual = scan(&changes);
    let what = "the test targets ([[test]], test/harness/doctest switches, autotests) were added";
    let expected = vec![
        config_flag("Cargo.toml", &format!("Cargo.toml: {what}")),
        config_flag(
            "crates/tax/Cargo.toml",
            &format!("crates/tax/Cargo.toml: {what}"),
        ),
        config_flag(
            "crates/bill/Cargo.toml",
            &format!("crates/bill/Cargo.toml: {what}"),
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn package_json_is_flagged_only_when_jest_or_the_test_script_changes() {
    let before = r#"{"name": "web", "scripts": {"test": "jest"}, "dependencies": {"a": "1"}}"#;
    let changes = [
        modified(
            "package.json",
            before,
            r#"{"name": "web", "scripts": {"test": "jest"}, "jest": {"testPathIgnorePatterns": ["gst"]}, "dependencies": {"a": "1"}}"#,
        ),
        modified(
            "web/package.json",
            before,
            r#"{"name": "web", "scripts": {"test": "jest --passWithNoTests -t nothing"}, "dependencies": {"a": "1"}}"#,
        ),
        modified(
            "app/package.json",
            before,
            r#"{"name": "web", "scripts": {"test": "jest", "lint": "eslint ."}, "dependencies": {"a": "2"}}"#,
        ),
    ];
    let actual = scan(&changes);
    let expected = vec![
        config_flag(
            "package.json",
            "package.json: the jest settings or the test script were changed",
        ),
        config_flag(
            "web/package.json",
            "web/package.json: the jest settings or the test script were changed",
        ),
        // Not test configuration, but a new script is a build file change.
        flag(
            TamperKind::BuildFileChanged,
            "app/package.json",
            None,
            "app/package.json: the npm scripts (other than test) or bin entries, which npm runs on install and on request, were changed",
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn go_mod_is_flagged_only_when_its_replace_lines_change() {
    let before = "module example.com/bill\n\ngo 1.22\n\nrequire example.com/tax v1.2.0\n";
    let changes = [
        modified(
            "go.mod",
            before,
            &format!("{before}\nreplace (\n\texample.com/tax   => ./faketax\n)\n"),
        ),
        modified(
            "svc/go.mod",
            &format!("{before}replace example.com/tax => ../tax\n"),
            // The version bump is fine; the replace line only moved and gained spaces.
            &format!(
                "replace example.com/tax  =>  ../tax\n{}",
                before.replace("v1.2.0", "v1.3.0")
            ),
        ),
    ];
    let actual = scan(&changes);
    let expected = vec![config_flag(
        "go.mod",
        "go.mod: the replace directives changed (adds `example.com/tax => ./faketax`)",
    )];
    assert_eq!(actual, expected);
}

#[test]
fn a_skip_marker_on_a_new_test_is_flagged_with_its_line() {
    let new_test = "\
import pytest

from invoice import gst


@pytest.mark.skip(reason=\"flaky\")
@pytest.mark.xfail
def test_gst_rounds_paise():
    assert gst(899) == 162
";
    let actual = scan(&[added("tests/test_gst.py", new_test)]);
    let expected = vec![
        marker_flag(
            "tests/test_gst.py",
            6,
            "tests/test_gst.py line 6: adds @pytest.mark.skip",
        ),
        marker_flag(
            "tests/test_gst.py",
            7,
            "tests/test_gst.py line 7: adds @pytest.mark.xfail",
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn a_moved_skip_line_is_not_new() {
    let before = "\
import pytest

@pytest.mark.skip(reason=\"needs the network\")
def test_rates_online():
    pass

def test_gst_on_900():
    assert gst(900) == 162
";
    // The skip now sits on the other test, re-indented inside a class: same line, moved.
    let after = "\
import pytest

def test_rates_online():
    pass

class TestGst:
    @pytest.mark.skip(reason=\"needs the network\")
    def test_gst_on_900(self):
        assert gst(900) == 162
";
    let actual = scan(&[modified("tests/test_invoice_totals.py", before, after)]);
    let expected = vec![flag(
        TamperKind::TestModified,
        "tests/test_invoice_totals.py",
        None,
        "tests/test_invoice_totals.py: an existing test file was modified",
    )];
    assert_eq!(actual, expected);
}

#[test]
fn skip_markers_in_each_language_are_flagged() {
    let changes = [
        added(
            "tests/test_units.py",
            "import unittest\n\n@unittest.skip('later')\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.skipTest('no')\n        pytest.skip(\"no\")\n",
        ),
        modified(
            "src/lib.rs",
            "#[test]\nfn gst() {}\n",
            "#[test]\n#[ignore = \"slow\"]\nfn gst() {}\n",
        ),
        added(
            "tax/gst_test.go",
            "func TestGst(t *testing.T) {\n\tt.Skip(\"later\")\n\tt.SkipNow()\n}\n",
        ),
        added(
            "web/gst.test.ts",
            "it.skip('a', () => {});\nxit('b', () => {});\ndescribe.skip('c', () => {});\nxdescribe('d', () => {});\ntest.only('e', () => {});\n",
        ),
        added(
            "src/test/java/GstTest.java",
            "class GstTest {\n  @Disabled\n  @Test void a() {}\n  @Ignore @Test void b() {}\n}\n",
        ),
    ];
    let actual = scan(&changes);
    let expected = vec![
        marker_flag(
            "tests/test_units.py",
            3,
            "tests/test_units.py line 3: adds @unittest.skip",
        ),
        marker_flag(
            "tests/test_units.py",
            6,
            "tests/test_units.py line 6: adds self.skipTest()",
        ),
        marker_flag(
            "tests/test_units.py",
            7,
            "tests/test_units.py line 7: adds pytest.skip()",
        ),
        marker_flag("src/lib.rs", 2, "src/lib.rs line 2: adds #[ignore]"),
        marker_flag(
            "tax/gst_test.go",
            2,
            "tax/gst_test.go line 2: adds t.Skip()",
        ),
        marker_flag(
            "tax/gst_test.go",
            3,
            "tax/gst_test.go line 3: adds t.SkipNow()",
        ),
        marker_flag("web/gst.test.ts", 1, "web/gst.test.ts line 1: adds it.skip"),
        marker_flag("web/gst.test.ts", 2, "web/gst.test.ts line 2: adds xit()"),
        marker_flag(
            "web/gst.test.ts",
            3,
            "web/gst.test.ts line 3: adds describe.skip",
        ),
        marker_flag(
            "web/gst.test.ts",
            4,
            "web/gst.test.ts line 4: adds xdescribe",
        ),
        marker_flag(
            "web/gst.test.ts",
            5,
            "web/gst.test.ts line 5: adds test.only",
        ),
        marker_flag(
            "src/test/java/GstTest.java",
            2,
            "src/test/java/GstTest.java line 2: adds @Disabled",
        ),
        marker_flag(
            "src/test/java/GstTest.java",
            4,
            "src/test/java/GstTest.java line 4: adds @Ignore",
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn lookalikes_comments_and_markers_outside_tests_are_not_flagged() {
    let changes = [
        added(
            "web/gst.test.js",
            "afterAll(() => process.exit(0));\n// it.skip('later')\nconst total = profit(1);\n",
        ),
        added(
            "tests/test_gst.py",
            "# @pytest.mark.skip: not any more\ndef test_latest_skipper():\n    pass\n",
        ),
        // A plugin that talks about markers is not a test.
        added(
            "src/plugin.py",
            "MARKERS = ['pytest.mark.skip', 'pytest.mark.xfail']\n",
        ),
        added("tax/gst.go", "func skip(t *T) { t.Skip(\"x\") }\n"),
    ];
    assert_eq!(scan(&changes), Vec::<TamperFlag>::new());
}

#[test]
fn the_policy_blocks_only_the_kinds_it_names() {
    let flags = scan(&[
        modified(
            "tests/test_invoice_totals.py",
            INVOICE_TEST,
            &INVOICE_TEST.replace("162", "180"),
        ),
        deleted("tests/test_refunds.py", INVOICE_TEST),
        added("pytest.ini", "[pytest]\n"),
    ]);

    let policy: TamperPolicy =
        toml::from_str("block = [\"test_deleted\", \"test_config_changed\"]").unwrap();
    let actual: Vec<&str> = policy
        .blocking(&flags)
        .into_iter()
        .map(|flag| flag.path.as_str())
        .collect();
    assert_eq!(actual, vec!["tests/test_refunds.py", "pytest.ini"]);

    let default: TamperPolicy = toml::from_str("").unwrap();
    assert_eq!(
        (default.clone(), default.blocking(&flags)),
        (TamperPolicy::default(), Vec::<&TamperFlag>::new())
    );
}

#[test]
fn the_policy_rejects_unknown_kinds_and_keys() {
    let actual: Vec<bool> = [
        "block = [\"test_modified\", \"test_renamed\", \"skip_marker_added\"]",
        "block = [\"tests_deleted\"]",
        "blocks = [\"test_deleted\"]",
    ]
    .iter()
    .map(|text| toml::from_str::<TamperPolicy>(text).is_ok())
    .collect();
    assert_eq!(actual, vec![true, false, false]);
}

#[test]
fn a_patch_with_hazards_is_flagged_per_file_and_new_tests_are_only_added() {
    let appended = format!("{INVOICE_TEST}\n\ndef test_gst_on_zero():\n    assert gst(0) == 0\n");
    let link = |path: &str, before: Option<FileMode>, target: &str| FileChange {
        status: if before.is_some() {
            ChangeStatus::Modified
        } else {
            ChangeStatus::Added
        },
        path: path.into(),
        before: before.as_ref().map(|_| "notes\n".to_string()),
        after: None,
        before_mode: before,
        after_mode: Some(FileMode::Symlink {
            target: target.into(),
        }),
    };
    let mut script = added("scripts/release.sh", "#!/bin/sh\necho release\n");
    script.after_mode = Some(FileMode::Executable);
    let changes = [
        modified(
            "invoice.py",
            "def gst(amount):\n    return 0\n",
            &format!("{FIX}# \u{202e}tax-free\u{202c}\n"),
        ),
        modified("tests/test_invoice_totals.py", INVOICE_TEST, &appended),
        link("AGENTS.md", Some(FileMode::Regular), "/etc/passwd"),
        link("docs/latest.md", None, "../README.md"),
        added(".github/workflows/x.yml", "on: push\n"),
        script,
    ];

    let actual = (scan(&changes), tests_added(&changes));

    let expected = (
        vec![
            flag(
                TamperKind::BidiControl,
                "invoice.py",
                Some(3),
                "invoice.py line 3: the added line holds U+202E (right-to-left override) and U+202C (pop directional formatting)",
            ),
            flag(
                TamperKind::SymlinkOutOfTree,
                "AGENTS.md",
                None,
                "AGENTS.md: a file replaced by a symbolic link to /etc/passwd, which leads out of the project",
            ),
            flag(
                TamperKind::AutomationChanged,
                "AGENTS.md",
                None,
                "AGENTS.md: a coding-agent instructions file (the next agent reads it) was changed",
            ),
            flag(
                TamperKind::SymlinkInTree,
                "docs/latest.md",
                None,
                "docs/latest.md: a new symbolic link to ../README.md (inside the project: README.md)",
            ),
            flag(
                TamperKind::AutomationChanged,
                ".github/workflows/x.yml",
                None,
                ".github/workflows/x.yml: a GitHub CI workflow or repository setting was added",
            ),
            flag(
                TamperKind::ExecutableAdded,
                "scripts/release.sh",
                None,
                "scripts/release.sh: a new executable file (mode 100755)",
            ),
        ],
        vec![TestsAdded {
            path: "tests/test_invoice_totals.py".into(),
            lines: 2,
        }],
    );
    assert_eq!(actual, expected);
}

#[test]
fn the_policy_blocks_the_defaults_plus_block_minus_unblock() {
    let flags = [
        flag(TamperKind::SymlinkOutOfTree, "a", None, "a"),
        flag(TamperKind::BidiControl, "b", None, "b"),
        flag(TamperKind::AutomationChanged, "c", None, "c"),
    ];
    let policies = [
        "",
        "unblock = [\"symlink_out_of_tree\"]",
        "block = [\"automation_changed\"]\nunblock = [\"bidi_control\", \"symlink_out_of_tree\"]",
    ];
    let actual: Vec<Vec<&str>> = policies
        .iter()
        .map(|text| {
            let policy: TamperPolicy = toml::from_str(text).unwrap();
            policy
                .blocking(&flags)
                .into_iter()
                .map(|flag| flag.path.as_str())
                .collect()
        })
        .collect();
    assert_eq!(actual, vec![vec!["a", "b"], vec!["b"], vec!["c"]]);
}
