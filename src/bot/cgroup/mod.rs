//! Kernel containment: a cgroup for each bot and each build.
//!
//! Where the referee may make cgroups (as root on a cgroup v1 hierarchy, or
//! in a delegated cgroup v2 subtree), every bot and every build runs in a
//! cgroup of its own, made under a directory for the run
//! (`referee-PID`) beside the referee's own cgroup. The kernel then:
//!
//! - caps its memory, all its processes together, whatever holds it
//!   (anonymous memory, tmpfs and `/dev/shm` files, `memfd`, SysV
//!   segments, page tables, the page cache it causes), swap included, and
//!   kills it when it is over: the OOM-kill count says so, exactly;
//! - caps its processes and threads (`pids.max`), root included;
//! - counts its CPU time and its peak memory with no sampling gap;
//! - kills all of it, however its processes moved (a new session, a double
//!   fork, a pid that keeps changing): freeze, kill every member, thaw
//!   (v1), or `cgroup.kill` (v2).
//!
//! The version is picked once per run ([`init`]): v2 where its memory and
//! pids controllers can be had, else v1 with memory, pids, cpuacct and
//! freezer mounted, else none, and then the memory watch of
//! [`super::usage`] does what it can (the run says which, once). The run's
//! directory is removed when the referee ends; a SIGKILLed referee's is
//! removed by its watchdog, and any left over (a dead machine) by the next
//! run ([`sweep_stale`]).

pub mod layout;

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The prefix of a run's directory; its referee's pid follows.
const RUN_PREFIX: &str = "referee-";

/// How long a kill may take to empty a cgroup before giving up on it.
const KILL_PATIENCE: Duration = Duration::from_secs(2);

/// Which cgroup version is in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// The directories of one cgroup, by what each is used for: the same
/// directory four times in v2, one per controller's hierarchy in v1.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dirs {
    pub memory: PathBuf,
    pub pids: PathBuf,
    pub cpu: PathBuf,
    pub freezer: PathBuf,
}

impl Dirs {
    fn join(&self, name: &str) -> Dirs {
        Dirs {
            memory: self.memory.join(name),
            pids: self.pids.join(name),
            cpu: self.cpu.join(name),
            freezer: self.freezer.join(name),
        }
    }

    /// Each directory once, in a fixed order (the freezer's last, so that
    /// it is made last and removed first... see [`Cgroup::remove`]).
    fn distinct(&self) -> Vec<&Path> {
        let mut dirs: Vec<&Path> = Vec::with_capacity(4);
        for dir in [&self.memory, &self.pids, &self.cpu, &self.freezer] {
            if !dirs.contains(&dir.as_path()) {
                dirs.push(dir);
            }
        }
        dirs
    }
}

/// The hierarchy in force for this run and the run's directories.
#[derive(Debug)]
pub struct Hierarchy {
    pub version: Version,
    /// The run's directory, in each hierarchy.
    pub run: Dirs,
}

/// What [`init`] found: the hierarchy, or why there is none.
static CHOSEN: OnceLock<Result<Hierarchy, String>> = OnceLock::new();

/// The hierarchy in force, if any (none before [`init`]: the library's
/// unit tests run without cgroups).
pub fn hierarchy() -> Option<&'static Hierarchy> {
    CHOSEN.get()?.as_ref().ok()
}

/// Why bots are not in cgroups, if they are not.
pub fn why_not() -> Option<&'static str> {
    match CHOSEN.get() {
        Some(Ok(_)) => None,
        Some(Err(why)) => Some(why),
        None => Some("cgroups were not set up"),
    }
}

/// Picks the hierarchy for this run and makes the run's directory, once;
/// `disabled` (`--no-cgroups`) keeps the memory watch instead. Sweeps the
/// directories of earlier runs whose referee is dead.
pub fn init(disabled: bool) {
    CHOSEN.get_or_init(|| {
        if disabled {
            return Err("--no-cgroups".into());
        }
        let found = find().and_then(|(version, own)| {
            sweep_stale(&own);
            make_run(version, &own).map(|run| Hierarchy { version, run })
        });
        if let Err(why) = &found {
            tracing::debug!("no cgroups: {why}");
        }
        found
    });
}

/// The hierarchy this process can use, with its own cgroup's directories.
fn find() -> Result<(Version, Dirs), String> {
    let read = |path: &str| std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"));
    let mounts = layout::cgroup_mounts(&read("/proc/self/mountinfo")?);
    let own = layout::own_cgroups(&read("/proc/self/cgroup")?);
    let v2 = layout::v2_dir(&mounts, &own);
    let v2_why = match &v2 {
        Some(dir) => {
            let lacking = layout::v2_lacking(dir, &layout::V2_CONTROLLERS);
            if lacking.is_empty() {
                let dirs = Dirs {
                    memory: dir.clone(),
                    pids: dir.clone(),
                    cpu: dir.clone(),
                    freezer: dir.clone(),
                };
                return Ok((Version::V2, dirs));
            }
            format!(
                "cgroup v2 at {} lacks the {} controller(s)",
                dir.display(),
                lacking.join(" and ")
            )
        }
        None => "no cgroup v2 hierarchy".to_owned(),
    };
    let dir = |controller| layout::v1_dir(&mounts, &own, controller);
    match layout::V1_CONTROLLERS.map(dir) {
        [Some(memory), Some(pids), Some(cpu), Some(freezer)] => Ok((
            Version::V1,
            Dirs {
                memory,
                pids,
                cpu,
                freezer,
            },
        )),
        found => {
            let missing: Vec<&str> = layout::V1_CONTROLLERS
                .iter()
                .zip(&found)
                .filter(|(_, dir)| dir.is_none())
                .map(|(c, _)| *c)
                .collect();
            Err(format!(
                "{v2_why}, and cgroup v1 lacks the {} controller(s)",
                missing.join(", ")
            ))
        }
    }
}

