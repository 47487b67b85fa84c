//! `referee interactive`: runs an ICPC problem package's interactive output
//! validator against a program, test case by test case, as the
//! Kattis/DOMjudge problem package format has it.
//!
//! The validator runs as `validator INPUT ANSWER FEEDBACK_DIR [FLAGS]`; its
//! standard output goes to the program's standard input and the program's
//! standard output to the validator's standard input. Both are bots of the
//! bot layer (own process groups, the same shutdown), so the referee sits in
//! the middle and relays the two directions line by line: that is where the
//! program is timed and its output capped. Exit status 42 of the validator
//! accepts, 43 rejects, anything else is a judge error. The rulings (which
//! verdict wins when both sides fail) are in `docs/interactive.md`.

mod case;
mod expected;
mod feedback;
mod inputs;
mod limits;
mod package;
mod program;
mod testcase;
mod validator;
mod verdict;
mod whole;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::bot::{BotLimits, BotSpec};

pub use case::{Setup, judge};
pub use limits::TimeLimitFrom;
pub use package::Case;
pub use validator::ValidatorSpec;
pub use verdict::{Judged, Side, Verdict};

/// Runs `referee interactive`: the program given on every case, or the
/// package's own submissions when none is given.
pub async fn run(config: &InteractiveConfig) -> crate::exit::Status {
    if config.time_limit_from == TimeLimitFrom::Accepted {
        let clash = match (&config.program, config.time_limit) {
            (Some(_), _) => Some(
                "it judges the package's accepted submissions first: give no PROGRAM \
                 (a whole-package run)",
            ),
            (None, Some(_)) => Some("--timeout sets the time limit too: give one of the two"),
            (None, None) => None,
        };
        if let Some(why) = clash {
            return fail(
                crate::exit::Status::Usage,
                format!("--time-limit-from accepted: {why}"),
            );
        }
    }
    match config.program {
        Some(_) => program::run(config).await,
        None => whole::run(config).await,
    }
}

/// Longest line relayed in either direction.
pub const MAX_LINE: usize = 1 << 20;
/// Most output relayed from the program in one test case.
pub(crate) const MAX_OUTPUT: usize = 64 << 20;

/// The exit status of a validator that accepts.
pub const ACCEPT: i32 = 42;
/// The exit status of a validator that rejects.
pub const REJECT: i32 = 43;

/// The `--help` text after the options.
pub const HELP: &str = "\
PROBLEM_DIR is a problem package (Kattis/DOMjudge format, legacy or
2023-07). Every *.in under data/sample/ and data/secret/, test groups
(subfolders) included, is a test case, in natural order (2 before 10), with
its group's testdata.yaml validator arguments. The validator is
output_validator/ (2023-07) or output_validators/<name>/ (legacy): a
`run` (with an optional `build`), an executable, or sources in C, C++,
Java, Kotlin, Python 3 or Rust, built once. Its output goes to the program
and the program's output to it, line by line; exit status 42 accepts, 43
rejects. Verdicts: ACCEPTED, WRONG ANSWER (with the validator's
judgemessage.txt), TIME LIMIT, MEMORY LIMIT, RUNTIME ERROR, JUDGE ERROR.

Time is the program's CPU time, as problemtools and DOMjudge judge it,
with a wall-clock cap (twice the limit). The limits come from the command
line, else the package (problem.yaml limits.time_limit and limits.memory,
.timelimit, domjudge-problem.ini), else the defaults; the first line says
which. A whole-package run without an explicit limit derives it as
verifyproblem does, from the slowest accepted submission;
--time-limit-from accepted derives it so even when the package gives
one. Multi-pass problems run again on each nextpass.in.

First the package's input validators (input_validators/, each built as
the output validator is) check every test input: `validator ARGS < INPUT`
with testdata.yaml's input_validator_flags or input_validator_args; exit
status 42 accepts. A rejected input stops the run (status 1) before any
program is judged; --no-input-validation skips them.

Without a PROGRAM the package is judged whole: every program under
submissions/<folder>/ is built by its language (docs/languages.md),
judged up to its first failing case, and checked against its folder
(accepted, wrong_answer, time_limit_exceeded, run_time_error) or its
DOMjudge @EXPECTED_RESULTS@ tag (mixed/). *.disabled files are skipped;
a file of a language not known is named in a warning (--strict: fails).

