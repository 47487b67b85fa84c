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

use common::{assert_has, fixture, referee, referee_ok, temp_path, write_file};
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
    let (_dir, results) = temp_path("r.jsonl");
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

/// A bot that spins 30 ms under a 25 ms limit is never accepted: each
/// move is a timeout, recorded at its limit or more, however late the
/// referee, waiting for a CPU, read the reply (docs/bots.md, "The time
/// model").
#[test]
fn a_30ms_move_under_a_25ms_limit_is_a_timeout() {
    let (records, _) = play("busy30.toml", &["--games", "3", "--timeout", "25ms"]);
    assert_eq!(records.len(), 3);
    for record in &records {
        for player in record["players"].as_array().unwrap() {
            assert_move_timed_out(player, 25_000, "move");
        }
    }
}

/// Checks a player's one move after its start-up reply: a timeout of
/// `phase`, recorded at `limit` µs or more.
fn assert_move_timed_out(player: &Value, limit: u64, phase: &str) {
    assert_eq!(player["status"], "timeout", "{player}");
    assert_eq!(player["phase"], phase, "{player}");
    let micros = player["micros"].as_array().unwrap();
    assert_eq!(micros.len(), 1, "{player}");
    let micros = micros[0].as_u64().unwrap();
    assert!(
        micros >= limit,
        "a timeout recorded at {micros} µs: {player}"
    );
}

/// Plays one game of the fair-clocks judge with one `stall.py` player,
/// reading its moves as `read` (`line` or `byte`), with `options` for the
/// judge; the player's result.
fn play_stalled(read: &str, options: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let game = write_file(
        dir.path(),
        "late.toml",
        format!(
            "name = \"late\"\njudge = [\"python3\", \"{}\"]\nplayers = {{ min = 1, max = 1 }}\n\
             read = \"{read}\"\n[options]\nrounds = 1\n{options}\n",
            fair("judge.py")
        ),
    );
    let results = dir.path().join("r.jsonl");
    let mut args = vec!["--no-fsync", "play", "--seed", "1", "--results"];
    args.push(results.to_str().unwrap());
    args.extend(extra);
    args.push(game.to_str().unwrap());
    let bot = fair("stall.py");
    args.push(&bot);
    let run = referee(args, b"");
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let records = records(&results);
    assert_eq!(records.len(), 1);
    records[0]["players"][0].clone()
}

/// A reply that was waiting in the pipe when the referee came to read it,
/// after its deadline, is a timeout, not a move recorded over its limit.
/// The judge sends the move, waits 300 ms, then asks: the bot answered at
/// once, but its clock ran from the send (docs/judge-protocol.md), so the
/// reply is read 300 ms on, under a 150 ms limit, without a wait.
#[test]
fn a_reply_waiting_in_the_pipe_past_its_deadline_is_a_timeout() {
    for read in ["line", "byte"] {
        let player = play_stalled(read, "busy_ms = 0\npause_ms = 300", &["--timeout", "150ms"]);
        // The judge's 300 ms start as it writes `send`, a little before the
        // referee's write to the bot starts the clock (299,883 µs was seen):
        // well past the limit, not necessarily past 300 ms.
        assert_move_timed_out(&player, 250_000, "move");
    }
}

/// A reply that arrives in time while the referee cannot run, and is read
/// only after the deadline, is a timeout: the bot stops the referee
/// (SIGSTOP) while it waits, replies, and lets it go on 300 ms later, when
/// the reply and the expired deadline are both there at once.
#[test]
fn a_reply_read_late_by_a_stalled_referee_is_a_timeout() {
    for read in ["line", "byte"] {
        let player = play_stalled(read, "busy_ms = 300", &["--timeout", "150ms"]);
        assert_move_timed_out(&player, 300_000, "move");
    }
    // The same under a time control: the clock ran out.
    let player = play_stalled(
        "line",
        "busy_ms = 300",
        &["--timeout", "10s", "--time-control", "150ms+0s"],
    );
    assert_move_timed_out(&player, 150_000, "clock");
}

/// A tournament of a one-player game with more jobs than CPUs warns once;
/// with `--jobs 1` it does not.
#[test]
fn a_tournament_with_more_jobs_than_cpus_warns_once() {
    let cpus = cpus();
    let (_dir, spec) = temp_path("t.toml");
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
        let run = referee_ok([
            "tournament",
            spec.to_str().unwrap(),
            "--jobs",
            &jobs.to_string(),
            "--no-progress",
        ]);
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
        assert_has(&crowded, &expected);
        assert_has(&crowded, &format!("(--jobs {jobs} × 1 seat)"));
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
    let (_dir, suite) = temp_path("suite.toml");
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
    assert_has(&run.stderr, "referee ci: warning:");
}
