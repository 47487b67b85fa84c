//! The command line itself, end to end: usage errors, `--version`, and a
//! referee whose own standard output or error is closed under it.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::{Marker, Run, evensteven_bin, fixture, referee, write_file};

fn septica_bin() -> &'static str {
    env!("CARGO_BIN_EXE_septica-editorial")
}

fn acesup_bin() -> &'static str {
    env!("CARGO_BIN_EXE_acesup")
}

/// A usage error: status 64, the message on stderr, nothing on stdout.
fn assert_usage(run: &Run, says: &[&str]) {
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    for words in says {
        assert!(run.stderr.contains(words), "expected {words:?} in {run:?}");
    }
}

#[test]
fn a_mistyped_option_before_program_is_a_usage_error_with_a_suggestion() {
    let runs = [
        vec!["dealer", "--timout", "1s", "./bot"],
        vec!["septica", "--timout", "1s", "./bot"],
        vec!["acesup", "--random", "1", "--timout", "1s", "./bot"],
    ];
    for args in runs {
        let run = referee(&args, b"");
        assert_usage(
            &run,
            &[
                "unexpected argument '--timout'",
                "a similar argument exists: '--timeout'",
            ],
        );
        assert!(!run.stderr.contains("cannot start"), "{run:?}");
    }
}

#[test]
fn options_after_program_go_to_the_program() {
    let script = fixture("misbehave.sh");
    let run = referee(
        ["dealer", &script, "args", "0", "--debug", "--timeout", "-x"],
        b"4 876390176\n",
    );
    run.expect_stdout(0, "* args: args 0 --debug --timeout -x");
}

#[test]
fn a_program_whose_name_starts_with_a_dash_follows_a_double_dash() {
    for game in ["dealer", "septica"] {
        let run = referee([game, "--", "-weird-name", "--debug"], b"1 1\n");
        assert_usage(&run, &["cannot start the player", "-weird-name"]);
    }
    let run = referee(["acesup", "--random", "1", "--", "-weird-name"], b"");
    run.expect_stderr(64, "cannot start the program: \"-weird-name\"");
}

