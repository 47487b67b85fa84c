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
        // Why it ended, in the last move's comment, in fastchess's words.
        let reason = match termination {
            "checkmate" => " mates",
            "stalemate" => ", Draw by stalemate",
            "insufficient_material" => ", Draw by insufficient mating material",
            "fifty_moves" => ", Draw by fifty moves rule",
            "threefold_repetition" => ", Draw by 3-fold repetition",
            "resignation" => " wins by adjudication",
            _ => ", Draw by adjudication",
        };
        assert!(comments(pgn).last().unwrap().ends_with(reason), "{pgn}");
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
        // Why, in the last move's comment, as fastchess writes it.
        let last = *comments(pgn).last().unwrap();
        let named = what.split('\'').nth(1).filter(|m| !m.is_empty());
        let reason = format!("White makes an illegal move: {}", named.unwrap_or(""));
        assert!(last.contains(&reason), "{pgn}");
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
    assert!(
        comments(pgn)
            .last()
            .unwrap()
            .ends_with(", White loses on time"),
        "{pgn}"
    );
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
    let game = fake_game(dir.path(), "nodes = 2000\nmax_plies = 6");
    let record = &play_fakes(&game, 1, &[&fake("a", "plays"), &fake("b", "plays")])[0];
    assert_eq!(record["summary"]["termination"], "max_plies", "{record}");
    for player in record["players"].as_array().unwrap() {
        let stderr = player["stderr"].as_str().unwrap();
        let goes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("go")).collect();
        assert_eq!(goes, ["go nodes 2000"; 3], "{record}");
    }
    let pgn = record["summary"]["pgn"].as_str().unwrap();
    assert_eq!(tag(pgn, "TimeControl"), None, "{pgn}");
}

/// A game file in `dir` for games between fake engines: the chess judge
/// without a clock (`go movetime`, which the fakes answer at once), with
/// the judge's `options` (TOML lines).
fn fake_game(dir: &Path, options: &str) -> String {
    let chess = format!("{}/games/chess", root());
    let game = dir.join("game.toml");
    std::fs::write(
        &game,
        format!(
            "name = \"chess\"\njudge = [\"{chess}/.venv/bin/python3\", \"{chess}/judge.py\"]\n\
             protocol = 2\nplayers = {{ min = 2, max = 2 }}\nreuse = true\nkeep_players = true\n\
             [options]\nopenings = \"{chess}/openings.epd\"\n{options}\n"
        ),
    )
    .unwrap();
    game.to_str().unwrap().to_owned()
}

/// `NAME=` the fake engine with `args`, for `referee play`.
fn fake(name: &str, args: &str) -> String {
    format!("{name}={} {} {args}", python(), fixture("chess/fake.py"))
}

