//! `referee interactive PACKAGE` with no program: the package judged
//! whole, as problemtools' `verifyproblem` does. Every program under
//! `submissions/<verdict>/` is built by its language, judged on the cases
//! (up to its first case not accepted, whose verdict is the program's),
//! and checked against its folder's verdict.
//!
//! Without an explicit time limit, the accepted submissions are judged
//! first, under the default limit, and the limit is the slowest of their
//! cases times the package's multiplier, rounded up to a whole second;
//! the time-limit submissions are judged with the limit times the
//! package's safety margin, so that a TIME LIMIT among them is certain.

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt};

use super::expected::{Expectation, Expected, Tag, parse_tag};
use super::limits::{
    CaseLimits, DEFAULT_TIME_LIMIT, Sourced, TimeLimitFrom, WALL_FACTOR, derived_rule,
};
use super::package::{is_executable, sorted_entries};
use super::program::{Judgee, Judging, Tally, prepare_program};
use super::verdict::Verdict;
use super::{InteractiveConfig, fail, work_dirs};
use crate::bot::language::Language;
use crate::exit::Status;
use crate::record::Records;
use crate::text::name_of;

/// One program of the package's `submissions/`.
#[derive(Debug)]
struct Submission {
    /// `accepted/binary.py`.
    name: String,
    /// `accepted`, `mixed`.
    folder: String,
    path: PathBuf,
    /// What its verdict is checked against: its folder's, or its tag's.
    expectation: Expectation,
}

impl Submission {
    fn expects(&self, verdict: &Verdict) -> Option<bool> {
        self.expectation.allows(verdict)
    }

    /// Whether `outcome` is the expected verdict, as verifyproblem has it:
    /// at the time limit, or else at the higher limit its cases were
    /// judged at ("with extra time"); a build that fails, when its tag
    /// says COMPILER-ERROR. `None`: not checked (another folder, no tag),
    /// or not judged.
    fn got_expected(&self, outcome: &Outcome) -> Option<bool> {
        if let Err(why) = &outcome.result {
            return (why.starts_with(COMPILE_ERROR) && self.expectation.allows_compile_error())
                .then_some(true);
        }
        let at_limit = self.expects(outcome.verdict()?)?;
        let judged = outcome.judged_verdict().and_then(|v| self.expects(v));
        Some(at_limit || judged == Some(true))
    }

    /// Whether the run fails for it: it did not get its expected verdict,
    /// or was not judged (unless that was expected).
    fn failed(&self, outcome: &Outcome) -> bool {
        let ok = self.got_expected(outcome);
        ok == Some(false) || (outcome.verdict().is_none() && ok != Some(true))
    }

    /// Its expected verdict only with the extra time.
    fn with_extra_time(&self, outcome: &Outcome) -> bool {
        outcome.verdict().and_then(|v| self.expects(v)) == Some(false)
            && self.got_expected(outcome) == Some(true)
    }

    /// What it is expected to get, as the table shows it: its folder, or
    /// its tag's verdicts.
    fn expected(&self) -> String {
        match &self.expectation {
            Expectation::Tag(tag) => tag.to_string(),
            Expectation::Bad(_) => "(bad tag)".into(),
            Expectation::Folder(_) | Expectation::None => self.folder.clone(),
        }
    }

    /// Why its verdict is not the expected one, in its line: `but
    /// accepted expects otherwise`, `but its @EXPECTED_RESULTS@ tag
    /// (CORRECT, TIMELIMIT) expects otherwise`.
    fn otherwise(&self) -> String {
        match &self.expectation {
            Expectation::Tag(tag) => {
                format!("but its @EXPECTED_RESULTS@ tag ({tag}) expects otherwise")
            }
            Expectation::Bad(why) => format!("but {}", crate::text::terminal(why)),
            Expectation::Folder(_) | Expectation::None => {
                format!("but {} expects otherwise", self.folder)
            }
        }
    }
}

/// How the error of a submission that does not build begins.
const COMPILE_ERROR: &str = "compile error";

/// What became of one submission.
#[derive(Debug)]
struct Outcome {
    /// Its verdict, or why it could not be built or started.
    result: Result<Tally, String>,
    language: String,
    elapsed: Duration,
    /// The time limit, and the higher one its cases were judged at, when
    /// they differ.
    limits: Option<(Duration, Duration)>,
}

