//! A league's workers through the real binary (issue 42), on SQLite: a
//! league that plays no game itself (`--jobs 0`) and workers that play
//! its tables (`referee league work`); a worker killed outright mid-game;
//! a worker that cannot see the versions' copies; a database of schema 1.
//! The same on PostgreSQL, and under Slurm, is in tests/league_postgres.rs
//! and tests/slurm.rs.

mod common;

use std::path::{Path, PathBuf};

use common::league::{Running, exported, exported_numbered, games};
use common::{Marker, assert_has, referee, referee_ok, write_file};

/// A league over `subs/*` in `dir`: one folder per name, each a duel
/// player that waits `wait` seconds before each move. The league file.
fn class(dir: &Path, names: &[&str], wait: &str) -> PathBuf {
    for name in names {
        player(
            dir,
            name,
            &format!("#!/bin/sh\nwhile read -r _ _; do sleep {wait}; echo 1; done\n"),
        );
    }
    common::league::duel_glob_file(dir)
}

/// A fresh folder in the tests' temporary one holding [`class`]`(names,
/// wait)`: the folder, the league file, and where its database goes.
fn fresh_class(names: &[&str], wait: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = class(dir.path(), names, wait);
    let db = dir.path().join("league.db");
    (dir, file, db)
}

/// `subs/NAME/pc2` in `dir`: the program `script`, executable.
fn player(dir: &Path, name: &str, script: &str) {
    let pc2 = write_file(dir.join("subs").join(name), "pc2", script);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pc2, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The arguments of `referee league work --db DB ARGS`.
fn work_args<'a>(db: &'a Path, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["league", "work", "--db", db.to_str().unwrap()];
    all.extend(args);
    all
}

/// `referee league work --db DB ARGS`, started in `dir`.
fn worker(dir: &Path, db: &Path, args: &[&str], marker: &Marker) -> Running {
    Running::start_in(dir, &work_args(db, args), marker)
}

/// A worker named `name` that plays one game at a time, started in `dir`.
fn named_worker(dir: &Path, db: &Path, name: &str, marker: &Marker) -> Running {
    worker(dir, db, &["--jobs", "1", "--name", name], marker)
}

/// A league of `games` games on `db` that plays none itself, started;
/// returned once it is playing.
fn coordinator(file: &Path, db: &Path, games: &str, marker: &Marker) -> Running {
    let mut league = Running::start(file, db, &["--games", games, "--jobs", "0"], marker);
    league.wait("the league starts", |_, err| err.contains("playing: "));
    league
}

/// A league that plays none itself deals its tables to two workers: every
/// game is recorded once and numbered as it finished, both workers play,
/// and the workers end by themselves once the league has its games.
#[test]
fn two_workers_play_the_tables_of_a_league_that_plays_none_itself() {
    let (dir, file, db) = fresh_class(&["ann", "bob", "cat", "dan"], "0.02");
    let marker = Marker::new();
    let mut league = coordinator(&file, &db, "16", &marker);
    let mut one = named_worker(dir.path(), &db, "one", &marker);
    let mut two = named_worker(dir.path(), &db, "two", &marker);
    league.finish_ok();
    one.finish_ok();
    two.finish_ok();
    assert!(
        one.stderr().contains("league work: one plays duel"),
        "{}",
        one.stderr()
    );
    assert!(games(&one.stdout()) > 0, "worker one played nothing");
    assert!(games(&two.stdout()) > 0, "worker two played nothing");
    assert_eq!(games(&one.stdout()) + games(&two.stdout()), 16);
    assert_eq!(games(&league.stdout()), 16, "the league says every game");
    exported_numbered(dir.path(), &db, 16);
    marker.assert_none_left();
}

