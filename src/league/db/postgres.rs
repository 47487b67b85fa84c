//! The league's database on PostgreSQL (tokio-postgres), shared by a
//! league's coordinator, its workers on other machines and its readers
//! (`show`, `export`, the live page).
//!
//! tokio-postgres is async; the interface ([`super::Db`]) is not. Each
//! `Postgres` owns a runtime of one worker thread that drives its
//! connection, and each call waits for its future there: from a thread
//! of its own when the caller is inside another runtime (blocking on a
//! runtime from inside one panics), else from the caller's thread.
//!
//! A lost connection (the server restarted) is not the league's end:
//! every call connects again and retries for up to [`RETRY_FOR`]. Every
//! write is safe to retry, even when the connection was lost while its
//! commit was on the way: new rows take ids drawn before the transaction
//! (a retry writes the same row again, or finds it), and a game is known
//! by its record.
//!
//! Games are numbered at commit, under a transaction-scoped advisory
//! lock ([`NUMBERING`]) rather than `LOCK TABLE games`: it serializes only
//! the writers that number games, and neither readers nor autovacuum
//! wait for it (`EXCLUSIVE` mode would hold off autovacuum). The lock is
//! let go after the commit is visible, so the next game's `max(id) + 1`
//! sees it: games are numbered 1, 2, ... with no gap, in the order their
//! commits were made.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio_postgres::error::SqlState;
use tokio_postgres::types::{FromSql, ToSql};
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

use super::stored::{escape, unescape};
use super::{
    Claim, JoinError, Location, Meta, NewGame, NewTable, NewVersion, Store, TableRow, TableState,
    VersionRow, WorkerNote,
};
use crate::game::GameRecord;

/// The schema's version, in `meta`; a database of a later one is
/// refused, one of schema 2 migrated by its league ([`migrate_2_to_3`]).
const SCHEMA: &str = "3";

/// The advisory lock a league's coordinator holds on its session: one
/// league per database. ("league" in ASCII.)
const LEAGUE_LOCK: i64 = 0x6c65_6167_7565;

/// The transaction-scoped advisory lock that numbers games. ("numbers")
const NUMBERING: i64 = 0x006e_756d_6265_7273;

/// How long a call tries to connect again after a lost connection.
const RETRY_FOR: Duration = Duration::from_secs(60);

/// Games read per query by [`Postgres::each_game`]: a league of any
/// length is read in little memory.
const BATCH: i64 = 1000;

/// The database's clock, in ms since the epoch: leases are by one clock,
/// whatever the workers' machines say.
const NOW_MS: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT";

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entrants (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    retired BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS versions (
    id BIGSERIAL PRIMARY KEY,
    entrant BIGINT NOT NULL REFERENCES entrants(id),
    version BIGINT NOT NULL,
    fingerprint TEXT NOT NULL,
    products TEXT NOT NULL DEFAULT '[]',
    built TEXT NOT NULL,
    build_ok BIGINT NOT NULL,
    build_log TEXT,
    player TEXT,
    UNIQUE (entrant, version)
);
CREATE TABLE IF NOT EXISTS games (
    id BIGINT PRIMARY KEY,
    round BIGINT NOT NULL,
    rotation BIGINT NOT NULL,
    finished TEXT NOT NULL,
    record TEXT NOT NULL,
    table_id BIGINT
);
CREATE UNIQUE INDEX IF NOT EXISTS games_by_table ON games (table_id, rotation);
CREATE TABLE IF NOT EXISTS seats (
    game BIGINT NOT NULL REFERENCES games(id),
    seat BIGINT NOT NULL,
    version BIGINT NOT NULL REFERENCES versions(id),
    status TEXT NOT NULL,
    PRIMARY KEY (game, seat)
);
CREATE INDEX IF NOT EXISTS seats_by_version ON seats (version, game);
CREATE TABLE IF NOT EXISTS tables (
    id BIGSERIAL PRIMARY KEY,
    round BIGINT NOT NULL,
    versions TEXT NOT NULL,
    rotations TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued',
    claim BIGINT NOT NULL DEFAULT 0,
    worker TEXT,
    lease_until BIGINT,
    outcome TEXT
);
CREATE INDEX IF NOT EXISTS tables_open ON tables (state, id);
CREATE TABLE IF NOT EXISTS workers (
    name TEXT PRIMARY KEY,
    jobs BIGINT NOT NULL,
    seen BIGINT NOT NULL,
    void_games BIGINT NOT NULL DEFAULT 0,
    last_void TEXT
);
CREATE TABLE IF NOT EXISTS declines (
    worker TEXT NOT NULL,
    version BIGINT NOT NULL,
    why TEXT NOT NULL,
    PRIMARY KEY (worker, version)
);
";

/// Schema 2 to 3 (before [`TABLES`], which makes `declines`): what a
/// worker says of itself, and text escaped as [`super::stored`] says.
fn migrate_2_to_3() -> String {
    let mut sql = String::from(
        "ALTER TABLE workers ADD COLUMN IF NOT EXISTS void_games BIGINT NOT NULL DEFAULT 0;
         ALTER TABLE workers ADD COLUMN IF NOT EXISTS last_void TEXT;",
    );
    for (table, column) in [
        ("meta", "key"),
        ("meta", "value"),
        ("entrants", "name"),
        ("versions", "fingerprint"),
        ("versions", "built"),
        ("versions", "build_log"),
        ("versions", "player"),
        ("games", "finished"),
        ("tables", "worker"),
        ("tables", "outcome"),
        ("workers", "name"),
    ] {
        sql.push_str(&super::stored::migrate_sql(table, column));
    }
    sql + &format!("UPDATE meta SET value = '{SCHEMA}' WHERE key = 'schema';")
}

/// Who holds the connection, which decides what each new session is set
/// up with.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    /// The league's one coordinator: holds [`LEAGUE_LOCK`].
    Coordinator { durable: bool },
    /// A worker: writes games, holds no lock.
    Worker,
    /// `show`, `export`, the page: read only.
    Reader,
}

/// Why an attempt failed: the server (maybe a lost connection, retried),
/// or anything else (not retried).
enum Fail {
    Pg(tokio_postgres::Error),
    Other(String),
}

impl From<tokio_postgres::Error> for Fail {
    fn from(e: tokio_postgres::Error) -> Fail {
        Fail::Pg(e)
    }
}

type Attempt<T> = Result<T, Fail>;

/// A connection, and the statements prepared on it.
struct Session {
    client: Client,
    statements: RefCell<HashMap<String, Statement>>,
}

impl std::ops::Deref for Session {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}

