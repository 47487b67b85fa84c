//! The [`Tally`]: the standings built one record at a time, each record
//! counted for every entrant at its table; what each kind of game adds is
//! in [`super::pairs`] (one-player games), [`super::ratings`] (games
//! between players) and [`super::arrays`] (each array). What it holds is
//! in [`super::state`].

use super::entrant::{Failure, Failures, Point, Row, rank_by};
use super::order::InOrder;
use super::state::{EntrantTally, PairTally, Tally, new_meetings, paired};
use crate::game::GameRecord;
use crate::outcome::Status;

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
        let mut tally = Tally {
            solo,
            entrants: Vec::new(),
            seat: std::collections::HashMap::new(),
            against: None,
            pairs: Vec::new(),
            meetings: None,
            history,
            arrays: Vec::new(),
            order: InOrder::default(),
        };
        for name in entrants {
            tally.push_entrant(name);
        }
        let n = entrants.len();
        tally.against = against.and_then(|name| tally.at(Some(name)));
        tally.pairs = vec![PairTally::default(); if paired(solo, n) { n * (n - 1) / 2 } else { 0 }];
        tally.meetings = new_meetings(solo, n);
        tally
    }

    /// A new entrant (a league's new version), counted from its first
    /// game. The pairs of one-player games and the games of each two
    /// entrants (their Elo) are for a fixed set of entrants: a tally that
    /// grows keeps neither.
    pub fn add_entrant(&mut self, name: &str) {
        self.push_entrant(name);
        self.pairs.clear();
        self.meetings = None;
    }

    /// One more entrant, with nothing counted: the one place where the
    /// tallies of each entrant grow. A name given twice is the first.
    fn push_entrant(&mut self, name: &str) {
        let i = self.entrants.len();
        self.seat.entry(name.to_owned()).or_insert(i);
        self.entrants.push(EntrantTally::new(name));
    }

    /// An entrant's games and wins counted so far, and in a game between
    /// players its rating and uncertainty (for a league's matchmaking,
    /// without ranking everyone as [`Tally::rows`] does).
    pub fn standing(&self, name: &str) -> Option<Standing> {
        let entrant = &self.entrants[self.at(Some(name))?];
        Some(Standing {
            games: entrant.row.games,
            wins: entrant.row.wins,
            rating: (!self.solo).then_some((entrant.rating.rating, entrant.rating.uncertainty)),
        })
    }

    /// One entrant's standing over the games counted so far (empty
    /// without `history`), without counting anything for the others.
    pub fn history_of(&self, name: &str) -> Vec<Point> {
        self.at(Some(name))
            .map_or_else(Vec::new, |i| self.entrants[i].history.points())
    }

    /// Takes one record: counted now, or once the records before it in
    /// game order have come (at most [`REORDER_WINDOW`](super::REORDER_WINDOW)
    /// later).
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
        all.entrants.iter().map(|e| e.history.points()).collect()
    }

    /// Each entrant's games that did not end `ok`: the first and how
    /// many, by entrant (those with none left out).
    pub fn failures(&self) -> Vec<(String, Failures)> {
        let mut all = self.clone();
        all.count_all();
        all.entrants
            .into_iter()
            .filter(|e| e.failures.count > 0)
            .map(|e| (e.name, e.failures))
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
                    self.entrants[i].row.internal += 1;
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
                let failures = &mut self.entrants[i].failures;
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
        if let Some(most) = self.history {
            self.entrants[i].history.push(point, most);
        }
    }

    fn final_rows(mut self) -> Vec<Row> {
        if self.solo {
            self.finish_solo();
        } else {
            self.finish_table();
        }
        let mut rows: Vec<Row> = self.entrants.into_iter().map(|e| e.row).collect();
        match self.solo {
            true => rank_by(&mut rows, |r| r.win_rate.unwrap_or(0.0)),
            false => rank_by(&mut rows, |r| r.conservative.unwrap_or(0.0)),
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournament::standings::testing::{records, table_game};
    use crate::tournament::standings::{compute, history};
    use proptest::strategy::Strategy;
    use serde_json::{Value, json};

    /// Game `index` of `names` on `array`: one-player games won or lost
    /// (`solo`), else scored; `crashed` seats crash.
    fn game(solo: bool, index: u64, seats: &[(&str, u8)], array: u8) -> GameRecord {
        let results: Vec<Value> = seats
            .iter()
            .map(|&(name, score)| {
                let status = if score == 0 { "crashed" } else { "ok" };
                match solo {
                    true => json!({"entrant": name, "won": score > 2, "status": status}),
                    false => json!({"entrant": name, "score": score, "status": status}),
                }
            })
            .collect();
        // A game's setup is flattened into its record, Chomp's `array` too.
        records(vec![
            json!({"index": index, "results": results, "array": format!("a{array}")}),
        ])
        .remove(0)
    }

    /// The league: three entrants play on two arrays, then a
    /// fourth enters and plays (it panicked there, `index out of
    /// bounds`: the per-array tally kept one entry per entrant it had).
    #[test]
    fn an_entrant_added_after_games_on_arrays_is_tallied_on_them() {
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let mut tally = Tally::new(false, &names, None, Some(100));
        tally.add(game(false, 1, &[("a", 3), ("b", 2), ("c", 1)], 0));
        tally.add(game(false, 2, &[("c", 3), ("a", 2), ("b", 1)], 1));
        tally.add_entrant("d");
        tally.add(game(false, 3, &[("d", 3), ("a", 2), ("b", 1)], 0));
        tally.add(game(false, 4, &[("c", 3), ("d", 2)], 1));
        tally.add_entrant("e");
        tally.add(game(false, 5, &[("e", 3), ("d", 2)], 2));
        let d: Vec<(String, u64)> = tally
            .per_array()
            .into_iter()
            .filter(|r| r.entrant == "d")
            .map(|r| (r.array, r.games))
            .collect();
        assert_eq!(d, [("a0".into(), 1), ("a1".into(), 1), ("a2".into(), 1)]);
        let rows = tally.rows();
        assert_eq!(rows.len(), 5);
        assert_eq!(rows.iter().find(|r| r.entrant == "d").unwrap().games, 3);
        assert_eq!(tally.history_of("e").len(), 1);
        assert!(tally.standing("e").unwrap().rating.is_some());
    }

    proptest::proptest! {
        /// Entrants added between games, in any order and at any time
        /// before their first game, never make the tally panic, and each
        /// is tallied as if it had been there from the start: every row,
        /// history, array and failure as a tally of them all gives, but
        /// the paired differences and the Elo, which a tally that grows
        /// does not keep.
        #[test]
        fn entrants_added_between_games_count_as_if_there_from_the_start(
            solo in proptest::bool::ANY,
            order in proptest::strategy::Just((0..6).collect::<Vec<usize>>()).prop_shuffle(),
            joins in proptest::collection::vec(0usize..30, 6),
            games in proptest::collection::vec(
                (proptest::collection::vec((0usize..6, 0u8..5), 1..4), 0u8..3),
                1..30,
            ),
        ) {
            let names: Vec<String> = (0..6).map(|k| format!("e{k}")).collect();
            let mut growing = Tally::new(solo, &[], None, Some(8));
            let mut added: Vec<String> = Vec::new();
            let mut records = Vec::new();
            for (g, (seats, array)) in games.iter().enumerate() {
                // Those whose time has come, and any seated now.
                let seated: Vec<&String> = seats.iter().map(|&(k, _)| &names[k]).collect();
                for &k in &order {
                    let name = &names[k];
                    if !added.contains(name) && (joins[k] <= g || seated.contains(&name)) {
                        growing.add_entrant(name);
                        added.push(name.clone());
                    }
                }
                let seats: Vec<(&str, u8)> =
                    seats.iter().map(|&(k, s)| (names[k].as_str(), s)).collect();
                let record = game(solo, g as u64 + 1, &seats, *array);
                records.push(record.clone());
                growing.add(record);
            }
            let mut from_the_start = Tally::new(solo, &added, None, Some(8));
            for record in records {
                from_the_start.add(record);
            }
            let json = |tally: &Tally| {
                let rows: Vec<Row> = tally
                    .rows()
                    .into_iter()
                    .map(|mut r| {
                        (r.paired_diff, r.paired_diff_ci, r.paired_vs, r.elo) =
                            (None, None, None, None);
                        r
                    })
                    .collect();
                serde_json::to_string(&(rows, tally.per_array())).unwrap()
            };
            proptest::prop_assert_eq!(json(&growing), json(&from_the_start));
            proptest::prop_assert_eq!(growing.history(), from_the_start.history());
            let failures = |tally: &Tally| -> Vec<(String, u64)> {
                tally.failures().into_iter().map(|(e, f)| (e, f.count)).collect()
            };
            proptest::prop_assert_eq!(failures(&growing), failures(&from_the_start));
        }
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
}
