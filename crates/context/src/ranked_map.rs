//! The ranked repo map: the definitions and files that rank highest for a task ([`crate::rank`]),
//! as an outline of folders, files and definition lines, as large as a token budget allows.
//!
//! What goes in is decided by rank: the top definitions first, then the names of the remaining
//! files in rank order. How much goes in is the largest number of those that fits the budget,
//! found by bisection over the rendered text (so the budget is met by the real count of the
//! rendering, not by an estimate per line). What comes out is sorted by path, with each file's
//! definitions in line order, so the outline reads like the tree:
//!
//! ```text
//! billing/
//!   money.py
//!     1: class Money:
//!   tax.py
//!     3: def apply_gst(amount):
//! reports/monthly.py
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::rank::Ranking;
use crate::tag_index::TagIndex;
use crate::tags::TagKind;

const INDENT: &str = "  ";

/// The rendered map and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RankedMap {
    pub text: String,
    /// The text's size by the counter given.
    pub tokens: usize,
    /// Files shown (with definitions or by name), of `files_total`.
    pub files_shown: usize,
    pub files_total: usize,
    /// Definition lines shown.
    pub definitions_shown: usize,
}

/// One thing the map can show, in rank order.
#[derive(Debug, Clone, Copy)]
enum Unit<'a> {
    /// Every definition of `name` in the file at `path`.
    Definition { path: &'a str, name: &'a str },
    /// A file by name only.
    File { path: &'a str },
}

/// The map of `index` ranked by `ranking`, at most `max_tokens` by `count_tokens`.
pub fn render(
    index: &TagIndex,
    ranking: &Ranking,
    max_tokens: usize,
    count_tokens: &dyn Fn(&str) -> usize,
) -> RankedMap {
    let units = units(ranking);
    let render_first = |count: usize| render_units(index, units.get(..count).unwrap_or(&units));
    let fits_in = |count: usize| count_tokens(&render_first(count).text) <= max_tokens;
    // The largest prefix of the units that fits: the rendering only grows with the prefix. A
    // budget holds a few hundred of a large tree's hundred thousand units, so the prefix is
    // doubled until it no longer fits, and then bisected: a plain bisection's first steps
    // rendered half the tree each.
    let (mut fits, mut too_many) = (0, 1);
    while too_many <= units.len() && fits_in(too_many) {
        fits = too_many;
        too_many *= 2;
    }
    let mut too_many = too_many.min(units.len() + 1);
    while fits + 1 < too_many {
        let middle = fits + (too_many - fits) / 2;
        if fits_in(middle) {
            fits = middle;
        } else {
            too_many = middle;
        }
    }
    let mut map = render_first(fits);
    map.tokens = count_tokens(&map.text);
    map.files_total = index.files.len();
    map
}

/// The ranked definitions, then every file not yet named, by file rank.
fn units(ranking: &Ranking) -> Vec<Unit<'_>> {
    let mut units: Vec<Unit<'_>> = ranking
        .definitions
        .iter()
        .filter(|def| def.rank > 0.0)
        .map(|def| Unit::Definition {
            path: &def.path,
            name: &def.name,
        })
        .collect();
    let with_definitions: BTreeSet<&str> = units
        .iter()
        .filter_map(|unit| match unit {
            Unit::Definition { path, .. } => Some(*path),
            Unit::File { .. } => None,
        })
        .collect();
    units.extend(
        ranking
            .files
            .iter()
            .filter(|(path, _)| !with_definitions.contains(path.as_str()))
            .map(|(path, _)| Unit::File { path }),
    );
    units
}

