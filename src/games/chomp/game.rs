//! One game of Chomp between bots: simultaneous rounds on one board.
//!
//! Per round the referee does O(K) work whatever the board's size: it
//! builds one update, sends it to every living player at once, waits for
//! each player's byte (never longer than that player's remaining starvation
//! budget), and applies the moves together.

use std::path::PathBuf;
use std::time::Duration;

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use tokio::task::JoinHandle;
use tokio::time::sleep_until;

use super::grid::{Cell, Grid, share};
use super::protocol::{self, Move, NO_MOVE_YET};
use crate::bot::{Bot, BotError, BotLimits, BotSpec, Finished, UsageMark, deadline_after, later};
use crate::outcome::{Disqualified, Phase, Verdict};

/// How a player's game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// Still alive when the game ended.
    Alive,
    /// Chose `D`.
    Decomposed,
    /// Ran out of its starvation budget (or stopped reading its input).
    Starved,
    /// Exited, died or closed its output during the game.
    Crashed,
    /// Never played: its build failed, or `pc2` was missing or would not start.
    Disqualified,
}

impl Fate {
    pub fn name(self) -> &'static str {
        match self {
            Fate::Alive => "alive",
            Fate::Decomposed => "decomposed",
            Fate::Starved => "starved",
            Fate::Crashed => "crashed",
            Fate::Disqualified => "disqualified",
        }
    }
}

/// Why the game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// Every cell was eaten.
    BoardEmpty,
    /// Every player was decomposing.
    AllDead,
    /// `--max-rounds` was reached.
    RoundLimit,
    /// No cell was eaten for [`idle_limit`] rounds: the players wander
    /// without eating, faster than they starve.
    Idle,
}

/// Rounds in a row without any cell eaten after which a game ends: ten
/// times the cells of the board (at least 1,000). A player still eating
/// reaches any cell of the plane in far fewer moves, so this ends only
/// games in which nobody eats any more, e.g. instant bots wandering for
/// millions of rounds before their starvation clocks run out.
pub fn idle_limit(cells: usize) -> u64 {
    (10 * cells as u64).max(1000)
}

impl End {
    pub fn describe(self) -> &'static str {
        match self {
            End::BoardEmpty => "every cell eaten",
            End::AllDead => "every player decomposing",
            End::RoundLimit => "round limit reached",
            End::Idle => "nobody ate for too long",
        }
    }
}

/// One seat of a game: who sits there and how to run it.
#[derive(Clone, Debug)]
pub struct SeatSpec {
    /// Index of the entrant (its position on the command line, from 0).
    pub entrant: usize,
    /// The directory as the user gave it, for display.
    pub dir: PathBuf,
    /// `Ok(pc2 with its directory)` or why the entrant is disqualified.
    pub program: Result<BotSpec, Disqualified>,
}

/// The rules' knobs for one game.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    pub prep: Duration,
    pub starve: Duration,
    pub limits: BotLimits,
    pub max_rounds: Option<u64>,
    pub record_moves: bool,
}

/// A player's result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlayerResult {
    pub player: usize,
    pub entrant: usize,
    pub dir: String,
    pub score: u64,
    /// How its game ended by the rules of Chomp.
    pub fate: Fate,
    /// The same in the shared taxonomy (`docs/results.md`): starving is a
    /// clock timeout.
    #[serde(flatten)]
    pub verdict: Verdict,
    pub eaten: u64,
    pub moves: u64,
    pub rounds: u64,
    /// Its slowest move, the first reply left out.
    pub slowest_micros: u64,
    /// Its first reply's time, start-up included where the preparation
    /// time did not cover it: recorded apart from the moves' times, as in
    /// every game, but counted against the starvation clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_micros: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub died_round: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The largest resident memory of its processes together, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// The CPU time its processes used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_micros: Option<u64>,
    /// How its bot left its containment, if it did (see `bot::usage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stderr_truncated: bool,
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct GameResult {
    pub start: Cell,
    pub rounds: u64,
    pub end: End,
    pub players: Vec<PlayerResult>,
    /// With `record_moves`: per round, one letter per player (`-` when the
    /// player was no longer playing).
    pub moves: Option<Vec<String>>,
    /// With `record_moves`: per round, each player's turn time in whole
    /// milliseconds (0 for a player no longer playing), for replays'
    /// starvation clocks.
    pub times: Option<Vec<Vec<u32>>>,
}

struct Seat {
    bot: Option<Bot>,
    result: PlayerResult,
    pos: Cell,
    last_move: u8,
    /// Turn time used since the last successful chomp.
    bank: Duration,
    slowest: Duration,
    /// Decomposed last round: gets one more update, then EOF.
    final_update_due: bool,
}

