//! Model specs as written on the command line (docs/contracts.md §7).

use std::fmt;
use std::path::PathBuf;

use crate::ModelError;

/// Which model to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    OpenAi(String),
    Anthropic(String),
    Ollama(String),
    OpenAiCompat {
        url: String,
        model: String,
    },
    /// The embedded local model; `None` is the default size.
    Local(Option<String>),
    Script(PathBuf),
}

impl ModelSpec {
    pub fn parse(text: &str) -> Result<ModelSpec, ModelError> {
        let text = text.trim();
        if text == "local" {
            return Ok(ModelSpec::Local(None));
        }
        let bad = |why: &str| {
            ModelError::BadSpec(format!(
                "the model spec `{text}` {why}; use one of openai:MODEL, anthropic:MODEL, ollama:MODEL, openai-compat:URL#MODEL, local[:NAME], script:PATH"
            ))
        };
        let Some((kind, rest)) = text.split_once(':') else {
            return Err(bad("has no provider prefix"));
        };
        if rest.is_empty() {
            return Err(bad("names no model"));
        }
        match kind {
            "openai" => Ok(ModelSpec::OpenAi(rest.to_string())),
            "anthropic" => Ok(ModelSpec::Anthropic(rest.to_string())),
            "ollama" => Ok(ModelSpec::Ollama(rest.to_string())),
            "local" => Ok(ModelSpec::Local(Some(rest.to_string()))),
            "script" => Ok(ModelSpec::Script(PathBuf::from(rest))),
            "openai-compat" => match rest.rsplit_once('#') {
                Some((url, model)) if !url.is_empty() && !model.is_empty() => {
                    Ok(ModelSpec::OpenAiCompat {
                        url: url.to_string(),
                        model: model.to_string(),
                    })
                }
                _ => Err(bad("needs URL#MODEL after openai-compat:")),
            },
            _ => Err(bad("has an unknown provider")),
        }
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::OpenAi(m) => write!(f, "openai:{m}"),
            ModelSpec::Anthropic(m) => write!(f, "anthropic:{m}"),
            ModelSpec::Ollama(m) => write!(f, "ollama:{m}"),
            ModelSpec::OpenAiCompat { url, model } => write!(f, "openai-compat:{url}#{model}"),
            ModelSpec::Local(None) => write!(f, "local"),
            ModelSpec::Local(Some(name)) => write!(f, "local:{name}"),
            ModelSpec::Script(path) => write!(f, "script:{}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn specs_round_trip() {
        let texts = [
            "openai:gpt-4.1",
            "anthropic:claude-sonnet",
            "ollama:qwen2.5-coder",
            "openai-compat:http://127.0.0.1:8080/v1#qwen",
            "local",
            "local:0.5b",
            "script:a/b.jsonl",
        ];
        let actual: Vec<String> = texts
            .iter()
            .map(|t| ModelSpec::parse(t).unwrap().to_string())
            .collect();
        assert_eq!(actual, texts.to_vec());
    }

    #[test]
    fn unknown_provider_is_bad_input() {
        let err = ModelSpec::parse("gpt4").unwrap_err();
        assert!(err.is_bad_input());
        assert!(err.to_string().contains("script:PATH"), "{err}");
    }
}