fn render_units(index: &TagIndex, units: &[Unit<'_>]) -> RankedMap {
    let mut shown: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for unit in units {
        match *unit {
            Unit::Definition { path, name } => {
                shown.entry(path).or_default().insert(name);
            }
            Unit::File { path } => {
                shown.entry(path).or_default();
            }
        }
    }
    let mut text = String::new();
    let mut definitions_shown = 0;
    let mut open_dirs: Vec<&str> = Vec::new();
    for file in &index.files {
        let Some(names) = shown.get(file.path.as_str()) else {
            continue;
        };
        let mut parts: Vec<&str> = file.path.split('/').collect();
        let file_name = parts.pop().unwrap_or_default();
        let common = open_dirs
            .iter()
            .zip(&parts)
            .take_while(|(a, b)| a == b)
            .count();
        for (level, dir) in parts.iter().enumerate().skip(common) {
            push_line(&mut text, level, &format!("{dir}/"));
        }
        push_line(&mut text, parts.len(), file_name);
        let mut lines: Vec<(usize, &str)> = file
            .tags
            .iter()
            .filter(|tag| tag.kind == TagKind::Definition && names.contains(tag.name.as_str()))
            .map(|tag| (tag.line, tag.text.as_str()))
            .collect();
        lines.dedup_by_key(|(line, _)| *line);
        for (line, code) in lines {
            push_line(&mut text, parts.len() + 1, &format!("{line}: {code}"));
            definitions_shown += 1;
        }
        open_dirs = parts;
    }
    RankedMap {
        text,
        tokens: 0,
        files_shown: shown.len(),
        files_total: 0,
        definitions_shown,
    }
}

fn push_line(out: &mut String, level: usize, line: &str) {
    for _ in 0..level {
        out.push_str(INDENT);
    }
    out.push_str(line);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::rank::{Focus, rank};
    use crate::syntax::Language;
    use crate::tag_index::{IndexStats, IndexedFile};
    use crate::tags::tags;

    fn index() -> TagIndex {
        let sources = [
            ("README.md", ""),
            (
                "billing/money.py",
                "class Money:\n    def __add__(self, other):\n        return Money()\n",
            ),
            (
                "billing/tax.py",
                "from billing.money import Money\n\ndef apply_gst(amount):\n    return amount * Money()\n\n\
                 def _unused():\n    pass\n",
            ),
            (
                "billing/service.py",
                "def invoice_total(lines):\n    return apply_gst(sum(lines))\n",
            ),
            (
                "reports/monthly.py",
                "def monthly_report():\n    return Money()\n",
            ),
        ];
        let mut files: Vec<IndexedFile> = sources
            .iter()
            .map(|(path, source)| {
                let language = Language::from_path(std::path::Path::new(path));
                IndexedFile {
                    path: (*path).to_owned(),
                    language,
                    tags: std::sync::Arc::new(
                        language.map(|l| tags(l, source)).unwrap_or_default(),
                    ),
                }
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        TagIndex {
            files,
            stats: IndexStats::default(),
        }
    }

    fn lines(text: &str) -> usize {
        text.lines().count()
    }

    #[test]
    fn a_large_budget_shows_every_file_in_path_order_with_its_ranked_definitions() {
        let index = index();
        let ranking = rank(
            &index.files,
            &Focus::from_text("invoice_total is wrong", std::iter::empty()),
        );
        let map = render(&index, &ranking, 10_000, &lines);
        assert_eq!(
            map.text,
            "README.md\n\
             billing/\n\
             \x20 money.py\n\
             \x20   1: class Money:\n\
             \x20   2: def __add__(self, other):\n\
             \x20 service.py\n\
             \x20   1: def invoice_total(lines):\n\
             \x20 tax.py\n\
             \x20   3: def apply_gst(amount):\n\
             \x20   6: def _unused():\n\
             reports/\n\
             \x20 monthly.py\n\
             \x20   1: def monthly_report():\n"
        );
        assert_eq!(
            (map.files_shown, map.files_total, map.definitions_shown),
            (5, 5, 6)
        );
        assert_eq!(map.tokens, 13);
    }

    #[test]
    fn a_small_budget_keeps_the_highest_ranked_and_never_passes_the_budget() {
        let index = index();
        let ranking = rank(&index.files, &Focus::default());
        for budget in 0..12 {
            let map = render(&index, &ranking, budget, &lines);
            assert!(map.tokens <= budget, "{budget}: {}", map.text);
        }
        // Money is used by three files and ranks first; the next lines are Money's own methods,
        // then what the other files define.
        let three = render(&index, &ranking, 3, &lines);
        assert_eq!(three.text, "billing/\n  money.py\n    1: class Money:\n");
        let six = render(&index, &ranking, 6, &lines);
        assert_eq!(
            six.text,
            "billing/\n  money.py\n    1: class Money:\n    2: def __add__(self, other):\n  \
             tax.py\n    3: def apply_gst(amount):\n"
        );
        assert_eq!(render(&index, &ranking, 2, &lines).text, "");
    }
}
