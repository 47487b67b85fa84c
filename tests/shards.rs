//! Runs that build the same submission directory at the same time: the
//! shards of a tournament on one machine (the README's GNU parallel
//! example), and two `referee chomp` runs side by side. Nobody may be
//! disqualified because another run was building or running the same
//! directory.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::runs::{merge, parallel_shards, shard_outs, tournament_args};
use common::{
    assert_has, assert_lacks, referee, referee_bin, referee_with, temp_path,
    timeless_records as records, timeless_standings as standings, write_file,
};
use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Copies of a built `pc2` left by runs in `tmp` (the runs' `TMPDIR`).
fn snapshots_left(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("referee-snapshot-"))
        })
        .collect()
}

/// A small Chomp tournament whose entrants are all given by `dir` (the
/// reference bots, built with their Makefiles), like
/// `tournaments/chomp.toml`, with the same directory twice.
fn tournament_file(dir: &Path) -> String {
    let text = format!(
        "game = \"chomp\"\ngames = 12\nseed = 11\n\
         [limits]\nprep = \"0s\"\narrays = \"{ROOT}/tournaments/chomp/statement.txt\"\nseats = 3\n\
         [[entrant]]\nname = \"strong\"\ndir = \"{ROOT}/bots/chomp\"\n\
         [[entrant]]\nname = \"greedy\"\ndir = \"{ROOT}/bots/chomp-greedy\"\n\
         [[entrant]]\nname = \"greedy-2\"\ndir = \"{ROOT}/bots/chomp-greedy\"\n"
    );
    let path = write_file(dir, "chomp.toml", text);
    path.to_str().unwrap().to_owned()
}

#[test]
fn shards_built_from_the_same_directories_merge_to_one_run() {
    if Command::new("parallel")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        eprintln!(
            "SKIPPED shards_built_from_the_same_directories_merge_to_one_run: \
             GNU parallel is not installed (apt-get install parallel)"
        );
        return;
    }
    let (dir, tmp) = temp_path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let file = tournament_file(dir.path());

    let whole = dir.path().join("whole");
    let run = common::tournament(&[&file, "--out", whole.to_str().unwrap()]);
    assert_lacks(&run.stderr, "disqualified");
    assert_has(&run.stderr, "referee: built ");

    // The README's example, on one machine: four shards at once, each
    // building the same directories and running what they built.
    let shards = dir.path().join("s");
    let marker = common::Marker::new();
    let mut parallel = Command::new("parallel");
    marker.apply(&mut parallel);
    let child = parallel
        .args([
            "--will-cite",
            referee_bin(),
            common::MARKER_ENV[0],
            common::MARKER_ENV[1],
        ])
        .args(parallel_shards(&file, &shards, 4))
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start GNU parallel");
    let started = Instant::now();
    let waiter = std::thread::spawn(move || child.wait_with_output().unwrap());
    while !waiter.is_finished() {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the shards did not finish"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = waiter.join().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{output:?}");
    assert_lacks(&stderr, "disqualified");
    assert_lacks(&stderr, "Text file busy");
    marker.assert_none_left();
    assert_eq!(snapshots_left(&tmp), Vec::<PathBuf>::new());

    let merged = dir.path().join("merged");
    let run = merge(&shard_outs(&shards, 4), &merged);
    assert_has(&run.stdout, "12 of 12 games");
    let rows = standings(&merged);
    assert_eq!(rows, standings(&whole));
    assert_eq!(records(&merged), records(&whole));
    for row in &rows {
        assert_eq!(row["games"], 12, "{row}");
        assert_eq!(row["disqualified"], 0, "{row}");
    }
}

#[test]
fn two_chomp_runs_building_one_directory_both_play() {
    let (dir, tmp) = temp_path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // A submission with a Makefile of its own that writes over pc2 in
    // place, slowly: without the build lock the two builds would overlap,
    // and without each run's private copy of pc2 the second `cp` would
    // find the first run's pc2 running ("Text file busy").
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    write_file(
        &sub,
        "Makefile",
        format!(
            "pc2: FORCE\n\techo start >> builds.log\n\tsleep 1\n\tcp {} pc2\n\t\
             echo end >> builds.log\nFORCE:\n.PHONY: FORCE\n",
            env!("CARGO_BIN_EXE_chomp-greedy")
        ),
    );
    let array = format!("{ROOT}/tournaments/chomp/40x20.txt");
    let sub_arg = sub.to_str().unwrap().to_owned();
    let tmp_arg = tmp.to_str().unwrap().to_owned();
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let (array, sub, tmp) = (array.clone(), sub_arg.clone(), tmp_arg.clone());
            std::thread::spawn(move || {
                referee_with(
                    [
                        "chomp", "--prep", "0s", "--games", "12", "--seed", "1", &array, &sub, &sub,
                    ],
                    b"",
                    &[("TMPDIR", &tmp)],
                    None,
                )
            })
        })
        .collect();
    let runs: Vec<common::Run> = runs.into_iter().map(|r| r.join().unwrap()).collect();
    for run in &runs {
        assert_eq!(run.code, Some(0), "{run:?}");
        assert!(!run.stderr.contains("disqualified"), "{run:?}");
        assert!(!run.stdout.contains("(crashed)"), "{run:?}");
        assert!(
            run.stderr
                .contains(&format!("referee: building {sub_arg} with make ..."))
                && run
                    .stderr
                    .contains(&format!("referee: built {sub_arg} in ")),
            "{}",
            run.stderr
        );
    }
    let waited = runs
        .iter()
        .filter(|r| {
            r.stderr
                .contains("referee: waiting for another run to finish building")
        })
        .count();
    assert_eq!(waited, 1, "{runs:?}");
    // One build after the other, never both at once.
    let builds = std::fs::read_to_string(sub.join("builds.log")).unwrap();
    assert_eq!(builds, "start\nend\nstart\nend\n");
    assert_eq!(snapshots_left(&tmp), Vec::<PathBuf>::new());
}

