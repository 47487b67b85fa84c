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
        write!(f, "{}", humantime::format_duration(self.0))
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