impl Outcome {
    /// The verdict at the time limit, in full.
    fn got(&self) -> String {
        match (&self.result, self.verdict()) {
            (_, Some(verdict)) => verdict.to_string(),
            (Err(why), None) => format!("not judged: {why}"),
            (Ok(_), None) => String::new(),
        }
    }

    /// The verdict at the time limit: what the folder is checked against
    /// first, and what the table shows.
    fn verdict(&self) -> Option<&Verdict> {
        Some(self.result.as_ref().ok()?.verdict(true).0)
    }

    /// The case that decided the verdict at the time limit.
    fn at_case(&self) -> Option<&str> {
        self.result.as_ref().ok()?.verdict(true).1
    }

    /// The verdict at the limit the cases were judged at.
    fn judged_verdict(&self) -> Option<&Verdict> {
        Some(self.result.as_ref().ok()?.verdict(false).0)
    }

    /// verifyproblem's "sensitive to time limit": the verdicts at the two
    /// limits differ; says both.
    fn sensitive(&self) -> Option<String> {
        let (at_limit, judged) = (self.verdict()?, self.judged_verdict()?);
        let (limit, higher) = self.limits?;
        let human = crate::units::human_duration;
        (at_limit.name() != judged.name()).then(|| {
            format!(
                "{} at {}, {} at {}",
                short(at_limit),
                human(limit),
                short(judged),
                human(higher)
            )
        })
    }
}

/// A verdict's name as printed, without its reason: `WRONG ANSWER`.
fn short(verdict: &Verdict) -> String {
    let text = verdict.to_string();
    text.split(':').next().unwrap_or_default().to_owned()
}

/// Runs `referee interactive PACKAGE`: every submission, checked.
pub async fn run(config: &InteractiveConfig) -> Status {
    let (work, builds) = match work_dirs() {
        Ok(dirs) => dirs,
        Err(status) => return status,
    };
    let submissions = match find_submissions(&config.problem, config.strict) {
        Ok(found) => found,
        Err(e) => return fail(Status::Usage, e),
    };
    let (judging, records) = match Judging::start(config, &work.0).await {
        Ok(started) => started,
        Err(status) => return status,
    };
    let records = RefCell::new(records);
    let verify = Verify {
        judging,
        records,
        work: &work.0,
        builds: &builds.0,
        deriving: false,
    };
    verify.run(submissions).await
}

/// A whole-package run under way.
struct Verify<'a> {
    judging: Judging<'a>,
    /// Shared by the submissions judged at the same time.
    records: RefCell<Option<Records>>,
    work: &'a Path,
    builds: &'a Path,
    /// The accepted submissions are being judged to set the time limit:
    /// at the default limit alone.
    deriving: bool,
}

