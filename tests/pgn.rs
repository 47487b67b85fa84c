//! `OUT/games.pgn`: every game's PGN from its judge's `summary.pgn`, once
//! a game, through a run, a resumed run and a merge of shards.

mod common;

use std::path::{Path, PathBuf};

use common::{fixture, referee, write_file};
use serde_json::Value;

/// A game file and a 2-entrant tournament file of `games` games in `dir`
/// for the PGN judge with `judge_args`; the tournament file's path.
fn tournament_file(dir: &Path, judge_args: &[&str], games: u32) -> String {
    let quoted: Vec<String> = judge_args.iter().map(|a| format!("{a:?}")).collect();
    write_file(
        dir,
        "game.toml",
        format!(
            "name = \"pgn\"\njudge = [\"python3\", {:?}, {}]\nplayers = {{ min = 2, max = 2 }}\n",
            fixture("pgn/judge.py"),
            quoted.join(", ")
        ),
    );
    let file = dir.join("tournament.toml");
    let answer = fixture("pgn/answer.sh");
    std::fs::write(
        &file,
        format!(
            "game = \"game.toml\"\ngames = {games}\nseed = 1\njobs = 1\n\n\
             [[entrant]]\nname = \"a\"\ncommand = [{answer:?}]\n\n\
             [[entrant]]\nname = \"b\"\ncommand = [{answer:?}]\n",
        ),
    )
    .unwrap();
    file.to_str().unwrap().to_owned()
}

fn run(args: &[&str]) -> common::Run {
    let mut all = vec!["--no-fsync"];
    all.extend(args);
    referee(all, b"")
}

fn tournament(file: &str, out: &Path, extra: &[&str]) -> common::Run {
    let mut args = vec!["tournament", file, "--no-progress", "--out"];
    args.push(out.to_str().unwrap());
    args.extend(extra);
    run(&args)
}

