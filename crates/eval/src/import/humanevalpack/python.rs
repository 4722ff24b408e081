//! A Python task's tree: `<entry_point>.py` (declaration + buggy body), `tests/test_<entry_point>.py`
//! (the record's example test), `pyproject.toml` (pytest's settings: the root on `sys.path`, so the
//! tests import the module however pytest is started; it is also how plumb detects pytest).
//! The hidden test is `tests/test_hidden.py`, added by `test_patch`; its one test is
//! `tests/test_hidden.py::test_check`, as pytest `-rA` names it.
//!
//! HumanEvalPack's tests are a `check(candidate)` function followed by the call
//! `check(<entry_point>)`, meant to run in one file with the solution. Each test file here
//! imports everything of the module (`from <module> import *`, so helpers of the declaration and
//! its imports are there as in the one-file form), keeps the record's text without its last call,
//! and makes that call a pytest test.

use super::{Layout, Problem, indent};

const PYPROJECT: &str =
    "[tool.pytest.ini_options]\npythonpath = [\".\"]\ntestpaths = [\"tests\"]\n";

/// The hidden test's id as pytest `-rA` prints it.
pub(crate) const HIDDEN_ID: &str = "tests/test_hidden.py::test_check";

pub(crate) fn layout(problem: &Problem) -> Result<Layout, String> {
    let module = &problem.entry_point;
    let file = format!("{module}.py");
    let hidden = test_file(
        module,
        &problem.test,
        "test_check",
        "The full test of the task.",
    )
    .map_err(|message| format!("(field `test`): {message}"))?;
    // Python/119's example test starts with two copies of the solution's body before its
    // `def check(`: the test is taken from that line on.
    let example = &problem.example_test;
    let example = if example.starts_with("def check(") {
        Some(example.as_str())
    } else {
        example
            .find("\ndef check(")
            .and_then(|at| example.get(at + 1..))
    };
    let examples = match example {
        // Five records have no example test; the module loading is then the project's one
        // test, so that the baseline has something to run.
        None => format!(
            "\"\"\"The module loads (the task gives no examples).\"\"\"\nimport {module}\n\n\n\
             def test_module_loads():\n    assert callable({module}.{module})\n"
        ),
        Some(example) => test_file(
            module,
            example,
            "test_examples",
            "The examples of the ticket.",
        )
        .map_err(|message| format!("(field `example_test`): {message}"))?,
    };
    Ok(Layout {
        files: vec![
            (file.clone(), problem.buggy_code()),
            (format!("tests/test_{module}.py"), examples),
            ("pyproject.toml".into(), PYPROJECT.into()),
        ],
        fixed: (file, problem.canonical_code()),
        hidden: vec![("tests/test_hidden.py".into(), hidden)],
        fail_to_pass: vec![HIDDEN_ID.into()],
        setup_command: None,
        test_command: None,
    })
}

/// The record's test text as a pytest file whose test `name` makes the record's last call.
fn test_file(module: &str, test: &str, name: &str, doc: &str) -> Result<String, String> {
    let text = test.trim_end();
    let (body, call) = text.rsplit_once('\n').unwrap_or(("", text));
    let call = call.trim_end();
    if !(call.starts_with("check(") && call.ends_with(')')) {
        return Err(format!(
            "does not end with the call `check({module})` HumanEvalPack's tests end with"
        ));
    }
    let body = body.trim_matches('\n');
    Ok(format!(
        "\"\"\"{doc}\"\"\"\n# ruff: noqa: F403, F405 (the names of the one-file form, star-imported)\nfrom {module} import *\n\n\
         {body}\n\n\ndef {name}():\n{}\n",
        indent(call, "    ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_call_becomes_a_test() {
        let actual = test_file(
            "add",
            "\n\ndef check(add):\n    assert add(1, 2) == 3\n\ncheck(add)\n",
            "test_check",
            "Doc.",
        );
        let expected = Ok(
            "\"\"\"Doc.\"\"\"\n# ruff: noqa: F403, F405 (the names of the one-file form, \
                           star-imported)\nfrom add import *\n\ndef check(add):\n    assert add(1, 2) == 3\n\n\n\
                           def test_check():\n    check(add)\n"
                .to_string(),
        );
        assert_eq!(actual, expected);
        assert_eq!(
            test_file("add", "def check(add):\n    pass\n", "t", "D"),
            Err("does not end with the call `check(add)` HumanEvalPack's tests end with".into())
        );
    }
}
