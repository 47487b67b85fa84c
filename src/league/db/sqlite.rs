//! The league's database on SQLite (bundled), in WAL mode, so that readers
//! (an export, the live page) never wait for the league. Every finished
//! game is one transaction: its record, as a tournament writes it, and a
//! row per seat naming the version that sat there. A league killed at
//! any moment loses only the games in flight, and a league started again
//! on the same file goes on from there.
//!
//! The schema keeps to what PostgreSQL has too (integer keys, text, real,
//! no SQLite-only types): `postgres.rs` holds the same tables.

use std::fs::File;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use std::time::Duration;

use super::{
    Claim, Meta, NewGame, NewTable, NewVersion, Store, TableRow, TableState, VersionRow, WorkerNote,
};
use crate::game::GameRecord;

/// The schema's version, in `meta`; a database of a later one is
/// refused, one of an earlier one migrated ([`MIGRATE_1_TO_2`],
/// [`MIGRATE_2_TO_3`]).
const SCHEMA: &str = "3";

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entrants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    retired INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY,
    entrant INTEGER NOT NULL REFERENCES entrants(id),
    version INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    products TEXT NOT NULL DEFAULT '[]',
    built TEXT NOT NULL,
    build_ok INTEGER NOT NULL,
    build_log TEXT,
    player TEXT,
    UNIQUE (entrant, version)
);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    round INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    finished TEXT NOT NULL,
    record TEXT NOT NULL,
    table_id INTEGER
);
CREATE TABLE IF NOT EXISTS seats (
    game INTEGER NOT NULL REFERENCES games(id),
    seat INTEGER NOT NULL,
    version INTEGER NOT NULL REFERENCES versions(id),
    status TEXT NOT NULL,
    PRIMARY KEY (game, seat)
);
CREATE INDEX IF NOT EXISTS seats_by_version ON seats (version, game);
";

/// Schema 2's own tables: the tables dealt to be played, claimed by the
/// league's workers with a lease, and the workers. Made with the others,
/// and by the migration from schema 1.
const WORK_TABLES: &str = "
CREATE UNIQUE INDEX IF NOT EXISTS games_by_table ON games (table_id, rotation);
CREATE TABLE IF NOT EXISTS tables (
    id INTEGER PRIMARY KEY,
    round INTEGER NOT NULL,
    versions TEXT NOT NULL,
    rotations TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued',
    claim INTEGER NOT NULL DEFAULT 0,
    worker TEXT,
    lease_until INTEGER,
    outcome TEXT
);
CREATE INDEX IF NOT EXISTS tables_open ON tables (state, id);
CREATE TABLE IF NOT EXISTS workers (
    name TEXT PRIMARY KEY,
    jobs INTEGER NOT NULL,
    seen INTEGER NOT NULL
);
";

/// Schema 1 to 2: a version's `player` (how a worker runs it), a game's
/// table; the work tables follow ([`WORK_TABLES`]).
const MIGRATE_1_TO_2: &str = "
ALTER TABLE versions ADD COLUMN player TEXT;
ALTER TABLE games ADD COLUMN table_id INTEGER;
";

/// Schema 2 to 3: what a worker says of itself, its games voided for
/// failures of its own; its declines follow ([`NOTE_TABLES`]).
const MIGRATE_2_TO_3: &str = "
ALTER TABLE workers ADD COLUMN void_games INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workers ADD COLUMN last_void TEXT;
";

/// Schema 3's own table: the versions a worker cannot play on its
/// machine, and why.
const NOTE_TABLES: &str = "
CREATE TABLE IF NOT EXISTS declines (
    worker TEXT NOT NULL,
    version INTEGER NOT NULL,
    why TEXT NOT NULL,
    PRIMARY KEY (worker, version)
);
";

/// The league's database in a SQLite file, open for its one league: a
/// second league on the same file is refused while this one holds it.
pub struct Sqlite {
    conn: Connection,
    path: PathBuf,
    _lock: Option<Flock<File>>,
    /// Read as schema 1 was (`league show` on a database not yet
    /// migrated): no version has a `player`.
    before_work: bool,
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> String + '_ {
    move |e| format!("{}: {e}", path.display())
}