/// Makes the run's directory under the referee's own cgroup.
fn make_run(version: Version, own: &Dirs) -> Result<Dirs, String> {
    let run = own.join(&format!("{RUN_PREFIX}{}", std::process::id()));
    if version == Version::V2 {
        // Children of the run get memory and pids only if the run's parent
        // hands them down (a v2 cgroup with processes of its own cannot,
        // unless it is the root: then the referee needs a delegated
        // cgroup of its own).
        enable_controllers(&own.memory).map_err(|e| {
            format!(
                "cgroup v2: cannot enable the memory and pids controllers below {} ({e}); \
                 run the referee in a cgroup delegated to it, e.g. \
                 `systemd-run --scope -p Delegate=yes referee ...`",
                own.memory.display()
            )
        })?;
    }
    for dir in run.distinct() {
        std::fs::create_dir(dir)
            .map_err(|e| format!("cannot make the cgroup {}: {e}", dir.display()))?;
    }
    if version == Version::V2 {
        enable_controllers(&run.memory)
            .map_err(|e| format!("cgroup v2: {}: {e}", run.memory.display()))?;
    }
    Ok(run)
}

/// Hands the memory and pids controllers down to `dir`'s children.
fn enable_controllers(dir: &Path) -> io::Result<()> {
    let wanted = layout::V2_CONTROLLERS;
    let on = std::fs::read_to_string(dir.join("cgroup.subtree_control"))?;
    if wanted
        .iter()
        .all(|c| on.split_whitespace().any(|o| o == *c))
    {
        return Ok(());
    }
    let request: Vec<String> = wanted.iter().map(|c| format!("+{c}")).collect();
    std::fs::write(dir.join("cgroup.subtree_control"), request.join(" "))
}

/// Removes the directories of earlier runs (`referee-PID` beside this
/// run's) whose referee is no longer running, killing what is left in
/// them first.
pub fn sweep_stale(own: &Dirs) {
    for parent in own.distinct() {
        let Ok(entries) = std::fs::read_dir(parent) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(RUN_PREFIX))
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            if pid as u32 != std::process::id() && !referee_alive(pid) {
                tracing::debug!(pid, "removing the cgroups of a dead referee");
                remove_run(&entry.path());
            }
        }
    }
}

/// Whether `pid` is a live referee (a live process of another program that
/// took the number does not keep a dead referee's cgroups).
fn referee_alive(pid: i32) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let program = cmdline.split(|&b| b == 0).next().unwrap_or_default();
    let name = program.rsplit(|&b| b == b'/').next().unwrap_or_default();
    name.starts_with(b"referee")
}

/// Kills everything in a run's directory (one hierarchy's) and removes it
/// with all its cgroups.
pub fn remove_run(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let child = entry.path();
                kill_in(&child);
                remove_tree(&child);
            }
        }
    }
    kill_in(dir);
    remove_dir(dir);
}

/// Ends the run's containment: kills whatever is left in its cgroups and
/// removes them all, the run's directory included. For the end of the
/// referee, however it ends (the signal thread and the panic hook too).
pub fn finish() {
    if let Some(hierarchy) = hierarchy() {
        // The freezer's hierarchy first: it is the one that kills.
        let run = &hierarchy.run;
        remove_run(&run.freezer);
        for dir in run.distinct() {
            remove_run(dir);
        }
    }
}

/// Where process `pid` is when it is in none of the run's cgroups: its
/// cgroup (the freezer's in v1, which is the one that kills) as
/// `/proc/PID/task/TID/cgroup` names it for a thread of it that is not
/// exiting. `None` when it is in the run's, or when no hierarchy is in
/// force, or no such thread is left, or it cannot be read. For the stray
/// kill: a bot's process found there left its containment (only root
/// without `--sandbox` can), and the run's log says so.
pub fn outside_run(pid: i32) -> Option<String> {
    let hierarchy = hierarchy()?;
    let run = format!("/{RUN_PREFIX}{}", std::process::id());
    // Cgroup v1 shows a thread that has begun to exit at the hierarchy's
    // root: it went nowhere. Such threads are passed over, each thread
    // looked at before and after its read, since it may begin to exit
    // between them; the first other one is where the process is.
    let exiting = |task: &Path| super::procfs::read_stat(task).is_none_or(|s| s.exiting());
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let task = task.path();
        if exiting(&task) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(task.join("cgroup")) else {
            continue;
        };
        if exiting(&task) {
            continue;
        }
        let line = text.lines().find(|line| {
            let mut fields = line.splitn(3, ':');
            let (_, controllers) = (fields.next(), fields.next().unwrap_or_default());
            match hierarchy.version {
                Version::V1 => controllers.split(',').any(|c| c == "freezer"),
                Version::V2 => controllers.is_empty(),
            }
        })?;
        let path = line.splitn(3, ':').nth(2)?;
        let inside = path
            .match_indices(&run)
            .any(|(at, _)| matches!(path.as_bytes().get(at + run.len()), None | Some(b'/')));
        return (!inside).then(|| path.to_owned());
    }
    None
}

