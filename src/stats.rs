//! Small statistics for standings: means with confidence intervals; and
//! the head-to-head SPRT shared by `referee ci` and `referee tournament`.

/// Mean and the half-width of its two-sided 95% confidence interval
/// (Student's t with n − 1 degrees of freedom); the half-width is `None`
/// for fewer than two values.
pub fn mean_ci95(values: &[f64]) -> (f64, Option<f64>) {
    let mut moments = Moments::default();
    for &v in values {
        moments.add(v);
    }
    moments.mean_ci95()
}

/// A series summarised as it comes, without its values: count, mean, and
/// the sum of squared deviations from the mean (Welford's method, which
/// stays accurate over millions of values).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    pub fn add(&mut self, x: f64) {
        self.add_many(x, 1);
    }

    /// Adds `k` values equal to `x` (Chan et al.'s combination of two
    /// series, one of them constant).
    pub fn add_many(&mut self, x: f64, k: u64) {
        if k == 0 {
            return;
        }
        let n = self.n + k;
        let delta = x - self.mean;
        self.mean += delta * k as f64 / n as f64;
        self.m2 += delta * delta * (self.n as f64) * (k as f64) / n as f64;
        self.n = n;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// As [`mean_ci95`].
    pub fn mean_ci95(&self) -> (f64, Option<f64>) {
        match self.n {
            0 => (0.0, None),
            1 => (self.mean, None),
            n => {
                let var = (self.m2 / (n - 1) as f64).max(0.0);
                let df = usize::try_from(n - 1).unwrap_or(usize::MAX);
                (self.mean, Some(t975(df) * (var / n as f64).sqrt()))
            }
        }
    }
}

