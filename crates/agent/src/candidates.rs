//! The candidates helper (`helpers.candidates`, with guided phases): when the model's reply
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

use std::time::Instant;

use plumb_model::ModelRequest;
use plumb_protocol::{Event, ModelReply, Outcome, ToolCall, Usage};
use plumb_tools::ToolError;

use crate::figures::FigureSearch;
use crate::phases::{CheckVerdict, PhaseCheck, TestVerdict, Trial, WRITE_TOOLS};
use crate::run::{Ending, Run, elapsed_ms};

/// How the verdict of a write the tool refused begins.
const NOT_APPLIED: &str = "not applied: ";

/// One sampled reply and what trying it showed.
struct Tried {
    reply: ModelReply,
    duration_ms: u64,
    verdict: String,
    wanted: bool,
    /// The patch the write made, when it was wanted (for the vote among fixes).
    change: Option<String>,
    /// False when its call would only be refused (the phases refuse it, or the tool does not
    /// apply it): a round spent on it teaches nothing the model was not told already.
    usable: bool,
    /// A fix the fix probe confirmed: it changes a value the tests check to a figure of the
    /// ticket. The first such fix is taken without a vote.
    confirmed: bool,
}

impl Run {
    /// Chooses the reply this round goes on with, starting from the model's `first` (already
    /// normalised) which took `first_ms`. Returns the chosen reply, with the usage of every
    /// sample, and the model time they took together.
    pub(crate) async fn choose_candidate(
        &mut self,
        request: &ModelRequest,
        first: ModelReply,
        first_ms: u64,
    ) -> Result<(ModelReply, u64), Ending> {
        let limit = self.helpers.candidates;
        if limit <= 1 || !self.helpers.phases {
            return Ok((first, first_ms));
        }
        if first.tool_calls.is_empty() && !first.exhausted {
            return self.sample_a_call(request, first, first_ms).await;
        }
        let Some(trial) = self.trial_of(&first) else {
            return Ok((first, first_ms));
        };
        // Tests are not sampled: the figure search finds the figure a test of the model's
        // should assert by running it, and on BILL-412 every run that failed went wrong in the
        // fix step, where a second or third sample is often the right line.
        if matches!(trial, Trial::Check(PhaseCheck::BothWays(_))) {
            return Ok((first, first_ms));
        }
        // A fix is judged by the project's tests still passing, which a wrong fix can do too,
        // and by the fix probe: the first fix the probe confirms is taken; without one, every
        // sample is tried and the change most of the passing ones make wins (self-consistency).
        // A test is judged with and without the fix (after the figure search): the first good
        // one is enough.
        let vote =
            self.phases.votes_on_fixes() && matches!(trial, Trial::Check(PhaseCheck::Existing(_)));
        // A sample that writes nothing cannot be tried, so the extra samples may only write: on
        // BILL-412, 22 of 120 of them had searched or read instead (some 3 s each, wasted).
        let writes_only = writes_only(request);
        let request = writes_only.as_ref().unwrap_or(request);
        let mut model_ms = first_ms;
        let mut tried = vec![self.try_reply(first, first_ms, &trial).await?];
        let mut attempt = 1;
        // Sampling stops at a test that shows the fix, or at a fix the probe confirmed.
        while attempt < limit
            && !tried.iter().any(|t| t.confirmed)
            && (vote || !tried.iter().any(|t| t.wanted))
        {
            let (again, duration_ms) = self.sample_again(request, attempt).await?;
            model_ms += duration_ms;
            attempt += 1;
            let mut reply = match again {
                None => break,
                // A sample that fails is one candidate fewer, not the end of the run: the
                // model's first reply is still there to go on with.
                Some(Err(err)) => {
                    self.emit(Event::Warning {
                        message: format!("another sample of the model's reply failed: {err}"),
                    })
                    .await;
                    break;
                }
                Some(Ok(reply)) => reply,
            };
            self.normalise_reply(&mut reply);
            let earlier = tried.iter().position(|t| same_call(&t.reply, &reply));
            let entry = match (earlier, self.trial_of(&reply)) {
                (Some(index), _) => Tried {
                    verdict: format!("the same call as candidate {}", index + 1),
                    wanted: tried[index].wanted,
                    change: tried[index].change.clone(),
                    usable: tried[index].usable,
                    confirmed: tried[index].confirmed,
                    reply,
                    duration_ms,
                },
                (None, None) => Tried {
                    verdict: "it writes nothing, so there is nothing to try".into(),
                    reply,
                    duration_ms,
                    wanted: false,
                    change: None,
                    usable: true,
                    confirmed: false,
                },
                (None, Some(trial)) => self.try_reply(reply, duration_ms, &trial).await?,
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
        // When nothing did what was needed, a reply that can at least run beats one that would
        // only be refused again.
        let chosen = if tried[chosen].wanted || tried[chosen].usable {
            chosen
        } else {
            tried.iter().position(|t| t.usable).unwrap_or(chosen)
        };
        let mut usage = Usage::default();
        for t in &tried {
            usage.add(&t.reply.usage);
        }
        let round = self.round;
        for (index, t) in tried.iter().enumerate() {
            self.emit(Event::CandidateTried {
                round,
                attempt: index as u32,
                reply: t.reply.clone(),
                duration_ms: t.duration_ms,
                verdict: t.verdict.clone(),
                used: index == chosen,
            })
            .await;
        }
        let mut reply = tried.swap_remove(chosen).reply;
        reply.usage = usage;
        Ok((reply, model_ms))
    }

    /// The model's reply had no call it could use (a small model that rambles to the reply limit
    /// inside a string): sample again, up to the candidate limit, and go on with the first reply
    /// that has a call. Without one, the first reply stands and the loop's note follows.
    async fn sample_a_call(
        &mut self,
        request: &ModelRequest,
        first: ModelReply,
        first_ms: u64,
    ) -> Result<(ModelReply, u64), Ending> {
        let mut model_ms = first_ms;
        let mut tried = vec![(first, first_ms)];
        for attempt in 1..self.helpers.candidates {
            let (again, duration_ms) = self.sample_again(request, attempt).await?;
            model_ms += duration_ms;
            let Some(Ok(mut reply)) = again else {
                break;
            };
            self.normalise_reply(&mut reply);
            let has_call = !reply.tool_calls.is_empty();
            tried.push((reply, duration_ms));
            if has_call {
                break;
            }
        }
        let chosen = tried
            .iter()
            .position(|(reply, _)| !reply.tool_calls.is_empty())
            .unwrap_or(0);
        let mut usage = Usage::default();
        for (reply, _) in &tried {
            usage.add(&reply.usage);
        }
        let round = self.round;
        for (index, (reply, duration_ms)) in tried.iter().enumerate() {
            let verdict = if reply.tool_calls.is_empty() {
                "it has no tool call"
            } else {
                "it has a tool call"
            };
            self.emit(Event::CandidateTried {
                round,
                attempt: index as u32,
                reply: reply.clone(),
                duration_ms: *duration_ms,
                verdict: verdict.to_string(),
                used: index == chosen,
            })
            .await;
        }
        let mut reply = tried.swap_remove(chosen).0;
        reply.usage = usage;
        Ok((reply, model_ms))
    }

    /// Another sample of the model's reply to `request`, and how long it took; a cancelled run
    /// ends here.
    async fn sample_again(
        &self,
        request: &ModelRequest,
        attempt: u32,
    ) -> Result<(Option<Result<ModelReply, plumb_model::ModelError>>, u64), Ending> {
        let asked = Instant::now();
        tokio::select! {
            again = self.spec.model.sample_again(request, attempt) => Ok((again, elapsed_ms(asked))),
            () = self.spec.cancel.cancelled() => Err(Ending::new(
                Outcome::Cancelled,
                "the run was cancelled while the model was thinking",
            )),
        }
    }

    /// What trying `reply`'s call would show, when there is something to try.
    fn trial_of(&self, reply: &ModelReply) -> Option<Trial> {
        match reply.tool_calls.as_slice() {
            [call] => self.phases.trial(call),
            _ => None,
        }
    }

    /// Runs `reply`'s write and then the test `trial` names, and undoes the write.
    async fn try_reply(
        &mut self,
        reply: ModelReply,
        duration_ms: u64,
        trial: &Trial,
    ) -> Result<Tried, Ending> {
        let (verdict, wanted, change, usable, confirmed) = match (trial, reply.tool_calls.first()) {
            (Trial::Unwanted(why), _) => (
                format!("not tried: {}", first_line(why)),
                false,
                None,
                false,
                false,
            ),
            (_, None) => ("it has no call".to_string(), false, None, false, false),
            (trial, Some(call)) => {
                let outcome = self.try_write(call, trial).await;
                self.undo_trial()?;
                let (verdict, wanted, change, confirmed) = outcome?;
                let usable = !verdict.starts_with(NOT_APPLIED);
                (verdict, wanted, change, usable, confirmed)
            }
        };
        Ok(Tried {
            reply,
            duration_ms,
            verdict,
            wanted,
            change,
            usable,
            confirmed,
        })
    }

    /// The write and the check of one trial: what they showed, whether it was wanted, and the
    /// patch when it was.
    async fn try_write(
        &mut self,
        call: &ToolCall,
        trial: &Trial,
    ) -> Result<(String, bool, Option<String>, bool), Ending> {
        let Trial::Check(check) = trial else {
            return Ok(("nothing to run".into(), false, None, false));
        };
        let started = Instant::now();
        // As the real call would be: an edit of lines only an undone edit wrote means the
        // lines it replaced.
        let rebased = self.phases.rebase_on_undone(call);
        let arguments = rebased.as_ref().map_or(&call.arguments, |(args, _)| args);
        let result = self
            .registry
            .call(&self.tool_context(), &call.name, arguments)
            .await;
        self.timings.tools_ms += elapsed_ms(started);
        match result {
            Err(ToolError::Infra(text)) => return Err(Ending::new(Outcome::InfraError, text)),
            Err(ToolError::RespondToModel(text)) => {
                return Ok((
                    format!("{NOT_APPLIED}{}", first_line(&text)),
                    false,
                    None,
                    false,
                ));
            }
            Ok(_) => {}
        }
        let (verdict, _) = self.run_phase_check(check).await?;
        let mut wanted = self.phases.wanted(check, verdict);
        let mut said = describe(check, verdict);
        // What the real call would go on to: the figure search on a test, the probe on a fix.
        if let Some(test_file) = self.phases.figure_search(check, verdict)
            && let FigureSearch::Found(found) = self.search_figures(&test_file).await?
        {
            wanted = true;
            said.push_str(&format!(
                "; with {} (the figure search) it shows the fix",
                found.change()
            ));
        }
        let mut confirmed = false;
        if let Some((test_file, example)) = self.phases.probe_after(check, verdict) {
            match self.probe_fix(&test_file, &example).await? {
                FigureSearch::Found(_) => {
                    confirmed = true;
                    said.push_str("; the fix probe finds a figure of the ticket");
                }
                // The real call would be undone.
                FigureSearch::NoneShowed(_) => {
                    wanted = false;
                    said.push_str("; the fix probe finds no figure of the ticket");
                }
                FigureSearch::NotTried => {}
            }
        }
        // A patch that cannot be made (a binary change) simply gets no vote.
        let change = wanted
            .then(|| self.workspace.patch().ok().map(|patch| patch.text))
            .flatten();
        Ok((said, wanted, change, confirmed))
    }

    /// Puts the workspace back to the last checkpoint, which it matched before the trial.
    fn undo_trial(&self) -> Result<(), Ending> {
        self.workspace
            .rollback(&self.last_checkpoint)
            .map_err(|err| Ending::infra(format!("could not undo a tried reply's write: {err}")))
    }
}

/// `request` with only the writing tools among those it allows, or `None` when it allows none.
fn writes_only(request: &ModelRequest) -> Option<ModelRequest> {
    let allowed: Vec<String> = request
        .tools
        .iter()
        .map(|tool| tool.name.clone())
        .filter(|name| WRITE_TOOLS.contains(&name.as_str()))
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
fn describe(check: &PhaseCheck, verdict: CheckVerdict) -> String {
    let word = |verdict: TestVerdict| match verdict {
        TestVerdict::Passes => "passes",
        TestVerdict::Fails => "fails",
        TestVerdict::FailsInTheTest => "fails on a mistake in the test",
        TestVerdict::Broken => "could not run",
    };
    let now = word(verdict.now);
    match (check, verdict.original) {
        (PhaseCheck::Existing(_), _) => format!(
            "the existing tests after it: {}",
            if verdict.now == TestVerdict::Passes {
                "no test that passed before fails"
            } else {
                "tests that passed before fail"
            }
        ),
        (PhaseCheck::BothWays(_), Some(original)) => format!(
            "its test {now} with the fix and {} on the original code",
            word(original)
        ),
        _ => format!("the model's test {now} after it"),
    }
}

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
