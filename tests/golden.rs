//! Fixed-seed records of every built-in game, and of an external judge's
//! game, checked against the records the referee wrote before its games
//! moved onto the `Game` interface (`tests/fixtures/golden/*.jsonl`): the
//! games, their outcomes, verdicts and scores must not change when the
//! code around them does. Times, which differ from run to run, are left
//! out, as are the referee's version and the run's fingerprint (which
//! holds the paths of the programs).
//!
//! A deliberate change of a game's records regenerates its file:
//! `REFEREE_BLESS=1 cargo test --release --test golden`.

mod common;

use common::{referee_ok, temp_path};

use std::path::Path;

use serde_json::Value;

fn records_of(game: &str) -> (Vec<Value>, String) {
    let (_dir, out) = temp_path("out");
    let file = format!("tests/fixtures/golden/{game}.toml");
    referee_ok(["tournament", file.as_str(), "--out", out.to_str().unwrap()]);
    let mut records = common::timeless_records(&out);
    for r in &mut records {
        let fields = r.as_object_mut().unwrap();
        fields.remove("referee");
        // The tournament file's path is made absolute where the command
        // line is read: the array's is written from the project's root.
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
        if let Some(Value::String(array)) = fields.get_mut("array")
            && let Some(relative) = array.strip_prefix(root)
        {
            *array = relative.to_owned();
        }
        fields.remove("tournament");
    }
    let text = records.iter().map(|r| format!("{r}\n")).collect::<String>();
    (records, text)
}

fn check(game: &str) {
    let golden = Path::new("tests/fixtures/golden").join(format!("{game}.jsonl"));
    let (records, text) = records_of(game);
    if std::env::var_os("REFEREE_BLESS").is_some() {
        std::fs::write(&golden, text).unwrap();
        return;
    }
    let expected: Vec<Value> = std::fs::read_to_string(&golden)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), expected.len(), "{game}: number of games");
    for (got, want) in records.iter().zip(&expected) {
        assert_eq!(got, want, "{game}: game {} differs", want["index"]);
    }
}

#[test]
fn even_steven_records_are_unchanged() {
    check("evensteven");
}

#[test]
fn septica_records_are_unchanged() {
    check("septica");
}

#[test]
fn aces_up_records_are_unchanged() {
    check("acesup");
}

#[test]
fn chomp_records_are_unchanged() {
    check("chomp");
}

#[test]
fn external_judge_records_are_unchanged() {
    check("tron");
}
