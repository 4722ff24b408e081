//! The embedded default model (`local[:NAME]`): Qwen2.5-Coder in GGUF, run by llama.cpp on the CPU
//! in a `plumb-llm` child process that plumb starts and stops itself. Every reply is forced through
//! a JSON-schema grammar to exactly one tool call (with a `thought` first when that helper is on),
//! capped in length, and sampled with settings that suit a small model.

mod chatml;
mod queue;
mod runner;
mod schema;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use plumb_protocol::{ModelReply, ToolCall, ToolSpec, Usage};
use serde_json::Value;
use tokio::sync::Mutex;

use crate::textcall::{TextCall, parse_text_call};
use crate::{ModelClient, ModelError, ModelRequest};

pub(crate) use runner::find_runner;
use runner::{Runner, RunnerRequest};

/// How the embedded model is sampled and sized: the part of its settings `plumb.toml` controls.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalTuning {
    /// The context window plumb runs the model with, in tokens.
    pub context: u32,
    /// CPU threads; 0 = every CPU the machine has.
    pub threads: u32,
    /// The most tokens one reply may have: a small model that rambles is cut off, not waited for.
    pub max_reply_tokens: u32,
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub min_p: f32,
    pub repeat_penalty: f32,
    pub seed: u32,
    /// Constrain replies with the tool-call grammar (on by default; off only to measure it).
    pub constrained: bool,
    /// Keep the evaluated system turn on disk (in [`PROMPT_STATES_DIR`] beside the model file) and load
    /// it in later runs.
    pub prompt_cache: bool,
    /// Ask for a free-text `thought` before each call.
    pub thought: bool,
    /// Draft tokens guessed by prompt lookup and verified per decode (0: plain decoding). The
    /// replies are the same either way; only their speed changes.
    pub draft_tokens: u32,
    /// Replies the first `sample_again` of a request samples in one batch (the candidates helper's
    /// extra replies); 1 samples each when asked.
    pub batch_candidates: u32,
}

impl Default for LocalTuning {
    fn default() -> Self {
        Self {
            context: 16384,
            threads: 0,
            max_reply_tokens: 1024,
            temperature: 0.2,
            top_k: 40,
            top_p: 0.95,
            min_p: 0.05,
            repeat_penalty: 1.0,
            seed: 1234,
            constrained: true,
            prompt_cache: true,
            thought: true,
            draft_tokens: DEFAULT_DRAFT_TOKENS,
            batch_candidates: 1,
        }
    }
}

/// Draft tokens per decode by default: none. On the two-core machines plumb is measured on, a
/// decode of k tokens costs nearly k single decodes, so drafts that are checked cost more time
/// than the decodes they save (`scripts/bench_decode.py`, table in `crates/llm/README.md`).
pub const DEFAULT_DRAFT_TOKENS: u32 = 0;

impl LocalTuning {
    /// The thread count to run with: the setting, or every CPU when it is 0.
    fn threads(&self) -> u32 {
        if self.threads > 0 {
            return self.threads;
        }
        std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(2)
    }
}

/// How the embedded model is run: the model file, the runner binary, and the tuning.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalSettings {
    /// The GGUF file.
    pub model_path: PathBuf,
    /// The `plumb-llm` binary.
    pub runner: PathBuf,
    pub tuning: LocalTuning,
}

struct State {
    runner: Option<Runner>,
    requests: u64,
    /// Extra replies sampled with an earlier attempt, for the attempts that follow.
    queued: Option<queue::Queued>,
}

/// The client for the embedded model.
pub struct LocalClient {
    name: String,
    settings: LocalSettings,
    state: Arc<Mutex<State>>,
    /// The model's tokenizer, read from its file on first use (`None` inside: it has none plumb
    /// can read).
    tokens: std::sync::OnceLock<Option<crate::tokenizer::TokenCounter>>,
}

