//! Judging one program on every case of a package: the run of
//! `referee interactive PACKAGE PROGRAM`, and the steps the whole-package
//! run shares with it.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::case::{Setup, judge};
use super::limits::CaseLimits;
use super::package::{Case, Package, load};
use super::validator::ValidatorSpec;
use super::verdict::{Judged, Side, Verdict};
use super::{InteractiveConfig, fail, work_dirs};
use crate::bot::language::{BuildSettings, Source, build};
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
    /// Wall-clock time, from the program's start to its end.
    micros: u64,
    /// The limits it was judged by: CPU time, and the wall-clock cap.
    time_limit_micros: u64,
    wall_limit_micros: u64,
    /// A multi-pass problem's passes run on this case.
    #[serde(skip_serializing_if = "Option::is_none")]
    passes: Option<u32>,
    /// In a whole-package run: the submission, from `submissions/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    submission: Option<&'a str>,
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
pub(super) fn hide_package(
    config: &InteractiveConfig,
    mut program: BotSpec,
    work: &Path,
) -> Result<BotSpec, String> {
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

/// A package ready to judge programs on: its cases and validator, the
/// limits of each case.
pub(super) struct Judging<'a> {
    pub(super) config: &'a InteractiveConfig,
    pub(super) package: Package,
    pub(super) limits: CaseLimits,
}

/// What one program came to over the cases it was judged on.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub(super) judged: usize,
    pub(super) accepted: usize,
    pub(super) judge_errors: usize,
    /// The first case not accepted, and its verdict.
    pub(super) first_failure: Option<(String, Verdict)>,
    /// The case that used the most CPU time, and that time.
    pub(super) slowest: Option<(String, Duration)>,
    /// Judged at a higher limit than the one its verdict is read at (a
    /// whole-package run, as verifyproblem judges): the first case not
    /// accepted at that lower limit, and its verdict there.
    pub(super) at_limit: Option<(String, Verdict)>,
    pub(super) two_limits: bool,
}

impl Tally {
    /// The verdict, and the case that decided it: at the limit the verdict
    /// is read at (`at_limit`), or at the one the cases were judged at.
    pub(super) fn verdict(&self, at_limit: bool) -> (&Verdict, Option<&str>) {
        let failure = match at_limit && self.two_limits {
            true => &self.at_limit,
            false => &self.first_failure,
        };
        failure
            .as_ref()
            .map_or((&Verdict::Accepted, None), |(case, v)| (v, Some(case)))
    }

    fn add(&mut self, case: &Case, judged: &Judged, lower: Option<&CaseLimits>) {
        if let Some(lower) = lower {
            self.two_limits = true;
            let verdict = at_lower_limit(judged, lower);
            if verdict != Verdict::Accepted && self.at_limit.is_none() {
                self.at_limit = Some((case.name.clone(), verdict));
            }
        }
        self.judged += 1;
        self.accepted += usize::from(judged.verdict == Verdict::Accepted);
        self.judge_errors += usize::from(matches!(judged.verdict, Verdict::JudgeError(_)));
        if judged.verdict != Verdict::Accepted && self.first_failure.is_none() {
            self.first_failure = Some((case.name.clone(), judged.verdict.clone()));
        }
        if self
            .slowest
            .as_ref()
            .is_none_or(|(_, t)| judged.usage.cpu_known() > *t)
        {
            self.slowest = Some((case.name.clone(), judged.usage.cpu_known()));
        }
    }
}

/// The verdict of a case judged at a higher limit, read at `lower`, as
/// problemtools reads it: a TIME LIMIT if the program used more CPU time
/// than the lower limit (or more wall time than its cap), unless the
/// validator had rejected it first (rulings, 2); the verdict it got
/// otherwise.
fn at_lower_limit(judged: &Judged, lower: &CaseLimits) -> Verdict {
    let over =
        judged.usage.cpu.is_some_and(|cpu| cpu > lower.time.value) || judged.time > lower.wall;
    let rejected_first = matches!(judged.verdict, Verdict::WrongAnswer(_))
        && judged.first_ended == Some(Side::Validator);
    match over && !rejected_first {
        true => Verdict::TimeLimit,
        false => judged.verdict.clone(),
    }
}

/// A program to judge, and how its cases are reported.
pub(super) struct Judgee<'a> {
    pub(super) program: &'a BotSpec,
    /// The limits its cases are judged by.
    pub(super) limits: &'a CaseLimits,
    /// A lower limit its verdict is also read at (see [`Tally::verdict`]).
    pub(super) lower: Option<&'a CaseLimits>,
    /// Its name among the package's submissions, in a whole-package run.
    pub(super) submission: Option<&'a str>,
    /// Where its cases' feedback directories go.
    pub(super) feedback: &'a Path,
    /// Stop at the first case not accepted (a whole-package run's
    /// verdict is that case's).
    pub(super) lazy: bool,
}

