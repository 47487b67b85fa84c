//! The standings for a gradebook: one line per entrant with a note on its
//! failures.

use super::entrant::{FAILURES, Failures, Row};
use crate::outcome::Status;
use crate::text;

/// The standings for a gradebook: one line per entrant, sorted by name,
/// with the failures by kind and, for an entrant with any game not `ok`, a
/// note on the first and how many (see [`note`]), and why one that crashed
/// in every game still has its place ([`crashed_every_game`]). Columns:
/// `entrant,games,wins,win_rate,failures,timeouts,crashed,incorrect,
/// disqualified,internal,rank,note`; fractions rounded to three decimals.
pub fn grades_csv(rows: &[Row], failures: &[(String, Failures)]) -> String {
    let mut header = vec!["entrant", "games", "wins", "win_rate", "failures"];
    header.extend(FAILURES);
    header.extend(["rank", "note"]);
    let mut rows: Vec<&Row> = rows.iter().collect();
    rows.sort_by(|a, b| a.entrant.cmp(&b.entrant));
    let lines = rows.into_iter().map(|r| {
        let mut note = failures
            .iter()
            .find(|(entrant, _)| *entrant == r.entrant)
            .map(|(_, f)| note(r, f))
            .unwrap_or_default();
        if let Some(crashed) = crashed_every_game(r) {
            if !note.is_empty() {
                note.push_str("; ");
            }
            note.push_str(crashed);
        }
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

/// Why an entrant of a game between players that crashed in every game
/// still has its place, maybe the first: the rules keep a crashed
/// player's score (Chomp's decomposing player; an external game's judge
/// scores what was played), so a class's sheet says so rather than let a
/// crasher's rank pass for a bot's merit. `None` for anyone else, and for
/// one-player games, where a crash loses the game.
pub fn crashed_every_game(row: &Row) -> Option<&'static str> {
    let between_players = row.win_rate.is_none();
    (between_players && row.games > 0 && row.crashed == row.games)
        .then_some("crashed in every game: keeps its score, as the rules say")
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
