//! Draft tokens by prompt lookup: most of what a coding model writes is text it was shown (a
//! `replace_function` rewrites a whole function to change one line), so the tokens that followed
//! the last few generated tokens where they occurred before are a good guess at what comes next.
//!
//! As llama.cpp's lookup decoding does: take the last `n` tokens of the history (prompt and
//! generation so far), find their latest earlier occurrence, and propose the tokens that followed
//! it, longest n-gram first ([`MAX_NGRAM`] down to [`MIN_NGRAM`]). The engine then decodes the
//! drafts in one batch and keeps those the sampler would have picked anyway (see `generate.rs`),
//! so drafting changes the speed, never the output.

/// The longest and shortest n-gram looked up. One token matches far too often (a space, a
/// quote) to predict anything; four is enough context to pin a place in code.
pub const MAX_NGRAM: usize = 4;
pub const MIN_NGRAM: usize = 2;

/// Up to `max` tokens that followed the latest earlier occurrence of the history's last n-gram,
/// trying n = [`MAX_NGRAM`] first. Empty when no n-gram of at least [`MIN_NGRAM`] tokens occurred
/// before, or `max` is 0.
pub fn draft<T: Copy + PartialEq>(history: &[T], max: usize) -> Vec<T> {
    if max == 0 {
        return Vec::new();
    }
    for n in (MIN_NGRAM..=MAX_NGRAM).rev() {
        let Some(tail_start) = history.len().checked_sub(n) else {
            continue;
        };
        let tail = &history[tail_start..];
        // The latest occurrence that ends before the tail itself does, so something follows it.
        let found = (0..tail_start)
            .rev()
            .find(|&start| &history[start..start + n] == tail);
        if let Some(start) = found {
            let from = start + n;
            let to = (from + max).min(history.len());
            return history[from..to].to_vec();
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::draft;
    use pretty_assertions::assert_eq;

    #[test]
    fn proposes_what_followed_the_last_ngram_before() {
        // "def f ( x ) :" was shown; the model has written "def f (" again.
        let history = [1, 2, 3, 4, 5, 6, 9, 9, 1, 2, 3];
        assert_eq!(draft(&history, 3), vec![4, 5, 6]);
    }

    #[test]
    fn the_draft_stops_at_the_end_of_the_history() {
        let history = [7, 8, 9, 7, 8];
        assert_eq!(draft(&history, 10), vec![9, 7, 8]);
    }

    #[test]
    fn the_longest_ngram_wins_over_a_later_shorter_match() {
        // The 3-gram [1, 2, 3] occurred at the start; [2, 3] alone occurred later, followed by 8.
        let history = [1, 2, 3, 4, 0, 2, 3, 8, 0, 1, 2, 3];
        assert_eq!(draft(&history, 1), vec![4]);
    }

    #[test]
    fn the_latest_occurrence_is_used() {
        let history = [5, 6, 1, 0, 5, 6, 2, 0, 5, 6];
        assert_eq!(draft(&history, 1), vec![2]);
    }

    #[test]
    fn nothing_is_drafted_without_a_match_of_two_tokens() {
        assert_eq!(draft(&[1, 2, 3, 4, 3], 4), Vec::<i32>::new());
        assert_eq!(draft(&[1], 4), Vec::<i32>::new());
        assert_eq!(draft(&[1, 2, 1, 2], 0), Vec::<i32>::new());
    }
}
