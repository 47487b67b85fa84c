//! The messages between the harness and a judge: JSON Lines, one object
//! per line, tagged by `type`. See `docs/judge-protocol.md`.

use serde::{Deserialize, Serialize};

use crate::outcome::Verdict;

/// The protocol's version, sent in `start`.
pub const VERSION: u32 = 1;

/// One player as `start` describes it.
#[derive(Debug, Serialize)]
pub struct StartPlayer {
    pub seat: usize,
    /// The program and its arguments, as given.
    pub name: String,
    /// Present when the player could not be started: it is out from the
    /// beginning.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub failed: Option<Failure>,
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
        players: Vec<StartPlayer>,
        options: &'a serde_json::Value,
    },
    Replies {
        replies: Vec<Answer>,
    },
}

/// One player's answer to an `ask`: its reply, or its failure.
#[derive(Debug, Serialize)]
pub struct Answer {
    pub player: usize,
    /// The reply: a line (without its line ending), or one byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
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
    Ask { players: Vec<usize> },
    /// Take a player out of the game: it is killed.
    Eliminate {
        player: usize,
        #[serde(default = "incorrect")]
        status: Eliminated,
        message: String,
    },
    /// A replay frame, kept in the record.
    Frame { data: serde_json::Value },
    /// A debug line for the organiser.
    Log { text: String },
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
        assert!(matches!(m, FromJudge::Ask { players } if players == [0, 1]));
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
    }

    #[test]
    fn answers_are_flat() {
        let a = Answer {
            player: 1,
            text: None,
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
}
