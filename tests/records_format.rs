//! Records name their format (issue 51): every record begins with
//! `"format":2`, and every record that has seats calls them `players` (a
//! tournament's were `results`, `play`'s `players`). Records of format 1,
//! written by the referee before (`tests/fixtures/records-v1`, see its
//! README), are still read by every reader: `tournament --resume`,
//! `merge`, `report`, `replay` and `league export`, each as it reads the
//! same records in format 2.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_lacks, fixture, read_lines, referee, referee_ok, temp_path, write_file};
use serde_json::Value;

fn old(name: &str) -> String {
    fixture(&format!("records-v1/{name}"))
}

/// A record of format 1 as format 2 has it: its format first, its seats
/// under `players`, every other byte as it was.
fn as_format_2(line: &str) -> String {
    assert_lacks(line, "\"format\":");
    let renamed = line.replacen("\"results\":[", "\"players\":[", 1);
    format!("{{\"format\":2,{}", &renamed[1..])
}

fn index(line: &str) -> u64 {
    serde_json::from_str::<Value>(line).unwrap()["index"]
        .as_u64()
        .unwrap()
}

/// A tournament's output directory of the fixtures copied to `to`, its
/// records in format 2 when `new`.
fn copy_run(run: &str, to: &Path, new: bool) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    for file in ["run.json", "standings.json"] {
        std::fs::copy(old(&format!("{run}/{file}")), to.join(file)).unwrap();
    }
    let records: String = read_lines(Path::new(&old(&format!("{run}/records.jsonl"))))
        .iter()
        .map(|l| format!("{}\n", if new { as_format_2(l) } else { l.clone() }))
        .collect();
    write_file(to, "records.jsonl", records);
    to.to_owned()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_record_written_names_its_format_and_its_seats_players() {
    let (dir, out) = temp_path("duel");
    let _run = common::tournament(&[&old("duel.toml"), "--out", out.to_str().unwrap()]);
    let play = dir.path().join("play.jsonl");
    let duel = fixture("duel/game.toml");
    let (weak, strong) = (fixture("duel/weak.sh"), fixture("duel/strong.sh"));
    let _run = referee_ok([
        "play",
        "--games",
        "2",
        "--results",
        play.to_str().unwrap(),
        &duel,
        &weak,
        &strong,
    ]);
    let dealt = dir.path().join("dealer.jsonl");
    let run = referee(
        [
            "dealer",
            "--results",
            dealt.to_str().unwrap(),
            common::evensteven_bin(),
        ],
        b"4 876390176\n",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    for (file, seats) in [
        (out.join("records.jsonl"), true),
        (play, true),
        (dealt, false),
    ] {
        let all = read_lines(&file);
        assert!(!all.is_empty(), "{}", file.display());
        for line in all {
            assert!(line.starts_with("{\"format\":2,"), "{line}");
            let record: Value = serde_json::from_str(&line).unwrap();
            assert!(record.get("results").is_none(), "{line}");
            assert_eq!(record["players"].is_array(), seats, "{line}");
        }
    }
}

/// `merge` reads a run of format 1 and writes its records in format 2,
/// every other field and figure byte for byte, with the standings the
/// referee that wrote them gave.
#[test]
fn merge_reads_old_records_and_writes_them_field_for_field() {
    let dir = tempfile::tempdir().unwrap();
    for run in ["duel", "solo"] {
        let shard = copy_run(run, &dir.path().join(format!("{run}-old")), false);
        let merged = dir.path().join(format!("{run}-merged"));
        let done = referee_ok([
            "merge",
            shard.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ]);
        let mut expected: Vec<String> = read_lines(&shard.join("records.jsonl"))
            .iter()
            .map(|l| as_format_2(l))
            .collect();
        expected.sort_by_key(|l| index(l));
        let mut written = read_lines(&merged.join("records.jsonl"));
        written.sort_by_key(|l| index(l));
        assert_eq!(written, expected, "{run}");
        assert_eq!(
            json(&merged.join("standings.json")),
            json(&shard.join("standings.json")),
            "{run}"
        );
        // The same run in format 2 merges to the same.
        let new = copy_run(run, &dir.path().join(format!("{run}-new")), true);
        let again = referee(["merge", new.to_str().unwrap()], b"");
        assert_eq!(again.code, Some(0), "{run}: {again:?}");
        assert!(
            done.stdout.starts_with(&again.stdout),
            "{run}: {done:?}\n{again:?}"
        );
    }
}

/// `report` makes the same page of a run in format 1 as of the same run
/// in format 2.
#[test]
fn report_reads_old_records_as_it_reads_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    for run in ["duel", "solo"] {
        let mut pages = Vec::new();
        for new in [false, true] {
            let out = copy_run(run, &dir.path().join(format!("{run}-{new}")), new);
            let done = referee(["report", out.to_str().unwrap()], b"");
            assert_eq!(done.code, Some(0), "{run}: {done:?}");
            let page = std::fs::read_to_string(out.join("report.html")).unwrap();
            pages.push(page.replace(out.to_str().unwrap(), "OUT"));
        }
        let games = json(&Path::new(&old(run)).join("run.json"))["games"].clone();
        assert!(
            pages[0].contains(&format!("{games} games")),
            "{run}: the page counts no games"
        );
        assert!(pages[0] == pages[1], "{run}: the pages differ");
    }
}

