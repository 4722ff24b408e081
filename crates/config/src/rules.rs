//! What a repository's own `plumb.toml` may set: one rule per key, in [`RULES`]. A repository is
//! a stranger's text, so its file may only *tighten* what the user's settings (defaults, their
//! file, `-c`, flags) allow: test commands, helpers, lower limits, more protected paths, a
//! narrower `run` allow-list. Anything that widens what commands or model requests can do — the
//! sandbox, host folders, the network, where runs and requests go, keys, prices — only the user
//! sets. A value against its rule is left out with a reason, never an error: strangers'
//! repositories commit such files, and the run goes on with the user's value.
//!
//! Every key of [`crate::Config`] has a rule; `every_key_has_a_rule` fails when one is added
//! without.

use toml::Value;

use crate::provenance::render;

/// How a repository's value for one key is judged against the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// The repository may set it (what its tests are, which helpers suit it).
    Allowed,
    /// A bound: the repository's value counts when it is at most the user's.
    AtMost,
    /// A bound where 0 means "no limit": as [`Rule::AtMost`], with 0 above every number.
    AtMostOrNone,
    /// A switch whose "on" is the safer: the repository may only turn it on.
    OnlyOn(&'static str),
    /// A switch whose "off" is the safer: the repository may only turn it off.
    OnlyOff(&'static str),
    /// A list of argv prefixes: the repository's entries count when the user's list already
    /// allows them (an entry of the user's starts each); the others are left out.
    Subset,
    /// A list the repository's entries are added to.
    Union,
    /// Only the user may set it; the text says why, as the end of the warning.
    Forbidden(&'static str),
}

const SAMPLING: &str = "only your own settings can tune how the local model samples";
const RETRIES: &str =
    "only your own settings can change how requests to your model service are retried";

/// The rule for every key of `Config`, by dotted key. `prices` and `providers` are judged whole
/// (a map of any model spec, and every provider's address and key variable).
pub(crate) const RULES: &[(&str, Rule)] = &[
    (
        "model",
        Rule::Forbidden(
            "only your own settings or --model can choose the model: a repository's choice could send your code to another service",
        ),
    ),
    ("test_command", Rule::Allowed),
    ("setup_command", Rule::Allowed),
    (
        "setup_network",
        Rule::OnlyOff("only your own settings can let the setup command use the network"),
    ),
    (
        "sandbox",
        Rule::Forbidden("only your own settings or flags can choose the sandbox"),
    ),
    (
        "strict_sandbox",
        Rule::OnlyOn("only your own settings or flags can turn the strict sandbox off"),
    ),
    (
        "sandbox_read_only",
        Rule::Forbidden("only your own settings can show host folders to commands"),
    ),
    (
        "sandbox_toolchains",
        Rule::OnlyOff("only your own settings can show the host's toolchains to commands"),
    ),
    ("limits.max_rounds", Rule::AtMost),
    ("limits.search_results", Rule::AtMost),
    ("limits.file_window", Rule::AtMost),
    ("limits.file_window_max", Rule::AtMost),
    ("limits.tool_output_lines", Rule::AtMost),
    ("limits.full_results_kept", Rule::AtMost),
    ("limits.prompt_share", Rule::AtMost),
    ("limits.history_tokens", Rule::AtMostOrNone),
    ("limits.stuck_repeats", Rule::AtMost),
    ("limits.command_timeout_secs", Rule::AtMost),
    ("limits.memory_mb", Rule::AtMost),
    ("limits.cpus", Rule::AtMost),
    ("limits.wall_clock_secs", Rule::AtMostOrNone),
    ("limits.max_tokens", Rule::AtMostOrNone),
    ("limits.max_usd", Rule::AtMostOrNone),
    ("limits.repo_map_chars", Rule::AtMost),
    ("limits.repo_map_tokens", Rule::AtMost),
    ("limits.max_file_bytes", Rule::AtMost),
    ("limits.max_copy_bytes", Rule::AtMost),
    ("limits.max_workspace_files", Rule::AtMost),
    ("limits.max_workspace_bytes", Rule::AtMost),
    (
        "runs.keep",
        Rule::Forbidden("only your own settings can say how many of your past runs are kept"),
    ),
    (
        "runs.keep_workspaces",
        Rule::Forbidden("only your own settings can say how many of your past runs are kept"),
    ),
    ("run.allowed_commands", Rule::Subset),
    ("tamper_block", Rule::Union),
    (
        "tamper_unblock",
        Rule::Forbidden(
            "only your own settings or -c can turn a hazard that blocks by default into a flag",
        ),
    ),
    ("protected_paths", Rule::Union),
    (
        "runs_dir",
        Rule::Forbidden("only your own settings can say where runs are kept"),
    ),
    (
        "providers",
        Rule::Forbidden(
            "only your own settings can say where model requests go and which key they carry",
        ),
    ),
    ("model_service.max_attempts", Rule::AtMost),
    ("model_service.initial_backoff_ms", Rule::Forbidden(RETRIES)),
    ("model_service.max_backoff_ms", Rule::Forbidden(RETRIES)),
    ("model_service.connect_timeout_secs", Rule::AtMost),
    ("model_service.idle_timeout_ms", Rule::AtMost),
    ("model_service.max_output_tokens", Rule::AtMost),
    (
        "prices",
        Rule::Forbidden("only your own settings can set prices: they feed the cost budget"),
    ),
    ("local.context", Rule::AtMost),
    ("local.threads", Rule::AtMostOrNone),
    ("local.max_reply_tokens", Rule::AtMost),
    ("local.temperature", Rule::Forbidden(SAMPLING)),
    ("local.top_k", Rule::Forbidden(SAMPLING)),
    ("local.top_p", Rule::Forbidden(SAMPLING)),
    ("local.min_p", Rule::Forbidden(SAMPLING)),
    ("local.repeat_penalty", Rule::Forbidden(SAMPLING)),
    ("local.seed", Rule::Forbidden(SAMPLING)),
    (
        "local.constrained",
        Rule::OnlyOn("only your own settings can turn the local model's reply grammar off"),
    ),
    (
        "local.prompt_cache",
        Rule::OnlyOff(
            "only your own settings can make the local model load its saved state from disk",
        ),
    ),
    ("local.draft_tokens", Rule::AtMost),
    (
        "local.batch_candidates",
        Rule::OnlyOff(
            "only your own settings can make the local model sample candidates side by side",
        ),
    ),
    ("helpers.thought", Rule::Allowed),
    ("helpers.code_up_front", Rule::Allowed),
    ("helpers.show_file_on_failed_edit", Rule::Allowed),
    ("helpers.phases", Rule::Allowed),
    ("helpers.candidates", Rule::Allowed),
    ("helpers.profile", Rule::Allowed),
    ("helpers.figures", Rule::Allowed),
    ("helpers.trace", Rule::Allowed),
    ("helpers.python_notes", Rule::Allowed),
    ("helpers.python_rewrites", Rule::Allowed),
    ("helpers.undo_failing_fixes", Rule::Allowed),
    (
        "review.enabled",
        Rule::OnlyOn("only your own settings can switch the review of a change off"),
    ),
    (
        "review.model",
        Rule::Forbidden(
            "only your own settings can choose the reviewer: a repository's choice could send your code to another service",
        ),
    ),
    ("review.returns", Rule::AtMost),
    ("review.max_diff_chars", Rule::AtMost),
    (
        "review.small_model",
        Rule::OnlyOn("only your own settings can switch a small model's review off"),
    ),
    ("approval.timeout_secs", Rule::AtMost),
    ("approval.max_diff_bytes", Rule::AtMost),
    (
        "mcp.allowed_roots",
        Rule::Forbidden("only your own settings can say which folders plumb mcp may take"),
    ),
    // Read once when `plumb mcp` starts, before any repository is: a repository's value could
    // never take effect, so it is left out with a warning rather than accepted and ignored.
    (
        "mcp.max_tasks",
        Rule::Forbidden("only your own settings can say how many tasks plumb mcp runs at once"),
    ),
];

/// The reason for a key no rule names (none today; the table test keeps it so).
pub(crate) const NO_RULE: &str =
    "plumb has no rule for what a repository may set here, so only your own settings can";

/// The rule for a dotted key, if the table has one.
pub(crate) fn rule_for(key: &str) -> Option<Rule> {
    RULES
        .iter()
        .find(|(name, _)| *name == key)
        .map(|(_, rule)| *rule)
}

/// What becomes of one repository value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    /// The value to use, when it changes anything.
    pub use_value: Option<Value>,
    /// What was left out (the repository's value or the part of it) and why.
    pub left_out: Option<(Value, String)>,
}

impl Verdict {
    fn unchanged() -> Self {
        Self {
            use_value: None,
            left_out: None,
        }
    }

    fn keep(value: Value) -> Self {
        Self {
            use_value: Some(value),
            left_out: None,
        }
    }

    fn leave_out(value: &Value, why: impl Into<String>) -> Self {
        Self {
            use_value: None,
            left_out: Some((value.clone(), why.into())),
        }
    }
}

/// Judges the repository's `value` under `rule`, against the user's value (`None` when the user's
/// settings leave the key unset).
pub(crate) fn judge(rule: Rule, value: &Value, yours: Option<&Value>) -> Verdict {
    if yours.is_some_and(|yours| same(value, yours)) {
        return Verdict::unchanged();
    }
    match rule {
        Rule::Allowed => Verdict::keep(value.clone()),
        Rule::AtMost | Rule::AtMostOrNone => at_most(rule, value, yours),
        Rule::OnlyOn(why) => switch(value, true, why),
        Rule::OnlyOff(why) => switch(value, false, why),
        Rule::Subset => subset(value, yours),
        Rule::Union => union(value, yours),
        Rule::Forbidden(why) => Verdict::leave_out(value, why),
    }
}

/// Equal values, numbers compared as numbers (`5` and `5.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Integer(n) => Some(*n as f64),
        Value::Float(x) => Some(*x),
        _ => None,
    }
}

