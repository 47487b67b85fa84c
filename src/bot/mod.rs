//! The one layer that owns a bot process.
//!
//! A [`Bot`] is a program started in its own process group with its three
//! standard streams piped. The referee talks to it with deadlines on both
//! directions, so a bot can neither hang the referee by never answering nor
//! by never reading. Its stdout is read through a [`LineReader`] with a hard
//! cap on line length; its stderr is drained by a background task into a
//! bounded [`stderr::Tail`]. When the referee is done with a bot it closes
//! its input, gives it a grace period to exit, then signals the whole group
//! (SIGTERM, then SIGKILL) and reaps it. A [`groups`] registry lets signal
//! handlers and panics kill every live group, and every bot carries a
//! parent-death signal, so no bot outlives the referee.
//!
//! Games never touch `tokio::process`; they use this module.

pub mod boxes;
pub mod build;
pub mod cgroup;
pub mod clock;
pub mod command;
mod descriptors;
mod eager;
pub mod environment;
mod exit;
pub mod groups;
pub mod language;
pub mod lines;
mod procfs;
pub mod program;
pub mod sandbox;
pub mod scheduling;
pub mod spawn;
mod standby;
pub mod status;
pub mod stderr;
pub mod usage;

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::Signal;
use nix::time::ClockId;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::time::{Instant, sleep_until, timeout, timeout_at};

use eager::EagerRead;
pub use environment::Environment;
use exit::ExitWatch;
use groups::GroupGuard;
pub use lines::{LineReader, Next};
pub use program::{SpawnError, use_launcher};
pub use spawn::{
    DROP_COMMAND, LAUNCH_COMMAND, SANDBOX_COMMAND, drop_main, launch_main, run_helper, sandbox_main,
};
pub use status::Ended;
pub use usage::{MemoryAtLimit, MemoryOverrun, Usage, UsageMark};

use crate::outcome::{LimitKind, Phase, Status, Verdict};

/// Default cap on one line from a bot.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024;
/// Default amount of a bot's stderr kept (the most recent bytes).
pub const DEFAULT_STDERR_KEEP: usize = 64 * 1024;
/// Default time a bot has to exit after its input is closed.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);
/// Default start-up allowance: enough for a JVM, or Python importing a
/// few libraries, on a loaded machine.
pub const DEFAULT_STARTUP: Duration = Duration::from_secs(10);
/// Time between SIGTERM and SIGKILL when a bot outstays its grace period.
pub const TERM_TO_KILL: Duration = Duration::from_millis(500);
/// How long to wait for an exit status once a bot's pipe has closed, before
/// concluding that it closed the pipe but is still running.
const EXIT_PROBE: Duration = Duration::from_millis(100);
/// How long to keep reading a killed bot's pipes for its last words.
const FINAL_DRAIN: Duration = Duration::from_millis(200);
/// How long a process may take to die after SIGKILL before the referee
/// stops waiting for it (a process stuck in the kernel cannot be hurried).
const KILL_WAIT: Duration = Duration::from_secs(5);

/// What to run.
#[derive(Clone, Debug)]
pub struct BotSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// Working directory; the referee's own when `None`.
    pub dir: Option<PathBuf>,
    /// Directories a sandboxed bot must not see (other entrants, test
    /// data); its own directories are shown again (see [`spawn::sandboxed`]).
    pub hide: Vec<PathBuf>,
    /// Its environment: a bot's or build's clean one, or the referee's own
    /// for the organiser's programs (see [`environment`]).
    pub env: Environment,
}

impl BotSpec {
    /// Where its program is: a bare name beside its working directory (an
    /// entrant's folder, a judge's game file), then on `PATH`; without one
    /// (named on the command line), in the current directory, then on
    /// `PATH` (see [`program::resolve`]).
    pub fn locate(&self) -> Result<PathBuf, SpawnError> {
        match &self.dir {
            Some(dir) => program::resolve_beside(&self.program, dir),
            None => program::resolve(&self.program),
        }
    }
}

/// Runs `f` to its end on a runtime of its own: for tests of async code.
#[cfg(test)]
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a test runtime")
        .block_on(f)
}

/// Limits that apply to every bot of a run (kept in a league's database
/// as JSON, for its workers).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct BotLimits {
    pub max_line: usize,
    pub stderr_keep: usize,
    pub grace: Duration,
    /// Extra time for a bot process's first reply, on top of the move
    /// limit: a JVM or Python start must not count against its first move.
    pub startup: Duration,
    /// Copy the bot's stderr to the referee's stderr as well as capturing it.
    pub echo_stderr: bool,
    /// Resident memory of all the bot's processes together, bytes: past
    /// it the bot is killed (see [`usage`]). `None` measures without a limit.
    pub memory: Option<u64>,
    /// Kernel resource limits set on each bot process.
    pub resources: Resources,
    /// Run each bot under bubblewrap (see [`spawn::sandboxed`]).
    pub sandbox: bool,
}

/// Resource limits (`setrlimit`) for a bot and everything it starts.
/// `None` leaves a limit as the referee has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Resources {
    /// Address space of each process, bytes (RLIMIT_AS): opt-in, since a
    /// JVM reserves far more than it uses (see [`usage`]).
    pub address_space: Option<u64>,
    /// Processes and threads of the bot, all together: its cgroup's
    /// `pids.max` (no rlimit: RLIMIT_NPROC counts all of the user's
    /// processes, and not root's).
    pub processes: Option<u64>,
    /// Largest file it may write, bytes (RLIMIT_FSIZE).
    pub file_size: Option<u64>,
    /// Open file descriptors (RLIMIT_NOFILE).
    pub open_files: Option<u64>,
    /// CPU time, seconds (RLIMIT_CPU).
    pub cpu_seconds: Option<u64>,
}

impl Default for Resources {
    fn default() -> Resources {
        Resources {
            address_space: None,
            processes: None,
            file_size: Some(DEFAULT_FILE_SIZE),
            open_files: Some(DEFAULT_OPEN_FILES),
            cpu_seconds: None,
        }
    }
}

