//! Problem packages as they come (issue 21): the package's limits, CPU
//! time judged as problemtools and DOMjudge judge it, test groups and
//! their `testdata.yaml`, through the real binary.

mod common;

use std::path::{Path, PathBuf};

use common::{Run, fixture, referee};

fn run(args: &[&str]) -> Run {
    let run = referee(args.iter().copied(), b"");
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run
}

fn guess() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("games/guess")
}

/// A copy of `games/guess` with its sample cases only and `problem_yaml`,
/// and whatever `extra` files are given, to change.
fn guess_with(problem_yaml: &str, extra: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    };
    for file in [
        "data/sample/1.in",
        "data/sample/1.ans",
        "data/sample/2.in",
        "data/sample/2.ans",
        "output_validators/guess/validator.py",
    ] {
        copy(&guess().join(file), &dir.path().join(file));
    }
    std::fs::write(dir.path().join("problem.yaml"), problem_yaml).unwrap();
    for (name, text) in extra {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn path(dir: &tempfile::TempDir) -> &str {
    dir.path().to_str().unwrap()
}

fn records(path: &Path) -> Vec<serde_json::Value> {
    common::jsonl(path)
}

/// The verdict line of test case `name`.
fn line<'a>(run: &'a Run, name: &str) -> &'a str {
    run.stdout
        .lines()
        .find(|l| l.starts_with(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no line for {name} in:\n{}", run.stdout))
}

#[test]
fn a_program_slowed_by_waiting_is_judged_by_its_cpu_time() {
    // boolfind's accepted C solution used 0.2s of CPU and 3-4s of wall
    // time beside a validator that sleeps: judged by the wall clock it
    // once got TIME LIMIT. Here: 400ms of waiting under a 300ms limit.
    let package = guess_with("validation: custom interactive\n", &[]);
    let out = tempfile::tempdir().unwrap();
    let results = out.path().join("r.jsonl");
    let run = run(&[
        "interactive",
        "--timeout",
        "300ms",
        "--wall-limit",
        "10s",
        "--results",
        results.to_str().unwrap(),
        path(&package),
        &fixture("packages/sleepy.sh"),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        line(&run, "sample/1").contains("ACCEPTED (CPU "),
        "{}",
        run.stdout
    );
    for r in records(&results) {
        assert!(r["micros"].as_u64().unwrap() >= 400_000, "{r}");
        assert!(r["cpu_micros"].as_u64().unwrap() < 300_000, "{r}");
    }
    // The wall clock still caps it.
    let run = self::run(&[
        "interactive",
        "--timeout",
        "300ms",
        "--wall-limit",
        "150ms",
        path(&package),
        &fixture("packages/sleepy.sh"),
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        line(&run, "sample/1").ends_with("wall clock past its 150ms cap)"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_program_that_computes_is_stopped_by_its_cpu_time() {
    let package = guess_with("validation: custom interactive\n", &[]);
    let out = tempfile::tempdir().unwrap();
    let results = out.path().join("r.jsonl");
    // A generous wall clock: only the CPU time can stop it.
    let run = run(&[
        "interactive",
        "--timeout",
        "200ms",
        "--wall-limit",
        "20s",
        "--results",
        results.to_str().unwrap(),
        path(&package),
        &fixture("packages/spin.sh"),
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let line = line(&run, "sample/1");
    assert!(
        line.starts_with("sample/1: TIME LIMIT (CPU ") && line.contains("of its 200ms limit"),
        "{}",
        run.stdout
    );
    for r in records(&results) {
        assert_eq!(r["verdict"], "time_limit", "{r}");
        assert!(r["cpu_micros"].as_u64().unwrap() >= 200_000, "{r}");
        assert!(r["micros"].as_u64().unwrap() < 10_000_000, "{r}");
    }
}

#[test]
fn the_packages_time_limit_applies_and_the_first_line_says_where_it_came_from() {
    let hang = fixture("interactive/hang.sh");
    let modern = guess_with(
        "problem_format_version: 2023-07-draft\ntype: interactive\nlimits:\n  time_limit: 0.2\n",
        &[],
    );
    let run = run(&["interactive", path(&modern), &hang]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout.lines().next().unwrap().contains(
            "200ms of CPU time per case (problem.yaml limits.time_limit), wall clock 400ms"
        ),
        "{}",
        run.stdout
    );
    assert!(line(&run, "sample/2").ends_with("wall clock past its 400ms cap)"));
    // DOMjudge's .timelimit, and the command line over both.
    let domjudge = guess_with(
        "validation: custom interactive\n",
        &[(".timelimit", "0.25\n")],
    );
    let run = self::run(&["interactive", path(&domjudge), &hang]);
    assert!(
        run.stdout
            .contains("250ms of CPU time per case (.timelimit)"),
        "{}",
        run.stdout
    );
    let run = self::run(&["interactive", "--timeout", "150ms", path(&modern), &hang]);
    assert!(
        run.stdout
            .contains("150ms of CPU time per case (--timeout), wall clock 300ms"),
        "{}",
        run.stdout
    );
    // Without a limit anywhere, the default, said as such.
    let legacy = guess_with("validation: custom interactive\n", &[]);
    let run = self::run(&[
        "interactive",
        path(&legacy),
        &format!("{}/submissions/accepted/binary.py", guess().display()),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout
            .contains("10s of CPU time per case (the default; the package gives none)"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_packages_memory_limit_applies_unless_the_command_line_says_otherwise() {
    let package = guess_with(
        "problem_format_version: 2023-07\ntype: interactive\nlimits:\n  memory: 64\n  time_limit: 5\n",
        &[],
    );
    let hog = fixture("packages/hog.py");
    let run = run(&["interactive", path(&package), &hog]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout
            .contains("memory 64 MiB (problem.yaml limits.memory)"),
        "{}",
        run.stdout
    );
    assert!(
        line(&run, "sample/1").contains("MEMORY LIMIT"),
        "{}",
        run.stdout
    );
    let run = self::run(&[
        "interactive",
        "--limit-memory",
        "1GiB",
        "--wall-limit",
        "300ms",
        path(&package),
        &hog,
    ]);
    assert!(
        run.stdout.contains("memory 1 GiB (--limit-memory)"),
        "{}",
        run.stdout
    );
    assert!(
        line(&run, "sample/1").contains("TIME LIMIT"),
        "{}",
        run.stdout
    );
}

#[test]
fn each_groups_testdata_yaml_gives_its_validator_arguments() {
    let validator = std::fs::read_to_string(fixture("packages/args-validator.py")).unwrap();
    let package = tempfile::tempdir().unwrap();
    let files: &[(&str, &str)] = &[
        (
            "problem.yaml",
            "validation: custom interactive\nvalidator_flags: --package\n",
        ),
        ("output_validators/v/validator.py", &validator),
        ("data/sample/1.in", ""),
        ("data/sample/1.ans", ""),
        (
            "data/secret/testdata.yaml",
            "output_validator_flags: --secret 1\n",
        ),
        ("data/secret/a/1.in", ""),
        ("data/secret/a/1.ans", ""),
        (
            "data/secret/b/testdata.yaml",
            "output_validator_args: [--group, b c]\n",
        ),
        ("data/secret/b/1.in", ""),
        ("data/secret/b/1.ans", ""),
        ("data/secret/b/deeper/1.in", ""),
        ("data/secret/b/deeper/1.ans", ""),
    ];
    for (name, text) in files {
        let path = package.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    // `cat` ends when the validator, having rejected, ends its input.
    let run = run(&["interactive", path(&package), "cat"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let args = |case: &str| {
        let line = line(&run, case);
        line[line.find("args:").expect(line)..].to_string()
    };
    assert!(
        args("sample/1").starts_with("args: --package ("),
        "{}",
        run.stdout
    );
    assert!(
        args("secret/a/1").starts_with("args: --package|--secret|1 ("),
        "{}",
        run.stdout
    );
    // A list keeps an argument with a space whole; a subgroup inherits.
    assert!(
        args("secret/b/1").starts_with("args: --package|--group|b c ("),
        "{}",
        run.stdout
    );
    assert!(
        args("secret/b/deeper/1").starts_with("args: --package|--group|b c ("),
        "{}",
        run.stdout
    );
}

#[test]
fn a_bad_problem_yaml_is_refused_naming_the_file_and_the_line() {
    let package = guess_with("name: x\nlimits:\n  time_limit: fast\n", &[]);
    let run = run(&[
        "interactive",
        path(&package),
        &fixture("interactive/hang.sh"),
    ]);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(
        run.stderr.contains("problem.yaml") && run.stderr.contains("line 3"),
        "{}",
        run.stderr
    );
    let package = guess_with(
        "validation: custom interactive\n",
        &[(".timelimit", "soon")],
    );
    let run = self::run(&[
        "interactive",
        path(&package),
        &fixture("interactive/hang.sh"),
    ]);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(
        run.stderr
            .contains(".timelimit: expected a number of seconds, found `soon`"),
        "{}",
        run.stderr
    );
}
