//! Who plays next in a league: pure functions of the versions' standings,
//! so the policy is tested apart from any game.
//!
//! The policy (`docs/league.md` says it with its knobs):
//!
//! 1. **A new version plays first**, until its rating is known: while a
//!    version's uncertainty is above [`Policy::known`] (a one-player
//!    game's: the half-width of its win rate's 95% interval above
//!    [`Policy::known_rate`]), the table is built around the most
//!    uncertain one. CodinGame's arena does the same with a new
//!    submission; psyleague gives new bots priority too.
//! 2. **Every version keeps a minimum share**: one that has played less
//!    than [`Policy::min_share`] of its fair share of the games (all games
//!    × seats ÷ versions) is at the next table.
//! 3. Otherwise **games go where they tell the most**: the table whose
//!    outcome is least certain and whose ratings are least known, that is
//!    the pair with the largest `(σa² + σb²) · p · (1 − p)`, `p` the
//!    chance that `a` beats `b` under the ratings (Weng-Lin's model), as
//!    TrueSkill's match quality does. A small random factor (from the
//!    league's seed) keeps equal candidates from meeting over and over.
//!
//! A one-player game has no table: the version chosen by the same rules
//! plays its next deal (every version plays the deals in the same order,
//! so two versions compare on the deals both played).

use crate::rng::SplitMix64;

/// A version that may play, as the standings know it.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The league's number for it.
    pub id: usize,
    /// Games between players: its rating and uncertainty (Weng-Lin's μ
    /// and σ). One-player games: its win rate and the half-width of its
    /// 95% interval.
    pub rating: f64,
    pub uncertainty: f64,
    /// Games finished, and in flight.
    pub games: u64,
    pub in_flight: u64,
}

/// The matchmaking's knobs.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// A rating is known below this uncertainty (Weng-Lin's σ starts at
    /// 25/3 ≈ 8.3; 2.5 is about 15 games against known opponents).
    pub known: f64,
    /// A win rate is known below this half-width of its 95% interval.
    pub known_rate: f64,
    /// The least part of its fair share of games a version is held to.
    pub min_share: f64,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            known: 2.5,
            known_rate: 0.1,
            min_share: 0.5,
        }
    }
}

/// Weng-Lin's β: the spread of one game's performance.
const BETA: f64 = 25.0 / 6.0;

/// The next table of `seats` versions among `candidates` (their ids, in
/// seat order), or `None` when there are too few.
pub fn table(
    candidates: &[Candidate],
    seats: usize,
    policy: &Policy,
    rng: &mut SplitMix64,
) -> Option<Vec<usize>> {
    if seats == 0 || candidates.len() < seats {
        return None;
    }
    let first = focus(candidates, policy, |c| c.uncertainty > policy.known)
        .or_else(|| most_telling_pair(candidates, rng).map(|(a, _)| a))?;
    let mut at_table = vec![first];
    while at_table.len() < seats {
        let gains: Vec<(usize, f64)> = (0..candidates.len())
            .filter(|i| !at_table.contains(i))
            .map(|i| {
                let gain: f64 = at_table
                    .iter()
                    .map(|&t| information(&candidates[t], &candidates[i]))
                    .sum();
                (i, gain * jitter(rng))
            })
            .collect();
        let next = gains.iter().max_by(|a, b| a.1.total_cmp(&b.1))?.0;
        at_table.push(next);
    }
    Some(at_table.into_iter().map(|i| candidates[i].id).collect())
}

/// The version that plays its next deal of a one-player game.
pub fn solo(candidates: &[Candidate], policy: &Policy, rng: &mut SplitMix64) -> Option<usize> {
    if candidates.is_empty() {
        return None;
    }
    let at =
        focus(candidates, policy, |c| c.uncertainty > policy.known_rate).unwrap_or_else(|| {
            // The widest interval (equal ones taking turns).
            let keys: Vec<f64> = candidates
                .iter()
                .map(|c| c.uncertainty * jitter(rng))
                .collect();
            (0..candidates.len())
                .max_by(|&x, &y| keys[x].total_cmp(&keys[y]))
                .unwrap_or(0)
        });
    Some(candidates[at].id)
}

/// The version a table is built around, by rules 1 and 2: the most
/// uncertain of those not known yet, else the one furthest below its
/// minimum share.
fn focus(
    candidates: &[Candidate],
    policy: &Policy,
    unknown: impl Fn(&Candidate) -> bool,
) -> Option<usize> {
    let played = |c: &Candidate| c.games + c.in_flight;
    let new = (0..candidates.len())
        .filter(|&i| unknown(&candidates[i]))
        .min_by(|&x, &y| {
            let (a, b) = (&candidates[x], &candidates[y]);
            played(a)
                .cmp(&played(b))
                .then(b.uncertainty.total_cmp(&a.uncertainty))
        });
    if new.is_some() {
        return new;
    }
    let total: u64 = candidates.iter().map(played).sum();
    // A game of K seats counts K times in `total`: a fair share is
    // `total / n` whatever K.
    let fair = total as f64 / candidates.len() as f64;
    (0..candidates.len())
        .filter(|&i| (played(&candidates[i]) as f64) < policy.min_share * fair)
        .min_by_key(|&i| played(&candidates[i]))
}

