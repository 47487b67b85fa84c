//! The chess judge built into the referee (`referee __chess-judge`)
//! against the Python one it replaced (`games/chess/judge.py`, python-chess),
//! kept as the judge protocol's example: fed the same games, they must
//! write the same messages, byte for byte in every text (the PGN, the
//! summary, the frames, the `go` lines, the refusals and eliminations).
//!
//! The test plays the referee's part itself, so that both judges see the
//! same replies to the microsecond: it runs each judge as one process for
//! a run of games, answers its `ask`s from fake engines (bots/chess-random
//! in its `fuzz` mode: random info lines, random legal moves and, now and
//! then, a bad one, drawn from a seed and the position) and from a seeded
//! generator (move times, clocks, a crash or a timeout now and then), and
//! draws each game's `start` from the same generator: the judge's options
//! (orders, seeds, colours, adjudication, aliases, mistakes), the
//! entrants' options (UCI's, the judge's, misspelt ones), their names and
//! clocks. A second test plays games through the real binary with both
//! game files and compares the records, move times aside.
//!
//! Skips, saying why, without the judge's venv (scripts/test.sh and
//! games/chess/make-venv.sh make it).

#[path = "common/chess.rs"]
mod chess_common;
mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use common::TestRng;
use serde_json::{Value, json};

fn root() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

fn python() -> String {
    format!("{}/games/chess/.venv/bin/python3", root())
}

