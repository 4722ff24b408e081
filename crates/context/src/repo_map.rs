//! A directory outline with the definitions of each source file: the repo map's text and the `list_files` tool.
//!
//! Steps: (1) walk the tree with the `ignore` crate — `.gitignore`, `.ignore` and `.git/info/exclude` honoured even
//! outside a git repository, hidden files and folders skipped, symbolic links not followed, names sorted; (2) render
//! files in path order, each as one line with its definitions, under a header line per folder; (3) stop at the
//! budget, keeping whole files, and end with a line saying how many files were left out.
//!
//! Files are read and parsed only as far as the budget reaches, in batches spread over the cores (one tree-sitter
//! parser per language per thread), through the confined reader ([`plumb_workspace::Tree`]). Large (> 1 MB),
//! binary and non-UTF-8 files, symbolic links, FIFOs, sockets and devices (never opened) and files of languages we
//! do not parse are listed by name.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use ignore::WalkBuilder;
use plumb_workspace::Tree;

use crate::build_output;
use crate::outline::{self, Definition};
use crate::syntax::Language;

/// Files larger than this are listed by name without being parsed.
const MAX_PARSED_BYTES: u64 = 1024 * 1024;
/// How much of a file is inspected for NUL bytes to call it binary (what git looks at).
const BINARY_SNIFF_BYTES: usize = 8000;
const INDENT: &str = "  ";

/// How much outline to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepoMapOptions {
    /// Characters of output at most, the closing "more files" line included.
    pub max_chars: usize,
    /// Files shown at most.
    pub max_files: usize,
    /// Test files by name only, without their definitions: the embedded model's first message
    /// (its first round is evaluated token by token on the CPU, and long lists of test names
    /// are the largest part of a map it does not use).
    pub tests_by_name: bool,
}

impl Default for RepoMapOptions {
    fn default() -> Self {
        RepoMapOptions {
            max_chars: 16_000,
            max_files: 1_000,
            tests_by_name: false,
        }
    }
}

/// Why an outline could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RepoMapError {
    /// The folder or file to outline does not exist.
    #[error("there is no file or folder called {}.", path.display())]
    NotFound { path: PathBuf },
    /// It exists but could not be read.
    #[error("could not read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Renders the outline of `root`, or of `root/sub` when given (a folder or a single file), e.g.
///
/// ```text
/// billing/
///   invoice_totals.py: class InvoiceCalculator (12) { def total (15) }, def compute_totals (40)
/// README.md
/// ```
///
/// Paths are shown relative to the tree's root. `sub` must already be confined to it by the caller.
pub fn render_outline(
    tree: &Tree,
    sub: Option<&Path>,
    opts: &RepoMapOptions,
) -> Result<String, RepoMapError> {
    outline(tree, sub, opts).map(|outline| outline.text)
}

/// A rendered outline and how many files it left out for want of room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    pub text: String,
    pub files_left_out: usize,
}

/// [`render_outline`], saying how many files did not fit.
pub fn outline(
    tree: &Tree,
    sub: Option<&Path>,
    opts: &RepoMapOptions,
) -> Result<Outline, RepoMapError> {
    let root = tree.root();
    let target = match sub {
        Some(sub) => root.join(sub),
        None => root.to_path_buf(),
    };
    if let Err(source) = fs::symlink_metadata(&target) {
        let shown = sub.unwrap_or(root).to_path_buf();
        return Err(if source.kind() == io::ErrorKind::NotFound {
            RepoMapError::NotFound { path: shown }
        } else {
            RepoMapError::Io {
                path: shown,
                source,
            }
        });
    }
    let mut files = walk(root, &target);
    if opts.tests_by_name {
        for file in &mut files {
            file.name_only = crate::relevant::looks_like_test(&file.rel.to_string_lossy());
        }
    }
    Ok(render(tree, &files, opts))
}

/// One file found by the walk.
pub(crate) struct FileEntry {
    /// Relative to the root, never empty.
    pub(crate) rel: PathBuf,
    /// Where to read it.
    pub(crate) path: PathBuf,
    /// A regular file (not a link, FIFO, socket or device): the only kind that is ever read.
    pub(crate) is_file: bool,
    /// Listed by name, its definitions left out.
    name_only: bool,
}

