//! `referee tournament FILE.toml`: many games of one kind between entrants,
//! several at once, resumable, shardable over machines; and `referee
//! merge`, which puts shards back together. See `docs/tournaments.md`.

pub mod gamelog;
pub mod league_table;
pub mod pgn;
pub mod report;
pub mod schedule;
pub mod shard;
pub mod spec;
pub mod standings;
pub mod stderr_log;
pub mod units;

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::bot::BotLimits;
use crate::exit::{Refusal, Status};
use crate::game::record::RefereeFailures;
use crate::game::{GameRecord, Seating};
use crate::record::{self, Records};
use crate::rng::fresh_seed;
use spec::{GameRef, Spec};
use standings::{GameSet, Row, Tally};
use units::Plan;

/// How to run a tournament file.
#[derive(Clone, Debug)]
pub struct TournamentConfig {
    pub file: PathBuf,
    /// Overrides of the file's settings.
    pub games: Option<u64>,
    /// `--game-option`s, over the file's `[options]`.
    pub game_options: toml::Table,
    pub seed: Option<u64>,
    /// Print the standings every this many finished games.
    pub standings_every: Option<u64>,
    pub jobs: Option<usize>,
    pub pin: bool,
    pub out: Option<PathBuf>,
    pub resume: bool,
    /// `(k, n)`: run only games `i` with `(i - 1) mod n == k - 1`.
    pub shard: Option<(u64, u64)>,
    /// Build the entrants, play prebuilt ones, or only build.
    pub build: BuildMode,
    pub progress: bool,
    /// Records keep every game's moves, for replays.
    pub record_moves: bool,
    pub limits: BotLimits,
    /// `--time-margin`: replaces the file's `limits.time_margin` (external
    /// games).
    pub time_margin: Option<Duration>,
    /// `--env`: set for every bot and build, under the file's `env`.
    pub env: crate::bot::environment::Vars,
}

/// Whether a run builds its entrants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildMode {
    /// Build, then play.
    Build,
    /// `--build-only`: build, say how it went, and stop.
    Only,
    /// `--no-build`: play what was built before; refuse when a build is
    /// missing or stale.
    Prebuilt,
}

/// What `--out DIR/run.json` says about a run, for `--resume` and `merge`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    pub game: GameRef,
    /// One player against the game (win rates) rather than players against
    /// each other (ratings): how the standings are computed.
    pub solo: bool,
    pub fingerprint: String,
    pub seed: u64,
    pub games: u64,
    pub entrants: Vec<String>,
    pub shard: Option<(u64, u64)>,
    /// A gauntlet's entrant: one-player standings are paired against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gauntlet: Option<String>,
}

/// Records of one run in an output directory.
fn records_path(out: &Path) -> PathBuf {
    out.join("records.jsonl")
}

/// Runs a tournament file.
pub async fn run(config: &TournamentConfig) -> Status {
    crate::exit::said("referee tournament", run_inner(config).await)
}

async fn run_inner(config: &TournamentConfig) -> Result<Status, Refusal> {
    let overrides = spec::Overrides {
        games: config.games,
        game_options: config.game_options.clone(),
    };
    let mut spec: Spec = spec::load(&config.file, &overrides)?;
    if let Some(margin) = config.time_margin {
        spec.limits.time_margin = Some(crate::units::TomlDuration(margin));
    }
    check_options(config, &spec)?;
    let base = config
        .file
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let (plan, sprt) = prepare(&spec, &base, config).await?;
    if config.build == BuildMode::Only {
        return Ok(report_builds(&plan));
    }
    let _writing = config.out.as_deref().map(lock_out).transpose()?;
    let info = run_info(config, &spec, &plan, sprt.is_some())?;
    // The games already in `--out` (a record that is not this run's is
    // refused here, with status 64, before anything is written).
    let earlier = match &config.out {
        Some(dir) if continues(config) => Some(earlier_games(dir, &info, config.resume)?),
        _ => None,
    };
    let out = match &config.out {
        Some(dir) => match OutDir::open(dir, config, &info, earlier) {
            Ok(out) => Some(out),
            Err(e) => return Ok(io_failure(&e)),
        },
        None => None,
    };
    let mut run = Run::new(config, &spec, info, sprt, out);
    run.announce(&spec, &plan);
    run.report_on_interrupt();
    let status = run.play(&spec, plan).await;
    match status {
        Some(status) => {
            crate::interrupt::tidy_now(false);
            Ok(status)
        }
        None => Ok(run.finish()?),
    }
}

/// Puts the logs of the output directory `out`, appended to as games
/// finish, in game order: `stderr/NAME.log` and `games.log`. When a run
/// opens its output and when it ends, however it ends (an interrupt's
/// thread does it then: see [`crate::interrupt::set_tidy`]). A failure
/// leaves a log as it was, with a warning.
fn tidy_logs(out: &Path) {
    let sorted = stderr_log::tidy(out).and_then(|()| gamelog::sort(&out.join("games.log")));
    if let Err(e) = sorted {
        eprintln!("referee tournament: warning: {e}: left in the order the games finished");
    }
}

/// Holds `DIR/.lock` while the run writes `DIR`: two runs writing one
/// output directory at once (two tasks given the same `--out`, a task
/// started again while the first still runs) would interleave their
/// records; the second is refused before it touches anything.
fn lock_out(dir: &Path) -> Result<nix::fcntl::Flock<std::fs::File>, String> {
    use nix::fcntl::{Flock, FlockArg};
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| match e {
        nix::errno::Errno::EWOULDBLOCK => format!(
            "{} is being written by another run right now: give each run its own --out \
             (a task started again must wait until the first has ended)",
            dir.display()
        ),
        e => format!("{}: cannot lock it: {e}", path.display()),
    })
}

/// Whether the run continues the records in its `--out`: with `--resume`,
/// or without it when `--out` already holds records (of this same run:
/// [`run_info`] refuses another). Running the same command again is then
/// safe, as a cluster's requeued task does.
fn continues(config: &TournamentConfig) -> bool {
    config.resume
        || config
            .out
            .as_deref()
            .is_some_and(|out| std::fs::metadata(records_path(out)).is_ok_and(|m| m.len() > 0))
}

