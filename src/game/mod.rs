//! The one interface between a game and everything that runs many games:
//! tournaments, ci runs, merge and standings use [`Game`] and never name a
//! game. [`load`] is the only place that turns a game's name (or an
//! external game's file) into one.
//!
//! Why the interface is this small: game `i` of a run with seed `s` must be
//! fully decided by `s` and `i` (its deal, deck, start cell), so that games
//! can run in any order, on any machine, be resumed and be merged; and a
//! one-player game is played by every entrant on the same setup, so that
//! entrants can be compared game by game. Everything else (how to talk to
//! the bots, what a move is) stays inside the game.

mod builtin;
pub mod record;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::bot::clock::TimeControl;
use crate::bot::{BotLimits, BotSpec};
use crate::games::external::JudgeError;
pub use crate::games::external::Round;
use crate::outcome::Disqualified;
use crate::units::TomlDuration;
pub use builtin::{command_line_options, load};
pub use record::{GameRecord, Score, SeatResult};

/// A tournament or ci file's `[limits]`: the options of the game's
/// subcommand, by the same names. Each game takes its own keys
/// ([`Game::limit_keys`]).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub timeout: Option<TomlDuration>,
    pub startup: Option<TomlDuration>,
    pub time_control: Option<TimeControl>,
    pub time_margin: Option<TomlDuration>,
    pub grace: Option<TomlDuration>,
    pub prep: Option<TomlDuration>,
    pub starve: Option<TomlDuration>,
    pub max_rounds: Option<u64>,
    pub start: Option<[String; 2]>,
    pub arrays: Option<PathBuf>,
    pub seats: Option<usize>,
    pub make: Option<String>,
    pub build_timeout: Option<TomlDuration>,
    pub max_line: Option<usize>,
}

/// The built-in games.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    Evensteven,
    Chomp,
    Septica,
    Acesup,
}

impl GameKind {
    pub const ALL: [GameKind; 4] = [
        GameKind::Evensteven,
        GameKind::Chomp,
        GameKind::Septica,
        GameKind::Acesup,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GameKind::Evensteven => "evensteven",
            GameKind::Chomp => "chomp",
            GameKind::Septica => "septica",
            GameKind::Acesup => "acesup",
        }
    }
}

/// A game as tournament and ci files name it: a built-in game's name, or
/// the path of an external game's `game.toml` (relative to the file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum GameRef {
    Builtin(GameKind),
    External(PathBuf),
}

impl TryFrom<String> for GameRef {
    type Error = String;

