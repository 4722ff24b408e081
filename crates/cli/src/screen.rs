//! The one door to a person's screen: everything plumb writes to stdout or stderr goes out
//! through this module, and nothing else in the crate may write there (clippy's
//! `disallowed-macros` and `disallowed-methods` in `crates/cli/clippy.toml`).
//!
//! - Text is escaped on its way out (`plumb_protocol::display::for_screen`): controls, ESC and
//!   every sequence it starts, bidirectional and invisible characters show as `<U+001B>`-style
//!   text and are never interpreted. [`say!`] and [`say_out!`] are `eprintln!` and `println!`
//!   that escape; [`one_line`] keeps a field (a title, a path, an argument) on its line.
//! - plumb's own colours are the only escape sequences written, and only to a stream that is a
//!   terminal with `NO_COLOR` unset: [`Shown`] holds text escaped piece by piece with colours
//!   between the pieces, and is the only way coloured text gets out.
//! - Data a program reads stays byte-exact: the patch on a stdout that is not a terminal
//!   (`plumb fix > x.diff`, `plumb show RUN | git apply`) is written as it is, since its SHA-256
//!   is the approval; at a terminal it is shown like the approval screen's diff. JSON is written
//!   with every such character as a `\uXXXX` escape: the same JSON, nothing raw.
//! - The pager gets a [`Shown`], so it only ever sees plumb's colours.
//!
//! A write error other than a closed reader (`plumb runs | head`) is ignored for text — there is
//! nowhere left to report it — and returned for data.

#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use std::borrow::Cow;
use std::io::{ErrorKind, IsTerminal, Write};
use std::process::{Command, Stdio};

use plumb_protocol::display::{for_screen, for_screen_line, json_for_screen};

use crate::diff_view;

/// Where a text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Out,
    Err,
}

impl Stream {
    /// Whether the stream is a terminal, so a person reads it as it is written.
    pub(crate) fn is_terminal(self) -> bool {
        match self {
            Self::Out => std::io::stdout().is_terminal(),
            Self::Err => std::io::stderr().is_terminal(),
        }
    }

    /// Whether plumb's colours go to this stream: a terminal, and `NO_COLOR` unset.
    pub(crate) fn colour(self) -> bool {
        self.is_terminal() && std::env::var_os("NO_COLOR").is_none()
    }

    fn write(self, bytes: &[u8]) -> std::io::Result<()> {
        let written = match self {
            Self::Out => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes).and_then(|()| out.flush())
            }
            Self::Err => {
                let mut err = std::io::stderr().lock();
                err.write_all(bytes).and_then(|()| err.flush())
            }
        };
        match written {
            Err(err) if err.kind() == ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }
}

/// `eprintln!` through the door: the formatted line, escaped, on stderr.
macro_rules! say {
    () => {
        $crate::screen::err("\n")
    };
    ($($arg:tt)*) => {
        $crate::screen::err(&format!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use say;

/// `println!` through the door: the formatted line, escaped, on stdout.
macro_rules! say_out {
    ($($arg:tt)*) => {
        $crate::screen::out(&format!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use say_out;

/// `text`, escaped, on stderr.
pub(crate) fn err(text: &str) {
    let _ = Stream::Err.write(for_screen(text).as_bytes());
}

/// `text`, escaped, on stdout.
pub(crate) fn out(text: &str) {
    let _ = Stream::Out.write(for_screen(text).as_bytes());
}

/// A field that must stay on its line, with newline and tab shown too.
pub(crate) fn one_line(text: &str) -> Cow<'_, str> {
    for_screen_line(text)
}

/// `text` escaped, its continuation lines indented by `indent`, so that nothing in a multi-line
/// text from outside (test output, a reviewer's note) can pass for a line of plumb's own.
pub(crate) fn indented(text: &str, indent: &str) -> String {
    let escaped = for_screen(text);
    let mut out = String::with_capacity(escaped.len());
    for (index, line) in escaped.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
            out.push_str(indent);
        }
        out.push_str(line);
    }
    out
}

/// JSON on stdout, every control, bidirectional or invisible character in it a `\uXXXX` escape.
pub(crate) fn json_out(json: &str) {
    let _ = Stream::Out.write(format!("{}\n", json_for_screen(json)).as_bytes());
}

/// Data a program may read from stdout (a path): as it is on a pipe or file, escaped at a
/// terminal.
pub(crate) fn data_out(text: &str) -> std::io::Result<()> {
    if Stream::Out.is_terminal() {
        Stream::Out.write(for_screen(text).as_bytes())
    } else {
        Stream::Out.write(text.as_bytes())
    }
}

/// A patch on stdout: its exact bytes on a pipe or file (their SHA-256 is the approval); at a
/// terminal, escaped and coloured as on the approval screen.
pub(crate) fn patch_out(patch: &str) -> std::io::Result<()> {
    if Stream::Out.is_terminal() {
        Stream::Out.write(
            diff_view::shown(patch, Stream::Out.colour())
                .text
                .as_bytes(),
        )
    } else {
        Stream::Out.write(patch.as_bytes())
    }
}

/// plumb's colours, as SGR codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Colour {
    Bold,
    Red,
    Green,
    Yellow,
    Cyan,
}

impl Colour {
    fn code(self) -> &'static str {
        match self {
            Self::Bold => "1",
            Self::Red => "31",
            Self::Green => "32",
            Self::Yellow => "33",
            Self::Cyan => "36",
        }
    }
}

/// Text ready for a person's screen: every piece escaped as it was added, plumb's colours
/// between the pieces when `colour` is on. Nothing else can put an escape sequence in it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Shown {
    text: String,
    colour: bool,
}

