//! Septica's rules as plain functions over a small, copyable state, shared
//! by the referee (`referee septica`) and the reference players (which
//! search it).
//!
//! Cards are values 7..=14, four of each; suits do not exist. A trick: the
//! leader plays any card, whose value is the trick's value; a card *cuts* if
//! it is a 7 or has that value. The responder answers each leader card with
//! one card. After each answer the leader ends the trick, or continues with
//! another card — only when the answer cut, and only with a cutting card.
//! Whoever played the last cutting card (the leader, if no card cut) holds
//! the trick, wins its cards and leads next. Then both draw, one card at a
//! time, the winner first, until both hold four or the deck is empty. The
//! match ends when both hands are empty; 10s and 14s are worth a point each.
//! See `docs/septica.md`.

use std::fmt;

/// The lowest and highest card values.
pub const LOW: u8 = 7;
pub const HIGH: u8 = 14;
/// Cards in a full hand.
pub const HAND: usize = 4;
/// Cards in the deck.
pub const DECK: usize = 32;

/// Whether a card is worth a point (10 or 14).
pub fn valuable(card: u8) -> bool {
    card == 10 || card == 14
}

/// Whether a card is worthless (8, 9, 11, 12, 13). 7s are neither: they
/// are worth nothing but cut everything.
pub fn worthless(card: u8) -> bool {
    !valuable(card) && card != 7
}

/// Whether `card` cuts a trick of value `value`.
pub fn cuts(card: u8, value: u8) -> bool {
    card == 7 || card == value
}

/// The two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Computer,
    Player,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::Computer => Side::Player,
            Side::Player => Side::Computer,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Computer => "computer",
            Side::Player => "player",
        })
    }
}

/// A multiset of cards: how many of each value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hand([u8; 8]);

impl Hand {
    pub fn from_cards(cards: &[u8]) -> Hand {
        let mut hand = Hand::default();
        for &c in cards {
            hand.add(c);
        }
        hand
    }

    /// All 32 cards.
    pub fn full_deck() -> Hand {
        Hand([4; 8])
    }

    pub fn count(&self, card: u8) -> u8 {
        self.0[usize::from(card - LOW)]
    }

    pub fn has(&self, card: u8) -> bool {
        (LOW..=HIGH).contains(&card) && self.count(card) > 0
    }

    pub fn add(&mut self, card: u8) {
        self.0[usize::from(card - LOW)] += 1;
    }

    /// Removes one `card`; false if there is none.
    pub fn remove(&mut self, card: u8) -> bool {
        if !self.has(card) {
            return false;
        }
        self.0[usize::from(card - LOW)] -= 1;
        true
    }

    pub fn len(&self) -> usize {
        self.0.iter().map(|&n| usize::from(n)).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0 == [0; 8]
    }

    /// The distinct values held, lowest first.
    pub fn values(&self) -> impl Iterator<Item = u8> + '_ {
        (LOW..=HIGH).filter(|&v| self.count(v) > 0)
    }

    /// Every card, lowest first, with repeats.
    pub fn cards(&self) -> Vec<u8> {
        (LOW..=HIGH)
            .flat_map(|v| std::iter::repeat_n(v, usize::from(self.count(v))))
            .collect()
    }

    /// The cards of this hand that satisfy `keep`.
    pub fn filter(&self, keep: impl Fn(u8) -> bool) -> Hand {
        let mut out = *self;
        for v in LOW..=HIGH {
            if !keep(v) {
                out.0[usize::from(v - LOW)] = 0;
            }
        }
        out
    }

    pub fn lowest(&self) -> Option<u8> {
        self.values().next()
    }

    /// The multiset difference `self - other` (saturating).
    pub fn minus(&self, other: &Hand) -> Hand {
        let mut out = *self;
        for i in 0..8 {
            out.0[i] = out.0[i].saturating_sub(other.0[i]);
        }
        out
    }

    pub fn plus(&self, other: &Hand) -> Hand {
        let mut out = *self;
        for i in 0..8 {
            out.0[i] += other.0[i];
        }
        out
    }

    /// Whether every card of `self` is in `other`.
    pub fn within(&self, other: &Hand) -> bool {
        (0..8).all(|i| self.0[i] <= other.0[i])
    }

    /// Points in these cards.
    pub fn points(&self) -> u8 {
        self.count(10) + self.count(14)
    }
}

