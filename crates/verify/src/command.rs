//! Reading a user-given test command and narrowing a command to some tests.
//!
//! The command is split into words with shell-words and never handed to a shell, so shell syntax
//! (`&&`, `|`, `>`, `VAR=1 cmd`) is refused with a sentence instead of failing strangely later.
//! The runner is guessed from argv after looking through wrappers (`env`, `uv run`, `poetry run`,
//! `npx`, `python -m`).

use crate::{Runner, TestCommand, VerifyError};

/// Words that only mean something to a shell.
const SHELL_TOKENS: &[&str] = &[
    "&&", "||", "|", ";", "&", ">", ">>", "<", "<<", "2>", "2>&1", "&>", "|&", ";;", "(", ")",
];

/// Parses a user-given command line (`--test-cmd "python -m pytest -q"`) into argv and guesses its
/// runner. No shell is ever run.
pub fn parse_command(text: &str) -> Result<TestCommand, VerifyError> {
    let argv = shell_words::split(text).map_err(|err| VerifyError::BadQuoting {
        text: text.to_string(),
        reason: err.to_string(),
    })?;
    let Some(first) = argv.first() else {
        return Err(VerifyError::EmptyCommand);
    };
    if is_variable_setting(first) {
        return Err(VerifyError::VariableSetting {
            text: text.to_string(),
            token: first.clone(),
        });
    }
    if let Some(token) = argv
        .iter()
        .find(|word| SHELL_TOKENS.contains(&word.as_str()))
    {
        return Err(VerifyError::ShellSyntax {
            text: text.to_string(),
            token: token.clone(),
        });
    }
    let runner = guess(&argv).runner;
    Ok(TestCommand { argv, runner })
}

/// The command narrowed to `tests` (test ids or paths, as [`crate::read_results`] names them):
/// pytest appends them; cargo puts a single filter after `cargo test` and several after `--`;
/// nextest adds `-- --exact <ids>`; go adds `-run '^(A|B)$'`; jest and vitest add the files and
/// `-t '^(?:name)$'`; npm appends `-- <ids>`; Maven adds `-Dtest=Class#method`, Gradle
/// `--tests pkg.Class.method`. An empty list gives the command unchanged. Ids that start with
/// '-' are refused, since the runner would read them as options.
pub fn narrow(cmd: &TestCommand, tests: &[String]) -> Result<Vec<String>, VerifyError> {
    if tests.is_empty() {
        return Ok(cmd.argv.clone());
    }
    check_test_ids(tests)?;
    let adapter = cmd.runner.adapter();
    if !adapter.narrows() {
        return Err(VerifyError::CannotNarrow {
            command: cmd.display(),
        });
    }
    adapter.narrow(&cmd.argv, tests)
}

/// The longest test id [`check_test_ids`] accepts, in characters.
pub const MAX_TEST_ID_CHARS: usize = 2_000;

/// The most characters the test ids of one run may have together: below the 128 KiB Linux allows
/// one argument (go and jest join the ids into one pattern), far below the whole command line's.
pub const MAX_TEST_IDS_CHARS: usize = 100_000;

/// How many characters of an id a message shows.
const SHOWN_ID_CHARS: usize = 80;

/// Refuses test ids no runner can take, each with a sentence that shows the id shortened (see
/// [`shown_id`]): an empty one, one that starts with '-' (an option), one with a control
/// character (a NUL byte cannot even be passed to a program), one longer than
/// [`MAX_TEST_ID_CHARS`], and ids longer than [`MAX_TEST_IDS_CHARS`] together.
pub fn check_test_ids(tests: &[String]) -> Result<(), VerifyError> {
    for id in tests {
        if id.trim().is_empty() {
            return Err(VerifyError::EmptyTestId);
        }
        if id.starts_with('-') {
            return Err(VerifyError::OptionLikeTestId { id: shown_id(id) });
        }
        if id.chars().any(char::is_control) {
            return Err(VerifyError::ControlInTestId { id: shown_id(id) });
        }
        let chars = id.chars().count();
        if chars > MAX_TEST_ID_CHARS {
            return Err(VerifyError::TestIdTooLong {
                id: shown_id(id),
                chars,
                max: MAX_TEST_ID_CHARS,
            });
        }
    }
    let chars: usize = tests.iter().map(|id| id.chars().count()).sum();
    if chars > MAX_TEST_IDS_CHARS {
        return Err(VerifyError::TooManyTestIds {
            count: tests.len(),
            chars,
            max: MAX_TEST_IDS_CHARS,
        });
    }
    Ok(())
}

