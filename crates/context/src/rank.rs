//! Which files and definitions a task needs most: a personalised PageRank over the graph of which
//! file uses a name which file defines.
//!
//! Every file is a node. For each name that some file uses ([`TagKind::Reference`]) and some file
//! defines ([`TagKind::Definition`]), an edge runs from each user to each definer, weighted by how
//! often the user uses it (square root, so one busy caller does not drown the rest) and by what the
//! name is: a name the ticket mentions counts ten times, a long multi-word name (`line_totals`,
//! `applyDiscount`) ten times, a private name (`_helper`) a tenth, a name defined in more than five
//! files (`__init__`, `new`) a tenth. A name nobody uses gets a weak edge from its definer to
//! itself, so its file still ranks. The walk restarts at the files the ticket and the history name
//! — the personalisation — so rank flows from the task's own files to what they use: a file named
//! by its path, or whose stem is a word of the text (in any case when the stem has five characters
//! or more, as Aider matches them), weighs one or two; a folder whose name is a word of the text
//! weighs one in all, shared by the files under it (a ticket that names the project names the
//! folder of every file). This is the ranking Aider's repo map makes, and the
//! scores are NetworkX's `pagerank` (damping 0.85, dangling rank back to the personalisation, the
//! same stopping rule), checked against it in the tests.
//!
//! The graph is a petgraph `DiGraph` (one edge per file pair and name). petgraph's own `page_rank`
//! is not used: it takes no edge weights and no personalisation, and each of its iterations is
//! quadratic in the node count (minutes on a 10,000-file tree); the power iteration here is linear
//! in the edges.
//!
//! A definition's rank is the share of rank that flows into its file along the edges of its name,
//! so the map can keep the definitions that matter and drop the rest of a large file.

use std::collections::{BTreeMap, BTreeSet};

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
// Names are hashed millions of times on a large tree: FxHash, not SipHash (no untrusted key
// can make it slow enough to matter: a tree's names are bounded by its size).
use rustc_hash::FxHashMap;

use crate::tag_index::IndexedFile;
use crate::tags::TagKind;

/// The damping factor: the chance the walk follows an edge rather than restarting.
const DAMPING: f64 = 0.85;
/// Power iterations at most, and the stopping rule (as NetworkX: summed change < files × tolerance).
const MAX_ITERATIONS: usize = 100;
const TOLERANCE: f64 = 1.0e-6;

/// What the task points at: the text of the ticket and of the recent history.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Focus {
    /// Identifiers the text mentions (every word of letters, digits and `_`).
    pub names: BTreeSet<String>,
    /// Files the text names, by path.
    pub paths: BTreeSet<String>,
}

impl Focus {
    /// The identifiers of `text` and the files of `files` it names: by path, or by file name when
    /// the name has an extension (`billing.py`).
    pub fn from_text<'a>(text: &str, files: impl IntoIterator<Item = &'a str>) -> Focus {
        let names: BTreeSet<String> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|word| !word.is_empty() && !word.chars().all(|c| c.is_ascii_digit()))
            .map(str::to_owned)
            .collect();
        let words: BTreeSet<&str> = text
            .split(|c: char| c.is_whitespace() || "`'\"()[]{}<>,;:".contains(c))
            .map(|word| word.trim_end_matches(['.', '!', '?']))
            .filter(|word| !word.is_empty())
            .collect();
        let mut paths = BTreeSet::new();
        for path in files {
            let file_name = path.rsplit('/').next().unwrap_or(path);
            let named_by_file_name = file_name.contains('.') && words.contains(file_name);
            if named_by_file_name || (path.contains('/') && text.contains(path)) {
                paths.insert(path.to_owned());
            }
        }
        Focus { names, paths }
    }
}

/// A definition and the rank that flows to it.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedDefinition {
    pub path: String,
    pub name: String,
    pub rank: f64,
}

