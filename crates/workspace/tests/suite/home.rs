//! Bringing a change home: into the user's working tree (checked before and after, undone from
//! saved bytes) and onto a new branch (the checked-out branch, index and tree untouched).

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use plumb_workspace::{
    ChangeRecord, Destination, HomeError, Identity, NewBranch, Workspace, apply_to_tree,
    commit_on_branch, sha256_hex, undo,
};

use super::{git, link, listing, sample_repo, snapshot, write};

/// A run on `repo` whose change `edit` makes: its folder, its change record and its patch file.
pub(super) struct Run {
    _tmp: TempDir,
    pub(super) dir: PathBuf,
    pub(super) record: ChangeRecord,
    pub(super) patch: PathBuf,
    pub(super) sha: String,
}

pub(super) fn run_on(repo: &Path, edit: impl FnOnce(&Path)) -> Run {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("run");
    let workspace = Workspace::prepare(repo, &dir).unwrap();
    edit(workspace.root());
    let patch = workspace.patch().unwrap();
    let record = ChangeRecord {
        repo: repo.to_path_buf(),
        patch_sha256: patch.sha256.clone(),
        files: workspace.touched(&patch.files).unwrap(),
    };
    let path = dir.join("patch.diff");
    fs::write(&path, &patch.text).unwrap();
    Run {
        _tmp: tmp,
        dir,
        record,
        patch: path,
        sha: patch.sha256,
    }
}

/// Changes one file, adds one, deletes one and renames one (with an edit).
pub(super) fn four_kinds(root: &Path) {
    write(root, "src/app.py", "def answer():\n    return 43\n");
    write(root, "src/added.py", "ADDED = 1\n");
    fs::remove_file(root.join("docs/guide.md")).unwrap();
    fs::rename(root.join("src/util.py"), root.join("lib/util.py")).unwrap_or_else(|_| {
        fs::create_dir_all(root.join("lib")).unwrap();
        fs::rename(root.join("src/util.py"), root.join("lib/util.py")).unwrap();
    });
}

/// `mode sha256` of a snapshot entry (`mode mtime sha256`): what undo must put back.
fn mode_and_bytes(entry: &str) -> String {
    let parts: Vec<&str> = entry.split(' ').collect();
    format!("{} {}", parts[0], parts[parts.len() - 1])
}

/// The working tree (with each file's mode, time and bytes, and each folder's time), the index,
/// `HEAD` and the checked-out branch's ref: what branch mode must leave byte-identical.
pub(super) fn checked_out(repo: &Path) -> Vec<(String, String)> {
    let kept = [".git/index", ".git/HEAD", ".git/refs/heads/main"];
    snapshot(repo)
        .into_iter()
        .filter(|(path, _)| !path.starts_with(".git/") || kept.contains(&path.as_str()))
        .collect()
}

pub(super) fn identity() -> Identity {
    Identity {
        name: "Ada".into(),
        email: "ada@example.invalid".into(),
    }
}

#[test]
fn an_approved_change_lands_in_the_working_tree_and_undo_puts_back_every_byte() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    let run = run_on(&repo, four_kinds);
    let before = snapshot(&repo);
    let mut expected_after = listing(&repo);
    let util = expected_after.remove("src/util.py").unwrap();
    expected_after.remove("docs/guide.md");
    expected_after.insert("lib/".into(), String::new());
    expected_after.insert("lib/util.py".into(), util);
    expected_after.insert("src/app.py".into(), "def answer():\n    return 43\n".into());
    expected_after.insert("src/added.py".into(), "ADDED = 1\n".into());

    let applied = apply_to_tree(&run.record, &run.patch, &run.sha, &run.dir).unwrap();

    assert_eq!(
        (applied.destination, listing(&repo)),
        (Destination::WorkingTree, expected_after)
    );
    undo(&run.dir, &run.patch).unwrap();
    let restored: Vec<(String, String)> = snapshot(&repo)
        .into_iter()
        .filter(|(path, _)| !path.ends_with('/') && path != ".")
        .map(|(path, value)| (path, mode_and_bytes(&value)))
        .collect();
    let original: Vec<(String, String)> = before
        .into_iter()
        .filter(|(path, _)| !path.ends_with('/') && path != ".")
        .map(|(path, value)| (path, mode_and_bytes(&value)))
        .collect();
    assert_eq!(
        restored, original,
        "undo did not restore every file's bytes"
    );
}

