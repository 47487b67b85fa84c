//! The chess judge: judge protocol 2 on standard input and output, game
//! after game, as `games/chess/judge.py` plays them (docs/chess.md): UCI
//! to the engines through the harness, the opening from the book, colours
//! by seat or by entrant, fastchess's adjudication, the PGN, the summary.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use futures_util::FutureExt;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::board::{End, Game, Position};
use super::book::{self, Books};
use super::options::{self, Refused, Search, Settings};
use super::{pgn, py};
use crate::games::inside_judge::{InsideJudge, JudgeEnd};

const MATE: i64 = 100_000;
/// A score an engine sends is kept within this many centipawns, or moves
/// to mate, of 0: a larger cp is never taken for a mate.
const LARGEST: i64 = MATE / 2 - 1;

/// A move's score from the engine's own side: centipawns or moves to mate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    Cp(i64),
    Mate(i64),
}

impl Score {
    fn value(self) -> i64 {
        match self {
            Score::Cp(v) | Score::Mate(v) => v,
        }
    }

    /// For the PGN's comment and the frames: `+0.54 `, `-M3 `.
    fn shown(score: Option<Score>) -> String {
        match score {
            None => String::new(),
            Some(Score::Cp(v)) => format!("{:+.2} ", v as f64 / 100.0),
            Some(Score::Mate(v)) => format!("{}M{} ", if v <= 0 { "-" } else { "+" }, v.abs()),
        }
    }
}

/// The score of an engine's move from its `info` lines, as fastchess
/// reads it: the last line with a score (of `multipv 1` only, before any
/// `string`), an exact one before a bound; a line whose score is not `cp`
/// or `mate` and a whole number in ASCII digits has none.
pub fn engine_score(lines: &[String]) -> Option<Score> {
    let mut bound = None;
    for line in lines.iter().rev() {
        let mut words = py::split(line);
        if words.first() != Some(&"info") {
            continue;
        }
        if let Some(at) = words.iter().position(|w| *w == "string") {
            words.truncate(at);
        }
        if let Some(at) = words.iter().position(|w| *w == "multipv")
            && at + 1 < words.len()
            && words[at + 1] != "1"
        {
            continue;
        }
        let Some(at) = words
            .iter()
            .position(|w| *w == "score")
            .filter(|at| at + 2 < words.len())
        else {
            continue;
        };
        let (kind, value) = (words[at + 1], words[at + 2]);
        let digits = value.strip_prefix('-').unwrap_or(value);
        if !matches!(kind, "cp" | "mate")
            || digits.is_empty()
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            continue;
        }
        let value = if value.len() <= 10 {
            value.parse::<i64>().expect("at most 10 digits")
        } else if value.starts_with('-') {
            -MATE
        } else {
            MATE
        };
        let value = value.clamp(-LARGEST, LARGEST);
        let score = if kind == "cp" {
            Score::Cp(value)
        } else {
            Score::Mate(value)
        };
        if !words.contains(&"lowerbound") && !words.contains(&"upperbound") {
            return Some(score);
        }
        bound = bound.or(Some(score));
    }
    bound
}

/// A move as the judge takes it: the move, its score, its time (µs).
type Played = (cozy_chess::Move, Option<Score>, i64);

/// fastchess's `-draw`, `-resign` and `-maxmoves`, counted as it counts
/// them: updated after each move with the mover's score, asked before the
/// next.
struct Adjudication {
    settings: Settings,
    /// Plies in a row within draw_score of 0.
    quiet: u64,
    /// Per colour (White, Black): its moves in a row lost.
    resigning: [u64; 2],
    /// Two-sided: plies in a row beyond resign_score.
    lopsided: u64,
    plies: u64,
}

impl Adjudication {
    fn new(settings: &Settings) -> Adjudication {
        Adjudication {
            plies: settings.max_plies.unwrap_or(2 * settings.max_moves),
            settings: settings.clone(),
            quiet: 0,
            resigning: [0, 0],
            lopsided: 0,
        }
    }

    fn update(&mut self, position: &Position, score: Option<Score>, colour: usize) {
        let o = &self.settings;
        let Some(score) = score else {
            (self.quiet, self.lopsided, self.resigning[colour]) = (0, 0, 0);
            return;
        };
        if position.halfmove_clock() == 0 {
            self.quiet = 0;
        }
        let quiet = matches!(score, Score::Cp(v) if v.unsigned_abs() <= o.draw_score);
        self.quiet = if quiet { self.quiet + 1 } else { 0 };
        let big = match score {
            Score::Cp(v) => v.unsigned_abs() >= o.resign_score,
            Score::Mate(_) => true,
        };
        self.lopsided = if big { self.lopsided + 1 } else { 0 };
        let lost = match score {
            Score::Cp(v) => v <= -(o.resign_score.min(i64::MAX as u64) as i64),
            Score::Mate(v) => v < 0,
        };
        self.resigning[colour] = if lost { self.resigning[colour] + 1 } else { 0 };
    }

