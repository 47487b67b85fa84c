//! The typed form of a game's record in a tournament or ci run: what
//! records, standings, ci expectations and viewers read. Every game fills
//! the same [`SeatResult`]; what only one game has (Chomp's `fate`, a
//! game's setup) rides along in a flattened map, so that a record reads
//! back exactly as it was written.
//!
//! The records' JSON is documented in `docs/results.md`; its format's
//! version is [`crate::record::FORMAT`]. A record of format 1 (written
//! before the version was kept) reads as one of format 2: its seats were
//! `results` where they are now `players`, and nothing else differs.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::bot::Usage;
use crate::games::external::JudgeError;
use crate::outcome::{Disqualified, Status, Verdict};

/// One game of a run, as its line in `records.jsonl` holds it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameRecord {
    /// The game's name (`evensteven`, `chomp`, an external game's name).
    pub game: String,
    /// The game's number in the run, from 1.
    pub index: u64,
    /// The run's seed: with `index`, it decides the game's setup.
    pub seed: u64,
    /// The game's own fields: its setup (`n` and `deal_seed`, a `deck`,
    /// Chomp's `array` and `start`) and how it went (`rounds`, `end`, an
    /// external judge's `summary`).
    #[serde(flatten)]
    pub setup: Map<String, Value>,
    /// Present when an external judge failed: the game is void.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_error: Option<JudgeError>,
    /// One per seat (table games) or per entrant (solo games): a record's
    /// `players` ([`SEATS`]), `results` in format 1 ([`OLD_SEATS`]).
    #[serde(rename = "players", alias = "results")]
    pub results: Vec<SeatResult>,
    /// When the game ended (RFC 3339, UTC).
    #[serde(default)]
    pub time: String,
    /// The referee's version.
    #[serde(default)]
    pub referee: String,
    /// The run's fingerprint (records in an output directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<String>,
    /// The format it was read in (none before format 2, and in a league's
    /// database): kept out of [`GameRecord::setup`]. A record is always
    /// written in the current format, which its file's writer puts first
    /// (see [`crate::record::FORMAT`]).
    #[serde(default, skip_serializing)]
    pub format: Option<u64>,
}

/// The key of a record's seats, in every record that has seats: a
/// tournament's, `play`'s and `chomp`'s.
pub const SEATS: &str = "players";

/// Where a tournament's record of format 1 kept its seats.
pub const OLD_SEATS: &str = "results";

/// The seats of a record as JSON, of either format: `players`, else
/// format 1's `results`.
pub fn seats_of(record: &Value) -> Option<&Vec<Value>> {
    record[SEATS]
        .as_array()
        .or_else(|| record[OLD_SEATS].as_array())
}

/// The key of a game's fields that holds a judge's refusal of the game's
/// settings ([`GameRecord::refusal`]): such a game is void and never
/// recorded.
pub const REFUSED: &str = "refused";

impl GameRecord {
    /// The judge's refusal of the game's settings, if it refused them: the
    /// run stops (a league fails the entrant) and the game is not recorded.
    pub fn refusal(&self) -> Option<crate::games::external::JudgeRefusal> {
        serde_json::from_value(self.setup.get(REFUSED)?.clone()).ok()
    }

    /// The bot's score against `baseline` (both entrants' names) in this
    /// game, for head-to-head tests: 1 when it did better, ½ as well, 0
    /// worse. Solo games: it won and the baseline lost (on the same deal),
    /// both won or both lost, the baseline won. Table games: its place
    /// ([`GameRecord::places`]: the game's ranking, else its scores) above,
    /// equal to or below the baseline's. `None` when either did not play.
    pub fn head_to_head(&self, solo: bool, bot: &str, baseline: &str) -> Option<f64> {
        let (mine, theirs) = (self.seat_of(bot)?, self.seat_of(baseline)?);
        let order = if solo {
            let won = |i: usize| self.results[i].won == Some(true);
            won(mine).cmp(&won(theirs))
        } else {
            // A lower place is better.
            let places = self.places();
            places[theirs].cmp(&places[mine])
        };
        Some(match order {
            std::cmp::Ordering::Greater => 1.0,
            std::cmp::Ordering::Equal => 0.5,
            std::cmp::Ordering::Less => 0.0,
        })
    }

    /// A game the referee's side failed: its judge, or the referee itself
    /// (a seat `internal`: its own descriptors, memory or disk ran out
    /// while it started a bot, or it lost a bot's pipes). It counts for
    /// nobody, and `--resume` or a league plays it again.
    pub fn is_void(&self) -> bool {
        self.judge_error.is_some() || self.referee_failure().is_some()
    }

