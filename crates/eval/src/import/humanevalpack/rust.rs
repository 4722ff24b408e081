//! A Rust task's tree: a library crate `humanevalfix` with the dependencies HumanEvalPack's own
//! harness gives every Rust task (`rand = "0.4"`, `regex = "1"`, `md5 = "0.7.0"`), a committed
//! `Cargo.lock` (the same for every task, so runs are reproducible; `rust.Cargo.lock` beside this
//! file), and `src/lib.rs` holding the declaration and the buggy body.
//!
//! HumanEvalPack's Rust records carry no example tests, so `src/lib.rs` ends with a
//! `#[cfg(test)] mod tests` whose one test only says the crate builds: the project then has a
//! test command plumb detects (`cargo test`) and a baseline that runs. The hidden test is
//! `src/hidden.rs` (`use super::*;` and the record's `mod tests`), compiled through a
//! `#[cfg(test)] mod hidden;` line that `test_patch` puts at the top of `src/lib.rs`; its ids are
//! `hidden::tests::<fn>`, as libtest prints them. At the top, not the end: the end of the file is
//! the tests module, where the agent is asked to add its own test, and a hunk whose context is
//! the module's last lines would not apply on top of such a patch (a right, verified fix of
//! Rust/3 was scored unresolved that way). The setup command is `cargo test --no-run`:
//! it fetches the dependencies (the only step that needs the network) and builds them and the
//! test binary into `target/`, which the setup snapshot gives every check tree of the ladder and
//! the scoring tree, so they rebuild only the crate itself (with `cargo fetch`, each compiled
//! `rand`, `regex` and `md5` again: an oracle task took 54–58 s, with this 27–33 s). The tests
//! then run offline.

use super::{Layout, Problem};

const CARGO_TOML: &str = "[package]\nname = \"humanevalfix\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                          [dependencies]\nrand = \"0.4\"\nregex = \"1\"\nmd5 = \"0.7.0\"\n";

const CARGO_LOCK: &str = include_str!("rust.Cargo.lock");

const BUILDS_TEST: &str = "\n#[cfg(test)]\nmod tests {\n    \
                           // HumanEvalPack gives no example tests for its Rust tasks.\n    \
                           #[test]\n    fn builds() {}\n}\n";

const HIDDEN_MOD: &str = "#[cfg(test)]\nmod hidden;\n";

pub(crate) fn layout(problem: &Problem) -> Result<Layout, String> {
    let module =
        test_module(&problem.test).map_err(|message| format!("(field `test`): {message}"))?;
    let tests = test_names(&problem.test);
    if tests.is_empty() {
        return Err("(field `test`): has no `#[test] fn`".into());
    }
    let buggy = format!("{}{BUILDS_TEST}", problem.buggy_code());
    let hidden = format!(
        "//! The full test of the task.\nuse super::*;\n\n{}\n",
        problem.test.trim_matches('\n')
    );
    Ok(Layout {
        files: vec![
            ("Cargo.toml".into(), CARGO_TOML.into()),
            ("Cargo.lock".into(), CARGO_LOCK.into()),
            ("src/lib.rs".into(), buggy.clone()),
        ],
        fixed: (
            "src/lib.rs".into(),
            format!("{}{BUILDS_TEST}", problem.canonical_code()),
        ),
        hidden: vec![
            ("src/hidden.rs".into(), hidden),
            ("src/lib.rs".into(), format!("{HIDDEN_MOD}{buggy}")),
        ],
        fail_to_pass: tests
            .iter()
            .map(|name| format!("hidden::{module}::{name}"))
            .collect(),
        setup_command: Some("cargo test --no-run".into()),
        test_command: None,
    })
}

/// The name of the one `mod` the record's test is written in.
fn test_module(test: &str) -> Result<String, String> {
    let names: Vec<String> = test
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("mod "))
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect();
    match names.as_slice() {
        [name] if !name.is_empty() => Ok(name.clone()),
        _ => Err(format!(
            "should hold one `mod` (it holds {}): the hidden test ids are read from it",
            names.len()
        )),
    }
}

/// The functions marked `#[test]`, in order.
fn test_names(test: &str) -> Vec<String> {
    test.split("#[test]")
        .skip(1)
        .filter_map(|rest| {
            let rest = rest.trim_start();
            let rest = rest.strip_prefix("fn ")?;
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_ids_are_libtest_paths() {
        let test = "\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n#[test]\n    fn test_below_zero() {\n    }\n\n}\n";
        let problem = Problem {
            declaration: "fn below_zero(x: i32) -> bool{\n".into(),
            buggy_solution: "false\n}\n".into(),
            canonical_solution: "x < 0\n}\n".into(),
            test: test.into(),
            ..Problem::default()
        };
        let layout = layout(&problem).unwrap();
        assert_eq!(
            layout.fail_to_pass,
            vec!["hidden::tests::test_below_zero".to_string()]
        );
        assert!(CARGO_LOCK.contains("name = \"humanevalfix\""));
    }
}
