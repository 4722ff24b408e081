//! Text for a person's screen: what a terminal shows exactly as written. A terminal interprets
//! some characters instead of showing them — ESC starts sequences that move the cursor, erase
//! lines, retitle the window or write the clipboard (OSC 52); C0 and C1 controls and DEL act;
//! bidirectional controls reorder what follows; invisible characters show nothing. Text plumb did
//! not write itself (patch lines, a ticket's title, a reviewer's notes, a setting's value, a tool
//! argument) could use them to make a screen say something other than what is there, so every
//! such character is written as visible text instead: `<U+001B>`.
//!
//! Pure functions over `&str`, borrowed back unchanged when nothing needs escaping. The escaped
//! text holds only printable characters, newlines and tabs, so escaping it again changes nothing.

use std::borrow::Cow;
use std::fmt::Write;

use crate::chars::{is_bidi_control, is_invisible};

/// `text` as a terminal should show it: every control character (C0 but newline and tab, DEL,
/// C1), ESC and so every sequence it starts, bidirectional controls and invisible characters
/// written as `<U+XXXX>`. Newlines and tabs stay, so lines stay lines, and so does a carriage
/// return right before a newline (a CRLF line ending moves the cursor to where the newline takes
/// it anyway: nothing on the line can be overwritten).
pub fn for_screen(text: &str) -> Cow<'_, str> {
    escape(text, hidden, true)
}

/// [`for_screen`] for a field that must stay on one line (a ticket's title in a table, a file
/// name, a tool argument): newline and tab are shown as `<U+000A>` and `<U+0009>` too.
pub fn for_screen_line(text: &str) -> Cow<'_, str> {
    escape(text, hidden_in_line, false)
}

