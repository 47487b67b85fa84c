//! Standings through the real binary: Chomp per array, shared wins
//! explained, and one-player gauntlets against the gauntlet entrant.

mod common;

use std::path::Path;

use common::{assert_has, assert_lacks, fixture, referee_ok, temp_path, tournament, write_file};
use serde_json::Value;

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
    common::runs::chomp_file(
        dir,
        games,
        "arrays",
        &[
            ("strong", env!("CARGO_BIN_EXE_chomp")),
            ("greedy", env!("CARGO_BIN_EXE_chomp-greedy")),
        ],
    )
}

#[test]
fn chomp_standings_per_array_and_shared_wins_explained() {
    let dir = tempfile::tempdir().unwrap();
    let file = chomp_two_arrays(dir.path(), &["3x7.txt", "1x30.txt"], 8);
    let out = dir.path().join("out");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    assert_has(&run.stdout, "standings per array:");
    assert_has(
        &run.stdout,
        "a first place shared by k players counts 1/k (Chomp: an equal best score",
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
    assert_lacks(&run.stdout, "per array");
    assert_has(&run.stdout, "counts 1/k");
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
    let path = write_file(dir, "g.toml", text);
    path.to_str().unwrap().to_owned()
}

#[test]
fn one_player_gauntlets_pair_against_the_gauntlet_entrant() {
    let dir = tempfile::tempdir().unwrap();
    let file = evensteven_gauntlet(dir.path(), Some("in-order"));
    let out = dir.path().join("out");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    assert_has(&run.stdout, "vs in-order (paired)");
    assert_has(
        &run.stdout,
        "paired difference is to in-order, the gauntlet entrant",
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
    assert_has(&run.stdout, "vs best (paired)");
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
    let file = write_file(
        dir.path(),
        "t.toml",
        format!(
            "game = \"{}\"\ngames = 2\nseed = 1\n\
             [[entrant]]\nname = \"voronoi\"\ncommand = [\"{}/games/tron/bots/voronoi.py\"]\n\
             [[entrant]]\nname = \"garbage\"\ncommand = [\"{}\"]\n",
            fixture("tron/small.toml"),
            env!("CARGO_MANIFEST_DIR"),
            fixture("tron/garbage.sh"),
        ),
    );
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
    let (dir, out) = temp_path("out");
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
    write_file(&out, "run.json", info.to_string());
    referee_ok(["report", out.to_str().unwrap()]);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("s199999"), "every entrant is listed");
}

/// A tournament file in `dir` of `games` games of the duel fixture
/// between `entrants` (fixture bots named by their script's stem).
/// `extra`: lines of the file before its `[limits]`.
fn duel(dir: &Path, entrants: &[&str], games: u64, extra: &str) -> String {
    let mut text = format!(
        "game = \"{}\"\ngames = {games}\nseed = 1\njobs = 1\n{extra}[limits]\nseats = 2\n",
        fixture("duel/game.toml")
    );
    for (i, bot) in entrants.iter().enumerate() {
        // A second `weak` is another entrant with the same program.
        text += &format!(
            "[[entrant]]\nname = \"{bot}{}\"\ncommand = [\"{}\"]\n",
            if i > 1 { "2" } else { "" },
            fixture(&format!("duel/{bot}.sh"))
        );
    }
    let path = write_file(dir, format!("duel{}.toml", entrants.len()), text);
    path.to_str().unwrap().to_owned()
}

/// From the records: `strong`'s games against `weak` lost, drawn and won
/// (by rank: 1 alone wins, equal ranks draw), and its complete pairs of
/// games `2k − 1`, `2k` scoring 0, ¼, ½, ¾, 1.
fn strongs_outcomes(out: &Path) -> ([u64; 3], [u64; 5]) {
    outcomes_of(out, "strong", "weak")
}

/// From the records: `a`'s games against `b` (games of the two of them)
/// lost, drawn and won, by rank, and its complete pairs of games `2k − 1`,
/// `2k`, both between them, scoring 0, ¼, ½, ¾, 1.
fn outcomes_of(out: &Path, a: &str, b: &str) -> ([u64; 3], [u64; 5]) {
    let mut scores = std::collections::BTreeMap::new();
    for record in common::jsonl(&out.join("records.jsonl")) {
        let results = record["players"].as_array().unwrap();
        let rank = |name: &str| {
            let seat = results.iter().find(|r| r["entrant"] == name)?;
            seat["rank"].as_u64()
        };
        let (Some(rank_a), Some(rank_b)) = (rank(a), rank(b)) else {
            continue;
        };
        let score = match rank_a.cmp(&rank_b) {
            std::cmp::Ordering::Less => 2,
            std::cmp::Ordering::Equal => 1,
            std::cmp::Ordering::Greater => 0,
        };
        scores.insert(record["index"].as_u64().unwrap(), score);
    }
    let mut games = [0; 3];
    let mut pairs = [0; 5];
    for (&index, &score) in &scores {
        games[score] += 1;
        if index % 2 == 0
            && let Some(first) = scores.get(&(index - 1))
        {
            pairs[first + score] += 1;
        }
    }
    (games, pairs)
}

/// The mean of outcomes `counts` scoring `step` apart, as logistic Elo,
/// with the bounds of its 95% interval (normal approximation).
fn elo_of(counts: &[u64], step: f64) -> (f64, f64, f64) {
    let n: u64 = counts.iter().sum();
    let n = n as f64;
    let score = |k: usize| k as f64 * step;
    let mean = counts
        .iter()
        .enumerate()
        .map(|(k, &c)| c as f64 * score(k))
        .sum::<f64>()
        / n;
    let var = counts
        .iter()
        .enumerate()
        .map(|(k, &c)| c as f64 * (score(k) - mean).powi(2))
        .sum::<f64>()
        / n;
    let half = 1.959963984540054 * (var / n).sqrt();
    let elo = |s: f64| -400.0 * (1.0 / s - 1.0).log10();
    (elo(mean), elo(mean - half), elo(mean + half))
}

#[test]
fn two_entrants_get_an_elo_from_their_game_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let file = duel(dir.path(), &["strong", "weak"], 11, "");
    let out = dir.path().join("out");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    // strong: won 6, drew 1, lost 4; pairs 1-2 won twice, 3-4, 5-6 and
    // 9-10 won once, 7-8 drawn and lost; game 11 has no twin.
    let (games, pairs) = strongs_outcomes(&out);
    assert_eq!((games, pairs), ([4, 1, 6], [0, 1, 3, 0, 1]));
    let (elo, low, high) = elo_of(&pairs, 0.25);
    // Mean pair score 0.55.
    assert!((elo - 34.86).abs() < 0.01, "{elo}");

    let rows = common::timeless_standings(&out);
    let row = |name: &str| rows.iter().find(|r| r["entrant"] == name).unwrap().clone();
    let (strong, weak) = (row("strong"), row("weak"));
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-6;
    assert!(close(&strong["elo"], elo), "{strong}");
    assert!(
        close(&strong["elo_low"], low) && close(&strong["elo_high"], high),
        "{strong}"
    );
    assert_eq!(strong["elo_model"], "pentanomial");
    assert_eq!(strong["elo_vs"], "weak");
    assert_eq!(
        [
            &strong["elo_wins"],
            &strong["elo_draws"],
            &strong["elo_losses"]
        ],
        [6, 1, 4]
    );
    assert_eq!(
        strong["elo_pentanomial"],
        serde_json::json!([0, 1, 3, 0, 1])
    );
    // The other side: negated, every count the other way round.
    assert!(
        close(&weak["elo"], -elo) && close(&weak["elo_low"], -high),
        "{weak}"
    );
    assert_eq!(weak["elo_vs"], "strong");
    assert_eq!([&weak["elo_wins"], &weak["elo_losses"]], [4, 6]);
    assert_eq!(weak["elo_pentanomial"], serde_json::json!([1, 0, 3, 1, 0]));

    // The table: beside the rating, as fastchess prints it; the line
    // under it says what it is counted from.
    let text = format!("{elo:+.1} ± {:.1} (95%)", (high - low) / 2.0);
    assert_eq!(
        table_row(&run.stdout, "strong")["Elo"],
        text,
        "{}",
        run.stdout
    );
    assert!(table_row(&run.stdout, "weak")["Elo"].starts_with("-34.9 ± "));
    assert_has(
        &run.stdout,
        "Elo: logistic, strong against weak, 95% interval; from 5 game pairs (games 2k−1 and \
             2k), pentanomial [0, 1, 3, 0, 1] (pairs scoring 0, ¼, ½, ¾, 1 for strong), 1 \
             unpaired game left out; strong won 6, drew 1, lost 4 of 11 games",
    );
    let csv = std::fs::read_to_string(out.join("standings.csv")).unwrap();
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let at = |column: &str| lines[0].iter().position(|c| *c == column).unwrap();
    let strong_csv = lines.iter().find(|l| l[1] == "strong").unwrap();
    assert_eq!(strong_csv[at("elo_model")], "pentanomial");
    assert_eq!(strong_csv[at("elo_pentanomial")], "0 1 3 0 1");
    assert!((strong_csv[at("elo")].parse::<f64>().unwrap() - elo).abs() < 1e-6);
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        report.contains("<th>Elo</th>") && report.contains(&text),
        "{report}"
    );
}

