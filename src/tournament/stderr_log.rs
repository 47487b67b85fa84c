//! `OUT/stderr/NAME.log`: each entrant's standard error, game by game.
//!
//! ```text
//! standard error of entrant alice
//! --- game 3 (12 bytes) ---
//! thinking...
//!
//! --- game 4 (6 bytes) ---
//! done.
//!
//! ```
//!
//! A section's header gives the length in bytes of what the entrant wrote
//! in the game, which follows it, then a line end. A reader skips that
//! text whole: a line of it that looks like a header is never taken for
//! one, so the sort below cannot be fooled by what a bot writes.
//!
//! A game's sections are appended as its record is written, so a crash
//! loses at most the games in flight. Games played at once finish out of
//! order, so the files are put in game order ([`tidy`]) when a run opens
//! its `--out` and when it ends, however it ends; `merge --out` writes
//! them in game order ([`merge`]).

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use crate::game::GameRecord;
use crate::record::NewFile;
use crate::text;

/// The logs' directory in an output directory.
const DIR: &str = "stderr";

/// A header is never longer than this (two numbers and the words).
const LONGEST_HEADER: u64 = 64;

/// The first line is never longer than this (an entrant's name, escaped).
const LONGEST_TITLE: u64 = 1 << 16;

/// Appends each entrant's stderr of this game to `OUT/stderr/NAME.log`
/// (NAME: [`text::file_name`], one file per entrant), which starts with a
/// line naming the entrant.
pub fn save(out: &Path, record: &GameRecord) {
    for result in &record.results {
        let (Some(name), Some(stderr)) = (&result.entrant, &result.stderr) else {
            continue;
        };
        if stderr.is_empty() {
            continue;
        }
        let path = out.join(DIR).join(format!("{}.log", text::file_name(name)));
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| {
                // A new file says whose it is; a resumed run's goes on.
                let mut section = String::new();
                if f.metadata()?.len() == 0 {
                    section = format!("standard error of entrant {}\n", text::terminal(name));
                }
                section.push_str(&header(record.index, stderr.len()));
                section.push_str(stderr);
                section.push('\n');
                // One write: a crash tears this game's section at most.
                f.write_all(section.as_bytes())
            });
        if let Err(e) = written {
            eprintln!("referee tournament: {}: {e}", path.display());
        }
    }
}

/// A section's header, its line end included.
fn header(game: u64, bytes: usize) -> String {
    format!("--- game {game} ({bytes} bytes) ---\n")
}

/// The game and length a header line (its line end included) gives.
fn parse_header(line: &[u8]) -> Option<(u64, u64)> {
    let line = std::str::from_utf8(line).ok()?.strip_suffix('\n')?;
    let (game, bytes) = line
        .strip_prefix("--- game ")?
        .strip_suffix(" bytes) ---")?
        .split_once(" (")?;
    let number = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    Some((number(game)?, number(bytes)?))
}

/// A file read at offsets that come nearly in order: what is still in its
/// buffer is not read again.
pub(super) struct Reader {
    file: BufReader<File>,
    at: u64,
}

impl Reader {
    pub(super) fn open(path: &Path) -> io::Result<Reader> {
        Ok(Reader {
            file: BufReader::with_capacity(1 << 16, File::open(path)?),
            at: 0,
        })
    }

    /// Reads a line of `longest` bytes at most, its line end included.
    pub(super) fn line(&mut self, longest: u64, line: &mut Vec<u8>) -> io::Result<u64> {
        line.clear();
        let n = (&mut self.file).take(longest).read_until(b'\n', line)? as u64;
        self.at += n;
        Ok(n)
    }

    /// Copies `len` bytes from `at` into `out`.
    pub(super) fn copy(&mut self, at: u64, len: u64, out: &mut impl Write) -> io::Result<()> {
        self.skip_to(at)?;
        let copied = io::copy(&mut (&mut self.file).take(len), out)?;
        self.at += copied;
        if copied < len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }

    fn skip_to(&mut self, at: u64) -> io::Result<()> {
        // Relative: within what the buffer holds, no read again.
        self.file.seek_relative(at as i64 - self.at as i64)?;
        self.at = at;
        Ok(())
    }
}

