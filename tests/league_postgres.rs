//! `referee league` on PostgreSQL through the real binary (issue 42): the
//! same league as on SQLite (`tests/league.rs`), its database a URL on a
//! server of the test's own (`common::postgres`), skipped, saying why,
//! where that server cannot run. A league plays and records, `show` and
//! `export` read it, a second league on the database is refused, a
//! league started again goes on, the live page reads PostgreSQL, and a
//! server restarted under a running league loses no game and doubles
//! none.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::league::{Running, duel_class, exported_numbered, games};
use common::page::{Page, get};
use common::postgres::Server;
use common::{Marker, assert_has, assert_lacks, fixture, referee, referee_ok, write_file};

/// A server of the test's own, or `None` after saying why not (the test
/// then skips).
fn server() -> Option<Server> {
    Server::or_skip()
}

/// A league's folder, with its file ([`class`]), on `server`: the
/// folder, the file, the URL and where its versions' copies go.
fn league_on(server: &Server) -> (tempfile::TempDir, PathBuf, String, String) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = duel_class(dir.path(), &["ann", "bob", "cat"], &["cat"]);
    let versions = dir.path().join("versions").to_str().unwrap().to_owned();
    (dir, file, server.url(), versions)
}

/// `league run FILE --db URL --versions DIR/versions ARGS`.
fn run_args<'a>(file: &'a Path, url: &'a str, versions: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec![
        "league",
        "run",
        file.to_str().unwrap(),
        "--db",
        url,
        "--versions",
        versions,
    ];
    all.extend(args);
    all
}

/// [`run_args`] started in `dir`.
fn start(
    dir: &Path,
    file: &Path,
    url: &str,
    versions: &str,
    args: &[&str],
    marker: &Marker,
) -> Running {
    Running::start_in(dir, &run_args(file, url, versions, args), marker)
}

