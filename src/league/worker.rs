//! `referee league work [FILE] --db URL`: a worker of a league that runs
//! elsewhere. It reads from the league's database what to play (the
//! league's rules and seed, the bots' limits, each version as stored) and
//! from the league's file, as this machine sees it, the game and its
//! judge; it claims the league's tables, plays them and commits their
//! games, until it is stopped or the league has its `--games`. How its
//! bots are contained is its own to say ([`super::containment`]). See
//! `docs/cluster.md`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::containment::Containment;
use super::copies;
use super::db::{Db, Location, VersionRow, lock};
use super::work::{self, Player, Seats, Tables};
use super::{Failed, usage};
use crate::bot::BotLimits;
use crate::exit::Status;
use crate::tournament::units::Entrant;

/// How to run a worker.
#[derive(Clone, Debug)]
pub struct WorkConfig {
    /// The league's file as this machine sees it; `None`: where the
    /// league read it.
    pub file: Option<PathBuf>,
    pub db: Location,
    /// Where this machine sees the league's versions' folder, if not at
    /// the league's own path.
    pub versions: Option<PathBuf>,
    pub jobs: Option<usize>,
    pub pin: bool,
    pub name: Option<String>,
    pub lease: Duration,
    /// `--env`: set for this worker's bots on top of the league file's
    /// (a machine's own JAVA_HOME, say).
    pub env: crate::bot::environment::Vars,
    /// `--sandbox`: every bot under bubblewrap, whatever the database says.
    pub sandbox: bool,
}

/// How often an idle worker asks whether the league is finished.
const FINISHED_EVERY: Duration = Duration::from_secs(2);

/// Plays a league's tables until stopped, or until the league has its
/// games.
pub async fn work(config: &WorkConfig) -> Status {
    let ended = work_inner(config).await.map_err(Into::into);
    crate::exit::said("referee league work", ended)
}

/// What a worker reads from the league's database.
struct League {
    seed: u64,
    /// The league's file as the league read it, and where.
    text: String,
    file: PathBuf,
    limits: BotLimits,
    /// The league's versions' folder, as the league sees it.
    versions: PathBuf,
}

async fn work_inner(config: &WorkConfig) -> Result<Status, Failed> {
    if !config.sandbox {
        warn_unsandboxed(&config.db);
    }
    let (db, league) = wait_for_league(&config.db).await?;
    let here = versions_here(config, &league)?;
    if league.limits.sandbox && !config.sandbox {
        return Err(usage(format!(
            "the league in {} runs its bots under --sandbox: start this worker with --sandbox \
             too (a worker never runs a bot less contained than its league asks)",
            config.db.describe()
        )));
    }
    let file = config.file.clone().unwrap_or_else(|| league.file.clone());
    let spec = league_file(&file, &league.text, &config.db)?;
    let base = file
        .parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_owned);
    let game = load_game(&spec, &base)?;
    let containment = contain(config, &spec, &base, vec![here.clone(), base.clone(), file])?;
    let name = config.name.clone().unwrap_or_else(default_name);
    let jobs = config.jobs.unwrap_or_else(crate::parallel::cpus).max(1);
    db.worker_seen(&name, jobs).map_err(|e| (Status::Io, e))?;
    let db = Arc::new(Mutex::new(db));
    let seats = Arc::new(StoredSeats {
        containment,
        seats: match game.seating() {
            crate::game::Seating::Solo => 1,
            crate::game::Seating::Table { seats } => seats,
        },
        ..StoredSeats::new(Arc::clone(&db), league.versions.clone(), here, name.clone())
    });
    // The league's rules; this worker's containment.
    let limits = BotLimits {
        sandbox: config.sandbox,
        ..league.limits
    };
    let mut tables = Tables::new(
        name.clone(),
        Arc::clone(&db),
        seats,
        Arc::clone(&game),
        limits,
        league.seed,
        config.lease,
    );
    tables.registered_jobs = Some(jobs);
    tables.say_games = true;
    let finished = watch_finished(&mut tables, Arc::clone(&db));
    let tables = Arc::new(tables);
    release_on_interrupt(&tables);
    eprintln!(
        "league work: {} plays {} for the league in {} ({jobs} job{})",
        crate::text::terminal(&name),
        game.name(),
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

/// Where this machine sees the league's versions' folder: `--versions`,
/// else the league's own path; an error when it is not there.
fn versions_here(config: &WorkConfig, league: &League) -> Result<PathBuf, Failed> {
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
    Ok(here)
}

/// This worker's containment of its bots, which hides `hide` (the
/// versions' folder, the league's folder and file) and the database's
/// private files from them; under `--sandbox`, checked first.
fn contain(
    config: &WorkConfig,
    spec: &crate::tournament::spec::Spec,
    base: &Path,
    mut hide: Vec<PathBuf>,
) -> Result<Containment, Failed> {
    hide.extend(super::private_files(&config.db));
    if config.sandbox {
        crate::bot::spawn::check_sandbox().map_err(|e| usage(e.to_string()))?;
        crate::bot::spawn::check_hidden(&hide).map_err(|e| usage(e.to_string()))?;
    }
    Ok(Containment::new(spec, base, hide, config.env.clone()))
}

/// On an interrupt, the worker's claims are released and it says it is
/// gone.
fn release_on_interrupt(tables: &Arc<Tables>) {
    let releasing = Arc::clone(tables);
    crate::interrupt::set_tidy(move || {
        releasing.release_all();
        if let Ok(db) = releasing.db.try_lock() {
            let _ = db.worker_gone(&releasing.name);
        }
    });
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
                say_once(&mut unreached, || {
                    format!(
                        "cannot reach {} yet ({why}); trying again until it answers",
                        at.describe()
                    )
                });
                tokio::time::sleep(LEAGUE_EVERY).await;
                continue;
            }
            Err(super::db::JoinError::Fails(message)) => return Err(usage(message)),
        }
        say_once(&mut waiting, || {
            format!("waiting for a league to start in {}", at.describe())
        });
        tokio::time::sleep(LEAGUE_EVERY).await;
    }
}

