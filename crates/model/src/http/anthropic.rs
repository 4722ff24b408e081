//! Anthropic Messages (`POST {base_url}/messages`, streamed).
//!
//! Request: the system messages become `system` text blocks, the last one marked for the prompt
//! cache; the conversation becomes alternating user/assistant turns. Tool calls are `tool_use`
//! blocks of the assistant turn, tool results `tool_result` blocks of the next user turn, and
//! consecutive user-side messages merge into one turn with the `tool_result` blocks first.
//!
//! Stream: `message_start` (input usage), `content_block_start`/`_delta`/`_stop` (text and
//! tool_use blocks, tool input as `input_json_delta` pieces), `message_delta` (output usage, stop
//! reason), `message_stop` (the end: a body that ends before it was cut), `ping`, `error`.

use std::collections::BTreeMap;

use async_trait::async_trait;
use plumb_protocol::{ModelReply, Role, ToolCall, Usage};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::errors::{self, AttemptError, Provider};
use super::sse::SseEvent;
use super::transport::{self, EventSink, Flow, Post};
use super::{HttpSettings, http_client, parse_arguments, retry, settle_usage};
use crate::{ModelClient, ModelError, ModelRequest};

const API_VERSION: &str = "2023-06-01";

/// A model behind the Anthropic Messages API.
#[derive(Debug)]
pub struct AnthropicClient {
    name: String,
    settings: HttpSettings,
    provider: Provider,
    http: reqwest::Client,
}

impl AnthropicClient {
    /// `name` is the spec as the user wrote it (`anthropic:claude-sonnet-4-5`). Fails only on
    /// settings that cannot work (an address that is not http(s)).
    pub fn new(name: String, settings: HttpSettings) -> Result<Self, ModelError> {
        let http = http_client(&settings)?;
        let provider = Provider {
            label: "Anthropic".to_owned(),
            key_hint: if settings.api_key.is_some() {
                "check that ANTHROPIC_API_KEY holds a valid key".to_owned()
            } else {
                "no API key was set: set ANTHROPIC_API_KEY".to_owned()
            },
        };
        Ok(Self {
            name,
            settings,
            provider,
            http,
        })
    }

    async fn attempt(
        &self,
        request: &ModelRequest,
        body: &[u8],
    ) -> Result<ModelReply, AttemptError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        if let Some(key) = &self.settings.api_key {
            let mut value = HeaderValue::from_str(key.expose()).map_err(|_| {
                AttemptError::Fatal(ModelError::Auth(format!(
                    "the API key for Anthropic contains characters that cannot go in an HTTP header; {}",
                    self.provider.key_hint
                )))
            })?;
            value.set_sensitive(true);
            headers.insert(HeaderName::from_static("x-api-key"), value);
        }
        let mut stream = AnthropicStream::new(&self.provider);
        transport::stream(
            Post {
                http: &self.http,
                provider: &self.provider,
                url: self.settings.endpoint("messages"),
                headers,
                body: body.to_vec(),
                idle_timeout: self.settings.idle_timeout,
            },
            &mut stream,
        )
        .await?;
        let (mut reply, usage) = stream.finish()?;
        reply.usage = settle_usage(Some(usage), &self.settings, request, &reply);
        Ok(reply)
    }
}

#[async_trait]
impl ModelClient for AnthropicClient {
    fn name(&self) -> String {
        self.name.clone()
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let body = serde_json::to_vec(&request_body(&self.settings, request)).map_err(|error| {
            ModelError::Rejected(format!("could not encode the request: {error}"))
        })?;
        let body = body.as_slice();
        retry::with_retries(&self.settings, move |_| self.attempt(request, body)).await
    }
}

/// Which side of the conversation a message is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    User,
    Assistant,
}

/// The Messages body for `request`.
pub(crate) fn request_body(settings: &HttpSettings, request: &ModelRequest) -> Value {
    let messages = request.messages_for_provider();
    let mut system: Vec<Value> = messages
        .iter()
        .filter(|m| m.role == Role::System && !m.content.is_empty())
        .map(|m| json!({"type": "text", "text": m.content}))
        .collect();
    if let Some(last) = system.last_mut() {
        last["cache_control"] = json!({"type": "ephemeral"});
    }

    let mut turns: Vec<(Side, Vec<Value>)> = Vec::new();
    for message in messages.iter() {
        let (side, blocks) = match message.role {
            Role::System => continue,
            Role::User => (Side::User, text_block(&message.content)),
            Role::Tool => {
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
                    "content": message.content,
                });
                if message.is_error {
                    block["is_error"] = Value::Bool(true);
                }
                (Side::User, vec![block])
            }
            Role::Assistant => {
                let mut blocks = text_block(&message.content);
                blocks.extend(message.tool_calls.iter().map(|call| {
                    json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": tool_input(&call.arguments),
                    })
                }));
                (Side::Assistant, blocks)
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_side, last_blocks)) if *last_side == side => last_blocks.extend(blocks),
            _ => turns.push((side, blocks)),
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(side, mut blocks)| {
            let role = match side {
                Side::User => {
                    // Tool results must open the turn that answers the calls.
                    blocks.sort_by_key(|block| block["type"] != "tool_result");
                    "user"
                }
                Side::Assistant => "assistant",
            };
            json!({"role": role, "content": blocks})
        })
        .collect();

    let mut body = json!({
        "model": settings.model,
        "max_tokens": settings.max_output_tokens,
        "messages": messages,
        "stream": true,
    });
    if !system.is_empty() {
        body["system"] = Value::Array(system);
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

/// The API rejects empty text blocks, so empty text makes none.
fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    }
}

