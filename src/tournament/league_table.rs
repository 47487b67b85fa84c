//! A league's `[league]` table: the matchmaking's knobs, read where the
//! rest of the league's file is read (`spec::load_league`), and used by
//! `league::matchmaking`, which says what each does.

use serde::Deserialize;

/// The matchmaking's knobs: the file's `[league]` table, each key
/// optional.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// A rating is known below this uncertainty (Weng-Lin's σ starts at
    /// 25/3 ≈ 8.3; a new version in a class of 30 is below 2.5 after
    /// about 56 games at tables of two, 28 at tables of three).
    pub known: f64,
    /// A win rate is known below this half-width of its 95% interval.
    pub known_rate: f64,
    /// A new version plays first for at most this many games.
    pub batch: u64,
    /// The least part of its fair share of the recent games a version is
    /// held to.
    pub min_share: f64,
    /// The most part of its fair share of the recent games a version
    /// takes while others can fill its table.
    pub max_share: f64,
    /// Recent games: a game counts `e^(−age/window)`.
    pub window: u64,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            known: 2.5,
            known_rate: 0.1,
            batch: 100,
            min_share: 0.5,
            max_share: 1.5,
            window: 1000,
        }
    }
}

/// The longest window: games far older than this are a lifetime.
pub const LONGEST_WINDOW: u64 = 1_000_000_000;

impl Policy {
    /// What makes no sense in a `[league]` table, each naming its key.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |holds: bool, what: &str| {
            if !holds {
                out.push(format!("league.{what}"));
            }
        };
        check(
            self.known > 0.0 && self.known.is_finite(),
            "known must be above 0 (an uncertainty, Weng-Lin's σ: 25/3 at the start)",
        );
        check(
            self.known_rate > 0.0 && self.known_rate < 1.0,
            "known_rate must be above 0 and below 1 (a half-width of a win rate's interval)",
        );
        check(
            (0.0..=1.0).contains(&self.min_share),
            "min_share must be from 0 to 1 (a part of a fair share)",
        );
        check(
            self.max_share >= 1.0 && !self.max_share.is_nan(),
            "max_share must be at least 1 (a multiple of a fair share; inf for no limit)",
        );
        check(
            (1..=LONGEST_WINDOW).contains(&self.window),
            &format!("window must be from 1 to {LONGEST_WINDOW} games"),
        );
        out
    }
}
