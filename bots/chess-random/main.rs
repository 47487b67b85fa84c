//! `chess-random`: a UCI engine that needs no thinking, for trying the
//! chess game out and for its tests: it plays a legal move at once, and
//! misbehaves on request.
//!
//! `chess-random MODE [FILE]`:
//!
//! - any mode not below plays the first legal move in python-chess's
//!   order (the order `games/chess`'s earlier fake engine played in);
//! - `illegal`, `a1a1`, `garbage`, `sleep`: the same for two moves, then
//!   on its third a move of the other side's, `a1a1` (squares, but no
//!   move), `bestmove hello`, or thinking for a minute;
//! - `random SEED`: a random legal move, after a score line (mostly near
//!   0, now and then far from it, or a mate) for the judge to
//!   adjudicate on;
//! - `fuzz SEED`: random info lines and, now and then, a random bestmove
//!   (mostly not a legal one) instead of a random legal move.
//!
//! The random modes draw from SEED and the position, so that the same
//! position gets the same answer whichever judge asks.
//!
//! It declares a few options of each kind (as Stockfish words them) and
//! echoes the options and the `go` lines it is given on standard error.
//! With FILE, it sends FILE's lines before each bestmove instead of
//! `info depth 1 score cp 0`: an engine's hostile info lines.

use std::io::{BufRead, Write};

use cozy_chess::{Board, Color, Move, Piece};

/// What it answers to `uci`: its id and a few options of each kind.
const DECLARED: &str = "id name fake 1.0
id author the tests
option name Hash type spin default 16 min 1 max 1024
option name Skill Level type spin default 20 min 0 max 20
option name Ponder type check default false
option name Style type combo default Normal var Solid var Normal var Risky
option name Clear Hash type button
option name Debug Log File type string default
uciok";

/// What random info lines are made of: UCI's words, numbers a judge can
/// read and ones it cannot (a superscript, other scripts' digits, a
/// float), whitespace Python splits on and UCI does not, and characters
/// that mean something in PGN or on a terminal.
const WORDS: [&str; 46] = [
    "info",
    "depth",
    "seldepth",
    "1",
    "score",
    "cp",
    "mate",
    "lowerbound",
    "upperbound",
    "string",
    "pv",
    "e2e4",
    "nodes",
    "multipv",
    "0",
    "-0",
    "-1",
    "-2000",
    "2000",
    "+5",
    "99999",
    "-100001",
    "1e5",
    "nan",
    "-",
    "--5",
    "\u{b2}",
    "\u{663}",
    "\u{ff15}",
    "\u{bd}",
    "\u{a0}",
    "\u{2028}",
    "\u{b}",
    "\u{c}",
    "\u{1c}",
    "\u{85}",
    "\u{0}",
    "\u{1b}[31m",
    "}",
    "{",
    "\"]",
    "\\",
    "[Event \"x\"]",
    "1-0",
    "\u{202e}",
    "\u{1f600}",
];

/// splitmix64, seeded from text.
struct Rng(u64);

impl Rng {
    fn from_text(text: &str) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number from `low` to `high`, both included.
    fn int(&mut self, low: i64, high: i64) -> i64 {
        low + (self.next() % (high - low + 1) as u64) as i64
    }

    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.int(0, items.len() as i64 - 1) as usize]
    }

    fn chars(&mut self, low: i64, high: i64) -> String {
        let n = self.int(low, high);
        (0..n)
            .map(|_| char::from_u32(self.int(1, 0x2fff) as u32).unwrap_or('?'))
            .collect()
    }
}

fn fuzz_word(rng: &mut Rng) -> String {
    let r = rng.int(0, 99);
    if r < 5 {
        let sign = if rng.chance(0.5) { "-" } else { "+" };
        return format!("{sign}{}", "9".repeat(rng.int(1, 6000) as usize));
    }
    if r < 10 {
        return rng.chars(1, 5);
    }
    if r < 30 {
        return rng.int(-300_000, 300_000).to_string();
    }
    rng.pick(&WORDS).to_string()
}

