//! `plumb config show`: every effective setting with its value and source, and the repository
//! settings left out, as text and as JSON; bad input is exit 2 naming what to change.

use plumb_protocol::{IgnoredSetting, Setting, SettingSource};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::common::{plumb_command, stderr};

/// A repository whose `plumb.toml` lowers the rounds and asks for no sandbox, a user's file that
/// picks a model, and a private home.
struct Layers {
    repo: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Layers {
    fn new(repo_settings: &str) -> Self {
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join("plumb.toml"), repo_settings).unwrap();
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("config").join("plumb");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("plumb.toml"), "model = \"openai:gpt-4.1\"\n").unwrap();
        Self { repo, home }
    }

    fn show(&self, extra: &[&str]) -> std::process::Output {
        plumb_command(self.home.path())
            .args(["config", "show", "--repo"])
            .arg(self.repo.path())
            .args(["-c", "limits.cpus=1"])
            .args(extra)
            .output()
            .unwrap()
    }

    fn user_file(&self) -> String {
        self.home
            .path()
            .join("config/plumb/plumb.toml")
            .display()
            .to_string()
    }

    fn repo_file(&self) -> String {
        self.repo.path().join("plumb.toml").display().to_string()
    }
}

const REPO_SETTINGS: &str = "sandbox = \"none\"\n[limits]\nmax_rounds = 5\n";

#[test]
fn config_show_prints_each_setting_with_its_source_and_what_was_left_out() {
    let layers = Layers::new(REPO_SETTINGS);
    let output = layers.show(&[]);

    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    let actual = (
        output.status.code(),
        line("model"),
        line("limits.max_rounds"),
        line("limits.cpus"),
        line("sandbox"),
        text.contains(
            "left out:\n  the repository's plumb.toml sets sandbox = \"none\"; ignored: only your own settings or flags can choose the sandbox\n",
        ),
    );
    let expected = (
        Some(0),
        Some(format!(
            "model = \"openai:gpt-4.1\" your settings file {}",
            layers.user_file()
        )),
        Some(format!(
            "limits.max_rounds = 5 the repository's {}",
            layers.repo_file()
        )),
        Some("limits.cpus = 1 -c limits.cpus=1".to_string()),
        Some("sandbox = \"bwrap\" the default".to_string()),
        true,
    );
    assert_eq!(
        actual,
        expected,
        "stdout:\n{text}\nstderr: {}",
        stderr(&output)
    );
}

#[test]
fn config_show_json_has_the_settings_and_the_ignored_ones() {
    let layers = Layers::new(REPO_SETTINGS);
    let output = layers.show(&["--json"]);

    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    let settings: Vec<Setting> = serde_json::from_value(value["settings"].clone()).unwrap();
    let ignored: Vec<IgnoredSetting> =
        serde_json::from_value(value["ignored_settings"].clone()).unwrap();
    let pick = |key: &str| settings.iter().find(|s| s.key == key).cloned();
    let actual = (
        output.status.code(),
        pick("limits.max_rounds"),
        pick("model").map(|s| s.source),
        ignored,
    );
    let expected = (
        Some(0),
        Some(Setting {
            key: "limits.max_rounds".into(),
            value: "5".into(),
            source: SettingSource::RepoFile {
                path: layers.repo_file(),
            },
            added_by: Vec::new(),
        }),
        Some(SettingSource::UserFile {
            path: layers.user_file(),
        }),
        vec![IgnoredSetting {
            file: "plumb.toml".into(),
            key: "sandbox".into(),
            value: "\"none\"".into(),
            reason: "only your own settings or flags can choose the sandbox".into(),
        }],
    );
    assert_eq!(actual, expected);
}

#[test]
fn config_show_names_a_bad_repository_file_and_a_missing_folder() {
    let layers = Layers::new("[limits]\nmax_roundz = 5\n");
    let typo = layers.show(&[]);
    let missing = plumb_command(layers.home.path())
        .args(["config", "show", "--repo", "/nonexistent/plumb-repo"])
        .output()
        .unwrap();

    let actual = (
        typo.status.code(),
        stderr(&typo).contains(&layers.repo_file()) && stderr(&typo).contains("max_roundz"),
        missing.status.code(),
        stderr(&missing),
    );
    let expected = (
        Some(2),
        true,
        Some(2),
        "plumb: --repo /nonexistent/plumb-repo is not a folder; pass the folder of the repository whose settings to show\n"
            .to_string(),
    );
    assert_eq!(actual, expected, "{}", stderr(&typo));
}
