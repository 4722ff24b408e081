//! The Python-notes helper: when a helper undid a code edit because the tests then failed with
//! Python's `UnboundLocalError` or `NameError`, the note says which name, where the function
//! assigns it or which names it has (`unbound.rs`, `undefined.rs`). A small model told only that
//! tests failed sent the same line again round after round.

mod unbound;
mod undefined;

use async_trait::async_trait;
use plumb_context::templates::{TemplateError, render};
use plumb_protocol::ToolCall;
use serde::Serialize;

use crate::ending::Ending;
use crate::policy::{Policy, RunHandle, ToolOutcome};

pub(crate) struct PythonNotes;

/// What the note says (`python_notes/notes.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "case", rename_all = "snake_case")]
pub(crate) enum PythonNote {
    /// `name` is used above `line` of `path`, whose `code` assigns it.
    Unbound {
        name: String,
        path: String,
        line: usize,
        code: String,
    },
    /// `name` is none of the `names` `function` has above the edit; `attribute` is how the
    /// function already spells it (`item.discount`), when it does.
    Undefined {
        name: String,
        function: String,
        names: Vec<String>,
        attribute: Option<String>,
    },
}

/// The words of `note`.
fn words(note: &PythonNote) -> Result<String, TemplateError> {
    let mut text = render("python_notes/notes.md", note)?;
    if text.ends_with('\n') {
        text.pop();
    }
    Ok(text)
}

#[async_trait]
impl Policy for PythonNotes {
    async fn after_tool(
        &mut self,
        run: &mut dyn RunHandle,
        call: &ToolCall,
        outcome: &mut ToolOutcome,
    ) -> Result<(), Ending> {
        if !outcome.undone || call.name != "edit_file" {
            return Ok(());
        }
        let text_of = |key: &str| call.arguments.get(key).and_then(|v| v.as_str());
        let (Some(path), old_text) = (text_of("path"), text_of("old_text").unwrap_or_default())
        else {
            return Ok(());
        };
        // The file as it is again after the undo.
        let Some(file_text) = run.read(path) else {
            return Ok(());
        };
        let note = unbound::used_before_assignment(&outcome.report, path, &file_text, old_text)
            .or_else(|| undefined::not_defined(&outcome.report, &file_text, old_text));
        if let Some(note) = note {
            // A line of its own: long lines are cut in what the model is shown.
            outcome.text.push('\n');
            outcome.text.push_str(&words(&note).map_err(Ending::infra)?);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::fake_run::FakeRun;

    #[tokio::test]
    async fn an_edit_undone_for_unbound_local_error_is_told_where_the_variable_is_assigned() {
        let file = "def line_totals(item):\n    gross = item.price\n    tax = compute_gst(gross, rate)\n    net = apply_discount(gross, item.discount)\n";
        let mut run = FakeRun::default();
        run.files.insert("invoice.py".into(), file.into());
        let call = ToolCall {
            id: "c".into(),
            name: "edit_file".into(),
            arguments: serde_json::json!({"path": "invoice.py", "old_text": "tax = compute_gst(gross, rate)", "new_text": "tax = compute_gst(net, rate)"}),
        };
        let mut outcome = ToolOutcome {
            ok: false,
            undone: true,
            text: "plumb undid this edit".into(),
            report: "E   UnboundLocalError: cannot access local variable 'net' where it is not associated with a value".into(),
            ..ToolOutcome::default()
        };
        PythonNotes
            .after_tool(&mut run, &call, &mut outcome)
            .await
            .unwrap_or_else(|e| panic!("{}", e.reason));
        assert_eq!(
            outcome.text,
            "plumb undid this edit\nUnboundLocalError: your line uses `net` above the line that assigns it (invoice.py line 4: `net = apply_discount(gross, item.discount)`). To use `net`, make one edit whose old_text is from your line down to that line, and whose new_text assigns `net` first, then uses it."
        );
        let mut kept = ToolOutcome {
            ok: true,
            report: outcome.report.clone(),
            ..ToolOutcome::default()
        };
        PythonNotes
            .after_tool(&mut run, &call, &mut kept)
            .await
            .unwrap_or_else(|e| panic!("{}", e.reason));
        assert_eq!(kept.text, "", "a kept edit gets no note");
    }
}
