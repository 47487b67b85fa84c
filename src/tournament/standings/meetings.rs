//! Games between players: every two entrants that met, their games
//! against each other from the first's side, and the Elo of each such
//! pair (as fastchess gives it for a match, here for every pairing of a
//! round robin or gauntlet).

use serde::Serialize;

use super::entrant::{Row, finite_or_null, finite_or_null_option};
use super::state::Tally;
use crate::game::GameRecord;
use crate::stats::{Elo, EloModel};

/// Two entrants who met, from the first's side: their games against each
/// other and the first's Elo against the second.
#[derive(Clone, Debug, Serialize)]
pub struct PairRow {
    pub entrant: String,
    pub opponent: String,
    /// Their games against each other (void ones left out).
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Complete game pairs (games `2k − 1` and `2k`, both between the
    /// two) scoring 0, ¼, ½, ¾, 1 for the first.
    pub pentanomial: [u64; 5],
    /// `pentanomial` when a pair is complete, else `trinomial`.
    pub model: EloModel,
    /// The Elo, the bounds of its 95% interval and half its width (the
    /// `±`); null where unbounded.
    #[serde(serialize_with = "finite_or_null")]
    pub elo: f64,
    #[serde(serialize_with = "finite_or_null")]
    pub elo_low: f64,
    #[serde(serialize_with = "finite_or_null")]
    pub elo_high: f64,
    #[serde(serialize_with = "finite_or_null")]
    pub elo_error: f64,
    /// Normalised Elo and half its 95% interval; null when every game
    /// (pair) scored the same.
    #[serde(serialize_with = "finite_or_null_option")]
    pub nelo: Option<f64>,
    pub nelo_error: f64,
    /// Likelihood of superiority, 0 to 1.
    pub los: f64,
}

impl PairRow {
    fn of(entrant: &str, opponent: &str, games: [u64; 3], pairs: [u64; 5]) -> Option<PairRow> {
        let e = Elo::of(games, pairs)?;
        // An even score's estimate may come out as -0.0: written as 0.
        let (elo, low, high) = (e.elo + 0.0, e.low + 0.0, e.high + 0.0);
        Some(PairRow {
            entrant: entrant.to_owned(),
            opponent: opponent.to_owned(),
            games: games.iter().sum(),
            wins: games[2],
            draws: games[1],
            losses: games[0],
            pentanomial: pairs,
            model: e.model,
            elo,
            elo_low: low,
            elo_high: high,
            elo_error: e.error(),
            nelo: e.nelo,
            nelo_error: e.nelo_error,
            los: e.los,
        })
    }

    pub fn estimate(&self) -> Elo {
        Elo {
            model: self.model,
            elo: self.elo,
            low: self.elo_low,
            high: self.elo_high,
            nelo: self.nelo,
            nelo_error: self.nelo_error,
            los: self.los,
        }
    }

    /// Its games lost, drawn, won.
    pub fn outcomes(&self) -> [u64; 3] {
        [self.losses, self.draws, self.wins]
    }
}

impl Tally {
    /// Adds a game between players to the games of every two distinct
    /// entrants at its table, by their places ([`GameRecord::head_to_head`]):
    /// a game of two seats joins its pair (games `2k − 1`, `2k`); at a
    /// larger table it is a single game of each two. An entrant seated
    /// twice is no one's opponent in that game.
    pub(super) fn count_meetings(&mut self, record: &GameRecord) {
        let Some(meetings) = self.meetings.as_mut() else {
            return;
        };
        let seated: Vec<(usize, &str)> = record
            .results
            .iter()
            .filter_map(|r| {
                let name = r.entrant.as_deref()?;
                Some((*self.seat.get(name)?, name))
            })
            .collect();
        let once: Vec<(usize, &str)> = seated
            .iter()
            .copied()
            .filter(|(i, _)| seated.iter().filter(|(j, _)| j == i).count() == 1)
            .collect();
        let two_seats = record.results.len() == 2;
        for (k, &(i, a)) in once.iter().enumerate() {
            for &(j, b) in &once[k + 1..] {
                let ((lo, first), second) = if i < j {
                    ((i, a), (j, b))
                } else {
                    ((j, b), (i, a))
                };
                let Some(score) = record.head_to_head(false, first, second.1) else {
                    continue;
                };
                let games = meetings.entry((lo, second.0)).or_default();
                if two_seats {
                    games.add(record.index, score);
                } else {
                    games.add_unpaired(score);
                }
            }
        }
    }

