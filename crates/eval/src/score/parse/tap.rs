//! `parse_log_tap`: TAP's `ok 1 - name` and `not ok 2 - name` lines, as node's `node --test`
//! (asked for TAP by the scorer), tape and tap print them; nested subtests are indented and
//! count once the line is trimmed. The test's name is everything after the number, the `- `
//! included, as the official parser keeps it (`ok 1 - adds` names `- adds`).
//!
//! One deviation, towards strictness: the official parser counts `ok 3 - name # SKIP` as a pass;
//! here a `# SKIP` or `# TODO` directive makes it skipped (the name still ends with the directive,
//! as the official one writes it), since a skipped test is never a pass in the verdict.

use std::sync::LazyLock;

use regex::Regex;

use crate::result::TestStatus;

static RESULT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^(ok|not ok) (\d+) (.+)$").ok());
static DIRECTIVE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\s#\s*(SKIP|TODO)\b").ok());

pub(super) fn line(line: &str) -> Option<(String, TestStatus)> {
    let found = RESULT.as_ref()?.captures(line.trim())?;
    let name = found.get(3)?.as_str();
    let status = match found.get(1)?.as_str() {
        _ if DIRECTIVE.as_ref()?.is_match(name) => TestStatus::Skipped,
        "ok" => TestStatus::Passed,
        _ => TestStatus::Failed,
    };
    Some((name.to_owned(), status))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use crate::result::TestStatus;
    use crate::score::parse::{LogFormat, StatusMap, parse};

    /// A real `node --test --test-reporter=tap` log (node 20) with a nested subtest.
    #[test]
    fn tap_lines_name_each_test() {
        let log = "\
TAP version 13
# Subtest: math
    # Subtest: adds
    ok 1 - adds
      ---
      duration_ms: 0.4
      ...
    1..1
ok 1 - math
  ---
  duration_ms: 2.5
  type: 'suite'
  ...
# Subtest: fails
not ok 2 - fails
  ---
  error: '1 == 2'
  ...
# Subtest: skipped
ok 3 - skipped # SKIP
  ---
  duration_ms: 0.1
  ...
1..3
# tests 3
# pass 1
";

        let actual = parse(LogFormat::Tap, log);

        let expected: StatusMap = [
            ("- adds", TestStatus::Passed),
            ("- fails", TestStatus::Failed),
            ("- math", TestStatus::Passed),
            ("- skipped # SKIP", TestStatus::Skipped),
        ]
        .into_iter()
        .map(|(id, status)| (id.to_owned(), status))
        .collect();
        assert_eq!(actual, expected);
    }
}
