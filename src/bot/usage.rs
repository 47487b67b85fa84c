//! What a bot uses — resident memory and CPU time, all its processes
//! together — and the memory limit, enforced on that sum.
//!
//! Why resident memory, not address space: a JVM, a Go runtime or
//! AddressSanitizer reserve far more address space than they ever touch,
//! so an address-space limit (RLIMIT_AS) stops them at start, while a
//! forked child gets a fresh allowance of its own. Judges that run such
//! programs (DOMjudge, isolate, judge0) limit what a run holds in memory,
//! summed over all its processes. `--limit-address-space` still sets
//! RLIMIT_AS for whoever wants it.
//!
//! Where the bot has a cgroup ([`super::cgroup`]), the kernel does it all:
//! it caps the cgroup's memory and kills it when it is over, and counts
//! its CPU time and peak memory exactly. The sampler thread below then
//! only looks at whether the kernel killed one of the bot's processes for
//! its memory, so that the whole bot goes at once (a bot whose child was
//! killed must not play on as if nothing happened), and only when the
//! kernel tells it of an OOM in the cgroup: it sleeps while the bot
//! thinks. (It used to look every [`SAMPLE_INTERVAL`]; beside busy CPUs
//! each of those wake-ups took the CPU from a thinking engine, whose
//! moves then took 20% longer, issue 50.)
//!
//! Where no cgroup is available (not root, no delegated cgroup, or
//! `--no-cgroups`), a sampler thread looks at every live bot
//! every [`SAMPLE_INTERVAL`]. A bot's processes are its leader and every
//! descendant (`/proc/PID/task/TID/children`); its memory is the sum of
//! their resident sets (`/proc/PID/stat`), plus, under `--sandbox`, what
//! its private `/tmp` and `/dev/shm` hold (tmpfs is memory). A bot over its
//! limit is killed at once, its whole group and tree, and its exchange
//! with the referee ends in a [`super::BotError::MemoryLimit`].
//!
//! The sum counts a page shared by several of the bot's processes (a
//! library, a forked copy) once per process: a bot is never under-charged.
//! A process that leaves the tree (`setsid` and a double fork) is no
//! longer counted, but it is killed as a stray within a tenth of a second
//! (`groups::kill_strays`). Between samples a bot may overshoot by what it
//! can touch in [`SAMPLE_INTERVAL`] (tens of megabytes).
//!
//! CPU time is user plus system time: each process's own (its CPU clock)
//! plus that of the children it has waited for. A process that is gone
//! without being waited for inside the tree keeps what was last seen of
//! it; the total never goes down.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::eventfd::{EfdFlags, EventFd};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use super::cgroup::{Cgroup, OomNotice};

pub use super::procfs::SAMPLE_INTERVAL;

/// A process tree deeper or wider than this is not followed further (and
/// is over any sensible limit anyway).
const MAX_PROCESSES: usize = 4096;

/// What a bot used over a stretch of its life (a game, or all of it).
/// Records hold it as `peak_memory_bytes` and `cpu_micros`. A figure that
/// could not be measured (the cgroup's file could not be read, or the
/// memory watch did not look at the bot in that stretch) is `None`, and
/// left out of the record: 0 would read as "used nothing".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// The largest memory held at once, all processes together, bytes.
    pub peak_memory: Option<u64>,
    /// User plus system CPU time.
    pub cpu: Option<Duration>,
    /// The bot made a cgroup of its own below its cgroup (only root
    /// without `--sandbox` can): its processes there were counted and
    /// killed with it, and its record says so ([`Usage::containment`]).
    pub made_cgroup: bool,
}

impl Usage {
    pub fn cpu_micros(&self) -> Option<u64> {
        self.cpu
            .map(|cpu| u64::try_from(cpu.as_micros()).unwrap_or(u64::MAX))
    }

    /// The CPU time as far as it is known, for limits: an unknown time is
    /// over none.
    pub fn cpu_known(&self) -> Duration {
        self.cpu.unwrap_or_default()
    }

    /// What a record says of how the bot left its containment, if it did.
    pub fn containment(&self) -> Option<&'static str> {
        self.made_cgroup
            .then_some("made a cgroup of its own below its cgroup: counted and killed with it")
    }

    /// The usage of two stretches together: their CPU times added, the
    /// larger peak; a figure known in neither stays unknown.
    pub fn and(self, other: Usage) -> Usage {
        let cpu = match (self.cpu, other.cpu) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or_default() + b.unwrap_or_default()),
        };
        Usage {
            peak_memory: self.peak_memory.max(other.peak_memory),
            cpu,
            made_cgroup: self.made_cgroup || other.made_cgroup,
        }
    }
}

