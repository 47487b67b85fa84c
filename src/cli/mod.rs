//! The command line: `referee <SUBCOMMAND> [OPTIONS] ...`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

mod league;

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand};

use crate::bot::build::BuildOptions;
use crate::bot::clock::{MoveLimits, TimeControl};
use crate::bot::environment::{self, EnvArg, Vars};
use crate::bot::{
    BotLimits, BotSpec, DEFAULT_MAX_LINE, DEFAULT_MEMORY, DEFAULT_STDERR_KEEP, Environment,
    Resources,
};
use crate::exit::{EXIT_STATUS_HELP, Status};
use crate::games::acesup::{self, Decks, JudgeConfig, RunOptions};
use crate::games::chomp::{self, ChompConfig, Coord};
use crate::games::evensteven::dealer::{self, DealerConfig};
use crate::games::septica::{self, SepticaConfig};
use crate::tournament::{self, TournamentConfig};
use crate::units::{
    Limit, parse_absolute_path, parse_at_least_one, parse_count, parse_cpu, parse_duration,
    parse_max_line, parse_positive_duration, parse_size,
};

#[derive(Debug, Parser)]
#[command(
    name = "referee",
    version,
    propagate_version = true,
    about = "Referees and tournaments for programs that play games over standard input and output.",
    long_about = "Referees and tournaments for programs that play games over standard input \
                  and output.\n\nEach subcommand referees one game. Bots run in their own \
                  process groups with time limits on every move; none outlives the referee.",
    after_help = EXIT_STATUS_HELP,
)]
pub struct Cli {
    /// How much the referee logs on standard error: `info` adds summaries,
    /// `debug` every bot process. RUST_LOG overrides.
    #[arg(long, value_name = "LEVEL", global = true, default_value = "warn")]
    pub log: LogLevel,

    /// Do not fsync results after each game: faster, and a crash of the
    /// referee still loses nothing written; only a crash of the machine may.
    #[arg(long, global = true)]
    pub no_fsync: bool,

    /// Contain bots without cgroups, even where the referee could make
    /// them: memory sampled from /proc every 10ms, no process cap, CPU
    /// time sampled. By default, as root (cgroup v1) or in a delegated
    /// cgroup v2 subtree, each bot and build runs in a cgroup of its own:
    /// the kernel caps and measures its memory, processes and CPU time, and
    /// kills all of it at the end (see docs/containment.md).
    #[arg(long, global = true)]
    pub no_cgroups: bool,

    #[command(flatten)]
    pub containment: ContainmentOptions,

    /// Set NAME to VALUE for every bot and build; NAME alone passes the
    /// referee's own NAME on (nothing when it has none). Repeatable. Bots
    /// and builds otherwise get only PATH, HOME, the locale (LANG,
    /// LANGUAGE, LC_*) and TMPDIR, whatever the shell has: e.g. --env
    /// JAVA_HOME --env PYTHONPATH=lib. A tournament or ci file's `env`
    /// tables come on top. Judges and validators keep the referee's
    /// environment. See docs/bots.md.
    #[arg(
        long,
        global = true,
        value_name = "NAME[=VALUE]",
        value_parser = clap::builder::OsStringValueParser::new().try_map(environment::parse_env)
    )]
    pub env: Vec<EnvArg>,

    #[command(subcommand)]
    pub command: Command,
}

/// Log levels for `--log`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

impl Command {
    /// The options for the bots it runs, if it runs any.
    fn bot_options(&self) -> Option<&BotOptions> {
        match self {
            Command::Dealer(args) => Some(&args.bot),
            Command::Chomp(args) => Some(&args.bot),
            Command::Septica(args) => Some(&args.bot),
            Command::Acesup(args) => Some(&args.bot),
            Command::Play(args) => Some(&args.bot),
            Command::Interactive(args) => Some(&args.bot),
            Command::Tournament(args) => Some(&args.bot),
            Command::Ci(args) => Some(&args.bot),
            Command::League(args) => args.bot_options(),
            Command::Merge(_) | Command::Report(_) | Command::Replay(_) => None,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Even Steven: deal games to a player program (the contest's `dealer`).
    #[command(
        override_usage = "referee dealer [OPTIONS] PROGRAM [ARGS]...",
        after_help = DEALER_HELP,
        after_long_help = DEALER_HELP
    )]
    Dealer(DealerArgs),

    /// Chomp: K programs eat letters on a projective plane (the contest's `ch`).
    #[command(
        override_usage = "referee chomp [OPTIONS] [-start X Y] ARRAY DIR...",
        after_help = CHOMP_HELP,
        after_long_help = CHOMP_HELP
    )]
    Chomp(ChompArgs),

    /// Septica: a player program against the computer, 1000 matches.
    #[command(
        override_usage = "referee septica [OPTIONS] PROGRAM [ARGS]...",
        after_help = SEPTICA_HELP,
        after_long_help = SEPTICA_HELP
    )]
    Septica(SepticaArgs),

    /// Many games of one kind between entrants, from a TOML file.
    #[command(after_help = TOURNAMENT_HELP, after_long_help = TOURNAMENT_HELP)]
    Tournament(TournamentArgs),

    /// A league that plays until stopped while entrants come and go, into a database.
    #[command(after_help = league::HELP, after_long_help = league::HELP)]
    League(league::LeagueArgs),

    /// Checks expectations about bots (strength, speed, no crashes), for CI.
    #[command(after_help = CI_HELP, after_long_help = CI_HELP)]
    Ci(CiArgs),

    /// Combines the outputs of tournament shards into one set of standings.
    #[command(after_help = MERGE_HELP, after_long_help = MERGE_HELP)]
    Merge(MergeArgs),

    /// Writes a tournament's report.html again from its output directory.
    #[command(after_help = REPORT_HELP, after_long_help = REPORT_HELP)]
    Report(ReportArgs),

    /// Writes one self-contained HTML page that replays recorded games.
    #[command(after_help = REPLAY_HELP, after_long_help = REPLAY_HELP)]
    Replay(ReplayArgs),

    /// Aces Up: judge a program's output against the rules engine, deck by deck.
    #[command(
        override_usage = "referee acesup [OPTIONS] (--decks FILE | --random N) PROGRAM [ARGS]...",
        after_help = ACESUP_HELP,
        after_long_help = ACESUP_HELP
    )]
    Acesup(AcesupArgs),

    /// Any game: a judge program referees it over JSON Lines (docs/judge-protocol.md).
    #[command(
        override_usage = "referee play [OPTIONS] GAME.toml BOT...",
        after_help = PLAY_HELP,
        after_long_help = PLAY_HELP
    )]
    Play(PlayArgs),

    /// An ICPC interactive problem: its validator against a program, test case by test case.
    #[command(
        override_usage = "referee interactive [OPTIONS] PROBLEM_DIR [PROGRAM [ARGS]...]",
        after_help = crate::interactive::HELP,
        after_long_help = crate::interactive::HELP
    )]
    Interactive(InteractiveArgs),
}

