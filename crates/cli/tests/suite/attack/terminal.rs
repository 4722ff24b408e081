//! plumb at a real pseudo-terminal, and what a person's terminal makes of it: every byte plumb
//! writes is fed to a VT emulator (the `vt100` crate) as the terminal would be, and a test reads
//! the rendered rows (scrollback included), the window titles and clipboard writes the bytes asked
//! for, and the escape sequences that reached the terminal at all.

use std::collections::BTreeSet;
use std::io::{ErrorKind, Write};
use std::num::NonZeroU16;
use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::Session;
use plumb_protocol::chars::{is_bidi_control, is_invisible};

/// What the escape sequences asked of the terminal beyond its screen.
#[derive(Debug, Default)]
struct Asked {
    titles: Vec<String>,
    clipboard: Vec<String>,
}

impl vt100::Callbacks for Asked {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.titles
            .push(String::from_utf8_lossy(title).into_owned());
    }

    fn set_window_icon_name(&mut self, _: &mut vt100::Screen, name: &[u8]) {
        self.titles
            .push(format!("icon: {}", String::from_utf8_lossy(name)));
    }

    fn copy_to_clipboard(&mut self, _: &mut vt100::Screen, _: &[u8], data: &[u8]) {
        self.clipboard
            .push(String::from_utf8_lossy(data).into_owned());
    }

    fn paste_from_clipboard(&mut self, _: &mut vt100::Screen, _: &[u8]) {
        self.clipboard.push("a read of the clipboard".to_string());
    }
}

/// A program running in a pseudo-terminal of a fixed size, its output rendered as it arrives.
pub struct Terminal {
    session: Session,
    parser: vt100::Parser<Asked>,
    raw: Vec<u8>,
    cols: u16,
    ended: bool,
}

/// The whole of what a person saw, for the assertions.
#[derive(Debug)]
pub struct Seen {
    /// Every row the terminal showed, scrollback first, trailing blanks trimmed.
    pub rows: Vec<String>,
    /// Window titles and icon names set (OSC 0, 1, 2).
    pub titles: Vec<String>,
    /// Clipboard writes and reads (OSC 52).
    pub clipboard: Vec<String>,
    /// Everything plumb sent, raw.
    pub raw: Vec<u8>,
}

impl Terminal {
    /// Starts `command` in a terminal of `rows` × `cols` (TERM=xterm-256color, so a pager uses
    /// its real screen handling).
    pub fn start(mut command: Command, rows: u16, cols: u16) -> Self {
        command.env("TERM", "xterm-256color");
        let mut session = Session::spawn(command).unwrap();
        session
            .get_process_mut()
            .set_window_size(cols, rows)
            .unwrap();
        let size = |n: u16| NonZeroU16::new(n).unwrap();
        Self {
            session,
            parser: vt100::Parser::new_with_callbacks(
                size(rows),
                size(cols),
                100_000,
                Asked::default(),
            ),
            raw: Vec::new(),
            cols,
            ended: false,
        }
    }

    /// Reads and renders what is there now; false once the program's side has closed.
    fn pump(&mut self) -> bool {
        let mut buf = [0u8; 8192];
        loop {
            match self.session.try_read(&mut buf) {
                Ok(0) => {
                    self.ended = true;
                    return false;
                }
                Ok(n) => {
                    self.raw.extend_from_slice(&buf[..n]);
                    self.parser.process(&buf[..n]);
                }
                Err(err) if err.kind() == ErrorKind::WouldBlock => return true,
                // EIO: the program ended and the terminal's other side closed.
                Err(_) => {
                    self.ended = true;
                    return false;
                }
            }
        }
    }

