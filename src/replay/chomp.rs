//! Chomp's replay view: the board, and every round as the rules applied
//! it, in one word per round that the viewer applies step by step.
//!
//! A game on a large array lasts tens of thousands of rounds, so a round
//! costs about a byte per player: its `steps` word holds, per player, the
//! move as the rules took it (`N S E W` a step to the neighbouring cell,
//! `n s e w` a step off an edge onto the cell next in `wraps`, `C` a chomp
//! that ate its cell alone and scores the letter, `X` one shared with the
//! other `X`s of the round on that cell, scoring the next of `shares`, `c`
//! a chomp of an empty cell, `D` and `-` as recorded). The wrap's landing
//! cell and the share are the rules' answers, computed here with
//! [`Grid`]; the viewer adds and subtracts cell numbers.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{field, seat_summary, seats, u64_field};
use crate::games::chomp::grid::share;
use crate::games::chomp::{Cell, Dir, Grid, recording};

/// The view of a Chomp record (see the module's documentation).
pub(super) fn view(record: &Value, base: &Path) -> Result<Value, String> {
    let rows = board_rows(record, base)?;
    let grid = Grid::from_rows(&rows);
    let start = start_cell(record, &grid)?;
    let seats = seats(record);
    if seats.is_empty() {
        return Err("no players".into());
    }
    let players: Vec<Value> = seats
        .iter()
        .enumerate()
        .map(|(i, s)| seat_summary(s, &format!("player {}", i + 1)))
        .collect();
    let moves = moves(record, seats.len())?;
    let rounds = moves.as_deref().unwrap_or_default();
    let steps = Steps::play(grid.clone(), start, seats.len(), rounds);
    let letters: String = rows.iter().map(|r| String::from_utf8_lossy(r)).collect();
    Ok(json!({
        "kind": "chomp",
        "cols": grid.cols(),
        "rows": grid.rows(),
        "board": letters,
        "start": grid.index(start),
        "players": players,
        "steps": steps.words,
        "wraps": steps.wraps,
        "shares": steps.shares,
        "recorded": moves.is_some(),
        "total_rounds": record["rounds"],
        "end": record["end"],
        "clock": clock(record, rounds.len(), seats.len()),
    }))
}

/// The array: kept in the record (`letters`, with `--record-moves`), or
/// read from the array file it names.
fn board_rows(record: &Value, base: &Path) -> Result<Vec<Vec<u8>>, String> {
    if let Some(letters) = record["letters"].as_str() {
        let m = u64_field(record, "cols")? as usize;
        let ok = m > 0
            && letters.len().is_multiple_of(m)
            && !letters.is_empty()
            && letters.bytes().all(|b| b.is_ascii_uppercase());
        if !ok {
            return Err(format!("\"letters\" is not rows of {m} capital letters"));
        }
        return Ok(letters.as_bytes().chunks(m).map(<[u8]>::to_vec).collect());
    }
    let array = field(record, "array")?
        .as_str()
        .ok_or("\"array\" is not a path")?;
    let candidates: Vec<PathBuf> = vec![PathBuf::from(array), base.join(array)];
    let path = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
        format!("the array file {array} is not there (record with --record-moves to keep the array in the record)")
    })?;
    let files = crate::games::chomp::load_arrays(path)?;
    let file = files
        .into_iter()
        .next()
        .ok_or_else(|| format!("{array}: no array"))?;
    Ok(file.rows)
}

fn start_cell(record: &Value, grid: &Grid) -> Result<Cell, String> {
    let start = field(record, "start")?;
    let cell = match (start[0].as_u64(), start[1].as_u64()) {
        (Some(col), Some(row)) => u32::try_from(col)
            .ok()
            .zip(u32::try_from(row).ok())
            .map(|(col, row)| Cell { col, row }),
        _ => None,
    };
    cell.filter(|&c| grid.contains(c)).ok_or_else(|| {
        format!(
            "\"start\" {start} is not a cell of the {}x{} array",
            grid.cols(),
            grid.rows()
        )
    })
}

/// The recorded rounds, each `k` move letters; `None` when the moves were
/// not kept.
fn moves(record: &Value, k: usize) -> Result<Option<Vec<&str>>, String> {
    if record["moves"].is_null() {
        return Ok(None);
    }
    let rounds =
        recording::read_moves(&record["moves"]).ok_or("\"moves\" is not rounds of move letters")?;
    for (r, letters) in rounds.iter().enumerate() {
        if letters.len() != k || !letters.bytes().all(|b| b"NSEWCD-".contains(&b)) {
            return Err(format!("moves[{r}] is not {k} move letters"));
        }
    }
    Ok(Some(rounds))
}

/// The starvation clocks' data, when the record has a turn time for each
/// round and player: the budget and the times as the record's text.
fn clock(record: &Value, rounds: usize, k: usize) -> Value {
    let times = recording::read_times(&record["times"], rounds).ok();
    match (times, record["starve_ms"].as_u64()) {
        (Some(t), Some(budget)) if t.len() == rounds && t.iter().all(|r| r.len() == k) => {
            json!({"budget": budget, "times": recording::times_text(&t)})
        }
        _ => Value::Null,
    }
}

/// The rounds as the viewer applies them.
struct Steps {
    /// One word per round, separated by spaces (the module's letters).
    words: String,
    /// Where each wrapping step landed, in the order of the steps.
    wraps: Vec<usize>,
    /// What each shared chomp scored, in the order of the chomps.
    shares: Vec<u32>,
}

