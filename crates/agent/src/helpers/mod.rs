//! The small-model helpers, each behind the seam of `policy.rs`, and the one place that chooses
//! them for a run ([`select`]). A helper is on when the settings say so (`-c helpers.NAME=…`),
//! else when the model's profile is small — and then only where it can help: each says when it
//! applies (the test runner, the ticket's shape, the model), and steps aside otherwise. The
//! journal's `helpers` event and the report list every helper, on or off, with the reason.
//!
//! | helper | what it does | applies |
//! |---|---|---|
//! | `phases` | keeps the order of the work: the fix, a test that shows it, `done` (`phases/`) | always, when on |
//! | `figures` | the figure search and the fix probe (`figures/`) | with phases, pytest, a ticket that gives figures |
//! | `trace` | names the line that makes the ticket's wrong figure (`trace.rs`) | with figures, the source file and closest test shown up front |
//! | `candidates` | samples more replies and keeps the write that does what is needed (`candidates.rs`) | with phases, a model that can sample again |
//! | `python_notes` | notes on `UnboundLocalError` and `NameError` after an undone fix (`python_notes/`) | with phases, pytest |
//! | `undo_failing_fixes` | undoes a fix after which the failing tests still fail, and refuses code already tried (`phases/tried.rs`) | with phases; off unless set |
//!
//! `thought`, `code_up_front`, `show_file_on_failed_edit` and `python_rewrites` shape the prompt
//! and the tools rather than the loop; they are listed here too, with the same rule.

mod candidates;
mod figures;
mod phases;
mod python_notes;
mod trace;

use plumb_config::Helpers;
use plumb_protocol::{HelperState, ModelProfile};
use plumb_verify::Runner;

use crate::facts::RunFacts;
use crate::policy::Policy;

/// The helpers chosen for a run, in the order their hooks are called, and every helper's state.
pub(crate) struct Selection {
    pub policies: Vec<Box<dyn Policy>>,
    pub states: Vec<HelperState>,
}

/// Whether a helper is on, and why: the setting when there is one, else the profile.
fn switched(setting: Option<bool>, profile: ModelProfile, key: &str) -> (bool, String) {
    match (setting, profile) {
        (Some(on), _) => (on, format!("helpers.{key}={on}")),
        (None, ModelProfile::Small) => (true, "the model is small".to_string()),
        (None, ModelProfile::Capable) => (false, "the model is capable".to_string()),
    }
}

/// On by its switch and where it applies: `Ok(why)` on, `Err(why)` off.
fn applies(switch: (bool, String), condition: Result<String, String>) -> Result<String, String> {
    let (on, why) = switch;
    if !on {
        return Err(format!("off: {why}"));
    }
    condition.map(|applies| format!("{why}; {applies}"))
}

fn state(name: &str, decided: &Result<String, String>) -> HelperState {
    HelperState {
        name: name.to_string(),
        on: decided.is_ok(),
        why: match decided {
            Ok(why) | Err(why) => why.clone(),
        },
    }
}

/// Whether the guided phases are on.
fn phases_decision(settings: &Helpers, profile: ModelProfile) -> Result<String, String> {
    applies(
        switched(settings.phases, profile, "phases"),
        Ok("every task".to_string()),
    )
}

/// `condition` for a helper that needs the phases.
fn with(
    phases: &Result<String, String>,
    name: &str,
    condition: Result<String, String>,
) -> Result<String, String> {
    match phases {
        Ok(_) => condition,
        Err(_) => Err(format!(
            "needs phases, which is off; {name} cannot run without it"
        )),
    }
}

/// Whether the figures helper is on: with the phases, pytest, and a ticket that gives figures.
fn figures_decision(
    settings: &Helpers,
    profile: ModelProfile,
    phases: &Result<String, String>,
    runner: Runner,
    ticket: &str,
) -> Result<String, String> {
    let pytest = runner == Runner::Pytest;
    let ticket_figures = !plumb_context::relevant::figures(ticket).is_empty();
    applies(
        switched(settings.figures, profile, "figures"),
        with(
            phases,
            "figures",
            match (pytest, ticket_figures) {
                (true, true) => Ok("pytest, and the ticket gives figures".to_string()),
                (false, _) => Err("steps aside: its search runs pytest tests only".to_string()),
                (true, false) => Err("steps aside: the ticket gives no figures".to_string()),
            },
        ),
    )
}

