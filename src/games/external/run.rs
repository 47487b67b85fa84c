//! `referee play GAME.toml BOT...`: games of an external game, one after
//! the other, with one line per game and a summary.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::{ExternalGame, ExternalResult, Player, Round, Session};
use crate::bot::clock::TimeControl;
use crate::bot::{BotLimits, DEFAULT_STARTUP};
use crate::exit::Status;
use crate::outcome::Status as Outcome;
use crate::record::pgn::PgnWriter;
use crate::record::{REFEREE_VERSION, Records, timestamp};
use crate::stats::{Elo, EloModel, HeadToHead, pairs_text};

/// What `referee play` was asked to do.
#[derive(Debug)]
pub struct PlayConfig {
    pub game: PathBuf,
    /// The bots, in the order given; [`Player::bot`] is the position.
    pub bots: Vec<Player>,
    pub limits: BotLimits,
    pub timeout: Option<Duration>,
    /// Every bot's clock; a bot's own ([`Player::time_control`]) wins.
    pub time_control: Option<TimeControl>,
    /// `--game-option`s: the judge's options over the game file's.
    pub game_options: toml::Table,
    pub time_margin: Option<Duration>,
    pub seed: Option<u64>,
    pub games: u64,
    pub results: Option<PathBuf>,
    /// `--pgn FILE`: each game's `summary.pgn`, appended.
    pub pgn: Option<PathBuf>,
    pub record_moves: bool,
}

/// A record: the game's result with the fields every record has.
#[derive(Serialize)]
struct Record<'a> {
    #[serde(flatten)]
    result: &'a ExternalResult,
    time: String,
    referee: &'static str,
}

/// Plays the games; the exit status.
pub async fn run(config: &PlayConfig) -> Status {
    let mut game = match load_game(config) {
        Ok(game) => game,
        Err(e) => {
            eprintln!("referee play: {e}");
            return Status::Usage;
        }
    };
    let count = config.bots.len();
    crate::parallel::warn_if_oversubscribed("play", None, count);
    let (mut records, mut pgn) = match outputs(config) {
        Ok(outputs) => outputs,
        Err(status) => return status,
    };
    let seed = config.seed.unwrap_or_else(crate::rng::fresh_seed);
    let limits = bot_limits(config, &game);
    // Frames are kept for the records only.
    game.keep_frames = config.record_moves;
    let mut session = session(config, &game);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}: seed {seed}", game.name);
    let mut tally = Tally::new(count);
    let mut status = Status::Pass;
    // The judge's refusal of the run's settings, which stopped it.
    let mut refused = None;
    for index in 1..=config.games {
        let round = Round::of(index, count);
        let seated = seated(&config.bots, round);
        let mut result = session.play(&seated, limits, seed, index, round).await;
        if let Some(refusal) = &result.refused {
            // The organiser's settings are wrong: no game to record.
            eprintln!("referee play: {}", refusal.describe());
            refused = Some((index, refusal.describe()));
            status = Status::Usage;
            break;
        }
        // The record first, then the line that reports it: a reader that
        // stops at the line (`| head`) finds the game in the file.
        let publishing = crate::interrupt::publishing();
        if !config.record_moves {
            result.frames.clear();
        }
        if let Err(e) = keep(&result, records.as_mut(), pgn.as_mut()) {
            eprintln!("referee play: {e}");
            drop(publishing);
            return close(&mut session, Status::Io).await;
        }
        tell_game(&mut out, index, &result);
        tally.add(&result, &seated);
        if let Some(error) = &result.judge_error {
            report_judge_error(index, error);
            status = Status::Internal;
            break;
        }
        drop(publishing);
    }
    let status = close(&mut session, status).await;
    if let Some(records) = records
        && let Err(e) = records.finish()
    {
        eprintln!("referee play: {e}");
        return Status::Io;
    }
    summary(&mut out, refused, &tally, &config.bots);
    status
}

/// The files the games are kept in: `--results`, `--pgn`.
fn outputs(config: &PlayConfig) -> Result<(Option<Records>, Option<PgnWriter>), Status> {
    let records = match config.results.as_deref().map(Records::open).transpose() {
        Ok(records) => records,
        Err(e) => {
            eprintln!("referee play: {e}");
            return Err(Status::Io);
        }
    };
    let pgn = config
        .pgn
        .clone()
        .map(|path| PgnWriter::new(path, "referee play"));
    Ok((records, pgn))
}

/// Game `index` as it ends: the judge's log on standard error, its line
/// on standard output.
fn tell_game(out: &mut impl Write, index: u64, result: &ExternalResult) {
    for line in &result.log {
        eprintln!(
            "referee play: game {index}: judge: {}",
            crate::text::terminal(line)
        );
    }
    let _ = writeln!(out, "{}", game_line(result));
    let _ = out.flush();
}

