//! A league's tables, played: each claimed from the database with a
//! lease, its games played one after the other and each committed under
//! the claim as it ends. The league's own jobs (`league run`) and its
//! workers on other machines (`league work`, [`super::worker`]) play them
//! the same way, through [`play`].
//!
//! Why a claim with a lease: a worker may die at any moment (SIGKILL, a
//! lost node, `scancel`). Its table goes back to the queue once its lease
//! runs out, and the next claim of it bumps the table's claim number, so
//! that the dead worker's game, should it come back and finish it, is no
//! longer accepted; and a game is recorded once per table and rotation
//! (a unique index), whoever plays it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::db::{Claim, Db, TableRow, lock};
use super::relocate::{moved, moved_path};
use crate::bot::{BotLimits, BotSpec, Environment};
use crate::exit::Status;
use crate::game::{Deal, Game, Round};
use crate::games::external::JudgeRefusal;
use crate::tournament::units::{Entrant, play_unit};

/// How long a claim holds a table without being renewed, by default.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// How often an idle worker looks for a table again.
pub const IDLE_POLL: Duration = Duration::from_millis(250);

/// Who a worker can seat: the entrant of each version, by its id.
pub trait Seats: Send + Sync {
    /// Looks at the versions again, outside any claim (a worker of its
    /// own reads the new ones from the database).
    fn refresh(&self) {}

    /// The entrants of versions `ids`, in order, if this worker can play
    /// every one of them.
    fn entrants(&self, ids: &[i64]) -> Option<Vec<Entrant>>;

    /// Versions were asked for that the next [`Seats::refresh`] checks:
    /// look again at once rather than idle.
    fn has_unchecked(&self) -> bool {
        false
    }

    /// After a game in which version `id` could not start: why this
    /// machine cannot play it, when that is this machine's failure (its
    /// copy gone, an interpreter missing here), not the version's.
    fn recheck(&self, _id: i64) -> Option<String> {
        None
    }

    /// This worker plays version `id` no more, for `why`.
    fn decline(&self, _id: i64, _why: &str) {}

    /// Why this worker can play no table at all, if it cannot.
    fn cannot_play_any(&self) -> Option<String> {
        None
    }
}

/// What a worker's job threads share.
pub struct Tables {
    /// Its name in the database (`workers`, a table's `worker`).
    pub name: String,
    pub db: Arc<Mutex<Db>>,
    pub seats: Arc<dyn Seats>,
    pub game: Arc<dyn Game>,
    pub limits: BotLimits,
    pub seed: u64,
    pub solo: bool,
    pub lease: Duration,
    /// Its jobs, said in `workers` so that the league deals for them;
    /// `None` for the league's own (it counts them itself).
    pub registered_jobs: Option<usize>,
    /// Prints each game it commits (a worker of its own; the league
    /// prints the games it follows, whoever played them).
    pub say_games: bool,
    /// Waits a moment for a table to come; `true` when the worker is to
    /// stop (the league is done).
    pub idle: Box<dyn Fn() -> bool + Send + Sync>,
    /// Whether to stop before the next game (the league is done).
    pub stopping: Box<dyn Fn() -> bool + Send + Sync>,
    /// After each commit: the league's follower looks at once.
    pub committed: Box<dyn Fn() + Send + Sync>,
    held: Mutex<HashSet<Claim>>,
    lost: Mutex<HashSet<Claim>>,
    failed: Mutex<Option<Failed>>,
    done: AtomicBool,
    /// Games this worker voided in a row for failures of its own.
    voids_in_a_row: AtomicU32,
}

type Failed = (Status, String);

/// How a claimed table ended.
enum Ended {
    Played,
    /// Its lease ran out and another worker has it.
    Lost,
    /// Given back: the worker stops, or cannot seat it.
    Released,
    /// The judge refused a version's or the game's settings.
    Refused,
}

