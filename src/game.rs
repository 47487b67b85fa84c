//! The one interface between a game and everything that runs many games:
//! tournaments, ci runs, merge and standings use [`Game`] and never name a
//! game. [`load`] is the only place that turns a game's name (or an
//! external game's file) into one.
//!
//! Why the interface is this small: game `i` of a run with seed `s` must be
//! fully decided by `s` and `i` (its deal, deck, start cell), so that games
//! can run in any order, on any machine, be resumed and be merged; and a
//! one-player game is played by every entrant on the same setup, so that
//! entrants can be compared game by game. Everything else (how to talk to
//! the bots, what a move is) stays inside the game.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::bot::clock::MoveLimits;
use crate::bot::{BotLimits, BotSpec};
use crate::games::acesup::{self, Decks, JudgeConfig};
use crate::games::chomp::game::{self as chomp_game, Rules, SeatSpec};
use crate::games::chomp::{self, ArrayFile, Coord, load_arrays, start_cell};
use crate::games::evensteven::{deal, dealer};
use crate::games::external::{self, ExternalGame};
use crate::games::septica;
use crate::outcome::{self, Disqualified, Status};
use crate::rng::SplitMix64;
use crate::tournament::spec::Limits;

/// The built-in games.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    Evensteven,
    Chomp,
    Septica,
    Acesup,
}

impl GameKind {
    pub const ALL: [GameKind; 4] = [
        GameKind::Evensteven,
        GameKind::Chomp,
        GameKind::Septica,
        GameKind::Acesup,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GameKind::Evensteven => "evensteven",
            GameKind::Chomp => "chomp",
            GameKind::Septica => "septica",
            GameKind::Acesup => "acesup",
        }
    }
}

/// A game as tournament and ci files name it: a built-in game's name, or
/// the path of an external game's `game.toml` (relative to the file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum GameRef {
    Builtin(GameKind),
    External(PathBuf),
}

impl TryFrom<String> for GameRef {
    type Error = String;

    fn try_from(text: String) -> Result<GameRef, String> {
        if let Some(kind) = GameKind::ALL.into_iter().find(|k| k.name() == text) {
            return Ok(GameRef::Builtin(kind));
        }
        if text.ends_with(".toml") {
            return Ok(GameRef::External(PathBuf::from(text)));
        }
        Err(format!(
            "unknown game {text:?}: expected evensteven, chomp, septica, acesup, or the path of an external game's .toml file"
        ))
    }
}

impl From<GameRef> for String {
    fn from(game: GameRef) -> String {
        game.name()
    }
}

impl GameRef {
    pub fn name(&self) -> String {
        match self {
            GameRef::Builtin(kind) => kind.name().to_owned(),
            GameRef::External(path) => path.display().to_string(),
        }
    }

    pub fn is(&self, kind: GameKind) -> bool {
        *self == GameRef::Builtin(kind)
    }
}

/// Who plays a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seating {
    /// One player against the game: every entrant plays every game, on the
    /// same setup, and entrants are compared game by game (win rates).
    Solo,
    /// `seats` entrants play each other; seats rotate from game to game,
    /// and the scores rank them (ratings).
    Table { seats: usize },
}

/// An entrant in a seat.
#[derive(Clone, Debug)]
pub struct Seat {
    /// Which entrant (its position in the file, from 0).
    pub entrant: usize,
    pub name: String,
    pub program: Result<BotSpec, Disqualified>,
}

/// One game's outcome: the game's own fields (its setup and how it went)
/// and one result per seat, in seat order. Each result holds `status`
/// (the shared taxonomy), `error`, move times, and `won` (solo games) or
/// `score` (table games).
pub struct Played {
    pub fields: Value,
    pub results: Vec<Value>,
}

pub type PlayFuture<'a> = Pin<Box<dyn Future<Output = Played> + 'a>>;

/// A game the harness can run many of.
pub trait Game: Send + Sync {
    /// The name records carry in `game`.
    fn name(&self) -> String;

    fn seating(&self) -> Seating;

    /// What decides the games besides the seed and the entrants (the
    /// arrays, the judge's file), for run fingerprints.
    fn fingerprint(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether a game-specific ci expectation applies (`mean_score`,
    /// `no_unnecessary_loss`).
    fn supports(&self, _expectation: &str) -> bool {
        false
    }

    /// The `[limits]` keys of its own that it takes (besides those every
    /// game takes: `grace`, `max_line`, `make`, `build_timeout`).
    fn limit_keys(&self) -> &'static [&'static str];

    /// What is wrong with its setup for `entrants` entrants, all of it.
    fn problems(&self, _entrants: usize) -> Vec<String> {
        Vec::new()
    }

    /// Its own start-up allowance, when it has one (an external game's
    /// file); a tournament or ci file's `startup` goes over it.
    fn startup(&self) -> Option<Duration> {
        None
    }

    /// Plays game `index` of a run with `seed`. Solo games get one seat,
    /// whose program is ready (disqualified entrants are recorded by the
    /// caller); table games get every seat, disqualified ones included.
    fn play<'a>(
        &'a self,
        index: u64,
        seed: u64,
        seats: &'a [Seat],
        limits: BotLimits,
    ) -> PlayFuture<'a>;
}

