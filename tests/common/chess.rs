//! Chess for the tests, apart from the judge: a PGN file read back (its
//! games, their tags with the escapes undone, their moves replayed from
//! the FEN tag with `cozy-chess`, and how the last position stands), and
//! the `chess-random` engine built with the package.
#![allow(dead_code)]

use cozy_chess::{Board, Color, GameStatus, Piece};

/// The fake engine's program (bots/chess-random).
pub fn fake_engine() -> &'static str {
    env!("CARGO_BIN_EXE_chess-random")
}

/// `NAME=` the fake engine with `args`, for `referee play`.
pub fn fake(name: &str, args: &str) -> String {
    format!("{name}={} {args}", fake_engine())
}

/// One game of a PGN file.
#[derive(Debug)]
pub struct PgnGame {
    /// Its tags, in order, their values' escapes undone.
    pub tags: Vec<(String, String)>,
    /// Its moves in SAN, as written.
    pub sans: Vec<String>,
    /// A move that does not read or is not legal, with the position.
    pub error: Option<String>,
    /// The plies replayed, and how the last position stands: `checkmate`,
    /// `stalemate`, `insufficient_material`, `fifty_moves`,
    /// `threefold_repetition` or `on`.
    pub plies: usize,
    pub state: String,
}

impl PgnGame {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The games of a PGN text: a game starts at a tag line after movetext or
/// at the start; a tag is `[Name "value"]` on a line of its own, `\\`
/// and `\"` escaped in the value.
pub fn read_pgn(text: &str) -> Vec<PgnGame> {
    let mut games: Vec<(Vec<(String, String)>, String)> = Vec::new();
    let mut in_tags = false;
    for line in text.lines() {
        let line = line.trim_end();
        if line.starts_with('[') && line.ends_with(']') {
            if !in_tags {
                games.push((Vec::new(), String::new()));
                in_tags = true;
            }
            let inner = &line[1..line.len() - 1];
            let (name, rest) = inner.split_once(' ').unwrap_or((inner, ""));
            let value = rest
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(rest);
            let mut unescaped = String::new();
            let mut chars = value.chars();
            while let Some(c) = chars.next() {
                unescaped.push(if c == '\\' {
                    chars.next().unwrap_or('\\')
                } else {
                    c
                });
            }
            let game = games.last_mut().expect("a game");
            game.0.push((name.to_owned(), unescaped));
        } else if !line.is_empty() {
            in_tags = false;
            if let Some(game) = games.last_mut() {
                game.1.push_str(line);
                game.1.push(' ');
            }
        }
    }
    games
        .into_iter()
        .map(|(tags, movetext)| replay(tags, &movetext))
        .collect()
}

/// The SAN moves of a movetext: comments, move numbers and the result
/// left out.
pub fn movetext_sans(movetext: &str) -> Vec<String> {
    let mut sans = Vec::new();
    let mut rest = movetext;
    while let Some(c) = rest.chars().next() {
        if c == '{' {
            let end = rest.find('}').map_or(rest.len(), |e| e + 1);
            rest = &rest[end..];
            continue;
        }
        if c.is_whitespace() {
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let end = rest.find([' ', '{']).unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        if ["1-0", "0-1", "1/2-1/2", "*"].contains(&word) {
            continue;
        }
        // "12." and "12..." number moves.
        let digits = word.trim_start_matches(|c: char| c.is_ascii_digit());
        let word = if digits.len() < word.len() && digits.starts_with('.') {
            digits.trim_start_matches('.')
        } else {
            word
        };
        if !word.is_empty() {
            sans.push(word.to_owned());
        }
    }
    sans
}

fn replay(tags: Vec<(String, String)>, movetext: &str) -> PgnGame {
    let sans = movetext_sans(movetext);
    let fen = tags
        .iter()
        .find(|(n, _)| n == "FEN")
        .map(|(_, v)| v.clone());
    let mut board = match fen {
        Some(fen) => Board::from_fen(&fen, false).expect("the FEN tag reads"),
        None => Board::default(),
    };
    let mut seen = vec![board.clone()];
    let mut error = None;
    let mut plies = 0;
    for san in &sans {
        let plain = san.trim_end_matches(['+', '#']);
        match cozy_chess::util::parse_san_move(&board, plain) {
            Ok(mv) => {
                let written = cozy_chess::util::display_san_move(&board, mv).to_string();
                if written != *san {
                    error = Some(format!("{san} is written {written} in {board}"));
                    break;
                }
                board.play(mv);
                seen.push(board.clone());
                plies += 1;
            }
            Err(_) => {
                error = Some(format!("{san} is not a legal move in {board}"));
                break;
            }
        }
    }
    let repeated = seen.iter().filter(|b| b.same_position(&board)).count() >= 3;
    let state = match board.status() {
        GameStatus::Won => "checkmate",
        GameStatus::Drawn if !board.generate_moves(|_| true) => "stalemate",
        _ if insufficient(&board) => "insufficient_material",
        GameStatus::Drawn => "fifty_moves",
        _ if repeated => "threefold_repetition",
        _ => "on",
    };
    PgnGame {
        tags,
        sans,
        error,
        plies,
        state: state.to_owned(),
    }
}

/// Neither side can mate: kings alone, or one minor piece beside them
/// (python-chess also counts a lone knight against a queen, and bishops
/// all on one colour: enough for these tests' games).
fn insufficient(board: &Board) -> bool {
    let heavy = board.pieces(Piece::Pawn) | board.pieces(Piece::Rook) | board.pieces(Piece::Queen);
    if !heavy.is_empty() {
        return false;
    }
    let minors = |c: Color| {
        (board.colors(c) & (board.pieces(Piece::Knight) | board.pieces(Piece::Bishop))).len()
    };
    minors(Color::White) + minors(Color::Black) <= 1
}
