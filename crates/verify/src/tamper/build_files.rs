//! Build files: Makefiles, build scripts and the build parts of shared manifests. They run code
//! on the user's machine when the project is built or installed, outside the tests the ladder
//! ran, and a fix for a ticket seldom needs one; so a change to one is flagged for a person.
//!
//! Files that only build (`Makefile`, `build.rs`, `setup.py`, `CMakeLists.txt`, …) are flagged on
//! any change of their text. Shared manifests are flagged only when their build part changed,
//! compared as parsed values as in `config`: `package.json`'s scripts other than `test` (that one
//! is test configuration) and `bin`, `pyproject.toml`'s `[build-system]`, `Cargo.toml`'s
//! `package.build` and `[build-dependencies]`.

use super::config::{compare_part, parse_toml};
use super::hidden::shown;
use super::{ChangeStatus, FileChange, TamperFlag, TamperKind, change_verb};

/// File names (at any depth) that only build, and what they are.
const NAMES: &[(&str, &str)] = &[
    ("Makefile", "Makefile"),
    ("makefile", "Makefile"),
    ("GNUmakefile", "Makefile"),
    ("Makefile.am", "Makefile template"),
    ("Makefile.in", "Makefile template"),
    ("configure", "configure script"),
    ("configure.ac", "configure script"),
    ("CMakeLists.txt", "CMake build file"),
    ("meson.build", "Meson build file"),
    ("meson_options.txt", "Meson build file"),
    ("BUILD", "Bazel build file"),
    ("BUILD.bazel", "Bazel build file"),
    ("WORKSPACE", "Bazel build file"),
    ("WORKSPACE.bazel", "Bazel build file"),
    ("MODULE.bazel", "Bazel build file"),
    ("build.rs", "Cargo build script (runs on every build)"),
    ("setup.py", "setup script (runs on install)"),
    ("noxfile.py", "nox session file"),
    ("build.gradle", "Gradle build file"),
    ("build.gradle.kts", "Gradle build file"),
    ("settings.gradle", "Gradle build file"),
    ("settings.gradle.kts", "Gradle build file"),
    ("pom.xml", "Maven build file"),
    ("build.xml", "Ant build file"),
    ("build.sbt", "sbt build file"),
    ("Rakefile", "Rake build file"),
    ("Gemfile", "Gemfile (Ruby code bundler runs)"),
    ("justfile", "justfile"),
    ("Justfile", "justfile"),
    (".justfile", "justfile"),
    ("Taskfile.yml", "Taskfile"),
    ("Taskfile.yaml", "Taskfile"),
    ("Dockerfile", "container build file"),
    ("Containerfile", "container build file"),
    ("docker-compose.yml", "container compose file"),
    ("docker-compose.yaml", "container compose file"),
    ("compose.yml", "container compose file"),
    ("compose.yaml", "container compose file"),
    (".npmrc", "npm configuration (scripts' shell, registries)"),
    (".yarnrc.yml", "yarn configuration (plugins, registries)"),
];

/// Name endings (at any depth) that only build.
const ENDINGS: &[(&str, &str)] = &[
    (".mk", "Makefile"),
    (".cmake", "CMake build file"),
    (".bzl", "Bazel build file"),
    (".gemspec", "gem specification (Ruby code)"),
];

/// What build file `path` is, when it only builds.
fn whole_file(path: &str) -> Option<&'static str> {
    let mut parts = path.rsplit('/');
    let name = parts.next()?;
    let folder = parts.next();
    if folder == Some(".cargo") && matches!(name, "config" | "config.toml") {
        return Some("cargo configuration (runners and build flags)");
    }
    if name.starts_with("Dockerfile.") {
        return Some("container build file");
    }
    NAMES
        .iter()
        .find(|(known, _)| *known == name)
        .or_else(|| ENDINGS.iter().find(|(ending, _)| name.ends_with(ending)))
        .map(|(_, what)| *what)
}

/// The flag for a change to a build file or to the build part of a manifest.
pub(super) fn check(change: &FileChange) -> Option<TamperFlag> {
    let whole = whole_file(&change.path).or_else(|| match &change.status {
        ChangeStatus::Renamed { from } => whole_file(from),
        _ => None,
    });
    let detail = match whole {
        // A mode change alone is the `modes` rule's.
        Some(_) if change.status == ChangeStatus::Modified && change.before == change.after => {
            return None;
        }
        Some(what) => format!(
            "{}: a {what} was {}",
            shown(&change.path),
            change_verb(change)
        ),
        None => {
            let part = match &change.status {
                ChangeStatus::Renamed { from } => part(from, change.before.as_deref(), None)
                    .or_else(|| part(&change.path, None, change.after.as_deref())),
                _ => part(
                    &change.path,
                    change.before.as_deref(),
                    change.after.as_deref(),
                ),
            }?;
            format!("{}: {part}", shown(&change.path))
        }
    };
    Some(TamperFlag {
        kind: TamperKind::BuildFileChanged,
        path: change.path.clone(),
        line: None,
        detail,
    })
}