    /// (result, termination) before the next move; `score` is the last
    /// mover's.
    fn verdict(
        &self,
        position: &Position,
        plies: u64,
        score: Option<Score>,
    ) -> Option<(&'static str, &'static str)> {
        let o = &self.settings;
        let count = o.resign_movecount;
        let resignable = count > 0
            && if o.resign_twosided {
                self.lopsided >= 2 * count
            } else {
                self.resigning.iter().max().copied().unwrap_or(0) >= count
            };
        if resignable && score.is_some_and(|s| s.value() < 0) {
            let result = if position.white_to_move() {
                "1-0"
            } else {
                "0-1"
            };
            return Some((result, "resignation"));
        }
        let count = o.draw_movecount;
        if count > 0 && position.fullmove_number() > o.draw_movenumber && self.quiet >= 2 * count {
            return Some(("1/2-1/2", "draw_by_score"));
        }
        if self.plies > 0 && plies >= self.plies {
            return Some(("1/2-1/2", "max_plies"));
        }
        None
    }
}

/// Why a game stops short: refused, or the judge stops (the harness
/// closed its messages, or broke the protocol).
enum Stop {
    Refused(Refused),
    Closed,
    Broken(String),
}

impl From<Refused> for Stop {
    fn from(refused: Refused) -> Stop {
        Stop::Refused(refused)
    }
}

/// The harness's answer to an `ask`.
#[derive(Deserialize)]
struct Answer {
    replies: Vec<Reply>,
    /// Each seat's time left, when a seat has a clock.
    #[serde(default)]
    clocks: Option<Vec<Value>>,
}

/// A player's reply: its line up to `until` and the lines before it, or
/// its failure.
#[derive(Debug, Deserialize)]
struct Reply {
    player: usize,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    lines: Vec<String>,
    #[serde(default)]
    micros: i64,
    #[serde(default)]
    status: Option<String>,
}

/// Where the judge's lines come from and go: its standard input and
/// output (the judge as a process, [`main`]), or the referee's memory (run
/// inside it, [`inside`]).
trait Wire {
    /// Writes `bytes` at once.
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// The next line, with its `\n`, into `line`: its length, 0 at the end.
    async fn read_line(&mut self, line: &mut String) -> std::io::Result<usize>;
}

/// The judge as a process: it blocks on its standard input.
struct Stdio {
    input: std::io::StdinLock<'static>,
    output: std::io::StdoutLock<'static>,
}

impl Wire for Stdio {
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.output.write_all(bytes)?;
        self.output.flush()
    }

    async fn read_line(&mut self, line: &mut String) -> std::io::Result<usize> {
        self.input.read_line(line)
    }
}

/// The judge inside the referee: it waits (is pending) for the harness.
impl Wire for JudgeEnd {
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.write(bytes);
        Ok(())
    }

    async fn read_line(&mut self, line: &mut String) -> std::io::Result<usize> {
        Ok(JudgeEnd::read_line(self, line).await)
    }
}

/// The judge's conversation with the harness. What it says is buffered
/// and written at once when it waits for an answer (or ends): a move's
/// `frame`, `send` and `ask` in one write, one wake-up of the referee
/// instead of three (docs/PERFORMANCE.md, section 15).
struct Harness<W> {
    wire: W,
    /// What was said since the last answer.
    said: Vec<u8>,
    /// The line read last, its buffer reused.
    line: String,
}

impl<W: Wire> Harness<W> {
    fn new(wire: W) -> Harness<W> {
        Harness {
            wire,
            said: Vec::with_capacity(1 << 12),
            line: String::new(),
        }
    }