#[test]
fn without_a_complete_pair_the_elo_is_from_single_games() {
    // Shard 1 of 2 plays the odd games only: no pair is complete. Games 1
    // and 3, both won: an Elo with no bound, null in JSON.
    let dir = tempfile::tempdir().unwrap();
    let file = duel(dir.path(), &["strong", "weak"], 3, "");
    let out = dir.path().join("out");
    let run = tournament(&[&file, "--shard", "1/2", "--out", out.to_str().unwrap()]);
    assert_eq!(strongs_outcomes(&out), ([0, 0, 2], [0; 5]));
    let rows = common::timeless_standings(&out);
    let strong = rows.iter().find(|r| r["entrant"] == "strong").unwrap();
    assert_eq!(strong["elo_model"], "trinomial", "{strong}");
    assert_eq!([&strong["elo_wins"], &strong["elo_losses"]], [2, 0]);
    assert!(
        strong["elo"].is_null() && strong["elo_low"].is_null(),
        "{strong}"
    );
    assert_eq!(
        table_row(&run.stdout, "strong")["Elo"],
        "+inf (every game won)"
    );
    assert_eq!(
        table_row(&run.stdout, "weak")["Elo"],
        "-inf (every game lost)"
    );
    assert_has(
        &run.stdout,
        "from single games (trinomial): no game pair complete",
    );
    assert!(!run.stdout.contains("NaN") && !run.stdout.contains("nan"));
}

