//! The oracle (`--model oracle`): a scripted model generated from a task's gold patch. It makes the
//! gold change through the model-facing tools — one `edit_file` per changed file, one `create_file`
//! per new file — then writes the task's test patch the same way (the tests that show the bug; plumb's
//! ladder asks for a test that fails without the fix, as it would of any agent), and says `done`.
//! Every valid task must then score resolved and plumb's ladder must agree: this tests the harness on
//! real repositories without a model.
//!
//! An edit's `old_text` is the smallest run of whole lines of the file that covers every hunk and
//! occurs in the file exactly once (`edit_file` refuses any other), so a gold patch is played as the
//! same bytes. What the tools cannot do is refused with a sentence: deleting or renaming a file,
//! binary patches, mode changes alone.

use std::path::Path;

use plumb_model::{ScriptModel, parse_script};
use serde_json::json;

/// Why a gold patch cannot be played.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the oracle cannot play the {which} of {instance_id}: {detail}")]
pub struct OracleError {
    pub instance_id: String,
    pub which: &'static str,
    pub detail: String,
}

/// The script (JSON Lines, docs/contracts.md §6) that plays `patch` and then `test_patch` on the
/// tree at `tree`, and says `done`.
pub fn script(
    instance_id: &str,
    tree: &Path,
    patch: &str,
    test_patch: Option<&str>,
) -> Result<String, OracleError> {
    let mut lines = Vec::new();
    for (which, diff) in [("gold patch", Some(patch)), ("test patch", test_patch)] {
        let Some(diff) = diff.filter(|d| !d.trim().is_empty()) else {
            continue;
        };
        let fail = |detail: String| OracleError {
            instance_id: instance_id.to_owned(),
            which,
            detail,
        };
        for file in parse_diff(diff).map_err(&fail)? {
            lines.push(play_file(tree, &file).map_err(&fail)?);
        }
    }
    if lines.is_empty() {
        return Err(OracleError {
            instance_id: instance_id.to_owned(),
            which: "gold patch",
            detail: "the task has no gold patch; give it a `patch` field".to_owned(),
        });
    }
    let done =
        json!({"tool": "done", "args": {"summary": "Applied the task's gold patch (oracle)."}});
    lines.push(done.to_string());
    Ok(lines.join("\n") + "\n")
}

/// The oracle as a model client.
pub fn model(
    instance_id: &str,
    tree: &Path,
    patch: &str,
    test_patch: Option<&str>,
) -> Result<(ScriptModel, String), OracleError> {
    let text = script(instance_id, tree, patch, test_patch)?;
    let turns = parse_script(&text).map_err(|detail| OracleError {
        instance_id: instance_id.to_owned(),
        which: "gold patch",
        detail,
    })?;
    Ok((ScriptModel::from_turns("oracle".to_owned(), turns), text))
}

/// One file's part of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileDiff {
    old_path: Option<String>,
    new_path: Option<String>,
    hunks: Vec<Hunk>,
    binary: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    /// 1-based first line of the old side (for an insertion with no old lines: the line after which).
    old_start: usize,
    old: Vec<String>,
    new: Vec<String>,
}

