//! Stuck detection: the same failed action (tool name and arguments, compared as canonical JSON)
//! several times in a row ends the run. Any successful action resets the count. Also remembers the
//! read-only calls already answered, so a model that repeats one (a small model's favourite loop)
//! is told so instead of getting the same answer again.

use std::collections::HashMap;

use serde_json::Value;

#[derive(Debug, Default)]
pub(crate) struct StuckDetector {
    last: Option<(String, u32)>,
    /// Read-only calls answered so far: the round, and how many changes the workspace had seen then.
    answered: HashMap<String, (u32, u32)>,
}

impl StuckDetector {
    /// Records a failed action; returns how many times in a row it has now failed.
    pub(crate) fn failed(&mut self, tool: &str, args: &Value) -> u32 {
        // serde_json's map is ordered by key, so equal arguments give equal text.
        let signature = format!("{tool} {args}");
        let count = match &self.last {
            Some((last, count)) if *last == signature => count + 1,
            _ => 1,
        };
        self.last = Some((signature, count));
        count
    }

    pub(crate) fn succeeded(&mut self) {
        self.last = None;
    }

    /// For a read-only call: the round of an identical earlier call when nothing has changed since
    /// (the answer would be the same), else `None`, and the call is remembered.
    pub(crate) fn repeated_read(
        &mut self,
        tool: &str,
        args: &Value,
        round: u32,
        changes: u32,
    ) -> Option<u32> {
        let signature = format!("{tool} {args}");
        match self.answered.get(&signature) {
            Some((earlier, at)) if *at == changes => Some(*earlier),
            _ => {
                self.answered.insert(signature, (round, changes));
                None
            }
        }
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
        let seen = [
            stuck.repeated_read("search_code", &args, 1, 0),
            stuck.repeated_read("search_code", &args, 2, 0),
            stuck.repeated_read("search_code", &json!({"query": "tax"}), 3, 0),
            stuck.repeated_read("search_code", &args, 4, 1),
            stuck.repeated_read("search_code", &args, 5, 1),
        ];
        assert_eq!(seen, [None, Some(1), None, None, Some(4)]);
    }
}
