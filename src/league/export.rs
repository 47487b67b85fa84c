//! What a league's database gives outside the league: `referee league
//! export DB OUT` (a tournament's `--out`) and `referee league show DB`
//! (the standings in the terminal), both read beside a running league.
//!
//! Both rank as a tournament does ([`standings`]), with one more kind of
//! row: a version that did not build played no game and has no rating;
//! it is ranked after everyone who played, with those that could not
//! play, and its note is a tournament's for a failed build (the
//! compiler's first error), saying that it played no game.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;

use super::db::{Db, Location, Meta, VersionRow};
use super::{Failed, Version, usage};
use crate::exit::Status;
use crate::game::GameRecord;
use crate::outcome::Verdict;
use crate::text;
use crate::tournament::standings::{self, Failure, Failures, Row, Tally};
use crate::tournament::{gamelog, stderr_log};

/// `referee league export DB OUT`: the league's games as a tournament's
/// `--out`, each version an entrant `name@vN`, for `report` and `replay`.
pub fn export(db: &Location, out: &Path) -> Status {
    match export_inner(db, out) {
        Ok(games) => {
            println!(
                "exported {games} game{} to {}",
                if games == 1 { "" } else { "s" },
                out.display()
            );
            Status::Pass
        }
        Err((status, message)) => {
            eprintln!("referee league export: {message}");
            status
        }
    }
}

/// Where an export makes its folders and `games.log` before it puts them
/// in place: an export again into the same folder replaces them whole.
const PARTIAL: &str = ".export.partial";

fn export_inner(at: &Location, out: &Path) -> Result<u64, Failed> {
    let (db, meta) = open(at)?;
    let game: crate::game::GameRef = serde_json::from_str(&meta.game)
        .map_err(|e| usage(format!("{}: its game {:?}: {e}", at.describe(), meta.game)))?;
    std::fs::create_dir_all(out).map_err(io(out))?;
    let fingerprint = format!("league {}", at.describe());
    let partial = make_partial(out)?;
    let records = out.join("records.jsonl");
    let (versions, tally, games) = write_games(&db, &meta, &partial, &records, &fingerprint)?;
    write_build_logs(&partial.join("build"), &versions).map_err(|e| (Status::Io, e))?;
    put_in_place(&partial, out)?;
    let info = run_info(game, &meta, fingerprint, games, &versions);
    write_run(out, &records, &info)?;
    write_standings(out, tally, &versions)?;
    crate::tournament::report::regenerate(out, None).map_err(|e| (Status::Io, e))?;
    Ok(games)
}

/// An error of the file system at `path`, as an export's failure.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Failed {
    let path = path.to_owned();
    move |e: std::io::Error| (Status::Io, format!("{}: {e}", path.display()))
}

/// [`PARTIAL`] in `out`, empty but for its `stderr/`: where `stderr/`,
/// `build/` and `games.log` are made aside.
fn make_partial(out: &Path) -> Result<std::path::PathBuf, Failed> {
    let partial = out.join(PARTIAL);
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(io(&partial))?;
    }
    std::fs::create_dir_all(partial.join("stderr")).map_err(io(&partial))?;
    Ok(partial)
}

/// The league's games to `records` (committed whole) and to `partial`'s
/// `stderr/` and `games.log`. The versions and the games are of one
/// moment: every version seated in a game is one of the run's entrants.
/// The versions, their tally over the games, and the games' count.
fn write_games(
    db: &Db,
    meta: &Meta,
    partial: &Path,
    records: &Path,
    fingerprint: &str,
) -> Result<(Vec<VersionRow>, Tally, u64), Failed> {
    let mut games = Games {
        partial,
        fingerprint,
        records: crate::record::NewFile::create(records).map_err(io(records))?,
        log: gamelog::GameLog::open(&partial.join("games.log")).map_err(|e| (Status::Io, e))?,
        count: 0,
        failed: None,
    };
    let (versions, tally) = db
        .at_one_moment(|db| {
            let versions = db.versions()?;
            let mut tally = Tally::new(meta.solo, &names(&versions), None, None);
            db.each_game(|record| tally.add(games.write(record)))?;
            Ok((versions, tally))
        })
        .map_err(usage)?;
    let Games {
        records: file,
        count,
        failed,
        ..
    } = games;
    if let Some(e) = failed {
        return Err(e);
    }
    file.commit().map_err(io(records))?;
    Ok((versions, tally, count))
}

