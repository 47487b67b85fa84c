//! `--pin`: each job's thread and the bots it starts are bound to one CPU
//! of those the referee may use, as fastchess's `-use-affinity` binds a
//! game's engines (docs/chess.md says when it matters). Each bot here
//! writes the CPUs it may run on, as the kernel says, before it plays.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_lacks, read_lines, referee, referee_ok, temp_path, write_file};

/// A bot that appends its `Cpus_allowed_list` to `log`, then becomes `bot`.
fn telling_bot(dir: &Path, log: &Path, bot: &str) -> PathBuf {
    let path = write_file(
        dir,
        "telling.sh",
        format!(
            "#!/bin/sh\nsed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status >> '{}'\nexec '{bot}' \"$@\"\n",
            log.display()
        ),
    );
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).unwrap();
    path
}

/// An Even Steven tournament of `games` games between two telling bots.
fn tournament_file(dir: &Path, bot: &Path, games: u64) -> String {
    let text = format!(
        "game = \"evensteven\"\ngames = {games}\nseed = 3\n[limits]\ntimeout = \"2s\"\n\
         [[entrant]]\nname = \"a\"\ncommand = [\"{bot}\"]\n\
         [[entrant]]\nname = \"b\"\ncommand = [\"{bot}\"]\n",
        bot = bot.display()
    );
    let path = write_file(dir, "t.toml", text);
    path.to_str().unwrap().to_owned()
}

/// The CPUs this test may run on, as the kernel lists them (`0-1`).
fn own_cpus() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_owned()
}

fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// An Even Steven tournament of `games` games between telling bots, with
/// `args`: the run, and the CPUs each bot said it may use.
fn tournament(games: u64, args: &[&str]) -> (common::Run, Vec<String>) {
    let (dir, log) = temp_path("cpus.txt");
    let bot = telling_bot(dir.path(), &log, env!("CARGO_BIN_EXE_evensteven"));
    let file = tournament_file(dir.path(), &bot, games);
    let out = dir.path().join("out");
    let mut all = vec![
        "tournament",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    all.push(&file);
    let run = referee(all, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    (run, read_lines(&log))
}

#[test]
fn pinned_jobs_start_their_bots_on_one_cpu_each() {
    let (run, cpus) = tournament(12, &["--pin", "--jobs", "2"]);
    assert_lacks(&run.stderr, "cannot pin");
    assert_eq!(cpus.len(), 24, "two bots a game: {cpus:?}");
    for cpu in &cpus {
        assert!(
            cpu.parse::<usize>().is_ok(),
            "a bot of a pinned job may run on {cpu}"
        );
    }
    if cpu_count() >= 2 {
        let mut distinct = cpus.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 2, "two jobs, two CPUs: {cpus:?}");
    }
}

#[test]
fn without_pin_bots_may_run_on_every_cpu() {
    let (_, cpus) = tournament(2, &[]);
    let own = own_cpus();
    assert!(cpus.iter().all(|c| *c == own), "{cpus:?}");
}

/// Under `taskset -c 1`, `--pin` keeps to CPU 1: a job is bound to a CPU
/// of those the referee was given, not to CPU 0 of the machine.
#[test]
fn pin_keeps_to_the_cpus_the_referee_was_given() {
    if cpu_count() < 2 || Command::new("taskset").arg("-V").output().is_err() {
        eprintln!("skipped: needs two CPUs and taskset (util-linux)");
        return;
    }
    let (dir, log) = temp_path("cpus.txt");
    let bot = telling_bot(dir.path(), &log, env!("CARGO_BIN_EXE_evensteven"));
    let file = tournament_file(dir.path(), &bot, 4);
    let out = dir.path().join("out");
    let run = Command::new("taskset")
        .args(["-c", "1", common::referee_bin()])
        .args(["tournament", "--no-progress", "--pin", "--jobs", "2"])
        .args(["--out", out.to_str().unwrap(), &file])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert_lacks(&stderr, "cannot pin");
    assert!(
        read_lines(&log).iter().all(|cpu| cpu == "1"),
        "{:?}",
        read_lines(&log)
    );
}

/// `referee play --pin` binds the run (its judge and bots) to one CPU.
#[test]
fn play_pins_its_judge_and_bots_to_one_cpu() {
    let (dir, log) = temp_path("cpus.txt");
    let bot = telling_bot(dir.path(), &log, env!("CARGO_BIN_EXE_chess-random"));
    let bot = bot.to_str().unwrap();
    let run = referee_ok([
        "play",
        "--pin",
        "--games",
        "2",
        "--game-option",
        "max_moves=5",
        "--time-control",
        "none",
        "--game-option",
        "movetime=10",
        "chess",
        &format!("a={bot}"),
        &format!("b={bot}"),
    ]);
    let cpus = read_lines(&log);
    assert!(!cpus.is_empty(), "{run:?}");
    let first = cpus[0].clone();
    assert!(first.parse::<usize>().is_ok(), "{cpus:?}");
    assert!(cpus.iter().all(|c| *c == first), "{cpus:?}");
}
