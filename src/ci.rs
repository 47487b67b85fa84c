//! `referee ci SUITE.toml`: expectations about bots, checked by playing, for
//! authors who want their bot's strength and speed guarded in CI.
//!
//! Each `[[case]]` names a game, the bot, opponents (Chomp), how many games
//! and the seed, the game's limits, and what must hold. Cases are played
//! with the tournament machinery (`crate::tournament`), so a case is a small
//! tournament whose first entrant is the bot. See `docs/ci.md`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::bot::BotLimits;
use crate::units::parse_duration;
use crate::exit::Status;
use crate::stats::wilson95;
use crate::tournament::TournamentConfig;
use crate::tournament::spec::{EntrantSpec, GameKind, Limits, Spec};
use crate::tournament::units::Plan;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Suite {
    #[serde(rename = "case")]
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    game: GameKind,
    #[serde(default)]
    dir: Option<PathBuf>,
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    opponents: Vec<EntrantSpec>,
    games: u64,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    jobs: Option<usize>,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    expect: Expect,
}

/// What must hold. Every field is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    /// No crash (exit, signal, closed output, runtime error), no
    /// disqualification.
    #[serde(default)]
    no_crash: bool,
    /// No timeout (starvation, time limit).
    #[serde(default)]
    no_timeout: bool,
    /// No incorrect output (wrong answer).
    #[serde(default)]
    no_incorrect: bool,
    /// Even Steven: no winnable hand lost.
    #[serde(default)]
    no_unnecessary_loss: bool,
    /// Wilson 95% lower bound of the win rate at least this.
    win_rate: Option<f64>,
    /// Stop a win-rate case as soon as a sequential test decides it.
    #[serde(default)]
    sequential: bool,
    /// The sequential test's indifference margin above `win_rate`.
    margin: Option<f64>,
    /// Chomp: mean score at least this.
    mean_score: Option<f64>,
    /// The slowest move at most this.
    max_move: Option<String>,
    /// The 99th percentile of move times at most this.
    p99_move: Option<String>,
}

/// Error rates of the sequential test, each way.
const SPRT_ALPHA: f64 = 0.05;
const SPRT_BETA: f64 = 0.05;
const DEFAULT_MARGIN: f64 = 0.05;

/// A case's verdict.
#[derive(Debug)]
struct Outcome {
    name: String,
    pass: bool,
    /// What was measured.
    figures: String,
    /// Why it failed (empty when it passed).
    reasons: Vec<String>,
    time: Duration,
}

/// Runs a suite; with `junit`, writes the JUnit XML report there.
pub async fn run(file: &Path, junit: Option<&Path>, limits: BotLimits) -> Status {
    let suite: Suite = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|t| toml::from_str(&t).map_err(|e| e.to_string().trim_end().to_owned()))
    {
        Ok(suite) => suite,
        Err(e) => {
            eprintln!("referee ci: {}: {e}", file.display());
            return Status::Usage;
        }
    };
    let base = file
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let mut outcomes = Vec::new();
    for case in &suite.cases {
        let outcome = match run_case(case, &base, limits).await {
            Ok(outcome) => outcome,
            Err(e) => {
                eprintln!("referee ci: {}: case {:?}: {e}", file.display(), case.name);
                return Status::Usage;
            }
        };
        if outcome.pass {
            println!("PASS {}: {}", outcome.name, outcome.figures);
        } else {
            println!(
                "FAIL {}: {}; {}",
                outcome.name,
                outcome.figures,
                outcome.reasons.join("; ")
            );
        }
        outcomes.push(outcome);
    }
    let passed = outcomes.iter().filter(|o| o.pass).count();
    println!("ci: {passed} of {} cases passed", outcomes.len());
    if let Some(path) = junit
        && let Err(e) = write_junit(path, file, &outcomes)
    {
        eprintln!("referee ci: {}: {e}", path.display());
        return Status::Internal;
    }
    if passed == outcomes.len() {
        Status::Pass
    } else {
        Status::Fail
    }
}