/// `partial`'s `stderr/`, `build/` and `games.log` into `out`, each in
/// place of the one there; then `partial` gone.
fn put_in_place(partial: &Path, out: &Path) -> Result<(), Failed> {
    for name in ["stderr", "build", "games.log"] {
        let (from, to) = (partial.join(name), out.join(name));
        if to.is_dir() {
            std::fs::remove_dir_all(&to).map_err(io(&to))?;
        }
        if from.exists() {
            std::fs::rename(&from, &to).map_err(io(&to))?;
        }
    }
    std::fs::remove_dir_all(partial).map_err(io(partial))
}

/// The run's `run.json`. Its entrants are the versions that built: one
/// that did not played no game, and is in the standings and grades alone.
fn run_info(
    game: crate::game::GameRef,
    meta: &Meta,
    fingerprint: String,
    games: u64,
    versions: &[VersionRow],
) -> crate::tournament::RunInfo {
    crate::tournament::RunInfo {
        game,
        solo: meta.solo,
        fingerprint,
        seed: meta.seed,
        games,
        entrants: versions
            .iter()
            .filter(|v| v.build_ok)
            .map(|v| Version::name(&v.entrant, v.version))
            .collect(),
        shard: None,
        gauntlet: None,
    }
}

/// `run.json` in `out`, and the PGN file rebuilt from `records`.
fn write_run(out: &Path, records: &Path, info: &crate::tournament::RunInfo) -> Result<(), Failed> {
    let run = out.join("run.json");
    let text = serde_json::to_string_pretty(info).unwrap_or_default();
    std::fs::write(&run, text + "\n").map_err(io(&run))?;
    crate::tournament::pgn::PgnFile::rebuild(out, records, info, "referee league export")
        .map_err(|e| (Status::Io, e))?;
    Ok(())
}

/// The standings of every version, and the grade sheet: a row per
/// student, their current version.
fn write_standings(out: &Path, tally: Tally, versions: &[VersionRow]) -> Result<(), Failed> {
    let standings = Standings::new(tally, versions);
    crate::tournament::write_standings(&standings.tally, &standings.rows(|_| true), out)
        .map_err(|e| (Status::Io, e))?;
    let students = standings.rows(|v| standings.is_current(v));
    let sheet = standings.grades(&students, |v| {
        let path = build_log_path(v);
        v.build_log
            .as_ref()
            .map(|_| format!("its log: {}", path.display()))
    });
    let grades = out.join("grades.csv");
    crate::record::write_file(&grades, sheet.csv().as_bytes()).map_err(|e| (Status::Io, e))
}

/// The league's games, written as a tournament's `--out` has them.
struct Games<'a> {
    /// Where `stderr/` and `games.log` are made.
    partial: &'a Path,
    fingerprint: &'a str,
    records: crate::record::NewFile,
    log: gamelog::GameLog,
    count: u64,
    /// The first write that failed (the rest are not tried).
    failed: Option<Failed>,
}

