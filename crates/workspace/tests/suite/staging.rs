//! Staging is plumb's own walk (git never opens a file of the copy): nested repositories are their
//! files, every `.git` and a changed top `.gitmodules` are left out and reported, FIFOs anywhere
//! block nothing, a tracked file stays tracked when a new `.gitignore` matches it, the limits
//! stop the walk before anything is read, the deadline stops it in time, and a rollback succeeds
//! whatever the copy holds (stale locks in the shadow dir included).

use std::fs;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use plumb_workspace::{
    CopyLimits, KeptOut, KeptOutKind, Workspace, WorkspaceError, WorkspaceLimits,
};

use super::{git, listing, plain_source, shadow_git, write};

fn prepared(tmp: &TempDir) -> Workspace {
    let src = plain_source(tmp.path());
    Workspace::prepare(&src, &tmp.path().join("run")).unwrap()
}

/// Makes a FIFO at `path` (with its folders): what git blocked on when it opened one.
fn fifo(path: &std::path::Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn kept(path: &str, kind: KeptOutKind) -> KeptOut {
    KeptOut {
        path: path.to_string(),
        kind,
    }
}

/// The changed files as `(status letter, path)`.
fn changes(ws: &Workspace) -> Vec<(char, String)> {
    ws.changed_files()
        .unwrap()
        .iter()
        .map(|f| (f.status.letter(), f.path.clone()))
        .collect()
}

#[test]
fn nested_repositories_gitfiles_and_fifos_are_content_or_left_out_never_followed() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);
    // A repository elsewhere on the machine, which a gitfile points at.
    let host = tmp.path().join("host");
    write(&host, "secret.txt", "secret\n");
    git(&host, &["init", "-q"]);
    git(&host, &["add", "-A"]);
    git(&host, &["commit", "-q", "-m", "host"]);
    write(ws.root(), "vendor/lib/lib.py", "LIB = 1\n");
    write(
        ws.root(),
        "vendor/lib/.git",
        &format!("gitdir: {}\n", host.join(".git").display()),
    );
    // A repository without a commit, one whose HEAD is a FIFO, FIFOs where git reads its rules.
    write(ws.root(), "empty/notes.txt", "notes\n");
    git(&ws.root().join("empty"), &["init", "-q"]);
    fs::create_dir_all(ws.root().join("piped/.git/objects")).unwrap();
    fs::create_dir_all(ws.root().join("piped/.git/refs")).unwrap();
    fifo(&ws.root().join("piped/.git/HEAD"));
    write(ws.root(), "piped/code.py", "P = 1\n");
    fifo(&ws.root().join("pkg/.gitignore"));
    fifo(&ws.root().join("pkg/.gitattributes"));
    fifo(&ws.root().join("pkg/stream.py"));
    // Other spellings of `.git`, and a `.git` at the top.
    write(ws.root(), "other/.GIT", "gitdir: /\n");
    git(ws.root(), &["init", "-q"]);

    let started = Instant::now();
    ws.checkpoint("after the test").unwrap();
    let actual = (
        changes(&ws),
        ws.kept_out().unwrap(),
        ws.patch().unwrap().text.contains("Subproject"),
        started.elapsed() < Duration::from_secs(20),
    );

    let expected = (
        vec![
            ('A', "empty/notes.txt".to_string()),
            ('A', "piped/code.py".to_string()),
            ('A', "vendor/lib/lib.py".to_string()),
        ],
        vec![
            kept(".git", KeptOutKind::GitFolder),
            kept("empty/.git", KeptOutKind::GitFolder),
            kept("other/.GIT", KeptOutKind::GitFile),
            kept("piped/.git", KeptOutKind::GitFolder),
            kept("vendor/lib/.git", KeptOutKind::GitFile),
        ],
        false,
        true,
    );
    assert_eq!(actual, expected);
}

