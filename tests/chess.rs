//! Chess (games/chess) through the real binary, over judge protocol 2:
//! Stockfish against itself in colour-swapped pairs, each game replayed
//! apart from the judge from its PGN; fake engines that play an illegal
//! move, no move, or past their clock. Each test skips, saying why,
//! without Debian's stockfish or the judge's venv (scripts/test.sh makes
//! both).

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use common::{fixture, referee};
use serde_json::Value;

const STOCKFISH: &str = "/usr/games/stockfish";

/// The rules' own ends and the adjudications: every way a game between
/// engines that play by the rules may end.
const RULES: [&str; 5] = [
    "checkmate",
    "stalemate",
    "insufficient_material",
    "fifty_moves",
    "threefold_repetition",
];
const ADJUDICATED: [&str; 3] = ["resignation", "draw_by_score", "max_plies"];

/// One chess test at a time: two at once would have four engines share
/// two CPUs, and the clocks charge the wait.
static SERIAL: Mutex<()> = Mutex::new(());

fn root() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

fn python() -> String {
    format!("{}/games/chess/.venv/bin/python3", root())
}

/// Why these tests cannot run on this machine, if they cannot.
fn missing() -> Option<String> {
    if !Path::new(STOCKFISH).exists() {
        return Some(format!("{STOCKFISH} is missing: apt-get install stockfish"));
    }
    let imports = Command::new(python())
        .args(["-c", "import chess"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !imports {
        return Some("games/chess/.venv cannot import chess: run games/chess/make-venv.sh".into());
    }
    None
}

/// Takes the chess tests' lock, or says why the test skips (`None`).
fn ready() -> Option<std::sync::MutexGuard<'static, ()>> {
    if let Some(why) = missing() {
        eprintln!("skipped: {why}");
        return None;
    }
    Some(SERIAL.lock().unwrap_or_else(|e| e.into_inner()))
}

/// `referee play --seed 1 [EXTRA] games/chess/game.toml BOTS`: its records.
fn play(extra: &[&str], bots: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    let game = format!("{}/games/chess/game.toml", root());
    let mut args = vec!["--no-fsync", "play", "--seed", "1", "--results"];
    args.push(results.to_str().unwrap());
    args.extend(extra);
    args.push(&game);
    args.extend(bots);
    let run = referee(args, b"");
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let mut records = common::jsonl(&results);
    records.sort_by_key(|r| r["index"].as_u64());
    records
}

/// Replays each PGN with python-chess, apart from the judge: per game, its
/// plies and how its last position stands by the rules ("on" if the game
/// could go on). A PGN that does not read, or has an illegal move, fails.
fn replay(pgns: &[&str]) -> Vec<(u64, String)> {
    const SCRIPT: &str = r#"
import io, json, sys
import chess.pgn
for text in json.load(sys.stdin):
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None and not game.errors, (text, game and game.errors)
    board = game.end().board()
    state = ("checkmate" if board.is_checkmate() else "stalemate" if board.is_stalemate()
             else "insufficient_material" if board.is_insufficient_material()
             else "fifty_moves" if board.is_fifty_moves()
             else "threefold_repetition" if board.is_repetition(3) else "on")
    print(len(board.move_stack), state)
"#;
    let mut child = Command::new(python())
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(pgns).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| {
            let (plies, state) = l.split_once(' ').unwrap();
            (plies.parse().unwrap(), state.to_owned())
        })
        .collect()
}

/// The PGN's value of `tag`.
fn tag<'a>(pgn: &'a str, tag: &str) -> Option<&'a str> {
    let start = format!("[{tag} \"");
    let line = pgn.lines().find(|l| l.starts_with(&start))?;
    line[start.len()..].strip_suffix("\"]")
}

