//! `referee league` through the real binary (issue 31): a league over a
//! folder of submissions that come and go while it plays, its SQLite
//! database, and its export as a tournament's output.

mod common;

use std::path::Path;
use std::process::Stdio;

use common::league::{
    QUICK, Running, assert_numbered, chomp_of_three, duel_class, entrants, exported, run_args,
};
use common::{Marker, assert_has, fixture, referee, referee_ok, write_file};
use serde_json::Value;

/// The league plays its glob, stops at --games, and a league started again
/// on the database goes on (after a SIGKILL too) with nothing doubled; its
/// export is a tournament's output that `report` reads.
#[test]
fn a_league_goes_on_where_it_stopped_and_exports_as_a_tournament() {
    let dir = tempfile::tempdir().unwrap();
    let file = duel_class(dir.path(), &["ann", "bob", "cat"], &["cat"]);
    let db = dir.path().join("league.db");
    let run = common::league::run(&file, &db, &["--games", "6", "--jobs", "2"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stderr, "league: ann@v1 enters");
    assert_has(&run.stdout, "standings after 6 games");
    assert_eq!(exported(dir.path(), &db).len(), 6);

    // Killed outright mid-game, it loses at most the games in flight.
    let marker = Marker::new();
    let mut running = Running::start(&file, &db, &["--jobs", "2"], &marker);
    running.wait("game 10", |out, _| out.contains("game 10:"));
    assert_eq!(running.end(nix::sys::signal::Signal::SIGKILL), None);
    marker.assert_none_left();
    let after_kill = exported(dir.path(), &db).len();
    assert!(after_kill >= 10, "{after_kill}");

    let run = common::league::run(&file, &db, &["--games", &(after_kill + 4).to_string()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stderr, &format!("({after_kill} games so far)"));
    let records = exported(dir.path(), &db);
    assert_eq!(records.len(), after_kill + 4);
    assert_numbered(&records);
    referee_ok(["report", dir.path().join("export").to_str().unwrap()]);
    let page = std::fs::read_to_string(dir.path().join("export/report.html")).unwrap();
    assert!(page.contains("cat@v1"), "the report names the versions");
    let standings: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("export/standings.json")).unwrap(),
    )
    .unwrap();
    let games: u64 = standings
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["games"].as_u64().unwrap())
        .sum();
    assert_eq!(games as usize, 2 * records.len(), "two seats a game");
}

