//! `septica`: the strong reference Septica player.
//!
//! The computer's policy is known; what the player does not see is the
//! computer's hand, the deck's order, and the computer's coin flips. So:
//!
//! 1. It keeps an exact probability for every hand the computer could hold
//!    (`belief.rs`), updated by Bayes' rule from each of the computer's
//!    moves (their probability under the policy) and from each draw
//!    (hypergeometric).
//! 2. To move, it draws many guesses of the hidden cards: a hand from that
//!    belief and a random order of the rest of the deck.
//! 3. For each guess it searches the rest of the match exactly
//!    (`search.rs`): its own moves maximized, the computer's policy played
//!    out with its real probabilities, the value being the chance to win.
//! 4. It plays the move with the best average over the guesses.
//!
//! It stops guessing after a time budget or a number of guesses, whichever
//! comes first; while many cards are left in the deck it searches only a
//! few tricks ahead and estimates the rest. Its own random numbers are
//! seeded per match from its hand, so with `--budget` large enough that
//! `--guesses` decides, it plays a match the same way every time.

mod belief;
mod search;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use belief::Belief;
use referee::games::septica::computer::{self, Choice};
use referee::games::septica::rules::{Action, DECK, HAND, Hand, Phase, Side, Table};
use referee::games::septica::view::{self, Event, Player, Turn, View};
use referee::rng::SplitMix64;
use search::{Search, player_actions};

/// How hard to think; each can be set on the command line
/// (`septica --budget 40ms --guesses 60 --horizon 2 --exact-from 4`).
#[derive(Clone, Copy, Debug)]
struct Settings {
    /// Time spent guessing per move.
    budget: Duration,
    /// Most guesses per move: more change little.
    guesses: usize,
    /// Tricks searched beyond the current one while the deck is large.
    horizon: u32,
    /// With this many deck cards left or fewer, search to the end.
    exact_from: u8,
}

/// At least this many guesses, whatever the time.
const MIN_GUESSES: usize = 8;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            budget: Duration::from_millis(40),
            guesses: 60,
            horizon: 2,
            exact_from: 4,
        }
    }
}

impl Settings {
    fn from_args(mut args: impl Iterator<Item = String>) -> Result<Settings, String> {
        let mut s = Settings::default();
        while let Some(flag) = args.next() {
            let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
            let bad = |_| format!("bad value {value:?} for {flag}");
            match flag.as_str() {
                "--budget" => s.budget = humantime::parse_duration(&value).map_err(|_| bad(()))?,
                "--guesses" => s.guesses = value.parse().map_err(|_| bad(()))?,
                "--horizon" => s.horizon = value.parse().map_err(|_| bad(()))?,
                "--exact-from" => s.exact_from = value.parse().map_err(|_| bad(()))?,
                _ => return Err(format!("unknown option {flag}")),
            }
        }
        Ok(s)
    }
}

struct Strong {
    settings: Settings,
    belief: Belief,
    /// Cards the player has not seen: the computer's hand and the deck.
    unseen: Hand,
    rng: SplitMix64,
}

impl Strong {
    /// What the computer would do at `view`'s point with hand `hand`.
    fn policy(view: &View, hand: &Hand) -> Choice {
        match view.turn {
            Turn::ComputerLeads => computer::lead(hand),
            Turn::ComputerAnswers => computer::answer(hand, view.value),
            _ => computer::decide_with(hand, view.value, view.answer_cut, view.trick_points),
        }
    }

    /// Starts again from what is certain when the model failed (it should
    /// not: the policy is the referee's own code).
    fn reset(&mut self, view: &View, must_hold: Option<u8>) {
        self.belief = Belief::uniform(&self.unseen, view.computer_cards());
        if let Some(card) = must_hold {
            self.belief.condition(|h| f64::from(u8::from(h.has(card))));
        }
    }

    /// The table as it may be: the computer holding `hand`.
    fn table(view: &View, hand: Hand) -> Table {
        Table {
            hands: [hand, view.hand],
            points: view.points,
            drawn: DECK as u8 - view.deck_left,
            phase: match view.turn {
                Turn::PlayerLeads => Phase::Lead(Side::Player),
                Turn::PlayerAnswers => Phase::Answer(Side::Player),
                _ => Phase::Decide(Side::Player),
            },
            leader: view.leader,
            value: view.value,
            trick_points: view.trick_points,
            holder: view.holder,
            answer_cut: view.answer_cut,
            trick_cards: 0,
        }
    }
}

impl Player for Strong {
    fn observe(&mut self, view: &View, event: Event) {
        match event {
            Event::Dealt => {
                self.unseen = view.unseen();
                self.belief = Belief::uniform(&self.unseen, HAND);
                // A generator per match, from its hand: with a fixed number
                // of guesses (no time budget) a match replays identically.
                let seed = view
                    .hand
                    .cards()
                    .iter()
                    .fold(90, |h, &c| h * 31 + u64::from(c));
                self.rng = SplitMix64::new(seed);
            }
            Event::ComputerPlayed(card) => {
                if !self
                    .belief
                    .condition(|h| Strong::policy(view, h).probability(card))
                {
                    self.reset(view, Some(card));
                }
                self.belief.played(card);
                self.unseen.remove(card);
            }
            Event::ComputerEnded => {
                let ended = |h: &Hand| f64::from(u8::from(Strong::policy(view, h) == Choice::End));
                if !self.belief.condition(ended) {
                    self.reset(view, None);
                }
            }
            Event::Drew { player_drew } => {
                self.belief.drew(&self.unseen, &player_drew);
                self.unseen = self.unseen.minus(&player_drew);
            }
        }
    }