/// The games of `OUT/games.pgn`, in the file's order (their `Round` tags),
/// after checking that the file is nothing but their texts as the judge
/// made them, each ended by a line end and a blank line.
fn pgn_games(out: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(out.join("games.pgn")).unwrap();
    let indices: Vec<u64> = text
        .split("[Round \"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().parse().unwrap())
        .collect();
    let games: String = indices
        .iter()
        .map(|i| {
            format!(
                "[Event \"pgn test\"]\n[Round \"{i}\"]\n[Result \"1-0\"]\n\n\
                 1. e4 e5 2. Qh5 {{game {i}}} 1-0\n\n"
            )
        })
        .collect();
    assert_eq!(text, games);
    indices
}

/// The games of `OUT/records.jsonl`, in the file's order.
fn recorded(out: &Path) -> Vec<u64> {
    common::jsonl(&out.join("records.jsonl"))
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect()
}

/// A run of `games` games of the PGN judge with `judge_args`, played
/// into `DIR/out`: the folder, the tournament file and the output.
fn played(judge_args: &[&str], games: u32) -> (tempfile::TempDir, String, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament_file(dir.path(), judge_args, games);
    let out = dir.path().join("out");
    let run = tournament(&file, &out, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    (dir, file, out)
}

#[test]
fn every_games_pgn_is_in_games_pgn_in_the_order_they_finish() {
    let (_dir, _, out) = played(&[], 4);
    let records = recorded(&out);
    assert_eq!(records.len(), 4);
    assert_eq!(pgn_games(&out), records);
    // The record keeps the judge's summary, PGN included, as it was.
    let first = &common::jsonl(&out.join("records.jsonl"))[0];
    assert!(
        first["summary"]["pgn"]
            .as_str()
            .unwrap()
            .starts_with("[Event")
    );
}

#[test]
fn a_resumed_run_has_each_games_pgn_once() {
    let (_dir, file, out) = played(&[], 4);
    // As a run killed after its second game's record would leave it: the
    // later games in games.pgn (written after their records) but not in
    // the records, so they are played again.
    let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    let kept: String = records.split_inclusive('\n').take(2).collect();
    write_file(&out, "records.jsonl", kept);
    assert_eq!(pgn_games(&out).len(), 4);

    let run = tournament(&file, &out, &["--resume"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("resuming: 2 game(s)"), "{run:?}");
    assert_eq!(recorded(&out).len(), 4);
    assert_eq!(pgn_games(&out), [1, 2, 3, 4]);

    // Run again, with nothing left to play: still one copy a game.
    let run = tournament(&file, &out, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(pgn_games(&out), [1, 2, 3, 4]);
}

#[test]
fn merged_shards_have_each_games_pgn_once_in_game_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament_file(dir.path(), &[], 5);
    let shards: Vec<String> = (1..=2)
        .map(|k| {
            let out = dir.path().join(format!("shard{k}"));
            let run = tournament(&file, &out, &["--shard", &format!("{k}/2")]);
            assert_eq!(run.code, Some(0), "{run:?}");
            out.to_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(pgn_games(Path::new(&shards[0])), [1, 3, 5]);
    assert_eq!(pgn_games(Path::new(&shards[1])), [2, 4]);
    let merged = dir.path().join("merged");
    // A shard given twice: its games are still merged once.
    let merge = |into: &Path| {
        run(&[
            "merge",
            &shards[0],
            &shards[1],
            &shards[0],
            "--out",
            into.to_str().unwrap(),
        ])
    };
    let run = merge(&merged);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(pgn_games(&merged), [1, 2, 3, 4, 5]);
    // Merged again into the same folder: written again, not appended.
    let run = merge(&merged);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(pgn_games(&merged), [1, 2, 3, 4, 5]);
}

#[test]
fn games_without_a_pgn_string_make_no_file() {
    let (dir, _, out) = played(&["--no-pgn"], 2);
    assert!(out.join("records.jsonl").exists());
    assert!(!out.join("games.pgn").exists());

    // A pgn that is not text: left out, said once for the run.
    let file = tournament_file(dir.path(), &["--pgn-number"], 3);
    let out = dir.path().join("number");
    let run = tournament(&file, &out, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(!out.join("games.pgn").exists());
    assert_eq!(
        run.stderr.matches("summary.pgn is a number").count(),
        1,
        "{run:?}"
    );
    let records: Vec<Value> = common::jsonl(&out.join("records.jsonl"));
    assert_eq!(records[0]["summary"]["pgn"], 1);
}

#[test]
fn a_games_pgn_that_cannot_be_written_stops_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament_file(dir.path(), &[], 2);
    let out = dir.path().join("out");
    // A folder where the file should be: it can be neither removed nor
    // written.
    std::fs::create_dir_all(out.join("games.pgn").join("x")).unwrap();
    let run = tournament(&file, &out, &[]);
    assert_eq!(run.code, Some(74), "{run:?}");
    assert!(run.stderr.contains("games.pgn"), "{run:?}");
}

/// `referee play --pgn FILE`: each game's PGN, as a tournament's
/// games.pgn has it, appended game by game; a second run adds its games
/// after the first's.
#[test]
fn play_appends_each_games_pgn_to_its_file() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let pgn = dir.path().join("games.pgn");
    let answer = fixture("game-options/answer.sh");
    let game = fixture("game-options/game.toml");
    let play = || {
        let args = [
            "play",
            "--games",
            "3",
            "--pgn",
            pgn.to_str().unwrap(),
            &game,
        ];
        let run = referee(args.iter().copied().chain([answer.as_str(), &answer]), b"");
        assert_eq!(run.code, Some(0), "{run:?}");
    };
    play();
    let one: String = (1..=3)
        .map(|i| format!("[Event \"options\"]\n[Round \"{i}\"]\n\n1. e4 1-0\n\n"))
        .collect();
    assert_eq!(std::fs::read_to_string(&pgn).unwrap(), one);
    play();
    assert_eq!(std::fs::read_to_string(&pgn).unwrap(), one.repeat(2));
}
