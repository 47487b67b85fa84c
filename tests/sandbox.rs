//! `--sandbox`: bots run under bubblewrap without network and with the file
//! system read-only. Needs `bwrap` (`.ci/run` installs it).

mod common;

use std::net::TcpListener;
use std::time::Duration;

use common::{fixture, referee};

/// Plays one game with the escape-attempting player; returns what it said
/// on stderr and whether the listener saw a connection.
fn attempt(sandbox: bool) -> (String, bool, bool) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside.txt");
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
    let record: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&results)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
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
    assert!(stderr.contains("`bwrap` is not installed"), "{stderr}");
}

#[test]
fn a_bot_that_lives_under_tmp_still_runs_in_the_sandbox() {
    // The sandbox's private /tmp must not hide a bot kept in a temporary
    // directory (CI workspaces often are): its directory is bound back in,
    // read-only.
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let bot = dir.path().join("player.sh");
    std::fs::write(
        &bot,
        // A one-card hand: play the card it holds.
        "#!/bin/sh\n\
         { echo x > here.txt; } 2>/dev/null\n\
         while read -r line; do\n\
         case \"$line\" in YOU*) ;; *' '*) card=${line#* } ;; *) echo \"$card\" ;; esac\n\
         done\n",
    )
    .unwrap();
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
