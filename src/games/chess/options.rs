//! The judge's options (the game's, `start.options`), the per-engine
//! search limits of an entrant's options, and an entrant's UCI options
//! checked against what its engine declares. Each mistake is refused with
//! the words of `games/chess/judge.py`, naming the closest known option.

use serde_json::{Map, Value};

use super::py;

/// Settings the judge cannot play with: the game is refused (protocol
/// 2's `refuse`), for the entrant in `seat`, or for the game's options.
#[derive(Debug)]
pub struct Refused {
    pub message: String,
    pub seat: Option<usize>,
}

impl Refused {
    pub fn game(message: String) -> Refused {
        Refused {
            message,
            seat: None,
        }
    }
}

/// What a value must be.
#[derive(Clone, Copy)]
enum Check {
    Whole(u64),
    Boolean,
    Text,
    Order,
    EvenPairs,
}

impl Check {
    /// `None` when `value` will do, else what it must be.
    fn wrong(self, value: &Value) -> Option<String> {
        let ok = match self {
            Check::Whole(low) => whole(value).is_some_and(|n| n >= low as i128),
            Check::Boolean => value.is_boolean(),
            Check::Text => value.is_string(),
            Check::Order => matches!(value.as_str(), Some("sequential" | "random")),
            Check::EvenPairs => whole(value).is_some_and(|n| n >= 2 && n % 2 == 0),
        };
        (!ok).then(|| match self {
            Check::Whole(low) => format!("a whole number, at least {low}"),
            Check::Boolean => "true or false".to_owned(),
            Check::Text => "text".to_owned(),
            Check::Order => "\"sequential\" or \"random\"".to_owned(),
            Check::EvenPairs => {
                "an even whole number, at least 2 (games come in colour-swapped pairs)".to_owned()
            }
        })
    }
}

/// A JSON integer (not a float, not a boolean).
fn whole(value: &Value) -> Option<i128> {
    match value {
        Value::Number(n) if !n.is_f64() => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        _ => None,
    }
}

/// The judge's options, in the order the refusal lists them, with what
/// each must be. 0 turns an adjudication (or a limit of the search) off.
const OPTIONS: [(&str, Check); 17] = [
    ("openings", Check::Text),
    ("order", Check::Order),
    ("seed", Check::Whole(0)),
    ("start", Check::Whole(1)),
    ("games_per_opening", Check::EvenPairs),
    ("swap", Check::Boolean),
    ("nodes", Check::Whole(0)),
    ("depth", Check::Whole(0)),
    ("movetime", Check::Whole(1)),
    ("max_moves", Check::Whole(0)),
    ("max_plies", Check::Whole(0)),
    ("draw_movenumber", Check::Whole(0)),
    ("draw_movecount", Check::Whole(0)),
    ("draw_score", Check::Whole(0)),
    ("resign_movecount", Check::Whole(0)),
    ("resign_score", Check::Whole(0)),
    ("resign_twosided", Check::Boolean),
];

/// The names before fastchess's, still read: old name, new name, divisor.
const ALIASES: [(&str, &str, u64); 5] = [
    ("draw_after", "draw_movenumber", 2),
    ("draw_plies", "draw_movecount", 2),
    ("draw_cp", "draw_score", 1),
    ("resign_cp", "resign_score", 1),
    ("resign_moves", "resign_movecount", 1),
];

/// An entrant's options that are the judge's, never sent to its engine:
/// its own search limits, over the game's (fastchess's per-engine `nodes=`).
pub const SEARCH: [(&str, u64); 3] = [("nodes", 0), ("depth", 0), ("movetime", 1)];

/// The judge's options, the defaults filled in.
#[derive(Clone, Debug)]
pub struct Settings {
    pub openings: String,
    pub random: bool,
    /// Random order's seed; `None`: the run's.
    pub seed: Option<u64>,
    pub start: u64,
    pub games_per_opening: u64,
    pub swap: bool,
    pub search: Search,
    pub max_moves: u64,
    /// Plies instead of max_moves' moves, when given.
    pub max_plies: Option<u64>,
    pub draw_movenumber: u64,
    pub draw_movecount: u64,
    pub draw_score: u64,
    pub resign_movecount: u64,
    pub resign_score: u64,
    pub resign_twosided: bool,
}