/// `result` with the verdict's fields (`status`, and `phase` or `limit`
/// when there is one) added.
pub fn with_verdict(mut result: Value, verdict: outcome::Verdict) -> Value {
    if let (Some(fields), Ok(Value::Object(more))) =
        (result.as_object_mut(), serde_json::to_value(verdict))
    {
        fields.extend(more);
    }
    result
}

/// The result of a seat whose entrant cannot play.
pub fn disqualified_result(why: &Disqualified) -> Value {
    with_verdict(json!({"won": false, "error": why.why}), why.verdict())
}

fn cannot_start(e: &dyn std::fmt::Display) -> Value {
    with_verdict(
        json!({"won": false, "error": format!("cannot start: {e}")}),
        outcome::Verdict::of(Status::CannotStart),
    )
}

fn slowest(micros: &[u64]) -> u64 {
    micros.iter().copied().max().unwrap_or(0)
}

/// The seat's program; solo games are only given ready ones.
fn ready(seats: &[Seat]) -> &BotSpec {
    seats[0]
        .program
        .as_ref()
        .expect("solo games are given ready programs")
}

struct EvenSteven {
    time: MoveLimits,
}

impl Game for EvenSteven {
    fn name(&self) -> String {
        "evensteven".into()
    }

    fn seating(&self) -> Seating {
        Seating::Solo
    }

    fn limit_keys(&self) -> &'static [&'static str] {
        &["timeout", "startup", "time_control"]
    }

    fn supports(&self, expectation: &str) -> bool {
        expectation == "no_unnecessary_loss"
    }

    fn play<'a>(
        &'a self,
        index: u64,
        seed: u64,
        seats: &'a [Seat],
        limits: BotLimits,
    ) -> PlayFuture<'a> {
        Box::pin(async move {
            let mut rng = SplitMix64::for_game(seed, index - 1);
            // Uniform over the statement's ranges: 1..=MAX_HAND, 1..=MAX_SEED.
            let n = 1 + rng.below(deal::MAX_HAND as u64) as usize;
            let deal_seed = 1 + rng.below(u64::from(deal::MAX_SEED)) as u32;
            let result =
                match dealer::play_single(ready(seats), limits, self.time, n, deal_seed).await {
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
            Played {
                fields: json!({"n": n, "deal_seed": deal_seed}),
                results: vec![result],
            }
        })
    }
}

struct Septica {
    time: MoveLimits,
}

impl Game for Septica {
    fn name(&self) -> String {
        "septica".into()
    }

    fn seating(&self) -> Seating {
        Seating::Solo
    }

    fn limit_keys(&self) -> &'static [&'static str] {
        &["timeout", "startup", "time_control"]
    }

    fn play<'a>(
        &'a self,
        index: u64,
        seed: u64,
        seats: &'a [Seat],
        limits: BotLimits,
    ) -> PlayFuture<'a> {
        Box::pin(async move {
            let result = match septica::play_single(
                ready(seats),
                limits,
                self.time,
                seed,
                index - 1,
            )
            .await
            {
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
            Played {
                fields: json!({"deck": septica::shuffled_deck(seed, index - 1)}),
                results: vec![result],
            }
        })
    }
}

struct Acesup {
    timeout: Duration,
}

impl Game for Acesup {
    fn name(&self) -> String {
        "acesup".into()
    }

    fn seating(&self) -> Seating {
        Seating::Solo
    }

    fn limit_keys(&self) -> &'static [&'static str] {
        &["timeout"]
    }

    fn play<'a>(
        &'a self,
        index: u64,
        seed: u64,
        seats: &'a [Seat],
        limits: BotLimits,
    ) -> PlayFuture<'a> {
        Box::pin(async move {
            let deck = acesup::deck::random_deck(seed, index - 1);
            let config = JudgeConfig {
                program: ready(seats).clone(),
                limits,
                timeout: self.timeout,
                decks: Decks::Random {
                    count: 0,
                    seed: None,
                },
                results: None,
            };
            let result = match acesup::judge(&config, &deck).await {
                Ok((verdict, elapsed, ended, stderr)) => with_verdict(
                    json!({
                        "won": verdict == acesup::Verdict::Accepted,
                        "error": (verdict != acesup::Verdict::Accepted).then(|| verdict.to_string()),
                        "slowest_micros": elapsed.as_micros() as u64,
                        "stderr": stderr,
                    }),
                    verdict.status(ended),
                ),
                Err(e) => cannot_start(&e),
            };
            let cards: Vec<String> = deck.iter().map(|c| c.to_string()).collect();
            Played {
                fields: json!({"deck": cards.join(" ")}),
                results: vec![result],
            }
        })
    }
}

