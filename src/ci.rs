//! `referee ci SUITE.toml`: expectations about bots, checked by playing, for
//! authors who want their bot's strength and speed guarded in CI.
//!
//! Each `[[case]]` names a game, the bot, opponents (Chomp), how many games
//! and the seed, the game's limits, and what must hold. Cases are played
//! with the tournament machinery (`crate::tournament`), so a case is a small
//! tournament whose first entrant is the bot. See `docs/ci.md`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::bot::BotLimits;
use crate::bot::environment::Vars;
use crate::bot::usage::human_bytes;
use crate::exit::{Refusal, Status};
use crate::game::{GameRecord, GameRef, SeatResult, Seating};
use crate::stats::{self, Pairs, SprtSpec, sprt_figures, wilson95};
use crate::tournament::TournamentConfig;
use crate::tournament::spec::{self, EntrantSpec, EnvTable, Limits, Spec, toml_error};
use crate::tournament::units::Plan;
use crate::units::{TomlDuration, TomlSize};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Suite {
    /// Variables every bot and build of every case gets, on top of `--env`'s.
    #[serde(default)]
    env: EnvTable,
    #[serde(rename = "case", default)]
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    game: GameRef,
    #[serde(default)]
    dir: Option<PathBuf>,
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    opponents: Vec<EntrantSpec>,
    /// `gauntlet`: the case's bot sits at every table, its opponents
    /// rotating through the other seats (default `round-robin`: every
    /// entrant rotates, as in a tournament).
    #[serde(default)]
    format: spec::Format,
    /// Head to head: the version the bot is tested against.
    #[serde(default)]
    baseline: Option<Baseline>,
    games: u64,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    jobs: Option<usize>,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    expect: Expect,
    /// Variables the case's bot gets, on top of the suite's (as an
    /// entrant's `env`; its opponents have their own).
    #[serde(default)]
    env: EnvTable,
}

/// A head-to-head case's baseline: a command, or a table like an
/// entrant's (`command` and/or `dir`).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum Baseline {
    Command(Vec<String>),
    Entrant {
        #[serde(default)]
        dir: Option<PathBuf>,
        #[serde(default)]
        command: Option<Vec<String>>,
        #[serde(default)]
        env: EnvTable,
    },
}

/// The baseline's entrant name in the case's records.
const BASELINE: &str = "baseline";

/// What must hold. Every field is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    /// No `crashed`, `closed_output`, `limit`, `cannot_start`,
    /// `build_failed`.
    #[serde(default)]
    no_crash: bool,
    /// No `timeout` of any phase (Chomp's starvations included).
    #[serde(default)]
    no_timeout: bool,
    /// No `incorrect`.
    #[serde(default)]
    no_incorrect: bool,
    /// Even Steven: no winnable hand lost.
    #[serde(default)]
    no_unnecessary_loss: bool,
    /// Wilson 95% lower bound of the win rate at least this.
    win_rate: Option<f64>,
    /// Stop a win-rate case as soon as a sequential test decides it.
    #[serde(default)]
    sequential: bool,
    /// The sequential test's indifference margin above `win_rate`.
    margin: Option<f64>,
    /// Chomp: mean score at least this.
    mean_score: Option<f64>,
    /// The slowest move at most this.
    max_move: Option<TomlDuration>,
    /// The 99th percentile of move times at most this.
    p99_move: Option<TomlDuration>,
    /// The bot's peak resident memory (all its processes) in any game at
    /// most this, e.g. "256MiB".
    max_memory: Option<TomlSize>,
    /// Head to head: the bot is better than its baseline, by a
    /// pentanomial SPRT.
    sprt: Option<toml::Spanned<SprtSpec>>,
}

/// Error rates of the sequential test, each way.
const SPRT_ALPHA: f64 = 0.05;
const SPRT_BETA: f64 = 0.05;
const DEFAULT_MARGIN: f64 = 0.05;
/// The z of Wilson's 95% interval.
const Z95: f64 = 1.959_964;

/// A case's verdict.
#[derive(Debug)]
struct Outcome {
    name: String,
    /// `None` for the suite itself.
    game: Option<String>,
    pass: bool,
    /// The referee, not the bot, failed: JUnit's `error`, not `failure`.
    referee_error: bool,
    /// What was measured.
    figures: String,
    /// Why it failed (empty when it passed).
    reasons: Vec<String>,
    /// A failed judge's last lines on standard error (its games are void).
    judge_stderr: String,
    /// The bot's last lines on standard error.
    stderr: String,
    time: Duration,
    /// Figures for JUnit's properties (the head-to-head test's).
    properties: Vec<(String, String)>,
}

impl Outcome {
    /// A case (or the suite) that failed without a game: `referee_error`
    /// when the referee, not the bot, is to blame.
    fn unplayed(
        name: String,
        game: Option<String>,
        referee_error: bool,
        reasons: Vec<String>,
    ) -> Outcome {
        let figures = match game {
            Some(_) => "0 games".into(),
            None => String::new(),
        };
        Outcome {
            name,
            game,
            pass: false,
            referee_error,
            figures,
            reasons,
            stderr: String::new(),
            judge_stderr: String::new(),
            time: Duration::ZERO,
            properties: vec![],
        }
    }
}

