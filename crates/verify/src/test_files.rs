//! Test files as test names, for runners that select tests by name only. `go test -run` matches
//! test function names, so a `_test.go` path the ladder targets (a new or changed test file) or
//! the model asks `run_tests` for matches no test: go runs nothing and reports `ok`, which reads
//! as "passes". Such a path becomes the test functions the file declares.

use std::path::Path;

use plumb_workspace::Tree;

use crate::Runner;
use crate::runners::go;

/// The largest test file read for its test names.
const MAX_TEST_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// `tests` as `runner` selects them (see [`crate::RunnerAdapter::named_tests`]): for go, each
/// test file (`…_test.go`) in the tree at `root` replaced by the names of the test functions it
/// declares. Other runners' ids are returned unchanged.
pub fn named_tests(runner: Runner, root: &Path, tests: &[String]) -> Vec<String> {
    runner.adapter().named_tests(root, tests)
}

/// `tests` with each go test file (`…_test.go`) in the tree at `root` replaced by the names of the
/// test functions it declares. A file that cannot be read, or declares no test function, stays
/// as it was: narrowed to it, the runner runs no test, and the caller sees that nothing ran.
pub(crate) fn go_tests_of_files(root: &Path, tests: &[String]) -> Vec<String> {
    if !tests.iter().any(|id| id.ends_with("_test.go")) {
        return tests.to_vec();
    }
    let tree = Tree::new(root).ok();
    let mut named = Vec::new();
    for id in tests {
        let names = match &tree {
            Some(tree) if id.ends_with("_test.go") => tree
                .read_text(id, MAX_TEST_FILE_BYTES)
                .map(|text| go::test_functions(&text))
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        if names.is_empty() {
            named.push(id.clone());
        }
        for name in names {
            if !named.contains(&name) {
                named.push(name);
            }
        }
    }
    named
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_go_test_file_becomes_its_test_functions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("calc")).unwrap();
        std::fs::write(
            dir.path().join("calc/add_test.go"),
            "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n\nfunc helper() {}\n\nfunc (s *suite) TestMethod() {}\n\nfunc ExampleAdd() {}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("calc/util_test.go"), "package calc\n").unwrap();
        let ids = |tests: &[&str]| tests.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        let actual = [
            named_tests(
                Runner::Go,
                dir.path(),
                &ids(&["calc/add_test.go", "TestOther"]),
            ),
            named_tests(Runner::Go, dir.path(), &ids(&["calc/util_test.go"])),
            named_tests(Runner::Go, dir.path(), &ids(&["calc/missing_test.go"])),
            named_tests(Runner::Pytest, dir.path(), &ids(&["calc/add_test.go"])),
        ];
        let expected = [
            ids(&["TestAdd", "ExampleAdd", "TestOther"]),
            ids(&["calc/util_test.go"]),
            ids(&["calc/missing_test.go"]),
            ids(&["calc/add_test.go"]),
        ];
        assert_eq!(actual, expected);
    }
}
