//! Figure trace, part of the guided phases: where on the original code the ticket's figures come
//! from. When plumb undoes a fix before one was kept (the fix probe of `figures.rs` rejected it,
//! or it broke tests that passed before), it runs the setup of the existing test closest to the
//! ticket once more, on the original code, under Python's `sys.settrace`, and notes each line of
//! the source file shown up front that sets a local (or returns) a figure the ticket gives. The line whose figure is nearest to one the ticket gives but no line makes
//! is named to the model: on BILL-412, line 52 `tax = compute_gst(gross, rate)` sets `tax` to
//! 180.00, the ticket's wrong Rs 180, where no line comes to its Rs 162.
//!
//! Why: a 1.5B model whose fix was undone went on editing the line it had chosen first (the
//! discount check of `check_line`, three runs of ten in one benchmark) until the round limit,
//! told only to "change the line that computes what the ticket says is wrong". Which line that
//! is, a run of the example answers, not a reading of the prose. In four of five BILL-412 runs
//! since whose first fix was undone, the next round's fix edited line 52.
//!
//! Only Python tests run by pytest, only a top-level test function with setup lines before its
//! first assert; figures the test's own lines give or check are left out (they are the inputs
//! and the values it already checks). The trace runs once per run, in a copy of the original
//! tree; nothing of it reaches the workspace.

use std::collections::BTreeSet;

use plumb_context::relevant::figures;
use plumb_context::templates::{TemplateError, render};
use plumb_protocol::Outcome;
use plumb_verify::Runner;
use serde::{Deserialize, Serialize};

use crate::ending::Ending;
use crate::policy::RunHandle;

/// The name the traced copy of the closest test is written under.
const TRACE: &str = "test_plumb_trace";

/// What the traced test's failure message starts with; the JSON list of lines follows it.
const MARK: &str = "PLUMB_TRACE ";

/// At most this many distinct (line, name, value) notes are kept by the traced test: a loop in
/// the traced code must not flood the output.
const MAX_NOTES: usize = 400;

/// One value a line of the traced file set: `[line, function, name, value]` as the test prints
/// it; `name` is `return` for a returned value.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
struct Made(usize, String, String, String);

/// The line a trace points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Pointer {
    pub file: String,
    pub line: usize,
    pub function: String,
    /// The local it set (`return` for a returned value), and the value as Python printed it.
    pub name: String,
    pub value: String,
    /// The line's code, trimmed.
    pub code: String,
    /// The ticket's figure the value equals, and the ticket's figure no traced line made that
    /// is nearest to it (none when every figure of the ticket was made somewhere).
    pub figure: String,
    pub missing: Option<String>,
}

impl Pointer {
    /// The sentence for the model (`trace/pointer.md`).
    pub(crate) fn sentence(&self) -> Result<String, TemplateError> {
        let mut text = render("trace/pointer.md", self)?;
        if text.ends_with('\n') {
            text.pop();
        }
        Ok(text)
    }
}

/// Traces the setup of `example` (the closest test, in `test_file`) through `source_file` on
/// the original code, and picks the line to point the model at. `None` when the trace cannot
/// run here or no line makes a figure of the ticket.
pub(crate) async fn trace_figures(
    run: &mut dyn RunHandle,
    test_file: &str,
    example: &str,
    source_file: &str,
) -> Result<Option<Pointer>, Ending> {
    if run.runner() != Runner::Pytest
        || !test_file.ends_with(".py")
        || !source_file.ends_with(".py")
    {
        return Ok(None);
    }
    let wanted = wanted_figures(run.ticket(), example);
    if wanted.is_empty() {
        return Ok(None);
    }
    let Some(traced) = traced_test(example, source_file, &wanted) else {
        return Ok(None);
    };
    let Some(text) = run.read_original(test_file) else {
        return Ok(None);
    };
    let source = run.read_original(source_file).unwrap_or_default();
    let with_trace = format!("{}\n\n\n{traced}\n", text.trim_end());
    let traced_run = run
        .run_on_original_with(test_file, &with_trace, &[format!("{test_file}::{TRACE}")])
        .await;
    let traced_run = match traced_run {
        Ok(traced_run) => traced_run,
        // A hint that could not be had is no reason to end the run; a cancel is.
        Err(ending) if ending.outcome == Outcome::Cancelled => return Err(ending),
        Err(_) => return Ok(None),
    };
    let Some(made) = parse(&traced_run.excerpt) else {
        return Ok(None);
    };
    Ok(pick(&made, &wanted).map(|(made, missing)| {
        let code = source
            .lines()
            .nth(made.0.saturating_sub(1))
            .unwrap_or_default()
            .trim()
            .to_string();
        Pointer {
            file: source_file.to_string(),
            line: made.0,
            function: made.1.clone(),
            name: made.2.clone(),
            value: made.3.clone(),
            code,
            figure: plain(&made.3),
            missing,
        }
    }))
}

