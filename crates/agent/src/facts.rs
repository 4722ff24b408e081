//! What the helpers are chosen by, once a run is prepared: the project's test runner, what the
//! baseline showed, the task's named tests, the model's profile, and what the first message put
//! in front of the model ([`Briefing`]). Each helper says from these whether it applies
//! (`helpers/mod.rs`), and the journal and the report list the answers.

use plumb_config::Helpers;
use plumb_protocol::ModelProfile;
use plumb_verify::Runner;

use crate::baseline::Baseline;

/// What the code-up-front helper put in the first message, and what the guided phases keep for
/// later: the source file the ticket is likely about and its test file, the existing test closest
/// to the ticket, and the ticket's own example.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Briefing {
    /// The source file shown up front.
    pub source_file: Option<String>,
    /// Its test file, shown after it: a new test goes at its end.
    pub test_file: Option<String>,
    /// The existing test closest to the ticket, cut for showing (with its path and lines).
    pub closest_test: Option<String>,
    /// The same test's whole text, for the fix probe and the figure trace.
    pub closest_test_text: Option<String>,
    /// The ticket's sentences giving its example and what should happen.
    pub ticket_example: Option<String>,
}

/// Everything a helper's choice reads.
pub(crate) struct RunFacts<'a> {
    pub ticket: &'a str,
    pub runner: Runner,
    pub baseline: &'a Baseline,
    /// The task's own fail-to-pass tests (SWE-bench's FAIL_TO_PASS), if it names them.
    pub fail_to_pass: &'a [String],
    pub profile: ModelProfile,
    /// The model can give another sample of a request (the embedded model, a script with
    /// alternatives).
    pub can_sample: bool,
    pub briefing: &'a Briefing,
    /// The helpers as the settings set them (`None`: as the profile says).
    pub settings: &'a Helpers,
}
