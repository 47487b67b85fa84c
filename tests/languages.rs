//! Every common language plays under the defaults: the same Even Steven
//! strategy and the same games/guess solution, written in C, Java, Node.js
//! and Python 3 (`tests/fixtures/languages/`), through `referee dealer`, a
//! tournament and `referee interactive`, with no `--limit-*` option given;
//! and the dealer's again under `--sandbox`, where (run by root, as here,
//! with pyenv and rustup under `/root`) each runs as a uid of its own and
//! sees only what the sandbox's rules show: on the first try.
//!
//! A language whose tools are missing fails its tests with the Debian
//! package to install (`scripts/test.sh` installs them); nothing is
//! skipped. Each run checks that no process is left behind.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{Run, TestRng, assert_has, naive_deal, referee, referee_with, temp_path};
use serde_json::Value;

#[derive(Clone, Copy, Debug)]
enum Language {
    C,
    Java,
    Node,
    Python,
}

use Language::*;

impl Language {
    /// The folder under `tests/fixtures/languages/`.
    fn folder(self) -> &'static str {
        match self {
            C => "c",
            Java => "java",
            Node => "node",
            Python => "python",
        }
    }

    /// The commands its bots need, each with the Debian package that has it.
    fn tools(self) -> &'static [(&'static str, &'static str)] {
        match self {
            C => &[("cc", "gcc"), ("make", "make")],
            Java => &[
                ("javac", "default-jdk-headless"),
                ("java", "default-jdk-headless"),
                ("make", "make"),
            ],
            Node => &[("node", "nodejs")],
            Python => &[("python3", "python3")],
        }
    }

    /// The command that runs `bot` ("player" or "guess") built in `dir`.
    fn command(self, dir: &Path, bot: &str) -> Vec<String> {
        let dir = dir.to_str().unwrap().to_owned();
        match self {
            C => vec![format!("{dir}/{bot}")],
            Java => {
                let class = if bot == "player" { "Player" } else { "Guess" };
                vec!["java".into(), "-cp".into(), dir, class.into()]
            }
            Node => vec!["node".into(), format!("{dir}/{bot}.js")],
            Python => vec!["python3".into(), format!("{dir}/{bot}.py")],
        }
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/languages")
}

fn on_path(command: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(command).is_file()))
}

/// Fails the test, naming the package, when a tool of `language` is missing.
fn require(language: Language) {
    for (command, package) in language.tools() {
        assert!(
            on_path(command),
            "`{command}` is not installed, so the {language:?} bots cannot run; \
             on Debian: apt-get install {package} (scripts/test.sh installs it)"
        );
    }
}

/// Copies `from` to `to` (which must not exist).
fn copy(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-r")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success(), "cp -r {from:?} {to:?}");
}

/// `language`'s folder, copied under the target directory and built with
/// make (once per test run): the directory its bots run from.
fn built(language: Language) -> PathBuf {
    static BUILT: [OnceLock<Result<PathBuf, String>>; 4] = [const { OnceLock::new() }; 4];
    require(language);
    BUILT[language as usize]
        .get_or_init(|| {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join("languages")
                .join(language.folder());
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
            copy(&fixtures().join(language.folder()), &dir);
            if dir.join("Makefile").is_file() {
                let out = Command::new("make")
                    .arg("-s")
                    .current_dir(&dir)
                    .output()
                    .unwrap();
                if !out.status.success() {
                    return Err(format!(
                        "make in {dir:?} failed: {}{}",
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr)
                    ));
                }
            }
            Ok(dir)
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

// ---------------------------------------------------------------- dealer

/// The statement's sample, then games of every hand size.
fn dealer_input() -> String {
    let mut input = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tournaments/evensteven/sample.in"),
    )
    .unwrap();
    let mut rng = TestRng::new(19);
    for i in 0..60 {
        let n = i % 13 + 1;
        let seed = rng.below(2_147_483_646) + 1;
        input.push_str(&format!("{n} {seed}\n"));
    }
    input
}

/// `referee dealer --results FILE COMMAND...` on [`dealer_input`]: the run
/// and its records.
fn dealer(command: &[String], sandbox: bool) -> (Run, Vec<Value>) {
    let (_dir, results) = temp_path("r.jsonl");
    let mut args = vec![
        "dealer".to_owned(),
        "--results".into(),
        results.to_str().unwrap().into(),
    ];
    if sandbox {
        args.push("--sandbox".into());
    }
    args.extend_from_slice(command);
    let run = referee(&args, dealer_input().as_bytes());
    let records = std::fs::read_to_string(&results)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (run, records)
}

/// The reference player's records on [`dealer_input`], once.
fn reference_records() -> &'static [Value] {
    static RECORDS: OnceLock<Vec<Value>> = OnceLock::new();
    RECORDS.get_or_init(|| {
        let (run, records) = dealer(&[common::evensteven_bin().to_owned()], false);
        assert_eq!(run.code, Some(0), "{run:?}");
        records
    })
}

fn plays_the_dealer(language: Language) {
    plays_the_dealer_as(language, false);
    if Command::new("bwrap").arg("--version").output().is_ok() {
        plays_the_dealer_as(language, true);
    }
}

