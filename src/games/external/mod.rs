//! External games: a judge program, in any language, referees the game
//! over a JSON Lines protocol with the harness (`docs/judge-protocol.md`);
//! the harness alone talks to the bots, through [`crate::bot`], so every
//! game gets the same process groups, time limits and failure taxonomy.
//!
//! The judge is organiser code: a judge that crashes, hangs (more than
//! [`JUDGE_LIMIT`] for one message) or breaks the protocol is a judge
//! error of the game, never a bot's failure; its players get `internal`.

mod judge;
pub mod players;
pub mod protocol;
pub mod run;
pub mod spec;

use std::ffi::OsString;
use std::time::Duration;

use futures_util::future::join_all;
use judge::Judge;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::bot::clock::{MoveLimits, TimeControl, Timer};
use crate::bot::{Bot, BotError, BotLimits, BotSpec, Resources, Usage, UsageMark, later};
use crate::outcome::{Phase, Status, Verdict};
pub use protocol::Round;
use protocol::{
    Answer, ClockSpec, Eliminated, Failure, FromJudge, StartEntrant, StartPlayer, ToJudge, Until,
};
pub use spec::{ExternalGame, ReadUnit};

/// The longest a judge may take for one message (its process's first
/// message has [`JUDGE_STARTUP`] on top).
pub const JUDGE_LIMIT: Duration = Duration::from_secs(10);
/// Extra time for the judge process's first message (an interpreter's start).
pub const JUDGE_STARTUP: Duration = Duration::from_secs(10);
/// Longest line a judge may write (frames can be large).
pub const JUDGE_MAX_LINE: usize = 4 << 20;
/// Most judge `log` lines kept per game.
const MAX_LOG_LINES: usize = 1000;
/// Most messages a judge may write in one game: far more than any real
/// game needs (a 100 x 100 light-cycles game takes about 40,000), so that
/// a judge that loops for ever ends as a judge error rather than a hung
/// run.
pub const MAX_JUDGE_MESSAGES: u64 = 1_000_000;
/// Most bytes queued for a player before they are written (a pipe's
/// capacity): a judge that sends and sends without waiting does not pile
/// them up.
const MAX_PENDING: usize = 64 << 10;
/// Most bytes of frames and log lines kept from one game.
pub const MAX_KEPT_BYTES: usize = 64 << 20;

/// One game's result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExternalResult {
    /// The game's name, from its game file.
    pub game: String,
    pub index: u64,
    pub seed: u64,
    /// One per seat, in seat order.
    pub players: Vec<PlayerResult>,
    /// What the judge says about the game (its `end` message's `summary`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<serde_json::Value>,
    /// The judge's replay frames, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<serde_json::Value>,
    /// The judge wrote more frames than the game file's `max_frames`:
    /// only the first ones are kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub frames_truncated: bool,
    /// The judge's `log` lines (the first 1000).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<String>,
    /// Present when the judge failed: the game is void and no bot is blamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_error: Option<JudgeError>,
    /// Present when the judge refused the game's settings: the game is
    /// void, not to be recorded, and the run's settings are wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<JudgeRefusal>,
}

impl ExternalResult {
    /// Game `index` of a run with `seed`, not played yet.
    fn new(game: &str, index: u64, seed: u64) -> ExternalResult {
        ExternalResult {
            game: game.to_owned(),
            index,
            seed,
            players: Vec::new(),
            summary: None,
            frames: Vec::new(),
            frames_truncated: false,
            log: Vec::new(),
            judge_error: None,
            refused: None,
        }
    }
}

/// A judge's `refuse`: whose settings it refused, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeRefusal {
    /// The seat and entrant whose options were refused; `None` for the
    /// game's options.
    pub player: Option<(usize, String)>,
    pub message: String,
}

impl JudgeRefusal {
    /// `entrant "sf" (seat 0) refused by the judge: ...`, or `the game's
    /// options refused by the judge: ...`.
    pub fn describe(&self) -> String {
        let whose = match &self.player {
            Some((seat, entrant)) => {
                format!("entrant {:?} (seat {seat})", crate::text::terminal(entrant))
            }
            None => "the game's options".to_owned(),
        };
        format!(
            "{whose} refused by the judge: {}",
            crate::text::terminal(&self.message)
        )
    }
}

/// How the judge failed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JudgeError {
    pub message: String,
    /// The judge's last lines on standard error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
}

/// One seat's part in a game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlayerResult {
    /// The seat, from 0: the player's number in the protocol.
    pub seat: usize,
    /// The entrant's name (`referee play`'s `NAME=` or the command as
    /// given), which tells apart two entrants of one program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entrant: Option<String>,
    /// The program and its arguments.
    pub player: Vec<String>,
    /// The judge's score (none after a judge error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// 1 is first; equal ranks are ties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Why it failed, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its process's first reply (start-up included), kept out of `micros`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_micros: Option<u64>,
    /// Its move times; a timed-out move as the time waited.
    #[serde(default)]
    pub micros: Vec<u64>,
    /// Each move's CPU time (its main process's, since its previous
    /// reply), beside `micros`; absent where the platform cannot tell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub move_cpu_micros: Vec<u64>,
    /// The largest resident memory of its processes together, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// The CPU time its processes used in this game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_micros: Option<u64>,
    /// How its bot left its containment, if it did (see `bot::usage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stderr_truncated: bool,
}

/// A game's refereeing ([`Session::referee`]) within the game file's
/// `limits.game_timeout`, `bound`: the judge decides when a game ends, so
/// one that goes on past the game's bound is the judge's failure.
async fn within_bound(
    bound: Option<Duration>,
    refereed: impl Future<Output = Result<Option<Ended>, String>>,
) -> Result<Option<Ended>, String> {
    match bound {
        None => refereed.await,
        Some(bound) => tokio::time::timeout(bound, refereed)
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "the game did not end within its limits.game_timeout ({})",
                    crate::units::human_duration(bound)
                ))
            }),
    }
}

/// Who plays a seat: an entrant and its program.
#[derive(Clone, Debug)]
pub struct Player {
    /// The entrant's name, as the judge (version 2) and the records see it.
    pub name: String,
    pub spec: BotSpec,
    /// The entrant's options, passed to the judge in `start` (version 2).
    pub options: serde_json::Value,
    /// Its own clock (time odds), over the run's: its seat's timer runs
    /// on it.
    pub time_control: Option<TimeControl>,
    /// Which of the run's bots this is: a process kept between games
    /// (`keep_players`) follows its bot, wherever the rotation seats it.
    pub bot: usize,
}

