//! Every command printed in README.md and docs/*.md, run as printed.
//!
//! A reader copies a documented command into a shell, from the folder the
//! text names, with `referee` and the reference bots on the `PATH`. This
//! test does the same for each of them, on the release build, and checks
//! that it succeeds and prints what the text shows it prints.
//!
//! What is run, and how, is read from the markdown itself:
//!
//! - A fenced block with no language (or `sh`, `shell`, `console`) holds
//!   commands: each line is one, as a shell reads them (a line ending in
//!   `\`, an unclosed quote, a `for ... done` or a here-document goes on
//!   to the next line). Comment lines are skipped. In a `console` block, or
//!   any block whose lines start with `$ `, the `$ ` lines are the commands
//!   and the lines under each are its output, checked as below.
//! - Every other block is not run: ```` ```text ```` for what is not a
//!   command (a synopsis, an output format, a message, a transcript).
//! - An HTML comment on the line right before a fence, which readers of
//!   the rendered page do not see, says more: `<!-- test: CLAUSE; ... -->`
//!   (it may span lines). Clauses end at `;` or a line's end; a skip's
//!   reason runs to the end of its line. The clauses:
//!   - `skip file: REASON` (anywhere in a file): none of its commands run
//!     (docs/PERFORMANCE.md's measurements).
//!   - `skip: REASON`: the block is not run, for the reason given (a
//!     cluster, a browser, a long measurement). The test lists every
//!     skipped block with its reason. ``skip `COMMAND`: REASON`` skips
//!     only the block's commands that start with COMMAND.
//!   - `from DIR`: the commands run from DIR (the project's root by
//!     default), as the text around them says.
//!   - `given PATH = FIXTURE`: a placeholder file or folder the reader
//!     brings (`./player`, a class's submissions): the test puts
//!     tests/fixtures/docs/FIXTURE at PATH (from the commands' folder)
//!     before the block runs; a last `(...)` says why.
//!   - `TEXT means VALUE`: a placeholder in the command itself (`GAME.toml`,
//!     `BOT...`, a port), replaced by VALUE before it runs; `{fixtures}` in
//!     VALUE is tests/fixtures/docs; a last `(...)` says why.
//!   - `exit N`: the status every command of the block ends with (0 by
//!     default); `` `COMMAND` exits N (why) ``: the status of the block's
//!     commands that start with COMMAND.
//!   - `stop after DURATION`: a command that runs until stopped gets
//!     SIGINT (Ctrl-C) after DURATION and must then end with status 130
//!     (or the `exit` given); one that ends before, with 0.
//!   - `file PATH` (on a block that is not commands, a TOML file shown in
//!     the text): the block's text is written to PATH (from the `from`
//!     folder) for the commands after it.
//!   - `output` (on a `text` block): the block is what the command run last
//!     before it prints, standard output and error together.
//!   - `varies REGEX`: what REGEX matches in the output shown and in the
//!     output printed is evened out, like durations (which test case was
//!     the slowest).
//!
//! Output is compared line by line, with trailing spaces, runs of spaces
//! and table rules (`|-----|`) evened out. Durations (`265us`, `1.5s`,
//! `2m 5s`) match any duration; a line `...` matches any number of lines,
//! and `...` or `…` inside a line any text.
//!
//! Each file's commands run in a fresh copy of the project (its `target`,
//! `bots`, `src` and `tests` linked in, since the bots' Makefiles build
//! with Cargo in this tree), with `target/release` first on the `PATH`, an
//! empty `XDG_DATA_HOME` (where the shipped games unpack), standard input
//! from /dev/null, and a time limit. A failure
//! names the file, the line and the command. `DOCS_COMMANDS=README.md`
//! (or `docs/chomp.md`, several with commas) runs only those files.

mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// The longest any one command may run: a command that hangs fails with
/// its file and line instead of hanging the suite.
const COMMAND_LIMIT: Duration = Duration::from_secs(40);

