//! Tournament files (TOML): the game, its limits, the games to play and the
//! entrants. Relative paths are relative to the file's directory.
//!
//! ```toml
//! game = "chomp"          # evensteven, chomp, septica or acesup
//! games = 40
//! seed = 7
//!
//! [limits]                # the subcommand options of the same names
//! prep = "0s"
//! arrays = "chomp"        # Chomp: an array file or a directory of them
//! seats = 3               # Chomp: players per game
//!
//! [[entrant]]
//! name = "strong"
//! dir = "../bots/chomp"   # built with make; runs ./pc2 there
//!
//! [[entrant]]
//! name = "greedy"
//! command = ["../target/release/chomp-greedy"]
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::bot::clock::TimeControl;
use crate::games::chomp::{Coord, check_start, load_arrays};
use crate::units::TomlDuration;

pub use crate::game::{GameKind, GameRef};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// A built-in game's name, or an external game's `game.toml`.
    pub game: GameRef,
    /// Games (or matches, or decks) to play; each entrant plays each one in
    /// a one-player game.
    pub games: u64,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub jobs: Option<usize>,
    #[serde(default)]
    pub pin: bool,
    #[serde(default)]
    pub limits: Limits,
    #[serde(rename = "entrant")]
    pub entrants: Vec<EntrantSpec>,
}

/// The options of the game's subcommand, by the same names.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub timeout: Option<TomlDuration>,
    pub startup: Option<TomlDuration>,
    pub time_control: Option<TimeControl>,
    pub grace: Option<TomlDuration>,
    pub prep: Option<TomlDuration>,
    pub starve: Option<TomlDuration>,
    pub max_rounds: Option<u64>,
    pub start: Option<[String; 2]>,
    pub arrays: Option<PathBuf>,
    pub seats: Option<usize>,
    pub make: Option<String>,
    pub build_timeout: Option<TomlDuration>,
    pub max_line: Option<usize>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntrantSpec {
    pub name: String,
    /// Built with `make` (when it has a makefile); the command runs there.
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// Program and arguments; for Chomp the default is `./pc2` in `dir`.
    #[serde(default)]
    pub command: Option<Vec<String>>,
}

