//! `chomp-greedy`: the baseline Chomp bot. Each round it walks towards the
//! nearest of the highest-value full cells (distances on the projective
//! plane) and chomps it on arrival. It ignores the other players.

use std::process::ExitCode;

use referee::games::chomp::distance::Distances;
use referee::games::chomp::protocol::Move;
use referee::games::chomp::view::{self, View};

fn main() -> ExitCode {
    let mut distances = Distances::new();
    match view::run(|view| choose(view, &mut distances)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("chomp-greedy: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The move towards the best cell: highest value first, then nearest, then
/// first in reading order.
fn choose(view: &View, distances: &mut Distances) -> u8 {
    let target = distances.nearest_richest(&view.grid, view.my_position());
    match target.and_then(|i| distances.first_step(i)) {
        Some(dir) => Move::Step(dir).letter(),
        None => Move::Chomp.letter(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use referee::games::chomp::view::play;

    fn moves(input: &str) -> String {
        let mut out = Vec::new();
        let mut d = Distances::new();
        play(&mut input.as_bytes(), &mut out, &mut |v: &View| {
            choose(v, &mut d)
        })
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn walks_to_the_highest_letter_across_the_edge() {
        // Z at (1,2); from (5,2) East wraps onto it in one step.
        assert_eq!(moves("1 1\n5 3\nAAAAA\nZAAAA\nAAAAA\n5 2 -\n"), "E");
        assert_eq!(moves("1 1\n5 3\nAAAAA\nZAAAA\nAAAAA\n1 2 -\n"), "C");
    }
}