/// `input` must be an object; a malformed call's raw text (a string) goes as `{}`.
fn tool_input(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        _ => Value::Object(Map::new()),
    }
}

/// A content block being streamed.
#[derive(Debug)]
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        /// The `input` of `content_block_start`, used when no pieces follow.
        start_input: Value,
        json: String,
    },
    /// Thinking and other blocks plumb does not use.
    Other,
}

/// The state of one streamed answer.
struct AnthropicStream<'a> {
    provider: &'a Provider,
    blocks: BTreeMap<u64, Block>,
    input_tokens: u64,
    cache_read: u64,
    cache_creation: u64,
    output_tokens: u64,
    done: bool,
}

impl<'a> AnthropicStream<'a> {
    fn new(provider: &'a Provider) -> Self {
        Self {
            provider,
            blocks: BTreeMap::new(),
            input_tokens: 0,
            cache_read: 0,
            cache_creation: 0,
            output_tokens: 0,
            done: false,
        }
    }

    /// Takes the counts present in a `usage` object (later events repeat them cumulatively).
    fn usage(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage else {
            return;
        };
        let take = |key: &str, slot: &mut u64| {
            if let Some(n) = usage.get(key).and_then(Value::as_u64) {
                *slot = n;
            }
        };
        take("input_tokens", &mut self.input_tokens);
        take("cache_read_input_tokens", &mut self.cache_read);
        take("cache_creation_input_tokens", &mut self.cache_creation);
        take("output_tokens", &mut self.output_tokens);
    }

    fn block_start(&mut self, event: &Value) {
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        let block = event.get("content_block").unwrap_or(&Value::Null);
        let text = |key: &str| {
            block
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let block = match block.get("type").and_then(Value::as_str) {
            Some("text") => Block::Text(text("text")),
            Some("tool_use") => Block::ToolUse {
                id: text("id"),
                name: text("name"),
                start_input: block.get("input").cloned().unwrap_or(Value::Null),
                json: String::new(),
            },
            _ => Block::Other,
        };
        self.blocks.insert(index, block);
    }

    fn block_delta(&mut self, event: &Value) {
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        let delta = event.get("delta").unwrap_or(&Value::Null);
        let piece = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        match (
            self.blocks.get_mut(&index),
            delta.get("type").and_then(Value::as_str),
        ) {
            (Some(Block::Text(text)), Some("text_delta")) => text.push_str(piece("text")),
            (Some(Block::ToolUse { json, .. }), Some("input_json_delta")) => {
                json.push_str(piece("partial_json"));
            }
            // A delta for a block that never started: text is still text.
            (None, Some("text_delta")) => {
                self.blocks
                    .insert(index, Block::Text(piece("text").to_owned()));
            }
            _ => {}
        }
    }

    fn finish(self) -> Result<(ModelReply, Usage), AttemptError> {
        if !self.done {
            return Err(AttemptError::retryable(format!(
                "the stream from {} ended early, before its end event (`message_stop`)",
                self.provider.label
            )));
        }
        let mut content = String::new();
        let mut tool_calls = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                Block::Text(text) => content.push_str(&text),
                Block::ToolUse {
                    id,
                    name,
                    start_input,
                    json,
                } => {
                    let arguments = if json.trim().is_empty()
                        && start_input.as_object().is_some_and(|o| !o.is_empty())
                    {
                        start_input
                    } else {
                        parse_arguments(&json)
                    };
                    tool_calls.push(ToolCall {
                        id,
                        name,
                        arguments,
                    });
                }
                Block::Other => {}
            }
        }
        let usage = Usage {
            input_tokens: self.input_tokens + self.cache_read + self.cache_creation,
            cached_tokens: self.cache_read,
            output_tokens: self.output_tokens,
            usd: 0.0,
            estimated: false,
        };
        let reply = ModelReply {
            content,
            tool_calls,
            usage: Usage::default(),
            exhausted: false,
        };
        Ok((reply, usage))
    }
}

impl EventSink for AnthropicStream<'_> {
    fn event(&mut self, event: SseEvent) -> Result<Flow, AttemptError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|_| {
            AttemptError::retryable(format!(
                "{} sent a stream event that is not JSON: {}",
                self.provider.label,
                errors::shorten(&event.data, 200)
            ))
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default();
        match kind {
            "message_start" => self.usage(data.pointer("/message/usage")),
            "content_block_start" => self.block_start(&data),
            "content_block_delta" => self.block_delta(&data),
            "message_delta" => self.usage(data.get("usage")),
            "message_stop" => {
                self.done = true;
                return Ok(Flow::Done);
            }
            "error" => {
                let error = data.get("error").unwrap_or(&data);
                return Err(errors::from_stream_error(self.provider, error));
            }
            // ping, content_block_stop and event kinds added later.
            _ => {}
        }
        Ok(Flow::More)
    }
}
