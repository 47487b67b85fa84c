//! Fair clocks (issue 19, item 5): a move's clock starts before the
//! message to the bot is written, so a bot is never charged less than the
//! time it took, however busy the machine; and a run that may have more
//! bots running than there are CPUs says so, once.
//!
//! The players of `fixtures/fair-clocks` all move at once each round, and
//! each spins for a fixed wall-clock time that it measures itself, from
//! just after its read to just before its reply. Five of them on a
//! two-CPU machine compete for the CPUs with each other and with the
//! referee: with the clock started after the write returned (the old
//! code), the referee, preempted between the write and reading the time,
//! recorded some 20 ms moves at 10 to 19 ms, now and then at 6 ms or at
//! 33 µs: one to eight of the 200 moves of the first test, in each of 8
//! runs of this file on two CPUs (with 10 rounds instead of 20, one run
//! in five passed).

mod common;

use std::path::Path;

use common::{fixture, referee};
use serde_json::Value;

/// The number of busy players: more than the 2 CPUs of the machine the
/// tests were written on.
const PLAYERS: usize = 5;

fn fair(name: &str) -> String {
    fixture(&format!("fair-clocks/{name}"))
}

fn records(path: &Path) -> Vec<Value> {
    common::jsonl(path)
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How many lines of `stderr` are the warning about bots and CPUs.
fn warnings(stderr: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.contains("warning: up to") && l.contains("bot processes may run at once"))
        .count()
}

/// Plays `referee play GAME` with [`PLAYERS`] busy bots; the records and
/// the run's standard error.
fn play(game: &str, extra: &[&str]) -> (Vec<Value>, String) {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    let mut args = vec!["--no-fsync", "play", "--seed", "1", "--results"];
    args.push(results.to_str().unwrap());
    args.extend(extra);
    let game = fair(game);
    args.push(&game);
    let bot = fair("busy.py");
    args.extend([bot.as_str(); PLAYERS]);
    let run = referee(args, b"");
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    (records(&results), run.stderr)
}

/// Every move of a bot that spins 20 ms is recorded at 20 ms or more:
/// the referee's clock covers the bot's own, whoever else wants the CPU.
#[test]
fn a_20ms_move_is_never_recorded_under_20ms() {
    let (records, stderr) = play("busy20.toml", &["--games", "2", "--timeout", "2s"]);
    assert_eq!(records.len(), 2);
    let mut short = vec![];
    for record in &records {
        for player in record["players"].as_array().unwrap() {
            assert_eq!(player["status"], "ok", "{record}");
            let micros = player["micros"].as_array().unwrap();
            assert_eq!(micros.len(), 20, "{record}");
            // Each move's CPU time beside its wall time: a bot that spins
            // uses some, however many share the CPUs (under a heavy load,
            // under a millisecond of its 20).
            let cpu = player["move_cpu_micros"].as_array().unwrap();
            assert_eq!(cpu.len(), 20, "{record}");
            assert!(cpu.iter().all(|c| c.as_u64().unwrap() > 0), "{record}");
            short.extend(
                micros
                    .iter()
                    .map(|m| m.as_u64().unwrap())
                    .filter(|&m| m < 20_000),
            );
        }
    }
    assert!(short.is_empty(), "moves recorded under 20 ms: {short:?}");
    // Five bots on fewer CPUs: `referee play` says so, once.
    let expected = usize::from(PLAYERS > cpus());
    assert_eq!(warnings(&stderr), expected, "{stderr}");
}

/// A bot that spins 30 ms under a 25 ms limit is never accepted with a
/// time under its own: each move is a timeout or, when the referee itself
/// waited for a CPU past the deadline, a move recorded at 30 ms or more:
/// a reply found in the pipe wins over a deadline that passed meanwhile
/// (docs/bots.md, "The time model"), as the referee cannot tell when it
/// arrived.
#[test]
fn a_30ms_move_under_a_25ms_limit_is_never_accepted_as_faster() {
    let (records, _) = play("busy30.toml", &["--games", "3", "--timeout", "25ms"]);
    assert_eq!(records.len(), 3);
    for record in &records {
        for player in record["players"].as_array().unwrap() {
            let micros = player["micros"].as_array().unwrap();
            assert_eq!(micros.len(), 1, "{record}");
            let micros = micros[0].as_u64().unwrap();
            if player["status"] == "timeout" {
                assert_eq!(player["phase"], "move", "{record}");
            } else {
                assert_eq!(player["status"], "ok", "{record}");
                assert!(micros >= 30_000, "accepted at {micros} µs: {record}");
            }
        }
    }
}

/// A tournament of a one-player game with more jobs than CPUs warns once;
/// with `--jobs 1` it does not.
#[test]
fn a_tournament_with_more_jobs_than_cpus_warns_once() {
    let cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("t.toml");
    let jobs = cpus + 1;
    std::fs::write(
        &spec,
        format!(
            "game = \"{}\"\ngames = {jobs}\nseed = 1\n[[entrant]]\nname = \"busy\"\ncommand = [\"{}\"]\n",
            fair("solo.toml"),
            fair("busy.py")
        ),
    )
    .unwrap();
    let tournament = |jobs: usize| {
        let run = referee(
            [
                "tournament",
                spec.to_str().unwrap(),
                "--jobs",
                &jobs.to_string(),
                "--no-progress",
            ],
            b"",
        );
        assert_eq!(run.code, Some(0), "{run:?}");
        run.stderr
    };
    let alone = tournament(1);
    assert_eq!(warnings(&alone), 0, "{alone}");
    // A machine with many CPUs would start many bots to show it.
    if cpus <= 8 {
        let crowded = tournament(jobs);
        assert_eq!(warnings(&crowded), 1, "{crowded}");
        let expected = format!(
            "referee tournament: warning: up to {jobs} bot processes may run at once on {cpus} CPU"
        );
        assert!(crowded.contains(&expected), "{crowded}");
        assert!(
            crowded.contains(&format!("(--jobs {jobs} × 1 seat)")),
            "{crowded}"
        );
    }
}

/// A ci suite whose two cases each have more jobs than CPUs warns once
/// for the run.
#[test]
fn a_ci_suite_warns_once_for_all_its_cases() {
    let cpus = cpus();
    if cpus > 8 {
        return;
    }
    let jobs = cpus + 1;
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.toml");
    let case = |name: &str| {
        format!(
            "[[case]]\nname = \"{name}\"\ngame = \"{}\"\ncommand = [\"{}\"]\ngames = {jobs}\njobs = {jobs}\n[case.expect]\nno_crash = true\n",
            fair("solo.toml"),
            fair("busy.py")
        )
    };
    std::fs::write(&suite, case("one") + &case("two")).unwrap();
    let run = referee(["ci", suite.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(warnings(&run.stderr), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("referee ci: warning:"),
        "{}",
        run.stderr
    );
}
