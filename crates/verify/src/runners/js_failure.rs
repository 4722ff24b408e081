//! Whose mistake a JavaScript test failure shows: `node --test` (TAP or spec), mocha, jest and
//! vitest print an error's name, its message and its stack, in their own layouts.
//!
//! A `ReferenceError` (a name never defined), a `SyntaxError`, a module that cannot be found, or
//! a `TypeError` calling what is not a function is a mistake of the file it was raised in: the
//! first stack frame outside `node:` and `node_modules` (or, for a syntax error, the file the
//! message or the line above it names) says which. In a test file it is the test's own; in the
//! code, a `TypeError` is a bug that raises and the others mean the code cannot run. An
//! `AssertionError`, or jest's and vitest's `expect(received)…` block, is an assertion.

use crate::failure::{FailureKind, FailureReading, Place, TestPlaces, place_at};

/// The extensions of the files a stack frame can point at.
const SOURCE_EXTENSIONS: &[&str] = &["js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"];

/// How far below an error's message its first useful stack frame may be.
const FRAME_LINES: usize = 30;

/// One error the output shows: its name, the line that says it, and where it was raised.
struct Raised<'t> {
    name: &'t str,
    line: &'t str,
    place: Option<Place<'t>>,
}

/// The reading of a JavaScript runner's excerpt.
pub(crate) fn read(excerpt: &str, places: &dyn TestPlaces) -> FailureReading {
    let lines: Vec<&str> = excerpt.lines().map(plain).collect();
    let compared = compared(&lines);
    let raised: Vec<Raised<'_>> = (0..lines.len())
        .filter_map(|at| raised_at(&lines, at))
        .collect();
    let mut stopped = None;
    let mut mistake = None;
    let mut other = None;
    for error in &raised {
        let in_test = error
            .place
            .as_ref()
            .is_none_or(|place| places.is_test(place));
        let kind = match error.name {
            "AssertionError" => continue,
            "ReferenceError" | "SyntaxError" => {
                if in_test {
                    FailureKind::TestMistake
                } else {
                    FailureKind::CodeStopped
                }
            }
            _ if error.line.contains("Cannot find module") => {
                if in_test {
                    FailureKind::TestMistake
                } else {
                    FailureKind::CodeStopped
                }
            }
            "TypeError" if in_test && calls_what_is_not_there(error.line) => {
                FailureKind::TestMistake
            }
            _ => FailureKind::Other,
        };
        let slot = match kind {
            FailureKind::CodeStopped => &mut stopped,
            FailureKind::TestMistake => &mut mistake,
            FailureKind::Assertion | FailureKind::Other => &mut other,
        };
        slot.get_or_insert(error.line);
    }
    let asserted = !compared.is_empty() || raised.iter().any(|e| e.name == "AssertionError");
    let mut reading = match (stopped, mistake) {
        (Some(line), _) => FailureReading::new(FailureKind::CodeStopped, Some(line)),
        (None, Some(line)) if !asserted => {
            FailureReading::new(FailureKind::TestMistake, Some(line))
        }
        _ if asserted => {
            FailureReading::new(FailureKind::Assertion, compared.first().map(String::as_str))
        }
        _ => match other {
            Some(line) => FailureReading::new(FailureKind::Other, Some(line)),
            None => FailureReading::other(),
        },
    };
    if reading.kind == FailureKind::Assertion {
        reading.compared = compared;
    }
    reading
}

/// A line without its indentation and TAP's `# ` comment mark.
fn plain(line: &str) -> &str {
    let line = line.trim();
    line.strip_prefix("# ").unwrap_or(line).trim_start()
}

/// `x is not a function`, `X is not a constructor`: the test called what the code does not have.
fn calls_what_is_not_there(line: &str) -> bool {
    line.contains("is not a function") || line.contains("is not a constructor")
}

