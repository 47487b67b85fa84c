//! Chess (games/chess) through the real binary, over judge protocol 2,
//! with the judge built into the referee (`referee __chess-judge`):
//! Stockfish against itself in colour-swapped pairs, each game replayed
//! apart from the judge from its PGN; fake engines (bots/chess-random)
//! that play an illegal move, no move, or past their clock. The tests
//! with Stockfish skip, saying why, without Debian's stockfish
//! (scripts/test.sh installs it); the others need nothing but the build.

#[path = "common/chess.rs"]
mod chess_common;
mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use chess_common::{fake, fake_engine, read_pgn};
use common::referee;
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

/// A temporary folder under the build's own (removed when dropped).
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn root() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

/// Why the tests with Stockfish cannot run on this machine, if they cannot.
fn missing() -> Option<String> {
    if !Path::new(STOCKFISH).exists() {
        return Some(format!("{STOCKFISH} is missing: apt-get install stockfish"));
    }
    None
}

/// Takes the chess tests' lock, or says why a test with Stockfish skips
/// (`None`).
fn ready() -> Option<std::sync::MutexGuard<'static, ()>> {
    if let Some(why) = missing() {
        eprintln!("skipped: {why}");
        return None;
    }
    Some(serial())
}

/// Takes the chess tests' lock.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `referee play --seed 1 [EXTRA] games/chess/game.toml BOTS`: its records.
fn play(extra: &[&str], bots: &[&str]) -> Vec<Value> {
    let dir = scratch();
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

/// Replays each PGN apart from the judge (tests/common/chess.rs): per
/// game, its plies and how its last position stands by the rules ("on"
/// if the game could go on). A PGN that does not read, or has an illegal
/// move, fails.
fn replay(pgns: &[&str]) -> Vec<(u64, String)> {
    pgns.iter()
        .map(|text| {
            let games = read_pgn(text);
            assert_eq!(games.len(), 1, "{text}");
            let game = &games[0];
            assert!(game.error.is_none(), "{:?}: {text}", game.error);
            (game.plies as u64, game.state.clone())
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
        assert!(is_pgn_date(tag(pgn, "Date").unwrap()), "{pgn}");
        assert_eq!(tag(pgn, "PlyCount"), Some(&*plies.to_string()), "{pgn}");
        assert_eq!(tag(pgn, "TimeControl"), Some("1+0.05"), "{pgn}");
        for colour in ["White", "Black"] {
            let id = tag(pgn, &format!("Engine{colour}Name")).unwrap_or_default();
            assert!(id.starts_with("Stockfish"), "{pgn}");
        }
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
    let fake = format!("fake={} {fake}", fake_engine());
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
    // Issue 41: `a1a1`, squares as UCI writes them but no move, was
    // called "unparsable"; only text that is no UCI move is.
    for (fake, what) in [
        ("illegal", "illegal move '"),
        ("a1a1", "illegal move 'a1a1'"),
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
    let dir = scratch();
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
        for result in record["players"].as_array().unwrap() {
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

/// The `go` lines an engine of `record` was sent (the fakes echo them on
/// standard error), by seat.
fn goes(record: &Value) -> Vec<Vec<String>> {
    record["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let stderr = p["stderr"].as_str().unwrap_or_default();
            stderr
                .lines()
                .filter(|l| l.starts_with("go"))
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// Fixed work per move, as fastchess's `nodes=N`: a game file without a
/// clock and with the judge's option `nodes` sends `go nodes N`, and the
/// PGN has no time control.
#[test]
fn fixed_nodes_per_move_without_a_clock() {
    let _serial = serial();
    let dir = scratch();
    let game = fake_game(dir.path(), "nodes = 2000\nmax_plies = 6");
    let record = &play_fakes(&game, 1, &[&fake("a", "plays"), &fake("b", "plays")])[0];
    assert_eq!(record["summary"]["termination"], "max_plies", "{record}");
    for seat in goes(record) {
        assert_eq!(seat, ["go nodes 2000"; 3], "{record}");
    }
    let pgn = record["summary"]["pgn"].as_str().unwrap();
    // fastchess's tag for an engine without a clock (tc=inf).
    assert_eq!(tag(pgn, "TimeControl"), Some("-"), "{pgn}");
}

/// A kept engine is set up once, as fastchess sets up its engines: `uci`
/// and its options in the first game its process plays, only
/// `ucinewgame` after. A process started afresh, after it lost on an
/// illegal move, is set up again. (Stockfish rebuilds its threads and its
/// hash table at each `setoption` of theirs: 50 ms a game on a busy
/// machine, docs/PERFORMANCE.md section 15.)
#[test]
fn a_kept_engine_is_set_up_once_and_a_fresh_one_again() {
    let _serial = serial();
    let bots = [fake("a", "plays"), fake("b", "illegal")];
    let options = "--seed 1 --option a:Hash=32 --option b:Hash=64";
    let extra: Vec<&str> = options.split(' ').collect();
    let dir = scratch();
    let game = fake_game(dir.path(), "max_plies = 6");
    let records = play_fakes_with(&game, 4, &extra, &[&bots[0], &bots[1]]);
    let set_up = |record: &Value, entrant: &str| -> Vec<String> {
        let players = record["players"].as_array().unwrap();
        let player = players.iter().find(|p| p["entrant"] == entrant).unwrap();
        let stderr = player["stderr"].as_str().unwrap_or_default();
        let lines = stderr.lines().filter(|l| l.starts_with("setoption"));
        lines.map(str::to_owned).collect()
    };
    for (game, record) in records.iter().enumerate() {
        let kept: &[&str] = if game == 0 {
            &["setoption name Hash value 32"]
        } else {
            &[]
        };
        assert_eq!(set_up(record, "a"), kept, "game {}: {record}", game + 1);
        let fresh = ["setoption name Hash value 64"];
        assert_eq!(set_up(record, "b"), fresh, "game {}: {record}", game + 1);
        assert_eq!(record["summary"]["termination"], "illegal_move", "{record}");
    }
}

/// A game file in `dir` for games between fake engines: the chess judge
/// without a clock (`go movetime 100` unless `options` give nodes or
/// depth; the fakes answer at once), with the judge's `options` (TOML
/// lines).
fn fake_game(dir: &Path, options: &str) -> String {
    let chess = format!("{}/games/chess", root());
    let game = dir.join("game.toml");
    std::fs::write(
        &game,
        format!(
            "name = \"chess\"\njudge = [\"referee\", \"__chess-judge\"]\n\
             protocol = 2\nplayers = {{ min = 2, max = 2 }}\nreuse = true\nkeep_players = true\n\
             [options]\nopenings = \"{chess}/openings.epd\"\nmovetime = 100\n{options}\n"
        ),
    )
    .unwrap();
    game.to_str().unwrap().to_owned()
}

/// `referee play --games GAMES GAME BOTS`: its records, in game order,
/// after checking that it ran to its end and that no game was void.
fn play_fakes(game: &str, games: u32, bots: &[&str]) -> Vec<Value> {
    play_fakes_with(game, games, &["--seed", "1"], bots)
}

/// [`play_fakes`] with `referee play`'s options `extra`.
fn play_fakes_with(game: &str, games: u32, extra: &[&str], bots: &[&str]) -> Vec<Value> {
    let dir = scratch();
    let results = dir.path().join("r.jsonl");
    let games = games.to_string();
    let mut args = vec!["--no-fsync", "play", "--games", &games];
    args.extend(extra);
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
    let _serial = serial();
    let dir = scratch();
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
/// comment, and every PGN reads back, its moves legal. The
/// seed varies from run to run; `CHESS_FUZZ_SEED` replays one.
#[test]
fn random_info_lines_and_moves_are_ruled_on() {
    let _serial = serial();
    let seed = std::env::var("CHESS_FUZZ_SEED").unwrap_or_else(|_| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.unwrap().as_nanos().to_string()
    });
    let dir = scratch();
    let game = fake_game(dir.path(), "max_plies = 40\nresign_movecount = 2");
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
/// standard says (`\\`, `\"`; a line end is a space): the file reads
/// back as the 2 games, with the names and the results of the records.
#[test]
fn hostile_entrant_names_cannot_forge_games_pgn() {
    let _serial = serial();
    let dir = scratch();
    let game = fake_game(dir.path(), "max_plies = 6");
    let names = [
        "a\"]\n\n1. e4 1-0\n\n[Event \"forged\"]\n[White \"x\"]\n[Result \"1-0\"]\n[Black \"y",
        "b\\\"]\r\n[Result \"0-1\"]\n\n1. d4 0-1\n\n[Black \"z\\",
    ];
    let engines = dir.path().join("engines");
    std::fs::create_dir(&engines).unwrap();
    for name in names {
        let script = format!("#!/bin/sh\nexec {} plays\n", fake_engine());
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

    let text = std::fs::read_to_string(out.join("games.pgn")).unwrap();
    let games = read_pgn(&text);
    assert_eq!(games.len(), 2, "{text}");
    let plain = |name: &str| name.replace(['\n', '\r'], " ");
    for (game, record) in games.iter().zip(&records) {
        let summary = &record["summary"];
        assert_eq!(game.error, None, "{text}");
        assert_eq!(game.plies, 6, "{text}");
        assert_eq!(game.tag("Result"), summary["result"].as_str(), "{text}");
        assert_eq!(game.tag("Result"), Some("1/2-1/2"), "{text}");
        assert_eq!(game.tag("Event"), Some("chess"), "{text}");
        for (tag, colour) in [("White", "white"), ("Black", "black")] {
            let name = summary[colour].as_str().unwrap();
            assert!(names.contains(&name), "{record}");
            assert_eq!(game.tag(tag), Some(plain(name).as_str()), "{text}");
        }
    }
    // Colours swapped in the second game.
    assert_eq!(games[0].tag("White"), games[1].tag("Black"));
}

/// `YYYY.MM.DD`, PGN's date.
fn is_pgn_date(date: &str) -> bool {
    let parts: Vec<&str> = date.split('.').collect();
    parts.len() == 3
        && [4, 2, 2] == [parts[0].len(), parts[1].len(), parts[2].len()]
        && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// Stockfish 15.1's answer to `uci`, shortened: its id and options.
const STOCKFISH_UCI: [&str; 8] = [
    "Stockfish 15.1 by the Stockfish developers (see AUTHORS file)",
    "id name Stockfish 15.1",
    "id author the Stockfish developers (see AUTHORS file)",
    "option name Hash type spin default 16 min 1 max 33554432",
    "option name Ponder type check default false",
    "option name Skill Level type spin default 20 min 0 max 20",
    "option name Move Overhead type spin default 10 min 0 max 5000",
    "option name Clear Hash type button",
];

/// A `start` for the judge alone: game options, each seat's entrant
/// options and time control, the round's `rotation`.
fn start(options: Value, entrants: [(&str, Value, Value); 2], rotation: u64) -> Value {
    let players: Vec<Value> = entrants
        .into_iter()
        .enumerate()
        .map(|(seat, (name, options, control))| {
            serde_json::json!({"seat": seat, "name": name, "program": ["engine"],
                "options": options, "timeout_micros": 10_000_000,
                "startup_micros": 10_000_000, "time_control": control})
        })
        .collect();
    serde_json::json!({"type": "start", "version": 2, "game": "chess", "seed": 7,
        "index": rotation + 1, "opening": 1, "rotation": rotation, "players": players,
        "options": options})
}

/// The harness's `replies` to a set-up ask of both seats: `text`, and
/// `lines` before it.
fn set_up(text: &str, lines: &[&str], clocks: Option<[u64; 2]>) -> Value {
    let reply = |player: usize| serde_json::json!({"player": player, "text": text, "lines": lines, "micros": 100});
    let mut replies = serde_json::json!({"type": "replies", "replies": [reply(0), reply(1)]});
    if let Some(clocks) = clocks {
        replies["clocks"] = serde_json::json!(clocks);
    }
    replies
}

/// The chess judge alone (no referee, no engine), fed the harness's
/// messages `input` ahead (it reads each when it needs it; at their end it
/// exits): the messages it wrote.
fn judge_alone(input: &[Value]) -> Vec<Value> {
    let chess = format!("{}/games/chess", root());
    let mut child = Command::new(common::referee_bin())
        .arg("__chess-judge")
        .current_dir(&chess)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let text: String = input.iter().map(|m| format!("{m}\n")).collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The judge's `refuse` in `messages`, after which it wrote nothing more
/// for that game.
fn refusal(messages: &[Value]) -> &Value {
    let at = messages.iter().position(|m| m["type"] == "refuse");
    let at = at.unwrap_or_else(|| panic!("no refuse: {messages:?}"));
    let rest = &messages[at + 1..];
    assert!(
        rest.is_empty() || rest[0]["text"] == "uci\n",
        "{messages:?}"
    );
    &messages[at]
}

/// Issue 41, failure 1: `SkillLevel = 0` was sent to Stockfish, which
/// answered `No such option` and played at full strength, with nothing
/// said. An entrant's option its engine does not declare (names compare
/// without case, as UCI says), or a value out of its range, is refused
/// for that entrant, naming the option and the engine's closest one; a
/// declared one goes out in the engine's own spelling, and the judge's
/// own keys (`nodes`) never reach the engine.
#[test]
fn the_judge_refuses_an_option_its_engine_does_not_declare() {
    let none = Value::Null;
    let uciok = set_up("uciok", &STOCKFISH_UCI, None);
    let refused = |options: Value| {
        let weak = ("weak", options, none.clone());
        let strong = ("strong", serde_json::json!({}), none.clone());
        // No clock: a search limit.
        let start = start(serde_json::json!({"movetime": 100}), [weak, strong], 0);
        // The judge's own keys are refused before `uci`; UCI options after.
        let judges = start["players"][0]["options"].get("nodes").is_some();
        let input = if judges {
            vec![start]
        } else {
            vec![start, uciok.clone()]
        };
        let messages = judge_alone(&input);
        let refusal = refusal(&messages).clone();
        assert_eq!(refusal["player"], 0, "{messages:?}");
        refusal["message"].as_str().unwrap().to_owned()
    };
    assert_eq!(
        refused(serde_json::json!({"Hash": 16, "SkillLevel": 0})),
        "entrant \"weak\": option \"SkillLevel\" is not an option of Stockfish 15.1 \
         (its id name); the closest is \"Skill Level\""
    );
    for (options, names) in [
        (
            serde_json::json!({"Skill Level": 30}),
            "\"Skill Level\" = 30: Stockfish 15.1 takes a whole number from 0 to 20",
        ),
        (
            serde_json::json!({"Ponder": "yes"}),
            "\"Ponder\" = \"yes\": Stockfish 15.1 takes true or false",
        ),
        (
            serde_json::json!({"nodes": -5}),
            "nodes = -5: must be a whole number, at least 0",
        ),
    ] {
        let message = refused(options);
        assert!(message.contains(names), "{message}");
        assert!(
            message.starts_with("entrant \"weak\": option "),
            "{message}"
        );
    }
    // Declared options, in any case: sent in the engine's spelling.
    let options = serde_json::json!({"skill level": 3, "HASH": 64, "Ponder": false,
        "Clear Hash": true, "nodes": 500});
    let weak = ("weak", options, none.clone());
    let strong = ("strong", serde_json::json!({}), none.clone());
    let messages = judge_alone(&[
        start(serde_json::json!({"movetime": 100}), [weak, strong], 0),
        uciok,
    ]);
    let sent = messages
        .iter()
        .find(|m| m["to"] == serde_json::json!([0]) && m["type"] == "send");
    // In the order of `options` (serde_json's here: sorted by name,
    // "Clear Hash", "HASH", "Ponder", "skill level").
    assert_eq!(
        sent.unwrap()["text"],
        "setoption name Clear Hash\nsetoption name Hash value 64\n\
         setoption name Ponder value false\nsetoption name Skill Level value 3\n\
         ucinewgame\nisready\n",
        "{messages:?}"
    );
}

/// Issue 41: a key of the game's options the judge does not know, or a
/// value of the wrong kind, made it exit (`sys.exit`: a judge error,
/// status 70). It is refused for the game, naming the key and listing
/// the judge's options; the judge then waits for the next `start`.
#[test]
fn the_judge_refuses_game_options_it_cannot_take() {
    let none = Value::Null;
    let engines = || {
        [
            ("a", serde_json::json!({}), none.clone()),
            ("b", serde_json::json!({}), none.clone()),
        ]
    };
    for (options, names) in [
        (
            serde_json::json!({"nodez": 5}),
            "game option \"nodez\" is not an option of the chess judge (the closest is nodes); \
             its options: openings, order, seed, start, games_per_opening, swap, nodes,",
        ),
        (
            serde_json::json!({"nodes": "many"}),
            "game option nodes = \"many\": must be a whole number, at least 0",
        ),
        (
            serde_json::json!({"games_per_opening": 3}),
            "game option games_per_opening = 3: must be an even whole number",
        ),
        (
            serde_json::json!({"order": "shuffled"}),
            "game option order = \"shuffled\": must be \"sequential\" or \"random\"",
        ),
        (
            serde_json::json!({"openings": "no-such-book.epd"}),
            "game option openings = \"no-such-book.epd\": cannot read it",
        ),
    ] {
        // The refused game, then a good one: the judge plays on.
        let messages = judge_alone(&[
            start(options, engines(), 0),
            start(serde_json::json!({"movetime": 100}), engines(), 0),
        ]);
        let refusal = refusal(&messages);
        assert!(refusal.get("player").is_none(), "{messages:?}");
        let message = refusal["message"].as_str().unwrap();
        assert!(message.starts_with(names), "{message}");
        assert_eq!(messages[0]["type"], "refuse", "{messages:?}");
        assert_eq!(messages[1]["text"], "uci\n", "{messages:?}");
    }
}

/// Each engine searches on its own clock's figures and its own limits:
/// `go` gives each side's time left and its own increment (entrants'
/// time controls may differ), an entrant's `nodes` goes with the clock
/// as fastchess sends it, and the PGN tags each side's time control when
/// they differ (`WhiteTimeControl`, `BlackTimeControl`); `swap = false`
/// gives White to the round's first entrant in its second game too.
#[test]
fn go_gives_each_side_its_own_clock_and_nodes() {
    let control =
        |base: u64, inc: u64| serde_json::json!({"base_micros": base, "increment_micros": inc});
    // The first `go` (to whom, what), and the PGN of the game, which
    // White then loses by crashing.
    let first_go = |options: Value, rotation: u64| {
        let a = (
            "a",
            serde_json::json!({"nodes": 500}),
            control(1_000_000, 100_000),
        );
        let b = ("b", serde_json::json!({}), control(3_000_000, 0));
        let white = if rotation == 0 { 0 } else { 1 };
        let crash = serde_json::json!({"type": "replies", "replies": [{"player": white,
            "status": "crashed", "message": "exited", "micros": 1}], "clocks": [1, 1]});
        let messages = judge_alone(&[
            start(options, [a, b], rotation),
            set_up("uciok", &[], None),
            set_up("readyok", &[], Some([900_000, 2_900_000])),
            crash,
        ]);
        let go = messages.iter().rfind(|m| m["type"] == "send").unwrap();
        let text = go["text"].as_str().unwrap();
        let end = messages.last().unwrap();
        assert_eq!(end["type"], "end", "{messages:?}");
        let pgn = end["summary"]["pgn"].as_str().unwrap().to_owned();
        (
            go["to"].clone(),
            text.lines().nth(1).unwrap().to_owned(),
            pgn,
        )
    };
    // Opening 1 has White to move: seat 0 is White.
    let (to, go, pgn) = first_go(serde_json::json!({}), 0);
    assert_eq!(to, serde_json::json!([0]));
    assert_eq!(go, "go nodes 500 wtime 900 btime 2900 winc 100 binc 0");
    // Each side's own time control, as fastchess tags them when they differ.
    assert_eq!(tag(&pgn, "WhiteTimeControl"), Some("1+0.1"), "{pgn}");
    assert_eq!(tag(&pgn, "BlackTimeControl"), Some("3"), "{pgn}");
    assert_eq!(tag(&pgn, "TimeControl"), None, "{pgn}");
    assert_eq!(tag(&pgn, "Result"), Some("0-1"), "{pgn}");
    // Game 2 of the round seats the round's first entrant at seat 1; with
    // swap = false it is White there.
    let (to, go, pgn) = first_go(serde_json::json!({"swap": false, "nodes": 100}), 1);
    assert_eq!(to, serde_json::json!([1]));
    assert_eq!(go, "go nodes 100 wtime 2900 btime 900 winc 0 binc 100");
    assert_eq!(
        (tag(&pgn, "White"), tag(&pgn, "Black")),
        (Some("b"), Some("a"))
    );
    assert_eq!(tag(&pgn, "WhiteTimeControl"), Some("3"), "{pgn}");
}

/// `referee play`'s run (its status, output) with the fake engines.
fn run_fakes(game: &str, extra: &[&str], bots: &[&str]) -> common::Run {
    let mut args = vec!["--no-fsync", "play", "--seed", "1", "--games", "2"];
    args.extend(extra);
    args.push(game);
    args.extend(bots);
    referee(args, b"")
}

/// Issue 41, failure 1, through the real binary: a misspelt option stops
/// `referee play` before any game, with status 64 and the judge's message
/// naming the entrant, the option and the engine's closest option; so
/// does a game option the judge does not know.
#[test]
fn a_misspelt_option_stops_the_run_with_64() {
    let Some(_serial) = ready() else { return };
    let dir = scratch();
    let game = fake_game(dir.path(), "max_plies = 4");
    let (a, b) = (fake("a", "plays"), fake("b", "plays"));
    let run = run_fakes(&game, &["--option", "b:SkillLevel=0"], &[&a, &b]);
    assert_eq!(run.code, Some(64), "{run:?}");
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains(
            "entrant \"b\": option \"SkillLevel\" is not an option of fake 1.0 (its id name); \
             the closest is \"Skill Level\""
        ),
        "{run:?}"
    );
    // The issue's own case: Stockfish answers `No such option` and would
    // play on at full strength.
    let stockfish = format!("{}/games/chess/game.toml", root());
    let run = run_fakes(
        &stockfish,
        &["--option", "b:SkillLevel=0"],
        &[&format!("a={STOCKFISH}"), &format!("b={STOCKFISH}")],
    );
    assert_eq!(run.code, Some(64), "{run:?}");
    for said in [
        "refused by the judge: entrant \"b\": option \"SkillLevel\" is not an option of Stockfish",
        "the closest is \"Skill Level\"",
    ] {
        assert!(run.stderr.contains(said), "{said}\n{run:?}");
    }
    let game = fake_game(dir.path(), "max_plies = 4\nresign_movecont = 3");
    let run = run_fakes(&game, &[], &[&a, &b]);
    assert_eq!(run.code, Some(64), "{run:?}");
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("game option \"resign_movecont\" is not an option of the chess judge"),
        "{run:?}"
    );
}

/// The book's line each game started from (from 1) and its FEN, in game
/// order.
fn openings(records: &[Value]) -> Vec<(u64, String)> {
    records
        .iter()
        .map(|r| {
            let summary = &r["summary"];
            let line = summary["line"].as_u64().unwrap();
            (line, summary["fen"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// fastchess's `-openings order=random` (and `-srand`), `-games N`: the
/// book in an order drawn from the option `seed`, else from the run's
/// seed, the same for the same seed and not the book's; each opening
/// played by `games_per_opening` games in a row (pairs, colours swapped).
#[test]
fn random_order_and_games_per_opening() {
    let _serial = serial();
    let dir = scratch();
    let (a, b) = (fake("a", "plays"), fake("b", "plays"));
    let played = |options: &str, seed: &str| {
        let game = fake_game(dir.path(), &format!("max_plies = 1\n{options}"));
        openings(&play_fakes_with(&game, 8, &["--seed", seed], &[&a, &b]))
    };
    let lines = |played: &[(u64, String)]| played.iter().map(|p| p.0).collect::<Vec<_>>();
    let sequential = played("", "1");
    assert_eq!(lines(&sequential), [1, 1, 2, 2, 3, 3, 4, 4]);
    let random = played("order = \"random\"\nseed = 5", "1");
    assert_eq!(random, played("order = \"random\"\nseed = 5", "2"));
    assert_ne!(lines(&random), lines(&sequential));
    let by_run_seed = played("order = \"random\"", "1");
    assert_eq!(by_run_seed, played("order = \"random\"", "1"));
    assert_ne!(by_run_seed, played("order = \"random\"", "3"));
    for played in [&random, &by_run_seed] {
        // Both games of a round on one line; four lines, each once.
        let lines = lines(played);
        for pair in played.chunks(2) {
            assert_eq!(pair[0], pair[1], "{played:?}");
        }
        let distinct = lines.iter().collect::<std::collections::BTreeSet<_>>();
        assert_eq!(distinct.len(), 4, "{played:?}");
        assert!(lines.iter().all(|l| (1..=13).contains(l)), "{played:?}");
    }
    // Four games an opening: rounds 1-2 on the first, 3-4 on the second.
    let four = played("games_per_opening = 4", "1");
    assert_eq!(lines(&four), [1, 1, 1, 1, 2, 2, 2, 2]);
    assert_eq!(four[4], sequential[2]);
    // From line 12 of 13, then over again from line 1.
    let late = played("start = 12", "1");
    assert_eq!(lines(&late), [12, 12, 13, 13, 1, 1, 2, 2]);
}

/// fastchess's `-noswap`: with `swap = false` the round's first entrant
/// is White in both games of the round; the PGN, the summary and the
/// scores per seat follow the colours: here Black plays `a1a1` in game 2
/// from seat 0, and loses.
#[test]
fn swap_false_keeps_the_colours() {
    let _serial = serial();
    let dir = scratch();
    let game = fake_game(dir.path(), "max_plies = 8\nswap = false");
    // Four games: two rounds, whose first entrants alternate (the
    // referee's pairing rule); `a`, listed first, is White in all four.
    let records = play_fakes(&game, 4, &[&fake("a", "plays"), &fake("b", "a1a1")]);
    assert_eq!(records.len(), 4);
    for record in &records {
        let summary = &record["summary"];
        let pgn = summary["pgn"].as_str().unwrap();
        assert_eq!(summary["white"], "a", "{record}");
        assert_eq!(summary["black"], "b", "{record}");
        assert_eq!(
            (tag(pgn, "White"), tag(pgn, "Black")),
            (Some("a"), Some("b"))
        );
        // b plays a1a1 as its third move (ply 6) and loses, in either seat.
        assert_eq!(summary["result"], "1-0", "{record}");
        assert_eq!(summary["plies"], 5, "{record}");
        let b = if record["players"][0]["entrant"] == "b" {
            0
        } else {
            1
        };
        assert_eq!(record["players"][b]["score"], 0.0, "{record}");
        assert_eq!(record["players"][1 - b]["score"], 1.0, "{record}");
        assert_eq!(record["players"][b]["status"], "incorrect", "{record}");
        let last = *comments(pgn).last().unwrap();
        assert!(last.ends_with("Black makes an illegal move: a1a1"), "{pgn}");
    }
    let seat_zero: Vec<_> = records
        .iter()
        .map(|r| &r["players"][0]["entrant"])
        .collect();
    assert_eq!(
        seat_zero,
        ["a", "b", "b", "a"],
        "the seats rotated as usual"
    );
}

/// Per-engine node counts (time odds in nodes), fastchess's per-engine
/// `nodes=`: an entrant's option `nodes` is the judge's, never sent to the
/// engine, and its `go` carries it, with the clock when there is one; the
/// other engine keeps the game's `nodes`. The PGN's tags: Date, PlyCount,
/// TimeControl, the engines' ids.
#[test]
fn an_entrants_nodes_reach_its_go() {
    let _serial = serial();
    let dir = scratch();
    let game = fake_game(dir.path(), "nodes = 2000\nmax_plies = 4");
    let extra = ["--seed", "1", "--option", "a:nodes=500"];
    let bots = [fake("a", "plays"), fake("b", "plays")];
    let bots = [bots[0].as_str(), bots[1].as_str()];
    let record = &play_fakes_with(&game, 1, &extra, &bots)[0];
    assert!(!record.to_string().contains("setoption"), "{record}");
    assert_eq!(
        goes(record),
        [["go nodes 500"; 2], ["go nodes 2000"; 2]],
        "{record}"
    );
    let pgn = record["summary"]["pgn"].as_str().unwrap();
    assert!(is_pgn_date(tag(pgn, "Date").unwrap()), "{pgn}");
    assert_eq!(tag(pgn, "PlyCount"), Some("4"), "{pgn}");
    assert_eq!(tag(pgn, "TimeControl"), Some("-"), "{pgn}");
    assert_eq!(tag(pgn, "EngineWhiteName"), Some("fake 1.0"), "{pgn}");
    assert_eq!(tag(pgn, "EngineBlackAuthor"), Some("the tests"), "{pgn}");
    // With a clock: nodes and the clock, as fastchess sends them.
    let extra = [&extra[..], &["--time-control", "10s+100ms"]].concat();
    let record = &play_fakes_with(&game, 1, &extra, &bots)[0];
    for (seat, nodes) in goes(record).into_iter().zip([500, 2000]) {
        for go in seat {
            let prefix = format!("go nodes {nodes} wtime ");
            assert!(go.starts_with(&prefix), "{record}");
            assert!(go.ends_with(" winc 100 binc 100"), "{record}");
        }
    }
    let pgn = record["summary"]["pgn"].as_str().unwrap();
    assert_eq!(tag(pgn, "TimeControl"), Some("10+0.1"), "{pgn}");
}

/// Issue 41, failure 4: the draw adjudication counted plies from the
/// opening position and did not restart after a capture; 2 of 40 results
/// and 12 of 40 lengths differed from fastchess's on the same games. As
/// fastchess: `draw_movenumber` is the game's move number (the FEN's,
/// here from move 6), `draw_movecount` moves of each side within
/// `draw_score`, the count restarting at a capture or a pawn move. The
/// fakes (scores 0) play 6. Bxc6 Rg8 7. Bxd7+ Kf8 8. Be8 Rh8 in game 1.
#[test]
fn the_draw_adjudication_counts_as_fastchess() {
    let _serial = serial();
    let dir = scratch();
    let bots = [fake("a", "plays"), fake("b", "plays")];
    for (options, plies) in [
        // After 6... Rg8 the game is at move 7: move 6 is past.
        ("draw_movenumber = 6\ndraw_movecount = 1", 2),
        ("draw_movenumber = 7\ndraw_movecount = 1", 4),
        // 7. Bxd7+ restarts the count: 4 plies from it, not from 6. Bxc6.
        ("draw_movenumber = 6\ndraw_movecount = 2", 6),
        ("draw_movenumber = 6\ndraw_movecount = 0", 12),
        // The names before fastchess's, in plies: 6 moves, 1 move each.
        ("draw_after = 12\ndraw_plies = 2\ndraw_cp = 0", 2),
    ] {
        let game = fake_game(dir.path(), &format!("max_plies = 12\n{options}"));
        let record = &play_fakes(&game, 1, &[&bots[0], &bots[1]])[0];
        let summary = &record["summary"];
        assert_eq!(summary["plies"], plies, "{options}: {record}");
        let termination = if plies == 12 {
            "max_plies"
        } else {
            "draw_by_score"
        };
        assert_eq!(summary["termination"], termination, "{options}: {record}");
    }
}

/// The shipped game file (`games/chess/game.toml`).
fn shipped_game() -> String {
    format!("{}/games/chess/game.toml", root())
}

/// Issue 51, item 1: fastchess's `tc=inf`. `--time-control none` and
/// `time_control = "none"` were refused (`bad base time`), and nothing
/// else removed the game file's 2s+50ms. Now they play without a clock:
/// `go` has the search limit alone, and the PGN's TimeControl is `-`,
/// from the command line, a game file and a tournament file alike.
#[test]
fn time_control_none_plays_without_a_clock() {
    let _serial = serial();
    let dir = scratch();
    let (a, b) = (fake("a", "plays"), fake("b", "plays"));
    let unclocked = |record: &Value, go: &str| {
        assert_eq!(record["summary"]["termination"], "max_plies", "{record}");
        for seat in goes(record) {
            assert_eq!(seat, [go; 2], "{record}");
        }
        let pgn = record["summary"]["pgn"].as_str().unwrap();
        assert_eq!(tag(pgn, "TimeControl"), Some("-"), "{pgn}");
    };
    let extra = [
        "--seed",
        "1",
        "--time-control",
        "none",
        "--game-option",
        "nodes=2000",
        "--game-option",
        "max_plies=4",
    ];
    for record in play_fakes_with(&shipped_game(), 2, &extra, &[&a, &b]) {
        unclocked(&record, "go nodes 2000");
    }
    // A game file's own `time_control = "none"`.
    let chess = format!("{}/games/chess", root());
    let game = dir.path().join("unclocked.toml");
    std::fs::write(
        &game,
        format!(
            "name = \"chess\"\njudge = [\"referee\", \"__chess-judge\"]\nprotocol = 2\n\
             players = {{ min = 2, max = 2 }}\nreuse = true\n\
             [limits]\ntime_control = \"none\"\n\
             [options]\nopenings = \"{chess}/openings.epd\"\ndepth = 3\nmax_plies = 4\n"
        ),
    )
    .unwrap();
    let records = play_fakes(game.to_str().unwrap(), 1, &[&a, &b]);
    unclocked(&records[0], "go depth 3");
    // A tournament file's, over the shipped game file's clock.
    let file = match_file(
        dir.path(),
        "[limits]\ntime_control = \"none\"",
        "nodes = 300",
    );
    let records = tournament_in(dir.path(), &file, &[]);
    assert_eq!(records.len(), 2);
    for record in &records {
        let pgn = record["summary"]["pgn"].as_str().unwrap();
        assert_eq!(tag(pgn, "TimeControl"), Some("-"), "{pgn}");
        assert_eq!(record["summary"]["termination"], "max_plies", "{record}");
    }
}

/// Without a clock, the move cap (`--timeout`) still ends an engine that
/// never answers: a timeout of the move, not of a clock.
#[test]
fn without_a_clock_the_move_cap_still_ends_a_hung_engine() {
    let _serial = serial();
    let extra = [
        "--seed",
        "1",
        "--time-control",
        "none",
        "--timeout",
        "300ms",
        "--game-option",
        "nodes=100",
    ];
    let (a, b) = (fake("a", "sleep"), fake("b", "plays"));
    let record = &play_fakes_with(&shipped_game(), 1, &extra, &[&a, &b])[0];
    let player = &record["players"][0];
    assert_eq!(player["status"], "timeout", "{record}");
    assert_eq!(player["phase"], "move", "{record}");
    let waited = player["micros"].as_array().unwrap().last().unwrap();
    assert!(
        (250_000..10_000_000).contains(&waited.as_u64().unwrap()),
        "{record}"
    );
}

/// `none` asks for a search limit: without `nodes`, `depth` or
/// `movetime` (the game's or the entrant's) an engine would think for
/// ever, so the run is refused before the first move, saying so.
#[test]
fn time_control_none_without_a_search_limit_is_refused() {
    let _serial = serial();
    let (a, b) = (fake("a", "plays"), fake("b", "plays"));
    let run = run_fakes(&shipped_game(), &["--time-control", "none"], &[&a, &b]);
    assert_eq!(run.code, Some(64), "{run:?}");
    for said in [
        "refused by the judge",
        "no clock",
        "nodes, depth or movetime",
    ] {
        assert!(run.stderr.contains(said), "{said}\n{run:?}");
    }
    // One entrant's own limit is not the other's.
    let run = run_fakes(
        &shipped_game(),
        &["--time-control", "none", "--option", "a:nodes=100"],
        &[&a, &b],
    );
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(run.stderr.contains("entrant \"b\""), "{run:?}");
    let run = run_fakes(
        &shipped_game(),
        &[
            "--time-control",
            "none",
            "--option",
            "a:nodes=100",
            "--option",
            "b:movetime=20",
            "--game-option",
            "max_plies=2",
        ],
        &[&a, &b],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
}

/// A book file `name` in `dir`: one position, named `id`.
fn book(dir: &Path, name: &str, id: &str) {
    let epd = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq -";
    std::fs::write(dir.join(name), format!("{epd} id \"{id}\";\n")).unwrap();
}

/// A tournament file `match.toml` in `dir` of the shipped game between two
/// fakes, with `top` (TOML lines, say its `[limits]`) and the judge's
/// `[options]` `options`.
fn match_file(dir: &Path, top: &str, options: &str) -> std::path::PathBuf {
    let file = dir.join("match.toml");
    std::fs::write(
        &file,
        format!(
            "game = {:?}\ngames = 2\nseed = 1\njobs = 1\n{top}\n[options]\n{options}\n\
             max_plies = 2\n\
             [[entrant]]\nname = \"a\"\ncommand = [{:?}, \"plays\"]\n\
             [[entrant]]\nname = \"b\"\ncommand = [{:?}, \"plays\"]\n",
            shipped_game(),
            fake_engine(),
            fake_engine()
        ),
    )
    .unwrap();
    file
}

/// `referee tournament FILE --out OUT EXTRA` run in `cwd`: its records,
/// after checking that it succeeded.
fn tournament_in(cwd: &Path, file: &Path, extra: &[&str]) -> Vec<Value> {
    let out = cwd.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let mut args = vec![
        "--no-fsync",
        "tournament",
        file.to_str().unwrap(),
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    let run = common::referee_with(args, b"", &[], Some(cwd));
    assert_eq!(run.code, Some(0), "{run:?}");
    common::jsonl(&out.join("records.jsonl"))
}

/// Issue 51, item 1: a book named in a tournament file's `[options]` was
/// read from the judge's folder, so a match file could not name a book
/// beside it. The game file declares `openings` a path: given in a
/// tournament file it is read from that file's folder, given on the
/// command line from the current folder; the shipped book's name still
/// finds the shipped book.
#[test]
fn a_book_path_is_read_from_where_it_was_given() {
    let _serial = serial();
    let dir = scratch();
    let here = dir.path().join("match");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&here).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    book(&here, "mine.epd", "beside the match file");
    let file = match_file(&here, "", "openings = \"mine.epd\"");
    for record in tournament_in(&elsewhere, &file, &[]) {
        assert_eq!(record["summary"]["opening_name"], "beside the match file");
    }
    // The command line's, from the current folder, over the file's.
    book(&elsewhere, "cli.epd", "from the command line");
    let records = tournament_in(&elsewhere, &file, &["--game-option", "openings=cli.epd"]);
    for record in &records {
        assert_eq!(record["summary"]["opening_name"], "from the command line");
    }
    let game = shipped_game();
    let (a, b) = (fake("a", "plays"), fake("b", "plays"));
    let args = [
        "--no-fsync",
        "play",
        "--games",
        "1",
        "--game-option",
        "openings=cli.epd",
        "--game-option",
        "max_plies=2",
        "--results",
        "r.jsonl",
        &game,
        &a,
        &b,
    ];
    let run = common::referee_with(args, b"", &[], Some(&elsewhere));
    assert_eq!(run.code, Some(0), "{run:?}");
    let record = &common::jsonl(&elsewhere.join("r.jsonl"))[0];
    assert_eq!(record["summary"]["opening_name"], "from the command line");
    // The shipped book's name, with no such file beside the match file:
    // the shipped book, as docs/chess.md has always said.
    let file = match_file(&here, "", "openings = \"openings.epd\"");
    for record in tournament_in(&elsewhere, &file, &[]) {
        assert_eq!(record["summary"]["opening_name"], "Ruy Lopez, Closed");
    }
}

/// Issue 51, item 1: a legal 1 MiB `info string` line lost the game as
/// `incorrect` (the 64 KiB line cap). The chess game file names `info`
/// lines as ones to drop beyond the cap: the line is skipped as it comes
/// and the game goes on. A long line of another kind still loses.
#[test]
fn a_long_info_line_is_dropped_not_a_loss() {
    let _serial = serial();
    let dir = scratch();
    let long = dir.path().join("long.txt");
    let huge = "x".repeat(1 << 20);
    std::fs::write(
        &long,
        format!("info string {huge}\ninfo depth 1 score cp 0\n"),
    )
    .unwrap();
    let extra = ["--seed", "1", "--game-option", "max_plies=4"];
    let a = fake("a", &format!("plays {}", long.display()));
    let b = fake("b", "plays");
    let records = play_fakes_with(&shipped_game(), 2, &extra, &[&a, &b]);
    for record in &records {
        assert_eq!(record["summary"]["termination"], "max_plies", "{record}");
        for player in record["players"].as_array().unwrap() {
            assert_eq!(player["status"], "ok", "{record}");
        }
    }
    let other = dir.path().join("other.txt");
    std::fs::write(&other, format!("string {huge}\n")).unwrap();
    let a = fake("a", &format!("plays {}", other.display()));
    let record = &play_fakes_with(&shipped_game(), 1, &extra, &[&a, &b])[0];
    let player = &record["players"][0];
    assert_eq!(player["status"], "incorrect", "{record}");
    let error = player["error"].as_str().unwrap();
    assert!(error.contains("line longer than 65536 bytes"), "{error}");
}

/// Issue 51, item 1: after a refused option `referee play` printed `0
/// judge errors` and `every game is void (its judge failed)`. It says the
/// option was refused, with the judge's message, and exits 64.
#[test]
fn a_refused_option_is_said_to_be_refused_not_a_judge_failure() {
    let _serial = serial();
    let (a, b) = (fake("a", "plays"), fake("b", "plays"));
    let run = run_fakes(&shipped_game(), &["--game-option", "nodez=100"], &[&a, &b]);
    assert_eq!(run.code, Some(64), "{run:?}");
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(!said.contains("judge error"), "{run:?}");
    assert!(!said.contains("its judge failed"), "{run:?}");
    assert!(
        run.stdout.contains(
            "no game played: the game's options refused by the judge: \
             game option \"nodez\" is not an option of the chess judge"
        ),
        "{run:?}"
    );
}