impl Seat {
    fn alive(&self) -> bool {
        self.result.fate == Fate::Alive
    }

    fn die(&mut self, (fate, verdict): (Fate, Verdict), round: u64, error: Option<String>) {
        self.result.fate = fate;
        self.result.verdict = verdict;
        self.result.died_round = Some(round);
        self.result.error = error;
        self.last_move = b'D';
        self.final_update_due = self.bot.is_some();
    }
}

type Ending = JoinHandle<(Bot, std::io::Result<Finished>)>;

/// Plays one game on `rows` from `start`.
pub async fn play(seats: &[SeatSpec], rows: &[Vec<u8>], start: Cell, rules: Rules) -> GameResult {
    let mut game = Game::new(seats, rows, start, rules);
    game.send_array(rows).await;
    let end = game.play_rounds().await;
    game.end_players().await;
    game.result(end)
}

/// A game in play.
struct Game {
    rules: Rules,
    grid: Grid,
    start: Cell,
    seats: Vec<Seat>,
    /// Players being ended in the background, by seat.
    endings: Vec<(usize, Ending)>,
    round: u64,
    /// The last round in which a cell was eaten.
    last_meal: u64,
    /// This round's update, the same for every player.
    update: Vec<u8>,
    /// This round's chomps: (cell, seat).
    chomps: Vec<(usize, usize)>,
    moves_log: Option<Vec<String>>,
    times_log: Option<Vec<Vec<u32>>>,
    show_progress: bool,
}

impl Game {
    /// Starts every seat's bot (or disqualifies it).
    fn new(specs: &[SeatSpec], rows: &[Vec<u8>], start: Cell, rules: Rules) -> Game {
        let k = specs.len();
        Game {
            rules,
            grid: Grid::from_rows(rows),
            start,
            seats: specs
                .iter()
                .enumerate()
                .map(|(i, spec)| seat(i + 1, spec, start, rules.limits))
                .collect(),
            endings: Vec::new(),
            round: 0,
            last_meal: 0,
            update: Vec::with_capacity(16 * k),
            chomps: Vec::with_capacity(k),
            moves_log: rules.record_moves.then(Vec::new),
            times_log: rules.record_moves.then(Vec::new),
            show_progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        }
    }

    /// The array, then the preparation time. A bot that cannot take the
    /// array within the preparation time plus one starvation budget is dead
    /// before the first round.
    async fn send_array(&mut self, rows: &[Vec<u8>]) {
        let (k, starve) = (self.seats.len(), self.rules.starve);
        let prep_over = deadline_after(self.rules.prep);
        let headers = self.seats.iter_mut().enumerate().filter_map(|(i, seat)| {
            let bot = seat.bot.as_mut()?;
            let message = protocol::header(i + 1, k, rows);
            Some(async move { (i, bot.send(&message, later(prep_over, starve)).await) })
        });
        let (sent, ()) =
            futures_util::future::join(join_all(headers), sleep_until(prep_over)).await;
        for (i, result) in sent {
            if let Err(e) = result {
                let fate = fate_of(&e);
                self.seats[i].die(fate, 0, Some(format!("before the first round: {e}")));
            }
        }
    }

    /// Plays rounds until the game ends, and says why it ended.
    async fn play_rounds(&mut self) -> End {
        let idle = idle_limit(self.grid.full_cells());
        let end = loop {
            if let Some(end) = self.over(idle) {
                break end;
            }
            self.round += 1;
            self.progress();
            self.build_update();
            let replies = self.take_turns().await;
            let mut letters = self
                .moves_log
                .as_ref()
                .map(|_| vec![b'-'; self.seats.len()]);
            let mut times = self
                .times_log
                .as_ref()
                .map(|_| vec![0u32; self.seats.len()]);
            for (i, reply) in replies {
                let mv = self.apply_reply(i, reply, times.as_deref_mut());
                if let Some(letters) = letters.as_mut() {
                    letters[i] = mv.letter();
                }
            }
            self.eat();
            if let (Some(log), Some(letters)) = (self.moves_log.as_mut(), letters) {
                log.push(String::from_utf8(letters).expect("move letters are ASCII"));
            }
            if let (Some(log), Some(times)) = (self.times_log.as_mut(), times) {
                log.push(times);
            }
        };
        if self.show_progress && self.round >= 100_000 {
            eprint!("\r{:60}\r", "");
        }
        end
    }