/// The error whose name line is `lines[at]`: `ReferenceError: x is not defined`,
/// `AssertionError [ERR_ASSERTION]: …`, or TAP's `name: 'ReferenceError'`.
fn raised_at<'t>(lines: &[&'t str], at: usize) -> Option<Raised<'t>> {
    let line = *lines.get(at)?;
    let name = match line.strip_prefix("name: ") {
        Some(quoted) => quoted.trim_matches(['\'', '"']),
        None => {
            let (name, _) = line.split_once(": ")?;
            name.split(' ').next().unwrap_or(name)
        }
    };
    let is_error_name = (name.ends_with("Error") || name == "Error")
        && name.chars().all(|c| c.is_ascii_alphanumeric())
        && name.starts_with(|c: char| c.is_ascii_uppercase());
    if !is_error_name {
        return None;
    }
    // TAP puts the message on an `error:` line above the name.
    let said = if line.starts_with("name: ") {
        lines
            .get(at.saturating_sub(3)..at)
            .and_then(|above| above.iter().rev().find(|l| l.starts_with("error: ")))
            .copied()
            .unwrap_or(line)
    } else {
        line
    };
    Some(Raised {
        name,
        line: said,
        place: place_of(lines, at, name),
    })
}

/// Where the error named at `lines[at]` was raised: a file its message names (jest's syntax
/// errors), the bare `file:line` just above it (node's syntax errors), else its first stack
/// frame outside node's own code and `node_modules`.
fn place_of<'t>(lines: &[&'t str], at: usize, name: &str) -> Option<Place<'t>> {
    let line = *lines.get(at)?;
    if name == "SyntaxError" {
        if let Some(place) = line
            .split_once(": ")
            .and_then(|(_, message)| place_in_message(message))
        {
            return Some(place);
        }
        let above = lines
            .get(at.saturating_sub(4)..at)?
            .iter()
            .rev()
            .find_map(|line| place_at(line, SOURCE_EXTENSIONS).filter(|(_, rest)| rest.is_empty()));
        if let Some((place, _)) = above {
            return Some(place);
        }
    }
    lines
        .iter()
        .skip(at + 1)
        .take(FRAME_LINES)
        .take_while(|line| raised_name(line).is_none())
        .find_map(|line| frame(line))
}

/// The name of an error a line starts, if it starts one.
fn raised_name(line: &str) -> Option<&str> {
    let (name, _) = line.split_once(": ")?;
    (name.ends_with("Error") && name.chars().all(|c| c.is_ascii_alphanumeric())).then_some(name)
}

/// `/w/src/x.test.js: Unexpected token (2:18)` → the file, at the line in brackets.
fn place_in_message(message: &str) -> Option<Place<'_>> {
    let (path, rest) = message.split_once(": ")?;
    if !SOURCE_EXTENSIONS
        .iter()
        .any(|ext| path.ends_with(&format!(".{ext}")))
    {
        return None;
    }
    let line = rest
        .rsplit_once('(')
        .and_then(|(_, position)| position.split(':').next())
        .and_then(|line| line.parse().ok());
    Some(Place { path, line })
}

/// A stack frame's place: `at fn (path:line:col)`, `at path:line:col`, or TAP's `fn
/// (path:line:col)`; `None` for node's own frames and a package's.
fn frame(line: &str) -> Option<Place<'_>> {
    let line = line.strip_prefix("at ").unwrap_or(line);
    let inner = match line.rsplit_once('(') {
        Some((_, inner)) => inner.trim_end_matches(')'),
        None => line,
    };
    let (place, _) = place_at(inner, SOURCE_EXTENSIONS)?;
    let ours = !place.path.starts_with("node:") && !place.path.contains("node_modules/");
    ours.then_some(place)
}

/// The lines that state the values an assertion compared: jest's and vitest's `Expected:` and
/// `Received:`, node's `actual:`/`expected:` and `-1 !== 5`, chai's `expected 3 to equal 5`.
fn compared(lines: &[&str]) -> Vec<String> {
    const STARTS: &[&str] = &[
        "Expected:",
        "Received:",
        "expected:",
        "actual:",
        "Expected value:",
        "Received value:",
        "AssertionError: expected ",
    ];
    lines
        .iter()
        .filter(|line| {
            STARTS.iter().any(|start| line.starts_with(start))
                || (line.contains(" !== ") || line.contains(" != ")) && !line.contains('(')
        })
        .map(|line| line.to_string())
        .collect()
}

#[cfg(test)]
mod tests;
