//! The Markdown output: one row per measurement and fixture (median and minimum in ms), with the
//! target beside the figures that have one and an honest yes/no judged on the median.

use crate::measure::Samples;

/// One row of the results table.
pub struct Row {
    pub what: String,
    pub fixture: String,
    pub median: String,
    pub min: String,
    pub target: String,
    pub meets: String,
}

impl Row {
    /// A timed row without a target.
    pub fn timed(what: impl Into<String>, fixture: &str, samples: &Samples) -> Row {
        Row {
            what: what.into(),
            fixture: fixture.to_string(),
            median: format!("{:.1}", samples.median()),
            min: format!("{:.1}", samples.min()),
            target: "—".to_string(),
            meets: "—".to_string(),
        }
    }

    /// A row whose cells are text (a ratio, or why something was not measured).
    pub fn text(what: impl Into<String>, fixture: &str, median: String, min: String) -> Row {
        Row {
            what: what.into(),
            fixture: fixture.to_string(),
            median,
            min,
            target: "—".to_string(),
            meets: "—".to_string(),
        }
    }

    /// Adds a target and whether the median meets it.
    pub fn target(mut self, target: &str, meets: bool) -> Row {
        self.target = target.to_string();
        self.meets = if meets { "yes" } else { "no" }.to_string();
        self
    }

    /// Adds a target that could not be judged.
    pub fn target_unjudged(mut self, target: &str, why: &str) -> Row {
        self.target = target.to_string();
        self.meets = why.to_string();
        self
    }
}

/// Renders rows as a Markdown table.
pub fn render(rows: &[Row]) -> String {
    let mut text = String::from(
        "| measurement | fixture | median ms | min ms | target | meets target |\n\
         |---|---|--:|--:|---|---|\n",
    );
    for row in rows {
        text.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            row.what, row.fixture, row.median, row.min, row.target, row.meets
        ));
    }
    text
}

/// `1234567` as `1,234,567` (the counts here are `usize`).
pub fn thousands(n: usize) -> String {
    plumb_protocol::thousands(n as u64)
}
