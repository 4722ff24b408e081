//! The bwrap backend runs real commands: the workspace, private HOME and /tmp, the scrubbed
//! environment, Python through pyenv and the example's real test command.

use std::collections::BTreeMap;

use plumb_sandbox::{Sandbox, SandboxKind};
use pretty_assertions::assert_eq;

use super::bwrap_support::{BwrapFixture, SECRETS};
use super::run_dirs::Place;

#[tokio::test]
async fn runs_in_the_workspace_with_an_empty_private_home_and_tmp() {
    runs_in_the_workspace_with_a_private_home_and_tmp(Place::Target).await;
}

/// The private `/tmp` then holds only the read-only first folder of the workspace's path.
#[tokio::test]
async fn runs_in_a_workspace_under_tmp_with_a_private_home_and_tmp() {
    runs_in_the_workspace_with_a_private_home_and_tmp(Place::Tmp).await;
}

async fn runs_in_the_workspace_with_a_private_home_and_tmp(place: Place) {
    let fx = BwrapFixture::at(place);
    let spec = fx.spec(&[
        "sh",
        "-c",
        "cat; pwd; echo \"$HOME $TMPDIR\"; ls -A \"$HOME\" /tmp; \
         touch \"$HOME/h\" /tmp/t out.txt && echo writable; \
         touch .. 2>/dev/null || echo parent read-only; echo oops >&2; exit 3",
    ]);

    let out = fx.run(&spec).await;
    let actual = (
        out.exit_code,
        out.stdout,
        out.stderr,
        out.limits_hit,
        out.enforced[..7].to_vec(),
        std::fs::read_to_string(fx.work().join("out.txt")).is_ok(),
    );

    let expected = (
        Some(3),
        format!(
            "{}\n/home/sandbox /tmp\n/home/sandbox:\n\n/tmp:\n{}writable\nparent read-only\n",
            fx.work().display(),
            fx.tmp_listing()
        ),
        "oops\n".to_owned(),
        Vec::new(),
        [
            "timeout",
            "output cap",
            "file size",
            "no core dumps",
            "read-only system",
            "network off",
            "pid namespace",
        ]
        .map(str::to_owned)
        .to_vec(),
        true,
    );
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn kernel_limits_are_reported_with_their_mechanism() {
    let fx = BwrapFixture::new();

    let out = fx.run(&fx.spec(&["true"])).await;
    let kernel: Vec<&str> = out.enforced[7..].iter().map(String::as_str).collect();
    let memory = kernel.iter().filter(|e| e.starts_with("memory")).count();

    // Exactly one memory mechanism, always; the rest must be names we document.
    let known = [
        "memory (cgroup v1)",
        "memory (cgroup v2)",
        "memory (RLIMIT_AS)",
        "processes (cgroup v1)",
        "processes (cgroup v2)",
        "processes (RLIMIT_NPROC)",
        "cpus (cgroup v1 quota)",
        "cpus (cgroup v2 cpu.max)",
    ];
    assert_eq!(memory, 1, "{kernel:?}");
    assert!(kernel.iter().all(|e| known.contains(e)), "{kernel:?}");
    eprintln!("kernel limits enforced on this machine: {kernel:?}");
}

#[tokio::test]
async fn python_resolves_through_path_and_pytest_runs() {
    let fx = BwrapFixture::new();
    std::fs::create_dir(fx.work().join("tests")).unwrap();
    std::fs::write(
        fx.work().join("tests/test_ok.py"),
        "import os\n\ndef test_ok():\n    assert os.getcwd().endswith('work')\n",
    )
    .unwrap();
    let spec = fx.spec(&["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"]);

    let out = fx.run(&spec).await;
    let summary = out.stdout.lines().last().unwrap_or("").to_owned();

    assert_eq!(
        (
            out.exit_code,
            summary.starts_with("1 passed"),
            summary.clone()
        ),
        (Some(0), true, summary),
        "stderr: {}",
        out.stderr
    );
    // Nothing but the test file was left in the workspace.
    assert_eq!(
        super::bwrap_support::listing(&fx.work().join("tests")),
        ["test_ok.py"]
    );
}

#[tokio::test]
async fn the_environment_is_the_allowlist_and_no_secret_is_anywhere_inside() {
    let fx = BwrapFixture::new();
    let mut env_spec = fx.spec(&["env"]);
    env_spec.env = vec![("PLUMB_EXTRA".to_owned(), "yes".to_owned())];
    // bwrap stays as pid 1 inside: its own environment and argv are readable there too.
    let pid1_spec = fx.spec(&["sh", "-c", "cat /proc/1/environ; echo; cat /proc/1/cmdline"]);

    let env = fx.run(&env_spec).await;
    let pid1 = fx.run(&pid1_spec).await;
    let names: Vec<&str> = env
        .stdout
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect();
    let everything = [&env.stdout, &env.stderr, &pid1.stdout, &pid1.stderr]
        .map(String::as_str)
        .concat();
    let leaked: BTreeMap<&str, bool> = SECRETS
        .iter()
        .map(|(name, value)| (*name, everything.contains(value)))
        .collect();

    // `PWD` is bwrap's own, set by `--chdir` to the workspace.
    let mut expected_names = vec![
        "CI",
        "HOME",
        "LANG",
        "PATH",
        "PLUMB_EXTRA",
        "PWD",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
        "TMPDIR",
    ];
    expected_names.sort();
    let mut names = names;
    names.sort();
    let expected_leaks: BTreeMap<&str, bool> = SECRETS.iter().map(|(n, _)| (*n, false)).collect();
    assert_eq!(
        (env.exit_code, pid1.exit_code, names, leaked),
        (Some(0), Some(0), expected_names, expected_leaks)
    );
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error_that_says_what_to_do() {
    let fx = BwrapFixture::new();

    let err = fx
        .sandbox
        .run(
            &fx.spec(&["plumb-no-such-program", "--version"]),
            &tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap_err();

    assert_eq!(
        (err.to_string(), err.is_infra()),
        (
            "could not start `plumb-no-such-program`: not found; install it or change the command"
                .to_owned(),
            false
        )
    );
}

#[tokio::test]
async fn probe_passes_and_the_backend_names_itself() {
    let fx = BwrapFixture::new();

    let probe = fx.sandbox.probe().await.map_err(|e| e.to_string());

    assert_eq!(
        (
            probe,
            fx.sandbox.kind(),
            fx.sandbox.describe().starts_with("bwrap sandbox: ")
        ),
        (Ok(()), SandboxKind::Bwrap, true)
    );
}

#[tokio::test]
async fn doctor_reports_each_check_and_bwrap_works_here() {
    super::bwrap_support::require_bwrap();

    let checks = plumb_sandbox::check_backends().await;
    let kinds: Vec<&str> = checks.iter().map(|c| c.kind.as_str()).collect();
    let bwrap = checks.iter().find(|c| c.kind.as_str() == "bwrap").unwrap();
    let without_fix: Vec<&str> = checks
        .iter()
        .filter(|c| !c.works && c.fix.is_none())
        .map(|c| c.kind.as_str())
        .collect();

    assert_eq!(
        (kinds, bwrap.works, without_fix),
        (
            vec!["user namespaces", "bwrap", "cgroups", "runsc"],
            true,
            Vec::<&str>::new()
        ),
        "{checks:#?}"
    );
}
