//! What the league's live page (`referee league run --serve`) shows a
//! class, through the real binary (issue 40): every student has a row,
//! one whose builds all failed too (last, with the compiler's first error
//! and a link to the log); after a broken push the page says which
//! version plays and why; copies are flagged; the page says what it ranks
//! by; the plot labels its versions; a replay links back and shows no
//! bot's stderr unless the league is told to.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{Marker, fixture};
use serde_json::Value;

/// What the stderr bot writes on its standard error, at every game.
const SECRET: &str = "SECRET-ann-debug";

/// A bot that loses to `strong.sh` and writes [`SECRET`] on stderr.
fn chatty(tag: &str) -> String {
    format!("#!/bin/sh\n# {tag}\necho {SECRET} >&2\nread -r _ _\necho 1\n")
}

/// A Makefile whose build fails with a compiler's error.
const BROKEN: &str =
    "all:\n\t@echo 'main.c:3:1: error: expected semicolon before brace' >&2; exit 1\n";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A league over `subs/*` in `dir`, two seats. Returns its file.
fn league_file(dir: &Path, settings: &str) -> PathBuf {
    let file = dir.join("league.toml");
    std::fs::write(
        &file,
        format!(
            "game = \"{}\"\nseed = 5\n[limits]\nseats = 2\n[[entrant]]\nglob = \"subs/*\"\n{settings}",
            fixture("duel/game.toml")
        ),
    )
    .unwrap();
    file
}

/// A league playing in the background, its output in files; killed if
/// the test fails first.
struct League {
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
    addr: Option<SocketAddr>,
}

impl League {
    /// The league's file ends with `settings` (a `[league]` table).
    fn start(dir: &Path, marker: &Marker, settings: &str) -> League {
        let file = league_file(dir, settings);
        let (stdout, stderr) = (dir.join("out.txt"), dir.join("err.txt"));
        let mut cmd = common::command(
            [
                "league",
                "run",
                file.to_str().unwrap(),
                "--db",
                dir.join("league.db").to_str().unwrap(),
                "--jobs",
                "1",
                "--scan-every",
                "200ms",
                "--serve",
                "127.0.0.1:0",
            ],
            marker,
        );
        cmd.stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap());
        let mut league = League {
            child: cmd.spawn().unwrap(),
            stdout,
            stderr,
            addr: None,
        };
        let addr = league.wait("the page's address", |l| {
            l.stderr()
                .lines()
                .find_map(|line| line.strip_prefix("league: live page at http://"))
                .and_then(|rest| rest.trim_end_matches('/').parse().ok())
        });
        league.addr = Some(addr);
        league
    }

    fn stdout(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap_or_default()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn games(&self) -> usize {
        self.stdout()
            .lines()
            .filter(|l| l.starts_with("game "))
            .count()
    }

    /// Waits (30 s at most) until `holds`, failing if the league ends.
    fn wait<T>(&mut self, what: &str, mut holds: impl FnMut(&League) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(found) = holds(self) {
                return found;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "the league ended ({status}) before {what}:\n{}",
                    self.stderr()
                );
            }
            assert!(
                Instant::now() < deadline,
                "never saw {what}:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The body of a GET of `path` (status 200).
    fn get(&self, path: &str) -> String {
        let (status, body) = get(self.addr.unwrap(), path).unwrap();
        assert!(status.contains(" 200 "), "{path}: {status}\n{body}");
        body
    }

    fn standings(&self) -> Value {
        serde_json::from_str(&self.get("/api/standings")).unwrap()
    }

    /// The standings' row of entrant `name`.
    fn row(&self, name: &str) -> Value {
        let standings = self.standings();
        standings["entrants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no row for {name}: {standings:#}"))
    }

    /// The newest game `name` played.
    fn a_game_of(&self, name: &str) -> u64 {
        let games: Value =
            serde_json::from_str(&self.get(&format!("/api/games?entrant={name}&limit=1"))).unwrap();
        games["games"][0]["game"].as_u64().unwrap()
    }

    fn stop(mut self, marker: &Marker) {
        common::signal(&self.child, nix::sys::signal::Signal::SIGTERM);
        assert_eq!(self.child.wait().unwrap().code(), Some(130));
        marker.assert_none_left();
    }
}

