//! A teacher's tournament, end to end: a folder of submissions taken with a
//! glob, each built with make; one row per student, the CSVs a gradebook
//! imports, the readable game log, periodic standings, and the standings
//! printed on an interrupt.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::runs::tournament_args;
use common::{
    CHOMPER, Marker, assert_has, assert_lacks, finish, fixture, referee_with, signal, temp_path,
    wait_for_lines, write_file,
};
use serde_json::Value;

/// A copy of `tests/fixtures/class` in a fresh directory: each submission
/// is built there, not in the source tree.
fn class() -> (tempfile::TempDir, PathBuf) {
    common::fixture_copy("class")
}

/// The bots' environment: the fixture's scripts run `$EVENSTEVEN`.
fn env() -> Vec<String> {
    common::env_args(&[("EVENSTEVEN", env!("CARGO_BIN_EXE_evensteven"))])
}

fn tournament(args: &[&str]) -> common::Run {
    let env = env();
    let mut all = vec!["tournament", "--no-progress"];
    all.extend(env.iter().map(String::as_str));
    all.extend_from_slice(args);
    referee_with(all, b"", &[], None)
}

/// A CSV file's lines, split at commas (the fixture's fields hold none
/// but the last).
fn csv(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect()
}

#[test]
fn a_class_from_a_glob_gets_one_row_per_student() {
    let (_dir, class) = class();
    let out = class.join("out");
    let file = class.join("class.toml");
    let run = tournament(&[
        file.to_str().unwrap(),
        "--jobs",
        "2",
        "--standings-every",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");

    // Standings every 5 of the 12 games, then the final ones.
    assert_eq!(
        run.stdout.matches("standings after").count(),
        3,
        "{}",
        run.stdout
    );
    assert_has(&run.stdout, "standings after 5 of 12 games:");
    assert_has(&run.stdout, "standings after 10 of 12 games:");
    assert_has(&run.stdout, "standings after 12 games:");
    // Carol's build failed: she alone is disqualified, and named.
    assert_has(&run.stderr, "entrant carol disqualified: build failed");

    let standings: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("standings.json")).unwrap())
            .unwrap();
    let mut names: Vec<&str> = standings
        .iter()
        .map(|r| r["entrant"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["alice", "bob", "carol"]);
    for row in &standings {
        assert_eq!(row["games"], 12);
        let disqualified = if row["entrant"] == "carol" { 12 } else { 0 };
        assert_eq!(row["disqualified"], disqualified, "{row}");
    }
    // The reference player wins at least as often as the in-order one.
    let wins = |name: &str| {
        standings.iter().find(|r| r["entrant"] == name).unwrap()["wins"]
            .as_f64()
            .unwrap()
    };
    assert!(wins("alice") >= wins("bob"));

    // standings.csv: a header and one line per entrant, every line as
    // wide as the header.
    let rows = csv(&out.join("standings.csv"));
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0][..4], ["rank", "entrant", "games", "wins"]);
    assert!(rows.iter().all(|r| r.len() == rows[0].len()), "{rows:?}");

    // grades.csv: by name, with the failures and why carol could not play.
    let text = std::fs::read_to_string(out.join("grades.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "entrant,games,wins,win_rate,failures,timeouts,crashed,incorrect,disqualified,internal,rank,note"
    );
    assert_eq!(lines.len(), 4, "{text}");
    let rows = csv(&out.join("grades.csv"));
    let first: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(first, ["alice", "bob", "carol"]);
    for r in &rows[1..] {
        assert_eq!(r[1], "12");
        assert_eq!(r[2].parse::<f64>().unwrap(), wins(&r[0]));
        let rate: f64 = r[3].parse().unwrap();
        assert!((rate - wins(&r[0]) / 12.0).abs() < 1e-3, "{r:?}");
    }
    assert_eq!(rows[3][4], "12");
    assert_eq!(rows[3][8], "12");
    assert_has(lines[3], "build failed");
    assert_has(lines[3], "expected ; before }");
    assert_eq!(rows[1][11], "");

    // games.log: one block per game, its tags in order, agreeing with the
    // records.
    let log = std::fs::read_to_string(out.join("games.log")).unwrap();
    let blocks: Vec<&str> = log.split("\n\n").filter(|b| !b.trim().is_empty()).collect();
    assert_eq!(blocks.len(), 12, "{log}");
    let records = common::timeless_records(&out);
    let mut indices = Vec::new();
    for block in blocks {
        let lines: Vec<&str> = block.lines().collect();
        let keys: Vec<&str> = lines[..7]
            .iter()
            .map(|l| l[1..].split_once(' ').unwrap().0)
            .collect();
        assert_eq!(
            keys,
            [
                "Game", "Index", "Seed", "Date", "Entrants", "Result", "Status"
            ],
            "{block}"
        );
        let tag = |i: usize| {
            lines[i]
                .split_once(" \"")
                .unwrap()
                .1
                .strip_suffix("\"]")
                .unwrap()
        };
        assert_eq!(tag(0), "evensteven");
        assert_eq!(tag(2), "5");
        assert_eq!(tag(4), "alice, bob, carol");
        let index: u64 = tag(1).parse().unwrap();
        indices.push(index);
        let record = records.iter().find(|r| r["index"] == index).unwrap();
        let won: Vec<&str> = record["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| if r["won"] == true { "1" } else { "0" })
            .collect();
        assert_eq!(tag(5), won.join(", "), "{block}");
        assert!(tag(6).ends_with(", build_failed"), "{block}");
        assert!(lines[7].starts_with("setup: deal_seed "), "{block}");
        assert!(lines[8].starts_with("alice: "), "{block}");
        assert!(lines[10].starts_with("carol: build_failed: "), "{block}");
    }
    indices.sort_unstable();
    assert_eq!(indices, (1..=12).collect::<Vec<u64>>());
}

#[test]
fn files_matched_by_a_glob_run_as_programs() {
    let (dir, bots) = temp_path("bots");
    std::fs::create_dir(&bots).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_evensteven"), bots.join("ref")).unwrap();
    std::fs::copy(
        fixture("class/submissions/bob/bob.sh"),
        bots.join("in-order"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        bots.join("in-order"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    write_file(&bots, ".hidden", "not a player");
    let file = write_file(
        dir.path(),
        "t.toml",
        "game = \"evensteven\"\ngames = 4\nseed = 2\n[[entrant]]\nglob = \"bots/*\"\n",
    );
    let out = dir.path().join("out");
    let run = tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let run_json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run_json["entrants"], serde_json::json!(["in-order", "ref"]));
    let standings = common::timeless_standings(&out);
    assert!(
        standings
            .iter()
            .all(|r| r["disqualified"] == 0 && r["crashed"] == 0),
        "{standings:?}"
    );
}

#[test]
fn glob_mistakes_are_named_with_the_line() {
    let (_dir, class) = class();
    let cases = [
        (
            "[[entrant]]\nglob = \"nobody/*\"\n",
            "line 7: glob \"nobody/*\"",
        ),
        (
            "[[entrant]]\nglob = \"submissions/z*\"\n",
            "line 7: glob \"submissions/z*\" matches nothing",
        ),
        (
            "[[entrant]]\nname = \"bob\"\ncommand = [\"x\"]\n[[entrant]]\nglob = \"submissions/*\"\n",
            "line 10: glob \"submissions/*\" matches \"bob\", which is also an explicit entrant's name",
        ),
        (
            "[[entrant]]\nglob = \"sub*/*\"\n",
            "* and ? in its last part only",
        ),
    ];
    for (entrants, expected) in cases {
        let file = write_file(
            &class,
            "bad.toml",
            format!("game = \"evensteven\"\ngames = 2\n\n[limits]\ntimeout = \"2s\"\n{entrants}"),
        );
        let run = tournament(&[file.to_str().unwrap()]);
        assert_eq!(run.code, Some(64), "{run:?}");
        assert_has(&run.stderr, file.to_str().unwrap());
        assert!(run.stderr.contains(expected), "{expected}: {}", run.stderr);
    }
}

/// A glob's matches must be folders of its own folder, one each: a link
/// that leads out of it (to `/`, whose build would write there, or to a
/// folder elsewhere) is refused, naming where it leads, and so are two
/// names of one folder; with or without `--sandbox`, before any build.
#[test]
fn glob_matches_that_are_links_out_or_twice_are_refused() {
    let (dir, class) = class();
    let outside = dir.path().join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    let submissions = class.join("submissions");
    let cases: [(&str, &Path, String); 3] = [
        (
            "root",
            Path::new("/"),
            "matches \"root\", a link to /, outside".to_owned(),
        ),
        (
            "away",
            &outside,
            format!("matches \"away\", a link to {}, outside", outside.display()),
        ),
        (
            "alias",
            Path::new("alice"),
            format!(
                "matches \"alias\" and \"alice\", which are one folder, {}",
                submissions.join("alice").canonicalize().unwrap().display()
            ),
        ),
    ];
    for (name, target, expected) in cases {
        let link = submissions.join(name);
        std::os::unix::fs::symlink(target, &link).unwrap();
        for sandbox in [false, true] {
            let file = class.join("class.toml");
            let mut args = vec![file.to_str().unwrap()];
            if sandbox {
                args.push("--sandbox");
            }
            let run = tournament(&args);
            assert_eq!(run.code, Some(64), "{run:?}");
            assert_has(&run.stderr, "line 11: glob \"submissions/*/\"");
            assert!(run.stderr.contains(&expected), "{expected}: {}", run.stderr);
            assert_lacks(&run.stderr, "building");
        }
        std::fs::remove_file(&link).unwrap();
    }
    // Entrants named one by one may share a folder (as
    // tournaments/chomp.toml does).
    let file = write_file(
        &class,
        "shared.toml",
        "game = \"evensteven\"\ngames = 2\n[limits]\ntimeout = \"2s\"\n\
         [[entrant]]\nname = \"a\"\ndir = \"submissions/alice\"\ncommand = [\"./executeit\"]\n\
         [[entrant]]\nname = \"b\"\ndir = \"submissions/alice\"\ncommand = [\"./executeit\"]\n",
    );
    let run = tournament(&[file.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn an_interrupted_class_run_prints_the_standings_so_far() {
    let (_dir, class) = class();
    let out = class.join("out");
    let file = class.join("class.toml");
    let marker = Marker::new();
    let mut cmd = common::command(
        tournament_args(
            file.to_str().unwrap(),
            &out,
            &["--jobs", "1", "--games", "100000"],
        ),
        &marker,
    );
    cmd.args(env())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    wait_for_lines(&out.join("records.jsonl"), 3);
    signal(&child, nix::sys::signal::Signal::SIGINT);
    let run = finish(child, b"");
    marker.assert_none_left();
    assert_eq!(run.code, Some(130), "{run:?}");
    assert_has(&run.stdout, "interrupted: standings after");
    for name in ["alice", "bob", "carol"] {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.contains(&format!("| {name} "))),
            "{name}: {}",
            run.stdout
        );
    }
    // The game log holds every finished game: at least those recorded.
    let log = std::fs::read_to_string(out.join("games.log")).unwrap();
    let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    assert!(log.matches("[Game ").count() >= records.lines().count() - 1);
}

/// A class whose submission folders are named `names`, each a copy of
/// alice's (the reference player, built with make) that first says on
/// stderr whose it is; the tournament file, `games` games, takes them
/// with a glob.
fn named_class(names: &[&str], games: u64) -> (tempfile::TempDir, PathBuf) {
    let (dir, submissions) = temp_path("submissions");
    for name in names {
        let sub = submissions.join(name);
        write_file(
            &sub,
            "player.sh",
            "#!/bin/sh\necho \"stderr of $(basename \"$PWD\")\" >&2\nexec \"$EVENSTEVEN\" \"$@\"\n",
        );
        write_file(
            &sub,
            "Makefile",
            "executeit: player.sh\n\t@echo \"building in $$PWD\"\n\tcp player.sh executeit && chmod +x executeit\n",
        );
    }
    let file = write_file(
        dir.path(),
        "class.toml",
        format!(
            "game = \"evensteven\"\ngames = {games}\nseed = 5\n[limits]\ntimeout = \"2s\"\n\
             [[entrant]]\nglob = \"submissions/*/\"\ncommand = [\"./executeit\"]\n"
        ),
    );
    (dir, file)
}

/// Every record of a CSV file, fields unquoted.
fn csv_records(path: &Path) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap()
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect()
}

#[test]
fn hostile_names_reach_no_spreadsheet_formula_and_no_terminal_control() {
    // Red team: folders named so landed unescaped in grades.csv and
    // standings.csv (formulas), and raw in the terminal standings and
    // games.log (colours, a window title, a split row, reversed text).
    let formulas = ["=2+3", "@SUM(1+1)", "+1+1", "-1+1"];
    let controls = [
        "red\u{1b}[31m",
        "title\u{1b}]0;pwned\u{7}",
        "two\nlines",
        "rev\u{202e}olleh",
    ];
    let names: Vec<&str> = formulas.iter().chain(&controls).copied().collect();
    let (dir, file) = named_class(&names, 2);
    let out = dir.path().join("out");
    let run = tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");

    // JSON keeps the real names.
    let standings = common::timeless_standings(&out);
    let mut real: Vec<&str> = standings
        .iter()
        .map(|r| r["entrant"].as_str().unwrap())
        .collect();
    real.sort_unstable();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(real, sorted);

    // CSV: a cell that a spreadsheet would take for a formula starts
    // with `'`; every other name is there as it is.
    let expected = |name: &str| {
        if name.starts_with(['=', '+', '-', '@', '\t', '\r']) {
            format!("'{name}")
        } else {
            name.to_owned()
        }
    };
    for (csv, column) in [("standings.csv", 1), ("grades.csv", 0)] {
        let rows = csv_records(&out.join(csv));
        let mut cells: Vec<String> = rows[1..].iter().map(|r| r[column].clone()).collect();
        cells.sort_unstable();
        let mut want: Vec<String> = names.iter().map(|n| expected(n)).collect();
        want.sort_unstable();
        assert_eq!(cells, want, "{csv}");
    }

    // The terminal and games.log: no control character but line ends,
    // no bidi control; the names shown escaped.
    let log = std::fs::read_to_string(out.join("games.log")).unwrap();
    for (what, text) in [
        ("stdout", &run.stdout),
        ("stderr", &run.stderr),
        ("games.log", &log),
    ] {
        let bad: Vec<char> = text
            .chars()
            .filter(|&c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c))
            .collect();
        assert!(bad.is_empty(), "{what}: {bad:?}\n{text}");
    }
    for shown in [
        "red\\x1b[31m",
        "title\\x1b]0;pwned\\x07",
        "two\\nlines",
        "rev\\u{202e}olleh",
    ] {
        assert!(
            run.stdout.contains(&format!("| {shown} ")),
            "{shown}: {}",
            run.stdout
        );
        assert!(log.contains(&format!("{shown}: ")), "{shown}: {log}");
    }
    // Every line of a table is a row of it: no name split one.
    for line in run.stdout.lines().filter(|l| l.contains(" | ")) {
        assert!(line.starts_with('|') && line.ends_with('|'), "{line}");
    }
}

/// Each file in `dir`, with its text.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            (path.file_name().unwrap().to_str().unwrap().to_owned(), text)
        })
        .collect();
    out.sort();
    out
}

