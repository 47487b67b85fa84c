//! `referee league` on PostgreSQL through the real binary (issue 42): the
//! same league as on SQLite (`tests/league.rs`), its database a URL on a
//! server of the test's own (`common::postgres`), skipped, saying why,
//! where that server cannot run. A league plays and records, `show` and
//! `export` read it, a second league on the database is refused, a
//! league started again goes on, the live page reads PostgreSQL, and a
//! server restarted under a running league loses no game and doubles
//! none.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::league::{Running, games};
use common::postgres::Server;
use common::{Marker, fixture, referee};
use serde_json::Value;

/// A league over `subs/*` in `dir`, three duel players. Returns its file.
fn class(dir: &Path) -> PathBuf {
    for (name, bot) in [("ann", "weak"), ("bob", "weak"), ("cat", "strong")] {
        let folder = dir.join("subs").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(fixture(&format!("duel/{bot}.sh")), folder.join("pc2")).unwrap();
    }
    let file = dir.join("league.toml");
    std::fs::write(
        &file,
        format!(
            "game = \"{}\"\nseed = 3\n[limits]\nseats = 2\n[[entrant]]\nglob = \"subs/*\"\n",
            fixture("duel/game.toml")
        ),
    )
    .unwrap();
    file
}

/// A server of the test's own, or why not (the test then skips).
fn server() -> Option<Server> {
    match Server::start(Path::new(env!("CARGO_TARGET_TMPDIR"))) {
        Ok(server) => Some(server),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
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

/// The league's records, as `league export URL DIR/export` writes them.
fn exported(dir: &Path, url: &str) -> Vec<Value> {
    let out = dir.join("export");
    let _ = std::fs::remove_dir_all(&out);
    let run = referee(["league", "export", url, out.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    common::jsonl(&out.join("records.jsonl"))
}

/// Games numbered 1, 2, ... N in the order they finished: none lost,
/// none twice.
fn assert_numbered(records: &[Value], n: u64) {
    let indexes: Vec<u64> = records
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, (1..=n).collect::<Vec<u64>>());
}

/// A GET of `path`: the status line and the body, or why not.
fn get(addr: SocketAddr, path: &str) -> Result<(String, String), String> {
    let mut stream =
        TcpStream::connect_timeout(&addr, Duration::from_secs(1)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut text = String::new();
    stream
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    let (head, body) = text.split_once("\r\n\r\n").ok_or(format!("{text:?}"))?;
    Ok((head.lines().next().unwrap_or("").into(), body.into()))
}

/// A league on PostgreSQL plays and records its games; `show` and
/// `export` read them; started again, it goes on, numbered on. Without
/// `--versions` there is nowhere to keep the versions' copies.
#[test]
fn a_league_on_postgresql_plays_and_goes_on() {
    let Some(server) = server() else { return };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = class(dir.path());
    let url = server.url();
    let versions = dir.path().join("versions");
    let versions = versions.to_str().unwrap();

    let bare = referee(["league", "run", file.to_str().unwrap(), "--db", &url], b"");
    assert_eq!(bare.code, Some(64), "{bare:?}");
    assert!(bare.stderr.contains("--versions"), "{}", bare.stderr);

    let args = ["--games", "6", "--jobs", "2"];
    let run = referee(run_args(&file, &url, versions, &args), b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(games(&run.stdout), 6, "{}", run.stdout);
    assert!(
        Path::new(versions).is_dir(),
        "the versions' copies are in --versions"
    );

    let show = referee(["league", "show", &url], b"");
    assert_eq!(show.code, Some(0), "{show:?}");
    for name in ["ann@v1", "bob@v1", "cat@v1"] {
        assert!(show.stdout.contains(name), "{}", show.stdout);
    }
    assert_numbered(&exported(dir.path(), &url), 6);
    assert!(
        show.stdout.contains("standings after 6 games"),
        "{}",
        show.stdout
    );
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
    let again = referee(run_args(&file, &url, versions, &args), b"");
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_numbered(&exported(dir.path(), &url), 10);
}

/// While a league runs on the database, a second is refused; its live
/// page reads PostgreSQL.
#[test]
fn one_league_per_database_and_its_page_reads_postgresql() {
    let Some(server) = server() else { return };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = class(dir.path());
    let url = server.url();
    let versions = dir.path().join("versions");
    let versions = versions.to_str().unwrap();
    let marker = Marker::new();
    let args = ["--jobs", "1", "--serve", "127.0.0.1:0"];
    let mut league =
        Running::start_in(dir.path(), &run_args(&file, &url, versions, &args), &marker);
    league.wait("the page's address", |_, err| err.contains("live page at"));
    let addr: SocketAddr = league
        .stderr()
        .lines()
        .find_map(|line| line.strip_prefix("league: live page at http://"))
        .and_then(|rest| rest.trim_end_matches('/').parse().ok())
        .unwrap();
    league.wait_games(2, "two games");

    let second = referee(run_args(&file, &url, versions, &["--games", "1"]), b"");
    assert_ne!(second.code, Some(0), "{second:?}");
    assert!(
        second.stderr.contains("a league running now"),
        "{}",
        second.stderr
    );

    let (status, body) = get(addr, "/api/standings").unwrap();
    assert!(status.contains("200"), "{status}: {body}");
    assert!(body.contains("cat@v1"), "{body}");
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
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = class(dir.path());
    let url = server.url();
    let versions = dir.path().join("versions");
    let versions = versions.to_str().unwrap();
    let marker = Marker::new();
    let games_arg = GAMES.to_string();
    let args = ["--games", &games_arg, "--jobs", "2"];
    let mut league =
        Running::start_in(dir.path(), &run_args(&file, &url, versions, &args), &marker);
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
    assert_numbered(&exported(dir.path(), &url), GAMES as u64);
    let show = referee(["league", "show", &url], b"");
    assert_eq!(show.code, Some(0), "{show:?}");
    let counted = format!("standings after {GAMES} games");
    assert!(show.stdout.contains(&counted), "{}", show.stdout);
    drop(league);
    marker.assert_none_left();
}
