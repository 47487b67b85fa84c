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

use std::ffi::OsString;
use std::fmt;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::signal::Signal;
use nix::sys::stat::Mode;
use serde::Serialize;
use tokio::time::Instant;

use crate::bot::usage::human_bytes;
use crate::bot::{
    Bot, BotError, BotLimits, BotSpec, Ended, MemoryOverrun, Resources, Usage, UsageMark, later,
};
use crate::exit::Status;
use crate::outcome;
use crate::record::{self, Records};

/// Longest line relayed in either direction.
pub const MAX_LINE: usize = 1 << 20;
/// Most output relayed from the program in one test case.
const MAX_OUTPUT: usize = 64 << 20;
/// Most of a feedback file read into a verdict.
const MAX_FEEDBACK: usize = 64 * 1024;
/// Time to read the feedback files of a test case.
const FEEDBACK_TIMEOUT: Duration = Duration::from_secs(2);
/// Time limit of a validator's `build` script or compilation.
const BUILD_TIMEOUT: Duration = Duration::from_secs(120);

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
    pub program: BotSpec,
    pub limits: BotLimits,
    /// The program's time per test case, from its start to its exit.
    pub timeout: Duration,
    /// The validator's time per test case, from the case's start.
    pub validator_timeout: Duration,
    pub results: Option<PathBuf>,
}

/// One test case of the package.
#[derive(Clone, Debug)]
pub struct Case {
    /// `sample/1`, `secret/group1/big`: the group's path and the file's
    /// stem.
    pub name: String,
    pub input: PathBuf,
    pub answer: PathBuf,
}

/// How to run the validator (after any build).
#[derive(Clone, Debug)]
struct Validator {
    program: OsString,
    /// Before INPUT ANSWER FEEDBACK_DIR (a Python source's path).
    before: Vec<OsString>,
    /// After them: problem.yaml's `validator_flags`.
    flags: Vec<OsString>,
    dir: PathBuf,
}

/// A problem package, read and checked.
#[derive(Debug)]
struct Package {
    cases: Vec<Case>,
    validator: Validator,
}

/// The judgement of one test case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    WrongAnswer(String),
    TimeLimit,
    RuntimeError(String),
    /// Killed for holding more than its memory limit; says how much.
    MemoryLimit(String),
    JudgeError(String),
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::WrongAnswer(_) => "wrong_answer",
            Verdict::TimeLimit => "time_limit",
            Verdict::RuntimeError(_) => "runtime_error",
            Verdict::MemoryLimit(_) => "memory_limit",
            Verdict::JudgeError(_) => "judge_error",
        }
    }

    /// The verdict in the shared taxonomy: a test case is one move, so
    /// TIME LIMIT is a move timeout; a judge error is the referee's side
    /// failing (`internal`), never blamed on the program.
    pub fn status(&self, exit: Option<Ended>) -> outcome::Verdict {
        match self {
            Verdict::Accepted => outcome::Verdict::OK,
            Verdict::WrongAnswer(_) => outcome::Verdict::of(outcome::Status::Incorrect),
            Verdict::TimeLimit => outcome::Verdict::timeout(outcome::Phase::Move),
            Verdict::RuntimeError(_) => exit.map_or(
                outcome::Verdict::of(outcome::Status::Crashed),
                outcome::Verdict::from,
            ),
            Verdict::MemoryLimit(_) => outcome::Verdict::limit(outcome::LimitKind::Memory),
            Verdict::JudgeError(_) => outcome::Verdict::of(outcome::Status::Internal),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Accepted => write!(f, "ACCEPTED"),
            Verdict::WrongAnswer(why) => write!(f, "WRONG ANSWER: {why}"),
            Verdict::TimeLimit => write!(f, "TIME LIMIT"),
            Verdict::RuntimeError(why) => write!(f, "RUNTIME ERROR: the program {why}"),
            Verdict::MemoryLimit(why) => write!(f, "MEMORY LIMIT: the program {why}"),
            Verdict::JudgeError(why) => write!(f, "JUDGE ERROR: {why}"),
        }
    }
}

/// Which side of a test case ended first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Program,
    Validator,
}

impl Side {
    /// The side across the relay.
    fn other(self) -> Side {
        match self {
            Side::Program => Side::Validator,
            Side::Validator => Side::Program,
        }
    }
}

/// Everything known about one test case once it is judged.
#[derive(Debug)]
pub struct Judged {
    pub verdict: Verdict,
    /// The program's time, from its start to its exit (or to the end).
    pub time: Duration,
    pub exit: Option<Ended>,
    pub validator_exit: Option<Ended>,
    pub first_ended: Option<Side>,
    /// The program wrote after the validator had ended and was killed, as
    /// a direct pipe's SIGPIPE would have killed it.
    pub pipe_closed: bool,
    pub judge_message: String,
    pub team_message: String,
    /// The validator's `judgeerror.txt`.
    pub judge_error: String,
    /// Each feedback file not read, or not read whole, and why.
    pub feedback_notes: Vec<String>,
    pub stderr: String,
    pub validator_stderr: String,
    /// What the program's processes used.
    pub usage: Usage,
}

#[derive(Serialize)]
struct CaseRecord<'a> {
    game: &'static str,
    index: u64,
    case: &'a str,
    input: String,
    verdict: &'static str,
    #[serde(flatten)]
    status: outcome::Verdict,
    message: String,
    micros: u64,
    /// What the program's processes used on this case.
    #[serde(flatten)]
    usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit: Option<Ended>,
    #[serde(skip_serializing_if = "Option::is_none")]
    validator_exit: Option<Ended>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_ended: Option<Side>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pipe_closed: bool,
    #[serde(skip_serializing_if = "str::is_empty")]
    judge_message: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    team_message: &'a str,
    /// `judgeerror.txt` (not `judge_error`, which in other records is an
    /// external judge's failure).
    #[serde(skip_serializing_if = "str::is_empty")]
    judge_error_message: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    feedback_notes: &'a [String],
    #[serde(skip_serializing_if = "str::is_empty")]
    stderr: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    validator_stderr: &'a str,
    program: Vec<String>,
    time: String,
    referee: &'static str,
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

