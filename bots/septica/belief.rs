//! What the computer may be holding: an exact probability for every hand
//! it could have, updated by Bayes' rule from everything it does.
//!
//! The computer's policy is known (`referee::games::septica::computer`), so
//! each of its moves has a known probability under each possible hand; the
//! deck is uniformly shuffled, so every draw has a hypergeometric
//! probability. Hands are multisets of values, so there are at most a few
//! hundred of them.

use std::collections::HashMap;

use referee::games::septica::rules::{HIGH, Hand, LOW};
use referee::rng::SplitMix64;

#[derive(Clone, Debug, Default)]
pub struct Belief {
    hands: Vec<(Hand, f64)>,
}

/// `n choose k` for the small numbers of this game.
fn choose(n: u8, k: u8) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * f64::from(n - i) / f64::from(i + 1))
}

/// The probability of drawing exactly the multiset `draw` from `pool`.
fn draw_probability(pool: &Hand, draw: &Hand) -> f64 {
    let ways: f64 = (LOW..=HIGH)
        .map(|v| choose(pool.count(v), draw.count(v)))
        .product();
    ways / choose(pool.len() as u8, draw.len() as u8)
}

/// Every multiset of `size` cards within `pool`.
fn sub_hands(pool: &Hand, size: usize) -> Vec<Hand> {
    fn go(pool: &Hand, value: u8, left: usize, current: &mut Hand, out: &mut Vec<Hand>) {
        if left == 0 {
            out.push(*current);
            return;
        }
        if value > HIGH {
            return;
        }
        for take in 0..=pool.count(value).min(left as u8) {
            for _ in 0..take {
                current.add(value);
            }
            go(pool, value + 1, left - usize::from(take), current, out);
            for _ in 0..take {
                current.remove(value);
            }
        }
    }
    let mut out = Vec::new();
    go(pool, LOW, size, &mut Hand::default(), &mut out);
    out
}

impl Belief {
    /// Before anything is known: `size` cards drawn at random from `unseen`.
    pub fn uniform(unseen: &Hand, size: usize) -> Belief {
        let hands = sub_hands(unseen, size)
            .into_iter()
            .map(|h| (h, draw_probability(unseen, &h)))
            .collect();
        Belief { hands }
    }

    /// The probability that the computer holds exactly `hand`.
    #[cfg(test)]
    pub fn probability(&self, hand: &Hand) -> f64 {
        self.hands
            .iter()
            .filter(|(h, _)| h == hand)
            .map(|&(_, p)| p)
            .sum()
    }

    /// Multiplies each hand's probability by `likelihood(hand)` and
    /// renormalizes. Returns false (and changes nothing) if no hand could
    /// have done it — which means the model was wrong.
    pub fn condition(&mut self, likelihood: impl Fn(&Hand) -> f64) -> bool {
        let weighted: Vec<(Hand, f64)> = self
            .hands
            .iter()
            .map(|&(h, p)| (h, p * likelihood(&h)))
            .filter(|&(_, p)| p > 0.0)
            .collect();
        let total: f64 = weighted.iter().map(|&(_, p)| p).sum();
        if total <= 0.0 {
            return false;
        }
        self.hands = weighted.into_iter().map(|(h, p)| (h, p / total)).collect();
        true
    }

    /// The computer played `card` (every remaining hand holds it).
    pub fn played(&mut self, card: u8) {
        for (h, _) in &mut self.hands {
            h.remove(card);
        }
    }

    /// After a trick: the player drew `player_drew` from the deck, then the
    /// computer as many cards. `unseen` is what the player had not seen
    /// before its new cards (the computer's hand and the deck).
    pub fn drew(&mut self, unseen: &Hand, player_drew: &Hand) {
        let k = player_drew.len();
        if k == 0 {
            return;
        }
        let mut next: HashMap<Hand, f64> = HashMap::new();
        for &(h, p) in &self.hands {
            let deck = unseen.minus(&h);
            let p = p * draw_probability(&deck, player_drew);
            if p == 0.0 {
                continue;
            }
            let rest = deck.minus(player_drew);
            for d in sub_hands(&rest, k) {
                *next.entry(h.plus(&d)).or_default() += p * draw_probability(&rest, &d);
            }
        }
        let total: f64 = next.values().sum();
        self.hands = next.into_iter().map(|(h, p)| (h, p / total)).collect();
        self.hands.sort_by_key(|&(h, _)| h);
    }

    /// A hand drawn with its probability.
    pub fn sample(&self, rng: &mut SplitMix64) -> Hand {
        let mut x = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        for &(h, p) in &self.hands {
            if x < p {
                return h;
            }
            x -= p;
        }
        self.hands.last().map(|&(h, _)| h).unwrap_or_default()
    }

    /// The probability that the computer holds at least one `card`.
    #[cfg(test)]
    pub fn holds(&self, card: u8) -> f64 {
        self.hands
            .iter()
            .filter(|(h, _)| h.has(card))
            .map(|&(_, p)| p)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prior_counts_every_hand() {
        let unseen = Hand::full_deck().minus(&Hand::from_cards(&[7, 8, 9, 10]));
        let belief = Belief::uniform(&unseen, 4);
        let total: f64 = belief.hands.iter().map(|&(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-9);
        // P(no 7 among 4 of 28 with three 7s) = C(25,4)/C(28,4).
        let p_no_seven = choose(25, 4) / choose(28, 4);
        assert!((belief.holds(7) - (1.0 - p_no_seven)).abs() < 1e-9);
    }

    #[test]
    fn conditioning_on_a_move() {
        let unseen = Hand::full_deck().minus(&Hand::from_cards(&[7, 8, 9, 10]));
        let mut belief = Belief::uniform(&unseen, 4);
        // Suppose the computer showed it has no 14.
        assert!(belief.condition(|h| f64::from(u8::from(!h.has(14)))));
        assert_eq!(belief.holds(14), 0.0);
        assert!(!belief.condition(|_| 0.0));
    }

    #[test]
    fn draws_keep_a_distribution() {
        let seen = Hand::from_cards(&[7, 8, 9, 10]);
        let unseen = Hand::full_deck().minus(&seen);
        let mut belief = Belief::uniform(&unseen, 4);
        // The computer played an 11.
        belief.condition(|h| f64::from(u8::from(h.has(11))));
        belief.played(11);
        let unseen = unseen.minus(&Hand::from_cards(&[11]));
        belief.drew(&unseen, &Hand::from_cards(&[12]));
        let total: f64 = belief.hands.iter().map(|&(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-9);
        assert!(belief.hands.iter().all(|(h, _)| h.len() == 4));
    }
}
