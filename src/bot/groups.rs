//! The process groups of every live bot, so that whatever ends the referee
//! (a signal, a panic, an early return) can kill them all.

use std::collections::BTreeSet;
use std::sync::Mutex;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Owns one bot's process group: registered while alive, killed with
/// SIGKILL if dropped before [`GroupGuard::release`].
#[derive(Debug)]
pub(crate) struct GroupGuard {
    pgid: Option<i32>,
}

impl GroupGuard {
    pub(crate) fn new(pgid: i32) -> GroupGuard {
        with_live(|live| live.insert(pgid));
        GroupGuard { pgid: Some(pgid) }
    }

    /// Sends `signal` to every process of the group. Errors (typically
    /// ESRCH: the group is already empty) are ignored on purpose.
    pub(crate) fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(Pid::from_raw(pgid), signal);
        }
    }

    /// Kills whatever is left of the group and forgets it. Called once the
    /// group leader has been reaped.
    pub(crate) fn release(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
            with_live(|live| live.remove(&pgid));
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.release();
    }
}

/// Kills every live bot group. Safe to call from a signal-handling task or a
/// panic hook: it never waits long on a lock that a panicking thread might
/// hold forever.
pub fn kill_all() {
    use std::sync::TryLockError;
    for _ in 0..100 {
        let live = match LIVE.try_lock() {
            Ok(live) => live,
            Err(TryLockError::Poisoned(live)) => live.into_inner(),
            Err(TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            }
        };
        for &pgid in live.iter() {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        return;
    }
}

/// How many bot groups are alive (for tests and diagnostics).
pub fn live_count() -> usize {
    with_live(|live| live.len())
}

fn with_live<T>(f: impl FnOnce(&mut BTreeSet<i32>) -> T) -> T {
    let mut live = LIVE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    f(&mut live)
}