/// Runs a suite; with `junit`, writes the JUnit XML report there. `env`
/// (`--env`) is set for every bot and build.
pub async fn run(file: &Path, junit: Option<&Path>, limits: BotLimits, env: &Vars) -> Status {
    let base = file
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let suite = match load(file, &base) {
        Ok(suite) => suite,
        Err(problems) => return refuse_suite(file, junit, &problems),
    };
    // Every bot of every case is built and checked before the first game,
    // so that one that cannot run is named at once, not hours later.
    let mut plans = Vec::new();
    for case in &suite.cases {
        let plan = prepare(&case_spec(case, &suite.env), case, &base, limits, env).await;
        // The referee's own failure is no case's: the run stops (70).
        if let Err(refusal) = &plan
            && refusal.status == Status::Internal
        {
            eprintln!("referee ci: case {:?}: {}", case.name, refusal.message);
            return Status::Internal;
        }
        plans.push(plan.map_err(|refusal| refusal.message));
    }
    warn_if_crowded(&suite.cases, &plans);
    let mut outcomes = Vec::new();
    for (case, plan) in suite.cases.iter().zip(plans) {
        let outcome = match run_case(case, plan).await {
            Ok(outcome) => outcome,
            Err(e) => Outcome::unplayed(case.name.clone(), Some(case.game.name()), true, vec![e]),
        };
        print_outcome(&outcome);
        outcomes.push(outcome);
    }
    let passed = outcomes.iter().filter(|o| o.pass).count();
    println!("ci: {passed} of {} cases passed", outcomes.len());
    if let Some(path) = junit
        && let Err(e) = write_junit(path, file, &outcomes)
    {
        eprintln!("referee ci: {}: {e}", path.display());
        return Status::Io;
    }
    if passed == outcomes.len() {
        Status::Pass
    } else {
        Status::Fail
    }
}

/// A suite that is not valid: its problems, and (a CI's report step still
/// finds a report) a JUnit file saying why.
fn refuse_suite(file: &Path, junit: Option<&Path>, problems: &[String]) -> Status {
    eprintln!(
        "referee ci: {}: the suite is not valid; nothing was played:",
        file.display()
    );
    for p in problems {
        eprintln!("  {p}");
    }
    if let Some(path) = junit {
        let reasons = problems
            .iter()
            .map(|p| format!("{}: {p}", file.display()))
            .collect();
        let outcome = Outcome::unplayed("suite".into(), None, true, reasons);
        if let Err(e) = write_junit(path, file, &[outcome]) {
            eprintln!("referee ci: {}: {e}", path.display());
            return Status::Io;
        }
    }
    Status::Usage
}

/// One warning for the run, for its most crowded case.
fn warn_if_crowded(cases: &[Case], plans: &[Result<std::sync::Arc<Plan>, String>]) {
    let crowded = cases.iter().zip(plans).filter_map(|(case, plan)| {
        let jobs = case.jobs.unwrap_or_else(crate::parallel::cpus);
        let seats = plan.as_ref().ok()?.game.seating().bots_at_once();
        Some((jobs.min(case.games as usize), seats))
    });
    if let Some((jobs, seats)) = crowded.max_by_key(|(jobs, seats)| jobs * seats) {
        crate::parallel::warn_if_oversubscribed("ci", Some((jobs, "jobs =")), seats);
    }
}

/// A case's line, and a failed judge's last lines on standard error.
fn print_outcome(outcome: &Outcome) {
    if outcome.pass {
        println!("PASS {}: {}", outcome.name, outcome.figures);
        return;
    }
    println!(
        "FAIL {}: {}; {}",
        outcome.name,
        outcome.figures,
        outcome.reasons.join("; ")
    );
    if !outcome.judge_stderr.is_empty() {
        eprintln!(
            "referee ci: {}: the judge's last lines on standard error:",
            outcome.name
        );
        eprint!(
            "{}",
            crate::text::quoted_lines(outcome.judge_stderr.lines())
        );
    }
}

/// Reads a suite and checks it whole: every problem, each naming its case
/// (and, for what TOML can place, the line).
fn load(file: &Path, base: &Path) -> Result<Suite, Vec<String>> {
    let text = std::fs::read_to_string(file).map_err(|e| vec![e.to_string()])?;
    let mut suite: Suite = toml::from_str(&text).map_err(|e| vec![toml_error(&e)])?;
    let mut problems = suite.env.problems(&text);
    for case in &mut suite.cases {
        problems.extend(spec::expand_globs(&mut case.opponents, &text, base));
    }
    if suite.cases.is_empty() {
        problems.push("no [[case]]".to_owned());
    }
    let mut names: Vec<&str> = suite.cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    for w in names.windows(2).filter(|w| w[0] == w[1]) {
        problems.push(format!("two cases are named {:?}", w[0]));
    }
    for case in &suite.cases {
        problems.extend(
            case_problems(case, base, &text)
                .into_iter()
                .map(|p| format!("case {:?}: {p}", case.name)),
        );
    }
    if problems.is_empty() {
        Ok(suite)
    } else {
        Err(problems)
    }
}