/// Files and definitions, highest rank first (ties by path, then name, so the order is stable).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ranking {
    /// Every file given, with its PageRank (they sum to 1).
    pub files: Vec<(String, f64)>,
    pub definitions: Vec<RankedDefinition>,
}

/// Ranks `files` for `focus`.
pub fn rank(files: &[IndexedFile], focus: &Focus) -> Ranking {
    if files.is_empty() {
        return Ranking::default();
    }
    let (graph, names) = build_graph(files, focus);
    let restart = personalisation(files, focus);
    let scores = personalised_page_rank(&graph, &restart);

    let mut ranked_files: Vec<(String, f64)> = files
        .iter()
        .zip(&scores)
        .map(|(file, score)| (file.path.clone(), *score))
        .collect();
    ranked_files.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));

    // Hashed, not ordered: each key's sum is taken in the graph's edge order either way, and the
    // definitions are sorted below by a total order. An ordered map spent most of a warm `plumb
    // map` comparing names.
    let mut flows: FxHashMap<(usize, u32), f64> = FxHashMap::default();
    for node in graph.node_indices() {
        let out_weight: f64 = graph.edges(node).map(|e| e.weight().weight).sum();
        if out_weight <= 0.0 {
            continue;
        }
        for edge in graph.edges(node) {
            let flow = scores[node.index()] * edge.weight().weight / out_weight;
            *flows
                .entry((edge.target().index(), edge.weight().name))
                .or_default() += flow;
        }
    }
    let mut definitions: Vec<RankedDefinition> = flows
        .into_iter()
        .filter_map(|((file, name), rank)| {
            Some(RankedDefinition {
                path: files.get(file)?.path.clone(),
                name: (*names.get(name as usize)?).to_owned(),
                rank,
            })
        })
        .collect();
    definitions.sort_by(|a, b| {
        b.rank
            .total_cmp(&a.rank)
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.name.cmp(&b.name))
    });
    Ranking {
        files: ranked_files,
        definitions,
    }
}

/// One edge: a name the source file uses and the target defines (its number in the names
/// [`build_graph`] returns), and how much it counts.
#[derive(Debug, Clone, Copy)]
struct Use {
    name: u32,
    weight: f64,
}

/// The graph, and the defined names its edges number, sorted.
fn build_graph<'a>(files: &'a [IndexedFile], focus: &Focus) -> (DiGraph<(), Use>, Vec<&'a str>) {
    let mut graph = DiGraph::with_capacity(files.len(), 0);
    let nodes: Vec<NodeIndex> = files.iter().map(|_| graph.add_node(())).collect();

    // Files in index order: each list below is ascending (as an ordered set or map would keep
    // it) by appending, a file's repeats folded into its last entry.
    let mut definers: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    let mut users: FxHashMap<&str, Vec<(usize, usize)>> = FxHashMap::default();
    for (index, file) in files.iter().enumerate() {
        for tag in file.tags.iter() {
            match tag.kind {
                TagKind::Definition => {
                    let files = definers.entry(&tag.name).or_default();
                    if files.last() != Some(&index) {
                        files.push(index);
                    }
                }
                TagKind::Reference => {
                    let files = users.entry(&tag.name).or_default();
                    match files.last_mut() {
                        Some((user, uses)) if *user == index => *uses += 1,
                        _ => files.push((index, 1)),
                    }
                }
            }
        }
    }

    // Sorted, so edges (and float sums over them) come in the same order on every run.
    let mut names: Vec<&str> = definers.keys().copied().collect();
    names.sort_unstable();
    for (number, &name) in names.iter().enumerate() {
        let number = u32::try_from(number).unwrap_or(u32::MAX);
        let Some(defined_in) = definers.get(name) else {
            continue;
        };
        let Some(used_by) = users.get(name) else {
            for &definer in defined_in {
                graph.add_edge(
                    nodes[definer],
                    nodes[definer],
                    Use {
                        name: number,
                        weight: 0.1,
                    },
                );
            }
            continue;
        };
        let weight = name_weight(name, defined_in.len(), focus);
        for &(user, uses) in used_by {
            for &definer in defined_in {
                graph.add_edge(
                    nodes[user],
                    nodes[definer],
                    Use {
                        name: number,
                        weight: weight * (uses as f64).sqrt(),
                    },
                );
            }
        }
    }
    (graph, names)
}