/// Wilson's 95% score interval for a proportion of `wins` in `n` trials,
/// as `(low, high)`; `(0, 1)` when there are no trials.
pub fn wilson95(wins: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_964f64;
    let n = n as f64;
    let p = wins as f64 / n;
    let denominator = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The 97.5% quantile of Student's t distribution with `df` degrees of
/// freedom: exact table values to 30, then the Cornish–Fisher expansion,
/// which is within 1e-4 of the true value there.
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => {
            let z: f64 = 1.959_964;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// A head-to-head sequential test (GSPRT) on game pairs, as fishtest and
/// fastchess run one: H0 "the new version's logistic Elo is `elo0`"
/// against H1 "it is `elo1`", with error rates `alpha` (passing a version
/// that is no better than `elo0`) and `beta` (failing one that is `elo1`
/// better).
///
/// The model is pentanomial: each pair of games scores 0, ¼, ½, ¾ or 1
/// (the mean of its two games' scores, each 0, ½ or 1), and the five
/// frequencies are free. The log-likelihood ratio is the generalized one:
/// under each hypothesis, the pentanomial distribution nearest the
/// observed one (maximum likelihood) whose mean is the hypothesis's
/// expected score, `1 / (1 + 10^(-elo/400))`; the LLR is the number of
/// pairs times the observed frequencies' log ratio of the two.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// The score of each pentanomial outcome, from a pair of two losses to
/// a pair of two wins.
pub const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// What a pentanomial SPRT says after some pairs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtState {
    pub llr: f64,
    /// `ln(beta / (1 - alpha))`: at or below it, H0 is accepted (fail).
    pub lower: f64,
    /// `ln((1 - beta) / alpha)`: at or above it, H1 is accepted (pass).
    pub upper: f64,
    /// `Some(true)` H1 accepted, `Some(false)` H0 accepted, `None` go on.
    pub decision: Option<bool>,
}

impl Sprt {
    /// What is wrong with the parameters (none when the test is valid).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v.is_finite() && v > 0.0 && v < 1.0) {
                out.push(format!("{name} must be above 0 and below 1, not {v}"));
            }
        }
        if !(self.elo0.is_finite() && self.elo1.is_finite() && self.elo0 < self.elo1) {
            out.push(format!(
                "elo0 must be below elo1, both finite (here elo0 = {}, elo1 = {})",
                self.elo0, self.elo1
            ));
        }
        if out.is_empty() && self.alpha + self.beta >= 1.0 {
            out.push(format!(
                "alpha + beta must be below 1 (here {} + {})",
                self.alpha, self.beta
            ));
        }
        out
    }

    pub fn lower(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    pub fn upper(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// The log-likelihood ratio of pentanomial counts `pairs` (pairs
    /// scoring 0, ¼, ½, ¾, 1). An empty outcome counts as a thousandth of
    /// a pair, as fastchess does, so that one-sided results (every pair
    /// won) still have a finite ratio.
    pub fn llr(&self, pairs: [u64; 5]) -> f64 {
        let n: u64 = pairs.iter().sum();
        if n == 0 {
            return 0.0;
        }
        let counts = pairs.map(|c| if c == 0 { 1e-3 } else { c as f64 });
        let total: f64 = counts.iter().sum();
        let p = counts.map(|c| c / total);
        let q0 = nearest_with_mean(&p, elo_to_score(self.elo0));
        let q1 = nearest_with_mean(&p, elo_to_score(self.elo1));
        total
            * p.iter()
                .zip(q0.iter().zip(&q1))
                .map(|(p, (q0, q1))| p * (q1 / q0).ln())
                .sum::<f64>()
    }

    pub fn state(&self, pairs: [u64; 5]) -> SprtState {
        let (llr, lower, upper) = (self.llr(pairs), self.lower(), self.upper());
        let decision = if llr >= upper {
            Some(true)
        } else if llr <= lower {
            Some(false)
        } else {
            None
        };
        SprtState {
            llr,
            lower,
            upper,
            decision,
        }
    }
}

/// Logistic Elo to expected score.
pub fn elo_to_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Expected score to logistic Elo (infinite at 0 and 1).
pub fn score_to_elo(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// The distribution `q` over [`PAIR_SCORES`] of mean `s` that maximizes
/// `Σ p ln q` (the most likely under the observed frequencies `p`, all
/// positive): `q_i = p_i / (1 + λ (a_i − s))`, with λ found by bisection
/// so that the `q_i` sum to 1.
fn nearest_with_mean(p: &[f64; 5], s: f64) -> [f64; 5] {
    let a = PAIR_SCORES;
    // Σ p_i (a_i − s) / (1 + λ (a_i − s)) is zero at the λ sought, and
    // decreases in λ over the range where every denominator is positive.
    let g = |lambda: f64| -> f64 {
        a.iter()
            .zip(p)
            .map(|(a, p)| p * (a - s) / (1.0 + lambda * (a - s)))
            .sum()
    };
    let (mut lo, mut hi) = (-1.0 / (1.0 - s), 1.0 / s);
    // Just inside the range's ends.
    let shrink = 1e-12;
    lo += shrink * (hi - lo);
    hi -= shrink * (hi - lo);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if g(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let lambda = 0.5 * (lo + hi);
    let q = std::array::from_fn(|i| p[i] / (1.0 + lambda * (a[i] - s)));
    let sum: f64 = q.iter().sum();
    q.map(|x| x / sum)
}

/// The Elo estimate from pentanomial counts, with its 95% interval: the
/// mean pair score, its standard error from the pairs' spread, each
/// turned into logistic Elo. `None` when there are no pairs.
pub fn pair_elo(pairs: [u64; 5]) -> Option<(f64, f64, f64)> {
    mean_score_elo(&pairs, &PAIR_SCORES)
}

/// The score of each single game's outcome: a loss, a draw, a win.
pub const GAME_SCORES: [f64; 3] = [0.0, 0.5, 1.0];

/// The Elo estimate from trinomial counts (games lost, drawn, won), with
/// its 95% interval, as [`pair_elo`] but over single games: for games
/// that are not paired, whose scores are independent. `None` when there
/// are no games.
pub fn game_elo(games: [u64; 3]) -> Option<(f64, f64, f64)> {
    mean_score_elo(&games, &GAME_SCORES)
}

/// The mean score of outcomes counted `counts`, each scoring `scores`,
/// and the bounds of its 95% interval, each as logistic Elo (see
/// [`Elo::estimate`]).
fn mean_score_elo(counts: &[u64], scores: &[f64]) -> Option<(f64, f64, f64)> {
    let e = Elo::estimate(EloModel::Trinomial, counts, scores)?;
    Some((e.elo, e.low, e.high))
}

/// The 97.5% quantile of the standard normal distribution, as fastchess
/// writes it.
pub const Z95: f64 = 1.959963984540054;

/// `800 / ln 10`: a normalised Elo per unit of score over its standard
/// deviation (fastchess's `scoreToNeloDiff`).
const NELO_SCALE: f64 = 800.0 / std::f64::consts::LN_10;

/// The error function, to about 1e-15: its Taylor series near 0, and
/// 1 − erfc by a continued fraction beyond 2.5 (libm's `erf` is not in
/// Rust's standard library).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return -erf(-x);
    }
    if x > 2.5 {
        return 1.0 - erfc_continued_fraction(x);
    }
    // erf x = 2/√π Σ (−1)ⁿ x^(2n+1) / (n! (2n + 1))
    let (mut term, mut sum) = (x, x);
    for n in 1..200 {
        term *= -x * x / n as f64;
        let add = term / (2 * n + 1) as f64;
        sum += add;
        if add.abs() < 1e-17 * sum.abs() {
            break;
        }
    }
    sum * std::f64::consts::FRAC_2_SQRT_PI
}

/// erfc x for x > 2.5: Laplace's continued fraction, evaluated from its
/// tail (e^(−x²)/√π · 1/(x + ½/(x + 1/(x + 3/2/(x + ...))))).
fn erfc_continued_fraction(x: f64) -> f64 {
    if x > 27.0 {
        return 0.0;
    }
    let mut tail = x;
    for k in (1..=60).rev() {
        tail = x + (k as f64 / 2.0) / tail;
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / tail
}

/// Which outcomes an [`Elo`] was estimated from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EloModel {
    /// Game pairs (`2k − 1`, `2k`), each scoring 0, ¼, ½, ¾ or 1: a pair
    /// plays one setup twice with the seats swapped, so the setup's luck
    /// cancels and the interval is narrower.
    Pentanomial,
    /// Single games, lost, drawn or won.
    Trinomial,
}

impl EloModel {
    pub fn name(self) -> &'static str {
        match self {
            EloModel::Pentanomial => "pentanomial",
            EloModel::Trinomial => "trinomial",
        }
    }
}

