//! The repo map of a run's first message, within a token budget, and the slice of it
//! `list_files` shows for a folder.
//!
//! A repository whose whole outline fits the budget is shown whole, as the outline
//! ([`crate::repo_map`]): every file with its definitions, nothing for a ranking to leave out. A
//! larger one gets the ranked map ([`crate::ranked_map`]): the files and definitions that rank
//! highest for the ticket, as many as the budget holds, and a line saying how many files are not
//! shown. The tags behind the ranking are kept between runs in the cache file the caller names
//! ([`crate::tag_cache_file`]), so only a repository's first run parses all of it.
//!
//! `list_files PATH` ([`folder_map`]) follows the same rule for one folder: its whole outline when
//! it fits, else the part of the ranked map under it — ranked over the whole repository, since
//! who uses a folder's names is mostly outside it.

use std::path::Path;

use plumb_workspace::Tree;

use crate::rank::{Focus, rank};
use crate::ranked_map;
use crate::repo_map::{self, RepoMapError, RepoMapOptions, more_files_line};
use crate::tag_cache_file;
use crate::tag_index;

/// The most files an outline lists before it is called too large to show whole.
const MAX_OUTLINE_FILES: usize = 2_000;
/// Characters of outline rendered per token of budget: twice what the embedded model's tokenizer
/// packs in a token of code and English (3.3–4.0 bytes), so an outline cut by characters would
/// also have been over the budget in tokens.
const OUTLINE_CHARS_PER_TOKEN: usize = 8;

/// What the map is made of and where its tags are kept.
#[derive(Debug, Clone, Copy)]
pub struct RunMapOptions<'a> {
    /// Tokens of map at most, by the counter given.
    pub max_tokens: usize,
    /// In the outline, test files by name only (see [`RepoMapOptions::tests_by_name`]).
    pub tests_by_name: bool,
    /// The tag cache file of the repository; `None`: every file is parsed.
    pub cache_file: Option<&'a Path>,
}

/// Which map a run shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMapKind {
    /// The whole outline.
    Outline,
    /// The ranked map: `files_shown` of `files_total`.
    Ranked {
        files_shown: usize,
        files_total: usize,
        definitions_shown: usize,
    },
}

/// The map and how it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunMap {
    pub text: String,
    /// The text's size by the counter given.
    pub tokens: usize,
    pub kind: RunMapKind,
    /// For a person: the tag cache could not be kept (the next run parses every file again).
    pub warning: Option<String>,
}

/// The map of `tree` for `ticket` within `options.max_tokens` by `count_tokens`.
pub fn run_map(
    tree: &Tree,
    ticket: &str,
    options: &RunMapOptions<'_>,
    count_tokens: &dyn Fn(&str) -> usize,
) -> Result<RunMap, RepoMapError> {
    let outline = repo_map::outline(
        tree,
        None,
        &RepoMapOptions {
            max_chars: options.max_tokens.saturating_mul(OUTLINE_CHARS_PER_TOKEN),
            max_files: MAX_OUTLINE_FILES,
            tests_by_name: options.tests_by_name,
        },
    )?;
    if outline.files_left_out == 0 {
        let tokens = count_tokens(&outline.text);
        if tokens <= options.max_tokens {
            return Ok(RunMap {
                text: outline.text,
                tokens,
                kind: RunMapKind::Outline,
                warning: None,
            });
        }
    }

    let map = ranked(
        tree,
        ticket,
        options.cache_file,
        &|_| true,
        options.max_tokens,
        count_tokens,
    );
    Ok(RunMap {
        tokens: count_tokens(&map.text),
        text: map.text,
        kind: RunMapKind::Ranked {
            files_shown: map.files_shown,
            files_total: map.files_total,
            definitions_shown: map.definitions_shown,
        },
        warning: map.warning,
    })
}

/// A ranked map, its closing line included, and the tag cache's warning.
struct Ranked {
    text: String,
    files_shown: usize,
    /// The files `keep` accepted.
    files_total: usize,
    definitions_shown: usize,
    warning: Option<String>,
}

