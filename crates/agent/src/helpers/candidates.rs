//! The candidates helper (`helpers.candidates`, with guided phases; the model must be able to
//! sample again): when the model's reply
//! fixes the code and that fix does not do what the phase needs — the project's tests still pass
//! and the fix probe confirms it (or, once the model has a test, that test passes) — plumb
//! samples another reply to the same request (offering only the tools that write: a reply that
//! writes nothing cannot be tried), tries its write on the workspace, and undoes it, up to
//! `helpers.candidates` replies. Fixes the probe could not confirm are voted on. A reply that
//! writes a test is not sampled again (the figure search does that work by running it).
//! The round goes on with the first reply whose write did what was needed, or with the model's
//! first reply when none did. This is execution-based selection among samples: a weak model's
//! second or third guess is often right where its first is not, and the harness can tell which
//! by running the test.
//!
//! Every tried reply is journalled (`candidate_tried`) and its tokens counted. Trying changes
//! nothing: each write is undone by resetting the workspace to the last checkpoint, and the chosen
//! reply then runs as any reply does. Nothing here decides success: the ladder runs at `done`.

use async_trait::async_trait;
use plumb_model::ModelRequest;
use plumb_protocol::{Event, ModelReply, Usage};

use crate::ending::Ending;
use crate::policy::{ChoiceHandle, Chosen, Policy, Trial};

/// How the verdict of a write the tool refused begins.
const NOT_APPLIED: &str = "not applied: ";

pub(crate) struct Candidates {
    /// Replies tried per round, the model's first included.
    limit: u32,
}

impl Candidates {
    pub(crate) fn new(limit: u32) -> Self {
        Self { limit }
    }
}

/// One sampled reply and what trying it showed.
struct Tried {
    chosen: Chosen,
    verdict: String,
    wanted: bool,
    /// The patch the write made, when it was wanted (for the vote among fixes).
    change: Option<String>,
    /// False when its call would only be refused (the phases refuse it, or the tool does not
    /// apply it): a round spent on it teaches nothing the model was not told already.
    usable: bool,
    /// A fix confirmed beyond the tests (the fix probe): the first is taken without a vote.
    confirmed: bool,
}

#[async_trait]
impl Policy for Candidates {
    fn chooses(&self) -> bool {
        true
    }

