//! The shipped chess game by its name, wherever the binary runs: from a
//! folder with no `games/` in sight, with a fresh home (the case of
//! `cargo install`, which installs the binary alone), the files are
//! unpacked and the judge's Python environment made on first use; then a
//! second run and a tournament file's `game = "chess"` use that copy, and
//! `REFEREE_GAMES` points at an organiser's own copy instead.

mod common;

use std::path::Path;
use std::process::Command;

use common::{fixture, referee_with};

fn root() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

fn python() -> String {
    format!("{}/games/chess/.venv/bin/python3", root())
}

/// The fake engines need python-chess from the source tree's venv; the
/// first run needs python3's venv module and PyPI, as the docs say.
fn missing() -> Option<&'static str> {
    let imports = Command::new(python())
        .args(["-c", "import chess"])
        .output()
        .is_ok_and(|o| o.status.success());
    (!imports).then_some("games/chess/.venv cannot import chess: run games/chess/make-venv.sh")
}

/// `NAME=` the fake engine (plays legal moves, then as `mode` says).
fn fake(name: &str, mode: &str) -> String {
    format!("{name}={} {} {mode}", python(), fixture("chess/fake.py"))
}

/// The folders the shipped chess game was unpacked into under `home`.
fn unpacked(home: &Path) -> Vec<std::path::PathBuf> {
    let games = home.join(".local/share/referee/games");
    std::fs::read_dir(&games)
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

/// A working folder with an empty home inside, or `None` (saying why)
/// when the fakes cannot run here.
fn folder_and_home() -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    if let Some(why) = missing() {
        eprintln!("skipped: {why}");
        return None;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    Some((dir, home))
}

#[test]
fn chess_by_its_name_runs_from_anywhere() {
    let Some((dir, home)) = folder_and_home() else {
        return;
    };
    let env = [
        ("HOME", home.to_str().unwrap()),
        ("XDG_DATA_HOME", ""),
        ("REFEREE_GAMES", ""),
    ];
    let (white, black) = (fake("w", "illegal"), fake("b", "play"));
    let args = ["play", "--games", "2", "chess", &white, &black];

    let first = referee_with(args, b"", &env, Some(dir.path()));
    assert_eq!(first.code, Some(0), "{first:?}");
    assert!(
        first.stdout.contains("2 games played, 0 judge errors"),
        "{first:?}"
    );
    assert!(
        first.stderr.contains("making its Python environment"),
        "{first:?}"
    );
    let copies = unpacked(&home);
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(copies[0].join("judge.py").is_file() && copies[0].join(".venv").is_dir());

    let again = referee_with(args, b"", &env, Some(dir.path()));
    assert_eq!(again.code, Some(0), "{again:?}");
    assert!(!again.stderr.contains("making its Python"), "{again:?}");

    std::fs::write(
        dir.path().join("match.toml"),
        format!(
            "game = \"chess\"\ngames = 2\n[[entrant]]\nname = \"w\"\ncommand = {:?}\n\
             [[entrant]]\nname = \"b\"\ncommand = {:?}\n",
            [python(), fixture("chess/fake.py"), "illegal".into()],
            [python(), fixture("chess/fake.py"), "play".into()],
        ),
    )
    .unwrap();
    let tournament = referee_with(
        ["tournament", "match.toml", "--out", "out"],
        b"",
        &env,
        Some(dir.path()),
    );
    assert_eq!(tournament.code, Some(0), "{tournament:?}");
    let pgn = std::fs::read_to_string(dir.path().join("out/games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 2, "{pgn}");
    assert_eq!(unpacked(&home).len(), 1);
}

#[test]
fn referee_games_points_at_an_organisers_copy() {
    let Some((dir, home)) = folder_and_home() else {
        return;
    };
    let games = format!("{}/games", root());
    let env = [("HOME", home.to_str().unwrap()), ("REFEREE_GAMES", &games)];
    let (white, black) = (fake("w", "illegal"), fake("b", "play"));
    let run = referee_with(
        ["play", "--games", "2", "chess", &white, &black],
        b"",
        &env,
        Some(dir.path()),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        unpacked(&home).is_empty(),
        "unpacked although REFEREE_GAMES has it"
    );
}

#[test]
fn an_unknown_game_lists_the_shipped_ones() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::write(
        dir.path().join("t.toml"),
        "game = \"chess960\"\ngames = 2\n",
    )
    .unwrap();
    let run = referee_with(["tournament", "t.toml"], b"", &[], Some(dir.path()));
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(run.stderr.contains("acesup, chess, or the path"), "{run:?}");
}