struct Chomp {
    arrays: Vec<ArrayFile>,
    rules: Rules,
    start: (Coord, Coord),
    seats: usize,
}

impl Game for Chomp {
    fn name(&self) -> String {
        "chomp".into()
    }

    fn seating(&self) -> Seating {
        Seating::Table { seats: self.seats }
    }

    fn limit_keys(&self) -> &'static [&'static str] {
        &["prep", "starve", "max_rounds", "start", "arrays", "seats"]
    }

    fn fingerprint(&self) -> Vec<String> {
        self.arrays.iter().map(ArrayFile::letters).collect()
    }

    fn problems(&self, entrants: usize) -> Vec<String> {
        let mut out = Vec::new();
        if entrants > 0 && (self.seats == 0 || self.seats > entrants) {
            out.push(format!(
                "limits.seats must be from 1 to the number of entrants ({entrants})"
            ));
        }
        // A fixed start cell outside an array would be a game that never
        // ends.
        for array in &self.arrays {
            if let Err(e) = chomp::check_start(self.start, array) {
                out.push(format!("limits.start: {e}"));
            }
        }
        out
    }

    fn supports(&self, expectation: &str) -> bool {
        expectation == "mean_score"
    }

    fn play<'a>(
        &'a self,
        index: u64,
        seed: u64,
        seats: &'a [Seat],
        limits: BotLimits,
    ) -> PlayFuture<'a> {
        Box::pin(async move {
            let specs: Vec<SeatSpec> = seats
                .iter()
                .map(|s| SeatSpec {
                    entrant: s.entrant,
                    dir: PathBuf::from(&s.name),
                    program: s.program.clone(),
                })
                .collect();
            let array = &self.arrays[((index - 1) % self.arrays.len() as u64) as usize];
            let start = start_cell(
                self.start,
                array,
                &mut SplitMix64::for_game(seed, index - 1),
            );
            let rules = Rules {
                limits,
                ..self.rules
            };
            let result = chomp_game::play(&specs, &array.rows, start, rules).await;
            let mut players = result.players;
            players.sort_by_key(|p| p.player);
            let results = players
                .iter()
                .map(|p| {
                    with_verdict(
                        json!({
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
            Played {
                fields: json!({
                    "array": array.path.display().to_string(),
                    "start": [start.col, start.row],
                    "rounds": result.rounds,
                    "end": result.end,
                }),
                results,
            }
        })
    }
}

/// A game played by an external judge (`docs/judge-protocol.md`).
struct External {
    game: ExternalGame,
    seats: usize,
}

impl Game for External {
    fn name(&self) -> String {
        self.game.name.clone()
    }

    /// A game for one player is played alone: every entrant on the same
    /// seed and index, compared game by game.
    fn seating(&self) -> Seating {
        if self.game.max_players == 1 {
            Seating::Solo
        } else {
            Seating::Table { seats: self.seats }
        }
    }

    fn problems(&self, entrants: usize) -> Vec<String> {
        if self.seating() != Seating::Solo && self.seats > entrants {
            vec![format!(
                "{} seats {} players a game, more than the {entrants} entrants",
                self.game.name, self.seats
            )]
        } else {
            Vec::new()
        }
    }

    fn startup(&self) -> Option<Duration> {
        self.game.startup
    }

    fn limit_keys(&self) -> &'static [&'static str] {
        &["timeout", "startup", "time_control", "seats"]
    }

    fn fingerprint(&self) -> Vec<String> {
        // The judge's own files decide the games too: a changed judge is
        // another tournament. Its command's words that name files in the
        // game's directory (the script, the binary) are read whole.
        let mut parts = vec![format!("{:?}", self.game.judge)];
        parts.push(std::fs::read_to_string(&self.game.file).unwrap_or_default());
        for word in &self.game.judge {
            let path = self.game.dir.join(word);
            if path.is_file()
                && let Ok(bytes) = std::fs::read(&path)
            {
                parts.push(crate::record::fingerprint(&[&String::from_utf8_lossy(
                    &bytes,
                )]));
            }
        }
        parts
    }

    fn supports(&self, expectation: &str) -> bool {
        expectation == "mean_score"
    }

    fn play<'a>(
        &'a self,
        index: u64,
        seed: u64,
        seats: &'a [Seat],
        limits: BotLimits,
    ) -> PlayFuture<'a> {
        Box::pin(async move {
            // A disqualified seat is given a program that cannot start, so
            // the judge sees it fail like any player that cannot start;
            // its record then says why it never played.
            let bots: Vec<BotSpec> = seats
                .iter()
                .map(|s| match &s.program {
                    Ok(spec) => spec.clone(),
                    Err(_) => BotSpec {
                        program: "/nonexistent/disqualified".into(),
                        args: vec![],
                        dir: None,
                    },
                })
                .collect();
            let result = external::play_game(&self.game, &bots, limits, seed, index).await;
            let solo = self.seating() == Seating::Solo;
            let results = result
                .players
                .iter()
                .zip(seats)
                .map(|(p, seat)| {
                    let mut value = serde_json::to_value(p).unwrap_or(Value::Null);
                    if let Some(fields) = value.as_object_mut() {
                        fields.remove("player");
                        // Played alone, a game is won with a positive score.
                        if solo {
                            fields.insert("won".into(), p.score.is_some_and(|s| s > 0.0).into());
                        }
                        if !p.micros.is_empty() {
                            fields.insert("slowest_micros".into(), slowest(&p.micros).into());
                        }
                    }
                    match &seat.program {
                        Err(why) => {
                            let mut value = with_verdict(value, why.verdict());
                            value["error"] = Value::from(why.why.as_str());
                            value
                        }
                        Ok(_) => value,
                    }
                })
                .collect();
            let mut fields = json!({});
            if let Some(summary) = result.summary {
                fields["summary"] = summary;
            }
            if let Some(e) = result.judge_error {
                fields["judge_error"] = serde_json::to_value(e).unwrap_or(Value::Null);
            }
            Played { fields, results }
        })
    }
}