impl Verify<'_> {
    /// The run's steps: the accepted submissions first when they set the
    /// time limit, then the others; the table; the exit status.
    async fn run(mut self, submissions: Vec<Submission>) -> Status {
        let config = self.judging.config;
        let (accepted, others): (Vec<_>, Vec<_>) =
            submissions.iter().partition(|s| s.folder == "accepted");
        let forced = config.time_limit_from == TimeLimitFrom::Accepted;
        let derive = forced
            || (config.time_limit.is_none() && self.judging.package.settings.time_limit.is_none());
        let mut outcomes = Vec::new();
        if derive {
            println!("{}", self.deriving_header(forced));
            self.judging.limits.time.value = DEFAULT_TIME_LIMIT;
            if config.wall_limit.is_none() {
                // Not the wall clock of a package's limit left aside.
                self.judging.limits.wall = DEFAULT_TIME_LIMIT * WALL_FACTOR;
            }
            self.deriving = true;
            outcomes.extend(self.judge_all(&accepted).await);
            self.deriving = false;
            self.derive_limit(&outcomes, forced);
        }
        println!("{}{}", self.judging.header(), self.two_limits());
        if !derive {
            outcomes.extend(self.judge_all(&accepted).await);
        }
        outcomes.extend(self.judge_all(&others).await);
        let order: Vec<&Submission> = accepted.into_iter().chain(others).collect();
        if let Some(Err(e)) = self.records.into_inner().map(Records::finish) {
            return fail(Status::Io, e);
        }
        let verdict = report(&order, &outcomes);
        if let Some(path) = &config.junit
            && let Err(e) = write_junit(path, &config.problem, &order, &outcomes)
        {
            return fail(Status::Io, e);
        }
        verdict
    }

    /// The first line of a run whose accepted submissions set the time
    /// limit: the rule, before any submission runs.
    fn deriving_header(&self, forced: bool) -> String {
        let judging = &self.judging;
        let whose = match (forced, &judging.package.settings.time_limit) {
            (true, Some(given)) => format!(
                "the accepted submissions set the time limit (--time-limit-from accepted), \
                 not the package's {} ({})",
                crate::units::human_duration(given.value),
                given.from
            ),
            (true, None) => "no explicit time limit; the accepted submissions set it \
                 (--time-limit-from accepted)"
                .to_owned(),
            (false, _) => "no explicit time limit; the accepted submissions set it".to_owned(),
        };
        format!(
            "{}: {whose}, as verifyproblem does: {} (they run under {} meanwhile); {}",
            judging.title(),
            derived_rule(&judging.package.settings),
            crate::units::human_duration(DEFAULT_TIME_LIMIT),
            judging.limits.describe_memory()
        )
    }

    /// What the first line adds in a whole-package run: the higher limit
    /// every submission runs under, and, for a DOMjudge limit, how to have
    /// verifyproblem's instead.
    fn two_limits(&self) -> String {
        let (higher, lower) = self.limits_for();
        let margin = &self.judging.package.settings.time_limit_to_tle;
        let mut text = format!(
            "; submissions run under {} of CPU time (times {}, {}), wall clock {}, \
             their verdicts read at {} first, as verifyproblem judges",
            crate::units::human_duration(higher.time.value),
            margin.value,
            margin.from,
            crate::units::human_duration(higher.wall),
            crate::units::human_duration(lower.map_or(higher.time.value, |l| l.time.value)),
        );
        if self.judging.limits.is_domjudges() {
            text.push_str(&format!(
                "; verifyproblem reads no {}: --time-limit-from accepted sets the limit as it does",
                self.judging.limits.time.from
            ));
        }
        text
    }

    /// Judges `submissions`, `--jobs` at a time, each reported as it ends.
    async fn judge_all(&self, submissions: &[&Submission]) -> Vec<Outcome> {
        let jobs = self.judging.config.jobs.max(1);
        let mut done: Vec<(usize, Outcome)> = stream::iter(submissions.iter().enumerate())
            .map(|(i, s)| async move { (i, self.judge_one(s).await) })
            .buffer_unordered(jobs)
            .collect()
            .await;
        done.sort_by_key(|(i, _)| *i);
        done.into_iter().map(|(_, o)| o).collect()
    }

    /// Builds one submission and judges it, up to its first failure.
    async fn judge_one(&self, submission: &Submission) -> Outcome {
        let started = Instant::now();
        let out_dir = self.builds.join(submission.name.replace('/', "~"));
        let prepared =
            prepare_program(self.judging.config, &submission.path, &out_dir, self.work).await;
        let (program, language) = match prepared {
            Ok(ready) => ready,
            Err(why) => {
                return self.ended(submission, started, String::new(), Err(why), None);
            }
        };
        let (limits, lower) = self.limits_for();
        let feedback = self.work.join(submission.name.replace('/', "~"));
        let judgee = Judgee {
            program: &program,
            limits: &limits,
            lower: lower.as_ref(),
            submission: Some(&submission.name),
            feedback: &feedback,
            lazy: true,
        };
        let judged = self
            .judging
            .judge_program(&judgee, |i, case, judged| {
                let mut records = self.records.borrow_mut();
                if let Some(records) = records.as_mut() {
                    let record = self.judging.case_record(&judgee, i, case, judged);
                    records.append(&record).map_err(|e| fail(Status::Io, e))?;
                }
                Ok(())
            })
            .await
            .map_err(|status| format!("the run stopped ({status:?})"));
        let two = lower.map(|lower| (lower.time.value, limits.time.value));
        self.ended(submission, started, language, judged, two)
    }

    /// Reports a submission's end on its own line.
    fn ended(
        &self,
        submission: &Submission,
        started: Instant,
        language: String,
        result: Result<Tally, String>,
        limits: Option<(Duration, Duration)>,
    ) -> Outcome {
        let outcome = Outcome {
            result,
            language,
            elapsed: started.elapsed(),
            limits,
        };
        let got = one_line(&outcome.got());
        let mut line = match (outcome.verdict(), submission.got_expected(&outcome)) {
            (_, Some(true)) if submission.with_extra_time(&outcome) => {
                format!("{got}, as expected with the extra time")
            }
            (_, Some(true)) => format!("{got}, as expected"),
            (_, Some(false)) => format!("{got}, {}", submission.otherwise()),
            (Some(_), None) => format!(
                "{got} (folder {}, no @EXPECTED_RESULTS@ tag: not checked)",
                submission.folder
            ),
            (None, _) => got,
        };
        if let Some(both) = outcome.sensitive() {
            line.push_str(&format!("; warning: sensitive to the time limit: {both}"));
        }
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}: {line}", crate::text::terminal(&submission.name));
        if let Err(why) = &outcome.result {
            for line in why.lines().skip(1) {
                let _ = writeln!(out, "{line}");
            }
        }
        outcome
    }

    /// The limits a submission's cases are judged by, and the lower limit
    /// its verdict is read at first, as verifyproblem judges: every
    /// submission at the time limit times the safety margin, its verdict
    /// read at the time limit and, failing that, at the higher one. While
    /// the accepted submissions set the limit: the default limit alone.
    fn limits_for(&self) -> (CaseLimits, Option<CaseLimits>) {
        let limit = self.judging.limits.clone();
        if self.deriving {
            return (limit, None);
        }
        let mut higher = limit.clone();
        let margin = self.judging.package.settings.time_limit_to_tle.value;
        higher.time.value = limit.time.value.mul_f64(margin);
        if self.judging.config.wall_limit.is_none() {
            higher.wall = higher.time.value * WALL_FACTOR;
        }
        (higher, Some(limit))
    }

    /// Sets the time limit from the accepted submissions' slowest case
    /// (`forced`: by `--time-limit-from accepted`).
    fn derive_limit(&mut self, accepted: &[Outcome], forced: bool) {
        let slowest = accepted
            .iter()
            .filter_map(|o| o.result.as_ref().ok())
            .filter(|t| t.first_failure.is_none())
            .filter_map(|t| t.slowest.as_ref().map(|(_, cpu)| *cpu))
            .max()
            .unwrap_or_default();
        let factor = self.judging.package.settings.ac_to_time_limit.value;
        let seconds = (slowest.as_secs_f64() * factor).ceil().max(1.0);
        let limits = &mut self.judging.limits;
        limits.time = Sourced {
            value: Duration::from_secs_f64(seconds),
            from: format!(
                "the slowest accepted case, {:.1}ms, times {factor}, rounded up to a second{}",
                slowest.as_secs_f64() * 1e3,
                if forced {
                    ", --time-limit-from accepted"
                } else {
                    ""
                }
            ),
        };
        if self.judging.config.wall_limit.is_none() {
            limits.wall = limits.time.value * WALL_FACTOR;
        }
    }
}

