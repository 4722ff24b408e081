//! New tests added to an existing test file, told apart from an edited test.
//!
//! Adding a test to the file that already tests the code is what a small model does (and what a
//! person would); flagging it as "an existing test file was modified" cries wolf on almost every
//! run. But "lines added, none removed" alone is not enough: one `return` inserted into an
//! existing test, a decorator put over one, an autouse fixture or a function that shadows a
//! helper the old tests call all change existing tests without removing a line. So the change
//! counts as tests added only when
//! 1. every baseline line is still there, in order (the new lines are insertions), and
//! 2. each run of inserted lines is a whole new block at a safe place: it starts with a
//!    definition (or an import or comment) at some indentation, no line of it is less indented,
//!    each line at that indentation starts a definition or closes a bracket, the kept line after
//!    it is no deeper (so it is not inside an existing block), the kept line before it is not a
//!    decorator, it does not end in one, and when it is indented it sits directly in a container
//!    (a Python class, a `describe(`, a Rust `mod`), never in a function, and
//! 3. no inserted line is a setup hook (autouse fixtures, `setup_*`/`teardown_*`, `beforeEach`,
//!    `TestMain`, …) and no new definition or import binds a name the baseline text already uses
//!    (an import of the same name from the same module excepted), and
//! 4. at least one test is among the new lines.
//!
//! Either alignment of the baseline lines in the new text (matching as early or as late as
//! possible) may show this: both describe the same text. Languages: Python, Rust, Go,
//! JavaScript/TypeScript; in any other, a changed test file stays "modified".

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use lang::{Lang, python_imports};

mod lang;

/// An existing test file the change only added new tests to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestsAdded {
    pub path: String,
    /// Non-blank lines added.
    pub lines: usize,
}

/// Columns of leading whitespace (a tab advances to the next multiple of 8).
fn indent(line: &str) -> usize {
    let mut width = 0;
    for c in line.chars() {
        match c {
            ' ' => width += 1,
            '\t' => width = (width / 8 + 1) * 8,
            _ => break,
        }
    }
    width
}

/// Which lines of `after` are `before`'s (kept), matching each baseline line as early (or, with
/// `late`, as late) as possible; `None` when `before` is not a subsequence of `after`.
fn kept_lines(before: &[&str], after: &[&str], late: bool) -> Option<Vec<bool>> {
    let mut kept = vec![false; after.len()];
    let mut remaining = before.len();
    if late {
        for (index, line) in after.iter().enumerate().rev() {
            if remaining > 0 && before.get(remaining - 1) == Some(line) {
                kept[index] = true;
                remaining -= 1;
            }
        }
    } else {
        let mut next = 0;
        for (index, line) in after.iter().enumerate() {
            if before.get(next) == Some(line) {
                kept[index] = true;
                next += 1;
            }
        }
        remaining = before.len() - next;
    }
    (remaining == 0).then_some(kept)
}

/// What the new text of an existing test file added, when it only added tests.
pub(super) fn only_added(path: &str, before: &str, after: &str) -> Option<TestsAdded> {
    let lang = Lang::of(path)?;
    let before_lines: Vec<&str> = before.lines().collect();
    let after_lines: Vec<&str> = after.lines().collect();
    let known = Known::of(before, lang);
    [false, true].into_iter().find_map(|late| {
        let kept = kept_lines(&before_lines, &after_lines, late)?;
        let lines = judge(lang, &after_lines, &kept, &known)?;
        Some(TestsAdded {
            path: path.to_string(),
            lines,
        })
    })
}

/// What the baseline text already names: its words, and the modules its Python imports use.
struct Known<'a> {
    words: HashSet<&'a str>,
    imports: HashMap<String, Vec<String>>,
}

impl<'a> Known<'a> {
    fn of(before: &'a str, lang: Lang) -> Known<'a> {
        let words = before
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|word| !word.is_empty())
            .collect();
        let mut imports: HashMap<String, Vec<String>> = HashMap::new();
        if lang == Lang::Python {
            for (name, module) in python_imports(before) {
                imports.entry(name).or_default().push(module);
            }
        }
        Known { words, imports }
    }

    /// Whether binding `name` (from `module`, for an import) leaves the old tests as they were.
    fn fresh(&self, name: &str, module: Option<&str>) -> bool {
        if name == "*" || name == "_" {
            return false;
        }
        if let Some(module) = module
            && self
                .imports
                .get(name)
                .is_some_and(|modules| modules.iter().any(|known| known == module))
        {
            return true;
        }
        !self.words.contains(name)
    }
}