fn duration(value: Option<crate::units::TomlDuration>, default: Duration) -> Duration {
    value.map_or(default, |d| d.0)
}

/// The game a tournament or ci file names, with its `[limits]`, for
/// `entrants` entrants; relative paths are taken from `base`. The only
/// place that names the built-in games.
pub fn load(
    game: &GameRef,
    l: &Limits,
    entrants: usize,
    base: &Path,
) -> Result<Arc<dyn Game>, String> {
    let time = |default: u64| MoveLimits {
        timeout: duration(l.timeout, Duration::from_secs(default)),
        control: l.time_control,
    };
    Ok(match game {
        GameRef::Builtin(GameKind::Evensteven) => Arc::new(EvenSteven { time: time(10) }),
        GameRef::Builtin(GameKind::Septica) => Arc::new(Septica { time: time(10) }),
        GameRef::Builtin(GameKind::Acesup) => Arc::new(Acesup {
            timeout: time(5).timeout,
        }),
        GameRef::Builtin(GameKind::Chomp) => {
            let arrays = load_arrays(
                &base.join(
                    l.arrays
                        .as_deref()
                        .ok_or("a Chomp game needs limits.arrays (an array file or directory)")?,
                ),
            )?;
            let start = match &l.start {
                None => (Coord::Random, Coord::Random),
                Some([x, y]) => (
                    x.parse().map_err(|e| format!("limits.start: {e}"))?,
                    y.parse().map_err(|e| format!("limits.start: {e}"))?,
                ),
            };
            Arc::new(Chomp {
                arrays,
                rules: Rules {
                    prep: duration(l.prep, chomp::DEFAULT_PREP),
                    starve: duration(l.starve, chomp::DEFAULT_STARVE),
                    limits: BotLimits::default(),
                    max_rounds: l.max_rounds,
                    record_moves: false,
                },
                start,
                seats: l.seats.unwrap_or(entrants),
            })
        }
        GameRef::External(path) => {
            let mut game = ExternalGame::load(&base.join(path))?;
            // Tournaments and ci do not record frames.
            game.keep_frames = false;
            if l.timeout.is_some() || l.time_control.is_some() {
                game.time = MoveLimits {
                    timeout: duration(l.timeout, game.time.timeout),
                    control: l.time_control.or(game.time.control),
                };
            }
            let seats = l.seats.unwrap_or(entrants);
            if !(game.min_players..=game.max_players).contains(&seats) {
                return Err(format!(
                    "{} is for {} to {} players; this one seats {seats} (limits.seats, or the number of entrants)",
                    path.display(),
                    game.min_players,
                    game.max_players
                ));
            }
            Arc::new(External { game, seats })
        }
    })
}
