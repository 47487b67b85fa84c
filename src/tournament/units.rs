//! What a tournament plays: entrants resolved and built, and one game (a
//! *unit*) at a time, whatever the game kind, as one record.
//!
//! Game `i` of a tournament with seed `s` is fully decided by `s` and `i`
//! (its deal, deck, start cell, seats), so games can run in any order, on
//! any machine, and be resumed or merged.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::TournamentConfig;
use super::schedule::{self, Schedule};
use super::spec::Spec;
use crate::bot::build::{self, BuildOptions};
use crate::bot::{BotLimits, BotSpec, Environment, SpawnError, spawn};
use crate::exit::Refusal;
use crate::game::{Deal, Game, GameRecord, Round, Seat, SeatResult, Seating, Sitting};
use crate::outcome::{self, Disqualified, Verdict};
use crate::parallel;
use crate::record;
use crate::units::TomlDuration;

/// An entrant, ready to run or disqualified.
#[derive(Clone, Debug)]
pub struct Entrant {
    pub name: String,
    pub program: Result<BotSpec, Disqualified>,
    /// Its `options`, for an external game's judge (an empty object when
    /// it has none).
    pub options: serde_json::Value,
    /// Its own clock, over the game's (an external game's seat).
    pub time_control: Option<crate::bot::clock::TimeControl>,
}

/// Everything needed to play any game of a tournament.
pub struct Plan {
    pub game: Arc<dyn Game>,
    pub entrants: Vec<Entrant>,
    /// What decides the games apart from the seed (see `record::fingerprint`).
    pub fingerprint: String,
    limits: BotLimits,
    /// A gauntlet's entrant (its position), who sits at every table.
    gauntlet: Option<usize>,
    /// Head-to-head pairs: games `2k − 1` and `2k` are played on the same
    /// setup (that of game `k`) with the first two entrants' seats swapped.
    paired: bool,
    /// Who sits at each table, dealt at the first game between players.
    schedule: std::sync::OnceLock<Schedule>,
    /// What a sandboxed bot never sees (see [`play_unit`]); empty without
    /// `--sandbox`.
    hidden: Vec<PathBuf>,
    /// Entrants whose `command` (no folder of theirs) names a program
    /// found nowhere, each with why: the organiser's mistake, which a
    /// tournament refuses before its first game (ci fails their case).
    pub unfound: Vec<String>,
}

pub(crate) fn duration(value: &Option<TomlDuration>, default: Duration) -> Duration {
    value.map_or(default, |d| d.0)
}

/// `path` relative to the tournament file's directory.
pub(crate) fn under(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        base.join(path)
    }
}

/// Why `--no-build` cannot play an entrant, if it cannot: its program, in its
/// directory, is missing or older than its sources: playing it would be
/// the run's mistake, not the entrant's. The program is the directory's
/// `pc2`, or the entrant's command when that is a file of the directory
/// (`./executeit`); a command found elsewhere (`python3`) is not checked.
fn prebuilt_problem(name: &str, spec: &BotSpec) -> Option<String> {
    let dir = spec.dir.as_deref()?;
    let program = PathBuf::from(build::as_submitted(spec).program);
    let program = match program.is_relative() {
        true => dir.join(program),
        false => program,
    };
    if !program.starts_with(dir) {
        return None;
    }
    build::check_prebuilt(dir, &program)
        .err()
        .map(|why| format!("{}: {why}", crate::text::terminal(name)))
}

/// The bots' limits: the command line's, with the file's and the game's
/// where they give one.
fn bot_limits(
    config: &TournamentConfig,
    l: &super::spec::Limits,
    game_startup: Option<Duration>,
) -> BotLimits {
    limits_over(config.limits, l, game_startup)
}

/// `limits` (the command line's) with the file's and the game's where
/// they give one.
pub(crate) fn limits_over(
    mut limits: BotLimits,
    l: &super::spec::Limits,
    game_startup: Option<Duration>,
) -> BotLimits {
    limits.grace = duration(&l.grace, limits.grace);
    limits.startup = l
        .startup
        .map(|d| d.0)
        .or(game_startup)
        .unwrap_or(limits.startup);
    if let Some(max_line) = l.max_line {
        limits.max_line = max_line;
    }
    limits
}

