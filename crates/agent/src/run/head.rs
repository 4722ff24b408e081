//! The first request's fixed part (docs/contracts.md §4): the rules, then the first message — the
//! ticket on top, the project notes, the test command and its baseline, the repo map and, with the
//! code-up-front helper, the source file the ticket is likely about — and what the helpers keep for
//! later ([`Briefing`]: the closest test, the ticket's example). Every file is read through the
//! confined reader ([`Tree`]): a notes file that is a link out of the repository, a FIFO or too
//! large is left out with a warning for a person, never read. The notes are the root's and those
//! of the folders down to the ones in play: the folders of the files the ticket names and of the
//! code shown up front (`plumb_context::notes`).

use plumb_context::notes::{folders_named, project_notes};
use plumb_context::prompt::{self, FirstMessage};
use plumb_context::run_map::{RunMapOptions, run_map};
use plumb_context::size::estimated_count;
use plumb_context::tag_cache_file;
use plumb_protocol::Message;
use plumb_workspace::Tree;

use super::Run;
use crate::RunError;
use crate::facts::Briefing;

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

impl Run {
    /// The rules and the first message; returns warnings for a person (a notes file that could
    /// not be read, e.g. a link out of the repository).
    pub(super) fn build_head(&mut self) -> Result<Vec<String>, RunError> {
        let tree = self.workspace.tree();
        let mut warnings = Vec::new();
        let repo_map = self.repo_map(&tree, &mut warnings);
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
        let mut in_play = folders_named(&self.asked.ticket);
        if let Some((folder, _)) = source_file.as_deref().and_then(|f| f.rsplit_once('/')) {
            in_play.push(folder.to_string());
        }
        let notes = project_notes(&tree, &in_play);
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
            notes: &notes.files,
            test_command: &command,
            baseline: &baseline,
            repo_map: &repo_map,
            code: code.as_deref(),
        })
        .map_err(template_failed)?;
        let rules = prompt::rules(
            self.helpers.code_up_front,
            self.helpers.phases,
            crate::helpers::figures_on(
                &self.asked.config.helpers,
                self.model.profile(),
                self.tester.runner(),
                &self.asked.ticket,
            ),
        )
        .map_err(template_failed)?;
        self.head = vec![Message::system(rules), Message::user(first)];
        warnings.extend(notes.warnings);
        Ok(warnings)
    }

    /// The repo map within `limits.repo_map_tokens`: the whole outline of a small repository, the
    /// map ranked for the ticket of a larger one, its tags kept in the run's tag cache file.
    fn repo_map(&self, tree: &Tree, warnings: &mut Vec<String>) -> String {
        let options = RunMapOptions {
            max_tokens: self.asked.config.limits.repo_map_tokens,
            // With the code up front the model is shown the test file it is to extend.
            tests_by_name: self.helpers.code_up_front,
            cache_file: self.asked.tag_cache.as_deref(),
        };
        // The model's own count where plumb has its tokenizer (the embedded model's), else the
        // estimate, which errs high.
        let model_count = self.model.token_counter();
        let count = |text: &str| match &model_count {
            Some(count) => count(text),
            None => estimated_count(text),
        };
        match run_map(tree, &self.asked.ticket, &options, &count) {
            Ok(map) => {
                warnings.extend(map.warning);
                map.text
            }
            Err(err) => format!("(no repository map: {err})"),
        }
    }
}

/// The tag cache file of the user's folder `repo` in plumb's cache folder (`None` without a home).
pub(super) fn tag_cache_file(repo: &std::path::Path) -> Option<std::path::PathBuf> {
    let repo = std::fs::canonicalize(repo).unwrap_or_else(|_| repo.to_path_buf());
    plumb_model::catalog::cache_home_from(|key| std::env::var_os(key))
        .map(|home| tag_cache_file::cache_path(&home, &repo))
}

/// A prompt template that failed: plumb's own bug, so an infrastructure error that says so.
fn template_failed(error: prompt::TemplateError) -> RunError {
    RunError::Infra(error.to_string())
}