/// `--build-only`'s report: each entrant built, or why not; status 0 when
/// all built, 1 otherwise.
fn report_builds(plan: &Plan) -> Status {
    let failed = plan.disqualified();
    let names = plan.names();
    println!(
        "built: {} of {} entrant{}",
        names.len() - failed.len(),
        names.len(),
        if names.len() == 1 { "" } else { "s" }
    );
    for (name, why) in &failed {
        println!("  {}: {}", crate::text::terminal(name), why.why);
    }
    match failed.is_empty() {
        true => Status::Pass,
        false => Status::Fail,
    }
}

/// The command line's options that cannot go together, or with this file.
fn check_options(config: &TournamentConfig, spec: &Spec) -> Result<(), String> {
    if let Some((k, n)) = config.shard
        && (n == 0 || k == 0 || k > n)
    {
        return Err(format!("--shard {k}/{n}: K must be from 1 to N"));
    }
    if spec.sprt.is_some() && config.shard.is_some() {
        return Err(
            "--shard: this tournament runs an SPRT, which stops as soon as it decides: \
             it needs every game's result in one run, so it cannot be split over machines"
                .into(),
        );
    }
    if spec.sprt.is_some() && continues(config) {
        return Err(format!(
            "{}: this tournament runs an SPRT, whose decision belongs to one run: \
             start it again in a new --out DIR",
            match config.resume {
                true => "--resume".to_string(),
                false => format!(
                    "{} already holds the records of a run",
                    config.out.as_deref().unwrap_or(Path::new(".")).display()
                ),
            }
        ));
    }
    if config.resume && config.out.is_none() {
        return Err("--resume needs --out DIR (where the earlier games were written)".into());
    }
    Ok(())
}

/// A head-to-head SPRT: the test, the new entrant's name, the baseline's.
type HeadToHead = (crate::stats::Sprt, String, String);

/// The entrants built and checked, and the head-to-head test if the file
/// asks for one: games in pairs on one setup, seats swapped, and both
/// entrants able to play, or there is nothing to test.
async fn prepare(
    spec: &Spec,
    base: &Path,
    config: &TournamentConfig,
) -> Result<(Arc<Plan>, Option<HeadToHead>), Refusal> {
    let mut plan = Plan::prepare(spec, base, config).await?;
    if !plan.unfound.is_empty() {
        return Err(Refusal::from(format!(
            "{}\nno game was played: a command's program is a path (read from the \
             tournament file's folder) or a name on PATH",
            plan.unfound.join("\nreferee tournament: ")
        )));
    }
    let sprt = match (&spec.sprt, &spec.baseline) {
        (Some(test), Some(baseline)) => {
            plan = plan.paired();
            if let Some((name, why)) = plan.disqualified().into_iter().next() {
                return Err(Refusal::from(format!(
                    "entrant {} cannot play ({why}): the SPRT needs both entrants",
                    crate::text::terminal(&name)
                )));
            }
            let new = plan
                .names()
                .into_iter()
                .find(|n| n != baseline)
                .unwrap_or_default();
            Some((test.test(), new, baseline.clone()))
        }
        _ => None,
    };
    Ok((Arc::new(plan), sprt))
}

/// What the run is: its games, seed and shard, from the command line, the
/// file and (resuming) the run it resumes, which must be the same run.
fn run_info(
    config: &TournamentConfig,
    spec: &Spec,
    plan: &Plan,
    paired: bool,
) -> Result<RunInfo, String> {
    let previous = match &config.out {
        Some(out) if config.resume => Some(
            read_run_info(out)
                .map_err(|e| format!("--resume: nothing to resume in {}: {e}", out.display()))?,
        ),
        Some(out) if continues(config) => Some(read_run_info(out).map_err(|e| {
            format!(
                "{} holds the records of a run, but not its run.json ({e}): choose another --out",
                out.display()
            )
        })?),
        _ => None,
    };
    // A resumed run keeps the seed, the number of games and the shard of
    // the run it resumes, unless they are given again (and then they must
    // agree).
    let games = config
        .games
        .or(previous.as_ref().map(|p| p.games))
        .unwrap_or(spec.games);
    // Head to head, games come in pairs: an odd last game is not played.
    let games = if paired {
        if games < 2 {
            return Err(format!(
                "--games {games}: an SPRT plays games in pairs: at least 2"
            ));
        }
        games / 2 * 2
    } else {
        games
    };
    // Every entrant must get a table; a partial last table is said.
    if let Some(note) = plan.check_share(games)? {
        eprintln!("referee tournament: {note}");
    }
    let shard = config.shard.or(previous.as_ref().and_then(|p| p.shard));
    let seed = match (&previous, config.seed) {
        (Some(p), _) => p.seed,
        (None, Some(seed)) => seed,
        (None, None) => spec.seed.unwrap_or_else(fresh_seed),
    };
    let info = RunInfo {
        game: spec.game.clone(),
        solo: plan.game.seating() == Seating::Solo,
        fingerprint: plan.fingerprint.clone(),
        seed,
        games,
        entrants: plan.names(),
        shard,
        gauntlet: match spec.format {
            spec::Format::Gauntlet => spec.gauntlet.clone(),
            spec::Format::RoundRobin => None,
        },
    };
    if let Some(previous) = &previous {
        let differences = differences(previous, &info, config.seed);
        if !differences.is_empty() {
            let out = config.out.as_deref().unwrap_or(Path::new(".")).display();
            return Err(match config.resume {
                true => format!(
                    "--resume: this is not the run in {out}, so it is not resumed:\n  {}",
                    differences.join("\n  ")
                ),
                false => format!(
                    "{out} already holds the records of another run, so it is not \
                     continued (choose another --out):\n  {}",
                    differences.join("\n  ")
                ),
            });
        }
    }
    Ok(info)
}

