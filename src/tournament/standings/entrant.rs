//! One entrant's line: the figures each of its games adds to (games,
//! wins, failures by class, the slowest move, the most memory and CPU
//! time), what the standings fill in at the end, and their ranking.

use serde::Serialize;

use crate::game::SeatResult;
use crate::outcome::{Status, Verdict};
use crate::stats::{Elo, EloModel};

/// The classes of games that did not end normally, one column each, in
/// this order, in every table, CSV and page (see [`Row::failures`]).
pub const FAILURES: [&str; 5] = [
    "timeouts",
    "crashed",
    "incorrect",
    "disqualified",
    "internal",
];

/// One entrant's line.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Row {
    pub rank: usize,
    pub entrant: String,
    pub games: u64,
    /// Chomp: the rating, its uncertainty, and the conservative estimate
    /// (rating − 3 × uncertainty) the ranking uses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rating: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conservative: Option<f64>,
    /// Chomp: mean score and the half-width of its 95% interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_score_ci: Option<f64>,
    pub wins: f64,
    /// One-player games: wins / games and Wilson's 95% interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub win_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub win_rate_low: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub win_rate_high: Option<f64>,
    /// One-player games: mean of (won − the best entrant's won) per game,
    /// and the half-width of its 95% interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired_diff: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired_diff_ci: Option<f64>,
    /// One-player gauntlets: the entrant the paired difference is taken
    /// against (the gauntlet entrant) instead of the best one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired_vs: Option<String>,
    /// Games that did not end normally, by class of the shared taxonomy
    /// (`docs/results.md`): `timeout` (Chomp's starvations included);
    /// `crashed`, `closed_output` and `limit`; `incorrect`; `cannot_start`
    /// and `build_failed`; the referee's own `internal` errors.
    pub timeouts: u64,
    pub crashed: u64,
    pub incorrect: u64,
    pub disqualified: u64,
    pub internal: u64,
    /// Even Steven: winnable hands lost.
    pub unnecessary: u64,
    pub slowest_micros: u64,
    /// The largest peak memory of its bot in any game, bytes; absent when
    /// no game of it measured one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_memory_bytes: Option<u64>,
    /// The most CPU time its bot used in any game; absent when no game of
    /// it measured one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cpu_micros: Option<u64>,
    /// Games between players of exactly two entrants: its Elo against the
    /// other, once they have played each other.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub elo: Option<EloFigures>,
}

/// An entrant's logistic Elo against the other of two (games between
/// players), with what it is counted from, as `standings.json` holds it.
#[derive(Clone, Debug, Serialize)]
pub struct EloFigures {
    /// The estimate and the bounds of its 95% interval; null where
    /// unbounded (every game won or lost; an interval past a score of 0
    /// or 1), since JSON has no infinity.
    #[serde(serialize_with = "finite_or_null")]
    pub elo: f64,
    #[serde(serialize_with = "finite_or_null")]
    pub elo_low: f64,
    #[serde(serialize_with = "finite_or_null")]
    pub elo_high: f64,
    /// `pentanomial`: from the complete game pairs; `trinomial`: from
    /// single games, when no pair is complete.
    pub elo_model: EloModel,
    /// The other entrant.
    pub elo_vs: String,
    /// Its games against the other (void ones left out).
    pub elo_wins: u64,
    pub elo_draws: u64,
    pub elo_losses: u64,
    /// Its complete game pairs (games `2k − 1` and `2k`) scoring 0, ¼, ½,
    /// ¾ and 1.
    pub elo_pentanomial: [u64; 5],
    /// Normalised Elo and half its 95% interval; null when every game
    /// (pair) scored the same.
    #[serde(serialize_with = "finite_or_null_option")]
    pub elo_nelo: Option<f64>,
    pub elo_nelo_error: f64,
    /// Likelihood of superiority, 0 to 1.
    pub elo_los: f64,
}

impl EloFigures {
    /// The figures from one side of two entrants' `games` (lost, drawn,
    /// won) and `pairs`; `None` when they have not played each other.
    pub(super) fn of(vs: &str, games: [u64; 3], pairs: [u64; 5]) -> Option<EloFigures> {
        let elo = Elo::of(games, pairs)?;
        Some(EloFigures {
            elo: elo.elo,
            elo_low: elo.low,
            elo_high: elo.high,
            elo_model: elo.model,
            elo_vs: vs.to_owned(),
            elo_wins: games[2],
            elo_draws: games[1],
            elo_losses: games[0],
            elo_pentanomial: pairs,
            elo_nelo: elo.nelo,
            elo_nelo_error: elo.nelo_error,
            elo_los: elo.los,
        })
    }

