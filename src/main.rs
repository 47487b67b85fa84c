use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;
use nix::sys::signal::{SigSet, Signal};
use tracing_subscriber::EnvFilter;

use referee::bot::groups;
use referee::cli::{self, Cli};
use referee::exit::Status;

fn main() {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == groups::WATCHDOG_COMMAND)
    {
        groups::watchdog_main();
    }
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
    referee::record::set_fsync(!cli.no_fsync);
    // Before any other thread exists, so that every thread inherits the
    // blocked mask and the signals reach only the signal thread.
    start_signal_thread();
    groups::become_subreaper();
    referee::bot::cgroup::log_containment();
    groups::start_watchdog();
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
    // An interrupt kills the bots, which can end the run here too: the
    // signal thread is about to exit with its own status, so let it.
    if INTERRUPTED.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    // Kills every bot group left and every orphan (a full stray scan).
    groups::kill_all();
    let _ = std::io::stdout().flush();
    std::process::exit(status.code());
}

/// Set by the signal thread before it kills the bots (see `main`).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

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
            INTERRUPTED.store(true, Ordering::SeqCst);
            groups::kill_all();
            // What the run had finished (a tournament's standings so far).
            if let Some(report) = referee::interrupt::report() {
                // SAFETY: write takes plain values.
                unsafe {
                    nix::libc::write(1, report.as_ptr().cast(), report.len());
                }
            }
            let message = format!("referee: interrupted by {signal}; every bot was killed\n");
            // Straight to the file descriptors, without Rust's locks on
            // stdio, which the stuck main thread may hold.
            // SAFETY: write and _exit take plain values.
            unsafe {
                nix::libc::write(2, message.as_ptr().cast(), message.len());
                nix::libc::_exit(Status::Interrupted.code());
            }
        });
    if let Err(e) = started {
        eprintln!("referee: cannot start the signal thread: {e}");
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

/// A panic is a bug in the referee: kill every bot, report, exit 70.
fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        groups::kill_all();
        default(info);
        eprintln!("referee: internal error (this is a bug in the referee)");
        std::process::exit(Status::Internal.code());
    }));
}
