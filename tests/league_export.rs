//! `referee league show` and `referee league export` through the real
//! binary (issue 40, items 4 and 5): every student has a row, a student
//! whose builds all failed too (ranked after everyone who played, with the
//! compiler's first error); `grades.csv` has one row per student; the
//! export is a tournament's `--out` that `referee report` reads whole.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::league::export;
use common::{assert_has, assert_lacks, fixture, referee_ok, write_file};
use serde_json::Value;

/// The compiler's first error in carol's failing build.
const FIRST_ERROR: &str = "carol.c:3:27: error: expected ';' before '}' token";

/// A makefile that fails as gcc does: its first error, a warning, a later
/// error, then make's own line.
const FAILING_MAKE: &str = "pc2:\n\
    \t@echo 'cc -O2 -o pc2 carol.c' >&2\n\
    \t@echo \"carol.c: In function 'main':\" >&2\n\
    \t@echo \"carol.c:3:27: error: expected ';' before '}' token\" >&2\n\
    \t@echo \"carol.c:7:5: warning: implicit declaration of function 'play'\" >&2\n\
    \t@echo \"carol.c:9:12: error: 'board' undeclared\" >&2\n\
    \t@exit 1\n";

/// A duel player that beats `weak.sh` and writes to its stderr each game.
const TALKER: &str = "#!/bin/sh\nread -r _ n\necho \"bob thinks about game $n\" >&2\necho 2\n";

/// A league over `subs/*` in `dir`: ann and cat play `weak.sh`, bob
/// [`TALKER`], and carol's folder never builds. Returns the league file.
fn class(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let sub = |name: &str| {
        let folder = dir.join("subs").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        folder
    };
    for name in ["ann", "cat"] {
        std::fs::copy(fixture("duel/weak.sh"), sub(name).join("pc2")).unwrap();
    }
    let bob = sub("bob").join("pc2");
    std::fs::write(&bob, TALKER).unwrap();
    std::fs::set_permissions(&bob, std::fs::Permissions::from_mode(0o755)).unwrap();
    let carol = sub("carol");
    write_file(&carol, "Makefile", FAILING_MAKE);
    write_file(&carol, "carol.c", "int main(void) { return 0 }\n");
    common::league::duel_glob_file(dir)
}

/// `referee league run FILE --db DB ARGS`, to its end.
fn league(file: &Path, db: &Path, args: &[&str]) -> common::Run {
    let run = common::league::run(file, db, args);
    assert_eq!(run.code, Some(0), "{run:?}");
    run
}

/// The file in `OUT/stderr/` of the entrant whose name holds `who`.
fn log_of(out: &Path, who: &str) -> PathBuf {
    let logs = std::fs::read_dir(out.join("stderr")).unwrap_or_else(|e| panic!("stderr/: {e}"));
    let mut found: Vec<PathBuf> = logs
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(who))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

/// The league the tests share: 12 games, cat's folder changed after the
/// first 6 (so cat has two versions), carol's never built. Its folder
/// and database.
fn played(dir: &Path) -> PathBuf {
    let file = class(dir);
    let db = dir.join("league.db");
    league(&file, &db, &["--games", "6", "--jobs", "2"]);
    // Cat's next version: a changed source.
    let pc2 = dir.join("subs/cat/pc2");
    let text = std::fs::read_to_string(&pc2).unwrap();
    std::fs::write(&pc2, text + "# v2\n").unwrap();
    let run = league(&file, &db, &["--games", "12", "--jobs", "2"]);
    assert_has(&run.stderr, "cat@v2 enters");
    db
}

