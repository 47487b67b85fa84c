//! Standings computed from a tournament's records alone — so a run, a
//! resumed run and merged shards give the same standings from the same
//! records. Records are taken in game order, one at a time, into a
//! [`Tally`] that holds aggregates, not records.
//!
//! - Games between players (Chomp, external games): a Weng-Lin (OpenSkill)
//!   rating per entrant, updated game by game from the game's places (the
//!   judge's `ranking` when it sends one, else the ranking of the scores,
//!   equal scores tying), with its uncertainty; mean score with a 95%
//!   interval; wins (a shared win counts `1/k`); starvations, crashes,
//!   disqualifications; the slowest move. For every two entrants that met,
//!   their games against each other and the first's logistic Elo against
//!   the second, from their game pairs (pentanomial) or, with no pair
//!   complete, from single games (trinomial), with its 95% interval, nElo
//!   and LOS ([`meetings`]); with exactly two entrants, in each row too.
//! - One-player games: win rate with Wilson's 95% interval, and the paired
//!   difference to the best entrant (per game, won minus the best's won,
//!   averaged, with a 95% interval), since all entrants play the same games.

mod arrays;
mod entrant;
mod grades;
mod meetings;
mod order;
mod pairs;
mod ratings;
mod state;
mod tables;
mod tally;

pub use arrays::{ArrayRow, array_csv, array_table};
pub use entrant::{EloFigures, FAILURES, Failure, Failures, Point, Row};
pub use grades::{crashed_every_game, grades_csv};
pub use meetings::PairRow;
pub use order::{GameSet, InOrder, REORDER_WINDOW};
pub use state::{MOST_MET, MOST_PAIRED, Tally, paired};
pub use tables::{
    SHARED_WINS, cpu, csv, elo_cell, elo_line, memory, pairs_csv, pairs_heading, pairs_table,
    pairs_text, pentanomial_cell, table,
};
pub use tally::Standing;

use crate::game::GameRecord;

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

/// Records for the tests of every part.
#[cfg(test)]
mod testing {
    use crate::game::GameRecord;
    use serde_json::{Value, json};

    pub(super) fn records(values: Vec<Value>) -> Vec<GameRecord> {
        values
            .into_iter()
            .map(|mut v| {
                v["game"] = json!("g");
                v["seed"] = json!(1);
                serde_json::from_value(v).unwrap()
            })
            .collect()
    }

    pub(super) fn table_game(i: u64, scores: &[u8]) -> GameRecord {
        let results: Vec<Value> = scores
            .iter()
            .enumerate()
            .map(|(k, score)| json!({"entrant": format!("e{k}"), "score": score, "status": "ok"}))
            .collect();
        records(vec![
            json!({"index": i, "results": results, "array": format!("a{}", i % 2)}),
        ])
        .remove(0)
    }
}
