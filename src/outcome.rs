//! The one failure taxonomy: how an entrant's part in a game ended.
//!
//! Every record, every standings table, `ci` expectations and JUnit use
//! these names, so a verdict means the same thing everywhere. The runtime
//! error of the bot layer (`BotError`) holds an `io::Error` and is not
//! serializable; a [`Verdict`] is its recorded form, joined by `From`. The
//! explanation for people stays a separate string (`error` in records).
//!
//! The names are documented once, in `docs/results.md`.

use std::fmt;

use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};

/// How an entrant's game ended, for machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Played to the end by the rules (won or lost).
    Ok,
    /// Did not answer (or read, or exit) in time; see [`Phase`].
    Timeout,
    /// Broke the protocol: an illegal or unparsable move, a line too long,
    /// a wrong answer.
    Incorrect,
    /// Exited or was killed by a signal during the game, or closed its
    /// input while still running.
    Crashed,
    /// Closed its standard output while still running.
    ClosedOutput,
    /// Was stopped by a resource limit (see [`LimitKind`]).
    Limit,
    /// Its program could not be started at all.
    CannotStart,
    /// Its directory's build failed (or left no program behind).
    BuildFailed,
    /// The referee itself failed; the bot is not to blame.
    Internal,
}

/// When a timeout happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The process's first reply, which has the start-up allowance on top
    /// of the move limit.
    Startup,
    /// A move, over the per-move limit.
    Move,
    /// A move that ran out the game's clock (time control, or Chomp's
    /// starvation clock).
    Clock,
    /// Writing to the bot: it did not read its input.
    Write,
    /// It did not exit within the grace period after its input was closed.
    ExitGrace,
}

/// Which resource limit stopped a bot, when it can be told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// RLIMIT_CPU (SIGXCPU).
    Cpu,
    /// RLIMIT_FSIZE (SIGXFSZ).
    FileSize,
    /// Memory: the resident memory of all its processes (`--limit-memory`).
    Memory,
    /// Processes and threads: a fork failed at its cap (`--limit-procs`).
    Processes,
}

/// The recorded verdict: a [`Status`] with its detail, flattened into a
/// record as `"status"`, `"phase"` and `"limit"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<LimitKind>,
}

impl Default for Verdict {
    fn default() -> Verdict {
        Verdict::OK
    }
}

impl Verdict {
    pub const OK: Verdict = Verdict::of(Status::Ok);

    pub const fn of(status: Status) -> Verdict {
        Verdict {
            status,
            phase: None,
            limit: None,
        }
    }

    pub const fn timeout(phase: Phase) -> Verdict {
        Verdict {
            status: Status::Timeout,
            phase: Some(phase),
            limit: None,
        }
    }

    /// Stopped by the resource limit `kind`.
    pub const fn limit(kind: LimitKind) -> Verdict {
        Verdict {
            status: Status::Limit,
            phase: None,
            limit: Some(kind),
        }
    }

    /// How a process that ended by itself during a game is judged, by the
    /// signal that killed it if one did: a crash, or a resource limit when
    /// the signal tells which.
    pub fn ended(signal: Option<i32>) -> Verdict {
        let limit = match signal.map(Signal::try_from) {
            Some(Ok(Signal::SIGXCPU)) => Some(LimitKind::Cpu),
            Some(Ok(Signal::SIGXFSZ)) => Some(LimitKind::FileSize),
            _ => None,
        };
        match limit {
            Some(kind) => Verdict {
                status: Status::Limit,
                phase: None,
                limit: Some(kind),
            },
            None => Verdict::of(Status::Crashed),
        }
    }

    pub fn is_ok(self) -> bool {
        self.status == Status::Ok
    }
}

/// Why an entrant cannot play at all: it could not be built or started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disqualified {
    /// [`Status::BuildFailed`] or [`Status::CannotStart`].
    pub status: Status,
    pub why: String,
}

impl Disqualified {
    pub fn build_failed(why: impl Into<String>) -> Disqualified {
        Disqualified {
            status: Status::BuildFailed,
            why: why.into(),
        }
    }

    pub fn cannot_start(why: impl Into<String>) -> Disqualified {
        Disqualified {
            status: Status::CannotStart,
            why: why.into(),
        }
    }

    pub fn verdict(&self) -> Verdict {
        Verdict::of(self.status)
    }
}

