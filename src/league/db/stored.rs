//! How a string is stored so that it reads back byte for byte, on both
//! back ends, whatever a bot or a build wrote: NUL and every other
//! control character, any Unicode.
//!
//! SQLite's TEXT holds any string, NUL included (rusqlite binds it by
//! its length): it is stored as it is. PostgreSQL's TEXT cannot hold a
//! NUL (`invalid byte sequence for encoding "UTF8": 0x00`), so on
//! PostgreSQL every text a caller gives (names, build logs, a failure's
//! why, settings, a version's player, a table's outcome, a worker's
//! notes) is [`escape`]d, and [`unescape`]d as it is read: a NUL is
//! written as SOH `0`, and SOH itself as SOH `1` (SOH, U+0001, is a
//! control character that text and JSON hardly ever hold, so a stored
//! text is nearly always its own escape, and psql shows it as it is).
//! ASCII, so that the escape is text in any server encoding.
//!
//! A game's record is not escaped: it is JSON that the back end writes
//! itself with serde_json, which writes a NUL (in a bot's stderr, or a
//! move) as `\u0000` and reads it back; the column is TEXT, not jsonb
//! (which refuses `\u0000`). A version's products and a table's versions
//! and rotations are the same (serde_json's JSON).
//!
//! Schema 3 of PostgreSQL escapes; a database of schema 2 is migrated by
//! escaping the SOH its text may hold ([`migrate_sql`]); nothing in it
//! held a NUL.

use std::borrow::Cow;

/// The escape character: SOH.
const ESCAPE: char = '\u{1}';

/// `text` as PostgreSQL stores it: without a NUL.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.contains(['\0', ESCAPE]) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => out.push_str("\u{1}0"),
            ESCAPE => out.push_str("\u{1}1"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `stored` as it was given to [`escape`]. An escape it did not write
/// (another program's) is kept as it is.
pub fn unescape(stored: String) -> String {
    if !stored.contains(ESCAPE) {
        return stored;
    }
    let mut out = String::with_capacity(stored.len());
    let mut chars = stored.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            (ESCAPE, Some('0')) => {
                chars.next();
                out.push('\0');
            }
            (ESCAPE, Some('1')) => {
                chars.next();
                out.push(ESCAPE);
            }
            (c, _) => out.push(c),
        }
    }
    out
}

/// SQL that escapes, as [`escape`] does, column `column` of `table` of a
/// database written before text was escaped (which held no NUL).
pub fn migrate_sql(table: &str, column: &str) -> String {
    format!(
        "UPDATE {table} SET {column} = replace({column}, chr(1), chr(1) || '1') \
         WHERE strpos({column}, chr(1)) > 0;"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_comes_back_and_plain_text_is_stored_as_it_is() {
        for text in [
            "",
            "plain",
            "a\0b",
            "\u{1}0",
            "\u{1}",
            "\0\u{1}1\0",
            "é\u{1}\u{1}",
        ] {
            let stored = escape(text);
            assert!(!stored.contains('\0'), "{stored:?}");
            assert_eq!(unescape(stored.into_owned()), text);
        }
        assert!(matches!(escape("make: ok\n"), Cow::Borrowed(_)));
        // Another program's SOH is kept.
        assert_eq!(unescape("x\u{1}".into()), "x\u{1}");
        assert_eq!(unescape("\u{1}x".into()), "\u{1}x");
    }
}