    fn try_from(text: String) -> Result<GameRef, String> {
        if let Some(kind) = GameKind::ALL.into_iter().find(|k| k.name() == text) {
            return Ok(GameRef::Builtin(kind));
        }
        if text.ends_with(".toml") {
            return Ok(GameRef::External(PathBuf::from(text)));
        }
        if crate::games::shipped::is_name(&text) {
            return crate::games::shipped::game_file(&text).map(GameRef::External);
        }
        Err(format!(
            "unknown game {text:?}: expected evensteven, chomp, septica, acesup, {}, or the path \
             of an external game's .toml file",
            crate::games::shipped::names()
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

impl From<GameRef> for String {
    fn from(game: GameRef) -> String {
        game.name()
    }
}

impl GameRef {
    pub fn name(&self) -> String {
        match self {
            GameRef::Builtin(kind) => kind.name().to_owned(),
            GameRef::External(path) => path.display().to_string(),
        }
    }

    pub fn is(&self, kind: GameKind) -> bool {
        *self == GameRef::Builtin(kind)
    }
}

/// Who plays a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seating {
    /// One player against the game: every entrant plays every game, on the
    /// same setup, and entrants are compared game by game (win rates).
    Solo,
    /// `seats` entrants play each other; seats rotate from game to game,
    /// and the scores rank them (ratings).
    Table { seats: usize },
}

impl Seating {
    /// How many bots play a game at once (a solo game's entrants play one
    /// after the other).
    pub fn bots_at_once(self) -> usize {
        match self {
            Seating::Solo => 1,
            Seating::Table { seats } => seats,
        }
    }
}

/// An entrant in a seat.
#[derive(Clone, Debug)]
pub struct Seat {
    /// Which entrant (its position in the file, from 0).
    pub entrant: usize,
    pub name: String,
    pub program: Result<BotSpec, Disqualified>,
    /// The entrant's `options`, for an external game's judge (an empty
    /// object when it has none).
    pub options: Value,
    /// The entrant's own clock, over the game's (an external game's).
    pub time_control: Option<TimeControl>,
}

/// Which game of a run is played. Games come in rounds that share an
/// opening while the seats rotate (`docs/tournaments.md`, "Seats"), so a
/// game has three numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deal {
    /// The game's number as a judge's `start` gives it: the game's own
    /// index for games between players, the shared setup's for games
    /// played alone (every entrant on the same deal).
    pub index: u64,
    /// The setup a built-in game deals from (its deal, deck, array):
    /// shared by every game of a round.
    pub setup: u64,
    /// The game's round and its place in it.
    pub round: Round,
}

/// A game to play: which one ([`Deal`]), the run's seed, its seats and
/// the bots' limits.
#[derive(Clone, Copy)]
pub struct Sitting<'a> {
    pub deal: Deal,
    pub seed: u64,
    pub seats: &'a [Seat],
    pub limits: BotLimits,
}

impl<'a> Sitting<'a> {
    pub fn new(deal: Deal, seed: u64, seats: &'a [Seat], limits: BotLimits) -> Sitting<'a> {
        Sitting {
            deal,
            seed,
            seats,
            limits,
        }
    }
}

/// One game's outcome: the game's own fields (its setup and how it
/// went), one result per seat in seat order, and an external judge's
/// failure. Each result holds its verdict, `error`, move times, and `won`
/// (solo games) or `score` (table games).
pub struct Played {
    pub setup: Map<String, Value>,
    pub results: Vec<SeatResult>,
    pub judge_error: Option<JudgeError>,
}

impl Played {
    /// A one-player game's: its setup and its one result.
    pub fn solo(setup: Map<String, Value>, result: SeatResult) -> Played {
        Played {
            setup,
            results: vec![result],
            judge_error: None,
        }
    }
}

pub type PlayFuture<'a> = Pin<Box<dyn Future<Output = Played> + 'a>>;
pub type EndFuture<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// A game the harness can run many of.
pub trait Game: Send + Sync {
    /// The name records carry in `game`.
    fn name(&self) -> String;

    fn seating(&self) -> Seating;

    /// What decides the games besides the seed and the entrants (the
    /// arrays, the judge's file), for run fingerprints.
    fn fingerprint(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether a game-specific ci expectation applies (`mean_score`,
    /// `no_unnecessary_loss`).
    fn supports(&self, _expectation: &str) -> bool {
        false
    }

    /// The `[limits]` keys of its own that it takes (besides those every
    /// game takes: `grace`, `max_line`, `make`, `build_timeout`).
    fn limit_keys(&self) -> &'static [&'static str];

    /// What is wrong with its setup for `entrants` entrants, all of it.
    fn problems(&self, _entrants: usize) -> Vec<String> {
        Vec::new()
    }

    /// What to warn of before a run of `games` games, `at_once` at a
    /// time, starts (Chomp: the statement's limits over a long run).
    fn run_warning(&self, _games: u64, _at_once: usize) -> Option<String> {
        None
    }

    /// Its own start-up allowance, when it has one (an external game's
    /// file); a tournament or ci file's `startup` goes over it.
    fn startup(&self) -> Option<Duration> {
        None
    }

    /// Plays the game of `sitting`. Solo games get one seat,
    /// whose program is ready (disqualified entrants are recorded by the
    /// caller); table games get every seat, disqualified ones included.
    fn play<'a>(&'a self, sitting: Sitting<'a>) -> PlayFuture<'a>;

    /// Ends what a game thread kept between its games (an external
    /// game's judge and players), once the thread has played its last.
    fn end_of_thread(&self) -> EndFuture<'_> {
        Box::pin(async {})
    }
}