/// Top-level entries linked into each file's copy of the project rather
/// than copied: the build (and what builds into it), and what is large
/// and only read.
const LINKED: [&str; 5] = ["target", "bots", "src", "tests", "benches"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures() -> PathBuf {
    root().join("tests/fixtures/docs")
}

/// What a fenced block is for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// Commands to run.
    Commands,
    /// Anything else (`text`, `toml`, `json`, ...).
    Other,
}

/// One fenced block of a markdown file.
#[derive(Debug)]
struct Block {
    /// The line of its first content line (1-based).
    first_line: usize,
    kind: Kind,
    /// Its lines, without the fence's indentation.
    lines: Vec<String>,
    directive: Directive,
}

/// What an HTML comment before a block says about it.
#[derive(Debug, Default)]
struct Directive {
    skip: Option<String>,
    /// Commands of the block not run: their first words, and why.
    skip_commands: Vec<(String, String)>,
    from: Option<String>,
    given: Vec<(String, String)>,
    means: Vec<(String, String)>,
    exit: Option<i32>,
    /// Commands of the block that end with another status: their first
    /// words, and the status.
    exits: Vec<(String, i32)>,
    stop_after: Option<Duration>,
    file: Option<String>,
    output: bool,
    /// What in the output varies from run to run besides durations (which
    /// case was a program's slowest), evened out before comparing.
    varies: Option<regex::Regex>,
    /// The line of the comment, for errors.
    line: usize,
}

/// A clause's value without the reason it may give in parentheses at its
/// end: `8080 means 0 (a free port)`.
fn without_why(value: &str) -> &str {
    let value = value.trim();
    match value.split_once(" (") {
        Some((value, why)) if why.ends_with(')') => value.trim(),
        _ => value,
    }
}

fn parse_directive(text: &str, line: usize) -> Result<Directive, String> {
    let mut d = Directive {
        line,
        ..Directive::default()
    };
    // Clauses end at a line's end or a `;`, but a skip's reason runs to
    // the end of its line.
    let mut clauses = vec![];
    for line in text.lines() {
        let mut rest = line.trim();
        while !rest.is_empty() {
            if rest.starts_with("skip") {
                clauses.push(rest);
                break;
            }
            let (clause, after) = rest.split_once(';').unwrap_or((rest, ""));
            clauses.push(clause.trim());
            rest = after.trim();
        }
    }
    for clause in clauses {
        if clause.is_empty() {
            continue;
        }
        if let Some(rest) = clause.strip_prefix("skip `") {
            let (prefix, reason) = rest
                .split_once("`:")
                .ok_or_else(|| format!("`skip `COMMAND`: REASON` expected, found `{clause}`"))?;
            if reason.trim().is_empty() {
                return Err("`skip `COMMAND`:` needs a reason".into());
            }
            d.skip_commands
                .push((prefix.to_owned(), reason.trim().to_owned()));
        } else if let Some(reason) = clause.strip_prefix("skip:") {
            let reason = reason.trim();
            if reason.is_empty() {
                return Err("`skip:` needs a reason".into());
            }
            d.skip = Some(reason.to_owned());
        } else if let Some(dir) = clause.strip_prefix("from ") {
            d.from = Some(dir.trim().to_owned());
        } else if let Some(given) = clause.strip_prefix("given ") {
            let (path, fixture) = given
                .split_once(" = ")
                .ok_or_else(|| format!("`given PATH = FIXTURE` expected, found `{clause}`"))?;
            d.given
                .push((path.trim().to_owned(), without_why(fixture).to_owned()));
        } else if let Some((text, value)) = clause.split_once(" means ") {
            d.means
                .push((text.trim().to_owned(), without_why(value).to_owned()));
        } else if let Some((prefix, status)) = clause
            .strip_prefix('`')
            .and_then(|rest| rest.split_once("` exits "))
        {
            let status = status.trim();
            let status = status.split_once(' ').map_or(status, |(n, _)| n);
            d.exits.push((
                prefix.to_owned(),
                status
                    .parse()
                    .map_err(|_| format!("``COMMAND` exits N` expected, found `{clause}`"))?,
            ));
        } else if let Some(status) = clause.strip_prefix("exit ") {
            d.exit = Some(
                status
                    .trim()
                    .parse()
                    .map_err(|_| format!("`exit N` expected, found `{clause}`"))?,
            );
        } else if let Some(after) = clause.strip_prefix("stop after ") {
            d.stop_after = Some(
                humantime::parse_duration(after.trim())
                    .map_err(|e| format!("`stop after DURATION`: {e}: `{clause}`"))?,
            );
        } else if let Some(path) = clause.strip_prefix("file ") {
            d.file = Some(path.trim().to_owned());
        } else if clause == "output" {
            d.output = true;
        } else if let Some(re) = clause.strip_prefix("varies ") {
            d.varies =
                Some(regex::Regex::new(re.trim()).map_err(|e| format!("`varies REGEX`: {e}"))?);
        } else {
            return Err(format!("unknown clause `{clause}`"));
        }
    }
    Ok(d)
}

