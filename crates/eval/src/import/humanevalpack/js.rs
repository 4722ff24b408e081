//! A JavaScript task's tree, tested by node's own runner (`node --test`, no `node_modules`, so no
//! network at test time): `<entryPoint>.js` (declaration + buggy body, then a
//! `module.exports` of its top-level names), `test/<entryPoint>.test.js` (the record's example
//! test) and `package.json` whose `test` script is `node --test` (how plumb finds the command).
//! The hidden test is `test/hidden.test.js`, added by `test_patch`; its one test is named
//! `test_check`, the name node's TAP report gives it (`ok 2 - test_check`).
//!
//! HumanEvalPack's JavaScript tests check with `console.assert`, which only prints; in the test
//! files each `console.assert(` is written `assert.ok(` (node's `assert`, same arguments), so a
//! failed check fails the test. That is the only change to the record's test text, which runs
//! inside one `test(…)` call.

use super::{Layout, Problem};

pub(crate) const HIDDEN_ID: &str = "test_check";

pub(crate) fn layout(problem: &Problem) -> Result<Layout, String> {
    let entry = &problem.entry_point;
    let file = format!("{entry}.js");
    let buggy = with_exports(&problem.buggy_code());
    let fixed = with_exports(&problem.canonical_code());
    let mut names = top_level_names(&problem.buggy_code());
    for name in top_level_names(&problem.canonical_code()) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let Some(first) = names.first().cloned() else {
        return Err("(field `declaration`): defines no top-level name".into());
    };
    let examples = if problem.example_test.trim().is_empty() {
        // Five records have no example test: the module loading is then the project's test.
        // (The declared name, not `entry_point`: JavaScript/114 declares `minSubArraySum` under
        // the entry point `minSubarraySum`.)
        test_file(
            &file,
            &names,
            "module_loads",
            &format!("assert.ok(typeof {first} === 'function')"),
        )
    } else {
        test_file(&file, &names, "examples", &problem.example_test)
    };
    let package = format!(
        "{{\n  \"name\": \"{}\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n  \
         \"scripts\": {{\n    \"test\": \"node --test\"\n  }}\n}}\n",
        super::snake_case(entry).replace('_', "-")
    );
    Ok(Layout {
        files: vec![
            (file.clone(), buggy),
            (format!("test/{entry}.test.js"), examples),
            ("package.json".into(), package),
        ],
        fixed: (file.clone(), fixed),
        hidden: vec![(
            "test/hidden.test.js".into(),
            test_file(&file, &names, HIDDEN_ID, &problem.test),
        )],
        fail_to_pass: vec![HIDDEN_ID.into()],
        setup_command: None,
        test_command: None,
    })
}

/// The code with `module.exports` of every top-level name it defines.
fn with_exports(code: &str) -> String {
    format!(
        "{code}\nmodule.exports = {{ {} }};\n",
        top_level_names(code).join(", ")
    )
}

/// Names defined at the start of a line by `const`, `let`, `var`, `function`, `async function`
/// or `class` (HumanEvalPack's declarations are written that way, unindented).
fn top_level_names(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in code.lines() {
        let rest = [
            "const ",
            "let ",
            "var ",
            "async function ",
            "function ",
            "class ",
        ]
        .iter()
        .find_map(|keyword| line.strip_prefix(keyword));
        let Some(rest) = rest else { continue };
        let name: String = rest
            .trim_start_matches('*')
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

fn test_file(file: &str, names: &[String], name: &str, test: &str) -> String {
    format!(
        "const test = require('node:test');\nconst assert = require('node:assert');\n\
         const {{ {} }} = require('../{file}');\n\ntest('{name}', () => {{\n{}\n}});\n",
        names.join(", "),
        test.trim_matches('\n')
            .replace("console.assert(", "assert.ok(")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_names_are_exported() {
        let code = "const isPrime = (n) => {\n  const x = 1;\n}\nfunction helper() {}\n";
        let actual = with_exports(code);
        let expected = format!("{code}\nmodule.exports = {{ isPrime, helper }};\n");
        assert_eq!(actual, expected);
    }

    #[test]
    fn console_asserts_become_failing_asserts() {
        let actual = test_file(
            "add.js",
            &["add".into()],
            "test_check",
            "const t = () => {\n  console.assert(add(1, 2) === 3)\n}\nt()\n",
        );
        let expected = "const test = require('node:test');\nconst assert = require('node:assert');\n\
                        const { add } = require('../add.js');\n\ntest('test_check', () => {\n\
                        const t = () => {\n  assert.ok(add(1, 2) === 3)\n}\nt()\n});\n";
        assert_eq!(actual, expected);
    }
}
