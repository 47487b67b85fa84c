//! A JSON object written field by field, for records that a fast game
//! writes on every game.
//!
//! serde's derive writes every key through its string escaper, and a
//! `flatten`ed field sends the whole object through a map: for the dealer,
//! whose 13-card game is some forty microseconds of round trips, that was
//! about three microseconds of each game (docs/PERFORMANCE.md §14). Here a
//! key is a `&'static str` that needs no escaping, written as it is, and
//! only text that came from outside (a bot's stderr, a path) is escaped,
//! by serde_json itself. Each writer built on this is tested to give the
//! same bytes as the serde derive it stands for, which stays the
//! reference.

/// An object being written into `out`: [`Object::end`] closes it.
#[must_use = "an object is closed by Object::end"]
pub struct Object<'a> {
    out: &'a mut Vec<u8>,
    empty: bool,
}

impl<'a> Object<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Object<'a> {
        out.push(b'{');
        Object { out, empty: true }
    }

    /// Starts the field `key`; its value comes next. Inlined, so that a
    /// key's length is known where it is copied.
    #[inline(always)]
    fn key(&mut self, key: &'static str) -> &mut Vec<u8> {
        debug_assert!(plain(key), "{key:?} needs escaping");
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    /// A string from anywhere: escaped as JSON wants it.
    pub fn text(&mut self, key: &'static str, value: &str) -> &mut Self {
        escaped(self.key(key), value);
        self
    }

    /// A string of the program's own that needs no escaping: a name from
    /// a table (a card, a status), never text from outside.
    #[inline]
    pub fn name(&mut self, key: &'static str, value: &'static str) -> &mut Self {
        name(self.key(key), value);
        self
    }

    #[inline]
    pub fn number(&mut self, key: &'static str, value: u64) -> &mut Self {
        number(self.key(key), value);
        self
    }

    /// The field only when there is a value, as serde's
    /// `skip_serializing_if = "Option::is_none"`.
    #[inline]
    pub fn maybe_number(&mut self, key: &'static str, value: Option<u64>) -> &mut Self {
        if let Some(value) = value {
            self.number(key, value);
        }
        self
    }

    /// A time, as records write it (see [`super::write_time`]).
    pub fn time(&mut self, key: &'static str, at: std::time::SystemTime) -> &mut Self {
        super::write_time(self.key(key), at);
        self
    }

    #[inline]
    pub fn boolean(&mut self, key: &'static str, value: bool) -> &mut Self {
        let out = self.key(key);
        out.extend_from_slice(if value { b"true" } else { b"false" });
        self
    }

    /// An array, each item written by `write`.
    pub fn array<T>(
        &mut self,
        key: &'static str,
        items: impl IntoIterator<Item = T>,
        mut write: impl FnMut(&mut Vec<u8>, T),
    ) -> &mut Self {
        let out = self.key(key);
        out.push(b'[');
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write(out, item);
        }
        out.push(b']');
        self
    }

    /// An object, its fields written by `write`.
    pub fn object(&mut self, key: &'static str, write: impl FnOnce(&mut Object<'_>)) -> &mut Self {
        let mut inner = Object::new(self.key(key));
        write(&mut inner);
        inner.end();
        self
    }

    pub fn end(self) {
        self.out.push(b'}');
    }
}

/// `value` as a JSON string, escaped as serde_json escapes it.
pub fn escaped(out: &mut Vec<u8>, value: &str) {
    // Writing into a Vec cannot fail.
    let _ = serde_json::to_writer(out, value);
}

/// `value`, which needs no escaping, as a JSON string.
#[inline]
pub fn name(out: &mut Vec<u8>, value: &'static str) {
    debug_assert!(plain(value), "{value:?} needs escaping");
    out.reserve(value.len() + 2);
    out.push(b'"');
    // Byte by byte: a name is a few bytes (a card's two or three), which
    // a call to memcpy would cost more than.
    for &byte in value.as_bytes() {
        out.push(byte);
    }
    out.push(b'"');
}

/// `value` in decimal.
pub fn number(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Whether JSON takes `text` between quotes as it is.
fn plain(text: &str) -> bool {
    text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn an_object_is_what_serde_json_writes() {
        let mut out = Vec::new();
        let mut object = Object::new(&mut out);
        object
            .name("game", "evensteven")
            .number("index", 0)
            .maybe_number("none", None)
            .maybe_number("some", Some(u64::MAX))
            .boolean("yes", true)
            .boolean("no", false)
            .array("cards", ["Qh", "10s"], name)
            .array("empty", Vec::<u64>::new(), number)
            .object("error", |error| {
                error.text("message", "a \"quote\"\n\u{1}é");
            })
            .text("path", "C:\\bots\tone");
        object.end();
        let expected = serde_json::json!({
            "game": "evensteven",
            "index": 0,
            "some": u64::MAX,
            "yes": true,
            "no": false,
            "cards": ["Qh", "10s"],
            "empty": [],
            "error": {"message": "a \"quote\"\n\u{1}é"},
            "path": "C:\\bots\tone",
        });
        // Values compare without regard to the fields' order; the text
        // checks below pin the order and the escapes.
        let written: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(written, expected);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(r#"{"game":"evensteven","index":0,"some":18446744073709551615,"#));
        assert!(
            text.contains(r#""message":"a \"quote\"\n\u0001é""#),
            "{text}"
        );
    }

    proptest! {
        #[test]
        fn numbers_are_written_as_serde_json_writes_them(n in any::<u64>()) {
            let mut out = Vec::new();
            number(&mut out, n);
            prop_assert_eq!(out, serde_json::to_vec(&n).unwrap());
        }

        #[test]
        fn text_is_escaped_as_serde_json_escapes_it(s in any::<String>()) {
            let mut out = Vec::new();
            escaped(&mut out, &s);
            prop_assert_eq!(out, serde_json::to_vec(&s).unwrap());
        }
    }
}
