//! The hostile-bot zoo (`tests/fixtures/zoo/`) against every referee: each
//! misbehaviour gets its documented classification, within a bounded time,
//! with no panic, a record written, and (checked by the helpers) no process
//! left behind. `docs/containment.md` has the table this checks. Every row
//! runs again under `--sandbox` (module `sandboxed`), expecting the same.

mod common;

use std::cell::Cell;
use std::time::Duration;

use common::{Run, assert_has, fixture, referee_with, write_file};
use serde_json::Value;

const SAMPLE: &[u8] = b"4 876390176\n4 653723903\n";
const SAMPLE_OUTPUT: &str = "Game 1\nYOU LOSE NECESSARILY\nGame 2\nYOU WIN\n";
/// No zoo run may take longer than this (every limit used here is short).
const BOUND: Duration = Duration::from_secs(20);

fn zoo(name: &str) -> String {
    fixture(&format!("zoo/{name}"))
}

fn bin(name: &str) -> &'static str {
    match name {
        "evensteven" => env!("CARGO_BIN_EXE_evensteven"),
        "chomp-greedy" => env!("CARGO_BIN_EXE_chomp-greedy"),
        "septica-editorial" => env!("CARGO_BIN_EXE_septica-editorial"),
        "acesup" => env!("CARGO_BIN_EXE_acesup"),
        _ => unreachable!(),
    }
}

/// One zoo animal: its script, the well-behaved bot it wraps (if any), and
/// extra environment for it (given with `--env`).
struct Animal<'a> {
    script: &'a str,
    wraps: bool,
    env: Vec<(&'a str, &'a str)>,
}

fn animal(script: &str) -> Animal<'_> {
    Animal {
        script,
        wraps: false,
        env: vec![],
    }
}

fn wrapping(script: &str) -> Animal<'_> {
    Animal {
        script,
        wraps: true,
        env: vec![],
    }
}

impl<'a> Animal<'a> {
    fn with(mut self, key: &'a str, value: &'a str) -> Animal<'a> {
        self.env.push((key, value));
        self
    }

    /// The command line: the script, then the wrapped bot.
    fn command(&self, bot: &str) -> Vec<String> {
        let mut words = vec![zoo(self.script)];
        if self.wraps {
            words.push(bin(bot).to_owned());
        }
        words
    }
}

thread_local! {
    /// Whether this test's runs are under `--sandbox` (set by the
    /// `sandboxed` twin of a row; each test has a thread of its own).
    static SANDBOX: Cell<bool> = const { Cell::new(false) };
    /// Whether this test's bots share the CPU with hundreds of their own
    /// processes, so that a short limit would test the machine's load.
    static CROWDED: Cell<bool> = const { Cell::new(false) };
}

