//! What a cluster's batch scripts rely on (issue 22), through the real
//! binary: the shard read from the scheduler (`--shard auto`), a task run
//! again continuing its own run without a flag, and building once
//! (`--build-only`) before tasks that build nothing (`--no-build`). The
//! real Slurm cluster is in `tests/slurm.rs`.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::runs::tournament_args;
use common::{
    Marker, assert_has, assert_lacks, evensteven_bin, jsonl, referee, referee_ok, referee_with,
    temp_path, write_file,
};

/// An Even Steven tournament of `games` games with the reference player,
/// its moves slowed by `delay` seconds (so that a run can be caught in
/// the middle).
fn tournament(dir: &Path, games: u64, delay: &str) -> String {
    let slow = write_file(
        dir,
        "slow.sh",
        format!(
            "#!/bin/sh\nsleep {delay}\nexec {} \"$@\"\n",
            evensteven_bin()
        ),
    );
    chmod_x(&slow);
    write_file(
        dir,
        "t.toml",
        format!(
            "game = \"evensteven\"\ngames = {games}\nseed = 5\n[limits]\ntimeout = \"5s\"\n\
             [[entrant]]\nname = \"reference\"\ncommand = [\"{}\"]\n",
            slow.display()
        ),
    )
    .to_str()
    .unwrap()
    .to_owned()
}

fn chmod_x(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn indices(out: &Path) -> Vec<u64> {
    let mut indices: Vec<u64> = jsonl(&out.join("records.jsonl"))
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    indices.sort_unstable();
    indices
}

/// A task of a scheduler: its --out, its --shard, the scheduler's
/// variables, the games it plays.
type Task<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], [u64; 3]);

#[test]
fn the_shard_comes_from_the_schedulers_variables() {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament(dir.path(), 9, "0");
    let tasks: [Task; 3] = [
        // Task 2 of an array 1-3.
        (
            "slurm",
            "auto",
            &[
                ("SLURM_ARRAY_TASK_ID", "2"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ],
            [2, 5, 8],
        ),
        // An array from 0 (--array=0-2): task 0 is shard 1.
        (
            "from-zero",
            "auto",
            &[
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_MAX", "2"),
            ],
            [1, 4, 7],
        ),
        // A Kubernetes Indexed Job: the index from 0, the count given.
        ("k8s", "auto/3", &[("JOB_COMPLETION_INDEX", "2")], [3, 6, 9]),
    ];
    for (out, shard, env, games) in tasks {
        let out = dir.path().join(out);
        let args = tournament_args(&file, &out, &["--shard", shard]);
        let run = referee_with(args, b"", env, None);
        assert_eq!(run.code, Some(0), "{run:?}");
        assert_eq!(indices(&out), games);
    }
    // Outside a scheduler: refused before anything is written.
    let nowhere = dir.path().join("nowhere");
    let run = referee(tournament_args(&file, &nowhere, &["--shard", "auto"]), b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "--shard auto: no scheduler's variables");
    assert!(!nowhere.exists());
}

#[test]
fn a_task_run_again_continues_its_own_run_and_refuses_another() {
    // Slurm requeues a task whose node died: the same command starts again
    // on the same --out. It was refused ("already holds the records of a
    // run: finish it with --resume"), and the task failed for good.
    let dir = tempfile::tempdir().unwrap();
    let file = tournament(dir.path(), 8, "0.1");
    let out = dir.path().join("shard-1");
    let args = tournament_args(&file, &out, &["--jobs", "1", "--shard", "1/1"]);
    // The first attempt is stopped after its third game, as Slurm stops a
    // task it requeues (SIGTERM).
    let marker = Marker::new();
    stop(start_until_recorded(&args, &marker, &out, 3), &marker);
    let killed_at = indices(&out).len();
    assert!(killed_at < 8, "{killed_at}");
    // The same command again, no flag: it continues.
    let run = referee_ok(&args);
    assert_has(
        &run.stderr,
        &format!("continuing the same run: {killed_at} game(s) already in"),
    );
    assert_eq!(indices(&out), (1..=8).collect::<Vec<_>>());
    // Another run (another seed) on the same --out is refused, and the
    // records are left as they are.
    let records = out.join("records.jsonl");
    let before = std::fs::read(&records).unwrap();
    let mut other = args.clone();
    other.extend(["--seed", "6"]);
    let run = referee(other, b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    for part in [
        "already holds the records of another run, so it is not continued",
        "--seed 6, but the run's seed is 5",
    ] {
        assert_has(&run.stderr, part);
    }
    assert_eq!(std::fs::read(&records).unwrap(), before);
}

/// Starts `referee ARGS` and returns once it has recorded `games` games
/// in `out`.
fn start_until_recorded(
    args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>,
    marker: &Marker,
    out: &Path,
    games: usize,
) -> std::process::Child {
    let child = common::start(args, marker);
    let records = out.join("records.jsonl");
    let started = Instant::now();
    while indices_or_none(&records) < games {
        assert!(started.elapsed() < Duration::from_secs(60), "no games");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// Stops a run as Slurm stops a task (SIGTERM) and checks that none of
/// its processes is left.
fn stop(mut child: std::process::Child, marker: &Marker) {
    common::signal(&child, nix::sys::signal::Signal::SIGTERM);
    let _ = child.wait();
    marker.assert_none_left();
}

/// Games recorded in `records` so far (0 before the file exists).
fn indices_or_none(records: &Path) -> usize {
    std::fs::read_to_string(records)
        .map(|text| text.lines().filter(|l| l.ends_with('}')).count())
        .unwrap_or(0)
}

#[test]
fn entrants_built_once_are_played_without_building() {
    let (dir, entrant) = temp_path("entrant");
    write_file(
        &entrant,
        "pc2.in",
        format!("#!/bin/sh\nexec {} \"$@\"\n", evensteven_bin()),
    );
    write_file(
        &entrant,
        "Makefile",
        "pc2: pc2.in\n\tcp pc2.in pc2\n\tchmod +x pc2\n",
    );
    let file = write_file(
        dir.path(),
        "t.toml",
        format!(
            "game = \"evensteven\"\ngames = 4\nseed = 1\n\
             [[entrant]]\nname = \"built\"\ndir = \"{}\"\n",
            entrant.display()
        ),
    );
    let file = file.to_str().unwrap();
    let play = |out: &str, flag: &str| {
        let out = dir.path().join(out);
        referee(tournament_args(file, &out, &[flag]), b"")
    };
    // Nothing built yet: refused before anything runs.
    let run = play("early", "--no-build");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "--no-build: not every entrant is built");
    assert_has(&run.stderr, "no pc2: build it first");
    assert!(!dir.path().join("early/records.jsonl").exists());
    // The build job.
    let run = play("build", "--build-only");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stdout, "built: 1 of 1 entrant");
    assert!(entrant.join("pc2").is_file());
    assert!(!dir.path().join("build/records.jsonl").exists());
    // A task: plays what was built.
    let run = play("task", "--no-build");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_lacks(&run.stderr, "building");
    assert_eq!(jsonl(&dir.path().join("task/records.jsonl")).len(), 4);
    // A source changed since: the build is stale.
    std::thread::sleep(Duration::from_millis(20));
    write_file(
        &entrant,
        "pc2.in",
        format!("#!/bin/sh\n# changed\nexec {} \"$@\"\n", evensteven_bin()),
    );
    let run = play("stale", "--no-build");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "pc2 is older than pc2.in");
    // A build that fails: said, and status 1.
    write_file(&entrant, "Makefile", "pc2:\n\tfalse\n");
    std::fs::remove_file(entrant.join("pc2")).unwrap();
    let run = play("failed", "--build-only");
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_has(&run.stdout, "built: 0 of 1 entrant");
    assert_has(&run.stdout, "built:");
}

#[test]
fn two_runs_writing_one_out_at_once_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament(dir.path(), 40, "0.2");
    let out = dir.path().join("out");
    let args = tournament_args(&file, &out, &["--jobs", "1"]);
    let marker = Marker::new();
    let first = start_until_recorded(&args, &marker, &out, 1);
    let second = referee(&args, b"");
    assert_eq!(second.code, Some(64), "{second:?}");
    assert_has(&second.stderr, "is being written by another run right now");
    stop(first, &marker);
    // Every record is the first run's: one per game, none twice.
    let indices = indices(&out);
    let mut unique = indices.clone();
    unique.dedup();
    assert_eq!(indices, unique);
}