impl LocalClient {
    /// Makes the client. The runner starts (and loads the model) in the background at once when a
    /// tokio runtime is running, so loading overlaps with preparing the workspace.
    pub fn new(name: String, settings: LocalSettings) -> Self {
        let client = Self {
            name,
            settings,
            state: Arc::new(Mutex::new(State {
                runner: None,
                requests: 0,
                queued: None,
            })),
            tokens: std::sync::OnceLock::new(),
        };
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let state = Arc::clone(&client.state);
            let settings = client.settings.clone();
            handle.spawn(async move {
                let mut state = state.lock().await;
                // A failure here is reported by the first request, which tries again.
                let _ = ensure_runner(&mut state, &settings).await;
            });
        }
        client
    }

    fn request_for(
        &self,
        id: u64,
        prompt: String,
        schema: Option<Box<serde_json::value::RawValue>>,
        max_tokens: u32,
    ) -> RunnerRequest {
        let s = &self.settings.tuning;
        RunnerRequest {
            id,
            prompt,
            json_schema: schema,
            max_tokens,
            temperature: s.temperature,
            top_k: s.top_k,
            top_p: s.top_p,
            min_p: s.min_p,
            repeat_penalty: s.repeat_penalty,
            seed: request_seed(s.seed, id),
            n: 1,
            draft: s.draft_tokens,
            stop: vec![chatml::TURN_END.to_string()],
            persist: false,
        }
    }
}

/// The prompt text the embedded model is sent for `request` (Qwen2.5's ChatML, the history
/// narrated; `thought` as `local.thought`): what its prompt tokens are counted on. Tests and
/// benchmarks measure the prompt's size with it.
pub fn prompt_text(request: &ModelRequest, thought: bool) -> String {
    chatml::render(
        &request.messages,
        &request.tools,
        thought,
        request.next_step.as_deref(),
    )
}

/// The seed of request `id` under `local.seed`: a different seed per request and the same
/// sequence every run with one setting, so reruns are comparable. The setting is spread far
/// apart first: with `seed + id`, the runs of seeds 1 and 2 sampled the same seeds one request
/// apart, so their extra candidates were the same replies.
fn request_seed(seed: u32, id: u64) -> u32 {
    seed.wrapping_mul(0x9E37_79B9).wrapping_add(id as u32)
}

async fn ensure_runner<'a>(
    state: &'a mut State,
    settings: &LocalSettings,
) -> Result<&'a mut Runner, ModelError> {
    if state.runner.is_none() {
        let state_dir = settings
            .model_path
            .parent()
            .filter(|_| settings.tuning.prompt_cache)
            .map(|dir| dir.join(PROMPT_STATES_DIR));
        let runner = Runner::start(
            &settings.runner,
            &settings.model_path,
            settings.tuning.context,
            settings.tuning.threads(),
            settings.tuning.batch_candidates,
            state_dir.as_deref(),
        )
        .await?;
        state.runner = Some(runner);
    }
    state
        .runner
        .as_mut()
        .ok_or_else(|| ModelError::Service("the local model runner is not running".into()))
}

#[async_trait]
impl ModelClient for LocalClient {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn context_window(&self) -> Option<u32> {
        Some(self.settings.tuning.context)
    }

    fn token_counter(&self) -> Option<crate::tokenizer::TokenCounter> {
        self.tokens
            .get_or_init(|| {
                // A file plumb cannot read a vocabulary from is counted by estimate: the
                // runner, not this count, says whether the model loads.
                crate::tokenizer::gguf_tokenizer(&self.settings.model_path)
                    .ok()
                    .map(crate::tokenizer::counter)
            })
            .clone()
    }

    fn can_sample(&self) -> bool {
        true
    }

    fn warm(&self, request: &ModelRequest) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let prompt = chatml::render_head(
            &request.messages,
            &request.tools,
            self.settings.tuning.thought,
        );
        let state = Arc::clone(&self.state);
        let settings = self.settings.clone();
        let mut client_request = self.request_for(0, prompt, None, 0);
        // The system turn is the same in every run with these tools and helpers: the runner keeps
        // its evaluated state on disk and loads it next time (some 6 s of the 1.5B model's time).
        client_request.persist = self.settings.tuning.prompt_cache;
        handle.spawn(async move {
            let mut state = state.lock().await;
            state.requests += 1;
            let mut warm = client_request;
            warm.id = state.requests;
            if let Ok(runner) = ensure_runner(&mut state, &settings).await {
                // Warming is an optimisation: a failure shows up again on the real request.
                let _ = runner.request(&warm).await;
            }
        });
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        self.sample(request, 0).await
    }

    async fn sample_again(
        &self,
        request: &ModelRequest,
        attempt: u32,
    ) -> Option<Result<ModelReply, ModelError>> {
        Some(self.sample(request, attempt).await)
    }
}