/// The map ranked for `ticket` over the whole tree, of the files `keep` accepts, within
/// `max_tokens` with the line saying how many of them are not shown. The tags come from, and go
/// back to, `cache_file`.
fn ranked(
    tree: &Tree,
    ticket: &str,
    cache_file: Option<&Path>,
    keep: &dyn Fn(&str) -> bool,
    max_tokens: usize,
    count_tokens: &dyn Fn(&str) -> usize,
) -> Ranked {
    let mut cache = cache_file.map(tag_cache_file::load).unwrap_or_default();
    let index = tag_index::build(tree, &mut cache);
    let warning = cache_file.and_then(|path| {
        tag_cache_file::keep(path, &cache).err().map(|why| {
            format!(
                "the repository's tags could not be kept at {} ({why}); the next run parses every file again: make that folder writable, or set XDG_CACHE_HOME to a folder that is",
                path.display()
            )
        })
    });
    let paths = index.files.iter().map(|file| file.path.as_str());
    let mut ranking = rank(&index.files, &Focus::from_text(ticket, paths));
    ranking.files.retain(|(path, _)| keep(path));
    ranking
        .definitions
        .retain(|definition| keep(&definition.path));
    let files_total = ranking.files.len();
    // Room for the closing line at its longest, so the map with it stays within the budget.
    let closing_room = count_tokens(&more_files_line(files_total));
    let budget = max_tokens.saturating_sub(closing_room);
    let map = ranked_map::render(&index, &ranking, budget, count_tokens);
    let mut text = map.text;
    if map.files_shown < files_total {
        text.push_str(&more_files_line(files_total - map.files_shown));
    }
    Ranked {
        text,
        files_shown: map.files_shown,
        files_total,
        definitions_shown: map.definitions_shown,
        warning,
    }
}

/// What `list_files` shows of a folder, and where the tags are kept.
#[derive(Debug, Clone, Copy)]
pub struct FolderMapOptions<'a> {
    /// Characters of outline at most (the whole outline is shown when it fits).
    pub max_chars: usize,
    /// Files an outline lists at most.
    pub max_files: usize,
    /// Tokens of ranked slice at most, by the counter given.
    pub max_tokens: usize,
    pub cache_file: Option<&'a Path>,
}