    fn say(&mut self, message: &Value) -> Result<(), Stop> {
        serde_json::to_writer(&mut self.said, message)
            .map_err(|e| Stop::Broken(format!("cannot write to the harness: {e}")))?;
        self.said.push(b'\n');
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Stop> {
        if self.said.is_empty() {
            return Ok(());
        }
        let written = self.wire.write_all(&self.said);
        self.said.clear();
        written.map_err(|e| Stop::Broken(format!("cannot write to the harness: {e}")))
    }

    /// The next message, after what was said is written; `None` at the
    /// end of the input.
    async fn hear<T: DeserializeOwned>(&mut self) -> Result<Option<T>, Stop> {
        self.flush()?;
        let line = &mut self.line;
        line.clear();
        match self.wire.read_line(line).await {
            Ok(0) => Ok(None),
            Ok(_) => serde_json::from_str(line)
                .map(Some)
                .map_err(|e| Stop::Broken(format!("a message that is not JSON ({e}): {line:?}"))),
            Err(e) => Err(Stop::Broken(format!("cannot read the harness: {e}"))),
        }
    }
}

/// Piece letters for the replay's legend and colours: White's are
/// capitals, one colour a side.
const PIECE_NAMES: [(char, &str); 6] = [
    ('p', "pawn"),
    ('n', "knight"),
    ('b', "bishop"),
    ('r', "rook"),
    ('q', "queen"),
    ('k', "king"),
];

fn frame(position: &Position, text: &str, first: bool) -> Value {
    let mut data = json!({"grid": position.grid(), "text": text, "fen": position.fen()});
    if first {
        let mut legend = serde_json::Map::new();
        let mut colors = serde_json::Map::new();
        for (letter, name) in PIECE_NAMES {
            let upper = letter.to_ascii_uppercase().to_string();
            legend.insert(upper.clone(), json!(format!("white {name}")));
            legend.insert(letter.to_string(), json!(format!("black {name}")));
            colors.insert(upper, json!("#ffd966"));
            colors.insert(letter.to_string(), json!("#8fb3de"));
        }
        data["legend"] = Value::Object(legend);
        data["colors"] = Value::Object(colors);
    }
    json!({"type": "frame", "data": data})
}

/// An engine's text for a PGN comment: printable ASCII without braces (a
/// `}` would end the comment), at most 20 characters.
fn plain(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| {
            if (' '..='~').contains(&c) && c != '{' && c != '}' {
                c
            } else {
                '?'
            }
        })
        .collect();
    if text.chars().count() <= 20 {
        text
    } else {
        format!("{}...", text.chars().take(20).collect::<String>())
    }
}

/// The PGN's `Termination` for the summary's `termination`.
fn termination_tag(termination: &str) -> &'static str {
    match termination {
        "checkmate"
        | "stalemate"
        | "insufficient_material"
        | "fifty_moves"
        | "threefold_repetition" => "normal",
        "resignation" | "draw_by_score" | "max_plies" => "adjudication",
        "illegal_move" => "rules infraction",
        "timeout" => "time forfeit",
        _ => "abandoned",
    }
}

/// Why the game ended, in fastchess's words, for the last move's comment.
fn reason(termination: &str, winner: &str, loser: &str) -> String {
    match termination {
        "checkmate" => format!("{winner} mates"),
        "stalemate" => "Draw by stalemate".to_owned(),
        "insufficient_material" => "Draw by insufficient mating material".to_owned(),
        "fifty_moves" => "Draw by fifty moves rule".to_owned(),
        "threefold_repetition" => "Draw by 3-fold repetition".to_owned(),
        "resignation" => format!("{winner} wins by adjudication"),
        "draw_by_score" | "max_plies" => "Draw by adjudication".to_owned(),
        "illegal_move" => format!("{loser} makes an illegal move"),
        "timeout" => format!("{loser} loses on time"),
        _ => format!("{loser} disconnects"),
    }
}

/// Today's date on this machine, as PGN writes it (`2026.11.28`).
fn today() -> String {
    // SAFETY: time and localtime_r take plain values and a valid struct.
    unsafe {
        let now = nix::libc::time(std::ptr::null_mut());
        let mut tm: nix::libc::tm = std::mem::zeroed();
        if nix::libc::localtime_r(&now, &mut tm).is_null() {
            return "????.??.??".to_owned();
        }
        format!(
            "{:04}.{:02}.{:02}",
            tm.tm_year + 1900,
            tm.tm_mon + 1,
            tm.tm_mday
        )
    }
}

/// The seat of the entrant listed first in the run (the lower
/// `entrant`); from a harness that does not say, the seat of the round's
/// first entrant.
fn first_listed(start: &Value) -> usize {
    let players = start["players"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let numbers: Option<Vec<i64>> = players.iter().map(|p| p["entrant"].as_i64()).collect();
    match numbers {
        Some(numbers) if !numbers.is_empty() => {
            let least = numbers.iter().min().expect("not empty");
            numbers.iter().position(|n| n == least).expect("found")
        }
        _ => (start["rotation"].as_u64().unwrap_or(0) % 2) as usize,
    }
}

/// One game: its seats, which colour each plays, the engines' search
/// limits and clocks; the PGN and the summary at its end.
struct Table<'a> {
    start: &'a Value,
    settings: Settings,
    names: [String; 2],
    search: [Search; 2],
    game: Game,
    /// By colour: White's seat, Black's.
    seats: [usize; 2],
    controls: [Value; 2],
    clocks: [Value; 2],
    ids: [options::Ids; 2],
    /// The PGN's, one per move: the engine's score and time.
    comments: Vec<String>,
    date: String,
    summary: serde_json::Map<String, Value>,
}

