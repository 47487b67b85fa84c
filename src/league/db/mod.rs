//! The league's database: one interface, [`Db`], over two back ends.
//! SQLite ([`sqlite`]), the default, is a file on one machine; PostgreSQL
//! (`--db postgres://...`) is shared by a league's coordinator and its
//! workers on many machines (`docs/cluster.md`).
//!
//! Every finished game is one transaction: its record, as a tournament
//! writes it, and a row per seat naming the version that sat there. A
//! league killed at any moment loses only the games in flight, and a
//! league started again on the same database goes on from there.
//!
//! Why the interface is synchronous, behind a mutex, as it was before
//! PostgreSQL: a league makes a few calls per game (a claim, a commit, a
//! poll), none of them long, from job threads that each run a runtime of
//! their own, from the page's thread and from plain commands (`show`,
//! `export`). An async interface would change all of them for no game
//! played faster. The PostgreSQL back end is async underneath
//! (tokio-postgres); it runs on a runtime of its own, and each call waits
//! for it from a thread outside every runtime, since blocking on a
//! runtime from inside another one panics.

pub mod pgpass;
mod postgres;
mod sqlite;
mod stored;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::game::GameRecord;
pub use postgres::Postgres;
pub use sqlite::Sqlite;

/// Where a league's database is: a SQLite file, or a PostgreSQL server.
#[derive(Clone, Debug, PartialEq)]
pub enum Location {
    File(PathBuf),
    /// A `postgres://` or `postgresql://` URL; what it leaves out comes
    /// from the usual `PG*` environment variables.
    Url(String),
}

impl Location {
    /// `--db`'s value: a URL of PostgreSQL, else a file's path.
    pub fn parse(text: &std::ffi::OsStr) -> Location {
        match text.to_str() {
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Location::Url(url.to_owned())
            }
            _ => Location::File(PathBuf::from(text)),
        }
    }

    /// The file, for a SQLite database.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Location::File(path) => Some(path),
            Location::Url(_) => None,
        }
    }

    /// As messages name it: a URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Location::File(path) => path.display().to_string(),
            Location::Url(url) => without_password(url),
        }
    }
}

/// `url` with the password of its user part, if any, left out.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{scheme}://{name}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// A league's database, open.
pub enum Db {
    Sqlite(Sqlite),
    Postgres(Postgres),
}

/// Calls the same method on whichever back end `db` is.
macro_rules! each {
    ($db:expr, $b:ident => $call:expr) => {
        match $db {
            Db::Sqlite($b) => $call,
            Db::Postgres($b) => $call,
        }
    };
}

/// What the league is, as its first run wrote it: a league started again
/// on the database must be the same game.
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    /// The game, as `run.json` gives it (JSON of a `GameRef`).
    pub game: String,
    pub solo: bool,
    pub seed: u64,
}

impl Meta {
    /// The league's settings from its `meta` rows (`game`, `solo`,
    /// `seed`), the same in either database; `None` when one is missing
    /// (no league has started in it). `db` names the database in an error.
    fn of(
        (game, solo, seed): (Option<String>, Option<String>, Option<String>),
        db: impl std::fmt::Display,
    ) -> Result<Option<Meta>, String> {
        let (Some(game), Some(solo), Some(seed)) = (game, solo, seed) else {
            return Ok(None);
        };
        Ok(Some(Meta {
            game,
            solo: solo == "1",
            seed: seed
                .parse()
                .map_err(|e| format!("{db}: meta seed {seed:?}: {e}"))?,
        }))
    }
}

/// A finished game to record, as either database takes it: its round,
/// its rotation of the seats, the version in each seat, and the dealt
/// table it was played at, if any.
struct NewGame<'a> {
    round: u64,
    rotation: u64,
    versions: &'a [i64],
    table: Option<i64>,
}

/// A version of an entrant, as the database holds it.
#[derive(Clone, Debug)]
pub struct VersionRow {
    pub id: i64,
    pub entrant: String,
    pub version: u32,
    pub fingerprint: String,
    /// Files its build wrote (relative paths): not sources.
    pub products: Vec<String>,
    /// When it was built.
    pub built: String,
    pub build_ok: bool,
    pub build_log: Option<String>,
    /// Its entrant has left the league (its folder is gone).
    pub retired: bool,
    /// How a worker runs it (JSON, see `league::work`), once it built.
    pub player: Option<String>,
}

