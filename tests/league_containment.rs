//! A league's workers decide their own containment (issue 49), through
//! the real binary on a PostgreSQL server of the test's own
//! (`common::postgres`; skipped, saying why, where it cannot run):
//!
//! - whoever writes the database (a bot that reached it, failure 2) can
//!   neither take a worker's `--sandbox` away nor make it run a program
//!   outside its versions' folder;
//! - a worker finds the database's password in `~/.pgpass`, as libpq's
//!   clients do, where no bot reads it from `/proc` (failure 3);
//! - a worker without `--sandbox` says what its bots can read.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::league::{Running, games};
use common::postgres::Server;
use common::{Marker, assert_has, assert_lacks};

/// Writes an executable `path` holding `text`.
fn script(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `dir/league.toml`: the duel game over `dir/subs/*`, whose bots are
/// `bots` (name, its `pc2`'s text).
fn class(dir: &Path, bots: &[(&str, String)]) -> PathBuf {
    for (name, text) in bots {
        script(&dir.join("subs").join(name).join("pc2"), text);
    }
    common::league::duel_glob_file(dir)
}

/// `league run FILE --db URL --versions VERSIONS --jobs 0`: a league
/// whose games its workers play.
fn league_args<'a>(file: &'a Path, url: &'a str, versions: &'a Path) -> Vec<&'a str> {
    let (file, versions) = (text(file), text(versions));
    vec![
        "league",
        "run",
        file,
        "--db",
        url,
        "--versions",
        versions,
        "--jobs",
        "0",
    ]
}