/// How much an edge for `name` counts, before the number of uses.
fn name_weight(name: &str, definers: usize, focus: &Focus) -> f64 {
    let mut weight = 1.0;
    if focus.names.contains(name) {
        weight *= 10.0;
    }
    let has_letters = name.chars().any(char::is_alphabetic);
    let multi_word = (name.contains('_') && has_letters)
        || (name.chars().any(char::is_uppercase) && name.chars().any(char::is_lowercase));
    if multi_word && name.chars().count() >= 8 {
        weight *= 10.0;
    }
    if name.starts_with('_') {
        weight *= 0.1;
    }
    if definers > 5 {
        weight *= 0.1;
    }
    weight
}

/// Where the walk restarts: the files the focus names or whose path has a part it mentions;
/// everywhere alike when it names none.
fn personalisation(files: &[IndexedFile], focus: &Focus) -> Vec<f64> {
    let lowercase_names: BTreeSet<String> =
        focus.names.iter().map(|name| name.to_lowercase()).collect();
    // A folder the text names counts as one file, its weight shared by the files under it: a
    // ticket that says "sqlfluff 0.6.9" names the folder every file of the project is in, and
    // must not drown the one file whose own name it gives (rules/L031.py).
    let mut folder_files: BTreeMap<&str, usize> = BTreeMap::new();
    for file in files {
        for folder in mentioned_folders(&file.path, focus) {
            *folder_files.entry(folder).or_default() += 1;
        }
    }
    let restart: Vec<f64> = files
        .iter()
        .map(|file| {
            let named = focus.paths.contains(&file.path);
            let file_name = file.path.rsplit('/').next().unwrap_or(&file.path);
            let stem = file_name.split('.').next().unwrap_or(file_name);
            // Exactly as written, or in any case when the stem is long enough not to be a
            // common word (Aider's rule: five characters).
            let stem_mentioned = focus.names.contains(stem)
                || (stem.chars().count() >= 5 && lowercase_names.contains(&stem.to_lowercase()));
            let in_folders: f64 = mentioned_folders(&file.path, focus)
                .map(|folder| 1.0 / folder_files[folder] as f64)
                .sum();
            f64::from(u8::from(named) + u8::from(stem_mentioned)) + in_folders
        })
        .collect();
    let total: f64 = restart.iter().sum();
    if total > 0.0 {
        restart.iter().map(|weight| weight / total).collect()
    } else {
        vec![1.0 / files.len() as f64; files.len()]
    }
}

/// The folders of `path` (each as the path prefix that ends with it) whose own name `focus`
/// mentions.
fn mentioned_folders<'a>(path: &'a str, focus: &'a Focus) -> impl Iterator<Item = &'a str> + 'a {
    path.match_indices('/').filter_map(move |(at, _)| {
        let folder = path.get(..at)?;
        let name = folder.rsplit('/').next().unwrap_or(folder);
        focus.names.contains(name).then_some(folder)
    })
}

