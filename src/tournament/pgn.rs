//! `OUT/games.pgn`: every game's PGN, as its external judge wrote it in its
//! `end` message's `summary.pgn` (a chess judge's game score), written by
//! [`PgnWriter`] as `referee play --pgn FILE` writes it.
//!
//! The file mirrors `records.jsonl`. It is written again from the records,
//! in game order, when a run opens its `--out` (a resumed run, a run
//! continued, a fresh one over an old `games.pgn`) and by `merge --out`;
//! then each game's PGN is appended as its record is written. So each game
//! is there once however often the run was interrupted, and a crash loses
//! at most the games in flight. A void game (its judge failed) has none: it
//! is played again. Without any PGN there is no file.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, Write};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::RunInfo;
use crate::game::GameRecord;
use crate::record::NewFile;
use crate::record::pgn::PgnWriter;

/// The file's name in an output directory.
pub const FILE_NAME: &str = "games.pgn";

/// `games.pgn` of an output directory, appended to game by game.
pub struct PgnFile(PgnWriter);

/// What `games.pgn` needs of a record: read instead of a whole
/// [`GameRecord`], whose other fields (frames, times) it would copy for
/// nothing.
#[derive(Deserialize)]
struct Line {
    index: u64,
    seed: u64,
    #[serde(default)]
    tournament: Option<String>,
    #[serde(default)]
    judge_error: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    summary: Option<Value>,
    /// Each seat's status: a seat `internal` makes the game void (format
    /// 1's `results`, as [`GameRecord`] reads them).
    #[serde(default, rename = "players", alias = "results")]
    results: Vec<LineSeat>,
}

#[derive(Deserialize)]
struct LineSeat {
    #[serde(default)]
    status: Option<crate::outcome::Status>,
}