impl Games<'_> {
    /// One game: its stderr to `stderr/NAME.log`, its record without it
    /// and with the run's fingerprint (what `report` reads), its block to
    /// `games.log`. The record as written.
    fn write(&mut self, mut record: GameRecord) -> GameRecord {
        self.count += 1;
        if self.failed.is_some() {
            return record;
        }
        stderr_log::save(self.partial, &record);
        crate::tournament::units::strip_stderr(&mut record);
        record.tournament = Some(self.fingerprint.to_owned());
        let written = self
            .records
            .write_all(crate::record::to_line(&record).as_bytes())
            .map_err(|e| (self.records.path().to_owned(), e))
            .and_then(|()| {
                let log = self.partial.join("games.log");
                self.log.append(&record).map_err(|e| (log, e))
            });
        if let Err((path, e)) = written {
            self.failed = Some((Status::Io, format!("{}: {e}", path.display())));
        }
        record
    }
}

/// Every version's name, `name@vN`, oldest first.
fn names(versions: &[VersionRow]) -> Vec<String> {
    versions
        .iter()
        .map(|v| Version::name(&v.entrant, v.version))
        .collect()
}

/// Where an export keeps the build log of version `v`: `build/NAME.vN.log`
/// (NAME as for `stderr/`, [`text::file_name`]).
fn build_log_path(v: &VersionRow) -> std::path::PathBuf {
    Path::new("build").join(format!(
        "{}.v{}.log",
        text::file_name(&v.entrant),
        v.version
    ))
}

/// Each version's build log (those that have one) in `dir`.
fn write_build_logs(dir: &Path, versions: &[VersionRow]) -> Result<(), String> {
    for v in versions {
        let Some(log) = &v.build_log else {
            continue;
        };
        let path = dir.join(
            build_log_path(v)
                .strip_prefix("build")
                .unwrap_or(Path::new("")),
        );
        std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&path, log))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// The league's standings: the tally of every version over every game,
/// and each version's row.
struct Standings<'a> {
    tally: Tally,
    /// Each version by its name, `name@vN`.
    versions: HashMap<String, &'a VersionRow>,
    /// Each entrant's current version: its last that built, else (none
    /// built) its last.
    current: HashSet<i64>,
    /// Every version's row, ranked.
    rows: Vec<Row>,
}

impl<'a> Standings<'a> {
    fn new(tally: Tally, versions: &'a [VersionRow]) -> Standings<'a> {
        let mut current: HashMap<&str, &VersionRow> = HashMap::new();
        // Oldest first: a later version is current, unless it did not
        // build and one before it did.
        for v in versions {
            let now = current.entry(&v.entrant).or_insert(v);
            if v.build_ok || !now.build_ok {
                *now = v;
            }
        }
        let versions: HashMap<String, &VersionRow> = versions
            .iter()
            .map(|v| (Version::name(&v.entrant, v.version), v))
            .collect();
        let mut rows = tally.rows();
        for row in &mut rows {
            if versions.get(&row.entrant).is_some_and(|v| !v.build_ok) {
                did_not_build(row);
            }
        }
        Standings {
            tally,
            versions,
            current: current.values().map(|v| v.id).collect(),
            rows,
        }
    }

    /// Whether version `name` did not build.
    fn unbuilt(&self, name: &str) -> bool {
        self.versions.get(name).is_some_and(|v| !v.build_ok)
    }

    /// Whether `v` is its entrant's current version.
    fn is_current(&self, v: &VersionRow) -> bool {
        self.current.contains(&v.id)
    }

    /// The rows of the versions `of` keeps, ranked among themselves as a
    /// tournament ranks: best first, equal figures sharing a rank; those
    /// that did not build or could not play share the rank after all
    /// that played.
    fn rows(&self, of: impl Fn(&VersionRow) -> bool) -> Vec<Row> {
        let kept: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| self.versions.get(&r.entrant).is_none_or(|v| of(v)))
            .collect();
        let out = |r: &Row| r.could_not_play() || self.unbuilt(&r.entrant);
        let played: Vec<&Row> = kept.iter().copied().filter(|r| !out(r)).collect();
        let mut rows: Vec<Row> = played
            .iter()
            .map(|r| Row {
                rank: 1 + played.iter().filter(|o| o.rank < r.rank).count(),
                ..(*r).clone()
            })
            .collect();
        rows.extend(kept.into_iter().filter(|r| out(r)).map(|r| Row {
            rank: played.len() + 1,
            ..r.clone()
        }));
        rows
    }

