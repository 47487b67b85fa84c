//! The referee's threads run as SCHED_BATCH, so that reading a bot's line
//! never takes the bot's CPU from it (src/bot/scheduling.rs); the bots
//! start with the policy the referee was started with. Each bot here
//! writes its own policy and its referee's threads' before it plays.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{read_lines, temp_path, write_file};

/// Linux's policies, as /proc/PID/stat's field 41 numbers them.
const OTHER: &str = "0";
const BATCH: &str = "3";
const IDLE: &str = "5";

/// A bot that appends a line to `log`, `POLICY NAME:POLICY...` (its own
/// policy, then each thread of its parent, the referee, by name), then
/// becomes `bot`.
fn telling_bot(dir: &Path, log: &Path, bot: &str) -> PathBuf {
    // Field 41 of stat, counted after the name in parentheses (which may
    // hold spaces): the 39th field after ") ".
    let script = format!(
        "#!/bin/sh\n\
         policy() {{ sed 's/.*) //' \"$1\" | cut -d' ' -f39; }}\n\
         line=$(policy /proc/$$/stat)\n\
         for t in /proc/$PPID/task/*; do line=\"$line $(cat $t/comm):$(policy $t/stat)\"; done\n\
         echo \"$line\" >> '{}'\n\
         exec '{bot}' \"$@\"\n",
        log.display()
    );
    let path = write_file(dir, "telling.sh", script);
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).unwrap();
    path
}

/// An Even Steven tournament of 6 games between two telling bots, on two
/// job threads, run by `launcher` (a program and its arguments, then the
/// referee): each bot's line.
fn tournament(launcher: &[&str]) -> Vec<String> {
    let (dir, log) = temp_path("policies.txt");
    let bot = telling_bot(dir.path(), &log, env!("CARGO_BIN_EXE_evensteven"));
    let file = write_file(
        dir.path(),
        "t.toml",
        format!(
            "game = \"evensteven\"\ngames = 6\nseed = 3\n[limits]\ntimeout = \"2s\"\n\
             [[entrant]]\nname = \"a\"\ncommand = [\"{bot}\"]\n\
             [[entrant]]\nname = \"b\"\ncommand = [\"{bot}\"]\n",
            bot = bot.display()
        ),
    );
    let out = dir.path().join("out");
    let (program, first) = launcher.split_first().unwrap();
    let status = Command::new(program)
        .args(first)
        .arg(env!("CARGO_BIN_EXE_referee"))
        .args(["tournament", "--no-progress", "--jobs", "2", "--out"])
        .arg(&out)
        .arg(&file)
        .status()
        .unwrap();
    assert!(status.success(), "{status:?}");
    let lines = read_lines(&log);
    assert_eq!(lines.len(), 12, "two bots a game: {lines:?}");
    lines
}

/// The policy of each of the referee's threads named `name…` in `line`.
fn threads<'a>(line: &'a str, name: &str) -> Vec<&'a str> {
    line.split_whitespace()
        .skip(1)
        .filter_map(|t| t.rsplit_once(':'))
        .filter(|(n, _)| n.starts_with(name))
        .map(|(_, policy)| policy)
        .collect()
}

#[test]
fn game_threads_give_way_and_their_bots_start_as_normal_programs() {
    for line in tournament(&["env"]) {
        let own = line.split_whitespace().next().unwrap();
        assert_eq!(own, OTHER, "a bot starts under SCHED_OTHER: {line}");
        let games = threads(&line, "game-");
        assert!(!games.is_empty(), "the referee's game threads: {line}");
        assert!(games.iter().all(|&p| p == BATCH), "{line}");
        assert_eq!(
            threads(&line, "referee"),
            [BATCH],
            "the main thread: {line}"
        );
    }
}

#[test]
fn a_referee_started_idle_is_left_idle_and_so_are_its_bots() {
    Command::new("chrt")
        .arg("--help")
        .output()
        .expect("chrt (util-linux) is needed for this test");
    for line in tournament(&["chrt", "--idle", "0"]) {
        let own = line.split_whitespace().next().unwrap();
        assert_eq!(own, IDLE, "a bot starts as the referee was started: {line}");
        let games = threads(&line, "game-");
        assert!(!games.is_empty(), "{line}");
        assert!(games.iter().all(|&p| p == IDLE), "{line}");
    }
}
