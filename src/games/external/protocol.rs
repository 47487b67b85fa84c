//! The messages between the harness and a judge: JSON Lines, one object
//! per line, tagged by `type`. See `docs/judge-protocol.md`.

use serde::{Deserialize, Serialize};

use crate::outcome::{Phase, Verdict};

/// The protocol versions a game file may ask for (`protocol = 2`); a
/// file that says nothing speaks version 1, so judges written for it keep
/// working unchanged.
pub const VERSIONS: [u32; 2] = [1, 2];

/// One player as `start` describes it.
#[derive(Debug, Serialize)]
pub struct StartPlayer {
    pub seat: usize,
    /// Version 1: the program and its arguments, joined. Version 2: the
    /// entrant's name (a tournament's, or the one `play` was given).
    pub name: String,
    /// Version 2: who plays the seat, and under which limits.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub entrant: Option<StartEntrant>,
    /// Present when the player could not be started: it is out from the
    /// beginning.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub failed: Option<Failure>,
}

/// What version 2 tells a judge about a seat's player: the program, the
/// entrant's options, and the limits it plays under, so that the judge
/// never has to repeat them (the referee's are the only ones).
#[derive(Debug, Serialize)]
pub struct StartEntrant {
    /// The entrant's number in the run, from 0 (its place among a
    /// tournament file's entrants or `play`'s BOTs): who it is whatever
    /// seat the rotation gives it (a judge's `swap = false` needs it).
    pub entrant: usize,
    /// Which process plays the seat: numbered from 1 on the game's
    /// thread, the same number in every game a kept process plays
    /// (`keep_players`), a new one for a fresh process. A judge may skip
    /// what it told the process in an earlier game (a UCI engine's `uci`
    /// and options).
    pub process: u64,
    pub program: Vec<String>,
    pub options: serde_json::Value,
    pub timeout_micros: u64,
    pub startup_micros: u64,
    pub time_control: Option<ClockSpec>,
}

/// A time control in the protocol's unit, microseconds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ClockSpec {
    pub base_micros: u64,
    pub increment_micros: u64,
}

/// Which game of its round a game is (version 2): the round's games share
/// an opening, and seats rotate over them (`docs/judge-protocol.md`, "One
/// pairing rule").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Round {
    /// The round, from 1: the opening a judge should play.
    pub opening: u64,
    /// The game within the round, from 0: seat `s` holds the round's
    /// entrant `(s + rotation) mod K`.
    pub rotation: u64,
}

impl Round {
    /// Game `index` (from 1) of a run whose rounds have `games` games.
    pub fn of(index: u64, games: usize) -> Round {
        let k = games.max(1) as u64;
        let i = index.max(1) - 1;
        Round {
            opening: i / k + 1,
            rotation: i % k,
        }
    }
}

/// A player's failure, in the taxonomy of `docs/results.md`.
#[derive(Clone, Debug, Serialize)]
pub struct Failure {
    #[serde(flatten)]
    pub verdict: Verdict,
    pub message: String,
}

/// Harness to judge.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToJudge<'a> {
    Start {
        version: u32,
        game: &'a str,
        seed: u64,
        index: u64,
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        round: Option<Round>,
        players: Vec<StartPlayer>,
        options: &'a serde_json::Value,
    },
    Replies {
        replies: Vec<Answer>,
        /// Version 2, with a time control: each seat's time left on its
        /// clock, microseconds (`None` for a seat without a clock).
        #[serde(skip_serializing_if = "Option::is_none")]
        clocks: Option<Vec<Option<u64>>>,
    },
}

/// One player's answer to an `ask`: its reply, or its failure.
#[derive(Debug, Serialize)]
pub struct Answer {
    pub player: usize,
    /// The reply: a line (without its line ending), or one byte; with
    /// `until`, the line that ended the move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// With `until`: the lines before the one that ended the move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<String>>,
    /// With `until`: lines read but not passed on, past [`MAX_PASSED_LINES`]
    /// or [`MAX_PASSED_BYTES`].
    #[serde(skip_serializing_if = "is_zero")]
    pub lines_dropped: u64,
    /// The time it took (for a failure: the time waited), microseconds.
    pub micros: u64,
    /// The player was out of the game before it was asked (it failed, or
    /// the judge eliminated it, even as `ok`): not asked, answered with
    /// how it went out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub out: bool,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub failed: Option<Failure>,
}

/// Judge to harness.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FromJudge {
    /// Write `text` (verbatim: include the `\n`) to each player of `to`.
    Send { to: Vec<usize>, text: String },
    /// Read one move from each player of `players`, all at once.
    Ask {
        players: Vec<usize>,
        /// Version 2: a move is every line up to one whose first word is
        /// one of these.
        #[serde(default)]
        until: Option<Until>,
        /// Version 2: a set-up exchange, timed against the start-up
        /// allowance, not a move.
        #[serde(default)]
        setup: bool,
    },
    /// Take a player out of the game: it is killed.
    Eliminate {
        player: usize,
        #[serde(default = "incorrect")]
        status: Eliminated,
        /// With `status: timeout`: which limit (`clock` unless given).
        #[serde(default)]
        phase: Option<Phase>,
        message: String,
    },
    /// A replay frame, kept in the record.
    Frame { data: serde_json::Value },
    /// A debug line for the organiser.
    Log { text: String },
    /// The judge refuses the game's settings: an entrant's options (with
    /// `player`, its seat) or the game's options (without). The game is
    /// void and the run's settings are wrong.
    Refuse {
        #[serde(default)]
        player: Option<usize>,
        message: String,
    },
    /// The game is over.
    End {
        scores: Vec<f64>,
        #[serde(default)]
        ranking: Option<Vec<u32>>,
        #[serde(default)]
        summary: Option<serde_json::Value>,
    },
}

