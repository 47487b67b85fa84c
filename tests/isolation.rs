//! `--sandbox` as isolation: a submission (its build and its play) sees
//! the system read-only and its own folder, and nothing of the other
//! submissions, of the tournament or of the judge's data; it reaches no
//! network and no other process; it keeps nothing after the run. Each test
//! plays what a tester's submission did, through the real binary, and also
//! runs it without the sandbox where that shows the attempt would work.
//! Needs `bwrap` (`.ci/run` installs it).

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use common::{
    assert_has, assert_lacks, fixture, need_bwrap, referee, referee_ok, referee_with, temp_path,
};

/// A copy of `tests/fixtures/isolation/class` in a fresh directory (the
/// submissions are built there), and the directory.
fn class() -> (tempfile::TempDir, PathBuf) {
    common::fixture_copy("isolation/class")
}

/// What became of mallory's attempts in one class tournament.
struct Class {
    run: common::Run,
    /// Mallory's standard error at play time.
    stderr: String,
    /// Files her build or her player wrote outside her folder.
    escaped: Vec<PathBuf>,
    alice_changed: bool,
    stole: bool,
    connected: bool,
    /// What her build read of `/proc/1/cmdline` and its mounts.
    seen_at_build: String,
}

fn class_tournament(sandbox: bool) -> Class {
    let (dir, class) = class();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let escape_to = dir.path().join("escaped-outside");
    let out = dir.path().join("out");
    let alice = class.join("submissions/alice/alice.sh");
    let before = std::fs::read_to_string(&alice).unwrap();
    let file = class.join("class.toml");
    let mut args = vec![
        "tournament",
        "--no-progress",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    if sandbox {
        args.push("--sandbox");
    }
    // For the bots and the builds, which see no other variable.
    let env = common::env_args(&[
        ("EVENSTEVEN", env!("CARGO_BIN_EXE_evensteven")),
        ("PORT", port.as_str()),
        ("ESCAPE_TO", escape_to.to_str().unwrap()),
    ]);
    args.extend(env.iter().map(String::as_str));
    // referee_with also checks that no process (the build's `setsid
    // sleep` included) is left.
    let run = referee_with(args, b"", &[], None);
    let escaped = [
        class.join("submissions/escaped-relative"),
        class.join("escaped-absolute"),
        escape_to,
        class.join("submissions/escaped-at-play"),
        class.join("submissions/mallory/here"),
    ]
    .into_iter()
    .filter(|p| p.exists())
    .collect();
    Class {
        stderr: std::fs::read_to_string(out.join("stderr/mallory.log")).unwrap_or_default(),
        escaped,
        alice_changed: std::fs::read_to_string(&alice).unwrap() != before,
        stole: class.join("submissions/mallory/stolen.sh").exists(),
        connected: listener.accept().is_ok(),
        seen_at_build: String::from_utf8_lossy(
            &std::fs::read(class.join("submissions/mallory/seen-at-build")).unwrap_or_default(),
        )
        .into_owned(),
        run,
    }
}

#[test]
fn without_the_sandbox_a_class_submission_reaches_everything() {
    let c = class_tournament(false);
    assert_eq!(c.run.code, Some(0), "{:?}", c.run);
    assert_eq!(c.escaped.len(), 5, "{:?}", c.escaped);
    assert!(c.alice_changed && c.stole && c.connected);
    assert_has(&c.stderr, "read alice: yes");
}

#[test]
fn a_sandboxed_class_submission_stays_in_its_folder() {
    need_bwrap();
    let c = class_tournament(true);
    assert_eq!(c.run.code, Some(0), "{:?}", c.run);
    // Her build worked (what it tried outside failed quietly) and she
    // played every game.
    assert_lacks(&c.run.stderr, "disqualified");
    assert!(c.escaped.is_empty(), "written outside: {:?}", c.escaped);
    assert!(!c.alice_changed, "mallory's build changed alice's source");
    assert!(!c.stole, "mallory's build copied alice's solution");
    assert!(!c.connected, "mallory's build reached the network");
    for line in [
        "read alice: no",
        "read class: no",
        "write outside: no",
        "write own: no",
        "names alice: no",
    ] {
        assert!(c.stderr.contains(line), "{line:?} not in:\n{}", c.stderr);
    }
    assert_lacks(&c.stderr, ": yes");
    // Nothing in her build's sandbox names another entrant's folder:
    // neither bubblewrap's command line (its pid 1) nor a mount.
    assert_has(&c.seen_at_build, "bwrap");
    assert_lacks(&c.seen_at_build, "alice");
}

#[test]
fn a_missing_bubblewrap_stops_a_sandboxed_tournament_before_its_builds() {
    let (_dir, class) = class();
    let file = class.join("class.toml");
    let mut cmd = std::process::Command::new(common::referee_bin());
    cmd.args(["tournament", "--no-progress", "--sandbox"])
        .arg(&file)
        .env("PATH", "/nonexistent")
        .stdin(std::process::Stdio::null());
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{stderr}");
    assert_has(&stderr, "`bwrap` is not installed");
    assert_lacks(&stderr, "building");
}

fn guess() -> String {
    format!("{}/games/guess", env!("CARGO_MANIFEST_DIR"))
}

/// What `peek.sh` said in the first test case.
fn peek(sandbox: bool) -> String {
    let mut options = vec!["--timeout", "5s"];
    if sandbox {
        options.push("--sandbox");
    }
    let (guess, peek) = (guess(), fixture("isolation/peek.sh"));
    let (_, records) = common::package::judged_with(&options, &guess, &[&peek, &guess]);
    let first = records.first().map(|r| r["stderr"].as_str());
    first.flatten().unwrap_or_default().to_owned()
}

/// What `peek.sh` said of the answer files and of the validator's
/// command line.
fn peek_says(sandbox: bool, answers: &str, cmdline: &str) {
    let said = peek(sandbox);
    assert_has(&said, answers);
    assert_has(&said, cmdline);
}

#[test]
fn without_the_sandbox_a_submission_finds_the_judges_data() {
    peek_says(false, "answers: read", "cmdline: yes");
}

#[test]
fn a_sandboxed_submission_sees_neither_the_package_nor_the_validator() {
    need_bwrap();
    peek_says(true, "answers: hidden", "cmdline: no");
}

#[test]
fn a_sandboxed_submission_kept_in_the_package_is_still_judged() {
    need_bwrap();
    let program = format!("{}/submissions/accepted/binary.py", guess());
    let run = referee(["interactive", "--sandbox", &guess(), &program], b"");
    run.expect_stdout(0, "6 of 6 test cases accepted");
}

#[test]
fn a_program_among_the_judges_files_is_refused_under_the_sandbox() {
    need_bwrap();
    // The sandbox hides the package but shows the program's directory:
    // both cannot hold, so nothing runs.
    let validator = format!("{}/output_validators/guess/validator.py", guess());
    let run = referee(["interactive", "--sandbox", &guess(), &validator], b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "--sandbox");
    assert!(run.stdout.is_empty(), "{run:?}");
}

/// Plays one game with `hoard.sh` under a 64 MiB memory limit, with
/// `options`; what it said, its record, and whether its files reached the
/// host's /dev/shm and /tmp.
fn hoard(options: &[&str]) -> (String, serde_json::Value, [bool; 2]) {
    let (_dir, results) = temp_path("r.jsonl");
    let name = format!("referee-hoard-{}-{}", std::process::id(), options.join(""));
    let mut args = vec![
        "dealer",
        "--limit-memory",
        "64MiB",
        "--results",
        results.to_str().unwrap(),
    ];
    args.extend_from_slice(options);
    let script = fixture("isolation/hoard.sh");
    args.extend([script.as_str(), name.as_str()]);
    referee(args, b"4 876390176\n");
    let files = [
        Path::new("/dev/shm").join(format!("{name}-shm")),
        Path::new("/tmp").join(format!("{name}-tmp")),
    ];
    let kept = [files[0].exists(), files[1].exists()];
    for f in &files {
        let _ = std::fs::remove_file(f);
    }
    let text = std::fs::read_to_string(&results).unwrap();
    let record: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    (
        record["stderr"].as_str().unwrap_or_default().to_owned(),
        record,
        kept,
    )
}

#[test]
fn a_sandboxed_bots_tmp_and_dev_shm_are_private_and_count_as_its_memory() {
    need_bwrap();
    // What it writes to its private /dev/shm and /tmp is memory it holds:
    // it is killed once that reaches its limit (each is also bounded by
    // that size, should the memory watch be slow where no cgroup holds it).
    let (_, record, kept) = hoard(&["--sandbox"]);
    assert!(
        record["peak_memory_bytes"].as_u64().unwrap() >= 64 << 20,
        "{record}"
    );
    assert_eq!(record["status"], "limit", "{record}");
    assert_eq!(record["limit"], "memory", "{record}");
    assert_eq!(
        kept,
        [false, false],
        "the bot's files outlived it on the host"
    );
    // Without the sandbox, its /dev/shm is still its own where it has a
    // cgroup (as root), and counts: it is killed filling it.
    let (_, record, kept) = hoard(&[]);
    if record["status"] == "limit" {
        assert_eq!(record["limit"], "memory", "{record}");
        assert!(!kept[0], "its /dev/shm file outlived it: {record}");
    } else {
        eprintln!("no cgroups here: the host's /dev/shm");
        assert_eq!(kept, [true, true], "{record}");
    }
    // Without cgroups, its files are not its memory: /tmp is the host's,
    // and so is /dev/shm unless the referee is root (then a private one,
    // as large as the limit).
    let (said, record, kept) = hoard(&["--no-cgroups"]);
    assert_has(&said, "tmp: wrote");
    assert_eq!(record["status"], "ok", "{record}");
    assert!(kept[1], "{record}");
}

/// A sandboxed bot's process that left its group and session dies with a
/// SIGKILLed referee: the sandbox's pid namespace ends with bubblewrap,
/// which dies with its parent. (Without the sandbox such a process goes to
/// init and survives where no cgroup holds it: docs/containment.md,
/// "Without cgroups".)
#[test]
fn a_sandboxed_escapee_dies_with_a_killed_referee() {
    need_bwrap();
    let marker = common::Marker::new();
    let script = fixture("isolation/escapee.sh");
    let mut child = common::start(
        ["dealer", "--sandbox", "--timeout", "60s", &script],
        &marker,
    );
    common::feed(&mut child, b"4 876390176\n");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let both = || {
        let survivors = marker.survivors();
        survivors.iter().any(|p| p.contains("sleep 1000"))
            && survivors.iter().any(|p| p.contains("sleep 1001"))
    };
    while !both() {
        assert!(
            std::time::Instant::now() < deadline,
            "the bot never started its escapee: {:?}",
            marker.survivors()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    common::signal(&child, nix::sys::signal::Signal::SIGKILL);
    common::finish(child, b"");
    marker.assert_none_left();
}

/// A copy of the guess package in a fresh directory, with `part` of it
/// moved out beside it and linked back in its place (an absolute link);
/// the directory, the package, and where the part went.
fn linked_package(part: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (dir, package) = temp_path("guess");
    let copied = std::process::Command::new("cp")
        .args(["-r", &guess(), package.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(copied.success());
    let away = dir.path().join("elsewhere").join(part.replace('/', "-"));
    std::fs::create_dir_all(away.parent().unwrap()).unwrap();
    std::fs::rename(package.join(part), &away).unwrap();
    std::os::unix::fs::symlink(&away, package.join(part)).unwrap();
    (dir, package, away)
}

#[test]
fn test_data_that_leads_outside_the_package_is_refused_under_the_sandbox() {
    need_bwrap();
    // The sandbox hides the package, not the answer its link leads to.
    let (_dir, package, away) = linked_package("data/secret/3.ans");
    let program = format!("{}/submissions/accepted/binary.py", guess());
    let args = |sandbox: bool| {
        let mut args = vec!["interactive".to_owned()];
        if sandbox {
            args.push("--sandbox".into());
        }
        args.extend([package.to_str().unwrap().to_owned(), program.clone()]);
        args
    };
    let run = referee(args(true), b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    let said = format!(
        "{} leads to {}",
        package.join("data/secret/3.ans").display(),
        away.display()
    );
    assert!(run.stderr.contains(&said), "{said}: {}", run.stderr);
    assert_has(&run.stderr, "--sandbox");
    assert!(run.stdout.is_empty(), "{run:?}");
    // Without the sandbox nothing is hidden, and the link is followed.
    let run = referee(args(false), b"");
    run.expect_stdout(0, "6 of 6 test cases accepted");
}

#[test]
fn a_validator_linked_from_outside_the_package_judges_under_the_sandbox() {
    need_bwrap();
    let (_dir, package, _) = linked_package("output_validators/guess");
    let program = format!("{}/submissions/accepted/binary.py", guess());
    let run = referee_ok([
        "interactive",
        "--sandbox",
        package.to_str().unwrap(),
        &program,
    ]);
    assert!(run.stdout.contains("6 of 6 test cases accepted"), "{run:?}");
}
