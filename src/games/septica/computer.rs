//! The computer's play, fixed by the project's rulings so that win rates
//! are comparable across versions. Each rule returns a [`Choice`]: one card,
//! or a uniform draw among some cards, which the referee makes with the
//! run's seeded generator and a player may reason about exactly.

use super::rules::{Hand, Side, Table, cuts, valuable, worthless};
use crate::rng::SplitMix64;

/// What the computer will do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Play this card.
    Card(u8),
    /// Play one of these cards, each card equally likely (so a value held
    /// twice is twice as likely).
    Uniform(Hand),
    /// End the trick.
    End,
}

impl Choice {
    /// The probability of playing `card` (0 for `End`).
    pub fn probability(&self, card: u8) -> f64 {
        match self {
            Choice::Card(c) => f64::from(u8::from(*c == card)),
            Choice::Uniform(among) => f64::from(among.count(card)) / among.len() as f64,
            Choice::End => 0.0,
        }
    }

    /// Makes the choice: a uniform draw uses `rng`. `None` means end.
    pub fn pick(&self, rng: &mut SplitMix64) -> Option<u8> {
        match self {
            Choice::Card(c) => Some(*c),
            Choice::Uniform(among) => {
                let cards = among.cards();
                Some(cards[rng.index(cards.len())])
            }
            Choice::End => None,
        }
    }
}

/// Potential cuts for leading `value`: cards of that value plus 7s.
fn potential_cuts(hand: &Hand, value: u8) -> u8 {
    hand.count(value) + hand.count(7)
}

/// A random worthless card; with none, `fallback`.
fn throw(hand: &Hand, fallback: Choice) -> Choice {
    let junk = hand.filter(worthless);
    if junk.is_empty() {
        fallback
    } else {
        Choice::Uniform(junk)
    }
}

/// Leading a trick. For each of 14 and 10 held, count its potential cuts;
/// lead one that has at least 3 (14 first). Else, with three or more 7s,
/// lead a 7. Else a random worthless card; with none, a random card that is
/// not a 7; with only 7s, a 7.
pub fn lead(hand: &Hand) -> Choice {
    for value in [14, 10] {
        if hand.has(value) && potential_cuts(hand, value) >= 3 {
            return Choice::Card(value);
        }
    }
    if hand.count(7) >= 3 {
        return Choice::Card(7);
    }
    let not_seven = hand.filter(|v| v != 7);
    let fallback = if not_seven.is_empty() {
        Choice::Card(7)
    } else {
        Choice::Uniform(not_seven)
    };
    throw(hand, fallback)
}

/// Answering a card of a trick of value `value`. A 10 or 14: with at least
/// 2 potential cuts, cut (with that value if held, else a 7); otherwise a
/// random worthless card, or the lowest card. Anything else (worthless, or
/// a 7): cut with that value if held, else with a 7, else a random
/// worthless card, or the lowest card.
pub fn answer(hand: &Hand, value: u8) -> Choice {
    let lowest = Choice::Card(hand.lowest().expect("answering with cards in hand"));
    let cut_with = if hand.has(value) { value } else { 7 };
    if valuable(value) {
        if potential_cuts(hand, value) >= 2 {
            return Choice::Card(cut_with);
        }
        return throw(hand, lowest);
    }
    if hand.has(value) || hand.has(7) {
        return Choice::Card(cut_with);
    }
    throw(hand, lowest)
}

/// As leader after the answer: continue with a cutting card (the trick's
/// value first, then a 7) when the answer cut, one is held, and the trick
/// already holds a 10 or a 14; otherwise end.
pub fn decide(table: &Table) -> Choice {
    decide_with(
        table.hand(Side::Computer),
        table.value,
        table.answer_cut,
        table.trick_points,
    )
}

/// [`decide`] from the parts of the table it looks at: the computer's hand,
/// the trick's value, whether the answer cut, and the points in the trick.
pub fn decide_with(hand: &Hand, value: u8, answer_cut: bool, trick_points: u8) -> Choice {
    if !answer_cut || trick_points == 0 {
        return Choice::End;
    }
    [value, 7]
        .into_iter()
        .find(|&c| hand.has(c) && cuts(c, value))
        .map_or(Choice::End, Choice::Card)
}

