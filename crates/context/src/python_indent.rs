//! Python indentation errors, which tree-sitter-python accepts without an ERROR node (its grammar allows an empty
//! block, and an unexpected indent parses as an ordinary statement). Wrong indentation is the most common way a
//! search/replace edit breaks Python, so we check it the way CPython's tokenizer does:
//!
//! - logical lines are found by tracking brackets, strings (triple-quoted ones across lines) and backslash
//!   continuations; blank and comment-only lines do not count;
//! - a logical line ending in `:` opens a block, and the next logical line must be indented further;
//! - a line may only be indented further right after such a line;
//! - a dedent must return to an earlier indentation level;
//! - tabs and spaces must agree whether a tab counts as 8 columns or as 1 (CPython's TabError).
//!
//! After a problem the scan resynchronises on the offending line, so one mistake yields one problem.

use crate::syntax::SyntaxProblem;

/// Every indentation problem of `source`, in line order.
pub(crate) fn indentation_problems(source: &str) -> Vec<SyntaxProblem> {
    let mut problems = Vec::new();
    let mut levels = Levels::default();
    let mut scanner = Scanner::default();
    // The line of a logical line that ended in `:` and still waits for its block.
    let mut opener: Option<usize> = None;
    let mut logical_start = 1;
    for (index, raw) in source.split('\n').enumerate() {
        let number = index + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if scanner.at_logical_start() {
            let (col, alt, rest) = indentation(line);
            if rest.is_empty() || rest.starts_with('#') {
                continue;
            }
            if let Some(error) = levels.step(col, alt, opener.is_some()) {
                let line = match error {
                    IndentError::ExpectedBlock => opener.unwrap_or(number),
                    IndentError::Unexpected | IndentError::Unindent | IndentError::Tabs => number,
                };
                problems.push(SyntaxProblem {
                    line,
                    message: error.message().to_string(),
                });
            }
            opener = None;
            logical_start = number;
        }
        scanner.scan_line(line);
        if scanner.at_logical_start() && scanner.last == Some(':') {
            opener = Some(logical_start);
        }
    }
    if let Some(line) = opener {
        problems.push(SyntaxProblem {
            line,
            message: IndentError::ExpectedBlock.message().to_string(),
        });
    }
    problems
}

/// CPython's indentation errors, with its wording (models know it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IndentError {
    /// Reported on the line that opened the block.
    ExpectedBlock,
    Unexpected,
    Unindent,
    Tabs,
}

impl IndentError {
    fn message(self) -> &'static str {
        match self {
            IndentError::ExpectedBlock => "expected an indented block after this line",
            IndentError::Unexpected => "unexpected indent",
            IndentError::Unindent => "unindent does not match any outer indentation level",
            IndentError::Tabs => "inconsistent use of tabs and spaces in indentation",
        }
    }
}

/// The open indentation levels, each as (columns with tabs of 8, columns with tabs of 1); the bottom one is 0.
struct Levels(Vec<(usize, usize)>);

impl Default for Levels {
    fn default() -> Self {
        Levels(vec![(0, 0)])
    }
}

impl Levels {
    fn top(&self) -> (usize, usize) {
        self.0.last().copied().unwrap_or((0, 0))
    }

    /// Moves to a logical line indented (`col`, `alt`), right after a block opener or not, and says what is
    /// wrong with it. After an error the levels follow the line, so one mistake yields one problem.
    fn step(&mut self, col: usize, alt: usize, after_opener: bool) -> Option<IndentError> {
        let (top, top_alt) = self.top();
        if col > top {
            self.0.push((col, alt));
            return if !after_opener {
                Some(IndentError::Unexpected)
            } else if alt <= top_alt {
                Some(IndentError::Tabs)
            } else {
                None
            };
        }
        while self.0.len() > 1 && col < self.top().0 {
            self.0.pop();
        }
        let (top, top_alt) = self.top();
        let unmatched = col != top;
        if unmatched {
            self.0.push((col, alt));
        }
        if after_opener {
            Some(IndentError::ExpectedBlock)
        } else if unmatched {
            Some(IndentError::Unindent)
        } else if alt != top_alt {
            Some(IndentError::Tabs)
        } else {
            None
        }
    }
}

