//! `referee dealer`: the Even Steven dealer, driving one player program
//! through the bot layer.
//!
//! Output goes to standard output exactly as the statement's dealer writes
//! it (`Game N`, then the verdict), with the player's `*` lines copied in
//! order as they are read. A player's fault stops the run with a message on
//! standard output, where a judge comparing outputs sees it.

use std::fmt;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use tokio::io::AsyncRead;

use super::cards::{Card, CardError};
use super::deal::Deal;
use super::input::{self, GameSpec};
use super::record::{ErrorRecord, GameRecord, Play};
use crate::bot::clock::{MoveLimits, Timer};
use crate::bot::{Bot, BotError, BotLimits, BotSpec, Finished, LineReader, Next, Usage, UsageMark};
use crate::exit::Status;
use crate::outcome::{self, Phase, Verdict};
use crate::record::{self, Records};

/// Longest dealer input line accepted; real lines are a dozen bytes.
const MAX_INPUT_LINE: usize = 1024;

/// Everything `referee dealer` needs.
#[derive(Clone, Debug)]
pub struct DealerConfig {
    pub player: BotSpec,
    pub limits: BotLimits,
    /// Per move (from the dealt card written to the played card read), and
    /// the time control of each game, if any.
    pub time: MoveLimits,
    pub results: Option<PathBuf>,
    /// The games to deal; standard input when `None`.
    pub input: Option<PathBuf>,
    /// Most bytes of debug (`*`) lines copied per game; the rest are dropped.
    pub max_debug: usize,
}

/// How one game ended.
#[derive(Debug)]
enum Outcome {
    Win,
    Lose { necessarily: bool },
    Failed { failure: Failure, at: At },
}

/// When in a game a failure happened.
#[derive(Clone, Copy, Debug)]
enum At {
    /// While move `number` (1-based) was being played on `dealt`.
    Move { number: usize, dealt: Card },
    /// While the result was being told, after the last move.
    AfterMove(usize),
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Move { number, dealt } => write!(f, "move {number} (dealt {dealt})"),
            At::AfterMove(number) => write!(f, "after move {number}"),
        }
    }
}

/// At most this many characters of a player's text are quoted back.
const QUOTE_LIMIT: usize = 100;

/// `text`, cut to [`QUOTE_LIMIT`] characters with a note of the rest.
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_LIMIT) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?} (and {} more bytes)", &text[..cut], text.len() - cut),
    }
}

/// A player's fault during a move.
#[derive(Debug)]
enum Failure {
    Bot(BotError),
    NotACard { text: String, error: CardError },
    NotInHand { card: Card, holding: Vec<Card> },
    PlayedTwice { card: Card, on_move: usize },
}

impl Failure {
    fn verdict(&self) -> Verdict {
        match self {
            Failure::Bot(e) => Verdict::from(e),
            _ => Verdict::of(outcome::Status::Incorrect),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Failure::Bot(e) => e.kind(),
            Failure::NotACard { .. } => "not_a_card",
            Failure::NotInHand { .. } => "not_in_hand",
            Failure::PlayedTwice { .. } => "played_twice",
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Bot(e) => write!(f, "the player {e}"),
            Failure::NotACard { text, error } => {
                write!(
                    f,
                    "the player wrote {}, which is not a card: {error}",
                    quote(text)
                )
            }
            Failure::NotInHand { card, holding } => {
                write!(
                    f,
                    "the player played {card}, which is not in its hand (it holds"
                )?;
                for held in holding {
                    write!(f, " {held}")?;
                }
                write!(f, ")")
            }
            Failure::PlayedTwice { card, on_move } => write!(
                f,
                "the player played {card} again; it was already played on move {on_move}"
            ),
        }
    }
}

