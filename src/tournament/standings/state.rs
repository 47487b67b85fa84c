//! What a [`Tally`] holds: the standings' running counts, of every entrant
//! and of every pair of entrants, and how large they may grow. The parts
//! that count (`pairs.rs`, `meetings.rs`, `arrays.rs`, `ratings.rs`) and
//! the whole that drives them (`tally.rs`) all stand above this file, so
//! that a part needs nothing of the whole, nor the whole of a part.

use std::collections::BTreeMap;

use skillratings::weng_lin::WengLinRating;

use super::entrant::{Failures, Point, Row};
use super::order::InOrder;
use crate::stats::{HeadToHead, Moments};

/// The standings built one record at a time: what a run, `merge` and
/// `report` hold instead of the records, so that their memory does not
/// grow with the games (O(entrants²) at most, for one-player games'
/// paired differences, plus [`REORDER_WINDOW`](super::REORDER_WINDOW)
/// records).
///
/// Records may come in any order within
/// [`REORDER_WINDOW`](super::REORDER_WINDOW); they are counted in game
/// order. A game's index is counted once: the first record of it, except
/// that a game played to its end supersedes a void record of it (its judge
/// failed, and `--resume` played it again). A void game is no game of
/// anyone's, only an `internal` error of each of its players.
#[derive(Clone)]
pub struct Tally {
    pub(super) solo: bool,
    /// Everything tallied of each entrant, in entrant order: an entrant
    /// added is one more of these ([`Tally::push_entrant`]), so that no
    /// table of one entry per entrant can be left a size behind.
    pub(super) entrants: Vec<EntrantTally>,
    pub(super) seat: std::collections::HashMap<String, usize>,
    pub(super) against: Option<usize>,
    /// One-player games: per pair of entrants, how their wins compared in
    /// the games both played (see [`PairTally`]).
    pub(super) pairs: Vec<PairTally>,
    /// Games between players: the games of every two entrants against
    /// each other, from the side of the first in entrant order, keyed by
    /// their positions `(i, j)`, `i < j` (see [`super::meetings`]).
    pub(super) meetings: Option<BTreeMap<(usize, usize), HeadToHead>>,
    /// Keep each entrant's standing after its games, thinned to at most
    /// twice this number of points.
    pub(super) history: Option<usize>,
    /// The arrays of the games counted, in the order they first appear:
    /// each entrant's [`EntrantTally::arrays`] follow this order.
    pub(super) arrays: Vec<String>,
    /// The records not counted yet, put in game order.
    pub(super) order: InOrder,
}

/// One entrant's part of a [`Tally`].
#[derive(Clone)]
pub(super) struct EntrantTally {
    pub(super) name: String,
    pub(super) row: Row,
    /// Games of several players: its rating and scores.
    pub(super) rating: WengLinRating,
    pub(super) scores: Moments,
    /// Its standing after its games (with the tally's `history`).
    pub(super) history: Thinned,
    /// Its games on each array, by the array's place in
    /// [`Tally::arrays`]; as long as the last array it played on.
    pub(super) arrays: Vec<ArrayTally>,
    /// Its first game that did not end `ok`, and how many did not.
    pub(super) failures: Failures,
}

impl EntrantTally {
    pub(super) fn new(name: &str) -> EntrantTally {
        EntrantTally {
            name: name.to_owned(),
            row: Row::new(name),
            rating: WengLinRating::new(),
            scores: Moments::default(),
            history: Thinned::default(),
            arrays: Vec::new(),
            failures: Failures::default(),
        }
    }
}

/// A series of points kept evenly spread in little room: every
/// `stride`-th point, the stride doubling when the points reach twice
/// `most`; the last point is always kept.
#[derive(Clone, Default)]
pub(super) struct Thinned {
    stride: u64,
    seen: u64,
    points: Vec<Point>,
    last: Option<Point>,
}

impl Thinned {
    pub(super) fn push(&mut self, point: Point, most: usize) {
        self.stride = self.stride.max(1);
        if self.seen.is_multiple_of(self.stride) {
            self.points.push(point);
            if self.points.len() >= most.saturating_mul(2) {
                self.stride *= 2;
                let mut k = 0;
                self.points.retain(|_| {
                    k += 1;
                    k % 2 == 1
                });
            }
        }
        self.seen += 1;
        self.last = Some(point);
    }

    pub(super) fn points(&self) -> Vec<Point> {
        let mut points = self.points.clone();
        if let Some(last) = self.last
            && points.last() != Some(&last)
        {
            points.push(last);
        }
        points
    }
}

/// One entrant's games on one array.
#[derive(Clone, Copy, Default)]
pub(super) struct ArrayTally {
    pub(super) wins: f64,
    pub(super) scores: Moments,
}

/// One pair of entrants `(i, j)` over the one-player games both played:
/// their paired difference, won_i − won_j, is −1, 0 or 1 per game.
#[derive(Clone, Copy, Default, Debug)]
pub(super) struct PairTally {
    pub(super) games: u64,
    /// Games `i` won and `j` lost.
    pub(super) ahead: u64,
    /// Games `j` won and `i` lost.
    pub(super) behind: u64,
}

/// Most entrants of a one-player game whose every pair is compared on the
/// deals both played (the paired difference with the best): the tallies
/// grow as the square of the entrants (2,000: two million, 48 MB;
/// 200,000 would take 480 GB). Past it the standings have no paired
/// column, and say why.
pub const MOST_PAIRED: usize = 2_000;

/// Whether a tournament of `n` entrants compares them in pairs.
pub fn paired(solo: bool, n: usize) -> bool {
    solo && (2..=MOST_PAIRED).contains(&n)
}

/// Most entrants whose every pair's games are tallied: the tallies grow
/// with the pairs that met, up to the square of the entrants (200:
/// 19,900 pairs, about 3 MB). Past it the standings give no pairs, and
/// say why.
pub const MOST_MET: usize = 200;

/// A fresh tally of the pairs' games, for `n` entrants of games between
/// players (`None` for one-player games or too many entrants).
pub(super) fn new_meetings(
    solo: bool,
    n: usize,
) -> Option<std::collections::BTreeMap<(usize, usize), HeadToHead>> {
    (!solo && n <= MOST_MET).then(std::collections::BTreeMap::new)
}
