//! Septica: a player program against the computer, over many matches.
//! Statement: `../shared/seeds/004_92305268ba893d40.txt`; the project's
//! account of the rules, the rulings and the computer's policy:
//! `docs/septica.md`.

pub mod computer;
pub mod protocol;
pub mod rules;
pub mod view;

use std::collections::HashMap;
use std::fmt;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::bot::clock::{MoveLimits, Timer};
use crate::bot::{Bot, BotError, BotLimits, BotSpec, Usage, UsageMark};
use crate::exit::Status;
use crate::games::Single;
use crate::outcome::{self, Verdict};
use crate::record::{self, Records};
use crate::rng::{SplitMix64, fresh_seed};
use crate::stats::wilson95;
use rules::{Action, DECK, Hand, Illegal, Phase, Side, Table};

/// Everything `referee septica` needs.
#[derive(Clone, Debug)]
pub struct SepticaConfig {
    pub player: BotSpec,
    pub limits: BotLimits,
    /// Per command, and the time control of each match, if any.
    pub time: MoveLimits,
    pub matches: u64,
    /// Wins needed; half the matches played when not given (the
    /// statement's 500 of 1000).
    pub need: Option<u64>,
    pub seed: Option<u64>,
    pub results: Option<PathBuf>,
    /// Decks to play instead of shuffled ones, one match per deck.
    pub deal_file: Option<PathBuf>,
    /// Print every message, as the statement's sample table does.
    pub transcript: bool,
    /// Skip the matches `results` already holds for this run.
    pub resume: bool,
}

impl SepticaConfig {
    /// The wins needed out of `matches` played.
    fn need_of(&self, matches: u64) -> u64 {
        self.need.unwrap_or_else(|| matches.div_ceil(2))
    }
}

/// The deck of a match: a Fisher–Yates shuffle of the ordered deck
/// (`7 7 7 7 8 ... 14`) with the match's own stream of the run's seed.
pub fn shuffled_deck(seed: u64, index: u64) -> Vec<u8> {
    let mut deck = Hand::full_deck().cards();
    SplitMix64::for_game(seed, index).shuffle(&mut deck);
    deck
}

/// The computer's generator for a match: from the run's seed and the
/// match's deck, so that a deck replayed with `--deal-file` and the same
/// seed gives the same match, whatever its position in the run.
pub fn computer_rng(seed: u64, deck: &[u8]) -> SplitMix64 {
    let mixed = deck.iter().fold(seed, |h, &card| {
        SplitMix64::new(h ^ u64::from(card)).next_u64()
    });
    SplitMix64::new(mixed)
}

/// Reads `--deal-file`: one deck per line (32 values), `#` comments and
/// blank lines skipped. Errors name the file and line.
pub fn read_deal_file(path: &std::path::Path) -> Result<Vec<Vec<u8>>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut decks = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let deck = rules::parse_deck(line)
            .map_err(|e| format!("{}, line {}: {e}", path.display(), i + 1))?;
        decks.push(deck);
    }
    if decks.is_empty() {
        return Err(format!("{}: no deck in the file", path.display()));
    }
    Ok(decks)
}

/// A card played, for the record.
#[derive(Clone, Debug, Serialize)]
pub struct Play {
    trick: u32,
    by: Side,
    card: u8,
}

/// A finished trick, for the record.
#[derive(Clone, Debug, Serialize)]
struct TrickRecord {
    winner: Side,
    points: u8,
    cards: u8,
}

#[derive(Serialize)]
struct MatchRecord<'a> {
    game: &'static str,
    index: u64,
    seed: u64,
    /// The run's fingerprint: the player's command and any deal file.
    run: &'a str,
    deck: &'a [u8],
    plays: &'a [Play],
    tricks: &'a [TrickRecord],
    score: Score,
    outcome: &'static str,
    #[serde(flatten)]
    verdict: Verdict,
    micros: &'a [u64],
    #[serde(skip_serializing_if = "Option::is_none")]
    startup_micros: Option<u64>,
    /// What the player's processes used during the match.
    #[serde(flatten)]
    usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stderr: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stderr_truncated: bool,
    time: String,
    referee: &'static str,
}

#[derive(Clone, Copy, Serialize)]
struct Score {
    computer: u8,
    player: u8,
}

#[derive(Serialize)]
struct ErrorRecord {
    kind: &'static str,
    trick: u32,
    message: String,
}

/// What went wrong with the player during a match.
#[derive(Debug)]
enum Failure {
    Bot(BotError),
    /// No reply came: the error, and what the referee was waiting for.
    NoReply {
        error: BotError,
        awaited: &'static str,
    },
    Unparsable {
        text: String,
        why: String,
    },
    Illegal {
        text: String,
        why: Illegal,
    },
}

