//! Standings computed from a tournament's records alone — so a run, a
//! resumed run and merged shards give the same standings from the same
//! records. Records are taken in game order, one at a time, into a
//! [`Tally`] that holds aggregates, not records.
//!
//! - Chomp: a Weng-Lin (OpenSkill) rating per entrant, updated game by game
//!   from the ranking of the scores (equal scores tie), with its
//!   uncertainty; mean score with a 95% interval; wins (a shared win counts
//!   `1/k`); starvations, crashes, disqualifications; the slowest move.
//!   With exactly two entrants, also each one's logistic Elo against the
//!   other, from their game pairs (pentanomial) or, with no pair
//!   complete, from single games (trinomial), with its 95% interval.
//! - One-player games: win rate with Wilson's 95% interval, and the paired
//!   difference to the best entrant (per game, won minus the best's won,
//!   averaged, with a 95% interval), since all entrants play the same games.

use serde::Serialize;
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

use crate::game::{GameRecord, SeatResult};
use crate::games::chomp::standings::markdown_table;
use crate::outcome::{Status, Verdict};
use std::collections::BTreeMap;

use crate::stats::{Elo, EloModel, HeadToHead, Moments, wilson95};
use crate::text;
use crate::units::human_micros;

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
#[derive(Clone, Debug, Serialize)]
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
}

impl EloFigures {
    /// The figures from one side of two entrants' `games` (lost, drawn,
    /// won) and `pairs`; `None` when they have not played each other.
    fn of(vs: &str, games: [u64; 3], pairs: [u64; 5]) -> Option<EloFigures> {
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
        })
    }

    pub fn estimate(&self) -> Elo {
        Elo {
            model: self.elo_model,
            elo: self.elo,
            low: self.elo_low,
            high: self.elo_high,
        }
    }

    fn games(&self) -> u64 {
        self.elo_wins + self.elo_draws + self.elo_losses
    }
}

/// A figure as JSON holds it: null for ±∞, which JSON cannot write.
fn finite_or_null<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else {
        s.serialize_none()
    }
}

