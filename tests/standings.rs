//! Standings through the real binary: Chomp per array, shared wins
//! explained, and one-player gauntlets against the gauntlet entrant.

mod common;

use std::path::Path;

use common::referee;
use serde_json::Value;

fn tournament(args: &[&str]) -> common::Run {
    let mut all = vec!["tournament", "--no-progress"];
    all.extend_from_slice(args);
    let run = referee(all, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    run
}

/// A Chomp tournament over two of the small arrays of `tournaments/chomp`.
fn chomp_two_arrays(dir: &Path, arrays: &[&str], games: u64) -> String {
    let arrays_dir = dir.join("arrays");
    std::fs::create_dir_all(&arrays_dir).unwrap();
    for a in arrays {
        std::fs::copy(
            format!("{}/tournaments/chomp/{a}", env!("CARGO_MANIFEST_DIR")),
            arrays_dir.join(a),
        )
        .unwrap();
    }
    let text = format!(
        "game = \"chomp\"\ngames = {games}\nseed = 5\n[limits]\nprep = \"0s\"\narrays = \"arrays\"\nseats = 2\n\
         [[entrant]]\nname = \"strong\"\ncommand = [\"{}\"]\n\
         [[entrant]]\nname = \"greedy\"\ncommand = [\"{}\"]\n",
        env!("CARGO_BIN_EXE_chomp"),
        env!("CARGO_BIN_EXE_chomp-greedy"),
    );
    let path = dir.join("c.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn chomp_standings_per_array_and_shared_wins_explained() {
    let dir = tempfile::tempdir().unwrap();
    let file = chomp_two_arrays(dir.path(), &["3x7.txt", "1x30.txt"], 8);
    let out = dir.path().join("out");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    assert!(
        run.stdout.contains("standings per array:"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("a win shared by k players (equal best score) counts 1/k"),
        "{}",
        run.stdout
    );
    let text = std::fs::read_to_string(out.join("standings-per-array.json")).unwrap();
    let rows: Vec<Value> = serde_json::from_str(&text).unwrap();
    // Two arrays, two entrants, each at every game.
    assert_eq!(rows.len(), 4, "{rows:?}");
    let arrays: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["array"].as_str().unwrap()).collect();
    assert_eq!(arrays.len(), 2);
    for r in &rows {
        assert_eq!(r["games"], 4, "{r}");
        assert!(r["mean_score_ci"].is_number());
    }
    // Per array, the wins add up to the games there (shared ones split).
    for a in &arrays {
        let wins: f64 = rows
            .iter()
            .filter(|r| r["array"] == *a)
            .map(|r| r["wins"].as_f64().unwrap())
            .sum();
        assert!((wins - 4.0).abs() < 1e-9, "{a}: {wins}");
    }
    let csv = std::fs::read_to_string(out.join("standings-per-array.csv")).unwrap();
    assert!(csv.starts_with("array,entrant,games,wins,mean_score,mean_score_ci\n"));
    assert_eq!(csv.lines().count(), 5);
    // One array: no table per array, but still the line on shared wins.
    let one = tempfile::tempdir().unwrap();
    let file = chomp_two_arrays(one.path(), &["3x7.txt"], 2);
    let out = one.path().join("out");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    assert!(!run.stdout.contains("per array"), "{}", run.stdout);
    assert!(run.stdout.contains("counts 1/k"), "{}", run.stdout);
    assert!(!out.join("standings-per-array.json").exists());
}