impl LocalClient {
    /// One reply to `request`. Attempt 0 is the model's own best guess; later attempts (another
    /// seed, since every runner request and every sequence of one has its own) are sampled at
    /// least at [`CANDIDATE_TEMPERATURE`], so they differ from it. Attempt 1 samples
    /// `batch_candidates` replies in one batch and queues all but the first for the attempts
    /// after it.
    async fn sample(&self, request: &ModelRequest, attempt: u32) -> Result<ModelReply, ModelError> {
        let prompt = chatml::render(
            &request.messages,
            &request.tools,
            self.settings.tuning.thought,
            request.next_step.as_deref(),
        );
        let schema_text = self
            .settings
            .tuning
            .constrained
            // Every tool is described in the prompt (it stays cacheable); the grammar offers
            // only the ones this reply may call.
            .then(|| schema::reply_schema(&offered_tools(request), self.settings.tuning.thought));
        let mut state = self.state.lock().await;
        if attempt > 0 {
            if let Some(reply) =
                queue::take(&mut state.queued, &prompt, schema_text.as_deref(), attempt)
            {
                return Ok(reply);
            }
        } else {
            state.queued = None;
        }
        let schema = schema_text
            .clone()
            .map(serde_json::value::RawValue::from_string)
            .transpose()
            .map_err(|err| {
                ModelError::Service(format!(
                    "plumb built a reply schema that is not JSON: {err}"
                ))
            })?;
        state.requests += 1;
        // Another sample is worth less than the first: one that rambles is cut off sooner.
        let max_tokens = if attempt > 0 {
            self.settings
                .tuning
                .max_reply_tokens
                .min(CANDIDATE_MAX_TOKENS)
        } else {
            self.settings.tuning.max_reply_tokens
        };
        let mut runner_request = self.request_for(state.requests, prompt, schema, max_tokens);
        if attempt == 1 {
            runner_request.n = self.settings.tuning.batch_candidates.max(1);
        }
        // After a refused call a small model tends to copy its last reply; sampling hotter breaks
        // the loop where the note alone does not.
        let failures = trailing_failures(&request.messages);
        let floor = if attempt > 0 {
            CANDIDATE_TEMPERATURE
        } else {
            0.0
        };
        runner_request.temperature = (self.settings.tuning.temperature.max(floor)
            + FAILURE_HEAT * failures as f32)
            .min(MAX_TEMPERATURE);
        let refused = refused_calls(&request.messages);
        let mut usage = Usage::default();
        let mut resamples = 0;
        loop {
            let runner = ensure_runner(&mut state, &self.settings).await?;
            let reply = match runner.request(&runner_request).await {
                Ok(reply) => reply,
                Err(err @ ModelError::Service(_)) => {
                    // The runner died: forget it, so the next request starts a fresh one.
                    state.runner = None;
                    return Err(err);
                }
                Err(err) => return Err(err),
            };
            // Every sample is counted, the discarded ones too: the prompt once, each reply's
            // tokens with the reply that carries them.
            usage.input_tokens += reply.prompt_tokens;
            usage.cached_tokens += reply.cached_tokens;
            let mut parsed: VecDeque<ModelReply> = choices_of(&reply)
                .into_iter()
                .map(|(text, output_tokens, cut)| {
                    let own = Usage {
                        output_tokens,
                        ..Usage::default()
                    };
                    reply_from_text(&text, &request.tools, own, state.requests, cut)
                })
                .collect();
            // The first reply that does not repeat a refused call is the answer; the replies
            // after it wait for the next attempts.
            let repeats_a_refusal = |reply: &ModelReply| {
                reply
                    .tool_calls
                    .first()
                    .is_some_and(|call| refused.contains(&(&call.name, &call.arguments)))
            };
            let fresh = parsed.iter().position(|reply| !repeats_a_refusal(reply));
            let taken = match fresh {
                Some(index) => {
                    let skipped: Vec<ModelReply> = parsed.drain(..index).collect();
                    for reply in &skipped {
                        usage.output_tokens += reply.usage.output_tokens;
                    }
                    parsed.pop_front()
                }
                None if resamples >= MAX_RESAMPLES => parsed.pop_front(),
                None => {
                    for reply in &parsed {
                        usage.output_tokens += reply.usage.output_tokens;
                    }
                    None
                }
            };
            if let Some(mut taken) = taken {
                usage.output_tokens += taken.usage.output_tokens;
                taken.usage = usage;
                if attempt > 0 {
                    parsed.retain(|reply| !repeats_a_refusal(reply));
                    state.queued = queue::Queued::new(
                        runner_request.prompt.clone(),
                        schema_text,
                        attempt + 1,
                        parsed,
                    );
                }
                return Ok(taken);
            }
            // The same call was already refused: its answer would be the same. Sample again,
            // hotter and with another seed, rather than spend a round on it.
            resamples += 1;
            state.requests += 1;
            runner_request.id = state.requests;
            runner_request.n = 1;
            runner_request.seed = runner_request.seed.wrapping_add(RESAMPLE_SEED_STEP);
            runner_request.temperature =
                (runner_request.temperature + FAILURE_HEAT).min(MAX_TEMPERATURE);
        }
    }
}