#[test]
fn a_stale_sha_or_a_changed_patch_file_applies_nothing() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    let run = run_on(&repo, four_kinds);
    let before = snapshot(&repo);

    let stale = apply_to_tree(&run.record, &run.patch, &sha256_hex(b"other"), &run.dir);
    fs::write(&run.patch, "diff --git a/x b/x\n").unwrap();
    let changed = apply_to_tree(&run.record, &run.patch, &run.sha, &run.dir);

    assert!(
        matches!(stale, Err(HomeError::PatchChanged { .. })),
        "{stale:?}"
    );
    assert!(
        matches!(changed, Err(HomeError::PatchChanged { .. })),
        "{changed:?}"
    );
    assert_eq!(snapshot(&repo), before);
}

#[test]
fn a_file_the_user_changed_during_the_run_refuses_the_whole_apply_and_names_it() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    let run = run_on(&repo, four_kinds);
    write(
        &repo,
        "src/app.py",
        "def answer():\n    return 7  # the user's own edit\n",
    );
    let before = snapshot(&repo);

    let refused = apply_to_tree(&run.record, &run.patch, &run.sha, &run.dir).unwrap_err();

    assert_eq!(
        refused.to_string(),
        format!(
            "src/app.py changed since the run started, so plumb applied nothing; the patch is in {}: merge it by hand, or run plumb fix again",
            run.patch.display()
        )
    );
    assert_eq!(snapshot(&repo), before);
    assert!(run.patch.is_file());
}

#[test]
fn undo_is_refused_when_the_user_changed_an_applied_file() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    let run = run_on(&repo, four_kinds);
    apply_to_tree(&run.record, &run.patch, &run.sha, &run.dir).unwrap();
    write(&repo, "src/added.py", "ADDED = 2\n");

    let refused = undo(&run.dir, &run.patch).unwrap_err();

    assert!(
        refused
            .to_string()
            .starts_with("src/added.py changed since plumb applied the change"),
        "{refused}"
    );
    assert_eq!(
        fs::read_to_string(repo.join("src/added.py")).unwrap(),
        "ADDED = 2\n"
    );
}

#[test]
fn a_change_under_a_link_in_the_users_tree_is_refused() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    let run = run_on(&repo, |root| write(root, "docs/guide.md", "new guide\n"));
    // The user's docs/ became a link to a folder elsewhere while the run went.
    let elsewhere = tmp.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("guide.md"), "guide\n").unwrap();
    fs::rename(repo.join("docs"), tmp.path().join("old-docs")).unwrap();
    link(&repo, "docs", &elsewhere);

    let refused = apply_to_tree(&run.record, &run.patch, &run.sha, &run.dir).unwrap_err();

    assert!(matches!(refused, HomeError::UnderALink { .. }), "{refused}");
    assert_eq!(
        fs::read_to_string(elsewhere.join("guide.md")).unwrap(),
        "guide\n"
    );
}

#[test]
fn branch_mode_commits_on_a_new_branch_and_leaves_head_index_and_tree_byte_identical() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    // Changes only committed files, so the change applies to HEAD.
    let run = run_on(&repo, |root| {
        write(
            root,
            "src/util.py",
            "def helper():\n    return 'more help'\n",
        );
        write(root, "src/added.py", "ADDED = 1\n");
    });
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let before = checked_out(&repo);

    let made = commit_on_branch(
        &run.record,
        &run.patch,
        &run.sha,
        &NewBranch {
            name: "plumb/fix-1",
            message: "Fix the helper\n",
            identity: &identity(),
        },
        &run.dir,
    )
    .unwrap();

    assert_eq!(
        checked_out(&repo),
        before,
        "the working tree, index or HEAD changed"
    );
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), head);
    let branch = git(&repo, &["rev-parse", "plumb/fix-1"]);
    assert_eq!(branch.trim(), made.commit);
    assert_eq!(
        (
            git(&repo, &["rev-parse", "plumb/fix-1^"]),
            git(&repo, &["show", "plumb/fix-1:src/util.py"]),
            git(&repo, &["show", "plumb/fix-1:src/added.py"]),
            git(
                &repo,
                &["log", "-1", "--format=%an <%ae>|%s", "plumb/fix-1"]
            ),
        ),
        (
            head,
            "def helper():\n    return 'more help'\n".to_string(),
            "ADDED = 1\n".to_string(),
            "Ada <ada@example.invalid>|Fix the helper\n".to_string()
        )
    );

    // Undo deletes the branch while it still points at plumb's commit.
    undo(&run.dir, &run.patch).unwrap();
    assert_eq!(git(&repo, &["branch", "--list", "plumb/fix-1"]), "");
}

