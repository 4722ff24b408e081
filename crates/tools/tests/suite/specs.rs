//! What the model is told about the tools. A change here changes every prompt, so it shows up in
//! review as a snapshot diff.

use plumb_tools::Registry;

#[test]
fn tool_specs_snapshot() {
    let specs = Registry::builtin().specs();

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
