//! Chomp: K programs eating letters on a projective plane, refereed like the
//! contest's `ch` tournament program. Statement:
//! `../shared/seeds/002_444c02bd8daf696d.txt`; the project's account of the
//! rules and rulings: `docs/chomp.md`.

pub mod array;
pub use crate::bot::build;
pub mod distance;
pub mod game;
pub mod grid;
pub mod protocol;
pub mod recording;
pub mod standings;
pub mod view;

/// The statement's preparation time, between the array and the first round.
pub const DEFAULT_PREP: Duration = Duration::from_secs(60);
/// The statement's starvation budget.
pub const DEFAULT_STARVE: Duration = Duration::from_secs(45);

/// A preparation time from which each game's line says it waits for it.
const NOTICEABLE_PREP: Duration = Duration::from_secs(5);

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::{STDERR_TAIL_LINES, show_stderr_tail};
use crate::bot::stderr::last_lines;
use crate::bot::{BotLimits, BotSpec};
use crate::exit::{Refusal, Status};
use crate::outcome::Disqualified;
use crate::record::{self, Records};
use crate::rng::{SplitMix64, fresh_seed};
use crate::text;
use build::BuildOptions;
use game::{End, GameResult, PlayerResult, Rules, SeatSpec};
pub use grid::{Cell, Dir, Grid};

/// One coordinate of `--start`: a number, or `R` for random.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coord {
    Random,
    At(u32),
}

impl std::str::FromStr for Coord {
    type Err = String;
    fn from_str(text: &str) -> Result<Coord, String> {
        if text == "R" || text == "r" {
            return Ok(Coord::Random);
        }
        match text.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(Coord::At(n)),
            _ => Err(format!(
                "{text:?} is neither a column/row number (from 1) nor R"
            )),
        }
    }
}

/// Everything `referee chomp` needs.
#[derive(Clone, Debug)]
pub struct ChompConfig {
    /// An array file, or a directory of `*.txt` array files (cycled).
    pub array: PathBuf,
    pub dirs: Vec<PathBuf>,
    pub start: (Coord, Coord),
    pub prep: Duration,
    pub starve: Duration,
    pub limits: BotLimits,
    pub seed: Option<u64>,
    pub build: BuildOptions,
    pub results: Option<PathBuf>,
    pub record_moves: bool,
    pub games: u64,
    pub max_rounds: Option<u64>,
    /// Skip the games `results` already holds for this run.
    pub resume: bool,
}

/// An array file, read and checked.
pub struct ArrayFile {
    pub path: PathBuf,
    pub rows: Vec<Vec<u8>>,
}

impl ArrayFile {
    pub fn cols(&self) -> u32 {
        self.rows[0].len() as u32
    }

    pub fn rows(&self) -> u32 {
        self.rows.len() as u32
    }

    /// The letters, rows joined by `/`: what a fingerprint of a run that
    /// plays on this array must include.
    pub fn letters(&self) -> String {
        self.rows
            .iter()
            .map(|r| String::from_utf8_lossy(r))
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// Reads `path`: one array file, or every `*.txt` file of a directory in
/// name order. Errors name the file, line and column.
pub fn load_arrays(path: &Path) -> Result<Vec<ArrayFile>, String> {
    let files = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "txt"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(format!(
                "{}: no *.txt array files in this directory",
                path.display()
            ));
        }
        files
    } else {
        vec![path.to_owned()]
    };
    files
        .into_iter()
        .map(|file| {
            let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let rows = array::parse(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
            Ok(ArrayFile { path: file, rows })
        })
        .collect()
}

#[derive(Serialize)]
struct GameRecord<'a> {
    game: &'static str,
    index: u64,
    seed: u64,
    /// The run's fingerprint (see [`run_fingerprint`]).
    run: &'a str,
    array: String,
    cols: u32,
    rows: u32,
    start: [u32; 2],
    rounds: u64,
    end: End,
    players: &'a [PlayerResult],
    /// With `--record-moves`: the moves as text (see [`recording`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    moves: Option<String>,
    /// With `--record-moves`: the array's letters, row after row, so that
    /// a replay needs no array file; the starvation budget and each
    /// round's turn times as text (see `docs/replay.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    letters: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    starve_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    times: Option<String>,
    time: String,
    referee: &'static str,
}

/// Runs `referee chomp`: builds, plays the games, prints standings.
pub async fn run(config: &ChompConfig) -> Status {
    crate::exit::said("referee chomp", prepare_and_play(config).await)
}

