//! Options and clocks from the game file, the tournament file and the
//! command line, through the real binary: a protocol-2 judge
//! (tests/fixtures/game-options) echoes the `start` it got into its
//! summary, so each case reads exactly what `start.options` and each
//! player's `options` and `time_control` are, and the `clocks` it saw.
//! The precedence: game file < tournament file (`[each]` < entrant) <
//! command line (`--each-option` < `--option`).

mod common;

use std::path::Path;

use common::{assert_has, fixture, referee, write_file};
use serde_json::{Value, json};

fn game_file() -> String {
    fixture("game-options/game.toml")
}

fn answer() -> String {
    fixture("game-options/answer.sh")
}

/// The `start` and `clocks` of each game of a `referee play` run with
/// `args` (before the game file and the bots `a` and `b`).
fn play(args: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let results = dir.path().join("results.jsonl");
    let bots = [format!("a={}", answer()), format!("b={}", answer())];
    let game = game_file();
    let mut all = vec!["play", "--results", results.to_str().unwrap()];
    all.extend(args);
    all.push(&game);
    all.extend(bots.iter().map(String::as_str));
    let run = referee(&all, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    common::jsonl(&results)
        .into_iter()
        .map(|r| r["summary"].clone())
        .collect()
}

/// Each player's entry of a `start`, by its name.
fn player<'a>(start: &'a Value, name: &str) -> &'a Value {
    start["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no player {name} in {start}"))
}

fn clock(base_ms: u64, increment_ms: u64) -> Value {
    json!({"base_micros": base_ms * 1000, "increment_micros": increment_ms * 1000})
}

#[test]
fn play_takes_the_game_files_options_alone() {
    let games = play(&[]);
    let start = &games[0]["start"];
    assert_eq!(start["options"], json!({"nodes": 100, "book": "a.epd"}));
    assert_eq!(player(start, "a")["options"], json!({}));
    assert_eq!(player(start, "a")["time_control"], Value::Null);
    // No clock, no clocks.
    assert_eq!(games[0]["clocks"], json!([null, null]));
}

#[test]
fn play_options_and_clocks_from_the_command_line() {
    let games = play(&[
        "--game-option",
        "nodes=5000",
        "--game-option",
        "adjudicate=true",
        "--game-option",
        "order=random",
        "--each-option",
        "Hash=16",
        "--each-option",
        "Threads=1",
        "--option",
        "b:Hash=64",
        "--time-control",
        "2s+50ms",
        "--time-control",
        "b:1s+25ms",
    ]);
    let start = &games[0]["start"];
    assert_eq!(
        start["options"],
        json!({"nodes": 5000, "book": "a.epd", "adjudicate": true, "order": "random"})
    );
    let (a, b) = (player(start, "a"), player(start, "b"));
    assert_eq!(a["options"], json!({"Hash": 16, "Threads": 1}));
    assert_eq!(b["options"], json!({"Hash": 64, "Threads": 1}));
    assert_eq!(a["time_control"], clock(2000, 50));
    assert_eq!(b["time_control"], clock(1000, 25));
    // Each seat's clock runs on its own control: after its first move,
    // b has at most its 1s + 25ms, a more than that.
    let (seat_a, seat_b) = (a["seat"].as_u64().unwrap(), b["seat"].as_u64().unwrap());
    let last = &games[0]["clocks"][1];
    let left = |seat: u64| last[seat as usize].as_u64().unwrap();
    assert!(left(seat_b) <= 1_025_000, "{last}");
    assert!(
        left(seat_a) > 1_025_000 && left(seat_a) <= 2_050_000,
        "{last}"
    );
}

/// A tournament file in `dir` of the echo game with `extra` lines (its
/// `[options]`, `[each]`) and two entrants with their own `a` and `b`
/// lines.
fn tournament_file(dir: &Path, extra: &str, a: &str, b: &str) -> String {
    let text = format!(
        "game = {:?}\ngames = 2\nseed = 3\njobs = 1\n{extra}\n\
         [[entrant]]\nname = \"a\"\ncommand = [{:?}]\n{a}\n\
         [[entrant]]\nname = \"b\"\ncommand = [{:?}]\n{b}\n",
        game_file(),
        answer(),
        answer()
    );
    let path = write_file(dir, "t.toml", text);
    path.to_str().unwrap().to_owned()
}

