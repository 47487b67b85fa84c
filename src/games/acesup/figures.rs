//! How a program's output is judged: the lines dropped by `--ignore`, then
//! either the strict comparison (every line, in order) or the figures mode
//! (only the figures, found among other lines). The rules are in
//! `docs/acesup.md` ("Judging a class").

use std::sync::LazyLock;

use regex::Regex;

use super::Verdict;
use super::engine::{self, Card};

/// How the output is compared with the engine's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Every line, in order (the default).
    #[default]
    Strict,
    /// The figures only, wherever they are; other lines are ignored.
    Figures,
}

/// How outputs are judged: the mode and the lines to drop first.
#[derive(Clone, Debug, Default)]
pub struct Judging {
    pub mode: Mode,
    /// Lines matching any of these are dropped before judging.
    pub ignore: Vec<Regex>,
}

/// Reads an `--ignore` pattern.
pub fn parse_pattern(text: &str) -> Result<Regex, String> {
    Regex::new(text).map_err(|e| e.to_string())
}

/// A figure's kind: what a figure line says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Card,
    Game,
    Piles,
    Total,
    Moves,
    Result,
}

/// At most this many characters of an output line are quoted in a verdict.
const QUOTED: usize = 200;

fn quoted(text: &str) -> String {
    let short: String = text.chars().take(QUOTED).collect();
    format!("{short:?}")
}

/// The lines kept for judging, each with its line number in the output:
/// trailing spaces and `\r` dropped, lines matching an `--ignore` pattern
/// left out, blank lines at the very end left out.
pub(super) fn kept<'a>(lines: &'a [String], ignore: &[Regex]) -> Vec<(usize, &'a str)> {
    let mut kept: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches([' ', '\r'])))
        .filter(|(_, l)| !ignore.iter().any(|r| r.is_match(l)))
        .collect();
    while kept.last().is_some_and(|(_, l)| l.is_empty()) {
        kept.pop();
    }
    kept
}

/// Judges a program's output lines against the engine's for `deck`.
pub fn judge_output(judging: &Judging, lines: &[String], deck: &[Card; 52]) -> Verdict {
    let kept = kept(lines, &judging.ignore);
    match judging.mode {
        Mode::Strict => compare_kept(&kept, &engine::expected_output(deck)),
        Mode::Figures => compare_figures(&kept, lines.len(), deck),
    }
}

/// The strict comparison of the kept lines with the expected text, line by
/// line; the line reported is the output's.
pub(super) fn compare_kept(got: &[(usize, &str)], expected: &str) -> Verdict {
    let expected: Vec<&str> = expected.lines().collect();
    for i in 0..expected.len().max(got.len()) {
        let (e, g) = (expected.get(i), got.get(i));
        if e != g.map(|(_, l)| l) {
            // Past the last kept line, the line after it.
            let line = match g {
                Some((n, _)) => *n,
                None => got.last().map_or(1, |(n, _)| n + 1),
            };
            return Verdict::WrongAnswer {
                line,
                expected: e.map(|s| s.to_string()),
                got: g.map(|(_, s)| s.chars().take(QUOTED).collect()),
            };
        }
    }
    Verdict::Accepted
}

/// One figure the output must show.
struct Wanted {
    kind: Kind,
    /// As verdicts name it: `card 7`, `game 2 moves`.
    name: String,
    /// Its value, written as the figure lines are read (`6S`, `1 1 1 1`,
    /// `won, perfect`).
    value: String,
}

/// The figures of a deck, in order: the 52 cards, then per game its
/// number, piles, total, moves and result.
fn wanted(deck: &[Card; 52]) -> Vec<Wanted> {
    let mut out: Vec<Wanted> = deck
        .iter()
        .enumerate()
        .map(|(i, c)| Wanted {
            kind: Kind::Card,
            name: format!("card {}", i + 1),
            value: c.to_string(),
        })
        .collect();
    for (i, game) in engine::play_rotations(deck).iter().enumerate() {
        let n = i + 1;
        let [a, b, c, d] = game.piles;
        let result = result_text(game.won, game.perfect);
        for (kind, what, value) in [
            (Kind::Game, "number", n.to_string()),
            (Kind::Piles, "piles", format!("{a} {b} {c} {d}")),
            (Kind::Total, "total", game.total().to_string()),
            (Kind::Moves, "moves", game.moves.to_string()),
            (Kind::Result, "result", result.to_string()),
        ] {
            out.push(Wanted {
                kind,
                name: format!("game {n} {what}"),
                value,
            });
        }
    }
    out
}

