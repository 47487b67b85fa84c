//! How a run ends early (SIGINT, SIGTERM, SIGHUP, or its output's reader
//! gone): what it still prints, and that nothing after it is recorded.
//!
//! The signal thread (`main.rs`) kills every bot and exits at once, even
//! when the main thread is stuck. Killing the bots ends the games in
//! flight, and their drivers would see crashed bots or a dead judge and
//! record that: a game the run never finished, recorded as if it had been
//! (and never played again by `--resume`). So the run is first marked as
//! ending ([`end_publishing`]), and from then on no game is published: a
//! record's append ([`publishing`]) waits for the exit instead. A game
//! being published when the signal came is let finish first, so its
//! record and its line are whole.
//!
//! A tournament also registers here how to report the games finished so
//! far, as cutechess does, and the signal thread prints that report before
//! it exits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Set, once and for good, when the run is ending early.
static ENDING: AtomicBool = AtomicBool::new(false);

/// Held while a finished game is published (its record written, its line
/// printed): the run is not marked as ending in the middle of one.
static PUBLISHING: Mutex<()> = Mutex::new(());

/// The longest the signal thread waits for a lock another thread holds:
/// an interrupt must never hang.
const LOCK_WAIT: Duration = Duration::from_millis(500);

/// Marks the run as ending, after the game being published (if any) is
/// done. Called before any bot is killed.
pub fn end_publishing() {
    let guard = try_lock_for(&PUBLISHING, LOCK_WAIT);
    ENDING.store(true, Ordering::SeqCst);
    drop(guard);
}

/// Whether the run is ending early.
pub fn ending() -> bool {
    ENDING.load(Ordering::SeqCst)
}

/// Leave to publish a finished game: hold it while its record is written
/// and its line printed. Once the run is ending it never returns: the
/// game ended because its bots were killed, and the process is about to
/// exit.
pub fn publishing() -> MutexGuard<'static, ()> {
    let guard = PUBLISHING.lock().unwrap_or_else(|e| e.into_inner());
    if ending() {
        drop(guard);
        wait_for_exit();
    }
    guard
}

/// How long a game whose player was stopped from outside waits for the
/// referee's own signal (see [`settle`]).
const SETTLE: Duration = Duration::from_millis(300);

/// For a bot killed by SIGTERM, SIGINT or SIGHUP that the referee did not
/// send: the whole job may be being stopped. Slurm (a requeue, a time
/// limit), Kubernetes and systemd signal every process of a job at once,
/// and the referee's own signal may come a moment after its bots'. The bot
/// layer waits a moment for it before it reports the bot's end; if it
/// comes, this never returns, and the game is not recorded, as any game
/// ended by the run's end.
pub async fn settle() {
    let until = Instant::now() + SETTLE;
    while Instant::now() < until {
        stop_if_ending();
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop_if_ending();
}

/// Never returns once the run is ending: the thread that ends it exits
/// the process. For a record about to be written (it would be of a game
/// whose bots were killed), and for the main thread's own exit.
pub fn stop_if_ending() {
    if ending() {
        wait_for_exit();
    }
}

/// The thread that ends the run exits the process.
fn wait_for_exit() -> ! {
    loop {
        std::thread::park();
    }
}

fn try_lock_for<T>(lock: &Mutex<T>, wait: Duration) -> Option<MutexGuard<'_, T>> {
    let deadline = Instant::now() + wait;
    loop {
        match lock.try_lock() {
            Ok(guard) => return Some(guard),
            Err(std::sync::TryLockError::Poisoned(e)) => return Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(std::sync::TryLockError::WouldBlock) => return None,
        }
    }
}

type Report = Box<dyn Fn() -> String + Send>;

static REPORT: Mutex<Option<Report>> = Mutex::new(None);

/// Sets the report printed on an interrupt, replacing any earlier one.
pub fn set_report(report: impl Fn() -> String + Send + 'static) {
    if let Ok(mut slot) = REPORT.lock() {
        *slot = Some(Box::new(report));
    }
}

/// No report any more (the run has printed its own).
pub fn clear_report() {
    if let Ok(mut slot) = REPORT.lock() {
        *slot = None;
    }
}

/// The report, if one is set. Waits a moment at most for a lock another
/// thread holds: an interrupt must never hang.
pub fn report() -> Option<String> {
    try_lock_for(&REPORT, LOCK_WAIT)?.as_ref().map(|f| f())
}