/// The test cases of `data/GROUP` (`sample`, `secret`) and of every test
/// group under it, at any depth: each `*.in` with the `.ans` beside it.
/// Files and groups are taken in natural order (`2` before `10`), and a
/// case is named by its group's path (`secret/group1/3`). A missing group
/// is empty. A symbolic link to a directory is not followed (it could
/// loop).
fn cases_of(problem: &Path, group: &str) -> Result<Vec<Case>, String> {
    let dir = problem.join("data").join(group);
    let mut cases = Vec::new();
    if dir.is_dir() {
        collect_cases(&dir, group, &mut cases)?;
    }
    Ok(cases)
}

fn collect_cases(dir: &Path, group: &str, cases: &mut Vec<Case>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    let name = |p: &PathBuf| {
        p.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    paths.sort_by(|a, b| crate::text::natural_cmp(&name(a), &name(b)));
    for path in paths {
        let real_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if real_dir {
            collect_cases(&path, &format!("{group}/{}", name(&path)), cases)?;
            continue;
        }
        if !(path.extension().is_some_and(|x| x == "in") && path.is_file()) {
            continue;
        }
        let answer = path.with_extension("ans");
        if !answer.is_file() {
            return Err(format!(
                "{}: no answer file {} beside it",
                path.display(),
                answer.display()
            ));
        }
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        cases.push(Case {
            name: format!("{group}/{stem}"),
            input: path,
            answer,
        });
    }
    Ok(())
}

/// Reads problem.yaml, if any: it must not name another kind of validation
/// than interactive; its `validator_flags` are passed to the validator. A
/// few lines are read by hand (no YAML library): `validation:`, `type:` and
/// `validator_flags:` at the top level, each on one line.
fn read_problem_yaml(problem: &Path) -> Result<Vec<OsString>, String> {
    let path = problem.join("problem.yaml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut flags = vec![];
    let mut interactive = false;
    let mut validation = None;
    for (i, line) in text.lines().enumerate() {
        let value = |key: &str| {
            line.strip_prefix(key).map(|v| {
                v.split('#')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .trim_matches(['"', '\''])
            })
        };
        // `validation: custom interactive` (the legacy format), or `type:
        // ... interactive` (the 2023 format, where legacy `type` is
        // pass-fail or scoring).
        for key in ["validation:", "type:"] {
            if let Some(v) = value(key) {
                interactive |= v.split_whitespace().any(|w| w == "interactive");
                if key == "validation:" {
                    validation = Some((i + 1, v.to_string()));
                }
            }
        }
        if let Some(v) = value("validator_flags:") {
            flags = v.split_whitespace().map(OsString::from).collect();
        }
    }
    if let Some((line, v)) = validation
        && !interactive
    {
        return Err(format!(
            "{} line {line}: `validation: {v}` is not an interactive problem \
             (expected `validation: custom interactive`)",
            path.display(),
        ));
    }
    Ok(flags)
}

/// Finds the validator's directory: the one directory in
/// `output_validators/`, or `output_validator/` (the newer format's name).
fn validator_dir(problem: &Path) -> Result<PathBuf, String> {
    let newer = problem.join("output_validator");
    if newer.is_dir() {
        return Ok(newer);
    }
    let dir = problem.join("output_validators");
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        format!(
            "{}: {e} (an interactive problem needs its validator there)",
            dir.display()
        )
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    match dirs.len() {
        1 => Ok(dirs.remove(0)),
        0 => Err(format!("{}: no validator directory in it", dir.display())),
        _ => Err(format!(
            "{}: more than one validator directory ({}); keep one",
            dir.display(),
            names(&dirs)
        )),
    }
}

fn names(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.file_name().unwrap_or_default().to_string_lossy())
        .collect::<Vec<_>>()
        .join(", ")
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs a build command (a `build` script, or a compiler) in `dir`, with
/// [`BUILD_TIMEOUT`], through the bot layer (its own process group, killed
/// at the end). Its output is returned in the error when it fails.
async fn build(program: &str, args: Vec<OsString>, dir: &Path) -> Result<(), String> {
    let spec = BotSpec {
        program: program.into(),
        args,
        dir: Some(dir.to_owned()),
        hide: vec![],
    };
    let limits = BotLimits {
        max_line: MAX_LINE,
        resources: Resources::NONE,
        memory: Some(crate::bot::command::BUILD_MEMORY),
        ..BotLimits::default()
    };
    let mut bot = Bot::spawn(&spec, limits).map_err(|e| format!("cannot start {program}: {e}"))?;
    bot.close_input();
    let deadline = crate::bot::deadline_after(BUILD_TIMEOUT);
    let output = bot.read_to_end(deadline, MAX_OUTPUT).await;
    let ended = match &output {
        Ok(_) => Some(bot.wait_exit(deadline).await),
        Err(_) => None,
    };
    let _ = bot.kill().await;
    let mut tail = bot.stderr(|t| t.last_lines(10));
    if let Ok(lines) = &output {
        tail.extend(lines.iter().rev().take(10).rev().cloned());
    }
    let tail = tail
        .iter()
        .map(|l| format!("\n  | {l}"))
        .collect::<String>();
    match (output, ended) {
        (Ok(_), Some(Ok(ended))) if ended.success() => Ok(()),
        (Ok(_), Some(Ok(ended))) => Err(format!("{program} {ended}{tail}")),
        (Err(e), _) | (_, Some(Err(e))) => Err(format!("{program}: {e}{tail}")),
        (Ok(_), None) => unreachable!("waited for"),
    }
}

/// How to run the validator in `dir`, building it first when needed
/// (a compiled source goes into `work`).
async fn prepare_validator(dir: &Path, work: &Path) -> Result<Validator, String> {
    let at = |what: String| format!("{}: {what}", dir.display());
    let validator = |program: PathBuf, before: Vec<OsString>| Validator {
        program: program.into_os_string(),
        before,
        flags: vec![],
        dir: dir.to_owned(),
    };
    let run = dir.join("run");
    let build_script = dir.join("build");
    if run.exists() || build_script.exists() {
        if build_script.exists() {
            if !is_executable(&build_script) {
                return Err(at("`build` is not executable; try `chmod +x`".into()));
            }
            build(&build_script.to_string_lossy(), vec![], dir)
                .await
                .map_err(|e| at(format!("build failed: {e}")))?;
        }
        if !run.exists() {
            return Err(at("`build` left no `run` program".into()));
        }
        if !is_executable(&run) {
            return Err(at("`run` is not executable; try `chmod +x`".into()));
        }
        return Ok(validator(run, vec![]));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| at(e.to_string()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && !p
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .starts_with('.')
                && !p.extension().is_some_and(|x| x == "h" || x == "hpp")
        })
        .collect();
    files.sort();
    let [file] = files.as_slice() else {
        return Err(at(format!(
            "expected an executable `run` (with an optional `build`), or a single executable \
             file or Python, C or C++ source; found {}",
            if files.is_empty() {
                "no file".to_string()
            } else {
                names(&files)
            }
        )));
    };
    let extension = file
        .extension()
        .map(|x| x.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let compiled = work.join("validator");
    let compile = |compiler: &'static str, extra: &[&str]| {
        let mut args: Vec<OsString> = vec!["-O2".into(), "-o".into(), compiled.clone().into()];
        args.extend(extra.iter().map(OsString::from));
        args.push("-I".into());
        args.push(dir.into());
        args.push(file.into());
        args.push("-lm".into());
        (compiler, args)
    };
    let (compiler, args) = match extension.as_str() {
        "py" => return Ok(validator("python3".into(), vec![file.into()])),
        "c" => compile("cc", &[]),
        "cc" | "cpp" | "cxx" | "c++" => compile("c++", &["-std=gnu++17"]),
        _ if is_executable(file) => return Ok(validator(file.clone(), vec![])),
        _ => {
            return Err(at(format!(
                "{}: neither executable nor a Python, C or C++ source",
                names(std::slice::from_ref(file))
            )));
        }
    };
    build(compiler, args, dir)
        .await
        .map_err(|e| at(format!("compiling {} failed: {e}", names(&files))))?;
    Ok(validator(compiled, vec![]))
}

/// Reads and checks the package, and gets its validator ready.
async fn load(problem: &Path, work: &Path) -> Result<Package, String> {
    if !problem.is_dir() {
        return Err(format!("{}: not a directory", problem.display()));
    }
    let problem =
        std::path::absolute(problem).map_err(|e| format!("{}: {e}", problem.display()))?;
    let flags = read_problem_yaml(&problem)?;
    let mut cases = cases_of(&problem, "sample")?;
    cases.extend(cases_of(&problem, "secret")?);
    if cases.is_empty() {
        return Err(format!(
            "{}: no test cases (*.in under data/sample/ or data/secret/)",
            problem.display()
        ));
    }
    let dir = validator_dir(&problem)?;
    let mut validator = prepare_validator(&dir, work).await?;
    validator.flags = flags;
    Ok(Package { cases, validator })
}

/// The feedback files of a test case, as read.
#[derive(Debug, Default)]
struct Feedback {
    judge_message: String,
    team_message: String,
    /// `judgeerror.txt`: why the validator failed, in its words.
    judge_error: String,
    /// Each file not read, or not read whole, and why.
    notes: Vec<String>,
}

/// Reads the feedback files in `dir`, within [`FEEDBACK_TIMEOUT`]. The
/// validator made them, and so may have made them anything: a regular
/// file is read, [`MAX_FEEDBACK`] bytes of it at most; a FIFO, which would
/// block its reader for ever, or a symbolic link, which may lead out of
/// the directory, is not (nor is a directory that became a link). A read
/// that hangs all the same (a stuck file system) is left to its thread.
async fn read_feedback(dir: &Path) -> Feedback {
    let owned = dir.to_owned();
    let reading = tokio::task::spawn_blocking(move || read_feedback_now(&owned));
    let failed = |note: String| Feedback {
        notes: vec![note],
        ..Feedback::default()
    };
    match tokio::time::timeout(FEEDBACK_TIMEOUT, reading).await {
        Ok(Ok(feedback)) => feedback,
        Ok(Err(e)) => failed(format!("the feedback files could not be read: {e}")),
        Err(_) => failed(format!(
            "the feedback files were not read within {}",
            crate::units::human_duration(FEEDBACK_TIMEOUT)
        )),
    }
}

/// [`read_feedback`]'s work, which may block.
fn read_feedback_now(dir: &Path) -> Feedback {
    let mut feedback = Feedback::default();
    let dir_fd = match nix::fcntl::open(dir, FEEDBACK_OPEN | OFlag::O_DIRECTORY, Mode::empty()) {
        Ok(fd) => fd,
        // Removed by the validator: it left no feedback.
        Err(Errno::ENOENT) => return feedback,
        Err(e) => {
            let what = match std::fs::symlink_metadata(dir) {
                Ok(meta) if meta.is_symlink() => "is a symbolic link: not followed".to_string(),
                Ok(meta) if !meta.is_dir() => "is not a directory: not read".to_string(),
                _ => format!("could not be opened: {e}"),
            };
            feedback
                .notes
                .push(format!("the feedback directory {what}"));
            return feedback;
        }
    };
    let mut read = |name: &str| {
        let (text, note) = match feedback_file(&dir_fd, name) {
            Ok((bytes, None)) => (bytes, None),
            Ok((bytes, Some(size))) => (
                bytes,
                Some(format!(
                    "holds {}: only its first {} are read",
                    human_bytes(size),
                    human_bytes(MAX_FEEDBACK as u64)
                )),
            ),
            Err(why) => (vec![], Some(why)),
        };
        feedback
            .notes
            .extend(note.map(|note| format!("{name} {note}")));
        String::from_utf8_lossy(&text).trim().to_string()
    };
    let judge_message = read("judgemessage.txt");
    let team_message = read("teammessage.txt");
    let judge_error = read("judgeerror.txt");
    Feedback {
        judge_message,
        team_message,
        judge_error,
        ..feedback
    }
}

/// Opens without following a symbolic link, and without waiting for a
/// FIFO's writer.
const FEEDBACK_OPEN: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_NONBLOCK)
    .union(OFlag::O_CLOEXEC);

/// Feedback file `name` in `dir` (nothing when missing), at most
/// [`MAX_FEEDBACK`] bytes of it, with the file's size when that was not
/// all of it; an `Err` says why it was not read.
fn feedback_file(dir: &OwnedFd, name: &str) -> Result<(Vec<u8>, Option<u64>), String> {
    use std::io::Read;
    let fd = match nix::fcntl::openat(dir, name, FEEDBACK_OPEN, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Ok((vec![], None)),
        Err(Errno::ELOOP) => return Err("is a symbolic link: not followed".into()),
        Err(e) => return Err(format!("could not be opened: {e}")),
    };
    let file = std::fs::File::from(fd);
    let unread = |e: std::io::Error| format!("could not be read: {e}");
    let meta = file.metadata().map_err(unread)?;
    if !meta.is_file() {
        return Err(format!(
            "is {}, not a regular file: not read",
            file_kind(meta.file_type())
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FEEDBACK as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unread)?;
    if bytes.len() > MAX_FEEDBACK {
        bytes.truncate(MAX_FEEDBACK);
        return Ok((bytes, Some(meta.len())));
    }
    Ok((bytes, None))
}

/// What a file that is not a regular one is, for a note.
fn file_kind(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "of another kind"
    }
}

/// One line of a feedback message for the verdict line: its lines joined.
fn one_line(text: &str) -> String {
    let joined = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    if joined.chars().count() > 300 {
        joined.chars().take(300).collect::<String>() + "..."
    } else {
        joined
    }
}

/// What happened next on one side.
enum Event {
    Line(Vec<u8>),
    Failed(BotError),
    Exited(Result<Ended, BotError>),
}

/// The next line of `bot`'s output while it is open; once it is closed,
/// the bot's exit.
async fn next_event(bot: &mut Bot, output_open: bool, deadline: Instant) -> Event {
    if output_open {
        match bot.recv_line(deadline, None).await {
            Ok(reply) => {
                let mut line = Vec::with_capacity(reply.text.len() + 1);
                line.extend_from_slice(reply.text.as_bytes());
                line.push(b'\n');
                Event::Line(line)
            }
            Err(e) => Event::Failed(e),
        }
    } else {
        Event::Exited(bot.wait_exit(deadline).await)
    }
}

/// One side's state in the relay.
#[derive(Default)]
struct State {
    output_closed: bool,
    input_closed: bool,
    ended: Option<Ended>,
    ended_at: Option<Instant>,
}

impl State {
    fn done(&self) -> bool {
        self.output_closed && self.ended.is_some()
    }

    fn end(&mut self, ended: Ended, first: &mut Option<Side>, side: Side, other_ended: bool) {
        if self.ended.is_none() {
            self.ended = Some(ended);
            self.ended_at = Some(Instant::now());
            if !other_ended {
                first.get_or_insert(side);
            }
        }
    }
}

/// Why a relay stopped before both sides had ended.
enum Stop {
    /// The program ran out of time (or, with its time out, nothing moved).
    TimeLimit,
    /// The program's output could not be relayed: too long a line, not
    /// UTF-8, too much of it.
    BadOutput(String),
    /// The validator failed (or the referee did, relaying).
    Judge(String),
}

/// Judges one test case: starts the validator and the program, relays
/// between them, and rules. An `Err` is a program or validator that cannot
/// be started, which ends the run.
pub async fn judge(
    config: &InteractiveConfig,
    validator: &ValidatorSpec,
    case: &Case,
    feedback_dir: &Path,
) -> Result<Judged, String> {
    std::fs::create_dir_all(feedback_dir)
        .map_err(|e| format!("feedback directory {}: {e}", feedback_dir.display()))?;
    let mut relay = Relay::start(config, validator, case, feedback_dir).await?;
    let stop = relay.run().await;
    Ok(relay.finish(feedback_dir, stop).await)
}

/// One test case under way: both bots, how each side stands, the
/// deadlines, and what the relay has counted and seen so far.
struct Relay<'a> {
    config: &'a InteractiveConfig,
    p_bot: Bot,
    v_bot: Bot,
    p: State,
    v: State,
    /// When the program started: its time is counted from here.
    p_start: Instant,
    p_deadline: Instant,
    /// Counted from the case's start, before the program's.
    v_deadline: Instant,
    /// The side that ended while the other was still running.
    first: Option<Side>,
    /// The program wrote to a validator that had gone (see `break_pipe`).
    pipe_closed: bool,
    /// Bytes of the program's output relayed, against `MAX_OUTPUT`.
    relayed: usize,
}

impl<'a> Relay<'a> {
    /// Starts the validator, then the program (killing the validator if the
    /// program cannot start), and sets both deadlines.
    async fn start(
        config: &'a InteractiveConfig,
        validator: &ValidatorSpec,
        case: &Case,
        feedback_dir: &Path,
    ) -> Result<Relay<'a>, String> {
        let start = Instant::now();
        let v_deadline = later(start, config.validator_timeout.max(config.timeout));
        let mut v_bot = start_validator(config, validator, case, feedback_dir)?;
        let p_bot = match Bot::spawn(&config.program, config.limits) {
            Ok(bot) => bot,
            Err(e) => {
                let _ = v_bot.kill().await;
                return Err(format!("cannot start the program: {e}"));
            }
        };
        let p_start = Instant::now();
        Ok(Relay {
            config,
            p_bot,
            v_bot,
            p: State::default(),
            v: State::default(),
            p_start,
            p_deadline: later(p_start, config.timeout),
            v_deadline,
            first: None,
            pipe_closed: false,
            relayed: 0,
        })
    }

    /// Relays until both sides have ended, or until something stops the
    /// case early; gives that stop.
    async fn run(&mut self) -> Option<Stop> {
        while !(self.p.done() && self.v.done()) {
            if let Some(stop) = self.overdue() {
                return Some(stop);
            }
            if let Some(stop) = self.relay_step().await {
                return Some(stop);
            }
        }
        None
    }

    /// A side past its deadline. A program that floods its output is never
    /// waited for, so its reads never time out: its time is checked here
    /// too, and the same for a validator that floods its output once the
    /// program has ended.
    fn overdue(&self) -> Option<Stop> {
        if !self.p.done() && Instant::now() >= self.p_deadline {
            return Some(Stop::TimeLimit);
        }
        if !self.v.done() && Instant::now() >= self.v_deadline {
            return Some(self.on_timeout(Side::Validator));
        }
        None
    }

    /// Waits for whichever side moves first and handles that.
    async fn relay_step(&mut self) -> Option<Stop> {
        let (side, event) = tokio::select! {
            event = next_event(&mut self.p_bot, !self.p.output_closed, self.p_deadline),
                if !self.p.done() => (Side::Program, event),
            event = next_event(&mut self.v_bot, !self.v.output_closed, self.v_deadline),
                if !self.v.done() => (Side::Validator, event),
        };
        self.on_event(side, event).await
    }

    /// What `side` did: a line, the end of its output, its exit, or a
    /// failure (the program's output that cannot be relayed is its own).
    async fn on_event(&mut self, side: Side, event: Event) -> Option<Stop> {
        match event {
            Event::Line(line) => match side {
                Side::Program => self.on_program_line(line).await,
                Side::Validator => self.on_validator_line(line).await,
            },
            Event::Failed(BotError::Exited {
                ended,
                unterminated,
            }) => {
                self.on_exit(side, ended, unterminated).await;
                None
            }
            Event::Failed(BotError::ClosedOutput) => {
                self.on_closed_output(side);
                None
            }
            Event::Failed(BotError::Timeout { .. })
            | Event::Exited(Err(BotError::Timeout { .. })) => Some(self.on_timeout(side)),
            Event::Failed(
                e @ (BotError::LineTooLong { .. }
                | BotError::InvalidUtf8 { .. }
                | BotError::OutputTooLong { .. }),
            ) if side == Side::Program => Some(Stop::BadOutput(format!("the program {e}"))),
            Event::Failed(e) | Event::Exited(Err(e)) => Some(Stop::Judge(match side {
                Side::Program => format!("relaying the program's output: {e}"),
                Side::Validator => format!("the validator's output: {e}"),
            })),
            Event::Exited(Ok(ended)) => {
                self.end(side, ended);
                None
            }
        }
    }

    /// Relays a line of the program's to the validator, within the cap on
    /// the program's output; to a validator that has gone, breaks the pipe.
    async fn on_program_line(&mut self, line: Vec<u8>) -> Option<Stop> {
        if self.v.ended.is_some() || self.v.input_closed {
            self.break_pipe().await;
            return None;
        }
        self.relayed += line.len();
        if self.relayed > MAX_OUTPUT {
            return Some(Stop::BadOutput(format!(
                "the program wrote more than {MAX_OUTPUT} bytes"
            )));
        }
        self.forward(Side::Validator, &line).await
    }

    /// Relays a line of the validator's to the program. Lines for a program
    /// that has gone are dropped: the validator sees its input end and
    /// rules.
    async fn on_validator_line(&mut self, line: Vec<u8>) -> Option<Stop> {
        if self.p.ended.is_some() || self.p.input_closed {
            return None;
        }
        self.forward(Side::Program, &line).await
    }

    /// The program wrote to a validator that has gone. Through a direct
    /// pipe this write would have raised SIGPIPE: the program ends here,
    /// the validator rules.
    async fn break_pipe(&mut self) {
        self.pipe_closed = true;
        self.p.output_closed = true;
        if let Ok(finished) = self.p_bot.kill().await {
            self.end(Side::Program, finished.ended);
        }
        self.v_bot.close_input();
    }

    /// Writes `line` to side `to`, by the program's deadline. A side that
    /// no longer reads is noted, not a failure; a write that times out is
    /// the program's time limit.
    async fn forward(&mut self, to: Side, line: &[u8]) -> Option<Stop> {
        let deadline = self.p_deadline;
        match self.bot(to).send(line, deadline).await {
            Ok(()) => None,
            Err(BotError::ClosedInput) => {
                self.state(to).input_closed = true;
                None
            }
            Err(BotError::Exited { ended, .. }) => {
                self.state(to).input_closed = true;
                self.end(to, ended);
                None
            }
            Err(BotError::WriteTimeout { .. }) => Some(Stop::TimeLimit),
            Err(e) => Some(Stop::Judge(match to {
                Side::Program => format!("relaying to the program: {e}"),
                Side::Validator => format!("relaying to the validator: {e}"),
            })),
        }
    }

    /// `side` exited while its output was open. Its last bytes, without a
    /// newline, still go through to the other side while that one reads;
    /// then the other side's input ends.
    async fn on_exit(&mut self, side: Side, ended: Ended, unterminated: Option<String>) {
        let other = side.other();
        if let Some(text) = unterminated
            && self.state(other).ended.is_none()
            && !self.state(other).input_closed
        {
            let deadline = self.p_deadline;
            let _ = self.bot(other).send(text.as_bytes(), deadline).await;
        }
        self.state(side).output_closed = true;
        self.end(side, ended);
        self.bot(other).close_input();
    }

    /// `side` closed its output: the other side's input ends too.
    fn on_closed_output(&mut self, side: Side) {
        self.state(side).output_closed = true;
        self.bot(side.other()).close_input();
    }

    /// The stop for `side` out of time: the program's time limit, unless
    /// the validator outstays its own time after the program has ended.
    fn on_timeout(&self, side: Side) -> Stop {
        match side {
            Side::Validator if self.p.done() => validator_late(self.config),
            _ => Stop::TimeLimit,
        }
    }

    /// Notes how `side` ended, and whether it ended first.
    fn end(&mut self, side: Side, ended: Ended) {
        let (this, other) = match side {
            Side::Program => (&mut self.p, &self.v),
            Side::Validator => (&mut self.v, &self.p),
        };
        this.end(ended, &mut self.first, side, other.ended.is_some());
    }

    /// The bot of `side`.
    fn bot(&mut self, side: Side) -> &mut Bot {
        match side {
            Side::Program => &mut self.p_bot,
            Side::Validator => &mut self.v_bot,
        }
    }

    /// How `side` stands in the relay.
    fn state(&mut self, side: Side) -> &mut State {
        match side {
            Side::Program => &mut self.p,
            Side::Validator => &mut self.v,
        }
    }

    /// Ends the case on what the relay saw (see [`finish_case`]).
    async fn finish(self, feedback_dir: &Path, stop: Option<Stop>) -> Judged {
        let time = self.p.ended_at.unwrap_or_else(Instant::now) - self.p_start;
        let ends = Ends {
            program: self.p.ended,
            validator: self.v.ended,
            first: self.first,
            pipe_closed: self.pipe_closed,
        };
        finish_case(feedback_dir, self.v_bot, self.p_bot, ends, stop, time).await
    }
}

