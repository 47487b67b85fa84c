//! The rules of chess as the judge applies them, on the `cozy-chess`
//! library's move generation: positions read from FEN as python-chess
//! reads them, written back as it writes them (an en passant square only
//! when the capture is legal, castling rights only where the king and
//! rook stand), the moves in UCI and SAN, and the ends python-chess
//! rules: checkmate, stalemate, insufficient material (its rule: a knight
//! or bishops of one square colour against a bare king, or bishops all of
//! one square colour, cannot mate; a knight or a bishop against a knight
//! can), the fifty-move rule and threefold repetition
//! (its rule: the positions since the last irreversible move, en passant
//! and castling rights included, compared).
//!
//! Pure functions of positions: the judge (`super::judge`) speaks the
//! protocol and keeps the clocks' figures; nothing here reads or writes.

use cozy_chess::{BitBoard, BoardBuilder, CastleRights, Color, File, Move, Piece, Rank, Square};

use super::py;

/// A position: the board `cozy-chess` plays on, and the two move counters
/// as FEN has them (cozy-chess caps its own).
#[derive(Clone, Debug)]
pub struct Position {
    board: cozy_chess::Board,
    halfmove: u64,
    fullmove: u64,
}

/// What makes two positions the same one for repetition, as python-chess
/// compares them: the pieces, the side to move, the castling rights and
/// the en passant square when the capture is legal.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Key {
    pieces: [BitBoard; 6],
    colours: [BitBoard; 2],
    white: bool,
    rights: [CastleRights; 2],
    en_passant: Option<Square>,
}

/// How a game ended by the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Checkmate,
    Stalemate,
    InsufficientMaterial,
    FiftyMoves,
    ThreefoldRepetition,
}

impl End {
    /// The summary's `termination`.
    pub fn name(self) -> &'static str {
        match self {
            End::Checkmate => "checkmate",
            End::Stalemate => "stalemate",
            End::InsufficientMaterial => "insufficient_material",
            End::FiftyMoves => "fifty_moves",
            End::ThreefoldRepetition => "threefold_repetition",
        }
    }
}

const PIECES: [Piece; 6] = [
    Piece::Pawn,
    Piece::Knight,
    Piece::Bishop,
    Piece::Rook,
    Piece::Queen,
    Piece::King,
];

/// The squares a1, c1, ... of one colour (a1's, "dark").
const DARK: u64 = 0xaa55_aa55_aa55_aa55;

impl Position {
    /// The usual start.
    pub fn start() -> Position {
        Position {
            board: cozy_chess::Board::default(),
            halfmove: 0,
            fullmove: 1,
        }
    }

    /// A position from FEN, as python-chess's `Board.set_fen` reads it:
    /// missing fields take their defaults (`w - - 0 1`), a full-move
    /// number 0 is 1, castling rights without their king and rook in
    /// place are dropped, an en passant square no pawn could have made is
    /// ignored. The error is python-chess's, or says that the position is
    /// not one of standard chess (python-chess would play on without a
    /// king, or with a pawn on the last rank; this judge refuses).
    pub fn from_fen(fen: &str) -> Result<Position, String> {
        let parts = py::split(fen);
        let shown = py::repr(fen);
        let Some(&board_part) = parts.first() else {
            return Err("empty fen".to_owned());
        };
        let white = match parts.get(1) {
            None | Some(&"w") => true,
            Some(&"b") => false,
            Some(_) => return Err(format!("expected 'w' or 'b' for turn part of fen: {shown}")),
        };
        let castling = parts.get(2).copied().unwrap_or("-");
        if !valid_castling(castling) {
            return Err(format!("invalid castling part in fen: {shown}"));
        }
        let en_passant = match parts.get(3) {
            None | Some(&"-") => None,
            Some(name) => Some(
                square(name).ok_or_else(|| format!("invalid en passant part in fen: {shown}"))?,
            ),
        };
        let halfmove = counter(parts.get(4).copied(), 0, "half-move clock", &shown)?;
        let fullmove = counter(parts.get(5).copied(), 1, "fullmove number", &shown)?.max(1);
        if parts.len() > 6 {
            return Err(format!("fen string has more parts than expected: {shown}"));
        }
        let squares = board_squares(board_part)?;
        let mut builder = BoardBuilder::empty();
        builder.board = squares;
        builder.side_to_move = if white { Color::White } else { Color::Black };
        builder.castle_rights = castle_rights(&squares, castling);
        builder.halfmove_clock = halfmove.min(100) as u8;
        builder.fullmove_number = fullmove.min(u16::MAX as u64) as u16;
        builder.en_passant = en_passant;
        let board = builder.build().or_else(|_| {
            builder.en_passant = None;
            builder.build()
        });
        let board = board.map_err(|_| {
            "not a position of standard chess: each side needs one king and at most 16 pieces, \
             8 of them pawns, no pawn on the first or last rank, and the side not to move must \
             not be in check"
                .to_owned()
        })?;
        Ok(Position {
            board,
            halfmove,
            fullmove,
        })
    }

