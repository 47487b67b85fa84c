//! A build's temporary files stay in the run's own temporary folder,
//! which goes when the run ends, however it ends (issue 38, item 4).

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Marker, finish, signal, temp_path, write_file};

/// A tournament in `dir` (Even Steven): `built`, whose folder `sub` is
/// built with `makefile`, against the reference player.
fn tournament(dir: &Path, makefile: &str) -> String {
    let sub = dir.join("sub");
    write_file(&sub, "Makefile", makefile);
    let player = env!("CARGO_BIN_EXE_evensteven");
    write_file(
        &sub,
        "player.sh",
        format!("#!/bin/sh\nexec {player} \"$@\"\n"),
    );
    let text = format!(
        "game = \"evensteven\"\ngames = 2\nseed = 3\n[limits]\ntimeout = \"2s\"\n\
         [[entrant]]\nname = \"built\"\ndir = \"sub\"\ncommand = [\"./executeit\"]\n\
         [[entrant]]\nname = \"reference\"\ncommand = [\"{player}\"]\n"
    );
    let file = write_file(dir, "t.toml", text);
    file.to_str().unwrap().to_owned()
}

/// A build that leaves a file in its `TMPDIR` (as a compiler killed
/// mid-build does) and says which `TMPDIR` it had; `then` ends it.
fn makefile(then: &str) -> String {
    format!("executeit: player.sh\n\tmktemp >/dev/null\n\techo \"$$TMPDIR\" > seen\n\t{then}\n")
}

/// What is in `tmp`, the referee's own `TMPDIR`.
fn left_in(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// `referee tournament FILE` with `TMPDIR=tmp`, started.
fn start_run(file: &str, tmp: &Path, marker: &Marker) -> std::process::Child {
    let mut cmd = common::command(["tournament", "--no-progress", file], marker);
    cmd.env("TMPDIR", tmp)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    cmd.spawn().unwrap()
}

/// Waits (a minute at most) for `path` to hold a line.
fn wait_for_line(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim_end().to_owned();
        }
        assert!(Instant::now() < deadline, "the build never started");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn ctrl_c_during_a_build_leaves_nothing_in_the_referees_tmpdir() {
    for signal_sent in [
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGTERM,
    ] {
        let (dir, tmp) = temp_path("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let file = tournament(dir.path(), &makefile("sleep 30"));
        let marker = Marker::new();
        let child = start_run(&file, &tmp, &marker);
        let seen = PathBuf::from(wait_for_line(&dir.path().join("sub/seen")));
        assert!(
            seen.starts_with(&tmp) && seen != tmp,
            "the build's TMPDIR is a folder of the run's own in the referee's: {seen:?}"
        );
        signal(&child, signal_sent);
        let run = finish(child, b"");
        assert_eq!(run.code, Some(130), "{run:?}");
        marker.assert_none_left();
        assert_eq!(left_in(&tmp), Vec::<String>::new(), "{signal_sent}");
    }
}

#[test]
fn a_run_that_ends_leaves_nothing_of_its_builds_in_the_referees_tmpdir() {
    let (dir, tmp) = temp_path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let file = tournament(
        dir.path(),
        &makefile("cp player.sh executeit && chmod +x executeit"),
    );
    let marker = Marker::new();
    let run = finish(start_run(&file, &tmp, &marker), b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    marker.assert_none_left();
    let seen = PathBuf::from(wait_for_line(&dir.path().join("sub/seen")));
    assert!(seen.starts_with(&tmp) && seen != tmp, "{seen:?}");
    assert_eq!(left_in(&tmp), Vec::<String>::new());
}

/// A `pc2` built as a 2 GiB sparse file (no disk in its folder) was copied
/// whole into the referee's temporary folder for the run: `truncate -s 1T`
/// would fill the disk. A program that large is not copied, and the run
/// says so.
#[test]
fn a_huge_sparse_program_is_not_copied() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let sub = dir.path().join("sub");
    write_file(
        &sub,
        "Makefile",
        "pc2:\n\ttruncate -s 2G pc2\n\tchmod +x pc2\n",
    );
    let player = env!("CARGO_BIN_EXE_evensteven");
    let file = write_file(
        dir.path(),
        "t.toml",
        format!(
            "game = \"evensteven\"\ngames = 2\nseed = 3\n\
             [[entrant]]\nname = \"huge\"\ndir = \"sub\"\n\
             [[entrant]]\nname = \"reference\"\ncommand = [\"{player}\"]\n"
        ),
    );
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let marker = Marker::new();
    let child = start_run(file.to_str().unwrap(), &tmp, &marker);
    let run = finish(child, b"");
    marker.assert_none_left();
    assert!(run.stderr.contains("too large to copy"), "{run:?}");
    let used = std::process::Command::new("du")
        .args(["-sk", tmp.to_str().unwrap()])
        .output()
        .unwrap();
    let kib: u64 = String::from_utf8_lossy(&used.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        kib < 16 * 1024,
        "{kib} KiB in the temporary folder: {run:?}"
    );
}