#[test]
fn a_dealer_input_without_games_is_a_usage_error_naming_it() {
    for input in [&b""[..], b"\n\n  \n"] {
        let run = referee(["dealer", evensteven_bin()], input);
        assert_usage(&run, &["standard input has no games"]);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write_file(dir.path(), "games.txt", "\n");
    let file = file.to_str().unwrap();
    let run = referee(["dealer", "--input", file, evensteven_bin()], b"1 1\n");
    assert_usage(&run, &[&format!("{file} has no games")]);
}

#[test]
fn septica_cannot_need_more_wins_than_matches() {
    let run = referee(
        ["septica", "--need", "11", "--matches", "10", septica_bin()],
        b"",
    );
    assert_usage(&run, &["--need 11", "--matches 10"]);
    // As many as there are matches is a fair (if strict) demand.
    let run = referee(
        [
            "septica",
            "--need",
            "2",
            "--matches",
            "2",
            "--seed",
            "1",
            septica_bin(),
        ],
        b"",
    );
    assert!(matches!(run.code, Some(0 | 1)), "{run:?}");
}

#[test]
fn every_subcommand_knows_the_version() {
    let version = env!("CARGO_PKG_VERSION");
    for sub in [
        None,
        Some("dealer"),
        Some("chomp"),
        Some("septica"),
        Some("tournament"),
        Some("ci"),
        Some("merge"),
        Some("acesup"),
    ] {
        let args: Vec<&str> = sub.into_iter().chain(["--version"]).collect();
        let run = referee(&args, b"");
        assert_eq!(run.code, Some(0), "{args:?}: {run:?}");
        assert!(run.stdout.contains(version), "{args:?}: {run:?}");
    }
}

#[test]
fn zero_jobs_and_negative_durations_get_plain_messages() {
    let cases: [(&str, &[&[&str]]); 2] = [
        (
            "must be at least 1",
            &[
                &["tournament", "t.toml", "--jobs", "0"],
                &["tournament", "t.toml", "--jobs", "-1"],
                &["tournament", "t.toml", "--games", "0"],
                &["septica", "--matches", "0", "./p"],
            ],
        ),
        (
            "a duration cannot be negative",
            &[
                &["dealer", "--timeout", "-5s", "./p"],
                &["dealer", "--timeout=-5s", "./p"],
                &["dealer", "--grace", "-1s", "./p"],
                &["septica", "--grace", "-1s", "./p"],
                &["tournament", "t.toml", "--grace", "-1s"],
                &["chomp", "--prep", "-1s", "a", "b"],
            ],
        ),
    ];
    for (says, runs) in cases {
        for args in runs {
            let run = referee(*args, b"");
            assert_usage(&run, &[says]);
            assert!(!run.stderr.contains("tip:"), "{args:?}: {run:?}");
        }
    }
}

#[test]
fn a_limit_no_bot_could_be_started_under_is_a_usage_error() {
    // Recorded as the bot crashing (EPERM from setrlimit, exit 3), and
    // every bot dying of SIGSEGV, before they were refused.
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open").unwrap();
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["--limit-open-files", "99999999999"],
            &["--limit-open-files 99999999999", "nr_open", nr_open.trim()],
        ),
        (
            &["--limit-address-space", "0"],
            &["--limit-address-space 0 B", "at least 16 MiB"],
        ),
        (
            &["--limit-address-space", "1"],
            &["--limit-address-space 1 B", "at least 16 MiB"],
        ),
        (
            &["--limit-address-space", "4096"],
            &["--limit-address-space 4 KiB", "at least 16 MiB"],
        ),
        (
            &["--limit-open-files", "0"],
            &["--limit-open-files 0", "at least"],
        ),
    ];
    for (options, says) in cases {
        for game in ["dealer", "septica"] {
            let mut args = vec![game];
            args.extend_from_slice(options);
            args.push(evensteven_bin());
            let run = referee(&args, b"4 876390176\n");
            assert_usage(&run, says);
        }
    }
    // At the floor, the reference bot plays.
    let run = referee(
        [
            "dealer",
            "--limit-address-space",
            "16MiB",
            "--limit-open-files",
            "16",
            evensteven_bin(),
        ],
        b"4 876390176\n",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
}

/// Waits (two minutes at most) for a referee whose output was closed.
fn wait(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the referee did not end after its output was closed");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts `referee ARGS` with standard output to a pipe, reads one line
/// and closes the pipe: the run must end quietly, with status 141 and every
/// bot gone.
fn close_stdout_after_one_line(args: &[&str]) {
    let (ours, theirs) = std::io::pipe().unwrap();
    close_after_one_line(args, theirs, ours);
}

/// As [`close_stdout_after_one_line`], with standard output a socket, which
/// only a write finds closed: the referees' own writes must end the run
/// quietly, not only the watch on pipes.
fn close_socket_stdout_after_one_line(args: &[&str]) {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    close_after_one_line(args, std::os::fd::OwnedFd::from(theirs), ours);
}

/// Starts `referee ARGS` with standard output to `theirs`, reads one line
/// from `ours`, its other end, and closes it: the run must end quietly,
/// with status 141 and every bot gone.
fn close_after_one_line(args: &[&str], theirs: impl Into<Stdio>, ours: impl Read) {
    let marker = Marker::new();
    // The command, and with it our copy of `theirs`, goes at once.
    let mut child = common::command(args, &marker)
        .stdin(Stdio::null())
        .stdout(theirs)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(ours);
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(!line.is_empty(), "{args:?}: no output at all");
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = wait(&mut child);
    assert_eq!(
        status.code(),
        Some(141),
        "{args:?}: {status:?}, stderr {stderr:?}"
    );
    assert_eq!(stderr, "", "{args:?}");
    marker.assert_none_left();
}

/// Enough games that the output cannot fit in a pipe's buffer: the
/// referee must meet the closed pipe before it is done.
fn many_games(dir: &std::path::Path) -> String {
    let file = dir.join("games.txt");
    let games: String = (1..=20_000).map(|i| format!("13 {i}\n")).collect();
    std::fs::write(&file, games).unwrap();
    file.to_str().unwrap().to_owned()
}

#[test]
fn a_closed_stdout_ends_the_dealer_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let games = many_games(dir.path());
    close_stdout_after_one_line(&["dealer", "--input", &games, evensteven_bin()]);
}

