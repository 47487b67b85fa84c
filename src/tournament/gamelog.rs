//! `OUT/games.log`: the games for people, one block per game, as chess
//! players read PGN. Written from the typed [`GameRecord`] only, so it is
//! the same for every game. The format is documented in
//! `docs/tournaments.md`. Blocks are appended as games end, which is not
//! in game order when games are played at once; [`sort`] puts them back.
//!
//! ```text
//! [Game "evensteven"]
//! [Index "3"]
//! [Seed "1"]
//! [Date "2025-05-01T10:00:00Z"]
//! [Entrants "alice, bob, carol"]
//! [Result "1, 0, 0"]
//! [Status "ok, ok, build_failed"]
//! setup: deal_seed 1234, n 4
//! alice: won, win, 4 moves, slowest 1.2ms
//! bob: lost, lose_necessarily, 2 moves, slowest 900µs
//! carol: build_failed: make: *** [pc2] Error 1
//! ```

use std::fs::File;
use std::io::Write;
use std::path::Path;

use serde_json::Value;

use super::stderr_log::Reader;
use crate::game::{GameRecord, SeatResult};
use crate::outcome::Status;
use crate::record::NewFile;
use crate::text;
use crate::units::human_micros;

/// Longest value or error shown on a line of the body.
const LONGEST: usize = 200;

/// What a record keeps only for its replay (`--record-moves`): the frames,
/// moves, plays and times, and Chomp's array. The replay shows them; here
/// they would bury the setup and the judge's summary.
const REPLAY_ONLY: [&str; 8] = [
    "frames",
    "moves",
    "plays",
    "times",
    "letters",
    "cols",
    "rows",
    "starve_ms",
];

/// A field worth a place in the log: set, and not replay data.
fn shown((key, value): &(&String, &Value)) -> bool {
    !value.is_null() && !REPLAY_ONLY.contains(&key.as_str())
}

/// The log file, appended to game by game.
pub struct GameLog(File);

impl GameLog {
    /// Opens (creating, or appending to) the log at `path`.
    pub fn open(path: &Path) -> Result<GameLog, String> {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map(GameLog)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Appends one game's block; it is in the file when this returns (one
    /// unbuffered write), so a crash loses at most the game in flight.
    pub fn append(&mut self, record: &GameRecord) -> std::io::Result<()> {
        self.0.write_all(block(record).as_bytes())
    }
}

/// A block of a log read: its game (the `Index` tag), where it starts,
/// its length (its lines' ends included), and whether its last line ends.
struct Block {
    index: u64,
    at: u64,
    len: u64,
    ended: bool,
}

/// The longest piece of a line read at once: a file that is no log (one
/// long line) is not read whole into memory.
const PIECE: u64 = 1 << 20;

/// Puts the log at `path` in game order, unless it is: its blocks sorted
/// by game, stably (a void game's block stays before the game played
/// again), each then ended by a blank line. A block is a run of lines
/// that are not empty, none of which is (names and messages are written
/// escaped, on one line), so nothing an entrant says can split one. A
/// missing log stays missing.
pub fn sort(path: &Path) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut reader = match Reader::open(path) {
        Ok(reader) => reader,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(failed(e)),
    };
    let (mut blocks, whole) = blocks(&mut reader).map_err(failed)?;
    if whole && blocks.is_sorted_by_key(|b| b.index) {
        return Ok(());
    }
    blocks.sort_by_key(|b| b.index);
    let mut out = NewFile::create(path).map_err(failed)?;
    for block in blocks {
        reader.copy(block.at, block.len, &mut out).map_err(failed)?;
        let end: &[u8] = if block.ended { b"\n" } else { b"\n\n" };
        out.write_all(end).map_err(failed)?;
    }
    out.commit().map_err(failed)
}

/// The blocks of a log, in the file's order; and whether the file is
/// whole (its last block ended by a blank line). A block without an
/// `Index` tag (not the referee's) goes with the one before it.
fn blocks(reader: &mut Reader) -> std::io::Result<(Vec<Block>, bool)> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut line = Vec::new();
    let (mut at, mut line_start, mut in_block, mut tagged) = (0, true, false, false);
    loop {
        let n = reader.line(PIECE, &mut line)?;
        if n == 0 {
            return Ok((blocks, !in_block));
        }
        if line_start && line == b"\n" {
            in_block = false;
        } else {
            if !in_block {
                let index = blocks.last().map_or(0, |b| b.index);
                blocks.push(Block {
                    index,
                    at,
                    len: 0,
                    ended: false,
                });
                (in_block, tagged) = (true, false);
            }
            if let Some(block) = blocks.last_mut() {
                block.len = at + n - block.at;
                block.ended = line.ends_with(b"\n");
                if let Some(index) = index_tag(&line).filter(|_| line_start && !tagged) {
                    (block.index, tagged) = (index, true);
                }
            }
        }
        line_start = line.ends_with(b"\n");
        at += n;
    }
}

