//! `referee interactive`: ICPC interactive problems, the validator and the
//! program relayed through the referee, judged through the real binary.
//! Every run checks that no process (program or validator) is left behind.

mod common;

use std::path::PathBuf;

use common::package::{
    assert_line_ends, assert_line_has, assert_line_starts, judged, judged_with, line, run,
};
use common::{
    Run, assert_has, assert_lacks, assert_starts, fixture, jsonl, referee_ok, temp_path, write_file,
};

fn guess() -> String {
    format!("{}/games/guess", env!("CARGO_MANIFEST_DIR"))
}

fn submission(path: &str) -> String {
    format!("{}/submissions/{path}", guess())
}

const CASES: [&str; 6] = [
    "sample/1", "sample/2", "secret/1", "secret/2", "secret/3", "secret/4",
];

#[test]
fn the_binary_search_is_accepted_on_every_case() {
    let (run, records) = judged(&[], &guess(), &submission("accepted/binary.py"));
    assert_eq!(run.code, Some(0), "{run:?}");
    for case in CASES {
        assert_line_has(&run, case, "ACCEPTED");
    }
    assert!(run.stdout.contains("6 of 6 test cases accepted"));
    assert_eq!(records.len(), 6);
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r["game"], "interactive");
        assert_eq!(r["index"], i as u64 + 1);
        assert_eq!(r["case"], CASES[i]);
        assert_eq!(r["status"], "ok");
        assert_eq!(r["verdict"], "accepted");
        assert_eq!(r["validator_exit"]["exited"], 42);
        assert_eq!(r["exit"]["exited"], 0);
        assert!(
            r["judge_message"].as_str().unwrap().starts_with("found "),
            "{r}"
        );
    }
}

