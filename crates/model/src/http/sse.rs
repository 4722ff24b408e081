//! A server-sent events parser that takes the body in whatever pieces the network delivers.
//!
//! Bytes are buffered until a whole line is there, so a piece may end inside a line, inside a
//! UTF-8 character or between the `\r` and `\n` of a line ending. Lines end with `\n`, `\r\n` or
//! `\r`; a `\r` at the very end of the buffer waits for the next piece to see whether a `\n`
//! follows. Each byte is looked at once however the body is cut: the parser remembers how far
//! into an unfinished line it has already scanned, so a 10 MB line arriving in small pieces
//! costs what it costs whole. An empty line ends an event; `data:` lines are joined with `\n`; `event:` names the
//! event; comments (`:`) and other fields are ignored.

/// One event of the stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when the server sent one.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// The parser's state between pieces.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the line not yet ended.
    pending: Vec<u8>,
    /// How many bytes of `pending` were already scanned and hold no line ending (a `\r` waiting
    /// for its piece is not counted).
    scanned: usize,
    /// Every byte position the scan looked at, for the test that the work is linear.
    #[cfg(test)]
    examined: usize,
    event: Option<String>,
    data: Vec<String>,
    has_data: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next piece of the body and returns the events it completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        let mut i = self.scanned;
        while i < self.pending.len() {
            #[cfg(test)]
            {
                self.examined += 1;
            }
            match self.pending[i] {
                b'\n' => {
                    let line = self.pending[start..i].to_vec();
                    self.line(&line, &mut events);
                    i += 1;
                    start = i;
                }
                b'\r' => {
                    if i + 1 == self.pending.len() {
                        // A `\n` may be in the next piece.
                        break;
                    }
                    let line = self.pending[start..i].to_vec();
                    self.line(&line, &mut events);
                    i += if self.pending[i + 1] == b'\n' { 2 } else { 1 };
                    start = i;
                }
                _ => i += 1,
            }
        }
        self.pending.drain(..start);
        self.scanned = i - start;
        events
    }

    /// The end of the body: ends an unfinished last line and returns the event it was part of,
    /// if any. Such an event may be cut short; callers use it only if it makes sense.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let mut events = Vec::new();
        self.scanned = 0;
        if !self.pending.is_empty() {
            let mut line = std::mem::take(&mut self.pending);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.line(&line, &mut events);
        }
        self.line(b"", &mut events);
        events.pop()
    }

    fn line(&mut self, line: &[u8], events: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                events.push(SseEvent {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data).join("\n"),
                });
            }
            self.event = None;
            self.data.clear();
            self.has_data = false;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => {
                self.data.push(value.to_owned());
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const BODY: &str = ": keep-alive\r\nevent: greeting\r\ndata: {\"text\":\"héllo ✓ 🦀\"}\r\n\r\n\
data: line one\ndata: line two\n\nid: 7\nretry: 10\ndata:no-space\r\rdata: [DONE]\n\n";

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent {
                event: Some("greeting".into()),
                data: "{\"text\":\"héllo ✓ 🦀\"}".into(),
            },
            SseEvent {
                event: None,
                data: "line one\nline two".into(),
            },
            SseEvent {
                event: None,
                data: "no-space".into(),
            },
            SseEvent {
                event: None,
                data: "[DONE]".into(),
            },
        ]
    }

    #[test]
    fn whole_body_at_once() {
        let mut parser = SseParser::new();
        let actual = parser.feed(BODY.as_bytes());
        assert_eq!(actual, expected());
        assert_eq!(parser.finish(), None);
    }

    #[test]
    fn every_split_point_and_byte_by_byte() {
        let bytes = BODY.as_bytes();
        for cut in 0..=bytes.len() {
            let mut parser = SseParser::new();
            let mut actual = parser.feed(&bytes[..cut]);
            actual.extend(parser.feed(&bytes[cut..]));
            assert_eq!(parser.finish(), None, "cut at {cut}");
            assert_eq!(actual, expected(), "cut at {cut}");
        }
        let mut parser = SseParser::new();
        let actual: Vec<SseEvent> = bytes.iter().flat_map(|b| parser.feed(&[*b])).collect();
        assert_eq!(actual, expected());
    }

    #[test]
    fn a_long_line_in_small_pieces_is_scanned_once() {
        // 4 MiB of data on one line, delivered 1,000 bytes at a time: a parser that rescans
        // the unfinished line from its start looks at ~8·10⁹ positions; this one at each once.
        let line = format!("data: {}\n\n", "x".repeat(4 << 20));
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for piece in line.as_bytes().chunks(1_000) {
            events.extend(parser.feed(piece));
        }
        let actual = (events.len(), events[0].data.len(), parser.examined);
        assert_eq!(actual, (1, 4 << 20, line.len()));
    }

    #[test]
    fn unfinished_last_event_comes_from_finish() {
        let mut parser = SseParser::new();
        assert_eq!(parser.feed(b"data: {\"a\":1}\ndata: tail"), Vec::new());
        let actual = parser.finish();
        assert_eq!(
            actual,
            Some(SseEvent {
                event: None,
                data: "{\"a\":1}\ntail".into()
            })
        );
    }
}
