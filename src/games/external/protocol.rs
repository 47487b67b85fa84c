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

#[cfg(test)]
mod tests {
    use super::*;

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