    pub fn estimate(&self) -> Elo {
        Elo {
            model: self.elo_model,
            elo: self.elo,
            low: self.elo_low,
            high: self.elo_high,
            nelo: self.elo_nelo,
            nelo_error: self.elo_nelo_error,
            los: self.elo_los,
        }
    }

    /// Its games against the other lost, drawn, won.
    pub fn outcomes(&self) -> [u64; 3] {
        [self.elo_losses, self.elo_draws, self.elo_wins]
    }

    pub(super) fn games(&self) -> u64 {
        self.elo_wins + self.elo_draws + self.elo_losses
    }
}

/// A figure as JSON holds it: null for ±∞, which JSON cannot write.
pub(super) fn finite_or_null<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else {
        s.serialize_none()
    }
}

/// As [`finite_or_null`], null for `None` too.
pub(super) fn finite_or_null_option<S: serde::Serializer>(
    x: &Option<f64>,
    s: S,
) -> Result<S::Ok, S::Error> {
    finite_or_null(&x.unwrap_or(f64::NAN), s)
}

impl Row {
    /// A line before any game: no figure, every count 0.
    pub(super) fn new(entrant: &str) -> Row {
        Row {
            entrant: entrant.to_owned(),
            ..Row::default()
        }
    }

    /// Whether it could not play at all: every game of it was a
    /// disqualification (its build failed, its program cannot start).
    pub fn could_not_play(&self) -> bool {
        self.games > 0 && self.disqualified == self.games
    }

    /// The games it lost by its own fault: `internal` errors are the
    /// referee's (or a judge's), never the entrant's.
    pub fn faults(&self) -> u64 {
        self.timeouts + self.crashed + self.incorrect + self.disqualified
    }

    /// Its games that did not end normally, one count per class, in the
    /// order of [`FAILURES`].
    pub fn failures(&self) -> [u64; 5] {
        [
            self.timeouts,
            self.crashed,
            self.incorrect,
            self.disqualified,
            self.internal,
        ]
    }

    pub(super) fn count(&mut self, result: &SeatResult) {
        match result.status() {
            s if s.is_timeout() => self.timeouts += 1,
            s if s.is_disqualification() => self.disqualified += 1,
            s if s.is_crash() => self.crashed += 1,
            s if s.is_incorrect() => self.incorrect += 1,
            Status::Internal => self.internal += 1,
            _ => {}
        }
        self.unnecessary += u64::from(result.outcome.as_deref() == Some("lose_unnecessarily"));
        self.slowest_micros = self.slowest_micros.max(result.slowest_micros.unwrap_or(0));
        // `None` is below every measure: a known figure wins.
        self.max_memory_bytes = self.max_memory_bytes.max(result.peak_memory_bytes);
        self.max_cpu_micros = self.max_cpu_micros.max(result.cpu_micros);
    }
}

/// One entrant's standing after one of its games, for plots: its win rate
/// with Wilson's 95% interval (one-player games), or its rating with
/// rating ± 2 × uncertainty (games of several players).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Point {
    /// The game's index.
    pub index: u64,
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// A game an entrant did not end `ok` (void games left out).
#[derive(Clone, Debug)]
pub struct Failure {
    pub game: u64,
    pub verdict: Verdict,
    /// Why, for people (the record's `error`).
    pub error: Option<String>,
}

/// An entrant's games that did not end `ok`: the first, for a note, and
/// how many.
#[derive(Clone, Debug, Default)]
pub struct Failures {
    pub first: Option<Failure>,
    pub count: u64,
}

/// Sorts best first by `key` (ties keep entrant order) and numbers ranks,
/// equal keys sharing one. Entrants that could not play at all share the
/// rank after everyone who played: their ratings, from games lost without
/// a move, would rank them among themselves by the luck of the seating.
pub(super) fn rank_by(rows: &mut [Row], key: impl Fn(&Row) -> f64) {
    let mut order: Vec<usize> = (0..rows.len())
        .filter(|&i| !rows[i].could_not_play())
        .collect();
    order.sort_by(|&a, &b| key(&rows[b]).total_cmp(&key(&rows[a])).then(a.cmp(&b)));
    let mut rank = 0;
    let mut previous = None;
    for (place, &i) in order.iter().enumerate() {
        let k = key(&rows[i]);
        if previous != Some(k) {
            rank = place + 1;
            previous = Some(k);
        }
        rows[i].rank = rank;
    }
    let after_all_who_played = order.len() + 1;
    for row in rows.iter_mut().filter(|r| r.could_not_play()) {
        row.rank = after_all_who_played;
    }
    rows.sort_by_key(|r| r.rank);
}
