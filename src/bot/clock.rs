//! Time per move and time controls.
//!
//! Every reply has a cap (`--timeout`). With a time control
//! (`--time-control BASE+INC`, as chess tools have them) the bot also has
//! a clock for the whole game (Even Steven) or match (Septica): it starts
//! at BASE, runs while the bot thinks, and gains INC after each move.
//! A reply may take the smaller of the cap and what is left on the clock;
//! running out of either is a timeout, and the record says which
//! ([`Phase::Move`] or [`Phase::Clock`]). A process's first reply has the
//! start-up allowance on top of both, and the allowance is not charged to
//! the clock (see [`super::Bot::reply_deadline`]).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::BotError;
use crate::outcome::Phase;

/// `BASE+INC`: a clock of BASE per game, INC added after each move; or
/// [`TimeControl::NONE`], no clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    pub base: Duration,
    pub increment: Duration,
}

impl TimeControl {
    /// `none` (fastchess's `tc=inf`): no clock, only the cap on each
    /// move, over a clock given elsewhere (a game file's). A [`Timer`]
    /// under it has no clock.
    pub const NONE: TimeControl = TimeControl {
        base: Duration::ZERO,
        increment: Duration::ZERO,
    };

    pub fn is_none(self) -> bool {
        self == TimeControl::NONE
    }
}

impl FromStr for TimeControl {
    type Err = String;

    /// `10s+100ms`, `1m` (no increment), `2s+0s`, `none`.
    fn from_str(text: &str) -> Result<TimeControl, String> {
        if text.trim() == "none" {
            return Ok(TimeControl::NONE);
        }
        let (base, increment) = match text.split_once('+') {
            Some((base, inc)) => (base, Some(inc)),
            None => (text, None),
        };
        let parse = |part: &str, what: &str| {
            crate::units::parse_duration(part.trim()).map_err(|e| {
                format!("{text:?}: bad {what} ({e}); expected BASE+INC, e.g. 10s+100ms, or none")
            })
        };
        let base = parse(base, "base time")?;
        if base.is_zero() {
            return Err(format!("{text:?}: the base time must be longer than zero"));
        }
        let increment = increment.map_or(Ok(Duration::ZERO), |inc| parse(inc, "increment"))?;
        Ok(TimeControl { base, increment })
    }
}

impl<'de> serde::Deserialize<'de> for TimeControl {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TimeControl, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_none() {
            return f.write_str("none");
        }
        write!(
            f,
            "{}+{}",
            crate::units::human_duration(self.base),
            crate::units::human_duration(self.increment)
        )
    }
}

/// The limits on a bot's replies: the cap on one move and, optionally, a
/// time control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveLimits {
    pub timeout: Duration,
    pub control: Option<TimeControl>,
}

impl MoveLimits {
    pub fn per_move(timeout: Duration) -> MoveLimits {
        MoveLimits {
            timeout,
            control: None,
        }
    }
}

/// One game's (or match's) timer: the cap, and the clock if there is one.
#[derive(Clone, Debug)]
pub struct Timer {
    limits: MoveLimits,
    /// Time left on the clock.
    left: Option<Duration>,
    /// How far a move may overrun the clock without losing (see
    /// [`Timer::with_margin`]).
    margin: Duration,
}

impl Timer {
    /// A fresh timer, at the start of a game; under
    /// [`TimeControl::NONE`], without a clock.
    pub fn new(mut limits: MoveLimits) -> Timer {
        limits.control = limits.control.filter(|c| !c.is_none());
        Timer {
            limits,
            left: limits.control.map(|c| c.base),
            margin: Duration::ZERO,
        }
    }

    /// The timer with a clock margin, as fastchess's `timemargin`: a move
    /// that overruns what is left on the clock by at most `margin` is not
    /// a loss, and leaves the clock at 0 (then the increment is added).
    /// The move limit (`--timeout`) has no margin.
    pub fn with_margin(mut self, margin: Duration) -> Timer {
        self.margin = margin;
        self
    }

    /// The cap and the time control it runs under.
    pub fn limits(&self) -> MoveLimits {
        self.limits
    }

    /// Time left on the clock, if there is one.
    pub fn left(&self) -> Option<Duration> {
        self.left
    }

    /// How long the next reply may take (start-up allowance not included):
    /// what is left on the clock and its margin, within the move limit.
    pub fn limit(&self) -> Duration {
        match self.left {
            Some(left) => left.saturating_add(self.margin).min(self.limits.timeout),
            None => self.limits.timeout,
        }
    }

