//! `referee league`'s command line: its own file, as the command line
//! splits by subcommand.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::BotOptions;
use crate::bot::DEFAULT_MAX_LINE;
use crate::bot::environment::Vars;
use crate::exit::Status;
use crate::league::db::Location;
use crate::league::{self, LeagueConfig};
use crate::units::{parse_at_least_one, parse_positive_duration};

pub const HELP: &str = "\
A league reads a tournament file once (its game, limits, entrants and globs;
not games, format = \"gauntlet\", sprt or standings_every) and plays until it
is stopped. Every few seconds it looks at the globs' folders again: a new
folder is built and enters, a folder whose sources changed enters as the
entrant's next version (name@v2, ...; the one before stops playing and keeps
its games), a folder that is gone leaves. A new version plays first until its
rating is known; then games go where they tell the most, every version
keeping a share. Every finished game is committed to the database (a SQLite
file, or PostgreSQL); a league started again on it goes on where it stopped.
On PostgreSQL, workers on other machines play its tables too
(`referee league work`); --jobs 0 leaves every game to them.

Examples:
  referee league run class.toml --db class.db
  referee league run class.toml --db class.db --games 200 --jobs 2
  referee league show class.db
  referee league export class.db out/ && referee report out/
  referee league run class.toml --db postgres://league@db.example/class \\
      --versions /shared/class-versions --jobs 0

docs/league.md has the matchmaking, the database and a teacher's term;
docs/cluster.md a league on many machines.";

#[derive(Debug, Args)]
pub struct LeagueArgs {
    #[command(subcommand)]
    pub command: LeagueCommand,
}

#[derive(Debug, Subcommand)]
pub enum LeagueCommand {
    /// Runs a league from a tournament file until it is stopped.
    #[command(after_help = HELP, after_long_help = HELP)]
    Run(Box<RunArgs>),
    /// Writes a league's games as a tournament's output folder (records,
    /// run.json, report), each version an entrant name@vN.
    Export(ExportArgs),
    /// Prints a league's standings from its database (beside a running
    /// league too).
    Show(ShowArgs),
    /// Plays a running league's tables on this machine, as one of its
    /// workers (a league on PostgreSQL, on many machines).
    #[command(after_help = WORK_HELP, after_long_help = WORK_HELP)]
    Work(WorkArgs),
}

pub const WORK_HELP: &str = "\
A worker claims a table of the league (a round of games at one table) from its
database, plays its games and commits each as it ends, then claims the next,
until it is stopped (Ctrl-C, SIGTERM, scancel: its tables go back to the
queue) or the league has its --games. From the database it takes what to play
(the league's rules and seed, its limits of time and memory, each version);
the game and its judge come from the league's file as this machine sees it
(refused unless it is the file the league read), and each version plays only
from its copy in the versions' folder. It must see that folder (the league's
--versions) and the league file's folder, on a shared file system. A worker
killed outright loses only its games in flight: its tables go back to the
queue when their lease runs out, and no game is recorded twice.

How its bots are contained is the worker's own: --sandbox (whatever the
database says; a league run with --sandbox refuses a worker without it), what
its sandbox hides, and its --env. Without --sandbox a bot can read the
worker's environment and command line: give the database's password in
~/.pgpass (mode 0600; or the file PGPASSFILE names), never in the URL or in
PGPASSWORD, and run workers with --sandbox.

Examples:
  referee league work class.toml --db postgres://league@db.example/class \\
      --versions /shared/class/versions --sandbox --jobs 4
  sbatch --array=1-8 examples/slurm/league-workers.sbatch postgres://league@db.example/class --sandbox

docs/cluster.md has a league on a cluster, step by step.";

#[derive(Debug, Args)]
pub struct WorkArgs {
    /// The league's file, as this machine sees it (default: where the
    /// league read it). The game and its judge come from it; a file that
    /// is not the one the league read is refused.
    #[arg(value_name = "FILE.toml", value_parser = crate::units::parse_absolute_path)]
    pub file: Option<PathBuf>,

    /// The league's database: a postgres:// URL (a SQLite file works too,
    /// for workers on the league's own machine). Its password comes from
    /// ~/.pgpass (or PGPASSFILE), as psql's does.
    #[arg(long, value_name = "URL", value_parser = parse_db)]
    pub db: Location,

    /// The league's versions' folder as this machine sees it (default:
    /// where the league keeps it). A version plays only from its copy
    /// there.
    #[arg(long, value_name = "DIR", value_parser = crate::units::parse_absolute_path)]
    pub versions: Option<PathBuf>,

    /// Run every bot under bubblewrap, whatever the league's database
    /// says: the worker's own containment (a league run with --sandbox
    /// refuses a worker without it). Without it, a bot can read this
    /// worker's environment and command line, which it says at its start.
    #[arg(long)]
    pub sandbox: bool,

