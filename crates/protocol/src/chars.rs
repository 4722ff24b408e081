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