/// Splits a unified diff (git's or plain) into files and hunks; each hunk line keeps its `\n`
/// unless a `\ No newline at end of file` marker follows it.
fn parse_diff(diff: &str) -> Result<Vec<FileDiff>, String> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut lines = diff.split_inclusive('\n').peekable();
    // Which side(s) the last hunk line went to, for the no-newline marker.
    let mut last: Option<char> = None;
    while let Some(line) = lines.next() {
        if line.starts_with("diff --git ") {
            files.push(FileDiff {
                old_path: None,
                new_path: None,
                hunks: Vec::new(),
                binary: false,
            });
            last = None;
        } else if let Some(rest) = line.strip_prefix("--- ") {
            if files
                .last()
                .is_none_or(|f| f.old_path.is_some() || !f.hunks.is_empty())
            {
                files.push(FileDiff {
                    old_path: None,
                    new_path: None,
                    hunks: Vec::new(),
                    binary: false,
                });
            }
            if let Some(file) = files.last_mut() {
                file.old_path = Some(diff_path(rest));
            }
        } else if let Some(rest) = line.strip_prefix("+++ ") {
            if let Some(file) = files.last_mut() {
                file.new_path = Some(diff_path(rest));
            }
        } else if line.starts_with("Binary files ") || line.starts_with("GIT binary patch") {
            if let Some(file) = files.last_mut() {
                file.binary = true;
            }
        } else if line.starts_with("@@ ") {
            let header = hunk_header(line)?;
            let file = files.last_mut().ok_or_else(|| {
                format!("a hunk comes before any file header: {}", line.trim_end())
            })?;
            let mut hunk = Hunk {
                old_start: header.old_start,
                old: Vec::new(),
                new: Vec::new(),
            };
            // The hunk's lines: as many as its header counts, then any no-newline marker.
            while hunk.old.len() < header.old_count || hunk.new.len() < header.new_count {
                let Some(next) = lines.next() else {
                    return Err(format!("the hunk {} ends early", line.trim_end()));
                };
                let (side, text) = match next.chars().next() {
                    Some(side @ (' ' | '-' | '+')) => (side, next.get(1..).unwrap_or_default()),
                    Some('\\') => {
                        strip_newline(&mut hunk, last);
                        continue;
                    }
                    // An empty context line whose leading space was lost (some tools strip it).
                    Some('\n') | Some('\r') => (' ', next),
                    _ => {
                        return Err(format!(
                            "a line of the hunk {} cannot be read: {}",
                            line.trim_end(),
                            next.trim_end()
                        ));
                    }
                };
                if side != '+' {
                    hunk.old.push(text.to_owned());
                }
                if side != '-' {
                    hunk.new.push(text.to_owned());
                }
                last = Some(side);
            }
            if lines.peek().is_some_and(|next| next.starts_with('\\')) {
                strip_newline(&mut hunk, last);
                lines.next();
            }
            file.hunks.push(hunk);
        }
    }
    Ok(files)
}

/// `\ No newline at end of file` after a line: that line (on its side) has no `\n`.
fn strip_newline(hunk: &mut Hunk, side: Option<char>) {
    let strip = |lines: &mut Vec<String>| {
        if let Some(last) = lines.last_mut()
            && last.ends_with('\n')
        {
            last.pop();
        }
    };
    match side {
        Some('-') => strip(&mut hunk.old),
        Some('+') => strip(&mut hunk.new),
        Some(' ') => {
            strip(&mut hunk.old);
            strip(&mut hunk.new);
        }
        _ => {}
    }
}

/// `a/src/x.py\n` → `src/x.py`; `/dev/null` stays; a tab-separated date is cut.
fn diff_path(rest: &str) -> String {
    let text = rest.trim_end_matches(['\n', '\r']);
    let text = text.split('\t').next().unwrap_or(text);
    if text == "/dev/null" {
        return text.to_owned();
    }
    text.strip_prefix("a/")
        .or_else(|| text.strip_prefix("b/"))
        .unwrap_or(text)
        .to_owned()
}

/// A hunk header's numbers.
struct HunkHeader {
    old_start: usize,
    old_count: usize,
    new_count: usize,
}

/// `@@ -12,5 +12,6 @@ context` → 12, 5, 6 (a count left out is 1).
fn hunk_header(line: &str) -> Result<HunkHeader, String> {
    let bad = || format!("a hunk header cannot be read: {}", line.trim_end());
    let mut parts = line.split_whitespace().skip(1);
    let range = |part: Option<&str>, sign: char| -> Option<(usize, usize)> {
        let body = part?.strip_prefix(sign)?;
        let mut numbers = body.splitn(2, ',');
        let start = numbers.next()?.parse().ok()?;
        let count = numbers.next().map_or(Some(1), |n| n.parse().ok())?;
        Some((start, count))
    };
    let (old_start, old_count) = range(parts.next(), '-').ok_or_else(bad)?;
    let (_, new_count) = range(parts.next(), '+').ok_or_else(bad)?;
    Ok(HunkHeader {
        old_start,
        old_count,
        new_count,
    })
}