    /// Renders output until `done` holds (true) or the program ends or `secs` pass (false).
    pub fn until(&mut self, secs: u64, done: impl Fn(&Self) -> bool) -> bool {
        let started = Instant::now();
        loop {
            let open = self.pump();
            if done(self) {
                return true;
            }
            if !open || started.elapsed() > Duration::from_secs(secs) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    /// Renders output until the raw bytes hold `text`; panics with the screen if they never do.
    pub fn wait_for(&mut self, secs: u64, text: &str) {
        if !self.until(secs, |t| t.printed(text)) {
            panic!(
                "never printed {text:?}; the screen:\n{}",
                self.visible().join("\n")
            );
        }
    }

    /// Whether the raw output holds `text` (as bytes).
    pub fn printed(&self, text: &str) -> bool {
        self.raw
            .windows(text.len())
            .any(|window| window == text.as_bytes())
    }

    /// The rows on the screen now (the alternate screen, while a pager has it).
    pub fn visible(&self) -> Vec<String> {
        self.parser
            .screen()
            .rows(0, self.cols)
            .map(|row| row.trim_end().to_string())
            .collect()
    }

    /// How many bytes have arrived so far.
    pub fn received(&self) -> usize {
        self.raw.len()
    }

    /// Types `keys`.
    pub fn send(&mut self, keys: &str) {
        self.session.write_all(keys.as_bytes()).unwrap();
        self.session.flush().unwrap();
    }

    /// Renders output until the program ends, then everything it showed.
    pub fn finish(mut self, secs: u64) -> Seen {
        let ended = self.until(secs, |t| t.ended);
        assert!(
            ended,
            "still running after {secs} s:\n{}",
            self.visible().join("\n")
        );
        let screen = self.parser.screen_mut();
        screen.set_scrollback(usize::MAX);
        let back = screen.scrollback();
        let mut rows = Vec::new();
        // Scrolled back by `offset`, the top row is the scrollback's row `back - offset`.
        for offset in (1..=back).rev() {
            screen.set_scrollback(offset);
            if let Some(row) = screen.rows(0, self.cols).next() {
                rows.push(row.trim_end().to_string());
            }
        }
        screen.set_scrollback(0);
        rows.extend(
            screen
                .rows(0, self.cols)
                .map(|row| row.trim_end().to_string()),
        );
        let asked = std::mem::take(self.parser.callbacks_mut());
        Seen {
            rows,
            titles: asked.titles,
            clipboard: asked.clipboard,
            raw: self.raw,
        }
    }
}

impl Seen {
    /// Whether some row shows `text`.
    pub fn shows(&self, text: &str) -> bool {
        self.rows.iter().any(|row| row.contains(text))
    }

    /// The titles and clipboard writes the output asked for and every escape sequence or raw
    /// character in it that plumb may not send (see [`forbidden`]): empty when the terminal only
    /// ever got text and plumb's colours.
    pub fn tampering(&self, pager: bool) -> Vec<String> {
        let mut found: Vec<String> = self.titles.iter().map(|t| format!("title {t:?}")).collect();
        found.extend(self.clipboard.iter().map(|c| format!("clipboard {c:?}")));
        found.extend(forbidden(&self.raw, pager));
        found
    }
}

/// The SGR parameters plumb's colours use: reset, bold, red, green, yellow, cyan.
const PLUMB_SGR: [&str; 7] = ["", "0", "1", "31", "32", "33", "36"];
/// What `less` adds for its own prompt and text: standout, underline, their ends, normal.
const PAGER_SGR: [&str; 6] = ["7", "27", "4", "24", "22", "39"];

/// Every escape sequence in `raw` that a terminal would act on beyond plumb's colours, and every
/// raw control, bidirectional or invisible character. OSC (titles, the clipboard, links), DCS,
/// APC, PM, SOS and C1 controls are never allowed; SGR only with plumb's parameters (so no
/// `ESC[8m`, which conceals text); with a `pager` its own screen handling (cursor moves, the
/// alternate screen, keypad modes) and the SGR of its prompt are allowed too.
pub fn forbidden(raw: &[u8], pager: bool) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    let chars: Vec<char> = text.chars().collect();
    let mut found = BTreeSet::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\u{1b}' {
            let next = chars.get(i + 1).copied().unwrap_or(' ');
            if next == '[' {
                let mut end = i + 2;
                while end < chars.len() && !('\u{40}'..='\u{7e}').contains(&chars[end]) {
                    end += 1;
                }
                let params: String = chars[i + 2..end.min(chars.len())].iter().collect();
                let last = chars.get(end).copied().unwrap_or(' ');
                let allowed = if last == 'm' {
                    params
                        .split(';')
                        .all(|p| PLUMB_SGR.contains(&p) || (pager && PAGER_SGR.contains(&p)))
                } else {
                    pager
                };
                if !allowed {
                    found.insert(format!("ESC[{params}{last}"));
                }
                i = end + 1;
                continue;
            }
            if matches!(next, ']' | 'P' | '_' | '^' | 'X') || !pager {
                let shown: String = chars[i + 1..(i + 12).min(chars.len())].iter().collect();
                found.insert(format!("ESC{shown:?}"));
            }
            i += 2;
            continue;
        }
        let allowed_control =
            matches!(c, '\n' | '\r' | '\t') || (pager && matches!(c, '\u{7}' | '\u{8}'));
        if (is_invisible(c) && !allowed_control) || is_bidi_control(c) {
            found.insert(format!("raw U+{:04X}", u32::from(c)));
        }
        i += 1;
    }
    found.into_iter().collect()
}

/// The added lines of a git diff (`+` lines inside hunks, without their `+`), counted from the
/// hunk headers so that an added line reading `++ x` is not taken for a file header.
pub fn added_lines(patch: &str) -> Vec<String> {
    let mut added = Vec::new();
    let (mut old, mut new) = (0usize, 0usize);
    for line in patch.lines() {
        if old == 0 && new == 0 {
            if let Some(header) = line.strip_prefix("@@ -") {
                let count = |part: &str| -> usize {
                    part.split_once(',').map_or(1, |(_, n)| n.parse().unwrap())
                };
                let (old_part, rest) = header.split_once(" +").unwrap();
                let new_part = rest.split_once(" @@").unwrap().0;
                (old, new) = (count(old_part), count(new_part));
            }
            continue;
        }
        match line.chars().next() {
            Some('+') => {
                new -= 1;
                added.push(line.strip_prefix('+').unwrap_or(line).to_string());
            }
            Some('-') => old -= 1,
            Some('\\') => {}
            _ => {
                old -= 1;
                new -= 1;
            }
        }
    }
    added
}
