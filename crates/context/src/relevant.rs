//! "Code up front", a small-model helper: the source file the ticket is most likely about, found by
//! the ticket's own words, shown in the first message. A large model finds it with one search; a
//! 1.5B model often wanders, so the harness does that first step for it.
//!
//! The code is shown without line numbers (a header names the range): its purpose is to be copied
//! into `old_text` and imitated in a new test, and the numbers cost about 3 tokens a line — 380 of
//! the first prompt's 2,363 on BILL-412, some 2.6 s of prompt evaluation on two cores.

use std::collections::BTreeSet;
use std::path::Path;

use ignore::WalkBuilder;
use plumb_workspace::Tree;

use crate::build_output;

/// Files larger than this are not candidates (generated code, data).
const MAX_FILE_BYTES: u64 = 200_000;

const SOURCE_EXTENSIONS: &[&str] = &[
    "py", "rs", "go", "java", "js", "jsx", "ts", "tsx", "rb", "php", "c", "h", "cc", "cpp", "cs",
    "kt", "swift", "scala",
];

const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "when", "should", "from", "into", "are", "was",
    "not", "but", "have", "has", "been", "will", "would", "could", "after", "before", "than",
    "then", "they", "them", "their", "there", "which", "while", "what", "where", "each", "every",
    "only", "also", "must", "does", "done", "make", "made", "like", "just", "some", "more", "less",
    "instead", "expected", "actual", "ticket", "issue", "bug", "fix", "test", "tests", "wrong",
    "correct",
];

/// The chosen file: its path (relative, with `/`) and a window of it under a header naming its lines.
#[derive(Debug, Clone, PartialEq)]
pub struct RelevantCode {
    pub path: String,
    pub text: String,
}

/// Picks the non-test source file that shares the most words with the ticket and renders up to
/// `max_lines` of it. `None` when no file shares a word.
pub fn relevant_code(tree: &Tree, ticket: &str, max_lines: usize) -> Option<RelevantCode> {
    let root = tree.root();
    let words = ticket_words(ticket);
    if words.is_empty() {
        return None;
    }
    let mut best: Option<(usize, String, String)> = None;
    for entry in WalkBuilder::new(root)
        .hidden(true)
        .filter_entry(build_output::keep_entry)
        .build()
        .flatten()
    {
        let path = entry.path();
        // A walk does not follow links; a link or a FIFO named like source is not read either.
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let is_source = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| SOURCE_EXTENSIONS.contains(&e));
        if !is_source || entry.metadata().map(|m| m.len()).unwrap_or(u64::MAX) > MAX_FILE_BYTES {
            continue;
        }
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        let rel = relative.to_string_lossy().replace('\\', "/");
        if looks_like_test(&rel) {
            continue;
        }
        let Ok(text) = tree.read_entry_text(path, MAX_FILE_BYTES) else {
            continue;
        };
        let score = score(&rel, &text, &words);
        let better = match &best {
            Some((top, top_rel, _)) => score > *top || (score == *top && rel < *top_rel),
            None => score > 0,
        };
        if better {
            best = Some((score, rel, text));
        }
    }
    let (_, path, text) = best?;
    Some(RelevantCode {
        text: code_window(&path, &text, &words, max_lines),
        path,
    })
}