/// The case as a small tournament (with the suite's `env`): the bot
/// first, then its opponents.
fn case_spec(case: &Case, env: &EnvTable) -> Spec {
    let mut entrants = vec![EntrantSpec {
        name: case.name.clone(),
        dir: case.dir.clone(),
        command: case.command.clone(),
        glob: None,
        env: case.env.clone(),
        options: None,
        time_control: None,
    }];
    if let Some(baseline) = &case.baseline {
        let (dir, command, env) = match baseline.clone() {
            Baseline::Command(command) => (None, Some(command), EnvTable::default()),
            Baseline::Entrant { dir, command, env } => (dir, command, env),
        };
        entrants.push(EntrantSpec {
            name: BASELINE.to_owned(),
            dir,
            command,
            glob: None,
            env,
            options: None,
            time_control: None,
        });
    }
    entrants.extend(case.opponents.iter().cloned());
    Spec {
        game: case.game.clone(),
        games: case.games,
        seed: case.seed,
        standings_every: None,
        jobs: case.jobs,
        pin: false,
        limits: case.limits.clone(),
        entrants,
        format: case.format,
        gauntlet: (case.format == spec::Format::Gauntlet).then(|| case.name.clone()),
        sprt: None,
        baseline: None,
        env: env.clone(),
        options: None,
        each: None,
    }
}

fn case_problems(case: &Case, base: &Path, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    if case.name.trim().is_empty() {
        out.push("the name is empty".to_owned());
    }
    let spec = case_spec(case, &EnvTable::default());
    out.extend(spec::problems(&spec, base));
    for e in &spec.entrants {
        out.extend(e.env.problems(text));
    }
    out.extend(game_problems(case, base, spec.entrants.len()));
    let e = &case.expect;
    if let Some(m) = e.mean_score
        && !m.is_finite()
    {
        out.push(format!(
            "expect.mean_score must be a finite number, not {m}"
        ));
    }
    for (name, value) in [("max_move", e.max_move), ("p99_move", e.p99_move)] {
        if value.is_some_and(|d| d.0.is_zero()) {
            out.push(format!("expect.{name} must be longer than zero"));
        }
    }
    out.extend(sprt_problems(case, text));
    if e.margin.is_some() && !e.sequential {
        out.push("expect.margin needs sequential = true".to_owned());
    }
    out.extend(win_rate_problems(case));
    out
}

/// What applies depends on the game: ask it (opponents, and the
/// expectations only some games can check).
fn game_problems(case: &Case, base: &Path, entrants: usize) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(game) = crate::game::load(&case.game, &case.limits, None, entrants, base, false) else {
        return out;
    };
    if game.seating() == Seating::Solo && !case.opponents.is_empty() {
        out.push(format!(
            "opponents apply to games between players; {} is played alone",
            game.name()
        ));
    }
    let e = &case.expect;
    for (name, given) in [
        ("no_unnecessary_loss", e.no_unnecessary_loss),
        ("mean_score", e.mean_score.is_some()),
    ] {
        if given && !game.supports(name) {
            out.push(format!("expect.{name} does not apply to {}", game.name()));
        }
    }
    out
}

/// A baseline and its `expect.sprt` go together; the test's own problems,
/// at its line.
fn sprt_problems(case: &Case, text: &str) -> Vec<String> {
    let e = &case.expect;
    let mut out = Vec::new();
    match (&case.baseline, &e.sprt) {
        (None, None) => {}
        (Some(_), None) => {
            out.push("a baseline needs expect.sprt = { elo0 = ..., elo1 = ... }".to_owned())
        }
        (None, Some(_)) => out.push("expect.sprt needs a baseline to test against".to_owned()),
        (Some(_), Some(sprt)) => {
            let line = crate::units::line_at(text, sprt.span().start);
            for p in sprt.get_ref().test().problems() {
                out.push(format!("line {line}: expect.sprt: {p}"));
            }
            if e.sequential {
                out.push(format!(
                    "line {line}: expect.sprt and sequential = true are two sequential tests; keep one"
                ));
            }
            if case.games < 2 {
                out.push(format!(
                    "line {line}: expect.sprt plays games in pairs: games must be at least 2"
                ));
            }
        }
    }
    out
}

