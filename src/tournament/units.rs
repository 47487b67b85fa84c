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

use serde_json::{Value, json};

use super::TournamentConfig;
use super::spec::{GameKind, Spec};
use crate::bot::clock::MoveLimits;
use crate::bot::{BotLimits, BotSpec, spawn};
use crate::games::acesup::{self, Decks, JudgeConfig, Verdict};
use crate::games::chomp::build::{self, BuildOptions};
use crate::games::chomp::game::{self, Rules, SeatSpec};
use crate::games::chomp::{ArrayFile, Coord, load_arrays, start_cell};
use crate::games::evensteven::{deal, dealer};
use crate::games::septica;
use crate::outcome::{self, Disqualified, Status};
use crate::parallel;
use crate::record;
use crate::rng::SplitMix64;
use crate::units::TomlDuration;

/// An entrant, ready to run or disqualified.
#[derive(Clone, Debug)]
pub struct Entrant {
    pub name: String,
    pub program: Result<BotSpec, Disqualified>,
}

/// Chomp's part of a plan.
struct ChompPlan {
    arrays: Vec<ArrayFile>,
    rules: Rules,
    start: (Coord, Coord),
    seats: usize,
}

/// Everything needed to play any game of a tournament.
pub struct Plan {
    pub kind: GameKind,
    pub entrants: Vec<Entrant>,
    /// What decides the games apart from the seed (see `record::fingerprint`).
    pub fingerprint: String,
    limits: BotLimits,
    time: MoveLimits,
    chomp: Option<ChompPlan>,
}

fn duration(value: &Option<TomlDuration>, default: Duration) -> Duration {
    value.map_or(default, |d| d.0)
}

/// `path` relative to the tournament file's directory.
fn under(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        base.join(path)
    }
}

impl Plan {
    /// Resolves and builds the entrants and reads what the games need.
    pub async fn prepare(
        spec: &Spec,
        base: &Path,
        config: &TournamentConfig,
    ) -> Result<Plan, String> {
        let l = &spec.limits;
        let default_timeout =
            Duration::from_secs(if spec.game == GameKind::Acesup { 5 } else { 10 });
        let time = MoveLimits {
            timeout: duration(&l.timeout, default_timeout),
            control: l.time_control,
        };
        let mut limits = config.limits;
        limits.grace = duration(&l.grace, limits.grace);
        limits.startup = duration(&l.startup, limits.startup);
        if let Some(max_line) = l.max_line {
            limits.max_line = max_line;
        }
        let build = BuildOptions {
            make: l.make.clone().unwrap_or_else(|| build::DEFAULT_MAKE.into()),
            timeout: duration(&l.build_timeout, crate::games::chomp::DEFAULT_BUILD_TIMEOUT),
            logs: config.out.as_ref().map(|o| o.join("build")),
        };
        let dirs: Vec<Option<PathBuf>> = spec
            .entrants
            .iter()
            .map(|e| e.dir.as_ref().map(|d| under(base, d)))
            .collect();
        let to_build: Vec<PathBuf> = dirs.iter().flatten().cloned().collect();
        let mut built = build::build_dirs(&to_build, &build).await.into_iter();
        let mut entrants = Vec::new();
        for (e, dir) in spec.entrants.iter().zip(&dirs) {
            let dir = dir
                .as_ref()
                .map(|_| built.next().expect("one build per dir"));
            let program = match (dir, &e.command) {
                (Some(Err(why)), _) => Err(Disqualified::build_failed(why)),
                (Some(Ok(dir)), None) => Ok(BotSpec {
                    program: build::program(&dir).into_os_string(),
                    args: vec![],
                    dir: Some(dir),
                }),
                (dir, Some(command)) => {
                    let dir = dir.and_then(Result::ok);
                    let first = Path::new(&command[0]);
                    let program = if command[0].contains('/') && first.is_relative() {
                        under(dir.as_deref().unwrap_or(base), first).into_os_string()
                    } else {
                        OsString::from(&command[0])
                    };
                    Ok(BotSpec {
                        program,
                        args: command[1..].iter().map(OsString::from).collect(),
                        dir,
                    })
                }
                (None, None) => unreachable!("checked when the file was read"),
            };
            // A program that cannot be started is found now, once, not
            // as a crash in every game.
            let program = program.and_then(|spec| match spawn::resolve(&spec.program) {
                Ok(_) => Ok(spec),
                Err(e) => Err(Disqualified::cannot_start(e.to_string())),
            });
            entrants.push(Entrant {
                name: e.name.clone(),
                program,
            });
        }
        let chomp = match spec.game {
            GameKind::Chomp => {
                let arrays_path = under(
                    base,
                    l.arrays.as_ref().expect("checked when the file was read"),
                );
                let arrays = load_arrays(&arrays_path)?;
                let start = match &l.start {
                    None => (Coord::Random, Coord::Random),
                    Some([x, y]) => (
                        x.parse().map_err(|e| format!("limits.start: {e}"))?,
                        y.parse().map_err(|e| format!("limits.start: {e}"))?,
                    ),
                };
                Some(ChompPlan {
                    arrays,
                    rules: Rules {
                        prep: duration(&l.prep, crate::games::chomp::DEFAULT_PREP),
                        starve: duration(&l.starve, crate::games::chomp::DEFAULT_STARVE),
                        limits,
                        max_rounds: l.max_rounds,
                        record_moves: false,
                    },
                    start,
                    seats: l.seats.unwrap_or(spec.entrants.len()),
                })
            }
            _ => None,
        };
        // What decides the games: the file's limits and the command line's
        // (a resumed run must play under the same rules), and each entrant
        // as submitted. A disqualification counts by its status only: its
        // message (a build log's tail) differs from run to run.
        let rules = BotLimits {
            echo_stderr: false,
            ..limits
        };
        let mut parts = vec![
            spec.game.name().to_owned(),
            format!("{:?}", spec.limits),
            format!("{rules:?}"),
        ];
        for e in &entrants {
            // As submitted: not where this run keeps its copy of a `pc2`.
            let program = match &e.program {
                Ok(spec) => format!("{:?}", build::as_submitted(spec)),
                Err(why) => why.status.name().to_owned(),
            };
            parts.push(format!("{} {program}", e.name));
        }
        if let Some(c) = &chomp {
            parts.extend(c.arrays.iter().map(ArrayFile::letters));
        }
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        Ok(Plan {
            kind: spec.game,
            entrants,
            fingerprint: record::fingerprint(&refs),
            limits,
            time,
            chomp,
        })
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
    ) -> parallel::Games<Value> {
        let plan = Arc::clone(self);
        // A pinned worker's bots inherit its CPU binding.
        parallel::run(indices, jobs, pin, move |index, _cpu| {
            let plan = Arc::clone(&plan);
            async move { plan.play(index, seed).await }
        })
    }

