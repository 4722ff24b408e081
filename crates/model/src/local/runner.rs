//! The `plumb-llm` child process: llama.cpp with the model loaded, kept alive for the whole run so
//! its KV cache (the prompt prefix) carries over between rounds. plumb talks to it with JSON Lines
//! over stdin/stdout; no port is opened, and the child ends when plumb closes its stdin or dies:
//! dropping the [`Runner`] kills it, and if plumb itself is killed (`SIGKILL` included) the kernel
//! kills it too (`plumb_sandbox::die_with_parent`, and the runner asks for the same itself), while
//! its stdin closing makes it drop the request it is generating. Its log lines (its own and
//! llama.cpp's) reach plumb's stderr escaped for a person's screen, like everything plumb prints.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::ModelError;

/// How long loading the model may take before plumb gives up on the runner.
const LOAD_TIMEOUT: Duration = Duration::from_secs(300);

/// One generation request, as the runner reads it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RunnerRequest {
    pub id: u64,
    pub prompt: String,
    /// The reply's JSON schema, sent as the JSON text it is (its property order is the grammar's order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json_schema: Option<Box<serde_json::value::RawValue>>,
    pub max_tokens: u32,
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub min_p: f32,
    pub repeat_penalty: f32,
    pub seed: u32,
    /// Replies sampled side by side in one batch (see plumb-llm's `generate.rs`).
    pub n: u32,
    /// Draft tokens by prompt lookup per decode (0: plain decoding; the reply is the same).
    pub draft: u32,
    pub stop: Vec<String>,
    /// Keep the evaluated prompt on disk (the fixed system turn).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub persist: bool,
}

/// The runner's answer to one request.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct RunnerReply {
    #[serde(default)]
    pub id: Option<u64>,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub cached_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub finish: String,
    /// Every reply sampled (the first is `text`); fewer than asked when the window held fewer.
    #[serde(default)]
    pub choices: Vec<RunnerChoice>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
}

/// One of the replies of a request that asked for several.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct RunnerChoice {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub finish: String,
}

#[derive(Debug, Deserialize)]
struct Event {
    event: String,
    #[serde(default)]
    message: Option<String>,
}

/// A started runner.
pub(crate) struct Runner {
    // Held so the child is killed when the runner is dropped (`kill_on_drop`).
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Runner {
    /// Starts the runner on a model file and waits until the model is loaded. With `state_dir`,
    /// prompts sent with `persist` keep their evaluated state there; a request may ask for up to
    /// `parallel` replies at once.
    pub(crate) async fn start(
        binary: &Path,
        model: &Path,
        context: u32,
        threads: u32,
        parallel: u32,
        state_dir: Option<&Path>,
    ) -> Result<Runner, ModelError> {
        let mut command = Command::new(binary);
        command
            .arg("--model")
            .arg(model)
            .arg("--ctx")
            .arg(context.to_string())
            .arg("--threads")
            .arg(threads.to_string())
            .arg("--parallel")
            .arg(parallel.max(1).to_string());
        if let Some(dir) = state_dir {
            command.arg("--state-dir").arg(dir);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        plumb_sandbox::die_with_parent(command.as_std_mut());
        let mut child = command.spawn().map_err(|err| {
            ModelError::Service(format!(
                "could not start the local model runner {}: {err}",
                binary.display()
            ))
        })?;
        if let Some(log) = child.stderr.take() {
            tokio::spawn(forward_log(BufReader::new(log), |line| {
                eprintln!("{line}");
            }));
        }
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ModelError::Service(
                "the local model runner has no stdin/stdout pipes".into(),
            ));
        };
        let mut stdout = BufReader::new(stdout).lines();
        let ready = tokio::time::timeout(LOAD_TIMEOUT, stdout.next_line()).await;
        let line = match ready {
            Err(_) => {
                return Err(ModelError::Service(format!(
                    "the local model runner did not load {} within {} s",
                    model.display(),
                    LOAD_TIMEOUT.as_secs()
                )));
            }
            Ok(Err(err)) => {
                return Err(ModelError::Service(format!(
                    "could not read from the local model runner: {err}"
                )));
            }
            Ok(Ok(None)) => {
                return Err(ModelError::Service(format!(
                    "the local model runner exited while loading {} (its messages are above)",
                    model.display()
                )));
            }
            Ok(Ok(Some(line))) => line,
        };
        match serde_json::from_str::<Event>(&line) {
            Ok(event) if event.event == "ready" => Ok(Runner {
                _child: child,
                stdin,
                stdout,
            }),
            Ok(event) => Err(ModelError::Service(format!(
                "the local model runner could not load {}: {}",
                model.display(),
                event.message.unwrap_or(event.event)
            ))),
            Err(_) => Err(ModelError::Service(format!(
                "the local model runner said something unexpected: {line}"
            ))),
        }
    }