/// The test file of `source` (a test whose file name holds the source file's name, e.g.
/// `tests/test_invoice_totals.py` for `billing/invoice_totals.py`), from its first line
/// through its first test (at most `max_lines`): a pattern for the new test a fix needs — its
/// imports, its helpers and one test that uses them. Later tests are left out: a small model
/// imitates what it is shown, and one example to vary is what it needs.
pub fn test_for(tree: &Tree, source: &str, max_lines: usize) -> Option<RelevantCode> {
    let root = tree.root();
    let stem = Path::new(source).file_stem()?.to_str()?.to_lowercase();
    let mut found: Vec<String> = WalkBuilder::new(root)
        .hidden(true)
        .filter_entry(build_output::keep_entry)
        .build()
        .flatten()
        .filter_map(|entry| {
            let rel = entry.path().strip_prefix(root).ok()?;
            let rel = rel.to_string_lossy().replace('\\', "/");
            let name = rel.rsplit('/').next()?.to_lowercase();
            let is_file = entry.file_type().is_some_and(|kind| kind.is_file());
            (is_file && looks_like_test(&rel) && name.contains(&stem)).then_some(rel)
        })
        .collect();
    found.sort_by_key(|rel| (rel.len(), rel.clone()));
    let rel = found.into_iter().next()?;
    let text = tree.read_text(&rel, MAX_FILE_BYTES).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let starts = test_starts(&lines);
    let second_test = starts.get(1).copied().unwrap_or(lines.len());
    let mut end = lines.len().min(max_lines.max(1)).min(second_test);
    while end > 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let mut out = format!("{rel}: lines 1–{end} of {}\n", lines.len());
    push_lines(&mut out, &lines[..end]);
    Some(RelevantCode {
        path: rel,
        text: out,
    })
}

/// The existing test in `test_file` (relative to the tree) closest to the ticket: the one
/// using most of the ticket's own figures, then most of its words (the earlier test on a tie), at
/// most `max_lines`. `None` when the file has no test. Shown when the model is to write its test:
/// a 1.5B model imitates what it is shown, and shown the file's first test it copied an example
/// without the ticket's discount, or took `10.00` from another test for the ticket's Rs 100.
pub fn closest_test(
    tree: &Tree,
    test_file: &str,
    ticket: &str,
    max_lines: usize,
) -> Option<String> {
    let text = tree.read_text(test_file, MAX_FILE_BYTES).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = closest_block(&lines, ticket)?;
    // Up to its first assert: the setup is the pattern, the assert is the model's to write (shown
    // the whole test, a 1.5B model copied its asserts, which pass with or without the fix).
    let first_assert = (start + 1..end).find(|&i| {
        let line = lines[i].trim_start();
        ["assert", "with pytest.raises", "self.assert"]
            .iter()
            .any(|opening| line.starts_with(opening))
    });
    let (end, cut) = match first_assert {
        Some(at) if at > start + 1 => (at, true),
        _ => (end, false),
    };
    let end = end.min(start + max_lines.max(1));
    let what = if cut { ", up to its first assert" } else { "" };
    let mut out = format!("{test_file}, lines {}–{end}{what}:\n", start + 1);
    push_lines(&mut out, &lines[start..end]);
    Some(out)
}

/// The whole text of the existing test in `test_file` closest to the ticket (as
/// [`closest_test`] picks it) — only when it shares at least two figures with the
/// ticket, so that the ticket's example is one this test builds (the fix probe judges a fix by
/// it, and a ticket whose numbers are an issue id and a line number has no such example).
pub fn closest_test_text(tree: &Tree, test_file: &str, ticket: &str) -> Option<String> {
    let text = tree.read_text(test_file, MAX_FILE_BYTES).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = closest_block(&lines, ticket)?;
    let block = lines[start..end].join("\n");
    let shared = figures(&block).intersection(&figures(ticket)).count();
    (shared >= 2).then_some(block)
}

/// Lines `start..end` of the test in `lines` using most of the ticket's figures, then most of
/// its words, the earlier on a tie.
fn closest_block(lines: &[&str], ticket: &str) -> Option<(usize, usize)> {
    let starts = test_starts(lines);
    let numbers = figures(ticket);
    let words = ticket_words(ticket);
    starts
        .iter()
        .enumerate()
        .map(|(i, &start)| {
            let mut end = starts.get(i + 1).copied().unwrap_or(lines.len());
            while end > start + 1 && lines[end - 1].trim().is_empty() {
                end -= 1;
            }
            (start, end)
        })
        .enumerate()
        .max_by_key(|(index, (start, end))| {
            let block = lines[*start..*end].join("\n");
            let lower = block.to_lowercase();
            let shared_figures = figures(&block).intersection(&numbers).count();
            let shared_words = words.iter().filter(|w| lower.contains(w.as_str())).count();
            (shared_figures, shared_words, std::cmp::Reverse(*index))
        })
        .map(|(_, block)| block)
}

