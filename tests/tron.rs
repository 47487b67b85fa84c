//! Light cycles (games/tron) through `referee play`: K players moving at
//! once, each failure recorded with its own status while the others play on.

mod common;

use std::path::Path;

use common::{assert_has, fixture, referee, temp_path};
use serde_json::Value;

fn game_file() -> String {
    format!("{}/games/tron/game.toml", env!("CARGO_MANIFEST_DIR"))
}

fn bot(name: &str) -> String {
    format!("{}/games/tron/bots/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn tron(name: &str) -> String {
    fixture(&format!("tron/{name}"))
}

fn records(path: &Path) -> Vec<Value> {
    common::jsonl(path)
}

/// Plays `referee play --seed 1 [EXTRA] GAME BOTS` and returns its records.
fn play(extra: &[&str], game: &str, bots: &[String]) -> Vec<Value> {
    let (_dir, results) = temp_path("r.jsonl");
    let mut args = vec!["--no-fsync", "play", "--seed", "1", "--results"];
    args.push(results.to_str().unwrap());
    args.extend(extra);
    args.push(game);
    args.extend(bots.iter().map(String::as_str));
    let run = referee(args, b"");
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    records(&results)
}

/// Checks what every finished game must satisfy: scores count the players
/// who died on an earlier turn, ranks follow the scores, one frame per
/// turn (and the start) with the grid's size.
fn check_game(record: &Value, k: usize) {
    let players = record["players"].as_array().unwrap();
    assert_eq!(players.len(), k, "{record}");
    let summary = &record["summary"];
    let turns = summary["turns"].as_u64().unwrap();
    let mut died = vec![turns + 1; k];
    for death in summary["deaths"].as_array().unwrap() {
        died[death["seat"].as_u64().unwrap() as usize] = death["turn"].as_u64().unwrap();
    }
    assert!(died.iter().filter(|&&d| d > turns).count() <= 1, "{record}");
    for (seat, player) in players.iter().enumerate() {
        let earlier = died.iter().filter(|&&d| d < died[seat]).count();
        assert_eq!(player["score"], earlier as f64, "seat {seat}: {record}");
        let score = player["score"].as_f64().unwrap();
        let higher = players
            .iter()
            .filter(|p| p["score"].as_f64().unwrap() > score)
            .count();
        assert_eq!(player["rank"], higher as u64 + 1, "seat {seat}: {record}");
    }
    if let Some(frames) = record.get("frames") {
        let frames = frames.as_array().unwrap();
        assert_eq!(frames.len() as u64, turns + 1, "{record}");
        let w = summary["width"].as_u64().unwrap();
        let h = summary["height"].as_u64().unwrap();
        for frame in frames {
            let grid = frame["grid"].as_array().unwrap();
            assert_eq!(grid.len() as u64, h);
            assert!(grid.iter().all(|r| r.as_str().unwrap().len() as u64 == w));
            assert_eq!(frame["heads"].as_array().unwrap().len(), k);
        }
    }
}

#[test]
fn two_bots_play_to_the_end_with_a_ranking() {
    let records = play(
        &["--games", "3", "--timeout", "2s", "--record-moves"],
        &game_file(),
        &[bot("voronoi.py"), bot("random.py")],
    );
    assert_eq!(records.len(), 3);
    let (mut voronoi, mut random) = (0.0, 0.0);
    for record in &records {
        assert_eq!(record["game"], "tron");
        check_game(record, 2);
        for player in record["players"].as_array().unwrap() {
            assert_eq!(player["status"], "ok", "{record}");
        }
        // Seats rotate from game to game: each bot's score by its name.
        for player in record["players"].as_array().unwrap() {
            let score = player["score"].as_f64().unwrap();
            match player["entrant"].as_str().unwrap() {
                name if name.ends_with("voronoi.py") => voronoi += score,
                name if name.ends_with("random.py") => random += score,
                other => panic!("{other}: {record}"),
            }
        }
        // The start: seat 1 is seat 0's point reflection, heads on the grid.
        let start = &record["frames"][0];
        let s = &record["summary"]["starts"];
        assert_eq!(s[1][0], 14 - s[0][0].as_u64().unwrap(), "{record}");
        assert_eq!(s[1][1], 14 - s[0][1].as_u64().unwrap(), "{record}");
        let (x, y) = (s[0][0].as_u64().unwrap(), s[0][1].as_u64().unwrap());
        assert_eq!(
            start["grid"][y as usize].as_str().unwrap().as_bytes()[x as usize],
            b'A'
        );
    }
    assert!(voronoi >= random, "{records:?}");
}

/// Two Voronoi bots and one that misbehaves on turn 3: it alone is out on
/// turn 3, with `status` (its death's cause), and the other two play on.
fn misbehaving(script: &str, timeout: &str, status: &str) -> Value {
    let records = play(
        &["--timeout", timeout],
        &game_file(),
        &[bot("voronoi.py"), bot("voronoi.py"), tron(script)],
    );
    let record = records.into_iter().next().unwrap();
    check_game(&record, 3);
    let summary = &record["summary"];
    let deaths = summary["deaths"].as_array().unwrap();
    assert_eq!(deaths[0]["seat"], 2, "{record}");
    assert_eq!(deaths[0]["turn"], 3, "{record}");
    assert!(summary["turns"].as_u64().unwrap() > 3, "{record}");
    assert_eq!(record["players"][2]["rank"], 3, "{record}");
    assert_eq!(record["players"][2]["score"], 0.0, "{record}");
    for seat in 0..2 {
        assert_eq!(record["players"][seat]["status"], "ok", "{record}");
    }
    assert_eq!(record["players"][2]["status"], status, "{record}");
    assert_eq!(record["summary"]["deaths"][0]["cause"], status);
    record
}

#[test]
fn a_bot_that_sleeps_is_a_timeout_and_the_others_play_on() {
    let record = misbehaving("sleep.sh", "1s", "timeout");
    let player = &record["players"][2];
    assert_eq!(player["phase"], "move", "{record}");
    let waited = player["micros"].as_array().unwrap().last().unwrap();
    assert!(waited.as_u64().unwrap() >= 1_000_000, "{record}");
}

#[test]
fn a_bot_that_exits_is_crashed_and_the_others_play_on() {
    let record = misbehaving("crash.sh", "2s", "crashed");
    let error = record["players"][2]["error"].as_str().unwrap();
    assert!(error.contains("status 3"), "{record}");
}

#[test]
fn a_bot_that_writes_garbage_is_incorrect_and_the_others_play_on() {
    let record = misbehaving("garbage.sh", "2s", "incorrect");
    let error = record["players"][2]["error"].as_str().unwrap();
    assert!(
        error.contains("turn 3") && error.contains("'hello'") && error.contains("N E S W"),
        "{record}"
    );
}

#[test]
fn four_players_start_symmetrically_and_are_ranked() {
    let records = play(
        &["--games", "2", "--timeout", "2s", "--record-moves"],
        &game_file(),
        &[
            bot("voronoi.py"),
            bot("random.py"),
            bot("voronoi.py"),
            bot("random.py"),
        ],
    );
    assert_eq!(records.len(), 2);
    for record in &records {
        check_game(record, 4);
        let s = &record["summary"]["starts"];
        let (x, y) = (s[0][0].as_u64().unwrap(), s[0][1].as_u64().unwrap());
        let want = [(x, y), (14 - x, 14 - y), (14 - x, y), (x, 14 - y)];
        let frame = &record["frames"][0];
        for (seat, (x, y)) in want.into_iter().enumerate() {
            assert_eq!(s[seat], serde_json::json!([x, y]), "{record}");
            let row = frame["grid"][y as usize].as_str().unwrap();
            assert_eq!(row.as_bytes()[x as usize], b"ABCD"[seat], "{record}");
        }
        // Every player but the survivor (if any) is out by the rules.
        for player in record["players"].as_array().unwrap() {
            assert_eq!(player["status"], "ok", "{record}");
        }
    }
}

#[test]
fn obstacles_are_symmetric_and_sent_to_the_bots() {
    let records = play(
        &["--record-moves"],
        &tron("small.toml"),
        &[bot("voronoi.py"), bot("random.py"), bot("voronoi.py")],
    );
    let record = &records[0];
    check_game(record, 3);
    let grid: Vec<&str> = record["frames"][0]["grid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!((grid.len(), grid[0].len()), (7, 9));
    let mut obstacles = 0;
    for (y, row) in grid.iter().enumerate() {
        for (x, c) in row.bytes().enumerate() {
            if c == b'#' {
                obstacles += 1;
                assert_eq!(grid[6 - y].as_bytes()[8 - x], b'#', "{grid:?}");
                assert_eq!(grid[y].as_bytes()[8 - x], b'#', "{grid:?}");
            }
        }
    }
    assert!(obstacles > 0);
    assert_eq!(record["summary"]["obstacles"], obstacles, "{record}");
}

#[test]
fn an_option_the_judge_does_not_know_is_a_judge_error() {
    let run = referee(
        [
            "play",
            &tron("badoption.toml"),
            &bot("random.py"),
            &bot("random.py"),
        ],
        b"",
    );
    assert_eq!(run.code, Some(70), "{}", run.stderr);
    assert_has(&run.stderr, "unknown option colour");
}

/// `tournaments/tron.toml` with `options`, its output in `out`.
fn sample_tournament(out: &std::path::Path, options: &[&str]) {
    let file = format!("{}/tournaments/tron.toml", env!("CARGO_MANIFEST_DIR"));
    let mut args = vec![
        "tournament",
        &file,
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(options);
    let run = common::referee(args, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn the_sample_tron_tournament_runs_and_ranks_the_voronoi_bot_first() {
    let (_dir, out) = temp_path("out");
    sample_tournament(&out, &["--games", "6"]);
    let standings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("standings.json")).unwrap())
            .unwrap();
    assert_eq!(standings[0]["entrant"], "voronoi", "{standings}");
    assert_eq!(standings[0]["games"], 6, "{standings}");
}

#[test]
fn games_log_shows_the_judge_s_summary_never_the_frames() {
    // Red team: with --record-moves a game's setup line in games.log was
    // its replay frames, cut at 200 characters, and the summary was lost
    // behind them.
    let (_dir, out) = temp_path("out");
    sample_tournament(&out, &["--games", "2", "--record-moves"]);
    let log = std::fs::read_to_string(out.join("games.log")).unwrap();
    let setups: Vec<&str> = log.lines().filter(|l| l.starts_with("setup: ")).collect();
    assert_eq!(setups.len(), 2, "{log}");
    for line in setups {
        assert!(line.starts_with("setup: summary deaths "), "{line}");
        assert!(!line.contains("grid") && !line.contains("frames"), "{line}");
    }
    // The frames are still in the records, for the replays.
    let records = common::jsonl(&out.join("records.jsonl"));
    assert!(
        records[0]["frames"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
    );
}