    /// The position in FEN, as python-chess's `Board.fen()` writes it.
    pub fn fen(&self) -> String {
        let mut fen = String::with_capacity(90);
        for rank in Rank::ALL.iter().rev() {
            let mut empty = 0;
            for file in File::ALL {
                match self.symbol(Square::new(file, *rank)) {
                    None => empty += 1,
                    Some(symbol) => {
                        if empty > 0 {
                            fen.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        fen.push(symbol);
                    }
                }
            }
            if empty > 0 {
                fen.push(char::from(b'0' + empty));
            }
            if *rank != Rank::First {
                fen.push('/');
            }
        }
        fen.push_str(if self.white_to_move() { " w " } else { " b " });
        let mut rights = String::new();
        for (colour, k, q) in [(Color::White, 'K', 'Q'), (Color::Black, 'k', 'q')] {
            let own = self.board.castle_rights(colour);
            if own.short.is_some() {
                rights.push(k);
            }
            if own.long.is_some() {
                rights.push(q);
            }
        }
        fen.push_str(if rights.is_empty() { "-" } else { &rights });
        match self.legal_en_passant() {
            Some(square) => fen.push_str(&format!(" {square} ")),
            None => fen.push_str(" - "),
        }
        fen.push_str(&format!("{} {}", self.halfmove, self.fullmove));
        fen
    }

    /// The board as python-chess's `str(board)` draws it, one string per
    /// rank from the 8th, `.` for an empty square: `["r.bqk..r", ...]`.
    pub fn grid(&self) -> Vec<String> {
        Rank::ALL
            .iter()
            .rev()
            .map(|rank| {
                File::ALL
                    .iter()
                    .map(|file| self.symbol(Square::new(*file, *rank)).unwrap_or('.'))
                    .collect()
            })
            .collect()
    }

    /// FEN's letter for the piece on `square`, White's in capitals.
    fn symbol(&self, square: Square) -> Option<char> {
        let piece = self.board.piece_on(square)?;
        let letter = char::from(piece);
        Some(match self.board.color_on(square) {
            Some(Color::White) => letter.to_ascii_uppercase(),
            _ => letter,
        })
    }

    pub fn white_to_move(&self) -> bool {
        self.board.side_to_move() == Color::White
    }

    pub fn fullmove_number(&self) -> u64 {
        self.fullmove
    }

    pub fn halfmove_clock(&self) -> u64 {
        self.halfmove
    }

    /// Every legal move.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut moves = Vec::with_capacity(48);
        self.board.generate_moves(|piece_moves| {
            moves.extend(piece_moves);
            false
        });
        moves
    }

    fn has_legal_moves(&self) -> bool {
        self.board.generate_moves(|_| true)
    }

