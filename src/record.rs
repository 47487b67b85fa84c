//! Results as JSON Lines: one object per game, appended as the game ends.
//!
//! Each record is serialized in full first and written with a single
//! `write` on a file opened for appending (so records never interleave) as
//! soon as its game ends: a killed referee loses at most the game in
//! flight. Making the records durable against a power loss costs an fsync,
//! which is batched (group commit): a record is fsynced at once when the
//! last fsync is older than [`SYNC_INTERVAL`], otherwise within that
//! interval by a background thread, and always when the file is closed
//! ([`Records::finish`], or dropping it). A power loss therefore costs at
//! most the games finished in the last [`SYNC_INTERVAL`]. A failed write or
//! fsync is an error of the run (exit status 74); a failure of the
//! background fsync is returned by the next append or by `finish`.
//!
//! A run that was killed in the middle of a write leaves a torn last line:
//! the next run that opens the file ends it with a newline (so its own
//! records start clean), and readers skip it with a warning.
//!
//! Every record begins with the version of the records' format,
//! `"format":2` ([`FORMAT`]), written here for every command's records,
//! whatever writes their fields. Records without one are of format 1,
//! written before it was kept, and are read as they were: a tournament's
//! seats under `results` where format 2 has `players`, as `play` and
//! `chomp` always had (`docs/results.md`). A record of a format newer
//! than this referee's is an error of the file it is in, never a record
//! read wrong.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

pub mod object;
pub mod pgn;

/// Whether records are fsynced (`--no-fsync` turns it off, for speed).
static FSYNC: AtomicBool = AtomicBool::new(true);

/// The version of the records' format that this referee writes, first in
/// every record: `{"format":2,...}`. Format 1 (no `format` field) named a
/// tournament's seats `results`; format 2 names every record's seats
/// `players`.
pub const FORMAT: u64 = 2;

/// How a record begins: its format ([`FORMAT`]), then its own fields.
const FORMAT_FIELD: &[u8] = b"{\"format\":2";

/// Writes into `line` the record that `write` writes, with the format
/// first ([`FORMAT_FIELD`]): the record's own opening `{` becomes the
/// comma after it, so its fields follow unchanged, byte for byte.
fn write_versioned<R>(line: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    line.extend_from_slice(FORMAT_FIELD);
    let at = line.len();
    let written = write(line);
    match line.get(at..at + 2) {
        Some(b"{}") => {
            line.truncate(at);
            line.push(b'}');
        }
        Some([b'{', _]) => line[at] = b',',
        // Not an object (nothing a referee writes): as it was.
        _ => {
            line.drain(..at);
        }
    }
    written
}

/// The longest a finished game's record stays written but not fsynced.
pub const SYNC_INTERVAL: Duration = Duration::from_millis(100);

/// Turns fsyncing of records off or on for the whole process.
pub fn set_fsync(on: bool) {
    FSYNC.store(on, Ordering::Relaxed);
}

pub fn fsync_on() -> bool {
    FSYNC.load(Ordering::Relaxed)
}

/// An open results file.
pub struct Records {
    path: PathBuf,
    shared: Arc<Shared>,
    line: Vec<u8>,
    /// The background fsyncer (only when fsyncing is on).
    syncer: Option<JoinHandle<()>>,
}

/// What the appender and the background fsyncer share.
struct Shared {
    file: File,
    state: Mutex<SyncState>,
    wake: Condvar,
}