/// What a game's line says of a preparation time anyone would notice, or
/// the run looks hung while it waits (the statement's 60s by default).
fn prep_notice(prep: Duration) -> String {
    if prep < NOTICEABLE_PREP {
        return String::new();
    }
    format!(
        "; the players prepare for {} (--prep) before the first round",
        crate::units::human_duration(prep)
    )
}

async fn prepare_and_play(config: &ChompConfig) -> Result<Status, Refusal> {
    let arrays = load_arrays(&config.array)?;
    for a in &arrays {
        check_start(config.start, a)?;
    }
    let mut records = config
        .results
        .as_deref()
        .map(Records::open)
        .transpose()
        .map_err(|e| e.to_string())?;
    let fingerprint = run_fingerprint(config, &arrays);
    let (seed, mut done) = resume(config, &fingerprint)?;
    let programs = build_entrants(config).await?;
    let dirs: Vec<String> = config
        .dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    let mut shown = Shown {
        aggregate: standings::Aggregate::new(&dirs),
        told: vec![false; config.dirs.len()],
        games: config.games,
        dirs: &dirs,
    };
    let rules = Rules {
        prep: config.prep,
        starve: config.starve,
        limits: config.limits,
        max_rounds: config.max_rounds,
        record_moves: config.record_moves,
    };
    announce(config, seed, done.len() as u64);
    for index in 0..config.games {
        let array = &arrays[index as usize % arrays.len()];
        let start = start_cell(config.start, array, &mut SplitMix64::for_game(seed, index));
        let prepare = prep_notice(config.prep);
        println!(
            "game {}: {} ({}x{}), start {}{prepare}",
            index + 1,
            array.path.display(),
            array.cols(),
            array.rows(),
            start
        );
        if let Some(result) = done.remove(&(index + 1)) {
            println!("  already played (resumed from the results file)");
            shown.show(&result, index);
            continue;
        }
        let seats = seats_of(config, &programs, index);
        let result = game::play(&seats, &array.rows, start, rules).await;
        if let Some(records) = records.as_mut() {
            let played = Played {
                index,
                seed,
                fingerprint: &fingerprint,
                array,
                start,
            };
            if let Err(e) = records.append(&played.record(config, &result)) {
                eprintln!("referee chomp: {e}");
                return Ok(Status::Io);
            }
        }
        // Reported once recorded: a reader that stops at this report
        // (`| head`) finds the game in the file.
        shown.show(&result, index);
    }
    if config.games > 1 {
        println!("standings after {} games:", shown.aggregate.games());
        println!("{}", shown.aggregate.table());
    }
    if let Some(Err(e)) = records.map(Records::finish) {
        eprintln!("referee chomp: {e}");
        return Ok(Status::Io);
    }
    Ok(Status::Pass)
}

/// Every entrant's folder built: its program, or why it is disqualified
/// (said on standard error). Under --sandbox the builds run in it too:
/// bubblewrap must be there before anything is built.
async fn build_entrants(
    config: &ChompConfig,
) -> Result<Vec<Result<BotSpec, Disqualified>>, Refusal> {
    if config.limits.sandbox {
        crate::bot::spawn::check_sandbox().map_err(|e| e.to_string())?;
    }
    let built = build::build_all(&config.dirs, &config.build).await;
    if let Some(why) = build::referees_failure(&built) {
        return Err(Refusal::internal(why));
    }
    let programs: Vec<Result<BotSpec, Disqualified>> = built
        .into_iter()
        .map(|built| built.map_err(|e| Disqualified::build_failed(e.to_string())))
        .collect();
    for (i, program) in programs.iter().enumerate() {
        if let Err(why) = program {
            eprintln!("referee chomp: entrant {} disqualified: {why}", i + 1);
        }
    }
    if programs.iter().all(Result::is_err) {
        return Err("every entrant is disqualified; no game to play".into());
    }
    Ok(programs)
}

/// The run's first line, and a warning when the games left (those not
/// `done` already) may take long.
fn announce(config: &ChompConfig, seed: u64, done: u64) {
    let k = config.dirs.len();
    println!(
        "chomp: {k} player{}, {} game{}, seed {seed}",
        if k == 1 { "" } else { "s" },
        config.games,
        if config.games == 1 { "" } else { "s" },
    );
    let to_play = config.games.saturating_sub(done);
    if let Some(warning) =
        long_run_warning(to_play, 1, config.prep, config.starve, LimitNames::Options)
    {
        eprintln!("referee chomp: warning: {warning}");
    }
}