/// The one value of `prefix VALUE` lines in `text`; fails when they differ.
fn only(text: &str, prefix: &str) -> String {
    let mut values: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .collect();
    values.dedup();
    assert_eq!(values.len(), 1, "{prefix}: {text}");
    values[0].to_owned()
}

#[test]
fn every_entrant_has_log_files_of_its_own_that_say_whose_they_are() {
    // Red team: folders `x y`, `x_y` and `x?y` (and `Zoë`, `Zoé`) all
    // wrote stderr/x_y.log and one build log, interleaved and unlabelled.
    let names = ["x y", "x_y", "x?y", "Zoë", "Zoé"];
    let (dir, file) = named_class(&names, 2);
    let out = dir.path().join("out");
    let run = tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");

    let stderr = files(&out.join("stderr"));
    assert_eq!(stderr.len(), names.len(), "{stderr:?}");
    let mut owners: Vec<String> = Vec::new();
    for (file, text) in &stderr {
        let owner = only(text, "stderr of ");
        assert_eq!(
            text.lines().next().unwrap(),
            format!("standard error of entrant {owner}"),
            "{file}"
        );
        // Two games, one line each, nobody else's.
        assert_eq!(text.matches("stderr of ").count(), 2, "{file}: {text}");
        owners.push(owner);
    }
    // A plain name keeps its file name.
    assert!(stderr.iter().any(|(f, _)| f == "x_y.log"), "{stderr:?}");
    owners.sort();
    let mut want: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    want.sort();
    assert_eq!(owners, want);

    let builds = files(&out.join("build"));
    assert_eq!(builds.len(), names.len(), "{builds:?}");
    let mut built: Vec<String> = Vec::new();
    for (file, text) in &builds {
        let dir = only(text, "building in ");
        let first = text.lines().next().unwrap();
        let given = first
            .strip_prefix("build of ")
            .and_then(|l| l.strip_suffix(" with make"))
            .unwrap_or_else(|| panic!("{file}: {first}"));
        assert!(
            dir.ends_with(given.rsplit('/').next().unwrap()),
            "{file}: {text}"
        );
        built.push(dir.rsplit('/').next().unwrap().to_owned());
    }
    built.sort();
    assert_eq!(built, want);
}