impl serde::Serialize for Usage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut fields = serializer.serialize_struct("Usage", 3)?;
        match self.peak_memory {
            Some(peak) => fields.serialize_field("peak_memory_bytes", &peak)?,
            None => fields.skip_field("peak_memory_bytes")?,
        }
        match self.cpu_micros() {
            Some(cpu) => fields.serialize_field("cpu_micros", &cpu)?,
            None => fields.skip_field("cpu_micros")?,
        }
        match self.containment() {
            Some(note) => fields.serialize_field("containment", note)?,
            None => fields.skip_field("containment")?,
        }
        fields.end()
    }
}

/// Where [`Meter::usage_since`] starts counting: the CPU time at the mark,
/// and (without a cgroup) the memory watch's looks at the bot until then.
/// A fresh mark counts from the bot's start.
#[derive(Clone, Copy, Debug, Default)]
pub struct UsageMark {
    cpu: Duration,
    looks: u64,
}

/// A bot that went over its memory limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryOverrun {
    /// What it held when it was killed, bytes: its cgroup's peak when the
    /// kernel killed it.
    pub used: u64,
    pub limit: u64,
    /// The kernel killed it (its cgroup's limit), rather than the memory
    /// watch.
    pub by_kernel: bool,
}

impl MemoryOverrun {
    /// What happened, naming the option that set the limit.
    pub fn with_option(&self) -> String {
        if self.by_kernel {
            format!(
                "reached its memory limit of {} (--limit-memory) and was killed by the kernel",
                human_bytes(self.limit)
            )
        } else {
            format!("{self} (--limit-memory): killed")
        }
    }
}

impl std::fmt::Display for MemoryOverrun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.by_kernel {
            write!(
                f,
                "reached its memory limit of {} and was killed by the kernel",
                human_bytes(self.limit)
            )
        } else {
            write!(
                f,
                "used {} of memory, over its limit of {}",
                human_bytes(self.used),
                human_bytes(self.limit)
            )
        }
    }
}

/// A bot whose memory reached its limit and stayed alive: the kernel
/// reclaimed memory instead of killing it, which can stall it for as long
/// as it stays there. Only a cgroup's limit holds a bot there: the memory
/// watch kills at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryAtLimit {
    /// Its cgroup's peak since the game began, bytes.
    pub peak: u64,
    pub limit: u64,
}

impl MemoryAtLimit {
    /// `peak` is at `limit` within 1% (at least 1 MiB): the kernel
    /// reclaims a little before the very limit (a few hundred KiB, seen
    /// at 64 MiB and at 256 MiB).
    fn of(peak: u64, limit: u64) -> Option<MemoryAtLimit> {
        let margin = (limit / 100).max(1 << 20);
        (limit > 0 && peak.saturating_add(margin) >= limit).then_some(MemoryAtLimit { peak, limit })
    }
}

impl std::fmt::Display for MemoryAtLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "memory limit reached (peak {} of {})",
            human_bytes(self.peak),
            human_bytes(self.limit)
        )
    }
}

/// Measures one bot and enforces its memory limit. Dropping it stops both.
#[derive(Debug)]
pub struct Meter {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    leader: i32,
    limit: Option<u64>,
    /// The bot's cgroup: then the kernel limits and measures.
    cgroup: Option<Arc<Cgroup>>,
    /// Count the sandbox's private tmpfs mounts too.
    sandboxed: bool,
    /// The leader's CPU time before it became the bot, left out.
    cpu_base: Duration,
    /// The innermost process of a sandboxed bot (the program bubblewrap
    /// started), whose CPU clock times its moves; the leader otherwise.
    /// Outside the lock: it is read on every reply, while a look holds
    /// the lock for tens of microseconds.
    main: AtomicI32,
    /// Whether `main` is found for good (see [`Shared::main_pid`]).
    main_found: AtomicBool,
    /// The kernel's notice of an OOM in the cgroup, which the watch sleeps
    /// on; `None` where it could not be had (then the cgroup is looked at
    /// every [`SAMPLE_INTERVAL`]).
    notice: Option<OomNotice>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Largest sum seen since the last mark.
    window_peak: u64,
    /// The sum at the latest look, and when that was.
    last: u64,
    sampled_at: Option<std::time::Instant>,
    /// Looks at the bot's processes so far.
    looks: u64,
    /// Total CPU time so far (never decreases).
    cpu: Duration,
    overrun: Option<MemoryOverrun>,
    /// The leader is about to be reaped: its pid may not be used again.
    stopped: bool,
}

