//! `referee league run FILE.toml --db PATH`: a league that plays until it
//! is stopped while its entrants come and go, each new version of a
//! submission entering as it is built; and `referee league export`,
//! which writes a league's games as a tournament's output. See
//! `docs/league.md`.
//!
//! A league is built from a tournament's pieces: its file and entrants
//! (`tournament::spec`), builds (`bot::build`), one game at a time
//! (`tournament::units::play_unit`) on the job threads a tournament uses
//! (`parallel`), the same records and standings (`tournament::standings`).
//! What is its own: the database ([`db`]), the matchmaking
//! ([`matchmaking`]) and the entrants' versions ([`entrants`], [`roster`]).

mod containment;
mod copies;
pub mod db;
mod deal;
pub mod entrants;
mod export;
pub mod matchmaking;
mod notes;
mod page;
mod relocate;
mod roster;
mod serve;
pub mod work;
pub mod worker;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::bot::BotLimits;
use crate::bot::environment::Vars;
use crate::exit::Status;
use crate::game::{Game, GameRecord, Seating};
use crate::rng::SplitMix64;
use crate::tournament::standings::{self, Tally};
use crate::tournament::units::Entrant;
use db::Db;
use matchmaking::{Candidate, Policy, Recent};
use roster::Roster;

/// How to run a league.
#[derive(Clone, Debug)]
pub struct LeagueConfig {
    pub file: PathBuf,
    pub db: db::Location,
    /// Where the versions' copies are: `--versions`, else beside a
    /// SQLite database (`DB.versions`); required with PostgreSQL.
    pub versions: Option<PathBuf>,
    /// Stop once the database holds this many games.
    pub games: Option<u64>,
    pub jobs: Option<usize>,
    pub pin: bool,
    pub seed: Option<u64>,
    /// How often the entrants' folders are looked at again.
    pub scan_every: Duration,
    pub limits: BotLimits,
    pub env: Vars,
    /// Each game's commit waits for the disk (not with `--no-fsync`).
    pub durable: bool,
    /// Serve the live page there.
    pub serve: Option<std::net::SocketAddr>,
}

/// A version of an entrant, as the league plays it. Its place in
/// [`State::versions`] is its bot number: a process kept between games
/// is one version's.
struct Version {
    /// Its row in the database.
    id: i64,
    entrant: String,
    number: u32,
    /// Its program, named `entrant@vN` as the records name it.
    player: Entrant,
    /// Its entrant's current version, and its entrant is in the league.
    active: bool,
    /// A one-player game's deals it has played (the next is the first
    /// missing).
    deals: std::collections::BTreeSet<u64>,
    in_flight: u64,
    /// The last game it did not end `ok`.
    last_failure: Option<LastFailure>,
}

/// A game a version did not end `ok`: its number, status and message.
type LastFailure = (u64, String, String);

impl Version {
    fn name(entrant: &str, number: u32) -> String {
        format!("{entrant}@v{number}")
    }
}

/// A table the league dealt whose end it has not seen yet.
struct Dealt {
    /// Versions (their bot numbers), in the seat order of rotation 0.
    seats: Vec<usize>,
    /// Its games not yet seen committed.
    left: u64,
}

