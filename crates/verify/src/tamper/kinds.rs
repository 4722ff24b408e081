//! The kinds of finding and which of them block.
//!
//! A flag asks a person to look; a blocked flag fails the ladder's tamper step, so no patch
//! carrying it is ever verified. Two kinds block by default, because nobody reviewing a diff can
//! be expected to catch them and both survive `git apply` into the user's repository: a symbolic
//! link out of the tree (the next run, or any tool, reads a host file through it) and a
//! bidirectional control character (the Trojan Source class: the text reads differently from
//! what runs). `block` adds kinds; `unblock` turns a default-blocked kind back into a flag, and is
//! meant to come from the user's own settings only (a repository's file must not loosen it).

use serde::{Deserialize, Serialize};

use super::TamperFlag;

/// What kind of tampering or hazard a flag is about; the names in `plumb.toml` are the
/// snake_case ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TamperKind {
    TestModified,
    TestDeleted,
    TestRenamed,
    TestConfigChanged,
    SkipMarkerAdded,
    /// A symbolic link whose target, resolved from the link's folder, leaves the tree.
    SymlinkOutOfTree,
    /// A symbolic link that stays inside the tree.
    SymlinkInTree,
    /// An existing file's mode or type changed (made executable, a link turned into a file, …).
    ModeChanged,
    /// A new file that is executable.
    ExecutableAdded,
    /// A gitlink (a commit of another repository) added or changed.
    GitlinkChanged,
    /// CI, git attributes and hooks, editor tasks, agent instructions, plumb's own settings.
    AutomationChanged,
    /// Makefiles and build scripts (`build.rs`, `setup.py`, `package.json` scripts, …).
    BuildFileChanged,
    /// A bidirectional control character in a file name or an added line.
    BidiControl,
    /// An invisible or format character (zero-width, soft hyphen, …) in a file name or an added
    /// line.
    InvisibleCharacter,
    /// A terminal control character (ESC, carriage return, backspace, DEL, C1) in a file name or
    /// an added line: text that rewrites what a terminal shows when the file is printed.
    ControlCharacter,
    /// A file name or link target holding a character that looks like `/`, `\` or `.` (`∕`,
    /// `／`, `․`, `‥`): a name that reads as a path it is not.
    ConfusablePath,
    /// A `.git` (a nested repository or a gitfile) below the root, or a changed top `.gitmodules`:
    /// always kept out of the patch, flagged so a person knows the tree held one.
    NestedRepository,
}

impl TamperKind {
    /// Every kind, in the order above.
    pub const ALL: [TamperKind; 17] = [
        TamperKind::TestModified,
        TamperKind::TestDeleted,
        TamperKind::TestRenamed,
        TamperKind::TestConfigChanged,
        TamperKind::SkipMarkerAdded,
        TamperKind::SymlinkOutOfTree,
        TamperKind::SymlinkInTree,
        TamperKind::ModeChanged,
        TamperKind::ExecutableAdded,
        TamperKind::GitlinkChanged,
        TamperKind::AutomationChanged,
        TamperKind::BuildFileChanged,
        TamperKind::BidiControl,
        TamperKind::InvisibleCharacter,
        TamperKind::ControlCharacter,
        TamperKind::ConfusablePath,
        TamperKind::NestedRepository,
    ];

    /// The kinds that block unless the user's settings un-block them.
    pub const BLOCKED_BY_DEFAULT: [TamperKind; 2] =
        [TamperKind::SymlinkOutOfTree, TamperKind::BidiControl];