/// One line of a verdict that may hold several.
fn one_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// Every program under `submissions/`: each file or directory in each
/// folder, folders and programs in natural order, with what it is
/// expected to get. Skipped, as BAPCtools skips them: `*.disabled`
/// (noted); a file of a language the referee does not know (a warning;
/// judged, and so failing, under `--strict`). A package without any is
/// refused.
fn find_submissions(problem: &Path, strict: bool) -> Result<Vec<Submission>, String> {
    let root = problem.join("submissions");
    let mut found = Vec::new();
    let (mut disabled, mut unknown) = (Vec::new(), Vec::new());
    for folder in sorted_entries(&root)? {
        if !folder.is_dir() {
            continue;
        }
        let folder_name = name_of(&folder);
        for path in sorted_entries(&folder)? {
            let name = name_of(&path);
            if name.starts_with('.') || name.to_ascii_lowercase().starts_with("readme") {
                continue;
            }
            let name = format!("{folder_name}/{name}");
            if name.ends_with(".disabled") {
                disabled.push(name);
                continue;
            }
            let known = path.is_dir() || Language::of_file(&path).is_some() || is_executable(&path);
            if !known {
                unknown.push(name.clone());
                if !strict {
                    continue;
                }
            }
            let expectation = expectation(&name, &folder_name, &path, strict);
            found.push(Submission {
                name,
                folder: folder_name.clone(),
                path,
                expectation,
            });
        }
    }
    let list = |names: &[String]| crate::text::terminal(&names.join(", ")).into_owned();
    if !disabled.is_empty() {
        eprintln!(
            "referee interactive: note: disabled, not judged: {}",
            list(&disabled)
        );
    }
    if !unknown.is_empty() {
        eprintln!(
            "referee interactive: warning: neither a source file of a known language \
             (see docs/languages.md) nor executable, {}: {}",
            match strict {
                true => "judged as a failure (--strict)",
                false => "not judged",
            },
            list(&unknown)
        );
    }
    if found.is_empty() {
        return Err(format!(
            "{}: no submissions to judge (expected programs under submissions/accepted/, \
             wrong_answer/, time_limit_exceeded/ or run_time_error/)",
            root.display()
        ));
    }
    Ok(found)
}