/// The seats of game `index`: they rotate, so that in game g seat s
/// holds entrant (s + g) mod K.
fn seats_of(
    config: &ChompConfig,
    programs: &[Result<BotSpec, Disqualified>],
    index: u64,
) -> Vec<SeatSpec> {
    let k = config.dirs.len();
    (0..k)
        .map(|s| {
            let e = (s + index as usize) % k;
            SeatSpec {
                entrant: e,
                dir: config.dirs[e].clone(),
                program: programs[e].clone(),
            }
        })
        .collect()
}

/// What is shown of the games as they end: each game's report and its
/// players' failures (each told once), and the standings so far.
struct Shown<'a> {
    aggregate: standings::Aggregate,
    told: Vec<bool>,
    games: u64,
    dirs: &'a [String],
}

impl Shown<'_> {
    /// Game `index` (from 0), played or resumed.
    fn show(&mut self, result: &GameResult, index: u64) {
        report(result, self.games, self.dirs);
        show_failures(result, index + 1, self.games, &mut self.told);
        self.aggregate.add(result);
    }
}

/// Game `index` (from 0) as played: what its record says besides its
/// result.
struct Played<'a> {
    index: u64,
    seed: u64,
    fingerprint: &'a str,
    array: &'a ArrayFile,
    start: Cell,
}

