//! What the model sees, through the real loop, tools, helpers and test runners (sandbox `none`):
//! a one-file task per language (Python with pytest, Rust with cargo, JavaScript with
//! `node --test`; `tasks.rs`) driven for 12 rounds by a scripted model whose replies look like
//! the embedded model's (a thought, then reads, test runs that fail, `replace_function`s that get
//! it wrong twice, a repeated view of the same file). Every request is rendered as the embedded
//! model sees it (`plumb_model::local_prompt_text`: ChatML, tools described, the history
//! narrated).
//!
//! Two uses: the bounded prompt (issue 36, part 3: the Python task's prompt at round 10 within
//! its budget, below), and the snapshots of rounds 1 and 12 of each task (`snapshots.rs`), so
//! any change to what the model reads shows in review.
//!
//! The token count here is an estimate, [`estimated_tokens`]: one token per three bytes, rounded
//! up. On these prompts Qwen2.5's tokenizer gave 3.3–4.0 bytes a token, so bytes/3 overstates the
//! count (by 10–32 %, measured with `plumb-llm` in `docs/prompt.md`). Set `PLUMB_PROMPT_DUMP=DIR`
//! to write each round's prompt of the Python task to `DIR/round-N.txt` for counting with the
//! real tokenizer (`scripts/prompt_tokens.py`).

mod snapshots;
mod tasks;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use plumb_config::Config;
use plumb_model::{ModelClient, ModelError, ModelRequest, ScriptModel};
use plumb_protocol::{Event, ModelReply, PromptSize, SandboxKind};
use plumb_sandbox::{NoSandbox, Toolchains};

use plumb_context::size::estimated_tokens;

use crate::{RunSpec, read_journal};
use tasks::Task;

/// The prompt budget at round 10 of a one-file task (issue 36).
const ROUND_10_BUDGET: u64 = 6000;

/// A model that plays a script and keeps every request it was sent.
struct Recording {
    script: ScriptModel,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
}

#[async_trait]
impl ModelClient for Recording {
    fn name(&self) -> String {
        self.script.name()
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        self.requests
            .lock()
            .map_err(|_| ModelError::Service("the recording lock was poisoned".into()))?
            .push(request.clone());
        self.script.complete(request).await
    }
}

/// Each request's prompt as the embedded model sees it, and the journal's lines, of one run.
struct Measured {
    prompts: Vec<String>,
    journal: Vec<plumb_protocol::JournalLine>,
    /// The run's scratch folder, gone by now (it shows in some runners' output).
    scratch: String,
}

async fn run_task(task: &Task) -> Measured {
    let scratch = tempfile::tempdir().unwrap();
    let run_dir = scratch.path().join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let model = Recording {
        script: ScriptModel::from_turns("local".into(), (task.script)()),
        requests: Arc::clone(&requests),
    };
    let spec = RunSpec {
        repo_label: task.name.into(),
        repo: task.fixture(),
        ticket: task.ticket.into(),
        model: Box::new(model),
        reviewer: None,
        config: Config {
            sandbox: SandboxKind::None,
            ..Config::default()
        },
        test_command: None,
        // The host's toolchains as `plumb fix` gives them (cargo and node need theirs).
        sandbox: Box::new(
            NoSandbox::new(run_dir.join("sandbox"))
                .with_toolchains(Toolchains::from_process(run_dir.join("toolcache"))),
        ),
        run_id: "prompt-bench".into(),
        run_dir: run_dir.clone(),
        journal_path: None,
        inbox: crate::input::channel().1,
        observer: None,
        expect_base_tree: None,
        fail_to_pass: Vec::new(),
        settings: plumb_protocol::Provenance::default(),
        setup_cache: None,
    };
    let report = crate::run(spec).await.unwrap();
    let journal = read_journal(Path::new(&report.journal)).unwrap();
    // The fixer's requests: the reviewer's (after `done`) offers no `done`.
    let prompts = requests
        .lock()
        .unwrap()
        .iter()
        .filter(|request| request.tools.iter().any(|tool| tool.name == "done"))
        .map(|request| plumb_model::local_prompt_text(request, true))
        .collect();
    Measured {
        prompts,
        journal,
        scratch: scratch.path().to_string_lossy().into_owned(),
    }
}

fn dump(prompts: &[String]) {
    let Some(dir) = std::env::var_os("PLUMB_PROMPT_DUMP") else {
        return;
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (index, prompt) in prompts.iter().enumerate() {
        std::fs::write(dir.join(format!("round-{}.txt", index + 1)), prompt).unwrap();
    }
}

#[tokio::test]
async fn the_prompt_of_round_10_stays_under_6k_tokens() {
    let task = tasks::python();
    let measured = run_task(&task).await;
    dump(&measured.prompts);
    let sizes: Vec<u64> = measured
        .prompts
        .iter()
        .map(|p| estimated_tokens(p))
        .collect();
    for (round, size) in sizes.iter().enumerate() {
        eprintln!(
            "round {:>2}: {:>6} bytes, ~{size} tokens (bytes/3)",
            round + 1,
            measured.prompts[round].len()
        );
    }
    assert!(
        sizes.len() >= 10,
        "the run ended before round 10: {} requests",
        sizes.len()
    );
    let round_10 = sizes[9];
    assert!(
        round_10 <= ROUND_10_BUDGET,
        "the prompt of round 10 is ~{round_10} tokens (bytes/3), over the budget of {ROUND_10_BUDGET}"
    );
    for (round, prompt) in measured.prompts.iter().enumerate() {
        let (_, user) = prompt.split_once("<|im_start|>user\n").unwrap();
        assert!(
            user.starts_with(&format!("# Ticket\n\n{}\n", task.ticket)),
            "round {}: the ticket is not whole on top",
            round + 1
        );
    }
    // Each fixer request's size is in the journal, part by part.
    let sizes: Vec<&PromptSize> = measured
        .journal
        .iter()
        .filter_map(|line| match &line.event {
            Event::ModelRequest {
                size: Some(size), ..
            } => Some(size),
            _ => None,
        })
        .collect();
    // (A small model's review is not asked for, so these are the fixer's requests alone.)
    assert!(sizes.len() >= measured.prompts.len(), "{sizes:?}");
    for (round, size) in sizes.iter().take(measured.prompts.len()).enumerate() {
        eprintln!("round {:>2} journal: {size:?}", round + 1);
        assert_eq!(size.counted, plumb_context::size::ESTIMATE);
        assert!(
            size.ticket > 0 && size.rules > 0 && size.tools > 0,
            "{size:?}"
        );
    }
}
