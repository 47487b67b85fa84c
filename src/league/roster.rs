//! Who is in the league: the file's entrants, its globs matched again
//! every few seconds, each entrant's sources compared with its last
//! version's. A new folder is built and enters; changed sources are built
//! and enter as the next version (the one before stops playing, its games
//! kept); a failed build keeps the last good version playing; a folder
//! that is gone retires its entrant.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::db::{Db, NewVersion, VersionRow, lock};
use super::{LeagueConfig, Shared, Version, copies, entrants};
use crate::bot::build::{self, BuildOptions};
use crate::bot::{BotLimits, Environment};
use crate::tournament::spec::{EntrantSpec, Spec, expand_globs_now};
use crate::tournament::units::{Entrant, duration};

pub struct Roster {
    spec: Spec,
    text: String,
    base: PathBuf,
    build: BuildOptions,
    env: Environment,
    /// What every sandboxed entrant is kept from seeing: the league's own
    /// files and every entrant's folder (its own is shown again).
    hidden: Vec<PathBuf>,
    /// Where each version's folder is copied as it enters (see
    /// [`entrants::snapshot`]): `--versions`, else beside a SQLite
    /// database, `DB.versions`.
    versions: PathBuf,
    scan_every: Duration,
    /// Whether a build may run beside the games (a spare CPU), set once
    /// the jobs are known.
    spare_cpu: bool,
}

/// A scan's finding about one entrant.
enum Change {
    /// Sources never built, or changed since its last version.
    New(EntrantSpec),
    /// Its last version, not yet built by this run (a league started
    /// again): built as it is, the same version (its id, its fingerprint).
    Rebuild(EntrantSpec, i64, String),
}

impl Roster {
    pub fn new(
        spec: Spec,
        text: String,
        base: PathBuf,
        config: &LeagueConfig,
        versions: PathBuf,
        limits: BotLimits,
    ) -> Roster {
        let l = &spec.limits;
        let env = Environment::clean(&config.env).with(&spec.env.vars());
        let mut hidden = vec![base.clone(), config.file.clone(), versions.clone()];
        hidden.extend(super::private_files(&config.db));
        for e in &spec.entrants {
            if let Some(glob) = &e.glob {
                let parent = Path::new(glob.get_ref()).parent().unwrap_or(Path::new(""));
                hidden.push(base.join(parent));
            }
            if let Some(dir) = &e.dir {
                hidden.push(base.join(dir));
            }
        }
        let build = BuildOptions {
            make: l.make.clone().unwrap_or_else(|| build::DEFAULT_MAKE.into()),
            timeout: duration(&l.build_timeout, build::DEFAULT_BUILD_TIMEOUT),
            logs: None,
            sandbox: limits.sandbox,
            hide: hidden.clone(),
            prebuilt: false,
            env: env.clone(),
        };
        Roster {
            spec,
            text,
            base,
            build,
            env,
            hidden,
            versions,
            scan_every: config.scan_every,
            spare_cpu: true,
        }
    }

    /// The file's `jobs`.
    pub fn jobs(&self) -> Option<usize> {
        self.spec.jobs
    }

    /// The entrants as the file and its globs give them now.
    fn entrants_now(&self) -> Vec<EntrantSpec> {
        let mut now = self.spec.entrants.clone();
        for problem in expand_globs_now(&mut now, &self.text, &self.base) {
            eprintln!("league: {problem}");
        }
        // A glob beside the database would match the versions' copies.
        now.retain(|e| {
            e.dir.as_ref().is_none_or(|d| {
                !crate::tournament::units::under(&self.base, d).starts_with(&self.versions)
            })
        });
        now
    }

