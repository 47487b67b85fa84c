//! The original dealer's shuffle, bit for bit, and the judgement of a hand.
//!
//! The generator is Park and Miller's "minimal standard" Lehmer generator
//! (`state = 16807 * state mod (2^31 - 1)`), and the shuffle is a forward
//! Fisher–Yates over a value-major deck (`2c 2d 2h 2s 3c ... As`). Both
//! statement samples depend on every detail of this, so none of it may
//! change: see `docs/evensteven.md`.

use super::cards::{Card, Suit};

/// Largest hand the dealer accepts (the statement's `0 < N <= 13`).
pub const MAX_HAND: usize = 13;
/// Seeds are `0 < seed < 2^31 - 1`; 0 would make the generator stick at 0.
pub const MIN_SEED: u32 = 1;
pub const MAX_SEED: u32 = 2_147_483_646;

const MODULUS: u64 = 2_147_483_647;
const MULTIPLIER: u64 = 16_807;

/// Park–Miller "minimal standard" generator.
#[derive(Clone, Debug)]
pub struct MinStd {
    state: u64,
}

impl MinStd {
    /// `seed` must be in `MIN_SEED..=MAX_SEED`; the dealer checks this first.
    pub fn new(seed: u32) -> MinStd {
        debug_assert!((MIN_SEED..=MAX_SEED).contains(&seed));
        MinStd {
            state: u64::from(seed),
        }
    }

    /// Advances the state and returns the new state.
    pub fn draw(&mut self) -> u32 {
        // `MULTIPLIER * state mod MODULUS` without a division: the modulus
        // is 2^31 - 1, so 2^31 is 1 modulo it, and the product's high bits
        // add to its low ones (a dealt game draws 51 times).
        let product = MULTIPLIER * self.state;
        let folded = (product & MODULUS) + (product >> 31);
        self.state = if folded >= MODULUS {
            folded - MODULUS
        } else {
            folded
        };
        // The modulus is below 2^31, so the state always fits.
        self.state as u32
    }
}

/// The 52-card deck in the original dealer's starting order: index `i` has
/// value `2 + i / 4` and suit `i % 4` (c, d, h, s).
pub fn fresh_deck() -> [Card; 52] {
    std::array::from_fn(|i| {
        Card::new(Card::MIN_VALUE + (i / 4) as u8, Suit::ALL[i % 4]).expect("value in range")
    })
}

/// The deck after the original dealer's shuffle with `seed`.
pub fn shuffled_deck(seed: u32) -> [Card; 52] {
    let mut deck = fresh_deck();
    let mut rng = MinStd::new(seed);
    for i in 0..51 {
        // In 32 bits: the draw fits, and a 32-bit division is the cheaper.
        let j = i + (rng.draw() % (52 - i) as u32) as usize;
        deck.swap(i, j);
    }
    deck
}

/// One game: the hand, and the cards the player will have to cover, in the
/// order they will be dealt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deal {
    pub hand: Vec<Card>,
    pub to_cover: Vec<Card>,
}

impl Deal {
    /// Deals a hand of `n` cards (1..=13) from the deck shuffled with `seed`.
    /// The `n` cards after the hand are the ones to cover.
    pub fn new(n: usize, seed: u32) -> Deal {
        debug_assert!((1..=MAX_HAND).contains(&n));
        let deck = shuffled_deck(seed);
        Deal {
            hand: deck[..n].to_vec(),
            to_cover: deck[n..2 * n].to_vec(),
        }
    }

    /// Whether some way of playing the hand covers every dealt card. See
    /// [`winnable`].
    pub fn winnable(&self) -> bool {
        winnable(&self.hand, &self.to_cover)
    }
}