/// The pair whose game tells the most, if there are two candidates.
fn most_telling_pair(candidates: &[Candidate], rng: &mut SplitMix64) -> Option<(usize, usize)> {
    let mut best: Option<((usize, usize), f64)> = None;
    for a in 0..candidates.len() {
        for b in a + 1..candidates.len() {
            let value = information(&candidates[a], &candidates[b]) * jitter(rng);
            if best.is_none_or(|(_, v)| value > v) {
                best = Some(((a, b), value));
            }
        }
    }
    best.map(|(pair, _)| pair)
}

/// What a game between `a` and `b` tells: how uncertain its outcome is
/// (`p (1 − p)`) times how little their ratings are known.
fn information(a: &Candidate, b: &Candidate) -> f64 {
    let spread = (2.0 * BETA * BETA + a.uncertainty.powi(2) + b.uncertainty.powi(2)).sqrt();
    let p = normal_cdf((a.rating - b.rating) / spread);
    (a.uncertainty.powi(2) + b.uncertainty.powi(2)) * p * (1.0 - p)
}

/// 1 ± 5%: equal candidates take turns.
fn jitter(rng: &mut SplitMix64) -> f64 {
    0.95 + 0.1 * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Φ(x), by the Abramowitz–Stegun approximation of erf (error < 1.5e-7).
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: usize, rating: f64, uncertainty: f64, games: u64) -> Candidate {
        Candidate {
            id,
            rating,
            uncertainty,
            games,
            in_flight: 0,
        }
    }

    #[test]
    fn a_new_version_plays_first() {
        let mut rng = SplitMix64::new(1);
        let known = [
            c(0, 30.0, 1.0, 100),
            c(1, 25.0, 1.0, 100),
            c(2, 20.0, 1.0, 100),
        ];
        let mut all = known.to_vec();
        all.push(c(3, 25.0, 8.3, 0));
        for _ in 0..20 {
            let t = table(&all, 2, &Policy::default(), &mut rng).unwrap();
            assert_eq!(t[0], 3, "{t:?}");
            // Its opponent is the one whose game tells the most: the
            // closest rating.
            assert_eq!(t[1], 1, "{t:?}");
        }
    }

    #[test]
    fn a_version_below_its_share_is_at_the_next_table() {
        let mut rng = SplitMix64::new(2);
        let all = [
            c(0, 25.0, 1.0, 300),
            c(1, 25.0, 1.0, 300),
            c(2, 40.0, 1.0, 50),
        ];
        let t = table(&all, 2, &Policy::default(), &mut rng).unwrap();
        assert!(t.contains(&2), "{t:?}");
    }

    #[test]
    fn known_versions_meet_where_the_outcome_is_least_certain() {
        let mut rng = SplitMix64::new(3);
        let all = [
            c(0, 40.0, 1.5, 100),
            c(1, 25.0, 1.5, 100),
            c(2, 24.0, 1.5, 100),
            c(3, 10.0, 1.5, 100),
        ];
        let mut met = std::collections::BTreeMap::new();
        for _ in 0..200 {
            let mut t = table(&all, 2, &Policy::default(), &mut rng).unwrap();
            t.sort_unstable();
            *met.entry(t).or_insert(0) += 1;
        }
        assert!(met[&vec![1, 2]] > 150, "{met:?}");
    }

    #[test]
    fn tables_of_more_seats_and_too_few_candidates() {
        let mut rng = SplitMix64::new(4);
        let all = [c(0, 25.0, 8.3, 0), c(1, 25.0, 8.3, 0), c(2, 25.0, 8.3, 0)];
        let mut t = table(&all, 3, &Policy::default(), &mut rng).unwrap();
        t.sort_unstable();
        assert_eq!(t, [0, 1, 2]);
        assert_eq!(table(&all[..1], 2, &Policy::default(), &mut rng), None);
        assert_eq!(solo(&[], &Policy::default(), &mut rng), None);
    }

    #[test]
    fn alone_the_widest_interval_plays() {
        let mut rng = SplitMix64::new(5);
        let all = [
            c(0, 0.5, 0.05, 400),
            c(1, 0.5, 0.3, 10),
            c(2, 0.9, 0.02, 900),
        ];
        assert_eq!(solo(&all, &Policy::default(), &mut rng), Some(1));
        let known = [
            c(0, 0.5, 0.05, 400),
            c(1, 0.5, 0.08, 300),
            c(2, 0.9, 0.02, 400),
        ];
        assert_eq!(solo(&known, &Policy::default(), &mut rng), Some(1));
    }

    #[test]
    fn the_normal_cdf_is_close() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-4);
        assert!((normal_cdf(-1.0) - 0.158_655).abs() < 1e-5);
    }
}
