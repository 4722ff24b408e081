//! Files a jest or vitest configuration names to run around the tests — `setupFiles`,
//! `setupFilesAfterEnv`, `globalSetup`, `globalTeardown` — are test configuration as much as the
//! configuration itself: a setup file can stub the code under test, patch `expect`, or end the
//! process with a passing status. A change to one is flagged like a changed conftest.py, and the
//! ladder's test steps run with the baseline's version of it.
//!
//! Which files are named is read from the configuration texts the caller hands over (the
//! baseline's, and those the change brings): `package.json`'s `jest` object and a
//! `jest.config.json` as JSON; `jest.config.*`, `vitest.config.*`, `vitest.workspace.*` and
//! `vite.config.*` (vitest reads its `test` settings there) by finding the keys and taking the
//! string literals of their values, since such a file is a program. A value is resolved from the
//! configuration's folder (`<rootDir>` is that folder, jest's default); a name without an
//! extension matches any extension. Values that are not literals (a variable, a `path.join`
//! call) and paths that climb out of the tree are not followed: a person sees the configuration
//! itself flagged when it changes.

use serde_json::Value;

/// The keys whose values name files run around the tests.
const KEYS: [&str; 4] = [
    "setupFilesAfterEnv",
    "setupFiles",
    "globalSetup",
    "globalTeardown",
];

/// One file a configuration names, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupFile {
    /// The path as resolved (relative to the tree's root, `/`-separated), perhaps without its
    /// extension.
    pub path: String,
    /// The configuration file that names it.
    pub named_by: String,
    /// The key it is named under.
    pub key: &'static str,
}

/// The files the test runners' configurations name to run around the tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestSetupFiles {
    files: Vec<SetupFile>,
}

impl TestSetupFiles {
    /// The files named by `configs`: (path, text) pairs of configuration files (others are
    /// passed over, see [`is_runner_config`]).
    pub fn from_configs<'a>(configs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut files: Vec<SetupFile> = Vec::new();
        for (path, text) in configs {
            for (key, value) in named_values(path, text) {
                let Some(resolved) = resolve(folder_of(path), &value) else {
                    continue;
                };
                let file = SetupFile {
                    path: resolved,
                    named_by: path.to_string(),
                    key,
                };
                if !files.contains(&file) {
                    files.push(file);
                }
            }
        }
        Self { files }
    }

    /// The entry naming `path` (a path in the tree), if a configuration names it.
    pub fn find(&self, path: &str) -> Option<&SetupFile> {
        let without_extension = path
            .rsplit_once('.')
            .filter(|(stem, _)| !stem.ends_with('/') && !stem.is_empty())
            .map(|(stem, _)| stem);
        self.files
            .iter()
            .find(|file| file.path == path || Some(file.path.as_str()) == without_extension)
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// Whether `path` is a file this module reads for setup files: a `package.json`, or a jest,
/// vitest or vite configuration.
pub fn is_runner_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name == "package.json"
        || [
            "jest.config.",
            "vitest.config.",
            "vitest.workspace.",
            "vite.config.",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// The folder of `path` ("" at the root).
fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(dir, _)| dir).unwrap_or("")
}

/// (key, value) for every file the configuration text names under [`KEYS`].
fn named_values(path: &str, text: &str) -> Vec<(&'static str, String)> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == "package.json" {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return Vec::new();
        };
        return value.get("jest").map(json_values).unwrap_or_default();
    }
    if !is_runner_config(path) {
        return Vec::new();
    }
    if name.ends_with(".json") {
        return serde_json::from_str::<Value>(text)
            .map(|value| json_values(&value))
            .unwrap_or_default();
    }
    script_values(text)
}

/// The keys' string values in a JSON object (a string, or an array of strings).
fn json_values(config: &Value) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for key in KEYS {
        match config.get(key) {
            Some(Value::String(one)) => out.push((key, one.clone())),
            Some(Value::Array(items)) => out.extend(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|item| (key, item.to_string())),
            ),
            _ => {}
        }
    }
    out
}

/// The keys' string-literal values in a JavaScript or TypeScript configuration: `key: 'a'`,
/// `key: ['a', "b"]`, `'key': ...`, wherever the key stands (vitest nests them under `test`).
fn script_values(text: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for key in KEYS {
        for (at, _) in text.match_indices(key) {
            let before = text.get(..at).and_then(|head| head.chars().next_back());
            if before.is_some_and(is_identifier_char) {
                continue;
            }
            let rest = text.get(at + key.len()..).unwrap_or_default();
            let rest = rest.strip_prefix(['\'', '"']).unwrap_or(rest);
            if rest.starts_with(is_identifier_char) {
                continue; // a longer name, e.g. setupFiles inside setupFilesAfterEnv
            }
            let Some(value) = rest.trim_start().strip_prefix(':') else {
                continue;
            };
            out.extend(literals(value).into_iter().map(|literal| (key, literal)));
        }
    }
    out
}