/// Reads and checks a tournament file; errors name the file (and, for
/// values TOML can place, the line).
pub fn load(path: &Path) -> Result<Spec, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse(&text, base).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses and checks a tournament file's text; relative paths are taken
/// from `base`. All problems are reported at once, one per line.
pub fn parse(text: &str, base: &Path) -> Result<Spec, String> {
    let spec: Spec = toml::from_str(text).map_err(|e| toml_error(&e))?;
    let problems = problems(&spec, base);
    if problems.is_empty() {
        Ok(spec)
    } else {
        Err(problems.join("\n  "))
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

/// Checks what TOML types alone cannot; every problem, not only the first.
pub fn problems(spec: &Spec, base: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if spec.entrants.is_empty() {
        out.push("no [[entrant]]".to_owned());
    }
    // Games are produced lazily: any number of them costs nothing until
    // it is played.
    if spec.games == 0 {
        out.push("games must be at least 1".to_owned());
    }
    if spec.jobs == Some(0) {
        out.push("jobs must be at least 1".to_owned());
    }
    let mut names: Vec<&str> = spec.entrants.iter().map(|e| e.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        out.push(format!("two entrants are named {:?}", w[0]));
    }
    for e in &spec.entrants {
        if e.name.trim().is_empty() {
            out.push("an entrant has an empty name".to_owned());
        }
        match (&e.dir, &e.command) {
            (None, None) => out.push(format!("entrant {:?} needs a dir or a command", e.name)),
            (_, Some(c)) if c.first().is_none_or(|p| p.trim().is_empty()) => {
                out.push(format!("entrant {:?} has an empty command", e.name));
            }
            _ => {}
        }
    }
    out.extend(limit_problems(
        &spec.game,
        &spec.limits,
        spec.entrants.len(),
        base,
    ));
    // What only loading the game can tell (an external game's file, its
    // number of players).
    if out.is_empty()
        && let Err(e) = crate::game::load(&spec.game, &spec.limits, spec.entrants.len(), base)
    {
        out.push(e);
    }
    out
}

/// Problems of a `[limits]` table for `game` with `entrants` entrants.
pub fn limit_problems(game: &GameRef, l: &Limits, entrants: usize, base: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if l.max_line == Some(0) {
        out.push("limits.max_line must be at least 1".to_owned());
    }
    for (name, value) in [
        ("timeout", l.timeout),
        ("starve", l.starve),
        ("build_timeout", l.build_timeout),
    ] {
        if value.is_some_and(|d| d.0.is_zero()) {
            out.push(format!("limits.{name} must be longer than zero"));
        }
    }
    let chomp_only = [
        ("prep", l.prep.is_some()),
        ("starve", l.starve.is_some()),
        ("max_rounds", l.max_rounds.is_some()),
        ("start", l.start.is_some()),
        ("arrays", l.arrays.is_some()),
        ("seats", l.seats.is_some()),
    ];
    // An Aces Up run is one reply: its `timeout` covers the start as well.
    if game.is(GameKind::Acesup) {
        for (name, given) in [
            ("startup", l.startup.is_some()),
            ("time_control", l.time_control.is_some()),
        ] {
            if given {
                out.push(format!(
                    "limits.{name} does not apply to Aces Up, whose timeout covers a whole run on a deck, start-up included"
                ));
            }
        }
    }
    if let GameRef::External(path) = game {
        // Seats apply to every table game; the rest is Chomp's.
        for (name, given) in chomp_only {
            if given && name != "seats" {
                out.push(format!(
                    "limits.{name} applies to Chomp only, not {}",
                    path.display()
                ));
            }
        }
        return out;
    }
    if !game.is(GameKind::Chomp) {
        for (name, given) in chomp_only {
            if given {
                out.push(format!(
                    "limits.{name} applies to Chomp only, not {}",
                    game.name()
                ));
            }
        }
        return out;
    }
    for (name, given) in [
        ("time_control", l.time_control.is_some()),
        ("timeout", l.timeout.is_some()),
        ("startup", l.startup.is_some()),
    ] {
        if given {
            out.push(format!(
                "limits.{name} does not apply to Chomp, which has its preparation time (limits.prep) and starvation clock (limits.starve)"
            ));
        }
    }
    if l.max_rounds == Some(0) {
        out.push("limits.max_rounds must be at least 1".to_owned());
    }
    let seats = l.seats.unwrap_or(entrants);
    if entrants > 0 && (seats == 0 || seats > entrants) {
        out.push(format!(
            "limits.seats must be from 1 to the number of entrants ({entrants})"
        ));
    }
    let start = match &l.start {
        None => Some((Coord::Random, Coord::Random)),
        Some([x, y]) => match (x.parse::<Coord>(), y.parse::<Coord>()) {
            (Ok(x), Ok(y)) => Some((x, y)),
            (Err(e), _) | (_, Err(e)) => {
                out.push(format!("limits.start: {e}"));
                None
            }
        },
    };
    match &l.arrays {
        None => out.push("a Chomp game needs limits.arrays (an array file or directory)".into()),
        Some(path) => match load_arrays(&base.join(path)) {
            Err(e) => out.push(format!("limits.arrays: {e}")),
            Ok(arrays) => {
                for array in &arrays {
                    if let Some(start) = start
                        && let Err(e) = check_start(start, array)
                    {
                        out.push(format!("limits.start: {e}"));
                    }
                }
            }
        },
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chomp_tournament() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "AB\nCD\n").unwrap();
        let spec = parse(
            "game = \"chomp\"\ngames = 4\n[limits]\narrays = \"a\"\nseats = 2\n[[entrant]]\nname = \"a\"\ndir = \"x\"\n[[entrant]]\nname = \"b\"\ncommand = [\"y\"]\n",
            dir.path(),
        )
        .unwrap();
        assert_eq!(spec.game, GameRef::Builtin(GameKind::Chomp));
        assert_eq!(spec.entrants.len(), 2);
    }

    #[test]
    fn mistakes_are_named() {
        let base = "game = \"septica\"\ngames = 4\n";
        assert!(parse(base, Path::new(".")).unwrap_err().contains("entrant"));
        assert!(
            parse(
                &format!("{base}[[entrant]]\nname = \"a\"\n"),
                Path::new(".")
            )
            .unwrap_err()
            .contains("needs a dir or a command")
        );
        let two = format!(
            "{base}[[entrant]]\nname = \"a\"\ncommand = [\"x\"]\n[[entrant]]\nname = \"a\"\ncommand = [\"y\"]\n"
        );
        assert!(
            parse(&two, Path::new("."))
                .unwrap_err()
                .contains("two entrants are named \"a\"")
        );
        assert!(
            parse("game = \"poker\"\ngames = 1\n", Path::new("."))
                .unwrap_err()
                .contains("poker")
        );
        assert!(
            parse("game = \"septica\"\ngames = 1\nspeed = 3\n", Path::new("."))
                .unwrap_err()
                .contains("speed")
        );
    }
}
