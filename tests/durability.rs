//! Durability: a multi-game run killed with SIGKILL and finished with
//! `--resume` ends with the same standings as an uninterrupted run, and
//! loses or repeats no game.

mod common;

use std::collections::BTreeSet;

use common::{
    Marker, Run, assert_has, assert_lacks, finish, referee, signal, start, temp_path,
    wait_for_lines, write_file,
};

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

/// `referee HEAD... --results RESULTS [--resume] TAIL...` three times
/// over: whole; killed after `kill_at` records, then `tear` done to its
/// results file; and resumed on that file. The whole run, the resumed one
/// and the resumed run's results file.
fn whole_killed_resumed(
    dir: &std::path::Path,
    head: &[&str],
    tail: &[&str],
    kill_at: usize,
    tear: impl FnOnce(&std::path::Path),
) -> (Run, Run, std::path::PathBuf) {
    let run_args = |results: &std::path::Path, resume: bool| {
        let mut args = head.to_vec();
        args.extend(["--results", results.to_str().unwrap()]);
        if resume {
            args.push("--resume");
        }
        args.extend(tail);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let whole = dir.join("whole.jsonl");
    let uninterrupted = referee(run_args(&whole, false), b"");
    assert_eq!(uninterrupted.code, Some(0), "{uninterrupted:?}");

    let resumed_file = dir.join("resumed.jsonl");
    let args = run_args(&resumed_file, false);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    kill_after(&args, &resumed_file, kill_at);
    tear(&resumed_file);
    let resumed = referee(run_args(&resumed_file, true), b"");
    assert_eq!(resumed.code, Some(0), "{resumed:?}");
    (uninterrupted, resumed, resumed_file)
}

fn indices(results: &std::path::Path) -> Vec<u64> {
    referee::record::read_records::<serde_json::Value>(results)
        .unwrap()
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_killed_chomp_run_resumes_to_the_same_standings() {
    let (dir, arrays) = temp_path("arrays");
    write_file(
        &arrays,
        "a.txt",
        "ABCDEFGHIJ\nKLMNOPQRST\nUVWXYZTHIS\nISNOTATEST\nITISASQUID\n",
    );
    write_file(&arrays, "b.txt", "QWERTY\nASDFGH\nZXCVBN\n");
    let strong = chomp_player(dir.path(), "strong", env!("CARGO_BIN_EXE_chomp"));
    let greedy = chomp_player(dir.path(), "greedy", env!("CARGO_BIN_EXE_chomp-greedy"));
    let arrays = arrays.to_str().unwrap();
    let head = ["chomp", "--prep", "100ms", "--games", "20", "--seed", "11"];
    let tail = [arrays, strong.as_str(), greedy.as_str(), greedy.as_str()];
    let mut killed_at = 0;
    let (uninterrupted, resumed, resumed_file) =
        whole_killed_resumed(dir.path(), &head, &tail, 5, |killed| {
            killed_at = indices(killed).len();
            assert!(killed_at < 20, "killed too late to test anything");
        });
    assert_has(&resumed.stderr, &format!("resuming: {killed_at} game(s)"));
    assert_eq!(standings(&resumed.stdout), standings(&uninterrupted.stdout));
    let mut seen = indices(&resumed_file);
    seen.sort_unstable();
    assert_eq!(seen, (1..=20).collect::<Vec<u64>>(), "every game once");
}

#[test]
fn a_killed_septica_run_resumes_to_the_same_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let player = env!("CARGO_BIN_EXE_septica");
    let head = [
        "septica",
        "--matches",
        "150",
        "--need",
        "100",
        "--seed",
        "5",
    ];
    let tail = [player, "--guesses", "8", "--budget", "1h"];
    // A torn last line, as a kill in the middle of a write would leave.
    let tear = |killed: &std::path::Path| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(killed)
            .unwrap();
        f.write_all(b"{\"game\":\"septica\",\"ind").unwrap();
    };
    let (uninterrupted, resumed, resumed_file) =
        whole_killed_resumed(dir.path(), &head, &tail, 30, tear);
    assert_has(&resumed.stderr, "ends with an incomplete record");
    let last = |out: &str| out.lines().last().unwrap().to_owned();
    assert_eq!(last(&resumed.stdout), last(&uninterrupted.stdout));
    let seen: BTreeSet<u64> = indices(&resumed_file).into_iter().collect();
    assert_eq!(seen.len(), 150);
    assert_eq!(indices(&resumed_file).len(), 150, "no match twice");
}