/// The fenced blocks of `text` (the file `name`), each with the comment
/// right before it read as its directive.
fn blocks(name: &str, text: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = vec![];
    let mut pending: Option<(Directive, usize)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if trimmed.starts_with("<!-- test: skip file:") {
            i += 1;
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("<!-- test:") {
            let start = i;
            let mut body = String::new();
            let mut rest = rest.to_owned();
            loop {
                if let Some(end) = rest.find("-->") {
                    body.push_str(&rest[..end]);
                    break;
                }
                body.push_str(&rest);
                body.push('\n');
                i += 1;
                rest = lines
                    .get(i)
                    .ok_or_else(|| format!("{name}:{}: the comment is not closed", start + 1))?
                    .to_string();
            }
            let directive = parse_directive(&body, start + 1)
                .map_err(|e| format!("{name}:{}: {e}", start + 1))?;
            pending = Some((directive, i + 1));
            i += 1;
            continue;
        }
        if let Some(info) = trimmed.strip_prefix("```") {
            let indent = line.len() - trimmed.len();
            let info = info.trim();
            let kind = match info {
                "" | "sh" | "shell" | "console" | "bash" => Kind::Commands,
                _ => Kind::Other,
            };
            let directive = match pending.take() {
                Some((d, next)) if next == i => d,
                Some((d, _)) => {
                    return Err(format!(
                        "{name}:{}: a `<!-- test: -->` comment must be right before a fence",
                        d.line
                    ));
                }
                None => Directive::default(),
            };
            let first_line = i + 2;
            let mut content = vec![];
            i += 1;
            loop {
                let Some(line) = lines.get(i) else {
                    return Err(format!(
                        "{name}:{}: the block is not closed",
                        first_line - 1
                    ));
                };
                if line.trim_start().starts_with("```") {
                    break;
                }
                let cut = line
                    .char_indices()
                    .take_while(|(n, c)| *n < indent && *c == ' ')
                    .count();
                content.push(line[cut..].to_owned());
                i += 1;
            }
            found.push(Block {
                first_line,
                kind,
                lines: content,
                directive,
            });
            i += 1;
            continue;
        }
        if let Some((d, _)) = &pending
            && !line.trim().is_empty()
        {
            return Err(format!(
                "{name}:{}: a `<!-- test: -->` comment must be right before a fence",
                d.line
            ));
        }
        i += 1;
    }
    Ok(found)
}

/// One command of a block: its text, its line, and the output shown under
/// it (console form).
#[derive(Debug)]
struct Cmd {
    line: usize,
    text: String,
    shown: Option<Vec<String>>,
}

/// Whether `text` is a whole command for the shell (not cut short by a
/// trailing `\`, an open quote, a `for` without its `done`, ...).
fn complete(text: &str) -> bool {
    if text.trim_end().ends_with('\\') {
        return false;
    }
    let status = Command::new("bash")
        .args(["-n", "-c", text])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("bash");
    status.success()
}