    /// Why the referee itself failed in this game, when a seat says so
    /// (`internal`) and its judge did not fail: the first such seat's
    /// error.
    pub fn referee_failure(&self) -> Option<&str> {
        if self.judge_error.is_some() {
            return None;
        }
        self.results
            .iter()
            .find(|r| r.status() == Status::Internal)
            .map(|r| r.error.as_deref().unwrap_or("an internal error"))
    }

    /// Each seat's place in this game (in `results` order), 1 first, equal
    /// places tied: the game's own ranks when it gives them (an external
    /// judge's `ranking`, or its ranks from scores), else from scores,
    /// higher first. A seat without a rank or score comes last. A seat
    /// that never played (disqualified: its build failed, its program
    /// cannot start) places after every seat that did, whatever its score
    /// or rank: losing without a move is not a tie with a player that
    /// scored as little. Wins, ratings and head-to-head scores all follow
    /// these places.
    pub fn places(&self) -> Vec<u32> {
        let ranked = self.results.iter().any(|r| r.rank.is_some());
        // Lower is better: the game's rank, else the score negated.
        let key = |r: &SeatResult| -> f64 {
            if ranked {
                r.rank.map_or(f64::INFINITY, f64::from)
            } else {
                r.points().map_or(f64::INFINITY, |p| -p)
            }
        };
        let played: Vec<&SeatResult> = self.results.iter().filter(|r| r.played()).collect();
        self.results
            .iter()
            .map(|r| {
                let ahead = if r.played() {
                    played.iter().filter(|o| key(o) < key(r)).count()
                } else {
                    played.len()
                };
                1 + ahead as u32
            })
            .collect()
    }

    /// Each seat's share of the win (in `results` order): `1/k` for each
    /// of the `k` seats that played and placed first, 0 for the others. A
    /// disqualified seat never wins: where no seat played, nobody won.
    pub fn win_shares(&self) -> Vec<f64> {
        let places = self.places();
        let first = |i: usize| places[i] == 1 && self.results[i].played();
        let winners = (0..places.len()).filter(|&i| first(i)).count() as f64;
        (0..places.len())
            .map(|i| if first(i) { 1.0 / winners } else { 0.0 })
            .collect()
    }

    /// Whether `other` (the same game, recorded elsewhere) says the same
    /// about every seat: who played where, won, scored, placed, and how
    /// its part ended. Times and memory differ from run to run and do not
    /// count.
    pub fn same_outcome(&self, other: &GameRecord) -> bool {
        let outcome = |r: &GameRecord| -> Vec<_> {
            r.results
                .iter()
                .map(|s| {
                    (
                        s.entrant.clone(),
                        s.seat,
                        s.won,
                        s.score.clone(),
                        s.rank,
                        s.outcome.clone(),
                        s.verdict,
                    )
                })
                .collect()
        };
        self.is_void() == other.is_void() && outcome(self) == outcome(other)
    }

    /// The result of the entrant named `name`, if it played.
    pub fn result_of(&self, name: &str) -> Option<&SeatResult> {
        Some(&self.results[self.seat_of(name)?])
    }

    /// Where in `results` the entrant named `name` is, if it played.
    pub fn seat_of(&self, name: &str) -> Option<usize> {
        self.results
            .iter()
            .position(|r| r.entrant.as_deref() == Some(name))
    }
}

/// A score: a number (higher is better) for games that rank their seats,
/// or a tally of points by side, as Septica counts a match (`{"computer":
/// 3, "player": 5}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Score {
    Points(serde_json::Number),
    Tally(std::collections::BTreeMap<String, serde_json::Number>),
}

impl Score {
    /// A score of `points`; `None` for a number JSON cannot hold (NaN).
    pub fn of(points: f64) -> Option<Score> {
        serde_json::Number::from_f64(points).map(Score::Points)
    }

    /// The number that ranks the seats, for games that have one.
    pub fn points(&self) -> Option<f64> {
        match self {
            Score::Points(p) => p.as_f64(),
            Score::Tally(_) => None,
        }
    }
}

