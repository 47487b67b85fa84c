//! Septica's messages, token for token as the statement gives them.
//!
//! Computer to player: `c1 c2 c3 c4` (the player's hand at the start of a
//! match), `x` (the computer plays x), `2 n x1 .. xn` (the player drew
//! these; the computer moves next), `3 n x1 .. xn` (the player moves next),
//! `4 Sc Sp` (the match is over, with the scores). Player to computer: `x`
//! (play x) or `0` (end the trick, when leading).

use std::fmt::Write as _;

use super::rules::{Action, HIGH, LOW, Side};

/// A player's command, parsed.
pub fn parse_command(text: &str) -> Result<Action, String> {
    match text.parse::<u8>() {
        Ok(0) if text == "0" => Ok(Action::End),
        Ok(v) if (LOW..=HIGH).contains(&v) && text == v.to_string() => Ok(Action::Card(v)),
        _ => Err("expected a card value from 7 to 14, or 0 to end the trick".into()),
    }
}

/// `c1 c2 c3 c4`.
pub fn hand_line(cards: &[u8], out: &mut String) {
    let words: Vec<String> = cards.iter().map(u8::to_string).collect();
    let _ = writeln!(out, "{}", words.join(" "));
}

/// `2 n ...` or `3 n ...`: what the player drew, and who moves next.
pub fn draw_line(next: Side, drawn: &[u8], out: &mut String) {
    let code = match next {
        Side::Computer => 2,
        Side::Player => 3,
    };
    let _ = write!(out, "{code} {}", drawn.len());
    for c in drawn {
        let _ = write!(out, " {c}");
    }
    out.push('\n');
}

/// `4 Sc Sp`.
pub fn end_line(computer: u8, player: u8, out: &mut String) {
    let _ = writeln!(out, "4 {computer} {player}");
}

/// A message from the computer, as a player reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// The player's four cards at the start of a match.
    Hand(Vec<u8>),
    /// The computer played this card.
    Card(u8),
    /// The player drew these cards; `next` moves next.
    Drew { next: Side, cards: Vec<u8> },
    /// The match is over.
    Over { computer: u8, player: u8 },
}

/// Parses one line from the computer. `at_match_start` tells a hand line
/// apart from the others.
pub fn parse_message(line: &str, at_match_start: bool) -> Result<Message, String> {
    let numbers: Vec<u8> = line
        .split_ascii_whitespace()
        .map(|w| {
            w.parse::<u8>()
                .map_err(|_| format!("bad number {w:?} in {line:?}"))
        })
        .collect::<Result<_, _>>()?;
    let card = |v: u8| {
        if (LOW..=HIGH).contains(&v) {
            Ok(v)
        } else {
            Err(format!("bad card {v} in {line:?}"))
        }
    };
    if at_match_start {
        return numbers
            .iter()
            .map(|&v| card(v))
            .collect::<Result<_, _>>()
            .map(Message::Hand);
    }
    match numbers.as_slice() {
        [v] => Ok(Message::Card(card(*v)?)),
        [4, c, p] => Ok(Message::Over {
            computer: *c,
            player: *p,
        }),
        [code @ (2 | 3), n, cards @ ..] if usize::from(*n) == cards.len() => Ok(Message::Drew {
            next: if *code == 2 {
                Side::Computer
            } else {
                Side::Player
            },
            cards: cards.iter().map(|&v| card(v)).collect::<Result<_, _>>()?,
        }),
        _ => Err(format!("unexpected message {line:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands() {
        assert_eq!(parse_command("0"), Ok(Action::End));
        assert_eq!(parse_command("7"), Ok(Action::Card(7)));
        assert_eq!(parse_command("14"), Ok(Action::Card(14)));
        for bad in ["", "6", "15", "00", "07", "+7", "7 8", "x", "-1"] {
            assert!(parse_command(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn messages_round_trip() {
        let mut out = String::new();
        hand_line(&[14, 9, 7, 10], &mut out);
        draw_line(Side::Player, &[10], &mut out);
        draw_line(Side::Computer, &[8, 14], &mut out);
        draw_line(Side::Player, &[], &mut out);
        end_line(4, 4, &mut out);
        assert_eq!(out, "14 9 7 10\n3 1 10\n2 2 8 14\n3 0\n4 4 4\n");
        let mut lines = out.lines();
        assert_eq!(
            parse_message(lines.next().unwrap(), true),
            Ok(Message::Hand(vec![14, 9, 7, 10]))
        );
        assert_eq!(
            parse_message(lines.next().unwrap(), false),
            Ok(Message::Drew {
                next: Side::Player,
                cards: vec![10]
            })
        );
        assert_eq!(
            parse_message(lines.next().unwrap(), false),
            Ok(Message::Drew {
                next: Side::Computer,
                cards: vec![8, 14]
            })
        );
        assert_eq!(
            parse_message(lines.next().unwrap(), false),
            Ok(Message::Drew {
                next: Side::Player,
                cards: vec![]
            })
        );
        assert_eq!(
            parse_message(lines.next().unwrap(), false),
            Ok(Message::Over {
                computer: 4,
                player: 4
            })
        );
        assert_eq!(parse_message("11", false), Ok(Message::Card(11)));
        assert!(parse_message("2 3 8", false).is_err());
    }
}