/// A hand can cover a set of dealt cards (in whatever order they come) iff,
/// with both sorted by value, every hand card is at least its counterpart.
/// This decides NECESSARILY versus UNNECESSARILY.
///
/// Counted by value rather than sorted (it runs on every game): the
/// smallest `k` hand cards, sorted, are each at least the sorted dealt
/// card beside them iff below every value there are no more of them than
/// dealt cards.
pub fn winnable(hand: &[Card], to_cover: &[Card]) -> bool {
    if hand.len() < to_cover.len() {
        return false;
    }
    let by_value = |cards: &[Card]| {
        let mut counts = [0usize; Card::MAX_VALUE as usize + 1];
        for card in cards {
            counts[usize::from(card.value())] += 1;
        }
        counts
    };
    let (hand_counts, dealt_counts) = (by_value(hand), by_value(to_cover));
    let (mut hand_below, mut dealt_below) = (0, 0);
    for value in 0..hand_counts.len() {
        hand_below += hand_counts[value];
        dealt_below += dealt_counts[value];
        if hand_below.min(to_cover.len()) > dealt_below {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::evensteven::cards::cards;

    #[test]
    fn minimal_standard_reference_value() {
        // Park & Miller's published check: from seed 1, the 10,000th state
        // is 1043618065.
        let mut rng = MinStd::new(1);
        let mut last = 0;
        for _ in 0..10_000 {
            last = rng.draw();
        }
        assert_eq!(last, 1_043_618_065);
    }

    #[test]
    fn fresh_deck_is_value_major() {
        let deck = fresh_deck();
        assert_eq!(deck[0].to_string(), "2c");
        assert_eq!(deck[1].to_string(), "2d");
        assert_eq!(deck[4].to_string(), "3c");
        assert_eq!(deck[51].to_string(), "As");
    }

    #[test]
    fn statement_samples() {
        let one = Deal::new(4, 876_390_176);
        assert_eq!(one.hand, cards("4h 2d Qs Jc"));
        assert_eq!(one.to_cover[..3], cards("8c Qc 9s")[..]);
        assert!(!one.winnable());

        let two = Deal::new(4, 653_723_903);
        assert_eq!(two.hand, cards("Kd 8c As 5s"));
        assert_eq!(two.to_cover, cards("3s 6h Kh 5c"));
        assert!(two.winnable());
    }

    #[test]
    fn shuffle_is_a_permutation() {
        for seed in [MIN_SEED, 2, 12345, MAX_SEED] {
            let mut deck = shuffled_deck(seed).to_vec();
            deck.sort_by_key(|c| (c.value(), c.suit()));
            assert_eq!(deck, fresh_deck().to_vec());
        }
    }

    /// The definition [`winnable`] counts its way to.
    fn winnable_by_sorting(hand: &[Card], to_cover: &[Card]) -> bool {
        let mut hand: Vec<u8> = hand.iter().map(|c| c.value()).collect();
        let mut dealt: Vec<u8> = to_cover.iter().map(|c| c.value()).collect();
        hand.sort_unstable();
        dealt.sort_unstable();
        hand.len() >= dealt.len() && hand.iter().zip(&dealt).all(|(h, d)| h >= d)
    }

    proptest::proptest! {
        #[test]
        fn counting_decides_as_sorting_does(
            hand in proptest::collection::vec(0..52usize, 0..15),
            dealt in proptest::collection::vec(0..52usize, 0..15),
        ) {
            let deck = fresh_deck();
            let hand: Vec<Card> = hand.into_iter().map(|i| deck[i]).collect();
            let dealt: Vec<Card> = dealt.into_iter().map(|i| deck[i]).collect();
            proptest::prop_assert_eq!(winnable(&hand, &dealt), winnable_by_sorting(&hand, &dealt));
        }

        #[test]
        fn the_generator_is_the_modular_product(state in 1..MODULUS) {
            let mut rng = MinStd { state };
            proptest::prop_assert_eq!(u64::from(rng.draw()), MULTIPLIER * state % MODULUS);
        }
    }

    #[test]
    fn winnable_compares_sorted_values() {
        assert!(winnable(&cards("2c"), &cards("2s")));
        assert!(!winnable(&cards("2c"), &cards("3s")));
        assert!(winnable(&cards("Ac 2c"), &cards("2s As")));
        assert!(!winnable(&cards("Ac 2c"), &cards("3s 4s")));
        assert!(winnable(&cards("Kc 5d 5h"), &cards("5s 4c Kh")));
    }
}
