//! `replace_function`: a whole function or method written anew. The model gives the file, the
//! name and the complete new definition; plumb finds the definition with tree-sitter, at any depth
//! and in every language the syntax check parses (`plumb_context::callables`), and puts the new
//! one in its place, at its indentation, and the file must still parse.
//!
//! Why a second edit format: `edit_file` needs the old lines copied exactly, and a small model
//! rewriting a function sends it twice (as `old_text` and `new_text`) — twice the tokens to
//! generate, and one stray space in the copy makes the edit fail. On HumanEvalFix the embedded
//! model spent 90–160 s on single `edit_file` calls that rewrote a 30-line function and then did
//! not match. With this tool it writes the function once and nothing has to match. (SWE-agent's
//! table 3 shows the edit format alone moves the solve rate; Aider keeps several for this reason.)

use std::ops::Range;
use std::path::Path;

use async_trait::async_trait;
use plumb_context::callables::{Callable, callables};
use plumb_context::leading::leading;
use plumb_context::syntax::Language;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::blocking::off_runtime;
use crate::edit::{finish_edit, python_unshadow, read_text, resolve_for_write, with_note};
use crate::new_test::rust_test;
use crate::repeated::without_repeated_tail;
use crate::tool::{Project, Tool};
use crate::{ToolContext, ToolError, ToolOutput, args, search};
use plumb_context::rust_tests::test_functions;

pub struct ReplaceFunction;

#[derive(Deserialize)]
struct ReplaceArgs {
    path: String,
    name: String,
    code: String,
}

#[async_trait]
impl Tool for ReplaceFunction {
    fn name(&self) -> &'static str {
        "replace_function"
    }

    fn parameters(&self, _project: &Project<'_>) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path relative to the project root."},
                "name": {"type": "string", "description": "The name of the function or method to replace."},
                "code": {"type": "string", "description": "The complete new definition: signature and body."}
            },
            "required": ["path", "name", "code"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext<'_>, value: &Value) -> Result<ToolOutput, ToolError> {
        let mut a: ReplaceArgs = args::parse(self.name(), "path, name, code", value)?;
        let (path, rel) = resolve_for_write(ctx, &a.path)?;
        if !path.is_file() {
            return Err(ToolError::respond(format!(
                "there is no file called {}.",
                a.path
            )));
        }
        let Some(language) = Language::from_path(&path) else {
            return Err(ToolError::respond(format!(
                "replace_function works on Python, Rust, JavaScript, TypeScript, Go, Java, C and C++ files; change {rel} with edit_file."
            )));
        };
        let renamed = ctx
            .helpers
            .python_rewrites
            .then(|| python_unshadow(&rel, &mut a.code))
            .flatten();
        let before = read_text(ctx, &rel).await?;
        let short = a.name.rsplit(['.', ':']).next().unwrap_or(&a.name);
        // A test of a Rust file's test module is replaced there with its `#[test]` kept, as a
        // new test is added there (`new_test.rs`).
        if language == Language::Rust
            && test_functions(&before)
                .iter()
                .any(|(name, _)| name == short)
            && check_code(language, &a.code, short).is_ok()
            && let Some(test) = rust_test(&rel, &before, short, &a.code)
        {
            return finish_edit(&path, &rel, &before, test.after, test.offset, &test.added)
                .await
                .map(|out| with_note(out, Some(test.note)));
        }
        let span = match find(language, &before, &rel, &a.name) {
            Ok(span) => span,
            Err(Missing::Elsewhere(message)) => {
                let homes = defined_elsewhere(ctx, language, &rel, &a.name).await?;
                if homes.is_empty()
                    && language == Language::Rust
                    && check_code(language, &a.code, short).is_ok()
                    && let Some(test) = rust_test(&rel, &before, short, &a.code)
                {
                    return finish_edit(&path, &rel, &before, test.after, test.offset, &test.added)
                        .await
                        .map(|out| with_note(out, Some(test.note)));
                }
                return Err(ToolError::respond(match homes.as_slice() {
                    [] => message,
                    [home] => format!(
                        "{rel} does not define {}; {home} does: call replace_function with path {home}.",
                        a.name
                    ),
                    several => format!(
                        "{rel} does not define {}; these files do: {}. Call replace_function with the path of the one to change.",
                        a.name,
                        several.join(", ")
                    ),
                }));
            }
            Err(Missing::Refused(err)) => return Err(err),
        };
        check_code(language, &a.code, short)?;
        let mut notes: Vec<String> = renamed.into_iter().collect();
        if let Some((code, note)) =
            without_repeated_tail(language, &before, &dedented(&a.code), short)
        {
            a.code = code;
            notes.push(note);
        }
        let span = with_leading_block(language, &before, span, &a.code);
        let (after, offset, code) = replaced(&before, span, &a.code);
        // Sent again after it was made, the same definition read "Edited" and the model took it
        // for progress: on HumanEvalFix Rust/67 the 1.5B model sent its right fix six rounds
        // running instead of the test the next step asked for.
        if after == before {
            return Err(ToolError::respond(format!(
                "code is {} exactly as {rel} defines it now: that change is already made, so nothing would change. Nothing was changed.",
                a.name
            )));
        }
        let note = (!notes.is_empty()).then(|| notes.concat());
        finish_edit(&path, &rel, &before, after, offset, &code)
            .await
            .map(|out| with_note(out, note))
    }
}