/// The output directory of a run (`--out DIR`): its files open, and what a
/// resumed run finds there.
struct OutDir {
    dir: PathBuf,
    records: Option<Records>,
    log: gamelog::GameLog,
    pgn: pgn::PgnFile,
    /// The games recorded before (resuming), which are not played again,
    /// and their standings.
    done: Arc<GameSet>,
    earlier: Option<Tally>,
}

impl OutDir {
    /// Opens `dir` for the run: a fresh one, or (`--resume`) one holding
    /// the run's earlier games; writes `run.json` and a copy of the file.
    fn open(
        dir: &Path,
        config: &TournamentConfig,
        info: &RunInfo,
        earlier: Option<(GameSet, Tally)>,
    ) -> Result<OutDir, String> {
        std::fs::create_dir_all(dir.join("stderr"))
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let (done, earlier) = match earlier {
            Some((done, earlier)) => (done, Some(earlier)),
            None => (GameSet::default(), None),
        };
        write_json(&dir.join("run.json"), info)?;
        std::fs::read(&config.file)
            .map_err(|e| format!("{}: {e}", config.file.display()))
            .and_then(|text| record::write_file(&dir.join("tournament.toml"), &text))?;
        let records = Records::open(&records_path(dir)).map_err(|e| e.to_string())?;
        // An interrupted run's logs are in order; a killed one's may not
        // be, and may end in a section torn by the kill.
        let logs = dir.to_owned();
        crate::interrupt::set_tidy(move || tidy_logs(&logs));
        crate::interrupt::tidy_now(true);
        let log = gamelog::GameLog::open(&dir.join("games.log"))?;
        // From the records: a game an interrupted run wrote to games.pgn
        // but not to its records is played again, and must not be there
        // twice.
        let pgn = pgn::PgnFile::rebuild(dir, &records_path(dir), info, "referee tournament")?;
        Ok(OutDir {
            dir: dir.to_owned(),
            records: Some(records),
            log,
            pgn,
            done: Arc::new(done),
            earlier,
        })
    }

    /// Appends a finished game to the records (its stderr moved to
    /// `stderr/NAME.log`), then its PGN to `games.pgn` and the game to
    /// `games.log`.
    fn append(&mut self, record: &GameRecord, fingerprint: &str) -> Result<(), String> {
        stderr_log::save(&self.dir, record);
        let mut record = record.clone();
        units::strip_stderr(&mut record);
        record.tournament = Some(fingerprint.to_owned());
        if let Some(file) = self.records.as_mut() {
            file.append(&record).map_err(|e| e.to_string())?;
        }
        self.pgn.append(&record)?;
        self.log
            .append(&record)
            .map_err(|e| format!("{}: {e}", self.dir.join("games.log").display()))
    }

    /// Closes the records after a last fsync.
    fn close(&mut self) -> Result<(), String> {
        match self.records.take() {
            Some(file) => file.finish().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
}

/// The games of this run already in `dir` (resuming, with `--resume` or
/// by running the same command again): their indices and standings, read
/// one record at a time. A game voided by its judge is not among them: it
/// is played again. A record of the run that cannot be one of its games
/// (see [`FileCheck`]) is refused.
fn earlier_games(dir: &Path, info: &RunInfo, asked: bool) -> Result<(GameSet, Tally), String> {
    let mut done = GameSet::default();
    let mut void = BTreeSet::new();
    let mut earlier = Tally::for_run(info);
    let path = records_path(dir);
    let mut check = FileCheck::new(info, &path);
    for r in record::numbered_records::<GameRecord>(&path).map_err(|e| e.to_string())? {
        let (line, r) = r.map_err(|e| e.to_string())?;
        if !of_run(&r, &info.fingerprint, info.seed) {
            continue;
        }
        check.check(line, &r)?;
        if r.is_void() {
            void.insert(r.index);
        } else {
            done.insert(r.index);
            earlier.add(units::summary(&r));
        }
    }
    void.retain(|i| !done.contains(*i));
    eprintln!(
        "referee tournament: {}: {} game(s) already in {}{}",
        match asked {
            true => "resuming",
            false => "continuing the same run",
        },
        done.len(),
        dir.display(),
        match void.len() {
            0 => String::new(),
            n => format!(
                "; {n} void game{} (a judge's or the referee's own failure) played again",
                if n == 1 { "" } else { "s" }
            ),
        }
    );
    Ok((done, earlier))
}

/// A tournament being played: what it has finished so far.
struct Run<'c> {
    config: &'c TournamentConfig,
    info: RunInfo,
    sprt: Option<HeadToHead>,
    out: Option<OutDir>,
    /// How many games this shard plays in all, the earlier ones included.
    shard_games: u64,
    jobs: usize,
    standings_every: Option<u64>,
    /// The standings of every game finished (a resumed run's earlier ones
    /// too): printed on an interrupt, every `standings_every` games, as
    /// the progress line's leader, and at the end. A tally, not the
    /// records: a long run's memory does not grow with its games.
    finished: Arc<std::sync::Mutex<Tally>>,
    pairs: crate::stats::Pairs,
    progress: Progress,
    /// The games the referee itself failed (void, played again on
    /// `--resume`), and how many of them came in a row.
    referee_failures: RefereeFailures,
}

/// What the run does after a game.
enum Next {
    Play,
    /// The SPRT decided: the games in flight are abandoned.
    Decided,
}

impl<'c> Run<'c> {
    fn new(
        config: &'c TournamentConfig,
        spec: &Spec,
        info: RunInfo,
        sprt: Option<HeadToHead>,
        mut out: Option<OutDir>,
    ) -> Run<'c> {
        // Shard k of n plays games k, k + n, k + 2n, ...
        let shard_games = info.shard.map_or(info.games, |(k, n)| {
            info.games.checked_sub(k).map_or(0, |g| g / n + 1)
        });
        let jobs = config
            .jobs
            .or(spec.jobs)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        let earlier = out
            .as_mut()
            .and_then(|o| o.earlier.take())
            .unwrap_or_else(|| Tally::for_run(&info));
        let done = earlier.games();
        Run {
            config,
            info,
            sprt,
            out,
            shard_games,
            jobs,
            standings_every: config.standings_every.or(spec.standings_every),
            finished: Arc::new(std::sync::Mutex::new(earlier)),
            pairs: crate::stats::Pairs::default(),
            progress: Progress::new(config.progress, shard_games, done),
            referee_failures: RefereeFailures::default(),
        }
    }