#[test]
fn branch_mode_refuses_an_existing_branch_a_change_made_on_uncommitted_files_and_a_moved_branch() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    // src/app.py has an uncommitted change in the sample repository: the run's change is made on it.
    let on_uncommitted = run_on(&repo, |root| {
        write(root, "src/app.py", "def answer():\n    return 43\n")
    });
    let on_committed = run_on(&repo, |root| write(root, "README.md", "# sample, better\n"));
    git(&repo, &["branch", "taken"]);
    let before = checked_out(&repo);

    let exists = commit_on_branch(
        &on_committed.record,
        &on_committed.patch,
        &on_committed.sha,
        &NewBranch {
            name: "taken",
            message: "m\n",
            identity: &identity(),
        },
        &on_committed.dir,
    );
    let not_on_head = commit_on_branch(
        &on_uncommitted.record,
        &on_uncommitted.patch,
        &on_uncommitted.sha,
        &NewBranch {
            name: "new",
            message: "m\n",
            identity: &identity(),
        },
        &on_uncommitted.dir,
    );
    let bad_name = commit_on_branch(
        &on_committed.record,
        &on_committed.patch,
        &on_committed.sha,
        &NewBranch {
            name: "bad..name",
            message: "m\n",
            identity: &identity(),
        },
        &on_committed.dir,
    );

    assert!(
        matches!(exists, Err(HomeError::BranchExists { .. })),
        "{exists:?}"
    );
    assert!(
        matches!(not_on_head, Err(HomeError::NotOnHead { .. })),
        "{not_on_head:?}"
    );
    assert!(
        matches!(bad_name, Err(HomeError::BadBranchName { .. })),
        "{bad_name:?}"
    );
    assert_eq!(git(&repo, &["branch", "--list", "new"]), "");
    commit_on_branch(
        &on_committed.record,
        &on_committed.patch,
        &on_committed.sha,
        &NewBranch {
            name: "fix",
            message: "m\n",
            identity: &identity(),
        },
        &on_committed.dir,
    )
    .unwrap();
    assert_eq!(checked_out(&repo), before);
    git(&repo, &["branch", "-f", "fix", "HEAD"]);
    let moved = undo(&on_committed.dir, &on_committed.patch);
    assert!(
        matches!(moved, Err(HomeError::BranchMoved { .. })),
        "{moved:?}"
    );
    assert_eq!(git(&repo, &["branch", "--list", "fix"]).trim(), "fix");
}

/// plumb's branch-name rules agree with git's own (`git check-ref-format --branch`) on names
/// from each rule and its edges; plumb refuses more only where it says so: a lone `@` (git takes
/// it for HEAD's branch) and characters that do not show as themselves.
#[test]
fn branch_names_are_judged_as_git_judges_them() {
    let tmp = TempDir::new().unwrap();
    let names = [
        "fix",
        "plumb/fix-1",
        "a.b",
        "a/b/c",
        "é",
        "foo/HEAD",
        "HEADS",
        "a-",
        "x@y",
        "a{b",
        "HEAD",
        "-x",
        "a-/-b",
        "",
        "a..b",
        "a.",
        "a/",
        "/a",
        "a//b",
        ".a",
        "a/.b",
        "a.lock",
        "a.lock/b",
        "a@{1}",
        "@{-1}",
        "a b",
        "a~",
        "a^",
        "a:b",
        "a?",
        "a*",
        "a[b",
        "a\\b",
        "a\tb",
        "a\u{7f}b",
        "a\u{1b}b",
    ];

    let disagree: Vec<(&str, bool, bool)> = names
        .iter()
        .map(|name| {
            let plumb = plumb_workspace::check_branch_name(name).is_ok();
            let git = std::process::Command::new("git")
                .args(["check-ref-format", "--branch", name])
                .current_dir(tmp.path())
                .output()
                .unwrap()
                .status
                .success();
            (*name, plumb, git)
        })
        .filter(|(_, plumb, git)| plumb != git)
        .collect();
    let plumb_only = ["@", "a\u{202e}b", "a\u{200b}b"]
        .map(|name| (name, plumb_workspace::check_branch_name(name).is_ok()));

    assert_eq!(
        (disagree, plumb_only),
        (
            Vec::new(),
            [("@", false), ("a\u{202e}b", false), ("a\u{200b}b", false)]
        )
    );
}

