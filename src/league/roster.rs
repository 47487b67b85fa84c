//! Who is in the league: the file's entrants, its globs matched again
//! every few seconds, each entrant's sources compared with its last
//! version's. A new folder is built and enters; changed sources are built
//! and enter as the next version (the one before stops playing, its games
//! kept); a failed build keeps the last good version playing; a folder
//! that is gone retires its entrant.
//!
//! What is built of an entrant, from where, its copy and what it may see
//! are [`entrants::Versions`]'s to decide; the roster asks it, then
//! records its answers in the database and the league's state.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::db::{Db, NewVersion, VersionRow, lock};
use super::entrants::{self, Change, Made};
use super::{Shared, Version, copies};
use crate::tournament::spec::{EntrantSpec, Spec, expand_globs_now};
use crate::tournament::units::Entrant;

pub struct Roster {
    spec: Spec,
    text: String,
    base: std::path::PathBuf,
    /// The entrants' versions as files: built, copied, sealed, hidden.
    versions: entrants::Versions,
    scan_every: Duration,
    /// Whether a build may run beside the games (a spare CPU), set once
    /// the jobs are known.
    spare_cpu: bool,
}

impl Roster {
    pub fn new(
        spec: Spec,
        text: String,
        base: std::path::PathBuf,
        versions: entrants::Versions,
        scan_every: Duration,
    ) -> Roster {
        Roster {
            spec,
            text,
            base,
            versions,
            scan_every,
            spare_cpu: true,
        }
    }

    /// The file's `jobs`.
    pub fn jobs(&self) -> Option<usize> {
        self.spec.jobs
    }

    /// Whether the sandbox can hide every path of the league's.
    pub fn check_hidden(&self) -> Result<(), String> {
        self.versions.check_hidden()
    }

    /// The entrants as the file and its globs give them now.
    fn entrants_now(&self) -> Vec<EntrantSpec> {
        let mut now = self.spec.entrants.clone();
        for problem in expand_globs_now(&mut now, &self.text, &self.base) {
            eprintln!("league: {problem}");
        }
        // A glob beside the database would match the versions' copies.
        now.retain(|e| e.dir.as_ref().is_none_or(|d| !self.versions.holds(d)));
        now
    }

    /// Looks at every entrant once: builds what is new or changed, retires
    /// what is gone, and tells the games.
    pub async fn scan(&mut self, db: &Mutex<Db>, shared: &Shared) -> Result<(), String> {
        let now = self.entrants_now();
        let rows = lock(db).versions_without_logs()?;
        self.retire_gone(&now, &rows, db, shared)?;
        for e in now {
            let idle = |id| {
                let state = shared.lock();
                state.versions.iter().any(|v| v.id == id && !v.active)
            };
            let Some(change) = self.versions.change(&e, &rows, idle) else {
                continue;
            };
            self.hold(shared, &e.name, true);
            let built = self.versions.build(&change).await;
            self.hold(shared, &e.name, false);
            let built = match built {
                Ok(built) => built,
                Err(why) => {
                    // Not the entrant's: no version is recorded, and the
                    // next scan builds it again.
                    eprintln!(
                        "league: cannot build {} now, for want of the referee's own resources: \
                         {}; trying again at the next scan",
                        crate::text::terminal(&e.name),
                        crate::text::terminal(&why)
                    );
                    continue;
                }
            };
            match &change {
                Change::New(e) => self.enter(e, self.versions.made(&change, built), db, shared)?,
                Change::Rebuild(e, id, _) => {
                    lock(db).rejoin(&e.name)?;
                    self.rebuilt(e, *id, self.versions.made(&change, built), db, shared)?;
                }
            }
        }
        self.prune_copies(&rows, shared);
        Ok(())
    }

    /// Removes the copies that no version will play from again (see
    /// [`entrants::snapshot`], [`entrants::Versions::prune`]): a
    /// version's once its next version has entered and its last game is
    /// over, and whatever a copy cut short left. Without this a league
    /// that runs for a term would keep every build of every student. (A
    /// process kept for a replaced version plays no more games: all that
    /// is left to it is to exit when its input closes.) Only this thread
    /// starts a version playing, so none starts between the look at the
    /// versions and the removal.
    fn prune_copies(&self, rows: &[VersionRow], shared: &Shared) {
        let in_use: Vec<crate::bot::BotSpec> = {
            let state = shared.lock();
            let last_of_its_entrant = |i: usize| {
                let entrant = &state.versions[i].entrant;
                !state.versions[i + 1..]
                    .iter()
                    .any(|v| &v.entrant == entrant)
            };
            (0..state.versions.len())
                .filter(|&i| {
                    let v = &state.versions[i];
                    v.active || v.in_flight > 0 || last_of_its_entrant(i)
                })
                .filter_map(|i| state.versions[i].player.program.as_ref().ok().cloned())
                .collect()
        };
        self.versions.prune(rows, &in_use);
    }

    /// While a build runs on a machine without a spare CPU, no new game
    /// starts (games in flight go on).
    fn hold(&self, shared: &Shared, name: &str, building: bool) {
        if self.spare_cpu {
            return;
        }
        if building {
            eprintln!(
                "league: building {}: no new game starts until it is done (no spare CPU)",
                crate::text::terminal(name)
            );
        }
        shared.lock().holding = building;
        shared.changed.notify_all();
    }