/// Starts the validator on `case`. It is the judge's own program: no
/// sandbox (it writes its feedback directory), no resource or memory
/// limits, but its own process group and the same shutdown as any bot.
fn start_validator(
    config: &InteractiveConfig,
    validator: &ValidatorSpec,
    case: &Case,
    feedback_dir: &Path,
) -> Result<Bot, String> {
    let mut args = validator.0.before.clone();
    args.extend([
        case.input.clone().into_os_string(),
        case.answer.clone().into_os_string(),
        feedback_dir.to_owned().into_os_string(),
    ]);
    args.extend(validator.0.flags.iter().cloned());
    let v_spec = BotSpec {
        program: validator.0.program.clone(),
        args,
        dir: Some(validator.0.dir.clone()),
        hide: vec![],
    };
    let v_limits = BotLimits {
        max_line: MAX_LINE,
        echo_stderr: config.limits.echo_stderr,
        resources: Resources::NONE,
        memory: None,
        sandbox: false,
        ..BotLimits::default()
    };
    Bot::spawn(&v_spec, v_limits).map_err(|e| format!("cannot start the validator: {e}"))
}

/// Ends a test case: kills what is left of both sides, reads the feedback
/// files and stderr, and rules on the ends the relay saw (a side killed
/// here ended because the referee ended it, not of itself).
async fn finish_case(
    feedback_dir: &Path,
    mut v_bot: Bot,
    mut p_bot: Bot,
    relayed: Ends,
    stop: Option<Stop>,
    time: Duration,
) -> Judged {
    let (ends, overrun) = kill_both(&mut v_bot, &mut p_bot, relayed).await;
    let feedback = read_feedback(feedback_dir).await;
    Judged {
        verdict: with_judge_error(
            rule(stop, &relayed, overrun, &feedback.judge_message),
            &feedback.judge_error,
        ),
        time,
        exit: ends.program,
        validator_exit: ends.validator,
        first_ended: ends.first,
        pipe_closed: ends.pipe_closed,
        judge_message: feedback.judge_message,
        team_message: feedback.team_message,
        judge_error: feedback.judge_error,
        feedback_notes: feedback.notes,
        stderr: p_bot.stderr(|t| t.last_lines(20).join("\n")),
        validator_stderr: v_bot.stderr(|t| t.last_lines(20).join("\n")),
        usage: p_bot.usage_since(&mut UsageMark::default()),
    }
}