fn fuzz_lines(rng: &mut Rng) -> Vec<String> {
    let mut lines = Vec::new();
    for _ in 0..rng.int(0, 4) {
        let mut words: Vec<String> = Vec::new();
        if rng.chance(0.5) {
            // A score line, its score readable or not.
            let value = match rng.int(0, 2) {
                0 => rng.int(-3000, 3000).to_string(),
                1 => rng.int(-12, 12).to_string(),
                _ => fuzz_word(rng),
            };
            let depth = rng.int(1, 30).to_string();
            let kind = rng.pick(&["cp", "cp", "mate", "Cp", "\u{b2}"]).to_string();
            words.extend([
                "info".into(),
                "depth".into(),
                depth,
                "score".into(),
                kind,
                value,
            ]);
            for _ in 0..rng.int(0, 3) {
                words.push(fuzz_word(rng));
            }
        } else {
            if rng.chance(0.9) {
                words.push("info".into());
            }
            for _ in 0..rng.int(0, 12) {
                words.push(fuzz_word(rng));
            }
        }
        let gap = *rng.pick(&[" ", "  ", "\t"]);
        let line = one_line(&words.join(gap));
        // A line whose first word is `bestmove` would end the move early.
        if line.split([' ', '\t']).next() != Some("bestmove") {
            lines.push(line);
        }
    }
    lines
}

