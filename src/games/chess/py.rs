//! Text as Python writes it, where the chess judge's messages, PGN and
//! refusals must read exactly as those of `games/chess/judge.py`, the
//! judge this one replaced and still the protocol's example: `repr` of a
//! string (`illegal move 'e2e5'`), `json.dumps` of a value (its option
//! messages), `str.split()` (whose whitespace is not Rust's), `%g`, float
//! `repr`, and difflib's closest match. Each is the part of Python's
//! behaviour the judge uses, no more.

use serde_json::Value;

/// Whether Python's `str.split()` and `str.strip()` take `c` for
/// whitespace: Unicode's White_Space, and the four ASCII information
/// separators (U+001C to U+001F), which Python counts too.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `text.split()`: the words between runs of whitespace.
pub fn split(text: &str) -> Vec<&str> {
    text.split(is_space).filter(|w| !w.is_empty()).collect()
}

/// `text.split(None, 2)`: at most three words, the last the rest of the
/// text from its first non-space (its trailing whitespace kept).
pub fn split3(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut rest = text.trim_start_matches(is_space);
    while !rest.is_empty() {
        if words.len() == 2 {
            words.push(rest);
            break;
        }
        let end = rest.find(is_space).unwrap_or(rest.len());
        words.push(&rest[..end]);
        rest = rest[end..].trim_start_matches(is_space);
    }
    words
}

/// `text.strip()`.
pub fn strip(text: &str) -> &str {
    text.trim_matches(is_space)
}

/// Whether Python's `str.isprintable()` holds for `c`: not of Unicode's
/// categories Other or Separator, but for the ASCII space.
fn printable(c: char) -> bool {
    static OTHER: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    if c == ' ' {
        return true;
    }
    if c.is_ascii() {
        return !c.is_ascii_control();
    }
    let other = OTHER.get_or_init(|| {
        regex::Regex::new(r"[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]").expect("valid")
    });
    let mut buf = [0; 4];
    !other.is_match(c.encode_utf8(&mut buf))
}

/// `repr(text)`: quoted, in single quotes unless the text has one and no
/// double quote, with the characters Python does not print escaped.
pub fn repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if printable(c) => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

/// `json.dumps(value)`: ASCII only, `", "` and `": "` between items.
pub fn json(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value);
    out
}

fn write_json(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => json_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                json_string(out, key);
                out.push_str(": ");
                write_json(out, item);
            }
            out.push('}');
        }
    }
}

fn json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c => {
                let mut units = [0; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

/// A JSON number as Python prints the int or float it reads it as.
fn number(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() => float_repr(f),
        _ => n.to_string(),
    }
}

/// `repr(f)` of a finite float: the shortest digits that read back as
/// `f`, positional from 1e-4 up to 1e16, else with an exponent of at
/// least two digits (`1e+16`, `1.5e-05`).
pub fn float_repr(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // Rust's `{:e}` gives the shortest digits that read back.
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("an exponent");
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exponent) {
        let point = exponent + 1;
        let text = if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        format!("{sign}{text}")
    } else {
        let mantissa = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let esign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{esign}{:02}", exponent.abs())
    }
}

/// `"%g" % f`: six significant digits, trailing zeros dropped, with an
/// exponent below 1e-4 and from 1e6 on.
pub fn g(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{f:.5e}");
    let (mantissa, exponent) = sci.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("an exponent");
    if (-4..6).contains(&exponent) {
        let decimals = (5 - exponent) as usize;
        trim_zeros(&format!("{f:.decimals$}")).to_owned()
    } else {
        let esign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{esign}{:02}", trim_zeros(mantissa), exponent.abs())
    }
}

fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// `str(value)` of the Python object `json.loads` makes of `value`.
pub fn str_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => repr_of(other),
    }
}

