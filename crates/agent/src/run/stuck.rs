//! Stuck detection: the same failed action (tool name and arguments, compared as canonical JSON)
//! several times in a row ends the run. Any successful action resets the count. Also remembers the
//! read-only calls already answered, so a model that repeats one (a small model's favourite loop)
//! is told so instead of getting the same answer again.

use std::collections::HashMap;

use serde_json::Value;

/// Where an earlier read-only call was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Answered {
    pub round: u32,
    /// Its result's position among the tool results of the history.
    pub result: usize,
    /// The workspace's change count when it was answered.
    pub changes: u32,
}

#[derive(Debug, Default)]
pub(super) struct StuckDetector {
    last: Option<(String, u32)>,
    /// Read-only calls answered so far: the round, the result's position in the history, and how
    /// many changes the workspace had seen then.
    answered: HashMap<String, Answered>,
}

impl StuckDetector {
    /// Records a failed action; returns how many times in a row it has now failed.
    pub(super) fn failed(&mut self, tool: &str, args: &Value) -> u32 {
        // serde_json's map is ordered by key, so equal arguments give equal text.
        let signature = format!("{tool} {args}");
        let count = match &self.last {
            Some((last, count)) if *last == signature => count + 1,
            _ => 1,
        };
        self.last = Some((signature, count));
        count
    }

    pub(super) fn succeeded(&mut self) {
        self.last = None;
    }

    /// For a read-only call: the identical earlier call when nothing has changed since (the answer
    /// would be the same), else `None`, and this call is remembered as answered by `now`.
    pub(super) fn repeated_read(
        &mut self,
        tool: &str,
        args: &Value,
        now: Answered,
    ) -> Option<Answered> {
        let signature = format!("{tool} {args}");
        match self.answered.get(&signature) {
            Some(earlier) if earlier.changes == now.changes => Some(*earlier),
            _ => {
                self.answered.insert(signature, now);
                None
            }
        }
    }

    /// Forgets an answer the model can no longer see in full, so the call may be made again.
    pub(super) fn forget_read(&mut self, tool: &str, args: &Value, now: Answered) {
        self.answered.insert(format!("{tool} {args}"), now);
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn counts_only_identical_failures_in_a_row() {
        let mut stuck = StuckDetector::default();
        let a = json!({"path": "a.py", "old_text": "x"});
        let b = json!({"old_text": "x", "path": "a.py"});
        let mut counts = vec![stuck.failed("edit_file", &a), stuck.failed("edit_file", &b)];
        counts.push(stuck.failed("edit_file", &json!({"path": "b.py"})));
        stuck.succeeded();
        counts.push(stuck.failed("edit_file", &a));
        assert_eq!(counts, vec![1, 2, 1, 1]);
    }

    #[test]
    fn a_read_repeated_with_nothing_changed_is_noticed() {
        let mut stuck = StuckDetector::default();
        let args = json!({"query": "gst"});
        let at = |round, changes| Answered {
            round,
            result: round as usize,
            changes,
        };
        let seen = [
            stuck.repeated_read("search_code", &args, at(1, 0)),
            stuck.repeated_read("search_code", &args, at(2, 0)),
            stuck.repeated_read("search_code", &json!({"query": "tax"}), at(3, 0)),
            stuck.repeated_read("search_code", &args, at(4, 1)),
            stuck.repeated_read("search_code", &args, at(5, 1)),
        ];
        let rounds: Vec<Option<u32>> = seen.iter().map(|a| a.map(|a| a.round)).collect();
        assert_eq!(rounds, [None, Some(1), None, None, Some(4)]);
    }
}
