//! plumb-model: the `ModelClient` trait, model specs (`openai:MODEL`, `script:PATH`, …) and the
//! providers behind them: OpenAI and OpenAI-compatible servers (Ollama, vLLM, llama.cpp …) and
//! Anthropic over HTTP with streaming (`http`), the embedded model run by llama.cpp in a child
//! process (`local`), and the scripted model for tests and replays. `catalog` knows context windows,
//! prices and the local models' files; `weights` fetches those files; `textcall` reads tool calls
//! written as text.

pub mod catalog;
mod connect;
pub mod http;
mod local;
pub mod price;
mod script;
mod spec;
pub mod textcall;
pub mod tokenizer;
pub mod weights;

use async_trait::async_trait;
use plumb_protocol::{Message, ModelReply, ToolSpec};

pub use connect::{ConnectOptions, Endpoint, connect, price_for};
pub use local::{LocalClient, LocalSettings, LocalTuning, prompt_text as local_prompt_text};
pub use plumb_protocol::SUMMARY_TOOL;
pub use script::{ScriptModel, ScriptTurn, parse_script};
pub use spec::ModelSpec;

/// Ends the content of a reply that a model's reply limit cut off before its tool call was
/// complete, so the loop can tell the model why nothing ran.
pub const CUT_OFF_MARK: &str = "[plumb: this reply was cut off at the reply length limit]";

/// What the loop sends for one round.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRequest {
    pub messages: Vec<Message>,
    /// Every tool, described to the model the same way each round (so cached prefixes match).
    pub tools: Vec<ToolSpec>,
    /// The names of the tools this reply may call, when fewer than `tools` (the guided-phases
    /// helper). The embedded model's grammar offers only these; hosted providers are sent every
    /// tool and the loop refuses the others with a note.
    pub allowed_tools: Option<Vec<String>>,
    /// What to do next, in one sentence (the guided-phases helper). The embedded model reads it
    /// at the end of its prompt; hosted providers get it as the last user message.
    pub next_step: Option<String>,
}

impl ModelRequest {
    /// The messages as a hosted provider gets them: `next_step`, when set, as a last user message.
    pub fn messages_for_provider(&self) -> std::borrow::Cow<'_, [Message]> {
        match &self.next_step {
            None => std::borrow::Cow::Borrowed(&self.messages),
            Some(step) => {
                let mut messages = self.messages.clone();
                messages.push(Message::user(format!("[plumb] Next: {step}")));
                std::borrow::Cow::Owned(messages)
            }
        }
    }
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
    /// The service refused the credentials (HTTP 401/403): the user must fix the key.
    #[error("the model service refused the credentials: {0}")]
    Auth(String),
    /// The service refused this request for good (another 4xx); retrying would not help.
    #[error("the model service rejected the request: {0}")]
    Rejected(String),
}

impl ModelError {
    /// True for errors a retry might cure (transport, 429, 5xx).
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Service(_) => true,
            ModelError::BadSpec(_)
            | ModelError::Script { .. }
            | ModelError::ContextWindowExceeded(_)
            | ModelError::Auth(_)
            | ModelError::Rejected(_) => false,
        }
    }

    /// True when the user's input (a spec, a script file) is at fault rather than a service.
    pub fn is_bad_input(&self) -> bool {
        match self {
            ModelError::BadSpec(_) | ModelError::Script { .. } | ModelError::Auth(_) => true,
            ModelError::Service(_)
            | ModelError::ContextWindowExceeded(_)
            | ModelError::Rejected(_) => false,
        }
    }
}

/// A language model the loop can ask for the next step.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// The spec as the user wrote it, for reports and journals.
    fn name(&self) -> String;
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError>;

    /// Another reply to a request `complete` already answered, sampled differently (`attempt` is
    /// 1, 2, …), for the loop to try when the first reply's edit did not do what was needed.
    /// `None` when this model has no other reply to give: hosted models (a second sample costs a
    /// whole request) and scripts without alternatives.
    async fn sample_again(
        &self,
        _request: &ModelRequest,
        _attempt: u32,
    ) -> Option<Result<ModelReply, ModelError>> {
        None
    }

    /// The model's profile as the catalog says (`local` is small), which switches the small-model
    /// helpers' defaults.
    fn profile(&self) -> plumb_protocol::ModelProfile {
        catalog::profile(&self.name())
    }

    /// True when [`ModelClient::sample_again`] can give other replies (the embedded model, a
    /// script with alternatives).
    fn can_sample(&self) -> bool {
        false
    }

    /// Starts preparing for requests that begin like `request` (the fixed system turn), in the
    /// background, and returns at once. The embedded model evaluates that prefix into its cache;
    /// hosted providers need nothing.
    fn warm(&self, _request: &ModelRequest) {}

    /// The tokens one request may hold, when known: the catalog's figure for a hosted model, the
    /// window plumb runs the embedded model with. `None` for models the catalog does not know
    /// (custom servers, scripts): the loop then bounds the history by `limits.history_tokens`
    /// alone.
    fn context_window(&self) -> Option<u32> {
        catalog::lookup(&self.name()).map(|info| info.context_window)
    }

    /// The model's own token count, when plumb has its tokenizer (the embedded model's, read
    /// from its file); `None`: the caller counts with its estimate.
    fn token_counter(&self) -> Option<tokenizer::TokenCounter> {
        None
    }
}

#[cfg(test)]
mod tests {
    use plumb_protocol::Role;

    use super::*;

    #[test]
    fn a_hosted_model_gets_the_next_step_as_a_last_user_message() {
        let mut request = ModelRequest {
            messages: vec![Message::system("rules"), Message::user("ticket")],
            ..ModelRequest::default()
        };
        assert_eq!(request.messages_for_provider().len(), 2);
        request.next_step = Some("write a test.".into());
        let messages = request.messages_for_provider();
        let last = messages.last().unwrap();
        assert_eq!(
            (last.role, last.content.as_str()),
            (Role::User, "[plumb] Next: write a test.")
        );
        assert_eq!(request.messages.len(), 2, "the request itself is unchanged");
    }
}