impl fmt::Display for Hand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cards: Vec<String> = self.cards().iter().map(u8::to_string).collect();
        f.write_str(&cards.join(" "))
    }
}

/// Whose move it is, and what kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// `side` starts a trick with any card.
    Lead(Side),
    /// `side` answers the leader's last card with any card.
    Answer(Side),
    /// The leader `side` continues with a cutting card (allowed only when
    /// the answer cut) or ends the trick.
    Decide(Side),
    /// Both hands are empty.
    Over,
}

/// What a side did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Card(u8),
    /// End the trick (the leader's `0`).
    End,
}

/// Why an action is not allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Illegal {
    #[error("{0} is not in the hand")]
    NotInHand(u8),
    #[error("only the leader can end a trick, and only after the answer")]
    EndNotAllowed,
    #[error("the trick can only be continued after the answer cut")]
    NoCutToAnswer,
    #[error("{card} does not cut a trick of {value} (only {value} or 7 do)")]
    DoesNotCut { card: u8, value: u8 },
    #[error("it is not this side's turn")]
    NotYourTurn,
}

/// The whole table, without the deck's order (kept by the caller, so a
/// search can try different ones). Small and `Copy`, for searching.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Table {
    pub hands: [Hand; 2],
    /// Points collected so far.
    pub points: [u8; 2],
    /// Cards already drawn from the deck (the deck's next card is
    /// `deck[drawn]`).
    pub drawn: u8,
    pub phase: Phase,
    pub leader: Side,
    /// The current trick: its value, the points in it, who holds it, whether
    /// the last answer cut, and how many cards are in it.
    pub value: u8,
    pub trick_points: u8,
    pub holder: Side,
    pub answer_cut: bool,
    pub trick_cards: u8,
}

/// What ending a trick did, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrickEnd {
    pub winner: Side,
    pub points: u8,
    /// The cards each side drew (computer, player).
    pub drawn: [Vec<u8>; 2],
}

impl Table {
    /// A new match from a deck (top first): the player is dealt the first
    /// four cards, the computer the next four; the computer leads.
    pub fn deal(deck: &[u8]) -> Table {
        debug_assert!(deck.len() == DECK);
        Table {
            hands: [Hand::from_cards(&deck[4..8]), Hand::from_cards(&deck[0..4])],
            points: [0, 0],
            drawn: 8,
            phase: Phase::Lead(Side::Computer),
            leader: Side::Computer,
            value: 0,
            trick_points: 0,
            holder: Side::Computer,
            answer_cut: false,
            trick_cards: 0,
        }
    }

    pub fn hand(&self, side: Side) -> &Hand {
        &self.hands[side.index()]
    }

    pub fn points_of(&self, side: Side) -> u8 {
        self.points[side.index()]
    }

    /// Whose turn it is (`None` when the match is over).
    pub fn to_move(&self) -> Option<Side> {
        match self.phase {
            Phase::Lead(s) | Phase::Answer(s) | Phase::Decide(s) => Some(s),
            Phase::Over => None,
        }
    }

    /// Whether the leader may continue the trick with `card` now.
    pub fn may_continue_with(&self, card: u8) -> bool {
        self.answer_cut && cuts(card, self.value) && self.hand(self.leader).has(card)
    }

    /// Checks `action` by `side` against the rules.
    pub fn check(&self, side: Side, action: Action) -> Result<(), Illegal> {
        if self.to_move() != Some(side) {
            return Err(Illegal::NotYourTurn);
        }
        match (self.phase, action) {
            (Phase::Lead(_) | Phase::Answer(_), Action::End) => Err(Illegal::EndNotAllowed),
            (_, Action::Card(c)) if !self.hand(side).has(c) => Err(Illegal::NotInHand(c)),
            (Phase::Decide(_), Action::Card(_)) if !self.answer_cut => Err(Illegal::NoCutToAnswer),
            (Phase::Decide(_), Action::Card(c)) if !cuts(c, self.value) => {
                Err(Illegal::DoesNotCut {
                    card: c,
                    value: self.value,
                })
            }
            _ => Ok(()),
        }
    }

