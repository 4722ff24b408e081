//! Turning flags and settings into the parts of a `RunSpec`: the layered config, the runs folder,
//! the model client and the sandbox. Every error here is bad input (exit 2) with a sentence that
//! names what to change, except a sandbox that cannot be built (exit 3).

use std::path::{Path, PathBuf};
use std::time::Duration;

use plumb_config::{Config, ConfigSources, FlagSetting, Loaded};
use plumb_model::price::Price;
use plumb_model::{ConnectOptions, Endpoint, LocalTuning, ModelClient, ModelSpec};
use plumb_protocol::SandboxKind;
use plumb_sandbox::{Sandbox, Toolchains};

use crate::Failure;

/// Loads the user's file → `-c` → flags, and the repository's file as far as it only tightens
/// them; the repository settings left out are in the provenance.
pub(crate) fn load_config(
    repo: Option<&Path>,
    overrides: Vec<String>,
    flags: Vec<FlagSetting>,
) -> Result<Loaded, Failure> {
    plumb_config::load(&ConfigSources {
        global: user_settings_file(),
        repo_dir: repo.map(Path::to_path_buf),
        overrides,
        flags,
    })
    .map_err(|err| Failure::bad_input(err.to_string()))
}

/// The user's own settings file: `$XDG_CONFIG_HOME/plumb/plumb.toml`, else
/// `~/.config/plumb/plumb.toml`.
pub(crate) fn user_settings_file() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .map(|dir| dir.join("plumb").join("plumb.toml"))
}

/// `runs_dir` from the settings, else `runs` in the state folder.
pub(crate) fn runs_dir(config: &Config) -> Result<PathBuf, Failure> {
    if let Some(dir) = &config.runs_dir {
        return Ok(dir.clone());
    }
    Ok(state_dir()?.join("runs"))
}

/// plumb's state folder: `$PLUMB_HOME`, else `$XDG_STATE_HOME/plumb`, else `~/.local/state/plumb`.
pub(crate) fn state_dir() -> Result<PathBuf, Failure> {
    if let Some(home) = std::env::var_os("PLUMB_HOME") {
        return Ok(PathBuf::from(home));
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state")))
        .ok_or_else(|| {
            Failure::bad_input("neither HOME nor PLUMB_HOME is set; set PLUMB_HOME to a folder where plumb may keep its runs")
        })?;
    Ok(state.join("plumb"))
}

pub(crate) fn connect_model(
    spec_text: &str,
    config: &Config,
) -> Result<Box<dyn ModelClient>, Failure> {
    connect_model_with_keys(spec_text, config, &std::collections::BTreeMap::new())
}

/// [`connect_model`] with keys given by provider (a service tenant's own), which win over the
/// environment.
pub(crate) fn connect_model_with_keys(
    spec_text: &str,
    config: &Config,
    keys: &std::collections::BTreeMap<String, plumb_model::http::ApiKey>,
) -> Result<Box<dyn ModelClient>, Failure> {
    let spec = ModelSpec::parse(spec_text).map_err(|err| Failure::bad_input(err.to_string()))?;
    let mut options = connect_options(config, &spec);
    options.keys.clone_from(keys);
    plumb_model::connect(&spec, &options).map_err(|err| {
        if err.is_bad_input() {
            Failure::bad_input(err.to_string())
        } else {
            Failure::infra(err.to_string())
        }
    })
}

/// The model settings of `plumb.toml` in the form `plumb_model::connect` takes.
pub(crate) fn connect_options(config: &Config, spec: &ModelSpec) -> ConnectOptions {
    let endpoint = |p: &plumb_config::Provider| Endpoint {
        base_url: p.base_url.clone(),
        api_key_env: p.api_key_env.clone(),
    };
    let service = &config.model_service;
    let local = &config.local;
    let profile = match spec {
        ModelSpec::Local(_) => plumb_protocol::ModelProfile::Small,
        _ => plumb_protocol::ModelProfile::Capable,
    };
    let helpers = config.helpers.for_profile(profile);
    ConnectOptions {
        openai: endpoint(&config.providers.openai),
        anthropic: endpoint(&config.providers.anthropic),
        ollama: endpoint(&config.providers.ollama),
        compat: endpoint(&config.providers.compat),
        max_attempts: service.max_attempts,
        initial_backoff: Duration::from_millis(service.initial_backoff_ms),
        max_backoff: Duration::from_millis(service.max_backoff_ms),
        connect_timeout: Duration::from_secs(service.connect_timeout_secs),
        idle_timeout: Duration::from_millis(service.idle_timeout_ms),
        max_output_tokens: service.max_output_tokens,
        prices: config
            .prices
            .iter()
            .map(|(spec, p)| {
                let price = Price {
                    input: p.input,
                    cached_input: p.cached_input,
                    output: p.output,
                };
                (spec.clone(), price)
            })
            .collect(),
        local: LocalTuning {
            context: local.context,
            threads: local.threads,
            max_reply_tokens: local.max_reply_tokens,
            temperature: local.temperature,
            top_k: local.top_k,
            top_p: local.top_p,
            min_p: local.min_p,
            repeat_penalty: local.repeat_penalty,
            seed: local.seed,
            constrained: local.constrained,
            prompt_cache: local.prompt_cache,
            thought: helpers.thought,
            draft_tokens: local.draft_tokens,
            // The candidates helper asks for its extra replies one after another; batched, they
            // come from one request.
            batch_candidates: if local.batch_candidates {
                helpers.candidates.saturating_sub(1).max(1)
            } else {
                1
            },
        },
        keys: std::collections::BTreeMap::new(),
    }
}

/// The sandbox of the settings. A backend that cannot work here is an infrastructure failure whose
/// message says how to fix it. With `sandbox_toolchains` (the default) commands get the host's
/// toolchains, their package caches in `toolcache` (the run folder's own).
pub(crate) fn build_sandbox(
    config: &Config,
    scratch: PathBuf,
    toolcache: PathBuf,
) -> Result<Box<dyn Sandbox>, Failure> {
    let toolchains = if config.sandbox_toolchains {
        Toolchains::from_process(toolcache)
    } else {
        Toolchains::none()
    };
    match config.sandbox {
        SandboxKind::None => Ok(Box::new(
            plumb_sandbox::NoSandbox::new(scratch).with_toolchains(toolchains),
        )),
        SandboxKind::Bwrap => {
            let settings = plumb_sandbox::BwrapSettings {
                seccomp: config.strict_sandbox,
                extra_read_only: config.sandbox_read_only.clone(),
            };
            let sandbox = plumb_sandbox::BwrapSandbox::new()
                .map_err(|err| Failure::infra(err.to_string()))?
                .with_settings(settings)
                .with_toolchains(toolchains);
            Ok(Box::new(sandbox))
        }
        SandboxKind::Gvisor => {
            let sandbox = plumb_sandbox::GvisorSandbox::new(scratch)
                .map_err(|err| Failure::infra(err.to_string()))?
                .with_toolchains(toolchains);
            Ok(Box::new(sandbox))
        }
    }
}
