//! Text from results (ids, reasons, flags, messages) goes into `report.html` only through
//! [`html`]: a task id such as `<script>` is shown, never run.

/// `text` with `&`, `<`, `>`, `"` and `'` replaced by entities: safe as element text and as a
/// quoted attribute value.
pub(crate) fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A relative path for an `href`: each byte outside letters, digits, `-_.~/` percent-encoded, so
/// a name with `#`, `?` or a space still links to the file (task folders are already plain).
pub(crate) fn href(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn escapes_markup_and_encodes_links() {
        let actual = (
            html(r#"<script>alert("x's & y")</script>"#),
            href("a b/attempt-1/#x?.json"),
        );
        let expected = (
            "&lt;script&gt;alert(&quot;x&#39;s &amp; y&quot;)&lt;/script&gt;".to_string(),
            "a%20b/attempt-1/%23x%3F.json".to_string(),
        );
        assert_eq!(actual, expected);
    }
}
