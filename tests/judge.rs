//! External judges (`referee play`): the Python Even Steven judge agrees
//! with `referee dealer` game for game, and a failing judge is the
//! organiser's fault, never a bot's.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{
    Run, assert_has, assert_lacks, evensteven_bin, fixture, referee, referee_ok, referee_with,
    temp_path, write_file,
};
use serde_json::Value;

fn game_file() -> String {
    format!("{}/games/evensteven/game.toml", env!("CARGO_MANIFEST_DIR"))
}

fn judges(name: &str) -> String {
    fixture(&format!("judges/{name}"))
}

fn records(path: &Path) -> Vec<Value> {
    common::jsonl(path)
}

/// `referee play OPTIONS --results RESULTS GAME BOTS...`, the results in a
/// temporary folder: the run, and the records it wrote (none if it wrote
/// no file).
fn play(options: &[&str], game: &str, bots: &[&str]) -> (Run, Vec<Value>) {
    let (_dir, results) = temp_path("r.jsonl");
    let mut args = vec!["play"];
    args.extend(options);
    args.extend(["--results", results.to_str().unwrap(), game]);
    args.extend(bots);
    let run = referee(args, b"");
    let records = if results.exists() {
        records(&results)
    } else {
        vec![]
    };
    (run, records)
}

/// Plays 1,000 games through the external judge, then the same (N, seed)
/// pairs through `referee dealer`, and compares every game. Returns the
/// dealer's outcomes.
fn agree(player: &str) -> HashMap<String, usize> {
    let (dir, external) = temp_path("external.jsonl");
    let _run = referee_ok([
        "--no-fsync",
        "play",
        "--games",
        "1000",
        "--seed",
        "2026",
        "--results",
        external.to_str().unwrap(),
        &game_file(),
        player,
    ]);
    let external = records(&external);
    assert_eq!(external.len(), 1000);
    let mut input = String::new();
    for (i, record) in external.iter().enumerate() {
        assert_eq!(record["index"], i as u64 + 1);
        let summary = &record["summary"];
        input.push_str(&format!("{} {}\n", summary["n"], summary["seed"]));
    }
    let dealt = dir.path().join("dealer.jsonl");
    let run = referee(
        [
            "--no-fsync",
            "dealer",
            "--results",
            dealt.to_str().unwrap(),
            player,
        ],
        input.as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let dealt = records(&dealt);
    assert_eq!(dealt.len(), 1000);
    let mut outcomes = HashMap::new();
    for (ext, dealer) in external.iter().zip(&dealt) {
        let summary = &ext["summary"];
        let game = ext["index"].clone();
        assert_eq!(summary["outcome"], dealer["outcome"], "game {game}");
        assert_eq!(summary["hand"], dealer["hand"], "game {game}");
        assert_eq!(summary["deal"], dealer["deal"], "game {game}");
        assert_eq!(ext["players"][0]["status"], "ok", "game {game}");
        let score = if dealer["outcome"] == "win" { 1.0 } else { 0.0 };
        assert_eq!(ext["players"][0]["score"], score, "game {game}");
        *outcomes
            .entry(dealer["outcome"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    outcomes
}

#[test]
fn the_python_judge_agrees_with_the_dealer_on_1000_games() {
    let best = agree(evensteven_bin());
    assert!(best.contains_key("win") && !best.contains_key("lose_unnecessarily"));
    let weak = agree(&judges("in-order.sh"));
    assert!(weak["lose_unnecessarily"] > 0, "{weak:?}");
}

#[test]
fn frames_are_kept_with_record_moves_only() {
    let (dir, with) = temp_path("with.jsonl");
    let without = dir.path().join("without.jsonl");
    for (file, flag) in [(&with, Some("--record-moves")), (&without, None)] {
        let mut args = vec!["--no-fsync", "play", "--seed", "5", "--results"];
        args.push(file.to_str().unwrap());
        args.extend(flag);
        let game = game_file();
        args.extend([game.as_str(), evensteven_bin()]);
        let run = referee(args, b"");
        assert_eq!(run.code, Some(0), "{}", run.stderr);
    }
    let with = &records(&with)[0];
    assert!(with["frames"].as_array().unwrap().len() >= 2, "{with}");
    assert!(with["players"][0]["startup_micros"].is_u64());
    assert!(records(&without)[0].get("frames").is_none());
}

#[test]
fn a_judge_that_crashes_is_a_judge_error_and_no_bot_is_blamed() {
    let (run, records) = play(
        &["--games", "3"],
        &judges("crash.toml"),
        &[evensteven_bin(), evensteven_bin()],
    );
    assert_eq!(run.code, Some(70), "{}", run.stderr);
    assert_has(&run.stderr, "judge error");
    assert_has(&run.stderr, "cannot cope");
    // A void game gave no score: no seat's mean is printed as 0.
    assert_has(
        &run.stdout,
        "no game was judged: every game is void (its judge failed)",
    );
    assert_lacks(&run.stdout, "mean score");
    assert_eq!(records.len(), 1, "the run stops at the judge error");
    let error = &records[0]["judge_error"];
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("exited with status 3"),
        "{error}"
    );
    assert!(error["stderr"].as_str().unwrap().contains("cannot cope"));
    for player in records[0]["players"].as_array().unwrap() {
        assert_eq!(player["status"], "internal", "{player}");
        assert!(player.get("score").is_none());
    }
}

#[test]
fn a_judge_that_writes_garbage_is_a_judge_error() {
    let (run, records) = play(&[], &judges("garbage.toml"), &[evensteven_bin()]);
    assert_eq!(run.code, Some(70), "{}", run.stderr);
    let record = &records[0];
    let message = record["judge_error"]["message"].as_str().unwrap();
    assert!(
        message.contains("broke the protocol") && message.contains("hello, I am not JSON"),
        "{message}"
    );
    assert_eq!(record["players"][0]["status"], "internal");
}

#[test]
fn a_bot_that_times_out_is_a_timeout_and_the_run_goes_on() {
    let (run, records) = play(
        &["--games", "2", "--seed", "1", "--timeout", "150ms"],
        &game_file(),
        &[&judges("hang.sh")],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(records.len(), 2);
    // A game lost (or won) on the first move ends before the player hangs.
    let hung: Vec<&Value> = records
        .iter()
        .filter(|r| r["summary"]["outcome"] == "timeout")
        .collect();
    for record in &hung {
        let player = &record["players"][0];
        assert_eq!(player["status"], "timeout", "{record}");
        assert_eq!(player["phase"], "move", "{record}");
        assert_eq!(player["score"], 0.0);
        let waited = player["micros"].as_array().unwrap().last().unwrap();
        assert!(waited.as_u64().unwrap() >= 150_000, "{record}");
    }
    assert!(!hung.is_empty(), "{records:?}");
}

#[test]
fn a_bot_that_crashes_is_crashed() {
    let (run, records) = play(
        &["--games", "3", "--seed", "1"],
        &game_file(),
        &[&judges("exit3.sh")],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let mut crashed = 0;
    for record in &records {
        let player = &record["players"][0];
        if record["summary"]["outcome"] == "crashed" {
            crashed += 1;
            assert_eq!(player["status"], "crashed", "{record}");
            assert!(
                player["error"].as_str().unwrap().contains("status 3"),
                "{record}"
            );
        } else {
            // Lost on the first move: the game ended before the exit.
            assert_eq!(player["status"], "ok", "{record}");
        }
    }
    assert!(crashed > 0, "{records:?}");
}

#[test]
fn a_bad_game_file_is_a_usage_error_naming_its_line() {
    let run = referee(["play", &judges("bad.toml"), evensteven_bin()], b"");
    assert_eq!(run.code, Some(64));
    assert_has(&run.stderr, "bad.toml");
    assert_has(&run.stderr, "line 4");
    let run = referee(
        ["play", &game_file(), evensteven_bin(), evensteven_bin()],
        b"",
    );
    assert_eq!(run.code, Some(64), "{}", run.stderr);
}

#[test]
fn players_asked_at_once_are_answered_each_with_its_own_verdict() {
    // Each seat with its entrant: the BOT as given.
    let (answer, silent) = (judges("answer.sh"), judges("silent.sh"));
    let (run, records) = play(
        &["--timeout", "150ms", "--startup", "100ms"],
        &judges("race.toml"),
        &[&answer, &silent],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(
        &run.stdout,
        &format!("game 1: [0] {answer} score 1 rank 1 ok; [1] {silent} score 0 rank 2 timeout"),
    );
    let record = &records[0];
    let summary = &record["summary"];
    assert_eq!(summary[0]["text"], "N", "{record}");
    assert_eq!(summary[1]["status"], "timeout", "{record}");
    assert_eq!(summary[1]["phase"], "startup", "{record}");
    assert_eq!(record["players"][1]["status"], "timeout");
    assert_eq!(record["log"].as_array().unwrap().len(), 2, "{record}");
    assert_has(&run.stderr, "judge: {");
}

/// `referee play --results R ARGS... GAME persist.sh`, with the player's
/// log in `dir`: the records and the run.
fn play_persist(
    dir: &Path,
    game: &str,
    games: u32,
    crash: Option<u32>,
    args: &[&str],
) -> (Run, Vec<Value>) {
    let results = dir.join("r.jsonl");
    let _ = std::fs::remove_file(&results);
    let log = dir.join("pids.log");
    let _ = std::fs::remove_file(&log);
    let games = games.to_string();
    let crash = crash.map(|g| g.to_string());
    let mut env = vec![("PERSIST_LOG", log.to_str().unwrap())];
    if let Some(crash) = &crash {
        env.push(("PERSIST_CRASH", crash));
    }
    // The player's settings, which it gets only when they are passed on.
    let env = common::env_args(&env);
    let mut all: Vec<&str> = env.iter().map(String::as_str).collect();
    all.extend(["--no-fsync", "play", "--games", &games, "--seed", "3"]);
    all.extend(["--results", results.to_str().unwrap()]);
    all.extend(args);
    let player = judges("persist.sh");
    all.extend([game, &player]);
    let run = referee_with(all, b"", &[], None);
    let records = records(&results);
    (run, records)
}

/// The process ids the player logged, one per hand.
fn pids(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("pids.log"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_kept_player_plays_the_whole_run_in_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let (run, records) = play_persist(dir.path(), &game_file(), 12, None, &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(records.len(), 12);
    let pids = pids(dir.path());
    assert_eq!(pids.len(), 12, "one hand per game: {pids:?}");
    assert!(pids.iter().all(|p| *p == pids[0]), "one process: {pids:?}");
    for (i, record) in records.iter().enumerate() {
        let player = &record["players"][0];
        assert_eq!(player["status"], "ok", "{record}");
        // The start-up is the first game's; each record has its own game's
        // stderr.
        assert_eq!(player["startup_micros"].is_u64(), i == 0, "{record}");
        assert_eq!(player["stderr"], format!("hand {}\n", i + 1), "{record}");
    }
    // Every game's verdict reached it, the last one before its input was
    // closed.
    let end = std::fs::read_to_string(dir.path().join("pids.log.end")).unwrap();
    assert_eq!(end, "verdicts 12\n");
}

#[test]
fn a_kept_player_that_crashes_is_started_afresh_for_the_next_game() {
    let dir = tempfile::tempdir().unwrap();
    let (run, records) = play_persist(dir.path(), &game_file(), 4, Some(2), &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let status: Vec<&Value> = records.iter().map(|r| &r["players"][0]["status"]).collect();
    assert_eq!(status, ["ok", "crashed", "ok", "ok"], "{records:?}");
    assert!(
        records[1]["players"][0]["error"]
            .as_str()
            .unwrap()
            .contains("status 3"),
        "{records:?}"
    );
    let pids = pids(dir.path());
    assert_eq!(pids.len(), 4, "{pids:?}");
    assert_eq!(pids[0], pids[1], "game 2 is the first process's: {pids:?}");
    assert_ne!(pids[1], pids[2], "game 3 has a fresh process: {pids:?}");
    assert_eq!(pids[2], pids[3], "which is kept: {pids:?}");
    // The fresh process's start-up is in the game where it first replied.
    let startup: Vec<bool> = records
        .iter()
        .map(|r| r["players"][0]["startup_micros"].is_u64())
        .collect();
    assert_eq!(startup, [true, false, true, false], "{records:?}");
    assert_eq!(records[2]["players"][0]["stderr"], "hand 1\n");
}

#[test]
fn without_keep_players_every_game_has_a_fresh_player() {
    let (dir, game) = temp_path("game.toml");
    let text = std::fs::read_to_string(game_file()).unwrap();
    let judge = format!("{}/games/evensteven/judge.py", env!("CARGO_MANIFEST_DIR"));
    let text = text
        .replace("keep_players = true\n", "")
        .replace("\"judge.py\"", &format!("{judge:?}"));
    assert!(!text.contains("keep_players") && text.contains(&judge));
    std::fs::write(&game, text).unwrap();
    let (run, records) = play_persist(dir.path(), game.to_str().unwrap(), 4, None, &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let mut pids = pids(dir.path());
    pids.dedup();
    assert_eq!(pids.len(), 4, "a process per game: {pids:?}");
    for record in &records {
        assert!(record["players"][0]["startup_micros"].is_u64(), "{record}");
    }
}

#[test]
fn a_kept_player_that_outstays_its_grace_at_the_end_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let player = write_file(
        dir.path(),
        "linger",
        format!("#!/bin/sh\nexec {} linger 0\n", fixture("misbehave.sh")),
    );
    std::fs::set_permissions(&player, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let results = dir.path().join("r.jsonl");
    let run = referee(
        [
            "--no-fsync",
            "play",
            "--games",
            "3",
            "--grace",
            "200ms",
            "--results",
            results.to_str().unwrap(),
            &game_file(),
            player.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert_has(&run.stderr, "[0]");
    assert_has(&run.stderr, "did not exit within 200ms");
    let records = records(&results);
    assert_eq!(records.len(), 3);
    for record in &records {
        assert_eq!(record["players"][0]["status"], "ok", "{record}");
    }
    assert_has(&run.stdout, "3 games played");
}

/// A folder to run the referee from, holding an executable `python3` and
/// `sh` that are not the system's: each only says it was run, and fails.
fn shadowing_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["python3", "sh"] {
        let path = write_file(
            dir.path(),
            name,
            format!("#!/bin/false\n{name} from the current folder\n"),
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

#[test]
fn a_judge_named_bare_is_not_taken_from_the_folder_the_referee_runs_in() {
    // The judge is `python3 judge.py`: a `python3` in the folder the user
    // runs from stood in for the system's, and every game was a judge error.
    let here = shadowing_folder();
    let run = referee_with(
        ["play", "--games", "2", &game_file(), evensteven_bin()],
        b"",
        &[],
        Some(here.path()),
    );
    run.expect_stdout(0, "2 games played, 0 judge errors");
}

#[test]
fn a_bot_named_bare_on_the_command_line_says_when_the_current_folder_shadows_path() {
    // As the statement's `dealer evensteven`: the current folder first. A
    // name also on PATH is said, once, with how to choose.
    let here = shadowing_folder();
    let run = referee_with(
        ["dealer", "sh", "-c", "exit 0"],
        b"4 1\n",
        &[],
        Some(here.path()),
    );
    // The folder's `sh` ran (and failed).
    assert_eq!(run.code, Some(3), "{run:?}");
    assert!(
        run.stderr
            .contains("sh: the one in the current directory (")
            && run.stderr.contains("is used, not /")
            && run
                .stderr
                .contains("on PATH; name it ./sh or by its full path to choose"),
        "{run:?}"
    );
}

/// Issue 51: `referee play --games 1000 GAME ./player` with no `./player`
/// played 1,000 games of `cannot_start` and exited 0. A program named on
/// the command line that cannot be started is refused before the first
/// game, as `dealer` refuses it: status 64, naming it; for a game file of
/// one's own and for a game shipped inside the referee alike.
#[test]
fn a_bot_that_cannot_be_found_is_refused_before_the_first_game() {
    let (dir, results) = temp_path("r.jsonl");
    let duel = fixture("duel/game.toml");
    let strong = fixture("duel/strong.sh");
    // What the message says beside the bot's name.
    let cases: [(&str, Vec<&str>, &str); 4] = [
        (
            game_file().leak(),
            vec!["./player"],
            "/player: no such file",
        ),
        (
            "chess",
            vec!["a=no-such-engine-anywhere", "b=no-such-engine-anywhere"],
            "\"no-such-engine-anywhere\": not found in the current directory or on PATH",
        ),
        (
            duel.as_str(),
            vec![&strong, "weak=./bots/weak"],
            "/bots/weak: no such file",
        ),
        (
            game_file().leak(),
            vec![fixture("duel/game.toml").leak()],
            "is not executable",
        ),
    ];
    for (game, bots, says) in cases {
        let mut args = vec![
            "play",
            "--games",
            "1000",
            "--results",
            results.to_str().unwrap(),
            game,
        ];
        args.extend(&bots);
        let run = referee_with(&args, b"", &[], Some(dir.path()));
        let games = common::lines_starting(&run.stdout, "game ").len();
        let said = format!(
            "{game} {bots:?}: status {:?}, {games} games, stderr {}",
            run.code, run.stderr
        );
        assert_eq!((run.code, games), (Some(64), 0), "{said}");
        let name = bots.last().unwrap().split('=').next().unwrap();
        assert!(
            run.stderr
                .contains(&format!("referee play: cannot start bot {name}: "))
                && run.stderr.contains(says),
            "{said}"
        );
        assert!(
            std::fs::read_to_string(&results)
                .unwrap_or_default()
                .is_empty(),
            "{said}: a game was recorded"
        );
    }
}
