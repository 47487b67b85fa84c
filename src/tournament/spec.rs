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

pub use crate::game::Limits;
pub use crate::units::toml_error;

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
    /// Who meets whom: every entrant in turn (the default), or one
    /// entrant against each of the others (`gauntlet`).
    #[serde(default)]
    pub format: Format,
    /// The entrant a gauntlet is about, by name.
    #[serde(default)]
    pub gauntlet: Option<String>,
}

/// How a tournament seats its entrants (see `docs/tournaments.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Seats rotate over every entrant.
    #[default]
    RoundRobin,
    /// The `gauntlet` entrant sits at every table, the others rotating
    /// through the other seats.
    Gauntlet,
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
    out.extend(format_problems(spec));
    out.extend(limit_problems(&spec.limits));
    // The rest only the game can tell: which keys it takes, and whether
    // its setup makes sense (an external game's file, Chomp's arrays).
    match crate::game::load(&spec.game, &spec.limits, spec.entrants.len(), base, false) {
        Err(e) => out.push(e),
        Ok(game) => {
            for key in spec.limits.given() {
                if !GENERIC_LIMITS.contains(&key) && !game.limit_keys().contains(&key) {
                    out.push(format!(
                        "limits.{key} does not apply to {}: it takes {}",
                        game.name(),
                        GENERIC_LIMITS
                            .iter()
                            .chain(game.limit_keys())
                            .copied()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            out.extend(game.problems(spec.entrants.len()));
        }
    }
    out
}

/// Problems of `format` and `gauntlet`.
fn format_problems(spec: &Spec) -> Vec<String> {
    match (spec.format, &spec.gauntlet) {
        (Format::RoundRobin, None) => vec![],
        (Format::RoundRobin, Some(_)) => {
            vec!["gauntlet = \"NAME\" needs format = \"gauntlet\"".to_owned()]
        }
        (Format::Gauntlet, None) => {
            vec!["format = \"gauntlet\" needs gauntlet = \"NAME\", the entrant who meets every other".to_owned()]
        }
        (Format::Gauntlet, Some(name)) => {
            let mut out = vec![];
            if !spec.entrants.iter().any(|e| &e.name == name) {
                out.push(format!("gauntlet = {name:?} is not an entrant's name"));
            }
            if spec.entrants.len() < 2 {
                out.push("a gauntlet needs at least two entrants".to_owned());
            }
            out
        }
    }
}

/// The `[limits]` keys every game takes: how bots end, how long their
/// lines may be, and how entrants' directories are built.
pub const GENERIC_LIMITS: [&str; 4] = ["grace", "max_line", "make", "build_timeout"];

impl Limits {
    /// The keys the file gives.
    pub fn given(&self) -> Vec<&'static str> {
        [
            ("timeout", self.timeout.is_some()),
            ("startup", self.startup.is_some()),
            ("time_control", self.time_control.is_some()),
            ("grace", self.grace.is_some()),
            ("prep", self.prep.is_some()),
            ("starve", self.starve.is_some()),
            ("max_rounds", self.max_rounds.is_some()),
            ("start", self.start.is_some()),
            ("arrays", self.arrays.is_some()),
            ("seats", self.seats.is_some()),
            ("make", self.make.is_some()),
            ("build_timeout", self.build_timeout.is_some()),
            ("max_line", self.max_line.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, given)| given.then_some(key))
        .collect()
    }
}

/// Problems of a `[limits]` table that hold for any game.
pub fn limit_problems(l: &Limits) -> Vec<String> {
    let mut out = Vec::new();
    if l.max_line == Some(0) {
        out.push("limits.max_line must be at least 1".to_owned());
    }
    if l.max_rounds == Some(0) {
        out.push("limits.max_rounds must be at least 1".to_owned());
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