/// An Even Steven tournament of 8 games in `dir`: the reference player
/// against the in-order one.
fn evensteven_file(dir: &Path) -> String {
    let text = format!(
        "game = \"evensteven\"\ngames = 8\nseed = 3\n[limits]\ntimeout = \"2s\"\n\
         [[entrant]]\nname = \"reference\"\ncommand = [\"{}\"]\n\
         [[entrant]]\nname = \"in-order\"\ncommand = [\"{}\", \"play\", \"0\"]\n",
        env!("CARGO_BIN_EXE_evensteven"),
        common::fixture("misbehave.sh")
    );
    let path = write_file(dir, "t.toml", text);
    path.to_str().unwrap().to_owned()
}

/// Plays shard `k` of 2 of `file` into `out`.
fn play_shard(file: &str, k: u64, out: &Path) -> common::Run {
    referee(
        tournament_args(file, out, &["--shard", &format!("{k}/2")]),
        b"",
    )
}

/// `out`'s records file with `line` added at its end; the line's number.
fn append_record(out: &Path, line: &str) -> usize {
    let path = out.join("records.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(line);
    text.push('\n');
    std::fs::write(&path, &text).unwrap();
    text.lines().count()
}

#[test]
fn tampered_shards_are_refused_naming_the_file_and_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = evensteven_file(dir.path());
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    assert_eq!(play_shard(&file, 1, &one).code, Some(0));
    assert_eq!(play_shard(&file, 2, &two).code, Some(0));
    let merge = |outs: &[&Path]| {
        let mut args = vec!["merge".to_owned()];
        args.extend(outs.iter().map(|o| o.to_str().unwrap().to_owned()));
        referee(args, b"")
    };
    let whole = merge(&[&one, &two]);
    assert_eq!(whole.code, Some(0), "{whole:?}");
    assert_has(&whole.stdout, "8 of 8 games");

    let original = std::fs::read_to_string(one.join("records.jsonl")).unwrap();
    // Games finish out of order: game 1's record, wherever it is.
    let first: Value = original
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|record| record["index"] == 1)
        .unwrap();
    let tampered = |change: &dyn Fn(&mut Value)| {
        let mut record = first.clone();
        change(&mut record);
        record.to_string()
    };
    let cases: [(&str, String, &str); 4] = [
        (
            "past the run",
            tampered(&|r| r["index"] = 9.into()),
            "game 9 is past the run's 8 games",
        ),
        (
            "another shard's game",
            tampered(&|r| r["index"] = 2.into()),
            "game 2 is not one of shard 1/2's games",
        ),
        (
            "a duplicate",
            tampered(&|_| {}),
            "game 1 is recorded twice in this file",
        ),
        (
            "a stranger",
            tampered(&|r| {
                r["index"] = 3.into();
                r["players"][0]["entrant"] = "mallory".into();
            }),
            "entrant \"mallory\" is not one of the run's (reference, in-order)",
        ),
    ];
    let records = one.join("records.jsonl");
    for (what, line, says) in cases {
        std::fs::write(&records, &original).unwrap();
        if what == "a stranger" {
            // Game 3 replaced by the stranger's: no duplicate.
            let kept: Vec<&str> = original
                .lines()
                .filter(|l| serde_json::from_str::<Value>(l).unwrap()["index"] != 3)
                .collect();
            std::fs::write(&records, kept.join("\n") + "\n").unwrap();
        }
        let at = append_record(&one, &line);
        let where_ = format!("{}, line {at}: ", records.display());
        let run = merge(&[&one, &two]);
        assert_eq!(run.code, Some(64), "{what}: {run:?}");
        assert!(
            run.stderr.contains(&where_) && run.stderr.contains(says),
            "{what}: {}",
            run.stderr
        );
        assert!(!run.stdout.contains("standings"), "{what}: {}", run.stdout);
        // So does a report of it: it would show a game nobody played.
        let report = referee(["report", one.to_str().unwrap()], b"");
        assert_eq!(report.code, Some(64), "{what}: {report:?}");
        assert!(
            report.stderr.contains(&where_)
                && report.stderr.contains(says)
                && report.stderr.contains("no report was made"),
            "{what}: {}",
            report.stderr
        );
        // The shard run again (continued) refuses its records too.
        let again = play_shard(&file, 1, &one);
        assert_eq!(again.code, Some(64), "{what}: {again:?}");
        assert!(
            again.stderr.contains(&where_) && again.stderr.contains(says),
            "{what}: {}",
            again.stderr
        );
    }
}