impl<'a> Played<'a> {
    /// The game's line of the results file.
    fn record(&self, config: &ChompConfig, result: &'a GameResult) -> GameRecord<'a> {
        let array = self.array;
        GameRecord {
            game: "chomp",
            index: self.index + 1,
            seed: self.seed,
            run: self.fingerprint,
            array: array.path.display().to_string(),
            cols: array.cols(),
            rows: array.rows(),
            start: [self.start.col, self.start.row],
            rounds: result.rounds,
            end: result.end,
            players: &result.players,
            moves: result.moves.as_deref().map(recording::moves_text),
            letters: config.record_moves.then(|| {
                array
                    .rows
                    .iter()
                    .map(|r| String::from_utf8_lossy(r))
                    .collect()
            }),
            starve_ms: config
                .record_moves
                .then(|| u64::try_from(config.starve.as_millis()).unwrap_or(u64::MAX)),
            times: result.times.as_deref().map(recording::times_text),
            time: record::timestamp(),
            referee: record::REFEREE_VERSION,
        }
    }
}

/// After one game: its full table in a single-game run, a line otherwise.
fn report(result: &GameResult, games: u64, dirs: &[String]) {
    let summary = format!("{} rounds, {}", result.rounds, result.end.describe());
    if games == 1 {
        println!("game over after {summary}");
        println!("{}", standings::game_table(result));
        return;
    }
    let mut by_entrant: Vec<&PlayerResult> = result.players.iter().collect();
    by_entrant.sort_by_key(|p| p.entrant);
    let scores: Vec<String> = by_entrant
        .iter()
        .map(|p| {
            let note = match p.fate {
                game::Fate::Alive => String::new(),
                fate => format!(" ({})", fate.name()),
            };
            format!("{} {}{note}", dirs[p.entrant], p.score)
        })
        .collect();
    println!("  {summary}: {}", scores.join(", "));
}

/// Says on standard error why players of game `index` failed, each with
/// its last lines on standard error (a JVM's `Could not find or load main
/// class`). In a run of one game every failure; in a longer one each
/// entrant's first (`told` marks the entrants told of), so that a bot that
/// fails every game does not bury the others: the game lines show the rest.
fn show_failures(result: &GameResult, index: u64, games: u64, told: &mut [bool]) {
    for p in &result.players {
        let Some(error) = &p.error else {
            continue;
        };
        // A record read back names its entrant: never trusted as an index.
        let Some(told) = told.get_mut(p.entrant) else {
            continue;
        };
        if std::mem::replace(told, true) && games > 1 {
            continue;
        }
        let whose = format!("player {} ({})", p.player, text::terminal(&p.dir));
        let (game, first) = match games {
            1 => (String::new(), ""),
            _ => (
                format!("game {index}, "),
                " (this entrant's first failure; the game lines show the others)",
            ),
        };
        eprintln!(
            "referee chomp: {game}{whose}: {}{first}",
            text::terminal_lines(error)
        );
        show_stderr_tail(
            &format!("referee chomp: {whose}: its last lines on standard error:"),
            &last_lines(p.stderr.as_deref().unwrap_or_default(), STDERR_TAIL_LINES),
        );
    }
}

/// What decides a run's games, apart from the seed: the arrays (their
/// contents), the entrants in order, the start, and the rules' limits.
fn run_fingerprint(config: &ChompConfig, arrays: &[ArrayFile]) -> String {
    let mut parts: Vec<String> = vec!["chomp".into()];
    for a in arrays {
        parts.push(a.path.display().to_string());
        parts.push(a.letters());
    }
    parts.extend(config.dirs.iter().map(|d| d.display().to_string()));
    parts.push(format!(
        "{:?} {:?} {:?}",
        config.start, config.starve, config.max_rounds
    ));
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    record::fingerprint(&refs)
}

/// A game read back from the results file.
#[derive(serde::Deserialize)]
struct StoredGame {
    index: u64,
    seed: u64,
    start: [u32; 2],
    rounds: u64,
    end: End,
    players: Vec<PlayerResult>,
    /// Text, or a list in records of earlier versions ([`recording`]).
    #[serde(default)]
    moves: serde_json::Value,
}

/// The run's seed, and with `--resume` the games already in the results
/// file for this run (by index). Without `--seed`, a resumed run takes the
/// seed its earlier games were played with.
fn resume(
    config: &ChompConfig,
    fingerprint: &str,
) -> Result<(u64, std::collections::HashMap<u64, GameResult>), String> {
    let mut done = std::collections::HashMap::new();
    let results = config.results.as_deref();
    let Some((path, stored)) =
        record::resumed(config.resume, results, "chomp", fingerprint, "games")?
    else {
        return Ok((config.seed.unwrap_or_else(fresh_seed), done));
    };
    let stored: Vec<StoredGame> = stored
        .into_iter()
        .map(serde_json::from_value)
        .collect::<Result<_, _>>()
        .map_err(|e| {
            format!(
                "{}: a record of this run cannot be read back: {e}",
                path.display()
            )
        })?;
    // Standings index entrants by these numbers: a record that does not
    // fit this run is refused, not trusted.
    let k = config.dirs.len();
    if let Some(bad) = stored
        .iter()
        .find(|g| g.players.len() != k || g.players.iter().any(|p| p.entrant >= k))
    {
        return Err(format!(
            "{}: game {} of this run does not have its {k} players, entrants 0 to {}: \
             the record was changed",
            path.display(),
            bad.index,
            k - 1
        ));
    }
    let seed = match (config.seed, stored.first()) {
        (Some(seed), _) => seed,
        (None, Some(first)) => first.seed,
        (None, None) => fresh_seed(),
    };
    for game in stored.into_iter().filter(|g| g.seed == seed) {
        done.insert(
            game.index,
            GameResult {
                start: Cell {
                    col: game.start[0],
                    row: game.start[1],
                },
                rounds: game.rounds,
                end: game.end,
                players: game.players,
                moves: recording::read_moves(&game.moves)
                    .map(|rounds| rounds.into_iter().map(str::to_owned).collect()),
                times: None,
            },
        );
    }
    eprintln!(
        "referee chomp: resuming: {} game(s) of this run already in {}",
        done.len(),
        path.display()
    );
    Ok((seed, done))
}

/// A fixed start cell must lie inside every array, or the game never ends.
pub fn check_start(start: (Coord, Coord), array: &ArrayFile) -> Result<(), String> {
    let (m, n) = (array.cols(), array.rows());
    if let Coord::At(col) = start.0
        && col > m
    {
        return Err(format!(
            "start column {col} is outside {} ({m} columns)",
            array.path.display()
        ));
    }
    if let Coord::At(row) = start.1
        && row > n
    {
        return Err(format!(
            "start row {row} is outside {} ({n} rows)",
            array.path.display()
        ));
    }
    Ok(())
}

/// The start cell of a game: `start`'s fixed coordinates, and random ones
/// drawn from `rng` (column first).
pub(crate) fn start_cell(start: (Coord, Coord), array: &ArrayFile, rng: &mut SplitMix64) -> Cell {
    let mut pick = |coord: Coord, size: u32| match coord {
        Coord::At(v) => v,
        Coord::Random => 1 + rng.below(u64::from(size)) as u32,
    };
    let col = pick(start.0, array.cols());
    let row = pick(start.1, array.rows());
    Cell { col, row }
}

/// Runs whose waits may add up to more than this are warned about (see
/// [`long_run_warning`]).
const LONG_RUN: Duration = Duration::from_secs(30 * 60);

/// How a warning names the limits to set: `referee chomp`'s options, or
/// a tournament file's `[limits]` keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitNames {
    Options,
    File,
}