/// The rows of `standings-pairs.json`, each as (entrant, opponent) and
/// the row.
fn pair_rows(out: &Path) -> Vec<((String, String), Value)> {
    let text = std::fs::read_to_string(out.join("standings-pairs.json")).unwrap();
    let rows: Vec<Value> = serde_json::from_str(&text).unwrap();
    rows.into_iter()
        .map(|r| {
            let name = |key: &str| r[key].as_str().unwrap().to_owned();
            ((name("entrant"), name("opponent")), r)
        })
        .collect()
}

/// Checks each row of `standings-pairs.json` against the records, and that
/// the terminal's table and the report show it: its counts, its Elo (by
/// the normal approximation over pairs, or games with no pair), its LOS.
fn assert_pairs_match_the_records(out: &Path, stdout: &str, want: &[(&str, &str)]) {
    let rows = pair_rows(out);
    let names: Vec<(&str, &str)> = rows
        .iter()
        .map(|((a, b), _)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(names, want, "{stdout}");
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    for ((a, b), row) in &rows {
        let (games, pairs) = outcomes_of(out, a, b);
        let [l, d, w] = games;
        assert_eq!(
            [&row["losses"], &row["draws"], &row["wins"], &row["games"]],
            [l, d, w, l + d + w],
            "{a} vs {b}: {row}"
        );
        assert_eq!(row["pentanomial"], serde_json::json!(pairs), "{row}");
        let (elo, _, _) = match pairs.iter().sum::<u64>() {
            0 => elo_of(&games, 0.5),
            _ => elo_of(&pairs, 0.25),
        };
        if let Some(x) = row["elo"].as_f64() {
            assert!((x - elo).abs() < 1e-6, "{row} vs {elo}");
        } else {
            assert!(elo.is_infinite(), "{row} vs {elo}");
        }
        let los = row["los"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&los), "{row}");
        let penta = format!("[{}]", pairs.map(|c| c.to_string()).join(", "));
        let line = format!("| {a} | {b} | {} | {w}-{d}-{l} | {penta} |", l + d + w);
        let squeezed: String = stdout
            .split(' ')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(squeezed.contains(&line), "{line}\n{stdout}");
        let cell = format!("<td>{w}-{d}-{l}</td><td>{penta}</td>");
        assert!(report.contains(&cell), "{cell}");
    }
    assert!(stdout.contains("per pair (the first's games and Elo against the second):"));
    assert!(report.contains("<h2 id=\"pairs\">Per pair</h2>"));
    let csv = std::fs::read_to_string(out.join("standings-pairs.csv")).unwrap();
    assert_eq!(csv.lines().count(), want.len() + 1, "{csv}");
    assert!(!stdout.contains("NaN") && !stdout.contains("nan") && !csv.contains("NaN"));
}

