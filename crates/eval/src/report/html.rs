//! `OUT/report.html`: one static page that opens from disk — inline CSS, inline SVG charts, no
//! script, no URL. Every text that comes from a result is escaped ([`super::escape::html`]). The
//! per-task table links each attempt's `report.json`, `patch.diff`, journal and test log by paths
//! relative to `OUT`, and only when the file is there.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use plumb_protocol::Outcome;

use super::charts::{self, Bars};
use super::escape::{href, html};
use super::summary::{AttemptRow, Summary, TaskRow};
use super::{ReportError, write_atomic};
use crate::result::AttemptResult;
use crate::task::folder_name;

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:0.5em 0 1.5em}\
td,th{border:1px solid #ccc;padding:0.2em 0.5em;text-align:left;vertical-align:top}\
th{background:#f0f0f0}td.n{text-align:right}.yes{color:#1a7f37}.no{color:#b42318}\
figure{display:inline-block;margin:0.5em}code{font-size:90%}";

/// Writes `OUT/report.html` for `summary`; `results` give each attempt's journal and log paths.
pub fn write_html(
    out_dir: &Path,
    summary: &Summary,
    results: &[AttemptResult],
) -> Result<(), ReportError> {
    let page = render(out_dir, summary, results)?;
    write_atomic(&out_dir.join("report.html"), &page)
}

pub(crate) fn render(
    out_dir: &Path,
    summary: &Summary,
    results: &[AttemptResult],
) -> Result<String, ReportError> {
    let by_attempt: BTreeMap<(&str, u32), &AttemptResult> = results
        .iter()
        .map(|r| ((r.instance_id.as_str(), r.attempt), r))
        .collect();
    let meta = &summary.meta;
    let mut page = String::new();
    let title = format!("plumb eval: {} on {}", meta.model, meta.tasks_file);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        html(&title),
        html(&title)
    );
    let _ = writeln!(
        page,
        "<p>Command: <code>{}</code><br>Settings: {}<br>Attempts a task (k): {}</p>",
        html(&meta.command),
        if meta.settings.is_empty() {
            "none".to_string()
        } else {
            meta.settings
                .iter()
                .map(|s| format!("<code>{}</code>", html(s)))
                .collect::<Vec<_>>()
                .join(" ")
        },
        meta.k
    );
    headline(&mut page, summary);
    pass_table(&mut page, summary);
    languages(&mut page, summary);
    problems(&mut page, summary);
    charts_section(&mut page, summary)?;
    task_table(&mut page, out_dir, summary, &by_attempt);
    id_lists(&mut page, summary);
    page.push_str("</body></html>\n");
    Ok(page)
}

fn headline(page: &mut String, s: &Summary) {
    let t = &s.totals;
    let rows = [
        ("Tasks in the set", s.total_instances.to_string()),
        (
            "Resolved",
            format!("{} ({})", s.resolved_instances, pct(s.resolved_pct)),
        ),
        ("Completed (scored)", s.completed_instances.to_string()),
        ("Unresolved", s.unresolved_instances.to_string()),
        ("Empty patch", s.empty_patch_instances.to_string()),
        ("Infrastructure errors", s.error_instances.to_string()),
        ("Bad tasks", s.bad_task_instances.to_string()),
        ("Not run yet", s.incomplete_instances.to_string()),
        ("Median rounds", opt(t.median_rounds, 1)),
        ("Median seconds a round", opt(t.median_seconds_per_round, 1)),
        (
            "A round: new prompt tokens / generated tokens",
            format!(
                "{} / {}",
                opt(t.round_split.new_prompt_tokens, 0),
                opt(t.round_split.output_tokens, 0)
            ),
        ),
        (
            "A round: model seconds / sandboxed command seconds",
            format!(
                "{} / {}",
                opt(t.round_split.model_seconds, 1),
                opt(t.round_split.command_seconds, 1)
            ),
        ),
        (
            "Median wall seconds an attempt",
            opt(t.median_wall_seconds, 1),
        ),
        ("Total wall seconds", format!("{:.0}", t.wall_seconds)),
        (
            "Tokens in / out / cached",
            format!(
                "{} / {} / {}",
                t.input_tokens, t.output_tokens, t.cached_tokens
            ),
        ),
        (
            "Estimated cost, total / a task",
            format!(
                "{} / {}",
                usd(t.usd),
                t.usd_per_task.map_or("-".into(), usd)
            ),
        ),
    ];
    page.push_str("<h2>Summary</h2>\n<table>\n");
    for (name, value) in rows {
        let _ = writeln!(page, "<tr><th>{name}</th><td class=\"n\">{value}</td></tr>");
    }
    page.push_str("</table>\n");
    if t.usage_estimated {
        page.push_str("<p>Some token counts are plumb's own count: the provider sent none.</p>\n");
    }
}

fn pass_table(page: &mut String, s: &Summary) {
    page.push_str(
        "<h2>pass@k and pass^k</h2>\n<table>\n<tr><th>k</th><th>tasks</th>\
         <th>pass@k</th><th>pass^k</th></tr>\n",
    );
    for p in &s.pass_at {
        let _ = writeln!(
            page,
            "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td></tr>",
            p.k,
            p.tasks,
            opt(p.pass_at_k, 3),
            opt(p.pass_hat_k, 3)
        );
    }
    page.push_str("</table>\n");
    let a = &s.all_resolved;
    let _ = writeln!(
        page,
        "<p>All {} attempts resolved: {} of {} tasks ({}).</p>",
        a.k,
        a.resolved,
        a.tasks,
        a.fraction.map_or("-".into(), |f| pct(f * 100.0))
    );
    if s.per_attempt.len() > 1 {
        page.push_str(
            "<table>\n<tr><th>attempt</th><th>tasks</th><th>finished</th><th>errors</th>\
             <th>resolved</th></tr>\n",
        );
        for a in &s.per_attempt {
            let _ = writeln!(
                page,
                "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{} ({})</td></tr>",
                a.attempt,
                a.tasks,
                a.finished,
                a.errors,
                a.resolved,
                pct(a.resolved_pct)
            );
        }
        page.push_str("</table>\n");
    }
}

fn languages(page: &mut String, s: &Summary) {
    if s.languages.is_empty() {
        return;
    }
    page.push_str(
        "<h2>By language</h2>\n<table>\n<tr><th>language</th><th>tasks</th><th>resolved</th>\
         <th>pass@1</th><th>cost</th></tr>\n",
    );
    for (language, l) in &s.languages {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{} ({})</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            html(language),
            l.tasks,
            l.resolved,
            pct(l.resolved_pct),
            opt(l.pass_at_1, 3),
            usd(l.usd)
        );
    }
    page.push_str("</table>\n");
}