/// A duel bot's moves after whatever `before` does.
fn bot(before: &str) -> String {
    format!("#!/bin/sh\n{before}\nread -r _ _\necho 1\n")
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Failure 2: a bot that reached the database set its bots' limits'
/// `sandbox` to false and rewrote a stored player's program to a script
/// of its own, outside the versions' folder; every worker started after
/// that ran every bot unsandboxed, and the script on each. A worker
/// started with `--sandbox` keeps it: its bots still cannot see the
/// league's folder, the script is declined and never runs, and the
/// other versions play. A worker without `--sandbox` is refused by a
/// league that asks for it, and the league's file rewritten in the
/// database is refused, naming the file the worker sees and the database.
#[test]
fn a_worker_keeps_its_sandbox_and_runs_nothing_outside_its_versions() {
    common::need_bwrap();
    let Some(server) = Server::or_skip() else {
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (canary, written) = (dir.path().join("canary"), dir.path().join("written"));
    std::fs::write(&canary, "the league's folder").unwrap();
    // ann crashes whenever it can see the league's folder.
    let peek = format!(
        "if [ -e {} ]; then echo 'saw the canary' >&2; exit 1; fi",
        text(&canary)
    );
    let file = class(
        dir.path(),
        &[("ann", bot(&peek)), ("bob", bot("")), ("cat", bot(""))],
    );
    let evil = dir.path().join("evil.sh");
    script(&evil, &bot(&format!("touch {}", text(&written))));
    let (url, versions) = (server.url(), dir.path().join("versions"));
    let marker = Marker::new();
    let mut league_args = league_args(&file, &url, &versions);
    league_args.push("--sandbox");
    let mut league = Running::start_in(dir.path(), &league_args, &marker);
    league.wait("every version entered", |_, err| {
        err.contains("cat@v1 enters")
    });

    // The league asks for --sandbox: a worker without it does not play.
    let worker_args = |name: &'static str, sandbox: bool| {
        let mut args = vec![
            "league",
            "work",
            text(&file),
            "--db",
            &url,
            "--versions",
            text(&versions),
            "--jobs",
            "1",
            "--name",
            name,
        ];
        if sandbox {
            args.push("--sandbox");
        }
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let loose = worker_args("loose", false);
    let loose: Vec<&str> = loose.iter().map(String::as_str).collect();
    let mut loose = Running::start_in(dir.path(), &loose, &marker);
    let code = loose.finish_within(Duration::from_secs(15));
    let err = loose.stderr();
    assert_eq!(code, Some(Some(64)), "{err}");
    assert_has(&err, "--sandbox");
    assert_eq!(games(&loose.stdout()), 0, "{}", loose.stdout());

    // The league's file in the database, written by another hand: the
    // worker plays the file it sees, or nothing.
    let tampered = "# another hand";
    let tamper = |sql: &str| server.psql_league(sql).unwrap();
    tamper(&format!(
        "UPDATE meta SET value = value || '{tampered}' WHERE key = 'league_text'"
    ));
    let other = worker_args("other", true);
    let other: Vec<&str> = other.iter().map(String::as_str).collect();
    let mut other = Running::start_in(dir.path(), &other, &marker);
    let code = other.finish_within(Duration::from_secs(15));
    let err = other.stderr();
    assert_eq!(code, Some(Some(64)), "{err}");
    assert!(err.contains(text(&file)) && err.contains(&url), "{err}");
    assert_has(&err, tampered);
    tamper(&format!(
        "UPDATE meta SET value = left(value, -{}) WHERE key = 'league_text'",
        tampered.len()
    ));

    // The attack, as the bot made it.
    let player = serde_json::json!({
        "name": "bob@v1", "program": text(&evil), "args": [], "dir": null, "hide": [],
        "env": null, "options": {}, "time_control": null,
    });
    server
        .psql_league(&format!(
            "UPDATE meta SET value = replace(value, '\"sandbox\":true', '\"sandbox\":false') \
             WHERE key = 'limits'; \
             UPDATE versions SET player = '{player}' WHERE entrant = \
             (SELECT id FROM entrants WHERE name = 'bob');"
        ))
        .unwrap();

    let tight = worker_args("tight", true);
    let tight: Vec<&str> = tight.iter().map(String::as_str).collect();
    let mut tight = Running::start_in(dir.path(), &tight, &marker);
    tight.wait("four games", |out, _| games(out) >= 4);
    let (out, err) = (tight.stdout(), tight.stderr());
    for line in out.lines().filter(|l| l.starts_with("game ")) {
        assert!(!line.contains("bob"), "{out}\n{err}");
        assert!(
            !line.contains("crashed"),
            "ann saw the league's folder:\n{out}\n{err}"
        );
    }
    assert!(out.contains("ann@v1"), "{out}\n{err}");
    assert!(
        err.contains("cannot play bob@v1") && err.contains(text(&evil)),
        "{err}"
    );
    assert!(!written.exists(), "the script ran:\n{out}\n{err}");
    drop(tight);
    drop(league);
    marker.assert_none_left();
}

/// Failure 3: a worker given the database's password in `PGPASSWORD`
/// showed it to every bot not sandboxed (`/proc/PID/environ`). Given in
/// `~/.pgpass` (a role that logs in with scram-sha-256, a password with
/// `:` and `\` in it, escaped as libpq reads them), the coordinator and
/// the worker connect, and a bot that reads every process's environment
/// and command line finds the worker's but not the password. A password
/// file others may read is not read, with libpq's warning.
#[test]
fn a_password_in_pgpass_connects_and_no_bot_finds_it_in_proc() {
    let Some(server) = Server::or_skip() else {
        return;
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let token = format!("pw{}n{nanos}", std::process::id());
    let password = format!("a:b\\{token}");
    let url = server.password_role("pwrole", &password).unwrap();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (home, dumps) = (dir.path().join("home"), dir.path().join("dumps"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&dumps).unwrap();
    let scan = format!(
        "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat \"$f\"; echo; done \
         > {}/dump-$$ 2>/dev/null",
        text(&dumps)
    );
    let file = class(
        dir.path(),
        &[("ann", bot(&scan)), ("bob", bot(&scan)), ("cat", bot(""))],
    );
    let pgpass = home.join(".pgpass");
    let port = server.port();
    std::fs::write(
        &pgpass,
        format!(
            "# the league's\nnothere:*:*:*:wrong\n127.0.0.1:{port}:pwrole:pwrole:a\\:b\\\\{token}\n"
        ),
    )
    .unwrap();
    let home_env = [("HOME", text(&home))];
    let versions = dir.path().join("versions");
    let league_args = league_args(&file, &url, &versions);

    // Readable by others: not read, as libpq says.
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let open = common::referee_with(&league_args, b"", &home_env, Some(dir.path()));
    assert_eq!(open.code, Some(64), "{open:?}");
    assert_has(&open.stderr, "has group or world access");

    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let marker = Marker::new();
    let mut league = Running::start_env(dir.path(), &league_args, &home_env, &marker);
    league.wait("every version entered", |_, err| {
        err.contains("cat@v1 enters")
    });
    let worker_env = [
        ("HOME", text(&home)),
        ("ONLY_IN_THE_WORKER", "sentinel-of-the-worker"),
    ];
    let worker_args = [
        "league", "work", "--db", &url, "--jobs", "1", "--name", "w-pgpass",
    ];
    let mut worker = Running::start_env(dir.path(), &worker_args, &worker_env, &marker);
    worker.wait("four games", |out, _| games(out) >= 4);

    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&dumps).unwrap() {
        seen.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    let seen = String::from_utf8_lossy(&seen);
    // The bots read the worker's environment and command line...
    assert_has(&seen, "sentinel-of-the-worker");
    assert_has(&seen, "w-pgpass");
    // ... and no password there.
    assert!(!seen.contains(&token), "the password is in /proc");
    drop(worker);
    drop(league);
    marker.assert_none_left();
}

/// A worker without `--sandbox` says at its start, once, what its bots
/// can read: its environment, `PGPASSWORD` in it, and its command line.
#[test]
fn a_worker_without_its_sandbox_says_what_a_bot_can_read() {
    let Some(server) = Server::or_skip() else {
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let marker = Marker::new();
    let url = server.url();
    let args = ["league", "work", "--db", &url, "--name", "w"];
    let env = [("PGPASSWORD", "unused-here")];
    let mut worker = Running::start_env(dir.path(), &args, &env, &marker);
    worker.wait("the worker waits for its league", |_, err| {
        err.contains("waiting for a league")
    });
    let err = worker.stderr();
    assert_eq!(err.matches("without --sandbox").count(), 1, "{err}");
    for said in ["PGPASSWORD", "~/.pgpass", "environment", "command line"] {
        assert!(err.contains(said), "{said}: {err}");
    }
    assert_lacks(&err, "unused-here");
    drop(worker);

    // Under --sandbox a bot sees neither: nothing to say.
    let args = ["league", "work", "--db", &url, "--name", "w", "--sandbox"];
    let mut worker = Running::start_env(dir.path(), &args, &env, &marker);
    worker.wait("the worker waits for its league", |_, err| {
        err.contains("waiting for a league")
    });
    assert!(
        !worker.stderr().contains("without --sandbox"),
        "{}",
        worker.stderr()
    );
    drop(worker);
    marker.assert_none_left();
}
