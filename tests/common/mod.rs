//! Helpers for tests that run the real `referee` binary against real bot
//! processes, and check that no process is left behind.
#![allow(dead_code)]

pub mod league;
pub mod package;
pub mod page;
pub mod postgres;

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// No test run may take longer than this; a hung referee is killed and the
/// test fails instead of hanging the suite.
const HARD_LIMIT: Duration = Duration::from_secs(120);

pub fn referee_bin() -> &'static str {
    env!("CARGO_BIN_EXE_referee")
}

pub fn evensteven_bin() -> &'static str {
    env!("CARGO_BIN_EXE_evensteven")
}

pub fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A unique value put in the environment of each referee run. Every process
/// the run starts carries it (bots and builds because the helpers pass
/// [`MARKER_ENV`]), so any process still carrying it after the run is a
/// leftover.
pub struct Marker(String);

/// The referee's options that pass the marker on to bots and builds, which
/// otherwise get a clean environment: the helpers put them first.
pub const MARKER_ENV: [&str; 2] = ["--env", "REFEREE_TEST_MARKER"];

impl Marker {
    pub fn new() -> Marker {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        Marker(format!(
            "REFEREE_TEST_MARKER={}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Puts the marker in the environment of `cmd` (and so of every
    /// process it starts).
    pub fn apply(&self, cmd: &mut Command) {
        let (key, value) = self.0.split_once('=').unwrap();
        cmd.env(key, value);
    }

    /// Processes still alive (not zombies) that carry this marker.
    pub fn survivors(&self) -> Vec<String> {
        let needle = self.0.as_bytes();
        let mut found = vec![];
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return found;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            if environ.split(|&b| b == 0).any(|var| var == needle) {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                found.push(format!("{pid}: {cmdline}"));
            }
        }
        found
    }

    /// Fails the test if any process carrying the marker is still alive
    /// after a short settling time (SIGKILLed processes take a moment to go).
    pub fn assert_none_left(&self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let survivors = self.survivors();
            if survivors.is_empty() {
                return;
            }
            if Instant::now() > deadline {
                panic!("processes left behind: {survivors:#?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `--env NAME=VALUE` for each of `vars`: what a test's bots and builds
/// need from the environment (they do not see the referee's). And the
/// folder of the test's own programs (`EVENSTEVEN`, which probes run by
/// its full path) shown to sandboxed bots, as an organiser would show a
/// course's tools with `--sandbox-show`.
pub fn env_args(vars: &[(&str, &str)]) -> Vec<String> {
    let programs = std::path::Path::new(evensteven_bin()).parent().unwrap();
    vars.iter()
        .flat_map(|(name, value)| ["--env".to_owned(), format!("{name}={value}")])
        .chain(["--sandbox-show".to_owned(), programs.display().to_string()])
        .collect()
}

/// The result of one referee run.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    /// The signal that ended the referee, if one did (`SIGABRT` is 6).
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Run {
    pub fn stdout_lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }

    /// Fails the test, showing the run, unless it ended with status
    /// `code` and its standard output holds `part`.
    #[track_caller]
    pub fn expect_stdout(&self, code: i32, part: &str) {
        assert_eq!(self.code, Some(code), "{self:?}");
        assert!(self.stdout.contains(part), "{self:?}");
    }

    /// Fails the test, showing the run, unless it ended with status
    /// `code` and its standard error holds `part`.
    #[track_caller]
    pub fn expect_stderr(&self, code: i32, part: &str) {
        assert_eq!(self.code, Some(code), "{self:?}");
        assert!(self.stderr.contains(part), "{self:?}");
    }
}

/// Runs `referee ARGS` with `input` on its stdin, waits for it (killing it
/// at the hard limit) and checks that nothing it started is left running.
pub fn referee<I, S>(args: I, input: &[u8]) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    referee_with(args, input, &[], None)
}

/// [`referee`] with no input, which must succeed (exit 0).
pub fn referee_ok<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let run = referee(args, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    run
}

/// [`referee`] with extra environment variables (the referee's own: bots
/// and builds get them with [`env_args`]) and a working directory.
pub fn referee_with<I, S>(
    args: I,
    input: &[u8],
    env: &[(&str, &str)],
    dir: Option<&std::path::Path>,
) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let marker = Marker::new();
    let mut cmd = piped(args, &marker);
    for (key, value) in env {
        cmd.env(key, value);
    }
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let child = cmd.spawn().expect("start referee");
    let run = finish(child, input);
    marker.assert_none_left();
    run
}

/// Starts `referee ARGS` with piped stdio and the marker in its environment.
pub fn start<I, S>(args: I, marker: &Marker) -> Child
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    piped(args, marker).spawn().expect("start referee")
}

/// [`command`] with its standard streams piped.
fn piped<I, S>(args: I, marker: &Marker) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = command(args, marker);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `referee ARGS` with the marker in its environment, not started yet:
/// for tests that arrange its standard streams themselves.
pub fn command<I, S>(args: I, marker: &Marker) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(referee_bin());
    cmd.args(MARKER_ENV).args(args);
    marker.apply(&mut cmd);
    cmd
}

/// Writes `input` to the standard input of a referee started with
/// [`start`], which stays open: the referee waits for more.
pub fn feed(child: &mut Child, input: &[u8]) {
    let stdin = child.stdin.as_mut().unwrap();
    stdin.write_all(input).unwrap();
    stdin.flush().unwrap();
}

/// Sends `signal` to a referee started with [`start`].
pub fn signal(child: &Child, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
}

/// Waits (a minute at most) until `file` holds at least `lines` lines: a
/// run in progress has written that many records.
pub fn wait_for_lines(file: &std::path::Path, lines: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(file).map_or(0, |t| t.lines().count()) < lines {
        assert!(
            Instant::now() < deadline,
            "the run never wrote {lines} records"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Feeds `input`, collects the output and waits, with the hard limit.
pub fn finish(child: Child, input: &[u8]) -> Run {
    finish_polling(child, input, |child| child.try_wait().unwrap())
}

/// [`referee`] in an address space of at most `address_space` bytes,
/// with the most memory it held at once (its peak resident set, in
/// bytes). An allocation past the limit fails, as on a machine that
/// cannot lend that much, where this one might overcommit it.
pub fn referee_in_memory<I, S>(args: I, address_space: u64) -> (Run, u64)
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    use nix::sys::resource::{Resource, setrlimit};
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let marker = Marker::new();
    let mut cmd = piped(args, &marker);
    // SAFETY: setrlimit is a plain system call, safe between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            setrlimit(Resource::RLIMIT_AS, address_space, address_space)
                .map_err(std::io::Error::from)
        });
    }
    let child = cmd.spawn().expect("start referee");
    let mut peak_kib = 0;
    // wait4 rather than waitpid: it gives the child's resource usage.
    let run = finish_polling(child, b"", |child| {
        let mut status = 0;
        // SAFETY: rusage is plain data, filled in by wait4.
        let mut usage: nix::libc::rusage = unsafe { std::mem::zeroed() };
        let pid = child.id() as i32;
        // SAFETY: both pointers are to locals that outlive the call.
        let got = unsafe { nix::libc::wait4(pid, &mut status, nix::libc::WNOHANG, &mut usage) };
        assert!(got >= 0, "wait4: {}", std::io::Error::last_os_error());
        peak_kib = usage.ru_maxrss as u64;
        (got == pid).then(|| std::process::ExitStatus::from_raw(status))
    });
    marker.assert_none_left();
    (run, peak_kib * 1024)
}