#[test]
fn stockfish_plays_colour_swapped_pairs_to_legal_ends() {
    let Some(_serial) = ready() else { return };
    let sf = |name: &str| format!("{name}={STOCKFISH}");
    let (weak, strong) = (sf("weak"), sf("strong"));
    let mut args = vec!["--games", "4", "--time-control", "1s+50ms"];
    // A Move Overhead of 50ms leaves room for the time between the engine's
    // clock and the referee's (pipes, a busy machine): at the default 10ms
    // Stockfish lost on time at 300ms+20ms on a loaded 2-CPU machine.
    for option in [
        "weak:Skill Level=3",
        "strong:Skill Level=8",
        "weak:Hash=16",
        "strong:Hash=16",
        "weak:Move Overhead=50",
        "strong:Move Overhead=50",
    ] {
        args.extend(["--option", option]);
    }
    let records = play(&args, &[&weak, &strong]);
    assert_eq!(records.len(), 4);
    let pgns: Vec<&str> = records
        .iter()
        .map(|r| r["summary"]["pgn"].as_str().expect("a PGN"))
        .collect();
    let replayed = replay(&pgns);
    for (i, record) in records.iter().enumerate() {
        let summary = &record["summary"];
        let players = record["players"].as_array().unwrap();
        let (result, termination) = (summary["result"].as_str().unwrap(), &summary["termination"]);
        let scores: Vec<f64> = players
            .iter()
            .map(|p| p["score"].as_f64().unwrap())
            .collect();
        let want = match result {
            "1-0" => [1.0, 0.0],
            "0-1" => [0.0, 1.0],
            "1/2-1/2" => [0.5, 0.5],
            _ => panic!("game {}: result {result}: {record}", i + 1),
        };
        assert_eq!(scores, want, "{record}");
        // Nobody lost on time, crashed or broke a rule.
        for player in players {
            assert_eq!(player["status"], "ok", "{record}");
        }
        // The game stands as the judge says, replayed from its PGN.
        let plies = summary["plies"].as_u64().unwrap();
        let (replayed_plies, state) = &replayed[i];
        assert_eq!(*replayed_plies, plies, "{record}");
        let termination = termination.as_str().unwrap();
        if RULES.contains(&termination) {
            assert_eq!(state, termination, "{record}");
        } else {
            assert!(ADJUDICATED.contains(&termination), "{record}");
            assert_eq!(state, "on", "{record}");
        }
        if termination == "max_plies" {
            assert_eq!(plies, 400, "{record}");
        }
        // One time per move, not per info line: White's moves and Black's.
        let moves: Vec<u64> = players
            .iter()
            .map(|p| p["micros"].as_array().unwrap().len() as u64)
            .collect();
        let white_first = summary["fen"].as_str().unwrap().split(' ').nth(1) == Some("w");
        let white = if white_first {
            plies.div_ceil(2)
        } else {
            plies / 2
        };
        assert_eq!(moves, [white, plies - white], "{record}");
        // The PGN's tags.
        let pgn = pgns[i];
        assert_eq!(tag(pgn, "Result"), Some(result), "{pgn}");
        assert!(pgn.trim_end().ends_with(result), "{pgn}");
        assert_eq!(tag(pgn, "Site"), Some("referee"), "{pgn}");
        assert_eq!(tag(pgn, "White"), summary["white"].as_str(), "{pgn}");
        assert_eq!(tag(pgn, "Black"), summary["black"].as_str(), "{pgn}");
        assert_eq!(tag(pgn, "SetUp"), Some("1"), "{pgn}");
        assert_eq!(tag(pgn, "FEN"), summary["fen"].as_str(), "{pgn}");
        assert!(tag(pgn, "Termination").is_some(), "{pgn}");
    }
    // Games 2o-1 and 2o: opening o, the same position, colours swapped.
    let names = |r: &Value| (r["summary"]["white"].clone(), r["summary"]["black"].clone());
    for o in 1..=2u64 {
        let (a, b) = (&records[2 * o as usize - 2], &records[2 * o as usize - 1]);
        for r in [a, b] {
            assert_eq!(r["summary"]["opening"], o, "{r}");
            assert_eq!(
                tag(r["summary"]["pgn"].as_str().unwrap(), "Round"),
                Some(&*o.to_string())
            );
        }
        assert_eq!(a["summary"]["fen"], b["summary"]["fen"]);
        let (white, black) = names(a);
        assert_eq!(names(b), (black, white.clone()));
        // Round o's first entrant is entrant o - 1 (mod 2), White in its
        // first game.
        assert_eq!(white, ["weak", "strong"][(o as usize - 1) % 2]);
    }
    assert_ne!(records[0]["summary"]["fen"], records[2]["summary"]["fen"]);
}

/// One game of a fake engine (seat 0, White: game 1's opening has White to
/// move) against Stockfish; the record.
fn against_a_fake(fake: &str, time_control: &str) -> Value {
    // python-chess is in the judge's venv.
    let fake = format!("fake={} {} {fake}", python(), fixture("chess/fake.py"));
    let records = play(
        &["--time-control", time_control, "--option", "fake:Hash=16"],
        &[&fake, STOCKFISH],
    );
    assert_eq!(records.len(), 1);
    let record = records.into_iter().next().unwrap();
    let summary = &record["summary"];
    // The fake misbehaves on its third move, ply 5.
    assert_eq!(summary["plies"], 4, "{record}");
    assert_eq!(summary["result"], "0-1", "{record}");
    assert_eq!(record["players"][0]["score"], 0.0, "{record}");
    assert_eq!(record["players"][1]["score"], 1.0, "{record}");
    assert_eq!(record["players"][1]["status"], "ok", "{record}");
    record
}

