//! Per language, what the tests-added rule needs to know: what may start a line at a block's own
//! level, what a decorator and a container are, which text is a setup hook, what a test looks
//! like, and which names a line binds.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lang {
    Python,
    Rust,
    Go,
    Js,
}

impl Lang {
    pub(super) fn of(path: &str) -> Option<Lang> {
        let (_, ext) = path.rsplit_once('.')?;
        match ext {
            "py" => Some(Lang::Python),
            "rs" => Some(Lang::Rust),
            "go" => Some(Lang::Go),
            "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Some(Lang::Js),
            _ => None,
        }
    }

    /// What may start a line at a block's own indentation.
    pub(super) fn openers(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &[
                "def ",
                "async def ",
                "class ",
                "@",
                "#",
                "import ",
                "from ",
                "\"\"\"",
                "'''",
            ],
            Lang::Rust => &[
                "#[",
                "fn ",
                "pub fn ",
                "pub(crate) fn ",
                "async fn ",
                "//",
                "use ",
                "mod ",
            ],
            Lang::Go => &["func ", "//", "/*"],
            Lang::Js => &[
                "test(",
                "test.each",
                "test.concurrent(",
                "it(",
                "it.each",
                "describe(",
                "describe.each",
                "//",
                "/*",
                "*",
                "import ",
            ],
        }
    }

    pub(super) fn is_decorator(self, line: &str) -> bool {
        match self {
            Lang::Python => line.starts_with('@'),
            Lang::Rust => line.starts_with("#["),
            Lang::Go | Lang::Js => false,
        }
    }

    /// Whether an indented block may sit directly under this (kept) line.
    pub(super) fn is_container(self, line: &str) -> bool {
        match self {
            Lang::Python => line.starts_with("class "),
            Lang::Rust => ["mod ", "pub mod ", "pub(crate) mod ", "impl "]
                .iter()
                .any(|start| line.starts_with(start)),
            Lang::Go => line.starts_with("import ("),
            Lang::Js => line.starts_with("describe(") || line.starts_with("describe.each"),
        }
    }

    /// Text that makes new lines change how the existing tests run.
    pub(super) fn hooks(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &[
                "autouse",
                "pytestmark",
                "collect_ignore",
                "def setup",
                "def teardown",
                "def setUp",
                "def tearDown",
                "def pytest_",
                "def load_tests",
            ],
            Lang::Rust => &["#[ctor"],
            Lang::Go => &["func TestMain(", "func init("],
            Lang::Js => &[
                "beforeEach(",
                "beforeAll(",
                "afterEach(",
                "afterAll(",
                "jest.mock(",
                "jest.doMock(",
                "vi.mock(",
                "vi.doMock(",
            ],
        }
    }

    pub(super) fn is_test(self, line: &str) -> bool {
        let starts: &[&str] = match self {
            Lang::Python => &["def test", "async def test", "class Test"],
            Lang::Rust => &["#[test]", "#[tokio::test", "#[rstest"],
            Lang::Go => &["func Test", "func Benchmark", "func Fuzz", "func Example"],
            Lang::Js => &["test(", "test.each", "test.concurrent(", "it(", "it.each"],
        };
        starts.iter().any(|start| line.starts_with(start))
    }

    /// The names a line at a block's indentation binds (definitions, imports, assignments).
    pub(super) fn bound_names(self, line: &str) -> Vec<String> {
        let after = |prefixes: &[&str]| -> Vec<String> {
            prefixes
                .iter()
                .find_map(|prefix| line.strip_prefix(prefix))
                .map(|rest| vec![word_at_start(rest)])
                .unwrap_or_default()
        };
        match self {
            Lang::Python => {
                let mut names = after(&["def ", "async def ", "class "]);
                if names.is_empty() && !line.starts_with(['@', '#', '"', '\'']) {
                    // `NAME = …` or `NAME: T = …` at the block's own level.
                    let name = word_at_start(line);
                    let rest = line.get(name.len()..).unwrap_or_default().trim_start();
                    let assigns =
                        (rest.starts_with('=') && !rest.starts_with("==")) || rest.starts_with(':');
                    if assigns && !name.is_empty() && !PYTHON_KEYWORDS.contains(&name.as_str()) {
                        names.push(name);
                    }
                }
                names
            }
            Lang::Rust => {
                let mut names = after(&["fn ", "pub fn ", "pub(crate) fn ", "async fn "]);
                if let Some(path) = line.strip_prefix("use ") {
                    names.extend(rust_use_names(path));
                }
                names
            }
            Lang::Go => after(&["func "]),
            Lang::Js => Vec::new(),
        }
    }
}

/// Words that start a Python statement, never an assignment's target.
const PYTHON_KEYWORDS: &[&str] = &[
    "if", "elif", "else", "for", "while", "try", "except", "finally", "with", "return", "pass",
    "raise", "assert", "del", "global", "nonlocal", "lambda", "yield", "async", "await", "match",
    "case",
];

/// The identifier at the start of `text` (empty when there is none).
fn word_at_start(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The names a Rust `use` brings in: each path's last segment or its alias (`*` as itself).
fn rust_use_names(path: &str) -> Vec<String> {
    path.split([',', '{', '}', ';'])
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .filter_map(|item| match item.rsplit_once(" as ") {
            Some((_, alias)) => Some(alias.trim().to_string()),
            None => item.rsplit("::").next().map(str::to_string),
        })
        .filter(|name| !name.is_empty() && name != "self")
        .collect()
}

/// Python imports in `text`: each bound name and the module it comes from (`*` binds `*`).
pub(super) fn python_imports(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("from ")
            && let Some((module, names)) = rest.split_once(" import ")
        {
            let mut names = names.trim().to_string();
            if names.starts_with('(') && !names.contains(')') {
                for more in lines.by_ref() {
                    names.push(' ');
                    names.push_str(more.trim());
                    if more.contains(')') {
                        break;
                    }
                }
            }
            let names = names.split('#').next().unwrap_or_default();
            for item in names.split([',', '(', ')']).map(str::trim) {
                let bound = item.rsplit(" as ").next().unwrap_or(item).trim();
                if !bound.is_empty() {
                    out.push((bound.to_string(), module.trim().to_string()));
                }
            }
        } else if let Some(rest) = line.strip_prefix("import ") {
            for item in rest.split('#').next().unwrap_or_default().split(',') {
                let item = item.trim();
                let (module, bound) = match item.split_once(" as ") {
                    Some((module, alias)) => (module.trim(), alias.trim()),
                    None => (item, item.split('.').next().unwrap_or(item)),
                };
                if !bound.is_empty() {
                    out.push((bound.to_string(), module.to_string()));
                }
            }
        }
    }
    out
}