const PLAY_HELP: &str = "\
GAME.toml names the judge program, the number of players, the default limits
and how a move is read (docs/judge-protocol.md). Each BOT is [NAME=]COMMAND:
a program path, or a program with its arguments in one quoted argument, under
the name the judge and the records use (the command as written unless NAME=
gives one). Seats rotate: games come in rounds of one game per seat on one
opening, so with two bots games 1 and 2 are a colour-swapped pair. Every game
starts fresh bot processes unless the game file says keep_players = true.

Options come in two kinds: the judge's (start.options: --game-option, over the
game file's [options]) and each bot's (start.players[i].options: --each-option
for every bot, --option NAME:... for one, which wins). A VALUE is read as a
TOML value: 5000 an integer, true a boolean, 1.5 a float, \"x\" a string; a bare
word or anything else is a string as written. --time-control BASE+INC sets
every bot's clock, --time-control NAME:BASE+INC one bot's (time odds), and
--time-control none removes the game file's clock (fastchess's tc=inf).

Examples:
  referee play games/evensteven/game.toml target/release/evensteven
  referee play --games 1000 --seed 7 --results out.jsonl games/evensteven/game.toml ./player
  referee play --games 20 --time-control 2s+50ms --option 'weak:Skill Level=3' \
      games/chess/game.toml weak=/usr/games/stockfish strong=/usr/games/stockfish
  referee play --games 20 --game-option nodes=5000 --each-option Hash=16 \
      --pgn games.pgn games/chess/game.toml /usr/games/stockfish /usr/games/stockfish
  referee play --time-control 2s+50ms --time-control odds:1s+25ms \
      games/chess/game.toml odds=/usr/games/stockfish full=/usr/games/stockfish
  referee play --games 2 chess a=/usr/games/stockfish b=/usr/games/stockfish
      (the chess game shipped inside the referee, from any folder)

Exit status:
  0    the games were played, whatever the bots did (their failures are in
       the lines and the records)
  64   bad arguments, a BOT whose program cannot be started (missing, not
       executable: named, before the first game), a bad game file (named with
       its line), a number of bots the game does not take, or settings the
       judge refused (`refuse`: an engine option it does not declare, a game
       option it does not know)
  70   judge error: the judge crashed, hung (10s per message) or broke the
       protocol; the run stops after recording that game, no bot is blamed
  74   the results file could not be written
  130  interrupted";

const TOURNAMENT_HELP: &str = "\
The file names the game, its limits, the number of games, a seed and the
entrants (docs/tournaments.md). Games run several at once; one-player games
are played by every entrant on the same seeds. An external game's judge takes
options: the game file's [options], under the tournament file's, under
--game-option KEY=VALUE (VALUE read as a TOML value: 5000, true, 1.5, \"x\"; a
bare word is a string); each entrant's are its own over the file's [each].

Examples:
  referee tournament tournaments/chomp.toml
  referee tournament tournaments/chess.toml --game-option nodes=5000 --out runs/chess
  referee tournament tournaments/septica.toml --jobs 2 --out runs/septica
  referee tournament tournaments/septica.toml --out runs/s1 --shard 1/4
  referee tournament tournaments/septica.toml --out runs/septica --resume

Exit status:
  0    the tournament was played (whatever the bots did; their timeouts,
       crashes and disqualifications are in the records and standings)
  64   a bad tournament file (every problem listed, with its line) or
       arguments, an entrant's command whose program is found nowhere (a
       folder's program that cannot start disqualifies its entrant only),
       --resume of a run that differs (it says how), or settings
       an external game's judge refused (`refuse`: named with the entrant;
       the games recorded before stay)
  70   internal error
  74   a record, standings or copy could not be written (the file is named)
  130  interrupted: the standings of the games finished so far are printed";

const CI_HELP: &str = "\
Each [[case]] of the suite plays a bot (against opponents, for Chomp) and
checks its expectations: no crash, no timeout, no unnecessary loss, a win
rate (Wilson lower bound), a mean score, the slowest and the 99th-percentile
move time (docs/ci.md). A line per case: PASS or FAIL, the figures, why.

Examples:
  referee ci tournaments/ci.toml
  referee ci my-bot.toml --junit ci-report.xml

Exit status:
  0    every case passed
  1    some case failed
  64   a bad suite (every problem listed, nothing played; --junit still
       writes a report saying why)
  70   internal error;  74  the JUnit report could not be written";

const MERGE_HELP: &str = "\
Reads OUT/run.json and OUT/records.jsonl of each shard's --out directory and
prints the standings one run of all the games would give.

Example:
  referee merge runs/s1 runs/s2 runs/s3 runs/s4 --out runs/all";

const REPORT_HELP: &str = "\
Reads DIR/run.json and DIR/records.jsonl (a tournament's --out directory, or
merged shards') and writes DIR/report.html: the standings, each entrant's
rating or win rate over the games with its interval, score distributions
(per array for Chomp), failures by kind, the slowest moves and every game.
One file with nothing to load: open it from anywhere. `referee tournament
--out DIR` writes it after its run; this makes it again (after a resume, a
merge, or a new version of referee). See docs/tournaments.md.

Examples:
  referee report runs/chomp
  referee report runs/chomp -o chomp-report.html";
const REPLAY_HELP: &str = "\
Reads a results file (JSON Lines) of `referee dealer`, `chomp`, `septica`,
`acesup`, `play`, or a tournament's OUT/records.jsonl, and writes one HTML
file that replays its games in a browser: scripts, styles and data inline,
nothing fetched. Chomp needs `--record-moves` to be replayed round by round;
external games need it for their frames (docs/replay.md).

Examples:
  referee replay results.jsonl                   writes results.html
  referee replay --game 3 -o game3.html out/records.jsonl

Exit status:
  0    the page was written
  64   the records could not be read (the message names the file and line)
  74   the page could not be written";

const ACESUP_HELP: &str = "\
Each deck is fed to a fresh run of PROGRAM as 52 lines; its whole output is
compared line by line with the rules engine's (format: docs/acesup.md), or,
with --mode figures, only its figures are, wherever they are among other
lines. Verdicts: ACCEPTED, WRONG ANSWER (with the first differing line or
figure, expected and got), TIME LIMIT, RUNTIME ERROR (with how it ended and
its last stderr lines). Verdicts and records are in deck order whatever
--jobs is. A run stops early with --fail-fast or --max-failures, and after
10 TIME LIMITs in a row unless --max-timeouts-in-a-row says otherwise.

Examples:
  make -C bots/acesup && referee acesup --decks tournaments/acesup/decks.txt bots/acesup/executeit
  referee acesup --random 1000 --seed 7 ./executeit
  referee acesup --mode figures --ignore '^Done ' --random 200 --seed 1 --fail-fast ./executeit

Exit status:
  0    every deck accepted
  1    some deck was not
  64   bad arguments, a bad deck file (named with its line), or a program
       that cannot be started
  70   internal error;  74  the results file could not be written
  130  interrupted";

