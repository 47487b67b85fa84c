//! The referee's threads give way to the bots they wait for.
//!
//! A game thread wakes whenever a bot writes a line: a chess engine's
//! `info` lines, a dozen a move. Linux lets a waking thread take the CPU
//! from the one running there (wake-up preemption), and the kernel puts a
//! thread woken through a pipe beside its writer, so each line took the
//! engine off its CPU for a few microseconds. On an idle machine that is
//! all it costs. On a busy one, when the referee's thread went back to
//! sleep the scheduler often ran another program's task (a busy loop)
//! before the engine again, for a whole tick (4 ms), and the engine's move
//! took longer: beside two busy loops on two CPUs, the same 40 games took
//! 1.10× fastchess's wall time (docs/PERFORMANCE.md §15).
//!
//! So the referee runs its threads as `SCHED_BATCH`, as a CPU-bound
//! program would: the kernel never lets a batch thread preempt on
//! wake-up, so the referee reads a line when the engine stops (to wait for
//! its next command, or at the end of its time slice) or on a CPU with
//! nothing else to run, which on an idle machine is at once. Everything
//! else about it is as before: its share of CPU time, its nice value, and
//! its timers, which at worst are seen a tick late when every CPU is busy.
//!
//! Bots, judges and builds must not inherit that: they start with the
//! policy the referee was started with ([`as_started`], around every
//! spawn). A referee started with another policy (`chrt --idle`, a
//! real-time class) is left as it is.

use std::sync::atomic::{AtomicBool, Ordering};

use nix::libc;

/// Whether [`give_way`] lowered the referee from `SCHED_OTHER`.
static LOWERED: AtomicBool = AtomicBool::new(false);

/// Makes the calling thread, and every thread it starts from now on, a
/// batch thread, if it runs under the normal policy. Call it before the
/// runtime's threads are started. Says whether it did.
pub fn give_way() -> bool {
    if current() != Some(libc::SCHED_OTHER) {
        return false;
    }
    let lowered = set(libc::SCHED_BATCH);
    LOWERED.store(lowered, Ordering::Relaxed);
    lowered
}

/// Runs `spawn` (a child's fork or spawn) under the policy the referee
/// was started with, so that the child starts with it, then gives way
/// again.
pub(crate) fn as_started<T>(spawn: impl FnOnce() -> T) -> T {
    if !LOWERED.load(Ordering::Relaxed) {
        return spawn();
    }
    let restored = set(libc::SCHED_OTHER);
    let spawned = spawn();
    if restored {
        set(libc::SCHED_BATCH);
    }
    spawned
}

/// The calling thread's policy.
fn current() -> Option<i32> {
    // SAFETY: a plain system call on the calling thread (pid 0).
    let policy = unsafe { libc::sched_getscheduler(0) };
    (policy >= 0).then_some(policy)
}

/// Sets the calling thread's policy (one with no static priority); says
/// whether the kernel took it.
fn set(policy: i32) -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: a plain system call on the calling thread (pid 0), with a
    // parameter that lives across it.
    unsafe { libc::sched_setscheduler(0, policy, &param) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_gives_way_and_its_children_start_as_it_was_started() {
        // On a thread of its own, so that the test's other threads keep
        // their policy.
        std::thread::spawn(|| {
            assert_eq!(current(), Some(libc::SCHED_OTHER));
            assert!(give_way());
            assert_eq!(current(), Some(libc::SCHED_BATCH));
            let inside = as_started(current);
            assert_eq!(inside, Some(libc::SCHED_OTHER));
            assert_eq!(current(), Some(libc::SCHED_BATCH));
            // A thread started now inherits the batch policy.
            let child = std::thread::spawn(current).join().unwrap();
            assert_eq!(child, Some(libc::SCHED_BATCH));
        })
        .join()
        .unwrap();
    }
}