/// A seat's search limits: 0 is none. A seat without a clock needs one
/// (see [`unlimited`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Search {
    pub nodes: u64,
    pub depth: u64,
    pub movetime: u64,
}

impl Settings {
    /// The game's options read, or refused: a key the judge does not know
    /// (naming the closest), a value it cannot take, an old name given
    /// with its new one.
    pub fn read(given: &Map<String, Value>) -> Result<Settings, Refused> {
        let mut given: Vec<(String, Value)> =
            given.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        for (old, new, divisor) in ALIASES {
            let Some(at) = given.iter().position(|(k, _)| k == old) else {
                continue;
            };
            if given.iter().any(|(k, _)| k == new) {
                return Err(Refused::game(format!(
                    "game options {old} and {new} are one setting: give {new}"
                )));
            }
            let (_, value) = given.remove(at);
            if let Some(wrong) = Check::Whole(0).wrong(&value) {
                return Err(Refused::game(format!(
                    "game option {old} = {}: must be {wrong}",
                    py::json(&value)
                )));
            }
            let n = whole(&value).expect("checked") as u64;
            given.push((new.to_owned(), Value::from(n.div_ceil(divisor))));
        }
        for (key, value) in &given {
            let Some((_, check)) = OPTIONS.iter().find(|(name, _)| name == key) else {
                let names = OPTIONS.map(|(name, _)| name);
                return Err(Refused::game(format!(
                    "game option {} is not an option of the chess judge (the closest is {}); \
                     its options: {}",
                    py::json(&Value::String(key.clone())),
                    py::closest(key, names).unwrap_or("None"),
                    names.join(", ")
                )));
            };
            if let Some(wrong) = check.wrong(value) {
                return Err(Refused::game(format!(
                    "game option {key} = {}: must be {wrong}",
                    py::json(value)
                )));
            }
        }
        let get = |key: &str| given.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let number =
            |key: &str, default: u64| get(key).and_then(whole).map_or(default, |n| n as u64);
        let flag = |key: &str, default: bool| get(key).and_then(Value::as_bool).unwrap_or(default);
        Ok(Settings {
            openings: get("openings")
                .and_then(Value::as_str)
                .unwrap_or("openings.epd")
                .to_owned(),
            random: get("order").and_then(Value::as_str) == Some("random"),
            seed: get("seed").and_then(whole).map(|n| n as u64),
            start: number("start", 1),
            games_per_opening: number("games_per_opening", 2),
            swap: flag("swap", true),
            search: Search {
                nodes: number("nodes", 0),
                depth: number("depth", 0),
                movetime: number("movetime", 0),
            },
            max_moves: number("max_moves", 200),
            max_plies: get("max_plies").and_then(whole).map(|n| n as u64),
            draw_movenumber: number("draw_movenumber", 40),
            draw_movecount: number("draw_movecount", 4),
            draw_score: number("draw_score", 10),
            resign_movecount: number("resign_movecount", 4),
            resign_score: number("resign_score", 1000),
            resign_twosided: flag("resign_twosided", false),
        })
    }
}

/// A seat's search: the game's `nodes`, `depth` and `movetime`, each
/// replaced by its entrant's option of that name (checked here).
pub fn search(game: Search, seat: usize, player: &Value) -> Result<Search, Refused> {
    let mut own = game;
    for (key, low) in SEARCH {
        let Some(value) = player["options"].get(key) else {
            continue;
        };
        if let Some(wrong) = Check::Whole(low).wrong(value) {
            return Err(Refused {
                message: format!(
                    "entrant {}: option {key} = {}: must be {wrong}",
                    py::json(&player["name"]),
                    py::json(value)
                ),
                seat: Some(seat),
            });
        }
        let n = whole(value).expect("checked") as u64;
        match key {
            "nodes" => own.nodes = n,
            "depth" => own.depth = n,
            _ => own.movetime = n,
        }
    }
    Ok(own)
}