    /// Why the game ends before the next round, if it does.
    fn over(&self, idle: u64) -> Option<End> {
        if self.grid.full_cells() == 0 {
            Some(End::BoardEmpty)
        } else if !self.seats.iter().any(Seat::alive) {
            Some(End::AllDead)
        } else if self.rules.max_rounds.is_some_and(|max| self.round >= max) {
            Some(End::RoundLimit)
        } else if self.round - self.last_meal >= idle {
            Some(End::Idle)
        } else {
            None
        }
    }

    /// A progress line on a terminal, every 100,000 rounds.
    fn progress(&self) {
        let round = self.round;
        if self.show_progress && round.is_multiple_of(100_000) {
            let alive = self.seats.iter().filter(|s| s.alive()).count();
            let k = self.seats.len();
            eprint!("\rchomp: round {round}, {alive} of {k} players alive   ");
        }
    }

    /// This round's update; players that decomposed last round get it,
    /// then EOF, in the background.
    fn build_update(&mut self) {
        self.update.clear();
        for seat in &self.seats {
            protocol::push_update_line(&mut self.update, seat.pos, seat.last_move);
        }
        for (i, seat) in self.seats.iter_mut().enumerate() {
            if std::mem::take(&mut seat.final_update_due)
                && let Some(bot) = seat.bot.take()
            {
                let ending = last_update_then_end(bot, self.update.clone(), self.rules.limits);
                self.endings.push((i, ending));
            }
        }
    }

    /// Sends the update to every living player at once and waits for each
    /// one's byte, never longer than its remaining starvation budget.
    async fn take_turns(&mut self) -> Vec<(usize, Result<(u8, Duration), BotError>)> {
        let (update, starve) = (&self.update[..], self.rules.starve);
        let turns = self
            .seats
            .iter_mut()
            .enumerate()
            .filter(|(_, s)| s.alive())
            .map(|(i, seat)| {
                seat.result.rounds += 1;
                let remaining = starve.saturating_sub(seat.bank);
                let bot = seat.bot.as_mut().expect("a living player has a bot");
                async move { (i, take_turn(bot, update, remaining).await) }
            });
        join_all(turns).await
    }

    /// Applies seat `i`'s reply (a failure decomposes it): its step, its
    /// decision, or its chomp, queued for [`Game::eat`]. Its turn time goes
    /// in `times`, when recorded.
    fn apply_reply(
        &mut self,
        i: usize,
        reply: Result<(u8, Duration), BotError>,
        times: Option<&mut [u32]>,
    ) -> Move {
        let round = self.round;
        let seat = &mut self.seats[i];
        let millis = |time: Duration| u32::try_from(time.as_millis()).unwrap_or(u32::MAX);
        let mv = match reply {
            Ok((byte, elapsed)) => {
                if let Some(times) = times {
                    times[i] = millis(elapsed);
                }
                // The statement's clock runs from the first turn: a
                // start-up the preparation time did not cover counts.
                seat.bank += elapsed;
                if seat.result.moves == 0 {
                    seat.result.startup_micros = Some(micros(elapsed));
                } else {
                    seat.slowest = seat.slowest.max(elapsed);
                }
                seat.result.moves += 1;
                Move::from_byte(byte).expect("the bot layer skips whitespace")
            }
            Err(e) => {
                let e = clock_timeout(e);
                // A starving turn counts as the time waited.
                if let BotError::Timeout { limit, .. } = &e {
                    seat.slowest = seat.slowest.max(*limit);
                    if let Some(times) = times {
                        times[i] = millis(*limit);
                    }
                }
                seat.die(fate_of(&e), round, Some(format!("round {round}: {e}")));
                Move::Decompose
            }
        };
        match mv {
            Move::Step(dir) => seat.pos = self.grid.step(seat.pos, dir),
            Move::Chomp => self.chomps.push((self.grid.index(seat.pos), i)),
            Move::Decompose if seat.alive() => {
                seat.die((Fate::Decomposed, Verdict::OK), round, None);
            }
            Move::Decompose => {}
        }
        seat.last_move = mv.letter();
        mv
    }

    /// Chomps are simultaneous: players on the same full cell share it.
    fn eat(&mut self) {
        self.chomps.sort_unstable();
        for group in self.chomps.chunk_by(|a, b| a.0 == b.0) {
            let value = self.grid.eat_at(group[0].0);
            if value == 0 {
                continue;
            }
            self.last_meal = self.round;
            let each = share(u32::from(value), group.len() as u32);
            for &(_, i) in group {
                let seat = &mut self.seats[i];
                seat.result.score += u64::from(each);
                seat.result.eaten += 1;
                seat.bank = Duration::ZERO;
            }
        }
        self.chomps.clear();
    }