/// Plays one game of `game` between `players` (seat `i` is `players[i]`),
/// with what an earlier game on this thread `carried`: a kept judge
/// (`reuse = true`) and kept players (`keep_players = true`), or none.
/// What to carry to the next game is handed back, so that a run of many
/// short games does not start an interpreter or an engine per game. At
/// most [`KEPT_PER_SEAT`] players per seat stay kept: the ones used least
/// recently are ended (`--grace` to exit) once the game is over.
pub async fn play_game(
    game: &ExternalGame,
    players: &[Player],
    limits: BotLimits,
    seed: u64,
    index: u64,
    round: Round,
    carried: Carried,
) -> (ExternalResult, Carried) {
    let mut session = Session::new(game);
    session.keep_players = game.keep_players;
    session.take_up(carried);
    let result = session.play(players, limits, seed, index, round).await;
    for farewell in session.keep_at_most(KEPT_PER_SEAT * players.len()).await {
        warn_of(&farewell);
    }
    (result, session.hand_over())
}

/// How many players a game thread keeps, per seat of its game, between
/// the games of a tournament: the last game's and the next one's, so a
/// match between two entrants keeps both, and a class of 200 entrants
/// keeps a few per thread, not 200.
pub const KEPT_PER_SEAT: usize = 2;

/// What a game thread carries from one game to the next (see
/// [`play_game`]). Ended with [`Carried::close`] when the thread has no
/// more games; dropped, its processes are killed.
#[derive(Default)]
pub struct Carried {
    judge: Option<Judge>,
    players: Vec<Option<Kept>>,
    games: u64,
    processes: u64,
}

impl Carried {
    /// Ends what is carried: the judge, and the kept players with
    /// `--grace` to exit, warning of any that did not end well (their
    /// games are recorded already).
    pub async fn close(self, game: &ExternalGame) {
        let mut session = Session::new(game);
        session.take_up(self);
        for farewell in session.close().await {
            warn_of(&farewell);
        }
    }
}

fn warn_of(farewell: &Farewell) {
    tracing::warn!(
        "{}, kept between games: {}",
        crate::text::terminal(&farewell.name),
        farewell.message
    );
}

/// A judge that may play several games in a row (`reuse = true` in the
/// game file): the process is kept between games, which saves an
/// interpreter's start per game. Without `reuse` each game gets a fresh
/// judge anyway.
///
/// With [`Session::keep_players`] the players' processes are kept too, seat
/// by seat, from one game to the next (`keep_players = true`, for
/// `referee play`, whose seats are fixed for the run).
pub struct Session<'g> {
    game: &'g ExternalGame,
    judge: Option<Judge>,
    /// Move limits of the bots: the game file's unless overridden.
    pub time: MoveLimits,
    /// How far a move may overrun its clock without losing (see
    /// [`crate::bot::clock::Timer::with_margin`]).
    pub time_margin: Duration,
    /// Keep each seat's player process for the next game, unless it failed
    /// or was eliminated. Off unless the caller turns it on: the seats of
    /// successive games must hold the same programs.
    pub keep_players: bool,
    /// The kept players, by bot ([`Player::bot`]), between games.
    kept: Vec<Option<Kept>>,
    /// Games played with this session's kept players (their last game's
    /// number says which were used least recently).
    games: u64,
    /// Player processes started so far on this thread: the last one's
    /// number (`process` in `start`).
    processes: u64,
    /// Kept players whose bot is now another program (a thread's next
    /// run), to be ended.
    leaving: Vec<(usize, Kept)>,
    /// The message being written to the judge (its buffer, reused).
    line: Vec<u8>,
}

/// A player process kept for the next game.
struct Kept {
    bot: Bot,
    /// Its entrant's name.
    name: String,
    /// Whose process it is ([`identity`]): a kept process plays only for
    /// the same entrant and program.
    identity: String,
    /// The number of the last game it played ([`Session::games`]).
    used: u64,
    /// Its number among the thread's player processes ([`Seat::process`]).
    process: u64,
    /// How much of its stderr earlier games' records have shown.
    stderr_mark: u64,
    /// Where its usage in the next game's record starts.
    usage_mark: UsageMark,
    /// Its time to exit once its input is closed (`--grace`).
    grace: Duration,
    /// What the judge sent it after its last reply of the game (`YOU
    /// WIN`): it goes out with the next game's first message to it, in
    /// one write, as the dealer sends its verdicts.
    pending: Vec<u8>,
}

/// Something to report about a kept player's end, after the last game.
#[derive(Debug)]
pub struct Farewell {
    /// Which of the run's bots ([`Player::bot`]).
    pub bot: usize,
    /// Its entrant's name.
    pub name: String,
    /// What it makes of the run's exit status: `Crashed` when the player
    /// did not exit within the grace period, `Internal` when it could not
    /// be reaped; `None` for a warning.
    pub fault: Option<crate::exit::Status>,
    pub message: String,
}