impl Resources {
    /// No limits at all (for builds, which may need a lot).
    pub const NONE: Resources = Resources {
        address_space: None,
        processes: None,
        file_size: None,
        open_files: None,
        cpu_seconds: None,
    };

    fn fields(&self) -> [Option<u64>; 5] {
        [
            self.address_space,
            self.processes,
            self.file_size,
            self.open_files,
            self.cpu_seconds,
        ]
    }

    /// The limits as the launcher's arguments (see [`spawn::LAUNCH_COMMAND`]):
    /// one number per limit, `-` for none.
    pub fn to_args(&self) -> Vec<String> {
        self.fields()
            .iter()
            .map(|limit| limit.map_or_else(|| "-".to_owned(), |n| n.to_string()))
            .collect()
    }

    /// The limits from [`Resources::to_args`]'s arguments.
    pub fn from_args(args: &[std::ffi::OsString]) -> Option<Resources> {
        let parsed: Vec<Option<u64>> = args
            .iter()
            .map(|arg| match arg.to_str()? {
                "-" => Some(None),
                n => n.parse().ok().map(Some),
            })
            .collect::<Option<_>>()?;
        let [address_space, processes, file_size, open_files, cpu_seconds] =
            <[Option<u64>; 5]>::try_from(parsed).ok()?;
        Some(Resources {
            address_space,
            processes,
            file_size,
            open_files,
            cpu_seconds,
        })
    }
}

/// Default limit of a bot's resident memory, all its processes together:
/// 2 GiB.
pub const DEFAULT_MEMORY: u64 = 2 << 30;
/// Default largest file a bot may write: 1 GiB.
pub const DEFAULT_FILE_SIZE: u64 = 1 << 30;
/// Default cap on a bot's processes and threads, where cgroups hold it:
/// a JVM starts a few dozen threads, Node a dozen, Python one.
pub const DEFAULT_PROCESSES: u64 = 256;
/// Default number of open files of a bot.
pub const DEFAULT_OPEN_FILES: u64 = 1024;

impl Default for BotLimits {
    fn default() -> BotLimits {
        BotLimits {
            max_line: DEFAULT_MAX_LINE,
            stderr_keep: DEFAULT_STDERR_KEEP,
            grace: DEFAULT_GRACE,
            startup: DEFAULT_STARTUP,
            echo_stderr: false,
            memory: Some(DEFAULT_MEMORY),
            resources: Resources::default(),
            sandbox: false,
        }
    }
}

/// Why an exchange with a bot failed. Each case is a different verdict for
/// the games: see [`BotError::fault`].
#[derive(Debug, thiserror::Error)]
pub enum BotError {
    #[error(
        "did not answer within {}{}{}",
        crate::units::human_duration(*.limit),
        startup_note(*.phase),
        timeout_hint(*.silent, .at_memory_limit)
    )]
    Timeout {
        limit: Duration,
        /// How long it had had when the referee gave up (at least `limit`):
        /// for a reply read after its deadline, the very time compared.
        waited: Duration,
        /// Its first reply (start-up allowance included), a move, or a
        /// move that ran out the game's clock.
        phase: Phase,
        /// It had written nothing at all to its standard output.
        silent: bool,
        /// Its memory was at its limit: then that, not its output, is
        /// the likely cause.
        at_memory_limit: Option<MemoryAtLimit>,
    },
    #[error(
        "did not read its input: writing to it was still blocked after {}",
        crate::units::human_duration(*.limit)
    )]
    WriteTimeout { limit: Duration },
    #[error("{ended}{}", unterminated_note(.unterminated))]
    Exited {
        ended: Ended,
        /// Bytes it wrote after its last newline, if any.
        unterminated: Option<String>,
    },
    #[error("closed its standard output but is still running")]
    ClosedOutput,
    #[error("closed its standard input but is still running")]
    ClosedInput,
    #[error("wrote a line longer than {cap} bytes")]
    LineTooLong { cap: usize },
    #[error("wrote more than {cap} bytes")]
    OutputTooLong { cap: usize },
    #[error("wrote a line that is not valid UTF-8: {lossy:?}")]
    InvalidUtf8 { lossy: String },
    #[error("cannot relay its debug line: {0}")]
    Relay(io::Error),
    #[error("{}", .0.with_option())]
    MemoryLimit(MemoryOverrun),
    #[error(
        "{then}, after a fork failed at its cap of {cap} processes and threads (--limit-procs)"
    )]
    ProcessCap { cap: u64, then: Box<BotError> },
    #[error("communication failed: {0}")]
    Io(io::Error),
}

fn startup_note(phase: Phase) -> &'static str {
    match phase {
        Phase::Startup => {
            " (its first reply: the move limit plus the start-up allowance, --startup)"
        }
        Phase::Clock => " (its clock ran out)",
        _ => "",
    }
}

/// What may have kept it from answering: its memory at its limit
/// (whatever it wrote), else, when it wrote nothing, an output it did not
/// flush.
pub fn timeout_hint(silent: bool, at_memory_limit: &Option<MemoryAtLimit>) -> String {
    match at_memory_limit {
        Some(at) => format!(
            "; {at}: a program held at its limit (--limit-memory) stalls while the kernel \
             frees memory"
        ),
        None if silent => "; nothing at all was received from it: does it flush its output \
             after each line? (Python needs print(..., flush=True), C fflush(stdout))"
            .to_owned(),
        None => String::new(),
    }
}

fn unterminated_note(unterminated: &Option<String>) -> String {
    match unterminated {
        Some(text) => format!(" after writing {text:?} without a newline"),
        None => String::new(),
    }
}

/// Whose fault a [`BotError`] is, which decides the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The bot broke the protocol: "incorrect output".
    Protocol,
    /// The bot hung, exited or closed a stream: "program crashed".
    Crash,
    /// The referee itself could not do its job.
    Referee,
}

impl Fault {
    /// The verdict in words, as messages print it.
    pub fn verdict(self) -> &'static str {
        match self {
            Fault::Protocol => "incorrect output",
            Fault::Crash => "program crashed",
            Fault::Referee => "internal error",
        }
    }

    /// The verdict as records name it.
    pub fn outcome(self) -> &'static str {
        match self {
            Fault::Protocol => "incorrect_output",
            Fault::Crash => "crashed",
            Fault::Referee => "internal_error",
        }
    }
}

