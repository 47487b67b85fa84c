//! Commands that run to completion under the same guarantees as bots: a
//! process group, a time limit, bounded output. Used to build submissions
//! (`make` in a Chomp entrant's directory).

use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::time::{Instant, timeout};

use super::cgroup::{Cgroup, Kind};
use super::exit::ExitWatch;
use super::groups::{self, GroupGuard};
use super::stderr::{Capture, Tail};
use super::{BotSpec, Ended, KILL_WAIT, Resources, SpawnError, program, spawn};

/// How a command ended.
#[derive(Debug)]
pub struct Completed {
    /// `None` when it ran out of time and its group was killed.
    pub ended: Option<Ended>,
    pub elapsed: Duration,
    /// Its standard output and error, interleaved, the last `keep` bytes.
    pub log: String,
    pub log_truncated: bool,
    /// When `log` lost its beginning: the first [`LOG_HEAD`] bytes.
    pub log_head: String,
    /// Set when it was killed for holding more than [`BUILD_MEMORY`].
    pub memory_overrun: Option<super::MemoryOverrun>,
}

/// How much of the beginning of a long log is kept besides its end: where
/// a compiler's first error is.
pub const LOG_HEAD: usize = 16 * 1024;

/// The memory a build may hold, all its processes together: more than a
/// bot's default, since compilers (javac, rustc) are hungry, but a bound,
/// so that one submission's build cannot take the machine.
pub const BUILD_MEMORY: u64 = 4 << 30;

/// The processes and threads a build may have at once, where cgroups cap
/// them: `make -j`, a compiler's jobs and a JVM's threads fit; a fork bomb
/// in a Makefile does not take the machine.
pub const BUILD_PROCESSES: u64 = 1024;

impl Completed {
    pub fn success(&self) -> bool {
        self.ended.is_some_and(Ended::success)
    }
}

/// Runs a build, `spec` in its working directory, as [`run_to_end`] does:
/// under bubblewrap when `sandboxed` (its folder writable, nothing else),
/// and as a uid of its own when bots run as such (see [`super::boxes`]).
/// Its folder is then lent to that uid for the build, and given back (its
/// owners as they were, what the build made its owner's) once the build
/// and all it started are gone.
pub async fn run_build(
    spec: &BotSpec,
    limit: Duration,
    keep: usize,
    sandboxed: bool,
) -> Result<Completed, SpawnError> {
    let user = super::boxes::take(sandboxed).map_err(SpawnError::NoUser)?;
    let uid = user.as_ref().map(super::boxes::BoxUser::uid);
    let dir = spec.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let lent = match uid {
        Some(uid) => Some(super::boxes::Lent::lend(&dir, uid).map_err(|source| {
            SpawnError::NoUser(format!("lending its folder to uid {uid}: {source}"))
        })?),
        None => None,
    };
    let completed = match sandboxed {
        true => {
            let path = program::resolve(&spec.program)?;
            let (bwrap, args) = spawn::sandboxed(&path, spec, spawn::Access::Build, None, uid)?;
            let wrapped = BotSpec {
                program: bwrap.into_os_string(),
                args,
                ..spec.clone()
            };
            run_to_end(&wrapped, limit, keep, true, None)
                .await
                .map(|mut completed| {
                    completed.ended = completed.ended.map(Ended::through_bwrap);
                    completed
                })
        }
        false => run_to_end(spec, limit, keep, false, uid).await,
    };
    if let Some(lent) = lent {
        lent.give_back().map_err(|source| {
            SpawnError::NoUser(format!("giving its folder back from its uid: {source}"))
        })?;
    }
    completed
}

/// Runs `spec` with no input until it exits or `limit` passes, or until it
/// holds more than [`BUILD_MEMORY`]; then kills its whole process group.
/// `sandboxed`: `spec` runs bubblewrap (which decides its `TMPDIR`); `user`:
/// it runs as that uid.
pub async fn run_to_end(
    spec: &BotSpec,
    limit: Duration,
    keep: usize,
    sandboxed: bool,
    user: Option<u32>,
) -> Result<Completed, SpawnError> {
    let path = program::resolve(&spec.program)?;
    let cgroup = Cgroup::create(Kind::Build, Some(BUILD_MEMORY), Some(BUILD_PROCESSES))
        .map_err(SpawnError::Cgroup)?
        .map(std::sync::Arc::new);
    let limits = super::BotLimits {
        memory: Some(BUILD_MEMORY),
        sandbox: sandboxed,
        ..super::BotLimits::default()
    };
    let enclosure = spawn::Enclosure {
        user,
        ..super::enclosure(cgroup.as_deref(), &limits)
    };
    let env = spec.env.vars(sandboxed);
    let mut cmd = spawn::command(
        &path,
        &spec.args,
        spec.dir.as_deref(),
        Resources::NONE,
        &enclosure,
        env,
    )?;
    let started = Instant::now();
    let (mut child, mut group) =
        GroupGuard::spawn(|| cmd.spawn()).map_err(|e| program::classify(&path, e))?;
    let pid = group.pgid();
    drop(child.stdin.take());
    let mut out = Capture::start(
        child.stdout.take().expect("stdout is piped"),
        Tail::with_head(keep, LOG_HEAD),
        false,
    );
    let mut err = out.also(child.stderr.take().expect("stderr is piped"));
    let exit = ExitWatch::new(pid);
    let meter = super::usage::Meter::start(pid, Some(BUILD_MEMORY), false, cgroup.clone());
    let finished_in_time = timeout(limit, exit.exited()).await.is_ok();
    let elapsed = started.elapsed();
    // Whatever it left running (a make job server, a daemon) goes too,
    // while the unreaped leader still holds the group's number.
    group.signal(Signal::SIGKILL);
    if let Some(cgroup) = &cgroup {
        cgroup.kill();
    }
    let reaped = match timeout(KILL_WAIT, exit.exited()).await {
        Ok(()) => {
            meter.stop();
            child.wait().await.ok()
        }
        Err(_) => None,
    };
    group.forget();
    groups::kill_strays();
    let ended = reaped.filter(|_| finished_in_time).map(Ended::from);
    let drain = Duration::from_millis(200);
    out.finish(drain).await;
    err.finish(drain).await;
    let (log, log_truncated) = out.with(|t: &Tail| t.since(0));
    Ok(Completed {
        ended,
        elapsed,
        log,
        log_truncated,
        log_head: out.with(Tail::head),
        memory_overrun: meter.overrun(),
    })
}