    /// The legal move that UCI writes as `text` (castling as the king's
    /// two squares, `e1g1`); `None` for any other text, the king onto its
    /// own rook (Chess960's castling) among them.
    pub fn legal_uci(&self, text: &str) -> Option<Move> {
        let mv = cozy_chess::util::parse_uci_move(&self.board, text).ok()?;
        (self.board.is_legal(mv) && self.uci(mv) == text).then_some(mv)
    }

    /// A legal move as UCI writes it.
    pub fn uci(&self, mv: Move) -> String {
        cozy_chess::util::display_uci_move(&self.board, mv).to_string()
    }

    /// A legal move in SAN, as python-chess writes it (`Nbd7`, `exd8=Q+`,
    /// `O-O`, `Qh4#`).
    pub fn san(&self, mv: Move) -> String {
        cozy_chess::util::display_san_move(&self.board, mv).to_string()
    }

    /// Plays a legal move.
    pub fn play(&mut self, mv: Move) {
        if self.zeroing(mv) {
            self.halfmove = 0;
        } else {
            self.halfmove += 1;
        }
        if !self.white_to_move() {
            self.fullmove += 1;
        }
        self.board.play_unchecked(mv);
    }

    /// A capture or a pawn move: it restarts the fifty-move count.
    fn zeroing(&self, mv: Move) -> bool {
        let them = self.board.colors(!self.board.side_to_move());
        self.board.piece_on(mv.from) == Some(Piece::Pawn) || them.has(mv.to)
    }

    /// The en passant square when a legal capture onto it exists.
    fn legal_en_passant(&self) -> Option<Square> {
        let file = self.board.en_passant()?;
        let rank = Rank::Sixth.relative_to(self.board.side_to_move());
        let target = Square::new(file, rank);
        let pawns = self
            .board
            .colored_pieces(self.board.side_to_move(), Piece::Pawn);
        let mut found = false;
        self.board.generate_moves_for(pawns, |moves| {
            found |= moves.to.has(target);
            found
        });
        found.then_some(target)
    }

    fn key(&self) -> Key {
        Key {
            pieces: PIECES.map(|p| self.board.pieces(p)),
            colours: [
                self.board.colors(Color::White),
                self.board.colors(Color::Black),
            ],
            white: self.white_to_move(),
            rights: [
                *self.board.castle_rights(Color::White),
                *self.board.castle_rights(Color::Black),
            ],
            en_passant: self.legal_en_passant(),
        }
    }

    /// python-chess's `is_irreversible`: a capture, a pawn move, a move
    /// that loses castling rights (the king's, or a rook's from or onto
    /// its corner), or any move from a position with a legal en passant
    /// capture.
    fn irreversible(&self, mv: Move) -> bool {
        let touched = mv.from.bitboard() | mv.to.bitboard();
        let mut rights = BitBoard::EMPTY;
        let mut king_loses = false;
        for colour in [Color::White, Color::Black] {
            let own = self.board.castle_rights(colour);
            let rank = Rank::First.relative_to(colour);
            for file in [own.short, own.long].into_iter().flatten() {
                rights |= Square::new(file, rank).bitboard();
            }
            let king = self.board.colored_pieces(colour, Piece::King);
            king_loses |=
                (own.short.is_some() || own.long.is_some()) && !(touched & king).is_empty();
        }
        self.zeroing(mv)
            || !(touched & rights).is_empty()
            || king_loses
            || self.legal_en_passant().is_some()
    }

    /// python-chess's `is_insufficient_material`: neither side can mate.
    fn insufficient_material(&self) -> bool {
        [Color::White, Color::Black]
            .iter()
            .all(|c| self.insufficient_for(*c))
    }