/// A test id as a message shows it: control characters escaped (`\0`, `\n`), and past 80
/// characters cut with `…`, so nothing the model or a task wrote is copied unbounded into a
/// note, a check's evidence or the report.
pub fn shown_id(id: &str) -> String {
    let mut shown = String::new();
    for (at, c) in id.chars().enumerate() {
        if at == SHOWN_ID_CHARS {
            shown.push('…');
            break;
        }
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
}

impl Runner {
    /// Whether [`narrow`] can run single tests with this runner's commands. `Other` (a script,
    /// `make test`, `sh -c …`) cannot: the caller runs the whole suite instead.
    pub fn narrows(self) -> bool {
        self.adapter().narrows()
    }
}

impl TestCommand {
    /// This command narrowed to `tests` (see [`narrow`]), as a command of the same runner, so
    /// that it can be handed to [`crate::with_report`].
    pub fn narrowed(&self, tests: &[String]) -> Result<TestCommand, VerifyError> {
        Ok(TestCommand {
            argv: narrow(self, tests)?,
            runner: self.runner,
        })
    }
}

/// What argv runs: the runner and the index of the runner's own program word (`cargo`, `npm`,
/// `pytest`, …) once wrappers are looked through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Guess {
    pub(crate) runner: Runner,
    pub(crate) program: usize,
}

pub(crate) fn guess(argv: &[String]) -> Guess {
    let mut index = 0;
    while let Some(word) = argv.get(index) {
        let rest = argv.get(index + 1..).unwrap_or_default();
        let found = |runner| Guess {
            runner,
            program: index,
        };
        let program = program_name(word);
        match program.as_str() {
            "env" => {
                let skipped = rest
                    .iter()
                    .take_while(|word| word.starts_with('-') || is_variable_setting(word))
                    .count();
                index += 1 + skipped;
            }
            "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye"
                if rest.first().is_some_and(|word| word == "run") =>
            {
                index += 2 + leading_options(rest.get(1..).unwrap_or_default());
            }
            "npx" | "pnpx" | "bunx" => index += 1 + leading_options(rest),
            // `yarn jest`, `pnpm exec vitest`: the runner is the word after the manager.
            "yarn" | "pnpm" | "bun"
                if matches!(
                    rest.first().map(String::as_str),
                    Some("exec" | "dlx" | "jest" | "vitest")
                ) =>
            {
                let through = rest
                    .first()
                    .is_some_and(|word| word == "exec" || word == "dlx");
                index += if through { 2 } else { 1 };
            }
            "pytest" | "py.test" => return found(Runner::Pytest),
            name if is_python(name) => {
                let module = rest
                    .iter()
                    .position(|word| word == "-m")
                    .and_then(|at| rest.get(at + 1));
                let runner = match module.map(String::as_str) {
                    Some("pytest" | "py.test") => Runner::Pytest,
                    _ => Runner::Other,
                };
                return found(runner);
            }
            "cargo" => {
                let runner = match first_word(rest) {
                    "test" => Runner::Cargo,
                    "nextest" => Runner::Nextest,
                    _ => Runner::Other,
                };
                return found(runner);
            }
            "go" => {
                let runner = if first_word(rest) == "test" {
                    Runner::Go
                } else {
                    Runner::Other
                };
                return found(runner);
            }
            "npm" | "yarn" | "pnpm" | "bun" | "mocha" => return found(Runner::Npm),
            "jest" => return found(Runner::Jest),
            "vitest" => return found(Runner::Vitest),
            "mvn" | "mvnw" | "mvnw.cmd" => return found(Runner::Maven),
            "gradle" | "gradlew" | "gradlew.bat" => return found(Runner::Gradle),
            "node" if rest.iter().any(|word| word == "--test") => return found(Runner::Npm),
            _ => return found(Runner::Other),
        }
    }
    Guess {
        runner: Runner::Other,
        program: 0,
    }
}