/// Disagreements, flags and errors: what a person should look at.
fn problems(page: &mut String, s: &Summary) {
    let d = &s.disagreements;
    page.push_str("<h2>Ladder and score disagreements</h2>\n");
    if d.verified_unresolved.is_empty() && d.resolved_unverified.is_empty() {
        page.push_str("<p>None: plumb's ladder and the score agree on every attempt.</p>\n");
    }
    for (label, list) in [
        (
            "Verified by plumb, unresolved by the score",
            &d.verified_unresolved,
        ),
        (
            "Resolved by the score, not verified by plumb",
            &d.resolved_unverified,
        ),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(page, "<h3>{label}</h3>\n<ul>");
        for item in list {
            let _ = writeln!(
                page,
                "<li><code>{}</code> attempt {} ({}): {}</li>",
                html(&item.instance_id),
                item.attempt,
                outcome(item.outcome),
                html(&item.score_reason)
            );
        }
        page.push_str("</ul>\n");
    }
    page.push_str("<h2>Reviews</h2>\n");
    match s.reviews.sentences() {
        Some(sentences) => {
            for sentence in sentences {
                let _ = writeln!(page, "<p>{}.</p>", html(&sentence));
            }
        }
        None => page.push_str("<p>No change was reviewed (review off, or none verified).</p>\n"),
    }
    let f = &s.flags;
    let _ = writeln!(
        page,
        "<h2>Tamper flags</h2>\n<p>{} flags on {} attempts of {} tasks.</p>",
        f.flags,
        f.attempts,
        f.tasks.len()
    );
    if !f.by_kind.is_empty() {
        page.push_str("<table>\n<tr><th>kind</th><th>flags</th></tr>\n");
        for (kind, count) in &f.by_kind {
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td class=\"n\">{count}</td></tr>",
                html(kind)
            );
        }
        page.push_str("</table>\n");
    }
    if !s.errors.is_empty() {
        page.push_str("<h2>Errors and bad tasks</h2>\n<ul>\n");
        for e in &s.errors {
            let _ = writeln!(
                page,
                "<li><code>{}</code> attempt {} ({}): {}</li>",
                html(&e.instance_id),
                e.attempt,
                html(&e.status),
                html(&e.message)
            );
        }
        page.push_str("</ul>\n");
    }
}