/// Kills what is left of both sides, the validator first, so that it does
/// not see the program's end and rule on it: both are reaped by now, or are
/// killed here (a time limit, a judge error). Gives the ends with the kills
/// added, and the program's memory overrun, if it was killed for that.
async fn kill_both(
    v_bot: &mut Bot,
    p_bot: &mut Bot,
    mut ends: Ends,
) -> (Ends, Option<MemoryOverrun>) {
    if let Ok(finished) = v_bot.kill().await {
        ends.validator.get_or_insert(finished.ended);
    }
    let mut overrun = None;
    if let Ok(finished) = p_bot.kill().await {
        ends.program.get_or_insert(finished.ended);
        overrun = finished.memory_overrun;
    }
    (ends, overrun)
}

/// How the two sides of a test case ended.
#[derive(Clone, Copy, Debug, Default)]
struct Ends {
    program: Option<Ended>,
    validator: Option<Ended>,
    first: Option<Side>,
    pipe_closed: bool,
}

/// The stop of a validator that outstays its time after the program ended.
fn validator_late(config: &InteractiveConfig) -> Stop {
    Stop::Judge(format!(
        "the validator did not finish within {} (--validator-timeout)",
        crate::units::human_duration(config.validator_timeout.max(config.timeout))
    ))
}

