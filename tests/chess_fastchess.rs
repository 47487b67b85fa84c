//! The chess judge's adjudication against fastchess's, game by game: the
//! regression test of issue 41, item 4 ("the same adjudication as
//! fastchess" was not: fastchess restarts its draw count after a capture
//! or a pawn move and counts from the game's move number; on identical
//! deterministic games 2 of 40 results and 12 of 40 lengths differed).
//! With the judge as it was before that issue, 8 of these 40 games end at
//! another ply than fastchess's (every result the same).
//!
//! `tests/fixtures/chess/fastchess/games.pgn` holds 40 games fastchess
//! played between two identical Stockfish 15.1 engines at `go nodes 5000`
//! (its README gives the command). With one thread, a fixed node count and
//! `ucinewgame` before each game Stockfish is deterministic, so the
//! referee's tournament of the same match plays the same moves; where it
//! stops, and with which result, is the adjudication alone. The fixture is
//! committed because fastchess is on no registry: CI cannot run it.
//!
//! The judge is the one built into the referee, which the shipped game
//! file names (`referee __chess-judge`). Skips, saying why, without
//! /usr/games/stockfish or with a Stockfish other than the 15.1 the
//! fixture was made with; says how many games it played when it ran.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{fixture, referee};

const STOCKFISH: &str = "/usr/games/stockfish";
/// The first line Stockfish prints: another version plays other moves.
const FIXTURE_STOCKFISH: &str = "Stockfish 15.1 ";
const GAMES: usize = 40;

fn root() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

/// The chess judge's options for fastchess's `tc=inf nodes=5000 -draw
/// movenumber=40 movecount=4 score=10 -resign movecount=4 score=1000
/// -maxmoves 200`, as the `[options]` table of a game file. The only place
/// that names the judge's adjudication options: when their names or
/// meaning change, this is what changes.
fn fastchess_settings() -> &'static str {
    // The judge's options are named as fastchess's flags and mean the same.
    "nodes = 5000\n\
     draw_movenumber = 40\n\
     draw_movecount = 4\n\
     draw_score = 10\n\
     resign_movecount = 4\n\
     resign_score = 1000\n\
     max_moves = 200\n"
}

/// Why this test cannot run on this machine, if it cannot.
fn missing() -> Option<String> {
    if !Path::new(STOCKFISH).exists() {
        return Some(format!("{STOCKFISH} is missing: apt-get install stockfish"));
    }
    let version = stockfish_version();
    if !version.starts_with(FIXTURE_STOCKFISH) {
        return Some(format!(
            "{STOCKFISH} is {version:?}, not the {}the fixture was made with",
            FIXTURE_STOCKFISH
        ));
    }
    None
}

/// The first line Stockfish writes, which names its version.
fn stockfish_version() -> String {
    let mut child = Command::new(STOCKFISH)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start stockfish");
    // Stockfish prints its name at once; `quit` ends it.
    let _ = child.stdin.take().unwrap().write_all(b"quit\n");
    let out = child.wait_with_output().expect("stockfish's output");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().next().unwrap_or("").to_owned()
}