impl Meter {
    /// Starts measuring the bot led by `leader` (its process group's id),
    /// through its cgroup when it has one.
    pub fn start(
        leader: i32,
        limit: Option<u64>,
        sandboxed: bool,
        cgroup: Option<Arc<Cgroup>>,
    ) -> Meter {
        Meter::start_from(leader, limit, sandboxed, cgroup, Duration::ZERO)
    }

    /// [`Meter::start`] for a leader that had used `cpu_base` of CPU time
    /// before it became the bot (a launcher that waited on standby, see
    /// `super::standby`), which is not the bot's. A cgroup's count starts
    /// at the bot's start anyway.
    pub fn start_from(
        leader: i32,
        limit: Option<u64>,
        sandboxed: bool,
        cgroup: Option<Arc<Cgroup>>,
        cpu_base: Duration,
    ) -> Meter {
        let notice = cgroup.as_ref().and_then(|cgroup| {
            cgroup
                .oom_notice()
                .inspect_err(|e| tracing::debug!("no notice of OOM kills: {e}; looking instead"))
                .ok()
        });
        let shared = Arc::new(Shared {
            leader,
            limit,
            cgroup,
            sandboxed,
            cpu_base,
            main: AtomicI32::new(leader),
            main_found: AtomicBool::new(!sandboxed),
            notice,
            state: Mutex::new(State::default()),
        });
        sampler().add(&shared);
        Meter { shared }
    }

    /// Whether the bot was killed for its memory, and with how much. With
    /// a cgroup, the kernel's count of OOM kills is read now.
    pub fn overrun(&self) -> Option<MemoryOverrun> {
        let mut state = self.shared.lock();
        self.shared.check_kernel_kills(&mut state);
        state.overrun
    }

    /// Whether the bot's memory is, or was since the last
    /// [`Meter::usage_since`], at its cgroup's limit (see
    /// [`MemoryAtLimit`]).
    pub fn at_limit(&self) -> Option<MemoryAtLimit> {
        let cgroup = self.shared.cgroup.as_ref()?;
        MemoryAtLimit::of(cgroup.peak()?, cgroup.memory_limit()?)
    }

    /// Whether a fork or a new thread of the bot failed at its process cap
    /// (`--limit-procs`, a cgroup's `pids.max`), and that cap.
    pub fn hit_process_cap(&self) -> Option<u64> {
        let cgroup = self.shared.cgroup.as_ref()?;
        cgroup
            .hit_process_cap()
            .then(|| cgroup.process_cap())
            .flatten()
    }

    /// Returns the usage since `mark` and moves the mark here. Measures
    /// first unless the last look is fresher than [`SAMPLE_INTERVAL`]: a
    /// look costs tens of microseconds, as much as a short game's moves,
    /// and one every interval is as often as memory is watched anyway.
    /// Without a cgroup, a stretch in which the watch did not look at the
    /// bot (a game shorter than the interval) has no figures: its CPU
    /// time is charged to the next stretch that has; over a run, nothing
    /// is lost or counted twice.
    pub fn usage_since(&self, mark: &mut UsageMark) -> Usage {
        if let Some(cgroup) = &self.shared.cgroup {
            // Exact: the kernel's peak since the last call, and its count
            // of CPU time, processes gone included.
            let cpu = cgroup.cpu();
            let usage = Usage {
                peak_memory: cgroup.take_peak(),
                cpu: cpu.map(|cpu| cpu.saturating_sub(mark.cpu)),
                made_cgroup: cgroup.has_children(),
            };
            if let Some(cpu) = cpu {
                mark.cpu = cpu;
            }
            return usage;
        }
        let mut state = self.shared.fresh();
        if state.looks == mark.looks {
            return Usage::default();
        }
        let usage = Usage {
            // A live process holds memory: a sum of 0 is a look that found
            // the bot gone, not a measure.
            peak_memory: Some(state.window_peak).filter(|&peak| peak > 0),
            // Counted in clock ticks (10 ms): a stretch that used less than
            // a tick shows none, which is not a measure of none; it stays
            // for the next stretch.
            cpu: Some(state.cpu.saturating_sub(mark.cpu)).filter(|cpu| !cpu.is_zero()),
            made_cgroup: false,
        };
        mark.cpu = state.cpu;
        mark.looks = state.looks;
        // The next window starts from what the bot holds now.
        state.window_peak = state.last;
        usage
    }