const SEPTICA_HELP: &str = "\
The computer deals and plays the other side of every match, with the policy
fixed in docs/septica.md; its random choices and every deck come from --seed.
The player must win at least --need of --matches (a tie goes to the player).

Examples:
  referee septica target/release/septica
  referee septica --matches 1000 --need 500 --seed 42 ./player
  referee septica --deal-file match.txt -v ./player      # replay, with the transcript

Exit status:
  0    accepted: at least --need matches won
  1    rejected: fewer wins
  2    incorrect output: an illegal or unparsable command (the message names
       the match, the trick and the command)
  3    the player failed: a timeout (--timeout, --startup, --time-control),
       exited or was killed, closed its output, or did not exit within
       --grace after the last match
  64   bad arguments, a bad --deal-file, or a player that cannot be started
  70   internal error;  74  the results file could not be written
  130  interrupted";

const CHOMP_HELP: &str = "\
Each DIR is one player (player i is the i-th DIR; a directory may be given more
than once). Each distinct DIR is built once with `make` there (skipped when it
has no makefile), then ./pc2 runs in it. A failed build or a missing pc2
disqualifies that player; the others still play.

Examples (in the source folder; examples/chomp/* run the installed bots):
  referee chomp tournaments/chomp/statement.txt examples/chomp/strong examples/chomp/greedy
  referee chomp -start 3 4 arrays/big.txt . ../rival ../rival
  referee chomp --start R 4 --prep 0s --starve 2s ARRAY DIR...
  referee chomp --prep 0s --games 8 --seed 7 tournaments/chomp examples/chomp/strong examples/chomp/greedy

Exit status:
  0    the game(s) were played, whatever the bots did
  64   bad arguments, a bad array file (named with line and column), a start
       cell outside the array, or every player disqualified
  70   internal error;  74  the results file could not be written
  130  interrupted";

const DEALER_HELP: &str = "\
Input (standard input, or --input): one line `N seed` per game, with
1 <= N <= 13 and 1 <= seed <= 2147483646; blank lines are ignored. Output: for
each game `Game K` and then YOU WIN, YOU LOSE NECESSARILY or YOU LOSE
UNNECESSARILY. Lines the player writes starting with `*` are copied to
standard output as they are read.

Examples:
  referee dealer ./evensteven < games.txt
  referee dealer ./evensteven debug < games.txt          # `debug` goes to the player
  referee dealer --timeout 250ms --results out.jsonl ./evensteven < games.txt

Exit status:
  0    all games played, whatever their outcome
  2    incorrect output: a line that is not a card, a card not in the hand, a
       card played twice (the message names the game, the move and the text)
  3    the player failed: a timeout (--timeout, --startup, --time-control),
       exited or was killed, closed its output early, or did not exit within
       --grace after the last game
  64   bad dealer input (the message names the line) or bad arguments
  70   internal error;  74  the results file could not be written
  130  interrupted";

/// Options every subcommand shares for the bots it runs.
#[derive(Debug, Args)]
pub struct BotOptions {
    /// How long a bot has to exit once its input is closed at the end; then
    /// its process group gets SIGTERM, and SIGKILL 500ms later.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub grace: Duration,

    /// Extra time for each bot process's first reply, on top of the move
    /// limit, so that starting a JVM or Python does not count against the
    /// first move. Recorded on its own, never in move statistics. (Chomp
    /// has --prep instead; an Aces Up run's --timeout covers its start.)
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub startup: Duration,

    /// Also copy what bots write to standard error to the referee's standard
    /// error as it arrives. It is captured (the last 64 KiB) either way.
    #[arg(long)]
    pub show_stderr: bool,

    /// Memory a bot may hold, all its processes together: everything the
    /// kernel charges its cgroup (shared memory and its page cache
    /// included); with --no-cgroups, their resident memory sampled every
    /// 10ms. Over it, the bot is killed and its status is `limit`
    /// (memory). E.g. 2GiB, 512MiB, or `none` to measure only.
    /// Default: 2GiB (`referee interactive`: the package's
    /// `limits.memory`, else 2GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub limit_memory: Option<Limit>,

    /// Address space of each bot process (RLIMIT_AS), e.g. 4GiB; at least
    /// 16MiB. Off by default: a JVM reserves far more address space than it uses, and a
    /// failed allocation shows as the bot's own crash.
    #[arg(long, value_name = "SIZE", default_value = "none", value_parser = parse_size)]
    pub limit_address_space: Limit,

    /// Largest file a bot may write (`none` for no limit).
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size)]
    pub limit_file_size: Limit,

    /// Open files per bot process: at least 4, at most the kernel's
    /// /proc/sys/fs/nr_open (`none` for no limit).
    #[arg(long, value_name = "N", default_value = "1024", value_parser = parse_count)]
    pub limit_open_files: Limit,

    /// Processes and threads a bot may have at once, all of it together,
    /// root included (its cgroup's pids.max): past it, fork and new threads
    /// fail, and a bot that then fails has status `limit` (processes).
    /// Default: 256 where bots run in cgroups (Java, Node and Python start
    /// well under it), else none; `none` for no cap. Asking for a cap where
    /// the referee cannot make cgroups is a usage error (status 64).
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub limit_procs: Option<Limit>,

    /// Run every bot, and every build, under bubblewrap (needs the `bwrap`
    /// program): the system read-only, only its own folder (writable for a
    /// build), no other entrant's folder, no test data, private /tmp and
    /// /dev/shm, no network, no other process.
    #[arg(long)]
    pub sandbox: bool,

    /// CPU time of each bot process (e.g. 10m; `none` for no limit).
    #[arg(long, value_name = "DURATION", default_value = "none", value_parser = parse_cpu, allow_hyphen_values = true)]
    pub limit_cpu: Limit,
}

/// Who bots run as, and what a sandbox shows beyond its rules: the
/// machine's own choices, never taken from a league's database.
#[derive(Debug, Args, Clone)]
pub struct ContainmentOptions {
    /// Uids (and gids, the same numbers) that bots and builds run as, one
    /// each, when the referee runs as root under --sandbox (or with
    /// --unprivileged): unused by any user, group or process, checked
    /// before each is first used.
    #[arg(
        long,
        global = true,
        value_name = "FIRST-LAST",
        default_value = "60000-60999"
    )]
    pub bot_uids: crate::bot::boxes::UidRange,

    /// Without --sandbox too, run each bot and build as a uid of its own
    /// (from --bot-uids; root only), so that bots cannot read or signal
    /// each other or the referee. A bot whose program or interpreter that
    /// uid cannot reach is refused, naming the path.
    #[arg(long, global = true)]
    pub unprivileged: bool,

    /// Also show PATH, read-only, to every sandboxed bot and build (a
    /// course's library, a toolchain the rules do not find). Repeatable.
    #[arg(long, global = true, value_name = "PATH")]
    pub sandbox_show: Vec<PathBuf>,
}

impl ContainmentOptions {
    /// Sets who bots run as for this process, or says why it cannot be.
    pub fn configure(&self) -> Result<(), String> {
        let show = self
            .sandbox_show
            .iter()
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
            .collect();
        crate::bot::boxes::configure(crate::bot::boxes::Settings {
            uids: self.bot_uids,
            unprivileged: self.unprivileged,
            show,
        })
    }
}

/// The cap on a bot's processes without `--limit-procs`: only a cgroup can
/// hold it (RLIMIT_NPROC counts all of a user's processes, and not root's).
fn default_process_cap() -> Option<u64> {
    crate::bot::cgroup::hierarchy().map(|_| crate::bot::DEFAULT_PROCESSES)
}

/// Smallest `--limit-address-space`: below it no dynamically linked
/// program starts (documented in docs/containment.md).
pub const LEAST_ADDRESS_SPACE: u64 = 16 << 20;

/// Smallest `--limit-open-files`: the three standard streams, and one
/// more, which the program loader needs to open a library.
pub const LEAST_OPEN_FILES: u64 = 4;

/// The most open files the kernel lets a process have (`nr_open`), which
/// even root cannot raise its limit past.
fn most_open_files() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()?
        .trim()
        .parse()
        .ok()
}

impl BotOptions {
    /// Refuses, before anything runs, a limit the user asked for that this
    /// machine cannot enforce; warns of a default it cannot.
    pub fn check_enforceable(&self) -> Result<(), String> {
        self.check_resource_limits()?;
        let Some(why) = crate::bot::cgroup::why_not() else {
            return Ok(());
        };
        match self.limit_procs {
            Some(Limit(Some(cap))) => Err(format!(
                "--limit-procs {cap}: only a cgroup can cap a bot's processes, and bots run \
                 without one here ({why}); see docs/containment.md"
            )),
            Some(Limit(None)) => Ok(()),
            None => {
                tracing::warn!(
                    "no cap on each bot's processes (--limit-procs needs cgroups: {why})"
                );
                Ok(())
            }
        }
    }

    /// Refuses a resource limit no bot could be started under: below what
    /// any program needs, or one the kernel would refuse to set (every bot
    /// would then fail to start, and be recorded as crashing).
    fn check_resource_limits(&self) -> Result<(), String> {
        use crate::bot::usage::human_bytes;
        if let Some(bytes) = self.limit_address_space.0
            && bytes < LEAST_ADDRESS_SPACE
        {
            return Err(format!(
                "--limit-address-space {}: must be at least {} (the program loader and \
                 the C library alone map more), or `none`",
                human_bytes(bytes),
                human_bytes(LEAST_ADDRESS_SPACE)
            ));
        }
        if let Some(files) = self.limit_open_files.0 {
            if files < LEAST_OPEN_FILES {
                return Err(format!(
                    "--limit-open-files {files}: must be at least {LEAST_OPEN_FILES} (a bot's \
                     three standard streams, and the libraries its loader opens), or `none`"
                ));
            }
            if let Some(most) = most_open_files()
                && files > most
            {
                return Err(format!(
                    "--limit-open-files {files}: the kernel allows at most {most} open files \
                     per process (/proc/sys/fs/nr_open), or `none`"
                ));
            }
        }
        self.check_within_own_limits()
    }

    /// Without root, a process may not raise a hard limit: a bot's limits
    /// can be at most the referee's own.
    fn check_within_own_limits(&self) -> Result<(), String> {
        use nix::sys::resource::{Resource, getrlimit};
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { nix::libc::geteuid() } == 0 {
            return Ok(());
        }
        let asked = [
            (
                "--limit-address-space",
                Resource::RLIMIT_AS,
                self.limit_address_space.0,
            ),
            (
                "--limit-file-size",
                Resource::RLIMIT_FSIZE,
                self.limit_file_size.0,
            ),
            (
                "--limit-open-files",
                Resource::RLIMIT_NOFILE,
                self.limit_open_files.0,
            ),
            // The CPU limit's hard limit is a second above it.
            (
                "--limit-cpu",
                Resource::RLIMIT_CPU,
                self.limit_cpu.0.map(|s| s.saturating_add(1)),
            ),
        ];
        for (option, resource, limit) in asked {
            let (Some(limit), Ok((_, hard))) = (limit, getrlimit(resource)) else {
                continue;
            };
            if hard != nix::sys::resource::RLIM_INFINITY && limit > hard {
                return Err(format!(
                    "{option}: above the referee's own hard limit ({hard}; `ulimit -H`), \
                     which only root may raise; ask for at most that, or `none`"
                ));
            }
        }
        Ok(())
    }

    /// Limits for bots whose lines are at most `max_line` bytes.
    pub fn limits(&self, max_line: usize) -> BotLimits {
        BotLimits {
            max_line,
            stderr_keep: DEFAULT_STDERR_KEEP,
            grace: self.grace,
            startup: self.startup,
            echo_stderr: self.show_stderr,
            sandbox: self.sandbox,
            memory: self
                .limit_memory
                .map_or(Some(DEFAULT_MEMORY), |limit| limit.0),
            resources: Resources {
                address_space: self.limit_address_space.0,
                processes: self
                    .limit_procs
                    .map_or_else(default_process_cap, |limit| limit.0),
                file_size: self.limit_file_size.0,
                open_files: self.limit_open_files.0,
                cpu_seconds: self.limit_cpu.0,
            },
        }
    }
}

#[derive(Debug, Args)]
pub struct DealerArgs {
    /// Time the player has for each move, from the dealt card to its reply
    /// (e.g. 10s, 250ms, 1m30s).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub timeout: Duration,

    /// A clock per game, as chess tools have them: BASE to start with,
    /// running while the player thinks, INC added after each move (e.g.
    /// 10s+100ms). Running out is a timeout; --timeout still caps each move.
    #[arg(long, value_name = "BASE+INC")]
    pub time_control: Option<TimeControl>,

    #[command(flatten)]
    pub bot: BotOptions,

    /// Longest line the player may write, in bytes; a longer one is
    /// incorrect output.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE, value_parser = parse_max_line)]
    pub max_line: usize,

    /// Most bytes of the player's debug (`*`) lines copied per game; past
    /// it they are dropped, with a note.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    pub max_debug: usize,

    /// Append one JSON object per game to FILE (JSON Lines; see docs/results.md).
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,

    /// Read the games from FILE instead of standard input.
    #[arg(short, long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// The player program, then any arguments for it. Everything after
    /// PROGRAM goes to the player, options included. A PROGRAM whose name
    /// starts with `-` follows `--`: `referee dealer -- -name`.
    #[arg(
        value_name = "PROGRAM [ARGS]",
        required = true,
        num_args = 1..,
        trailing_var_arg = true
    )]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct ChompArgs {
    /// Start cell for every player: column X and row Y (from 1), either may
    /// be R for random. The original's `-start X Y` works too. Default: a
    /// random cell.
    #[arg(long, num_args = 2, value_names = ["X", "Y"], allow_hyphen_values = false)]
    pub start: Option<Vec<Coord>>,

    /// Time between sending the array and the first round.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub prep: Duration,

    /// A player starves when its turn time since its last successful chomp
    /// would exceed this.
    #[arg(long, value_name = "DURATION", default_value = "45s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub starve: Duration,

    #[command(flatten)]
    pub bot: BotOptions,

    /// Seed for random start cells (printed; a fresh one when not given).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Build command, run with `sh -c` in each directory.
    #[arg(long, value_name = "COMMAND", default_value = crate::bot::build::DEFAULT_MAKE)]
    pub make: String,

    /// Time limit for each build.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub build_timeout: Duration,

    /// Write each build's output to DIR/build<NAME>.log, NAME being the
    /// directory as given with every character other than a letter, a digit
    /// or `-` made `_` (bots/chomp: DIR/buildbots_chomp.log).
    #[arg(long, value_name = "DIR")]
    pub build_logs: Option<PathBuf>,

    /// Append one JSON object per game to FILE (see docs/results.md).
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,

    /// Also record every round's moves in the results, to replay games.
    #[arg(long)]
    pub record_moves: bool,

    /// Play N games: a new start cell each game, seats rotated, arrays cycled
    /// when ARRAY is a directory; then print aggregate standings.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = parse_at_least_one, allow_negative_numbers = true)]
    pub games: u64,

    /// End a game after N rounds even if food and players remain.
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u64>,

    /// Finish an interrupted run: games of this run already in the
    /// --results file are not played again (the seed is taken from them
    /// unless --seed is given).
    #[arg(long, requires = "results")]
    pub resume: bool,

    /// The array file, or a directory of *.txt array files.
    #[arg(value_name = "ARRAY")]
    pub array: PathBuf,

    /// The players' directories.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SepticaArgs {
    /// Matches to play.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = parse_at_least_one, allow_negative_numbers = true)]
    pub matches: u64,

    /// Wins needed to be accepted, at most --matches [default: half the
    /// matches played, as the statement's 500 of 1000].
    #[arg(long, value_name = "N")]
    pub need: Option<u64>,

    /// Seed of every deck and of the computer's random choices (printed; a
    /// fresh one when not given).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Time the player has for each command.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub timeout: Duration,

    /// A clock per match, as chess tools have them: BASE to start with,
    /// running while the player thinks, INC added after each move (e.g.
    /// 10s+100ms). Running out is a timeout; --timeout still caps each move.
    #[arg(long, value_name = "BASE+INC")]
    pub time_control: Option<TimeControl>,

    #[command(flatten)]
    pub bot: BotOptions,

    /// Longest line the player may write, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE, value_parser = parse_max_line)]
    pub max_line: usize,

    /// Append one JSON object per match to FILE (see docs/results.md).
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,

    /// Play the decks in FILE (one per line: 32 values from the top) instead
    /// of shuffled ones, one match each; with the same --seed a recorded
    /// match replays exactly.
    #[arg(long, value_name = "FILE")]
    pub deal_file: Option<PathBuf>,

    /// Print every message of every match (the transcript).
    #[arg(short = 'v', long)]
    pub transcript: bool,

    /// Finish an interrupted run: matches of this run already in the
    /// --results file are not played again (the seed is taken from them
    /// unless --seed is given).
    #[arg(long, requires = "results")]
    pub resume: bool,

    /// The player program, then any arguments for it (options included).
    /// A PROGRAM whose name starts with `-` follows `--`.
    #[arg(
        value_name = "PROGRAM [ARGS]",
        required = true,
        num_args = 1..,
        trailing_var_arg = true
    )]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["decks", "random"])))]
pub struct AcesupArgs {
    /// Judge the decks in FILE: 52 lines each, separated by blank lines.
    #[arg(long, value_name = "FILE")]
    pub decks: Option<PathBuf>,

    /// Judge N random decks.
    #[arg(long, value_name = "N", value_parser = parse_at_least_one, allow_negative_numbers = true)]
    pub random: Option<u64>,

    /// Seed of the random decks (printed; a fresh one when not given).
    #[arg(long, value_name = "N", requires = "random")]
    pub seed: Option<u64>,

    /// Time limit per deck, from start to exit.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub timeout: Duration,

    #[command(flatten)]
    pub bot: BotOptions,

    /// Append one JSON object per deck to FILE (see docs/results.md).
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,

    /// strict: every line must be the expected one; figures: only the
    /// figures (cards, piles, total, moves, result) count, wherever they
    /// are, other lines are ignored (docs/acesup.md).
    #[arg(long, value_name = "MODE", default_value = "strict", value_parser = ["strict", "figures"])]
    pub mode: String,

    /// Drop the output lines matching REGEX before judging (repeatable).
    #[arg(long, value_name = "REGEX", value_parser = acesup::figures::parse_pattern)]
    pub ignore: Vec<regex::Regex>,

    /// Decks judged at once (default: the number of CPUs); verdicts and
    /// records stay in deck order.
    #[arg(long, value_name = "N", value_parser = parse_at_least_one, allow_negative_numbers = true)]
    pub jobs: Option<u64>,

    /// Stop at the first deck not accepted (same as --max-failures 1).
    #[arg(long, conflicts_with = "max_failures")]
    pub fail_fast: bool,

    /// Stop once N decks were not accepted.
    #[arg(long, value_name = "N", value_parser = parse_at_least_one, allow_negative_numbers = true)]
    pub max_failures: Option<u64>,

    /// Stop after N TIME LIMITs in a row (0: never).
    #[arg(long, value_name = "N", default_value_t = acesup::TIMEOUTS_IN_A_ROW)]
    pub max_timeouts_in_a_row: u64,

    /// The program, then any arguments for it (options included). A
    /// PROGRAM whose name starts with `-` follows `--`.
    #[arg(
        value_name = "PROGRAM [ARGS]",
        required = true,
        num_args = 1..,
        trailing_var_arg = true
    )]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct PlayArgs {
    /// Time per move (default: the game file's, else 10s).
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub timeout: Option<Duration>,

    /// A clock per game and player: BASE, plus INC after each move (default:
    /// the game file's; `none`: no clock). NAME:BASE+INC gives the bot NAME
    /// its own (time odds: `--time-control weak:1s+25ms`). Repeat it for
    /// more bots.
    #[arg(long, value_name = "[NAME:]BASE+INC", value_parser = parse_clock)]
    pub time_control: Vec<ClockArg>,

    /// An option for the judge itself (protocol 2's start.options: a chess
    /// judge's nodes, book, max_plies), over the game file's [options];
    /// VALUE is read as a TOML value (5000, true, 1.5, "x"), a bare word
    /// as a string. Repeat it for more.
    #[arg(long = "game-option", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    pub game_options: Vec<(String, toml::Value)>,

    /// An option for every bot, as a tournament file's [each] options (a
    /// UCI option: --each-option Hash=16); a bot's own --option wins.
    /// Repeat it for more.
    #[arg(long = "each-option", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    pub each_options: Vec<(String, toml::Value)>,

    /// Append each game's PGN (its judge's summary.pgn) to FILE, flushed
    /// game by game, as a tournament's OUT/games.pgn.
    #[arg(long, value_name = "FILE")]
    pub pgn: Option<PathBuf>,

    /// How far a move may overrun its clock and not lose (the clock is then
    /// 0), as fastchess's timemargin (default: the game file's
    /// limits.time_margin, else 0).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub time_margin: Option<Duration>,

    /// Seed of the games (printed; a fresh one when not given). The judge
    /// gets it with each game's index.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Games to play.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = parse_at_least_one, allow_negative_numbers = true)]
    pub games: u64,

    /// Append one JSON object per game to FILE (see docs/judge-protocol.md).
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,

    /// Keep the judge's replay frames in the records.
    #[arg(long)]
    pub record_moves: bool,

    /// Bind the run (the referee's game thread, the judge and the bots) to
    /// one CPU, the first the referee may use, as fastchess's
    /// -use-affinity: on a machine shared with other work, the engine that
    /// thinks keeps a CPU (docs/chess.md).
    #[arg(long)]
    pub pin: bool,

    #[command(flatten)]
    pub bot: BotOptions,

    /// The game file, or the name of a game that ships inside the referee
    /// (`chess`), found wherever the referee is installed.
    #[arg(value_name = "GAME.toml")]
    pub game: PathBuf,

    /// An option for the judge to pass on to the bot NAME, `NAME:KEY=VALUE`
    /// (protocol 2's start.players[i].options; as a tournament entrant's
    /// `options`), over --each-option. Repeat it for more.
    #[arg(long = "option", value_name = "NAME:KEY=VALUE")]
    pub options: Vec<String>,

    /// The bots: `[NAME=]COMMAND` each, COMMAND a program path or a
    /// program with its arguments in one quoted argument
    /// ('sf=stockfish --threads 1'). Seats rotate from game to game:
    /// games come in rounds of one game per seat on one opening.
    #[arg(value_name = "BOT", required = true)]
    pub bots: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct InteractiveArgs {
    /// The program's CPU time per test case, as problemtools and DOMjudge
    /// judge it (all its processes together). Default: the package's
    /// (problem.yaml `limits.time_limit`, `.timelimit`,
    /// `domjudge-problem.ini`), else 10s.
    #[arg(long, visible_alias = "time-limit", value_name = "DURATION", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub timeout: Option<Duration>,

    /// The program's wall-clock time per test case, from its start to its
    /// exit: a program that waits rather than computes is stopped here, as
    /// TIME LIMIT. Default: twice the time limit.
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub wall_limit: Option<Duration>,

    /// Without a PROGRAM: where the time limit comes from (the run's
    /// first line says which). `accepted` gives the limit verifyproblem
    /// would, to compare both tools on one limit.
    #[arg(long, value_name = "WHERE", value_enum, default_value_t)]
    pub time_limit_from: crate::interactive::TimeLimitFrom,

    /// The validator's time per test case, from the case's start (at least
    /// the wall limit); a validator that outstays it is a judge error.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub validator_timeout: Duration,

    #[command(flatten)]
    pub bot: BotOptions,

    /// Append one JSON object per test case to FILE (see docs/interactive.md).
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,

    /// The problem package: data/sample, data/secret, output_validators.
    #[arg(value_name = "PROBLEM_DIR")]
    pub problem: PathBuf,

    /// The program, then any arguments for it (options included). A
    /// PROGRAM whose name starts with `-` follows `--`. A source file given
    /// alone is built first (docs/languages.md). Without a PROGRAM, every
    /// program under the package's submissions/ is built, judged and
    /// checked against its folder's verdict.
    #[arg(value_name = "PROGRAM [ARGS]", num_args = 0.., trailing_var_arg = true)]
    pub command: Vec<OsString>,

    /// Without a PROGRAM: how many submissions to judge at the same time.
    /// More than one makes wall-clock times noisier; CPU times, which
    /// decide, much less so.
    #[arg(long, short = 'j', value_name = "N", default_value = "1", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: u16,

    /// Without a PROGRAM: write a JUnit XML report to FILE, one test case
    /// per submission (a failure when it did not get its folder's verdict).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Do not run the package's input validators (input_validators/) on
    /// the test inputs before judging; the first line says so.
    #[arg(long)]
    pub no_input_validation: bool,

    /// Warnings about the package fail the run (exit status 1): no input
    /// validator, a submission of a language the referee does not know,
    /// an @EXPECTED_RESULTS@ tag that leaves out its folder's verdict.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct TournamentArgs {
    /// The tournament file (TOML).
    #[arg(value_name = "FILE.toml", value_parser = parse_absolute_path)]
    pub file: PathBuf,

    /// Games to play (overrides the file).
    #[arg(long, value_name = "N", value_parser = parse_at_least_one, allow_negative_numbers = true)]
    pub games: Option<u64>,

    /// An option for an external game's judge (start.options), over the
    /// file's [options] and the game file's; VALUE is read as a TOML value
    /// (5000, true, 1.5, "x"), a bare word as a string. Repeat it for more.
    #[arg(long = "game-option", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    pub game_options: Vec<(String, toml::Value)>,

    /// Seed of every game (overrides the file; printed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Print the standings every N finished games (overrides the file's
    /// standings_every).
    #[arg(long, value_name = "N", value_parser = parse_at_least_one, allow_negative_numbers = true)]
    pub standings_every: Option<u64>,

    /// Games at once (default: the number of CPUs).
    #[arg(long, value_name = "N", value_parser = parse_at_least_one, allow_negative_numbers = true)]
    pub jobs: Option<u64>,

    /// Pin each job (its referee thread, judge and bots) to one CPU: job w
    /// to the w-th of the CPUs the referee may use (modulo their number),
    /// as fastchess's -use-affinity. On a machine shared with other work,
    /// engines that think then keep a CPU (docs/chess.md).
    #[arg(long)]
    pub pin: bool,

    /// Write records, stderr files, build logs and standings (JSON, CSV) here.
    #[arg(long, value_name = "DIR", value_parser = parse_absolute_path)]
    pub out: Option<PathBuf>,

    /// Finish a run that was interrupted: games already in DIR are not
    /// played again.
    #[arg(long, requires = "out")]
    pub resume: bool,

    /// Play only shard K of N: games i with (i - 1) mod N = K - 1. `auto`
    /// reads K and N from a Slurm job array (SLURM_ARRAY_TASK_ID and its
    /// count or bounds); `auto/N` takes N as given and K from Slurm or a
    /// Kubernetes Indexed Job (JOB_COMPLETION_INDEX + 1). See
    /// docs/cluster.md.
    #[arg(long, value_name = "K/N|auto[/N]", value_parser = tournament::shard::parse)]
    pub shard: Option<tournament::shard::ShardArg>,

    /// How far a move may overrun its clock and not lose, in an external
    /// game (replaces the file's limits.time_margin; default 0).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub time_margin: Option<Duration>,

    /// No progress: no bar on a terminal, no line every 5 s elsewhere.
    #[arg(long)]
    pub no_progress: bool,

    /// Build every entrant (`make` in its dir), say which failed, and
    /// exit: a cluster's first job, before an array of --no-build tasks.
    /// Exit status 0 when every entrant built, 1 otherwise.
    #[arg(long, conflicts_with_all = ["no_build", "resume", "shard"])]
    pub build_only: bool,

    /// Build nothing: play the programs already built (by --build-only).
    /// Refused before anything runs when an entrant's pc2 is missing or
    /// older than its sources.
    #[arg(long)]
    pub no_build: bool,

    /// Keep every game's moves in the records (Chomp's moves per round,
    /// Even Steven's and Septica's plays, an external judge's frames), so
    /// that report.html and `referee replay` can replay them move by move.
    #[arg(long)]
    pub record_moves: bool,

    #[command(flatten)]
    pub bot: BotOptions,
}

#[derive(Debug, Args)]
pub struct CiArgs {
    /// The suite (TOML).
    #[arg(value_name = "SUITE.toml", value_parser = parse_absolute_path)]
    pub suite: PathBuf,

    /// Also write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    #[command(flatten)]
    pub bot: BotOptions,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The results file (JSON Lines).
    #[arg(value_name = "RECORDS.jsonl")]
    pub records: PathBuf,

    /// Only the game with this index (the records' `index`); all games
    /// otherwise, with a game picker.
    #[arg(long, value_name = "N")]
    pub game: Option<u64>,

    /// Where to write the page [default: RECORDS.html, next to the records].
    #[arg(short = 'o', long = "out", value_name = "FILE.html")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' output directories.
    #[arg(value_name = "OUT", required = true)]
    pub outs: Vec<PathBuf>,

    /// Also write the merged records and standings to DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A tournament's output directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Where to write the report (default: DIR/report.html).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Splits `PROGRAM [ARGS...]` into a bot spec, with `env` set.
fn bot_spec(command: &[OsString], env: &Vars) -> BotSpec {
    let (program, args) = command.split_first().expect("clap requires PROGRAM");
    BotSpec {
        program: program.clone(),
        args: args.to_vec(),
        dir: None,
        hide: vec![],
        env: Environment::clean(env),
    }
}

/// Rewrites the original `ch` program's single-dash `-start` into
/// `--start`, so both spellings work.
pub fn normalize_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut in_chomp = false;
    args.into_iter()
        .map(|arg| {
            if arg == "chomp" {
                in_chomp = true;
            }
            if in_chomp && arg == "-start" {
                OsString::from("--start")
            } else {
                arg
            }
        })
        .collect()
}

/// Runs the chosen subcommand to its end: each turns its arguments into
/// its configuration and hands it to its game's or command's entry point.
pub async fn run(cli: Cli) -> Status {
    if let Err(why) = cli.containment.configure() {
        eprintln!("referee: {why}");
        return Status::Usage;
    }
    if let Some(Err(why)) = cli.command.bot_options().map(BotOptions::check_enforceable) {
        eprintln!("referee: {why}");
        return Status::Usage;
    }
    let env = &environment::vars(&cli.env);
    match cli.command {
        Command::Dealer(args) => run_dealer(args, env).await,
        Command::Chomp(args) => run_chomp(args, env).await,
        Command::Septica(args) => run_septica(args, env).await,
        Command::Tournament(args) => run_tournament(args, env).await,
        Command::League(args) => league::run(args, env).await,
        Command::Merge(args) => tournament::merge(&args.outs, args.out.as_deref()),
        Command::Report(args) => run_report(args),
        Command::Replay(args) => run_replay(args),
        Command::Ci(args) => run_ci(args, env).await,
        Command::Acesup(args) => run_acesup(args, env).await,
        Command::Play(args) => run_play(args, env).await,
        Command::Interactive(args) => run_interactive(args, env).await,
    }
}

/// `referee dealer`: the dealer deals Even Steven games to one program.
async fn run_dealer(args: DealerArgs, env: &Vars) -> Status {
    let config = DealerConfig {
        player: bot_spec(&args.command, env),
        limits: args.bot.limits(args.max_line),
        time: MoveLimits {
            timeout: args.timeout,
            control: args.time_control,
        },
        results: args.results,
        input: args.input,
        max_debug: args.max_debug,
    };
    dealer::run(&config).await
}

/// `referee chomp`: the bots in DIR... are built and play Chomp.
async fn run_chomp(args: ChompArgs, env: &Vars) -> Status {
    crate::parallel::warn_if_oversubscribed("chomp", None, args.dirs.len());
    let start = args
        .start
        .as_deref()
        .map_or((Coord::Random, Coord::Random), |xy| (xy[0], xy[1]));
    let config = ChompConfig {
        array: args.array,
        dirs: args.dirs,
        start,
        prep: args.prep,
        starve: args.starve,
        limits: args.bot.limits(DEFAULT_MAX_LINE),
        seed: args.seed,
        build: BuildOptions {
            make: args.make,
            timeout: args.build_timeout,
            logs: args.build_logs,
            sandbox: args.bot.sandbox,
            hide: vec![],
            prebuilt: false,
            env: Environment::clean(env),
        },
        results: args.results,
        record_moves: args.record_moves,
        games: args.games,
        max_rounds: args.max_rounds,
        resume: args.resume,
    };
    chomp::run(&config).await
}

/// `referee septica`: one program plays Septica's matches, unless its
/// `--need` could never be met.
async fn run_septica(args: SepticaArgs, env: &Vars) -> Status {
    // Only a --need given with it: the default is half the matches
    // played. (A --deal-file sets the number of matches itself.)
    if let Some(need) = args.need
        && need > args.matches
        && args.deal_file.is_none()
    {
        eprintln!(
            "referee septica: --need {need} is more than --matches {}: no player could be accepted",
            args.matches
        );
        return Status::Usage;
    }
    let config = SepticaConfig {
        player: bot_spec(&args.command, env),
        limits: args.bot.limits(args.max_line),
        time: MoveLimits {
            timeout: args.timeout,
            control: args.time_control,
        },
        matches: args.matches,
        need: args.need,
        seed: args.seed,
        results: args.results,
        deal_file: args.deal_file,
        transcript: args.transcript,
        resume: args.resume,
    };
    septica::run(&config).await
}

/// `referee tournament`: the file's entrants play its games.
async fn run_tournament(args: TournamentArgs, env: &Vars) -> Status {
    let shard = match args
        .shard
        .map(|arg| tournament::shard::resolve(arg, |name| std::env::var(name).ok()))
        .transpose()
    {
        Ok(shard) => shard,
        Err(e) => {
            eprintln!("referee tournament: {e}");
            return Status::Usage;
        }
    };
    let config = TournamentConfig {
        file: args.file,
        games: args.games,
        game_options: args.game_options.into_iter().collect(),
        seed: args.seed,
        standings_every: args.standings_every,
        jobs: args.jobs.map(|j| j as usize),
        pin: args.pin,
        out: args.out,
        resume: args.resume,
        shard,
        build: match (args.build_only, args.no_build) {
            (true, _) => tournament::BuildMode::Only,
            (false, true) => tournament::BuildMode::Prebuilt,
            (false, false) => tournament::BuildMode::Build,
        },
        progress: !args.no_progress,
        record_moves: args.record_moves,
        limits: args.bot.limits(DEFAULT_MAX_LINE),
        time_margin: args.time_margin,
        env: env.clone(),
    };
    tournament::run(&config).await
}

/// `referee report`: a tournament's report, written again from its
/// output directory.
fn run_report(args: ReportArgs) -> Status {
    match tournament::report::regenerate(&args.dir, args.output.as_deref()) {
        Ok(path) => {
            println!("report: {}", path.display());
            Status::Pass
        }
        Err(e) => {
            eprintln!("referee report: {e}");
            Status::Usage
        }
    }
}

/// `referee replay`: a page that replays recorded games.
fn run_replay(args: ReplayArgs) -> Status {
    crate::replay::run(&crate::replay::ReplayConfig {
        records: args.records,
        game: args.game,
        out: args.out,
    })
}

/// `referee ci`: a suite's cases, played and checked.
async fn run_ci(args: CiArgs, env: &Vars) -> Status {
    crate::ci::run(
        &args.suite,
        args.junit.as_deref(),
        args.bot.limits(DEFAULT_MAX_LINE),
        env,
    )
    .await
}

/// `referee acesup`: one program judged on every deck, `--jobs` at once.
async fn run_acesup(args: AcesupArgs, env: &Vars) -> Status {
    let decks = match (args.decks, args.random) {
        (Some(file), _) => Decks::File(file),
        (None, Some(count)) => Decks::Random {
            count,
            seed: args.seed,
        },
        (None, None) => unreachable!("clap requires one"),
    };
    let config = JudgeConfig {
        program: bot_spec(&args.command, env),
        limits: args.bot.limits(DEFAULT_MAX_LINE),
        timeout: args.timeout,
        decks,
        results: args.results,
    };
    let options = RunOptions {
        judging: acesup::Judging {
            mode: match args.mode.as_str() {
                "figures" => acesup::Mode::Figures,
                _ => acesup::Mode::Strict,
            },
            ignore: args.ignore,
        },
        jobs: args.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |j| j as usize,
        ),
        max_failures: if args.fail_fast {
            Some(1)
        } else {
            args.max_failures
        },
        max_timeouts_in_a_row: args.max_timeouts_in_a_row,
    };
    crate::parallel::warn_if_oversubscribed("acesup", Some((options.jobs, "--jobs")), 1);
    acesup::run(&config, &options).await
}

/// `referee play`: bots play a game file's game, refereed by its judge.
async fn run_play(args: PlayArgs, env: &Vars) -> Status {
    if args.pin
        && let Err(e) = crate::parallel::pin_to_first_cpu()
    {
        eprintln!("referee play: warning: cannot pin the run to a CPU: {e}");
    }
    let (time_control, clocks) = match every_and_own_clocks(args.time_control) {
        Ok(split) => split,
        Err(e) => {
            eprintln!("referee play: {e}");
            return Status::Usage;
        }
    };
    let settings = crate::games::external::players::Settings {
        each: args.each_options,
        options: args.options,
        clocks,
    };
    let bots =
        crate::games::external::players::parse(&args.bots, &settings, |words| bot_spec(words, env));
    let bots = match bots {
        Ok(bots) => bots,
        Err(e) => {
            eprintln!("referee play: {e}");
            return Status::Usage;
        }
    };
    // The user named these programs: one that cannot start is a mistake
    // to say now, as `dealer` says it, not a thousand games it loses.
    let missing: Vec<String> = bots
        .iter()
        .filter_map(|bot| {
            let e = bot.spec.locate().err()?;
            Some(format!(
                "referee play: cannot start bot {}: {e}",
                crate::text::terminal(&bot.name)
            ))
        })
        .collect();
    if !missing.is_empty() {
        eprintln!("{}", missing.join("\n"));
        return Status::Usage;
    }
    let config = crate::games::external::run::PlayConfig {
        game: args.game,
        bots,
        limits: args.bot.limits(DEFAULT_MAX_LINE),
        timeout: args.timeout,
        time_control,
        time_margin: args.time_margin,
        game_options: args.game_options.into_iter().collect(),
        seed: args.seed,
        games: args.games,
        results: args.results,
        pgn: args.pgn,
        record_moves: args.record_moves,
    };
    crate::games::external::run::run(&config).await
}

/// `--time-control [NAME:]BASE+INC`: a bot's name (none for every bot's
/// clock) and its time control.
pub type ClockArg = (Option<String>, TimeControl);

/// A bot's own clock: its name and time control.
type OwnClock = (String, TimeControl);

/// `--time-control`s: the one for every bot, and each bot's own.
fn every_and_own_clocks(
    given: Vec<ClockArg>,
) -> Result<(Option<TimeControl>, Vec<OwnClock>), String> {
    let mut every = None;
    let mut own = Vec::new();
    for (name, control) in given {
        match name {
            Some(name) => own.push((name, control)),
            None if every.is_some() => {
                return Err(
                    "--time-control BASE+INC is given twice: one is every bot's clock; \
                     NAME:BASE+INC gives one bot its own"
                        .to_owned(),
                );
            }
            None => every = Some(control),
        }
    }
    Ok((every, own))
}

/// `--time-control [NAME:]BASE+INC`: a time control contains no `:`, so
/// what comes before the last one is a bot's name.
fn parse_clock(text: &str) -> Result<ClockArg, String> {
    match text.rsplit_once(':') {
        Some(("", _)) => Err("NAME: names no bot (NAME:BASE+INC, e.g. weak:1s+25ms)".to_owned()),
        Some((name, control)) => Ok((Some(name.to_owned()), control.parse()?)),
        None => Ok((None, text.parse()?)),
    }
}

/// `KEY=VALUE` of `--game-option` and `--each-option`.
fn parse_key_value(text: &str) -> Result<(String, toml::Value), String> {
    crate::games::external::spec::key_value(text)
}

/// `referee interactive`: one program against a problem package's
/// validator, test case by test case.
async fn run_interactive(args: InteractiveArgs, env: &Vars) -> Status {
    let config = crate::interactive::InteractiveConfig {
        problem: args.problem,
        program: (!args.command.is_empty()).then(|| bot_spec(&args.command, env)),
        limits: args.bot.limits(crate::interactive::MAX_LINE),
        time_limit: args.timeout,
        wall_limit: args.wall_limit,
        time_limit_from: args.time_limit_from,
        memory: args.bot.limit_memory.map(|limit| limit.0),
        validator_timeout: args.validator_timeout,
        results: args.results,
        jobs: usize::from(args.jobs),
        junit: args.junit,
        env: Environment::clean(env),
        input_validation: !args.no_input_validation,
        strict: args.strict,
    };
    crate::interactive::run(&config).await
}