#[test]
fn a_class_built_once_is_played_without_building() {
    // Entrants with a command of their own (`./executeit`), not `pc2`:
    // --no-build refused them ("no pc2") right after --build-only built
    // them.
    let (dir, class) = common::fixture_copy("class");
    std::fs::remove_dir_all(class.join("submissions/carol")).unwrap();
    let file = class.join("class.toml");
    let env = common::env_args(&[("EVENSTEVEN", evensteven_bin())]);
    let play = |flag: &str, out: &str| {
        let out = dir.path().join(out);
        let mut args = tournament_args(file.to_str().unwrap(), &out, &[flag]);
        args.extend(env.iter().map(String::as_str));
        referee_with(args, b"", &[], None)
    };
    let run = play("--no-build", "early");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "no executeit: build it first");
    let run = play("--build-only", "build");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stdout, "built: 2 of 2 entrants");
    let run = play("--no-build", "task");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(jsonl(&dir.path().join("task/records.jsonl")).len(), 12);
}

#[test]
fn a_big_class_builds_as_many_at_once_as_there_are_cpus() {
    // A class of 1,000 built every folder at once: 1,000 compilers.
    let (dir, running) = temp_path("running");
    std::fs::create_dir(&running).unwrap();
    let most = dir.path().join("most");
    // Each build notes how many builds run beside it.
    let makefile = format!(
        "executeit: player.sh\n\
         \ttouch {running}/$$$$ && ls {running} | wc -l >> {most} && sleep 0.1 && rm {running}/$$$$\n\
         \tcp player.sh executeit && chmod +x executeit\n",
        running = running.display(),
        most = most.display()
    );
    for i in 0..8 {
        let folder = dir.path().join(format!("subs/s{i}"));
        write_file(
            &folder,
            "player.sh",
            format!("#!/bin/sh\nexec {} \"$@\"\n", evensteven_bin()),
        );
        write_file(&folder, "Makefile", &makefile);
    }
    let file = write_file(
        dir.path(),
        "class.toml",
        "game = \"evensteven\"\ngames = 1\nseed = 1\n\
         [[entrant]]\nglob = \"subs/*/\"\ncommand = [\"./executeit\"]\n",
    );
    let run = referee_ok(["tournament", file.to_str().unwrap(), "--build-only"]);
    assert_has(&run.stdout, "built: 8 of 8 entrants");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let counts: Vec<usize> = std::fs::read_to_string(&most)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 8);
    assert!(
        counts.iter().all(|&n| n <= cpus),
        "{counts:?} at once, {cpus} CPUs"
    );
}