    /// Sends one request and waits for its reply. Replies to earlier requests that were abandoned
    /// (a cancelled round) are skipped by id.
    pub(crate) async fn request(
        &mut self,
        request: &RunnerRequest,
    ) -> Result<RunnerReply, ModelError> {
        let mut line = serde_json::to_string(request)
            .map_err(|err| ModelError::Service(format!("could not encode the request: {err}")))?;
        line.push('\n');
        let broken = |err: std::io::Error| {
            ModelError::Service(format!("the local model runner stopped: {err}"))
        };
        self.stdin
            .write_all(line.as_bytes())
            .await
            .map_err(broken)?;
        self.stdin.flush().await.map_err(broken)?;
        loop {
            let Some(line) = self.stdout.next_line().await.map_err(broken)? else {
                return Err(ModelError::Service(
                    "the local model runner exited in the middle of a request (its messages are above)"
                        .into(),
                ));
            };
            let reply: RunnerReply = serde_json::from_str(&line).map_err(|err| {
                ModelError::Service(format!(
                    "the local model runner sent a line plumb cannot read ({err}): {line}"
                ))
            })?;
            if reply.id.is_some_and(|id| id != request.id) {
                continue;
            }
            if let Some(error) = reply.error {
                return Err(match reply.kind.as_deref() {
                    Some("context_window_exceeded") => ModelError::ContextWindowExceeded(error),
                    _ => ModelError::Service(format!("the local model failed: {error}")),
                });
            }
            return Ok(reply);
        }
    }
}

/// Finds the `plumb-llm` binary: `$PLUMB_LLM_BIN`, next to the running executable (or one folder
/// up, for test binaries in `target/*/deps`), then `PATH`.
pub(crate) fn find_runner() -> Result<PathBuf, ModelError> {
    if let Some(path) = std::env::var_os("PLUMB_LLM_BIN") {
        let path = PathBuf::from(path);
        if path.is_file() {
            return Ok(path);
        }
        return Err(ModelError::BadSpec(format!(
            "PLUMB_LLM_BIN points at {}, which is not a file; unset it or build the runner with `cargo build --release -p plumb-llm`",
            path.display()
        )));
    }
    let name = "plumb-llm";
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        for candidate in [dir.join(name), dir.join("..").join(name)] {
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(ModelError::BadSpec(
        "the local model runner `plumb-llm` was not found next to plumb or on PATH; build it with `cargo build --release -p plumb-llm` (scripts/demo.sh does), or set PLUMB_LLM_BIN".into(),
    ))
}

/// Hands each line of the runner's log to `show`, escaped to one line
/// (`plumb_protocol::display`), until the runner closes it. Read as bytes, so a line that is not
/// UTF-8 is shown lossily instead of ending the reading (which would leave the runner writing to
/// a closed pipe).
async fn forward_log(mut log: impl AsyncBufRead + Unpin, mut show: impl FnMut(&str)) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match log.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.strip_suffix('\n').unwrap_or(&text);
                show(&plumb_protocol::display::for_screen_line(text));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_runners_log_is_shown_escaped_line_by_line() {
        let log: &[u8] = b"loaded\n\x1b]0;owned\x07 \xff\nlast";
        let mut shown = Vec::new();

        forward_log(log, |line| shown.push(line.to_string())).await;

        assert_eq!(
            shown,
            ["loaded", "<U+001B>]0;owned<U+0007> \u{fffd}", "last"]
        );
    }
}