/// `list_files`: the outline of `sub` (a folder or file under the tree's root, or the root when
/// `None`) when it fits whole, else the slice of the map ranked for `ticket` under it, ending
/// with how many of its files are not shown.
pub fn folder_map(
    tree: &Tree,
    sub: Option<&Path>,
    ticket: &str,
    options: &FolderMapOptions<'_>,
    count_tokens: &dyn Fn(&str) -> usize,
) -> Result<String, RepoMapError> {
    let outline = repo_map::outline(
        tree,
        sub,
        &RepoMapOptions {
            max_chars: options.max_chars,
            max_files: options.max_files,
            tests_by_name: false,
        },
    )?;
    if outline.files_left_out == 0 {
        return Ok(outline.text);
    }
    let prefix = sub
        .map(|sub| sub.strip_prefix(tree.root()).unwrap_or(sub))
        .map(|rel| rel.to_string_lossy().replace('\\', "/"))
        .filter(|rel| !rel.is_empty() && rel != ".");
    let under = |path: &str| match &prefix {
        Some(prefix) => {
            path == prefix
                || path
                    .strip_prefix(prefix.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        }
        None => true,
    };
    // A cache that cannot be kept costs the next call its parsing; the run's first message
    // already warned about it.
    let map = ranked(
        tree,
        ticket,
        options.cache_file,
        &under,
        options.max_tokens,
        count_tokens,
    );
    Ok(map.text)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    use crate::size::estimated_count as count;

    /// A package of `modules` files, each defining a function that calls `shared` of
    /// `util.py`; `tax.py` defines `apply_gst`, which `invoice.py` calls.
    fn package(root: &Path, modules: usize) {
        fs::create_dir_all(root.join("billing")).unwrap();
        fs::write(
            root.join("billing/util.py"),
            "def shared(value):\n    return value\n",
        )
        .unwrap();
        for n in 0..modules {
            fs::write(
                root.join(format!("billing/module_{n:03}.py")),
                format!("from billing.util import shared\n\ndef helper_{n}(value):\n    return shared(value)\n"),
            )
            .unwrap();
        }
        fs::write(
            root.join("billing/tax.py"),
            "def apply_gst(amount):\n    return amount * 118 / 100\n",
        )
        .unwrap();
        fs::write(
            root.join("billing/invoice.py"),
            "from billing.tax import apply_gst\n\ndef total(amount):\n    return apply_gst(amount)\n",
        )
        .unwrap();
    }

    fn options(max_tokens: usize, cache_file: Option<&Path>) -> RunMapOptions<'_> {
        RunMapOptions {
            max_tokens,
            tests_by_name: false,
            cache_file,
        }
    }

    #[test]
    fn a_repository_whose_outline_fits_is_shown_whole() {
        let dir = tempfile::tempdir().unwrap();
        package(dir.path(), 3);
        let tree = Tree::new(dir.path()).unwrap();
        let map = run_map(&tree, "GST is wrong", &options(1024, None), &count).unwrap();
        let outline = repo_map::render_outline(&tree, None, &RepoMapOptions::default()).unwrap();
        assert_eq!(map.kind, RunMapKind::Outline);
        assert_eq!(map.text, outline);
        assert_eq!(map.tokens, count(&outline));
    }

    #[test]
    fn a_larger_one_gets_the_map_ranked_for_the_ticket_within_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        package(dir.path(), 200);
        let home = tempfile::tempdir().unwrap();
        let cache = home.path().join("tags/repo.tags");
        let tree = Tree::new(dir.path()).unwrap();
        let ticket = "apply_gst in billing/tax.py charges GST on the full price";
        let map = run_map(&tree, ticket, &options(120, Some(&cache)), &count).unwrap();

        let RunMapKind::Ranked {
            files_shown,
            files_total,
            ..
        } = map.kind
        else {
            panic!("expected the ranked map, got {map:?}");
        };
        assert_eq!(files_total, 203);
        assert!(files_shown < files_total, "{map:?}");
        assert!(map.tokens <= 120, "{} tokens: {}", map.tokens, map.text);
        assert_eq!(map.tokens, count(&map.text));
        assert!(map.text.contains("def apply_gst(amount):"), "{}", map.text);
        let hidden = files_total - files_shown;
        assert!(
            map.text.ends_with(&format!(
                "… {hidden} more files not shown; use list_files PATH for a folder.\n"
            )),
            "{}",
            map.text
        );
        assert_eq!(map.warning, None);
        assert!(cache.exists(), "the tags are kept for the next run");
    }

    #[test]
    fn a_cache_that_cannot_be_kept_is_a_warning_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        package(dir.path(), 200);
        let home = tempfile::tempdir().unwrap();
        // A file where the cache's folder should be.
        fs::write(home.path().join("tags"), "").unwrap();
        let cache = home.path().join("tags/repo.tags");
        let tree = Tree::new(dir.path()).unwrap();
        let map = run_map(&tree, "apply_gst", &options(120, Some(&cache)), &count).unwrap();
        assert!(matches!(map.kind, RunMapKind::Ranked { .. }));
        let warning = map.warning.unwrap();
        assert!(warning.contains("could not be kept"), "{warning}");
        assert!(warning.contains("set XDG_CACHE_HOME"), "{warning}");
    }

    fn folder_options(cache_file: Option<&Path>) -> FolderMapOptions<'_> {
        FolderMapOptions {
            max_chars: 2_000,
            max_files: 400,
            max_tokens: 150,
            cache_file,
        }
    }

    #[test]
    fn list_files_shows_a_folder_whole_when_it_fits_and_its_ranked_slice_when_not() {
        let dir = tempfile::tempdir().unwrap();
        package(dir.path(), 200);
        fs::create_dir_all(dir.path().join("docs")).unwrap();
        fs::write(
            dir.path().join("docs/guide.py"),
            "def read_me():\n    pass\n",
        )
        .unwrap();
        let tree = Tree::new(dir.path()).unwrap();
        let ticket = "apply_gst in billing/tax.py charges GST on the full price";

        let docs = folder_map(
            &tree,
            Some(Path::new("docs")),
            ticket,
            &folder_options(None),
            &count,
        )
        .unwrap();
        let outline =
            repo_map::render_outline(&tree, Some(Path::new("docs")), &RepoMapOptions::default())
                .unwrap();
        assert_eq!(docs, outline);

        let billing = folder_map(
            &tree,
            Some(Path::new("billing")),
            ticket,
            &folder_options(None),
            &count,
        )
        .unwrap();
        assert!(count(&billing) <= 150, "{billing}");
        assert!(billing.contains("def apply_gst(amount):"), "{billing}");
        assert!(
            !billing.contains("docs/"),
            "only the folder asked for: {billing}"
        );
        assert!(
            billing.ends_with("more files not shown; use list_files PATH for a folder.\n"),
            "{billing}"
        );
    }
}
