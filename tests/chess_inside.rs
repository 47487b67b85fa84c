//! The shipped chess game's judge runs inside the referee, on the game
//! thread (issue 50): no judge process is started, and its games are the
//! ones the same judge plays as a process (`referee __chess-judge`, named
//! by the binary's path), record for record. Its game file's relative
//! paths are read from the game's folder, as the process reads them from
//! its working folder.

#[path = "common/chess.rs"]
mod chess_common;
mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::Marker;
use serde_json::Value;

/// Two positions, for the games' openings (a relative path in the game
/// file).
const BOOK: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\";\n\
                    rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - id \"d4\";\n";

/// A chess game file in a folder of its own, with a book beside it, whose
/// judge is `judge` (TOML): the shipped game's but for them.
fn game_folder(dir: &Path, name: &str, judge: &str) -> String {
    let folder = dir.join(name);
    std::fs::create_dir(&folder).unwrap();
    let shipped = std::fs::read_to_string(format!(
        "{}/games/chess/game.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let named = "judge = [\"referee\", \"__chess-judge\"]";
    assert!(
        shipped.contains(named),
        "the shipped game file names its judge so"
    );
    let text = shipped.replace(named, &format!("judge = {judge}"));
    let text = text.replace(
        "[options]\n",
        "[options]\nopenings = \"book.epd\"\norder = \"sequential\"\n",
    );
    std::fs::write(folder.join("game.toml"), text).unwrap();
    std::fs::write(folder.join("book.epd"), BOOK).unwrap();
    folder.join("game.toml").display().to_string()
}

/// `referee play` of `game` between two fake engines, run from `cwd`: its
/// records, and the command lines of the judge processes seen while it
/// ran.
fn play(game: &str, cwd: &Path, results: &Path) -> (Vec<Value>, Vec<String>) {
    let bots = [
        chess_common::fake("a", "fuzz 21"),
        chess_common::fake("b", "fuzz 22"),
    ];
    let mut args = vec![
        "--no-fsync".to_owned(),
        "play".into(),
        "--games".into(),
        "12".into(),
        "--seed".into(),
        "5".into(),
        "--record-moves".into(),
        "--game-option".into(),
        "max_plies=60".into(),
        "--results".into(),
        results.display().to_string(),
        game.into(),
    ];
    args.extend(bots);
    let marker = Marker::new();
    let mut cmd = common::command(&args, &marker);
    let stderr = results.with_extension("stderr");
    cmd.current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap());
    let mut child = cmd.spawn().expect("start referee");
    let mut judges = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        for process in marker.survivors() {
            if process.contains("__chess-judge") && !judges.contains(&process) {
                judges.push(process);
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the run did not end");
        std::thread::sleep(Duration::from_millis(10));
    };
    marker.assert_none_left();
    let stderr = std::fs::read_to_string(&stderr).unwrap();
    assert!(status.success(), "{status}: {stderr}");
    let mut records = common::jsonl(results);
    records.sort_by_key(|r| r["index"].as_u64());
    (records, judges)
}

/// A record's text with its measured times left out (no two runs take the
/// same): the PGN's and frames' `0.123s`, the players' microseconds.
fn timeless(record: &Value) -> Value {
    let mut record = record.clone();
    let re = regex::Regex::new(r"\d+\.\d{3}s").unwrap();
    let text = |v: &Value| re.replace_all(&v.to_string(), "T").into_owned();
    let players: Vec<Value> = record["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            serde_json::json!({
                "status": p["status"], "score": p["score"], "rank": p["rank"],
                "error": p["error"], "name": p["name"],
            })
        })
        .collect();
    record["players"] = Value::Array(players);
    record["summary"] = Value::String(text(&record["summary"]));
    record["frames"] = Value::String(text(&record["frames"]));
    for key in ["elapsed_micros", "time", "started", "ended"] {
        record.as_object_mut().unwrap().remove(key);
    }
    record
}

#[test]
fn the_shipped_chess_judge_runs_inside_the_referee_and_plays_as_its_process_does() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let inside = game_folder(dir.path(), "inside", "[\"referee\", \"__chess-judge\"]");
    let process = game_folder(
        dir.path(),
        "process",
        &format!("[\"{}\", \"__chess-judge\"]", common::referee_bin()),
    );
    // Run from elsewhere: the book is found beside each game file.
    let (inside_records, inside_judges) = play(&inside, dir.path(), &dir.path().join("i.jsonl"));
    let (process_records, process_judges) = play(&process, dir.path(), &dir.path().join("p.jsonl"));
    assert!(
        inside_judges.is_empty(),
        "a judge process ran: {inside_judges:?}"
    );
    // One process (seen as its launcher too, before the launcher execs it).
    let pids: std::collections::BTreeSet<&str> = process_judges
        .iter()
        .filter_map(|p| p.split(':').next())
        .collect();
    assert_eq!(pids.len(), 1, "{process_judges:?}");
    assert_eq!(inside_records.len(), 12);
    assert_eq!(process_records.len(), 12);
    let mut openings = std::collections::BTreeSet::new();
    for (i, p) in inside_records.iter().zip(&process_records) {
        assert_eq!(timeless(i), timeless(p), "\ninside:  {i}\nprocess: {p}");
        openings.insert(i["summary"]["opening_name"].to_string());
    }
    assert_eq!(openings.len(), 2, "both openings of the book: {openings:?}");
}

#[test]
fn a_book_the_inside_judge_cannot_read_is_refused_with_its_path_as_given() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let game = game_folder(dir.path(), "inside", "[\"referee\", \"__chess-judge\"]");
    std::fs::remove_file(dir.path().join("inside/book.epd")).unwrap();
    let run = common::referee_with(
        [
            "play",
            "--games",
            "1",
            &game,
            &chess_common::fake("a", "fuzz 1"),
            &chess_common::fake("b", "fuzz 2"),
        ],
        b"",
        &[],
        Some(dir.path()),
    );
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(
        run.stderr.contains("openings = \"book.epd\"")
            && run.stderr.contains("No such file or directory: 'book.epd'"),
        "{}",
        run.stderr
    );
}
