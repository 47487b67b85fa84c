//! The measurements of `docs/PERFORMANCE.md`.
//!
//! ```text
//! cargo bench --bench perf                       # every section
//! cargo bench --bench perf -- roundtrip scale    # some of them
//! ```
//!
//! Sections: `roundtrip`, `deadline`, `scale`, `tournament`, `engines`,
//! `results`, `judge`, `starts`, `cgroups`, `league`, `league-workers`,
//! `matchmaking`.
//! Each figure is repeated and reported as min / median / max. Nothing here
//! is a test: the numbers depend on the machine and on what else it runs,
//! so run it on an otherwise idle machine.
//!
//! This one program also plays the bots the measurements need (chosen by
//! the `PERF_ROLE` environment variable), so that `cargo bench` builds
//! everything: the child of the pipe baseline, a Chomp bot that answers at
//! once (or after a fixed delay), and an Even Steven player that answers
//! after a fixed delay.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/common/pg_bin.rs"]
mod pg_bin;

use referee::games::acesup::{deck, engine};
use referee::games::evensteven::{Card, strategy};

const REFEREE: &str = env!("CARGO_BIN_EXE_referee");
const LAUNCHER: &str = env!("CARGO_BIN_EXE_referee-launch");
const EVENSTEVEN: &str = env!("CARGO_BIN_EXE_evensteven");
const SEPTICA: &str = env!("CARGO_BIN_EXE_septica");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const SMALL_ARRAY: &str = "ABCDEFGHIJ\nKLMNOPQRST\nUVWXYZTHIS\nISNOTATEST\nITISASQUID\n";

fn main() {
    match std::env::var("PERF_ROLE").as_deref() {
        Ok("pingpong-child") => return pingpong_child(),
        Ok("instant-chomp") => return instant_chomp(),
        Ok("sleepy-player") => return sleepy_player(),
        Ok("starts") => return starts_child(),
        _ => {}
    }
    // `cargo bench` passes `--bench`; section names are the other words.
    let mut sections: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if sections.is_empty() {
        sections = [
            "roundtrip",
            "deadline",
            "scale",
            "tournament",
            "engines",
            "results",
            "judge",
            "starts",
            "cgroups",
            "league",
            "league-workers",
            "matchmaking",
        ]
        .map(String::from)
        .to_vec();
    }
    println!("# {}", machine());
    for section in &sections {
        let before = cpu_times();
        match section.as_str() {
            "roundtrip" => roundtrip(7),
            "deadline" => deadline(),
            "scale" => scale(3),
            "tournament" => tournament(3),
            "engines" => engines(200),
            "results" => results(11),
            "judge" => judge(5),
            "starts" => starts(3),
            "cgroups" => cgroups(7),
            "league" => league(9),
            "league-workers" => league_workers(3),
            "matchmaking" => matchmaking(9),
            other => {
                eprintln!("perf: unknown section {other:?}");
                std::process::exit(2);
            }
        }
        // On a virtual machine the host may take CPU time away ("steal"):
        // the figures of a section with much of it are not comparable.
        if let (Some((steal0, all0)), Some((steal1, all1))) = (before, cpu_times()) {
            let share = (steal1 - steal0) as f64 / (all1 - all0).max(1) as f64;
            println!(
                "- (CPU time stolen by the host during this section: {:.0}%)",
                share * 100.0
            );
        }
        std::io::stdout().flush().unwrap();
    }
}

/// The machine's stolen and total CPU time so far, in ticks (/proc/stat).
fn cpu_times() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    Some((*ticks.get(7)?, ticks.iter().take(8).sum()))
}

/// The date, CPU model, CPU count and kernel, for the write-up.
fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("{date}, {model}, {cpus} CPUs, Linux {}", kernel.trim())
}

// ---- running things ------------------------------------------------------

/// Runs `program args` with standard input from `stdin` (a file: a pipe
/// from here would pace the referee's reads), optionally pinned to CPU 0
/// with `taskset`; returns the wall time and the output.
fn run(program: &str, args: &[&str], stdin: Option<&Path>, pin: bool) -> (Duration, Output) {
    run_with(program, args, stdin, pin, &[])
}

