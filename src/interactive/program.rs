//! Judging one program on every case of a package.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::case::judge;
use super::package::{Case, load};
use super::validator::ValidatorSpec;
use super::verdict::{Judged, Side, Verdict};
use super::{InteractiveConfig, WorkDir};
use crate::bot::{BotSpec, Ended, Usage};
use crate::exit::Status;
use crate::outcome;
use crate::record::{self, Records};

#[derive(Serialize)]
pub(super) struct CaseRecord<'a> {
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

/// Under `--sandbox`, the program with the package hidden from it (its
/// data, its validators) and the run's work directory (the feedback); an
/// error, before anything runs, when that cannot be: `bwrap` is missing,
/// or the program's own directory, which the sandbox shows, is in the
/// package but not among its `submissions/`.
pub(super) fn hide_package(config: &InteractiveConfig, work: &Path) -> Result<BotSpec, String> {
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
pub(super) fn print_case(
    out: &mut impl Write,
    config: &InteractiveConfig,
    case: &Case,
    judged: &Judged,
) {
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
pub(super) fn case_record<'a>(
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