/// The refusal of a seat that has neither a clock nor a search limit:
/// its engine, sent `go` with nothing to stop it, would think for ever.
pub fn unlimited(search: Search, clock: bool, player: &Value) -> Result<(), Refused> {
    if clock || search.nodes > 0 || search.depth > 0 || search.movetime > 0 {
        return Ok(());
    }
    Err(Refused::game(format!(
        "entrant {} has no clock (time_control \"none\") and no search limit: \
         give nodes, depth or movetime (a game option, or the entrant's own)",
        py::json(&player["name"])
    )))
}

/// An engine's ids: `("name", ...)`, `("author", ...)`.
pub type Ids = Vec<(&'static str, String)>;

/// The engine's `id name` and `id author` from its `uci` reply, the
/// first of each.
pub fn engine_id(lines: &[String]) -> Ids {
    let mut ids: Ids = Vec::new();
    for line in lines {
        let words = py::split3(line);
        if let ["id", kind @ ("name" | "author"), rest] = words[..] {
            let kind = if kind == "name" { "name" } else { "author" };
            if !ids.iter().any(|(k, _)| *k == kind) {
                ids.push((kind, py::strip(rest).to_owned()));
            }
        }
    }
    ids
}

/// An option an engine declares: its name as it spells it, its type
/// (lower case), and its `default`, `min`, `max` and `var`s.
#[derive(Clone, Debug, Default)]
struct Declared {
    name: String,
    kind: String,
    min: Option<String>,
    max: Option<String>,
    vars: Vec<String>,
}

/// The options an engine declares in its `uci` reply, the first of each
/// name (compared without case, as UCI says), in the order declared.
fn declared(lines: &[String]) -> Vec<(String, Declared)> {
    static LINE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static FIELDS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    // Python's \s: Unicode's whitespace and U+001C-U+001F.
    let line_re = LINE.get_or_init(|| {
        regex::Regex::new(
            r"^option[\s\x1c-\x1f]+name[\s\x1c-\x1f]+(.+?)[\s\x1c-\x1f]+type[\s\x1c-\x1f]+([^\s\x1c-\x1f]+)(.*)\z",
        )
        .expect("valid")
    });
    let fields_re = FIELDS.get_or_init(|| {
        regex::Regex::new(r"(?:^|[\s\x1c-\x1f]+)(default|min|max|var)(?:[\s\x1c-\x1f]+|\z)")
            .expect("valid")
    });
    let mut found: Vec<(String, Declared)> = Vec::new();
    for line in lines {
        let Some(caps) = line_re.captures(py::strip(line)) else {
            continue;
        };
        let (name, kind, rest) = (&caps[1], &caps[2], caps.get(3).map_or("", |m| m.as_str()));
        let mut option = Declared {
            name: name.to_owned(),
            kind: kind.to_lowercase(),
            ..Declared::default()
        };
        let matches: Vec<regex::Captures> = fields_re.captures_iter(rest).collect();
        for (i, m) in matches.iter().enumerate() {
            let start = m.get(0).expect("the match").end();
            let end = matches
                .get(i + 1)
                .map_or(rest.len(), |next| next.get(0).expect("the match").start());
            let value = py::strip(&rest[start..end]).to_owned();
            match &m[1] {
                "var" => option.vars.push(value),
                "min" => option.min = Some(value),
                "max" => option.max = Some(value),
                _ => {}
            }
        }
        let key = name.to_lowercase();
        if !found.iter().any(|(k, _)| *k == key) {
            found.push((key, option));
        }
    }
    found
}

/// A whole number in ASCII digits, as UCI's `min` and `max` and a spin's
/// value are read (`-?[0-9]+`), kept as its digits: any length compares.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Integer {
    negative: bool,
    digits: String,
}

impl Integer {
    fn parse(text: &str) -> Option<Integer> {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = digits.trim_start_matches('0');
        let digits = if digits.is_empty() { "0" } else { digits };
        Some(Integer {
            negative: negative && digits != "0",
            digits: digits.to_owned(),
        })
    }