Examples:
  referee interactive games/oddcoin                      # check the package
  referee interactive -j 2 --junit verify.xml games/oddcoin
  referee interactive --time-limit-from accepted games/oddcoin  # verifyproblem's limit
  referee interactive games/guess games/guess/submissions/accepted/binary.py
  referee interactive games/oddcoin solution.c           # built first
  referee interactive --timeout 2s --results guess.jsonl games/guess ./solution

Exit status:
  0    every test case accepted; without a PROGRAM, every submission got
       its folder's verdict
  1    some test case was not (wrong answer, time limit, runtime error);
       without a PROGRAM, some submission missed its verdict or did not
       build; an input validator rejected a test input; --strict and a
       warning
  64   bad arguments, a bad package (what is wrong is named), a validator
       that cannot be built or started, or a program that cannot be built
       or started
  70   judge error: a validator failed (an exit status other than 42 or 43,
       a crash, a hang) in some test case, or an internal error
  74   the results file could not be written
  130  interrupted";

/// Everything `referee interactive` needs.
#[derive(Clone, Debug)]
pub struct InteractiveConfig {
    pub problem: PathBuf,
    /// The program to judge; `None` judges the package's own submissions.
    pub program: Option<BotSpec>,
    pub limits: BotLimits,
    /// `--timeout`: the program's CPU time per test case; `None` takes the
    /// package's (see [`limits`]).
    pub time_limit: Option<Duration>,
    /// `--wall-limit`: the program's wall-clock time per test case; `None`
    /// is twice the time limit.
    pub wall_limit: Option<Duration>,
    /// `--time-limit-from`: a whole-package run's time limit from the
    /// package (the default) or, as verifyproblem has it, always from the
    /// accepted submissions.
    pub time_limit_from: TimeLimitFrom,
    /// `--limit-memory` when given (`Some(None)`: no limit); `None` takes
    /// the package's, else the default in `limits`.
    pub memory: Option<Option<u64>>,
    /// The validator's time per test case, from the case's start.
    pub validator_timeout: Duration,
    pub results: Option<PathBuf>,
    /// A whole-package run: submissions judged at the same time.
    pub jobs: usize,
    /// A whole-package run: a JUnit test case per submission.
    pub junit: Option<PathBuf>,
    /// The environment of the programs judged and their builds (`--env`).
    pub env: crate::bot::Environment,
    /// Run the package's input validators on every test input first
    /// (not `--no-input-validation`).
    pub input_validation: bool,
    /// `--strict`: what would be a warning about the package (no input
    /// validator, a submission of a language not known) fails the run.
    pub strict: bool,
}

/// A directory of the run's own, removed when dropped, or as the run
/// ends if it ends first (see [`crate::interrupt::remove_own_dirs`]).
struct WorkDir(PathBuf);

/// A run's two directories: one for the feedback of its cases (hidden
/// from the program under `--sandbox`), one for what it builds.
fn work_dirs() -> Result<(WorkDir, WorkDir), crate::exit::Status> {
    match (WorkDir::new(), WorkDir::new()) {
        (Ok(work), Ok(builds)) => Ok((work, builds)),
        (Err(e), _) | (_, Err(e)) => Err(fail(
            crate::exit::Status::Internal,
            format!("cannot create a work directory: {e}"),
        )),
    }
}

impl WorkDir {
    fn new() -> std::io::Result<WorkDir> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "referee-interactive-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        crate::interrupt::make_own_dir(&path)?;
        Ok(WorkDir(path))
    }
}

/// Removed when the run is done with it; a run that ends otherwise
/// (an interrupt, its output closed, a panic) removes it as it ends.
impl Drop for WorkDir {
    fn drop(&mut self) {
        crate::interrupt::remove_own_dir(&self.0);
    }
}

/// Says `e` and gives `status`: how every part of a run ends it.
fn fail(status: crate::exit::Status, e: impl std::fmt::Display) -> crate::exit::Status {
    eprintln!("referee interactive: {e}");
    status
}

/// The file names of `paths`, joined for a message.
fn names(paths: &[std::path::PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.file_name().unwrap_or_default().to_string_lossy())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `path` is a file someone may execute.
fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
