//! The project's random numbers: SplitMix64, seeded explicitly.
//!
//! Every random choice a referee makes (start cells, deals, the Septica
//! computer) comes from a seed that is printed and recorded, so any game
//! can be replayed. The generator is written out here rather than taken
//! from a crate so that the same seed gives the same games in every version.

/// Steele, Lea and Flood's SplitMix64.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// A generator for the `index`-th game of a run with seed `seed`:
    /// independent streams that do not depend on how many numbers earlier
    /// games drew.
    pub fn for_game(seed: u64, index: u64) -> SplitMix64 {
        let mut mixer = SplitMix64::new(seed ^ index.wrapping_mul(GOLDEN).rotate_left(17));
        SplitMix64::new(mixer.next_u64())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), without modulo bias (Lemire's method).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        let threshold = n.wrapping_neg() % n;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(n);
            if (product as u64) >= threshold {
                return (product >> 64) as u64;
            }
        }
    }

    /// Shuffles `items` in place (Fisher–Yates, from the last position
    /// down): the decks of Septica and Aces Up, so replays depend on it.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.index(i + 1));
        }
    }

    /// Uniform index into a slice of length `len` (`len > 0`).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }
}

/// A fresh seed for runs where the user gave none. Kept below 2^32 so it is
/// easy to read and retype.
pub fn fresh_seed() -> u64 {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    let from_os = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok();
    let raw = if from_os {
        u64::from_le_bytes(bytes)
    } else {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        nanos ^ u64::from(std::process::id()).rotate_left(32)
    };
    SplitMix64::new(raw).next_u64() >> 32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        // SplitMix64 from seed 0: the published first outputs.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = SplitMix64::new(7);
        let mut seen = [false; 6];
        for _ in 0..1000 {
            let x = rng.below(6) as usize;
            seen[x] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn games_get_distinct_streams() {
        let a = SplitMix64::for_game(1, 0).next_u64();
        let b = SplitMix64::for_game(1, 1).next_u64();
        let c = SplitMix64::for_game(2, 0).next_u64();
        assert!(a != b && a != c && b != c);
        assert_eq!(a, SplitMix64::for_game(1, 0).next_u64());
    }
}