/// The ticket's figures a traced line may make: all of them but those the closest test's own
/// lines give (its inputs, and the values its asserts already check).
fn wanted_figures(ticket: &str, example: &str) -> BTreeSet<String> {
    let given = figures(example);
    figures(ticket)
        .into_iter()
        .filter(|figure| !given.contains(figure))
        .collect()
}

/// The figure a value stands for, as [`figures`] writes them: no trailing zeros after a point.
fn plain(value: &str) -> String {
    if value.contains('.') {
        value
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        value.to_string()
    }
}

/// The note to point at, and the figure it is nearest to: the note whose value is nearest (by
/// ratio) to a figure of `wanted` that no note made, the earliest on a tie; the earliest note,
/// and no figure, when every wanted figure was made.
fn pick<'a>(made: &'a [Made], wanted: &BTreeSet<String>) -> Option<(&'a Made, Option<String>)> {
    let produced: BTreeSet<String> = made.iter().map(|m| plain(&m.3)).collect();
    let missing: Vec<(&String, f64)> = wanted
        .iter()
        .filter(|figure| !produced.contains(*figure))
        .filter_map(|figure| Some((figure, figure.parse::<f64>().ok()?)))
        .filter(|(_, number)| *number > 0.0)
        .collect();
    let nearest = |m: &Made| -> Option<(f64, &String)> {
        let value = plain(&m.3).parse::<f64>().ok().filter(|v| *v > 0.0)?;
        missing
            .iter()
            .map(|(figure, number)| ((value / number).ln().abs(), *figure))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    };
    let candidates = made.iter().filter(|m| wanted.contains(&plain(&m.3)));
    let best = candidates
        .clone()
        .filter_map(|m| nearest(m).map(|(distance, figure)| (distance, figure, m)))
        // `min_by` keeps the first of equal elements: the earliest note on a tie.
        .min_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((_, figure, m)) => Some((m, Some(figure.clone()))),
        None => candidates.into_iter().next().map(|m| (m, None)),
    }
}

/// The notes the traced test printed, from its failure output.
fn parse(excerpt: &str) -> Option<Vec<Made>> {
    // The mark is also in the listing of the test's source, where no list follows it.
    excerpt.match_indices(MARK).find_map(|(at, _)| {
        let rest = excerpt.get(at + MARK.len()..)?;
        let line = rest.lines().next()?.trim();
        serde_json::from_str(line).ok()
    })
}

/// The closest test as a traced test: its decorators and signature under the name [`TRACE`], its
/// lines before the first assert run under `sys.settrace`, and a failure whose message lists the
/// lines of `source_file` that made one of `wanted`. `None` for a test this cannot take apart.
fn traced_test(example: &str, source_file: &str, wanted: &BTreeSet<String>) -> Option<String> {
    let lines: Vec<&str> = example.lines().collect();
    let def = lines.iter().position(|line| line.starts_with("def test"))?;
    let name = lines[def]
        .strip_prefix("def ")?
        .split('(')
        .next()?
        .trim()
        .to_string();
    let body_start = (def..lines.len()).find(|&i| lines[i].trim_end().ends_with(':'))? + 1;
    let body_end = (body_start..lines.len())
        .find(|&i| {
            let line = lines[i].trim_start();
            ["assert", "with pytest.raises", "self.assert"]
                .iter()
                .any(|opening| line.starts_with(opening))
        })
        .unwrap_or(lines.len());
    let setup = &lines[body_start..body_end];
    let first = setup.iter().find(|line| !line.trim().is_empty())?;
    let indent = first.get(..first.len() - first.trim_start().len())?;
    if indent.is_empty() {
        return None;
    }
    let mut out = String::new();
    for line in &lines[..body_start] {
        out.push_str(&line.replacen(&format!("def {name}("), &format!("def {TRACE}("), 1));
        out.push('\n');
    }
    let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
    let suffix = format!("/{}", source_file.trim_start_matches("./"));
    let tracer = TRACER
        .replace("{WANTED}", &serde_json::to_string(&wanted).ok()?)
        .replace("{FILE}", &serde_json::to_string(&suffix).ok()?)
        .replace("{MAX}", &MAX_NOTES.to_string())
        .replace("{MARK}", MARK);
    for line in tracer.lines() {
        if line.is_empty() {
            out.push('\n');
        } else if line == "<setup>" {
            for setup_line in setup {
                if setup_line.trim().is_empty() {
                    out.push('\n');
                } else {
                    out.push_str(indent);
                    out.push_str(setup_line);
                    out.push('\n');
                }
            }
        } else {
            out.push_str(indent);
            out.push_str(line);
            out.push('\n');
        }
    }
    Some(out)
}

