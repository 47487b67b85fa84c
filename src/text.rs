//! Text that others chose (entrants' names, which come from folder names,
//! directories, a build's messages), made harmless where it is written.
//!
//! Records and `standings.json` keep such text as it is. Everything
//! written for people gets a form that cannot act on what shows it: a
//! terminal or a log people read would obey an escape sequence (colours, a
//! window title), a newline would split a table's row and a bidi control
//! reverses what follows; a spreadsheet takes a cell that starts with `=`
//! for a formula; a file system keeps one file per name only if no two
//! names are made the same file name. Leaf module: it imports nothing
//! from the crate.

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

/// A stream of bytes a program writes (its standard error, copied as it
/// arrives with `--show-stderr`), for a terminal: each chunk as
/// [`terminal_lines`] shows text, its line ends (`\n`, or `\r\n`) kept;
/// bytes that are not UTF-8 as U+FFFD, as a program's lines are read
/// elsewhere. A character or a `\r\n` cut between two chunks waits for
/// the next one.
#[derive(Debug, Default)]
pub struct TerminalStream {
    carry: Vec<u8>,
}

impl TerminalStream {
    /// What to show of `chunk`, the bytes after those of earlier chunks.
    pub fn push(&mut self, chunk: &[u8]) -> String {
        self.carry.extend_from_slice(chunk);
        let mut out = String::new();
        let mut rest = self.carry.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    let (text, cut) = match text.strip_suffix('\r') {
                        Some(text) => (text, rest.len() - 1),
                        None => (text, rest.len()),
                    };
                    out.push_str(&terminal_lines(&text.replace("\r\n", "\n")));
                    rest = &rest[cut..];
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    // Valid UTF-8, as just checked.
                    let good = std::str::from_utf8(good).unwrap_or_default();
                    out.push_str(&terminal_lines(&good.replace("\r\n", "\n")));
                    match e.error_len() {
                        Some(n) => {
                            out.push('\u{fffd}');
                            rest = &bad[n..];
                        }
                        // Cut short: the rest of it comes next.
                        None => {
                            rest = bad;
                            break;
                        }
                    }
                }
            }
        }
        let kept = rest.len();
        let start = self.carry.len() - kept;
        self.carry.drain(..start);
        out
    }
}

/// Lines a program wrote (its standard error, a judge's message), quoted
/// for a terminal: each as `  | LINE`, its control characters escaped as
/// [`terminal`] does, so that what a bot writes can neither retitle nor
/// clear the terminal nor plant a link in it. Each line ends in `\n`.
pub fn quoted_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for line in lines {
        let _ = writeln!(out, "  | {}", terminal(line));
    }
    out
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

/// A message of several lines on one line: each line trimmed, with a
/// build log's quote mark (`  | `) taken off, empty ones left out, the
/// rest joined with ` / `.
pub fn one_line(text: &str) -> String {
    text.lines()
        .map(|l| l.trim().trim_start_matches('|').trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
}

/// At most `most` characters of `text`, with `…` where it was cut.
pub fn cut(text: &str, most: usize) -> Cow<'_, str> {
    match text.char_indices().nth(most) {
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
        None => Cow::Borrowed(text),
    }
}

/// Whether a line of a build's output reads as a compiler's error: gcc's,
/// clang's and javac's `FILE:LINE: error: ...`, rustc's `error: ...` and
/// `error[E0308]: ...`, Python's `SyntaxError: ...`. Not make's closing
/// `*** [Makefile:2: pc2] Error 1`, which only says that something failed.
pub fn is_error_line(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    lower.contains("error:") || lower.contains("error[")
}