struct SyncState {
    /// Records were written since the last fsync began.
    dirty: bool,
    /// When the last fsync began.
    last_sync: Instant,
    /// A background fsync failed; reported by the next call.
    failed: Option<io::Error>,
    /// The file is being closed: the background thread ends.
    closed: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, SyncState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
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
        let shared = Arc::new(Shared {
            file,
            state: Mutex::new(SyncState {
                dirty: false,
                last_sync: Instant::now(),
                failed: None,
                closed: false,
            }),
            wake: Condvar::new(),
        });
        let syncer = if fsync_on() {
            let shared = Arc::clone(&shared);
            let syncer = std::thread::Builder::new()
                .name("fsync".into())
                .spawn(move || background_sync(&shared))
                .map_err(error)?;
            Some(syncer)
        } else {
            None
        };
        Ok(Records {
            path: path.to_owned(),
            shared,
            line: Vec::with_capacity(1024),
            syncer,
        })
    }

    /// Appends one record as one line, written to the file at once; it is
    /// fsynced now if the last fsync is older than [`SYNC_INTERVAL`], else
    /// within that interval.
    pub fn append<T: serde::Serialize>(&mut self, record: &T) -> Result<(), RecordError> {
        self.line.clear();
        write_versioned(&mut self.line, |line| serde_json::to_writer(line, record)).map_err(
            |e| RecordError {
                path: self.path.clone(),
                source: e.into(),
            },
        )?;
        self.write_line()
    }

    /// [`Records::append`] for a record that writes itself (see
    /// [`object`]): `write` puts one JSON value into the line.
    pub fn append_written(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), RecordError> {
        self.line.clear();
        write_versioned(&mut self.line, write);
        self.write_line()
    }

    /// Ends the line made by an append, and writes it.
    fn write_line(&mut self) -> Result<(), RecordError> {
        let error = |source| RecordError {
            path: self.path.clone(),
            source,
        };
        self.line.push(b'\n');
        // A game that ends while the run is ending was ended by the kill.
        crate::interrupt::stop_if_ending();
        (&self.shared.file).write_all(&self.line).map_err(error)?;
        if !fsync_on() {
            return Ok(());
        }
        let mut state = self.shared.lock();
        if let Some(e) = state.failed.take() {
            return Err(error(e));
        }
        let now = Instant::now();
        if now.duration_since(state.last_sync) >= SYNC_INTERVAL {
            state.dirty = false;
            state.last_sync = now;
            drop(state);
            self.shared.file.sync_data().map_err(error)?;
        } else if !state.dirty {
            state.dirty = true;
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Makes every record appended so far durable (a no-op with
    /// `--no-fsync`), and reports a failed background fsync.
    pub fn sync(&mut self) -> Result<(), RecordError> {
        let error = |source| RecordError {
            path: self.path.clone(),
            source,
        };
        let mut state = self.shared.lock();
        if let Some(e) = state.failed.take() {
            return Err(error(e));
        }
        if !state.dirty || !fsync_on() {
            return Ok(());
        }
        state.dirty = false;
        state.last_sync = Instant::now();
        drop(state);
        self.shared.file.sync_data().map_err(error)
    }

    /// Closes the file after a last fsync. Dropping the file does the same
    /// but can only warn about a failure.
    pub fn finish(mut self) -> Result<(), RecordError> {
        self.stop_syncer();
        self.sync()
    }

    fn stop_syncer(&mut self) {
        if let Some(syncer) = self.syncer.take() {
            self.shared.lock().closed = true;
            self.shared.wake.notify_one();
            let _ = syncer.join();
        }
    }
}

impl Drop for Records {
    fn drop(&mut self) {
        self.stop_syncer();
        if let Err(e) = self.sync() {
            eprintln!("referee: {e}");
        }
    }
}

/// The background fsyncer: fsyncs written records at most
/// [`SYNC_INTERVAL`] after the last fsync, until the file is closed.
fn background_sync(shared: &Shared) {
    let mut state = shared.lock();
    loop {
        if state.closed {
            return;
        }
        if !state.dirty {
            state = shared.wake.wait(state).unwrap_or_else(|e| e.into_inner());
            continue;
        }
        let due = state.last_sync + SYNC_INTERVAL;
        let now = Instant::now();
        if now < due {
            state = shared
                .wake
                .wait_timeout(state, due - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            continue;
        }
        state.dirty = false;
        state.last_sync = now;
        drop(state);
        let synced = shared.file.sync_data();
        state = shared.lock();
        if let Err(e) = synced {
            state.failed.get_or_insert(e);
        }
    }
}

/// Writes a whole file of the referee's own (run description, standings,
/// a copy, a report), fsynced unless `--no-fsync`. The contents go to a
/// temporary file beside it, which is then renamed over it: a reader sees
/// the old file or the new one, never a part, and a failed write (a full
/// disk) leaves the old file as it was. A symbolic link is written
/// through; what is not a regular file (`/dev/stdout`, a FIFO) is written
/// to directly. The error names the file.
pub fn write_file(path: &Path, contents: &[u8]) -> Result<(), String> {
    let written = match std::fs::canonicalize(path) {
        Ok(target) if !target.is_file() => write_directly(&target, contents),
        Ok(target) => replace(&target, contents),
        Err(_) => replace(path, contents),
    };
    written.map_err(|e| format!("{}: {e}", path.display()))
}

fn write_directly(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).open(path)?;
    file.write_all(contents)?;
    file.flush()
}

/// Writes `path` whole by way of a temporary file renamed over it.
fn replace(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut file = NewFile::create(path)?;
    file.write_all(contents)?;
    file.commit()
}

/// A file written whole or not at all, however long it takes to write: a
/// temporary file beside it, renamed over it by [`NewFile::commit`] (and
/// removed if dropped before).
pub struct NewFile {
    path: PathBuf,
    temp: io::BufWriter<tempfile::NamedTempFile>,
}

impl NewFile {
    pub fn create(path: &Path) -> io::Result<NewFile> {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            // Read as any file the referee writes (umask applies), not 0600.
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .tempfile_in(dir_of(path))?;
        Ok(NewFile {
            path: path.to_owned(),
            temp: io::BufWriter::with_capacity(1 << 16, temp),
        })
    }

    /// Puts the file in place, durably unless `--no-fsync`.
    pub fn commit(self) -> io::Result<()> {
        let temp = self.temp.into_inner().map_err(|e| e.into_error())?;
        if fsync_on() {
            temp.as_file().sync_all()?;
        }
        // A failed rename drops, and so removes, the temporary file.
        temp.persist(&self.path).map_err(|e| e.error)?;
        // The rename itself is durable once its directory is.
        if fsync_on() {
            File::open(dir_of(&self.path))?.sync_all()?;
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.temp.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.flush()
    }
}

fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Reads every complete record of a results file. Lines that are not
/// records of the kind asked for (a torn line from an interrupted run, a
/// line from another tool) are skipped with a warning naming the line and
/// what is wrong with it. A missing file has no records.
pub fn read_records<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, RecordError> {
    records(path)?.collect()
}

/// What `--resume` takes up: the records of `game`'s run `fingerprint`
/// in the results file, and the file; `None` without `--resume`. `what`
/// names the run's games (`games`, `matches`) where the file is missing.
pub fn resumed<'p>(
    resume: bool,
    results: Option<&'p Path>,
    game: &str,
    fingerprint: &str,
    what: &str,
) -> Result<Option<(&'p Path, Vec<serde_json::Value>)>, String> {
    if !resume {
        return Ok(None);
    }
    let path = results.ok_or_else(|| {
        format!("--resume needs --results FILE (where the earlier {what} were written)")
    })?;
    let stored = read_records::<serde_json::Value>(path)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|r| r["game"] == game && r["run"] == fingerprint)
        .collect();
    Ok(Some((path, stored)))
}

/// The records of a results file one at a time, as [`read_records`] reads
/// them, in the memory of one line: for files of millions of games.
pub fn records<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> Result<impl Iterator<Item = Result<T, RecordError>> + use<T>, RecordError> {
    Ok(numbered_records(path)?.map(|r| r.map(|(_, record)| record)))
}

/// [`records`] with each record's line number (from 1), for messages
/// that name the line.
pub fn numbered_records<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> Result<impl Iterator<Item = Result<(usize, T), RecordError>> + use<T>, RecordError> {
    let path_owned = path.to_owned();
    Ok(objects(path)?.filter_map(move |object| match object {
        Ok((line, value)) => match T::deserialize(value) {
            Ok(record) => Some(Ok((line, record))),
            Err(e) => {
                skipped(&path_owned, line, &e.to_string());
                None
            }
        },
        Err(e) => Some(Err(e)),
    }))
}

/// Every line of a results file that is a JSON object, with its line
/// number (from 1). Other lines (a torn line from an interrupted run, a
/// line cut in the middle of a character) are skipped with a warning
/// naming the line. A missing file has none.
pub fn read_objects(path: &Path) -> Result<Vec<(usize, serde_json::Value)>, RecordError> {
    objects(path)?.collect()
}

/// The objects of [`read_objects`], one line read at a time.
pub fn objects(
    path: &Path,
) -> Result<
    impl Iterator<Item = Result<(usize, serde_json::Value), RecordError>> + use<>,
    RecordError,
> {
    Ok(sized_objects(path)?.map(|object| object.map(|(line, _, value)| (line, value))))
}

/// The objects of [`read_objects`], one line read at a time, each with
/// its line's length in bytes.
pub fn sized_objects(
    path: &Path,
) -> Result<
    impl Iterator<Item = Result<(usize, usize, serde_json::Value), RecordError>> + use<>,
    RecordError,
> {
    use std::io::BufRead;
    let file = match File::open(path) {
        Ok(file) => Some(io::BufReader::with_capacity(1 << 16, file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(RecordError {
                path: path.to_owned(),
                source,
            });
        }
    };
    let path = path.to_owned();
    let mut reader = file;
    let mut number = 0;
    let mut line = Vec::new();
    Ok(std::iter::from_fn(move || {
        let file = reader.as_mut()?;
        loop {
            line.clear();
            match file.read_until(b'\n', &mut line) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(source) => {
                    reader = None;
                    return Some(Err(RecordError {
                        path: path.clone(),
                        source,
                    }));
                }
            }
            number += 1;
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            if text.trim_ascii().is_empty() {
                continue;
            }
            match serde_json::from_slice::<serde_json::Value>(text) {
                Ok(value) if value.is_object() => {
                    return Some(match newer_format(&value) {
                        Some(format) => {
                            reader = None;
                            Err(RecordError {
                                path: path.clone(),
                                source: io::Error::new(
                                    io::ErrorKind::InvalidData,
                                    format!(
                                        "line {number}: a record of format {format}, newer \
                                         than this referee reads (formats 1 to {FORMAT}): \
                                         read it with a newer referee"
                                    ),
                                ),
                            })
                        }
                        None => Ok((number, text.len(), value)),
                    });
                }
                _ => skipped(&path, number, "not a complete record"),
            }
        }
    }))
}

/// The format of `record` when it is newer than this referee reads.
fn newer_format(record: &serde_json::Value) -> Option<&serde_json::Value> {
    let format = record.get("format")?;
    match format.as_u64() {
        Some(n) if n <= FORMAT => None,
        // A format that is not a whole number is no format of ours either.
        _ => Some(format),
    }
}

fn skipped(path: &Path, line: usize, why: &str) {
    eprintln!(
        "referee: warning: {}, line {line}: {why}; skipped",
        path.display()
    );
}

/// One record as one line of a results file, `\n` included, its format
/// first as [`Records::append`] writes it.
pub fn to_line<T: serde::Serialize>(record: &T) -> String {
    let mut line = Vec::with_capacity(1024);
    if write_versioned(&mut line, |line| serde_json::to_writer(line, record)).is_err() {
        return "\n".to_owned();
    }
    line.push(b'\n');
    // serde_json writes UTF-8.
    String::from_utf8(line).unwrap_or_default()
}

/// A short, stable fingerprint of the parameters that decide a run's games
/// (FNV-1a, 64 bits, hex), recorded with every game so that `--resume`
/// only counts games of the same run.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut hash = FNV_START;
    for part in parts {
        hash = fnv(hash, part.as_bytes());
        hash = fnv(hash, b"\0");
    }
    format!("{hash:016x}")
}