/// Issue 40, item 4: a student whose every build failed is in `league
/// show`, after everyone who played, with no rating, "did not build" and
/// the compiler's first error.
#[test]
fn a_student_who_never_built_is_shown_last_with_the_first_error() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let db = played(dir.path());
    let show = referee_ok(["league", "show", db.to_str().unwrap()]);
    let text = &show.stdout;
    for name in ["ann@v1", "bob@v1", "cat@v2", "carol@v1"] {
        assert!(text.contains(name), "{name}: {text}");
    }
    assert_lacks(text, "cat@v1");
    assert_has(text, "did not build");
    assert_has(text, FIRST_ERROR);
    assert!(
        !text.contains("'board' undeclared"),
        "the first error: {text}"
    );
    // Carol's line is the last, ranked after the three who played.
    let carol = text.lines().find(|l| l.contains("carol@v1")).unwrap();
    assert!(
        text.lines()
            .skip_while(|l| !l.contains("carol@v1"))
            .skip(1)
            .all(|l| !l.contains("@v")),
        "{text}"
    );
    assert!(
        carol.split('|').nth(1).map(str::trim) == Some("4") || carol.trim_start().starts_with('4'),
        "rank 4: {carol}"
    );
    // No rating: carol's line has none of the table's figures.
    assert!(
        !carol.contains("25.00") && !carol.contains("8.33"),
        "{carol}"
    );
}

/// Issue 40, items 4 and 5: the export's `grades.csv` has one row per
/// student, their current version, the one who never built last with the
/// first error and their build log; `standings.csv`/`.json` keep a row
/// per version; `referee report` on the export counts every game; the
/// folder has a tournament's `stderr/` and `games.log`.
#[test]
fn the_export_grades_each_student_once_and_report_reads_every_game() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let db = played(dir.path());
    let out = dir.path().join("export");
    export(&db, &out);

    // grades.csv: a row per student.
    let grades = common::csv_rows::<BTreeMap<String, String>>(&out.join("grades.csv"));
    let names: Vec<&str> = grades.iter().map(|r| r["entrant"].as_str()).collect();
    assert_eq!(
        names,
        ["ann@v1", "bob@v1", "carol@v1", "cat@v2"],
        "{grades:?}"
    );
    let grade = |name: &str| grades.iter().find(|r| r["entrant"] == name).unwrap();
    let carol = grade("carol@v1");
    let last = grades
        .iter()
        .map(|r| r["rank"].parse::<usize>().unwrap())
        .max()
        .unwrap();
    assert_eq!(carol["rank"], "4", "{grades:?}");
    assert_eq!(last, 4, "{grades:?}");
    for name in ["ann@v1", "bob@v1", "cat@v2"] {
        assert!(
            grade(name)["rank"].parse::<usize>().unwrap() <= 3,
            "{grades:?}"
        );
        assert!(grade(name)["games"] != "0", "{grades:?}");
    }
    // ann's folder is a copy of cat's first: flagged, as the page does.
    assert!(
        grade("ann@v1")["note"].contains("same sources as cat@v1"),
        "{grades:?}"
    );
    assert!(
        !grade("bob@v1")["note"].contains("same sources"),
        "{grades:?}"
    );
    assert_eq!(carol["games"], "0", "{carol:?}");
    assert_ne!(carol["failures"], "0", "{carol:?}");
    assert_eq!(carol["failures"], carol["disqualified"], "{carol:?}");
    let note = &carol["note"];
    assert_has(note, "did not build");
    assert_has(note, FIRST_ERROR);
    assert_lacks(note, "'board' undeclared");
    // The note names the build's log, which the export holds.
    let log = note
        .split_whitespace()
        .find(|w| w.starts_with("build/"))
        .unwrap_or_else(|| panic!("no log named: {note}"))
        .trim_end_matches([')', ';', ',', '.']);
    let log = std::fs::read_to_string(out.join(log)).unwrap();
    assert!(log.contains("'board' undeclared"), "the whole log: {log}");

    // standings.csv and .json: a row per version, carol's without a rating.
    let standings = common::csv_rows::<BTreeMap<String, String>>(&out.join("standings.csv"));
    let mut versions: Vec<&str> = standings.iter().map(|r| r["entrant"].as_str()).collect();
    versions.sort();
    assert_eq!(
        versions,
        ["ann@v1", "bob@v1", "carol@v1", "cat@v1", "cat@v2"]
    );
    let json: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("standings.json")).unwrap())
            .unwrap();
    let carol = json.iter().find(|r| r["entrant"] == "carol@v1").unwrap();
    assert!(carol.get("rating").is_none(), "{carol}");
    let worst = json.iter().map(|r| r["rank"].as_u64().unwrap()).max();
    assert_eq!(carol["rank"].as_u64(), worst, "{json:?}");
    let played = json.iter().filter(|r| r["games"] != 0).count() as u64;
    assert_eq!(carol["rank"].as_u64(), Some(played + 1), "{json:?}");

    // `referee report` on it counts every game.
    referee_ok(["report", out.to_str().unwrap()]);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("12 of 12 games"), "{}", &page[..2000]);
    assert!(!page.contains("0 of 12 games"), "{}", &page[..2000]);
    assert!(page.contains("<summary>12 games,"), "every game listed");

    // A tournament's folder: stderr/ and games.log, the records without
    // the stderr (in stderr/), each with the run's fingerprint.
    let games = std::fs::read_to_string(out.join("games.log")).unwrap();
    let indexes: Vec<&str> = games.lines().filter(|l| l.starts_with("[Index ")).collect();
    assert_eq!(indexes.len(), 12, "{games}");
    assert_eq!(indexes[0], "[Index \"1\"]");
    let bob = std::fs::read_to_string(log_of(&out, "bob")).unwrap();
    assert!(
        bob.starts_with("standard error of entrant bob@v1\n"),
        "{bob}"
    );
    assert_has(&bob, "bob thinks about game");
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let records = common::jsonl(&out.join("records.jsonl"));
    assert_eq!(records.len(), 12);
    for record in &records {
        assert_eq!(record["tournament"], info["fingerprint"], "{record}");
        for seat in record["players"].as_array().unwrap() {
            assert!(seat.get("stderr").is_none(), "{record}");
        }
    }

    // Exported again into the same folder: nothing doubled.
    export(&db, &out);
    let again = std::fs::read_to_string(out.join("games.log")).unwrap();
    assert_eq!(again, games);
    assert_eq!(std::fs::read_to_string(log_of(&out, "bob")).unwrap(), bob);
}