fn plays_the_dealer_as(language: Language, sandbox: bool) {
    let dir = built(language);
    let (run, records) = dealer(&language.command(&dir, "player"), sandbox);
    assert_eq!(
        run.code,
        Some(0),
        "{language:?}, --sandbox {sandbox}: {run:?}"
    );

    // Game by game, the verdict of an optimal player, from the deal as
    // the tests compute it; the statement's sample comes first.
    let mut expected = String::new();
    for (k, line) in dealer_input().lines().enumerate() {
        let (n, seed) = line.split_once(' ').unwrap();
        let deal = naive_deal(n.parse().unwrap(), seed.parse().unwrap());
        expected.push_str(&format!("Game {}\n{}\n", k + 1, deal.optimal_verdict()));
    }
    assert!(
        expected.starts_with("Game 1\nYOU LOSE NECESSARILY\nGame 2\nYOU WIN\n"),
        "{expected}"
    );
    assert_eq!(run.stdout, expected, "{language:?}: {}", run.stderr);

    // Every game played to its end, card for card as the reference player.
    let reference = reference_records();
    assert_eq!(records.len(), reference.len(), "{language:?}");
    for (record, reference) in records.iter().zip(reference) {
        assert_eq!(record["status"], "ok", "{language:?}: {record}");
        assert_eq!(record["outcome"], reference["outcome"], "{record}");
        let cards = |r: &Value| -> Vec<(Value, Value)> {
            r["plays"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p["dealt"].clone(), p["played"].clone()))
                .collect()
        };
        assert_eq!(cards(record), cards(reference), "{language:?}: {record}");
    }
}

#[test]
fn c_plays_the_dealer() {
    plays_the_dealer(C);
}

#[test]
fn java_plays_the_dealer() {
    plays_the_dealer(Java);
}

#[test]
fn node_plays_the_dealer() {
    plays_the_dealer(Node);
}

#[test]
fn python_plays_the_dealer() {
    plays_the_dealer(Python);
}

// ------------------------------------------------------------ tournament

#[test]
fn the_four_languages_win_the_same_tournament_games() {
    for language in [C, Java, Node, Python] {
        require(language);
    }
    // The referee builds each folder with make, so it plays on a copy.
    let (dir, copied) = temp_path("languages");
    copy(&fixtures(), &copied);
    let out = dir.path().join("out");
    let run = referee_with(
        [
            "tournament",
            "--no-progress",
            copied.join("evensteven.toml").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
        &[],
        None,
    );

    assert!(out.join("records.jsonl").is_file(), "no records: {run:?}");
    let records = common::timeless_records(&out);
    let entrants = ["c", "java", "node", "python"];
    // Every entrant's failures first, with the error and its stderr, so a
    // failure says who failed and why.
    let mut failures = vec![];
    for record in &records {
        for result in record["players"].as_array().unwrap() {
            if result["status"] != "ok" {
                failures.push(format!("game {}: {result}", record["index"]));
            }
        }
    }
    if !failures.is_empty() {
        let logs: Vec<String> = entrants
            .iter()
            .map(|e| {
                let log = std::fs::read_to_string(out.join(format!("stderr/{e}.log")))
                    .unwrap_or_default();
                format!("--- stderr/{e}.log:\n{}", &log[..log.len().min(2000)])
            })
            .collect();
        panic!(
            "{} results not ok:\n{}\n{}",
            failures.len(),
            failures.join("\n"),
            logs.join("\n")
        );
    }
    assert_eq!(run.code, Some(0), "{run:?}");

    // Eight games, each played by the four, each won exactly when the deal
    // is winnable (the strategy is optimal).
    assert_eq!(records.len(), 8, "{records:#?}");
    let mut winnable = 0;
    for record in &records {
        let deal = naive_deal(
            record["n"].as_u64().unwrap() as usize,
            record["deal_seed"].as_u64().unwrap() as u32,
        );
        winnable += u64::from(deal.winnable());
        let results = record["players"].as_array().unwrap();
        let names: Vec<&str> = results
            .iter()
            .map(|r| r["entrant"].as_str().unwrap())
            .collect();
        assert_eq!(names, entrants, "{record}");
        for result in results {
            assert_eq!(result["won"], deal.winnable(), "{record}");
        }
    }
    assert!(0 < winnable && winnable < 8, "a test of wins and losses");

    let standings = common::timeless_standings(&out);
    assert_eq!(standings.len(), 4, "{standings:#?}");
    for row in &standings {
        assert_eq!(row["games"], 8, "{row}");
        assert_eq!(row["wins"].as_f64(), Some(winnable as f64), "{row}");
    }
}

// ----------------------------------------------------------- interactive

fn solves_guess(language: Language) {
    let dir = built(language);
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("r.jsonl");
    let mut args = vec![
        "interactive".to_owned(),
        "--results".into(),
        results.to_str().unwrap().into(),
        format!("{}/games/guess", env!("CARGO_MANIFEST_DIR")),
    ];
    args.extend(language.command(&dir, "guess"));
    let run = referee(&args, b"");
    let cases = [
        "sample/1", "sample/2", "secret/1", "secret/2", "secret/3", "secret/4",
    ];
    for case in cases {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{case}: ACCEPTED"))),
            "{language:?}, {case}: {}\n{}",
            run.stdout,
            run.stderr
        );
    }
    assert_has(&run.stdout, "6 of 6 test cases accepted");
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = common::jsonl(&results);
    assert_eq!(records.len(), 6);
    for (record, case) in records.iter().zip(cases) {
        assert_eq!(record["case"], case, "{record}");
        assert_eq!(record["status"], "ok", "{record}");
        assert_eq!(record["verdict"], "accepted", "{record}");
        assert_eq!(record["exit"]["exited"], 0, "{record}");
    }
}

#[test]
fn c_solves_guess() {
    solves_guess(C);
}

#[test]
fn java_solves_guess() {
    solves_guess(Java);
}

#[test]
fn node_solves_guess() {
    solves_guess(Node);
}

#[test]
fn python_solves_guess() {
    solves_guess(Python);
}