/// The here-document delimiter a line opens, if any (`<<'TOML'`).
fn heredoc(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = line[at + 2..].trim_start_matches('-').trim_start();
    let word: String = rest
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// The commands of a block, each with its first line in the file.
fn commands(block: &Block) -> Vec<Cmd> {
    let console = block.lines.iter().any(|l| l.starts_with("$ "));
    let mut cmds: Vec<Cmd> = vec![];
    let mut i = 0;
    let lines = &block.lines;
    while i < lines.len() {
        let line = &lines[i];
        let line_no = block.first_line + i;
        if console {
            if let Some(cmd) = line.strip_prefix("$ ") {
                cmds.push(Cmd {
                    line: line_no,
                    text: cmd.to_owned(),
                    shown: Some(vec![]),
                });
            } else if let Some(last) = cmds.last_mut() {
                last.shown.get_or_insert_with(Vec::new).push(line.clone());
            }
            i += 1;
            continue;
        }
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            i += 1;
            continue;
        }
        let mut text = line.clone();
        let mut end = heredoc(line);
        i += 1;
        loop {
            if let Some(delimiter) = &end {
                if text.lines().skip(1).any(|l| l.trim() == delimiter) {
                    end = None;
                    continue;
                }
            } else if complete(&text) {
                break;
            }
            let Some(next) = lines.get(i) else { break };
            text.push('\n');
            text.push_str(next);
            i += 1;
        }
        cmds.push(Cmd {
            line: line_no,
            text,
            shown: None,
        });
    }
    cmds
}

/// A line as compared: trailing and repeated spaces, table rules and
/// durations evened out.
fn normal(line: &str) -> String {
    use std::sync::LazyLock;
    static DURATION: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"\b\d+(\.\d+)?(ns|us|µs|ms|s|m|h)( \d+(\.\d+)?(ms|s|m))*\b").unwrap()
    });
    static RULE: LazyLock<regex::Regex> = LazyLock::new(|| regex::Regex::new(r"-{3,}").unwrap());
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = DURATION.replace_all(&line, "⏱");
    RULE.replace_all(&line, "---").into_owned()
}

/// Whether `got` matches the shown line `want` (already normal), with
/// `...` or `…` in it standing for any text.
fn line_matches(want: &str, got: &str) -> bool {
    let parts: Vec<&str> = want.split(['…']).flat_map(|p| p.split("...")).collect();
    if parts.len() == 1 {
        return want == got;
    }
    let (first, rest) = parts.split_first().unwrap();
    let Some(mut left) = got.strip_prefix(first) else {
        return false;
    };
    let (last, middle) = rest.split_last().unwrap();
    for part in middle {
        match left.find(part) {
            Some(at) => left = &left[at + part.len()..],
            None => return false,
        }
    }
    left.ends_with(last)
}

/// Whether the output `got` matches the shown lines `want`, a line `...`
/// standing for any number of lines.
fn output_matches(want: &[String], got: &str, varies: Option<&regex::Regex>) -> bool {
    let even = |line: &str| {
        let line = normal(line);
        match varies {
            Some(re) => re.replace_all(&line, "≈").into_owned(),
            None => line,
        }
    };
    let want: Vec<String> = want
        .iter()
        .map(|l| even(l))
        .skip_while(|l| l.is_empty())
        .collect();
    let got: Vec<String> = got.lines().map(even).collect();
    fn go(want: &[String], got: &[String]) -> bool {
        match want.split_first() {
            None => got.iter().all(|l| l.is_empty()),
            Some((w, rest)) if w == "..." || w == "…" => {
                (0..=got.len()).any(|skip| go(rest, &got[skip..]))
            }
            Some((w, rest)) => match got.split_first() {
                Some((g, grest)) => line_matches(w, g) && go(rest, grest),
                None => false,
            },
        }
    }
    go(&want, &got)
}

/// A fresh copy of the project for one file's commands.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    /// Where the shipped games are unpacked, instead of the home's
    /// ~/.local/share (the home stays: Cargo, which the bots' Makefiles
    /// run, finds its toolchain there).
    data: PathBuf,
}