/// A compiler's output for a syntax error, as gcc prints it, with more
/// after the first error than a build message's last ten lines hold.
const GCC_LOG: &str = "\
cc -O2 -o pc2 carol.c
carol.c: In function 'main':
carol.c:3:27: error: expected ';' before '}' token
    3 | int main(void) { return 0 }
      |                           ^~
      |                           ;
carol.c:7:5: warning: implicit declaration of function 'play' [-Wimplicit-function-declaration]
    7 |     play(board);
      |     ^~~~
carol.c:9:12: error: 'board' undeclared (first use in this function)
    9 |     return board;
      |            ^~~~~
carol.c:9:12: note: each undeclared identifier is reported only once for each function it appears in
carol.c:12:1: error: expected declaration or statement at end of input
   12 | }
      | ^
";

/// A submission's files: name and text.
type Files<'a> = &'a [(&'a str, &'a str)];

/// Folders `submissions/NAME/` in `dir`, one per `(name, makefile,
/// files)`, each file made executable.
fn submissions(dir: &Path, students: &[(&str, &str, Files)]) {
    use std::os::unix::fs::PermissionsExt;
    for (name, makefile, files) in students {
        let sub = dir.join("submissions").join(name);
        write_file(&sub, "Makefile", makefile);
        for (file, text) in *files {
            let path = write_file(&sub, file, text);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
}

/// A makefile that builds `pc2` from `bot.sh`.
const COPY_MAKE: &str = "pc2: bot.sh\n\tcp bot.sh pc2\n";

/// A makefile whose build fails printing `log` (the file `build.log`).
const FAILING_MAKE: &str = "pc2 executeit:\n\t@cat build.log >&2; exit 1\n";

/// A row of `grades.csv`: column to cell.
type Grade = std::collections::BTreeMap<String, String>;

/// The rows of `grades.csv` by entrant.
fn grades(out: &Path) -> Vec<Grade> {
    let rows = csv_records(&out.join("grades.csv"));
    rows[1..]
        .iter()
        .map(|row| rows[0].iter().cloned().zip(row.iter().cloned()).collect())
        .collect()
}

fn grade<'a>(rows: &'a [Grade], name: &str) -> &'a Grade {
    rows.iter().find(|r| r["entrant"] == name).unwrap()
}

