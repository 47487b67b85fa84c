//! Each entrant's games on each array (Chomp), or on each value of
//! whatever `array` a game's records hold.

use serde::Serialize;

use super::state::{ArrayTally, Tally};
use super::tables::SHARED_WINS;
use crate::game::GameRecord;
use crate::games::chomp::standings::markdown_table;
use crate::text;

impl Tally {
    /// The games of `entrant` on `array`: each entrant's own list grows as
    /// it plays on arrays, whenever it entered.
    pub(super) fn array_tally(&mut self, array: &str, entrant: usize) -> &mut ArrayTally {
        let at = match self.arrays.iter().position(|a| a == array) {
            Some(at) => at,
            None => {
                self.arrays.push(array.to_owned());
                self.arrays.len() - 1
            }
        };
        let tallies = &mut self.entrants[entrant].arrays;
        if tallies.len() <= at {
            tallies.resize(at + 1, ArrayTally::default());
        }
        &mut tallies[at]
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
        for (at, array) in all.arrays.iter().enumerate() {
            for entrant in &all.entrants {
                let Some(tally) = entrant.arrays.get(at) else {
                    continue;
                };
                if tally.scores.count() == 0 {
                    continue;
                }
                let (mean, half) = tally.scores.mean_ci95();
                out.push(ArrayRow {
                    array: array.clone(),
                    entrant: entrant.name.clone(),
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

pub(super) fn array_of(record: &GameRecord) -> Option<String> {
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