/// The non-blank lines added, when every run of inserted lines is a new block at a safe place
/// and at least one test is among them.
fn judge(lang: Lang, after: &[&str], kept: &[bool], known: &Known<'_>) -> Option<usize> {
    let mut added = 0;
    let mut has_test = false;
    let mut start = 0;
    while start < after.len() {
        if kept.get(start).copied().unwrap_or(true) {
            start += 1;
            continue;
        }
        let end = (start..after.len())
            .find(|index| kept.get(*index).copied().unwrap_or(true))
            .unwrap_or(after.len());
        let hunk = after.get(start..end)?;
        let lines: Vec<&str> = hunk
            .iter()
            .copied()
            .filter(|line| !line.trim().is_empty())
            .collect();
        if !lines.is_empty() {
            let enclosing = |base: usize| {
                nearest_kept(after, kept, start, Direction::Back, |line| {
                    indent(line) < base
                })
            };
            let context = Context {
                previous: nearest_kept(after, kept, start, Direction::Back, |_| true),
                next: nearest_kept(after, kept, end, Direction::Forward, |_| true),
                enclosing: &enclosing,
            };
            has_test |= block_is_safe(lang, &lines, &context, known)?;
            added += lines.len();
        }
        start = end;
    }
    (added > 0 && has_test).then_some(added)
}

#[derive(Clone, Copy)]
enum Direction {
    Back,
    Forward,
}

/// The nearest kept non-blank line from `from` (before it, or from it on) that `accept` takes.
fn nearest_kept<'a>(
    after: &[&'a str],
    kept: &[bool],
    from: usize,
    direction: Direction,
    accept: impl Fn(&str) -> bool,
) -> Option<&'a str> {
    let candidate = |index: &usize| {
        kept.get(*index).copied().unwrap_or(false)
            && after
                .get(*index)
                .is_some_and(|line| !line.trim().is_empty() && accept(line))
    };
    let index = match direction {
        Direction::Back => (0..from).rev().find(candidate),
        Direction::Forward => (from..after.len()).find(candidate),
    }?;
    after.get(index).copied()
}

/// The kept lines around one run of inserted lines.
struct Context<'a, 'f> {
    previous: Option<&'a str>,
    next: Option<&'a str>,
    /// The nearest kept line before the run that is less indented than the given column.
    enclosing: &'f dyn Fn(usize) -> Option<&'a str>,
}

