//! Helpers shared by the runner parsers: colour-code removal, joining the two streams, the tail.

/// How many lines a "the tail" excerpt keeps. The caller shortens further for the model (head and
/// tail of this), so this only bounds what is handed around.
pub(crate) const TAIL_LINES: usize = 100;

/// `text` without ANSI escape sequences (colours, cursor moves, hyperlinks), so that parsers and
/// the model see what a person would read.
pub(crate) fn strip_ansi(text: &str) -> String {
    if !text.contains('\x1b') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameters, then one final byte in '@'..='~'.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ESC '\'.
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            Some(_) | None => {}
        }
    }
    out
}

/// Stdout then stderr, colour codes removed, one newline between them when both have text.
pub(crate) fn joined(stdout: &str, stderr: &str) -> String {
    let stdout = strip_ansi(stdout);
    let stderr = strip_ansi(stderr);
    let stdout = stdout.trim_end();
    let stderr = stderr.trim_end();
    match (stdout.is_empty(), stderr.is_empty()) {
        (_, true) => stdout.to_string(),
        (true, false) => stderr.to_string(),
        (false, false) => format!("{stdout}\n{stderr}"),
    }
}

/// The last `TAIL_LINES` lines of `text`, without leading blank lines or trailing whitespace.
pub(crate) fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let start = lines.len().saturating_sub(TAIL_LINES);
    let kept: Vec<&str> = lines
        .iter()
        .skip(start)
        .skip_while(|line| line.trim().is_empty())
        .copied()
        .collect();
    kept.join("\n")
}

/// Parses "12 passed" into (12, "passed").
pub(crate) fn count_and_word(part: &str) -> Option<(u32, &str)> {
    let (count, word) = part.trim().split_once(' ')?;
    Some((count.parse().ok()?, word.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn strips_colours_and_links() {
        let actual = strip_ansi(
            "\x1b[1m\x1b[31mFAILED\x1b[0m x \x1b]8;;http://a\x1b\\link\x1b]8;;\x07 done",
        );
        assert_eq!(actual, "FAILED x link done");
    }

    #[test]
    fn joins_streams() {
        let actual = [
            joined("out\n", "err\n"),
            joined("", "err\n"),
            joined("out\n\n", "  \n"),
        ];
        assert_eq!(actual, ["out\nerr", "err", "out"].map(String::from));
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let text: String = (1..=150).map(|n| format!("{n}\n")).collect();
        let actual = tail(&text);
        let expected: Vec<String> = (51..=150).map(|n| n.to_string()).collect();
        assert_eq!(actual, expected.join("\n"));
    }

    #[test]
    fn count_and_word_parses_or_refuses() {
        let actual = [
            count_and_word(" 12 passed"),
            count_and_word("1 error"),
            count_and_word("passed"),
            count_and_word("x passed"),
        ];
        assert_eq!(
            actual,
            [Some((12, "passed")), Some((1, "error")), None, None]
        );
    }
}
