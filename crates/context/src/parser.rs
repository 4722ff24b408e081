//! One tree-sitter `Parser` per language per thread, created on first use and reused afterwards, so that
//! outlining a large repository does not pay for parser set-up on every file.

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

use crate::syntax::Language;

thread_local! {
    static PARSERS: RefCell<[Option<Parser>; Language::ALL.len()]> =
        const { RefCell::new([const { None }; Language::ALL.len()]) };
}

/// Parses `source` as `lang`. `None` only when the grammar cannot be loaded (an ABI mismatch), which the tests rule out.
pub(crate) fn parse(lang: Language, source: &str) -> Option<Tree> {
    PARSERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut parsers) => {
            let slot = &mut parsers[lang.index()];
            if slot.is_none() {
                *slot = Some(new_parser(lang)?);
            }
            slot.as_mut()?.parse(source, None)
        }
        // Re-entered from inside a parse on this thread (cannot happen today): use a fresh parser.
        Err(_) => new_parser(lang)?.parse(source, None),
    })
}

fn new_parser(lang: Language) -> Option<Parser> {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    Some(parser)
}