impl<'g> Session<'g> {
    pub fn new(game: &'g ExternalGame) -> Session<'g> {
        Session {
            game,
            judge: None,
            time: game.time,
            time_margin: game.time_margin,
            keep_players: false,
            kept: Vec::new(),
            games: 0,
            processes: 0,
            leaving: Vec::new(),
            line: Vec::new(),
        }
    }

    /// Goes on with what an earlier game `carried` (its judge only with
    /// `reuse = true`).
    fn take_up(&mut self, carried: Carried) {
        self.judge = carried.judge.filter(|_| self.game.reuse);
        self.kept = carried.players;
        self.games = carried.games;
        self.processes = carried.processes;
    }

    /// What the next game is to go on with.
    fn hand_over(&mut self) -> Carried {
        Carried {
            judge: self.judge.take(),
            players: std::mem::take(&mut self.kept),
            games: self.games,
            processes: self.processes,
        }
    }

    /// Ends the kept players used least recently until at most `most`
    /// are kept, and those whose bot is now another program.
    async fn keep_at_most(&mut self, most: usize) -> Vec<Farewell> {
        let mut leaving = std::mem::take(&mut self.leaving);
        let mut by_use: Vec<(u64, usize)> = (self.kept.iter().enumerate())
            .filter_map(|(bot, k)| Some((k.as_ref()?.used, bot)))
            .collect();
        by_use.sort_unstable();
        let excess = by_use.len().saturating_sub(most);
        for &(_, oldest) in &by_use[..excess] {
            if let Some(kept) = self.kept[oldest].take() {
                leaving.push((oldest, kept));
            }
        }
        join_all(
            leaving
                .into_iter()
                .map(|(bot, kept)| say_goodbye(bot, kept)),
        )
        .await
        .into_iter()
        .flatten()
        .collect()
    }

    /// Ends the judge process, if one is kept, and the kept players: their
    /// input is closed and they have `--grace` to exit, all at once.
    pub async fn close(&mut self) -> Vec<Farewell> {
        let judge = async {
            if let Some(judge) = self.judge.take() {
                judge.shutdown().await;
            }
        };
        let kept = std::mem::take(&mut self.kept);
        let players = join_all(
            kept.into_iter()
                .enumerate()
                .filter_map(|(bot, kept)| Some((bot, kept?)))
                .chain(std::mem::take(&mut self.leaving))
                .map(|(bot, kept)| say_goodbye(bot, kept)),
        );
        let ((), farewells) = tokio::join!(judge, players);
        farewells.into_iter().flatten().collect()
    }

    fn judge_limits(&self, limits: &BotLimits) -> BotLimits {
        BotLimits {
            max_line: JUDGE_MAX_LINE,
            startup: JUDGE_STARTUP,
            resources: Resources::NONE,
            // The organiser's program: measured, never stopped for its
            // memory.
            memory: None,
            sandbox: false,
            ..*limits
        }
    }

    /// Plays one game, game `round.rotation` of round `round.opening`.
    pub async fn play(
        &mut self,
        players: &[Player],
        limits: BotLimits,
        seed: u64,
        index: u64,
        round: Round,
    ) -> ExternalResult {
        self.games += 1;
        let mut seats = self.seat_players(players, limits);
        let mut game = Game {
            result: ExternalResult::new(&self.game.name, index, seed),
            round,
        };
        let bound = self.game.game_timeout;
        let refereed = self.referee(&mut seats, &mut game, seed, index, limits);
        let ended = match within_bound(bound, refereed).await {
            Ok(end) => end,
            Err(message) => {
                game.result.judge_error = Some(self.judge_failed(message).await);
                None
            }
        };
        if !self.game.reuse
            && let Some(judge) = self.judge.take()
        {
            judge.shutdown().await;
        }
        for (i, seat) in seats.into_iter().enumerate() {
            let mut player = self.settle(i, seat, ended.as_ref(), limits.grace).await;
            if game.result.refused.is_some() {
                player.error =
                    Some("the judge refused the game's settings; the game is void".into());
            }
            game.result.players.push(player);
        }
        game.result
    }

    /// Each seat's player: its bot's process kept from the last game, or a
    /// fresh one.
    fn seat_players(&mut self, players: &[Player], limits: BotLimits) -> Vec<Seat> {
        let bots = players.iter().map(|p| p.bot + 1).max().unwrap_or(0);
        if self.kept.len() < bots {
            self.kept.resize_with(bots, || None);
        }
        players
            .iter()
            .enumerate()
            .map(|(i, player)| {
                let id = identity(player);
                let kept = match self.kept[player.bot].take() {
                    Some(kept) if kept.identity != id => {
                        self.leaving.push((player.bot, kept));
                        None
                    }
                    kept => kept,
                };
                // Its own clock (time odds) over the run's.
                let time = MoveLimits {
                    control: player.time_control.or(self.time.control),
                    ..self.time
                };
                let timer = Timer::new(time).with_margin(self.time_margin);
                let process = match &kept {
                    Some(kept) => kept.process,
                    None => {
                        self.processes += 1;
                        self.processes
                    }
                };
                Seat::start(i, player, id, limits, timer, (kept, process))
            })
            .collect()
    }

    /// The judge failed: it is killed, and its last lines on standard error
    /// kept with the message.
    async fn judge_failed(&mut self, message: String) -> JudgeError {
        let stderr = match self.judge.take() {
            Some(judge) => judge.kill().await,
            None => String::new(),
        };
        JudgeError {
            message,
            stderr: (!stderr.is_empty()).then_some(stderr),
        }
    }

    /// Seat `i`'s part in the game once it is over (`ended`: the scores and
    /// ranks; `None` after a judge error). Its player is ended, or kept
    /// for the next game: a kept player's input stays open, the next game
    /// goes on where this one ended, and the game's last words go with its
    /// first message. Any other player gets them now, before its input is
    /// closed.
    async fn settle(
        &mut self,
        i: usize,
        mut seat: Seat,
        ended: Option<&(Vec<f64>, Vec<u32>)>,
        grace: Duration,
    ) -> PlayerResult {
        let keep = self.keep_players && seat.failure.is_none() && ended.is_some();
        if !keep && seat.failure.is_none() && ended.is_some() {
            seat.deliver().await;
        }
        let failed = seat.failure.is_some() || ended.is_none();
        if let Some(mut bot) = seat.bot.take() {
            if !keep
                && let Some((verdict, message)) = super::end_single(&mut bot, failed).await
                && seat.failure.is_none()
            {
                seat.failure = Some(Failure { verdict, message });
            }
            let (text, truncated) = bot.stderr_since(&mut seat.stderr_mark);
            seat.stderr = text;
            seat.stderr_truncated = truncated;
            seat.usage = Some(bot.usage_since(&mut seat.usage_mark));
            if keep {
                self.kept[seat.bot_index] = Some(Kept {
                    bot,
                    name: seat.entrant.clone(),
                    identity: seat.identity.clone(),
                    used: self.games,
                    process: seat.process,
                    stderr_mark: seat.stderr_mark,
                    usage_mark: seat.usage_mark,
                    grace,
                    pending: std::mem::take(&mut seat.pending),
                });
            }
        }
        let (verdict, error) = match (ended, seat.failure) {
            (None, _) => (
                Verdict::of(Status::Internal),
                Some("the judge failed (see judge_error); the game is void".to_owned()),
            ),
            (Some(_), Some(f)) => (f.verdict, Some(f.message)),
            (Some(_), None) => (Verdict::OK, None),
        };
        PlayerResult {
            seat: i,
            entrant: Some(seat.entrant),
            player: seat.program,
            score: ended.map(|(scores, _)| scores[i]),
            rank: ended.map(|(_, ranks)| ranks[i]),
            verdict,
            error,
            startup_micros: seat.startup_micros,
            micros: seat.micros,
            move_cpu_micros: seat.move_cpu.unwrap_or_default(),
            peak_memory_bytes: seat.usage.and_then(|u| u.peak_memory),
            cpu_micros: seat.usage.and_then(|u| u.cpu_micros()),
            containment: seat.usage.and_then(|u| u.containment()).map(str::to_owned),
            stderr: seat.stderr,
            stderr_truncated: seat.stderr_truncated,
        }
    }

    /// Runs the judge's side of a game until its `end`: the scores and
    /// ranks, `None` when it refused the game's settings (then
    /// `game.result.refused` says why), or why the judge failed.
    async fn referee(
        &mut self,
        seats: &mut [Seat],
        game: &mut Game,
        seed: u64,
        index: u64,
        limits: BotLimits,
    ) -> Result<Option<Ended>, String> {
        self.start_judge(&limits)?;
        let judge = self.judge.as_mut().expect("started above");
        let start = start_message(self.game, seats, seed, index, game.round);
        let line = &mut self.line;
        tell(judge, line, &start).await?;
        let mut relay = Relay {
            game: self.game,
            line_no: 0,
            kept: 0,
        };
        loop {
            let text = next_message(judge, seats).await?;
            let message = relay.read(&text)?;
            if let Some(ended) = relay.act(message, &text, judge, line, seats, game).await? {
                return Ok(ended);
            }
        }
    }

    /// Starts the judge unless one is kept from the last game.
    fn start_judge(&mut self, limits: &BotLimits) -> Result<(), String> {
        if self.judge.is_none() {
            self.judge = Some(Judge::start(self.game, self.judge_limits(limits))?);
        }
        Ok(())
    }
}

/// The `start` message of game `index`.
/// The `start` of a game: version 1's, or version 2's with the round,
/// the entrants and their limits.
fn start_message<'g>(
    game: &'g ExternalGame,
    seats: &[Seat],
    seed: u64,
    index: u64,
    round: Round,
) -> ToJudge<'g> {
    let v2 = game.protocol >= 2;
    ToJudge::Start {
        version: game.protocol,
        game: &game.name,
        seed,
        index,
        round: v2.then_some(round),
        players: seats
            .iter()
            .map(|s| StartPlayer {
                seat: s.seat,
                name: if v2 {
                    s.entrant.clone()
                } else {
                    s.program.join(" ")
                },
                entrant: v2.then(|| StartEntrant {
                    entrant: s.bot_index,
                    process: s.process,
                    program: s.program.clone(),
                    options: s.options.clone(),
                    timeout_micros: micros(s.timer.limits().timeout),
                    startup_micros: micros(s.startup),
                    time_control: s.timer.limits().control.map(|c| ClockSpec {
                        base_micros: micros(c.base),
                        increment_micros: micros(c.increment),
                    }),
                }),
                failed: s.failure.clone(),
            })
            .collect(),
        options: &game.options,
    }
}

