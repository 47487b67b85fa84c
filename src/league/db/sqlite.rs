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

use super::{Meta, NewVersion, VersionRow};
use crate::game::GameRecord;

/// The schema's version, in `meta`; a database of another is refused.
const SCHEMA: &str = "1";

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
    UNIQUE (entrant, version)
);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    round INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    finished TEXT NOT NULL,
    record TEXT NOT NULL
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

/// The league's database in a SQLite file, open for its one league: a
/// second league on the same file is refused while this one holds it.
pub struct Sqlite {
    conn: Connection,
    path: PathBuf,
    _lock: Option<Flock<File>>,
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> String + '_ {
    move |e| format!("{}: {e}", path.display())
}

impl Sqlite {
    /// Opens (or makes) the league's database at `path` and holds it.
    /// `durable`: each game's commit waits for the disk (`synchronous =
    /// FULL`); without it (`--no-fsync`) a crash of the machine, not of
    /// the referee, may lose the last games.
    pub fn open(path: &Path, durable: bool) -> Result<Sqlite, String> {
        let conn = Connection::open(path).map_err(sql(path))?;
        let lock = hold(path)?;
        let db = Sqlite {
            conn,
            path: path.to_owned(),
            _lock: Some(lock),
        };
        let sync = if durable { "FULL" } else { "NORMAL" };
        db.conn
            .execute_batch(&format!(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync}; \
                 PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;"
            ))
            .map_err(sql(path))?;
        db.check_schema()?;
        db.conn.execute_batch(TABLES).map_err(sql(path))?;
        Ok(db)
    }

    /// Opens a league's database to read it, beside a league that may be
    /// running on it.
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
        let db = Sqlite {
            conn,
            path: path.to_owned(),
            _lock: None,
        };
        db.check_schema()?;
        if db.meta()?.is_none() {
            return Err(format!("{}: not a league's database", path.display()));
        }
        Ok(db)
    }

    fn check_schema(&self) -> Result<(), String> {
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
            return Ok(());
        }
        let schema: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql(&self.path))?;
        match schema.as_deref() {
            None | Some(SCHEMA) => Ok(()),
            Some(other) => Err(format!(
                "{}: a league database of schema {other}; this referee reads schema {SCHEMA}",
                self.path.display()
            )),
        }
    }

    pub fn meta(&self) -> Result<Option<Meta>, String> {
        let get = |key: &str| -> Result<Option<String>, String> {
            self.conn
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()
                .map_err(sql(&self.path))
        };
        let (Some(game), Some(solo), Some(seed)) = (get("game")?, get("solo")?, get("seed")?)
        else {
            return Ok(None);
        };
        Ok(Some(Meta {
            game,
            solo: solo == "1",
            seed: seed
                .parse()
                .map_err(|e| format!("{}: meta seed {seed:?}: {e}", self.path.display()))?,
        }))
    }

    pub fn set_meta(&self, meta: &Meta) -> Result<(), String> {
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
    pub fn versions(&self) -> Result<Vec<VersionRow>, String> {
        self.select_versions("v.build_log")
    }

    /// [`Db::versions`] without their build logs (`build_log` is `None`):
    /// what a scan needs, every few seconds, of versions whose logs may
    /// hold 64 KiB each.
    pub fn versions_without_logs(&self) -> Result<Vec<VersionRow>, String> {
        self.select_versions("NULL")
    }

    fn select_versions(&self, log: &str) -> Result<Vec<VersionRow>, String> {
        let mut statement = self
            .conn
            .prepare(&format!(
                "SELECT v.id, e.name, v.version, v.fingerprint, v.products, v.build_ok, \
                 {log}, e.retired, v.built FROM versions v JOIN entrants e ON e.id = v.entrant \
                 ORDER BY v.id",
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
                })
            })
            .map_err(sql(&self.path))?;
        rows.collect::<Result<_, _>>().map_err(sql(&self.path))
    }

    /// Adds the next version of `new.entrant` (its first makes the
    /// entrant); the entrant is in the league again if it had left. Its
    /// id and number.
    pub fn add_version(&mut self, new: &NewVersion) -> Result<(i64, u32), String> {
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
    pub fn retire(&self, entrant: &str) -> Result<(), String> {
        self.conn
            .execute("UPDATE entrants SET retired = 1 WHERE name = ?1", [entrant])
            .map_err(sql(&self.path))?;
        Ok(())
    }

    /// Version `id` failed as if it had not built, for `why` (the judge
    /// refused its options): it plays no more, and its row says why.
    pub fn fail_version(&self, id: i64, why: &str) -> Result<(), String> {
        self.conn
            .execute(
                "UPDATE versions SET build_ok = 0, build_log = ?2 WHERE id = ?1",
                rusqlite::params![id, why],
            )
            .map_err(sql(&self.path))?;
        Ok(())
    }

    /// `entrant` is in the league again (its folder is back).
    pub fn rejoin(&self, entrant: &str) -> Result<(), String> {
        self.conn
            .execute("UPDATE entrants SET retired = 0 WHERE name = ?1", [entrant])
            .map_err(sql(&self.path))?;
        Ok(())
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
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(sql(&path))?;
        let id: i64 = tx
            .query_row("SELECT coalesce(max(id), 0) + 1 FROM games", [], |r| {
                r.get(0)
            })
            .map_err(sql(&path))?;
        record.index = id as u64;
        let text = serde_json::to_string(record).map_err(|e| format!("game {id}: {e}"))?;
        tx.prepare_cached(
            "INSERT INTO games (id, round, rotation, finished, record) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .and_then(|mut s| {
            s.execute(params![
                id,
                round as i64,
                rotation as i64,
                record.time,
                text
            ])
        })
        .map_err(sql(&path))?;
        for (seat, (version, result)) in versions.iter().zip(&record.results).enumerate() {
            tx.prepare_cached(
                "INSERT INTO seats (game, seat, version, status) VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut s| s.execute(params![id, seat as i64, version, result.status().name()]))
            .map_err(sql(&path))?;
        }
        tx.commit().map_err(sql(&path))?;
        Ok(id as u64)
    }

    /// Games finished.
    pub fn games(&self) -> Result<u64, String> {
        self.conn
            .query_row("SELECT count(*) FROM games", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(sql(&self.path))
    }

    /// The round the next one dealt is to be: after every round a game was
    /// finished in.
    pub fn next_round(&self) -> Result<u64, String> {
        self.conn
            .query_row("SELECT coalesce(max(round), 0) + 1 FROM games", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .map_err(sql(&self.path))
    }

    /// The rounds version `version` has finished a game of (a game played
    /// alone: the deals it has played).
    pub fn rounds_of(&self, version: i64) -> Result<Vec<u64>, String> {
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
    pub fn recent_games(
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
            let record: serde_json::Value = serde_json::from_str(&record).unwrap_or_default();
            let seats: Vec<serde_json::Value> = record["results"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| {
                    serde_json::json!({
                        "entrant": r["entrant"], "status": r["status"], "score": r["score"],
                        "rank": r["rank"], "won": r["won"], "error": r["error"],
                    })
                })
                .collect();
            out.push(serde_json::json!({ "game": id, "finished": finished, "seats": seats }));
        }
        Ok(out)
    }

    /// Game `id`'s record, as JSON.
    pub fn game(&self, id: u64) -> Result<Option<serde_json::Value>, String> {
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
