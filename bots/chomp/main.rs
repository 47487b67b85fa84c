//! `chomp`: the strong reference Chomp bot.
//!
//! Each round it values the full cells by the points it can expect there
//! per round spent getting there, and walks towards the best one:
//!
//! - distances are exact walks on the projective plane;
//! - contention: every rival is predicted to head for the cell a greedy
//!   player would pick (the nearest of the highest letters). A cell a rival
//!   will reach first is worth nothing to this bot; one a rival reaches in
//!   the same round is shared (`ceil(p / k)` each);
//! - a rival on this bot's cell that made the same move last round is taken
//!   to be a copy of this bot: the lower-numbered of the two keeps the best
//!   cell, the other counts it as shared and usually looks elsewhere, so
//!   copies do not split every meal;
//! - it looks one cell further: a cell's rate is the better of eating it
//!   alone (`v / (d + 1)`) and eating it and then its best neighbour
//!   (`(v + n) / (d + 3)`), so clusters of good letters draw it;
//! - it watches its own starvation clock (the turn time it has used since it
//!   last ate, as it measures it) and past half of the statement's 45 s goes
//!   for the nearest food instead;
//! - it never decomposes.
//!
//! Searches stop as soon as no farther cell can beat the best found, so a
//! move costs far less than a pass over a large board.

use std::ops::ControlFlow;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use referee::games::chomp::distance::Distances;
use referee::games::chomp::grid::{Cell, Dir, Grid, share};
use referee::games::chomp::protocol::Move;
use referee::games::chomp::view::{self, View};

/// The statement's starvation budget; a bot is not told another.
const STARVE: Duration = Duration::from_secs(45);
/// The best rate any cell `d` steps away can have: a Z, or a Z next to a Z.
fn rate_bound(d: u32) -> f64 {
    let d = f64::from(d);
    (26.0 / (d + 1.0)).max(52.0 / (d + 3.0))
}

