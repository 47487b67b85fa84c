//! Aces Up: the rules engine, and `referee acesup`, which judges a
//! submission by comparing its output with the engine's, deck by deck.
//! Statement: `../shared/seeds/003_2c4c08e84b2b6906.txt`; the project's
//! account of the rules and the output format: `docs/acesup.md`.

pub mod deck;
pub mod engine;
pub mod figures;

use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use futures_util::StreamExt;
use serde::Serialize;

use crate::bot::{Bot, BotError, BotLimits, BotSpec, Ended, Usage, UsageMark, later};
use crate::exit::Status;
use crate::outcome;
use crate::record::{self, Records};
use crate::rng::fresh_seed;
use engine::Card;
pub use figures::{Judging, Mode};

/// Most output accepted from a program for one deck; the right output is
/// under 10 KiB.
const MAX_OUTPUT: usize = 1 << 20;

/// Where the decks come from.
#[derive(Clone, Debug)]
pub enum Decks {
    File(PathBuf),
    Random { count: u64, seed: Option<u64> },
}

/// Everything `referee acesup` needs.
#[derive(Clone, Debug)]
pub struct JudgeConfig {
    pub program: BotSpec,
    pub limits: BotLimits,
    /// Per deck, from start to exit.
    pub timeout: Duration,
    pub decks: Decks,
    pub results: Option<PathBuf>,
}

/// The judgement of one deck.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    WrongAnswer {
        line: usize,
        expected: Option<String>,
        got: Option<String>,
    },
    /// Figures mode: a figure (None: one past the last) was wrong; `got`
    /// is said as the verdict shows it.
    WrongFigure {
        line: usize,
        figure: Option<String>,
        expected: String,
        got: String,
    },
    /// Output the judge could not take (too long, a huge line).
    BadOutput(String),
    TimeLimit,
    RuntimeError {
        ended: String,
    },
    /// Killed for holding more than `--limit-memory`; the message says how
    /// much.
    MemoryLimit(String),
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::WrongAnswer { .. } | Verdict::WrongFigure { .. } | Verdict::BadOutput(_) => {
                "wrong_answer"
            }
            Verdict::TimeLimit => "time_limit",
            Verdict::RuntimeError { .. } => "runtime_error",
            Verdict::MemoryLimit(_) => "memory_limit",
        }
    }

    /// The verdict in the shared taxonomy (`docs/results.md`): a run on a
    /// deck is one move, so TIME LIMIT is a move timeout.
    pub fn status(&self, exit: Option<Ended>) -> outcome::Verdict {
        match self {
            Verdict::Accepted => outcome::Verdict::OK,
            Verdict::WrongAnswer { .. } | Verdict::WrongFigure { .. } | Verdict::BadOutput(_) => {
                outcome::Verdict::of(outcome::Status::Incorrect)
            }
            Verdict::TimeLimit => outcome::Verdict::timeout(outcome::Phase::Move),
            Verdict::RuntimeError { .. } => exit.map_or(
                outcome::Verdict::of(outcome::Status::Crashed),
                outcome::Verdict::from,
            ),
            Verdict::MemoryLimit(_) => outcome::Verdict::limit(outcome::LimitKind::Memory),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |l: &Option<String>| match l {
            Some(text) => format!("{text:?}"),
            None => "the end of the output".into(),
        };
        match self {
            Verdict::Accepted => write!(f, "ACCEPTED"),
            Verdict::WrongAnswer {
                line,
                expected,
                got,
            } => write!(
                f,
                "WRONG ANSWER at line {line}: expected {}, got {}",
                quoted(expected),
                quoted(got)
            ),
            Verdict::WrongFigure {
                line,
                figure,
                expected,
                got,
            } => {
                write!(f, "WRONG ANSWER at line {line}: ")?;
                if let Some(figure) = figure {
                    write!(f, "{figure}: ")?;
                }
                write!(f, "expected {expected}, got {got}")
            }
            Verdict::BadOutput(why) => write!(f, "WRONG ANSWER: the program {why}"),
            Verdict::TimeLimit => write!(f, "TIME LIMIT"),
            Verdict::RuntimeError { ended } => write!(f, "RUNTIME ERROR: the program {ended}"),
            Verdict::MemoryLimit(why) => write!(f, "MEMORY LIMIT: the program {why}"),
        }
    }
}