fn at_most(rule: Rule, value: &Value, yours: Option<&Value>) -> Verdict {
    let Some(yours) = yours else {
        return Verdict::leave_out(value, "a repository may only lower a limit you have set");
    };
    let (Some(theirs), Some(mine)) = (number(value), number(yours)) else {
        return Verdict::leave_out(value, "a repository may only lower limits, with a number");
    };
    let bound = |x: f64| {
        if rule == Rule::AtMostOrNone && x == 0.0 {
            f64::INFINITY
        } else {
            x
        }
    };
    if bound(theirs) <= bound(mine) {
        return Verdict::keep(value.clone());
    }
    let none = if rule == Rule::AtMostOrNone && theirs == 0.0 {
        "; 0 is no limit"
    } else {
        ""
    };
    Verdict::leave_out(
        value,
        format!(
            "a repository may only lower this limit (yours is {}{none})",
            render(yours)
        ),
    )
}

fn switch(value: &Value, allowed: bool, why: &str) -> Verdict {
    if value.as_bool() == Some(allowed) {
        Verdict::keep(value.clone())
    } else {
        Verdict::leave_out(value, why)
    }
}

/// An argv prefix list as strings; `None` when it is not one.
fn prefixes(value: &Value) -> Option<Vec<Vec<String>>> {
    value
        .as_array()?
        .iter()
        .map(|entry| {
            entry
                .as_array()?
                .iter()
                .map(|word| word.as_str().map(str::to_string))
                .collect()
        })
        .collect()
}