impl Tables {
    /// Tables for a worker named `name`; the behaviour around the games
    /// (`idle`, `stopping`, `committed`) is set on the result.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        db: Arc<Mutex<Db>>,
        seats: Arc<dyn Seats>,
        game: Arc<dyn Game>,
        limits: BotLimits,
        seed: u64,
        lease: Duration,
    ) -> Tables {
        let solo = game.seating() == crate::game::Seating::Solo;
        Tables {
            name,
            db,
            seats,
            game,
            limits,
            seed,
            solo,
            lease,
            registered_jobs: None,
            say_games: false,
            idle: Box::new(|| {
                std::thread::sleep(IDLE_POLL);
                false
            }),
            stopping: Box::new(|| false),
            committed: Box::new(|| {}),
            held: Mutex::default(),
            lost: Mutex::default(),
            failed: Mutex::default(),
            done: AtomicBool::new(false),
            voids_in_a_row: AtomicU32::new(0),
        }
    }

    fn fail(&self, status: Status, message: String) {
        let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        failed.get_or_insert((status, message));
    }

    fn failure(&self) -> Option<Failed> {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn is_lost(&self, claim: Claim) -> bool {
        self.lost
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&claim)
    }

    fn hold(&self, claim: Claim, held: bool) {
        let mut claims = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if held {
            claims.insert(claim);
        } else {
            claims.remove(&claim);
        }
    }

    /// Gives every table still held back to the queue: the worker is
    /// stopped (a signal's tidy: never waits long for the database).
    pub fn release_all(&self) {
        let Ok(claims) = self.held.try_lock().map(|held| held.clone()) else {
            return;
        };
        for _ in 0..20 {
            if let Ok(db) = self.db.try_lock() {
                for claim in claims {
                    let _ = db.release_table(claim);
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

/// Plays tables as the job threads claim them until the worker is to
/// stop or fails; its status.
pub async fn play(tables: Arc<Tables>, jobs: usize, pin: bool) -> Status {
    let keeper = keep_leases(Arc::clone(&tables));
    let (playing, ending) = (Arc::clone(&tables), Arc::clone(&tables.game));
    let mut played = crate::parallel::run(
        Claims(Arc::clone(&tables)),
        jobs,
        pin,
        move |table: TableRow, _cpu| {
            let tables = Arc::clone(&playing);
            async move { play_table(&tables, table).await }
        },
        move || {
            let game = Arc::clone(&ending);
            async move { game.end_of_thread().await }
        },
    );
    while let Some(ended) = played.next().await {
        match ended {
            Ok(Ok(_)) => {}
            Ok(Err((status, message))) => tables.fail(status, message),
            Err(e) => tables.fail(Status::Internal, e.to_string()),
        }
    }
    tables.done.store(true, Ordering::SeqCst);
    drop(keeper.join());
    match tables.failure() {
        Some((status, message)) => {
            eprintln!("referee league: {message}");
            status
        }
        None => Status::Pass,
    }
}

/// The items of [`crate::parallel::run`]: the next table claimed, as a
/// job thread asks for one; it waits while none is there.
struct Claims(Arc<Tables>);

impl Iterator for Claims {
    type Item = TableRow;

    fn next(&mut self) -> Option<TableRow> {
        let tables = &self.0;
        loop {
            if tables.failure().is_some() || (tables.stopping)() {
                return None;
            }
            tables.seats.refresh();
            if let Some(why) = tables.seats.cannot_play_any() {
                tables.fail(Status::Internal, why);
                return None;
            }
            let seats = Arc::clone(&tables.seats);
            let claimed = lock(&tables.db).claim_table(&tables.name, tables.lease, &|ids| {
                seats.entrants(ids).is_some()
            });
            match claimed {
                Ok(Some(table)) => {
                    tables.hold(claim_of(&table), true);
                    return Some(table);
                }
                Ok(None) => {
                    if !tables.seats.has_unchecked() && (tables.idle)() {
                        return None;
                    }
                }
                Err(e) => {
                    tables.fail(Status::Io, e);
                    return None;
                }
            }
        }
    }
}

fn claim_of(table: &TableRow) -> Claim {
    Claim {
        table: table.id,
        claim: table.claim,
    }
}

/// Plays a claimed table's games not yet recorded, each committed as it
/// ends; the table is then done.
async fn play_table(tables: &Tables, table: TableRow) -> Result<(), Failed> {
    let claim = claim_of(&table);
    let ended = play_rotations(tables, &table, claim).await;
    tables.hold(claim, false);
    let io = |e: String| (Status::Io, e);
    match ended? {
        Ended::Played => {
            lock(&tables.db).finish_table(claim, None).map_err(io)?;
            (tables.committed)();
        }
        Ended::Released => lock(&tables.db).release_table(claim).map_err(io)?,
        Ended::Lost | Ended::Refused => {}
    }
    Ok(())
}

async fn play_rotations(tables: &Tables, table: &TableRow, claim: Claim) -> Result<Ended, Failed> {
    let Some(entrants) = tables.seats.entrants(&table.versions) else {
        return Ok(Ended::Released);
    };
    let k = table.versions.len();
    for &rotation in &table.rotations {
        if table.played.contains(&rotation) {
            continue;
        }
        if tables.is_lost(claim) {
            return Ok(Ended::Lost);
        }
        if (tables.stopping)() {
            return Ok(Ended::Released);
        }
        // Rotation r seats the table's versions r places on.
        let order: Vec<usize> = (0..k).map(|s| (s + rotation as usize) % k).collect();
        let ids: Vec<i64> = order.iter().map(|&i| table.versions[i]).collect();
        let players: Vec<(usize, &Entrant)> = order
            .iter()
            .map(|&i| (table.versions[i] as usize, &entrants[i]))
            .collect();
        let deal = deal_of(table.round, rotation, k, tables.solo);
        let mut record = play_unit(
            &*tables.game,
            tables.limits,
            &[],
            &players,
            deal.index,
            deal,
            tables.seed,
        )
        .await;
        if let Some(refusal) = record.refusal() {
            refused(tables, claim, &refusal, &ids, &players).map_err(|e| (Status::Io, e))?;
            return Ok(Ended::Refused);
        }
        if let Some(void) = workers_failure(tables, &record, &ids) {
            void_game(tables, &void)?;
            return Ok(Ended::Released);
        }
        tables.voids_in_a_row.store(0, Ordering::SeqCst);
        let publishing = crate::interrupt::publishing();
        let committed = lock(&tables.db)
            .commit_game(&mut record, claim, table.round, rotation, &ids)
            .map_err(|e| (Status::Io, e))?;
        let Some(number) = committed else {
            return Ok(Ended::Lost);
        };
        if tables.say_games {
            println!("game {number}: {}", super::line(&record));
        }
        drop(publishing);
        (tables.committed)();
    }
    Ok(Ended::Played)
}

/// A game a worker of its own failed itself: why, and the version it
/// cannot play here, if that is what failed.
struct Void {
    why: String,
    version: Option<i64>,
}

/// How many games in a row a worker may void for failures of its own
/// before it stops: as many as a run may ([`crate::game::record`]).
const VOIDS_IN_A_ROW: u32 = crate::game::record::REFEREE_FAILURES_IN_A_ROW;

/// Whether `record`, played by a worker of its own, failed for the
/// worker's sake, never the bots': the referee failed itself (its own
/// descriptors, memory or disk), or a seat failed (could not start, or
/// crashed) and this machine cannot play its version now (issue 48: the
/// league could start it when it entered). The league's own jobs record such games as they
/// are: where the league runs, a bot that cannot start is the bot's.
fn workers_failure(tables: &Tables, record: &crate::game::GameRecord, ids: &[i64]) -> Option<Void> {
    tables.registered_jobs?;
    if let Some(why) = record.referee_failure() {
        return Some(Void {
            why: why.to_owned(),
            version: None,
        });
    }
    record
        .results
        .iter()
        .zip(ids)
        // A copy gone under a running bot (a network file system's
        // hiccup, a copy pruned) fails it mid-game, as a crash: any seat
        // that failed has its copy looked at again.
        .filter(|(r, _)| r.status() != crate::outcome::Status::Ok)
        .find_map(|(_, &id)| {
            let why = tables.seats.recheck(id)?;
            Some(Void {
                why,
                version: Some(id),
            })
        })
}

/// The game is void: not recorded, its table given back for another
/// worker (or this one) to deal again; counted for this worker, never
/// toward the league's stop after failures in a row. A version this
/// machine cannot play is declined; too many voids in a row stop the
/// worker.
fn void_game(tables: &Tables, void: &Void) -> Result<(), Failed> {
    eprintln!(
        "league work: a game void, its table given back: {}",
        crate::text::terminal(&void.why)
    );
    lock(&tables.db)
        .void_game(&tables.name, &void.why)
        .map_err(|e| (Status::Io, e))?;
    if let Some(id) = void.version {
        tables.seats.decline(id, &void.why);
    }
    let in_a_row = tables.voids_in_a_row.fetch_add(1, Ordering::SeqCst) + 1;
    if in_a_row >= VOIDS_IN_A_ROW {
        return Err((
            Status::Internal,
            format!(
                "this worker failed {in_a_row} games in a row itself (the last: {}); they are \
                 void, no bot is charged with them, and it stops",
                void.why
            ),
        ));
    }
    Ok(())
}

/// Game `rotation` of the table dealt as `round` of `k` seats: its deal,
/// as a tournament numbers it (a game played alone: `round` is its deal).
pub fn deal_of(round: u64, rotation: u64, k: usize, solo: bool) -> Deal {
    let index = if solo {
        round
    } else {
        (round - 1) * k as u64 + rotation + 1
    };
    Deal {
        index,
        setup: round,
        round: Round {
            opening: round,
            rotation,
        },
    }
}

/// What a table's outcome says when the judge refused its settings.
#[derive(Debug, Serialize, Deserialize)]
pub struct Refused {
    pub refused: JudgeRefusal,
    /// The version whose options were refused, if one was.
    pub version: Option<i64>,
}

/// The judge refused a version's options (that version fails, as one that
/// did not build) or the game's (the league's settings are wrong): the
/// game is not recorded, and the table is done with the refusal as its
/// outcome, for the league to act on.
fn refused(
    tables: &Tables,
    claim: Claim,
    refusal: &JudgeRefusal,
    ids: &[i64],
    players: &[(usize, &Entrant)],
) -> Result<(), String> {
    let version = refusal.player.as_ref().and_then(|(_, name)| {
        let seat = players.iter().position(|(_, e)| e.name == *name)?;
        Some(ids[seat])
    });
    let db = lock(&tables.db);
    if let Some(id) = version {
        db.fail_version(id, &format!("refused by the judge: {}", refusal.message))?;
    }
    let outcome = Refused {
        refused: refusal.clone(),
        version,
    };
    let outcome = serde_json::to_string(&outcome).map_err(|e| e.to_string())?;
    db.finish_table(claim, Some(&outcome))?;
    drop(db);
    if tables.say_games {
        eprintln!("league work: {}", refusal.describe());
    }
    (tables.committed)();
    Ok(())
}

/// Renews the leases of the tables held, a third of a lease apart, until
/// the worker is done; a claim whose table another worker took is lost.
fn keep_leases(tables: Arc<Tables>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let every = (tables.lease / 3).max(Duration::from_millis(100));
        loop {
            let held: Vec<Claim> = tables
                .held
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .copied()
                .collect();
            let renewed = {
                let db = lock(&tables.db);
                if let Some(jobs) = tables.registered_jobs {
                    // A database away for a moment is retried next time.
                    let _ = db.worker_seen(&tables.name, jobs);
                }
                db.renew_claims(&tables.name, &held, tables.lease)
            };
            if let Ok(lost) = renewed {
                tables
                    .lost
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend(lost);
            }
            let mut waited = Duration::ZERO;
            while waited < every {
                if tables.done.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
                waited += Duration::from_millis(50);
            }
        }
    })
}

/// How a worker runs a version, kept in the database by the league as
/// the version enters: its program in the versions' folder, its
/// options and clock.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Player {
    pub name: String,
    pub program: String,
    pub args: Vec<String>,
    pub dir: Option<String>,
    pub hide: Vec<String>,
    /// Its environment's variables on top of the clean one; `None`: the
    /// referee's own.
    pub env: Option<Vec<(String, String)>>,
    pub options: serde_json::Value,
    pub time_control: Option<String>,
    /// Its copy: the name of its folder in the versions' folder, where
    /// everything it runs of its own lies (`None`: an entrant with only a
    /// command; or stored before issue 48, the folder `dir` is in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<String>,
    /// The copy's digest when it entered (see [`super::copies::seal`]),
    /// which a worker checks before its first game with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

impl Player {
    /// The player of `entrant`, if it has a program (it built).
    pub fn of(entrant: &Entrant) -> Option<Player> {
        let program = entrant.program.as_ref().ok()?;
        let text = |s: &std::ffi::OsStr| s.to_string_lossy().into_owned();
        Some(Player {
            name: entrant.name.clone(),
            program: text(&program.program),
            args: program.args.iter().map(|a| text(a)).collect(),
            dir: program.dir.as_ref().map(|d| text(d.as_os_str())),
            hide: program.hide.iter().map(|h| text(h.as_os_str())).collect(),
            env: match &program.env {
                Environment::Clean(vars) => {
                    Some(vars.iter().map(|(k, v)| (text(k), text(v))).collect())
                }
                Environment::Inherited => None,
            },
            options: entrant.options.clone(),
            time_control: entrant.time_control.map(|t| t.to_string()),
            copy: None,
            digest: None,
        })
    }

    /// The entrant, its paths under the league's versions' folder `from`
    /// moved under this worker's `to` (the same folder, seen at another
    /// path).
    pub fn entrant(&self, from: &std::path::Path, to: &std::path::Path) -> Entrant {
        let stored = BotSpec {
            program: self.program.clone().into(),
            args: self.args.iter().map(Into::into).collect(),
            dir: self.dir.as_deref().map(Into::into),
            hide: self
                .hide
                .iter()
                .map(|h| moved_path(h.as_ref(), from, to).into())
                .collect(),
            env: match &self.env {
                Some(vars) => {
                    Environment::Clean(vars.iter().map(|(k, v)| (k.into(), v.into())).collect())
                }
                None => Environment::Inherited,
            },
        };
        let program = moved(stored, from, to);
        Entrant {
            name: self.name.clone(),
            program: Ok(program),
            options: self.options.clone(),
            time_control: self.time_control.as_deref().and_then(|t| t.parse().ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deals_are_numbered_as_a_tournament_numbers_them() {
        let d = deal_of(3, 1, 2, false);
        assert_eq!(
            (d.index, d.setup, d.round.opening, d.round.rotation),
            (6, 3, 3, 1)
        );
        let d = deal_of(7, 0, 1, true);
        assert_eq!((d.index, d.setup), (7, 7));
    }
}