/// A worker killed outright mid-game loses only the game in flight: its
/// table goes to another worker once its lease runs out, nothing is
/// recorded twice, and the league finishes.
#[test]
fn a_worker_killed_mid_game_loses_only_its_game_in_flight() {
    let (dir, file, db) = fresh_class(&["ann", "bob", "cat"], "0.1");
    let marker = Marker::new();
    let mut league = Running::start(&file, &db, &["--games", "10", "--jobs", "0"], &marker);
    let lease = ["--jobs", "1", "--lease", "1s"];
    let mut doomed = worker(
        dir.path(),
        &db,
        &[&lease[..], &["--name", "doomed"]].concat(),
        &marker,
    );
    doomed.wait("a game of the doomed worker", |out, _| games(out) >= 1);
    // Mid-game: each game takes a move or more of 0.1 s a side.
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(doomed.end(nix::sys::signal::Signal::SIGKILL), None);
    let mut rescuer = worker(
        dir.path(),
        &db,
        &[&lease[..], &["--name", "rescuer"]].concat(),
        &marker,
    );
    league.finish_ok();
    rescuer.finish_ok();
    exported_numbered(dir.path(), &db, 10);
    // Each game of a table (its table and rotation) once, every one
    // played at a table dealt and claimed.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (games, deals): (i64, i64) = conn
        .query_row(
            "SELECT count(*), count(DISTINCT table_id || ':' || rotation) FROM games \
             WHERE table_id IS NOT NULL",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((games, deals), (10, 10));
    marker.assert_none_left();
}

/// A worker that cannot see the versions' copies says which, plays none
/// of their tables and, able to play none, stops (issue 48: never a game
/// charged to the bots); one given a folder that is not there is a usage
/// error naming it.
#[test]
fn a_worker_without_the_versions_copies_says_so_and_plays_nothing() {
    let (dir, file, db) = fresh_class(&["ann", "bob"], "0");
    let marker = Marker::new();
    let mut league = coordinator(&file, &db, "4", &marker);

    let missing = dir.path().join("no-such-folder");
    let run = referee(
        work_args(&db, &["--versions", missing.to_str().unwrap()]),
        b"",
    );
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "no-such-folder");

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let mut blind = worker(
        dir.path(),
        &db,
        &["--versions", empty.to_str().unwrap()],
        &marker,
    );
    // It names the path stored and the path it looked at, declines both
    // versions, and, able to play no table, stops as failed (70): its
    // machine's failure, no game charged to a bot.
    assert_eq!(blind.finish(), Some(70), "{}", blind.stderr());
    let err = blind.stderr();
    let stored = dir.path().join("league.db.versions");
    assert_has(&err, "cannot play ann@v1 on this machine");
    assert_has(&err, &format!("stored at {}", stored.display()));
    assert_has(&err, &format!("is not at {}", empty.display()));
    assert_has(&err, "can play none of the league's tables");
    assert_eq!(games(&blind.stdout()), 0, "{}", blind.stdout());
    assert_eq!(games(&league.stdout()), 0, "{}", league.stdout());

    let mut seeing = worker(dir.path(), &db, &["--jobs", "1"], &marker);
    league.finish_ok();
    seeing.finish_ok();
    assert_eq!(exported(dir.path(), &db).len(), 4);
    marker.assert_none_left();
}

/// A league on PostgreSQL has no "beside the database": without
/// --versions it is a usage error that says so (no server needed).
#[test]
fn a_league_on_postgresql_needs_versions() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = class(dir.path(), &["ann", "bob"], "0");
    let run = referee(
        [
            "league",
            "run",
            file.to_str().unwrap(),
            "--db",
            "postgres://nobody@127.0.0.1:1/none",
        ],
        b"",
    );
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "--versions");
}

/// A league of two that has played 4 games, its database then made an
/// older schema's by `sql`: `show` reads it as it is. Its file and
/// database.
fn older_league(dir: &Path, sql: &str) -> (PathBuf, PathBuf) {
    let file = class(dir, &["ann", "bob"], "0");
    let db = dir.join("league.db");
    referee_ok(common::league::run_args(
        &file,
        &db,
        &["--games", "4", "--jobs", "1"],
    ));
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(sql).unwrap();
    drop(conn);
    let show = referee_ok(["league", "show", db.to_str().unwrap()]);
    assert_has(&show.stdout, "ann@v1");
    assert_has(&show.stdout, "standings after 4 games");
    (file, db)
}

/// A database of schema 1 (before workers) is read as it is by `show`,
/// and migrated by the next `league run`, its games kept and numbered on.
#[test]
fn a_database_of_schema_1_is_migrated_with_its_games() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // Back to schema 1, as a database of the referee before workers.
    let (file, db) = older_league(
        dir.path(),
        "DROP INDEX games_by_table; ALTER TABLE games DROP COLUMN table_id;
         ALTER TABLE versions DROP COLUMN player; DROP TABLE tables; DROP TABLE workers;
         DROP TABLE declines; UPDATE meta SET value = '1' WHERE key = 'schema';",
    );
    let run = referee_ok(common::league::run_args(
        &file,
        &db,
        &["--games", "8", "--jobs", "1"],
    ));
    assert_has(&run.stderr, "migrated from schema 1 to 3");
    exported_numbered(dir.path(), &db, 8);
}