/// The run's directories, for the watchdog to remove should the referee
/// be killed.
pub fn run_dirs() -> Vec<PathBuf> {
    hierarchy().map_or_else(Vec::new, |h| {
        // The freezer's (v1) first: killing needs it.
        let mut dirs = vec![h.run.freezer.clone()];
        dirs.extend(h.run.distinct().into_iter().map(Path::to_owned));
        dirs.dedup();
        dirs
    })
}

/// What a new cgroup is for: its name, and whether it is a build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Bot,
    Build,
}

/// One bot's (or build's) cgroup. Dropping it kills whatever is left in
/// it and removes it.
#[derive(Debug)]
pub struct Cgroup {
    version: Version,
    dirs: Dirs,
    memory: Option<u64>,
    processes: Option<u64>,
    /// v2: `memory.peak`, kept open, since a write resets the peak as this
    /// open file sees it (kernel 6.12 and later).
    peak: Option<std::sync::Mutex<File>>,
    /// What the kernel had counted when it was taken.
    base: Counts,
    /// v1: the files read at every game, kept open (a read is then one
    /// system call, not three: the dealer reads them once a game).
    open: Option<OpenFiles>,
    /// Whether its bot made a cgroup below it (see [`Cgroup::has_children`]).
    children: ChildWatch,
}

/// See [`Cgroup::oom_notice`]. Closing it ends the registration.
#[derive(Debug)]
pub struct OomNotice {
    fd: std::os::fd::OwnedFd,
    version: Version,
}

impl OomNotice {
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.fd.as_fd()
    }

    /// What to wait for on [`OomNotice::fd`]: a v2 file's change is an
    /// edge, taken by reading it again ([`OomNotice::take`]).
    pub fn events(&self) -> nix::sys::epoll::EpollFlags {
        use nix::sys::epoll::EpollFlags;
        match self.version {
            Version::V1 => EpollFlags::EPOLLIN,
            Version::V2 => EpollFlags::EPOLLPRI | EpollFlags::EPOLLET,
        }
    }

    /// Takes the notice, so that the descriptor waits for the next one.
    pub fn take(&self) {
        let mut buffer = [0u8; 512];
        let _ = match self.version {
            Version::V1 => nix::unistd::read(&self.fd, &mut buffer),
            Version::V2 => nix::sys::uio::pread(&self.fd, &mut buffer, 0),
        };
    }
}

/// Whether a cgroup's bot made a cgroup below it, asked at every game
/// that is recorded: an inotify watch on each of its directories (a
/// `mkdir` there, the only way to make a cgroup, is an event before it
/// returns), read without waiting. A game then costs one system call where
/// listing the four directories of a v1 cgroup cost twenty. Once anything
/// was made, and where no watch could be had (inotify's instances are
/// counted per user), the directories are listed.
#[derive(Debug, Default)]
struct ChildWatch {
    inotify: Option<nix::sys::inotify::Inotify>,
    made: AtomicBool,
}

impl ChildWatch {
    fn on(dirs: &[&Path]) -> ChildWatch {
        use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
        let watch = || -> nix::Result<Inotify> {
            let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
            for dir in dirs {
                inotify.add_watch(*dir, AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO)?;
            }
            Ok(inotify)
        };
        let inotify = watch()
            .inspect_err(|e| tracing::debug!("no inotify watch on a cgroup ({e}): it is listed"))
            .ok();
        ChildWatch {
            inotify,
            made: Default::default(),
        }
    }

    /// Whether something may have been made below since the watch began.
    fn maybe_made(&self) -> bool {
        if self.made.load(Ordering::Relaxed) {
            return true;
        }
        let Some(inotify) = &self.inotify else {
            return true;
        };
        match inotify.read_events() {
            Err(nix::errno::Errno::EAGAIN) => false,
            // An event, an overflow or an error: look.
            _ => {
                self.made.store(true, Ordering::Relaxed);
                true
            }
        }
    }
}

/// A v1 cgroup's CPU time and peak memory files, open.
#[derive(Debug)]
struct OpenFiles {
    cpu: File,
    peak: File,
}

impl OpenFiles {
    fn open(dirs: &Dirs) -> Option<OpenFiles> {
        Some(OpenFiles {
            cpu: File::open(dirs.cpu.join("cpuacct.usage")).ok()?,
            peak: File::options()
                .read(true)
                .write(true)
                .open(dirs.memory.join("memory.max_usage_in_bytes"))
                .ok()?,
        })
    }
}

