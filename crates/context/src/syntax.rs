//! Syntax checking with tree-sitter, and the edit check behind `edit_file` and `create_file`.
//!
//! A problem is every ERROR or MISSING node of the parse tree, reported in source order with a message a model can
//! act on. The edit check compares the problems after an edit with those before it, so a file that was already
//! broken does not block an unrelated edit: only problems the edit added are refused. Files in a language we do not
//! parse always pass.

use std::fmt;
use std::path::Path;

use tree_sitter::{Node, Tree};

use crate::{parser, python_indent};

/// The languages plumb parses with tree-sitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Python,
    Rust,
    /// JavaScript including JSX (`.js`, `.mjs`, `.cjs`, `.jsx`).
    JavaScript,
    /// TypeScript without JSX (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    Go,
    Java,
    /// C (`.c`).
    C,
    /// C++ (`.cc`, `.cpp`, `.cxx`, `.c++`, `.hpp`, `.hh`, `.hxx`, `.h++`) and headers (`.h`): a
    /// `.h` file may be either, and C++'s grammar reads almost all C (not C++'s keywords used as
    /// names), so it is parsed as C++ rather than refusing a C++ header's classes as C errors.
    Cpp,
}

impl Language {
    /// Every language, in declaration order.
    pub const ALL: [Language; 9] = [
        Language::Python,
        Language::Rust,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Go,
        Language::Java,
        Language::C,
        Language::Cpp,
    ];

    /// The language of a file, from its extension (case-insensitive); `None` for anything we do not parse.
    pub fn from_path(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "py" | "pyi" => Some(Language::Python),
            "rs" => Some(Language::Rust),
            "js" | "mjs" | "cjs" | "jsx" => Some(Language::JavaScript),
            "ts" | "mts" | "cts" => Some(Language::TypeScript),
            "tsx" => Some(Language::Tsx),
            "go" => Some(Language::Go),
            "java" => Some(Language::Java),
            "c" => Some(Language::C),
            "cc" | "cpp" | "cxx" | "c++" | "h" | "hpp" | "hh" | "hxx" | "h++" => {
                Some(Language::Cpp)
            }
            _ => None,
        }
    }

    /// The language's usual name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::Rust => "Rust",
            Language::JavaScript => "JavaScript",
            Language::TypeScript => "TypeScript",
            Language::Tsx => "TSX",
            Language::Go => "Go",
            Language::Java => "Java",
            Language::C => "C",
            Language::Cpp => "C++",
        }
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Language::Python => 0,
            Language::Rust => 1,
            Language::JavaScript => 2,
            Language::TypeScript => 3,
            Language::Tsx => 4,
            Language::Go => 5,
            Language::Java => 6,
            Language::C => 7,
            Language::Cpp => 8,
        }
    }

    pub(crate) fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One syntax error: where it is and what is wrong, as a sentence for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxProblem {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong, e.g. "missing `)`" or "unexpected `foo(`".
    pub message: String,
}

impl fmt::Display for SyntaxProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// How many characters of an ERROR node's text a message quotes.
const SNIPPET_CHARS: usize = 30;

/// Every ERROR / MISSING node as a problem, in source order (nested ones included), plus what the grammars accept
/// but the compilers refuse: Python indentation errors and mismatched JSX closing tags.
pub fn syntax_problems(lang: Language, source: &str) -> Vec<SyntaxProblem> {
    let Some(tree) = parser::parse(lang, source) else {
        return Vec::new();
    };
    let has_jsx = match lang {
        Language::JavaScript | Language::Tsx => true,
        Language::Python
        | Language::Rust
        | Language::TypeScript
        | Language::Go
        | Language::Java
        | Language::C
        | Language::Cpp => false,
    };
    let mut problems = problems_in(&tree, source, has_jsx);
    if lang == Language::Python {
        problems.extend(python_indent::indentation_problems(source));
        // Stable: tree-sitter's problems stay ahead of an indentation problem on the same line.
        problems.sort_by_key(|p| p.line);
    }
    // Nested ERROR nodes often repeat their parent's start and text.
    problems.dedup();
    problems
}