/// The traced test's body around the setup (`<setup>`), indented one level by [`traced_test`].
/// A local is noted on the line that ran before it was first seen with its value; a returned
/// value on the `return` line. Generator expressions and comprehensions (`<genexpr>`, …) are left
/// out: a yielded value is reported like a returned one, and it is a value some named function
/// already made. Names start `_plumb_` so that they cannot clash with the setup's.
const TRACER: &str = r#"import decimal as _plumb_decimal
import json as _plumb_json
import sys as _plumb_sys
_plumb_wanted = set({WANTED})
_plumb_made = []
_plumb_last = {}
def _plumb_figure(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, _plumb_decimal.Decimal):
        text = format(value, "f")
    elif isinstance(value, (int, float)):
        text = repr(value)
    else:
        return None
    plain = text.rstrip("0").rstrip(".") if "." in text else text
    return text if plain in _plumb_wanted else None
def _plumb_note(note):
    if note not in _plumb_made and len(_plumb_made) < {MAX}:
        _plumb_made.append(note)
def _plumb_local(frame, event, arg):
    values = {}
    for name, value in list(frame.f_locals.items()):
        text = _plumb_figure(value)
        if text is not None:
            values[name] = text
    before = _plumb_last.get(id(frame))
    if before is not None:
        for name, text in values.items():
            if before[1].get(name) != text:
                _plumb_note([before[0], frame.f_code.co_name, name, text])
    if event == "return":
        _plumb_last.pop(id(frame), None)
        text = _plumb_figure(arg)
        if text is not None:
            _plumb_note([frame.f_lineno, frame.f_code.co_name, "return", text])
    else:
        _plumb_last[id(frame)] = (frame.f_lineno, values)
    return _plumb_local
def _plumb_call(frame, event, arg):
    code = frame.f_code
    if code.co_name.startswith("<") or not code.co_filename.replace("\\", "/").endswith({FILE}):
        return None
    return _plumb_local
_plumb_sys.settrace(_plumb_call)
try:
<setup>
except Exception:
    pass
finally:
    _plumb_sys.settrace(None)