/// One worker's claim on a dealt table: the table, and which claim of it
/// (each claim bumps it), so that a worker whose lease ran out and whose
/// table another took can no longer record a game of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Claim {
    pub table: i64,
    pub claim: i64,
}

/// A table to deal: a round of games at one table.
pub struct NewTable<'a> {
    pub round: u64,
    /// The versions at it, in the seat order of rotation 0.
    pub versions: &'a [i64],
    /// The rotations to play (all of the table's seats, but at the end of
    /// a league of `--games N`).
    pub rotations: &'a [u64],
}

/// A dealt table, as a worker plays it.
#[derive(Clone, Debug, PartialEq)]
pub struct TableRow {
    pub id: i64,
    pub round: u64,
    pub versions: Vec<i64>,
    pub rotations: Vec<u64>,
    pub claim: i64,
    /// Its rotations already recorded (by a worker that lost it).
    pub played: Vec<u64>,
}

/// Where a dealt table is.
#[derive(Clone, Debug, PartialEq)]
pub enum TableState {
    Queued,
    Claimed,
    /// Played, or ended early: `outcome` says why (JSON).
    Done {
        outcome: Option<String>,
    },
}

impl TableState {
    pub(crate) fn of(state: &str, outcome: Option<String>) -> TableState {
        match state {
            "queued" => TableState::Queued,
            "claimed" => TableState::Claimed,
            _ => TableState::Done { outcome },
        }
    }
}

/// What a live worker said of itself: the versions it cannot play on its
/// machine (and why), and the games it voided for failures of its own.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerNote {
    pub name: String,
    pub jobs: usize,
    pub void_games: u64,
    pub last_void: Option<String>,
    pub declined: Vec<(i64, String)>,
}

/// Why a worker cannot open its league's database now.
#[derive(Clone, Debug, PartialEq)]
pub enum JoinError {
    /// The server is not there yet, or is restarting (refused, no socket,
    /// starting up, shutting down, too many connections): why. Another
    /// try may work.
    NotYet(String),
    /// Anything else (authentication failed, no such database, a bad
    /// URL): the message, naming the database.
    Fails(String),
}

/// A version to add.
pub struct NewVersion<'a> {
    pub entrant: &'a str,
    pub fingerprint: &'a str,
    pub products: &'a [String],
    pub build_ok: bool,
    pub build_log: Option<&'a str>,
}

impl Db {
    /// Opens (or makes) the league's database and holds it: one league
    /// per database. `durable`: each game's commit waits for the disk.
    pub fn open(at: &Location, durable: bool) -> Result<Db, String> {
        match at {
            Location::File(path) => Sqlite::open(path, durable).map(Db::Sqlite),
            Location::Url(url) => Postgres::open(url, durable).map(Db::Postgres),
        }
    }

    /// Opens a league's database to read it, beside a league that may be
    /// running on it.
    pub fn read(at: &Location) -> Result<Db, String> {
        match at {
            Location::File(path) => Sqlite::read(path).map(Db::Sqlite),
            Location::Url(url) => Postgres::read(url).map(Db::Postgres),
        }
    }

    /// Commits one finished game: its record, numbered as the league's
    /// next game (its `index`), and the version in each seat, in one
    /// transaction. The game's number.
    pub fn add_game(
        &mut self,
        record: &mut GameRecord,
        round: u64,
        rotation: u64,
        versions: &[i64],
    ) -> Result<u64, String> {
        let game = NewGame {
            round,
            rotation,
            versions,
            table: None,
        };
        each!(self, db => db.add_game(record, &game))
    }

    /// Opens a league's database as one of its workers: to play its tables
    /// beside the league that holds it; `None` while no league is in it
    /// yet (workers may start before their league, and before its server:
    /// [`JoinError::NotYet`]).
    pub fn join(at: &Location) -> Result<Option<Db>, JoinError> {
        match at {
            Location::File(path) => Ok(Sqlite::join(path)
                .map_err(JoinError::Fails)?
                .map(Db::Sqlite)),
            Location::Url(url) => Ok(Postgres::join(url)?.map(Db::Postgres)),
        }
    }

