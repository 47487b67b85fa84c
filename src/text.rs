//! Text that others chose (entrants' names, which come from folder names,
//! directories, a build's messages), made harmless where it is written.
//!
//! Records and `standings.json` keep such text as it is. Everything
//! written for people gets a form that cannot act on what shows it: a
//! terminal or a log people read would obey an escape sequence (colours, a
//! window title), a newline would split a table's row and a bidi control
//! reverses what follows; a spreadsheet takes a cell that starts with `=`
//! for a formula. Leaf module: it imports nothing from the crate.

use std::borrow::Cow;
use std::fmt::Write;

/// The Unicode bidi controls (the `Bidi_Control` property): each changes
/// the direction of the text after it.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// What a terminal or a reader could take for something other than a
/// character: C0 and C1 controls (escape sequences, line ends), bidi
/// controls, and the line and paragraph separators.
fn is_unsafe(c: char) -> bool {
    c.is_control() || is_bidi_control(c) || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `text` for a terminal or a log people read: every control character and
/// bidi control written as its escape (`\n`, `\t`, `\x1b`, `\u{202e}`), so
/// that it shows and does nothing. The rest is left as it is.
pub fn terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii() && is_unsafe(c) => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// As [`terminal`], but line ends are kept: for a message of several
/// lines (a build log's tail).
pub fn terminal_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<'_, str>> = text.split('\n').map(terminal).collect();
    Cow::Owned(lines.join("\n"))
}

/// A path for a terminal, as [`terminal`] writes text.
pub fn terminal_path(path: &std::path::Path) -> String {
    terminal(&path.to_string_lossy()).into_owned()
}

/// A CSV cell of text for a spreadsheet: a cell starting with `=`, `+`,
/// `-`, `@`, a tab or a carriage return gets a `'` in front, so that no
/// spreadsheet takes it for a formula (OWASP's rule for CSV injection).
/// Quoting is [`csv`]'s.
pub fn csv_text(text: &str) -> Cow<'_, str> {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{text}"))
    } else {
        Cow::Borrowed(text)
    }
}

/// A CSV file: `header`, then `rows`, fields quoted where RFC 4180 needs
/// it, lines ending in `\n`. Text cells go through [`csv_text`] first.
pub fn csv<R, C>(header: &[&str], rows: R) -> String
where
    R: IntoIterator,
    R::Item: IntoIterator<Item = C>,
    C: AsRef<[u8]>,
{
    // Flexible: no row width can make it fail; and writing to memory
    // cannot fail either, so nothing is lost by ignoring the results.
    let mut out = csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    let _ = out.write_record(header);
    for row in rows {
        let _ = out.write_record(row);
    }
    let bytes = out.into_inner().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn controls_show_escaped_and_plain_text_is_untouched() {
        assert_eq!(terminal("alice"), "alice");
        assert!(matches!(terminal("Zoë ü"), Cow::Borrowed(_)));
        assert_eq!(terminal("red\u{1b}[31m"), "red\\x1b[31m");
        assert_eq!(terminal("t\u{1b}]0;x\u{7}"), "t\\x1b]0;x\\x07");
        assert_eq!(terminal("two\nlines\r\t"), "two\\nlines\\r\\t");
        assert_eq!(terminal("rev\u{202e}olleh"), "rev\\u{202e}olleh");
        assert_eq!(terminal("c1\u{9b}31m"), "c1\\u{9b}31m");
        assert_eq!(terminal_lines("a\u{1b}\n  | b"), "a\\x1b\n  | b");
        assert!(matches!(terminal_lines("a\nb"), Cow::Borrowed(_)));
    }

    #[test]
    fn formulas_get_a_quote_and_cells_are_quoted() {
        for formula in ["=2+3", "@SUM(1+1)", "+1+1", "-1+1", "\tx", "\rx"] {
            assert_eq!(csv_text(formula), format!("'{formula}"));
        }
        assert_eq!(csv_text("alice"), "alice");
        assert_eq!(csv_text("a=b"), "a=b");
        let text = csv(
            &["name", "n"],
            [
                [csv_text("=1").into_owned(), "2".into()],
                ["a,\"b\"\nc".into(), "-3".into()],
            ],
        );
        assert_eq!(text, "name,n\n'=1,2\n\"a,\"\"b\"\"\nc\",-3\n");
    }

    proptest! {
        #[test]
        fn terminal_text_holds_no_control(text in any::<String>()) {
            let shown = terminal(&text);
            prop_assert!(!shown.chars().any(is_unsafe), "{:?}", shown);
            // Nothing is lost: plain text is kept whole.
            if !text.chars().any(is_unsafe) {
                prop_assert_eq!(shown.as_ref(), text.as_str());
            }
        }

        #[test]
        fn names_made_of_controls_come_out_clean(
            text in "[a-z=\\x00-\\x1f\\x7f-\\u{9f}\\u{200e}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}]{0,20}"
        ) {
            prop_assert!(!terminal(&text).chars().any(is_unsafe));
        }
    }
}