/// The ticket's own example and expectation: its sentences that give an example, say what should
/// happen or what is expected (`example`, `should`, `expected`, `e.g.`), in order, at most
/// `max_chars`. Repeated next to the request for a test: a 1.5B model that read the ticket four
/// thousand tokens earlier asserted figures of its own (a total of Rs 1,180, then Rs 1,080) where
/// the ticket says GST should be Rs 162. `None` when no sentence says so.
pub fn ticket_example(ticket: &str, max_chars: usize) -> Option<String> {
    const MARKERS: [&str; 4] = ["example", "should", "expected", "e.g."];
    let prose: Vec<&str> = ticket
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with('#'))
        .collect();
    let prose = prose.join(" ");
    let mut sentences = Vec::new();
    let mut start = 0;
    let bytes = prose.as_bytes();
    for (index, c) in prose.char_indices() {
        let ends = matches!(c, '.' | '!' | '?')
            && bytes
                .get(index + 1)
                .is_none_or(|next| next.is_ascii_whitespace());
        if ends {
            sentences.push(prose.get(start..=index).unwrap_or_default().trim());
            start = index + 1;
        }
    }
    sentences.push(prose.get(start..).unwrap_or_default().trim());
    let mut out = String::new();
    for sentence in sentences.into_iter().filter(|s| !s.is_empty()) {
        let lower = sentence.to_lowercase();
        if !MARKERS.iter().any(|marker| lower.contains(marker)) {
            continue;
        }
        if out.len() + sentence.len() + 1 > max_chars {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(sentence);
    }
    (!out.is_empty()).then_some(out)
}

/// The lines where tests start: an opening line (or its first decorator) not right after another.
fn test_starts(lines: &[&str]) -> Vec<usize> {
    (0..lines.len())
        .filter(|&i| starts_a_test(lines[i]) && (i == 0 || !starts_a_test(lines[i - 1])))
        .collect()
}

/// The figures written in `text`, as numbers compare: `Rs 1,000` and `"1000.00"` are both
/// `1000`, `0.180` is `0.18`.
pub fn figures(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .filter_map(|token| {
            let token = token.trim_matches(|c| c == ',' || c == '.');
            if !token.starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            let plain: String = token.chars().filter(|c| *c != ',').collect();
            let plain = if plain.contains('.') {
                plain
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_string()
            } else {
                plain
            };
            (!plain.is_empty()).then_some(plain)
        })
        .collect()
}

/// True for the line that opens a test (or its decorator) in the languages plumb runs.
fn starts_a_test(line: &str) -> bool {
    const OPENINGS: [&str; 11] = [
        "def test",
        "async def test",
        "class Test",
        "@pytest.mark",
        "#[test]",
        "#[tokio::test",
        "func Test",
        "it(",
        "test(",
        "describe(",
        "@Test",
    ];
    let line = line.trim_start();
    OPENINGS.iter().any(|opening| line.starts_with(opening))
}