/// Says `message` on standard error unless `said` already.
fn say_once(said: &mut bool, message: impl FnOnce() -> String) {
    if !*said {
        eprintln!("league work: {}", message());
        *said = true;
    }
}

/// The league as its database holds it (`None` until its league has said
/// all a worker needs), or why it cannot be played here.
fn read_league(db: &Db, at: &Location) -> Result<Option<League>, Failed> {
    let Some(meta) = db.meta().map_err(usage)? else {
        return Ok(None);
    };
    let settings = ["league_text", "league_file", "limits", "versions"]
        .map(|key| db.setting(key).map_err(usage));
    let [text, file, limits, versions] = settings;
    let (Some(text), Some(file), Some(limits), Some(versions)) = (text?, file?, limits?, versions?)
    else {
        return Ok(None);
    };
    let limits: BotLimits = serde_json::from_str(&limits)
        .map_err(|e| usage(format!("{}: its bots' limits: {e}", at.describe())))?;
    Ok(Some(League {
        seed: meta.seed,
        text,
        file: PathBuf::from(file),
        limits,
        versions: PathBuf::from(versions),
    }))
}

/// The league's file at `file` as this machine sees it, when it is the
/// one the league read (`text`, as its database at `at` keeps it): the
/// game and its judge come from the file the worker can see, never from
/// the database alone, which anyone who can write it could change.
fn league_file(
    file: &Path,
    text: &str,
    at: &Location,
) -> Result<crate::tournament::spec::Spec, Failed> {
    let here = std::fs::read(file).map_err(|e| {
        usage(format!(
            "cannot read the league's file {}: {e} (a worker must see the league's folder at \
             the path the league read it, or be given the file: referee league work FILE --db \
             ...)",
            file.display()
        ))
    })?;
    if here != text.as_bytes() {
        return Err(usage(format!(
            "the league's file {} is not the one the league in {} read ({}): the file changed \
             since the league started (start the league again to read it anew), or the \
             database was written by another hand; this worker plays neither",
            file.display(),
            at.describe(),
            first_difference(&here, text.as_bytes())
        )));
    }
    crate::tournament::spec::league_spec(text)
        .map_err(|e| usage(format!("{}: {e}", file.display())))
}