impl Failure {
    fn verdict(&self) -> Verdict {
        match self {
            Failure::Bot(error) | Failure::NoReply { error, .. } => Verdict::from(error),
            _ => Verdict::of(outcome::Status::Incorrect),
        }
    }

    /// A move that timed out counts in move statistics as the time waited.
    fn waited_micros(&self) -> Option<u64> {
        match self {
            // A start-up that timed out is not a move.
            Failure::NoReply {
                error: BotError::Timeout { limit, phase, .. },
                ..
            } if *phase != outcome::Phase::Startup => {
                Some(u64::try_from(limit.as_micros()).unwrap_or(u64::MAX))
            }
            _ => None,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Failure::Bot(e) | Failure::NoReply { error: e, .. } => e.kind(),
            Failure::Unparsable { .. } => "unparsable",
            Failure::Illegal {
                why: Illegal::NotInHand(_),
                ..
            } => "not_in_hand",
            Failure::Illegal {
                why: Illegal::EndNotAllowed,
                ..
            } => "end_not_allowed",
            Failure::Illegal { .. } => "continuation_not_allowed",
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Bot(e) => write!(f, "the player {e}"),
            Failure::NoReply { error, awaited } => {
                write!(
                    f,
                    "the player {error}; the referee was waiting for {awaited}"
                )
            }
            Failure::Unparsable { text, why } => {
                write!(f, "the player sent {:?}: {why}", cut(text))
            }
            Failure::Illegal { text, why } => write!(f, "the player sent {:?}: {why}", cut(text)),
        }
    }
}

/// The run's seed, and with `--resume` which matches the results file
/// already holds for this run (by index: whether the player won). Matches
/// that ended with the player's failure are played again.
fn resume(config: &SepticaConfig, fingerprint: &str) -> Result<(u64, HashMap<u64, bool>), String> {
    let mut done = HashMap::new();
    let results = config.results.as_deref();
    let Some((path, stored)) =
        record::resumed(config.resume, results, "septica", fingerprint, "matches")?
    else {
        return Ok((config.seed.unwrap_or_else(fresh_seed), done));
    };
    let stored: Vec<serde_json::Value> = stored
        .into_iter()
        .filter(|r| r["outcome"] == "player" || r["outcome"] == "computer")
        .collect();
    let seed = match (config.seed, stored.first().and_then(|r| r["seed"].as_u64())) {
        (Some(seed), _) => seed,
        (None, Some(seed)) => seed,
        (None, None) => fresh_seed(),
    };
    for r in stored.iter().filter(|r| r["seed"].as_u64() == Some(seed)) {
        if let Some(index) = r["index"].as_u64() {
            done.insert(index, r["outcome"] == "player");
        }
    }
    eprintln!(
        "referee septica: resuming: {} match(es) of this run already in {}",
        done.len(),
        path.display()
    );
    Ok((seed, done))
}

fn cut(text: &str) -> &str {
    text.char_indices()
        .nth(100)
        .map_or(text, |(i, _)| &text[..i])
}

/// One match between the computer and the player.
struct Match<'a> {
    bot: &'a mut Bot,
    table: Table,
    deck: &'a [u8],
    rng: SplitMix64,
    timer: Timer,
    /// Messages to the player not yet sent: they go in one write when the
    /// player is next to move, or at the end.
    outbox: String,
    trick: u32,
    plays: Vec<Play>,
    tricks: Vec<TrickRecord>,
    micros: Vec<u64>,
    /// The player process's first reply, if it came in this match.
    startup_micros: Option<u64>,
    transcript: Option<&'a mut io::BufWriter<io::Stdout>>,
}

impl<'a> Match<'a> {
    /// A match on `deck` against `bot`, the computer drawing from the
    /// run's `seed` (see [`computer_rng`]).
    fn new(
        bot: &'a mut Bot,
        deck: &'a [u8],
        seed: u64,
        time: MoveLimits,
        transcript: Option<&'a mut io::BufWriter<io::Stdout>>,
    ) -> Self {
        Match {
            bot,
            table: Table::deal(deck),
            deck,
            rng: computer_rng(seed, deck),
            timer: Timer::new(time),
            outbox: String::new(),
            trick: 0,
            plays: Vec::new(),
            tricks: Vec::new(),
            micros: Vec::new(),
            startup_micros: None,
            transcript,
        }
    }