/// A judge error says what the validator's `judgeerror.txt` says, when it
/// wrote one: the organiser's first clue.
fn with_judge_error(verdict: Verdict, judge_error: &str) -> Verdict {
    match verdict {
        Verdict::JudgeError(why) if !judge_error.is_empty() => {
            Verdict::JudgeError(format!("{why}; judgeerror.txt: {}", one_line(judge_error)))
        }
        verdict => verdict,
    }
}

/// The rulings of `docs/interactive.md`, in their order, as problemtools
/// (`judge/execute.py`) and DOMjudge (`judgedaemon`) rule: the validator's
/// failure first, then a validator that rejected before the program ended,
/// then the program's limits, its crash, and last the validator's verdict.
/// `ends` are those the relay saw, before the referee killed anything.
fn rule(
    stop: Option<Stop>,
    ends: &Ends,
    overrun: Option<MemoryOverrun>,
    judge_message: &str,
) -> Verdict {
    let judge_note = || match judge_message {
        "" => String::new(),
        text => format!("; judge message: {}", one_line(text)),
    };
    if let Some(Stop::Judge(why)) = &stop {
        return Verdict::JudgeError(format!("{why}{}", judge_note()));
    }
    match ends.validator {
        Some(ended) if ended != Ended::Exited(ACCEPT) && ended != Ended::Exited(REJECT) => {
            return Verdict::JudgeError(format!(
                "the validator {ended} (42 accepts, 43 rejects){}",
                judge_note()
            ));
        }
        None if stop.is_none() => {
            return Verdict::JudgeError("the validator's end is unknown".into());
        }
        _ => {}
    }
    let rejected = |then: &str| {
        let why = match judge_message {
            "" => "the validator rejected the interaction (exit status 43)".to_string(),
            text => one_line(text),
        };
        Verdict::WrongAnswer(format!("{why}{then}"))
    };
    // Whatever the program did once a validator that rejected it had gone
    // (its input ended under it), the validator's verdict stands.
    if ends.first == Some(Side::Validator) && ends.validator == Some(Ended::Exited(REJECT)) {
        return rejected(match stop {
            Some(Stop::TimeLimit) => "; the program then ran out of time",
            _ => "",
        });
    }
    // Killed for its memory, the program could not finish: that is why,
    // whatever the validator made of its end.
    if let Some(overrun) = overrun {
        return Verdict::MemoryLimit(BotError::MemoryLimit(overrun).to_string());
    }
    match stop {
        Some(Stop::TimeLimit) => return Verdict::TimeLimit,
        Some(Stop::BadOutput(why)) => return Verdict::WrongAnswer(why),
        _ => {}
    }
    // A program that ended because the validator had ended first is judged
    // by the validator's verdict: killed writing to it (a direct pipe's
    // SIGPIPE), or killed by SIGPIPE.
    let validator_decides = |ended: Ended| {
        ends.pipe_closed
            || (ends.first == Some(Side::Validator)
                && ended == Ended::Signaled(Signal::SIGPIPE as i32))
    };
    match (ends.program, ends.validator) {
        (Some(ended), _) if !(ended.success() || validator_decides(ended)) => {
            Verdict::RuntimeError(ended.to_string())
        }
        (_, Some(Ended::Exited(ACCEPT))) => Verdict::Accepted,
        _ => rejected(""),
    }
}