/// PageRank with a restart distribution, by power iteration: NetworkX's `pagerank` with
/// `personalization` (dangling files give their rank back along the restart distribution).
fn personalised_page_rank(graph: &DiGraph<(), Use>, restart: &[f64]) -> Vec<f64> {
    let count = graph.node_count();
    let out_weight: Vec<f64> = graph
        .node_indices()
        .map(|node| {
            graph
                .edges_directed(node, Direction::Outgoing)
                .map(|e| e.weight().weight)
                .sum()
        })
        .collect();
    // The edges as flat arrays, each with the share of its source's rank it carries: the
    // iterations below walk them a hundred times.
    let edges: Vec<(usize, usize, f64)> = graph
        .edge_references()
        .map(|edge| {
            let source = edge.source().index();
            (
                source,
                edge.target().index(),
                edge.weight().weight / out_weight[source],
            )
        })
        .collect();
    let mut scores = vec![1.0 / count as f64; count];
    for _ in 0..MAX_ITERATIONS {
        let dangling: f64 = DAMPING
            * scores
                .iter()
                .zip(&out_weight)
                .filter(|(_, weight)| **weight <= 0.0)
                .map(|(score, _)| score)
                .sum::<f64>();
        let mut next: Vec<f64> = restart
            .iter()
            .map(|share| (dangling + (1.0 - DAMPING)) * share)
            .collect();
        for &(source, target, share) in &edges {
            next[target] += DAMPING * scores[source] * share;
        }
        let change: f64 = next.iter().zip(&scores).map(|(a, b)| (a - b).abs()).sum();
        scores = next;
        if change < count as f64 * TOLERANCE {
            break;
        }
    }
    scores
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::Language;
    use crate::tags::Tag;

    fn tag(kind: TagKind, name: &str) -> Tag {
        Tag {
            line: 1,
            kind,
            role: "function".to_owned(),
            name: name.to_owned(),
            text: String::new(),
        }
    }

    fn file(path: &str, defines: &[&str], uses: &[&str]) -> IndexedFile {
        let mut tags: Vec<Tag> = defines
            .iter()
            .map(|name| tag(TagKind::Definition, name))
            .collect();
        tags.extend(uses.iter().map(|name| tag(TagKind::Reference, name)));
        IndexedFile {
            path: path.to_owned(),
            language: Some(Language::Python),
            tags: std::sync::Arc::new(tags),
        }
    }

    fn score(ranking: &Ranking, path: &str) -> f64 {
        ranking
            .files
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, s)| *s)
            .unwrap_or(f64::NAN)
    }

    /// A small repository: a service that uses a tax module and a money module, a report that
    /// uses the money module twice, and a test of the service.
    fn repository() -> Vec<IndexedFile> {
        vec![
            file(
                "billing/service.py",
                &["invoice_total"],
                &["apply_gst", "Money"],
            ),
            file(
                "billing/tax.py",
                &["apply_gst", "_rate"],
                &["_rate", "Money"],
            ),
            file("billing/money.py", &["Money"], &[]),
            file(
                "reports/monthly.py",
                &["monthly_report"],
                &["Money", "Money"],
            ),
            file("tests/test_service.py", &["test_total"], &["invoice_total"]),
        ]
    }

    #[test]
    fn scores_are_networkx_pagerank_with_the_same_graph_and_personalisation() {
        // Expected values from NetworkX 3.6.1 on the same weighted multigraph:
        //   G = nx.MultiDiGraph(); G.add_nodes_from(range(5))
        //   edges (source, target, weight): (0,1,10) apply_gst, (0,2,1) Money, (1,2,1) Money,
        //   (1,1,0.1) _rate, (3,2,sqrt 2) Money, (3,3,0.1) monthly_report, (4,0,10) invoice_total,
        //   (4,4,0.1) test_total
        //   nx.pagerank(G, weight="weight", personalization={0: 1, 1: 0, 2: 0, 3: 0, 4: 0})
        // (the pure-Python `_pagerank_python`, which gives what the SciPy one does).
        let files = repository();
        let focus = Focus {
            names: BTreeSet::new(),
            paths: BTreeSet::from(["billing/service.py".to_owned()]),
        };
        let ranking = rank(&files, &focus);
        let expected = [
            ("billing/service.py", 0.390_347_900),
            ("billing/tax.py", 0.326_890_606),
            ("billing/money.py", 0.282_761_494),
            ("reports/monthly.py", 0.0),
            ("tests/test_service.py", 0.0),
        ];
        for (path, want) in expected {
            let got = score(&ranking, path);
            assert!((got - want).abs() < 1e-6, "{path}: {got} != {want}");
        }
        let total: f64 = ranking.files.iter().map(|(_, s)| s).sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
    }

    #[test]
    fn the_files_the_ticket_names_and_what_they_use_come_first() {
        let files = repository();
        let ticket = "GST is charged before the discount in billing/service.py";
        let focus = Focus::from_text(ticket, files.iter().map(|f| f.path.as_str()));
        assert_eq!(
            focus.paths,
            BTreeSet::from(["billing/service.py".to_owned()])
        );
        let ranking = rank(&files, &focus);
        let order: Vec<&str> = ranking.files.iter().map(|(p, _)| p.as_str()).collect();
        // The named file, then what it uses (the folder the path also names, billing/, weighs
        // one file's worth shared by its three files).
        assert_eq!(
            &order[..3],
            &["billing/service.py", "billing/tax.py", "billing/money.py"]
        );
        // The definitions the focused file uses lead; an unused private helper trails.
        let first = ranking.definitions.first().map(|d| d.name.as_str());
        assert_eq!(first, Some("Money"));
        let rate = ranking.definitions.iter().position(|d| d.name == "_rate");
        let gst = ranking
            .definitions
            .iter()
            .position(|d| d.name == "apply_gst");
        assert!(gst < rate, "{:?}", ranking.definitions);
    }

    #[test]
    fn a_mentioned_name_pulls_its_definer_up() {
        let files = repository();
        let plain = rank(&files, &Focus::default());
        let focus = Focus::from_text("apply_gst charges too much", std::iter::empty());
        let focused = rank(&files, &focus);
        assert!(
            score(&focused, "billing/tax.py") > score(&plain, "billing/tax.py"),
            "{focused:?} vs {plain:?}"
        );
    }

    #[test]
    fn without_focus_every_file_may_restart_and_the_most_used_ranks_first() {
        let files = repository();
        let ranking = rank(&files, &Focus::default());
        assert_eq!(
            ranking.files.first().map(|(p, _)| p.as_str()),
            Some("billing/money.py")
        );
        assert!(ranking.files.iter().all(|(_, s)| *s > 0.0));
        assert_eq!(rank(&[], &Focus::default()), Ranking::default());
    }

    #[test]
    fn a_file_named_by_its_stem_outranks_a_folder_the_ticket_also_names() {
        // sqlfluff__sqlfluff-1625's shape: the ticket names the project ("sqlfluff 0.6.9") and
        // the rule ("L031"), whose file is one of many under the project's folder.
        let mut files: Vec<IndexedFile> = (0..30)
            .map(|i| file(&format!("src/sqlfluff/core/part{i}.py"), &["helper"], &[]))
            .collect();
        files.push(file("src/sqlfluff/rules/L031.py", &["Rule_L031"], &[]));
        let ticket = "TSQL - L031 incorrectly triggers on sqlfluff 0.6.9";
        let focus = Focus::from_text(ticket, files.iter().map(|f| f.path.as_str()));

        let ranking = rank(&files, &focus);

        assert_eq!(ranking.files[0].0, "src/sqlfluff/rules/L031.py");
    }

    #[test]
    fn focus_reads_identifiers_and_file_names_not_numbers_or_unknown_paths() {
        let files = ["src/billing.py", "src/util.py", "README"];
        let focus = Focus::from_text(
            "Fix `line_totals` in billing.py (see issue 412); README is fine.",
            files,
        );
        assert!(focus.names.contains("line_totals"));
        assert!(!focus.names.contains("412"));
        assert_eq!(focus.paths, BTreeSet::from(["src/billing.py".to_owned()]));
    }
}