/// Every figure of the grade sheet has at most three decimals.
fn assert_three_decimals(rows: &[Grade]) {
    for row in rows {
        for column in ["wins", "win_rate"] {
            let decimals = row[column].split_once('.').map_or(0, |(_, d)| d.len());
            assert!(decimals <= 3, "{column}: {row:?}");
        }
    }
}

/// Issue 29: a teacher reads `grades.csv` alone. Every student with a
/// game not `ok` gets a note (the first failure, its game and why, and
/// how many failed), a failed build's note shows the compiler's first
/// error, and the students who could not play share the rank after all
/// who did, whatever their figures.
#[test]
fn grade_notes_say_how_each_student_failed() {
    let dir = tempfile::tempdir().unwrap();
    let player = "#!/bin/sh\nexec \"$EVENSTEVEN\" \"$@\"\n";
    // In the order dealt, but exits (status 3) on a hand holding an ace.
    let ace_crasher = "#!/usr/bin/env bash\n\
        while read -r first rest; do\n\
          [[ $first == YOU ]] && continue\n\
          if [[ -n $rest ]]; then [[ $rest == *A* ]] && exit 3; hand=($rest); i=0; continue; fi\n\
          echo \"${hand[i]}\"; i=$((i + 1))\n\
        done\n";
    let copy = |from: &str| format!("executeit: {from}\n\tcp {from} executeit\n");
    let javac =
        "Main.java:5: error: ';' expected\n        int x = 1\n                 ^\n1 error\n";
    submissions(
        dir.path(),
        &[
            ("alice", &copy("player.sh"), &[("player.sh", player)]),
            ("bob", &copy("bob.sh"), &[("bob.sh", ace_crasher)]),
            (
                "quinn",
                &copy("quit.sh"),
                &[("quit.sh", "#!/bin/sh\nexit 1\n")],
            ),
            ("carol", FAILING_MAKE, &[("build.log", GCC_LOG)]),
            ("dave", FAILING_MAKE, &[("build.log", javac)]),
        ],
    );
    let file = write_file(
        dir.path(),
        "class.toml",
        "game = \"evensteven\"\ngames = 12\nseed = 5\n[limits]\ntimeout = \"2s\"\n\
         [[entrant]]\nglob = \"submissions/*/\"\ncommand = [\"./executeit\"]\n",
    );
    let out = dir.path().join("out");
    let run = tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    // The build's message on the terminal names the first error too.
    assert_has(
        &run.stderr,
        "first error: carol.c:3:27: error: expected ';' before '}' token",
    );

    let rows = grades(&out);
    let text = std::fs::read_to_string(out.join("grades.csv")).unwrap();
    assert_eq!(text.lines().count(), 6, "one line per student: {text}");
    for row in &rows {
        assert!(!row["note"].contains('\n'), "{row:?}");
        assert!(row["note"].chars().count() <= 400, "{row:?}");
    }
    assert_eq!(grade(&rows, "alice")["note"], "", "{rows:?}");

    // Each note starts with the first game not ok in the records.
    let records = common::timeless_records(&out);
    for name in ["bob", "quinn", "carol", "dave"] {
        let mut failed: Vec<(u64, String)> = records
            .iter()
            .flat_map(|r| {
                let index = r["index"].as_u64().unwrap();
                r["players"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|s| s["entrant"] == name && s["status"] != "ok")
                    .map(move |s| (index, s["status"].as_str().unwrap().to_owned()))
            })
            .collect();
        failed.sort();
        assert!(!failed.is_empty(), "{name} never failed: {records:?}");
        let note = &grade(&rows, name)["note"];
        let (game, status) = &failed[0];
        let start = match status.as_str() {
            "build_failed" => "build_failed: ".to_owned(),
            _ => format!("{status} in game {game}: "),
        };
        assert!(note.starts_with(&start), "{name}: {note}");
        assert!(
            note.ends_with(&format!("; {} of 12 games failed", failed.len())),
            "{name}: {note}"
        );
    }
    let bob = grade(&rows, "bob");
    assert!(bob["note"].contains("status 3"), "{bob:?}");
    assert!(bob["crashed"] != "0" && bob["crashed"] != "12", "{bob:?}");
    // A failed build: the compiler's first error, not its tail.
    let carol = &grade(&rows, "carol")["note"];
    assert_has(carol, "carol.c:3:27: error: expected ';' before '}' token");
    assert_lacks(carol, "| ^");
    let dave = &grade(&rows, "dave")["note"];
    assert_has(dave, "Main.java:5: error: ';' expected");

    // Quinn played (and lost every game); carol and dave could not: they
    // share the rank after the three who played.
    for name in ["alice", "bob", "quinn"] {
        let rank: usize = grade(&rows, name)["rank"].parse().unwrap();
        assert!(rank <= 3, "{name}: {rows:?}");
    }
    assert_eq!(grade(&rows, "carol")["rank"], "4", "{rows:?}");
    assert_eq!(grade(&rows, "dave")["rank"], "4", "{rows:?}");
    assert_three_decimals(&rows);
}