/// One entrant's part in one game.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeatResult {
    /// The entrant's name (set by the run, not by the game).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entrant: Option<String>,
    /// Its seat, from 0, in a game of several players.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<usize>,
    /// A game played alone: whether it was won.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub won: Option<bool>,
    /// A game of several players: its score, which ranks it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<Score>,
    /// Its rank when the game gives one (1 is first; equal ranks tie).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// The game's word for how it ended (Even Steven: `win`,
    /// `lose_necessarily`, `lose_unnecessarily`; Septica: who won).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// How its part ended, in the shared taxonomy.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Why it failed, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How many moves it made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves: Option<u64>,
    /// Its slowest move (a timed-out move counts as the time waited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest_micros: Option<u64>,
    /// Every move's time, where the game keeps them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micros: Option<Vec<u64>>,
    /// Its process's first reply, start-up included, kept out of `micros`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_micros: Option<u64>,
    /// The largest resident memory of its processes together during the
    /// game, bytes (see `bot::usage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// The CPU time (user + system) its processes used during the game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_micros: Option<u64>,
    /// How its bot left its containment, if it did (see `bot::usage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<String>,
    /// The tail of its standard error (tournaments move it to
    /// `stderr/NAME.log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stderr_truncated: bool,
    /// What only this game records (Chomp: `fate`, `eaten`, `rounds`).
    #[serde(flatten)]
    pub detail: Map<String, Value>,
}

/// How many games in a row the referee may fail (its own descriptors,
/// memory or disk) before a run stops: one such game is a passing
/// shortage, a few in a row a run that can only void its games.
pub const REFEREE_FAILURES_IN_A_ROW: u32 = 3;

/// The games a run's referee failed itself ([`GameRecord::referee_failure`]):
/// each is void, and [`REFEREE_FAILURES_IN_A_ROW`] of them in a row stop
/// the run.
#[derive(Debug, Default)]
pub struct RefereeFailures {
    in_a_row: u32,
    total: u64,
}

impl RefereeFailures {
    /// Takes a finished game: `Some` with why the run stops when it is the
    /// last of too many in a row the referee failed.
    pub fn note(&mut self, record: &GameRecord) -> Option<String> {
        let Some(why) = record.referee_failure() else {
            if !record.is_void() {
                self.in_a_row = 0;
            }
            return None;
        };
        self.in_a_row += 1;
        self.total += 1;
        (self.in_a_row >= REFEREE_FAILURES_IN_A_ROW).then(|| {
            format!(
                "the referee's own resources failed in {} games in a row (the last, game {}: \
                 {}); the games are void, no entrant is charged with them, and the run \
                 stops: give the referee more descriptors (`ulimit -n`), memory or disk, \
                 or fewer games at once (--jobs)",
                self.in_a_row,
                record.index,
                crate::text::terminal(why)
            )
        })
    }

    /// At the end of a run that did not stop: how many of its games are
    /// void because the referee failed, if any.
    pub fn unfinished(&self) -> Option<String> {
        (self.total > 0).then(|| {
            format!(
                "{} game{} void: the referee's own resources failed (see the warnings above)",
                self.total,
                if self.total == 1 { " is" } else { "s are" }
            )
        })
    }
}

impl SeatResult {
    /// A result with nothing but a verdict.
    pub fn of(verdict: Verdict) -> SeatResult {
        SeatResult {
            verdict,
            ..SeatResult::default()
        }
    }

    /// The result of an entrant that cannot play (solo games).
    pub fn disqualified(why: &Disqualified) -> SeatResult {
        SeatResult {
            won: Some(false),
            error: Some(why.why.clone()),
            ..SeatResult::of(why.verdict())
        }
    }

    /// The result of a program that could not be started: `cannot_start`,
    /// or `internal` (the game void) when the referee's own resources
    /// failed, not the program.
    pub fn cannot_start(e: &crate::bot::SpawnError) -> SeatResult {
        SeatResult {
            won: Some(false),
            error: Some(e.recorded()),
            ..SeatResult::of(e.verdict())
        }
    }

    /// The same result with what its bot used during the game.
    pub fn measured(self, usage: Usage) -> SeatResult {
        SeatResult {
            peak_memory_bytes: usage.peak_memory,
            cpu_micros: usage.cpu_micros(),
            containment: usage.containment().map(str::to_owned),
            ..self
        }
    }

    pub fn status(&self) -> Status {
        self.verdict.status
    }

    /// Whether it played at all: not disqualified (its build failed, its
    /// program cannot start). A runtime failure played.
    pub fn played(&self) -> bool {
        !self.status().is_disqualification()
    }

    /// Its score as a number, for games that rank seats by one.
    pub fn points(&self) -> Option<f64> {
        self.score.as_ref().and_then(Score::points)
    }

