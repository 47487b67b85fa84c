//! One test case: the validator and the program started, the relay
//! between them, and the case ended and ruled on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;

use super::feedback::{read_feedback, take_next_pass};
use super::limits::CaseLimits;
use super::package::Case;
use super::validator::{ValidatorSpec, start_validator};
use super::verdict::{Ends, Judged, Side, Stop, Verdict, rule, validator_late, with_judge_error};
use super::{InteractiveConfig, MAX_OUTPUT};
use crate::bot::{Bot, BotError, BotSpec, Ended, MemoryOverrun, UsageMark, later};

/// How often a silent program's CPU time is looked at.
const CPU_POLL: Duration = Duration::from_millis(20);

/// What happened next on one side.
pub(super) enum Event {
    Line(Vec<u8>),
    Failed(BotError),
    Exited(Result<Ended, BotError>),
}

/// The next line of `bot`'s output while it is open; once it is closed,
/// the bot's exit.
pub(super) async fn next_event(bot: &mut Bot, output_open: bool, deadline: Instant) -> Event {
    if output_open {
        match bot.recv_line(deadline, None).await {
            Ok(reply) => {
                let mut line = Vec::with_capacity(reply.text.len() + 1);
                line.extend_from_slice(reply.text.as_bytes());
                line.push(b'\n');
                Event::Line(line)
            }
            Err(e) => Event::Failed(e),
        }
    } else {
        Event::Exited(bot.wait_exit(deadline).await)
    }
}

/// One side's state in the relay.
#[derive(Default)]
pub(super) struct State {
    output_closed: bool,
    input_closed: bool,
    ended: Option<Ended>,
    ended_at: Option<Instant>,
}

impl State {
    fn done(&self) -> bool {
        self.output_closed && self.ended.is_some()
    }

    fn end(&mut self, ended: Ended, first: &mut Option<Side>, side: Side, other_ended: bool) {
        if self.ended.is_none() {
            self.ended = Some(ended);
            self.ended_at = Some(Instant::now());
            if !other_ended {
                first.get_or_insert(side);
            }
        }
    }
}

/// What judging a test case needs besides the case.
pub struct Setup<'a> {
    pub config: &'a InteractiveConfig,
    pub program: &'a BotSpec,
    pub limits: &'a CaseLimits,
    pub validator: &'a ValidatorSpec,
    /// A multi-pass problem's most passes; `None` for one pass.
    pub passes: Option<u32>,
}

/// Judges one test case: starts the validator and the program, relays
/// between them, and rules; in a multi-pass problem, again on each
/// `nextpass.in` the validator writes, while it accepts. An `Err` is a
/// program or validator that cannot be started, which ends the run.
pub async fn judge(setup: &Setup<'_>, case: &Case, feedback_dir: &Path) -> Result<Judged, String> {
    crate::interrupt::make_dir_within(feedback_dir)
        .map_err(|e| format!("feedback directory {}: {e}", feedback_dir.display()))?;
    let mut pass_case = case.clone();
    let mut so_far: Option<Judged> = None;
    for pass in 1.. {
        let mut relay = Relay::start(setup, &pass_case, feedback_dir).await?;
        let stop = relay.run().await;
        let mut judged = relay.finish(feedback_dir, stop).await;
        judged.passes = pass;
        if let Some(before) = so_far.take() {
            judged.add_earlier(before);
        }
        let Some(most) = setup.passes else {
            return Ok(judged);
        };
        if judged.verdict != Verdict::Accepted {
            return Ok(judged);
        }
        let next = match take_next_pass(feedback_dir) {
            Ok(None) => return Ok(judged),
            Ok(Some(_)) if pass >= most => Err(format!(
                "the validator wrote nextpass.in on pass {pass}, the last \
                 (limits.validation_passes: {most})"
            )),
            Ok(Some(input)) => next_pass_input(feedback_dir, pass + 1, &input),
            Err(e) => Err(e),
        };
        match next {
            Ok(input) => pass_case.input = input,
            Err(why) => {
                judged.verdict = Verdict::JudgeError(why);
                return Ok(judged);
            }
        }
        so_far = Some(judged);
    }
    unreachable!("the passes end by returning")
}

