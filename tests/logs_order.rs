//! `stderr/NAME.log` and `games.log` list games in game order, though
//! games played at once finish out of order: after a run, an interrupted
//! one, `--resume` and `merge` (issue 38, item 3).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{Marker, finish, referee, referee_ok, signal, start, write_file};

/// What each bot writes on stderr in every game: a line that reads like
/// the file's own section header, which must not split its section.
const FORGED: &str = "--- game 1 (4 bytes) ---\nfake\n--- game 999 ---";

/// A tournament file in `dir`: `games` games of Even Steven between two
/// entrants that run `player.sh`, which writes [`FORGED`] on stderr and
/// waits a moment before it plays; the first time it starts after
/// `dir/slow` is made, a second: that game ends after later ones.
fn tournament_file(dir: &Path, games: u64) -> String {
    let player = dir.join("player.sh");
    let slow = dir.join("slow");
    std::fs::write(
        &player,
        format!(
            "#!/bin/sh\ncat >&2 <<'END'\n{FORGED}\nEND\n\
             if rmdir '{}' 2>/dev/null; then sleep 1; else sleep 0.05; fi\nexec {} \"$@\"\n",
            slow.display(),
            env!("CARGO_BIN_EXE_evensteven")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&player, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let text = format!(
        "game = \"evensteven\"\ngames = {games}\nseed = 3\n[limits]\ntimeout = \"5s\"\n\
         [[entrant]]\nname = \"a\"\ncommand = [\"{0}\"]\n\
         [[entrant]]\nname = \"b\"\ncommand = [\"{0}\"]\n",
        player.display()
    );
    let file = write_file(dir, "t.toml", text);
    file.to_str().unwrap().to_owned()
}

/// The next game that starts is slow.
fn slow_next(dir: &Path) {
    let _ = std::fs::create_dir(dir.join("slow"));
}

/// The games of `out/records.jsonl`, in the file's order.
fn recorded(out: &Path) -> Vec<u64> {
    common::jsonl(&out.join("records.jsonl"))
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect()
}

/// The games of `out/games.log`, in the file's order.
fn logged(out: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(out.join("games.log")).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("[Index \""))
        .map(|l| l.trim_end_matches("\"]").parse().unwrap())
        .collect()
}

/// The sections of a stderr log as docs/tournaments.md describes it: a
/// first line naming the entrant, then for each game `--- game I (N
/// bytes) ---`, a line end, the N bytes the entrant wrote, a line end.
fn sections(path: &Path) -> Vec<(u64, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let (title, mut rest) = text.split_once('\n').unwrap();
    assert!(title.starts_with("standard error of entrant "), "{title}");
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (header, after) = rest.split_once('\n').unwrap();
        let (game, bytes) = header
            .strip_prefix("--- game ")
            .and_then(|h| h.strip_suffix(" bytes) ---"))
            .and_then(|h| h.split_once(" ("))
            .unwrap_or_else(|| panic!("not a section header: {header:?} in {text}"));
        let bytes: usize = bytes.parse().unwrap();
        out.push((game.parse().unwrap(), after[..bytes].to_owned()));
        assert_eq!(&after[bytes..bytes + 1], "\n", "{text}");
        rest = &after[bytes + 1..];
    }
    out
}

/// Both logs of `out` hold games `games`, each once, in game order; each
/// stderr section is what the bot wrote, whole.
fn assert_in_game_order(out: &Path, games: &[u64]) {
    assert_eq!(logged(out), games, "games.log");
    for name in ["a", "b"] {
        let sections = sections(&out.join(format!("stderr/{name}.log")));
        let indices: Vec<u64> = sections.iter().map(|(i, _)| *i).collect();
        assert_eq!(indices, games, "stderr/{name}.log");
        for (i, text) in &sections {
            assert_eq!(text, &format!("{FORGED}\n"), "game {i}");
        }
    }
}

/// `referee tournament` with two games at once and `args`.
fn tournament_args<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["tournament", "--no-progress", "--jobs", "2"];
    all.extend_from_slice(args);
    all
}

fn tournament(args: &[&str]) -> common::Run {
    let run = referee(tournament_args(args), b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    run
}

#[test]
fn a_runs_logs_list_games_in_game_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament_file(dir.path(), 6);
    let out = dir.path().join("out");
    slow_next(dir.path());
    tournament(&[&file, "--out", out.to_str().unwrap()]);
    let mut finished = recorded(&out);
    assert!(
        !finished.is_sorted(),
        "games finished in order: {finished:?}"
    );
    finished.sort();
    assert_eq!(finished, (1..=6).collect::<Vec<_>>());
    assert_in_game_order(&out, &finished);
}

#[test]
fn an_interrupted_and_resumed_runs_logs_list_games_in_game_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament_file(dir.path(), 40);
    let out = dir.path().join("out");
    slow_next(dir.path());
    let marker = Marker::new();
    let child = start(
        tournament_args(&[&file, "--out", out.to_str().unwrap()]),
        &marker,
    );
    // Once the slow game is recorded after later ones, with games left.
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(out.join("records.jsonl")).map_or(true, |text| {
        !text.ends_with('\n') || recorded(&out).is_sorted()
    }) {
        assert!(Instant::now() < deadline, "the slow game never ended");
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(&child, nix::sys::signal::Signal::SIGINT);
    assert_eq!(finish(child, b"").code, Some(130));
    marker.assert_none_left();
    let mut finished = recorded(&out);
    assert!(finished.len() < 40, "interrupted too late");
    finished.sort();
    assert_in_game_order(&out, &finished);

    slow_next(dir.path());
    tournament(&[&file, "--out", out.to_str().unwrap(), "--resume"]);
    assert_in_game_order(&out, &(1..=40).collect::<Vec<_>>());
}

#[test]
fn merged_shards_logs_list_games_in_game_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament_file(dir.path(), 12);
    let outs: Vec<String> = (1..=2)
        .map(|k| {
            let out = dir.path().join(format!("shard{k}"));
            slow_next(dir.path());
            let shard = format!("{k}/2");
            tournament(&[&file, "--shard", &shard, "--out", out.to_str().unwrap()]);
            out.to_str().unwrap().to_owned()
        })
        .collect();
    let merged = dir.path().join("merged");
    // Given in the other order: the merged logs still go by game.
    referee_ok([
        "merge",
        &outs[1],
        &outs[0],
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_in_game_order(&merged, &(1..=12).collect::<Vec<_>>());
}
