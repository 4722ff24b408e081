//! A Go task's tree: module `humanevalfix` (`go.mod`, Go 1.19), `<snake_name>.go` (package
//! `humanevalfix`, the imports the code uses, declaration + buggy body) and
//! `<snake_name>_test.go` (the record's example test, its `TestX` renamed `TestXExamples` so the
//! hidden `TestX` can sit beside it). The hidden test is `<snake_name>_hidden_test.go`, added by
//! `test_patch`; its ids are its `Test…` function names, as `go test -v` prints them.
//!
//! HumanEvalPack's tests use `github.com/stretchr/testify/assert`, and no module proxy is
//! reachable when tests run (nor, here, at all), so testify and what its `assert` imports
//! (go-spew, go-difflib, yaml.v3) are vendored into each tree at import time from Debian's
//! packages (`golang-github-stretchr-testify-dev` and its dependencies, in `/usr/share/gocode`):
//! `vendor/modules.txt` and the `require` lines of `go.mod` name the versions those packages
//! hold, and Go ≥ 1.14 builds from `vendor/` by itself. The tests run offline; the setup
//! command ([`GO_SETUP`]) only builds them, to warm Go's build cache.
//!
//! Go refuses unused imports, and the records' `import` and `test_setup` blocks are written for
//! one concatenated file; each file here imports exactly the packages it uses, out of those
//! blocks and a short list of standard packages.

use std::fs;
use std::path::Path;

use super::super::ImportError;
use super::super::git_repo::File;
use super::{Layout, Problem, snake_case};

/// The setup command of every Go task.
/// It never fails: a task whose buggy code does not compile still warms the dependencies (as a
/// plain `go test` setup, 6 of the 148 development tasks were bad tasks for it).
pub(crate) const GO_SETUP: &str = "sh -c 'go test -count=1 -run \"^$\" ./... || true'";

/// Where Debian's golang-*-dev packages put their sources.
const GOCODE: &str = "/usr/share/gocode/src";

/// The vendored modules: path, version (Debian bookworm's), the packages used, the Debian
/// package (for its copyright file and the message when it is missing), the module's go version.
const MODULES: &[(&str, &str, &[&str], &str, &str)] = &[
    (
        "github.com/davecgh/go-spew",
        "v1.1.1",
        &["spew"],
        "golang-github-davecgh-go-spew-dev",
        "",
    ),
    (
        "github.com/pmezard/go-difflib",
        "v1.0.0",
        &["difflib"],
        "golang-github-pmezard-go-difflib-dev",
        "",
    ),
    (
        "github.com/stretchr/testify",
        "v1.8.1",
        &["assert"],
        "golang-github-stretchr-testify-dev",
        "; go 1.13",
    ),
    (
        "gopkg.in/yaml.v3",
        "v3.0.1",
        &[""],
        "golang-gopkg-yaml.v3-dev",
        "",
    ),
];

/// Standard packages a solution or test may use without naming them in its record.
const STANDARD: &[&str] = &[
    "fmt",
    "math",
    "math/rand",
    "sort",
    "strconv",
    "strings",
    "time",
    "regexp",
    "bytes",
    "unicode",
    "crypto/md5",
    "encoding/hex",
    "reflect",
];

const TESTIFY: &str = "github.com/stretchr/testify/assert";

/// The files of `vendor/`, read once per import.
pub(crate) fn vendor() -> Result<Vec<File>, ImportError> {
    let mut files = Vec::new();
    let mut modules_txt = String::new();
    for (module, version, packages, debian, go) in MODULES {
        modules_txt.push_str(&format!("# {module} {version}\n## explicit{go}\n"));
        for package in *packages {
            let path = if package.is_empty() {
                module.to_string()
            } else {
                format!("{module}/{package}")
            };
            modules_txt.push_str(&format!("{path}\n"));
            let dir = Path::new(GOCODE).join(&path);
            let missing = |error: std::io::Error| {
                ImportError::Missing(format!(
                    "Go tasks vendor {path} from {}, which cannot be read ({error}): install \
                     Debian's {debian} (scripts/setup-test-deps.sh does)",
                    dir.display()
                ))
            };
            let mut names: Vec<String> = fs::read_dir(&dir)
                .map_err(missing)?
                .filter_map(|entry| entry.ok())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".go") && !name.ends_with("_test.go"))
                .collect();
            names.sort();
            for name in names {
                let text = fs::read_to_string(dir.join(&name)).map_err(missing)?;
                files.push((format!("vendor/{path}/{name}"), text));
            }
        }
        // Debian keeps each package's licence in its copyright file; it travels with the copy.
        let copyright = Path::new("/usr/share/doc").join(debian).join("copyright");
        if let Ok(text) = fs::read_to_string(&copyright) {
            files.push((format!("vendor/{module}/LICENSE"), text));
        }
    }
    files.push(("vendor/modules.txt".into(), modules_txt));
    Ok(files)
}