/// A duration in the protocol's unit.
fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The judge's next message, under its time limit. It is often here
/// already (a judge writes `send` and `ask` together), and the players'
/// sends wait for it; if the harness has to wait for the judge, they go
/// out first.
async fn next_message(judge: &mut Judge, seats: &mut [Seat]) -> Result<String, String> {
    let ready = if seats.iter().any(|s| s.urgent) {
        judge.line_now()
    } else {
        None
    };
    match ready {
        Some(got) => got,
        None => {
            for seat in seats.iter_mut().filter(|s| s.urgent) {
                seat.deliver().await;
            }
            judge.next_line().await
        }
    }
}

/// How an `ask` of `game` reads its players' moves; `until` and `setup`
/// are version 2's.
fn asking<'u>(
    game: &'u ExternalGame,
    until: Option<&'u Until>,
    setup: bool,
) -> Result<Asking<'u>, String> {
    if game.protocol < 2 && (until.is_some() || setup) {
        return Err(
            "`until` and `setup` are protocol version 2: the game file needs `protocol = 2`"
                .to_owned(),
        );
    }
    let until = until.map(Until::words).transpose()?;
    if until.is_some() && game.read == ReadUnit::Byte {
        return Err("`until` reads lines, and this game reads a byte per move".to_owned());
    }
    Ok(Asking {
        read: game.read,
        until,
        drop_long: &game.drop_long_lines,
        setup,
    })
}

/// Each seat's time left on its clock (version 2, when a seat has a time
/// control: each runs on its own).
fn clocks(game: &ExternalGame, seats: &[Seat]) -> Option<Vec<Option<u64>>> {
    let any = seats.iter().any(|s| s.timer.limits().control.is_some());
    (game.protocol >= 2 && any).then(|| seats.iter().map(|s| s.timer.left().map(micros)).collect())
}

/// How one `ask` reads: a move's unit, the words that end a move of
/// several lines, the kinds of its lines dropped beyond the line cap, and
/// whether it is a set-up exchange.
struct Asking<'u> {
    read: ReadUnit,
    until: Option<&'u [String]>,
    drop_long: &'u [String],
    setup: bool,
}

/// Reads one move from each of `players`, all at once; the answers in the
/// order asked.
async fn ask(
    seats: &mut [Seat],
    players: &[usize],
    asking: &Asking<'_>,
) -> Result<Vec<Answer>, String> {
    check_seats(players, seats.len())?;
    if players.is_empty() {
        return Err("an ask for no player".to_owned());
    }
    // Players not asked get their messages now, while the others think.
    for seat in seats
        .iter_mut()
        .filter(|s| s.urgent && !players.contains(&s.seat))
    {
        seat.deliver().await;
    }
    let asked = seats
        .iter_mut()
        .filter(|s| players.contains(&s.seat))
        .map(|s| s.ask(asking));
    let mut answers = join_all(asked).await;
    answers.sort_by_key(|a| players.iter().position(|p| *p == a.player));
    Ok(answers)
}

/// The verdict of an `eliminate`: a `phase` goes with `timeout` only, and
/// names a limit a judge can see run out.
fn eliminated_verdict(status: Eliminated, phase: Option<Phase>) -> Result<Verdict, String> {
    match (status, phase) {
        (Eliminated::Incorrect, None) => Ok(Verdict::of(Status::Incorrect)),
        (Eliminated::Ok, None) => Ok(Verdict::OK),
        (Eliminated::Timeout, None) => Ok(Verdict::timeout(Phase::Clock)),
        (Eliminated::Timeout, Some(phase @ (Phase::Clock | Phase::Move | Phase::Startup))) => {
            Ok(Verdict::timeout(phase))
        }
        (Eliminated::Timeout, Some(_)) => {
            Err("an eliminating timeout's phase is `clock`, `move` or `startup`".to_owned())
        }
        (_, Some(_)) => Err("`phase` goes with `\"status\":\"timeout\"` only".to_owned()),
    }
}