// ---------------------------------------------------------------------
// Nothing lost: a results file that cannot be written stops the run with
// exit status 74, naming the file and the error; no bot outlives it.
// ---------------------------------------------------------------------

const FULL: &str = "/dev/full";
const IO_ERROR: i32 = 74;

/// The run stopped at the first failed write, with one message naming the
/// file and the error.
fn assert_stopped_on_full_disk(run: &common::Run, file: &str) {
    assert_eq!(run.code, Some(IO_ERROR), "{run:?}");
    let errors = common::lines_holding(&run.stderr, "No space left on device");
    assert_eq!(errors.len(), 1, "one failure, then the run stops: {run:?}");
    assert!(errors[0].contains(file), "{run:?}");
}

#[test]
fn the_dealer_stops_at_a_results_file_it_cannot_write() {
    let input: String = (1..=2000).map(|i| format!("13 {i}\n")).collect();
    let run = referee(
        [
            "dealer",
            "--results",
            FULL,
            env!("CARGO_BIN_EXE_evensteven"),
        ],
        input.as_bytes(),
    );
    assert_stopped_on_full_disk(&run, FULL);
    let games = common::lines_starting(&run.stdout, "Game ").len();
    assert_eq!(games, 1, "{}", run.stdout);
}

#[test]
fn chomp_septica_and_acesup_stop_at_a_results_file_they_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let array = write_file(dir.path(), "a.txt", "QWERTY\nASDFGH\nZXCVBN\n");
    let greedy = chomp_player(dir.path(), "greedy", env!("CARGO_BIN_EXE_chomp-greedy"));
    let chomp = referee(
        [
            "chomp",
            "--prep",
            "100ms",
            "--games",
            "50",
            "--results",
            FULL,
            array.to_str().unwrap(),
            &greedy,
            &greedy,
        ],
        b"",
    );
    assert_stopped_on_full_disk(&chomp, FULL);
    assert_lacks(&chomp.stdout, "game 2:");

    let septica = referee(
        [
            "septica",
            "--matches",
            "500",
            "--results",
            FULL,
            env!("CARGO_BIN_EXE_septica-editorial"),
        ],
        b"",
    );
    assert_stopped_on_full_disk(&septica, FULL);

    let acesup = referee(
        [
            "acesup",
            "--random",
            "500",
            "--results",
            FULL,
            env!("CARGO_BIN_EXE_acesup"),
        ],
        b"",
    );
    assert_stopped_on_full_disk(&acesup, FULL);
    assert_lacks(&acesup.stdout, "deck 2:");
}

/// A tournament file of `games` Even Steven games for the reference player.
fn evensteven_tournament(dir: &std::path::Path, games: &str) -> String {
    let path = write_file(
        dir,
        "t.toml",
        format!(
            "game = \"evensteven\"\ngames = {games}\nseed = 1\n\
             [[entrant]]\nname = \"reference\"\ncommand = [\"{}\"]\n",
            env!("CARGO_BIN_EXE_evensteven")
        ),
    );
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_tournament_stops_at_any_of_its_files_it_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let file = evensteven_tournament(dir.path(), "200");
    for name in [
        "records.jsonl",
        "run.json",
        "tournament.toml",
        "standings.json",
        "standings.csv",
    ] {
        let out = dir.path().join(name.replace('.', "-"));
        std::fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink(FULL, out.join(name)).unwrap();
        let run = referee(
            [
                "tournament",
                "--no-progress",
                "--out",
                out.to_str().unwrap(),
                &file,
            ],
            b"",
        );
        assert_stopped_on_full_disk(&run, name);
        if name == "records.jsonl" {
            assert!(!run.stdout.contains("standings"), "{run:?}");
        }
    }
}