/// A real fault, no seam: `applied.json` cannot be written (a folder stands where its temporary
/// file goes). The apply changes no file and leaves no record; once applied, an undo that cannot
/// write its record leaves the change in and the record saying so. (Before, the apply left the
/// change in the files with no record, and the undo put the files back under a record that still
/// said "applied".)
#[test]
fn a_record_that_cannot_be_written_leaves_the_files_as_the_record_says() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    let run = run_on(&repo, four_kinds);
    let before = listing(&repo);
    let blocker = run.dir.join("applied.json.tmp");
    fs::create_dir(&blocker).unwrap();

    let refused = apply_to_tree(&run.record, &run.patch, &run.sha, &run.dir);
    let after_refusal = (listing(&repo), run.dir.join("applied.json").exists());
    fs::remove_dir(&blocker).unwrap();
    apply_to_tree(&run.record, &run.patch, &run.sha, &run.dir).unwrap();
    let applied = listing(&repo);
    fs::create_dir(&blocker).unwrap();
    let not_undone = undo(&run.dir, &run.patch);
    let record: plumb_workspace::Applied =
        serde_json::from_str(&fs::read_to_string(run.dir.join("applied.json")).unwrap()).unwrap();

    assert!(
        refused.is_err() && not_undone.is_err(),
        "{refused:?} {not_undone:?}"
    );
    assert_eq!(
        (after_refusal, listing(&repo), record.state),
        (
            (before, false),
            applied,
            plumb_workspace::HomeState::Applied
        )
    );
}

/// A run applied by a plumb from before the records' states (`undone: false`, the old bytes as
/// `applied/<n>` listed in `applied/saved.json`) is listed as applied, and undone from those bytes.
#[test]
fn a_change_applied_by_an_older_plumb_is_undone_from_its_saved_bytes() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    let run = run_on(&repo, four_kinds);
    let before = listing(&repo);
    let saved_dir = run.dir.join("applied");
    fs::create_dir_all(&saved_dir).unwrap();
    let mut saved = Vec::new();
    for (index, touched) in run.record.files.iter().enumerate() {
        if touched.before.is_none() {
            saved.push(serde_json::Value::Null);
            continue;
        }
        let path = repo.join(touched.before_path());
        let mode = fs::symlink_metadata(&path).unwrap().permissions().mode() & 0o7777;
        fs::write(saved_dir.join(index.to_string()), fs::read(&path).unwrap()).unwrap();
        saved.push(serde_json::json!({"name": index.to_string(), "mode": mode}));
    }
    fs::write(
        saved_dir.join("saved.json"),
        serde_json::to_string(&saved).unwrap(),
    )
    .unwrap();
    apply_to_tree(&run.record, &run.patch, &run.sha, &run.dir).unwrap();
    let older = serde_json::json!({
        "repo": repo,
        "patch_sha256": run.sha,
        "destination": {"into": "working_tree"},
        "files": run.record.files,
        "at_ms": 1,
        "undone": false,
    });
    fs::write(run.dir.join("applied.json"), older.to_string()).unwrap();
    let listed: plumb_workspace::Applied =
        serde_json::from_str(&fs::read_to_string(run.dir.join("applied.json")).unwrap()).unwrap();

    let undone = undo(&run.dir, &run.patch).unwrap();

    assert_eq!(
        (listed.state, undone.state, listing(&repo)),
        (
            plumb_workspace::HomeState::Applied,
            plumb_workspace::HomeState::Undone,
            before
        )
    );
}
