//! `evensteven`: the reference Even Steven player.
//!
//! Plays any number of games from standard input and exits at end of input.
//! For each dealt card it plays the smallest card that covers it, or, when
//! none does, the smallest card it holds; this never loses a winnable hand
//! (proof in `src/games/evensteven/strategy.rs` and `docs/evensteven.md`).
//!
//! With any argument (`evensteven debug`) it also writes `*` lines echoing
//! what it reads and what it plays, which the dealer copies to its output.

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use referee::games::evensteven::{Card, strategy};

fn main() -> ExitCode {
    let debug = std::env::args_os().len() > 1;
    match play(io::stdin().lock(), io::stdout().lock(), debug) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("evensteven: {e}");
            ExitCode::FAILURE
        }
    }
}

fn play(mut input: impl BufRead, mut out: impl Write, debug: bool) -> Result<(), String> {
    let mut hand: Vec<Card> = Vec::with_capacity(13);
    // One buffer for every line read and one for every answer: a move
    // allocates nothing.
    let mut bytes = Vec::with_capacity(64);
    let mut answer = Vec::with_capacity(8);
    for number in 0.. {
        bytes.clear();
        match input.read_until(b'\n', &mut bytes) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(format!("reading input: {e}")),
        }
        let line = std::str::from_utf8(&bytes)
            .map_err(|_| format!("line {}: not UTF-8", number + 1))?
            .trim_end();
        let io_err = |e: io::Error| format!("writing output: {e}");
        if debug {
            writeln!(out, "* read: {line}").map_err(io_err)?;
        }
        if line.starts_with("YOU ") {
            hand.clear();
            if debug {
                out.flush().map_err(io_err)?;
            }
            continue;
        }
        let mut fields = line.split_ascii_whitespace();
        let first = fields.next().unwrap_or_default();
        let card_at = |text: &str| {
            Card::parse(text).map_err(|e| format!("line {}: {text:?}: {e}", number + 1))
        };
        if first.bytes().all(|b| b.is_ascii_digit()) && !first.is_empty() {
            // The hand: `N C1 ... CN`.
            hand.clear();
            for field in fields {
                hand.push(card_at(field)?);
            }
            if first.parse() != Ok(hand.len()) {
                return Err(format!(
                    "line {}: hand of {first} cards lists {}",
                    number + 1,
                    hand.len()
                ));
            }
            continue;
        }
        let dealt = card_at(first)?;
        let index = strategy::choose(&hand, dealt).ok_or_else(|| {
            format!(
                "line {}: a card was dealt but the hand is empty",
                number + 1
            )
        })?;
        let played = hand.remove(index);
        if debug {
            let verdict = if played.covers(dealt) {
                "covers"
            } else {
                "cannot cover"
            };
            writeln!(out, "* play: {played} {verdict} {dealt}").map_err(io_err)?;
        }
        answer.clear();
        played.push_to(&mut answer);
        answer.push(b'\n');
        out.write_all(&answer).map_err(io_err)?;
        out.flush().map_err(io_err)?;
    }
    Ok(())
}