fn subset(value: &Value, yours: Option<&Value>) -> Verdict {
    let why = "a repository may only narrow run.allowed_commands to commands your settings allow";
    let (Some(theirs), Some(mine)) = (prefixes(value), yours.and_then(prefixes)) else {
        return Verdict::leave_out(value, why);
    };
    let (kept, extra): (Vec<Vec<String>>, Vec<Vec<String>>) =
        theirs.into_iter().partition(|entry| {
            mine.iter()
                .any(|prefix| !prefix.is_empty() && entry.starts_with(prefix))
        });
    let as_value = |list: &[Vec<String>]| {
        Value::Array(
            list.iter()
                .map(|argv| Value::Array(argv.iter().cloned().map(Value::String).collect()))
                .collect(),
        )
    };
    if extra.is_empty() {
        return Verdict::keep(as_value(&kept));
    }
    Verdict {
        // Only the repository's own narrowing counts; a list of nothing but new commands changes
        // nothing of the user's.
        use_value: (!kept.is_empty()).then(|| as_value(&kept)),
        left_out: Some((as_value(&extra), why.to_string())),
    }
}

fn union(value: &Value, yours: Option<&Value>) -> Verdict {
    let mut list = yours.and_then(Value::as_array).cloned().unwrap_or_default();
    let before = list.len();
    for entry in value.as_array().into_iter().flatten() {
        if !list.contains(entry) {
            list.push(entry.clone());
        }
    }
    if list.len() == before {
        Verdict::unchanged()
    } else {
        Verdict::keep(Value::Array(list))
    }
}

#[cfg(test)]
mod tests;
