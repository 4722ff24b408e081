//! Turning generated token bytes into text.
//!
//! Tokens are byte pieces: one UTF-8 character can be split across two tokens, so [`Utf8Stream`] holds back an
//! incomplete tail until the next piece completes it. [`StopStrings`] finds the earliest stop string in the text,
//! checking only the region a new piece can have touched.

/// Accumulates token pieces and keeps the valid UTF-8 part as text.
#[derive(Debug, Default)]
pub struct Utf8Stream {
    text: String,
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// Appends a token's bytes. Invalid sequences become U+FFFD; an incomplete trailing sequence waits.
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(valid) => {
                    self.text.push_str(valid);
                    self.pending.clear();
                    return;
                }
                Err(err) => {
                    let (valid, rest) = self.pending.split_at(err.valid_up_to());
                    // `valid` was just checked, so this never replaces anything.
                    self.text.push_str(&String::from_utf8_lossy(valid));
                    match err.error_len() {
                        // Incomplete sequence at the end: wait for the next piece.
                        None => {
                            self.pending = rest.to_vec();
                            return;
                        }
                        Some(bad) => {
                            self.text.push(char::REPLACEMENT_CHARACTER);
                            self.pending = rest.get(bad..).unwrap_or_default().to_vec();
                        }
                    }
                }
            }
        }
    }

    /// The text decoded so far (without a held-back incomplete character).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Cuts the text at byte `at` (a char boundary) and drops anything held back.
    pub fn truncate(&mut self, at: usize) {
        self.text.truncate(at);
        self.pending.clear();
    }

    /// The final text; an incomplete character cut off by the token limit is dropped.
    pub fn into_text(self) -> String {
        self.text
    }
}

/// The stop strings of one request.
#[derive(Debug)]
pub struct StopStrings {
    stops: Vec<String>,
    longest: usize,
}

impl StopStrings {
    /// Empty strings are ignored.
    pub fn new(stops: &[String]) -> Self {
        let stops: Vec<String> = stops.iter().filter(|s| !s.is_empty()).cloned().collect();
        let longest = stops.iter().map(String::len).max().unwrap_or(0);
        Self { stops, longest }
    }

    /// The byte offset of the earliest stop string in `text`, given that `text[..checked]` held none.
    pub fn find(&self, text: &str, checked: usize) -> Option<usize> {
        let mut start = checked
            .saturating_sub(self.longest.saturating_sub(1))
            .min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let tail = text.get(start..)?;
        self.stops
            .iter()
            .filter_map(|stop| tail.find(stop.as_str()))
            .min()
            .map(|at| start + at)
    }
}

#[cfg(test)]
mod tests {
    use super::{StopStrings, Utf8Stream};
    use pretty_assertions::assert_eq;

    #[test]
    fn joins_characters_split_across_pieces() {
        let pieces: [&[u8]; 5] = [
            b"caf",
            &[0xC3],
            &[0xA9, b' ', 0xF0, 0x9F],
            &[0x98, 0x80],
            b"!",
        ];
        let mut stream = Utf8Stream::default();
        let mut seen = Vec::new();

        for piece in pieces {
            stream.push(piece);
            seen.push(stream.text().to_owned());
        }

        assert_eq!(seen, vec!["caf", "caf", "café ", "café 😀", "café 😀!"]);
    }

    #[test]
    fn replaces_invalid_bytes_and_drops_an_unfinished_tail() {
        let mut stream = Utf8Stream::default();

        stream.push(&[b'a', 0xFF, b'b', 0xE2, 0x82]);

        assert_eq!(stream.into_text(), "a\u{FFFD}b");
    }

    #[test]
    fn finds_the_earliest_stop_string_including_one_spanning_pieces() {
        let stops = StopStrings::new(&["<|im_end|>".to_owned(), "\n\n".to_owned(), String::new()]);
        let cases = [
            ("hello <|im_", 6, None),
            ("hello <|im_end|> more", 11, Some(6)),
            ("a\n\nb<|im_end|>", 0, Some(1)),
            ("no stop here", 5, None),
            ("é<|im_end|>", 1, Some(2)),
            ("plain", 5, None),
        ];

        let actual: Vec<Option<usize>> = cases
            .iter()
            .map(|(text, checked, _)| stops.find(text, *checked))
            .collect();

        let expected: Vec<Option<usize>> = cases.iter().map(|(_, _, expected)| *expected).collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn no_stop_strings_never_match() {
        let stops = StopStrings::new(&[]);

        assert_eq!(stops.find("anything <|im_end|>", 0), None);
    }
}
