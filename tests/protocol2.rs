//! Judge protocol version 2 through the real binary (issue 30): moves of
//! several lines charged once, set-up exchanges on the start-up
//! allowance, clocks in `replies`, entrants with names and options in
//! `start`, one pairing rule, kept players that follow their bot, and a
//! judge's own timeout verdict. The judge (tests/fixtures/protocol2)
//! writes what it is told into `log` lines, read back from the records.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{fixture, referee};
use serde_json::Value;

/// A game file in `dir` for the fixture judge, `protocol = 2` unless
/// `top` says otherwise, with `[options]` `options`.
fn game_file(dir: &Path, top: &str, options: &str) -> String {
    let top = if top.contains("protocol") {
        top.to_owned()
    } else {
        format!("protocol = 2\n{top}")
    };
    let text = format!(
        "name = \"uci\"\njudge = [\"python3\", \"{}\"]\nplayers = {{ min = 1, max = 2 }}\n\
         reuse = true\n{top}\n[limits]\ntimeout = \"2s\"\n[options]\n{options}\n",
        fixture("protocol2/judge.py")
    );
    let path = dir.join("game.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The fake engine with its arguments, as one BOT: `NAME=engine.py ARGS`.
fn engine(name: &str, args: &str) -> String {
    format!("{name}={} {args}", fixture("protocol2/engine.py"))
}

/// `referee play` with `args`; its records.
fn play(dir: &Path, args: &[&str]) -> Vec<Value> {
    let results = dir.join("r.jsonl");
    let mut all = vec!["play", "--results", results.to_str().unwrap()];
    all.extend(args);
    let run = referee(&all, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    common::jsonl(&results)
}

/// `referee tournament FILE --out OUT`, which must succeed; its records.
fn tournament(file: &Path, out: &Path) -> Vec<Value> {
    let run = referee(
        [
            "tournament",
            "--no-progress",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    common::jsonl(&out.join("records.jsonl"))
}

/// Each entrant's engine processes in `records`, by the process number its
/// `id` line (the set-up reply) gives.
fn processes(records: &[Value]) -> BTreeMap<String, BTreeSet<String>> {
    let mut pids: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for record in records {
        let start = &logged(record, "start")[0];
        for reply in logged(record, "setup")[0]["replies"].as_array().unwrap() {
            let seat = reply["player"].as_u64().unwrap() as usize;
            let name = start["players"][seat]["name"].as_str().unwrap().to_owned();
            let id = reply["lines"][0].as_str().unwrap();
            let pid = id.rsplit(' ').next().unwrap().to_owned();
            pids.entry(name).or_default().insert(pid);
        }
    }
    pids
}

/// The judge's log lines of a record with `key`, parsed: each the
/// message it logged under that key.
fn logged(record: &Value, key: &str) -> Vec<Value> {
    record["log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l.as_str().unwrap()).unwrap())
        .filter_map(|l| l.get(key).cloned())
        .collect()
}

/// The failure: a bot writing a line every so often had every
/// line charged to its clock and earn the increment. Now a move is every
/// line up to `bestmove`, charged once from the write that began it; the
/// clocks the judge is told are the referee's own accounting.
#[test]
fn a_move_of_several_lines_is_charged_once() {
    let dir = tempfile::tempdir().unwrap();
    let game = game_file(dir.path(), "", "moves = 3");
    let records = play(
        dir.path(),
        &["--time-control", "1s+100ms", &game, &engine("e", "50 4")],
    );
    let record = &records[0];
    let player = &record["players"][0];
    assert_eq!(player["status"], "ok", "{record}");
    // Three moves, whatever their lines; the set-up is no move.
    let micros: Vec<u64> = player["micros"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_u64().unwrap())
        .collect();
    assert_eq!(micros.len(), 3, "{record}");
    assert!(player["startup_micros"].as_u64().is_some(), "{record}");
    // Each move waited for its four lines, 50 ms apart.
    assert!(micros.iter().all(|&m| m >= 200_000), "{micros:?}");
    let moves = logged(record, "move");
    assert_eq!(moves.len(), 3, "{record}");
    let mut spent = 0;
    for (k, replies) in moves.iter().enumerate() {
        let reply = &replies["replies"][0];
        assert_eq!(reply["text"], "bestmove e2e4", "{replies}");
        let lines = reply["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 4, "{replies}");
        assert_eq!(lines[0], "info depth 1 score cp 1");
        spent += micros[k];
        // Base, less the moves so far, plus one increment per move (each
        // move's time truncated to a microsecond: at most 1 µs apart).
        let want = 1_000_000 - spent as i64 + 100_000 * (k as i64 + 1);
        let clock = replies["clocks"][0].as_i64().unwrap();
        assert!((clock - want).abs() <= k as i64 + 1, "{clock} vs {want}");
    }
}

/// `start` names each seat's entrant, its program, its options and its
/// limits; games come in rounds of one game per seat on one opening, the
/// seats rotating; records say which entrant sat where.
#[test]
fn start_names_the_entrants_and_the_round() {
    let dir = tempfile::tempdir().unwrap();
    let game = game_file(dir.path(), "", "moves = 1");
    let records = play(
        dir.path(),
        &[
            "--games",
            "4",
            "--option",
            "a:Skill Level=3",
            "--option",
            "a:Style=sharp",
            &game,
            &engine("a", ""),
            &engine("b", ""),
        ],
    );
    assert_eq!(records.len(), 4);
    let mut seat_zero = Vec::new();
    for (i, record) in records.iter().enumerate() {
        let start = &logged(record, "start")[0];
        assert_eq!(start["version"], 2, "{start}");
        assert_eq!(start["index"], i as u64 + 1);
        assert_eq!(start["opening"], i as u64 / 2 + 1, "{start}");
        assert_eq!(start["rotation"], i as u64 % 2, "{start}");
        for (seat, player) in start["players"].as_array().unwrap().iter().enumerate() {
            let name = player["name"].as_str().unwrap();
            assert_eq!(record["players"][seat]["entrant"], name, "{record}");
            let options = &player["options"];
            if name == "a" {
                assert_eq!(options["Skill Level"], 3, "{start}");
                assert_eq!(options["Style"], "sharp", "{start}");
            } else {
                assert_eq!(options, &serde_json::json!({}), "{start}");
            }
            assert!(
                player["program"][0]
                    .as_str()
                    .unwrap()
                    .ends_with("engine.py"),
                "{start}"
            );
            assert_eq!(player["timeout_micros"], 2_000_000, "{start}");
            assert_eq!(player["startup_micros"], 10_000_000, "{start}");
            assert_eq!(player["time_control"], Value::Null, "{start}");
        }
        seat_zero.push(start["players"][0]["name"].as_str().unwrap().to_owned());
        // No time control: no clocks.
        assert!(logged(record, "move")[0].get("clocks").is_none());
    }
    // Each round's two games swap the seats.
    assert_ne!(seat_zero[0], seat_zero[1], "{seat_zero:?}");
    assert_ne!(seat_zero[2], seat_zero[3], "{seat_zero:?}");
}

/// With `keep_players`, a process is kept for its bot, not its seat: the
/// rotation never hands one bot's engine to the other.
#[test]
fn kept_players_follow_their_bot_through_the_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let game = game_file(dir.path(), "keep_players = true", "moves = 1");
    let records = play(
        dir.path(),
        &["--games", "4", &game, &engine("a", ""), &engine("b", "")],
    );
    let pids = processes(&records);
    assert_eq!(pids.len(), 2, "{pids:?}");
    for (name, ids) in &pids {
        assert_eq!(ids.len(), 1, "{name} had several processes: {pids:?}");
    }
    assert_ne!(pids["a"], pids["b"], "{pids:?}");
}

/// A set-up exchange has the start-up allowance, not the move limit: one
/// slower than the allowance is a start-up timeout, and one within it is
/// no move.
#[test]
fn a_slow_set_up_is_a_startup_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let game = game_file(dir.path(), "", "moves = 1");
    let records = play(
        dir.path(),
        &["--startup", "150ms", &game, &engine("slow", "0 1 600")],
    );
    let player = &records[0]["players"][0];
    assert_eq!(player["status"], "timeout", "{player}");
    assert_eq!(player["phase"], "startup", "{player}");
    assert_eq!(player["micros"], serde_json::json!([]), "{player}");
    assert!(player["startup_micros"].as_u64().unwrap() >= 150_000);
}

/// A forfeit the judge detects is recorded as a timeout, with its phase.
#[test]
fn a_judge_can_eliminate_a_player_for_time() {
    let dir = tempfile::tempdir().unwrap();
    let game = game_file(dir.path(), "", "moves = 2\nforfeit_at = 1");
    let records = play(dir.path(), &[&game, &engine("e", "")]);
    let player = &records[0]["players"][0];
    assert_eq!(player["status"], "timeout", "{player}");
    assert_eq!(player["phase"], "clock", "{player}");
    assert_eq!(player["error"], "its own clock report says it flagged");
    assert_eq!(player["score"], 0.0);
}

/// A version-1 game file keeps version 1: `until` is refused, naming
/// what the file needs.
#[test]
fn a_version_one_judge_cannot_ask_until() {
    let dir = tempfile::tempdir().unwrap();
    let game = game_file(dir.path(), "protocol = 1", "moves = 1");
    let run = referee(["play", &game, &engine("e", "")], b"");
    assert_eq!(run.code, Some(70), "{run:?}");
    assert!(run.stderr.contains("protocol = 2"), "{}", run.stderr);
}

#[test]
fn play_usage_errors_name_the_bot_or_option() {
    let dir = tempfile::tempdir().unwrap();
    let game = game_file(dir.path(), "", "");
    for (args, words) in [
        (vec!["--option", "zz:k=1", &game, "a=./x"], "\"zz\""),
        (vec!["--option", "a-k", &game, "a=./x"], "NAME:KEY=VALUE"),
        (vec![&game, "a=./x", "a=./y"], "two BOTs are named \"a\""),
        (vec![&game, "a=./x 'y"], "unclosed quote"),
    ] {
        let mut all = vec!["play"];
        all.extend(args.iter().copied());
        let run = referee(&all, b"");
        assert_eq!(run.code, Some(64), "{args:?}: {run:?}");
        assert!(run.stderr.contains(words), "{args:?}: {}", run.stderr);
    }
}

/// In a tournament, `start` names the entrants as the file does and
/// passes each its `options`: one program with two settings is two
/// entrants. A game thread keeps its judge from game to game.
#[test]
fn a_tournament_passes_each_entrants_name_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let game = game_file(dir.path(), "", "moves = 1");
    let engine = fixture("protocol2/engine.py");
    let file = dir.path().join("t.toml");
    std::fs::write(
        &file,
        format!(
            "game = \"{game}\"\ngames = 4\nseed = 1\njobs = 1\n\
             [[entrant]]\nname = \"weak\"\ncommand = [\"{engine}\"]\noptions = {{ \"Skill Level\" = 3 }}\n\
             [[entrant]]\nname = \"strong\"\ncommand = [\"{engine}\"]\noptions = {{ \"Skill Level\" = 8 }}\n"
        ),
    )
    .unwrap();
    let records = tournament(&file, &dir.path().join("out"));
    assert_eq!(records.len(), 4);
    // One game at a time: one judge for the run (`reuse = true`), not an
    // interpreter's start per game.
    let judges: std::collections::BTreeSet<u64> = records
        .iter()
        .map(|r| logged(r, "judge")[0].as_u64().unwrap())
        .collect();
    assert_eq!(judges.len(), 1, "{judges:?}");
    for record in &records {
        let start = &logged(record, "start")[0];
        for (seat, player) in start["players"].as_array().unwrap().iter().enumerate() {
            let skill = match player["name"].as_str().unwrap() {
                "weak" => 3,
                "strong" => 8,
                other => panic!("{other}: {start}"),
            };
            assert_eq!(player["options"]["Skill Level"], skill, "{start}");
            assert_eq!(record["results"][seat]["entrant"], player["name"]);
        }
    }
    // One round: the same opening, the seats swapped.
    let starts: Vec<Value> = records
        .iter()
        .map(|r| logged(r, "start")[0].clone())
        .collect();
    assert_eq!(starts[0]["opening"], starts[1]["opening"]);
    assert_ne!(
        starts[0]["players"][0]["name"],
        starts[1]["players"][0]["name"]
    );
}

/// `play` between two bots is a match: its summary gives the first's Elo
/// against the second, from the colour-swapped pairs. Here whoever has
/// seat 0 forfeits, so each pair is one win each.
#[test]
fn play_of_two_bots_prints_the_elo_from_its_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let game = game_file(dir.path(), "", "moves = 1\nforfeit_at = 0");
    let run = referee(
        [
            "play",
            "--games",
            "4",
            &game,
            &engine("a", ""),
            &engine("b", ""),
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("Elo of [0] against [1]: "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        line.contains("+0.0") && line.contains("pentanomial [0, 0, 2, 0, 0]"),
        "{line}"
    );
    assert!(line.contains("[0] won 2, drew 0, lost 2"), "{line}");
    // And as fastchess prints a match: nElo and LOS beside the Elo.
    for expected in [
        "Elo: 0.00 +/- ",
        "LOS: ",
        "Games: 4, Wins: 2, Losses: 2, Draws: 0, Points: 2.0 (50.00 %)",
        "Ptnml(0-2): [0, 0, 2, 0, 0]",
    ] {
        assert!(run.stdout.contains(expected), "{expected}\n{}", run.stdout);
    }
}

/// A tournament keeps a `keep_players` game's processes too, on each game
/// thread, as fastchess keeps its engines (issue 30: an engine started for
/// every game made a tournament cost 1.3× fastchess): two entrants on one
/// thread have one process each for the run. A class of more entrants
/// keeps at most two per seat, the one used least recently ended. Every
/// process is ended as a kept one is, its input closed: none is killed.
#[test]
fn a_tournament_keeps_its_entrants_processes_between_games() {
    for (entrants, games) in [(2, 6), (5, 20)] {
        let dir = tempfile::tempdir().unwrap();
        let ended = dir.path().join("ended");
        std::fs::create_dir(&ended).unwrap();
        let game = game_file(dir.path(), "keep_players = true", "moves = 1");
        let mut text = format!(
            "game = \"{game}\"\ngames = {games}\nseed = 1\njobs = 1\n[limits]\nseats = 2\n"
        );
        for e in 0..entrants {
            text += &format!(
                "[[entrant]]\nname = \"e{e}\"\ncommand = [\"{}\", \"0\", \"3\", \"0\", \"{}\"]\n",
                fixture("protocol2/engine.py"),
                ended.display()
            );
        }
        let file = dir.path().join("match.toml");
        std::fs::write(&file, text).unwrap();
        let records = tournament(&file, &dir.path().join("out"));
        assert_eq!(records.len(), games);
        let pids = processes(&records);
        let all: BTreeSet<String> = pids.values().flatten().cloned().collect();
        let gone: BTreeSet<String> = std::fs::read_dir(&ended)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(gone, all, "every process saw its input end: {pids:?}");
        if entrants == 2 {
            assert!(pids.values().all(|p| p.len() == 1), "{pids:?}");
        } else {
            // Five entrants, four kept: some are started again, most not.
            assert!((6..2 * games).contains(&all.len()), "{pids:?}");
        }
    }
}