/// The statuses a judge may give an eliminated player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Eliminated {
    /// It broke the game's rules.
    Incorrect,
    /// It is out of the game by the rules (it lost), not at fault.
    Ok,
    /// It ran out of time by the judge's own measure (a forfeit the judge
    /// detects, say from the engine's own clock report).
    Timeout,
}

/// The words that end a move of several lines (`"until": "bestmove"` or
/// `["bestmove", "resign"]`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Until {
    One(String),
    Any(Vec<String>),
}

impl Until {
    /// The words, checked: at least one, none empty or with whitespace.
    pub fn words(&self) -> Result<&[String], String> {
        let words = match self {
            Until::One(word) => std::slice::from_ref(word),
            Until::Any(words) => words.as_slice(),
        };
        if words.is_empty() {
            return Err("`until` names no word".to_owned());
        }
        if let Some(bad) = words
            .iter()
            .find(|w| w.is_empty() || w.contains(char::is_whitespace))
        {
            return Err(format!(
                "`until` words are single words without spaces, not {bad:?}"
            ));
        }
        Ok(words)
    }
}

/// Whether `line` ends a move asked `until` one of `words`: its first word
/// (up to a space or tab) is one of them. The word starts the line: `" END"`
/// is not `END`, so that an indented line of a move's text never ends it.
pub fn ends_move(line: &str, words: &[String]) -> bool {
    let first = line.split([' ', '\t']).next().unwrap_or_default();
    words.iter().any(|w| w == first)
}

/// Most lines before the last of a multi-line move passed to the judge;
/// later ones are counted, not passed.
pub const MAX_PASSED_LINES: usize = 10_000;
/// Most bytes of such lines passed to the judge per reply.
pub const MAX_PASSED_BYTES: usize = 1 << 20;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn incorrect() -> Eliminated {
    Eliminated::Incorrect
}

/// Ranks from scores: higher is better, equal scores share a rank, and the
/// next rank skips as many ("1224").
pub fn ranks_from_scores(scores: &[f64]) -> Vec<u32> {
    scores
        .iter()
        .map(|s| 1 + scores.iter().filter(|other| *other > s).count() as u32)
        .collect()
}

/// The colour names a frame's `colors` may give besides `#rgb` and
/// `#rrggbb`: CSS's basic colour keywords. The replay viewer
/// (`src/replay/assets/viewer.js`) draws these and ignores anything else
/// (a test in `replay` keeps the two lists equal).
pub const COLOUR_NAMES: [&str; 17] = [
    "aqua", "black", "blue", "fuchsia", "gray", "green", "lime", "maroon", "navy", "olive",
    "orange", "purple", "red", "silver", "teal", "white", "yellow",
];

/// Whether `value` is a colour a frame may give: `#rgb` or `#rrggbb` (hex
/// digits in either case), or one of [`COLOUR_NAMES`] in any case.
pub fn is_frame_colour(value: &str) -> bool {
    match value.strip_prefix('#') {
        Some(hex) => matches!(hex.len(), 3 | 6) && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => COLOUR_NAMES
            .iter()
            .any(|name| name.eq_ignore_ascii_case(value)),
    }
}

