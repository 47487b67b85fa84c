//! Standings computed from a tournament's records alone — so a run, a
//! resumed run and merged shards give the same standings from the same
//! records. Records are taken in game order.
//!
//! - Chomp: a Weng-Lin (OpenSkill) rating per entrant, updated game by game
//!   from the ranking of the scores (equal scores tie), with its
//!   uncertainty; mean score with a 95% interval; wins (a shared win counts
//!   `1/k`); starvations, crashes, disqualifications; the slowest move.
//! - One-player games: win rate with Wilson's 95% interval, and the paired
//!   difference to the best entrant (per game, won minus the best's won,
//!   averaged, with a 95% interval), since all entrants play the same games.

use serde::Serialize;
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

use crate::game::{GameRecord, SeatResult};
use crate::games::chomp::standings::markdown_table;
use crate::outcome::Status;
use crate::stats::{mean_ci95, wilson95};
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
    /// The largest peak resident memory of its bot in any game, bytes.
    pub max_memory_bytes: u64,
    /// The most CPU time its bot used in any game.
    pub max_cpu_micros: u64,
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
            max_memory_bytes: 0,
            max_cpu_micros: 0,
        }
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
        self.max_memory_bytes = self
            .max_memory_bytes
            .max(result.peak_memory_bytes.unwrap_or(0));
        self.max_cpu_micros = self.max_cpu_micros.max(result.cpu_micros.unwrap_or(0));
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

/// The standings of `entrants` from `records` (of one tournament run).
pub fn compute(solo: bool, entrants: &[String], records: &[GameRecord]) -> Vec<Row> {
    compute_with_history(solo, entrants, records, None, None)
}

/// As [`compute`]; in a gauntlet (`against` its entrant), one-player
/// games' paired differences are to that entrant rather than to the best.
pub fn compute_against(
    solo: bool,
    entrants: &[String],
    records: &[GameRecord],
    against: Option<&str>,
) -> Vec<Row> {
    compute_with_history(solo, entrants, records, None, against)
}

/// Each entrant's standing after each game it played, in game order.
pub fn history(solo: bool, entrants: &[String], records: &[GameRecord]) -> Vec<Vec<Point>> {
    let mut history = vec![Vec::new(); entrants.len()];
    compute_with_history(solo, entrants, records, Some(&mut history), None);
    history
}

fn compute_with_history(
    solo: bool,
    entrants: &[String],
    records: &[GameRecord],
    history: Option<&mut Vec<Vec<Point>>>,
    against: Option<&str>,
) -> Vec<Row> {
    let mut rows: Vec<Row> = entrants.iter().map(|e| Row::new(e)).collect();
    let at = |name: &str| entrants.iter().position(|e| e == name);
    // A game whose judge failed is void: it is no game of anyone's, only
    // an `internal` error of each of its players, which is the truth of
    // their records.
    let (void, mut records): (Vec<&GameRecord>, Vec<&GameRecord>) =
        records.iter().partition(|r| r.is_void());
    for result in void.iter().flat_map(|r| &r.results) {
        if let Some(i) = result.entrant.as_deref().and_then(at) {
            rows[i].internal += 1;
        }
    }
    records.sort_by_key(|r| r.index);
    if solo {
        let against = against.and_then(|name| at(name).map(|i| (i, name)));
        solo_rows(&mut rows, &records, at, history, against);
    } else {
        table_rows(&mut rows, &records, at, history);
    }
    rows
}

fn solo_rows(
    rows: &mut [Row],
    records: &[&GameRecord],
    at: impl Fn(&str) -> Option<usize>,
    mut history: Option<&mut Vec<Vec<Point>>>,
    against: Option<(usize, &str)>,
) {
    // Per game, who won: for the paired differences.
    let mut won: Vec<Vec<Option<f64>>> = vec![Vec::new(); rows.len()];
    for record in records {
        let mut this_game = vec![None; rows.len()];
        for result in &record.results {
            let Some(i) = result.entrant.as_deref().and_then(&at) else {
                continue;
            };
            let w = f64::from(u8::from(result.won == Some(true)));
            let row = &mut rows[i];
            row.games += 1;
            row.wins += w;
            row.count(result);
            this_game[i] = Some(w);
            if let Some(history) = history.as_deref_mut() {
                let (low, high) = wilson95(row.wins as u64, row.games);
                history[i].push(Point {
                    index: record.index,
                    value: row.wins / row.games as f64,
                    low,
                    high,
                });
            }
        }
        for (i, w) in this_game.into_iter().enumerate() {
            won[i].push(w);
        }
    }
    for row in rows.iter_mut() {
        let (low, high) = wilson95(row.wins as u64, row.games);
        row.win_rate = Some(if row.games == 0 {
            0.0
        } else {
            row.wins / row.games as f64
        });
        row.win_rate_low = Some(low);
        row.win_rate_high = Some(high);
    }
    let best = against.map(|(i, _)| i).unwrap_or_else(|| {
        (0..rows.len())
            .max_by(|&a, &b| {
                let rate = |i: usize| rows[i].win_rate.unwrap_or(0.0);
                rate(a).total_cmp(&rate(b)).then(b.cmp(&a))
            })
            .unwrap_or(0)
    });
    for i in 0..rows.len() {
        let diffs: Vec<f64> = won[i]
            .iter()
            .zip(&won[best])
            .filter_map(|(a, b)| Some((*a)? - (*b)?))
            .collect();
        let (mean, half) = mean_ci95(&diffs);
        rows[i].paired_diff = Some(mean);
        rows[i].paired_diff_ci = Some(half.unwrap_or(0.0));
        rows[i].paired_vs = against.map(|(_, name)| name.to_owned());
    }
    rank_by(rows, |r| r.win_rate.unwrap_or(0.0));
}