    /// The CPU time of the bot's whole tree so far (see [`Bot::cpu_time`]).
    ///
    /// [`Bot::cpu_time`]: super::Bot::cpu_time
    pub fn cpu_now(&self) -> Duration {
        if let Some(cpu) = self.shared.cgroup.as_ref().and_then(|c| c.cpu()) {
            return cpu;
        }
        self.shared.fresh().cpu
    }

    /// The CPU time of the bot's main process (all its threads), read from
    /// its CPU clock: cheap enough to time each move. `None` where the
    /// clock cannot be read.
    pub fn main_cpu(&self) -> Option<Duration> {
        process_cpu_clock(self.shared.main_pid())
    }

    /// Takes a last measurement and stops: to be called once the leader
    /// has exited and before it is reaped, while its pid is still its own.
    pub fn stop(&self) {
        let mut state = self.shared.lock();
        if !state.stopped {
            self.shared.sample(&mut state);
            state.stopped = true;
        }
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.shared.lock().stopped = true;
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state, measured first unless the last look is fresher than
    /// [`SAMPLE_INTERVAL`] or the bot has stopped.
    fn fresh(&self) -> MutexGuard<'_, State> {
        let mut state = self.lock();
        if !state.stopped
            && state
                .sampled_at
                .is_none_or(|at| at.elapsed() >= SAMPLE_INTERVAL)
        {
            self.sample(&mut state);
        }
        state
    }

    /// The bot's main process: the leader, or for a sandboxed bot the
    /// program bubblewrap started, two levels below it (bubblewrap, then
    /// its init in the bot's pid namespace). Looked for until it is there,
    /// then kept: a process the bot forks later is not its main one.
    fn main_pid(&self) -> i32 {
        if self.main_found.load(Ordering::Relaxed) {
            return self.main.load(Ordering::Relaxed);
        }
        let below = |pid: i32| {
            let process = format!("/proc/{pid}");
            super::procfs::listed_children(Path::new(&process))
                .and_then(|(children, _)| children.first().copied())
        };
        match below(self.leader).and_then(below) {
            Some(program) => {
                self.main.store(program, Ordering::Relaxed);
                self.main_found.store(true, Ordering::Relaxed);
                program
            }
            None => self.leader,
        }
    }

    /// With a cgroup: whether the kernel killed one of the bot's processes
    /// for its memory; if so the rest of it goes too, at once.
    fn check_kernel_kills(&self, state: &mut State) {
        let Some(cgroup) = &self.cgroup else { return };
        if state.overrun.is_some() || cgroup.oom_kills() == 0 {
            return;
        }
        let limit = cgroup.memory_limit().unwrap_or(0);
        state.overrun = Some(MemoryOverrun {
            used: cgroup.peak().unwrap_or(limit).max(limit),
            limit,
            by_kernel: true,
        });
        tracing::debug!(
            pid = self.leader,
            limit,
            "the kernel killed the bot for its memory"
        );
        cgroup.kill();
    }