/// The league's database on a PostgreSQL server, open.
pub struct Postgres {
    /// Drives the connection; `None` only while dropping.
    runtime: Option<tokio::runtime::Runtime>,
    // Boxed: the largest part of `Db` otherwise.
    config: Box<Connect>,
    /// The URL without its password, as messages name it.
    name: String,
    role: Role,
    /// `None` after a lost connection, until the next call connects.
    client: Mutex<Option<Session>>,
    /// In a read transaction ([`Postgres::begin_read`]): a lost
    /// connection is an error then, since a new one would not read the
    /// same moment.
    reading: AtomicBool,
}

/// How a database is connected to.
struct Connect {
    config: Config,
    /// The password file its password came from, for a message when the
    /// server refuses it.
    password_file: Option<PathBuf>,
}

/// `url`'s configuration, with what it leaves out from the usual `PG*`
/// environment variables (tokio-postgres reads none of them), and its
/// password, when neither gives one, from the password file libpq reads
/// ([`super::pgpass`]): the file it came from, if it did.
fn config(url: &str) -> Result<(Config, Option<PathBuf>), String> {
    let name = Location::Url(url.to_owned()).describe();
    let mut config: Config = url.parse().map_err(|e| format!("{name}: {e}"))?;
    let env = |key: &str| std::env::var(key).ok().filter(|v| !v.is_empty());
    if config.get_hosts().is_empty() {
        match env("PGHOST") {
            Some(hosts) => hosts.split(',').for_each(|host| {
                config.host(host);
            }),
            None if std::path::Path::new("/var/run/postgresql").is_dir() => {
                config.host_path("/var/run/postgresql");
            }
            None => {
                config.host("localhost");
            }
        }
    }
    if config.get_ports().is_empty()
        && let Some(port) = env("PGPORT")
    {
        let port = port
            .parse()
            .map_err(|e| format!("{name}: PGPORT {port:?}: {e}"))?;
        config.port(port);
    }
    if config.get_user().is_none()
        && let Some(user) = env("PGUSER")
    {
        config.user(user);
    }
    if config.get_password().is_none()
        && let Some(password) = env("PGPASSWORD")
    {
        config.password(password);
    }
    if config.get_dbname().is_none()
        && let Some(dbname) = env("PGDATABASE")
    {
        config.dbname(dbname);
    }
    let mut from_file = None;
    if config.get_password().is_none()
        && let Some((password, file)) = password_from_file(&config)
    {
        config.password(password);
        from_file = Some(file);
    }
    config.connect_timeout(Duration::from_secs(10));
    config.application_name("referee league");
    Ok((config, from_file))
}

/// The password for `config` in the password file (`PGPASSFILE`, else
/// `~/.pgpass`), as libpq looks it up: for each host in turn (the first
/// that has one gives it: tokio-postgres holds one password for all),
/// the user (the system's name of this one when not given) and the
/// database (the user's name when not given). A file others may read
/// is not read, and said once.
fn password_from_file(config: &Config) -> Option<(Vec<u8>, PathBuf)> {
    use super::pgpass::{self, Read, Wanted};
    let file = pgpass::file()?;
    let user = match config.get_user() {
        Some(user) => user.to_owned(),
        None => {
            nix::unistd::User::from_uid(nix::unistd::geteuid())
                .ok()
                .flatten()?
                .name
        }
    };
    let database = config.get_dbname().unwrap_or(&user).to_owned();
    let hosts = config.get_hosts();
    let ports = config.get_ports();
    let tried = hosts.len().max(1);
    (0..tried).find_map(|i| {
        let port = ports
            .get(i)
            .or(ports.first())
            .copied()
            .unwrap_or(pgpass::DEFAULT_PORT)
            .to_string();
        let host = pgpass::host_name(hosts.get(i));
        let wanted = Wanted {
            host: &host,
            port: &port,
            database: &database,
            user: &user,
        };
        match pgpass::read(&file, &wanted) {
            Read::Found(password) if !password.is_empty() => Some((password, file.clone())),
            // As libpq: the first line that matches decides, empty too.
            Read::Found(_) | Read::None => None,
            Read::Refused(why) => {
                warn_once(&why);
                None
            }
        }
    })
}

/// Says `warning` on standard error, once a run.
fn warn_once(warning: &str) {
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.iter().any(|s| s == warning) {
        eprintln!("referee: warning: {warning}");
        said.push(warning.to_owned());
    }
}

/// Whether `e` means the connection is gone or the server is restarting
/// (so that a new connection may work), or the transaction only lost a
/// race that a retry wins.
fn lost(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        Some(code) => {
            [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
                SqlState::T_R_SERIALIZATION_FAILURE,
                SqlState::T_R_DEADLOCK_DETECTED,
            ]
            .contains(code)
                || code.code().starts_with("08")
        }
        None => std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()),
    }
}

/// Whether a first connection refused with `e` may be made later, once
/// the server is up: nobody there yet (refused, no socket, no answer),
/// starting up or shutting down, too many connections.
fn passing(e: &tokio_postgres::Error) -> bool {
    if let Some(code) = e.code() {
        return [
            SqlState::CANNOT_CONNECT_NOW,
            SqlState::TOO_MANY_CONNECTIONS,
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
        ]
        .contains(code);
    }
    if e.is_closed() {
        return true;
    }
    use std::io::ErrorKind::*;
    std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .is_some_and(|io| {
            [
                ConnectionRefused,
                NotFound,
                ConnectionReset,
                ConnectionAborted,
                TimedOut,
                UnexpectedEof,
            ]
            .contains(&io.kind())
        })
}

/// What the server said of `e`, or the client's own words and their
/// cause (`error connecting to server: Connection refused ...`).
fn why(e: &tokio_postgres::Error) -> String {
    match (e.as_db_error(), std::error::Error::source(e)) {
        (Some(db), _) => db.message().to_owned(),
        (None, Some(cause)) => format!("{e}: {cause}"),
        (None, None) => e.to_string(),
    }
}

/// A row's column `i`, or why not (a database another program wrote).
fn get<'a, T: FromSql<'a>>(row: &'a Row, i: usize) -> Attempt<T> {
    row.try_get(i).map_err(Fail::Pg)
}

/// A row's text column `i`, as it was given ([`super::stored`]).
fn text(row: &Row, i: usize) -> Attempt<String> {
    get(row, i).map(unescape)
}

