//! The shipped chess game by its name, wherever the binary runs: from a
//! folder with no `games/` in sight, with a fresh home (the case of
//! `cargo install`, which installs the binary alone), the game file and
//! the book are unpacked on first use and the judge is the binary's own
//! (no Python, no venv); then a second run and a tournament file's
//! `game = "chess"` use that copy, and `REFEREE_GAMES` points at an
//! organiser's own copy instead.

#[path = "common/chess.rs"]
mod chess_common;
mod common;

use std::path::Path;

use chess_common::{fake, fake_engine};
use common::{referee_with, write_file};

fn root() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

/// The folders the shipped chess game was unpacked into under `home`.
fn unpacked(home: &Path) -> Vec<std::path::PathBuf> {
    let games = home.join(".local/share/referee/games");
    std::fs::read_dir(&games)
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

/// A working folder with an empty home inside.
fn folder_and_home() -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    Some((dir, home))
}

/// The environment of a run whose data folder is `home`'s and that has no
/// organiser's copy of the shipped games: they are unpacked there.
fn home_alone(home: &Path) -> [(&'static str, &str); 3] {
    [
        ("HOME", home.to_str().unwrap()),
        ("XDG_DATA_HOME", ""),
        ("REFEREE_GAMES", ""),
    ]
}

/// `referee play OPTIONS chess W B` in `dir` with `env`, between two fake
/// engines run with `white`'s and `black`'s arguments.
fn play_chess(
    dir: &Path,
    env: &[(&str, &str)],
    options: &[&str],
    (white, black): (&str, &str),
) -> common::Run {
    let (white, black) = (fake("w", white), fake("b", black));
    let mut args = vec!["play"];
    args.extend_from_slice(options);
    args.extend(["chess", &white, &black]);
    referee_with(args, b"", env, Some(dir))
}

/// Fails the test unless `run` played its two games without a judge
/// error.
#[track_caller]
fn assert_two_games_played(run: &common::Run) {
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("2 games played, 0 judge errors"),
        "{run:?}"
    );
}

#[test]
fn chess_by_its_name_runs_from_anywhere() {
    let Some((dir, home)) = folder_and_home() else {
        return;
    };
    let env = home_alone(&home);
    let play = || play_chess(dir.path(), &env, &["--games", "2"], ("illegal", "play"));

    assert_two_games_played(&play());
    let copies = unpacked(&home);
    assert_eq!(copies.len(), 1, "{copies:?}");
    let mut files: Vec<String> = std::fs::read_dir(&copies[0])
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["game.toml", "openings.epd"]);

    let again = play();
    assert_eq!(again.code, Some(0), "{again:?}");
    assert!(!again.stderr.contains("WARN"), "{again:?}");

    write_file(
        dir.path(),
        "match.toml",
        format!(
            "game = \"chess\"\ngames = 2\n[[entrant]]\nname = \"w\"\ncommand = {:?}\n\
             [[entrant]]\nname = \"b\"\ncommand = {:?}\n",
            [fake_engine(), "illegal"],
            [fake_engine(), "play"],
        ),
    );
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

/// Under `--sandbox` (engines in bubblewrap, each as it would be for
/// untrusted code) the judge is still the referee's own binary, started
/// outside the sandbox, and the games play.
#[test]
fn chess_by_its_name_plays_under_the_sandbox() {
    common::need_bwrap();
    let Some((dir, home)) = folder_and_home() else {
        return;
    };
    let options = ["--sandbox", "--games", "2", "--game-option", "max_plies=8"];
    let run = play_chess(dir.path(), &home_alone(&home), &options, ("plays", "plays"));
    assert_two_games_played(&run);
}

#[test]
fn referee_games_points_at_an_organisers_copy() {
    let Some((dir, home)) = folder_and_home() else {
        return;
    };
    let games = format!("{}/games", root());
    let env = [("HOME", home.to_str().unwrap()), ("REFEREE_GAMES", &games)];
    let run = play_chess(dir.path(), &env, &["--games", "2"], ("illegal", "play"));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        unpacked(&home).is_empty(),
        "unpacked although REFEREE_GAMES has it"
    );
}

#[test]
fn an_unknown_game_lists_the_shipped_ones() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    write_file(dir.path(), "t.toml", "game = \"chess960\"\ngames = 2\n");
    let run = referee_with(["tournament", "t.toml"], b"", &[], Some(dir.path()));
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(run.stderr.contains("acesup, chess, or the path"), "{run:?}");
}

