//! `plumb eval compare DIR_A DIR_B`: two runs side by side, task by task — the harness ablation
//! table (the same tasks with one setting changed). A task counts as resolved in a run when its
//! summary class is `resolved` (some attempt resolved). The four counts (fixed only by A, only
//! by B, by both, by neither) are over the tasks both runs have; tasks only one run has are
//! listed apart.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ReportError;
use super::collect::collect;
use super::summary::{SummaryMeta, TaskClass, TaskRow};
use super::tally::summarize;

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub a: CompareSide,
    pub b: CompareSide,
    /// Every task of either run, by id.
    pub rows: Vec<CompareRow>,
    pub only_a: usize,
    pub only_b: usize,
    pub both: usize,
    pub neither: usize,
    pub missing_in_a: Vec<String>,
    pub missing_in_b: Vec<String>,
}

/// One run: where it is, what made it, its totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareSide {
    pub dir: String,
    /// From the run's summary.json when it has one, else from its results.
    pub model: String,
    pub settings: Vec<String>,
    pub totals: SideTotals,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideTotals {
    pub tasks: usize,
    pub resolved: usize,
    pub usd: f64,
    pub wall_seconds: f64,
    pub median_rounds: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    pub instance_id: String,
    pub a: Option<TaskCell>,
    pub b: Option<TaskCell>,
}

/// One task in one run: its class and its representative attempt's rounds; cost and time of all
/// its attempts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskCell {
    pub class: TaskClass,
    pub resolved: bool,
    pub rounds: u32,
    pub usd: f64,
    pub wall_ms: u64,
}