/// A logistic Elo difference of one entrant against another, with the
/// bounds of its 95% interval, its normalised Elo and its likelihood of
/// superiority, by fastchess's formulas (`app/src/matchmaking/elo/`:
/// `elo_wdl.cpp` for single games, `elo_pentanomial.cpp` for pairs). A
/// figure is infinite where its score is 0 or 1: the estimate when every
/// game (or pair) was won or lost, a bound when the interval reaches past
/// them (fastchess prints `nan` there).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Elo {
    pub model: EloModel,
    pub elo: f64,
    pub low: f64,
    pub high: f64,
    /// Normalised Elo: the score's distance from ½ in standard deviations
    /// of one game (of one pair over √2), times 800 / ln 10; `None` when
    /// every game (pair) scored the same, so that there is no spread.
    pub nelo: Option<f64>,
    /// Half the width of its 95% interval.
    pub nelo_error: f64,
    /// Likelihood of superiority: the probability, under the normal
    /// approximation, that the true score is above ½, from 0 to 1. With
    /// no spread it is 1 above ½, 0 below, ½ at ½ (fastchess: `nan`).
    pub los: f64,
}

impl Elo {
    /// From two entrants' games against each other, from the first's
    /// side: pentanomial when any pair is complete (the incomplete ones
    /// left out), else trinomial; `None` without any game.
    pub fn of(games: [u64; 3], pairs: [u64; 5]) -> Option<Elo> {
        Elo::estimate(EloModel::Pentanomial, &pairs, &PAIR_SCORES)
            .or_else(|| Elo::estimate(EloModel::Trinomial, &games, &GAME_SCORES))
    }

    /// The figures of outcomes counted `counts`, each scoring `scores`, as
    /// fastchess computes them: the mean score `s`, the spread `σ` of the
    /// `n` outcomes' scores (over `n`, not `n − 1`), the interval
    /// `s ± 1.96 σ/√n`, each turned into Elo by `−400 log₁₀(1/s − 1)`
    /// (clamped into 0..1: an interval past 1 is bounded by +∞, not NaN).
    /// `None` when nothing was counted.
    pub fn estimate(model: EloModel, counts: &[u64], scores: &[f64]) -> Option<Elo> {
        let n = counts.iter().sum::<u64>() as f64;
        if n == 0.0 {
            return None;
        }
        let weighted = |f: &dyn Fn(f64) -> f64| -> f64 {
            counts
                .iter()
                .zip(scores)
                .map(|(c, a)| *c as f64 * f(*a))
                .sum::<f64>()
                / n
        };
        let mean = weighted(&|a| a);
        let variance = weighted(&|a| (a - mean).powi(2));
        let standard_error = (variance / n).sqrt();
        let half = Z95 * standard_error;
        let elo = |s: f64| score_to_elo(s.clamp(0.0, 1.0));
        // A pair's two games: its spread is that of √2 games'.
        let games_per_outcome = match model {
            EloModel::Pentanomial => 2.0,
            EloModel::Trinomial => 1.0,
        };
        let nelo = (variance > 0.0)
            .then(|| (mean - 0.5) / (games_per_outcome * variance).sqrt() * NELO_SCALE);
        let los = if standard_error > 0.0 {
            (1.0 + erf((mean - 0.5) / (std::f64::consts::SQRT_2 * standard_error))) / 2.0
        } else {
            match mean.total_cmp(&0.5) {
                std::cmp::Ordering::Greater => 1.0,
                std::cmp::Ordering::Less => 0.0,
                std::cmp::Ordering::Equal => 0.5,
            }
        };
        Some(Elo {
            model,
            elo: elo(mean),
            low: elo(mean - half),
            high: elo(mean + half),
            nelo,
            // (nElo(s + half) − nElo(s − half)) / 2, which the spread cancels.
            nelo_error: Z95 / (games_per_outcome * n).sqrt() * NELO_SCALE,
            los,
        })
    }

    /// fastchess's `±`: half the interval's width in Elo; infinite when a
    /// bound is (and when the estimate is).
    pub fn error(&self) -> f64 {
        if self.low.is_finite() && self.high.is_finite() {
            (self.high - self.low) / 2.0
        } else {
            f64::INFINITY
        }
    }

    /// As fastchess and cutechess print it: `+35.2 ± 48.1 (95%)`, the
    /// `±` half the interval's width in Elo (the interval is not quite
    /// symmetric: `low` and `high` are exact). An unbounded interval is
    /// given by its bounds, `+338.0 (95%: +120.4 to +inf)`; an infinite
    /// estimate has no interval, `+inf (every game won)`.
    pub fn text(&self) -> String {
        // An even score's estimate may come out as -0.0: shown as +0.0.
        let Elo { elo, low, high, .. } = *self;
        let (elo, low, high) = (elo + 0.0, low + 0.0, high + 0.0);
        let unit = match self.model {
            EloModel::Pentanomial => "pair",
            EloModel::Trinomial => "game",
        };
        if elo == f64::INFINITY {
            format!("+inf (every {unit} won)")
        } else if elo == f64::NEG_INFINITY {
            format!("-inf (every {unit} lost)")
        } else if low.is_finite() && high.is_finite() {
            format!("{:+.1} ± {:.1} (95%)", elo, (high - low) / 2.0)
        } else {
            format!("{:+.1} (95%: {:+.1} to {:+.1})", elo, low, high)
        }
    }
}

impl Elo {
    /// The Elo as fastchess prints it, `58.45 +/- 82.82`; an unbounded
    /// interval by its bounds, `190.85 (95%: -126.44 to inf)`; an
    /// infinite estimate, `inf (every game won)`.
    pub fn fastchess_elo(&self) -> String {
        let (elo, low, high) = (self.elo + 0.0, self.low + 0.0, self.high + 0.0);
        let unit = match self.model {
            EloModel::Pentanomial => "pair",
            EloModel::Trinomial => "game",
        };
        if elo == f64::INFINITY {
            format!("inf (every {unit} won)")
        } else if elo == f64::NEG_INFINITY {
            format!("-inf (every {unit} lost)")
        } else if low.is_finite() && high.is_finite() {
            format!("{elo:.2} +/- {:.2}", self.error())
        } else {
            format!("{elo:.2} (95%: {low:.2} to {high:.2})")
        }
    }