fn run_with(
    program: &str,
    args: &[&str],
    stdin: Option<&Path>,
    pin: bool,
    env: &[(&str, &str)],
) -> (Duration, Output) {
    let mut cmd = if pin {
        let mut c = Command::new("taskset");
        c.args(["-c", "0", program]);
        c
    } else {
        Command::new(program)
    };
    cmd.args(args).envs(env.iter().copied());
    cmd.stdin(match stdin {
        Some(path) => Stdio::from(std::fs::File::open(path).expect("input file")),
        None => Stdio::null(),
    });
    let started = Instant::now();
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    (started.elapsed(), output)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The number after `key` in `text` (`moves=172282` → 172282).
fn number_after(text: &str, key: &str) -> Option<u64> {
    let rest = &text[text.find(key)? + key.len()..];
    let digits: String = rest
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// "min / median / max" of `values`, each with `decimals` decimals.
fn mmm(values: &[f64], decimals: usize) -> String {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    format!(
        "{:.*} / {:.*} / {:.*}",
        decimals,
        v[0],
        decimals,
        median(&v),
        decimals,
        v[v.len() - 1]
    )
}

/// Each of `xs` divided by the value of `base` in the same place: a run
/// compared with the baseline run beside it.
fn ratios(xs: &[f64], base: &[f64]) -> Vec<f64> {
    xs.iter().zip(base).map(|(x, b)| x / b).collect()
}

/// `xs` ("min / median / max") and their ratios to (a), `base`, with
/// `decimals` decimals.
fn against(xs: &[f64], base: &[f64], decimals: usize) -> String {
    format!(
        "{}; ratio to (a): {}",
        mmm(xs, 0),
        mmm(&ratios(xs, base), decimals)
    )
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A directory holding a `pc2` that runs this program as an instant
/// Chomp bot.
fn instant_chomp_dir(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let me = std::env::current_exe().unwrap();
    let pc2 = dir.join("pc2");
    std::fs::write(
        &pc2,
        format!(
            "#!/bin/sh\nPERF_ROLE=instant-chomp exec '{}'\n",
            me.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&pc2, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    dir
}

/// Times `referee chomp` with `bots` on `array` for `rounds` rounds from
/// cell (1, 1), with no preparation time.
fn chomp_rounds(array: &Path, bots: &[PathBuf], rounds: u64, pin: bool) -> Duration {
    let rounds = rounds.to_string();
    let mut args = vec![
        "--no-fsync",
        "chomp",
        "--prep",
        "0s",
        "--start",
        "1",
        "1",
        "--max-rounds",
        &rounds,
        array.to_str().unwrap(),
    ];
    args.extend(bots.iter().map(|b| b.to_str().unwrap()));
    let (t, out) = run(REFEREE, &args, None, pin);
    assert!(out.status.success(), "{}", stderr(&out));
    t
}

// ---- sections -------------------------------------------------------------

/// Benchmark 1: one short line each way, three ways.
fn roundtrip(reps: usize) {
    println!("## Move round trip (moves per second, min / median / max of {reps} runs)");
    let tmp = tempfile::tempdir().unwrap();
    let deals = tmp.path().join("deals.txt");
    let games = 20_000;
    let text: String = (1..=games).map(|s| format!("13 {s}\n")).collect();
    std::fs::write(&deals, text).unwrap();
    let array = tmp.path().join("a.txt");
    std::fs::write(&array, SMALL_ARRAY).unwrap();
    let bots = [
        instant_chomp_dir(tmp.path(), "p1"),
        instant_chomp_dir(tmp.path(), "p2"),
    ];
    let me = std::env::current_exe().unwrap();
    let me = me.to_str().unwrap();
    let rounds = 50_000u64;
    for pin in [false, true] {
        let (mut base, mut dealer, mut chomp) = (vec![], vec![], vec![]);
        for _ in 0..reps {
            base.push(pingpong(200_000, pin, me));
            let (t, out) = run(
                REFEREE,
                &["--no-fsync", "--log", "info", "dealer", EVENSTEVEN],
                Some(&deals),
                pin,
            );
            let moves = number_after(&stderr(&out), "moves=").expect("the dealer's summary");
            dealer.push(moves as f64 / t.as_secs_f64());
            let t = chomp_rounds(&array, &bots, rounds, pin);
            chomp.push(2.0 * rounds as f64 / t.as_secs_f64());
        }
        let label = if pin {
            "referee and bot pinned to one CPU"
        } else {
            "free to run on any CPU"
        };
        // Each run's ratio to the baseline run just before it: the host's
        // load drifts, and neighbouring runs see the same machine.
        println!("- {label}:");
        println!("  - (a) pipes, baseline: {}", mmm(&base, 0));
        println!("  - (b) referee dealer:  {}", against(&dealer, &base, 2));
        println!("  - (c) referee chomp:   {}", against(&chomp, &base, 2));
    }
}

/// Benchmark 6: what a results file costs the dealer: 3,000 13-card games
/// without `--results`, with it (records written at once, fsync batched)
/// and with `--no-fsync`, in alternation so that all three see the same
/// machine, the referee and its bot pinned to one CPU (as an engine
/// author's CI runner often is: every microsecond of the referee's is
/// then taken from the game). The file is on the temporary directory's
/// file system.
fn results(reps: usize) {
    println!("## Results file cost (dealer moves per second, min / median / max of {reps} runs)");
    let tmp = tempfile::tempdir().unwrap();
    let deals = tmp.path().join("deals.txt");
    let text: String = (1..=3_000).map(|s| format!("13 {s}\n")).collect();
    std::fs::write(&deals, text).unwrap();
    let file = tmp.path().join("r.jsonl");
    let file = file.to_str().unwrap();
    // (label, options before `dealer`, options after it)
    let ways: [(&str, &[&str], &[&str]); 3] = [
        ("no results file", &[], &[]),
        ("--results (fsync batched)", &[], &["--results", file]),
        (
            "--results --no-fsync",
            &["--no-fsync"],
            &["--results", file],
        ),
    ];
    let mut rates = vec![vec![]; ways.len()];
    for _ in 0..reps {
        for ((_, global, dealer), rates) in ways.iter().zip(&mut rates) {
            let _ = std::fs::remove_file(file);
            let mut args = vec!["--log", "info"];
            args.extend_from_slice(global);
            args.push("dealer");
            args.extend_from_slice(dealer);
            args.push(EVENSTEVEN);
            let (t, out) = run(REFEREE, &args, Some(&deals), true);
            let moves = number_after(&stderr(&out), "moves=").expect("the dealer's summary");
            rates.push(moves as f64 / t.as_secs_f64());
        }
    }
    let base = rates[0].clone();
    for ((label, _, _), rates) in ways.iter().zip(&rates) {
        println!(
            "- {label}: {}; ratio to no file: {}",
            mmm(rates, 0),
            mmm(&ratios(rates, &base), 2)
        );
    }
}

/// Benchmark 7: the same Even Steven games through `referee dealer` and
/// through `referee play` with the compiled judge
/// (`games/evensteven/game-compiled.toml`: one judge process and one kept
/// player process for the run), in alternation; for comparison, the Python
/// judge, and the compiled judge with a fresh player process per game (the
/// game file without `keep_players`, as before it existed).
fn judge(reps: usize) {
    const GAMES: usize = 10_000;
    /// Fewer games for the fresh-player way, which starts a process each.
    const FRESH_GAMES: usize = 1_000;
    const SEED: &str = "2026";
    println!(
        "## External judge (Even Steven, {GAMES} games, reference player, moves per second, \
         min / median / max of {reps} runs)"
    );
    let compiled = Path::new(ROOT).join("games/evensteven/game-compiled.toml");
    let python = Path::new(ROOT).join("games/evensteven/game.toml");
    let judge_bin = Path::new(ROOT).join("target/release/evensteven-judge");
    assert!(
        judge_bin.is_file(),
        "{} is missing: cargo build --release --bin evensteven-judge",
        judge_bin.display()
    );
    let tmp = tempfile::tempdir().unwrap();
    // The compiled judge's game file without `keep_players`, naming the
    // judge by its absolute path.
    let fresh = tmp.path().join("fresh.toml");
    let text = std::fs::read_to_string(&compiled).unwrap();
    let text = text.replace("keep_players = true\n", "").replace(
        "\"../../target/release/evensteven-judge\"",
        &format!("{judge_bin:?}"),
    );
    assert!(!text.contains("keep_players") && !text.contains("../../"));
    std::fs::write(&fresh, text).unwrap();
    // One run with records gives the games' (N, seed) pairs for the dealer,
    // and the moves: each game's first reply is its `startup_micros`.
    let records = tmp.path().join("r.jsonl");
    let play = |game: &Path, games: usize, results: Option<&Path>| {
        let games = games.to_string();
        let mut args = vec!["--no-fsync", "play", "--games", &games, "--seed", SEED];
        if let Some(r) = results {
            args.extend(["--results", r.to_str().unwrap()]);
        }
        args.extend([game.to_str().unwrap(), EVENSTEVEN]);
        let (t, out) = run(REFEREE, &args, None, false);
        assert!(out.status.success(), "{}", stderr(&out));
        t
    };
    play(&compiled, GAMES, Some(&records));
    let mut deals = String::new();
    let (mut moves, mut fresh_moves) = (0usize, 0usize);
    for (i, line) in std::fs::read_to_string(&records)
        .unwrap()
        .lines()
        .enumerate()
    {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        deals.push_str(&format!("{} {}\n", r["summary"]["n"], r["summary"]["seed"]));
        let player = &r["players"][0];
        let m = player["micros"].as_array().map_or(0, Vec::len)
            + usize::from(player["startup_micros"].is_u64());
        moves += m;
        if i < FRESH_GAMES {
            fresh_moves += m;
        }
    }
    let deals_file = tmp.path().join("deals.txt");
    std::fs::write(&deals_file, deals).unwrap();
    let (mut dealer, mut external, mut interpreted, mut spawning) =
        (vec![], vec![], vec![], vec![]);
    for _ in 0..reps {
        let (t, out) = run(
            REFEREE,
            &["--no-fsync", "dealer", EVENSTEVEN],
            Some(&deals_file),
            false,
        );
        assert!(out.status.success(), "{}", stderr(&out));
        dealer.push(moves as f64 / t.as_secs_f64());
        external.push(moves as f64 / play(&compiled, GAMES, None).as_secs_f64());
        interpreted.push(moves as f64 / play(&python, GAMES, None).as_secs_f64());
        spawning.push(fresh_moves as f64 / play(&fresh, FRESH_GAMES, None).as_secs_f64());
    }
    println!("- {GAMES} games (N from 1 to 13, seed {SEED}), {moves} moves");
    println!(
        "- (a) referee dealer, the same games:        {}",
        mmm(&dealer, 0)
    );
    println!(
        "- (b) referee play, compiled judge:           {}",
        against(&external, &dealer, 3)
    );
    println!(
        "- (c) referee play, Python judge:             {}",
        against(&interpreted, &dealer, 3)
    );
    println!(
        "- (d) (b) with a fresh player per game (the first {FRESH_GAMES} games, {fresh_moves} moves): \
         {}",
        against(&spawning, &dealer, 3)
    );
}

/// The baseline: this program and a child of itself exchange `moves`
/// short lines over blocking pipes. Returns moves per second.
fn pingpong(moves: u64, pin: bool, me: &str) -> f64 {
    // Pinned before the spawn, so that the child inherits the CPU.
    let _restore = pin.then(pin_self_to_cpu0);
    let mut child = Command::new(me)
        .env("PERF_ROLE", "pingpong-child")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = child.stdin.take().unwrap();
    let mut from = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let started = Instant::now();
    for _ in 0..moves {
        to.write_all(b"8c\n").unwrap();
        to.flush().unwrap();
        line.clear();
        from.read_line(&mut line).unwrap();
    }
    let elapsed = started.elapsed();
    drop(to);
    child.wait().unwrap();
    moves as f64 / elapsed.as_secs_f64()
}

/// Pins this process to CPU 0; the returned guard restores the old mask.
fn pin_self_to_cpu0() -> impl Drop {
    struct Restore(nix::sched::CpuSet);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &self.0);
        }
    }
    let me = nix::unistd::Pid::from_raw(0);
    let old = nix::sched::sched_getaffinity(me).unwrap();
    let mut cpu0 = nix::sched::CpuSet::new();
    cpu0.set(0).unwrap();
    nix::sched::sched_setaffinity(me, &cpu0).unwrap();
    Restore(old)
}

/// Benchmark 2: a player that answers 5 ms before or after its budget,
/// with both CPUs kept busy.
fn deadline() {
    println!("## Deadline accuracy (both CPUs kept busy by two spinning processes)");
    let _load = Spinners::start(2);
    let me = std::env::current_exe().unwrap();
    let me = me.to_str().unwrap();
    for (budget_ms, runs) in [(200u64, 30usize), (2000, 8)] {
        for delta in [-5i64, 5] {
            let delay = format!("{}ms", budget_ms as i64 + delta);
            let budget = format!("{budget_ms}ms");
            let tmp = tempfile::tempdir().unwrap();
            let results = tmp.path().join("r.jsonl");
            let deals = tmp.path().join("deals.txt");
            let referee = |games: std::ops::Range<usize>| {
                // Two cards a hand: the second move is the one timed.
                let text: String = games.map(|g| format!("2 {}\n", g + 1)).collect();
                std::fs::write(&deals, text).unwrap();
                let (_, out) = run_with(
                    REFEREE,
                    &[
                        "--no-fsync",
                        "dealer",
                        // Bots get a short environment: the role is passed on.
                        "--env",
                        "PERF_ROLE",
                        "--timeout",
                        &budget,
                        "--results",
                        results.to_str().unwrap(),
                        me,
                        &delay,
                    ],
                    Some(&deals),
                    false,
                    &[("PERF_ROLE", "sleepy-player")],
                );
                out.status.code()
            };
            let mut errors = vec![];
            let timeouts = if delta < 0 {
                // One referee run, one timed move per game: every one must pass.
                let status = referee(0..runs);
                assert!(matches!(status, Some(0 | 3)), "{status:?}");
                let records: Vec<serde_json::Value> = std::fs::read_to_string(&results)
                    .unwrap()
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                // The bot reports its own time after answering, so its line
                // may land in the next game's stderr: pair them in order.
                let stderr: String = records
                    .iter()
                    .filter_map(|r| r["stderr"].as_str())
                    .collect();
                let own = stderr
                    .lines()
                    .filter_map(|l| l.strip_prefix("own ")?.parse::<f64>().ok());
                let micros = records
                    .iter()
                    .filter_map(|r| r["plays"][1]["micros"].as_f64());
                errors = micros.zip(own).map(|(m, o)| m - o).collect();
                let failed = records
                    .iter()
                    .filter(|r| r["outcome"] == "incorrect_output" || r.get("error").is_some())
                    .count();
                failed + runs - records.len()
            } else {
                // A timeout ends the run: one run per trial.
                (0..runs).filter(|&i| referee(i..i + 1) == Some(3)).count()
            };
            print!("- budget {budget_ms} ms, answer at {delay}: {timeouts} of {runs} timed out");
            if errors.is_empty() {
                println!();
            } else {
                println!(
                    "; referee's time minus the bot's own, min / median / max: {} us (n = {})",
                    mmm(&errors, 0),
                    errors.len()
                );
            }
        }
    }
}

/// Busy loops that keep CPUs busy while they live, stopped however the
/// section ends (a failed assertion included).
struct Spinners(Vec<std::process::Child>);

impl Spinners {
    fn start(n: usize) -> Spinners {
        let spin = || {
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .unwrap()
        };
        Spinners((0..n).map(|_| spin()).collect())
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Benchmark 3: Chomp round time against K and the array's size.
fn scale(reps: usize) {
    println!(
        "## Chomp round time (instant bots, microseconds per round, min / median / max of {reps} runs)"
    );
    let tmp = tempfile::tempdir().unwrap();
    let small = tmp.path().join("small.txt");
    std::fs::write(&small, SMALL_ARRAY).unwrap();
    let big = Path::new(ROOT).join("tournaments/chomp/200x100.txt");
    let bot = instant_chomp_dir(tmp.path(), "bot");
    for k in [2usize, 8, 32, 64] {
        let rounds = 20_000 / k as u64;
        let bots = vec![bot.clone(); k];
        let mut line = vec![];
        for (name, array) in [("10x5", &small), ("200x100", &big)] {
            let mut times = vec![];
            for _ in 0..reps {
                let t = chomp_rounds(array, &bots, rounds, false);
                times.push(t.as_secs_f64() * 1e6 / rounds as f64);
            }
            line.push(format!("{name}: {}", mmm(&times, 0)));
        }
        println!("- K = {k}: {}", line.join("; "));
    }
}

/// Benchmark 4: games per second with one and two jobs, and the referee's
/// peak memory with 64 bots.
fn tournament(reps: usize) {
    println!("## Tournament throughput (Even Steven, 2 entrants, 400 games, games per second)");
    let spec = Path::new(ROOT).join("tournaments/evensteven.toml");
    let mut rates = vec![];
    for (jobs, pin) in [("1", false), ("2", false), ("2", true)] {
        let mut values = vec![];
        for _ in 0..reps {
            let mut args = vec![
                "--no-fsync",
                "tournament",
                "--no-progress",
                spec.to_str().unwrap(),
                "--games",
                "400",
                "--jobs",
                jobs,
            ];
            if pin {
                args.push("--pin");
            }
            let (t, out) = run(REFEREE, &args, None, false);
            assert!(out.status.success(), "{}", stderr(&out));
            values.push(400.0 / t.as_secs_f64());
        }
        let pinned = if pin { " --pin" } else { "" };
        println!("- --jobs {jobs}{pinned}: {}", mmm(&values, 1));
        rates.push(median(&values));
    }
    println!(
        "- speed-up of --jobs 2 over --jobs 1: {:.2} (with --pin: {:.2})",
        rates[1] / rates[0],
        rates[2] / rates[0]
    );
    let tmp = tempfile::tempdir().unwrap();
    let bot = instant_chomp_dir(tmp.path(), "bot");
    let big = Path::new(ROOT).join("tournaments/chomp/200x100.txt");
    let mut args = vec![
        "-f",
        "%M",
        REFEREE,
        "--no-fsync",
        "chomp",
        "--prep",
        "0s",
        "--max-rounds",
        "1000",
        big.to_str().unwrap(),
    ];
    args.extend(std::iter::repeat_n(bot.to_str().unwrap(), 64));
    let (_, out) = run("/usr/bin/time", &args, None, false);
    let text = stderr(&out);
    let kb = text.split_whitespace().last().unwrap_or("?");
    println!("- peak memory (max RSS) of the referee with 64 bots on 200x100: {kb} KB");
}

/// The cost of kernel containment: a tournament of the reference Even
/// Steven bot (a bot started, contained and removed per game), in games
/// per second with each bot in a cgroup of its own (and, as root, its own
/// IPC namespace and /dev/shm) and with `--no-cgroups`, runs interleaved
/// in pairs; the ratio of the medians and the median of the paired ratios.
fn cgroups(reps: usize) {
    const GAMES: usize = 400;
    println!(
        "## Kernel containment (Even Steven tournament, {GAMES} games, --jobs 1, games per second, \
         {reps} interleaved pairs)"
    );
    let spec = Path::new(ROOT).join("tournaments/evensteven.toml");
    let games = GAMES.to_string();
    let rate = |extra: &[&str]| {
        let mut args = vec!["--no-fsync"];
        args.extend_from_slice(extra);
        args.extend([
            "tournament",
            "--no-progress",
            spec.to_str().unwrap(),
            "--games",
            &games,
            "--jobs",
            "1",
        ]);
        let (t, out) = run(REFEREE, &args, None, false);
        assert!(out.status.success(), "{}", stderr(&out));
        GAMES as f64 / t.as_secs_f64()
    };
    let (mut with, mut without, mut ratios) = (vec![], vec![], vec![]);
    for _ in 0..reps {
        let contained = rate(&[]);
        let watched = rate(&["--no-cgroups"]);
        ratios.push(contained / watched);
        with.push(contained);
        without.push(watched);
    }
    print_pairs(
        ("a cgroup per bot", &with),
        ("--no-cgroups (the memory watch)", &without),
        "with / without",
        &ratios,
    );
}

/// Two ways measured in interleaved pairs: each one's rates, and how they
/// compare (`ratios`: the first over the second, pair by pair).
fn print_pairs(a: (&str, &[f64]), b: (&str, &[f64]), compared: &str, ratios: &[f64]) {
    println!("- {}: {}", a.0, mmm(a.1, 1));
    println!("- {}: {}", b.0, mmm(b.1, 1));
    println!(
        "- {compared}: {:.3} (ratio of medians), {:.3} (median of paired ratios)",
        median(a.1) / median(b.1),
        median(ratios)
    );
}

/// Bot starts per second by the referee's size: the bot layer starts
/// `/bin/true` over and over in a process that holds `ballast` MB (what a
/// referee holds after many games), through `referee-launch` (how the
/// referee starts bots), through the referee's own binary (where
/// `referee-launch` is not beside it), and by forking (how it used to).
fn starts(reps: usize) {
    const STARTS: usize = 400;
    println!(
        "## Bot starts per second ({STARTS} starts of /bin/true, min / median / max of {reps} runs)"
    );
    for ballast in [0usize, 256, 1024] {
        let mut line = vec![];
        for how in ["referee-launch", "referee", "fork"] {
            let mut rates = vec![];
            for _ in 0..reps {
                let out = Command::new(std::env::current_exe().unwrap())
                    .env("PERF_ROLE", "starts")
                    .args([ballast.to_string(), how.to_owned(), STARTS.to_string()])
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{}", stderr(&out));
                let secs: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
                rates.push(STARTS as f64 / secs);
            }
            line.push(format!("{how}: {}", mmm(&rates, 0)));
        }
        println!("- referee holding {ballast} MB: {}", line.join("; "));
    }
}

/// The process `starts` measures: `BALLAST_MB HOW COUNT`; prints seconds.
fn starts_child() {
    use referee::bot::{Bot, BotLimits, BotSpec};
    let args: Vec<String> = std::env::args().skip(1).collect();
    let megabytes: usize = args[0].parse().unwrap();
    let count: usize = args[2].parse().unwrap();
    // Touched, so that its pages are mapped, as a grown heap's are.
    let ballast = vec![1u8; megabytes << 20];
    match args[1].as_str() {
        "referee-launch" => referee::bot::use_launcher(PathBuf::from(LAUNCHER)),
        "referee" => referee::bot::use_launcher(PathBuf::from(REFEREE)),
        _ => {}
    }
    let spec = BotSpec {
        program: "/bin/true".into(),
        args: vec![],
        dir: None,
        hide: vec![],
        env: Default::default(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    runtime.block_on(async {
        for _ in 0..count {
            let mut bot = Bot::spawn(&spec, BotLimits::default()).unwrap();
            let deadline = referee::bot::deadline_after(Duration::from_secs(5));
            bot.wait_exit(deadline).await.unwrap();
        }
    });
    println!("{}", started.elapsed().as_secs_f64());
    std::hint::black_box(&ballast);
}

/// Benchmark 5: the rules engines on their own.
fn engines(matches: usize) {
    println!("## Engines");
    let decks = 100_000u64;
    let started = Instant::now();
    let mut games = 0usize;
    for i in 0..decks {
        games += engine::play_rotations(&deck::random_deck(1, i)).len();
    }
    let t = started.elapsed().as_secs_f64();
    println!(
        "- Aces Up engine: {decks} decks ({games} games, with rotations) in {t:.2} s: {:.0} games/s",
        games as f64 / t
    );
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("s.jsonl");
    let n = matches.to_string();
    let (_, out) = run(
        REFEREE,
        &[
            "--no-fsync",
            "septica",
            "--seed",
            "77",
            "--matches",
            &n,
            "--need",
            "0",
            "--results",
            results.to_str().unwrap(),
            SEPTICA,
        ],
        None,
        false,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let mut micros: Vec<u64> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .flat_map(|l| {
            let r: serde_json::Value = serde_json::from_str(l).unwrap();
            r["micros"]
                .as_array()
                .map(|a| a.iter().filter_map(|m| m.as_u64()).collect::<Vec<_>>())
                .unwrap_or_default()
        })
        .collect();
    micros.sort_unstable();
    let q =
        |f: f64| micros[((f * micros.len() as f64) as usize).min(micros.len() - 1)] as f64 / 1e3;
    println!(
        "- Septica reference player, {matches} matches (seed 77), {} moves, time per move as the \
         referee measures it: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        micros.len(),
        q(0.5),
        q(0.99),
        q(1.0)
    );
}

// ---- the bots ---------------------------------------------------------------

/// The baseline's child: answers every line with a line.
fn pingpong_child() {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let mut line = String::new();
    while input.read_line(&mut line).unwrap_or(0) > 0 {
        if out.write_all(b"Jc\n").and_then(|()| out.flush()).is_err() {
            return;
        }
        line.clear();
    }
}

/// A Chomp bot that answers every update at once with `C`: the referee's
/// own cost per round is then all there is. Given a duration (`20ms`), it
/// waits that long before each answer instead, thinking without using a
/// CPU.
fn instant_chomp() {
    let delay: Duration = std::env::args()
        .nth(1)
        .and_then(|d| humantime::parse_duration(&d).ok())
        .unwrap_or(Duration::ZERO);
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let mut line = String::new();
    let mut read = |line: &mut String| {
        line.clear();
        input.read_line(line).unwrap_or(0) > 0
    };
    // "P K" then "M N": the second number of each line.
    let second = |line: &str| line.split_whitespace().nth(1)?.parse::<usize>().ok();
    if !read(&mut line) {
        return;
    }
    let k = second(&line).unwrap_or(1);
    if !read(&mut line) {
        return;
    }
    let rows = second(&line).unwrap_or(0);
    for _ in 0..rows {
        read(&mut line);
    }
    'game: loop {
        for _ in 0..k {
            if !read(&mut line) {
                break 'game;
            }
        }
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        if out.write_all(b"C").and_then(|()| out.flush()).is_err() {
            break;
        }
    }
}

/// An Even Steven player that answers each dealt card after a fixed delay
/// (its argument, e.g. `195ms`), and writes on stderr how long that took
/// by its own clock, from reading the card to writing the answer.
fn sleepy_player() {
    let delay: Duration = std::env::args()
        .nth(1)
        .and_then(|d| humantime::parse_duration(&d).ok())
        .unwrap_or(Duration::ZERO);
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut hand: Vec<Card> = Vec::new();
    let mut timed = false;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let read_at = Instant::now();
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            ["YOU", ..] | [] => hand.clear(),
            [_, cards @ ..] if !cards.is_empty() => {
                hand = cards.iter().filter_map(|c| Card::parse(c).ok()).collect();
                timed = false;
            }
            [card] => {
                let Ok(dealt) = Card::parse(card) else {
                    continue;
                };
                let i = strategy::choose(&hand, dealt).unwrap_or(0);
                let played = hand.remove(i);
                // A game's first move has the start-up allowance on top
                // of its limit: it is answered at once, the next one late.
                let first = !timed;
                timed = true;
                let wake = read_at + if first { Duration::ZERO } else { delay };
                // Sleep most of the way, then spin: a plain sleep may
                // overshoot by a scheduler tick.
                if let Some(rest) = wake.checked_duration_since(Instant::now()) {
                    std::thread::sleep(rest.saturating_sub(Duration::from_millis(2)));
                }
                while Instant::now() < wake {}
                // Measured before the answer is written: once it is, the
                // referee may take the CPU before this process reads the
                // clock again.
                let own = read_at.elapsed();
                if writeln!(out, "{played}")
                    .and_then(|()| out.flush())
                    .is_err()
                {
                    return;
                }
                if !first {
                    eprintln!("own {}", own.as_micros());
                }
            }
            _ => {}
        }
    }
}

// ---- league -----------------------------------------------------------------

/// A league file (or, with `games`, a tournament file) in `dir` of the duel
/// fixture between `entrants` named entrants, each `weak.sh` or
/// `strong.sh` in turn.
fn duel_file(dir: &Path, name: &str, entrants: usize, games: Option<usize>) -> PathBuf {
    let duel = Path::new(ROOT).join("tests/fixtures/duel");
    let mut text = format!(
        "game = \"{}\"\nseed = 1\n[limits]\nseats = 2\n",
        duel.join("game.toml").display()
    );
    if let Some(games) = games {
        text = format!("games = {games}\n{text}");
    }
    for i in 0..entrants {
        let bot = if i % 3 == 1 { "strong" } else { "weak" };
        text += &format!(
            "[[entrant]]\nname = \"e{i}\"\ncommand = [\"{}\"]\n",
            duel.join(format!("{bot}.sh")).display()
        );
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A league against a tournament on the same entrants and limits (games
/// per second, interleaved); `/api/standings` with 100,000 games and 200
/// entrants in the database; the league's peak memory by the games it
/// has played.
fn league(reps: usize) {
    const GAMES: usize = 400;
    println!(
        "## League (duel fixture, 3 entrants, {GAMES} games, --jobs 1, --no-fsync, every game kept \
         with its moves (the tournament: --out, --record-moves), games per second, {reps} \
         interleaved pairs)"
    );
    let dir = tempfile::tempdir().unwrap();
    let tournament = duel_file(dir.path(), "t.toml", 3, Some(GAMES));
    let league_file = duel_file(dir.path(), "l.toml", 3, None);
    let games = GAMES.to_string();
    let (mut t_rates, mut l_rates, mut ratios) = (vec![], vec![], vec![]);
    for rep in 0..reps {
        let t_rate = one_job_tournament_rate(&tournament, GAMES);
        let db = dir.path().join(format!("rate{rep}.db"));
        let (t, out) = league_run(&league_file, &db, &["--games", &games, "--jobs", "1"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let l_rate = GAMES as f64 / t.as_secs_f64();
        ratios.push(l_rate / t_rate);
        t_rates.push(t_rate);
        l_rates.push(l_rate);
    }
    print_pairs(
        ("referee league run", &l_rates),
        ("referee tournament", &t_rates),
        "league / tournament",
        &ratios,
    );
    league_standings(dir.path());
    league_memory(dir.path(), &league_file);
}

/// `referee --no-fsync league run FILE --db DB ARGS`.
/// Games a second of the tournament `file` of `games` games, one at a
/// time (`--jobs 1`): what a league's rates are compared with.
fn one_job_tournament_rate(file: &Path, games: usize) -> f64 {
    let (t, out) = run(
        REFEREE,
        &[
            "--no-fsync",
            "tournament",
            "--no-progress",
            file.to_str().unwrap(),
            "--jobs",
            "1",
        ],
        None,
        false,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    games as f64 / t.as_secs_f64()
}

fn league_run(file: &Path, db: &Path, args: &[&str]) -> (Duration, Output) {
    run(
        REFEREE,
        &league_args(file, db.to_str().unwrap(), args),
        None,
        false,
    )
}

/// The arguments of `referee --no-fsync league run FILE --db DB ARGS`, DB
/// a SQLite file or a PostgreSQL URL.
fn league_args<'a>(file: &'a Path, db: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec![
        "--no-fsync",
        "league",
        "run",
        file.to_str().unwrap(),
        "--db",
        db,
    ];
    all.extend_from_slice(args);
    all
}

/// An address of 127.0.0.1 on a port nobody listens on now.
fn free_address() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("127.0.0.1:{port}")
}

/// `/api/standings` of a league whose database holds 100,000 games of 200
/// entrants (played for their versions, then copied to 100,000).
fn league_standings(dir: &Path) {
    const ENTRANTS: usize = 200;
    const GAMES: i64 = 100_000;
    let file = duel_file(dir, "big.toml", ENTRANTS, None);
    let db = dir.join("big.db");
    let (_, out) = league_run(&file, &db, &["--games", "400", "--jobs", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    grow_league(&db, GAMES);
    let address = free_address();
    let started = Instant::now();
    let mut child = Command::new(REFEREE)
        .args(league_args(
            &file,
            db.to_str().unwrap(),
            &["--jobs", "1", "--serve", &address],
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while std::net::TcpStream::connect(&address).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the league never served"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let ready = started.elapsed();
    let mut times = vec![];
    let mut size = 0;
    for _ in 0..50 {
        let asked = Instant::now();
        size = http_get(&address, "/api/standings").len();
        times.push(asked.elapsed().as_secs_f64() * 1000.0);
    }
    let _ = child.kill();
    let _ = child.wait();
    println!(
        "- /api/standings with {GAMES} games and {ENTRANTS} entrants, while the league plays: \
         {} ms (50 requests, {size} bytes); the league served after {:.1} s (its start reads \
         every game)",
        mmm(&times, 1),
        ready.as_secs_f64()
    );
}

/// Copies the league's games until its database holds `games`: the same
/// records, renumbered, between entrants in turn.
fn grow_league(db: &Path, games: i64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let have: i64 = conn
        .query_row("SELECT count(*) FROM games", [], |r| r.get(0))
        .unwrap();
    let tx = conn.unchecked_transaction().unwrap();
    for id in have + 1..=games {
        let from = (id - 1) % have + 1;
        tx.execute(
            "INSERT INTO games (id, round, rotation, finished, record) \
             SELECT ?1, round, rotation, finished, json_set(record, '$.index', ?1) FROM games WHERE id = ?2",
            rusqlite::params![id, from],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO seats (game, seat, version, status) SELECT ?1, seat, version, status \
             FROM seats WHERE game = ?2",
            rusqlite::params![id, from],
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

/// A plain HTTP/1.1 GET's body.
fn http_get(address: &str, path: &str) -> String {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text.split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default()
}

/// The league's peak memory (its maximum resident set) after 2,000 and
/// after 20,000 games, from empty databases.
fn league_memory(dir: &Path, file: &Path) {
    let mut line = vec![];
    for games in [2_000, 20_000] {
        let db = dir.join(format!("memory{games}.db"));
        let count = games.to_string();
        let (_, out) = run(
            "/usr/bin/time",
            &[
                &["-f", "%M", REFEREE][..],
                &league_args(
                    file,
                    db.to_str().unwrap(),
                    &["--games", &count, "--jobs", "2"],
                ),
            ]
            .concat(),
            None,
            false,
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let kib: u64 = stderr(&out)
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or(0);
        line.push(format!("{games} games: {:.1} MB", kib as f64 / 1024.0));
    }
    println!("- the league's peak memory: {}", line.join(", "));
}

// ---- league workers ---------------------------------------------------------

/// A PostgreSQL server of the bench's own, as `tests/common/postgres.rs`
/// starts the tests': Debian's `postgresql`, a cluster in a temporary
/// folder owned by the `postgres` user (`initdb` and `pg_ctl` refuse
/// root), on a free port of 127.0.0.1, trusting its clients there. Unlike
/// the tests' it keeps PostgreSQL's durability (`fsync`, synchronous
/// commits): what a game costs the database is measured as it would be
/// run. Stopped, and its folder removed, when dropped.
struct Postgres {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
}

impl Postgres {
    /// `Err`: why it cannot run here.
    fn start() -> Result<Postgres, String> {
        // /proc/self is its process's effective user's.
        let euid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap());
        if euid != 0 {
            return Err("a PostgreSQL server of the bench's own needs root".into());
        }
        let bin =
            pg_bin::bin_dir().ok_or("no /usr/lib/postgresql/*/bin/initdb (Debian's postgresql)")?;
        let dir = tempfile::Builder::new()
            .prefix("perf-postgres.")
            .tempdir()
            .map_err(|e| e.to_string())?
            .keep();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let server = Postgres { bin, dir, port };
        let chown = Command::new("chown")
            .arg("postgres:postgres")
            .arg(&server.dir)
            .output()
            .map_err(|e| format!("chown: {e}"))?;
        if !chown.status.success() {
            return Err(format!(
                "chown (is there a postgres user?): {}",
                stderr(&chown)
            ));
        }
        let data = server.dir.join("data");
        server.as_postgres(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-A",
                "trust",
                "-U",
                "postgres",
            ],
        )?;
        let conf = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf).map_err(|e| e.to_string())?;
        text += &format!(
            "\nlisten_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{}'\n\
             max_connections = 100\n",
            server.dir.display()
        );
        std::fs::write(&conf, text).map_err(|e| e.to_string())?;
        server.pg_ctl(&["start", "-w", "-t", "60"])?;
        Ok(server)
    }

    fn as_postgres(&self, program: &str, args: &[&str]) -> Result<String, String> {
        let out = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join(program))
            .args(args)
            .output()
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        if !out.status.success() {
            return Err(format!("{program} failed: {}", stderr(&out)));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn pg_ctl(&self, args: &[&str]) -> Result<String, String> {
        let data = self.dir.join("data");
        let log = self.dir.join("log");
        let mut all = vec!["-D", data.to_str().unwrap(), "-l", log.to_str().unwrap()];
        all.extend_from_slice(args);
        self.as_postgres("pg_ctl", &all)
    }

    /// A new, empty database `name`; its URL.
    fn database(&self, name: &str) -> String {
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Runs `sql` in database `name`; what it prints, unaligned.
    fn sql(&self, name: &str, sql: &str) -> String {
        let (port, host) = (self.port.to_string(), self.dir.display().to_string());
        self.as_postgres(
            "psql",
            &[
                "-h",
                &host,
                "-p",
                &port,
                "-d",
                name,
                "-v",
                "ON_ERROR_STOP=1",
                "-AXqt",
                "-c",
                sql,
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["stop", "-m", "immediate", "-w"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A league's database for the workers' runs: a SQLite file, or a database
/// of the bench's PostgreSQL server.
enum LeagueDb<'a> {
    Sqlite(PathBuf),
    Postgres(&'a Postgres, String),
}

impl LeagueDb<'_> {
    /// `--db`'s value.
    fn arg(&self) -> String {
        match self {
            LeagueDb::Sqlite(path) => path.display().to_string(),
            LeagueDb::Postgres(server, name) => {
                format!("postgres://postgres@127.0.0.1:{}/{name}", server.port)
            }
        }
    }

    /// The first column of each row `sql` selects, as text (empty while the
    /// league has not made its tables).
    fn column(&self, sql: &str) -> Vec<String> {
        match self {
            LeagueDb::Sqlite(path) => {
                // Read-only: never makes the file before the league does.
                let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
                let Ok(conn) = rusqlite::Connection::open_with_flags(path, flags) else {
                    return vec![];
                };
                let Ok(mut stmt) = conn.prepare(sql) else {
                    return vec![];
                };
                stmt.query_map([], |r| r.get::<_, rusqlite::types::Value>(0))
                    .map(|rows| {
                        rows.flatten()
                            .map(|v| match v {
                                rusqlite::types::Value::Integer(i) => i.to_string(),
                                rusqlite::types::Value::Text(t) => t,
                                other => format!("{other:?}"),
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            }
            LeagueDb::Postgres(server, name) => {
                let (port, host) = (server.port.to_string(), server.dir.display().to_string());
                server
                    .as_postgres(
                        "psql",
                        &["-h", &host, "-p", &port, "-d", name, "-AXqt", "-c", sql],
                    )
                    .map(|out| out.lines().map(str::to_owned).collect())
                    .unwrap_or_default()
            }
        }
    }
}

/// Children killed and waited for when dropped: no process of a run
/// outlives it, even when the run panics.
struct Children(Vec<std::process::Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A league file of Chomp between `entrants` named entrants, each this
/// program as a Chomp bot that waits `delay` before each of its moves, at
/// tables of two on the statement's array, of exactly `rounds` rounds.
fn chomp_league_file(dir: &Path, name: &str, entrants: usize, delay: &str, rounds: u64) -> PathBuf {
    let bot = dir.join(format!("{name}.sh"));
    std::fs::write(
        &bot,
        format!(
            "#!/bin/sh\nPERF_ROLE=instant-chomp exec '{}' {delay}\n",
            std::env::current_exe().unwrap().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&bot, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut text = format!(
        "game = \"chomp\"\nseed = 1\n[limits]\nseats = 2\nprep = \"0s\"\nmax_rounds = {rounds}\n\
         arrays = \"{ROOT}/tournaments/chomp/statement.txt\"\n"
    );
    for i in 0..entrants {
        text += &format!(
            "[[entrant]]\nname = \"e{i}\"\ncommand = [\"{}\"]\n",
            bot.display()
        );
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// What one run of a coordinator and its workers measured.
struct WorkersRun {
    /// Games a second from the `warm`-th game's commit to the last's.
    rate: f64,
    /// The coordinator's CPU time (user + system) a game, ms.
    coordinator_cpu: f64,
    /// The workers' CPU time a game, ms, their bots' included.
    workers_cpu: f64,
}

/// Runs a coordinator (`--jobs 0`) on `db` until it holds `games` games,
/// played by `workers` workers of `--jobs 1` started once it has dealt
/// its first table.
fn workers_run(
    file: &Path,
    db: &LeagueDb,
    versions: &Path,
    workers: usize,
    games: u64,
) -> WorkersRun {
    let url = db.arg();
    let count = games.to_string();
    // Each process's standard error to a file (a pipe left unread would
    // stop it once full), its CPU time last, as /usr/bin/time writes it.
    let logs = versions.with_extension("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let time = |name: &str, args: &[&str]| {
        let log = logs.join(format!("{name}.log"));
        let child = Command::new("/usr/bin/time")
            .args(["-f", "cpu %U %S", REFEREE])
            .args(args)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        (child, log)
    };
    let versions = versions.to_str().unwrap();
    let (coordinator, coordinator_log) = time(
        "coordinator",
        &league_args(
            file,
            &url,
            &["--versions", versions, "--jobs", "0", "--games", &count],
        ),
    );
    let mut children = Children(vec![coordinator]);
    let mut logs = vec![coordinator_log];
    let read = |log: &Path| std::fs::read_to_string(log).unwrap_or_default();
    let started = Instant::now();
    while db
        .column("SELECT count(*) FROM tables")
        .first()
        .is_none_or(|n| n == "0")
    {
        if let Ok(Some(status)) = children.0[0].try_wait() {
            panic!("the coordinator ended ({status}): {}", read(&logs[0]));
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the coordinator dealt no table: {}",
            read(&logs[0])
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for w in 1..=workers {
        let name = format!("w{w}");
        let (child, log) = time(
            &name,
            &[
                "--no-fsync",
                "league",
                "work",
                "--db",
                &url,
                "--jobs",
                "1",
                "--name",
                &name,
            ],
        );
        children.0.push(child);
        logs.push(log);
    }
    // The coordinator ends with its games, and then each worker.
    let mut cpu = vec![0.0; children.0.len()];
    let mut ended = vec![false; children.0.len()];
    while ended.iter().any(|e| !e) {
        for (i, child) in children.0.iter_mut().enumerate() {
            if ended[i] {
                continue;
            }
            if let Ok(Some(status)) = child.try_wait() {
                let text = read(&logs[i]);
                assert!(status.success(), "{}: {text}", logs[i].display());
                ended[i] = true;
                cpu[i] = text
                    .lines()
                    .rfind(|l| l.starts_with("cpu "))
                    .unwrap_or("cpu 0 0")
                    .split_whitespace()
                    .skip(1)
                    .filter_map(|f| f.parse::<f64>().ok())
                    .sum();
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the league did not finish: {}",
            read(&logs[0])
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let coordinator_cpu = cpu[0];
    let workers_cpu: f64 = cpu[1..].iter().sum();
    let finished: Vec<f64> = db
        .column("SELECT finished FROM games ORDER BY id")
        .iter()
        .map(|t| {
            humantime::parse_rfc3339(t)
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs_f64()
        })
        .collect();
    assert!(
        finished.len() as u64 >= games,
        "{} of {games} games",
        finished.len()
    );
    let warm = (2 * workers).min(finished.len() / 4);
    let rate = (finished.len() - 1 - warm) as f64 / (finished[finished.len() - 1] - finished[warm]);
    let n = finished.len() as f64;
    WorkersRun {
        rate,
        coordinator_cpu: coordinator_cpu * 1000.0 / n,
        workers_cpu: workers_cpu * 1000.0 / n,
    }
}

/// Workers against one coordinator: games a second with 1, 2, 4 and 8
/// workers of bots that wait 20 ms a move; the coordinator's ceiling with
/// instant bots; what committing a game costs the database; the
/// coordinator's start on a database of 1,000,000 games. On SQLite (the
/// workers on this machine) and on PostgreSQL (a server of the bench's
/// own, where it can start one).
fn league_workers(reps: usize) {
    const ROUNDS: u64 = 10;
    println!(
        "## League workers (Chomp at tables of two, {ROUNDS} rounds a game, a coordinator with \
         --jobs 0, workers of --jobs 1, --no-fsync; games a second from the commit of game \
         2 × workers to the last; {reps} runs each)"
    );
    let dir = tempfile::tempdir().unwrap();
    let postgres = Postgres::start();
    let mut backends: Vec<Option<&Postgres>> = vec![None];
    match &postgres {
        Ok(server) => {
            // Can this referee play a league on PostgreSQL?
            let url = server.database("probe");
            let (_, out) = run(REFEREE, &["league", "show", &url], None, false);
            let text = stderr(&out);
            if text.contains("not built") {
                println!("- PostgreSQL: not measured: {}", text.trim());
            } else {
                backends.push(Some(server));
            }
        }
        Err(why) => println!("- PostgreSQL: not measured: {why}"),
    }
    let sleepy = chomp_league_file(dir.path(), "sleepy", 4, "20ms", ROUNDS);
    let instant = chomp_league_file(dir.path(), "instant", 4, "0ms", ROUNDS);
    let mut run_id = 0;
    let mut fresh = |backend| {
        run_id += 1;
        fresh_db(dir.path(), &format!("run{run_id}"), backend)
    };
    // PERF_PARTS (scaling, ceiling, commit, start) and PERF_BACKENDS
    // (sqlite, postgresql) choose some of it: all by default.
    let chosen = |var: &str, what: &str| {
        std::env::var(var).map_or(true, |list| {
            list.split(',').any(|p| p.eq_ignore_ascii_case(what))
        })
    };
    for backend in backends {
        let name = if backend.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        };
        if !chosen("PERF_BACKENDS", name) {
            continue;
        }
        if chosen("PERF_PARTS", "scaling") {
            workers_scaling(name, reps, &mut || fresh(backend), &sleepy);
        }
        if chosen("PERF_PARTS", "ceiling") {
            workers_ceiling(name, reps, &mut || fresh(backend), &instant);
        }
        if chosen("PERF_PARTS", "commit") {
            for durable in [false, true] {
                let (db, _) = fresh(backend);
                commit_cost(name, &db, durable, dir.path(), &instant);
            }
        }
        if chosen("PERF_PARTS", "start") {
            let (db, versions) = fresh(backend);
            coordinator_start(name, &db, &versions, &instant);
        }
    }
}

/// Games a second with 1, 2, 4 and 8 workers of `--jobs 1`.
fn workers_scaling<'a>(
    name: &str,
    reps: usize,
    fresh: &mut dyn FnMut() -> (LeagueDb<'a>, PathBuf),
    sleepy: &Path,
) {
    let mut rates: Vec<Vec<f64>> = vec![vec![]; 4];
    let mut line = vec![];
    for _ in 0..reps {
        for (i, workers) in [1usize, 2, 4, 8].into_iter().enumerate() {
            let (db, versions) = fresh();
            let run = workers_run(sleepy, &db, &versions, workers, 30 * workers as u64 + 20);
            rates[i].push(run.rate);
        }
    }
    let one = median(&rates[0]);
    for (i, workers) in [1usize, 2, 4, 8].into_iter().enumerate() {
        line.push(format!(
            "{workers}: {} ({:.2}× linear)",
            mmm(&rates[i], 1),
            median(&rates[i]) / (one * workers as f64)
        ));
    }
    // The same games on one machine without a database: a tournament of
    // the same file, one game at a time.
    let tournament = sleepy.with_extension("tournament.toml");
    let text = std::fs::read_to_string(sleepy).unwrap();
    std::fs::write(&tournament, format!("games = 60\n{text}")).unwrap();
    let mut alone = vec![];
    for _ in 0..reps {
        alone.push(one_job_tournament_rate(&tournament, 60));
    }
    println!(
        "- {name}, bots waiting 20 ms a move, games a second by workers: {}; a tournament of \
         the same games, --jobs 1: {} (one worker: {:.2}× that)",
        line.join("; "),
        mmm(&alone, 1),
        one / median(&alone)
    );
}

/// The coordinator's ceiling: games a second with instant bots, and the
/// CPU time a game takes the coordinator and the workers.
fn workers_ceiling<'a>(
    name: &str,
    reps: usize,
    fresh: &mut dyn FnMut() -> (LeagueDb<'a>, PathBuf),
    instant: &Path,
) {
    for workers in [4usize, 8] {
        let (mut rate, mut coordinator, mut worker) = (vec![], vec![], vec![]);
        for _ in 0..reps {
            let (db, versions) = fresh();
            let run = workers_run(instant, &db, &versions, workers, 1000);
            rate.push(run.rate);
            coordinator.push(run.coordinator_cpu);
            worker.push(run.workers_cpu);
        }
        println!(
            "- {name}, instant bots, {workers} workers: {} games a second; CPU a game: \
                 the coordinator {} ms, the workers (their bots included) {} ms",
            mmm(&rate, 0),
            mmm(&coordinator, 2),
            mmm(&worker, 2)
        );
    }
}

/// A new league database `name` and its versions' folder, in `dir` or on
/// `server`.
fn fresh_db<'a>(dir: &Path, name: &str, server: Option<&'a Postgres>) -> (LeagueDb<'a>, PathBuf) {
    let versions = dir.join(format!("{name}.versions"));
    // Made here: a league of named commands only copies no version, and
    // its workers refuse a versions' folder that is not there.
    std::fs::create_dir_all(&versions).unwrap();
    let db = match server {
        None => LeagueDb::Sqlite(dir.join(format!("{name}.db"))),
        Some(server) => {
            server.database(name);
            LeagueDb::Postgres(server, name.to_owned())
        }
    };
    (db, versions)
}

/// What committing a game costs the database, timed through the library
/// (`referee::league::db::Db`) as a worker commits: a table dealt, claimed,
/// its two games committed and the table finished, 1,000 times over.
fn commit_cost(name: &str, db: &LeagueDb, durable: bool, dir: &Path, file: &Path) {
    use referee::league::db::{Db, Location, NewTable, NewVersion};
    const TABLES: usize = 500;
    // A real record to commit: a game played by a league of this file.
    let sample = dir.join(format!("sample{}.db", std::process::id()));
    if !sample.exists() {
        let (_, out) = league_run(file, &sample, &["--games", "2", "--jobs", "1"]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let record = Db::read(&Location::File(sample.clone()))
        .and_then(|d| d.games_after(0, 1))
        .unwrap()
        .pop()
        .unwrap()
        .1;
    let mut db = Db::open(&Location::parse(db.arg().as_ref()), durable).unwrap();
    let versions: Vec<i64> = ["a", "b"]
        .iter()
        .map(|entrant| {
            db.add_version(&NewVersion {
                entrant,
                fingerprint: entrant,
                products: &[],
                build_ok: true,
                build_log: None,
            })
            .unwrap()
            .0
        })
        .collect();
    let (mut commits, mut cycles) = (vec![], vec![]);
    for round in 0..TABLES as u64 {
        let cycle = Instant::now();
        db.deal_table(&NewTable {
            round,
            versions: &versions,
            rotations: &[0, 1],
        })
        .unwrap();
        let table = db
            .claim_table("bench", Duration::from_secs(30), &|_| true)
            .unwrap()
            .unwrap();
        let claim = referee::league::db::Claim {
            table: table.id,
            claim: table.claim,
        };
        for rotation in [0, 1] {
            let mut game = record.clone();
            let at = Instant::now();
            let id = db
                .commit_game(&mut game, claim, round, rotation, &versions)
                .unwrap();
            commits.push(at.elapsed().as_secs_f64() * 1e6);
            assert!(id.is_some());
        }
        db.finish_table(claim, None).unwrap();
        cycles.push(cycle.elapsed().as_secs_f64() * 1e6 / 2.0);
    }
    println!(
        "- {name}, {}: commit_game {} us a game; a table dealt, claimed, its 2 games committed \
         and finished: {} us a game ({TABLES} tables, {} bytes a record)",
        if durable {
            "durable (fsync)"
        } else {
            "--no-fsync"
        },
        mmm(&commits, 0),
        mmm(&cycles, 0),
        serde_json::to_string(&record).unwrap().len()
    );
}

/// The time a coordinator takes to start on a database of 1,000,000
/// games: from its start to its first standings of them all.
fn coordinator_start(name: &str, db: &LeagueDb, versions: &Path, file: &Path) {
    const GAMES: u64 = 1_000_000;
    let url = db.arg();
    let versions = versions.to_str().unwrap();
    let (_, out) = run(
        REFEREE,
        &league_args(
            file,
            &url,
            &["--versions", versions, "--jobs", "2", "--games", "200"],
        ),
        None,
        false,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let grown = Instant::now();
    grow_games(db, GAMES);
    let grown = grown.elapsed();
    let address = free_address();
    let started = Instant::now();
    let log = Path::new(versions).with_extension("log");
    let mut child = Children(vec![
        Command::new(REFEREE)
            .args(league_args(
                file,
                &url,
                &["--versions", versions, "--jobs", "0", "--serve", &address],
            ))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    ]);
    let games = loop {
        let log = || std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the coordinator never served its standings: {}",
            log()
        );
        if let Ok(Some(status)) = child.0[0].try_wait() {
            panic!("the coordinator ended ({status}): {}", log());
        }
        if std::net::TcpStream::connect(&address).is_ok() {
            let body = http_get(&address, "/api/standings");
            let games = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["games"].as_u64())
                .unwrap_or(0);
            if games >= GAMES {
                break games;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    println!(
        "- {name}: a coordinator started on {games} games served their standings after {:.1} s \
         (the database grown to them in {:.0} s)",
        started.elapsed().as_secs_f64(),
        grown.as_secs_f64()
    );
}

/// Copies a league's games until its database holds `games`, in one
/// statement: the same records, renumbered, with their seats.
fn grow_games(db: &LeagueDb, games: u64) {
    match db {
        LeagueDb::Sqlite(path) => {
            let conn = rusqlite::Connection::open(path).unwrap();
            let have: i64 = conn
                .query_row("SELECT count(*) FROM games", [], |r| r.get(0))
                .unwrap();
            conn.execute_batch(&format!(
                "BEGIN;
                 WITH RECURSIVE s(g) AS (SELECT {have} + 1 UNION ALL SELECT g + 1 FROM s WHERE g < {games})
                 INSERT INTO games (id, round, rotation, finished, record)
                 SELECT g, r.round, r.rotation, r.finished, json_set(r.record, '$.index', g)
                 FROM s JOIN games r ON r.id = (g - 1) % {have} + 1;
                 WITH RECURSIVE s(g) AS (SELECT {have} + 1 UNION ALL SELECT g + 1 FROM s WHERE g < {games})
                 INSERT INTO seats (game, seat, version, status)
                 SELECT g, t.seat, t.version, t.status FROM s JOIN seats t ON t.game = (g - 1) % {have} + 1;
                 COMMIT;"
            ))
            .unwrap();
        }
        LeagueDb::Postgres(server, name) => {
            let have: i64 = server
                .sql(name, "SELECT count(*) FROM games")
                .trim()
                .parse()
                .unwrap();
            server.sql(
                name,
                &format!(
                    "BEGIN;
                     INSERT INTO games (id, round, rotation, finished, record)
                     SELECT g, r.round, r.rotation, r.finished,
                            regexp_replace(r.record, '\"index\":[0-9]+', '\"index\":' || g)
                     FROM generate_series({have} + 1, {games}) g JOIN games r ON r.id = (g - 1) % {have} + 1;
                     INSERT INTO seats (game, seat, version, status)
                     SELECT g, t.seat, t.version, t.status
                     FROM generate_series({have} + 1, {games}) g JOIN seats t ON t.game = (g - 1) % {have} + 1;
                     COMMIT; ANALYZE;"
                ),
            );
        }
    }
}

// ---- matchmaking ------------------------------------------------------------

/// A league of 30 entrants simulated through the league's matchmaking and
/// tally (`referee::league::matchmaking::simulation`), its outcomes drawn
/// from fixed strengths; two entrants push a stronger version, at 10,000
/// and at 60,000 games. For each pushed version: the games until its
/// rating is known (σ ≤ `known`), and its share of the seats after, as a
/// multiple of its fair share (seats ÷ entrants a game), under the policy
/// before issue 40 (shares over the league's lifetime) and now.
fn matchmaking(seeds: u64) {
    use referee::league::matchmaking::simulation::{Setup, run};
    println!(
        "## Matchmaking (simulated: 30 entrants of fixed strengths 15 to 35, Weng-Lin's β = \
         25/6 a game; a stronger version (+3) pushed at 10,000 and at 60,000 games, 5,000 games \
         after; the league's defaults; min / median / max over {seeds} seeds and both pushes)"
    );
    for seats in [2, 3] {
        for lifetime in [true, false] {
            let started = Instant::now();
            let mut known = vec![];
            let mut known_games = vec![];
            let blocks: [(u64, u64); 4] = [(0, 100), (100, 200), (200, 1000), (1000, 4000)];
            let mut shares: Vec<Vec<f64>> = vec![vec![]; blocks.len()];
            let mut most = vec![];
            let mut most_later = vec![];
            for seed in 1..=seeds {
                let setup = Setup {
                    seed,
                    lifetime,
                    ..Setup::class(seats)
                };
                for pushed in run(&setup) {
                    let Some((after, games)) = pushed.known else {
                        println!("- {}: never known", pushed.name);
                        continue;
                    };
                    known.push(after as f64);
                    known_games.push(games as f64);
                    for (b, &(from, to)) in blocks.iter().enumerate() {
                        shares[b].push(pushed.share(after + from, after + to));
                    }
                    most.push(pushed.most_share(after + 200, after + 4000, 200));
                    most_later.push(pushed.most_share(after + 1000, after + 4000, 200));
                }
            }
            println!(
                "- tables of {seats}, {}: known after {} games dealt, of which it played {}; \
                 then its share of the seats (× fair) over the games 0–100 after: {}, \
                 100–200: {}, 200–1,000: {}, 1,000–4,000: {}; the most over any 200 games \
                 from 200 after: {} (from 1,000 after: {}) ({:.1} s)",
                if lifetime {
                    "before (shares over the league's lifetime)"
                } else {
                    "now (recent games, batch, most share)"
                },
                mmm(&known, 0),
                mmm(&known_games, 0),
                mmm(&shares[0], 2),
                mmm(&shares[1], 2),
                mmm(&shares[2], 2),
                mmm(&shares[3], 2),
                mmm(&most, 2),
                mmm(&most_later, 2),
                started.elapsed().as_secs_f64()
            );
        }
    }
}