impl Sqlite {
    /// Opens (or makes) the league's database at `path` and holds it; one
    /// of an earlier schema is migrated. `durable`: each game's commit
    /// waits for the disk (`synchronous = FULL`); without it
    /// (`--no-fsync`) a crash of the machine, not of the referee, may lose
    /// the last games.
    pub fn open(path: &Path, durable: bool) -> Result<Sqlite, String> {
        let conn = Connection::open(path).map_err(sql(path))?;
        let lock = hold(path)?;
        let mut db = Sqlite {
            conn,
            path: path.to_owned(),
            _lock: Some(lock),
            before_work: false,
        };
        db.settings(durable)?;
        let schema = db.schema()?;
        db.make_tables(schema)?;
        Ok(db)
    }

    /// Opens a league's database as one of its workers: to play its tables
    /// beside the league that holds it; `None` while the league has not
    /// made it yet.
    pub fn join(path: &Path) -> Result<Option<Sqlite>, String> {
        if !path.exists() {
            return Ok(None);
        }
        let conn = Connection::open(path).map_err(sql(path))?;
        let db = Sqlite {
            conn,
            path: path.to_owned(),
            _lock: None,
            before_work: false,
        };
        db.settings(true)?;
        match db.schema()? {
            Some(3) if db.meta()?.is_some() => Ok(Some(db)),
            Some(old @ (1 | 2)) => Err(format!(
                "{}: a league database of schema {old}: `referee league run` on it first \
                 (it migrates it)",
                path.display()
            )),
            _ => Ok(None),
        }
    }

    fn settings(&self, durable: bool) -> Result<(), String> {
        let sync = if durable { "FULL" } else { "NORMAL" };
        self.conn
            .execute_batch(&format!(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync}; \
                 PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;"
            ))
            .map_err(sql(&self.path))
    }

    /// Opens a league's database to read it, beside a league that may be
    /// running on it (one of schema 1 too, as it is).
    pub fn read(path: &Path) -> Result<Sqlite, String> {
        if !path.is_file() {
            return Err(format!("{}: no such database", path.display()));
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql(path))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(sql(path))?;
        let mut db = Sqlite {
            conn,
            path: path.to_owned(),
            _lock: None,
            before_work: false,
        };
        db.before_work = db.schema()? == Some(1);
        if db.meta()?.is_none() {
            return Err(format!("{}: not a league's database", path.display()));
        }
        Ok(db)
    }

    /// The schema the database says it has (`None`: a new one); a later
    /// one than this referee's is refused.
    fn schema(&self) -> Result<Option<u32>, String> {
        let has_meta: bool = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(sql(&self.path))?
            > 0;
        if !has_meta {
            return Ok(None);
        }
        let schema: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql(&self.path))?;
        match schema.as_deref() {
            None => Ok(None),
            Some("1") => Ok(Some(1)),
            Some("2") => Ok(Some(2)),
            Some(SCHEMA) => Ok(Some(3)),
            Some(other) => Err(format!(
                "{}: a league database of schema {other}; this referee reads schema {SCHEMA}",
                self.path.display()
            )),
        }
    }

    /// Makes the tables a new database lacks, or migrates one of an
    /// earlier `schema`, in one transaction: its games and versions stay.
    fn make_tables(&mut self, schema: Option<u32>) -> Result<(), String> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(sql(&path))?;
        if schema == Some(1) {
            tx.execute_batch(MIGRATE_1_TO_2).map_err(sql(&path))?;
        }
        tx.execute_batch(TABLES).map_err(sql(&path))?;
        tx.execute_batch(WORK_TABLES).map_err(sql(&path))?;
        // Asked of the table rather than of `schema`: a database made but
        // not yet given its meta has no schema, and its columns already.
        let noted: i64 = tx
            .query_row(
                "SELECT count(*) FROM pragma_table_info('workers') WHERE name = 'void_games'",
                [],
                |r| r.get(0),
            )
            .map_err(sql(&path))?;
        if noted == 0 {
            tx.execute_batch(MIGRATE_2_TO_3).map_err(sql(&path))?;
        }
        tx.execute_batch(NOTE_TABLES).map_err(sql(&path))?;
        let old = schema.filter(|&s| s < 3);
        if old.is_some() {
            tx.execute("UPDATE meta SET value = ?1 WHERE key = 'schema'", [SCHEMA])
                .map_err(sql(&path))?;
        }
        tx.commit().map_err(sql(&path))?;
        if let Some(old) = old {
            eprintln!(
                "league: {} migrated from schema {old} to {SCHEMA} (its games kept)",
                path.display()
            );
        }
        Ok(())
    }

    fn select_versions(&self, log: &str) -> Result<Vec<VersionRow>, String> {
        let mut statement = self
            .conn
            .prepare(&format!(
                "SELECT v.id, e.name, v.version, v.fingerprint, v.products, v.build_ok, \
                 {log}, e.retired, v.built, {player} FROM versions v \
                 JOIN entrants e ON e.id = v.entrant ORDER BY v.id",
                player = if self.before_work { "NULL" } else { "v.player" },
            ))
            .map_err(sql(&self.path))?;
        let rows = statement
            .query_map([], |r| {
                let products: String = r.get(4)?;
                Ok(VersionRow {
                    id: r.get(0)?,
                    entrant: r.get(1)?,
                    version: r.get(2)?,
                    fingerprint: r.get(3)?,
                    products: serde_json::from_str(&products).unwrap_or_default(),
                    build_ok: r.get::<_, i64>(5)? != 0,
                    build_log: r.get(6)?,
                    retired: r.get::<_, i64>(7)? != 0,
                    built: r.get(8)?,
                    player: r.get(9)?,
                })
            })
            .map_err(sql(&self.path))?;
        rows.collect::<Result<_, _>>().map_err(sql(&self.path))
    }

    /// Commits one finished game: its record, numbered as the league's
    /// next game (its `index`), and the version in each seat, in one
    /// transaction. The game's number.
    pub(super) fn add_game(
        &mut self,
        record: &mut GameRecord,
        game: &NewGame,
    ) -> Result<u64, String> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(sql(&path))?;
        let id = insert_game(&tx, &path, record, game)?;
        tx.commit().map_err(sql(&path))?;
        Ok(id)
    }

    /// Starts a read transaction: all read until [`Sqlite::end_read`] is
    /// the database at one moment.
    pub fn begin_read(&self) -> Result<(), String> {
        self.conn.execute_batch("BEGIN").map_err(sql(&self.path))
    }

    pub fn end_read(&self) {
        // Nothing was written: the end of the transaction cannot lose any.
        let _ = self.conn.execute_batch("COMMIT");
    }

    /// Every finished game's record in the order they finished, one at a
    /// time (a league of any length is read in little memory).
    pub fn each_game(&self, mut take: impl FnMut(GameRecord)) -> Result<(), String> {
        let mut statement = self
            .conn
            .prepare("SELECT id, record FROM games ORDER BY id")
            .map_err(sql(&self.path))?;
        let mut rows = statement.query([]).map_err(sql(&self.path))?;
        while let Some(row) = rows.next().map_err(sql(&self.path))? {
            let id: i64 = row.get(0).map_err(sql(&self.path))?;
            let text: String = row.get(1).map_err(sql(&self.path))?;
            let record = serde_json::from_str(&text)
                .map_err(|e| format!("{}: game {id}: {e}", self.path.display()))?;
            take(record);
        }
        Ok(())
    }
}