fn result_text(won: bool, perfect: bool) -> &'static str {
    match (won, perfect) {
        (true, true) => "won, perfect",
        (true, false) => "won",
        _ => "lost",
    }
}

/// A labelled figure line: a label word at the start, then `:` or `=`
/// (optional), then the value.
static LABELLED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(game|piles|total|moves|result)\b[ \t]*([:=])?[ \t]*(.*)$").unwrap()
});

/// A card line: it ends with a rank and a suit, together (`6S`) or apart
/// (`6 S`), the rank starting a word.
static CARD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:.*\s)?([2-9TJQKA])[ \t]?([CDHS])$").unwrap());

fn number(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse::<u64>().ok().map(|n| n.to_string()))
        .flatten()
}

fn piles(text: &str) -> Option<String> {
    let parts: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() != 4 {
        return None;
    }
    let numbers: Option<Vec<String>> = parts.iter().map(|p| number(p)).collect();
    numbers.map(|n| n.join(" "))
}

fn result(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    match words[..] {
        ["lost"] => Some(result_text(false, false).into()),
        ["won"] => Some(result_text(true, false).into()),
        ["won", "perfect"] => Some(result_text(true, true).into()),
        _ => None,
    }
}

/// What a line says, if it is a figure line: its kind, and its value when
/// the value could be read. `cards` tells whether card lines are still
/// looked for (fewer than 52 seen).
fn classify(line: &str, cards: bool) -> Option<(Kind, Option<String>)> {
    let line = line.trim();
    if let Some(m) = LABELLED.captures(line) {
        let kind = match m[1].to_ascii_lowercase().as_str() {
            "game" => Kind::Game,
            "piles" => Kind::Piles,
            "total" => Kind::Total,
            "moves" => Kind::Moves,
            _ => Kind::Result,
        };
        let rest = &m[3];
        let value = match kind {
            Kind::Piles => piles(rest),
            Kind::Result => result(rest),
            _ => number(rest),
        };
        // Without `:` or `=`, only a line whose value reads is a figure
        // ("Game over" is not).
        if value.is_some() || m.get(2).is_some() {
            return Some((kind, value));
        }
    }
    if cards && let Some(m) = CARD.captures(line) {
        return Some((Kind::Card, Some(format!("{}{}", &m[1], &m[2]))));
    }
    None
}

/// A value as verdicts show it: results quoted (`"won, perfect"` has a
/// comma of its own), the rest as they are.
fn shown(kind: Kind, value: &str) -> String {
    match kind {
        Kind::Result => format!("{value:?}"),
        _ => value.to_string(),
    }
}

