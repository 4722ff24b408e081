//! The environment allowlist and the private HOME/TMPDIR.

use std::collections::BTreeMap;
use std::path::Path;

use plumb_sandbox::Sandbox;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::support::{Fixture, TEST_PATH, sh};

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[tokio::test]
async fn only_the_allowlist_reaches_the_command_and_home_is_private() {
    let fx = Fixture::with_parent_env(pairs(&[
        ("PATH", TEST_PATH),
        ("LANG", "C.UTF-8"),
        ("TERM", "dumb"),
        ("HOME", "/home/dev"),
        ("USER", "dev"),
        ("PLUMB_TEST_SECRET", "hunter2"),
        ("OPENAI_API_KEY", "sk-test-123"),
        ("ANTHROPIC_API_KEY", "sk-ant-test"),
        ("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock"),
        ("AWS_ACCESS_KEY_ID", "AKIATEST"),
        ("AWS_SECRET_ACCESS_KEY", "secret"),
        ("GITHUB_TOKEN", "ghp_test"),
    ]));
    let mut spec = fx.spec(&["env"]);
    spec.env = pairs(&[("PLUMB_EXTRA", "yes")]);

    let out = fx
        .sandbox
        .run(&spec, &CancellationToken::new())
        .await
        .unwrap();
    let actual: BTreeMap<String, String> = out
        .stdout
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();

    // HOME and TMPDIR are `<scratch>/cmd-XXXX/{home,tmp}`; the XXXX is random.
    let private = Path::new(&actual["HOME"]).parent().unwrap();
    assert_eq!(private.parent(), Some(fx.scratch_dir().as_path()));
    let expected: BTreeMap<String, String> = pairs(&[
        ("CI", "true"),
        ("HOME", private.join("home").to_str().unwrap()),
        ("LANG", "C.UTF-8"),
        ("PATH", TEST_PATH),
        ("PLUMB_EXTRA", "yes"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("PYTHONUNBUFFERED", "1"),
        ("TERM", "dumb"),
        ("TMPDIR", private.join("tmp").to_str().unwrap()),
    ])
    .into_iter()
    .collect();
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn private_dirs_are_fresh_per_command_and_removed_after() {
    let fx = Fixture::new();
    let spec = fx.spec(&sh(
        r#"test -d "$HOME" && test -d "$TMPDIR" && ls -A "$HOME" && touch "$HOME/.cache" && echo "$HOME""#,
    ));
    let cancel = CancellationToken::new();

    let first = fx.sandbox.run(&spec, &cancel).await.unwrap();
    let second = fx.sandbox.run(&spec, &cancel).await.unwrap();
    let left: Vec<_> = std::fs::read_dir(fx.scratch_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();

    // Both saw an existing, empty home (`ls -A` printed nothing), and not the same one.
    let actual = (
        first.exit_code,
        second.exit_code,
        first.stdout.lines().count(),
        first.stdout == second.stdout,
        left,
    );
    assert_eq!(actual, (Some(0), Some(0), 1, false, Vec::new()));
}