impl Steps {
    /// Plays `rounds` (checked move letters, `k` each) from `start` on
    /// `grid` by the rules.
    fn play(mut grid: Grid, start: Cell, k: usize, rounds: &[&str]) -> Steps {
        let mut steps = Steps {
            words: String::new(),
            wraps: Vec::new(),
            shares: Vec::new(),
        };
        let mut pos = vec![start; k];
        for letters in rounds {
            let mut word = letters.as_bytes().to_vec();
            steps.walk(&grid, &mut pos, &mut word);
            steps.chomp(&mut grid, &pos, &mut word);
            if !steps.words.is_empty() {
                steps.words.push(' ');
            }
            steps.words.extend(word.iter().map(|&b| char::from(b)));
        }
        steps
    }

    /// The round's steps: every player's new cell, and which steps wrapped
    /// (lower case, their landing cells in `wraps`).
    fn walk(&mut self, grid: &Grid, pos: &mut [Cell], word: &mut [u8]) {
        let (m, n) = (grid.cols(), grid.rows());
        for (i, letter) in word.iter_mut().enumerate() {
            let (dir, straight) = match *letter {
                b'N' => (Dir::North, pos[i].row > 1),
                b'S' => (Dir::South, pos[i].row < n),
                b'E' => (Dir::East, pos[i].col < m),
                b'W' => (Dir::West, pos[i].col > 1),
                _ => continue,
            };
            pos[i] = grid.step(pos[i], dir);
            if !straight {
                letter.make_ascii_lowercase();
                self.wraps.push(grid.index(pos[i]));
            }
        }
    }

    /// The round's chomps, all at once: a cell chomped by several players
    /// is shared (`X`, the share in `shares` in player order), an empty
    /// one gives nothing (`c`).
    fn chomp(&mut self, grid: &mut Grid, pos: &[Cell], word: &mut [u8]) {
        let mut chomps: Vec<(usize, usize)> = word
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'C')
            .map(|(i, _)| (grid.index(pos[i]), i))
            .collect();
        chomps.sort_unstable();
        let mut each = vec![None; word.len()];
        for group in chomps.chunk_by(|a, b| a.0 == b.0) {
            let value = u32::from(grid.eat_at(group[0].0));
            for &(_, i) in group {
                word[i] = match (value, group.len()) {
                    (0, _) => b'c',
                    (_, 1) => b'C',
                    (_, sharing) => {
                        each[i] = Some(share(value, sharing as u32));
                        b'X'
                    }
                };
            }
        }
        self.shares.extend(each.into_iter().flatten());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chomp_view(record: Value) -> Value {
        view(&record, Path::new(".")).unwrap()
    }

    #[test]
    fn a_wrap_lands_where_the_rules_say() {
        // 3x2 board, one player from (3,1) going East wraps to (1,2).
        let v = chomp_view(json!({"game": "chomp", "index": 1, "cols": 3, "rows": 2,
            "letters": "ABCDEF", "start": [3, 1], "players": [{"player": 1, "dir": "a"}],
            "moves": ["E", "C"]}));
        assert_eq!(v["steps"], "e C");
        assert_eq!(v["wraps"], json!([3]));
        assert_eq!(v["start"], 2);
    }

    #[test]
    fn a_shared_chomp_scores_each_its_share() {
        // Two of three players share C (3 points: 2 each, rounded up) while
        // the third steps East; next round a chomp of the emptied cell
        // finds nothing, and the third eats B alone.
        let v = chomp_view(json!({"game": "chomp", "index": 1, "cols": 2, "rows": 1,
            "letters": "CB", "start": [1, 1],
            "players": [{"player": 1}, {"player": 2}, {"player": 3}],
            "moves": "CCE -CC"}));
        assert_eq!(v["steps"], "XXE -cC");
        assert_eq!(v["shares"], json!([2, 2]));
        assert_eq!(v["wraps"], json!([]));
    }

    #[test]
    fn no_moves_no_steps() {
        let v = chomp_view(json!({"game": "chomp", "index": 1, "cols": 1, "rows": 1,
            "letters": "A", "start": [1, 1], "players": [{"player": 1}]}));
        assert_eq!(v["steps"], "");
        assert_eq!(v["recorded"], false);
        assert_eq!(v["clock"], Value::Null);
    }

    #[test]
    fn the_clock_keeps_the_times_as_text() {
        let record = json!({"game": "chomp", "index": 1, "cols": 2, "rows": 1,
            "letters": "AB", "start": [1, 1], "players": [{"player": 1}],
            "moves": "E E E", "starve_ms": 500});
        for times in [json!([[0], [0], [4]]), json!("0*2 4")] {
            let mut r = record.clone();
            r["times"] = times;
            assert_eq!(
                chomp_view(r)["clock"],
                json!({"budget": 500, "times": "0*2 4"})
            );
        }
        // Times that do not fit the rounds: no clock, still a replay.
        let mut r = record.clone();
        r["times"] = json!("0*9");
        assert_eq!(chomp_view(r)["clock"], Value::Null);
    }

    #[test]
    fn bad_moves_and_starts_are_errors() {
        let record = json!({"game": "chomp", "index": 1, "cols": 2, "rows": 1,
            "letters": "AB", "start": [1, 1], "players": [{"player": 1}]});
        for (key, value, why) in [
            ("moves", json!("CX"), "moves[0] is not 1 move letters"),
            ("moves", json!(["C", 3]), "\"moves\" is not rounds"),
            ("start", json!([3, 1]), "is not a cell of the 2x1 array"),
            ("start", json!([1, 4294967297u64]), "is not a cell"),
        ] {
            let mut r = record.clone();
            r[key] = value;
            let e = view(&r, Path::new(".")).unwrap_err();
            assert!(e.contains(why), "{key}: {e}");
        }
    }
}