#[test]
fn a_round_robin_of_three_gives_the_elo_of_every_pair() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = duel(dir.path(), &["strong", "weak", "weak"], 12, "");
    let out = dir.path().join("out");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    // Every pair met at two tables of two games; each from the side of
    // the one ranked higher (ranks from the standings).
    let rows = common::timeless_standings(&out);
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter().all(|r| r.get("elo_model").is_none()),
        "{rows:?}"
    );
    let order: Vec<&str> = rows
        .iter()
        .map(|r| r["entrant"].as_str().unwrap())
        .collect();
    let want = [
        (order[0], order[1]),
        (order[0], order[2]),
        (order[1], order[2]),
    ];
    assert_pairs_match_the_records(&out, &run.stdout, &want);
    for (_, row) in pair_rows(&out) {
        assert_eq!(row["games"], 4, "{row}");
    }
}

#[test]
fn a_gauntlet_gives_the_elo_of_its_entrant_against_each_other() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = duel(
        dir.path(),
        &["strong", "weak", "weak"],
        8,
        "format = \"gauntlet\"\ngauntlet = \"weak\"\n",
    );
    let out = dir.path().join("out");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    // From the gauntlet entrant's side, whatever the ranks; the two
    // others never meet.
    assert_pairs_match_the_records(&out, &run.stdout, &[("weak", "strong"), ("weak", "weak2")]);
    for (_, row) in pair_rows(&out) {
        assert_eq!(row["games"], 4, "{row}");
    }
}

#[test]
fn two_entrants_print_their_match_as_fastchess_does() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = duel(dir.path(), &["strong", "weak"], 10, "");
    let out = dir.path().join("out");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    // From the side of the first row (ranked by rating).
    let rows = common::timeless_standings(&out);
    let name = |k: usize| rows[k]["entrant"].as_str().unwrap();
    let (games, pairs) = outcomes_of(&out, name(0), name(1));
    let [l, d, w] = games;
    let points = w as f64 + d as f64 / 2.0;
    for line in [
        "\nElo: ".to_owned(),
        ", nElo: ".to_owned(),
        "\nLOS: ".to_owned(),
        format!(
            "\nGames: {}, Wins: {w}, Losses: {l}, Draws: {d}, Points: {points:.1} ({:.2} %)\n",
            l + d + w,
            100.0 * points / (l + d + w) as f64
        ),
        format!(
            "\nPtnml(0-2): [{}]",
            pairs.map(|c| c.to_string()).join(", ")
        ),
    ] {
        assert!(run.stdout.contains(&line), "{line}\n{}", run.stdout);
    }
    let strong = rows.iter().find(|r| r["entrant"] == "strong").unwrap();
    assert!(strong["elo_los"].as_f64().is_some(), "{strong}");
    // The match is the one pair of the per-pair files.
    assert_eq!(pair_rows(&out).len(), 1);
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_has(&report, "Ptnml(0-2): [");
}

/// The issue: report.html said the ratings come "from the ranking of the
/// scores", where a judge's `ranking` decides them when it sends one.
#[test]
fn the_reports_rating_note_says_the_judges_ranking_decides() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = duel(dir.path(), &["strong", "weak"], 2, "");
    let out = dir.path().join("out");
    tournament(&[&file, "--out", out.to_str().unwrap()]);
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_lacks(&report, "from the ranking of the scores");
    assert_has(
        &report,
        "from each game's places: the judge's ranking when it sends one \
             (<code>end.ranking</code>), else the ranking of the scores",
    );
}

/// A makefile whose build fails as a C compiler would.
const BROKEN_MAKE: &str = "pc2:\n\t@echo 'bot.c:3:9: error: expected ; before }' >&2; exit 1\n";

/// A Chomp tournament in `dir`, `games` games at tables of `seats`: each
/// of `broken` a folder whose build fails, each of `quitters` a program
/// that exits at once (a crash in round 1, scoring 0). Its grade sheet,
/// by entrant, and its `standings.json`, by entrant.
fn chomp_with_failures(
    dir: &Path,
    broken: &[&str],
    quitters: &[&str],
    seats: usize,
    games: u64,
) -> (Vec<std::collections::HashMap<String, String>>, Vec<Value>) {
    std::fs::create_dir_all(dir.join("arrays")).unwrap();
    std::fs::copy(
        format!("{}/tournaments/chomp/3x7.txt", env!("CARGO_MANIFEST_DIR")),
        dir.join("arrays/3x7.txt"),
    )
    .unwrap();
    let mut text = format!(
        "game = \"chomp\"\ngames = {games}\nseed = 5\njobs = 1\n\
         [limits]\nprep = \"0s\"\narrays = \"arrays\"\nseats = {seats}\n"
    );
    for name in broken {
        write_file(dir.join(name), "Makefile", BROKEN_MAKE);
        text += &format!("[[entrant]]\nname = \"{name}\"\ndir = \"{name}\"\n");
    }
    for name in quitters {
        text += &format!("[[entrant]]\nname = \"{name}\"\ncommand = [\"/bin/false\"]\n");
    }
    let file = write_file(dir, "t.toml", text);
    let out = dir.join("out");
    tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let grades = common::csv_rows(&out.join("grades.csv"));
    let standings =
        serde_json::from_str(&std::fs::read_to_string(out.join("standings.json")).unwrap())
            .unwrap();
    (grades, standings)
}

