//! Stuck detection: the same failed action (tool name and arguments, compared as canonical JSON)
//! several times in a row ends the run. Any successful action resets the count.

use serde_json::Value;

#[derive(Debug, Default)]
pub(crate) struct StuckDetector {
    last: Option<(String, u32)>,
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
}