    /// Chooses the reply this round goes on with, starting from the model's `first` (already
    /// normalised). Returns the chosen reply, with the usage of every sample, and the model time
    /// they took together.
    async fn choose_reply(
        &mut self,
        run: &mut dyn ChoiceHandle,
        request: &ModelRequest,
        first: Chosen,
    ) -> Result<Chosen, Ending> {
        if self.limit <= 1 {
            return Ok(first);
        }
        if first.reply.tool_calls.is_empty() && !first.reply.exhausted {
            return self.sample_a_call(run, request, first).await;
        }
        let Some(trial) = trial_of(run, &first.reply) else {
            return Ok(first);
        };
        // Tests are not sampled: the figure search finds the figure a test of the model's
        // should assert by running it, and on BILL-412 every run that failed went wrong in the
        // fix step, where a second or third sample is often the right line.
        if trial == Trial::Test {
            return Ok(first);
        }
        // A fix is judged by the project's tests still passing, which a wrong fix can do too,
        // and by the fix probe: the first fix the probe confirms is taken; without one, every
        // sample is tried and the change most of the passing ones make wins (self-consistency).
        let vote = matches!(trial, Trial::Fix { vote: true });
        // A sample that writes nothing cannot be tried, so the extra samples may only write: on
        // BILL-412, 22 of 120 of them had searched or read instead (some 3 s each, wasted).
        let writes_only = writes_only(request);
        let request = writes_only.as_ref().unwrap_or(request);
        let mut tried = vec![try_reply(run, first, &trial).await?];
        let mut attempt = 1;
        // Sampling stops at a write that does what is needed, or at a fix the probe confirmed.
        while attempt < self.limit
            && !tried.iter().any(|t| t.confirmed)
            && (vote || !tried.iter().any(|t| t.wanted))
        {
            let again = run.sample_again(request, attempt).await?;
            attempt += 1;
            let Some(chosen) = again else {
                break;
            };
            let earlier = tried
                .iter()
                .position(|t| same_call(&t.chosen.reply, &chosen.reply));
            let entry = match (earlier, trial_of(run, &chosen.reply)) {
                (Some(index), _) => Tried {
                    verdict: format!("the same call as candidate {}", index + 1),
                    wanted: tried[index].wanted,
                    change: tried[index].change.clone(),
                    usable: tried[index].usable,
                    confirmed: tried[index].confirmed,
                    chosen,
                },
                // A sample without a call (cut at the reply limit, or prose) is never taken over
                // a call, however unhelpful that call is: the round would teach nothing.
                (None, None) => {
                    let has_call = !chosen.reply.tool_calls.is_empty();
                    Tried {
                        verdict: if has_call {
                            "it writes nothing, so there is nothing to try".into()
                        } else {
                            "it has no call".into()
                        },
                        chosen,
                        wanted: false,
                        change: None,
                        usable: has_call,
                        confirmed: false,
                    }
                }
                (None, Some(trial)) => try_reply(run, chosen, &trial).await?,
            };
            tried.push(entry);
        }
        let chosen = if let Some(confirmed) = tried.iter().position(|t| t.confirmed) {
            confirmed
        } else if vote {
            let (chosen, votes) = most_common_change(&tried);
            let wanted = tried.iter().filter(|t| t.wanted).count();
            if wanted > 1 {
                tried[chosen].verdict.push_str(&format!(
                    "; {votes} of the {wanted} that passed make this same change"
                ));
            }
            chosen
        } else {
            tried.iter().position(|t| t.wanted).unwrap_or(0)
        };
        let chosen = if tried[chosen].wanted || tried[chosen].usable {
            chosen
        } else {
            tried.iter().position(|t| t.usable).unwrap_or(chosen)
        };
        let entries: Vec<(Chosen, String)> =
            tried.into_iter().map(|t| (t.chosen, t.verdict)).collect();
        Ok(emit_and_take(run, entries, chosen).await)
    }
}

impl Candidates {
    /// The model's reply had no tool call: other samples until one has.
    async fn sample_a_call(
        &self,
        run: &mut dyn ChoiceHandle,
        request: &ModelRequest,
        first: Chosen,
    ) -> Result<Chosen, Ending> {
        let mut tried = vec![first];
        for attempt in 1..self.limit {
            let Some(chosen) = run.sample_again(request, attempt).await? else {
                break;
            };
            let has_call = !chosen.reply.tool_calls.is_empty();
            tried.push(chosen);
            if has_call {
                break;
            }
        }
        let chosen = tried
            .iter()
            .position(|t| !t.reply.tool_calls.is_empty())
            .unwrap_or(0);
        let entries: Vec<(Chosen, String)> = tried
            .into_iter()
            .map(|t| {
                let verdict = if t.reply.tool_calls.is_empty() {
                    "it has no tool call"
                } else {
                    "it has a tool call"
                };
                (t, verdict.to_string())
            })
            .collect();
        Ok(emit_and_take(run, entries, chosen).await)
    }
}

/// Journals every tried reply and returns the one at `chosen`, carrying the usage of all of them
/// and the model time they took together.
async fn emit_and_take(
    run: &mut dyn ChoiceHandle,
    entries: Vec<(Chosen, String)>,
    chosen: usize,
) -> Chosen {
    let mut usage = Usage::default();
    let mut duration_ms = 0;
    for (entry, _) in &entries {
        usage.add(&entry.reply.usage);
        duration_ms += entry.duration_ms;
    }
    let round = run.round();
    for (index, (entry, verdict)) in entries.iter().enumerate() {
        run.emit(Event::CandidateTried {
            round,
            attempt: index as u32,
            reply: entry.reply.clone(),
            duration_ms: entry.duration_ms,
            verdict: verdict.clone(),
            used: index == chosen,
        })
        .await;
    }
    let mut entries = entries;
    let (mut taken, _) = entries.swap_remove(chosen);
    taken.reply.usage = usage;
    taken.duration_ms = duration_ms;
    taken
}

