use std::io::Write;

use clap::Parser;
use nix::sys::signal::{SigSet, Signal};
use tracing_subscriber::EnvFilter;

use referee::bot::groups;
use referee::cli::{self, Cli};
use referee::exit::Status;

fn main() {
    referee::bot::run_helper(&[
        (groups::WATCHDOG_COMMAND, groups::watchdog_main),
        (referee::bot::LAUNCH_COMMAND, referee::bot::launch_main),
        (referee::bot::SANDBOX_COMMAND, referee::bot::sandbox_main),
        (referee::bot::DROP_COMMAND, referee::bot::drop_main),
        (
            referee::games::chess::JUDGE_COMMAND,
            referee::games::chess::judge_main,
        ),
    ]);
    install_panic_hook();
    let cli = match Cli::try_parse_from(cli::normalize_args(std::env::args_os())) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are not errors; everything else is a
            // usage error, which has its own status here (clap uses 2, which
            // means "incorrect output" for us).
            let status = if e.use_stderr() {
                Status::Usage
            } else {
                Status::Pass
            };
            let _ = e.print();
            std::process::exit(status.code());
        }
    };
    init_logging(cli.log.name());
    raise_descriptor_limit();
    use_launcher();
    referee::record::set_fsync(!cli.no_fsync);
    // Before any other thread exists, so that every thread inherits the
    // blocked mask and the signals reach only the signal thread.
    start_signal_thread();
    start_pipe_watch();
    groups::become_subreaper();
    referee::bot::cgroup::init(cli.no_cgroups);
    referee::bot::cgroup::log_containment();
    groups::start_watchdog();
    // Before the runtime's threads start, so that they inherit it: the
    // referee's threads never take a CPU from a bot by waking up
    // (bot/scheduling.rs); its bots start as the referee was started.
    referee::bot::scheduling::give_way();
    // One game drives its bots from one thread: a current-thread runtime
    // avoids cross-thread wake-ups on every move, and spawns bots only from
    // a thread that outlives them (this one, or a tournament job's, see
    // parallel.rs), which their parent-death signal needs.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("referee: cannot start the async runtime: {e}");
            std::process::exit(Status::Internal.code());
        }
    };
    let status = runtime.block_on(cli::run(cli));
    // An interrupt or a closed output kills the bots, which can end the run
    // here too: the thread that saw it is about to exit with its own
    // status, so let it.
    referee::interrupt::stop_if_ending();
    // Kills every bot group left and every orphan (a full stray scan).
    groups::kill_all();
    referee::interrupt::remove_own_dirs();
    let _ = std::io::stdout().flush();
    std::process::exit(status.code());
}

/// SIGINT, SIGTERM and SIGHUP are taken by a thread of their own, which
/// kills every bot and exits with 130 at once. A separate thread keeps this
/// working even when the main thread is stuck, for example writing to a
/// pipe nobody reads.
fn start_signal_thread() {
    let mut set = SigSet::empty();
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        set.add(signal);
    }
    if let Err(e) = set.thread_block() {
        eprintln!("referee: cannot block signals: {e}");
        return;
    }
    let started = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let signal = set.wait().unwrap_or(Signal::SIGTERM);
            let (stdout, stderr) = end_run();
            // What the run had finished (a tournament's standings so far).
            if let Some(report) = referee::interrupt::report() {
                write_if_room(stdout, report.as_bytes());
            }
            let message = format!("referee: interrupted by {signal}; every bot was killed\n");
            // Straight to the file descriptors, without Rust's locks on
            // stdio, which the stuck main thread may hold.
            write_if_room(stderr, message.as_bytes());
            // SAFETY: _exit takes a plain value.
            unsafe { nix::libc::_exit(Status::Interrupted.code()) }
        });
    if let Err(e) = started {
        eprintln!("referee: cannot start the signal thread: {e}");
    }
}

/// A standard output or error whose reader has gone (`referee ... | head
/// -1`) ends the run quietly: every bot killed, no message, status 0, as
/// for any program writing into `head`. SIGPIPE stays ignored, so that
/// writing to a bot that closed its input is an error, not death; the
/// referee notices its own closed output at its next write (the dealer's
/// writes and the panic hook below), and this thread at once, even while
/// nothing is written or a referee plays on regardless.
fn start_pipe_watch() {
    use nix::libc::{POLLERR, S_IFIFO, S_IFMT, nfds_t, pollfd};
    use std::os::fd::AsFd;
    let pipe = |fd: std::os::fd::BorrowedFd| {
        nix::sys::stat::fstat(fd).is_ok_and(|st| st.st_mode & S_IFMT == S_IFIFO)
    };
    let mut watched: Vec<pollfd> = [
        (1, pipe(std::io::stdout().as_fd())),
        (2, pipe(std::io::stderr().as_fd())),
    ]
    .into_iter()
    .filter(|&(_, is_pipe)| is_pipe)
    .map(|(fd, _)| pollfd {
        fd,
        events: 0,
        revents: 0,
    })
    .collect();
    if watched.is_empty() {
        return;
    }
    let started = std::thread::Builder::new()
        .name("pipe-watch".into())
        .spawn(move || {
            while !watched.is_empty() {
                // No events asked for: the kernel reports POLLERR on a
                // pipe's write end once no reader is left.
                // SAFETY: `watched` is a live array of `watched.len()` pollfds.
                let ready =
                    unsafe { nix::libc::poll(watched.as_mut_ptr(), watched.len() as nfds_t, -1) };
                if ready < 0 {
                    if nix::errno::Errno::last() == nix::errno::Errno::EINTR {
                        continue;
                    }
                    return;
                }
                if watched.iter().any(|p| p.revents & POLLERR != 0) {
                    quit_quietly();
                }
                // Anything else (POLLHUP, POLLNVAL) is not ours to judge:
                // stop watching that descriptor.
                watched.retain(|p| p.revents == 0);
            }
        });
    if let Err(e) = started {
        tracing::warn!("cannot start the pipe watch: {e}");
    }
}

