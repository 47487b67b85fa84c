//! Small statistics for standings: means with confidence intervals.

/// Mean and the half-width of its two-sided 95% confidence interval
/// (Student's t with n − 1 degrees of freedom); the half-width is `None`
/// for fewer than two values.
pub fn mean_ci95(values: &[f64]) -> (f64, Option<f64>) {
    let n = values.len();
    if n == 0 {
        return (0.0, None);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, None);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, Some(t975(n - 1) * (var / n as f64).sqrt()))
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
}