/// The first game's summary of a tournament run of `file` with `args`.
fn tournament(dir: &Path, file: &str, args: &[&str]) -> Value {
    let out = dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let mut all = vec!["tournament", "--no-progress", file, "--out"];
    all.push(out.to_str().unwrap());
    all.extend(args);
    let run = referee(&all, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    common::timeless_records(&out)[0]["summary"].clone()
}

#[test]
fn a_tournament_file_overrides_the_game_file_and_the_command_line_it() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = tournament_file(
        dir.path(),
        "[options]\nnodes = 200\nmax_plies = 80\n\
         [each]\noptions = { Hash = 16, Threads = 1 }\ntime_control = \"2s+50ms\"",
        "options = { Hash = 32, \"Skill Level\" = 3 }",
        "time_control = \"1s+25ms\"",
    );
    let summary = tournament(dir.path(), &file, &[]);
    let start = &summary["start"];
    assert_eq!(
        start["options"],
        json!({"nodes": 200, "book": "a.epd", "max_plies": 80})
    );
    let (a, b) = (player(start, "a"), player(start, "b"));
    assert_eq!(
        a["options"],
        json!({"Hash": 32, "Threads": 1, "Skill Level": 3})
    );
    assert_eq!(b["options"], json!({"Hash": 16, "Threads": 1}));
    assert_eq!(a["time_control"], clock(2000, 50));
    assert_eq!(b["time_control"], clock(1000, 25));
    let last = &summary["clocks"][1];
    let left = |p: &Value| last[p["seat"].as_u64().unwrap() as usize].as_u64().unwrap();
    assert!(left(b) <= 1_025_000 && left(a) > 1_025_000, "{last}");
    // The command line over the file.
    let summary = tournament(
        dir.path(),
        &file,
        &[
            "--game-option",
            "nodes=300",
            "--game-option",
            "book=\"b c.epd\"",
        ],
    );
    assert_eq!(
        summary["start"]["options"],
        json!({"nodes": 300, "book": "b c.epd", "max_plies": 80})
    );
}

/// Bad settings are usage errors naming the flag, or the file and key.
#[test]
fn bad_options_are_named() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let bots = [format!("a={}", answer()), format!("b={}", answer())];
    let game = game_file();
    for (args, says) in [
        (vec!["--game-option", "nodes"], "--game-option"),
        (vec!["--each-option", "=3"], "--each-option"),
        (vec!["--time-control", "b:fast"], "--time-control"),
        (vec!["--time-control", "c:1s"], "no BOT is named \"c\""),
        (
            vec!["--time-control", "1s", "--time-control", "2s"],
            "--time-control BASE+INC is given twice",
        ),
    ] {
        let mut all = vec!["play"];
        all.extend(&args);
        all.push(&game);
        all.extend(bots.iter().map(String::as_str));
        let run = referee(&all, b"");
        assert_eq!(run.code, Some(64), "{args:?}: {run:?}");
        assert!(
            run.stderr.contains(says),
            "{args:?}: {says} in {}",
            run.stderr
        );
    }
    for (extra, a, says) in [
        ("[each]\nhash = 1", "", "hash"),
        ("", "time_control = \"fast\"", "line 9"),
        ("[each]\ntime_control = \"1x\"", "", "line 6"),
    ] {
        let file = tournament_file(dir.path(), extra, a, "");
        let run = referee(["tournament", "--no-progress", &file], b"");
        assert_eq!(run.code, Some(64), "{extra} {a}: {run:?}");
        assert!(
            run.stderr.contains("t.toml") && run.stderr.contains(says),
            "{says} in {}",
            run.stderr
        );
    }
}

/// A built-in game has no judge to take options: `[options]` and
/// `--game-option` are refused, as entrant options are.
#[test]
fn a_built_in_game_refuses_judge_options() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = dir.path().join("s.toml");
    let write = |extra: &str| {
        std::fs::write(
            &file,
            format!(
                "game = \"septica\"\ngames = 2\n{extra}\n[[entrant]]\nname = \"a\"\ncommand = [\"x\"]\n"
            ),
        )
        .unwrap();
    };
    write("[options]\nnodes = 1");
    let run = referee(["tournament", "--no-progress", file.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "septica has none");
    write("");
    let args = ["tournament", "--no-progress", file.to_str().unwrap()];
    let run = referee(args.iter().chain(&["--game-option", "nodes=1"]), b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "--game-option");
    write("[each]\ntime_control = \"1s\"");
    let run = referee(args, b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "time_control per entrant");
}

