//! The [`Tally`]: the standings built one record at a time, each record
//! counted for every entrant at its table; what each kind of game adds is
//! in [`super::pairs`] (one-player games), [`super::ratings`] (games
//! between players) and [`super::arrays`] (each array).

use skillratings::weng_lin::WengLinRating;

use super::arrays::ArrayTally;
use super::entrant::{Failure, Failures, Point, Row};
use super::order::InOrder;
use super::pairs::{PairTally, paired};
use crate::game::GameRecord;
use crate::outcome::Status;
use crate::stats::{HeadToHead, Moments};

/// The standings built one record at a time: what a run, `merge` and
/// `report` hold instead of the records, so that their memory does not
/// grow with the games (O(entrants²) at most, for one-player games'
/// paired differences, plus [`REORDER_WINDOW`](super::REORDER_WINDOW) records).
///
/// Records may come in any order within [`REORDER_WINDOW`](super::REORDER_WINDOW); they are
/// counted in game order. A game's index is counted once: the first
/// record of it, except that a game played to its end supersedes a void
/// record of it (its judge failed, and `--resume` played it again). A void
/// game is no game of anyone's, only an `internal` error of each of its
/// players.
#[derive(Clone)]
pub struct Tally {
    pub(super) solo: bool,
    pub(super) entrants: Vec<String>,
    pub(super) seat: std::collections::HashMap<String, usize>,
    pub(super) against: Option<usize>,
    pub(super) rows: Vec<Row>,
    /// Games of several players: each entrant's rating and scores.
    pub(super) ratings: Vec<WengLinRating>,
    pub(super) scores: Vec<Moments>,
    /// One-player games: per pair of entrants, how their wins compared in
    /// the games both played (see [`PairTally`]).
    pub(super) pairs: Vec<PairTally>,
    /// Games between players of exactly two entrants: their games against
    /// each other, from the first's side, for the Elo.
    pub(super) head_to_head: Option<HeadToHead>,
    /// Each entrant's standing after its games, thinned to at most twice
    /// the given number of points.
    pub(super) history: Option<(usize, Vec<Thinned>)>,
    pub(super) arrays: Vec<(String, Vec<ArrayTally>)>,
    /// Each entrant's first game that did not end `ok`, and how many did
    /// not.
    pub(super) failures: Vec<Failures>,
    /// The records not counted yet, put in game order.
    pub(super) order: InOrder,
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

/// A series of points kept evenly spread in little room: every
/// `stride`-th point, the stride doubling when the points reach twice
/// `most`; the last point is always kept.
#[derive(Clone, Default)]
pub(super) struct Thinned {
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
    /// game order have come (at most [`REORDER_WINDOW`](super::REORDER_WINDOW) later).
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

    pub(super) fn count_all(&mut self) {
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

    pub(super) fn at(&self, name: Option<&str>) -> Option<usize> {
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

    pub(super) fn push_history(&mut self, i: usize, point: Point) {
        if let Some((most, series)) = self.history.as_mut() {
            series[i].push(point, *most);
        }
    }

    fn final_rows(mut self) -> Vec<Row> {
        if self.solo {
            self.finish_solo();
        } else {
            self.finish_table();
        }
        self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournament::standings::testing::table_game;
    use crate::tournament::standings::{compute, history};
    use serde_json::json;

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
}