/// The run's summary, and the game the judge refused (its index and why),
/// which stopped the run.
fn summary(out: &mut impl Write, refused: Option<(u64, String)>, tally: &Tally, bots: &[Player]) {
    match refused {
        // Nothing was played: the refusal is the run's whole story.
        Some((_, why)) if tally.games == 0 => {
            let _ = writeln!(out, "no game played: {why}");
        }
        Some((index, why)) => {
            let _ = write!(out, "{}", tally.summary(bots));
            let _ = writeln!(out, "game {index} was not played: {why}");
        }
        None => {
            let _ = write!(out, "{}", tally.summary(bots));
        }
    }
    let _ = out.flush();
}

/// Appends a finished game to `--results`, then its PGN to `--pgn`
/// (none for a void game, whose judge failed).
fn keep(
    result: &ExternalResult,
    records: Option<&mut Records>,
    pgn: Option<&mut PgnWriter>,
) -> Result<(), String> {
    if let Some(records) = records {
        let record = Record {
            result,
            time: timestamp(),
            referee: REFEREE_VERSION,
        };
        records.append(&record).map_err(|e| e.to_string())?;
    }
    match pgn {
        Some(pgn) if result.judge_error.is_none() => {
            pgn.append(result.index, result.summary.as_ref())
        }
        _ => Ok(()),
    }
}

/// Reads the game file, with the command line's options for the judge,
/// and checks that it takes as many players as there are bots.
fn load_game(config: &PlayConfig) -> Result<ExternalGame, String> {
    let count = config.bots.len();
    let mut game = ExternalGame::load(&crate::games::shipped::resolve(&config.game)?)?;
    // Paths given on the command line are the current folder's.
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    game.set_options_from(&config.game_options, &here)?;
    if count < game.min_players || count > game.max_players {
        return Err(format!(
            "{} takes {} player{} but {count} {} given",
            game.name,
            if game.min_players == game.max_players {
                game.min_players.to_string()
            } else {
                format!("{} to {}", game.min_players, game.max_players)
            },
            if game.max_players == 1 { "" } else { "s" },
            if count == 1 { "was" } else { "were" },
        ));
    }
    Ok(game)
}

/// The bots' limits: the command line's, with the game file's start-up
/// allowance unless --startup says otherwise.
fn bot_limits(config: &PlayConfig, game: &ExternalGame) -> BotLimits {
    let mut limits = config.limits;
    if limits.startup == DEFAULT_STARTUP
        && let Some(startup) = game.startup
    {
        limits.startup = startup;
    }
    limits
}

/// The run's session: the game file's move limits unless the command
/// line overrides them, and its players kept if it says so (the same
/// bots play every game of the run: a kept process follows its bot from
/// seat to seat).
fn session<'g>(config: &PlayConfig, game: &'g ExternalGame) -> Session<'g> {
    let mut session = Session::new(game);
    session.keep_players = game.keep_players;
    if let Some(timeout) = config.timeout {
        session.time.timeout = timeout;
    }
    if config.time_control.is_some() {
        session.time.control = config.time_control;
    }
    if let Some(margin) = config.time_margin {
        session.time_margin = margin;
    }
    session
}

/// Says on standard error how game `index`'s judge failed, with its last
/// lines on standard error.
fn report_judge_error(index: u64, error: &super::JudgeError) {
    eprintln!(
        "referee play: game {index}: judge error: {}",
        crate::text::terminal(&error.message)
    );
    if let Some(stderr) = &error.stderr {
        eprintln!("referee play: the judge's last lines on standard error:");
        eprint!("{}", crate::text::quoted_lines(stderr.lines()));
    }
}

/// Ends the judge and the kept players; a kept player that does not exit
/// within the grace period makes the status 3 at least, as it does the
/// dealer's (there is no game left to record it in).
async fn close(session: &mut Session<'_>, mut status: Status) -> Status {
    for farewell in session.close().await {
        eprintln!(
            "referee play: [{}] {}: {}",
            farewell.bot,
            crate::text::terminal(&farewell.name),
            farewell.message
        );
        if let Some(fault) = farewell.fault {
            status = status.max(fault);
        }
    }
    status
}

/// The bots in their seats for game `round.rotation` of round
/// `round.opening`: the one pairing rule of every run
/// (`docs/judge-protocol.md`), here for a table of every bot: round `o`
/// seats bot `(o − 1 + s) mod K` in seat `s`, and its game `r` rotates
/// that by `r`.
fn seated(bots: &[Player], round: Round) -> Vec<Player> {
    let k = bots.len() as u64;
    (0..k)
        .map(|s| bots[((round.opening - 1 + s + round.rotation) % k) as usize].clone())
        .collect()
}

