//! `plumb config show [--repo PATH] [--json]`: every effective setting as `plumb fix` in that
//! repository would have it (the user's file, the repository's file under its rules, `-c`), its
//! value and its source, then the repository settings left out and why.

use std::path::{Path, PathBuf};

use plumb_protocol::{Provenance, Setting};
use serde_json::json;

use crate::args::{ConfigArgs, ConfigCommand, ConfigShowArgs};
use crate::{Failure, screen, setup};

/// The widest value column; longer values push their source further right.
const VALUE_COLUMN: usize = 32;

pub(crate) fn run(args: ConfigArgs, overrides: &[String]) -> Result<i32, Failure> {
    match args.command {
        ConfigCommand::Show(show) => show_settings(show, overrides),
    }
}

fn show_settings(args: ConfigShowArgs, overrides: &[String]) -> Result<i32, Failure> {
    let repo = repo_folder(args.repo)?;
    let loaded = setup::load_config(Some(&repo), overrides.to_vec(), Vec::new())?;
    let user_file = setup::user_settings_file();
    if args.json {
        let value = json!({
            "repo": repo.display().to_string(),
            "user_file": user_file.as_ref().map(|p| p.display().to_string()),
            "settings": loaded.provenance.settings,
            "ignored_settings": loaded.provenance.ignored,
        });
        match serde_json::to_string_pretty(&value) {
            Ok(text) => screen::json_out(&text),
            Err(err) => {
                return Err(Failure::infra(format!(
                    "the settings could not be written as JSON: {err}"
                )));
            }
        }
    } else {
        // A value from the repository's file is the repository's text: shown, never interpreted.
        screen::out(&render(&repo, user_file.as_deref(), &loaded.provenance));
    }
    Ok(0)
}

/// `--repo`, else the current folder; it must be a folder.
fn repo_folder(given: Option<PathBuf>) -> Result<PathBuf, Failure> {
    let path = match given {
        Some(path) => path,
        None => std::env::current_dir().map_err(|err| {
            Failure::bad_input(format!(
                "the current folder cannot be read ({err}); pass --repo PATH"
            ))
        })?,
    };
    if !path.is_dir() {
        return Err(Failure::bad_input(format!(
            "--repo {} is not a folder; pass the folder of the repository whose settings to show",
            path.display()
        )));
    }
    path.canonicalize().map_err(|err| {
        Failure::bad_input(format!("--repo {} cannot be opened: {err}", path.display()))
    })
}

/// The listing: where the settings were looked for, one line per setting (key, value, source),
/// then the repository settings left out.
fn render(repo: &Path, user_file: Option<&Path>, provenance: &Provenance) -> String {
    let mut out = String::new();
    let user = match user_file {
        Some(path) if path.is_file() => path.display().to_string(),
        Some(path) => format!("{} (none there)", path.display()),
        None => "none (neither XDG_CONFIG_HOME nor HOME is set)".to_string(),
    };
    out.push_str(&format!("your settings file: {user}\n"));
    out.push_str(&format!(
        "repository: {} (its {} may only tighten yours)\n\n",
        repo.display(),
        plumb_config::REPO_FILES.join(" or ")
    ));
    let key_width = provenance
        .settings
        .iter()
        .map(|s| s.key.chars().count())
        .max()
        .unwrap_or(0);
    let value_width = provenance
        .settings
        .iter()
        .map(|s| s.value.chars().count())
        .max()
        .unwrap_or(0)
        .min(VALUE_COLUMN);
    for setting in &provenance.settings {
        out.push_str(&format!(
            "{:<key_width$} = {:<value_width$}  {}\n",
            setting.key,
            setting.value,
            source_words(setting)
        ));
    }
    if !provenance.ignored.is_empty() {
        out.push_str("\nleft out:\n");
        for ignored in &provenance.ignored {
            out.push_str(&format!("  {}\n", ignored.sentence()));
        }
    }
    out
}

/// "your settings file PATH", with the repository named when it added entries to the list.
fn source_words(setting: &Setting) -> String {
    let mut words = setting.source.describe();
    for added in &setting.added_by {
        words.push_str(&format!(", added to by {}", added.describe()));
    }
    words
}

#[cfg(test)]
mod tests {
    use plumb_protocol::{IgnoredSetting, SettingSource};
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn each_setting_has_its_value_and_source_and_what_was_left_out_follows() {
        let provenance = Provenance {
            settings: vec![
                Setting {
                    key: "limits.max_rounds".into(),
                    value: "5".into(),
                    source: SettingSource::RepoFile {
                        path: "/r/plumb.toml".into(),
                    },
                    added_by: Vec::new(),
                },
                Setting {
                    key: "protected_paths".into(),
                    value: "[\"a/\", \"b/\"]".into(),
                    source: SettingSource::UserFile {
                        path: "/u/plumb.toml".into(),
                    },
                    added_by: vec![SettingSource::RepoFile {
                        path: "/r/plumb.toml".into(),
                    }],
                },
                Setting {
                    key: "sandbox".into(),
                    value: "\"bwrap\"".into(),
                    source: SettingSource::Default,
                    added_by: Vec::new(),
                },
            ],
            ignored: vec![IgnoredSetting {
                file: "plumb.toml".into(),
                key: "sandbox".into(),
                value: "\"none\"".into(),
                reason: "only your own settings or flags can choose the sandbox".into(),
            }],
        };
        let actual = render(Path::new("/r"), None, &provenance);
        let expected = "\
your settings file: none (neither XDG_CONFIG_HOME nor HOME is set)
repository: /r (its plumb.toml or .plumb/plumb.toml may only tighten yours)

limits.max_rounds = 5             the repository's /r/plumb.toml
protected_paths   = [\"a/\", \"b/\"]  your settings file /u/plumb.toml, added to by the repository's /r/plumb.toml
sandbox           = \"bwrap\"       the default

left out:
  the repository's plumb.toml sets sandbox = \"none\"; ignored: only your own settings or flags can choose the sandbox
";
        assert_eq!(actual, expected);
    }
}