impl<'a> Table<'a> {
    fn new(start: &'a Value, settings: Settings, books: &mut Books) -> Result<Table<'a>, Refused> {
        let players = start["players"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let player = |seat: usize| players.get(seat).unwrap_or(&Value::Null);
        let names = [0, 1].map(|s| py::str_of(&player(s)["name"]));
        let search = [
            options::search(settings.search, 0, player(0))?,
            options::search(settings.search, 1, player(1))?,
        ];
        let opening = opening(start, &settings, books)?;
        let white = if settings.swap {
            0
        } else {
            first_listed(start)
        };
        let controls = [0, 1].map(|s| player(s)["time_control"].clone());
        for seat in 0..2 {
            options::unlimited(search[seat], is_control(&controls[seat]), player(seat))?;
        }
        let clocks = controls.clone().map(|c| c["base_micros"].clone());
        let mut summary = serde_json::Map::new();
        summary.insert("opening".into(), start["opening"].clone());
        summary.insert("line".into(), json!(opening.line));
        summary.insert("opening_name".into(), opening.name);
        summary.insert("fen".into(), json!(opening.position.fen()));
        summary.insert("white".into(), json!(names[white]));
        summary.insert("black".into(), json!(names[1 - white]));
        Ok(Table {
            start,
            settings,
            names,
            search,
            game: Game::new(opening.position),
            seats: [white, 1 - white],
            controls,
            clocks,
            ids: [Vec::new(), Vec::new()],
            comments: Vec::new(),
            date: today(),
            summary,
        })
    }

    /// Asks `seats` for their replies up to `until`: the replies.
    async fn ask<W: Wire>(
        &mut self,
        harness: &mut Harness<W>,
        seats: &[usize],
        until: &str,
        setup: bool,
    ) -> Result<Vec<Reply>, Stop> {
        let mut ask = json!({"type": "ask", "players": seats, "until": until});
        if setup {
            ask["setup"] = json!(true);
        }
        harness.say(&ask)?;
        // The harness closing its messages mid-game ends the run: the
        // judge exits quietly, as between games.
        let answer: Answer = harness.hear().await?.ok_or(Stop::Closed)?;
        if let Some(clocks) = answer.clocks.filter(|c| !c.is_empty()) {
            for (seat, clock) in clocks.into_iter().take(2).enumerate() {
                self.clocks[seat] = clock;
            }
        }
        if let Some(reply) = answer.replies.iter().find(|r| r.player > 1) {
            return Err(Stop::Broken(format!("a reply of no seat: {reply:?}")));
        }
        Ok(answer.replies)
    }

    /// `go` for the engine of `seat`: its nodes and depth, the clocks when
    /// it has one (each side's own time and increment), else its movetime
    /// (a seat without a clock has one of the three: see
    /// [`options::unlimited`]).
    fn go(&self, seat: usize) -> String {
        let limits = self.search[seat];
        let mut words = vec!["go".to_owned()];
        for (key, value) in [("nodes", limits.nodes), ("depth", limits.depth)] {
            if value > 0 {
                words.push(format!("{key} {value}"));
            }
        }
        if is_control(&self.controls[seat]) {
            let timed: Vec<(char, usize)> = ['w', 'b']
                .into_iter()
                .zip(self.seats)
                .filter(|(_, s)| is_control(&self.controls[*s]))
                .collect();
            for (c, s) in &timed {
                let left = self.clocks[*s].as_i64().unwrap_or(0).div_euclid(1000);
                words.push(format!("{c}time {}", left.max(1)));
            }
            for (c, s) in &timed {
                let inc = self.controls[*s]["increment_micros"].as_i64().unwrap_or(0);
                words.push(format!("{c}inc {}", inc.div_euclid(1000)));
            }
        } else if limits.nodes == 0 && limits.depth == 0 {
            words.push(format!("movetime {}", limits.movetime));
        }
        words.join(" ")
    }

    /// A seat's PGN time control, as fastchess writes it: `2+0.05`, `-`
    /// (no clock: nodes or depth), `0.1/move`.
    fn control(&self, seat: usize) -> String {
        let control = &self.controls[seat];
        if is_control(control) {
            let base = control["base_micros"].as_f64().unwrap_or(0.0);
            let inc = control["increment_micros"].as_f64().unwrap_or(0.0);
            let mut text = py::g(base / 1e6);
            if inc != 0.0 {
                text.push_str(&format!("+{}", py::g(inc / 1e6)));
            }
            return text;
        }
        let limits = self.search[seat];
        if limits.nodes > 0 || limits.depth > 0 {
            "-".to_owned()
        } else {
            format!("{}/move", py::g(limits.movetime as f64 / 1e3))
        }
    }

    fn pgn(
        &self,
        result: &str,
        termination: &str,
        game_comment: &str,
        comments: &[String],
    ) -> String {
        let [white, black] = self.seats;
        let event = py::str_of(&self.start["game"]);
        let mut tags: Vec<(&str, String)> = vec![
            ("Event", event),
            ("Site", "referee".to_owned()),
            ("Date", self.date.clone()),
            ("Round", py::str_of(&self.start["opening"])),
            ("White", self.names[white].clone()),
            ("Black", self.names[black].clone()),
            ("Result", result.to_owned()),
        ];
        for (colour, seat) in [("White", white), ("Black", black)] {
            for (key, tag) in [("name", "Name"), ("author", "Author")] {
                if let Some((_, id)) = self.ids[seat].iter().find(|(k, _)| *k == key) {
                    let name: &'static str = match (colour, tag) {
                        ("White", "Name") => "EngineWhiteName",
                        ("White", _) => "EngineWhiteAuthor",
                        (_, "Name") => "EngineBlackName",
                        _ => "EngineBlackAuthor",
                    };
                    tags.push((name, id.clone()));
                }
            }
        }
        tags.push(("PlyCount", self.game.plies().to_string()));
        tags.push(("Termination", termination_tag(termination).to_owned()));
        let controls = [self.control(white), self.control(black)];
        if controls[0] == controls[1] {
            tags.push(("TimeControl", controls[0].clone()));
        } else {
            tags.push(("WhiteTimeControl", controls[0].clone()));
            tags.push(("BlackTimeControl", controls[1].clone()));
        }
        pgn::write(&self.game, &tags, comments, game_comment, result)
    }

    async fn finish<W: Wire>(
        &mut self,
        harness: &mut Harness<W>,
        result: &str,
        termination: &str,
        detail: &str,
    ) -> Result<(), Stop> {
        let mut comments = self.comments.clone();
        let mut game_comment = String::new();
        if result != "*" {
            // The reason, as fastchess gives it; before any move, the game's.
            let (winner, loser) = if result != "0-1" {
                ("White", "Black")
            } else {
                ("Black", "White")
            };
            let reason = format!("{}{detail}", reason(termination, winner, loser));
            let last = match comments.last_mut() {
                Some(last) => last,
                None => &mut game_comment,
            };
            *last = if last.is_empty() {
                reason
            } else {
                format!("{last}, {reason}")
            };
        }
        let pgn = self.pgn(result, termination, &game_comment, &comments);
        self.summary.insert("result".into(), json!(result));
        self.summary
            .insert("termination".into(), json!(termination));
        self.summary
            .insert("plies".into(), json!(self.game.plies()));
        self.summary.insert("pgn".into(), json!(pgn));
        let by_colour = match result {
            "1-0" => [json!(1), json!(0)],
            "0-1" => [json!(0), json!(1)],
            "1/2-1/2" => [json!(0.5), json!(0.5)],
            _ => [json!(0), json!(0)],
        };
        let colour_of = |seat: usize| self.seats.iter().position(|s| *s == seat).expect("a seat");
        let scores = [
            by_colour[colour_of(0)].clone(),
            by_colour[colour_of(1)].clone(),
        ];
        harness.say(&json!({"type": "end", "scores": scores, "summary": self.summary}))
    }

    /// The game lost by `losers` (both: `*`).
    async fn forfeit<W: Wire>(
        &mut self,
        harness: &mut Harness<W>,
        losers: &[usize],
        termination: &str,
        detail: &str,
    ) -> Result<(), Stop> {
        let lost = self.seats.iter().position(|s| *s == losers[0]).unwrap_or(0);
        let result = if losers.len() > 1 {
            "*"
        } else if lost == 0 {
            "0-1"
        } else {
            "1-0"
        };
        self.finish(harness, result, termination, detail).await
    }

    /// uci and the entrants' options for an engine process new to this
    /// judge, then a new game for both, on the start-up allowance, as
    /// fastchess sets up an engine once and starts each game with
    /// `ucinewgame`. False when the game is over (a failure).
    async fn setup<W: Wire>(
        &mut self,
        harness: &mut Harness<W>,
        engines: &mut SetUp,
    ) -> Result<bool, Stop> {
        let process = |seat: usize| self.start["players"][seat]["process"].as_u64();
        let mut fresh = Vec::new();
        for seat in 0..2 {
            match process(seat).and_then(|p| engines.ids(p)) {
                Some(ids) => self.ids[seat] = ids.clone(),
                None => fresh.push(seat),
            }
        }
        let (mut alive, mut failed, sent) = self.introduce(harness, &fresh).await?;
        alive.extend((0..2).filter(|seat| !fresh.contains(seat)));
        alive.sort_unstable();
        for &seat in &alive {
            let options = sent
                .iter()
                .find(|(s, _)| *s == seat)
                .map(|(_, o)| o.as_str());
            let text = format!("{}ucinewgame\nisready\n", options.unwrap_or_default());
            harness.say(&json!({"type": "send", "to": [seat], "text": text}))?;
        }
        if !alive.is_empty() {
            let ready = self.ask(harness, &alive, "readyok", true).await?;
            failed.extend(ready.into_iter().filter(|r| r.text.is_none()));
        }
        if let Some(first) = failed.first() {
            let status = first.status.clone().unwrap_or_default();
            let losers: Vec<usize> = failed.iter().map(|r| r.player).collect();
            self.forfeit(harness, &losers, &status, "").await?;
            return Ok(false);
        }
        for &seat in &fresh {
            if let Some(p) = process(seat) {
                engines.remember(p, self.ids[seat].clone());
            }
        }
        Ok(true)
    }

    /// `uci` to the engines of `seats`: the seats that answered, the
    /// replies of those that failed, and the `setoption` lines for each
    /// that answered. Both entrants' options are checked before either is
    /// sent any.
    async fn introduce<W: Wire>(
        &mut self,
        harness: &mut Harness<W>,
        seats: &[usize],
    ) -> Result<(Vec<usize>, Vec<Reply>, Vec<(usize, String)>), Stop> {
        if seats.is_empty() {
            return Ok((Vec::new(), Vec::new(), Vec::new()));
        }
        harness.say(&json!({"type": "send", "to": seats, "text": "uci\n"}))?;
        let replies = self.ask(harness, seats, "uciok", true).await?;
        let (alive, failed): (Vec<Reply>, Vec<Reply>) =
            replies.into_iter().partition(|r| r.text.is_some());
        let mut sent = Vec::new();
        for reply in &alive {
            let seat = reply.player;
            let player = &self.start["players"][seat];
            let (options, ids) = options::setoptions(player, seat, &reply.lines)?;
            self.ids[seat] = ids;
            sent.push((seat, options));
        }
        Ok((alive.iter().map(|r| r.player).collect(), failed, sent))
    }

    /// Asks `seat` for its move: the move, its score and time, or `None`
    /// when the game ended.
    async fn ask_move<W: Wire>(
        &mut self,
        harness: &mut Harness<W>,
        seat: usize,
        moves: &[String],
    ) -> Result<Option<Played>, Stop> {
        let fen = self.summary["fen"].as_str().unwrap_or_default().to_owned();
        let mut position = format!("position fen {fen}");
        if !moves.is_empty() {
            position.push_str(" moves ");
            position.push_str(&moves.join(" "));
        }
        let text = format!("{position}\n{}\n", self.go(seat));
        harness.say(&json!({"type": "send", "to": [seat], "text": text}))?;
        let replies = self.ask(harness, &[seat], "bestmove", false).await?;
        let [reply] = &replies[..] else {
            return Err(Stop::Broken(format!(
                "not one reply to one ask: {replies:?}"
            )));
        };
        let Some(said) = &reply.text else {
            let status = reply.status.clone().unwrap_or_default();
            self.forfeit(harness, &[seat], &status, "").await?;
            return Ok(None);
        };
        let words = py::split(said);
        let written = words.get(1).copied().unwrap_or("");
        let well_formed = is_uci_move(written);
        let position = self.game.position();
        let legal = if well_formed {
            position.legal_uci(written)
        } else {
            None
        };
        let Some(mv) = legal else {
            let source = if written.is_empty() { said } else { written };
            let text: String = source.chars().take(100).collect();
            let what = if well_formed { "illegal" } else { "unparsable" };
            let message = format!(
                "{what} move {} at ply {}, position {}",
                py::repr(&text),
                moves.len() + 1,
                position.fen()
            );
            harness.say(
                &json!({"type": "eliminate", "player": seat, "status": "incorrect",
                "message": message}),
            )?;
            self.forfeit(
                harness,
                &[seat],
                "illegal_move",
                &format!(": {}", plain(&text)),
            )
            .await?;
            return Ok(None);
        };
        Ok(Some((mv, engine_score(&reply.lines), reply.micros)))
    }

    async fn play<W: Wire>(
        &mut self,
        harness: &mut Harness<W>,
        engines: &mut SetUp,
    ) -> Result<(), Stop> {
        if !self.setup(harness, engines).await? {
            return Ok(());
        }
        let mut adjudication = Adjudication::new(&self.settings);
        let position = self.game.position().clone();
        let name = match &self.summary["opening_name"] {
            Value::Null => "None".to_owned(),
            other => py::str_of(other),
        };
        let opening = format!("{name}: {}", position.fen());
        harness.say(&frame(&position, &opening, true))?;
        let mut moves: Vec<String> = Vec::new();
        let mut score = None;
        loop {
            let end = match self.game.end() {
                Some((End::Checkmate, white_won)) => {
                    Some((if white_won { "1-0" } else { "0-1" }, "checkmate"))
                }
                Some((end, _)) => Some(("1/2-1/2", end.name())),
                None => adjudication.verdict(self.game.position(), moves.len() as u64, score),
            };
            if let Some((result, termination)) = end {
                return self.finish(harness, result, termination, "").await;
            }
            let white = self.game.position().white_to_move();
            let seat = self.seats[if white { 0 } else { 1 }];
            let Some((mv, said, micros)) = self.ask_move(harness, seat, &moves).await? else {
                return Ok(());
            };
            score = said;
            let comment = format!("{}{:.3}s", Score::shown(score), micros as f64 / 1e6);
            let position = self.game.position();
            let label = format!(
                "{}{} {}",
                position.fullmove_number(),
                if white { "." } else { "..." },
                position.san(mv)
            );
            moves.push(position.uci(mv));
            self.game.play(mv);
            self.comments.push(comment.clone());
            adjudication.update(self.game.position(), score, if white { 0 } else { 1 });
            let text = format!("{label} ({}, {comment})", self.names[seat]);
            harness.say(&frame(self.game.position(), &text, false))?;
        }
    }
}

/// A move as UCI writes one: two squares and a promotion, or the null
/// move `0000`. Other text is unparsable; such a move that is not legal
/// is illegal.
fn is_uci_move(text: &str) -> bool {
    let b = text.as_bytes();
    let square = |f: u8, r: u8| (b'a'..=b'h').contains(&f) && (b'1'..=b'8').contains(&r);
    text == "0000"
        || (matches!(b.len(), 4 | 5)
            && square(b[0], b[1])
            && square(b[2], b[3])
            && (b.len() == 4 || b"qrbn".contains(&b[4])))
}

fn is_control(control: &Value) -> bool {
    control.as_object().is_some_and(|c| !c.is_empty())
}

/// The position of this game, its EPD `id` and its line in the book: a
/// round of the referee is 2 games, and `games_per_opening` games (whole
/// rounds) share a line; in order from `start`, or in a shuffled order
/// (`seed`, else the run's), as fastchess's `-openings order=random
/// -srand`.
fn opening(
    start: &Value,
    settings: &Settings,
    books: &mut Books,
) -> Result<book::Opening, Refused> {
    let path = settings.openings.as_str();
    let size = books.lines(path).map_err(Refused::game)?.len();
    let round = start["opening"].as_u64().unwrap_or(1).max(1);
    let group = (round - 1) / (settings.games_per_opening / 2);
    let mut at = ((settings.start - 1 + group) % size as u64) as usize;
    if settings.random {
        let seed = settings
            .seed
            .unwrap_or_else(|| start["seed"].as_u64().unwrap_or(0));
        at = books.shuffled(path, size, seed, at);
    }
    let (line, epd) = books.lines(path).map_err(Refused::game)?[at].clone();
    let (position, name) = book::parse_epd(&epd).map_err(|e| {
        let shown: String = epd.chars().take(100).collect();
        Refused::game(format!(
            "openings {path}, line {line}: not an EPD position ({e}): {shown}"
        ))
    })?;
    Ok(book::Opening {
        line,
        position,
        name,
    })
}

/// The engine processes this judge has set up (`uci` and their options),
/// by their number in `start` (`process`): a kept process gets only
/// `ucinewgame` in its next games. The last few are remembered; a game
/// thread keeps at most four engines.
#[derive(Default)]
struct SetUp {
    known: std::collections::VecDeque<(u64, options::Ids)>,
}

impl SetUp {
    const MOST: usize = 16;