/// The game an `[Index "N"]` line names.
fn index_tag(line: &[u8]) -> Option<u64> {
    let digits = line.strip_prefix(b"[Index \"")?.strip_suffix(b"\"]\n")?;
    let digits = std::str::from_utf8(digits).ok()?;
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())?
}

/// The log of `records`, as one text (for `merge --out`).
pub fn text(records: &[GameRecord]) -> String {
    records.iter().map(block).collect()
}

/// One game's block: tags, then what happened, then a blank line.
pub fn block(r: &GameRecord) -> String {
    let mut out = String::new();
    let mut tag = |key: &str, value: &str| out.push_str(&format!("[{key} \"{}\"]\n", quote(value)));
    tag("Game", &r.game);
    tag("Index", &r.index.to_string());
    tag("Seed", &r.seed.to_string());
    if !r.time.is_empty() {
        tag("Date", &r.time);
    }
    let names: Vec<String> = r
        .results
        .iter()
        .map(|s| s.entrant.clone().unwrap_or_else(|| "?".to_owned()))
        .collect();
    let seated = r.results.iter().any(|s| s.seat.is_some());
    tag(if seated { "Seats" } else { "Entrants" }, &names.join(", "));
    let results: Vec<String> = r.results.iter().map(result).collect();
    tag("Result", &results.join(", "));
    let statuses: Vec<String> = r.results.iter().map(status).collect();
    tag("Status", &statuses.join(", "));

    let setup: Vec<String> = r
        .setup
        .iter()
        .filter(shown)
        .map(|(k, v)| format!("{k} {}", value(v)))
        .collect();
    if !setup.is_empty() {
        out.push_str(&format!("setup: {}\n", setup.join(", ")));
    }
    if let Some(e) = &r.judge_error {
        out.push_str(&format!("judge error: {}\n", short(&e.message)));
    }
    for (name, s) in names.iter().zip(&r.results) {
        out.push_str(&format!("{}: {}\n", text::terminal(name), line(s)));
    }
    out.push('\n');
    out
}

/// A seat's result in the `Result` tag: `1` or `0` for a game played
/// alone, else its score, else its rank (`#2`), else `-`.
fn result(s: &SeatResult) -> String {
    if let Some(won) = s.won {
        return if won { "1" } else { "0" }.to_owned();
    }
    if let Some(points) = s.points() {
        return format!("{points}");
    }
    s.rank.map_or("-".to_owned(), |r| format!("#{r}"))
}

/// A seat's status in the `Status` tag: the taxonomy's name, with its
/// phase or limit (`timeout/move`, `limit/cpu`).
fn status(s: &SeatResult) -> String {
    let v = &s.verdict;
    let mut out = v.status.name().to_owned();
    if let Some(phase) = v.phase {
        out = format!("{out}/{}", phase.name());
    }
    if let Some(limit) = v.limit {
        out = format!("{out}/{}", limit.name());
    }
    out
}

/// What a seat did, in words.
fn line(s: &SeatResult) -> String {
    let mut parts = Vec::new();
    if let Some(seat) = s.seat {
        parts.push(format!("seat {seat}"));
    }
    if s.status() != Status::Ok {
        let why = s.error.as_deref().map(short).unwrap_or_default();
        parts.push(if why.is_empty() {
            status(s)
        } else {
            format!("{}: {why}", status(s))
        });
    }
    if let Some(won) = s.won {
        parts.push(if won { "won" } else { "lost" }.to_owned());
    }
    if let Some(score) = &s.score {
        parts.push(format!(
            "score {}",
            value(&serde_json::to_value(score).unwrap_or(Value::Null))
        ));
    }
    if let Some(rank) = s.rank {
        parts.push(format!("rank {rank}"));
    }
    if let Some(outcome) = &s.outcome {
        parts.push(short(outcome));
    }
    for (k, v) in s.detail.iter().filter(shown) {
        parts.push(format!("{k} {}", value(v)));
    }
    if let Some(moves) = s.moves {
        parts.push(format!("{moves} move{}", if moves == 1 { "" } else { "s" }));
    }
    if let Some(slowest) = s.slowest_micros {
        parts.push(format!("slowest {}", human_micros(slowest)));
    }
    parts.join(", ")
}