fn copy_tree(from: &Path, to: &Path) {
    let meta = std::fs::symlink_metadata(from).unwrap();
    if meta.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from).unwrap(), to).unwrap();
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let root = dir.path().join("project");
        let data = dir.path().join("data");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&data).unwrap();
        for entry in std::fs::read_dir(self::root()).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name();
            let name = name.to_str().unwrap();
            if name == ".git" {
                continue;
            }
            if LINKED.contains(&name) {
                std::os::unix::fs::symlink(entry.path(), root.join(name)).unwrap();
            } else {
                copy_tree(&entry.path(), &root.join(name));
            }
        }
        Tree {
            _dir: dir,
            root,
            data,
        }
    }
}

/// How one command ended.
struct Ended {
    status: Option<i32>,
    signal: Option<i32>,
    output: String,
    elapsed: Duration,
    timed_out: bool,
    /// It was still running after `stop after` and got SIGINT.
    interrupted: bool,
}

/// Runs `text` with `bash -c` from `dir`, in a process group of its own
/// that is killed when it ends (nothing it left in the background
/// survives), SIGINT after `stop_after`.
fn run(text: &str, dir: &Path, tree: &Tree, stop_after: Option<Duration>) -> Ended {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let release = root().join("target/release");
    let path = format!(
        "{}:{}",
        release.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (mut reader, writer) = std::io::pipe().expect("pipe");
    let marker = common::Marker::new();
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(text)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .process_group(0)
        .env("PATH", path)
        .env("XDG_DATA_HOME", &tree.data)
        .env_remove("REFEREE_GAMES")
        .env_remove("RUST_LOG");
    marker.apply(&mut cmd);
    let start = Instant::now();
    let mut child = cmd.spawn().expect("start bash");
    // Our copies of the pipe's writing end go with the command.
    drop(cmd);
    let pgid = Pid::from_raw(child.id() as i32);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = vec![];
        let _ = reader.read_to_end(&mut out);
        let _ = tx.send(out);
    });
    let mut interrupted = false;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let elapsed = start.elapsed();
        if let Some(after) = stop_after
            && !interrupted
            && elapsed >= after
        {
            let _ = killpg(pgid, Signal::SIGINT);
            interrupted = true;
        }
        if elapsed >= COMMAND_LIMIT {
            timed_out = true;
            let _ = killpg(pgid, Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = start.elapsed();
    let _ = killpg(pgid, Signal::SIGKILL);
    let output = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
    marker.assert_none_left();
    Ended {
        status: status.code(),
        signal: status.signal(),
        output: String::from_utf8_lossy(&output).into_owned(),
        elapsed,
        timed_out,
        interrupted,
    }
}

/// The tail of an output, for a failure message.
fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let from = lines.len().saturating_sub(25);
    let mut shown = lines[from..]
        .iter()
        .map(|l| format!("    | {l}\n"))
        .collect::<String>();
    if from > 0 {
        shown.insert_str(0, &format!("    | ... ({from} lines before)\n"));
    }
    shown
}

/// What one file's run found.
#[derive(Default)]
struct Report {
    failures: Vec<String>,
    skipped: Vec<String>,
    ran: Vec<(String, Duration)>,
}

fn substitute(text: &str, means: &[(String, String)]) -> String {
    let fixtures = fixtures();
    let mut text = text.to_owned();
    for (from, to) in means {
        let to = to.replace("{fixtures}", fixtures.to_str().unwrap());
        text = text.replace(from.as_str(), &to);
    }
    text
}