fn fuzz_move(rng: &mut Rng, board: &Board) -> String {
    let legal = python_order(board);
    if !legal.is_empty() && rng.chance(0.96) {
        let mv = *rng.pick(&legal);
        return cozy_chess::util::display_uci_move(board, mv).to_string();
    }
    let square = |rng: &mut Rng| {
        let n = rng.int(0, 63) as u8;
        format!("{}{}", char::from(b'a' + n % 8), char::from(b'1' + n / 8))
    };
    let text = match rng.int(0, 14) {
        0 => String::new(),
        1 => "0000".into(),
        2 => "(none)".into(),
        3 => "e2e4\u{b2}".into(),
        4 => "\u{b2}".into(),
        5 => "}".into(),
        6 => "{ 1-0 }".into(),
        7 => "e1h1".into(),
        8 => "e8a8".into(),
        9 => "a7a8k".into(),
        10 => "P@e4".into(),
        11 => "E2E4".into(),
        12 => {
            let promotion = *rng.pick(&["", "q", "n"]);
            format!("{}{}{promotion}", square(rng), square(rng))
        }
        13 => rng.chars(1, 30),
        _ => "x".repeat(rng.int(1, 20000) as usize),
    };
    one_line(&text)
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// The legal moves in the order python-chess generates them: in check,
/// the king's moves first; then the other pieces' (from the highest
/// square down, each to the highest square first), castling (short
/// first), pawn captures, single and double pushes, en passant.
fn python_order(board: &Board) -> Vec<Move> {
    let mut moves = Vec::new();
    board.generate_moves(|m| {
        moves.extend(m);
        false
    });
    let us = board.side_to_move();
    let in_check = !board.checkers().is_empty();
    moves.sort_by_key(|mv| {
        let piece = board.piece_on(mv.from).expect("a piece moves");
        let castle = piece == Piece::King && board.colors(us).has(mv.to);
        let class = if in_check && piece == Piece::King {
            0
        } else if piece != Piece::Pawn && !castle {
            1
        } else if castle {
            2
        } else if mv.from.file() != mv.to.file() {
            if board.occupied().has(mv.to) { 3 } else { 6 }
        } else if (mv.from as i32 - mv.to as i32).abs() == 16 {
            5
        } else {
            4
        };
        let promotion = match mv.promotion {
            Some(Piece::Rook) => 1,
            Some(Piece::Bishop) => 2,
            Some(Piece::Knight) => 3,
            _ => 0,
        };
        (class, -(mv.from as i32), -(mv.to as i32), promotion)
    });
    moves
}

/// A move of the side not to move (`illegal`), or `a1a1` when that side
/// cannot be put to move.
fn other_sides_move(board: &Board) -> String {
    let fen = board.to_string();
    let mut fields: Vec<&str> = fen.split(' ').collect();
    fields[1] = if board.side_to_move() == Color::White {
        "b"
    } else {
        "w"
    };
    fields[3] = "-";
    match Board::from_fen(&fields.join(" "), false) {
        Ok(other) => python_order(&other).first().map_or("a1a1".into(), |mv| {
            cozy_chess::util::display_uci_move(&other, *mv).to_string()
        }),
        Err(_) => "a1a1".into(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("plays", String::as_str).to_owned();
    let seed = args.last().cloned().unwrap_or_default();
    let mut info = vec!["info depth 1 score cp 0".to_owned()];
    if mode != "fuzz"
        && let Some(file) = args.get(1)
    {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        info = text.lines().map(str::to_owned).collect();
    }
    let mut board = Board::default();
    let mut rng = Rng::from_text("");
    let mut moves = 0;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let words: Vec<&str> = line.split_whitespace().collect();
        let said = match words.as_slice() {
            ["uci"] => DECLARED.to_owned(),
            ["isready"] => "readyok".to_owned(),
            ["setoption", ..] => {
                eprintln!("{}", line.trim());
                continue;
            }
            ["position", "fen", ..] => {
                // A fresh process (after a bad move) starts over: the
                // position varies the fuzz from game to game, the seed
                // from run to run.
                rng = Rng::from_text(&format!("{seed} {line}"));
                let fen = words[2..words.len().min(8)].join(" ");
                board = Board::from_fen(&fen, false).unwrap_or_default();
                for text in words.iter().skip(9) {
                    if let Ok(mv) = cozy_chess::util::parse_uci_move(&board, text) {
                        let _ = board.try_play(mv);
                    }
                }
                continue;
            }
            ["go", ..] => {
                eprintln!("{}", line.trim());
                moves += 1;
                if mode == "random" {
                    let legal = python_order(&board);
                    let bestmove = if legal.is_empty() {
                        "0000".to_owned()
                    } else {
                        let mv = *rng.pick(&legal);
                        cozy_chess::util::display_uci_move(&board, mv).to_string()
                    };
                    let score = match rng.int(0, 9) {
                        0..=5 => format!("cp {}", rng.int(-15, 15)),
                        6..=8 => format!("cp {}", rng.int(-3000, 3000)),
                        _ => format!("mate {}", rng.int(-10, 10)),
                    };
                    format!("info depth 1 score {score} nodes 1\nbestmove {bestmove}")
                } else if mode == "fuzz" {
                    let mut lines = fuzz_lines(&mut rng);
                    lines.push(format!("bestmove {}", fuzz_move(&mut rng, &board)));
                    lines.join("\n")
                } else {
                    let first = || {
                        python_order(&board).first().map_or("0000".into(), |mv| {
                            cozy_chess::util::display_uci_move(&board, *mv).to_string()
                        })
                    };
                    let bestmove = match (moves, mode.as_str()) {
                        (3, "sleep") => {
                            std::thread::sleep(std::time::Duration::from_secs(60));
                            first()
                        }
                        (3, "a1a1") => "a1a1".to_owned(),
                        (3, "garbage") => "hello".to_owned(),
                        (3, "illegal") => other_sides_move(&board),
                        _ => first(),
                    };
                    // a1a1 and hello come alone, as the earlier fake sent them.
                    let mut lines = match (moves, mode.as_str()) {
                        (3, "a1a1" | "garbage") => vec![],
                        _ => info.clone(),
                    };
                    lines.push(format!("bestmove {bestmove}"));
                    lines.join("\n")
                }
            }
            _ => continue,
        };
        if writeln!(out, "{said}").and_then(|()| out.flush()).is_err() {
            break;
        }
    }
}