/// Asserts `cells` of a grade sheet's `row`, and that an unbuilt
/// entrant's note gives the compiler's first error.
fn assert_grade(row: &std::collections::HashMap<String, String>, cells: &[(&str, &str)]) {
    for (column, value) in cells {
        assert_eq!(row[*column], *value, "{column}: {row:?}");
    }
    if row["disqualified"] == row["games"] {
        let first = "first error: bot.c:3:9: error: expected ; before }";
        assert!(row["note"].contains(first), "{row:?}");
    }
}

/// Issue 38: at a table where every player failed to build, the players
/// shared the win: a build failure showed `wins 1, win_rate 0.333`.
#[test]
fn a_table_where_every_build_failed_has_no_winner() {
    let dir = tempfile::tempdir().unwrap();
    let (grades, standings) = chomp_with_failures(dir.path(), &["a", "b", "c"], &[], 3, 3);
    assert_eq!(grades.len(), 3, "{grades:?}");
    for row in &grades {
        let cells = [("games", "3"), ("disqualified", "3"), ("wins", "0")];
        assert_grade(
            row,
            &[&cells[..], &[("win_rate", "0"), ("rank", "1")]].concat(),
        );
    }
    for row in &standings {
        assert_eq!(row["wins"].as_f64(), Some(0.0), "{row}");
    }
}

/// A disqualified seat never shares a win, not even with a player that
/// scored no more than it did: a runtime failure (a crash) keeps its
/// score and its place, and wins alone; the entrant that could not play
/// ranks after it, with the compiler's first error as its note.
#[test]
fn a_disqualified_seat_never_shares_a_win() {
    let dir = tempfile::tempdir().unwrap();
    let (grades, standings) = chomp_with_failures(dir.path(), &["broken"], &["quitter"], 2, 2);
    let grade = |name: &str| grades.iter().find(|r| r["entrant"] == name).unwrap();
    let quitter = [
        ("crashed", "2"),
        ("wins", "2"),
        ("win_rate", "1"),
        ("rank", "1"),
    ];
    assert_grade(grade("quitter"), &quitter);
    let broken = [("disqualified", "2"), ("wins", "0"), ("rank", "2")];
    assert_grade(grade("broken"), &broken);
    let wins =
        |name: &str| standings.iter().find(|r| r["entrant"] == name).unwrap()["wins"].as_f64();
    assert_eq!((wins("quitter"), wins("broken")), (Some(2.0), Some(0.0)));
}

/// Issue 51: a student who crashed in every game of a game between
/// players keeps the score the rules give a crashed player, and may rank
/// first; the sheet says why at the end of its `note`, the last column,
/// and nothing else of the sheet changes: the header and every other cell
/// are as before (golden). `report.html` says it under the standings.
#[test]
fn a_student_who_crashed_in_every_game_is_noted_and_nothing_else_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (grades, _) = chomp_with_failures(dir.path(), &["broken"], &["quitter"], 2, 2);
    let text = std::fs::read_to_string(dir.path().join("out/grades.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "entrant,games,wins,win_rate,failures,timeouts,crashed,incorrect,disqualified,\
             internal,rank,note"
        ),
        "{text}"
    );
    let broken = lines.next().unwrap();
    assert!(broken.starts_with("broken,2,0,0,2,0,0,0,2,0,2,"), "{text}");
    assert!(!broken.contains("every game"), "{text}");
    // When /bin/false's exit is seen (before the first round, or at round
    // 1) depends on timing; the rest of the line does not.
    let quitter = lines.next().unwrap();
    assert!(
        quitter.starts_with("quitter,2,2,1,2,0,2,0,0,0,1,\"crashed in game 1: "),
        "{text}"
    );
    assert!(
        quitter.ends_with(
            ": exited with status 1; 2 of 2 games failed; \
             crashed in every game: keeps its score, as the rules say\""
        ),
        "{text}"
    );
    assert_eq!(lines.next(), None, "{text}");
    assert_eq!(grades.len(), 2);

    let page = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert_has(
        &page,
        "<p class=\"note\">quitter: crashed in every game: keeps its score, as the rules say</p>",
    );
    assert_lacks(&page, "broken: crashed");
}