impl<'a> Judging<'a> {
    /// Reads the package and gets its validator ready; resolves the limits.
    pub(super) async fn load(
        config: &'a InteractiveConfig,
        work: &'a Path,
    ) -> Result<Judging<'a>, String> {
        let package = load(&config.problem, work, config.limits.sandbox).await?;
        let limits = CaseLimits::resolve(
            config.time_limit,
            config.wall_limit,
            config.memory,
            config.limits.memory,
            &package.settings,
        );
        Ok(Judging {
            config,
            package,
            limits,
        })
    }

    /// [`Judging::load`], then the cases' inputs checked and the results
    /// file opened: what stops the run is said, and is its status.
    pub(super) async fn start(
        config: &'a InteractiveConfig,
        work: &'a Path,
    ) -> Result<(Judging<'a>, Option<Records>), Status> {
        let judging = Judging::load(config, work)
            .await
            .map_err(|e| fail(Status::Usage, e))?;
        super::inputs::check(config, &judging.package.cases).await?;
        let records = config
            .results
            .as_deref()
            .map(Records::open)
            .transpose()
            .map_err(|e| fail(Status::Usage, e))?;
        Ok((judging, records))
    }

    /// The run's first line: the package, its cases, and its limits.
    pub(super) fn header(&self) -> String {
        let passes = match self.package.settings.passes {
            Some(most) => {
                format!("; multi-pass, up to {most} passes a case, each with these limits")
            }
            None => String::new(),
        };
        format!("{}, {}{passes}", self.title(), self.limits.describe())
    }

    /// `interactive: games/guess (6 test cases)`.
    pub(super) fn title(&self) -> String {
        let count = self.package.cases.len();
        format!(
            "interactive: {} ({count} test case{})",
            self.config.problem.display(),
            if count == 1 { "" } else { "s" },
        )
    }

    /// Judges `judgee` on the cases in order, handing each judged case to
    /// `each` (to record and report it); an `Err` ends the run with that
    /// status, having said why.
    pub(super) async fn judge_program(
        &self,
        judgee: &Judgee<'_>,
        mut each: impl FnMut(usize, &Case, &Judged) -> Result<(), Status>,
    ) -> Result<Tally, Status> {
        let config = InteractiveConfig {
            limits: crate::bot::BotLimits {
                memory: judgee.limits.memory.as_ref().map(|m| m.value),
                ..self.config.limits
            },
            ..self.config.clone()
        };
        let validator = ValidatorSpec(self.package.validator.clone());
        let setup = Setup {
            config: &config,
            program: judgee.program,
            limits: judgee.limits,
            validator: &validator,
            passes: self.package.settings.passes,
        };
        let mut tally = Tally::default();
        for (i, case) in self.package.cases.iter().enumerate() {
            let feedback_dir = judgee.feedback.join(format!("feedback-{}", i + 1));
            let judged = judge(&setup, case, &feedback_dir).await.map_err(|e| {
                eprintln!("referee interactive: {}: {e}", case.name);
                Status::Usage
            })?;
            let _ = std::fs::remove_dir_all(&feedback_dir);
            tally.add(case, &judged, judgee.lower);
            each(i, case, &judged)?;
            if judgee.lazy && judged.verdict != Verdict::Accepted {
                break;
            }
        }
        Ok(tally)
    }

    /// The record of the `i`-th test case (from 0).
    pub(super) fn case_record<'r>(
        &self,
        judgee: &'r Judgee<'r>,
        i: usize,
        case: &'r Case,
        judged: &'r Judged,
    ) -> CaseRecord<'r> {
        let verdict = &judged.verdict;
        let micros = |t: Duration| u64::try_from(t.as_micros()).unwrap_or(u64::MAX);
        CaseRecord {
            game: "interactive",
            index: i as u64 + 1,
            case: &case.name,
            input: case.input.display().to_string(),
            verdict: verdict.name(),
            status: verdict.status(judged.exit),
            message: verdict.to_string(),
            micros: micros(judged.time),
            time_limit_micros: micros(judgee.limits.time.value),
            wall_limit_micros: micros(judgee.limits.wall),
            submission: judgee.submission,
            passes: self.package.settings.passes.map(|_| judged.passes),
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
            program: std::iter::once(&judgee.program.program)
                .chain(&judgee.program.args)
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            time: record::timestamp(),
            referee: record::REFEREE_VERSION,
        }
    }

    /// A test case's verdict line, the notes on its feedback files, and
    /// the last lines of the failing side's standard error.
    pub(super) fn print_case(&self, out: &mut impl Write, case: &Case, judged: &Judged) {
        let verdict = &judged.verdict;
        let name = crate::text::terminal(&case.name);
        let _ = writeln!(out, "{name}: {verdict} ({})", self.timing(judged));
        for note in &judged.feedback_notes {
            let _ = writeln!(out, "  note: {}", crate::text::terminal(note));
        }
        let tail = match verdict {
            Verdict::RuntimeError(_) => judged.stderr.as_str(),
            Verdict::JudgeError(_) => judged.validator_stderr.as_str(),
            _ => "",
        };
        let lines: Vec<&str> = tail.lines().collect();
        let last = &lines[lines.len().saturating_sub(5)..];
        let _ = write!(out, "{}", crate::text::quoted_lines(last.iter().copied()));
    }

    /// `CPU 12.0ms, wall 40.3ms`; for a time limit, against which limit.
    fn timing(&self, judged: &Judged) -> String {
        let ms = |t: Duration| format!("{:.1}ms", t.as_secs_f64() * 1e3);
        let (cpu, wall) = (judged.usage.cpu_known(), judged.time);
        let human = crate::units::human_duration;
        match judged.verdict {
            Verdict::TimeLimit if cpu > self.limits.time.value => format!(
                "CPU {} of its {} limit, wall {}",
                ms(cpu),
                human(self.limits.time.value),
                ms(wall)
            ),
            Verdict::TimeLimit => format!(
                "CPU {}, wall clock past its {} cap",
                ms(cpu),
                human(self.limits.wall)
            ),
            _ if judged.passes > 1 => format!(
                "{} passes, CPU {}, wall {}",
                judged.passes,
                ms(cpu),
                ms(wall)
            ),
            _ => format!("CPU {}, wall {}", ms(cpu), ms(wall)),
        }
    }
}