/// What the submission `name` at `path` in `folder` is checked against:
/// its folder's verdict and its `@EXPECTED_RESULTS@` tag, as
/// [`Expectation::of`] combines them. A tag that leaves out its
/// folder's verdict is warned of (under `--strict`, it fails the
/// submission).
fn expectation(name: &str, folder: &str, path: &Path, strict: bool) -> Expectation {
    let expectation = Expectation::of(folder, read_tag(path));
    if let (Some(_), Expectation::Tag(tag)) = (Expected::of_folder(folder), &expectation) {
        let text = format!(
            "{}: its @EXPECTED_RESULTS@ tag ({tag}) leaves out its folder's verdict ({folder}); \
             the tag decides, as in DOMjudge",
            crate::text::terminal(name)
        );
        eprintln!("referee interactive: warning: {text}");
        if strict {
            return Expectation::Bad(format!(
                "its @EXPECTED_RESULTS@ tag ({tag}) leaves out its folder's verdict (--strict)"
            ));
        }
    }
    expectation
}

/// The most of a file read for its tag: sources are small.
const MOST_READ: u64 = 4 << 20;

/// The `@EXPECTED_RESULTS@` tag in the submission at `path`: in the file,
/// or in one of the files of the directory (DOMjudge reads them all; a
/// tag in two is an error).
fn read_tag(path: &Path) -> Result<Option<Tag>, String> {
    use std::io::Read;
    let files: Vec<PathBuf> = match path.is_dir() {
        true => sorted_entries(path)?
            .into_iter()
            .filter(|p| p.is_file())
            .collect(),
        false => vec![path.to_owned()],
    };
    let mut found: Option<(String, Tag)> = None;
    for file in files {
        let mut text = Vec::new();
        std::fs::File::open(&file)
            .and_then(|f| f.take(MOST_READ).read_to_end(&mut text))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        let Some(tag) = parse_tag(&text).map_err(|e| format!("{}: {e}", name_of(&file)))? else {
            continue;
        };
        if let Some((first, _)) = &found {
            return Err(format!(
                "tags in more than one file ({first}, {})",
                name_of(&file)
            ));
        }
        found = Some((name_of(&file), tag));
    }
    Ok(found.map(|(_, tag)| tag))
}

/// The table of every submission, and the run's exit status: 0 when each
/// got its folder's verdict, 70 on a judge error, 1 otherwise.
fn report(submissions: &[&Submission], outcomes: &[Outcome]) -> Status {
    use comfy_table::{Table, presets};
    let mut table = Table::new();
    table.load_style(presets::ASCII_MARKDOWN).set_header(vec![
        "submission",
        "language",
        "expected",
        "got",
        "at case",
        "slowest case",
        "CPU",
    ]);
    let mut counts = Counts::default();
    for (s, o) in submissions.iter().zip(outcomes) {
        table.add_row(row(s, o, &mut counts));
    }
    println!("{table}");
    println!("{}", summary(submissions, &counts));
    if counts.judge_errors > 0 {
        Status::Internal
    } else if counts.wrong > 0 {
        Status::Fail
    } else {
        Status::Pass
    }
}