fn is_identifier_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The string literals of the value at the start of `text`: one literal, or those of an array
/// (nested arrays included) up to its closing bracket.
fn literals(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.trim_start().chars().peekable();
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            '\'' | '"' | '`' => {
                let mut literal = String::new();
                let mut escaped = false;
                for next in chars.by_ref() {
                    match next {
                        _ if escaped => {
                            literal.push(next);
                            escaped = false;
                        }
                        '\\' => escaped = true,
                        _ if next == c => break,
                        _ => literal.push(next),
                    }
                }
                if !(c == '`' && literal.contains("${")) {
                    out.push(literal);
                }
                if depth == 0 {
                    break;
                }
            }
            // Anything else between the items: commas, spaces, comments, an object's fields.
            _ if depth == 0 && !c.is_whitespace() => break,
            _ => {}
        }
    }
    out
}

/// `value` resolved from `folder` as a path in the tree, or `None` when it is absolute, a URL,
/// or climbs out of the tree.
fn resolve(folder: &str, value: &str) -> Option<String> {
    let value = value.trim();
    let relative = match value.strip_prefix("<rootDir>") {
        Some(rest) => rest.trim_start_matches('/'),
        None if value.starts_with('/') || value.contains(':') => return None,
        None => value,
    };
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn paths(files: &TestSetupFiles) -> Vec<(String, String, &'static str)> {
        files
            .files
            .iter()
            .map(|f| (f.path.clone(), f.named_by.clone(), f.key))
            .collect()
    }

    #[test]
    fn jest_and_vitest_configs_name_their_setup_files() {
        let jest = "module.exports = {\n  // setupFiles: ['./commented.js'] is still read: a person sees it\n  setupFilesAfterEnv: ['<rootDir>/test/after-env.ts', \"./test/extend\"],\n  globalSetup: './global-setup.js',\n  testEnvironment: 'node',\n};\n";
        let vitest = "export default defineConfig({\n  test: {\n    'setupFiles': [`./setup.ts`, path.join(__dirname, 'x.ts')],\n    globalTeardown: `${dir}/teardown.ts`,\n  },\n});\n";
        let package = r#"{"name": "app", "jest": {"setupFiles": ["./jest.setup.js"], "globalTeardown": "<rootDir>/../../teardown.js"}}"#;
        let actual = paths(&TestSetupFiles::from_configs([
            ("jest.config.js", jest),
            ("web/vitest.config.ts", vitest),
            ("packages/api/package.json", package),
            ("README.md", "setupFiles: ['./not-a-config.js']"),
        ]));
        let expected = vec![
            (
                "test/after-env.ts".into(),
                "jest.config.js".into(),
                "setupFilesAfterEnv",
            ),
            (
                "test/extend".into(),
                "jest.config.js".into(),
                "setupFilesAfterEnv",
            ),
            ("commented.js".into(), "jest.config.js".into(), "setupFiles"),
            (
                "global-setup.js".into(),
                "jest.config.js".into(),
                "globalSetup",
            ),
            (
                "web/setup.ts".into(),
                "web/vitest.config.ts".into(),
                "setupFiles",
            ),
            // A literal inside a call is taken as a path from the configuration's folder, which
            // is what `path.join(__dirname, 'x.ts')` means.
            (
                "web/x.ts".into(),
                "web/vitest.config.ts".into(),
                "setupFiles",
            ),
            (
                "packages/api/jest.setup.js".into(),
                "packages/api/package.json".into(),
                "setupFiles",
            ),
            (
                "teardown.js".into(),
                "packages/api/package.json".into(),
                "globalTeardown",
            ),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_name_without_extension_matches_any_and_other_files_do_not() {
        let files = TestSetupFiles::from_configs([(
            "jest.config.js",
            "module.exports = { setupFiles: ['./test/extend', '../outside.js', '/abs.js'] }",
        )]);
        let actual: Vec<bool> = [
            "test/extend.ts",
            "test/extend",
            "test/extend.js.map",
            "test/other.ts",
            "outside.js",
            "abs.js",
        ]
        .into_iter()
        .map(|path| files.find(path).is_some())
        .collect();
        assert_eq!(actual, vec![true, true, false, false, false, false]);
    }
}