#[test]
fn a_closed_stdout_ends_the_other_referees_quietly() {
    // Each would otherwise play on and end with its verdict (1) or, on its
    // last line, an internal error (70).
    close_stdout_after_one_line(&[
        "septica",
        "--matches",
        "2000",
        "--need",
        "2000",
        "-v",
        septica_bin(),
    ]);
    let off_by_one = fixture("acesup-off-by-one.sh");
    close_stdout_after_one_line(&[
        "acesup",
        "--random",
        "3000",
        "--seed",
        "1",
        &off_by_one,
        acesup_bin(),
    ]);
    let file = format!("{}/tournaments/evensteven.toml", env!("CARGO_MANIFEST_DIR"));
    close_stdout_after_one_line(&[
        "tournament",
        &file,
        "--games",
        "5000",
        "--jobs",
        "1",
        "--no-progress",
    ]);
}

#[test]
fn closed_stdout_and_stderr_on_one_pipe_end_the_dealer_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let games = many_games(dir.path());
    let marker = Marker::new();
    let (reader, writer) = std::io::pipe().unwrap();
    let mut child = {
        let mut cmd = common::command(["dealer", "--input", &games, evensteven_bin()], &marker);
        cmd.stdin(Stdio::null())
            .stdout(writer.try_clone().unwrap())
            .stderr(writer);
        cmd.spawn().unwrap()
        // `cmd` goes here, and with it our copies of the write end.
    };
    let mut reader = BufReader::new(reader);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert_eq!(line, "Game 1\n");
    drop(reader);
    let status = wait(&mut child);
    assert_eq!(status.code(), Some(141), "{status:?}");
    marker.assert_none_left();
}

#[test]
fn a_closed_socket_as_stdout_ends_the_run_quietly_too() {
    let dir = tempfile::tempdir().unwrap();
    let games = many_games(dir.path());
    close_socket_stdout_after_one_line(&["dealer", "--input", &games, evensteven_bin()]);
    // The tournament writes again only at its end, with println!.
    let file = format!("{}/tournaments/evensteven.toml", env!("CARGO_MANIFEST_DIR"));
    close_socket_stdout_after_one_line(&[
        "tournament",
        &file,
        "--games",
        "10",
        "--jobs",
        "1",
        "--no-progress",
    ]);
}

/// `--help` teaches the options of a match: the judge's, every bot's, one
/// bot's, a clock of its own and the PGN, each with an example.
#[test]
fn help_shows_how_options_and_clocks_are_given() {
    help_shows(
        "play",
        &[
            "--game-option <KEY=VALUE>",
            "--each-option <KEY=VALUE>",
            "--time-control <[NAME:]BASE+INC>",
            "--pgn <FILE>",
            "5000 an integer, true a boolean, 1.5 a float",
            "--game-option nodes=5000 --each-option Hash=16",
            "--time-control odds:1s+25ms",
        ],
    );
    help_shows(
        "tournament",
        &[
            "--game-option <KEY=VALUE>",
            "[each]",
            "--game-option nodes=5000",
        ],
    );
}

/// `referee SUBCOMMAND --help` succeeds and shows each of `words`.
fn help_shows(subcommand: &str, words: &[&str]) {
    let help = referee([subcommand, "--help"], b"");
    assert_eq!(help.code, Some(0), "{help:?}");
    for words in words {
        assert!(help.stdout.contains(words), "{words:?} in {}", help.stdout);
    }
}