fn table_rows(
    rows: &mut [Row],
    records: &[&GameRecord],
    at: impl Fn(&str) -> Option<usize>,
    mut history: Option<&mut Vec<Vec<Point>>>,
) {
    let config = WengLinConfig::new();
    let mut ratings = vec![WengLinRating::new(); rows.len()];
    let mut scores: Vec<Vec<f64>> = vec![Vec::new(); rows.len()];
    for record in records {
        // The game's places decide wins and ratings: a judge's ranking
        // where it gives one, else the scores.
        let places = record.places();
        let seats: Vec<(usize, f64, &SeatResult, u32)> = record
            .results
            .iter()
            .zip(places)
            .filter_map(|(r, place)| {
                Some((
                    at(r.entrant.as_deref()?)?,
                    r.points().unwrap_or(0.0),
                    r,
                    place,
                ))
            })
            .collect();
        if seats.is_empty() {
            continue;
        }
        let best = seats.iter().map(|s| s.3).min().unwrap_or(1);
        let winners = seats.iter().filter(|s| s.3 == best).count() as f64;
        for &(i, score, result, place) in &seats {
            let row = &mut rows[i];
            row.games += 1;
            if place == best {
                row.wins += 1.0 / winners;
            }
            row.count(result);
            scores[i].push(score);
        }
        // Rank 1 is the best place; equal places share a rank.
        let teams: Vec<[WengLinRating; 1]> = seats.iter().map(|s| [ratings[s.0]]).collect();
        let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = seats
            .iter()
            .zip(&teams)
            .map(|(s, team)| {
                let rank = 1 + seats.iter().filter(|o| o.3 < s.3).count();
                (&team[..], MultiTeamOutcome::new(rank))
            })
            .collect();
        for (s, new) in seats.iter().zip(weng_lin_multi_team(&ranked, &config)) {
            ratings[s.0] = new[0];
            if let Some(history) = history.as_deref_mut() {
                let r = new[0];
                history[s.0].push(Point {
                    index: record.index,
                    value: r.rating,
                    low: r.rating - 2.0 * r.uncertainty,
                    high: r.rating + 2.0 * r.uncertainty,
                });
            }
        }
    }
    for (i, row) in rows.iter_mut().enumerate() {
        let (mean, half) = mean_ci95(&scores[i]);
        row.mean_score = Some(mean);
        row.mean_score_ci = Some(half.unwrap_or(0.0));
        row.rating = Some(ratings[i].rating);
        row.uncertainty = Some(ratings[i].uncertainty);
        row.conservative = Some(ratings[i].rating - 3.0 * ratings[i].uncertainty);
    }
    rank_by(rows, |r| r.conservative.unwrap_or(0.0));
}

/// Sorts best first by `key` (ties keep entrant order) and numbers ranks,
/// equal keys sharing one.
fn rank_by(rows: &mut [Row], key: impl Fn(&Row) -> f64) {
    let mut order: Vec<usize> = (0..rows.len()).collect();
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
    rows.sort_by_key(|r| r.rank);
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// The standings as a table for the terminal.
pub fn table(solo: bool, rows: &[Row]) -> String {
    // Every column but the entrant's name holds numbers.
    let numbers = |header: &[&str]| (0..header.len()).filter(|&i| i != 1).collect::<Vec<_>>();
    let mut t;
    if solo {
        let vs = match rows.first().and_then(|r| r.paired_vs.as_deref()) {
            Some(name) => format!("vs {} (paired)", text::terminal(name)),
            None => "vs best (paired)".to_owned(),
        };
        let mut header = vec![
            "rank", "entrant", "games", "wins", "win rate", "95% CI", &vs,
        ];
        header.extend(FAILURES);
        header.extend(["unnecessary", "slowest", "memory"]);
        t = markdown_table(&header, &numbers(&header));
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
                format!(
                    "{:+.1} ± {:.1} pts",
                    100.0 * r.paired_diff.unwrap_or(0.0),
                    100.0 * r.paired_diff_ci.unwrap_or(0.0)
                ),
            ];
            cells.extend(r.failures().map(|n| n.to_string()));
            cells.extend([
                r.unnecessary.to_string(),
                human_micros(r.slowest_micros),
                memory(r.max_memory_bytes),
            ]);
            t.add_row(cells);
        }
    } else {
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
        header.extend(FAILURES);
        header.extend(["slowest", "memory"]);
        t = markdown_table(&header, &numbers(&header));
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
            cells.extend(r.failures().map(|n| n.to_string()));
            cells.extend([human_micros(r.slowest_micros), memory(r.max_memory_bytes)]);
            t.add_row(cells);
        }
    }
    if let Some(name) = rows.first().and_then(|r| r.paired_vs.as_deref()) {
        format!(
            "{t}\ngauntlet: each entrant's paired difference is to {}, the gauntlet entrant",
            text::terminal(name)
        )
    } else if solo {
        t.to_string()
    } else {
        format!("{t}\n{SHARED_WINS}")
    }
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
            cells.extend(
                [
                    r.unnecessary,
                    r.slowest_micros,
                    r.max_memory_bytes,
                    r.max_cpu_micros,
                ]
                .map(|n| n.to_string()),
            );
            cells
        }),
    )
}