/// The figures mode: the figure lines among the kept lines must be the
/// wanted figures, in order, and no more.
fn compare_figures(kept: &[(usize, &str)], output_lines: usize, deck: &[Card; 52]) -> Verdict {
    let wanted = wanted(deck);
    let mut next = wanted.iter();
    let mut cards = 0;
    for &(line, text) in kept {
        let Some((kind, value)) = classify(text, cards < 52) else {
            continue;
        };
        cards += usize::from(kind == Kind::Card);
        let Some(want) = next.next() else {
            return Verdict::WrongFigure {
                line,
                figure: None,
                expected: "no more figures".into(),
                got: quoted(text),
            };
        };
        if kind == want.kind && value.as_deref() == Some(want.value.as_str()) {
            continue;
        }
        let got = match value {
            Some(v) if kind == want.kind => format!("{} in {}", shown(kind, &v), quoted(text)),
            _ => quoted(text),
        };
        return Verdict::WrongFigure {
            line,
            figure: Some(want.name.clone()),
            expected: shown(want.kind, &want.value),
            got,
        };
    }
    match next.next() {
        Some(want) => Verdict::WrongFigure {
            line: output_lines + 1,
            figure: Some(want.name.clone()),
            expected: shown(want.kind, &want.value),
            got: "the end of the output".into(),
        },
        None => Verdict::Accepted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::acesup::deck::random_deck;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    fn figures() -> Judging {
        Judging {
            mode: Mode::Figures,
            ignore: vec![],
        }
    }

    /// The engine's output as the assignment's skeleton would print it.
    fn skeleton(deck: &[Card; 52]) -> String {
        let mut out = String::new();
        for (i, line) in engine::expected_output(deck).lines().enumerate() {
            if i < 52 {
                let b = line.as_bytes();
                out += &format!("Just read {} {} \n", b[0] as char, b[1] as char);
                if i == 51 {
                    out += "Done ClearPiles\n";
                }
            } else {
                out += line;
                out += "\n";
            }
        }
        out
    }

    #[test]
    fn figure_lines() {
        assert_eq!(
            classify("Just read 6 S", true),
            Some((Kind::Card, Some("6S".into())))
        );
        assert_eq!(classify("TD", true), Some((Kind::Card, Some("TD".into()))));
        assert_eq!(classify("TD", false), None);
        assert_eq!(classify("Done ClearPiles", true), None);
        assert_eq!(classify("Game over", true), None);
        assert_eq!(classify("Games: 3", true), None);
        assert_eq!(
            classify("  game 3", true),
            Some((Kind::Game, Some("3".into())))
        );
        assert_eq!(
            classify("PILES = 1, 2, 3, 04", false),
            Some((Kind::Piles, Some("1 2 3 4".into())))
        );
        assert_eq!(classify("Moves: lots", false), Some((Kind::Moves, None)));
        assert_eq!(
            classify("Result: Won (perfect!)", false),
            Some((Kind::Result, Some("won, perfect".into())))
        );
        assert_eq!(
            classify("Result: lost", false),
            Some((Kind::Result, Some("lost".into())))
        );
    }

    #[test]
    fn the_skeleton_passes_in_figures_mode_only() {
        let deck = random_deck(3, 0);
        let out = lines(&skeleton(&deck));
        assert_eq!(judge_output(&figures(), &out, &deck), Verdict::Accepted);
        let strict = judge_output(&Judging::default(), &out, &deck);
        assert!(
            matches!(strict, Verdict::WrongAnswer { line: 1, .. }),
            "{strict}"
        );
        let ignoring = Judging {
            mode: Mode::Strict,
            ignore: vec![Regex::new("^Done").unwrap()],
        };
        let mut echoed = out.clone();
        for (line, card) in echoed.iter_mut().zip(deck.iter()) {
            *line = card.to_string();
        }
        assert_eq!(judge_output(&ignoring, &echoed, &deck), Verdict::Accepted);
    }

    #[test]
    fn a_wrong_figure_is_named() {
        let deck = random_deck(3, 1);
        let mut out = lines(&skeleton(&deck));
        let at = out.iter().position(|l| l.starts_with("Moves: ")).unwrap();
        let moves: u32 = out[at][7..].parse().unwrap();
        out[at] = format!("Moves: {}", moves + 1);
        assert_eq!(
            judge_output(&figures(), &out, &deck).to_string(),
            format!(
                "WRONG ANSWER at line {}: game 1 moves: expected {moves}, got {} in \"Moves: {}\"",
                at + 1,
                moves + 1,
                moves + 1
            )
        );
        // A missing figure: the next one is taken for it.
        let mut out = lines(&skeleton(&deck));
        out.remove(at);
        let verdict = judge_output(&figures(), &out, &deck).to_string();
        assert!(
            verdict.starts_with(&format!(
                "WRONG ANSWER at line {}: game 1 moves: expected {moves}, got \"Result: ",
                at + 1
            )),
            "{verdict}"
        );
        // The end of the output, and one figure too many.
        let full = lines(&skeleton(&deck));
        let short = &full[..full.len() - 1];
        let verdict = judge_output(&figures(), short, &deck).to_string();
        assert!(
            verdict.starts_with(&format!("WRONG ANSWER at line {}: game ", full.len()))
                && verdict.ends_with("got the end of the output"),
            "{verdict}"
        );
        let mut long = full.clone();
        long.push("Total: 4".into());
        assert_eq!(
            judge_output(&figures(), &long, &deck).to_string(),
            format!(
                "WRONG ANSWER at line {}: expected no more figures, got \"Total: 4\"",
                full.len() + 1
            )
        );
    }
}