async fn run_case(case: &Case, base: &Path, limits: BotLimits) -> Result<Outcome, String> {
    let started = Instant::now();
    let mut entrants = vec![EntrantSpec {
        name: case.name.clone(),
        dir: case.dir.clone(),
        command: case.command.clone(),
    }];
    entrants.extend(case.opponents.iter().cloned());
    let spec = Spec {
        game: case.game,
        games: case.games,
        seed: case.seed,
        jobs: case.jobs,
        pin: false,
        limits: case.limits.clone(),
        entrants,
    };
    // The same checks as a tournament file's.
    crate::tournament::spec::check(&spec)?;
    let config = TournamentConfig {
        file: base.join("ci"),
        games: None,
        seed: None,
        jobs: case.jobs,
        pin: false,
        out: None,
        resume: false,
        shard: None,
        progress: false,
        limits,
    };
    let plan = Arc::new(Plan::prepare(&spec, base, &config).await?);
    let seed = case.seed.unwrap_or(1);
    let jobs = case
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let sprt = case
        .expect
        .win_rate
        .filter(|_| case.expect.sequential)
        .map(|p0| {
            let p1 = (p0 + case.expect.margin.unwrap_or(DEFAULT_MARGIN)).min(0.999);
            Sprt::new(p0.max(0.001), p1)
        });

    let mut records = Vec::new();
    let mut decided = None;
    let mut games = plan.play_all(1..=case.games, seed, jobs, false);
    while let Some(record) = games.next().await {
        records.push(record?);
        if let Some(sprt) = &sprt {
            let (wins, games) = wins(case.game, &records, &case.name);
            decided = sprt.decide(wins, games);
            if decided.is_some() {
                break;
            }
        }
    }
    // Games still in flight after a decision are abandoned.
    drop(games);
    Ok(judge(case, &records, decided, started.elapsed()))
}

/// The case's bot's wins (shared Chomp wins split) and games.
fn wins(kind: GameKind, records: &[Value], bot: &str) -> (f64, u64) {
    let mut wins = 0.0;
    let mut games = 0;
    for r in records {
        let results = r["results"].as_array().cloned().unwrap_or_default();
        let Some(mine) = results.iter().find(|x| x["entrant"] == bot) else {
            continue;
        };
        games += 1;
        if kind.solo() {
            wins += f64::from(u8::from(mine["won"] == true));
        } else {
            let best = results
                .iter()
                .filter_map(|x| x["score"].as_f64())
                .fold(f64::MIN, f64::max);
            let winners = results
                .iter()
                .filter(|x| x["score"].as_f64() == Some(best))
                .count() as f64;
            if mine["score"].as_f64() == Some(best) {
                wins += 1.0 / winners;
            }
        }
    }
    (wins, games)
}

/// Wald's sequential probability ratio test of p0 (fail) against p1
/// (pass) on win/loss outcomes.
struct Sprt {
    p0: f64,
    p1: f64,
}

impl Sprt {
    fn new(p0: f64, p1: f64) -> Sprt {
        Sprt { p0, p1 }
    }

    /// `Some(true)` to pass, `Some(false)` to fail, `None` to play on.
    fn decide(&self, wins: f64, games: u64) -> Option<bool> {
        let losses = games as f64 - wins;
        let llr =
            wins * (self.p1 / self.p0).ln() + losses * ((1.0 - self.p1) / (1.0 - self.p0)).ln();
        if llr >= ((1.0 - SPRT_BETA) / SPRT_ALPHA).ln() {
            Some(true)
        } else if llr <= (SPRT_BETA / (1.0 - SPRT_ALPHA)).ln() {
            Some(false)
        } else {
            None
        }
    }
}

fn micros_text(micros: u64) -> String {
    crate::games::chomp::standings::short_micros(micros)
}