impl BotError {
    pub fn fault(&self) -> Fault {
        match self {
            BotError::LineTooLong { .. }
            | BotError::OutputTooLong { .. }
            | BotError::InvalidUtf8 { .. } => Fault::Protocol,
            BotError::Timeout { .. }
            | BotError::WriteTimeout { .. }
            | BotError::Exited { .. }
            | BotError::ClosedOutput
            | BotError::ClosedInput
            | BotError::MemoryLimit(_)
            | BotError::ProcessCap { .. } => Fault::Crash,
            BotError::Relay(_) | BotError::Io(_) => Fault::Referee,
        }
    }

    /// A short, stable name for records.
    pub fn kind(&self) -> &'static str {
        match self {
            BotError::Timeout { .. } => "timeout",
            BotError::WriteTimeout { .. } => "write_timeout",
            BotError::Exited { .. } => "exited",
            BotError::ClosedOutput => "closed_output",
            BotError::ClosedInput => "closed_input",
            BotError::LineTooLong { .. } => "line_too_long",
            BotError::OutputTooLong { .. } => "output_too_long",
            BotError::InvalidUtf8 { .. } => "invalid_utf8",
            BotError::MemoryLimit(_) => "memory_limit",
            BotError::ProcessCap { .. } => "process_limit",
            BotError::Relay(_) => "relay_failed",
            BotError::Io(_) => "io",
        }
    }
}

/// Where debug lines (those starting with `*`) go, if they are relayed.
pub type Relay<'a> = Option<&'a mut (dyn Write + Send)>;

/// A line a bot wrote in reply, without its line ending, and how long the
/// bot took: from the referee's message to this line being read, never
/// more than the reply's limit (see [`Bot::reply_time`]).
#[derive(Debug)]
pub struct Reply<'a> {
    pub text: &'a str,
    pub elapsed: Duration,
    /// The process's first reply: its time includes the start-up, so it is
    /// kept out of move statistics.
    pub first: bool,
    /// CPU time its main process used since its previous reply (or its
    /// start), where the platform can tell.
    pub cpu: Option<Duration>,
}

/// The lines a bot wrote after the referee stopped listening, other
/// than debug lines: how many, and the first (up to 200 bytes).
#[derive(Default)]
struct Strays {
    lines: usize,
    first: Option<String>,
}

impl Strays {
    fn note(&mut self, line: &[u8]) {
        self.lines += 1;
        self.first.get_or_insert_with(|| {
            let text = lines::trim_line_end(line);
            String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned()
        });
    }
}

/// How a bot's run ended, once it is reaped.
#[derive(Debug)]
pub struct Finished {
    pub ended: Ended,
    /// Whether it exited by itself within the grace period after its input
    /// was closed (always false after [`Bot::kill`]).
    pub exited_in_grace: bool,
    /// The signal the referee had to send to the group leader, if any.
    pub forced: Option<Signal>,
    /// Lines other than debug lines written after the referee stopped
    /// listening: how many, and the first of them.
    pub stray_lines: usize,
    pub first_stray: Option<String>,
    /// Set when it was killed for its memory.
    pub memory_overrun: Option<MemoryOverrun>,
}

/// A running bot. Dropping it kills its process group.
pub struct Bot {
    child: Child,
    exit: ExitWatch,
    group: GroupGuard,
    stdin: Option<ChildStdin>,
    stdout: LineReader<EagerRead<ChildStdout>>,
    stderr: stderr::Capture,
    limits: BotLimits,
    /// Its memory and CPU time, and its memory limit.
    meter: usage::Meter,
    /// Its cgroup, where the kernel contains it: killed and removed when
    /// the bot is dropped.
    cgroup: Option<std::sync::Arc<cgroup::Cgroup>>,
    /// Its main process's CPU clock and the time on it at its previous
    /// reply: each reply's CPU time is counted from there. Set at its first
    /// message or reply.
    cpu_mark: Option<CpuMark>,
    /// The CPU time of its latest reply (line or byte).
    last_reply_cpu: Option<Duration>,
    /// When the latest message started to be written: the start of the
    /// bot's time for its reply.
    sent_at: Instant,
    /// Set once the group leader has been reaped (after its group was
    /// killed: see [`Bot::reap`]).
    ended: Option<Ended>,
    /// Whether the referee sent it SIGTERM (its grace period ran out): a
    /// SIGTERM from anyone else may be the whole job's end.
    stop_sent: bool,
    /// When the bot was seen to have exited (it may still be unreaped).
    exited_at: Option<Instant>,
    /// When its output was first seen to end: the exit probe that follows
    /// runs from there, however often a caller's `select!` drops and
    /// retries the read (see [`Bot::diagnose_closed`]).
    output_ended_at: Option<Instant>,
    /// The time its first reply took (start-up included), once it came.
    startup_time: Option<Duration>,
    /// When its process was started.
    started_at: Instant,
    /// The uid it runs as, when one of its own: given back last, once its
    /// processes are killed (the fields before it are dropped first).
    _user: Option<boxes::BoxUser>,
}

/// See [`Bot::cpu_mark`].
#[derive(Clone, Copy)]
struct CpuMark {
    /// Its main process's CPU clock, made once: a reply then costs one
    /// system call for its CPU time, where `clock_getcpuclockid` made a
    /// second one each time to check the process (2% of a fast exchange on
    /// one CPU: docs/PERFORMANCE.md §13). `None` under bubblewrap, whose
    /// main process the memory watch finds later: its reading serves.
    clock: Option<ClockId>,
    /// The time on it then, where it could be read.
    at: Option<Duration>,
}

/// What to read from a bot's output.
#[derive(Clone, Copy)]
enum Unit {
    Line,
    Byte,
}

/// What was read.
enum Read {
    Line(Next),
    Byte(Option<u8>),
}

impl Read {
    /// What a read of [`Unit::Line`] found.
    fn line(self) -> Next {
        match self {
            Read::Line(next) => next,
            Read::Byte(_) => unreachable!("asked for a line"),
        }
    }
}

