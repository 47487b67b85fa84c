//! The Aces Up rules engine: pure functions from a deck to the games played
//! and to the exact output the reference program prints.
//!
//! Cards are dealt round-robin onto four piles. After each card dealt,
//! moving operations apply until none does: first *discard* — the lowest
//! exposed card that has a higher exposed card of its suit (ties between
//! suits: C, D, H, S) — else *fill* the lowest-numbered empty pile with the
//! exposed card of the lowest-numbered pile holding two or more cards.
//! A game is won when only the four aces remain, perfect when they lie C,
//! D, H, S on piles 1 to 4. A lost game is played again with the deck's
//! top card moved to the bottom, at most 52 games in all.

use std::fmt::Write as _;

/// The four suits in their order of precedence (C smallest).
pub const SUITS: [u8; 4] = [b'C', b'D', b'H', b'S'];
/// The ranks in increasing order (2 lowest, A highest).
pub const RANKS: [u8; 13] = [
    b'2', b'3', b'4', b'5', b'6', b'7', b'8', b'9', b'T', b'J', b'Q', b'K', b'A',
];
/// At most this many games per deck (one per rotation).
pub const MAX_GAMES: usize = 52;

/// A card: rank value 2..=14 (A = 14) and suit index 0..=3 (C, D, H, S).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card {
    pub rank: u8,
    pub suit: u8,
}

impl Card {
    /// From the two characters of an input line.
    pub fn from_chars(rank: u8, suit: u8) -> Option<Card> {
        let rank = RANKS.iter().position(|&r| r == rank)? as u8 + 2;
        let suit = SUITS.iter().position(|&s| s == suit)? as u8;
        Some(Card { rank, suit })
    }

    pub fn is_ace(self) -> bool {
        self.rank == 14
    }

    /// The two characters, e.g. `TD`.
    pub fn chars(self) -> [u8; 2] {
        [
            RANKS[usize::from(self.rank - 2)],
            SUITS[usize::from(self.suit)],
        ]
    }
}

impl std::fmt::Display for Card {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [r, s] = self.chars();
        write!(f, "{}{}", r as char, s as char)
    }
}

/// How one game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Game {
    /// Cards left on piles 1 to 4.
    pub piles: [usize; 4],
    /// Moving operations performed (discards and fills).
    pub moves: u32,
    pub won: bool,
    pub perfect: bool,
}

impl Game {
    pub fn total(&self) -> usize {
        self.piles.iter().sum()
    }
}

