//! OpenAI chat completions (`POST {base_url}/chat/completions`, streamed), for OpenAI itself and
//! for the servers that speak its dialect (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter).
//!
//! Stream assembly: `choices[0].delta.content` pieces are concatenated; `delta.tool_calls[]`
//! pieces are gathered by their `index` (id and name come first, the arguments as string pieces);
//! the usage arrives in a last chunk of its own (`stream_options.include_usage`). The stream is
//! complete at `data: [DONE]`, or, for servers that never send it, once a chunk carried a
//! `finish_reason`; a body that ends before either was cut and is retried.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use plumb_protocol::{Message, ModelReply, Role, ToolCall, Usage};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::errors::{self, AttemptError, Provider};
use super::sse::SseEvent;
use super::transport::{self, EventSink, Flow, Post};
use super::{HttpSettings, http_client, parse_arguments, retry, settle_usage};
use crate::{ModelClient, ModelError, ModelRequest};

/// Which dialect of chat completions the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenAiFlavor {
    /// api.openai.com: `max_completion_tokens`.
    OpenAi,
    /// Ollama, vLLM, llama.cpp, LM Studio, OpenRouter: `max_tokens`.
    Compatible,
}

/// A model behind an OpenAI-compatible chat completions endpoint.
#[derive(Debug)]
pub struct OpenAiClient {
    name: String,
    settings: HttpSettings,
    flavor: OpenAiFlavor,
    provider: Provider,
    http: reqwest::Client,
    /// For tool calls the server sent without an id: `call_1`, `call_2`, … over the client's life.
    next_call_id: AtomicU64,
}

impl OpenAiClient {
    /// `name` is the spec as the user wrote it (`openai:gpt-4.1`); it is what [`ModelClient::name`]
    /// reports. Fails only on settings that cannot work (an address that is not http(s)).
    pub fn new(
        name: String,
        settings: HttpSettings,
        flavor: OpenAiFlavor,
    ) -> Result<Self, ModelError> {
        let http = http_client(&settings)?;
        let provider = match flavor {
            OpenAiFlavor::OpenAi => Provider {
                label: "OpenAI".to_owned(),
                key_hint: if settings.api_key.is_some() {
                    "check that OPENAI_API_KEY holds a valid key".to_owned()
                } else {
                    "no API key was set: set OPENAI_API_KEY".to_owned()
                },
            },
            OpenAiFlavor::Compatible => Provider {
                label: format!(
                    "the OpenAI-compatible server at {}",
                    settings.base_url.trim_end_matches('/')
                ),
                key_hint: if settings.api_key.is_some() {
                    "check the API key configured for this server".to_owned()
                } else {
                    "this server wants an API key; configure one for it".to_owned()
                },
            },
        };
        Ok(Self {
            name,
            settings,
            flavor,
            provider,
            http,
            next_call_id: AtomicU64::new(1),
        })
    }

    async fn attempt(
        &self,
        request: &ModelRequest,
        body: &[u8],
    ) -> Result<ModelReply, AttemptError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.settings.api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                .map_err(|_| bad_key(&self.provider))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let mut stream = OpenAiStream::new(&self.provider);
        transport::stream(
            Post {
                http: &self.http,
                provider: &self.provider,
                url: self.settings.endpoint("chat/completions"),
                headers,
                body: body.to_vec(),
                idle_timeout: self.settings.idle_timeout,
            },
            &mut stream,
        )
        .await?;
        let (mut reply, usage) = stream.finish(&self.next_call_id)?;
        reply.usage = settle_usage(usage, &self.settings, request, &reply);
        Ok(reply)
    }
}

#[async_trait]
impl ModelClient for OpenAiClient {
    fn name(&self) -> String {
        self.name.clone()
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let body = request_body(&self.settings, self.flavor, request);
        let body = serde_json::to_vec(&body).map_err(|error| {
            ModelError::Rejected(format!("could not encode the request: {error}"))
        })?;
        let body = body.as_slice();
        retry::with_retries(&self.settings, move |_| self.attempt(request, body)).await
    }
}

fn bad_key(provider: &Provider) -> AttemptError {
    AttemptError::Fatal(ModelError::Auth(format!(
        "the API key for {} contains characters that cannot go in an HTTP header; {}",
        provider.label, provider.key_hint
    )))
}