/// Why `find` found no one definition.
#[derive(Debug)]
enum Missing {
    /// The file defines nothing of that name (the sentence for the model): it may be defined in
    /// another file.
    Elsewhere(String),
    /// Anything else: the name is ambiguous.
    Refused(ToolError),
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Missing::Elsewhere(message) => f.write_str(message),
            Missing::Refused(err) => err.fmt(f),
        }
    }
}

/// How a callable is named in a message: `Owner.name`, or `name` at the top level.
fn qualified(callable: &Callable) -> String {
    match &callable.owner {
        Some(owner) => format!("{owner}.{}", callable.name),
        None => callable.name.clone(),
    }
}

/// The bytes of the definition `name` names in `source`, found through tree-sitter at any depth
/// ([`callables`]): `f`, or `Owner.f` / `Owner::f` for one inside a class, impl, trait, module
/// or function `Owner` (a Go method's receiver type). Of several, the one that is not nested in
/// another function's body wins when it is the only such one: a helper nested in a function
/// does not make the function of its name ambiguous.
fn find(language: Language, source: &str, rel: &str, name: &str) -> Result<Range<usize>, Missing> {
    let all = callables(language, source);
    let (owner, short) = match name.rsplit_once(['.', ':']) {
        Some((owner, short)) => (Some(owner.trim_end_matches(':')), short),
        None => (None, name),
    };
    let matching: Vec<&Callable> = all
        .iter()
        .filter(|callable| callable.name == short)
        .filter(|callable| {
            owner.is_none_or(|owner| {
                callable
                    .owner
                    .as_deref()
                    .is_some_and(|o| o == owner || o.ends_with(owner))
            })
        })
        .collect();
    let outer: Vec<&Callable> = matching.iter().copied().filter(|c| !c.nested).collect();
    let chosen = match (matching.as_slice(), outer.as_slice()) {
        ([one], _) | (_, [one]) => Some(*one),
        _ => None,
    };
    if let Some(callable) = chosen {
        return Ok(callable.span.clone());
    }
    if matching.is_empty() {
        let names: Vec<String> = all.iter().map(qualified).take(30).collect();
        return Err(Missing::Elsewhere(if names.is_empty() {
            format!(
                "{rel} defines no function or method; change it with edit_file (an empty old_text adds new_text at the end of the file)."
            )
        } else {
            format!(
                "{rel} defines no function or method named {name}; it defines: {}. To add a new function, use edit_file with an empty old_text.",
                names.join(", ")
            )
        }));
    }
    let owners: Vec<&str> = matching
        .iter()
        .map(|callable| callable.owner.as_deref().unwrap_or("the top level"))
        .collect();
    Err(Missing::Refused(ToolError::respond(format!(
        "{rel} defines {short} {} times (in {}): name the one to replace as Owner.{short}.",
        matching.len(),
        owners.join(", ")
    ))))
}

/// The most files of the model's language that name the function and are parsed to find its
/// definition, when the file the model gave does not define it.
const MOST_FILES_LOOKED_IN: usize = 20;

