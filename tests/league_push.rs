//! A Chomp league through the real binary while its class pushes and
//! joins (issue 40, item 1): a new version or a new entrant used to crash
//! the league at its first game (`index out of bounds` in the per-array
//! tally, exit 70), so that every push was a restart.

mod common;

use std::path::{Path, PathBuf};

use common::league::{QUICK, Running, entrants, exported, games};
use common::{Marker, assert_lacks, referee_ok, write_file};

use serde_json::Value;

/// A submission's folder `subs/NAME` whose `pc2` runs the reference bot
/// `bot` (`chomp` or `chomp-greedy`); `tag` makes its source differ from
/// another of the same bot (a new version).
fn submission(dir: &Path, name: &str, bot: &str, tag: &str) {
    let folder = dir.join("subs").join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let program = match bot {
        "chomp" => env!("CARGO_BIN_EXE_chomp"),
        _ => env!("CARGO_BIN_EXE_chomp-greedy"),
    };
    // Written under another name and renamed over, as an editor or git
    // does: a program being run is never written into.
    let next = write_file(
        dir,
        format!(".{name}.pc2"),
        format!("#!/bin/sh\n# {tag}\nexec {program}\n"),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&next, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&next, folder.join("pc2")).unwrap();
}

/// A Chomp league of `seats` seats over `subs/*` in `dir`, on the
/// statement's arrays. Returns the league file.
fn chomp_class(dir: &Path, names: &[&str], seats: u32) -> PathBuf {
    for name in names {
        submission(dir, name, "chomp-greedy", "v1");
    }
    let root = env!("CARGO_MANIFEST_DIR");

    write_file(
        dir,
        "class.toml",
        format!(
            "game = \"chomp\"\nseed = 1\n[limits]\nprep = \"0s\"\n\
             arrays = \"{root}/tournaments/chomp/statement.txt\"\nseats = {seats}\n\
             [[entrant]]\nglob = \"subs/*\"\n"
        ),
    )
}

/// Three entrants play; while they do, a fourth joins and one pushes a new
/// version, twice over. The league neither panics nor stops: the newcomers
/// play, their games are judged as any other's, and SIGTERM ends it.
fn a_chomp_league_takes_pushes_and_joins(seats: u32) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = chomp_class(dir.path(), &["ann", "bob", "cat"], seats);
    let db = dir.path().join("class.db");
    let marker = Marker::new();
    let mut running = Running::start(&file, &db, &QUICK, &marker);
    running.wait("a few games", |out, _| games(out) >= 3);

    // A join: a new folder.
    submission(dir.path(), "dan", "chomp-greedy", "v1");
    running.wait("dan@v1 playing", |out, err| {
        err.contains("league: dan@v1 enters") && out.contains("dan@v1")
    });
    running.wait_games(3, "games after dan joined");
    // A push: ann's pc2 changed, now the stronger bot.
    submission(dir.path(), "ann", "chomp", "v2");
    running.wait("ann@v2 playing", |out, err| {
        err.contains("league: ann@v2 enters") && out.contains("ann@v2")
    });
    running.wait_games(3, "games after ann pushed");
    // And again, once the tally holds every array: a join and a push.
    submission(dir.path(), "eve", "chomp", "v1");
    submission(dir.path(), "bob", "chomp", "v2");
    running.wait("eve@v1 and bob@v2 playing", |out, err| {
        err.contains("league: eve@v1 enters")
            && err.contains("league: bob@v2 enters")
            && out.contains("eve@v1")
            && out.contains("bob@v2")
    });
    running.wait_games(4, "games after the second join and push");

    running.interrupt(&marker);

    let records = exported(dir.path(), &db);
    for new in ["dan@v1", "ann@v2", "eve@v1", "bob@v2"] {
        let played: Vec<&Value> = records
            .iter()
            .filter(|r| entrants(r).iter().any(|e| e == new))
            .collect();
        assert!(!played.is_empty(), "{new} played no game");
        // Played to its end by the bot: no seat of it the referee's.
        for record in played {
            for result in record["players"].as_array().unwrap() {
                assert_eq!(result["status"], "ok", "{record}");
            }
        }
    }
    // Each array is tallied for the newcomers too.
    let show = referee_ok(["league", "show", db.to_str().unwrap()]);
    assert_lacks(&show.stderr, "panicked");
    for name in ["ann@v2", "bob@v2", "cat@v1", "dan@v1", "eve@v1"] {
        assert!(show.stdout.contains(name), "{name}: {}", show.stdout);
    }
}

#[test]
fn a_chomp_league_of_three_seats_takes_pushes_and_joins() {
    a_chomp_league_takes_pushes_and_joins(3);
}

#[test]
fn a_chomp_league_of_two_seats_takes_pushes_and_joins() {
    a_chomp_league_takes_pushes_and_joins(2);
}

