//! A league on separate machines (issue 48): the coordinator and each
//! worker run in a mount namespace of their own, with a private tmpfs on
//! `/tmp` and a private `HOME`, as on machines of their own; they share
//! only what docs/cluster.md says is shared: the PostgreSQL server (over
//! TCP), the versions' folder and the league's folder (its file, its
//! game and the entrants' folders). Tests that share one machine's
//! `/tmp` cannot see a path that only one machine has: issue 48.1 was
//! compiled entrants stored as `/tmp/referee-snapshot-PID-N/0/pc2`, the
//! coordinator's own copy, which no worker elsewhere can start.
//!
//! Needs root (the server runs as `postgres`, and `unshare -m` and
//! `mount`): without it, or where namespaces cannot be made, the test
//! skips and says why.

mod common;

use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::league::games;
use common::postgres::Server;
use common::{MARKER_ENV, Marker, referee_bin, write_file};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Run by `sh -c` in a new mount namespace before the referee: a tmpfs
/// of its own on `/tmp` (so nothing another "machine" wrote there is
/// seen, and nothing written there is seen elsewhere), `HOME` and the
/// working folder in it, and `TMPDIR` pointing at it whatever the test
/// was given.
const OWN_MACHINE: &str = "mount -t tmpfs tmpfs /tmp && mkdir /tmp/home && cd /tmp/home \
                           && HOME=/tmp/home TMPDIR=/tmp exec \"$@\"";

/// The most a step may take before the test fails rather than hangs:
/// far more than a loaded two-core machine needs.
const DEADLINE: Duration = Duration::from_secs(120);