fn charts_section(page: &mut String, s: &Summary) -> Result<(), ReportError> {
    let rounds: Vec<u32> = s
        .tasks
        .iter()
        .flat_map(|t| &t.attempts)
        .filter(|a| a.status == "finished")
        .map(|a| a.rounds)
        .collect();
    let ids: Vec<String> = s.tasks.iter().map(|t| t.instance_id.clone()).collect();
    let drawn = [
        charts::rounds_histogram(&rounds)?,
        charts::bars(&Bars {
            title: "Estimated cost per task (USD)",
            x_desc: "task",
            y_desc: "USD",
            labels: ids.clone(),
            values: s.tasks.iter().map(|t| t.usd).collect(),
            top: None,
        })?,
        charts::bars(&Bars {
            title: "Wall time per task (seconds)",
            x_desc: "task",
            y_desc: "seconds",
            labels: ids,
            values: s.tasks.iter().map(|t| t.wall_ms as f64 / 1000.0).collect(),
            top: None,
        })?,
        charts::bars(&Bars {
            title: "Resolved by language (%)",
            x_desc: "language",
            y_desc: "% of tasks",
            labels: s.languages.keys().cloned().collect(),
            values: s.languages.values().map(|l| l.resolved_pct).collect(),
            top: Some(100.0),
        })?,
    ];
    page.push_str("<h2>Charts</h2>\n");
    let mut any = false;
    for svg in drawn.into_iter().flatten() {
        any = true;
        let _ = writeln!(page, "<figure>{svg}</figure>");
    }
    if !any {
        page.push_str("<p>No finished attempt to chart yet.</p>\n");
    }
    Ok(())
}

fn task_table(
    page: &mut String,
    out_dir: &Path,
    s: &Summary,
    by_attempt: &BTreeMap<(&str, u32), &AttemptResult>,
) {
    page.push_str(
        "<h2>Tasks</h2>\n<table>\n<tr><th>#</th><th>task</th><th>language</th><th>attempt</th>\
         <th>class</th><th>resolved</th><th>verified</th><th>outcome</th><th>rounds</th>\
         <th>tokens in/out/cached</th><th>USD</th><th>seconds</th><th>flags</th><th>files</th></tr>\n",
    );
    for (number, task) in (1..).zip(&s.tasks) {
        for a in &task.attempts {
            let result = by_attempt.get(&(task.instance_id.as_str(), a.attempt));
            let class = if a.attempt == task.attempt {
                task.class.as_str()
            } else {
                ""
            };
            let _ = writeln!(
                page,
                "<tr><td class=\"n\">{number}</td><td><code>{}</code></td><td>{}</td>\
                 <td class=\"n\">{}</td><td>{class}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}/{}/{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}</td>\
                 <td>{}</td><td>{}</td></tr>",
                html(&task.instance_id),
                html(task.language.as_deref().unwrap_or("")),
                a.attempt,
                yes_no(a.resolved),
                yes_no(a.verified),
                attempt_outcome(a),
                a.rounds,
                a.input_tokens,
                a.output_tokens,
                a.cached_tokens,
                usd(a.usd),
                a.wall_ms as f64 / 1000.0,
                a.flags
                    .iter()
                    .map(|f| html(f))
                    .collect::<Vec<_>>()
                    .join("<br>"),
                links(out_dir, task, a, result.copied()),
            );
        }
    }
    page.push_str("</table>\n");
}

