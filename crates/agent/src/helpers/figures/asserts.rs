//! The text side of the figure search: a Python test function's setup lines and asserts, the
//! numbers in them, and the versions of an assert with one of the ticket's figures in place of
//! the one it expects ([`Version`]).

/// The setup line of a version as the model wrote it, and with the ticket's figure in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Input {
    pub written: String,
    pub kept: String,
}

/// One version to try: the function's new text, the assert line before and after, and the setup
/// line before and after when an input was changed too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    pub text: String,
    pub written: String,
    pub kept: String,
    pub input: Option<Input>,
}

/// Versions of `function` to try: its lines without asserts, plus one of its `assert … == …` lines
/// with one figure on the right of `==` replaced by one of `figures` (written the same way:
/// `180.00` becomes `162.00`). The left side is the model's own, then each `root.attribute` that
/// `file`'s other asserts check on a variable of the same name (the model asserted
/// `totals.taxable_value` where the ticket's Rs 162 is `totals.tax`). In the order of the asserts,
/// then of the left sides, then of the figures.
pub(crate) fn versions(function: &str, figures: &[String], file: &str) -> Vec<Version> {
    let Some((setup, asserts)) = setup_and_asserts(function) else {
        return Vec::new();
    };
    let checked = checked_attributes(file);
    // (assert line, left side, the model's own side): every assert's own side first.
    let mut tries: Vec<(&str, String, bool)> = Vec::new();
    for line in &asserts {
        let own = assert_sides(line).map(|(own, _)| own.to_string());
        tries.extend(own.map(|own| (*line, own, true)));
    }
    for line in &asserts {
        let Some((own, _)) = assert_sides(line) else {
            continue;
        };
        let Some((root, _)) = own.split_once('.').filter(|(root, _)| is_name(root)) else {
            continue;
        };
        for (other_root, attribute) in &checked {
            let side = format!("{root}.{attribute}");
            if other_root == root
                && side != own
                && !tries.iter().any(|(l, s, _)| l == line && *s == side)
            {
                tries.push((line, side, false));
            }
        }
    }
    let mut out = Vec::new();
    for (line, side, is_own) in tries {
        let Some((_, right)) = assert_sides(line) else {
            continue;
        };
        // The assert's message is left out: it would keep the model's figure beside the one
        // kept (a benchmark run kept `== Decimal('162.00'), 'Expected GST to be Rs 810.00'`).
        let right = without_message(right);
        let indent = indent_of(line);
        for (start, token) in numbers_in(right) {
            for figure in figures {
                let written = same_form(figure, token);
                if is_own && plain(&written) == plain(token) {
                    continue;
                }
                let kept = format!(
                    "{indent}assert {side} {}{written}{}",
                    right.get(..start).unwrap_or_default(),
                    right.get(start + token.len()..).unwrap_or_default()
                );
                let mut text = setup.join("\n");
                text.push('\n');
                text.push_str(&kept);
                if out.iter().any(|v: &Version| v.text == text) {
                    continue;
                }
                out.push(Version {
                    text,
                    written: line.to_string(),
                    kept,
                    input: None,
                });
            }
        }
    }
    out
}

/// The versions of `function` that keep its setup and one of its single-line `assert … == …`
/// lines as written (without a message); none when an assert spans lines.
pub(crate) fn own_asserts(function: &str) -> Vec<Version> {
    let Some((setup, asserts)) = setup_and_asserts(function) else {
        return Vec::new();
    };
    let setup = setup.join("\n");
    asserts
        .iter()
        .filter_map(|line| {
            let (own, right) = assert_sides(line)?;
            let kept = format!("{}assert {own} {}", indent_of(line), without_message(right));
            Some(Version {
                text: format!("{setup}\n{kept}"),
                written: line.to_string(),
                kept,
                input: None,
            })
        })
        .collect()
}

/// The lines of `function` that are not asserts (its `def` line first), and its assert lines;
/// `None` when an assert spans lines: it cannot be taken apart line by line.
fn setup_and_asserts(function: &str) -> Option<(Vec<&str>, Vec<&str>)> {
    let is_assert = |line: &&str| line.trim_start().starts_with("assert ");
    let (asserts, setup): (Vec<&str>, Vec<&str>) = function.lines().partition(is_assert);
    asserts
        .iter()
        .all(|line| line.matches('(').count() == line.matches(')').count())
        .then_some((setup, asserts))
}

/// The whitespace `line` starts with.
fn indent_of(line: &str) -> &str {
    line.get(..line.len() - line.trim_start().len())
        .unwrap_or_default()
}

/// The two sides of a single-line `assert left == right`: `left` trimmed, and `right` from the
/// last `==` on.
pub(crate) fn assert_sides(line: &str) -> Option<(&str, &str)> {
    let at = line.rfind("==")?;
    let (left, right) = line.split_at(at);
    let own = left.trim_start().strip_prefix("assert ")?.trim();
    Some((own, right))
}

/// The comparison of an assert's right side without its message: up to the first comma outside
/// brackets and strings (`== Decimal('810.00'), 'Expected …'` → `== Decimal('810.00')`).
pub(crate) fn without_message(right: &str) -> &str {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, c) in right.char_indices() {
        if let Some(open) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == open {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return right.get(..at).unwrap_or(right).trim_end(),
            _ => {}
        }
    }
    right
}

/// `(root, attribute)` of every `assert root.attribute == …` in `file`, in order, once each.
pub(super) fn checked_attributes(file: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for line in file.lines() {
        let Some(rest) = line.trim_start().strip_prefix("assert ") else {
            continue;
        };
        let Some((left, _)) = rest.split_once("==") else {
            continue;
        };
        let Some((root, attribute)) = left.trim().split_once('.') else {
            continue;
        };
        if is_name(root) && is_name(attribute) {
            let pair = (root.to_string(), attribute.to_string());
            if !found.contains(&pair) {
                found.push(pair);
            }
        }
    }
    found
}

/// A plain Python name (`totals`, `tax_rate`).
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit())
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The numbers written in `text` (`180`, `180.00`), with their byte offsets; digits that are part
/// of a name (`x2`) are not numbers.
pub(crate) fn numbers_in(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        let starts = bytes[index].is_ascii_digit()
            && (index == 0
                || !(bytes[index - 1].is_ascii_alphanumeric() || bytes[index - 1] == b'_'));
        if !starts {
            index += 1;
            continue;
        }
        let mut end = index;
        while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'.') {
            end += 1;
        }
        let token = text
            .get(index..end)
            .unwrap_or_default()
            .trim_end_matches('.');
        found.push((index, token));
        index = end;
    }
    found
}

/// `figure` written with as many decimals as `like` has (`162` like `180.00` is `162.00`); a
/// figure with decimals of its own is left as it is.
pub(crate) fn same_form(figure: &str, like: &str) -> String {
    match like.split_once('.') {
        Some((_, decimals)) if !figure.contains('.') => {
            format!("{figure}.{}", "0".repeat(decimals.len()))
        }
        _ => figure.to_string(),
    }
}

/// A number without its trailing zero decimals, to compare figures: `180.00` and `180` agree.
pub(crate) fn plain(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}