/// The computer's choice wherever it is to move.
pub fn choose(table: &Table) -> Choice {
    use super::rules::Phase;
    let hand = table.hand(Side::Computer);
    match table.phase {
        Phase::Lead(Side::Computer) => lead(hand),
        Phase::Answer(Side::Computer) => answer(hand, table.value),
        Phase::Decide(Side::Computer) => decide(table),
        _ => panic!("the computer is not to move"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hand(cards: &[u8]) -> Hand {
        Hand::from_cards(cards)
    }

    #[test]
    fn leads_a_valuable_card_with_three_potential_cuts() {
        assert_eq!(lead(&hand(&[10, 10, 7, 9])), Choice::Card(10));
        assert_eq!(lead(&hand(&[14, 7, 7, 9])), Choice::Card(14));
        assert_eq!(lead(&hand(&[14, 14, 14, 9])), Choice::Card(14));
        // Both reach 3: 14 first.
        assert_eq!(lead(&hand(&[10, 14, 7, 7])), Choice::Card(14));
        // 10 10 14 7: 10 has 3, 14 has 2.
        assert_eq!(lead(&hand(&[10, 10, 14, 7])), Choice::Card(10));
    }

    #[test]
    fn leads_a_seven_with_three_sevens() {
        assert_eq!(lead(&hand(&[7, 7, 7, 9])), Choice::Card(7));
        // 7 7 7 10: the 10 has 4 potential cuts, so the 10 goes first.
        assert_eq!(lead(&hand(&[7, 7, 7, 10])), Choice::Card(10));
    }

    #[test]
    fn otherwise_leads_something_worthless() {
        assert_eq!(lead(&hand(&[8, 9, 10, 7])), Choice::Uniform(hand(&[8, 9])));
        assert_eq!(lead(&hand(&[10, 14, 7])), Choice::Uniform(hand(&[10, 14])));
        assert_eq!(lead(&hand(&[7, 7])), Choice::Card(7));
        let c = lead(&hand(&[8, 8, 9, 10]));
        assert_eq!(c.probability(8), 2.0 / 3.0);
        assert_eq!(c.probability(10), 0.0);
    }

    #[test]
    fn answers_a_valuable_card() {
        // Two potential cuts: cut, with the value first.
        assert_eq!(answer(&hand(&[10, 7, 9, 8]), 10), Choice::Card(10));
        assert_eq!(answer(&hand(&[7, 7, 9, 8]), 10), Choice::Card(7));
        // Fewer: throw something worthless, else the lowest card.
        assert_eq!(
            answer(&hand(&[7, 9, 8, 14]), 10),
            Choice::Uniform(hand(&[9, 8]))
        );
        assert_eq!(answer(&hand(&[14, 7]), 10), Choice::Card(7));
        assert_eq!(answer(&hand(&[14, 14]), 10), Choice::Card(14));
    }

    #[test]
    fn answers_a_worthless_card_or_a_seven() {
        assert_eq!(answer(&hand(&[9, 7, 12]), 9), Choice::Card(9));
        assert_eq!(answer(&hand(&[8, 7, 12]), 9), Choice::Card(7));
        assert_eq!(
            answer(&hand(&[8, 12, 10]), 9),
            Choice::Uniform(hand(&[8, 12]))
        );
        assert_eq!(answer(&hand(&[10, 14]), 9), Choice::Card(10));
        assert_eq!(answer(&hand(&[7, 10]), 7), Choice::Card(7));
        assert_eq!(answer(&hand(&[8, 10]), 7), Choice::Uniform(hand(&[8])));
    }

    #[test]
    fn continues_only_for_points_with_a_cutting_card() {
        let deck = super::super::rules::parse_deck(
            "10 8 9 12  10 7 11 13  7 7 7 8 8 8 9 9 9 10 10 11 11 11 12 12 12 13 13 13 14 14 14 14",
        )
        .unwrap();
        let mut t = Table::deal(&deck);
        // The computer (10 7 11 13) leads 10; the player cuts with 10.
        t.apply(Side::Computer, super::super::rules::Action::Card(10), &deck);
        t.apply(Side::Player, super::super::rules::Action::Card(10), &deck);
        // Points are in the trick and it holds a 7: continue with it.
        assert_eq!(decide(&t), Choice::Card(7));

        // Without points in the trick, it ends.
        let mut t = Table::deal(&deck);
        t.apply(Side::Computer, super::super::rules::Action::Card(11), &deck);
        t.apply(Side::Player, super::super::rules::Action::Card(12), &deck);
        assert_eq!(decide(&t), Choice::End);
    }

    #[test]
    fn choices_pick_what_they_allow() {
        let mut rng = SplitMix64::new(1);
        let c = Choice::Uniform(hand(&[8, 9]));
        for _ in 0..20 {
            assert!(matches!(c.pick(&mut rng), Some(8 | 9)));
        }
        assert_eq!(Choice::End.pick(&mut rng), None);
    }
}
