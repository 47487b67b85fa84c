//! The compiled Even Steven judge (`judges/evensteven/main.rs`) agrees with
//! the Python one (`games/evensteven/judge.py`) game for game: the same
//! deals, outcomes, scores, statuses and error messages.

mod common;

use std::path::Path;

use common::{evensteven_bin, fixture, referee_ok};
use serde_json::Value;

/// A game file like `games/evensteven/game-compiled.toml`, but naming the
/// judge binary cargo built for this test (release or debug).
fn compiled_game(dir: &Path) -> String {
    let file = dir.join("game.toml");
    let text = std::fs::read_to_string(format!(
        "{}/games/evensteven/game-compiled.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let judge = env!("CARGO_BIN_EXE_evensteven-judge");
    let text = text.replace(
        "\"../../target/release/evensteven-judge\"",
        &format!("{judge:?}"),
    );
    assert!(text.contains(judge), "game-compiled.toml names the judge");
    std::fs::write(&file, text).unwrap();
    file.to_str().unwrap().to_owned()
}

/// One program path playing `misbehave.sh ARGS`.
fn wrapper(dir: &Path, name: &str, args: &str) -> String {
    let path = dir.join(name);
    let script = format!("#!/bin/sh\nexec {} {args}\n", fixture("misbehave.sh"));
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_owned()
}

fn play(game: &str, player: &str, games: u32, results: &Path) -> Vec<Value> {
    let games = games.to_string();
    referee_ok([
        "--no-fsync",
        "play",
        "--games",
        &games,
        "--seed",
        "1313",
        "--results",
        results.to_str().unwrap(),
        game,
        player,
    ]);
    std::fs::read_to_string(results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Plays `games` games through both judges and compares every record's
/// judge-made parts. Returns the outcomes, in order.
fn agree(dir: &Path, player: &str, games: u32) -> Vec<String> {
    let python = format!("{}/games/evensteven/game.toml", env!("CARGO_MANIFEST_DIR"));
    let compiled = compiled_game(dir);
    let a = play(&python, player, games, &dir.join("python.jsonl"));
    let b = play(&compiled, player, games, &dir.join("compiled.jsonl"));
    assert_eq!(a.len(), games as usize);
    assert_eq!(b.len(), games as usize);
    let mut outcomes = vec![];
    for (a, b) in a.iter().zip(&b) {
        let game = &a["index"];
        assert_eq!(a["index"], b["index"]);
        assert_eq!(a["summary"], b["summary"], "game {game}");
        let (p, c) = (&a["players"][0], &b["players"][0]);
        for key in ["score", "rank", "status", "error"] {
            assert_eq!(p[key], c[key], "game {game}: {key}");
        }
        outcomes.push(a["summary"]["outcome"].as_str().unwrap().to_owned());
    }
    let _ = std::fs::remove_file(dir.join("python.jsonl"));
    let _ = std::fs::remove_file(dir.join("compiled.jsonl"));
    outcomes
}

#[test]
fn the_compiled_judge_agrees_with_the_python_judge_on_300_games() {
    let dir = tempfile::tempdir().unwrap();
    let best = agree(dir.path(), evensteven_bin(), 300);
    assert!(best.iter().any(|o| o == "win"));
    assert!(!best.iter().any(|o| o == "lose_unnecessarily"));
    let in_order = wrapper(dir.path(), "in-order", "play 0");
    let weak = agree(dir.path(), &in_order, 300);
    assert!(weak.iter().any(|o| o == "lose_unnecessarily"));
}

#[test]
fn the_compiled_judge_words_faults_as_the_python_judge_does() {
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in [
        ("not-a-card", r#"say 1 "it's \\\\ \"x\"\\n""#),
        ("again", "again 1"),
        ("not-held", r#"say 0 "As\\n""#),
    ] {
        let player = wrapper(dir.path(), name, args);
        let outcomes = agree(dir.path(), &player, 20);
        assert!(outcomes.iter().any(|o| o == "incorrect"), "{name}");
    }
}
