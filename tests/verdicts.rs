//! One timing model and one failure taxonomy, through every subcommand:
//! the red-team cases of the verdicts issue, each as a regression test.

mod common;

use std::path::Path;

use common::{Run, assert_has, assert_starts, fixture, referee, referee_ok, temp_path, write_file};
use serde_json::Value;

fn evensteven() -> &'static str {
    env!("CARGO_BIN_EXE_evensteven")
}

fn septica() -> &'static str {
    env!("CARGO_BIN_EXE_septica")
}

/// `PROGRAM` behind `slow.py`: START seconds before its first reply, DELAY
/// before each later one, as a TOML array.
fn slow(start: &str, delay: &str, program: &str) -> String {
    format!(
        "[\"{}\", \"{start}\", \"{delay}\", \"{program}\"]",
        fixture("slow.py")
    )
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = write_file(dir, name, text);
    path.to_str().unwrap().to_owned()
}

/// Writes the CI suite `name` in `dir` and runs `referee ci` on it.
fn ci(dir: &Path, name: &str, text: &str) -> Run {
    let suite = write(dir, name, text);
    referee(["ci", &suite], b"")
}

/// A tournament output directory's standings.
fn standings(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("standings.json")).unwrap()).unwrap()
}

fn read_records(path: &Path) -> Vec<Value> {
    referee::record::read_records(path).unwrap()
}

/// The results of entrant `name` in a tournament's records.
fn results_of<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records
        .iter()
        .flat_map(|r| r["players"].as_array().unwrap())
        .filter(|x| x["entrant"] == name)
        .collect()
}

#[test]
fn ci_no_timeout_fails_a_bot_that_times_out_and_max_move_sees_it() {
    // Red team: `no_timeout = true` with a bot slower than `timeout`
    // printed PASS; the timeout was recorded as "crashed" and left out of
    // the move times.
    let dir = tempfile::tempdir().unwrap();
    for (game, program) in [("evensteven", evensteven()), ("septica", septica())] {
        let suite = write(
            dir.path(),
            &format!("{game}.toml"),
            &format!(
                "[[case]]\nname = \"slow {game}\"\ngame = \"{game}\"\ncommand = {}\ngames = 4\njobs = 2\n\
                 [case.limits]\ntimeout = \"150ms\"\n[case.expect]\nno_timeout = true\nmax_move = \"100ms\"\n",
                slow("0", "0.4", program)
            ),
        );
        let junit = dir.path().join(format!("{game}.xml"));
        let run = referee(["ci", &suite, "--junit", junit.to_str().unwrap()], b"");
        assert_eq!(run.code, Some(1), "{game}: {run:?}");
        let line = run.stdout.lines().next().unwrap();
        assert!(line.starts_with(&format!("FAIL slow {game}")), "{line}");
        assert_has(line, "timeout(s)");
        assert_has(line, "did not answer within 150ms");
        assert_has(line, "slowest move");
        let xml = std::fs::read_to_string(&junit).unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let case = doc
            .descendants()
            .find(|n| n.has_tag_name("testcase"))
            .unwrap();
        assert_eq!(
            case.attribute("classname"),
            Some(&*format!("{game}.{game}"))
        );
        let failure = case
            .children()
            .find(|n| n.has_tag_name("failure"))
            .expect("a failure element");
        assert!(failure.text().unwrap_or("").contains("timeout(s)"), "{xml}");
    }
}