    fn ids(&self, process: u64) -> Option<&options::Ids> {
        self.known
            .iter()
            .find(|(p, _)| *p == process)
            .map(|(_, ids)| ids)
    }

    fn remember(&mut self, process: u64, ids: options::Ids) {
        self.known.retain(|(p, _)| *p != process);
        if self.known.len() == Self::MOST {
            self.known.pop_front();
        }
        self.known.push_back((process, ids));
    }
}

/// Runs the judge on standard input and output until the harness closes
/// its messages (status 0), or a message it cannot take (status 1, the
/// reason on standard error).
pub fn main() -> ! {
    let mut harness = Harness::new(Stdio {
        input: std::io::stdin().lock(),
        output: std::io::stdout().lock(),
    });
    // Reading standard input blocks: the judge never waits as a future.
    let ran = run(&mut harness, Books::default())
        .now_or_never()
        .unwrap_or_else(|| Err("internal: the judge waited on blocking input".to_owned()));
    let code = match ran {
        Ok(()) => 0,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "chess judge: {message}");
            1
        }
    };
    std::process::exit(code)
}

/// The judge run inside the referee, on the game thread (see
/// [`InsideJudge`]): the game file's relative paths are read from `dir`,
/// the game's folder, where the judge process would run. Its failure is
/// the message the process writes on standard error.
pub fn inside(dir: PathBuf) -> InsideJudge {
    InsideJudge::start(move |end| async move {
        run(&mut Harness::new(end), Books::in_dir(dir))
            .await
            .map_err(|message| format!("chess judge: {message}"))
    })
}

