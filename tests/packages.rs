//! Problem packages as they come (issue 21): the package's limits, CPU
//! time judged as problemtools and DOMjudge judge it, test groups and
//! their `testdata.yaml`, through the real binary.

mod common;

use std::path::{Path, PathBuf};

use common::package::{
    assert_line_ends, assert_line_has, assert_line_starts, guess, judged, line, run,
};
use common::{Run, assert_has, assert_lacks, fixture, jsonl, write_file};
use serde_json::Value;

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
    write_file(dir.path(), "problem.yaml", problem_yaml);
    for (name, text) in extra {
        write_file(dir.path(), name, text);
    }
    dir
}

fn path(dir: &tempfile::TempDir) -> &str {
    dir.path().to_str().unwrap()
}

/// The sample cases of `games/guess` ([`guess_with`] no limits) judged
/// with `options` on `program`, which must end with status `code`: the
/// run and its records, of which there are some.
fn judged_on_samples(options: &[&str], program: &str, code: i32) -> (Run, Vec<Value>) {
    let package = guess_with("validation: custom interactive\n", &[]);
    let (run, records) = judged(options, path(&package), program);
    assert_eq!(run.code, Some(code), "{run:?}");
    assert!(!records.is_empty(), "{run:?}");
    (run, records)
}

#[test]
fn a_program_slowed_by_waiting_is_judged_by_its_cpu_time() {
    // boolfind's accepted C solution used 0.2s of CPU and 3-4s of wall
    // time beside a validator that sleeps: judged by the wall clock it
    // once got TIME LIMIT. Here: 400ms of waiting under a 300ms limit.
    let sleepy = fixture("packages/sleepy.sh");
    let (run, records) =
        judged_on_samples(&["--timeout", "300ms", "--wall-limit", "10s"], &sleepy, 0);
    assert_line_has(&run, "sample/1", "ACCEPTED (CPU ");
    for r in records {
        assert!(r["micros"].as_u64().unwrap() >= 400_000, "{r}");
        assert!(r["cpu_micros"].as_u64().unwrap() < 300_000, "{r}");
    }
    // The wall clock still caps it.
    let (run, _) = judged_on_samples(&["--timeout", "300ms", "--wall-limit", "150ms"], &sleepy, 1);
    assert_line_ends(&run, "sample/1", "wall clock past its 150ms cap)");
}