/// `referee play --games GAMES GAME BOTS`: its records, in game order,
/// after checking that it ran to its end and that no game was void.
fn play_fakes(game: &str, games: u32, bots: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    let games = games.to_string();
    let mut args = vec!["--no-fsync", "play", "--seed", "1", "--games", &games];
    args.extend(["--results", results.to_str().unwrap(), game]);
    args.extend(bots);
    let run = referee(args, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    let mut records = common::jsonl(&results);
    records.sort_by_key(|r| r["index"].as_u64());
    for record in &records {
        assert!(record.get("judge_error").is_none(), "{record}\n{run:?}");
    }
    records
}

/// The comments of a PGN's moves, in order (White's first when White
/// moves first), without their braces and spaces.
fn comments(pgn: &str) -> Vec<&str> {
    let moves = &pgn[pgn.find("\n\n").unwrap()..];
    moves
        .split('{')
        .skip(1)
        .map(|c| c.split('}').next().unwrap().trim())
        .collect()
}

/// Issue 39, failure 6: an engine that sent `score cp ²` or a 5,000-digit
/// score made the judge raise, every game it was losing void (`play` and
/// `tournament` stopped with status 70). A score the judge cannot read is
/// no score; the game is judged on the others.
#[test]
fn an_info_line_the_judge_cannot_read_gives_no_score() {
    let Some(_serial) = ready() else { return };
    let dir = tempfile::tempdir().unwrap();
    let game = fake_game(dir.path(), "max_plies = 12");
    let losing = "info depth 1 score cp -2000";
    let digits = format!("info depth 2 score cp -{}", "9".repeat(5000));
    // The lines White sends before each move; how the game ends; White's
    // first comment.
    let cases: [(&[&str], &str, &str); 5] = [
        (
            &[losing, "info depth 2 score cp \u{b2}"],
            "resignation",
            "-20.00",
        ),
        (&[losing, &digits], "resignation", "-499.99"),
        (&["info depth 2 score cp \u{b2}"], "max_plies", ""),
        (&["info score mate \u{663}", "info score"], "max_plies", ""),
        (
            &["info string score cp -2000", "info score cp"],
            "max_plies",
            "",
        ),
    ];
    for (i, (lines, termination, comment)) in cases.into_iter().enumerate() {
        let file = dir.path().join(format!("info{i}"));
        std::fs::write(&file, lines.join("\n")).unwrap();
        let white = fake("white", &format!("plays {}", file.display()));
        let record = &play_fakes(&game, 1, &[&white, &fake("black", "plays")])[0];
        let summary = &record["summary"];
        assert_eq!(summary["termination"], termination, "{lines:?}: {record}");
        let result = if termination == "resignation" {
            "0-1"
        } else {
            "1/2-1/2"
        };
        assert_eq!(summary["result"], result, "{record}");
        for player in record["players"].as_array().unwrap() {
            assert_eq!(player["status"], "ok", "{record}");
        }
        let pgn = summary["pgn"].as_str().unwrap();
        let first = comments(pgn)[0];
        let score = first.rsplit_once(' ').map_or("", |(score, _time)| score);
        assert_eq!(score, comment, "{lines:?}: {pgn}");
        if termination == "resignation" {
            // White resigned after its 4th move, at ply 7.
            assert_eq!(summary["plies"], 7, "{record}");
            let last = *comments(pgn).last().unwrap();
            assert!(last.ends_with(", Black wins by adjudication"), "{pgn}");
        }
    }
}

/// Random info lines and moves, from both engines, over many games: the
/// judge rules on every one (no game void, `play` ends with status 0), a
/// bad move is `incorrect` and its engine's loss, named in the last
/// comment, and every PGN reads back by python-chess, its moves legal. The
/// seed varies from run to run; `CHESS_FUZZ_SEED` replays one.
#[test]
fn random_info_lines_and_moves_are_ruled_on() {
    let Some(_serial) = ready() else { return };
    let seed = std::env::var("CHESS_FUZZ_SEED").unwrap_or_else(|_| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.unwrap().as_nanos().to_string()
    });
    let dir = tempfile::tempdir().unwrap();
    let game = fake_game(dir.path(), "max_plies = 40\nresign_moves = 2");
    let (a, b) = (
        fake("a", &format!("fuzz {seed}a")),
        fake("b", &format!("fuzz {seed}b")),
    );
    let records = play_fakes(&game, 16, &[&a, &b]);
    assert_eq!(records.len(), 16, "CHESS_FUZZ_SEED={seed}");
    let pgns: Vec<&str> = records
        .iter()
        .map(|r| r["summary"]["pgn"].as_str().unwrap())
        .collect();
    let replayed = replay(&pgns);
    for (record, (plies, _)) in records.iter().zip(&replayed) {
        let why = format!("CHESS_FUZZ_SEED={seed}: {record}");
        let summary = &record["summary"];
        assert_eq!(summary["plies"], *plies, "{why}");
        let players = record["players"].as_array().unwrap();
        let statuses: Vec<&str> = players
            .iter()
            .map(|p| p["status"].as_str().unwrap())
            .collect();
        let pgn = summary["pgn"].as_str().unwrap();
        let termination = tag(pgn, "Termination").unwrap();
        assert!(
            ["normal", "adjudication", "rules infraction"].contains(&termination),
            "{why}"
        );
        let last = comments(pgn).last().copied().unwrap_or_default();
        if let Some(seat) = statuses.iter().position(|s| *s == "incorrect") {
            assert_eq!(summary["termination"], "illegal_move", "{why}");
            assert_eq!(termination, "rules infraction", "{why}");
            assert_eq!(players[seat]["score"], 0.0, "{why}");
            assert_eq!(players[1 - seat]["score"], 1.0, "{why}");
            assert_eq!(statuses[1 - seat], "ok", "{why}");
            let colour = ["White", "Black"][seat];
            let reason = format!("{colour} makes an illegal move: ");
            assert!(last.contains(&reason), "{why}");
        } else {
            assert_eq!(statuses, ["ok", "ok"], "{why}");
            assert!(!last.is_empty(), "{why}");
        }
    }
}

