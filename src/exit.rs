//! Exit statuses, the same for every subcommand.

use crate::bot::Fault;

/// How a run ended. The numeric values are part of the interface: scripts
/// and judges depend on them (see `EXIT_STATUS_HELP`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// The run completed and, where there is a verdict, it is a pass.
    Pass = 0,
    /// The run completed with a failing verdict.
    Fail = 1,
    /// A bot broke the protocol.
    IncorrectOutput = 2,
    /// A bot timed out, exited or closed its output early.
    Crashed = 3,
    /// Bad arguments or bad input.
    Usage = 64,
    /// The referee itself failed.
    Internal = 70,
    /// The referee could not write, flush or fsync one of its own files
    /// (results, standings, copies).
    Io = 74,
    /// Interrupted by SIGINT or SIGTERM.
    Interrupted = 130,
    /// The referee's own standard output or error was closed (`| head`):
    /// the run ended early, quietly, as a program killed by SIGPIPE does.
    /// Not 0: a run cut short has not passed.
    OutputClosed = 141,
}

impl Status {
    pub fn code(self) -> i32 {
        self as i32
    }
}

impl From<Fault> for Status {
    fn from(fault: Fault) -> Status {
        match fault {
            Fault::Protocol => Status::IncorrectOutput,
            Fault::Crash => Status::Crashed,
            Fault::Referee => Status::Internal,
        }
    }
}

/// Why a run stopped before it played, and the status it exits with: a
/// usage error (64) unless it says otherwise (the referee's own
/// resources failing it are 70, never the input's fault).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    pub status: Status,
}

impl Refusal {
    /// The referee's own failure (70).
    pub fn internal(message: String) -> Refusal {
        Refusal {
            message,
            status: Status::Internal,
        }
    }
}

/// A run's status; a refusal's message is said first, after `who`
/// (`referee chomp: ...`).
pub fn said(who: &str, ended: Result<Status, Refusal>) -> Status {
    ended.unwrap_or_else(|refusal| {
        eprintln!("{who}: {}", refusal.message);
        refusal.status
    })
}

impl From<(Status, String)> for Refusal {
    fn from((status, message): (Status, String)) -> Refusal {
        Refusal { message, status }
    }
}

impl From<String> for Refusal {
    fn from(message: String) -> Refusal {
        Refusal {
            message,
            status: Status::Usage,
        }
    }
}

impl From<&str> for Refusal {
    fn from(message: &str) -> Refusal {
        Refusal::from(message.to_owned())
    }
}

/// The table printed by `--help` (and repeated in the README).
pub const EXIT_STATUS_HELP: &str = "\
Exit status:
  0    the run completed (and, where there is a verdict, it passed)
  1    the run completed with a failing verdict
  2    incorrect output: a bot broke the protocol
  3    program crashed: a bot timed out, exited or closed its output early
  64   usage or input error: bad arguments, bad input file or line
  70   internal error of the referee
  74   I/O error on the referee's own files (results, standings): the run stopped
  130  interrupted (SIGINT, SIGTERM or SIGHUP); every bot is killed
  141  its own output was closed (| head): the run ended early, quietly,
       every bot killed";

impl From<crate::outcome::Status> for Status {
    /// The exit status of a referee that stops at a bot's failure.
    fn from(status: crate::outcome::Status) -> Status {
        use crate::outcome::Status as Verdict;
        use Status as Exit;
        match status {
            Verdict::Ok => Exit::Pass,
            Verdict::Incorrect => Exit::IncorrectOutput,
            Verdict::Timeout | Verdict::Crashed | Verdict::ClosedOutput | Verdict::Limit => {
                Exit::Crashed
            }
            Verdict::CannotStart | Verdict::BuildFailed => Exit::Usage,
            Verdict::Internal => Exit::Internal,
        }
    }
}