impl Bot {
    /// Starts a bot. Must be called from within the tokio runtime.
    pub fn spawn(spec: &BotSpec, limits: BotLimits) -> Result<Bot, SpawnError> {
        let path = spec.locate()?;
        let user = boxes::take(limits.sandbox).map_err(SpawnError::NoUser)?;
        let uid = user.as_ref().map(boxes::BoxUser::uid);
        if let Some(uid) = uid {
            spawn::check_reachable(&path, spec, uid, limits.sandbox)?;
        }
        let (program, args) = if limits.sandbox {
            spawn::sandboxed(&path, spec, spawn::Access::Bot, limits.memory, uid)?
        } else {
            (path.clone(), spec.args.clone())
        };
        let standby::Started {
            mut child,
            group,
            cgroup,
            cpu_base,
        } = standby::start(
            standby::Program {
                path: &program,
                args: &args,
                dir: spec.dir.as_deref(),
                env: spec.env.vars(limits.sandbox),
                named: &path,
                user: uid.filter(|_| !limits.sandbox),
            },
            &limits,
        )?;
        let cgroup = cgroup.map(std::sync::Arc::new);
        // With process_group(0) the child's group id is its pid.
        let pid = group.pgid();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        tracing::debug!(pid, program = %path.display(), "bot started");
        Ok(Bot {
            child,
            exit: ExitWatch::new(pid),
            meter: usage::Meter::start_from(
                pid,
                limits.memory,
                limits.sandbox,
                cgroup.clone(),
                cpu_base,
            ),
            cgroup,
            cpu_mark: None,
            last_reply_cpu: None,
            group,
            stdin,
            stdout: LineReader::new(EagerRead::new(stdout), limits.max_line),
            stderr: stderr::Capture::start(
                stderr,
                stderr::Tail::new(limits.stderr_keep),
                limits.echo_stderr,
            ),
            limits,
            sent_at: Instant::now(),
            ended: None,
            stop_sent: false,
            exited_at: None,
            output_ended_at: None,
            startup_time: None,
            started_at: Instant::now(),
            _user: user,
        })
    }

    /// The bot's process id, which is also its process group id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Reads the stderr captured so far, including everything the bot
    /// wrote before this call.
    pub fn stderr<T>(&self, f: impl FnOnce(&stderr::Tail) -> T) -> T {
        self.stderr.catch_up();
        self.stderr.with(f)
    }

    /// What the bot wrote to stderr after the first `mark` bytes (`None`
    /// when nothing), and whether older bytes of it were dropped; moves
    /// `mark` to the end, for the next record.
    pub fn stderr_since(&self, mark: &mut u64) -> (Option<String>, bool) {
        let (text, truncated, total) = self.stderr(|t| {
            let (text, truncated) = t.since(*mark);
            (text, truncated, t.total())
        });
        *mark = total;
        ((!text.is_empty()).then_some(text), truncated)
    }

    /// Writes `message` (and flushes it). A bot that does not read its input
    /// blocks the pipe; that is detected at `deadline`.
    ///
    /// The bot's clock starts just before the write. Taken after it, the
    /// time between the bot reading the message and the referee getting
    /// the CPU back would be free time for the bot: on a loaded machine
    /// (more bots than CPUs) that was several milliseconds a move. Only a
    /// write the bot makes wait (a full pipe) restarts the clock when it
    /// completes, since until then the bot had not read the message.
    pub async fn send(&mut self, message: &[u8], deadline: Instant) -> Result<(), BotError> {
        self.send_from(message, deadline, Instant::now()).await
    }

    /// [`Bot::send`] with a deadline `limit` from now: one reading of the
    /// clock for the deadline and the bot's time (a move's write is on
    /// every round trip).
    pub async fn send_within(&mut self, message: &[u8], limit: Duration) -> Result<(), BotError> {
        let started = Instant::now();
        self.send_from(message, later(started, limit), started)
            .await
    }