impl Failure {
    /// The time a move that timed out was waited for: it counts in move
    /// statistics, so that `max_move` sees it.
    fn waited_micros(&self) -> Option<u64> {
        match self {
            // A start-up that timed out is not a move.
            Failure::Bot(BotError::Timeout { limit, phase, .. }) if *phase != Phase::Startup => {
                Some(micros_of(*limit))
            }
            _ => None,
        }
    }
}

fn micros_of(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Move times of `plays` (the first reply of a process left out), and a
/// timed-out move's wait.
fn move_micros<'p>(plays: &'p [Play], outcome: &Outcome) -> impl Iterator<Item = u64> + 'p {
    let waited = match outcome {
        Outcome::Failed { failure, .. } => failure.waited_micros(),
        _ => None,
    };
    (plays.iter().filter(|p| !p.first).map(|p| p.micros)).chain(waited)
}

/// The first reply's time, when it came in this game.
fn startup_micros(plays: &[Play]) -> Option<u64> {
    plays.iter().find(|p| p.first).map(|p| p.micros)
}

/// Counts for the closing summary.
#[derive(Default)]
struct Tally {
    games: u64,
    wins: u64,
    necessarily: u64,
    unnecessarily: u64,
    moves: u64,
    slowest: Duration,
}

impl Tally {
    /// A game's moves, and the slowest of them.
    fn count_moves(&mut self, plays: &[Play], outcome: &Outcome) {
        for micros in move_micros(plays, outcome) {
            self.moves += 1;
            self.slowest = self.slowest.max(Duration::from_micros(micros));
        }
    }
}

/// A game played, as its record needs it.
struct Dealt<'a> {
    index: u64,
    line: u64,
    spec: GameSpec,
    deal: &'a Deal,
    winnable: bool,
    plays: &'a [Play],
}

/// A game's verdict, as its record holds it.
struct Judged {
    status: Status,
    /// As in records: `win`, `lose_necessarily`, `lose_unnecessarily`, or
    /// the failure's status name.
    outcome: &'static str,
    verdict: Verdict,
    error: Option<ErrorRecord>,
}

/// Runs the dealer. Returns the exit status; every message has been printed.
///
/// A closed standard output (`referee dealer ... | head -1`) ends the run
/// quietly with status 0, as it does for `head`'s other writers: whoever
/// reads the output wants no more of it.
pub async fn run(config: &DealerConfig) -> Status {
    let mut out = io::BufWriter::new(io::stdout());
    let status = match Dealer::start(config).await {
        Ok(dealer) => dealer.run(&mut out).await,
        Err(status) => status,
    };
    match out.flush() {
        Ok(()) => status,
        Err(e) if closed(&e) => Status::OutputClosed,
        Err(_) => Status::Internal,
    }
}

/// Our output's reader has gone.
fn closed(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

struct Dealer<'c> {
    config: &'c DealerConfig,
    player_words: Vec<String>,
    input_name: String,
    input: LineReader<Box<dyn AsyncRead + Unpin>>,
    records: Option<Records>,
    bot: Bot,
    /// Bytes for the player not sent yet: the last game's `YOU WIN` or
    /// `YOU LOSE`, which travels with the next game's first message when
    /// that game is already known (see [`Dealer::deal_one`]).
    pending: Vec<u8>,
    stderr_mark: u64,
    /// Where the player's usage for the next record starts.
    usage_mark: UsageMark,
    tally: Tally,
}

