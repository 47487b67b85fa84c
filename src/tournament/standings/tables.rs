//! The standings for people and programs: the terminal's table, its
//! lines under it, and CSV.

use super::entrant::{EloFigures, FAILURES, Row};
use super::meetings::PairRow;
use super::state::{MOST_MET, MOST_PAIRED};
use crate::games::chomp::standings::markdown_table;
use crate::stats::EloModel;
use crate::text;
use crate::units::human_micros;

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
        let lines = match rows.first().and_then(|r| r.elo.as_ref()) {
            Some(e) => format!(
                "\n{}",
                crate::stats::match_lines(&e.estimate(), e.outcomes(), e.elo_pentanomial)
            ),
            None => String::new(),
        };
        format!("{t}\n{SHARED_WINS}\n{line}{lines}")
    } else {
        format!("{t}\n{SHARED_WINS}")
    }
}

/// Every column but the entrant's name (the second) holds numbers.
fn number_columns(header: &[&str]) -> Vec<usize> {
    (0..header.len()).filter(|&i| i != 1).collect()
}

/// A table of `header`'s columns, the failure classes' and `last`'s.
fn with_failures<'a>(mut header: Vec<&'a str>, last: &[&'a str]) -> comfy_table::Table {
    header.extend(FAILURES);
    header.extend(last);
    markdown_table(&header, &number_columns(&header))
}

/// A row's first cells in both tables: its rank, entrant and games.
fn lead_cells(r: &Row) -> Vec<String> {
    vec![
        r.rank.to_string(),
        text::terminal(&r.entrant).into_owned(),
        r.games.to_string(),
    ]
}