    /// The game is over: no more updates; everyone still running gets EOF.
    /// Waits for every player's end and keeps its stderr and usage.
    async fn end_players(&mut self) {
        for (i, seat) in self.seats.iter_mut().enumerate() {
            if let Some(mut bot) = seat.bot.take() {
                self.endings.push((
                    i,
                    tokio::spawn(async move {
                        let finished = bot.shutdown(None).await;
                        (bot, finished)
                    }),
                ));
            }
        }
        for (i, ending) in std::mem::take(&mut self.endings) {
            let Ok((bot, finished)) = ending.await else {
                continue;
            };
            if let Err(e) = finished {
                tracing::warn!(player = i + 1, "ending the player: {e}");
            }
            let (text, truncated) = bot.stderr(|t| t.since(0));
            let usage = bot.usage_since(&mut UsageMark::default());
            let result = &mut self.seats[i].result;
            result.stderr = (!text.is_empty()).then_some(text);
            result.stderr_truncated = truncated;
            result.peak_memory_bytes = usage.peak_memory;
            result.cpu_micros = usage.cpu_micros();
            result.containment = usage.containment().map(str::to_owned);
        }
    }

    fn result(self, end: End) -> GameResult {
        GameResult {
            start: self.start,
            rounds: self.round,
            end,
            players: self
                .seats
                .into_iter()
                .map(|mut seat| {
                    seat.result.slowest_micros = micros(seat.slowest);
                    seat.result
                })
                .collect(),
            moves: self.moves_log,
            times: self.times_log,
        }
    }
}

/// A seat at the start: its bot started, or disqualified.
fn seat(player: usize, spec: &SeatSpec, start: Cell, limits: BotLimits) -> Seat {
    let (bot, status, verdict, error) = match &spec.program {
        Ok(program) => match Bot::spawn(program, limits) {
            Ok(bot) => (Some(bot), Fate::Alive, Verdict::OK, None),
            Err(e) => (
                None,
                Fate::Disqualified,
                e.verdict(),
                Some(match e.is_referees() {
                    true => e.recorded(),
                    false => format!("cannot start {}: {e}", program.program.to_string_lossy()),
                }),
            ),
        },
        Err(why) => (
            None,
            Fate::Disqualified,
            why.verdict(),
            Some(why.why.clone()),
        ),
    };
    let last_move = if bot.is_some() { NO_MOVE_YET } else { b'D' };
    Seat {
        bot,
        result: PlayerResult {
            player,
            entrant: spec.entrant,
            dir: spec.dir.display().to_string(),
            score: 0,
            fate: status,
            verdict,
            eaten: 0,
            moves: 0,
            rounds: 0,
            slowest_micros: 0,
            startup_micros: None,
            died_round: (status == Fate::Disqualified).then_some(0),
            error,
            peak_memory_bytes: None,
            cpu_micros: None,
            containment: None,
            stderr: None,
            stderr_truncated: false,
        },
        pos: start,
        last_move,
        bank: Duration::ZERO,
        slowest: Duration::ZERO,
        final_update_due: false,
    }
}

/// `time` in whole microseconds, as records keep times.
fn micros(time: Duration) -> u64 {
    u64::try_from(time.as_micros()).unwrap_or(u64::MAX)
}

/// Not answering in time, or not reading the update in time, is starving;
/// any other failure is a crash.
fn fate_of(error: &BotError) -> (Fate, Verdict) {
    match error {
        BotError::Timeout { .. } | BotError::WriteTimeout { .. } => {
            (Fate::Starved, Verdict::from(error))
        }
        _ => (Fate::Crashed, Verdict::from(error)),
    }
}

/// A turn's deadline is the starvation clock: Chomp has no start-up
/// allowance (the preparation time serves instead), so every missed turn
/// is a clock timeout.
fn clock_timeout(mut error: BotError) -> BotError {
    if let BotError::Timeout { phase, .. } = &mut error {
        *phase = Phase::Clock;
    }
    error
}

async fn take_turn(
    bot: &mut Bot,
    update: &[u8],
    remaining: Duration,
) -> Result<(u8, Duration), BotError> {
    bot.send_within(update, remaining).await?;
    let deadline = later(bot.sent_at(), remaining);
    bot.recv_byte(deadline).await
}

/// Sends a decomposing player its last update, then closes its input and
/// ends it after the grace period, in the background.
fn last_update_then_end(mut bot: Bot, update: Vec<u8>, limits: BotLimits) -> Ending {
    tokio::spawn(async move {
        // Failure is expected from a crashed player and changes nothing.
        let write_limit = limits.grace.max(Duration::from_millis(100));
        let _ = bot.send_within(&update, write_limit).await;
        let finished = bot.shutdown(None).await;
        (bot, finished)
    })
}