    /// Plays the match to the end; `Err` when the player fails.
    async fn play(&mut self) -> Result<(), Failure> {
        protocol::hand_line(&self.deck[..4], &mut self.outbox);
        self.trick = 1;
        loop {
            match self.table.phase {
                Phase::Over => {
                    let (c, p) = (self.table.points[0], self.table.points[1]);
                    protocol::end_line(c, p, &mut self.outbox);
                    return self.flush().await;
                }
                Phase::Lead(Side::Computer)
                | Phase::Answer(Side::Computer)
                | Phase::Decide(Side::Computer) => {
                    let choice = computer::choose(&self.table);
                    let action = choice.pick(&mut self.rng).map_or(Action::End, Action::Card);
                    self.act(Side::Computer, action);
                }
                _ => {
                    let action = self.player_turn().await?;
                    self.act(Side::Player, action);
                }
            }
        }
    }

    /// Sends what is waiting and reads the player's command.
    async fn player_turn(&mut self) -> Result<Action, Failure> {
        self.flush().await?;
        let allowance = self.bot.startup_allowance();
        let deadline = self.bot.reply_deadline(self.timer.limit());
        let awaited = awaited(self.table.phase);
        let reply = match self.bot.recv_line(deadline, None).await {
            Ok(reply) => reply,
            Err(error) => {
                let error = self.timer.classify(error);
                return Err(Failure::NoReply { error, awaited });
            }
        };
        self.timer.charge(reply.elapsed, allowance);
        let micros = u64::try_from(reply.elapsed.as_micros()).unwrap_or(u64::MAX);
        if reply.first {
            self.startup_micros = Some(micros);
        } else {
            self.micros.push(micros);
        }
        let text = reply.text.to_owned();
        if let Some(out) = self.transcript.as_mut() {
            let _ = writeln!(out, "  player:   {text}");
        }
        let action = protocol::parse_command(&text).map_err(|why| Failure::Unparsable {
            text: text.clone(),
            why,
        })?;
        self.table
            .check(Side::Player, action)
            .map_err(|why| Failure::Illegal { text, why })?;
        Ok(action)
    }

    /// Applies a legal action and queues what the player must be told.
    fn act(&mut self, side: Side, action: Action) {
        if let Action::Card(card) = action {
            self.plays.push(Play {
                trick: self.trick,
                by: side,
                card,
            });
            if side == Side::Computer {
                let _ = writeln!(self.outbox, "{card}");
            }
        }
        let cards_in_trick = self.table.trick_cards;
        let Some(end) = self.table.apply(side, action, self.deck) else {
            return;
        };
        self.tricks.push(TrickRecord {
            winner: end.winner,
            points: end.points,
            cards: cards_in_trick,
        });
        self.trick += 1;
        if self.table.phase != Phase::Over {
            protocol::draw_line(end.winner, &end.drawn[1], &mut self.outbox);
        }
    }

    /// Writes the queued messages in one go.
    async fn flush(&mut self) -> Result<(), Failure> {
        if self.outbox.is_empty() {
            return Ok(());
        }
        if let Some(out) = self.transcript.as_mut() {
            for line in self.outbox.lines() {
                let _ = writeln!(out, "  computer: {line}");
            }
            let _ = out.flush();
        }
        let sent = self
            .bot
            .send_within(self.outbox.as_bytes(), self.timer.limit())
            .await;
        self.outbox.clear();
        sent.map_err(Failure::Bot)
    }
}

/// How a match ended: `player` or `computer` won, or the player failed
/// (its status's name). A command that timed out counts in `micros` as the
/// time waited.
fn settle(
    result: &Result<(), Failure>,
    table: &Table,
    micros: &mut Vec<u64>,
) -> (&'static str, Verdict) {
    match result {
        Ok(()) if table.player_wins() => ("player", Verdict::OK),
        Ok(()) => ("computer", Verdict::OK),
        Err(failure) => {
            micros.extend(failure.waited_micros());
            let verdict = failure.verdict();
            (verdict.status.name(), verdict)
        }
    }
}

/// What the player is asked for in `phase`, for messages.
fn awaited(phase: Phase) -> &'static str {
    match phase {
        Phase::Lead(_) => "its card to lead the trick",
        Phase::Answer(_) => "its card answering the computer's",
        Phase::Decide(_) => {
            "its decision as the trick's leader: a cutting card to continue it, or 0 to end it"
        }
        Phase::Over => "nothing (the match is over)",
    }
}