/// A validator ready to run (see [`judge`]).
pub struct ValidatorSpec(Validator);

/// Under `--sandbox`, the program with the package hidden from it (its
/// data, its validators) and the run's work directory (the feedback); an
/// error, before anything runs, when that cannot be: `bwrap` is missing,
/// or the program's own directory, which the sandbox shows, is in the
/// package but not among its `submissions/`.
fn hide_package(config: &InteractiveConfig, work: &Path) -> Result<BotSpec, String> {
    let mut program = config.program.clone();
    if !config.limits.sandbox {
        return Ok(program);
    }
    crate::bot::spawn::check_sandbox().map_err(|e| e.to_string())?;
    let package = std::fs::canonicalize(&config.problem)
        .map_err(|e| format!("{}: {e}", config.problem.display()))?;
    let path = crate::bot::spawn::resolve(&program.program).map_err(|e| e.to_string())?;
    let working = match &program.dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| e.to_string())?,
    };
    for own in [path.parent().map(Path::to_owned), Some(working)]
        .into_iter()
        .flatten()
    {
        let own = std::fs::canonicalize(&own).unwrap_or(own);
        if own.starts_with(&package) && !own.starts_with(package.join("submissions")) {
            return Err(format!(
                "--sandbox hides the problem package {} from the program, but the \
                 program's directory {} is in it (only its submissions/ may hold one)",
                config.problem.display(),
                own.display()
            ));
        }
    }
    program.hide = vec![package, work.to_owned()];
    Ok(program)
}

