//! The Chomp board: an M×N array of letters on the projective plane.
//!
//! Columns run 1..=M left to right, rows 1..=N top to bottom, as in the
//! statement. Leaving the array puts a player on the diametrically opposite
//! cell: off the bottom or top the column is mirrored (`M + 1 - col`), off
//! the right or left the row is mirrored (`N + 1 - row`).

use std::fmt;

/// A cell, 1-based as the protocol writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cell {
    pub col: u32,
    pub row: u32,
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{})", self.col, self.row)
    }
}

/// A step a player can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    North,
    South,
    East,
    West,
}

impl Dir {
    pub const ALL: [Dir; 4] = [Dir::North, Dir::South, Dir::East, Dir::West];
}

/// The letters left on the board: 0 for an eaten cell, else the letter's
/// value (A = 1 .. Z = 26).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    cols: u32,
    rows: u32,
    values: Vec<u8>,
    full: usize,
    /// How many full cells hold each value (index 1..=26).
    counts: [u32; 27],
}

impl Grid {
    /// A grid from rows of capital letters; the caller has validated them
    /// (see [`super::array::parse`]).
    pub fn from_rows(rows: &[Vec<u8>]) -> Grid {
        let cols = rows.first().map_or(0, Vec::len) as u32;
        let values: Vec<u8> = rows.iter().flatten().map(|&b| b - b'A' + 1).collect();
        let mut counts = [0; 27];
        for &v in &values {
            counts[usize::from(v)] += 1;
        }
        Grid {
            cols,
            rows: rows.len() as u32,
            full: values.len(),
            values,
            counts,
        }
    }

    /// M, the number of columns.
    pub fn cols(&self) -> u32 {
        self.cols
    }

    /// N, the number of rows.
    pub fn rows(&self) -> u32 {
        self.rows
    }

    pub fn cell_count(&self) -> usize {
        self.values.len()
    }

    /// How many cells still hold a letter.
    pub fn full_cells(&self) -> usize {
        self.full
    }

    pub fn contains(&self, cell: Cell) -> bool {
        (1..=self.cols).contains(&cell.col) && (1..=self.rows).contains(&cell.row)
    }

    pub fn index(&self, cell: Cell) -> usize {
        ((cell.row - 1) * self.cols + (cell.col - 1)) as usize
    }

    pub fn cell_at(&self, index: usize) -> Cell {
        Cell {
            col: (index as u32 % self.cols) + 1,
            row: (index as u32 / self.cols) + 1,
        }
    }

    /// The value of the letter in `cell`, 0 when eaten.
    pub fn value(&self, cell: Cell) -> u8 {
        self.values[self.index(cell)]
    }

    pub fn value_at(&self, index: usize) -> u8 {
        self.values[index]
    }

    /// Empties `cell`, returning the value it held (0 if already empty).
    pub fn eat(&mut self, cell: Cell) -> u8 {
        let i = self.index(cell);
        self.eat_at(i)
    }

    pub fn eat_at(&mut self, index: usize) -> u8 {
        let value = std::mem::take(&mut self.values[index]);
        if value > 0 {
            self.full -= 1;
            self.counts[usize::from(value)] -= 1;
        }
        value
    }

    /// The highest value left on the board, 0 when it is empty.
    pub fn max_value(&self) -> u8 {
        (1..=26u8)
            .rev()
            .find(|&v| self.counts[usize::from(v)] > 0)
            .unwrap_or(0)
    }

    /// Where a step from `cell` lands, on the projective plane.
    pub fn step(&self, cell: Cell, dir: Dir) -> Cell {
        let (m, n) = (self.cols, self.rows);
        let Cell { col, row } = cell;
        match dir {
            Dir::North if row == 1 => Cell {
                col: m + 1 - col,
                row: n,
            },
            Dir::North => Cell { col, row: row - 1 },
            Dir::South if row == n => Cell {
                col: m + 1 - col,
                row: 1,
            },
            Dir::South => Cell { col, row: row + 1 },
            Dir::East if col == m => Cell {
                col: 1,
                row: n + 1 - row,
            },
            Dir::East => Cell { col: col + 1, row },
            Dir::West if col == 1 => Cell {
                col: m,
                row: n + 1 - row,
            },
            Dir::West => Cell { col: col - 1, row },
        }
    }