/// The other files (of the same language) that define `name` once: a small model often names the
/// test file that calls a function instead of the file that defines it (HumanEvalFix Python/7: five
/// rounds of `replace_function` on the test file, each told only what that file defines).
async fn defined_elsewhere(
    ctx: &ToolContext<'_>,
    language: Language,
    rel: &str,
    name: &str,
) -> Result<Vec<String>, ToolError> {
    let tree = ctx.workspace.tree();
    let short = name.rsplit(['.', ':']).next().unwrap_or(name).to_string();
    let (rel, name) = (rel.to_string(), name.to_string());
    off_runtime(move || {
        let Ok(found) = search::search(&search::SearchRequest {
            tree: &tree,
            dir: None,
            query: &short,
            regex: false,
            limit: 1000,
        }) else {
            return Vec::new();
        };
        let mut paths: Vec<String> = found.hits.into_iter().map(|hit| hit.path).collect();
        paths.dedup();
        paths
            .into_iter()
            .filter(|path| *path != rel && Language::from_path(Path::new(path)) == Some(language))
            .take(MOST_FILES_LOOKED_IN)
            .filter(|path| {
                tree.read_entry_text(&tree.root().join(path), search::MAX_SEARCHED_BYTES)
                    .ok()
                    .is_some_and(|text| find(language, &text, path, &name).is_ok())
            })
            .collect()
    })
    .await
}

/// Refuses `code` that is not one whole definition of `name` (a body alone, another function).
fn check_code(language: Language, code: &str, name: &str) -> Result<(), ToolError> {
    if code.trim().is_empty() {
        return Err(ToolError::respond(format!(
            "code is empty: put the whole new definition of {name} in it, signature and body."
        )));
    }
    let defines = callables(language, &dedented(code))
        .first()
        .is_some_and(|callable| callable.name == name);
    if defines {
        Ok(())
    } else {
        Err(ToolError::respond(format!(
            "code must be the whole new definition of {name}, starting with its signature (for example `{}`), not its body alone. Nothing was changed.",
            signature_example(language, name)
        )))
    }
}

/// How a definition of `name` starts in `language`, for the refusal of a body alone.
fn signature_example(language: Language, name: &str) -> String {
    match language {
        Language::Python => format!("def {name}(…):"),
        Language::Rust => format!("fn {name}(…) {{"),
        Language::Go => format!("func {name}(…) {{"),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            format!("function {name}(…) {{")
        }
        Language::Java | Language::C | Language::Cpp => format!("int {name}(…) {{"),
    }
}

/// The bytes of `before` that `code` replaces: the definition at `span`, and when `code` brings
/// its own doc comment, attributes or decorators, the file's above it too, so they are not written
/// twice (a small model copies the comment it was shown). Code without them keeps the file's, and
/// so does code whose block leaves out one of the file's attributes (`#[test]`, `@staticmethod`):
/// a comment written twice is untidy, a lost attribute changes what the code does.
fn with_leading_block(
    language: Language,
    before: &str,
    span: Range<usize>,
    code: &str,
) -> Range<usize> {
    let code = dedented(code);
    let Some(brought) = callables(language, &code).first().and_then(|callable| {
        let block = leading(language, &code, callable.span.clone());
        (block.start < callable.span.start
            && code
                .get(..block.start)
                .is_some_and(|head| head.trim().is_empty()))
        .then_some(block)
    }) else {
        return span;
    };
    let file = leading(language, before, span.clone());
    if file
        .attributes
        .iter()
        .all(|attribute| brought.attributes.contains(attribute))
    {
        file.start..span.end
    } else {
        span
    }
}

/// The file with `span` replaced by `code` at the definition's indentation; the byte offset the
/// change starts at, and the code as written into the file.
fn replaced(before: &str, span: Range<usize>, code: &str) -> (String, usize, String) {
    let line_start = before
        .get(..span.start)
        .and_then(|head| head.rfind('\n'))
        .map_or(0, |at| at + 1);
    let indent: String = before
        .get(line_start..span.start)
        .unwrap_or_default()
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let code = reindented(code, &indent);
    let start = line_start + indent.len();
    let after = format!(
        "{}{}{}",
        before.get(..start).unwrap_or_default(),
        code.trim_start(),
        before.get(span.end..).unwrap_or_default()
    );
    (after, start, code)
}

