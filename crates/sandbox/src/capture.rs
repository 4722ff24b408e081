//! Capped capture of one output stream, keeping the *tail*: the end of a test run (the
//! summary, the last traceback) matters more than its start.

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

/// The last `cap` bytes of a stream, and how many bytes came before them.
#[derive(Debug)]
pub(crate) struct TailBuffer {
    cap: usize,
    buf: VecDeque<u8>,
    dropped: u64,
}

impl TailBuffer {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            buf: VecDeque::new(),
            dropped: 0,
        }
    }

    pub(crate) fn push(&mut self, chunk: &[u8]) {
        if chunk.len() >= self.cap {
            let skip = chunk.len() - self.cap;
            self.dropped += (self.buf.len() + skip) as u64;
            self.buf.clear();
            self.buf.extend(&chunk[skip..]);
            return;
        }
        let overflow = (self.buf.len() + chunk.len()).saturating_sub(self.cap);
        if overflow > 0 {
            self.buf.drain(..overflow);
            self.dropped += overflow as u64;
        }
        self.buf.extend(chunk);
    }

    /// The kept text as lossy UTF-8 and the number of bytes dropped. When the cut fell inside
    /// a multi-byte character, its leftover bytes are dropped too (and counted).
    pub(crate) fn finish(mut self) -> (String, u64) {
        let bytes = self.buf.make_contiguous();
        let mut start = 0;
        if self.dropped > 0 {
            while start < bytes.len().min(3) && is_continuation(bytes[start]) {
                start += 1;
            }
        }
        let text = String::from_utf8_lossy(&bytes[start..]).into_owned();
        (text, self.dropped + start as u64)
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// Reads `reader` into a [`TailBuffer`] until end of file, a read error, or `stop`.
pub(crate) async fn capture<R>(reader: Option<R>, cap: usize, stop: CancellationToken) -> TailBuffer
where
    R: AsyncRead + Unpin,
{
    let mut tail = TailBuffer::new(cap);
    let Some(mut reader) = reader else {
        return tail;
    };
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        tokio::select! {
            biased;
            read = reader.read(&mut chunk) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => tail.push(&chunk[..n]),
            },
            () = stop.cancelled() => break,
        }
    }
    tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn fill(cap: usize, chunks: &[&[u8]]) -> (String, u64) {
        let mut tail = TailBuffer::new(cap);
        for chunk in chunks {
            tail.push(chunk);
        }
        tail.finish()
    }

    #[test]
    fn keeps_the_tail_and_counts_the_rest() {
        let actual = [
            fill(4, &[b"ab", b"cd"]),
            fill(4, &[b"abc", b"def"]),
            fill(4, &[b"a", b"bcdefgh"]),
            fill(4, &[b"abcdefgh", b"ij"]),
            fill(0, &[b"abc"]),
        ];

        let expected = [
            ("abcd".to_owned(), 0),
            ("cdef".to_owned(), 2),
            ("efgh".to_owned(), 4),
            ("ghij".to_owned(), 6),
            (String::new(), 3),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_cut_inside_a_character_drops_its_leftover_bytes() {
        // "é" is two bytes; a cap of 4 over "xé€" keeps the last byte of "é" and all of "€".
        let actual = fill(4, &["xé€".as_bytes()]);

        let expected = ("€".to_owned(), 3);
        assert_eq!(actual, expected);
    }
}
