//! Characters that do not show as themselves, shared by path confinement (which refuses them in
//! a name the model gives), the tamper scan (which flags or blocks them in a patch) and the one
//! door to a person's screen (which shows them as visible text).

/// A bidirectional control: U+202A–U+202E, U+2066–U+2069, U+200E/U+200F and U+061C (the Trojan
/// Source class: text that reads differently from what it is).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// Cc and Cf (Unicode 15.1) other than tab and the bidirectional controls, plus U+2028/U+2029.
pub fn is_invisible(c: char) -> bool {
    c != '\t'
        && matches!(c,
            '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{ad}'
            | '\u{600}'..='\u{605}'
            | '\u{6dd}'
            | '\u{70f}'
            | '\u{890}'..='\u{891}'
            | '\u{8e2}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200d}'
            | '\u{2028}'..='\u{2029}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206a}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}')
}

/// A character a terminal acts on instead of showing: C0 controls other than tab and newline,
/// DEL and the C1 controls (U+0080–U+009F). ESC starts the sequences that move the cursor,
/// erase lines, retitle the window or write the clipboard; a carriage return or backspace
/// overwrites what came before it on the line.
pub fn is_terminal_control(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

/// What a character that is not `/`, `\` or `.` looks like when it looks like one of them (or
/// like `..` or `...`), so a file name such as `a∕..∕etc` reads as a path that climbs out. The
/// list is the punctuation and symbols Unicode's confusables data maps to those characters;
/// letters of living scripts that resemble a slash (Katakana ノ, CJK 丿) are left out, since
/// names in those languages hold them for what they are.
pub fn looks_like_path_syntax(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2044}' | '\u{2215}' | '\u{2571}' | '\u{29f8}' | '\u{ff0f}' | '\u{1735}'
        | '\u{2041}' | '\u{27cb}' | '\u{3033}' | '\u{31d3}' | '\u{2cc6}' | '\u{2f03}'
        | '\u{1d23a}' | '\u{0338}' => "/",
        '\u{2216}' | '\u{27cd}' | '\u{29f5}' | '\u{29f9}' | '\u{fe68}' | '\u{ff3c}'
        | '\u{31d4}' | '\u{2f02}' | '\u{1d20f}' | '\u{1d23b}' => "\\",
        '\u{2024}' | '\u{fe52}' | '\u{ff0e}' | '\u{0701}' | '\u{0702}' | '\u{a60e}'
        | '\u{10a50}' | '\u{a4f8}' | '\u{1d16d}' => ".",
        '\u{2025}' | '\u{fe30}' => "..",
        '\u{2026}' | '\u{fe19}' => "...",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn terminal_controls_are_the_c0_and_c1_sets_but_tab_and_newline() {
        let controls: Vec<u32> = (0u32..0x200)
            .filter_map(char::from_u32)
            .filter(|c| is_terminal_control(*c))
            .map(u32::from)
            .collect();
        let expected: Vec<u32> = (0u32..=0x1f)
            .filter(|c| *c != 0x09 && *c != 0x0a)
            .chain(0x7f..=0x9f)
            .collect();
        assert_eq!(controls, expected);
    }

    #[test]
    fn path_lookalikes_name_what_they_look_like() {
        let actual: Vec<Option<&str>> = ['\u{2215}', '\u{ff3c}', '\u{ff0e}', '\u{2025}', '/', 'ノ']
            .into_iter()
            .map(looks_like_path_syntax)
            .collect();
        assert_eq!(
            actual,
            vec![Some("/"), Some("\\"), Some("."), Some(".."), None, None]
        );
    }
}
