//! End-to-end: spawn `plumb-llm` on the real 0.5B model and drive the JSON Lines protocol.
//!
//! The model is found where plumb looks for it (`plumb_model::catalog::models_dir`: `$PLUMB_MODELS_DIR`, else
//! the XDG cache of the user running the tests), never at a fixed path. A missing model fails the test with the
//! command that fetches it; it is never skipped.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_plumb-llm");
/// Per reply; generous because a loaded two-core machine slows llama.cpp down a lot.
const REPLY_TIMEOUT: Duration = Duration::from_secs(300);

fn model_path() -> PathBuf {
    let model = plumb_model::catalog::local_model(Some("0.5b")).expect("0.5b is in the catalog");
    let dir = plumb_model::catalog::models_dir();
    plumb_model::catalog::installed_path_in(&dir, model).unwrap_or_else(|| {
        panic!(
            "the local model {} is missing (or not whole): run `plumb models fetch 0.5b` \
             (scripts/setup-test-deps.sh --tests does), or set PLUMB_MODELS_DIR to the folder that holds it",
            dir.join(model.file_name).display()
        )
    })
}

/// A running `plumb-llm`, killed on drop.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Server {
    /// Starts a server on the test model with a 2,048-token context and `extra` flags.
    fn with_test_model(extra: &[&str]) -> Self {
        let model = model_path();
        let mut args = vec![
            "--model",
            model.to_str().expect("utf-8 path"),
            "--ctx",
            "2048",
        ];
        args.extend_from_slice(extra);
        Self::start(&args)
    }

    fn start(args: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn plumb-llm");
        let stdout = child.stdout.take().expect("stdout");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
        }
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write request");
        stdin.flush().expect("flush request");
    }

    fn ask(&mut self, request: &Value) -> Value {
        self.send_line(&request.to_string());
        self.next()
    }

    fn next(&self) -> Value {
        match self.lines.recv_timeout(REPLY_TIMEOUT) {
            Ok(line) => {
                serde_json::from_str(&line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
            }
            Err(RecvTimeoutError::Timeout) => {
                panic!("plumb-llm sent no line within {REPLY_TIMEOUT:?}")
            }
            Err(RecvTimeoutError::Disconnected) => panic!("plumb-llm closed stdout"),
        }
    }

    /// Closes stdin and waits for the exit code.
    fn finish(mut self) -> Option<i32> {
        self.finish_within(Duration::from_secs(60))
    }

    /// Closes stdin and waits up to `limit` for the exit code (`None`: still running).
    fn finish_within(&mut self, limit: Duration) -> Option<i32> {
        self.stdin = None;
        let until = std::time::Instant::now() + limit;
        while std::time::Instant::now() < until {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One alternative of the schema. The thought is bounded, as plumb's own schema bounds it: a small
/// model at temperature 0 can otherwise ramble until `max_tokens` (it did, once llama.cpp was
/// built with AVX-512 and its sums came out a little different) and the grammar never completes.
fn tool(name: &str, arguments: Value) -> Value {
    json!({"type": "object", "properties": {"thought": {"type": "string", "maxLength": 120}, "tool": {"const": name},
        "arguments": arguments}, "required": ["thought", "tool", "arguments"]})
}

fn tool_schema() -> Value {
    json!({"oneOf": [
        tool("read_file", json!({"type": "object", "properties": {"path": {"type": "string"},
            "start_line": {"type": "integer"}}, "required": ["path"]})),
        tool("run_command", json!({"type": "object", "properties": {"command": {"type": "string"}},
            "required": ["command"]})),
        tool("finish", json!({"type": "object", "properties": {"summary": {"type": "string"}},
            "required": ["summary"]})),
    ]})
}

/// Whether `text` is a JSON object matching one alternative of [`tool_schema`].
fn matches_tool_schema(text: &str) -> bool {
    let Ok(Value::Object(reply)) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    let (Some(Value::String(_)), Some(Value::String(tool)), Some(Value::Object(arguments))) = (
        reply.get("thought"),
        reply.get("tool"),
        reply.get("arguments"),
    ) else {
        return false;
    };
    let string = |key: &str| arguments.get(key).is_some_and(Value::is_string);
    match tool.as_str() {
        "read_file" => string("path") && arguments.get("start_line").is_none_or(Value::is_i64),
        "run_command" => string("command"),
        "finish" => string("summary"),
        _ => false,
    }
}

const SYSTEM: &str = "<|im_start|>system\nYou are a coding agent. Answer with one JSON object: \
{\"thought\": \"<a few words>\", \"tool\": \"<tool>\", \"arguments\": {...}}. Tools: read_file(path, start_line), \
run_command(command), finish(summary).<|im_end|>\n";

/// The system turn, one user turn, and the start of the assistant's reply.
fn first_prompt() -> String {
    format!(
        "{SYSTEM}<|im_start|>user\nThe tests in tests/test_math.py fail. Read src/math.py first.<|im_end|>\n\
         <|im_start|>assistant\n"
    )
}

/// Keeps the fields of a reply that the test can predict.
fn outline(reply: &Value) -> Value {
    match reply.get("error") {
        Some(_) => json!({"id": reply["id"], "kind": reply["kind"]}),
        None => json!({"id": reply["id"], "finish": reply["finish"]}),
    }
}

#[test]
fn serves_requests_over_json_lines() {
    let mut server = Server::with_test_model(&[]);

    let ready = server.next();
    let warm = server.ask(&json!({"id": 1, "prompt": SYSTEM, "max_tokens": 0}));
    let prompt = first_prompt();
    let call = server.ask(
        &json!({"id": 2, "prompt": prompt, "json_schema": tool_schema(), "max_tokens": 200,
        "temperature": 0.0}),
    );
    let call_text = call["text"].as_str().unwrap_or_default().to_owned();
    let next_prompt = format!(
        "{prompt}{call_text}<|im_end|>\n<|im_start|>user\nTool result:\ndef add(a, b):\n    return a - b\n\
         <|im_end|>\n<|im_start|>assistant\n"
    );
    let follow_up =
        server.ask(&json!({"id": 3, "prompt": next_prompt, "max_tokens": 4, "temperature": 0.0}));
    let too_long = server.ask(&json!({"id": 4, "prompt": "word ".repeat(3000), "max_tokens": 16}));
    server.send_line("this is not json");
    let garbage = server.next();
    let bad_field = server.ask(&json!({"id": 6, "prompt": "hi", "max_token": 3}));
    let bad_schema =
        server.ask(&json!({"id": 7, "prompt": "hi", "json_schema": {"$ref": "#/nowhere"}}));
    let still_serving = server.ask(&json!({"id": 8, "prompt": next_prompt, "max_tokens": 2}));
    let exit_code = server.finish();

    let as_u64 = |reply: &Value, key: &str| reply[key].as_u64().unwrap_or(u64::MAX);
    let actual = json!({
        "ready": {"event": ready["event"], "n_ctx": ready["n_ctx"], "model": ready["model"]},
        "warm": {"text": warm["text"], "output_tokens": warm["output_tokens"], "finish": warm["finish"]},
        "call": outline(&call),
        "call_matches_schema": matches_tool_schema(&call_text),
        "call_reuses_warm_prompt": as_u64(&call, "cached_tokens") == as_u64(&warm, "prompt_tokens"),
        "follow_up": outline(&follow_up),
        "follow_up_reuses_previous_round":
            as_u64(&follow_up, "cached_tokens") == as_u64(&call, "prompt_tokens") + as_u64(&call, "output_tokens"),
        "too_long": outline(&too_long),
        "too_long_names_both_numbers": too_long["error"].as_str().is_some_and(|e| e.contains("max_tokens is 16")
            && e.contains("2048 tokens")),
        "garbage": outline(&garbage),
        "bad_field": outline(&bad_field),
        "bad_schema": outline(&bad_schema),
        "still_serving": {"id": still_serving["id"], "output_tokens": still_serving["output_tokens"]},
        "exit_code": exit_code,
    });

    let expected = json!({
        "ready": {"event": "ready", "n_ctx": 2048, "model": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"},
        "warm": {"text": "", "output_tokens": 0, "finish": "length"},
        "call": {"id": 2, "finish": "grammar"},
        "call_matches_schema": true,
        "call_reuses_warm_prompt": true,
        "follow_up": {"id": 3, "finish": "length"},
        "follow_up_reuses_previous_round": true,
        "too_long": {"id": 4, "kind": "context_window_exceeded"},
        "too_long_names_both_numbers": true,
        "garbage": {"id": null, "kind": "bad_request"},
        "bad_field": {"id": 6, "kind": "bad_request"},
        "bad_schema": {"id": 7, "kind": "bad_request"},
        "still_serving": {"id": 8, "output_tokens": 2},
        "exit_code": 0,
    });
    assert_eq!(actual, expected, "call text: {call_text}");
}

#[test]
fn a_missing_model_file_is_one_error_line_and_exit_2() {
    let server = Server::start(&["--model", "/nonexistent/model.gguf"]);

    let line = server.next();
    let exit_code = server.finish();

    let expected = json!({"event": "error", "message": "The model file /nonexistent/model.gguf does not exist. \
        Pass --model with the path of a GGUF file (`plumb models fetch 0.5b` downloads one)."});
    assert_eq!((line, exit_code), (expected, Some(2)));
}

/// The folder a test keeps prompt states in, empty at the start.
fn state_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("plumb-llm-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn state_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.map_while(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// Starts a server with `dir` for states, warms `SYSTEM` with `persist`, asks for one greedy call, and returns
/// the warm reply, the call's text and the exit code.
fn warm_and_call(dir: &std::path::Path) -> (Value, String, Option<i32>) {
    let mut server = Server::with_test_model(&["--state-dir", dir.to_str().expect("utf-8 path")]);
    server.next();
    let warm = server.ask(&json!({"id": 1, "prompt": SYSTEM, "max_tokens": 0, "persist": true}));
    let prompt = first_prompt();
    let call = server.ask(
        &json!({"id": 2, "prompt": prompt, "json_schema": tool_schema(), "max_tokens": 200, "temperature": 0.0}),
    );
    (
        warm,
        call["text"].as_str().unwrap_or_default().to_owned(),
        server.finish(),
    )
}

#[test]
fn a_persisted_prompt_state_is_loaded_by_the_next_process_and_a_broken_one_replaced() {
    let dir = state_dir("persist");

    let (first_warm, first_call, first_exit) = warm_and_call(&dir);
    let saved = state_files(&dir);
    let (second_warm, second_call, second_exit) = warm_and_call(&dir);
    // A state file cut short must not be trusted: it is evaluated again and written anew.
    let saved_len = saved
        .first()
        .and_then(|path| std::fs::metadata(path).ok())
        .map_or(0, |m| m.len());
    if let Some(path) = saved.first() {
        std::fs::write(path, b"GGSQ not a state").expect("overwrite the state");
    }
    let (third_warm, third_call, third_exit) = warm_and_call(&dir);
    let rewritten_len = saved
        .first()
        .and_then(|path| std::fs::metadata(path).ok())
        .map_or(0, |m| m.len());

    let counts = |warm: &Value| json!([warm["prompt_tokens"], warm["cached_tokens"]]);
    let prompt_tokens = first_warm["prompt_tokens"].clone();
    let actual = json!({
        "state_files": saved.len(),
        "first": counts(&first_warm),
        "second": counts(&second_warm),
        "third": counts(&third_warm),
        "same_call_after_loading": second_call == first_call,
        "same_call_after_replacing": third_call == first_call,
        "rewritten_whole": rewritten_len == saved_len,
        "exits": [first_exit, second_exit, third_exit],
    });
    let expected = json!({
        "state_files": 1,
        "first": [prompt_tokens, 0],
        "second": [prompt_tokens, prompt_tokens],
        "third": [prompt_tokens, 0],
        "same_call_after_loading": true,
        "same_call_after_replacing": true,
        "rewritten_whole": true,
        "exits": [0, 0, 0],
    });
    assert_eq!(
        actual, expected,
        "first call: {first_call}\nsecond call: {second_call}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// plumb closing stdin (or dying) while a reply is being generated: the runner drops the request and exits at
/// once rather than keeping the cores busy for a reply nobody reads. The schema makes the reply a string of at
/// least 1,900 characters (llama.cpp refuses a repetition of 2,000), so the model cannot end it early.
#[test]
fn closing_stdin_mid_generation_ends_the_runner_at_once() {
    let mut server = Server::with_test_model(&[]);
    server.next();
    let request = json!({"id": 1, "prompt": first_prompt(), "max_tokens": 1900, "temperature": 0.0,
        "json_schema": {"type": "string", "minLength": 1900}});

    server.send_line(&request.to_string());
    // Past the prompt: the short prompt takes well under a second, the reply at least half a minute.
    std::thread::sleep(Duration::from_secs(2));
    let closed = std::time::Instant::now();
    let exit_code = server.finish_within(Duration::from_secs(5));
    let waited = closed.elapsed();
    let reply = server.lines.try_recv().ok();

    assert_eq!(
        (exit_code, reply),
        (Some(0), None),
        "the runner took {waited:?} after stdin closed"
    );
}

/// A prompt whose reply copies text it was shown: a function to write out again with one change.
fn copy_prompt() -> String {
    let listing: String = (1..=12)
        .map(|n| format!("    total = total + rate * {n}  # step {n} of the running total\n"))
        .collect();
    format!(
        "<|im_start|>system\nYou rewrite Python functions.<|im_end|>\n<|im_start|>user\nHere is a function:\n\
         def running_total(rate):\n    total = 0\n{listing}    return total\n\nWrite the function again exactly, \
         but name it running_sum.<|im_end|>\n<|im_start|>assistant\ndef running_sum(rate):\n"
    )
}

#[test]
fn drafting_does_not_change_a_greedy_reply() {
    let mut server = Server::with_test_model(&[]);
    let _ready = server.next();
    let prompt = copy_prompt();
    let ask = |server: &mut Server, id: u64, draft: u64| {
        server.ask(
            &json!({"id": id, "prompt": prompt, "max_tokens": 160, "temperature": 0.0,
            "draft": draft, "stop": ["<|im_end|>", "\n\n"]}),
        )
    };
    let plain = ask(&mut server, 1, 0);
    let drafted = ask(&mut server, 2, 8);
    let plain_again = ask(&mut server, 3, 0);
    let exit_code = server.finish();

    let count = |reply: &Value, key: &str| reply[key].as_u64().unwrap_or(0);
    assert_eq!(
        json!({"text": drafted["text"], "finish": drafted["finish"]}),
        json!({"text": plain["text"], "finish": plain["finish"]}),
        "drafting changed the reply"
    );
    assert_eq!(
        plain_again["text"], plain["text"],
        "a drafted request left the cache changed"
    );
    assert_eq!(count(&plain, "drafted"), 0);
    assert!(
        count(&drafted, "accepted") > 0,
        "no draft was kept, so the comparison shows nothing: {drafted}"
    );
    assert!(
        count(&drafted, "decodes") < count(&plain, "decodes"),
        "kept drafts save decodes: {drafted} against {plain}"
    );
    assert_eq!(exit_code, Some(0));
}

#[test]
fn several_replies_come_from_one_request_and_the_first_stays_cached() {
    let mut server = Server::with_test_model(&["--parallel", "3"]);
    let _ready = server.next();
    let prompt = first_prompt();
    let many = server.ask(
        &json!({"id": 1, "prompt": prompt, "json_schema": tool_schema(), "max_tokens": 200,
        "temperature": 1.0, "n": 3, "draft": 4}),
    );
    let choices = many["choices"].as_array().cloned().unwrap_or_default();
    let first_text = choices
        .first()
        .and_then(|c| c["text"].as_str())
        .unwrap_or_default()
        .to_owned();
    let next_prompt = format!("{prompt}{first_text}<|im_end|>\n<|im_start|>user\nok<|im_end|>\n");
    let follow_up = server.ask(&json!({"id": 2, "prompt": next_prompt, "max_tokens": 2}));
    let too_many = server.ask(&json!({"id": 3, "prompt": prompt, "n": 4}));
    let exit_code = server.finish();

    let as_u64 = |reply: &Value, key: &str| reply[key].as_u64().unwrap_or(u64::MAX);
    let per_choice: Vec<Value> = choices
        .iter()
        .map(|c| {
            json!({"finish": c["finish"], "matches": matches_tool_schema(c["text"].as_str().unwrap_or_default())})
        })
        .collect();
    let tokens: u64 = choices.iter().map(|c| as_u64(c, "output_tokens")).sum();
    let actual = json!({
        "choices": per_choice,
        "text_is_the_first": many["text"] == json!(first_text),
        "output_tokens_add_up": as_u64(&many, "output_tokens") == tokens,
        "follow_up_reuses_the_first_choice":
            as_u64(&follow_up, "cached_tokens") == as_u64(&many, "prompt_tokens") + as_u64(&choices[0], "output_tokens"),
        "too_many": outline(&too_many),
        "exit_code": exit_code,
    });
    let grammar = json!({"finish": "grammar", "matches": true});
    let expected = json!({
        "choices": [grammar, grammar, grammar],
        "text_is_the_first": true,
        "output_tokens_add_up": true,
        "follow_up_reuses_the_first_choice": true,
        "too_many": {"id": 3, "kind": "bad_request"},
        "exit_code": 0,
    });
    assert_eq!(actual, expected, "{many}");
}

/// plumb counts the embedded model's tokens itself, from the vocabulary in the model file's
/// header (`plumb_model::tokenizer`), to fit the repo map to its budget without the runner. The
/// count must be llama.cpp's: each text is sent as a prompt (evaluated, nothing generated) and
/// the runner's `prompt_tokens` compared. Each text starts with a character no earlier one
/// starts with, so none reuses another's cached tokens.
#[test]
fn the_vocabulary_read_from_the_model_file_counts_as_llama_cpp_does() {
    let count = plumb_model::tokenizer::counter(
        plumb_model::tokenizer::gguf_tokenizer(&model_path()).expect("the test model's tokenizer"),
    );
    let texts = [
        "The invoice charges GST on the full price before the discount; it should be Rs 162, not Rs 180.",
        "def line_totals(item: LineItem) -> LineTotals:\n    \"\"\"Totals of one line.\"\"\"\n    gross = item.price * item.quantity\n    tax = compute_gst(gross, rate)\n\n\n    return LineTotals(gross, tax)\n",
        "pub fn add(a: i32, b: i32) -> i32 {\n\ta + b // wrapping? no.\n}\n\n#[cfg(test)]\nmod tests {}\n",
        "{\"thought\": \"read it\", \"tool\": \"read_file\", \"arguments\": {\"path\": \"src/lib.rs\", \"start_line\": 120}}",
        "12345 + 3.14159 = 12348.14159; 1,000,000 items at 0.5% each, 2026-12-07T17:02:03Z",
        "naïve café — 漢字と かな, Ωmega, emoji 🙂👍🏽 and tabs\t\tend",
        "    \n\n   \t\n  indented after blank lines\r\nwith CRLF\r\n",
        "billing/\n  invoice_totals.py: class InvoiceCalculator (12) { def total (15) }, def compute_totals (40)\n  tax.py: def apply_gst (3)\nREADME.md\n… 12 more files not shown; use list_files PATH for a folder.\n",
        "E       AssertionError: assert Decimal('900.00') == Decimal('820.00')\nFAILED tests/test_invoice_totals.py::test_new - AssertionError",
        "Üñíçødé at the start, then ASCII: don't, can't, we're, I'll, they've, she'd.",
    ];
    let mut server = Server::with_test_model(&[]);
    let _ready = server.next();
    let mut compared = Vec::new();
    for (id, text) in texts.iter().enumerate() {
        let reply = server.ask(&json!({"id": id + 1, "prompt": text, "max_tokens": 0}));
        let llama = reply["prompt_tokens"]
            .as_u64()
            .unwrap_or_else(|| panic!("no prompt_tokens in {reply}"));
        compared.push((text.to_string(), llama as usize, count(text)));
    }
    let differ: Vec<_> = compared
        .iter()
        .filter(|(_, llama, plumb)| llama != plumb)
        .collect();
    assert!(
        differ.is_empty(),
        "llama.cpp's counts, then plumb's: {differ:#?}"
    );
}
