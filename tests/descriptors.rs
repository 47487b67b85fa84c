//! A bot starts with descriptors 0, 1 and 2 and nothing else (issue 39,
//! failure 3): before, a bot appended to the organiser's open log
//! (`referee ... 9>>organiser.log`), under `--sandbox` too, and got a pipe
//! of the referee's own. The caller here opens descriptors without
//! close-on-exec, as a shell's redirections do, and the bot lists what it
//! has (tests/fixtures/descriptors/fds.py), started every way the
//! referee starts one: through `referee-launch` at once (the dealer) or
//! on standby (`play`, from its second bot), through the referee's own
//! binary where no `referee-launch` is beside it, and under bubblewrap.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{MARKER_ENV, Marker, Run, fixture, temp_path};

/// Runs `referee ARGS` (the program `referee`) from a shell that first
/// opens descriptor 9 to append to a log and 7 to read a file, neither
/// close-on-exec, and checks that nothing it started is left running.
fn with_open_descriptors(referee: &Path, args: &[&str], input: &[u8]) -> Run {
    let (_dir, log) = temp_path("organiser.log");
    let marker = Marker::new();
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", r#"exec 9>>"$1" 7<"$2"; shift 2; exec "$@""#, "sh"])
        .arg(&log)
        .arg(fixture("descriptors/fds.py"))
        .arg(referee)
        .args(MARKER_ENV)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    marker.apply(&mut cmd);
    let run = common::finish(cmd.spawn().expect("start the shell"), input);
    marker.assert_none_left();
    assert_eq!(
        std::fs::read(&log).unwrap(),
        b"",
        "a bot wrote to the organiser's log"
    );
    run
}

/// What each bot said it started with: one `fds ...` line per bot.
fn listed(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter(|line| *line == "fds" || line.starts_with("fds "))
        .collect()
}

/// Fails unless `bots` bots each listed no descriptor beyond 0, 1 and 2.
fn assert_only_standard(run: &Run, bots: usize) {
    let lists = listed(run);
    assert_eq!(lists.len(), bots, "{run:?}");
    for list in lists {
        assert_eq!(list, "fds", "a bot started with more: {run:?}");
    }
}

fn referee() -> PathBuf {
    PathBuf::from(common::referee_bin())
}

/// The dealer: one bot, through `referee-launch`.
fn dealer(referee: &Path, sandbox: bool) {
    let bot = fixture("descriptors/fds.py");
    let mut args = vec!["dealer", "--show-stderr"];
    if sandbox {
        args.push("--sandbox");
    }
    args.push(&bot);
    let run = with_open_descriptors(referee, &args, b"4 876390176\n");
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_only_standard(&run, 1);
}

/// `play`: a bot per game, from the second on through a launcher that
/// waited on standby.
fn play(referee: &Path, sandbox: bool) {
    let game = format!("{}/games/evensteven/game.toml", env!("CARGO_MANIFEST_DIR"));
    let bot = fixture("descriptors/fds.py");
    let mut args = vec!["play", "--games", "3", "--show-stderr"];
    if sandbox {
        args.push("--sandbox");
    }
    args.extend([game.as_str(), bot.as_str()]);
    let run = with_open_descriptors(referee, &args, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_only_standard(&run, 3);
}

#[test]
fn a_bot_gets_none_of_the_callers_descriptors() {
    dealer(&referee(), false);
    play(&referee(), false);
}

#[test]
fn a_sandboxed_bot_gets_none_of_the_callers_descriptors() {
    common::need_bwrap();
    dealer(&referee(), true);
    play(&referee(), true);
}

/// Without `referee-launch` beside it, the referee starts bots through its
/// own binary.
#[test]
fn a_bot_started_by_the_referees_own_binary_gets_none_either() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let alone = dir.path().join("referee");
    if std::fs::hard_link(referee(), &alone).is_err() {
        std::fs::copy(referee(), &alone).unwrap();
    }
    assert!(!dir.path().join("referee-launch").exists());
    dealer(&alone, false);
    play(&alone, false);
    if Command::new("bwrap").arg("--version").output().is_ok() {
        dealer(&alone, true);
    }
}

/// The watchdog (`referee-launch __watchdog`, which outlives a killed
/// referee to kill its bots) holds none of the caller's descriptors
/// either: the organiser's log stays closed to it for the whole run.
#[test]
fn the_watchdog_gets_none_of_the_callers_descriptors() {
    let bot = fixture("descriptors/watchdog-fds.sh");
    let env = common::env_args(&[("EVENSTEVEN", common::evensteven_bin())]);
    let mut args = vec!["dealer", "--show-stderr"];
    args.extend(env.iter().map(String::as_str));
    args.push(&bot);
    let run = with_open_descriptors(&referee(), &args, b"4 876390176\n");
    assert_eq!(run.code, Some(0), "{run:?}");
    let lists: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("watchdog fds"))
        .collect();
    assert_eq!(lists, ["watchdog fds 0 1 2 "], "{run:?}");
}