/// `repr(value)` of the Python object `json.loads` makes of `value`.
pub fn repr_of(value: &Value) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(b) => if *b { "True" } else { "False" }.to_owned(),
        Value::Number(n) => number(n),
        Value::String(s) => repr(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(repr_of).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", repr(k), repr_of(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// The one of `names` nearest to `name`, compared without case, as
/// `difflib.get_close_matches(name.lower(), lowered, n=1, cutoff=0)`
/// picks it (the highest ratio; of equals, the greatest name); `None`
/// when there are no names. A name's spelling is its last one of that
/// lower case.
pub fn closest<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut lowered: Vec<(String, &'a str)> = Vec::new();
    for n in names {
        let low = n.to_lowercase();
        match lowered.iter_mut().find(|(l, _)| *l == low) {
            Some(entry) => entry.1 = n,
            None => lowered.push((low, n)),
        }
    }
    let word: Vec<char> = name.to_lowercase().chars().collect();
    let mut best: Option<(f64, &str, &'a str)> = None;
    for (low, spelt) in &lowered {
        let candidate: Vec<char> = low.chars().collect();
        let score = ratio(&candidate, &word);
        let better = match best {
            None => true,
            Some((s, l, _)) => score > s || (score == s && low.as_str() > l),
        };
        if better {
            best = Some((score, low, spelt));
        }
    }
    best.map(|(_, _, spelt)| spelt)
}

/// `difflib.SequenceMatcher(None, a, b).ratio()`, with its automatic junk
/// heuristic for a `b` of 200 characters or more.
fn ratio(a: &[char], b: &[char]) -> f64 {
    use std::collections::HashMap;
    let mut b2j: HashMap<char, Vec<usize>> = HashMap::new();
    for (j, c) in b.iter().enumerate() {
        b2j.entry(*c).or_default().push(j);
    }
    if b.len() >= 200 {
        let most = b.len() / 100 + 1;
        b2j.retain(|_, js| js.len() <= most);
    }
    let longest = |alo: usize, ahi: usize, blo: usize, bhi: usize| {
        let (mut besti, mut bestj, mut size) = (alo, blo, 0);
        let mut j2len: HashMap<usize, usize> = HashMap::new();
        for (i, c) in a.iter().enumerate().take(ahi).skip(alo) {
            let mut next = HashMap::new();
            for &j in b2j.get(c).map_or(&[][..], Vec::as_slice) {
                if j < blo {
                    continue;
                }
                if j >= bhi {
                    break;
                }
                let k = j.checked_sub(1).and_then(|p| j2len.get(&p)).unwrap_or(&0) + 1;
                next.insert(j, k);
                if k > size {
                    (besti, bestj, size) = (i + 1 - k, j + 1 - k, k);
                }
            }
            j2len = next;
        }
        // No junk: the match is extended over equal elements either side
        // (popular ones left out of b2j among them).
        while besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1] {
            (besti, bestj, size) = (besti - 1, bestj - 1, size + 1);
        }
        while besti + size < ahi && bestj + size < bhi && a[besti + size] == b[bestj + size] {
            size += 1;
        }
        (besti, bestj, size)
    };
    let mut matches = 0;
    let mut queue = vec![(0, a.len(), 0, b.len())];
    while let Some((alo, ahi, blo, bhi)) = queue.pop() {
        let (i, j, k) = longest(alo, ahi, blo, bhi);
        if k > 0 {
            matches += k;
            if alo < i && blo < j {
                queue.push((alo, i, blo, j));
            }
            if i + k < ahi && j + k < bhi {
                queue.push((i + k, ahi, j + k, bhi));
            }
        }
    }
    let total = a.len() + b.len();
    if total == 0 {
        1.0
    } else {
        2.0 * matches as f64 / total as f64
    }
}

/// Python's `random.Random(seed)`: the Mersenne Twister, seeded from an
/// integer as Python seeds it, for `shuffle`.
pub struct Random {
    state: [u32; 624],
    index: usize,
}

impl Random {
    pub fn new(seed: u64) -> Random {
        // init_by_array of the seed's 32-bit words, least significant
        // first (one word for 0).
        let key: Vec<u32> = if seed >> 32 == 0 {
            vec![seed as u32]
        } else {
            vec![seed as u32, (seed >> 32) as u32]
        };
        let mut mt = [0u32; 624];
        mt[0] = 19_650_218;
        for i in 1..624 {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..624.max(key.len()) {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..623 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        Random {
            state: mt,
            index: 624,
        }
    }

    fn next_u32(&mut self) -> u32 {
        if self.index >= 624 {
            for k in 0..624 {
                let y = (self.state[k] & 0x8000_0000) | (self.state[(k + 1) % 624] & 0x7fff_ffff);
                let mut v = self.state[(k + 397) % 624] ^ (y >> 1);
                if y & 1 != 0 {
                    v ^= 0x9908_b0df;
                }
                self.state[k] = v;
            }
            self.index = 0;
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `_randbelow(n)` for `0 < n < 2³²`: `getrandbits(n.bit_length())`
    /// until it is below `n`.
    fn below(&mut self, n: u32) -> u32 {
        let bits = 32 - n.leading_zeros();
        loop {
            let r = self.next_u32() >> (32 - bits);
            if r < n {
                return r;
            }
        }
    }

    /// `shuffle(items)`: Fisher–Yates from the end.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u32 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_quotes_and_escapes_as_python() {
        assert_eq!(repr("e2e4"), "'e2e4'");
        assert_eq!(repr("it's"), "\"it's\"");
        assert_eq!(repr("a'\"b"), "'a\\'\"b'");
        assert_eq!(
            repr("\u{b2}\t\u{1b}\u{a0}\u{2028}é\u{1f600}"),
            "'\u{b2}\\t\\x1b\\xa0\\u2028é\u{1f600}'"
        );
        assert_eq!(repr("\u{e000}"), "'\\ue000'");
    }

    #[test]
    fn json_is_ascii_with_pythons_separators() {
        let v = serde_json::json!({"a": [1, 1.5, "é\n", null, true], "b": 1e16});
        assert_eq!(
            json(&v),
            "{\"a\": [1, 1.5, \"\\u00e9\\n\", null, true], \"b\": 1e+16}"
        );
        assert_eq!(json(&serde_json::json!("\u{1f600}")), "\"\\ud83d\\ude00\"");
    }

    #[test]
    fn floats_and_g_as_python() {
        for (f, want) in [
            (0.1, "0.1"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-2.5, "-2.5"),
            (123.0, "123.0"),
            (0.0001, "0.0001"),
        ] {
            assert_eq!(float_repr(f), want);
        }
        for (f, want) in [
            (2.0, "2"),
            (0.05, "0.05"),
            (10.0, "10"),
            (0.1, "0.1"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.00001, "1e-05"),
            (2.5, "2.5"),
        ] {
            assert_eq!(g(f), want);
        }
    }

    #[test]
    fn split_takes_pythons_whitespace() {
        assert_eq!(split(" a\u{1c}b\u{a0} c "), ["a", "b", "c"]);
        assert_eq!(
            split3("id  name  Stock fish  "),
            ["id", "name", "Stock fish  "]
        );
        assert_eq!(split3("id name"), ["id", "name"]);
    }

    #[test]
    fn closest_is_difflibs() {
        let names = ["openings", "order", "seed", "nodes", "depth", "movetime"];
        assert_eq!(closest("nodez", names), Some("nodes"));
        assert_eq!(
            closest("SkillLevel", ["Hash", "Skill Level", "Ponder"]),
            Some("Skill Level")
        );
        assert_eq!(closest("x", []), None);
    }

    #[test]
    fn shuffle_is_pythons() {
        // random.Random(seed).shuffle(list(range(13))) in CPython.
        for (seed, want) in [
            (5, [2, 3, 11, 10, 12, 1, 6, 7, 0, 8, 5, 4, 9]),
            (3_321_348_664, [10, 5, 6, 4, 9, 12, 1, 3, 2, 8, 7, 0, 11]),
            ((1 << 40) + 7, [0, 5, 2, 3, 6, 1, 8, 4, 7, 12, 10, 11, 9]),
        ] {
            let mut order: Vec<u32> = (0..13).collect();
            Random::new(seed).shuffle(&mut order);
            assert_eq!(order, want, "seed {seed}");
        }
    }
}
