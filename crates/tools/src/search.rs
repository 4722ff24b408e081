//! The engine of the `search_code` tool (docs/contracts.md §3), built on ripgrep's own crates.
//!
//! Steps: build one line-oriented matcher (the query escaped unless `regex`, smart case), walk the
//! tree in parallel with `ignore` (honouring `.gitignore`, `.ignore` and `.git/info/exclude` even
//! without a `.git` folder, never entering `.git` or a build output folder such as a Cargo
//! `target/` or `node_modules/` (`plumb_context::build_output`), not following symlinks), read each regular file
//! through the confined reader (never a link, FIFO or device; at most [`MAX_SEARCHED_BYTES`]) and
//! search its bytes with `grep-searcher`, then sort what the threads found so the output never depends on scheduling.
//!
//! Invariants: binary files (a NUL byte) contribute nothing, not even the matches seen before the
//! NUL byte; `hits` holds at most `limit` rows, in path then line order; `total` counts every
//! matching line, shown or not. Hidden files other than `.git` are searched (`.github/` and dot
//! configs matter to tickets), so the matching `rg` command line is `rg --hidden -g '!.git'` (plus a `-g '!…'` per build output folder). The
//! user's global git excludes are not read: a search in a throwaway copy must not depend on whose
//! machine it runs on.

use std::io;
use std::path::{Component, Path};
use std::sync::mpsc;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::{WalkBuilder, WalkState};
use plumb_workspace::Tree;

/// The number of rows `search_code` shows by default (docs/contracts.md §8).
pub const DEFAULT_LIMIT: usize = 50;

/// A hit's text is cut to this many characters.
pub const MAX_TEXT_CHARS: usize = 200;

/// Files larger than this are not searched (generated data, logs): rows from them would not help.
pub const MAX_SEARCHED_BYTES: u64 = 16 * 1024 * 1024;

/// How many characters of a long line are kept before the match when the line is cut around it.
const CONTEXT_BEFORE_MATCH: usize = 60;

/// What to search for and where.
#[derive(Debug, Clone, Copy)]
pub struct SearchRequest<'a> {
    /// The workspace. Hit paths are relative to its root.
    pub tree: &'a Tree,
    /// An already-confined absolute file or folder inside the tree; `None` searches all of it.
    pub dir: Option<&'a Path>,
    pub query: &'a str,
    /// Treat `query` as a regular expression; otherwise it is matched literally.
    pub regex: bool,
    /// The most rows to keep (`DEFAULT_LIMIT` for the tool).
    pub limit: usize,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// Relative to the workspace root, with `/` separators.
    pub path: String,
    /// 1-based.
    pub line: u64,
    /// The line, trimmed, cut to `MAX_TEXT_CHARS` characters around the match with "…".
    pub text: String,
}

/// What a search found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchResult {
    /// At most `limit` hits, sorted by path then line.
    pub hits: Vec<SearchHit>,
    /// Every matching line, including the ones not in `hits`.
    pub total: usize,
    /// Files with at least one matching line.
    pub files: usize,
}

/// A search the model asked for that cannot run. The message is a sentence for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("the query is empty; give a word, a name or a phrase to search for.")]
    EmptyQuery,
    #[error(
        "search_code matches one line at a time and the query has a line break; search for one line of it."
    )]
    MultiLine,
    #[error("the regex `{query}` is invalid: {reason}; fix it or search with regex=false.")]
    InvalidRegex { query: String, reason: String },
    #[error("there is no file or folder called {path}.")]
    NotFound { path: String },
}

