//! Judge protocol version 2 through the real binary (issue 30): moves of
//! several lines charged once, set-up exchanges on the start-up
//! allowance, clocks in `replies`, entrants with names and options in
//! `start`, one pairing rule, kept players that follow their bot, and a
//! judge's own timeout verdict. The judge (tests/fixtures/protocol2)
//! writes what it is told into `log` lines, read back from the records.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{assert_has, fixture, referee, referee_ok, temp_path, write_file};
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
    let path = write_file(dir, "game.toml", text);
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

/// [`play`] of `ARGS GAME BOTS...`, GAME the [`game_file`] of `top` and
/// `options`, in a folder of its own; its records.
fn play_game(top: &str, options: &str, args: &[&str], bots: &[&str]) -> Vec<Value> {
    let dir = temp();
    let game = game_file(dir.path(), top, options);
    let mut all = args.to_vec();
    all.push(&game);
    all.extend(bots);
    play(dir.path(), &all)
}

/// `referee tournament FILE --out OUT`, which must succeed; its records.
fn tournament(file: &Path, out: &Path) -> Vec<Value> {
    common::tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
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
    let records = play_game(
        "",
        "moves = 3",
        &["--time-control", "1s+100ms"],
        &[&engine("e", "50 4")],
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
    let records = play_game(
        "",
        "moves = 1",
        &[
            "--games",
            "4",
            "--option",
            "a:Skill Level=3",
            "--option",
            "a:Style=sharp",
        ],
        &[&engine("a", ""), &engine("b", "")],
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
    let records = play_game(
        "keep_players = true",
        "moves = 1",
        &["--games", "4"],
        &[&engine("a", ""), &engine("b", "")],
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
    let records = play_game(
        "",
        "moves = 1",
        &["--startup", "150ms"],
        &[&engine("slow", "0 1 600")],
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
    let records = play_game("", "moves = 2\nforfeit_at = 1", &[], &[&engine("e", "")]);
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
    assert_has(&run.stderr, "protocol = 2");
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
    let file = write_file(
        dir.path(),
        "t.toml",
        format!(
            "game = \"{game}\"\ngames = 4\nseed = 1\njobs = 1\n\
             [[entrant]]\nname = \"weak\"\ncommand = [\"{engine}\"]\noptions = {{ \"Skill Level\" = 3 }}\n\
             [[entrant]]\nname = \"strong\"\ncommand = [\"{engine}\"]\noptions = {{ \"Skill Level\" = 8 }}\n"
        ),
    );
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
            assert_eq!(record["players"][seat]["entrant"], player["name"]);
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
    let run = referee_ok([
        "play",
        "--games",
        "4",
        &game,
        &engine("a", ""),
        &engine("b", ""),
    ]);
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("Elo of [0] against [1]: "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        line.contains("+0.0") && line.contains("pentanomial [0, 0, 2, 0, 0]"),
        "{line}"
    );
    assert_has(line, "[0] won 2, drew 0, lost 2");
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
        let (dir, ended) = temp_path("ended");
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
        let file = write_file(dir.path(), "match.toml", text);
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

/// The misbehaving engine in MODE (`tests/fixtures/protocol2/misbehave.py`),
/// as one BOT: `NAME=misbehave.py MODE MS`.
fn misbehave(name: &str, mode: &str, ms: u64) -> String {
    format!("{name}={} {mode} {ms}", fixture("protocol2/misbehave.py"))
}

/// A temporary folder under the target directory.
fn temp() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// Each move's reply to seat 0, as the judge logged it.
fn replies(record: &Value) -> Vec<Value> {
    logged(record, "move")
        .iter()
        .map(|m| m["replies"][0].clone())
        .collect()
}

/// Issue 41: `" END"` with a leading space ended a move. The end word
/// starts the line: an indented one is one of the move's lines.
#[test]
fn an_indented_end_word_does_not_end_a_move() {
    let records = play_game("", "moves = 1", &[], &[&misbehave("e", "indented", 0)]);
    let reply = &replies(&records[0])[0];
    assert_eq!(reply["text"], "bestmove e2e4", "{reply}");
    assert_eq!(reply["lines"], serde_json::json!([" bestmove a1a1"]));
    assert_eq!(records[0]["players"][0]["status"], "ok");
}

/// Issue 41: a bot that wrote its end line twice had the second taken as
/// its next move, and every later reply belonged to the turn before. Now
/// the second is its error, at its next ask.
#[test]
fn a_second_end_line_is_the_bots_error_not_its_next_move() {
    let records = play_game("", "moves = 2", &[], &[&misbehave("e", "twice", 0)]);
    let replies = replies(&records[0]);
    assert_eq!(replies.len(), 2, "{}", records[0]);
    assert_eq!(replies[0]["text"], "bestmove e2e4");
    assert_eq!(replies[1]["status"], "incorrect", "{}", replies[1]);
    assert!(replies[1].get("text").is_none(), "{}", replies[1]);
    let player = &records[0]["players"][0];
    assert_eq!(player["status"], "incorrect", "{player}");
    let error = player["error"].as_str().unwrap();
    assert!(
        error.contains("wrote \"bestmove\" twice") && error.contains("before it was asked again"),
        "{error}"
    );
    assert_eq!(player["score"], 0.0, "{player}");
}

/// Lines other than an end line between two moves (an engine's late
/// `info`) are no error: they begin the next reply's `lines`.
#[test]
fn lines_between_moves_begin_the_next_reply() {
    let records = play_game("", "moves = 2", &[], &[&misbehave("e", "late", 0)]);
    let replies = replies(&records[0]);
    assert_eq!(replies[1]["text"], "bestmove e2e4", "{}", replies[1]);
    assert_eq!(replies[1]["lines"][0], "info late 1", "{}", replies[1]);
    assert_eq!(records[0]["players"][0]["status"], "ok");
}

/// Issue 41: lines sent before a timeout or a crash never reached the
/// judge. Now the failed reply carries them.
#[test]
fn lines_before_a_timeout_or_a_crash_reach_the_judge() {
    let dir = temp();
    let game = game_file(dir.path(), "", "moves = 1");
    for (mode, status, lines) in [
        ("hang", "timeout", vec!["info depth 1", "info depth 2"]),
        ("crash", "crashed", vec!["info depth 1"]),
    ] {
        let records = play(
            dir.path(),
            &["--timeout", "150ms", &game, &misbehave("e", mode, 0)],
        );
        let reply = &replies(records.last().unwrap())[0];
        assert_eq!(reply["status"], status, "{reply}");
        assert_eq!(reply["lines"], serde_json::json!(lines), "{reply}");
    }
}

/// Issue 41: after a timeout `clocks` showed the time left before the
/// move (129,512 µs beside "its clock ran out"; the full clock after a
/// move-limit timeout). Now they are what is left: 0 when the clock ran
/// out, else the clock less the time the move took.
#[test]
fn clocks_after_a_timeout_are_what_is_left() {
    let dir = temp();
    let game = game_file(dir.path(), "", "moves = 1");
    let records = play(
        dir.path(),
        &[
            "--time-control",
            "150ms+0s",
            &game,
            &misbehave("e", "hang", 0),
        ],
    );
    let moved = &logged(&records[0], "move")[0];
    assert_eq!(moved["replies"][0]["phase"], "clock", "{moved}");
    assert_eq!(moved["clocks"][0], 0, "{moved}");
    let records = play(
        dir.path(),
        &[
            "--time-control",
            "10s+0s",
            "--timeout",
            "150ms",
            &game,
            &misbehave("e", "hang", 0),
        ],
    );
    let moved = &logged(records.last().unwrap(), "move")[0];
    assert_eq!(moved["replies"][0]["phase"], "move", "{moved}");
    let waited = moved["replies"][0]["micros"].as_u64().unwrap();
    assert!(waited >= 150_000, "{moved}");
    // Each figure truncated to a microsecond: at most 1 µs apart.
    let left = moved["clocks"][0].as_u64().unwrap();
    assert!(left.abs_diff(10_000_000 - waited) <= 1, "{moved}");
}

/// Issue 41: game 1 showed a start-up of a few milliseconds for bots
/// that take hundreds, because it was timed from the judge's first ask,
/// while the bots had been starting since before the judge had. Now it
/// counts from the bot's own start.
#[test]
fn startup_counts_from_the_bots_own_start() {
    let records = play_game(
        "",
        "moves = 1\nsleep_ms = 600",
        &[],
        &[&misbehave("e", "boot", 300)],
    );
    let player = &records[0]["players"][0];
    assert_eq!(player["status"], "ok", "{player}");
    let startup = player["startup_micros"].as_u64().unwrap();
    assert!(startup >= 300_000, "{player}");
}

/// Issue 41: a set-up exchange that timed out was said to have had the
/// move limit, and was asked whether it flushed though it had written
/// lines. Now the message names the start-up allowance, and the hint
/// about flushing comes only when nothing at all came.
#[test]
fn a_set_up_timeout_names_the_start_up_allowance() {
    let dir = temp();
    let game = game_file(dir.path(), "", "moves = 1");
    for (bot, flush) in [
        (misbehave("e", "noready", 0), false),
        (engine("e", "0 1 600"), true),
    ] {
        let records = play(dir.path(), &["--startup", "150ms", &game, &bot]);
        let player = &records.last().unwrap()["players"][0];
        assert_eq!(player["phase"], "startup", "{player}");
        let error = player["error"].as_str().unwrap();
        assert!(
            error.starts_with("no \"uciok\" within its start-up allowance of 150ms"),
            "{error}"
        );
        assert_eq!(error.contains("flush"), flush, "{error}");
    }
}

/// Issue 41: under load a move with 365 ms left took 425 ms and lost. A
/// clock margin (fastchess's timemargin) forgives an overrun up to it,
/// leaving the clock at 0; without one the same move loses on time.
#[test]
fn a_time_margin_forgives_a_small_overrun() {
    let dir = temp();
    let game = game_file(dir.path(), "", "moves = 1");
    let bot = misbehave("e", "slow", 250);
    let args = ["--time-control", "100ms+0s", &game, &bot];
    let lost = play(dir.path(), &args);
    assert_eq!(lost[0]["players"][0]["phase"], "clock", "{}", lost[0]);
    let margin = [&["--time-margin", "2s"][..], &args].concat();
    let records = play(dir.path(), &margin);
    let record = records.last().unwrap();
    assert_eq!(record["players"][0]["status"], "ok", "{record}");
    assert_eq!(logged(record, "move")[0]["clocks"][0], 0, "{record}");
}

/// `refuse` (issue 41): a judge refuses an entrant's options, or the
/// game's, as the organiser's error. `play` exits 64 naming whose, and
/// records no game for it; games played before stay recorded.
#[test]
fn play_stops_with_a_usage_error_when_the_judge_refuses() {
    let dir = temp();
    let results = dir.path().join("r.jsonl");
    let game = game_file(dir.path(), "", "moves = 1");
    let bot = engine("sf", "");
    // `referee play --results R EXTRA GAME sf`: stops with 64, saying `said`.
    let refused = |extra: &[&str], game: &str, said: &str| {
        let mut args = vec!["play", "--results", results.to_str().unwrap()];
        args.extend(extra);
        args.extend([game, bot.as_str()]);
        let run = referee(args, b"");
        assert_eq!(run.code, Some(64), "{run:?}");
        assert!(run.stderr.contains(said), "{said}\n{}", run.stderr);
    };
    refused(
        &["--option", "sf:bad=1"],
        &game,
        "referee play: entrant \"sf\" (seat 0) refused by the judge: option \"bad\" is not one of the engine's",
    );
    let recorded = std::fs::read_to_string(&results).unwrap_or_default();
    assert_eq!(recorded, "", "a refused game is not recorded");
    let game = game_file(dir.path(), "", "moves = 1\nrefuse_from = 2");
    refused(
        &["--games", "3"],
        &game,
        "referee play: the game's options refused by the judge: option \"refuse_from\"",
    );
    let records = common::jsonl(&results);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["index"], 1);
}

/// A tournament whose judge refuses stops with 64, naming the entrant or
/// the game's options; the games recorded before stay.
#[test]
fn a_tournament_stops_with_a_usage_error_when_the_judge_refuses() {
    let dir = temp();
    let engine = fixture("protocol2/engine.py");
    let write = |name: &str, options: &str, bad: &str| {
        let game = game_file(dir.path(), "", options);

        write_file(
            dir.path(),
            name,
            format!(
                "game = \"{game}\"\ngames = 4\nseed = 1\njobs = 1\n\
                 [[entrant]]\nname = \"a\"\ncommand = [\"{engine}\"]\n\
                 [[entrant]]\nname = \"b\"\ncommand = [\"{engine}\"]\noptions = {{ {bad} }}\n"
            ),
        )
    };
    let run_of = |file: &Path, out: &Path| {
        referee(
            [
                "tournament",
                "--no-progress",
                file.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            b"",
        )
    };
    let out = dir.path().join("out1");
    let run = run_of(&write("t1.toml", "moves = 1\nrefuse_from = 3", ""), &out);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(
        &run.stderr,
        "referee tournament: the game's options refused by the judge",
    );
    let records = common::jsonl(&out.join("records.jsonl"));
    let indices: Vec<u64> = records
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, [1, 2], "{records:?}");
    let out = dir.path().join("out2");
    let run = run_of(&write("t2.toml", "moves = 1", "bad = 1"), &out);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(
        run.stderr
            .contains("referee tournament: entrant \"b\" (seat 1) refused by the judge")
            || run
                .stderr
                .contains("referee tournament: entrant \"b\" (seat 0) refused by the judge"),
        "{}",
        run.stderr
    );
    // Fixed, the file is another run: --resume says so, a new --out plays it.
    let fixed = write("t2.toml", "moves = 1", "");
    let mut resumed = vec!["tournament", "--no-progress", "--resume"];
    resumed.extend([fixed.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let run = referee(resumed, b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    let run = run_of(&fixed, &dir.path().join("out3"));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        common::jsonl(&dir.path().join("out3/records.jsonl")).len(),
        4
    );
}

/// In a league a refused entrant's version fails, with the judge's
/// message, as one that did not build: it plays no game, and the others
/// play on.
#[test]
fn a_league_fails_the_version_the_judge_refuses_and_plays_on() {
    let dir = temp();
    let game = game_file(dir.path(), "", "moves = 1");
    let engine = fixture("protocol2/engine.py");
    let file = write_file(
        dir.path(),
        "league.toml",
        format!(
            "game = \"{game}\"\nseed = 3\n[limits]\nseats = 2\n\
             [[entrant]]\nname = \"a\"\ncommand = [\"{engine}\"]\n\
             [[entrant]]\nname = \"b\"\ncommand = [\"{engine}\"]\n\
             [[entrant]]\nname = \"c\"\ncommand = [\"{engine}\"]\noptions = {{ bad = 1 }}\n"
        ),
    );
    let db = dir.path().join("l.db");
    let run = common::league::run(&file, &db, &["--games", "4", "--jobs", "1"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(
        &run.stderr,
        "league: c@v1 refused by the judge: option \"bad\" is not one of the engine's",
    );
    let games = common::lines_starting(&run.stdout, "game ");
    assert_eq!(games.len(), 4, "{}", run.stdout);
    assert!(games.iter().all(|l| !l.contains("c@v1")), "{}", run.stdout);
}

/// A tournament takes the margin from its file's `[limits]` or from
/// `--time-margin`: the same overrun is no loss either way.
#[test]
fn a_tournament_takes_a_time_margin_from_its_file_or_the_command_line() {
    let dir = temp();
    let game = game_file(dir.path(), "", "moves = 1");
    let bot = fixture("protocol2/misbehave.py");
    for (name, margin, flag) in [
        ("file.toml", "time_margin = \"2s\"\n", None),
        ("flag.toml", "", Some("2s")),
    ] {
        let file = write_file(
            dir.path(),
            name,
            format!(
                "game = \"{game}\"\ngames = 1\nseed = 1\njobs = 1\n\
                 [limits]\ntime_control = \"100ms+0s\"\n{margin}\
                 [[entrant]]\nname = \"slow\"\ncommand = [\"{bot}\", \"slow\", \"250\"]\n"
            ),
        );
        let out = dir.path().join(format!("out-{name}"));
        let mut args = vec![file.to_str().unwrap(), "--out", out.to_str().unwrap()];
        if let Some(flag) = flag {
            args.extend(["--time-margin", flag]);
        }
        common::tournament(&args);
        let records = common::jsonl(&out.join("records.jsonl"));
        assert_eq!(records[0]["players"][0]["status"], "ok", "{}", records[0]);
    }
}

/// Issue 51: a legal 1 MiB `info string` line lost the game (the 64 KiB
/// line cap). A game file may name kinds of lines (`drop_long_lines =
/// ["info"]`, by their first word) that are dropped beyond the cap, as
/// they come, while a move of several lines is read: the move stands, and
/// the judge is told a line was dropped. A long line of another kind, or
/// in a game that names none, is still the bot's `incorrect`.
#[test]
fn long_lines_of_a_kind_the_game_names_are_dropped() {
    let dir = temp();
    let dropping = game_file(dir.path(), "drop_long_lines = [\"info\"]", "moves = 2");
    let records = play(dir.path(), &[&dropping, &misbehave("e", "long", 0)]);
    let replies = replies(&records[0]);
    assert_eq!(replies.len(), 2, "{}", records[0]);
    for reply in &replies {
        assert_eq!(reply["text"], "bestmove e2e4", "{reply}");
        assert_eq!(
            reply["lines"],
            serde_json::json!(["info depth 1"]),
            "{reply}"
        );
        assert_eq!(reply["lines_dropped"], 1, "{reply}");
    }
    assert_eq!(records[0]["players"][0]["status"], "ok");
    let long_line_loses = |game: &str, mode: &str| {
        let results = temp();
        let records = play(results.path(), &[game, &misbehave("e", mode, 0)]);
        let player = &records[0]["players"][0];
        assert_eq!(player["status"], "incorrect", "{player}");
        let error = player["error"].as_str().unwrap();
        assert_has(error, "line longer than 65536 bytes");
    };
    long_line_loses(&dropping, "longother");
    let other_game = dir.path().join("other");
    std::fs::create_dir(&other_game).unwrap();
    long_line_loses(&game_file(&other_game, "", "moves = 2"), "long");
}

/// A game file's `drop_long_lines` must name words: a line's first word
/// never holds a space, and an empty one would drop every long line.
#[test]
fn drop_long_lines_must_name_words() {
    let dir = temp();
    for (bad, says) in [
        ("[\"\"]", "drop_long_lines: \"\" is not a word"),
        (
            "[\"info string\"]",
            "drop_long_lines: \"info string\" is not a word",
        ),
        ("\"info\"", "line 6, column 19"),
    ] {
        let game = game_file(dir.path(), &format!("drop_long_lines = {bad}"), "moves = 1");
        let run = referee(["play", &game, &misbehave("e", "long", 0)], b"");
        assert_eq!(run.code, Some(64), "{bad}: {run:?}");
        assert!(run.stderr.contains(says), "{bad}: {run:?}");
    }
}