/// The script line that makes `file`'s change.
fn play_file(tree: &Path, file: &FileDiff) -> Result<String, String> {
    let old = file.old_path.as_deref().unwrap_or("/dev/null");
    let new = file.new_path.as_deref().unwrap_or("/dev/null");
    if file.binary {
        return Err(format!(
            "{new} is a binary change; the tools write text only"
        ));
    }
    if new == "/dev/null" {
        return Err(format!("it deletes {old}; the tools cannot delete a file"));
    }
    if old == "/dev/null" {
        let content: String = file
            .hunks
            .iter()
            .flat_map(|h| h.new.iter().cloned())
            .collect();
        return Ok(
            json!({"tool": "create_file", "args": {"path": new, "content": content}}).to_string(),
        );
    }
    if old != new {
        return Err(format!(
            "it renames {old} to {new}; the tools cannot rename a file"
        ));
    }
    if file.hunks.is_empty() {
        return Err(format!(
            "its change of {new} has no hunks (a mode change alone?)"
        ));
    }
    let bytes = std::fs::read(tree.join(new))
        .map_err(|err| format!("{new} cannot be read in the starting tree ({err})"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{new} is not UTF-8 text"))?;
    let (old_text, new_text) = edit_for(&text, &file.hunks).map_err(|e| format!("{new}: {e}"))?;
    Ok(json!({"tool": "edit_file", "args": {"path": new, "old_text": old_text, "new_text": new_text}})
        .to_string())
}

/// The `old_text` and `new_text` of one edit making every hunk of a file whose content is `text`.
fn edit_for(text: &str, hunks: &[Hunk]) -> Result<(String, String), String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // Each hunk's old lines must be where its header says.
    let mut spans = Vec::new();
    for hunk in hunks {
        let start = if hunk.old.is_empty() {
            hunk.old_start
        } else {
            hunk.old_start.saturating_sub(1)
        };
        let end = start + hunk.old.len();
        let here = lines.get(start..end).map(|s| s.concat());
        if here.as_deref() != Some(&hunk.old.concat()) {
            return Err(format!(
                "the hunk at line {} does not match the file (the patch is for another version)",
                hunk.old_start
            ));
        }
        spans.push((start, end));
    }
    let first = spans.first().map_or(0, |s| s.0);
    let last = spans.last().map_or(0, |s| s.1);
    let (mut from, mut to) = (first, last);
    loop {
        let old_text: String = lines[from..to].concat();
        let unique = !old_text.is_empty() && text.matches(old_text.as_str()).count() == 1;
        if unique || (from == 0 && to == lines.len()) {
            let mut new_text: String = lines[from..first].concat();
            let mut at = first;
            for (hunk, (start, end)) in hunks.iter().zip(&spans) {
                new_text.push_str(&lines[at..*start].concat());
                new_text.push_str(&hunk.new.concat());
                at = *end;
            }
            new_text.push_str(&lines[at..to].concat());
            return Ok((old_text, new_text));
        }
        // Widen by a line on each side until the text occurs once.
        from = from.saturating_sub(1);
        to = (to + 1).min(lines.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const FILE: &str = "def a():\n    return 1\n\n\ndef b():\n    return 1\n";

    #[test]
    fn an_edit_widens_until_its_old_text_is_unique() {
        let diff = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -6 +6 @@\n-    return 1\n+    return 2\n";
        let files = parse_diff(diff).expect("parses");
        let actual = edit_for(FILE, &files[0].hunks).expect("plays");
        let expected = (
            "def b():\n    return 1\n".to_owned(),
            "def b():\n    return 2\n".to_owned(),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_new_file_and_a_missing_final_newline_are_played_exactly() {
        let diff = "diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n\\ No newline at end of file\n";
        let files = parse_diff(diff).expect("parses");
        let actual = play_file(Path::new("/nonexistent"), &files[0]).expect("plays");
        let expected =
            json!({"tool": "create_file", "args": {"path": "n.py", "content": "x = 1\ny = 2"}})
                .to_string();
        assert_eq!(actual, expected);
    }

    #[test]
    fn two_hunks_become_one_edit_with_the_lines_between() {
        let text: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        let diff = "--- a/f\n+++ b/f\n@@ -2,1 +2,1 @@\n-line 2\n+LINE 2\n@@ -19,1 +19,1 @@\n-line 19\n+LINE 19\n";
        let files = parse_diff(diff).expect("parses");
        let (old, new) = edit_for(&text, &files[0].hunks).expect("plays");
        assert_eq!(
            (old.lines().count(), new.replace("LINE", "line")),
            (18, old.clone())
        );
    }

    #[test]
    fn a_hunk_that_does_not_match_is_refused() {
        let diff = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-def z():\n+def y():\n";
        let files = parse_diff(diff).expect("parses");
        let err = edit_for(FILE, &files[0].hunks).expect_err("refused");
        assert!(err.contains("does not match"), "{err}");
    }
}