/// The number a cgroup file holds, read from its start.
fn pread_number(file: &File) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let mut buffer = [0u8; 32];
    let n = file.read_at(&mut buffer, 0).ok()?;
    std::str::from_utf8(&buffer[..n]).ok()?.trim().parse().ok()
}

impl Cgroup {
    /// Makes a cgroup in the run's directory, with its limits: `memory`
    /// bytes (swap included) and `processes` processes and threads. `None`
    /// when no hierarchy is in force.
    pub fn create(
        kind: Kind,
        memory: Option<u64>,
        processes: Option<u64>,
    ) -> io::Result<Option<Cgroup>> {
        let Some(hierarchy) = hierarchy() else {
            return Ok(None);
        };
        let (dirs, set, base) = match take_idle(memory, processes) {
            Some(idle) => idle,
            None => (make_dirs(hierarchy, kind)?, None, None),
        };
        let mut cgroup = Cgroup {
            version: hierarchy.version,
            dirs,
            memory,
            processes,
            peak: None,
            base: Counts::default(),
            open: None,
            children: ChildWatch::default(),
        };
        // A cgroup used before keeps its limits when they are the same, and
        // was counted and reset when it was cleaned: nothing to write.
        if set != Some((memory, processes)) {
            cgroup.set_limits()?;
        }
        cgroup.base = match base {
            Some(base) => base,
            None => {
                let _ = cgroup.take_peak();
                cgroup.counts()
            }
        };
        if cgroup.version == Version::V1 {
            cgroup.open = OpenFiles::open(&cgroup.dirs);
        }
        cgroup.children = ChildWatch::on(&cgroup.dirs.distinct());
        if cgroup.version == Version::V2 {
            cgroup.peak = File::options()
                .read(true)
                .write(true)
                .open(cgroup.dirs.memory.join("memory.peak"))
                .ok()
                .map(std::sync::Mutex::new);
        }
        Ok(Some(cgroup))
    }

    /// Counts its CPU time and peak memory from now on: for a cgroup a
    /// launcher waited in before it became the bot (see
    /// [`super::standby`]).
    pub fn count_from_now(&mut self) {
        let _ = self.take_peak();
        if let Some(cpu) = self.cpu_total() {
            self.base.cpu = cpu;
        }
    }

    /// The kernel's counts that cannot be reset, as they stand now.
    fn counts(&self) -> Counts {
        Counts {
            oom_kills: self.oom_kills_total(),
            cap_hits: read_keyed(&self.dirs.pids.join("pids.events"), "max").unwrap_or(0),
            cpu: self.cpu_total().unwrap_or_default(),
        }
    }

    /// The kernel's count of OOM kills in the cgroup since it was made.
    fn oom_kills_total(&self) -> u64 {
        let file = match self.version {
            Version::V1 => "memory.oom_control",
            Version::V2 => "memory.events",
        };
        read_keyed(&self.dirs.memory.join(file), "oom_kill").unwrap_or(0)
    }

    fn set_limits(&self) -> io::Result<()> {
        let (memory, pids) = (&self.dirs.memory, &self.dirs.pids);
        match self.version {
            Version::V1 => {
                // Memory plus swap may never be below memory: lifted first
                // (a cgroup used before may have a lower one), set last.
                let memsw = memory.join("memory.memsw.limit_in_bytes");
                let swap = memsw.exists();
                if swap {
                    write_file(&memsw, "-1")?;
                }
                let bytes = self
                    .memory
                    .map_or_else(|| "-1".to_owned(), |b| b.to_string());
                write_file(&memory.join("memory.limit_in_bytes"), &bytes)?;
                if swap && self.memory.is_some() {
                    write_file(&memsw, &bytes)?;
                }
            }
            Version::V2 => {
                let bytes = self
                    .memory
                    .map_or_else(|| "max".to_owned(), |b| b.to_string());
                write_file(&memory.join("memory.max"), &bytes)?;
                let swap = memory.join("memory.swap.max");
                if swap.exists() {
                    write_file(&swap, "0")?;
                }
            }
        }
        let cap = self
            .processes
            .map_or_else(|| "max".to_owned(), |n| n.to_string());
        write_file(&pids.join("pids.max"), &cap)
    }

    /// The files a single-threaded process writes `0` (itself) to, to
    /// enter: v1's `tasks` and v2's `cgroup.procs`.
    ///
    /// Why `tasks` on v1: moving a whole thread group (`cgroup.procs`, or
    /// any pid but 0) takes the kernel's `cgroup_threadgroup_rwsem` for
    /// writing, whose first writer after a quiet spell waits an RCU grace
    /// period: 10–20 ms for the first bot of a run (docs/PERFORMANCE.md
    /// §14). A thread moving itself takes no such lock, and a launcher
    /// about to `exec` is its process's only thread. v2 has no such file
    /// outside threaded cgroups.
    pub fn entry_files(&self) -> Vec<PathBuf> {
        let file = match self.version {
            Version::V1 => "tasks",
            Version::V2 => "cgroup.procs",
        };
        self.dirs
            .distinct()
            .into_iter()
            .map(|d| d.join(file))
            .collect()
    }