/// A game file like games/chess/game.toml, with absolute paths and without
/// a clock (the engines search a fixed number of nodes).
fn game_file(dir: &Path) -> String {
    let chess = format!("{}/games/chess", root());
    let text = format!(
        "name = \"chess\"\n\
         judge = [\"referee\", \"__chess-judge\"]\n\
         protocol = 2\n\
         players = {{ min = 2, max = 2 }}\n\
         read = \"line\"\n\
         reuse = true\n\
         keep_players = true\n\
         [limits]\n\
         timeout = \"30s\"\n\
         startup = \"10s\"\n\
         [options]\n\
         openings = \"{chess}/openings.epd\"\n\
         {}",
        fastchess_settings()
    );
    let path = dir.join("game.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// fastchess's match as a tournament: two identical engines (Threads 1,
/// Hash 16), the openings in order, each twice with colours swapped.
/// Two jobs: each keeps its engines and sends `ucinewgame`, so every game
/// is the same as when played alone.
fn tournament_file(dir: &Path) -> String {
    let game = game_file(dir);
    let mut text = format!("game = \"{game}\"\ngames = {GAMES}\nseed = 1\njobs = 2\n");
    for name in ["sf-a", "sf-b"] {
        text += &format!(
            "\n[[entrant]]\nname = \"{name}\"\ncommand = [\"{STOCKFISH}\"]\n\
             options = {{ Threads = 1, Hash = 16 }}\n"
        );
    }
    let path = dir.join("tournament.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// One game of a PGN: what is compared and what is shown when it differs.
#[derive(Debug)]
struct Game {
    fen: String,
    result: String,
    moves: Vec<String>,
    termination: String,
    /// The last move's comment: why the game ended, in fastchess's words.
    last_comment: String,
}

/// The games of a PGN file, in order. SAN moves only: comments, move
/// numbers, NAGs and the result are left out.
fn games(pgn: &str) -> Vec<Game> {
    let mut games = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    for line in pgn.lines() {
        if line.starts_with("[Event ") {
            texts.push(String::new());
        }
        if let Some(text) = texts.last_mut() {
            *text += line;
            text.push('\n');
        }
    }
    for text in &texts {
        let tag = |name: &str| {
            let start = format!("[{name} \"");
            text.lines()
                .find_map(|l| l.strip_prefix(&start)?.strip_suffix("\"]"))
                .unwrap_or("")
                .to_owned()
        };
        let body: String = text
            .lines()
            .filter(|l| !l.starts_with('['))
            .collect::<Vec<_>>()
            .join(" ");
        let (moves, comments) = movetext(&body);
        games.push(Game {
            fen: tag("FEN"),
            result: tag("Result"),
            moves,
            termination: tag("Termination"),
            last_comment: comments.last().cloned().unwrap_or_default(),
        });
    }
    games
}

/// A game's moves and comments, from its movetext.
fn movetext(body: &str) -> (Vec<String>, Vec<String>) {
    let (mut moves, mut comments, mut rest) = (Vec::new(), Vec::new(), body);
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('{') {
            let end = after.find('}').unwrap_or(after.len());
            comments.push(after[..end].trim().to_owned());
            rest = after.get(end + 1..).unwrap_or("");
            continue;
        }
        let end = rest.find([' ', '{']).unwrap_or(rest.len());
        let word = rest[..end].trim_start_matches(|c: char| c.is_ascii_digit());
        // "12." and "12..." number moves; "1-0" and the like end the game.
        let word = word.trim_start_matches('.');
        let result = ["1-0", "0-1", "1/2-1/2", "*"].contains(&&rest[..end]);
        if !word.is_empty() && !result && !word.starts_with('$') {
            moves.push(word.to_owned());
        }
        rest = rest[end..].trim_start_matches(' ');
    }
    (moves, comments)
}

/// The referee's games, in the order they were numbered.
fn referee_games(out: &Path) -> Vec<Game> {
    let mut records = common::jsonl(&out.join("records.jsonl"));
    records.sort_by_key(|r| r["index"].as_u64());
    let pgns: Vec<&str> = records
        .iter()
        .map(|r| r["summary"]["pgn"].as_str().expect("a PGN in each record"))
        .collect();
    games(&pgns.join("\n\n"))
}

/// Where game `k` of each differs, as one line of counts, and the first
/// game that differs in full: both move lists, terminations and reasons.
fn differences(fastchess: &[Game], ours: &[Game]) -> Option<String> {
    let pairs = || fastchess.iter().zip(ours).enumerate();
    let results = pairs().filter(|(_, (f, o))| f.result != o.result).count();
    let lengths = pairs()
        .filter(|(_, (f, o))| f.moves.len() != o.moves.len())
        .count();
    // Moves that differ within the shorter game: another engine, not
    // another adjudication.
    let moves = pairs()
        .filter(|(_, (f, o))| f.moves.iter().zip(&o.moves).any(|(a, b)| a != b))
        .count();
    let (k, (f, o)) = pairs().find(|(_, (f, o))| f.result != o.result || f.moves != o.moves)?;
    let shown = |g: &Game| {
        format!(
            "{} after {} plies, Termination {:?}, last comment {:?}\n    {}",
            g.result,
            g.moves.len(),
            g.termination,
            g.last_comment,
            g.moves.join(" ")
        )
    };
    Some(format!(
        "results differ in {results} of {GAMES} games, lengths in {lengths}, \
         moves before either end in {moves}; \
         the first that differs, game {} ({}):\n  fastchess: {}\n  referee:   {}",
        k + 1,
        f.fen,
        shown(f),
        shown(o)
    ))
}

#[test]
fn the_judge_adjudicates_the_games_of_the_fastchess_fixture_as_fastchess() {
    if let Some(why) = missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = dir.path().join("out");
    let file = tournament_file(dir.path());
    let out_arg = out.to_str().unwrap();
    let args = [
        "--no-fsync",
        "tournament",
        &file,
        "--no-progress",
        "--out",
        out_arg,
    ];
    let run = referee(args, b"");
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);

    let pgn = std::fs::read_to_string(fixture("chess/fastchess/games.pgn")).unwrap();
    let (fastchess, ours) = (games(&pgn), referee_games(&out));
    assert_eq!(fastchess.len(), GAMES, "the fixture's games");
    assert_eq!(ours.len(), GAMES, "the referee's games");
    // Game k of each starts from the same opening (the same book, in order).
    for (k, (f, o)) in fastchess.iter().zip(&ours).enumerate() {
        assert_eq!(f.fen, o.fen, "game {}: another opening", k + 1);
    }
    if let Some(report) = differences(&fastchess, &ours) {
        panic!("{report}");
    }
    eprintln!(
        "played the {GAMES} games of the fastchess fixture: every result and length as fastchess's"
    );
}