/// Takes a player out at the judge's word (its messages so far delivered
/// first); one out already stays out as it went.
async fn eliminate(seat: &mut Seat, verdict: Verdict, message: String) {
    seat.deliver().await;
    if seat.failure.is_none() {
        seat.out(Failure { verdict, message }).await;
    }
}

/// The ranks of `end`: the judge's `ranking` if it gives one (checked),
/// else from the scores.
fn final_ranks(
    scores: &[f64],
    ranking: Option<Vec<u32>>,
    seats: usize,
) -> Result<Vec<u32>, String> {
    if scores.len() != seats || scores.iter().any(|s| !s.is_finite()) {
        return Err(format!("`end` needs one finite score per player ({seats})"));
    }
    match ranking {
        None => Ok(protocol::ranks_from_scores(scores)),
        Some(r) if r.len() == seats && r.iter().all(|&k| k >= 1 && k as usize <= seats) => Ok(r),
        Some(_) => Err(format!(
            "`ranking` needs one rank from 1 to {seats} per player"
        )),
    }
}

/// What the relay of one game counts: the judge's messages, and the bytes
/// of frames and log lines kept.
struct Relay<'g> {
    game: &'g ExternalGame,
    line_no: u64,
    kept: usize,
}

impl Relay<'_> {
    /// The judge's next message, `text`, read: it counts towards
    /// [`MAX_JUDGE_MESSAGES`].
    fn read(&mut self, text: &str) -> Result<FromJudge, String> {
        self.line_no += 1;
        if self.line_no > MAX_JUDGE_MESSAGES {
            return Err(format!(
                "the judge wrote more than {MAX_JUDGE_MESSAGES} messages in one game without ending it"
            ));
        }
        serde_json::from_str(text).map_err(|e| {
            format!(
                "the judge broke the protocol: its message {} of this game is not a valid message ({e}): {:?}",
                self.line_no,
                cut(text)
            )
        })
    }

    /// Does what the judge's message says: `Some` when the game is over
    /// (with its scores and ranks, or `None` when the judge refused it).
    async fn act(
        &mut self,
        message: FromJudge,
        text: &str,
        judge: &mut Judge,
        line: &mut Vec<u8>,
        seats: &mut [Seat],
        game: &mut Game,
    ) -> Result<Option<Option<Ended>>, String> {
        let bad = |what: String| {
            format!(
                "the judge broke the protocol: message {} of this game: {what}: {:?}",
                self.line_no,
                cut(text)
            )
        };
        match message {
            FromJudge::Send { to, text } => {
                check_seats(&to, seats.len()).map_err(bad)?;
                for &p in &to {
                    seats[p].send(text.as_bytes()).await;
                }
            }
            FromJudge::Ask {
                players,
                until,
                setup,
            } => {
                let asking = asking(self.game, until.as_ref(), setup).map_err(bad)?;
                let answers = ask(seats, &players, &asking).await.map_err(bad)?;
                let clocks = clocks(self.game, seats);
                let replies = ToJudge::Replies {
                    replies: answers,
                    clocks,
                };
                tell(judge, line, &replies).await?;
            }
            FromJudge::Eliminate {
                player,
                status,
                phase,
                message,
            } => {
                check_seats(&[player], seats.len()).map_err(bad)?;
                let verdict = eliminated_verdict(status, phase).map_err(bad)?;
                eliminate(&mut seats[player], verdict, message).await;
            }
            FromJudge::Frame { data } => {
                // A colour the pages would fetch (`url(...)`) is the
                // judge's fault, whether or not frames are kept.
                protocol::check_frame_colours(&data).map_err(bad)?;
                self.keep_frame(&mut game.result, data, text.len())?;
            }
            FromJudge::Log { text: line } => self.keep_log(&mut game.result, line)?,
            FromJudge::End {
                scores,
                ranking,
                summary,
            } => {
                let ranks = final_ranks(&scores, ranking, seats.len()).map_err(bad)?;
                game.result.summary = summary;
                return Ok(Some(Some((scores, ranks))));
            }
            FromJudge::Refuse { player, message } => {
                let refused = refusal(judge, seats, player, message).map_err(bad)?;
                game.result.refused = Some(refused);
                return Ok(Some(None));
            }
        }
        Ok(None)
    }

    /// Keeps a replay frame (its line was `len` bytes), up to the game
    /// file's `max_frames`; past [`MAX_KEPT_BYTES`] the judge has failed.
    fn keep_frame(
        &mut self,
        result: &mut ExternalResult,
        frame: serde_json::Value,
        len: usize,
    ) -> Result<(), String> {
        if !self.game.keep_frames {
            return Ok(());
        }
        if result.frames.len() >= self.game.max_frames {
            result.frames_truncated = true;
            return Ok(());
        }
        self.count(len)?;
        result.frames.push(frame);
        Ok(())
    }

    /// Keeps a `log` line, up to [`MAX_LOG_LINES`] of them.
    fn keep_log(&mut self, result: &mut ExternalResult, line: String) -> Result<(), String> {
        if result.log.len() < MAX_LOG_LINES {
            self.count(line.len())?;
            result.log.push(line);
        }
        Ok(())
    }

    fn count(&mut self, len: usize) -> Result<(), String> {
        self.kept += len;
        if self.kept > MAX_KEPT_BYTES {
            return Err(format!(
                "the judge's frames and log lines of one game exceed {} MiB",
                MAX_KEPT_BYTES >> 20
            ));
        }
        Ok(())
    }
}

struct Game {
    result: ExternalResult,
    round: Round,
}

/// How a game ended: each seat's score and rank.
type Ended = (Vec<f64>, Vec<u32>);