fn main() -> ExitCode {
    let mut planner = Planner::default();
    match view::run(|view| planner.turn(view)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("chomp: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A rival's predicted meal: which cell, and in how many steps.
#[derive(Clone, Copy)]
struct Claim {
    cell: usize,
    arrival: u32,
}

#[derive(Default)]
struct Planner {
    mine: Distances,
    theirs: Distances,
    /// Turn time used since the last successful chomp.
    hunger: Duration,
    /// Whether the last move was a chomp of a full cell.
    ate_last_turn: bool,
}

impl Planner {
    fn turn(&mut self, view: &View) -> u8 {
        let started = Instant::now();
        if self.ate_last_turn {
            self.hunger = Duration::ZERO;
        }
        let mv = self.choose(view, self.hunger > STARVE / 2);
        self.ate_last_turn = mv == Move::Chomp && view.grid.value(view.my_position()) > 0;
        self.hunger += started.elapsed();
        mv.letter()
    }

    fn choose(&mut self, view: &View, hungry: bool) -> Move {
        let grid = &view.grid;
        let here = view.my_position();
        let my_last = view.seen[view.me - 1].last_move;
        let mut claims = Vec::with_capacity(view.players());
        let mut twin_ahead = false;
        for p in (1..=view.players()).filter(|&p| p != view.me && view.alive(p)) {
            if view.position(p) == here && view.seen[p - 1].last_move == my_last {
                twin_ahead |= p < view.me;
                continue;
            }
            if let Some(cell) = self.theirs.nearest_richest(grid, view.position(p)) {
                let arrival = self.theirs.to(cell).expect("the search reached it");
                claims.push(Claim { cell, arrival });
            }
        }
        let mut target = self.best_target(grid, here, &claims, hungry);
        if twin_ahead && let Some(cell) = target {
            // The copy ahead of this bot goes there at the same pace.
            let arrival = self.mine.to(cell).expect("the search reached it");
            claims.push(Claim { cell, arrival });
            target = self.best_target(grid, here, &claims, hungry);
        }
        match target {
            Some(cell) => self.mine.first_step(cell).map_or(Move::Chomp, Move::Step),
            None => Move::Chomp,
        }
    }

    /// The full cell with the best worth per round spent reaching and eating
    /// it; hungry, simply the nearest full cell.
    fn best_target(
        &mut self,
        grid: &Grid,
        from: Cell,
        claims: &[Claim],
        hungry: bool,
    ) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        self.mine.search_until(grid, from, |i, d| {
            if best.is_some_and(|(rate, _)| rate_bound(d) < rate) {
                return ControlFlow::Break(());
            }
            let value = grid.value_at(i);
            if value == 0 {
                return ControlFlow::Continue(());
            }
            if hungry {
                best = Some((f64::INFINITY, i));
                return ControlFlow::Break(());
            }
            let gain = expected_gain(value, i, d, claims);
            let rounds = f64::from(d);
            let rate =
                (gain / (rounds + 1.0)).max((gain + best_neighbour(grid, i)) / (rounds + 3.0));
            if best.is_none_or(|(b, _)| rate > b) {
                best = Some((rate, i));
            }
            ControlFlow::Continue(())
        });
        best.map(|(_, i)| i)
    }
}

/// What this bot can expect from cell `i` (letter `value`, `d` steps away)
/// given the rivals' predicted meals.
fn expected_gain(value: u8, i: usize, d: u32, claims: &[Claim]) -> f64 {
    let mut eaters = 1;
    for claim in claims.iter().filter(|c| c.cell == i) {
        if claim.arrival < d {
            return 0.0;
        }
        if claim.arrival == d {
            eaters += 1;
        }
    }
    f64::from(share(u32::from(value), eaters))
}

/// The highest letter next to cell `i`.
fn best_neighbour(grid: &Grid, i: usize) -> f64 {
    let cell = grid.cell_at(i);
    Dir::ALL
        .iter()
        .map(|&dir| grid.step(cell, dir))
        .filter(|&next| next != cell)
        .map(|next| f64::from(grid.value(next)))
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use referee::games::chomp::view::play;

    fn moves(input: &str) -> String {
        let mut out = Vec::new();
        let mut planner = Planner::default();
        play(&mut input.as_bytes(), &mut out, &mut |v: &View| {
            planner.turn(v)
        })
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn eats_where_it_stands_when_that_is_best() {
        assert_eq!(moves("1 1\n3 1\nZAA\n1 1 -\n"), "C");
    }

    /// A 21x11 board of `A`s with some letters placed, seen by player `me`
    /// of the players at `positions`, before the first move. The board is
    /// large enough that no walk across an edge is a shortcut here.
    fn board(me: usize, letters: &[(u32, u32, char)], positions: &[(u32, u32)]) -> String {
        let mut rows = vec![vec!['A'; 21]; 11];
        for &(col, row, letter) in letters {
            rows[row as usize - 1][col as usize - 1] = letter;
        }
        let mut text = format!("{me} {}\n21 11\n", positions.len());
        for row in rows {
            text.extend(row);
            text.push('\n');
        }
        for (col, row) in positions {
            text.push_str(&format!("{col} {row} -\n"));
        }
        text
    }

    #[test]
    fn prefers_near_food_to_far_feasts() {
        let letters = [(12, 6, 'Y'), (7, 6, 'Z')];
        assert_eq!(moves(&board(1, &letters, &[(11, 6)])), "E");
    }

    #[test]
    fn leaves_a_cell_a_rival_reaches_first() {
        // Alone, the Z four steps East is the best; with a rival one step
        // from it, the X four steps West is.
        let letters = [(15, 6, 'Z'), (7, 6, 'X')];
        assert_eq!(moves(&board(1, &letters, &[(11, 6)])), "E");
        assert_eq!(moves(&board(1, &letters, &[(11, 6), (14, 6)])), "W");
    }

    #[test]
    fn copies_split_up() {
        let letters = [(10, 6, 'Z'), (12, 6, 'Y')];
        let together = [(11, 6), (11, 6)];
        assert_eq!(moves(&board(1, &letters, &together)), "W");
        assert_eq!(moves(&board(2, &letters, &together)), "E");
    }
}