/// Searches the workspace. Files that cannot be read are skipped, like `rg` does.
pub fn search(req: &SearchRequest<'_>) -> Result<SearchResult, SearchError> {
    let matcher = build_matcher(req.query, req.regex)?;
    let root = req.tree.root();
    let start = req.dir.unwrap_or(root);
    if start.symlink_metadata().is_err() {
        return Err(SearchError::NotFound {
            path: relative_path(root, start),
        });
    }

    let mut walker = WalkBuilder::new(start);
    walker
        .hidden(false)
        .require_git(false)
        .git_global(false)
        .filter_entry(|entry| {
            entry.file_name() != ".git" && plumb_context::build_output::keep_entry(entry)
        });

    let (sender, receiver) = mpsc::channel::<FileHits>();
    walker.build_parallel().run(|| {
        let sender = sender.clone();
        let matcher = matcher.clone();
        let mut searcher = new_searcher();
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return WalkState::Continue;
            }
            let Ok(bytes) = req.tree.read_entry(entry.path(), MAX_SEARCHED_BYTES) else {
                return WalkState::Continue;
            };
            let mut sink = FileSink::new(&matcher, req.limit);
            if searcher.search_slice(&matcher, &bytes, &mut sink).is_err()
                || sink.binary
                || sink.count == 0
            {
                return WalkState::Continue;
            }
            let found = FileHits {
                path: relative_path(root, entry.path()),
                count: sink.count,
                hits: sink.hits,
            };
            match sender.send(found) {
                Ok(()) => WalkState::Continue,
                Err(_) => WalkState::Quit,
            }
        })
    });
    drop(sender);

    let mut found: Vec<FileHits> = receiver.into_iter().collect();
    found.sort_by(|a, b| a.path.cmp(&b.path));
    let mut result = SearchResult {
        hits: Vec::new(),
        total: found.iter().map(|file| file.count).sum(),
        files: found.len(),
    };
    'files: for file in found {
        for (line, text) in file.hits {
            if result.hits.len() >= req.limit {
                break 'files;
            }
            result.hits.push(SearchHit {
                path: file.path.clone(),
                line,
                text,
            });
        }
    }
    Ok(result)
}

/// The tool's answer: `path:line: text` rows; past `limit` the totals and a request for a narrower
/// search; with no hits, a sentence saying so.
pub fn render(result: &SearchResult, query: &str, limit: usize) -> String {
    if result.total == 0 {
        return format!("No matches for `{query}`.");
    }
    let shown = result.hits.len().min(limit);
    let mut text: String = result
        .hits
        .iter()
        .take(shown)
        .map(|hit| format!("{}:{}: {}\n", hit.path, hit.line, hit.text))
        .collect();
    if result.total > shown {
        let files = plural(result.files, "file", "files");
        text.push_str(&format!(
            "… {} matches in {files} in all; only the first {shown} are shown. \
             Search again with a more specific query or a path.",
            result.total
        ));
    } else {
        text.pop();
    }
    text
}

/// The hits of one file, as a walker thread found them.
struct FileHits {
    path: String,
    count: usize,
    hits: Vec<(u64, String)>,
}

/// Collects one file's matching lines. Only the first `limit` keep their text: every later line of
/// the same file sorts after them, so it can never be shown.
struct FileSink<'m> {
    matcher: &'m RegexMatcher,
    limit: usize,
    count: usize,
    hits: Vec<(u64, String)>,
    binary: bool,
}

