//! Standings tables: one game's, and the aggregate over a run of games.

use comfy_table::{CellAlignment, Table, presets};

use super::game::{Fate, GameResult, PlayerResult};
use crate::stats::mean_ci95;
use crate::units::human_micros;

/// A Markdown-style table for the terminal with `header`, the columns
/// `right_aligned` (numbers) aligned right.
pub fn markdown_table(header: &[&str], right_aligned: &[usize]) -> Table {
    let mut table = Table::new();
    table
        .load_style(presets::ASCII_MARKDOWN)
        .set_header(header.to_vec());
    for &i in right_aligned {
        if let Some(column) = table.column_mut(i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// Ranks for scores in descending order: equal scores share a rank
/// (1, 1, 3, ...). Returns `(rank, index)` pairs, best first.
fn ranked(scores: &[f64]) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut out = Vec::with_capacity(order.len());
    for (place, &i) in order.iter().enumerate() {
        let rank = match out.last() {
            Some(&(rank, prev)) if scores[prev] == scores[i] => rank,
            _ => place + 1,
        };
        out.push((rank, i));
    }
    out
}

/// One game's standings.
pub fn game_table(result: &GameResult) -> String {
    let scores: Vec<f64> = result.players.iter().map(|p| p.score as f64).collect();
    let mut t = markdown_table(
        &[
            "rank",
            "player",
            "directory",
            "score",
            "ended",
            "eaten",
            "rounds",
            "slowest",
        ],
        &[0, 1, 3, 5, 6, 7],
    );
    for (rank, i) in ranked(&scores) {
        let p = &result.players[i];
        let ended = match (p.fate, p.died_round) {
            (Fate::Alive | Fate::Disqualified, _) | (_, None) => p.fate.name().to_owned(),
            (fate, Some(round)) => format!("{} (round {round})", fate.name()),
        };
        t.add_row(vec![
            rank.to_string(),
            p.player.to_string(),
            crate::text::terminal(&p.dir).into_owned(),
            p.score.to_string(),
            ended,
            p.eaten.to_string(),
            p.rounds.to_string(),
            human_micros(p.slowest_micros),
        ]);
    }
    t.to_string()
}

/// Totals per entrant over many games.
pub struct Aggregate {
    entrants: Vec<Tally>,
    games: u64,
}

struct Tally {
    dir: String,
    scores: Vec<f64>,
    wins: f64,
    starved: u64,
    crashed: u64,
    decomposed: u64,
    disqualified: u64,
    slowest_micros: u64,
}

impl Aggregate {
    pub fn new(dirs: &[String]) -> Aggregate {
        Aggregate {
            entrants: dirs
                .iter()
                .map(|dir| Tally {
                    dir: dir.clone(),
                    scores: vec![],
                    wins: 0.0,
                    starved: 0,
                    crashed: 0,
                    decomposed: 0,
                    disqualified: 0,
                    slowest_micros: 0,
                })
                .collect(),
            games: 0,
        }
    }

    pub fn add(&mut self, result: &GameResult) {
        self.games += 1;
        // A disqualified player never wins, nor shares a win, as in a
        // tournament's standings (`GameRecord::win_shares`).
        let played = |p: &PlayerResult| p.fate != Fate::Disqualified;
        let best = result
            .players
            .iter()
            .filter(|p| played(p))
            .map(|p| p.score)
            .max();
        let won = |p: &PlayerResult| played(p) && Some(p.score) == best;
        let winners = result.players.iter().filter(|p| won(p)).count();
        for p in &result.players {
            let tally = &mut self.entrants[p.entrant];
            tally.scores.push(p.score as f64);
            if won(p) {
                tally.wins += 1.0 / winners as f64;
            }
            match p.fate {
                Fate::Starved => tally.starved += 1,
                Fate::Crashed => tally.crashed += 1,
                Fate::Decomposed => tally.decomposed += 1,
                Fate::Disqualified => tally.disqualified += 1,
                Fate::Alive => {}
            }
            tally.slowest_micros = tally.slowest_micros.max(p.slowest_micros);
        }
    }

    pub fn games(&self) -> u64 {
        self.games
    }

    /// Mean score of entrant `i` so far.
    pub fn mean(&self, i: usize) -> f64 {
        mean_ci95(&self.entrants[i].scores).0
    }

    pub fn table(&self) -> String {
        let means: Vec<f64> = (0..self.entrants.len()).map(|i| self.mean(i)).collect();
        let mut t = markdown_table(
            &[
                "rank",
                "entrant",
                "directory",
                "games",
                "total",
                "mean",
                "95% CI",
                "wins",
                "starved",
                "crashed",
                "decomposed",
                "disqualified",
                "slowest",
            ],
            &[0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        );
        for (rank, i) in ranked(&means) {
            let e = &self.entrants[i];
            let (mean, half) = mean_ci95(&e.scores);
            let total: f64 = e.scores.iter().sum();
            t.add_row(vec![
                rank.to_string(),
                (i + 1).to_string(),
                crate::text::terminal(&e.dir).into_owned(),
                e.scores.len().to_string(),
                format!("{total}"),
                format!("{mean:.1}"),
                half.map_or("-".into(), |h| format!("±{h:.1}")),
                format_wins(e.wins),
                e.starved.to_string(),
                e.crashed.to_string(),
                e.decomposed.to_string(),
                e.disqualified.to_string(),
                human_micros(e.slowest_micros),
            ]);
        }
        t.to_string()
    }
}

fn format_wins(wins: f64) -> String {
    if wins.fract() == 0.0 {
        format!("{wins}")
    } else {
        format!("{wins:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_ranks() {
        assert_eq!(
            ranked(&[5.0, 9.0, 5.0, 1.0]),
            vec![(1, 1), (2, 0), (2, 2), (4, 3)]
        );
    }
}
