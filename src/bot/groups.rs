//! The process groups of every live bot, so that whatever ends the referee
//! (a signal, a panic, an early return, even SIGKILL) kills them all.
//!
//! Three mechanisms cover the three ways a referee can end:
//!
//! - a [`GroupGuard`] kills its group when it is released or dropped;
//! - [`kill_all`] kills every registered group, for the signal thread and
//!   the panic hook;
//! - a watchdog process (`referee-launch __watchdog`, started by
//!   [`start_watchdog`]) is told of every group as it comes and goes, and
//!   kills those left when its input reaches EOF — which happens when the
//!   referee dies, however it dies. It runs in its own process group, so
//!   killing the referee's whole job does not take it along.
//!
//! A group is signalled only while its leader is unreaped (alive, or a
//! zombie the bot layer has not collected yet): the leader's pid, which is
//! also the group id, cannot be reused until then, so a signal can never
//! reach an unrelated process that inherited the number.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};

use super::procfs::{every_process, listed_children, read_stat};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError, RwLock, TryLockError};
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The hidden subcommand that runs the watchdog.
pub const WATCHDOG_COMMAND: &str = "__watchdog";

struct Registry {
    live: BTreeSet<i32>,
    watchdog: Option<ChildStdin>,
    watchdog_pid: Option<i32>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    live: BTreeSet::new(),
    watchdog: None,
    watchdog_pid: None,
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

/// Held while a child is forked and registered, and while strays are
/// looked for: with games on several threads, a child another thread has
/// just forked but not yet registered would otherwise look like a stray.
/// Spawns share it (they may run at once); a scan holds it alone.
static SPAWNING: RwLock<()> = RwLock::new(());

impl GroupGuard {
    /// Starts a child that leads its own process group (`spawn` must set
    /// `process_group(0)`) and registers that group in one step.
    pub(crate) fn spawn(
        spawn: impl FnOnce() -> std::io::Result<tokio::process::Child>,
    ) -> std::io::Result<(tokio::process::Child, GroupGuard)> {
        let _spawning = SPAWNING.read().unwrap_or_else(PoisonError::into_inner);
        let child = super::scheduling::as_started(spawn)?;
        let pid = child.id().expect("a child that was just spawned has a pid") as i32;
        let mut registry = registry();
        registry.live.insert(pid);
        registry.tell('+', pid);
        Ok((child, GroupGuard { pgid: Some(pid) }))
    }

    /// The group's id (its leader's pid), while it is registered.
    pub(crate) fn pgid(&self) -> i32 {
        self.pgid.expect("asked for the id of a released group")
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
        self.signal(Signal::SIGKILL);
        self.forget();
    }