/// Where `here` and `stored` first differ, for a message: the line and
/// both texts of it.
fn first_difference(here: &[u8], stored: &[u8]) -> String {
    let (a, b): (Vec<&[u8]>, Vec<&[u8]>) = (
        here.split(|&c| c == b'\n').collect(),
        stored.split(|&c| c == b'\n').collect(),
    );
    let n = (0..a.len().max(b.len()))
        .find(|&i| a.get(i) != b.get(i))
        .unwrap_or(0);
    let line = |l: Option<&&[u8]>| match l {
        Some(l) => format!("{:?}", String::from_utf8_lossy(l)),
        None => "no such line".into(),
    };
    format!(
        "line {}: here {}, the league's {}",
        n + 1,
        crate::text::terminal(&line(a.get(n))),
        crate::text::terminal(&line(b.get(n)))
    )
}

/// The league's game, from its file's folder `base` on this machine.
fn load_game(
    spec: &crate::tournament::spec::Spec,
    base: &Path,
) -> Result<Arc<dyn crate::game::Game>, Failed> {
    crate::game::load(
        &spec.game,
        &spec.limits,
        spec.options.as_ref(),
        2,
        base,
        true,
    )
    // The league could load it: this machine lacks what it needs (a
    // judge's interpreter, its files), which is the worker's failure.
    .map_err(|e| {
        (
            Status::Internal,
            format!(
                "this machine cannot run the league's game, from {}: {e}",
                base.display()
            ),
        )
    })
}