/// One player's process and record during a game.
struct Seat {
    seat: usize,
    /// Which of the run's bots plays it ([`Player::bot`]).
    bot_index: usize,
    /// Its player's [`identity`].
    identity: String,
    /// Which process plays it: numbered from 1 on the game's thread, the
    /// same in each game a kept process plays, so that a judge can tell
    /// a process it has set up already (`process` in `start`).
    process: u64,
    entrant: String,
    program: Vec<String>,
    options: serde_json::Value,
    bot: Option<Bot>,
    /// How much of its stderr earlier games' records have shown (a kept
    /// process's).
    stderr_mark: u64,
    /// Where this game's usage starts (a kept process's).
    usage_mark: UsageMark,
    /// What the judge sent it that is not written yet: sends are written
    /// when it is asked, when the harness waits for the judge, or at the
    /// end of the game, so that a burst of the judge's messages (`send`,
    /// `send`, `ask`) reaches it in one write.
    pending: Vec<u8>,
    /// Whether `pending` holds this game's sends (not only the last words
    /// of a kept process's previous game, which wait for its next message).
    urgent: bool,
    timer: Timer,
    /// The start-up allowance (`startup`).
    startup: Duration,
    /// What is left of it for this game's set-up exchanges (version 2's
    /// `setup` asks share one allowance per game).
    setup_left: Duration,
    /// Why it is out of the game, once it is.
    failure: Option<Failure>,
    /// After a move asked `until` these words, until the lines written
    /// after it are taken (see [`Seat::drain_after_move`]).
    after_move: Option<Vec<String>>,
    /// Lines it wrote after its last move, before its next ask: the start
    /// of its next reply.
    early: Vec<String>,
    /// An end line it wrote after its move had ended: its error.
    second_end: Option<String>,
    startup_micros: Option<u64>,
    micros: Vec<u64>,
    /// Each move's CPU time, while every one is known (`None` after one
    /// is not).
    move_cpu: Option<Vec<u64>>,
    usage: Option<Usage>,
    stderr: Option<String>,
    stderr_truncated: bool,
}

impl Seat {
    /// The seat's player: `kept`, the process of the previous game, or a
    /// fresh one; `process` its number.
    fn start(
        seat: usize,
        player: &Player,
        identity: String,
        limits: BotLimits,
        timer: Timer,
        (kept, process): (Option<Kept>, u64),
    ) -> Seat {
        let spec = &player.spec;
        let program = std::iter::once(&spec.program)
            .chain(&spec.args)
            .map(|s: &OsString| s.to_string_lossy().into_owned())
            .collect();
        let (bot, stderr_mark, usage_mark, pending, failure) = match kept {
            Some(kept) => (
                Some(kept.bot),
                kept.stderr_mark,
                kept.usage_mark,
                kept.pending,
                None,
            ),
            None => match Bot::spawn(spec, limits) {
                Ok(bot) => (Some(bot), 0, UsageMark::default(), Vec::new(), None),
                Err(e) => (
                    None,
                    0,
                    UsageMark::default(),
                    Vec::new(),
                    Some(Failure {
                        verdict: e.verdict(),
                        message: e.recorded(),
                    }),
                ),
            },
        };
        Seat {
            seat,
            bot_index: player.bot,
            identity,
            process,
            entrant: player.name.clone(),
            program,
            options: player.options.clone(),
            bot,
            stderr_mark,
            usage_mark,
            pending,
            urgent: false,
            timer,
            startup: limits.startup,
            setup_left: limits.startup,
            failure,
            after_move: None,
            early: Vec::new(),
            second_end: None,
            startup_micros: None,
            micros: Vec::new(),
            move_cpu: Some(Vec::new()),
            usage: None,
            stderr: None,
            stderr_truncated: false,
        }
    }

    /// Takes the player out of the game: killed, its stderr kept.
    async fn out(&mut self, failure: Failure) {
        if let Some(bot) = self.bot.as_mut() {
            let _ = bot.kill().await;
            let (text, truncated) = bot.stderr_since(&mut self.stderr_mark);
            self.stderr = text;
            self.stderr_truncated = truncated;
            self.usage = Some(bot.usage_since(&mut self.usage_mark));
        }
        self.bot = None;
        self.failure = Some(failure);
    }

    async fn fail(&mut self, error: &BotError) {
        self.out(Failure {
            verdict: Verdict::from(error),
            message: error.to_string(),
        })
        .await;
    }

    /// Queues a message to the player (see [`Seat::deliver`]); past
    /// [`MAX_PENDING`] bytes, writes at once. Nothing is written to a
    /// player that is out.
    async fn send(&mut self, text: &[u8]) {
        if self.bot.is_some() {
            self.pending.extend_from_slice(text);
            self.urgent = true;
            if self.pending.len() > MAX_PENDING {
                self.deliver().await;
            }
        }
    }

    /// Writes what is queued for the player, in one write; a failure takes
    /// it out (the judge hears of it at its next ask).
    async fn deliver(&mut self) {
        self.urgent = false;
        if self.pending.is_empty() {
            return;
        }
        // What it wrote after its move came before this write.
        self.drain_after_move();
        let Some(bot) = self.bot.as_mut() else {
            self.pending.clear();
            return;
        };
        let sent = bot.send_within(&self.pending, self.timer.limit()).await;
        self.pending.clear();
        if let Err(e) = sent {
            self.fail(&e).await;
        }
    }

    /// Keeps a move's CPU time beside its wall time; one unknown drops
    /// them all, so that the two lists stay aligned.
    fn note_move_cpu(&mut self, cpu: Option<Duration>) {
        match (self.move_cpu.as_mut(), cpu) {
            (Some(all), Some(cpu)) => all.push(u64::try_from(cpu.as_micros()).unwrap_or(u64::MAX)),
            _ => self.move_cpu = None,
        }
    }

    /// Reads one move under the player's own limits, or a set-up
    /// exchange under what is left of its start-up allowance. A second end
    /// line the player wrote after its last move fails it first.
    async fn ask(&mut self, asking: &Asking<'_>) -> Answer {
        self.drain_after_move();
        if let Some(line) = self.second_end.take() {
            let failure = second_end_failure(&line);
            self.out(failure).await;
            return self.answer(None, 0, false);
        }
        self.deliver().await;
        let Some(bot) = self.bot.as_mut() else {
            return self.answer(None, 0, true);
        };
        let start = AskStart::of(bot);
        let deadline = if asking.setup {
            later(bot.sent_at(), self.setup_left)
        } else {
            bot.reply_deadline(self.timer.limit())
        };
        let early = std::mem::take(&mut self.early);
        match read_move(bot, asking, deadline, early).await {
            Ok(got) => self.took(got, asking, &start),
            Err((e, partial)) => self.failed_move(e, partial, asking, &start).await,
        }
    }

    /// Takes, once after a move asked `until` some words, the lines the
    /// player wrote after it that are here already, before anything more
    /// is written to it or it is asked again: one that begins with an end
    /// word is a second end line (its error, at its next ask), the others
    /// the start of its next reply. What comes later is its next reply's.
    fn drain_after_move(&mut self) {
        let (Some(words), Some(bot)) = (self.after_move.take(), self.bot.as_mut()) else {
            return;
        };
        let mut bytes = self.early.iter().map(String::len).sum::<usize>();
        while self.early.len() < protocol::MAX_PASSED_LINES && bytes < protocol::MAX_PASSED_BYTES {
            let Some(Ok(line)) = bot.ready_line() else {
                return;
            };
            if protocol::ends_move(&line, &words) {
                self.second_end = Some(line);
                return;
            }
            bytes += line.len();
            self.early.push(line);
        }
    }