/// A `win_rate` (and its sequential test) that the case's games can reach.
fn win_rate_problems(case: &Case) -> Vec<String> {
    let e = &case.expect;
    let mut out = Vec::new();
    match (e.win_rate, e.sequential) {
        (None, true) => out.push("expect.sequential needs a win_rate to test".to_owned()),
        (None, false) => {}
        (Some(p), _) if !(p.is_finite() && (0.0..1.0).contains(&p)) => out.push(format!(
            "expect.win_rate must be at least 0 and below 1 (a Wilson lower bound never reaches 1), not {p}"
        )),
        (Some(p), sequential) => {
            let margin = e.margin.unwrap_or(DEFAULT_MARGIN);
            let sprt = if sequential {
                match Sprt::new(p, margin) {
                    Ok(sprt) => Some(sprt),
                    Err(why) => {
                        out.push(why);
                        None
                    }
                }
            } else {
                None
            };
            let needed = min_games(p, sprt.as_ref());
            if case.games < needed {
                out.push(format!(
                    "expect.win_rate = {p} cannot be reached in {} game{}: even winning every game needs at least {needed}",
                    case.games,
                    if case.games == 1 { "" } else { "s" }
                ));
            }
        }
    }
    out
}

/// The fewest games, all won, that pass a `win_rate` of `p`: by Wilson's
/// lower bound (`n / (n + z²)` for n wins in n), or by the sequential test.
fn min_games(p: f64, sprt: Option<&Sprt>) -> u64 {
    // Solved for n, then mended for rounding by a few steps at most (the
    // bound is flat in floating point for p very near 1).
    let mut n = ((Z95 * Z95 * p / (1.0 - p)).ceil().min(u64::MAX as f64) as u64).max(1);
    for _ in 0..8 {
        if n > 1 && wilson95(n - 1, n - 1).0 >= p {
            n -= 1;
        } else if wilson95(n, n).0 < p {
            n = n.saturating_add(1);
        } else {
            break;
        }
    }
    match sprt {
        Some(sprt) => n.min(sprt.wins_to_pass()),
        None => n,
    }
}

/// The case's plan: its bot and opponents built and checked.
async fn prepare(
    spec: &Spec,
    case: &Case,
    base: &Path,
    limits: BotLimits,
    env: &Vars,
) -> Result<Arc<Plan>, Refusal> {
    let config = TournamentConfig {
        file: base.join("ci"),
        games: None,
        game_options: Default::default(),
        seed: None,
        standings_every: None,
        jobs: case.jobs,
        pin: false,
        out: None,
        resume: false,
        shard: None,
        build: crate::tournament::BuildMode::Build,
        progress: false,
        record_moves: false,
        limits,
        time_margin: None,
        env: env.clone(),
    };
    let mut plan = Plan::prepare(spec, base, &config).await?;
    if case.baseline.is_some() {
        plan = plan.paired();
    }
    // Every opponent must get a table; a partial last table is said.
    if let Some(note) = plan.check_share(case.games)? {
        eprintln!("referee ci: case {:?}: {note}", case.name);
    }
    for (name, why) in plan.disqualified() {
        eprintln!(
            "referee ci: case {:?}: {}: {why}",
            case.name,
            who(case, &name)
        );
    }
    Ok(Arc::new(plan))
}

/// The case's bot or one of its opponents, in words.
fn who(case: &Case, name: &str) -> String {
    if name == case.name {
        "the bot".to_owned()
    } else {
        format!("opponent {}", crate::text::terminal(name))
    }
}

async fn run_case(case: &Case, plan: Result<Arc<Plan>, String>) -> Result<Outcome, String> {
    let started = Instant::now();
    let plan = plan?;
    // A bot or opponent that cannot be built or started fails the case at
    // once, with the reason, rather than as a crash in every game.
    let disqualified = plan.disqualified();
    if !disqualified.is_empty() {
        let reasons = disqualified
            .iter()
            .map(|(name, why)| format!("{}: {why}", who(case, name)))
            .collect();
        return Ok(Outcome {
            time: started.elapsed(),
            ..Outcome::unplayed(case.name.clone(), Some(case.game.name()), false, reasons)
        });
    }
    let seed = case.seed.unwrap_or(1);
    let jobs = case
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let sprt = match (case.expect.win_rate, case.expect.sequential) {
        (Some(p), true) => Some(Sprt::new(p, case.expect.margin.unwrap_or(DEFAULT_MARGIN))?),
        _ => None,
    };

    let h2h = case.expect.sprt.as_ref().map(|s| s.get_ref().test());

    let mut tally = CaseTally::default();
    let mut decided = None;
    let (mut wins, mut played) = (0.0, 0u64);
    let solo = plan.game.seating() == Seating::Solo;
    // Head to head, games come in pairs: an odd last game is not played.
    let last = if h2h.is_some() {
        case.games / 2 * 2
    } else {
        case.games
    };
    let mut pairs = Pairs::default();
    let mut games = plan.play_all(1..=last, seed, jobs, false);
    while let Some(record) = games.next().await {
        let record = record?;
        // The case's settings are wrong, as a bad case file would be.
        if let Some(refusal) = record.refusal() {
            return Err(refusal.describe());
        }
        if let Some((w, _)) = game_win(solo, &record, &case.name) {
            wins += w;
            played += 1;
        }
        if let Some(test) = &h2h {
            if let Some(score) = record.head_to_head(solo, &case.name, BASELINE) {
                pairs.add(record.index, score);
            }
            if test.state(pairs.counts).decision.is_some() {
                tally.add(solo, &case.name, &record);
                break;
            }
        }
        tally.add(solo, &case.name, &record);
        if let Some(sprt) = &sprt {
            decided = sprt.decide(wins, played);
            if decided.is_some() {
                break;
            }
        }
    }
    // Games still in flight after a decision are abandoned.
    drop(games);
    let h2h = h2h.map(|test| (test, pairs.counts));
    Ok(judge(case, &plan, &tally, decided, h2h, started.elapsed()))
}