/// [`fingerprint`] of one part, the text of `bytes` with what is not
/// UTF-8 replaced as `String::from_utf8_lossy` replaces it, without
/// making that text: a judge's binary of 90 MB is read once, not copied.
pub fn fingerprint_lossy(bytes: &[u8]) -> String {
    let mut hash = FNV_START;
    for chunk in bytes.utf8_chunks() {
        hash = fnv(hash, chunk.valid().as_bytes());
        if !chunk.invalid().is_empty() {
            hash = fnv(
                hash,
                char::REPLACEMENT_CHARACTER
                    .encode_utf8(&mut [0; 4])
                    .as_bytes(),
            );
        }
    }
    hash = fnv(hash, b"\0");
    format!("{hash:016x}")
}

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, 64 bits, of `bytes` after `hash`.
fn fnv(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The time now, as RFC 3339 in UTC with microseconds, for records.
pub fn timestamp() -> String {
    humantime::format_rfc3339_micros(SystemTime::now()).to_string()
}

/// A record's time as [`timestamp`] writes it, serialized (for the serde
/// derive of a record that also writes itself: see [`write_time`]).
pub fn serialize_time<S: serde::Serializer>(at: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&humantime::format_rfc3339_micros(*at))
}

/// A record's time as [`timestamp`] writes it, for a record written field
/// by field (see [`object`]): `2026-11-26T21:55:56.320697Z`, between
/// quotes, without the formatting machinery or a string of its own. A
/// clock set before 1970 gives the epoch, and one past 9999 a four-digit
/// year modulo 10,000, where humantime panics: wrong, but not a crash of
/// a run for the machine's clock.
pub fn write_time(out: &mut Vec<u8>, at: SystemTime) {
    let since = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = since.as_secs();
    let (year, month, day) = civil_date(seconds / 86_400);
    let of_day = seconds % 86_400;
    // Two digits at a time, each by a constant divisor: no division
    // instruction.
    let two = |out: &mut Vec<u8>, value: u64| {
        out.push(b'0' + (value / 10 % 10) as u8);
        out.push(b'0' + (value % 10) as u8);
    };
    let micros = u64::from(since.subsec_micros());
    out.push(b'"');
    two(out, year / 100);
    two(out, year);
    out.push(b'-');
    two(out, month);
    out.push(b'-');
    two(out, day);
    out.push(b'T');
    two(out, of_day / 3600);
    out.push(b':');
    two(out, of_day / 60 % 60);
    out.push(b':');
    two(out, of_day % 60);
    out.push(b'.');
    two(out, micros / 10_000);
    two(out, micros / 100);
    two(out, micros);
    out.extend_from_slice(b"Z\"");
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_date(days: u64) -> (u64, u64, u64) {
    let shifted = days + 719_468;
    let era = shifted / 146_097;
    let day_of_era = shifted % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// The referee's version, recorded with every result.
pub const REFEREE_VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn a_lossy_fingerprint_is_that_of_the_lossy_text(bytes: Vec<u8>) {
            proptest::prop_assert_eq!(
                fingerprint_lossy(&bytes),
                fingerprint(&[&String::from_utf8_lossy(&bytes)])
            );
        }

        /// Any time up to the year 9999 is written as humantime writes it.
        #[test]
        fn a_time_is_written_as_humantime_writes_it(
            seconds in 0..253_402_300_800u64,
            micros in 0..1_000_000u32,
        ) {
            let at = SystemTime::UNIX_EPOCH
                + Duration::from_secs(seconds)
                + Duration::from_micros(u64::from(micros));
            let mut out = Vec::new();
            write_time(&mut out, at);
            let expected = format!("\"{}\"", humantime::format_rfc3339_micros(at));
            proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), expected);
        }
    }

    #[test]
    fn a_torn_line_is_closed_off_and_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, "{\"a\":1}\n{\"b\":").unwrap();
        let mut records = Records::open(&path).unwrap();
        records.append(&serde_json::json!({"c": 3})).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"b\":\n{\"format\":2,\"c\":3}\n"
        );
        let read = read_records::<serde_json::Value>(&path).unwrap();
        assert_eq!(
            read,
            vec![
                serde_json::json!({"a": 1}),
                serde_json::json!({"format": 2, "c": 3})
            ]
        );
    }

    #[test]
    fn every_record_begins_with_its_format_and_keeps_its_fields_byte_for_byte() {
        assert_eq!(FORMAT_FIELD, format!("{{\"format\":{FORMAT}").as_bytes());
        let record = serde_json::json!({"game": "g", "players": [{"seat": 0}], "n": 1.5});
        let plain = serde_json::to_string(&record).unwrap();
        let line = to_line(&record);
        assert_eq!(line, format!("{{\"format\":2,{}\n", &plain[1..]));
        assert_eq!(to_line(&serde_json::json!({})), "{\"format\":2}\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let mut records = Records::open(&path).unwrap();
        records.append(&record).unwrap();
        records
            .append_written(|out| out.extend_from_slice(plain.as_bytes()))
            .unwrap();
        records.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), line.repeat(2));
    }

    #[test]
    fn a_record_of_a_newer_format_is_an_error_naming_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, "{\"a\":1}\n{\"format\":2}\n{\"format\":3,\"b\":2}\n").unwrap();
        let e = read_records::<serde_json::Value>(&path).unwrap_err();
        let said = e.to_string();
        assert!(
            said.contains("r.jsonl") && said.contains("line 3: a record of format 3"),
            "{said}"
        );
    }

    #[test]
    fn records_are_in_the_file_at_once_and_finish_syncs_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let mut records = Records::open(&path).unwrap();
        for i in 0..50 {
            records.append(&serde_json::json!({ "i": i })).unwrap();
            // Written, not only buffered: another reader sees it now.
            assert_eq!(
                read_records::<serde_json::Value>(&path).unwrap().len(),
                i + 1
            );
        }
        records.sync().unwrap();
        records.finish().unwrap();
        assert_eq!(read_records::<serde_json::Value>(&path).unwrap().len(), 50);
    }

    #[test]
    fn a_full_disk_is_an_error_naming_the_file() {
        let Ok(mut records) = Records::open(Path::new("/dev/full")) else {
            return;
        };
        let e = records.append(&serde_json::json!({"a": 1})).unwrap_err();
        assert_eq!(e.source.raw_os_error(), Some(nix::libc::ENOSPC));
        assert!(e.to_string().contains("/dev/full"), "{e}");
        assert!(
            write_file(Path::new("/dev/full"), b"x")
                .unwrap_err()
                .contains("/dev/full")
        );
    }

    #[test]
    fn fingerprints_are_stable_and_sensitive() {
        assert_eq!(fingerprint(&["a", "b"]), fingerprint(&["a", "b"]));
        assert_ne!(fingerprint(&["a", "b"]), fingerprint(&["ab"]));
        assert_eq!(fingerprint(&[]), "cbf29ce484222325");
    }
}