    /// The answer of a player that did not reply: `out` before it was
    /// asked, or failed now after waiting `micros`, with the lines its
    /// unfinished move had (`partial`).
    fn answer(&self, partial: Option<Partial>, micros: u64, out: bool) -> Answer {
        let (lines, lines_dropped) = partial.map_or((None, 0), |p| (Some(p.lines), p.dropped));
        Answer {
            player: self.seat,
            text: None,
            lines,
            lines_dropped,
            micros,
            out,
            failed: self.failure.clone(),
        }
    }

    /// A move read: charged to the clock (a set-up exchange to the
    /// start-up allowance), recorded, answered.
    fn took(&mut self, got: Move, asking: &Asking<'_>, start: &AskStart) -> Answer {
        let micros = micros(got.elapsed);
        if asking.setup {
            self.setup_left = self.setup_left.saturating_sub(got.elapsed);
            self.add_startup(got.elapsed + start.lead);
        } else {
            self.timer.charge(got.elapsed, start.allowance);
            if start.first {
                self.add_startup(got.elapsed + start.lead);
            } else {
                self.micros.push(micros);
                self.note_move_cpu(got.cpu);
            }
        }
        self.after_move = asking.until.map(<[String]>::to_vec);
        Answer {
            player: self.seat,
            text: Some(got.text),
            lines: got.lines,
            lines_dropped: got.lines_dropped,
            micros,
            out: false,
            failed: None,
        }
    }

    /// A move that failed: its time waited recorded (and taken off the
    /// clock), the player out, the judge told with the lines it had.
    async fn failed_move(
        &mut self,
        e: BotError,
        partial: Partial,
        asking: &Asking<'_>,
        start: &AskStart,
    ) -> Answer {
        // A timeout's wait as compared with the limit; another failure's,
        // as it is now.
        let waited = match (&e, self.bot.as_ref()) {
            (BotError::Timeout { waited, .. }, _) => *waited,
            (_, Some(bot)) => bot.sent_at().elapsed(),
            (_, None) => Duration::ZERO,
        };
        let used = self.bot.as_ref().and_then(Bot::cpu_since_reply);
        let failure = if asking.setup || start.first {
            // A set-up exchange, or a process's first move (of several
            // lines, its first line may have come): its start-up.
            self.add_startup(waited + start.lead);
            match asking
                .setup
                .then(|| self.setup_timeout(&e, asking))
                .flatten()
            {
                Some(message) => Failure {
                    verdict: Verdict::timeout(Phase::Startup),
                    message,
                },
                None => failure_of(&as_startup(e)),
            }
        } else {
            self.micros.push(micros(waited));
            self.note_move_cpu(used);
            let e = self.timer.classify(e);
            self.timer.spend(waited);
            failure_of(&e)
        };
        self.out(failure).await;
        let partial = asking.until.map(|_| partial);
        self.answer(partial, micros(waited), false)
    }

    /// The message of a set-up exchange that timed out: the start-up
    /// allowance it had (a move limit played no part), and a hint about
    /// flushing only when nothing at all came from the player.
    fn setup_timeout(&self, e: &BotError, asking: &Asking<'_>) -> Option<String> {
        let BotError::Timeout {
            silent,
            at_memory_limit,
            ..
        } = e
        else {
            return None;
        };
        let awaited = match asking.until {
            Some(words) => words
                .iter()
                .map(|w| format!("{w:?}"))
                .collect::<Vec<_>>()
                .join(" or "),
            None => "reply".to_owned(),
        };
        let human = crate::units::human_duration;
        let shared = if self.setup_left < self.startup {
            format!(
                " (which the game's set-up exchanges share: {} of it was left)",
                human(self.setup_left)
            )
        } else {
            String::new()
        };
        Some(format!(
            "no {awaited} within its start-up allowance of {}{shared}{}",
            human(self.startup),
            crate::bot::timeout_hint(*silent, at_memory_limit)
        ))
    }

    fn add_startup(&mut self, time: Duration) {
        self.startup_micros = Some(self.startup_micros.unwrap_or(0) + micros(time));
    }
}

/// What an ask of one player knows as it begins.
struct AskStart {
    /// The start-up allowance still due (its process's first reply).
    allowance: Duration,
    /// Whether the reply is its process's first.
    first: bool,
    /// For a first reply: the time its process ran before its first
    /// message was written, part of its start-up however long the judge
    /// took to ask.
    lead: Duration,
}

impl AskStart {
    fn of(bot: &Bot) -> AskStart {
        let first = bot.startup_time().is_none();
        AskStart {
            allowance: bot.startup_allowance(),
            first,
            lead: if first {
                bot.sent_at().saturating_duration_since(bot.started_at())
            } else {
                Duration::ZERO
            },
        }
    }
}

fn failure_of(error: &BotError) -> Failure {
    Failure {
        verdict: Verdict::from(error),
        message: error.to_string(),
    }
}

/// A player that wrote a move's end line twice: `incorrect`, naming it.
fn second_end_failure(line: &str) -> Failure {
    let word = line.split([' ', '\t']).next().unwrap_or_default();
    Failure {
        verdict: Verdict::of(Status::Incorrect),
        message: format!(
            "wrote {word:?} twice: a second end line after its move ({:?}), before it was asked again",
            cut(line)
        ),
    }
}

/// A timeout of a set-up exchange or of a process's first reply is one of
/// its start-up.
fn as_startup(mut error: BotError) -> BotError {
    if let BotError::Timeout { phase, .. } = &mut error {
        *phase = Phase::Startup;
    }
    error
}

/// A move as read: its last line (or byte), the lines before it when it
/// was asked `until` a word, and its time from the write that began it.
struct Move {
    text: String,
    lines: Option<Vec<String>>,
    lines_dropped: u64,
    elapsed: Duration,
    cpu: Option<Duration>,
}

/// The lines of a move of several lines so far, within the caps of what
/// is passed to the judge.
#[derive(Default)]
struct Partial {
    lines: Vec<String>,
    bytes: usize,
    dropped: u64,
}