    /// The games of the first two entrants against each other, from the
    /// first's side: lost, drawn, won, and the complete pairs.
    pub(super) fn first_two(&self) -> Option<([u64; 3], [u64; 5])> {
        let games = self.meetings.as_ref()?.get(&(0, 1))?;
        Some((games.games, games.pairs()))
    }

    /// Every two entrants that met, once each: from the gauntlet
    /// entrant's side when one of them is it, else from the side of the
    /// one ranked higher in `rows`; in that order (the first's rank, then
    /// the second's). Empty for one-player games, and past [`MOST_MET`]
    /// entrants.
    pub fn meetings(&self, rows: &[Row]) -> Vec<PairRow> {
        if self.meetings.is_none() {
            return Vec::new();
        }
        // The records still waiting for their turn count too.
        let mut tally = self.clone();
        tally.count_all();
        let Some(meetings) = &tally.meetings else {
            return Vec::new();
        };
        // The gauntlet entrant first, then the standings' order.
        let place = |i: usize| -> usize {
            let name = &self.entrants[i].name;
            let ranked = rows.iter().position(|r| &r.entrant == name);
            match self.against == Some(i) {
                true => 0,
                false => 1 + ranked.unwrap_or(rows.len() + i),
            }
        };
        let mut out: Vec<(usize, usize, PairRow)> = meetings
            .iter()
            .filter_map(|(&(i, j), games)| {
                let (mut outcomes, mut pairs) = (games.games, games.pairs());
                let (first, second) = if place(i) <= place(j) {
                    (i, j)
                } else {
                    outcomes.reverse();
                    pairs.reverse();
                    (j, i)
                };
                let (a, b) = (&self.entrants[first].name, &self.entrants[second].name);
                Some((
                    place(first),
                    place(second),
                    PairRow::of(a, b, outcomes, pairs)?,
                ))
            })
            .collect();
        out.sort_by_key(|&(a, b, _)| (a, b));
        out.into_iter().map(|(_, _, row)| row).collect()
    }

    /// Whether every pair of entrants is tallied: games between players,
    /// within [`MOST_MET`] entrants, and a tally that did not grow.
    pub fn tallies_meetings(&self) -> bool {
        self.meetings.is_some()
    }
}

#[cfg(test)]
mod tests {
    use crate::stats::EloModel;
    use crate::tournament::standings::testing::table_game;
    use crate::tournament::standings::{MOST_MET, Tally};

    /// Tables of three: every two who shared one score by their places
    /// there, as single games (no pairs); the first row of each pair is
    /// the one ranked higher.
    #[test]
    fn tables_of_three_give_each_two_their_relative_places() {
        let names: Vec<String> = (0..3).map(|k| format!("e{k}")).collect();
        let mut tally = Tally::new(false, &names, None, None);
        // e0 ahead of e1 ahead of e2, then e1 and e2 tie behind e0.
        tally.add(table_game(1, &[3, 2, 1]));
        tally.add(table_game(2, &[3, 1, 1]));
        let rows = tally.rows();
        let pairs = tally.meetings(&rows);
        let got: Vec<(&str, &str, [u64; 3], EloModel)> = pairs
            .iter()
            .map(|p| (&p.entrant[..], &p.opponent[..], p.outcomes(), p.model))
            .collect();
        assert_eq!(
            got,
            [
                ("e0", "e1", [0, 0, 2], EloModel::Trinomial),
                ("e0", "e2", [0, 0, 2], EloModel::Trinomial),
                ("e1", "e2", [0, 1, 1], EloModel::Trinomial),
            ]
        );
        assert!(pairs.iter().all(|p| p.pentanomial == [0; 5]));
    }

    #[test]
    fn past_the_most_entrants_no_pair_is_tallied() {
        let names: Vec<String> = (0..=MOST_MET).map(|k| format!("e{k}")).collect();
        let mut tally = Tally::new(false, &names, None, None);
        tally.add(table_game(1, &[2, 1]));
        assert!(!tally.tallies_meetings());
        assert!(tally.meetings(&tally.rows()).is_empty());
        let few = Tally::new(false, &names[..3], None, None);
        assert!(few.tallies_meetings());
    }
}
