//! The games behind the [`Game`] interface: the four built-in games and
//! external judges, and [`load`], the one place that names them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::GameKind;
use super::GameRef;
use super::record::REFUSED;
use super::record::{Score, SeatResult};
use super::{EndFuture, Game, Limits, PlayFuture, Played, Seat, Seating, Sitting};
use crate::bot::clock::MoveLimits;
use crate::bot::{BotLimits, BotSpec};
use crate::games::Single;
use crate::games::acesup::{self, Decks, JudgeConfig};
use crate::games::chomp::game::{self as chomp_game, Rules, SeatSpec};
use crate::games::chomp::{self, ArrayFile, Coord, load_arrays, start_cell};
use crate::games::evensteven::{deal, dealer};
use crate::games::external::{self, ExternalGame};
use crate::games::septica;
use crate::rng::SplitMix64;

/// `value`'s fields, for a record's setup (`json!` objects only).
fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A solo game's moves in its result (`plays`), when they are recorded.
fn plays<P: serde::Serialize>(record_moves: bool, plays: &[P]) -> Map<String, Value> {
    let mut detail = Map::new();
    if record_moves && let Ok(plays) = serde_json::to_value(plays) {
        detail.insert("plays".into(), plays);
    }
    detail
}

/// Standard error kept in a record: none when the bot wrote none.
fn kept(stderr: String) -> Option<String> {
    (!stderr.is_empty()).then_some(stderr)
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

/// Even Steven and Septica: one player against the referee's dealer or
/// computer, a move at a time on the move clock, its plays kept with the
/// moves.
struct CardGame {
    kind: GameKind,
    time: MoveLimits,
    record_moves: bool,
}

impl CardGame {
    /// The deal's setup and its player's result.
    async fn evensteven(&self, sitting: Sitting<'_>) -> (Map<String, Value>, SeatResult) {
        let (index, seed) = (sitting.deal.setup, sitting.seed);
        let mut rng = SplitMix64::for_game(seed, index - 1);
        // Uniform over the statement's ranges: 1..=MAX_HAND, 1..=MAX_SEED.
        let n = 1 + rng.below(deal::MAX_HAND as u64) as usize;
        let deal_seed = 1 + rng.below(u64::from(deal::MAX_SEED)) as u32;
        let result = match dealer::play_single(
            ready(sitting.seats),
            sitting.limits,
            self.time,
            n,
            deal_seed,
        )
        .await
        {
            Ok(single) => self.result(single, "win"),
            Err(e) => SeatResult::cannot_start(&e),
        };
        (fields(json!({"n": n, "deal_seed": deal_seed})), result)
    }

    /// The match's setup and its player's result.
    async fn septica(&self, sitting: Sitting<'_>) -> (Map<String, Value>, SeatResult) {
        let (index, seed) = (sitting.deal.setup, sitting.seed);
        let result = match septica::play_single(
            ready(sitting.seats),
            sitting.limits,
            self.time,
            seed,
            index - 1,
        )
        .await
        {
            Ok((single, points)) => SeatResult {
                score: Some(Score::Tally(
                    [("computer", points[0]), ("player", points[1])]
                        .into_iter()
                        .map(|(side, points)| (side.to_owned(), points.into()))
                        .collect(),
                )),
                ..self.result(single, "player")
            },
            Err(e) => SeatResult::cannot_start(&e),
        };
        let setup = fields(json!({"deck": septica::shuffled_deck(seed, index - 1)}));
        (setup, result)
    }

    /// The player's result of `single`, won when its outcome is `winning`.
    fn result<P: serde::Serialize>(&self, single: Single<P>, winning: &str) -> SeatResult {
        SeatResult {
            won: Some(single.outcome == winning),
            outcome: Some(single.outcome.to_owned()),
            error: single.error,
            moves: Some(single.micros.len() as u64),
            slowest_micros: Some(slowest(&single.micros)),
            micros: Some(single.micros),
            startup_micros: single.startup_micros,
            stderr: kept(single.stderr),
            detail: plays(self.record_moves, &single.plays),
            ..SeatResult::of(single.verdict)
        }
        .measured(single.usage)
    }
}

impl Game for CardGame {
    fn name(&self) -> String {
        self.kind.name().into()
    }

    fn seating(&self) -> Seating {
        Seating::Solo
    }

    fn limit_keys(&self) -> &'static [&'static str] {
        &["timeout", "startup", "time_control"]
    }

    fn supports(&self, expectation: &str) -> bool {
        self.kind == GameKind::Evensteven && expectation == "no_unnecessary_loss"
    }

    fn play<'a>(&'a self, sitting: Sitting<'a>) -> PlayFuture<'a> {
        Box::pin(async move {
            let (setup, result) = if self.kind == GameKind::Evensteven {
                self.evensteven(sitting).await
            } else {
                self.septica(sitting).await
            };
            Played::solo(setup, result)
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

    fn play<'a>(&'a self, sitting: Sitting<'a>) -> PlayFuture<'a> {
        Box::pin(async move {
            let deck = acesup::deck::random_deck(sitting.seed, sitting.deal.setup - 1);
            let config = JudgeConfig {
                program: ready(sitting.seats).clone(),
                limits: sitting.limits,
                timeout: self.timeout,
                decks: Decks::Random {
                    count: 0,
                    seed: None,
                },
                results: None,
            };
            let result = match acesup::judge(&config, &deck).await {
                Ok(run) => SeatResult {
                    won: Some(run.verdict == acesup::Verdict::Accepted),
                    error: (run.verdict != acesup::Verdict::Accepted)
                        .then(|| run.verdict.to_string()),
                    slowest_micros: Some(run.elapsed.as_micros() as u64),
                    stderr: kept(run.stderr),
                    ..SeatResult::of(run.verdict.status(run.exit))
                }
                .measured(run.usage),
                Err(e) => SeatResult::cannot_start(&e),
            };
            let cards: Vec<String> = deck.iter().map(|c| c.to_string()).collect();
            Played::solo(fields(json!({"deck": cards.join(" ")})), result)
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

    fn run_warning(&self, games: u64, at_once: usize) -> Option<String> {
        chomp::long_run_warning(
            games,
            at_once,
            self.rules.prep,
            self.rules.starve,
            chomp::LimitNames::File,
        )
    }

    fn play<'a>(&'a self, sitting: Sitting<'a>) -> PlayFuture<'a> {
        let Sitting {
            deal, seed, seats, ..
        } = sitting;
        let index = deal.setup;
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
                limits: sitting.limits,
                ..self.rules
            };
            let result = chomp_game::play(&specs, &array.rows, start, rules).await;
            let mut players = result.players;
            players.sort_by_key(|p| p.player);
            let results = players
                .iter()
                .map(|p| SeatResult {
                    // Seats count from 0 in every tournament record;
                    // Chomp's own players, as in the statement, from 1.
                    seat: Some(p.player - 1),
                    score: Some(Score::Points(p.score.into())),
                    slowest_micros: Some(p.slowest_micros),
                    startup_micros: p.startup_micros,
                    peak_memory_bytes: p.peak_memory_bytes,
                    cpu_micros: p.cpu_micros,
                    error: p.error.clone(),
                    stderr: p.stderr.clone(),
                    detail: fields(json!({
                        "fate": p.fate,
                        "eaten": p.eaten,
                        "rounds": p.rounds,
                    })),
                    ..SeatResult::of(p.verdict)
                })
                .collect();
            let mut setup = fields(json!({
                "array": array.path.display().to_string(),
                "start": [start.col, start.row],
                "rounds": result.rounds,
                "end": result.end,
            }));
            if self.rules.record_moves {
                // What a replay needs, without the array file.
                setup.extend(fields(json!({
                    "cols": array.cols(),
                    "rows": array.rows(),
                    "letters": array.rows.iter().map(|r| String::from_utf8_lossy(r)).collect::<String>(),
                    "starve_ms": u64::try_from(self.rules.starve.as_millis()).unwrap_or(u64::MAX),
                    "moves": result.moves.as_deref().map(chomp::recording::moves_text),
                    "times": result.times.as_deref().map(chomp::recording::times_text),
                })));
            }
            Played {
                setup,
                results,
                judge_error: None,
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
        &["timeout", "startup", "time_control", "time_margin", "seats"]
    }

    fn fingerprint(&self) -> Vec<String> {
        // The judge's own files decide the games too: a changed judge is
        // another tournament. Its command's words that name files in the
        // game's directory (the script, the binary) are read whole.
        let mut parts = vec![format!("{:?}", self.game.judge)];
        let text = std::fs::read_to_string(&self.game.file).unwrap_or_default();
        parts.push(without_reading_keys(&text));
        for word in &self.game.judge {
            let path = self.game.dir.join(word);
            if path.is_file()
                && let Ok(bytes) = std::fs::read(&path)
            {
                parts.push(crate::record::fingerprint_lossy(&bytes));
            }
        }
        parts
    }

    fn supports(&self, expectation: &str) -> bool {
        expectation == "mean_score"
    }

    fn end_of_thread(&self) -> EndFuture<'_> {
        Box::pin(async move {
            if let Some(carried) = carried_for(&self.game.file) {
                carried.close(&self.game).await;
            }
        })
    }

    fn play<'a>(&'a self, sitting: Sitting<'a>) -> PlayFuture<'a> {
        let Sitting {
            deal, seed, seats, ..
        } = sitting;
        Box::pin(async move {
            let players = external_players(seats);
            let carried = carried_for(&self.game.file).unwrap_or_default();
            let (mut result, carried) = external::play_game(
                &self.game,
                &players,
                sitting.limits,
                seed,
                deal.index,
                deal.round,
                carried,
            )
            .await;
            CARRIED.set(Some((self.game.file.clone(), carried)));
            let setup = judged_setup(&mut result);
            let solo = self.seating() == Seating::Solo;
            let results = result
                .players
                .into_iter()
                .zip(seats)
                .map(|(p, seat)| judged_seat(p, seat, solo))
                .collect();
            Played {
                setup,
                results,
                judge_error: result.judge_error,
            }
        })
    }
}

/// The judge's players, one per seat. A disqualified seat is given a
/// program that cannot start, so the judge sees it fail like any player
/// that cannot start; its record then says why it never played.
fn external_players(seats: &[Seat]) -> Vec<external::Player> {
    seats
        .iter()
        .map(|s| external::Player {
            name: s.name.clone(),
            spec: match &s.program {
                Ok(spec) => spec.clone(),
                Err(_) => BotSpec {
                    program: "/nonexistent/disqualified".into(),
                    args: vec![],
                    dir: None,
                    hide: vec![],
                    env: Default::default(),
                },
            },
            options: s.options.clone(),
            time_control: s.time_control,
            bot: s.entrant,
        })
        .collect()
}

/// One seat's result as the judge gave it, or why it never played.
fn judged_seat(p: external::PlayerResult, seat: &Seat, solo: bool) -> SeatResult {
    let mut r = SeatResult {
        seat: Some(p.seat),
        // Played alone, a game is won with a positive score.
        won: solo.then(|| p.score.is_some_and(|s| s > 0.0)),
        score: p.score.and_then(Score::of),
        rank: p.rank,
        error: p.error,
        slowest_micros: (!p.micros.is_empty()).then(|| slowest(&p.micros)),
        micros: Some(p.micros),
        startup_micros: p.startup_micros,
        peak_memory_bytes: p.peak_memory_bytes,
        cpu_micros: p.cpu_micros,
        stderr: p.stderr,
        stderr_truncated: p.stderr_truncated,
        ..SeatResult::of(p.verdict)
    };
    if let Err(why) = &seat.program {
        r.verdict = why.verdict();
        r.error = Some(why.why.clone());
    }
    r
}

/// What a judged game's record keeps of it besides the seats: the judge's
/// summary, frames and log, and its refusal (taken from `result`).
fn judged_setup(result: &mut external::ExternalResult) -> Map<String, Value> {
    let mut setup = Map::new();
    if let Some(summary) = result.summary.take() {
        setup.insert("summary".into(), summary);
    }
    if !result.frames.is_empty() {
        setup.insert(
            "frames".into(),
            Value::Array(std::mem::take(&mut result.frames)),
        );
    }
    if !result.log.is_empty() {
        let log = std::mem::take(&mut result.log)
            .into_iter()
            .map(Value::String)
            .collect();
        setup.insert("log".into(), Value::Array(log));
    }
    if let Some(refusal) = &result.refused {
        setup.insert(REFUSED.into(), serde_json::json!(refusal));
    }
    setup
}

thread_local! {
    /// What a game thread carries to its next game: its judge (`reuse =
    /// true`) and its players (`keep_players = true`). Each game thread
    /// runs its games one after another on a runtime of its own, so one
    /// judge serves them all, as `referee play`'s does, instead of an
    /// interpreter's start per game, and an engine plays its next game
    /// without starting again. One game file's at a time; ended by
    /// [`Game::end_of_thread`] when the thread has no more games, or
    /// killed with the thread (a stopped run).
    static CARRIED: std::cell::RefCell<Option<(PathBuf, external::Carried)>> =
        const { std::cell::RefCell::new(None) };
}

/// What this thread's last game carried, taken, if it was `file`'s: what
/// another game file's games carried is not its (a ci run's cases may
/// share a thread), and is killed as it is dropped.
fn carried_for(file: &Path) -> Option<external::Carried> {
    CARRIED
        .take()
        .filter(|(carried_file, _)| carried_file == file)
        .map(|(_, carried)| carried)
}

/// How many players a game of the external `game` seats: `limits.seats`
/// when given; else a game for exactly N players seats N (a chess
/// gauntlet needs no `seats = 2`), and any other seats every entrant.
fn external_seats(
    game: &ExternalGame,
    given: Option<usize>,
    entrants: usize,
    path: &Path,
) -> Result<usize, String> {
    let range = game.min_players..=game.max_players;
    let seats = match given {
        Some(seats) => seats,
        None if game.min_players == game.max_players => game.min_players,
        None => entrants,
    };
    if range.contains(&seats) {
        return Ok(seats);
    }
    let from = if given.is_some() {
        "limits.seats"
    } else {
        "the number of entrants: write seats = N under [limits] for tables of N"
    };
    Err(format!(
        "{} is for {} to {} players; this one seats {seats} ({from})",
        path.display(),
        game.min_players,
        game.max_players
    ))
}

/// A game file's text without the lines of the keys that say where its
/// options' paths are read and which long lines are dropped
/// (`path_options`, `drop_long_lines`): added to a game file (chess's),
/// they leave the runs begun before them theirs to `--resume`.
fn without_reading_keys(text: &str) -> String {
    let reading = |line: &str| {
        ["path_options", "drop_long_lines"].iter().any(|key| {
            line.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
    };
    text.split_inclusive('\n')
        .filter(|line| !reading(line))
        .collect()
}

/// `--game-option`s for `game` (relative to `base`), its path options
/// taken from the current folder, before they are set over a tournament
/// file's `[options]`, whose paths [`load`] takes from the file's folder.
/// As given when the game is not an external one, or its file does not
/// read (then `load` says why).
pub fn command_line_options(game: &GameRef, base: &Path, options: &toml::Table) -> toml::Table {
    let GameRef::External(path) = game else {
        return options.clone();
    };
    match (
        ExternalGame::load(&base.join(path)),
        std::env::current_dir(),
    ) {
        (Ok(game), Ok(here)) => game.paths_from(options, &here),
        _ => options.clone(),
    }
}

fn duration(value: Option<crate::units::TomlDuration>, default: Duration) -> Duration {
    value.map_or(default, |d| d.0)
}

/// The game a tournament or ci file names, with its `[limits]` and, for an
/// external game, judge-wide `options` over its game file's, for
/// `entrants` entrants; relative paths are taken from `base`. With
/// `record_moves`, its records keep what a replay needs (moves, plays,
/// frames). The only place that names the built-in games.
pub fn load(
    game: &GameRef,
    l: &Limits,
    options: Option<&toml::Table>,
    entrants: usize,
    base: &Path,
    record_moves: bool,
) -> Result<Arc<dyn Game>, String> {
    if let (GameRef::Builtin(kind), Some(_)) = (game, options) {
        return Err(format!(
            "[options] (and --game-option) are passed to an external game's judge; {} has none",
            kind.name()
        ));
    }
    let time = |default: u64| MoveLimits {
        timeout: duration(l.timeout, Duration::from_secs(default)),
        control: l.time_control,
    };
    Ok(match game {
        GameRef::Builtin(kind @ (GameKind::Evensteven | GameKind::Septica)) => Arc::new(CardGame {
            kind: *kind,
            time: time(10),
            record_moves,
        }),
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
                    record_moves,
                },
                start,
                seats: l.seats.unwrap_or(entrants),
            })
        }
        GameRef::External(path) => {
            let mut game = ExternalGame::load(&base.join(path))?;
            if let Some(options) = options {
                // Paths given in the file are its folder's.
                game.set_options_from(options, base)?;
            }
            // Frames are kept when moves are recorded.
            game.keep_frames = record_moves;
            if l.timeout.is_some() || l.time_control.is_some() {
                game.time = MoveLimits {
                    timeout: duration(l.timeout, game.time.timeout),
                    control: l.time_control.or(game.time.control),
                };
            }
            if let Some(margin) = l.time_margin {
                game.time_margin = margin.0;
            }
            let seats = external_seats(&game, l.seats, entrants, path)?;
            Arc::new(External { game, seats })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chess game file as it was before it named its paths and long
    /// lines: the fingerprint of a run begun then is the same now.
    #[test]
    fn reading_keys_leave_the_fingerprint_as_it_was() {
        let now = include_str!("../../games/chess/game.toml");
        let before: String = now
            .lines()
            .filter(|l| !l.starts_with("path_options") && !l.starts_with("drop_long_lines"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_ne!(before, now);
        assert_eq!(without_reading_keys(now), before);
        let kept = "name = \"x\"\npath_optionsx = 1\n# path_options = []\n";
        assert_eq!(without_reading_keys(kept), kept);
        assert_eq!(
            without_reading_keys("drop_long_lines=[\"info\"]\nx = 1"),
            "x = 1"
        );
    }
}