/// The case's bot's win in one game (a shared Chomp win split), and its
/// result; `None` when it did not play.
fn game_win<'r>(solo: bool, record: &'r GameRecord, bot: &str) -> Option<(f64, &'r SeatResult)> {
    let seat = record.seat_of(bot)?;
    let mine = &record.results[seat];
    if solo {
        return Some((f64::from(u8::from(mine.won == Some(true))), mine));
    }
    Some((record.win_shares()[seat], mine))
}

/// Wald's sequential probability ratio test of H0: p = p0 (fail) against
/// H1: p = p1 (pass) on win/loss outcomes, with `0 < p0 < p1 < 1`.
#[derive(Debug)]
struct Sprt {
    p0: f64,
    p1: f64,
}

impl Sprt {
    /// The test of `win_rate` against `win_rate + margin`; an error when
    /// that is not a valid test.
    fn new(win_rate: f64, margin: f64) -> Result<Sprt, String> {
        let p1 = win_rate + margin;
        if !(margin.is_finite() && margin > 0.0) {
            return Err(format!("expect.margin must be above 0, not {margin}"));
        }
        if !(win_rate > 0.0 && p1 < 1.0 && p1 > win_rate) {
            return Err(format!(
                "the sequential test needs 0 < win_rate and win_rate + margin < 1 (here {win_rate} + {margin}); lower the margin or drop sequential"
            ));
        }
        Ok(Sprt { p0: win_rate, p1 })
    }

    fn llr(&self, wins: f64, games: u64) -> f64 {
        let losses = games as f64 - wins;
        wins * (self.p1 / self.p0).ln() + losses * ((1.0 - self.p1) / (1.0 - self.p0)).ln()
    }

    /// `Some(true)` to pass, `Some(false)` to fail, `None` to play on.
    fn decide(&self, wins: f64, games: u64) -> Option<bool> {
        let llr = self.llr(wins, games);
        if llr >= ((1.0 - SPRT_BETA) / SPRT_ALPHA).ln() {
            Some(true)
        } else if llr <= (SPRT_BETA / (1.0 - SPRT_ALPHA)).ln() {
            Some(false)
        } else {
            None
        }
    }

    /// The fewest games, all won, after which the test passes.
    fn wins_to_pass(&self) -> u64 {
        (((1.0 - SPRT_BETA) / SPRT_ALPHA).ln() / (self.p1 / self.p0).ln()).ceil() as u64
    }
}

fn micros_text(micros: u64) -> String {
    crate::units::human_micros(micros)
}

/// What a case's checks need of its games, gathered as each game ends:
/// counts, sums, the first of each kind of failure, and how many moves took
/// each time (for the exact 99th percentile) — not the games, so that a
/// case of many games runs in little memory.
#[derive(Default)]
struct CaseTally {
    /// Void games (their judge failed), and the first one's index and error.
    void: u64,
    first_void: Option<(u64, crate::games::external::JudgeError)>,
    /// The bot's results by class: how many, and the first one's error.
    crashes: FirstOf,
    timeouts: FirstOf,
    incorrect: FirstOf,
    internal: FirstOf,
    unnecessary: u64,
    /// Wins (a shared Chomp win split) and games, void games left out.
    wins: f64,
    games: u64,
    scores: stats::Moments,
    /// How many moves took each time, in microseconds.
    moves: std::collections::BTreeMap<u64, u64>,
    slowest_startup: Option<u64>,
    peak_memory: Option<u64>,
    /// The last standard error the bot wrote in a game.
    last_stderr: Option<String>,
}

/// How many results fell in a class, and the first one's error.
#[derive(Default)]
struct FirstOf {
    count: usize,
    first: Option<String>,
}

impl FirstOf {
    fn add(&mut self, hit: bool, result: &SeatResult) {
        if hit {
            self.count += 1;
            if self.count == 1 {
                self.first = result.error.clone();
            }
        }
    }

    /// The count, and the first error as a suffix for the reason.
    fn text(&self) -> (usize, String) {
        let first = self
            .first
            .as_deref()
            .map_or(String::new(), |e| format!(" (first: {e})"));
        (self.count, first)
    }
}