    /// [`Bot::send`], the clock read at `started` by the caller.
    async fn send_from(
        &mut self,
        message: &[u8],
        deadline: Instant,
        started: Instant,
    ) -> Result<(), BotError> {
        if self.cpu_mark.is_none() {
            let clock = self.cpu_clock();
            self.cpu_mark = Some(CpuMark {
                clock,
                at: self.main_cpu(clock),
            });
        }
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(BotError::ClosedInput);
        };
        // A pipe with room takes the message at once, with no timer and no
        // trip through the event loop; only a bot that does not read its
        // input costs those.
        let written = match eager::write_now(&*stdin, message) {
            Ok(n) if n == message.len() => Ok(Ok(started)),
            Ok(n) => timeout_at(deadline, stdin.write_all(&message[n..]))
                .await
                .map(|done| done.map(|()| Instant::now())),
            Err(e) => Ok(Err(e)),
        };
        match written {
            Ok(Ok(clock_start)) => {
                self.sent_at = clock_start;
                Ok(())
            }
            Ok(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
                Err(self.diagnose_closed(BotError::ClosedInput, None).await)
            }
            Ok(Err(e)) => Err(BotError::Io(e)),
            Err(_) => Err(BotError::WriteTimeout {
                limit: deadline.saturating_duration_since(started),
            }),
        }
    }

    /// Reads the bot's next line, waiting until `deadline` at most. With a
    /// `relay`, lines starting with `*` are debug lines: they are written to
    /// `relay` as they arrive, and are not replies. `relay` is flushed
    /// whenever the bot makes the referee wait.
    pub async fn recv_line(
        &mut self,
        deadline: Instant,
        mut relay: Relay<'_>,
    ) -> Result<Reply<'_>, BotError> {
        let line = loop {
            // Not through `read_line_until`: a reply that is here already
            // then costs no future at all.
            let next = match self.read_now(Unit::Line) {
                Some(read) => read?,
                None => self.wait_for(deadline, Unit::Line, &mut relay).await?,
            };
            match next.line() {
                Next::Line(range) => match relay.as_mut() {
                    Some(out) if self.stdout.get(range.clone()).first() == Some(&b'*') => {
                        relay_line(*out, self.stdout.get(range)).map_err(BotError::Relay)?;
                        // A flood of debug lines must not stretch the deadline.
                        let now = Instant::now();
                        if now >= deadline {
                            return Err(self.timed_out(deadline, now));
                        }
                    }
                    _ => break range,
                },
                Next::TooLong => {
                    return Err(BotError::LineTooLong {
                        cap: self.limits.max_line,
                    });
                }
                Next::Eof { unterminated } => {
                    let partial = (!unterminated.is_empty())
                        .then(|| String::from_utf8_lossy(self.stdout.get(unterminated)).into());
                    return Err(self.diagnose_closed(BotError::ClosedOutput, partial).await);
                }
            }
        };
        let elapsed = self.reply_time(deadline)?;
        let first = self.startup_time.is_none();
        if first {
            self.startup_time = Some(elapsed);
        }
        let cpu = self.reply_cpu();
        let bytes = lines::trim_line_end(self.stdout.get(line));
        match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Reply {
                text,
                elapsed,
                first,
                cpu,
            }),
            Err(_) => Err(BotError::InvalidUtf8 {
                lossy: String::from_utf8_lossy(bytes).chars().take(200).collect(),
            }),
        }
    }

    /// The time a reply just read took, from the one clock reading that is
    /// both recorded and compared with its `deadline`: a reply read after
    /// its deadline is a timeout, whether it was waiting in the pipe or
    /// arrived while the referee waited for a CPU. A record then never
    /// shows an accepted move over its limit (docs/bots.md, "The time
    /// model").
    fn reply_time(&self, deadline: Instant) -> Result<Duration, BotError> {
        let now = Instant::now();
        if now > deadline {
            return Err(self.timed_out(deadline, now));
        }
        Ok(now.saturating_duration_since(self.sent_at))
    }

    /// The CPU time of the main process since the previous reply; moves
    /// the mark.
    fn reply_cpu(&mut self) -> Option<Duration> {
        let clock = self.cpu_clock();
        let now = self.main_cpu(clock);
        let since = now
            .zip(self.cpu_mark.and_then(|mark| mark.at))
            .map(|(now, mark)| now.saturating_sub(mark));
        self.cpu_mark = Some(CpuMark { clock, at: now });
        self.last_reply_cpu = since;
        since
    }

    /// Its main process's CPU clock: the one made already, or a new one.
    fn cpu_clock(&self) -> Option<ClockId> {
        match self.cpu_mark {
            Some(mark) => mark.clock,
            None if self.limits.sandbox => None,
            None => {
                let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()?).ok()?);
                nix::time::clock_getcpuclockid(pid).ok()
            }
        }
    }

    /// Its main process's CPU time (all its threads) now, on `clock` (see
    /// [`CpuMark::clock`]).
    fn main_cpu(&self, clock: Option<ClockId>) -> Option<Duration> {
        match clock {
            Some(clock) => nix::time::clock_gettime(clock).ok().map(Duration::from),
            None => self.meter.main_cpu(),
        }
    }

    /// The CPU time its main process used for its latest reply, line or
    /// byte, where the platform can tell.
    pub fn last_reply_cpu(&self) -> Option<Duration> {
        self.last_reply_cpu
    }

    /// The CPU time its main process used since its latest reply: what a
    /// move that timed out has used so far.
    pub fn cpu_since_reply(&self) -> Option<Duration> {
        let mark = self.cpu_mark?;
        Some(self.main_cpu(mark.clock)?.saturating_sub(mark.at?))
    }

    /// What the bot used since `mark` (its peak memory and its CPU time),
    /// measured now; moves `mark` here, for the next game's record.
    pub fn usage_since(&self, mark: &mut UsageMark) -> Usage {
        self.meter.usage_since(mark)
    }

    /// The CPU time all its processes have used so far, measured now
    /// unless the last look is fresher than the sampling interval: what a
    /// referee that judges CPU time polls while the bot runs. Leaves the
    /// marks of [`Bot::usage_since`] alone.
    pub fn cpu_time(&self) -> Duration {
        self.meter.cpu_now()
    }

    /// Whether its memory reached its limit in this game (see
    /// [`MemoryAtLimit`]): what a timeout made elsewhere says.
    pub fn memory_at_limit(&self) -> Option<MemoryAtLimit> {
        self.meter.at_limit()
    }

    /// `error`, unless the bot was killed for its memory (then that is
    /// why), or a fork of it failed at its process cap (then the error
    /// says so, and the verdict is that limit).
    fn or_memory(&self, error: BotError) -> BotError {
        if let Some(overrun) = self.meter.overrun() {
            return BotError::MemoryLimit(overrun);
        }
        match (self.meter.hit_process_cap(), error.fault()) {
            (Some(cap), Fault::Crash) => BotError::ProcessCap {
                cap,
                then: Box::new(error),
            },
            _ => error,
        }
    }

    /// Reads the bot's next byte that is not whitespace (space, tab, `\r`,
    /// `\n`), for protocols whose moves are single bytes. Returns it with the
    /// time since the last message was sent.
    pub async fn recv_byte(&mut self, deadline: Instant) -> Result<(u8, Duration), BotError> {
        loop {
            match self.read_until(deadline, Unit::Byte, &mut None).await? {
                Read::Line(_) => unreachable!("asked for a byte"),
                Read::Byte(next) => match next {
                    Some(b' ' | b'\t' | b'\r' | b'\n') => {
                        let now = Instant::now();
                        if now >= deadline {
                            return Err(self.timed_out(deadline, now));
                        }
                    }
                    Some(byte) => {
                        let elapsed = self.reply_time(deadline)?;
                        self.startup_time.get_or_insert(elapsed);
                        self.reply_cpu();
                        return Ok((byte, elapsed));
                    }
                    None => return Err(self.diagnose_closed(BotError::ClosedOutput, None).await),
                },
            }
        }
    }

    /// The next line of output, until `deadline` (see [`Bot::read_until`]).
    async fn read_line_until(
        &mut self,
        deadline: Instant,
        relay: &mut Relay<'_>,
    ) -> Result<Next, BotError> {
        self.read_until(deadline, Unit::Line, relay)
            .await
            .map(Read::line)
    }

    /// Reads one line or one byte of output, until `deadline`: what is
    /// already here (see [`Bot::read_now`]), or else what comes (see
    /// [`Bot::wait_for`]).
    async fn read_until(
        &mut self,
        deadline: Instant,
        unit: Unit,
        relay: &mut Relay<'_>,
    ) -> Result<Read, BotError> {
        match self.read_now(unit) {
            Some(read) => read,
            None => self.wait_for(deadline, unit, relay).await,
        }
    }

    /// A line or byte that is already here, buffered or waiting in the
    /// pipe because the bot shares our CPU: most of a fast game's moves.
    /// It needs no timer, no exit watch and no trip through the event
    /// loop. `None` when the read has to wait, or the bot has exited.
    fn read_now(&mut self, unit: Unit) -> Option<Result<Read, BotError>> {
        if self.exited_at.is_some() {
            return None;
        }
        let read = match unit {
            Unit::Line => self.stdout.next_now()?.map(Read::Line),
            Unit::Byte => self.stdout.next_byte_now()?.map(Read::Byte),
        };
        Some(read.map_err(BotError::Io))
    }

    /// Waits for one line or one byte of output, until `deadline`. Once
    /// the bot has exited, what it left in the pipe is still read, but for
    /// [`EXIT_PROBE`] at most: a process it left behind may hold the pipe
    /// open for ever, and then the bot's end counts as its output's end.
    ///
    /// First it flushes `relay`: whatever the caller wrote so far is then
    /// visible while the bot thinks, and a caller writing between fast
    /// replies makes one write for many of them.
    async fn wait_for(
        &mut self,
        deadline: Instant,
        unit: Unit,
        relay: &mut Relay<'_>,
    ) -> Result<Read, BotError> {
        if let Some(out) = relay {
            out.flush().map_err(BotError::Relay)?;
        }
        loop {
            let exited = self.exited_at.is_some();
            let until = self
                .exited_at
                .map_or(deadline, |t| deadline.min(t + EXIT_PROBE));
            let stdout = &mut self.stdout;
            let read = async {
                match unit {
                    Unit::Line => stdout.next().await.map(Read::Line),
                    Unit::Byte => stdout.next_byte().await.map(Read::Byte),
                }
            };
            tokio::select! {
                biased;
                result = timeout_at(until, read) => {
                    return match result {
                        Ok(Ok(read)) => Ok(read),
                        Ok(Err(e)) => Err(BotError::Io(e)),
                        Err(_) if exited && Instant::now() < deadline => Ok(match unit {
                            Unit::Line => Read::Line(Next::Eof { unterminated: 0..0 }),
                            Unit::Byte => Read::Byte(None),
                        }),
                        Err(_) => Err(self.timed_out(deadline, Instant::now())),
                    };
                }
                () = self.exit.exited(), if !exited => self.exited_at = Some(Instant::now()),
            }
        }
    }

    /// Closes the bot's standard input (EOF), for programs that read all
    /// their input before answering.
    pub fn close_input(&mut self) {
        drop(self.stdin.take());
    }

    /// Reads the bot's whole output, line by line, until it closes it;
    /// `Timeout` at `deadline`. More than `max_bytes` is
    /// [`BotError::OutputTooLong`]. Lines lose their line endings; bytes that
    /// are not UTF-8 are replaced.
    pub async fn read_to_end(
        &mut self,
        deadline: Instant,
        max_bytes: usize,
    ) -> Result<Vec<String>, BotError> {
        let mut lines = Vec::new();
        let mut total = 0usize;
        loop {
            let range = match self.read_line_until(deadline, &mut None).await? {
                Next::Line(range) => range,
                Next::Eof { unterminated } if unterminated.is_empty() => return Ok(lines),
                Next::Eof { unterminated } => unterminated,
                Next::TooLong => {
                    return Err(BotError::LineTooLong {
                        cap: self.limits.max_line,
                    });
                }
            };
            let line = self.stdout.get(range);
            total += line.len() + 1;
            if total > max_bytes {
                return Err(BotError::OutputTooLong { cap: max_bytes });
            }
            lines.push(String::from_utf8_lossy(lines::trim_line_end(line)).into_owned());
        }
    }

    /// Waits until the bot exits, at most until `deadline` (`Timeout`), and
    /// reaps it.
    pub async fn wait_exit(&mut self, deadline: Instant) -> Result<Ended, BotError> {
        if self.ended.is_none() && timeout_at(deadline, self.exit.exited()).await.is_err() {
            return Err(self.timed_out(deadline, Instant::now()));
        }
        let ended = self.reap().await.map_err(BotError::Io)?;
        match self.meter.overrun() {
            Some(overrun) => Err(BotError::MemoryLimit(overrun)),
            None => Ok(ended),
        }
    }

    /// The timeout of a reply due at `deadline`, given up on `at`.
    fn timed_out(&self, deadline: Instant, at: Instant) -> BotError {
        self.or_memory(BotError::Timeout {
            limit: deadline.saturating_duration_since(self.sent_at),
            waited: at.saturating_duration_since(self.sent_at),
            phase: if self.startup_time.is_none() {
                Phase::Startup
            } else {
                Phase::Move
            },
            silent: self.stdout.bytes_read() == 0,
            at_memory_limit: self.memory_at_limit(),
        })
    }

    /// The deadline of a reply that may take `limit` from the last message:
    /// the first reply of the process has the start-up allowance on top.
    pub fn reply_deadline(&self, limit: Duration) -> Instant {
        later(self.sent_at, limit.saturating_add(self.startup_allowance()))
    }

    /// The start-up allowance still due: all of it until the first reply,
    /// then nothing.
    pub fn startup_allowance(&self) -> Duration {
        if self.startup_time.is_none() {
            self.limits.startup
        } else {
            Duration::ZERO
        }
    }

    /// How long the process's first reply took, once it came.
    pub fn startup_time(&self) -> Option<Duration> {
        self.startup_time
    }

    /// When the latest message started to be written: the start of the
    /// bot's time for its reply (see [`Bot::send`]).
    pub fn sent_at(&self) -> Instant {
        self.sent_at
    }

    /// When its process was started: its start-up counts from there.
    pub fn started_at(&self) -> Instant {
        self.started_at
    }

    /// After [`BotError::LineTooLong`]: drops the over-long line, as it
    /// comes and without keeping it, when its first word (up to a space or
    /// a tab) is one of `kinds`, and says so; else leaves it, and the
    /// error stands. Lets a game forgive long lines of a kind it does not
    /// need whole (chess's `info`).
    pub fn drop_long_line(&mut self, kinds: &[String]) -> bool {
        let start = self.stdout.long_line_start();
        let end = start.iter().position(|&b| b == b' ' || b == b'\t');
        let Some(first) = end.map(|end| &start[..end]) else {
            return false;
        };
        if !kinds.iter().any(|k| k.as_bytes() == first) {
            return false;
        }
        self.stdout.discard_line();
        true
    }

    /// A line the bot has written already (received, or readable without
    /// waiting), without its line ending; `None` when no complete line is
    /// there. It is not a reply: no time or CPU is counted for it. Lines
    /// that are not UTF-8 come with their bytes replaced.
    pub fn ready_line(&mut self) -> Option<Result<String, BotError>> {
        match self.stdout.complete_line_now()? {
            Ok(range) => {
                let bytes = lines::trim_line_end(self.stdout.get(range));
                Some(Ok(String::from_utf8_lossy(bytes).into_owned()))
            }
            Err(e) => Some(Err(BotError::Io(e))),
        }
    }

    /// Sends `message`, then reads the reply line; the bot has `limit` for
    /// each direction.
    pub async fn exchange(
        &mut self,
        message: &[u8],
        limit: Duration,
        mut relay: Relay<'_>,
    ) -> Result<Reply<'_>, BotError> {
        if let Err(error) = self.send_within(message, limit).await {
            if relay.is_some() && matches!(error, BotError::Exited { .. }) {
                self.relay_last_lines(&mut relay).await;
            }
            return Err(error);
        }
        let deadline = self.reply_deadline(limit);
        self.recv_line(deadline, relay).await
    }

    /// Relays the debug lines an exited bot left in its pipe: it died
    /// before it was sent its message, and what it wrote last says why.
    /// Its other lines answer nothing and are dropped.
    async fn relay_last_lines(&mut self, relay: &mut Relay<'_>) {
        let deadline = Instant::now() + EXIT_PROBE;
        while let Ok(Read::Line(Next::Line(range))) =
            self.read_until(deadline, Unit::Line, relay).await
        {
            if let Some(out) = relay.as_mut()
                && self.stdout.get(range.clone()).first() == Some(&b'*')
                && relay_line(*out, self.stdout.get(range)).is_err()
            {
                return;
            }
        }
    }

    /// A pipe closed: if the bot has exited, say how; otherwise return
    /// `still_running`. The probe for its output's end runs from when that
    /// end was first seen: a read dropped and retried (a relay's `select!`
    /// polling a CPU clock every 20 ms) still concludes within
    /// [`EXIT_PROBE`], where it once started over on every try and never
    /// did, so that the other side's input was never closed.
    async fn diagnose_closed(
        &mut self,
        still_running: BotError,
        unterminated: Option<String>,
    ) -> BotError {
        let since = match still_running {
            BotError::ClosedOutput => *self.output_ended_at.get_or_insert_with(Instant::now),
            _ => Instant::now(),
        };
        if timeout_at(since + EXIT_PROBE, self.exit.exited())
            .await
            .is_err()
        {
            return self.or_memory(still_running);
        }
        let error = match self.reap().await {
            Ok(ended) => BotError::Exited {
                ended,
                unterminated,
            },
            Err(e) => BotError::Io(e),
        };
        self.or_memory(error)
    }

    /// Once the leader has exited: kills the rest of its group (while the
    /// unreaped leader still holds the group's number), then reaps it.
    /// Waits at most [`KILL_WAIT`] for the exit.
    async fn reap(&mut self) -> io::Result<Ended> {
        if let Some(ended) = self.ended {
            return Ok(ended);
        }
        let exited = timeout(KILL_WAIT, self.exit.exited()).await.is_ok();
        self.group.signal(Signal::SIGKILL);
        if let Some(cgroup) = &self.cgroup {
            // Whatever it started, wherever that moved: a new session, a
            // double fork, a pid that keeps changing.
            cgroup.kill();
        }
        if !exited {
            self.group.forget();
            return Err(io::Error::other(format!(
                "process {} did not die within {} of SIGKILL",
                self.child.id().unwrap_or(0),
                crate::units::human_duration(KILL_WAIT)
            )));
        }
        // The last measurement, while the leader's pid is still its own.
        self.meter.stop();
        let status = self.child.wait().await;
        self.group.forget();
        let mut ended = Ended::from(status?);
        if self.limits.sandbox {
            ended = ended.through_bwrap();
        }
        if ended.is_stop_signal() && !self.stop_sent {
            crate::interrupt::settle().await;
        }
        self.ended = Some(ended);
        // Whatever it left running outside its group is orphaned now (and,
        // the bot being reaped, cannot be mistaken for it).
        groups::kill_strays();
        Ok(ended)
    }

    /// The orderly end: closes the bot's input and gives it the grace period
    /// to exit, relaying its debug lines meanwhile; then SIGTERM, and SIGKILL
    /// shortly after, to the whole group and the leader. Always reaps, and
    /// always kills whatever the bot left behind in its group. Afterwards
    /// only [`Bot::stderr`] is of use.
    pub async fn shutdown(&mut self, mut relay: Relay<'_>) -> io::Result<Finished> {
        drop(self.stdin.take());
        let deadline = deadline_after(self.limits.grace);
        let mut strays = Strays::default();
        let mut stdout_open = true;
        let mut relay_error = None;
        let mut exited = self.ended.is_some();
        let mut until = deadline;
        // Until the bot has exited and its output is read to the end (its
        // last debug lines included), or the grace period is over. After the
        // exit, a process it left behind may hold the output open: read on
        // only briefly.
        while !exited || stdout_open {
            // A bot that floods its output keeps the read below always
            // ready, and a timer only fires when the runtime gets to turn
            // its driver: look at the clock here, or the grace period
            // never ends.
            if Instant::now() >= until {
                break;
            }
            tokio::select! {
                () = self.exit.exited(), if !exited => {
                    exited = true;
                    until = deadline.min(Instant::now() + FINAL_DRAIN);
                    // Whatever the bot left running in its group would only
                    // hold its output open: the bot is done, so are they.
                    self.group.signal(Signal::SIGKILL);
                }
                next = self.stdout.next(), if stdout_open => match next {
                    Ok(Next::Line(range)) => {
                        let line = self.stdout.get(range);
                        match relay.as_mut() {
                            Some(out) if line.first() == Some(&b'*') => {
                                if let Err(e) = relay_line(*out, line) {
                                    relay_error.get_or_insert(e);
                                }
                            }
                            _ => strays.note(line),
                        }
                    }
                    // Keep draining, so the bot is never blocked writing.
                    Ok(Next::TooLong) => {
                        strays.lines += 1;
                        self.stdout.discard_line();
                    }
                    Ok(Next::Eof { .. }) | Err(_) => stdout_open = false,
                },
                () = sleep_until(until) => break,
            }
        }
        if let Some(out) = relay.as_mut()
            && let Err(e) = out.flush()
        {
            relay_error.get_or_insert(e);
        }
        let exited_in_grace = exited;
        let forced = match exited {
            true => None,
            false => Some(self.force_end().await),
        };
        let ended = self.reap().await?;
        self.stderr.finish(FINAL_DRAIN).await;
        tracing::debug!(%ended, "bot finished");
        if let Some(e) = relay_error {
            return Err(e);
        }
        Ok(Finished {
            ended,
            exited_in_grace,
            forced,
            stray_lines: strays.lines,
            first_stray: strays.first,
            memory_overrun: self.meter.overrun(),
        })
    }

    /// Ends a bot that did not exit in its grace period: SIGTERM to its
    /// group, then SIGKILL if it has not exited [`TERM_TO_KILL`] later.
    /// The last signal sent.
    async fn force_end(&mut self) -> Signal {
        self.stop_sent = true;
        self.group.signal(Signal::SIGTERM);
        if timeout(TERM_TO_KILL, self.exit.exited()).await.is_err() {
            self.group.signal(Signal::SIGKILL);
            return Signal::SIGKILL;
        }
        Signal::SIGTERM
    }

    /// Gives up on the bot: kills its group and itself at once, reaps it,
    /// and waits briefly for the rest of its stderr. Calling it again is
    /// harmless.
    pub async fn kill(&mut self) -> io::Result<Finished> {
        drop(self.stdin.take());
        let forced = self.ended.is_none().then(|| {
            self.group.signal(Signal::SIGKILL);
            Signal::SIGKILL
        });
        let ended = self.reap().await?;
        self.stderr.finish(FINAL_DRAIN).await;
        tracing::debug!(%ended, "bot killed");
        Ok(Finished {
            ended,
            exited_in_grace: false,
            forced,
            stray_lines: 0,
            first_stray: None,
            memory_overrun: self.meter.overrun(),
        })
    }
}