    /// A new version of `e`: in the database, and playing if it built.
    fn enter(
        &self,
        e: &EntrantSpec,
        Made { built, fingerprint }: Made,
        db: &Mutex<Db>,
        shared: &Shared,
    ) -> Result<(), String> {
        let log = match &built.program {
            Err(why) => Some(built.log.clone().unwrap_or_else(|| why.why.clone())),
            Ok(_) => built.log.clone(),
        };
        let (id, number) = lock(db).add_version(&NewVersion {
            entrant: &e.name,
            fingerprint: &fingerprint,
            products: &built.products,
            build_ok: built.program.is_ok(),
            build_log: log.as_deref(),
        })?;
        let name = Version::name(&e.name, number);
        let mut state = shared.lock();
        let before = state
            .versions
            .iter()
            .rfind(|v| v.entrant == e.name && v.active)
            .map(|v| v.player.name.clone());
        let Ok(program) = built.program else {
            let why = log.unwrap_or_default();
            // Its first line says why; the log follows it.
            eprintln!(
                "league: {} did not build: {}{}",
                crate::text::terminal(&name),
                crate::text::terminal(why.lines().next().unwrap_or("")),
                match &before {
                    Some(before) => format!("; {} keeps playing", crate::text::terminal(before)),
                    None => String::new(),
                }
            );
            return Ok(());
        };
        for v in state.versions.iter_mut().filter(|v| v.entrant == e.name) {
            v.active = false;
        }
        let player = Entrant {
            name: name.clone(),
            program: Ok(program),
            options: e.options_json(),
            time_control: e.time_control,
        };
        // Stored before it plays: a worker may claim its first table at once.
        drop(state);
        store_player(db, id, &player, self.versions.root(), built.digest)?;
        let mut state = shared.lock();
        state.tally.add_entrant(&name);
        state.versions.push(Version {
            id,
            entrant: e.name.clone(),
            number,
            player,
            active: true,
            deals: Default::default(),
            in_flight: 0,
            last_failure: None,
        });
        drop(state);
        shared.changed.notify_all();
        eprintln!(
            "league: {} enters{}",
            crate::text::terminal(&name),
            match before {
                Some(before) => format!(" ({} stops playing)", crate::text::terminal(&before)),
                None => String::new(),
            }
        );
        Ok(())
    }

    /// The last version of `e`, built again (a league started again, an
    /// entrant back): playing again.
    fn rebuilt(
        &self,
        e: &EntrantSpec,
        id: i64,
        Made { built, .. }: Made,
        db: &Mutex<Db>,
        shared: &Shared,
    ) -> Result<(), String> {
        let mut state = shared.lock();
        let Some(v) = state.versions.iter_mut().find(|v| v.id == id) else {
            return Ok(());
        };
        match built.program {
            Ok(program) => {
                v.player.program = Ok(program);
                v.player.options = e.options_json();
                v.player.time_control = e.time_control;
                v.active = true;
                let player = v.player.clone();
                eprintln!("league: {} plays", crate::text::terminal(&v.player.name));
                drop(state);
                store_player(db, id, &player, self.versions.root(), built.digest)?;
                shared.changed.notify_all();
                return Ok(());
            }
            Err(why) => {
                eprintln!(
                    "league: {} did not build again: {}",
                    crate::text::terminal(&v.player.name),
                    crate::text::terminal(why.why.lines().next().unwrap_or(""))
                );
            }
        }
        drop(state);
        shared.changed.notify_all();
        Ok(())
    }

    /// Entrants in the league whose folder (or file entry) is gone leave it.
    fn retire_gone(
        &self,
        now: &[EntrantSpec],
        rows: &[VersionRow],
        db: &Mutex<Db>,
        shared: &Shared,
    ) -> Result<(), String> {
        let mut gone: Vec<&str> = rows
            .iter()
            .filter(|r| !r.retired && !now.iter().any(|e| e.name == r.entrant))
            .map(|r| r.entrant.as_str())
            .collect();
        gone.dedup();
        for name in gone {
            lock(db).retire(name)?;
            let mut state = shared.lock();
            for v in state.versions.iter_mut().filter(|v| v.entrant == name) {
                v.active = false;
            }
            drop(state);
            eprintln!(
                "league: {} leaves (its entry is gone)",
                crate::text::terminal(name)
            );
        }
        Ok(())
    }

    /// Looks at the entrants again every `scan_every` on a thread of its
    /// own (builds included), until the league is done.
    pub fn keep_scanning(
        mut self,
        db: Arc<Mutex<Db>>,
        shared: Arc<Shared>,
        jobs: usize,
    ) -> Option<std::thread::JoinHandle<()>> {
        let seats = shared.lock().seats.unwrap_or(1);
        self.spare_cpu = crate::parallel::cpus() > jobs * seats;
        let cannot = "league: cannot look at the entrants again";
        crate::parallel::runtime_thread("league-scan", cannot, move |runtime| {
            loop {
                {
                    let state = shared.lock();
                    let state =
                        match shared
                            .changed
                            .wait_timeout_while(state, self.scan_every, |s| !s.done)
                        {
                            Ok((state, _)) => state,
                            Err(e) => e.into_inner().0,
                        };
                    if state.done {
                        return;
                    }
                }
                if let Err(e) = runtime.block_on(self.scan(&db, &shared)) {
                    eprintln!("league: {e}");
                }
            }
        })
        .ok()
    }
}

/// Keeps how a worker runs version `id` in the database, with its
/// copy's name under the versions' folder `versions` and its digest
/// (see [`copies::seal`]).
fn store_player(
    db: &Mutex<Db>,
    id: i64,
    player: &Entrant,
    versions: &Path,
    digest: Option<String>,
) -> Result<(), String> {
    let Some(mut stored) = super::work::Player::of(player) else {
        return Ok(());
    };
    stored.copy = stored
        .dir
        .as_deref()
        .and_then(|dir| copies::copy_name_of(Path::new(dir), versions));
    stored.digest = stored.copy.as_ref().and(digest);
    let json = serde_json::to_string(&stored).map_err(|e| e.to_string())?;
    lock(db).set_player(id, &json)
}