/// The work of a league's workers: tables dealt, claimed with a lease,
/// their games committed under the claim. One process at a time writes
/// (SQLite's own lock), so a claim needs no more than a transaction.
impl Sqlite {
    pub(super) fn commit_game(
        &mut self,
        record: &mut GameRecord,
        claim: Claim,
        game: &NewGame,
    ) -> Result<Option<u64>, String> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql(&path))?;
        let held: bool = tx
            .query_row(
                "SELECT count(*) FROM tables WHERE id = ?1 AND claim = ?2 AND state = 'claimed'",
                params![claim.table, claim.claim],
                |r| r.get::<_, i64>(0),
            )
            .map_err(sql(&path))?
            > 0;
        let recorded: bool = tx
            .query_row(
                "SELECT count(*) FROM games WHERE table_id = ?1 AND rotation = ?2",
                params![claim.table, game.rotation as i64],
                |r| r.get::<_, i64>(0),
            )
            .map_err(sql(&path))?
            > 0;
        if !held || recorded {
            return Ok(None);
        }
        let id = insert_game(&tx, &path, record, game)?;
        tx.commit().map_err(sql(&path))?;
        Ok(Some(id))
    }
}

/// Inserts a finished game numbered as the league's next (its `index`),
/// in a transaction that serialises the numbering: games are numbered in
/// the order they are committed. `at` is its round, rotation and table.
fn insert_game(
    tx: &rusqlite::Transaction,
    path: &Path,
    record: &mut GameRecord,
    game: &NewGame,
) -> Result<u64, String> {
    let id: i64 = tx
        .query_row("SELECT coalesce(max(id), 0) + 1 FROM games", [], |r| {
            r.get(0)
        })
        .map_err(sql(path))?;
    record.index = id as u64;
    let text = serde_json::to_string(record).map_err(|e| format!("game {id}: {e}"))?;
    tx.prepare_cached(
        "INSERT INTO games (id, round, rotation, finished, record, table_id) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )
    .and_then(|mut s| {
        s.execute(params![
            id,
            game.round as i64,
            game.rotation as i64,
            record.time,
            text,
            game.table
        ])
    })
    .map_err(sql(path))?;
    for (seat, (version, result)) in game.versions.iter().zip(&record.results).enumerate() {
        tx.prepare_cached(
            "INSERT INTO seats (game, seat, version, status) VALUES (?1, ?2, ?3, ?4)",
        )
        .and_then(|mut s| s.execute(params![id, seat as i64, version, result.status().name()]))
        .map_err(sql(path))?;
    }
    Ok(id as u64)
}

/// Milliseconds since the epoch, as leases count them.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn json<T: serde::Serialize>(values: &[T]) -> String {
    serde_json::to_string(values).unwrap_or_else(|_| "[]".into())
}