impl Shown {
    /// Empty; painted pieces get colour only when `colour`.
    pub(crate) fn new(colour: bool) -> Self {
        Self {
            text: String::new(),
            colour,
        }
    }

    /// Adds `text`, escaped, its newlines kept.
    pub(crate) fn text(&mut self, text: &str) -> &mut Self {
        self.text.push_str(&for_screen(text));
        self
    }

    /// Adds `text` escaped to one line (newline and tab shown).
    pub(crate) fn field(&mut self, text: &str) -> &mut Self {
        self.text.push_str(&for_screen_line(text));
        self
    }

    /// Adds `text`, escaped, its continuation lines indented by `indent` (see [`indented`]).
    pub(crate) fn indented(&mut self, text: &str, indent: &str) -> &mut Self {
        self.text.push_str(&indented(text, indent));
        self
    }

    /// Adds `text`, escaped, in `colour` when colour is on.
    pub(crate) fn painted(&mut self, colour: Colour, text: &str) -> &mut Self {
        if self.colour {
            self.text.push_str("\x1b[");
            self.text.push_str(colour.code());
            self.text.push('m');
            self.text.push_str(&for_screen(text));
            self.text.push_str("\x1b[0m");
        } else {
            self.text.push_str(&for_screen(text));
        }
        self
    }

    /// How many lines the text takes.
    pub(crate) fn lines(&self) -> usize {
        self.text.lines().count()
    }

    /// The text as it will be written.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// Writes the text to `stream`.
    pub(crate) fn write_to(&self, stream: Stream) {
        let _ = stream.write(self.text.as_bytes());
    }
}

/// The height of the terminal stderr is, in rows (24 when it cannot be read).
pub(crate) fn screen_rows() -> usize {
    rustix::termios::tcgetwinsize(std::io::stderr())
        .ok()
        .map(|size| usize::from(size.ws_row))
        .filter(|rows| *rows > 0)
        .unwrap_or(24)
}

/// Shows `shown` through `$PAGER` (default `less -R`) on stderr, split like a shell would but
/// never run by one; false when there is no pager to run (empty `PAGER`, or it cannot start).
/// The pager reads only escaped text and plumb's colours.
pub(crate) fn page(shown: &Shown) -> bool {
    let pager = std::env::var("PAGER").unwrap_or_else(|_| "less -R".to_string());
    let Ok(argv) = shell_words::split(&pager) else {
        return false;
    };
    let Some((program, args)) = argv.split_first() else {
        return false;
    };
    let Ok(mut child) = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(std::io::stderr())
        .spawn()
    else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A pager quit early closes the pipe; the rest need not be written.
        let _ = stdin.write_all(shown.as_str().as_bytes());
    }
    child.wait().is_ok()
}

/// A line above indicatif's bar (or on stderr when the bar is hidden): `text`, escaped to one line.
pub(crate) fn bar_line(bar: &indicatif::ProgressBar, text: &str) {
    let line = for_screen_line(text);
    if bar.is_hidden() {
        let _ = Stream::Err.write(format!("{line}\n").as_bytes());
    } else {
        bar.println(line);
    }
}

/// indicatif's bar's message: `text`, escaped to one line.
pub(crate) fn bar_message(bar: &indicatif::ProgressBar, text: &str) {
    bar.set_message(for_screen_line(text).into_owned());
}

/// Panics are reported through the door too: a panic's message may quote text from outside.
pub(crate) fn report_panics() {
    std::panic::set_hook(Box::new(|info| {
        err(&format!(
            "plumb: internal error (a bug; please report it): {info}\n"
        ));
    }));
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn shown_escapes_every_piece_and_colours_only_when_asked() {
        let build = |colour| {
            let mut shown = Shown::new(colour);
            shown
                .text("a\u{1b}[2K\n")
                .painted(Colour::Green, "+b\u{1b}]0;t\u{7}")
                .text(" ")
                .field("c\nd")
                .text(" ")
                .indented("e\nf\u{202e}", "    ");
            shown.as_str().to_string()
        };

        let actual = (build(false), build(true));

        assert_eq!(
            actual,
            (
                "a<U+001B>[2K\n+b<U+001B>]0;t<U+0007> c<U+000A>d e\n    f<U+202E>".to_string(),
                "a<U+001B>[2K\n\x1b[32m+b<U+001B>]0;t<U+0007>\x1b[0m c<U+000A>d e\n    f<U+202E>"
                    .to_string()
            )
        );
    }
}