    /// Measures the bot's tree, and kills it if it holds more than its
    /// limit. Holding the state's lock keeps [`Meter::stop`] (and so the
    /// reaping of the leader) from running meanwhile: the pids used here
    /// stay the bot's. With a cgroup, the kernel measures and limits:
    /// only its OOM kills are looked at, and (sandboxed) which process is
    /// the bot's main one.
    fn sample(&self, state: &mut State) {
        if self.cgroup.is_some() {
            self.check_kernel_kills(state);
            state.sampled_at = Some(std::time::Instant::now());
            return;
        }
        let tree = process_tree(self.leader);
        let mut memory = 0u64;
        let mut cpu = Duration::ZERO;
        for &pid in &tree {
            if let Some(stat) = read_stat(pid) {
                memory += stat.resident;
                let own = process_cpu_clock(pid)
                    .unwrap_or(stat.own_cpu)
                    .max(stat.own_cpu);
                cpu += own + stat.children_cpu;
            }
        }
        if self.sandboxed {
            // The innermost process sees the sandbox's mounts.
            if let Some(&inner) = tree.last() {
                memory += private_tmpfs_bytes(inner);
            }
        }
        // Only a look that found the bot alive (holding memory) measured it.
        state.looks += u64::from(memory > 0);
        state.last = memory;
        state.sampled_at = Some(std::time::Instant::now());
        state.window_peak = state.window_peak.max(memory);
        state.cpu = state.cpu.max(cpu.saturating_sub(self.cpu_base));
        if let Some(limit) = self.limit
            && memory > limit
            && state.overrun.is_none()
        {
            state.overrun = Some(MemoryOverrun {
                used: memory,
                limit,
                by_kernel: false,
            });
            tracing::debug!(
                pid = self.leader,
                memory,
                limit,
                "bot over its memory limit: killed"
            );
            let _ = killpg(Pid::from_raw(self.leader), Signal::SIGKILL);
            for &pid in &tree {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
    }
}

/// The watch's thread and the meters it looks at. It sleeps in
/// `epoll_wait`: on the kernel's notices of OOM kills in the bots' cgroups,
/// on a wake-up when a meter is added, and, while some bot has no notice
/// (no cgroup, or none could be had), for [`SAMPLE_INTERVAL`] between
/// looks at those. A bot whose cgroup gives notice costs no wake-up while
/// it thinks.
struct Sampler {
    watched: Mutex<Watched>,
    /// `None` where no epoll instance or eventfd could be had: every meter
    /// is then looked at every interval.
    waits: Option<Waits>,
}

/// What the watch's thread sleeps on, and how it is woken.
struct Waits {
    epoll: Epoll,
    wake: EventFd,
}

#[derive(Default)]
struct Watched {
    /// The meters looked at every interval.
    looked_at: Vec<Weak<Shared>>,
    /// The meters whose notice is in the epoll set, by its token.
    noticed: HashMap<u64, Weak<Shared>>,
    next_token: u64,
    /// Meters looked at for a while after a notice: the kernel tells of
    /// an OOM before it has killed and counted (v1).
    after_notice: Vec<(Weak<Shared>, Instant)>,
}

/// The token of the sampler's own wake-up in its epoll set.
const WAKE: u64 = 0;
/// How long a meter is looked at after a notice of an OOM.
const AFTER_NOTICE: Duration = Duration::from_millis(200);

fn sampler() -> &'static Sampler {
    static SAMPLER: std::sync::OnceLock<&'static Sampler> = std::sync::OnceLock::new();
    SAMPLER.get_or_init(|| {
        let sampler: &'static Sampler = Box::leak(Box::new(Sampler::new()));
        let started = std::thread::Builder::new()
            .name("memory-watch".into())
            .spawn(move || sampler.run());
        if let Err(e) = started {
            tracing::warn!("cannot start the memory watch: {e}; memory is not limited");
        }
        sampler
    })
}

impl Sampler {
    fn new() -> Sampler {
        let waits = || -> nix::Result<Waits> {
            let wake = EventFd::from_flags(EfdFlags::EFD_CLOEXEC | EfdFlags::EFD_NONBLOCK)?;
            let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
            epoll.add(&wake, EpollEvent::new(EpollFlags::EPOLLIN, WAKE))?;
            Ok(Waits { epoll, wake })
        };
        Sampler {
            watched: Mutex::new(Watched::default()),
            waits: waits()
                .inspect_err(|e| tracing::debug!("the memory watch will poll: {e}"))
                .ok(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Watched> {
        self.watched.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn add(&self, meter: &Arc<Shared>) {
        let mut watched = self.lock();
        watched.next_token += 1;
        let token = watched.next_token;
        let noticed = match (&self.waits, &meter.notice) {
            (Some(waits), Some(notice)) => waits
                .epoll
                .add(notice.fd(), EpollEvent::new(notice.events(), token))
                .is_ok(),
            _ => false,
        };
        if noticed {
            watched.noticed.insert(token, Arc::downgrade(meter));
        } else {
            watched.looked_at.push(Arc::downgrade(meter));
        }
        drop(watched);
        if let Some(waits) = &self.waits {
            let _ = waits.wake.write(1);
        }
    }

    fn run(&self) {
        let mut events = [EpollEvent::empty(); 16];
        loop {
            let timeout = self.forget_stopped();
            let ready = match &self.waits {
                Some(waits) => waits.epoll.wait(&mut events, timeout).unwrap_or(0),
                None => {
                    std::thread::sleep(SAMPLE_INTERVAL);
                    0
                }
            };
            for event in &events[..ready] {
                self.take(event.data());
            }
            self.look();
        }
    }

    /// Drops the meters of bots that stopped; returns how long to wait for
    /// a notice before the next look (forever while no meter needs looks).
    fn forget_stopped(&self) -> EpollTimeout {
        let mut watched = self.lock();
        let live = |meter: &Weak<Shared>| meter.upgrade().is_some_and(|m| !m.lock().stopped);
        watched.looked_at.retain(live);
        watched.noticed.retain(|_, meter| live(meter));
        let now = Instant::now();
        watched
            .after_notice
            .retain(|(meter, until)| *until > now && live(meter));
        if watched.looked_at.is_empty() && watched.after_notice.is_empty() {
            EpollTimeout::NONE
        } else {
            EpollTimeout::try_from(SAMPLE_INTERVAL).unwrap_or(EpollTimeout::ZERO)
        }
    }

    /// Takes a notice (or the sampler's own wake-up) and looks at its
    /// meter at once and for a while after.
    fn take(&self, token: u64) {
        if token == WAKE {
            if let Some(waits) = &self.waits {
                let _ = waits.wake.read();
            }
            return;
        }
        let mut watched = self.lock();
        let Some(meter) = watched.noticed.get(&token).cloned() else {
            return;
        };
        if let Some(shared) = meter.upgrade()
            && let Some(notice) = &shared.notice
        {
            notice.take();
        }
        watched
            .after_notice
            .push((meter, Instant::now() + AFTER_NOTICE));
    }

    /// One look at each meter that needs looks.
    fn look(&self) {
        let live: Vec<Arc<Shared>> = {
            let watched = self.lock();
            let after_notice = watched.after_notice.iter().map(|(meter, _)| meter);
            watched
                .looked_at
                .iter()
                .chain(after_notice)
                .filter_map(Weak::upgrade)
                .collect()
        };
        for meter in live {
            let mut state = meter.lock();
            if !state.stopped {
                meter.sample(&mut state);
            }
        }
    }
}

/// `leader` and all its descendants, parents before children. Children are
/// listed per thread, since any thread may fork (see
/// [`super::procfs::listed_children`]).
fn process_tree(leader: i32) -> Vec<i32> {
    let mut tree = vec![leader];
    let mut next = 0;
    while next < tree.len() && tree.len() < MAX_PROCESSES {
        let pid = tree[next];
        next += 1;
        let process = format!("/proc/{pid}");
        if let Some((children, _)) = super::procfs::listed_children(Path::new(&process)) {
            tree.extend(children);
        }
    }
    tree
}

/// What `/proc/PID/stat` tells of a process's use.
struct Stat {
    resident: u64,
    own_cpu: Duration,
    /// CPU time of the children it has waited for.
    children_cpu: Duration,
}

fn read_stat(pid: i32) -> Option<Stat> {
    let mut text = String::with_capacity(512);
    std::fs::File::open(format!("/proc/{pid}/stat"))
        .and_then(|mut f| f.read_to_string(&mut text))
        .ok()?;
    parse_stat(&text)
}

/// Parses `/proc/PID/stat`. The command name is in parentheses and may hold
/// anything: fields are counted after the last `)`, from field 3 (state).
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    let number = |field: usize| -> Option<u64> { fields.get(field - 3)?.parse().ok() };
    let tick =
        |ticks: u64| Duration::from_nanos(ticks.saturating_mul(1_000_000_000 / clock_ticks()));
    Some(Stat {
        own_cpu: tick(number(14)? + number(15)?),
        children_cpu: tick(number(16)? + number(17)?),
        resident: number(24)?.saturating_mul(page_size()),
    })
}

fn clock_ticks() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| system_value(nix::unistd::SysconfVar::CLK_TCK, 100))
}

fn page_size() -> u64 {
    static PAGE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| system_value(nix::unistd::SysconfVar::PAGE_SIZE, 4096))
}

/// A positive `sysconf` value, or `fallback` where the system does not say.
fn system_value(name: nix::unistd::SysconfVar, fallback: u64) -> u64 {
    nix::unistd::sysconf(name)
        .ok()
        .flatten()
        .and_then(|value| u64::try_from(value).ok())
        .filter(|&value| value > 0)
        .unwrap_or(fallback)
}

/// A process's CPU time (user + system, all threads) from its CPU clock.
pub(crate) fn process_cpu_clock(pid: i32) -> Option<Duration> {
    let clock = nix::time::clock_getcpuclockid(Pid::from_raw(pid)).ok()?;
    let time = nix::time::clock_gettime(clock).ok()?;
    Some(Duration::new(
        time.tv_sec().try_into().ok()?,
        time.tv_nsec().try_into().ok()?,
    ))
}

/// What a sandboxed bot keeps in its private `/tmp` and `/dev/shm`, seen
/// through the magic link to its root. Only a tmpfs of its own counts:
/// until bubblewrap has set the sandbox up, the link shows the host's.
fn private_tmpfs_bytes(pid: i32) -> u64 {
    use std::os::unix::fs::MetadataExt;
    ["tmp", "dev/shm"]
        .iter()
        .filter_map(|dir| {
            let path = Path::new("/proc")
                .join(pid.to_string())
                .join("root")
                .join(dir);
            let fs = nix::sys::statfs::statfs(&path).ok()?;
            if fs.filesystem_type() != nix::sys::statfs::TMPFS_MAGIC {
                return None;
            }
            let theirs = std::fs::metadata(&path).ok()?.dev();
            let ours = std::fs::metadata(Path::new("/").join(dir)).map(|m| m.dev());
            if ours.is_ok_and(|ours| ours == theirs) {
                return None;
            }
            let used = fs.blocks().saturating_sub(fs.blocks_free());
            Some(used.saturating_mul(fs.block_size() as u64))
        })
        .sum()
}

/// A size for people: `1.5 GiB`, `312 MiB`, `900 KiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        // Two decimals, so that a peak just over a limit does not read as
        // the limit itself (`1.01 GiB` over `1 GiB`).
        let text = format!("{value:.2}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        format!("{text} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_within_a_percent_of_its_limit_is_at_it() {
        const MIB: u64 = 1 << 20;
        let at = |peak, limit| MemoryAtLimit::of(peak, limit).is_some();
        // 64 MiB: 1 MiB; 2 GiB: 1%.
        assert!(at(64 * MIB - 520 * 1024, 64 * MIB));
        assert!(!at(62 * MIB, 64 * MIB));
        assert!(at(2028 * MIB, 2048 * MIB) && !at(2026 * MIB, 2048 * MIB));
        assert_eq!(
            MemoryAtLimit::of(64 * MIB, 64 * MIB).unwrap().to_string(),
            "memory limit reached (peak 64 MiB of 64 MiB)"
        );
    }

    #[test]
    fn parses_stat_after_the_last_parenthesis() {
        let text = "42 (a ) b) (c) S 1 42 42 0 -1 4194560 100 0 0 0 \
                    250 50 7 3 20 0 1 0 100 10000000 300 18446744073709551615";
        let stat = parse_stat(text).unwrap();
        let tick = Duration::from_nanos(1_000_000_000 / clock_ticks());
        assert_eq!(stat.own_cpu, tick * 300);
        assert_eq!(stat.children_cpu, tick * 10);
        assert_eq!(stat.resident, 300 * page_size());
        assert!(parse_stat("garbage").is_none());
        assert!(parse_stat("1 (x) S 1").is_none());
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(2 << 30), "2 GiB");
        assert_eq!(human_bytes(1536 << 20), "1.5 GiB");
        assert_eq!(human_bytes(300 << 20), "300 MiB");
        assert_eq!(human_bytes((1 << 30) + (12 << 20)), "1.01 GiB");
        assert_eq!(human_bytes(5 << 20), "5 MiB");
    }

    #[test]
    fn measures_this_process() {
        let me = std::process::id() as i32;
        let tree = process_tree(me);
        assert_eq!(tree[0], me);
        let stat = read_stat(me).unwrap();
        assert!(stat.resident > 0);
        assert!(process_cpu_clock(me).is_some());
    }

    proptest::proptest! {
        #[test]
        fn stat_parsing_never_panics(text in "\\PC{0,300}") {
            let _ = parse_stat(&text);
        }
    }
}