fn maybe_text(row: &Row, i: usize) -> Attempt<Option<String>> {
    get::<Option<String>>(row, i).map(|t| t.map(unescape))
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Postgres {
    /// Opens the league's database at `url` (making its tables) and holds
    /// it: one league per database. `durable`: each game's commit waits
    /// for the disk; without it (`--no-fsync`, `synchronous_commit =
    /// off`) a crash of the server may lose the last games.
    pub fn open(url: &str, durable: bool) -> Result<Postgres, String> {
        let db = Postgres::connect(url, Role::Coordinator { durable })?;
        let migrated = db.with(|c| {
            let schema = db.check_schema(c)?;
            if schema == Some(2) {
                db.transaction(c, "BEGIN", || {
                    Ok(db.wait(c.batch_execute(&migrate_2_to_3()))?)
                })?;
            }
            db.wait(c.batch_execute(TABLES))?;
            Ok(schema == Some(2))
        })?;
        if migrated {
            eprintln!(
                "league: {} migrated from schema 2 to {SCHEMA} (its games kept)",
                db.name
            );
        }
        Ok(db)
    }

    /// Opens a league's database to read it, beside a league that may be
    /// running on it.
    pub fn read(url: &str) -> Result<Postgres, String> {
        let db = Postgres::connect(url, Role::Reader)?;
        db.check_league()?;
        Ok(db)
    }

    /// Opens a league's database for a worker: read-write, without the
    /// league's lock; `None` while no league is in it yet.
    pub fn join(url: &str) -> Result<Option<Postgres>, JoinError> {
        let db = Postgres::reach(url, Role::Worker)?;
        Ok(db.is_league().map_err(JoinError::Fails)?.then_some(db))
    }

    fn connect(url: &str, role: Role) -> Result<Postgres, String> {
        Postgres::reach(url, role).map_err(|e| match e {
            JoinError::NotYet(why) => format!("{}: {why}", Location::Url(url.into()).describe()),
            JoinError::Fails(message) => message,
        })
    }

    /// Connects as `role`, once: a worker tries again while the server
    /// is not there yet ([`JoinError::NotYet`]); anyone else says why now.
    fn reach(url: &str, role: Role) -> Result<Postgres, JoinError> {
        let name = Location::Url(url.to_owned()).describe();
        // Before the runtime: one dropped inside a caller's runtime panics.
        let (config, password_file) = config(url).map_err(JoinError::Fails)?;
        let config = Box::new(Connect {
            config,
            password_file,
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("postgres")
            .enable_all()
            .build()
            .map_err(|e| JoinError::Fails(format!("{name}: cannot start its runtime: {e}")))?;
        let db = Postgres {
            runtime: Some(runtime),
            config,
            name,
            role,
            client: Mutex::new(None),
            reading: AtomicBool::new(false),
        };
        let client = db.session().map_err(|fail| match fail {
            Fail::Pg(e) if passing(&e) => JoinError::NotYet(why(&e)),
            fail => JoinError::Fails(db.message(fail)),
        })?;
        *db.client.lock().unwrap_or_else(|e| e.into_inner()) = Some(client);
        Ok(db)
    }

    /// A new session, set up for its role.
    fn session(&self) -> Attempt<Session> {
        let config = Config::clone(&self.config.config);
        let (client, connection) = self.wait(async move { config.connect(NoTls).await })?;
        self.runtime().spawn(connection);
        match self.role {
            Role::Coordinator { durable } => {
                if !durable {
                    self.wait(client.batch_execute("SET synchronous_commit = off"))?;
                }
                let row = self
                    .wait(client.query_one("SELECT pg_try_advisory_lock($1)", &[&LEAGUE_LOCK]))?;
                if !get::<bool>(&row, 0)? {
                    return Err(Fail::Other(format!(
                        "{} is the database of a league running now: one league per database",
                        self.name
                    )));
                }
            }
            Role::Reader => {
                self.wait(client.batch_execute("SET default_transaction_read_only = on"))?;
            }
            Role::Worker => {}
        }
        Ok(Session {
            client,
            statements: RefCell::new(HashMap::new()),
        })
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime
            .as_ref()
            .expect("the runtime is there until the database is dropped")
    }

    /// Runs `future` on this database's runtime and waits for it.
    fn wait<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        let runtime = self.runtime();
        if tokio::runtime::Handle::try_current().is_err() {
            return runtime.block_on(future);
        }
        std::thread::scope(|s| {
            s.spawn(|| runtime.block_on(future))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    fn message(&self, fail: Fail) -> String {
        match fail {
            Fail::Pg(e) => match &self.config.password_file {
                Some(file) if e.code() == Some(&SqlState::INVALID_PASSWORD) => format!(
                    "{}: {} (the password came from {})",
                    self.name,
                    why(&e),
                    file.display()
                ),
                _ => format!("{}: {}", self.name, why(&e)),
            },
            Fail::Other(why) => why,
        }
    }

    /// Runs `attempt` on the connection; after a lost connection, connects
    /// again and runs it again, for up to [`RETRY_FOR`].
    fn with<T>(&self, mut attempt: impl FnMut(&Session) -> Attempt<T>) -> Result<T, String> {
        let mut client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        let deadline = Instant::now() + RETRY_FOR;
        let mut pause = Duration::from_millis(100);
        loop {
            let why = match client.as_ref().map(&mut attempt) {
                Some(Ok(value)) => return Ok(value),
                Some(Err(Fail::Pg(e))) if lost(&e) => self.message(Fail::Pg(e)),
                Some(Err(fail)) => return Err(self.message(fail)),
                None => format!("{}: not connected", self.name),
            };
            *client = None;
            if self.reading.load(Ordering::Relaxed) {
                return Err(format!(
                    "{why} (the connection was lost in a read: read again)"
                ));
            }
            let mut why = why;
            while client.is_none() {
                if Instant::now() + pause > deadline {
                    return Err(format!(
                        "{why} (lost the connection; could not connect again in {} s)",
                        RETRY_FOR.as_secs()
                    ));
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(2));
                match self.session() {
                    Ok(new) => *client = Some(new),
                    // Nobody there yet; or, for a coordinator, its
                    // lock still held by its old session, closing (or by
                    // another league, said once the time is up).
                    Err(fail) => why = self.message(fail),
                }
            }
        }
    }

    /// Runs `body` in one transaction: committed if it returns `Ok`,
    /// rolled back if not.
    fn transaction<T>(
        &self,
        client: &Session,
        begin: &str,
        body: impl FnOnce() -> Attempt<T>,
    ) -> Attempt<T> {
        self.wait(client.batch_execute(begin))?;
        match body() {
            Ok(value) => {
                self.wait(client.batch_execute("COMMIT"))?;
                Ok(value)
            }
            Err(fail) => {
                let _ = self.wait(client.batch_execute("ROLLBACK"));
                Err(fail)
            }
        }
    }

    fn query(
        &self,
        client: &Session,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Attempt<Vec<Row>> {
        let statement = self.prepared(client, sql)?;
        Ok(self.wait(client.query(&statement, params))?)
    }

    fn query_opt(
        &self,
        client: &Session,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Attempt<Option<Row>> {
        let statement = self.prepared(client, sql)?;
        Ok(self.wait(client.query_opt(&statement, params))?)
    }

    fn execute(&self, client: &Session, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Attempt<u64> {
        let statement = self.prepared(client, sql)?;
        Ok(self.wait(client.execute(&statement, params))?)
    }

    /// `sql` prepared on the session: once per session, not per call (a
    /// round trip less each).
    fn prepared(&self, session: &Session, sql: &str) -> Attempt<Statement> {
        if let Some(statement) = session.statements.borrow().get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.wait(session.client.prepare(sql))?;
        session
            .statements
            .borrow_mut()
            .insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// The database's schema (`None`: a new one); a later one than this
    /// referee's is refused, and one of schema 2 to a worker (its league
    /// migrates it).
    fn check_schema(&self, client: &Session) -> Attempt<Option<u32>> {
        let row = self.query_opt(client, "SELECT to_regclass('meta') IS NOT NULL", &[])?;
        if !row
            .map(|r| get::<bool>(&r, 0))
            .transpose()?
            .unwrap_or(false)
        {
            return Ok(None);
        }
        let schema = self.query_opt(client, "SELECT value FROM meta WHERE key = 'schema'", &[])?;
        match schema.map(|r| get::<String>(&r, 0)).transpose()?.as_deref() {
            None => Ok(None),
            Some(SCHEMA) => Ok(Some(3)),
            Some("2") if self.role == Role::Worker => Err(Fail::Other(format!(
                "{}: a league database of schema 2: `referee league run` on it first \
                 (it migrates it)",
                self.name
            ))),
            Some("2") => Ok(Some(2)),
            Some(other) => Err(Fail::Other(format!(
                "{}: a league database of schema {other}; this referee reads schema {SCHEMA}",
                self.name
            ))),
        }
    }

    /// Refuses a database with no league in it, or of another schema.
    fn check_league(&self) -> Result<(), String> {
        if !self.is_league()? {
            return Err(format!("{}: not a league's database", self.name));
        }
        Ok(())
    }

    /// Whether a league is in the database (of a schema this referee reads).
    fn is_league(&self) -> Result<bool, String> {
        let is_league = self.with(|c| {
            self.check_schema(c)?;
            let row = self.query_opt(c, "SELECT to_regclass('meta') IS NOT NULL", &[])?;
            Ok(row
                .map(|r| get::<bool>(&r, 0))
                .transpose()?
                .unwrap_or(false))
        })?;
        Ok(is_league && self.meta()?.is_some())
    }

    fn select_versions(&self, log: &str) -> Result<Vec<VersionRow>, String> {
        let sql = format!(
            "SELECT v.id, e.name, v.version, v.fingerprint, v.products, v.build_ok, {log}, \
             e.retired, v.built, v.player FROM versions v JOIN entrants e ON e.id = v.entrant \
             ORDER BY v.id"
        );
        self.with(|c| {
            let rows = self.query(c, &sql, &[])?;
            rows.iter().map(|r| self.version_row(r)).collect()
        })
    }

    fn version_row(&self, r: &Row) -> Attempt<VersionRow> {
        let version: i64 = get(r, 2)?;
        let products: String = get(r, 4)?;
        Ok(VersionRow {
            id: get(r, 0)?,
            entrant: text(r, 1)?,
            version: u32::try_from(version)
                .map_err(|e| Fail::Other(format!("{}: version {version}: {e}", self.name)))?,
            fingerprint: text(r, 3)?,
            products: serde_json::from_str(&products).unwrap_or_default(),
            build_ok: get::<i64>(r, 5)? != 0,
            build_log: maybe_text(r, 6)?,
            retired: get::<i64>(r, 7)? != 0,
            built: text(r, 8)?,
            player: maybe_text(r, 9)?,
        })
    }

    /// Runs one statement that changes rows, retried after a lost
    /// connection: what it sets is the same set again.
    fn change(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, String> {
        self.with(|c| self.execute(c, sql, params))
    }

    /// Commits one finished game: its record, numbered as the league's
    /// next game (its `index`), and the version in each seat, in one
    /// transaction. The game's number.
    pub(super) fn add_game(
        &mut self,
        record: &mut GameRecord,
        game: &NewGame,
    ) -> Result<u64, String> {
        let mut tried = None;
        let id = self.with(|c| {
            self.transaction(c, "BEGIN", || {
                match self.insert_game(c, record, game, &mut tried)? {
                    Some(id) => Ok(id),
                    None => Err(Fail::Other(format!(
                        "{}: a game of round {}, rotation {} twice",
                        self.name, game.round, game.rotation
                    ))),
                }
            })
        })?;
        Ok(to_u64(id))
    }

    /// Numbers `record` as the next game and inserts it and its seats,
    /// in the caller's transaction; `None` if its table's rotation is
    /// recorded already. `tried`: the number and text of an earlier
    /// attempt whose commit's answer was lost: if that is the game
    /// recorded, it is this one.
    fn insert_game(
        &self,
        c: &Session,
        record: &mut GameRecord,
        game: &NewGame,
        tried: &mut Option<(i64, String)>,
    ) -> Attempt<Option<i64>> {
        if let Some(id) = self.recorded(c, record, tried)? {
            return Ok(Some(id));
        }
        self.execute(c, "SELECT pg_advisory_xact_lock($1)", &[&NUMBERING])?;
        let row = self.query_opt(c, "SELECT coalesce(max(id), 0) + 1 FROM games", &[])?;
        let id: i64 = row.map_or(Err(Fail::Other("no max".into())), |r| get(&r, 0))?;
        record.index = to_u64(id);
        let text = serde_json::to_string(record)
            .map_err(|e| Fail::Other(format!("{}: game {id}: {e}", self.name)))?;
        *tried = Some((id, text.clone()));
        let inserted = self.execute(
            c,
            "INSERT INTO games (id, round, rotation, finished, record, table_id) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (table_id, rotation) DO NOTHING",
            &[
                &id,
                &to_i64(game.round),
                &to_i64(game.rotation),
                &escape(&record.time),
                &text,
                &game.table,
            ],
        )?;
        if inserted == 0 {
            return Ok(None);
        }
        for (seat, (version, result)) in game.versions.iter().zip(&record.results).enumerate() {
            self.execute(
                c,
                "INSERT INTO seats (game, seat, version, status) VALUES ($1, $2, $3, $4)",
                &[&id, &(seat as i64), version, &result.status().name()],
            )?;
        }
        Ok(Some(id))
    }

    /// The number of the game an earlier attempt (`tried`) recorded,
    /// if its commit went through: its number and text are there.
    fn recorded(
        &self,
        c: &Session,
        record: &mut GameRecord,
        tried: &Option<(i64, String)>,
    ) -> Attempt<Option<i64>> {
        let Some((id, text)) = tried else {
            return Ok(None);
        };
        let same = self.query_opt(
            c,
            "SELECT 1 FROM games WHERE id = $1 AND record = $2",
            &[id, text],
        )?;
        if same.is_none() {
            return Ok(None);
        }
        record.index = to_u64(*id);
        Ok(Some(*id))
    }

    fn count(&self, sql: &str) -> Result<u64, String> {
        self.with(|c| {
            let row = self.query_opt(c, sql, &[])?;
            row.map_or(Ok(0), |r| get::<i64>(&r, 0)).map(to_u64)
        })
    }

    /// Starts a read transaction: all read until [`Postgres::end_read`] is
    /// the database at one moment.
    pub fn begin_read(&self) -> Result<(), String> {
        self.with(|c| {
            Ok(self.wait(c.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"))?)
        })?;
        self.reading.store(true, Ordering::Relaxed);
        Ok(())
    }

    pub fn end_read(&self) {
        self.reading.store(false, Ordering::Relaxed);
        // Nothing was written: the end of the transaction cannot lose any
        // (and a lost connection ended it already).
        let client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = client.as_ref() {
            let _ = self.wait(c.batch_execute("COMMIT"));
        }
    }

    /// Every finished game's record in the order they finished, one at a
    /// time: read [`BATCH`] at a time by number, so that a league of any
    /// length is read in little memory (and, after a lost connection,
    /// read on from the last one taken).
    pub fn each_game(&self, mut take: impl FnMut(GameRecord)) -> Result<(), String> {
        let mut after = 0;
        loop {
            let texts: Vec<(i64, String)> = self.with(|c| {
                let rows = self.query(
                    c,
                    "SELECT id, record FROM games WHERE id > $1 ORDER BY id LIMIT $2",
                    &[&after, &BATCH],
                )?;
                rows.iter().map(|r| Ok((get(r, 0)?, get(r, 1)?))).collect()
            })?;
            let Some(&(last, _)) = texts.last() else {
                return Ok(());
            };
            for (id, text) in texts {
                let record = serde_json::from_str(&text)
                    .map_err(|e| format!("{}: game {id}: {e}", self.name))?;
                take(record);
            }
            after = last;
        }
    }
}

/// The work: tables dealt, claimed with a lease, played and finished.
impl Postgres {
    fn table_row(&self, row: &Row) -> Attempt<TableRow> {
        let id: i64 = get(row, 0)?;
        let versions: String = get(row, 2)?;
        let rotations: String = get(row, 3)?;
        let bad = |e: serde_json::Error| Fail::Other(format!("{}: table {id}: {e}", self.name));
        Ok(TableRow {
            id,
            round: to_u64(get(row, 1)?),
            versions: serde_json::from_str(&versions).map_err(bad)?,
            rotations: serde_json::from_str(&rotations).map_err(bad)?,
            claim: get(row, 4)?,
            played: Vec::new(),
        })
    }

    /// The rotations of tables `ids` already in `games`.
    fn played(&self, c: &Session, ids: &[i64]) -> Attempt<HashMap<i64, Vec<u64>>> {
        let rows = self.query(
            c,
            "SELECT table_id, rotation FROM games WHERE table_id = ANY($1) \
             ORDER BY table_id, rotation",
            &[&ids],
        )?;
        let mut played = HashMap::<i64, Vec<u64>>::new();
        for row in &rows {
            played
                .entry(get(row, 0)?)
                .or_default()
                .push(to_u64(get(row, 1)?));
        }
        Ok(played)
    }

    /// Commits one game of a claimed table as [`Postgres::add_game`]
    /// does; `None`, with nothing written, if the claim is no longer held
    /// or the table's `rotation` is recorded already.
    pub(super) fn commit_game(
        &mut self,
        record: &mut GameRecord,
        claim: Claim,
        game: &NewGame,
    ) -> Result<Option<u64>, String> {
        let mut tried = None;
        let id = self.with(|c| {
            self.transaction(c, "BEGIN", || {
                // Locks the table's row: no claim of it can come between
                // this check and the commit.
                let row = self.query_opt(
                    c,
                    "SELECT claim, state FROM tables WHERE id = $1 FOR UPDATE",
                    &[&claim.table],
                )?;
                let held = match &row {
                    Some(r) => {
                        get::<i64>(r, 0)? == claim.claim && get::<String>(r, 1)? == "claimed"
                    }
                    None => false,
                };
                if !held {
                    // The game may be this call's own, committed by an
                    // attempt whose answer was lost.
                    return self.recorded(c, record, &tried);
                }
                self.insert_game(c, record, game, &mut tried)
            })
        })?;
        Ok(id.map(to_u64))
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // Ends the session now (and with it the league's lock), rather
        // than when the runtime's thread gets to it.
        drop(self.client.get_mut().map(Option::take));
        // A runtime dropped inside another one panics; shut down in the
        // background, it does not wait.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Store for Postgres {
    /// The value of `key` in `meta`.
    fn setting(&self, key: &str) -> Result<Option<String>, String> {
        self.with(|c| {
            let row =
                self.query_opt(c, "SELECT value FROM meta WHERE key = $1", &[&escape(key)])?;
            row.map(|r| text(&r, 0)).transpose()
        })
    }

    /// Sets `key` in `meta` to `value`.
    fn set_setting(&self, key: &str, value: &str) -> Result<(), String> {
        self.with(|c| {
            self.execute(
                c,
                "INSERT INTO meta (key, value) VALUES ($1, $2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&escape(key), &escape(value)],
            )
        })?;
        Ok(())
    }

    fn meta(&self) -> Result<Option<Meta>, String> {
        let settings = (
            self.setting("game")?,
            self.setting("solo")?,
            self.setting("seed")?,
        );
        Meta::of(settings, &self.name)
    }

    fn set_meta(&self, meta: &Meta) -> Result<(), String> {
        self.set_setting("schema", SCHEMA)?;
        self.set_setting("game", &meta.game)?;
        self.set_setting("solo", if meta.solo { "1" } else { "0" })?;
        self.set_setting("seed", &meta.seed.to_string())
    }

    /// Every version of every entrant, oldest first.
    fn versions(&self) -> Result<Vec<VersionRow>, String> {
        self.select_versions("v.build_log")
    }

    /// [`Postgres::versions`] without their build logs (`build_log` is
    /// `None`): what a scan needs, every few seconds.
    fn versions_without_logs(&self) -> Result<Vec<VersionRow>, String> {
        self.select_versions("NULL::TEXT")
    }

    /// Adds the next version of `new.entrant` (its first makes the
    /// entrant); the entrant is in the league again if it had left. Its
    /// id and number.
    fn add_version(&mut self, new: &NewVersion) -> Result<(i64, u32), String> {
        let products = serde_json::to_string(new.products).unwrap_or_else(|_| "[]".into());
        let built = crate::record::timestamp();
        let (name, fingerprint) = (escape(new.entrant), escape(new.fingerprint));
        let build_log = new.build_log.map(escape);
        // The id is drawn first, so that a retry after a commit whose
        // answer was lost finds its row rather than adding another.
        let id: i64 = self.with(|c| {
            let row = self.query_opt(c, "SELECT nextval('versions_id_seq')", &[])?;
            row.map_or(Err(Fail::Other("no id".into())), |r| get(&r, 0))
        })?;
        let version: i64 = self.with(|c| {
            self.transaction(c, "BEGIN", || {
                if let Some(row) =
                    self.query_opt(c, "SELECT version FROM versions WHERE id = $1", &[&id])?
                {
                    return get(&row, 0);
                }
                let row = self.query_opt(
                    c,
                    "INSERT INTO entrants (name) VALUES ($1) \
                     ON CONFLICT (name) DO UPDATE SET retired = 0 RETURNING id",
                    &[&name],
                )?;
                let entrant: i64 =
                    row.map_or(Err(Fail::Other("no entrant".into())), |r| get(&r, 0))?;
                let row = self.query_opt(
                    c,
                    "INSERT INTO versions (id, entrant, version, fingerprint, products, built, \
                     build_ok, build_log) SELECT $1, $2, coalesce(max(version), 0) + 1, $3, $4, \
                     $5, $6, $7 FROM versions WHERE entrant = $2 RETURNING version",
                    &[
                        &id,
                        &entrant,
                        &fingerprint,
                        &products,
                        &built,
                        &i64::from(new.build_ok),
                        &build_log,
                    ],
                )?;
                row.map_or(Err(Fail::Other("no version".into())), |r| get(&r, 0))
            })
        })?;
        let version =
            u32::try_from(version).map_err(|e| format!("{}: version {version}: {e}", self.name))?;
        Ok((id, version))
    }

    /// `entrant` leaves the league (its folder is gone): its versions keep
    /// their games.
    fn retire(&self, entrant: &str) -> Result<(), String> {
        self.change(
            "UPDATE entrants SET retired = 1 WHERE name = $1",
            &[&escape(entrant)],
        )?;
        Ok(())
    }

    /// Version `id` failed as if it had not built, for `why` (the judge
    /// refused its options): it plays no more, and its row says why.
    fn fail_version(&self, id: i64, why: &str) -> Result<(), String> {
        self.change(
            "UPDATE versions SET build_ok = 0, build_log = $2 WHERE id = $1",
            &[&id, &escape(why)],
        )?;
        Ok(())
    }

    /// `entrant` is in the league again (its folder is back).
    fn rejoin(&self, entrant: &str) -> Result<(), String> {
        self.change(
            "UPDATE entrants SET retired = 0 WHERE name = $1",
            &[&escape(entrant)],
        )?;
        Ok(())
    }

    /// How a worker runs version `version` (JSON written by the
    /// coordinator).
    fn set_player(&self, version: i64, player: &str) -> Result<(), String> {
        self.change(
            "UPDATE versions SET player = $2 WHERE id = $1",
            &[&version, &escape(player)],
        )?;
        Ok(())
    }

    /// Games finished.
    fn games(&self) -> Result<u64, String> {
        self.count("SELECT count(*) FROM games")
    }

    /// The round the next one dealt is to be: after every round a game was
    /// finished in.
    fn next_round(&self) -> Result<u64, String> {
        self.count("SELECT coalesce(max(round), 0) + 1 FROM games")
    }

    /// The rounds version `version` has finished a game of (a game played
    /// alone: the deals it has played).
    fn rounds_of(&self, version: i64) -> Result<Vec<u64>, String> {
        self.with(|c| {
            let rows = self.query(
                c,
                "SELECT DISTINCT g.round FROM games g JOIN seats s ON s.game = g.id \
                 WHERE s.version = $1 ORDER BY g.round",
                &[&version],
            )?;
            rows.iter().map(|r| get::<i64>(r, 0).map(to_u64)).collect()
        })
    }

    /// The last `limit` games (of `entrant`'s versions, if given), newest
    /// first: each one's number, when it finished, and its seats.
    fn recent_games(
        &self,
        entrant: Option<&str>,
        limit: u64,
    ) -> Result<Vec<serde_json::Value>, String> {
        self.with(|c| {
            let rows = self.query(
                c,
                "SELECT g.id, g.finished, g.record FROM games g WHERE $1::TEXT IS NULL OR g.id IN \
                 (SELECT s.game FROM seats s JOIN versions v ON v.id = s.version \
                 JOIN entrants e ON e.id = v.entrant WHERE e.name = $1) \
                 ORDER BY g.id DESC LIMIT $2",
                &[&entrant.map(escape), &to_i64(limit)],
            )?;
            rows.iter()
                .map(|r| {
                    Ok(super::game_summary(
                        get(r, 0)?,
                        text(r, 1)?,
                        &get::<String>(r, 2)?,
                    ))
                })
                .collect()
        })
    }

    /// Game `id`'s record, as JSON.
    fn game(&self, id: u64) -> Result<Option<serde_json::Value>, String> {
        let text: Option<String> = self.with(|c| {
            let row =
                self.query_opt(c, "SELECT record FROM games WHERE id = $1", &[&to_i64(id)])?;
            row.map(|r| get(&r, 0)).transpose()
        })?;
        text.map(|t| serde_json::from_str(&t).map_err(|e| format!("{}: game {id}: {e}", self.name)))
            .transpose()
    }

    /// The games numbered above `after`, by number, at most `limit`, each
    /// with the table it was played at.
    fn games_after(
        &self,
        after: u64,
        limit: u64,
    ) -> Result<Vec<(Option<i64>, GameRecord)>, String> {
        let texts: Vec<(i64, Option<i64>, String)> = self.with(|c| {
            let rows = self.query(
                c,
                "SELECT id, table_id, record FROM games WHERE id > $1 ORDER BY id LIMIT $2",
                &[&to_i64(after), &to_i64(limit)],
            )?;
            rows.iter()
                .map(|r| Ok((get(r, 0)?, get(r, 1)?, get(r, 2)?)))
                .collect()
        })?;
        texts
            .into_iter()
            .map(|(id, table, text)| {
                serde_json::from_str(&text)
                    .map(|record| (table, record))
                    .map_err(|e| format!("{}: game {id}: {e}", self.name))
            })
            .collect()
    }

    /// Deals a table: queued, for any worker to claim. Its id.
    fn deal_table(&mut self, table: &NewTable) -> Result<i64, String> {
        let versions = serde_json::to_string(table.versions).unwrap_or_else(|_| "[]".into());
        let rotations = serde_json::to_string(table.rotations).unwrap_or_else(|_| "[]".into());
        // Its id is drawn first: a retry deals the same table, not another.
        let id: i64 = self.with(|c| {
            let row = self.query_opt(c, "SELECT nextval('tables_id_seq')", &[])?;
            row.map_or(Err(Fail::Other("no id".into())), |r| get(&r, 0))
        })?;
        self.change(
            "INSERT INTO tables (id, round, versions, rotations) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (id) DO NOTHING",
            &[&id, &to_i64(table.round), &versions, &rotations],
        )?;
        Ok(id)
    }

    /// Claims the first table queued (or whose lease ran out) whose
    /// versions `playable` says this worker can play, for `lease`; a
    /// table another worker is claiming is skipped, not waited for.
    fn claim_table(
        &mut self,
        worker: &str,
        lease: Duration,
        playable: &dyn Fn(&[i64]) -> bool,
    ) -> Result<Option<TableRow>, String> {
        let lease = millis(lease);
        self.with(|c| {
            self.transaction(c, "BEGIN", || {
                let candidates = self.query(
                    c,
                    &format!(
                        "SELECT id, round, versions, rotations, claim FROM tables \
                         WHERE state = 'queued' OR (state = 'claimed' AND lease_until < {NOW_MS}) \
                         ORDER BY id LIMIT 64 FOR UPDATE SKIP LOCKED"
                    ),
                    &[],
                )?;
                for row in &candidates {
                    let mut table = self.table_row(row)?;
                    if !playable(&table.versions) {
                        continue;
                    }
                    let row = self.query_opt(
                        c,
                        &format!(
                            "UPDATE tables SET state = 'claimed', claim = claim + 1, worker = $2, \
                             lease_until = {NOW_MS} + $3 WHERE id = $1 RETURNING claim"
                        ),
                        &[&table.id, &escape(worker), &lease],
                    )?;
                    table.claim =
                        row.map_or(Err(Fail::Other("no claim".into())), |r| get(&r, 0))?;
                    table.played = self
                        .played(c, &[table.id])?
                        .remove(&table.id)
                        .unwrap_or_default();
                    return Ok(Some(table));
                }
                Ok(None)
            })
        })
    }

    /// Extends the lease of each of `claims` still held; the claims lost
    /// (the lease ran out and another worker claimed the table, or it was
    /// dropped). The worker was seen now.
    fn renew_claims(
        &self,
        worker: &str,
        claims: &[Claim],
        lease: Duration,
    ) -> Result<Vec<Claim>, String> {
        let ids: Vec<i64> = claims.iter().map(|c| c.table).collect();
        let numbers: Vec<i64> = claims.iter().map(|c| c.claim).collect();
        let held: Vec<Claim> = self.with(|c| {
            let rows = self.query(
                c,
                &format!(
                    "UPDATE tables t SET lease_until = {NOW_MS} + $3 \
                     FROM unnest($1::BIGINT[], $2::BIGINT[]) AS held(id, claim) \
                     WHERE t.id = held.id AND t.claim = held.claim AND t.state = 'claimed' \
                     RETURNING t.id, t.claim"
                ),
                &[&ids, &numbers, &millis(lease)],
            )?;
            self.execute(
                c,
                &format!("UPDATE workers SET seen = {NOW_MS} WHERE name = $1"),
                &[&escape(worker)],
            )?;
            rows.iter()
                .map(|r| {
                    Ok(Claim {
                        table: get(r, 0)?,
                        claim: get(r, 1)?,
                    })
                })
                .collect()
        })?;
        Ok(claims
            .iter()
            .filter(|c| !held.contains(c))
            .copied()
            .collect())
    }

    /// Puts the table of `claim` back in the queue now (its worker is
    /// stopping), if the claim is still held.
    fn release_table(&self, claim: Claim) -> Result<(), String> {
        self.change(
            "UPDATE tables SET state = 'queued', worker = NULL, lease_until = NULL \
             WHERE id = $1 AND claim = $2 AND state = 'claimed'",
            &[&claim.table, &claim.claim],
        )?;
        Ok(())
    }

    /// Ends the table of `claim` (all its games played, or `outcome` says
    /// why not), if the claim is still held.
    fn finish_table(&self, claim: Claim, outcome: Option<&str>) -> Result<(), String> {
        self.change(
            "UPDATE tables SET state = 'done', outcome = $3, lease_until = NULL \
             WHERE id = $1 AND claim = $2 AND state = 'claimed'",
            &[&claim.table, &claim.claim, &outcome.map(escape)],
        )?;
        Ok(())
    }

    /// Every table not done, by id, with its claim and the rotations
    /// played.
    fn open_tables(&self) -> Result<Vec<TableRow>, String> {
        self.with(|c| {
            self.transaction(c, "BEGIN ISOLATION LEVEL REPEATABLE READ", || {
                let rows = self.query(
                    c,
                    "SELECT id, round, versions, rotations, claim FROM tables \
                     WHERE state <> 'done' ORDER BY id",
                    &[],
                )?;
                let mut tables = rows
                    .iter()
                    .map(|r| self.table_row(r))
                    .collect::<Attempt<Vec<_>>>()?;
                let ids: Vec<i64> = tables.iter().map(|t| t.id).collect();
                let mut played = self.played(c, &ids)?;
                for table in &mut tables {
                    table.played = played.remove(&table.id).unwrap_or_default();
                }
                Ok(tables)
            })
        })
    }

    /// The state of each of tables `ids` there is, in the order asked.
    fn table_states(&self, ids: &[i64]) -> Result<Vec<(i64, TableState)>, String> {
        self.with(|c| {
            let rows = self.query(
                c,
                "SELECT t.id, t.state, t.outcome FROM unnest($1::BIGINT[]) WITH ORDINALITY \
                 AS asked(id, n) JOIN tables t ON t.id = asked.id ORDER BY asked.n",
                &[&ids],
            )?;
            rows.iter()
                .map(|r| {
                    let id: i64 = get(r, 0)?;
                    let state = match get::<String>(r, 1)?.as_str() {
                        "queued" => TableState::Queued,
                        "claimed" => TableState::Claimed,
                        "done" => TableState::Done {
                            outcome: maybe_text(r, 2)?,
                        },
                        other => {
                            return Err(Fail::Other(format!(
                                "{}: table {id}: state {other:?}",
                                self.name
                            )));
                        }
                    };
                    Ok((id, state))
                })
                .collect()
        })
    }

    /// Ends those of tables `ids` still queued (no worker has them): they
    /// are done, dropped. Which, in the order asked.
    fn drop_queued_tables(&self, ids: &[i64]) -> Result<Vec<i64>, String> {
        let dropped: Vec<i64> = self.with(|c| {
            let rows = self.query(
                c,
                "UPDATE tables SET state = 'done', outcome = '\"dropped\"' \
                 WHERE id = ANY($1) AND state = 'queued' RETURNING id",
                &[&ids],
            )?;
            rows.iter().map(|r| get(r, 0)).collect()
        })?;
        Ok(ids
            .iter()
            .copied()
            .filter(|id| dropped.contains(id))
            .collect())
    }

    /// Worker `name`, with `jobs` jobs, is there now.
    fn worker_seen(&self, name: &str, jobs: usize) -> Result<(), String> {
        self.change(
            &format!(
                "INSERT INTO workers (name, jobs, seen) VALUES ($1, $2, {NOW_MS}) \
                 ON CONFLICT (name) DO UPDATE SET jobs = excluded.jobs, seen = excluded.seen"
            ),
            &[&escape(name), &i64::try_from(jobs).unwrap_or(i64::MAX)],
        )?;
        Ok(())
    }

    /// The workers seen within `within`, by name, and their jobs.
    fn workers(&self, within: Duration) -> Result<Vec<(String, usize)>, String> {
        self.with(|c| {
            let rows = self.query(
                c,
                &format!(
                    "SELECT name, jobs FROM workers WHERE seen >= {NOW_MS} - $1 ORDER BY name"
                ),
                &[&millis(within)],
            )?;
            rows.iter()
                .map(|r| {
                    let jobs: i64 = get(r, 1)?;
                    Ok((text(r, 0)?, usize::try_from(jobs).unwrap_or(0)))
                })
                .collect()
        })
    }

    /// Worker `name` has stopped: its row and its declines go.
    fn worker_gone(&self, name: &str) -> Result<(), String> {
        let name = escape(name);
        self.with(|c| {
            self.transaction(c, "BEGIN", || {
                self.execute(c, "DELETE FROM workers WHERE name = $1", &[&name])?;
                self.execute(c, "DELETE FROM declines WHERE worker = $1", &[&name])
            })
        })?;
        Ok(())
    }

    /// Worker `worker` cannot play version `version`, for `why`.
    fn decline_version(&self, worker: &str, version: i64, why: &str) -> Result<(), String> {
        self.change(
            "INSERT INTO declines (worker, version, why) VALUES ($1, $2, $3) \
             ON CONFLICT (worker, version) DO UPDATE SET why = excluded.why",
            &[&escape(worker), &version, &escape(why)],
        )?;
        Ok(())
    }

    /// Worker `worker` voided a game for a failure of its own. (Unlike
    /// the other writes, one retried after a commit whose answer was
    /// lost counts twice: a count for people, not a game.)
    fn void_game(&self, worker: &str, why: &str) -> Result<(), String> {
        self.change(
            &format!(
                "INSERT INTO workers (name, jobs, seen, void_games, last_void) \
                 VALUES ($1, 0, {NOW_MS}, 1, $2) ON CONFLICT (name) DO UPDATE SET \
                 void_games = workers.void_games + 1, last_void = excluded.last_void"
            ),
            &[&escape(worker), &escape(why)],
        )?;
        Ok(())
    }

    /// The workers seen within `within`, by name, each with what it said.
    fn worker_notes(&self, within: Duration) -> Result<Vec<WorkerNote>, String> {
        self.with(|c| {
            self.transaction(c, "BEGIN ISOLATION LEVEL REPEATABLE READ", || {
                let rows = self.query(
                    c,
                    &format!(
                        "SELECT name, jobs, void_games, last_void FROM workers \
                         WHERE seen >= {NOW_MS} - $1 ORDER BY name"
                    ),
                    &[&millis(within)],
                )?;
                let declines = self.query(
                    c,
                    "SELECT worker, version, why FROM declines ORDER BY worker, version",
                    &[],
                )?;
                rows.iter()
                    .map(|r| {
                        let name: String = get(r, 0)?;
                        let declined = declines
                            .iter()
                            .filter(|d| d.try_get::<_, &str>(0).is_ok_and(|w| w == name))
                            .map(|d| Ok((get(d, 1)?, text(d, 2)?)))
                            .collect::<Attempt<_>>()?;
                        Ok(WorkerNote {
                            name: unescape(name),
                            jobs: usize::try_from(get::<i64>(r, 1)?).unwrap_or(0),
                            void_games: to_u64(get(r, 2)?),
                            last_void: maybe_text(r, 3)?,
                            declined,
                        })
                    })
                    .collect()
            })
        })
    }

    /// Every table `worker` holds goes back to the queue.
    fn release_claims_of(&self, worker: &str) -> Result<(), String> {
        self.change(
            "UPDATE tables SET state = 'queued', worker = NULL, lease_until = NULL \
             WHERE worker = $1 AND state = 'claimed'",
            &[&escape(worker)],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_gives_what_it_says_and_a_bad_one_is_named_without_its_password() {
        let (parsed, _) = config("postgres://league:secret@db.example:5433/class").unwrap();
        assert_eq!(parsed.get_user(), Some("league"));
        assert_eq!(parsed.get_password(), Some(&b"secret"[..]));
        assert_eq!(parsed.get_dbname(), Some("class"));
        assert_eq!(parsed.get_ports(), [5433]);
        let err = config("postgres://league:secret@db.example:port/class")
            .err()
            .unwrap();
        assert!(!err.contains("secret"), "{err}");
        assert!(err.contains("league:***@"), "{err}");
    }

    #[test]
    fn nobody_there_is_said_at_once_naming_the_url_without_its_password() {
        // A port just let go: nobody listens on it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let url = format!("postgres://league:secret@127.0.0.1:{port}/class");
        let started = Instant::now();
        let err = Postgres::open(&url, true).err().unwrap();
        assert!(started.elapsed() < Duration::from_secs(5), "{err}");
        assert!(!err.contains("secret"), "{err}");
        assert!(
            err.starts_with(&format!("postgres://league:***@127.0.0.1:{port}/class: ")),
            "{err}"
        );
    }
}