/// Our output's reader has gone: end the run as `head`'s writers do,
/// quietly, with the status of a program killed by SIGPIPE (a run cut
/// short has not passed, which `set -o pipefail` must see).
fn quit_quietly() -> ! {
    end_run();
    std::process::exit(Status::OutputClosed.code());
}

/// The run ends early: no game is recorded or reported from here on (the
/// one being published is let finish first), standard output and error
/// are silenced for every other thread, and every bot is killed. The games
/// in flight end with the kill, and their drivers would report them as
/// crashed or their judge as failed: those reports go nowhere, and their
/// records are never written (see `referee::interrupt`). Returns the
/// original standard output and error, for the caller's last words.
fn end_run() -> (i32, i32) {
    referee::interrupt::end_publishing();
    let kept = (silence(1), silence(2));
    groups::kill_all();
    // The run's work directories (compiled validators, feedback): no
    // Drop runs past an `exit`.
    referee::interrupt::remove_own_dirs();
    // Logs appended as games finished, put in game order.
    referee::interrupt::tidy();
    kept
}

/// Points `fd` at /dev/null; a duplicate of what it was, or `fd` itself
/// when that fails.
fn silence(fd: i32) -> i32 {
    // SAFETY: dup, open and dup2 take plain values and a valid C string.
    unsafe {
        let kept = nix::libc::dup(fd);
        let null = nix::libc::open(c"/dev/null".as_ptr(), nix::libc::O_WRONLY);
        if kept < 0 || null < 0 || nix::libc::dup2(null, fd) < 0 {
            return if kept < 0 { fd } else { kept };
        }
        nix::libc::close(null);
        kept
    }
}

/// The message of a `println!` or `eprintln!` that failed on a closed pipe.
fn closed_output(message: &str) -> bool {
    let epipe = std::io::Error::from_raw_os_error(nix::libc::EPIPE).to_string();
    message.starts_with("failed printing to std") && message.ends_with(&epipe)
}

/// Writes `bytes` to `fd` unless it stays full for a second (a paused
/// terminal, a pipe nobody reads): an interrupt must never hang.
fn write_if_room(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let mut poll = nix::libc::pollfd {
            fd,
            events: nix::libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: poll and write take plain values and a valid buffer.
        let written = unsafe {
            if nix::libc::poll(&mut poll, 1, 1000) != 1 || poll.revents & nix::libc::POLLOUT == 0 {
                return;
            }
            nix::libc::write(fd, bytes.as_ptr().cast(), bytes.len().min(4096))
        };
        if written <= 0 {
            return;
        }
        bytes = &bytes[written as usize..];
    }
}

fn init_logging(level: &str) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("warn,referee={level}")));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, never in a log file
        // or a CI transcript; NO_COLOR is honoured too.
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none(),
        )
        .with_target(false)
        .init();
}

/// Bots are started through `referee-launch` beside this binary, or
/// where it is missing through this same binary (see `bot::use_launcher`):
/// `/proc/self/exe` still runs it after a rebuild replaced the file.
fn use_launcher() {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("referee-launch")))
        .filter(|launcher| launcher.is_file());
    let own = std::path::PathBuf::from("/proc/self/exe");
    match beside
        .or_else(|| own.exists().then_some(own))
        .or_else(|| std::env::current_exe().ok())
    {
        Some(exe) => referee::bot::use_launcher(exe),
        None => tracing::warn!("cannot find the referee's own program: bots are forked"),
    }
}

/// A panic is a bug in the referee: kill every bot, report, exit 70. The
/// one exception is `println!` or `eprintln!` meeting a closed pipe, which
/// ends the run quietly (see [`start_pipe_watch`]).
/// Raises the referee's own descriptor soft limit to its hard limit: many
/// games at once need many pipes, and a shortage of the referee's would
/// only void games (docs/results.md). Bots get their own limit
/// (`--limit-open-files`), not this one.
fn raise_descriptor_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
        && let Err(e) = setrlimit(Resource::RLIMIT_NOFILE, hard, hard)
    {
        tracing::warn!("cannot raise the open-files soft limit from {soft} to {hard}: {e}");
    }
}

fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload_as_str().is_some_and(closed_output) {
            quit_quietly();
        }
        groups::kill_all();
        referee::interrupt::remove_own_dirs();
        default(info);
        // Not eprintln!, which would panic again on a closed stderr.
        let _ = writeln!(
            std::io::stderr(),
            "referee: internal error (this is a bug in the referee)"
        );
        std::process::exit(Status::Internal.code());
    }));
}