fn parse_ids<T: serde::de::DeserializeOwned>(text: &str) -> Vec<T> {
    serde_json::from_str(text).unwrap_or_default()
}

/// Table `id` as a worker plays it: with the rotations already recorded.
fn table_row(conn: &Connection, id: i64) -> rusqlite::Result<Option<TableRow>> {
    let row: Option<(i64, String, String, i64)> = conn
        .query_row(
            "SELECT round, versions, rotations, claim FROM tables WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let Some((round, versions, rotations, claim)) = row else {
        return Ok(None);
    };
    let mut statement =
        conn.prepare_cached("SELECT rotation FROM games WHERE table_id = ?1 ORDER BY rotation")?;
    let played = statement
        .query_map([id], |r| r.get::<_, i64>(0).map(|n| n as u64))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(TableRow {
        id,
        round: round as u64,
        versions: parse_ids(&versions),
        rotations: parse_ids(&rotations),
        claim,
        played,
    }))
}

/// Holds the database for this league (an advisory lock on the file
/// itself, which SQLite's own locks do not touch): a second league is
/// refused, and the lock goes with the process, however it ends.
fn hold(path: &Path) -> Result<Flock<File>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| match e {
        nix::errno::Errno::EWOULDBLOCK => format!(
            "{} is the database of a league running now: one league per database",
            path.display()
        ),
        e => format!("{}: cannot lock it: {e}", path.display()),
    })
}

impl Store for Sqlite {
    fn meta(&self) -> Result<Option<Meta>, String> {
        let get = |key: &str| -> Result<Option<String>, String> {
            self.conn
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()
                .map_err(sql(&self.path))
        };
        Meta::of(
            (get("game")?, get("solo")?, get("seed")?),
            self.path.display(),
        )
    }

