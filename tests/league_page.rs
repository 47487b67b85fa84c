//! What the league's live page (`referee league run --serve`) shows a
//! class, through the real binary (issue 40): every student has a row,
//! one whose builds all failed too (last, with the compiler's first error
//! and a link to the log); after a broken push the page says which
//! version plays and why; copies are flagged; the page says what it ranks
//! by; the plot labels its versions; a replay links back and shows no
//! bot's stderr unless the league is told to.

mod common;

use std::path::{Path, PathBuf};

use common::league::Running;
use common::page::Page;
use common::{Marker, assert_has, fixture, write_file};
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
    write_file(
        dir,
        "league.toml",
        format!(
            "game = \"{}\"\nseed = 5\n[limits]\nseats = 2\n[[entrant]]\nglob = \"subs/*\"\n{settings}",
            fixture("duel/game.toml")
        ),
    )
}

/// The league of `dir`, its file ending with `settings` (a `[league]`
/// table), playing in the background with its page.
fn start(dir: &Path, marker: &Marker, settings: &str) -> (Running, Page) {
    let file = league_file(dir, settings);
    let args = [
        "--jobs",
        "1",
        "--scan-every",
        "200ms",
        "--serve",
        "127.0.0.1:0",
    ];
    let mut league = Running::start(&file, &dir.join("league.db"), &args, marker);
    let page = Page::of(&mut league);
    (league, page)
}

/// Stops the league (SIGTERM): it ends with 130 and leaves nothing behind.
fn stop(league: Running, marker: &Marker) {
    assert_eq!(league.end(nix::sys::signal::Signal::SIGTERM), Some(130));
    marker.assert_none_left();
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
    let (mut league, live) = start(dir.path(), &marker, "");
    league.wait_for("6 games", |l| (l.games() >= 6).then_some(()));

    // Every student has a row: dan, whose build failed, last, with no
    // rating, "did not build", the compiler's first error and its log.
    let standings = live.standings();
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
    let page = live.get("/");
    assert_has(&page, "id=\"ranked-by\"");

    // The copy is flagged, both ways; nobody else is.
    assert_eq!(live.row("bob")["same_as"], serde_json::json!(["cat@v1"]));
    assert_eq!(live.row("cat")["same_as"], serde_json::json!(["bob@v1"]));
    assert_eq!(live.row("ann")["same_as"], serde_json::json!([]));
    assert_eq!(live.row("dan")["same_as"], serde_json::json!([]));

    // Dan's page: the failed build, its first error, the log's anchor.
    let dan = live.get("/entrant/dan");
    assert_has(&dan, "id=\"v1\"");
    assert_has(&dan, "did not build");
    assert_has(&dan, "expected semicolon before brace");
    let bob = live.get("/entrant/bob");
    assert_has(&bob, "Same sources as <a href=\"/entrant/cat\">cat@v1</a>");

    // A replay: a way back, and no bot's stderr.
    let game = live.a_game_of("ann");
    let replay = live.get(&format!("/replay/{game}"));
    assert!(replay.contains("href=\"/\""), "no link back: {replay}");
    assert_has(&replay, "href=\"/entrant/ann\"");
    assert!(!replay.contains(SECRET), "stderr on a public replay");

    // ann pushes a v2 that builds, then a v3 that does not: v2 plays, and
    // the page says so.
    write(&subs.join("ann/pc2"), &chatty("v2"));
    league.wait_for("ann@v2 playing", |l| {
        l.stdout().contains("ann@v2").then_some(())
    });
    let before = league.games();
    league.wait_for("more games", |l| (l.games() >= before + 4).then_some(()));
    write(&subs.join("ann/Makefile"), BROKEN);
    league.wait_for("ann@v3's failed build", |l| {
        l.stderr().contains("ann@v3 did not build").then_some(())
    });
    let ann = live.row("ann");
    assert_eq!(ann["version"], 2, "{ann}");
    assert_eq!(ann["playing"], true, "{ann}");
    assert_eq!(ann["note"], "v2 plays: v3 did not build", "{ann}");
    assert_eq!(ann["failed_build"]["version"], 3, "{ann}");
    assert_eq!(ann["failed_build"]["log"], "/entrant/ann#v3", "{ann}");
    let page = live.get("/entrant/ann");
    assert_has(&page, "v2 plays: v3 did not build");
    // The plot labels its versions.
    let plot = &page[page.find("<svg id=\"plot\"").expect("a plot")..];
    let plot = &plot[..plot.find("</svg>").unwrap()];
    for label in ["v1", "v2"] {
        assert!(
            plot.contains(&format!(">{label}</text>")),
            "no label {label}: {plot}"
        );
    }
    stop(league, &marker);
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
    let (mut league, live) = start(dir.path(), &marker, "[league]\npage_stderr = true\n");
    league.wait_for("2 games", |l| (l.games() >= 2).then_some(()));
    let game = live.a_game_of("ann");
    let replay = live.get(&format!("/replay/{game}"));
    assert!(replay.contains(SECRET), "no stderr: {replay}");
    stop(league, &marker);
}