impl CaseTally {
    fn add(&mut self, solo: bool, bot: &str, record: &GameRecord) {
        let Some(mine) = record.result_of(bot) else {
            return;
        };
        // A game the referee itself failed (a seat `internal`) stays an
        // internal error of the case, below: ci reports it as such.
        if record.judge_error.is_some() {
            self.void += 1;
            let earlier = self
                .first_void
                .as_ref()
                .is_some_and(|(i, _)| *i < record.index);
            if let (false, Some(error)) = (earlier, &record.judge_error) {
                self.first_void = Some((record.index, error.clone()));
            }
            return;
        }
        let status = mine.status();
        self.crashes.add(status.is_crash(), mine);
        self.timeouts.add(status.is_timeout(), mine);
        self.incorrect.add(status.is_incorrect(), mine);
        self.internal
            .add(status == crate::outcome::Status::Internal, mine);
        self.unnecessary += u64::from(mine.outcome.as_deref() == Some("lose_unnecessarily"));
        if let Some((w, _)) = game_win(solo, record, bot) {
            self.wins += w;
            self.games += 1;
        }
        if let Some(points) = mine.points() {
            self.scores.add(points);
        }
        for time in mine.move_times() {
            *self.moves.entry(time).or_default() += 1;
        }
        self.slowest_startup = self.slowest_startup.max(mine.startup_micros);
        self.peak_memory = self.peak_memory.max(mine.peak_memory_bytes);
        if let Some(stderr) = mine.stderr.as_deref().filter(|s| !s.is_empty()) {
            self.last_stderr = Some(stderr.to_owned());
        }
    }

    /// The reason the void games give (how many, and the first one's judge
    /// error) and the first one's judge's standard error.
    fn void_games(&self) -> Option<(String, String)> {
        let (index, error) = self.first_void.as_ref()?;
        let reason = format!(
            "{} game{} void: the judge failed (first, game {index}: {})",
            self.void,
            if self.void == 1 { "" } else { "s" },
            error.message
        );
        Some((reason, error.stderr.clone().unwrap_or_default()))
    }

    /// The slowest move and the 99th percentile of the moves.
    fn slowest_and_p99(&self) -> (u64, u64) {
        let n: u64 = self.moves.values().sum();
        let slowest = self.moves.keys().next_back().copied().unwrap_or(0);
        let rank = (n * 99).div_ceil(100).saturating_sub(1);
        let mut seen = 0;
        for (&time, &count) in &self.moves {
            seen += count;
            if rank < seen {
                return (slowest, time);
            }
        }
        (slowest, 0)
    }
}

/// Checks the expectations against what was played.
fn judge(
    case: &Case,
    plan: &Plan,
    tally: &CaseTally,
    decided: Option<bool>,
    h2h: Option<(stats::Sprt, [u64; 5])>,
    time: Duration,
) -> Outcome {
    let solo = plan.game.seating() == Seating::Solo;
    let e = &case.expect;
    // A game whose judge failed is void: not the bot's, and reported
    // with the judge's own words.
    let judge_failure = tally.void_games();
    // The steps, in the order their figures and reasons are reported.
    let mut found = Findings::default();
    if let Some((reason, _)) = &judge_failure {
        found.reasons.push(reason.clone());
    }
    found.forbidden_failures(e, tally);
    let internal = found.internal_errors(tally);
    found.unnecessary_losses(e, tally);
    found.win_rate(e, solo, (tally.wins, tally.games), decided);
    if let Some((test, counts)) = h2h {
        found.head_to_head(&test, counts);
    }
    if plan.game.supports("mean_score") {
        found.mean_score(e, tally);
    }
    found.move_times(e, tally);
    found.memory(e, tally);
    Outcome {
        name: case.name.clone(),
        game: Some(plan.game.name()),
        pass: found.reasons.is_empty(),
        referee_error: internal || judge_failure.is_some(),
        figures: found.figures.join(", "),
        reasons: found.reasons,
        stderr: last_lines(tally.last_stderr.as_deref()),
        judge_stderr: judge_failure.map(|(_, text)| text).unwrap_or_default(),
        time,
        properties: found.properties,
    }
}

/// What `judge`'s steps find, in the order they run: the figures
/// measured, the reasons the case fails, and JUnit's properties.
#[derive(Default)]
struct Findings {
    figures: Vec<String>,
    reasons: Vec<String>,
    properties: Vec<(String, String)>,
}

/// The bot's last lines on standard error, for the JUnit report: its last
/// game that wrote any, its last 20 lines.
fn last_lines(stderr: Option<&str>) -> String {
    stderr
        .map(|text| {
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(20)..].join("\n")
        })
        .unwrap_or_default()
}

