//! A league's matchmaking through the real binary (issue 40, items 6 and
//! 9): its knobs are the settings of the file's `[league]` table, which a
//! league takes (a misspelt or senseless one refused, named) and a
//! tournament refuses; and a league with fewer entrants than a table's
//! seats waits for more instead of refusing to start.

mod common;

use std::path::{Path, PathBuf};

use common::league::{Running, chomp_of_three, games};
use common::{Marker, assert_has, assert_lacks, fixture, referee, referee_ok, write_file};

/// A duel league (`duel/game.toml`, two seats) over `subs/*` in `dir`,
/// one folder per name, with `extra` at the end of its file. Returns the
/// file.
fn duel_class(dir: &Path, names: &[&str], extra: &str) -> PathBuf {
    for name in names {
        let folder = dir.join("subs").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(fixture("duel/weak.sh"), folder.join("pc2")).unwrap();
    }

    write_file(
        dir,
        "class.toml",
        format!(
            "game = \"{}\"\nseed = 3\n[limits]\nseats = 2\n[[entrant]]\nglob = \"subs/*\"\n{extra}",
            fixture("duel/game.toml")
        ),
    )
}

fn league(file: &Path, db: &Path, args: &[&str]) -> common::Run {
    common::league::run(file, db, args)
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// A league's file with a `[league]` table plays by it.
#[test]
fn a_league_takes_its_matchmaking_from_the_file() {
    let dir = tempdir();
    let file = duel_class(
        dir.path(),
        &["ann", "bob", "cat"],
        "[league]\nknown = 3.0\nbatch = 4\nmin_share = 0.25\nmax_share = 2.0\nwindow = 50\n",
    );
    let db = dir.path().join("class.db");
    let run = league(&file, &db, &["--games", "12", "--jobs", "1"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(games(&run.stdout), 12, "{}", run.stdout);
}

/// A misspelt key, or a value that makes no sense, is refused before the
/// league starts, named with the file (and the line, for the key).
#[test]
fn a_league_refuses_a_misspelt_or_senseless_setting() {
    let dir = tempdir();
    for (table, says) in [
        ("[league]\nknwon = 2.0\n", "unknown field `knwon`"),
        ("[league]\nwindow = 0\n", "league.window must be from 1"),
        (
            "[league]\nmin_share = 3\n",
            "league.min_share must be from 0 to 1",
        ),
        ("[league]\nbatch = \"many\"\n", "invalid type"),
    ] {
        let file = duel_class(dir.path(), &["ann", "bob"], table);
        let db = dir.path().join("refused.db");
        let run = league(&file, &db, &["--games", "1"]);
        assert_eq!(run.code, Some(64), "{table}: {run:?}");
        assert_has(&run.stderr, "class.toml");
        assert!(run.stderr.contains(says), "{table}: {}", run.stderr);
        assert!(!db.exists(), "{table}: nothing is made");
    }
    let file = duel_class(dir.path(), &["ann", "bob"], "[league]\nknwon = 2.0\n");
    let run = league(&file, &dir.path().join("l.db"), &["--games", "1"]);
    assert_has(&run.stderr, "line 8");
}

/// `referee tournament` on a league's file says the `[league]` table is a
/// league's, as it refuses every setting it has no use for.
#[test]
fn a_tournament_refuses_a_league_table() {
    let dir = tempdir();
    let file = duel_class(
        dir.path(),
        &["ann", "bob"],
        "games = 2\n[league]\nbatch = 10\n",
    );
    // `games` must come before any table.
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("games = 2\n", "");
    std::fs::write(&file, format!("games = 2\n{text}")).unwrap();
    let run = referee(["tournament", file.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "class.toml");
    assert_has(
        &run.stderr,
        "[league]: the settings of a league's matchmaking",
    );
    // Without it the same file is a tournament.
    std::fs::write(
        &file,
        format!("games = 2\n{}", text.replace("[league]\nbatch = 10\n", "")),
    )
    .unwrap();
    referee_ok(["tournament", file.to_str().unwrap()]);
}

/// A submission's folder `subs/NAME`, its `pc2` the greedy Chomp bot.
fn chomp_submission(dir: &Path, name: &str) {
    let folder = dir.join("subs").join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let next = write_file(
        dir,
        format!(".{name}.pc2"),
        format!("#!/bin/sh\nexec {}\n", env!("CARGO_BIN_EXE_chomp-greedy")),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&next, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&next, folder.join("pc2")).unwrap();
}

/// The start of term: two submissions and a game of three seats. The
/// league does not refuse to start (it once exited 64): it says it waits
/// for three entrants, and plays when a third folder appears.
#[test]
fn a_league_with_fewer_entrants_than_seats_waits_for_more() {
    let dir = tempdir();
    chomp_submission(dir.path(), "ann");
    chomp_submission(dir.path(), "bob");
    let file = chomp_of_three(dir.path(), "class.toml", "[[entrant]]\nglob = \"subs/*\"\n");
    let db = dir.path().join("class.db");
    let marker = Marker::new();
    let mut running = Running::start(
        &file,
        &db,
        &["--games", "3", "--jobs", "1", "--scan-every", "100ms"],
        &marker,
    );
    running.wait("the league waiting for a third", |_, err| {
        err.contains("league: waiting for 3 entrants")
    });
    let out = running.stdout();
    assert_lacks(&out, "game ");
    chomp_submission(dir.path(), "cat");
    running.wait("cat@v1 entering", |_, err| err.contains("cat@v1"));
    let status = running.finish();
    let (out, err) = (running.stdout(), running.stderr());
    assert_eq!(status, Some(0), "{out}\n{err}");
    let games: Vec<&str> = out.lines().filter(|l| l.starts_with("game ")).collect();
    assert_eq!(games.len(), 3, "{out}");
    for game in games {
        for name in ["ann@v1", "bob@v1", "cat@v1"] {
            assert_has(game, name);
        }
    }
    marker.assert_none_left();
}

/// `page_stderr` in the `[league]` table takes true or false; anything
/// else is refused, naming the key.
#[test]
fn page_stderr_takes_true_or_false() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = write_file(
        dir.path(),
        "league.toml",
        format!(
            "game = \"{}\"\n[limits]\nseats = 2\n[[entrant]]\nglob = \"subs/*\"\n\
             [league]\npage_stderr = \"yes\"\n",
            common::fixture("duel/game.toml")
        ),
    );
    let db = dir.path().join("league.db");
    let run = common::league::run(&file, &db, &["--games", "1"]);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(run.stderr.contains("page_stderr: true or false"), "{run:?}");
}