/// Whether the Python judge can run here; says why not.
fn python_judge_runs() -> bool {
    let imports = Command::new(python())
        .args(["-c", "import chess"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !imports {
        eprintln!("skipped: games/chess/.venv cannot import chess: run games/chess/make-venv.sh");
    }
    imports
}

/// A process spoken to a line at a time.
struct Process {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Process {
    fn start(mut command: Command) -> Process {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Process {
            child,
            input,
            output,
        }
    }

    fn write(&mut self, text: &str) {
        // An engine that has stopped reading is the harness's business.
        let _ = self.input.write_all(text.as_bytes());
        let _ = self.input.flush();
    }

    fn line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.output.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches('\n').to_owned()),
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A judge: the compiled one or the Python one, run in games/chess.
fn judge(python_judge: bool) -> Process {
    let mut command = if python_judge {
        let mut c = Command::new(python());
        c.arg("judge.py");
        c
    } else {
        let mut c = Command::new(common::referee_bin());
        c.arg("__chess-judge");
        c
    };
    command.current_dir(format!("{}/games/chess", root()));
    Process::start(command)
}

/// Picks one of `items`.
fn pick<'a, T>(rng: &mut TestRng, items: &'a [T]) -> &'a T {
    &items[rng.below(items.len() as u64) as usize]
}

/// Game `index`'s `start`, drawn from `rng`, and its engines' modes.
fn draw_start(rng: &mut TestRng, index: u64) -> (Value, [String; 2]) {
    let mut options = serde_json::Map::new();
    let choices: [(&str, &[Value]); 15] = [
        (
            "order",
            &[json!("random"), json!("sequential"), json!("shuffled")],
        ),
        ("seed", &[json!(5), json!(3_321_348_664u64), json!(-1)]),
        ("start", &[json!(12), json!(1), json!(0)]),
        ("games_per_opening", &[json!(4), json!(2), json!(3)]),
        ("swap", &[json!(false), json!(true), json!("no")]),
        ("nodes", &[json!(5000), json!(0), json!("many")]),
        ("depth", &[json!(7), json!(0)]),
        ("movetime", &[json!(250), json!(0)]),
        ("max_plies", &[json!(30), json!(60), json!(1), json!(0)]),
        ("max_moves", &[json!(20), json!(0), json!(150)]),
        ("draw_movenumber", &[json!(6), json!(30), json!(0)]),
        ("draw_movecount", &[json!(1), json!(2), json!(0)]),
        ("draw_score", &[json!(20), json!(3000)]),
        ("resign_movecount", &[json!(1), json!(2), json!(0)]),
        ("resign_twosided", &[json!(true), json!(false)]),
    ];
    for (key, values) in choices {
        if rng.below(3) == 0 {
            options.insert(key.to_owned(), pick(rng, values).clone());
        }
    }
    if rng.below(8) == 0 {
        let (key, value) = pick(
            rng,
            &[
                ("draw_after", json!(13)),
                ("draw_plies", json!(3)),
                ("resign_cp", json!(400)),
                ("nodez", json!(5)),
                ("resign_movecont", json!(1)),
                ("openings", json!("no-such-book.epd")),
            ],
        )
        .clone();
        options.insert(key.to_owned(), value);
    }
    if !options.contains_key("max_plies") && !options.contains_key("max_moves") {
        options.insert("max_plies".into(), json!(40));
    }
    // Random legal moves to a long game's end: the rules' ends, castling,
    // promotions, en passant and checks in the PGN.
    let long = rng.below(3) == 0;
    if long {
        options.insert("max_plies".into(), json!(0));
        options.insert("max_moves".into(), json!(0));
        if rng.below(2) == 0 {
            options.insert("resign_movecount".into(), json!(0));
            options.insert("draw_movecount".into(), json!(0));
        }
    }
    let names = ["a", "b", "sf \"x\"]\n[Event", "\u{e9}\u{1f600}\\"];
    let entrant_options = [
        json!({}),
        json!({"Hash": 16, "Skill Level": "3"}),
        json!({"nodes": 500}),
        json!({"skill level": 30}),
        json!({"SkillLevel": 1}),
        json!({"Style": "risky", "Clear Hash": true, "Ponder": "TRUE", "Debug Log File": 3}),
        json!({"movetime": 0}),
        json!({"Style": "wild"}),
    ];
    let controls = [
        Value::Null,
        json!({"base_micros": 2_000_000, "increment_micros": 50_000}),
        json!({"base_micros": 1_000_000, "increment_micros": 0}),
        json!({"base_micros": 123_456_789, "increment_micros": 1_500}),
    ];
    let rotation = index % 2;
    let timed = rng.below(2) == 0;
    // Without a clock a seat needs a search limit, or the game is refused
    // (now and then it is, to compare the refusals).
    if !timed && rng.below(6) != 0 {
        options.entry("movetime").or_insert(json!(100));
    }
    let players: Vec<Value> = (0..2)
        .map(|seat| {
            let options = if rng.below(3) == 0 {
                pick(rng, &entrant_options).clone()
            } else {
                json!({})
            };
            let control = if timed {
                pick(rng, &controls[1..]).clone()
            } else {
                Value::Null
            };
            // A process of a seat's entrant kept from an earlier game, or
            // a fresh one: the judges set up only the ones they do not
            // know.
            let process = 1 + seat as u64 + 2 * rng.below(3);
            json!({"seat": seat, "name": names[(seat + 2 * rng.below(2) as usize) % 4],
                "entrant": (seat + rotation as usize) % 2, "process": process, "program": ["engine"],
                "options": options, "timeout_micros": 30_000_000,
                "startup_micros": 10_000_000, "time_control": control})
        })
        .collect();
    let start = json!({"type": "start", "version": 2, "game": "chess", "seed": 1000 + index,
        "index": index, "opening": index.div_ceil(2), "rotation": rotation,
        "players": players, "options": options});
    let mode = |rng: &mut TestRng| {
        let modes = [
            "fuzz", "fuzz", "random", "random", "plays", "illegal", "a1a1", "garbage",
        ];
        match *pick(rng, &modes) {
            _ if long => format!("random {}", rng.below(1 << 40)),
            "fuzz" => format!("fuzz {}", rng.below(1 << 40)),
            "random" => format!("random {}", rng.below(1 << 40)),
            other => other.to_owned(),
        }
    };
    (start, [mode(rng), mode(rng)])
}

/// Plays `games` games through one judge process, answering for the
/// referee from `seed`: every message the judge wrote, in order, one
/// `Vec` per game.
fn converse(python_judge: bool, seed: u64, games: u64) -> Vec<Vec<Value>> {
    let mut rng = TestRng::new(seed);
    let mut judge = judge(python_judge);
    let mut all = Vec::new();
    for index in 1..=games {
        let (start, modes) = draw_start(&mut rng, index);
        let mut engines: Vec<Process> = modes
            .iter()
            .map(|mode| {
                let mut c = Command::new(chess_common::fake_engine());
                c.args(mode.split(' '));
                Process::start(c)
            })
            .collect();
        let controls: Vec<Value> = (0..2)
            .map(|s| start["players"][s]["time_control"].clone())
            .collect();
        let mut clocks: Vec<Value> = controls.iter().map(|c| c["base_micros"].clone()).collect();
        // A crash or a timeout now and then; rarely in a long game.
        let failures = if start["options"]["max_plies"] == 0 {
            5000
        } else {
            60
        };
        judge.write(&format!("{start}\n"));
        let mut said = Vec::new();
        loop {
            let line = judge
                .line()
                .unwrap_or_else(|| panic!("the judge stopped: game {index}: {said:?}"));
            let message: Value = serde_json::from_str(&line).expect("a JSON message");
            said.push(message.clone());
            match message["type"].as_str() {
                Some("send") => {
                    for seat in message["to"].as_array().unwrap() {
                        let seat = seat.as_u64().unwrap() as usize;
                        engines[seat].write(message["text"].as_str().unwrap());
                    }
                }
                Some("ask") => {
                    let until = message["until"].as_str().unwrap();
                    let mut replies = Vec::new();
                    for seat in message["players"].as_array().unwrap() {
                        let seat = seat.as_u64().unwrap() as usize;
                        let micros = rng.below(3_000_000) as i64;
                        if rng.below(failures) == 0 {
                            let status = pick(&mut rng, &["crashed", "timeout", "limit"]);
                            replies.push(json!({"player": seat, "micros": micros,
                                "status": status, "phase": "move", "message": "failed"}));
                            continue;
                        }
                        let mut lines = Vec::new();
                        let text = loop {
                            let Some(line) = engines[seat].line() else {
                                break None;
                            };
                            if line.split_whitespace().next() == Some(until) {
                                break Some(line);
                            }
                            lines.push(line);
                        };
                        match text {
                            Some(text) => {
                                replies.push(json!({"player": seat, "text": text,
                                    "lines": lines, "micros": micros}));
                                if let Some(clock) = clocks[seat].as_i64()
                                    && !message.get("setup").is_some_and(|s| s == true)
                                {
                                    let inc = controls[seat]["increment_micros"].as_i64().unwrap();
                                    clocks[seat] = json!(clock - micros + inc);
                                }
                            }
                            None => replies.push(json!({"player": seat, "micros": micros,
                                "status": "crashed", "message": "exited"})),
                        }
                    }
                    let mut answer = json!({"type": "replies", "replies": replies});
                    if clocks.iter().any(|c| !c.is_null()) {
                        answer["clocks"] = json!(clocks);
                    }
                    judge.write(&format!("{answer}\n"));
                }
                Some("end" | "refuse") => break,
                _ => {}
            }
        }
        all.push(said);
    }
    all
}

/// The first difference between two judges' messages, shown.
fn first_difference(python: &[Vec<Value>], compiled: &[Vec<Value>]) -> Option<String> {
    for (game, (p, c)) in python.iter().zip(compiled).enumerate() {
        for (i, (pm, cm)) in p.iter().zip(c).enumerate() {
            if pm != cm {
                return Some(format!(
                    "game {}, message {}:\n  judge.py: {pm}\n  compiled: {cm}",
                    game + 1,
                    i + 1
                ));
            }
        }
        if p.len() != c.len() {
            return Some(format!(
                "game {}: judge.py wrote {} messages, the compiled judge {}",
                game + 1,
                p.len(),
                c.len()
            ));
        }
    }
    None
}

#[test]
fn both_judges_write_the_same_messages_for_the_same_games() {
    if !python_judge_runs() {
        return;
    }
    let seed = std::env::var("CHESS_JUDGES_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            now.unwrap().as_nanos() as u64 | 1
        });
    let games = std::env::var("CHESS_JUDGES_GAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    // What the games must cover: ends of each kind, refusals,
    // eliminations. A seed's games may miss one (150 random games rarely
    // end drawn by score); the next seeds' games are played too, until
    // they are all seen, so that a run fails on a difference, never on
    // the draw of a seed.
    const MUST: [&str; 5] = [
        "refuse",
        "illegal_move",
        "max_plies",
        "resignation",
        "draw_by_score",
    ];
    let mut ends = std::collections::BTreeSet::new();
    let mut seeds = Vec::new();
    for next in (0..6).map(|i| seed.wrapping_add(i)) {
        seeds.push(next);
        let python = converse(true, next, games);
        let compiled = converse(false, next, games);
        assert_eq!(python.len(), compiled.len());
        if let Some(difference) = first_difference(&python, &compiled) {
            panic!("CHESS_JUDGES_SEED={next}: {difference}");
        }
        ends.extend(compiled.iter().filter_map(|g| g.last()).map(|m| {
            match m["type"].as_str() {
                Some("end") => m["summary"]["termination"]
                    .as_str()
                    .unwrap_or("?")
                    .to_owned(),
                other => other.unwrap_or("?").to_owned(),
            }
        }));
        if MUST.iter().all(|must| ends.contains(*must)) {
            break;
        }
    }
    eprintln!(
        "CHESS_JUDGES_SEED={seed}: {games} games a seed, seeds {seeds:?}, the same messages; ends: {ends:?}"
    );
    for must in MUST {
        assert!(
            ends.contains(must),
            "CHESS_JUDGES_SEED={seed}: no {must} in {ends:?} over seeds {seeds:?}"
        );
    }
}

/// `referee play` of `game` between two fake engines: its records.
fn play(game: &str, dir: &std::path::Path, name: &str, bots: &[String]) -> Vec<Value> {
    let results = dir.join(format!("{name}.jsonl"));
    let mut args = vec![
        "--no-fsync".to_owned(),
        "play".into(),
        "--games".into(),
        "16".into(),
        "--seed".into(),
        "7".into(),
        "--record-moves".into(),
        "--game-option".into(),
        "max_plies=40".into(),
        "--game-option".into(),
        "resign_movecount=2".into(),
        "--results".into(),
        results.to_str().unwrap().into(),
        game.into(),
    ];
    args.extend(bots.iter().cloned());
    let run = common::referee(&args, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    let mut records = common::jsonl(&results);
    records.sort_by_key(|r| r["index"].as_u64());
    records
}

/// A PGN or frame text with its move times (`0.123s`) left out: the
/// referee measures them, and no two runs take the same.
fn timeless(text: &str) -> String {
    let re = regex::Regex::new(r"\d+\.\d{3}s").unwrap();
    re.replace_all(text, "T").into_owned()
}

#[test]
fn both_game_files_play_the_same_games_through_the_referee() {
    if !python_judge_runs() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let bots = [
        chess_common::fake("a", "fuzz 11"),
        chess_common::fake("b", "fuzz 12"),
    ];
    let chess = format!("{}/games/chess", root());
    let python = play(
        &format!("{chess}/game-python.toml"),
        dir.path(),
        "python",
        &bots,
    );
    let compiled = play(&format!("{chess}/game.toml"), dir.path(), "compiled", &bots);
    assert_eq!(python.len(), 16);
    assert_eq!(compiled.len(), 16);
    for (p, c) in python.iter().zip(&compiled) {
        let (ps, cs) = (&p["summary"], &c["summary"]);
        for key in [
            "result",
            "termination",
            "plies",
            "opening",
            "line",
            "opening_name",
            "fen",
            "white",
            "black",
        ] {
            assert_eq!(ps[key], cs[key], "{key}: {p}\n{c}");
        }
        let (pp, cp) = (ps["pgn"].as_str().unwrap(), cs["pgn"].as_str().unwrap());
        assert_eq!(timeless(pp), timeless(cp));
        for (a, b) in p["players"]
            .as_array()
            .unwrap()
            .iter()
            .zip(c["players"].as_array().unwrap())
        {
            for key in ["status", "score", "rank", "error"] {
                assert_eq!(a[key], b[key], "{key}: {p}\n{c}");
            }
        }
        let frames = |r: &Value| timeless(&r["frames"].to_string());
        assert_eq!(frames(p), frames(c));
    }
}
