//! Fixtures, settings and a sample conversation shared by the HTTP provider tests.

use std::path::PathBuf;
use std::time::Duration;

use plumb_model::ModelRequest;
use plumb_model::http::{ApiKey, HttpSettings};
use plumb_protocol::{Message, ToolCall, ToolSpec};
use serde_json::{Value, json};

pub const KEY: &str = "sk-test-Zq9secretKEY";

/// A body from `tests/fixtures/`.
pub fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Settings against a mock server at `url` with a key, tiny backoffs and a short idle timeout.
pub fn settings(url: &str) -> HttpSettings {
    let mut settings = HttpSettings::new(format!("{url}/v1"), "test-model");
    settings.api_key = Some(ApiKey::new(KEY));
    settings.initial_backoff = Duration::from_millis(1);
    settings.max_backoff = Duration::from_millis(20);
    settings.idle_timeout = Duration::from_secs(5);
    settings
}

pub fn read_file_tool() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Read lines of a file.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "start": {"type": "integer"}},
            "required": ["path"],
        }),
    }
}

/// A short request: one system message, one user message, no tools.
pub fn simple_request() -> ModelRequest {
    ModelRequest {
        messages: vec![
            Message::system("You are plumb."),
            Message::user("Why does the invoice total round wrong?"),
        ],
        tools: Vec::new(),
        ..ModelRequest::default()
    }
}

/// A conversation with every kind of message: two system messages, an assistant turn with two
/// tool calls (the second one malformed: its arguments are raw text), both results, and a user
/// note after the results.
pub fn conversation() -> ModelRequest {
    ModelRequest {
        messages: vec![
            Message::system("You are plumb."),
            Message::system("Repository map:\nsrc/billing.py"),
            Message::user("Fix BILL-412."),
            Message::assistant(
                "Reading first.",
                vec![
                    ToolCall {
                        id: "call_a".into(),
                        name: "read_file".into(),
                        arguments: json!({"path": "src/billing.py", "start": 1}),
                    },
                    ToolCall {
                        id: "call_b".into(),
                        name: "search".into(),
                        arguments: Value::String("{\"pattern\": ".into()),
                    },
                ],
            ),
            Message::tool("call_a", "def total(): ..."),
            Message::tool("call_b", "The arguments were not valid JSON."),
            Message::user("Note: 3 rounds left."),
        ],
        tools: vec![read_file_tool()],
        ..ModelRequest::default()
    }
}