#[test]
fn the_top_gitmodules_is_the_baselines_whatever_the_agent_does_with_it() {
    let tmp = TempDir::new().unwrap();
    let src = plain_source(tmp.path());
    write(&src, ".gitmodules", "[submodule \"x\"]\n\tpath = x\n");
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();

    write(ws.root(), ".gitmodules", "[submodule \"x\n\tpath = x\n");
    let changed = (changes(&ws), ws.kept_out().unwrap());
    fs::remove_file(ws.root().join(".gitmodules")).unwrap();
    write(ws.root(), ".GITMODULES", "[submodule \"y\"]\n");
    let deleted = (changes(&ws), ws.kept_out().unwrap());
    let actual = (changed, deleted);

    let expected = (
        (
            Vec::new(),
            vec![kept(".gitmodules", KeptOutKind::GitmodulesChanged)],
        ),
        (
            Vec::new(),
            vec![
                kept(".GITMODULES", KeptOutKind::GitmodulesAdded),
                kept(".gitmodules", KeptOutKind::GitmodulesDeleted),
            ],
        ),
    );
    assert_eq!(actual, expected);
}

#[test]
fn a_tracked_file_stays_tracked_when_a_new_gitignore_matches_it() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);
    write(ws.root(), ".gitignore", "*.py\n!keep.py\n");
    write(ws.root(), "a.py", "A = 2\n");
    write(ws.root(), "new.py", "NEW = 1\n");
    write(ws.root(), "keep.py", "KEEP = 1\n");
    write(ws.root(), "pkg/__pycache__/c.pyc", "bytecode");

    let actual = changes(&ws);

    let expected = vec![
        ('A', ".gitignore".to_string()),
        ('M', "a.py".to_string()),
        ('A', "keep.py".to_string()),
    ];
    assert_eq!(actual, expected);
}

fn limited(tmp: &TempDir, limits: WorkspaceLimits) -> Workspace {
    let src = plain_source(tmp.path());
    let copy = CopyLimits {
        workspace: limits,
        ..CopyLimits::default()
    };
    Workspace::prepare_with(&src, &tmp.path().join("run"), &copy)
        .unwrap()
        .0
}

#[test]
fn past_the_limits_staging_stops_before_reading_and_says_which_limit() {
    let tmp = TempDir::new().unwrap();
    let ws = limited(
        &tmp,
        WorkspaceLimits {
            max_files: 50,
            max_bytes: 1 << 20,
        },
    );
    for n in 0..60 {
        write(ws.root(), &format!("many/{n}"), "");
    }
    let too_many = ws.checkpoint("many").unwrap_err();
    fs::remove_dir_all(ws.root().join("many")).unwrap();
    // 10 GB long, none of it on disk: refused by its length alone, in no time.
    fs::File::create(ws.root().join("disk.img"))
        .unwrap()
        .set_len(10 << 30)
        .unwrap();
    let started = Instant::now();
    let too_long = ws.checkpoint("long").unwrap_err();
    let took = started.elapsed();
    fs::remove_file(ws.root().join("disk.img")).unwrap();
    // Ignored output counts one name per ignored folder, its content not at all.
    for n in 0..60 {
        write(
            ws.root(),
            &format!("__pycache__/{n}.pyc"),
            &"x".repeat(100_000),
        );
    }
    let ignored = ws.checkpoint("ignored output");

    let actual = (
        (
            too_many.is_budget(),
            too_many.is_infra(),
            too_many.to_string(),
        ),
        (too_long.is_budget(), too_long.to_string()),
        took < Duration::from_secs(2),
        ignored.is_ok(),
    );
    let expected = (
        (
            true,
            false,
            "the workspace holds more than limits.max_workspace_files (50) files and folders (ignored build output counts one name per ignored folder); plumb stopped before reading any of it. Remove what filled it, or raise limits.max_workspace_files in your own settings".to_string(),
        ),
        (
            true,
            "the workspace's files are longer than limits.max_workspace_bytes (1.0 MiB) together (ignored build output not counted); plumb stopped before reading any of them. Remove what filled it, or raise limits.max_workspace_bytes in your own settings".to_string(),
        ),
        true,
        true,
    );
    assert_eq!(actual, expected);
}

