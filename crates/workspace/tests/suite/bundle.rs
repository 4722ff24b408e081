//! The verified change as a `git bundle`: one commit on `plumb/<task>` whose parent is the
//! source's `HEAD` (the bundle's only prerequisite), fetched into a clone of the source; a source
//! without git gets its baseline in the bundle too; a change that does not apply to `HEAD` is
//! refused saying so. The source repository is never written.

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use plumb_workspace::{BundleError, BundleRequest, Identity, bundle_change};

use super::home::{Run, identity, run_on};
use super::{git, plain_source, sample_repo, snapshot, write};

/// Where a test's bundle goes: the scratch folder, the bundle file, the run's shadow git.
struct Places {
    scratch: PathBuf,
    out: PathBuf,
    shadow: PathBuf,
    identity: Identity,
}

impl Places {
    fn new(tmp: &Path, run: &Run, scratch: &str) -> Places {
        Places {
            scratch: tmp.join(scratch),
            out: tmp.join("change.bundle"),
            shadow: run.dir.join("shadow.git"),
            identity: identity(),
        }
    }
}

fn request<'a>(source: &'a Path, run: &'a Run, places: &'a Places) -> BundleRequest<'a> {
    BundleRequest {
        source,
        shadow: &places.shadow,
        patch: &run.patch,
        patch_sha256: &run.sha,
        branch: "plumb/t1",
        message: "Fix the answer\n",
        identity: &places.identity,
        scratch: &places.scratch,
        out: &places.out,
    }
}

/// A sample repository with its changes committed, so `HEAD` is what the run copies.
fn committed_repo(tmp: &Path) -> std::path::PathBuf {
    let repo = sample_repo(tmp);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "second"]);
    repo
}

#[test]
fn the_bundle_holds_one_commit_on_the_sources_head_that_a_clone_can_fetch() {
    let tmp = TempDir::new().unwrap();
    let repo = committed_repo(tmp.path());
    let head = git(&repo, &["rev-parse", "HEAD"]).trim().to_owned();
    let run = run_on(&repo, |root| {
        write(root, "src/app.py", "def answer():\n    return 43\n");
    });
    let before = snapshot(&repo);
    let places = Places::new(tmp.path(), &run, "scratch");
    let out = &places.out;
    let made = bundle_change(&request(&repo, &run, &places)).unwrap();
    assert_eq!(snapshot(&repo), before, "the source was written");
    assert_eq!(
        (made.base.as_str(), made.base_is_source_head),
        (head.as_str(), true)
    );

    let clone = tmp.path().join("clone");
    git(
        tmp.path(),
        &["clone", "-q", &repo.display().to_string(), "clone"],
    );
    let heads = git(
        &clone,
        &["bundle", "list-heads", &out.display().to_string()],
    );
    assert_eq!(heads, format!("{} refs/heads/plumb/t1\n", made.commit));
    git(
        &clone,
        &[
            "fetch",
            "-q",
            &out.display().to_string(),
            "plumb/t1:plumb/t1",
        ],
    );
    assert_eq!(git(&clone, &["rev-parse", "plumb/t1^"]).trim(), head);
    assert_eq!(
        git(&clone, &["rev-list", "--count", "HEAD..plumb/t1"]).trim(),
        "1"
    );
    assert_eq!(
        git(&clone, &["show", "plumb/t1:src/app.py"]),
        "def answer():\n    return 43\n"
    );
    assert_eq!(
        git(&clone, &["log", "-1", "--format=%an <%ae>%n%B", "plumb/t1"]).trim(),
        "Ada <ada@example.invalid>\nFix the answer"
    );
    // Only the change travels: the bundle names HEAD as what the receiver must have.
    let verify = std::process::Command::new("git")
        .args(["bundle", "verify", &out.display().to_string()])
        .current_dir(&clone)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&verify.stderr).to_string()
        + &String::from_utf8_lossy(&verify.stdout);
    assert!(
        said.contains("requires this ref") && said.contains(&head),
        "{said}"
    );
}

#[test]
fn a_source_without_git_gets_its_baseline_in_the_bundle() {
    let tmp = TempDir::new().unwrap();
    let source = plain_source(tmp.path());
    let run = run_on(&source, |root| write(root, "a.py", "A = 2\n"));
    let places = Places::new(tmp.path(), &run, "scratch");
    let out = &places.out;
    let made = bundle_change(&request(&source, &run, &places)).unwrap();
    assert!(!made.base_is_source_head);

    let fresh = tmp.path().join("fresh");
    fs::create_dir_all(&fresh).unwrap();
    git(&fresh, &["init", "-q"]);
    git(
        &fresh,
        &[
            "fetch",
            "-q",
            &out.display().to_string(),
            "plumb/t1:plumb/t1",
        ],
    );
    assert_eq!(git(&fresh, &["rev-parse", "plumb/t1^"]).trim(), made.base);
    assert_eq!(git(&fresh, &["show", "plumb/t1:a.py"]), "A = 2\n");
    assert_eq!(git(&fresh, &["show", "plumb/t1^:a.py"]), "A = 1\n");
}

#[test]
fn a_change_that_does_not_apply_to_head_is_refused_and_a_changed_patch_too() {
    let tmp = TempDir::new().unwrap();
    // The sample repository's src/app.py differs from HEAD in the working tree the run copied.
    let repo = sample_repo(tmp.path());
    let run = run_on(&repo, |root| {
        write(root, "src/app.py", "def answer():\n    return 43\n");
    });
    let places = Places::new(tmp.path(), &run, "scratch");
    let refused = bundle_change(&request(&repo, &run, &places)).unwrap_err();
    assert!(
        matches!(&refused, BundleError::NotOnBase { detail, .. } if detail.contains("src/app.py")),
        "{refused}"
    );
    assert!(!places.out.exists());

    fs::write(&run.patch, "tampered").unwrap();
    let places = Places::new(tmp.path(), &run, "scratch2");
    let refused = bundle_change(&request(&repo, &run, &places)).unwrap_err();
    assert!(
        matches!(refused, BundleError::PatchChanged { .. }),
        "{refused}"
    );
}

#[test]
fn a_shallow_clone_as_the_source_gives_a_bundle_on_its_head() {
    let tmp = TempDir::new().unwrap();
    let repo = committed_repo(tmp.path());
    let url = format!("file://{}", repo.display());
    git(
        tmp.path(),
        &["clone", "-q", "--depth", "1", &url, "shallow"],
    );
    let shallow = tmp.path().join("shallow");
    let run = run_on(&shallow, |root| write(root, "README.md", "# sampled\n"));
    let places = Places::new(tmp.path(), &run, "scratch");
    let made = bundle_change(&request(&shallow, &run, &places)).unwrap();
    assert!(made.base_is_source_head);

    let clone = tmp.path().join("clone");
    git(
        tmp.path(),
        &["clone", "-q", &repo.display().to_string(), "clone"],
    );
    let out = places.out.display().to_string();
    git(&clone, &["fetch", "-q", &out, "plumb/t1:plumb/t1"]);
    assert_eq!(git(&clone, &["show", "plumb/t1:README.md"]), "# sampled\n");
    assert_eq!(
        git(&clone, &["rev-parse", "plumb/t1^"]),
        git(&clone, &["rev-parse", "HEAD"])
    );
}
