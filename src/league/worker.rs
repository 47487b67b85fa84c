//! `referee league work --db URL`: a worker of a league that runs
//! elsewhere. It reads what it needs from the league's database (the
//! league's file as the league read it, the bots' limits, how to run each
//! version), claims the league's tables there, plays them and commits
//! their games, until it is stopped or the league has its `--games`.
//! See `docs/cluster.md`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::db::{Db, Location, lock};
use super::work::{self, Player, Seats, Tables};
use super::{Failed, usage};
use crate::bot::BotLimits;
use crate::exit::Status;
use crate::tournament::units::Entrant;

/// How to run a worker.
#[derive(Clone, Debug)]
pub struct WorkConfig {
    pub db: Location,
    /// Where this machine sees the league's versions' folder, if not at
    /// the league's own path.
    pub versions: Option<PathBuf>,
    pub jobs: Option<usize>,
    pub pin: bool,
    pub name: Option<String>,
    pub lease: Duration,
    /// `--env`: set for this worker's bots on top of the league's (a
    /// machine's own JAVA_HOME, say).
    pub env: crate::bot::environment::Vars,
}

/// How often an idle worker asks whether the league is finished.
const FINISHED_EVERY: Duration = Duration::from_secs(2);

/// Plays a league's tables until stopped, or until the league has its
/// games.
pub async fn work(config: &WorkConfig) -> Status {
    match work_inner(config).await {
        Ok(status) => status,
        Err((status, message)) => {
            eprintln!("referee league work: {message}");
            status
        }
    }
}

/// What a worker reads from the league's database.
struct League {
    seed: u64,
    game: Arc<dyn crate::game::Game>,
    limits: BotLimits,
    /// The league's versions' folder, as the league sees it.
    versions: PathBuf,
}

async fn work_inner(config: &WorkConfig) -> Result<Status, Failed> {
    let (db, league) = wait_for_league(&config.db).await?;
    let here = config
        .versions
        .clone()
        .unwrap_or_else(|| league.versions.clone());
    if !here.is_dir() {
        return Err(usage(format!(
            "the league's versions' folder is not at {} on this machine: a worker must see \
             it, on a shared file system, at the same path (or say where with --versions DIR)",
            here.display()
        )));
    }
    if league.limits.sandbox {
        crate::bot::spawn::check_sandbox().map_err(|e| usage(e.to_string()))?;
    }
    let name = config.name.clone().unwrap_or_else(default_name);
    let jobs = config.jobs.unwrap_or_else(crate::parallel::cpus).max(1);
    db.worker_seen(&name, jobs).map_err(|e| (Status::Io, e))?;
    let db = Arc::new(Mutex::new(db));
    let seats = Arc::new(StoredSeats {
        env: config.env.clone(),
        ..StoredSeats::new(Arc::clone(&db), league.versions.clone(), here)
    });
    let mut tables = Tables::new(
        name.clone(),
        Arc::clone(&db),
        seats,
        Arc::clone(&league.game),
        league.limits,
        league.seed,
        config.lease,
    );
    tables.registered_jobs = Some(jobs);
    tables.say_games = true;
    let finished = watch_finished(&mut tables, Arc::clone(&db));
    let tables = Arc::new(tables);
    let releasing = Arc::clone(&tables);
    crate::interrupt::set_tidy(move || {
        releasing.release_all();
        if let Ok(db) = releasing.db.try_lock() {
            let _ = db.worker_gone(&releasing.name);
        }
    });
    eprintln!(
        "league work: {} plays {} for the league in {} ({jobs} job{})",
        crate::text::terminal(&name),
        league.game.name(),
        config.db.describe(),
        if jobs == 1 { "" } else { "s" }
    );
    let status = work::play(tables, jobs, config.pin).await;
    let _ = lock(&db).worker_gone(&name);
    if finished.load(Ordering::SeqCst) {
        eprintln!("league work: the league has its games; done");
    }
    Ok(status)
}

/// How often a worker started before its league looks for it again.
const LEAGUE_EVERY: Duration = Duration::from_secs(1);

/// The league's database and what it says of the league, once the league
/// has started in it: a worker may start first (a job array submitted
/// with the league), and waits, saying so once.
async fn wait_for_league(at: &Location) -> Result<(Db, League), Failed> {
    let (mut waiting, mut unreached) = (false, false);
    loop {
        match Db::join(at) {
            Ok(Some(db)) => {
                if let Some(league) = read_league(&db, at)? {
                    return Ok((db, league));
                }
            }
            Ok(None) => {}
            // A worker may be submitted long before its server: it waits,
            // as it waits for its league.
            Err(super::db::JoinError::NotYet(why)) => {
                if !unreached {
                    eprintln!(
                        "league work: cannot reach {} yet ({why}); trying again until it answers",
                        at.describe()
                    );
                    unreached = true;
                }
                tokio::time::sleep(LEAGUE_EVERY).await;
                continue;
            }
            Err(super::db::JoinError::Fails(message)) => return Err(usage(message)),
        }
        if !waiting {
            eprintln!(
                "league work: waiting for a league to start in {}",
                at.describe()
            );
            waiting = true;
        }
        tokio::time::sleep(LEAGUE_EVERY).await;
    }
}