/// Plays one game with `deck` (top card first).
pub fn play(deck: &[Card; 52]) -> Game {
    let mut moves = 0;
    let (piles, len) = deal(deck, |step| moves += u32::from(step.is_some()));
    let remaining = len.iter().sum::<usize>();
    let won = remaining == 4
        && (0..4).all(|p| len[p] == 0 || piles[p][..len[p]].iter().all(|c| c.is_ace()));
    let perfect = won
        && (0..4).all(|p| {
            len[p] == 1
                && piles[p][0]
                    == Card {
                        rank: 14,
                        suit: p as u8,
                    }
        });
    Game {
        piles: len,
        moves,
        won,
        perfect,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Discard the exposed card of this pile.
    Discard(usize),
    /// Move the exposed card of pile `from` to the empty pile `to`.
    Fill { from: usize, to: usize },
}

fn next_operation(piles: &[[Card; 13]; 4], len: &[usize; 4]) -> Option<Operation> {
    let exposed = |p: usize| (len[p] > 0).then(|| piles[p][len[p] - 1]);
    // Discard: the lowest rank, then the smallest suit, among exposed cards
    // with a higher exposed card of the same suit.
    let discard = (0..4)
        .filter_map(|p| exposed(p).map(|c| (c, p)))
        .filter(|&(c, _)| {
            (0..4).any(|q| exposed(q).is_some_and(|d| d.suit == c.suit && d.rank > c.rank))
        })
        .min_by_key(|&(c, _)| (c.rank, c.suit));
    if let Some((_, p)) = discard {
        return Some(Operation::Discard(p));
    }
    let to = (0..4).find(|&p| len[p] == 0)?;
    let from = (0..4).find(|&p| len[p] >= 2)?;
    Some(Operation::Fill { from, to })
}

/// What [`play`] does with `deck`, step by step, for replays: each card
/// dealt (`None`, the card going to pile `i % 4`) followed by the moving
/// operations it allowed.
pub fn trace(deck: &[Card; 52]) -> Vec<Option<Operation>> {
    let mut steps = Vec::with_capacity(160);
    deal(deck, |step| steps.push(step));
    steps
}

/// Deals `deck` (top card first) onto the piles, card `i` to pile `i %
/// 4`, each card followed by every moving operation it allows; `step`
/// sees each card dealt (`None`) and each operation. The piles at the end,
/// and how many cards each holds.
fn deal(
    deck: &[Card; 52],
    mut step: impl FnMut(Option<Operation>),
) -> ([[Card; 13]; 4], [usize; 4]) {
    // Each pile holds at most 13 cards; a fixed array keeps this fast.
    let mut piles = [[Card { rank: 0, suit: 0 }; 13]; 4];
    let mut len = [0usize; 4];
    for (i, &card) in deck.iter().enumerate() {
        let p = i % 4;
        piles[p][len[p]] = card;
        len[p] += 1;
        step(None);
        while let Some(op) = next_operation(&piles, &len) {
            step(Some(op));
            apply(op, &mut piles, &mut len);
        }
    }
    (piles, len)
}

/// Does `op` on the piles.
fn apply(op: Operation, piles: &mut [[Card; 13]; 4], len: &mut [usize; 4]) {
    match op {
        Operation::Discard(p) => len[p] -= 1,
        Operation::Fill { from, to } => {
            len[from] -= 1;
            piles[to][0] = piles[from][len[from]];
            len[to] = 1;
        }
    }
}

/// Plays the deck, rotating it after each lost game, until a win or 52
/// games.
pub fn play_rotations(deck: &[Card; 52]) -> Vec<Game> {
    let mut deck = *deck;
    let mut games = Vec::new();
    for _ in 0..MAX_GAMES {
        let game = play(&deck);
        games.push(game);
        if game.won {
            break;
        }
        deck.rotate_left(1);
    }
    games
}

/// The reference program's whole output for `deck` (see `docs/acesup.md`):
/// the 52 cards echoed, then each game's report.
pub fn expected_output(deck: &[Card; 52]) -> String {
    let mut out = String::with_capacity(52 * 3 + 52 * 80);
    for card in deck {
        let _ = writeln!(out, "{card}");
    }
    for (i, game) in play_rotations(deck).iter().enumerate() {
        write_game(&mut out, i + 1, game);
    }
    out
}

/// One game's report: five lines.
pub fn write_game(out: &mut String, number: usize, game: &Game) {
    let [a, b, c, d] = game.piles;
    let result = match (game.won, game.perfect) {
        (true, true) => "won, perfect",
        (true, false) => "won",
        _ => "lost",
    };
    let _ = write!(
        out,
        "Game {number}\nPiles: {a} {b} {c} {d}\nTotal: {}\nMoves: {}\nResult: {result}\n",
        game.total(),
        game.moves
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(text: &str) -> Card {
        let b = text.as_bytes();
        Card::from_chars(b[0], b[1]).unwrap()
    }

    fn piles(stacks: [&str; 4]) -> ([[Card; 13]; 4], [usize; 4]) {
        let mut p = [[Card { rank: 0, suit: 0 }; 13]; 4];
        let mut len = [0; 4];
        for (i, stack) in stacks.iter().enumerate() {
            for c in stack.split_whitespace() {
                p[i][len[i]] = card(c);
                len[i] += 1;
            }
        }
        (p, len)
    }

    fn op(stacks: [&str; 4]) -> Option<Operation> {
        let (p, len) = piles(stacks);
        next_operation(&p, &len)
    }

    #[test]
    fn discards_the_lowest_card_with_a_higher_one_of_its_suit() {
        // Exposed: 5H, 9H, 3C, KC: discard 3C (rank 3) before 5H.
        assert_eq!(op(["5H", "9H", "3C", "KC"]), Some(Operation::Discard(2)));
        // Only the lower of a suit goes.
        assert_eq!(op(["2S", "AS", "3D", "4H"]), Some(Operation::Discard(0)));
        // No two of a suit, no empty pile: nothing.
        assert_eq!(op(["2S", "3D", "4H", "5C"]), None);
        // Only exposed cards count.
        assert_eq!(op(["AS 2D", "3S", "4H", "5C"]), None);
    }

    #[test]
    fn ties_go_to_the_smallest_suit() {
        // 4C and 4H both discardable (KC, KH exposed): C first.
        assert_eq!(op(["4H", "KH", "4C", "KC"]), Some(Operation::Discard(2)));
        assert_eq!(op(["4S", "KS", "4D", "KD"]), Some(Operation::Discard(2)));
    }

    #[test]
    fn fills_the_lowest_empty_pile_from_the_lowest_tall_pile() {
        // Piles 2 and 4 empty; piles 1 and 3 tall: pile 1's top to pile 2.
        assert_eq!(
            op(["2C 3D", "", "4H 5S", ""]),
            Some(Operation::Fill { from: 0, to: 1 })
        );
        // A pile of one card is not taken from.
        assert_eq!(
            op(["2C", "", "4H 5S", "6D"]),
            Some(Operation::Fill { from: 2, to: 1 })
        );
        assert_eq!(op(["2C", "", "4H", "6D"]), None);
        // Discarding comes first.
        assert_eq!(op(["2C 3D", "", "4H 5D", ""]), Some(Operation::Discard(0)));
    }

    fn sorted_deck() -> [Card; 52] {
        let mut deck = [Card { rank: 0, suit: 0 }; 52];
        for (i, c) in deck.iter_mut().enumerate() {
            *c = Card {
                rank: (i / 4) as u8 + 2,
                suit: (i % 4) as u8,
            };
        }
        deck
    }

    #[test]
    fn the_sorted_deck_is_never_won() {
        // 2C 2D 2H 2S 3C ...: every pile gets one suit, in every rotation,
        // so no two exposed cards ever share a suit: nothing ever moves.
        let games = play_rotations(&sorted_deck());
        assert_eq!(games.len(), MAX_GAMES);
        for game in games {
            assert_eq!(game.piles, [13, 13, 13, 13]);
            assert_eq!(game.moves, 0);
            assert!(!game.won && !game.perfect);
        }
    }

    #[test]
    fn a_small_win_by_hand() {
        // First round 2C 3C 4C AC: 2C, 3C, 4C are discarded in turn (3
        // moves), leaving AC on pile 4.
        let (mut p, mut len) = piles(["2C", "3C", "4C", "AC"]);
        let mut moves = 0;
        while let Some(op) = next_operation(&p, &len) {
            moves += 1;
            apply(op, &mut p, &mut len);
        }
        assert_eq!((moves, len), (3, [0, 0, 0, 1]));
    }

    #[test]
    fn output_format() {
        let text = expected_output(&sorted_deck());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "2C");
        assert_eq!(lines[51], "AS");
        assert_eq!(
            lines[52..57],
            [
                "Game 1",
                "Piles: 13 13 13 13",
                "Total: 52",
                "Moves: 0",
                "Result: lost"
            ]
        );
        assert_eq!(lines.len(), 52 + 5 * 52);
    }

    #[test]
    fn cards_round_trip() {
        for r in RANKS {
            for s in SUITS {
                let c = Card::from_chars(r, s).unwrap();
                assert_eq!(c.chars(), [r, s]);
            }
        }
        assert_eq!(Card::from_chars(b'1', b'C'), None);
        assert_eq!(Card::from_chars(b'A', b'c'), None);
    }
}
