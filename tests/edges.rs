//! The edges of a run: an interrupt, a reader that goes away, a judge that
//! fails, shards that disagree. No record is lost, none is bent, and a game
//! that did not finish is played again.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{
    Marker, assert_has, finish, fixture, referee, signal, start, temp_path, wait_for_lines,
    write_file,
};
use nix::sys::signal::Signal;
use serde_json::Value;

fn edges(name: &str) -> String {
    fixture(&format!("edges/{name}"))
}

fn judge_errors(records: &[Value]) -> Vec<&Value> {
    records
        .iter()
        .filter(|r| r.get("judge_error").is_some())
        .collect()
}

/// Starts `referee ARGS`, waits until `results` holds `lines` records and
/// a moment more (the next game is in flight), and interrupts it.
fn interrupt_after(args: &[&str], results: &Path, lines: usize, wait: Duration) -> common::Run {
    let marker = Marker::new();
    let child = start(args, &marker);
    wait_for_lines(results, lines);
    std::thread::sleep(wait);
    signal(&child, Signal::SIGINT);
    let run = finish(child, b"");
    marker.assert_none_left();
    assert_eq!(run.code, Some(130), "{run:?}");
    run
}

#[test]
fn ctrl_c_during_a_game_of_play_records_nothing_of_it() {
    for wait in [20, 90, 160] {
        let (_dir, results) = temp_path("r.jsonl");
        let (race, slow) = (edges("race.toml"), edges("slow.sh"));
        let args = [
            "--no-fsync",
            "play",
            "--seed",
            "1",
            "--games",
            "5",
            "--results",
            results.to_str().unwrap(),
            &race,
            &slow,
            &slow,
        ];
        let run = interrupt_after(&args, &results, 1, Duration::from_millis(wait));
        let records = common::jsonl(&results);
        assert!(judge_errors(&records).is_empty(), "{records:?}");
        assert!(!run.stdout.contains("judge error"), "{run:?}");
        assert!(!run.stderr.contains("judge error"), "{run:?}");
        // Every game reported is in the file, and nothing else is.
        let reported = common::lines_starting(&run.stdout, "game ").len();
        assert_eq!(reported, records.len(), "{run:?}");
        for record in &records {
            for player in record["players"].as_array().unwrap() {
                assert_eq!(player["status"], "ok", "{record}");
            }
        }
    }
}