/// Every entry under `dir` (not following links) that is not owned by
/// this process's user or that another user may write: `(path, mode)`.
fn loose(dir: &Path) -> Vec<(std::path::PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt;
    // This process's user: the owner of what it just made.
    let me = tempfile::tempdir()
        .unwrap()
        .path()
        .metadata()
        .unwrap()
        .uid();
    let mut found = vec![];
    let mut todo = vec![dir.to_owned()];
    while let Some(at) = todo.pop() {
        let meta = std::fs::symlink_metadata(&at).unwrap();
        let writable = !meta.is_symlink() && meta.mode() & 0o022 != 0;
        if meta.uid() != me || writable {
            found.push((at.clone(), meta.mode() & 0o7777));
        }
        if meta.is_dir() {
            todo.extend(std::fs::read_dir(&at).unwrap().map(|e| e.unwrap().path()));
        }
    }
    found
}

/// Issue 49, failure 4: the shipped chess game unpacked in the data folder
/// was used as it was found, so a judge a bot had put there (run once
/// without `--sandbox`, as the organiser) ran at the organiser's next run.
/// Each run checks the copy against the binary's files: a game file that
/// names another judge, a file added beside it, a file others may write
/// are named on the log and the copy is made again, so nothing planted
/// runs and the games play.
#[test]
fn a_changed_or_planted_file_in_the_unpacked_game_never_runs() {
    let Some((dir, home)) = folder_and_home() else {
        return;
    };
    let env = home_alone(&home);
    // A folder of the referee's made group- and world-writable (a umask of
    // 000) is closed to others, not used as it is.
    let referee = home.join(".local/share/referee");
    std::fs::create_dir_all(&referee).unwrap();
    chmod(&referee, 0o777);
    let play = || {
        let options = ["--games", "2", "--game-option", "max_plies=6"];
        let run = play_chess(dir.path(), &env, &options, ("plays", "plays"));
        assert_two_games_played(&run);
        run
    };
    play();
    let copies = unpacked(&home);
    assert_eq!(copies.len(), 1, "{copies:?}");
    let copy = &copies[0];
    assert_eq!(loose(&referee), [], "writable by others or not ours");

    // A bot made the game file name a judge of its own (it would leave a
    // mark and stop), planted a file beside it and made the book writable
    // by all.
    let marks = dir.path().join("marks");
    std::fs::create_dir(&marks).unwrap();
    let game = copy.join("game.toml");
    let shipped = std::fs::read_to_string(&game).unwrap();
    let planted = shipped.replace(
        "judge = [\"referee\", \"__chess-judge\"]",
        &format!(
            "judge = [\"sh\", \"-c\", \"touch {}\"]",
            marks.join("judge").display()
        ),
    );
    assert_ne!(planted, shipped);
    std::fs::write(&game, planted).unwrap();
    write_file(copy, "planted.sh", "touch marks/planted\n");
    chmod(&copy.join("openings.epd"), 0o666);
    let run = play();
    for name in [
        "game.toml changed",
        "planted.sh added",
        "openings.epd is writable by others",
    ] {
        assert!(run.stderr.contains(name), "{name}: {run:?}");
    }
    assert_eq!(
        std::fs::read_to_string(&game).unwrap(),
        shipped,
        "not made again"
    );
    assert!(!copy.join("planted.sh").exists());
    assert_eq!(loose(&referee), []);

    // What was made again is used as it is: no warning.
    let run = play();
    assert!(!run.stderr.contains("WARN"), "{run:?}");
    assert_eq!(unpacked(&home), copies);
    let ran: Vec<_> = std::fs::read_dir(&marks).unwrap().collect();
    assert!(ran.is_empty(), "planted code ran: {ran:?}");
}

/// The referee's folder in the data folder belongs to someone else (who
/// could put a judge of their own there): refused, naming it.
#[test]
fn a_games_folder_of_another_user_is_refused() {
    use std::os::unix::fs::MetadataExt;
    let Some((dir, home)) = folder_and_home() else {
        return;
    };
    if std::fs::metadata(dir.path()).unwrap().uid() != 0 {
        eprintln!("skipped: chown needs root");
        return;
    }
    let games = home.join(".local/share/referee/games");
    std::fs::create_dir_all(&games).unwrap();
    std::os::unix::fs::chown(&games, Some(65534), Some(65534)).unwrap();
    let env = home_alone(&home);
    let run = play_chess(dir.path(), &env, &["--games", "1"], ("plays", "plays"));
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(run.stderr.contains(games.to_str().unwrap()), "{run:?}");
    assert!(run.stderr.contains("owned by uid 65534"), "{run:?}");
    assert!(unpacked(&home).is_empty());
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
