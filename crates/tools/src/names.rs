//! Names in source text, for the helpers that read or rewrite Python a model wrote: a word counts
//! only where it does not run into a longer name on either side (`total` is not in `subtotal`).

/// True when `c` can be part of a name (letters, digits, `_`).
pub(crate) fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// True when `text` has `word` not run into a longer name on either side.
pub fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text.get(..at).and_then(|head| head.chars().next_back());
        let after = text
            .get(at + word.len()..)
            .and_then(|tail| tail.chars().next());
        !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_counts_only_as_a_whole_name() {
        assert!(contains_word("x = item.discount\n", "item.discount"));
        assert!(!contains_word("x = item.discount_code\n", "item.discount"));
        assert!(contains_word("total = 1", "total"));
        assert!(!contains_word("subtotal = 1", "total"));
        assert!(!contains_word("", "total"));
    }
}
