//! The command line: `referee <SUBCOMMAND> [OPTIONS] ...`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::bot::{BotLimits, BotSpec, DEFAULT_MAX_LINE, DEFAULT_STDERR_KEEP};
use crate::exit::{EXIT_STATUS_HELP, Status};
use crate::games::evensteven::dealer::{self, DealerConfig};

#[derive(Debug, Parser)]
#[command(
    name = "referee",
    version,
    about = "Referees and tournaments for programs that play games over standard input and output.",
    long_about = "Referees and tournaments for programs that play games over standard input \
                  and output.\n\nEach subcommand referees one game. Bots run in their own \
                  process groups with time limits on every move; none outlives the referee.",
    after_help = EXIT_STATUS_HELP,
)]
pub struct Cli {
    /// More log output on standard error (-v: summaries, -vv: every bot
    /// process). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
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
}

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
  3    program crashed: no answer within --timeout, exited or closed its
       output early, or did not exit within --grace after the last game
  64   bad dealer input (the message names the line) or bad arguments
  70   internal error;  130  interrupted";

/// Options every subcommand shares for the bots it runs.
#[derive(Debug, Args)]
pub struct BotOptions {
    /// How long a bot has to exit once its input is closed at the end; then
    /// its process group gets SIGTERM, and SIGKILL 500ms later.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
    pub grace: Duration,

    /// Longest line a bot may write, in bytes; a longer one is incorrect
    /// output.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE)]
    pub max_line: usize,

    /// Also copy what bots write to standard error to the referee's standard
    /// error as it arrives. It is captured (the last 64 KiB) either way.
    #[arg(long)]
    pub show_stderr: bool,
}

impl BotOptions {
    pub fn limits(&self) -> BotLimits {
        BotLimits {
            max_line: self.max_line,
            stderr_keep: DEFAULT_STDERR_KEEP,
            grace: self.grace,
            echo_stderr: self.show_stderr,
        }
    }
}

#[derive(Debug, Args)]
pub struct DealerArgs {
    /// Time the player has for each move, from the dealt card to its reply
    /// (e.g. 10s, 250ms, 1m30s).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_positive_duration)]
    pub timeout: Duration,

    #[command(flatten)]
    pub bot: BotOptions,

    /// Append one JSON object per game to FILE (JSON Lines; see docs/results.md).
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,

    /// Read the games from FILE instead of standard input.
    #[arg(short, long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// The player program, then any arguments for it. Everything after
    /// PROGRAM goes to the player, options included.
    #[arg(
        value_name = "PROGRAM [ARGS]",
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<OsString>,
}

/// A human duration such as `45s`, `250ms` or `1m30s`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text)
        .map_err(|e| format!("{e} (expected a duration such as 10s, 250ms or 1m30s)"))
}

fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        d if d.is_zero() => Err("must be longer than zero".into()),
        d => Ok(d),
    }
}

/// Splits `PROGRAM [ARGS...]` into a bot spec.
fn bot_spec(command: &[OsString]) -> BotSpec {
    let (program, args) = command.split_first().expect("clap requires PROGRAM");
    BotSpec {
        program: program.clone(),
        args: args.to_vec(),
        dir: None,
    }
}

/// Runs the chosen subcommand to its end.
pub async fn run(cli: Cli) -> Status {
    match cli.command {
        Command::Dealer(args) => {
            let config = DealerConfig {
                player: bot_spec(&args.command),
                limits: args.bot.limits(),
                timeout: args.timeout,
                results: args.results,
                input: args.input,
            };
            dealer::run(&config).await
        }
    }
}