    /// Looks at every entrant once: builds what is new or changed, retires
    /// what is gone, and tells the games.
    pub async fn scan(&mut self, db: &Mutex<Db>, shared: &Shared) -> Result<(), String> {
        let now = self.entrants_now();
        let rows = lock(db).versions_without_logs()?;
        self.retire_gone(&now, &rows, db, shared)?;
        for e in now {
            let Some(change) = self.change(&e, &rows, shared) else {
                continue;
            };
            self.hold(shared, &e.name, true);
            // What is built: the folder, or a version's copy (see `change`).
            let from = match &change {
                Change::New(e) | Change::Rebuild(e, ..) => e,
            };
            let built = entrants::build(from, &self.base, &self.build, &self.env).await;
            self.hold(shared, &e.name, false);
            if built.referees_failure {
                // Not the entrant's: no version is recorded, and the next
                // scan builds it again.
                eprintln!(
                    "league: cannot build {} now, for want of the referee's own resources: {}; \
                     trying again at the next scan",
                    crate::text::terminal(&e.name),
                    crate::text::terminal(
                        built
                            .log
                            .as_deref()
                            .unwrap_or_default()
                            .lines()
                            .next()
                            .unwrap_or("")
                    )
                );
                continue;
            }
            match change {
                Change::New(e) => self.enter(&e, built, db, shared)?,
                Change::Rebuild(e, id, fingerprint) => {
                    lock(db).rejoin(&e.name)?;
                    self.rebuilt(&e, id, &fingerprint, built, db, shared)?;
                }
            }
        }
        self.prune_copies(&rows, shared);
        Ok(())
    }

    /// Removes the copies that no version will play from again (see
    /// [`entrants::snapshot`]): a version's once its next version has
    /// entered and its last game is over, and whatever a copy cut short
    /// left. Without this a league that runs for a term would keep every
    /// build of every student. An entrant's last version that built keeps
    /// its copy whether it plays now or not (`rows`, the database's
    /// versions): after a broken push and a restart it is the version
    /// that plays, built again from that copy; and when the entrant has
    /// left and comes back, it plays as that version again, maybe through
    /// a player process kept between games (`keep_players`) and still
    /// working in that folder. (A process kept for a replaced version
    /// plays no more games: all that is left to it is to exit when its
    /// input closes.) Only this thread starts a version playing, so none
    /// starts between the look at the versions and the removal.
    fn prune_copies(&self, rows: &[VersionRow], shared: &Shared) {
        let mut seen = std::collections::HashSet::new();
        let last_built: Vec<PathBuf> = rows
            .iter()
            .rev()
            .filter(|r| r.build_ok && seen.insert(r.entrant.as_str()))
            .map(|r| entrants::copy_of(&self.versions, &r.entrant, &r.fingerprint))
            .collect();
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
        let Ok(entries) = std::fs::read_dir(&self.versions) else {
            return;
        };
        for entry in entries.flatten() {
            let copy = entry.path();
            let used = |spec: &crate::bot::BotSpec| {
                spec.dir.as_deref().is_some_and(|d| d.starts_with(&copy))
                    || Path::new(&spec.program).starts_with(&copy)
            };
            if in_use.iter().any(used) || last_built.contains(&copy) {
                continue;
            }
            // Not followed if it is a link: only what is under the copies'
            // folder goes.
            let removed = match entry.file_type() {
                Ok(kind) if kind.is_dir() => std::fs::remove_dir_all(&copy),
                _ => std::fs::remove_file(&copy),
            };
            match removed {
                Ok(()) => {
                    tracing::info!("league: removed {}, played by no version", copy.display())
                }
                Err(e) => eprintln!("league: cannot remove {}: {e}", copy.display()),
            }
        }
    }