/// The files under `target`, walked from `root` so that every ignore file between the two applies, and none
/// above `root`. Entries that cannot be read are skipped.
pub(crate) fn walk(root: &Path, target: &Path) -> Vec<FileEntry> {
    let mut builder = WalkBuilder::new(root);
    builder
        .standard_filters(true)
        .parents(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    let target_path = target.to_path_buf();
    let whole_tree = target == root;
    builder.filter_entry(move |entry| {
        let in_scope = whole_tree
            || entry.path().starts_with(&target_path)
            || target_path.starts_with(entry.path());
        in_scope && build_output::keep_entry(entry)
    });
    let mut files = Vec::new();
    for entry in builder.build().flatten() {
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            continue;
        }
        if entry.depth() > 0 && !entry.path().starts_with(target) {
            continue;
        }
        let rel = match entry.path().strip_prefix(root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.to_path_buf(),
            // The root itself is a file: show its name.
            _ => match entry.path().file_name() {
                Some(name) => PathBuf::from(name),
                None => continue,
            },
        };
        files.push(FileEntry {
            rel,
            is_file: file_type.is_file(),
            name_only: false,
            path: entry.into_path(),
        });
    }
    files
}

fn render(tree: &Tree, files: &[FileEntry], opts: &RepoMapOptions) -> Outline {
    if files.is_empty() {
        return Outline {
            text: "no files here (hidden and ignored files are not listed).\n".to_string(),
            files_left_out: 0,
        };
    }
    let reserve = more_files_line(files.len()).chars().count();
    let limit = files.len().min(opts.max_files);
    let mut lines = FileLines::new(tree, files);
    let mut out = String::new();
    let mut used = 0;
    let mut shown = 0;
    let mut open_dirs: Vec<String> = Vec::new();
    while shown < limit {
        let mut dirs = open_dirs.clone();
        let text = entry(&files[shown], &lines.get(shown), &mut dirs);
        let len = text.chars().count();
        if used + len + reserve <= opts.max_chars {
            out.push_str(&text);
            used += len;
            shown += 1;
            open_dirs = dirs;
            continue;
        }
        // Without room for the closing line, the rest is shown only if all of it fits.
        if limit == files.len() {
            let mut tail = text;
            let mut tail_len = len;
            let mut next = shown + 1;
            while used + tail_len <= opts.max_chars && next < files.len() {
                let more = entry(&files[next], &lines.get(next), &mut dirs);
                tail_len += more.chars().count();
                tail.push_str(&more);
                next += 1;
            }
            if used + tail_len <= opts.max_chars {
                out.push_str(&tail);
                shown = files.len();
            }
        }
        break;
    }
    if shown < files.len() {
        out.push_str(&more_files_line(files.len() - shown));
    }
    Outline {
        text: out,
        files_left_out: files.len() - shown,
    }
}

/// A file's line, preceded by a header for each folder not yet open; `open_dirs` becomes the file's folders.
fn entry(file: &FileEntry, line: &str, open_dirs: &mut Vec<String>) -> String {
    let dirs = dir_names(&file.rel);
    let common = open_dirs
        .iter()
        .zip(&dirs)
        .take_while(|(a, b)| a == b)
        .count();
    let mut text = String::new();
    for (level, dir) in dirs.iter().enumerate().skip(common) {
        push_indent(&mut text, level);
        text.push_str(dir);
        text.push_str("/\n");
    }
    push_indent(&mut text, dirs.len());
    text.push_str(line);
    text.push('\n');
    *open_dirs = dirs;
    text
}

/// The rendered line of each file, computed on demand in batches on all cores: only the files the budget lets
/// through are parsed, and a full map of a large repository still uses every core. Batches start small (a
/// small budget wastes little) and double.
struct FileLines<'f> {
    tree: &'f Tree,
    files: &'f [FileEntry],
    done: Vec<String>,
    batch: usize,
    threads: usize,
}

impl<'f> FileLines<'f> {
    const FIRST_BATCH: usize = 16;
    const MAX_BATCH: usize = 512;
    const MAX_THREADS: usize = 8;

    fn new(tree: &'f Tree, files: &'f [FileEntry]) -> Self {
        let threads = crate::pool::threads(Self::MAX_THREADS);
        FileLines {
            tree,
            files,
            done: Vec::new(),
            batch: Self::FIRST_BATCH,
            threads,
        }
    }

    /// The line of file `index`; files are asked for in order.
    fn get(&mut self, index: usize) -> String {
        if index >= self.done.len() {
            let start = self.done.len();
            let end = (start + self.batch).min(self.files.len()).max(index + 1);
            let batch = self.files.get(start..end).unwrap_or_default();
            self.done
                .extend(render_batch(self.tree, batch, self.threads));
            self.batch = (self.batch * 2).min(Self::MAX_BATCH);
        }
        // Each line is asked for once, so it can be moved out.
        self.done
            .get_mut(index)
            .map(std::mem::take)
            .unwrap_or_default()
    }
}