/// Plays game after game: each `start` is a game, or a refusal.
async fn run<W: Wire>(harness: &mut Harness<W>, mut books: Books) -> Result<(), String> {
    let mut engines = SetUp::default();
    loop {
        let start: Value = match harness.hear().await {
            Ok(Some(start)) => start,
            Ok(None) | Err(Stop::Closed) => return Ok(()),
            Err(Stop::Broken(e)) => return Err(e),
            Err(Stop::Refused(r)) => return Err(r.message),
        };
        if start["version"] != 2 {
            return Err("needs judge protocol 2 (protocol = 2 in game.toml)".to_owned());
        }
        let empty = serde_json::Map::new();
        let given = start["options"].as_object().unwrap_or(&empty);
        let table = Settings::read(given)
            .and_then(|settings| Table::new(&start, settings, &mut books))
            .map_err(Stop::Refused);
        let played = match table {
            Ok(mut table) => table.play(harness, &mut engines).await,
            Err(stop) => Err(stop),
        };
        match played {
            Ok(()) => {}
            Err(Stop::Refused(refused)) => {
                let mut message = json!({"type": "refuse", "message": refused.message});
                if let Some(seat) = refused.seat {
                    message["player"] = json!(seat);
                }
                harness
                    .say(&message)
                    .map_err(|_| "cannot write to the harness")?;
            }
            Err(Stop::Closed) => return Ok(()),
            Err(Stop::Broken(e)) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(lines: &[&str]) -> Option<Score> {
        engine_score(&lines.iter().map(|l| l.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn scores_are_read_as_fastchess_reads_them() {
        assert_eq!(
            score(&["info depth 1 score cp 22", "info depth 2 score cp 35"]),
            Some(Score::Cp(35))
        );
        assert_eq!(
            score(&["info score cp 10", "info score cp 50 lowerbound"]),
            Some(Score::Cp(10))
        );
        assert_eq!(score(&["info score cp 50 upperbound"]), Some(Score::Cp(50)));
        assert_eq!(
            score(&["info multipv 2 score cp 9", "info multipv 1 score mate -3"]),
            Some(Score::Mate(-3))
        );
        assert_eq!(
            score(&["info multipv 1 score mate -3", "info multipv 2 score cp 9"]),
            Some(Score::Mate(-3))
        );
        assert_eq!(
            score(&[
                "info string score cp 5",
                "info score cp \u{b2}",
                "info score",
                "bestmove"
            ]),
            None
        );
        let digits = format!("info score cp -{}", "9".repeat(5000));
        assert_eq!(score(&[&digits]), Some(Score::Cp(-LARGEST)));
        assert_eq!(Score::shown(Some(Score::Cp(-2000))), "-20.00 ");
        assert_eq!(Score::shown(Some(Score::Cp(0))), "+0.00 ");
        assert_eq!(Score::shown(Some(Score::Mate(0))), "-M0 ");
    }

    #[test]
    fn illegal_move_text_is_cut_and_cleaned() {
        assert_eq!(plain("a1a1"), "a1a1");
        assert_eq!(plain("{ 1-0 }\u{1b}"), "? 1-0 ??");
        assert_eq!(plain(&"x".repeat(30)), format!("{}...", "x".repeat(20)));
        assert!(is_uci_move("e7e8q") && is_uci_move("0000") && is_uci_move("a1a1"));
        assert!(!is_uci_move("E2E4") && !is_uci_move("e7e8k") && !is_uci_move("e2e4\u{b2}"));
    }
}