    /// What is to be done about `e`, if anything.
    fn change(&self, e: &EntrantSpec, rows: &[VersionRow], shared: &Shared) -> Option<Change> {
        let last = rows.iter().rev().find(|r| r.entrant == e.name);
        let products = last.map_or(&[][..], |r| &r.products[..]);
        let now = entrants::fingerprint(e, &self.base, products);
        match last {
            Some(last) if last.fingerprint == now => {
                // Its last version that built plays: built again when this
                // run has not built it, or when it left and is back. When
                // its last version did not build (a broken push before a
                // restart), that is an earlier one, built from its copy.
                let playing = match last.build_ok {
                    true => last,
                    false => rows
                        .iter()
                        .rev()
                        .find(|r| r.entrant == e.name && r.build_ok)?,
                };
                let state = shared.lock();
                let idle = state
                    .versions
                    .iter()
                    .any(|v| v.id == playing.id && !v.active);
                if !(idle || last.retired) {
                    return None;
                }
                let mut from = e.clone();
                if !last.build_ok {
                    let copy = entrants::copy_of(&self.versions, &e.name, &playing.fingerprint);
                    from.dir = Some(copy);
                }
                Some(Change::Rebuild(
                    from,
                    playing.id,
                    playing.fingerprint.clone(),
                ))
            }
            _ => Some(Change::New(e.clone())),
        }
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
        built: entrants::Built,
        db: &Mutex<Db>,
        shared: &Shared,
    ) -> Result<(), String> {
        let fingerprint = entrants::fingerprint(e, &self.base, &built.products);
        let built = self.kept(e, built, &fingerprint);
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
            program: Ok(self.hide(program)),
            options: e.options_json(),
            time_control: e.time_control,
        };
        // Stored before it plays: a worker may claim its first table at once.
        drop(state);
        store_player(db, id, &player, &self.versions, built.digest)?;
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
        fingerprint: &str,
        built: entrants::Built,
        db: &Mutex<Db>,
        shared: &Shared,
    ) -> Result<(), String> {
        let built = self.kept(e, built, fingerprint);
        let mut state = shared.lock();
        let Some(v) = state.versions.iter_mut().find(|v| v.id == id) else {
            return Ok(());
        };
        match built.program {
            Ok(program) => {
                v.player.program = Ok(self.hide(program));
                v.player.options = e.options_json();
                v.player.time_control = e.time_control;
                v.active = true;
                let player = v.player.clone();
                eprintln!("league: {} plays", crate::text::terminal(&v.player.name));
                drop(state);
                store_player(db, id, &player, &self.versions, built.digest)?;
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

    /// `built` playing from a copy of its folder (see
    /// [`entrants::snapshot`]); a copy that cannot be made keeps it out,
    /// its reason first in the version's log, and what the copy left out
    /// (FIFOs, sockets, devices) is said there too.
    fn kept(&self, e: &EntrantSpec, built: entrants::Built, fingerprint: &str) -> entrants::Built {
        let (Ok(program), Some(dir)) = (&built.program, &e.dir) else {
            return built;
        };
        let dir = crate::tournament::units::under(&self.base, dir);
        // Built in its copy (a league started again after a push that did
        // not build): the copy is as this build left it, sealed anew.
        let keep = !dir.starts_with(&self.versions);
        let copied =
            entrants::snapshot(program.clone(), &dir, &self.versions, &e.name, fingerprint)
                .and_then(|(program, note)| {
                    let copy = entrants::copy_of(&self.versions, &e.name, fingerprint);
                    let digest = copies::seal(&copy, keep)
                        .map_err(|e| format!("cannot seal {}: {e}", copy.display()))?;
                    Ok((program, note, digest))
                });
        let (program, note, digest) = match copied {
            Ok((program, note, digest)) => (Ok(program), note, Some(digest)),
            Err(why) => (
                Err(crate::outcome::Disqualified::cannot_start(why.clone())),
                Some(why),
                None,
            ),
        };
        let log = match (note, built.log) {
            (Some(note), Some(log)) => Some(format!("{note}\n\n{log}")),
            (note, log) => note.or(log),
        };
        entrants::Built {
            program,
            log,
            digest,
            ..built
        }
    }

    /// Whether the sandbox can hide every path of the league's.
    pub fn check_hidden(&self) -> Result<(), String> {
        crate::bot::spawn::check_hidden(&self.hidden).map_err(|e| e.to_string())
    }

    fn hide(&self, mut program: crate::bot::BotSpec) -> crate::bot::BotSpec {
        program.hide.clone_from(&self.hidden);
        program
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
        std::thread::Builder::new()
            .name("league-scan".into())
            .spawn(move || {
                let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    eprintln!("league: cannot look at the entrants again: no runtime");
                    return;
                };
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
