//! The phases' sentences without the figures helper: they speak of the value a test checks
//! rather than the figure, since "the figure the ticket gives" is the figures helper's notion (a
//! ticket that quotes amounts, searched for and probed in pytest tests), and a Rust, Go or
//! JavaScript task, or a ticket that gives no figures, has none.

/// `sentence` (the phases' own words, never a file's text or the ticket's) with "figure" and
/// "figures" as whole words made "value" and "values". A word glued to a path or a name
/// (`figures/`, `figure.py`, `figure_of`) is left alone.
pub(super) fn without_figures(sentence: &str) -> String {
    let mut out = String::with_capacity(sentence.len());
    let mut rest = sentence;
    while let Some(at) = rest.find("figure") {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let starts_word = head
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '/' && c != '.');
        let plural = tail.get(6..7) == Some("s");
        let len = if plural { 7 } else { 6 };
        let after = tail.get(len..).unwrap_or_default();
        let mut next = after.chars();
        let ends_word = match next.next() {
            None => true,
            Some('.') => next.next().is_none_or(char::is_whitespace),
            Some(c) => !c.is_alphanumeric() && c != '_' && c != '/' && c != '-',
        };
        if starts_word && ends_word {
            out.push_str(if plural { "values" } else { "value" });
        } else {
            out.push_str(tail.get(..len).unwrap_or_default());
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn figure_words_become_value_words_and_paths_stay() {
        let actual = without_figures(
            "assert only the figure the ticket gives (one assert: a figure you work out yourself may be wrong); decide from the figures. In src/figure.py, figures/a.rs and figure_of stay.",
        );
        assert_eq!(
            actual,
            "assert only the value the ticket gives (one assert: a value you work out yourself may be wrong); decide from the values. In src/figure.py, figures/a.rs and figure_of stay."
        );
    }
}
