//! `referee tournament`, `referee merge` and `referee ci`, end to end.

mod common;

use std::path::Path;

use common::runs::{assert_verdicts, merge, parallel_shards, shard_outs, tournament_args};
use common::{
    Marker, assert_has, assert_lacks, finish, fixture, referee, referee_ok, signal, start,
    temp_path, timeless_records as records, timeless_standings as standings, tournament,
    wait_for_lines, write_file,
};

/// A tournament file in `dir`: Even Steven, the reference player against
/// the in-order one.
fn evensteven_file(dir: &Path, games: u64) -> String {
    let text = format!(
        "game = \"evensteven\"\ngames = {games}\nseed = 3\n[limits]\ntimeout = \"2s\"\n\
         [[entrant]]\nname = \"reference\"\ncommand = [\"{}\"]\n\
         [[entrant]]\nname = \"in-order\"\ncommand = [\"{}\", \"play\", \"0\"]\n",
        env!("CARGO_BIN_EXE_evensteven"),
        fixture("misbehave.sh")
    );
    let path = write_file(dir, "t.toml", text);
    path.to_str().unwrap().to_owned()
}

/// A Chomp tournament file in `dir`: three entrants, two seats.
fn chomp_file(dir: &Path, games: u64) -> String {
    write_file(
        dir,
        "a.txt",
        "ABCDEFGHIJ\nKLMNOPQRST\nUVWXYZTHIS\nISNOTATEST\nITISASQUID\n",
    );
    let greedy = env!("CARGO_BIN_EXE_chomp-greedy");
    common::runs::chomp_file(
        dir,
        games,
        "a.txt",
        &[
            ("strong", env!("CARGO_BIN_EXE_chomp")),
            ("greedy", greedy),
            ("greedy-2", greedy),
        ],
    )
}

#[test]
fn standings_are_reproducible_and_do_not_depend_on_jobs() {
    let dir = tempfile::tempdir().unwrap();
    for file in [evensteven_file(dir.path(), 60), chomp_file(dir.path(), 9)] {
        let one = dir.path().join("one");
        let two = dir.path().join("two");
        let _ = std::fs::remove_dir_all(&one);
        let _ = std::fs::remove_dir_all(&two);
        tournament(&[&file, "--jobs", "1", "--out", one.to_str().unwrap()]);
        let run = tournament(&[&file, "--jobs", "2", "--out", two.to_str().unwrap()]);
        assert_has(&run.stdout, "standings after");
        assert_eq!(records(&one), records(&two), "{file}");
        assert_eq!(standings(&one), standings(&two));
        for name in ["run.json", "standings.csv", "tournament.toml"] {
            assert!(one.join(name).is_file(), "{name}");
        }
    }
}

#[test]
fn one_player_standings_are_paired() {
    let dir = tempfile::tempdir().unwrap();
    let file = evensteven_file(dir.path(), 80);
    let out = dir.path().join("out");
    let run = tournament(&[&file, "--out", out.to_str().unwrap()]);
    let rows = standings(&out);
    assert_eq!(rows[0]["entrant"], "reference");
    assert_eq!(rows[0]["unnecessary"], 0);
    assert!(rows[1]["unnecessary"].as_u64().unwrap() > 0);
    assert!(rows[1]["paired_diff"].as_f64().unwrap() < 0.0);
    assert_has(&run.stdout, "vs best (paired)");
    // Every entrant played the same deals.
    for r in records(&out) {
        assert_eq!(r["players"].as_array().unwrap().len(), 2);
        assert!(r["n"].is_u64() && r["deal_seed"].is_u64());
    }
}

#[test]
fn chomp_tournaments_rate_the_players() {
    let dir = tempfile::tempdir().unwrap();
    let file = chomp_file(dir.path(), 12);
    let out = dir.path().join("out");
    tournament(&[&file, "--out", out.to_str().unwrap()]);
    let rows = standings(&out);
    assert_eq!(rows[0]["entrant"], "strong");
    assert!(rows[0]["rating"].as_f64().unwrap() > rows[1]["rating"].as_f64().unwrap());
    // Two seats of three entrants, rotating: each entrant plays 8 of 12.
    for row in &rows {
        assert_eq!(row["games"], 8, "{row}");
    }
}

#[test]
fn shards_merged_equal_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = chomp_file(dir.path(), 10);
    let whole = dir.path().join("whole");
    tournament(&[&file, "--out", whole.to_str().unwrap()]);
    // The shards, run the way docs/tournaments.md says: with GNU parallel.
    let shards = dir.path().join("s");
    let status = std::process::Command::new("parallel")
        .args(["--will-cite", common::referee_bin()])
        .args(parallel_shards(&file, &shards, 3))
        .stdout(std::process::Stdio::null())
        .status()
        .expect("GNU parallel (apt-get install parallel)");
    assert!(status.success());
    let outs = shard_outs(&shards, 3);
    assert_eq!(records(Path::new(&outs[0])).len(), 4);
    let merged = dir.path().join("merged");
    let run = merge(&outs, &merged);
    assert_has(&run.stdout, "10 of 10 games");
    assert_eq!(standings(&merged), standings(&whole));
    assert_eq!(records(&merged), records(&whole));
}