/// `referee ARGS` on a "machine" of its own (see [`OWN_MACHINE`]), its
/// output in files; its process group killed when dropped, so that a
/// failing test leaves nothing behind.
struct Machine {
    name: String,
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Machine {
    fn start(name: &str, logs: &Path, args: &[&str], marker: &Marker) -> Machine {
        let stdout = logs.join(format!("{name}.out"));
        let stderr = logs.join(format!("{name}.err"));
        let mut cmd = Command::new("unshare");
        cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
            .args([OWN_MACHINE, name, referee_bin()])
            .args(MARKER_ENV)
            .args(args)
            // Its own group: dropped, the test kills `unshare`, `sh` and
            // the referee (one process after the `exec`s) all at once.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(File::create(&stdout).unwrap())
            .stderr(File::create(&stderr).unwrap());
        marker.apply(&mut cmd);
        Machine {
            name: name.to_owned(),
            child: cmd.spawn().expect("start unshare"),
            stdout,
            stderr,
        }
    }

    fn stdout(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap_or_default()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn output(&self) -> String {
        format!(
            "{}'s stdout:\n{}\n{}'s stderr:\n{}",
            self.name,
            self.stdout(),
            self.name,
            self.stderr()
        )
    }

    /// Waits until `what` holds of its output; its end meanwhile fails
    /// the test.
    fn wait(&mut self, what: &str, holds: impl Fn(&str, &str) -> bool) {
        let deadline = Instant::now() + DEADLINE;
        while !holds(&self.stdout(), &self.stderr()) {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "{} ended ({status}) before {what}:\n{}",
                    self.name,
                    self.output()
                );
            }
            assert!(
                Instant::now() < deadline,
                "never saw {what}:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for its end by itself: its exit status.
    fn finish(&mut self) -> Option<i32> {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                Instant::now() < deadline,
                "{} never ended:\n{}",
                self.name,
                self.output()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `signal` to the referee and waits for its end: its exit
    /// status.
    fn end(&mut self, signal: Signal) -> Option<i32> {
        common::signal(&self.child, signal);
        self.finish()
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// A server of the test's own, or why not (the test then skips).
fn server(under: &Path) -> Option<Server> {
    match Server::start(under) {
        Ok(server) => Some(server),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// Whether "machines" of their own can be made here, or why not: a mount
/// namespace with a tmpfs of its own (a container may refuse it even to
/// root), and the referee and the test's folders outside `/tmp`, which
/// each machine hides behind its own.
fn can_unshare() -> Result<(), String> {
    for (what, path) in [
        ("the referee", referee_bin()),
        ("the test's folders", env!("CARGO_TARGET_TMPDIR")),
    ] {
        if Path::new(path).starts_with("/tmp") {
            return Err(format!(
                "{what} ({path}) under /tmp, which each machine here hides"
            ));
        }
    }
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("mount -t tmpfs tmpfs /tmp")
        .output()
        .map_err(|e| format!("cannot run unshare: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "no mount namespace of its own here (unshare -m, mount -t tmpfs): {}",
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}

fn write_program(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `subs/NAME` of `league`: a duel player in C, built by its Makefile
/// into a binary `pc2` that answers `answer` to every game.
fn compiled(league: &Path, name: &str, answer: u32) {
    let folder = league.join("subs").join(name);
    write_file(
        &folder,
        "pc2.c",
        "#include <stdio.h>\n\
         int main(void) {\n\
         \x20   char line[64];\n\
         \x20   while (fgets(line, sizeof line, stdin)) {\n\
         \x20       printf(\"%d\\n\", ANSWER);\n\
         \x20       fflush(stdout);\n\
         \x20   }\n\
         \x20   return 0;\n\
         }\n",
    );
    write_file(
        &folder,
        "Makefile",
        format!("pc2: pc2.c\n\tgcc -O1 -DANSWER={answer} -o pc2 pc2.c\n"),
    );
}

/// The league's folder, as its author would lay it out: the duel game
/// (its file and judge copied in, so that nothing of it is outside the
/// shared folder), a compiled entrant and two scripts (sh and Python).
/// Returns the league's file.
fn league_folder(league: &Path) -> PathBuf {
    let game = league.join("game");
    std::fs::create_dir_all(&game).unwrap();
    for file in ["game.toml", "judge.py"] {
        std::fs::copy(common::fixture(&format!("duel/{file}")), game.join(file)).unwrap();
    }
    compiled(league, "ann", 2);
    let bob = league.join("subs/bob");
    std::fs::create_dir_all(&bob).unwrap();
    write_program(
        &bob.join("pc2"),
        "#!/bin/sh\nwhile read -r _ _; do echo 1; done\n",
    );
    let cat = league.join("subs/cat");
    std::fs::create_dir_all(&cat).unwrap();
    write_program(
        &cat.join("pc2"),
        "#!/usr/bin/env python3\nimport sys\n\nfor line in sys.stdin:\n    \
         print(int(line.split()[1]) % 3, flush=True)\n",
    );
    common::league::glob_file(league, &game.join("game.toml"))
}

/// The games a league started again had (`... (K games so far);
/// playing: ...`).
fn restarted_at(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|line| line.split_once(" games so far)"))
        .and_then(|(start, _)| start.rsplit_once('(')?.1.parse().ok())
        .unwrap_or_else(|| panic!("no count of games so far: {stderr}"))
}

/// A league whose coordinator and workers are each on a machine of their
/// own: compiled entrants beside scripts, a worker started before the
/// league and one after it, an entrant (compiled) that joins mid-league,
/// the coordinator stopped (SIGTERM) and started again mid-league, where
/// it builds the compiled ones again. Every game is played (none
/// `cannot_start`, nor any other failure the machines caused), numbered
/// 1..=N with no gap, every entrant plays after the restart, and the
/// workers end by themselves once the league has its games.
#[test]
fn a_league_on_separate_machines_plays_every_entrant_from_the_shared_folders() {
    const GAMES: usize = 60;
    let Some(server) = server(Path::new(env!("CARGO_TARGET_TMPDIR"))) else {
        return;
    };
    if let Err(why) = can_unshare() {
        eprintln!("skipped: {why}");
        return;
    }
    // Not under /tmp, which every machine here hides behind its own.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let league = dir.path().join("league");
    let file = league_folder(&league);
    let versions = dir.path().join("versions");
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let url = server.url();
    let marker = Marker::new();
    let worker = |name: &str| {
        let args = [
            "league", "work", "--db", &url, "--jobs", "1", "--name", name,
        ];
        Machine::start(name, &logs, &args, &marker)
    };
    let games_arg = GAMES.to_string();
    let (file, versions) = (file.to_str().unwrap(), versions.to_str().unwrap());
    let mut run = vec!["league", "run", file, "--db", &url, "--versions", versions];
    // --jobs 0: only the workers play; --scan-every: dan is found soon.
    run.extend(["--jobs", "0", "--games", &games_arg, "--scan-every", "1s"]);

    let mut early = worker("early");
    early.wait("the early worker waiting", |_, err| {
        err.contains("waiting for a league")
    });
    let mut coordinator = Machine::start("coordinator", &logs, &run, &marker);
    coordinator.wait("the league playing", |_, err| err.contains("playing: "));
    let mut late = worker("late");
    coordinator.wait("four games", |out, _| games(out) >= 4);
    // It joins mid-league, found by the coordinator's look at the folders;
    // a new version plays first, so its games come soon.
    compiled(&league, "dan", 3);
    coordinator.wait("a game of dan", |out, _| out.contains("dan@v1"));
    let code = coordinator.end(Signal::SIGTERM);
    assert!(
        matches!(code, Some(0 | 130 | 143)),
        "{code:?}\n{}",
        coordinator.output()
    );
    let before = coordinator.output();
    drop(coordinator);

    // Started again on a machine of its own: a /tmp that the first one's
    // files never were in; the workers play on meanwhile.
    let mut coordinator = Machine::start("coordinator-again", &logs, &run, &marker);
    coordinator.wait("the league playing again", |_, err| {
        err.contains("playing: ")
    });
    let restarted = restarted_at(&coordinator.stderr());
    assert_eq!(coordinator.finish(), Some(0), "{}", coordinator.output());
    let mut played = 0;
    for worker in [&mut early, &mut late] {
        assert_eq!(worker.finish(), Some(0), "{}", worker.output());
        assert!(
            worker.stderr().contains("the league has its games; done"),
            "{}",
            worker.output()
        );
        // A version it cannot play here would be declined, and a game it
        // fails itself voided (not recorded): the records would not show it.
        let err = worker.stderr();
        assert!(
            !err.contains(" cannot play ") && !err.contains("a game void"),
            "{}",
            worker.output()
        );
        assert!(games(&worker.stdout()) > 0, "{}", worker.output());
        played += games(&worker.stdout());
    }

    // Exported here: it only reads the database.
    let records = common::league::exported(dir.path(), &url);
    let failed: Vec<String> = records
        .iter()
        .flat_map(|r| {
            let seats = r["players"].as_array().unwrap().iter();
            seats.filter(|seat| seat["status"] != "ok").map(|seat| {
                let (who, status) = (&seat["entrant"], &seat["status"]);
                format!("game {}: {who} {status}: {}", r["index"], seat["error"])
            })
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} seats of {} games failed on a machine of their own:\n{}\n\
         the first coordinator:\n{before}\n{}\n{}\n{}",
        failed.len(),
        records.len(),
        failed.join("\n"),
        coordinator.output(),
        early.output(),
        late.output()
    );
    let indexes: Vec<u64> = records
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, (1..=GAMES as u64).collect::<Vec<_>>());
    assert_eq!(played, GAMES, "the workers played every game, none twice");
    // The compiled ones too, and after the restart (which built them
    // again, on another machine's /tmp).
    for name in ["ann@v1", "bob@v1", "cat@v1", "dan@v1"] {
        assert!(
            records
                .iter()
                .any(|r| r["index"].as_u64().unwrap() > restarted
                    && r["players"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|seat| seat["entrant"] == name)),
            "{name} played no game after the restart (at {restarted} games)"
        );
    }
    drop((early, late, coordinator));
    marker.assert_none_left();
}
