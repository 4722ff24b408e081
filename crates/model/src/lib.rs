//! plumb-model: the `ModelClient` trait, model specs (`openai:MODEL`, `script:PATH`, …) and the
//! providers behind them. This version ships the scripted provider; the HTTP providers and the
//! embedded local model plug into the same trait.

mod script;
mod spec;

use async_trait::async_trait;
use plumb_protocol::{Message, ModelReply, ToolSpec};

pub use script::{ScriptModel, ScriptTurn};
pub use spec::ModelSpec;

/// What the loop sends for one round.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

/// Why a model could not answer.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{0}")]
    BadSpec(String),
    #[error("could not read the model script {path}: {message}")]
    Script { path: String, message: String },
    #[error("the model service failed: {0}")]
    Service(String),
    #[error("the request no longer fits the model's context window: {0}")]
    ContextWindowExceeded(String),
}

impl ModelError {
    /// True for errors a retry might cure (transport, 429, 5xx).
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Service(_) => true,
            ModelError::BadSpec(_)
            | ModelError::Script { .. }
            | ModelError::ContextWindowExceeded(_) => false,
        }
    }

    /// True when the user's input (a spec, a script file) is at fault rather than a service.
    pub fn is_bad_input(&self) -> bool {
        match self {
            ModelError::BadSpec(_) | ModelError::Script { .. } => true,
            ModelError::Service(_) | ModelError::ContextWindowExceeded(_) => false,
        }
    }
}

/// A language model the loop can ask for the next step.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// The spec as the user wrote it, for reports and journals.
    fn name(&self) -> String;
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError>;
}

/// Builds the client for a spec. Providers that are not part of this build say so and name what works.
pub fn connect(spec: &ModelSpec) -> Result<Box<dyn ModelClient>, ModelError> {
    match spec {
        ModelSpec::Script(path) => Ok(Box::new(ScriptModel::load(path)?)),
        ModelSpec::OpenAi(_)
        | ModelSpec::Anthropic(_)
        | ModelSpec::Ollama(_)
        | ModelSpec::OpenAiCompat { .. }
        | ModelSpec::Local(_) => Err(ModelError::BadSpec(format!(
            "the model `{spec}` is not available in this build of plumb yet; use --model script:PATH (a JSON Lines script)"
        ))),
    }
}