/// What the league's threads share.
struct State {
    versions: Vec<Version>,
    tally: Tally,
    policy: Policy,
    /// Who sat at the recent games, for the matchmaking's shares.
    recent: Recent,
    rng: SplitMix64,
    /// Seats at a table; `None` for a game played alone.
    seats: Option<usize>,
    next_round: u64,
    /// The tables dealt and not yet seen done, by id: their games count
    /// toward `--games` until they are seen (a void game, the referee's
    /// failure, is then taken off, and another dealt).
    tables: std::collections::BTreeMap<i64, Dealt>,
    /// Versions (their ids) no live worker can play on its machine (see
    /// [`notes::unplayable_ids`]), in a league that plays none itself.
    unplayable: std::collections::HashSet<i64>,
    /// Games in the database, and the last one followed (they are
    /// numbered 1, 2, ... as they are committed).
    committed: u64,
    /// Games in the database that count: all but the void ones.
    counted: u64,
    limit: Option<u64>,
    /// A build is under way on a machine without a spare CPU: no new game
    /// starts.
    holding: bool,
    /// What the league last said it waits for (said once).
    waiting: Option<String>,
    /// The referee's own failures in a row, of the games followed.
    referee_failures: crate::game::record::RefereeFailures,
    /// Why the league stops early, if it does.
    stop: Option<Failed>,
    done: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    /// The games in the database, for the live page's listeners.
    updates: tokio::sync::watch::Sender<u64>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub use export::{export, show};
pub use serve::address as serve_address;

/// Runs a league until it is stopped (or has `--games` games).
pub async fn run(config: &LeagueConfig) -> Status {
    crate::exit::said(
        "referee league",
        run_inner(config).await.map_err(Into::into),
    )
}

type Failed = (Status, String);

fn usage(message: String) -> Failed {
    (Status::Usage, message)
}

async fn run_inner(config: &LeagueConfig) -> Result<Status, Failed> {
    let (spec, text, settings) =
        crate::tournament::spec::load_league(&config.file).map_err(usage)?;
    let policy = settings.policy;
    let base = config
        .file
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let game = crate::game::load(
        &spec.game,
        &spec.limits,
        spec.options.as_ref(),
        2,
        &base,
        true,
    )
    .map_err(usage)?;
    let limits = crate::tournament::units::limits_over(config.limits, &spec.limits, game.startup());
    // Under --sandbox builds run in it too: bubblewrap must be there
    // before anything is built (or a database made).
    if limits.sandbox {
        crate::bot::spawn::check_sandbox().map_err(|e| usage(e.to_string()))?;
    }
    let versions = versions_dir(config).map_err(usage)?;
    let db = Db::open(&config.db, config.durable).map_err(usage)?;
    let meta = check_meta(&db, config, &spec, &*game)?;
    keep_for_workers(&db, config, &text, &base, &versions, limits).map_err(|e| (Status::Io, e))?;
    let versions = entrants::Versions::new(
        &spec,
        base.clone(),
        versions,
        (&config.file, private_files(&config.db)),
        &config.env,
        limits.sandbox,
    );
    let mut roster = Roster::new(spec, text, base.clone(), versions, config.scan_every);
    if limits.sandbox {
        roster.check_hidden().map_err(usage)?;
    }
    let state = State::new(&db, &*game, meta.seed, config.games, policy).map_err(usage)?;
    let shared = Arc::new(Shared {
        updates: tokio::sync::watch::Sender::new(state.committed),
        state: Mutex::new(state),
        changed: Condvar::new(),
    });
    let db = Arc::new(Mutex::new(db));
    roster
        .scan(&db, &shared)
        .await
        .map_err(|e| (Status::Io, e))?;
    announce(config, &*game, &shared);
    if let Some(addr) = config.serve {
        let at = serve::start(
            addr,
            Arc::clone(&shared),
            &config.db,
            base.clone(),
            settings.page_stderr,
        )
        .map_err(usage)?;
        eprintln!("league: live page at http://{at}/");
    }
    report_on_interrupt(&config.db);
    let jobs = jobs(config, &roster);
    let scanning = roster.keep_scanning(Arc::clone(&db), Arc::clone(&shared), jobs);
    let status = play(&game, &db, &shared, limits, meta.seed, jobs, config.pin).await;
    drop(scanning);
    if status == Status::Pass {
        print_standings(&config.db);
    }
    Ok(status)
}

/// Plays the league until it is done: deals its tables, follows their
/// games, and plays them with its own `jobs` (beside its workers, if any).
async fn play(
    game: &Arc<dyn Game>,
    db: &Arc<Mutex<Db>>,
    shared: &Arc<Shared>,
    limits: BotLimits,
    seed: u64,
    jobs: usize,
    pin: bool,
) -> Status {
    if let Err(e) = deal::adopt_open_tables(db, shared, OWN_JOBS) {
        eprintln!("referee league: {e}");
        return Status::Io;
    }
    let dealing = deal::keep_dealing(Arc::clone(db), Arc::clone(shared), jobs);
    let following = deal::keep_following(Arc::clone(db), Arc::clone(shared));
    let status = if jobs > 0 {
        let tables = own_tables(game, db, shared, limits, seed);
        work::play(tables, jobs, pin).await
    } else {
        while !shared.lock().done {
            tokio::time::sleep(deal::FOLLOW_EVERY).await;
        }
        Status::Pass
    };
    if status != Status::Pass {
        shared.stop((status, String::new()));
    }
    shared.lock().done = true;
    shared.changed.notify_all();
    let _ = dealing.join();
    let _ = following.join();
    match shared.lock().stop.take() {
        Some((status, message)) => {
            if !message.is_empty() {
                eprintln!("referee league: {message}");
            }
            status
        }
        None => Status::Pass,
    }
}

/// The league's own jobs, as a worker of the league: they stop when it is
/// done, and wake it at once after each commit.
fn own_tables(
    game: &Arc<dyn Game>,
    db: &Arc<Mutex<Db>>,
    shared: &Arc<Shared>,
    limits: BotLimits,
    seed: u64,
) -> Arc<work::Tables> {
    let mut tables = work::Tables::new(
        OWN_JOBS.into(),
        Arc::clone(db),
        Arc::new(deal::LeagueSeats(Arc::clone(shared))),
        Arc::clone(game),
        limits,
        seed,
        work::DEFAULT_LEASE,
    );
    let (idle, stopping, committed) = (Arc::clone(shared), Arc::clone(shared), Arc::clone(shared));
    tables.idle = Box::new(move || {
        let state = idle.lock();
        if state.done {
            return true;
        }
        idle.wait(state, work::IDLE_POLL).done
    });
    tables.stopping = Box::new(move || stopping.lock().done);
    tables.committed = Box::new(move || committed.changed.notify_all());
    let tables = Arc::new(tables);
    let releasing = Arc::clone(&tables);
    crate::interrupt::set_tidy(move || releasing.release_all());
    tables
}

/// The name the league's own jobs claim tables under: one league per
/// database, so a claim of that name at the start was its last run's.
const OWN_JOBS: &str = "league";

/// Keeps in the database what a worker needs to play the league's tables
/// on another machine (`league work`): the league's file as this run read
/// it, its folder (a judge's path is relative to it), the bots' limits
/// and where the versions' copies are; and that the league plays on.
fn keep_for_workers(
    db: &Db,
    config: &LeagueConfig,
    text: &str,
    base: &Path,
    versions: &Path,
    limits: BotLimits,
) -> Result<(), String> {
    let limits = serde_json::to_string(&limits).map_err(|e| e.to_string())?;
    let base = std::path::absolute(base).unwrap_or_else(|_| base.to_owned());
    let settings = [
        ("league_file", config.file.to_string_lossy().into_owned()),
        ("league_text", text.to_owned()),
        ("base", base.to_string_lossy().into_owned()),
        ("versions", versions.to_string_lossy().into_owned()),
        ("limits", limits),
        ("finished", "0".to_owned()),
    ];
    for (key, value) in settings {
        db.set_setting(key, &value)?;
    }
    Ok(())
}

/// What a sandbox hides of the league's database: its own files beside it
/// (SQLite's write-ahead log, its index, a rollback journal), files
/// hidden themselves, never the folder they are in (it may hold what bots
/// run from); and the password files PostgreSQL's clients read
/// (`PGPASSFILE`, `~/.pgpass`), which may hold its password.
pub(crate) fn private_files(db: &db::Location) -> Vec<PathBuf> {
    let mut files = db::pgpass::files();
    if let Some(db) = db.file() {
        files.extend(["", "-wal", "-shm", "-journal"].map(|suffix| {
            let mut path = db.as_os_str().to_owned();
            path.push(suffix);
            PathBuf::from(path)
        }));
    }
    files
}

/// Where the versions' copies are: `--versions`, else beside a SQLite
/// database. Absolute: a bot plays in its copy whatever `--db` was
/// relative to.
fn versions_dir(config: &LeagueConfig) -> Result<PathBuf, String> {
    let dir = match (&config.versions, &config.db) {
        (Some(dir), _) => dir.clone(),
        (None, db::Location::File(path)) => {
            let mut path = path.clone().into_os_string();
            path.push(".versions");
            PathBuf::from(path)
        }
        (None, url) => {
            return Err(format!(
                "--db {}: a league on PostgreSQL needs --versions DIR, the folder its \
                 versions' copies are kept in (on a file system its workers share)",
                url.describe()
            ));
        }
    };
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    // Made now, even before a version is copied into it: its workers look
    // for it as they start.
    std::fs::create_dir_all(&dir).map_err(|e| format!("--versions {}: {e}", dir.display()))?;
    Ok(dir)
}

/// The league's seed and kind, from the database of a league played
/// before (the same game, or the database is refused) or new.
fn check_meta(
    db: &Db,
    config: &LeagueConfig,
    spec: &crate::tournament::spec::Spec,
    game: &dyn Game,
) -> Result<db::Meta, Failed> {
    let solo = game.seating() == Seating::Solo;
    let game_ref = serde_json::to_string(&spec.game).unwrap_or_default();
    match db.meta().map_err(usage)? {
        Some(meta) if meta.game != game_ref || meta.solo != solo => Err(usage(format!(
            "{} is the database of a league of {}, not of {}",
            config.db.describe(),
            meta.game,
            game_ref
        ))),
        Some(meta) => Ok(meta),
        None => {
            let meta = db::Meta {
                game: game_ref,
                solo,
                seed: config
                    .seed
                    .or(spec.seed)
                    .unwrap_or_else(crate::rng::fresh_seed),
            };
            db.set_meta(&meta).map_err(usage)?;
            Ok(meta)
        }
    }
}

impl State {
    /// The state of a league with the games already in `db`, its
    /// matchmaking by `policy` (the file's `[league]` table).
    fn new(
        db: &Db,
        game: &dyn Game,
        seed: u64,
        limit: Option<u64>,
        policy: Policy,
    ) -> Result<State, String> {
        let solo = game.seating() == Seating::Solo;
        let mut tally = Tally::new(solo, &[], None, Some(200));
        let mut versions = Vec::new();
        // The versions that played before entered before the first game;
        // the recent games are counted again from the records.
        let mut recent = Recent::new(policy.window);
        let mut numbers = std::collections::HashMap::new();
        // A version that did not build never played.
        for row in db.versions()?.into_iter().filter(|r| r.build_ok) {
            let name = Version::name(&row.entrant, row.version);
            tally.add_entrant(&name);
            recent.entered_before(versions.len());
            numbers.insert(name.clone(), versions.len());
            let deals = if solo {
                db.rounds_of(row.id)?.into_iter().collect()
            } else {
                Default::default()
            };
            versions.push(Version {
                id: row.id,
                entrant: row.entrant,
                number: row.version,
                player: Entrant {
                    name,
                    program: Err(crate::outcome::Disqualified::build_failed(
                        "not built in this run",
                    )),
                    options: serde_json::Value::Object(Default::default()),
                    time_control: None,
                },
                active: false,
                deals,
                in_flight: 0,
                last_failure: None,
            });
        }
        let mut void = 0;
        db.each_game(|record| {
            void += u64::from(record.is_void());
            let seats: Vec<usize> = record
                .results
                .iter()
                .filter_map(|r| numbers.get(r.entrant.as_deref()?).copied())
                .collect();
            recent.deal(&seats);
            note_failures(&mut versions, &record);
            tally.add(record);
        })?;
        let committed = db.games()?;
        let counted = committed.saturating_sub(void);
        Ok(State {
            versions,
            tally,
            policy,
            recent,
            rng: SplitMix64::for_game(seed, committed),
            seats: match game.seating() {
                Seating::Solo => None,
                Seating::Table { seats } => Some(seats),
            },
            next_round: db.next_round()?,
            tables: Default::default(),
            unplayable: Default::default(),
            committed,
            counted,
            limit,
            holding: false,
            waiting: None,
            referee_failures: Default::default(),
            stop: None,
            done: false,
        })
    }

