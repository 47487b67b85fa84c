//! A league through the real binary: one started in the background, its
//! output in files, waited on; and its games as `league export` writes
//! them.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Marker;

/// What a league that sees its class's pushes while it runs is started
/// with here: one game at a time, its folders looked at every tenth of a
/// second.
pub const QUICK: [&str; 4] = ["--jobs", "1", "--scan-every", "100ms"];

/// The arguments of `referee league run FILE --db DB ARGS`.
pub fn run_args<'a>(file: &'a Path, db: &'a Path, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec![
        "league",
        "run",
        file.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ];
    all.extend(args);
    all
}

/// `referee league run FILE --db DB ARGS`, to its end.
pub fn run(file: &Path, db: &Path, args: &[&str]) -> super::Run {
    super::referee(run_args(file, db, args), b"")
}

/// A league started in the background, its output in files; killed when
/// dropped, so that a test that fails leaves none behind.
pub struct Running {
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Running {
    /// `referee league run FILE --db DB ARGS`, its output beside DB.
    pub fn start(file: &Path, db: &Path, args: &[&str], marker: &Marker) -> Running {
        Running::start_in(db.parent().unwrap(), &run_args(file, db, args), marker)
    }

    /// `referee ARGS` started in `dir`, its output in files there (a
    /// league started again there writes new ones).
    pub fn start_in(dir: &Path, args: &[&str], marker: &Marker) -> Running {
        Running::start_env(dir, args, &[], marker)
    }

    /// [`Running::start_in`] with `env` set in the referee's environment.
    pub fn start_env(dir: &Path, args: &[&str], env: &[(&str, &str)], marker: &Marker) -> Running {
        let mut cmd = super::command(args, marker);
        cmd.envs(env.iter().copied()).current_dir(dir);
        Running::spawn(cmd, dir)
    }

    /// `cmd` started in the background, its output in files in `dir`.
    pub fn spawn(mut cmd: Command, dir: &Path) -> Running {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let (stdout, stderr) = (
            dir.join(format!("out-{n}.txt")),
            dir.join(format!("err-{n}.txt")),
        );
        let child = cmd
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        Running {
            child,
            stdout,
            stderr,
        }
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Games it printed as finished so far.
    pub fn games(&self) -> usize {
        games(&self.stdout())
    }

    /// Waits (60 s at most: a frozen league fails, it does not hang the
    /// test) until `what` holds of the league's output; a league that
    /// ended meanwhile fails the test with its status.
    pub fn wait(&mut self, what: &str, holds: impl Fn(&str, &str) -> bool) {
        self.wait_for(what, |league| {
            holds(&league.stdout(), &league.stderr()).then_some(())
        });
    }

    /// [`Running::wait`] until `found` finds something in the league: that.
    pub fn wait_for<T>(&mut self, what: &str, mut found: impl FnMut(&Running) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(it) = found(self) {
                return it;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "the league ended ({status}) before {what}:\n{}\n{}",
                    self.stdout(),
                    self.stderr()
                );
            }
            assert!(
                Instant::now() < deadline,
                "never saw {what}:\n{}\n{}",
                self.stdout(),
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until `more` games have finished after those printed now.
    pub fn wait_games(&mut self, more: usize, what: &str) {
        let then = games(&self.stdout());
        self.wait(what, |out, _| games(out) >= then + more);
    }

    /// Waits for the league to end by itself (`--games`): its exit status.
    pub fn finish(&mut self) -> Option<i32> {
        self.child.wait().unwrap().code()
    }

    /// [`Running::finish`], which must be a success (exit 0); the test
    /// fails showing what it wrote on standard error otherwise.
    #[track_caller]
    pub fn finish_ok(&mut self) {
        assert_eq!(self.finish(), Some(0), "{}", self.stderr());
    }

    /// Waits at most `within` for it to end: its exit status then
    /// (`None` inside: killed by a signal), or `None` while it runs.
    pub fn finish_within(&mut self, within: Duration) -> Option<Option<i32>> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status.code());
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Sends `signal` and waits for the league's end: its exit status.
    pub fn end(mut self, signal: nix::sys::signal::Signal) -> Option<i32> {
        self.stop(signal)
    }

    /// Ends it as an organiser's Ctrl-C does (SIGTERM): it must exit 130,
    /// leave none of its processes behind and not panic. What it wrote on
    /// standard error.
    #[track_caller]
    pub fn interrupt(self, marker: &Marker) -> String {
        let stderr = self.stderr();
        assert_eq!(
            self.end(nix::sys::signal::Signal::SIGTERM),
            Some(130),
            "{stderr}"
        );
        marker.assert_none_left();
        super::assert_lacks(&stderr, "panicked");
        stderr
    }

    /// [`Running::end`], with what the league printed on standard output.
    pub fn end_with_stdout(mut self, signal: nix::sys::signal::Signal) -> (Option<i32>, String) {
        let code = self.stop(signal);
        (code, self.stdout())
    }

    /// [`Running::end`], its output still there to read.
    pub fn stop(&mut self, signal: nix::sys::signal::Signal) -> Option<i32> {
        super::signal(&self.child, signal);
        self.child.wait().unwrap().code()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Games the league printed as finished (`game N: ...` lines).
pub fn games(stdout: &str) -> usize {
    stdout.lines().filter(|l| l.starts_with("game ")).count()
}

/// `referee league export DB OUT`, which must succeed. DB: a SQLite
/// file or a PostgreSQL URL.
pub fn export(db: impl AsRef<OsStr>, out: &Path) {
    super::referee_ok([
        OsStr::new("league"),
        OsStr::new("export"),
        db.as_ref(),
        out.as_os_str(),
    ]);
}

/// The league's games, as `referee league export DB DIR/export` writes
/// them.
pub fn exported(dir: &Path, db: impl AsRef<OsStr>) -> Vec<Value> {
    let out = dir.join("export");
    let _ = std::fs::remove_dir_all(&out);
    export(db, &out);
    super::jsonl(&out.join("records.jsonl"))
}

/// [`exported`], which must be `games` games numbered 1, 2, ... in the
/// order they finished.
#[track_caller]
pub fn exported_numbered(dir: &Path, db: impl AsRef<OsStr>, games: usize) -> Vec<Value> {
    let records = exported(dir, db);
    assert_eq!(records.len(), games);
    assert_numbered(&records);
    records
}

/// The build log a league's SQLite database keeps of `name`'s version
/// `version`.
pub fn build_log(db: &Path, name: &str, version: u32) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(
        "SELECT coalesce(v.build_log, '') FROM versions v JOIN entrants e ON e.id = v.entrant \
         WHERE e.name = ?1 AND v.version = ?2",
        rusqlite::params![name, version],
        |r| r.get(0),
    )
    .unwrap()
}

/// The entrants seated in a game, by seat.
pub fn entrants(record: &Value) -> Vec<String> {
    record["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["entrant"].as_str().unwrap().to_owned())
        .collect()
}

/// Games numbered 1, 2, ... in the order they finished, none twice.
pub fn assert_numbered(records: &[Value]) {
    let indexes: Vec<u64> = records
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = (1..=records.len() as u64).collect();
    assert_eq!(indexes, expected);
}

/// `DIR/NAME`: a league of Chomp at tables of three on the statement's
/// array, seed 1, its entrants `entrants` (the file's `[[entrant]]`
/// tables).
pub fn chomp_of_three(dir: &Path, name: &str, entrants: &str) -> PathBuf {
    super::write_file(
        dir,
        name,
        format!(
            "game = \"chomp\"\nseed = 1\n[limits]\nprep = \"0s\"\n\
             arrays = \"{}/tournaments/chomp/statement.txt\"\nseats = 3\n{entrants}",
            env!("CARGO_MANIFEST_DIR")
        ),
    )
}

/// A league over `subs/*` in `dir`: one folder per name, each a duel
/// player (`weak.sh`, or `strong.sh` for the names in `strong`) as its
/// `pc2`. Returns the league file.
pub fn duel_class(dir: &Path, names: &[&str], strong: &[&str]) -> PathBuf {
    for name in names {
        let folder = dir.join("subs").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let bot = if strong.contains(name) {
            "strong"
        } else {
            "weak"
        };
        std::fs::copy(
            super::fixture(&format!("duel/{bot}.sh")),
            folder.join("pc2"),
        )
        .unwrap();
    }
    duel_glob_file(dir)
}

/// `DIR/league.toml`: a league of the duel game over `DIR/subs/*`, seed 3.
pub fn duel_glob_file(dir: &Path) -> PathBuf {
    glob_file(dir, Path::new(&super::fixture("duel/game.toml")))
}

/// `DIR/league.toml`: a league of the game of two seats `game` (its
/// file) over `DIR/subs/*`, seed 3.
pub fn glob_file(dir: &Path, game: &Path) -> PathBuf {
    super::write_file(
        dir,
        "league.toml",
        format!(
            "game = \"{}\"\nseed = 3\n[limits]\nseats = 2\n[[entrant]]\nglob = \"subs/*\"\n",
            game.display()
        ),
    )
}
