//! `parse_log_jest` (jest `--verbose`) and `parse_log_vitest` (vitest `--reporter=verbose`): a
//! trimmed line that starts with a status mark, one space, and the test's title, with the
//! duration taken off the end. The title is the test's own, without its file or `describe`
//! blocks, as the official parsers read it (so two tests of one title are one id, and the last
//! line wins).

use std::sync::LazyLock;

use regex::Regex;

use crate::result::TestStatus;

static JEST: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\s*(✓|✕|○)\s(.+?)(?:\s\((\d+\s*m?s)\))?$").ok());
static VITEST: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\s*(✓|×|↓)\s(.+?)(?:\s(\d+\s*m?s?|\[skipped\]))?$").ok());

pub(super) fn jest_line(line: &str) -> Option<(String, TestStatus)> {
    let found = JEST.as_ref()?.captures(line.trim())?;
    let status = match found.get(1)?.as_str() {
        "✓" => TestStatus::Passed,
        "✕" => TestStatus::Failed,
        _ => TestStatus::Skipped,
    };
    Some((found.get(2)?.as_str().trim().to_owned(), status))
}

pub(super) fn vitest_line(line: &str) -> Option<(String, TestStatus)> {
    let found = VITEST.as_ref()?.captures(line.trim())?;
    let status = match found.get(1)?.as_str() {
        "✓" => TestStatus::Passed,
        "×" => TestStatus::Failed,
        _ => TestStatus::Skipped,
    };
    // The official vitest parser does not trim the title.
    Some((found.get(2)?.as_str().to_owned(), status))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use crate::result::TestStatus;
    use crate::score::parse::{LogFormat, StatusMap, parse};

    fn map(entries: &[(&str, TestStatus)]) -> StatusMap {
        entries
            .iter()
            .map(|(id, status)| ((*id).to_owned(), *status))
            .collect()
    }

    #[test]
    fn jest_verbose_lines_name_each_test() {
        let log = "\
 FAIL  src/sum.test.js
  sum
    ✓ adds two numbers (3 ms)
    ✕ subtracts (12 ms)
    ○ skipped later
    ✓ no duration

  ● sum › subtracts
";

        let actual = parse(LogFormat::Jest, log);

        // `○ skipped later` is jest's line for a skipped test `later`; the official regular
        // expression keeps `skipped later` as the title.
        let expected = map(&[
            ("adds two numbers", TestStatus::Passed),
            ("no duration", TestStatus::Passed),
            ("skipped later", TestStatus::Skipped),
            ("subtracts", TestStatus::Failed),
        ]);
        assert_eq!(actual, expected);
    }

    #[test]
    fn vitest_verbose_lines_name_each_test() {
        let log = "\
 ✓ src/sum.test.ts (3 tests | 1 skipped) 4ms
   ✓ sum > adds 2ms
   × sum > subtracts 5ms
   ↓ sum > later [skipped]
";

        let actual = parse(LogFormat::Vitest, log);

        let expected = map(&[
            ("src/sum.test.ts (3 tests | 1 skipped)", TestStatus::Passed),
            ("sum > adds", TestStatus::Passed),
            ("sum > later", TestStatus::Skipped),
            ("sum > subtracts", TestStatus::Failed),
        ]);
        assert_eq!(actual, expected);
    }
}