/// A run whose games cannot give every entrant a table is refused before
/// anything is built (a class of 200 builds for minutes): the count
/// `--games` or the file gives; a resumed run's is checked with the rest
/// of the run (see `Plan::check_share`).
fn refuse_short_runs(
    game: &dyn Game,
    spec: &Spec,
    config: &TournamentConfig,
) -> Result<(), String> {
    let Seating::Table { seats } = game.seating() else {
        return Ok(());
    };
    if config.resume {
        return Ok(());
    }
    let gauntlet = spec.format == super::spec::Format::Gauntlet && spec.gauntlet.is_some();
    let games = config.games.unwrap_or(spec.games);
    let entrants = spec.entrants.len();
    schedule::check_size(entrants, seats, gauntlet, games)
        .map_err(|why| format!("{}: {why}", config.file.display()))?;
    schedule::check_share(entrants, seats, gauntlet, games).map(|_| ())
}

/// `spec` if its program can be found; a program that cannot be started
/// is found once, before the games, not as a crash in every game.
pub(crate) fn located(spec: BotSpec) -> Result<BotSpec, Disqualified> {
    match spec.locate() {
        Ok(_) => Ok(spec),
        Err(e) => Err(Disqualified::cannot_start(e.to_string())),
    }
}

/// Whether `why` a program cannot start is that it is found nowhere: not
/// a file where its path leads, not on `PATH`.
fn found_nowhere(why: &SpawnError) -> bool {
    matches!(
        why,
        SpawnError::NotFound(_) | SpawnError::NotOnPath(_) | SpawnError::NotBesideOrOnPath { .. }
    )
}

/// How to run an entrant: its directory's `pc2` once built, or its
/// command (a relative path in it is its directory's, else the file's);
/// with the environment `env`.
pub(crate) fn entrant_program(
    dir: Option<Result<PathBuf, String>>,
    command: Option<&[String]>,
    base: &Path,
    env: Environment,
) -> Result<BotSpec, Disqualified> {
    match (dir, command) {
        (Some(Err(why)), _) => Err(Disqualified::build_failed(why)),
        (Some(Ok(dir)), None) => Ok(BotSpec {
            program: build::program(&dir).into_os_string(),
            args: vec![],
            dir: Some(dir),
            hide: vec![],
            env,
        }),
        (dir, Some(command)) => {
            let dir = dir.and_then(Result::ok);
            let first = Path::new(&command[0]);
            let beside = dir.as_deref().unwrap_or(base);
            // A bare name is looked for beside the file (or in the
            // entrant's folder, see `BotSpec::locate`) before `PATH`.
            let program = if (command[0].contains('/') && first.is_relative())
                || (dir.is_none() && !command[0].contains('/') && beside.join(first).is_file())
            {
                under(beside, first).into_os_string()
            } else {
                OsString::from(&command[0])
            };
            Ok(BotSpec {
                program,
                args: command[1..].iter().map(OsString::from).collect(),
                dir,
                hide: vec![],
                env,
            })
        }
        (None, None) => unreachable!("checked when the file was read"),
    }
}