/// What an interrupt puts in order before the process exits: files a run
/// appends to in the order its games finish, rewritten in game order.
type Tidy = Box<dyn Fn() + Send>;

static TIDY: Mutex<Option<Tidy>> = Mutex::new(None);

/// The longest the thread that ends the run waits for a tidy already
/// under way (the run's own, at its end): long enough for the files of a
/// class's run, short enough that an interrupt never hangs.
const TIDY_WAIT: Duration = Duration::from_secs(5);

/// Sets what [`tidy`] runs, replacing any earlier one.
pub fn set_tidy(tidy: impl Fn() + Send + 'static) {
    let mut slot = TIDY.lock().unwrap_or_else(|e| e.into_inner());
    *slot = Some(Box::new(tidy));
}

/// Runs the tidy now, if one is set, and then keeps it or not (the run is
/// over). An interrupt meanwhile waits for it to finish: a file is never
/// left half rewritten.
pub fn tidy_now(keep: bool) {
    let mut slot = TIDY.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(tidy) = slot.as_ref() {
        tidy();
    }
    if !keep {
        *slot = None;
    }
}

/// For the thread that ends the run early, once nothing is published any
/// more: runs the tidy, if one is set. Not while a game is still being
/// published (stuck), whose append the rewrite would lose; and it waits
/// [`TIDY_WAIT`] at most for one under way.
pub fn tidy() {
    let Some(_publishing) = try_lock_for(&PUBLISHING, LOCK_WAIT) else {
        return;
    };
    if let Some(slot) = try_lock_for(&TIDY, TIDY_WAIT)
        && let Some(tidy) = slot.as_ref()
    {
        tidy();
    }
}

/// The run's own directories (`referee interactive`'s work directories:
/// feedback, compiled validators and submissions), removed however the
/// run ends: by their owner when it is done with them, by the thread that
/// ends the run early ([`remove_own_dirs`]) otherwise.
static OWN_DIRS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// Creates `path`, a directory of the run's own, to be removed at its end
/// whatever the end. Once the run is ending it never returns: the
/// directories were removed, or are being removed, and the process is
/// about to exit.
pub fn make_own_dir(path: &std::path::Path) -> std::io::Result<()> {
    let mut dirs = OWN_DIRS.lock().unwrap_or_else(|e| e.into_inner());
    if ending() {
        drop(dirs);
        wait_for_exit();
    }
    std::fs::create_dir_all(path)?;
    dirs.push(path.to_owned());
    Ok(())
}

/// Takes `path`, a directory just made, as one of the run's own, to be
/// removed at its end whatever the end (at the referee's exit: nothing
/// removes it before). Once the run is ending it never returns, as
/// [`make_own_dir`].
pub fn adopt_own_dir(path: &std::path::Path) {
    let mut dirs = OWN_DIRS.lock().unwrap_or_else(|e| e.into_inner());
    if ending() {
        let _ = std::fs::remove_dir_all(path);
        drop(dirs);
        wait_for_exit();
    }
    dirs.push(path.to_owned());
}

/// Creates `path` and its parents, inside a directory of the run's own:
/// never once the run is ending, so that a directory removed by
/// [`remove_own_dirs`] is not made again by a thread still running.
pub fn make_dir_within(path: &std::path::Path) -> std::io::Result<()> {
    let dirs = OWN_DIRS.lock().unwrap_or_else(|e| e.into_inner());
    if ending() {
        drop(dirs);
        wait_for_exit();
    }
    std::fs::create_dir_all(path)
}

/// Removes `path`, made by [`make_own_dir`], its owner being done with it.
pub fn remove_own_dir(path: &std::path::Path) {
    let mut dirs = OWN_DIRS.lock().unwrap_or_else(|e| e.into_inner());
    let _ = std::fs::remove_dir_all(path);
    dirs.retain(|d| d != path);
}

/// Removes every directory of the run's own still there: for the thread
/// that ends the run, once the bots are killed. The lock is then kept
/// for good, so that nothing makes one again before the process exits.
/// Waits a moment at most for the lock: an interrupt must never hang.
pub fn remove_own_dirs() {
    let Some(mut dirs) = try_lock_for(&OWN_DIRS, LOCK_WAIT) else {
        return;
    };
    for dir in dirs.drain(..) {
        let _ = std::fs::remove_dir_all(dir);
    }
    if ending() {
        std::mem::forget(dirs);
    }
}