/// Issue 51: a path among the judge's options (a chess book) given in a
/// tournament file was read from the judge's folder. A game file says
/// which of its options are paths (`path_options`); one given in a
/// tournament file is read from that file's folder, one given on the
/// command line from the current folder, and reaches the judge as an
/// absolute path. A name found in neither place but in the game's folder
/// (the book the game ships) stays as given, for the judge to read there,
/// as before; the game file's own stay as given too.
#[test]
fn path_options_are_read_from_where_they_were_given() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = dir.path().canonicalize().unwrap();
    let [game_dir, here, there] = ["game", "here", "there"].map(|d| root.join(d));
    for (folder, files) in [
        (&game_dir, &["a.epd", "shipped.epd"][..]),
        (&here, &["x.epd", "t.epd"][..]),
        (&there, &["c.epd"][..]),
    ] {
        std::fs::create_dir(folder).unwrap();
        for file in files {
            write_file(folder, file, "");
        }
    }
    let game = game_dir.join("game.toml");
    std::fs::write(
        &game,
        format!(
            "name = \"echo\"\njudge = [\"python3\", {:?}]\nprotocol = 2\n\
             players = {{ min = 2, max = 2 }}\nreuse = true\npath_options = [\"book\"]\n\
             [options]\nnodes = 100\nbook = \"a.epd\"\n",
            fixture("game-options/judge.py")
        ),
    )
    .unwrap();
    let game = game.to_str().unwrap().to_owned();
    let bots = [format!("a={}", answer()), format!("b={}", answer())];
    let play_in = |cwd: &Path, args: &[&str]| -> Value {
        let mut all = vec!["play", "--results", "r.jsonl"];
        all.extend(args);
        all.push(&game);
        all.extend(bots.iter().map(String::as_str));
        let run = common::referee_with(&all, b"", &[], Some(cwd));
        assert_eq!(run.code, Some(0), "{run:?}");
        let records = common::jsonl(&cwd.join("r.jsonl"));
        std::fs::remove_file(cwd.join("r.jsonl")).unwrap();
        records[0]["summary"]["start"]["options"]["book"].clone()
    };
    let at = |folder: &Path, name: &str| json!(folder.join(name).to_str().unwrap());
    // The game file's own, as given: its judge runs in its folder.
    assert_eq!(play_in(&here, &[]), json!("a.epd"));
    assert_eq!(
        play_in(&here, &["--game-option", "book=x.epd"]),
        at(&here, "x.epd")
    );
    // Found nowhere: where it was meant, for the judge's error to name.
    assert_eq!(
        play_in(&here, &["--game-option", "book=none.epd"]),
        at(&here, "none.epd")
    );
    assert_eq!(
        play_in(&here, &["--game-option", "book=shipped.epd"]),
        json!("shipped.epd")
    );
    assert_eq!(
        play_in(&here, &["--game-option", "book=/abs/b.epd"]),
        json!("/abs/b.epd")
    );
    // A tournament file's, from its folder; the command line's from the
    // current one.
    let file = write_file(
        &here,
        "t.toml",
        format!(
            "game = {game:?}\ngames = 2\nseed = 3\njobs = 1\n[options]\nbook = \"t.epd\"\n\
             [[entrant]]\nname = \"a\"\ncommand = [{:?}]\n\
             [[entrant]]\nname = \"b\"\ncommand = [{:?}]\n",
            answer(),
            answer()
        ),
    );
    let tournament_in = |cwd: &Path, args: &[&str]| -> Value {
        let out = cwd.join("out");
        let _ = std::fs::remove_dir_all(&out);
        let mut all = vec!["tournament", "--no-progress", file.to_str().unwrap()];
        all.extend(["--out", out.to_str().unwrap()]);
        all.extend(args);
        let run = common::referee_with(&all, b"", &[], Some(cwd));
        assert_eq!(run.code, Some(0), "{run:?}");
        common::timeless_records(&out)[0]["summary"]["start"]["options"]["book"].clone()
    };
    assert_eq!(tournament_in(&there, &[]), at(&here, "t.epd"));
    assert_eq!(
        tournament_in(&there, &["--game-option", "book=c.epd"]),
        at(&there, "c.epd")
    );
}

/// `path_options` must name options of the game: a misspelt name would
/// leave a path read from the wrong folder without a word.
#[test]
fn path_options_must_be_words() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let game = write_file(
        dir.path(),
        "game.toml",
        "name = \"echo\"\njudge = [\"python3\", \"judge.py\"]\nprotocol = 2\n\
         players = { min = 2, max = 2 }\npath_options = [\"\"]\n",
    );
    let bots = [format!("a={}", answer()), format!("b={}", answer())];
    let run = referee(["play", game.to_str().unwrap(), &bots[0], &bots[1]], b"");
    run.expect_stderr(64, "path_options");
}
