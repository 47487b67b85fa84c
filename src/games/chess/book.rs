//! The opening book: an EPD file, one position per line, read as
//! python-chess's `Board.from_epd` reads a line (the four fields of the
//! position, then operations such as `hmvc 4; fmvn 6; id "Ruy Lopez";`),
//! and the order its lines are played in, sequential or shuffled as
//! Python's `random.Random(seed).shuffle` shuffles them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::board::Position;
use super::py;

/// A position of the book: its line (from 1, as the file counts its
/// lines), the position, and its `id` operation (`null` without one).
pub struct Opening {
    pub line: usize,
    pub position: Position,
    pub name: Value,
}

/// The books read so far, each read once per judge process, and their
/// shuffled orders, each drawn once per seed.
#[derive(Default)]
pub struct Books {
    books: HashMap<String, Vec<(usize, String)>>,
    orders: HashMap<(String, u64), Vec<usize>>,
    /// Where a relative path is read from: the judge's working folder
    /// when `None`.
    dir: Option<PathBuf>,
}

impl Books {
    /// Books whose relative paths are read from `dir`.
    pub fn in_dir(dir: PathBuf) -> Books {
        Books {
            dir: Some(dir),
            ..Books::default()
        }
    }

    /// The book's lines that hold something (from 1), read once; or why
    /// it cannot be read, as the judge refuses it.
    pub fn lines(&mut self, path: &str) -> Result<&[(usize, String)], String> {
        if !self.books.contains_key(path) {
            let shown = py::json(&Value::String(path.to_owned()));
            let text = read(path, self.dir.as_deref())
                .map_err(|e| format!("game option openings = {shown}: cannot read it: {e}"))?;
            let lines: Vec<(usize, String)> = split_lines(&text)
                .into_iter()
                .enumerate()
                .filter(|(_, line)| !py::strip(line).is_empty())
                .map(|(n, line)| (n + 1, line.to_owned()))
                .collect();
            if lines.is_empty() {
                return Err(format!(
                    "game option openings = {shown}: the file holds no position"
                ));
            }
            self.books.insert(path.to_owned(), lines);
        }
        Ok(&self.books[path])
    }

    /// Index `at` of the book `path` of `size` lines in the order `seed`
    /// shuffles it.
    pub fn shuffled(&mut self, path: &str, size: usize, seed: u64, at: usize) -> usize {
        let order = self
            .orders
            .entry((path.to_owned(), seed))
            .or_insert_with(|| {
                let mut order: Vec<usize> = (0..size).collect();
                py::Random::new(seed).shuffle(&mut order);
                order
            });
        order[at]
    }
}

/// The file's text, or the error as Python words it (`[Errno 2] No such
/// file or directory: 'book.epd'`, `'utf-8' codec can't decode byte 0xff
/// in position 3: invalid start byte`).
fn read(path: &str, dir: Option<&Path>) -> Result<String, String> {
    let file = match dir {
        Some(dir) => dir.join(path),
        None => PathBuf::from(path),
    };
    let bytes = std::fs::read(file).map_err(|e| match e.raw_os_error() {
        Some(code) => {
            let text = e.to_string();
            let suffix = format!(" (os error {code})");
            let what = text.strip_suffix(&suffix).unwrap_or(&text);
            format!("[Errno {code}] {what}: {}", py::repr(path))
        }
        None => e.to_string(),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let error = e.utf8_error();
        let at = error.valid_up_to();
        let (length, why) = match error.error_len() {
            None => (bytes.len() - at, "unexpected end of data"),
            Some(n) if (0xc2..=0xf4).contains(&bytes[at]) => (n, "invalid continuation byte"),
            Some(n) => (n, "invalid start byte"),
        };
        let which = if length == 1 {
            format!("byte 0x{:02x} in position {at}", bytes[at])
        } else {
            format!("bytes in position {at}-{}", at + length - 1)
        };
        format!("'utf-8' codec can't decode {which}: {why}")
    })
}

