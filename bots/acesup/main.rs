//! `executeit`: the reference Aces Up program of the CS 60 assignment.
//!
//! Reads a deck of 52 cards (one per line, rank then suit), echoes each card
//! as it is read, then plays Aces Up — rotating the deck after each lost
//! game, at most 52 games, stopping at the first win — and reports each
//! game. The format is defined in `docs/acesup.md`. Bad input gets a message
//! naming the line on standard error and exit status 1.

use std::io::{self, Read, Write};
use std::process::ExitCode;

use referee::games::acesup::{deck, engine};

fn main() -> ExitCode {
    let mut input = Vec::new();
    if let Err(e) = io::stdin().lock().read_to_end(&mut input) {
        eprintln!("executeit: reading the deck: {e}");
        return ExitCode::FAILURE;
    }
    let mut out = io::BufWriter::new(io::stdout().lock());
    let deck = deck::read_input(&input, |card| {
        let _ = writeln!(out, "{card}");
    });
    let deck = match deck {
        Ok(deck) => deck,
        Err(e) => {
            let _ = out.flush();
            eprintln!("executeit: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut report = String::new();
    for (i, game) in engine::play_rotations(&deck).iter().enumerate() {
        engine::write_game(&mut report, i + 1, game);
    }
    match out.write_all(report.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("executeit: writing: {e}");
            ExitCode::FAILURE
        }
    }
}