/// Shared wins (a third, a half) come out to three decimals, as `1.833`,
/// and two students whose builds failed share the last rank, though the
/// seating gave them different opponents and so different ratings.
#[test]
fn a_table_class_rounds_shared_wins_and_ranks_unbuilt_students_together() {
    let dir = tempfile::tempdir().unwrap();
    let (make, bot): (&str, Files) = (COPY_MAKE, &[("bot.sh", CHOMPER)]);
    let log: Files = &[("build.log", GCC_LOG)];
    submissions(
        dir.path(),
        &[
            ("p", FAILING_MAKE, log),
            ("q", FAILING_MAKE, log),
            ("x", make, bot),
            ("y", make, bot),
            ("z", make, bot),
        ],
    );
    let file = chomp_tables_file(dir.path(), 7, 3);
    let out = dir.path().join("out");
    let run = tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");

    // Seven games at tables of three: two whole tables and a last one
    // of one game; each of the five sits at one or two tables (after
    // three tables, ⌊9/5⌋ or ⌈9/5⌉). At a table the players that play
    // tie (a third or a half each); a failed build never wins, not even
    // at a table of failures.
    let rows = grades(&out);
    let records = common::jsonl(&out.join("records.jsonl"));
    assert_eq!(records.len(), 7);
    let mut expected: std::collections::BTreeMap<String, f64> = Default::default();
    let mut tables: std::collections::BTreeMap<String, u64> = Default::default();
    for record in &records {
        let seats = record["players"].as_array().unwrap();
        let players: Vec<&str> = seats
            .iter()
            .filter(|r| r["status"] != "build_failed")
            .map(|r| r["entrant"].as_str().unwrap())
            .collect();
        for seat in seats {
            let name = seat["entrant"].as_str().unwrap().to_owned();
            *expected.entry(name.clone()).or_default() += 0.0;
            // A table's first game (games 1, 4, 7) counts its entrants.
            if record["index"].as_u64().unwrap() % 3 == 1 {
                *tables.entry(name).or_default() += 1;
            }
        }
        for name in &players {
            *expected.get_mut(*name).unwrap() += 1.0 / players.len() as f64;
        }
    }
    for (name, count) in &tables {
        assert!((1..=2).contains(count), "{name}: {tables:?}");
    }
    assert_eq!(tables.len(), 5, "{tables:?}");
    for (name, wins) in &expected {
        let wins = match wins.fract() {
            0.0 => format!("{wins}"),
            _ => format!("{wins:.3}"),
        };
        assert_eq!(grade(&rows, name)["wins"], wins, "{name}: {rows:?}");
    }
    assert!(
        rows.iter()
            .any(|r| r["wins"].ends_with(".333") || r["wins"].ends_with(".833")),
        "{rows:?}"
    );
    assert_three_decimals(&rows);
    for name in ["p", "q"] {
        assert_eq!(grade(&rows, name)["rank"], "4", "{name}: {rows:?}");
        let note = &grade(&rows, name)["note"];
        assert_has(note, "carol.c:3:27: error: expected ';' before '}' token");
    }
    let standings = common::timeless_standings(&out);
    for row in &standings {
        let unbuilt = row["entrant"] == "p" || row["entrant"] == "q";
        assert_eq!(row["rank"] == 4, unbuilt, "{standings:?}");
    }
}