/// Runs the commands of the file `name` (relative to the project's root).
fn run_file(name: &str) -> Report {
    let mut report = Report::default();
    let text = std::fs::read_to_string(root().join(name)).unwrap();
    if let Some(line) = text
        .lines()
        .find(|l| l.trim_start().starts_with("<!-- test: skip file:"))
    {
        let reason = line.trim().trim_start_matches("<!-- test: skip file:");
        let reason = reason.trim_end_matches("-->").trim();
        report
            .skipped
            .push(format!("{name}: the whole file: {reason}"));
        return report;
    }
    let blocks = match blocks(name, &text) {
        Ok(blocks) => blocks,
        Err(e) => {
            report.failures.push(e);
            return report;
        }
    };
    let tree = Tree::new();
    // The last command run, with its line and output, for an `output`
    // block after it.
    let mut last: Option<(usize, String, String)> = None;
    for block in &blocks {
        let d = &block.directive;
        let at = format!("{name}:{}", block.first_line);
        let dir = tree.root.join(d.from.as_deref().unwrap_or("."));
        if let Some(reason) = &d.skip {
            let first = block.lines.iter().find(|l| !l.trim().is_empty());
            report.skipped.push(format!(
                "{at}: `{}`: {reason}",
                first.map_or("", |l| l.trim())
            ));
            last = None;
            continue;
        }
        if let Some(path) = &d.file {
            let target = dir.join(path);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(&target, block.lines.join("\n") + "\n").unwrap();
        }
        if d.output {
            match &last {
                Some((line, cmd, output)) => {
                    if !output_matches(&block.lines, output, d.varies.as_ref()) {
                        report.failures.push(format!(
                            "{at}: the output shown is not what `{cmd}` ({name}:{line}) prints:\n{}  it printed:\n{}",
                            block.lines.iter().map(|l| format!("    | {l}\n")).collect::<String>(),
                            tail(output)
                        ));
                    }
                }
                None => report.failures.push(format!(
                    "{at}: an `output` block with no command run before it"
                )),
            }
            continue;
        }
        if block.kind != Kind::Commands {
            continue;
        }
        for (path, fixture) in &d.given {
            let from = fixtures().join(fixture);
            if !from.exists() {
                report.failures.push(format!(
                    "{at}: the fixture {} does not exist",
                    from.display()
                ));
                continue;
            }
            let to = dir.join(path);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            let _ = std::fs::remove_file(&to);
            copy_tree(&from, &to);
        }
        if !dir.is_dir() {
            report.failures.push(format!(
                "{at}: the folder the commands run from, {}, does not exist",
                d.from.as_deref().unwrap_or(".")
            ));
            continue;
        }
        for cmd in commands(block) {
            let text = substitute(&cmd.text, &d.means);
            let shown_cmd = cmd.text.lines().next().unwrap_or("").trim().to_owned();
            let where_ = format!("{name}:{}", cmd.line);
            if let Some((_, reason)) = d
                .skip_commands
                .iter()
                .find(|(prefix, _)| cmd.text.starts_with(prefix.as_str()))
            {
                report
                    .skipped
                    .push(format!("{where_}: `{shown_cmd}`: {reason}"));
                continue;
            }
            let ended = run(&text, &dir, &tree, d.stop_after);
            report.ran.push((where_.clone(), ended.elapsed));
            // A command that runs until stopped ends as Ctrl-C ends it.
            let own = d
                .exits
                .iter()
                .find(|(prefix, _)| cmd.text.starts_with(prefix.as_str()))
                .map(|(_, status)| *status);
            let want = match own.or(d.exit) {
                Some(status) => status,
                None if ended.interrupted => 130,
                None => 0,
            };
            if ended.timed_out {
                report.failures.push(format!(
                    "{where_}: `{shown_cmd}` still ran after {COMMAND_LIMIT:?}; its output:\n{}",
                    tail(&ended.output)
                ));
            } else if ended.status != Some(want) {
                let how = match (ended.status, ended.signal) {
                    (Some(code), _) => format!("exited with status {code}"),
                    (None, Some(signal)) => format!("was killed by signal {signal}"),
                    _ => "ended oddly".to_owned(),
                };
                report.failures.push(format!(
                    "{where_}: `{shown_cmd}` {how} (expected {want}); its output:\n{}",
                    tail(&ended.output)
                ));
            } else if let Some(shown) = &cmd.shown
                && !shown.iter().all(|l| l.trim().is_empty())
                && !output_matches(shown, &ended.output, d.varies.as_ref())
            {
                report.failures.push(format!(
                    "{where_}: `{shown_cmd}` does not print what is shown under it:\n{}  it printed:\n{}",
                    shown.iter().map(|l| format!("    | {l}\n")).collect::<String>(),
                    tail(&ended.output)
                ));
            }
            last = Some((cmd.line, shown_cmd, ended.output));
        }
    }
    report
}