#[test]
fn a_program_that_computes_is_stopped_by_its_cpu_time() {
    // A generous wall clock: only the CPU time can stop it.
    let spin = fixture("packages/spin.sh");
    let (run, records) =
        judged_on_samples(&["--timeout", "200ms", "--wall-limit", "20s"], &spin, 1);
    let line = line(&run, "sample/1");
    assert!(
        line.starts_with("sample/1: TIME LIMIT (CPU ") && line.contains("of its 200ms limit"),
        "{}",
        run.stdout
    );
    for r in records {
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
    assert_line_ends(&run, "sample/2", "wall clock past its 400ms cap)");
    // DOMjudge's .timelimit, and the command line over both.
    let domjudge = guess_with(
        "validation: custom interactive\n",
        &[(".timelimit", "0.25\n")],
    );
    let run = self::run(&["interactive", path(&domjudge), &hang]);
    assert_has(&run.stdout, "250ms of CPU time per case (.timelimit)");
    let run = self::run(&["interactive", "--timeout", "150ms", path(&modern), &hang]);
    assert_has(
        &run.stdout,
        "150ms of CPU time per case (--timeout), wall clock 300ms",
    );
    // Without a limit anywhere, the default, said as such.
    let legacy = guess_with("validation: custom interactive\n", &[]);
    let run = self::run(&[
        "interactive",
        path(&legacy),
        &format!("{}/submissions/accepted/binary.py", guess().display()),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(
        &run.stdout,
        "10s of CPU time per case (the default; the package gives none)",
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
    assert_has(&run.stdout, "memory 64 MiB (problem.yaml limits.memory)");
    assert_line_has(&run, "sample/1", "MEMORY LIMIT");
    let run = self::run(&[
        "interactive",
        "--limit-memory",
        "1GiB",
        "--wall-limit",
        "300ms",
        path(&package),
        &hog,
    ]);
    assert_has(&run.stdout, "memory 1 GiB (--limit-memory)");
    assert_line_has(&run, "sample/1", "TIME LIMIT");
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
        write_file(package.path(), name, text);
    }
    // `cat` ends when the validator, having rejected, ends its input.
    let run = run(&["interactive", path(&package), "cat"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let args = |case: &str| {
        let line = line(&run, case);
        line[line.find("args:").expect(line)..].to_string()
    };
    for (case, start) in [
        ("sample/1", "args: --package ("),
        ("secret/a/1", "args: --package|--secret|1 ("),
        // A list keeps an argument with a space whole; a subgroup inherits.
        ("secret/b/1", "args: --package|--group|b c ("),
        ("secret/b/deeper/1", "args: --package|--group|b c ("),
    ] {
        assert!(args(case).starts_with(start), "{}", run.stdout);
    }
}

/// A run on `package` that is refused before any case (status 64).
fn refused(package: &tempfile::TempDir) -> Run {
    let run = run(&[
        "interactive",
        path(package),
        &fixture("interactive/hang.sh"),
    ]);
    assert_eq!(run.code, Some(64), "{run:?}");
    run
}

#[test]
fn a_bad_problem_yaml_is_refused_naming_the_file_and_the_line() {
    let package = guess_with("name: x\nlimits:\n  time_limit: fast\n", &[]);
    let run = refused(&package);
    assert_has(&run.stderr, "problem.yaml");
    assert_has(&run.stderr, "line 3");
    let package = guess_with(
        "validation: custom interactive\n",
        &[(".timelimit", "soon")],
    );
    let run = refused(&package);
    assert_has(
        &run.stderr,
        ".timelimit: expected a number of seconds, found `soon`",
    );
}

fn oddcoin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("games/oddcoin")
}

/// A copy of `package` (without its submissions), to change.
fn copy_package(package: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(package.join("."))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::remove_dir_all(dir.path().join("submissions")).unwrap();
    dir
}

#[test]
fn a_package_is_judged_whole_in_c_python_and_java() {
    let out = tempfile::tempdir().unwrap();
    let results = out.path().join("r.jsonl");
    let junit = out.path().join("junit.xml");
    let run = run(&[
        "interactive",
        "--jobs",
        "2",
        "--results",
        results.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        oddcoin().to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    // The 2023-07 layout's limit, said where it came from.
    assert_has(
        &run.stdout,
        "1s of CPU time per case (problem.yaml limits.time_limit)",
    );
    for (submission, language, verdict) in [
        ("accepted/Ternary.java", "Java", "accepted"),
        ("accepted/ternary.c", "C", "accepted"),
        ("accepted/ternary.py", "Python 3", "accepted"),
        ("run_time_error/crash.py", "Python 3", "runtime_error"),
        ("time_limit_exceeded/spin.c", "C", "time_limit"),
        ("wrong_answer/halving.py", "Python 3", "wrong_answer"),
    ] {
        assert_line_ends(&run, submission, ", as expected");
        let row = run
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("| {submission} ")))
            .unwrap_or_else(|| panic!("no row for {submission}:\n{}", run.stdout));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!((cells[2], cells[4]), (language, verdict), "{row}");
    }
    assert!(
        run.stdout
            .contains("6 of 6 submissions got their folder's verdict")
    );
    // Every case of every submission is recorded, with its submission; a
    // time-limit submission is judged by the limit times the margin.
    let records = jsonl(&results);
    assert_eq!(
        records
            .iter()
            .filter(|r| r["submission"] == "accepted/ternary.c")
            .count(),
        10
    );
    let spin = records
        .iter()
        .find(|r| r["submission"] == "time_limit_exceeded/spin.c")
        .unwrap();
    assert_eq!(spin["time_limit_micros"], 1_500_000, "{spin}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 6, "{xml}");
    assert_lacks(&xml, "<failure");
}

#[test]
fn a_submission_that_misses_its_folders_verdict_fails_the_run() {
    let package = copy_package(&guess());
    let accepted = package.path().join("submissions/accepted");
    std::fs::create_dir_all(&accepted).unwrap();
    // A wrong answer filed as accepted, and a program that does not build.
    std::fs::copy(
        guess().join("submissions/wrong_answer/linear.py"),
        accepted.join("linear.py"),
    )
    .unwrap();
    write_file(&accepted, "broken.c", "int main(void) { return x; }\n");
    let junit = package.path().join("junit.xml");
    let run = run(&[
        "interactive",
        "--junit",
        junit.to_str().unwrap(),
        path(&package),
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    // Without an explicit limit, the accepted submissions set it.
    assert_has(
        &run.stdout,
        "no explicit time limit; the accepted submissions set it",
    );
    assert_has(&run.stdout, "times 5, rounded up to a second");
    assert!(
        line(&run, "accepted/linear.py")
            .contains("WRONG ANSWER: no correct guess within 5 guesses")
            && line(&run, "accepted/linear.py").ends_with("but accepted expects otherwise"),
        "{}",
        run.stdout
    );
    // The compiler's error names the file and the line.
    assert!(
        line(&run, "accepted/broken.c").contains("compile error")
            && run.stdout.contains("broken.c:1:"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("0 of 2 submissions got their folder's verdict")
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_has(
        &xml,
        "expected accepted, got WRONG ANSWER: no correct guess",
    );
    assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
}

#[test]
fn a_source_file_given_as_the_program_is_built_first() {
    let source = oddcoin().join("submissions/accepted/ternary.c");
    let run = run(&[
        "interactive",
        oddcoin().to_str().unwrap(),
        source.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stdout, "10 of 10 test cases accepted");
    let dir = tempfile::tempdir().unwrap();
    let broken = write_file(
        dir.path(),
        "Broken.java",
        "class Broken { public static void main(String[] a) { x(); } }\n",
    );
    let run = self::run(&[
        "interactive",
        oddcoin().to_str().unwrap(),
        broken.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "compile error");
    assert_has(&run.stderr, "Broken.java:1");
}

#[test]
fn a_package_without_submissions_is_refused_when_no_program_is_given() {
    let package = copy_package(&guess());
    let run = run(&["interactive", path(&package)]);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "submissions");
}

#[test]
fn a_multi_pass_problem_runs_the_program_again_on_each_nextpass_in() {
    let package = fixture("packages/multipass");
    let (run, records) = judged(&[], &package, &fixture("packages/doubler.sh"));
    // Case 1 takes three passes, the feedback directory kept between
    // them; case 2's validator asks for a fourth, past the package's
    // limit: its fault.
    assert_eq!(run.code, Some(70), "{run:?}");
    assert_has(&run.stdout, "multi-pass, up to 3 passes a case");
    assert_line_starts(&run, "secret/1", "secret/1: ACCEPTED (3 passes, CPU ");
    assert_line_has(
        &run,
        "secret/2",
        "JUDGE ERROR: the validator wrote nextpass.in on pass 3, the last \
         (limits.validation_passes: 3)",
    );
    assert_eq!(records[0]["passes"], 3, "{}", records[0]);
    // A program right on the first pass only is wrong on the second.
    let run = self::run(&["interactive", &package, &fixture("packages/two.sh")]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_line_has(
        &run,
        "secret/1",
        "WRONG ANSWER: pass 2: expected 4, got '2' (2 passes",
    );
}

#[test]
fn a_nextpass_in_that_is_not_a_regular_file_is_the_validators_fault() {
    let package = tempfile::tempdir().unwrap();
    let validator =
        "#!/bin/sh\n# Leaves a FIFO for nextpass.in.\nmkfifo \"$3/nextpass.in\"\nread x\nexit 42\n";
    let files: &[(&str, &str)] = &[
        (
            "problem.yaml",
            "problem_format_version: 2023-07\ntype: interactive multi-pass\n",
        ),
        ("output_validator/run", validator),
        ("data/secret/1.in", ""),
        ("data/secret/1.ans", ""),
    ];
    for (name, text) in files {
        let path = package.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    let run_script = package.path().join("output_validator/run");
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&run_script)
        .status()
        .unwrap();
    let run = run(&["interactive", path(&package), "sh", "-c", "echo hi"]);
    assert_eq!(run.code, Some(70), "{run:?}");
    assert_line_has(
        &run,
        "secret/1",
        "JUDGE ERROR: nextpass.in is a FIFO, not a regular file",
    );
}

#[test]
fn the_guess_package_checks_out_whole() {
    let run = run(&["interactive", guess().to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_line_ends(&run, "accepted/binary.py", ", as expected");
    assert_line_ends(&run, "wrong_answer/linear.py", ", as expected");
    assert!(
        run.stdout
            .contains("2 of 2 submissions got their folder's verdict")
    );
}

#[test]
fn problemtools_transitional_layout_one_folder_in_output_validator_is_built() {
    // problemtools' own examples/guess was refused with "expected an
    // executable `run` ... found no file": its output_validator/ held one
    // folder, with a C++ source and its header.
    let package = copy_package(&oddcoin());
    let validator = package.path().join("output_validator");
    let inner = package.path().join("checker");
    std::fs::rename(&validator, &inner).unwrap();
    std::fs::create_dir(&validator).unwrap();
    std::fs::rename(&inner, validator.join("checker")).unwrap();
    let run = run(&[
        "interactive",
        path(&package),
        oddcoin()
            .join("submissions/accepted/ternary.c")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stdout, "10 of 10 test cases accepted");
}

#[test]
fn a_package_is_judged_whole_under_the_sandbox() {
    // Each submission built and run under bubblewrap, the package's data
    // and validator hidden from it.
    common::need_bwrap();
    let run = run(&["interactive", "--sandbox", oddcoin().to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout
            .contains("6 of 6 submissions got their folder's verdict")
    );
}

#[test]
fn a_deeply_nested_problem_yaml_or_testdata_yaml_is_refused_at_once() {
    // 50,000 `[` after a key took the YAML parser seconds of CPU time
    // before it refused them (200,000: minutes); they are refused before
    // it gets that far.
    let problem_yaml = format!("name: {}", "[".repeat(50_000));
    let testdata_yaml = format!("output_validator_args: {}\n", "{a: ".repeat(50_000));
    let packages = [
        ("problem.yaml", guess_with(&problem_yaml, &[])),
        (
            "testdata.yaml",
            guess_with(
                "validation: custom interactive\n",
                &[("data/sample/testdata.yaml", &testdata_yaml)],
            ),
        ),
    ];
    for (file, package) in packages {
        let run = refused(&package);
        assert_has(&run.stderr, &format!("{file}: line 1: "));
        assert_has(&run.stderr, "nested more than 64 levels deep");
    }
}

#[test]
fn answer_files_without_an_input_are_named_in_a_warning() {
    let package = guess_with(
        "validation: custom interactive\n",
        &[
            ("data/secret/9.ans", "1\n"),
            ("data/secret/10.ans", "2\n"),
            ("data/secret/group/3.ans", "3\n"),
        ],
    );
    let run = run(&[
        "interactive",
        path(&package),
        guess()
            .join("submissions/accepted/binary.py")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let warning = run
        .stderr
        .lines()
        .find(|l| l.contains("warning") && l.contains("answer file"))
        .unwrap_or_else(|| panic!("no warning in:\n{}", run.stderr));
    assert!(
        warning.contains("3 answer files without an input")
            && warning.contains("secret/9.ans, secret/10.ans, secret/group/3.ans")
            && warning.contains("not judged"),
        "{warning}"
    );
}

#[test]
fn a_time_limit_submission_accepted_with_the_extra_time_only_warns_as_verifyproblem_does() {
    // Limit 1s; a time-limit submission is judged at 1s times the safety
    // margin (3s): this one takes about 1.5s of CPU time, then plays
    // well. A TIME LIMIT at the limit, ACCEPTED at 3s: verifyproblem
    // passes it with a warning that it is sensitive to the time limit.
    let package = guess_with(
        "validation: custom interactive\nlimits:\n  time_limit: 1\n  time_safety_margin: 3\n",
        &[],
    );
    let slow = package
        .path()
        .join("submissions/time_limit_exceeded/slow.py");
    std::fs::create_dir_all(slow.parent().unwrap()).unwrap();
    let binary = std::fs::read_to_string(guess().join("submissions/accepted/binary.py")).unwrap();
    std::fs::write(
        &slow,
        format!(
            "import time\nwhile time.process_time() < 1.5:\n    pass\n{}",
            binary.replace("#!/usr/bin/env python3\n", "")
        ),
    )
    .unwrap();
    let run = run(&["interactive", path(&package)]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let line = line(&run, "time_limit_exceeded/slow.py");
    assert!(
        line.contains("TIME LIMIT, as expected")
            && line
                .contains("warning: sensitive to the time limit: TIME LIMIT at 1s, ACCEPTED at 3s"),
        "{}",
        run.stdout
    );
    assert_has(
        &run.stdout,
        "interactive: 1 of 1 submissions got their folder's verdict; \
             warning: 1 sensitive to the time limit (time_limit_exceeded/slow.py)",
    );
}
