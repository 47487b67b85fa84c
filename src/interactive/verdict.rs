//! What a test case comes to: its verdict, and the rulings that decide it
//! when both sides fail (`docs/interactive.md`).

use std::fmt;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde::Serialize;

use super::feedback::one_line;
use super::{ACCEPT, REJECT};
use crate::bot::{Ended, MemoryOverrun, Usage};
use crate::outcome;

/// The judgement of one test case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    WrongAnswer(String),
    TimeLimit,
    RuntimeError(String),
    /// Killed for holding more than its memory limit; says how much.
    MemoryLimit(String),
    JudgeError(String),
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::WrongAnswer(_) => "wrong_answer",
            Verdict::TimeLimit => "time_limit",
            Verdict::RuntimeError(_) => "runtime_error",
            Verdict::MemoryLimit(_) => "memory_limit",
            Verdict::JudgeError(_) => "judge_error",
        }
    }

    /// The verdict in the shared taxonomy: a test case is one move, so
    /// TIME LIMIT is a move timeout; a judge error is the referee's side
    /// failing (`internal`), never blamed on the program.
    pub fn status(&self, exit: Option<Ended>) -> outcome::Verdict {
        match self {
            Verdict::Accepted => outcome::Verdict::OK,
            Verdict::WrongAnswer(_) => outcome::Verdict::of(outcome::Status::Incorrect),
            Verdict::TimeLimit => outcome::Verdict::timeout(outcome::Phase::Move),
            Verdict::RuntimeError(_) => exit.map_or(
                outcome::Verdict::of(outcome::Status::Crashed),
                outcome::Verdict::from,
            ),
            Verdict::MemoryLimit(_) => outcome::Verdict::limit(outcome::LimitKind::Memory),
            Verdict::JudgeError(_) => outcome::Verdict::of(outcome::Status::Internal),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Accepted => write!(f, "ACCEPTED"),
            Verdict::WrongAnswer(why) => write!(f, "WRONG ANSWER: {why}"),
            Verdict::TimeLimit => write!(f, "TIME LIMIT"),
            Verdict::RuntimeError(why) => write!(f, "RUNTIME ERROR: the program {why}"),
            Verdict::MemoryLimit(why) => write!(f, "MEMORY LIMIT: the program {why}"),
            Verdict::JudgeError(why) => write!(f, "JUDGE ERROR: {why}"),
        }
    }
}

/// Why a relay stopped before both sides had ended.
pub(super) enum Stop {
    /// The program ran out of time (or, with its time out, nothing moved).
    TimeLimit,
    /// The program's output could not be relayed: too long a line, not
    /// UTF-8, too much of it.
    BadOutput(String),
    /// The validator failed (or the referee did, relaying).
    Judge(String),
    /// The program was killed for holding more than its memory limit.
    Memory(MemoryOverrun),
}

/// Which side of a test case ended first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Program,
    Validator,
}

impl Side {
    /// The side across the relay.
    pub(super) fn other(self) -> Side {
        match self {
            Side::Program => Side::Validator,
            Side::Validator => Side::Program,
        }
    }
}

/// Everything known about one test case once it is judged.
#[derive(Debug)]
pub struct Judged {
    pub verdict: Verdict,
    /// The program's time, from its start to its exit (or to the end).
    pub time: Duration,
    pub exit: Option<Ended>,
    pub validator_exit: Option<Ended>,
    pub first_ended: Option<Side>,
    /// The program wrote after the validator had ended and was killed, as
    /// a direct pipe's SIGPIPE would have killed it.
    pub pipe_closed: bool,
    pub judge_message: String,
    pub team_message: String,
    /// The validator's `judgeerror.txt`.
    pub judge_error: String,
    /// Each feedback file not read, or not read whole, and why.
    pub feedback_notes: Vec<String>,
    pub stderr: String,
    pub validator_stderr: String,
    /// What the program's processes used.
    pub usage: Usage,
    /// The passes run (a multi-pass problem's; 1 otherwise).
    pub passes: u32,
}