/// The chat completions body for `request`.
pub(crate) fn request_body(
    settings: &HttpSettings,
    flavor: OpenAiFlavor,
    request: &ModelRequest,
) -> Value {
    let messages: Vec<Value> = request
        .messages_for_provider()
        .iter()
        .map(message_json)
        .collect();
    let mut body = json!({
        "model": settings.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let max_key = match flavor {
        OpenAiFlavor::OpenAi => "max_completion_tokens",
        OpenAiFlavor::Compatible => "max_tokens",
    };
    body[max_key] = json!(settings.max_output_tokens);
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

fn message_json(message: &Message) -> Value {
    match message.role {
        Role::System => json!({"role": "system", "content": message.content}),
        Role::User => json!({"role": "user", "content": message.content}),
        Role::Assistant => {
            let mut value = json!({"role": "assistant", "content": message.content});
            if !message.tool_calls.is_empty() {
                let calls: Vec<Value> = message
                    .tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": arguments_text(&call.arguments)},
                        })
                    })
                    .collect();
                value["tool_calls"] = Value::Array(calls);
            }
            value
        }
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id.as_deref().unwrap_or_default(),
            "content": message.content,
        }),
    }
}

/// Arguments as the JSON string the API wants; a malformed call's raw text goes back as it came.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        Value::Null => "{}".to_owned(),
        other => other.to_string(),
    }
}

/// A tool call being put together from its pieces.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// The state of one streamed answer.
struct OpenAiStream<'a> {
    provider: &'a Provider,
    content: String,
    calls: BTreeMap<u64, PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

impl<'a> OpenAiStream<'a> {
    fn new(provider: &'a Provider) -> Self {
        Self {
            provider,
            content: String::new(),
            calls: BTreeMap::new(),
            finish_reason: None,
            usage: None,
            done: false,
        }
    }

    fn chunk(&mut self, chunk: &Value) -> Result<(), AttemptError> {
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(errors::from_stream_error(self.provider, error));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let count = |value: Option<&Value>| value.and_then(Value::as_u64).unwrap_or(0);
            self.usage = Some(Usage {
                input_tokens: count(usage.get("prompt_tokens")),
                cached_tokens: count(usage.pointer("/prompt_tokens_details/cached_tokens")),
                output_tokens: count(usage.get("completion_tokens")),
                usd: 0.0,
                estimated: false,
            });
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.content.push_str(text);
        }
        if let Some(pieces) = delta.get("tool_calls").and_then(Value::as_array) {
            for piece in pieces {
                self.tool_call_piece(piece);
            }
        }
        Ok(())
    }

    fn tool_call_piece(&mut self, piece: &Value) {
        let id = piece
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let index = match piece.get("index").and_then(Value::as_u64) {
            Some(index) => index,
            // Servers that send no index send each call whole: a new id is a new call.
            None => {
                let last = self.calls.keys().next_back().copied();
                let known = id.is_some_and(|id| {
                    self.calls
                        .values()
                        .any(|call| call.id.as_deref() == Some(id))
                });
                match (last, id) {
                    (Some(last), Some(_)) if !known => last + 1,
                    (Some(last), _) => last,
                    (None, _) => 0,
                }
            }
        };
        let call = self.calls.entry(index).or_default();
        if call.id.is_none() {
            call.id = id.map(str::to_owned);
        }
        let function = piece.get("function");
        if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str)
            && call.name.is_empty()
        {
            call.name = name.to_owned();
        }
        match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(text)) => call.arguments.push_str(text),
            Some(value @ Value::Object(_)) => call.arguments = value.to_string(),
            _ => {}
        }
    }

    /// The reply and the provider's usage, if the stream was complete.
    fn finish(self, next_call_id: &AtomicU64) -> Result<(ModelReply, Option<Usage>), AttemptError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(AttemptError::retryable(format!(
                "the stream from {} ended early, before its end marker (`data: [DONE]`)",
                self.provider.label
            )));
        }
        let tool_calls = self
            .calls
            .into_values()
            .map(|call| ToolCall {
                id: call.id.unwrap_or_else(|| {
                    format!("call_{}", next_call_id.fetch_add(1, Ordering::Relaxed))
                }),
                name: call.name,
                arguments: parse_arguments(&call.arguments),
            })
            .collect();
        let reply = ModelReply {
            content: self.content,
            tool_calls,
            usage: Usage::default(),
            exhausted: false,
        };
        Ok((reply, self.usage))
    }
}

impl EventSink for OpenAiStream<'_> {
    fn event(&mut self, event: SseEvent) -> Result<Flow, AttemptError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(Flow::Done);
        }
        if data.is_empty() {
            return Ok(Flow::More);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|_| {
            AttemptError::retryable(format!(
                "{} sent a stream event that is not JSON: {}",
                self.provider.label,
                errors::shorten(data, 200)
            ))
        })?;
        self.chunk(&chunk)?;
        Ok(Flow::More)
    }
}