/// `Some(has a test)` when the inserted `lines` (non-blank) are a new block at a safe place.
fn block_is_safe(
    lang: Lang,
    lines: &[&str],
    context: &Context<'_, '_>,
    known: &Known<'_>,
) -> Option<bool> {
    let first = lines.first()?;
    let base = indent(first);
    if context.next.is_some_and(|next| indent(next) > base)
        || context
            .previous
            .is_some_and(|previous| lang.is_decorator(previous.trim_start()))
    {
        return None;
    }
    if base > 0 {
        let container = (context.enclosing)(base)?;
        if !lang.is_container(container.trim_start()) {
            return None;
        }
        if lang == Lang::Go {
            // Inside `import (`: only import paths.
            return lines
                .iter()
                .all(|line| line.trim().ends_with('"') && line.contains('"'))
                .then_some(false);
        }
    }
    let mut last_at_base = "";
    let mut has_test = false;
    for line in lines {
        let text = line.trim_start();
        if lang.hooks().iter().any(|hook| text.contains(hook)) {
            return None;
        }
        let column = indent(line);
        if column < base {
            return None;
        }
        has_test |= lang.is_test(text);
        if column > base {
            continue;
        }
        let closes = text.starts_with([')', ']', '}']);
        let names = lang.bound_names(text);
        let opens = lang.openers().iter().any(|start| text.starts_with(start));
        if !(opens || closes || (lang == Lang::Python && !names.is_empty())) {
            return None;
        }
        if !names.iter().all(|name| known.fresh(name, None)) {
            return None;
        }
        last_at_base = text;
    }
    if lang.is_decorator(last_at_base) {
        return None;
    }
    if lang == Lang::Python {
        let joined = lines.join("\n");
        let imports = python_imports(&joined);
        if !imports
            .iter()
            .all(|(name, module)| known.fresh(name, Some(module)))
        {
            return None;
        }
    }
    Some(has_test)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const BEFORE: &str = "\
from decimal import Decimal

from billing.invoice_totals import (
    compute_invoice_totals,
    line_totals,
)


def item(price):
    return price


@pytest.mark.slow
def test_gst_on_full_price():
    totals = compute_invoice_totals(item(\"1000.00\"))
    assert totals.tax == Decimal(\"180.00\")


class TestLines:
    def test_quantity(self):
        assert line_totals(item(\"250.00\")).gross == Decimal(\"1000.00\")
";

    const NEW_TEST: &str = "\n\ndef test_gst_after_discount():\n    totals = compute_invoice_totals(item(\"900.00\"))\n    assert totals.tax == Decimal(\"162.00\")\n";

    fn judged(after: &str) -> Option<usize> {
        only_added("tests/test_totals.py", BEFORE, after).map(|added| added.lines)
    }

    #[test]
    fn new_python_tests_appended_or_inserted_count_as_added() {
        let appended = format!("{BEFORE}{NEW_TEST}");
        let inserted = BEFORE.replace(
            "\n\n@pytest.mark.slow",
            &format!("{NEW_TEST}\n\n@pytest.mark.slow"),
        );
        let method = format!(
            "{BEFORE}\n    def test_two(self):\n        assert line_totals(item(\"1\")).gross\n"
        );
        let with_imports = format!(
            "from decimal import Decimal\nfrom billing.invoice_totals import line_totals\nimport os\n{}{NEW_TEST}",
            BEFORE.trim_start_matches("from decimal import Decimal\n")
        );
        let actual: Vec<Option<usize>> = [&appended, &inserted, &method, &with_imports]
            .into_iter()
            .map(|after| judged(after))
            .collect();
        assert_eq!(actual, vec![Some(3), Some(3), Some(2), Some(5)]);
    }

    #[test]
    fn insertions_that_change_existing_tests_do_not_count() {
        // Each with a genuine new test appended too, so only the insertion can make it fail.
        let cases = [
            // A line inside an existing test.
            BEFORE.replace(
                "    assert totals.tax == Decimal(\"180.00\")\n",
                "    return\n    assert totals.tax == Decimal(\"180.00\")\n",
            ),
            // A decorator over an existing test.
            BEFORE.replace(
                "@pytest.mark.slow\n",
                "@pytest.mark.slow\n@pytest.mark.xfail\n",
            ),
            BEFORE.replace("\nclass TestLines", "\n@pytest.fixture\nclass TestLines"),
            // A new definition inside an existing function.
            BEFORE.replace(
                "    return price\n",
                "    def test_inner():\n        pass\n    return price\n",
            ),
            // Shadowing a helper, or an imported name, the old tests call.
            format!("{BEFORE}\n\ndef item(price):\n    return 0\n"),
            format!("{BEFORE}\nfrom fakes import compute_invoice_totals\n"),
            // Hooks and module-level code.
            format!("{BEFORE}\n\n@pytest.fixture(autouse=True)\ndef zero():\n    pass\n"),
            format!("{BEFORE}\n\ndef setup_module():\n    pass\n"),
            format!("{BEFORE}\nprint('at import')\n"),
            // A changed line.
            BEFORE.replace("180.00", "180.0"),
        ];
        let mut actual: Vec<Option<usize>> = cases
            .iter()
            .map(|after| judged(&format!("{after}{NEW_TEST}")))
            .collect();
        // And no test among the new lines.
        actual.push(judged(&format!("{BEFORE}\n\ndef helper():\n    pass\n")));
        assert_eq!(actual, vec![None; cases.len() + 1]);
    }

    #[test]
    fn rust_go_and_javascript_tests_added() {
        let rust_before =
            "use super::*;\n\n#[test]\nfn adds() {\n    assert_eq!(add(1, 1), 2);\n}\n";
        let rust_after = format!(
            "{rust_before}\n#[test]\nfn adds_zero() {{\n    assert_eq!(add(0, 1), 1);\n}}\n"
        );
        let go_before = "package tax\n\nimport (\n\t\"testing\"\n)\n\nfunc TestGst(t *testing.T) {\n\tif Gst(900) != 162 {\n\t\tt.Fatal(\"gst\")\n\t}\n}\n";
        let go_after = go_before.replace("\t\"testing\"\n", "\t\"fmt\"\n\t\"testing\"\n")
            + "\nfunc TestGstZero(t *testing.T) {\n\tif Gst(0) != 0 {\n\t\tt.Fatal(fmt.Sprint(Gst(0)))\n\t}\n}\n";
        let js_before = "describe('gst', () => {\n  it('is 18%', () => {\n    expect(gst(100)).toBe(18);\n  });\n});\n";
        let js_after = "describe('gst', () => {\n  it('is 18%', () => {\n    expect(gst(100)).toBe(18);\n  });\n\n  it('is 0 on 0', () => {\n    expect(gst(0)).toBe(0);\n  });\n});\n";
        let js_hook =
            format!("{js_before}\nbeforeEach(() => {{ mock(); }});\ntest('x', () => {{}});\n");
        let actual = vec![
            only_added("tests/add.rs", rust_before, &rust_after).map(|a| a.lines),
            only_added("tax/gst_test.go", go_before, &go_after).map(|a| a.lines),
            only_added("web/gst.test.js", js_before, js_after).map(|a| a.lines),
            only_added("web/gst.test.js", js_before, &js_hook).map(|a| a.lines),
            only_added("Test.java", "class T {}\n", "class T {}\nclass U {}\n").map(|a| a.lines),
        ];
        assert_eq!(actual, vec![Some(4), Some(6), Some(3), None, None]);
    }
}