    /// The next table to deal, if one can start now, of at most `room`
    /// games: its versions (bot numbers) in the seat order of rotation 0,
    /// its round (a game played alone: its deal) and rotations; `Err`
    /// with what it waits for.
    fn next_table(&mut self, room: u64) -> Result<(Vec<usize>, u64, Vec<u64>), String> {
        if self.holding {
            return Err("a build, on a machine without a spare CPU".into());
        }
        // A version enters the recent games' count as the matchmaking
        // first sees it.
        for (v, version) in self.versions.iter().enumerate() {
            if version.active {
                self.recent.enter(v);
            }
        }
        let candidates = self.candidates();
        match self.seats {
            None => {
                let v = matchmaking::solo(&candidates, &self.policy, &mut self.rng)
                    .ok_or("an entrant")?;
                let deals = &self.versions[v].deals;
                let deal = (1..).find(|d| !deals.contains(d)).unwrap_or(1);
                self.versions[v].deals.insert(deal);
                Ok((vec![v], deal, vec![0]))
            }
            Some(k) => {
                let table = matchmaking::table(&candidates, k, &self.policy, &mut self.rng)
                    .ok_or_else(|| format!("{k} entrants to play"))?;
                let round = self.next_round;
                self.next_round += 1;
                // A round: one game per seat on one setup, the seats
                // rotating, as in a tournament.
                let rotations = (0..k as u64).take(room as usize).collect();
                Ok((table, round, rotations))
            }
        }
    }

