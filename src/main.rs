use std::io::Write;

use clap::Parser;
use tokio::signal::unix::{SignalKind, signal};
use tracing_subscriber::EnvFilter;

use referee::bot::groups;
use referee::cli::{self, Cli};
use referee::exit::Status;

fn main() {
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
    init_logging(cli.verbose);
    // One game drives its bots from one thread: a current-thread runtime
    // avoids cross-thread wake-ups on every move, and keeps every bot
    // spawned from the main thread, which its parent-death signal needs.
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
    let status = runtime.block_on(run_until_signal(cli));
    groups::kill_all();
    let _ = std::io::stdout().flush();
    std::process::exit(status.code());
}

/// Runs the subcommand; SIGINT, SIGTERM or SIGHUP abandon it, which kills
/// every bot (dropping a bot kills its process group).
async fn run_until_signal(cli: Cli) -> Status {
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        eprintln!("referee: cannot install signal handlers");
        return Status::Internal;
    };
    let name = tokio::select! {
        status = cli::run(cli) => return status,
        _ = int.recv() => "SIGINT",
        _ = term.recv() => "SIGTERM",
        _ = hup.recv() => "SIGHUP",
    };
    groups::kill_all();
    eprintln!("referee: interrupted by {name}; every bot was killed");
    Status::Interrupted
}

fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("warn,referee={level}")));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
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
