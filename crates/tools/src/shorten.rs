//! Shortening of tool output for the model (docs/contracts.md §3: 60 lines by default, head and
//! tail kept, with a line saying what was left out). The journal keeps the full text; only the
//! model's copy is shortened.
//!
//! Steps: cap each line at `MAX_LINE_CHARS` characters; then, past `max_lines` lines, keep two thirds
//! of the room for the head and one third for the tail, with one marker line between them. The
//! head gets more because that is where the first error of a build or a traceback is; the tail
//! still holds the summary lines that runners print last. The marker line counts towards
//! `max_lines`, so the result never has more lines than asked for.

/// The lines of tool output shown to the model by default (docs/contracts.md §8).
pub const DEFAULT_MAX_LINES: usize = 60;

/// Longer lines are cut at this many characters (minified files, long log lines).
pub const MAX_LINE_CHARS: usize = 500;

/// Shortened text and how much was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortened {
    pub text: String,
    /// Whole lines left out between the head and the tail (cut long lines are not counted).
    pub omitted_lines: usize,
}

/// Keeps at most `max_lines` lines of `text`: the head (two thirds, rounded up) and the tail, with
/// a line "[… N lines left out …]" between them; lines longer than `MAX_LINE_CHARS` characters are
/// cut on a character boundary with a note of how many characters went. A trailing newline is kept.
/// Since the marker takes one line of the room, at least two lines are left out whenever any are.
pub fn shorten(text: &str, max_lines: usize) -> Shortened {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let trailing_newline = body.len() != text.len();
    let lines: Vec<&str> = if body.is_empty() && !trailing_newline {
        Vec::new()
    } else {
        body.split('\n').collect()
    };

    let (kept, omitted_lines): (Vec<String>, usize) = if lines.len() <= max_lines {
        (lines.iter().map(|line| cap_line(line)).collect(), 0)
    } else {
        let room = max_lines.saturating_sub(1);
        let head = (room * 2).div_ceil(3);
        let tail = room - head;
        let omitted = lines.len() - head - tail;
        let mut kept: Vec<String> = lines.iter().take(head).map(|line| cap_line(line)).collect();
        if max_lines > 0 {
            kept.push(format!("[… {omitted} lines left out …]"));
        }
        kept.extend(
            lines
                .iter()
                .skip(lines.len() - tail)
                .map(|line| cap_line(line)),
        );
        (kept, omitted)
    };

    let mut text = kept.join("\n");
    if trailing_newline && !kept.is_empty() {
        text.push('\n');
    }
    Shortened {
        text,
        omitted_lines,
    }
}

fn cap_line(line: &str) -> String {
    let mut chars = line.char_indices();
    let Some((cut, _)) = chars.nth(MAX_LINE_CHARS) else {
        return line.to_string();
    };
    let left_out = line.get(cut..).map_or(0, |rest| rest.chars().count());
    let kept = line.get(..cut).unwrap_or(line);
    format!("{kept}… [{left_out} more characters]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn numbered(count: usize) -> String {
        (1..=count).map(|n| format!("line {n}\n")).collect()
    }

    #[test]
    fn short_text_is_unchanged() {
        let text = numbered(3);
        let actual = shorten(&text, 60);
        let expected = Shortened {
            text,
            omitted_lines: 0,
        };
        assert_eq!(actual, expected);
    }

    #[test]
    fn exactly_max_lines_is_unchanged() {
        let text = numbered(10);
        let actual = shorten(&text, 10);
        let expected = Shortened {
            text,
            omitted_lines: 0,
        };
        assert_eq!(actual, expected);
    }

    #[test]
    fn long_text_keeps_head_and_tail() {
        let actual = shorten(&numbered(300), 10);
        // 9 lines of room: 6 head, 3 tail.
        let expected = Shortened {
            text: "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n\
                   [… 291 lines left out …]\n\
                   line 298\nline 299\nline 300\n"
                .to_string(),
            omitted_lines: 291,
        };
        assert_eq!(actual, expected);
    }

    #[test]
    fn default_budget_is_forty_head_and_nineteen_tail() {
        let shortened = shorten(&numbered(1000), DEFAULT_MAX_LINES);
        let lines: Vec<&str> = shortened.text.lines().collect();
        let actual = (
            lines.len(),
            lines[39],
            lines[40],
            lines[41],
            shortened.omitted_lines,
        );
        assert_eq!(
            actual,
            (60, "line 40", "[… 941 lines left out …]", "line 982", 941)
        );
    }

    #[test]
    fn small_budgets_split_two_thirds_head() {
        let actual = [
            shorten("a\nb\nc\nd", 3).text,
            shorten("a\nb\nc\nd\ne", 4).text,
            shorten("a\nb\nc\nd\ne\nf", 5).text,
        ];
        let expected = [
            "a\nb\n[… 2 lines left out …]".to_string(),
            "a\nb\n[… 2 lines left out …]\ne".to_string(),
            "a\nb\nc\n[… 2 lines left out …]\nf".to_string(),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn tiny_budgets() {
        let actual = [shorten("a\nb", 0), shorten("a\nb", 1)];
        let expected = [
            Shortened {
                text: String::new(),
                omitted_lines: 2,
            },
            Shortened {
                text: "[… 2 lines left out …]".to_string(),
                omitted_lines: 2,
            },
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn empty_text() {
        let actual = [shorten("", 60), shorten("\n", 60)];
        let expected = [
            Shortened {
                text: String::new(),
                omitted_lines: 0,
            },
            Shortened {
                text: "\n".to_string(),
                omitted_lines: 0,
            },
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn long_lines_are_cut_on_a_char_boundary() {
        let text = format!("short\n{}\n", "ü".repeat(MAX_LINE_CHARS + 20));
        let actual = shorten(&text, 60);
        let expected = Shortened {
            text: format!(
                "short\n{}… [20 more characters]\n",
                "ü".repeat(MAX_LINE_CHARS)
            ),
            omitted_lines: 0,
        };
        assert_eq!(actual, expected);
    }

    #[test]
    fn line_of_exactly_max_chars_is_kept() {
        let text = "x".repeat(MAX_LINE_CHARS);
        let actual = shorten(&text, 60);
        let expected = Shortened {
            text,
            omitted_lines: 0,
        };
        assert_eq!(actual, expected);
    }
}