/// The program at `path` ready to run, and its language: a source file
/// or a directory of sources is built into `out_dir` (see
/// [`crate::bot::language`]), an executable runs as it is. Under
/// `--sandbox` the package and `work` are hidden from it.
pub(super) async fn prepare_program(
    config: &InteractiveConfig,
    path: &Path,
    out_dir: &Path,
    work: &Path,
) -> Result<(BotSpec, String), String> {
    let (spec, language) = match Source::detect(path)? {
        Some(source) => {
            let settings = BuildSettings {
                sandbox: config.limits.sandbox,
                env: config.env.clone(),
                ..BuildSettings::default()
            };
            let spec = build(&source, out_dir, &settings)
                .await
                .map_err(|e| format!("compile error: {e}"))?;
            (spec, source.language.name().to_string())
        }
        None if super::package::is_executable(path) => (
            BotSpec {
                program: std::path::absolute(path)
                    .map_err(|e| e.to_string())?
                    .into_os_string(),
                args: vec![],
                dir: None,
                hide: vec![],
                env: config.env.clone(),
            },
            "executable".to_string(),
        ),
        None => {
            return Err(format!(
                "{}: neither a source file of a known language (see docs/languages.md) \
                 nor executable",
                path.display()
            ));
        }
    };
    Ok((hide_package(config, spec, work)?, language))
}

/// The program of `referee interactive PACKAGE PROGRAM [ARGS]`: a source
/// file given alone is built; anything else runs as given.
async fn given_program(
    config: &InteractiveConfig,
    given: &BotSpec,
    builds: &Path,
    work: &Path,
) -> Result<BotSpec, String> {
    let path = Path::new(&given.program);
    if given.args.is_empty() && path.is_file() && Source::detect(path)?.is_some() {
        return Ok(prepare_program(config, path, builds, work).await?.0);
    }
    hide_package(config, given.clone(), work)
}

/// Runs `referee interactive PACKAGE PROGRAM`: the program on every case.
pub async fn run(config: &InteractiveConfig) -> Status {
    let (work, builds) = match work_dirs() {
        Ok(dirs) => dirs,
        Err(status) => return status,
    };
    let given = config.program.as_ref().expect("a program to judge");
    let program = match given_program(config, given, &builds.0, &work.0).await {
        Ok(program) => program,
        Err(e) => return fail(Status::Usage, e),
    };
    let (judging, mut records) = match Judging::start(config, &work.0).await {
        Ok(started) => started,
        Err(status) => return status,
    };
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{}", judging.header());
    let judgee = Judgee {
        program: &program,
        limits: &judging.limits,
        lower: None,
        submission: None,
        feedback: &work.0,
        lazy: false,
    };
    // Recorded before it is reported: a reader that stops at its line
    // (`| head`) finds the case in the file.
    let tally = judging
        .judge_program(&judgee, |i, case, judged| {
            if let Some(records) = records.as_mut() {
                let record = judging.case_record(&judgee, i, case, judged);
                records.append(&record).map_err(|e| fail(Status::Io, e))?;
            }
            judging.print_case(&mut out, case, judged);
            Ok(())
        })
        .await;
    let tally = match tally {
        Ok(tally) => tally,
        Err(status) => return status,
    };
    if let Some(Err(e)) = records.map(Records::finish) {
        return fail(Status::Io, e);
    }
    let _ = writeln!(
        out,
        "interactive: {} of {} test cases accepted{}",
        tally.accepted,
        tally.judged,
        match tally.judge_errors {
            0 => String::new(),
            n => format!(", {n} judge error{}", if n == 1 { "" } else { "s" }),
        }
    );
    if tally.judge_errors > 0 {
        Status::Internal
    } else if tally.accepted == tally.judged {
        Status::Pass
    } else {
        Status::Fail
    }
}
