//! Launchers on standby: a bot's start, made ready before it is needed.
//!
//! Starting a bot means starting the launcher, which enters the bot's
//! cgroup (one write per v1 hierarchy, each a migration in the kernel) and
//! its namespaces (`unshare` alone takes 130 µs), and only then becomes the
//! program; a game of a tournament waited for all of it, a fifth of the
//! CPU time of a tournament of short games (docs/PERFORMANCE.md §14). So
//! each thread that starts bots keeps launchers that have done all that
//! already and wait for their program on their standard input: a start is
//! then one write, and the next launcher readies itself on the other CPU
//! while the bot starts.
//!
//! Per thread: a bot dies with the thread that started it (its
//! parent-death signal, see `spawn::prepare_bot`), so a launcher serves
//! only the thread that started it. A thread starts launchers only from
//! its second bot on, so that a run of one bot (the dealer) makes none it
//! would not use.

use std::cell::{Cell, RefCell};
use std::ffi::OsString;
use std::path::Path;

use tokio::process::Child;

use super::BotLimits;
use super::cgroup::{self, Cgroup};
use super::environment::Vars;
use super::groups::GroupGuard;
use super::program::{SpawnError, classify};
use super::spawn;

/// A bot's process, just started, and its cgroup.
pub(crate) struct Started {
    pub child: Child,
    pub group: GroupGuard,
    pub cgroup: Option<Cgroup>,
    /// The CPU time its process had used before it was told to become
    /// the bot (a launcher that waited), which is not the bot's.
    pub cpu_base: std::time::Duration,
}

/// What a bot is to run: the program (bubblewrap's command line under
/// `--sandbox`), where and with which environment.
pub(crate) struct Program<'a> {
    pub path: &'a Path,
    pub args: &'a [OsString],
    pub dir: Option<&'a Path>,
    /// A clean environment, or the referee's own when `None`.
    pub env: Option<Vars>,
    /// The program as the user named it, for errors.
    pub named: &'a Path,
    /// The uid it runs as, without the sandbox (see [`super::boxes`]).
    pub user: Option<u32>,
}

/// What a waiting launcher was readied for: the limits its cgroup and
/// `/dev/shm` have, and whether bubblewrap makes its namespaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    memory: Option<u64>,
    processes: Option<u64>,
    sandbox: bool,
}

impl Key {
    fn of(limits: &BotLimits) -> Key {
        Key {
            memory: limits.memory,
            processes: limits.resources.processes,
            sandbox: limits.sandbox,
        }
    }
}

/// Most launchers a thread keeps waiting (a game of Chomp starts four
/// bots at once).
const MOST_WAITING: usize = 8;

thread_local! {
    static WAITING: RefCell<Vec<(Key, Started)>> = const { RefCell::new(Vec::new()) };
    /// Bots this thread has started.
    static STARTED: Cell<u64> = const { Cell::new(0) };
}

/// Starts `program` as a bot with `limits`: through a launcher of this
/// thread's that waits for it, else a new one; then readies the next.
pub(crate) fn start(program: Program<'_>, limits: &BotLimits) -> Result<Started, SpawnError> {
    let key = Key::of(limits);
    let started = match take(key) {
        Some(waiting) => hand_over(waiting, &program, limits)?,
        None => None,
    };
    let started = match started {
        Some(started) => started,
        None => start_new(&program, limits)?,
    };
    let count = STARTED.get() + 1;
    STARTED.set(count);
    if count >= 2 {
        ready_next(key, limits);
    }
    Ok(started)
}

/// A launcher of this thread's readied for `key`, if one waits.
fn take(key: Key) -> Option<Started> {
    WAITING.with_borrow_mut(|waiting| {
        let at = waiting.iter().position(|(k, _)| *k == key)?;
        Some(waiting.remove(at).1)
    })
}

/// Tells a waiting launcher what to become. `None` when it cannot serve
/// (it died, or the instruction does not fit its pipe): it is killed, and
/// the bot gets a new launcher.
fn hand_over(
    mut waiting: Started,
    program: &Program<'_>,
    limits: &BotLimits,
) -> Result<Option<Started>, SpawnError> {
    let Some(instruction) = spawn::instruction(
        program.path,
        program.args,
        program.dir,
        limits.resources,
        program.env.as_ref(),
        program.user,
    )?
    else {
        return Ok(None);
    };
    if !matches!(waiting.child.try_wait(), Ok(None)) {
        return Ok(None);
    }
    let Some(stdin) = waiting.child.stdin.as_ref() else {
        return Ok(None);
    };
    // What the launcher used to get ready is not the bot's: counted from
    // here, while it waits for its instruction (and uses no CPU time).
    match &mut waiting.cgroup {
        Some(cgroup) => cgroup.count_from_now(),
        None => {
            waiting.cpu_base = waiting
                .child
                .id()
                .and_then(|pid| super::usage::process_cpu_clock(pid as i32))
                .unwrap_or_default();
        }
    }
    // Into an empty pipe, whole or not at all (see `spawn::instruction`).
    if nix::unistd::write(stdin, &instruction).ok() != Some(instruction.len()) {
        return Ok(None);
    }
    Ok(Some(waiting))
}

/// Starts a bot through a launcher of its own.
fn start_new(program: &Program<'_>, limits: &BotLimits) -> Result<Started, SpawnError> {
    let cgroup = new_cgroup(limits)?;
    let enclosure = spawn::Enclosure {
        user: program.user,
        ..super::enclosure(cgroup.as_ref(), limits)
    };
    let mut cmd = spawn::command(
        program.path,
        program.args,
        program.dir,
        limits.resources,
        &enclosure,
        program.env.clone(),
    )?;
    let (child, group) =
        GroupGuard::spawn(|| cmd.spawn()).map_err(|e| classify(program.named, e))?;
    Ok(Started {
        child,
        group,
        cgroup,
        cpu_base: std::time::Duration::ZERO,
    })
}

fn new_cgroup(limits: &BotLimits) -> Result<Option<Cgroup>, SpawnError> {
    Cgroup::create(cgroup::Kind::Bot, limits.memory, limits.resources.processes)
        .map_err(SpawnError::Cgroup)
}

/// Starts a launcher for the next bot with `limits`, unless enough wait.
/// A failure only costs the next bot the wait: it is logged.
fn ready_next(key: Key, limits: &BotLimits) {
    if WAITING.with_borrow(Vec::len) >= MOST_WAITING {
        return;
    }
    let ready = || -> Result<Option<Started>, SpawnError> {
        let cgroup = new_cgroup(limits)?;
        let enclosure = super::enclosure(cgroup.as_ref(), limits);
        let Some(mut cmd) = spawn::standby_command(&enclosure) else {
            return Ok(None);
        };
        let (child, group) =
            GroupGuard::spawn(|| cmd.spawn()).map_err(|source| SpawnError::Other {
                path: "referee-launch".into(),
                source,
            })?;
        Ok(Some(Started {
            child,
            group,
            cgroup,
            cpu_base: std::time::Duration::ZERO,
        }))
    };
    match ready() {
        Ok(Some(started)) => WAITING.with_borrow_mut(|waiting| waiting.push((key, started))),
        Ok(None) => {}
        Err(e) => tracing::debug!("cannot ready a launcher for the next bot: {e}"),
    }
}
