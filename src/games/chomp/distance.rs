//! Shortest walks on the projective-plane board, for bots: breadth-first
//! search from one cell gives the number of steps to every cell and the
//! first step of a shortest walk there.
//!
//! Searches can stop early (bots usually want the nearest cell of some
//! kind), and the buffers are stamped with a generation number instead of
//! being cleared, so a search costs what it visits, not the board's size.

use std::collections::VecDeque;
use std::ops::ControlFlow;

use super::grid::{Cell, Dir, Grid};

#[derive(Clone, Debug, Default)]
pub struct Distances {
    dist: Vec<u32>,
    first: Vec<Option<Dir>>,
    /// `dist[i]` and `first[i]` are valid iff `stamp[i] == generation`.
    stamp: Vec<u32>,
    generation: u32,
    queue: VecDeque<usize>,
}

impl Distances {
    pub fn new() -> Distances {
        Distances::default()
    }

    /// Searches the whole board from `from`.
    pub fn search(&mut self, grid: &Grid, from: Cell) -> &Distances {
        self.search_until(grid, from, |_, _| ControlFlow::Continue(()))
    }

    /// Searches from `from`, calling `visit(index, distance)` on each cell in
    /// order of distance until it returns `Break`. Afterwards [`Self::to`]
    /// and [`Self::first_step`] answer for every visited cell.
    pub fn search_until(
        &mut self,
        grid: &Grid,
        from: Cell,
        mut visit: impl FnMut(usize, u32) -> ControlFlow<()>,
    ) -> &Distances {
        let cells = grid.cell_count();
        if self.stamp.len() != cells || self.generation == u32::MAX {
            self.dist = vec![0; cells];
            self.first = vec![None; cells];
            self.stamp = vec![0; cells];
            self.generation = 0;
        }
        self.generation += 1;
        let generation = self.generation;
        self.queue.clear();
        let start = grid.index(from);
        self.mark(start, 0, None);
        self.queue.push_back(start);
        while let Some(i) = self.queue.pop_front() {
            if visit(i, self.dist[i]).is_break() {
                break;
            }
            let here = grid.cell_at(i);
            for dir in Dir::ALL {
                let j = grid.index(grid.step(here, dir));
                if self.stamp[j] != generation {
                    let first = if i == start { Some(dir) } else { self.first[i] };
                    self.mark(j, self.dist[i] + 1, first);
                    self.queue.push_back(j);
                }
            }
        }
        self
    }

    fn mark(&mut self, i: usize, dist: u32, first: Option<Dir>) {
        self.stamp[i] = self.generation;
        self.dist[i] = dist;
        self.first[i] = first;
    }

    /// Steps from the origin to the cell with this index; `None` if the
    /// search stopped before reaching it.
    pub fn to(&self, index: usize) -> Option<u32> {
        (self.stamp[index] == self.generation).then(|| self.dist[index])
    }

    /// The first step of a shortest walk to the cell with this index
    /// (`None` for the origin itself, or a cell not reached).
    pub fn first_step(&self, index: usize) -> Option<Dir> {
        if self.stamp[index] == self.generation {
            self.first[index]
        } else {
            None
        }
    }

    /// The nearest cell holding the highest value left (ties: lowest
    /// index), as a greedy player picks; `None` on an empty board. Its
    /// distance is then available from [`Self::to`].
    pub fn nearest_richest(&mut self, grid: &Grid, from: Cell) -> Option<usize> {
        let top = grid.max_value();
        if top == 0 {
            return None;
        }
        let mut best: Option<(u32, usize)> = None;
        self.search_until(grid, from, |i, d| {
            if best.is_some_and(|(bd, _)| d > bd) {
                return ControlFlow::Break(());
            }
            if grid.value_at(i) == top && best.is_none_or(|(_, bi)| i < bi) {
                best = Some((d, i));
            }
            ControlFlow::Continue(())
        });
        best.map(|(_, i)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(m: u32, n: u32) -> Grid {
        Grid::from_rows(&(0..n).map(|_| vec![b'A'; m as usize]).collect::<Vec<_>>())
    }

    #[test]
    fn wrapping_makes_far_cells_near() {
        let g = grid(10, 5);
        let mut d = Distances::new();
        d.search(&g, Cell { col: 7, row: 5 });
        // One step South crosses the edge to (4,1).
        let target = g.index(Cell { col: 4, row: 1 });
        assert_eq!(d.to(target), Some(1));
        assert_eq!(d.first_step(target), Some(Dir::South));
        assert_eq!(d.to(g.index(Cell { col: 7, row: 5 })), Some(0));
        assert_eq!(d.first_step(g.index(Cell { col: 7, row: 5 })), None);
    }

    #[test]
    fn following_first_steps_reaches_the_target() {
        let g = grid(9, 6);
        let mut d = Distances::new();
        for from in 0..g.cell_count() {
            for to in 0..g.cell_count() {
                let total = d.search(&g, g.cell_at(from)).to(to).unwrap();
                let mut at = g.cell_at(from);
                for left in (0..total).rev() {
                    at = g.step(at, d.search(&g, at).first_step(to).unwrap());
                    assert_eq!(d.search(&g, at).to(to), Some(left));
                }
                assert_eq!(g.index(at), to);
            }
        }
    }

    #[test]
    fn nearest_richest_cell() {
        let g = Grid::from_rows(&[b"ZAAAZ".to_vec(), b"AAYAA".to_vec()]);
        let mut d = Distances::new();
        // From (3,2): both Zs are 3 steps away; the first in reading order wins.
        assert_eq!(d.nearest_richest(&g, Cell { col: 3, row: 2 }), Some(0));
        assert_eq!(d.to(0), Some(3));
        // Via the edge: from (5,2) East wraps to (1,1).
        assert_eq!(d.nearest_richest(&g, Cell { col: 5, row: 2 }), Some(0));
        assert_eq!(d.to(0), Some(1));
    }
}