impl Findings {
    /// The classes of failure the case forbids (`no_crash`, `no_timeout`,
    /// `no_incorrect`): a reason for each that occurred.
    fn forbidden_failures(&mut self, e: &Expect, tally: &CaseTally) {
        let checks = [
            (e.no_crash, &tally.crashes, "crash(es)"),
            (e.no_timeout, &tally.timeouts, "timeout(s)"),
            (e.no_incorrect, &tally.incorrect, "incorrect output(s)"),
        ];
        for (wanted, class, what) in checks {
            let (count, first) = class.text();
            if wanted && count > 0 {
                self.reasons.push(format!("{count} {what}{first}"));
            }
        }
    }

    /// The referee's own failures always fail a case, and make it an
    /// error rather than a failure: its figures are not to be trusted.
    /// Whether there were any.
    fn internal_errors(&mut self, tally: &CaseTally) -> bool {
        let (internal, first) = tally.internal.text();
        if internal > 0 {
            self.reasons.push(format!(
                "{internal} internal error(s) of the referee{first}"
            ));
        }
        internal > 0
    }

    /// Even Steven's `no_unnecessary_loss`: no winnable hand lost.
    fn unnecessary_losses(&mut self, e: &Expect, tally: &CaseTally) {
        let unnecessary = tally.unnecessary;
        if e.no_unnecessary_loss && unnecessary > 0 {
            self.reasons
                .push(format!("{unnecessary} winnable hand(s) lost"));
        }
    }

    /// The games played and the win rate with its Wilson interval (shown
    /// for solo games, or when `win_rate` is expected); against
    /// `win_rate`, the sequential test's decision when it made one, else
    /// the interval's lower bound.
    fn win_rate(
        &mut self,
        e: &Expect,
        solo: bool,
        (wins, games): (f64, u64),
        decided: Option<bool>,
    ) {
        let (low, high) = wilson95(wins.round() as u64, games);
        let rate = if games == 0 { 0.0 } else { wins / games as f64 };
        self.figures.push(format!("{games} games"));
        if solo || e.win_rate.is_some() {
            self.figures.push(format!(
                "win rate {:.1}% (95% CI {:.1}%-{:.1}%)",
                100.0 * rate,
                100.0 * low,
                100.0 * high
            ));
        }
        let Some(want) = e.win_rate else {
            return;
        };
        match decided {
            Some(true) => self.figures.push(format!(
                "decided early by the sequential test (p >= {:.1}%)",
                100.0 * (want + e.margin.unwrap_or(DEFAULT_MARGIN))
            )),
            Some(false) => self.reasons.push(format!(
                "win rate below {:.1}% (the sequential test decided after {games} games)",
                100.0 * want
            )),
            None if low < want => self.reasons.push(format!(
                "win rate's Wilson lower bound {:.1}% < {:.1}%",
                100.0 * low,
                100.0 * want
            )),
            None => {}
        }
    }

    /// Head to head: the pentanomial SPRT's figures (also as JUnit
    /// properties); a reason unless it accepted H1 (the bot is better).
    fn head_to_head(&mut self, test: &stats::Sprt, counts: [u64; 5]) {
        let state = test.state(counts);
        let pairs: u64 = counts.iter().sum();
        let (text, props) = sprt_figures(test, &state, counts);
        self.figures.push(text);
        self.properties = props;
        match state.decision {
            Some(true) => {}
            Some(false) => self.reasons.push(format!(
                "not better than the baseline: the SPRT accepted H0 (Elo <= {}) after {} games",
                test.elo0,
                2 * pairs
            )),
            None => self.reasons.push(format!(
                "the SPRT did not decide in {} games (LLR {:.2}, between {:.2} and {:.2}); allow more games",
                2 * pairs,
                state.llr,
                state.lower,
                state.upper
            )),
        }
    }

    /// The mean score with its 95% interval, against `mean_score`.
    fn mean_score(&mut self, e: &Expect, tally: &CaseTally) {
        let (mean, half) = tally.scores.mean_ci95();
        self.figures
            .push(format!("mean score {mean:.1} ± {:.1}", half.unwrap_or(0.0)));
        if let Some(want) = e.mean_score
            && mean < want
        {
            self.reasons.push(format!("mean score {mean:.1} < {want}"));
        }
    }

    /// The slowest and 99th-percentile move, against `max_move` and
    /// `p99_move`, and the slowest start-up. Move times are every move
    /// where the records list them (a timed-out move as the time waited),
    /// else each game's slowest move (Chomp, Aces Up). First replies,
    /// which include the start-up, are not moves.
    fn move_times(&mut self, e: &Expect, tally: &CaseTally) {
        let (slowest, p99) = tally.slowest_and_p99();
        self.figures.push(format!(
            "slowest move {}, p99 {}",
            micros_text(slowest),
            micros_text(p99)
        ));
        if let Some(startup) = tally.slowest_startup {
            self.figures
                .push(format!("slowest start-up {}", micros_text(startup)));
        }
        for (limit, measured, what) in [
            (e.max_move, slowest, "slowest move"),
            (e.p99_move, p99, "p99 move"),
        ] {
            if let Some(limit) = limit
                && u128::from(measured) > limit.0.as_micros()
            {
                self.reasons
                    .push(format!("{what} {} > {limit}", micros_text(measured)));
            }
        }
    }