    /// The version whose row in the database is `id`.
    fn version_of(&self, id: i64) -> Option<usize> {
        self.versions.iter().rposition(|v| v.id == id)
    }

    /// Games dealt and not yet seen.
    fn outstanding(&self) -> u64 {
        self.tables.values().map(|t| t.left).sum()
    }

    /// The active versions, as the matchmaking sees them.
    fn candidates(&self) -> Vec<Candidate> {
        self.versions
            .iter()
            .enumerate()
            .filter(|(_, v)| v.active && !self.unplayable.contains(&v.id))
            .map(|(id, v)| {
                let standings::Standing {
                    games,
                    wins,
                    rating,
                } = self.tally.standing(&v.player.name).unwrap_or_default();
                let (rating, uncertainty) = match rating {
                    Some(r) => r,
                    None => {
                        let (low, high) = crate::stats::wilson95(wins as u64, games);
                        (
                            if games == 0 { 0.5 } else { wins / games as f64 },
                            (high - low) / 2.0,
                        )
                    }
                };
                let (recent, span) = self.recent.of(id);
                Candidate {
                    id,
                    rating,
                    uncertainty,
                    games,
                    in_flight: v.in_flight,
                    recent,
                    span,
                }
            })
            .collect()
    }
}

/// Keeps, for each version in `record` that did not end it `ok`, the
/// game as its last failure (for the live page).
fn note_failures(versions: &mut [Version], record: &GameRecord) {
    for result in &record.results {
        let status = result.status();
        // The referee's own failure (`internal`) is not the version's.
        if matches!(
            status,
            crate::outcome::Status::Ok | crate::outcome::Status::Internal
        ) {
            continue;
        }
        let name = result.entrant.as_deref().unwrap_or_default();
        if let Some(v) = versions.iter_mut().rev().find(|v| v.player.name == name) {
            v.last_failure = Some((
                record.index,
                status.name().to_owned(),
                result.error.clone().unwrap_or_default(),
            ));
        }
    }
}

/// A finished game in a line: each seat's version and how it did.
pub(crate) fn line(record: &GameRecord) -> String {
    record
        .results
        .iter()
        .map(|r| {
            let name = crate::text::terminal(r.entrant.as_deref().unwrap_or("?"));
            let how = match (r.status(), r.won, r.points()) {
                (crate::outcome::Status::Ok, Some(won), _) => {
                    if won { "won" } else { "lost" }.to_owned()
                }
                (crate::outcome::Status::Ok, None, Some(points)) => format!("{points}"),
                (status, _, _) => status.name().to_owned(),
            };
            format!("{name} {how}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Games at once here: `--jobs` (0: none, workers play them all), the
/// file's `jobs`, else the CPUs.
fn jobs(config: &LeagueConfig, roster: &Roster) -> usize {
    config
        .jobs
        .unwrap_or_else(|| roster.jobs().unwrap_or_else(crate::parallel::cpus).max(1))
}

fn announce(config: &LeagueConfig, game: &dyn Game, shared: &Shared) {
    let state = shared.lock();
    let playing: Vec<&str> = state
        .versions
        .iter()
        .filter(|v| v.active)
        .map(|v| v.player.name.as_str())
        .collect();
    eprintln!(
        "league: {} in {} ({} game{} so far); playing: {}",
        game.name(),
        config.db.describe(),
        state.committed,
        if state.committed == 1 { "" } else { "s" },
        if playing.is_empty() {
            "nobody yet".to_owned()
        } else {
            crate::text::terminal(&playing.join(", ")).into_owned()
        }
    );
}

/// The league's closing lines: the standings `league show` prints, from
/// the database (the function that prints them), so that the two give
/// the same ranks and Elo; or why they cannot be read.
fn closing_standings(db: &db::Location) -> String {
    export::standings_text(db, false).unwrap_or_else(|(_, why)| {
        format!(
            "the standings cannot be read: {why}; `referee league show {}` prints them",
            db.describe()
        )
    })
}

fn print_standings(db: &db::Location) {
    println!("\n{}", closing_standings(db));
}

fn report_on_interrupt(db: &db::Location) {
    let db = db.clone();
    crate::interrupt::set_report(move || {
        format!("\nleague interrupted: {}\n", closing_standings(&db))
    });
}