    /// Plays game `index` of the tournament with `seed`: one record.
    pub async fn play(&self, index: u64, seed: u64) -> Value {
        let limits = self.limits;
        let mut record = match self.kind {
            GameKind::Chomp => self.chomp_game(index, seed, limits).await,
            _ => {
                let mut results = Vec::new();
                let mut game = json!({});
                for e in &self.entrants {
                    let (result, details) = match &e.program {
                        Err(why) => (
                            with_verdict(json!({"won": false, "error": why.why}), why.verdict()),
                            None,
                        ),
                        Ok(program) => self.solo(program, index, seed, limits).await,
                    };
                    let mut result = result;
                    result["entrant"] = Value::from(e.name.as_str());
                    results.push(result);
                    if let Some(details) = details {
                        game = details;
                    }
                }
                game["results"] = Value::from(results);
                game
            }
        };
        record["game"] = Value::from(self.kind.name());
        record["index"] = Value::from(index);
        record["seed"] = Value::from(seed);
        record["time"] = Value::from(record::timestamp());
        record["referee"] = Value::from(record::REFEREE_VERSION);
        record
    }

    /// One entrant on game `index` of a one-player kind: its result, and
    /// what the game was (the same for every entrant).
    async fn solo(
        &self,
        program: &BotSpec,
        index: u64,
        seed: u64,
        limits: BotLimits,
    ) -> (Value, Option<Value>) {
        let slowest = |micros: &[u64]| micros.iter().copied().max().unwrap_or(0);
        let cannot_start = |e: &dyn std::fmt::Display| {
            with_verdict(
                json!({"won": false, "error": format!("cannot start: {e}")}),
                outcome::Verdict::of(Status::CannotStart),
            )
        };
        match self.kind {
            GameKind::Evensteven => {
                let mut rng = SplitMix64::for_game(seed, index - 1);
                // Uniform over the statement's ranges: 1..=MAX_HAND, 1..=MAX_SEED.
                let n = 1 + rng.below(deal::MAX_HAND as u64) as usize;
                let deal_seed = 1 + rng.below(u64::from(deal::MAX_SEED)) as u32;
                let details = json!({"n": n, "deal_seed": deal_seed});
                let result =
                    match dealer::play_single(program, limits, self.time, n, deal_seed).await {
                        Ok(single) => with_verdict(
                            json!({
                                "won": single.outcome == "win",
                                "outcome": single.outcome,
                                "error": single.error,
                                "moves": single.micros.len(),
                                "slowest_micros": slowest(&single.micros),
                                "micros": single.micros,
                                "startup_micros": single.startup_micros,
                                "stderr": single.stderr,
                            }),
                            single.verdict,
                        ),
                        Err(e) => cannot_start(&e),
                    };
                (result, Some(details))
            }
            GameKind::Septica => {
                let result =
                    match septica::play_single(program, limits, self.time, seed, index - 1).await {
                        Ok(m) => with_verdict(
                            json!({
                                "won": m.outcome == "player",
                                "outcome": m.outcome,
                                "score": {"computer": m.score[0], "player": m.score[1]},
                                "error": m.error,
                                "moves": m.micros.len(),
                                "slowest_micros": slowest(&m.micros),
                                "micros": m.micros,
                                "startup_micros": m.startup_micros,
                            }),
                            m.verdict,
                        ),
                        Err(e) => cannot_start(&e),
                    };
                (
                    result,
                    Some(json!({"deck": septica::shuffled_deck(seed, index - 1)})),
                )
            }
            GameKind::Acesup => {
                let deck = acesup::deck::random_deck(seed, index - 1);
                let config = JudgeConfig {
                    program: program.clone(),
                    limits,
                    timeout: self.time.timeout,
                    decks: Decks::Random {
                        count: 0,
                        seed: None,
                    },
                    results: None,
                };
                let result = match acesup::judge(&config, &deck).await {
                    Ok((verdict, elapsed, ended, stderr)) => with_verdict(
                        json!({
                            "won": verdict == Verdict::Accepted,
                            "error": (verdict != Verdict::Accepted).then(|| verdict.to_string()),
                            "slowest_micros": elapsed.as_micros() as u64,
                            "stderr": stderr,
                        }),
                        verdict.status(ended),
                    ),
                    Err(e) => cannot_start(&e),
                };
                let cards: Vec<String> = deck.iter().map(|c| c.to_string()).collect();
                (result, Some(json!({"deck": cards.join(" ")})))
            }
            GameKind::Chomp => unreachable!("Chomp games have seats"),
        }
    }

