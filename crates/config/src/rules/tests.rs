//! Each rule on its own, and the table against every key of `Config`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use plumb_protocol::SandboxKind;
use pretty_assertions::assert_eq;

use super::*;
use crate::provenance::{dotted, leaves, table_of};
use crate::{
    Approval, Config, Helpers, Limits, Local, Mcp, ModelService, PriceOverride, Provider,
    Providers, Review, RunPolicy, Runs,
};

fn toml(text: &str) -> Value {
    format!("v = {text}")
        .parse::<toml::Table>()
        .unwrap()
        .remove("v")
        .unwrap()
}

/// (rule, the repository's value, the user's) → (value used, (value left out, reason)).
fn judged(rule: Rule, theirs: &str, yours: Option<&str>) -> (Option<String>, Option<String>) {
    let yours = yours.map(toml);
    let verdict = judge(rule, &toml(theirs), yours.as_ref());
    (
        verdict.use_value.map(|v| v.to_string()),
        verdict.left_out.map(|(v, why)| format!("{v}: {why}")),
    )
}

fn kept(value: &str) -> (Option<String>, Option<String>) {
    (Some(value.to_string()), None)
}

fn unchanged() -> (Option<String>, Option<String>) {
    (None, None)
}

fn left_out(text: &str) -> (Option<String>, Option<String>) {
    (None, Some(text.to_string()))
}