/// What decides the games: the file's limits and the command line's (a
/// resumed run must play under the same rules), each entrant as
/// submitted, and the file's `env` tables. A disqualification counts by
/// its status only: its message (a build log's tail) differs from run to
/// run. `--env` does not count: shards on different machines may pass on
/// different values of the same variable.
fn fingerprint(
    game: &dyn crate::game::Game,
    spec: &Spec,
    limits: BotLimits,
    entrants: &[Entrant],
    gauntlet: Option<usize>,
) -> String {
    let rules = BotLimits {
        echo_stderr: false,
        ..limits
    };
    let mut parts = vec![
        game.name(),
        format!("{:?}", spec.limits),
        format!("{rules:?}"),
    ];
    for e in entrants {
        // As submitted: not where this run keeps its copy of a `pc2`.
        let program = match &e.program {
            Ok(spec) => format!("{:?}", build::as_submitted(spec)),
            Err(why) => why.status.name().to_owned(),
        };
        parts.push(format!("{} {program}", e.name));
        if e.options.as_object().is_some_and(|o| !o.is_empty()) {
            parts.push(format!("options {} {}", e.name, e.options));
        }
        if let Some(control) = e.time_control {
            parts.push(format!("time_control {} {control}", e.name));
        }
    }
    // Games come in tables dealt by shares (see `schedule`): runs of
    // earlier referees, which slid one table along the entrants, are
    // neither continued nor merged with these.
    parts.push("tables".to_owned());
    let tables = std::iter::once(("", &spec.env))
        .chain(spec.entrants.iter().map(|e| (e.name.as_str(), &e.env)));
    for (name, table) in tables.filter(|(_, t)| !t.vars().is_empty()) {
        parts.push(format!("env {name} {:?}", table.vars()));
    }
    parts.extend(game.fingerprint());
    // The judge's options over its game file's: another match.
    if let Some(options) = spec.options.as_ref().filter(|o| !o.is_empty()) {
        parts.push(format!("game options {options}"));
    }
    if let Some(g) = gauntlet {
        parts.push(format!("gauntlet {g}"));
    }
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    record::fingerprint(&refs)
}

/// What a sandboxed entrant never sees, building or playing: the
/// tournament's own files (its deals, a judge) and its output. Under
/// --sandbox builds run in it too: bubblewrap must be there before
/// anything is built.
fn hidden_from_entrants(
    base: &Path,
    config: &TournamentConfig,
    sandbox: bool,
) -> Result<Vec<PathBuf>, Refusal> {
    if sandbox {
        spawn::check_sandbox().map_err(|e| e.to_string())?;
    }
    let hidden: Vec<PathBuf> = [base.to_owned(), config.file.clone()]
        .into_iter()
        .chain(config.out.iter().cloned())
        .collect();
    if sandbox {
        spawn::check_hidden(&hidden).map_err(|e| e.to_string())?;
    }
    Ok(hidden)
}

/// Every entrant's folder built and its program found: the entrants, in
/// order (a failed build or a missing program disqualifies one), the
/// commands found nowhere, and the folders. With --no-build, an entrant
/// not built refuses the run.
async fn built_entrants(
    spec: &Spec,
    base: &Path,
    build: &BuildOptions,
    env: &Environment,
) -> Result<(Vec<Entrant>, Vec<String>, Vec<PathBuf>), Refusal> {
    let dirs: Vec<Option<PathBuf>> = spec
        .entrants
        .iter()
        .map(|e| e.dir.as_ref().map(|d| under(base, d)))
        .collect();
    let to_build: Vec<PathBuf> = dirs.iter().flatten().cloned().collect();
    let built = build::build_folders(&to_build, build).await;
    if let Some(why) = build::referees_failure(&built) {
        return Err(Refusal::internal(why));
    }
    let mut built = built.into_iter().map(|b| b.map_err(|e| e.to_string()));
    let mut entrants = Vec::new();
    let mut not_built = Vec::new();
    let mut unfound = Vec::new();
    for (e, dir) in spec.entrants.iter().zip(&dirs) {
        let dir = dir
            .as_ref()
            .map(|_| built.next().expect("one build per dir"));
        let program = entrant_program(dir, e.command.as_deref(), base, env.with(&e.env.vars()));
        if let (true, Ok(spec)) = (build.prebuilt, &program) {
            not_built.extend(prebuilt_problem(&e.name, spec));
        }
        if let (None, Ok(spec)) = (&e.dir, &program)
            && let Err(why) = spec.locate()
            && found_nowhere(&why)
        {
            unfound.push(format!(
                "entrant {}: cannot start its command: {why}",
                crate::text::terminal(&e.name)
            ));
        }
        let program = program.and_then(located);
        entrants.push(Entrant {
            name: e.name.clone(),
            program,
            options: e.options_json(),
            time_control: e.time_control,
        });
    }
    if !not_built.is_empty() {
        return Err(Refusal::from(format!(
            "--no-build: not every entrant is built:\n  {}",
            not_built.join("\n  ")
        )));
    }
    Ok((entrants, unfound, to_build))
}

