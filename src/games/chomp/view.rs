//! A bot's view of a Chomp game, kept up to date from the updates, and the
//! loop that runs a bot on standard input and output. Both reference bots
//! are a strategy function plugged into [`run`].

use std::io::{self, BufRead, Write};

use super::grid::{Cell, Grid};
use super::protocol::{self, Seen};

/// What a bot knows at the start of a round.
#[derive(Clone, Debug)]
pub struct View {
    /// This bot's player number, 1-based.
    pub me: usize,
    /// The board with every cell known to be eaten emptied. A player whose
    /// last move was `C` is on a cell that is now empty, whoever else was
    /// there, so the board is exact.
    pub grid: Grid,
    /// The latest update: one entry per player, in player order.
    pub seen: Vec<Seen>,
    /// Rounds so far, counting this one.
    pub round: u64,
}

impl View {
    pub fn players(&self) -> usize {
        self.seen.len()
    }

    /// Where player `p` (1-based) is.
    pub fn position(&self, p: usize) -> Cell {
        self.seen[p - 1].cell
    }

    pub fn my_position(&self) -> Cell {
        self.position(self.me)
    }

    /// Whether player `p` is still playing (not decomposing).
    pub fn alive(&self, p: usize) -> bool {
        self.seen[p - 1].last_move != b'D'
    }

    /// Takes in one update.
    pub fn apply(&mut self, seen: &[Seen]) {
        for s in seen {
            if s.last_move == b'C' && self.grid.contains(s.cell) {
                self.grid.eat(s.cell);
            }
        }
        self.seen.clear();
        self.seen.extend_from_slice(seen);
        self.round += 1;
    }
}

/// Plays a whole game on standard input and output: reads the header, then
/// for each update asks `choose` for a move byte and writes it (flushed).
/// Returns at the end of input.
pub fn run(mut choose: impl FnMut(&View) -> u8) -> io::Result<()> {
    let mut input = io::stdin().lock();
    let mut out = io::stdout().lock();
    play(&mut input, &mut out, &mut choose)
}

/// [`run`] on any streams (for tests).
pub fn play(
    input: &mut impl BufRead,
    out: &mut impl Write,
    choose: &mut impl FnMut(&View) -> u8,
) -> io::Result<()> {
    let header = protocol::read_header(input)?;
    let mut view = View {
        me: header.me,
        grid: header.grid,
        seen: Vec::with_capacity(header.players),
        round: 0,
    };
    let mut seen = Vec::with_capacity(header.players);
    while protocol::read_update(input, header.players, &mut seen)? {
        view.apply(&seen);
        out.write_all(&[choose(&view)])?;
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chomps_empty_the_board() {
        let input = b"1 2\n3 1\nABC\n1 1 -\n1 1 -\n1 1 C\n3 1 C\n";
        let mut out = Vec::new();
        let mut boards = vec![];
        play(&mut &input[..], &mut out, &mut |v: &View| {
            boards.push(v.grid.render());
            b'C'
        })
        .unwrap();
        assert_eq!(out, b"CC");
        assert_eq!(boards, vec!["ABC\n", ".B.\n"]);
    }
}