/// Links to the attempt's files that exist, by paths relative to `OUT`.
fn links(out_dir: &Path, task: &TaskRow, a: &AttemptRow, result: Option<&AttemptResult>) -> String {
    let folder = format!("{}/attempt-{}", folder_name(&task.instance_id), a.attempt);
    let relative = |name: &str| -> Option<String> {
        let path = Path::new(name);
        if path.is_absolute() {
            let inside = path.strip_prefix(out_dir).ok()?;
            return Some(inside.to_string_lossy().into_owned());
        }
        // Relative names in a result are relative to its attempt folder.
        Some(format!("{folder}/{name}"))
    };
    let mut files: Vec<(&str, Option<String>)> = vec![
        ("report", relative("report.json")),
        ("patch", relative("patch.diff")),
    ];
    let journal = result
        .map(|r| r.journal.as_str())
        .filter(|j| !j.is_empty())
        .unwrap_or("journal.jsonl");
    files.push(("journal", relative(journal)));
    if let Some(log) = result
        .and_then(|r| r.score.as_ref())
        .map(|s| s.log.as_str())
    {
        files.push(("test log", relative(log).filter(|_| !log.is_empty())));
    }
    files
        .into_iter()
        .filter_map(|(label, path)| {
            let path = path?;
            out_dir
                .join(&path)
                .is_file()
                .then(|| format!("<a href=\"{}\">{label}</a>", html(&href(&path))))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn id_lists(page: &mut String, s: &Summary) {
    page.push_str("<h2>SWE-bench id lists</h2>\n");
    for (name, ids) in [
        ("resolved_ids", &s.resolved_ids),
        ("unresolved_ids", &s.unresolved_ids),
        ("empty_patch_ids", &s.empty_patch_ids),
        ("error_ids", &s.error_ids),
        ("bad_task_ids", &s.bad_task_ids),
        ("completed_ids", &s.completed_ids),
        ("submitted_ids", &s.submitted_ids),
    ] {
        let _ = writeln!(
            page,
            "<details><summary>{name} ({})</summary><p>{}</p></details>",
            ids.len(),
            ids.iter()
                .map(|id| format!("<code>{}</code>", html(id)))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}

fn attempt_outcome(a: &AttemptRow) -> String {
    match a.outcome {
        Some(o) => outcome(Some(o)),
        None => html(&a.status),
    }
}

fn outcome(o: Option<Outcome>) -> String {
    o.and_then(|o| serde_json::to_value(o).ok())
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "-".to_string())
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "<span class=\"yes\">yes</span>"
    } else {
        "<span class=\"no\">no</span>"
    }
}

fn pct(p: f64) -> String {
    format!("{p:.1}%")
}

fn opt(x: Option<f64>, places: usize) -> String {
    x.map_or_else(|| "-".to_string(), |x| format!("{x:.places$}"))
}

fn usd(x: f64) -> String {
    format!("${x:.4}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{infra, scored};
    use crate::report::summary::SummaryMeta;
    use crate::report::tally::summarize;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_page_escapes_results_embeds_svg_names_no_url_and_links_files_that_exist() {
        let mut hostile = scored("<script>alert(1)</script>", 1, true, true);
        hostile.flags = vec!["tests/<b>x</b>.py: an existing test file was modified".into()];
        hostile.language = Some("python".into());
        hostile.rounds = 4;
        let mut plain = infra("ok-1", 1);
        plain.status = crate::result::AttemptStatus::InfraError {
            message: "disk \"full\" & <gone>".into(),
        };
        let results = vec![hostile, plain, scored("ok-2", 1, false, false)];
        let out = tempfile::tempdir().unwrap();
        let attempt = out.path().join("ok-2/attempt-1");
        std::fs::create_dir_all(&attempt).unwrap();
        std::fs::write(attempt.join("report.json"), "{}").unwrap();
        std::fs::write(attempt.join("score.log"), "").unwrap();
        let meta = SummaryMeta {
            model: "scripted".into(),
            tasks_file: "<tasks>.jsonl".into(),
            ..SummaryMeta::default()
        };
        let summary = summarize(&results, 1, &meta);

        write_html(out.path(), &summary, &results).unwrap();
        let page = std::fs::read_to_string(out.path().join("report.html")).unwrap();
        let links: Vec<&str> = page
            .match_indices("<a href=")
            .filter_map(|(i, _)| page.get(i..)?.split("</a>").next())
            .collect();
        let actual = (
            page.contains("<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>"),
            page.contains("tests/&lt;b&gt;x&lt;/b&gt;.py"),
            page.contains("disk &quot;full&quot; &amp; &lt;gone&gt;"),
            page.contains("on &lt;tasks&gt;.jsonl"),
            page.contains("<script"),
            page.matches("<svg").count(),
            page.contains("http"),
            page.contains("src="),
            links,
        );
        let expected = (
            true,
            true,
            true,
            true,
            false,
            // rounds, cost, time, resolved by language
            4,
            false,
            false,
            vec![
                "<a href=\"ok-2/attempt-1/report.json\">report",
                "<a href=\"ok-2/attempt-1/score.log\">test log",
            ],
        );
        assert_eq!(actual, expected);
    }
}
