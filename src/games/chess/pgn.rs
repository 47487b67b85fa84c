//! A game's PGN, written as python-chess's `str(chess.pgn.Game)` writes
//! it (the judge's PGN before it was compiled): the Seven Tag Roster in
//! its order, then the other tags in the order given, a blank line, and
//! the movetext on one line, each move's comment after it and a move
//! number again after each comment.

use super::board::{Game, Position};

/// The Seven Tag Roster, written first in this order.
const ROSTER: [&str; 7] = ["Event", "Site", "Date", "Round", "White", "Black", "Result"];

/// A tag's value as the PGN standard writes it: `\` and `"` escaped, a
/// line end or other control character (Unicode's Cc, Zl, Zp) a space,
/// so that no name can end its tag or start another game.
pub fn tag_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The PGN of `game`: `tags` (name, value; escaped here) with the FEN and
/// SetUp tags of its opening position unless it is the usual start, each
/// move's comment (`comments[i]` after move `i`, none when empty), the
/// game's own comment before the first move, and the result.
pub fn write(
    game: &Game,
    tags: &[(&str, String)],
    comments: &[String],
    game_comment: &str,
    result: &str,
) -> String {
    let start = game.start();
    let fen = start.fen();
    let mut all: Vec<(&str, String)> = Vec::new();
    if fen != Position::start().fen() {
        all.push(("FEN", fen));
        all.push(("SetUp", "1".to_owned()));
    }
    all.extend(tags.iter().cloned());
    let mut lines: Vec<String> = Vec::new();
    for name in ROSTER {
        if let Some((_, value)) = all.iter().find(|(n, _)| *n == name) {
            lines.push(format!("[{name} \"{}\"]", tag_value(value)));
        }
    }
    for (name, value) in all.iter().filter(|(n, _)| !ROSTER.contains(n)) {
        lines.push(format!("[{name} \"{}\"]", tag_value(value)));
    }
    let mut text = lines.join("\n");
    text.push_str("\n\n");
    let mut moves = String::new();
    let mut number_again = true;
    if !game_comment.is_empty() {
        comment(&mut moves, game_comment);
        number_again = true;
    }
    let mut board = Game::new(start.clone());
    for (i, mv) in game.moves().enumerate() {
        let position = board.position();
        if position.white_to_move() {
            moves.push_str(&format!("{}. ", position.fullmove_number()));
        } else if number_again {
            moves.push_str(&format!("{}... ", position.fullmove_number()));
        }
        moves.push_str(&position.san(mv));
        moves.push(' ');
        number_again = false;
        if let Some(text) = comments.get(i).filter(|c| !c.is_empty()) {
            comment(&mut moves, text);
            number_again = true;
        }
        board.play(mv);
    }
    moves.push_str(result);
    text.push_str(moves.trim_end());
    text
}

/// `{ text } `, the text without `}` (which would end the comment).
fn comment(out: &mut String, text: &str) {
    let text = text.replace('}', "");
    out.push_str("{ ");
    out.push_str(super::py::strip(&text));
    out.push_str(" } ");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_escaped() {
        assert_eq!(tag_value("a\"]\n[b\\\u{2028}"), "a\\\"] [b\\\\ ");
    }

    #[test]
    fn the_movetext_numbers_moves_again_after_comments() {
        let start = Position::from_fen("4k3/8/8/8/8/8/4P3/4K3 b - - 0 7").unwrap();
        let mut game = Game::new(start);
        for uci in ["e8d7", "e2e4", "d7e6"] {
            let mv = game.position().legal_uci(uci).unwrap();
            game.play(mv);
        }
        let comments = ["+0.10 0.001s".to_owned(), String::new(), "x}y".to_owned()];
        let pgn = write(
            &game,
            &[("Event", "chess".into()), ("Result", "*".into())],
            &comments,
            "",
            "*",
        );
        assert_eq!(
            pgn,
            "[Event \"chess\"]\n[Result \"*\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 0 7\"]\n\
             [SetUp \"1\"]\n\n7... Kd7 { +0.10 0.001s } 8. e4 Ke6 { xy } *"
        );
    }
}