/// What a plain file name is made of: POSIX's portable file name set.
fn is_portable(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// The longest name kept whole in a file name, and the longest stem.
const LONGEST_FILE_NAME: usize = 64;

/// The last part of `path` as text (`/a/b.py` is `b.py`; lossy where it
/// is not UTF-8), for messages and natural ordering.
pub fn name_of(path: &std::path::Path) -> String {
    path.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// The name of a file (without its extension) that belongs to `name`, one
/// file per name: `name` itself when it is plain (portable characters, not
/// starting with `.`, at most 64 of them), else [`file_name_keyed`] with
/// the name as its key: `x y` is `x_y~` and a hash. A plain name never
/// holds `~`, so a plain name and a hashed one never meet.
pub fn file_name(name: &str) -> String {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && name.chars().count() <= LONGEST_FILE_NAME
        && name.chars().all(is_portable);
    if plain {
        name.to_owned()
    } else {
        file_name_keyed(name, name.as_bytes())
    }
}

/// A readable stem of `label` (its portable characters kept, the others
/// and a leading `.` made `_`, at most 64), `~`, and 8 hex digits of the
/// FNV-1a hash of `key`: the same on every machine and in every version,
/// so that a resumed run appends to the same files.
pub fn file_name_keyed(label: &str, key: &[u8]) -> String {
    use std::hash::Hasher;
    let stem: String = label
        .chars()
        .take(LONGEST_FILE_NAME)
        .enumerate()
        .map(|(i, c)| match c {
            '.' if i == 0 => '_',
            c if is_portable(c) => c,
            _ => '_',
        })
        .collect();
    let mut hash = fnv::FnvHasher::default();
    hash.write(key);
    let hash = hash.finish();
    format!("{stem}~{:08x}", (hash ^ (hash >> 32)) as u32)
}

/// Compares two names as people count: runs of digits by their value
/// (`2` before `10`), everything else character by character. Equal
/// values with different spellings (`01`, `1`) fall back to the plain
/// order, so the order is total.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut x, mut y) = (a, b);
    loop {
        let (Some(cx), Some(cy)) = (x.chars().next(), y.chars().next()) else {
            return x.len().cmp(&y.len()).then_with(|| a.cmp(b));
        };
        if cx.is_ascii_digit() && cy.is_ascii_digit() {
            let (dx, rx) = split_digits(x);
            let (dy, ry) = split_digits(y);
            let (vx, vy) = (dx.trim_start_matches('0'), dy.trim_start_matches('0'));
            let order = vx.len().cmp(&vy.len()).then_with(|| vx.cmp(vy));
            if order.is_ne() {
                return order;
            }
            (x, y) = (rx, ry);
        } else {
            if cx != cy {
                return cx.cmp(&cy);
            }
            (x, y) = (&x[cx.len_utf8()..], &y[cy.len_utf8()..]);
        }
    }
}

/// The leading ASCII digits of `text`, and the rest.
fn split_digits(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
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
    fn a_stream_shows_escaped_with_its_cuts_healed() {
        let mut stream = TerminalStream::default();
        assert_eq!(stream.push(b"a\x1b]0;x\x07\n"), "a\\x1b]0;x\\x07\n");
        // A character and a `\r\n` cut between chunks.
        assert_eq!(
            stream.push("Zo\u{eb}".as_bytes().split_last().unwrap().1),
            "Zo"
        );
        assert_eq!(stream.push(&[0xab, b'\r']), "\u{eb}");
        assert_eq!(stream.push(b"\nnext\tx"), "\nnext\\tx");
        assert_eq!(stream.push(b"\xff\xfe!\r!"), "\u{fffd}\u{fffd}!\\r!");
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

    #[test]
    fn compilers_errors_are_told_from_makes_summary() {
        for line in [
            "carol.c:3:27: error: expected ';' before '}' token",
            "Main.java:5: error: ';' expected",
            "error[E0308]: mismatched types",
            "error: expected one of `.`, `;`, `?`, `}`, or an operator, found `x`",
            "SyntaxError: invalid syntax",
        ] {
            assert!(is_error_line(line), "{line}");
        }
        for line in [
            "make: *** [Makefile:2: pc2] Error 1",
            "    3 | int main(void) { return 0 }",
            "1 error generated.",
        ] {
            assert!(!is_error_line(line), "{line}");
        }
        assert_eq!(one_line("a\n  | b\n\n  |\nc "), "a / b / c");
        assert_eq!(cut("héllo", 2), "hé…");
        assert_eq!(cut("hé", 2), "hé");
    }

    #[test]
    fn file_names_are_plain_names_or_carry_a_hash() {
        assert_eq!(file_name("alice"), "alice");
        assert_eq!(file_name("x_y"), "x_y");
        let names = [
            "x y", "x?y", "Zoë", "Zoé", ".hidden", "..", "", "a/b", "x_y~0",
        ];
        let mut seen: Vec<String> = names.iter().map(|n| file_name(n)).collect();
        for (name, file) in names.iter().zip(&seen) {
            assert!(file.contains('~'), "{name:?}: {file}");
            assert!(!file.starts_with('.') && !file.contains('/'), "{file}");
        }
        assert!(seen[0].starts_with("x_y~") && seen[2].starts_with("Zo_~"));
        // Stable: the same name, the same file, in every run.
        assert_eq!(file_name("x y"), seen[0]);
        seen.push("x_y".into());
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), names.len() + 1);
        let long = "a".repeat(200);
        assert_eq!(file_name(&long).len(), 64 + 9);
    }

    proptest! {
        #[test]
        fn file_names_are_portable(name in any::<String>()) {
            let file = file_name(&name);
            prop_assert!(!file.is_empty() && !file.starts_with('.'));
            prop_assert!(file.chars().all(|c| is_portable(c) || c == '~'), "{}", file);
        }

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
        fn a_stream_holds_no_control_however_cut(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
            cuts in proptest::collection::vec(0usize..200, 0..8),
        ) {
            let mut stream = TerminalStream::default();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut shown = String::new();
            let mut from = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                shown.push_str(&stream.push(&bytes[from..cut]));
                from = cut;
            }
            prop_assert!(!shown.chars().any(|c| c != '\n' && is_unsafe(c)), "{:?}", shown);
            // Plain text comes out whole, however it was cut.
            if let Ok(text) = std::str::from_utf8(&bytes) && !text.chars().any(is_unsafe) {
                prop_assert_eq!(shown.as_str(), text);
            }
        }

        #[test]
        fn names_made_of_controls_come_out_clean(
            text in "[a-z=\\x00-\\x1f\\x7f-\\u{9f}\\u{200e}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}]{0,20}"
        ) {
            prop_assert!(!terminal(&text).chars().any(is_unsafe));
        }
    }

    #[test]
    fn names_sort_as_people_count() {
        let mut names = vec!["10", "2", "1", "group10", "group2", "a", "01", "1b", "1a"];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            ["01", "1", "1a", "1b", "2", "10", "a", "group2", "group10"]
        );
    }

    proptest::proptest! {
        #[test]
        fn natural_order_is_a_total_order(a in ".{0,12}", b in ".{0,12}", c in ".{0,12}") {
            use std::cmp::Ordering::*;
            proptest::prop_assert_eq!(natural_cmp(&a, &b), natural_cmp(&b, &a).reverse());
            proptest::prop_assert_eq!(natural_cmp(&a, &b) == Equal, a == b);
            if natural_cmp(&a, &b) != Greater && natural_cmp(&b, &c) != Greater {
                proptest::prop_assert!(natural_cmp(&a, &c) != Greater);
            }
        }
    }
}