    async fn chomp_game(&self, index: u64, seed: u64, limits: BotLimits) -> Value {
        let plan = self.chomp.as_ref().expect("a Chomp plan");
        let e = self.entrants.len();
        let seats: Vec<SeatSpec> = (0..plan.seats)
            .map(|s| {
                let i = (index as usize - 1 + s) % e;
                SeatSpec {
                    entrant: i,
                    dir: PathBuf::from(&self.entrants[i].name),
                    program: self.entrants[i].program.clone(),
                }
            })
            .collect();
        let array = &plan.arrays[(index as usize - 1) % plan.arrays.len()];
        let start = start_cell(
            plan.start,
            array,
            &mut SplitMix64::for_game(seed, index - 1),
        );
        let rules = Rules {
            limits,
            ..plan.rules
        };
        let result = game::play(&seats, &array.rows, start, rules).await;
        let results: Vec<Value> = result
            .players
            .iter()
            .map(|p| {
                with_verdict(
                    json!({
                        "entrant": self.entrants[p.entrant].name,
                        "seat": p.player,
                        "score": p.score,
                        "fate": p.fate,
                        "eaten": p.eaten,
                        "rounds": p.rounds,
                        "slowest_micros": p.slowest_micros,
                        "error": p.error,
                        "stderr": p.stderr,
                    }),
                    p.verdict,
                )
            })
            .collect();
        json!({
            "array": array.path.display().to_string(),
            "start": [start.col, start.row],
            "rounds": result.rounds,
            "end": result.end,
            "results": results,
        })
    }
}

/// `result` with the verdict's fields (`status`, and `phase` or `limit`
/// when there is one) added.
fn with_verdict(mut result: Value, verdict: outcome::Verdict) -> Value {
    if let (Some(fields), Ok(Value::Object(more))) =
        (result.as_object_mut(), serde_json::to_value(verdict))
    {
        fields.extend(more);
    }
    result
}

/// A name usable as a file name.
fn file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Appends each entrant's stderr of this game to `OUT/stderr/NAME.log`.
pub fn save_stderr(out: &Path, record: &Value) {
    use std::io::Write;
    for result in record["results"].as_array().into_iter().flatten() {
        let (Some(name), Some(text)) = (result["entrant"].as_str(), result["stderr"].as_str())
        else {
            continue;
        };
        if text.is_empty() {
            continue;
        }
        let path = out.join("stderr").join(format!("{}.log", file_name(name)));
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| write!(f, "--- game {} ---\n{text}\n", record["index"]));
        if let Err(e) = written {
            eprintln!("referee tournament: {}: {e}", path.display());
        }
    }
}

/// Records keep stderr out (it is in the stderr files), and leave out
/// empty fields.
pub fn strip_stderr(record: &mut Value) {
    for result in record["results"].as_array_mut().into_iter().flatten() {
        if let Some(fields) = result.as_object_mut() {
            fields.remove("stderr");
            fields.retain(|_, v| !v.is_null());
        }
    }
}
