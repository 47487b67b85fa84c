//! One-player games: each entrant's win rate, and every pair of entrants'
//! paired difference over the deals both played.

use super::entrant::Point;
use super::state::{PairTally, Tally};
use crate::game::GameRecord;
use crate::stats::{Moments, wilson95};

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

impl Tally {
    pub(super) fn count_solo(&mut self, record: &GameRecord) {
        let mut won: Vec<(usize, bool)> = Vec::new();
        for result in &record.results {
            let Some(i) = self.at(result.entrant.as_deref()) else {
                continue;
            };
            let w = result.won == Some(true);
            let row = &mut self.entrants[i].row;
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

    /// Each entrant's win rate and its paired difference to the best (or
    /// the gauntlet's entrant); the rows are ranked after.
    pub(super) fn finish_solo(&mut self) {
        for row in self.entrants.iter_mut().map(|e| &mut e.row) {
            let (low, high) = wilson95(row.wins as u64, row.games);
            row.win_rate = Some(if row.games == 0 {
                0.0
            } else {
                row.wins / row.games as f64
            });
            row.win_rate_low = Some(low);
            row.win_rate_high = Some(high);
        }
        let entrants = &self.entrants;
        let best = self.against.unwrap_or_else(|| {
            (0..entrants.len())
                .max_by(|&a, &b| {
                    let rate = |i: usize| entrants[i].row.win_rate.unwrap_or(0.0);
                    rate(a).total_cmp(&rate(b)).then(b.cmp(&a))
                })
                .unwrap_or(0)
        });
        let vs = self.against.map(|i| self.entrants[i].name.clone());
        let n = self.entrants.len();
        if self.pairs.is_empty() {
            // Too many entrants to compare every pair (or a tally that
            // grew): no paired column.
            return;
        }
        for i in 0..n {
            let (mean, half) = match i.cmp(&best) {
                std::cmp::Ordering::Equal => (0.0, 0.0),
                std::cmp::Ordering::Less => self.pairs[pair_slot(i, best, n)].mean_ci95(false),
                std::cmp::Ordering::Greater => self.pairs[pair_slot(best, i, n)].mean_ci95(true),
            };
            let row = &mut self.entrants[i].row;
            row.paired_diff = Some(mean);
            row.paired_diff_ci = Some(half);
            row.paired_vs = vs.clone();
        }
    }
}

/// Where pair `(i, j)`, `i < j`, of `n` entrants is kept.
fn pair_slot(i: usize, j: usize, n: usize) -> usize {
    i * n - i * (i + 1) / 2 + (j - i - 1)
}

#[cfg(test)]
mod tests {
    use crate::tournament::standings::compute;
    use crate::tournament::standings::testing::records;
    use serde_json::{Value, json};

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
}