impl Plan {
    /// Resolves and builds the entrants and reads what the games need.
    pub async fn prepare(
        spec: &Spec,
        base: &Path,
        config: &TournamentConfig,
    ) -> Result<Plan, Refusal> {
        let l = &spec.limits;
        let game = crate::game::load(
            &spec.game,
            l,
            spec.options.as_ref(),
            spec.entrants.len(),
            base,
            config.record_moves,
        )?;
        refuse_short_runs(&*game, spec, config)?;
        let limits = bot_limits(config, l, game.startup());
        let hidden = hidden_from_entrants(base, config, limits.sandbox)?;
        // The most specific wins: the entrant's over the file's over --env.
        // A folder is built once, whoever shares it: with the file's.
        let env = Environment::clean(&config.env).with(&spec.env.vars());
        let build = BuildOptions {
            make: l.make.clone().unwrap_or_else(|| build::DEFAULT_MAKE.into()),
            timeout: duration(&l.build_timeout, build::DEFAULT_BUILD_TIMEOUT),
            logs: config.out.as_ref().map(|o| o.join("build")),
            sandbox: limits.sandbox,
            hide: hidden.clone(),
            prebuilt: config.build == super::BuildMode::Prebuilt,
            env: env.clone(),
        };
        let (entrants, unfound, folders) = built_entrants(spec, base, &build, &env).await?;
        let gauntlet = match (spec.format, &spec.gauntlet) {
            (super::spec::Format::Gauntlet, Some(name)) => {
                spec.entrants.iter().position(|e| &e.name == name)
            }
            _ => None,
        };
        let fingerprint = fingerprint(&*game, spec, limits, &entrants, gauntlet);
        // Every entrant's folder (built or not) is hidden from the others
        // too; its own is shown again. Not in the fingerprint: what a
        // sandbox hides depends on where a run writes. Kept once, and
        // given to each bot as it is seated: a copy in each entrant's
        // program grew with the square of the class (a class of 20,000
        // folders held 400 million paths, 23 GB).
        let hidden: Vec<PathBuf> = match limits.sandbox {
            true => hidden.into_iter().chain(folders).collect(),
            false => vec![],
        };
        Ok(Plan {
            game,
            entrants,
            fingerprint,
            limits,
            gauntlet,
            paired: false,
            schedule: std::sync::OnceLock::new(),
            hidden,
            unfound,
        })
    }

    /// The plan of a head-to-head test between the first two entrants:
    /// games come in pairs on one setup, the two entrants' seats swapped.
    pub fn paired(mut self) -> Plan {
        self.paired = true;
        self.fingerprint = record::fingerprint(&[&self.fingerprint, "paired"]);
        self
    }

    /// The setup index of a game played alone: head to head, games
    /// `2k − 1` and `2k` share game `k`'s.
    fn solo_setup(&self, index: u64) -> u64 {
        if self.paired {
            index.div_ceil(2)
        } else {
            index
        }
    }

    /// Which game `index` is: games between `K` players come in rounds of
    /// `K` games on one setup (the round's opening), the seats rotating
    /// (see [`Plan::table_seats`]); a game played alone is a round of its
    /// own.
    pub fn deal(&self, index: u64) -> Deal {
        match self.game.seating() {
            Seating::Solo => {
                let setup = self.solo_setup(index);
                Deal {
                    index: setup,
                    setup,
                    round: Round {
                        opening: setup,
                        rotation: 0,
                    },
                }
            }
            Seating::Table { seats } => {
                let round = Round::of(index, seats);
                Deal {
                    index,
                    setup: round.opening,
                    round,
                }
            }
        }
    }

