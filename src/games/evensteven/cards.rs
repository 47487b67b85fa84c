//! Cards as the Even Steven statement writes them: `<value><suit>`, values
//! `2`..`10`, `J`, `Q`, `K`, `A`, suits `c d h s`. Suits never affect value.

use std::fmt;

/// The four suits, in the order the original dealer's deck lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suit {
    Clubs,
    Diamonds,
    Hearts,
    Spades,
}

impl Suit {
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];

    pub fn letter(self) -> char {
        match self {
            Suit::Clubs => 'c',
            Suit::Diamonds => 'd',
            Suit::Hearts => 'h',
            Suit::Spades => 's',
        }
    }

    fn from_byte(b: u8) -> Option<Suit> {
        match b {
            b'c' => Some(Suit::Clubs),
            b'd' => Some(Suit::Diamonds),
            b'h' => Some(Suit::Hearts),
            b's' => Some(Suit::Spades),
            _ => None,
        }
    }
}

/// A card. `value` runs from 2 to 14 (jack 11, queen 12, king 13, ace 14).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Card {
    value: u8,
    suit: Suit,
}

/// Why a piece of text is not a card. The message is written for a player's
/// author: it says what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CardError {
    #[error("empty line where a card was expected")]
    Empty,
    #[error("expected a value (2-10, J, Q, K, A) followed by a suit (c, d, h, s)")]
    Malformed,
    #[error("unknown card value {0:?}: values are 2-10, J, Q, K, A")]
    BadValue(String),
    #[error("unknown suit {0:?}: suits are c, d, h, s (lower case)")]
    BadSuit(char),
}

impl Card {
    /// Values in increasing order, as the statement lists them.
    pub const MIN_VALUE: u8 = 2;
    pub const MAX_VALUE: u8 = 14;

    pub fn new(value: u8, suit: Suit) -> Option<Card> {
        (Self::MIN_VALUE..=Self::MAX_VALUE)
            .contains(&value)
            .then_some(Card { value, suit })
    }

    pub fn value(self) -> u8 {
        self.value
    }

    pub fn suit(self) -> Suit {
        self.suit
    }

    /// True when this card, played from the hand, covers `dealt`
    /// (equal or higher value; suits do not matter).
    pub fn covers(self, dealt: Card) -> bool {
        self.value >= dealt.value
    }

    /// Parses exactly one card with nothing around it. The caller strips line
    /// endings first; any other byte is an error.
    pub fn parse(text: &str) -> Result<Card, CardError> {
        let bytes = text.as_bytes();
        let (&suit_byte, value_bytes) = bytes.split_last().ok_or(CardError::Empty)?;
        if value_bytes.is_empty() {
            return Err(CardError::Malformed);
        }
        let value = match value_bytes {
            b"2" => 2,
            b"3" => 3,
            b"4" => 4,
            b"5" => 5,
            b"6" => 6,
            b"7" => 7,
            b"8" => 8,
            b"9" => 9,
            b"10" => 10,
            b"J" => 11,
            b"Q" => 12,
            b"K" => 13,
            b"A" => 14,
            _ => {
                // Only name a bad value when the text otherwise looks like a
                // card (one character, or a number, then a letter); for other
                // text the general message is the clearer one.
                let value_like = value_bytes.len() == 1 && value_bytes[0].is_ascii_alphanumeric()
                    || value_bytes.len() == 2 && value_bytes.iter().all(u8::is_ascii_digit);
                return Err(if value_like && suit_byte.is_ascii_alphabetic() {
                    CardError::BadValue(String::from_utf8_lossy(value_bytes).into_owned())
                } else {
                    CardError::Malformed
                });
            }
        };
        let suit = Suit::from_byte(suit_byte).ok_or_else(|| {
            if suit_byte.is_ascii_graphic() {
                CardError::BadSuit(suit_byte as char)
            } else {
                CardError::Malformed
            }
        })?;
        Ok(Card { value, suit })
    }

    /// The card as the protocol and the records write it (`10h`, `Qs`),
    /// without the formatting machinery: messages are built on every move
    /// and records on every game.
    pub fn name(self) -> &'static str {
        const NAMES: [[&str; 4]; 13] = [
            ["2c", "2d", "2h", "2s"],
            ["3c", "3d", "3h", "3s"],
            ["4c", "4d", "4h", "4s"],
            ["5c", "5d", "5h", "5s"],
            ["6c", "6d", "6h", "6s"],
            ["7c", "7d", "7h", "7s"],
            ["8c", "8d", "8h", "8s"],
            ["9c", "9d", "9h", "9s"],
            ["10c", "10d", "10h", "10s"],
            ["Jc", "Jd", "Jh", "Js"],
            ["Qc", "Qd", "Qh", "Qs"],
            ["Kc", "Kd", "Kh", "Ks"],
            ["Ac", "Ad", "Ah", "As"],
        ];
        NAMES[usize::from(self.value - Self::MIN_VALUE)][self.suit as usize]
    }

    /// Appends the card as the protocol writes it.
    pub fn push_to(self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.name().as_bytes());
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Card {
    type Err = CardError;
    fn from_str(s: &str) -> Result<Card, CardError> {
        Card::parse(s)
    }
}

impl serde::Serialize for Card {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The cards `text` names, one a word (for tests).
#[cfg(test)]
pub(crate) fn cards(text: &str) -> Vec<Card> {
    text.split_whitespace()
        .map(|c| Card::parse(c).unwrap())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_card_round_trips() {
        for value in Card::MIN_VALUE..=Card::MAX_VALUE {
            for suit in Suit::ALL {
                let card = Card::new(value, suit).unwrap();
                assert_eq!(Card::parse(&card.to_string()), Ok(card));
            }
        }
    }

    #[test]
    fn statement_examples() {
        assert_eq!(Card::parse("2c").unwrap().value(), 2);
        assert_eq!(Card::parse("Jh").unwrap().to_string(), "Jh");
        assert_eq!(Card::parse("10s").unwrap().value(), 10);
        assert!(
            Card::parse("Ah")
                .unwrap()
                .covers(Card::parse("As").unwrap())
        );
        assert!(
            !Card::parse("2d")
                .unwrap()
                .covers(Card::parse("9s").unwrap())
        );
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert_eq!(Card::parse(""), Err(CardError::Empty));
        assert_eq!(Card::parse("c"), Err(CardError::Malformed));
        assert_eq!(Card::parse("1c"), Err(CardError::BadValue("1".into())));
        assert_eq!(Card::parse("jc"), Err(CardError::BadValue("j".into())));
        assert_eq!(Card::parse("JC"), Err(CardError::BadSuit('C')));
        assert_eq!(Card::parse("Jx"), Err(CardError::BadSuit('x')));
        assert_eq!(Card::parse(" Jc"), Err(CardError::Malformed));
        assert_eq!(Card::parse("Jc "), Err(CardError::Malformed));
        assert_eq!(Card::parse("YOU WIN"), Err(CardError::Malformed));
        assert_eq!(Card::parse("11c"), Err(CardError::BadValue("11".into())));
        assert_eq!(Card::parse("Jcc"), Err(CardError::Malformed));
    }
}
