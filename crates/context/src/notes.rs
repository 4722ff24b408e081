//! Project notes: what a repository tells an agent about itself, from the root down to the
//! folders in play.
//!
//! In each folder the first of `AGENTS.md`, `CLAUDE.md` and `.plumb/notes.md` that exists is its
//! notes file, and it applies to that folder's subtree (as Codex reads nested `AGENTS.md` files).
//! The folders read are the root and every folder on the way from it to a folder in play — the
//! folders of the files the ticket names and of the file the run starts from — so a monorepo's
//! `services/billing/AGENTS.md` is read for a billing ticket and its `services/search/AGENTS.md`
//! is not. Notes are listed root first, then deeper: the narrower one comes later and, read last,
//! is the one that refines the broader.
//!
//! Every file is read through the confined reader ([`Tree`]): a notes file (or a folder on its
//! way) that is a link out of the tree, a FIFO or too large is left out with a warning for a
//! person, never read. Each file is cut to [`MAX_CHARS`] characters, and files past
//! [`MAX_TOTAL_CHARS`] in all are left out with a warning: they sit in every request.

use std::collections::BTreeSet;

use plumb_workspace::Tree;

/// Notes file names, in the order looked for in each folder; the first found wins.
pub const FILE_NAMES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", ".plumb/notes.md"];
/// One notes file longer than this is cut.
pub const MAX_CHARS: usize = 8_000;
/// All notes together at most; a file that would pass it is left out.
pub const MAX_TOTAL_CHARS: usize = 16_000;
/// A notes file larger than this is not read at all.
const MAX_BYTES: u64 = 256 * 1024;
/// Folders deeper than this are not looked in (a ticket's path is a few folders deep).
const MAX_DEPTH: usize = 8;
/// At most this many folders are looked in: a ticket names a handful of paths, and a text
/// pasted with thousands must not turn into thousands of reads.
const MAX_FOLDERS: usize = 64;

/// One notes file read: its path from the root (`AGENTS.md`, `services/billing/AGENTS.md`) and
/// its text, cut to [`MAX_CHARS`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NotesFile {
    pub path: String,
    pub text: String,
}

/// The notes files that apply, root first, and a warning for each one left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectNotes {
    pub files: Vec<NotesFile>,
    pub warnings: Vec<String>,
}

/// The notes of the root and of every folder from it down to each of `in_play` (folders, relative
/// to the root, with `/`).
pub fn project_notes(tree: &Tree, in_play: &[String]) -> ProjectNotes {
    let mut folders = BTreeSet::from([String::new()]);
    for folder in in_play {
        if folders.len() >= MAX_FOLDERS {
            break;
        }
        let parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
        for depth in 1..=parts.len().min(MAX_DEPTH) {
            folders.insert(parts[..depth].join("/"));
        }
    }
    // Root first, then by depth, then by name: broader notes before the ones that refine them.
    let mut folders: Vec<String> = folders.into_iter().collect();
    folders.sort_by_key(|folder| {
        (
            folder.matches('/').count() + usize::from(!folder.is_empty()),
            folder.clone(),
        )
    });

    let mut notes = ProjectNotes::default();
    let mut total = 0;
    for folder in folders {
        let Some(file) = read_folder_notes(tree, &folder, &mut notes.warnings) else {
            continue;
        };
        let size = file.text.chars().count();
        if total + size > MAX_TOTAL_CHARS {
            notes.warnings.push(format!(
                "the project notes {} were left out: the notes before it already fill the {MAX_TOTAL_CHARS} characters every request can hold",
                file.path
            ));
            continue;
        }
        total += size;
        notes.files.push(file);
    }
    notes
}

/// The folders `text` (a ticket) names files or folders in: every word with a `/` that reads as
/// a relative path, without `..`, a scheme or a leading `/`; its folder (the word itself when it
/// ends with `/`).
pub fn folders_named(text: &str) -> Vec<String> {
    let mut folders = BTreeSet::new();
    for word in text.split(|c: char| c.is_whitespace() || "`'\"()[]{}<>,;".contains(c)) {
        let word = word.trim_end_matches(['.', ':', '!', '?']);
        let word = word.strip_prefix("./").unwrap_or(word);
        if !word.contains('/')
            || word.starts_with('/')
            || word.contains("://")
            || word.split('/').any(|part| part == ".." || part == ".")
        {
            continue;
        }
        let folder = match word.rsplit_once('/') {
            Some((folder, _)) => folder,
            None => continue,
        };
        if !folder.is_empty() {
            folders.insert(folder.to_string());
        }
    }
    folders.into_iter().collect()
}

/// The first notes file of `folder`, or `None`; a file that exists but is refused adds a warning
/// and the next name is tried, as if it were absent.
fn read_folder_notes(tree: &Tree, folder: &str, warnings: &mut Vec<String>) -> Option<NotesFile> {
    for name in FILE_NAMES {
        let path = if folder.is_empty() {
            name.to_string()
        } else {
            format!("{folder}/{name}")
        };
        match tree.read_text(&path, MAX_BYTES) {
            Ok(text) => {
                let text: String = text.chars().take(MAX_CHARS).collect();
                return Some(NotesFile { path, text });
            }
            Err(err) if err.is_missing() => {}
            Err(err) => warnings.push(format!("the project notes were not read: {err}")),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_ticket_names_folders_by_its_relative_paths_only() {
        let ticket = "Totals in `services/billing/invoice.py` are wrong (see services/billing/README). \
                      Also ./docs/guide.md, /etc/passwd, ../outside/x.py, https://example.com/a/b and plain words.";

        let actual = folders_named(ticket);

        assert_eq!(actual, ["docs", "services/billing"]);
    }
}
