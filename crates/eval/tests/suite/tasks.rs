//! Task sets end to end through `plumb_eval::tasks::load`: SWE-bench's published files from
//! `data/swebench/` as they are, a set with bad records among good ones, Multi-SWE-bench records,
//! and GitHub names resolved under `--repos` (archives, and a real git mirror).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use plumb_eval::tasks::{LoadOptions, Loaded, RecordProblem, load};
use plumb_eval::{RepoSource, Task, TaskOrigin};
use pretty_assertions::assert_eq;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/swebench")
        .join(name)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap()
}

fn with_repos(dir: &Path) -> LoadOptions {
    LoadOptions {
        repos_dir: Some(dir.to_path_buf()),
    }
}

/// The set with its file names taken out, so sets read from two files compare.
fn without_file(mut loaded: Loaded) -> Loaded {
    for task in &mut loaded.tasks {
        task.origin.file = PathBuf::new();
    }
    for problem in &mut loaded.problems {
        problem.file = PathBuf::new();
    }
    loaded
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// Every repository of the Lite dev split as an empty folder, so every record resolves.
fn every_repo_as_a_folder() -> tempfile::TempDir {
    let repos = tempfile::tempdir().unwrap();
    for name in [
        "marshmallow-code__marshmallow",
        "pvlib__pvlib-python",
        "pydicom__pydicom",
        "pylint-dev__astroid",
        "pyvista__pyvista",
        "sqlfluff__sqlfluff",
    ] {
        fs::create_dir(repos.path().join(name)).unwrap();
    }
    repos
}

#[test]
fn swebench_jsonl_and_parquet_read_into_the_same_23_tasks() {
    let repos = every_repo_as_a_folder();

    let jsonl = load(&data("lite-dev.jsonl"), &with_repos(repos.path())).unwrap();
    let parquet = load(&data("lite-dev.parquet"), &with_repos(repos.path())).unwrap();
    let actual = (
        jsonl.tasks.len(),
        jsonl.problems.clone(),
        jsonl
            .tasks
            .iter()
            .map(|t| t.origin.line)
            .collect::<Vec<_>>(),
        without_file(parquet),
    );

    let expected = (
        23,
        vec![],
        (1..=23).collect::<Vec<_>>(),
        without_file(jsonl),
    );
    assert_eq!(actual, expected);
}

#[test]
fn marshmallow_1359_has_its_test_lists_as_the_harness_writes_them() {
    let repos = every_repo_as_a_folder();
    let loaded = load(&data("lite-dev.parquet"), &with_repos(repos.path())).unwrap();
    let task = loaded
        .tasks
        .iter()
        .find(|t| t.instance_id == "marshmallow-code__marshmallow-1359")
        .unwrap();

    let cut_at_a_space: Vec<&str> = task
        .pass_to_pass
        .iter()
        .filter(|id| id.contains('[') && !id.ends_with(']'))
        .map(String::as_str)
        .collect();
    let actual = (
        task.fail_to_pass.clone(),
        task.pass_to_pass.len(),
        task.pass_to_pass.first().cloned(),
        task.pass_to_pass.last().cloned(),
        cut_at_a_space.len(),
        cut_at_a_space.first().copied(),
        task.base_commit.clone(),
        task.repo.clone(),
    );

    let expected = (
        vec!["tests/test_fields.py::TestParentAndName::test_datetime_list_inner_format".to_owned()],
        76,
        Some("tests/test_fields.py::test_field_aliases[Integer-Integer]".to_owned()),
        Some(
            "tests/test_fields.py::TestDictNested::test_dict_nested_partial_propagated_to_nested"
                .to_owned(),
        ),
        8,
        Some("tests/test_fields.py::TestErrorMessages::test_make_error[required-Missing"),
        Some("b40a0f4e33823e6d0f341f7e8684e359a99060d1".to_owned()),
        RepoSource::Folder(repos.path().join("marshmallow-code__marshmallow")),
    );
    assert_eq!(actual, expected);
}

#[test]
fn with_repos_data_swebench_the_marshmallow_tasks_find_their_archives() {
    let loaded = load(&data("lite-dev.jsonl"), &with_repos(&data(""))).unwrap();

    let found: Vec<(String, RepoSource)> = loaded
        .tasks
        .iter()
        .map(|t| (t.instance_id.clone(), t.repo.clone()))
        .collect();
    let not_found: Vec<(usize, Option<String>)> = loaded
        .problems
        .iter()
        .map(|p| (p.line, p.field.clone()))
        .collect();
    let sqlfluff = loaded.problems.first().map(ToString::to_string);
    let actual = (
        found,
        not_found.len(),
        not_found.iter().all(|(_, f)| f.as_deref() == Some("repo")),
        sqlfluff,
    );

    let expected = (
        vec![
            (
                "marshmallow-code__marshmallow-1359".to_owned(),
                RepoSource::Archive(absolute(&data("marshmallow-b40a0f4e33.tar.gz"))),
            ),
            (
                "marshmallow-code__marshmallow-1343".to_owned(),
                RepoSource::Archive(absolute(&data("marshmallow-2be2d83a1a.tar.gz"))),
            ),
        ],
        21,
        true,
        Some(format!(
            "{} line 1 (`sqlfluff__sqlfluff-1625`, field `repo`): `sqlfluff/sqlfluff` is not under \
             --repos {}: tried sqlfluff__sqlfluff.git, sqlfluff__sqlfluff, sqlfluff/sqlfluff.git, \
             sqlfluff/sqlfluff, sqlfluff.git, sqlfluff, sqlfluff-14e1a23….tar.gz, \
             sqlfluff__sqlfluff-14e1a23….tar.gz; put a git mirror or an archive of the tree at \
             `base_commit` there under one of those names",
            data("lite-dev.jsonl").display(),
            data("").display()
        )),
    );
    assert_eq!(actual, expected);
}

#[test]
fn bad_records_are_named_by_line_and_field_and_the_good_ones_load() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("calc")).unwrap();
    fs::write(
        root.join("calc/calc.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    git(&root.join("calc"), &["init", "-q"]);
    git(&root.join("calc"), &["add", "."]);
    git(&root.join("calc"), &["commit", "-qm", "calc"]);
    let head = git(&root.join("calc"), &["rev-parse", "HEAD"]);
    let good = |id: &str| {
        format!(
            r#"{{"instance_id": "{id}", "repo": "calc", "base_commit": "{head}", "problem_statement": "add() subtracts", "FAIL_TO_PASS": ["test_calc.py::test_add"]}}"#
        )
    };
    let lines = [
        good("calc-1"),
        String::new(),
        r#"{"instance_id": "calc-2", "repo": "calc", "base_commit": "HEAD~1", "problem_statement": "x"}"#.to_owned(),
        good("calc-3"),
        "{\"instance_id\": \"calc-4\", \"repo\": ".to_owned(),
        good("calc-1"),
        r#"{"instance_id": "calc-5", "repo": "calc", "base_commit": "abcdef0", "problem_statement": "y", "PASS_TO_PASS": 3}"#
            .to_owned(),
        r#"["not", "an", "object"]"#.to_owned(),
    ];
    let file = root.join("tasks.jsonl");
    fs::write(&file, lines.join("\n")).unwrap();

    let loaded = load(&file, &LoadOptions::default()).unwrap();
    let actual = (
        loaded
            .tasks
            .iter()
            .map(|t| (t.instance_id.as_str(), t.origin.line))
            .collect::<Vec<_>>(),
        loaded
            .problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
    );

    let name = file.display();
    let expected = (
        vec![("calc-1", 1), ("calc-3", 4)],
        vec![
            format!(
                "{name} line 3 (`calc-2`, field `base_commit`): `HEAD~1` is not a commit id; write 7 \
                 to 40 hex digits (`git rev-parse HEAD`)"
            ),
            format!(
                "{name} line 5: not valid JSON (EOF while parsing a value at column 34); each line of \
                 a .jsonl task set is one JSON object"
            ),
            format!(
                "{name} line 6 (`calc-1`, field `instance_id`): `calc-1` is already the id of an \
                 earlier record; ids are unique within a set, so rename this one or drop the duplicate"
            ),
            format!(
                "{name} line 7 (`calc-5`, field `PASS_TO_PASS`): `PASS_TO_PASS` is a number; write a \
                 list of test ids (`[\"tests/test_a.py::test_b\"]`)"
            ),
            format!(
                "{name} line 8: the record is a list; each record is a JSON object with SWE-bench's fields"
            ),
        ],
    );
    assert_eq!(actual, expected);
}

#[test]
fn the_list_and_the_string_form_of_the_test_lists_give_the_same_task() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("tree")).unwrap();
    let listed = root.join("listed.jsonl");
    let encoded = root.join("encoded.json");
    fs::write(
        &listed,
        r#"{"instance_id": "t-1", "repo": "tree", "problem_statement": "p", "FAIL_TO_PASS": ["a.py::t[x y]"], "PASS_TO_PASS": ["a.py::u", "b.py::v"]}"#,
    )
    .unwrap();
    // SWE-bench's form, in a `.json` array.
    fs::write(
        &encoded,
        "[\n  {\"instance_id\": \"t-1\", \"repo\": \"tree\", \"problem_statement\": \"p\",\n   \
         \"FAIL_TO_PASS\": \"[\\\"a.py::t[x y]\\\"]\", \"PASS_TO_PASS\": \"[\\\"a.py::u\\\", \\\"b.py::v\\\"]\"}\n]\n",
    )
    .unwrap();

    let actual = (
        without_file(load(&listed, &LoadOptions::default()).unwrap()),
        without_file(load(&encoded, &LoadOptions::default()).unwrap()),
    );

    let task = Task {
        instance_id: "t-1".into(),
        repo: RepoSource::Folder(root.join("tree")),
        base_commit: None,
        problem_statement: "p".into(),
        patch: None,
        test_patch: None,
        fail_to_pass: vec!["a.py::t[x y]".into()],
        pass_to_pass: vec!["a.py::u".into(), "b.py::v".into()],
        setup_command: None,
        test_command: None,
        language: None,
        origin: TaskOrigin {
            file: PathBuf::new(),
            line: 1,
        },
    };
    let mut second = task.clone();
    second.origin.line = 2;
    let loaded = |task| Loaded {
        tasks: vec![task],
        problems: vec![],
    };
    assert_eq!(actual, (loaded(task), loaded(second)));
}