/// The edit check: `Ok` if `after` adds no syntax problem compared with `before` (`None` for a new file);
/// otherwise the first new problem. Files of languages we do not parse always pass.
pub fn check_edit(path: &Path, before: Option<&str>, after: &str) -> Result<(), SyntaxProblem> {
    let Some(lang) = Language::from_path(path) else {
        return Ok(());
    };
    let mut after_problems = syntax_problems(lang, after);
    if after_problems.is_empty() {
        return Ok(());
    }
    let Some(before) = before else {
        return Err(after_problems.swap_remove(0));
    };
    let before_problems = syntax_problems(lang, before);
    match first_new_problem(
        &LineMap::new(before, after),
        &before_problems,
        &after_problems,
    ) {
        Some(index) => Err(after_problems.swap_remove(index)),
        None => Ok(()),
    }
}

/// Walks the tree in preorder (source order) and collects ERROR and MISSING nodes, and with `check_jsx` closing
/// tags that do not match their opening tag. Iterative, so a deeply nested input cannot overflow the stack; without
/// `check_jsx` only subtrees that contain an error are entered.
fn problems_in(tree: &Tree, source: &str, check_jsx: bool) -> Vec<SyntaxProblem> {
    let mut problems = Vec::new();
    let root = tree.root_node();
    if !root.has_error() && !check_jsx {
        return problems;
    }
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_missing() {
            problems.push(missing_problem(node));
        } else if node.is_error() {
            problems.push(error_problem(node, source));
        } else if check_jsx && node.kind() == "jsx_element" {
            problems.extend(jsx_tag_problem(node, source));
        }
        if (check_jsx || node.has_error()) && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return problems;
            }
        }
    }
}

/// `<div>…</span>`: the grammars accept any closing tag, the compilers do not.
fn jsx_tag_problem(element: Node<'_>, source: &str) -> Option<SyntaxProblem> {
    let open = element.child_by_field_name("open_tag")?;
    let close = element.child_by_field_name("close_tag")?;
    if close.is_missing() || open.has_error() || close.has_error() {
        return None;
    }
    let name = |tag: Node<'_>| {
        tag.child_by_field_name("name")
            .and_then(|n| n.utf8_text(source.as_bytes()).ok())
            .map(|t| t.split_whitespace().collect::<String>())
            .unwrap_or_default()
    };
    let (open_name, close_name) = (name(open), name(close));
    if open_name == close_name {
        return None;
    }
    Some(SyntaxProblem {
        line: close.start_position().row + 1,
        message: format!(
            "closing tag `</{close_name}>` does not match `<{open_name}>` opened on line {}",
            open.start_position().row + 1
        ),
    })
}

fn missing_problem(node: Node<'_>) -> SyntaxProblem {
    let kind = node.kind();
    let message = if node.is_named() {
        let what = kind.trim_start_matches('_').replace('_', " ");
        match what.as_str() {
            "indent" => "missing indented block".to_string(),
            "newline" => "missing line break".to_string(),
            _ => format!("missing {what}"),
        }
    } else {
        format!("missing `{kind}`")
    };
    SyntaxProblem {
        line: node.start_position().row + 1,
        message,
    }
}

fn error_problem(node: Node<'_>, source: &str) -> SyntaxProblem {
    match bracket_issue(node) {
        Some(BracketIssue::Unclosed(open)) => {
            return SyntaxProblem {
                line: open.start_position().row + 1,
                message: format!("`{}` is never closed", open.kind()),
            };
        }
        Some(BracketIssue::Mismatched { open, close }) => {
            return SyntaxProblem {
                line: close.start_position().row + 1,
                message: format!(
                    "`{}` does not match `{}` on line {}",
                    close.kind(),
                    open.kind(),
                    open.start_position().row + 1
                ),
            };
        }
        None => {}
    }
    let text = node.utf8_text(source.as_bytes()).unwrap_or_default();
    let snippet = one_line_snippet(text, SNIPPET_CHARS);
    let message = if snippet.is_empty() {
        "syntax error".to_string()
    } else {
        format!("unexpected `{snippet}`")
    };
    SyntaxProblem {
        line: node.start_position().row + 1,
        message,
    }
}