/// Compares output lines with the expected text, line by line (trailing
/// spaces and `\r` ignored, as are blank lines at the very end).
pub fn compare(got: &[String], expected: &str) -> Verdict {
    figures::compare_kept(&figures::kept(got, &[]), expected)
}

#[derive(Serialize)]
struct DeckRecord<'a> {
    game: &'static str,
    index: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    deck: String,
    verdict: &'static str,
    #[serde(flatten)]
    status: outcome::Verdict,
    message: String,
    micros: u64,
    /// What the program's processes used on this deck.
    #[serde(flatten)]
    usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit: Option<Ended>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stderr: Option<&'a str>,
    time: String,
    referee: &'static str,
}

/// One run of the program on one deck, judged.
#[derive(Debug)]
pub struct DeckRun {
    pub verdict: Verdict,
    /// From the start of the program to the end of its output.
    pub elapsed: Duration,
    /// How it ended, when it finished its output.
    pub exit: Option<Ended>,
    /// Its last lines on standard error.
    pub stderr: String,
    /// What its processes used.
    pub usage: Usage,
}

/// Runs the program on one deck and judges it strictly.
pub async fn judge(
    config: &JudgeConfig,
    deck: &[Card; 52],
) -> Result<DeckRun, crate::bot::SpawnError> {
    judge_with(config, &Judging::default(), deck).await
}

/// [`judge`], with the output judged as `judging` says.
pub async fn judge_with(
    config: &JudgeConfig,
    judging: &Judging,
    deck: &[Card; 52],
) -> Result<DeckRun, crate::bot::SpawnError> {
    let mut bot = Bot::spawn(&config.program, config.limits)?;
    let started = tokio::time::Instant::now();
    let deadline = later(started, config.timeout);
    let input = deck::input_text(deck);
    // A program may stop reading early (and fail): what it printed and how
    // it ended still decide.
    let sent = bot.send(input.as_bytes(), deadline).await;
    bot.close_input();
    let output = match sent {
        Err(BotError::Timeout { .. } | BotError::WriteTimeout { .. }) => Err(BotError::Timeout {
            limit: config.timeout,
            waited: started.elapsed(),
            phase: outcome::Phase::Move,
            silent: true,
            at_memory_limit: bot.memory_at_limit(),
        }),
        _ => bot.read_to_end(deadline, MAX_OUTPUT).await,
    };
    // Only a program that finished its output is waited for.
    let ended = match &output {
        Ok(_) => Some(bot.wait_exit(deadline).await),
        Err(_) => None,
    };
    let elapsed = started.elapsed();
    // The time recorded is the time judged: a run seen to end after its
    // deadline is over its limit, however little it was over.
    let ended = match ended {
        Some(Ok(_)) if elapsed > config.timeout => Some(Err(BotError::Timeout {
            limit: config.timeout,
            waited: elapsed,
            phase: outcome::Phase::Move,
            silent: false,
            at_memory_limit: bot.memory_at_limit(),
        })),
        ended => ended,
    };
    let finished = bot.kill().await;
    let stderr = bot.stderr(|t| t.last_lines(20).join("\n"));
    let exit = ended.as_ref().and_then(|e| e.as_ref().ok().copied());
    let overrun = finished.ok().and_then(|f| f.memory_overrun);
    let verdict = match (output, ended) {
        // Killed for its memory: whatever it wrote was cut short.
        _ if let Some(overrun) = overrun => {
            Verdict::MemoryLimit(BotError::MemoryLimit(overrun).to_string())
        }
        (Err(BotError::Timeout { .. }), _) | (_, Some(Err(BotError::Timeout { .. }))) => {
            Verdict::TimeLimit
        }
        (Err(e), _) => Verdict::BadOutput(e.to_string()),
        (_, Some(Err(e))) => Verdict::RuntimeError {
            ended: e.to_string(),
        },
        (Ok(_), Some(Ok(ended))) if !ended.success() => Verdict::RuntimeError {
            ended: ended.to_string(),
        },
        (Ok(lines), _) => figures::judge_output(judging, &lines, deck),
    };
    Ok(DeckRun {
        verdict,
        elapsed,
        exit,
        stderr,
        usage: bot.usage_since(&mut UsageMark::default()),
    })
}