/// A worker without `--sandbox` says, once, what its bots can read.
fn warn_unsandboxed(db: &Location) {
    let pid = std::process::id();
    let mut secrets = String::new();
    if std::env::var_os("PGPASSWORD").is_some_and(|p| !p.is_empty()) {
        secrets.push_str(
            "; PGPASSWORD is set in it: give the database's password in ~/.pgpass (or the \
             file PGPASSFILE names) instead",
        );
    }
    if let Location::Url(url) = db
        && db.describe() != *url
    {
        secrets.push_str("; --db's URL holds a password: give it in ~/.pgpass instead");
    }
    eprintln!(
        "league work: warning: bots run without --sandbox, as this worker's own user: each \
         can read this worker's environment (/proc/{pid}/environ) and command line \
         (/proc/{pid}/cmdline), and every file this user can, ~/.pgpass too{secrets}. Run \
         workers with --sandbox (docs/cluster.md)"
    );
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
/// looked for under this machine's versions' folder and checked (see
/// [`copies::check`]) before its first game here.
struct StoredSeats {
    db: Arc<Mutex<Db>>,
    from: PathBuf,
    to: PathBuf,
    /// This worker's name, under which it declines versions.
    worker: String,
    /// The versions at a table.
    seats: usize,
    /// Each version seen, and where this worker stands with it.
    known: Mutex<HashMap<i64, Seat>>,
    /// A version not yet known was asked for: read them again.
    stale: AtomicBool,
    /// Versions asked for and not yet checked.
    to_check: Mutex<HashSet<i64>>,
    /// Each entrant's current version (its last that built).
    current: Mutex<HashSet<i64>>,
    /// Checks in a row each version failed here, and the reason last said.
    tries: Mutex<HashMap<i64, (u32, String)>>,
    /// How this worker runs the versions.
    containment: Containment,
    /// The stored variables left out, said once each.
    left_out: Mutex<HashSet<std::ffi::OsString>>,
}

/// How long a worker waits before it looks again at a version it
/// declined.
const RECHECK: Duration = Duration::from_secs(10);

/// A version, as a worker stands with it.
enum Seat {
    /// Stored (its player's JSON), not yet checked here.
    Stored(String, Box<Player>),
    /// Checked: it plays here.
    Ready(String, Box<Entrant>),
    /// This machine cannot play it as stored (its JSON), for the reason
    /// given, since the moment given: looked at again [`RECHECK`] later.
    Declined(String, String, Instant),
    /// It plays nowhere (it did not build, or has left the league).
    Out,
}

impl StoredSeats {
    fn new(db: Arc<Mutex<Db>>, from: PathBuf, to: PathBuf, worker: String) -> StoredSeats {
        StoredSeats {
            db,
            from,
            to,
            worker,
            seats: 2,
            known: Mutex::default(),
            stale: AtomicBool::new(true),
            to_check: Mutex::default(),
            current: Mutex::default(),
            tries: Mutex::default(),
            containment: Containment::default(),
            left_out: Mutex::default(),
        }
    }

    /// Where this worker stands with version `row`, before any check.
    fn seat_of(row: &VersionRow) -> Seat {
        let stored = row
            .player
            .as_deref()
            .filter(|_| row.build_ok && !row.retired);
        match stored.and_then(|json| Some((json, serde_json::from_str::<Player>(json).ok()?))) {
            Some((json, player)) => Seat::Stored(json.to_owned(), Box::new(player)),
            None => Seat::Out,
        }
    }

    /// Reads the versions again: new ones, and those stored anew (a
    /// league started again stores each of its versions again).
    fn read_versions(&self) {
        let Ok(rows) = lock(&self.db).versions_without_logs() else {
            self.stale.store(true, Ordering::SeqCst);
            return;
        };
        // Each entrant's last version that built: what the league deals
        // now (older ones may still have a table to finish).
        let mut current = HashMap::new();
        for row in rows.iter().filter(|r| r.build_ok && !r.retired) {
            current.insert(row.entrant.as_str(), row.id);
        }
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = current.into_values().collect();
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        for row in &rows {
            let seat = StoredSeats::seat_of(row);
            // Checked once per stored player: a version declined here is
            // looked at again only when the league stores it anew.
            let same = match (known.get(&row.id), &seat) {
                (
                    Some(Seat::Ready(a, _) | Seat::Stored(a, _) | Seat::Declined(a, ..)),
                    Seat::Stored(b, _),
                ) => a == b,
                (Some(Seat::Out), Seat::Out) => true,
                _ => false,
            };
            if !same {
                known.insert(row.id, seat);
            }
        }
    }

    /// Checks the versions asked for since the last look.
    fn check_asked(&self) {
        let asked: Vec<i64> =
            std::mem::take(&mut *self.to_check.lock().unwrap_or_else(|e| e.into_inner()))
                .into_iter()
                .collect();
        for id in asked {
            let player = match self
                .known
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&id)
            {
                Some(Seat::Stored(json, player)) => (json.clone(), (**player).clone()),
                _ => continue,
            };
            let (json, player) = player;
            let seat = match self.playable(&player) {
                Ok(entrant) => {
                    self.tries().remove(&id);
                    Seat::Ready(json, Box::new(entrant))
                }
                Err(why) => {
                    self.declined(id, &player.name, &why);
                    Seat::Declined(json, why, Instant::now())
                }
            };
            self.known
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id, seat);
        }
    }

    /// How many checks in a row each version failed here.
    fn tries(&self) -> std::sync::MutexGuard<'_, HashMap<i64, (u32, String)>> {
        self.tries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Declined versions looked at [`RECHECK`] ago are to be looked at
    /// again when next asked for: a copy not yet seen through a network
    /// file system's cache is there a little later.
    fn revive_declined(&self) {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        for seat in known.values_mut() {
            if let Seat::Declined(json, _, at) = seat
                && at.elapsed() >= RECHECK
                && let Ok(player) = serde_json::from_str::<Player>(json)
            {
                *seat = Seat::Stored(std::mem::take(json), Box::new(player));
            }
        }
    }

    /// Says (once for each reason), and writes in the database, that this
    /// worker cannot play version `id` (named `name`) for `why`.
    fn declined(&self, id: i64, name: &str, why: &str) {
        let mut tries = self.tries();
        let entry = tries.entry(id).or_insert((0, String::new()));
        entry.0 += 1;
        if entry.1 == why {
            return;
        }
        entry.1 = why.to_owned();
        drop(tries);
        eprintln!(
            "league work: {} cannot play {} on this machine: {}; it declines its tables \
             (another worker may play them)",
            crate::text::terminal(&self.worker),
            crate::text::terminal(name),
            crate::text::terminal(why)
        );
        // A database away for a moment: the league is not told this time.
        let _ = lock(&self.db).decline_version(&self.worker, id, why);
    }
}