/// `replay` draws the same page of records in format 1 (a tournament's
/// `results`, `play`'s `players`) as of the same records in format 2.
#[test]
fn replay_reads_old_records_as_it_reads_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["duel/records.jsonl", "solo/records.jsonl", "play.jsonl"] {
        let mut pages = Vec::new();
        for new in [false, true] {
            let records = dir.path().join(format!("{new}.jsonl"));
            let text: String = read_lines(Path::new(&old(file)))
                .iter()
                .map(|l| format!("{}\n", if new { as_format_2(l) } else { l.clone() }))
                .collect();
            std::fs::write(&records, text).unwrap();
            let page = dir.path().join("page.html");
            common::replay(&records, &page);
            let page = std::fs::read_to_string(&page).unwrap();
            pages.push(page.replace(&format!("{new}.jsonl"), "RECORDS"));
        }
        assert!(
            pages[0].contains("weak") || pages[0].contains("in-order"),
            "{file}"
        );
        assert!(pages[0] == pages[1], "{file}: the pages differ");
    }
}

/// `tournament --resume` goes on from a run whose records are of format
/// 1: the games in them are not played again, the others are added in
/// format 2, and the standings count them all as a run of the referee of
/// today counts the same games.
#[test]
fn resume_goes_on_from_old_records() {
    let dir = tempfile::tempdir().unwrap();
    for run in ["duel", "solo"] {
        let file = old(&format!("{run}.toml"));
        // The run's fingerprint holds its programs' paths: here's.
        let fresh = dir.path().join(format!("{run}-fresh"));
        let _done = common::tournament(&[&file, "--out", fresh.to_str().unwrap()]);
        let info = json(&fresh.join("run.json"));
        let fingerprint = info["fingerprint"].as_str().unwrap();
        let old_info = json(&Path::new(&old(run)).join("run.json"));
        let old_fingerprint = old_info["fingerprint"].as_str().unwrap();
        let games = info["games"].as_u64().unwrap() as usize;

        // Interrupted after all but two of its games.
        let out = dir.path().join(format!("{run}-resumed"));
        std::fs::create_dir_all(&out).unwrap();
        std::fs::copy(fresh.join("run.json"), out.join("run.json")).unwrap();
        let kept: Vec<String> = read_lines(Path::new(&old(&format!("{run}/records.jsonl"))))
            .into_iter()
            .take(games - 2)
            .map(|l| l.replace(old_fingerprint, fingerprint))
            .collect();
        let text: String = kept.iter().map(|l| format!("{l}\n")).collect();
        write_file(&out, "records.jsonl", text);
        let done = common::tournament(&[&file, "--out", out.to_str().unwrap(), "--resume"]);
        assert!(
            done.stderr
                .contains(&format!("resuming: {} game(s) already in", games - 2)),
            "{run}: {}",
            done.stderr
        );
        let now = read_lines(&out.join("records.jsonl"));
        assert_eq!(now.len(), games, "{run}");
        assert_eq!(now[..games - 2], kept[..], "{run}: the old records changed");
        for line in &now[games - 2..] {
            assert!(line.starts_with("{\"format\":2,"), "{run}: {line}");
        }
        let mut indices: Vec<u64> = now.iter().map(|l| index(l)).collect();
        indices.sort();
        assert_eq!(indices, (1..=games as u64).collect::<Vec<_>>(), "{run}");
        // Who played, won and scored what: as the fresh run of today.
        let outcomes = |dir: &Path| -> Vec<Value> {
            json(&dir.join("standings.json"))
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    serde_json::json!([r["entrant"], r["games"], r["wins"], r["disqualified"]])
                })
                .collect()
        };
        assert_eq!(outcomes(&out), outcomes(&fresh), "{run}");
    }
}

/// `league export` reads a league's database whose games were recorded
/// in format 1, and writes them in format 2, every other field and
/// figure as the database holds it; `league show` reads them too.
#[test]
fn league_export_reads_old_records() {
    let (dir, db) = temp_path("league.db");
    std::fs::copy(old("league.db"), &db).unwrap();
    let stored: Vec<String> = {
        let connection = rusqlite::Connection::open(&db).unwrap();
        let mut query = connection
            .prepare("SELECT record FROM games ORDER BY id")
            .unwrap();
        query
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(stored.len(), 6);
    let out = dir.path().join("out");
    common::league::export(&db, &out);
    let fingerprint = json(&out.join("run.json"))["fingerprint"]
        .as_str()
        .unwrap()
        .to_owned();
    let expected: Vec<String> = stored
        .iter()
        .map(|record| {
            let line = as_format_2(record);
            let tournament = serde_json::to_string(&fingerprint).unwrap();
            format!("{},\"tournament\":{tournament}}}", &line[..line.len() - 1])
        })
        .collect();
    assert_eq!(read_lines(&out.join("records.jsonl")), expected);
    let report = referee(["report", out.to_str().unwrap()], b"");
    assert_eq!(report.code, Some(0), "{report:?}");
    let show = referee(["league", "show", db.to_str().unwrap()], b"");
    assert_eq!(show.code, Some(0), "{show:?}");
    assert!(
        show.stdout.contains("standings after 6 games") && show.stdout.contains("Elo: logistic, "),
        "{}",
        show.stdout
    );
}
