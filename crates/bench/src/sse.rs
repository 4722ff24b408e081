//! The server-sent events parser on one long line: a `data:` line of 1, 4 and 16 MiB arriving in
//! 16 KiB pieces, as a streamed model reply that is one huge JSON object would. The time per MiB
//! must stay flat as the line grows (a parser that rescans the unfinished line from its start on
//! every piece grows with the square of the line: 10 MB took 614 s that way).

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use plumb_model::http::sse::SseParser;

use crate::machine::Machine;
use crate::measure::{Samples, repeat};

/// The line lengths measured, in MiB.
const SIZES_MIB: [usize; 3] = [1, 4, 16];
/// The size of each piece fed to the parser.
const PIECE: usize = 16 * 1024;

/// One measured line length.
pub struct SseRow {
    pub mib: usize,
    pub samples: Samples,
}

/// Times the parser `runs` times per line length.
pub fn measure(runs: usize) -> Result<Vec<SseRow>> {
    SIZES_MIB
        .iter()
        .map(|&mib| {
            let body = format!("data: {}\n\n", "x".repeat(mib << 20)).into_bytes();
            let samples = repeat(runs, |_| parse_once(&body, mib << 20))?;
            Ok(SseRow { mib, samples })
        })
        .collect()
}

fn parse_once(body: &[u8], data_len: usize) -> Result<Duration> {
    let started = Instant::now();
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for piece in body.chunks(PIECE) {
        events.extend(parser.feed(piece));
    }
    let elapsed = started.elapsed();
    match events.as_slice() {
        [one] if one.data.len() == data_len => Ok(elapsed),
        _ => bail!("the parser did not return the one {data_len}-byte event it was fed"),
    }
}

/// The Markdown table: median and minimum milliseconds per line, and the median per MiB.
pub fn render(rows: &[SseRow], runs: usize, machine: &Machine) -> String {
    let mut out = format!(
        "## Server-sent events: one long line in {} KiB pieces ({runs} runs each)\n\n{}, {} CPUs, {} build, load {} at the start\n\n| line | median ms | min ms | median ms per MiB |\n|---:|---:|---:|---:|\n",
        PIECE / 1024,
        machine.cpu,
        machine.nproc,
        machine.profile,
        machine.load_at_start
    );
    for row in rows {
        let median = row.samples.median();
        out.push_str(&format!(
            "| {} MiB | {:.1} | {:.1} | {:.2} |\n",
            row.mib,
            median,
            row.samples.min(),
            median / row.mib as f64
        ));
    }
    out.push_str("\nRepeat with `scripts/bench.sh sse [--runs N]`.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_body_must_parse_to_its_one_event_of_the_given_length() {
        let body = b"data: abc\n\n";
        let actual = (
            parse_once(body, 3).is_ok(),
            parse_once(body, 4).is_ok(),
            parse_once(b"data: abc\n", 3).is_ok(),
        );
        assert_eq!(actual, (true, false, false));
    }
}