/// A time limit of the zoo: `short`, or seconds for a crowded row.
fn roomy(short: &'static str) -> &'static str {
    if CROWDED.get() { "3s" } else { short }
}

/// Runs `referee` in a scratch directory (a huge file must not land in the
/// source tree), under `--sandbox` for a sandboxed row, and checks the time
/// bound.
fn run(mut args: Vec<String>, input: &[u8], env: &[(&str, &str)]) -> Run {
    let mut shown = vec![];
    if SANDBOX.get() {
        args.insert(1, "--sandbox".to_owned());
        // The animals, which each row's program runs by their paths here,
        // shown as a course's tools would be (beside the test's programs
        // that `env_args` shows: one occurrence of the option per level).
        shown = ["--sandbox-show".to_owned(), fixture("zoo")].to_vec();
    }
    let scratch = tempfile::tempdir().unwrap();
    let args: Vec<String> = common::env_args(env)
        .into_iter()
        .chain(shown)
        .chain(args)
        .collect();
    let run = referee_with(&args, input, &[], Some(scratch.path()));
    assert!(run.elapsed < BOUND, "{args:?} took {:?}", run.elapsed);
    run
}

fn dealer(a: &Animal, opts: &[&str]) -> Run {
    dealer_within(a, roomy("300ms"), opts)
}

fn dealer_within(a: &Animal, timeout: &str, opts: &[&str]) -> Run {
    let mut args: Vec<String> = [
        "dealer",
        "--timeout",
        timeout,
        "--startup",
        "0s",
        "--grace",
        roomy("300ms"),
        "--limit-file-size",
        "10MiB",
    ]
    .iter()
    .chain(opts)
    .map(|s| s.to_string())
    .collect();
    args.extend(a.command("evensteven"));
    run(args, SAMPLE, &a.env)
}

fn septica(a: &Animal) -> Run {
    septica_with(a, &[])
}

fn septica_with(a: &Animal, opts: &[&str]) -> Run {
    let timeout = if opts.contains(&"--limit-memory") {
        "5s"
    } else {
        roomy("300ms")
    };
    let mut args: Vec<String> = [
        "septica",
        "--timeout",
        timeout,
        "--startup",
        "0s",
        "--grace",
        roomy("300ms"),
        "--matches",
        "3",
        "--need",
        "0",
        "--seed",
        "1",
        "--limit-file-size",
        "10MiB",
    ]
    .iter()
    .chain(opts)
    .map(|s| s.to_string())
    .collect();
    args.extend(a.command("septica-editorial"));
    run(args, b"", &a.env)
}

fn acesup(a: &Animal) -> Run {
    acesup_with(a, &[])
}

fn acesup_with(a: &Animal, opts: &[&str]) -> Run {
    let mut args: Vec<String> = [
        "acesup",
        "--timeout",
        roomy("1s"),
        "--random",
        "2",
        "--seed",
        "1",
        "--limit-file-size",
        "10MiB",
    ]
    .iter()
    .chain(opts)
    .map(|s| s.to_string())
    .collect();
    args.extend(a.command("acesup"));
    run(args, b"", &a.env)
}

/// A Chomp game between the animal (player 1, its own directory) and a
/// greedy bot; returns the run and the animal's record.
fn chomp(a: &Animal) -> (Run, Value) {
    chomp_with(a, &[])
}

fn chomp_with(a: &Animal, opts: &[&str]) -> (Run, Value) {
    let area = tempfile::tempdir().unwrap();
    let array = write_file(
        area.path(),
        "a.txt",
        "ABCDEFGHIJ\nKLMNOPQRST\nUVWXYZTHIS\nISNOTATEST\nITISASQUID\n",
    );
    let mut dirs = vec![];
    for (name, words) in [
        ("animal", a.command("chomp-greedy")),
        ("greedy", vec![bin("chomp-greedy").to_owned()]),
    ] {
        let dir = area.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let pc2 = write_file(
            &dir,
            "pc2",
            format!("#!/bin/sh\nexec {}\n", quoted.join(" ")),
        );
        std::fs::set_permissions(&pc2, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        dirs.push(dir.to_str().unwrap().to_owned());
    }
    let results = area.path().join("r.jsonl");
    // Filling memory is slow; other tests want a quick starvation.
    let starve = if opts.contains(&"--limit-memory") {
        "5s"
    } else {
        roomy("500ms")
    };
    let mut args: Vec<String> = [
        "chomp",
        "--prep",
        "0s",
        "--starve",
        starve,
        "--grace",
        roomy("300ms"),
        "--max-rounds",
        "30",
        "--start",
        "5",
        "3",
        "--limit-file-size",
        "10MiB",
        "--results",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(results.to_str().unwrap().to_owned());
    args.extend(opts.iter().map(|s| s.to_string()));
    args.push(array.to_str().unwrap().to_owned());
    args.extend(dirs);
    let run = run(args, b"", &a.env);
    assert_eq!(run.code, Some(0), "chomp always plays: {run:?}");
    let record = common::first_record(&results);
    (run, record["players"][0].clone())
}

/// Asserts exit status `code` and that stdout contains `says`.
fn expect(run: &Run, code: i32, says: &str) {
    assert_eq!(run.code, Some(code), "{run:?}");
    assert!(
        run.stdout.contains(says),
        "expected {says:?} in: {}",
        run.stdout
    );
}

fn chomp_status(a: &Animal, status: &str) {
    let (run, player) = chomp(a);
    assert_eq!(player["fate"], status, "{player}\n{run:?}");
}

#[test]
fn z01_never_reads() {
    let a = animal("never-reads.sh");
    expect(&dealer(&a, &[]), 3, "did not answer within 300ms");
    expect(&septica(&a), 3, "did not answer within 300ms");
    expect(&acesup(&a), 1, "deck 1: TIME LIMIT");
    chomp_status(&a, "starved");
}

#[test]
fn z02_endless_line() {
    let a = animal("endless-line.sh");
    expect(&dealer(&a, &[]), 2, "wrote a line longer than 65536 bytes");
    expect(&septica(&a), 2, "wrote a line longer than 65536 bytes");
    expect(
        &acesup(&a),
        1,
        "deck 1: WRONG ANSWER: the program wrote a line longer than 65536 bytes",
    );
    // Every byte is a move (`x` counts as C): it plays on.
    chomp_status(&a, "alive");
}

#[test]
fn z03_huge_line() {
    let a = animal("huge-line.sh");
    expect(&dealer(&a, &[]), 2, "wrote a line longer than 65536 bytes");
    expect(&septica(&a), 2, "wrote a line longer than 65536 bytes");
    expect(
        &acesup(&a),
        1,
        "WRONG ANSWER: the program wrote a line longer than 65536 bytes",
    );
    chomp_status(&a, "alive");
}

#[test]
fn z04_stderr_flood() {
    let a = wrapping("stderr-flood.sh");
    let run = dealer(&a, &[]);
    expect(&run, 0, SAMPLE_OUTPUT);
    expect(&septica(&a), 0, "ACCEPTED");
    expect(&acesup(&a), 0, "2 of 2 decks accepted");
    let (_, player) = chomp(&a);
    assert_eq!(player["fate"], "alive");
    let stderr = player["stderr"].as_str().unwrap();
    assert!(stderr.len() <= 64 * 1024 && stderr.contains("flooding stderr"));
}

#[test]
fn z05_closes_stdout() {
    let a = animal("closes-stdout.sh");
    expect(
        &dealer(&a, &[]),
        3,
        "closed its standard output but is still running",
    );
    expect(
        &septica(&a),
        3,
        "closed its standard output but is still running",
    );
    expect(&acesup(&a), 1, "deck 1: TIME LIMIT");
    chomp_status(&a, "crashed");
}

#[test]
fn z06_exits() {
    let a = animal("exits-at-once.sh");
    expect(&dealer(&a, &[]), 3, "the player exited with status 0");
    expect(&septica(&a), 3, "the player exited with status 0");
    expect(&acesup(&a), 1, "deck 1: WRONG ANSWER at line 1");
    chomp_status(&a, "crashed");

    let dealer_run = dealer(&wrapping("exits-mid-game.sh").with("ZOO_LINES", "3"), &[]);
    expect(
        &dealer_run,
        3,
        "game 1, move 3 (dealt 9s): program crashed: the player exited with status 3",
    );
    expect(
        &septica(&wrapping("exits-mid-game.sh").with("ZOO_LINES", "4")),
        3,
        "exited with status 3",
    );
    expect(
        &acesup(&wrapping("exits-mid-game.sh").with("ZOO_LINES", "10")),
        1,
        "RUNTIME ERROR: the program exited with status 3",
    );
    chomp_status(
        &wrapping("exits-mid-game.sh").with("ZOO_LINES", "13"),
        "crashed",
    );
}

#[test]
fn z07_dies_of_a_signal() {
    let lines = |n| wrapping("segfault-mid-game.sh").with("ZOO_LINES", n);
    expect(
        &dealer(&lines("3"), &[]),
        3,
        "was killed by signal 11 (SIGSEGV)",
    );
    expect(
        &septica(&lines("4")),
        3,
        "was killed by signal 11 (SIGSEGV)",
    );
    expect(
        &acesup(&lines("10")),
        1,
        "RUNTIME ERROR: the program was killed by signal 11 (SIGSEGV)",
    );
    let (_, player) = chomp(&lines("13"));
    assert_eq!(player["fate"], "crashed");
    assert!(
        player["error"].as_str().unwrap().contains("SIGSEGV"),
        "{player}"
    );
}

#[test]
fn z08_sleeps_for_ever() {
    let a = animal("sleeps-at-start.sh");
    expect(
        &dealer(&a, &[]),
        3,
        "game 1, move 1 (dealt 8c): timeout: the player did not answer within 300ms",
    );
    expect(&septica(&a), 3, "did not answer within 300ms");
    expect(&acesup(&a), 1, "deck 1: TIME LIMIT");
    chomp_status(&a, "starved");

    let mid = |n| wrapping("sleeps-mid-game.sh").with("ZOO_LINES", n);
    expect(
        &dealer(&mid("3"), &[]),
        3,
        "game 1, move 3 (dealt 9s): timeout: the player did not answer within 300ms",
    );
    expect(&septica(&mid("4")), 3, "did not answer within 300ms");
    expect(&acesup(&mid("10")), 1, "deck 1: TIME LIMIT");
    chomp_status(&mid("13"), "starved");
}

#[test]
fn z09_a_child_keeps_the_pipes_open() {
    let a = animal("forked-child-holds-pipes.sh");
    expect(&dealer(&a, &[]), 3, "the player exited with status 0");
    expect(&septica(&a), 3, "the player exited with status 0");
    expect(&acesup(&a), 1, "deck 1: WRONG ANSWER at line 1");
    chomp_status(&a, "crashed");
}

#[test]
fn z10_a_setsid_grandchild() {
    let a = wrapping("setsid-grandchild.sh");
    expect(&dealer(&a, &[]), 0, SAMPLE_OUTPUT);
    expect(&septica(&a), 0, "ACCEPTED");
    expect(&acesup(&a), 0, "2 of 2 decks accepted");
    chomp_status(&a, "alive");
}

#[test]
fn z11_a_fork_bomb() {
    // What is tested is what is left after the game, not how fast the bot
    // plays beside 511 starting processes on a busy machine.
    CROWDED.set(true);
    let a = wrapping("fork-bomb.sh");
    expect(&dealer(&a, &[]), 0, SAMPLE_OUTPUT);
    expect(&septica(&a), 0, "ACCEPTED");
    expect(&acesup(&a), 0, "2 of 2 decks accepted");
    chomp_status(&a, "alive");
}

#[test]
fn z12_memory_without_end() {
    // A small limit, so that hitting it is quick; still, filling even that
    // takes longer than the other tests' 300ms move limit. The limit is
    // on what the bot holds, so it is stopped by the kernel in its cgroup
    // (or the referee's memory watch without cgroups): status `limit`,
    // memory, not a failed allocation of its own.
    let a = animal("memory-hog.sh");
    let limit = ["--limit-memory", "256MiB"];
    let over = "256 MiB (--limit-memory)";
    expect(&dealer_within(&a, "5s", &limit), 3, over);
    expect(&septica_with(&a, &limit), 3, over);
    expect(&acesup_with(&a, &limit), 1, over);
    let (_, player) = chomp_with(&a, &limit);
    assert_eq!(player["fate"], "crashed", "{player}");
    assert_eq!(player["status"], "limit", "{player}");
    assert_eq!(player["limit"], "memory", "{player}");
}

#[test]
fn z13_a_huge_file() {
    let a = animal("huge-file.sh");
    // Under --sandbox its folder is read-only: the write fails at once,
    // and the script exits with 1 (the one row that differs: see
    // docs/containment.md, the zoo).
    let (dealer_says, acesup_says, cause) = if SANDBOX.get() {
        (
            "the player exited with status 1",
            "RUNTIME ERROR: the program exited with status 1",
            "status 1",
        )
    } else {
        (
            "was killed by signal 25 (SIGXFSZ): it exceeded its file size limit",
            "RUNTIME ERROR: the program was killed by signal 25 (SIGXFSZ)",
            "SIGXFSZ",
        )
    };
    expect(&dealer(&a, &[]), 3, dealer_says);
    expect(&septica(&a), 3, cause);
    expect(&acesup(&a), 1, acesup_says);
    let (_, player) = chomp(&a);
    assert_eq!(player["fate"], "crashed");
    assert!(
        player["error"].as_str().unwrap().contains(cause),
        "{player}"
    );
}

#[test]
fn z14_answers_before_it_is_asked() {
    let early = |burst| wrapping("answers-early.sh").with("ZOO_BURST", burst);
    expect(
        &dealer(&early("As\\nKs\\n"), &[]),
        2,
        "the player played As, which is not in its hand",
    );
    expect(
        &septica(&early("0\\n")),
        2,
        "the player sent \"0\": only the leader can end a trick",
    );
    expect(
        &acesup(&early("hello\\n")),
        1,
        "deck 1: WRONG ANSWER at line 1",
    );
    // Early bytes are simply the first moves.
    chomp_status(&early("NNNN"), "alive");
}

#[test]
fn z15_line_endings_and_bytes() {
    let crlf = wrapping("crlf.sh");
    expect(&dealer(&crlf, &[]), 0, SAMPLE_OUTPUT);
    expect(&septica(&crlf), 0, "ACCEPTED");
    expect(&acesup(&crlf), 0, "2 of 2 decks accepted");
    let bad = animal("invalid-utf8.sh");
    expect(
        &dealer(&bad, &[]),
        2,
        "wrote a line that is not valid UTF-8",
    );
    expect(&septica(&bad), 2, "wrote a line that is not valid UTF-8");
    expect(&acesup(&bad), 1, "deck 1: WRONG ANSWER at line 1");
    // In Chomp a byte that is no move is a C: two moves, then silence.
    let (_, player) = chomp(&bad);
    assert_eq!(
        (player["fate"].as_str(), player["moves"].as_u64()),
        (Some("starved"), Some(2))
    );
}

#[test]
fn z16_programs_that_cannot_run() {
    let missing = Animal {
        script: "no-such-program",
        wraps: false,
        env: vec![],
    };
    let not_executable = animal("not-executable.sh");
    for a in [&missing, &not_executable] {
        let run = dealer(a, &[]);
        assert_eq!(run.code, Some(64), "{run:?}");
        assert_has(&run.stderr, "cannot start the player");
        assert_eq!(septica(a).code, Some(64));
        let run = acesup(a);
        assert_eq!(run.code, Some(64), "{run:?}");
        assert_has(&run.stderr, "cannot start the program");
    }
    // Chomp: a missing or non-executable pc2, a failing or hanging build:
    // disqualified (tests/chomp.rs has those cases in full).
    let (_, player) = chomp(&missing);
    assert_eq!(player["fate"], "crashed", "{player}");
}

/// Each row again under `--sandbox`: the same verdicts, in about the same
/// time.
mod sandboxed {
    macro_rules! sandboxed {
        ($($row:ident),* $(,)?) => {$(
            #[test]
            fn $row() {
                super::common::need_bwrap();
                super::SANDBOX.set(true);
                super::$row();
            }
        )*};
    }

    sandboxed!(
        z01_never_reads,
        z02_endless_line,
        z03_huge_line,
        z04_stderr_flood,
        z05_closes_stdout,
        z06_exits,
        z07_dies_of_a_signal,
        z08_sleeps_for_ever,
        z09_a_child_keeps_the_pipes_open,
        z10_a_setsid_grandchild,
        z11_a_fork_bomb,
        z12_memory_without_end,
        z13_a_huge_file,
        z14_answers_before_it_is_asked,
        z15_line_endings_and_bytes,
        z16_programs_that_cannot_run,
    );
}