/// A database of schema 2 (before workers said what they cannot play) is
/// read as it is by `show`, refused to a worker, and migrated by the next
/// `league run`, its games kept and numbered on; a worker plays on it.
#[test]
fn a_database_of_schema_2_is_migrated_with_its_games() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (file, db) = older_league(
        dir.path(),
        "DROP TABLE declines; ALTER TABLE workers DROP COLUMN void_games;
         ALTER TABLE workers DROP COLUMN last_void;
         UPDATE meta SET value = '2' WHERE key = 'schema';",
    );
    let refused = referee(work_args(&db, &[]), b"");
    assert_eq!(refused.code, Some(64), "{refused:?}");
    assert_has(&refused.stderr, "schema 2");

    let marker = Marker::new();
    let mut league = coordinator(&file, &db, "8", &marker);
    let mut one = named_worker(dir.path(), &db, "one", &marker);
    league.finish_ok();
    one.finish_ok();
    assert!(
        league.stderr().contains("migrated from schema 2 to 3"),
        "{}",
        league.stderr()
    );
    assert_eq!(games(&one.stdout()), 4, "{}", one.stderr());
    exported_numbered(dir.path(), &db, 8);
    marker.assert_none_left();
}

/// A worker's own `--env` reaches its bots, on top of the league's
/// environment (a machine's own JAVA_HOME, say).
#[test]
fn a_workers_env_reaches_its_bots() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let marks = dir.path().join("marks.txt");
    for name in ["ann", "bob"] {
        player(
            dir.path(),
            name,
            &format!(
                "#!/bin/sh\nwhile read -r _ _; do echo \"$WORKER_MARK\" >> {}; echo 1; done\n",
                marks.display()
            ),
        );
    }
    let file = common::league::duel_glob_file(dir.path());
    let db = dir.path().join("league.db");
    let marker = Marker::new();
    let mut league = Running::start(&file, &db, &["--games", "2", "--jobs", "0"], &marker);
    let args = [
        "league",
        "--env",
        "WORKER_MARK=this-machine",
        "work",
        "--db",
    ];
    let mut all = args.to_vec();
    all.push(db.to_str().unwrap());
    let mut worker = Running::start_in(dir.path(), &all, &marker);
    league.finish_ok();
    worker.finish_ok();
    let marks = std::fs::read_to_string(&marks).unwrap();
    assert!(
        !marks.is_empty() && marks.lines().all(|l| l == "this-machine"),
        "{marks}"
    );
    marker.assert_none_left();
}

