//! Durability: a multi-game run killed with SIGKILL and finished with
//! `--resume` ends with the same standings as an uninterrupted run, and
//! loses or repeats no game.

mod common;

use std::collections::BTreeSet;

use common::{Marker, finish, referee, signal, start, wait_for_lines};

/// Directory `name` in `root` holding `binary` as its `pc2`.
fn chomp_player(root: &std::path::Path, name: &str, binary: &str) -> String {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(binary, dir.join("pc2")).unwrap();
    dir.to_str().unwrap().to_owned()
}

/// Starts `referee ARGS`, waits until `results` holds `lines` records, and
/// kills the referee with SIGKILL.
fn kill_after(args: &[&str], results: &std::path::Path, lines: usize) {
    let marker = Marker::new();
    let child = start(args, &marker);
    wait_for_lines(results, lines);
    signal(&child, nix::sys::signal::Signal::SIGKILL);
    let run = finish(child, b"");
    assert_eq!(
        run.code, None,
        "the referee should have been killed: {run:?}"
    );
    // The watchdog kills the bots of a killed referee.
    marker.assert_none_left();
}

/// The standings without the timing column, which no two runs share.
fn standings(stdout: &str) -> Vec<String> {
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("standings"))
        .collect();
    assert!(!table.is_empty(), "{stdout}");
    table
        .iter()
        .map(|l| {
            let cells: Vec<&str> = l.split('|').collect();
            cells[..cells.len().saturating_sub(2)].join("|")
        })
        .collect()
}

fn indices(results: &std::path::Path) -> Vec<u64> {
    referee::record::read_records(results)
        .unwrap()
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_killed_chomp_run_resumes_to_the_same_standings() {
    let dir = tempfile::tempdir().unwrap();
    let arrays = dir.path().join("arrays");
    std::fs::create_dir_all(&arrays).unwrap();
    std::fs::write(
        arrays.join("a.txt"),
        "ABCDEFGHIJ\nKLMNOPQRST\nUVWXYZTHIS\nISNOTATEST\nITISASQUID\n",
    )
    .unwrap();
    std::fs::write(arrays.join("b.txt"), "QWERTY\nASDFGH\nZXCVBN\n").unwrap();
    let strong = chomp_player(dir.path(), "strong", env!("CARGO_BIN_EXE_chomp"));
    let greedy = chomp_player(dir.path(), "greedy", env!("CARGO_BIN_EXE_chomp-greedy"));
    let arrays = arrays.to_str().unwrap();
    let run_args = |results: &str, resume: bool| {
        let mut args = vec![
            "chomp",
            "--prep",
            "100ms",
            "--games",
            "20",
            "--seed",
            "11",
            "--results",
            results,
        ];
        if resume {
            args.push("--resume");
        }
        args.extend([arrays, strong.as_str(), greedy.as_str(), greedy.as_str()]);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };

    let whole = dir.path().join("whole.jsonl");
    let uninterrupted = referee(run_args(whole.to_str().unwrap(), false), b"");
    assert_eq!(uninterrupted.code, Some(0), "{uninterrupted:?}");

    let resumed_file = dir.path().join("resumed.jsonl");
    let args = run_args(resumed_file.to_str().unwrap(), false);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    kill_after(&args, &resumed_file, 5);
    let killed_at = indices(&resumed_file).len();
    assert!(killed_at < 20, "killed too late to test anything");

    let resumed = referee(run_args(resumed_file.to_str().unwrap(), true), b"");
    assert_eq!(resumed.code, Some(0), "{resumed:?}");
    assert!(
        resumed
            .stderr
            .contains(&format!("resuming: {killed_at} game(s)")),
        "{}",
        resumed.stderr
    );
    assert_eq!(standings(&resumed.stdout), standings(&uninterrupted.stdout));
    let mut seen = indices(&resumed_file);
    seen.sort_unstable();
    assert_eq!(seen, (1..=20).collect::<Vec<u64>>(), "every game once");
}

#[test]
fn a_killed_septica_run_resumes_to_the_same_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let player = env!("CARGO_BIN_EXE_septica");
    let run_args = |results: &str, resume: bool| {
        let mut args = vec![
            "septica",
            "--matches",
            "150",
            "--need",
            "100",
            "--seed",
            "5",
            "--results",
            results,
        ];
        if resume {
            args.push("--resume");
        }
        args.extend([player, "--guesses", "8", "--budget", "1h"]);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let whole = dir.path().join("whole.jsonl");
    let uninterrupted = referee(run_args(whole.to_str().unwrap(), false), b"");
    assert_eq!(uninterrupted.code, Some(0), "{uninterrupted:?}");

    let resumed_file = dir.path().join("resumed.jsonl");
    let args = run_args(resumed_file.to_str().unwrap(), false);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    kill_after(&args, &resumed_file, 30);
    // A torn last line, as a kill in the middle of a write would leave.
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&resumed_file)
            .unwrap();
        f.write_all(b"{\"game\":\"septica\",\"ind").unwrap();
    }
    let resumed = referee(run_args(resumed_file.to_str().unwrap(), true), b"");
    assert_eq!(resumed.code, Some(0), "{resumed:?}");
    assert!(
        resumed.stderr.contains("ends with an incomplete record"),
        "{}",
        resumed.stderr
    );
    let last = |out: &str| out.lines().last().unwrap().to_owned();
    assert_eq!(last(&resumed.stdout), last(&uninterrupted.stdout));
    let seen: BTreeSet<u64> = indices(&resumed_file).into_iter().collect();
    assert_eq!(seen.len(), 150);
    assert_eq!(indices(&resumed_file).len(), 150, "no match twice");
}
