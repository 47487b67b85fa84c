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
use crate::units::TomlDuration;

/// The game kinds a tournament can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    Evensteven,
    Chomp,
    Septica,
    Acesup,
}

impl GameKind {
    pub fn name(self) -> &'static str {
        match self {
            GameKind::Evensteven => "evensteven",
            GameKind::Chomp => "chomp",
            GameKind::Septica => "septica",
            GameKind::Acesup => "acesup",
        }
    }

    /// One player against the game (compared game by game) rather than
    /// players against each other.
    pub fn solo(self) -> bool {
        self != GameKind::Chomp
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub game: GameKind,
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

/// Reads and checks a tournament file; errors name the file.
pub fn load(path: &Path) -> Result<Spec, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses and checks a tournament file's text.
pub fn parse(text: &str) -> Result<Spec, String> {
    let spec: Spec = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_owned())?;
    check(&spec)?;
    Ok(spec)
}

/// Checks what TOML types alone cannot.
pub fn check(spec: &Spec) -> Result<(), String> {
    if spec.entrants.is_empty() {
        return Err("no [[entrant]]".into());
    }
    if spec.games == 0 {
        return Err("games must be at least 1".into());
    }
    let mut names: Vec<&str> = spec.entrants.iter().map(|e| e.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("two entrants are named {:?}", w[0]));
    }
    for e in &spec.entrants {
        match (&e.dir, &e.command, spec.game) {
            (None, None, _) => {
                return Err(format!("entrant {:?} needs a dir or a command", e.name));
            }
            (_, Some(c), _) if c.is_empty() => {
                return Err(format!("entrant {:?} has an empty command", e.name));
            }
            _ => {}
        }
    }
    if spec.game == GameKind::Chomp {
        let seats = spec.limits.seats.unwrap_or(spec.entrants.len());
        if seats == 0 || seats > spec.entrants.len() {
            return Err(format!(
                "seats must be from 1 to the number of entrants ({})",
                spec.entrants.len()
            ));
        }
        if spec.limits.arrays.is_none() {
            return Err(
                "a Chomp tournament needs limits.arrays (an array file or directory)".into(),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chomp_tournament() {
        let spec = parse(
            "game = \"chomp\"\ngames = 4\n[limits]\narrays = \"a\"\nseats = 2\n[[entrant]]\nname = \"a\"\ndir = \"x\"\n[[entrant]]\nname = \"b\"\ncommand = [\"y\"]\n",
        )
        .unwrap();
        assert_eq!(spec.game, GameKind::Chomp);
        assert_eq!(spec.entrants.len(), 2);
    }

    #[test]
    fn mistakes_are_named() {
        let base = "game = \"septica\"\ngames = 4\n";
        assert!(parse(base).unwrap_err().contains("entrant"));
        assert!(
            parse(&format!("{base}[[entrant]]\nname = \"a\"\n"))
                .unwrap_err()
                .contains("needs a dir or a command")
        );
        let two = format!(
            "{base}[[entrant]]\nname = \"a\"\ncommand = [\"x\"]\n[[entrant]]\nname = \"a\"\ncommand = [\"y\"]\n"
        );
        assert!(
            parse(&two)
                .unwrap_err()
                .contains("two entrants are named \"a\"")
        );
        assert!(
            parse("game = \"poker\"\ngames = 1\n")
                .unwrap_err()
                .contains("poker")
        );
        assert!(
            parse("game = \"septica\"\ngames = 1\nspeed = 3\n")
                .unwrap_err()
                .contains("speed")
        );
    }
}