/// How many tables each entrant sat at (a table's games share one
/// `opening`; in records, the game's index `i` is game `(i − 1) mod K` of
/// table `⌈i / K⌉`), and how many games it played.
fn tables_and_games(out: &Path, seats: u64) -> BTreeMap<String, (u64, u64)> {
    let mut seen: BTreeMap<String, (BTreeSet<u64>, u64)> = BTreeMap::new();
    for record in common::jsonl(&out.join("records.jsonl")) {
        let table = record["index"].as_u64().unwrap().div_ceil(seats);
        for seat in record["players"].as_array().unwrap() {
            let entry = seen
                .entry(seat["entrant"].as_str().unwrap().to_owned())
                .or_default();
            entry.0.insert(table);
            entry.1 += 1;
        }
    }
    seen.into_iter()
        .map(|(name, (tables, games))| (name, (tables.len() as u64, games)))
        .collect()
}

/// `DIR/class.toml`: `games` games of Chomp over `DIR/submissions/*/` on
/// a 2x3 array (`DIR/array.txt`, written too) at tables of `seats`, of 3
/// rounds at most.
fn chomp_tables_file(dir: &Path, games: u64, seats: u64) -> PathBuf {
    write_file(dir, "array.txt", "ABC\nDEF\n");
    write_file(
        dir,
        "class.toml",
        format!(
            "game = \"chomp\"\ngames = {games}\nseed = 3\n\
             [limits]\nprep = \"0s\"\narrays = \"array.txt\"\nseats = {seats}\nmax_rounds = 3\n\
             [[entrant]]\nglob = \"submissions/*/\"\n"
        ),
    )
}

/// `submissions/NAME/` in `dir` for each of `names`: a [`CHOMPER`] built
/// by make, but `failing`, whose build fails with [`GCC_LOG`].
fn chomp_class(dir: &Path, names: &[String], failing: &str) {
    let (make, bot): (&str, Files) = (COPY_MAKE, &[("bot.sh", CHOMPER)]);
    let log: Files = &[("build.log", GCC_LOG)];
    let students: Vec<(&str, &str, Files)> = names
        .iter()
        .map(|n| match n == failing {
            true => (n.as_str(), FAILING_MAKE, log),
            false => (n.as_str(), make, bot),
        })
        .collect();
    submissions(dir, &students);
}

/// Issue 38: 8 folders (7 that play, 1 that does not compile), tables of
/// 4, 8 games: the old sliding table left s6, s7 and s8 without a game,
/// and s8's row said `disqualified 0` with no note. Now each sits at one
/// table of 4 games, and s8 ranks last with the compiler's first error.
#[test]
fn eight_students_at_tables_of_four_each_play_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (1..=8).map(|i| format!("s{i}")).collect();
    chomp_class(dir.path(), &names, "s8");
    let file = chomp_tables_file(dir.path(), 8, 4);
    let out = dir.path().join("out");
    let run = tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let played = tables_and_games(&out, 4);
    for name in &names {
        assert_eq!(played.get(name), Some(&(1, 4)), "{name}: {played:?}");
    }
    let rows = grades(&out);
    for name in &names {
        assert_eq!(grade(&rows, name)["games"], "4", "{name}: {rows:?}");
    }
    let s8 = grade(&rows, "s8");
    assert_eq!(s8["rank"], "8", "{rows:?}");
    assert_eq!(s8["disqualified"], "4", "{rows:?}");
    assert_eq!(s8["wins"], "0", "{rows:?}");
    assert!(s8["note"].contains("carol.c:3:27: error"), "{s8:?}");
}