/// A test case's verdict line, the notes on its feedback files, and the
/// last lines of the failing side's standard error.
fn print_case(out: &mut impl Write, config: &InteractiveConfig, case: &Case, judged: &Judged) {
    let verdict = &judged.verdict;
    let timing = match verdict {
        Verdict::TimeLimit => {
            format!(" ({} limit)", crate::units::human_duration(config.timeout))
        }
        _ => format!(" ({:.1}ms)", judged.time.as_secs_f64() * 1e3),
    };
    let _ = writeln!(out, "{}: {verdict}{timing}", case.name);
    for note in &judged.feedback_notes {
        let _ = writeln!(out, "  note: {note}");
    }
    let tail = match verdict {
        Verdict::RuntimeError(_) => judged.stderr.as_str(),
        Verdict::JudgeError(_) => judged.validator_stderr.as_str(),
        _ => "",
    };
    let lines: Vec<&str> = tail.lines().collect();
    for line in &lines[lines.len().saturating_sub(5)..] {
        let _ = writeln!(out, "  | {line}");
    }
}

/// The record of the `i`-th test case (from 0).
fn case_record<'a>(
    config: &InteractiveConfig,
    i: usize,
    case: &'a Case,
    judged: &'a Judged,
) -> CaseRecord<'a> {
    let verdict = &judged.verdict;
    CaseRecord {
        game: "interactive",
        index: i as u64 + 1,
        case: &case.name,
        input: case.input.display().to_string(),
        verdict: verdict.name(),
        status: verdict.status(judged.exit),
        message: verdict.to_string(),
        micros: u64::try_from(judged.time.as_micros()).unwrap_or(u64::MAX),
        usage: judged.usage,
        exit: judged.exit,
        validator_exit: judged.validator_exit,
        first_ended: judged.first_ended,
        pipe_closed: judged.pipe_closed,
        judge_message: &judged.judge_message,
        judge_error_message: &judged.judge_error,
        team_message: &judged.team_message,
        feedback_notes: &judged.feedback_notes,
        stderr: &judged.stderr,
        validator_stderr: &judged.validator_stderr,
        program: std::iter::once(&config.program.program)
            .chain(&config.program.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        time: record::timestamp(),
        referee: record::REFEREE_VERSION,
    }
}