    /// The run's first line, and what it warns about.
    fn announce(&self, spec: &Spec, plan: &Plan) {
        let (games, shard_games) = (self.info.games, self.shard_games);
        println!(
            "tournament: {} ({}), {} entrant{}, {shard_games} game{}{}, seed {}, {} at once",
            self.config.file.display(),
            spec.game.name(),
            plan.entrants.len(),
            if plan.entrants.len() == 1 { "" } else { "s" },
            if shard_games == 1 { "" } else { "s" },
            self.info.shard.map_or(String::new(), |(k, n)| format!(
                " (shard {k}/{n} of {games})"
            )),
            self.info.seed,
            self.jobs,
        );
        let at_once = self.jobs.min(shard_games as usize);
        crate::parallel::warn_if_oversubscribed(
            "tournament",
            Some((at_once, "--jobs")),
            plan.game.seating().bots_at_once(),
        );
        let done = self.finished.lock().map_or(0, |t| t.games());
        let to_play = shard_games.saturating_sub(done);
        if let Some(warning) = plan.game.run_warning(to_play, at_once) {
            eprintln!("referee tournament: warning: {warning}");
        }
        for (name, why) in plan.disqualified() {
            eprintln!(
                "referee tournament: entrant {} disqualified: {why}",
                crate::text::terminal(&name)
            );
        }
    }

    /// On an interrupt, the standings of the games finished so far are
    /// printed, as cutechess does.
    fn report_on_interrupt(&self) {
        let finished = Arc::clone(&self.finished);
        let solo = self.info.solo;
        crate::interrupt::set_report(move || {
            let (games, rows) = finished
                .lock()
                .map(|t| (t.games(), t.rows()))
                .unwrap_or_default();
            format!(
                "\ninterrupted: standings after {games} finished game{}:\n{}\n",
                if games == 1 { "" } else { "s" },
                standings::table(solo, &rows)
            )
        });
    }

    /// Plays the games not played yet, recording each as it ends. `Some`
    /// status when the run stops early (a file it cannot write, a judge
    /// error, an internal error).
    async fn play(&mut self, spec: &Spec, plan: Arc<Plan>) -> Option<Status> {
        let shard = self.info.shard;
        let in_shard = move |i: &u64| shard.is_none_or(|(k, n)| (i - 1) % n == k - 1);
        // The games are produced as they are played: any count runs in
        // little memory.
        let done = self
            .out
            .as_ref()
            .map(|o| Arc::clone(&o.done))
            .unwrap_or_default();
        let todo = (1..=self.info.games)
            .filter(in_shard)
            .filter(move |i| !done.contains(*i));
        let pin = self.config.pin || spec.pin;
        let mut games = plan.play_all(todo, self.info.seed, self.jobs, pin);
        while let Some(record) = games.next().await {
            let record = match record {
                Ok(record) => record,
                Err(e) => return Some(self.stop_at_worker_failure(&e)),
            };
            match self.take(record) {
                Ok(Next::Play) => {}
                Ok(Next::Decided) => break,
                Err(status) => return Some(status),
            }
        }
        None
    }

    /// One finished game: recorded, counted, reported.
    fn take(&mut self, record: GameRecord) -> Result<Next, Status> {
        // Recorded and counted whole, or (the run is ending) not at all.
        let _publishing = crate::interrupt::publishing();
        if let Some(refusal) = record.refusal() {
            return Err(self.stop_at_refusal(&refusal));
        }
        if let Some(out) = self.out.as_mut() {
            out.append(&record, &self.info.fingerprint)
                .map_err(|e| io_failure(&e))?;
        }
        if record.judge_error.is_some() {
            return Err(self.stop_at_judge_error(&record));
        }
        if let Some(stop) = self.referee_failures.note(&record) {
            // Said after the game's line, so that the reason is last.
            self.progress.finish();
            eprintln!("referee tournament: {stop}; `--resume` plays the void games again");
            if let Some(Err(e)) = self.out.as_mut().map(OutDir::close) {
                return Err(io_failure(&e));
            }
            return Err(Status::Internal);
        }
        if let Some(why) = record.referee_failure() {
            self.progress.warn(&format!(
                "referee tournament: warning: game {} is void: {}; `--resume` plays it again",
                record.index,
                crate::text::terminal(why)
            ));
        }
        let so_far = self.count(&record);
        let score = self
            .sprt
            .as_ref()
            .and_then(|(_, new, baseline)| record.head_to_head(self.info.solo, new, baseline));
        let index = record.index;
        drop(record);
        if let Ok(finished) = self.finished.lock() {
            self.progress.tick(&finished);
        }
        if let Some((games, rows)) = so_far {
            self.print_standings_so_far(games, &rows);
        }
        // The SPRT decided: the games in flight are abandoned (their bots
        // killed); the records written so far stay.
        if let (Some((test, _, _)), Some(score)) = (&self.sprt, score) {
            self.pairs.add(index, score);
            if test.state(self.pairs.counts).decision.is_some() {
                return Ok(Next::Decided);
            }
        }
        Ok(Next::Play)
    }

    /// The judge refused the file's settings (an entrant's options or the
    /// game's): a usage error. The game is not recorded, the games recorded
    /// stay, and `--resume` plays on once the file is fixed.
    fn stop_at_refusal(&mut self, refusal: &crate::games::external::JudgeRefusal) -> Status {
        self.progress.finish();
        if let Some(Err(e)) = self.out.as_mut().map(OutDir::close) {
            return io_failure(&e);
        }
        eprintln!("referee tournament: {}", refusal.describe());
        Status::Usage
    }