raise AssertionError("{MARK}" + _plumb_json.dumps(_plumb_made))
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const TICKET: &str = "Example: an item costs Rs 1,000 with a Rs 100 discount. 18 percent GST should be Rs 162 (18 percent of Rs 900), but the invoice shows Rs 180 (18 percent of Rs 1,000).";

    const EXAMPLE: &str = r#"def test_discount_reduces_taxable_value():
    totals = compute_invoice_totals(invoice(item("1000.00", discount="100.00")))
    assert totals.subtotal == Decimal("1000.00")
    assert totals.discount == Decimal("100.00")
    assert totals.taxable_value == Decimal("900.00")"#;

    fn made(line: usize, function: &str, name: &str, value: &str) -> Made {
        Made(line, function.into(), name.into(), value.into())
    }

    #[test]
    fn the_figures_the_test_gives_or_checks_are_not_wanted() {
        let wanted: Vec<String> = wanted_figures(TICKET, EXAMPLE).into_iter().collect();
        assert_eq!(wanted, ["162", "18", "180"]);
    }

    #[test]
    fn the_traced_test_runs_the_setup_only_under_its_own_name() {
        let wanted = wanted_figures(TICKET, EXAMPLE);
        let traced = traced_test(EXAMPLE, "billing/invoice_totals.py", &wanted).unwrap();
        assert!(traced.starts_with("def test_plumb_trace():\n"), "{traced}");
        assert!(
            traced.contains(
                "\n    try:\n        totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n    except Exception:\n"
            ),
            "{traced}"
        );
        assert!(traced.contains("endswith(\"/billing/invoice_totals.py\")"));
        assert!(traced.contains("set([\"162\",\"18\",\"180\"])"));
        assert!(!traced.contains("assert totals"), "{traced}");
    }

    #[test]
    fn a_test_without_setup_or_inside_a_class_is_not_traced() {
        let wanted = wanted_figures(TICKET, EXAMPLE);
        let no_setup = "def test_x():\n    assert f(1000) == 180\n";
        assert_eq!(traced_test(no_setup, "a.py", &wanted), None);
        let method = "class TestX:\n    def test_x(self):\n        t = f(1000)\n";
        assert_eq!(traced_test(method, "a.py", &wanted), None);
    }

    #[test]
    fn the_notes_are_read_from_the_failure_message() {
        let excerpt = "=== FAILURES ===\n___ test_plumb_trace ___\n>       raise AssertionError(\"PLUMB_TRACE \" + _plumb_json.dumps(_plumb_made))\nE       AssertionError: PLUMB_TRACE [[51, \"line_totals\", \"rate\", \"18\"], [52, \"line_totals\", \"tax\", \"180.00\"]]\n\ntests/test_x.py:90: AssertionError\n";
        assert_eq!(
            parse(excerpt),
            Some(vec![
                made(51, "line_totals", "rate", "18"),
                made(52, "line_totals", "tax", "180.00")
            ])
        );
        assert_eq!(parse("1 passed"), None);
    }

    #[test]
    fn the_line_nearest_a_figure_no_line_made_is_picked() {
        let wanted = wanted_figures(TICKET, EXAMPLE);
        let notes = [
            made(51, "line_totals", "rate", "18"),
            made(52, "line_totals", "tax", "180.00"),
            made(74, "compute_invoice_totals", "tax", "180.00"),
        ];
        let (picked, missing) = pick(&notes, &wanted).unwrap();
        assert_eq!(picked, &notes[1]);
        assert_eq!(missing.as_deref(), Some("162"));
        // Every wanted figure made somewhere: the first note, with nothing said missing.
        let all = [made(51, "f", "rate", "18"), made(52, "f", "tax", "162")];
        let (picked, missing) = pick(&all, &BTreeSet::from(["18".into(), "162".into()])).unwrap();
        assert_eq!((picked, missing), (&all[0], None));
        assert_eq!(pick(&[], &wanted), None);
    }

    #[test]
    fn the_sentence_names_the_line_its_code_and_the_figures() {
        let pointer = Pointer {
            file: "billing/invoice_totals.py".into(),
            line: 52,
            function: "line_totals".into(),
            name: "tax".into(),
            value: "180.00".into(),
            code: "tax = compute_gst(gross, rate)".into(),
            figure: "180".into(),
            missing: Some("162".into()),
        };
        assert_eq!(
            pointer.sentence().unwrap(),
            "plumb ran the closest test's example on the original code: line 52 of billing/invoice_totals.py (in line_totals), `tax = compute_gst(gross, rate)`, sets tax to 180.00: the ticket's 180, while no line comes to the ticket's 162. Change that line so it computes what the ticket says it should."
        );
        let returned = Pointer {
            name: "return".into(),
            missing: None,
            ..pointer
        };
        assert_eq!(
            returned.sentence().unwrap(),
            "plumb ran the closest test's example on the original code: line 52 of billing/invoice_totals.py (in line_totals), `tax = compute_gst(gross, rate)`, returns 180.00: the ticket's 180. Change that line so it computes what the ticket says it should."
        );
    }

    /// The traced test, run by the real pytest on the bundled example: the tracer itself.
    #[test]
    fn pytest_traces_the_bundled_example_to_the_tax_line() {
        let example =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/billing");
        let dir = std::env::temp_dir().join(format!("plumb-trace-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        copy_tree(&example, &dir);
        let wanted = wanted_figures(TICKET, EXAMPLE);
        let traced = traced_test(EXAMPLE, "billing/invoice_totals.py", &wanted).unwrap();
        let test_file = dir.join("tests/test_invoice_totals.py");
        let text = std::fs::read_to_string(&test_file).unwrap();
        std::fs::write(&test_file, format!("{text}\n\n{traced}")).unwrap();
        let output = std::process::Command::new("python3")
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(format!("tests/test_invoice_totals.py::{TRACE}"))
            .current_dir(&dir)
            .output()
            .expect("python3 with pytest (scripts/setup-test-deps.sh installs it)");
        let _ = std::fs::remove_dir_all(&dir);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let notes = parse(&stdout).unwrap_or_else(|| panic!("no trace in:\n{stdout}"));
        let (picked, missing) = pick(&notes, &wanted).unwrap();
        assert_eq!(
            picked,
            &made(52, "line_totals", "tax", "180.00"),
            "{notes:?}"
        );
        assert_eq!(missing.as_deref(), Some("162"));
        assert!(notes.contains(&made(74, "compute_invoice_totals", "tax", "180.00")));
    }

    fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy_tree(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
}
