//! Reading decks: the program's input (exactly 52 lines of two characters,
//! each ending in `\n`), and the judge's deck files.

use std::fmt;

use super::engine::Card;

/// What is wrong with a deck, and on which line (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeckError {
    pub line: usize,
    pub what: String,
}

impl fmt::Display for DeckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.what)
    }
}

impl std::error::Error for DeckError {}

fn shown(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        format!("'{}'", byte as char)
    } else {
        format!("byte 0x{byte:02x}")
    }
}

/// Checks one line (without its `\n`) as the `number`-th card.
pub fn parse_line(line: &[u8], number: usize) -> Result<Card, DeckError> {
    let error = |what: String| DeckError { line: number, what };
    match *line {
        [rank, suit] => match Card::from_chars(rank, suit) {
            Some(card) => Ok(card),
            None if Card::from_chars(rank, b'C').is_none() => Err(error(format!(
                "{} is not a rank (2-9, T, J, Q, K, A)",
                shown(rank)
            ))),
            None => Err(error(format!("{} is not a suit (C, D, H, S)", shown(suit)))),
        },
        _ => Err(error(format!(
            "expected exactly two characters (rank and suit), found {}",
            line.len()
        ))),
    }
}

/// Reads a whole program input strictly, calling `on_card` for each good
/// card in order (the reference program echoes them as it reads).
pub fn read_input(input: &[u8], mut on_card: impl FnMut(Card)) -> Result<[Card; 52], DeckError> {
    let mut deck = [Card { rank: 0, suit: 0 }; 52];
    let mut seen: [Option<usize>; 64] = [None; 64];
    let mut rest = input;
    for (i, slot) in deck.iter_mut().enumerate() {
        let number = i + 1;
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            return Err(DeckError {
                line: number,
                what: if rest.is_empty() {
                    format!("the input ends after {i} cards; a deck has 52")
                } else {
                    "the line does not end with a newline".into()
                },
            });
        };
        let card = parse_line(&rest[..end], number)?;
        let key = usize::from(card.rank) * 4 + usize::from(card.suit);
        if let Some(first) = seen[key] {
            return Err(DeckError {
                line: number,
                what: format!("{card} repeats line {first}"),
            });
        }
        seen[key] = Some(number);
        on_card(card);
        *slot = card;
        rest = &rest[end + 1..];
    }
    if !rest.is_empty() {
        return Err(DeckError {
            line: 53,
            what: "more input after the 52nd card".into(),
        });
    }
    Ok(deck)
}

/// The program input for a deck: its 52 lines.
pub fn input_text(deck: &[Card; 52]) -> String {
    deck.iter().map(|c| format!("{c}\n")).collect()
}

/// Reads a judge's deck file: decks of 52 lines, separated by blank lines.
/// Line numbers in errors are the file's.
pub fn read_deck_file(text: &str) -> Result<Vec<[Card; 52]>, DeckError> {
    let mut decks = Vec::new();
    let mut block: Vec<(usize, &str)> = Vec::new();
    let lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
    for (number, line) in lines.chain(std::iter::once((0, ""))) {
        if !line.trim().is_empty() {
            block.push((number, line));
            continue;
        }
        if block.is_empty() {
            continue;
        }
        if block.len() != 52 {
            return Err(DeckError {
                line: block[0].0,
                what: format!(
                    "the deck starting here has {} cards; a deck has 52",
                    block.len()
                ),
            });
        }
        let mut deck = [Card { rank: 0, suit: 0 }; 52];
        let mut first_line: [Option<usize>; 64] = [None; 64];
        for (slot, &(number, line)) in deck.iter_mut().zip(&block) {
            let card = parse_line(line.as_bytes(), number)?;
            let key = usize::from(card.rank) * 4 + usize::from(card.suit);
            if let Some(first) = first_line[key] {
                return Err(DeckError {
                    line: number,
                    what: format!("{card} repeats line {first}"),
                });
            }
            first_line[key] = Some(number);
            *slot = card;
        }
        decks.push(deck);
        block.clear();
    }
    if decks.is_empty() {
        return Err(DeckError {
            line: 1,
            what: "no deck in the file".into(),
        });
    }
    Ok(decks)
}

/// A uniformly shuffled deck for `--random`: Fisher–Yates with the deck's
/// own SplitMix64 stream.
pub fn random_deck(seed: u64, index: u64) -> [Card; 52] {
    let mut deck = [Card { rank: 0, suit: 0 }; 52];
    for (i, c) in deck.iter_mut().enumerate() {
        *c = Card {
            rank: (i / 4) as u8 + 2,
            suit: (i % 4) as u8,
        };
    }
    crate::rng::SplitMix64::for_game(seed, index).shuffle(&mut deck);
    deck
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some_input() -> String {
        input_text(&random_deck(1, 0))
    }

    #[test]
    fn reads_and_echoes() {
        let text = some_input();
        let mut echoed = Vec::new();
        let deck = read_input(text.as_bytes(), |c| echoed.push(c)).unwrap();
        assert_eq!(echoed.len(), 52);
        assert_eq!(input_text(&deck), text);
    }

    #[test]
    fn every_kind_of_bad_input_names_its_line() {
        let good = some_input();
        let lines: Vec<&str> = good.lines().collect();
        let with = |i: usize, replacement: &str| {
            let mut l = lines.clone();
            l[i] = replacement;
            l.iter().map(|x| format!("{x}\n")).collect::<String>()
        };
        let err = |text: &str| read_input(text.as_bytes(), |_| {}).unwrap_err().to_string();
        assert_eq!(
            err(&with(4, "1C")),
            "line 5: '1' is not a rank (2-9, T, J, Q, K, A)"
        );
        assert_eq!(
            err(&with(4, "Ac")),
            "line 5: 'c' is not a suit (C, D, H, S)"
        );
        assert_eq!(
            err(&with(4, "AC ")),
            "line 5: expected exactly two characters (rank and suit), found 3"
        );
        assert_eq!(
            err(&with(4, "A")),
            "line 5: expected exactly two characters (rank and suit), found 1"
        );
        let repeat = with(9, lines[2]);
        assert_eq!(
            err(&repeat),
            format!("line 10: {} repeats line 3", lines[2])
        );
        assert_eq!(
            err(&good[..good.len() - 3]),
            "line 52: the input ends after 51 cards; a deck has 52"
        );
        assert_eq!(
            err(&good[..good.len() - 1]),
            "line 52: the line does not end with a newline"
        );
        assert_eq!(
            err(&format!("{good}\n")),
            "line 53: more input after the 52nd card"
        );
        assert_eq!(
            err(&with(0, "A\r")),
            "line 1: byte 0x0d is not a suit (C, D, H, S)"
        );
    }

    #[test]
    fn deck_files() {
        let one = some_input();
        let two = input_text(&random_deck(1, 1));
        let decks = read_deck_file(&format!("{one}\n{two}")).unwrap();
        assert_eq!(decks.len(), 2);
        assert_eq!(input_text(&decks[1]), two);
        let short: String = one.lines().take(51).map(|l| format!("{l}\n")).collect();
        let e = read_deck_file(&format!("{one}\n{short}")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 54: the deck starting here has 51 cards; a deck has 52"
        );
        assert!(read_deck_file("\n\n").is_err());
    }
}
