//! ICPC problem packages judged through `referee interactive`: the
//! shipped `games/guess`, a run that must explain itself, and a test
//! case's verdict line.

use std::path::{Path, PathBuf};

use super::{Run, assert_lacks, referee};

/// The shipped package `games/guess`.
pub fn guess() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("games/guess")
}

/// `referee ARGS` with no input: whatever happened, the referee explains
/// itself and does not panic.
pub fn run(args: &[&str]) -> Run {
    let run = referee(args.iter().copied(), b"");
    assert_lacks(&run.stderr, "panicked");
    run
}

/// The verdict line of test case `name`.
pub fn line<'a>(run: &'a Run, name: &str) -> &'a str {
    run.stdout
        .lines()
        .find(|l| l.starts_with(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no line for {name} in:\n{}", run.stdout))
}

/// Fails the test, showing the run's output, unless the verdict line of
/// test case `name` holds `part`.
#[track_caller]
pub fn assert_line_has(run: &Run, name: &str, part: &str) {
    assert!(line(run, name).contains(part), "{}", run.stdout);
}

/// Fails the test, showing the run's output, unless the verdict line of
/// test case `name` starts with `start`.
#[track_caller]
pub fn assert_line_starts(run: &Run, name: &str, start: &str) {
    assert!(line(run, name).starts_with(start), "{}", run.stdout);
}

/// Fails the test, showing the run's output, unless the verdict line of
/// test case `name` ends with `end`.
#[track_caller]
pub fn assert_line_ends(run: &Run, name: &str, end: &str) {
    assert!(line(run, name).ends_with(end), "{}", run.stdout);
}

/// `referee interactive OPTIONS --results RESULTS PACKAGE PROGRAM`, the
/// results in a temporary folder: the run, and the records it wrote
/// (none if it wrote no file).
pub fn judged(options: &[&str], package: &str, program: &str) -> (Run, Vec<serde_json::Value>) {
    judged_with(options, package, &[program])
}

/// [`judged`] of a program with arguments: `program` is its command line.
pub fn judged_with(
    options: &[&str],
    package: &str,
    program: &[&str],
) -> (Run, Vec<serde_json::Value>) {
    let (_dir, results) = super::temp_path("r.jsonl");
    let mut args = vec!["interactive"];
    args.extend(options);
    args.extend(["--results", results.to_str().unwrap(), package]);
    args.extend(program);
    let run = run(&args);
    let records = if results.exists() {
        super::jsonl(&results)
    } else {
        vec![]
    };
    (run, records)
}