/// `code` without the indentation its lines share.
fn dedented(code: &str) -> String {
    let common = code
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    code.lines()
        .map(|line| line.get(common..).unwrap_or_else(|| line.trim_start()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `code` dedented, then every line but empty ones indented by `indent`, without trailing
/// blank lines.
pub(crate) fn reindented(code: &str, indent: &str) -> String {
    dedented(code.trim_end())
        .lines()
        .map(|line| {
            if line.trim().is_empty() {
                String::new()
            } else {
                format!("{indent}{line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const PY: &str = "import math\n\n\nclass Shop:\n    def total(self, xs):\n        return sum(xs)\n\n    def tax(self, x):\n        return x * 2\n\n\ndef tax(x):\n    return x\n";

    fn replace(source: &str, name: &str, code: &str) -> Result<String, String> {
        let span = find(Language::Python, source, "shop.py", name).map_err(|e| e.to_string())?;
        check_code(Language::Python, code, name.rsplit('.').next().unwrap())
            .map_err(|e| e.to_string())?;
        Ok(replaced(source, span, code).0)
    }

    #[test]
    fn a_method_written_at_the_left_margin_lands_at_the_methods_indentation() {
        let actual = replace(
            PY,
            "Shop.total",
            "def total(self, xs):\n    return sum(xs) + 1\n",
        )
        .unwrap();
        let expected = PY.replace("return sum(xs)\n", "return sum(xs) + 1\n");
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_name_defined_twice_must_be_qualified_and_a_body_alone_is_refused() {
        let ambiguous = replace(PY, "tax", "def tax(x):\n    return x\n").unwrap_err();
        assert!(
            ambiguous.contains("defines tax 2 times (in Shop, the top level)"),
            "{ambiguous}"
        );
        let missing = replace(PY, "price", "def price():\n    pass\n").unwrap_err();
        assert!(
            missing.contains(
                "no function or method named price; it defines: Shop.total, Shop.tax, tax"
            ),
            "{missing}"
        );
        let body = replace(PY, "Shop.total", "return sum(xs) + 1").unwrap_err();
        assert!(body.contains("not its body alone"), "{body}");
    }

    #[test]
    fn a_rust_function_keeps_its_attributes_and_the_rest_of_the_file() {
        let source = "/// Adds.\n#[inline]\npub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {}\n";
        let span = find(Language::Rust, source, "src/lib.rs", "add").unwrap();
        let code = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}";
        check_code(Language::Rust, code, "add").unwrap();
        assert_eq!(
            replaced(source, span, code).0,
            source.replace("a - b", "a + b")
        );
    }

    /// `name` in `source` replaced by `code`, through tree-sitter for `language`.
    fn replace_in(language: Language, source: &str, name: &str, code: &str) -> String {
        let span = find(language, source, "f", name).unwrap_or_else(|e| panic!("{e}"));
        check_code(language, code, name.rsplit(['.', ':']).next().unwrap()).unwrap();
        replaced(
            source,
            with_leading_block(language, source, span, code),
            code,
        )
        .0
    }

    #[test]
    fn code_with_its_doc_comment_replaces_the_files_instead_of_adding_a_second() {
        let rust = "use std::fmt;\n\n/*\n Adds.\n    two numbers\n*/\nfn add(a: i32) -> i32 {\n    a - 1\n}\n";
        let fixed = "/*\n Adds.\n    two numbers\n*/\nfn add(a: i32) -> i32 {\n    a + 1\n}";
        assert_eq!(
            replace_in(Language::Rust, rust, "add", fixed),
            rust.replace("a - 1", "a + 1")
        );
        let reworded = "/// Adds one.\nfn add(a: i32) -> i32 {\n    a + 1\n}";
        assert_eq!(
            replace_in(Language::Rust, rust, "add", reworded),
            "use std::fmt;\n\n/// Adds one.\nfn add(a: i32) -> i32 {\n    a + 1\n}\n"
        );
        let js = "/* Sums.\n   >>> sum([1]) */\nconst sum = (xs) => {\n  return 0;\n}\n";
        let fixed = "/* Sums.\n   >>> sum([1]) */\nconst sum = (xs) => {\n  return 1;\n}";
        assert_eq!(
            replace_in(Language::JavaScript, js, "sum", fixed),
            js.replace("return 0", "return 1")
        );
        let python = "class A:\n    @property\n    def total(self):\n        return 1\n";
        let fixed = "@property\ndef total(self):\n    return 2\n";
        assert_eq!(
            replace_in(Language::Python, python, "A.total", fixed),
            python.replace("return 1", "return 2")
        );
    }

    #[test]
    fn code_without_a_doc_comment_keeps_the_files() {
        let rust = "/// Adds.\n#[inline]\nfn add(a: i32) -> i32 {\n    a - 1\n}\n";
        let code = "fn add(a: i32) -> i32 {\n    a + 1\n}";
        assert_eq!(
            replace_in(Language::Rust, rust, "add", code),
            rust.replace("a - 1", "a + 1")
        );
    }

    #[test]
    fn a_doc_comment_without_the_files_attribute_does_not_take_the_attribute_away() {
        let rust = "/// Adds.\n#[inline]\nfn add(a: i32) -> i32 {\n    a - 1\n}\n";
        let code = "/// Adds.\nfn add(a: i32) -> i32 {\n    a + 1\n}";
        assert_eq!(
            replace_in(Language::Rust, rust, "add", code),
            "/// Adds.\n#[inline]\n/// Adds.\nfn add(a: i32) -> i32 {\n    a + 1\n}\n"
        );
        let with_it = "/// Adds one.\n#[inline]\nfn add(a: i32) -> i32 {\n    a + 1\n}";
        assert_eq!(
            replace_in(Language::Rust, rust, "add", with_it),
            format!("{with_it}\n")
        );
        let python = "class A:\n    @staticmethod\n    def total():\n        return 1\n";
        let code = "# The total.\ndef total():\n    return 2\n";
        assert_eq!(
            replace_in(Language::Python, python, "A.total", code),
            "class A:\n    @staticmethod\n    # The total.\n    def total():\n        return 2\n"
        );
    }

    #[test]
    fn definitions_are_found_at_any_depth_in_every_language() {
        let go = "package calc\n\nfunc (s *Store) Total() int {\n\treturn 0\n}\n\nfunc (c *Cart) Total() int {\n\treturn 1\n}\n";
        assert_eq!(
            replace_in(
                Language::Go,
                go,
                "Store.Total",
                "func (s *Store) Total() int {\n\treturn 2\n}"
            ),
            go.replace("return 0", "return 2")
        );
        let nested =
            "def count_nums(arr):\n    def digits_sum(n):\n        return n\n    return len(arr)\n";
        assert_eq!(
            replace_in(
                Language::Python,
                nested,
                "digits_sum",
                "def digits_sum(n):\n    return -n\n"
            ),
            nested.replace("return n\n", "return -n\n")
        );
        let js = "function add(a, b) {\n  return a - b;\n}\nmodule.exports.sum = function (xs) { return 0; };\n";
        assert_eq!(
            replace_in(
                Language::JavaScript,
                js,
                "sum",
                "module.exports.sum = function (xs) { return xs.length; };"
            ),
            js.replace("return 0;", "return xs.length;")
        );
        let rust = "mod money {\n    pub fn round(x: f64) -> f64 {\n        x\n    }\n}\n";
        assert_eq!(
            replace_in(
                Language::Rust,
                rust,
                "money::round",
                "pub fn round(x: f64) -> f64 {\n    x.round()\n}"
            ),
            rust.replace("        x\n", "        x.round()\n")
        );
        let cpp = "namespace billing {\nint Ledger::total() const {\n  return 0;\n}\n}\n";
        assert_eq!(
            replace_in(
                Language::Cpp,
                cpp,
                "Ledger::total",
                "int Ledger::total() const {\n  return sum_;\n}"
            ),
            cpp.replace("return 0;", "return sum_;")
        );
    }

    #[test]
    fn a_nested_helper_does_not_make_its_namesake_ambiguous() {
        let source = "def key(x):\n    return x\n\n\ndef sort_by(xs):\n    def key(x):\n        return -x\n    return sorted(xs, key=key)\n";
        let span = find(Language::Python, source, "f.py", "key").unwrap();
        assert_eq!(source.get(span), Some("def key(x):\n    return x"));
    }
}