/// The indentation of a line in columns (tabs to multiples of 8, and tabs as 1), and the rest of the line.
fn indentation(line: &str) -> (usize, usize, &str) {
    let mut col = 0;
    let mut alt = 0;
    for (offset, ch) in line.char_indices() {
        match ch {
            ' ' => {
                col += 1;
                alt += 1;
            }
            '\t' => {
                col = (col / 8 + 1) * 8;
                alt += 1;
            }
            // CPython resets the column at a form feed.
            '\x0c' => {
                col = 0;
                alt = 0;
            }
            _ => return (col, alt, line.get(offset..).unwrap_or_default()),
        }
    }
    (col, alt, "")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StringState {
    /// Inside a `'''` or `"""` string.
    Triple(char),
    /// Inside a `'` or `"` string continued with a backslash at the end of a line.
    Single(char),
}

/// Tracks where logical lines end across physical lines.
#[derive(Debug, Default)]
struct Scanner {
    brackets: usize,
    string: Option<StringState>,
    /// The line ended in a backslash outside a string.
    continued: bool,
    /// The last significant character of the logical line so far (a string counts as its quote).
    last: Option<char>,
}

impl Scanner {
    fn at_logical_start(&self) -> bool {
        self.brackets == 0 && self.string.is_none() && !self.continued
    }

    fn scan_line(&mut self, line: &str) {
        if self.at_logical_start() {
            self.last = None;
        }
        self.continued = false;
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let ch = chars[i];
            match self.string {
                Some(StringState::Triple(quote)) => {
                    if ch == '\\' {
                        i += 1;
                    } else if ch == quote
                        && chars.get(i + 1) == Some(&quote)
                        && chars.get(i + 2) == Some(&quote)
                    {
                        self.string = None;
                        i += 2;
                    }
                }
                Some(StringState::Single(quote)) => {
                    if ch == '\\' {
                        if i + 1 == chars.len() {
                            // Continued on the next line; stay inside the string.
                            return;
                        }
                        i += 1;
                    } else if ch == quote {
                        self.string = None;
                    }
                }
                None => match ch {
                    '#' => break,
                    '\'' | '"' => {
                        self.last = Some(ch);
                        if chars.get(i + 1) == Some(&ch) && chars.get(i + 2) == Some(&ch) {
                            self.string = Some(StringState::Triple(ch));
                            i += 2;
                        } else {
                            self.string = Some(StringState::Single(ch));
                        }
                    }
                    '(' | '[' | '{' => {
                        self.brackets += 1;
                        self.last = Some(ch);
                    }
                    ')' | ']' | '}' => {
                        self.brackets = self.brackets.saturating_sub(1);
                        self.last = Some(ch);
                    }
                    '\\' if i + 1 == chars.len() => self.continued = true,
                    c if c.is_whitespace() => {}
                    c => self.last = Some(c),
                },
            }
            i += 1;
        }
        // A one-line string not closed by the end of its line is a tokenizer error that tree-sitter reports; stop
        // treating the following lines as string content.
        if matches!(self.string, Some(StringState::Single(_))) {
            self.string = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn problems(source: &str) -> Vec<(usize, String)> {
        indentation_problems(source)
            .into_iter()
            .map(|p| (p.line, p.message))
            .collect()
    }

    fn expect(line: usize, message: &str) -> Vec<(usize, String)> {
        vec![(line, message.to_string())]
    }

    #[test]
    fn valid_code_has_no_problems() {
        let source = "\
import os


class A:
    '''Doc
  with a line less indented
    '''

    def f(self, x,
  y):  # a comment:
        if x: return 1
        d = {1:
   2}
        s = \"a:\" \\
  + 'b'
        # comment at any indent
# another
        return [x for x in y
  if x]

    async def g(self):
        pass
";
        assert_eq!(problems(source), Vec::new());
    }

    #[test]
    fn missing_block() {
        assert_eq!(
            problems("def f():\nreturn 1\n"),
            expect(1, IndentError::ExpectedBlock.message())
        );
    }

    #[test]
    fn missing_block_at_end_of_file() {
        assert_eq!(
            problems("x = 1\nif x:\n\n"),
            expect(2, IndentError::ExpectedBlock.message())
        );
    }

    #[test]
    fn unexpected_indent() {
        assert_eq!(
            problems("x = 1\n    y = 2\nz = 3\n"),
            expect(2, "unexpected indent")
        );
    }

    #[test]
    fn unindent_to_unknown_level() {
        assert_eq!(
            problems("def f():\n    x = 1\n  y = 2\n"),
            expect(3, "unindent does not match any outer indentation level")
        );
    }

    #[test]
    fn tabs_and_spaces_that_disagree() {
        assert_eq!(
            problems("if x:\n        a = 1\n\tb = 2\n"),
            expect(3, IndentError::Tabs.message())
        );
    }

    #[test]
    fn backslash_continued_string() {
        assert_eq!(problems("s = 'a\\\n  b'\nx = 1\n"), Vec::new());
    }

    #[test]
    fn a_missing_block_does_not_cascade() {
        let source = "class A:\n    def f(self):\ndef g():\n    pass\nh = 1\n";
        assert_eq!(
            problems(source),
            expect(2, IndentError::ExpectedBlock.message())
        );
    }
}