/// A JSON value as people write it: strings bare, the rest as JSON.
fn value(v: &Value) -> String {
    match v {
        Value::String(s) => short(s),
        Value::Object(map) => short(
            &map.iter()
                .map(|(k, v)| format!("{k} {}", value(v)))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        other => short(&other.to_string()),
    }
}

/// `text` on one line, at most [`LONGEST`] characters (before the escapes
/// of [`text::terminal`]).
fn short(text: &str) -> String {
    text::terminal(&text::cut(&text::one_line(text), LONGEST)).into_owned()
}

/// A tag's value with `\` and `"` escaped, as PGN does, then control
/// characters shown as escapes (see [`text::terminal`]): on one line.
fn quote(value: &str) -> String {
    let pgn = value.replace('\\', "\\\\").replace('"', "\\\"");
    text::terminal(&pgn).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_has_the_tags_and_one_line_per_entrant() {
        let r: GameRecord = serde_json::from_str(
            r#"{"game":"evensteven","index":3,"seed":9,"n":4,"deal_seed":77,"time":"t","referee":"r","results":[
              {"entrant":"a","won":true,"outcome":"win","status":"ok","moves":4,"slowest_micros":80},
              {"entrant":"b \"q\"","won":false,"status":"build_failed","error":"make failed\nline 2"}]}"#,
        )
        .unwrap();
        let text = block(&r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "[Game \"evensteven\"]");
        assert_eq!(lines[1], "[Index \"3\"]");
        assert_eq!(lines[2], "[Seed \"9\"]");
        assert_eq!(lines[3], "[Date \"t\"]");
        assert_eq!(lines[4], "[Entrants \"a, b \\\"q\\\"\"]");
        assert_eq!(lines[5], "[Result \"1, 0\"]");
        assert_eq!(lines[6], "[Status \"ok, build_failed\"]");
        assert_eq!(lines[7], "setup: deal_seed 77, n 4");
        assert!(lines[8].starts_with("a: won, win, 4 moves"), "{text}");
        assert_eq!(
            lines[9],
            "b \"q\": build_failed: make failed / line 2, lost"
        );
        assert!(text.ends_with("\n\n"));
    }

    #[test]
    fn a_log_is_sorted_by_game_block_by_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.log");
        let block = |i: u64, what: &str| format!("[Game \"g\"]\n[Index \"{i}\"]\na: {what}\n\n");
        let text = [
            block(3, "[Index \"1\"]"),
            block(1, "void"),
            block(2, "x"),
            block(1, "played again"),
        ]
        .concat();
        // The last block's write was cut short.
        std::fs::write(&path, &text[..text.len() - 2]).unwrap();
        sort(&path).unwrap();
        let sorted = [
            block(1, "void"),
            block(1, "played again"),
            block(2, "x"),
            block(3, "[Index \"1\"]"),
        ]
        .concat();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), sorted);
        sort(&dir.path().join("missing.log")).unwrap();
        assert!(!dir.path().join("missing.log").exists());
    }

    #[test]
    fn table_games_show_seats_and_scores() {
        let r: GameRecord = serde_json::from_str(
            r#"{"game":"chomp","index":1,"seed":2,"array":"a.txt","start":[1,2],"moves":"NS","letters":"AB","cols":2,"rows":1,"time":"t","referee":"r","results":[
              {"entrant":"x","seat":0,"score":3.5,"fate":"starved","status":"timeout","phase":"move"},
              {"entrant":"y","seat":1,"score":2,"status":"ok"}]}"#,
        )
        .unwrap();
        let text = block(&r);
        assert!(
            text.contains("[Seats \"x, y\"]\n[Result \"3.5, 2\"]\n[Status \"timeout/move, ok\"]\n"),
            "{text}"
        );
        assert!(text.contains("setup: array a.txt, start [1,2]\n"), "{text}");
        assert!(
            text.contains("x: seat 0, timeout/move, score 3.5, fate starved\n"),
            "{text}"
        );
    }
}
