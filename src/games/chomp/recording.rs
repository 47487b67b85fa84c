//! A game's moves and turn times as `--record-moves` keeps them in its
//! record: text, one word per round (`docs/results.md`). A game on a large
//! array lasts tens of thousands of rounds; as lists, its rounds were as
//! many small JSON values, about 8 MB per game once read back into memory
//! (a report reads every game of a run), where one string is the size of
//! its text. Records of earlier versions hold lists: the readers take both.

use serde_json::Value;

/// The record's `moves`: each round's letters (one per player), rounds
/// separated by a space: `CC NW SD`.
pub fn moves_text(rounds: &[String]) -> String {
    rounds.join(" ")
}

/// The rounds of a record's `moves`: its words, or the strings of an
/// earlier version's list. `None` when it is neither.
pub fn read_moves(value: &Value) -> Option<Vec<&str>> {
    match value {
        Value::String(text) if text.is_empty() => Some(Vec::new()),
        Value::String(text) => Some(text.split(' ').collect()),
        Value::Array(rounds) => rounds.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

/// The record's `times`: each round's turn times in milliseconds, the
/// players' separated by commas and the rounds by a space; a run of equal
/// rounds is written once, with `*` and how many (`0,0*4000 3,0`): quick
/// players' turns are almost all 0 ms.
pub fn times_text(times: &[Vec<u32>]) -> String {
    let mut out = String::new();
    for run in times.chunk_by(|a, b| a == b) {
        if !out.is_empty() {
            out.push(' ');
        }
        let word: Vec<String> = run[0].iter().map(u32::to_string).collect();
        out.push_str(&word.join(","));
        if run.len() > 1 {
            out.push_str(&format!("*{}", run.len()));
        }
    }
    out
}

/// The rounds of a record's `times` (text, or an earlier version's list of
/// lists), at most `most` of them: a run's count is not trusted to size
/// memory. The error says what is wrong.
pub fn read_times(value: &Value, most: usize) -> Result<Vec<Vec<u32>>, String> {
    let bad = || "\"times\" is not turn times in milliseconds".to_owned();
    let too_many = || format!("\"times\" has more than the {most} rounds played");
    let number = |v: &Value| v.as_u64().and_then(|t| u32::try_from(t).ok());
    match value {
        Value::String(text) => {
            let mut out = Vec::new();
            for word in text.split(' ').filter(|w| !w.is_empty()) {
                let (times, count) = word.split_once('*').unwrap_or((word, "1"));
                let round = times
                    .split(',')
                    .map(|t| t.parse::<u32>().ok())
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(bad)?;
                let count: usize = count.parse().ok().filter(|&n| n > 0).ok_or_else(bad)?;
                if count > most - out.len() {
                    return Err(too_many());
                }
                out.extend(std::iter::repeat_n(round, count));
            }
            Ok(out)
        }
        Value::Array(rounds) if rounds.len() <= most => rounds
            .iter()
            .map(|round| round.as_array()?.iter().map(number).collect())
            .collect::<Option<_>>()
            .ok_or_else(bad),
        Value::Array(_) => Err(too_many()),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn moves_read_back_in_either_form() {
        let rounds = vec!["CC".to_owned(), "N-".to_owned(), "SD".to_owned()];
        let text = moves_text(&rounds);
        assert_eq!(text, "CC N- SD");
        assert_eq!(read_moves(&json!(text)).unwrap(), ["CC", "N-", "SD"]);
        assert_eq!(read_moves(&json!(rounds)).unwrap(), ["CC", "N-", "SD"]);
        assert_eq!(read_moves(&json!("")).unwrap(), Vec::<&str>::new());
        assert_eq!(read_moves(&json!([1, 2])), None);
        assert_eq!(read_moves(&json!(3)), None);
    }

    #[test]
    fn equal_rounds_are_written_once() {
        let times = vec![vec![0, 0], vec![0, 0], vec![0, 0], vec![3, 12], vec![0, 0]];
        let text = times_text(&times);
        assert_eq!(text, "0,0*3 3,12 0,0");
        assert_eq!(read_times(&json!(text), 5).unwrap(), times);
        assert_eq!(read_times(&json!(times), 5).unwrap(), times);
        assert_eq!(times_text(&[]), "");
        assert!(read_times(&json!(""), 5).unwrap().is_empty());
    }

    #[test]
    fn bad_times_are_errors_not_allocations() {
        for bad in [
            json!("0,x"),
            json!("1*0"),
            json!("1*-2"),
            json!("1,,2"),
            json!([[-1]]),
        ] {
            assert!(read_times(&bad, 10).is_err(), "{bad}");
        }
        let err = read_times(&json!("0*99999999999"), 10).unwrap_err();
        assert!(err.contains("more than the 10 rounds"), "{err}");
        assert!(read_times(&json!("0*6 0*5"), 10).is_err());
        assert!(read_times(&json!([[0], [0]]), 1).is_err());
    }
}