/// A bot's largest peak memory for the table: `-` when none was measured
/// (records from before the referee measured it).
pub fn memory(bytes: u64) -> String {
    if bytes == 0 {
        "-".into()
    } else {
        crate::bot::usage::human_bytes(bytes)
    }
}

/// The line printed under every table that shows shared (fractional)
/// wins: games between players.
pub const SHARED_WINS: &str =
    "wins: a game won alone counts 1; a win shared by k players (equal best score) counts 1/k";

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

/// Games between players whose records hold more than one `array`: each
/// entrant's games, wins and mean score on each array, arrays in the
/// order they first appear, entrants in the given order. Empty when the
/// records hold one array or none.
pub fn per_array(entrants: &[String], records: &[GameRecord]) -> Vec<ArrayRow> {
    let mut records: Vec<&GameRecord> = records.iter().filter(|r| !r.is_void()).collect();
    records.sort_by_key(|r| r.index);
    let mut arrays: Vec<String> = Vec::new();
    for r in &records {
        if let Some(a) = array_of(r)
            && !arrays.contains(&a)
        {
            arrays.push(a);
        }
    }
    if arrays.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for array in &arrays {
        for entrant in entrants {
            let (mut games, mut wins, mut scores) = (0, 0.0, Vec::new());
            for r in records
                .iter()
                .filter(|r| array_of(r).as_ref() == Some(array))
            {
                let Some(seat) = r.seat_of(entrant) else {
                    continue;
                };
                games += 1;
                wins += r.win_shares()[seat];
                scores.push(r.results[seat].points().unwrap_or(0.0));
            }
            if games == 0 {
                continue;
            }
            let (mean, half) = mean_ci95(&scores);
            out.push(ArrayRow {
                array: array.clone(),
                entrant: entrant.clone(),
                games,
                wins,
                mean_score: mean,
                mean_score_ci: half.unwrap_or(0.0),
            });
        }
    }
    out
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
/// with the failures by kind and, for an entrant that could not play, why
/// (its error, lines joined with ` / `: a failed build, a program that cannot
/// start). Columns: `entrant,games,wins,win_rate,failures,timeouts,
/// crashed,incorrect,disqualified,internal,rank,note`.
pub fn grades_csv(rows: &[Row], records: &[GameRecord]) -> String {
    let mut header = vec!["entrant", "games", "wins", "win_rate", "failures"];
    header.extend(FAILURES);
    header.extend(["rank", "note"]);
    let mut rows: Vec<&Row> = rows.iter().collect();
    rows.sort_by(|a, b| a.entrant.cmp(&b.entrant));
    let lines = rows.into_iter().map(|r| {
        let note = records
            .iter()
            .filter_map(|g| g.result_of(&r.entrant))
            .find(|s| s.status().is_disqualification())
            .and_then(|s| s.error.as_deref())
            .map(|e| {
                // Its lines (a build log's quoted tail: `  | ...`) joined.
                e.lines()
                    .map(|l| l.trim().trim_start_matches('|').trim())
                    .filter(|l| !l.is_empty())
                    .collect::<Vec<_>>()
                    .join(" / ")
                    .chars()
                    .take(300)
                    .collect::<String>()
            })
            .unwrap_or_default();
        let win_rate = if r.games == 0 {
            String::new()
        } else {
            format!("{:.4}", r.wins / r.games as f64)
        };
        let mut cells = vec![
            text::csv_text(&r.entrant).into_owned(),
            r.games.to_string(),
            r.wins.to_string(),
            win_rate,
            r.faults().to_string(),
        ];
        cells.extend(r.failures().map(|n| n.to_string()));
        cells.extend([r.rank.to_string(), text::csv_text(&note).into_owned()]);
        cells
    });
    text::csv(&header, lines)
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
}