    /// The grade sheet of `rows`: a tournament's `grades.csv`, where a
    /// version that did not build has a tournament's note for a failed
    /// build (its first error), then that it played no game, and `log`.
    fn grades(&self, rows: &[Row], log: impl Fn(&VersionRow) -> Option<String>) -> Sheet {
        let mut failures = self.tally.failures();
        let mut unbuilt = HashMap::new();
        for row in rows {
            let Some(v) = self.versions.get(&row.entrant).filter(|v| !v.build_ok) else {
                continue;
            };
            failures.push((
                row.entrant.clone(),
                Failures {
                    first: Some(Failure {
                        game: 0,
                        verdict: Verdict::of(crate::outcome::Status::BuildFailed),
                        error: v.build_log.clone(),
                    }),
                    count: row.faults(),
                },
            ));
            let key = text::csv_text(&row.entrant).into_owned();
            unbuilt.insert(key, (row.faults(), log(v)));
        }
        let mut sheet = Sheet::read(&standings::grades_csv(rows, &failures));
        let (entrant, note) = (sheet.column("entrant"), sheet.column("note"));
        for cells in &mut sheet.rows {
            let Some((faults, log)) = unbuilt.get(&cells[entrant]) else {
                continue;
            };
            // Not `N of 0 games failed`: it played none.
            let counted = format!("; {faults} of 0 games failed");
            let why = cells[note].strip_suffix(&counted).unwrap_or(&cells[note]);
            cells[note] = match log {
                Some(log) => format!("{why}; did not build, played no game; {log}"),
                None => format!("{why}; did not build, played no game"),
            };
        }
        self.flag_copies(&mut sheet, rows);
        sheet
    }

    /// Notes, on the row of each version of `rows` that built, the other
    /// entrants whose sources were the same (each one's last such
    /// version), as the live page flags them: a copy, for the teacher to
    /// look at.
    fn flag_copies(&self, sheet: &mut Sheet, rows: &[Row]) {
        let (entrant, note) = (sheet.column("entrant"), sheet.column("note"));
        let by_cell: HashMap<String, &VersionRow> = rows
            .iter()
            .filter_map(|r| {
                let v = self.versions.get(&r.entrant)?;
                Some((text::csv_text(&r.entrant).into_owned(), *v))
            })
            .collect();
        for cells in &mut sheet.rows {
            let Some(v) = by_cell.get(&cells[entrant]).filter(|v| v.build_ok) else {
                continue;
            };
            let mut same: HashMap<&str, u32> = HashMap::new();
            for other in self.versions.values() {
                if other.build_ok
                    && other.entrant != v.entrant
                    && other.fingerprint == v.fingerprint
                {
                    let newest = same.entry(&other.entrant).or_insert(other.version);
                    *newest = (*newest).max(other.version);
                }
            }
            if same.is_empty() {
                continue;
            }
            let mut named: Vec<String> = same
                .into_iter()
                .map(|(name, number)| Version::name(name, number))
                .collect();
            named.sort();
            let flag = format!("same sources as {}", named.join(", "));
            cells[note] = match cells[note].is_empty() {
                true => flag,
                false => format!("{}; {flag}", cells[note]),
            };
        }
    }
}

/// A version that did not build: no game, no rating, and its build is
/// its one failure (`disqualified`, as a tournament counts a failed build).
fn did_not_build(row: &mut Row) {
    *row = Row {
        rating: None,
        uncertainty: None,
        conservative: None,
        mean_score: None,
        mean_score_ci: None,
        win_rate: None,
        win_rate_low: None,
        win_rate_high: None,
        paired_diff: None,
        paired_diff_ci: None,
        paired_vs: None,
        elo: None,
        disqualified: 1,
        ..row.clone()
    };
}

