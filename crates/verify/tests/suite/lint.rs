//! The lint delta: which linters apply, their commands, their output read back, and the
//! diagnostics that are new against the baseline. Ruff and cargo run for real (ruff must be
//! installed: `python3 -m pip install ruff`); go vet is read from a hand-written fixture because
//! Go is not installed where these tests run.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use plumb_verify::lint::{
    Diagnostic, LintTools, Linter, RuffVia, in_files, lint_command, new_diagnostics,
    parse_diagnostics,
};
use pretty_assertions::assert_eq;

fn diagnostic(path: &str, line: usize, code: &str, message: &str) -> Diagnostic {
    Diagnostic {
        path: path.into(),
        line,
        code: code.into(),
        message: message.into(),
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| item.to_string()).collect()
}

/// Runs `argv` in `root` and reads its output as `linter`'s.
fn lint(linter: Linter, root: &Path, argv: &[String]) -> Result<Vec<Diagnostic>, String> {
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .output()
        .unwrap_or_else(|err| panic!("cannot run {argv:?}: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    parse_diagnostics(linter, root, &stdout, &stderr)
}

#[test]
fn new_diagnostics_ignore_line_numbers_and_count_copies() {
    let before = [
        diagnostic("invoice_totals.py", 1, "F401", "`os` imported but unused"),
        diagnostic(
            "invoice_totals.py",
            9,
            "F841",
            "Local variable `x` is assigned to but never used",
        ),
    ];
    let after = [
        // Moved down by two added lines: the same diagnostic.
        diagnostic("invoice_totals.py", 3, "F401", "`os` imported but unused"),
        diagnostic(
            "invoice_totals.py",
            11,
            "F841",
            "Local variable `x` is assigned to but never used",
        ),
        // A second copy of an old one is new.
        diagnostic(
            "invoice_totals.py",
            14,
            "F841",
            "Local variable `x` is assigned to but never used",
        ),
        diagnostic(
            "invoice_totals.py",
            6,
            "F821",
            "Undefined name `round_paise`",
        ),
        // Same code and message in another file is new there.
        diagnostic("refunds.py", 1, "F401", "`os` imported but unused"),
    ];
    let actual = new_diagnostics(&before, &after);
    let expected = vec![
        diagnostic(
            "invoice_totals.py",
            14,
            "F841",
            "Local variable `x` is assigned to but never used",
        ),
        diagnostic(
            "invoice_totals.py",
            6,
            "F821",
            "Undefined name `round_paise`",
        ),
        diagnostic("refunds.py", 1, "F401", "`os` imported but unused"),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn in_files_keeps_the_changed_files() {
    let all = [
        diagnostic(
            "invoice_totals.py",
            3,
            "F821",
            "Undefined name `round_paise`",
        ),
        diagnostic("vendor/old.py", 1, "F401", "`sys` imported but unused"),
    ];
    let actual = in_files(&all, &strings(&["invoice_totals.py", "tests/test_gst.py"]));
    assert_eq!(actual, vec![all[0].clone()]);
}

const BASELINE_INVOICE: &str = "\
import os


def total(amount):
    return round(amount * 1.18, 2)
";

/// The BILL-412 fix that calls a helper nobody wrote; two lines higher up move the old F401 down.
const PATCHED_INVOICE: &str = "\
\"\"\"Invoice totals.\"\"\"

import os


def total(amount):
    return round_paise(amount * 1.18)
";

#[test]
fn real_ruff_reports_the_invented_helper_and_not_the_old_unused_import() {
    let tools = LintTools::detect();
    let via = tools
        .ruff
        .expect("this test needs ruff on PATH: install it with `python3 -m pip install ruff`");
    let baseline = tempfile::tempdir().unwrap();
    let patched = tempfile::tempdir().unwrap();
    fs::write(baseline.path().join("invoice_totals.py"), BASELINE_INVOICE).unwrap();
    fs::write(patched.path().join("invoice_totals.py"), PATCHED_INVOICE).unwrap();
    // The new test file does not exist at the baseline: ruff warns and lints the rest.
    fs::create_dir(patched.path().join("tests")).unwrap();
    fs::write(
        patched.path().join("tests/test_gst.py"),
        "from invoice_totals import total\n\n\ndef test_total():\n    assert total(100) == 118\n",
    )
    .unwrap();

    let changed = strings(&["invoice_totals.py", "tests/test_gst.py"]);
    assert_eq!(
        tools.linters_for(&changed, patched.path()),
        vec![Linter::Ruff(via)]
    );
    let argv = lint_command(Linter::Ruff(via), &changed);
    let before = lint(Linter::Ruff(via), baseline.path(), &argv).unwrap();
    let after = lint(Linter::Ruff(via), patched.path(), &argv).unwrap();

    let actual = (
        before.clone(),
        new_diagnostics(&in_files(&before, &changed), &in_files(&after, &changed)),
    );
    let expected = (
        vec![diagnostic(
            "invoice_totals.py",
            1,
            "F401",
            "`os` imported but unused",
        )],
        vec![diagnostic(
            "invoice_totals.py",
            7,
            "F821",
            "Undefined name `round_paise`",
        )],
    );
    assert_eq!(actual, expected);
}

#[test]
fn ruff_output_that_is_not_json_is_an_error() {
    let actual = parse_diagnostics(
        Linter::Ruff(RuffVia::PythonModule),
        Path::new("/work"),
        "",
        "/usr/bin/python3: No module named ruff\n",
    );
    let expected = Err(
        "ruff printed no JSON list of diagnostics (/usr/bin/python3: No module named ruff)"
            .to_string(),
    );
    assert_eq!(actual, expected);
}

/// Captured from `cargo check --message-format json --quiet` (cargo and rustc 1.95.0) on a crate
/// whose `src/lib.rs` has an unused variable on line 2; verbatim.
const CARGO_WARNING_RUN: &str = r#"{"reason":"compiler-message","package_id":"path+file:///tmp/ct#invoice@0.1.0","manifest_path":"/tmp/ct/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"invoice","src_path":"/tmp/ct/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"message":{"rendered":"warning: unused variable: `unused`\n --> src/lib.rs:2:9\n  |\n2 |     let unused = 1;\n  |         ^^^^^^ help: if this is intentional, prefix it with an underscore: `_unused`\n  |\n  = note: `#[warn(unused_variables)]` (part of `#[warn(unused)]`) on by default\n\n","$message_type":"diagnostic","children":[{"children":[],"code":null,"level":"note","message":"`#[warn(unused_variables)]` (part of `#[warn(unused)]`) on by default","rendered":null,"spans":[]},{"children":[],"code":null,"level":"help","message":"if this is intentional, prefix it with an underscore","rendered":null,"spans":[{"byte_end":48,"byte_start":42,"column_end":15,"column_start":9,"expansion":null,"file_name":"src/lib.rs","is_primary":true,"label":null,"line_end":2,"line_start":2,"suggested_replacement":"_unused","suggestion_applicability":"MachineApplicable","text":[{"highlight_end":15,"highlight_start":9,"text":"    let unused = 1;"}]}]}],"level":"warning","message":"unused variable: `unused`","spans":[{"byte_end":48,"byte_start":42,"column_end":15,"column_start":9,"expansion":null,"file_name":"src/lib.rs","is_primary":true,"label":null,"line_end":2,"line_start":2,"suggested_replacement":null,"suggestion_applicability":null,"text":[{"highlight_end":15,"highlight_start":9,"text":"    let unused = 1;"}]}],"code":{"code":"unused_variables","explanation":null}}}
{"reason":"compiler-artifact","package_id":"path+file:///tmp/ct#invoice@0.1.0","manifest_path":"/tmp/ct/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"invoice","src_path":"/tmp/ct/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"profile":{"opt_level":"0","debuginfo":2,"debug_assertions":true,"overflow_checks":true,"test":false},"features":[],"filenames":["/tmp/ct-target/debug/deps/libinvoice-1855380cbe6a4eb3.rmeta"],"executable":null,"fresh":false}
{"reason":"build-finished","success":true}
"#;

#[test]
fn a_captured_cargo_check_run_is_read() {
    let actual = parse_diagnostics(
        Linter::CargoCheck,
        Path::new("/tmp/ct"),
        CARGO_WARNING_RUN,
        "",
    );
    let expected = Ok(vec![diagnostic(
        "src/lib.rs",
        2,
        "unused_variables",
        "unused variable: `unused`",
    )]);
    assert_eq!(actual, expected);
}

#[test]
fn cargo_runs_that_never_checked_the_code_are_errors() {
    let manifest_error = "error: failed to parse manifest at `/w/Cargo.toml`\n\nCaused by:\n  no targets specified in the manifest\n";
    let actual = [
        parse_diagnostics(Linter::CargoCheck, Path::new("/w"), "", manifest_error),
        parse_diagnostics(
            Linter::CargoCheck,
            Path::new("/w"),
            "{\"reason\":\"build-finished\",\"success\":false}\n",
            "error: failed to run custom build command for `openssl-sys v0.9.1`\n",
        ),
    ];
    let expected = [
        Err(
            "cargo check did not finish a build (error: failed to parse manifest at \
             `/w/Cargo.toml` / Caused by: / no targets specified in the manifest)"
                .to_string(),
        ),
        Err(
            "cargo check failed without a compiler error in the project (error: failed to run \
             custom build command for `openssl-sys v0.9.1`)"
                .to_string(),
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn real_cargo_check_reports_the_invented_helper() {
    let baseline = tempfile::tempdir().unwrap();
    let patched = tempfile::tempdir().unwrap();
    let manifest = "[package]\nname = \"invoice\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
    for (root, lib) in [
        (
            baseline.path(),
            "pub fn total(paise: u64) -> u64 {\n    paise\n}\n",
        ),
        (
            patched.path(),
            "pub fn total(paise: u64) -> u64 {\n    round_paise(paise)\n}\n",
        ),
    ] {
        fs::create_dir(root.join("src")).unwrap();
        fs::write(root.join("Cargo.toml"), manifest).unwrap();
        fs::write(root.join("src/lib.rs"), lib).unwrap();
    }

    let changed = strings(&["src/lib.rs"]);
    let tools = LintTools::detect();
    assert_eq!(
        tools.linters_for(&changed, patched.path()),
        vec![Linter::CargoCheck]
    );
    let argv = lint_command(Linter::CargoCheck, &changed);
    let before = lint(Linter::CargoCheck, baseline.path(), &argv).unwrap();
    let after = lint(Linter::CargoCheck, patched.path(), &argv).unwrap();

    let actual = (
        before.clone(),
        new_diagnostics(&before, &in_files(&after, &changed)),
    );
    let expected = (
        Vec::new(),
        vec![diagnostic(
            "src/lib.rs",
            2,
            "E0425",
            "cannot find function `round_paise` in this scope",
        )],
    );
    assert_eq!(actual, expected);
}

/// Hand-written from go vet's documented text output (Go is not installed here): a `#` package
/// header, an analyzer finding with a column, one without, and a type-check error.
const GO_VET_STDERR: &str = "\
# example.com/bill
# [example.com/bill]
./invoice.go:14:2: fmt.Printf format %d has arg total of wrong type string
tax/gst.go:9: unreachable code
vet: ./invoice.go:21:9: undefined: roundPaise
";

#[test]
fn go_vet_text_is_read() {
    let actual = parse_diagnostics(Linter::GoVet, Path::new("/w"), "", GO_VET_STDERR);
    let expected = Ok(vec![
        diagnostic(
            "invoice.go",
            14,
            "vet",
            "fmt.Printf format %d has arg total of wrong type string",
        ),
        diagnostic("tax/gst.go", 9, "vet", "unreachable code"),
        diagnostic("invoice.go", 21, "typecheck", "undefined: roundPaise"),
    ]);
    assert_eq!(actual, expected);
}

#[test]
fn go_vet_that_found_no_module_is_an_error() {
    let stderr = "go: go.mod file not found in current directory or any parent directory; see 'go help modules'\n";
    let actual = parse_diagnostics(Linter::GoVet, Path::new("/w"), "", stderr);
    let expected = Err(format!(
        "go vet did not check the project ({})",
        stderr.trim()
    ));
    assert_eq!(actual, expected);
}

#[test]
fn lint_commands_are_argv_with_the_python_files_after_a_separator() {
    let files = strings(&["invoice_totals.py", "src/lib.rs", "-rf.py", "stubs/tax.pyi"]);
    let actual: Vec<Vec<String>> = [
        Linter::Ruff(RuffVia::Binary),
        Linter::Ruff(RuffVia::PythonModule),
        Linter::CargoCheck,
        Linter::GoVet,
    ]
    .into_iter()
    .map(|linter| lint_command(linter, &files))
    .collect();
    let ruff_args = "check --select F --output-format json --no-cache -- invoice_totals.py -rf.py stubs/tax.pyi";
    let expected: Vec<Vec<String>> = [
        format!("ruff {ruff_args}"),
        format!("python3 -m ruff {ruff_args}"),
        "cargo check --message-format json --quiet".to_string(),
        "go vet ./...".to_string(),
    ]
    .iter()
    .map(|line| line.split(' ').map(String::from).collect())
    .collect();
    assert_eq!(actual, expected);
}

fn executable(path: &Path) {
    fs::write(path, "#!/bin/sh\n").unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn tools_are_found_on_the_search_path_without_running_them() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, venv, empty) = (
        dir.path().join("bin"),
        dir.path().join("venv/bin"),
        dir.path().join("empty"),
    );
    for folder in [&bin, &venv, &empty] {
        fs::create_dir_all(folder).unwrap();
    }
    executable(&bin.join("ruff"));
    executable(&bin.join("go"));
    // A python3 whose real file has ruff beside it, reached through a link from a PATH folder
    // that has no ruff of its own.
    executable(&venv.join("python3"));
    executable(&venv.join("ruff"));
    std::os::unix::fs::symlink(venv.join("python3"), empty.join("python3")).unwrap();
    // Not executable: not a tool.
    fs::write(empty.join("cargo"), "").unwrap();

    let search = |dirs: &[&Path]| std::env::join_paths(dirs).unwrap();
    let actual = [
        LintTools::from_search_path(Some(&search(&[&bin]))),
        LintTools::from_search_path(Some(&search(&[&empty]))),
        LintTools::from_search_path(None),
    ];
    let expected = [
        LintTools {
            ruff: Some(RuffVia::Binary),
            cargo: false,
            go: true,
        },
        LintTools {
            ruff: Some(RuffVia::PythonModule),
            cargo: false,
            go: false,
        },
        LintTools::default(),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn linters_follow_the_changed_files_and_the_project_files() {
    let root = tempfile::tempdir().unwrap();
    let bare = tempfile::tempdir().unwrap();
    fs::write(root.path().join("Cargo.toml"), "[package]\n").unwrap();
    fs::write(root.path().join("go.mod"), "module example.com/bill\n").unwrap();
    let all = LintTools {
        ruff: Some(RuffVia::Binary),
        cargo: true,
        go: true,
    };
    let none = LintTools::default();
    let mixed = strings(&["invoice.py", "src/lib.rs", "tax/gst.go", "README.md"]);

    let actual = [
        all.linters_for(&mixed, root.path()),
        all.linters_for(&strings(&["README.md", "tests/test_gst.py"]), root.path()),
        // No Cargo.toml or go.mod at this root: only ruff applies.
        all.linters_for(&mixed, bare.path()),
        // Nothing installed: nothing runs, and the caller reports the step as not run.
        none.linters_for(&mixed, root.path()),
    ];
    let expected = [
        vec![
            Linter::Ruff(RuffVia::Binary),
            Linter::CargoCheck,
            Linter::GoVet,
        ],
        vec![Linter::Ruff(RuffVia::Binary)],
        vec![Linter::Ruff(RuffVia::Binary)],
        vec![],
    ];
    assert_eq!(actual, expected);
}
