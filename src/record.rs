//! Results as JSON Lines: one object per game, appended as the game ends.
//!
//! Each record is serialized in full first and then written with a single
//! `write` on a file opened for appending, so a record is never interleaved
//! with another and an interrupted run loses at most the game in flight.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// An open results file.
pub struct Records {
    path: PathBuf,
    file: File,
    line: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
#[error("results file {}: {source}", .path.display())]
pub struct RecordError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl Records {
    /// Opens (creating if needed) `path` for appending.
    pub fn open(path: &Path) -> Result<Records, RecordError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| RecordError {
                path: path.to_owned(),
                source,
            })?;
        Ok(Records {
            path: path.to_owned(),
            file,
            line: Vec::with_capacity(1024),
        })
    }

    /// Appends one record as one line.
    pub fn append<T: serde::Serialize>(&mut self, record: &T) -> Result<(), RecordError> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, record).map_err(|e| RecordError {
            path: self.path.clone(),
            source: e.into(),
        })?;
        self.line.push(b'\n');
        self.file
            .write_all(&self.line)
            .map_err(|source| RecordError {
                path: self.path.clone(),
                source,
            })
    }
}

/// The time now, as RFC 3339 in UTC with microseconds, for records.
pub fn timestamp() -> String {
    humantime::format_rfc3339_micros(SystemTime::now()).to_string()
}

/// The referee's version, recorded with every result.
pub const REFEREE_VERSION: &str = env!("CARGO_PKG_VERSION");