    pub fn as_str(self) -> &'static str {
        match self {
            TamperKind::TestModified => "test_modified",
            TamperKind::TestDeleted => "test_deleted",
            TamperKind::TestRenamed => "test_renamed",
            TamperKind::TestConfigChanged => "test_config_changed",
            TamperKind::SkipMarkerAdded => "skip_marker_added",
            TamperKind::SymlinkOutOfTree => "symlink_out_of_tree",
            TamperKind::SymlinkInTree => "symlink_in_tree",
            TamperKind::ModeChanged => "mode_changed",
            TamperKind::ExecutableAdded => "executable_added",
            TamperKind::GitlinkChanged => "gitlink_changed",
            TamperKind::AutomationChanged => "automation_changed",
            TamperKind::BuildFileChanged => "build_file_changed",
            TamperKind::BidiControl => "bidi_control",
            TamperKind::InvisibleCharacter => "invisible_character",
            TamperKind::ControlCharacter => "control_character",
            TamperKind::ConfusablePath => "confusable_path",
            TamperKind::NestedRepository => "nested_repository",
        }
    }

    /// The kind named `name` in `plumb.toml`.
    pub fn parse(name: &str) -> Option<TamperKind> {
        TamperKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }

    /// Every name, comma-separated, for a message about a wrong one.
    pub fn names() -> String {
        TamperKind::ALL.map(TamperKind::as_str).join(", ")
    }

    /// What to do about a blocked flag of this kind: the end of a sentence for the model.
    pub fn remedy(self) -> &'static str {
        match self {
            TamperKind::TestModified => {
                "leave the existing test as it was and add new tests instead"
            }
            TamperKind::TestDeleted => "restore the test file",
            TamperKind::TestRenamed => "move the test file back to its name",
            TamperKind::TestConfigChanged => "leave the test settings as they were",
            TamperKind::SkipMarkerAdded => "remove the marker",
            TamperKind::SymlinkOutOfTree => "remove the link",
            TamperKind::SymlinkInTree => "remove the link or make it a regular file",
            TamperKind::ModeChanged => "give the file its old mode back",
            TamperKind::ExecutableAdded => "remove the file or make it not executable",
            TamperKind::GitlinkChanged => "remove the nested repository",
            TamperKind::AutomationChanged => "leave the file as it was",
            TamperKind::BuildFileChanged => "leave the build file as it was",
            TamperKind::BidiControl => "remove the bidirectional control characters",
            TamperKind::InvisibleCharacter => "remove the invisible characters",
            TamperKind::ControlCharacter => {
                "remove the control characters (write an escape such as \\x1b in the code instead)"
            }
            TamperKind::ConfusablePath => {
                "rename the file (or retarget the link) with plain `/` and `.` only"
            }
            TamperKind::NestedRepository => "remove the nested repository or the .gitmodules",
        }
    }
}

/// Which kinds of flag stop the run instead of only asking for attention: the defaults
/// ([`TamperKind::BLOCKED_BY_DEFAULT`]), plus `block`, minus `unblock` (`tamper_block` and
/// `tamper_unblock` in `plumb.toml`). A kind in both lists blocks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TamperPolicy {
    pub block: Vec<TamperKind>,
    pub unblock: Vec<TamperKind>,
}

impl TamperPolicy {
    /// Whether a flag of `kind` fails the step.
    pub fn blocks(&self, kind: TamperKind) -> bool {
        self.block.contains(&kind)
            || (TamperKind::BLOCKED_BY_DEFAULT.contains(&kind) && !self.unblock.contains(&kind))
    }

    /// Whether `kind` blocks only because of the defaults (not because `block` names it).
    pub fn blocks_by_default(&self, kind: TamperKind) -> bool {
        self.blocks(kind) && !self.block.contains(&kind)
    }

    /// The flags this policy turns into failures, in the order given.
    pub fn blocking<'a>(&self, flags: &'a [TamperFlag]) -> Vec<&'a TamperFlag> {
        flags.iter().filter(|flag| self.blocks(flag.kind)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_round_trip_through_serde_and_parse() {
        let actual: Vec<(Option<TamperKind>, String)> = TamperKind::ALL
            .iter()
            .map(|kind| {
                (
                    TamperKind::parse(kind.as_str()),
                    serde_json::to_string(kind).unwrap_or_default(),
                )
            })
            .collect();
        let expected: Vec<(Option<TamperKind>, String)> = TamperKind::ALL
            .iter()
            .map(|kind| (Some(*kind), format!("\"{}\"", kind.as_str())))
            .collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn defaults_block_links_out_and_bidi_controls_until_unblocked() {
        let policies = [
            TamperPolicy::default(),
            TamperPolicy {
                block: vec![TamperKind::AutomationChanged],
                unblock: vec![TamperKind::SymlinkOutOfTree],
            },
            TamperPolicy {
                block: vec![TamperKind::BidiControl],
                unblock: vec![TamperKind::BidiControl],
            },
        ];
        let actual: Vec<Vec<&str>> = policies
            .iter()
            .map(|policy| {
                TamperKind::ALL
                    .into_iter()
                    .filter(|kind| policy.blocks(*kind))
                    .map(TamperKind::as_str)
                    .collect()
            })
            .collect();
        let expected = vec![
            vec!["symlink_out_of_tree", "bidi_control"],
            vec!["automation_changed", "bidi_control"],
            vec!["symlink_out_of_tree", "bidi_control"],
        ];
        assert_eq!(actual, expected);
    }
}
