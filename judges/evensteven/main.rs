//! Even Steven, judged over the referee's JSON Lines protocol (version 1),
//! compiled: the same game, messages, verdicts and records as
//! `games/evensteven/judge.py`, for the same seed and index, built with the
//! crate's own shuffle (`referee::games::evensteven::deal`). The game file
//! is `games/evensteven/game-compiled.toml`; see docs/judge-protocol.md.
//!
//! Output is buffered and flushed only when the judge is about to wait:
//! after an `ask` and after an `end`.

use std::io::{BufRead, BufWriter, Write};

use referee::games::evensteven::deal::Deal;
use serde_json::{Value, json};

const VALUES: [&str; 13] = [
    "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A",
];

fn splitmix64(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// N in 1..=13 and a shuffle seed in 1..=2147483646, from the run's seed
/// and the game's index (as `deal_for` in judge.py).
fn deal_for(seed: u64, index: u64) -> (usize, u32) {
    let z = splitmix64(seed.wrapping_add(index.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    (
        1 + (z % 13) as usize,
        1 + ((z >> 32) % 2_147_483_646) as u32,
    )
}

/// The value of a card text, if it is a card as judge.py's `is_card` sees
/// it: a known value followed by one of `c d h s`.
fn value(text: &str) -> Option<usize> {
    let suit = text.bytes().last()?;
    if text.len() < 2 || !b"cdhs".contains(&suit) {
        return None;
    }
    VALUES
        .iter()
        .position(|v| *v == &text[..text.len() - 1])
        .map(|i| i + 2)
}

/// Python's `repr` of a string, for the messages judge.py writes.
fn repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

struct Judge<R, W: Write> {
    input: R,
    out: BufWriter<W>,
    line: String,
}

impl<R: BufRead, W: Write> Judge<R, W> {
    fn say(&mut self, message: &Value) {
        let ok = serde_json::to_writer(&mut self.out, message)
            .map_err(std::io::Error::from)
            .and_then(|()| self.out.write_all(b"\n"));
        if ok.is_err() {
            std::process::exit(0);
        }
    }

    fn flush(&mut self) {
        if self.out.flush().is_err() {
            std::process::exit(0);
        }
    }

    /// The next message; `None` at the end of the input.
    fn hear(&mut self) -> Option<Value> {
        self.line.clear();
        match self.input.read_line(&mut self.line) {
            Ok(0) => None,
            Ok(_) => match serde_json::from_str(&self.line) {
                Ok(message) => Some(message),
                Err(e) => fail(&format!("not JSON ({e}): {}", self.line.trim_end())),
            },
            Err(e) => fail(&format!("cannot read: {e}")),
        }
    }

    fn play(&mut self, start: &Value) {
        let (Some(seed), Some(index)) = (start["seed"].as_u64(), start["index"].as_u64()) else {
            fail(&format!("a `start` without seed or index: {start}"));
        };
        let (n, shuffle) = deal_for(seed, index);
        let deal = Deal::new(n, shuffle);
        let hand: Vec<String> = deal.hand.iter().map(ToString::to_string).collect();
        let dealt: Vec<String> = deal.to_cover.iter().map(ToString::to_string).collect();
        let can_win = deal.winnable();
        let mut summary = json!({
            "n": n, "seed": shuffle, "hand": hand, "deal": dealt, "winnable": can_win,
        });
        let mut end = |judge: &mut Self, score: u32, outcome: &str| {
            summary["outcome"] = json!(outcome);
            judge.say(&json!({"type": "end", "scores": [score], "summary": summary}));
            judge.flush();
        };
        if let Some(status) = start["players"][0]["status"].as_str() {
            return end(self, 0, status);
        }
        self.say(&json!({"type": "frame", "data": {"hand": hand, "deal": dealt}}));
        let text = format!("{n} {}\n{}\n", hand.join(" "), dealt[0]);
        self.say(&json!({"type": "send", "to": [0], "text": text}));
        let mut left = hand.clone();
        let mut played: Vec<(String, usize)> = Vec::new();
        for (move_, card_dealt) in dealt.iter().enumerate().map(|(i, d)| (i + 1, d)) {
            self.say(&json!({"type": "ask", "players": [0]}));
            self.flush();
            let Some(replies) = self.hear() else {
                fail("the input ended during a game");
            };
            let reply = &replies["replies"][0];
            let Some(card) = reply["text"].as_str() else {
                let status = reply["status"].as_str().unwrap_or("internal").to_owned();
                return end(self, 0, &status);
            };
            self.say(&json!({"type": "frame", "data": {
                "dealt": card_dealt, "played": card, "micros": reply["micros"],
            }}));
            let fault = if value(card).is_none() {
                let head: String = card.chars().take(100).collect();
                Some(format!(
                    "the player wrote {}, which is not a card",
                    repr(&head)
                ))
            } else if let Some((_, when)) = played.iter().find(|(c, _)| c == card) {
                Some(format!(
                    "the player played {card} again; it was already played on move {when}"
                ))
            } else if !left.iter().any(|c| c == card) {
                Some(format!(
                    "the player played {card}, which is not in its hand (it holds {})",
                    left.join(" ")
                ))
            } else {
                None
            };
            if let Some(fault) = fault {
                let message = format!("game {index}, move {move_} (dealt {card_dealt}): {fault}");
                self.say(
                    &json!({"type": "eliminate", "player": 0, "status": "incorrect",
                    "message": message}),
                );
                return end(self, 0, "incorrect");
            }
            played.push((card.to_owned(), move_));
            left.retain(|c| c != card);
            if value(card) < value(card_dealt) {
                self.say(&json!({"type": "send", "to": [0], "text": "YOU LOSE\n"}));
                let outcome = if can_win {
                    "lose_unnecessarily"
                } else {
                    "lose_necessarily"
                };
                return end(self, 0, outcome);
            }
            if move_ < n {
                let text = format!("{}\n", dealt[move_]);
                self.say(&json!({"type": "send", "to": [0], "text": text}));
            }
        }
        self.say(&json!({"type": "send", "to": [0], "text": "YOU WIN\n"}));
        end(self, 1, "win");
    }
}

/// Stops the judge with a message on stderr: the harness records it as a
/// judge error.
fn fail(message: &str) -> ! {
    eprintln!("evensteven judge: {message}");
    std::process::exit(1);
}

fn main() {
    let stdin = std::io::stdin();
    let mut judge = Judge {
        input: stdin.lock(),
        out: BufWriter::new(std::io::stdout().lock()),
        line: String::new(),
    };
    while let Some(message) = judge.hear() {
        if message["type"] != "start" || message["version"] != 1 {
            fail(&format!("expected a version 1 `start`, got {message}"));
        }
        judge.play(&message);
    }
}
