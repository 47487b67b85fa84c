//! `septica-editorial`: the statement's own heuristic, as a baseline.
//!
//! - Leading: with at least 3 potential cuts for a 10 or a 14 (cards of that
//!   value plus 7s), lead that valuable card; with three 7s, a 7. Otherwise a
//!   random card that is not valuable (not 7, 10 or 14); with none, a 7;
//!   else the lowest card.
//! - Answering a 10 or 14: with at least 2 potential cuts, cut (with that
//!   value, else a 7); otherwise throw a random worthless card (else the
//!   lowest). Answering anything else: cut with the same value or a 7 if
//!   possible, else throw a random worthless card (else the lowest).
//! - After the computer's answer cut, continue with a cutting card when the
//!   trick holds points; otherwise end the trick.
//!
//! Its random choices come from a seed made from each match's hand, so it
//! plays a match the same way every time. The statement says this wins more than 70%; `docs/septica.md` has
//! what it really wins.

use std::process::ExitCode;

use referee::games::septica::computer::{self, Choice};
use referee::games::septica::rules::{Action, Hand, worthless};
use referee::games::septica::view::{self, Event, Player, Turn, View};
use referee::rng::SplitMix64;

struct Editorial {
    rng: SplitMix64,
}

impl Editorial {
    fn random_of(&mut self, among: Hand) -> Option<u8> {
        let cards = among.cards();
        (!cards.is_empty()).then(|| cards[self.rng.index(cards.len())])
    }

    fn lead(&mut self, hand: &Hand) -> u8 {
        for value in [14, 10] {
            if hand.has(value) && hand.count(value) + hand.count(7) >= 3 {
                return value;
            }
        }
        if hand.count(7) >= 3 {
            return 7;
        }
        self.random_of(hand.filter(worthless))
            .or_else(|| hand.has(7).then_some(7))
            .or_else(|| hand.lowest())
            .expect("leading with cards in hand")
    }

    /// Answering and deciding are the computer's own rules (the editorial
    /// plays them from the other side); only leading differs.
    fn answer(&mut self, hand: &Hand, value: u8) -> u8 {
        computer::answer(hand, value)
            .pick(&mut self.rng)
            .expect("answering with cards in hand")
    }

    fn decide(&self, view: &View) -> Action {
        match computer::decide_with(&view.hand, view.value, view.answer_cut, view.trick_points) {
            Choice::Card(c) => Action::Card(c),
            _ => Action::End,
        }
    }
}

impl Player for Editorial {
    /// A new generator for every match, from the dealt hand, so a match
    /// replayed from its deck is played the same way.
    fn observe(&mut self, view: &View, event: Event) {
        if event == Event::Dealt {
            let seed = view
                .hand
                .cards()
                .iter()
                .fold(70, |h, &c| h * 31 + u64::from(c));
            self.rng = SplitMix64::new(seed);
        }
    }

    fn act(&mut self, view: &View) -> Action {
        match view.turn {
            Turn::PlayerLeads => Action::Card(self.lead(&view.hand)),
            Turn::PlayerAnswers => Action::Card(self.answer(&view.hand, view.value)),
            _ => self.decide(view),
        }
    }
}

fn main() -> ExitCode {
    let mut player = Editorial {
        rng: SplitMix64::new(70),
    };
    match view::run(&mut player) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("septica-editorial: {e}");
            ExitCode::FAILURE
        }
    }
}