/// Checks the expectations against what was played.
fn judge(case: &Case, records: &[Value], decided: Option<bool>, time: Duration) -> Outcome {
    let e = &case.expect;
    let mut reasons = Vec::new();
    let mine: Vec<&Value> = records
        .iter()
        .flat_map(|r| r["results"].as_array().into_iter().flatten())
        .filter(|x| x["entrant"] == case.name.as_str())
        .collect();
    let count = |statuses: &[&str]| {
        mine.iter()
            .filter(|x| statuses.contains(&x["status"].as_str().unwrap_or("")))
            .count()
    };
    let first_error = |statuses: &[&str]| {
        mine.iter()
            .find(|x| statuses.contains(&x["status"].as_str().unwrap_or("")))
            .and_then(|x| x["error"].as_str())
            .map_or(String::new(), |e| format!(" (first: {e})"))
    };
    let crashes = ["crashed", "runtime_error", "internal_error", "disqualified"];
    let timeouts = ["starved", "timeout", "time_limit"];
    let incorrect = ["incorrect_output", "wrong_answer"];
    if e.no_crash && count(&crashes) > 0 {
        reasons.push(format!(
            "{} crash(es){}",
            count(&crashes),
            first_error(&crashes)
        ));
    }
    if e.no_timeout && count(&timeouts) > 0 {
        reasons.push(format!(
            "{} timeout(s){}",
            count(&timeouts),
            first_error(&timeouts)
        ));
    }
    if e.no_incorrect && count(&incorrect) > 0 {
        reasons.push(format!(
            "{} incorrect output(s){}",
            count(&incorrect),
            first_error(&incorrect)
        ));
    }
    let unnecessary = mine
        .iter()
        .filter(|x| x["outcome"] == "lose_unnecessarily")
        .count();
    if e.no_unnecessary_loss && unnecessary > 0 {
        reasons.push(format!("{unnecessary} winnable hand(s) lost"));
    }

    let (wins, games) = wins(case.game, records, &case.name);
    let (low, high) = wilson95(wins.round() as u64, games);
    let rate = if games == 0 { 0.0 } else { wins / games as f64 };
    let mut figures = vec![format!("{games} games")];
    if case.game.solo() || e.win_rate.is_some() {
        figures.push(format!(
            "win rate {:.1}% (95% CI {:.1}%-{:.1}%)",
            100.0 * rate,
            100.0 * low,
            100.0 * high
        ));
    }
    if let Some(want) = e.win_rate {
        match decided {
            Some(true) => figures.push(format!(
                "decided early by the sequential test (p >= {:.1}%)",
                100.0 * (want + e.margin.unwrap_or(DEFAULT_MARGIN)).min(0.999)
            )),
            Some(false) => reasons.push(format!(
                "win rate below {:.1}% (the sequential test decided after {games} games)",
                100.0 * want
            )),
            None if low < want => reasons.push(format!(
                "win rate's Wilson lower bound {:.1}% < {:.1}%",
                100.0 * low,
                100.0 * want
            )),
            None => {}
        }
    }
    if case.game == GameKind::Chomp {
        let scores: Vec<f64> = mine.iter().filter_map(|x| x["score"].as_f64()).collect();
        let (mean, half) = crate::stats::mean_ci95(&scores);
        figures.push(format!("mean score {mean:.1} ± {:.1}", half.unwrap_or(0.0)));
        if let Some(want) = e.mean_score
            && mean < want
        {
            reasons.push(format!("mean score {mean:.1} < {want}"));
        }
    }
    // Move times: every move where the records list them, else each game's
    // slowest move (Chomp, Aces Up).
    let mut moves: Vec<u64> = mine
        .iter()
        .flat_map(|x| match x["micros"].as_array() {
            Some(all) => all.iter().filter_map(Value::as_u64).collect::<Vec<_>>(),
            None => x["slowest_micros"].as_u64().into_iter().collect(),
        })
        .collect();
    moves.sort_unstable();
    let slowest = moves.last().copied().unwrap_or(0);
    let p99 = moves
        .get((moves.len() * 99).div_ceil(100).saturating_sub(1))
        .copied()
        .unwrap_or(0);
    figures.push(format!(
        "slowest move {}, p99 {}",
        micros_text(slowest),
        micros_text(p99)
    ));
    for (limit, measured, what) in [
        (&e.max_move, slowest, "slowest move"),
        (&e.p99_move, p99, "p99 move"),
    ] {
        if let Some(limit) = limit {
            match parse_duration(limit) {
                Ok(d) if u128::from(measured) > d.as_micros() => {
                    reasons.push(format!("{what} {} > {limit}", micros_text(measured)));
                }
                Ok(_) => {}
                Err(err) => reasons.push(format!("bad expect limit {limit:?}: {err}")),
            }
        }
    }
    Outcome {
        name: case.name.clone(),
        pass: reasons.is_empty(),
        figures: figures.join(", "),
        reasons,
        time,
    }
}

fn write_junit(path: &Path, suite: &Path, outcomes: &[Outcome]) -> Result<(), String> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("referee ci");
    let mut test_suite = TestSuite::new(suite.display().to_string());
    for o in outcomes {
        let status = if o.pass {
            TestCaseStatus::success()
        } else {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message(o.reasons.join("; "));
            status
        };
        let mut case = TestCase::new(o.name.clone(), status);
        case.set_time(o.time);
        case.set_system_out(o.figures.clone());
        test_suite.add_test_case(case);
    }
    report.add_test_suite(test_suite);
    let xml = report.to_string().map_err(|e| e.to_string())?;
    std::fs::write(path, xml).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequential_test_decides_clear_cases_early() {
        let sprt = Sprt::new(0.5, 0.55);
        assert_eq!(sprt.decide(10.0, 10), None);
        // 95% wins over 100 games: clearly above 55%.
        assert_eq!(sprt.decide(95.0, 100), Some(true));
        // 30% wins: clearly below.
        assert_eq!(sprt.decide(30.0, 100), Some(false));
    }
}