    fn text(&self) -> String {
        format!("{}{}", if self.negative { "-" } else { "" }, self.digits)
    }

    fn less(&self, other: &Integer) -> bool {
        use std::cmp::Ordering;
        let magnitude = self
            .digits
            .len()
            .cmp(&other.digits.len())
            .then_with(|| self.digits.cmp(&other.digits));
        match (self.negative, other.negative) {
            (true, false) => true,
            (false, true) => false,
            (false, false) => magnitude == Ordering::Less,
            (true, true) => magnitude == Ordering::Greater,
        }
    }
}

/// UCI's text of a value: `true` and `false` for booleans, else Python's
/// `str()` of it.
fn uci_value(value: &Value) -> String {
    match value {
        Value::Bool(b) => b.to_string(),
        other => py::str_of(other),
    }
}

/// `setoption`'s value for a declared option (`None`: a button, pressed),
/// or what the value must be.
fn option_text(option: &Declared, value: &Value) -> Result<Option<String>, String> {
    match option.kind.as_str() {
        "spin" => {
            let number = match value {
                Value::Number(n) if !n.is_f64() => Integer::parse(&n.to_string()),
                Value::String(s) => Integer::parse(py::strip(s)),
                _ => None,
            };
            let bound = |b: &Option<String>| b.as_deref().and_then(Integer::parse);
            let (low, high) = (bound(&option.min), bound(&option.max));
            let shown = |b: &Option<Integer>| b.as_ref().map_or("None".to_owned(), Integer::text);
            match number {
                Some(n)
                    if !low.as_ref().is_some_and(|l| n.less(l))
                        && !high.as_ref().is_some_and(|h| h.less(&n)) =>
                {
                    Ok(Some(n.text()))
                }
                _ => Err(format!(
                    "a whole number from {} to {}",
                    shown(&low),
                    shown(&high)
                )),
            }
        }
        "check" => {
            let text = py::str_of(value).to_lowercase();
            if value.is_boolean() || text == "true" || text == "false" {
                Ok(Some(uci_value(value).to_lowercase()))
            } else {
                Err("true or false".to_owned())
            }
        }
        "combo" => {
            let wanted = uci_value(value).to_lowercase();
            match option.vars.iter().find(|v| v.to_lowercase() == wanted) {
                Some(chosen) => Ok(Some(chosen.clone())),
                None => {
                    let vars: Vec<String> = option
                        .vars
                        .iter()
                        .map(|v| py::json(&Value::String(v.clone())))
                        .collect();
                    Err(format!("one of {}", vars.join(", ")))
                }
            }
        }
        "button" => match value {
            Value::Bool(true) => Ok(None),
            _ => Err("true (a button is pressed or not given)".to_owned()),
        },
        _ => Ok(Some(uci_value(value))),
    }
}

