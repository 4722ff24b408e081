//! What the model is told about the tools. A change here changes every prompt, so it shows up in
//! review as a snapshot diff.

use plumb_tools::Registry;

#[test]
fn tool_specs_snapshot() {
    let specs = Registry::builtin().specs().unwrap();

    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();

    assert_eq!(
        names,
        vec![
            "search_code",
            "read_file",
            "list_files",
            "edit_file",
            "replace_function",
            "create_file",
            "run_tests",
            "run",
            "done"
        ]
    );
    insta::assert_json_snapshot!("tool_specs", specs);
}

/// The test tools name the project's own runner and a test id of its form, never pytest's
/// examples in a project that does not use pytest.
#[test]
fn the_test_tools_name_the_projects_runner() {
    let described = |command: &str| {
        let cmd = plumb_verify::parse_command(command).unwrap();
        let specs = Registry::for_tests(&cmd).specs().unwrap();
        let text = |name: &str| {
            let spec = specs.iter().find(|s| s.name == name).unwrap();
            format!("{} {}", spec.description, spec.parameters)
        };
        (text("run_tests"), text("run"))
    };
    let cases = [
        ("cargo test", "tests::adds"),
        ("go test ./...", "TestAdd"),
        ("npx jest", "src/sum.test.js"),
        ("mvn -B test", "com.example.CalcTest#adds"),
        ("python3 -m pytest -q", "tests/test_x.py::test_y"),
    ];
    for (command, example) in cases {
        let (run_tests, run) = described(command);
        assert!(
            run_tests.contains(&format!("(`{command}`)")) && run_tests.contains(example),
            "{command}: {run_tests}"
        );
        let argv = serde_json::to_string(&shell_words_split(command)).unwrap();
        assert!(run.contains(&argv.replace('"', "\\\"")), "{command}: {run}");
        if !command.contains("pytest") {
            assert!(
                !run_tests.contains("pytest") && !run.contains("pytest"),
                "{command}: {run_tests} {run}"
            );
        }
    }
    let (wrapped, _) = described("make test");
    assert!(
        wrapped.contains("(`make test`)") && wrapped.contains("runs them all"),
        "{wrapped}"
    );
}

fn shell_words_split(command: &str) -> Vec<String> {
    command.split(' ').map(String::from).collect()
}