    fn insufficient_for(&self, colour: Color) -> bool {
        let b = &self.board;
        let ours = b.colors(colour);
        let heavy = b.pieces(Piece::Pawn) | b.pieces(Piece::Rook) | b.pieces(Piece::Queen);
        if !(ours & heavy).is_empty() {
            return false;
        }
        if !(ours & b.pieces(Piece::Knight)).is_empty() {
            let theirs = b.colors(!colour) & !b.pieces(Piece::King) & !b.pieces(Piece::Queen);
            return ours.len() <= 2 && theirs.is_empty();
        }
        if !(ours & b.pieces(Piece::Bishop)).is_empty() {
            let bishops = b.pieces(Piece::Bishop).0;
            let same_colour = bishops & DARK == 0 || bishops & !DARK == 0;
            return same_colour
                && b.pieces(Piece::Pawn).is_empty()
                && b.pieces(Piece::Knight).is_empty();
        }
        true
    }
}

/// A game from its opening position: the position now and the moves
/// played, which repetition looks back over.
#[derive(Clone, Debug)]
pub struct Game {
    start: Position,
    now: Position,
    played: Vec<Played>,
}

#[derive(Clone, Debug)]
struct Played {
    mv: Move,
    /// The position the move was played in.
    before: Key,
    irreversible: bool,
}

impl Game {
    pub fn new(start: Position) -> Game {
        Game {
            now: start.clone(),
            start,
            played: Vec::new(),
        }
    }

    pub fn start(&self) -> &Position {
        &self.start
    }

    pub fn position(&self) -> &Position {
        &self.now
    }

    /// The moves played, in order.
    pub fn moves(&self) -> impl Iterator<Item = Move> + '_ {
        self.played.iter().map(|p| p.mv)
    }

    pub fn plies(&self) -> usize {
        self.played.len()
    }

    /// Plays a legal move.
    pub fn play(&mut self, mv: Move) {
        self.played.push(Played {
            mv,
            before: self.now.key(),
            irreversible: self.now.irreversible(mv),
        });
        self.now.play(mv);
    }

    /// How the game stands by the rules, in python-chess's order: the
    /// fifty-move rule (only while a move is left to play) and threefold
    /// repetition, which a player could claim and the judge takes at
    /// once, then checkmate, insufficient material and stalemate. With
    /// checkmate, whether White won.
    pub fn end(&self) -> Option<(End, bool)> {
        let now = &self.now;
        let can_move = now.has_legal_moves();
        if now.halfmove >= 100 && can_move {
            return Some((End::FiftyMoves, false));
        }
        if self.repeated(3) {
            return Some((End::ThreefoldRepetition, false));
        }
        if !can_move && !now.board.checkers().is_empty() {
            return Some((End::Checkmate, !now.white_to_move()));
        }
        if now.insufficient_material() {
            return Some((End::InsufficientMaterial, false));
        }
        if !can_move {
            return Some((End::Stalemate, false));
        }
        None
    }

    /// python-chess's `is_repetition(count)`: the position now stood
    /// `count` times, counting back over reversible moves only.
    fn repeated(&self, mut count: usize) -> bool {
        let key = self.now.key();
        let mut left = self.played.len();
        loop {
            if count <= 1 {
                return true;
            }
            if left < count - 1 {
                return false;
            }
            left -= 1;
            let played = &self.played[left];
            if played.irreversible {
                return false;
            }
            if played.before == key {
                count -= 1;
            }
        }
    }
}

/// python-chess's castling field: `-`, or up to two White letters then up
/// to two Black ones (`K`, `Q`, or a rook's file).
fn valid_castling(text: &str) -> bool {
    if text == "-" {
        return true;
    }
    let white = text
        .chars()
        .take_while(|c| "KQABCDEFGH".contains(*c))
        .count()
        .min(2);
    let rest = &text[white..];
    rest.len() <= 2 && rest.chars().all(|c| "kqabcdefgh".contains(c))
}

