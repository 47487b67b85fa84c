//! `referee tournament` with a head-to-head SPRT, through the real binary.

mod common;

use std::path::Path;

use common::runs::tournament_args;
use common::{assert_has, fixture, referee, referee_ok, write_file};
use serde_json::Value;

/// Even Steven, the reference player against the in-order one, tested by
/// an SPRT with `baseline` as the old version.
fn sprt_file(dir: &Path, baseline: &str, extra: &str) -> String {
    let text = format!(
        "game = \"evensteven\"\ngames = 400\nseed = 3\nbaseline = \"{baseline}\"\n\
         sprt = {{ elo0 = 0, elo1 = 20, alpha = 0.05, beta = 0.05 }}\n{extra}\
         [limits]\ntimeout = \"2s\"\n\
         [[entrant]]\nname = \"reference\"\ncommand = [\"{}\"]\n\
         [[entrant]]\nname = \"in-order\"\ncommand = [\"{}\", \"play\", \"0\"]\n",
        env!("CARGO_BIN_EXE_evensteven"),
        fixture("misbehave.sh")
    );
    let path = write_file(dir, format!("{baseline}.toml"), text);
    path.to_str().unwrap().to_owned()
}

/// Runs the test with `baseline` as the old version, two games at once,
/// into `DIR/out`, which must end with `code`, say `says` and write
/// `result` in `sprt.json`: the run, its folder and its `sprt.json`.
fn decided(
    dir: &Path,
    baseline: &str,
    code: i32,
    says: &str,
    result: &str,
) -> (common::Run, std::path::PathBuf, Value) {
    let file = sprt_file(dir, baseline, "");
    let out = dir.join("out");
    let run = referee(tournament_args(&file, &out, &["--jobs", "2"]), b"");
    assert_eq!(run.code, Some(code), "{run:?}");
    assert_has(&run.stdout, says);
    let sprt = sprt_json(&out);
    assert_eq!(sprt["result"], result);
    (run, out, sprt)
}

fn sprt_json(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("sprt.json")).unwrap()).unwrap()
}

#[test]
fn the_sprt_accepts_a_better_version_and_stops_early() {
    let dir = tempfile::tempdir().unwrap();
    let (run, out, s) = decided(
        dir.path(),
        "in-order",
        0,
        "sprt: H1 accepted: reference is better than in-order",
        "H1 accepted",
    );
    for part in ["LLR", "pentanomial [", "Elo +"] {
        assert_has(&run.stdout, part);
    }
    assert_eq!(s["new"], "reference");
    let games: u64 = s["games"].as_str().unwrap().parse().unwrap();
    assert!(games < 400, "{games}");
    // The records of the games played stay: at least the decided pairs.
    let records = common::timeless_records(&out);
    assert!(records.len() as u64 >= games, "{} < {games}", records.len());
}

#[test]
fn the_sprt_rejects_a_worse_version() {
    let dir = tempfile::tempdir().unwrap();
    decided(
        dir.path(),
        "reference",
        1,
        "sprt: H0 accepted: in-order is not better than reference",
        "H0 accepted",
    );
}

#[test]
fn undecided_when_the_games_run_out() {
    let dir = tempfile::tempdir().unwrap();
    let file = sprt_file(dir.path(), "in-order", "");
    let run = referee_ok(["tournament", "--no-progress", "--games", "4", &file]);
    assert_has(&run.stdout, "sprt: undecided");
}

#[test]
fn sprt_mistakes_are_refused_before_play() {
    let dir = tempfile::tempdir().unwrap();
    let file = sprt_file(dir.path(), "in-order", "");
    let nobody = sprt_file(dir.path(), "nobody", "");
    let gauntlet = sprt_file(
        dir.path(),
        "reference",
        "format = \"gauntlet\"\ngauntlet = \"reference\"\n",
    );
    // (the arguments, what the refusal says)
    let mistakes: [(&[&str], &[&str]); 4] = [
        (&["--shard", "1/2", &file], &["cannot be split"]),
        (&["--resume", "--out", "x", &file], &[]),
        (&[&nobody], &["baseline = \"nobody\""]),
        (&[&gauntlet], &["drop format"]),
    ];
    for (args, says) in mistakes {
        let run = referee([&["tournament"][..], args].concat(), b"");
        assert_eq!(run.code, Some(64), "{run:?}");
        for part in says {
            assert_has(&run.stderr, part);
        }
    }
}
