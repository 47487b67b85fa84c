//! Standings through the real binary: Chomp per array, shared wins
//! explained, and one-player gauntlets against the gauntlet entrant.

mod common;

use std::path::Path;

use common::{fixture, referee};
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
            .contains("a first place shared by k players counts 1/k (Chomp: an equal best score"),
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
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("counts 1/k"));
    // One array: no table per array, but still the line on shared wins.
    let one = tempfile::tempdir().unwrap();
    let file = chomp_two_arrays(one.path(), &["3x7.txt"], 2);
    let out = one.path().join("out");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    assert!(!run.stdout.contains("per array"), "{}", run.stdout);
    assert!(run.stdout.contains("counts 1/k"), "{}", run.stdout);
    assert!(!out.join("standings-per-array.json").exists());
}

/// Even Steven: the reference player and two in-order ones, as a gauntlet
/// of `gauntlet` (or a round robin without).
fn evensteven_gauntlet(dir: &Path, gauntlet: Option<&str>) -> String {
    let format = gauntlet.map_or(String::new(), |g| {
        format!("format = \"gauntlet\"\ngauntlet = \"{g}\"\n")
    });
    let text = format!(
        "game = \"evensteven\"\ngames = 30\nseed = 3\n{format}[limits]\ntimeout = \"2s\"\n\
         [[entrant]]\nname = \"reference\"\ncommand = [\"{}\"]\n\
         [[entrant]]\nname = \"in-order\"\ncommand = [\"{}\", \"play\", \"0\"]\n\
         [[entrant]]\nname = \"chatty\"\ncommand = [\"{}\", \"chatty\", \"0\"]\n",
        env!("CARGO_BIN_EXE_evensteven"),
        fixture("misbehave.sh"),
        fixture("misbehave.sh"),
    );
    let path = dir.join("g.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn one_player_gauntlets_pair_against_the_gauntlet_entrant() {
    let dir = tempfile::tempdir().unwrap();
    let file = evensteven_gauntlet(dir.path(), Some("in-order"));
    let out = dir.path().join("out");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    assert!(
        run.stdout.contains("vs in-order (paired)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("paired difference is to in-order, the gauntlet entrant"),
        "{}",
        run.stdout
    );
    let rows = common::timeless_standings(&out);
    let row = |name: &str| rows.iter().find(|r| r["entrant"] == name).unwrap().clone();
    assert_eq!(row("reference")["paired_vs"], "in-order");
    // The reference player wins what the in-order one wins, and more.
    assert!(row("reference")["paired_diff"].as_f64().unwrap() > 0.0);
    assert_eq!(row("in-order")["paired_diff"], 0.0);
    // Both in-order players play the same cards on the same deals.
    assert_eq!(row("chatty")["paired_diff"], 0.0);
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["gauntlet"], "in-order");
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("<th>vs in-order</th>"));

    // A round robin of the same entrants: against the best, as before, and
    // its run.json has no gauntlet.
    let file = evensteven_gauntlet(dir.path(), None);
    let out = dir.path().join("rr");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    assert!(run.stdout.contains("vs best (paired)"), "{}", run.stdout);
    // Every status class has its column, as in standings.csv.
    let row = table_row(&run.stdout, "chatty");
    for class in CLASSES {
        assert_eq!(row.get(class).map(String::as_str), Some("0"), "{class}");
    }
    let rows = common::timeless_standings(&out);
    assert!(rows.iter().all(|r| r.get("paired_vs").is_none()));
    assert!(rows[1]["paired_diff"].as_f64().unwrap() < 0.0);
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert!(info.get("gauntlet").is_none());
}

/// The classes of failure, one column each everywhere.
const CLASSES: [&str; 5] = [
    "timeouts",
    "crashed",
    "incorrect",
    "disqualified",
    "internal",
];

/// The cells of the row of `entrant` in the last table of `stdout` that has
/// one, by column name.
fn table_row(stdout: &str, entrant: &str) -> std::collections::HashMap<String, String> {
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect()
    };
    let mut header = Vec::new();
    let mut found = None;
    for line in stdout.lines() {
        let row = cells(line);
        if row.first().is_some_and(|c| c == "rank") {
            header = row;
        } else if row.get(1).is_some_and(|c| c == entrant) {
            found = Some(header.iter().cloned().zip(row).collect());
        }
    }
    found.unwrap_or_else(|| panic!("no row for {entrant}: {stdout}"))
}

#[test]
fn the_terminal_table_has_one_column_per_status_class() {
    // Red team: in games between players the table added `incorrect` to
    // `crashed`, where standings.csv, standings.json and report.html kept
    // them apart.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.toml");
    std::fs::write(
        &file,
        format!(
            "game = \"{}\"\ngames = 2\nseed = 1\n\
             [[entrant]]\nname = \"voronoi\"\ncommand = [\"{}/games/tron/bots/voronoi.py\"]\n\
             [[entrant]]\nname = \"garbage\"\ncommand = [\"{}\"]\n",
            fixture("tron/small.toml"),
            env!("CARGO_MANIFEST_DIR"),
            fixture("tron/garbage.sh"),
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let row = table_row(&run.stdout, "garbage");
    let json: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("standings.json")).unwrap())
            .unwrap();
    let json = json.iter().find(|r| r["entrant"] == "garbage").unwrap();
    assert_eq!(json["incorrect"], 2, "{json}");
    let csv = std::fs::read_to_string(out.join("standings.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    for class in CLASSES {
        assert_eq!(
            row.get(class).map(String::as_str),
            Some(json[class].to_string().as_str()),
            "{class}: {}",
            run.stdout
        );
        assert!(header.contains(&class), "{class}: {csv}");
        assert!(report.contains(&format!("<th>{class}</th>")), "{class}");
    }
}

#[test]
fn a_report_of_a_huge_class_stays_in_bounded_memory_and_says_what_it_left_out() {
    // A run.json of 10,000 entrants took 2.4 GB, one of 200,000 aborted
    // allocating 480 GB: every pair of a one-player game's entrants was
    // tallied. Past 2,000 entrants, no pair is, and the table says so.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let file = evensteven_gauntlet(dir.path(), None);
    let run = tournament(&[&file, "--games", "4", "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let names: Vec<String> = (0..200_000).map(|i| format!("s{i}")).collect();
    let mut info: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let played: Vec<String> = info["entrants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect();
    let mut all = played.clone();
    all.extend(names);
    info["entrants"] = serde_json::json!(all);
    std::fs::write(out.join("run.json"), info.to_string()).unwrap();
    let run = referee(["report", out.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("s199999"), "every entrant is listed");
}