/// How `referee acesup` judges and when it stops (docs/acesup.md).
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub judging: Judging,
    /// Decks judged at once (at least 1).
    pub jobs: usize,
    /// Stop once this many decks were not accepted (`--fail-fast`: 1).
    pub max_failures: Option<u64>,
    /// Stop after this many TIME LIMITs in a row, in deck order (0: never).
    pub max_timeouts_in_a_row: u64,
}

/// The default of `--max-timeouts-in-a-row`.
pub const TIMEOUTS_IN_A_ROW: u64 = 10;

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            judging: Judging::default(),
            jobs: 1,
            max_failures: None,
            max_timeouts_in_a_row: TIMEOUTS_IN_A_ROW,
        }
    }
}

/// Runs `referee acesup`.
pub async fn run(config: &JudgeConfig, options: &RunOptions) -> Status {
    let (count, decks, seed, source) = match decks_of(config) {
        Ok(decks) => decks,
        Err(status) => return status,
    };
    let mut records = match config.results.as_deref().map(Records::open).transpose() {
        Ok(records) => records,
        Err(e) => {
            eprintln!("referee acesup: {e}");
            return Status::Usage;
        }
    };
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "acesup: {} deck{} ({source}), {} per deck",
        count,
        if count == 1 { "" } else { "s" },
        crate::units::human_duration(config.timeout)
    );
    let mut tally = DeckTally::default();
    let mut stopped = None;
    // Up to `jobs` decks run at once; their verdicts come out in deck
    // order. Dropping the stream kills the runs still in flight.
    let judging = &options.judging;
    let runs = futures_util::stream::iter(decks.enumerate())
        .map(|(i, deck)| async move { (i, deck, judge_with(config, judging, &deck).await) })
        .buffered(options.jobs.max(1));
    let mut runs = Box::pin(runs);
    while let Some((i, deck, judgement)) = runs.next().await {
        let run = match judgement {
            Ok(judged) => judged,
            Err(e) => return cannot_start(&e),
        };
        tally.count(&run.verdict);
        if let Some(records) = records.as_mut()
            && let Err(e) = records.append(&deck_record(i, seed, &deck, &run))
        {
            eprintln!("referee acesup: {e}");
            return Status::Io;
        }
        // Reported once recorded: a reader that stops at this line (`| head`)
        // finds the deck in the file.
        report_deck(&mut out, i, &run, config.timeout);
        stopped = tally.stopped(options);
        if stopped.is_some() {
            break;
        }
    }
    drop(runs);
    finish(&mut out, stopped, count, &tally, records)
}

/// Random decks are dealt one at a time: any count runs in little memory.
type DeckIter = Box<dyn Iterator<Item = [Card; 52]>>;

/// The decks to judge: how many, the decks, the seed of random ones, and
/// where they come from; a deck file that cannot be read is a usage error.
fn decks_of(config: &JudgeConfig) -> Result<(u64, DeckIter, Option<u64>, String), Status> {
    match &config.decks {
        Decks::File(path) => {
            let decks = std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|text| deck::read_deck_file(&text).map_err(|e| e.to_string()));
            match decks {
                Ok(decks) => Ok((
                    decks.len() as u64,
                    Box::new(decks.into_iter()),
                    None,
                    path.display().to_string(),
                )),
                Err(e) => {
                    eprintln!("referee acesup: {}: {e}", path.display());
                    Err(Status::Usage)
                }
            }
        }
        Decks::Random { count, seed } => {
            let seed = seed.unwrap_or_else(fresh_seed);
            let decks = (0..*count).map(move |i| deck::random_deck(seed, i));
            let source = format!("random decks, seed {seed}");
            Ok((*count, Box::new(decks), Some(seed), source))
        }
    }
}

/// The program could not be started: the referee's own resources failing
/// is not a usage error.
fn cannot_start(e: &crate::bot::SpawnError) -> Status {
    eprintln!("referee acesup: cannot start the program: {e}");
    match e.is_referees() {
        true => Status::Internal,
        false => Status::Usage,
    }
}

/// The verdicts so far, for the summary and for when to stop.
#[derive(Default)]
struct DeckTally {
    judged: u64,
    accepted: u64,
    failures: u64,
    timeouts_in_a_row: u64,
}

impl DeckTally {
    fn count(&mut self, verdict: &Verdict) {
        self.judged += 1;
        self.failures += u64::from(*verdict != Verdict::Accepted);
        self.timeouts_in_a_row = match verdict {
            Verdict::TimeLimit => self.timeouts_in_a_row + 1,
            _ => 0,
        };
        self.accepted += u64::from(*verdict == Verdict::Accepted);
    }

