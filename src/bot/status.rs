//! How a bot process ended, in words and in the record.

use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use nix::sys::signal::Signal;

/// A process's end: an exit code or a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// Exited normally with this status.
    Exited(i32),
    /// Killed by this signal number.
    Signaled(i32),
}

impl From<Ended> for crate::outcome::Verdict {
    fn from(ended: Ended) -> crate::outcome::Verdict {
        crate::outcome::Verdict::ended(match ended {
            Ended::Signaled(n) => Some(n),
            Ended::Exited(_) => None,
        })
    }
}

impl Ended {
    /// Killed by a signal that stops whole jobs (SIGTERM, SIGINT, SIGHUP).
    pub fn is_stop_signal(self) -> bool {
        matches!(self, Ended::Signaled(n) if [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP]
            .iter()
            .any(|s| *s as i32 == n))
    }

    pub fn success(self) -> bool {
        self == Ended::Exited(0)
    }

    /// bubblewrap reports a program killed by signal N as exit status
    /// 128 + N; a sandboxed bot's end is read back that way.
    pub fn through_bwrap(self) -> Ended {
        match self {
            Ended::Exited(code @ 129..=192) => Ended::Signaled(code - 128),
            other => other,
        }
    }
}

impl From<ExitStatus> for Ended {
    fn from(status: ExitStatus) -> Ended {
        match (status.code(), status.signal()) {
            (Some(code), _) => Ended::Exited(code),
            (None, Some(signal)) => Ended::Signaled(signal),
            // Neither happens for a reaped child on Linux; keep a value anyway.
            (None, None) => Ended::Exited(-1),
        }
    }
}

/// The conventional name of a signal number, e.g. `SIGSEGV`.
pub fn signal_name(signal: i32) -> String {
    Signal::try_from(signal).map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_owned())
}

impl fmt::Display for Ended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Ended::Exited(code) => write!(f, "exited with status {code}"),
            Ended::Signaled(signal) => {
                write!(f, "was killed by signal {signal} ({})", signal_name(signal))?;
                // The kernel's way of enforcing two resource limits.
                match Signal::try_from(signal) {
                    Ok(Signal::SIGXCPU) => write!(f, ": it used up its CPU time limit"),
                    Ok(Signal::SIGXFSZ) => write!(f, ": it exceeded its file size limit"),
                    _ => Ok(()),
                }
            }
        }
    }
}