    /// Applies a checked action. Ending a trick collects it and draws from
    /// `deck`; the result says what happened then.
    pub fn apply(&mut self, side: Side, action: Action, deck: &[u8]) -> Option<TrickEnd> {
        debug_assert_eq!(self.check(side, action), Ok(()));
        match (self.phase, action) {
            (Phase::Lead(_), Action::Card(c)) => {
                self.hands[side.index()].remove(c);
                self.leader = side;
                self.holder = side;
                self.value = c;
                self.trick_points = u8::from(valuable(c));
                self.trick_cards = 1;
                self.answer_cut = false;
                self.phase = Phase::Answer(side.other());
                None
            }
            (Phase::Answer(_), Action::Card(c)) => {
                self.hands[side.index()].remove(c);
                self.trick_points += u8::from(valuable(c));
                self.trick_cards += 1;
                self.answer_cut = cuts(c, self.value);
                if self.answer_cut {
                    self.holder = side;
                }
                self.phase = Phase::Decide(side.other());
                None
            }
            (Phase::Decide(_), Action::Card(c)) => {
                self.hands[side.index()].remove(c);
                self.trick_points += u8::from(valuable(c));
                self.trick_cards += 1;
                self.holder = side;
                self.answer_cut = false;
                self.phase = Phase::Answer(side.other());
                None
            }
            (Phase::Decide(_), Action::End) => Some(self.end_trick(deck)),
            _ => unreachable!("checked above"),
        }
    }

    /// The holder takes the trick; both draw, the winner first, alternately,
    /// until both hold four or the deck is empty.
    fn end_trick(&mut self, deck: &[u8]) -> TrickEnd {
        let winner = self.holder;
        self.points[winner.index()] += self.trick_points;
        let mut drawn: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
        let mut turn = winner;
        while usize::from(self.drawn) < deck.len()
            && (self.hands[0].len() < HAND || self.hands[1].len() < HAND)
        {
            let card = deck[usize::from(self.drawn)];
            self.drawn += 1;
            self.hands[turn.index()].add(card);
            drawn[turn.index()].push(card);
            turn = turn.other();
        }
        let end = TrickEnd {
            winner,
            points: self.trick_points,
            drawn,
        };
        self.trick_points = 0;
        self.trick_cards = 0;
        self.leader = winner;
        self.phase = if self.hands[0].is_empty() && self.hands[1].is_empty() {
            Phase::Over
        } else {
            Phase::Lead(winner)
        };
        end
    }

    /// The player wins a match when its points are at least the computer's.
    pub fn player_wins(&self) -> bool {
        self.points_of(Side::Player) >= self.points_of(Side::Computer)
    }

    /// Cards left in the deck.
    pub fn deck_left(&self) -> usize {
        DECK - usize::from(self.drawn)
    }
}