#[test]
fn a_killed_tournament_resumes_to_the_same_standings() {
    let dir = tempfile::tempdir().unwrap();
    let file = evensteven_file(dir.path(), 400);
    let whole = dir.path().join("whole");
    tournament(&[&file, "--jobs", "2", "--out", whole.to_str().unwrap()]);

    let out = dir.path().join("killed");
    let marker = Marker::new();
    let child = start(tournament_args(&file, &out, &["--jobs", "2"]), &marker);
    wait_for_lines(&out.join("records.jsonl"), 40);
    signal(&child, nix::sys::signal::Signal::SIGKILL);
    finish(child, b"");
    marker.assert_none_left();
    let before = records(&out).len();
    assert!(before < 400, "killed too late");

    let run = tournament(&[
        &file,
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
        "--resume",
    ]);
    assert_has(&run.stderr, &format!("resuming: {before} game(s)"));
    assert_eq!(standings(&out), standings(&whole));
    assert_eq!(records(&out), records(&whole));
}

fn ci_suite(dir: &Path, body: &str) -> String {
    let path = write_file(dir, "suite.toml", body);
    path.to_str().unwrap().to_owned()
}

#[test]
fn ci_passes_good_bots_and_fails_weak_ones_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let suite = ci_suite(
        dir.path(),
        &format!(
            "[[case]]\nname = \"reference\"\ngame = \"evensteven\"\ncommand = [\"{ev}\"]\ngames = 100\n\
             [case.expect]\nno_crash = true\nno_unnecessary_loss = true\n\
             [[case]]\nname = \"in-order\"\ngame = \"evensteven\"\ncommand = [\"{bad}\", \"play\", \"0\"]\ngames = 100\n\
             [case.expect]\nno_unnecessary_loss = true\n\
             [[case]]\nname = \"editorial\"\ngame = \"septica\"\ncommand = [\"{ed}\"]\ngames = 200\n\
             [case.expect]\nwin_rate = 0.8\nsequential = true\n\
             [[case]]\nname = \"crasher\"\ngame = \"evensteven\"\ncommand = [\"{bad}\", \"exit\", \"2\", \"3\"]\ngames = 10\n\
             [case.expect]\nno_crash = true\n",
            ev = env!("CARGO_BIN_EXE_evensteven"),
            bad = fixture("misbehave.sh"),
            ed = env!("CARGO_BIN_EXE_septica-editorial"),
        ),
    );
    let junit = dir.path().join("junit.xml");
    let run = referee(["ci", &suite, "--junit", junit.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_verdicts(
        &run.stdout,
        &[
            ("PASS reference: 100 games", &[]),
            ("FAIL in-order:", &["winnable hand(s) lost"]),
            (
                "FAIL editorial:",
                &["win rate below 80.0% (the sequential test decided after"],
            ),
            ("FAIL crasher:", &["crash(es) (first: "]),
        ],
    );
    assert_eq!(run.stdout_lines()[4], "ci: 1 of 4 cases passed");

    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suites = doc.root_element();
    assert_eq!(suites.attribute("tests"), Some("4"));
    assert_eq!(suites.attribute("failures"), Some("3"));
    let failed: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase") && n.children().any(|c| c.has_tag_name("failure")))
        .filter_map(|n| n.attribute("name"))
        .collect();
    assert_eq!(failed, ["in-order", "editorial", "crasher"]);
}

#[test]
fn the_projects_own_ci_suite_passes() {
    let suite = format!("{}/tournaments/ci.toml", env!("CARGO_MANIFEST_DIR"));
    let (_dir, junit) = temp_path("junit.xml");
    let run = referee_ok(["ci", &suite, "--junit", junit.to_str().unwrap()]);
    assert!(
        run.stdout.ends_with("ci: 4 of 4 cases passed\n"),
        "{}",
        run.stdout
    );
    assert!(roxmltree::Document::parse(&std::fs::read_to_string(&junit).unwrap()).is_ok());
}

#[test]
fn bad_tournament_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "bad.toml", "game = \"poker\"\ngames = 3\n");
    let run = referee(["tournament", path.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(64));
    assert_has(&run.stderr, "bad.toml");
    assert_has(&run.stderr, "poker");
    let run = referee(
        ["tournament", "--shard", "4/3", path.to_str().unwrap()],
        b"",
    );
    assert_eq!(run.code, Some(64));
}