/// What a bot with `limits` starts inside: its cgroup, and (as root,
/// unless bubblewrap gives it its own already) an IPC namespace and a
/// `/dev/shm` of its own, as large as its memory limit.
pub(crate) fn enclosure(cgroup: Option<&cgroup::Cgroup>, limits: &BotLimits) -> spawn::Enclosure {
    spawn::Enclosure {
        cgroup_entry: cgroup.map(cgroup::Cgroup::entry_files).unwrap_or_default(),
        private_ipc: (!limits.sandbox && cgroup::private_ipc_available())
            .then(|| limits.memory.unwrap_or(0)),
        user: None,
    }
}

/// `limit` from now, saturating: absurd limits (`--timeout 1000000000h`)
/// mean "practically never", not an overflow.
pub fn deadline_after(limit: Duration) -> Instant {
    later(Instant::now(), limit)
}

/// `at + limit`, saturating at a century from `at`.
pub fn later(at: Instant, limit: Duration) -> Instant {
    at.checked_add(limit)
        .unwrap_or_else(|| at + Duration::from_secs(100 * 365 * 24 * 3600))
}

/// Says that this run starts no more bots (the dealer, once its one
/// player is done): a bot that ends from now on has its cgroup removed
/// rather than cleaned and kept for a next one, and its reaping asks for
/// no stray scan, since the run's end kills every stray and removes every
/// cgroup anyway ([`groups::kill_all`]). Spares the end of a run two
/// threads and about a millisecond of kernel time.
pub fn no_more_bots() {
    cgroup::stop_reuse();
    groups::stop_scans();
}