/// A square's name (`e3`).
fn square(name: &str) -> Option<Square> {
    match name.as_bytes() {
        [file @ b'a'..=b'h', rank @ b'1'..=b'8'] => Some(Square::new(
            File::index(usize::from(file - b'a')),
            Rank::index(usize::from(rank - b'1')),
        )),
        _ => None,
    }
}

/// A FEN's half-move clock or full-move number (`name`): `default` when
/// the FEN has no such part, else a number at least 0.
fn counter(part: Option<&str>, default: u64, name: &str, shown: &str) -> Result<u64, String> {
    match part {
        None => Ok(default),
        Some(text) => match int(text) {
            None => Err(format!("invalid {name} in fen: {shown}")),
            Some(n) if n < 0 => Err(format!("{name} cannot be negative: {shown}")),
            Some(n) => Ok(n as u64),
        },
    }
}

/// Each side's castling rights from a FEN's `castling` part: a right
/// without its king and rook in place is dropped.
fn castle_rights(squares: &[Option<(Piece, Color)>; 64], castling: &str) -> [CastleRights; 2] {
    [Color::White, Color::Black].map(|colour| {
        let rank = Rank::First.relative_to(colour);
        let has = |piece: Piece, file: File| {
            squares[Square::new(file, rank) as usize] == Some((piece, colour))
        };
        let flags: Vec<char> = castling
            .chars()
            .filter(|c| c.is_ascii_uppercase() == (colour == Color::White))
            .map(|c| c.to_ascii_lowercase())
            .collect();
        let king = has(Piece::King, File::E);
        let right = |flag: char, file: File, letter: char| {
            (king && has(Piece::Rook, file) && (flags.contains(&flag) || flags.contains(&letter)))
                .then_some(file)
        };
        CastleRights {
            short: right('k', File::H, 'h'),
            long: right('q', File::A, 'a'),
        }
    })
}

/// Python's `int(text)` of a decimal integer (a sign, digits, single
/// underscores between them), when it fits in 63 bits.
fn int(text: &str) -> Option<i64> {
    let text = py::strip(text);
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let value: i64 = digits.replace('_', "").parse().ok()?;
    Some(if negative { -value } else { value })
}

/// The pieces of FEN's board field, by square, checked as python-chess
/// checks it (its messages).
fn board_squares(fen: &str) -> Result<[Option<(Piece, Color)>; 64], String> {
    let fen = py::strip(fen);
    let shown = py::repr(fen);
    let rows: Vec<&str> = fen.split('/').collect();
    if rows.len() != 8 {
        return Err(format!("expected 8 rows in position part of fen: {shown}"));
    }
    let mut squares = [None; 64];
    for (r, row) in rows.iter().enumerate() {
        let rank = 7 - r;
        let (mut file, mut after_digit, mut after_piece) = (0usize, false, false);
        for c in row.chars() {
            if let Some(n) = c
                .to_digit(10)
                .filter(|n| (1..=8).contains(n) && c.is_ascii())
            {
                if after_digit {
                    return Err(format!(
                        "two subsequent digits in position part of fen: {shown}"
                    ));
                }
                file += n as usize;
                (after_digit, after_piece) = (true, false);
            } else if c == '~' {
                if !after_piece {
                    return Err(format!(
                        "'~' not after piece in position part of fen: {shown}"
                    ));
                }
                (after_digit, after_piece) = (false, false);
            } else if let Some(piece) = piece_of(c) {
                if file < 8 {
                    squares[rank * 8 + file] = Some(piece);
                }
                file += 1;
                (after_digit, after_piece) = (false, true);
            } else {
                return Err(format!(
                    "invalid character in position part of fen: {shown}"
                ));
            }
        }
        if file != 8 {
            return Err(format!(
                "expected 8 columns per row in position part of fen: {shown}"
            ));
        }
    }
    Ok(squares)
}