    /// The normalised Elo as fastchess prints it, `64.52 +/- 87.91`; `—`
    /// when every game (pair) scored the same.
    pub fn fastchess_nelo(&self) -> String {
        match self.nelo {
            Some(nelo) => format!("{:.2} +/- {:.2}", nelo + 0.0, self.nelo_error),
            None => "—".to_owned(),
        }
    }

    /// The likelihood of superiority as a percentage, `92.48 %`.
    pub fn fastchess_los(&self) -> String {
        format!("{:.2} %", 100.0 * self.los)
    }
}

/// The lines fastchess prints after a match of two, from the first's
/// side, for its `games` (lost, drawn, won) and complete `pairs` (scoring
/// 0, ¼, ½, ¾, 1) with their Elo `elo`:
///
/// ```text
/// Elo: 25.37 +/- 31.34, nElo: 29.95 +/- 36.77
/// LOS: 94.48 %, DrawRatio: 27.99 %
/// Games: 343, Wins: 136, Losses: 111, Draws: 96, Points: 184.0 (53.64 %)
/// Ptnml(0-2): [20, 35, 60, 40, 16]
/// ```
///
/// The draw ratio is that of the model: games drawn, or pairs scoring ½.
pub fn match_lines(elo: &Elo, games: [u64; 3], pairs: [u64; 5]) -> String {
    let [losses, draws, wins] = games;
    let count = wins + draws + losses;
    let points = wins as f64 + draws as f64 / 2.0;
    let ratio = |part: f64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            100.0 * part / whole as f64
        }
    };
    let draw_ratio = match elo.model {
        EloModel::Pentanomial => ratio(pairs[2] as f64, pairs.iter().sum()),
        EloModel::Trinomial => ratio(draws as f64, count),
    };
    let mut text = format!(
        "Elo: {}, nElo: {}\nLOS: {}, DrawRatio: {draw_ratio:.2} %\n\
         Games: {count}, Wins: {wins}, Losses: {losses}, Draws: {draws}, Points: {points:.1} ({:.2} %)",
        elo.fastchess_elo(),
        elo.fastchess_nelo(),
        elo.fastchess_los(),
        ratio(points, count),
    );
    if elo.model == EloModel::Pentanomial {
        text.push_str(&format!(
            "\nPtnml(0-2): [{}]",
            pairs.map(|c| c.to_string()).join(", ")
        ));
    }
    text
}

/// Where a pentanomial Elo comes from, in words: `10 game pairs (games
/// 2k−1 and 2k), pentanomial [0, 1, 4, 3, 2]`.
pub fn pairs_text(pairs: [u64; 5]) -> String {
    let count: u64 = pairs.iter().sum();
    format!(
        "{count} game pair{} (games 2k−1 and 2k), pentanomial [{}]",
        if count == 1 { "" } else { "s" },
        pairs.map(|c| c.to_string()).join(", ")
    )
}

/// Two entrants' games against each other, from the first's side, as
/// they are counted: each game lost, drawn or won, and game pairs
/// (`2k − 1`, `2k`) as both their games come.
#[derive(Clone, Debug, Default)]
pub struct HeadToHead {
    /// Games the first lost, drew, won.
    pub games: [u64; 3],
    pairs: Pairs,
}

impl HeadToHead {
    /// Game `index`, in which the first scored `score` (0, ½ or 1).
    pub fn add(&mut self, index: u64, score: f64) {
        self.games[outcome(score * 2.0, 2)] += 1;
        self.pairs.add(index, score);
    }

    /// A game that is in no pair (at a table of more than two seats, by
    /// the two's places): it counts as a single game only.
    pub fn add_unpaired(&mut self, score: f64) {
        self.games[outcome(score * 2.0, 2)] += 1;
    }

    /// The complete pairs scoring 0, ¼, ½, ¾, 1 for the first.
    pub fn pairs(&self) -> [u64; 5] {
        self.pairs.counts
    }
}

/// `x` rounded into `0..=most`, an index into counts (NaN is 0): a score
/// that cannot be one still counts somewhere, without a panic.
fn outcome(x: f64, most: usize) -> usize {
    (x.round().clamp(0.0, most as f64) as usize).min(most)
}

/// A head-to-head sequential test as written in a file (ci's
/// `expect.sprt`, a tournament's `sprt`); `alpha` and `beta` default to 5%.
#[derive(Clone, Copy, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SprtSpec {
    pub elo0: f64,
    pub elo1: f64,
    #[serde(default = "five_percent")]
    pub alpha: f64,
    #[serde(default = "five_percent")]
    pub beta: f64,
}

fn five_percent() -> f64 {
    0.05
}

impl SprtSpec {
    pub fn test(&self) -> Sprt {
        Sprt {
            elo0: self.elo0,
            elo1: self.elo1,
            alpha: self.alpha,
            beta: self.beta,
        }
    }
}