/// Reads both runs and compares them. A folder with no finished attempt is an error (most often
/// a wrong path).
pub fn compare(dir_a: &Path, dir_b: &Path) -> Result<Comparison, ReportError> {
    let (a, a_tasks) = side(dir_a)?;
    let (b, b_tasks) = side(dir_b)?;
    let mut ids: Vec<&str> = a_tasks
        .iter()
        .chain(&b_tasks)
        .map(|t| t.instance_id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let find = |tasks: &[TaskRow], id: &str| tasks.iter().find(|t| t.instance_id == id).map(cell);

    let mut comparison = Comparison {
        a,
        b,
        rows: Vec::new(),
        only_a: 0,
        only_b: 0,
        both: 0,
        neither: 0,
        missing_in_a: Vec::new(),
        missing_in_b: Vec::new(),
    };
    for id in ids {
        let row = CompareRow {
            instance_id: id.to_string(),
            a: find(&a_tasks, id),
            b: find(&b_tasks, id),
        };
        match (&row.a, &row.b) {
            (Some(a), Some(b)) => match (a.resolved, b.resolved) {
                (true, true) => comparison.both += 1,
                (true, false) => comparison.only_a += 1,
                (false, true) => comparison.only_b += 1,
                (false, false) => comparison.neither += 1,
            },
            (None, _) => comparison.missing_in_a.push(row.instance_id.clone()),
            (_, None) => comparison.missing_in_b.push(row.instance_id.clone()),
        }
        comparison.rows.push(row);
    }
    Ok(comparison)
}

fn side(dir: &Path) -> Result<(CompareSide, Vec<TaskRow>), ReportError> {
    let results = collect(dir)?;
    if results.is_empty() {
        return Err(ReportError::Empty {
            path: dir.to_path_buf(),
        });
    }
    let (model, settings) = label(dir).unwrap_or_else(|| {
        let mut models: Vec<&str> = results.iter().map(|r| r.model.as_str()).collect();
        models.sort_unstable();
        models.dedup();
        (models.join(", "), Vec::new())
    });
    let summary = summarize(&results, 1, &SummaryMeta::default());
    let totals = SideTotals {
        tasks: summary.submitted_instances,
        resolved: summary.resolved_instances,
        usd: summary.totals.usd,
        wall_seconds: summary.totals.wall_seconds,
        median_rounds: summary.totals.median_rounds,
    };
    let side = CompareSide {
        dir: dir.display().to_string(),
        model,
        settings,
        totals,
    };
    Ok((side, summary.tasks))
}

/// The model and `-c` settings the run's summary.json names. Read loosely: the label is a
/// courtesy, and a summary of another version must not stop a comparison of the results.
fn label(dir: &Path) -> Option<(String, Vec<String>)> {
    let text = std::fs::read_to_string(dir.join("summary.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let meta = value.get("meta")?;
    let model = meta.get("model")?.as_str()?.to_string();
    let settings = meta
        .get("settings")
        .and_then(|s| s.as_array())
        .map(|s| {
            s.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Some((model, settings))
}

fn cell(task: &TaskRow) -> TaskCell {
    let rounds = task
        .attempts
        .iter()
        .find(|a| a.attempt == task.attempt)
        .map_or(0, |a| a.rounds);
    TaskCell {
        class: task.class,
        resolved: task.class == TaskClass::Resolved,
        rounds,
        usd: task.usd,
        wall_ms: task.wall_ms,
    }
}

impl Comparison {
    /// A plain table for the terminal: a header naming the two runs, one aligned row a task,
    /// then the four counts and the totals.
    pub fn render_text(&self) -> String {
        let mut table: Vec<[String; 9]> = vec![
            [
                "task", "A", "B", "rounds A", "rounds B", "USD A", "USD B", "s A", "s B",
            ]
            .map(str::to_string),
        ];
        for row in &self.rows {
            let (a, b) = (row.a.as_ref(), row.b.as_ref());
            table.push([
                row.instance_id.clone(),
                a.map_or("-".into(), |c| c.class.as_str().into()),
                b.map_or("-".into(), |c| c.class.as_str().into()),
                a.map_or("-".into(), |c| c.rounds.to_string()),
                b.map_or("-".into(), |c| c.rounds.to_string()),
                a.map_or("-".into(), |c| format!("{:.4}", c.usd)),
                b.map_or("-".into(), |c| format!("{:.4}", c.usd)),
                a.map_or("-".into(), |c| format!("{:.1}", c.wall_ms as f64 / 1000.0)),
                b.map_or("-".into(), |c| format!("{:.1}", c.wall_ms as f64 / 1000.0)),
            ]);
        }
        let mut widths = [0usize; 9];
        for row in &table {
            for (width, text) in widths.iter_mut().zip(row) {
                *width = (*width).max(text.chars().count());
            }
        }

        let mut out = String::new();
        for (name, side) in [("A", &self.a), ("B", &self.b)] {
            out.push_str(&format!("{name}: {} (model {}", side.dir, side.model));
            for setting in &side.settings {
                out.push_str(&format!(", -c {setting}"));
            }
            out.push_str(")\n");
        }
        out.push('\n');
        for row in &table {
            let cells: Vec<String> = row
                .iter()
                .zip(widths)
                .enumerate()
                .map(|(i, (text, width))| {
                    let pad = width - text.chars().count();
                    // The id left-aligned, every figure right-aligned.
                    if i == 0 {
                        format!("{text}{}", " ".repeat(pad))
                    } else {
                        format!("{}{text}", " ".repeat(pad))
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out.push_str(&format!(
            "\nresolved by A only: {}, by B only: {}, by both: {}, by neither: {}\n",
            self.only_a, self.only_b, self.both, self.neither
        ));
        for (name, missing) in [("A", &self.missing_in_a), ("B", &self.missing_in_b)] {
            if !missing.is_empty() {
                out.push_str(&format!("not in {name}: {}\n", missing.join(", ")));
            }
        }
        for (name, side) in [("A", &self.a), ("B", &self.b)] {
            let t = &side.totals;
            out.push_str(&format!(
                "{name}: resolved {} of {} tasks, USD {:.4}, {:.1} s, median rounds {}\n",
                t.resolved,
                t.tasks,
                t.usd,
                t.wall_seconds,
                t.median_rounds.map_or("-".into(), |m| format!("{m:.1}")),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{empty, scored, write_result};
    use pretty_assertions::assert_eq;

    fn timed(
        mut r: crate::result::AttemptResult,
        rounds: u32,
        usd: f64,
    ) -> crate::result::AttemptResult {
        r.rounds = rounds;
        r.usage.usd = usd;
        r.wall_ms = u64::from(rounds) * 1500;
        r
    }

    #[test]
    fn counts_tasks_fixed_by_one_both_or_neither_and_renders_a_table() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        for r in [
            timed(scored("t1", 1, true, true), 2, 0.01),
            timed(scored("t2", 1, true, true), 3, 0.02),
            timed(scored("t3", 1, false, false), 4, 0.0),
            timed(empty("t4", 1), 10, 0.0),
            timed(scored("t5", 1, true, true), 1, 0.0),
        ] {
            write_result(a.path(), &r);
        }
        for r in [
            timed(scored("t1", 1, true, true), 1, 0.0),
            timed(empty("t2", 1), 12, 0.0),
            timed(scored("t3", 1, true, true), 5, 0.0),
            timed(empty("t4", 1), 12, 0.0),
            timed(scored("long-task-6", 1, true, true), 2, 0.0),
        ] {
            write_result(b.path(), &r);
        }
        std::fs::write(
            b.path().join("summary.json"),
            r#"{"meta": {"model": "local", "settings": ["helpers.phases=false"]}}"#,
        )
        .unwrap();

        let c = compare(a.path(), b.path()).unwrap();
        let actual = (
            (c.only_a, c.only_b, c.both, c.neither),
            (c.missing_in_a.clone(), c.missing_in_b.clone()),
            c.render_text()
                .replace(&a.path().display().to_string(), "OUT_A")
                .replace(&b.path().display().to_string(), "OUT_B"),
        );
        let expected = (
            (1, 1, 1, 1),
            (vec!["long-task-6".to_string()], vec!["t5".to_string()]),
            "\
A: OUT_A (model scripted)
B: OUT_B (model local, -c helpers.phases=false)

task                   A            B  rounds A  rounds B   USD A   USD B   s A   s B
long-task-6            -     resolved         -         2       -  0.0000     -   3.0
t1              resolved     resolved         2         1  0.0100  0.0000   3.0   1.5
t2              resolved  empty_patch         3        12  0.0200  0.0000   4.5  18.0
t3            unresolved     resolved         4         5  0.0000  0.0000   6.0   7.5
t4           empty_patch  empty_patch        10        12  0.0000  0.0000  15.0  18.0
t5              resolved            -         1         -  0.0000       -   1.5     -

resolved by A only: 1, by B only: 1, by both: 1, by neither: 1
not in A: long-task-6
not in B: t5
A: resolved 3 of 5 tasks, USD 0.0300, 30.0 s, median rounds 3.0
B: resolved 3 of 5 tasks, USD 0.0000, 48.0 s, median rounds 5.0
"
            .to_string(),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_folder_without_results_is_an_error_naming_it() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        write_result(a.path(), &scored("t1", 1, true, true));
        let actual = compare(a.path(), b.path()).err().map(|e| e.to_string());
        let expected = Some(format!(
            "{} holds no finished attempt (no */attempt-*/result.json): is it a `plumb eval --out` folder?",
            b.path().display()
        ));
        assert_eq!(actual, expected);
    }
}
