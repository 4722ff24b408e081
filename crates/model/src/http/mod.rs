//! The HTTP model providers: OpenAI-compatible chat completions ([`OpenAiClient`]: OpenAI, Ollama,
//! vLLM, llama.cpp's server, LM Studio, OpenRouter) and Anthropic Messages ([`AnthropicClient`]).
//!
//! Both stream their answers as server-sent events and share the same steps: build the JSON body,
//! POST it ([`transport`]), parse events ([`sse`]) into a reply, and on a failure that another
//! try might cure, try again with backoff ([`retry`]). Usage comes from the provider, or is
//! counted from the text with OpenAI's tokenizer when the provider sends none (and marked
//! `estimated`); cost is usage at the configured price.

mod anthropic;
mod errors;
mod openai;
mod retry;
mod settings;
pub mod sse;
mod transport;

pub use anthropic::AnthropicClient;
pub use openai::{OpenAiClient, OpenAiFlavor};
pub use settings::{ApiKey, HttpSettings};

use plumb_protocol::{ModelReply, Usage};

use crate::price::estimate_tokens;
use crate::{ModelError, ModelRequest};

/// The `reqwest` client of one model client: connect timeout, no overall timeout (streams may
/// run long; the idle timeout bounds each wait instead).
fn http_client(settings: &HttpSettings) -> Result<reqwest::Client, ModelError> {
    let url = settings.base_url.trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ModelError::BadSpec(format!(
            "the model service address `{url}` must start with http:// or https://"
        )));
    }
    reqwest::Client::builder()
        .connect_timeout(settings.connect_timeout)
        .user_agent(concat!("plumb/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| {
            ModelError::BadSpec(format!(
                "could not set up the HTTP client for {url}: {}",
                errors::describe_transport(&error)
            ))
        })
}

/// The reply's usage: the provider's figures, or estimates from the text when it sent none, and
/// the cost at `settings.price`.
fn settle_usage(
    reported: Option<Usage>,
    settings: &HttpSettings,
    request: &ModelRequest,
    reply: &ModelReply,
) -> Usage {
    let mut usage = reported.unwrap_or_else(|| Usage {
        input_tokens: estimate_request_tokens(request),
        cached_tokens: 0,
        output_tokens: estimate_reply_tokens(reply),
        usd: 0.0,
        estimated: true,
    });
    usage.usd = settings
        .price
        .map(|price| price.cost(&usage))
        .unwrap_or(0.0);
    usage
}

/// Chat formats wrap each message in a few tokens of their own (OpenAI's: three), and the reply
/// starts after a few more.
const TOKENS_PER_MESSAGE: u64 = 3;

fn estimate_request_tokens(request: &ModelRequest) -> u64 {
    let messages: u64 = request
        .messages
        .iter()
        .map(|message| {
            TOKENS_PER_MESSAGE
                + estimate_tokens(&message.content)
                + message
                    .tool_calls
                    .iter()
                    .map(|call| {
                        estimate_tokens(&call.name) + estimate_tokens(&call.arguments.to_string())
                    })
                    .sum::<u64>()
        })
        .sum();
    let tools: u64 = request
        .tools
        .iter()
        .map(|tool| {
            estimate_tokens(&tool.name)
                + estimate_tokens(&tool.description)
                + estimate_tokens(&tool.parameters.to_string())
        })
        .sum();
    messages + tools + TOKENS_PER_MESSAGE
}

fn estimate_reply_tokens(reply: &ModelReply) -> u64 {
    estimate_tokens(&reply.content)
        + reply
            .tool_calls
            .iter()
            .map(|call| estimate_tokens(&call.name) + estimate_tokens(&call.arguments.to_string()))
            .sum::<u64>()
}

/// A tool call's argument text as a value: `{}` when empty, the JSON when it parses, and the raw
/// text as a string otherwise (the caller repairs it or tells the model).
fn parse_arguments(raw: &str) -> serde_json::Value {
    if raw.trim().is_empty() {
        return serde_json::Value::Object(serde_json::Map::new());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| serde_json::Value::String(raw.to_owned()))
}
