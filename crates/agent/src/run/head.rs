//! The first request's fixed part (docs/contracts.md §4): the rules, then the first message — the
//! ticket on top, the project notes, the test command and its baseline, the repo map and, with the
//! code-up-front helper, the source file the ticket is likely about — and what the helpers keep for
//! later ([`Briefing`]: the closest test, the ticket's example). Every file is read through the
//! confined reader ([`Tree`]): a notes file that is a link out of the repository, a FIFO or too
//! large is left out with a warning for a person, never read.

use plumb_context::prompt::{self, FirstMessage};
use plumb_context::repo_map::{RepoMapOptions, render_outline};
use plumb_protocol::Message;
use plumb_workspace::Tree;

use super::Run;
use crate::facts::Briefing;

/// Notes files looked for at the repository root, first found wins.
const NOTES_FILES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", ".plumb/notes.md"];
/// Notes longer than this are cut: they sit in every request.
const NOTES_MAX_CHARS: usize = 8_000;
/// A notes file larger than this is not read at all (the first `NOTES_MAX_CHARS` are shown).
const NOTES_MAX_BYTES: u64 = 256 * 1024;
/// Lines of code shown up front by the small-model helper.
const CODE_UP_FRONT_LINES: usize = 80;

/// At most this many lines of the source file's test are shown with it (through its first test).
const TEST_UP_FRONT_LINES: usize = 40;

/// At most this many lines of the existing test closest to the ticket, shown after the fix.
const CLOSEST_TEST_LINES: usize = 30;

/// At most this many characters of the ticket's example, repeated next to a request for a test.
const TICKET_EXAMPLE_CHARS: usize = 400;

/// The code-up-front helper's text: the likely source file, then the start of its test file as a
/// pattern for the new test; that source file's path, and that test file's path.
fn code_up_front(tree: &Tree, ticket: &str) -> Option<(String, String, Option<String>)> {
    use plumb_context::relevant::{relevant_code, test_for};
    let code = relevant_code(tree, ticket, CODE_UP_FRONT_LINES)?;
    let mut text = code.text;
    let test = test_for(tree, &code.path, TEST_UP_FRONT_LINES);
    if let Some(test) = &test {
        text.push_str(&format!(
            "\nThe start of its tests, through the first one (a new test added at the end of that file can use its imports and helpers):\n{}",
            test.text
        ));
    }
    Some((text, code.path, test.map(|t| t.path)))
}

/// The first notes file of [`NOTES_FILES`] that exists, cut to [`NOTES_MAX_CHARS`], read through the
/// confined reader; and a warning for each one that exists but was refused (a link out of the tree,
/// a FIFO, one too large), which is then skipped as if absent.
fn project_notes(tree: &Tree) -> (Option<(&'static str, String)>, Vec<String>) {
    let mut warnings = Vec::new();
    for name in NOTES_FILES {
        match tree.read_text(name, NOTES_MAX_BYTES) {
            Ok(text) => {
                let cut: String = text.chars().take(NOTES_MAX_CHARS).collect();
                return (Some((name, cut)), warnings);
            }
            Err(err) if err.is_missing() => {}
            Err(err) => warnings.push(format!("the project notes were not read: {err}")),
        }
    }
    (None, warnings)
}

impl Run {
    /// The rules and the first message; returns warnings for a person (a notes file that could
    /// not be read, e.g. a link out of the repository).
    pub(super) fn build_head(&mut self) -> Vec<String> {
        let tree = self.workspace.tree();
        let (notes, warnings) = project_notes(&tree);
        let options = RepoMapOptions {
            max_chars: self.asked.config.limits.repo_map_chars,
            max_files: 2_000,
            // With the code up front the model is shown the test file it is to extend.
            tests_by_name: self.helpers.code_up_front,
        };
        let repo_map = render_outline(&tree, None, &options)
            .unwrap_or_else(|err| format!("(no repository map: {err})"));
        let command = self.tester.command().argv.join(" ");
        let baseline = self.baseline.counts.summary();
        let shown = self
            .helpers
            .code_up_front
            .then(|| code_up_front(&tree, &self.asked.ticket))
            .flatten();
        let (code, source_file, test_file) = match shown {
            Some((code, source, test)) => (Some(code), Some(source), test),
            None => (None, None, None),
        };
        // The test closest to the ticket is shown when the model is to write its own, not up
        // front: shown a test in the first message, the model edited it instead of the code.
        let example = test_file.as_deref().and_then(|file| {
            plumb_context::relevant::closest_test(
                &tree,
                file,
                &self.asked.ticket,
                CLOSEST_TEST_LINES,
            )
        });
        let probe = test_file.as_deref().and_then(|file| {
            plumb_context::relevant::closest_test_text(&tree, file, &self.asked.ticket)
        });
        self.briefing = Briefing {
            source_file,
            test_file,
            closest_test: example,
            closest_test_text: probe,
            ticket_example: plumb_context::relevant::ticket_example(
                &self.asked.ticket,
                TICKET_EXAMPLE_CHARS,
            ),
        };
        let first = prompt::first_message(&FirstMessage {
            ticket: &self.asked.ticket,
            notes: notes.as_ref().map(|(name, text)| (*name, text.as_str())),
            test_command: &command,
            baseline: &baseline,
            repo_map: &repo_map,
            code: code.as_deref(),
        });
        self.head = vec![
            Message::system(prompt::rules(
                self.helpers.code_up_front,
                self.helpers.phases,
                crate::helpers::figures_on(
                    &self.asked.config.helpers,
                    self.model.profile(),
                    self.tester.runner(),
                    &self.asked.ticket,
                ),
            )),
            Message::user(first),
        ];
        warnings
    }
}