/// Head-to-head games gathered into pairs (games `2k − 1` and `2k`) as
/// they finish, in any order.
#[derive(Clone, Debug, Default)]
pub struct Pairs {
    /// Pairs scoring 0, ¼, ½, ¾, 1 for the bot.
    pub counts: [u64; 5],
    /// The first game of each pair still waiting for its second.
    waiting: std::collections::BTreeMap<u64, f64>,
}

impl Pairs {
    /// Most first games kept waiting: a pair whose second game has not
    /// come after this many later pairs began (a shard's games skip it,
    /// a game is missing) is let go, so that the memory does not grow
    /// with the games.
    const MOST_WAITING: usize = 4096;

    pub fn add(&mut self, index: u64, score: f64) {
        let pair = index.div_ceil(2);
        match self.waiting.remove(&pair) {
            Some(other) => self.counts[outcome((score + other) * 2.0, 4)] += 1,
            None => {
                self.waiting.insert(pair, score);
                if self.waiting.len() > Self::MOST_WAITING {
                    self.waiting.pop_first();
                }
            }
        }
    }
}

/// The head-to-head test in words, and as JUnit properties.
pub fn sprt_figures(
    test: &Sprt,
    state: &SprtState,
    counts: [u64; 5],
) -> (String, Vec<(String, String)>) {
    let pairs: u64 = counts.iter().sum();
    let verdict = match state.decision {
        Some(true) => "H1 accepted",
        Some(false) => "H0 accepted",
        None => "undecided",
    };
    let elo = pair_elo(counts);
    let elo_text = elo.map_or("no pairs".to_owned(), |(e, low, high)| {
        format!("Elo {e:+.1} (95% CI {low:+.1} to {high:+.1})")
    });
    let penta = counts.map(|c| c.to_string()).join(", ");
    let text = format!(
        "SPRT [{}, {}] vs baseline: LLR {:.2} ({:.2}, {:.2}), {verdict}, {elo_text}, {} games ({pairs} pairs, pentanomial [{penta}])",
        test.elo0,
        test.elo1,
        state.llr,
        state.lower,
        state.upper,
        2 * pairs
    );
    let mut props = vec![
        ("sprt.llr".to_owned(), format!("{:.3}", state.llr)),
        ("sprt.lower".to_owned(), format!("{:.3}", state.lower)),
        ("sprt.upper".to_owned(), format!("{:.3}", state.upper)),
        ("sprt.elo0".to_owned(), test.elo0.to_string()),
        ("sprt.elo1".to_owned(), test.elo1.to_string()),
        ("sprt.result".to_owned(), verdict.to_owned()),
        ("sprt.games".to_owned(), (2 * pairs).to_string()),
        ("sprt.pentanomial".to_owned(), penta),
    ];
    if let Some((e, low, high)) = elo {
        props.push(("sprt.elo".to_owned(), format!("{e:.1}")));
        props.push(("sprt.elo_low".to_owned(), format!("{low:.1}")));
        props.push(("sprt.elo_high".to_owned(), format!("{high:.1}")));
    }
    (text, props)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles() {
        assert_eq!(t975(1), 12.706);
        assert!((t975(40) - 2.021).abs() < 1e-3);
        assert!((t975(120) - 1.980).abs() < 1e-3);
        assert!((t975(100_000) - 1.960).abs() < 1e-3);
    }

    #[test]
    fn wilson_interval() {
        assert_eq!(wilson95(0, 0), (0.0, 1.0));
        // 900 of 1000: 0.8798 .. 0.9170.
        let (low, high) = wilson95(900, 1000);
        assert!(
            (low - 0.8798).abs() < 1e-3 && (high - 0.9170).abs() < 1e-3,
            "{low} {high}"
        );
        let (low, high) = wilson95(0, 10);
        assert_eq!(low, 0.0);
        assert!((high - 0.2775).abs() < 1e-3);
    }

    #[test]
    fn mean_and_interval() {
        assert_eq!(mean_ci95(&[]), (0.0, None));
        assert_eq!(mean_ci95(&[3.0]), (3.0, None));
        let (mean, half) = mean_ci95(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(mean, 2.5);
        // sd = 1.2910, se = 0.6455, t(3) = 3.182
        assert!((half.unwrap() - 2.054).abs() < 1e-3);
    }
    #[test]
    fn logistic_elo_and_score() {
        assert!((elo_to_score(0.0) - 0.5).abs() < 1e-12);
        // 400 Elo: ten to one.
        assert!((elo_to_score(400.0) - 10.0 / 11.0).abs() < 1e-12);
        assert!((score_to_elo(10.0 / 11.0) - 400.0).abs() < 1e-9);
    }

    #[test]
    fn the_pentanomial_llr_of_only_won_and_lost_pairs_is_the_binomial_one() {
        // With pairs only 0 or 1, the most likely distribution of mean s
        // is (1 − s, 0, 0, 0, s): the LLR is the binomial one, by hand:
        // 30 won, 10 lost, elo0 = 0 (s0 = 0.5), elo1 = 400 (s1 = 10/11):
        // 30 ln(s1/s0) + 10 ln((1 − s1)/(1 − s0)) = 17.935 − 17.047 = 0.8876.
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 400.0,
            alpha: 0.05,
            beta: 0.05,
        };
        let by_hand = 30.0 * (20.0f64 / 11.0).ln() + 10.0 * (2.0f64 / 11.0).ln();
        assert!((by_hand - 0.8876).abs() < 1e-3, "{by_hand}");
        // The thousandth of a pair put in each empty outcome moves it a
        // little.
        let llr = sprt.llr([10, 0, 0, 0, 30]);
        assert!((llr - by_hand).abs() < 0.01, "{llr} vs {by_hand}");
    }

    #[test]
    fn the_pentanomial_llr_is_near_its_normal_approximation() {
        // Results near the hypotheses: the GSPRT's LLR is close to the
        // normal approximation (s1 − s0)(2 m − s0 − s1) / (2 σ²/N) over
        // pairs (far from them, as with a 60% score, the two part).
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 10.0,
            alpha: 0.05,
            beta: 0.05,
        };
        let pairs = [30, 200, 500, 220, 40];
        let n = 990.0;
        let mean = (200.0 * 0.25 + 500.0 * 0.5 + 220.0 * 0.75 + 40.0) / n;
        let var = pairs
            .iter()
            .zip(PAIR_SCORES)
            .map(|(c, a)| *c as f64 * (a - mean).powi(2))
            .sum::<f64>()
            / n;
        let (s0, s1) = (elo_to_score(0.0), elo_to_score(10.0));
        let normal = (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var / n);
        let llr = sprt.llr(pairs);
        assert!(
            (llr - normal).abs() < 0.005 * normal.abs(),
            "{llr} vs {normal}"
        );
        // Bounds of α = β = 5%: ±ln(19) = ±2.944.
        assert!((sprt.upper() - 2.944).abs() < 1e-3);
        assert!((sprt.lower() + 2.944).abs() < 1e-3);
        assert_eq!(sprt.state(pairs).decision, None);
    }

    #[test]
    fn the_pentanomial_test_decides_clear_cases() {
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 5.0,
            alpha: 0.05,
            beta: 0.05,
        };
        assert_eq!(sprt.llr([0; 5]), 0.0);
        assert_eq!(sprt.state([0, 0, 0, 0, 0]).decision, None);
        assert_eq!(sprt.state([0, 16, 80, 160, 160]).decision, Some(true));
        assert_eq!(sprt.state([160, 160, 80, 16, 0]).decision, Some(false));
        // All pairs drawn: the new version is no better; H0 eventually.
        assert_eq!(sprt.state([0, 0, 5000, 0, 0]).decision, Some(false));
        assert!(sprt.problems().is_empty());
        let bad = Sprt {
            elo0: 5.0,
            elo1: 5.0,
            alpha: 0.0,
            beta: 1.5,
        };
        assert_eq!(bad.problems().len(), 3, "{:?}", bad.problems());
    }

    #[test]
    fn elo_from_pairs() {
        assert_eq!(pair_elo([0; 5]), None);
        let (elo, low, high) = pair_elo([0, 0, 10, 0, 0]).unwrap();
        assert_eq!((elo, low, high), (0.0, 0.0, 0.0));
        // Mean pair score 0.75: 190.8 Elo.
        let (elo, low, high) = pair_elo([0, 0, 10, 0, 10]).unwrap();
        assert!((elo - 190.85).abs() < 0.1, "{elo}");
        assert!(low < elo && elo < high);
    }

    #[test]
    fn elo_from_single_games() {
        assert_eq!(game_elo([0; 3]), None);
        assert_eq!(game_elo([0, 10, 0]), Some((0.0, 0.0, 0.0)));
        // 30 won, 10 drawn, 20 lost: mean 0.5833, +58.5 Elo; the 95%
        // interval of the mean, 0.4698 .. 0.6969, is -21.0 .. +144.6.
        let (elo, low, high) = game_elo([20, 10, 30]).unwrap();
        assert!((elo - 58.45).abs() < 0.01, "{elo}");
        assert!((low + 21.02).abs() < 0.01, "{low}");
        assert!((high - 144.62).abs() < 0.01, "{high}");
        // Reversed counts: the other side, negated.
        let (elo2, low2, high2) = game_elo([30, 10, 20]).unwrap();
        assert!(
            (elo + elo2).abs() < 1e-9 && (low + high2).abs() < 1e-9 && (high + low2).abs() < 1e-9
        );
    }

    #[test]
    fn an_elo_from_pairs_when_any_is_complete_else_from_games() {
        assert_eq!(Elo::of([0; 3], [0; 5]), None);
        // Mean pair score 0.75: +190.8, whatever the single games say.
        let e = Elo::of([5, 0, 5], [0, 0, 10, 0, 10]).unwrap();
        assert_eq!(e.model, EloModel::Pentanomial);
        assert!((e.elo - 190.85).abs() < 0.01, "{e:?}");
        let e = Elo::of([1, 0, 3], [0; 5]).unwrap();
        assert_eq!(e.model, EloModel::Trinomial);
        assert!((e.elo - 190.85).abs() < 0.01, "{e:?}");
        // 2, 4, 8, 6 pairs scoring ¼ .. 1: +168.4, -86.3 .. +273.4.
        let e = Elo::of([0; 3], [0, 2, 4, 8, 6]).unwrap();
        assert!(
            (e.low - 86.25).abs() < 0.01 && (e.high - 273.44).abs() < 0.01,
            "{e:?}"
        );
        assert_eq!(e.text(), "+168.4 ± 93.6 (95%)");
    }

    #[test]
    fn one_sided_results_print_without_nan() {
        let won = Elo::of([0, 0, 5], [0; 5]).unwrap();
        assert_eq!(won.elo, f64::INFINITY);
        assert_eq!(won.text(), "+inf (every game won)");
        let lost = Elo::of([0; 3], [3, 0, 0, 0, 0]).unwrap();
        assert_eq!(lost.elo, f64::NEG_INFINITY);
        assert_eq!(lost.text(), "-inf (every pair lost)");
        // An interval past a score of 1: its bound is +inf.
        let e = Elo::of([1, 0, 3], [0; 5]).unwrap();
        assert_eq!(e.high, f64::INFINITY);
        assert_eq!(e.text(), "+190.8 (95%: -126.4 to +inf)");
        for e in [won, lost, e] {
            assert!(![e.elo, e.low, e.high].iter().any(|x| x.is_nan()), "{e:?}");
        }
    }

    #[test]
    fn head_to_head_pairs_only_complete_pairs() {
        let mut h = HeadToHead::default();
        // Games 1 and 2 a pair (won, drawn: ¾), 3 alone, 6 without 5.
        for (index, score) in [(2, 0.5), (3, 1.0), (1, 1.0), (6, 0.0)] {
            h.add(index, score);
        }
        assert_eq!(h.games, [1, 1, 2]);
        assert_eq!(h.pairs(), [0, 0, 0, 1, 0]);
        // A score that is none still counts, without a panic.
        h.add(7, f64::NAN);
        h.add(8, 7.0);
        assert_eq!(h.games, [2, 1, 3]);
    }

    #[test]
    fn pairs_waiting_for_their_second_game_are_bounded() {
        let mut pairs = Pairs::default();
        for k in 0..10_000 {
            pairs.add(2 * k + 1, 1.0);
        }
        assert_eq!(pairs.waiting.len(), Pairs::MOST_WAITING);
        assert_eq!(pairs.counts, [0; 5]);
        pairs.add(20_000, 1.0);
        assert_eq!(pairs.counts, [0, 0, 0, 0, 1]);
    }

    /// fastchess's own figures for the same counts (its `EloWDL` and
    /// `EloPentanomial` built into a small program:
    /// Elo, ±, nElo, ±, LOS as it prints it).
    fn assert_fastchess(e: &Elo, figures: (f64, f64, f64, f64, &str)) {
        let (elo, error, nelo, nelo_error, los) = figures;
        let near = |a: f64, b: f64| (a - b).abs() < 1e-3;
        assert!(near(e.elo, elo), "{e:?} vs {figures:?}");
        assert!(
            near(e.error(), error) || (e.error().is_infinite() && error.is_nan()),
            "{e:?} vs {figures:?}"
        );
        assert!(
            e.nelo.is_some_and(|n| near(n, nelo)),
            "{e:?} vs {figures:?}"
        );
        assert!(near(e.nelo_error, nelo_error), "{e:?} vs {figures:?}");
        assert_eq!(e.fastchess_los(), los, "{e:?}");
    }

    /// Wins, losses, draws as fastchess's `Stats(wins, losses, draws)`.
    fn games(wins: u64, losses: u64, draws: u64) -> Elo {
        Elo::estimate(EloModel::Trinomial, &[losses, draws, wins], &GAME_SCORES).unwrap()
    }

    /// fastchess's six pentanomial counts, `Stats(ll, ld, wl, dd, wd, ww)`:
    /// a pair won and lost and a pair of draws both score ½.
    fn pairs(ll: u64, ld: u64, wl: u64, dd: u64, wd: u64, ww: u64) -> Elo {
        Elo::estimate(
            EloModel::Pentanomial,
            &[ll, ld, wl + dd, wd, ww],
            &PAIR_SCORES,
        )
        .unwrap()
    }

    #[test]
    fn single_games_give_fastchess_figures() {
        let nan = f64::NAN;
        assert_fastchess(
            &games(136, 111, 96),
            (25.368279, 31.338381, 29.952056, 36.768451, "94.48 %"),
        );
        assert_fastchess(
            &games(76, 123, 89),
            (-57.211106, 33.714271, -69.563998, 40.126026, "0.03 %"),
        );
        assert_fastchess(
            &games(34, 0, 356),
            (30.366343, 9.804404, 107.371435, 34.481812, "100.00 %"),
        );
        assert_fastchess(
            &games(30, 20, 10),
            (58.451214, 82.821818, 64.517169, 87.911717, "92.48 %"),
        );
        assert_fastchess(
            &games(5, 5, 0),
            (0.0, 251.776910, 0.0, 215.338850, "50.00 %"),
        );
        // An interval past a score of 1: fastchess's ± is nan, ours +inf.
        let e = games(3, 1, 0);
        assert_fastchess(&e, (190.848502, nan, 200.592029, 340.480617, "87.59 %"));
        assert_eq!(e.fastchess_elo(), "190.85 (95%: -126.45 to inf)");
        assert_eq!(games(136, 111, 96).fastchess_elo(), "25.37 +/- 31.34");
        assert_eq!(games(136, 111, 96).fastchess_nelo(), "29.95 +/- 36.77");
    }

    #[test]
    fn game_pairs_give_fastchess_figures() {
        assert_fastchess(
            &pairs(34, 54, 31, 32, 64, 75),
            (55.579780, 27.653430, 57.935600, 28.275376, "100.00 %"),
        );
        assert_fastchess(
            &pairs(332, 433, 457, 41, 333, 334),
            (-8.642667, 10.334194, -9.172914, 10.960459, "5.05 %"),
        );
        assert_fastchess(
            &pairs(0, 2, 0, 4, 8, 6),
            (168.402125, 93.597016, 234.372583, 107.669425, "100.00 %"),
        );
        assert_fastchess(
            &pairs(3, 5, 2, 4, 6, 1),
            (-24.859163, 85.729551, -31.200637, 105.074600, "28.03 %"),
        );
        assert_fastchess(
            &pairs(1, 1, 0, 0, 0, 0),
            (-338.039216, f64::NAN, -737.022176, 340.480617, "0.00 %"),
        );
    }

    #[test]
    fn one_result_every_time_has_no_nan() {
        // fastchess: all draws, nElo and LOS nan; all won, nElo inf and ±
        // nan. Here: no nElo (no spread), LOS ½, 1 or 0, no NaN anywhere.
        for (e, los, text) in [
            (games(0, 0, 10), "50.00 %", "0.00 +/- 0.00"),
            (pairs(0, 0, 0, 10, 0, 0), "50.00 %", "0.00 +/- 0.00"),
            (games(10, 0, 0), "100.00 %", "inf (every game won)"),
            (pairs(0, 0, 0, 0, 0, 10), "100.00 %", "inf (every pair won)"),
            (games(0, 10, 0), "0.00 %", "-inf (every game lost)"),
            (pairs(10, 0, 0, 0, 0, 0), "0.00 %", "-inf (every pair lost)"),
        ] {
            assert_eq!(e.nelo, None, "{e:?}");
            assert_eq!(e.fastchess_nelo(), "—");
            assert_eq!(e.fastchess_los(), los, "{e:?}");
            assert_eq!(e.fastchess_elo(), text, "{e:?}");
            assert!(!e.los.is_nan() && !e.nelo_error.is_nan() && !e.error().is_nan());
        }
    }

    #[test]
    fn the_error_function() {
        // Tabulated values.
        for (x, erf_x) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (2.5, 0.999_593_047_982_555),
            (3.0, 0.999_977_909_503_001_4),
            (4.0, 0.999_999_984_582_742_1),
        ] {
            assert!((erf(x) - erf_x).abs() < 1e-12, "erf({x}) = {}", erf(x));
            assert!((erf(-x) + erf_x).abs() < 1e-12);
        }
        assert_eq!(erf(40.0), 1.0);
        assert!(erf(f64::NAN).is_nan());
    }

    #[test]
    fn a_match_prints_as_fastchess_does() {
        let [l, d, w] = [111, 96, 136];
        let e = Elo::of([l, d, w], [0; 5]).unwrap();
        assert_eq!(
            match_lines(&e, [l, d, w], [0; 5]),
            "Elo: 25.37 +/- 31.34, nElo: 29.95 +/- 36.77\n\
             LOS: 94.48 %, DrawRatio: 27.99 %\n\
             Games: 343, Wins: 136, Losses: 111, Draws: 96, Points: 184.0 (53.64 %)"
        );
        let e = Elo::of([3, 2, 5], [0, 2, 4, 8, 6]).unwrap();
        let text = match_lines(&e, [3, 2, 5], [0, 2, 4, 8, 6]);
        assert!(
            text.starts_with(
                "Elo: 168.40 +/- 93.60, nElo: 234.37 +/- 107.67\nLOS: 100.00 %, DrawRatio: 20.00 %"
            ),
            "{text}"
        );
        assert!(text.ends_with("\nPtnml(0-2): [0, 2, 4, 8, 6]"), "{text}");
    }

    /// fastchess 1.8.2's own lines after real matches (Stockfish at 600
    /// against 400 nodes, `-rounds 20 -repeat`; `-report penta=false` for
    /// the game model): the same figures, without its pair ratios
    /// (`PairsRatio`, `WL/DD Ratio`), which need won-lost pairs told
    /// apart from drawn ones.
    #[test]
    fn real_fastchess_matches_print_the_same_figures() {
        for (games, pairs, fastchess) in [
            (
                [5, 0, 15],
                [1, 0, 3, 0, 6],
                "Elo: 190.85 +/- 256.71, nElo: 183.11 +/- 152.27\n\
                 LOS: 99.08 %, DrawRatio: 30.00 %\n\
                 Games: 20, Wins: 15, Losses: 5, Draws: 0, Points: 15.0 (75.00 %)\n\
                 Ptnml(0-2): [1, 0, 3, 0, 6]",
            ),
            (
                [8, 0, 32],
                [1, 0, 6, 0, 13],
                "Elo: 240.82 +/- 159.36, nElo: 252.80 +/- 107.67\n\
                 LOS: 100.00 %, DrawRatio: 30.00 %\n\
                 Games: 40, Wins: 32, Losses: 8, Draws: 0, Points: 32.0 (80.00 %)\n\
                 Ptnml(0-2): [1, 0, 6, 0, 13]",
            ),
            (
                [5, 0, 15],
                [0; 5],
                "Elo: 190.85 +/- 217.62, nElo: 200.59 +/- 152.27\n\
                 LOS: 99.51 %, DrawRatio: 0.00 %\n\
                 Games: 20, Wins: 15, Losses: 5, Draws: 0, Points: 15.0 (75.00 %)",
            ),
            (
                [6, 0, 24],
                [0; 5],
                "Elo: 240.82 +/- 187.54, nElo: 260.58 +/- 124.33\n\
                 LOS: 100.00 %, DrawRatio: 0.00 %\n\
                 Games: 30, Wins: 24, Losses: 6, Draws: 0, Points: 24.0 (80.00 %)",
            ),
        ] {
            let elo = Elo::of(games, pairs).unwrap();
            assert_eq!(match_lines(&elo, games, pairs), fastchess);
        }
    }
}