/// Whether the figures helper will be on for a run of `runner` on `ticket` by a model of
/// `model`'s profile, as [`select`] decides it: the rules speak of figures only then, and the
/// first request's rules are written before the helpers are chosen.
pub(crate) fn figures_on(
    settings: &Helpers,
    model: ModelProfile,
    runner: Runner,
    ticket: &str,
) -> bool {
    let profile = settings.profile_for(model);
    let phases = phases_decision(settings, profile);
    figures_decision(settings, profile, &phases, runner, ticket).is_ok()
}

/// Chooses the helpers for a run.
pub(crate) fn select(facts: &RunFacts<'_>) -> Selection {
    let settings = facts.settings;
    let profile = settings.profile_for(facts.profile);
    let effect = settings.for_profile(facts.profile);
    let pytest = facts.runner == Runner::Pytest;

    let phases = phases_decision(settings, profile);
    let with_phases =
        |name: &str, condition: Result<String, String>| with(&phases, name, condition);
    let figures = figures_decision(settings, profile, &phases, facts.runner, facts.ticket);
    let trace = applies(
        switched(settings.trace, profile, "trace"),
        match (
            &figures,
            &facts.briefing.source_file,
            &facts.briefing.closest_test_text,
        ) {
            (Err(_), _, _) => Err("steps aside: it follows the figure search, which is off".into()),
            (Ok(_), Some(_), Some(_)) => {
                Ok("a source file and its closest test were shown up front".to_string())
            }
            (Ok(_), _, _) => Err(
                "steps aside: no source file and closest test were shown up front to trace"
                    .to_string(),
            ),
        },
    );
    let candidates = if effect.candidates <= 1 {
        Err(match settings.candidates {
            Some(n) => format!("off: helpers.candidates={n}"),
            None => "off: the model is capable".to_string(),
        })
    } else {
        with_phases(
            "candidates",
            match facts.can_sample {
                true => Ok(format!(
                    "up to {} replies a fixing round ({})",
                    effect.candidates,
                    match settings.candidates {
                        Some(n) => format!("helpers.candidates={n}"),
                        None => "the model is small".to_string(),
                    }
                )),
                false => Err("steps aside: the model cannot give another sample".to_string()),
            },
        )
    };
    let python_notes = applies(
        switched(settings.python_notes, profile, "python_notes"),
        with_phases(
            "python_notes",
            if pytest {
                Ok("pytest".to_string())
            } else {
                Err("steps aside: the notes read Python's errors".to_string())
            },
        ),
    );
    // New, and not yet measured on the eval subset: off unless set, whatever the profile.
    let undo_failing = match settings.undo_failing_fixes {
        Some(true) => with_phases(
            "undo_failing_fixes",
            Ok("helpers.undo_failing_fixes=true".to_string()),
        ),
        Some(false) => Err("off: helpers.undo_failing_fixes=false".to_string()),
        None => Err("off unless set: not yet measured on the eval subset".to_string()),
    };

    let mut policies: Vec<Box<dyn Policy>> = Vec::new();
    if phases.is_ok() {
        policies.push(Box::new(
            phases::Guided::new(facts, figures.is_ok(), trace.is_ok())
                .undo_failing_fixes(undo_failing.is_ok()),
        ));
    }
    if candidates.is_ok() {
        policies.push(Box::new(candidates::Candidates::new(effect.candidates)));
    }
    if python_notes.is_ok() {
        policies.push(Box::new(python_notes::PythonNotes));
    }
    let prompt_helper = |name: &str, setting: Option<bool>| {
        let (on, why) = switched(setting, profile, name);
        HelperState {
            name: name.to_string(),
            on,
            why,
        }
    };
    let states = vec![
        state("phases", &phases),
        state("figures", &figures),
        state("trace", &trace),
        state("candidates", &candidates),
        state("python_notes", &python_notes),
        state("undo_failing_fixes", &undo_failing),
        prompt_helper("thought", settings.thought),
        prompt_helper("code_up_front", settings.code_up_front),
        prompt_helper(
            "show_file_on_failed_edit",
            settings.show_file_on_failed_edit,
        ),
        prompt_helper("python_rewrites", settings.python_rewrites),
    ];
    Selection { policies, states }
}