    /// The bot's peak memory in any game, where measured, against
    /// `max_memory`.
    fn memory(&mut self, e: &Expect, tally: &CaseTally) {
        let Some(peak) = tally.peak_memory else {
            return;
        };
        self.figures
            .push(format!("peak memory {}", human_bytes(peak)));
        if let Some(limit) = e.max_memory
            && peak > limit.0
        {
            self.reasons.push(format!(
                "peak memory {} > {}",
                human_bytes(peak),
                human_bytes(limit.0)
            ));
        }
    }
}

fn write_junit(path: &Path, suite: &Path, outcomes: &[Outcome]) -> Result<(), String> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("referee ci");
    let mut test_suite = TestSuite::new(suite.display().to_string());
    let stem = suite
        .file_stem()
        .map_or_else(|| "ci".to_owned(), |s| s.to_string_lossy().into_owned());
    for o in outcomes {
        let status = if o.pass {
            TestCaseStatus::success()
        } else {
            // A broken harness is an error; a weak bot is a failure.
            let kind = if o.referee_error {
                NonSuccessKind::Error
            } else {
                NonSuccessKind::Failure
            };
            let mut status = TestCaseStatus::non_success(kind);
            status.set_message(o.reasons.join("; "));
            status.set_type(if o.referee_error { "error" } else { "failure" });
            let mut body = o.reasons.join("\n");
            if !o.figures.is_empty() {
                body.push_str("\n\n");
                body.push_str(&o.figures);
            }
            status.set_description(body);
            status
        };
        let mut case = TestCase::new(o.name.clone(), status);
        case.set_classname(format!("{stem}.{}", o.game.as_deref().unwrap_or("suite")));
        case.set_time(o.time);
        case.set_system_out(o.figures.clone());
        let stderr = match (o.judge_stderr.is_empty(), o.stderr.is_empty()) {
            (true, _) => o.stderr.clone(),
            (false, true) => format!("the judge's last lines:\n{}", o.judge_stderr),
            (false, false) => format!(
                "the judge's last lines:\n{}\n\nthe bot's last lines:\n{}",
                o.judge_stderr, o.stderr
            ),
        };
        if !stderr.is_empty() {
            case.set_system_err(stderr);
        }
        for (name, value) in &o.properties {
            case.add_property((name.as_str(), value.as_str()));
        }
        test_suite.add_test_case(case);
    }
    report.add_test_suite(test_suite);
    let xml = report.to_string().map_err(|e| e.to_string())?;
    crate::record::write_file(path, xml.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The 99th percentile from counts per time is the one of the
        /// sorted times.
        #[test]
        fn the_p99_of_counted_move_times_is_the_sorted_ones(
            times in proptest::collection::vec(0u64..50, 0..400),
        ) {
            let mut tally = CaseTally::default();
            for &t in &times {
                *tally.moves.entry(t).or_default() += 1;
            }
            let mut sorted = times.clone();
            sorted.sort_unstable();
            let p99 = sorted
                .get((sorted.len() * 99).div_ceil(100).saturating_sub(1))
                .copied()
                .unwrap_or(0);
            let slowest = sorted.last().copied().unwrap_or(0);
            proptest::prop_assert_eq!(tally.slowest_and_p99(), (slowest, p99));
        }
    }

    #[test]
    fn the_sequential_test_decides_clear_cases_early() {
        let sprt = Sprt::new(0.5, 0.05).unwrap();
        assert_eq!(sprt.decide(10.0, 10), None);
        // 95% wins over 100 games: clearly above 55%.
        assert_eq!(sprt.decide(95.0, 100), Some(true));
        // 30% wins: clearly below.
        assert_eq!(sprt.decide(30.0, 100), Some(false));
    }

    #[test]
    fn a_bot_losing_every_game_always_fails_the_sequential_test() {
        for p in [0.01, 0.3, 0.5, 0.9, 0.94, 0.949] {
            let sprt = Sprt::new(p, 0.05).unwrap();
            let decided = (1..=10_000).find_map(|n| sprt.decide(0.0, n));
            assert_eq!(decided, Some(false), "win_rate {p}");
        }
        // What has no valid test is refused.
        assert!(Sprt::new(0.95, 0.05).is_err());
        assert!(Sprt::new(1.0, 0.05).is_err());
        assert!(Sprt::new(0.0, 0.05).is_err());
        assert!(Sprt::new(0.5, f64::NAN).is_err());
    }

    #[test]
    fn the_fewest_games_that_reach_a_win_rate() {
        // 3 games all won: Wilson's lower bound is 3 / (3 + z²) = 43.9%.
        assert_eq!(min_games(0.4, None), 3);
        assert!(min_games(0.5, None) > 3);
        let n = min_games(0.9, None);
        assert!(wilson95(n, n).0 >= 0.9 && wilson95(n - 1, n - 1).0 < 0.9);
    }
}