/// A grade sheet, read back from its CSV to finish its notes.
struct Sheet {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Sheet {
    fn read(csv: &str) -> Sheet {
        let mut lines = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(csv.as_bytes())
            .into_records()
            .filter_map(Result::ok)
            .map(|r| r.iter().map(str::to_owned).collect::<Vec<String>>());
        let header = lines.next().unwrap_or_default();
        Sheet {
            header,
            rows: lines.collect(),
        }
    }

    fn column(&self, name: &str) -> usize {
        self.header.iter().position(|h| h == name).unwrap_or(0)
    }

    fn csv(&self) -> String {
        let header: Vec<&str> = self.header.iter().map(String::as_str).collect();
        text::csv(&header, &self.rows)
    }
}

fn open(at: &Location) -> Result<(Db, Meta), Failed> {
    let db = Db::read(at).map_err(usage)?;
    let meta = db
        .meta()
        .map_err(usage)?
        .ok_or_else(|| usage(format!("{}: no league in it", at.describe())))?;
    Ok((db, meta))
}

/// `referee league show DB [--all]`: the standings of the entrants'
/// current versions (every version with `all`), as a tournament prints
/// them, from the database alone.
pub fn show(at: &Location, all: bool) -> Status {
    match standings_text(at, all) {
        Ok(text) => {
            println!("{text}");
            Status::Pass
        }
        Err((status, message)) => {
            eprintln!("referee league show: {message}");
            status
        }
    }
}

/// The standings `league show` prints (without its last line end): the
/// one function that ranks a league and gives its Elo, for `league show`
/// and for a league's own closing lines alike, so that the two never
/// disagree.
pub(super) fn standings_text(at: &Location, all: bool) -> Result<String, Failed> {
    let (db, meta) = open(at)?;
    let mut games = 0u64;
    let (versions, tally, notes) = db
        .at_one_moment(|db| {
            let versions = db.versions()?;
            let mut tally = Tally::new(meta.solo, &names(&versions), None, None);
            db.each_game(|record| {
                games += 1;
                tally.add(record);
            })?;
            // A database of an earlier schema, read as it is, has none.
            let notes = db
                .worker_notes(super::notes::WORKER_SEEN)
                .unwrap_or_default();
            Ok((versions, tally, notes))
        })
        .map_err(usage)?;
    let workers = super::notes::text(&notes, &versions);
    let standings = Standings::new(tally, &versions);
    // Each entrant still in the league: its last version that built,
    // else its last.
    let rows = standings.rows(|v| all || (standings.is_current(v) && !v.retired));
    let (unbuilt, played): (Vec<Row>, Vec<Row>) = rows
        .into_iter()
        .partition(|r| standings.unbuilt(&r.entrant));
    let mut text = format!(
        "standings after {games} game{} ({}):\n{}",
        if games == 1 { "" } else { "s" },
        if all {
            "every version"
        } else {
            "current versions"
        },
        standings::table(meta.solo, &played)
    );
    if !unbuilt.is_empty() {
        let sheet = standings.grades(&unbuilt, |_| None);
        let (entrant, note) = (sheet.column("entrant"), sheet.column("note"));
        let mut table =
            crate::games::chomp::standings::markdown_table(&["rank", "entrant", "why"], &[0]);
        for row in &unbuilt {
            let why = sheet
                .rows
                .iter()
                .find(|cells| cells[entrant] == text::csv_text(&row.entrant))
                .map(|cells| cells[note].clone())
                .unwrap_or_default();
            table.add_row(vec![
                row.rank.to_string(),
                text::terminal(&row.entrant).into_owned(),
                why,
            ]);
        }
        text.push_str(&format!(
            "\ndid not build (no game, no rating; ranked after everyone who played):\n{table}\n\
             each build's log: on the live page (/entrant/NAME), and in `referee league export \
             DB OUT` (OUT/build/NAME.vN.log)"
        ));
    }
    text.extend(workers);
    Ok(text)
}
