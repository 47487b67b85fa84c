//! The Chomp wire format, shared by the referee and the reference bots.
//!
//! Referee to bot: `P K\n`, `M N\n`, the N rows; then, at the start of each
//! round, K lines `col row move`, one per player in player order, where
//! `move` is the player's last move (`N S E W C D`) or `-` before the first.
//! Bot to referee: one byte per round. Whitespace bytes are skipped; `N S E
//! W C D` are moves and any other byte counts as `C`.

use std::io::{self, BufRead};

use super::grid::{Cell, Dir, Grid};

/// A move as applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    Step(Dir),
    Chomp,
    Decompose,
}

impl Move {
    /// The move a byte from a bot stands for; `None` for the whitespace
    /// bytes the referee skips.
    pub fn from_byte(byte: u8) -> Option<Move> {
        Some(match byte {
            b' ' | b'\t' | b'\r' | b'\n' => return None,
            b'N' => Move::Step(Dir::North),
            b'S' => Move::Step(Dir::South),
            b'E' => Move::Step(Dir::East),
            b'W' => Move::Step(Dir::West),
            b'D' => Move::Decompose,
            _ => Move::Chomp,
        })
    }

    /// The letter used in updates and records.
    pub fn letter(self) -> u8 {
        match self {
            Move::Step(Dir::North) => b'N',
            Move::Step(Dir::South) => b'S',
            Move::Step(Dir::East) => b'E',
            Move::Step(Dir::West) => b'W',
            Move::Chomp => b'C',
            Move::Decompose => b'D',
        }
    }
}

/// The move field of an update line: `-` before the first move.
pub const NO_MOVE_YET: u8 = b'-';

/// The first message to player `me` (1-based) of `k`.
pub fn header(me: usize, k: usize, grid_rows: &[Vec<u8>]) -> Vec<u8> {
    let cols = grid_rows.first().map_or(0, Vec::len);
    let mut out = format!("{me} {k}\n{cols} {}\n", grid_rows.len()).into_bytes();
    for row in grid_rows {
        out.extend_from_slice(row);
        out.push(b'\n');
    }
    out
}

/// Appends one update line.
pub fn push_update_line(out: &mut Vec<u8>, cell: Cell, last_move: u8) {
    use std::io::Write;
    writeln!(out, "{} {} {}", cell.col, cell.row, last_move as char).expect("writing to a Vec");
}

/// What a bot learns at the start.
#[derive(Clone, Debug)]
pub struct Header {
    /// This bot's player number, 1-based.
    pub me: usize,
    pub players: usize,
    pub grid: Grid,
}

/// One player's line of an update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    pub cell: Cell,
    /// `b'-'` before the first move, else the letter of the last move.
    pub last_move: u8,
}

fn bad(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

fn two_numbers(line: &str, what: &str) -> io::Result<(u32, u32)> {
    let mut it = line.split_ascii_whitespace().map(str::parse::<u32>);
    match (it.next(), it.next(), it.next()) {
        (Some(Ok(a)), Some(Ok(b)), None) => Ok((a, b)),
        _ => Err(bad(format!("expected {what}, got {line:?}"))),
    }
}

fn read_line(input: &mut impl BufRead, line: &mut String) -> io::Result<bool> {
    line.clear();
    Ok(input.read_line(line)? > 0)
}

/// Reads `P K`, `M N` and the rows.
pub fn read_header(input: &mut impl BufRead) -> io::Result<Header> {
    let mut line = String::new();
    let eof = || bad("input ended inside the header".into());
    read_line(input, &mut line)?.then_some(()).ok_or_else(eof)?;
    let (me, players) = two_numbers(&line, "`P K`")?;
    read_line(input, &mut line)?.then_some(()).ok_or_else(eof)?;
    let (cols, rows) = two_numbers(&line, "`M N`")?;
    let mut grid_rows = Vec::with_capacity(rows as usize);
    for _ in 0..rows {
        read_line(input, &mut line)?.then_some(()).ok_or_else(eof)?;
        let row = line.trim_end().as_bytes().to_vec();
        if row.len() != cols as usize || !row.iter().all(u8::is_ascii_uppercase) {
            return Err(bad(format!("bad array row {line:?}")));
        }
        grid_rows.push(row);
    }
    if me == 0 || me > players || cols == 0 || rows == 0 {
        return Err(bad(format!(
            "bad header: P={me} K={players} M={cols} N={rows}"
        )));
    }
    Ok(Header {
        me: me as usize,
        players: players as usize,
        grid: Grid::from_rows(&grid_rows),
    })
}

/// Reads one update of `players` lines into `seen`; `Ok(false)` at the end
/// of input (the game is over).
pub fn read_update(
    input: &mut impl BufRead,
    players: usize,
    seen: &mut Vec<Seen>,
) -> io::Result<bool> {
    let mut line = String::new();
    seen.clear();
    for i in 0..players {
        if !read_line(input, &mut line)? {
            return if i == 0 {
                Ok(false)
            } else {
                Err(bad("input ended inside an update".into()))
            };
        }
        let mut fields = line.split_ascii_whitespace();
        let parsed = (|| {
            let col = fields.next()?.parse().ok()?;
            let row = fields.next()?.parse().ok()?;
            let mv = fields.next()?;
            (mv.len() == 1 && fields.next().is_none()).then_some(Seen {
                cell: Cell { col, row },
                last_move: mv.as_bytes()[0],
            })
        })();
        seen.push(parsed.ok_or_else(|| bad(format!("bad update line {line:?}")))?);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_to_moves() {
        assert_eq!(Move::from_byte(b'N'), Some(Move::Step(Dir::North)));
        assert_eq!(Move::from_byte(b'D'), Some(Move::Decompose));
        assert_eq!(Move::from_byte(b'C'), Some(Move::Chomp));
        assert_eq!(Move::from_byte(b'x'), Some(Move::Chomp));
        assert_eq!(Move::from_byte(b'n'), Some(Move::Chomp));
        assert_eq!(Move::from_byte(0xff), Some(Move::Chomp));
        for ws in [b' ', b'\t', b'\r', b'\n'] {
            assert_eq!(Move::from_byte(ws), None);
        }
    }

    #[test]
    fn header_and_update_round_trip() {
        let rows = vec![b"ABC".to_vec(), b"DEF".to_vec()];
        let bytes = header(2, 4, &rows);
        assert_eq!(bytes, b"2 4\n3 2\nABC\nDEF\n");
        let mut update = Vec::new();
        push_update_line(&mut update, Cell { col: 8, row: 3 }, b'C');
        push_update_line(&mut update, Cell { col: 1, row: 3 }, NO_MOVE_YET);
        assert_eq!(update, b"8 3 C\n1 3 -\n");

        let mut input = bytes.clone();
        input.extend_from_slice(&update);
        let mut reader = &input[..];
        let h = read_header(&mut reader).unwrap();
        assert_eq!(
            (h.me, h.players, h.grid.cols(), h.grid.rows()),
            (2, 4, 3, 2)
        );
        let mut seen = vec![];
        // Only two of four lines: a truncated update is an error.
        assert!(read_update(&mut reader, 4, &mut seen).is_err());
        let mut reader = &update[..];
        assert!(read_update(&mut reader, 2, &mut seen).unwrap());
        assert_eq!(seen[0].cell, Cell { col: 8, row: 3 });
        assert_eq!(seen[1].last_move, b'-');
        assert!(!read_update(&mut reader, 2, &mut seen).unwrap());
    }
}