    /// Which entrant sits in each of `seats` seats in game `index`: game
    /// `r` of round `o` (see [`Plan::deal`]) seats the round's table
    /// rotated by `r`, seat `s` holding the table's `(s + r) mod seats`,
    /// so that over a round every entrant of the table has every seat
    /// once. The round's table is the schedule's `o`-th
    /// ([`super::schedule`]): the entrants with the fewest tables, mixed
    /// so that every two meet about equally often; at tables of two, a
    /// round robin of pairs; a gauntlet's entrant at every table.
    ///
    /// Head to head (`sprt`) is the round robin of two entrants: each
    /// round a colour-swapped pair on one opening.
    pub fn table_seats(&self, index: u64, seats: usize) -> Vec<usize> {
        let round = Round::of(index, seats);
        let table = self.round_table(round.opening, seats);
        (0..table.len())
            .map(|s| table[(s + round.rotation as usize) % table.len()])
            .collect()
    }

    /// The entrants of round `opening`'s table, in its first game's seats.
    fn round_table(&self, opening: u64, seats: usize) -> Vec<usize> {
        let schedule = self
            .schedule
            .get_or_init(|| Schedule::new(self.entrants.len(), seats, self.gauntlet));
        schedule.table(opening)
    }

    /// What `games` games give each entrant: an error when some entrant
    /// would sit at no table, or when the schedule would take too much
    /// memory; a note when the last table is partial (see
    /// [`schedule::check_share`] and [`schedule::check_size`]).
    pub fn check_share(&self, games: u64) -> Result<Option<String>, String> {
        let entrants = self.entrants.len();
        match self.game.seating() {
            Seating::Solo => Ok(None),
            Seating::Table { seats } if self.paired => {
                schedule::check_share(entrants, seats, false, games).map(|_| None)
            }
            Seating::Table { seats } => {
                let gauntlet = self.gauntlet.is_some();
                schedule::check_size(entrants, seats, gauntlet, games)?;
                schedule::check_share(entrants, seats, gauntlet, games)
            }
        }
    }

    pub fn names(&self) -> Vec<String> {
        self.entrants.iter().map(|e| e.name.clone()).collect()
    }

    pub fn disqualified(&self) -> Vec<(String, Disqualified)> {
        self.entrants
            .iter()
            .filter_map(|e| {
                e.program
                    .as_ref()
                    .err()
                    .map(|why| (e.name.clone(), why.clone()))
            })
            .collect()
    }

    /// Plays games `indices` with `seed`, `jobs` at once, each on a thread
    /// of its own (see [`crate::parallel`]); `pin` binds each thread and its
    /// bots to one CPU. Records arrive as games finish.
    pub fn play_all(
        self: &Arc<Plan>,
        indices: impl Iterator<Item = u64> + Send + 'static,
        seed: u64,
        jobs: usize,
        pin: bool,
    ) -> parallel::Games<GameRecord> {
        let (plan, ending) = (Arc::clone(self), Arc::clone(self));
        // A pinned worker's bots inherit its CPU binding.
        parallel::run(
            indices,
            jobs,
            pin,
            move |index, _cpu| {
                let plan = Arc::clone(&plan);
                async move { plan.play(index, seed).await }
            },
            move || {
                let plan = Arc::clone(&ending);
                async move { plan.game.end_of_thread().await }
            },
        )
    }

    /// Plays game `index` of the tournament with `seed`: one record.
    pub async fn play(&self, index: u64, seed: u64) -> GameRecord {
        let deal = self.deal(index);
        let players: Vec<(usize, &Entrant)> = match self.game.seating() {
            Seating::Solo => self.entrants.iter().enumerate().collect(),
            Seating::Table { seats } => self
                .table_seats(index, seats)
                .into_iter()
                .map(|e| (e, &self.entrants[e]))
                .collect(),
        };
        let (game, limits) = (&*self.game, self.limits);
        play_unit(game, limits, &self.hidden, &players, index, deal, seed).await
    }
}