/// Issue 51: the league's export notes a student who crashed in every
/// game, in `grades.csv`'s note (its other cells and the header as a
/// tournament's) and, through `referee report`, in `report.html`.
#[test]
fn the_export_notes_a_student_who_crashed_in_every_game() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let folder = |name: &str| {
        let folder = dir.path().join("subs").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        folder.join("pc2")
    };
    std::fs::copy(fixture("duel/weak.sh"), folder("ann")).unwrap();
    let dan = folder("dan");
    std::fs::write(&dan, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&dan, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = common::league::duel_glob_file(dir.path());
    let db = dir.path().join("league.db");
    league(&file, &db, &["--games", "4", "--jobs", "1"]);
    let out = dir.path().join("export");
    export(&db, &out);
    let text = std::fs::read_to_string(out.join("grades.csv")).unwrap();
    assert!(
        text.starts_with(
            "entrant,games,wins,win_rate,failures,timeouts,crashed,incorrect,disqualified,\
             internal,rank,note\n"
        ),
        "{text}"
    );
    let grades = common::csv_rows::<BTreeMap<String, String>>(&out.join("grades.csv"));
    let grade = |name: &str| grades.iter().find(|r| r["entrant"] == name).unwrap();
    let note = "crashed in every game: keeps its score, as the rules say";
    assert_eq!(
        grade("dan@v1")["crashed"],
        grade("dan@v1")["games"],
        "{text}"
    );
    assert!(grade("dan@v1")["note"].ends_with(note), "{text}");
    assert!(!grade("ann@v1")["note"].contains(note), "{text}");

    referee_ok(["report", out.to_str().unwrap()]);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_has(&page, &format!("dan@v1: {note}"));
}