    /// A game thread could not start, or a game panicked: the referee's
    /// failure, never an entrant's. The run stops, its records closed;
    /// `--resume` plays the games not recorded.
    fn stop_at_worker_failure(&mut self, e: &str) -> Status {
        self.progress.finish();
        if let Some(Err(e)) = self.out.as_mut().map(OutDir::close) {
            return io_failure(&e);
        }
        match self.out {
            Some(_) => {
                eprintln!("referee tournament: {e}; `--resume` plays the games not recorded")
            }
            None => eprintln!("referee tournament: {e}"),
        }
        Status::Internal
    }

    /// A judge that failed is the organiser's fault: its game says nothing
    /// about the entrants, and neither would the next ones. The run stops,
    /// its records closed; `--resume` plays the void game again.
    fn stop_at_judge_error(&mut self, record: &GameRecord) -> Status {
        if let Some(Err(e)) = self.out.as_mut().map(OutDir::close) {
            return io_failure(&e);
        }
        let Some(e) = &record.judge_error else {
            return Status::Internal;
        };
        eprintln!(
            "referee tournament: game {}: judge error: {}; the tournament stops",
            record.index,
            crate::text::terminal(&e.message)
        );
        if let Some(stderr) = &e.stderr {
            eprint!("{}", crate::text::quoted_lines(stderr.lines()));
        }
        Status::Internal
    }

    /// Counts a finished game; every `standings_every` games (this run's
    /// and a resumed run's earlier ones), the games so far, for the
    /// standings, as cutechess's -ratinginterval.
    fn count(&self, record: &GameRecord) -> Option<(u64, Vec<Row>)> {
        let mut finished = self.finished.lock().ok()?;
        finished.add(units::summary(record));
        let count = finished.games();
        self.standings_every
            .is_some_and(|every| count.is_multiple_of(every) && count < self.shard_games)
            .then(|| (count, finished.rows()))
    }

    fn print_standings_so_far(&self, games: u64, rows: &[Row]) {
        self.progress.print(&format!(
            "standings after {games} of {} games:\n{}",
            self.shard_games,
            standings::table(self.info.solo, rows)
        ));
    }

    /// The games are over: the records closed, the standings of every game
    /// of the run (the earlier ones of a resumed run, the other shards'
    /// none) printed and written, the report, and the SPRT's verdict.
    fn finish(mut self) -> Result<Status, String> {
        self.progress.finish();
        if let Some(Err(e)) = self.out.as_mut().map(OutDir::close) {
            return Ok(io_failure(&e));
        }
        crate::interrupt::tidy_now(false);
        let tally = self
            .finished
            .lock()
            .map(|mut finished| std::mem::replace(&mut *finished, Tally::for_run(&self.info)))
            .unwrap_or_else(|_| Tally::for_run(&self.info));
        crate::interrupt::clear_report();
        let out = self.config.out.as_deref();
        if let Err(e) = report(&self.info, &tally, out) {
            return Ok(io_failure(&e));
        }
        if let Some(out) = out {
            match report::regenerate(out, None) {
                Ok(path) => println!("report: {}", path.display()),
                Err(e) => return Ok(io_failure(&e)),
            }
        }
        if let Some(why) = self.referee_failures.unfinished() {
            eprintln!("referee tournament: {why}; `--resume` plays them again");
            return Ok(Status::Internal);
        }
        match &self.sprt {
            Some((test, new, baseline)) => {
                sprt_verdict(test, new, baseline, self.pairs.counts, out)
            }
            None => Ok(Status::Pass),
        }
    }
}

/// Prints the head-to-head SPRT's result (and writes `OUT/sprt.json`):
/// status 0 when H1 is accepted (`new` is better), 1 when H0 is, 0 when
/// the games ran out undecided.
fn sprt_verdict(
    test: &crate::stats::Sprt,
    new: &str,
    baseline: &str,
    counts: [u64; 5],
    out: Option<&Path>,
) -> Result<Status, String> {
    let state = test.state(counts);
    let (text, props) = crate::stats::sprt_figures(test, &state, counts);
    println!("sprt: {new} (new) against {baseline} (baseline)");
    println!("{text}");
    let (verdict, status) = match state.decision {
        Some(true) => (
            format!(
                "H1 accepted: {new} is better than {baseline} (Elo >= {})",
                test.elo1
            ),
            Status::Pass,
        ),
        Some(false) => (
            format!(
                "H0 accepted: {new} is not better than {baseline} (Elo <= {})",
                test.elo0
            ),
            Status::Fail,
        ),
        None => (
            format!(
                "undecided: the games ran out with the LLR {:.2} between {:.2} and {:.2}; allow more games",
                state.llr, state.lower, state.upper
            ),
            Status::Pass,
        ),
    };
    println!("sprt: {verdict}");
    if let Some(out) = out {
        let mut map = serde_json::Map::new();
        map.insert("new".into(), new.into());
        map.insert("baseline".into(), baseline.into());
        for (key, value) in props {
            map.insert(key.trim_start_matches("sprt.").to_owned(), value.into());
        }
        if let Err(e) = write_json(&out.join("sprt.json"), &map) {
            return Ok(io_failure(&e));
        }
    }
    Ok(status)
}

/// A file of the run's own could not be written: the run stops (its games
/// in flight are abandoned and their bots killed) with exit status 74.
fn io_failure(message: &str) -> Status {
    eprintln!("referee tournament: {message}");
    Status::Io
}