/// The league as its database holds it (`None` until its league has said
/// all a worker needs), or why it cannot be played here.
fn read_league(db: &Db, at: &Location) -> Result<Option<League>, Failed> {
    let Some(meta) = db.meta().map_err(usage)? else {
        return Ok(None);
    };
    let settings =
        ["league_text", "base", "limits", "versions"].map(|key| db.setting(key).map_err(usage));
    let [text, base, limits, versions] = settings;
    let (Some(text), Some(base), Some(limits), Some(versions)) = (text?, base?, limits?, versions?)
    else {
        return Ok(None);
    };
    let base = PathBuf::from(base);
    let limits: BotLimits = serde_json::from_str(&limits)
        .map_err(|e| usage(format!("{}: its bots' limits: {e}", at.describe())))?;
    let spec = crate::tournament::spec::league_spec(&text)
        .map_err(|e| usage(format!("{}: the league's file: {e}", at.describe())))?;
    let game = crate::game::load(
        &spec.game,
        &spec.limits,
        spec.options.as_ref(),
        2,
        &base,
        true,
    )
    .map_err(|e| usage(format!("the league's game, from {}: {e}", base.display())))?;
    Ok(Some(League {
        seed: meta.seed,
        game,
        limits,
        versions: PathBuf::from(versions),
    }))
}

/// `HOST:PID`, or with Slurm's job and task ids, to tell workers apart in
/// the database and in the league's messages.
fn default_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".into());
    let slurm = |key: &str| std::env::var(key).ok().filter(|v| !v.is_empty());
    match (slurm("SLURM_ARRAY_JOB_ID"), slurm("SLURM_ARRAY_TASK_ID")) {
        (Some(job), Some(task)) => format!("{host}:slurm-{job}_{task}"),
        _ => match slurm("SLURM_JOB_ID") {
            Some(job) => format!("{host}:slurm-{job}"),
            None => format!("{host}:{}", std::process::id()),
        },
    }
}

/// An idle worker asks now and then whether the league has its games: it
/// then stops. The flag says it did.
fn watch_finished(tables: &mut Tables, db: Arc<Mutex<Db>>) -> Arc<AtomicBool> {
    let finished = Arc::new(AtomicBool::new(false));
    let (flag, stopping) = (Arc::clone(&finished), Arc::clone(&finished));
    let asked = Mutex::new(Instant::now());
    tables.idle = Box::new(move || {
        std::thread::sleep(work::IDLE_POLL);
        let mut asked = asked.lock().unwrap_or_else(|e| e.into_inner());
        if asked.elapsed() >= FINISHED_EVERY {
            *asked = Instant::now();
            let done = lock(&db).setting("finished").ok().flatten();
            if done.as_deref() == Some("1") {
                flag.store(true, Ordering::SeqCst);
            }
        }
        flag.load(Ordering::SeqCst) || crate::interrupt::ending()
    });
    tables.stopping = Box::new(move || stopping.load(Ordering::SeqCst));
    finished
}

/// A worker's seats: each version as the league stored it, its copy
/// looked for under this machine's versions' folder.
struct StoredSeats {
    db: Arc<Mutex<Db>>,
    from: PathBuf,
    to: PathBuf,
    /// Each version seen, and its entrant if this worker can play it.
    known: Mutex<HashMap<i64, Option<Entrant>>>,
    /// A version not yet known was asked for: read them again.
    stale: AtomicBool,
    /// Versions whose copy is missing, said once.
    said: Mutex<HashSet<i64>>,
    /// Set for the bots on top of the league's environment.
    env: crate::bot::environment::Vars,
}

impl StoredSeats {
    fn new(db: Arc<Mutex<Db>>, from: PathBuf, to: PathBuf) -> StoredSeats {
        StoredSeats {
            db,
            from,
            to,
            known: Mutex::default(),
            stale: AtomicBool::new(true),
            said: Mutex::default(),
            env: Vec::new(),
        }
    }

    /// Version `row`'s entrant here, if it built and its copy is here.
    fn playable(&self, row: &super::db::VersionRow) -> Option<Entrant> {
        if !row.build_ok {
            return None;
        }
        let player: Player = serde_json::from_str(row.player.as_deref()?).ok()?;
        let mut entrant = player.entrant(&self.from, &self.to);
        let program = entrant.program.as_mut().ok()?;
        program.env = program.env.with(&self.env);
        let dir = program.dir.clone();
        if let Some(dir) = dir.filter(|d| !d.is_dir()) {
            self.say_missing(row.id, &player.name, &dir);
            return None;
        }
        Some(entrant)
    }

    fn say_missing(&self, id: i64, name: &str, dir: &Path) {
        let mut said = self.said.lock().unwrap_or_else(|e| e.into_inner());
        if said.insert(id) {
            eprintln!(
                "league work: {}'s copy is not at {} on this machine: this worker plays \
                 none of its tables (the versions' folder must be shared, at the same path, \
                 or given by --versions)",
                crate::text::terminal(name),
                dir.display()
            );
        }
    }
}

impl Seats for StoredSeats {
    fn refresh(&self) {
        if !self.stale.swap(false, Ordering::SeqCst) {
            return;
        }
        let Ok(rows) = lock(&self.db).versions_without_logs() else {
            self.stale.store(true, Ordering::SeqCst);
            return;
        };
        let known: HashMap<i64, Option<Entrant>> =
            rows.iter().map(|r| (r.id, self.playable(r))).collect();
        *self.known.lock().unwrap_or_else(|e| e.into_inner()) = known;
    }

    fn entrants(&self, ids: &[i64]) -> Option<Vec<Entrant>> {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        let entrants: Option<Vec<Entrant>> = ids
            .iter()
            .map(|id| known.get(id).cloned().flatten())
            .collect();
        if ids.iter().any(|id| !known.contains_key(id)) {
            self.stale.store(true, Ordering::SeqCst);
        }
        entrants
    }
}