    /// Charges a reply that took `elapsed`, of which `allowance` was the
    /// start-up allowance (not charged), and adds the increment.
    pub fn charge(&mut self, elapsed: Duration, allowance: Duration) {
        if let (Some(left), Some(control)) = (self.left.as_mut(), self.limits.control) {
            *left = left
                .saturating_sub(elapsed.saturating_sub(allowance))
                .saturating_add(control.increment);
        }
    }

    /// Takes a move that failed after `elapsed` off the clock, without the
    /// increment: what is left then (0 when the clock ran out) is what the
    /// judge is told. Call [`Timer::classify`] first: it reads the clock
    /// the move started with.
    pub fn spend(&mut self, elapsed: Duration) {
        if let Some(left) = self.left.as_mut() {
            *left = left.saturating_sub(elapsed);
        }
    }

    /// A timeout that happened because the clock, not the cap, ran out is
    /// a clock timeout.
    pub fn classify(&self, mut error: BotError) -> BotError {
        if let BotError::Timeout { phase, .. } = &mut error
            && *phase == Phase::Move
            && self
                .left
                .is_some_and(|left| left.saturating_add(self.margin) < self.limits.timeout)
        {
            *phase = Phase::Clock;
        }
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_controls_parse_and_print() {
        let tc: TimeControl = "10s+100ms".parse().unwrap();
        assert_eq!(tc.base, Duration::from_secs(10));
        assert_eq!(tc.increment, Duration::from_millis(100));
        assert_eq!(tc.to_string(), "10s+100ms");
        assert_eq!(
            "1m".parse::<TimeControl>().unwrap().increment,
            Duration::ZERO
        );
        assert!("0s+1s".parse::<TimeControl>().is_err());
        let none: TimeControl = "none".parse().unwrap();
        assert!(none.is_none());
        assert_eq!(none.to_string(), "none");
        let limits = MoveLimits {
            timeout: Duration::from_secs(1),
            control: Some(none),
        };
        assert_eq!(
            Timer::new(limits).limits(),
            MoveLimits::per_move(limits.timeout)
        );
        assert!(
            "ten+1s"
                .parse::<TimeControl>()
                .unwrap_err()
                .contains("base time")
        );
        assert!(
            "1s+x"
                .parse::<TimeControl>()
                .unwrap_err()
                .contains("increment")
        );
    }

    #[test]
    fn the_clock_runs_and_gains_the_increment() {
        let limits = MoveLimits {
            timeout: Duration::from_secs(1),
            control: Some("2s+100ms".parse().unwrap()),
        };
        let mut timer = Timer::new(limits);
        assert_eq!(timer.limit(), Duration::from_secs(1));
        // The first reply: 5s, of which 4.5s were start-up allowance.
        timer.charge(Duration::from_secs(5), Duration::from_millis(4500));
        assert_eq!(timer.left, Some(Duration::from_millis(1600)));
        timer.charge(Duration::from_millis(900), Duration::ZERO);
        assert_eq!(timer.limit(), Duration::from_millis(800));
        let timeout = BotError::Timeout {
            limit: timer.limit(),
            waited: timer.limit(),
            phase: Phase::Move,
            silent: false,
            at_memory_limit: None,
        };
        assert!(matches!(
            timer.classify(timeout),
            BotError::Timeout {
                phase: Phase::Clock,
                ..
            }
        ));
        timer.spend(Duration::from_secs(2));
        assert_eq!(timer.left, Some(Duration::ZERO));
    }

    /// fastchess's `timemargin`: an overrun within the margin leaves the
    /// clock at 0 plus the increment; the margin never lifts the move limit.
    #[test]
    fn a_margin_forgives_a_small_overrun_of_the_clock() {
        let limits = MoveLimits {
            timeout: Duration::from_secs(1),
            control: Some("300ms+50ms".parse().unwrap()),
        };
        let mut timer = Timer::new(limits).with_margin(Duration::from_millis(100));
        assert_eq!(timer.limit(), Duration::from_millis(400));
        timer.charge(Duration::from_millis(360), Duration::ZERO);
        assert_eq!(timer.left, Some(Duration::from_millis(50)));
        let timer = Timer::new(MoveLimits {
            timeout: Duration::from_millis(350),
            ..limits
        })
        .with_margin(Duration::from_millis(100));
        assert_eq!(timer.limit(), Duration::from_millis(350));
    }
}