impl PgnFile {
    /// Writes `dir/games.pgn` again from `records`, the records file of the
    /// run `info` (in game order, a game's PGN once), or removes it when
    /// they hold no PGN; then appends to it. A failure names the file.
    pub fn rebuild(
        dir: &Path,
        records: &Path,
        info: &RunInfo,
        who: &'static str,
    ) -> Result<PgnFile, String> {
        let mut pgn = PgnFile(PgnWriter::new(dir.join(FILE_NAME), who));
        let reading = |e: std::io::Error| format!("{}: {e}", records.display());
        let mut reader = match File::open(records) {
            // Only a regular file holds records to read again: a device
            // (`/dev/full`, `/dev/zero`) would be read for ever.
            Ok(file) if !file.metadata().map_err(reading)?.is_file() => return pgn.remove(),
            Ok(file) => BufReader::with_capacity(1 << 16, file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return pgn.remove(),
            Err(e) => return Err(reading(e)),
        };
        let games = pgn.games(&mut reader, info).map_err(reading)?;
        if games.is_empty() {
            return pgn.remove();
        }
        let mut out = NewFile::create(pgn.0.path()).map_err(|e| pgn.failed(e))?;
        let mut at = reader.stream_position().map_err(reading)?;
        let mut line = Vec::new();
        for offset in games {
            // Relative: within what the reader holds, no read again.
            reader
                .seek_relative(offset as i64 - at as i64)
                .map_err(reading)?;
            line.clear();
            at = offset + reader.read_until(b'\n', &mut line).map_err(reading)? as u64;
            let text = played(&line, info).and_then(|r| pgn.0.entry(r.index, r.summary.as_ref()));
            if let Some(text) = text {
                out.write_all(text.as_bytes()).map_err(|e| pgn.failed(e))?;
            }
        }
        out.commit().map_err(|e| pgn.failed(e))?;
        Ok(pgn)
    }

    /// Where the records with a PGN start in the records file, in game
    /// order, the last record of a game recorded twice. Offsets, not
    /// texts: memory does not grow with the PGNs, only by 16 bytes a game.
    fn games(&mut self, reader: &mut BufReader<File>, info: &RunInfo) -> std::io::Result<Vec<u64>> {
        let mut games: Vec<(u64, std::cmp::Reverse<u64>)> = Vec::new();
        let mut line = Vec::new();
        let mut offset = 0u64;
        loop {
            line.clear();
            let n = reader.read_until(b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            if let Some(record) = played(&line, info)
                && self
                    .0
                    .entry(record.index, record.summary.as_ref())
                    .is_some()
            {
                games.push((record.index, std::cmp::Reverse(offset)));
            }
            offset += n as u64;
        }
        // Records come nearly in game order (games played at once finish
        // out of order).
        games.sort_unstable();
        games.dedup_by_key(|&mut (index, _)| index);
        Ok(games.into_iter().map(|(_, offset)| offset.0).collect())
    }

    /// No PGN: an old `games.pgn` goes.
    fn remove(self) -> Result<PgnFile, String> {
        match std::fs::remove_file(self.0.path()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(self.failed(e)),
            _ => Ok(self),
        }
    }

    /// Appends a finished game's PGN, if it has one, in one write: it is
    /// in the file when this returns. A void game has none.
    pub fn append(&mut self, record: &GameRecord) -> Result<(), String> {
        if record.is_void() {
            return Ok(());
        }
        self.0.append(record.index, record.setup.get("summary"))
    }

    fn failed(&self, e: std::io::Error) -> String {
        format!("{}: {e}", self.0.path().display())
    }
}

/// A record of the run `info` played to its end, from one line of its
/// records file; `None` for anything else (a torn line, a void game).
fn played(line: &[u8], info: &RunInfo) -> Option<Line> {
    let record: Line = serde_json::from_slice(line).ok()?;
    let ours =
        record.tournament.as_deref() == Some(info.fingerprint.as_str()) && record.seed == info.seed;
    let internal = record
        .results
        .iter()
        .any(|r| r.status == Some(crate::outcome::Status::Internal));
    (ours && record.judge_error.is_none() && !internal).then_some(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> RunInfo {
        serde_json::from_value(serde_json::json!({
            "game": "g.toml", "solo": false, "fingerprint": "f", "seed": 1,
            "games": 9, "entrants": ["a", "b"], "shard": null
        }))
        .unwrap()
    }

    fn line(index: u64, pgn: Value) -> String {
        let record = serde_json::json!({
            "game": "g", "index": index, "seed": 1, "tournament": "f",
            "summary": {"pgn": pgn}, "results": []
        });
        format!("{record}\n")
    }

    #[test]
    fn a_rebuild_keeps_one_pgn_a_game_in_game_order() {
        let dir = tempfile::tempdir().unwrap();
        let records = dir.path().join("records.jsonl");
        let text = [
            line(3, "[Round \"3\"]\n\n1. e4 1-0".into()),
            line(1, "\n[Round \"1\"]\n\n1. d4 0-1\n\n\n".into()),
            // Void, then played again: the played one counts.
            line(2, "void".into()).replace(
                "\"results\"",
                "\"judge_error\":{\"message\":\"m\"},\"results\"",
            ),
            "{\"torn".to_owned() + "\n",
            line(2, "[Round \"2\"]\r\n\r\n1. c4 1/2-1/2\r\n".into()),
            line(4, 7.into()),
            line(5, "  \n".into()),
            line(6, Value::Null),
            line(7, "[Round \"7\"]\n".into()).replace("\"seed\":1", "\"seed\":2"),
        ]
        .concat();
        std::fs::write(&records, text).unwrap();
        std::fs::write(dir.path().join(FILE_NAME), "stale\n").unwrap();
        let mut pgn = PgnFile::rebuild(dir.path(), &records, &info(), "test").unwrap();
        assert!(pgn.0.warned());
        let expected = "[Round \"1\"]\n\n1. d4 0-1\n\n\
                        [Round \"2\"]\r\n\r\n1. c4 1/2-1/2\n\n\
                        [Round \"3\"]\n\n1. e4 1-0\n\n";
        let path = dir.path().join(FILE_NAME);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        let record: GameRecord =
            serde_json::from_str(&line(8, "[Round \"8\"]\n1. f4".into())).unwrap();
        pgn.append(&record).unwrap();
        let expected = format!("{expected}[Round \"8\"]\n1. f4\n\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    }

    #[test]
    fn records_without_pgn_make_no_file_and_remove_an_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let records = dir.path().join("records.jsonl");
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "stale\n").unwrap();
        let mut pgn = PgnFile::rebuild(dir.path(), &records, &info(), "test").unwrap();
        assert!(!path.exists());
        let record: GameRecord = serde_json::from_str(&line(1, 3.into())).unwrap();
        pgn.append(&record).unwrap();
        assert!(!path.exists());
        assert!(pgn.0.warned());
    }
}