/// One stderr log, read as far as it is in the format: where its parts
/// are.
struct Log {
    reader: Reader,
    /// The first line's length, its line end included.
    title: u64,
    /// Each section: its game, where it starts, its length.
    sections: Vec<(u64, u64, u64)>,
    /// What follows the sections that is not one (an older format's text),
    /// from there to the end: kept as it is, after them.
    rest: Option<(u64, u64)>,
    /// The last section was torn (a crash in its write): it is left out.
    torn: bool,
}

impl Log {
    fn read(path: &Path) -> io::Result<Log> {
        let size = std::fs::metadata(path)?.len();
        let mut log = Log {
            reader: Reader::open(path)?,
            title: 0,
            sections: Vec::new(),
            rest: None,
            torn: false,
        };
        let mut line = Vec::new();
        let n = log.reader.line(LONGEST_TITLE, &mut line)?;
        // Every write here ends with a line end: a last line without one
        // is a write cut short.
        let cut_short = |line: &[u8], at: u64, n: u64| !line.ends_with(b"\n") && at + n == size;
        if cut_short(&line, 0, n) {
            log.torn = n > 0;
            return Ok(log);
        }
        if !line.ends_with(b"\n") {
            log.rest = Some((0, size));
            return Ok(log);
        }
        log.title = n;
        let mut at = n;
        while at < size {
            let n = log.reader.line(LONGEST_HEADER, &mut line)?;
            let Some((game, bytes)) = parse_header(&line) else {
                log.torn = cut_short(&line, at, n);
                log.rest = (!log.torn).then_some((at, size - at));
                break;
            };
            // A length past the end (or past any file: an edited one).
            let end = (at + n).checked_add(bytes).map_or(u64::MAX, |e| e + 1);
            if end > size {
                log.torn = true;
                break;
            }
            log.reader.skip_to(end - 1)?;
            if log.reader.line(1, &mut line)? != 1 || line != b"\n" {
                log.rest = Some((at, size - at));
                break;
            }
            log.sections.push((game, at, end - at));
            at = end;
        }
        Ok(log)
    }

    /// Whether the file is in game order already, whole.
    fn in_order(&self) -> bool {
        !self.torn && self.sections.windows(2).all(|w| w[0].0 < w[1].0)
    }
}

/// The parts of `logs` (the same entrant's, in the order given) to write,
/// as (log, start, length): a first line; every game's section once, in
/// game order (of a game there more than once, the first log's last one:
/// a game played again after a crash replaced the one before); then what
/// in each log is in no section.
fn in_game_order(logs: &[Log]) -> Vec<(usize, u64, u64)> {
    let mut sections: Vec<(u64, usize, std::cmp::Reverse<u64>, u64)> = logs
        .iter()
        .enumerate()
        .flat_map(|(i, log)| {
            log.sections
                .iter()
                .map(move |&(game, at, len)| (game, i, std::cmp::Reverse(at), len))
        })
        .collect();
    sections.sort_unstable();
    sections.dedup_by_key(|s| s.0);
    let title = logs.iter().position(|log| log.title > 0);
    title
        .map(|i| (i, 0, logs[i].title))
        .into_iter()
        .chain(sections.into_iter().map(|(_, i, at, len)| (i, at.0, len)))
        .chain(
            logs.iter()
                .enumerate()
                .filter_map(|(i, log)| log.rest.map(|(at, len)| (i, at, len))),
        )
        .collect()
}

/// Writes `path` whole, from `parts` of `logs` (see [`in_game_order`]).
fn write(path: &Path, logs: &mut [Log], parts: &[(usize, u64, u64)]) -> io::Result<()> {
    let mut out = NewFile::create(path)?;
    for &(i, at, len) in parts {
        logs[i].reader.copy(at, len, &mut out)?;
    }
    out.commit()
}

