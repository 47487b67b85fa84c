//! Units on the command line and in TOML files: durations, sizes, counts.
//! A leaf module: it imports nothing from the crate, so the command line,
//! tournament files and ci suites all parse values the same way.

use std::time::Duration;

/// A resource limit from the command line; `None` is "no limit".
#[derive(Clone, Copy, Debug)]
pub struct Limit(pub Option<u64>);

/// Sizes: bytes, or with K/M/G (×1000) or KiB/MiB/GiB (×1024); `none`.
pub fn parse_size(text: &str) -> Result<Limit, String> {
    if text == "none" {
        return Ok(Limit(None));
    }
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?}: expected a size such as 2GiB, 512MiB or 1000000"))?;
    let scale: u64 = match unit {
        "" | "B" => 1,
        "K" | "KB" => 1_000,
        "M" | "MB" => 1_000_000,
        "G" | "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (use K, M, G, KiB, MiB or GiB)"
            ));
        }
    };
    number
        .checked_mul(scale)
        .map(|n| Limit(Some(n)))
        .ok_or_else(|| format!("{text:?}: too large"))
}

pub fn parse_count(text: &str) -> Result<Limit, String> {
    if text == "none" {
        return Ok(Limit(None));
    }
    text.parse()
        .map(|n| Limit(Some(n)))
        .map_err(|_| format!("{text:?}: expected a whole number or `none`"))
}

pub fn parse_cpu(text: &str) -> Result<Limit, String> {
    if text == "none" {
        return Ok(Limit(None));
    }
    parse_positive_duration(text).map(|d| Limit(Some(d.as_secs().max(1))))
}

/// A human duration such as `45s`, `250ms` or `1m30s`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    // Not `--show-stderr`, taken for the value when the value was left out.
    if text
        .strip_prefix('-')
        .is_some_and(|t| t.starts_with(|c: char| c.is_ascii_digit()))
    {
        return Err("a duration cannot be negative".into());
    }
    humantime::parse_duration(text)
        .map_err(|e| format!("{e} (expected a duration such as 10s, 250ms or 1m30s)"))
}

/// A duration as people read it, rounded to what matters at its size:
/// `850us`, `12.3ms`, `150ms`, `1.5s`, `10.64s`, `2m 5s`, `1h 30m`.
pub fn human_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    // Each size is rounded first, so that 999.96ms reads `1s`, not `1000ms`.
    let round = |unit: u128| (ns + unit / 2) / unit;
    let decimals = |whole: u128, frac: u128, places: usize, unit: &str| {
        let frac = format!("{frac:0places$}");
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() {
            format!("{whole}{unit}")
        } else {
            format!("{whole}.{frac}{unit}")
        }
    };
    if ns == 0 {
        return "0s".to_owned();
    }
    if ns < 1_000 {
        return format!("{ns}ns");
    }
    if round(1_000) < 1_000 {
        return format!("{}us", round(1_000));
    }
    let tenths_ms = round(100_000);
    if tenths_ms < 10_000 {
        return decimals(tenths_ms / 10, tenths_ms % 10, 1, "ms");
    }
    let centis = round(10_000_000);
    if centis < 6_000 {
        return decimals(centis / 100, centis % 100, 2, "s");
    }
    let secs = round(1_000_000_000);
    let parts = [(secs / 3600, "h"), (secs / 60 % 60, "m"), (secs % 60, "s")];
    parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// [`human_duration`] of a number of microseconds, as records keep times.
pub fn human_micros(micros: u64) -> String {
    human_duration(Duration::from_micros(micros))
}

/// A number of games, matches, decks or jobs: a whole number, at least 1.
pub fn parse_at_least_one(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        // `-3` is a number too, only not one that can be meant here.
        Err(_) if text.parse::<i64>().is_ok() => Err("must be at least 1".into()),
        Err(_) => Err(format!("{text:?}: expected a whole number, at least 1")),
    }
}

/// A path as the command line gives it, made absolute here, once: what
/// the referee reads, writes and hides from bots never depends on the
/// working directory again (a bare `t.toml` has the parent `""`, which a
/// sandbox could not hide). Symbolic links are kept, as given.
pub fn parse_absolute_path(text: &str) -> Result<std::path::PathBuf, String> {
    if text.is_empty() {
        return Err("an empty path".into());
    }
    std::path::absolute(text).map_err(|e| format!("{text:?}: {e}"))
}

/// A line cap between 1 byte and 1 GiB.
pub fn parse_max_line(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1 << 30).contains(&n) => Ok(n),
        _ => Err("expected a number of bytes from 1 to 1073741824".into()),
    }
}

pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        d if d.is_zero() => Err("must be longer than zero".into()),
        d => Ok(d),
    }
}

/// A duration in a TOML file (`"250ms"`, `"1m30s"`), parsed when the file
/// is read, so that a bad value is reported with the file's line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TomlDuration(pub Duration);

impl<'de> serde::Deserialize<'de> for TomlDuration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TomlDuration, D::Error> {
        let text = String::deserialize(d)?;
        parse_duration(text.trim())
            .map(TomlDuration)
            .map_err(|e| serde::de::Error::custom(format!("{text:?}: {e}")))
    }
}

impl std::fmt::Display for TomlDuration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&human_duration(self.0))
    }
}

/// A size in a TOML file: `"256MiB"`, `"2GiB"`, as on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TomlSize(pub u64);

impl<'de> serde::Deserialize<'de> for TomlSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TomlSize, D::Error> {
        let text = String::deserialize(d)?;
        match parse_size(text.trim()) {
            Ok(Limit(Some(bytes))) if bytes > 0 => Ok(TomlSize(bytes)),
            Ok(_) => Err(serde::de::Error::custom(format!(
                "{text:?}: expected a size above zero, such as 256MiB"
            ))),
            Err(e) => Err(serde::de::Error::custom(e)),
        }
    }
}

/// The line (from 1) of byte `offset` of `text`, as a TOML span gives it.
pub fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// A TOML error on one line: `line L, column C: what`.
pub fn toml_error(e: &toml::de::Error) -> String {
    let text = e.to_string();
    // The crate's message is several lines (the source line quoted, a
    // caret); the first says where and the last says what.
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("").trim();
    let what = e.message().trim();
    let place = first
        .strip_prefix("TOML parse error at ")
        .unwrap_or(first)
        .to_owned();
    if place.is_empty() || place == what {
        what.to_owned()
    } else {
        format!("{place}: {what}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_write_them() {
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_nanos(300), "300ns"),
            (Duration::from_micros(850), "850us"),
            (Duration::from_micros(12_345), "12.3ms"),
            (Duration::from_nanos(110_066_994), "110.1ms"),
            (Duration::from_millis(150), "150ms"),
            (Duration::from_micros(999_960), "1s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_micros(1_250_000), "1.25s"),
            (Duration::from_nanos(10_639_859_000), "10.64s"),
            (Duration::from_secs(45), "45s"),
            (Duration::from_millis(59_999), "1m"),
            (Duration::from_secs(125), "2m 5s"),
            (Duration::from_secs(5400), "1h 30m"),
            (Duration::from_secs(3605), "1h 5s"),
        ];
        for (d, text) in cases {
            assert_eq!(human_duration(d), text, "{d:?}");
        }
        assert_eq!(human_micros(850), "850us");
        // What is printed parses back where it is whole.
        assert_eq!(parse_duration("2m 5s"), Ok(Duration::from_secs(125)));
    }
}
