//! Results as JSON Lines: one object per game, appended as the game ends.
//!
//! Each record is serialized in full first, written with a single `write`
//! on a file opened for appending (so records never interleave), and
//! fsynced before the next game starts, so a crash of the referee — or of
//! the machine — loses at most the game in flight. A run that was killed in
//! the middle of a write leaves a torn last line: the next run that opens
//! the file ends it with a newline (so its own records start clean), and
//! readers skip it with a warning.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

/// Whether records are fsynced (`--no-fsync` turns it off, for speed).
static FSYNC: AtomicBool = AtomicBool::new(true);

/// Turns fsyncing of records off or on for the whole process.
pub fn set_fsync(on: bool) {
    FSYNC.store(on, Ordering::Relaxed);
}

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
    /// Opens (creating if needed) `path` for appending. A torn last line
    /// left by an interrupted run is closed off with a newline, with a
    /// warning.
    pub fn open(path: &Path) -> Result<Records, RecordError> {
        let error = |source| RecordError {
            path: path.to_owned(),
            source,
        };
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)
            .map_err(error)?;
        let len = file.metadata().map_err(error)?.len();
        if len > 0 {
            let mut last = [0u8];
            file.seek(SeekFrom::Start(len - 1)).map_err(error)?;
            file.read_exact(&mut last).map_err(error)?;
            if last[0] != b'\n' {
                tracing::warn!(
                    "results file {} ends with an incomplete record (an interrupted run?); it is ignored",
                    path.display()
                );
                eprintln!(
                    "referee: warning: {} ends with an incomplete record (an interrupted run?); it is ignored",
                    path.display()
                );
                file.write_all(b"\n").map_err(error)?;
            }
        }
        Ok(Records {
            path: path.to_owned(),
            file,
            line: Vec::with_capacity(1024),
        })
    }

    /// Appends one record as one line, and makes it durable.
    pub fn append<T: serde::Serialize>(&mut self, record: &T) -> Result<(), RecordError> {
        let error = |source| RecordError {
            path: self.path.clone(),
            source,
        };
        self.line.clear();
        serde_json::to_writer(&mut self.line, record).map_err(|e| error(e.into()))?;
        self.line.push(b'\n');
        self.file.write_all(&self.line).map_err(error)?;
        if FSYNC.load(Ordering::Relaxed) {
            self.file.sync_data().map_err(error)?;
        }
        Ok(())
    }
}

/// Reads every complete record of a results file. Lines that are not JSON
/// objects (a torn line from an interrupted run) are skipped with a warning
/// naming the line. A missing file has no records.
pub fn read_records(path: &Path) -> Result<Vec<serde_json::Value>, RecordError> {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(vec![]),
        Err(source) => {
            return Err(RecordError {
                path: path.to_owned(),
                source,
            });
        }
    };
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(value) if value.is_object() => records.push(value),
            _ => eprintln!(
                "referee: warning: {}, line {}: not a complete record; skipped",
                path.display(),
                i + 1
            ),
        }
    }
    Ok(records)
}

/// A short, stable fingerprint of the parameters that decide a run's games
/// (FNV-1a, 64 bits, hex), recorded with every game so that `--resume`
/// only counts games of the same run.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.as_bytes().iter().chain(b"\0") {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// The time now, as RFC 3339 in UTC with microseconds, for records.
pub fn timestamp() -> String {
    humantime::format_rfc3339_micros(SystemTime::now()).to_string()
}

/// The referee's version, recorded with every result.
pub const REFEREE_VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_line_is_closed_off_and_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, "{\"a\":1}\n{\"b\":").unwrap();
        let mut records = Records::open(&path).unwrap();
        records.append(&serde_json::json!({"c": 3})).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"b\":\n{\"c\":3}\n"
        );
        let read = read_records(&path).unwrap();
        assert_eq!(
            read,
            vec![serde_json::json!({"a": 1}), serde_json::json!({"c": 3})]
        );
    }

    #[test]
    fn fingerprints_are_stable_and_sensitive() {
        assert_eq!(fingerprint(&["a", "b"]), fingerprint(&["a", "b"]));
        assert_ne!(fingerprint(&["a", "b"]), fingerprint(&["ab"]));
        assert_eq!(fingerprint(&[]), "cbf29ce484222325");
    }
}