/// [`run_args`] to its end, which must succeed.
fn run_ok(file: &Path, url: &str, versions: &str, args: &[&str]) -> common::Run {
    let run = referee(run_args(file, url, versions, args), b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    run
}

/// A league on PostgreSQL plays and records its games; `show` and
/// `export` read them; started again, it goes on, numbered on. Without
/// `--versions` there is nowhere to keep the versions' copies.
#[test]
fn a_league_on_postgresql_plays_and_goes_on() {
    let Some(server) = server() else { return };
    let (dir, file, url, versions) = league_on(&server);

    let bare = referee(["league", "run", file.to_str().unwrap(), "--db", &url], b"");
    assert_eq!(bare.code, Some(64), "{bare:?}");
    assert_has(&bare.stderr, "--versions");

    let args = ["--games", "6", "--jobs", "2"];
    let run = run_ok(&file, &url, &versions, &args);
    assert_eq!(games(&run.stdout), 6, "{}", run.stdout);
    assert!(
        Path::new(&versions).is_dir(),
        "the versions' copies are in --versions"
    );

    let show = referee_ok(["league", "show", &url]);
    for name in ["ann@v1", "bob@v1", "cat@v1"] {
        assert_has(&show.stdout, name);
    }
    exported_numbered(dir.path(), &url, 6);
    assert_has(&show.stdout, "standings after 6 games");
    // `postgres://` alone: the server, the user and the database from the
    // usual PG* variables.
    let port = server.port().to_string();
    let env = [
        ("PGHOST", "127.0.0.1"),
        ("PGPORT", port.as_str()),
        ("PGUSER", "referee"),
        ("PGDATABASE", "league"),
    ];
    let by_env = common::referee_with(["league", "show", "postgres://"], b"", &env, None);
    assert_eq!(by_env.stdout, show.stdout, "{by_env:?}");

    let args = ["--games", "10", "--jobs", "2"];
    run_ok(&file, &url, &versions, &args);
    exported_numbered(dir.path(), &url, 10);
}

/// While a league runs on the database, a second is refused; its live
/// page reads PostgreSQL.
#[test]
fn one_league_per_database_and_its_page_reads_postgresql() {
    let Some(server) = server() else { return };
    let (dir, file, url, versions) = league_on(&server);
    let marker = Marker::new();
    let args = ["--jobs", "1", "--serve", "127.0.0.1:0"];
    let mut league = start(dir.path(), &file, &url, &versions, &args, &marker);
    let Page(addr) = Page::of(&mut league);
    league.wait_games(2, "two games");

    let second = referee(run_args(&file, &url, &versions, &["--games", "1"]), b"");
    assert_ne!(second.code, Some(0), "{second:?}");
    assert_has(&second.stderr, "a league running now");

    let (status, body) = get(addr, "/api/standings").unwrap();
    assert!(status.contains("200"), "{status}: {body}");
    assert_has(&body, "cat@v1");
    let (status, body) = get(addr, "/").unwrap();
    assert!(status.contains("200"), "{status}: {body}");
    let code = league.end(nix::sys::signal::Signal::SIGINT);
    assert!(matches!(code, Some(0 | 130)), "{code:?}");
    marker.assert_none_left();
}

/// The server restarted under a running league, then stopped for two
/// seconds: the league goes on, and every game is recorded once,
/// numbered with no gap.
#[test]
fn a_server_restarted_under_a_league_loses_no_game() {
    const GAMES: usize = 60;
    let Some(server) = server() else { return };
    let (dir, file, url, versions) = league_on(&server);
    let marker = Marker::new();
    let games_arg = GAMES.to_string();
    let args = ["--games", &games_arg, "--jobs", "2"];
    let mut league = start(dir.path(), &file, &url, &versions, &args, &marker);
    league.wait_games(4, "four games");
    server.restart().unwrap();
    league.wait_games(4, "four games after the restart");
    server.pause(Duration::from_secs(2)).unwrap();
    let played = games(&league.stdout());
    assert!(played < GAMES, "the league ended before the server stopped");
    let code = league.finish();
    let (out, err) = (league.stdout(), league.stderr());
    assert_eq!(code, Some(0), "{out}\n{err}\n{}", server.log());
    assert_eq!(games(&out), GAMES, "{out}");
    exported_numbered(dir.path(), &url, GAMES);
    let show = referee_ok(["league", "show", &url]);
    let counted = format!("standings after {GAMES} games");
    assert_has(&show.stdout, &counted);
    drop(league);
    marker.assert_none_left();
}

/// A build that prints a NUL byte, and an entrant whose name holds one
/// (`"d\u0000n"` in the league's file): the league plays its games on
/// PostgreSQL (whose text cannot hold a NUL) and `show` reads them back.
#[test]
fn a_nul_in_a_build_log_or_a_name_is_stored_on_postgresql() {
    let Some(server) = server() else { return };
    let (dir, file, url, versions) = league_on(&server);
    write_file(
        dir.path(),
        "subs/ann/Makefile",
        "all:\n\tprintf 'a\\0b\\n'\n",
    );
    let named = dir.path().join("named");
    std::fs::create_dir_all(&named).unwrap();
    std::fs::copy(fixture("duel/weak.sh"), named.join("pc2")).unwrap();
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("[[entrant]]\nname = \"d\\u0000n\"\ndir = \"named\"\n");
    std::fs::write(&file, text).unwrap();

    let args = ["--games", "6", "--jobs", "2"];
    let run = run_ok(&file, &url, &versions, &args);
    assert_eq!(games(&run.stdout), 6, "{}", run.stdout);
    exported_numbered(dir.path(), &url, 6);
    let build = std::fs::read(dir.path().join("export/build/ann.v1.log")).unwrap();
    assert!(
        build.windows(3).any(|w| w == b"a\0b"),
        "{}",
        String::from_utf8_lossy(&build)
    );
    let show = referee_ok(["league", "show", &url]);
    assert_has(&show.stdout, "ann@v1");
}

/// `referee league work --db URL --jobs 1 --name NAME`, started in `dir`.
fn worker(dir: &Path, url: &str, name: &str, marker: &Marker) -> Running {
    let args = ["league", "work", "--db", url, "--jobs", "1", "--name", name];
    Running::start_in(dir, &args, marker)
}

/// Waits until `worker` says, once, that it cannot reach the server at
/// `url` yet.
fn wait_unreached(worker: &mut Running, url: &str) {
    worker.wait("the worker cannot reach the server", |_, err| {
        err.contains("trying again until it answers")
    });
    let err = worker.stderr();
    assert_has(&err, &format!("cannot reach {url} yet ("));
}

/// The league and its one worker end by themselves, every game played
/// by the worker, numbered; the worker said once that it waited.
fn assert_worker_played(dir: &Path, url: &str, league: &mut Running, worker: &mut Running) {
    assert_eq!(league.finish(), Some(0), "{}", league.stderr());
    assert_eq!(worker.finish(), Some(0), "{}", worker.stderr());
    let err = worker.stderr();
    assert_eq!(err.matches("cannot reach").count(), 1, "{err}");
    assert_eq!(games(&worker.stdout()), 6, "{}\n{err}", worker.stdout());
    exported_numbered(dir, url, 6);
}

/// A worker started before its league's server (a job array submitted
/// first) says once that it cannot reach it yet, and plays once the
/// server and the league are up.
#[test]
fn a_worker_started_before_its_server_plays_once_it_is_up() {
    let server = match Server::stopped(Path::new(env!("CARGO_TARGET_TMPDIR"))) {
        Ok(server) => server,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let (dir, file, url, versions) = league_on(&server);
    let marker = Marker::new();
    let mut early = worker(dir.path(), &url, "early", &marker);
    wait_unreached(&mut early, &url);
    std::thread::sleep(Duration::from_secs(2));
    server.resume().unwrap();
    let args = ["--games", "6", "--jobs", "0"];
    let mut league = start(dir.path(), &file, &url, &versions, &args, &marker);
    assert_worker_played(dir.path(), &url, &mut league, &mut early);
    marker.assert_none_left();
}

/// A worker started while the server restarts under a running league
/// plays its games once the server is back.
#[test]
fn a_worker_started_during_a_server_restart_plays() {
    let Some(server) = server() else { return };
    let (dir, file, url, versions) = league_on(&server);
    let marker = Marker::new();
    let args = ["--games", "6", "--jobs", "0"];
    let mut league = start(dir.path(), &file, &url, &versions, &args, &marker);
    league.wait("the league starts", |_, err| err.contains("playing: "));
    server.stop().unwrap();
    let mut late = worker(dir.path(), &url, "late", &marker);
    wait_unreached(&mut late, &url);
    server.resume().unwrap();
    assert_worker_played(dir.path(), &url, &mut league, &mut late);
    marker.assert_none_left();
}

/// A worker whose database is not there (no such database), or whose URL
/// is wrong, is not one whose server is not up yet: it says so and ends
/// at once.
#[test]
fn a_worker_of_no_such_database_or_a_bad_url_ends_at_once() {
    let Some(server) = server() else { return };
    let nosuch = server.url().replace("/league", "/nosuch");
    let bad = "postgres://league:secret@127.0.0.1:port/league".to_owned();
    for (url, named) in [(nosuch, "nosuch"), (bad, "league:***@127.0.0.1:port")] {
        let run = referee(["league", "work", "--db", &url], b"");
        assert_eq!(run.code, Some(64), "{run:?}");
        assert_has(&run.stderr, named);
        assert_lacks(&run.stderr, "trying again");
        assert_lacks(&run.stderr, "secret");
    }
}

/// A database of schema 2 (before workers said what they cannot play,
/// before text was escaped) is read as it is by `show`, and migrated by
/// the next `league run`, its games kept and numbered on, a build log
/// holding the escape's own character read back as it was.
#[test]
fn a_database_of_schema_2_is_migrated_with_its_games() {
    let Some(server) = server() else { return };
    let (dir, file, url, versions) = league_on(&server);
    let args = ["--games", "4", "--jobs", "1"];
    run_ok(&file, &url, &versions, &args);
    server
        .psql_league(
            "DROP TABLE declines; ALTER TABLE workers DROP COLUMN void_games; \
             ALTER TABLE workers DROP COLUMN last_void; \
             UPDATE versions SET build_log = 'x' || chr(1) || '0y' WHERE id = 1; \
             UPDATE meta SET value = '2' WHERE key = 'schema';",
        )
        .unwrap();
    let show = referee_ok(["league", "show", &url]);
    assert_has(&show.stdout, "standings after 4 games");

    let args = ["--games", "8", "--jobs", "1"];
    let run = run_ok(&file, &url, &versions, &args);
    assert_has(&run.stderr, "migrated from schema 2 to 3");
    exported_numbered(dir.path(), &url, 8);
    let logs: Vec<Vec<u8>> = std::fs::read_dir(dir.path().join("export/build"))
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert!(logs.iter().any(|l| l == b"x\x010y"), "{logs:?}");
}