impl Row {
    fn new(entrant: &str) -> Row {
        Row {
            rank: 0,
            entrant: entrant.to_owned(),
            games: 0,
            rating: None,
            uncertainty: None,
            conservative: None,
            mean_score: None,
            mean_score_ci: None,
            wins: 0.0,
            win_rate: None,
            win_rate_low: None,
            win_rate_high: None,
            paired_diff: None,
            paired_diff_ci: None,
            paired_vs: None,
            timeouts: 0,
            crashed: 0,
            incorrect: 0,
            disqualified: 0,
            internal: 0,
            unnecessary: 0,
            slowest_micros: 0,
            max_memory_bytes: None,
            max_cpu_micros: None,
            elo: None,
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

    fn count(&mut self, result: &SeatResult) {
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

/// The standings of `entrants` from `records` (of one tournament run), for
/// a caller that holds the records (see [`Tally`] for one that does not).
pub fn compute(solo: bool, entrants: &[String], records: &[GameRecord]) -> Vec<Row> {
    tally_of(solo, entrants, records, None, None).rows()
}

/// Each entrant's standing after each game it played, in game order.
pub fn history(solo: bool, entrants: &[String], records: &[GameRecord]) -> Vec<Vec<Point>> {
    tally_of(solo, entrants, records, None, Some(usize::MAX)).history()
}

fn tally_of(
    solo: bool,
    entrants: &[String],
    records: &[GameRecord],
    against: Option<&str>,
    history: Option<usize>,
) -> Tally {
    let mut tally = Tally::new(solo, entrants, against, history);
    let mut sorted: Vec<&GameRecord> = records.iter().collect();
    sorted.sort_by_key(|r| r.index);
    for record in sorted {
        tally.add(record.clone());
    }
    tally
}

/// How many records may arrive out of game order (games played at once,
/// shards read side by side) and still be taken in order: the ratings
/// depend on the order of the games.
pub const REORDER_WINDOW: usize = 4096;

/// The standings built one record at a time: what a run, `merge` and
/// `report` hold instead of the records, so that their memory does not
/// grow with the games (O(entrants²) at most, for one-player games'
/// paired differences, plus [`REORDER_WINDOW`] records).
///
/// Records may come in any order within [`REORDER_WINDOW`]; they are
/// counted in game order. A game's index is counted once: the first
/// record of it, except that a game played to its end supersedes a void
/// record of it (its judge failed, and `--resume` played it again). A void
/// game is no game of anyone's, only an `internal` error of each of its
/// players.
#[derive(Clone)]
pub struct Tally {
    solo: bool,
    entrants: Vec<String>,
    seat: std::collections::HashMap<String, usize>,
    against: Option<usize>,
    rows: Vec<Row>,
    /// Games of several players: each entrant's rating and scores.
    ratings: Vec<WengLinRating>,
    scores: Vec<Moments>,
    /// One-player games: per pair of entrants, how their wins compared in
    /// the games both played (see [`PairTally`]).
    pairs: Vec<PairTally>,
    /// Games between players of exactly two entrants: their games against
    /// each other, from the first's side, for the Elo.
    head_to_head: Option<HeadToHead>,
    /// Each entrant's standing after its games, thinned to at most twice
    /// the given number of points.
    history: Option<(usize, Vec<Thinned>)>,
    arrays: Vec<(String, Vec<ArrayTally>)>,
    /// Each entrant's first game that did not end `ok`, and how many did
    /// not.
    failures: Vec<Failures>,
    /// The records not counted yet, put in game order.
    order: InOrder,
}

/// An entrant's games and wins so far, and its rating and uncertainty in
/// a game between players (see [`Tally::standing`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Standing {
    pub games: u64,
    pub wins: f64,
    pub rating: Option<(f64, f64)>,
}

impl Tally {
    /// The run's games are `first`, `first + step`, ... (a shard's): records
    /// in that order are counted at once, not held.
    pub fn games_from(mut self, first: u64, step: u64) -> Tally {
        self.order = InOrder::new(first, step);
        self
    }
}

/// One pair of entrants `(i, j)` over the one-player games both played:
/// their paired difference, won_i − won_j, is −1, 0 or 1 per game.
#[derive(Clone, Copy, Default, Debug)]
struct PairTally {
    games: u64,
    /// Games `i` won and `j` lost.
    ahead: u64,
    /// Games `j` won and `i` lost.
    behind: u64,
}

impl PairTally {
    /// The mean of won_i − won_j (or of won_j − won_i, `flip`) and the
    /// half-width of its 95% interval, as [`mean_ci95`] gives them.
    fn mean_ci95(&self, flip: bool) -> (f64, f64) {
        let (ahead, behind) = if flip {
            (self.behind, self.ahead)
        } else {
            (self.ahead, self.behind)
        };
        let mut moments = Moments::default();
        moments.add_many(1.0, ahead);
        moments.add_many(-1.0, behind);
        moments.add_many(0.0, self.games - ahead - behind);
        let (mean, half) = moments.mean_ci95();
        (mean, half.unwrap_or(0.0))
    }
}

/// A seat of a game between players, as the tally counts it.
struct Seated<'r> {
    /// The entrant's position in the tally.
    entrant: usize,
    result: &'r SeatResult,
    /// Its place ([`GameRecord::places`]) and share of the win.
    place: u32,
    share: f64,
}

/// One entrant's games on one array.
#[derive(Clone, Copy, Default)]
struct ArrayTally {
    wins: f64,
    scores: Moments,
}

/// A series of points kept evenly spread in little room: every
/// `stride`-th point, the stride doubling when the points reach twice
/// `most`; the last point is always kept.
#[derive(Clone, Default)]
struct Thinned {
    stride: u64,
    seen: u64,
    points: Vec<Point>,
    last: Option<Point>,
}

impl Thinned {
    fn push(&mut self, point: Point, most: usize) {
        self.stride = self.stride.max(1);
        if self.seen.is_multiple_of(self.stride) {
            self.points.push(point);
            if self.points.len() >= most.saturating_mul(2) {
                self.stride *= 2;
                let mut k = 0;
                self.points.retain(|_| {
                    k += 1;
                    k % 2 == 1
                });
            }
        }
        self.seen += 1;
        self.last = Some(point);
    }

    fn points(&self) -> Vec<Point> {
        let mut points = self.points.clone();
        if let Some(last) = self.last
            && points.last() != Some(&last)
        {
            points.push(last);
        }
        points
    }
}

impl Tally {
    /// `against`: a gauntlet's entrant, to which one-player games' paired
    /// differences are taken instead of the best entrant. `history`: keep
    /// each entrant's standing over its games, thinned to about this many
    /// points.
    pub fn new(
        solo: bool,
        entrants: &[String],
        against: Option<&str>,
        history: Option<usize>,
    ) -> Tally {
        let n = entrants.len();
        let seat: std::collections::HashMap<String, usize> = entrants
            .iter()
            .enumerate()
            .rev()
            .map(|(i, e)| (e.clone(), i))
            .collect();
        Tally {
            solo,
            entrants: entrants.to_vec(),
            against: against.and_then(|name| seat.get(name).copied()),
            seat,
            rows: entrants.iter().map(|e| Row::new(e)).collect(),
            ratings: vec![WengLinRating::new(); if solo { 0 } else { n }],
            scores: vec![Moments::default(); if solo { 0 } else { n }],
            pairs: vec![PairTally::default(); if paired(solo, n) { n * (n - 1) / 2 } else { 0 }],
            head_to_head: (!solo && n == 2).then(HeadToHead::default),
            history: history.map(|most| (most, vec![Thinned::default(); n])),
            arrays: Vec::new(),
            failures: vec![Failures::default(); n],
            order: InOrder::default(),
        }
    }

    /// A new entrant (a league's new version), counted from its first
    /// game. The pairs of one-player games and the head-to-head Elo are
    /// for a fixed set of entrants: a tally that grows keeps neither.
    pub fn add_entrant(&mut self, name: &str) {
        let i = self.entrants.len();
        self.entrants.push(name.to_owned());
        self.seat.entry(name.to_owned()).or_insert(i);
        self.rows.push(Row::new(name));
        if !self.solo {
            self.ratings.push(WengLinRating::new());
            self.scores.push(Moments::default());
        }
        self.pairs.clear();
        self.head_to_head = None;
        if let Some((_, series)) = &mut self.history {
            series.push(Thinned::default());
        }
        self.failures.push(Failures::default());
    }

    /// An entrant's games and wins counted so far, and in a game between
    /// players its rating and uncertainty (for a league's matchmaking,
    /// without ranking everyone as [`Tally::rows`] does).
    pub fn standing(&self, name: &str) -> Option<Standing> {
        let i = self.at(Some(name))?;
        let row = &self.rows[i];
        Some(Standing {
            games: row.games,
            wins: row.wins,
            rating: self.ratings.get(i).map(|r| (r.rating, r.uncertainty)),
        })
    }

    /// One entrant's standing over the games counted so far (empty
    /// without `history`), without counting anything for the others.
    pub fn history_of(&self, name: &str) -> Vec<Point> {
        match (&self.history, self.at(Some(name))) {
            (Some((_, series)), Some(i)) => series[i].points(),
            _ => Vec::new(),
        }
    }

    /// Takes one record: counted now, or once the records before it in
    /// game order have come (at most [`REORDER_WINDOW`] later).
    pub fn add(&mut self, record: GameRecord) {
        self.order.push(record);
        while let Some(record) = self.order.next_ready() {
            self.count(record);
        }
    }

    /// Whether a record of game `index` (not a void one) was taken.
    pub fn has(&self, index: u64) -> bool {
        self.order.has(index)
    }

    /// Games counted or waiting to be (void ones not included).
    pub fn games(&self) -> u64 {
        self.order.games()
    }

    /// The standings now, ranked.
    pub fn rows(&self) -> Vec<Row> {
        self.clone().into_rows()
    }

    /// [`Tally::rows`] of a tally of one's own (a copy taken under a lock,
    /// ranked after it is released).
    pub fn into_rows(mut self) -> Vec<Row> {
        self.count_all();
        self.final_rows()
    }

    /// Each entrant's standing over its games (empty without `history`).
    pub fn history(&self) -> Vec<Vec<Point>> {
        let mut all = self.clone();
        all.count_all();
        match &all.history {
            Some((_, series)) => series.iter().map(Thinned::points).collect(),
            None => vec![Vec::new(); self.entrants.len()],
        }
    }

    /// Each entrant's games that did not end `ok`: the first and how
    /// many, by entrant (those with none left out).
    pub fn failures(&self) -> Vec<(String, Failures)> {
        let mut all = self.clone();
        all.count_all();
        all.entrants
            .iter()
            .zip(&all.failures)
            .filter(|(_, f)| f.count > 0)
            .map(|(e, f)| (e.clone(), f.clone()))
            .collect()
    }

    fn count_all(&mut self) {
        while let Some(record) = self.order.pop() {
            self.count(record);
        }
    }

    fn count(&mut self, record: GameRecord) {
        if record.is_void() {
            for result in &record.results {
                if let Some(i) = self.at(result.entrant.as_deref()) {
                    self.rows[i].internal += 1;
                }
            }
            return;
        }
        self.count_failures(&record);
        if self.solo {
            self.count_solo(&record);
        } else {
            self.count_table(&record);
        }
    }

    fn at(&self, name: Option<&str>) -> Option<usize> {
        self.seat.get(name?).copied()
    }

    fn count_failures(&mut self, record: &GameRecord) {
        for result in &record.results {
            if result.status() == Status::Ok {
                continue;
            }
            if let Some(i) = self.at(result.entrant.as_deref()) {
                let failures = &mut self.failures[i];
                failures.count += 1;
                failures.first.get_or_insert_with(|| Failure {
                    game: record.index,
                    verdict: result.verdict,
                    error: result.error.clone(),
                });
            }
        }
    }

    fn push_history(&mut self, i: usize, point: Point) {
        if let Some((most, series)) = self.history.as_mut() {
            series[i].push(point, *most);
        }
    }

    fn count_solo(&mut self, record: &GameRecord) {
        let mut won: Vec<(usize, bool)> = Vec::new();
        for result in &record.results {
            let Some(i) = self.at(result.entrant.as_deref()) else {
                continue;
            };
            let w = result.won == Some(true);
            let row = &mut self.rows[i];
            row.games += 1;
            row.wins += f64::from(u8::from(w));
            row.count(result);
            let (low, high) = wilson95(row.wins as u64, row.games);
            let value = row.wins / row.games as f64;
            self.push_history(
                i,
                Point {
                    index: record.index,
                    value,
                    low,
                    high,
                },
            );
            won.push((i, w));
        }
        for (a, &(i, wi)) in won.iter().enumerate() {
            for &(j, wj) in &won[a + 1..] {
                let (lo, hi, wlo, whi) = if i < j {
                    (i, j, wi, wj)
                } else {
                    (j, i, wj, wi)
                };
                let Some(pair) = self.pairs.get_mut(pair_slot(lo, hi, self.entrants.len())) else {
                    continue;
                };
                pair.games += 1;
                pair.ahead += u64::from(wlo && !whi);
                pair.behind += u64::from(whi && !wlo);
            }
        }
    }

    fn count_table(&mut self, record: &GameRecord) {
        // The game's places decide wins and ratings: a judge's ranking
        // where it gives one, else the scores; a seat that never played
        // places last and wins nothing ([`GameRecord::places`]).
        let places = record.places();
        let shares = record.win_shares();
        let seats: Vec<Seated> = record
            .results
            .iter()
            .zip(places)
            .zip(shares)
            .filter_map(|((result, place), share)| {
                Some(Seated {
                    entrant: self.at(result.entrant.as_deref())?,
                    result,
                    place,
                    share,
                })
            })
            .collect();
        if seats.is_empty() {
            return;
        }
        let array = array_of(record);
        for seat in &seats {
            let (i, share) = (seat.entrant, seat.share);
            let score = seat.result.points().unwrap_or(0.0);
            let row = &mut self.rows[i];
            row.games += 1;
            row.wins += share;
            row.count(seat.result);
            self.scores[i].add(score);
            if let Some(array) = &array {
                let tally = self.array_tally(array, i);
                tally.wins += share;
                tally.scores.add(score);
            }
        }
        self.rate(record.index, &seats);
        // A game of the two alone; `head_to_head` pairs games 2k − 1 and
        // 2k, which seat the two both ways.
        if let Some(h2h) = self.head_to_head.as_mut()
            && record.results.len() == 2
            && let Some(score) = record.head_to_head(false, &self.entrants[0], &self.entrants[1])
        {
            h2h.add(record.index, score);
        }
    }

    /// Weng-Lin: rank 1 is the best place; equal places share a rank.
    fn rate(&mut self, index: u64, seats: &[Seated]) {
        let config = WengLinConfig::new();
        let teams: Vec<[WengLinRating; 1]> =
            seats.iter().map(|s| [self.ratings[s.entrant]]).collect();
        let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = seats
            .iter()
            .zip(&teams)
            .map(|(s, team)| {
                let rank = 1 + seats.iter().filter(|o| o.place < s.place).count();
                (&team[..], MultiTeamOutcome::new(rank))
            })
            .collect();
        for (s, new) in seats.iter().zip(weng_lin_multi_team(&ranked, &config)) {
            let r = new[0];
            self.ratings[s.entrant] = r;
            self.push_history(
                s.entrant,
                Point {
                    index,
                    value: r.rating,
                    low: r.rating - 2.0 * r.uncertainty,
                    high: r.rating + 2.0 * r.uncertainty,
                },
            );
        }
    }

    fn array_tally(&mut self, array: &str, entrant: usize) -> &mut ArrayTally {
        let at = match self.arrays.iter().position(|(a, _)| a == array) {
            Some(at) => at,
            None => {
                let n = self.entrants.len();
                self.arrays
                    .push((array.to_owned(), vec![ArrayTally::default(); n]));
                self.arrays.len() - 1
            }
        };
        &mut self.arrays[at].1[entrant]
    }

    fn final_rows(mut self) -> Vec<Row> {
        if self.solo {
            self.finish_solo();
        } else {
            self.finish_table();
        }
        self.rows
    }

    fn finish_solo(&mut self) {
        for row in self.rows.iter_mut() {
            let (low, high) = wilson95(row.wins as u64, row.games);
            row.win_rate = Some(if row.games == 0 {
                0.0
            } else {
                row.wins / row.games as f64
            });
            row.win_rate_low = Some(low);
            row.win_rate_high = Some(high);
        }
        let rows = &self.rows;
        let best = self.against.unwrap_or_else(|| {
            (0..rows.len())
                .max_by(|&a, &b| {
                    let rate = |i: usize| rows[i].win_rate.unwrap_or(0.0);
                    rate(a).total_cmp(&rate(b)).then(b.cmp(&a))
                })
                .unwrap_or(0)
        });
        let vs = self.against.map(|i| self.entrants[i].clone());
        let n = self.entrants.len();
        if self.pairs.is_empty() {
            // Too many entrants to compare every pair: no paired column.
            rank_by(&mut self.rows, |r| r.win_rate.unwrap_or(0.0));
            return;
        }
        for i in 0..n {
            let (mean, half) = match i.cmp(&best) {
                std::cmp::Ordering::Equal => (0.0, 0.0),
                std::cmp::Ordering::Less => self.pairs[pair_slot(i, best, n)].mean_ci95(false),
                std::cmp::Ordering::Greater => self.pairs[pair_slot(best, i, n)].mean_ci95(true),
            };
            let row = &mut self.rows[i];
            row.paired_diff = Some(mean);
            row.paired_diff_ci = Some(half);
            row.paired_vs = vs.clone();
        }
        rank_by(&mut self.rows, |r| r.win_rate.unwrap_or(0.0));
    }

    fn finish_table(&mut self) {
        for (i, row) in self.rows.iter_mut().enumerate() {
            let (mean, half) = self.scores[i].mean_ci95();
            row.mean_score = Some(mean);
            row.mean_score_ci = Some(half.unwrap_or(0.0));
            row.rating = Some(self.ratings[i].rating);
            row.uncertainty = Some(self.ratings[i].uncertainty);
            row.conservative = Some(self.ratings[i].rating - 3.0 * self.ratings[i].uncertainty);
        }
        if let Some(h2h) = &self.head_to_head {
            let (mut games, mut pairs) = (h2h.games, h2h.pairs());
            self.rows[0].elo = EloFigures::of(&self.entrants[1], games, pairs);
            // The second's side: every count the other way round.
            games.reverse();
            pairs.reverse();
            self.rows[1].elo = EloFigures::of(&self.entrants[0], games, pairs);
        }
        rank_by(&mut self.rows, |r| r.conservative.unwrap_or(0.0));
    }

    /// Games between players whose records hold more than one `array`:
    /// each entrant's games, wins and mean score on each array, arrays in
    /// the order they first appear, entrants in the given order. Empty
    /// when the records hold one array or none.
    pub fn per_array(&self) -> Vec<ArrayRow> {
        let mut all = self.clone();
        all.count_all();
        if all.arrays.len() < 2 {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (array, tallies) in &all.arrays {
            for (entrant, tally) in all.entrants.iter().zip(tallies) {
                if tally.scores.count() == 0 {
                    continue;
                }
                let (mean, half) = tally.scores.mean_ci95();
                out.push(ArrayRow {
                    array: array.clone(),
                    entrant: entrant.clone(),
                    games: tally.scores.count(),
                    wins: tally.wins,
                    mean_score: mean,
                    mean_score_ci: half.unwrap_or(0.0),
                });
            }
        }
        out
    }
}

/// Records put back in game order as they come: each is given as soon as
/// the game before it in the run's order has been (`next` follows `step`:
/// shard K of N plays games K, K + N, ...), or once [`REORDER_WINDOW`]
/// later ones have come (a game missing), or at the end. A game is
/// given once: its first record, except that a game played to its end
/// supersedes a void record of it (its judge failed, and `--resume` played
/// it again) that has not been given yet.
#[derive(Clone)]
pub struct InOrder {
    /// Games with a record played to its end.
    played: GameSet,
    /// Void games given or held.
    voided: GameSet,
    waiting: BTreeMap<u64, GameRecord>,
    /// The highest index given so far.
    given_up_to: u64,
    /// The game expected next, and the step between games.
    next: u64,
    step: u64,
}

impl Default for InOrder {
    fn default() -> InOrder {
        InOrder::new(1, 1)
    }
}

impl InOrder {
    /// The run's games are `first`, `first + step`, ...
    pub fn new(first: u64, step: u64) -> InOrder {
        InOrder {
            played: GameSet::default(),
            voided: GameSet::default(),
            waiting: BTreeMap::new(),
            given_up_to: 0,
            next: first,
            step: step.max(1),
        }
    }

    pub fn push(&mut self, record: GameRecord) {
        let index = record.index;
        if record.is_void() {
            if !self.played.contains(index) && self.voided.insert(index) {
                self.waiting.insert(index, record);
            }
        } else if self.played.insert(index) {
            self.waiting.insert(index, record);
        }
    }

    /// The first record in game order, once enough later ones have come.
    pub fn next_ready(&mut self) -> Option<GameRecord> {
        // A void game is held: `--resume` may play it again later.
        let expected = self
            .waiting
            .first_key_value()
            .is_some_and(|(&i, r)| i == self.next && !r.is_void());
        if expected || self.waiting.len() > REORDER_WINDOW {
            self.pop()
        } else {
            None
        }
    }

    /// The first record in game order (at the end: every record held).
    pub fn pop(&mut self) -> Option<GameRecord> {
        let (index, record) = self.waiting.pop_first()?;
        if index < self.given_up_to {
            tracing::warn!(
                game = index,
                "a record came more than {REORDER_WINDOW} games out of order: it is taken late"
            );
        }
        self.given_up_to = self.given_up_to.max(index);
        if index >= self.next {
            self.next = index.saturating_add(self.step);
        }
        Some(record)
    }

    /// Whether a record of game `index` played to its end has come.
    pub fn has(&self, index: u64) -> bool {
        self.played.contains(index)
    }

    /// Games played to their end that have come.
    pub fn games(&self) -> u64 {
        self.played.len()
    }
}

/// A set of game indexes, a bit each: a million games in 125 KB. Indexes
/// past [`GameSet::DENSE`] (no run has so many games; a damaged record
/// may) are kept one by one, so that no index can ask for a huge bitmap.
#[derive(Clone, Debug, Default)]
pub struct GameSet {
    words: Vec<u64>,
    sparse: std::collections::BTreeSet<u64>,
    len: u64,
}

impl GameSet {
    pub const DENSE: u64 = 1 << 27;

    pub fn contains(&self, index: u64) -> bool {
        if index >= Self::DENSE {
            return self.sparse.contains(&index);
        }
        let (word, bit) = ((index / 64) as usize, index % 64);
        self.words.get(word).is_some_and(|w| w & (1 << bit) != 0)
    }

    /// Adds `index`; false when it was there already.
    pub fn insert(&mut self, index: u64) -> bool {
        if self.contains(index) {
            return false;
        }
        if index >= Self::DENSE {
            self.sparse.insert(index);
        } else {
            let (word, bit) = ((index / 64) as usize, index % 64);
            if self.words.len() <= word {
                self.words.resize(word + 1, 0);
            }
            self.words[word] |= 1 << bit;
        }
        self.len += 1;
        true
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Where pair `(i, j)`, `i < j`, of `n` entrants is kept.
fn pair_slot(i: usize, j: usize, n: usize) -> usize {
    i * n - i * (i + 1) / 2 + (j - i - 1)
}

/// Sorts best first by `key` (ties keep entrant order) and numbers ranks,
/// equal keys sharing one. Entrants that could not play at all share the
/// rank after everyone who played: their ratings, from games lost without
/// a move, would rank them among themselves by the luck of the seating.
fn rank_by(rows: &mut [Row], key: impl Fn(&Row) -> f64) {
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

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// The standings as a table for the terminal.
pub fn table(solo: bool, rows: &[Row]) -> String {
    let t = if solo {
        solo_table(rows)
    } else {
        versus_table(rows)
    };
    if let Some(name) = rows.first().and_then(|r| r.paired_vs.as_deref()) {
        format!(
            "{t}\ngauntlet: each entrant's paired difference is to {}, the gauntlet entrant",
            text::terminal(name)
        )
    } else if solo && rows.len() > MOST_PAIRED {
        format!(
            "{t}\nvs best: not compared, with more than {MOST_PAIRED} entrants (every pair \
             of {} would be tallied)",
            rows.len()
        )
    } else if solo {
        t.to_string()
    } else if let Some(line) = elo_line(solo, rows) {
        format!("{t}\n{SHARED_WINS}\n{line}")
    } else {
        format!("{t}\n{SHARED_WINS}")
    }
}

/// Every column but the entrant's name (the second) holds numbers.
fn number_columns(header: &[&str]) -> Vec<usize> {
    (0..header.len()).filter(|&i| i != 1).collect()
}

/// The table of a one-player game: win rates, paired differences.
fn solo_table(rows: &[Row]) -> comfy_table::Table {
    let vs = match rows.first().and_then(|r| r.paired_vs.as_deref()) {
        Some(name) => format!("vs {} (paired)", text::terminal(name)),
        None => "vs best (paired)".to_owned(),
    };
    let mut header = vec![
        "rank", "entrant", "games", "wins", "win rate", "95% CI", &vs,
    ];
    header.extend(FAILURES);
    header.extend(["unnecessary", "slowest", "memory", "cpu"]);
    let mut t = markdown_table(&header, &number_columns(&header));
    for r in rows {
        let mut cells = vec![
            r.rank.to_string(),
            text::terminal(&r.entrant).into_owned(),
            r.games.to_string(),
            format!("{}", r.wins),
            percent(r.win_rate.unwrap_or(0.0)),
            format!(
                "{}-{}",
                percent(r.win_rate_low.unwrap_or(0.0)),
                percent(r.win_rate_high.unwrap_or(1.0))
            ),
            match r.paired_diff {
                Some(diff) => format!(
                    "{:+.1} ± {:.1} pts",
                    100.0 * diff,
                    100.0 * r.paired_diff_ci.unwrap_or(0.0)
                ),
                None => "-".to_owned(),
            },
        ];
        cells.extend(r.failures().map(|n| n.to_string()));
        cells.push(r.unnecessary.to_string());
        cells.extend(usage_cells(r));
        t.add_row(cells);
    }
    t
}

/// The last columns of both tables: an entrant's slowest move, most
/// memory and most CPU time in a game.
fn usage_cells(r: &Row) -> [String; 3] {
    [
        human_micros(r.slowest_micros),
        memory(r.max_memory_bytes),
        cpu(r.max_cpu_micros),
    ]
}

/// The table of a game between players: ratings and mean scores.
fn versus_table(rows: &[Row]) -> comfy_table::Table {
    let mut header = vec![
        "rank",
        "entrant",
        "games",
        "rating",
        "±",
        "mean score",
        "95% CI",
        "wins",
    ];
    // Two entrants: the Elo beside the rating.
    let with_elo = rows.iter().any(|r| r.elo.is_some());
    if with_elo {
        header.insert(5, "Elo");
    }
    header.extend(FAILURES);
    header.extend(["slowest", "memory", "cpu"]);
    let mut t = markdown_table(&header, &number_columns(&header));
    for r in rows {
        let mut cells = vec![
            r.rank.to_string(),
            text::terminal(&r.entrant).into_owned(),
            r.games.to_string(),
            format!("{:.2}", r.rating.unwrap_or(0.0)),
            format!("{:.2}", r.uncertainty.unwrap_or(0.0)),
            format!("{:.1}", r.mean_score.unwrap_or(0.0)),
            format!("±{:.1}", r.mean_score_ci.unwrap_or(0.0)),
            format!("{:.2}", r.wins),
        ];
        if with_elo {
            cells.insert(5, elo_cell(r));
        }
        cells.extend(r.failures().map(|n| n.to_string()));
        cells.extend(usage_cells(r));
        t.add_row(cells);
    }
    t
}

/// An entrant's Elo against the other for a table: `+35.2 ± 48.1 (95%)`,
/// `-` before they have played each other.
pub fn elo_cell(row: &Row) -> String {
    row.elo
        .as_ref()
        .map_or_else(|| "-".to_owned(), |e| e.estimate().text())
}

/// The line under the standings of two entrants' games between players:
/// what the Elo is counted from, on the first row's side (or why there is
/// none yet); `None` for other standings.
pub fn elo_line(solo: bool, rows: &[Row]) -> Option<String> {
    let [first, _] = rows else {
        return None;
    };
    if solo {
        return None;
    }
    let Some(e) = &first.elo else {
        return Some("Elo: none yet, no game of the two alone against each other".to_owned());
    };
    let (me, vs) = (text::terminal(&first.entrant), text::terminal(&e.elo_vs));
    let games = e.games();
    let record = format!(
        "{me} won {}, drew {}, lost {} of {games} game{}",
        e.elo_wins,
        e.elo_draws,
        e.elo_losses,
        if games == 1 { "" } else { "s" }
    );
    let from = match e.elo_model {
        EloModel::Pentanomial => {
            let pairs: u64 = e.elo_pentanomial.iter().sum();
            let unpaired = match games.saturating_sub(2 * pairs) {
                0 => String::new(),
                n => format!(
                    ", {n} unpaired game{} left out",
                    if n == 1 { "" } else { "s" }
                ),
            };
            format!(
                "from {} (pairs scoring 0, ¼, ½, ¾, 1 for {me}){unpaired}",
                crate::stats::pairs_text(e.elo_pentanomial)
            )
        }
        EloModel::Trinomial => "from single games (trinomial): no game pair complete".to_owned(),
    };
    Some(format!(
        "Elo: logistic, {me} against {vs}, 95% interval; {from}; {record}"
    ))
}

/// The standings as CSV (header, then one line per entrant).
pub fn csv(rows: &[Row]) -> String {
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    let mut header = vec![
        "rank",
        "entrant",
        "games",
        "wins",
        "win_rate",
        "win_rate_low",
        "win_rate_high",
        "paired_diff",
        "paired_diff_ci",
        "rating",
        "uncertainty",
        "conservative",
        "mean_score",
        "mean_score_ci",
    ];
    header.extend(FAILURES);
    header.extend([
        "unnecessary",
        "slowest_micros",
        "max_memory_bytes",
        "max_cpu_micros",
        "elo",
        "elo_low",
        "elo_high",
        "elo_model",
        "elo_vs",
        "elo_wins",
        "elo_draws",
        "elo_losses",
        "elo_pentanomial",
    ]);
    text::csv(
        &header,
        rows.iter().map(|r| {
            let mut cells = vec![
                r.rank.to_string(),
                text::csv_text(&r.entrant).into_owned(),
                r.games.to_string(),
                r.wins.to_string(),
                opt(r.win_rate),
                opt(r.win_rate_low),
                opt(r.win_rate_high),
                opt(r.paired_diff),
                opt(r.paired_diff_ci),
                opt(r.rating),
                opt(r.uncertainty),
                opt(r.conservative),
                opt(r.mean_score),
                opt(r.mean_score_ci),
            ];
            cells.extend(r.failures().map(|n| n.to_string()));
            cells.extend([r.unnecessary, r.slowest_micros].map(|n| n.to_string()));
            cells.extend(
                [r.max_memory_bytes, r.max_cpu_micros]
                    .map(|n| n.map_or(String::new(), |n| n.to_string())),
            );
            // An unbounded figure is `inf` or `-inf`, as spreadsheets and
            // most parsers read it.
            cells.extend(match &r.elo {
                Some(e) => vec![
                    e.elo.to_string(),
                    e.elo_low.to_string(),
                    e.elo_high.to_string(),
                    e.elo_model.name().to_owned(),
                    text::csv_text(&e.elo_vs).into_owned(),
                    e.elo_wins.to_string(),
                    e.elo_draws.to_string(),
                    e.elo_losses.to_string(),
                    e.elo_pentanomial.map(|c| c.to_string()).join(" "),
                ],
                None => vec![String::new(); 9],
            });
            cells
        }),
    )
}

/// A bot's largest peak memory for the table: `-` when none was measured.
pub fn memory(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "-".into(), crate::bot::usage::human_bytes)
}

/// A bot's most CPU time in one game, for the table: `-` when none was
/// measured.
pub fn cpu(micros: Option<u64>) -> String {
    micros.map_or_else(|| "-".into(), human_micros)
}

/// Most entrants of a one-player game whose every pair is compared on the
/// deals both played (the paired difference with the best): the tallies
/// grow as the square of the entrants (2,000: two million, 48 MB;
/// 200,000 would take 480 GB). Past it the standings have no paired
/// column, and say why.
pub const MOST_PAIRED: usize = 2_000;

/// Whether a tournament of `n` entrants compares them in pairs.
pub fn paired(solo: bool, n: usize) -> bool {
    solo && (2..=MOST_PAIRED).contains(&n)
}

/// The line printed under every table that shows shared (fractional)
/// wins: games between players. Who placed first is Chomp's best score,
/// or an external game's judge's rank 1 (its ranking decides, whatever
/// the scores).
pub const SHARED_WINS: &str = "wins: a game won alone counts 1; a first place shared by k players \
     counts 1/k (Chomp: an equal best score; a judge's game: the judge's rank 1)";

/// One entrant's line on one array (Chomp), or on one value of whatever
/// `array` a game's records hold.
#[derive(Clone, Debug, Serialize)]
pub struct ArrayRow {
    pub array: String,
    pub entrant: String,
    pub games: u64,
    /// A win shared by `k` counts `1/k`.
    pub wins: f64,
    pub mean_score: f64,
    /// The half-width of its 95% interval (0 with fewer than two games).
    pub mean_score_ci: f64,
}

fn array_of(record: &GameRecord) -> Option<String> {
    record.setup.get("array").map(|v| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// The per-array standings as a table for the terminal, with the line
/// on shared wins.
pub fn array_table(rows: &[ArrayRow]) -> String {
    let mut t = markdown_table(
        &["array", "entrant", "games", "wins", "mean score", "95% CI"],
        &[2, 3, 4, 5],
    );
    for r in rows {
        t.add_row(vec![
            text::terminal(&r.array).into_owned(),
            text::terminal(&r.entrant).into_owned(),
            r.games.to_string(),
            format!("{:.2}", r.wins),
            format!("{:.1}", r.mean_score),
            format!("±{:.1}", r.mean_score_ci),
        ]);
    }
    format!("{t}\n{SHARED_WINS}")
}

/// The per-array standings as CSV: `array,entrant,games,wins,mean_score,
/// mean_score_ci`.
pub fn array_csv(rows: &[ArrayRow]) -> String {
    text::csv(
        &[
            "array",
            "entrant",
            "games",
            "wins",
            "mean_score",
            "mean_score_ci",
        ],
        rows.iter().map(|r| {
            [
                text::csv_text(&r.array).into_owned(),
                text::csv_text(&r.entrant).into_owned(),
                r.games.to_string(),
                r.wins.to_string(),
                r.mean_score.to_string(),
                r.mean_score_ci.to_string(),
            ]
        }),
    )
}

/// The standings for a gradebook: one line per entrant, sorted by name,
/// with the failures by kind and, for an entrant with any game not `ok`, a
/// note on the first and how many (see [`note`]). Columns: `entrant,games,
/// wins,win_rate,failures,timeouts,crashed,incorrect,disqualified,internal,
/// rank,note`; fractions rounded to three decimals.
pub fn grades_csv(rows: &[Row], failures: &[(String, Failures)]) -> String {
    let mut header = vec!["entrant", "games", "wins", "win_rate", "failures"];
    header.extend(FAILURES);
    header.extend(["rank", "note"]);
    let mut rows: Vec<&Row> = rows.iter().collect();
    rows.sort_by(|a, b| a.entrant.cmp(&b.entrant));
    let lines = rows.into_iter().map(|r| {
        let note = failures
            .iter()
            .find(|(entrant, _)| *entrant == r.entrant)
            .map(|(_, f)| note(r, f))
            .unwrap_or_default();
        let win_rate = if r.games == 0 {
            String::new()
        } else {
            decimals3(r.wins / r.games as f64)
        };
        let mut cells = vec![
            text::csv_text(&r.entrant).into_owned(),
            r.games.to_string(),
            decimals3(r.wins),
            win_rate,
            r.faults().to_string(),
        ];
        cells.extend(r.failures().map(|n| n.to_string()));
        cells.extend([r.rank.to_string(), text::csv_text(&note).into_owned()]);
        cells
    });
    text::csv(&header, lines)
}

/// The longest part of a note that quotes an error.
const NOTE_ERROR_LONGEST: usize = 200;

/// A gradebook's note on an entrant's failures, on one line: the first
/// failure's class, the game (but for a failed build) and why (a build's
/// first error), then how many games failed: `crashed in game 12: move 3:
/// crashed: the player exited with status 1; 3 of 40 games failed`.
fn note(row: &Row, failures: &Failures) -> String {
    let Some(first) = &failures.first else {
        return String::new();
    };
    let why = first
        .error
        .as_deref()
        .map(|e| {
            format!(
                ": {}",
                text::terminal(&text::cut(&gist(e), NOTE_ERROR_LONGEST))
            )
        })
        .unwrap_or_default();
    // A failed build is no event of one game: it is every game's.
    let at = if first.verdict.status == Status::BuildFailed {
        String::new()
    } else {
        format!(" in game {}", first.game)
    };
    format!(
        "{}{at}{why}; {} of {} games failed",
        first.verdict, failures.count, row.games
    )
}

/// A message's gist on one line: its first line and, when a later one
/// reads as a compiler's error (a build's `first error:`), that line; else
/// all its lines (a build log's last lines).
fn gist(message: &str) -> String {
    let mut lines = message.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(head) = lines.next() else {
        return String::new();
    };
    match lines.find(|l| text::is_error_line(l)) {
        Some(error) => text::one_line(&format!("{head}\n{error}")),
        None => text::one_line(message),
    }
}

/// A figure for people, to three decimals at most: `1.833`, `0.5`, `12`.
fn decimals3(x: f64) -> String {
    let text = format!("{x:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn records(values: Vec<Value>) -> Vec<GameRecord> {
        values
            .into_iter()
            .map(|mut v| {
                v["game"] = json!("g");
                v["seed"] = json!(1);
                serde_json::from_value(v).unwrap()
            })
            .collect()
    }

    #[test]
    fn paired_one_player_standings() {
        let names = vec!["a".to_string(), "b".to_string()];
        let values: Vec<Value> = (1..=4)
            .map(|i| {
                json!({"index": i, "results": [
                    {"entrant": "a", "won": true, "status": "ok"},
                    {"entrant": "b", "won": i % 2 == 0, "status": if i == 1 { "crashed" } else { "ok" }},
                ]})
            })
            .collect();
        let rows = compute(true, &names, &records(values));
        assert_eq!(rows[0].entrant, "a");
        assert_eq!(rows[0].win_rate, Some(1.0));
        assert_eq!(rows[1].win_rate, Some(0.5));
        assert_eq!(rows[1].paired_diff, Some(-0.5));
        assert_eq!(rows[1].crashed, 1);
        assert_eq!(rows[0].paired_diff, Some(0.0));
    }

    #[test]
    fn chomp_ratings_favour_the_higher_scorer() {
        let names = vec!["x".to_string(), "y".to_string(), "z".to_string()];
        let values: Vec<Value> = (1..=10)
            .map(|i| {
                json!({"index": i, "results": [
                    {"entrant": "x", "score": 100, "status": "ok"},
                    {"entrant": "y", "score": 50, "status": "ok"},
                    {"entrant": "z", "score": 50, "status": "timeout", "phase": "clock"},
                ]})
            })
            .collect();
        let rows = compute(false, &names, &records(values));
        assert_eq!(rows[0].entrant, "x");
        assert_eq!(rows[0].wins, 10.0);
        assert!(rows[0].rating > rows[1].rating);
        // y and z always tie: the same rating.
        assert_eq!(rows[1].rating, rows[2].rating);
        assert_eq!(rows.iter().find(|r| r.entrant == "z").unwrap().timeouts, 10);
        assert!(csv(&rows).lines().count() == 4);
    }

    /// The paired differences as the records' own mean and interval.
    #[test]
    fn paired_differences_from_counts_equal_the_mean_of_the_differences() {
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let values: Vec<Value> = (1..=40)
            .map(|i| {
                json!({"index": i, "results": [
                    {"entrant": "a", "won": i % 3 != 0, "status": "ok"},
                    {"entrant": "b", "won": i % 2 == 0, "status": "ok"},
                    {"entrant": "c", "won": i % 5 == 0, "status": "ok"},
                ]})
            })
            .collect();
        let rows = compute(true, &names, &records(values));
        let diffs: Vec<f64> = (1..=40)
            .map(|i| f64::from(u8::from(i % 2 == 0)) - f64::from(u8::from(i % 3 != 0)))
            .collect();
        let (mean, half) = crate::stats::mean_ci95(&diffs);
        let b = rows.iter().find(|r| r.entrant == "b").unwrap();
        assert!((b.paired_diff.unwrap() - mean).abs() < 1e-12);
        assert!((b.paired_diff_ci.unwrap() - half.unwrap()).abs() < 1e-12);
    }

    fn table_game(i: u64, scores: &[u8]) -> GameRecord {
        let results: Vec<Value> = scores
            .iter()
            .enumerate()
            .map(|(k, score)| json!({"entrant": format!("e{k}"), "score": score, "status": "ok"}))
            .collect();
        records(vec![
            json!({"index": i, "results": results, "setup": {"array": format!("a{}", i % 2)}}),
        ])
        .remove(0)
    }

    proptest::proptest! {
        /// A tally fed the records as a run finishes them (out of order by
        /// a few games, some twice, a void game played again) gives the
        /// standings of the records in game order.
        #[test]
        fn a_tally_in_any_near_order_gives_the_standings_in_game_order(
            scores in proptest::collection::vec(proptest::collection::vec(0u8..5, 3), 1..60),
            swaps in proptest::collection::vec((0usize..60, 1usize..8), 0..40),
        ) {
            let names: Vec<String> = (0..3).map(|k| format!("e{k}")).collect();
            let games: Vec<GameRecord> = scores
                .iter()
                .enumerate()
                .map(|(i, s)| table_game(i as u64 + 1, s))
                .collect();
            let mut arriving = games.clone();
            for (at, by) in swaps {
                let (a, b) = (at % arriving.len(), (at + by) % arriving.len());
                arriving.swap(a, b);
            }
            arriving.push(games[0].clone());
            let mut tally = Tally::new(false, &names, None, Some(1000));
            for record in arriving {
                tally.add(record);
            }
            let json = |rows: Vec<Row>| serde_json::to_string(&rows).unwrap();
            proptest::prop_assert_eq!(json(tally.rows()), json(compute(false, &names, &games)));
            proptest::prop_assert_eq!(tally.history(), history(false, &names, &games));
            proptest::prop_assert_eq!(tally.games(), games.len() as u64);
        }
    }

    #[test]
    fn a_void_game_played_again_counts_once_as_played() {
        let names: Vec<String> = (0..3).map(|k| format!("e{k}")).collect();
        let mut void = table_game(1, &[1, 2, 3]);
        void.judge_error = serde_json::from_value(json!({"message": "judge died"})).unwrap();
        let mut tally = Tally::new(false, &names, None, None);
        tally.add(void);
        tally.add(table_game(1, &[3, 2, 1]));
        let rows = tally.rows();
        assert_eq!(tally.games(), 1);
        assert!(rows.iter().all(|r| r.games == 1 && r.internal == 0));
    }
    #[test]
    fn two_entrants_elo_from_judged_pairs_only() {
        let names: Vec<String> = ["a", "b"].map(String::from).to_vec();
        // Ranks of a and b per game: 1-2 a wins both, 3-4 a wins and
        // draws, 5 a loses and 6 is void (its pair incomplete).
        let games = [(1, 2), (1, 2), (1, 2), (1, 1), (2, 1), (1, 2)];
        let mut values: Vec<Value> = games
            .iter()
            .enumerate()
            .map(|(i, &(ra, rb))| {
                let index = i + 1;
                // Seats swap from game to game, as two entrants' do.
                let mut seats = vec![
                    json!({"entrant": "a", "rank": ra, "status": "ok"}),
                    json!({"entrant": "b", "rank": rb, "status": "ok"}),
                ];
                if index % 2 == 0 {
                    seats.reverse();
                }
                json!({"index": index, "results": seats})
            })
            .collect();
        values[5]["judge_error"] = json!({"message": "judge died"});
        let rows = compute(false, &names, &records(values));
        let row = |name: &str| rows.iter().find(|r| r.entrant == name).unwrap();
        let a = row("a").elo.as_ref().unwrap();
        assert_eq!(a.elo_model, EloModel::Pentanomial);
        assert_eq!((a.elo_wins, a.elo_draws, a.elo_losses), (3, 1, 1));
        assert_eq!(a.elo_pentanomial, [0, 0, 0, 1, 1]);
        let b = row("b").elo.as_ref().unwrap();
        assert_eq!(b.elo_pentanomial, [1, 1, 0, 0, 0]);
        assert_eq!(b.elo_vs, "a");
        assert!((a.elo + b.elo).abs() < 1e-9 && (a.elo_low + b.elo_high).abs() < 1e-9);
        let line = elo_line(false, &rows).unwrap();
        assert!(line.contains("from 2 game pairs"), "{line}");
        assert!(line.contains("1 unpaired game left out"), "{line}");
        assert!(table(false, &rows).contains(" Elo |"));
        // The table's line and CSV's columns follow the rows.
        assert!(csv(&rows).lines().all(|l| l.split(',').count() == 32));
    }

    #[test]
    fn games_of_more_seats_than_the_two_entrants_give_no_elo() {
        let names: Vec<String> = ["e0", "e1"].map(String::from).to_vec();
        // One entrant twice at the table: not a game of the two alone.
        let mut game = table_game(1, &[3, 2, 1]);
        game.results[2].entrant = Some("e0".into());
        let rows = compute(false, &names, &[game]);
        assert!(rows.iter().all(|r| r.elo.is_none()));
        assert_eq!(
            elo_line(false, &rows).as_deref(),
            Some("Elo: none yet, no game of the two alone against each other")
        );
        assert!(!table(false, &rows).contains(" Elo |"));
        // One-player games and three entrants: no Elo, and no line.
        assert_eq!(elo_line(true, &rows), None);
        let three = compute(
            false,
            &["e0", "e1", "e2"].map(String::from),
            &[table_game(1, &[1, 2, 3])],
        );
        assert_eq!(elo_line(false, &three), None);
    }
}