#[test]
fn a_multi_swe_bench_record_resolved_to_a_git_mirror_becomes_the_right_task() {
    let repos = tempfile::tempdir().unwrap();
    git(repos.path(), &["init", "-q", "--bare", "acme__widget.git"]);

    let loaded = load(&fixture("multi-swe.jsonl"), &with_repos(repos.path())).unwrap();

    let expected = Loaded {
        tasks: vec![Task {
            instance_id: "acme__widget-42".into(),
            repo: RepoSource::Git(repos.path().join("acme__widget.git")),
            base_commit: Some("0a1b2c3d4e5f60718293a4b5c6d7e8f901234567".into()),
            problem_statement: "resize panics on large sizes\n\nWidget::resize(u32::MAX) panics with \
                                'attempt to multiply with overflow'.\n\nresize should saturate"
                .into(),
            patch: Some(
                "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n\
                 -    self.w * self.h\n+    self.w.saturating_mul(self.h)\n"
                    .into(),
            ),
            test_patch: Some(
                "diff --git a/tests/resize.rs b/tests/resize.rs\n--- /dev/null\n+++ b/tests/resize.rs\n\
                 @@ -0,0 +1 @@\n+#[test] fn resize_saturates() {}\n"
                    .into(),
            ),
            fail_to_pass: vec!["lib::tests::area".into(), "lib::tests::huge".into(), "resize::resize_saturates".into()],
            pass_to_pass: vec!["lib::tests::default".into(), "lib::tests::new".into()],
            setup_command: None,
            test_command: None,
            language: None,
            origin: TaskOrigin { file: fixture("multi-swe.jsonl"), line: 1 },
        }],
        problems: vec![],
    };
    assert_eq!(loaded, expected);
}

