//! The code a guided run already tried and saw fail (`helpers.undo_failing_fixes`): a write that
//! brings the workspace back to one of those states is undone before any test runs, and the
//! model is told in which round it was tried and what it showed. The same workspace gives the
//! same test results, so running them again would cost the round's test time and teach nothing.
//! Once failing fixes are undone, the model is back at code it has seen, and a 1.5B model sends
//! the fix it sent before (in the eval, Python/74 went back and forth between two wrong one-line
//! rewrites for eight rounds).

use std::hash::{DefaultHasher, Hash, Hasher};

use super::verdict::{CheckVerdict, PhaseCheck, TestVerdict};
use super::words::Showed;

/// Workspace states (their patch against the original code) that a check failed on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct TriedStates {
    /// The patch's hash, the round it was tried in, and what the check showed.
    failed: Vec<(u64, u32, Showed)>,
}

impl TriedStates {
    /// When the workspace whose patch is `patch` was tried before and failed: the round, and
    /// what the check showed.
    pub(super) fn failed_before(&self, patch: &str) -> Option<(u32, Showed)> {
        let key = key(patch);
        self.failed
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, round, showed)| (*round, *showed))
    }

    /// Remembers the workspace `patch` as tried in `round` when the check after a code edit
    /// failed; a check that passed leaves nothing to remember.
    pub(super) fn remember(
        &mut self,
        patch: &str,
        round: u32,
        check: &PhaseCheck,
        verdict: CheckVerdict,
        undone: bool,
    ) {
        let Some(showed) = failure_of(check, verdict, undone) else {
            return;
        };
        let key = key(patch);
        if !self.failed.iter().any(|(k, _, _)| *k == key) {
            self.failed.push((key, round, showed));
        }
    }
}

/// What a failed check after a code edit showed; `None` when it did not fail (or the write was
/// not a code edit).
fn failure_of(check: &PhaseCheck, verdict: CheckVerdict, undone: bool) -> Option<Showed> {
    match check {
        PhaseCheck::Existing(_) if verdict.now != TestVerdict::Passes => Some(Showed::BrokeOld),
        PhaseCheck::Existing(_) if undone => Some(Showed::Unconfirmed),
        PhaseCheck::Again(_) if verdict.broke_old => Some(Showed::BrokeOld),
        PhaseCheck::Again(_) if verdict.broke_code => Some(Showed::CodeStopped),
        PhaseCheck::Again(_) if verdict.now != TestVerdict::Passes => Some(Showed::StillFailed),
        _ => None,
    }
}

fn key(patch: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    patch.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn verdict(now: TestVerdict) -> CheckVerdict {
        CheckVerdict {
            now,
            original: None,
            same_failure: false,
            broke_old: false,
            broke_code: false,
            passes_more: false,
        }
    }

    #[test]
    fn a_state_is_remembered_only_when_its_check_failed() {
        let again = PhaseCheck::Again("tests/test_a.py".into());
        let mut tried = TriedStates::default();
        tried.remember("fix one", 2, &again, verdict(TestVerdict::Fails), true);
        tried.remember("fix two", 3, &again, verdict(TestVerdict::Passes), false);
        tried.remember("fix one", 5, &again, verdict(TestVerdict::Fails), true);
        assert_eq!(
            tried.failed_before("fix one"),
            Some((2, Showed::StillFailed))
        );
        assert_eq!(tried.failed_before("fix two"), None);
        assert_eq!(tried.failed_before("fix three"), None);
    }

    #[test]
    fn an_existing_check_fails_on_broken_tests_or_an_unconfirmed_fix() {
        let existing = PhaseCheck::Existing(None);
        let mut tried = TriedStates::default();
        tried.remember("breaks", 1, &existing, verdict(TestVerdict::Fails), true);
        tried.remember(
            "unconfirmed",
            2,
            &existing,
            verdict(TestVerdict::Passes),
            true,
        );
        tried.remember("kept", 3, &existing, verdict(TestVerdict::Passes), false);
        assert_eq!(tried.failed_before("breaks"), Some((1, Showed::BrokeOld)));
        assert_eq!(tried.failed_before("unconfirmed").map(|(r, _)| r), Some(2));
        assert_eq!(tried.failed_before("kept"), None);
    }
}