/// Parses a deck: 32 whitespace-separated values, four of each of 7..=14.
pub fn parse_deck(text: &str) -> Result<Vec<u8>, String> {
    let mut deck = Vec::with_capacity(DECK);
    for (i, word) in text.split_ascii_whitespace().enumerate() {
        match word.parse::<u8>() {
            Ok(v) if (LOW..=HIGH).contains(&v) => deck.push(v),
            _ => {
                return Err(format!(
                    "card {}: {word:?} is not a card value from 7 to 14",
                    i + 1
                ));
            }
        }
    }
    if deck.len() != DECK {
        return Err(format!("a deck has 32 cards, this one has {}", deck.len()));
    }
    let counts = Hand::from_cards(&deck);
    if let Some(v) = (LOW..=HIGH).find(|&v| counts.count(v) != 4) {
        return Err(format!(
            "a deck has four of each value; this one has {} of {v}",
            counts.count(v)
        ));
    }
    Ok(deck)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deck(text: &str) -> Vec<u8> {
        parse_deck(text).unwrap()
    }

    /// The sample's opening: player 14 9 7 10; computer 7 7 7 8.
    const SAMPLE: &str =
        "14 9 7 10  7 7 7 8  10 11 8 8 9 9 9 10 10 11 11 11 12 12 12 12 13 13 13 13 14 14 14 8";

    #[test]
    fn dealing() {
        let t = Table::deal(&deck(SAMPLE));
        assert_eq!(t.hand(Side::Player).to_string(), "7 9 10 14");
        assert_eq!(t.hand(Side::Computer).to_string(), "7 7 7 8");
        assert_eq!(t.phase, Phase::Lead(Side::Computer));
        assert_eq!(t.deck_left(), 24);
    }

    #[test]
    fn a_cut_takes_the_trick_and_the_winner_draws_first() {
        let d = deck(SAMPLE);
        let mut t = Table::deal(&d);
        t.apply(Side::Computer, Action::Card(7), &d);
        assert_eq!(t.phase, Phase::Answer(Side::Player));
        t.apply(Side::Player, Action::Card(7), &d);
        assert_eq!(t.holder, Side::Player);
        assert_eq!(t.phase, Phase::Decide(Side::Computer));
        let end = t.apply(Side::Computer, Action::End, &d).unwrap();
        assert_eq!(end.winner, Side::Player);
        // The player draws first: deck[8] = 10, then the computer deck[9] = 11.
        assert_eq!(end.drawn, [vec![11], vec![10]]);
        assert_eq!(t.phase, Phase::Lead(Side::Player));
    }

    #[test]
    fn continuing_needs_a_cut_answer_and_a_cutting_card() {
        let d = deck(SAMPLE);
        let mut t = Table::deal(&d);
        t.apply(Side::Computer, Action::Card(8), &d);
        // The player answers 9: no cut. The computer may only end.
        t.apply(Side::Player, Action::Card(9), &d);
        assert_eq!(
            t.check(Side::Computer, Action::Card(7)),
            Err(Illegal::NoCutToAnswer)
        );
        assert_eq!(t.check(Side::Computer, Action::End), Ok(()));
        let end = t.apply(Side::Computer, Action::End, &d).unwrap();
        assert_eq!(end.winner, Side::Computer);

        // Computer leads 7 (value 7); the player cuts with its 7; the
        // computer may continue with a 7, not with an 8.
        let mut t = Table::deal(&d);
        t.apply(Side::Computer, Action::Card(7), &d);
        t.apply(Side::Player, Action::Card(7), &d);
        assert_eq!(
            t.check(Side::Computer, Action::Card(8)),
            Err(Illegal::DoesNotCut { card: 8, value: 7 })
        );
        assert_eq!(t.check(Side::Computer, Action::Card(7)), Ok(()));
        t.apply(Side::Computer, Action::Card(7), &d);
        assert_eq!(t.holder, Side::Computer);
        assert_eq!(t.phase, Phase::Answer(Side::Player));
    }

    #[test]
    fn only_the_leader_ends_and_only_after_an_answer() {
        let d = deck(SAMPLE);
        let mut t = Table::deal(&d);
        assert_eq!(
            t.check(Side::Computer, Action::End),
            Err(Illegal::EndNotAllowed)
        );
        assert_eq!(
            t.check(Side::Player, Action::Card(7)),
            Err(Illegal::NotYourTurn)
        );
        t.apply(Side::Computer, Action::Card(8), &d);
        assert_eq!(
            t.check(Side::Player, Action::End),
            Err(Illegal::EndNotAllowed)
        );
        assert_eq!(
            t.check(Side::Player, Action::Card(12)),
            Err(Illegal::NotInHand(12))
        );
    }

    #[test]
    fn a_whole_match_ends_with_empty_hands_and_eight_points() {
        let d = deck(SAMPLE);
        let mut t = Table::deal(&d);
        // Both sides always play their lowest card and end when they can.
        while let Some(side) = t.to_move() {
            let action = match t.phase {
                Phase::Decide(_) => Action::End,
                _ => Action::Card(t.hand(side).lowest().unwrap()),
            };
            t.apply(side, action, &d);
            if matches!(t.phase, Phase::Lead(_) | Phase::Over) {
                assert_eq!(t.hands[0].len(), t.hands[1].len());
            }
        }
        assert_eq!(t.points[0] + t.points[1], 8);
        assert_eq!(t.deck_left(), 0);
    }

    #[test]
    fn decks_are_checked() {
        assert!(parse_deck("7 7").unwrap_err().contains("this one has 2"));
        assert!(parse_deck("6").unwrap_err().contains("card 1"));
        let mut text = SAMPLE.replace("14 14 14 8", "14 14 14 14");
        assert!(parse_deck(&text).unwrap_err().contains("has 3 of 8"));
        text = SAMPLE.to_string();
        assert_eq!(parse_deck(&text).unwrap().len(), 32);
    }
}