/// Checks the `colors` of a replay frame (a `frame` message's `data`): a
/// frame that is not an object, or has no `colors` (or `null`), passes;
/// else `colors` must be an object whose every value is a colour (see
/// [`is_frame_colour`]). Anything else is the judge's fault: in a page, a
/// value such as `url(http://...)` would make the browser fetch it. The
/// error names the key and the value.
pub fn check_frame_colours(frame: &serde_json::Value) -> Result<(), String> {
    let colours = match frame.get("colors") {
        None | Some(serde_json::Value::Null) => return Ok(()),
        Some(serde_json::Value::Object(colours)) => colours,
        Some(other) => {
            return Err(format!(
                "a frame's `colors` must be an object of colours, not {other}"
            ));
        }
    };
    for (key, value) in colours {
        if !value.as_str().is_some_and(is_frame_colour) {
            return Err(format!(
                "a frame's `colors` gives {key:?} the colour {value}, which is not #rgb, \
                 #rrggbb or one of {}",
                COLOUR_NAMES.join(", ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frame_colours_are_colour_values_only() {
        for frame in [
            json!({"grid": ["1."]}),
            json!({"grid": ["1."], "colors": null}),
            json!({"colors": {"1": "#3cb44b", "a": "#ABC", "b": "Red", "c": "teal"}}),
            json!(["not", "an", "object"]),
            json!("text"),
        ] {
            assert_eq!(check_frame_colours(&frame), Ok(()), "{frame}");
        }
        for (frame, names) in [
            (
                json!({"colors": {"1": "url(http://127.0.0.1:9/x)"}}),
                ["\"1\"", "url(http"],
            ),
            (json!({"colors": {"A": "#12345"}}), ["\"A\"", "#12345"]),
            (json!({"colors": {"A": "#ggg"}}), ["\"A\"", "#ggg"]),
            (
                json!({"colors": {"x": "rgb(1,2,3)"}}),
                ["\"x\"", "rgb(1,2,3)"],
            ),
            (
                json!({"colors": {"x": "red;background:url(x)"}}),
                ["\"x\"", "red;"],
            ),
            (json!({"colors": {"x": 7}}), ["\"x\"", "7"]),
            (json!({"colors": {"x": ""}}), ["\"x\"", "\"\""]),
            (json!({"colors": "red"}), ["object", "\"red\""]),
        ] {
            let error = check_frame_colours(&frame).unwrap_err();
            for name in names {
                assert!(error.contains(name), "{frame}: {error}");
            }
        }
    }

    #[test]
    fn judge_messages_parse_exactly() {
        let m: FromJudge = serde_json::from_str(r#"{"type":"ask","players":[0,1]}"#).unwrap();
        assert!(
            matches!(m, FromJudge::Ask { players, until: None, setup: false } if players == [0, 1])
        );
        let m: FromJudge =
            serde_json::from_str(r#"{"type":"ask","players":[0],"until":"bestmove","setup":true}"#)
                .unwrap();
        assert!(
            matches!(m, FromJudge::Ask { until: Some(Until::One(w)), setup: true, .. } if w == "bestmove")
        );
        let m: FromJudge = serde_json::from_str(
            r#"{"type":"eliminate","player":0,"status":"timeout","phase":"move","message":"x"}"#,
        )
        .unwrap();
        assert!(matches!(
            m,
            FromJudge::Eliminate {
                status: Eliminated::Timeout,
                phase: Some(Phase::Move),
                ..
            }
        ));
        let m: FromJudge =
            serde_json::from_str(r#"{"type":"eliminate","player":1,"message":"x"}"#).unwrap();
        assert!(matches!(
            m,
            FromJudge::Eliminate {
                status: Eliminated::Incorrect,
                ..
            }
        ));
        assert!(
            serde_json::from_str::<FromJudge>(r#"{"type":"ask","players":[0],"x":1}"#).is_err()
        );
        assert!(serde_json::from_str::<FromJudge>(r#"{"type":"dance"}"#).is_err());
        let m: FromJudge =
            serde_json::from_str(r#"{"type":"refuse","player":0,"message":"x"}"#).unwrap();
        assert!(matches!(
            m,
            FromJudge::Refuse {
                player: Some(0),
                ..
            }
        ));
        let m: FromJudge = serde_json::from_str(r#"{"type":"refuse","message":"x"}"#).unwrap();
        assert!(matches!(m, FromJudge::Refuse { player: None, .. }));
    }

    #[test]
    fn answers_are_flat() {
        let a = Answer {
            player: 1,
            text: None,
            lines: None,
            lines_dropped: 0,
            micros: 150_000,
            out: false,
            failed: Some(Failure {
                verdict: Verdict::timeout(crate::outcome::Phase::Move),
                message: "did not answer within 150ms".into(),
            }),
        };
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"player":1,"micros":150000,"status":"timeout","phase":"move","message":"did not answer within 150ms"}"#
        );
        assert_eq!(ranks_from_scores(&[3.0, 5.0, 3.0, 1.0]), vec![2, 1, 2, 4]);
    }

    #[test]
    fn a_move_ends_at_a_line_whose_first_word_is_named() {
        let words = ["bestmove".to_owned(), "resign".to_owned()];
        assert!(ends_move("bestmove e2e4 ponder e7e5", &words));
        assert!(ends_move("bestmove", &words));
        assert!(ends_move("resign", &words));
        assert!(!ends_move("info depth 3 pv e2e4", &words));
        assert!(!ends_move("bestmoves e2e4", &words));
        assert!(!ends_move("", &words));
        assert!(!ends_move(" bestmove e2e4", &words));
        assert!(!ends_move("\tresign", &words));
        assert!(ends_move("resign\t", &words));
        assert!(Until::Any(vec![]).words().is_err());
        assert!(Until::One("best move".into()).words().is_err());
        assert!(Until::One(String::new()).words().is_err());
    }

    #[test]
    fn rounds_share_an_opening_and_rotate_the_seats() {
        let rounds: Vec<(u64, u64)> = (1..=5)
            .map(|i| Round::of(i, 2))
            .map(|r| (r.opening, r.rotation))
            .collect();
        assert_eq!(rounds, [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0)]);
        assert_eq!(
            Round::of(4, 3),
            Round {
                opening: 2,
                rotation: 0
            }
        );
        assert_eq!(
            Round::of(7, 1),
            Round {
                opening: 7,
                rotation: 0
            }
        );
    }
}