/// The file name of a program word, lower-cased, without `.exe`.
pub(crate) fn program_name(word: &str) -> String {
    let name = word
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(word)
        .to_lowercase();
    match name.strip_suffix(".exe") {
        Some(stem) => stem.to_string(),
        None => name,
    }
}

fn is_python(name: &str) -> bool {
    name == "py"
        || name
            .strip_prefix("python")
            .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The first word that is not an option (`cargo +nightly test` → `test`).
fn first_word(words: &[String]) -> &str {
    words
        .iter()
        .find(|word| !word.starts_with('-') && !word.starts_with('+'))
        .map_or("", String::as_str)
}

fn leading_options(words: &[String]) -> usize {
    words
        .iter()
        .take_while(|word| word.starts_with('-'))
        .count()
}

/// `NAME=value`, as a shell reads it before a command.
fn is_variable_setting(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn runner_of(text: &str) -> Runner {
        parse_command(text).unwrap().runner
    }

    #[test]
    fn guesses_runners_through_wrappers() {
        let cases = [
            "python -m pytest -q",
            "python3.11 -X dev -m pytest",
            "/usr/bin/pytest tests",
            "uv run pytest",
            "poetry run python -m pytest",
            "env PYTHONPATH=src pytest",
            "cargo test --workspace",
            "cargo +nightly test",
            "cargo nextest run",
            "go test ./...",
            "go vet ./...",
            "npm test --silent",
            "yarn test",
            "npx jest",
            "npx -y vitest run",
            "yarn jest --ci",
            "pnpm exec vitest run",
            "node --test",
            "mvn -B test",
            "./gradlew test",
            "python -m unittest",
            "make test",
            "tox -e py311",
        ];
        let actual: Vec<(&str, Runner)> =
            cases.iter().map(|text| (*text, runner_of(text))).collect();
        let expected = vec![
            ("python -m pytest -q", Runner::Pytest),
            ("python3.11 -X dev -m pytest", Runner::Pytest),
            ("/usr/bin/pytest tests", Runner::Pytest),
            ("uv run pytest", Runner::Pytest),
            ("poetry run python -m pytest", Runner::Pytest),
            ("env PYTHONPATH=src pytest", Runner::Pytest),
            ("cargo test --workspace", Runner::Cargo),
            ("cargo +nightly test", Runner::Cargo),
            ("cargo nextest run", Runner::Nextest),
            ("go test ./...", Runner::Go),
            ("go vet ./...", Runner::Other),
            ("npm test --silent", Runner::Npm),
            ("yarn test", Runner::Npm),
            ("npx jest", Runner::Jest),
            ("npx -y vitest run", Runner::Vitest),
            ("yarn jest --ci", Runner::Jest),
            ("pnpm exec vitest run", Runner::Vitest),
            ("node --test", Runner::Npm),
            ("mvn -B test", Runner::Maven),
            ("./gradlew test", Runner::Gradle),
            ("python -m unittest", Runner::Other),
            ("make test", Runner::Other),
            ("tox -e py311", Runner::Other),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn splits_quotes_without_a_shell() {
        let actual = parse_command(r#"python -m pytest -k "not slow and not net" 'tests/a b.py'"#);
        let expected = Ok(TestCommand {
            argv: [
                "python",
                "-m",
                "pytest",
                "-k",
                "not slow and not net",
                "tests/a b.py",
            ]
            .map(String::from)
            .to_vec(),
            runner: Runner::Pytest,
        });
        assert_eq!(actual, expected);
    }

    #[test]
    fn refuses_what_needs_a_shell() {
        let actual = [
            parse_command(""),
            parse_command("   "),
            parse_command("pytest 'unclosed"),
            parse_command("cd src && pytest"),
            parse_command("pytest > log.txt"),
            parse_command("CI=1 pytest"),
        ];
        let expected = [
            Err(VerifyError::EmptyCommand),
            Err(VerifyError::EmptyCommand),
            Err(VerifyError::BadQuoting {
                text: "pytest 'unclosed".to_string(),
                reason: "missing closing quote".to_string(),
            }),
            Err(VerifyError::ShellSyntax {
                text: "cd src && pytest".to_string(),
                token: "&&".to_string(),
            }),
            Err(VerifyError::ShellSyntax {
                text: "pytest > log.txt".to_string(),
                token: ">".to_string(),
            }),
            Err(VerifyError::VariableSetting {
                text: "CI=1 pytest".to_string(),
                token: "CI=1".to_string(),
            }),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn unusable_test_ids_are_refused_and_shown_shortened() {
        let ids = |ids: &[&str]| ids.iter().map(|id| id.to_string()).collect::<Vec<_>>();
        let long = "t".repeat(200_000);
        let many = vec!["tests/test_a.py::test_b".repeat(40); 200];
        let actual = [
            check_test_ids(&ids(&["tests/test_a.py", "tests/test_b.py::test_c[1-2]"])),
            check_test_ids(&ids(&["tests/test_a.py\0::x"])),
            check_test_ids(&ids(&["a\nb"])),
            check_test_ids(std::slice::from_ref(&long)),
            check_test_ids(&[format!("-{long}")]),
            check_test_ids(&many),
            check_test_ids(&ids(&[" "])),
        ];
        let expected = [
            Ok(()),
            Err(VerifyError::ControlInTestId {
                id: "tests/test_a.py\\u{0}::x".to_string(),
            }),
            Err(VerifyError::ControlInTestId {
                id: "a\\nb".to_string(),
            }),
            Err(VerifyError::TestIdTooLong {
                id: format!("{}…", "t".repeat(80)),
                chars: 200_000,
                max: MAX_TEST_ID_CHARS,
            }),
            Err(VerifyError::OptionLikeTestId {
                id: format!("-{}…", "t".repeat(79)),
            }),
            Err(VerifyError::TooManyTestIds {
                count: 200,
                chars: 184_000,
                max: MAX_TEST_IDS_CHARS,
            }),
            Err(VerifyError::EmptyTestId),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn only_other_commands_cannot_be_narrowed() {
        let cmd = |text: &str| parse_command(text).unwrap();
        let tests = vec!["tests/test_a.py".to_string()];
        let actual = [
            (
                cmd("python -m pytest").runner.narrows(),
                narrow(&cmd("python -m pytest"), &tests).is_ok(),
            ),
            (
                cmd("sh -c 'pytest -q'").runner.narrows(),
                narrow(&cmd("sh -c 'pytest -q'"), &tests).is_ok(),
            ),
            (
                cmd("make test").runner.narrows(),
                narrow(&cmd("make test"), &[]).is_ok(),
            ),
        ];
        assert_eq!(actual, [(true, true), (false, false), (false, true)]);
    }

    #[test]
    fn error_sentences() {
        let actual = [
            VerifyError::ShellSyntax {
                text: "a && b".to_string(),
                token: "&&".to_string(),
            }
            .to_string(),
            VerifyError::OptionLikeTestId {
                id: "--pdb".to_string(),
            }
            .to_string(),
        ];
        let expected = [
            "the test command `a && b` uses shell syntax (`&&`), but plumb runs a single command \
             without a shell; give one command, or put the steps in a script and give the script.",
            "the test id `--pdb` starts with '-', so the test runner would read it as an option; \
             give a test name or a path such as tests/test_x.py::test_y.",
        ]
        .map(String::from);
        assert_eq!(actual, expected);
    }
}