    /// Commits one finished game of a claimed table, as [`Db::add_game`]:
    /// `None`, with nothing written, when the claim is lost or the game
    /// (its table and rotation) is recorded already.
    pub fn commit_game(
        &mut self,
        record: &mut GameRecord,
        claim: Claim,
        round: u64,
        rotation: u64,
        versions: &[i64],
    ) -> Result<Option<u64>, String> {
        let game = NewGame {
            round,
            rotation,
            versions,
            table: Some(claim.table),
        };
        each!(self, db => db.commit_game(record, claim, &game))
    }

    /// Runs `read` in one read transaction: all it reads is the database
    /// at one moment (the versions and the games of the same moment),
    /// beside a league that commits meanwhile.
    pub fn at_one_moment<T>(
        &self,
        read: impl FnOnce(&Db) -> Result<T, String>,
    ) -> Result<T, String> {
        each!(self, db => db.begin_read())?;
        let result = read(self);
        each!(self, db => db.end_read());
        result
    }

    /// Every finished game's record in the order they finished, one at a
    /// time (a league of any length is read in little memory).
    pub fn each_game(&self, take: impl FnMut(GameRecord)) -> Result<(), String> {
        each!(self, db => db.each_game(take))
    }
}

/// What either back end does, said once: [`Db`] is the one of them its
/// location names, and derefs to it.
pub trait Store {
    fn meta(&self) -> Result<Option<Meta>, String>;

    fn set_meta(&self, meta: &Meta) -> Result<(), String>;

    /// Every version of every entrant, oldest first.
    fn versions(&self) -> Result<Vec<VersionRow>, String>;

    /// [`Store::versions`] without their build logs (`build_log` is `None`):
    /// what a scan needs, every few seconds, of versions whose logs may
    /// hold 64 KiB each.
    fn versions_without_logs(&self) -> Result<Vec<VersionRow>, String>;

    /// Adds the next version of `new.entrant` (its first makes the
    /// entrant); the entrant is in the league again if it had left. Its
    /// id and number.
    fn add_version(&mut self, new: &NewVersion) -> Result<(i64, u32), String>;

    /// `entrant` leaves the league (its folder is gone): its versions keep
    /// their games.
    fn retire(&self, entrant: &str) -> Result<(), String>;

    /// Version `id` failed as if it had not built, for `why` (the judge
    /// refused its options): it plays no more, and its row says why.
    fn fail_version(&self, id: i64, why: &str) -> Result<(), String>;

    /// `entrant` is in the league again (its folder is back).
    fn rejoin(&self, entrant: &str) -> Result<(), String>;

    /// Games finished.
    fn games(&self) -> Result<u64, String>;

    /// The round the next one dealt is to be: after every round a game was
    /// finished in.
    fn next_round(&self) -> Result<u64, String>;

    /// The rounds version `version` has finished a game of (a game played
    /// alone: the deals it has played).
    fn rounds_of(&self, version: i64) -> Result<Vec<u64>, String>;

    /// The last `limit` games (of `entrant`'s versions, if given), newest
    /// first: each one's number, when it finished, and its seats.
    fn recent_games(
        &self,
        entrant: Option<&str>,
        limit: u64,
    ) -> Result<Vec<serde_json::Value>, String>;

    /// Game `id`'s record, as JSON.
    fn game(&self, id: u64) -> Result<Option<serde_json::Value>, String>;

    /// Another of the league's settings (`meta`), for its workers.
    fn setting(&self, key: &str) -> Result<Option<String>, String>;

    fn set_setting(&self, key: &str, value: &str) -> Result<(), String>;

    /// How a worker runs version `version` (JSON).
    fn set_player(&self, version: i64, player: &str) -> Result<(), String>;

    /// Deals a table to be played: queued, its id.
    fn deal_table(&mut self, table: &NewTable) -> Result<i64, String>;

    /// Claims the first table queued, or held by a claim whose lease ran
    /// out, that `playable` says this worker can play (its versions), for
    /// `lease`.
    fn claim_table(
        &mut self,
        worker: &str,
        lease: Duration,
        playable: &dyn Fn(&[i64]) -> bool,
    ) -> Result<Option<TableRow>, String>;