impl Partial {
    fn push(&mut self, line: String) {
        if self.lines.len() < protocol::MAX_PASSED_LINES
            && self.bytes + line.len() <= protocol::MAX_PASSED_BYTES
        {
            self.bytes += line.len();
            self.lines.push(line);
        } else {
            self.dropped += 1;
        }
    }
}

/// Reads a move by `asking`'s rules, by `deadline`, after the lines that
/// came `early` (written after the player's previous move). A move of
/// several lines is timed from the write that began it to the line that
/// ends it, and its CPU time is that of all its lines. A failure comes
/// with the lines of the unfinished move.
async fn read_move(
    bot: &mut Bot,
    asking: &Asking<'_>,
    deadline: Instant,
    early: Vec<String>,
) -> Result<Move, (BotError, Partial)> {
    if asking.read == ReadUnit::Byte {
        let (byte, elapsed) = bot
            .recv_byte(deadline)
            .await
            .map_err(|e| (e, Partial::default()))?;
        return Ok(Move {
            text: char::from(byte).to_string(),
            lines: None,
            lines_dropped: 0,
            elapsed,
            cpu: bot.last_reply_cpu(),
        });
    }
    let mut early = early.into_iter();
    if asking.until.is_none()
        && let Some(text) = early.next()
    {
        // A line ask after a move of several lines: the first line left
        // over is its reply, as if read now.
        let elapsed = bot.sent_at().elapsed();
        return Ok(Move {
            text,
            lines: None,
            lines_dropped: 0,
            elapsed,
            cpu: None,
        });
    }
    let mut partial = Partial::default();
    early.for_each(|line| partial.push(line));
    let mut cpu = Some(Duration::ZERO);
    loop {
        let reply = match bot.recv_line(deadline, None).await {
            Ok(reply) => reply,
            Err(e) => {
                // A line the game lets go (chess's long `info`): dropped,
                // counted for the judge, and the move read on.
                if matches!(e, BotError::LineTooLong { .. })
                    && asking.until.is_some()
                    && bot.drop_long_line(asking.drop_long)
                {
                    partial.dropped += 1;
                    continue;
                }
                return Err((e, partial));
            }
        };
        cpu = cpu.zip(reply.cpu).map(|(a, b)| a + b);
        let ends = asking
            .until
            .is_none_or(|words| protocol::ends_move(reply.text, words));
        if ends {
            return Ok(Move {
                text: reply.text.to_owned(),
                lines: asking.until.map(|_| partial.lines),
                lines_dropped: partial.dropped,
                elapsed: reply.elapsed,
                cpu,
            });
        }
        partial.push(reply.text.to_owned());
    }
}

/// Ends a kept player after its last game: the game's last words
/// delivered, then [`farewell`]. A player that has gone already is judged
/// by the shutdown.
async fn say_goodbye(bot: usize, mut kept: Kept) -> Option<Farewell> {
    if !kept.pending.is_empty() {
        let _ = kept.bot.send_within(&kept.pending, kept.grace).await;
    }
    farewell(bot, kept.name, &mut kept.bot, kept.grace).await
}

/// Who plays as `player`, for a kept process: its entrant and program.
fn identity(player: &Player) -> String {
    let spec = &player.spec;
    format!(
        "{}\0{:?}\0{:?}\0{:?}",
        player.name, spec.program, spec.args, spec.dir
    )
}

/// Ends a kept player after the last game: its input closed, `--grace` to
/// exit (as the dealer ends its player). Something to say, if anything.
async fn farewell(index: usize, name: String, bot: &mut Bot, grace: Duration) -> Option<Farewell> {
    let say = |fault, message| {
        Some(Farewell {
            bot: index,
            name: name.clone(),
            fault,
            message,
        })
    };
    let finished = match bot.shutdown(None).await {
        Ok(finished) => finished,
        Err(e) => {
            return say(
                Some(crate::exit::Status::Internal),
                format!("ending the player: {e}"),
            );
        }
    };
    if !finished.exited_in_grace {
        let signal = finished.forced.map_or("a signal", |s| s.as_str());
        return say(
            Some(crate::exit::Status::Crashed),
            format!(
                "timeout: the player did not exit within {} after its input was closed at the end of the run; killed with {signal}",
                crate::units::human_duration(grace)
            ),
        );
    }
    if finished.stray_lines > 0 {
        return say(
            None,
            format!(
                "warning: the player wrote {} line(s) after the last game, first {:?}; ignored",
                finished.stray_lines,
                finished.first_stray.unwrap_or_default()
            ),
        );
    }
    if !finished.ended.success() {
        return say(
            None,
            format!(
                "warning: the player {} after its input was closed",
                finished.ended
            ),
        );
    }
    None
}

/// A judge that refused a game's settings sends nothing more for that
/// game: a message it has written already is a protocol error. (With
/// `reuse = true` it waits for the next `start`.)
/// The judge's `refuse`: whose settings it refuses (a seat's entrant, or
/// the game's when no `player`), once it is sure the judge wrote nothing
/// after it.
fn refusal(
    judge: &mut Judge,
    seats: &[Seat],
    player: Option<usize>,
    message: String,
) -> Result<JudgeRefusal, String> {
    let player = match player {
        Some(p) => {
            check_seats(&[p], seats.len())?;
            Some((p, seats[p].entrant.clone()))
        }
        None => None,
    };
    nothing_after_refuse(judge)?;
    Ok(JudgeRefusal { player, message })
}

fn nothing_after_refuse(judge: &mut Judge) -> Result<(), String> {
    match judge.written_line() {
        Some(line) => Err(format!(
            "it wrote a message after `refuse`, which ends the game: {:?}",
            cut(&line)
        )),
        None => Ok(()),
    }
}

/// Writes one message to the judge, as one line.
async fn tell(judge: &mut Judge, line: &mut Vec<u8>, message: &ToJudge<'_>) -> Result<(), String> {
    line.clear();
    serde_json::to_writer(&mut *line, message).map_err(|e| format!("internal: {e}"))?;
    line.push(b'\n');
    judge.send(line).await
}

fn check_seats(seats: &[usize], count: usize) -> Result<(), String> {
    for (i, &s) in seats.iter().enumerate() {
        if s >= count {
            return Err(format!(
                "there is no player {s} (players are 0 to {})",
                count - 1
            ));
        }
        if seats[..i].contains(&s) {
            return Err(format!("player {s} is named twice"));
        }
    }
    Ok(())
}

/// A message quoted in an error: its first 200 characters.
fn cut(text: &str) -> String {
    text.chars().take(200).collect()
}