    /// Forgets the group: to be called right after its leader is reaped,
    /// so that no later signal can reach a process that reuses the number.
    /// Until then the group stays registered, which also keeps
    /// [`kill_strays`] from taking the unreaped leader for a stray.
    pub(crate) fn forget(&mut self) {
        if let Some(pgid) = self.pgid.take() {
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
        let watchdog = registry.watchdog_pid;
        drop(registry);
        // Everything in the bots' cgroups, wherever it moved, and the
        // cgroups themselves.
        super::cgroup::finish();
        super::sandbox::finish();
        kill_strays_except(&BTreeSet::new(), watchdog);
        return;
    }
}

/// Makes the referee the "subreaper" of everything its bots start: a
/// process whose parent dies is handed to the referee instead of to init,
/// so one that left its bot's process group (`setsid`) can still be found
/// and killed by [`kill_strays`].
pub fn become_subreaper() {
    // SAFETY: prctl with integer arguments.
    let done = unsafe { nix::libc::prctl(nix::libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if done != 0 {
        tracing::warn!(
            "cannot become a subreaper: {}; processes that leave a bot's group may survive it",
            std::io::Error::last_os_error()
        );
    }
}

/// Asks for a [`kill_strays_now`] soon (within [`STRAY_SCAN_INTERVAL`]) on
/// a thread of its own. A scan reads each child's `/proc/PID/stat` (each
/// process's, where the kernel does not list a thread's children): done
/// by the game after every reap, it was a fifth of a tournament's CPU time
/// (`docs/PERFORMANCE.md`). Batched, a burst of reaps costs one scan, and
/// a stray still dies within a tenth of a second, even in the middle of a
/// long game that reaps nothing.
pub fn kill_strays() {
    if !SCANS.load(Ordering::Relaxed) {
        return;
    }
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let started = std::thread::Builder::new()
            .name("stray-scan".into())
            .spawn(scan_for_strays);
        if let Err(e) = started {
            tracing::warn!("cannot start the stray scanner: {e}; scanning on each request");
            BATCHED.store(false, Ordering::Relaxed);
        }
    });
    if !BATCHED.load(Ordering::Relaxed) {
        return kill_strays_now();
    }
    let (wanted, wake) = &SCAN_WANTED;
    *wanted.lock().unwrap_or_else(PoisonError::into_inner) = true;
    wake.notify_one();
}

/// Whether reaps still ask for scans (see [`stop_scans`]).
static SCANS: AtomicBool = AtomicBool::new(true);

/// Reaps from now on ask for no stray scan: the run is ending, and its end
/// scans anyway ([`kill_all`]). Spares the scanner's thread and scan.
pub fn stop_scans() {
    SCANS.store(false, Ordering::Relaxed);
}

/// At most one scan per this long (see [`kill_strays`]).
pub const STRAY_SCAN_INTERVAL: Duration = Duration::from_millis(100);

/// Whether scans run on the scanner thread (false when it cannot start).
static BATCHED: AtomicBool = AtomicBool::new(true);
static SCAN_WANTED: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

/// How long the scanner waits between a request and its scan: requests
/// that come meanwhile share the scan, and a run that ends meanwhile
/// (the dealer's, right after its one bot is reaped) does not scan twice,
/// since its ending scans anyway ([`kill_all`]).
const STRAY_SCAN_DELAY: Duration = Duration::from_millis(20);

fn scan_for_strays() {
    let (wanted, wake) = &SCAN_WANTED;
    loop {
        {
            let mut wanted = wanted.lock().unwrap_or_else(PoisonError::into_inner);
            while !*wanted {
                wanted = wake.wait(wanted).unwrap_or_else(PoisonError::into_inner);
            }
        }
        std::thread::sleep(STRAY_SCAN_DELAY);
        *wanted.lock().unwrap_or_else(PoisonError::into_inner) = false;
        kill_strays_now();
        std::thread::sleep(STRAY_SCAN_INTERVAL - STRAY_SCAN_DELAY);
    }
}

/// Kills and reaps the referee's children that belong to no live bot: the
/// orphans a bot left behind outside its process group (see
/// [`become_subreaper`]). Bots, builds and the watchdog are spared.
fn kill_strays_now() {
    let _spawning = SPAWNING.write().unwrap_or_else(PoisonError::into_inner);
    let (live, watchdog) = {
        let registry = registry();
        (registry.live.clone(), registry.watchdog_pid)
    };
    kill_strays_except(&live, watchdog);
}

fn kill_strays_except(live: &BTreeSet<i32>, watchdog: Option<i32>) {
    // A stray's children are handed to the referee as it dies, after the
    // scan that found it: look again until a scan finds none.
    for _ in 0..STRAY_ROUNDS {
        if kill_strays_once(live, watchdog) == 0 {
            return;
        }
    }
    let left = own_children()
        .unwrap_or_else(every_process)
        .into_iter()
        .filter(|&pid| is_stray(pid, live, watchdog).is_some() && !dying(pid))
        .count();
    if left > 0 {
        tracing::warn!(
            "{left} process{} left behind by bots still alive after {STRAY_ROUNDS} rounds of killing",
            if left == 1 { "" } else { "es" }
        );
    }
}

/// How many times the stray kill looks again (see [`kill_strays_except`]).
const STRAY_ROUNDS: usize = 20;

/// A child of the referee that belongs to no live bot (nor is the
/// watchdog): its process group and session.
fn is_stray(pid: i32, live: &BTreeSet<i32>, watchdog: Option<i32>) -> Option<(i32, i32)> {
    let (ppid, pgid, sid) = stat_ids(pid)?;
    let me = std::process::id() as i32;
    let spared = ppid != me || live.contains(&pid) || live.contains(&pgid) || Some(pid) == watchdog;
    (!spared).then_some((pgid, sid))
}

/// Kills the strays found in one scan, each with its process group and
/// its session (a `setsid` shell's children are in them: killed with it,
/// they are not handed to the referee alive after the scan), and reaps
/// them. Returns how many it found, those already on their way out
/// included (see [`dying`]): these are only reaped.
fn kill_strays_once(live: &BTreeSet<i32>, watchdog: Option<i32>) -> usize {
    let mut found = 0;
    for pid in own_children().unwrap_or_else(every_process) {
        let Some((pgid, sid)) = is_stray(pid, live, watchdog) else {
            continue;
        };
        found += 1;
        if dying(pid) {
            // Under `--sandbox`, once per bot: the sandbox's first process
            // (its init), which bubblewrap's outer one, the bot's leader,
            // leaves still exiting. With cgroups, also whatever the bot's
            // cgroup kill took. Either ends with its bot: no stray.
            tracing::debug!(
                pgid,
                sid,
                "reaping process {pid} ({}) of an ended bot, already dying",
                process_name(pid)
            );
            reap_stray(pid);
            continue;
        }
        tracing::debug!(
            pgid,
            sid,
            "killing process {pid} ({}) left behind by a bot",
            process_name(pid)
        );
        if let Some(cgroup) = super::cgroup::outside_run(pid) {
            tracing::warn!(
                "process {pid} ({}) left its bot's cgroup for {cgroup} (a bot run as root \
                 without --sandbox can): killed as a stray",
                process_name(pid)
            );
        }
        kill_around(pid, pgid, sid);
        reap_stray(pid);
    }
    found
}

/// Whether a process is already on its way out, the whole of it, by what
/// the kernel says of it (which no process can say of itself, unlike a
/// name): its one thread has begun to exit, or SIGKILL is pending for the
/// whole process (from its parent's death, its cgroup's kill or its pid
/// namespace's end), which nothing undoes. Such a process is not killed
/// as a stray but waited for and reaped: a process of a bot's own,
/// ending with it (its sandbox's first process). A process whose first
/// thread has exited but another runs is not dying.
fn dying(pid: i32) -> bool {
    let path = PathBuf::from(format!("/proc/{pid}"));
    // `stat` counts the threads before it reads the flags: in one reading
    // a lone thread could start another and then exit between the two.
    // A lone thread seen exiting cannot start one: a second reading that
    // counts one thread again is sure (short of that other thread taking
    // the first one's place by `exec` and winning the same race again).
    let alone_and_exiting =
        || read_stat(&path).is_some_and(|stat| stat.threads == 1 && stat.exiting());
    (alone_and_exiting() && alone_and_exiting()) || killed(&path)
}

/// Whether SIGKILL is pending for the whole of the process at `process`
/// (`/proc/PID`): its `ShdPnd` mask holds it until the process is gone.
fn killed(process: &Path) -> bool {
    let Ok(status) = std::fs::read_to_string(process.join("status")) else {
        return false;
    };
    let sigkill = 1u64 << (Signal::SIGKILL as u32 - 1);
    status
        .lines()
        .find_map(|line| line.strip_prefix("ShdPnd:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & sigkill != 0)
}

/// A process's command name, for messages.
fn process_name(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|name| crate::text::terminal(name.trim_end()).into_owned())
        .unwrap_or_default()
}

/// SIGKILLs `pid`, its process group and every process of its session,
/// but never the referee's own group or session.
fn kill_around(pid: i32, pgid: i32, sid: i32) {
    let me = Pid::from_raw(0);
    let own_group = nix::unistd::getpgid(Some(me)).map(Pid::as_raw).ok();
    let own_session = nix::unistd::getsid(Some(me)).map(Pid::as_raw).ok();
    if Some(pgid) != own_group && pgid > 1 {
        let _ = kill(Pid::from_raw(-pgid), Signal::SIGKILL);
    }
    if Some(sid) != own_session && sid > 1 {
        for other in every_process() {
            if stat_ids(other).is_some_and(|(_, _, s)| s == sid) {
                let _ = kill(Pid::from_raw(other), Signal::SIGKILL);
            }
        }
    }
    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
}

/// Reaps a killed stray: ours to reap, tokio does not know it. A moment
/// for it to die.
fn reap_stray(pid: i32) {
    for _ in 0..50 {
        match nix::sys::wait::waitpid(
            Pid::from_raw(pid),
            Some(nix::sys::wait::WaitPidFlag::WNOHANG),
        ) {
            Ok(nix::sys::wait::WaitStatus::StillAlive) => {
                std::thread::sleep(std::time::Duration::from_millis(1))
            }
            _ => break,
        }
    }
}

/// The referee's children, the orphans handed to it included, from each
/// of its threads' `children` file: a handful of pids, where a scan of
/// `/proc` reads a file of every process on the machine. `None` where the
/// kernel keeps no such file, or where a list was too long to trust.
fn own_children() -> Option<Vec<i32>> {
    match listed_children(Path::new("/proc/self"))? {
        (children, true) => Some(children),
        (_, false) => None,
    }
}

/// A process's parent, process group and session, from `/proc/PID/stat`.
fn stat_ids(pid: i32) -> Option<(i32, i32, i32)> {
    let stat = read_stat(Path::new(&format!("/proc/{pid}")))?;
    Some((stat.ppid, stat.pgid, stat.sid))
}

/// Starts the watchdog process (the launcher, or this same executable
/// where there is none, run as `__watchdog`). Without it the referee
/// still kills its bots on every ending it survives; only a SIGKILLed
/// referee then leaves the bots' children behind (the bots themselves
/// have a parent-death signal).
pub fn start_watchdog() {
    // The launcher, which handles the command too, starts in a fraction of
    // the time the referee's binary takes to load (its symbols and
    // relocations: docs/PERFORMANCE.md §14).
    let program = match super::program::launcher() {
        Some(launcher) => Ok(launcher.to_owned()),
        None => std::env::current_exe(),
    };
    let started = program.and_then(|exe| {
        use std::os::unix::process::CommandExt;
        let mut command = Command::new(exe);
        command
            .arg(WATCHDOG_COMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        // It lives as long as the run: none of the caller's descriptors
        // (the organiser's open log) nor the referee's go with it.
        // SAFETY: only raw system calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                super::descriptors::close_inherited_on_exec().map_err(std::io::Error::from)
            })
        };
        command.spawn()
    });
    match started {
        Ok(mut child) => {
            let mut registry = registry();
            registry.watchdog = child.stdin.take();
            registry.watchdog_pid = Some(child.id() as i32);
            if let Some(pipe) = registry.watchdog.as_mut() {
                for dir in super::cgroup::run_dirs() {
                    let _ = writeln!(pipe, "c{}", dir.display());
                }
            }
        }
        Err(e) => tracing::warn!("cannot start the watchdog process: {e}"),
    }
}

/// The watchdog's whole life: read `+pgid`/`-pgid` lines, and `cPATH` for
/// each of the run's cgroup directories; at EOF (the referee is gone) kill
/// every group still listed, then everything in the run's cgroups, and
/// remove them.
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
    let mut cgroups = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if let Some(dir) = line.strip_prefix('c') {
            cgroups.push(std::path::PathBuf::from(dir));
            continue;
        }
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
    for dir in cgroups {
        super::cgroup::remove_run(&dir);
    }
    std::process::exit(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child killed and reaped however the test ends.
    struct Sleeper(std::process::Child);

    impl Drop for Sleeper {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn sleeper() -> Sleeper {
        Sleeper(Command::new("sleep").arg("30").spawn().unwrap())
    }

    /// The children files list what a scan of every process finds to be
    /// this process's children: a child of this thread, and one of a
    /// thread that has ended (handed to another thread of the process).
    #[test]
    fn the_children_files_list_the_processes_own_children() {
        let here = sleeper();
        let orphaned = std::thread::spawn(sleeper).join().unwrap();
        let Some(children) = own_children() else {
            eprintln!("this kernel keeps no children files: nothing to compare");
            return;
        };
        let me = std::process::id() as i32;
        let scanned: BTreeSet<i32> = every_process()
            .into_iter()
            .filter(|&pid| stat_ids(pid).is_some_and(|(ppid, _, _)| ppid == me))
            .collect();
        for child in [&here, &orphaned] {
            let pid = child.0.id() as i32;
            assert!(children.contains(&pid), "{pid} not in {children:?}");
            assert!(scanned.contains(&pid));
        }
    }

    /// A live child is not dying, by any name; killed (a zombie until it
    /// is reaped) it is.
    #[test]
    fn a_child_is_dying_once_killed_not_before() {
        let mut child = sleeper();
        let pid = child.0.id() as i32;
        let stat = read_stat(Path::new(&format!("/proc/{pid}"))).unwrap();
        assert_eq!(stat.ppid, std::process::id() as i32);
        assert_eq!(stat.threads, 1);
        assert!(!stat.exiting());
        assert!(!dying(pid));
        child.0.kill().unwrap();
        let started = std::time::Instant::now();
        while !dying(pid) {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{pid} never seen dying"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
