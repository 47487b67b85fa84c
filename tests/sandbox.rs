//! `--sandbox`: bots run under bubblewrap without network and with the file
//! system read-only. Needs `bwrap` (`.ci/run` installs it).

mod common;

use std::net::TcpListener;
use std::time::Duration;

use common::{assert_has, fixture, referee, temp_path, write_file};

/// Plays one game with the escape-attempting player; returns what it said
/// on stderr and whether the listener saw a connection.
fn attempt(sandbox: bool) -> (String, bool, bool) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let (dir, outside) = temp_path("outside.txt");
    let results = dir.path().join("r.jsonl");
    let mut args = vec!["dealer", "--results", results.to_str().unwrap()];
    if sandbox {
        args.push("--sandbox");
    }
    let script = fixture("escape-attempts.sh");
    args.extend([script.as_str(), port.as_str(), outside.to_str().unwrap()]);
    let run = referee(args, b"4 876390176\n");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "Game 1\nYOU LOSE NECESSARILY\n");
    let record = common::first_record(&results);
    let connected = listener.accept().is_ok();
    (
        record["stderr"].as_str().unwrap_or_default().to_owned(),
        connected,
        outside.exists(),
    )
}

#[test]
fn without_the_sandbox_a_bot_can_reach_out() {
    let (stderr, connected, wrote) = attempt(false);
    assert!(
        stderr.contains("network: connected") && stderr.contains("write: done"),
        "{stderr}"
    );
    assert!(connected && wrote);
}

#[test]
fn the_sandbox_cuts_the_network_and_writes_outside() {
    common::need_bwrap();
    let (stderr, connected, wrote) = attempt(true);
    assert!(
        stderr.contains("network: refused") && stderr.contains("write: refused"),
        "{stderr}"
    );
    std::thread::sleep(Duration::from_millis(50));
    assert!(!connected && !wrote);
}

#[test]
fn a_missing_bubblewrap_is_named() {
    let mut cmd = std::process::Command::new(common::referee_bin());
    cmd.args(["dealer", "--sandbox", "/bin/true"])
        .env("PATH", "/nonexistent")
        .stdin(std::process::Stdio::null());
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(64));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_has(&stderr, "`bwrap` is not installed");
}

#[test]
fn a_bot_that_lives_under_tmp_still_runs_in_the_sandbox() {
    // The sandbox's private /tmp must not hide a bot kept in a temporary
    // directory (CI workspaces often are): its directory is bound back in,
    // read-only.
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let bot = write_file(
        dir.path(),
        "player.sh", // A one-card hand: play the card it holds.
        "#!/bin/sh\n\
         { echo x > here.txt; } 2>/dev/null\n\
         while read -r line; do\n\
         case \"$line\" in YOU*) ;; *' '*) card=${line#* } ;; *) echo \"$card\" ;; esac\n\
         done\n",
    );
    std::fs::set_permissions(&bot, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = common::referee_with(
        ["dealer", "--sandbox", bot.to_str().unwrap()],
        b"1 1\n",
        &[],
        Some(dir.path()),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.starts_with("Game 1\nYOU "), "{run:?}");
    assert!(
        !dir.path().join("here.txt").exists(),
        "the bound directory must be read-only"
    );
}

/// A class folder outside /tmp (which the sandbox replaces anyway, so
/// that tests there see nothing of what is at stake), holding the
/// teacher's notes and one student's folder whose `pc2` is the probe.
fn probed_class() -> (tempfile::TempDir, std::path::PathBuf) {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let class = root.path().join("class");
    let alice = class.join("subs/alice");
    std::fs::create_dir_all(&alice).unwrap();
    std::fs::copy(fixture("sandbox-probe.sh"), alice.join("pc2")).unwrap();
    write_file(&class, "notes.txt", "alice: cheated?\n");
    (root, class)
}

/// `--env` for the probe: what it plays with, and what it looks for.
fn probe_env(secrets: &[&std::path::Path]) -> Vec<String> {
    let secrets: Vec<&str> = secrets.iter().map(|p| p.to_str().unwrap()).collect();
    common::env_args(&[
        ("EVENSTEVEN", common::evensteven_bin()),
        ("SECRETS", &secrets.join(":")),
    ])
}

/// The statuses of every seat of every record.
fn statuses(records: &std::path::Path) -> Vec<String> {
    common::jsonl(records)
        .iter()
        .flat_map(|r| r["players"].as_array().unwrap().clone())
        .map(|s| s["status"].as_str().unwrap().to_owned())
        .collect()
}

/// Issue 39: `cd class && referee tournament t.toml --sandbox` let every
/// bot read the teacher's notes and the tournament file: the bare name's
/// parent is `""`, which the sandbox dropped without a word. Without the
/// sandbox the probe reads them (so it can tell); with it, it cannot.
#[test]
fn a_bare_file_name_keeps_the_organisers_folder_hidden() {
    common::need_bwrap();
    let (_root, class) = probed_class();
    write_file(
        &class,
        "t.toml",
        "game = \"evensteven\"\ngames = 2\nseed = 1\n\
         [[entrant]]\nname = \"alice\"\ndir = \"subs/alice\"\n",
    );
    let env = probe_env(&[&class.join("notes.txt"), &class.join("t.toml")]);
    for (sandbox, seen) in [(false, "crashed"), (true, "ok")] {
        let out = class.join(format!("out-{sandbox}"));
        let mut args = vec!["tournament", "--no-progress"];
        args.extend(env.iter().map(String::as_str));
        if sandbox {
            args.push("--sandbox");
        }
        args.extend([
            "t.toml",
            "--out",
            out.file_name().unwrap().to_str().unwrap(),
        ]);
        let run = common::referee_with(args, b"", &[], Some(&class));
        assert_eq!(run.code, Some(0), "{run:?}");
        let all = statuses(&out.join("records.jsonl"));
        assert_eq!(all, [seen; 2], "--sandbox {sandbox}: {run:?}");
    }
}

/// Issue 39: a league whose `--db` is in another folder: a sandboxed bot
/// read the database and its write-ahead log. The files are hidden
/// themselves, not their folder (which may hold what bots run from).
#[test]
fn a_leagues_database_elsewhere_is_hidden_from_its_bots() {
    common::need_bwrap();
    let (root, class) = probed_class();
    write_file(
        &class,
        "league.toml",
        "game = \"evensteven\"\nseed = 1\n[[entrant]]\nglob = \"subs/*\"\n",
    );
    let other = root.path().join("other");
    std::fs::create_dir(&other).unwrap();
    for (sandbox, seen) in [(false, "crashed"), (true, "ok")] {
        let db = other.join(format!("class-{sandbox}.db"));
        let mut wal = db.clone().into_os_string();
        wal.push("-wal");
        let env = probe_env(&[&db, std::path::Path::new(&wal)]);
        let relative = format!("../other/class-{sandbox}.db");
        let mut args = vec!["league", "run", "league.toml", "--db", &relative];
        args.extend(["--games", "3", "--jobs", "1"]);
        if sandbox {
            args.push("--sandbox");
        }
        args.extend(env.iter().map(String::as_str));
        let run = common::referee_with(args, b"", &[], Some(&class));
        assert_eq!(run.code, Some(0), "{run:?}");
        let export = root.path().join(format!("export-{sandbox}"));
        common::league::export(&db, &export);
        let all = statuses(&export.join("records.jsonl"));
        assert!(
            !all.is_empty() && all.iter().all(|s| s == seen),
            "--sandbox {sandbox}: {all:?} {run:?}"
        );
    }
}