/// `referee tournament FILE --out OUT ARGS...`.
fn tournament_args<'a>(out: &'a str, extra: &[&'a str]) -> Vec<String> {
    let mut args = vec![
        "--no-fsync".to_owned(),
        "tournament".to_owned(),
        edges("tournament.toml"),
        "--no-progress".to_owned(),
        "--out".to_owned(),
        out.to_owned(),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

#[test]
fn ctrl_c_during_a_tournament_game_records_nothing_and_resume_plays_it() {
    let (_dir, out) = temp_path("out");
    let out_arg = out.to_str().unwrap();
    let results = out.join("records.jsonl");
    let args = tournament_args(out_arg, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = interrupt_after(&args, &results, 2, Duration::from_millis(80));
    let records = common::jsonl(&results);
    assert!(judge_errors(&records).is_empty(), "{records:?}");
    assert!(!run.stderr.contains("judge error"), "{run:?}");
    // The standings printed count exactly the games in the file.
    let said = format!(
        "standings after {} finished game{}",
        records.len(),
        if records.len() == 1 { "" } else { "s" }
    );
    assert!(run.stdout.contains(&said), "{said}\n{run:?}");

    let args = tournament_args(out_arg, &["--resume"]);
    let run = referee(&args, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = common::jsonl(&results);
    let mut indices: Vec<u64> = records
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    indices.sort();
    assert_eq!(indices, [1, 2, 3, 4, 5, 6], "{records:?}");
    assert!(judge_errors(&records).is_empty(), "{records:?}");
}

/// Slurm (a requeue), Kubernetes and systemd stop a job by signalling all
/// its processes at once: a bot may die of the SIGTERM a moment before the
/// referee gets its own. That game ended because the run did: it is not
/// recorded as the bot's crash (the Slurm test's requeue met this once).
#[test]
fn a_bot_stopped_with_the_whole_job_is_not_recorded_as_crashed() {
    let dir = tempfile::tempdir().unwrap();
    // Kills itself with SIGTERM; the test signals the referee 50 ms later,
    // from outside (a process the bot left behind would be killed with it,
    // its cgroup's, before it could).
    let ready = dir.path().join("signalled");
    let bot = write_file(
        dir.path(),
        "stopped.sh",
        format!(
            "#!/bin/sh\ntouch {ready}\nkill -TERM $$\nsleep 5\n",
            ready = ready.display()
        ),
    );
    std::fs::set_permissions(&bot, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let file = write_file(
        dir.path(),
        "t.toml",
        format!(
            "game = \"evensteven\"\ngames = 4\nseed = 1\njobs = 1\n\
             [[entrant]]\nname = \"reference\"\ncommand = [{:?}]\n\
             [[entrant]]\nname = \"stopped\"\ncommand = [{:?}]\n",
            common::evensteven_bin(),
            bot.to_str().unwrap()
        ),
    );
    let out = dir.path().join("out");
    let marker = common::Marker::new();
    let child = common::start(
        [
            "tournament",
            file.to_str().unwrap(),
            "--no-progress",
            "--out",
            out.to_str().unwrap(),
        ],
        &marker,
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !ready.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    common::signal(&child, nix::sys::signal::Signal::SIGTERM);
    let run = common::finish(child, b"");
    marker.assert_none_left();
    assert!(run.stderr.contains("interrupted by SIGTERM"), "{run:?}");
    let records = common::jsonl(&out.join("records.jsonl"));
    assert!(records.is_empty(), "{records:?}");
}

#[test]
fn a_reader_that_stops_at_a_game_line_finds_that_game_recorded() {
    for _ in 0..3 {
        let (_dir, results) = temp_path("r.jsonl");
        let marker = Marker::new();
        // The header, then game 1's line: `head` leaves after it.
        let script = format!(
            "{} {} --no-fsync play --seed 1 --games 4 --results {} {} {} {} | head -2",
            common::referee_bin(),
            common::MARKER_ENV.join(" "),
            results.display(),
            edges("race.toml"),
            edges("slow.sh"),
            edges("slow.sh"),
        );
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", &script]);
        marker.apply(&mut cmd);
        let output = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_has(&stdout, "game 1:");
        // The referee is gone at once, and with it its bots.
        std::thread::sleep(Duration::from_millis(100));
        marker.assert_none_left();
        let records = common::jsonl(&results);
        assert!(
            records.iter().any(|r| r["index"] == 1),
            "game 1 was reported but not recorded: {records:?}"
        );
        assert!(judge_errors(&records).is_empty(), "{records:?}");
    }
}

/// A game file and a tournament file in `dir` for the edge judge with
/// `judge_args`, between entrants `a` and `b` playing `bots`.
fn edge_tournament(dir: &Path, judge_args: &[&str], bots: [&str; 2], games: u32) -> String {
    let quoted: Vec<String> = judge_args.iter().map(|a| format!("{a:?}")).collect();
    write_file(
        dir,
        "game.toml",
        format!(
            "name = \"edge\"\njudge = [\"python3\", {:?}, {}]\nplayers = {{ min = 2, max = 2 }}\n",
            edges("judge.py"),
            quoted.join(", ")
        ),
    );
    let file = write_file(
        dir,
        "tournament.toml",
        format!(
            "game = \"game.toml\"\ngames = {games}\nseed = 1\njobs = 1\n\n\
             [limits]\ntimeout = \"150ms\"\n\n\
             [[entrant]]\nname = \"a\"\ncommand = [{:?}]\n\n\
             [[entrant]]\nname = \"b\"\ncommand = [{:?}]\n",
            edges(bots[0]),
            edges(bots[1])
        ),
    );
    file.to_str().unwrap().to_owned()
}

fn run_tournament(file: &str, out: &Path, extra: &[&str]) -> common::Run {
    let mut args = vec![
        "--no-fsync",
        "tournament",
        file,
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    referee(args, b"")
}

/// The tournament file in `dir` of two bots that answer, over two games,
/// and its output folder `dir/NAME` of a run that succeeded.
fn answered_tournament(dir: &Path, name: &str) -> (String, PathBuf) {
    let file = edge_tournament(dir, &[], ["answer.sh", "answer.sh"], 2);
    let out = dir.join(name);
    let run = run_tournament(&file, &out, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    (file, out)
}

fn standings_json(out: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(out.join("standings.json")).unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_game_voided_by_its_judge_is_played_again_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    // A folder: the judge's files that its command names are part of the
    // run's fingerprint, which must not change between the two runs.
    let flag = dir.path().join("crash");
    std::fs::create_dir(&flag).unwrap();
    let file = edge_tournament(
        dir.path(),
        &["--crash-once", flag.to_str().unwrap()],
        ["answer.sh", "answer.sh"],
        4,
    );
    let out = dir.path().join("out");
    let run = run_tournament(&file, &out, &[]);
    run.expect_stderr(70, "lost my marbles");
    let records = common::jsonl(&out.join("records.jsonl"));
    assert_eq!(judge_errors(&records).len(), 1, "{records:?}");

    let run = run_tournament(&file, &out, &["--resume"]);
    run.expect_stdout(0, "standings after 4 games");
    let standings = standings_json(&out);
    for row in &standings {
        assert_eq!(row["games"], 4, "{standings:?}");
        assert_eq!(row["internal"], 0, "{standings:?}");
    }
    let grades = std::fs::read_to_string(out.join("grades.csv")).unwrap();
    for line in grades.lines().skip(1) {
        assert!(
            line.starts_with("a,4,") || line.starts_with("b,4,"),
            "{grades}"
        );
    }
}

#[test]
fn the_judges_ranking_decides_the_standings_not_its_scores() {
    let dir = tempfile::tempdir().unwrap();
    // `b` never answers and is ranked last, with the highest score.
    let file = edge_tournament(
        dir.path(),
        &["--rank-reversed"],
        ["answer.sh", "silent.sh"],
        2,
    );
    let out = dir.path().join("out");
    let run = run_tournament(&file, &out, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = common::jsonl(&out.join("records.jsonl"));
    for record in &records {
        let b = record["players"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["entrant"] == "b")
            .unwrap();
        assert_eq!(
            (b["score"].as_f64(), b["rank"].as_u64()),
            (Some(10.0), Some(2))
        );
    }
    let standings = standings_json(&out);
    assert_eq!(standings[0]["entrant"], "a", "{standings:?}");
    assert_eq!(standings[0]["wins"], 2.0, "{standings:?}");
    assert_eq!(standings[1]["wins"], 0.0, "{standings:?}");
    assert!(
        standings[0]["rating"].as_f64() > standings[1]["rating"].as_f64(),
        "{standings:?}"
    );
}

/// `referee ARGS` unable to make any file bigger (RLIMIT_FSIZE 0, SIGXFSZ
/// ignored: a write fails with EFBIG, as on a full disk).
fn referee_on_a_full_disk(args: &[&str]) -> common::Run {
    use std::os::unix::process::CommandExt;
    let marker = Marker::new();
    let mut cmd = common::command(args, &marker);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: setrlimit and signal are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_FSIZE, 0, 0)?;
            nix::sys::signal::signal(Signal::SIGXFSZ, nix::sys::signal::SigHandler::SigIgn)?;
            Ok(())
        });
    }
    let run = finish(cmd.spawn().unwrap(), b"");
    marker.assert_none_left();
    run
}

#[test]
fn a_file_that_cannot_be_rewritten_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let (file, out) = answered_tournament(dir.path(), "out");
    let whole = [
        "run.json",
        "tournament.toml",
        "standings.json",
        "standings.csv",
        "grades.csv",
        "report.html",
    ];
    let before: Vec<Vec<u8>> = whole
        .iter()
        .map(|name| std::fs::read(out.join(name)).unwrap())
        .collect();
    for args in [
        vec!["tournament", &file, "--no-progress", "--resume", "--out"],
        vec!["merge", "--out"],
    ] {
        let mut args = args.clone();
        let out_arg = out.to_str().unwrap();
        args.push(out_arg);
        if args[0] == "merge" {
            args.push(out_arg);
        }
        let run = referee_on_a_full_disk(&args);
        run.expect_stderr(74, "File too large");
        for (name, before) in whole.iter().zip(&before) {
            let now = std::fs::read(out.join(name)).unwrap();
            assert!(&now == before, "{name} changed: {run:?}");
        }
        // No temporary file is left behind either.
        let names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }
}

#[test]
fn merge_refuses_shards_that_disagree_on_a_game_and_names_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let (file, one) = answered_tournament(dir.path(), "one");
    // The same run twice (its times differ): the same games.
    let same = dir.path().join("same");
    let run = run_tournament(&file, &same, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let merge =
        |a: &Path, b: &Path| referee(["merge", a.to_str().unwrap(), b.to_str().unwrap()], b"");
    let run = merge(&one, &same);
    run.expect_stdout(0, "2 of 2 games");

    // A copy whose game 1 says otherwise: b lost it.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    for name in ["run.json", "tournament.toml"] {
        std::fs::copy(one.join(name), other.join(name)).unwrap();
    }
    let text = std::fs::read_to_string(one.join("records.jsonl")).unwrap();
    let bent: Vec<String> = text
        .lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            if record["index"] == 1 {
                record["players"][1]["score"] = Value::from(0);
                record["players"][1]["rank"] = Value::from(2);
            }
            record.to_string()
        })
        .collect();
    write_file(&other, "records.jsonl", bent.join("\n") + "\n");
    for (a, b) in [(&one, &other), (&other, &one)] {
        let run = merge(a, b);
        run.expect_stderr(64, "game 1 is recorded differently");
        for path in [a, b] {
            let named = path.join("records.jsonl");
            assert!(run.stderr.contains(named.to_str().unwrap()), "{run:?}");
        }
    }

    // Refused into an --out that holds something else: nothing there is
    // touched (the merge writes as it reads, but puts nothing in place
    // before it has read every record).
    let into = dir.path().join("into");
    std::fs::create_dir(&into).unwrap();
    let kept = [
        ("run.json", "{\"kept\": true}\n"),
        ("records.jsonl", "kept\n"),
    ];
    for (name, text) in kept {
        write_file(&into, name, text);
    }
    let run = referee(
        [
            "merge",
            one.to_str().unwrap(),
            other.to_str().unwrap(),
            "--out",
            into.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(64), "{run:?}");
    for (name, text) in kept {
        assert_eq!(
            std::fs::read_to_string(into.join(name)).unwrap(),
            text,
            "{name}"
        );
    }
    let names: Vec<String> = std::fs::read_dir(&into)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn ci_shows_a_failed_judges_message_and_stderr_and_names_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let suite = write_file(
        dir.path(),
        "suite.toml",
        format!(
            "[[case]]\nname = \"judged\"\ngame = {:?}\ncommand = [{:?}]\ngames = 2\n",
            fixture("judges/crash.toml"),
            edges("answer.sh")
        ),
    );
    let junit = dir.path().join("junit.xml");
    let run = referee(
        [
            "ci",
            suite.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    let said = "2 games void: the judge failed (first, game 1: the judge ended before its `end` message: exited with status 3)";
    assert!(run.stdout.contains(said), "{run:?}");
    assert!(!run.stdout.contains("internal error"), "{run:?}");
    assert!(
        run.stderr.contains("  | judge: cannot cope with"),
        "{run:?}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase"))
        .unwrap();
    // The game's name (its file's `name`), not the file's path.
    assert_eq!(case.attribute("classname"), Some("suite.crash"), "{xml}");
    let error = case
        .children()
        .find(|n| n.has_tag_name("error"))
        .expect("an error element: the harness failed, not the bot");
    assert!(error.attribute("message").unwrap().contains(said), "{xml}");
    let stderr = case
        .children()
        .find(|n| n.has_tag_name("system-err"))
        .and_then(|n| n.text())
        .unwrap_or_default();
    assert!(stderr.contains("judge: cannot cope with"), "{xml}");
}

#[test]
fn a_player_eliminated_as_ok_is_answered_as_out_with_the_judges_message() {
    let dir = tempfile::tempdir().unwrap();
    let (run, records) = play_two(dir.path(), &edges("eliminate.toml"));
    assert_eq!(run.code, Some(0), "{run:?}");
    let log: Vec<Value> = records[0]["log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| serde_json::from_str(l.as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(log[0]["text"], "x", "{log:?}");
    assert!(log[0].get("out").is_none(), "{log:?}");
    assert_eq!(
        log[1],
        serde_json::json!({"player": 1, "micros": 0, "out": true, "status": "ok", "message": "bust: over 21"})
    );
    assert_eq!(records[0]["players"][1]["status"], "ok", "{records:?}");
}

/// `referee play --record-moves` of `game` between two `answer.sh`, its
/// results in `dir`.
fn play_two(dir: &Path, game: &str) -> (common::Run, Vec<Value>) {
    let results = dir.join("r.jsonl");
    let answer = edges("answer.sh");
    let run = referee(
        [
            "--no-fsync",
            "play",
            "--seed",
            "1",
            "--record-moves",
            "--results",
            results.to_str().unwrap(),
            game,
            &answer,
            &answer,
        ],
        b"",
    );
    (run, common::jsonl(&results))
}

/// [`play_two`] of a game file written into `dir`.
fn play_game_file(dir: &Path, game_file: &str) -> (common::Run, Vec<Value>) {
    let game = write_file(dir, "game.toml", game_file);
    play_two(dir, game.to_str().unwrap())
}

#[test]
fn a_game_file_bounds_a_games_time_and_the_frames_kept() {
    let dir = tempfile::tempdir().unwrap();
    let judge = edges("endless.py");
    let (run, records) = play_game_file(
        dir.path(),
        &format!(
            "name = \"endless\"\njudge = [\"python3\", {judge:?}]\nplayers = {{ min = 2, max = 2 }}\n\
             [limits]\ngame_timeout = \"300ms\"\n"
        ),
    );
    assert_eq!(run.code, Some(70), "{run:?}");
    let error = records[0]["judge_error"]["message"].as_str().unwrap();
    assert_eq!(
        error,
        "the game did not end within its limits.game_timeout (300ms)"
    );
    assert!(run.elapsed < Duration::from_secs(20), "{run:?}");

    let (run, records) = play_game_file(
        dir.path(),
        &format!(
            "name = \"frames\"\njudge = [\"python3\", {judge:?}, \"--frames\", \"50\"]\n\
             players = {{ min = 2, max = 2 }}\n[limits]\nmax_frames = 10\n"
        ),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let last = records.last().unwrap();
    assert_eq!(last["frames"].as_array().unwrap().len(), 10, "{last}");
    assert_eq!(last["frames"][9]["i"], 9, "{last}");
    assert_eq!(last["frames_truncated"], true, "{last}");
}

#[test]
fn a_frame_colour_that_is_not_a_colour_is_the_judges_fault() {
    let dir = tempfile::tempdir().unwrap();
    let judge = edges("endless.py");
    for (colour, code) in [("#0a0", 0), ("Teal", 0), ("url(http://127.0.0.1:9/x)", 70)] {
        let (run, records) = play_game_file(
            dir.path(),
            &format!(
                "name = \"colours\"\njudge = [\"python3\", {judge:?}, \"--frames\", \"2\", \"--colour\", {colour:?}]\n\
                 players = {{ min = 2, max = 2 }}\n"
            ),
        );
        assert_eq!(run.code, Some(code), "{colour}: {run:?}");
        if code == 70 {
            let error = records.last().unwrap()["judge_error"]["message"].to_string();
            assert_has(&error, "url(http://127.0.0.1:9/x)");
        }
    }
}

#[test]
fn ctrl_c_during_a_built_in_game_records_nothing_of_it() {
    let (_dir, results) = temp_path("r.jsonl");
    let marker = Marker::new();
    let acesup = format!("ACESUP={}", env!("CARGO_BIN_EXE_acesup"));
    let args = [
        "--env",
        &acesup,
        "--no-fsync",
        "acesup",
        "--random",
        "20",
        "--results",
        results.to_str().unwrap(),
        &edges("slow-acesup.sh"),
    ];
    let mut cmd = common::command(args, &marker);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    wait_for_lines(&results, 2);
    std::thread::sleep(Duration::from_millis(100));
    signal(&child, Signal::SIGINT);
    let run = finish(child, b"");
    marker.assert_none_left();
    assert_eq!(run.code, Some(130), "{run:?}");
    let records = common::jsonl(&results);
    for record in &records {
        assert_eq!(record["verdict"], "accepted", "{record}");
    }
    let reported = common::lines_starting(&run.stdout, "deck ").len();
    assert_eq!(reported, records.len(), "{run:?}");
}