/// How a reply of one call would be judged.
fn trial_of(run: &dyn ChoiceHandle, reply: &ModelReply) -> Option<Trial> {
    match reply.tool_calls.as_slice() {
        [call] => run.trial(call),
        _ => None,
    }
}

async fn try_reply(
    run: &mut dyn ChoiceHandle,
    chosen: Chosen,
    trial: &Trial,
) -> Result<Tried, Ending> {
    let call = match (trial, chosen.reply.tool_calls.first()) {
        (Trial::Failed(why), _) => return Err(Ending::infra(why)),
        (Trial::Unwanted(why), _) => {
            return Ok(Tried {
                verdict: format!("not tried: {}", first_line(why)),
                chosen,
                wanted: false,
                change: None,
                usable: false,
                confirmed: false,
            });
        }
        (_, None) => {
            return Ok(Tried {
                verdict: "it has no call".to_string(),
                chosen,
                wanted: false,
                change: None,
                usable: false,
                confirmed: false,
            });
        }
        (_, Some(call)) => call.clone(),
    };
    let tried = run.try_write(&call, trial).await?;
    Ok(match tried.refused {
        Some(text) => Tried {
            verdict: format!("{NOT_APPLIED}{}", first_line(&text)),
            chosen,
            wanted: false,
            change: None,
            usable: false,
            confirmed: false,
        },
        None => Tried {
            verdict: tried.judgement.verdict,
            chosen,
            wanted: tried.judgement.wanted,
            change: tried.change,
            usable: !tried.judgement.undone,
            confirmed: tried.judgement.confirmed,
        },
    })
}

fn writes_only(request: &ModelRequest) -> Option<ModelRequest> {
    let allowed: Vec<String> = request
        .tools
        .iter()
        .map(|tool| tool.name.clone())
        .filter(|name| plumb_tools::WRITE_TOOLS.contains(&name.as_str()))
        .filter(|name| {
            request
                .allowed_tools
                .as_ref()
                .is_none_or(|allowed| allowed.contains(name))
        })
        .collect();
    (!allowed.is_empty()).then(|| ModelRequest {
        allowed_tools: Some(allowed),
        ..request.clone()
    })
}

/// The first reply whose change the most wanted replies made, and how many made it; the first
/// reply (and 0) when none was wanted.
fn most_common_change(tried: &[Tried]) -> (usize, usize) {
    let mut best = (0, 0);
    for (index, t) in tried.iter().enumerate() {
        let Some(change) = t.change.as_ref().filter(|_| t.wanted) else {
            continue;
        };
        let votes = tried
            .iter()
            .filter(|other| other.wanted && other.change.as_ref() == Some(change))
            .count();
        if votes > best.1 {
            best = (index, votes);
        }
    }
    best
}