#[test]
fn past_the_deadline_staging_says_so_and_the_rollback_still_succeeds() {
    let tmp = TempDir::new().unwrap();
    let mut ws = prepared(&tmp);
    let at_baseline = listing(ws.root());
    write(ws.root(), "a.py", "A = 9\n");
    ws.set_deadline(Some(Instant::now()));

    let staged = ws.checkpoint("late").unwrap_err();
    let rolled = ws.rollback(ws.baseline());

    let actual = (
        matches!(staged, WorkspaceError::OutOfTime { .. }),
        staged.is_budget(),
        rolled.is_ok(),
        listing(ws.root()) == at_baseline,
    );
    assert_eq!(actual, (true, true, true, true));
}

#[test]
fn a_rollback_succeeds_over_fifos_and_stale_locks_and_keeps_ignored_output() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);
    let at_baseline = listing(ws.root());
    write(ws.root(), "a.py", "A = 5\n");
    let edited = ws.checkpoint("edit").unwrap();
    fifo(&ws.root().join("lib/.git/HEAD"));
    fifo(&ws.root().join("pkg/.gitignore"));
    write(ws.root(), "pkg/__pycache__/c.pyc", "bytecode");
    // An agent's .gitignore cannot keep its files through a rollback.
    write(ws.root(), ".gitignore", "*\n");
    write(ws.root(), "left.py", "LEFT = 1\n");
    // Locks a killed git could have left.
    fs::write(ws.git_dir().join("index.lock"), "").unwrap();
    fs::write(ws.git_dir().join("refs/heads/plumb.lock"), "").unwrap();

    ws.rollback(ws.baseline()).unwrap();
    let mut after = listing(ws.root());
    let pycache = after.remove("pkg/__pycache__/c.pyc");
    after.remove("pkg/__pycache__/");
    let leftovers: Vec<String> = fs::read_dir(ws.run_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(plumb_workspace::DISCARDED_PREFIX) || name == "work.next")
        .collect();
    let actual = (
        after == at_baseline,
        pycache,
        ws.head().unwrap() == *ws.baseline(),
        ws.git_dir().join("refs/heads/plumb.lock").exists(),
        leftovers,
        shadow_git(ws.git_dir(), &["cat-file", "-t", edited.as_str()]),
    );

    let expected = (
        true,
        Some("bytecode".to_string()),
        true,
        false,
        Vec::<String>::new(),
        "commit\n".to_string(),
    );
    assert_eq!(actual, expected);
}

#[test]
fn a_file_rewritten_with_its_length_and_time_kept_is_still_seen_changed() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);
    // Settled files are remembered by their `lstat` at the next staging.
    std::thread::sleep(Duration::from_millis(2100));
    ws.checkpoint("remembered").unwrap();
    let path = ws.root().join("a.py");
    let modified = fs::metadata(&path).unwrap().modified().unwrap();

    // Same length, same modification time: only the change time tells.
    fs::write(&path, "A = 7\n").unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    let actual = changes(&ws);

    assert_eq!(actual, vec![('M', "a.py".to_string())]);
}

#[test]
fn a_rollback_touches_only_what_differs_and_removes_every_stray() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);
    let at_baseline = listing(ws.root());
    let inode = |rel: &str| {
        use std::os::unix::fs::MetadataExt;
        fs::symlink_metadata(ws.root().join(rel)).unwrap().ino()
    };
    let untouched = inode("pkg/d.py");
    write(ws.root(), "a.py", "A = 5\n");
    fs::remove_file(ws.root().join("b.py")).unwrap();
    fs::create_dir(ws.root().join("b.py")).unwrap();
    write(ws.root(), "b.py/inside.py", "I = 1\n");
    fs::remove_file(ws.root().join("pkg/c.py")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", ws.root().join("pkg/c.py")).unwrap();
    write(ws.root(), "new/deep/file.py", "N = 1\n");
    fs::create_dir_all(ws.root().join("empty/inner")).unwrap();
    fifo(&ws.root().join("pkg/pipe"));
    write(ws.root(), "sub/code.py", "S = 1\n");
    git(&ws.root().join("sub"), &["init", "-q"]);

    ws.rollback(ws.baseline()).unwrap();
    let actual = (listing(ws.root()), inode("pkg/d.py") == untouched);

    assert_eq!(actual, (at_baseline, true));
}