/// [`finish`], `poll` saying whether the child has ended.
fn finish_polling(
    mut child: Child,
    input: &[u8],
    mut poll: impl FnMut(&mut Child) -> Option<std::process::ExitStatus>,
) -> Run {
    use std::os::unix::process::ExitStatusExt;
    let started = Instant::now();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Writing may fail if the referee stops reading early; that is fine.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stdout.read_to_end(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = poll(&mut child) {
            break status;
        }
        if started.elapsed() > HARD_LIMIT {
            let _ = child.kill();
            panic!("referee did not finish within {HARD_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = started.elapsed();
    writer.join().unwrap();
    Run {
        code: status.code(),
        signal: status.signal(),
        stdout: String::from_utf8_lossy(&out.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err.join().unwrap()).into_owned(),
        elapsed,
    }
}

/// An Even Steven deal computed independently of the crate's code: the
/// original dealer's shuffle, written out again from its description.
pub struct NaiveDeal {
    pub hand: Vec<(u32, String)>,
    pub to_cover: Vec<(u32, String)>,
}

pub fn naive_deal(n: usize, seed: u32) -> NaiveDeal {
    const VALUES: [&str; 13] = [
        "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A",
    ];
    const SUITS: [&str; 4] = ["c", "d", "h", "s"];
    let mut deck: Vec<(u32, String)> = (0..52)
        .map(|i| {
            (
                i as u32 / 4 + 2,
                format!("{}{}", VALUES[i / 4], SUITS[i % 4]),
            )
        })
        .collect();
    let mut state = i64::from(seed);
    for i in 0..=50usize {
        state = state * 16807 % 2_147_483_647;
        let j = i + state as usize % (52 - i);
        deck.swap(i, j);
    }
    NaiveDeal {
        hand: deck[..n].to_vec(),
        to_cover: deck[n..2 * n].to_vec(),
    }
}

impl NaiveDeal {
    /// Hall's condition, counted per threshold: for every value v, the hand
    /// has at least as many cards >= v as there are dealt cards >= v.
    pub fn winnable(&self) -> bool {
        (2..=14).all(|v| {
            self.hand.iter().filter(|c| c.0 >= v).count()
                >= self.to_cover.iter().filter(|c| c.0 >= v).count()
        })
    }

    /// The dealer's verdict for a player that covers optimally.
    pub fn optimal_verdict(&self) -> &'static str {
        if self.winnable() {
            "YOU WIN"
        } else {
            "YOU LOSE NECESSARILY"
        }
    }

    /// The dealer's verdict for a player that plays its hand in order.
    pub fn in_order_verdict(&self) -> &'static str {
        let covered = self
            .hand
            .iter()
            .zip(&self.to_cover)
            .all(|(h, d)| h.0 >= d.0);
        match (covered, self.winnable()) {
            (true, _) => "YOU WIN",
            (false, true) => "YOU LOSE UNNECESSARILY",
            (false, false) => "YOU LOSE NECESSARILY",
        }
    }
}

/// A small deterministic generator for test inputs.
pub struct TestRng(u64);

impl TestRng {
    pub fn new(seed: u64) -> TestRng {
        TestRng(seed)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) % n
    }
}

