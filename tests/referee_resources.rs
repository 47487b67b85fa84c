//! A failure of the referee's own resources is never an entrant's
//! (issue 39, failure 5): with its descriptors exhausted, a game is void
//! (`internal`), not a `cannot_start` or a crash; a run of such games
//! stops with status 70 and says why; `--resume` plays them again. The
//! referee raises its descriptor soft limit to the hard one at start.

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;

use common::{Marker, assert_has, assert_lacks, evensteven_bin, finish, jsonl, write_file};
use nix::sys::resource::{Resource, setrlimit};

/// `referee ARGS` run with RLIMIT_NOFILE at `soft`:`hard`, `input` on its
/// standard input.
fn referee_limited(soft: u64, hard: u64, args: &[&str], input: &[u8]) -> common::Run {
    let marker = Marker::new();
    let mut cmd = common::command(args, &marker);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: setrlimit is a plain system call, safe between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            setrlimit(Resource::RLIMIT_NOFILE, soft, hard).map_err(std::io::Error::from)
        });
    }
    let run = finish(cmd.spawn().expect("start referee"), input);
    marker.assert_none_left();
    run
}

/// Even Steven, the reference player twice.
fn tournament_file(dir: &Path, games: u64) -> String {
    let text = format!(
        "game = \"evensteven\"\ngames = {games}\nseed = 3\n[limits]\ntimeout = \"2s\"\n\
         [[entrant]]\nname = \"alice\"\ncommand = [\"{bin}\"]\n\
         [[entrant]]\nname = \"bob\"\ncommand = [\"{bin}\"]\n",
        bin = evensteven_bin(),
    );
    let path = write_file(dir, "t.toml", text);
    path.to_str().unwrap().to_owned()
}