/// Issue 38: a run too short to seat everyone is refused before any
/// game, saying how many games would; a partial last table is said.
#[test]
fn a_class_too_large_for_its_games_is_refused_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let (make, bot): (&str, Files) = (COPY_MAKE, &[("bot.sh", CHOMPER)]);
    let names: Vec<String> = (1..=10).map(|i| format!("s{i:02}")).collect();
    let students: Vec<(&str, &str, Files)> =
        names.iter().map(|n| (n.as_str(), make, bot)).collect();
    submissions(dir.path(), &students);
    let file = chomp_tables_file(dir.path(), 9, 3);
    let out = dir.path().join("out");
    let run = tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(
        run.stderr.contains("9 games seat 9 of the 10 entrants")
            && run
                .stderr
                .contains("10 games (4 tables) give every entrant a table")
            && run.stderr.contains("12 play every table whole"),
        "{}",
        run.stderr
    );
    // Nothing was built: build logs would be in `out/build`.
    assert!(!out.exists());

    chomp_tables_file(dir.path(), 10, 3);
    let run = tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(
        &run.stderr,
        "10 games at tables of 3 seats: 3 whole tables and a last one of 1 game",
    );
    // Four tables seat 12: everyone once, two of them (among those with
    // the fewest) twice.
    let played = tables_and_games(&out, 3);
    assert_eq!(played.len(), 10, "{played:?}");
    assert!(
        played.values().all(|&(t, _)| (1..=2).contains(&t)),
        "{played:?}"
    );
    assert_eq!(
        played.values().map(|&(t, _)| t).sum::<u64>(),
        12,
        "{played:?}"
    );
}