/// Each reply of a runner answer as (text, output tokens, cut at the length limit); a runner
/// answer without `choices` is its one reply.
fn choices_of(reply: &runner::RunnerReply) -> Vec<(String, u64, bool)> {
    if reply.choices.is_empty() {
        return vec![(
            reply.text.clone(),
            reply.output_tokens,
            reply.finish == "length",
        )];
    }
    reply
        .choices
        .iter()
        .map(|choice| {
            (
                choice.text.clone(),
                choice.output_tokens,
                choice.finish == "length",
            )
        })
        .collect()
}

/// The folder beside the model files where the runner keeps evaluated system turns.
pub const PROMPT_STATES_DIR: &str = "prompt-states";

/// The temperature a second and later reply to one request is sampled at, at least: hot enough
/// to write a different test or fix, not so hot that the call falls apart.
const CANDIDATE_TEMPERATURE: f32 = 0.7;

/// The most tokens a second or later sample may have: a test function or a fix fits well within.
const CANDIDATE_MAX_TOKENS: u32 = 512;

/// How many times a reply that repeats a refused call is sampled again before it is passed on
/// (and the loop's stuck detection takes over), and how far each new sample's seed moves.
const MAX_RESAMPLES: u32 = 2;
const RESAMPLE_SEED_STEP: u32 = 7_919;

/// The calls in `messages` whose results were errors: (tool name, arguments).
fn refused_calls(messages: &[plumb_protocol::Message]) -> Vec<(&String, &Value)> {
    use plumb_protocol::Role;
    let refused_ids: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::Tool && m.is_error)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| &m.tool_calls)
        .filter(|call| refused_ids.contains(&call.id.as_str()))
        .map(|call| (&call.name, &call.arguments))
        .collect()
}

/// Temperature added per refused call in a row, and the most it reaches.
const FAILURE_HEAT: f32 = 0.3;
const MAX_TEMPERATURE: f32 = 1.0;

/// How many of the latest results were refusals (tool errors or harness notes), counted back from
/// the end of the conversation to the last success.
fn trailing_failures(messages: &[plumb_protocol::Message]) -> u32 {
    use plumb_protocol::Role;
    let mut count = 0;
    for message in messages.iter().rev() {
        match message.role {
            Role::Tool if message.is_error => count += 1,
            Role::User if message.content.starts_with("[plumb]") => count += 1,
            Role::Assistant => {}
            _ => break,
        }
    }
    count
}

/// Turns the generated text into a reply: the one JSON object becomes the tool call and its
/// `thought` the reply's content. Text that is not a call stays content, so the loop tells the
/// model what to send.
fn reply_from_text(
    text: &str,
    tools: &[plumb_protocol::ToolSpec],
    usage: Usage,
    request: u64,
    cut: bool,
) -> ModelReply {
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let mut reply = ModelReply {
        content: text.to_string(),
        tool_calls: Vec::new(),
        usage,
        exhausted: false,
    };
    if let TextCall::Call {
        name,
        arguments,
        thought,
    } = parse_text_call(text, &names)
    {
        let arguments = match arguments {
            Value::Object(_) => arguments,
            _ => Value::Object(serde_json::Map::new()),
        };
        reply.content = thought;
        reply.tool_calls.push(ToolCall {
            id: format!("local_{request}"),
            name,
            arguments,
        });
    } else if cut {
        reply.content =
            format!("{text}\n[plumb: this reply was cut off at the reply length limit]");
    }
    reply
}