/// Plays match `index` of a run with `seed` against a fresh `player`, for
/// tournaments and CI runs: how it went (its outcome `player`, `computer`,
/// or the failure's status name; every card played), and the points of
/// (computer, player).
pub async fn play_single(
    player: &BotSpec,
    limits: BotLimits,
    time: MoveLimits,
    seed: u64,
    index: u64,
) -> Result<(Single<Play>, [u8; 2]), crate::bot::SpawnError> {
    let mut bot = Bot::spawn(player, limits)?;
    let deck = shuffled_deck(seed, index);
    let mut game = Match::new(&mut bot, &deck, seed, time, None);
    let result = game.play().await;
    let Match {
        table,
        trick,
        mut micros,
        startup_micros,
        plays,
        ..
    } = game;
    let (outcome, verdict) = settle(&result, &table, &mut micros);
    let error = result
        .err()
        .map(|failure| format!("trick {trick}: {}: {failure}", verdict.status.words()));
    let single = Single {
        outcome,
        verdict,
        error,
        micros,
        startup_micros,
        stderr: String::new(),
        plays,
        usage: Usage::default(),
    }
    .ended(&mut bot)
    .await;
    Ok((single, table.points))
}

/// A run's player, records and plan, once started.
struct Session {
    bot: Bot,
    records: Option<Records>,
    /// The decks of `--deal-file`, if given; shuffled from `seed` if not.
    decks: Option<Vec<Vec<u8>>>,
    /// The run's fingerprint: see [`fingerprint`].
    fingerprint: String,
    seed: u64,
    /// With `--resume`, the matches already recorded: whether each was won.
    done: HashMap<u64, bool>,
    stderr_mark: u64,
    usage_mark: UsageMark,
}

/// A match played, with what its record and report need.
struct Played {
    deck: Vec<u8>,
    plays: Vec<Play>,
    tricks: Vec<TrickRecord>,
    micros: Vec<u64>,
    startup_micros: Option<u64>,
    score: Score,
    outcome: &'static str,
    verdict: Verdict,
    error: Option<ErrorRecord>,
}

/// Identifies a run, so that `--resume` takes only its matches: the
/// player's command and any deal file's decks.
fn fingerprint(config: &SepticaConfig, decks: Option<&Vec<Vec<u8>>>) -> String {
    let mut parts = vec!["septica".to_string()];
    parts.push(config.player.program.to_string_lossy().into_owned());
    parts.extend(
        config
            .player
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned()),
    );
    for deck in decks.into_iter().flatten() {
        parts.push(format!("{deck:?}"));
    }
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    record::fingerprint(&refs)
}

impl Session {
    /// Reads the deal file, opens the results, starts the player and
    /// finds what `--resume` skips; `Err` is a usage error's message.
    fn start(config: &SepticaConfig) -> Result<Session, String> {
        let decks = config
            .deal_file
            .as_deref()
            .map(read_deal_file)
            .transpose()?;
        let records = config
            .results
            .as_deref()
            .map(Records::open)
            .transpose()
            .map_err(|e| e.to_string())?;
        let bot = Bot::spawn(&config.player, config.limits)
            .map_err(|e| format!("cannot start the player: {e}"))?;
        let fingerprint = fingerprint(config, decks.as_ref());
        let (seed, done) = resume(config, &fingerprint)?;
        Ok(Session {
            bot,
            records,
            decks,
            fingerprint,
            seed,
            done,
            stderr_mark: 0,
            usage_mark: UsageMark::default(),
        })
    }

    fn matches(&self, config: &SepticaConfig) -> u64 {
        self.decks
            .as_ref()
            .map_or(config.matches, |d| d.len() as u64)
    }

    /// Plays match `index` (from 0); a player that failed is killed.
    async fn play(
        &mut self,
        config: &SepticaConfig,
        index: u64,
        out: &mut io::BufWriter<io::Stdout>,
    ) -> Played {
        let deck = match &self.decks {
            Some(decks) => decks[index as usize].clone(),
            None => shuffled_deck(self.seed, index),
        };
        debug_assert_eq!(deck.len(), DECK);
        if config.transcript {
            let _ = writeln!(out, "match {}", index + 1);
        }
        let transcript = config.transcript.then_some(out);
        let mut game = Match::new(&mut self.bot, &deck, self.seed, config.time, transcript);
        let result = game.play().await;
        let Match {
            table,
            trick,
            plays,
            tricks,
            mut micros,
            startup_micros,
            ..
        } = game;
        let (outcome, verdict) = settle(&result, &table, &mut micros);
        let error = match result {
            Ok(()) => None,
            Err(failure) => {
                if let Err(e) = self.bot.kill().await {
                    tracing::warn!("reaping the player: {e}");
                }
                let message = format!(
                    "match {}, trick {trick}: {}: {failure}",
                    index + 1,
                    verdict.status.words()
                );
                Some(ErrorRecord {
                    kind: failure.kind(),
                    trick,
                    message,
                })
            }
        };
        Played {
            deck,
            plays,
            tricks,
            micros,
            startup_micros,
            score: Score {
                computer: table.points[0],
                player: table.points[1],
            },
            outcome,
            verdict,
            error,
        }
    }