/// For people: the reason names a submission's directory and quotes its
/// build log, both the submitter's, so their control characters are shown,
/// not obeyed (see [`crate::text`]).
impl fmt::Display for Disqualified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = crate::text::terminal_lines(&self.why);
        write!(f, "{}: {why}", self.status.words())
    }
}

impl Status {
    /// The name records use.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Timeout => "timeout",
            Status::Incorrect => "incorrect",
            Status::Crashed => "crashed",
            Status::ClosedOutput => "closed_output",
            Status::Limit => "limit",
            Status::CannotStart => "cannot_start",
            Status::BuildFailed => "build_failed",
            Status::Internal => "internal",
        }
    }

    /// Every status, in the order tables show them.
    pub const ALL: [Status; 9] = [
        Status::Ok,
        Status::Timeout,
        Status::Incorrect,
        Status::Crashed,
        Status::ClosedOutput,
        Status::Limit,
        Status::CannotStart,
        Status::BuildFailed,
        Status::Internal,
    ];

    /// What `no_timeout` forbids.
    pub fn is_timeout(self) -> bool {
        self == Status::Timeout
    }

    /// What `no_crash` forbids: the bot did not run to the end of its game.
    pub fn is_crash(self) -> bool {
        matches!(
            self,
            Status::Crashed
                | Status::ClosedOutput
                | Status::Limit
                | Status::CannotStart
                | Status::BuildFailed
        )
    }

    /// What `no_incorrect` forbids.
    pub fn is_incorrect(self) -> bool {
        self == Status::Incorrect
    }

    /// The entrant never played: it could not be built or started.
    pub fn is_disqualification(self) -> bool {
        matches!(self, Status::CannotStart | Status::BuildFailed)
    }

    /// The verdict in words, as messages print it.
    pub fn words(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Timeout => "timeout",
            Status::Incorrect => "incorrect output",
            Status::Crashed => "program crashed",
            Status::ClosedOutput => "closed output",
            Status::Limit => "resource limit",
            Status::CannotStart => "cannot start",
            Status::BuildFailed => "build failed",
            Status::Internal => "internal error",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Startup => "startup",
            Phase::Move => "move",
            Phase::Clock => "clock",
            Phase::Write => "write",
            Phase::ExitGrace => "exit_grace",
        }
    }
}

impl LimitKind {
    pub fn name(self) -> &'static str {
        match self {
            LimitKind::Cpu => "cpu",
            LimitKind::FileSize => "file_size",
            LimitKind::Memory => "memory",
            LimitKind::Processes => "processes",
        }
    }
}

/// Whether an error of the operating system's is the referee's own
/// resources failing (descriptors, memory, processes, disk), not anything
/// of the program it was starting: such a failure is never charged to a
/// bot (docs/results.md, "The referee's failures are not the bots'").
pub fn is_referees_errno(e: &std::io::Error) -> bool {
    use nix::errno::Errno;
    e.raw_os_error().is_some_and(|code| {
        [
            Errno::EMFILE,
            Errno::ENFILE,
            Errno::ENOMEM,
            Errno::ENOSPC,
            Errno::EDQUOT,
            Errno::EAGAIN,
            Errno::ENOBUFS,
        ]
        .iter()
        .any(|&errno| errno as i32 == code)
    })
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.status.name())?;
        if let Some(phase) = self.phase {
            write!(f, " ({})", phase.name())?;
        }
        if let Some(limit) = self.limit {
            write!(f, " ({})", limit.name())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_serialize_flat_and_read_back() {
        let v = Verdict::timeout(Phase::Startup);
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(text, r#"{"status":"timeout","phase":"startup"}"#);
        assert_eq!(serde_json::from_str::<Verdict>(&text).unwrap(), v);
        assert_eq!(
            serde_json::to_string(&Verdict::OK).unwrap(),
            r#"{"status":"ok"}"#
        );
    }

    #[test]
    fn signals_that_enforce_limits_are_limits() {
        let cpu = Verdict::ended(Some(Signal::SIGXCPU as i32));
        assert_eq!(
            (cpu.status, cpu.limit),
            (Status::Limit, Some(LimitKind::Cpu))
        );
        assert_eq!(
            Verdict::ended(Some(Signal::SIGSEGV as i32)).status,
            Status::Crashed
        );
        assert!(Status::Limit.is_crash() && !Status::Timeout.is_crash());
    }
}