#[test]
fn a_lower_limit_is_kept_and_a_higher_one_left_out() {
    let actual = vec![
        judged(Rule::AtMost, "10", Some("30")),
        judged(Rule::AtMost, "30", Some("30")),
        judged(Rule::AtMost, "50", Some("30")),
        judged(Rule::AtMost, "5", None),
    ];
    let expected = vec![
        kept("10"),
        unchanged(),
        left_out("50: a repository may only lower this limit (yours is 30)"),
        left_out("5: a repository may only lower a limit you have set"),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn zero_is_no_limit_for_budgets() {
    let actual = vec![
        judged(Rule::AtMostOrNone, "2.5", Some("0.0")),
        judged(Rule::AtMostOrNone, "0", Some("5.0")),
        judged(Rule::AtMostOrNone, "600", Some("900")),
        judged(Rule::AtMostOrNone, "5", Some("5.0")),
    ];
    let expected = vec![
        kept("2.5"),
        left_out("0: a repository may only lower this limit (yours is 5.0; 0 is no limit)"),
        kept("600"),
        unchanged(),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn switches_move_only_the_safe_way() {
    let actual = vec![
        judged(Rule::OnlyOn("why on"), "true", Some("false")),
        judged(Rule::OnlyOn("why on"), "false", Some("true")),
        judged(Rule::OnlyOff("why off"), "false", Some("true")),
        judged(Rule::OnlyOff("why off"), "true", Some("false")),
        judged(Rule::OnlyOff("why off"), "true", Some("true")),
    ];
    let expected = vec![
        kept("true"),
        left_out("false: why on"),
        kept("false"),
        left_out("true: why off"),
        unchanged(),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn the_run_list_may_only_narrow_to_what_the_user_allows() {
    let yours = Some(r#"[["python3", "-m", "pytest"], ["cargo", "test"]]"#);
    let why = "a repository may only narrow run.allowed_commands to commands your settings allow";
    let actual = vec![
        judged(Rule::Subset, r#"[["cargo", "test"]]"#, yours),
        judged(Rule::Subset, r#"[["cargo", "test", "--lib"]]"#, yours),
        judged(Rule::Subset, r#"[["python3"]]"#, yours),
        judged(Rule::Subset, r#"[["cargo", "test"], ["rm"]]"#, yours),
        judged(Rule::Subset, "[]", yours),
        judged(Rule::Subset, r#"[[]]"#, yours),
    ];
    let expected = vec![
        kept(r#"[["cargo", "test"]]"#),
        kept(r#"[["cargo", "test", "--lib"]]"#),
        left_out(&format!(r#"[["python3"]]: {why}"#)),
        (
            Some(r#"[["cargo", "test"]]"#.to_string()),
            Some(format!(r#"[["rm"]]: {why}"#)),
        ),
        kept("[]"),
        left_out(&format!("[[]]: {why}")),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn protected_paths_and_tamper_blocks_add_to_the_users() {
    let actual = vec![
        judged(Rule::Union, r#"["migrations/"]"#, Some(r#"["vendor/"]"#)),
        judged(Rule::Union, r#"["vendor/"]"#, Some(r#"["vendor/"]"#)),
        judged(Rule::Union, r#"["a", "a"]"#, Some("[]")),
    ];
    let expected = vec![
        kept(r#"["vendor/", "migrations/"]"#),
        unchanged(),
        kept(r#"["a"]"#),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn forbidden_keys_are_left_out_unless_they_change_nothing() {
    let why = "only your own settings or flags can choose the sandbox";
    let actual = vec![
        judged(Rule::Forbidden(why), r#""none""#, Some(r#""bwrap""#)),
        judged(Rule::Forbidden(why), r#""bwrap""#, Some(r#""bwrap""#)),
        judged(Rule::Forbidden(why), r#""/tmp/elsewhere""#, None),
        judged(Rule::Allowed, r#""pytest -q""#, None),
    ];
    let expected = vec![
        left_out(&format!(r#""none": {why}"#)),
        unchanged(),
        left_out(&format!(r#""/tmp/elsewhere": {why}"#)),
        kept(r#""pytest -q""#),
    ];
    assert_eq!(actual, expected);
}

/// A `Config` with every optional key set and one price, written without `..`: adding a field
/// anywhere in `Config` stops this from compiling until it is added here, and then the test
/// below fails until the key has a rule.
fn every_key_set() -> Config {
    let provider = || Provider {
        base_url: Some("https://example.invalid/v1".into()),
        api_key_env: Some("KEY".into()),
    };
    let Limits {
        max_rounds,
        search_results,
        file_window,
        file_window_max,
        tool_output_lines,
        full_results_kept,
        prompt_share,
        history_tokens,
        stuck_repeats,
        command_timeout_secs,
        memory_mb,
        cpus,
        wall_clock_secs,
        max_tokens,
        max_usd,
        repo_map_chars,
        repo_map_tokens,
        max_file_bytes,
        max_copy_bytes,
        max_workspace_files,
        max_workspace_bytes,
    } = Limits::default();
    let Runs {
        keep,
        keep_workspaces,
    } = Runs::default();
    let ModelService {
        max_attempts,
        initial_backoff_ms,
        max_backoff_ms,
        connect_timeout_secs,
        idle_timeout_ms,
        max_output_tokens,
    } = ModelService::default();
    let Local {
        context,
        threads,
        max_reply_tokens,
        temperature,
        top_k,
        top_p,
        min_p,
        repeat_penalty,
        seed,
        constrained,
        prompt_cache,
        draft_tokens,
        batch_candidates,
    } = Local::default();
    let RunPolicy { allowed_commands } = RunPolicy::default();
    Config {
        model: "local".into(),
        test_command: Some("pytest".into()),
        setup_command: Some("pip install -e .".into()),
        setup_network: false,
        sandbox: SandboxKind::Bwrap,
        strict_sandbox: false,
        sandbox_read_only: vec![PathBuf::from("/opt")],
        sandbox_toolchains: true,
        limits: Limits {
            max_rounds,
            search_results,
            file_window,
            file_window_max,
            tool_output_lines,
            full_results_kept,
            prompt_share,
            history_tokens,
            stuck_repeats,
            command_timeout_secs,
            memory_mb,
            cpus,
            wall_clock_secs,
            max_tokens,
            max_usd,
            repo_map_chars,
            repo_map_tokens,
            max_file_bytes,
            max_copy_bytes,
            max_workspace_files,
            max_workspace_bytes,
        },
        run: RunPolicy { allowed_commands },
        tamper_block: vec!["test_modified".into()],
        tamper_unblock: vec!["bidi_control".into()],
        protected_paths: vec!["migrations/".into()],
        runs_dir: Some(PathBuf::from("/tmp/runs")),
        runs: Runs {
            keep,
            keep_workspaces,
        },
        providers: Providers {
            openai: provider(),
            anthropic: provider(),
            ollama: provider(),
            compat: provider(),
        },
        model_service: ModelService {
            max_attempts,
            initial_backoff_ms,
            max_backoff_ms,
            connect_timeout_secs,
            idle_timeout_ms,
            max_output_tokens,
        },
        prices: [(
            "openai:gpt-4.1".to_string(),
            PriceOverride {
                input: 2.0,
                cached_input: 0.5,
                output: 8.0,
            },
        )]
        .into(),
        local: Local {
            context,
            threads,
            max_reply_tokens,
            temperature,
            top_k,
            top_p,
            min_p,
            repeat_penalty,
            seed,
            constrained,
            prompt_cache,
            draft_tokens,
            batch_candidates,
        },
        helpers: Helpers {
            profile: Some(plumb_protocol::ModelProfile::Small),
            thought: Some(true),
            code_up_front: Some(true),
            show_file_on_failed_edit: Some(true),
            phases: Some(true),
            candidates: Some(2),
            figures: Some(true),
            trace: Some(true),
            python_notes: Some(true),
            python_rewrites: Some(true),
            undo_failing_fixes: Some(true),
        },
        review: Review {
            enabled: true,
            model: "anthropic:claude-sonnet-4".into(),
            returns: Some(1),
            max_diff_chars: 24_000,
            small_model: true,
        },
        approval: Approval {
            timeout_secs: 600,
            max_diff_bytes: 1 << 20,
        },
        mcp: Mcp {
            allowed_roots: vec![PathBuf::from("/srv/repos")],
            max_tasks: 1,
        },
    }
}

/// The rule a leaf falls under: its own key's, or a table's above it.
fn covering_rule(path: &[String]) -> Option<String> {
    (1..=path.len())
        .map(|n| dotted(&path[..n]))
        .find(|key| rule_for(key).is_some())
}

#[test]
fn every_key_has_a_rule_and_every_rule_a_key() {
    let table = table_of(&every_key_set());
    let keys: Vec<(String, Option<String>)> = leaves(&table)
        .into_iter()
        .map(|(path, _)| (dotted(&path), covering_rule(&path)))
        .collect();
    let without: Vec<&String> = keys
        .iter()
        .filter(|(_, rule)| rule.is_none())
        .map(|(key, _)| key)
        .collect();
    let used: BTreeSet<String> = keys.iter().filter_map(|(_, rule)| rule.clone()).collect();
    let stale: Vec<&str> = RULES
        .iter()
        .map(|(key, _)| *key)
        .filter(|key| !used.contains(*key))
        .collect();
    assert_eq!(
        (without, stale),
        (Vec::<&String>::new(), Vec::<&str>::new()),
        "keys without a rule, and rules without a key"
    );
}