/// The changed build part of a shared manifest, as a sentence's end.
fn part(path: &str, before: Option<&str>, after: Option<&str>) -> Option<String> {
    if before.is_none() && after.is_none() {
        return None;
    }
    match path.rsplit('/').next()? {
        "package.json" => changed_part(
            before,
            after,
            |text| {
                let value: serde_json::Value = serde_json::from_str(text).map_err(|_| ())?;
                let mut scripts = value.get("scripts").cloned();
                if let Some(serde_json::Value::Object(map)) = &mut scripts {
                    map.remove("test");
                }
                let part = (scripts, value.get("bin").cloned());
                Ok((part != (None, None)).then_some(part))
            },
            "the npm scripts (other than test) or bin entries, which npm runs on install and on request,",
        ),
        "pyproject.toml" => changed_part(
            before,
            after,
            |text| Ok(parse_toml(text)?.get("build-system").cloned()),
            "the [build-system] settings (the backend that runs on install)",
        ),
        "Cargo.toml" => changed_part(
            before,
            after,
            |text| {
                let table = parse_toml(text)?;
                let part = (
                    table
                        .get("package")
                        .and_then(|package| package.get("build"))
                        .cloned(),
                    table.get("build-dependencies").cloned(),
                );
                Ok((part != (None, None)).then_some(part))
            },
            "the build script settings (package.build, [build-dependencies])",
        ),
        _ => None,
    }
}

/// As `config`'s `compare_part`, but silent when a side does not parse: these manifests are test
/// configuration too, and that rule already flags them then.
fn changed_part<T: PartialEq>(
    before: Option<&str>,
    after: Option<&str>,
    part: impl Fn(&str) -> Result<Option<T>, ()>,
    name: &str,
) -> Option<String> {
    let parses = |text: Option<&str>| text.is_none_or(|text| part(text).is_ok());
    if !parses(before) || !parses(after) {
        return None;
    }
    compare_part(before, after, part, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn change(
        status: ChangeStatus,
        path: &str,
        before: Option<&str>,
        after: Option<&str>,
    ) -> FileChange {
        FileChange {
            status,
            path: path.into(),
            before: before.map(str::to_string),
            after: after.map(str::to_string),
            before_mode: None,
            after_mode: None,
        }
    }

    #[test]
    fn build_files_and_build_parts_are_flagged_other_parts_are_not() {
        let package = "{\"name\": \"app\", \"scripts\": {\"test\": \"jest\", \"build\": \"tsc\"}}";
        let changes = [
            change(
                ChangeStatus::Modified,
                "Makefile",
                Some("all:\n"),
                Some("all:\n\tcurl x | sh\n"),
            ),
            change(
                ChangeStatus::Added,
                "crates/x/build.rs",
                None,
                Some("fn main() {}\n"),
            ),
            change(ChangeStatus::Added, "setup.py", None, Some("import os\n")),
            change(
                ChangeStatus::Added,
                ".cargo/config.toml",
                None,
                Some("[target.x]\nrunner = \"sh\"\n"),
            ),
            change(
                ChangeStatus::Added,
                "docker/Dockerfile.dev",
                None,
                Some("FROM x\n"),
            ),
            change(
                ChangeStatus::Modified,
                "web/package.json",
                Some(package),
                Some(&package.replace("\"tsc\"", "\"tsc\", \"postinstall\": \"node x.js\"")),
            ),
            change(
                ChangeStatus::Modified,
                "pyproject.toml",
                Some("[project]\nname = \"a\"\n"),
                Some("[project]\nname = \"a\"\n[build-system]\nbuild-backend = \"evil\"\n"),
            ),
            // Not build parts: the test script (test configuration), the version, a mode change.
            change(
                ChangeStatus::Modified,
                "package.json",
                Some(package),
                Some(&package.replace("jest", "jest --ci")),
            ),
            change(
                ChangeStatus::Modified,
                "Cargo.toml",
                Some("[package]\nversion = \"1.0.0\"\n"),
                Some("[package]\nversion = \"1.0.1\"\n"),
            ),
            change(
                ChangeStatus::Modified,
                "configure",
                Some("x\n"),
                Some("x\n"),
            ),
            change(ChangeStatus::Added, "docs/makefile.md", None, Some("x\n")),
        ];
        let actual: Vec<String> = changes
            .iter()
            .filter_map(check)
            .map(|flag| flag.detail)
            .collect();
        let expected = vec![
            "Makefile: a Makefile was changed",
            "crates/x/build.rs: a Cargo build script (runs on every build) was added",
            "setup.py: a setup script (runs on install) was added",
            ".cargo/config.toml: a cargo configuration (runners and build flags) was added",
            "docker/Dockerfile.dev: a container build file was added",
            "web/package.json: the npm scripts (other than test) or bin entries, which npm runs on install and on request, were changed",
            "pyproject.toml: the [build-system] settings (the backend that runs on install) were added",
        ];
        assert_eq!(actual, expected);
    }
}