/// Python's `str.splitlines()`: lines end at `\n`, `\r\n`, `\r`, and the
/// other line boundaries Python knows (`\v`, `\f`, U+001C–U+001E, U+0085,
/// U+2028, U+2029).
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let boundary = matches!(
            c,
            '\n' | '\r'
                | '\u{b}'
                | '\u{c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if boundary {
            lines.push(&text[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' && chars.peek().is_some_and(|(_, n)| *n == '\n') {
                chars.next();
                end += 1;
            }
            start = end;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// An operand of an EPD operation, as python-chess reads it.
#[derive(Clone, Debug, PartialEq)]
enum Operand {
    None,
    Text(String),
    Int(i64),
    Float(f64),
    /// Moves (`bm`, `am`, `pv`, or any other opcode's unquoted operand),
    /// in UCI.
    Moves(Vec<String>),
}

impl Operand {
    /// Python's `str()` of it, which python-chess puts into the FEN for
    /// `hmvc` and `fmvn`.
    fn text(&self) -> String {
        match self {
            Operand::None => "None".to_owned(),
            Operand::Text(t) => t.clone(),
            Operand::Int(n) => n.to_string(),
            Operand::Float(f) => py::float_repr(*f),
            Operand::Moves(moves) => moves.join(" "),
        }
    }

    fn value(&self) -> Value {
        match self {
            Operand::None => Value::Null,
            Operand::Text(t) => Value::String(t.clone()),
            Operand::Int(n) => Value::from(*n),
            Operand::Float(f) => Value::from(*f),
            Operand::Moves(moves) => Value::String(moves.join(" ")),
        }
    }
}

/// A line of the book read as python-chess's `Board.from_epd`: the
/// position (its move counters from `hmvc` and `fmvn`) and its `id`.
pub fn parse_epd(epd: &str) -> Result<(Position, Value), String> {
    let trimmed = py::strip(epd).trim_end_matches(';');
    let mut parts: Vec<&str> = Vec::new();
    let mut rest = trimmed.trim_start_matches(py::is_space);
    while !rest.is_empty() && parts.len() < 4 {
        let end = rest.find(py::is_space).unwrap_or(rest.len());
        parts.push(&rest[..end]);
        rest = rest[end..].trim_start_matches(py::is_space);
    }
    if rest.is_empty() {
        return Ok((Position::from_fen(epd)?, Value::Null));
    }
    let ops = operations(rest, &parts.join(" "))?;
    let field = |name: &str, default: &str| {
        ops.iter()
            .rev()
            .find(|(op, _)| op == name)
            .map_or(default.to_owned(), |(_, v)| v.text())
    };
    let fen = format!(
        "{} {} {}",
        parts.join(" "),
        field("hmvc", "0"),
        field("fmvn", "1")
    );
    let position = Position::from_fen(&fen)?;
    let id = ops
        .iter()
        .rev()
        .find(|(op, _)| op == "id")
        .map_or(Value::Null, |(_, v)| v.value());
    Ok((position, id))
}

/// python-chess's `_parse_epd_ops`: `opcode operand;` pairs, an operand
/// quoted (with `\` escapes), numeric, or moves in SAN or UCI (checked
/// on the position `fields`, the EPD's four fields).
fn operations(text: &str, fields: &str) -> Result<Vec<(String, Operand)>, String> {
    let mut reader = OpsReader {
        fields,
        state: State::Opcode,
        opcode: String::new(),
        operand: String::new(),
        ops: Vec::new(),
    };
    for ch in text.chars().map(Some).chain([None]) {
        reader.take(ch)?;
    }
    Ok(reader.ops)
}

/// Where [`OpsReader`] is in an EPD's operations.
#[derive(PartialEq)]
enum State {
    Opcode,
    AfterOpcode,
    Numeric,
    Text,
    Escape,
    Moves,
}

/// [`operations`] as they are read, one character at a time.
struct OpsReader<'a> {
    fields: &'a str,
    state: State,
    opcode: String,
    operand: String,
    ops: Vec<(String, Operand)>,
}

impl OpsReader<'_> {
    /// The next character, `None` at the end of the text.
    fn take(&mut self, ch: Option<char>) -> Result<(), String> {
        let space = matches!(ch, Some(' ' | '\t' | '\r' | '\n'));
        let end = matches!(ch, None | Some(';'));
        match self.state {
            State::Opcode => self.in_opcode(ch, space, end)?,
            State::AfterOpcode => match ch {
                _ if space => {}
                Some('"') => self.state = State::Text,
                None | Some(';') => {
                    let value = empty(&self.opcode);
                    self.push(value);
                }
                Some(c) => {
                    self.operand.push(c);
                    self.state = if "+-.0123456789".contains(c) {
                        State::Numeric
                    } else {
                        State::Moves
                    };
                }
            },
            State::Numeric if end => {
                let value = numeric(&self.opcode, &self.operand)?;
                self.push(value);
                self.operand.clear();
            }
            State::Moves if end => {
                let moves = moves(&self.opcode, &self.operand, self.fields)?;
                self.push(moves);
                self.operand.clear();
            }
            State::Numeric | State::Moves => self.operand.extend(ch),
            State::Text => match ch {
                None | Some('"') => {
                    let text = Operand::Text(std::mem::take(&mut self.operand));
                    self.push(text);
                }
                Some('\\') => self.state = State::Escape,
                Some(c) => self.operand.push(c),
            },
            State::Escape => match ch {
                None => {
                    let text = Operand::Text(std::mem::take(&mut self.operand));
                    self.push(text);
                }
                Some(c) => {
                    self.operand.push(match c {
                        'r' => '\r',
                        'n' => '\n',
                        't' => '\t',
                        c => c,
                    });
                    self.state = State::Text;
                }
            },
        }
        Ok(())
    }

    /// A character of an opcode: a space ends it (an operand may follow),
    /// `;` or the end ends the operation (with no operand).
    fn in_opcode(&mut self, ch: Option<char>, space: bool, end: bool) -> Result<(), String> {
        if space {
            if self.opcode == "-" {
                self.opcode.clear();
            } else if !self.opcode.is_empty() {
                if !self.opcode.starts_with(char::is_alphabetic) {
                    return Err(format!(
                        "expected epd opcode to start with a letter, got: {}",
                        py::repr(&self.opcode)
                    ));
                }
                self.state = State::AfterOpcode;
            }
        } else if end {
            if self.opcode == "-" {
                self.opcode.clear();
            } else if !self.opcode.is_empty() {
                let value = empty(&self.opcode);
                self.push(value);
            }
        } else if let Some(c) = ch {
            self.opcode.push(c);
        }
        Ok(())
    }

    /// The operation read: its opcode and `value`; the next opcode follows.
    fn push(&mut self, value: Operand) {
        self.ops.push((std::mem::take(&mut self.opcode), value));
        self.state = State::Opcode;
    }
}