/// The seats of every record of the run in `out`, in game order.
fn seats(out: &Path) -> Vec<Vec<u64>> {
    records(out)
        .iter()
        .map(|r| {
            r["players"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["seat"].as_u64().unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn seats_count_from_0_in_every_game_kind() {
    let (dir, chomp) = temp_path("chomp");
    tournament(&[&chomp_file(dir.path(), 4), "--out", chomp.to_str().unwrap()]);
    assert_eq!(seats(&chomp), [[0, 1]; 4]);
    let log = std::fs::read_to_string(chomp.join("games.log")).unwrap();
    assert_has(&log, ": seat 0,");
    assert_lacks(&log, ": seat 2,");

    let tron = dir.path().join("tron");
    let file = format!("{}/tournaments/tron.toml", env!("CARGO_MANIFEST_DIR"));
    tournament(&[&file, "--games", "2", "--out", tron.to_str().unwrap()]);
    assert_eq!(seats(&tron), [[0, 1], [0, 1]]);
}

/// Issue 40: a league's file (no `games`) run as the end-of-term
/// tournament, `referee tournament class.toml --games N`, said "games must
/// be at least 1". `--games` stands for the missing key; without it the
/// message says how to give one.
#[test]
fn games_on_the_command_line_stand_for_a_missing_games_key() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let player = env!("CARGO_BIN_EXE_evensteven");
    let file = write_file(
        dir.path(),
        "class.toml",
        format!(
            "game = \"evensteven\"\nseed = 3\n\
             [[entrant]]\nname = \"a\"\ncommand = [\"{player}\"]\n\
             [[entrant]]\nname = \"b\"\ncommand = [\"{player}\"]\n"
        ),
    );
    let file = file.to_str().unwrap();
    let run = common::referee(["tournament", "--no-progress", file], b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(run.stderr.contains("give `--games N`"), "{run:?}");
    let run = referee_ok(["tournament", "--no-progress", file, "--games", "4"]);
    assert!(run.stdout.contains("4 games"), "{run:?}");
}

/// Issue 51: `--no-progress` still printed a progress line on standard
/// error every 5 s when standard error is not a terminal (`tournament:
/// 3/9 games, 0.5 games/s, leader: ...`), and so did every ci run, whose
/// tournaments have no progress at all. With it (and in ci) nothing of
/// the progress kind is printed; without it the line is there, which is
/// what shows that the runs last long enough to print one. (`play` and
/// `league` print a line per game on standard output, their results, and
/// no progress.)
#[test]
fn no_progress_prints_no_progress_line_in_a_tournament_nor_in_ci() {
    let dir = tempfile::tempdir().unwrap();
    // Nine games of at least 0.7 s each, one at a time: past 5 s.
    let bot = format!(
        "[\"{}\", \"0.7\", \"0\", \"{}\"]",
        fixture("slow.py"),
        env!("CARGO_BIN_EXE_evensteven")
    );
    let file = write_file(
        dir.path(),
        "t.toml",
        format!(
            "game = \"evensteven\"\ngames = 9\nseed = 3\n\
             [[entrant]]\nname = \"slow\"\ncommand = {bot}\n"
        ),
    );
    let suite = ci_suite(
        dir.path(),
        &format!(
            "[[case]]\nname = \"slow\"\ngame = \"evensteven\"\ncommand = {bot}\ngames = 9\n\
             seed = 3\njobs = 1\n[case.expect]\nno_crash = true\n"
        ),
    );
    let file = file.to_str().unwrap().to_owned();
    let runs: Vec<(&str, common::Run)> = std::thread::scope(|s| {
        let quiet = s.spawn(|| referee(["tournament", &file, "--jobs", "1", "--no-progress"], b""));
        let ci = s.spawn(|| referee(["ci", &suite], b""));
        let shown = referee(["tournament", &file, "--jobs", "1"], b"");
        vec![
            ("tournament", shown),
            ("tournament --no-progress", quiet.join().unwrap()),
            ("ci", ci.join().unwrap()),
        ]
    });
    let progress = |run: &common::Run| {
        run.stderr
            .lines()
            .filter(|l| l.contains(" games, ") && l.contains("games/s"))
            .count()
    };
    for (what, run) in &runs {
        assert_eq!(run.code, Some(0), "{what}: {run:?}");
        assert!(run.elapsed.as_secs_f64() > 5.5, "{what}: {run:?}");
    }
    assert!(progress(&runs[0].1) > 0, "{:?}", runs[0].1);
    for (what, run) in &runs[1..] {
        assert_eq!(progress(run), 0, "{what}: {}", run.stderr);
    }
}