/// The statuses of every seat of `records`.
fn statuses(records: &[serde_json::Value]) -> Vec<String> {
    records
        .iter()
        .flat_map(|r| r["players"].as_array().cloned().unwrap_or_default())
        .map(|seat| seat["status"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// A worker whose machine lacks what a version needs (here its
/// interpreter, which the league found when the version entered) charges
/// no bot with it (issue 48.2: a worker recorded a failed game every few
/// milliseconds against both seats). It declines that version's tables,
/// naming the program stored and the one it looked for, and plays the
/// others; a worker that has it plays the rest. No game in the league
/// says `cannot_start`.
#[test]
fn a_worker_that_cannot_start_a_version_here_declines_it_and_charges_no_bot() {
    let (dir, file, db) = fresh_class(&["ann", "bob", "cat"], "0");
    let interp = dir.path().join("interp");
    std::fs::create_dir(&interp).unwrap();
    std::fs::copy("/bin/sh", interp.join("sh")).unwrap();
    player(
        dir.path(),
        "cat",
        &format!(
            "#!{}\nwhile read -r _ _; do echo 1; done\n",
            interp.join("sh").display()
        ),
    );
    let marker = Marker::new();
    let mut league = Running::start(&file, &db, &["--games", "12", "--jobs", "0"], &marker);
    league.wait("the league starts", |_, err| {
        err.contains("playing: ") && err.contains("cat@v1")
    });
    // The worker's machine has no such interpreter.
    let hidden = dir.path().join("interp.away");
    std::fs::rename(&interp, &hidden).unwrap();
    let mut lacking = named_worker(dir.path(), &db, "lacking", &marker);
    lacking.wait("cat declined", |_, err| {
        err.contains("lacking cannot play cat@v1 on this machine")
    });
    lacking.wait("the table without cat played", |out, _| games(out) >= 2);
    // The organiser, who cannot log into the worker's machine, reads it
    // in `league show`.
    let show = referee_ok(["league", "show", db.to_str().unwrap()]);
    assert_has(&show.stdout, "no live worker can play");
    assert_has(&show.stdout, "  cat@v1:");
    assert_has(&show.stdout, "lacking: ");
    std::fs::rename(&hidden, &interp).unwrap();
    let mut having = named_worker(dir.path(), &db, "having", &marker);
    league.finish_ok();
    lacking.finish_ok();
    having.finish_ok();
    let err = lacking.stderr();
    assert_has(&err, &interp.join("sh").display().to_string());
    assert!(!lacking.stdout().contains("cat@v1"), "{}", lacking.stdout());
    let records = exported_numbered(dir.path(), &db, 12);
    assert!(statuses(&records).iter().all(|s| s == "ok"), "{records:?}");
    marker.assert_none_left();
}

/// A version's copy gone under a worker after it checked it (a network
/// file system's hiccup, a copy pruned): the game that could not start
/// is void, not recorded, its table dealt again; the worker declines the
/// version and, able to play nothing else, stops as failed (70). Another
/// worker that sees the copy plays every game.
#[test]
fn a_copy_gone_under_a_worker_voids_its_game_and_charges_no_bot() {
    let (dir, file, db) = fresh_class(&["ann", "bob"], "0.05");
    let marker = Marker::new();
    let mut league = coordinator(&file, &db, "8", &marker);
    let versions = dir.path().join("league.db.versions");
    let mut first = named_worker(dir.path(), &db, "first", &marker);
    first.wait_games(1, "a game played");
    let bob = std::fs::read_dir(&versions)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("bob-"))
        .unwrap()
        .path();
    let away = dir.path().join("bob.away");
    std::fs::rename(&bob, &away).unwrap();
    assert_eq!(first.finish(), Some(70), "{}", first.stderr());
    let err = first.stderr();
    assert_has(&err, "cannot play bob@v1 on this machine");
    assert_has(&err, &bob.display().to_string());
    std::fs::rename(&away, &bob).unwrap();
    let mut second = named_worker(dir.path(), &db, "second", &marker);
    league.finish_ok();
    second.finish_ok();
    let records = exported_numbered(dir.path(), &db, 8);
    assert!(statuses(&records).iter().all(|s| s == "ok"), "{records:?}");
    marker.assert_none_left();
}

/// Folder names a class really has (issue 48.4): one not in UTF-8 (an
/// old archive tool's Latin-1) enters under its name with the odd byte
/// written `\xNN`, where it was skipped without a word; one of 250 bytes
/// enters under a copy name cut to fit, where it never played (`File
/// name too long`); a Makefile that makes no `pc2` says so, where its
/// log began with the build's command and gave no reason.
#[test]
fn odd_folder_names_enter_and_a_build_without_pc2_says_so() {
    use std::os::unix::ffi::OsStrExt;
    let long = "x".repeat(250);
    let (dir, file, db) = fresh_class(&["ann", &long], "0");
    let latin = dir
        .path()
        .join("subs")
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir(&latin).unwrap();
    std::fs::copy(dir.path().join("subs/ann/pc2"), latin.join("pc2")).unwrap();
    let nothing = dir.path().join("subs/nothing");
    std::fs::create_dir(&nothing).unwrap();
    write_file(&nothing, "Makefile", "all:\n\t@echo made nothing\n");
    let marker = Marker::new();
    let mut league = Running::start(&file, &db, &["--games", "6"], &marker);
    league.finish_ok();
    let err = league.stderr();
    assert_has(&err, "league: caf\\xe9@v1 enters");
    assert_has(&err, &format!("league: {long}@v1 enters"));
    assert!(
        err.contains("league: nothing@v1 did not build: ")
            && err.contains("nothing: no pc2 after its build"),
        "{err}"
    );
    let records = exported(dir.path(), &db);
    assert_eq!(records.len(), 6);
    assert!(statuses(&records).iter().all(|s| s == "ok"), "{records:?}");
    let out = league.stdout();
    assert!(out.contains("caf\\xe9@v1") && out.contains(&long), "{out}");
    marker.assert_none_left();
}

/// A push retires a version, and the league prunes its copy once its
/// games are over: no worker calls that a missing copy (issue 48.4: every
/// live worker blamed the shared folder), neither one that played the old
/// version nor one started after the pruning.
#[test]
fn a_pruned_copy_of_a_replaced_version_is_no_alarm_for_a_worker() {
    let (dir, file, db) = fresh_class(&["ann", "bob"], "0.02");
    let marker = Marker::new();
    let args = ["--games", "40", "--jobs", "0", "--scan-every", "200ms"];
    let mut league = Running::start(&file, &db, &args, &marker);
    league.wait("the league starts", |_, err| err.contains("playing: "));
    let mut before = named_worker(dir.path(), &db, "before", &marker);
    before.wait_games(2, "games of ann@v1");
    let pc2 = dir.path().join("subs/ann/pc2");
    let mut script = std::fs::read_to_string(&pc2).unwrap();
    script.push_str("# pushed\n");
    std::fs::write(&pc2, script).unwrap();
    league.wait("ann@v2 enters", |_, err| err.contains("ann@v2 enters"));
    let versions = dir.path().join("league.db.versions");
    let copies = || {
        std::fs::read_dir(&versions)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("ann-"))
            .count()
    };
    before.wait("ann@v1's copy pruned", |out, _| {
        out.contains("ann@v2") && copies() == 1
    });
    let mut after = named_worker(dir.path(), &db, "after", &marker);
    league.finish_ok();
    before.finish_ok();
    after.finish_ok();
    for w in [&before, &after] {
        let err = w.stderr();
        assert!(
            !err.contains("cannot play") && !err.contains("is not at"),
            "{err}"
        );
    }
    assert_eq!(exported(dir.path(), &db).len(), 40);
    marker.assert_none_left();
}

/// Players stored before issue 48 (schema 2: no copy's name nor digest;
/// a compiled entrant's program in the coordinator's `/tmp` copies, an
/// interpreted one's at its absolute path under the versions' folder)
/// are still read: a worker plays both from their copies, every game by
/// both seats.
#[test]
fn players_stored_before_copies_were_named_still_play() {
    let (dir, file, db) = fresh_class(&["ann"], "0");
    let bob = dir.path().join("subs/bob");
    write_file(
        &bob,
        "bot.c",
        "#include <stdio.h>\nint main(void){char a[64],b[64];\
         while(scanf(\"%63s %63s\",a,b)==2){puts(\"1\");fflush(stdout);}return 0;}\n",
    );
    write_file(&bob, "Makefile", "pc2: bot.c\n\tgcc -O1 -o pc2 bot.c\n");
    let marker = Marker::new();
    let mut league = Running::start(&file, &db, &["--games", "6", "--jobs", "0"], &marker);
    league.wait("the league starts", |_, err| {
        err.contains("playing: ") && err.contains("bob@v1")
    });
    let conn = rusqlite::Connection::open(&db).unwrap();
    let players: Vec<(i64, String)> = conn
        .prepare("SELECT id, player FROM versions WHERE player IS NOT NULL")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(players.len(), 2);
    for (id, player) in players {
        let mut player: serde_json::Value = serde_json::from_str(&player).unwrap();
        let fields = player.as_object_mut().unwrap();
        assert!(fields.remove("copy").is_some() && fields.remove("digest").is_some());
        if fields["name"] == "bob@v1" {
            fields["program"] = "/tmp/referee-snapshot-1-2/0/pc2".into();
        }
        conn.execute(
            "UPDATE versions SET player = ?1 WHERE id = ?2",
            rusqlite::params![player.to_string(), id],
        )
        .unwrap();
    }
    drop(conn);
    let mut one = worker(dir.path(), &db, &["--jobs", "1"], &marker);
    league.finish_ok();
    one.finish_ok();
    let records = exported(dir.path(), &db);
    assert_eq!(records.len(), 6);
    assert!(statuses(&records).iter().all(|s| s == "ok"), "{records:?}");
    marker.assert_none_left();
}

/// A bot that is not sandboxed writes in its folder, its version's copy
/// (a log, a cache): that is no change to what it was built as, and a
/// worker that looks at the copy afterwards plays it as the first one did.
#[test]
fn a_bot_that_writes_in_its_copy_still_plays_on_a_later_worker() {
    let (dir, file, db) = fresh_class(&["ann", "bob"], "0");
    for name in ["ann", "bob"] {
        player(
            dir.path(),
            name,
            "#!/bin/sh\nmkdir -p cache\nwhile read -r a _; do echo \"$a\" >> cache/log; sleep 0.05; \
             echo 1; done\n",
        );
    }
    let marker = Marker::new();
    let mut league = coordinator(&file, &db, "20", &marker);
    let mut first = named_worker(dir.path(), &db, "first", &marker);
    first.wait("games that wrote logs", |out, _| games(out) >= 2);
    let mut later = named_worker(dir.path(), &db, "later", &marker);
    league.finish_ok();
    first.finish_ok();
    later.finish_ok();
    assert!(
        !later.stderr().contains("cannot play"),
        "{}",
        later.stderr()
    );
    assert!(games(&later.stdout()) > 0, "{}", later.stderr());
    assert_eq!(exported(dir.path(), &db).len(), 20);
    marker.assert_none_left();
}