/// The warning, if any, for `games` games played `at_once` at a time under
/// `prep` and `starve`: when they may spend more than half an hour only
/// waiting, and the statement's defaults, made for one game of a contest,
/// are why. Every game waits its whole preparation time; a bot that stops
/// answering costs a whole starvation budget in each game it plays. Says
/// what a class would set instead (docs/chomp.md, "A class-sized run").
pub fn long_run_warning(
    games: u64,
    at_once: usize,
    prep: Duration,
    starve: Duration,
    names: LimitNames,
) -> Option<String> {
    let rounds = u32::try_from(games.div_ceil(at_once.max(1) as u64)).unwrap_or(u32::MAX);
    let worst = prep.saturating_add(starve).saturating_mul(rounds);
    let defaults = [
        ("prep", prep, prep == DEFAULT_PREP, "3s"),
        ("starve", starve, starve == DEFAULT_STARVE, "5s"),
    ];
    if worst <= LONG_RUN || !defaults.iter().any(|(_, _, default, _)| *default) {
        return None;
    }
    let human = crate::units::human_duration;
    let limits: Vec<String> = defaults
        .iter()
        .map(|(name, value, default, _)| match default {
            true => format!("{name} {} (the statement's default)", human(*value)),
            false => format!("{name} {}", human(*value)),
        })
        .collect();
    let advice: Vec<String> = defaults
        .iter()
        .filter(|(_, _, default, _)| *default)
        .map(|(name, _, _, class)| match names {
            LimitNames::Options => format!("--{name} {class}"),
            LimitNames::File => format!("{name} = \"{class}\""),
        })
        .collect();
    let advice = match names {
        LimitNames::Options => advice.join(" "),
        LimitNames::File => format!("{} in [limits]", advice.join(" and ")),
    };
    let pace = match at_once {
        0 | 1 => "one at a time".to_owned(),
        n => format!("{n} at once"),
    };
    let preparation = match prep.is_zero() {
        true => String::new(),
        false => format!(
            "each game waits its whole preparation time ({} in all), and ",
            human(prep.saturating_mul(rounds))
        ),
    };
    Some(format!(
        "{games} Chomp games, {pace}, with {} may spend up to {} only waiting: \
         {preparation}a bot that stops answering costs a whole starvation budget in \
         each of its games; for a class, set {advice} (docs/chomp.md, \"A class-sized run\")",
        limits.join(" and "),
        human(worst),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statements_limits_over_many_games_are_a_warning_with_advice() {
        let secs = Duration::from_secs;
        let warning =
            long_run_warning(200, 2, DEFAULT_PREP, DEFAULT_STARVE, LimitNames::File).unwrap();
        assert!(
            warning.starts_with(
                "200 Chomp games, 2 at once, with prep 1m (the statement's default) and \
                 starve 45s (the statement's default) may spend up to 2h 55m only waiting: \
                 each game waits its whole preparation time (1h 40m in all)"
            ),
            "{warning}"
        );
        assert!(
            warning.contains("set prep = \"3s\" and starve = \"5s\" in [limits]"),
            "{warning}"
        );
        let warning =
            long_run_warning(50, 1, secs(0), DEFAULT_STARVE, LimitNames::Options).unwrap();
        assert!(warning.contains("one at a time"), "{warning}");
        assert!(
            warning.contains("up to 37m 30s only waiting: a bot"),
            "{warning}"
        );
        assert!(warning.contains("set --starve 5s ("), "{warning}");
        // Limits chosen by hand, or a short run: nothing to say.
        assert_eq!(
            long_run_warning(200, 2, secs(61), secs(46), LimitNames::File),
            None
        );
        assert_eq!(
            long_run_warning(30, 2, secs(0), DEFAULT_STARVE, LimitNames::File),
            None
        );
        assert_eq!(
            long_run_warning(0, 0, DEFAULT_PREP, DEFAULT_STARVE, LimitNames::File),
            None
        );
        assert!(
            long_run_warning(u64::MAX, 1, DEFAULT_PREP, DEFAULT_STARVE, LimitNames::File).is_some()
        );
    }

    #[test]
    fn a_resumed_game_reads_its_moves_in_either_form() {
        let player = r#"{"player":1,"entrant":0,"dir":"a","score":0,"fate":"alive","status":"ok","eaten":0,"moves":2,"rounds":2,"slowest_micros":5}"#;
        for moves in [r#""CN S-""#, r#"["CN","S-"]"#] {
            let line = format!(
                r#"{{"index":1,"seed":2,"start":[1,1],"rounds":2,"end":"all_dead","players":[{player}],"moves":{moves}}}"#
            );
            let game: StoredGame = serde_json::from_str(&line).unwrap();
            assert_eq!(recording::read_moves(&game.moves).unwrap(), ["CN", "S-"]);
        }
    }
}
