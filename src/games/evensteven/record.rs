//! The dealer's record of one game (`docs/results.md`), and its writer.
//!
//! The record is written on every game, and a 13-card game is some forty
//! microseconds of round trips: serde's derive (two `flatten`ed fields,
//! every key escaped) took about three of them. [`GameRecord::write`]
//! writes the same bytes field by field (tested against the derive, which
//! stays the reference).

use std::time::SystemTime;

use serde::Serialize;

use super::cards::Card;
use crate::bot::Usage;
use crate::outcome::Verdict;
use crate::record::object::{self, Object};

/// One move as recorded.
#[derive(Clone, Debug, Serialize)]
pub struct Play {
    pub(super) dealt: Card,
    pub(super) played: Card,
    pub(super) micros: u64,
    /// The CPU time the player's process used for this move, where the
    /// platform tells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) cpu_micros: Option<u64>,
    /// The process's first reply (start-up included): not a move time.
    #[serde(skip)]
    pub(super) first: bool,
}

/// One game as recorded.
#[derive(Serialize)]
pub(super) struct GameRecord<'a> {
    pub game: &'static str,
    pub index: u64,
    pub line: u64,
    pub n: usize,
    pub seed: u32,
    pub hand: &'a [Card],
    pub deal: &'a [Card],
    pub winnable: bool,
    pub plays: &'a [Play],
    pub outcome: &'static str,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The player process's first reply, when it came in this game: its
    /// time includes the start-up and is kept out of move statistics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_micros: Option<u64>,
    /// What the player's processes used during the game.
    #[serde(flatten)]
    pub usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stderr_truncated: bool,
    pub player: &'a [String],
    #[serde(serialize_with = "crate::record::serialize_time")]
    pub time: SystemTime,
    pub referee: &'static str,
}

#[derive(Serialize)]
pub(super) struct ErrorRecord {
    pub kind: &'static str,
    #[serde(rename = "move")]
    pub move_number: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub after_move: bool,
    pub message: String,
}

impl GameRecord<'_> {
    /// The record as JSON, as its `Serialize` derive writes it.
    pub fn write(&self, out: &mut Vec<u8>) {
        let mut record = Object::new(out);
        record
            .name("game", self.game)
            .number("index", self.index)
            .number("line", self.line)
            .number("n", self.n as u64)
            .number("seed", u64::from(self.seed))
            .array("hand", self.hand, |out, card| {
                object::name(out, card.name())
            })
            .array("deal", self.deal, |out, card| {
                object::name(out, card.name())
            })
            .boolean("winnable", self.winnable)
            .array("plays", self.plays, |out, play| play.write(out))
            .name("outcome", self.outcome)
            .name("status", self.verdict.status.name());
        if let Some(phase) = self.verdict.phase {
            record.name("phase", phase.name());
        }
        if let Some(limit) = self.verdict.limit {
            record.name("limit", limit.name());
        }
        record
            .maybe_number("startup_micros", self.startup_micros)
            .maybe_number("peak_memory_bytes", self.usage.peak_memory)
            .maybe_number("cpu_micros", self.usage.cpu_micros());
        if let Some(note) = self.usage.containment() {
            record.text("containment", note);
        }
        if let Some(error) = &self.error {
            record.object("error", |fields| {
                fields
                    .name("kind", error.kind)
                    .number("move", error.move_number as u64);
                if error.after_move {
                    fields.boolean("after_move", true);
                }
                fields.text("message", &error.message);
            });
        }
        if let Some(stderr) = &self.stderr {
            record.text("stderr", stderr);
        }
        if self.stderr_truncated {
            record.boolean("stderr_truncated", true);
        }
        record
            .array("player", self.player, |out, word| {
                object::escaped(out, word)
            })
            .time("time", self.time)
            .name("referee", self.referee);
        record.end();
    }
}

impl Play {
    /// Written from fixed pieces: a game writes up to 13 of these.
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"dealt\":");
        object::name(out, self.dealt.name());
        out.extend_from_slice(b",\"played\":");
        object::name(out, self.played.name());
        out.extend_from_slice(b",\"micros\":");
        object::number(out, self.micros);
        if let Some(cpu) = self.cpu_micros {
            out.extend_from_slice(b",\"cpu_micros\":");
            object::number(out, cpu);
        }
        out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{LimitKind, Phase, Status};
    use proptest::prelude::*;
    use std::time::Duration;

    fn card(i: u8) -> Card {
        let suit = crate::games::evensteven::Suit::ALL[usize::from(i % 4)];
        Card::new(2 + i / 4 % 13, suit).expect("a card's value is 2 to 14")
    }

    fn verdict(which: u8) -> Verdict {
        match which % 4 {
            0 => Verdict::OK,
            1 => Verdict::timeout(Phase::ExitGrace),
            2 => Verdict::limit(LimitKind::FileSize),
            _ => Verdict::of(Status::ClosedOutput),
        }
    }

    proptest! {
        /// Whatever the game held, the writer gives the derive's bytes.
        #[test]
        fn the_writer_writes_what_the_derive_writes(
            hand in proptest::collection::vec(any::<u8>(), 0..14),
            plays in proptest::collection::vec(
                (any::<u8>(), any::<u8>(), any::<u64>(), any::<Option<u64>>(), any::<bool>()),
                0..14,
            ),
            numbers in (any::<u64>(), any::<u64>(), any::<usize>(), any::<u32>()),
            which in any::<u8>(),
            startup in any::<Option<u64>>(),
            peak in any::<Option<u64>>(),
            cpu in any::<Option<u32>>(),
            error in any::<Option<(usize, bool, String)>>(),
            stderr in any::<Option<String>>(),
            truncated in any::<bool>(),
            player in proptest::collection::vec(any::<String>(), 1..3),
            time in 0..253_402_300_800_000_000u64,
        ) {
            let hand: Vec<Card> = hand.into_iter().map(card).collect();
            let plays: Vec<Play> = plays
                .into_iter()
                .map(|(dealt, played, micros, cpu_micros, first)| Play {
                    dealt: card(dealt),
                    played: card(played),
                    micros,
                    cpu_micros,
                    first,
                })
                .collect();
            let record = GameRecord {
                game: "evensteven",
                index: numbers.0,
                line: numbers.1,
                n: numbers.2,
                seed: numbers.3,
                hand: &hand,
                deal: &hand[..hand.len() / 2],
                winnable: which % 2 == 0,
                plays: &plays,
                outcome: "lose_unnecessarily",
                verdict: verdict(which),
                startup_micros: startup,
                usage: Usage {
                    peak_memory: peak,
                    cpu: cpu.map(|c| Duration::from_nanos(u64::from(c) * 997)),
                    made_cgroup: false,
                },
                error: error.map(|(move_number, after_move, message)| ErrorRecord {
                    kind: "not_a_card",
                    move_number,
                    after_move,
                    message,
                }),
                stderr,
                stderr_truncated: truncated,
                player: &player,
                time: SystemTime::UNIX_EPOCH + Duration::from_micros(time),
                referee: crate::record::REFEREE_VERSION,
            };
            let mut written = Vec::new();
            record.write(&mut written);
            let derived = serde_json::to_vec(&record).unwrap();
            prop_assert_eq!(String::from_utf8(written).unwrap(), String::from_utf8(derived).unwrap());
        }
    }
}