impl Seats for StoredSeats {
    fn refresh(&self) {
        if self.stale.swap(false, Ordering::SeqCst) {
            self.read_versions();
        }
        self.revive_declined();
        self.check_asked();
    }

    fn entrants(&self, ids: &[i64]) -> Option<Vec<Entrant>> {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        let mut entrants = Vec::with_capacity(ids.len());
        let mut all = true;
        for id in ids {
            match known.get(id) {
                Some(Seat::Ready(_, entrant)) => entrants.push((**entrant).clone()),
                Some(Seat::Stored(..)) => {
                    self.to_check
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(*id);
                    all = false;
                }
                Some(Seat::Declined(..) | Seat::Out) => all = false,
                None => {
                    self.stale.store(true, Ordering::SeqCst);
                    all = false;
                }
            }
        }
        all.then_some(entrants)
    }

    fn has_unchecked(&self) -> bool {
        !self
            .to_check
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    fn recheck(&self, id: i64) -> Option<String> {
        // A version declined or out is not played: nothing to look at.
        let player = self.stored_player(id)?;
        self.playable(&player).err()
    }

    fn decline(&self, id: i64, why: &str) {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        let (json, name) = match known.get(&id) {
            Some(Seat::Ready(json, entrant)) => (json.clone(), entrant.name.clone()),
            Some(Seat::Stored(json, player)) => (json.clone(), player.name.clone()),
            _ => return,
        };
        known.insert(id, Seat::Declined(json, why.to_owned(), Instant::now()));
        drop(known);
        self.declined(id, &name, why);
    }

    fn cannot_play_any(&self) -> Option<String> {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let tries = self.tries();
        // Declined after a second look: not a copy on its way.
        let confirmed = |id: &i64| tries.get(id).is_some_and(|(n, _)| *n >= 2);
        let mut declined = Vec::new();
        let mut maybe = 0;
        for (id, seat) in known.iter().filter(|(id, _)| current.contains(id)) {
            match seat {
                Seat::Declined(_, why, _) if confirmed(id) => declined.push(why),
                Seat::Declined(..) | Seat::Ready(..) | Seat::Stored(..) => maybe += 1,
                Seat::Out => {}
            }
        }
        (!declined.is_empty() && maybe < self.seats).then(|| {
            format!(
                "this worker can play none of the league's tables: it cannot play {} of its \
                 versions on this machine (looked at twice, {} apart; the first: {}), and a \
                 table needs {}",
                declined.len(),
                humantime::format_duration(RECHECK),
                declined[0],
                self.seats
            )
        })
    }
}

impl StoredSeats {
    /// `player` as this worker runs it: its copy found and as it was
    /// built ([`copies::check`]), run as this worker's containment says
    /// ([`Containment::apply`]); or why it cannot. The stored variables
    /// left out are said once each.
    fn playable(&self, player: &Player) -> Result<Entrant, String> {
        let (entrant, copy) = copies::check(player, &self.from, &self.to)?;
        let contained = self.containment.apply(entrant, copy.as_deref())?;
        let mut said = self.left_out.lock().unwrap_or_else(|e| e.into_inner());
        let new: Vec<String> = contained
            .left_out
            .into_iter()
            .filter(|name| said.insert(name.clone()))
            .map(|name| name.to_string_lossy().into_owned())
            .collect();
        if !new.is_empty() {
            eprintln!(
                "league work: {} (and maybe other versions) stored with {}, which the league's \
                 file does not set to that value: left out here (a worker's bots get the \
                 file's env tables and the worker's own --env)",
                crate::text::terminal(&player.name),
                crate::text::terminal(&new.join(", "))
            );
        }
        Ok(contained.entrant)
    }

    /// Version `id` as the league stored it.
    fn stored_player(&self, id: i64) -> Option<Player> {
        match self
            .known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)?
        {
            Seat::Stored(_, player) => Some((**player).clone()),
            Seat::Ready(json, _) => serde_json::from_str(json).ok(),
            _ => None,
        }
    }
}