/// Puts every stderr log of the output directory `out` in game order, a
/// game once, leaving out a section torn by a crash (its game was not
/// recorded: it is played again). A log already in order is not written.
pub fn tidy(out: &Path) -> Result<(), String> {
    let dir = out.join(DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        // A rewrite cut short (a run killed during it) left its
        // temporary file; a log's name never starts with a dot.
        if name.starts_with('.') && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        if !name.ends_with(".log") || !path.is_file() {
            continue;
        }
        let tidied = Log::read(&path).and_then(|mut log| {
            if log.in_order() {
                return Ok(());
            }
            let parts = in_game_order(std::slice::from_ref(&log));
            write(&path, std::slice::from_mut(&mut log), &parts)
        });
        tidied.map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Writes `into/stderr/NAME.log` for every log of the output directories
/// `outs` (the shards of a run): their sections in game order, a game
/// once (from the first shard that has it).
pub fn merge(outs: &[PathBuf], into: &Path) -> Result<(), String> {
    let mut names = BTreeSet::<OsString>::new();
    for out in outs {
        let dir = out.join(DIR);
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let log = name.to_str().is_some_and(|n| n.ends_with(".log"));
            if log && !name.to_string_lossy().starts_with('.') && entry.path().is_file() {
                names.insert(name);
            }
        }
    }
    let dir = into.join(DIR);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for name in names {
        let paths: Vec<PathBuf> = outs
            .iter()
            .map(|out| out.join(DIR).join(&name))
            .filter(|path| path.is_file())
            .collect();
        let mut logs = Vec::new();
        for path in &paths {
            logs.push(Log::read(path).map_err(|e| format!("{}: {e}", path.display()))?);
        }
        let parts = in_game_order(&logs);
        let path = dir.join(&name);
        write(&path, &mut logs, &parts).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(DIR).join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn section(game: u64, text: &str) -> String {
        format!("{}{text}\n", header(game, text.len()))
    }

    #[test]
    fn headers_are_read_strictly() {
        assert_eq!(parse_header(b"--- game 12 (0 bytes) ---\n"), Some((12, 0)));
        let huge = format!("t\n--- game 1 ({} bytes) ---\nx\n", u64::MAX);
        let dir = tempfile::tempdir().unwrap();
        let path = log(dir.path(), "a.log", &huge);
        assert!(Log::read(&path).unwrap().torn);
        for bad in [
            "--- game 12 ---\n",
            "--- game +1 (3 bytes) ---\n",
            "--- game 1 (3 bytes) ---",
            "--- game 1 (-3 bytes) ---\n",
        ] {
            assert_eq!(parse_header(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn a_log_is_sorted_by_its_lengths_not_by_lines_that_look_like_headers() {
        let dir = tempfile::tempdir().unwrap();
        let forged = "--- game 1 (2 bytes) ---\nxy\n--- game 0 ---";
        let text = format!(
            "standard error of entrant a\n{}{}{}{}",
            section(3, forged),
            section(1, "one\n"),
            section(3, "three, played again\n"),
            // Torn by a crash: left out.
            &section(2, "two\n")[..28],
        );
        let path = log(dir.path(), "a.log", &text);
        tidy(dir.path()).unwrap();
        let expected = format!(
            "standard error of entrant a\n{}{}",
            section(1, "one\n"),
            section(3, "three, played again\n"),
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        // A write cut short in its header is left out too.
        let text = format!("t\n{}{}", section(2, "b"), &section(1, "a")[..10]);
        log(dir.path(), "a.log", &text);
        tidy(dir.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("t\n{}", section(2, "b"))
        );
    }

    #[test]
    fn text_in_no_section_is_kept_after_the_sections() {
        let dir = tempfile::tempdir().unwrap();
        let old = "--- game 1 ---\nan older format\n";
        let text = format!("t\n{}{}{old}", section(2, "b"), section(1, "a"));
        let path = log(dir.path(), "a.log", &text);
        tidy(dir.path()).unwrap();
        let expected = format!("t\n{}{}{old}", section(1, "a"), section(2, "b"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        // In order: not written again.
        let before = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        tidy(dir.path()).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            before
        );
    }

    #[test]
    fn shards_merge_in_game_order_a_game_once() {
        let dir = tempfile::tempdir().unwrap();
        let outs = [dir.path().join("s1"), dir.path().join("s2")];
        log(
            &outs[0],
            "a.log",
            &format!("t\n{}{}", section(3, "c"), section(1, "a")),
        );
        log(
            &outs[1],
            "a.log",
            &format!("t\n{}{}", section(2, "b"), section(3, "c2")),
        );
        log(&outs[1], "b.log", &format!("u\n{}", section(2, "x")));
        let into = dir.path().join("all");
        merge(&outs, &into).unwrap();
        let read = |name: &str| std::fs::read_to_string(into.join(DIR).join(name)).unwrap();
        let a = format!(
            "t\n{}{}{}",
            section(1, "a"),
            section(2, "b"),
            section(3, "c")
        );
        assert_eq!(read("a.log"), a);
        assert_eq!(read("b.log"), format!("u\n{}", section(2, "x")));
    }
}
