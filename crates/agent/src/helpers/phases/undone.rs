//! The edits plumb undid, remembered: an edit whose `old_text` is an undone edit's text is taken
//! as the lines that edit replaced, and while the figure trace names a line, an edit back to
//! undone lines that leaves it out is refused (and a failed edit of that file is told the line).

use plumb_protocol::ToolCall;

use super::state::Phases;
use super::verdict::first_line_of;
use super::words::Note;

impl Phases {
    /// A refusal of an edit that goes back to the lines of a fix plumb undid, leaving out the
    /// line the figure trace named, while no fix has been kept. Told which line makes the
    /// ticket's wrong figure, a 1.5B model still edited its undone line again in two rounds of
    /// one benchmark run (with `old_text` its own undone line, rebased onto the original): a
    /// refused sample makes the candidates helper try the next one, and the model is shown the
    /// line to edit, with the `old_text` to copy.
    pub(super) fn repeats_undone_lines(&self, call: &ToolCall) -> Option<Note> {
        if self.source_edited || call.name != "edit_file" {
            return None;
        }
        let (file, code) = self.pointed_line.as_ref()?;
        let pointer = self.pointer.as_deref()?;
        let path = call.arguments.get("path")?.as_str()?;
        if path != file {
            return None;
        }
        let rebased = self.rebase_on_undone(call);
        let arguments = rebased.as_ref().map_or(&call.arguments, |(args, _)| args);
        let old = arguments.get("old_text")?.as_str()?;
        let lines = |text: &str| -> Vec<String> {
            text.lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(str::to_string)
                .collect()
        };
        let old_lines = lines(old);
        if old_lines.is_empty() || old_lines.contains(code) {
            return None;
        }
        // A line like `)` or `else:` is in many edits: only lines with some code count.
        let has_code = |line: &String| line.chars().filter(|c| c.is_alphanumeric()).count() >= 3;
        let (_, undone_old, _) = self.undone.iter().rev().find(|(p, undone_old, _)| {
            p == path
                && lines(undone_old)
                    .iter()
                    .any(|line| has_code(line) && old_lines.contains(line))
        })?;
        Some(Note::UndoneLines {
            undone: first_line_of(undone_old).to_string(),
            pointer: pointer.to_string(),
            line: code.clone(),
        })
    }

    /// What to add to the error of an `edit_file` call that could not be made (its `old_text`
    /// matched nothing or several times, or the file would not parse after it) on the file the
    /// figure trace names, while no fix has
    /// been kept and the `old_text` leaves out the named line: the trace's sentence and the line
    /// to copy. In a replay of a benchmark run the 1.5B model's next edit after an undone one was
    /// its undone line with the start changed, which matches nothing; the error showed the file
    /// around it, but not which line the trace named.
    pub(crate) fn after_failed_edit(&self, call: &ToolCall) -> Option<Note> {
        if self.source_edited || call.name != "edit_file" {
            return None;
        }
        let (file, code) = self.pointed_line.as_ref()?;
        let pointer = self.pointer.as_deref()?;
        let path = call.arguments.get("path")?.as_str()?;
        let old = call.arguments.get("old_text")?.as_str()?;
        if path != file || old.is_empty() || old.lines().any(|line| line.trim() == code) {
            return None;
        }
        Some(Note::TraceLine {
            pointer: pointer.to_string(),
            line: code.clone(),
        })
    }

    /// Remembers an `edit_file` call plumb undid (see [`Phases::undoes`]).
    pub(crate) fn remember_undone(&mut self, call: &ToolCall) {
        if call.name != "edit_file" {
            return;
        }
        // An edit that was itself rebased replaced the original lines.
        let arguments = self
            .rebase_on_undone(call)
            .map_or_else(|| call.arguments.clone(), |(arguments, _)| arguments);
        let text = |key: &str| arguments.get(key)?.as_str().map(str::to_string);
        if let (Some(path), Some(old), Some(new)) =
            (text("path"), text("old_text"), text("new_text"))
            && !old.is_empty()
        {
            self.undone.push((path, old, new));
        }
    }

    /// An `edit_file` call whose `old_text` is the `new_text` of an edit plumb undid, rewritten
    /// to replace the lines that edit had replaced, with a note saying so. A 1.5B model told that
    /// its edit was undone went on copying its own edited lines into `old_text`: one run spent
    /// nine rounds on "old_text found 0 times".
    pub(crate) fn rebase_on_undone(&self, call: &ToolCall) -> Option<(serde_json::Value, Note)> {
        if call.name != "edit_file" {
            return None;
        }
        let path = call.arguments.get("path")?.as_str()?;
        let old = call.arguments.get("old_text")?.as_str()?;
        let (_, original, _) = self
            .undone
            .iter()
            .rev()
            .find(|(p, _, new)| p == path && new == old && !old.is_empty())?;
        let mut arguments = call.arguments.clone();
        arguments["old_text"] = serde_json::Value::String(original.clone());
        Some((
            arguments,
            Note::Rebased {
                original: first_line_of(original).to_string(),
            },
        ))
    }
}