    fn act(&mut self, view: &View) -> Action {
        let template = Strong::table(view, Hand::default());
        let actions = player_actions(&template);
        if actions.len() == 1 {
            return actions[0];
        }
        let started = Instant::now();
        let mut totals = vec![0.0; actions.len()];
        let mut deck = vec![7u8; DECK];
        let mut guesses = 0;
        let settings = self.settings;
        while guesses < settings.guesses
            && (guesses < MIN_GUESSES || started.elapsed() < settings.budget)
        {
            let hand = self.belief.sample(&mut self.rng);
            let mut rest = self.unseen.minus(&hand).cards();
            self.rng.shuffle(&mut rest);
            let from = DECK - rest.len();
            deck[from..].copy_from_slice(&rest);
            let table = Strong::table(view, hand);
            let horizon = (view.deck_left > settings.exact_from).then_some(settings.horizon);
            let mut search = Search::new(&deck, horizon);
            for (total, &action) in totals.iter_mut().zip(&actions) {
                *total += search.after(&table, Side::Player, action);
            }
            guesses += 1;
        }
        let best = (0..actions.len())
            .max_by(|&a, &b| totals[a].total_cmp(&totals[b]).then(b.cmp(&a)))
            .expect("at least two actions");
        actions[best]
    }
}

fn main() -> ExitCode {
    let settings = match Settings::from_args(std::env::args().skip(1)) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("septica: {e}");
            return ExitCode::from(64);
        }
    };
    let mut player = Strong {
        settings,
        belief: Belief::default(),
        unseen: Hand::default(),
        rng: SplitMix64::new(90),
    };
    match view::run(&mut player) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("septica: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use referee::games::septica::shuffled_deck;
    use referee::games::septica::view::simulate;

    fn strong(settings: Settings) -> Strong {
        Strong {
            settings,
            belief: Belief::default(),
            unseen: Hand::default(),
            rng: SplitMix64::new(1),
        }
    }

    #[test]
    fn the_belief_never_rules_out_the_truth() {
        let settings = Settings {
            guesses: 2,
            ..Settings::default()
        };
        let mut player = strong(settings);
        let mut checks = 0;
        for index in 0..150 {
            let deck = shuffled_deck(4, index);
            let mut rng = SplitMix64::new(index);
            simulate(&deck, &mut rng, &mut player, |table, p: &Strong| {
                let truth = table.hand(Side::Computer);
                assert!(
                    p.belief.probability(truth) > 0.0,
                    "match {index}: {truth} ruled out"
                );
                assert_eq!(p.unseen.minus(truth).len(), table.deck_left());
                checks += 1;
            });
        }
        assert!(checks > 1000);
    }

    /// For tuning: `cargo test --release --bin septica win_rate -- --ignored
    /// --nocapture`, with SEPTICA_ARGS="--guesses 30 ..." and
    /// SEPTICA_MATCHES=2000.
    #[test]
    #[ignore]
    fn win_rate() {
        let args = std::env::var("SEPTICA_ARGS").unwrap_or_default();
        let settings = Settings::from_args(args.split_whitespace().map(str::to_owned)).unwrap();
        let matches: u64 = std::env::var("SEPTICA_MATCHES").map_or(1000, |m| m.parse().unwrap());
        let mut player = strong(settings);
        let started = Instant::now();
        let wins = (0..matches)
            .filter(|&index| {
                let deck = shuffled_deck(12, index);
                let mut rng = SplitMix64::new(index ^ 0xdead);
                simulate(&deck, &mut rng, &mut player, |_, _: &Strong| {}).player_wins()
            })
            .count();
        eprintln!("{args}: {wins} of {matches} in {:?}", started.elapsed());
    }
}

#[cfg(test)]
mod ceiling {
    //! How well a player that sees every card would do: an upper bound for
    //! any real player against this computer.
    use super::*;
    use referee::games::septica::shuffled_deck;
    use referee::games::septica::view::simulate;
    use std::cell::RefCell;

    struct Clairvoyant {
        truth: RefCell<Option<(Table, Vec<u8>)>>,
    }

    impl Player for Clairvoyant {
        fn act(&mut self, _view: &View) -> Action {
            let (table, deck) = self.truth.borrow().clone().expect("set before each move");
            let mut search = Search::new(&deck, None);
            let actions = player_actions(&table);
            let values: Vec<f64> = actions
                .iter()
                .map(|&a| search.after(&table, Side::Player, a))
                .collect();
            let best = (0..actions.len())
                .max_by(|&a, &b| values[a].total_cmp(&values[b]))
                .unwrap();
            actions[best]
        }
    }

    #[test]
    #[ignore]
    fn clairvoyant_win_rate() {
        let matches: u64 = std::env::var("SEPTICA_MATCHES").map_or(100, |m| m.parse().unwrap());
        let mut player = Clairvoyant {
            truth: RefCell::new(None),
        };
        let mut wins = 0;
        for index in 0..matches {
            let deck = shuffled_deck(12, index);
            let mut rng = SplitMix64::new(index ^ 0xdead);
            let table = simulate(&deck, &mut rng, &mut player, |t, p: &Clairvoyant| {
                *p.truth.borrow_mut() = Some((*t, deck.clone()));
            });
            wins += u64::from(table.player_wins());
        }
        eprintln!("clairvoyant: {wins} of {matches}");
    }
}