/// Writes the input of pass `pass` beside the feedback directory.
fn next_pass_input(feedback_dir: &Path, pass: u32, input: &[u8]) -> Result<PathBuf, String> {
    let path = feedback_dir.with_extension(format!("pass{pass}.in"));
    std::fs::write(&path, input).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// One test case under way: both bots, how each side stands, the
/// deadlines, and what the relay has counted and seen so far.
pub(super) struct Relay<'a> {
    config: &'a InteractiveConfig,
    limits: &'a CaseLimits,
    p_bot: Bot,
    v_bot: Bot,
    p: State,
    v: State,
    /// When the program started: its time is counted from here.
    p_start: Instant,
    /// The wall-clock cap on the program (its CPU time is polled).
    p_deadline: Instant,
    /// Counted from the case's start, before the program's.
    v_deadline: Instant,
    /// The side that ended while the other was still running.
    first: Option<Side>,
    /// The program wrote to a validator that had gone (see `break_pipe`).
    pipe_closed: bool,
    /// Bytes of the program's output relayed, against `MAX_OUTPUT`.
    relayed: usize,
}

impl<'a> Relay<'a> {
    /// Starts the validator, then the program (killing the validator if the
    /// program cannot start), and sets both deadlines.
    async fn start(
        setup: &Setup<'a>,
        case: &Case,
        feedback_dir: &Path,
    ) -> Result<Relay<'a>, String> {
        let (config, limits) = (setup.config, setup.limits);
        let start = Instant::now();
        let v_deadline = later(start, config.validator_timeout.max(limits.wall));
        let mut v_bot = start_validator(config, setup.validator, case, feedback_dir)?;
        // Before the program is started: it may run before `spawn`
        // returns, and its CPU time counts from its start, which its wall
        // time must include (CPU time <= wall time x threads).
        let p_start = Instant::now();
        let p_bot = match Bot::spawn(setup.program, config.limits) {
            Ok(bot) => bot,
            Err(e) => {
                let _ = v_bot.kill().await;
                return Err(format!("cannot start the program: {e}"));
            }
        };
        Ok(Relay {
            config,
            limits,
            p_bot,
            v_bot,
            p: State::default(),
            v: State::default(),
            p_start,
            p_deadline: later(p_start, limits.wall),
            v_deadline,
            first: None,
            pipe_closed: false,
            relayed: 0,
        })
    }

    /// Relays until both sides have ended, or until something stops the
    /// case early; gives that stop.
    async fn run(&mut self) -> Option<Stop> {
        while !(self.p.done() && self.v.done()) {
            if let Some(stop) = self.overdue() {
                return Some(stop);
            }
            if let Some(stop) = self.relay_step().await {
                return Some(stop);
            }
        }
        None
    }

    /// A side past its deadline. A program that floods its output is never
    /// waited for, so its reads never time out: its time is checked here
    /// too, and the same for a validator that floods its output once the
    /// program has ended.
    fn overdue(&self) -> Option<Stop> {
        if !self.p.done()
            && (Instant::now() >= self.p_deadline || self.p_bot.cpu_time() > self.limits.time.value)
        {
            return Some(Stop::TimeLimit);
        }
        if !self.v.done() && Instant::now() >= self.v_deadline {
            return Some(self.on_timeout(Side::Validator));
        }
        None
    }

    /// Waits for whichever side moves first and handles that.
    async fn relay_step(&mut self) -> Option<Stop> {
        let (side, event) = tokio::select! {
            event = next_event(&mut self.p_bot, !self.p.output_closed, self.p_deadline),
                if !self.p.done() => (Side::Program, event),
            event = next_event(&mut self.v_bot, !self.v.output_closed, self.v_deadline),
                if !self.v.done() => (Side::Validator, event),
            // A program that computes, silent, is stopped by its CPU time.
            () = tokio::time::sleep(CPU_POLL), if !self.p.done() => return None,
        };
        self.on_event(side, event).await
    }

    /// What `side` did: a line, the end of its output, its exit, or a
    /// failure (the program's output that cannot be relayed is its own).
    async fn on_event(&mut self, side: Side, event: Event) -> Option<Stop> {
        match event {
            Event::Line(line) => match side {
                Side::Program => self.on_program_line(line).await,
                Side::Validator => self.on_validator_line(line).await,
            },
            Event::Failed(BotError::Exited {
                ended,
                unterminated,
            }) => {
                self.on_exit(side, ended, unterminated).await;
                None
            }
            Event::Failed(BotError::ClosedOutput) => {
                self.on_closed_output(side);
                None
            }
            Event::Failed(BotError::Timeout { .. })
            | Event::Exited(Err(BotError::Timeout { .. })) => Some(self.on_timeout(side)),
            Event::Failed(BotError::MemoryLimit(overrun))
            | Event::Exited(Err(BotError::MemoryLimit(overrun)))
                if side == Side::Program =>
            {
                Some(Stop::Memory(overrun))
            }
            Event::Failed(
                e @ (BotError::LineTooLong { .. }
                | BotError::InvalidUtf8 { .. }
                | BotError::OutputTooLong { .. }),
            ) if side == Side::Program => Some(Stop::BadOutput(format!("the program {e}"))),
            Event::Failed(e) | Event::Exited(Err(e)) => Some(Stop::Judge(match side {
                Side::Program => format!("relaying the program's output: {e}"),
                Side::Validator => format!("the validator's output: {e}"),
            })),
            Event::Exited(Ok(ended)) => {
                self.end(side, ended);
                None
            }
        }
    }

    /// Relays a line of the program's to the validator, within the cap on
    /// the program's output; to a validator that has gone, breaks the pipe.
    async fn on_program_line(&mut self, line: Vec<u8>) -> Option<Stop> {
        if self.v.ended.is_some() || self.v.input_closed {
            self.break_pipe().await;
            return None;
        }
        self.relayed += line.len();
        if self.relayed > MAX_OUTPUT {
            return Some(Stop::BadOutput(format!(
                "the program wrote more than {MAX_OUTPUT} bytes"
            )));
        }
        self.forward(Side::Validator, &line).await
    }

    /// Relays a line of the validator's to the program. Lines for a program
    /// that has gone are dropped: the validator sees its input end and
    /// rules.
    async fn on_validator_line(&mut self, line: Vec<u8>) -> Option<Stop> {
        if self.p.ended.is_some() || self.p.input_closed {
            return None;
        }
        self.forward(Side::Program, &line).await
    }

    /// The program wrote to a validator that has gone. Through a direct
    /// pipe this write would have raised SIGPIPE: the program ends here,
    /// the validator rules.
    async fn break_pipe(&mut self) {
        self.pipe_closed = true;
        self.p.output_closed = true;
        if let Ok(finished) = self.p_bot.kill().await {
            self.end(Side::Program, finished.ended);
        }
        self.v_bot.close_input();
    }

    /// Writes `line` to side `to`, by the program's deadline. A side that
    /// no longer reads is noted, not a failure; a write that times out is
    /// the program's time limit.
    async fn forward(&mut self, to: Side, line: &[u8]) -> Option<Stop> {
        let deadline = self.p_deadline;
        match self.bot(to).send(line, deadline).await {
            Ok(()) => None,
            Err(BotError::ClosedInput) => {
                self.state(to).input_closed = true;
                None
            }
            Err(BotError::Exited { ended, .. }) => {
                self.state(to).input_closed = true;
                self.end(to, ended);
                None
            }
            Err(BotError::WriteTimeout { .. }) => Some(Stop::TimeLimit),
            Err(e) => Some(Stop::Judge(match to {
                Side::Program => format!("relaying to the program: {e}"),
                Side::Validator => format!("relaying to the validator: {e}"),
            })),
        }
    }

    /// `side` exited while its output was open. Its last bytes, without a
    /// newline, still go through to the other side while that one reads;
    /// then the other side's input ends.
    async fn on_exit(&mut self, side: Side, ended: Ended, unterminated: Option<String>) {
        let other = side.other();
        if let Some(text) = unterminated
            && self.state(other).ended.is_none()
            && !self.state(other).input_closed
        {
            let deadline = self.p_deadline;
            let _ = self.bot(other).send(text.as_bytes(), deadline).await;
        }
        self.state(side).output_closed = true;
        self.end(side, ended);
        self.bot(other).close_input();
    }

    /// `side` closed its output: the other side's input ends too.
    fn on_closed_output(&mut self, side: Side) {
        self.state(side).output_closed = true;
        self.bot(side.other()).close_input();
    }

    /// The stop for `side` out of time: the program's time limit, unless
    /// the validator outstays its own time after the program has ended.
    fn on_timeout(&self, side: Side) -> Stop {
        match side {
            Side::Validator if self.p.done() => {
                validator_late(self.config.validator_timeout.max(self.limits.wall))
            }
            _ => Stop::TimeLimit,
        }
    }

    /// Notes how `side` ended, and whether it ended first.
    fn end(&mut self, side: Side, ended: Ended) {
        let (this, other) = match side {
            Side::Program => (&mut self.p, &self.v),
            Side::Validator => (&mut self.v, &self.p),
        };
        this.end(ended, &mut self.first, side, other.ended.is_some());
    }

    /// The bot of `side`.
    fn bot(&mut self, side: Side) -> &mut Bot {
        match side {
            Side::Program => &mut self.p_bot,
            Side::Validator => &mut self.v_bot,
        }
    }

    /// How `side` stands in the relay.
    fn state(&mut self, side: Side) -> &mut State {
        match side {
            Side::Program => &mut self.p,
            Side::Validator => &mut self.v,
        }
    }

    /// Ends the case on what the relay saw (see [`finish_case`]).
    async fn finish(self, feedback_dir: &Path, stop: Option<Stop>) -> Judged {
        let span = Span {
            start: self.p_start,
            ended: self.p.ended_at,
        };
        let ends = Ends {
            program: self.p.ended,
            validator: self.v.ended,
            first: self.first,
            pipe_closed: self.pipe_closed,
        };
        let limit = self.limits.time.value;
        finish_case(
            feedback_dir,
            self.v_bot,
            self.p_bot,
            ends,
            stop,
            span,
            limit,
        )
        .await
    }
}

