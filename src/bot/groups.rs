//! The process groups of every live bot, so that whatever ends the referee
//! (a signal, a panic, an early return, even SIGKILL) kills them all.
//!
//! Three mechanisms cover the three ways a referee can end:
//!
//! - a [`GroupGuard`] kills its group when it is released or dropped;
//! - [`kill_all`] kills every registered group, for the signal thread and
//!   the panic hook;
//! - a watchdog process (`referee __watchdog`, started by [`start_watchdog`])
//!   is told of every group as it comes and goes, and kills those left when
//!   its input reaches EOF — which happens when the referee dies, however it
//!   dies. It runs in its own process group, so killing the referee's
//!   whole job does not take it along.
//!
//! A group is signalled only while its leader is unreaped (alive, or a
//! zombie the bot layer has not collected yet): the leader's pid, which is
//! also the group id, cannot be reused until then, so a signal can never
//! reach an unrelated process that inherited the number.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The hidden subcommand that runs the watchdog.
pub const WATCHDOG_COMMAND: &str = "__watchdog";

struct Registry {
    live: BTreeSet<i32>,
    watchdog: Option<ChildStdin>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    live: BTreeSet::new(),
    watchdog: None,
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Registry {
    /// Tells the watchdog, if there is one; a dead watchdog is dropped.
    fn tell(&mut self, sign: char, pgid: i32) {
        if let Some(pipe) = self.watchdog.as_mut()
            && writeln!(pipe, "{sign}{pgid}").is_err()
        {
            tracing::warn!("the watchdog process is gone; bots may outlive a killed referee");
            self.watchdog = None;
        }
    }
}

/// Signals a group and its leader. The leader is signalled by pid as well,
/// in case it moved itself to another group.
fn signal_group(pgid: i32, signal: Signal) {
    let _ = killpg(Pid::from_raw(pgid), signal);
    let _ = kill(Pid::from_raw(pgid), signal);
}

/// Owns one bot's process group (whose id is the leader's pid): registered
/// while alive, killed with SIGKILL when released or dropped.
#[derive(Debug)]
pub(crate) struct GroupGuard {
    pgid: Option<i32>,
}

impl GroupGuard {
    pub(crate) fn new(pgid: i32) -> GroupGuard {
        let mut registry = registry();
        registry.live.insert(pgid);
        registry.tell('+', pgid);
        GroupGuard { pgid: Some(pgid) }
    }

    /// Sends `signal` to every process of the group, and to the leader.
    /// Does nothing once released.
    pub(crate) fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, signal);
        }
    }

    /// Kills whatever is left of the group and forgets it. Must be called
    /// before the leader is reaped (see the module's notes).
    pub(crate) fn release(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            signal_group(pgid, Signal::SIGKILL);
            let mut registry = registry();
            registry.live.remove(&pgid);
            registry.tell('-', pgid);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.release();
    }
}

/// Kills every live bot group. For the signal thread and the panic hook:
/// it never waits long for a lock that a stuck or panicking thread holds.
pub fn kill_all() {
    for _ in 0..100 {
        let registry = match REGISTRY.try_lock() {
            Ok(registry) => registry,
            Err(TryLockError::Poisoned(registry)) => registry.into_inner(),
            Err(TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            }
        };
        for &pgid in &registry.live {
            signal_group(pgid, Signal::SIGKILL);
        }
        return;
    }
}

/// How many bot groups are alive (for diagnostics).
pub fn live_count() -> usize {
    registry().live.len()
}

/// Starts the watchdog process (this same executable, run as
/// `referee __watchdog`). Without it the referee still kills its bots on
/// every ending it survives; only a SIGKILLed referee then leaves the
/// bots' children behind (the bots themselves have a parent-death signal).
pub fn start_watchdog() {
    let started = std::env::current_exe().and_then(|exe| {
        use std::os::unix::process::CommandExt;
        Command::new(exe)
            .arg(WATCHDOG_COMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
    });
    match started {
        Ok(mut child) => registry().watchdog = child.stdin.take(),
        Err(e) => tracing::warn!("cannot start the watchdog process: {e}"),
    }
}

/// The watchdog's whole life: read `+pgid`/`-pgid` lines; at EOF (the
/// referee is gone) kill every group still listed.
pub fn watchdog_main() -> ! {
    use nix::sys::signal::{SigHandler, signal};
    for sig in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGPIPE,
    ] {
        // SAFETY: SIG_IGN installs no handler code.
        unsafe {
            let _ = signal(sig, SigHandler::SigIgn);
        }
    }
    let mut live = BTreeSet::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let (sign, number) = line.split_at(line.len().min(1));
        match (sign, number.parse::<i32>()) {
            ("+", Ok(pgid)) if pgid > 1 => {
                live.insert(pgid);
            }
            ("-", Ok(pgid)) => {
                live.remove(&pgid);
            }
            _ => {}
        }
    }
    for pgid in live {
        signal_group(pgid, Signal::SIGKILL);
    }
    std::process::exit(0)
}