// ---------------------------------------------------------------------
// Nothing lost: a finished game is in the file at once, not only buffered.
// ---------------------------------------------------------------------

#[test]
fn a_finished_game_is_in_the_results_file_while_the_run_goes_on() {
    let (_dir, results) = temp_path("r.jsonl");
    let marker = Marker::new();
    let mut child = start(
        [
            "dealer",
            "--results",
            results.to_str().unwrap(),
            env!("CARGO_BIN_EXE_evensteven"),
        ],
        &marker,
    );
    // Five games, and the input stays open: the dealer waits for more.
    common::feed(&mut child, b"4 1\n5 2\n6 3\n7 4\n8 5\n");
    wait_for_lines(&results, 5);
    signal(&child, nix::sys::signal::Signal::SIGKILL);
    let run = finish(child, b"");
    assert_eq!(run.code, None, "{run:?}");
    marker.assert_none_left();
    assert_eq!(indices(&results), [1, 2, 3, 4, 5]);
}

// ---------------------------------------------------------------------
// Nothing grows: memory does not depend on the number of games asked for.
// ---------------------------------------------------------------------

const HUGE: &str = "18446744073709551615";

/// Resident memory of a process, in KiB.
fn rss_kib(child: &std::process::Child) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// Starts `referee ARGS`, waits until `results` holds a few records, checks
/// that the referee stays small, and interrupts it.
fn small_while_playing(args: &[&str], results: &std::path::Path) {
    let marker = Marker::new();
    let child = start(args, &marker);
    wait_for_lines(results, 5);
    let rss = rss_kib(&child);
    assert!(rss < 200 * 1024, "{rss} KiB resident: {args:?}");
    signal(&child, nix::sys::signal::Signal::SIGTERM);
    let run = finish(child, b"");
    assert_eq!(run.code, Some(130), "{run:?}");
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    marker.assert_none_left();
}

#[test]
fn a_tournament_of_ever_so_many_games_starts_at_once_in_little_memory() {
    let dir = tempfile::tempdir().unwrap();
    let file = evensteven_tournament(dir.path(), HUGE);
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    small_while_playing(
        &["tournament", "--no-progress", "--out", out, &file],
        &dir.path().join("out/records.jsonl"),
    );
    // The same asked for on the command line, sharded.
    let small = evensteven_tournament(dir.path(), "5");
    let out2 = dir.path().join("out2");
    small_while_playing(
        &[
            "tournament",
            "--no-progress",
            "--games",
            HUGE,
            "--shard",
            "2/3",
            "--out",
            out2.to_str().unwrap(),
            &small,
        ],
        &out2.join("records.jsonl"),
    );
    let first = indices(&out2.join("records.jsonl"));
    assert!(first.iter().all(|i| i % 3 == 2), "{first:?}");
}

#[test]
fn acesup_with_ever_so_many_random_decks_starts_at_once_in_little_memory() {
    let (_dir, results) = temp_path("r.jsonl");
    small_while_playing(
        &[
            "acesup",
            "--random",
            HUGE,
            "--results",
            results.to_str().unwrap(),
            env!("CARGO_BIN_EXE_acesup"),
        ],
        &results,
    );
}

#[test]
fn a_ci_case_of_ever_so_many_games_does_not_panic() {
    let (_dir, suite) = temp_path("suite.toml");
    // The sequential test decides long before the games run out.
    std::fs::write(
        &suite,
        format!(
            "[[case]]\nname = \"editorial\"\ngame = \"septica\"\ncommand = [\"{}\"]\n\
             games = {HUGE}\n[case.expect]\nwin_rate = 0.3\nsequential = true\n",
            env!("CARGO_BIN_EXE_septica-editorial")
        ),
    )
    .unwrap();
    let run = referee(["ci", suite.to_str().unwrap()], b"");
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    // A suite check may refuse so many games (64); otherwise the case is
    // decided by the sequential test.
    assert!(matches!(run.code, Some(0 | 1 | 64)), "{run:?}");
}