    /// Its memory limit, bytes.
    pub fn memory_limit(&self) -> Option<u64> {
        self.memory
    }

    /// Its cap on processes and threads.
    pub fn process_cap(&self) -> Option<u64> {
        self.processes
    }

    /// How many of its processes the kernel killed for its memory limit.
    /// Not `failcnt`, which also counts reclaim that succeeded.
    pub fn oom_kills(&self) -> u64 {
        self.oom_kills_total().saturating_sub(self.base.oom_kills)
    }

    /// A descriptor the kernel makes ready when it runs out of memory in
    /// this cgroup, so that a watch can sleep until then instead of
    /// reading the count of OOM kills every few milliseconds (a wake-up
    /// that took CPU time from the bot; issue 50). v1: an eventfd
    /// registered for `memory.oom_control` through
    /// `cgroup.event_control`; v2: `memory.events`, which the kernel
    /// marks changed (a priority event) when it counts an OOM or a kill.
    pub fn oom_notice(&self) -> io::Result<OomNotice> {
        let memory = &self.dirs.memory;
        let fd = match self.version {
            Version::V1 => {
                use std::os::fd::AsRawFd;
                let flags = nix::sys::eventfd::EfdFlags::EFD_CLOEXEC
                    | nix::sys::eventfd::EfdFlags::EFD_NONBLOCK;
                let event = nix::sys::eventfd::EventFd::from_value_and_flags(0, flags)?;
                let control = File::open(memory.join("memory.oom_control"))?;
                let line = format!("{} {}", event.as_raw_fd(), control.as_raw_fd());
                write_file(&memory.join("cgroup.event_control"), &line)?;
                std::os::fd::OwnedFd::from(event)
            }
            Version::V2 => File::open(memory.join("memory.events"))?.into(),
        };
        Ok(OomNotice {
            fd,
            version: self.version,
        })
    }

    /// Whether a fork or a new thread failed at its process cap.
    pub fn hit_process_cap(&self) -> bool {
        read_keyed(&self.dirs.pids.join("pids.events"), "max")
            .is_some_and(|n| n > self.base.cap_hits)
    }

    /// Its CPU time so far, user and system, all its processes, those gone
    /// included.
    pub fn cpu(&self) -> Option<Duration> {
        Some(self.cpu_total()?.saturating_sub(self.base.cpu))
    }

    /// The cgroup's CPU time since it was made.
    fn cpu_total(&self) -> Option<Duration> {
        match self.version {
            Version::V1 => match &self.open {
                Some(open) => pread_number(&open.cpu),
                None => read_number(&self.dirs.cpu.join("cpuacct.usage")),
            }
            .map(Duration::from_nanos),
            Version::V2 => {
                read_keyed(&self.dirs.cpu.join("cpu.stat"), "usage_usec").map(Duration::from_micros)
            }
        }
    }

    /// The most memory it was charged at once since [`Cgroup::take_peak`]
    /// was last called (or its start), leaving the count alone.
    pub fn peak(&self) -> Option<u64> {
        match self.version {
            Version::V1 => match &self.open {
                Some(open) => pread_number(&open.peak),
                None => read_number(&self.dirs.memory.join("memory.max_usage_in_bytes")),
            },
            Version::V2 => read_number(&self.dirs.memory.join("memory.peak")),
        }
    }

    /// The most memory it was charged at once since the last call (or its
    /// start), and starts counting anew from what it holds now.
    pub fn take_peak(&self) -> Option<u64> {
        match self.version {
            Version::V1 => {
                let Some(open) = &self.open else {
                    let file = self.dirs.memory.join("memory.max_usage_in_bytes");
                    let peak = read_number(&file);
                    let _ = write_file(&file, "0");
                    return peak;
                };
                use std::os::unix::fs::FileExt;
                let peak = pread_number(&open.peak);
                let _ = open.peak.write_at(b"0", 0);
                peak
            }
            Version::V2 => {
                let Some(peak) = &self.peak else {
                    return read_number(&self.dirs.memory.join("memory.peak"));
                };
                let mut file = peak
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let mut text = String::new();
                file.seek(io::SeekFrom::Start(0)).ok()?;
                file.read_to_string(&mut text).ok()?;
                // Kernels before 6.12 refuse the write: then the peak is
                // the cgroup's whole life's.
                let _ = file.write_all(b"reset\n");
                text.trim().parse().ok()
            }
        }
    }

    /// Kills every process in it, wherever they moved, and waits (briefly)
    /// until it is empty; whether it is.
    pub fn kill(&self) -> bool {
        kill_in(&self.dirs.freezer)
    }