    /// The board as the referee sends it: one row of letters per line,
    /// eaten cells as `.` (never sent in a game; for displays and tests).
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(self.values.len() + self.rows as usize);
        for row in self.values.chunks(self.cols as usize) {
            out.extend(
                row.iter()
                    .map(|&v| if v == 0 { '.' } else { (b'A' + v - 1) as char }),
            );
            out.push('\n');
        }
        out
    }
}

/// Each of `k` players chomping the same full cell of value `p` in one
/// round scores `ceil(p / k)`, i.e. `floor((p + k - 1) / k)`.
pub fn share(p: u32, k: u32) -> u32 {
    p.div_ceil(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(m: u32, n: u32) -> Grid {
        let rows: Vec<Vec<u8>> = (0..n).map(|_| vec![b'A'; m as usize]).collect();
        Grid::from_rows(&rows)
    }

    fn c(col: u32, row: u32) -> Cell {
        Cell { col, row }
    }

    #[test]
    fn statement_example() {
        // 10x5, (7,5) moving South lands on (4,1).
        assert_eq!(grid(10, 5).step(c(7, 5), Dir::South), c(4, 1));
    }

    #[test]
    fn every_edge_and_corner() {
        let g = grid(10, 5);
        assert_eq!(g.step(c(4, 1), Dir::North), c(7, 5));
        assert_eq!(g.step(c(10, 2), Dir::East), c(1, 4));
        assert_eq!(g.step(c(1, 4), Dir::West), c(10, 2));
        // Corners: each way off the board.
        assert_eq!(g.step(c(1, 1), Dir::North), c(10, 5));
        assert_eq!(g.step(c(1, 1), Dir::West), c(10, 5));
        assert_eq!(g.step(c(10, 5), Dir::South), c(1, 1));
        assert_eq!(g.step(c(10, 5), Dir::East), c(1, 1));
        assert_eq!(g.step(c(10, 1), Dir::North), c(1, 5));
        assert_eq!(g.step(c(10, 1), Dir::East), c(1, 5));
        assert_eq!(g.step(c(1, 5), Dir::South), c(10, 1));
        assert_eq!(g.step(c(1, 5), Dir::West), c(10, 1));
        // Inside, plain steps.
        assert_eq!(g.step(c(5, 3), Dir::North), c(5, 2));
        assert_eq!(g.step(c(5, 3), Dir::East), c(6, 3));
    }

    #[test]
    fn degenerate_shapes() {
        let one = grid(1, 1);
        for d in Dir::ALL {
            assert_eq!(one.step(c(1, 1), d), c(1, 1));
        }
        let row = grid(5, 1);
        assert_eq!(row.step(c(2, 1), Dir::North), c(4, 1));
        assert_eq!(row.step(c(2, 1), Dir::South), c(4, 1));
        assert_eq!(row.step(c(5, 1), Dir::East), c(1, 1));
        let col = grid(1, 5);
        assert_eq!(col.step(c(1, 2), Dir::East), c(1, 4));
        assert_eq!(col.step(c(1, 5), Dir::South), c(1, 1));
    }

    #[test]
    fn steps_are_reversible() {
        let g = grid(7, 4);
        for i in 0..g.cell_count() {
            let cell = g.cell_at(i);
            for (there, back) in [
                (Dir::North, Dir::South),
                (Dir::South, Dir::North),
                (Dir::East, Dir::West),
                (Dir::West, Dir::East),
            ] {
                assert_eq!(g.step(g.step(cell, there), back), cell);
            }
        }
    }

    #[test]
    fn sharing_rounds_up() {
        assert_eq!(share(26, 1), 26);
        assert_eq!(share(26, 2), 13);
        assert_eq!(share(25, 2), 13);
        assert_eq!(share(25, 3), 9);
        assert_eq!(share(1, 3), 1);
        assert_eq!(share(7, 3), 3);
    }

    #[test]
    fn eating_empties_once() {
        let mut g = grid(2, 1);
        assert_eq!(g.full_cells(), 2);
        assert_eq!(g.eat(c(2, 1)), 1);
        assert_eq!(g.eat(c(2, 1)), 0);
        assert_eq!(g.full_cells(), 1);
        assert_eq!(g.render(), "A.\n");
    }
}