/// Runs `referee interactive`.
pub async fn run(config: &InteractiveConfig) -> Status {
    let work = match WorkDir::new() {
        Ok(work) => work,
        Err(e) => {
            eprintln!("referee interactive: cannot create a work directory: {e}");
            return Status::Internal;
        }
    };
    let config = &match hide_package(config, &work.0) {
        Ok(program) => InteractiveConfig {
            program,
            ..config.clone()
        },
        Err(e) => {
            eprintln!("referee interactive: {e}");
            return Status::Usage;
        }
    };
    let package = match load(&config.problem, &work.0).await {
        Ok(package) => package,
        Err(e) => {
            eprintln!("referee interactive: {e}");
            return Status::Usage;
        }
    };
    let mut records = match config.results.as_deref().map(Records::open).transpose() {
        Ok(records) => records,
        Err(e) => {
            eprintln!("referee interactive: {e}");
            return Status::Usage;
        }
    };
    let validator = ValidatorSpec(package.validator);
    let count = package.cases.len();
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "interactive: {} ({count} test case{}), {} per case",
        config.problem.display(),
        if count == 1 { "" } else { "s" },
        crate::units::human_duration(config.timeout)
    );
    let mut accepted = 0usize;
    let mut judge_errors = 0usize;
    for (i, case) in package.cases.iter().enumerate() {
        let feedback_dir = work.0.join(format!("feedback-{}", i + 1));
        let judged = match judge(config, &validator, case, &feedback_dir).await {
            Ok(judged) => judged,
            Err(e) => {
                eprintln!("referee interactive: {}: {e}", case.name);
                return Status::Usage;
            }
        };
        let _ = std::fs::remove_dir_all(&feedback_dir);
        accepted += usize::from(judged.verdict == Verdict::Accepted);
        judge_errors += usize::from(matches!(judged.verdict, Verdict::JudgeError(_)));
        // Recorded before it is reported: a reader that stops at its line
        // (`| head`) finds the case in the file.
        if let Some(records) = records.as_mut()
            && let Err(e) = records.append(&case_record(config, i, case, &judged))
        {
            eprintln!("referee interactive: {e}");
            return Status::Io;
        }
        print_case(&mut out, config, case, &judged);
    }
    if let Some(Err(e)) = records.map(Records::finish) {
        eprintln!("referee interactive: {e}");
        return Status::Io;
    }
    let _ = writeln!(
        out,
        "interactive: {accepted} of {count} test cases accepted{}",
        match judge_errors {
            0 => String::new(),
            n => format!(", {n} judge error{}", if n == 1 { "" } else { "s" }),
        }
    );
    if judge_errors > 0 {
        Status::Internal
    } else if accepted == count {
        Status::Pass
    } else {
        Status::Fail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_map_to_the_taxonomy() {
        assert_eq!(Verdict::Accepted.status(None), outcome::Verdict::OK);
        assert_eq!(
            Verdict::TimeLimit.status(None),
            outcome::Verdict::timeout(outcome::Phase::Move)
        );
        assert_eq!(
            Verdict::JudgeError("x".into()).status(None).status,
            outcome::Status::Internal
        );
        assert_eq!(
            Verdict::RuntimeError("x".into())
                .status(Some(Ended::Signaled(Signal::SIGXCPU as i32)))
                .status,
            outcome::Status::Limit
        );
        assert_eq!(one_line("a\n\n b \nc"), "a; b; c");
    }

    #[test]
    fn rulings() {
        let exited = |code| Some(Ended::Exited(code));
        let signaled = |signal: Signal| Some(Ended::Signaled(signal as i32));
        let ends = |program, validator, first| Ends {
            program,
            validator,
            first: Some(first),
            pipe_closed: false,
        };
        let rule = |ends: Ends, message: &str| rule(None, &ends, None, message);
        assert_eq!(
            rule(ends(exited(0), exited(42), Side::Program), ""),
            Verdict::Accepted
        );
        assert_eq!(
            rule(ends(exited(0), exited(43), Side::Validator), "too many"),
            Verdict::WrongAnswer("too many".into())
        );
        // A crash is a crash, even when accepted.
        assert_eq!(
            rule(ends(exited(3), exited(42), Side::Program), ""),
            Verdict::RuntimeError("exited with status 3".into())
        );
        assert!(matches!(
            rule(
                ends(signaled(Signal::SIGSEGV), exited(42), Side::Validator),
                ""
            ),
            Verdict::RuntimeError(_)
        ));
        // Unless the validator ended first and rejected, or the program
        // died of the closed pipe.
        assert_eq!(
            rule(ends(exited(1), exited(43), Side::Validator), ""),
            Verdict::WrongAnswer("the validator rejected the interaction (exit status 43)".into())
        );
        assert_eq!(
            rule(
                ends(signaled(Signal::SIGPIPE), exited(42), Side::Validator),
                ""
            ),
            Verdict::Accepted
        );
        let killed = Ends {
            pipe_closed: true,
            ..ends(signaled(Signal::SIGKILL), exited(43), Side::Validator)
        };
        assert!(matches!(rule(killed, "x"), Verdict::WrongAnswer(_)));
        // The judge failing is never the program's fault, crash or not.
        assert!(matches!(
            rule(ends(exited(3), exited(1), Side::Program), ""),
            Verdict::JudgeError(_)
        ));
        // A time limit beats the program's crash and the validator's later
        // verdict, but not the verdict of a validator that ended first:
        // its rejection (problemtools and DOMjudge) or its failure.
        let timed_out = |ends: Ends| super::rule(Some(Stop::TimeLimit), &ends, None, "no");
        let unended = |validator| Ends {
            first: None,
            ..ends(None, validator, Side::Program)
        };
        assert_eq!(timed_out(unended(None)), Verdict::TimeLimit);
        assert_eq!(
            timed_out(ends(None, exited(42), Side::Validator)),
            Verdict::TimeLimit
        );
        assert_eq!(
            timed_out(ends(None, exited(43), Side::Validator)),
            Verdict::WrongAnswer("no; the program then ran out of time".into())
        );
        assert!(matches!(
            timed_out(ends(None, signaled(Signal::SIGSEGV), Side::Validator)),
            Verdict::JudgeError(_)
        ));
    }
}