/// `game 3: [0] a score 1 rank 1 ok; [1] b score 0 rank 2 timeout (move)`.
fn game_line(result: &ExternalResult) -> String {
    if let Some(error) = &result.judge_error {
        return format!(
            "game {}: judge error: {}",
            result.index,
            crate::text::terminal(&error.message)
        );
    }
    let players: Vec<String> = result
        .players
        .iter()
        .map(|p| {
            let score = p.score.map_or("-".to_owned(), |s| s.to_string());
            let rank = p.rank.map_or("-".to_owned(), |r| r.to_string());
            let name = crate::text::terminal(p.entrant.as_deref().unwrap_or_default());
            format!(
                "[{}] {name} score {score} rank {rank} {}",
                p.seat, p.verdict
            )
        })
        .collect();
    format!("game {}: {}", result.index, players.join("; "))
}

/// Totals per bot over the run.
struct Tally {
    games: u64,
    judge_errors: u64,
    bots: Vec<SeatTally>,
    /// Two bots: the first's games against the second, for its Elo.
    head_to_head: Option<HeadToHead>,
}

#[derive(Clone, Default)]
struct SeatTally {
    score: f64,
    firsts: u64,
    failures: u64,
}

impl Tally {
    fn new(bots: usize) -> Tally {
        Tally {
            games: 0,
            judge_errors: 0,
            bots: vec![SeatTally::default(); bots],
            head_to_head: (bots == 2).then(HeadToHead::default),
        }
    }

    /// Game `result`, whose seats `seated` held.
    fn add(&mut self, result: &ExternalResult, seated: &[Player]) {
        self.games += 1;
        if result.judge_error.is_some() {
            self.judge_errors += 1;
            return;
        }
        if let Some(h2h) = self.head_to_head.as_mut()
            && let Some(score) = first_bots_score(result, seated)
        {
            h2h.add(result.index, score);
        }
        for (bot, player) in seated.iter().zip(&result.players) {
            let tally = &mut self.bots[bot.bot];
            tally.score += player.score.unwrap_or(0.0);
            tally.firsts += u64::from(player.rank == Some(1));
            tally.failures +=
                u64::from(!player.verdict.is_ok() && player.verdict.status != Outcome::Internal);
        }
    }

    fn summary(&self, bots: &[Player]) -> String {
        let mut text = format!(
            "{} game{} played, {} judge error{}\n",
            self.games,
            if self.games == 1 { "" } else { "s" },
            self.judge_errors,
            if self.judge_errors == 1 { "" } else { "s" },
        );
        let judged = self.games - self.judge_errors;
        if judged == 0 {
            // No score was given: a mean of 0 would read as one.
            if self.games > 0 {
                text.push_str("no game was judged: every game is void (its judge failed)\n");
            }
            return text;
        }
        for (i, (tally, bot)) in self.bots.iter().zip(bots).enumerate() {
            text.push_str(&format!(
                "[{i}] {}: mean score {:.3} over {judged} judged game{}, first {} time{}, failed {}\n",
                crate::text::terminal(&bot.name),
                tally.score / judged as f64,
                if judged == 1 { "" } else { "s" },
                tally.firsts,
                if tally.firsts == 1 { "" } else { "s" },
                tally.failures,
            ));
        }
        if let Some(h2h) = &self.head_to_head
            && let Some(elo) = Elo::of(h2h.games, h2h.pairs())
        {
            let [lost, drew, won] = h2h.games;
            let from = match elo.model {
                EloModel::Pentanomial => format!("from {}", pairs_text(h2h.pairs())),
                EloModel::Trinomial => "from single games (no pair complete)".to_owned(),
            };
            text.push_str(&format!(
                "Elo of [0] against [1]: {}, {from}; [0] won {won}, drew {drew}, lost {lost}\n",
                elo.text()
            ));
            // The same figures as fastchess prints them, nElo and LOS with them.
            text.push_str(&crate::stats::match_lines(&elo, h2h.games, h2h.pairs()));
            text.push('\n');
        }
        text
    }
}

/// The first bot's score in a judged game of two (1 for a first place
/// alone, ½ for a shared one, 0 otherwise), from the ranks.
fn first_bots_score(result: &ExternalResult, seated: &[Player]) -> Option<f64> {
    let rank_of = |bot: usize| {
        let seat = seated.iter().position(|p| p.bot == bot)?;
        result.players.get(seat)?.rank
    };
    let (first, second) = (rank_of(0)?, rank_of(1)?);
    Some(match first.cmp(&second) {
        std::cmp::Ordering::Less => 1.0,
        std::cmp::Ordering::Equal => 0.5,
        std::cmp::Ordering::Greater => 0.0,
    })
}