impl<'c> Dealer<'c> {
    async fn start(config: &'c DealerConfig) -> Result<Dealer<'c>, Status> {
        let records = match config.results.as_deref().map(Records::open).transpose() {
            Ok(records) => records,
            Err(e) => {
                eprintln!("referee dealer: {e}");
                return Err(Status::Usage);
            }
        };
        let (input_name, input): (String, Box<dyn AsyncRead + Unpin>) = match &config.input {
            None => ("standard input".into(), Box::new(tokio::io::stdin())),
            Some(path) => match tokio::fs::File::open(path).await {
                Ok(file) => (path.display().to_string(), Box::new(file)),
                Err(e) => {
                    eprintln!("referee dealer: {}: {e}", path.display());
                    return Err(Status::Usage);
                }
            },
        };
        // Start the player before reading any input, as the original dealer
        // did, so a missing program is reported at once.
        let bot = match Bot::spawn(&config.player, config.limits) {
            Ok(bot) => bot,
            // The referee's own descriptors, memory or processes: its
            // failure (70), not a mistake in the command (64).
            Err(e) if e.is_referees() => {
                eprintln!(
                    "referee dealer: the referee could not start the player: {e} (its own \
                     resources: give it more descriptors with `ulimit -n`, or memory)"
                );
                return Err(Status::Internal);
            }
            Err(e) => {
                eprintln!("referee dealer: cannot start the player: {e}");
                return Err(Status::Usage);
            }
        };
        let player_words = std::iter::once(&config.player.program)
            .chain(&config.player.args)
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        Ok(Dealer {
            config,
            player_words,
            input_name,
            input: LineReader::new(input, MAX_INPUT_LINE),
            records,
            bot,
            pending: Vec::with_capacity(64),
            stderr_mark: 0,
            usage_mark: UsageMark::default(),
            tally: Tally::default(),
        })
    }

    async fn run(mut self, out: &mut io::BufWriter<io::Stdout>) -> Status {
        let status = match self.deal_all(out).await {
            Ok(status) => status,
            Err(e) if closed(&e) => {
                let _ = self.bot.kill().await;
                return Status::OutputClosed;
            }
            Err(e) => {
                eprintln!("referee dealer: cannot write output: {e}");
                Status::Internal
            }
        };
        let grace = self.config.limits.grace;
        self.tally.log();
        crate::bot::no_more_bots();
        let status = match status {
            // The player did nothing wrong: it gets its orderly end.
            Status::Pass | Status::Usage => {
                // The last verdict; a player that exited already, or does
                // not read, is judged by the shutdown that follows.
                if !self.pending.is_empty() {
                    let _ = deliver(&mut self.bot, &mut self.pending, grace).await;
                }
                finish_player(self.bot, out, grace, status).await
            }
            _ => {
                if let Err(e) = self.bot.kill().await {
                    tracing::warn!("reaping the player: {e}");
                }
                status
            }
        };
        // The last records are made durable before the run ends.
        match self.records.take().map(Records::finish) {
            Some(Err(e)) if status != Status::Io => {
                eprintln!("referee dealer: {e}");
                Status::Io
            }
            _ => status,
        }
    }

    /// Plays every game of the input. `Err` only for failures to write our
    /// own output.
    async fn deal_all(&mut self, out: &mut io::BufWriter<io::Stdout>) -> io::Result<Status> {
        let mut line_number = 0u64;
        loop {
            // Whoever types the input interactively sees every result first.
            // (Otherwise output is flushed whenever the dealer waits for the
            // player, so a watcher always sees which game is being played.)
            if !self.input.has_line() {
                out.flush()?;
            }
            let range = match self.input.next().await {
                Ok(Next::Line(range)) => range,
                Ok(Next::Eof { unterminated }) if unterminated.is_empty() => {
                    if self.tally.games == 0 {
                        // Most likely the input went elsewhere, or a file
                        // was empty: no verdict at all, rather than a pass.
                        eprintln!(
                            "referee dealer: {} has no games (expected one `N seed` line per game)",
                            self.input_name
                        );
                        return Ok(Status::Usage);
                    }
                    return Ok(Status::Pass);
                }
                Ok(Next::Eof { unterminated }) => unterminated,
                Ok(Next::TooLong) => {
                    self.input_error(
                        line_number + 1,
                        &format!("line longer than {MAX_INPUT_LINE} bytes"),
                    );
                    return Ok(Status::Usage);
                }
                Err(e) => {
                    eprintln!("referee dealer: reading {}: {e}", self.input_name);
                    return Ok(Status::Usage);
                }
            };
            line_number += 1;
            let line = self.input.get(range);
            let spec = match input::parse_line(line) {
                Ok(Some(spec)) => spec,
                Ok(None) => continue,
                Err(e) => {
                    let text = String::from_utf8_lossy(line).into_owned();
                    self.input_error(line_number, &format!("{e}: {text:?}"));
                    return Ok(Status::Usage);
                }
            };
            self.tally.games += 1;
            let index = self.tally.games;
            writeln!(out, "Game {index}")?;
            let status = self.deal_one(index, line_number, spec, out).await?;
            if status != Status::Pass {
                return Ok(status);
            }
        }
    }

    fn input_error(&self, line_number: u64, what: &str) {
        eprintln!(
            "referee dealer: {}, line {line_number}: {what}",
            self.input_name
        );
    }

    /// Plays one game, prints its verdict or failure, and records it.
    async fn deal_one(
        &mut self,
        index: u64,
        line: u64,
        spec: GameSpec,
        out: &mut io::BufWriter<io::Stdout>,
    ) -> io::Result<Status> {
        let deal = Deal::new(spec.n, spec.seed);
        let winnable = deal.winnable();
        let mut plays = Vec::with_capacity(spec.n);
        let outcome = self
            .play_game(index, &deal, winnable, &mut plays, out)
            .await;
        let judged = self.judge(index, &outcome, out).await?;
        self.tally.count_moves(&plays, &outcome);
        let game = Dealt {
            index,
            line,
            spec,
            deal: &deal,
            winnable,
            plays: &plays,
        };
        Ok(self.record(&game, judged))
    }

    /// Plays the game, and tells the player its verdict now unless the next
    /// game's line is already read: then the verdict waits for that game's
    /// first message, one write and one wake-up of the player instead of
    /// two. Otherwise (the input is typed, or comes in chunks, or ends) it
    /// goes now, so a player never waits for it.
    async fn play_game(
        &mut self,
        index: u64,
        deal: &Deal,
        winnable: bool,
        plays: &mut Vec<Play>,
        out: &mut io::BufWriter<io::Stdout>,
    ) -> Outcome {
        let mut relay = DebugRelay {
            out: DebugLines::new(out),
            left: self.config.max_debug,
            dropping: false,
            game: index,
        };
        let outcome = play(
            &mut self.bot,
            deal,
            winnable,
            self.config.time,
            &mut self.pending,
            plays,
            &mut relay,
        )
        .await;
        if !matches!(outcome, Outcome::Failed { .. })
            && !self.input.has_line()
            && let Err(failure) =
                deliver(&mut self.bot, &mut self.pending, self.config.time.timeout).await
        {
            return Outcome::Failed {
                failure: Failure::Bot(failure),
                at: At::AfterMove(plays.len()),
            };
        }
        outcome
    }

    /// Prints the game's verdict, or reports the player's failure (killing
    /// it), and counts it.
    async fn judge(
        &mut self,
        index: u64,
        outcome: &Outcome,
        out: &mut io::BufWriter<io::Stdout>,
    ) -> io::Result<Judged> {
        let passed = |outcome, verdict_line: &[u8], out: &mut io::BufWriter<io::Stdout>| {
            out.write_all(verdict_line).map(|()| Judged {
                status: Status::Pass,
                outcome,
                verdict: Verdict::OK,
                error: None,
            })
        };
        match outcome {
            Outcome::Win => {
                self.tally.wins += 1;
                passed("win", b"YOU WIN\n", out)
            }
            Outcome::Lose { necessarily: true } => {
                self.tally.necessarily += 1;
                passed("lose_necessarily", b"YOU LOSE NECESSARILY\n", out)
            }
            Outcome::Lose { necessarily: false } => {
                self.tally.unnecessarily += 1;
                passed("lose_unnecessarily", b"YOU LOSE UNNECESSARILY\n", out)
            }
            Outcome::Failed { failure, at } => {
                // Done with this player. Killing it first also lets its last
                // stderr lines arrive for the report.
                if let Err(e) = self.bot.kill().await {
                    tracing::warn!("reaping the player: {e}");
                }
                let verdict = failure.verdict();
                let message = format!("game {index}, {at}: {}: {failure}", verdict.status.words());
                self.report(out, &message)?;
                let (move_number, after_move) = match *at {
                    At::Move { number, .. } => (number, false),
                    At::AfterMove(number) => (number, true),
                };
                Ok(Judged {
                    status: Status::from(verdict.status),
                    outcome: verdict.status.name(),
                    verdict,
                    error: Some(ErrorRecord {
                        kind: failure.kind(),
                        move_number,
                        after_move,
                        message,
                    }),
                })
            }
        }
    }

    /// Appends the game's record, when there is a results file; the game's
    /// status, or [`Status::Io`] when the record could not be written.
    fn record(&mut self, game: &Dealt<'_>, judged: Judged) -> Status {
        let Some(records) = self.records.as_mut() else {
            return judged.status;
        };
        // Only a record needs the game's stderr: looking costs a read.
        let (stderr, stderr_truncated) = self.bot.stderr_since(&mut self.stderr_mark);
        let usage = self.bot.usage_since(&mut self.usage_mark);
        let record = GameRecord {
            game: "evensteven",
            index: game.index,
            line: game.line,
            n: game.spec.n,
            seed: game.spec.seed,
            hand: &game.deal.hand,
            deal: &game.deal.to_cover,
            winnable: game.winnable,
            plays: game.plays,
            outcome: judged.outcome,
            verdict: judged.verdict,
            startup_micros: startup_micros(game.plays),
            usage,
            error: judged.error,
            stderr,
            stderr_truncated,
            player: &self.player_words,
            time: std::time::SystemTime::now(),
            referee: record::REFEREE_VERSION,
        };
        // A results file that cannot be written stops the run: its verdict
        // could not be trusted.
        if let Err(e) = records.append_written(|line| record.write(line)) {
            eprintln!("referee dealer: {e}");
            return Status::Io;
        }
        judged.status
    }

    /// A player's fault: on standard output, where the judge's comparison
    /// shows it, and on standard error with the player's last stderr lines
    /// (once only when both go to the same terminal).
    fn report(&self, out: &mut io::BufWriter<io::Stdout>, message: &str) -> io::Result<()> {
        crate::games::report_fault(out, "dealer", &self.bot, message)
    }
}

/// Plays one deal with the player, filling `plays` as it goes. `message`
/// may hold bytes still owed to the player (the last verdict), which go
/// first; when the game ends with a verdict, `message` holds it, unsent
/// (see [`deliver`]).
async fn play(
    bot: &mut Bot,
    deal: &Deal,
    winnable: bool,
    time: MoveLimits,
    message: &mut Vec<u8>,
    plays: &mut Vec<Play>,
    relay: &mut (dyn Write + Send),
) -> Outcome {
    write_hand(message, &deal.hand);
    let mut in_hand = vec![true; deal.hand.len()];
    let mut timer = Timer::new(time);
    for &dealt in &deal.to_cover {
        let at = At::Move {
            number: plays.len() + 1,
            dealt,
        };
        let failed = |failure| Outcome::Failed { failure, at };
        dealt.push_to(message);
        message.push(b'\n');
        let allowance = bot.startup_allowance();
        let reply = match bot.exchange(message, timer.limit(), Some(relay)).await {
            Ok(reply) => reply,
            Err(e) => return failed(Failure::Bot(timer.classify(e))),
        };
        timer.charge(reply.elapsed, allowance);
        message.clear();
        let played = match Card::parse(reply.text) {
            Ok(card) => card,
            Err(error) => {
                return failed(Failure::NotACard {
                    text: reply.text.to_owned(),
                    error,
                });
            }
        };
        let micros = micros_of(reply.elapsed);
        let cpu_micros = reply.cpu.map(micros_of);
        let first = reply.first;
        let Some(slot) = deal.hand.iter().position(|&c| c == played) else {
            let holding = (deal.hand.iter().zip(&in_hand))
                .filter_map(|(&card, &held)| held.then_some(card))
                .collect();
            return failed(Failure::NotInHand {
                card: played,
                holding,
            });
        };
        if !in_hand[slot] {
            let on_move = plays
                .iter()
                .position(|p| p.played == played)
                .map_or(0, |i| i + 1);
            return failed(Failure::PlayedTwice {
                card: played,
                on_move,
            });
        }
        in_hand[slot] = false;
        plays.push(Play {
            dealt,
            played,
            micros,
            cpu_micros,
            first,
        });
        if !played.covers(dealt) {
            message.extend_from_slice(b"YOU LOSE\n");
            return Outcome::Lose {
                necessarily: !winnable,
            };
        }
    }
    message.extend_from_slice(b"YOU WIN\n");
    Outcome::Win
}

/// One game on its own, for tournaments and CI runs: a fresh player
/// process, one deal, its debug lines dropped. Its outcome, as in records:
/// `win`, `lose_necessarily`, `lose_unnecessarily`, or the failure's status
/// name; its plays, each card dealt and the card that covered it.
pub type Single = crate::games::Single<Play>;

/// Plays deal (`n`, `seed`) with a fresh `player`.
pub async fn play_single(
    player: &BotSpec,
    limits: BotLimits,
    time: MoveLimits,
    n: usize,
    seed: u32,
) -> Result<Single, crate::bot::SpawnError> {
    let mut bot = Bot::spawn(player, limits)?;
    let deal = Deal::new(n, seed);
    let mut plays = Vec::new();
    let mut verdict = Vec::new();
    let mut outcome = play(
        &mut bot,
        &deal,
        deal.winnable(),
        time,
        &mut verdict,
        &mut plays,
        &mut io::sink(),
    )
    .await;
    if !matches!(outcome, Outcome::Failed { .. })
        && let Err(failure) = deliver(&mut bot, &mut verdict, time.timeout).await
    {
        outcome = Outcome::Failed {
            failure: Failure::Bot(failure),
            at: At::AfterMove(plays.len()),
        };
    }
    let micros = move_micros(&plays, &outcome).collect();
    let (name, verdict, error) = match outcome {
        Outcome::Win => ("win", Verdict::OK, None),
        Outcome::Lose { necessarily: true } => ("lose_necessarily", Verdict::OK, None),
        Outcome::Lose { necessarily: false } => ("lose_unnecessarily", Verdict::OK, None),
        Outcome::Failed { failure, at } => {
            let verdict = failure.verdict();
            (
                verdict.status.name(),
                verdict,
                Some(format!("{at}: {}: {failure}", verdict.status.words())),
            )
        }
    };
    let mut single = Single {
        outcome: name,
        verdict,
        error,
        micros,
        startup_micros: startup_micros(&plays),
        stderr: String::new(),
        plays,
        usage: Usage::default(),
    }
    .ended(&mut bot)
    .await;
    single.stderr = bot.stderr(|t| t.since(0).0);
    Ok(single)
}

fn write_hand(message: &mut Vec<u8>, hand: &[Card]) {
    write!(message, "{}", hand.len()).expect("writing to a Vec");
    for card in hand {
        message.push(b' ');
        card.push_to(message);
    }
    message.push(b'\n');
}

/// Sends what is owed to the player (`YOU WIN` or `YOU LOSE`) and empties
/// `pending`. A player that has already exited after its last card is not
/// failed here: the game is decided, and an early exit shows up at the
/// next game or at the end.
async fn deliver(bot: &mut Bot, pending: &mut Vec<u8>, timeout: Duration) -> Result<(), BotError> {
    let sent = bot.send_within(pending, timeout).await;
    pending.clear();
    match sent {
        Err(BotError::Exited { .. } | BotError::ClosedInput) | Ok(()) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Copies a game's debug lines to the output, up to a budget of bytes;
/// past it, says so once and drops the rest of the game's debug lines, so a
/// flooding player cannot fill the disk. Each `write` is one whole line
/// (the bot layer writes lines that way).
struct DebugRelay<'a> {
    out: DebugLines<'a>,
    /// Bytes still allowed.
    left: usize,
    /// The budget is spent: drop everything.
    dropping: bool,
    game: u64,
}

impl Write for DebugRelay<'_> {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        if self.dropping {
            // Dropped, as announced.
        } else if line.len() <= self.left {
            self.left -= line.len();
            self.out.write_all(line)?;
        } else {
            self.dropping = true;
            writeln!(
                self.out.out,
                "dealer: game {}: the player's debug lines exceed the limit (--max-debug); the rest of this game's are dropped",
                self.game
            )?;
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The dealer's output as debug lines reach it, one whole line per
/// `write`: as the player wrote them (the statement's dealer copies them),
/// but with every control character escaped when the output is a
/// terminal, so that nothing a player writes drives it (retitles or
/// clears it, plants a link). The one exception to copying byte for byte;
/// to a file or a pipe they stay as written.
struct DebugLines<'a> {
    out: &'a mut io::BufWriter<io::Stdout>,
    escape: bool,
}

impl<'a> DebugLines<'a> {
    fn new(out: &'a mut io::BufWriter<io::Stdout>) -> DebugLines<'a> {
        static TERMINAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        DebugLines {
            out,
            escape: *TERMINAL.get_or_init(|| io::stdout().is_terminal()),
        }
    }
}

impl Write for DebugLines<'_> {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        if self.escape {
            let text = line.strip_suffix(b"\n").unwrap_or(line);
            let shown = crate::text::terminal(&String::from_utf8_lossy(text)).into_owned();
            writeln!(self.out, "{shown}")?;
        } else {
            self.out.write_all(line)?;
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Closes the player's input after the last game and holds it to the grace
/// period. Not exiting in time is a crash; a non-zero exit is a warning.
async fn finish_player(
    mut bot: Bot,
    out: &mut io::BufWriter<io::Stdout>,
    grace: Duration,
    status: Status,
) -> Status {
    let finished: Finished = match bot.shutdown(Some(&mut DebugLines::new(out))).await {
        Ok(finished) => finished,
        Err(e) if closed(&e) => return Status::OutputClosed,
        Err(e) => {
            eprintln!("referee dealer: ending the player: {e}");
            return status.max(Status::Internal);
        }
    };
    if finished.stray_lines > 0 {
        eprintln!(
            "referee dealer: warning: the player wrote {} line(s) after the last game, first {:?}; ignored",
            finished.stray_lines,
            finished.first_stray.unwrap_or_default()
        );
    }
    if !finished.exited_in_grace {
        let signal = finished.forced.map_or("a signal", |s| s.as_str());
        let message = format!(
            "timeout: the player did not exit within {} after its input was closed; killed with {signal}",
            crate::units::human_duration(grace)
        );
        let _ = writeln!(out, "dealer: {message}");
        if !io::stdout().is_terminal() {
            eprintln!("referee dealer: {message}");
        }
        return status.max(Status::Crashed);
    }
    if !finished.ended.success() {
        eprintln!(
            "referee dealer: warning: the player {} after its input was closed",
            finished.ended
        );
    }
    status
}

impl Tally {
    fn log(&self) {
        tracing::info!(
            games = self.games,
            wins = self.wins,
            lost_necessarily = self.necessarily,
            lost_unnecessarily = self.unnecessarily,
            moves = self.moves,
            slowest_move = %crate::units::human_duration(self.slowest),
            "dealer summary"
        );
    }
}