/// JSON text (as serde_json writes it) with every character [`for_screen`] would escape written
/// as a JSON `\uXXXX` escape instead (a surrogate pair above U+FFFF): the same JSON value, but no
/// raw control, bidirectional or invisible character reaches a terminal. JSON's whitespace
/// between tokens (space, newline, tab, carriage return) is left as it is; valid JSON holds no
/// other control character outside a string, and none raw inside one.
pub fn json_for_screen(json: &str) -> Cow<'_, str> {
    let Some(first) = json.find(hidden_in_json) else {
        return Cow::Borrowed(json);
    };
    let (clean, rest) = json.split_at(first);
    let mut out = String::with_capacity(json.len() + 16);
    out.push_str(clean);
    for c in rest.chars() {
        if hidden_in_json(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Shown as `<U+XXXX>` in text that keeps its lines.
fn hidden(c: char) -> bool {
    // `is_invisible` already leaves tab out; it holds every C0 and C1 control, DEL and U+2028/9.
    c != '\n' && (is_invisible(c) || is_bidi_control(c))
}

/// Shown as `<U+XXXX>` in a one-line field.
fn hidden_in_line(c: char) -> bool {
    c == '\n' || c == '\t' || hidden(c)
}

/// Written as `\uXXXX` in JSON: all but JSON's own whitespace.
fn hidden_in_json(c: char) -> bool {
    !matches!(c, '\n' | '\t' | '\r') && hidden_in_line(c)
}

/// `text` with every character `hide` names written as `<U+XXXX>`; with `keep_crlf`, a carriage
/// return followed by a newline stays as it is.
fn escape(text: &str, hide: fn(char) -> bool, keep_crlf: bool) -> Cow<'_, str> {
    let kept_crlf =
        |rest: &str, at: usize| keep_crlf && rest.get(at..).is_some_and(|r| r.starts_with("\r\n"));
    let Some(first) = text
        .char_indices()
        .find(|&(at, c)| hide(c) && !kept_crlf(text, at))
        .map(|(at, _)| at)
    else {
        return Cow::Borrowed(text);
    };
    let (clean, rest) = text.split_at(first);
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(clean);
    for (at, c) in rest.char_indices() {
        if hide(c) && !kept_crlf(rest, at) {
            let _ = write!(out, "<U+{:04X}>", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "def f():\n\treturn «π» — ok\n";

        let actual = (for_screen(text), for_screen_line("a title, ünïcode"));

        assert!(matches!(actual.0, Cow::Borrowed(_)) && matches!(actual.1, Cow::Borrowed(_)));
        assert_eq!(
            (actual.0.as_ref(), actual.1.as_ref()),
            (text, "a title, ünïcode")
        );
    }

    #[test]
    fn controls_escapes_bidi_and_invisible_characters_become_visible_text() {
        let cases = [
            // A line that erases itself and draws another in its place.
            "evil()\u{1b}[2K\u{1b}[Gfine()",
            // The window title (OSC 0) and the clipboard (OSC 52), ended by BEL and by ST.
            "\u{1b}]0;owned\u{7}",
            "\u{1b}]52;c;ZXZpbA==\u{1b}\\",
            // Carriage return, backspace, DEL, a C1 CSI and a C1 OSC.
            "ok\rno\u{8}\u{7f}\u{9b}2J\u{9d}0;t",
            // Trojan Source: right-to-left override and isolates; zero-width and tag characters.
            "a\u{202e}b\u{2066}c\u{200b}d\u{feff}e\u{e0041}",
            // A line separator, which some terminals treat as a newline.
            "one\u{2028}two",
        ];

        let actual: Vec<String> = cases.iter().map(|c| for_screen(c).into_owned()).collect();

        let expected = [
            "evil()<U+001B>[2K<U+001B>[Gfine()",
            "<U+001B>]0;owned<U+0007>",
            "<U+001B>]52;c;ZXZpbA==<U+001B>\\",
            "ok<U+000D>no<U+0008><U+007F><U+009B>2J<U+009D>0;t",
            "a<U+202E>b<U+2066>c<U+200B>d<U+FEFF>e<U+E0041>",
            "one<U+2028>two",
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_crlf_line_ending_stays_a_carriage_return_inside_a_line_does_not() {
        let text = "+ok = 1\r\n+no\rpe\r";

        let actual = (
            for_screen(text),
            for_screen("a\r\n"),
            for_screen_line("a\r\n"),
        );

        assert!(matches!(actual.1, Cow::Borrowed(_)));
        assert_eq!(
            (actual.0.as_ref(), actual.1.as_ref(), actual.2.as_ref()),
            (
                "+ok = 1\r\n+no<U+000D>pe<U+000D>",
                "a\r\n",
                "a<U+000D><U+000A>"
            )
        );
    }

    #[test]
    fn newline_and_tab_stay_in_text_and_are_shown_in_a_one_line_field() {
        let text = "first\n\tsecond\u{1b}[A";

        let actual = (for_screen(text), for_screen_line(text));

        assert_eq!(
            (actual.0.as_ref(), actual.1.as_ref()),
            (
                "first\n\tsecond<U+001B>[A",
                "first<U+000A><U+0009>second<U+001B>[A"
            )
        );
    }

    #[test]
    fn escaping_twice_is_escaping_once() {
        let text = "x\u{1b}]0;t\u{7}\u{202e}\ny";

        let once = for_screen_line(text).into_owned();

        assert_eq!(for_screen_line(&once), once.as_str());
        assert_eq!(for_screen(&once), once.as_str());
    }

    #[test]
    fn json_keeps_its_value_and_loses_every_raw_hidden_character() {
        let value = serde_json::json!({
            "title": "pay \u{202e}later\u{7f}\u{85}",
            "patch": "+a\u{1b}[2K\n",
            "tag": "\u{e0041}",
        });
        let text = serde_json::to_string_pretty(&value).unwrap();

        let actual = json_for_screen(&text).into_owned();

        let reread: serde_json::Value = serde_json::from_str(&actual).unwrap();
        let raw_hidden: Vec<char> = actual
            .chars()
            .filter(|&c| c != '\n' && hidden_in_line(c))
            .collect();
        assert_eq!((reread, raw_hidden), (value, Vec::new()));
        assert!(actual.contains(r"pay \u202elater\u007f\u0085"), "{actual}");
        assert!(actual.contains(r"\udb40\udc41"), "{actual}");
    }
}