    /// Games at once (default: the number of CPUs).
    #[arg(long, value_name = "N", value_parser = parse_at_least_one, allow_negative_numbers = true)]
    pub jobs: Option<u64>,

    /// Pin each job (its referee thread and its bots) to one CPU.
    #[arg(long)]
    pub pin: bool,

    /// The worker's name in the league (default: HOST:PID, or HOST:slurm-JOB_TASK).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// How long a claimed table stays this worker's without word from it:
    /// a worker that dies loses its table to another after this.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_positive_duration)]
    pub lease: Duration,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The league's database: a SQLite file, or a postgres:// URL.
    #[arg(value_name = "DB", value_parser = parse_db)]
    pub db: Location,
    /// Every version, not only each entrant's current one.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The tournament file (TOML) that names the game, limits and entrants.
    #[arg(value_name = "FILE.toml", value_parser = crate::units::parse_absolute_path)]
    pub file: PathBuf,

    /// The league's database, made if missing: a SQLite file, or a
    /// PostgreSQL server's URL (postgres://USER@HOST/NAME; what it leaves
    /// out comes from PGHOST, PGUSER... and its password from ~/.pgpass,
    /// as psql reads them). A league started again on it goes on where it
    /// stopped.
    #[arg(long, value_name = "PATH|URL", value_parser = parse_db)]
    pub db: Location,

    /// Where the versions' copies are kept (made if missing): by default
    /// beside a SQLite database (DB.versions); required with PostgreSQL.
    /// Workers on other machines must see it at the same path.
    #[arg(long, value_name = "DIR", value_parser = crate::units::parse_absolute_path)]
    pub versions: Option<PathBuf>,

    /// Stop once the database holds N games (for tests and CI); without
    /// it the league plays until Ctrl-C or SIGTERM.
    #[arg(long, value_name = "N", value_parser = parse_at_least_one, allow_negative_numbers = true)]
    pub games: Option<u64>,

    /// Games at once on this machine (default: the file's jobs, else the
    /// number of CPUs); 0 plays none here, only deals them to workers
    /// (`referee league work`).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub jobs: Option<u64>,

    /// Pin each job (its referee thread and its bots) to one CPU.
    #[arg(long)]
    pub pin: bool,

    /// The league's seed, for a new database (overrides the file's; a
    /// league started again keeps its own).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Serve the live page (leaderboard, entrants, replays, JSON) at ADDR:
    /// a port alone is loopback's (8080 is 127.0.0.1:8080); beyond
    /// loopback only when the address says so (0.0.0.0:8080).
    #[arg(long, value_name = "ADDR", value_parser = league::serve_address)]
    pub serve: Option<std::net::SocketAddr>,

    /// How often the entrants' folders are looked at again.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_positive_duration)]
    pub scan_every: Duration,

    #[command(flatten)]
    pub bot: BotOptions,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The league's database: a SQLite file, or a postgres:// URL.
    #[arg(value_name = "DB", value_parser = parse_db)]
    pub db: Location,
    /// The folder to write: records.jsonl, run.json, report.html.
    #[arg(value_name = "OUT")]
    pub out: PathBuf,
}

impl LeagueArgs {
    pub fn bot_options(&self) -> Option<&BotOptions> {
        match &self.command {
            LeagueCommand::Run(args) => Some(&args.bot),
            LeagueCommand::Export(_) | LeagueCommand::Show(_) | LeagueCommand::Work(_) => None,
        }
    }
}

/// `referee league ...`.
pub async fn run(args: LeagueArgs, env: &Vars) -> Status {
    match args.command {
        LeagueCommand::Run(args) => {
            let args = *args;
            let config = LeagueConfig {
                file: args.file,
                db: args.db,
                versions: args.versions,
                games: args.games,
                jobs: args.jobs.map(|j| j as usize),
                pin: args.pin,
                seed: args.seed,
                scan_every: args.scan_every,
                limits: args.bot.limits(DEFAULT_MAX_LINE),
                env: env.clone(),
                durable: crate::record::fsync_on(),
                serve: args.serve,
            };
            league::run(&config).await
        }
        LeagueCommand::Export(args) => league::export(&args.db, &args.out),
        LeagueCommand::Show(args) => league::show(&args.db, args.all),
        LeagueCommand::Work(args) => {
            let config = league::worker::WorkConfig {
                file: args.file,
                db: args.db,
                versions: args.versions,
                jobs: args.jobs.map(|j| j as usize),
                pin: args.pin,
                name: args.name,
                lease: args.lease,
                env: env.clone(),
                sandbox: args.sandbox,
            };
            league::worker::work(&config).await
        }
    }
}

/// `--db`'s value: a PostgreSQL URL, else a file's path, made absolute (a
/// league's bots play in other folders).
fn parse_db(text: &str) -> Result<Location, String> {
    match Location::parse(text.as_ref()) {
        Location::File(_) => crate::units::parse_absolute_path(text).map(Location::File),
        url => Ok(url),
    }
}