impl Judged {
    /// Counts the passes `before` this one in the case's time and usage.
    pub(super) fn add_earlier(&mut self, before: Judged) {
        self.time += before.time;
        self.usage = self.usage.and(before.usage);
    }
}

/// How the two sides of a test case ended.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Ends {
    pub(super) program: Option<Ended>,
    pub(super) validator: Option<Ended>,
    pub(super) first: Option<Side>,
    pub(super) pipe_closed: bool,
}

/// The stop of a validator that outstays its time after the program ended.
pub(super) fn validator_late(allowed: std::time::Duration) -> Stop {
    Stop::Judge(format!(
        "the validator did not finish within {} (--validator-timeout)",
        crate::units::human_duration(allowed)
    ))
}

/// A judge error says what the validator's `judgeerror.txt` says, when it
/// wrote one: the organiser's first clue.
pub(super) fn with_judge_error(verdict: Verdict, judge_error: &str) -> Verdict {
    match verdict {
        Verdict::JudgeError(why) if !judge_error.is_empty() => {
            Verdict::JudgeError(format!("{why}; judgeerror.txt: {}", one_line(judge_error)))
        }
        verdict => verdict,
    }
}

/// The rulings of `docs/interactive.md`, in their order, as problemtools
/// (`judge/execute.py`) and DOMjudge (`judgedaemon`) rule: the validator's
/// failure first, then a validator that rejected before the program ended,
/// then the program's limits, its crash, and last the validator's verdict.
/// `ends` are those the relay saw, before the referee killed anything.
pub(super) fn rule(
    stop: Option<Stop>,
    ends: &Ends,
    overrun: Option<MemoryOverrun>,
    judge_message: &str,
) -> Verdict {
    let judge_note = || match judge_message {
        "" => String::new(),
        text => format!("; judge message: {}", one_line(text)),
    };
    if let Some(Stop::Judge(why)) = &stop {
        return Verdict::JudgeError(format!("{why}{}", judge_note()));
    }
    match ends.validator {
        Some(ended) if ended != Ended::Exited(ACCEPT) && ended != Ended::Exited(REJECT) => {
            return Verdict::JudgeError(format!(
                "the validator {ended} (42 accepts, 43 rejects){}",
                judge_note()
            ));
        }
        None if stop.is_none() => {
            return Verdict::JudgeError("the validator's end is unknown".into());
        }
        _ => {}
    }
    let rejected = |then: &str| {
        let why = match judge_message {
            "" => "the validator rejected the interaction (exit status 43)".to_string(),
            text => one_line(text),
        };
        Verdict::WrongAnswer(format!("{why}{then}"))
    };
    // Whatever the program did once a validator that rejected it had gone
    // (its input ended under it), the validator's verdict stands.
    if ends.first == Some(Side::Validator) && ends.validator == Some(Ended::Exited(REJECT)) {
        return rejected(match stop {
            Some(Stop::TimeLimit) => "; the program then ran out of time",
            _ => "",
        });
    }
    // Killed for its memory, the program could not finish: that is why,
    // whatever the validator made of its end.
    let overrun = overrun.or(match stop {
        Some(Stop::Memory(overrun)) => Some(overrun),
        _ => None,
    });
    if let Some(overrun) = overrun {
        return Verdict::MemoryLimit(overrun.to_string());
    }
    match stop {
        Some(Stop::TimeLimit) => return Verdict::TimeLimit,
        Some(Stop::BadOutput(why)) => return Verdict::WrongAnswer(why),
        _ => {}
    }
    // A program that ended because the validator had ended first is judged
    // by the validator's verdict: killed writing to it (a direct pipe's
    // SIGPIPE), or killed by SIGPIPE.
    let validator_decides = |ended: Ended| {
        ends.pipe_closed
            || (ends.first == Some(Side::Validator)
                && ended == Ended::Signaled(Signal::SIGPIPE as i32))
    };
    match (ends.program, ends.validator) {
        (Some(ended), _) if !(ended.success() || validator_decides(ended)) => {
            Verdict::RuntimeError(ended.to_string())
        }
        (_, Some(Ended::Exited(ACCEPT))) => Verdict::Accepted,
        _ => rejected(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_map_to_the_taxonomy() {
        assert_eq!(Verdict::Accepted.status(None), outcome::Verdict::OK);
        assert_eq!(
            Verdict::TimeLimit.status(None),
            outcome::Verdict::timeout(outcome::Phase::Move)
        );
        assert_eq!(
            Verdict::JudgeError("x".into()).status(None).status,
            outcome::Status::Internal
        );
        assert_eq!(
            Verdict::RuntimeError("x".into())
                .status(Some(Ended::Signaled(Signal::SIGXCPU as i32)))
                .status,
            outcome::Status::Limit
        );
        assert_eq!(one_line("a\n\n b \nc"), "a; b; c");
    }

    #[test]
    fn rulings() {
        let exited = |code| Some(Ended::Exited(code));
        let signaled = |signal: Signal| Some(Ended::Signaled(signal as i32));
        let ends = |program, validator, first| Ends {
            program,
            validator,
            first: Some(first),
            pipe_closed: false,
        };
        let rule = |ends: Ends, message: &str| rule(None, &ends, None, message);
        assert_eq!(
            rule(ends(exited(0), exited(42), Side::Program), ""),
            Verdict::Accepted
        );
        assert_eq!(
            rule(ends(exited(0), exited(43), Side::Validator), "too many"),
            Verdict::WrongAnswer("too many".into())
        );
        // A crash is a crash, even when accepted.
        assert_eq!(
            rule(ends(exited(3), exited(42), Side::Program), ""),
            Verdict::RuntimeError("exited with status 3".into())
        );
        assert!(matches!(
            rule(
                ends(signaled(Signal::SIGSEGV), exited(42), Side::Validator),
                ""
            ),
            Verdict::RuntimeError(_)
        ));
        // Unless the validator ended first and rejected, or the program
        // died of the closed pipe.
        assert_eq!(
            rule(ends(exited(1), exited(43), Side::Validator), ""),
            Verdict::WrongAnswer("the validator rejected the interaction (exit status 43)".into())
        );
        assert_eq!(
            rule(
                ends(signaled(Signal::SIGPIPE), exited(42), Side::Validator),
                ""
            ),
            Verdict::Accepted
        );
        let killed = Ends {
            pipe_closed: true,
            ..ends(signaled(Signal::SIGKILL), exited(43), Side::Validator)
        };
        assert!(matches!(rule(killed, "x"), Verdict::WrongAnswer(_)));
        // The judge failing is never the program's fault, crash or not.
        assert!(matches!(
            rule(ends(exited(3), exited(1), Side::Program), ""),
            Verdict::JudgeError(_)
        ));
        // A time limit beats the program's crash and the validator's later
        // verdict, but not the verdict of a validator that ended first:
        // its rejection (problemtools and DOMjudge) or its failure.
        let timed_out = |ends: Ends| super::rule(Some(Stop::TimeLimit), &ends, None, "no");
        let unended = |validator| Ends {
            first: None,
            ..ends(None, validator, Side::Program)
        };
        assert_eq!(timed_out(unended(None)), Verdict::TimeLimit);
        assert_eq!(
            timed_out(ends(None, exited(42), Side::Validator)),
            Verdict::TimeLimit
        );
        assert_eq!(
            timed_out(ends(None, exited(43), Side::Validator)),
            Verdict::WrongAnswer("no; the program then ran out of time".into())
        );
        assert!(matches!(
            timed_out(ends(None, signaled(Signal::SIGSEGV), Side::Validator)),
            Verdict::JudgeError(_)
        ));
    }
}