/// When the program started, and when it was seen to end, if it ended
/// of itself.
pub(super) struct Span {
    pub(super) start: Instant,
    pub(super) ended: Option<Instant>,
}

/// Ends a test case: kills what is left of both sides, reads the feedback
/// files and stderr, and rules on the ends the relay saw (a side killed
/// here ended because the referee ended it, not of itself).
pub(super) async fn finish_case(
    feedback_dir: &Path,
    mut v_bot: Bot,
    mut p_bot: Bot,
    relayed: Ends,
    stop: Option<Stop>,
    span: Span,
    cpu_limit: Duration,
) -> Judged {
    let (ends, overrun) = kill_both(&mut v_bot, &mut p_bot, relayed).await;
    // A program killed here ran until the kill: its wall time too.
    let time = span.ended.unwrap_or_else(Instant::now) - span.start;
    let feedback = read_feedback(feedback_dir).await;
    let usage = p_bot.usage_since(&mut UsageMark::default());
    // A program that ended between two looks at its CPU time may still
    // have used more than its limit.
    let stop = match stop {
        None if usage.cpu_known() > cpu_limit => Some(Stop::TimeLimit),
        stop => stop,
    };
    Judged {
        verdict: with_judge_error(
            rule(stop, &relayed, overrun, &feedback.judge_message),
            &feedback.judge_error,
        ),
        time,
        exit: ends.program,
        validator_exit: ends.validator,
        first_ended: ends.first,
        pipe_closed: ends.pipe_closed,
        judge_message: feedback.judge_message,
        team_message: feedback.team_message,
        judge_error: feedback.judge_error,
        feedback_notes: feedback.notes,
        stderr: p_bot.stderr(|t| t.last_lines(20).join("\n")),
        validator_stderr: v_bot.stderr(|t| t.last_lines(20).join("\n")),
        usage,
        passes: 1,
    }
}

/// Kills what is left of both sides, the validator first, so that it does
/// not see the program's end and rule on it: both are reaped by now, or are
/// killed here (a time limit, a judge error). Gives the ends with the kills
/// added, and the program's memory overrun, if it was killed for that.
pub(super) async fn kill_both(
    v_bot: &mut Bot,
    p_bot: &mut Bot,
    mut ends: Ends,
) -> (Ends, Option<MemoryOverrun>) {
    if let Ok(finished) = v_bot.kill().await {
        ends.validator.get_or_insert(finished.ended);
    }
    let mut overrun = None;
    if let Ok(finished) = p_bot.kill().await {
        ends.program.get_or_insert(finished.ended);
        overrun = finished.memory_overrun;
    }
    (ends, overrun)
}