/// A bracket mistake found inside one ERROR node; it names the real mistake (`tax = (0` → "`(` is never closed")
/// where quoting the ERROR node's text would show a run of unrelated code.
enum BracketIssue<'t> {
    /// The innermost opener nothing closes.
    Unclosed(Node<'t>),
    /// A closer of the wrong kind for the innermost open bracket.
    Mismatched { open: Node<'t>, close: Node<'t> },
}

/// Matches the bracket tokens of an ERROR node. A closer with no opener inside the node says nothing (its opener
/// may sit outside the ERROR node), so it yields `None`, as does a node whose brackets all match.
fn bracket_issue(error: Node<'_>) -> Option<BracketIssue<'_>> {
    let mut open: Vec<Node<'_>> = Vec::new();
    let mut cursor = error.walk();
    loop {
        let node = cursor.node();
        if node.child_count() == 0 && !node.is_named() && !node.is_missing() {
            let closer_of = |opener: &str| match opener {
                "(" => ")",
                "[" => "]",
                _ => "}",
            };
            match node.kind() {
                "(" | "[" | "{" => open.push(node),
                ")" | "]" | "}" => {
                    let opener = open.pop()?;
                    if closer_of(opener.kind()) != node.kind() {
                        return Some(BracketIssue::Mismatched {
                            open: opener,
                            close: node,
                        });
                    }
                }
                _ => {}
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return open.pop().map(BracketIssue::Unclosed);
            }
        }
    }
}

/// The first `max` characters of `text` with every run of whitespace turned into one space, and `…` when cut.
fn one_line_snippet(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for word in text.split_whitespace() {
        if count > 0 {
            if count == max {
                out.push('…');
                return out;
            }
            out.push(' ');
            count += 1;
        }
        for ch in word.chars() {
            if count == max {
                out.push('…');
                return out;
            }
            out.push(ch);
            count += 1;
        }
    }
    out
}

/// Maps lines of the file before an edit to lines after it, from the unchanged leading and trailing lines. An
/// `edit_file` edit replaces one contiguous region, so everything outside it maps exactly.
struct LineMap {
    /// Lines identical at the start of both versions.
    prefix: usize,
    /// Lines identical at the end of both versions (not overlapping the prefix).
    suffix: usize,
    before_len: usize,
    after_len: usize,
}

impl LineMap {
    fn new(before: &str, after: &str) -> LineMap {
        let before_lines: Vec<&str> = before.split('\n').collect();
        let after_lines: Vec<&str> = after.split('\n').collect();
        let prefix = before_lines
            .iter()
            .zip(&after_lines)
            .take_while(|(b, a)| b == a)
            .count();
        let room = before_lines.len().min(after_lines.len()) - prefix;
        let suffix = before_lines
            .iter()
            .rev()
            .zip(after_lines.iter().rev())
            .take(room)
            .take_while(|(b, a)| b == a)
            .count();
        LineMap {
            prefix,
            suffix,
            before_len: before_lines.len(),
            after_len: after_lines.len(),
        }
    }

    /// Where a line of the old text is in the new one; `None` if the edit replaced it.
    fn map_before(&self, line: usize) -> Option<usize> {
        if line <= self.prefix {
            Some(line)
        } else if line > self.before_len - self.suffix {
            Some(line + self.after_len - self.before_len)
        } else {
            None
        }
    }

    /// Whether a line of the new text lies in the region the edit wrote.
    fn after_changed(&self, line: usize) -> bool {
        line > self.prefix && line <= self.after_len - self.suffix
    }
}

/// The index of the first problem in `after` that has no counterpart in `before`.
///
/// Matching runs in passes, each before-problem used at most once: (1) same message on the mapped line; (2) outside
/// the edited region, any problem on the mapped line (an ERROR node's quoted text may reach into the edit); (3) the
/// same message anywhere, for problems outside the edited region (error recovery drifting), or for problems inside
/// it that were inside the replaced region before (a broken line the edit carried along unchanged).
fn first_new_problem(
    map: &LineMap,
    before: &[SyntaxProblem],
    after: &[SyntaxProblem],
) -> Option<usize> {
    let mut used = vec![false; before.len()];
    let mut matched = vec![false; after.len()];
    let mut pass = |accept: &dyn Fn(&SyntaxProblem, &SyntaxProblem, Option<usize>) -> bool| {
        for (a_index, a) in after.iter().enumerate() {
            if matched[a_index] {
                continue;
            }
            let found = before
                .iter()
                .enumerate()
                .find(|(b_index, b)| !used[*b_index] && accept(a, b, map.map_before(b.line)));
            if let Some((b_index, _)) = found {
                used[b_index] = true;
                matched[a_index] = true;
            }
        }
    };
    pass(&|a, b, mapped| mapped == Some(a.line) && a.message == b.message);
    pass(&|a, _, mapped| !map.after_changed(a.line) && mapped == Some(a.line));
    pass(&|a, b, mapped| {
        a.message == b.message && (!map.after_changed(a.line) || mapped.is_none())
    });
    matched.iter().position(|m| !m)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn snippet_is_one_line_and_cut() {
        let actual = [
            one_line_snippet("foo(\n    bar,\n", 30),
            one_line_snippet("abcdefghij", 4),
            one_line_snippet("ab cd", 2),
            one_line_snippet("  \n ", 30),
        ];
        assert_eq!(actual, ["foo( bar,", "abcd…", "ab…", ""].map(String::from));
    }

    #[test]
    fn line_map_shifts_lines_after_the_edit() {
        let map = LineMap::new("a\nb\nc\nd\n", "a\nX\nY\nc\nd\n");
        let actual = (1..=5).map(|l| map.map_before(l)).collect::<Vec<_>>();
        assert_eq!(actual, [Some(1), None, Some(4), Some(5), Some(6)]);
        let changed = (1..=6).map(|l| map.after_changed(l)).collect::<Vec<_>>();
        assert_eq!(changed, [false, true, true, false, false, false]);
    }

    #[test]
    fn line_map_of_pure_insertion() {
        let map = LineMap::new("a\nb", "a\nnew\nb");
        let actual = (1..=2).map(|l| map.map_before(l)).collect::<Vec<_>>();
        assert_eq!(actual, [Some(1), Some(3)]);
    }

    #[test]
    fn languages_from_paths() {
        let actual = [
            "a.py", "b.RS", "c.mjs", "d.cjs", "e.jsx", "f.ts", "g.tsx", "h.go", "I.java", "j.txt",
            "Makefile",
        ]
        .map(|p| Language::from_path(Path::new(p)));
        assert_eq!(
            actual,
            [
                Some(Language::Python),
                Some(Language::Rust),
                Some(Language::JavaScript),
                Some(Language::JavaScript),
                Some(Language::JavaScript),
                Some(Language::TypeScript),
                Some(Language::Tsx),
                Some(Language::Go),
                Some(Language::Java),
                None,
                None,
            ]
        );
    }

    #[test]
    fn every_grammar_loads() {
        let actual: Vec<(Language, bool)> = Language::ALL
            .iter()
            .map(|&lang| (lang, parser::parse(lang, "").is_some()))
            .collect();
        let expected: Vec<(Language, bool)> = Language::ALL.iter().map(|&l| (l, true)).collect();
        assert_eq!(actual, expected);
    }
}