#[test]
fn a_whole_file_that_cannot_be_read_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("tasks.csv");
    fs::write(&csv, "instance_id\n").unwrap();
    let missing = dir.path().join("nope.jsonl");

    let actual: Vec<String> = [
        load(&missing, &LoadOptions::default()),
        load(&csv, &LoadOptions::default()),
        load(&data("lite-dev.jsonl"), &with_repos(&missing)),
    ]
    .into_iter()
    .map(|result| {
        result
            .map(|l| format!("{} tasks", l.tasks.len()))
            .unwrap_or_else(|e| e.to_string())
    })
    .collect();

    let expected = vec![
        format!(
            "task file {} does not exist; name a .jsonl, .json or .parquet task set",
            missing.display()
        ),
        format!(
            "task file {}: unknown format `.csv`; name a .jsonl (JSON Lines), .json or .parquet file",
            csv.display()
        ),
        format!(
            "--repos {}: no such folder; name the folder that holds the git mirrors or archives",
            missing.display()
        ),
    ];
    assert_eq!(actual, expected);
}

/// A record problem names the row, not the line, in a parquet file.
#[test]
fn a_parquet_problem_says_row() {
    let problem = RecordProblem {
        file: PathBuf::from("dev.parquet"),
        line: 4,
        instance_id: None,
        field: Some("base_commit".into()),
        message: "m".into(),
    };

    assert_eq!(
        problem.to_string(),
        "dev.parquet row 4 (field `base_commit`): m"
    );
}
