//! Where each effective setting of a run came from, and the repository settings that were left
//! out (a repository's `plumb.toml` may only tighten what the user's own settings allow). The
//! final report, `plumb config show` and the run's warnings all speak these types.

use serde::{Deserialize, Serialize};

/// Where one setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SettingSource {
    /// plumb's built-in default.
    Default,
    /// The user's own settings file (`~/.config/plumb/plumb.toml`).
    UserFile { path: String },
    /// The repository's `plumb.toml` or `.plumb/plumb.toml`.
    RepoFile { path: String },
    /// A `-c key=value` on the command line; `text` is what was given.
    Override { text: String },
    /// A flag such as `--sandbox`, `--max-rounds`, `--test-cmd` or `--model`.
    Flag { flag: String },
    /// The settings recorded in a journal (`plumb replay`).
    Journal { path: String },
}

impl SettingSource {
    /// Words for a person: "the default", "your settings file PATH", "-c limits.max_rounds=9".
    pub fn describe(&self) -> String {
        match self {
            SettingSource::Default => "the default".to_owned(),
            SettingSource::UserFile { path } => format!("your settings file {path}"),
            SettingSource::RepoFile { path } => format!("the repository's {path}"),
            SettingSource::Override { text } => format!("-c {text}"),
            SettingSource::Flag { flag } => flag.clone(),
            SettingSource::Journal { path } => format!("the journal {path}"),
        }
    }
}

/// One effective setting: its dotted key, its value as TOML text and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    /// e.g. `limits.max_rounds`, `prices."openai:gpt-4.1".input`.
    pub key: String,
    /// The value as TOML writes it: `30`, `"bwrap"`, `[["pytest"]]`.
    pub value: String,
    pub source: SettingSource,
    /// For lists a repository may add to (`protected_paths`, `tamper_block`): who added entries
    /// on top of `source`'s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added_by: Vec<SettingSource>,
}

impl Setting {
    /// Who chose this value, for a warning: `--sandbox none`, `-c sandbox=none`,
    /// `sandbox = "none" in your settings file PATH`.
    pub fn chosen_by(&self) -> String {
        let (key, value) = (&self.key, &self.value);
        match &self.source {
            SettingSource::Default => format!("the default ({key} = {value})"),
            SettingSource::Flag { flag } => {
                // A flag's value as typed: a TOML string without its quotes.
                let plain = value
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .filter(|v| !v.contains(['"', '\\']))
                    .unwrap_or(value);
                format!("{flag} {plain}")
            }
            SettingSource::Override { text } => format!("-c {text}"),
            other => format!("{key} = {value} in {}", other.describe()),
        }
    }
}

/// A repository setting plumb left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoredSetting {
    /// The repository's file, relative to the repository (`plumb.toml`).
    pub file: String,
    /// The dotted key; empty when the whole file was left out.
    pub key: String,
    /// The value the repository gave, as TOML text (shortened when long).
    pub value: String,
    /// Why, as the end of a sentence: "only your own settings or flags can choose the sandbox".
    pub reason: String,
}

impl IgnoredSetting {
    /// The warning: `the repository's plumb.toml sets sandbox = "none"; ignored: only your own
    /// settings or flags can choose the sandbox`.
    pub fn sentence(&self) -> String {
        if self.key.is_empty() {
            format!(
                "the repository's {} was not read: {}",
                self.file, self.reason
            )
        } else {
            format!(
                "the repository's {} sets {} = {}; ignored: {}",
                self.file, self.key, self.value, self.reason
            )
        }
    }
}

/// Every effective setting of a run with its source, and the repository settings left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub settings: Vec<Setting>,
    pub ignored: Vec<IgnoredSetting>,
}

impl Provenance {
    /// The effective setting `key`, if it has a value.
    pub fn setting(&self, key: &str) -> Option<&Setting> {
        self.settings.iter().find(|s| s.key == key)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::{FinalReport, Outcome, SandboxKind, Timings, Usage};

    #[test]
    fn a_report_from_before_settings_still_parses() {
        let report = FinalReport {
            run_id: "r1".into(),
            repo: String::new(),
            title: String::new(),
            outcome: Outcome::Stuck,
            rounds: 3,
            patch: String::new(),
            patch_sha256: String::new(),
            journal: "/j".into(),
            checks: Vec::new(),
            flags: Vec::new(),
            flag_kinds: Vec::new(),
            review: None,
            reviews: Vec::new(),
            usage: Usage::default(),
            timings: Timings::default(),
            sandbox: SandboxKind::Bwrap,
            reason: "stuck".into(),
            workspace: "/w".into(),
            attempt_ref: None,
            settings: Vec::new(),
            ignored_settings: Vec::new(),
            helpers: Vec::new(),
        };
        let mut old = serde_json::to_value(&report).unwrap();
        let fields = old.as_object_mut().unwrap();
        fields.remove("settings");
        fields.remove("ignored_settings");
        let parsed: FinalReport = serde_json::from_value(old).unwrap();
        assert_eq!(parsed, report);
    }

    #[test]
    fn who_chose_a_setting_reads_as_the_user_typed_it() {
        let setting = |source| Setting {
            key: "sandbox".into(),
            value: "\"none\"".into(),
            source,
            added_by: Vec::new(),
        };
        let actual: Vec<String> = [
            SettingSource::Flag {
                flag: "--sandbox".into(),
            },
            SettingSource::Override {
                text: "sandbox=none".into(),
            },
            SettingSource::UserFile {
                path: "/u/plumb.toml".into(),
            },
            SettingSource::Default,
        ]
        .into_iter()
        .map(|source| setting(source).chosen_by())
        .collect();
        let expected = vec![
            "--sandbox none",
            "-c sandbox=none",
            "sandbox = \"none\" in your settings file /u/plumb.toml",
            "the default (sandbox = \"none\")",
        ];
        assert_eq!(actual, expected);
    }
}