/// A tournament output directory's records, in game order, without what
/// differs from run to run (times, memory).
pub fn timeless_records(out: &std::path::Path) -> Vec<serde_json::Value> {
    let mut records =
        referee::record::read_records::<serde_json::Value>(&out.join("records.jsonl")).unwrap();
    for r in &mut records {
        r.as_object_mut().unwrap().remove("time");
        for result in r["players"].as_array_mut().unwrap() {
            let fields = result.as_object_mut().unwrap();
            fields.remove("micros");
            fields.remove("slowest_micros");
            fields.remove("startup_micros");
            fields.remove("peak_memory_bytes");
            fields.remove("cpu_micros");
        }
    }
    records.sort_by_key(|r| r["index"].as_u64());
    records
}

/// A tournament output directory's standings, without the columns of
/// time and memory.
pub fn timeless_standings(out: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(out.join("standings.json")).unwrap();
    let mut rows: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    for row in &mut rows {
        let fields = row.as_object_mut().unwrap();
        fields.remove("slowest_micros");
        fields.remove("max_memory_bytes");
        fields.remove("max_cpu_micros");
    }
    rows
}

/// The rows of a CSV file, each column's header to its cell.
pub fn csv_rows<Row: FromIterator<(String, String)>>(path: &std::path::Path) -> Vec<Row> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .map(str::to_owned)
                .zip(r.iter().map(str::to_owned))
                .collect()
        })
        .collect()
}

/// The lines of `text` that start with `start`.
pub fn lines_starting<'a>(text: &'a str, start: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(start)).collect()
}

/// The lines of `text` that hold `part`.
pub fn lines_holding<'a>(text: &'a str, part: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.contains(part)).collect()
}

/// A text file's lines.
pub fn read_lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The first line of a JSON Lines file, parsed.
pub fn first_record(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

/// Runs `cmd` with its standard streams piped, `input` on its standard
/// input, and waits for it: its status and what it wrote.
pub fn output_with_input(cmd: &mut Command, input: &[u8]) -> std::process::Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(input)?;
            child.wait_with_output()
        })
        .unwrap()
}

/// Every line of a JSON Lines file, parsed.
pub fn jsonl(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The records of `referee [GLOBAL...] dealer --results FILE EVENSTEVEN`
/// on deals `1..=games` of `n` cards, after checking it ran them all.
pub fn dealer_records(global: &[&str], n: u32, games: u32) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    let deals: String = (1..=games).map(|seed| format!("{n} {seed}\n")).collect();
    let mut args = global.to_vec();
    args.extend([
        "dealer",
        "--results",
        results.to_str().unwrap(),
        evensteven_bin(),
    ]);
    let run = referee(args, deals.as_bytes());
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = jsonl(&results);
    assert_eq!(records.len(), games as usize);
    records
}

/// A Chomp player in bash that chomps every round, and exits at the end
/// of its input: at one table, players always tie.
pub const CHOMPER: &str = "#!/usr/bin/env bash\n\
    read -r p k; read -r m n\n\
    for ((i = 0; i < n; i++)); do read -r row; done\n\
    while :; do\n\
      for ((i = 0; i < k; i++)); do read -r line || exit 0; done\n\
      printf C\n\
    done\n";