/// How the run about to start differs from the run in the output
/// directory it would resume; empty when it is the same run.
fn differences(previous: &RunInfo, now: &RunInfo, seed: Option<u64>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(seed) = seed.filter(|&s| s != previous.seed) {
        out.push(format!(
            "--seed {seed}, but the run's seed is {}",
            previous.seed
        ));
    }
    if previous.game != now.game {
        out.push(format!(
            "the game is {}, but the run's is {}",
            now.game.name(),
            previous.game.name()
        ));
    }
    if previous.games != now.games {
        out.push(format!(
            "{} games, but the run has {}",
            now.games, previous.games
        ));
    }
    if previous.entrants != now.entrants {
        out.push(format!(
            "the entrants are {:?}, but the run's are {:?}",
            now.entrants, previous.entrants
        ));
    }
    if previous.shard != now.shard {
        let shard =
            |s: Option<(u64, u64)>| s.map_or("none".to_owned(), |(k, n)| format!("{k}/{n}"));
        out.push(format!(
            "--shard {}, but the run's is {}",
            shard(now.shard),
            shard(previous.shard)
        ));
    }
    if out.is_empty() && previous.fingerprint != now.fingerprint {
        out.push(
            "the tournament file's limits or the entrants' programs changed since the run started"
                .to_owned(),
        );
    }
    out
}

/// Whether `record` is a game of the run with `fingerprint` and `seed`.
fn of_run(record: &GameRecord, fingerprint: &str, seed: u64) -> bool {
    record.tournament.as_deref() == Some(fingerprint) && record.seed == seed
}

/// The records of one run's records file, checked one at a time against
/// the run (its `run.json`): each must be one of its games (from 1 to
/// its `games`, and of its shard), recorded once (a void game may be
/// recorded again, played to its end, by `--resume`), between its
/// entrants. A record that is not is refused, naming the file and the
/// line: standings that counted it would count a game nobody played.
pub(crate) struct FileCheck<'a> {
    info: &'a RunInfo,
    path: &'a Path,
    /// The games recorded so far, played to their end.
    played: GameSet,
    /// What the refusal means for the command, said after it.
    consequence: &'static str,
}

impl<'a> FileCheck<'a> {
    fn new(info: &'a RunInfo, path: &'a Path) -> FileCheck<'a> {
        FileCheck {
            info,
            path,
            played: GameSet::default(),
            consequence: "nothing was merged or played",
        }
    }

    /// For `referee report`, which then makes no page.
    pub(crate) fn for_report(info: &'a RunInfo, path: &'a Path) -> FileCheck<'a> {
        FileCheck {
            consequence: "no report was made",
            ..FileCheck::new(info, path)
        }
    }

    /// Whether the record on line `line` can be a game of the run.
    pub(crate) fn check(&mut self, line: usize, record: &GameRecord) -> Result<(), String> {
        let info = self.info;
        let index = record.index;
        let wrong = if index == 0 {
            Some("game 0 is no game: games are numbered from 1".to_owned())
        } else if index > info.games {
            Some(format!(
                "game {index} is past the run's {} games",
                info.games
            ))
        } else if let Some((k, n)) = info.shard
            && (index - 1) % n != k - 1
        {
            Some(format!("game {index} is not one of shard {k}/{n}'s games"))
        } else if self.played.contains(index) {
            Some(format!("game {index} is recorded twice in this file"))
        } else {
            record
                .results
                .iter()
                .filter_map(|seat| seat.entrant.as_deref())
                .find(|name| !info.entrants.iter().any(|e| e == name))
                .map(|name| {
                    format!(
                        "entrant {:?} is not one of the run's ({})",
                        crate::text::terminal(name),
                        crate::text::terminal(&info.entrants.join(", "))
                    )
                })
        };
        if let Some(wrong) = wrong {
            return Err(format!(
                "{}, line {line}: {wrong}: not a record of this run (was the file edited?); {}",
                self.path.display(),
                self.consequence
            ));
        }
        if !record.is_void() {
            self.played.insert(index);
        }
        Ok(())
    }
}

/// What a record says of each seat: `a: score 1, rank 1, ok; b: ...`.
fn outcome_words(record: &GameRecord) -> String {
    let seats: Vec<String> = record
        .results
        .iter()
        .map(|s| {
            let mut words = vec![s.verdict.status.name().to_owned()];
            if let Some(won) = s.won {
                words.insert(0, if won { "won" } else { "lost" }.to_owned());
            }
            if let Some(points) = s.points() {
                words.insert(0, format!("score {points}"));
            }
            if let Some(rank) = s.rank {
                words.push(format!("rank {rank}"));
            }
            format!(
                "{}: {}",
                crate::text::terminal(s.entrant.as_deref().unwrap_or("?")),
                words.join(", ")
            )
        })
        .collect();
    seats.join("; ")
}

/// Prints the standings and, with an output directory, writes them as
/// JSON and CSV.
fn report(info: &RunInfo, tally: &Tally, out: Option<&Path>) -> Result<(), String> {
    let rows = tally.rows();
    let games = tally.games();
    println!(
        "standings after {games} game{}:",
        if games == 1 { "" } else { "s" }
    );
    println!("{}", standings::table(info.solo, &rows));
    if let Some(pairs) = standings::pairs_text(tally, &rows) {
        println!("{pairs}");
    }
    let per_array = tally.per_array();
    if !per_array.is_empty() {
        println!("standings per array:");
        println!("{}", standings::array_table(&per_array));
    }
    match out {
        Some(out) => write_standings(tally, &rows, out),
        None => Ok(()),
    }
}

/// Writes a run's standings (`rows`, from `tally`) into `out`: JSON and
/// CSV, per array when there are arrays, and the grade sheet.
pub(crate) fn write_standings(tally: &Tally, rows: &[Row], out: &Path) -> Result<(), String> {
    let per_array = tally.per_array();
    if !per_array.is_empty() {
        let csv = standings::array_csv(&per_array);
        write_json_and_csv(out, "standings-per-array", &per_array, &csv)?;
    }
    let pairs = tally.meetings(rows);
    if !pairs.is_empty() {
        write_json_and_csv(
            out,
            "standings-pairs",
            &pairs,
            &standings::pairs_csv(&pairs),
        )?;
    }
    write_json_and_csv(out, "standings", &rows, &standings::csv(rows))?;
    record::write_file(
        &out.join("grades.csv"),
        standings::grades_csv(rows, &tally.failures()).as_bytes(),
    )
}