    /// Extends the leases of `claims`; the claims lost (another worker
    /// took the table). The worker is seen.
    fn renew_claims(
        &self,
        worker: &str,
        claims: &[Claim],
        lease: Duration,
    ) -> Result<Vec<Claim>, String>;

    /// Gives a claimed table back to the queue now (a worker stopping).
    fn release_table(&self, claim: Claim) -> Result<(), String>;

    /// A claimed table is done: played, or ended early for `outcome`.
    fn finish_table(&self, claim: Claim, outcome: Option<&str>) -> Result<(), String>;

    /// Every table not done, oldest first.
    fn open_tables(&self) -> Result<Vec<TableRow>, String>;

    fn table_states(&self, ids: &[i64]) -> Result<Vec<(i64, TableState)>, String>;

    /// Of `ids`, those still queued are done without a game; which.
    fn drop_queued_tables(&self, ids: &[i64]) -> Result<Vec<i64>, String>;

    /// The games after game `after`, at most `limit`, in order, each with
    /// the table it was played at.
    fn games_after(&self, after: u64, limit: u64)
    -> Result<Vec<(Option<i64>, GameRecord)>, String>;

    /// Worker `name`, of `jobs` games at once, is there.
    fn worker_seen(&self, name: &str, jobs: usize) -> Result<(), String>;

    /// The workers seen `within` the last while, and their jobs.
    fn workers(&self, within: Duration) -> Result<Vec<(String, usize)>, String>;

    /// Every table `worker` holds goes back to the queue (a league's own
    /// jobs, from its last run).
    fn release_claims_of(&self, worker: &str) -> Result<(), String>;

    /// Worker `name` has stopped: its row and its declines go.
    fn worker_gone(&self, name: &str) -> Result<(), String>;

    /// Worker `worker` cannot play version `version` on its machine, for
    /// `why` (said again: replaced).
    fn decline_version(&self, worker: &str, version: i64, why: &str) -> Result<(), String>;

    /// Worker `worker` voided a game for a failure of its own (`why`):
    /// counted for that worker (the worker row is made if missing).
    fn void_game(&self, worker: &str, why: &str) -> Result<(), String>;

    /// The workers seen within `within`, by name, each with what it said.
    fn worker_notes(&self, within: Duration) -> Result<Vec<WorkerNote>, String>;
}

impl std::ops::Deref for Db {
    type Target = dyn Store;

    fn deref(&self) -> &(dyn Store + 'static) {
        match self {
            Db::Sqlite(db) => db,
            Db::Postgres(db) => db,
        }
    }
}

impl std::ops::DerefMut for Db {
    fn deref_mut(&mut self) -> &mut (dyn Store + 'static) {
        match self {
            Db::Sqlite(db) => db,
            Db::Postgres(db) => db,
        }
    }
}

/// A game as [`Store::recent_games`] lists it: its number, when it finished,
/// and how each seat did.
fn game_summary(id: i64, finished: String, record: &str) -> serde_json::Value {
    let record: serde_json::Value = serde_json::from_str(record).unwrap_or_default();
    let seats: Vec<serde_json::Value> = crate::game::record::seats_of(&record)
        .into_iter()
        .flatten()
        .map(|r| {
            serde_json::json!({
                "entrant": r["entrant"], "status": r["status"], "score": r["score"],
                "rank": r["rank"], "won": r["won"], "error": r["error"],
            })
        })
        .collect();
    serde_json::json!({ "game": id, "finished": finished, "seats": seats })
}

/// The database, even when a thread panicked holding it: each game is
/// one transaction, so what it holds is whole.
pub fn lock(db: &std::sync::Mutex<Db>) -> std::sync::MutexGuard<'_, Db> {
    db.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_postgresql_and_anything_else_a_file() {
        let url = "postgres://league:secret@db.example:5432/class?sslmode=disable";
        let at = Location::parse(url.as_ref());
        assert_eq!(at, Location::Url(url.into()));
        assert_eq!(
            at.describe(),
            "postgres://league:***@db.example:5432/class?sslmode=disable"
        );
        let at = Location::parse("postgresql://db.example/class".as_ref());
        assert_eq!(at.describe(), "postgresql://db.example/class");
        let at = Location::parse("class.db".as_ref());
        assert_eq!(at.file(), Some(Path::new("class.db")));
    }
}
