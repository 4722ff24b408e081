//! `plumb map`: the ranked repo map a run would show for a ticket, so a person can see what the
//! model sees (as `aider --show-repo-map` does).
//!
//! The tags of the tree are cached between calls in plumb's cache folder
//! (`$XDG_CACHE_HOME/plumb/tags`, else `~/.cache/plumb/tags`), one file per tree named by the hash
//! of its path, never inside the repository; a second call re-parses only the files that changed.

use std::fs;
use std::path::Path;
use std::time::Instant;

use plumb_context::rank::{Focus, rank};
use plumb_context::ranked_map;
use plumb_context::size::{ESTIMATE, estimated_count};
use plumb_context::{tag_cache_file, tag_index};
use plumb_model::catalog;
use plumb_workspace::Tree;

use crate::Failure;
use crate::args::MapArgs;
use crate::screen::{self, say};

/// Tickets longer than this are refused: a ticket is a few paragraphs, not a file dump.
const MAX_TICKET_BYTES: u64 = 1024 * 1024;

pub(crate) fn run(args: MapArgs) -> Result<i32, Failure> {
    let started = Instant::now();
    let tree = Tree::new(&args.repo).map_err(|err| {
        Failure::bad_input(format!(
            "--repo {} cannot be opened ({err}); pass the folder of a repository",
            args.repo.display()
        ))
    })?;
    let ticket = match &args.ticket {
        Some(path) => read_ticket(path)?,
        None => String::new(),
    };

    let cache_path = catalog::cache_home_from(|key| std::env::var_os(key))
        .map(|home| tag_cache_file::cache_path(&home, tree.root()));
    let mut cache = cache_path
        .as_deref()
        .map(tag_cache_file::load)
        .unwrap_or_default();
    let index = tag_index::build(&tree, &mut cache);
    let indexed = started.elapsed();
    if let Some(path) = &cache_path
        && let Err(why) = tag_cache_file::keep(path, &cache)
    {
        say!(
            "plumb map: the tag cache could not be kept at {} ({why}); the next call parses every file again: make that folder writable, or set XDG_CACHE_HOME to a folder that is",
            path.display()
        );
    }

    let paths: Vec<&str> = index.files.iter().map(|f| f.path.as_str()).collect();
    let focus = Focus::from_text(&ticket, paths);
    let ranking = rank(&index.files, &focus);
    let map = ranked_map::render(&index, &ranking, args.tokens, &estimated_count);
    let total = started.elapsed();

    if args.json {
        let top_files: Vec<serde_json::Value> = ranking
            .files
            .iter()
            .take(args.top)
            .map(|(path, score)| serde_json::json!({ "path": path, "rank": score }))
            .collect();
        let json = serde_json::json!({
            "map": map,
            "tokens_counted": ESTIMATE,
            "index": index.stats,
            "ranked_files": top_files,
            "seconds": { "index": indexed.as_secs_f64(), "total": total.as_secs_f64() },
        });
        screen::json_out(&json.to_string());
    } else {
        screen::out(&map.text);
        say!(
            "plumb map: {} of {} files, {} definitions, {} tokens ({ESTIMATE}) of {}; \
             {} source files parsed, {} from the cache; {} ms",
            map.files_shown,
            map.files_total,
            map.definitions_shown,
            map.tokens,
            args.tokens,
            index.stats.parsed,
            index.stats.cached,
            total.as_millis()
        );
    }
    Ok(0)
}

fn read_ticket(path: &Path) -> Result<String, Failure> {
    let refuse = |why: String| {
        Failure::bad_input(format!(
            "--ticket {} cannot be read ({why}); pass a readable text file",
            path.display()
        ))
    };
    let meta = fs::metadata(path).map_err(|err| refuse(err.to_string()))?;
    if meta.len() > MAX_TICKET_BYTES {
        return Err(refuse(format!(
            "{} bytes, more than the {MAX_TICKET_BYTES} a ticket may have",
            meta.len()
        )));
    }
    let bytes = fs::read(path).map_err(|err| refuse(err.to_string()))?;
    String::from_utf8(bytes).map_err(|_| refuse("it is not UTF-8 text".to_owned()))
}