#[test]
fn tournament_records_and_standings_call_a_timeout_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "t.toml",
        &format!(
            "game = \"evensteven\"\ngames = 6\nseed = 4\n[limits]\ntimeout = \"150ms\"\n\
             [[entrant]]\nname = \"slow\"\ncommand = {}\n",
            slow("0", "0.4", evensteven())
        ),
    );
    let out = dir.path().join("out");
    referee_ok([
        "tournament",
        &file,
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    let records = read_records(&out.join("records.jsonl"));
    let mine = results_of(&records, "slow");
    let timeouts: Vec<&&Value> = mine.iter().filter(|x| x["status"] == "timeout").collect();
    assert!(!timeouts.is_empty(), "{mine:?}");
    for x in &timeouts {
        assert_eq!(x["phase"], "move", "{x}");
        // The timed-out move is in the move times, as the time waited.
        let slowest = x["slowest_micros"].as_u64().unwrap();
        assert!(slowest >= 150_000, "{x}");
    }
    assert!(mine.iter().all(|x| x["status"] != "crashed"), "{mine:?}");
    let standings = standings(&out);
    assert_eq!(
        standings[0]["timeouts"],
        timeouts.len() as u64,
        "{standings}"
    );
    assert_eq!(standings[0]["crashed"], 0, "{standings}");
}

#[test]
fn a_slow_start_is_allowed_recorded_apart_and_named_when_it_is_too_slow() {
    // Red team: a Python player's first move took 138 ms, so `--timeout
    // 60ms` always failed game 1.
    let (_dir, results) = temp_path("r.jsonl");
    let slow_start = [
        fixture("slow.py"),
        "0.4".into(),
        "0".into(),
        evensteven().into(),
    ];
    let mut args = vec![
        "dealer".to_owned(),
        "--timeout".into(),
        "300ms".into(),
        "--results".into(),
        results.to_str().unwrap().into(),
    ];
    args.extend(slow_start.iter().cloned());
    let run = referee(&args, b"13 5\n13 6\n");
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = read_records(&results);
    assert!(records[0]["startup_micros"].as_u64().unwrap() >= 400_000);
    assert!(records[1].get("startup_micros").is_none());
    // The start-up is not a move: every play of game 1 but the first is
    // fast, and the summary's slowest move is one of them.
    assert_eq!(records[0]["status"], "ok");

    let mut args = vec![
        "dealer".to_owned(),
        "--timeout".into(),
        "300ms".into(),
        "--startup".into(),
        "0s".into(),
    ];
    args.extend(slow_start.iter().cloned());
    let run = referee(&args, b"13 5\n");
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_has(
        &run.stdout,
        "game 1, move 1 (dealt Qd): timeout: the player did not answer within 300ms (its first reply: the move limit plus the start-up allowance",
    );
}

#[test]
fn a_player_that_sends_nothing_gets_a_hint_about_flushing() {
    let run = referee(
        [
            "dealer",
            "--timeout",
            "150ms",
            "--startup",
            "0s",
            &fixture("misbehave.sh"),
            "deaf",
        ],
        b"4 876390176\n",
    );
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_has(
        &run.stdout,
        "nothing at all was received from it: does it flush its output",
    );
}

/// `referee dealer OPTIONS` of one 13-card game to the reference player
/// behind `slow.py`, which waits `delay` seconds before each reply.
fn dealer_on_a_clock(options: &[&str], delay: &str) -> common::Run {
    let slow = fixture("slow.py");
    let mut args = vec!["dealer"];
    args.extend_from_slice(options);
    args.extend([slow.as_str(), "0", delay, evensteven()]);
    referee(args, b"13 5\n")
}

#[test]
fn a_time_control_is_a_clock_per_game_that_runs_out() {
    let (_dir, results) = temp_path("r.jsonl");
    let run = dealer_on_a_clock(
        &[
            "--timeout",
            "1s",
            "--time-control",
            "300ms+20ms",
            "--results",
            results.to_str().unwrap(),
        ],
        "0.12",
    );
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_has(&run.stdout, "(its clock ran out)");
    let records = read_records(&results);
    assert_eq!(records[0]["status"], "timeout");
    assert_eq!(records[0]["phase"], "clock");
    // 300ms + 20ms per move at 120ms a move, the first reply (start-up)
    // not charged: the clock lasts four moves at most, whatever the
    // machine's noise.
    let plays = records[0]["plays"].as_array().unwrap().len();
    assert!((1..=4).contains(&plays), "{plays} plays");

    // The same player within the clock: 13 moves at 10ms, 1s+0.
    let run = dealer_on_a_clock(&["--time-control", "1s"], "0.01");
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn durations_print_as_people_read_them() {
    // Red team: a clock that ran out was reported as "did not answer
    // within 110ms 66us 994ns".
    let run = dealer_on_a_clock(&["--timeout", "1s", "--time-control", "330ms+7ms"], "0.12");
    assert_eq!(run.code, Some(3), "{run:?}");
    let plain =
        regex::Regex::new(r"did not answer within \d+(\.\d+)?(us|ms|s) \(its clock").unwrap();
    assert!(plain.is_match(&run.stdout), "{}", run.stdout);
}

#[test]
fn invalid_suites_are_refused_whole_before_anything_runs() {
    // Red team: these were accepted, some reported only after every game
    // was played, some never.
    let dir = tempfile::tempdir().unwrap();
    let bot = format!("[\"{}\"]", evensteven());
    let case = |name: &str, game: &str, games: u64, expect: &str| {
        format!(
            "[[case]]\nname = \"{name}\"\ngame = \"{game}\"\ncommand = {bot}\ngames = {games}\n[case.expect]\n{expect}\n"
        )
    };
    let suite = write(
        dir.path(),
        "bad.toml",
        &[
            case("negative", "evensteven", 10, "win_rate = -1"),
            case("nan", "evensteven", 10, "win_rate = nan"),
            case(
                "certain",
                "evensteven",
                1000,
                "win_rate = 1.0\nsequential = true",
            ),
            case(
                "near certain",
                "evensteven",
                1000,
                "win_rate = 0.9995\nsequential = true",
            ),
            case("mean", "evensteven", 10, "mean_score = 3"),
            case("few", "evensteven", 3, "win_rate = 0.5"),
        ]
        .concat(),
    );
    let junit = dir.path().join("report.xml");
    let run = referee(["ci", &suite, "--junit", junit.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(
        !run.stdout.contains("PASS") && !run.stdout.contains("FAIL"),
        "{run:?}"
    );
    for needle in [
        "case \"negative\": expect.win_rate must be at least 0 and below 1",
        "case \"nan\": expect.win_rate must be at least 0 and below 1",
        "case \"certain\": expect.win_rate must be at least 0 and below 1",
        "case \"near certain\": the sequential test needs 0 < win_rate and win_rate + margin < 1",
        "case \"mean\": expect.mean_score does not apply to evensteven",
        "case \"few\": expect.win_rate = 0.5 cannot be reached in 3 games: even winning every game needs at least 4",
    ] {
        assert!(
            run.stderr.contains(needle),
            "missing {needle:?} in\n{}",
            run.stderr
        );
    }
    assert_has(&run.stderr, "bad.toml");
    // A report for the CI's report step, with one failed test case.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("testcase") && xml.contains("win_rate"),
        "{xml}"
    );

    // A bad duration names the file and the line.
    let run = ci(
        dir.path(),
        "dur.toml",
        &case("dur", "evensteven", 10, "max_move = \"-1s\""),
    );
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "dur.toml");
    assert_has(&run.stderr, "line 7");
    assert_has(&run.stderr, "cannot be negative");
}

#[test]
fn the_sequential_test_fails_a_bot_far_below_the_win_rate() {
    let dir = tempfile::tempdir().unwrap();
    let run = ci(
        dir.path(),
        "weak.toml",
        &format!(
            "[[case]]\nname = \"in-order\"\ngame = \"evensteven\"\ncommand = [\"{}\", \"play\", \"0\"]\n\
             games = 400\nseed = 2\n[case.expect]\nwin_rate = 0.9\nsequential = true\n",
            fixture("misbehave.sh")
        ),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_has(&run.stdout, "the sequential test decided after");
}

/// Issue 51: an entrant whose `command` names a program found nowhere
/// (not a file where the tournament file's folder puts it, not on PATH)
/// is the organiser's mistake: refused before the first game, status 64,
/// naming the entrant and the program, as `referee play` refuses it. (It
/// was disqualified and the run played on, every game of it lost.) A
/// student's folder whose program cannot start stays that student's
/// disqualification; ci fails the case.
#[test]
fn an_entrant_whose_program_is_found_nowhere_is_refused_before_the_first_game() {
    let dir = tempfile::tempdir().unwrap();
    // Three games of the reference player and `second`, an entrant's
    // lines; the run and its output directory.
    let play = |name: &str, second: &str| {
        let file = write(
            dir.path(),
            &format!("{name}.toml"),
            &format!(
                "game = \"evensteven\"\ngames = 3\nseed = 1\n\
                 [[entrant]]\nname = \"good\"\ncommand = [\"{}\"]\n\
                 [[entrant]]\n{second}\n",
                evensteven()
            ),
        );
        let out = dir.path().join(format!("{name}-out"));
        let run = referee(["tournament", &file, "--out", out.to_str().unwrap()], b"");
        (run, out)
    };
    for (ghost, says) in [
        (
            "/nonexistent/ghost-bot",
            "/nonexistent/ghost-bot: no such file",
        ),
        ("bots/ghost-bot", "/bots/ghost-bot: no such file"),
        (
            "ghost-bot-on-no-path",
            "\"ghost-bot-on-no-path\": not found in ",
        ),
    ] {
        let (run, out) = play(
            "t",
            &format!("name = \"ghost\"\ncommand = [\"{ghost}\", \"--fast\"]"),
        );
        assert_eq!(run.code, Some(64), "{ghost}: {run:?}");
        assert!(
            run.stderr.contains("entrant ghost: cannot start") && run.stderr.contains(says),
            "{ghost}: {}",
            run.stderr
        );
        assert!(
            read_records(&out.join("records.jsonl")).is_empty(),
            "{ghost}: a game was played"
        );
    }

    // A student's folder whose program cannot start: disqualified, the
    // others play.
    let student = dir.path().join("subs/ann");
    write_file(&student, "Makefile", "all:\n\ttrue\n");
    write_file(&student, "pc2", "#!/no/such/interpreter\n");
    std::fs::set_permissions(
        student.join("pc2"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let (run, out) = play("class", "name = \"ann\"\ndir = \"subs/ann\"");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stderr, "entrant ann disqualified: cannot start");
    assert_has(&run.stderr, "/no/such/interpreter");
    let records = read_records(&out.join("records.jsonl"));
    let ann = results_of(&records, "ann");
    assert_eq!(ann.len(), 3);
    assert!(ann.iter().all(|x| x["status"] == "cannot_start"), "{ann:?}");
    let standings = standings(&out);
    let row = standings
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["entrant"] == "ann")
        .unwrap();
    assert_eq!(
        (row["disqualified"].as_u64(), row["crashed"].as_u64()),
        (Some(3), Some(0))
    );

    // In ci: one failed case with the reason, no games.
    let run = ci(
        dir.path(),
        "ci.toml",
        "[[case]]\nname = \"ghost\"\ngame = \"septica\"\ncommand = [\"/nonexistent/ghost-bot\"]\ngames = 5\n[case.expect]\nno_crash = true\n",
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_starts(&run.stdout, "FAIL ghost: 0 games; the bot: cannot start");
}

#[test]
fn a_chomp_start_outside_an_array_is_refused_in_tournament_and_ci_files() {
    // Red team: only `referee chomp` checked it; the game never ended.
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "a.txt", "ABC\nDEF\n");
    let file = write(
        dir.path(),
        "c.toml",
        &format!(
            "game = \"chomp\"\ngames = 2\n[limits]\narrays = \"a.txt\"\nstart = [\"9\", \"1\"]\ntimeout = \"1s\"\n\
             [[entrant]]\nname = \"g\"\ncommand = [\"{}\"]\n",
            env!("CARGO_BIN_EXE_chomp-greedy")
        ),
    );
    let run = referee(["tournament", &file], b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "limits.start: start column 9 is outside");
    // Every problem at once: a key that does not apply to the game too.
    assert_has(&run.stderr, "limits.timeout does not apply to chomp");
    let run = ci(
        dir.path(),
        "ci.toml",
        &format!(
            "[[case]]\nname = \"g\"\ngame = \"chomp\"\ncommand = [\"{}\"]\ngames = 2\n[case.limits]\narrays = \"a.txt\"\nstart = [\"1\", \"7\"]\n",
            env!("CARGO_BIN_EXE_chomp-greedy")
        ),
    );
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "start row 7 is outside");
}

#[test]
fn a_chomp_game_where_nobody_eats_ends_by_itself() {
    // Instant bots that only walk never starve (their clocks count thinking
    // time): the game ends after the idle bound, recorded as such.
    let (dir, bot) = temp_path("walker");
    std::fs::create_dir(&bot).unwrap();
    let pc2 = write_file(&bot, "pc2", "#!/bin/sh\nexec yes N\n");
    std::fs::set_permissions(&pc2, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let array = write_file(dir.path(), "a.txt", "AB\n");
    let results = dir.path().join("r.jsonl");
    referee_ok([
        "chomp",
        "--prep",
        "0s",
        "--results",
        results.to_str().unwrap(),
        array.to_str().unwrap(),
        bot.to_str().unwrap(),
    ]);
    let records = read_records(&results);
    assert_eq!(records[0]["end"], "idle", "{}", records[0]);
    assert_eq!(records[0]["rounds"], 1000);
    assert_eq!(records[0]["players"][0]["status"], "ok");
}

fn evensteven_tournament(dir: &Path, seed: u64, timeout: &str) -> String {
    write(
        dir,
        "t.toml",
        &format!(
            "game = \"evensteven\"\ngames = 400\nseed = {seed}\n[limits]\ntimeout = \"{timeout}\"\n\
             [[entrant]]\nname = \"reference\"\ncommand = [\"{}\"]\n",
            evensteven()
        ),
    )
}

#[test]
fn resume_keeps_the_run_s_seed_and_refuses_another_run() {
    // Red team: without --seed, --resume took the file's `seed =` over the
    // run's, threw the finished games away and replayed everything; after
    // the file changed it replayed silently and appended.
    let dir = tempfile::tempdir().unwrap();
    let file = evensteven_tournament(dir.path(), 3, "2s");
    let out = dir.path().join("out");
    let out_arg = out.to_str().unwrap();
    let _run = referee_ok([
        "tournament",
        &file,
        "--games",
        "6",
        "--seed",
        "9",
        "--out",
        out_arg,
    ]);
    let lines = |out: &Path| {
        std::fs::read_to_string(out.join("records.jsonl"))
            .unwrap()
            .lines()
            .count()
    };
    assert_eq!(lines(&out), 6);
    let resume = |args: &[&str]| {
        let mut all = vec!["tournament", &file, "--out", out_arg, "--resume"];
        all.extend(args);
        referee(&all, b"")
    };
    let run = resume(&["--games", "6"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stderr, "resuming: 6 game(s)");
    assert_has(&run.stdout, "seed 9");
    assert_eq!(lines(&out), 6, "nothing replayed");

    // Another seed, another number of games, a changed file: refused, and
    // nothing is appended.
    for (args, says) in [
        (
            vec!["--games", "6", "--seed", "5"],
            "--seed 5, but the run's seed is 9",
        ),
        (vec!["--games", "7"], "7 games, but the run has 6"),
    ] {
        let run = resume(&args);
        assert_eq!(run.code, Some(64), "{run:?}");
        assert_has(&run.stderr, says);
    }
    evensteven_tournament(dir.path(), 3, "3s");
    let run = resume(&["--games", "6"]);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "limits or the entrants' programs changed");
    // And a second run into the same directory without --resume.
    let run = referee(["tournament", &file, "--games", "6", "--out", out_arg], b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "already holds the records of another run");
    assert_eq!(lines(&out), 6);
}

#[test]
fn an_interrupted_tournament_prints_the_standings_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let file = evensteven_tournament(dir.path(), 3, "2s");
    let out = dir.path().join("out");
    let marker = common::Marker::new();
    let child = common::start(
        [
            "tournament",
            "--no-progress",
            "--jobs",
            "1",
            &file,
            "--out",
            out.to_str().unwrap(),
        ],
        &marker,
    );
    common::wait_for_lines(&out.join("records.jsonl"), 5);
    common::signal(&child, nix::sys::signal::Signal::SIGINT);
    let run = common::finish(child, b"");
    marker.assert_none_left();
    assert_eq!(run.code, Some(130), "{run:?}");
    assert_has(&run.stdout, "interrupted: standings after");
    assert_has(&run.stdout, "reference");
}

/// One failure class: how to provoke it with an Even Steven player, and
/// the names every report must give it.
struct Class {
    name: &'static str,
    command: Vec<String>,
    timeout: &'static str,
    exit: i32,
    column: &'static str,
    reason: &'static str,
}

fn classes(dir: &Path) -> Vec<Class> {
    let misbehave = |args: &[&str]| {
        std::iter::once(fixture("misbehave.sh"))
            .chain(args.iter().map(|a| a.to_string()))
            .collect()
    };
    let spin = write_file(dir, "spin.sh", "#!/bin/sh\nwhile :; do :; done\n");
    std::fs::set_permissions(&spin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // Found, but it cannot start: a tournament disqualifies it (one found
    // nowhere is refused before the first game).
    let unstartable = write_file(dir, "unstartable.sh", "#!/no/such/interpreter\n");
    std::fs::set_permissions(
        &unstartable,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    vec![
        Class {
            name: "timeout",
            command: misbehave(&["hang", "1"]),
            timeout: "150ms",
            exit: 3,
            column: "timeouts",
            reason: "timeout(s)",
        },
        Class {
            name: "incorrect",
            command: misbehave(&["say", "0", "zz\\n"]),
            timeout: "2s",
            exit: 2,
            column: "incorrect",
            reason: "incorrect output(s)",
        },
        Class {
            name: "crashed",
            command: misbehave(&["exit", "1", "3"]),
            timeout: "2s",
            exit: 3,
            column: "crashed",
            reason: "crash(es)",
        },
        Class {
            name: "closed_output",
            command: misbehave(&["close", "1"]),
            timeout: "2s",
            exit: 3,
            column: "crashed",
            reason: "crash(es)",
        },
        Class {
            name: "limit",
            command: vec![spin.to_str().unwrap().to_owned()],
            timeout: "5s",
            exit: 3,
            column: "crashed",
            reason: "crash(es)",
        },
        Class {
            name: "cannot_start",
            command: vec![unstartable.to_str().unwrap().to_owned()],
            timeout: "2s",
            exit: 64,
            column: "disqualified",
            reason: "cannot start",
        },
    ]
}

#[test]
fn every_failure_class_means_the_same_in_records_standings_ci_and_junit() {
    let dir = tempfile::tempdir().unwrap();
    for class in classes(dir.path()) {
        let name = class.name;
        let limits = ["--limit-cpu", "1s", "--grace", "300ms"];
        // The dealer: its exit status and its record.
        let results = dir.path().join(format!("{name}.jsonl"));
        let mut args: Vec<String> = ["dealer", "--timeout", class.timeout, "--results"]
            .iter()
            .map(|s| s.to_string())
            .chain([results.to_str().unwrap().to_owned()])
            .chain(limits.iter().map(|s| s.to_string()))
            .collect();
        args.extend(class.command.iter().cloned());
        let run = referee(&args, b"4 876390176\n4 653723903\n");
        assert_eq!(run.code, Some(class.exit), "{name}: {run:?}");
        if class.exit != 64 {
            let records = read_records(&results);
            let last = records.last().unwrap();
            assert_eq!(last["status"], name, "{name}: {last}");
            assert_eq!(last["outcome"], name, "{name}: {last}");
        }

        // A tournament: its records and its standings.
        let command = format!("{:?}", class.command);
        let file = write(
            dir.path(),
            &format!("{name}.toml"),
            &format!(
                "game = \"evensteven\"\ngames = 4\nseed = 6\n[limits]\ntimeout = \"{}\"\n\
                 [[entrant]]\nname = \"bot\"\ncommand = {command}\n",
                class.timeout
            ),
        );
        let out = dir.path().join(format!("{name}-out"));
        let mut args = vec!["tournament", &file, "--out", out.to_str().unwrap()];
        args.extend(limits);
        let run = referee(&args, b"");
        assert_eq!(run.code, Some(0), "{name}: {run:?}");
        let records = read_records(&out.join("records.jsonl"));
        let failed = results_of(&records, "bot")
            .iter()
            .filter(|x| x["status"] == name)
            .count() as u64;
        assert!(failed > 0, "{name}: {records:?}");
        let standings = standings(&out);
        assert_eq!(standings[0][class.column], failed, "{name}: {standings}");

        // A ci case: its verdict and its JUnit report.
        let suite = write(
            dir.path(),
            &format!("{name}-ci.toml"),
            &format!(
                "[[case]]\nname = \"bot\"\ngame = \"evensteven\"\ncommand = {command}\ngames = 4\nseed = 6\n\
                 [case.limits]\ntimeout = \"{}\"\n\
                 [case.expect]\nno_crash = true\nno_timeout = true\nno_incorrect = true\n",
                class.timeout
            ),
        );
        let junit = dir.path().join(format!("{name}.xml"));
        let mut args = vec!["ci", &suite, "--junit", junit.to_str().unwrap()];
        args.extend(limits);
        let run = referee(&args, b"");
        assert_eq!(run.code, Some(1), "{name}: {run:?}");
        assert!(
            run.stdout.starts_with("FAIL bot") && run.stdout.contains(class.reason),
            "{name}: {}",
            run.stdout
        );
        let xml = std::fs::read_to_string(&junit).unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let failure = doc
            .descendants()
            .find(|n| n.has_tag_name("failure"))
            .unwrap_or_else(|| panic!("{name}: {xml}"));
        assert!(
            failure
                .attribute("message")
                .unwrap_or("")
                .contains(class.reason),
            "{name}: {xml}"
        );
    }
}

#[test]
fn tournament_limits_take_a_time_control_and_judge_the_exit_grace() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "t.toml",
        &format!(
            "game = \"evensteven\"\ngames = 4\nseed = 6\n[limits]\ntimeout = \"1s\"\ntime_control = \"250ms+0s\"\ngrace = \"300ms\"\n\
             [[entrant]]\nname = \"slow\"\ncommand = {}\n\
             [[entrant]]\nname = \"lingers\"\ncommand = [\"{}\", \"linger\", \"0\"]\n",
            slow("0", "0.1", evensteven()),
            fixture("misbehave.sh")
        ),
    );
    let out = dir.path().join("out");
    let run = referee(["tournament", &file, "--out", out.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = read_records(&out.join("records.jsonl"));
    let clock = results_of(&records, "slow")
        .into_iter()
        .filter(|x| x["phase"] == "clock")
        .count();
    assert!(clock > 0, "{records:?}");
    let lingers = results_of(&records, "lingers");
    assert!(
        lingers
            .iter()
            .all(|x| x["status"] == "timeout" && x["phase"] == "exit_grace"),
        "{lingers:?}"
    );
}

#[test]
fn tournaments_and_ci_run_an_external_game_by_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let game = format!("{}/games/evensteven/game.toml", env!("CARGO_MANIFEST_DIR"));
    let file = write(
        dir.path(),
        "t.toml",
        &format!(
            "game = \"{game}\"\ngames = 6\nseed = 2\n[limits]\nseats = 1\n\
             [[entrant]]\nname = \"reference\"\ncommand = [\"{}\"]\n\
             [[entrant]]\nname = \"in-order\"\ncommand = [\"{}\", \"play\", \"0\"]\n",
            evensteven(),
            fixture("misbehave.sh")
        ),
    );
    let out = dir.path().join("out");
    let run = referee(["tournament", &file, "--out", out.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = read_records(&out.join("records.jsonl"));
    assert_eq!(records.len(), 6);
    // A game for one player is played alone: every entrant on every game.
    assert_eq!(results_of(&records, "reference").len(), 6);
    assert!(
        records
            .iter()
            .flat_map(|r| r["players"].as_array().unwrap())
            .all(|x| x["status"] == "ok" && x["score"].is_number()),
        "{records:?}"
    );
    let standings = standings(&out);
    assert!(standings[0]["win_rate"].is_number(), "{standings}");
    assert_eq!(standings[0]["entrant"], "reference", "{standings}");

    // A ci case over the same game: a score expectation applies to it.
    let run = ci(
        dir.path(),
        "ci.toml",
        &format!(
            "[[case]]\nname = \"reference\"\ngame = \"{game}\"\ncommand = [\"{}\"]\ngames = 4\n\
             [case.expect]\nno_crash = true\nno_timeout = true\nmean_score = 0\n",
            evensteven()
        ),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_starts(&run.stdout, "PASS reference: 4 games");
}

#[test]
fn a_judge_error_stops_a_tournament_and_counts_for_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "t.toml",
        &format!(
            "game = \"{}\"\ngames = 3\nseed = 1\n[[entrant]]\nname = \"bot\"\ncommand = [\"{}\"]\n",
            fixture("judges/crash.toml"),
            evensteven()
        ),
    );
    let out = dir.path().join("out");
    let run = referee(
        [
            "tournament",
            &file,
            "--jobs",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(70), "{run:?}");
    assert_has(&run.stderr, "judge error");
    let records = read_records(&out.join("records.jsonl"));
    assert_eq!(records.len(), 1, "{records:?}");
    assert!(records[0]["judge_error"].is_object(), "{}", records[0]);
    assert!(
        results_of(&records, "bot")
            .iter()
            .all(|x| x["status"] == "internal")
    );
}