    /// Kills what is still in it, and keeps it for the next bot when it is
    /// empty, else removes it.
    fn recycle(&self) {
        if !REUSE.load(Ordering::Relaxed) || !self.kill() || self.has_children() {
            return self.remove();
        }
        let ended = Ended {
            dirs: self.dirs.clone(),
            version: self.version,
            limits: (self.memory, self.processes),
        };
        if self.version == Version::V2 {
            idle().push(ended.cleaned());
            return;
        }
        // The page cache still charged to it would count as the next bot's
        // memory: emptied on a thread of its own (a millisecond each, which
        // the game need not wait for).
        let (dirty, wake) = &DIRTY;
        dirty
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(ended);
        wake.notify_one();
        static CLEANER: std::sync::Once = std::sync::Once::new();
        CLEANER.call_once(|| {
            let started = std::thread::Builder::new()
                .name("cgroup-cleaner".into())
                .spawn(clean_dirty);
            if let Err(e) = started {
                tracing::warn!("cannot start the cgroup cleaner: {e}; cgroups are not used again");
            }
        });
    }

    /// Removes it; what is still in it is killed first.
    fn remove(&self) {
        self.kill();
        // The freezer's first: no process can be moved in once it is gone.
        remove_tree(&self.dirs.freezer);
        for dir in self.dirs.distinct() {
            remove_tree(dir);
        }
    }

    /// Whether its bot made a cgroup of its own below it (in any
    /// hierarchy): killed, counted and removed with it all the same, but
    /// never handed to the next bot, and said in the bot's record.
    pub fn has_children(&self) -> bool {
        self.children.maybe_made()
            && self
                .dirs
                .distinct()
                .iter()
                .any(|dir| !child_dirs(dir).is_empty())
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.recycle();
    }
}

/// What a cgroup had counted when it was taken for a bot: a cgroup is used
/// again (making and removing one costs milliseconds of kernel time, as
/// much as a short game), and these counts cannot be reset.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    oom_kills: u64,
    cap_hits: u64,
    cpu: Duration,
}

/// An ended bot's cgroup, empty, on its way to be used again.
struct Ended {
    dirs: Dirs,
    version: Version,
    /// The limits it has (memory, processes).
    limits: (Option<u64>, Option<u64>),
}

/// What an ended bot's cgroup may stay charged with and be used again
/// without being emptied: the kernel memory of its freed objects, which
/// the kernel releases late (a few hundred KiB). Emptying it
/// (`memory.force_empty`) shrinks every cache of the kernel's and cost a
/// tournament of short games a sixth of its CPU time (docs/PERFORMANCE.md
/// §14); what is left counts in the next bot's peak, as it would in a new
/// cgroup's.
const LEFTOVER: u64 = 1 << 20;

/// A cgroup ready for the next bot: its limits, and what the kernel had
/// counted when it was cleaned (its peak and, in v1, its CPU time reset).
type Idle = (Dirs, (Option<u64>, Option<u64>), Counts);

impl Ended {
    /// Empties it of the page cache still charged to it when there is
    /// more than [`LEFTOVER`] (v1: it would count as the next bot's
    /// memory), resets what can be reset and counts the rest.
    fn cleaned(self) -> Idle {
        let mut cgroup = Cgroup {
            version: self.version,
            dirs: self.dirs,
            memory: self.limits.0,
            processes: self.limits.1,
            peak: None,
            base: Counts::default(),
            open: None,
            children: ChildWatch::default(),
        };
        if cgroup.version == Version::V1 {
            let memory = &cgroup.dirs.memory;
            let charged = read_number(&memory.join("memory.usage_in_bytes"));
            if charged.is_none_or(|bytes| bytes > LEFTOVER) {
                let _ = write_file(&memory.join("memory.force_empty"), "0");
            }
            let _ = write_file(&memory.join("memory.max_usage_in_bytes"), "0");
        }
        let counts = cgroup.counts();
        // Taken out, not cloned: what is forgotten must hold nothing on the
        // heap (a clone leaked its four paths for every bot, 0.7 KB a game
        // of a tournament: 25 MB after 20,000 games).
        let dirs = std::mem::take(&mut cgroup.dirs);
        // Not removed: it is idle now.
        std::mem::forget(cgroup);
        (dirs, self.limits, counts)
    }
}

/// Cgroups of bots that have ended, empty, ready for the next.
fn idle() -> std::sync::MutexGuard<'static, Vec<Idle>> {
    static IDLE: std::sync::Mutex<Vec<Idle>> = std::sync::Mutex::new(Vec::new());
    IDLE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An idle cgroup, one with the same limits if there is one: its
/// directories, its limits, and its counts.
#[allow(clippy::type_complexity)]
fn take_idle(
    memory: Option<u64>,
    processes: Option<u64>,
) -> Option<(Dirs, Option<(Option<u64>, Option<u64>)>, Option<Counts>)> {
    let mut idle = idle();
    // A killed process counts in `pids.current` until it is reaped (an
    // orphan is reaped by the referee's stray scan, a moment later): a
    // cgroup still counting one would hold the next bot under its process
    // cap for what the last one did. Such a cgroup waits for a later bot.
    let empty = |dirs: &Dirs| read_number(&dirs.pids.join("pids.current")).unwrap_or(0) == 0;
    let at = idle
        .iter()
        .position(|(dirs, limits, _)| *limits == (memory, processes) && empty(dirs))
        .or_else(|| idle.iter().rposition(|(dirs, _, _)| empty(dirs)))?;
    let (dirs, limits, counts) = idle.swap_remove(at);
    Some((dirs, Some(limits), Some(counts)))
}