/// `file_line` for every file of `batch`, in order, on up to `threads` threads.
fn render_batch(tree: &Tree, batch: &[FileEntry], threads: usize) -> Vec<String> {
    crate::pool::map_slice(batch, threads, |file| file_line(tree, file))
        .into_iter()
        .zip(batch)
        // A file whose thread panicked is listed by name.
        .map(|(line, file)| line.unwrap_or_else(|| file_name(file)))
        .collect()
}

pub(crate) fn more_files_line(hidden: usize) -> String {
    let files = if hidden == 1 { "file" } else { "files" };
    format!("… {hidden} more {files} not shown; use list_files PATH for a folder.\n")
}

fn push_indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str(INDENT);
    }
}

/// The folder names on the way to a file, e.g. `["billing", "reports"]` for `billing/reports/monthly.py`.
fn dir_names(rel: &Path) -> Vec<String> {
    let mut names: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            Component::Prefix(_)
            | Component::RootDir
            | Component::CurDir
            | Component::ParentDir => None,
        })
        .collect();
    names.pop();
    names
}

fn file_name(file: &FileEntry) -> String {
    file.rel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `name.py: class A (1) { def f (2) }, def g (9)`, or the bare name when there is nothing to outline.
fn file_line(tree: &Tree, file: &FileEntry) -> String {
    let mut out = file_name(file);
    let Some(lang) = Language::from_path(&file.rel) else {
        return out;
    };
    if !file.is_file || file.name_only {
        return out;
    }
    let Some(source) = read_source(tree, &file.path) else {
        return out;
    };
    let defs = outline::definitions(lang, &source);
    if !defs.is_empty() {
        out.push_str(": ");
        render_definitions(&mut out, lang, &defs);
    }
    out
}

/// Top-level definitions separated by commas; the members of each inside `{ … }` after it.
fn render_definitions(out: &mut String, lang: Language, defs: &[Definition]) {
    let mut in_members = false;
    for (index, def) in defs.iter().enumerate() {
        if def.depth == 0 {
            if in_members {
                out.push_str(" }");
                in_members = false;
            }
            if index > 0 {
                out.push_str(", ");
            }
        } else if in_members {
            out.push_str(", ");
        } else {
            out.push_str(" { ");
            in_members = true;
        }
        out.push_str(def.kind.keyword(lang));
        out.push(' ');
        out.push_str(&def.name);
        out.push_str(" (");
        out.push_str(&def.line.to_string());
        out.push(')');
    }
    if in_members {
        out.push_str(" }");
    }
}

/// The text of a file worth parsing: at most 1 MB, no NUL byte near the start, valid UTF-8.
pub(crate) fn read_source(tree: &Tree, path: &Path) -> Option<String> {
    let bytes = tree.read_entry(path, MAX_PARSED_BYTES).ok()?;
    let head = bytes.get(..BINARY_SNIFF_BYTES).unwrap_or(&bytes);
    if head.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::outline::DefKind;

    fn def(kind: DefKind, name: &str, line: usize, depth: usize) -> Definition {
        Definition {
            kind,
            name: name.to_string(),
            line,
            depth,
        }
    }

    #[test]
    fn members_go_in_braces() {
        let defs = [
            def(DefKind::Class, "A", 1, 0),
            def(DefKind::Method, "f", 2, 1),
            def(DefKind::Method, "g", 4, 1),
            def(DefKind::Function, "h", 9, 0),
            def(DefKind::Class, "B", 12, 0),
            def(DefKind::Method, "k", 13, 1),
        ];
        let mut actual = String::new();
        render_definitions(&mut actual, Language::Python, &defs);
        assert_eq!(
            actual,
            "class A (1) { def f (2), def g (4) }, def h (9), class B (12) { def k (13) }"
        );
    }

    #[test]
    fn dir_names_of_nested_file() {
        let actual = dir_names(Path::new("billing/reports/monthly.py"));
        assert_eq!(actual, ["billing", "reports"]);
    }

    #[test]
    fn more_files_line_counts() {
        let actual = [more_files_line(1), more_files_line(7)];
        assert_eq!(
            actual,
            [
                "… 1 more file not shown; use list_files PATH for a folder.\n",
                "… 7 more files not shown; use list_files PATH for a folder.\n",
            ]
            .map(String::from)
        );
    }
}