fn go_mod() -> String {
    let mut text = String::from("module humanevalfix\n\ngo 1.19\n\n");
    text.push_str(&format!(
        "require {TESTIFY_MODULE} {}\n\nrequire (\n",
        MODULES[2].1
    ));
    for (module, version, ..) in MODULES {
        if *module != TESTIFY_MODULE {
            text.push_str(&format!("\t{module} {version} // indirect\n"));
        }
    }
    text.push_str(")\n");
    text
}

const TESTIFY_MODULE: &str = "github.com/stretchr/testify";

pub(crate) fn layout(problem: &Problem, vendor: &[File]) -> Result<Layout, String> {
    let name = snake_case(&problem.entry_point);
    let file = format!("{name}.go");
    let candidates: Vec<String> = quoted(&problem.import)
        .into_iter()
        .chain(quoted(&problem.test_setup))
        .chain(STANDARD.iter().map(|package| package.to_string()))
        .collect();
    let hidden_tests = test_names(&problem.test);
    if hidden_tests.is_empty() {
        return Err("(field `test`): has no `func TestX(t *testing.T)`".into());
    }
    let examples = if problem.example_test.trim().is_empty() {
        // Five records have no example test: the package building is then the project's test.
        "func TestBuilds(t *testing.T) {}\n".to_string()
    } else {
        let mut text = problem.example_test.clone();
        for test in test_names(&problem.example_test) {
            text = text.replace(&format!("func {test}("), &format!("func {test}Examples("));
        }
        text
    };
    let mut files = vec![
        ("go.mod".into(), go_mod()),
        (
            file.clone(),
            source_file(&problem.buggy_code(), &candidates, false),
        ),
        (
            format!("{name}_test.go"),
            source_file(&examples, &candidates, true),
        ),
    ];
    files.extend(vendor.iter().cloned());
    Ok(Layout {
        files,
        fixed: (
            file,
            source_file(&problem.canonical_code(), &candidates, false),
        ),
        hidden: vec![(
            format!("{name}_hidden_test.go"),
            source_file(&problem.test, &candidates, true),
        )],
        fail_to_pass: hidden_tests,
        // Builds and vets what the tests import, running none: with the network allowed to the
        // setup phase this warms the Go build cache every later command gets a copy of
        // (testify's compile and vet's facts are ~16 s of every cold `go test`).
        setup_command: Some(GO_SETUP.into()),
        test_command: None,
    })
}

/// `package humanevalfix`, the imports `code` uses, then `code`.
fn source_file(code: &str, candidates: &[String], test: bool) -> String {
    let mut imports: Vec<&str> = Vec::new();
    if test {
        imports.push("testing");
        if uses(code, "assert") {
            imports.push(TESTIFY);
        }
    }
    for package in candidates {
        let short = package.rsplit('/').next().unwrap_or(package);
        if package != TESTIFY
            && package != "testing"
            && uses(code, short)
            && !imports.contains(&package.as_str())
        {
            imports.push(package);
        }
    }
    let block = match imports.as_slice() {
        [] => String::new(),
        list => format!(
            "import (\n{}\n)\n\n",
            list.iter()
                .map(|package| format!("\t\"{package}\""))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    };
    format!(
        "package humanevalfix\n\n{block}{}\n",
        code.trim_matches('\n')
    )
}

/// `name.` appears in `code` after something that is not part of a name.
fn uses(code: &str, name: &str) -> bool {
    let needle = format!("{name}.");
    code.match_indices(&needle).any(|(at, _)| {
        code.get(..at)
            .and_then(|before| before.chars().next_back())
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'))
    })
}

/// The strings in double quotes of an import block.
fn quoted(block: &str) -> Vec<String> {
    block
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|text| !text.is_empty())
        .map(String::from)
        .collect()
}

/// The `func TestX(` names, in order.
fn test_names(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|line| line.strip_prefix("func Test"))
        .filter_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            rest.get(name.len()..)
                .is_some_and(|after| after.starts_with('('))
                .then(|| format!("Test{name}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_imports_what_it_uses() {
        let candidates: Vec<String> = ["math", "strings", "math/rand"].map(String::from).to_vec();
        let actual = source_file(
            "func TestA(t *testing.T) {\n    assert := assert.New(t)\n    assert.Equal(1, int(math.Sqrt(1)))\n}\n",
            &candidates,
            true,
        );
        let expected = "package humanevalfix\n\nimport (\n\t\"testing\"\n\
                        \t\"github.com/stretchr/testify/assert\"\n\t\"math\"\n)\n\n\
                        func TestA(t *testing.T) {\n    assert := assert.New(t)\n    \
                        assert.Equal(1, int(math.Sqrt(1)))\n}\n";
        assert_eq!(actual, expected);
        assert_eq!(
            test_names("func TestA(t *testing.T) {}\nfunc TestB (x)\nfunc helper() {}\n"),
            vec!["TestA".to_string()]
        );
    }
}