/// Whether an ended bot's cgroup is kept for the next (see [`stop_reuse`]).
static REUSE: AtomicBool = AtomicBool::new(true);

/// Cgroups of bots that end from now on are removed, not kept: the run
/// starts no more bots. Spares the cleaner's thread and its emptying of
/// each cgroup (about a millisecond of kernel time in v1).
pub fn stop_reuse() {
    REUSE.store(false, Ordering::Relaxed);
}

/// Cgroups (v1) of bots that have ended, still charged with page cache.
static DIRTY: (std::sync::Mutex<Vec<Ended>>, std::sync::Condvar) =
    (std::sync::Mutex::new(Vec::new()), std::sync::Condvar::new());

/// The cleaner thread: cleans each ended bot's cgroup (a millisecond
/// each, which the games need not wait for), and makes it idle.
fn clean_dirty() {
    let (dirty, wake) = &DIRTY;
    loop {
        let next = {
            let mut queue = dirty
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            while queue.is_empty() {
                queue = wake
                    .wait(queue)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            queue.pop()
        };
        if let Some(ended) = next {
            let idle_one = ended.cleaned();
            idle().push(idle_one);
        }
    }
}

/// Makes a new cgroup in the run's directory.
fn make_dirs(hierarchy: &Hierarchy, kind: Kind) -> io::Result<Dirs> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let name = match kind {
        Kind::Bot => "bot-",
        Kind::Build => "build-",
    };
    let dirs = hierarchy
        .run
        .join(&format!("{name}{}", NEXT.fetch_add(1, Ordering::Relaxed)));
    for dir in dirs.distinct() {
        std::fs::create_dir(dir).map_err(|e| in_file(dir, e))?;
    }
    Ok(dirs)
}

/// Kills every process of the cgroup at `dir` (its freezer's directory in
/// v1) and of the cgroups below it (a bot run as root can make its own
/// and move into them): `cgroup.kill` where the kernel has it (v2, 5.14
/// and later), else freeze, kill each member, thaw, until they are empty.
/// A frozen process cannot fork or make a cgroup, and a freeze takes the
/// cgroups below too, so none is missed. Whether they are empty now.
fn kill_in(dir: &Path) -> bool {
    if subtree_members(dir).is_empty() {
        return true;
    }
    let started = std::time::Instant::now();
    let kill_file = dir.join("cgroup.kill");
    if kill_file.exists() && write_file(&kill_file, "1").is_ok() {
        return wait_empty(dir, started);
    }
    let (state, frozen, thawed) = if dir.join("freezer.state").exists() {
        (dir.join("freezer.state"), "FROZEN", "THAWED")
    } else {
        (dir.join("cgroup.freeze"), "1", "0")
    };
    while started.elapsed() < KILL_PATIENCE {
        let _ = write_file(&state, frozen);
        wait_frozen(dir, &state, started);
        let pids = subtree_members(dir);
        for &pid in &pids {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = write_file(&state, thawed);
        if pids.is_empty() || wait_empty(dir, started) {
            return true;
        }
    }
    tracing::warn!("{}: processes left after SIGKILL", dir.display());
    false
}

/// `dir` and every cgroup below it, the deepest first (the order they
/// can be removed in).
fn subtree(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![(dir.to_path_buf(), false)];
    while let Some((at, seen)) = todo.pop() {
        if seen {
            found.push(at);
            continue;
        }
        todo.push((at.clone(), true));
        for child in child_dirs(&at) {
            todo.push((child, false));
        }
    }
    found
}

/// The cgroups directly below `dir`.
fn child_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect()
}

/// The processes of `dir` and of every cgroup below it.
fn subtree_members(dir: &Path) -> Vec<i32> {
    subtree(dir)
        .iter()
        .flat_map(|at| members(&at.join("cgroup.procs")))
        .collect()
}

