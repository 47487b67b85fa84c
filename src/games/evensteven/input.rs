//! The dealer's own input: one `N seed` line per game, blank lines ignored.

use super::deal::{MAX_HAND, MAX_SEED, MIN_SEED};

/// One game to deal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameSpec {
    pub n: usize,
    pub seed: u32,
}

/// What is wrong with a dealer input line; the caller adds where it is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("expected `N seed`, found only one field")]
    MissingSeed,
    #[error("expected `N seed`, found {0} fields")]
    ExtraFields(usize),
    #[error("N must be a whole number from 1 to {MAX_HAND}, found {0:?}")]
    BadN(String),
    #[error("seed must be a whole number from {MIN_SEED} to {MAX_SEED}, found {0:?}")]
    BadSeed(String),
    #[error("the line is not valid UTF-8")]
    NotUtf8,
}

/// Parses one line (without its `\n`). `Ok(None)` for a blank line.
/// Fields are separated by spaces or tabs; a trailing `\r` is allowed.
pub fn parse_line(line: &[u8]) -> Result<Option<GameSpec>, InputError> {
    let line = std::str::from_utf8(line).map_err(|_| InputError::NotUtf8)?;
    let mut fields = line.split_ascii_whitespace();
    let Some(n) = fields.next() else {
        return Ok(None);
    };
    let seed = fields.next().ok_or(InputError::MissingSeed)?;
    let extra = fields.count();
    if extra > 0 {
        return Err(InputError::ExtraFields(2 + extra));
    }
    let n = parse_in_range(n, 1, MAX_HAND as u32).ok_or_else(|| InputError::BadN(n.into()))?;
    let seed =
        parse_in_range(seed, MIN_SEED, MAX_SEED).ok_or_else(|| InputError::BadSeed(seed.into()))?;
    Ok(Some(GameSpec {
        n: n as usize,
        seed,
    }))
}

/// Plain decimal digits only (no sign), within `lo..=hi`.
fn parse_in_range(text: &str, lo: u32, hi: u32) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: u32 = text.parse().ok()?;
    (lo..=hi).contains(&value).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_sample() {
        assert_eq!(
            parse_line(b"4 876390176"),
            Ok(Some(GameSpec {
                n: 4,
                seed: 876_390_176
            }))
        );
        assert_eq!(
            parse_line(b" 13\t2147483646 \r"),
            Ok(Some(GameSpec {
                n: 13,
                seed: 2_147_483_646
            }))
        );
        assert_eq!(parse_line(b""), Ok(None));
        assert_eq!(parse_line(b"  \r"), Ok(None));
    }

    #[test]
    fn rejects_out_of_range_and_junk() {
        assert_eq!(parse_line(b"0 5"), Err(InputError::BadN("0".into())));
        assert_eq!(parse_line(b"14 5"), Err(InputError::BadN("14".into())));
        assert_eq!(parse_line(b"4 0"), Err(InputError::BadSeed("0".into())));
        assert_eq!(
            parse_line(b"4 2147483647"),
            Err(InputError::BadSeed("2147483647".into()))
        );
        assert_eq!(parse_line(b"4 +5"), Err(InputError::BadSeed("+5".into())));
        assert_eq!(parse_line(b"four 5"), Err(InputError::BadN("four".into())));
        assert_eq!(parse_line(b"4"), Err(InputError::MissingSeed));
        assert_eq!(parse_line(b"4 5 6"), Err(InputError::ExtraFields(3)));
        assert_eq!(
            parse_line(b"4 99999999999999999999"),
            Err(InputError::BadSeed("99999999999999999999".into()))
        );
        assert_eq!(parse_line(b"4 \xff"), Err(InputError::NotUtf8));
    }
}