/// Whether this process is root (`runuser` and Slurm's daemons need it).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// Fails the test, saying what to install, where bubblewrap is missing.
pub fn need_bwrap() {
    assert!(
        Command::new("bwrap").arg("--version").output().is_ok(),
        "this test needs bubblewrap: apt-get install bubblewrap"
    );
}

/// Writes `dir/NAME.toml`: `games` Chomp games of at most `max_rounds`
/// rounds between the reference bots (`strong`, `greedy`) on the shipped
/// 200×100 array, and returns its path.
pub fn big_chomp_tournament(
    dir: &std::path::Path,
    name: &str,
    games: u64,
    max_rounds: u64,
) -> String {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(
        &file,
        format!(
            "game = \"chomp\"\ngames = {games}\nseed = 1\n[limits]\nprep = \"0s\"\n\
             max_rounds = {max_rounds}\narrays = \"{}/tournaments/chomp/200x100.txt\"\n\
             [[entrant]]\nname = \"strong\"\ncommand = [\"{}\"]\n\
             [[entrant]]\nname = \"greedy\"\ncommand = [\"{}\"]\n",
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_BIN_EXE_chomp"),
            env!("CARGO_BIN_EXE_chomp-greedy")
        ),
    )
    .unwrap();
    file.to_str().unwrap().to_owned()
}

/// `referee tournament --no-progress ARGS`, which must succeed.
pub fn tournament(args: &[&str]) -> Run {
    let mut all = vec!["tournament", "--no-progress"];
    all.extend_from_slice(args);
    referee_ok(all)
}

/// `referee tournament FILE --games GAMES --record-moves --out OUT`, which
/// must succeed.
pub fn tournament_with_moves(file: &str, games: &str, out: &std::path::Path) {
    referee_ok([
        "tournament",
        file,
        "--games",
        games,
        "--record-moves",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ]);
}

/// Fails the test, showing `text`, unless `text` holds `part`.
#[track_caller]
pub fn assert_has(text: &str, part: &str) {
    assert!(text.contains(part), "{text}");
}

/// Fails the test, showing `text`, where `text` holds `part`.
#[track_caller]
pub fn assert_lacks(text: &str, part: &str) {
    assert!(!text.contains(part), "{text}");
}

/// Fails the test, showing `text`, unless `text` starts with `start`.
#[track_caller]
pub fn assert_starts(text: &str, start: &str) {
    assert!(text.starts_with(start), "{text}");
}

/// Fails the test, showing `text`, unless `text` ends with `end`.
#[track_caller]
pub fn assert_ends(text: &str, end: &str) {
    assert!(text.ends_with(end), "{text}");
}

/// A fresh temporary folder (removed when dropped) and the path `name`
/// in it, for a test's results or settings.
pub fn temp_path(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    (dir, path)
}

/// A test's scratch folder (removed when dropped), whose files the test
/// names by their paths.
pub struct Scratch(tempfile::TempDir);

impl Scratch {
    pub fn new() -> Scratch {
        Scratch(tempfile::tempdir().unwrap())
    }

    /// The path of `name` in the folder.
    pub fn join(&self, name: &str) -> std::path::PathBuf {
        self.0.path().join(name)
    }

    /// The path of `name` in the folder, as a string.
    pub fn path(&self, name: &str) -> String {
        self.join(name).to_str().unwrap().to_owned()
    }

    /// Writes `text` to `name` in the folder: its path, as a string.
    pub fn file(&self, name: &str, text: &str) -> String {
        write_file(self.0.path(), name, text)
            .to_str()
            .unwrap()
            .to_owned()
    }
}

/// A copy of the fixture `name` (a folder) in a fresh temporary folder,
/// under its own last name: what a test changes or builds there leaves
/// the source tree alone.
pub fn fixture_copy(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let last = std::path::Path::new(name).file_name().unwrap();
    let (dir, to) = temp_path(last.to_str().unwrap());
    let copied = Command::new("cp")
        .args(["-r", &fixture(name), to.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(copied.success());
    (dir, to)
}

/// Writes `text` to `dir/name`, making the folders it needs: its path.
pub fn write_file(
    dir: impl AsRef<std::path::Path>,
    name: impl AsRef<std::path::Path>,
    text: impl AsRef<[u8]>,
) -> std::path::PathBuf {
    let path = dir.as_ref().join(name);
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
    }
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// `referee replay RECORDS -o PAGE`, which must succeed.
pub fn replay(records: impl AsRef<OsStr>, page: impl AsRef<OsStr>) -> Run {
    referee_ok([
        OsStr::new("replay"),
        records.as_ref(),
        OsStr::new("-o"),
        page.as_ref(),
    ])
}
pub mod pg_bin;
pub mod runs;
