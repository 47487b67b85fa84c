//! A file of PGN games, as external judges write them in their `end`
//! message's `summary.pgn` (a chess judge's game score): a tournament's
//! `OUT/games.pgn`, `referee play --pgn FILE`. The referee does not read
//! the PGN; it only keeps the games apart: each game's text, its
//! surrounding whitespace trimmed, is written followed by a line end and a
//! blank line, whatever the judge ended it with.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// A PGN file, appended to game by game, each game in one write.
pub struct PgnWriter {
    path: PathBuf,
    /// Opened at the first game with a PGN: a run without any makes no file.
    file: Option<File>,
    /// A `pgn` that is not a string was reported: it is said once a run.
    warned: bool,
    /// The command, for the warning.
    who: &'static str,
}

impl PgnWriter {
    /// A writer that appends to `path` (made at the first PGN); `who`, the
    /// command, names the warnings.
    pub fn new(path: PathBuf, who: &'static str) -> PgnWriter {
        PgnWriter {
            path,
            file: None,
            warned: false,
            who,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a `pgn` that is not a string was met.
    pub fn warned(&self) -> bool {
        self.warned
    }

    /// Appends game `index`'s PGN from its judge's `summary`, if it has
    /// one, in one write: it is in the file when this returns.
    pub fn append(&mut self, index: u64, summary: Option<&Value>) -> Result<(), String> {
        let Some(text) = self.entry(index, summary) else {
            return Ok(());
        };
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&self.path)
                    .map_err(|e| format!("{}: {e}", self.path.display()))?;
                self.file.insert(file)
            }
        };
        file.write_all(text.as_bytes())
            .map_err(|e| format!("{}: {e}", self.path.display()))
    }

    /// Game `index`'s entry in the file, from its judge's `summary`: its
    /// `pgn`, trimmed, then a line end and a blank line. `None` without a
    /// `pgn` (or with an empty one); one that is not a string is left out,
    /// with a warning the first time.
    pub fn entry(&mut self, index: u64, summary: Option<&Value>) -> Option<String> {
        match summary?.get("pgn")? {
            Value::String(text) => {
                let text = text.trim();
                (!text.is_empty()).then(|| format!("{text}\n\n"))
            }
            Value::Null => None,
            other => {
                if !self.warned {
                    self.warned = true;
                    eprintln!(
                        "{}: warning: game {index}: the judge's summary.pgn is {}, not a string: \
                         it is left out of {}, as any other that is not a string (said once)",
                        self.who,
                        kind(other),
                        self.path.display()
                    );
                }
                None
            }
        }
    }
}

/// A JSON value's kind, for people.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