fn statuses(record: &serde_json::Value) -> Vec<String> {
    record["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn exhausted_descriptors_void_the_games_and_never_disqualify_an_entrant() {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament_file(dir.path(), 60);
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    // 60 descriptors, soft and hard: the referee cannot raise them, and
    // four games at once run out of them while starting their bots.
    let run = referee_limited(
        60,
        60,
        &[
            "tournament",
            "--no-progress",
            &file,
            "--jobs",
            "4",
            "--out",
            out,
        ],
        b"",
    );
    assert_eq!(run.code, Some(70), "{run:?}");
    assert_has(&run.stderr, "Too many open files");
    assert_has(&run.stderr, "--resume");
    let records = jsonl(&Path::new(out).join("records.jsonl"));
    assert!(!records.is_empty(), "{run:?}");
    let mut void = 0;
    for record in &records {
        let statuses = statuses(record);
        assert!(
            statuses.iter().all(|s| s == "ok" || s == "internal"),
            "an entrant was charged with the referee's failure: {record}"
        );
        if statuses.iter().any(|s| s == "internal") {
            void += 1;
            let text = record.to_string();
            assert!(text.contains("Too many open files"), "{record}");
        }
    }
    assert!(void >= 3, "{records:?}");
    let standings = std::fs::read_to_string(Path::new(out).join("standings.json"));
    if let Ok(standings) = standings {
        assert_lacks(&standings, "\"disqualified\":1");
    }

    // With descriptors to spare, --resume plays the void games again.
    let run = referee_limited(
        4096,
        4096,
        &[
            "tournament",
            "--no-progress",
            &file,
            "--jobs",
            "2",
            "--out",
            out,
            "--resume",
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let standings: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(out).join("standings.json")).unwrap(),
    )
    .unwrap();
    let text = standings.to_string();
    for entrant in ["alice", "bob"] {
        assert_has(&text, entrant);
    }
    let records = jsonl(&Path::new(out).join("records.jsonl"));
    let played: std::collections::BTreeSet<u64> = records
        .iter()
        .filter(|r| statuses(r).iter().all(|s| s == "ok"))
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(
        played.len(),
        60,
        "every game played to its end: {records:?}"
    );
    for record in &records {
        assert!(
            statuses(record)
                .iter()
                .all(|s| s == "ok" || s == "internal"),
            "{record}"
        );
    }
}

#[test]
fn the_referee_raises_its_descriptor_soft_limit_to_the_hard_one() {
    let dir = tempfile::tempdir().unwrap();
    // With `--limit-open-files none` a bot keeps the referee's own limit.
    let script = write_file(
        dir.path(),
        "bot.sh",
        format!("#!/bin/sh\nulimit -n >&2\nexec {}\n", evensteven_bin()),
    );
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let results = dir.path().join("r.jsonl");
    let run = referee_limited(
        64,
        4321,
        &[
            "dealer",
            "--limit-open-files",
            "none",
            "--results",
            results.to_str().unwrap(),
            script.to_str().unwrap(),
        ],
        b"3 1\n",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = jsonl(&results);
    assert_eq!(records[0]["stderr"].as_str().map(str::trim), Some("4321"));
}

/// Issue 39, item 4: `referee dealer` that cannot start its player for
/// want of its own descriptors said 64 (a usage error). Under descriptor
/// limits from too few to start at all to enough to play, every run that
/// ran out says so with 70, never 64; at least one of them ran out.
#[test]
fn a_dealer_out_of_descriptors_exits_70_not_64() {
    let mut ran_out = 0;
    for most in 8..=24 {
        let marker = common::Marker::new();
        let mut cmd = std::process::Command::new("prlimit");
        cmd.arg(format!("--nofile={most}:{most}"))
            .arg(common::referee_bin())
            .args(common::MARKER_ENV)
            .args(["dealer", common::evensteven_bin()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        marker.apply(&mut cmd);
        let run = common::finish(cmd.spawn().expect("prlimit (util-linux)"), b"4 876390176\n");
        marker.assert_none_left();
        if run.stderr.contains("Too many open files") {
            ran_out += 1;
            assert_eq!(run.code, Some(70), "--nofile={most}: {run:?}");
        } else {
            assert_eq!(run.code, Some(0), "--nofile={most}: {run:?}");
        }
    }
    assert!(ran_out > 0, "no limit ran the referee out of descriptors");
}

/// Issue 39, item 4: a build the referee could not start for want of its
/// own descriptors (`cannot run make: ... Too many open files`) was the
/// entrant's failed build: disqualified, ranked last. Now the run stops
/// with status 70 before any game, and says no entrant is blamed.
#[test]
fn a_build_the_referee_cannot_start_disqualifies_no_one() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for name in ["a", "b"] {
        let folder = dir.path().join(name);
        std::fs::create_dir(&folder).unwrap();
        let bot = format!("#!/bin/sh\nexec {}\n", evensteven_bin());
        write_file(&folder, "bot.sh", bot);
        let make = "pc2: bot.sh\n\tcp bot.sh pc2\n\tchmod +x pc2\n";
        write_file(&folder, "Makefile", make);
    }
    let file = write_file(
        dir.path(),
        "t.toml",
        "game = \"evensteven\"\ngames = 4\nseed = 3\n\
         [[entrant]]\nname = \"a\"\ndir = \"a\"\n[[entrant]]\nname = \"b\"\ndir = \"b\"\n",
    );
    let mut stopped = 0;
    for limit in [14, 16, 20, 24, 28] {
        for name in ["a", "b"] {
            let _ = std::fs::remove_file(dir.path().join(name).join("pc2"));
        }
        let args = ["tournament", "--no-progress", file.to_str().unwrap()];
        let run = referee_limited(limit, limit, &args, b"");
        assert!(!run.stderr.contains("disqualified:"), "{limit}: {run:?}");
        assert!(!run.stdout.contains("build failed"), "{limit}: {run:?}");
        if run.stderr.contains("cannot run `make`") {
            stopped += 1;
            assert_eq!(run.code, Some(70), "{limit}: {run:?}");
            assert!(
                run.stderr.contains("no entrant is disqualified for that"),
                "{limit}: {run:?}"
            );
        }
    }
    assert!(stopped >= 3, "the builds never ran out of descriptors");
}