/// `NAME.json` (`value`) and `NAME.csv` (`csv`) in `out`.
fn write_json_and_csv<T: Serialize>(
    out: &Path,
    name: &str,
    value: &T,
    csv: &str,
) -> Result<(), String> {
    write_json(&out.join(format!("{name}.json")), value)?;
    record::write_file(&out.join(format!("{name}.csv")), csv.as_bytes())
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    record::write_file(path, (text + "\n").as_bytes())
}

fn read_run_info(out: &Path) -> Result<RunInfo, String> {
    let path = out.join("run.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `referee merge OUT...`: the standings of shards run on several machines,
/// as one run would give them. The shards' records are read side by side
/// in game order, one at a time, and written out as they come: memory does
/// not grow with the games.
pub fn merge(outs: &[PathBuf], into: Option<&Path>) -> Status {
    let infos = match same_run(outs) {
        Ok(infos) => infos,
        Err(e) => {
            eprintln!("referee merge: {e}");
            return Status::Usage;
        }
    };
    let first = &infos[0];
    let merged = RunInfo {
        shard: None,
        ..first.clone()
    };
    let paths: Vec<PathBuf> = outs.iter().map(|out| records_path(out)).collect();
    let tally = match merge_records(&paths, &infos, &merged, into) {
        Ok(tally) => tally,
        Err(MergeError::Usage(e)) => {
            eprintln!("referee merge: {e}");
            return Status::Usage;
        }
        Err(MergeError::Io(e)) => {
            eprintln!("referee merge: {e}");
            return Status::Io;
        }
    };
    if let Some(into) = into
        && let Err(e) = stderr_log::merge(outs, into)
    {
        eprintln!("referee merge: {e}");
        return Status::Io;
    }
    let missing = (1..=first.games).filter(|&i| !tally.has(i));
    let (count, first_missing) = missing.fold((0u64, None), |(n, f), i| (n + 1, f.or(Some(i))));
    println!(
        "merge: {} shard output(s), {} of {} games",
        outs.len(),
        tally.games(),
        first.games
    );
    if let Some(first_missing) = first_missing {
        eprintln!(
            "referee merge: warning: {count} game(s) missing (the first: {first_missing}); the standings cover the rest",
        );
    }
    let reported = report(first, &tally, into).and_then(|()| match into {
        Some(into) => report::regenerate(into, None).map(|path| {
            println!("report: {}", path.display());
        }),
        None => Ok(()),
    });
    match reported {
        Ok(()) => Status::Pass,
        Err(e) => {
            eprintln!("referee merge: {e}");
            Status::Io
        }
    }
}

/// The run each of the shards `outs` is (its shard differs): refused
/// when there are none or they are of different runs.
fn same_run(outs: &[PathBuf]) -> Result<Vec<RunInfo>, String> {
    let infos: Vec<RunInfo> = outs
        .iter()
        .map(|o| read_run_info(o))
        .collect::<Result<_, _>>()?;
    let Some(first) = infos.first() else {
        return Err("no output directory given".to_owned());
    };
    for (info, out) in infos.iter().zip(outs) {
        if (&info.fingerprint, info.seed, info.games, &info.game)
            != (&first.fingerprint, first.seed, first.games, &first.game)
        {
            return Err(format!(
                "{} is from another tournament (or another seed) than {}",
                out.display(),
                outs[0].display()
            ));
        }
    }
    Ok(infos)
}

enum MergeError {
    /// The shards cannot be merged (they disagree, a file is unreadable).
    Usage(String),
    /// The merged output cannot be written.
    Io(String),
}

/// The merged output being written: records and games.log, each put in
/// place whole at the end, then games.pgn made from those records.
struct MergedOut {
    into: PathBuf,
    info: RunInfo,
    records: record::NewFile,
    log: record::NewFile,
}

impl MergedOut {
    fn create(into: &Path, info: &RunInfo) -> Result<MergedOut, String> {
        std::fs::create_dir_all(into).map_err(|e| format!("{}: {e}", into.display()))?;
        let create = |path: PathBuf| {
            record::NewFile::create(&path).map_err(|e| format!("{}: {e}", path.display()))
        };
        Ok(MergedOut {
            into: into.to_owned(),
            info: info.clone(),
            records: create(records_path(into))?,
            log: create(into.join("games.log"))?,
        })
    }

    fn write(&mut self, record: &GameRecord) -> Result<(), String> {
        let failed =
            |file: &record::NewFile, e: std::io::Error| format!("{}: {e}", file.path().display());
        self.records
            .write_all(record::to_line(record).as_bytes())
            .map_err(|e| failed(&self.records, e))?;
        self.log
            .write_all(gamelog::block(record).as_bytes())
            .map_err(|e| failed(&self.log, e))
    }

    /// Puts every file in place, once every record was read and agreed.
    fn commit(self) -> Result<(), String> {
        write_json(&self.into.join("run.json"), &self.info)?;
        for file in [self.records, self.log] {
            let path = file.path().to_owned();
            file.commit()
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        // Read from the shards nearly in game order: now wholly.
        gamelog::sort(&self.into.join("games.log"))?;
        let records = records_path(&self.into);
        pgn::PgnFile::rebuild(&self.into, &records, &self.info, "referee merge").map(drop)
    }
}

/// Reads the shards' records in game order, checks that shards holding
/// the same game agree on it, writes each game once into `into` and
/// tallies the standings.
fn merge_records(
    paths: &[PathBuf],
    shards: &[RunInfo],
    info: &RunInfo,
    into: Option<&Path>,
) -> Result<Tally, MergeError> {
    let mut checks: Vec<FileCheck> = shards
        .iter()
        .zip(paths)
        .map(|(shard, path)| FileCheck::new(shard, path))
        .collect();
    let mut out = into
        .map(|into| MergedOut::create(into, info))
        .transpose()
        .map_err(MergeError::Io)?;
    let mut tally = Tally::for_run(info);
    let mut recent = RecentGames::default();
    // A void game is written only if no shard played it to its end.
    let mut voids: BTreeMap<u64, GameRecord> = BTreeMap::new();
    for item in by_index(paths).map_err(MergeError::Usage)? {
        let (from, line, record) = item.map_err(MergeError::Usage)?;
        if !of_run(&record, &info.fingerprint, info.seed) {
            continue;
        }
        checks[from]
            .check(line, &record)
            .map_err(MergeError::Usage)?;
        if record.is_void() {
            if !tally.has(record.index) {
                voids.entry(record.index).or_insert(record);
            }
            continue;
        }
        recent
            .agrees(&record, from, paths)
            .map_err(MergeError::Usage)?;
        if tally.has(record.index) {
            continue;
        }
        voids.remove(&record.index);
        if let Some(out) = out.as_mut() {
            out.write(&record).map_err(MergeError::Io)?;
        }
        tally.add(units::summary(&record));
    }
    for (_, void) in voids {
        if let Some(out) = out.as_mut() {
            out.write(&void).map_err(MergeError::Io)?;
        }
        tally.add(void);
    }
    if let Some(out) = out {
        out.commit().map_err(MergeError::Io)?;
    }
    Ok(tally)
}

/// The records of several results files, each with the number of its
/// file, merged by game index: each file is nearly in game order (games
/// finish out of order by the few played at once), so taking the smallest
/// next index of any file keeps the whole nearly in order.
fn by_index(
    paths: &[PathBuf],
) -> Result<impl Iterator<Item = Result<(usize, usize, GameRecord), String>>, String> {
    type Numbered = Result<(usize, GameRecord), String>;
    type Records = std::iter::Peekable<Box<dyn Iterator<Item = Numbered>>>;
    let mut files: Vec<Records> = Vec::new();
    for path in paths {
        let records = record::numbered_records::<GameRecord>(path).map_err(|e| e.to_string())?;
        let records: Box<dyn Iterator<Item = Numbered>> =
            Box::new(records.map(|r| r.map_err(|e| e.to_string())));
        files.push(records.peekable());
    }
    Ok(std::iter::from_fn(move || {
        // An error comes first; then the smallest index.
        let next = (0..files.len())
            .filter_map(|i| {
                let head = files[i].peek()?;
                Some((head.as_ref().map_or(0, |(_, r)| r.index), head.is_ok(), i))
            })
            .min()?;
        let i = next.2;
        Some(files[i].next()?.map(|(line, record)| (i, line, record)))
    }))
}

/// The games merged most recently, so that a game two shards both hold
/// (a shard run twice, or merged twice) is checked to say the same: shards
/// that disagree (different programs under one name, a nondeterministic
/// game) must not be merged by argument order. Games come nearly in order,
/// so the last [`standings::REORDER_WINDOW`] are enough.
#[derive(Default)]
struct RecentGames {
    games: BTreeMap<u64, (GameRecord, usize)>,
}

impl RecentGames {
    fn agrees(
        &mut self,
        record: &GameRecord,
        from: usize,
        paths: &[PathBuf],
    ) -> Result<(), String> {
        match self.games.entry(record.index) {
            Entry::Vacant(slot) => {
                slot.insert((units::summary(record), from));
                if self.games.len() > standings::REORDER_WINDOW {
                    self.games.pop_first();
                }
                Ok(())
            }
            Entry::Occupied(slot) => {
                let (earlier, earlier_from) = slot.get();
                if earlier.same_outcome(record) {
                    return Ok(());
                }
                Err(format!(
                    "game {} is recorded differently in {} and {}:\n  {}\n  {}\n\
                     the shards are not of one run; merge only shards whose records agree",
                    record.index,
                    paths[*earlier_from].display(),
                    paths[from].display(),
                    outcome_words(earlier),
                    outcome_words(record),
                ))
            }
        }
    }
}

impl Tally {
    /// The standings of the run `info`.
    fn for_run(info: &RunInfo) -> Tally {
        let (first, step) = info.shard.unwrap_or((1, 1));
        Tally::new(info.solo, &info.entrants, info.gauntlet.as_deref(), None)
            .games_from(first, step)
    }
}

/// Live progress: a bar on a terminal, a log line every few seconds
/// otherwise; nothing at all with `--no-progress` (and in ci).
struct Progress {
    enabled: bool,
    bar: Option<indicatif::ProgressBar>,
    total: u64,
    done: u64,
    started: Instant,
    last_line: Instant,
    last_leader: Instant,
}

impl Progress {
    fn new(enabled: bool, total: u64, done: u64) -> Progress {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} games  {per_sec}  ETA {eta}  {msg}",
                )
                .expect("a valid template"),
            );
            bar.set_position(done);
            bar
        });
        Progress {
            enabled,
            bar,
            total,
            done,
            started: Instant::now(),
            last_line: Instant::now(),
            last_leader: Instant::now() - Duration::from_secs(60),
        }
    }

    fn tick(&mut self, finished: &Tally) {
        self.done += 1;
        let leader = || {
            finished.rows().first().map_or(String::new(), |r| {
                format!("leader: {}", crate::text::terminal(&r.entrant))
            })
        };
        if let Some(bar) = &self.bar {
            bar.inc(1);
            if self.last_leader.elapsed() > Duration::from_millis(500) {
                bar.set_message(leader());
                self.last_leader = Instant::now();
            }
        } else if self.enabled && self.last_line.elapsed() > Duration::from_secs(5) {
            let rate = finished.games() as f64 / self.started.elapsed().as_secs_f64();
            eprintln!(
                "tournament: {}/{} games, {rate:.1} games/s, {}",
                self.done,
                self.total,
                leader()
            );
            let _ = std::io::stderr().flush();
            self.last_line = Instant::now();
        }
    }

    /// Prints `text` on standard output, above the bar if there is one.
    fn print(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| println!("{text}")),
            None => println!("{text}"),
        }
        let _ = std::io::stdout().flush();
    }

    /// Prints `text` on standard error, above the bar if there is one.
    fn warn(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