/// The files whose commands take longest, started first so that the
/// other worker runs the rest meanwhile: a whole package's check (a Java
/// build, a submission that spins to its time limit).
const SLOWEST: [&str; 1] = ["docs/interactive.md"];

/// README.md and docs/*.md (the slowest first), or those DOCS_COMMANDS
/// names.
fn doc_files() -> Vec<String> {
    if let Ok(only) = std::env::var("DOCS_COMMANDS")
        && !only.trim().is_empty()
    {
        return only.split(',').map(|s| s.trim().to_owned()).collect();
    }
    let mut files: Vec<String> = SLOWEST.iter().map(|&s| s.to_owned()).collect();
    files.push("README.md".to_owned());
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    files.extend(docs.into_iter().filter(|d| !SLOWEST.contains(&d.as_str())));
    files
}

/// Files run at once: most commands wait more than they compute (a
/// league until it is stopped, a bot's start-up, a build), and each file
/// has a copy of the project of its own.
const WORKERS: usize = 2;

#[test]
fn every_documented_command_runs_as_printed() {
    let start = Instant::now();
    let files = std::sync::Mutex::new(doc_files().into_iter());
    let reports = std::sync::Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                loop {
                    let Some(name) = files.lock().unwrap().next() else {
                        return;
                    };
                    let report = run_file(&name);
                    reports.lock().unwrap().insert(name, report);
                }
            });
        }
    });
    let mut all = Report::default();
    for (_, report) in reports.into_inner().unwrap() {
        all.failures.extend(report.failures);
        all.skipped.extend(report.skipped);
        all.ran.extend(report.ran);
    }
    let mut slowest = all.ran.clone();
    slowest.sort_by_key(|(_, t)| std::cmp::Reverse(*t));
    eprintln!(
        "{} commands run in {:.1?}; the slowest:",
        all.ran.len(),
        start.elapsed()
    );
    for (at, t) in slowest.iter().take(10) {
        eprintln!("  {t:.2?} {at}");
    }
    eprintln!("{} blocks skipped:", all.skipped.len());
    for skipped in &all.skipped {
        eprintln!("  {skipped}");
    }
    assert!(
        all.failures.is_empty(),
        "{} documented command(s) fail as printed:\n\n{}",
        all.failures.len(),
        all.failures.join("\n")
    );
}