/// Copies a debug line as it was written, less a `\r` before its `\n`.
/// One `write_all` per line, so a writer can treat each call as a line.
fn relay_line(out: &mut (dyn Write + Send), line: &[u8]) -> io::Result<()> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut copy = Vec::with_capacity(line.len() + 1);
    copy.extend_from_slice(line);
    copy.push(b'\n');
    out.write_all(&copy)
}

/// The recorded form of a bot's failure.
impl From<&BotError> for Verdict {
    fn from(error: &BotError) -> Verdict {
        match error {
            BotError::Timeout { phase, .. } => Verdict::timeout(*phase),
            BotError::WriteTimeout { .. } => Verdict::timeout(Phase::Write),
            BotError::Exited { ended, .. } => Verdict::from(*ended),
            BotError::ClosedOutput => Verdict::of(Status::ClosedOutput),
            BotError::ClosedInput => Verdict::of(Status::Crashed),
            BotError::MemoryLimit(_) => Verdict::limit(LimitKind::Memory),
            BotError::ProcessCap { .. } => Verdict::limit(LimitKind::Processes),
            BotError::LineTooLong { .. }
            | BotError::OutputTooLong { .. }
            | BotError::InvalidUtf8 { .. } => Verdict::of(Status::Incorrect),
            BotError::Relay(_) | BotError::Io(_) => Verdict::of(Status::Internal),
        }
    }
}
