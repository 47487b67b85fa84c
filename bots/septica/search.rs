//! Exact expectimax over one guess of the hidden cards: the computer's hand
//! and the deck's order are fixed, the computer's random choices are chance
//! nodes with their true probabilities, and the player's choices are
//! maximized. The value of a position is the player's chance to win.

use std::collections::HashMap;

use referee::games::septica::computer::{self, Choice};
use referee::games::septica::rules::{Action, Phase, Side, Table, cuts};

/// Points a side needs to have the match decided: the player wins with 4
/// of the 8 (a tie goes to the player), the computer needs 5.
const PLAYER_SAFE: u8 = 4;
const COMPUTER_SAFE: u8 = 5;

pub struct Search<'a> {
    deck: &'a [u8],
    /// Tricks to look ahead beyond the current one before estimating;
    /// `None` searches to the end of the match.
    horizon: Option<u32>,
    memo: HashMap<(Table, u32), f64>,
}

impl<'a> Search<'a> {
    pub fn new(deck: &'a [u8], horizon: Option<u32>) -> Search<'a> {
        Search {
            deck,
            horizon,
            memo: HashMap::new(),
        }
    }

    /// `tricks`: tricks completed since the search started.
    fn value_at(&mut self, table: &Table, tricks: u32) -> f64 {
        if table.points_of(Side::Player) >= PLAYER_SAFE {
            return 1.0;
        }
        if table.points_of(Side::Computer) >= COMPUTER_SAFE {
            return 0.0;
        }
        let Some(side) = table.to_move() else {
            return f64::from(u8::from(table.player_wins()));
        };
        if matches!(table.phase, Phase::Lead(_)) && self.horizon.is_some_and(|h| tricks > h) {
            return estimate(table);
        }
        if let Some(&v) = self.memo.get(&(*table, tricks)) {
            return v;
        }
        let v = match side {
            Side::Player => player_actions(table)
                .into_iter()
                .map(|a| self.after_at(table, Side::Player, a, tricks))
                .fold(0.0, f64::max),
            Side::Computer => match computer::choose(table) {
                Choice::Card(c) => self.after_at(table, Side::Computer, Action::Card(c), tricks),
                Choice::End => self.after_at(table, Side::Computer, Action::End, tricks),
                Choice::Uniform(among) => {
                    let n = among.len() as f64;
                    among
                        .values()
                        .map(|c| {
                            f64::from(among.count(c)) / n
                                * self.after_at(table, Side::Computer, Action::Card(c), tricks)
                        })
                        .sum()
                }
            },
        };
        self.memo.insert((*table, tricks), v);
        v
    }

    /// The value after `side` does `action`.
    pub fn after(&mut self, table: &Table, side: Side, action: Action) -> f64 {
        self.after_at(table, side, action, 0)
    }

    fn after_at(&mut self, table: &Table, side: Side, action: Action, tricks: u32) -> f64 {
        let mut next = *table;
        let ended = next.apply(side, action, self.deck).is_some();
        self.value_at(&next, tricks + u32::from(ended))
    }
}

/// A quick estimate of the player's chance at a trick boundary: each point
/// still out goes to the player with a probability that grows with its
/// share of the cards that win tricks (7s) and of the points in hand.
pub fn estimate(table: &Table) -> f64 {
    let player = table.hand(Side::Player);
    let computer = table.hand(Side::Computer);
    let strength = |h: &referee::games::septica::rules::Hand| {
        2.0 * f64::from(h.count(7)) + f64::from(h.points())
    };
    let (sp, sc) = (strength(player), strength(computer));
    let q = (0.5 + 0.08 * (sp - sc)).clamp(0.15, 0.85);
    let have = table.points_of(Side::Player);
    let out = 8 - have - table.points_of(Side::Computer);
    let need = PLAYER_SAFE.saturating_sub(have);
    // P(Binomial(out, q) >= need).
    let mut p = 0.0;
    let mut term = (1.0 - q).powi(i32::from(out));
    for k in 0..=out {
        if k >= need {
            p += term;
        }
        term *= f64::from(out - k) / f64::from(k + 1) * q / (1.0 - q);
    }
    p
}

/// Everything the player may do now (each distinct card once).
pub fn player_actions(table: &Table) -> Vec<Action> {
    let hand = table.hand(Side::Player);
    match table.phase {
        Phase::Lead(_) | Phase::Answer(_) => hand.values().map(Action::Card).collect(),
        Phase::Decide(_) => {
            let mut actions = vec![Action::End];
            if table.answer_cut {
                actions.extend(
                    hand.values()
                        .filter(|&c| cuts(c, table.value))
                        .map(Action::Card),
                );
            }
            actions
        }
        Phase::Over => vec![],
    }
}