/// Waits until a freeze has taken (v1 `FREEZING` becomes `FROZEN`; v2's
/// `cgroup.events` says `frozen 1`), a moment at most.
fn wait_frozen(dir: &Path, state: &Path, started: std::time::Instant) {
    let limit = Duration::from_millis(100);
    let begun = std::time::Instant::now();
    while begun.elapsed() < limit && started.elapsed() < KILL_PATIENCE {
        let done = if state.ends_with("freezer.state") {
            std::fs::read_to_string(state).is_ok_and(|s| s.trim() == "FROZEN")
        } else {
            read_keyed(&dir.join("cgroup.events"), "frozen") == Some(1)
        };
        if done {
            return;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Waits until `dir` and the cgroups below it hold no process; whether
/// it came to that.
fn wait_empty(dir: &Path, started: std::time::Instant) -> bool {
    loop {
        if subtree_members(dir).is_empty() {
            return true;
        }
        if started.elapsed() >= KILL_PATIENCE {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// The processes a `cgroup.procs` file lists.
fn members(procs: &Path) -> Vec<i32> {
    std::fs::read_to_string(procs)
        .unwrap_or_default()
        .split_ascii_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect()
}

/// Removes an empty cgroup and the cgroups below it, the deepest first.
fn remove_tree(dir: &Path) {
    for at in subtree(dir) {
        remove_dir(&at);
    }
}

/// Removes an empty cgroup; a moment's retries while its last processes
/// finish exiting. A cgroup already gone is fine.
fn remove_dir(dir: &Path) {
    for _ in 0..500 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(e) if e.raw_os_error() == Some(nix::libc::EBUSY) => {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(e) => {
                tracing::warn!("cannot remove the cgroup {}: {e}", dir.display());
                return;
            }
        }
    }
    tracing::warn!("cannot remove the cgroup {}: still busy", dir.display());
}

fn write_file(path: &Path, text: &str) -> io::Result<()> {
    // One write: a cgroup file takes a value per write call.
    let mut file = File::options()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| in_file(path, e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| in_file(path, e))
}

fn in_file(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn read_number(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn read_keyed(path: &Path, key: &str) -> Option<u64> {
    layout::keyed(&std::fs::read_to_string(path).ok()?, key)
}

/// Whether bots can have an IPC namespace and a `/dev/shm` of their own:
/// the referee holds CAP_SYS_ADMIN (root, outside a locked-down container).
pub fn private_ipc_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        const CAP_SYS_ADMIN: u32 = 21;
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let effective = status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .unwrap_or(0);
        effective & (1 << CAP_SYS_ADMIN) != 0 && Path::new("/dev/shm").is_dir()
    })
}

/// Logs, once per run, how bots are contained.
pub fn log_containment() {
    let ipc = if private_ipc_available() {
        "; an IPC namespace and a /dev/shm of its own for each bot"
    } else {
        ""
    };
    match hierarchy() {
        Some(h) => tracing::info!(
            "containment: a cgroup {} for each bot and build under {} (memory, processes, \
             CPU time and the kill by the kernel){ipc}; process groups, resource limits, \
             a subreaper and a watchdog",
            match h.version {
                Version::V1 => "v1",
                Version::V2 => "v2",
            },
            h.run.memory.display()
        ),
        None => tracing::info!(
            "containment: memory by use, all processes of each bot, sampled every {}ms, no \
             process cap, CPU time sampled ({}){ipc}; process groups, resource limits, a \
             subreaper and a watchdog",
            super::procfs::SAMPLE_INTERVAL.as_millis(),
            why_not().unwrap_or("no cgroups")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v2 cgroup's files, as the kernel shows them, in a plain folder.
    fn fake_v2(dir: &Path) -> Cgroup {
        let files = [
            ("memory.max", "max\n"),
            ("memory.swap.max", "max\n"),
            ("memory.peak", "0\n"),
            ("memory.events", "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n"),
            ("pids.max", "max\n"),
            ("pids.events", "max 0\n"),
            (
                "cpu.stat",
                "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n",
            ),
            ("cgroup.procs", ""),
        ];
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let dir = dir.to_owned();
        Cgroup {
            version: Version::V2,
            dirs: Dirs {
                memory: dir.clone(),
                pids: dir.clone(),
                cpu: dir.clone(),
                freezer: dir,
            },
            memory: Some(64 << 20),
            processes: Some(64),
            peak: None,
            base: Counts::default(),
            open: None,
            children: ChildWatch::default(),
        }
    }

    #[test]
    fn v2_files_are_written_and_read() {
        let dir = tempfile::tempdir().unwrap();
        let cgroup = fake_v2(dir.path());
        cgroup.set_limits().unwrap();
        let read = |name| std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert_eq!(read("memory.max"), (64u64 << 20).to_string());
        assert_eq!(read("memory.swap.max"), "0");
        assert_eq!(read("pids.max"), "64");
        assert_eq!(cgroup.oom_kills(), 1);
        assert!(!cgroup.hit_process_cap());
        assert_eq!(cgroup.cpu(), Some(Duration::from_micros(1500)));
        std::fs::write(dir.path().join("memory.peak"), "4096\n").unwrap();
        assert_eq!(cgroup.take_peak(), Some(4096));
        std::fs::write(dir.path().join("pids.events"), "max 3\n").unwrap();
        assert!(cgroup.hit_process_cap());
        assert_eq!(cgroup.entry_files(), vec![dir.path().join("cgroup.procs")]);
        // Nothing in it: killing it is reading cgroup.procs.
        cgroup.kill();
        std::mem::forget(cgroup);
    }

    #[test]
    fn the_v1_directories_are_one_per_controller() {
        let dirs = Dirs {
            memory: "/m/r".into(),
            pids: "/p/r".into(),
            cpu: "/c/r".into(),
            freezer: "/f/r".into(),
        };
        let bot = dirs.join("bot-1");
        assert_eq!(bot.distinct().len(), 4);
        assert_eq!(bot.pids, Path::new("/p/r/bot-1"));
        let same = Dirs {
            memory: "/u".into(),
            pids: "/u".into(),
            cpu: "/u".into(),
            freezer: "/u".into(),
        };
        assert_eq!(same.distinct(), vec![Path::new("/u")]);
    }

    #[test]
    fn a_dead_referees_pid_is_not_alive() {
        assert!(!referee_alive(i32::MAX));
    }
}