#[test]
fn too_many_guesses_is_a_wrong_answer_with_the_judge_message() {
    let run = run(&[
        "interactive",
        &guess(),
        &submission("wrong_answer/linear.py"),
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_line_starts(
        &run,
        "sample/1",
        "sample/1: WRONG ANSWER: no correct guess within 5 guesses",
    );
    // A secret of 1 is found at once.
    assert_line_has(&run, "sample/2", "ACCEPTED");
    assert!(run.stdout.contains("2 of 6 test cases accepted"));
}

#[test]
fn a_program_that_hangs_gets_time_limit_and_is_killed() {
    let (run, records) = judged(
        &["--timeout", "300ms"],
        &guess(),
        &fixture("interactive/hang.sh"),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    // It waits rather than computes: the wall clock, at twice the CPU
    // time limit, stops it.
    for case in CASES {
        let line = line(&run, case);
        assert!(
            line.starts_with(&format!("{case}: TIME LIMIT (CPU "))
                && line.ends_with("wall clock past its 600ms cap)"),
            "{}",
            run.stdout
        );
    }
    for r in &records {
        assert_eq!(r["status"], "timeout", "{r}");
        assert_eq!(r["phase"], "move", "{r}");
        assert_eq!(r["verdict"], "time_limit", "{r}");
        assert!(r["micros"].as_u64().unwrap() >= 600_000, "{r}");
        assert_eq!(r["time_limit_micros"], 300_000, "{r}");
        assert_eq!(r["wall_limit_micros"], 600_000, "{r}");
    }
}

#[test]
fn a_crash_is_a_runtime_error_even_when_the_validator_accepts() {
    let (run, records) = judged(&[], &guess(), &fixture("interactive/crash-after-guess.sh"));
    assert_eq!(run.code, Some(1), "{run:?}");
    for case in CASES {
        assert_line_has(
            &run,
            case,
            "RUNTIME ERROR: the program exited with status 3",
        );
    }
    // sample/2 (N = 1): the one guess is right, the validator accepts.
    assert_eq!(records[1]["validator_exit"]["exited"], 42);
    assert_eq!(records[1]["status"], "crashed");
    assert_eq!(records[1]["first_ended"], "program");
}

#[test]
fn writing_after_the_validator_has_ended_lets_the_validator_decide() {
    let (run, records) = judged(
        &[
            "--timeout",
            // Room for the validator's start on a loaded machine.
            "1500ms",
        ],
        &guess(),
        &fixture("interactive/spam.sh"),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_line_has(
        &run,
        "sample/1",
        "WRONG ANSWER: no correct guess within 5 guesses",
    );
    let first = &records[0];
    assert_eq!(first["first_ended"], "validator", "{first}");
    assert_eq!(first["pipe_closed"], true, "{first}");
    assert_eq!(first["status"], "incorrect", "{first}");
    // After the right guess (N = 1) the validator waits for the end of the
    // output, which never comes: the program's time runs out.
    assert_line_has(&run, "sample/2", "TIME LIMIT");
}

#[test]
fn a_validator_with_an_odd_exit_status_is_a_judge_error() {
    let (run, records) = judged(&[], &fixture("interactive/oddjudge"), "cat");
    assert_eq!(run.code, Some(70), "{run:?}");
    let verdict = line(&run, "sample/1");
    assert!(
        verdict.contains("JUDGE ERROR: the validator exited with status 7")
            && verdict.contains("judge message: confused"),
        "{}",
        run.stdout
    );
    assert_has(&run.stdout, "| the odd judge gives up");
    assert!(run.stdout.contains("1 judge error"));
    let record = &records[0];
    assert_eq!(record["status"], "internal", "{record}");
    assert_eq!(record["verdict"], "judge_error", "{record}");
}

#[test]
fn a_c_validator_is_compiled_and_gets_the_validator_flags() {
    let package = fixture("interactive/cjudge");
    let run_with = |answer: &str| {
        run(&[
            "interactive",
            &package,
            "sh",
            "-c",
            &format!("read x; echo {answer}"),
        ])
    };
    let good = run_with("pong");
    assert_eq!(good.code, Some(0), "{good:?}");
    assert_line_has(&good, "secret/only", "ACCEPTED");
    let bad = run_with("pang");
    assert_eq!(bad.code, Some(1), "{bad:?}");
    assert_line_has(&bad, "secret/only", "WRONG ANSWER: expected pong");
}

#[test]
fn bad_packages_and_programs_are_usage_errors_that_say_why() {
    let missing = run(&["interactive", "/nonexistent/problem", "cat"]);
    assert_eq!(missing.code, Some(64), "{missing:?}");
    assert!(
        missing
            .stderr
            .contains("/nonexistent/problem: not a directory")
    );

    // A package without a validator.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data/sample")).unwrap();
    write_file(dir.path(), "data/sample/1.in", "1 1\n");
    let no_answer = run(&["interactive", dir.path().to_str().unwrap(), "cat"]);
    assert_eq!(no_answer.code, Some(64), "{no_answer:?}");
    assert_has(&no_answer.stderr, "no answer file");
    write_file(dir.path(), "data/sample/1.ans", "1\n");
    let no_validator = run(&["interactive", dir.path().to_str().unwrap(), "cat"]);
    assert_eq!(no_validator.code, Some(64), "{no_validator:?}");
    assert_has(&no_validator.stderr, "output_validators");

    // Not an interactive problem.
    write_file(dir.path(), "problem.yaml", "validation: default\n");
    let batch = run(&["interactive", dir.path().to_str().unwrap(), "cat"]);
    assert_eq!(batch.code, Some(64), "{batch:?}");
    assert_has(&batch.stderr, "problem.yaml line 1");
    assert_has(&batch.stderr, "not an interactive");

    let no_program = run(&["interactive", &guess(), "/nonexistent/solution"]);
    assert_eq!(no_program.code, Some(64), "{no_program:?}");
    assert_has(&no_program.stderr, "cannot start the program");
}

/// Writes `text` to `path`, executable.
fn script(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_build_script_makes_the_run_program_and_a_last_line_needs_no_newline() {
    let dir = tempfile::tempdir().unwrap();
    let problem = dir.path();
    std::fs::create_dir_all(problem.join("data/secret")).unwrap();
    write_file(problem, "data/secret/a.in", "41\n");
    write_file(problem, "data/secret/a.ans", "42\n");
    let validator = problem.join("output_validators/sum");
    std::fs::create_dir_all(&validator).unwrap();
    // `build` writes `run`: it sends the input's number and accepts the
    // answer's, which the program sends without a newline before exiting.
    script(
        &validator.join("build"),
        "#!/bin/sh\n\
         printf '#!/bin/sh\\ncat \"$1\"\\nread got\\n[ \"$got\" = \"$(cat \"$2\")\" ] && exit 42\\n\
         echo \"got $got\" > \"$3/judgemessage.txt\"\\nexit 43\\n' > run\n\
         chmod +x run\n",
    );
    for (program, code, says) in [
        ("read n; printf %s $((n + 1))", 0, "ACCEPTED"),
        ("read n; echo $n", 1, "WRONG ANSWER: got 41"),
    ] {
        let run = run(&[
            "interactive",
            problem.to_str().unwrap(),
            "sh",
            "-c",
            program,
        ]);
        assert_eq!(run.code, Some(code), "{run:?}");
        assert_line_has(&run, "secret/a", says);
    }
}

#[test]
fn a_validator_that_floods_its_output_after_the_program_ended_is_a_judge_error() {
    let (run, _) = judged_by(
        "#!/bin/sh\nwhile :; do echo x; done\n",
        &["--timeout", "300ms", "--validator-timeout", "1s"],
        &["true"],
    );
    assert_eq!(run.code, Some(70), "{run:?}");
    assert_line_has(&run, "sample/1", "JUDGE ERROR");
}

/// A package in `dir` whose validator is the shell script `validator`, with
/// one sample case for each input in `inputs` (`sample/1`, `sample/2`, ...).
fn package(dir: &std::path::Path, inputs: &[&str], validator: &str) -> PathBuf {
    let package = dir.join("package");
    std::fs::create_dir_all(package.join("data/sample")).unwrap();
    std::fs::create_dir_all(package.join("output_validators/v")).unwrap();
    write_file(&package, "problem.yaml", "validation: custom interactive\n");
    for (i, input) in inputs.iter().enumerate() {
        write_file(&package, format!("data/sample/{}.in", i + 1), input);
        write_file(&package, format!("data/sample/{}.ans", i + 1), "");
    }
    script(&package.join("output_validators/v/run"), validator);
    package
}

/// [`judged_with`] on a package of one sample case (input `1`) whose
/// validator is the shell script `validator`.
fn judged_by(validator: &str, options: &[&str], program: &[&str]) -> (Run, Vec<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let package = package(dir.path(), &["1\n"], validator);
    judged_with(options, package.to_str().unwrap(), program)
}

/// A program that reads until its input ends (the validator's end), then
/// hangs: whatever the validator did, it did first.
const HANG_AFTER_INPUT: [&str; 3] = ["sh", "-c", "cat >/dev/null; exec sleep 30"];

/// [`judged_by`] `validator`, which ends first, beside a program that
/// then hangs; the run must end with status `code`.
fn validator_first(validator: &str, code: i32) -> (Run, Vec<serde_json::Value>) {
    // Room for the validator's start on a loaded machine.
    let (run, records) = judged_by(validator, &["--timeout", "1s"], &HANG_AFTER_INPUT);
    assert_eq!(run.code, Some(code), "{run:?}");
    (run, records)
}

#[test]
fn a_validator_that_rejects_first_decides_though_the_program_then_runs_out_of_time() {
    let (run, records) = validator_first(
        "#!/bin/sh\necho 'you said nothing' > \"$3/judgemessage.txt\"\nexit 43\n",
        1,
    );
    assert_line_starts(&run, "sample/1", "sample/1: WRONG ANSWER: you said nothing");
    let record = &records[0];
    assert_eq!(record["verdict"], "wrong_answer", "{record}");
    assert_eq!(record["status"], "incorrect", "{record}");
    assert_eq!(record["first_ended"], "validator", "{record}");
    assert_eq!(record["validator_exit"]["exited"], 43, "{record}");
}

#[test]
fn a_validator_that_fails_first_is_a_judge_error_though_the_program_then_runs_out_of_time() {
    let (run, _) = validator_first("#!/bin/sh\nexit 7\n", 70);
    assert_line_has(
        &run,
        "sample/1",
        "JUDGE ERROR: the validator exited with status 7",
    );
}

const REJECTED: &str = "WRONG ANSWER: the validator rejected the interaction (exit status 43)";

/// [`judged_by`] `validator` on `cat`: a wrong answer (status 1) whose
/// verdict line holds `says`.
fn rejected_by(validator: &str, says: &str) -> (Run, Vec<serde_json::Value>) {
    let (run, records) = judged_by(validator, &[], &["cat"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_line_has(&run, "sample/1", says);
    (run, records)
}

#[test]
fn a_feedback_file_that_is_a_fifo_is_not_read_and_the_case_is_judged() {
    // Opened as a file, a FIFO with no writer blocks its reader for ever.
    let (run, records) = rejected_by(
        "#!/bin/sh\nmkfifo \"$3/judgemessage.txt\" \"$3/teammessage.txt\"\nexit 43\n",
        REJECTED,
    );
    assert_has(
        &run.stdout,
        "  note: judgemessage.txt is a FIFO, not a regular file: not read",
    );
    let notes = &records[0]["feedback_notes"];
    assert_eq!(notes.as_array().map(Vec::len), Some(2), "{}", records[0]);
    assert!(records[0].get("judge_message").is_none(), "{}", records[0]);
}

#[test]
fn only_the_first_64_kib_of_a_big_feedback_file_are_kept() {
    let (run, records) = rejected_by(
        "#!/bin/sh\nyes 'no, not that' | head -c 50000000 > \"$3/judgemessage.txt\"\nexit 43\n",
        "WRONG ANSWER: no, not that; no, not that",
    );
    assert_has(
        &run.stdout,
        "  note: judgemessage.txt holds 48 MiB: only its first 64 KiB are read",
    );
    let message = records[0]["judge_message"].as_str().unwrap();
    assert!(
        message.len() <= 64 * 1024 && message.len() > 60 * 1024,
        "{}",
        message.len()
    );
    assert_eq!(records[0]["feedback_notes"].as_array().unwrap().len(), 1);
}

#[test]
fn a_feedback_file_or_directory_that_is_a_symbolic_link_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    // sample/1: the files are links to a file of the host's; sample/2: the
    // feedback directory is replaced by a link to a directory elsewhere.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    write_file(&elsewhere, "judgemessage.txt", "secret of the host\n");
    let package = package(
        dir.path(),
        &["file\n", "dir\n"],
        &format!(
            "#!/bin/sh\n\
             if [ \"$(cat \"$1\")\" = file ]; then\n\
               ln -s /etc/passwd \"$3/judgemessage.txt\"\n\
               ln -s /etc/passwd \"$3/teammessage.txt\"\n\
             else\n\
               rm -r \"$3\" && ln -s {} \"${{3%/}}\"\n\
             fi\n\
             exit 43\n",
            elsewhere.display()
        ),
    );
    let (run, records) = judged(&[], package.to_str().unwrap(), "cat");
    assert_eq!(run.code, Some(1), "{run:?}");
    for case in ["sample/1", "sample/2"] {
        assert_line_has(&run, case, REJECTED);
    }
    assert_has(
        &run.stdout,
        "  note: judgemessage.txt is a symbolic link: not followed",
    );
    assert_has(
        &run.stdout,
        "  note: the feedback directory is a symbolic link: not followed",
    );
    assert_lacks(&run.stdout, "root:");
    assert_lacks(&run.stdout, "secret of the host");
    for record in &records {
        assert!(record.get("judge_message").is_none(), "{record}");
        assert!(record.get("team_message").is_none(), "{record}");
    }
    // The link was removed with the feedback directory; what it pointed to
    // was left alone.
    assert!(elsewhere.join("judgemessage.txt").exists());
}

/// Red team: cases under `data/secret/<group>/` were never run, and the
/// run said "4 test cases" and passed; cases sorted as text (1, 10, 2).
#[test]
fn every_test_group_is_judged_in_natural_order() {
    let dir = tempfile::tempdir().unwrap();
    let package = package(dir.path(), &["1\n"], "#!/bin/sh\nexit 42\n");
    for case in [
        "secret/10",
        "secret/2",
        "secret/group10/1",
        "secret/group2/b/1",
    ] {
        let input = package.join("data").join(format!("{case}.in"));
        std::fs::create_dir_all(input.parent().unwrap()).unwrap();
        std::fs::write(&input, "1\n").unwrap();
        std::fs::write(input.with_extension("ans"), "").unwrap();
    }
    let run = referee_ok([
        "interactive",
        package.to_str().unwrap(),
        "sh",
        "-c",
        "cat >/dev/null",
    ]);
    let judged: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|l| l.split_once(": ACCEPTED").map(|(case, _)| case))
        .collect();
    assert_eq!(
        judged,
        [
            "sample/1",
            "secret/2",
            "secret/10",
            "secret/group2/b/1",
            "secret/group10/1"
        ],
        "{run:?}"
    );
    assert!(run.stdout.contains("5 of 5 test cases accepted"), "{run:?}");
}

/// Red team: `judgeerror.txt` was never shown.
#[test]
fn a_validators_judgeerror_txt_is_shown_with_its_judge_error() {
    let (run, records) = judged_by(
        "#!/bin/sh\necho 'the answer file is empty' > \"$3/judgeerror.txt\"\nexit 1\n",
        &[],
        &["sh", "-c", "cat >/dev/null"],
    );
    run.expect_stdout(70, "JUDGE ERROR: the validator exited with status 1 (42 accepts, 43 rejects); judgeerror.txt: the answer file is empty");
    assert_eq!(
        records[0]["judge_error_message"], "the answer file is empty",
        "{records:?}"
    );
}

/// What a run left in its own temporary directory `tmp` (its `TMPDIR`).
fn left_in(tmp: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// `referee interactive` on the C validator's package (a compiled
/// validator in the run's work directory) with a program that hangs,
/// started with `tmp` as its `TMPDIR`; returns once the first line is out,
/// the validator built.
fn start_hanging_run(
    tmp: &std::path::Path,
    marker: &common::Marker,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::io::BufRead;
    let mut child = common::command(
        [
            "interactive",
            "--timeout",
            "60s",
            &fixture("interactive/cjudge"),
            &fixture("interactive/hang.sh"),
        ],
        marker,
    )
    .env("TMPDIR", tmp)
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.starts_with("interactive: "), "{first}");
    assert!(
        left_in(tmp)
            .iter()
            .any(|n| n.starts_with("referee-interactive-")),
        "the run's work directories are where they should be: {:?}",
        left_in(tmp)
    );
    (child, out)
}

/// Waits (a minute at most) for `child` to end; its exit status.
fn wait_for(child: &mut std::process::Child) -> Option<i32> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the referee did not end");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn an_interrupted_run_leaves_no_work_directory_behind() {
    for signal in [
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGTERM,
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let marker = common::Marker::new();
        let (mut child, _out) = start_hanging_run(tmp.path(), &marker);
        std::thread::sleep(std::time::Duration::from_millis(200));
        common::signal(&child, signal);
        assert_eq!(wait_for(&mut child), Some(130), "{signal}");
        marker.assert_none_left();
        assert_eq!(left_in(tmp.path()), Vec::<String>::new(), "{signal}");
    }
}

#[test]
fn a_run_whose_output_is_closed_leaves_no_work_directory_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = common::Marker::new();
    let (mut child, out) = start_hanging_run(tmp.path(), &marker);
    // `referee interactive ... | head -1`: the reader goes.
    drop(out);
    assert_eq!(wait_for(&mut child), Some(141));
    marker.assert_none_left();
    assert_eq!(left_in(tmp.path()), Vec::<String>::new());
}

#[test]
fn a_run_that_ends_leaves_no_work_directory_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp_dir = tmp.path().to_str().unwrap();
    // Ended normally, and ended by an error (a program that cannot start).
    for program in ["cat", "/nonexistent/solution"] {
        let run = common::referee_with(
            ["interactive", &fixture("interactive/cjudge"), program],
            b"",
            &[("TMPDIR", tmp_dir)],
            None,
        );
        assert!(matches!(run.code, Some(1 | 64)), "{run:?}");
        assert_eq!(left_in(tmp.path()), Vec::<String>::new(), "{run:?}");
    }
}

#[test]
fn a_single_threaded_programs_cpu_time_is_never_more_than_its_wall_time() {
    // The program's CPU time and its wall time are measured over the same
    // interval, its start included: a single-threaded program cannot use
    // more CPU time than the time that passed. A C program that computes
    // for a few milliseconds and exits, on every case, many times over.
    let dir = tempfile::tempdir().unwrap();
    let source = write_file(
        dir.path(),
        "spin.c",
        "int main(void) { volatile unsigned long x = 0;\n\
         for (unsigned long i = 0; i < 3000000; i++) x += i;\n\
         return 0; }\n",
    );
    let inputs: Vec<String> = (1..=30).map(|i| format!("{i}\n")).collect();
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let package = package(dir.path(), &inputs, "#!/bin/sh\ncat >/dev/null\nexit 42\n");
    for cgroups in [true, false] {
        let results = dir.path().join(format!("r-{cgroups}.jsonl"));
        let mut args = vec!["--no-cgroups"];
        if cgroups {
            args.clear();
        }
        args.extend([
            "interactive",
            "--results",
            results.to_str().unwrap(),
            package.to_str().unwrap(),
            source.to_str().unwrap(),
        ]);
        let run = run(&args);
        assert_eq!(run.code, Some(0), "{run:?}");
        for record in jsonl(&results) {
            // Without cgroups a case's CPU time below one clock tick is
            // not known, and left out.
            let Some(cpu) = record["cpu_micros"].as_u64() else {
                assert!(!cgroups, "cgroups: no CPU time: {record}");
                continue;
            };
            let wall = record["micros"].as_u64().unwrap();
            // A little for the clocks' granularity.
            assert!(
                cpu <= wall + 100,
                "cgroups {cgroups}: CPU {cpu}µs, wall {wall}µs: {record}"
            );
        }
    }
}

#[test]
fn a_validators_message_reaches_the_terminal_escaped() {
    // Before, `ESC ]0;PWNED BEL ESC [2J` in judgemessage.txt retitled and
    // cleared the user's terminal.
    let (run, _) = judged_by(
        "#!/bin/sh\nprintf 'no \\033]0;PWNED\\007\\033[2J\\n' > \"$3/judgemessage.txt\"\nexit 43\n",
        &["--timeout", "1s"],
        &["sh", "-c", "cat >/dev/null"],
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            !text.contains(['\u{1b}', '\u{7}']),
            "a control character reached {stream}: {run:?}"
        );
    }
    let shown = r"WRONG ANSWER: no \x1b]0;PWNED\x07\x1b[2J";
    assert!(
        run.stdout.contains(shown) || run.stderr.contains(shown),
        "{run:?}"
    );
}

/// BAPCtools' pseudointeraction shape: the validator writes the whole
/// case, closes its output and waits for the answer; `accepted/eof.py`
/// reads its input to the end, then answers.
fn pseudo() -> String {
    fixture("interactive/pseudo")
}

/// `referee interactive --timeout 1s ARGS`, then the same under
/// `--sandbox`, where the pipes' ends pass through bubblewrap: both runs,
/// each checked to pass.
fn with_and_without_sandbox(args: &[&str]) -> Vec<Run> {
    common::need_bwrap();
    [&[][..], &["--sandbox"][..]]
        .iter()
        .map(|sandbox| {
            let all = [&["interactive", "--timeout", "1s"][..], sandbox, args].concat();
            let run = run(&all);
            assert_eq!(run.code, Some(0), "{sandbox:?}: {run:?}");
            run
        })
        .collect()
}

#[test]
fn a_validator_that_closes_its_output_and_waits_ends_the_programs_input() {
    // Before, the referee kept the program's input open once the
    // validator's output had ended: the program waited for an end of file
    // that never came, and got TIME LIMIT at the wall-clock cap.
    let (package, eof) = (
        pseudo(),
        format!("{}/submissions/accepted/eof.py", pseudo()),
    );
    for run in with_and_without_sandbox(&[&package, &eof]) {
        for case in ["sample/1", "secret/1"] {
            assert_line_has(&run, case, "ACCEPTED");
        }
    }
    // An answer given before the input ends is read and judged.
    let first = format!("{}/submissions/wrong_answer/first.py", pseudo());
    let run = run(&["interactive", "--timeout", "1s", &pseudo(), &first]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_line_has(&run, "sample/1", "WRONG ANSWER: expected 6, got 3");
}

#[test]
fn a_package_whose_validator_closes_its_output_checks_out_whole() {
    let run = run(&["interactive", "--timeout", "1s", &pseudo()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stdout, "2 of 2 submissions got their folder's verdict");
}

#[test]
fn a_program_that_closes_its_output_and_waits_ends_the_validators_input() {
    // The other way round: the validator reads its input to the end
    // before it rules, and the program, its answer written, closes its
    // output and waits for its own input to end.
    let dir = tempfile::tempdir().unwrap();
    let package = package(
        dir.path(),
        &["1\n"],
        "#!/bin/sh\ngot=$(cat)\n[ \"$got\" = 6 ] && exit 42\nexit 43\n",
    );
    let package = package.to_str().unwrap();
    let program = ["sh", "-c", "echo 6; exec >&-; cat >/dev/null"];
    for run in with_and_without_sandbox(&[&[package][..], &program].concat()) {
        assert_line_has(&run, "sample/1", "ACCEPTED");
    }
}

#[test]
fn each_pass_of_a_multi_pass_problem_ends_the_programs_input_when_the_validator_closes_its_output()
{
    // The same relay runs every pass: a validator that writes its pass's
    // number, closes its output and waits for it back, twice.
    let (_dir, package) = temp_path("multi");
    std::fs::create_dir_all(package.join("data/secret")).unwrap();
    std::fs::create_dir_all(package.join("output_validator")).unwrap();
    write_file(
        &package,
        "problem.yaml",
        "problem_format_version: 2023-07-draft\ntype: [interactive, multi-pass]\n",
    );
    write_file(&package, "data/secret/1.in", "1\n");
    write_file(&package, "data/secret/1.ans", "");
    script(
        &package.join("output_validator/run"),
        "#!/bin/sh\nn=$(cat \"$1\")\necho \"$n\"\nexec >&-\nread got\n\
         [ \"$got\" = \"$n\" ] || exit 43\n\
         [ \"$n\" = 1 ] && echo 2 > \"$3/nextpass.in\"\nexit 42\n",
    );
    let program = [package.to_str().unwrap(), "sh", "-c", "echo $(cat)"];
    for run in with_and_without_sandbox(&program) {
        let verdict = line(&run, "secret/1");
        assert!(
            verdict.starts_with("secret/1: ACCEPTED (2 passes, "),
            "{verdict}"
        );
    }
}

/// A copy of the pseudointeraction package, at `DIR/pseudo`, with the
/// files `extra` added (`.timelimit`, say).
fn pseudo_with(extra: &[(&str, &str)]) -> (tempfile::TempDir, String) {
    let (dir, package) = temp_path("pseudo");
    let copied = std::process::Command::new("cp")
        .args(["-r", &pseudo()])
        .arg(&package)
        .status()
        .unwrap();
    assert!(copied.success());
    for (name, text) in extra {
        write_file(&package, name, text);
    }
    let package = package.to_str().unwrap().to_owned();
    (dir, package)
}

/// The first line of `run`'s output.
fn first_line(run: &Run) -> &str {
    run.stdout.lines().next().unwrap_or_default()
}

#[test]
fn a_domjudge_limit_checked_whole_gives_both_limits_and_verifyproblems_way_on_the_first_line() {
    // boolfind's shape: DOMjudge's .timelimit, which verifyproblem does not
    // read (it derives the limit from the accepted submissions). Before,
    // the first line gave the limit but neither the higher one every
    // submission runs under nor how verifyproblem's limit differs.
    let (_dir, package) = pseudo_with(&[(".timelimit", "5\n")]);
    let run = run(&["interactive", &package]);
    assert_eq!(run.code, Some(0), "{run:?}");
    for said in [
        "5s of CPU time per case (.timelimit), wall clock 10s",
        "; submissions run under 10s of CPU time (times 2, the default of \
         limits.time_safety_margin), wall clock 20s, their verdicts read at 5s first",
        "; verifyproblem reads no .timelimit: --time-limit-from accepted sets the limit as it does",
    ] {
        assert!(first_line(&run).contains(said), "{said:?} in {run:?}");
    }
}

#[test]
fn time_limit_from_accepted_sets_verifyproblems_limit_over_the_packages_and_says_so_first() {
    let (_dir, package) = pseudo_with(&[(".timelimit", "5\n")]);
    let run = run(&["interactive", "--time-limit-from", "accepted", &package]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        first_line(&run).contains(
            "the accepted submissions set the time limit (--time-limit-from accepted), \
             not the package's 5s (.timelimit), as verifyproblem does: their slowest \
             case's CPU time times 5 (the default of limits.time_multiplier), rounded up \
             to a whole second (they run under 10s meanwhile)"
        ),
        "{run:?}"
    );
    // Once the accepted submissions have run: the limit they set, not the
    // package's.
    let limit = run
        .stdout
        .lines()
        .find(|l| l.contains(" of CPU time per case "))
        .unwrap_or_else(|| panic!("no limit line: {run:?}"));
    assert!(
        limit.contains(" of CPU time per case (the slowest accepted case, ")
            && limit.contains("times 5, rounded up to a second, --time-limit-from accepted)")
            && !limit.contains("5s of CPU time per case"),
        "{limit}"
    );
    // It derives from the package's own submissions: not with a PROGRAM,
    // and not beside --timeout.
    let eof = format!("{package}/submissions/accepted/eof.py");
    for (args, said) in [
        (vec![package.as_str(), eof.as_str()], "give no PROGRAM"),
        (
            vec!["--timeout", "1s", package.as_str()],
            "--timeout sets the time limit too",
        ),
    ] {
        let mut all = vec!["interactive", "--time-limit-from", "accepted"];
        all.extend(args);
        let refused = self::run(&all);
        assert_eq!(refused.code, Some(64), "{refused:?}");
        assert!(
            refused.stderr.contains("--time-limit-from accepted: ")
                && refused.stderr.contains(said),
            "{refused:?}"
        );
    }
}

#[test]
fn a_derived_time_limit_gives_its_rule_on_the_first_line() {
    // Before, the first line said only that the accepted submissions set
    // the limit: the rule came after them, with the limit.
    let run = run(&["interactive", &pseudo()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        first_line(&run).contains(
            "(2 test cases): no explicit time limit; the accepted submissions set it, as \
             verifyproblem does: their slowest case's CPU time times 5 (the default of \
             limits.time_multiplier), rounded up to a whole second (they run under 10s \
             meanwhile); memory 2 GiB (the default)"
        ),
        "{run:?}"
    );
}

/// A copy of the fixture `guess-checked` (Kattis's guess in shape: inputs
/// `fixed N`, an input validator, one accepted submission), with `files`
/// written into it, to change.
fn checked_guess(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(format!("{}/.", fixture("interactive/guess-checked")))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    dir
}

/// Issue 52, failure 1: a copy of guess whose `secret/01.in` reads
/// `fixed 0500` was judged `accepted/guess.py: ACCEPTED`, exit 0; the
/// input validator, which rejects it, was never run.
#[test]
fn an_input_its_validator_rejects_stops_the_run_before_any_program() {
    let package = checked_guess(&[("data/secret/01.in", "fixed 0500\n")]);
    let problem = package.path().to_str().unwrap();
    let accepted = format!("{problem}/submissions/accepted/guess.py");
    for args in [vec![problem], vec![problem, accepted.as_str()]] {
        let mut all = vec!["interactive"];
        all.extend(&args);
        let run = run(&all);
        assert_eq!(run.code, Some(1), "{run:?}");
        assert!(
            run.stderr.contains(
                "input validator validate.py did not accept data/secret/01.in (secret/01): \
                 it exited with status 1"
            ) && run
                .stderr
                .contains("| AssertionError: not `fixed N`: 'fixed 0500\\n'"),
            "{}",
            run.stderr
        );
        assert_has(
            &run.stderr,
            "1 of 3 test inputs rejected by the input validator",
        );
        // Nothing was judged.
        assert!(!run.stdout.contains("ACCEPTED"), "{run:?}");
    }
    // Skipped on request, and said first.
    let run = run(&["interactive", "--no-input-validation", problem]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_starts(
        &run.stdout,
        "interactive: input validators not run (--no-input-validation)\n",
    );
    assert_line_has(&run, "accepted/guess.py", "ACCEPTED, as expected");
}

#[test]
fn input_validator_flags_of_a_group_reach_its_subgroups_in_both_formats() {
    for testdata in [
        "input_validator_flags: --max 600\n",
        "input_validator_args:\n  validate: [--max, '600']\n",
    ] {
        let package = checked_guess(&[
            ("data/secret/testdata.yaml", testdata),
            ("data/secret/group/3.in", "fixed 700\n"),
            ("data/secret/group/3.ans", ""),
            ("data/sample/2.in", "fixed 700\n"),
            ("data/sample/2.ans", ""),
        ]);
        let run = run(&["interactive", package.path().to_str().unwrap()]);
        assert_eq!(run.code, Some(1), "{testdata}: {run:?}");
        for input in ["data/secret/02.in", "data/secret/group/3.in"] {
            assert!(
                run.stderr.contains(&format!("did not accept {input}"))
                    && run.stderr.contains("AssertionError: N is over 600"),
                "{testdata}: {}",
                run.stderr
            );
        }
        // sample/ has no flags: 700 is within the default 1000.
        assert!(
            !run.stderr.contains("data/sample/2.in"),
            "{testdata}: {}",
            run.stderr
        );
        assert_has(&run.stderr, "2 of 5 test inputs rejected");
    }
}

#[test]
fn a_package_without_an_input_validator_is_warned_of_and_fails_under_strict() {
    let package = checked_guess(&[]);
    std::fs::remove_dir_all(package.path().join("input_validators")).unwrap();
    let problem = package.path().to_str().unwrap();
    let warned = run(&["interactive", problem]);
    assert_eq!(warned.code, Some(0), "{warned:?}");
    assert_has(&warned.stderr, "warning: {problem}: no input validator (input_validators/): the test inputs are not checked"
                .replace("{problem}", problem)
                .as_str());
    let strict = run(&["interactive", "--strict", problem]);
    assert_eq!(strict.code, Some(1), "{strict:?}");
    assert!(!strict.stdout.contains("ACCEPTED"), "{strict:?}");
    // A package whose inputs pass says so.
    let checked = run(&["interactive", checked_guess(&[]).path().to_str().unwrap()]);
    assert_eq!(checked.code, Some(0), "{checked:?}");
    assert!(
        checked.stdout.starts_with(
            "interactive: 3 test inputs accepted by the input validator (validate.py)\n"
        ),
        "{}",
        checked.stdout
    );
}

/// Issue 52, failure 2: BAPCtools' `guess_fill_pipe.cc.disabled` and a
/// Prolog `.plg` each gave `not judged: ... neither a source file of a
/// known language ... nor executable`, exit 1.
#[test]
fn disabled_files_are_skipped_and_unknown_languages_only_warned_of_unless_strict() {
    let package = checked_guess(&[
        (
            "submissions/accepted/guess_fill_pipe.cc.disabled",
            "int main() { for (;;) putchar('1'); }\n",
        ),
        (
            "submissions/accepted/multi.java.disabled/Main.java",
            "class Main {}\n",
        ),
        (
            "submissions/accepted/guess.plg",
            ":- initialization(main).\nmain :- halt.\n",
        ),
    ]);
    let problem = package.path().to_str().unwrap();
    let run_it = |strict: bool| {
        let mut args = vec!["interactive"];
        if strict {
            args.push("--strict");
        }
        args.push(problem);
        run(&args)
    };
    let lenient = run_it(false);
    assert_eq!(lenient.code, Some(0), "{lenient:?}");
    assert_has(
        &lenient.stderr,
        "note: disabled, not judged: accepted/guess_fill_pipe.cc.disabled, \
             accepted/multi.java.disabled",
    );
    assert!(
        lenient
            .stderr
            .contains("warning: neither a source file of a known language")
            && lenient.stderr.contains("not judged: accepted/guess.plg"),
        "{}",
        lenient.stderr
    );
    assert_lacks(&lenient.stdout, ".disabled");
    assert_lacks(&lenient.stdout, "guess.plg");
    assert!(
        lenient
            .stdout
            .contains("1 of 1 submissions got their folder's verdict"),
        "{}",
        lenient.stdout
    );
    let strict = run_it(true);
    assert_eq!(strict.code, Some(1), "{strict:?}");
    assert_line_has(&strict, "accepted/guess.plg", "not judged: ");
    assert_lacks(&strict.stdout, ".disabled");
}

/// Issue 52, failure 3: DOMjudge's `@EXPECTED_RESULTS@:` tags were not
/// read; `mixed/` submissions were shown "not checked" and passed.
#[test]
fn expected_results_tags_are_checked_and_win_over_their_folder_as_in_domjudge() {
    let binary = std::fs::read_to_string(fixture(
        "interactive/guess-checked/submissions/accepted/guess.py",
    ))
    .unwrap();
    let tagged = |tag: &str| format!("# @EXPECTED_RESULTS@: {tag}\n{binary}");
    let package = checked_guess(&[
        // Guesses 500 only: right on secret/01, wrong on the sample.
        (
            "submissions/mixed/lucky.py",
            "# @expected_results@: CORRECT, WRONG-ANSWER\nprint(500, flush=True)\ninput()\n",
        ),
        (
            "submissions/mixed/mislabelled.py",
            &tagged("TIMELIMIT, RUN-ERROR"),
        ),
        ("submissions/mixed/untagged.py", &binary),
        ("submissions/mixed/typo.py", &tagged("CORRECT, ACCEPTD")),
        // The tag leaves out its folder's verdict: the tag decides.
        (
            "submissions/wrong_answer/right_after_all.py",
            &tagged("ACCEPTED"),
        ),
        (
            "submissions/mixed/broken.c",
            "// @EXPECTED_RESULTS@: COMPILER-ERROR\nint main(void) { return x; }\n",
        ),
    ]);
    let problem = package.path().to_str().unwrap();
    let junit = package.path().join("junit.xml");
    let run = run(&["interactive", "--junit", junit.to_str().unwrap(), problem]);
    assert_eq!(run.code, Some(1), "{run:?}");
    for (submission, ending) in [
        (
            "mixed/lucky.py",
            "WRONG ANSWER: the output ended after 1 guesses",
        ),
        ("mixed/broken.c", "compile error"),
        ("wrong_answer/right_after_all.py", "ACCEPTED, as expected"),
    ] {
        let line = line(&run, submission);
        assert!(
            line.contains(ending) && line.contains("as expected"),
            "{submission}: {}",
            run.stdout
        );
    }
    assert_line_ends(
        &run,
        "mixed/mislabelled.py",
        "ACCEPTED, but its @EXPECTED_RESULTS@ tag (TIMELIMIT, RUN-ERROR) expects otherwise",
    );
    assert!(
        line(&run, "mixed/typo.py").ends_with(
            "ACCEPTED, but its @EXPECTED_RESULTS@ tag cannot be read: typo.py: \
             `ACCEPTD` is not a verdict (CORRECT, WRONG-ANSWER, NO-OUTPUT, TIMELIMIT, \
             RUN-ERROR, MEMORY-LIMIT, COMPILER-ERROR, or their package-format names: \
             ACCEPTED, WRONG_ANSWER, ...)"
        ),
        "{}",
        run.stdout
    );
    assert_line_ends(
        &run,
        "mixed/untagged.py",
        "(folder mixed, no @EXPECTED_RESULTS@ tag: not checked)",
    );
    assert_has(
        &run.stderr,
        "warning: wrong_answer/right_after_all.py: its @EXPECTED_RESULTS@ tag (CORRECT) \
             leaves out its folder's verdict (wrong_answer); the tag decides, as in DOMjudge",
    );
    assert_has(
        &run.stdout,
        "interactive: 5 of 7 submissions got their expected verdict",
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
    assert_has(&xml, "expected TIMELIMIT, RUN-ERROR, got ACCEPTED");
}
