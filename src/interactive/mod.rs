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
mod feedback;
mod limits;
mod package;
mod program;
mod validator;
mod verdict;
mod whole;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::bot::{BotLimits, BotSpec};

pub use case::{Setup, judge};
pub use package::Case;
pub use validator::ValidatorSpec;
pub use verdict::{Judged, Side, Verdict};

/// Runs `referee interactive`: the program given on every case, or the
/// package's own submissions when none is given.
pub async fn run(config: &InteractiveConfig) -> crate::exit::Status {
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
PROBLEM_DIR is a problem package (Kattis/DOMjudge format): every *.in
under data/sample/ and data/secret/, test groups (subfolders) included, each
with its .ans, is one test case, taken in natural order (2 before 10), judged by the validator in output_validators/<name>/: an executable
`run` (built first by `build` when there is one), or a single executable
file, or a single Python (python3), C or C++ source. The validator's output
goes to PROGRAM and PROGRAM's output to the validator, line by line; exit
status 42 accepts, 43 rejects. Verdicts: ACCEPTED, WRONG ANSWER (with the
validator's judgemessage.txt), TIME LIMIT, RUNTIME ERROR, JUDGE ERROR.

Examples:
  referee interactive games/guess games/guess/submissions/accepted/binary.py
  referee interactive --timeout 2s --results guess.jsonl games/guess ./solution

Exit status:
  0    every test case accepted
  1    some test case was not (wrong answer, time limit, runtime error)
  64   bad arguments, a bad package (what is wrong is named), a validator
       that cannot be built or started, or a program that cannot be started
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
}

/// A directory of the run's own, removed when dropped.
struct WorkDir(PathBuf);

impl WorkDir {
    fn new() -> std::io::Result<WorkDir> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "referee-interactive-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path)?;
        Ok(WorkDir(path))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