/// A league started again on its database, with a version that entered
/// while it ran, plays on: the versions of every entrant, then a new one.
#[test]
fn a_chomp_league_started_again_after_a_push_plays_on() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = chomp_class(dir.path(), &["ann", "bob", "cat"], 3);
    let db = dir.path().join("class.db");
    let run = common::league::run(&file, &db, &["--games", "4", "--jobs", "1"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    submission(dir.path(), "ann", "chomp", "v2");
    submission(dir.path(), "dan", "chomp-greedy", "v1");
    let run = common::league::run(&file, &db, &["--games", "12", "--jobs", "1"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_lacks(&run.stderr, "panicked");
    let records = exported(dir.path(), &db);
    assert_eq!(records.len(), 12);
    for new in ["ann@v2", "dan@v1"] {
        assert!(
            records.iter().any(|r| entrants(r).iter().any(|e| e == new)),
            "{new} played no game"
        );
    }
}

/// A student's folder `submissions/NAME` in `class` whose `pc2` notes in
/// `class/ran-from.txt` where it runs from, then plays as the greedy bot;
/// `tag` makes a new version.
fn student(class: &Path, name: &str, tag: &str) {
    let folder = class.join("submissions").join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let next = write_file(
        class,
        format!(".{name}.pc2"),
        format!(
            "#!/bin/sh\n# {tag}\necho \"$0\" >> '{}'\nexec {}\n",
            class.join("ran-from.txt").display(),
            env!("CARGO_BIN_EXE_chomp-greedy")
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&next, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&next, folder.join("pc2")).unwrap();
}

/// Games of the league's output (`game N: ...` lines) that seat `version`.
fn games_of(stdout: &str, version: &str) -> usize {
    stdout
        .lines()
        .filter(|l| l.starts_with("game ") && l.contains(&format!("{version} ")))
        .count()
}

/// Issue 40, item 1: a term as docs/league.md's "A teacher's term" runs
/// it, from inside the class's folder with the bare names it prints, and
/// in one run what a term brings: a push, a join, a leave, a broken push,
/// a restart after it, a SIGKILL and a restart, then the export and its
/// report. Before: versions played from the live folder (their copies
/// removed as "played by no version"), and after the broken push and a
/// restart the student's last good version never played again.
#[test]
fn a_term_as_the_docs_run_it() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let class = dir.path().join("class");
    for name in ["ann", "bob", "cat"] {
        student(&class, name, "v1");
    }
    let root = env!("CARGO_MANIFEST_DIR");
    write_file(
        &class,
        "class.toml",
        format!(
            "game = \"chomp\"\nseed = 2026\n[limits]\nseats = 3\nprep = \"0s\"\n\
             arrays = \"{root}/tournaments/chomp/statement.txt\"\n\
             [[entrant]]\nglob = \"submissions/*/\"\n"
        ),
    );
    let mut args = vec!["league", "run", "class.toml", "--db", "class.db"];
    args.extend(QUICK);
    let marker = Marker::new();
    let mut running = Running::start_in(&class, &args, &marker);
    running.wait("games of v1", |out, _| games_of(out, "ann@v1") >= 2);

    // A push, a join, a leave.
    student(&class, "ann", "v2");
    running.wait("ann@v2", |out, _| games_of(out, "ann@v2") >= 1);
    student(&class, "dan", "v1");
    running.wait("dan@v1", |out, _| games_of(out, "dan@v1") >= 1);
    std::fs::remove_dir_all(class.join("submissions/cat")).unwrap();
    running.wait("cat leaves", |_, err| err.contains("league: cat leaves"));
    // A broken push: bob@v1 keeps playing.
    write_file(
        &class,
        "submissions/bob/Makefile",
        "all:\n\t@echo \"bot.c:1:1: error: expected ';'\" >&2; exit 1\n",
    );
    running.wait("bob@v2 failing", |_, err| {
        err.contains("bob@v2 did not build")
    });
    running.wait_games(3, "games after the broken push");
    assert_eq!(
        running.end(nix::sys::signal::Signal::SIGTERM),
        Some(130),
        "{}",
        "the league's end"
    );

    // Started again after the broken push: bob plays his last good version.
    let mut running = Running::start_in(&class, &args, &marker);
    running.wait("bob@v1 after the restart", |out, _| {
        games_of(out, "bob@v1") >= 1
    });
    // Killed, and started again: it plays on.
    running.end(nix::sys::signal::Signal::SIGKILL);
    let mut running = Running::start_in(&class, &args, &marker);
    running.wait_games(3, "games after the SIGKILL");
    running.interrupt(&marker);

    // Every version played from its copy, never from the live folder.
    let db = class.join("class.db");
    let records = exported(dir.path(), &db);
    for record in &records {
        for result in record["players"].as_array().unwrap() {
            assert_eq!(result["status"], "ok", "{record}");
        }
    }
    let ran_from = std::fs::read_to_string(class.join("ran-from.txt")).unwrap();
    assert!(ran_from.lines().count() >= 3, "{ran_from}");
    for line in ran_from.lines() {
        assert!(line.contains("/class/class.db.versions/"), "{ran_from}");
    }
    // The export's report counts every game.
    referee_ok(["report", dir.path().join("export").to_str().unwrap()]);
    let html = std::fs::read_to_string(dir.path().join("export/report.html")).unwrap();
    let counted = format!("{} of {} games", records.len(), records.len());
    assert!(html.contains(&counted), "not {counted:?} in the report");
}