/// An operation with no operand: no moves for those that take moves.
fn empty(op: &str) -> Operand {
    if ["pv", "am", "bm"].contains(&op) {
        Operand::Moves(vec![])
    } else {
        Operand::None
    }
}

/// A numeric operand: an int, or a float when it has `.`, `e` or `E`.
fn numeric(opcode: &str, operand: &str) -> Result<Operand, String> {
    let invalid = || {
        format!(
            "invalid numeric operand for epd operation {}: {}",
            py::repr(opcode),
            py::repr(operand)
        )
    };
    if operand.contains(['.', 'e', 'E']) {
        let f: f64 = py::strip(operand)
            .replace('_', "")
            .parse()
            .map_err(|_| format!("could not convert string to float: {}", py::repr(operand)))?;
        if !f.is_finite() {
            return Err(invalid());
        }
        Ok(Operand::Float(f))
    } else {
        let text = py::strip(operand).replace('_', "");
        text.parse::<i64>().map(Operand::Int).map_err(|_| {
            format!(
                "invalid literal for int() with base 10: {}",
                py::repr(operand)
            )
        })
    }
}

/// Moves in SAN or UCI, each legal on the EPD's position (a `pv`'s one
/// after the other): their UCI.
fn moves(opcode: &str, operand: &str, fields: &str) -> Result<Operand, String> {
    let start = Position::from_fen(&format!("{fields} 0 1"))?;
    let tokens: Vec<&str> = if ["pv", "am", "bm"].contains(&opcode) {
        py::split(operand)
    } else {
        vec![operand]
    };
    let mut game = super::board::Game::new(start.clone());
    let mut out = Vec::new();
    for token in tokens {
        let position = if opcode == "pv" {
            game.position()
        } else {
            &start
        };
        let mv = position
            .legal_moves()
            .into_iter()
            .find(|mv| {
                let san = position.san(*mv);
                san == token
                    || san.trim_end_matches(['+', '#']) == token
                    || position.uci(*mv) == token
            })
            .ok_or_else(|| format!("invalid san: {}", py::repr(token)))?;
        out.push(position.uci(mv));
        if opcode == "pv" {
            game.play(mv);
        }
    }
    Ok(Operand::Moves(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_epd_line_reads_as_python_chess_reads_it() {
        let (p, id) = parse_epd(
            "r1bqk2r/1pppbppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQ1RK1 w kq - hmvc 4; fmvn 6; id \"Ruy Lopez, Closed\";",
        )
        .unwrap();
        assert_eq!(
            p.fen(),
            "r1bqk2r/1pppbppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQ1RK1 w kq - 4 6"
        );
        assert_eq!(id, "Ruy Lopez, Closed");
        let (p, id) = parse_epd("4k3/8/8/8/8/8/8/4K3 b - - bm Kd7; id 12;").unwrap();
        assert_eq!(p.fen(), "4k3/8/8/8/8/8/8/4K3 b - - 0 1");
        assert_eq!(id, 12);
        let (p, id) = parse_epd("4k3/8/8/8/8/8/8/4K3 w - -").unwrap();
        assert_eq!(
            (p.fen().as_str(), id),
            ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", Value::Null)
        );
        // A FEN's counters are no EPD operations.
        let e = parse_epd("4k3/8/8/8/8/8/8/4K3 w - - 3 9").unwrap_err();
        assert_eq!(e, "expected epd opcode to start with a letter, got: '3'");
        let e = parse_epd("4k3/8/8/8/8/8/8/4K3 w - - bm Qd1;").unwrap_err();
        assert_eq!(e, "invalid san: 'Qd1'");
        let e = parse_epd("4k3/8/8/8/8/8/8/4K3 w - - hmvc 1.5;").unwrap_err();
        assert!(e.starts_with("invalid half-move clock in fen"), "{e}");
    }

    #[test]
    fn lines_split_where_python_splits_them() {
        assert_eq!(
            split_lines("a\r\nb\rc\u{2028}d\n\ne"),
            ["a", "b", "c", "d", "", "e"]
        );
        assert_eq!(split_lines("a\n"), ["a"]);
    }

    #[test]
    fn a_book_that_cannot_be_read_is_named_as_python_names_it() {
        let mut books = Books::default();
        let e = books.lines("no-such-book.epd").err().unwrap();
        assert_eq!(
            e,
            "game option openings = \"no-such-book.epd\": cannot read it: \
             [Errno 2] No such file or directory: 'no-such-book.epd'"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.epd");
        std::fs::write(&path, b"abc\xff\n").unwrap();
        let e = books.lines(path.to_str().unwrap()).err().unwrap();
        assert!(
            e.ends_with("'utf-8' codec can't decode byte 0xff in position 3: invalid start byte"),
            "{e}"
        );
    }
}