/// The `setoption` lines for an entrant's options, in its engine's own
/// spelling, and its engine's ids; refused: an option the engine does not
/// declare, or a value it cannot take.
pub fn setoptions(player: &Value, seat: usize, lines: &[String]) -> Result<(String, Ids), Refused> {
    let ids = engine_id(lines);
    let declared = declared(lines);
    let engine = ids
        .iter()
        .find(|(k, _)| *k == "name")
        .map_or("its engine".to_owned(), |(_, v)| v.clone());
    let refuse = |message: String| Refused {
        message,
        seat: Some(seat),
    };
    let mut out = String::new();
    let empty = Map::new();
    let options = player["options"].as_object().unwrap_or(&empty);
    for (key, value) in options {
        if SEARCH.iter().any(|(k, _)| k == key) {
            continue;
        }
        let entrant = format!(
            "entrant {}: option {}",
            py::json(&player["name"]),
            py::json(&Value::String(key.clone()))
        );
        let Some((_, option)) = declared.iter().find(|(k, _)| *k == key.to_lowercase()) else {
            let near = py::closest(key, declared.iter().map(|(_, o)| o.name.as_str()));
            let hint = match near {
                Some(near) => format!("the closest is {}", py::json(&Value::String(near.into()))),
                None => "it declares no options".to_owned(),
            };
            return Err(refuse(format!(
                "{entrant} is not an option of {engine} (its id name); {hint}"
            )));
        };
        match option_text(option, value) {
            Ok(Some(sent)) => {
                out.push_str(&format!("setoption name {} value {sent}\n", option.name))
            }
            Ok(None) => out.push_str(&format!("setoption name {}\n", option.name)),
            Err(wrong) => {
                return Err(refuse(format!(
                    "{entrant} = {}: {engine} takes {wrong}",
                    py::json(value)
                )));
            }
        }
    }
    Ok((out, ids))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(given: Value) -> Result<Settings, String> {
        Settings::read(given.as_object().unwrap()).map_err(|r| r.message)
    }

    #[test]
    fn the_games_options_are_read_or_refused_as_judge_py_does() {
        let s = settings(json!({"draw_after": 81, "draw_cp": 5, "nodes": 5000})).unwrap();
        assert_eq!(
            (s.draw_movenumber, s.draw_score, s.search.nodes),
            (41, 5, 5000)
        );
        assert_eq!((s.search.movetime, s.max_moves, s.swap), (0, 200, true));
        let e = settings(json!({"nodez": 5})).unwrap_err();
        assert!(
            e.starts_with(
                "game option \"nodez\" is not an option of the chess judge (the closest is nodes); \
             its options: openings, order, seed, start, games_per_opening, swap, nodes, depth, \
             movetime, max_moves, max_plies, draw_movenumber,"
            ),
            "{e}"
        );
        for (given, want) in [
            (
                json!({"nodes": "many"}),
                "game option nodes = \"many\": must be a whole number, at least 0",
            ),
            (
                json!({"games_per_opening": 3}),
                "game option games_per_opening = 3: must be an even whole number, at least 2 (games come in colour-swapped pairs)",
            ),
            (
                json!({"order": "shuffled"}),
                "game option order = \"shuffled\": must be \"sequential\" or \"random\"",
            ),
            (
                json!({"swap": 1}),
                "game option swap = 1: must be true or false",
            ),
            (
                json!({"draw_cp": 5, "draw_score": 4}),
                "game options draw_cp and draw_score are one setting: give draw_score",
            ),
            (
                json!({"draw_plies": -1}),
                "game option draw_plies = -1: must be a whole number, at least 0",
            ),
        ] {
            assert_eq!(settings(given).unwrap_err(), want);
        }
    }

    const STOCKFISH: [&str; 5] = [
        "id name Stockfish 15.1",
        "option name Hash type spin default 16 min 1 max 33554432",
        "option name Ponder type check default false",
        "option name Skill Level type spin default 20 min 0 max 20",
        "option name Clear Hash type button",
    ];

    fn set(options: Value) -> Result<String, String> {
        let lines: Vec<String> = STOCKFISH.iter().map(|l| l.to_string()).collect();
        let player = json!({"name": "weak", "options": options});
        setoptions(&player, 0, &lines)
            .map(|(s, _)| s)
            .map_err(|r| r.message)
    }

    #[test]
    fn an_entrants_options_are_checked_against_its_engines() {
        assert_eq!(
            set(json!({"SkillLevel": 0})).unwrap_err(),
            "entrant \"weak\": option \"SkillLevel\" is not an option of Stockfish 15.1 \
             (its id name); the closest is \"Skill Level\""
        );
        assert_eq!(
            set(json!({"Skill Level": 30})).unwrap_err(),
            "entrant \"weak\": option \"Skill Level\" = 30: Stockfish 15.1 takes a whole number from 0 to 20"
        );
        assert_eq!(
            set(json!({"Ponder": "yes"})).unwrap_err(),
            "entrant \"weak\": option \"Ponder\" = \"yes\": Stockfish 15.1 takes true or false"
        );
        assert_eq!(
            set(json!({"skill level": "07", "HASH": 64, "Ponder": false, "Clear Hash": true, "nodes": 5})).unwrap(),
            "setoption name Clear Hash\nsetoption name Hash value 64\n\
             setoption name Ponder value false\nsetoption name Skill Level value 7\n"
        );
    }
}