    /// Appends the record of match `index` (from 0), with the player's
    /// stderr and usage since the last one, when there is a results file.
    fn record(&mut self, index: u64, played: &Played) -> Result<(), record::RecordError> {
        let Some(records) = self.records.as_mut() else {
            return Ok(());
        };
        let (stderr, stderr_truncated) = self.bot.stderr_since(&mut self.stderr_mark);
        let record = MatchRecord {
            game: "septica",
            index: index + 1,
            seed: self.seed,
            run: &self.fingerprint,
            deck: &played.deck,
            plays: &played.plays,
            tricks: &played.tricks,
            score: played.score,
            outcome: played.outcome,
            verdict: played.verdict,
            micros: &played.micros,
            startup_micros: played.startup_micros,
            usage: self.bot.usage_since(&mut self.usage_mark),
            error: played.error.as_ref(),
            stderr,
            stderr_truncated,
            time: record::timestamp(),
            referee: record::REFEREE_VERSION,
        };
        records.append(&record)
    }
}

/// Runs `referee septica`.
pub async fn run(config: &SepticaConfig) -> Status {
    let mut session = match Session::start(config) {
        Ok(session) => session,
        Err(e) => {
            eprintln!("referee septica: {e}");
            return Status::Usage;
        }
    };
    let matches = session.matches(config);
    let need = config.need_of(matches);
    let mut out = io::BufWriter::new(io::stdout());
    let _ = writeln!(
        out,
        "septica: {matches} match{}, {need} win{} needed, seed {}",
        if matches == 1 { "" } else { "es" },
        if need == 1 { "" } else { "s" },
        session.seed
    );
    let _ = out.flush();
    let mut wins = 0u64;
    for index in 0..matches {
        if let Some(&won) = session.done.get(&(index + 1)) {
            wins += u64::from(won);
            continue;
        }
        let played = session.play(config, index, &mut out).await;
        wins += u64::from(played.outcome == "player");
        if let Err(e) = session.record(index, &played) {
            eprintln!("referee septica: {e}");
            let _ = session.bot.kill().await;
            return Status::Io;
        }
        if let Some(error) = &played.error {
            let _ = crate::games::report_fault(&mut out, "septica", &session.bot, &error.message);
            let _ = writeln!(
                out,
                "septica: stopped after {index} complete match{}, {wins} won",
                if index == 1 { "" } else { "es" }
            );
            return Status::from(played.verdict.status);
        }
        if config.transcript {
            let _ = writeln!(
                out,
                "  result: computer {} - player {}: {} wins",
                played.score.computer, played.score.player, played.outcome
            );
        }
    }
    let status = end_player(config, &mut session.bot, &mut out).await;
    if let Some(Err(e)) = session.records.map(Records::finish) {
        eprintln!("referee septica: {e}");
        return Status::Io;
    }
    report_wins(&mut out, config, wins, matches, status)
}

/// Closes the player's input after the last match: it must exit within
/// the grace period.
async fn end_player(config: &SepticaConfig, bot: &mut Bot, out: &mut impl Write) -> Status {
    match bot.shutdown(None).await {
        Ok(finished) if !finished.exited_in_grace => {
            let message = format!(
                "timeout: the player did not exit within {} after its input was closed",
                crate::units::human_duration(config.limits.grace)
            );
            let _ = writeln!(out, "septica: {message}");
            eprintln!("referee septica: {message}");
            Status::Crashed
        }
        Ok(_) => Status::Pass,
        Err(e) => {
            eprintln!("referee septica: ending the player: {e}");
            Status::Internal
        }
    }
}

/// The summary line, and the run's status: `status` (the player's end)
/// unless that passed, then the verdict.
fn report_wins(
    out: &mut impl Write,
    config: &SepticaConfig,
    wins: u64,
    matches: u64,
    status: Status,
) -> Status {
    let (low, high) = wilson95(wins, matches);
    let need = config.need_of(matches);
    let accepted = wins >= need;
    let _ = writeln!(
        out,
        "septica: {wins} of {matches} matches won ({:.1}%, 95% CI {:.1}%-{:.1}%); {} needed: {}",
        100.0 * wins as f64 / matches.max(1) as f64,
        100.0 * low,
        100.0 * high,
        need,
        if accepted { "ACCEPTED" } else { "REJECTED" }
    );
    let _ = out.flush();
    match status {
        Status::Pass if !accepted => Status::Fail,
        status => status,
    }
}