/// What a trial's check showed, in words, for the journal.
/// True when two replies make the same one call.
fn same_call(a: &ModelReply, b: &ModelReply) -> bool {
    match (a.tool_calls.as_slice(), b.tool_calls.as_slice()) {
        ([x], [y]) => x.name == y.name && x.arguments == y.arguments,
        _ => false,
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use plumb_protocol::ToolSpec;
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::fake_run::FakeRun;
    use crate::policy::{Judgement, TriedWrite};

    fn edit(new_text: &str) -> Chosen {
        Chosen {
            reply: ModelReply {
                tool_calls: vec![plumb_protocol::ToolCall {
                    id: "c".into(),
                    name: "edit_file".into(),
                    arguments: serde_json::json!({"path": "a.py", "old_text": "x", "new_text": new_text}),
                }],
                ..ModelReply::default()
            },
            duration_ms: 10,
        }
    }

    fn tried(wanted: bool) -> TriedWrite {
        TriedWrite {
            refused: None,
            judgement: Judgement {
                wanted,
                confirmed: false,
                verdict: format!("wanted: {wanted}"),
                undone: false,
            },
            change: wanted.then(|| "patch".to_string()),
        }
    }

    #[tokio::test]
    async fn samples_are_tried_until_one_does_what_the_step_needs() {
        let mut run = FakeRun {
            trial: Some(Trial::Fix { vote: false }),
            ..FakeRun::default()
        };
        run.samples.extend([edit("y"), edit("z")]);
        run.tries.extend([tried(false), tried(true), tried(true)]);
        let mut candidates = Candidates::new(4);
        let chosen = candidates
            .choose_reply(&mut run, &ModelRequest::default(), edit("w"))
            .await
            .unwrap_or_else(|e| panic!("{}", e.reason));
        assert_eq!(
            chosen.reply.tool_calls[0].arguments["new_text"],
            serde_json::json!("y"),
            "the second reply did what was needed"
        );
        assert_eq!(chosen.duration_ms, 20, "the time of both samples");
        assert_eq!(run.samples.len(), 1, "no third sample was asked for");
        let events = run.events.lock().unwrap();
        assert_eq!(events.len(), 2, "both tried replies are journalled");
    }

    /// No sample does what is needed: the round goes on with one the helpers would keep, not
    /// the model's first, which they would undo.
    #[tokio::test]
    async fn a_write_the_helpers_would_undo_is_not_chosen_over_one_they_keep() {
        let mut run = FakeRun {
            trial: Some(Trial::Fix { vote: false }),
            ..FakeRun::default()
        };
        run.samples.extend([edit("y")]);
        let undone = TriedWrite {
            judgement: Judgement {
                undone: true,
                ..tried(false).judgement
            },
            ..tried(false)
        };
        run.tries.extend([undone, tried(false)]);
        let chosen = Candidates::new(2)
            .choose_reply(&mut run, &ModelRequest::default(), edit("w"))
            .await
            .unwrap_or_else(|e| panic!("{}", e.reason));
        assert_eq!(
            chosen.reply.tool_calls[0].arguments["new_text"],
            serde_json::json!("y")
        );
    }

    #[tokio::test]
    async fn a_test_is_not_sampled_again() {
        let mut run = FakeRun {
            trial: Some(Trial::Test),
            ..FakeRun::default()
        };
        run.samples.extend([edit("y")]);
        let chosen = Candidates::new(4)
            .choose_reply(&mut run, &ModelRequest::default(), edit("w"))
            .await
            .unwrap_or_else(|e| panic!("{}", e.reason));
        assert_eq!(
            chosen.reply.tool_calls[0].arguments["new_text"],
            serde_json::json!("w")
        );
        assert_eq!(run.samples.len(), 1);
    }

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.to_string(),
            description: String::new(),
            parameters: serde_json::json!({"type": "object"}),
        }
    }

    #[test]
    fn extra_samples_may_only_write() {
        let tools: Vec<ToolSpec> = ["read_file", "edit_file", "create_file", "run_tests"]
            .into_iter()
            .map(spec)
            .collect();
        let allowing = |names: Option<&[&str]>| ModelRequest {
            tools: tools.clone(),
            allowed_tools: names.map(|names| names.iter().map(|n| n.to_string()).collect()),
            ..ModelRequest::default()
        };
        let requests = [
            allowing(None),
            allowing(Some(&["read_file", "edit_file", "run_tests"])),
            allowing(Some(&["read_file"])),
        ];

        let actual: Vec<Option<Vec<String>>> = requests
            .iter()
            .map(|request| writes_only(request).and_then(|r| r.allowed_tools))
            .collect();

        let names = |list: &[&str]| Some(list.iter().map(|n| n.to_string()).collect());
        assert_eq!(
            actual,
            vec![
                names(&["edit_file", "create_file"]),
                names(&["edit_file"]),
                None
            ]
        );
    }
}