    fn set_meta(&self, meta: &Meta) -> Result<(), String> {
        let rows = [
            ("schema", SCHEMA.to_owned()),
            ("game", meta.game.clone()),
            ("solo", if meta.solo { "1" } else { "0" }.to_owned()),
            ("seed", meta.seed.to_string()),
        ];
        for (key, value) in rows {
            self.conn
                .execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                    params![key, value],
                )
                .map_err(sql(&self.path))?;
        }
        Ok(())
    }

    /// Every version of every entrant, oldest first.
    fn versions(&self) -> Result<Vec<VersionRow>, String> {
        self.select_versions("v.build_log")
    }

    /// [`Store::versions`] without their build logs (`build_log` is `None`):
    /// what a scan needs, every few seconds, of versions whose logs may
    /// hold 64 KiB each.
    fn versions_without_logs(&self) -> Result<Vec<VersionRow>, String> {
        self.select_versions("NULL")
    }

    /// Adds the next version of `new.entrant` (its first makes the
    /// entrant); the entrant is in the league again if it had left. Its
    /// id and number.
    fn add_version(&mut self, new: &NewVersion) -> Result<(i64, u32), String> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(sql(&path))?;
        tx.execute(
            "INSERT INTO entrants (name) VALUES (?1) ON CONFLICT (name) DO UPDATE SET retired = 0",
            [new.entrant],
        )
        .map_err(sql(&path))?;
        let entrant: i64 = tx
            .query_row(
                "SELECT id FROM entrants WHERE name = ?1",
                [new.entrant],
                |r| r.get(0),
            )
            .map_err(sql(&path))?;
        let version: u32 = tx
            .query_row(
                "SELECT coalesce(max(version), 0) + 1 FROM versions WHERE entrant = ?1",
                [entrant],
                |r| r.get(0),
            )
            .map_err(sql(&path))?;
        tx.execute(
            "INSERT INTO versions (entrant, version, fingerprint, products, built, build_ok, \
             build_log) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                entrant,
                version,
                new.fingerprint,
                serde_json::to_string(new.products).unwrap_or_else(|_| "[]".into()),
                crate::record::timestamp(),
                i64::from(new.build_ok),
                new.build_log,
            ],
        )
        .map_err(sql(&path))?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(sql(&path))?;
        Ok((id, version))
    }

    /// `entrant` leaves the league (its folder is gone): its versions keep
    /// their games.
    fn retire(&self, entrant: &str) -> Result<(), String> {
        self.conn
            .execute("UPDATE entrants SET retired = 1 WHERE name = ?1", [entrant])
            .map_err(sql(&self.path))?;
        Ok(())
    }

    /// Version `id` failed as if it had not built, for `why` (the judge
    /// refused its options): it plays no more, and its row says why.
    fn fail_version(&self, id: i64, why: &str) -> Result<(), String> {
        self.conn
            .execute(
                "UPDATE versions SET build_ok = 0, build_log = ?2 WHERE id = ?1",
                rusqlite::params![id, why],
            )
            .map_err(sql(&self.path))?;
        Ok(())
    }

    /// `entrant` is in the league again (its folder is back).
    fn rejoin(&self, entrant: &str) -> Result<(), String> {
        self.conn
            .execute("UPDATE entrants SET retired = 0 WHERE name = ?1", [entrant])
            .map_err(sql(&self.path))?;
        Ok(())
    }

    /// Games finished.
    fn games(&self) -> Result<u64, String> {
        self.conn
            .query_row("SELECT count(*) FROM games", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(sql(&self.path))
    }

    /// The round the next one dealt is to be: after every round a game was
    /// finished in.
    fn next_round(&self) -> Result<u64, String> {
        self.conn
            .query_row("SELECT coalesce(max(round), 0) + 1 FROM games", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .map_err(sql(&self.path))
    }

    /// The rounds version `version` has finished a game of (a game played
    /// alone: the deals it has played).
    fn rounds_of(&self, version: i64) -> Result<Vec<u64>, String> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT DISTINCT g.round FROM games g JOIN seats s ON s.game = g.id \
                 WHERE s.version = ?1 ORDER BY g.round",
            )
            .map_err(sql(&self.path))?;
        let rows = statement
            .query_map([version], |r| r.get::<_, i64>(0).map(|n| n as u64))
            .map_err(sql(&self.path))?;
        rows.collect::<Result<_, _>>().map_err(sql(&self.path))
    }

    /// The last `limit` games (of `entrant`'s versions, if given), newest
    /// first: each one's number, when it finished, and its seats.
    fn recent_games(
        &self,
        entrant: Option<&str>,
        limit: u64,
    ) -> Result<Vec<serde_json::Value>, String> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT g.id, g.finished, g.record FROM games g WHERE ?1 IS NULL OR g.id IN \
                 (SELECT s.game FROM seats s JOIN versions v ON v.id = s.version \
                 JOIN entrants e ON e.id = v.entrant WHERE e.name = ?1) \
                 ORDER BY g.id DESC LIMIT ?2",
            )
            .map_err(sql(&self.path))?;
        let rows = statement
            .query_map(params![entrant, limit as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(sql(&self.path))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, finished, record) = row.map_err(sql(&self.path))?;
            out.push(super::game_summary(id, finished, &record));
        }
        Ok(out)
    }

    /// Game `id`'s record, as JSON.
    fn game(&self, id: u64) -> Result<Option<serde_json::Value>, String> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT record FROM games WHERE id = ?1", [id as i64], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql(&self.path))?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| format!("{}: game {id}: {e}", self.path.display()))
        })
        .transpose()
    }

    fn setting(&self, key: &str) -> Result<Option<String>, String> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(sql(&self.path))
    }

    fn set_setting(&self, key: &str, value: &str) -> Result<(), String> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                params![key, value],
            )
            .map(drop)
            .map_err(sql(&self.path))
    }

    fn set_player(&self, version: i64, player: &str) -> Result<(), String> {
        self.conn
            .execute(
                "UPDATE versions SET player = ?2 WHERE id = ?1",
                params![version, player],
            )
            .map(drop)
            .map_err(sql(&self.path))
    }

    fn deal_table(&mut self, table: &NewTable) -> Result<i64, String> {
        self.conn
            .execute(
                "INSERT INTO tables (round, versions, rotations) VALUES (?1, ?2, ?3)",
                params![
                    table.round as i64,
                    json(table.versions),
                    json(table.rotations)
                ],
            )
            .map_err(sql(&self.path))?;
        Ok(self.conn.last_insert_rowid())
    }

    fn claim_table(
        &mut self,
        worker: &str,
        lease: Duration,
        playable: &dyn Fn(&[i64]) -> bool,
    ) -> Result<Option<TableRow>, String> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql(&path))?;
        let now = now_ms();
        let candidates: Vec<(i64, String)> = {
            let mut statement = tx
                .prepare_cached(
                    "SELECT id, versions FROM tables WHERE state = 'queued' \
                     OR (state = 'claimed' AND lease_until < ?1) ORDER BY id LIMIT 64",
                )
                .map_err(sql(&path))?;
            let rows = statement
                .query_map([now], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(sql(&path))?;
            rows.collect::<Result<_, _>>().map_err(sql(&path))?
        };
        let Some(id) = candidates
            .into_iter()
            .find(|(_, versions)| playable(&parse_ids(versions)))
            .map(|(id, _)| id)
        else {
            return Ok(None);
        };
        tx.execute(
            "UPDATE tables SET state = 'claimed', claim = claim + 1, worker = ?2, \
             lease_until = ?3 WHERE id = ?1",
            params![id, worker, now + lease.as_millis() as i64],
        )
        .map_err(sql(&path))?;
        let row = table_row(&tx, id).map_err(sql(&path))?;
        tx.commit().map_err(sql(&path))?;
        Ok(row)
    }

    fn renew_claims(
        &self,
        worker: &str,
        claims: &[Claim],
        lease: Duration,
    ) -> Result<Vec<Claim>, String> {
        let until = now_ms() + lease.as_millis() as i64;
        let mut lost = Vec::new();
        for claim in claims {
            let held = self
                .conn
                .execute(
                    "UPDATE tables SET lease_until = ?3 \
                     WHERE id = ?1 AND claim = ?2 AND state = 'claimed'",
                    params![claim.table, claim.claim, until],
                )
                .map_err(sql(&self.path))?;
            if held == 0 {
                lost.push(*claim);
            }
        }
        self.conn
            .execute(
                "UPDATE workers SET seen = ?2 WHERE name = ?1",
                params![worker, now_ms()],
            )
            .map_err(sql(&self.path))?;
        Ok(lost)
    }

    fn release_table(&self, claim: Claim) -> Result<(), String> {
        self.conn
            .execute(
                "UPDATE tables SET state = 'queued', worker = NULL, lease_until = NULL \
                 WHERE id = ?1 AND claim = ?2 AND state = 'claimed'",
                params![claim.table, claim.claim],
            )
            .map(drop)
            .map_err(sql(&self.path))
    }

    fn finish_table(&self, claim: Claim, outcome: Option<&str>) -> Result<(), String> {
        self.conn
            .execute(
                "UPDATE tables SET state = 'done', outcome = ?3, lease_until = NULL \
                 WHERE id = ?1 AND claim = ?2 AND state = 'claimed'",
                params![claim.table, claim.claim, outcome],
            )
            .map(drop)
            .map_err(sql(&self.path))
    }

    fn open_tables(&self) -> Result<Vec<TableRow>, String> {
        let ids: Vec<i64> = {
            let mut statement = self
                .conn
                .prepare("SELECT id FROM tables WHERE state <> 'done' ORDER BY id")
                .map_err(sql(&self.path))?;
            let rows = statement
                .query_map([], |r| r.get(0))
                .map_err(sql(&self.path))?;
            rows.collect::<Result<_, _>>().map_err(sql(&self.path))?
        };
        let mut tables = Vec::new();
        for id in ids {
            tables.extend(table_row(&self.conn, id).map_err(sql(&self.path))?);
        }
        Ok(tables)
    }

    fn table_states(&self, ids: &[i64]) -> Result<Vec<(i64, TableState)>, String> {
        let mut statement = self
            .conn
            .prepare_cached("SELECT state, outcome FROM tables WHERE id = ?1")
            .map_err(sql(&self.path))?;
        let mut states = Vec::new();
        for &id in ids {
            let row: Option<(String, Option<String>)> = statement
                .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
                .map_err(sql(&self.path))?;
            if let Some((state, outcome)) = row {
                states.push((id, TableState::of(&state, outcome)));
            }
        }
        Ok(states)
    }

    fn drop_queued_tables(&self, ids: &[i64]) -> Result<Vec<i64>, String> {
        let mut dropped = Vec::new();
        for &id in ids {
            let n = self
                .conn
                .execute(
                    "UPDATE tables SET state = 'done', outcome = '\"dropped\"' \
                     WHERE id = ?1 AND state = 'queued'",
                    [id],
                )
                .map_err(sql(&self.path))?;
            if n > 0 {
                dropped.push(id);
            }
        }
        Ok(dropped)
    }

    fn games_after(
        &self,
        after: u64,
        limit: u64,
    ) -> Result<Vec<(Option<i64>, GameRecord)>, String> {
        let table = if self.before_work { "NULL" } else { "table_id" };
        let mut statement = self
            .conn
            .prepare_cached(&format!(
                "SELECT id, {table}, record FROM games WHERE id > ?1 ORDER BY id LIMIT ?2"
            ))
            .map_err(sql(&self.path))?;
        let rows = statement
            .query_map(params![after as i64, limit as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, Option<i64>>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(sql(&self.path))?;
        let mut games = Vec::new();
        for row in rows {
            let (id, table, text) = row.map_err(sql(&self.path))?;
            let record = serde_json::from_str(&text)
                .map_err(|e| format!("{}: game {id}: {e}", self.path.display()))?;
            games.push((table, record));
        }
        Ok(games)
    }

    fn worker_seen(&self, name: &str, jobs: usize) -> Result<(), String> {
        self.conn
            .execute(
                // Not `OR REPLACE`: that would reset what it said of itself.
                "INSERT INTO workers (name, jobs, seen) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (name) DO UPDATE SET jobs = excluded.jobs, seen = excluded.seen",
                params![name, jobs as i64, now_ms()],
            )
            .map(drop)
            .map_err(sql(&self.path))
    }

    fn workers(&self, within: Duration) -> Result<Vec<(String, usize)>, String> {
        let since = now_ms() - within.as_millis() as i64;
        let mut statement = self
            .conn
            .prepare_cached("SELECT name, jobs FROM workers WHERE seen >= ?1 ORDER BY name")
            .map_err(sql(&self.path))?;
        let rows = statement
            .query_map([since], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as usize))
            })
            .map_err(sql(&self.path))?;
        rows.collect::<Result<_, _>>().map_err(sql(&self.path))
    }

    fn release_claims_of(&self, worker: &str) -> Result<(), String> {
        self.conn
            .execute(
                "UPDATE tables SET state = 'queued', worker = NULL, lease_until = NULL \
                 WHERE worker = ?1 AND state = 'claimed'",
                [worker],
            )
            .map(drop)
            .map_err(sql(&self.path))
    }

    fn worker_gone(&self, name: &str) -> Result<(), String> {
        self.conn
            .execute_batch("BEGIN")
            .and_then(|()| {
                self.conn
                    .execute("DELETE FROM workers WHERE name = ?1", [name])
            })
            .and_then(|_| {
                self.conn
                    .execute("DELETE FROM declines WHERE worker = ?1", [name])
            })
            .and_then(|_| self.conn.execute_batch("COMMIT"))
            .map_err(|e| {
                let _ = self.conn.execute_batch("ROLLBACK");
                sql(&self.path)(e)
            })
    }

    fn decline_version(&self, worker: &str, version: i64, why: &str) -> Result<(), String> {
        self.conn
            .execute(
                "INSERT INTO declines (worker, version, why) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (worker, version) DO UPDATE SET why = excluded.why",
                params![worker, version, why],
            )
            .map(drop)
            .map_err(sql(&self.path))
    }

    fn void_game(&self, worker: &str, why: &str) -> Result<(), String> {
        self.conn
            .execute(
                "INSERT INTO workers (name, jobs, seen, void_games, last_void) \
                 VALUES (?1, 0, ?3, 1, ?2) ON CONFLICT (name) DO UPDATE SET \
                 void_games = void_games + 1, last_void = excluded.last_void",
                params![worker, why, now_ms()],
            )
            .map(drop)
            .map_err(sql(&self.path))
    }

    fn worker_notes(&self, within: Duration) -> Result<Vec<WorkerNote>, String> {
        let since = now_ms() - within.as_millis() as i64;
        let mut workers = self
            .conn
            .prepare_cached(
                "SELECT name, jobs, void_games, last_void FROM workers \
                 WHERE seen >= ?1 ORDER BY name",
            )
            .map_err(sql(&self.path))?;
        let mut declines = self
            .conn
            .prepare_cached("SELECT version, why FROM declines WHERE worker = ?1 ORDER BY version")
            .map_err(sql(&self.path))?;
        let notes = workers
            .query_map([since], |r| {
                Ok(WorkerNote {
                    name: r.get(0)?,
                    jobs: r.get::<_, i64>(1)? as usize,
                    void_games: r.get::<_, i64>(2)? as u64,
                    last_void: r.get(3)?,
                    declined: Vec::new(),
                })
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(sql(&self.path))?;
        notes
            .into_iter()
            .map(|mut note| {
                note.declined = declines
                    .query_map([&note.name], |r| Ok((r.get(0)?, r.get(1)?)))
                    .and_then(|rows| rows.collect())
                    .map_err(sql(&self.path))?;
                Ok(note)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new<'a>(entrant: &'a str, fingerprint: &'a str) -> NewVersion<'a> {
        NewVersion {
            entrant,
            fingerprint,
            products: &[],
            build_ok: true,
            build_log: None,
        }
    }

    #[test]
    fn versions_count_per_entrant_and_a_second_league_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("league.db");
        let mut db = Sqlite::open(&path, false).unwrap();
        assert_eq!(db.meta().unwrap(), None);
        let meta = Meta {
            game: "\"chomp\"".into(),
            solo: false,
            seed: 7,
        };
        db.set_meta(&meta).unwrap();
        assert_eq!(db.add_version(&new("alice", "a1")).unwrap().1, 1);
        assert_eq!(db.add_version(&new("bob", "b1")).unwrap().1, 1);
        let logged = NewVersion {
            build_log: Some("make: ok"),
            ..new("alice", "a2")
        };
        assert_eq!(db.add_version(&logged).unwrap().1, 2);
        let err = Sqlite::open(&path, false).err().unwrap();
        assert!(err.contains("a league running now"), "{err}");
        db.retire("bob").unwrap();
        let versions = db.versions().unwrap();
        assert_eq!(versions[2].build_log.as_deref(), Some("make: ok"));
        // What a scan reads: the same rows, without their logs.
        let brief = db.versions_without_logs().unwrap();
        assert_eq!(
            brief
                .iter()
                .map(|v| (v.id, &v.fingerprint))
                .collect::<Vec<_>>(),
            versions
                .iter()
                .map(|v| (v.id, &v.fingerprint))
                .collect::<Vec<_>>()
        );
        assert!(brief.iter().all(|v| v.build_log.is_none()));
        let names: Vec<(String, u32, bool)> = versions
            .iter()
            .map(|v| (v.entrant.clone(), v.version, v.retired))
            .collect();
        assert_eq!(
            names,
            [
                ("alice".into(), 1, false),
                ("bob".into(), 1, true),
                ("alice".into(), 2, false)
            ]
        );
        drop(db);
        let db = Sqlite::open(&path, false).unwrap();
        assert_eq!(db.meta().unwrap(), Some(meta));
        assert_eq!(db.games().unwrap(), 0);
        assert_eq!(db.next_round().unwrap(), 1);
    }

    #[test]
    fn a_file_that_is_not_a_database_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(
            &path,
            "not sqlite at all, just some words here\n".repeat(20),
        )
        .unwrap();
        let err = Sqlite::open(&path, false).err().unwrap();
        assert!(err.contains("notes.txt"), "{err}");
        let err = Sqlite::read(&dir.path().join("missing.db")).err().unwrap();
        assert!(err.contains("no such database"), "{err}");
    }
}