/// The text of the first ```toml block after `heading` in a docs page.
fn docs_toml(page: &str, heading: &str) -> String {
    let text =
        std::fs::read_to_string(format!("{}/docs/{page}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let from = text.find(heading).expect("the heading");
    let block = &text[from..];
    let start = block.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let end = block[start..].find("```").unwrap();
    block[start..start + end].to_owned()
}

/// Issue 38: docs/chomp.md's class file, run as printed (from the folder
/// above `class/`, with its bare relative names) on a class of 200 quick
/// bots, `prep = "0s"`: every student sits at a table (the old sliding
/// table seated 69 of 200); one whose build fails has its row, last.
#[test]
fn the_docs_class_of_200_gives_every_student_a_table() {
    let (dir, class) = temp_path("class");
    let names: Vec<String> = (1..=200).map(|i| format!("student{i:03}")).collect();
    chomp_class(&class, &names, "student117");
    std::fs::create_dir_all(class.join("arrays")).unwrap();
    write_file(&class, "arrays/small.txt", "ABC\nDEF\n");
    let toml = docs_toml("chomp.md", "## A class-sized run");
    assert_has(&toml, "prep = \"3s\"");
    let toml = toml.replace("prep = \"3s\"", "prep = \"0s\"");
    write_file(&class, "chomp.toml", toml);

    // As printed: `referee tournament class/chomp.toml --out runs/chomp
    // --standings-every 50`, from the folder that holds `class/`.
    let env = env();
    let mut args = vec!["tournament", "--no-progress"];
    args.extend(env.iter().map(String::as_str));
    args.extend([
        "class/chomp.toml",
        "--out",
        "runs/chomp",
        "--standings-every",
        "50",
    ]);
    let run = referee_with(args, b"", &[], Some(dir.path()));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(
        &run.stderr,
        "200 games at tables of 3 seats: 66 whole tables and a last one of 2 games",
    );
    let out = dir.path().join("runs/chomp");
    let played = tables_and_games(&out, 3);
    assert_eq!(played.len(), 200, "{played:?}");
    // 67 tables of 3 seat 201: one student sits at two.
    let twice = played.values().filter(|&&(tables, _)| tables == 2).count();
    assert!(
        played
            .values()
            .all(|&(tables, _)| (1..=2).contains(&tables)),
        "{played:?}"
    );
    assert_eq!(twice, 1, "{played:?}");
    let rows = grades(&out);
    assert_eq!(rows.len(), 200);
    assert!(rows.iter().all(|r| r["games"] != "0"), "{rows:?}");
    let failed = grade(&rows, "student117");
    assert_eq!(failed["rank"], "200", "{failed:?}");
    assert!(failed["note"].contains("carol.c:3:27: error"), "{failed:?}");
}

/// A class file of `entrants` (one quick bot each) at tables of `seats`
/// playing `games` games of Chomp on a tiny array, in `dir`.
fn greedy_class(dir: &Path, entrants: usize, seats: usize, games: u64) -> PathBuf {
    use std::fmt::Write;
    write_file(dir, "array.txt", "ABC\nDEF\n");
    let mut toml = format!(
        "game = \"chomp\"\ngames = {games}\nseed = 3\n\
         [limits]\nprep = \"0s\"\narrays = \"array.txt\"\nseats = {seats}\nmax_rounds = 2\n"
    );
    let greedy = env!("CARGO_BIN_EXE_chomp-greedy");
    for i in 0..entrants {
        write!(
            toml,
            "[[entrant]]\nname = \"s{i:05}\"\ncommand = [\"{greedy}\"]\n"
        )
        .unwrap();
    }

    write_file(dir, "class.toml", toml)
}

/// Issue 49: a class file of 60,000 entrants at tables of 5 aborted
/// (`memory allocation of 14400000000 bytes failed`): the schedule
/// counted the meetings of every pair of entrants in one matrix. Now it
/// plays, in a few hundred MB, under an address space of 4 GiB (where
/// the matrix cannot be had, as on the machine that aborted). The run
/// seats everyone (60,000 games, 12,000 tables); one shard of it plays
/// two of them, tables 1 and 6,001, so that the dealer deals 6,001
/// tables of 5 among 60,000.
#[test]
fn a_class_of_sixty_thousand_at_tables_of_five_plays_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let file = greedy_class(dir.path(), 60_000, 5, 60_000);
    let out = dir.path().join("out");
    let (run, peak) = tournament_in_4_gib(&file, &["--shard", "1/30000"], &out);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let records = common::jsonl(&out.join("records.jsonl"));
    let mut indices: Vec<u64> = records
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    indices.sort_unstable();
    assert_eq!(indices, [1, 30_001]);
    for record in &records {
        let seated: BTreeSet<&str> = record["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|seat| seat["entrant"].as_str().unwrap())
            .collect();
        assert_eq!(seated.len(), 5, "{record}");
    }
    assert_peak_below(peak, 800);
}

/// `referee tournament FILE EXTRA... --out OUT` in an address space of
/// 4 GiB (see [`common::referee_in_memory`]), which ended without a
/// signal (an abort is `SIGABRT`): the run, and its peak resident memory.
fn tournament_in_4_gib(file: &Path, extra: &[&str], out: &Path) -> (common::Run, u64) {
    let mut args = vec!["tournament", "--no-progress", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend(["--out", out.to_str().unwrap()]);
    let (run, peak) = common::referee_in_memory(args, 4 << 30);
    assert_eq!(run.signal, None, "{}", run.stderr);
    (run, peak)
}

/// Says a run's peak resident memory, and checks it is below `mb` MB.
fn assert_peak_below(peak: u64, mb: u64) {
    eprintln!("peak resident memory: {} MB", peak >> 20);
    assert!(peak < mb << 20, "peak resident memory {} MB", peak >> 20);
}

/// Issue 49: a run whose schedule would not fit in memory (a billion
/// games among 60,000: how often each two met, for 10 pairs a table) is
/// refused before anything runs, naming the file and the most games a
/// run of 60,000 at tables of 5 can take, which then starts.
#[test]
fn a_schedule_too_large_to_hold_is_refused_with_the_games_a_run_can_take() {
    let dir = tempfile::tempdir().unwrap();
    let file = greedy_class(dir.path(), 60_000, 5, 1_000_000_000);
    let out = dir.path().join("out");
    let (run, _) = tournament_in_4_gib(&file, &[], &out);
    assert_eq!(run.code, Some(64), "{}", run.stderr);
    let said = format!(
        "referee tournament: {}: 1000000000 games among 60000 entrants at tables of 5 are \
         200000000 tables",
        file.display()
    );
    assert_has(&run.stderr, &said);
    assert_has(
        &run.stderr,
        "a run of 60000 entrants at tables of 5 takes at most 24397765 games",
    );
    assert!(!out.exists());
}

/// Tables of more seats than the 64 candidates a table was chosen from
/// (70 entrants at tables of 66): the first table panicked ("enough
/// entrants for a table", an internal error). The run seats everyone
/// (67 games); one shard of it plays the first game.
#[test]
fn a_table_of_more_seats_than_sixty_four_is_dealt() {
    let dir = tempfile::tempdir().unwrap();
    let file = greedy_class(dir.path(), 70, 66, 67);
    let out = dir.path().join("out");
    let run = tournament(&[
        file.to_str().unwrap(),
        "--shard",
        "1/67",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let records = common::jsonl(&out.join("records.jsonl"));
    assert_eq!(records.len(), 1);
    let seated: BTreeSet<&str> = records[0]["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|seat| seat["entrant"].as_str().unwrap())
        .collect();
    assert_eq!(seated.len(), 66, "{}", records[0]);
}

/// Issue 49: a class of folders kept, in each entrant's program, the
/// list of every other entrant's folder to hide: 10,000 folders made
/// 100 million paths (some 6 GB, beyond this address space of 4 GiB;
/// a class of 20,000 was killed at 23 GB). The list is kept once now.
/// The run seats everyone (10,000 games); one shard plays two of them.
#[test]
fn a_class_of_ten_thousand_folders_keeps_one_list_of_what_to_hide() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "array.txt", "ABC\nDEF\n");
    for i in 0..10_000 {
        std::fs::create_dir_all(dir.path().join(format!("submissions/s{i:05}"))).unwrap();
    }
    let file = write_file(
        dir.path(),
        "class.toml",
        format!(
            "game = \"chomp\"\ngames = 10000\nseed = 3\n\
             [limits]\nprep = \"0s\"\narrays = \"array.txt\"\nseats = 5\nmax_rounds = 3\n\
             [[entrant]]\nglob = \"submissions/*/\"\ncommand = [\"{}\"]\n",
            env!("CARGO_BIN_EXE_chomp-greedy")
        ),
    );
    let out = dir.path().join("out");
    let (run, peak) = tournament_in_4_gib(&file, &["--shard", "1/5000"], &out);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(common::jsonl(&out.join("records.jsonl")).len(), 2);
    assert_peak_below(peak, 400);
}