/// A command without its trailing comment and extra spaces, as compared
/// with another.
fn bare(command: &str) -> String {
    let command = command.replace("\\\n", " ");
    let command = match command.find("  #") {
        Some(at) => &command[..at],
        None => &command,
    };
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Checks a skip whose reason is `runs in FILE` (or `run in FILE`): each
/// of the skipped commands is run by a block of FILE. By the command's
/// text, not a line number, which any edit above it would move.
fn check_runs_in(at: &str, block: &[Cmd], reason: &str) -> Result<(), String> {
    let re = regex::Regex::new(r"runs? in (\S+?\.md)\b").unwrap();
    let Some(found) = re.captures(reason) else {
        return Ok(());
    };
    let file = &found[1];
    let text =
        std::fs::read_to_string(root().join(file)).map_err(|e| format!("{at}: {file}: {e}"))?;
    let blocks = blocks(file, &text)?;
    let ran: Vec<String> = blocks
        .iter()
        .filter(|b| b.kind == Kind::Commands && b.directive.skip.is_none())
        .flat_map(|b| {
            commands(b)
                .into_iter()
                .filter(|c| {
                    !b.directive
                        .skip_commands
                        .iter()
                        .any(|(p, _)| c.text.starts_with(p.as_str()))
                })
                .map(|c| bare(&c.text))
                .collect::<Vec<_>>()
        })
        .collect();
    match block
        .iter()
        .find(|command| !ran.contains(&bare(&command.text)))
    {
        Some(command) => Err(format!(
            "{at}: `{}` is skipped as running in {file}, where no block runs it",
            command.text
        )),
        None => Ok(()),
    }
}

/// The markers parse, in every file, without running anything; a skip
/// that says the same command runs elsewhere is checked.
#[test]
fn every_marker_reads() {
    let mut errors = vec![];
    let mut per_file: BTreeMap<String, usize> = BTreeMap::new();
    for name in doc_files() {
        let text = std::fs::read_to_string(root().join(&name)).unwrap();
        match blocks(&name, &text) {
            Ok(blocks) => {
                for block in &blocks {
                    let d = &block.directive;
                    if d.output && block.kind == Kind::Commands {
                        errors.push(format!(
                            "{name}:{}: an `output` block must be ```text",
                            block.first_line
                        ));
                    }
                    if block.kind == Kind::Commands {
                        let cmds = commands(block);
                        if let Some(reason) = &d.skip
                            && let Err(e) = check_runs_in(
                                &format!("{name}:{}", block.first_line),
                                &cmds,
                                reason,
                            )
                        {
                            errors.push(e);
                        }
                        for cmd in cmds {
                            for (prefix, reason) in &d.skip_commands {
                                if cmd.text.starts_with(prefix.as_str())
                                    && let Err(e) = check_runs_in(
                                        &format!("{name}:{}", cmd.line),
                                        std::slice::from_ref(&cmd),
                                        reason,
                                    )
                                {
                                    errors.push(e);
                                }
                            }
                        }
                    }
                    for (_, fixture) in &d.given {
                        if !fixtures().join(fixture).exists() {
                            errors.push(format!(
                                "{name}:{}: no fixture tests/fixtures/docs/{fixture}",
                                block.first_line
                            ));
                        }
                    }
                }
                *per_file.entry(name).or_default() += blocks.len();
            }
            Err(e) => errors.push(e),
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn shown_output_matches_with_elisions() {
    let want = |s: &str| s.lines().map(str::to_owned).collect::<Vec<_>>();
    let matches = |shown: &str, got: &str| output_matches(&want(shown), got, None);
    assert!(matches("a\n...\nd", "a\nb\nc\nd\n"));
    assert!(matches("a\n...\nd", "a\nd\n"));
    assert!(!matches("a\n...\nd", "a\nb\n"));
    assert!(matches(
        "| 1 | x | 265us |\n|---|---|---|",
        "|  1 | x |   4.5ms |\n|----|---|-------|\n"
    ));
    assert!(matches("took 2m 5s, ok", "took 850us, ok"));
    assert!(matches(
        "FAIL x: 100 games, ..., end",
        "FAIL x: 100 games, a, b, end"
    ));
    assert!(!matches("Game 1", "Game 2"));
    assert!(!matches("Game 1", "Game 1\nGame 2"));
    let case = regex::Regex::new(r"(sample|secret)/\S*").unwrap();
    assert!(output_matches(
        &want("| a | secret/group2/10 | 83.6ms |"),
        "| a | sample/1 | 111.0ms |",
        Some(&case)
    ));
}

/// Issue 51: docs/septica.md gave the strong player's defaults as
/// `--guesses 400` and `--budget 25ms` long after the player's own became
/// 60 and 40ms (the page's measurements said so two paragraphs on). The
/// page's defaults are read against the player's `Settings::default`.
#[test]
fn the_septica_page_gives_the_strong_players_defaults() {
    let source = std::fs::read_to_string(root().join("bots/septica/main.rs")).unwrap();
    let start = source
        .find("fn default() -> Settings")
        .expect("the player's Settings::default");
    let defaults = &source[start..];
    let value = |field: &str| -> String {
        let re =
            regex::Regex::new(&format!(r"{field}: (?:Duration::from_millis\()?(\d+)")).unwrap();
        re.captures(defaults)
            .unwrap_or_else(|| panic!("{field} in Settings::default"))[1]
            .to_owned()
    };
    let page = std::fs::read_to_string(root().join("docs/septica.md")).unwrap();
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    for said in [
        format!("`--guesses N` (default {}", value("guesses")),
        format!("`--budget DURATION` (default {}ms", value("budget")),
        format!("`--horizon N` (default {}", value("horizon")),
        format!("`--exact-from N` (default {}", value("exact_from")),
    ] {
        assert!(page.contains(&said), "docs/septica.md does not say {said}");
    }
}