fn piece_of(c: char) -> Option<(Piece, Color)> {
    let piece = match c.to_ascii_lowercase() {
        'p' => Piece::Pawn,
        'n' => Piece::Knight,
        'b' => Piece::Bishop,
        'r' => Piece::Rook,
        'q' => Piece::Queen,
        'k' => Piece::King,
        _ => return None,
    };
    let colour = if c.is_ascii_uppercase() {
        Color::White
    } else {
        Color::Black
    };
    c.is_ascii().then_some((piece, colour))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(fen: &str, moves: &[&str]) -> Game {
        let mut game = Game::new(Position::from_fen(fen).unwrap());
        for text in moves {
            let mv = game.position().legal_uci(text).expect(text);
            game.play(mv);
        }
        game
    }

    #[test]
    fn fen_reads_and_writes_as_python_chess() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(Position::from_fen(start).unwrap().fen(), start);
        // Defaults; castling rights without their rook dropped; an en
        // passant square without a capture not written.
        let p = Position::from_fen("4k3/8/8/8/8/8/8/4K2R w KQkq").unwrap();
        assert_eq!(p.fen(), "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        let g = game(start, &["e2e4"]);
        assert_eq!(
            g.position().fen(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        );
        let g = game(start, &["e2e4", "g8f6", "e4e5", "d7d5"]);
        assert_eq!(
            g.position().fen(),
            "rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3"
        );
        assert_eq!(
            g.position().san(g.position().legal_uci("e5d6").unwrap()),
            "exd6"
        );
        for (fen, error) in [
            ("", "empty fen"),
            ("8/8 w", "expected 8 rows in position part of fen: '8/8'"),
            (start.replace(" w ", " x ").as_str(), "expected 'w' or 'b'"),
            (
                "rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR",
                "expected 8 columns",
            ),
            (
                "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR",
                "invalid character",
            ),
            ("4k3/8/8/8/8/8/8/8", "not a position of standard chess"),
        ] {
            let e = Position::from_fen(fen).unwrap_err();
            assert!(e.starts_with(error), "{fen}: {e}");
        }
    }

    #[test]
    fn castling_is_written_as_uci_and_san_write_it() {
        let g = game("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", &["e1g1"]);
        assert_eq!(g.position().fen(), "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1");
        let p = g.position();
        assert!(p.legal_uci("e8h8").is_none());
        assert_eq!(p.san(p.legal_uci("e8c8").unwrap()), "O-O-O");
    }

    #[test]
    fn the_rules_end_games_as_python_chess() {
        // Fool's mate.
        let g = game(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            &["f2f3", "e7e5", "g2g4", "d8h4"],
        );
        assert_eq!(g.end(), Some((End::Checkmate, false)));
        // Knights shuffling: the third time the start position stands.
        let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(game(start, &shuffle).end(), None);
        let twice: Vec<&str> = shuffle.iter().chain(&shuffle).copied().collect();
        assert_eq!(
            game(start, &twice).end(),
            Some((End::ThreefoldRepetition, false))
        );
        // King and knight against a bare king: insufficient; against a
        // knight: not (a mate remains possible), by python-chess's rule.
        let g = game("8/8/4k3/8/8/8/8/K6N w - - 0 1", &[]);
        assert_eq!(g.end(), Some((End::InsufficientMaterial, false)));
        assert_eq!(game("8/8/4k3/8/8/3n4/8/K6N w - - 0 1", &[]).end(), None);
        let g = game("8/8/4k3/8/3b4/8/8/K5B1 w - - 0 1", &[]);
        assert_eq!(g.end(), Some((End::InsufficientMaterial, false)));
        let g = game("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", &[]);
        assert_eq!(g.end(), Some((End::Stalemate, false)));
        let g = game("7k/8/6K1/8/8/8/8/6R1 w - - 99 80", &["g1g2"]);
        assert_eq!(g.end(), Some((End::FiftyMoves, false)));
        assert_eq!(g.position().fen(), "7k/8/6K1/8/8/8/6R1/8 b - - 100 80");
    }
}