#[test]
fn an_illegal_or_unparsable_move_is_incorrect_and_named() {
    let Some(_serial) = ready() else { return };
    for (fake, what) in [
        ("illegal", "illegal move '"),
        ("garbage", "unparsable move 'hello'"),
    ] {
        let record = against_a_fake(fake, "1s+50ms");
        let player = &record["players"][0];
        assert_eq!(player["status"], "incorrect", "{record}");
        let error = player["error"].as_str().unwrap();
        // The move, the ply and the position it was played in.
        assert!(
            error.contains(what) && error.contains("at ply 5, position "),
            "{error}"
        );
        let fen = error.rsplit("position ").next().unwrap();
        assert_eq!(fen.split(' ').count(), 6, "{error}");
        assert_eq!(record["summary"]["termination"], "illegal_move", "{record}");
        let pgn = record["summary"]["pgn"].as_str().unwrap();
        assert_eq!(tag(pgn, "Termination"), Some("rules infraction"), "{pgn}");
        // The entrant's options reached it as UCI's setoption.
        let stderr = player["stderr"].as_str().unwrap_or_default();
        assert!(stderr.contains("setoption name Hash value 16"), "{record}");
    }
}

#[test]
fn an_engine_that_thinks_past_its_clock_loses_on_time() {
    let Some(_serial) = ready() else { return };
    let record = against_a_fake("sleep", "300ms+20ms");
    let player = &record["players"][0];
    assert_eq!(player["status"], "timeout", "{record}");
    assert_eq!(player["phase"], "clock", "{record}");
    assert_eq!(record["summary"]["termination"], "timeout", "{record}");
    let pgn = record["summary"]["pgn"].as_str().unwrap();
    assert_eq!(tag(pgn, "Termination"), Some("time forfeit"), "{pgn}");
    // It waited out the clock's 300ms and two increments, less its two moves,
    // not the move cap of the game file (30s).
    let waited = player["micros"].as_array().unwrap().last().unwrap();
    let waited = waited.as_u64().unwrap();
    assert!((200_000..5_000_000).contains(&waited), "{record}");
}

/// `tournaments/chess.toml` as it is, for two games at its 2s+50ms: no
/// engine out of time (with the file's Move Overhead), and `OUT/games.pgn`
/// holds both games of opening 1, colours swapped, each a PGN that reads.
#[test]
fn the_sample_tournament_writes_both_colours_of_an_opening_to_games_pgn() {
    let Some(_serial) = ready() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let file = format!("{}/tournaments/chess.toml", root());
    let run = referee(
        [
            "--no-fsync",
            "tournament",
            &file,
            "--games",
            "2",
            "--no-progress",
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = common::jsonl(&out.join("records.jsonl"));
    assert_eq!(records.len(), 2);
    for record in &records {
        for result in record["results"].as_array().unwrap() {
            assert_eq!(result["status"], "ok", "{record}");
        }
    }
    let pgn = std::fs::read_to_string(out.join("games.pgn")).unwrap();
    let games: Vec<&str> = pgn.split("\n\n[Event ").collect();
    assert_eq!(games.len(), 2, "{pgn}");
    let (white, black) = (tag(&pgn, "White"), tag(&pgn, "Black"));
    assert_eq!((white, black), (Some("sf-skill-3"), Some("sf-skill-8")));
    let second = format!("[Event {}", games[1]);
    assert_eq!(
        (tag(&second, "White"), tag(&second, "Black")),
        (black, white)
    );
    assert_eq!(tag(&second, "Round"), Some("1"), "{pgn}");
    assert_eq!(replay(&[&pgn[..games[0].len()], &second]).len(), 2);
}

/// Fixed work per move, as fastchess's `nodes=N`: a game file without a
/// clock and with the judge's option `nodes` sends `go nodes N`, and the
/// PGN has no time control.
#[test]
fn fixed_nodes_per_move_without_a_clock() {
    let Some(_serial) = ready() else { return };
    let dir = tempfile::tempdir().unwrap();
    let chess = format!("{}/games/chess", root());
    let game = dir.path().join("game.toml");
    std::fs::write(
        &game,
        format!(
            "name = \"chess\"\njudge = [\"{chess}/.venv/bin/python3\", \"{chess}/judge.py\"]\n\
             protocol = 2\nplayers = {{ min = 2, max = 2 }}\nreuse = true\n\
             [options]\nnodes = 2000\nmax_plies = 6\nopenings = \"{chess}/openings.epd\"\n"
        ),
    )
    .unwrap();
    let results = dir.path().join("r.jsonl");
    let fake = |name: &str| format!("{name}={} {} plays", python(), fixture("chess/fake.py"));
    let run = referee(
        [
            "play",
            "--results",
            results.to_str().unwrap(),
            game.to_str().unwrap(),
            &fake("a"),
            &fake("b"),
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let record = &common::jsonl(&results)[0];
    assert_eq!(record["summary"]["termination"], "max_plies", "{record}");
    for player in record["players"].as_array().unwrap() {
        let stderr = player["stderr"].as_str().unwrap();
        let goes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("go")).collect();
        assert_eq!(goes, ["go nodes 2000"; 3], "{record}");
    }
    let pgn = record["summary"]["pgn"].as_str().unwrap();
    assert_eq!(tag(pgn, "TimeControl"), None, "{pgn}");
}