/// The tools the grammar offers: `allowed_tools` when set, else all. A list naming none of the
/// tools would leave the grammar nothing to write, so it counts as no list.
fn offered_tools(request: &ModelRequest) -> Vec<ToolSpec> {
    let offered: Vec<ToolSpec> = request
        .tools
        .iter()
        .filter(|tool| {
            request
                .allowed_tools
                .as_ref()
                .is_none_or(|names| names.contains(&tool.name))
        })
        .cloned()
        .collect();
    if offered.is_empty() {
        request.tools.clone()
    } else {
        offered
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nearby_seed_settings_do_not_share_request_seeds() {
        let run = |seed: u32| -> Vec<u32> { (1..=50).map(|id| request_seed(seed, id)).collect() };
        let (one, two) = (run(1), run(2));
        assert!(one.iter().all(|s| !two.contains(s)), "{one:?} {two:?}");
        assert_eq!(run(1), one, "the same setting gives the same sequence");
    }

    #[test]
    fn refused_calls_are_the_ones_answered_with_an_error() {
        use plumb_protocol::Message;
        let call = |id: &str, path: &str| ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: json!({"path": path}),
        };
        let messages = vec![
            Message::user("ticket"),
            Message::assistant("", vec![call("c1", "a.py")]),
            Message::tool_error("c1", "Error: there is no file called a.py."),
            Message::assistant("", vec![call("c2", "b.py")]),
            Message::tool("c2", "1| x = 1"),
        ];
        let refused = refused_calls(&messages);
        let a = json!({"path": "a.py"});
        assert_eq!(refused, vec![(&"read_file".to_string(), &a)]);
    }

    #[test]
    fn the_grammar_offers_only_the_allowed_tools_and_never_none() {
        let tool = |name: &str| ToolSpec {
            name: name.to_string(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        };
        let mut request = ModelRequest {
            tools: vec![tool("read_file"), tool("edit_file"), tool("done")],
            ..ModelRequest::default()
        };
        let names = |request: &ModelRequest| -> Vec<String> {
            offered_tools(request).into_iter().map(|t| t.name).collect()
        };
        assert_eq!(names(&request), ["read_file", "edit_file", "done"]);
        request.allowed_tools = Some(vec!["read_file".into(), "edit_file".into()]);
        assert_eq!(names(&request), ["read_file", "edit_file"]);
        request.allowed_tools = Some(vec!["bash".into()]);
        assert_eq!(names(&request), ["read_file", "edit_file", "done"]);
    }

    #[test]
    fn failures_are_counted_back_to_the_last_success() {
        use plumb_protocol::Message;
        let messages = vec![
            Message::system("rules"),
            Message::user("ticket"),
            Message::assistant("", vec![]),
            Message::tool("a", "found 3"),
            Message::assistant("", vec![]),
            Message::tool_error("b", "Error: already called"),
            Message::assistant("", vec![]),
            Message::user("[plumb] no tool call"),
        ];
        assert_eq!(trailing_failures(&messages), 2);
        assert_eq!(trailing_failures(&messages[..4]), 0);
    }

    #[test]
    fn constrained_text_becomes_a_call_with_the_thought_as_content() {
        let tools = vec![plumb_protocol::ToolSpec {
            name: "read_file".into(),
            description: String::new(),
            parameters: json!({}),
        }];
        let reply = reply_from_text(
            r#"{"thought": "see the totals", "tool": "read_file", "arguments": {"path": "a.py"}}"#,
            &tools,
            Usage::default(),
            3,
            false,
        );
        assert_eq!(reply.content, "see the totals");
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].id, "local_3");
        assert_eq!(reply.tool_calls[0].arguments, json!({"path": "a.py"}));
        let cut = reply_from_text(
            r#"{"thought": "and then"#,
            &tools,
            Usage::default(),
            4,
            true,
        );
        assert!(cut.tool_calls.is_empty());
        assert!(cut.content.contains("cut off"), "{}", cut.content);
    }
}