impl<'m> FileSink<'m> {
    fn new(matcher: &'m RegexMatcher, limit: usize) -> Self {
        FileSink {
            matcher,
            limit,
            count: 0,
            hits: Vec::new(),
            binary: false,
        }
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let first = mat.line_number().unwrap_or(0);
        for (offset, line) in (0u64..).zip(mat.lines()) {
            self.count += 1;
            if self.hits.len() < self.limit {
                self.hits
                    .push((first + offset, hit_text(self.matcher, line)));
            }
        }
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

fn build_matcher(query: &str, regex: bool) -> Result<RegexMatcher, SearchError> {
    if query.is_empty() {
        return Err(SearchError::EmptyQuery);
    }
    if query.contains('\n') {
        return Err(SearchError::MultiLine);
    }
    RegexMatcherBuilder::new()
        .case_smart(true)
        .fixed_strings(!regex)
        .line_terminator(Some(b'\n'))
        .build(query)
        .map_err(|err| SearchError::InvalidRegex {
            query: query.to_string(),
            reason: regex_reason(&err.to_string()),
        })
}

/// The one line of a regex error that says what is wrong ("unclosed group"), without the
/// multi-line drawing of the pattern that regex-syntax puts around it.
fn regex_reason(message: &str) -> String {
    message
        .lines()
        .find_map(|line| line.strip_prefix("error: "))
        .map(str::to_string)
        .unwrap_or_else(|| message.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn new_searcher() -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .build()
}

/// The trimmed line, cut to `MAX_TEXT_CHARS`. A long line whose match lies past the cut is cut
/// around the match instead, so the model always sees why the line matched.
fn hit_text(matcher: &RegexMatcher, line: &[u8]) -> String {
    let line = String::from_utf8_lossy(line);
    let line = line.trim();
    let length = line.chars().count();
    if length <= MAX_TEXT_CHARS {
        return line.to_string();
    }
    let match_start = match matcher.find(line.as_bytes()) {
        Ok(Some(found)) => line
            .char_indices()
            .take_while(|(index, _)| *index < found.start())
            .count(),
        _ => 0,
    };
    if match_start + CONTEXT_BEFORE_MATCH < MAX_TEXT_CHARS {
        let mut text: String = line.chars().take(MAX_TEXT_CHARS).collect();
        text.push('…');
        return text;
    }
    let from = (match_start - CONTEXT_BEFORE_MATCH).min(length - MAX_TEXT_CHARS);
    let mut text = String::from("…");
    text.extend(line.chars().skip(from).take(MAX_TEXT_CHARS));
    if from + MAX_TEXT_CHARS < length {
        text.push('…');
    }
    text
}

/// `path` relative to `root` with `/` separators, whatever the platform.
fn relative_path(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = relative
        .components()
        .filter_map(|part| match part {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".to_string()),
            Component::RootDir | Component::Prefix(_) | Component::CurDir => None,
        })
        .collect();
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

fn plural(count: usize, one: &str, many: &str) -> String {
    if count == 1 {
        format!("{count} {one}")
    } else {
        format!("{count} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn matcher(query: &str) -> RegexMatcher {
        build_matcher(query, false).unwrap()
    }

    #[test]
    fn short_line_is_trimmed_only() {
        let actual = hit_text(&matcher("x"), b"    let x = 1;  \r");
        assert_eq!(actual, "let x = 1;");
    }

    #[test]
    fn long_line_with_early_match_keeps_head() {
        let line = format!("needle {}", "é".repeat(300));
        let actual = hit_text(&matcher("needle"), line.as_bytes());
        let expected = format!("needle {}…", "é".repeat(193));
        assert_eq!(actual, expected);
    }

    #[test]
    fn long_line_with_late_match_is_cut_around_it() {
        let line = format!("{}needle{}", "a".repeat(500), "b".repeat(500));
        let actual = hit_text(&matcher("needle"), line.as_bytes());
        let expected = format!("…{}needle{}…", "a".repeat(60), "b".repeat(134));
        assert_eq!(actual, expected);
    }

    #[test]
    fn long_line_with_match_at_the_end_ends_without_ellipsis() {
        let line = format!("{}needle", "a".repeat(500));
        let actual = hit_text(&matcher("needle"), line.as_bytes());
        let expected = format!("…{}needle", "a".repeat(194));
        assert_eq!(actual, expected);
    }

    #[test]
    fn invalid_regex_is_a_sentence() {
        let actual = build_matcher("(", true).unwrap_err().to_string();
        assert_eq!(
            actual,
            "the regex `(` is invalid: unclosed group; fix it or search with regex=false."
        );
    }

    #[test]
    fn literal_query_with_regex_characters_is_fine() {
        let actual = build_matcher("(", false).map(|_| ());
        assert_eq!(actual, Ok(()));
    }

    #[test]
    fn empty_and_multi_line_queries_are_refused() {
        let actual = [
            build_matcher("", false).map(|_| ()),
            build_matcher("a\nb", false).map(|_| ()),
        ];
        assert_eq!(
            actual,
            [Err(SearchError::EmptyQuery), Err(SearchError::MultiLine)]
        );
    }

    #[test]
    fn relative_paths_use_slashes() {
        let actual = [
            relative_path(Path::new("/w"), Path::new("/w/src/a.rs")),
            relative_path(Path::new("/w"), Path::new("/w")),
        ];
        assert_eq!(actual, ["src/a.rs".to_string(), ".".to_string()]);
    }

    #[test]
    fn render_no_matches() {
        let actual = render(&SearchResult::default(), "gst", 50);
        assert_eq!(actual, "No matches for `gst`.");
    }

    #[test]
    fn render_rows_and_overflow_note() {
        let hit = |line| SearchHit {
            path: "src/a.rs".to_string(),
            line,
            text: "gst".to_string(),
        };
        let result = SearchResult {
            hits: vec![hit(1), hit(2)],
            total: 7,
            files: 1,
        };
        let actual = render(&result, "gst", 2);
        let expected = "src/a.rs:1: gst\nsrc/a.rs:2: gst\n\
             … 7 matches in 1 file in all; only the first 2 are shown. \
             Search again with a more specific query or a path.";
        assert_eq!(actual, expected);
    }

    #[test]
    fn render_within_limit_is_rows_only() {
        let result = SearchResult {
            hits: vec![SearchHit {
                path: "a.py".to_string(),
                line: 3,
                text: "def gst():".to_string(),
            }],
            total: 1,
            files: 1,
        };
        let actual = render(&result, "gst", 50);
        assert_eq!(actual, "a.py:3: def gst():");
    }
}
