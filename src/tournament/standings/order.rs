//! Records taken in game order as they come, and the set of games taken.

use std::collections::BTreeMap;

use crate::game::GameRecord;

/// How many records may arrive out of game order (games played at once,
/// shards read side by side) and still be taken in order: the ratings
/// depend on the order of the games.
pub const REORDER_WINDOW: usize = 4096;

/// Records put back in game order as they come: each is given as soon as
/// the game before it in the run's order has been (`next` follows `step`:
/// shard K of N plays games K, K + N, ...), or once [`REORDER_WINDOW`]
/// later ones have come (a game missing), or at the end. A game is
/// given once: its first record, except that a game played to its end
/// supersedes a void record of it (its judge failed, and `--resume` played
/// it again) that has not been given yet.
#[derive(Clone)]
pub struct InOrder {
    /// Games with a record played to its end.
    played: GameSet,
    /// Void games given or held.
    voided: GameSet,
    waiting: BTreeMap<u64, GameRecord>,
    /// The highest index given so far.
    given_up_to: u64,
    /// The game expected next, and the step between games.
    next: u64,
    step: u64,
}

impl Default for InOrder {
    fn default() -> InOrder {
        InOrder::new(1, 1)
    }
}

impl InOrder {
    /// The run's games are `first`, `first + step`, ...
    pub fn new(first: u64, step: u64) -> InOrder {
        InOrder {
            played: GameSet::default(),
            voided: GameSet::default(),
            waiting: BTreeMap::new(),
            given_up_to: 0,
            next: first,
            step: step.max(1),
        }
    }

    pub fn push(&mut self, record: GameRecord) {
        let index = record.index;
        if record.is_void() {
            if !self.played.contains(index) && self.voided.insert(index) {
                self.waiting.insert(index, record);
            }
        } else if self.played.insert(index) {
            self.waiting.insert(index, record);
        }
    }

    /// The first record in game order, once enough later ones have come.
    pub fn next_ready(&mut self) -> Option<GameRecord> {
        // A void game is held: `--resume` may play it again later.
        let expected = self
            .waiting
            .first_key_value()
            .is_some_and(|(&i, r)| i == self.next && !r.is_void());
        if expected || self.waiting.len() > REORDER_WINDOW {
            self.pop()
        } else {
            None
        }
    }

    /// The first record in game order (at the end: every record held).
    pub fn pop(&mut self) -> Option<GameRecord> {
        let (index, record) = self.waiting.pop_first()?;
        if index < self.given_up_to {
            tracing::warn!(
                game = index,
                "a record came more than {REORDER_WINDOW} games out of order: it is taken late"
            );
        }
        self.given_up_to = self.given_up_to.max(index);
        if index >= self.next {
            self.next = index.saturating_add(self.step);
        }
        Some(record)
    }

    /// Whether a record of game `index` played to its end has come.
    pub fn has(&self, index: u64) -> bool {
        self.played.contains(index)
    }

    /// Games played to their end that have come.
    pub fn games(&self) -> u64 {
        self.played.len()
    }
}

/// A set of game indexes, a bit each: a million games in 125 KB. Indexes
/// past [`GameSet::DENSE`] (no run has so many games; a damaged record
/// may) are kept one by one, so that no index can ask for a huge bitmap.
#[derive(Clone, Debug, Default)]
pub struct GameSet {
    words: Vec<u64>,
    sparse: std::collections::BTreeSet<u64>,
    len: u64,
}

impl GameSet {
    pub const DENSE: u64 = 1 << 27;

    pub fn contains(&self, index: u64) -> bool {
        if index >= Self::DENSE {
            return self.sparse.contains(&index);
        }
        let (word, bit) = ((index / 64) as usize, index % 64);
        self.words.get(word).is_some_and(|w| w & (1 << bit) != 0)
    }

    /// Adds `index`; false when it was there already.
    pub fn insert(&mut self, index: u64) -> bool {
        if self.contains(index) {
            return false;
        }
        if index >= Self::DENSE {
            self.sparse.insert(index);
        } else {
            let (word, bit) = ((index / 64) as usize, index % 64);
            if self.words.len() <= word {
                self.words.resize(word + 1, 0);
            }
            self.words[word] |= 1 << bit;
        }
        self.len += 1;
        true
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