impl Drop for League {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A GET of `path`: the status line and the body (chunks joined), or why
/// not.
fn get(addr: SocketAddr, path: &str) -> Result<(String, String), String> {
    let mut stream =
        TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").ok_or(format!("{text:?}"))?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Ok((head.lines().next().unwrap_or("").to_owned(), body))
}

fn dechunk(mut text: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = text.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        text = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// A class as a teacher meets it: `ann` plays and writes on stderr, `bob`
/// plays, `cat` handed in `bob`'s folder, `dan`'s first build fails. Then
/// `ann` pushes a v2 that builds and a v3 that does not.
#[test]
fn every_student_has_a_row_and_the_page_says_why() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let subs = dir.path().join("subs");
    write(&subs.join("ann/pc2"), &chatty("v1"));
    let strong = std::fs::read_to_string(fixture("duel/strong.sh")).unwrap();
    write(&subs.join("bob/pc2"), &strong);
    write(&subs.join("cat/pc2"), &strong);
    write(&subs.join("dan/pc2"), &chatty("dan"));
    write(&subs.join("dan/Makefile"), BROKEN);
    let marker = Marker::new();
    let mut league = League::start(dir.path(), &marker, "");
    league.wait("6 games", |l| (l.games() >= 6).then_some(()));

    // Every student has a row: dan, whose build failed, last, with no
    // rating, "did not build", the compiler's first error and its log.
    let standings = league.standings();
    let rows = standings["entrants"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "{standings:#}");
    let last = &rows[3];
    assert_eq!(last["name"], "dan", "{standings:#}");
    assert_eq!(last["rank"], 4, "{last}");
    assert_eq!(last["rating"], Value::Null, "{last}");
    assert_eq!(last["games"], 0, "{last}");
    assert_eq!(last["playing"], false, "{last}");
    assert_eq!(last["note"], "did not build", "{last}");
    let build = &last["failed_build"];
    assert_eq!(build["version"], 1, "{last}");
    assert_eq!(
        build["first_error"], "main.c:3:1: error: expected semicolon before brace",
        "{last}"
    );
    assert_eq!(build["log"], "/entrant/dan#v1", "{last}");
    for row in &rows[..3] {
        assert_eq!(row["playing"], true, "{row}");
        assert_eq!(row["failed_build"], Value::Null, "{row}");
    }
    // What the ranking is by, said.
    assert!(
        standings["ranked_by"]
            .as_str()
            .is_some_and(|s| s.contains("rating − 3σ")),
        "{standings:#}"
    );
    for row in &rows[..3] {
        assert!(row["rank_score"].is_f64(), "{row}");
    }
    let page = league.get("/");
    assert!(page.contains("id=\"ranked-by\""), "{page}");

    // The copy is flagged, both ways; nobody else is.
    assert_eq!(league.row("bob")["same_as"], serde_json::json!(["cat@v1"]));
    assert_eq!(league.row("cat")["same_as"], serde_json::json!(["bob@v1"]));
    assert_eq!(league.row("ann")["same_as"], serde_json::json!([]));
    assert_eq!(league.row("dan")["same_as"], serde_json::json!([]));

    // Dan's page: the failed build, its first error, the log's anchor.
    let dan = league.get("/entrant/dan");
    assert!(dan.contains("id=\"v1\""), "{dan}");
    assert!(dan.contains("did not build"), "{dan}");
    assert!(dan.contains("expected semicolon before brace"), "{dan}");
    let bob = league.get("/entrant/bob");
    assert!(
        bob.contains("Same sources as <a href=\"/entrant/cat\">cat@v1</a>"),
        "{bob}"
    );

    // A replay: a way back, and no bot's stderr.
    let game = league.a_game_of("ann");
    let replay = league.get(&format!("/replay/{game}"));
    assert!(replay.contains("href=\"/\""), "no link back: {replay}");
    assert!(replay.contains("href=\"/entrant/ann\""), "{replay}");
    assert!(!replay.contains(SECRET), "stderr on a public replay");

    // ann pushes a v2 that builds, then a v3 that does not: v2 plays, and
    // the page says so.
    write(&subs.join("ann/pc2"), &chatty("v2"));
    league.wait("ann@v2 playing", |l| {
        l.stdout().contains("ann@v2").then_some(())
    });
    let before = league.games();
    league.wait("more games", |l| (l.games() >= before + 4).then_some(()));
    write(&subs.join("ann/Makefile"), BROKEN);
    league.wait("ann@v3's failed build", |l| {
        l.stderr().contains("ann@v3 did not build").then_some(())
    });
    let ann = league.row("ann");
    assert_eq!(ann["version"], 2, "{ann}");
    assert_eq!(ann["playing"], true, "{ann}");
    assert_eq!(ann["note"], "v2 plays: v3 did not build", "{ann}");
    assert_eq!(ann["failed_build"]["version"], 3, "{ann}");
    assert_eq!(ann["failed_build"]["log"], "/entrant/ann#v3", "{ann}");
    let page = league.get("/entrant/ann");
    assert!(page.contains("v2 plays: v3 did not build"), "{page}");
    // The plot labels its versions.
    let plot = &page[page.find("<svg id=\"plot\"").expect("a plot")..];
    let plot = &plot[..plot.find("</svg>").unwrap()];
    for label in ["v1", "v2"] {
        assert!(
            plot.contains(&format!(">{label}</text>")),
            "no label {label}: {plot}"
        );
    }
    league.stop(&marker);
}

/// With `page_stderr = true` in the file's `[league]` table the replays
/// show what the bots wrote on stderr.
#[test]
fn stderr_on_the_replays_only_when_the_league_says_so() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let subs = dir.path().join("subs");
    write(&subs.join("ann/pc2"), &chatty("v1"));
    write(
        &subs.join("bob/pc2"),
        &std::fs::read_to_string(fixture("duel/strong.sh")).unwrap(),
    );
    let marker = Marker::new();
    let mut league = League::start(dir.path(), &marker, "[league]\npage_stderr = true\n");
    league.wait("2 games", |l| (l.games() >= 2).then_some(()));
    let game = league.a_game_of("ann");
    let replay = league.get(&format!("/replay/{game}"));
    assert!(replay.contains(SECRET), "no stderr: {replay}");
    league.stop(&marker);
}
