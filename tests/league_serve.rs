//! The league's live page (`referee league run --serve`) through the real
//! binary: whoever can reach it cannot hurt the league (issue 40). Idle
//! connections held open by the hundred, more than the referee may have
//! descriptors, once made thousands of games `cannot_start`, charged to
//! the students.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::league::{Running, duel_class};
use common::page::{Page, get};
use common::{MARKER_ENV, Marker, assert_has, assert_lacks, referee_ok};
use serde_json::Value;

/// The descriptors the league may have: fewer than the connections below.
const DESCRIPTORS: u32 = 256;
/// Idle connections opened to the page.
const FLOOD: usize = 400;

/// A league playing in the background under `ulimit -n DESCRIPTORS`, its
/// output in files; killed if the test fails first.
fn start(file: &Path, db: &Path, marker: &Marker) -> Running {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -n {DESCRIPTORS} && exec \"$@\""))
        .arg("sh")
        .arg(common::referee_bin())
        .args(MARKER_ENV)
        .args(["league", "run"])
        .arg(file)
        .arg("--db")
        .arg(db)
        .args(["--jobs", "2", "--serve", "127.0.0.1:0"])
        // The page's timeout, short for the test (10 s by default).
        .env("REFEREE_PAGE_TIMEOUT", "1s");
    marker.apply(&mut cmd);
    Running::spawn(cmd, db.parent().unwrap())
}

/// Whether the server closed `stream` (end of file, or reset) by
/// `deadline`.
fn closed_by(stream: &mut TcpStream, deadline: Instant) -> bool {
    let mut buf = [0u8; 512];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// Many more idle connections than the league has descriptors, held open
/// while it plays: every game is played (none `cannot_start`, none
/// void), the roster is as it was (no entrant leaves, no version enters
/// that nobody pushed), the idle connections are closed after the page's
/// timeout, a stream of events lives on past it (at most four events a
/// second, however fast games finish), and the page answers.
#[test]
fn idle_connections_cannot_hurt_the_league() {
    // The test's own connections need descriptors too.
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard).unwrap();

    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = duel_class(dir.path(), &["ann", "bob", "cat"], &["cat"]);
    let db = dir.path().join("league.db");
    let marker = Marker::new();
    let mut league = start(&file, &db, &marker);
    let Page(addr) = Page::of(&mut league);

    // A page's stream of events, opened before the flood.
    let mut events = TcpStream::connect(addr).unwrap();
    write!(events, "GET /events HTTP/1.1\r\nhost: {addr}\r\n\r\n").unwrap();
    events
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();

    let mut idle = Vec::new();
    let flooding = Instant::now();
    while idle.len() < FLOOD && flooding.elapsed() < Duration::from_secs(3) {
        if let Ok(stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            idle.push(stream);
        }
    }
    let flooded = Instant::now();
    let before = league.games();
    eprintln!(
        "{} idle connections in {:.1?}, {before} games then",
        idle.len(),
        flooded - flooding
    );
    assert!(idle.len() > DESCRIPTORS as usize, "{}", idle.len());

    // The league plays on while they are held.
    league.wait_for("30 more games", |l| {
        (l.games() >= before + 30).then_some(())
    });

    // Each is closed by the server, after the page's timeout at most
    // (with a margin for a loaded machine).
    let deadline = flooded + Duration::from_secs(5);
    let open = idle
        .iter_mut()
        .filter_map(|s| (!closed_by(s, deadline)).then_some(()))
        .count();
    assert_eq!(open, 0, "idle connections still open after 5 s");
    assert!(league.is_running(), "the league ended");

    // The stream of events is not idle: it lived past the timeout, and
    // still tells of games, a few a second at most.
    let mut buf = [0u8; 4096];
    let drained = Instant::now();
    while drained.elapsed() < Duration::from_millis(300) {
        match events.read(&mut buf) {
            Ok(0) => panic!("the events' stream was closed"),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    let counted = Instant::now();
    let mut fresh = Vec::new();
    while counted.elapsed() < Duration::from_secs(2) {
        match events.read(&mut buf) {
            Ok(0) => panic!("the events' stream was closed"),
            Ok(n) => fresh.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
    }
    let fresh = String::from_utf8_lossy(&fresh);
    let told = fresh.matches("event: games").count();
    assert!(told >= 2, "{fresh}");
    assert!(told <= 9, "{told} events in 2 s: {fresh}");

    // The page answers a fresh request.
    let (status, body) = league.wait_for("the page's answer", |_| get(addr, "/api/standings").ok());
    assert_has(&status, " 200 ");
    let standings: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(standings["entrants"].as_array().unwrap().len(), 3, "{body}");

    assert_eq!(league.stop(nix::sys::signal::Signal::SIGTERM), Some(130));
    marker.assert_none_left();
    let stderr = league.stderr();
    let most = DESCRIPTORS / 2;
    assert_has(
        &stderr,
        &format!("the live page has {most} connections open, its most"),
    );
    for (what, said) in [
        ("an entrant left", "leaves"),
        ("a version failed", "did not build"),
        ("a version entered", "@v2"),
        ("the league failed", "referee league:"),
    ] {
        assert!(!stderr.contains(said), "{what}:\n{stderr}");
    }

    // Every game was played, every seat "ok"; the versions are the three
    // that were pushed.
    let out = dir.path().join("export");
    common::league::export(&db, &out);
    let records = common::jsonl(&out.join("records.jsonl"));
    assert!(records.len() >= before + 30, "{}", records.len());
    for record in &records {
        for result in record["players"].as_array().unwrap() {
            assert_eq!(result["status"], "ok", "{record}");
        }
    }
    let show = referee_ok(["league", "show", db.to_str().unwrap(), "--all"]);
    for name in ["ann@v1", "bob@v1", "cat@v1"] {
        assert_has(&show.stdout, name);
    }
    assert_lacks(&show.stdout, "@v2");
}