/// Issue 39, failure 7: entrant names holding `"]` and line ends went into
/// the PGN's tags as they were, and a 2-game `games.pgn` read as 4 games,
/// two of them forged results. The tags' values are escaped as the PGN
/// standard says (`\\`, `\"`; a line end is a space): python-chess reads
/// back the 2 games, with the names and the results of the records.
#[test]
fn hostile_entrant_names_cannot_forge_games_pgn() {
    let Some(_serial) = ready() else { return };
    let dir = tempfile::tempdir().unwrap();
    let game = fake_game(dir.path(), "max_plies = 6");
    let names = [
        "a\"]\n\n1. e4 1-0\n\n[Event \"forged\"]\n[White \"x\"]\n[Result \"1-0\"]\n[Black \"y",
        "b\\\"]\r\n[Result \"0-1\"]\n\n1. d4 0-1\n\n[Black \"z\\",
    ];
    let engines = dir.path().join("engines");
    std::fs::create_dir(&engines).unwrap();
    for name in names {
        let script = format!(
            "#!/bin/sh\nexec {} {} plays\n",
            python(),
            fixture("chess/fake.py")
        );
        let path = engines.join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let file = dir.path().join("t.toml");
    std::fs::write(
        &file,
        format!(
            "game = {game:?}\ngames = 2\nseed = 1\njobs = 1\n\n[[entrant]]\nglob = \"engines/*\"\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = referee(
        [
            "--no-fsync",
            "tournament",
            file.to_str().unwrap(),
            "--no-progress",
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = common::jsonl(&out.join("records.jsonl"));
    assert_eq!(records.len(), 2);

    const READ: &str = r#"
import json, sys
import chess.pgn
games = []
with open(sys.argv[1], encoding="utf-8") as f:
    while (game := chess.pgn.read_game(f)) is not None:
        games.append({"headers": dict(game.headers), "errors": [str(e) for e in game.errors],
                      "plies": len(list(game.mainline_moves()))})
print(json.dumps(games))
"#;
    let pgn = out.join("games.pgn");
    let read = Command::new(python())
        .args(["-c", READ, pgn.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(read.status.success(), "{read:?}");
    let games: Vec<Value> = serde_json::from_slice(&read.stdout).unwrap();
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(games.len(), 2, "{text}");
    // A tag's value as python-chess reads it (it does not undo the
    // escapes), the escapes undone.
    let unescape = |value: &Value| {
        let mut out = String::new();
        let mut chars = value.as_str().unwrap().chars();
        while let Some(c) = chars.next() {
            out.push(if c == '\\' { chars.next().unwrap() } else { c });
        }
        out
    };
    let plain = |name: &str| name.replace(['\n', '\r'], " ");
    for (game, record) in games.iter().zip(&records) {
        let summary = &record["summary"];
        assert_eq!(game["errors"], serde_json::json!([]), "{text}");
        assert_eq!(game["plies"], 6, "{text}");
        let headers = &game["headers"];
        assert_eq!(headers["Result"], summary["result"], "{text}");
        assert_eq!(headers["Result"], "1/2-1/2", "{text}");
        assert_eq!(headers["Event"], "chess", "{text}");
        for (tag, colour) in [("White", "white"), ("Black", "black")] {
            let name = summary[colour].as_str().unwrap();
            assert!(names.contains(&name), "{record}");
            assert_eq!(unescape(&headers[tag]), plain(name), "{text}");
        }
    }
    // Colours swapped in the second game.
    assert_eq!(games[0]["headers"]["White"], games[1]["headers"]["Black"]);
}