    /// Why the run stops here, if it does (`--fail-fast`, `--max-failures`,
    /// `--max-timeouts-in-a-row`).
    fn stopped(&self, options: &RunOptions) -> Option<String> {
        if options.max_failures.is_some_and(|max| self.failures >= max) {
            Some(match self.failures {
                1 => "the first deck not accepted".to_string(),
                n => format!("{n} decks not accepted"),
            })
        } else if options.max_timeouts_in_a_row > 0
            && self.timeouts_in_a_row >= options.max_timeouts_in_a_row
        {
            Some(format!("{} time limits in a row", self.timeouts_in_a_row))
        } else {
            None
        }
    }
}

/// Deck `i`'s line of the results file.
fn deck_record<'a>(
    i: usize,
    seed: Option<u64>,
    deck: &[Card; 52],
    run: &'a DeckRun,
) -> DeckRecord<'a> {
    DeckRecord {
        game: "acesup",
        index: i as u64 + 1,
        seed,
        deck: deck
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        verdict: run.verdict.name(),
        status: run.verdict.status(run.exit),
        message: run.verdict.to_string(),
        micros: u64::try_from(run.elapsed.as_micros()).unwrap_or(u64::MAX),
        usage: run.usage,
        exit: run.exit,
        stderr: (!run.stderr.is_empty()).then_some(run.stderr.as_str()),
        time: record::timestamp(),
        referee: record::REFEREE_VERSION,
    }
}

/// Deck `i`'s verdict on standard output, with the last lines of its
/// standard error when it failed at run time or over its memory.
fn report_deck(out: &mut impl Write, i: usize, run: &DeckRun, timeout: Duration) {
    let verdict = &run.verdict;
    let timing = match verdict {
        Verdict::TimeLimit => {
            format!(" ({} limit)", crate::units::human_duration(timeout))
        }
        _ => format!(" ({:.1}ms)", run.elapsed.as_secs_f64() * 1e3),
    };
    let _ = writeln!(out, "deck {}: {verdict}{timing}", i + 1);
    if matches!(
        verdict,
        Verdict::RuntimeError { .. } | Verdict::MemoryLimit(_)
    ) && !run.stderr.is_empty()
    {
        let lines: Vec<&str> = run.stderr.lines().collect();
        let last = &lines[lines.len().saturating_sub(5)..];
        let _ = write!(out, "{}", crate::text::quoted_lines(last.iter().copied()));
    }
}

/// The run's end: why it stopped early, the results file closed, the
/// summary, and the status.
fn finish(
    out: &mut impl Write,
    stopped: Option<String>,
    count: u64,
    tally: &DeckTally,
    records: Option<Records>,
) -> Status {
    if let Some(why) = stopped {
        let _ = writeln!(
            out,
            "acesup: stopped after {why}; {} deck{} not judged",
            count - tally.judged,
            if count - tally.judged == 1 { "" } else { "s" }
        );
    }
    if let Some(Err(e)) = records.map(Records::finish) {
        eprintln!("referee acesup: {e}");
        return Status::Io;
    }
    let accepted = tally.accepted;
    let _ = writeln!(out, "acesup: {accepted} of {count} decks accepted");
    if accepted == count {
        Status::Pass
    } else {
        Status::Fail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparing_outputs() {
        let expected = "a\nb\nc\n";
        let lines = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            compare(&lines(&["a", "b", "c"]), expected),
            Verdict::Accepted
        );
        assert_eq!(
            compare(&lines(&["a", "b ", "c\r", ""]), expected),
            Verdict::Accepted
        );
        assert_eq!(
            compare(&lines(&["a", "x", "c"]), expected),
            Verdict::WrongAnswer {
                line: 2,
                expected: Some("b".into()),
                got: Some("x".into())
            }
        );
        assert_eq!(
            compare(&lines(&["a", "b"]), expected),
            Verdict::WrongAnswer {
                line: 3,
                expected: Some("c".into()),
                got: None
            }
        );
        assert_eq!(
            compare(&lines(&["a", "b", "c", "d"]), expected).to_string(),
            "WRONG ANSWER at line 4: expected the end of the output, got \"d\""
        );
    }
}