/// Plays game `index` of a run, `game` at `deal` with `seed`: one record. A table
/// game seats `players` in order; a game played alone is played by each
/// of them in turn on the same setup (a disqualified one is recorded as
/// such). Each player is `(bot, entrant)`: `bot` tells the entrant's
/// processes apart (a process kept between games is its bot's). Each
/// bot is seated with `hidden` to hide, over its own program's.
pub async fn play_unit(
    game: &dyn Game,
    limits: BotLimits,
    hidden: &[PathBuf],
    players: &[(usize, &Entrant)],
    index: u64,
    deal: Deal,
    seed: u64,
) -> GameRecord {
    let seat = |&(bot, e): &(usize, &Entrant)| Seat {
        entrant: bot,
        name: e.name.clone(),
        program: e.program.clone().map(|mut program| {
            program.hide.extend_from_slice(hidden);
            program
        }),
        options: e.options.clone(),
        time_control: e.time_control,
    };
    let mut setup = Default::default();
    let mut judge_error = None;
    let mut results = Vec::new();
    match game.seating() {
        // Every entrant on the same setup, one after the other.
        Seating::Solo => {
            for player in players {
                let e = player.1;
                let result = match &e.program {
                    Err(why) => SeatResult::disqualified(why),
                    Ok(_) => {
                        let played = game
                            .play(Sitting::new(deal, seed, &[seat(player)], limits))
                            .await;
                        // A refusal voids the game: the others need not play.
                        let refused = played.setup.contains_key(crate::game::record::REFUSED);
                        setup = played.setup;
                        if refused {
                            return unplayed(game, index, seed, setup);
                        }
                        judge_error = judge_error.or(played.judge_error);
                        played.results.into_iter().next().unwrap_or_else(|| {
                            SeatResult::of(Verdict::of(outcome::Status::Internal))
                        })
                    }
                };
                results.push(SeatResult {
                    entrant: Some(e.name.clone()),
                    ..result
                });
            }
        }
        Seating::Table { .. } => {
            let seats: Vec<Seat> = players.iter().map(seat).collect();
            let played = game.play(Sitting::new(deal, seed, &seats, limits)).await;
            setup = played.setup;
            judge_error = played.judge_error;
            results = played
                .results
                .into_iter()
                .zip(&seats)
                .map(|(result, seat)| SeatResult {
                    entrant: Some(seat.name.clone()),
                    ..result
                })
                .collect();
        }
    }
    GameRecord {
        results,
        judge_error,
        ..unplayed(game, index, seed, setup)
    }
}

/// Game `index`'s record with `setup` and no result: a game whose settings
/// the judge refused, never recorded (see [`GameRecord::refusal`]), or a
/// played one's before its results.
fn unplayed(
    game: &dyn Game,
    index: u64,
    seed: u64,
    setup: serde_json::Map<String, serde_json::Value>,
) -> GameRecord {
    GameRecord {
        game: game.name(),
        index,
        seed,
        tournament: None,
        format: None,
        results: Vec::new(),
        judge_error: None,
        time: record::timestamp(),
        referee: record::REFEREE_VERSION.to_owned(),
        setup,
    }
}

/// Records keep stderr out (it is in the stderr files), and leave out
/// empty fields.
/// What a run keeps in memory of a finished game, for the standings it
/// prints (every N games, on an interrupt, at the end without `--out`):
/// the record without what only the records file and replays need (each
/// move's time, the moves, frames, stderr), which grows with the game.
pub fn summary(record: &GameRecord) -> GameRecord {
    let mut record = record.clone();
    strip_stderr(&mut record);
    for result in &mut record.results {
        result.micros = None;
        result.detail.clear();
    }
    for replay in ["moves", "times", "frames", "log"] {
        record.setup.remove(replay);
    }
    record
}

pub fn strip_stderr(record: &mut GameRecord) {
    for result in &mut record.results {
        result.stderr = None;
        result.detail.retain(|_, v| !v.is_null());
    }
}