/// Distinct lower-case words of the ticket worth searching for: identifiers of three or more
/// characters, minus common English.
fn ticket_words(ticket: &str) -> BTreeSet<String> {
    ticket
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.len() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// Occurrences of each word (capped, so one common word cannot dominate), with words in the path
/// counted extra.
fn score(rel: &str, text: &str, words: &BTreeSet<String>) -> usize {
    let lower = text.to_lowercase();
    let rel_lower = rel.to_lowercase();
    words
        .iter()
        .map(|w| {
            lower.matches(w.as_str()).count().min(5)
                + 5 * usize::from(rel_lower.contains(w.as_str()))
        })
        .sum()
}

pub(crate) fn looks_like_test(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    rel.split('/')
        .any(|part| matches!(part, "test" | "tests" | "__tests__" | "spec"))
        || name.starts_with("test_")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
        || name == "conftest.py"
}

/// The whole file when it fits, else a `max_lines` window around the line with the most ticket words.
fn code_window(rel: &str, text: &str, words: &BTreeSet<String>, max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let max_lines = max_lines.max(1);
    let start = if total <= max_lines {
        0
    } else {
        // Start a quarter window above the line that holds the most ticket words.
        let best = lines
            .iter()
            .enumerate()
            .map(|(index, line)| {
                let lower = line.to_lowercase();
                let hits = words.iter().filter(|w| lower.contains(w.as_str())).count();
                (hits, std::cmp::Reverse(index))
            })
            .max()
            .map(|(_, std::cmp::Reverse(index))| index)
            .unwrap_or(0);
        best.saturating_sub(max_lines / 4).min(total - max_lines)
    };
    let end = (start + max_lines).min(total);
    let mut out = format!("{rel}: lines {}–{end} of {total}\n", start + 1);
    push_lines(&mut out, &lines[start..end]);
    out
}

fn push_lines(out: &mut String, lines: &[&str]) {
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn tree(root: &Path) -> Tree {
        Tree::new(root).unwrap()
    }

    #[test]
    fn picks_the_source_file_sharing_the_tickets_words() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("billing")).unwrap();
        std::fs::create_dir_all(root.join("tests")).unwrap();
        std::fs::write(
            root.join("billing/invoice_totals.py"),
            "def totals(items, discount):\n    gst = subtotal * 0.18\n    return subtotal - discount + gst\n",
        )
        .unwrap();
        std::fs::write(
            root.join("billing/currency.py"),
            "def fmt(x):\n    return x\n",
        )
        .unwrap();
        std::fs::write(
            root.join("tests/test_invoice_totals.py"),
            "gst gst gst discount discount invoice totals\n",
        )
        .unwrap();
        let found = relevant_code(
            &tree(root),
            "BILL-412: GST is charged on the full price, before the discount, in invoice totals",
            50,
        )
        .unwrap();
        assert_eq!(found.path, "billing/invoice_totals.py");
        assert!(
            found
                .text
                .starts_with("billing/invoice_totals.py: lines 1–3 of 3\ndef totals"),
            "{}",
            found.text
        );
    }

    #[test]
    fn long_files_show_the_window_with_most_hits() {
        let dir = tempfile::tempdir().unwrap();
        let mut text: String = (1..=100).map(|n| format!("x{n} = {n}\n")).collect();
        text.push_str("def apply_gst(amount):\n    return amount\n");
        std::fs::write(dir.path().join("tax.py"), &text).unwrap();
        let found = relevant_code(&tree(dir.path()), "apply_gst is wrong", 10).unwrap();
        let expected: String = std::iter::once("tax.py: lines 93–102 of 102\n".to_owned())
            .chain((93..=100).map(|n| format!("x{n} = {n}\n")))
            .chain([
                "def apply_gst(amount):\n".to_owned(),
                "    return amount\n".to_owned(),
            ])
            .collect();
        assert_eq!(found.text, expected);
    }

    #[test]
    fn the_source_files_test_is_found_by_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/test_tax.py"), "import tax\n").unwrap();
        std::fs::write(
            dir.path().join("tests/test_invoice_totals.py"),
            "from billing import invoice_totals\n\ndef test_a():\n    pass\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("tests/test_invoice_totals.py"),
            "from billing import invoice_totals\n\n@mark\n@pytest.mark.slow\ndef test_a():\n    pass\n\n\ndef test_b():\n    pass\n",
        )
        .unwrap();
        let found = test_for(&tree(dir.path()), "billing/invoice_totals.py", 40).unwrap();
        assert_eq!(found.path, "tests/test_invoice_totals.py");
        assert_eq!(
            found.text,
            "tests/test_invoice_totals.py: lines 1–6 of 10\nfrom billing import invoice_totals\n\n@mark\n@pytest.mark.slow\ndef test_a():\n    pass\n",
            "through the first test (its decorators included), trailing blank lines dropped"
        );
        let capped = test_for(&tree(dir.path()), "billing/invoice_totals.py", 2).unwrap();
        assert!(
            capped
                .text
                .starts_with("tests/test_invoice_totals.py: lines 1–1 of 10\n"),
            "{}",
            capped.text
        );
        assert_eq!(test_for(&tree(dir.path()), "billing/refunds.py", 5), None);
    }

    #[test]
    fn the_closest_test_uses_most_of_the_tickets_figures() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("tests/test_totals.py"),
            "from billing import totals\n\n\ndef item(price, discount=\"0\"):\n    return (price, discount)\n\n\ndef test_gst_on_full_price():\n    assert totals(item(\"1000.00\")).tax == 180\n\n\ndef test_discount_is_taken_off():\n    line = item(\"1000.00\", discount=\"100.00\")\n    assert totals(line).taxable == 900\n\n\ndef test_rounding():\n    assert totals(item(\"0.10\")).tax == 0\n",
        )
        .unwrap();
        let ticket = "GST charged on the full price with a discount: an item of Rs 1,000 with a Rs 100 discount should have Rs 162 of GST (18 percent of Rs 900), not Rs 180.";
        assert_eq!(
            closest_test(&tree(dir.path()), "tests/test_totals.py", ticket, 40).as_deref(),
            Some(
                "tests/test_totals.py, lines 12–13, up to its first assert:\ndef test_discount_is_taken_off():\n    line = item(\"1000.00\", discount=\"100.00\")\n"
            ),
            "three of the ticket's figures (1000, 100, 900) beat two (1000, 180) and more of its words; the asserts are the model's to write"
        );
        assert_eq!(
            closest_test(
                &tree(dir.path()),
                "tests/test_totals.py",
                "nothing shared",
                40
            )
            .as_deref(),
            Some(
                "tests/test_totals.py, lines 8–9:\ndef test_gst_on_full_price():\n    assert totals(item(\"1000.00\")).tax == 180\n"
            ),
            "a tie goes to the first test, shown whole when it has no setup before its assert"
        );
        assert_eq!(
            closest_test(
                &tree(dir.path()),
                "tests/test_totals.py",
                "nothing shared",
                1
            )
            .as_deref(),
            Some("tests/test_totals.py, lines 8–8:\ndef test_gst_on_full_price():\n"),
            "cut at max_lines"
        );
        assert_eq!(
            closest_test(&tree(dir.path()), "tests/missing.py", ticket, 40),
            None
        );
        assert_eq!(
            closest_test_text(&tree(dir.path()), "tests/test_totals.py", ticket).as_deref(),
            Some(
                "def test_discount_is_taken_off():\n    line = item(\"1000.00\", discount=\"100.00\")\n    assert totals(line).taxable == 900"
            )
        );
        assert_eq!(
            closest_test_text(
                &tree(dir.path()),
                "tests/test_totals.py",
                "BILL-7: crash at 1000 items"
            ),
            None,
            "one shared figure is no example the test builds"
        );
    }

    #[test]
    fn the_tickets_example_is_its_sentences_that_say_what_should_happen() {
        let ticket = "# BILL-412: GST charged on the full price\n\nWhen a customer uses a code, the invoice charges GST\non the full price instead of the discounted price.\n\nExample: an item costs Rs 1,000 with a Rs 100 discount. 18 percent GST should\nbe Rs 162 (18 percent of Rs 900), but the invoice shows Rs 180.\nIt was reported twice.\n\nExpected: GST is worked out on the price after the discount.\n";
        assert_eq!(
            ticket_example(ticket, 1_000).as_deref(),
            Some(
                "Example: an item costs Rs 1,000 with a Rs 100 discount. 18 percent GST should be Rs 162 (18 percent of Rs 900), but the invoice shows Rs 180. Expected: GST is worked out on the price after the discount."
            )
        );
        assert_eq!(
            ticket_example(ticket, 120).as_deref(),
            Some("Example: an item costs Rs 1,000 with a Rs 100 discount."),
            "whole sentences only, up to the limit"
        );
        assert_eq!(ticket_example("Crash on start-up.", 100), None);
    }

    #[test]
    fn figures_compare_as_numbers() {
        let found = figures("Rs 1,000 and \"1000.00\", 0.180, 18 percent; BILL-412.");
        assert_eq!(
            found.into_iter().collect::<Vec<_>>(),
            ["0.18", "1000", "18", "412"]
        );
    }

    #[test]
    fn no_shared_word_means_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        assert_eq!(relevant_code(&tree(dir.path()), "GST rounding", 10), None);
    }
}