    /// Its move times: every move where the game keeps them, else its
    /// slowest.
    pub fn move_times(&self) -> Vec<u64> {
        match &self.micros {
            Some(all) => all.clone(),
            None => self.slowest_micros.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record read (of format 1 or 2) and serialized again gives its
    /// fields as they were, its seats under `players`; the format is its
    /// file writer's to add.
    fn round_trip(line: &str) {
        let record: GameRecord = serde_json::from_str(line).unwrap();
        let back = serde_json::to_value(&record).unwrap();
        let mut original: Value = serde_json::from_str(line).unwrap();
        let fields = original.as_object_mut().unwrap();
        fields.remove("format");
        if let Some(seats) = fields.remove(OLD_SEATS) {
            fields.insert(SEATS.into(), seats);
        }
        assert_eq!(back, original, "{line}");
        assert!(!record.setup.contains_key("format"), "{line}");
        // Format 2 reads the same.
        let again = crate::record::to_line(&record);
        let read: GameRecord = serde_json::from_str(&again).unwrap();
        assert_eq!(read.format, Some(crate::record::FORMAT));
        assert_eq!(serde_json::to_value(&read).unwrap(), back, "{again}");
    }

    #[test]
    fn every_games_records_read_back_as_written() {
        // One record of each game, as the games write them.
        round_trip(
            r#"{"game":"evensteven","index":3,"seed":9,"n":4,"deal_seed":77,"time":"t","referee":"r","results":[{"entrant":"a","won":true,"outcome":"win","status":"ok","moves":4,"slowest_micros":80,"micros":[1,2,80,3],"startup_micros":900,"peak_memory_bytes":3000000,"cpu_micros":1200}]}"#,
        );
        round_trip(
            r#"{"game":"septica","index":1,"seed":2,"deck":"x","time":"t","referee":"r","results":[{"entrant":"a","won":false,"outcome":"computer","score":{"computer":5,"player":3},"status":"timeout","phase":"move","error":"slow","moves":2,"slowest_micros":150000,"micros":[1,150000]}]}"#,
        );
        round_trip(
            r#"{"game":"chomp","index":1,"seed":2,"array":"a.txt","start":[1,2],"rounds":40,"end":"all_dead","time":"t","referee":"r","tournament":"abc","results":[{"entrant":"a","seat":0,"score":3.5,"fate":"starved","eaten":4,"rounds":30,"slowest_micros":5,"status":"limit","limit":"cpu"}]}"#,
        );
        round_trip(
            r#"{"game":"tron","index":1,"seed":2,"summary":{"turns":3},"judge_error":{"message":"m","stderr":"e"},"time":"t","referee":"r","results":[{"entrant":"a","seat":0,"status":"internal","micros":[],"rank":2}]}"#,
        );
        // Format 2.
        round_trip(
            r#"{"format":2,"game":"chomp","index":1,"seed":2,"array":"a.txt","start":[1,2],"rounds":40,"end":"all_dead","players":[{"entrant":"a","seat":0,"score":3.5,"fate":"starved","eaten":4,"rounds":30,"slowest_micros":5,"status":"ok"}],"time":"t","referee":"r","tournament":"abc"}"#,
        );
    }

    /// A game between players from its seats' JSON.
    fn table(seats: &str) -> GameRecord {
        serde_json::from_str(&format!(
            r#"{{"game":"g","index":1,"seed":1,"results":[{seats}]}}"#
        ))
        .unwrap()
    }

    #[test]
    fn a_disqualified_seat_places_last_and_never_wins() {
        // Issue 38: every seat failed to build: they shared the win.
        let failed = r#"{"score":0,"status":"build_failed"}"#;
        let all = table(&[failed; 3].join(","));
        assert_eq!(all.win_shares(), [0.0; 3]);
        // A crash keeps its score and place, and beats a seat that never
        // played, though it scored no more.
        let crashed = r#"{"score":0,"status":"crashed"}"#;
        let record = table(&format!("{failed},{crashed},{crashed}"));
        assert_eq!(record.places(), [3, 1, 1]);
        assert_eq!(record.win_shares(), [0.0, 0.5, 0.5]);
        // A judge's rank 1 for a seat that could not start wins nothing:
        // the best of those that played wins.
        let record = table(
            r#"{"rank":1,"status":"cannot_start"},{"rank":3,"status":"ok"},{"rank":2,"status":"timeout"}"#,
        );
        assert_eq!(record.places(), [3, 2, 1]);
        assert_eq!(record.win_shares(), [0.0, 0.0, 1.0]);
        // Without disqualification, places are as before.
        let record = table(r#"{"score":2,"status":"ok"},{"score":5,"status":"crashed"}"#);
        assert_eq!(record.places(), [2, 1]);
        assert_eq!(record.win_shares(), [0.0, 1.0]);
    }

    #[test]
    fn points_are_numbers_only() {
        let r: SeatResult = serde_json::from_str(r#"{"score":2,"status":"ok"}"#).unwrap();
        assert_eq!(r.points(), Some(2.0));
        let r: SeatResult =
            serde_json::from_str(r#"{"score":{"computer":1,"player":2},"status":"ok"}"#).unwrap();
        assert_eq!(r.points(), None);
    }
}
