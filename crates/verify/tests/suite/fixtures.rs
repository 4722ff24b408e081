//! Captured runner outputs under `tests/fixtures/RUNNER/NAME.out` and `NAME.err`, and the other
//! files of `tests/fixtures/RUNNER/` (reports).

use std::fs;
use std::path::PathBuf;

/// The stdout and stderr of a captured run; a missing `.err` file means nothing on stderr.
pub fn output(runner: &str, name: &str) -> (String, String) {
    let folder = folder(runner);
    let stdout = fs::read_to_string(folder.join(format!("{name}.out")))
        .unwrap_or_else(|err| panic!("fixture {runner}/{name}.out: {err}"));
    let stderr = fs::read_to_string(folder.join(format!("{name}.err"))).unwrap_or_default();
    (stdout, stderr)
}

/// The folder of one runner's fixtures.
pub fn folder(runner: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(runner)
}

/// One fixture file's text.
pub fn read(runner: &str, name: &str) -> String {
    fs::read_to_string(folder(runner).join(name))
        .unwrap_or_else(|err| panic!("fixture {runner}/{name}: {err}"))
}