/// What the summary line counts.
#[derive(Default)]
struct Counts {
    wrong: usize,
    judge_errors: usize,
    /// The names of submissions sensitive to the time limit.
    sensitive: Vec<String>,
}

/// The table's row of submission `s`, counted in `counts`.
fn row(s: &Submission, o: &Outcome, counts: &mut Counts) -> Vec<String> {
    let verdict = o.verdict();
    counts.judge_errors += usize::from(
        [verdict, o.judged_verdict()]
            .iter()
            .any(|v| matches!(v, Some(Verdict::JudgeError(_)))),
    );
    let failed = s.failed(o);
    counts.wrong += usize::from(failed);
    if o.sensitive().is_some() {
        counts
            .sensitive
            .push(crate::text::terminal(&s.name).into_owned());
    }
    let tally = o.result.as_ref().ok();
    let slowest = tally.and_then(|t| t.slowest.clone());
    let mut got = verdict.map_or_else(|| "not judged".to_string(), |v| v.name().to_string());
    if let (Some((_, higher)), Some(judged)) = (o.limits, o.judged_verdict())
        && Some(judged.name()) != verdict.map(Verdict::name)
    {
        got += &format!(
            " ({} at {})",
            judged.name(),
            crate::units::human_duration(higher)
        );
    }
    vec![
        crate::text::terminal(&s.name).into_owned(),
        o.language.clone(),
        s.expected(),
        match failed {
            true => format!("{got} (!)"),
            false => got,
        },
        o.at_case().unwrap_or_default().to_owned(),
        slowest.as_ref().map(|(c, _)| c.clone()).unwrap_or_default(),
        slowest
            .map(|(_, t)| format!("{:.1}ms", t.as_secs_f64() * 1e3))
            .unwrap_or_default(),
    ]
}

/// The run's last line: how many got their verdict, judge errors, and the
/// submissions sensitive to the time limit.
fn summary(submissions: &[&Submission], counts: &Counts) -> String {
    let total = submissions.len();
    format!(
        "interactive: {} of {total} submissions got their {} verdict{}{}",
        total - counts.wrong,
        match submissions
            .iter()
            .any(|s| matches!(s.expectation, Expectation::Tag(_) | Expectation::Bad(_)))
        {
            true => "expected",
            false => "folder's",
        },
        match counts.judge_errors {
            0 => String::new(),
            n => format!(", {n} judge error{}", if n == 1 { "" } else { "s" }),
        },
        match counts.sensitive.len() {
            0 => String::new(),
            n => format!(
                "; warning: {n} sensitive to the time limit ({})",
                counts.sensitive.join(", ")
            ),
        }
    )
}

/// One JUnit test case per submission: a failure when it did not get its
/// folder's verdict, an error when the judge failed.
fn write_junit(
    path: &Path,
    problem: &Path,
    submissions: &[&Submission],
    outcomes: &[Outcome],
) -> Result<(), String> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let problem_name = name_of(problem);
    let mut suite = TestSuite::new(problem_name.clone());
    for (s, o) in submissions.iter().zip(outcomes) {
        let verdict = o.verdict();
        let status = match (verdict, s.failed(o)) {
            (Some(Verdict::JudgeError(_)), _) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                status.set_message(o.got());
                status
            }
            (_, false) => TestCaseStatus::success(),
            (_, true) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(format!(
                    "expected {}, got {}",
                    s.expected(),
                    one_line(&o.got())
                ));
                status.set_description(o.got());
                status
            }
        };
        let mut case = TestCase::new(s.name.clone(), status);
        case.set_classname(format!("{problem_name}.{}", s.folder));
        case.set_time(o.elapsed);
        suite.add_test_case(case);
    }
    let mut report = Report::new("referee interactive");
    report.add_test_suite(suite);
    let xml = report.to_string().map_err(|e| e.to_string())?;
    crate::record::write_file(path, xml.as_bytes())
}