/// While the league plays: a changed folder enters as the next version and
/// the one before stops playing; a failed build keeps the last good
/// version playing; a removed folder leaves; a second league on the same
/// database is refused; SIGTERM ends it with 130 and every game kept.
#[test]
fn entrants_come_and_go_while_the_league_plays() {
    let dir = tempfile::tempdir().unwrap();
    let file = duel_class(dir.path(), &["ann", "bob", "cat"], &[]);
    // dan's folder is built by make, which writes pc2 and a stamp: what a
    // build writes is no source, so dan stays at v1 however often the
    // league looks again.
    let dan = dir.path().join("subs/dan");
    std::fs::create_dir_all(&dan).unwrap();
    std::fs::copy(fixture("duel/weak.sh"), dan.join("bot.sh")).unwrap();
    write_file(
        &dan,
        "Makefile",
        "pc2: bot.sh\n\tcp bot.sh pc2 && chmod +x pc2 && date +%N > stamp\n",
    );
    let db = dir.path().join("league.db");
    let marker = Marker::new();
    let mut running = Running::start(&file, &db, &QUICK, &marker);
    running.wait("a few games", |out, _| out.contains("game 3:"));

    let second = common::league::run(&file, &db, &["--games", "1"]);
    assert_eq!(second.code, Some(64), "{second:?}");
    assert_has(&second.stderr, "a league running now");

    // ann's new version: the strong player.
    let ann = dir.path().join("subs/ann");
    // Replaced as an editor or git does, by a rename: copying over a
    // program that is running fails with "Text file busy".
    let next = dir.path().join("strong.sh");
    std::fs::copy(fixture("duel/strong.sh"), &next).unwrap();
    std::fs::rename(&next, ann.join("pc2")).unwrap();
    running.wait("ann@v2 playing", |out, err| {
        err.contains("league: ann@v2 enters") && out.contains("ann@v2")
    });
    // A build that fails: ann@v2 plays on.
    write_file(&ann, "Makefile", "pc2: bot.c\n\tcc -o pc2 bot.c\n");
    write_file(&ann, "bot.c", "this is not C\n");
    running.wait("ann@v3's failure", |_, err| {
        err.contains("league: ann@v3 did not build") && err.contains("ann@v2 keeps playing")
    });
    let cat = dir.path().join("subs/cat");
    std::fs::remove_dir_all(&cat).unwrap();
    running.wait("cat leaving", |_, err| err.contains("league: cat leaves"));
    // Back, unchanged: the same version plays again.
    std::fs::create_dir(&cat).unwrap();
    std::fs::copy(fixture("duel/weak.sh"), cat.join("pc2")).unwrap();
    running.wait("cat back", |_, err| err.contains("league: cat@v1 plays"));
    std::fs::remove_dir_all(&cat).unwrap();
    running.wait("cat leaving again", |_, err| {
        err.matches("league: cat leaves").count() == 2
    });
    // ann@v1's copy goes once its games are over (its next version
    // entered); cat's stays, its last version, which plays again if it
    // comes back.
    let copies = || {
        let mut copies: Vec<String> = std::fs::read_dir(dir.path().join("league.db.versions"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        copies.sort();
        copies
    };
    let owners = |copies: &[String]| -> Vec<String> {
        copies
            .iter()
            .map(|c| c.split('-').next().unwrap().to_owned())
            .collect()
    };
    running.wait("the copies no version plays from removed", |_, _| {
        owners(&copies()) == ["ann", "bob", "cat", "dan"]
    });
    let games_then = running.stdout().matches("game ").count();
    running.wait("more games", |out, _| {
        out.matches("game ").count() > games_then + 4
    });
    let stderr = running.stderr();
    assert_eq!(running.end(nix::sys::signal::Signal::SIGTERM), Some(130));
    marker.assert_none_left();
    assert_has(&stderr, "league: dan@v1 enters");
    // Two bots at a table on two CPUs: no spare one for a build.
    if std::thread::available_parallelism().map_or(1, |n| n.get()) <= 2 {
        assert_has(
            &stderr,
            "league: building ann: no new game starts until it is done",
        );
    }
    assert!(
        !stderr.contains("dan@v2"),
        "a build called for the next: {stderr}"
    );
    assert!(dan.join("stamp").is_file());
    let copies = copies();
    assert_eq!(owners(&copies), ["ann", "bob", "cat", "dan"], "{copies:?}");
    // Each version keeps its build's output: make's commands, a failure's
    // compiler message.
    let log = |name: &str, version: u32| common::league::build_log(&db, name, version);
    assert!(log("dan", 1).contains("cp bot.sh pc2"), "{}", log("dan", 1));
    assert!(log("ann", 3).contains("bot.c"), "{}", log("ann", 3));

    // The standings from the database alone: current versions, or all.
    let show = referee_ok(["league", "show", db.to_str().unwrap()]);
    assert!(
        show.stdout.contains("ann@v2") && !show.stdout.contains("ann@v1"),
        "{}",
        show.stdout
    );
    assert!(!show.stdout.contains("cat@v1"), "cat left: {}", show.stdout);
    let all = referee(["league", "show", "--all", db.to_str().unwrap()], b"");
    assert!(
        all.stdout.contains("ann@v1") && all.stdout.contains("cat@v1"),
        "{}",
        all.stdout
    );

    let records = exported(dir.path(), &db);
    assert_numbered(&records);
    let seated: Vec<Vec<String>> = records.iter().map(entrants).collect();
    let first_v2 = seated
        .iter()
        .position(|e| e.contains(&"ann@v2".to_owned()))
        .unwrap();
    // Once ann@v2 played, ann@v1 started no game (one game at a time).
    assert!(
        seated[first_v2..]
            .iter()
            .all(|e| !e.contains(&"ann@v1".to_owned())),
        "{seated:?}"
    );
    assert!(seated.iter().all(|e| !e.contains(&"ann@v3".to_owned())));
    assert!(
        seated[..first_v2]
            .iter()
            .any(|e| e.contains(&"ann@v1".to_owned()))
    );
    // The last games are between those still in the league.
    let last = seated.last().unwrap();
    assert!(
        last.iter()
            .all(|e| ["ann@v2", "bob@v1", "dan@v1"].contains(&e.as_str())),
        "{last:?}"
    );
}

/// A version plays as it was built: its folder is copied as it enters.
/// A change the league has not looked at yet (here, with a scan an hour
/// away, never) does not play under its name, and its program removed
/// from the submission's folder still plays.
#[test]
fn a_version_plays_from_a_copy_made_as_it_entered() {
    let dir = tempfile::tempdir().unwrap();
    let file = duel_class(dir.path(), &["ann", "bob"], &[]);
    let db = dir.path().join("league.db");
    let marker = Marker::new();
    let mut running = Running::start(&file, &db, &["--jobs", "1", "--scan-every", "1h"], &marker);
    running.wait("a few games", |out, _| out.contains("game 2:"));
    std::fs::remove_file(dir.path().join("subs/ann/pc2")).unwrap();
    let games_then = running.stdout().matches("game ").count();
    running.wait("more games", |out, _| {
        out.matches("game ").count() > games_then + 4
    });
    assert_eq!(running.end(nix::sys::signal::Signal::SIGTERM), Some(130));
    marker.assert_none_left();
    let records = exported(dir.path(), &db);
    assert!(records.len() > 6, "{records:?}");
    for record in &records {
        for result in record["players"].as_array().unwrap() {
            assert_eq!(result["status"], "ok", "{record}");
        }
    }
    let copies: Vec<_> = std::fs::read_dir(dir.path().join("league.db.versions"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(copies.len(), 2, "{copies:?}");
    assert!(copies.iter().any(|c| c.starts_with("ann-")), "{copies:?}");
}

/// Under `--sandbox` without bubblewrap, the league says so before it
/// builds anything, as a tournament does, and makes no database.
#[test]
fn a_sandboxed_league_without_bubblewrap_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = duel_class(dir.path(), &["ann", "bob"], &[]);
    let db = dir.path().join("league.db");
    // A PATH with the judge's interpreter and no bwrap.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let python = std::process::Command::new("sh")
        .args(["-c", "command -v python3"])
        .output()
        .unwrap();
    let python = String::from_utf8(python.stdout).unwrap();
    std::os::unix::fs::symlink(python.trim(), bin.join("python3")).unwrap();
    let out = std::process::Command::new(common::referee_bin())
        .args(run_args(&file, &db, &["--games", "2", "--sandbox"]))
        .env("PATH", &bin)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{stderr}");
    assert_has(&stderr, "`bwrap` is not installed");
    assert!(!db.exists());
}

/// The keys of a run of so many games make no sense in a league: each is
/// refused, naming the file and what to do instead.
#[test]
fn a_leagues_file_refuses_the_keys_of_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = duel_class(dir.path(), &["ann", "bob"], &[]);
    let text = std::fs::read_to_string(&file).unwrap();
    for (key, says) in [
        ("games = 10\n", "games: a league plays until it is stopped"),
        (
            "format = \"gauntlet\"\ngauntlet = \"ann\"\n",
            "format = \"gauntlet\": a league picks its tables by matchmaking",
        ),
        ("standings_every = 5\n", "standings_every"),
    ] {
        std::fs::write(&file, format!("{key}{text}")).unwrap();
        let run = common::league::run(&file, &dir.path().join("l.db"), &["--games", "1"]);
        assert_eq!(run.code, Some(64), "{run:?}");
        assert_has(&run.stderr, "league.toml");
        assert!(run.stderr.contains(says), "{key}: {}", run.stderr);
    }
}

/// A one-player game: each version plays the deals in the same order, so
/// versions compare on the same deals.
#[test]
fn in_a_one_player_league_every_version_plays_the_same_deals() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_file(
        dir.path(),
        "solo.toml",
        format!(
            "game = \"evensteven\"\nseed = 5\n[limits]\ntimeout = \"2s\"\n\
             [[entrant]]\nname = \"ref\"\ncommand = [\"{}\"]\n\
             [[entrant]]\nname = \"again\"\ncommand = [\"{}\"]\n",
            common::evensteven_bin(),
            common::evensteven_bin()
        ),
    );
    let db = dir.path().join("solo.db");
    let run = common::league::run(&file, &db, &["--games", "10", "--jobs", "1"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = exported(dir.path(), &db);
    assert_eq!(records.len(), 10);
    let mut deals: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    for r in &records {
        let who = entrants(r).remove(0);
        let deal = serde_json::json!([r["n"], r["deal_seed"]]);
        assert!(r["n"].is_u64(), "{r}");
        deals.entry(who).or_default().push(deal);
    }
    assert_eq!(deals.len(), 2, "{deals:?}");
    let (a, b) = (&deals["ref@v1"], &deals["again@v1"]);
    let n = a.len().min(b.len());
    assert!(n >= 2, "{deals:?}");
    assert_eq!(a[..n], b[..n], "the same deals in the same order");
}

/// A table of three (Chomp, the reference bots built from their folders):
/// games come in rounds of one game per seat on one array, every version
/// of the table in every seat once.
#[test]
fn a_chomp_league_seats_three_in_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let file = chomp_of_three(
        dir.path(),
        "chomp.toml",
        &format!(
            "[[entrant]]\nname = \"strong\"\ndir = \"{root}/bots/chomp\"\n\
             [[entrant]]\nname = \"greedy\"\ndir = \"{root}/bots/chomp-greedy\"\n\
             [[entrant]]\nname = \"greedy-2\"\ndir = \"{root}/bots/chomp-greedy\"\n"
        ),
    );
    let db = dir.path().join("chomp.db");
    let run = common::league::run(&file, &db, &["--games", "6", "--jobs", "1"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = exported(dir.path(), &db);
    assert_eq!(records.len(), 6);
    for round in records.chunks(3) {
        let seats: Vec<Vec<String>> = round.iter().map(entrants).collect();
        for seat in 0..3 {
            let mut at: Vec<&String> = seats.iter().map(|s| &s[seat]).collect();
            at.sort();
            at.dedup();
            assert_eq!(at.len(), 3, "seat {seat} in a round: {seats:?}");
        }
    }
}

/// The lines of `text` that give an Elo: the line under the table, and
/// the fastchess lines.
fn elo_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("Elo")).collect()
}

/// Issue 51: a league of two entrants stopped with SIGTERM after 4 games
/// printed `Elo: none yet, no game of the two alone against each other`,
/// while `league show` on the same database gave an Elo. The league's
/// closing lines are `league show`'s, from one function: on an interrupt
/// and at the end of `--games` alike.
#[test]
fn a_league_closes_with_the_elo_league_show_gives() {
    let dir = tempfile::tempdir().unwrap();
    let file = duel_class(dir.path(), &["ann", "bob"], &["bob"]);
    let db = dir.path().join("league.db");
    let show = |db: &Path| {
        let run = referee_ok(["league", "show", db.to_str().unwrap()]);
        run.stdout
    };
    let marker = Marker::new();
    let mut running = Running::start(&file, &db, &["--jobs", "1"], &marker);
    running.wait("game 4", |out, _| out.contains("game 4:"));
    let (code, stdout) = running.end_with_stdout(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(code, Some(130), "{stdout}");
    marker.assert_none_left();
    let shown = show(&db);
    assert!(
        elo_lines(&shown)[0].starts_with("Elo: logistic, "),
        "{shown}"
    );
    assert_eq!(elo_lines(&stdout), elo_lines(&shown), "{stdout}\n{shown}");

    let games = exported(dir.path(), &db).len() + 2;
    let run = common::league::run(&file, &db, &["--games", &games.to_string(), "--jobs", "1"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let shown = show(&db);
    assert_has(&shown, &format!("standings after {games} games"));
    assert_eq!(
        elo_lines(&run.stdout),
        elo_lines(&shown),
        "{}\n{shown}",
        run.stdout
    );
}
