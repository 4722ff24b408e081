//! Filling the disk: what a repository or the model writes must not grow plumb's own files past
//! what happened. A 10 MB `create_file` is journalled once (not once per later request), and
//! the journal still rebuilds every request and replays to the same patch; a 2 GB sparse file
//! in the repository is left out of the copy with a sentence; finished run folders are pruned
//! by `runs.keep`, never one that is still going.

use std::collections::BTreeMap;
use std::path::Path;

use plumb_protocol::{Event, Message, Outcome, Role, ToolCall};
use plumb_test_support::Script;
use plumb_test_support::mock_http::{MockResponse, MockServer, Piece};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Outside, repo_with};
use crate::suite::common::{journal_events, plumb, plumb_command, report, requests_of, stderr};

/// One turn as an OpenAI chat-completions stream: the text, each call's arguments in pieces of
/// at most 32 KiB (a provider streams them in small pieces), usage, `[DONE]`.
fn openai_body(content: &str, calls: &[(String, Value)], round: usize) -> Vec<u8> {
    let chunk = |delta: Value, finish: Value| {
        let data = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {data}\n\n")
    };
    let mut body = chunk(
        json!({"role": "assistant", "content": content}),
        Value::Null,
    );
    for (index, (name, arguments)) in calls.iter().enumerate() {
        body.push_str(&chunk(
            json!({"tool_calls": [{"index": index, "id": format!("call_{round}_{index}"), "type": "function", "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
        let chars: Vec<char> = arguments.to_string().chars().collect();
        for piece in chars.chunks(32 << 10) {
            let piece: String = piece.iter().collect();
            body.push_str(&chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    body.push_str(&chunk(json!({}), json!("tool_calls")));
    let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 2000, "completion_tokens": 100}});
    body.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    body.into_bytes()
}

/// A message as the OpenAI wire format carries it, with each call's arguments parsed back into
/// JSON, so the provider's view and the journal's can be compared.
fn wire(message: &Message) -> Value {
    match message.role {
        Role::System => json!({"role": "system", "content": message.content}),
        Role::User => json!({"role": "user", "content": message.content}),
        Role::Assistant => {
            let mut value = json!({"role": "assistant", "content": message.content});
            if !message.tool_calls.is_empty() {
                let calls: Vec<Value> = message
                    .tool_calls
                    .iter()
                    .map(|call: &ToolCall| json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}))
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

/// The provider's messages with every call's arguments text parsed.
fn provider_messages(body: &Value) -> Vec<Value> {
    let mut messages = body["messages"].as_array().unwrap().clone();
    for message in &mut messages {
        let calls = message.get_mut("tool_calls").and_then(Value::as_array_mut);
        for call in calls.into_iter().flatten() {
            let text = call["function"]["arguments"].as_str().unwrap().to_string();
            call["function"]["arguments"] = serde_json::from_str(&text).unwrap();
        }
    }
    messages
}

/// A short, comparable line per message: role, length and a hash of the whole of it (the
/// messages hold 10 MB, too much for a readable diff).
fn fingerprint(messages: &[Value]) -> Vec<String> {
    use std::hash::{Hash, Hasher};
    messages
        .iter()
        .map(|m| {
            let text = m.to_string();
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            text.hash(&mut hasher);
            format!("{} {} {:016x}", m["role"], text.len(), hasher.finish())
        })
        .collect()
}

/// Ten MiB of numbered lines.
fn ten_megabytes() -> String {
    let mut text = String::with_capacity(10 << 20);
    let mut n = 0u64;
    while text.len() < 10 << 20 {
        text.push_str(&format!("{n:08}\n"));
        n += 1;
    }
    text
}

#[test]
fn a_ten_megabyte_create_file_is_journalled_once_and_replays_exactly() {
    let outside = Outside::new();
    let repo = repo_with(&[], &[]);
    let repo_before = plumb_test_support::tree_digest(repo.path());
    let home = tempfile::tempdir().unwrap();
    let big = ten_megabytes();
    // The 10 MB file first, then BILL-412 fixed as the example's script does (its test runs left
    // to the checks at `done`): six rounds, each request after the first carrying the 10 MB call
    // in its history.
    let mut turns = vec![(
        "Writing the data file first.".to_string(),
        vec![(
            "create_file".to_string(),
            json!({"path": "data/big.txt", "content": big}),
        )],
    )];
    let script = plumb_test_support::billing_example().join("bill-412.script.jsonl");
    for turn in plumb_model::parse_script(&std::fs::read_to_string(script).unwrap()).unwrap() {
        if turn.tool_calls.iter().any(|c| c.name == "run_tests") {
            continue;
        }
        let calls = turn
            .tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments.clone()))
            .collect();
        turns.push((turn.content, calls));
    }
    // The reviewer (the same model) reads the verified change; its request is journalled too.
    turns.push((
        String::new(),
        vec![(
            "submit_review".to_string(),
            json!({"verdict": "approve", "summary": "GST after the discount.", "notes": []}),
        )],
    ));
    let responses = turns
        .iter()
        .enumerate()
        .map(|(i, (content, calls))| MockResponse::sse(openai_body(content, calls, i + 1)))
        .collect();
    let server = MockServer::start(responses);
    let model = format!("openai-compat:{}/v1#small", server.url());
    let repo_arg = repo.path().display().to_string();
    let ticket = repo.path().join("BILL-412.md").display().to_string();
    let output = plumb(
        home.path(),
        &[
            "fix",
            "--repo",
            &repo_arg,
            "--ticket",
            &ticket,
            "--model",
            &model,
            "--json",
            "--sandbox",
            "none",
        ],
    );
    let first = report(&output);
    assert_eq!(first.outcome, Outcome::Success, "{}", stderr(&output));
    assert!(first.patch.contains("+++ b/data/big.txt"));

    // The journal holds the reply with the 10 MB call once, in full (the replay needs it), and
    // every other text at most ENTRY_CAP_BYTES: together well under the reply plus 1 MiB.
    let journal_bytes = std::fs::metadata(&first.journal).unwrap().len();
    let bound = serde_json::to_string(&big).unwrap().len() as u64 + (1 << 20);
    assert!(
        journal_bytes < bound,
        "the journal is {journal_bytes} bytes, over {bound}"
    );

    // Every request rebuilt from the journal is what the provider received, none cut.
    let rebuilt = requests_of(&journal_events(&first));
    let actual: Vec<(u64, Vec<String>)> = rebuilt
        .iter()
        .map(|r| {
            let messages: Vec<Value> = r.messages.iter().map(wire).collect();
            (r.left_out, fingerprint(&messages))
        })
        .collect();
    let expected: Vec<(u64, Vec<String>)> = server
        .requests()
        .iter()
        .map(|r| (0, fingerprint(&provider_messages(&r.json()))))
        .collect();
    assert_eq!(actual, expected);

    // The replay reaches the same patch, byte for byte.
    let replay = plumb(home.path(), &["replay", &first.journal, "--json"]);
    let replayed = report(&replay);
    assert_eq!(
        (
            replay.status.code(),
            replayed.patch_sha256 == first.patch_sha256
        ),
        (Some(0), true),
        "{}",
        stderr(&replay)
    );
    assert_eq!(plumb_test_support::tree_digest(repo.path()), repo_before);
    outside.assert_untouched(home.path(), &output);
}

/// The digest of every file of `repo` but those in the folder `skip` (too large to hash), and
/// `git status` there: what the user's repository holds, for a before/after check.
fn repo_state(repo: &Path, skip: &str) -> BTreeMap<String, String> {
    let mut state = BTreeMap::new();
    for entry in std::fs::read_dir(repo).unwrap().flatten() {
        let name = entry.file_name().into_string().unwrap();
        let path = entry.path();
        if name == skip || name == ".git" {
            continue;
        } else if path.is_dir() {
            for (file, digest) in plumb_test_support::tree_digest(&path) {
                state.insert(format!("{name}/{file}"), digest);
            }
        } else {
            state.insert(name, format!("{:?}", std::fs::read(&path).unwrap()));
        }
    }
    let status = plumb_test_support::git(repo, &["status", "--porcelain"]);
    state.insert("(git status)".to_string(), status);
    state
}

/// The length of every file under `dir` (not following links), added up.
fn folder_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            total += folder_bytes(&entry.path());
        } else if kind.is_file() {
            total += entry.metadata().unwrap().len();
        }
    }
    total
}

/// `plumb fix` of BILL-412 in `repo` with `script`, without a sandbox, and `extra` flags.
fn fix(repo: &Path, home: &Path, script: Script, extra: &[&str]) -> std::process::Output {
    let path = home.join("script.jsonl");
    script.write(&path);
    let mut command = fix_command(repo, home, &format!("script:{}", path.display()));
    command.args(extra).output().unwrap()
}

fn fix_command(repo: &Path, home: &Path, model: &str) -> std::process::Command {
    let mut command = plumb_command(home);
    command.args(["fix", "--repo"]).arg(repo).arg("--ticket");
    command.arg(repo.join("BILL-412.md"));
    command.args(["--model", model, "--json", "--sandbox", "none"]);
    command
}

#[test]
fn a_two_gigabyte_sparse_file_is_left_out_of_the_copy_with_a_sentence() {
    let outside = Outside::new();
    let repo = repo_with(&[], &[]);
    // Untracked, as a build or a test leaves it: the copy takes the tree as it stands.
    std::fs::create_dir(repo.path().join("data")).unwrap();
    let image = repo.path().join("data/disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let image_before = std::fs::metadata(&image).unwrap();
    let repo_before = repo_state(repo.path(), "data");
    let home = tempfile::tempdir().unwrap();

    let output = fix(
        repo.path(),
        home.path(),
        Script::new().tool("read_file", json!({"path": "data/disk.img"})),
        &[],
    );

    let report = report(&output);
    let sentence = "data/disk.img was left out of the workspace: it is 2.0 GiB (0 bytes of it on disk: a \
                    sparse file), over limits.max_file_bytes (50.0 MiB); the agent does not see it and your \
                    repository still has it. Raise limits.max_file_bytes if the fix needs it";
    let events = journal_events(&report);
    let warned = events
        .iter()
        .any(|e| matches!(e, Event::Warning { message } if message == sentence));
    let read = events.iter().find_map(|e| match e {
        Event::ToolFinished { name, ok, .. } if name == "read_file" => Some(*ok),
        _ => None,
    });
    let run_bytes = folder_bytes(Path::new(&report.workspace));
    let image_after = std::fs::metadata(&image).unwrap();
    let actual = (
        warned,
        stderr(&output).contains(&format!("plumb: WARNING: {sentence}")),
        read,
        run_bytes < 50 << 20,
        (image_after.len(), image_after.modified().unwrap()),
        repo_state(repo.path(), "data") == repo_before,
    );
    let expected = (
        true,
        true,
        Some(false),
        true,
        (image_before.len(), image_before.modified().unwrap()),
        true,
    );
    assert_eq!(
        actual,
        expected,
        "run folder {run_bytes} bytes; {}",
        stderr(&output)
    );
    outside.assert_untouched(home.path(), &output);
}

/// The run folders under `home/runs`: each name with what it still holds ("workspace" when the
/// copy is there, else its files).
fn run_folders(home: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(home.join("runs"))
        .unwrap()
        .flatten()
        .map(|entry| {
            let name = entry.file_name().into_string().unwrap();
            let kind = entry.file_type().unwrap();
            let what = if kind.is_symlink() {
                "link".to_string()
            } else if entry.path().join("workspace").is_dir() {
                "workspace".to_string()
            } else {
                let mut files: Vec<String> = std::fs::read_dir(entry.path())
                    .unwrap()
                    .flatten()
                    .map(|f| f.file_name().into_string().unwrap())
                    .collect();
                files.sort();
                files.join(" ")
            };
            (name, what)
        })
        .collect()
}

#[test]
fn runs_keep_prunes_finished_run_folders_but_never_one_still_going() {
    let outside = Outside::new();
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    // Three finished runs, kept whole while they were made.
    let mut old = Vec::new();
    for _ in 0..3 {
        let output = fix(
            repo.path(),
            home.path(),
            Script::new(),
            &["-c", "runs.keep=0"],
        );
        old.push(report(&output).run_id);
    }
    // A link named like a run, to a folder outside: never followed, never removed.
    let link = "r1-000000";
    std::os::unix::fs::symlink(outside.path(), home.path().join("runs").join(link)).unwrap();
    // Another plumb, still going: its model never answers.
    let server = MockServer::start(vec![MockResponse::sse_pieces(vec![Piece::Stall])]);
    let mut going = fix_command(
        repo.path(),
        home.path(),
        &format!("openai-compat:{}/v1#small", server.url()),
    )
    .args([
        "-c",
        "model_service.idle_timeout_ms=600000",
        "-c",
        "model_service.max_attempts=1",
    ])
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let waited = std::time::Instant::now();
    while server.requests().is_empty() {
        assert!(
            waited.elapsed().as_secs() < 300,
            "the other plumb never asked its model"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let going_id = run_folders(home.path())
        .into_keys()
        .find(|name| !old.contains(name) && name != link)
        .unwrap();

    let output = fix(
        repo.path(),
        home.path(),
        Script::new(),
        &["-c", "runs.keep=2", "-c", "runs.keep_workspaces=1"],
    );
    let current = report(&output).run_id;
    let actual = run_folders(home.path());
    going.kill().unwrap();
    going.wait().unwrap();

    // The run just ended and the newest old one are kept, the old one without its workspace; the
    // two oldest are gone; the run still going is untouched.
    let expected: BTreeMap<String, String> = [
        (current, "workspace"),
        (old[2].clone(), "journal.jsonl report.json run.lock"),
        (going_id, "workspace"),
        (link.to_string(), "link"),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.to_string()))
    .collect();
    assert_eq!(actual, expected, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("plumb: pruned old runs: 2 folders removed (runs.keep = 2), 1 kept without their workspace (runs.keep_workspaces = 1)"),
        "{}",
        stderr(&output)
    );
    outside.assert_untouched(home.path(), &output);
}