/// The table of a one-player game: win rates, paired differences.
fn solo_table(rows: &[Row]) -> comfy_table::Table {
    let vs = match rows.first().and_then(|r| r.paired_vs.as_deref()) {
        Some(name) => format!("vs {} (paired)", text::terminal(name)),
        None => "vs best (paired)".to_owned(),
    };
    let header = vec![
        "rank", "entrant", "games", "wins", "win rate", "95% CI", &vs,
    ];
    let mut t = with_failures(header, &["unnecessary", "slowest", "memory", "cpu"]);
    for r in rows {
        let mut cells = lead_cells(r);
        cells.extend([
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
        ]);
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
    let mut t = with_failures(header, &["slowest", "memory", "cpu"]);
    for r in rows {
        let mut cells = lead_cells(r);
        cells.extend([
            format!("{:.2}", r.rating.unwrap_or(0.0)),
            format!("{:.2}", r.uncertainty.unwrap_or(0.0)),
            format!("{:.1}", r.mean_score.unwrap_or(0.0)),
            format!("±{:.1}", r.mean_score_ci.unwrap_or(0.0)),
            format!("{:.2}", r.wins),
        ]);
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

/// Every two entrants that met, one row each (see [`Tally::meetings`]):
/// their games, the first's wins, draws and losses, its complete pairs,
/// and its Elo, normalised Elo and likelihood of superiority against the
/// second, as fastchess prints them.
///
/// [`Tally::meetings`]: super::Tally::meetings
pub fn pairs_table(pairs: &[PairRow]) -> String {
    let header = [
        "entrant",
        "opponent",
        "games",
        "W-D-L",
        "pentanomial",
        "Elo (95%)",
        "nElo (95%)",
        "LOS",
    ];
    let numbers: Vec<usize> = (2..header.len()).collect();
    let mut t = markdown_table(&header, &numbers);
    for p in pairs {
        let e = p.estimate();
        t.add_row([
            text::terminal(&p.entrant).into_owned(),
            text::terminal(&p.opponent).into_owned(),
            p.games.to_string(),
            format!("{}-{}-{}", p.wins, p.draws, p.losses),
            pentanomial_cell(p),
            e.fastchess_elo(),
            e.fastchess_nelo(),
            e.fastchess_los(),
        ]);
    }
    t.to_string()
}

/// A pair's pentanomial counts, `[0, 1, 3, 0, 1]`; `-` when no pair of
/// games is complete (its Elo is then from single games).
pub fn pentanomial_cell(p: &PairRow) -> String {
    match p.model {
        EloModel::Pentanomial => format!("[{}]", p.pentanomial.map(|c| c.to_string()).join(", ")),
        EloModel::Trinomial => "-".to_owned(),
    }
}

/// What the end of a run prints of the pairs of entrants that met, under
/// the standings of three or more entrants (two have their Elo under the
/// table): a title and [`pairs_table`], or why there is none. `None` for
/// one-player games and for two entrants.
pub fn pairs_text(tally: &super::Tally, rows: &[Row]) -> Option<String> {
    let pairs = tally.meetings(rows);
    let heading = pairs_heading(tally, rows, &pairs)?;
    match pairs.is_empty() {
        true => Some(heading),
        false => Some(format!("{heading}\n{}", pairs_table(&pairs))),
    }
}

/// The title of the table of `pairs` (the tally's [`super::Tally::meetings`]),
/// or why there is none; `None` where no such table is shown (see
/// [`pairs_text`]).
pub fn pairs_heading(tally: &super::Tally, rows: &[Row], pairs: &[PairRow]) -> Option<String> {
    if tally.solo || rows.len() < 3 {
        None
    } else if !tally.tallies_meetings() {
        Some(format!(
            "per pair: not tallied, with more than {MOST_MET} entrants (every pair of {} \
             would be)",
            rows.len()
        ))
    } else if pairs.is_empty() {
        Some("per pair: none yet, no two entrants have met".to_owned())
    } else {
        Some("per pair (the first's games and Elo against the second):".to_owned())
    }
}

/// [`pairs_table`]'s rows as CSV: `inf` and `-inf` where unbounded, an
/// empty `nelo` where there is no spread, the pentanomial counts spaced.
pub fn pairs_csv(pairs: &[PairRow]) -> String {
    let header = [
        "entrant",
        "opponent",
        "games",
        "wins",
        "draws",
        "losses",
        "pentanomial",
        "model",
        "elo",
        "elo_low",
        "elo_high",
        "elo_error",
        "nelo",
        "nelo_error",
        "los",
    ];
    text::csv(
        &header,
        pairs.iter().map(|p| {
            vec![
                text::csv_text(&p.entrant).into_owned(),
                text::csv_text(&p.opponent).into_owned(),
                p.games.to_string(),
                p.wins.to_string(),
                p.draws.to_string(),
                p.losses.to_string(),
                p.pentanomial.map(|c| c.to_string()).join(" "),
                p.model.name().to_owned(),
                p.elo.to_string(),
                p.elo_low.to_string(),
                p.elo_high.to_string(),
                p.elo_error.to_string(),
                p.nelo.map_or(String::new(), |n| n.to_string()),
                p.nelo_error.to_string(),
                p.los.to_string(),
            ]
        }),
    )
}

/// The standings as CSV (header, then one line per entrant).
pub fn csv(rows: &[Row]) -> String {
    text::csv(&csv_header(), rows.iter().map(csv_cells))
}

/// The columns of [`csv`]: the entrant's figures, its failures, its
/// usage, then its Elo (with exactly two entrants).
fn csv_header() -> Vec<&'static str> {
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
        "elo_nelo",
        "elo_nelo_error",
        "elo_los",
    ]);
    header
}

/// One entrant's line of [`csv`], in the order of [`csv_header`].
fn csv_cells(r: &Row) -> Vec<String> {
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
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
        [r.max_memory_bytes, r.max_cpu_micros].map(|n| n.map_or(String::new(), |n| n.to_string())),
    );
    cells.extend(elo_cells(r.elo.as_ref()));
    cells
}

/// The Elo columns of [`csv`]: empty without one. An unbounded figure is
/// `inf` or `-inf`, as spreadsheets and most parsers read it.
fn elo_cells(elo: Option<&EloFigures>) -> Vec<String> {
    match elo {
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
            e.elo_nelo.map_or(String::new(), |n| n.to_string()),
            e.elo_nelo_error.to_string(),
            e.elo_los.to_string(),
        ],
        None => vec![String::new(); 12],
    }
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

/// The line printed under every table that shows shared (fractional)
/// wins: games between players. Who placed first is Chomp's best score,
/// or an external game's judge's rank 1 (its ranking decides, whatever
/// the scores).
pub const SHARED_WINS: &str = "wins: a game won alone counts 1; a first place shared by k players \
     counts 1/k (Chomp: an equal best score; a judge's game: the judge's rank 1)";
