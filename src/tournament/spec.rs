//! Tournament files (TOML): the game, its limits, the games to play and the
//! entrants. Relative paths are relative to the file's directory.
//!
//! ```toml
//! game = "chomp"          # evensteven, chomp, septica or acesup
//! games = 40
//! seed = 7
//! env = { OMP_NUM_THREADS = 1 }   # for every bot and build (docs/bots.md)
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
//! env = { PYTHONPATH = "lib" }    # for this entrant only
//! ```
//!
//! An external game's file takes the judge's options too, and options
//! and a clock for every entrant, which an entrant's own override:
//!
//! ```toml
//! game = "../games/chess/game.toml"
//! [options]                        # start.options, over the game file's
//! nodes = 5000
//! [each]                           # every entrant's, under its own
//! options = { Threads = 1, Hash = 16 }
//! time_control = "10s+100ms"
//!
//! [[entrant]]
//! name = "sf3"
//! command = ["/usr/games/stockfish"]
//! options = { "Skill Level" = 3 }  # Threads and Hash from [each]
//! time_control = "20s+200ms"       # time odds
//! ```

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::league_table::Policy;
use crate::bot::clock::TimeControl;
use crate::bot::environment::{self, Vars};

pub use crate::game::Limits;
pub use crate::units::toml_error;

pub use crate::game::{GameKind, GameRef};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// A built-in game's name, or an external game's `game.toml`.
    pub game: GameRef,
    /// Games (or matches, or decks) to play; each entrant plays each one in
    /// a one-player game. Required in a tournament (0 when missing, which
    /// [`problems`] refuses); refused in a league.
    #[serde(default)]
    pub games: u64,
    #[serde(default)]
    pub seed: Option<u64>,
    /// Print the standings every this many finished games.
    #[serde(default)]
    pub standings_every: Option<u64>,
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
    /// Head to head (two entrants): stop as soon as this SPRT decides
    /// whether the new entrant is better than `baseline`.
    #[serde(default)]
    pub sprt: Option<crate::stats::SprtSpec>,
    /// With `sprt`: the entrant that is the old version, by name.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Variables every bot and build gets, on top of `--env`'s.
    #[serde(default)]
    pub env: EnvTable,
    /// An external game's judge-wide options (`start.options`), key by
    /// key over its game file's `[options]`; `--game-option` goes over
    /// these (see [`load`]).
    #[serde(default)]
    pub options: Option<toml::Table>,
    /// What every entrant gets unless it says otherwise (fastchess's
    /// `-each`); [`parse`] has folded it into the entrants.
    #[serde(default)]
    pub each: Option<Each>,
}

/// A tournament file's `[each]` table: every entrant's defaults.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Each {
    /// Options under each entrant's own, key by key.
    #[serde(default)]
    pub options: Option<toml::Table>,
    /// The clock of each entrant that gives none.
    #[serde(default)]
    pub time_control: Option<TimeControl>,
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
    /// Unique; an entry with a `glob` names each entrant after its match.
    #[serde(default)]
    pub name: String,
    /// Built with `make` (when it has a makefile); the command runs there.
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// Program and arguments; for Chomp the default is `./pc2` in `dir`.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// A folder of submissions (`"submissions/*"`): one entrant per match,
    /// see [`expand_globs`]. Kept with its place in the file, for errors.
    #[serde(default)]
    pub glob: Option<toml::Spanned<String>>,
    /// Variables its program gets, on top of the file's.
    #[serde(default)]
    pub env: EnvTable,
    /// Settings an external game's judge passes on to the program
    /// (`options = { "Skill Level" = 3 }`): one program with two
    /// settings is two entrants.
    #[serde(default)]
    pub options: Option<toml::Table>,
    /// Its own clock (time odds), over `[limits]`' and `[each]`'s: an
    /// external game's referee keeps each seat's clock on its own control.
    #[serde(default)]
    pub time_control: Option<TimeControl>,
}

impl EntrantSpec {
    /// Its `options` as the judge gets them: a JSON object.
    pub fn options_json(&self) -> serde_json::Value {
        self.options
            .as_ref()
            .and_then(|table| serde_json::to_value(table).ok())
            .unwrap_or_else(|| serde_json::Value::Object(Default::default()))
    }
}

/// What the command line sets over a tournament file.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--games N`: stands for the file's `games` when it has none: a
    /// league's file, which has none, is then the end-of-term
    /// tournament's too.
    pub games: Option<u64>,
    /// `--game-option KEY=VALUE`s, over the file's `[options]`.
    pub game_options: toml::Table,
}

/// Reads and checks a tournament file, with what the command line
/// overrides; errors name the file (and, for values TOML can place, the
/// line).
pub fn load(path: &Path, overrides: &Overrides) -> Result<Spec, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse_with(&text, base, overrides).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses and checks a tournament file's text; relative paths are taken
/// from `base`. All problems are reported at once, one per line.
pub fn parse(text: &str, base: &Path) -> Result<Spec, String> {
    parse_with(text, base, &Overrides::default())
}

/// [`parse`], with what the command line overrides.
fn parse_with(text: &str, base: &Path, overrides: &Overrides) -> Result<Spec, String> {
    let (mut spec, league) = split_league(text)?;
    if let Some(games) = overrides.games {
        spec.games = games;
    }
    if !overrides.game_options.is_empty() {
        let given = crate::game::command_line_options(&spec.game, base, &overrides.game_options);
        spec.options.get_or_insert_default().extend(given);
    }
    apply_each(&mut spec);
    let mut problems = Vec::new();
    if league.is_some() {
        problems.push(LEAGUE_ONLY.to_owned());
    }
    problems.extend(spec.env.problems(text));
    problems.extend(spec.entrants.iter().flat_map(|e| e.env.problems(text)));
    problems.extend(expand_globs(&mut spec.entrants, text, base));
    if problems.is_empty() {
        problems = self::problems(&spec, base);
    }
    if problems.is_empty() {
        Ok(spec)
    } else {
        Err(problems.join("\n  "))
    }
}

/// Reads a tournament file for a league (`referee league run`): the keys
/// of a run of so many games (`games`, `format = "gauntlet"`, `sprt`...)
/// are refused, a glob may match nothing yet, and the globs are kept as
/// globs, for the league to look at again ([`expand_globs_now`]). The
/// rest is checked as a tournament's, with the globs as they match now.
///
/// Also returns the text, and the matchmaking's knobs: the `[league]`
/// table's, the defaults for those it does not give.
pub fn load_league(path: &Path) -> Result<(Spec, String, LeagueSettings), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let at = |e: String| format!("{}: {e}", path.display());
    let (mut spec, league) = split_league(&text).map_err(at)?;
    apply_each(&mut spec);
    let mut problems = league_refusals(&spec);
    let settings = match league {
        None => LeagueSettings::default(),
        Some(Err(e)) => {
            problems.push(e);
            LeagueSettings::default()
        }
        Some(Ok(settings)) => {
            problems.extend(settings.policy.problems());
            settings
        }
    };
    problems.extend(spec.env.problems(&text));
    problems.extend(spec.entrants.iter().flat_map(|e| e.env.problems(&text)));
    let mut now = spec.clone();
    problems.extend(expand_globs_now(&mut now.entrants, &text, base));
    if problems.is_empty() {
        // A glob may match nothing yet.
        let globs = spec.entrants.iter().any(|e| e.glob.is_some());
        if now.entrants.is_empty() && !globs {
            problems.push(NO_ENTRANT.to_owned());
        }
        problems.extend(problems_but_the_run(&now, base, true));
    }
    if problems.is_empty() {
        Ok((spec, text, settings))
    } else {
        Err(at(problems.join("\n  ")))
    }
}

/// Gives every entrant `[each]`'s options under its own (key by key) and
/// `[each]`'s clock unless it has one: an entrant's own settings win.
fn apply_each(spec: &mut Spec) {
    let Some(each) = &spec.each else {
        return;
    };
    for e in &mut spec.entrants {
        if let Some(defaults) = &each.options {
            let mut options = defaults.clone();
            options.extend(e.options.take().unwrap_or_default());
            e.options = Some(options);
        }
        e.time_control = e.time_control.or(each.time_control);
    }
}

/// A league's file as its workers read it from the league's database: the
/// text the league checked when it started.
pub fn league_spec(text: &str) -> Result<Spec, String> {
    let (mut spec, _) = split_league(text)?;
    apply_each(&mut spec);
    Ok(spec)
}

/// A tournament's refusal of a league's settings.
const LEAGUE_ONLY: &str = "[league]: the settings of a league's matchmaking (referee league run FILE \
     --db DB); a tournament plays every table it deals: take the table out for a tournament";

/// A league's settings, its file's `[league]` table.
#[derive(Clone, Copy, Debug, Default)]
pub struct LeagueSettings {
    /// The matchmaking's knobs.
    pub policy: Policy,
    /// `page_stderr = true`: the live page's replays show what the bots
    /// wrote on stderr. Off by default: the page is the whole class's,
    /// and a bot's stderr is its author's (CodinGame shows a player only
    /// their own).
    pub page_stderr: bool,
}

/// A file's `[league]` table, if it has one: the league's settings, or
/// what is wrong with them.
type LeagueTable = Option<Result<LeagueSettings, String>>;

/// The file's text as a [`Spec`], and its `[league]` table (a league's
/// settings, which [`Spec`] does not hold); errors name the line.
fn split_league(text: &str) -> Result<(Spec, LeagueTable), String> {
    let placed = |mut e: toml::de::Error| {
        e.set_input(Some(text));
        toml_error(&e)
    };
    let mut root = toml::de::DeTable::parse(text).map_err(placed)?;
    let mut league = root.get_mut().remove("league");
    // The page's key, taken out before the rest is read as the
    // matchmaking's knobs.
    let page_stderr = match league.as_mut().map(|table| table.get_mut()) {
        Some(toml::de::DeValue::Table(table)) => table.remove("page_stderr"),
        _ => None,
    };
    let spec = Spec::deserialize(toml::de::Deserializer::from(root)).map_err(placed)?;
    let league = league.map(|table| {
        let policy =
            Policy::deserialize(toml::de::ValueDeserializer::from(table)).map_err(placed)?;
        let page_stderr = match page_stderr.map(|value| value.into_inner()) {
            None => false,
            Some(toml::de::DeValue::Boolean(shown)) => shown,
            Some(_) => return Err("[league] page_stderr: true or false".to_owned()),
        };
        Ok(LeagueSettings {
            policy,
            page_stderr,
        })
    });
    Ok((spec, league))
}

/// What a league does not take: it plays until stopped, each entrant's
/// current version against the others by its own matchmaking.
fn league_refusals(spec: &Spec) -> Vec<String> {
    let mut out = Vec::new();
    let mut refuse = |given: bool, key: &str, why: &str| {
        if given {
            out.push(format!("{key}: a league {why}"));
        }
    };
    refuse(
        spec.games != 0,
        "games",
        "plays until it is stopped (referee league run --games N stops after N)",
    );
    refuse(
        spec.format == Format::Gauntlet || spec.gauntlet.is_some(),
        "format = \"gauntlet\"",
        "picks its tables by matchmaking; for a gauntlet, run a tournament",
    );
    refuse(
        spec.sprt.is_some() || spec.baseline.is_some(),
        "sprt",
        "has no end to decide; for a test of a new version, run a tournament with sprt",
    );
    refuse(
        spec.standings_every.is_some(),
        "standings_every",
        "shows its standings on its live page (--serve) and at its end",
    );
    out
}

const NO_ENTRANT: &str = "no [[entrant]]";

/// The league's entrants now: [`expand_globs`], where a glob that matches
/// nothing is no problem (its folder is looked at again).
pub fn expand_globs_now(entrants: &mut Vec<EntrantSpec>, text: &str, base: &Path) -> Vec<String> {
    globs(entrants, text, base, true)
}

/// Checks what TOML types alone cannot; every problem, not only the first.
pub fn problems(spec: &Spec, base: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if spec.entrants.is_empty() {
        out.push(NO_ENTRANT.to_owned());
    }
    // Games are produced lazily: any number of them costs nothing until
    // it is played.
    if spec.games == 0 {
        out.push(
            "games: none to play (write `games = N` in the file, or give `--games N`)".to_owned(),
        );
    }
    out.extend(problems_but_the_run(spec, base, false));
    out
}

/// [`problems`] but those of a run of so many games (its `games`, its
/// entrants): what a league's file is checked for too. A `league` waits
/// for enough entrants to fill a table: fewer now are no problem.
fn problems_but_the_run(spec: &Spec, base: &Path, league: bool) -> Vec<String> {
    let mut out = Vec::new();
    if spec.jobs == Some(0) {
        out.push("jobs must be at least 1".to_owned());
    }
    if spec.standings_every == Some(0) {
        out.push("standings_every must be at least 1".to_owned());
    }
    out.extend(entrant_problems(spec));
    out.extend(format_problems(spec));
    out.extend(sprt_problems(spec));
    out.extend(limit_problems(&spec.limits));
    out.extend(game_problems(spec, base, league));
    out
}

/// Problems of the entrants: a name twice or empty, a glob, no program,
/// and what only an external game takes.
fn entrant_problems(spec: &Spec) -> Vec<String> {
    let mut out = Vec::new();
    let mut names: Vec<&str> = spec.entrants.iter().map(|e| e.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        out.push(format!("two entrants are named {:?}", w[0]));
    }
    let builtin = matches!(spec.game, crate::game::GameRef::Builtin(_));
    for e in &spec.entrants {
        if e.name.trim().is_empty() {
            out.push("an entrant has an empty name".to_owned());
        }
        if let Some(glob) = &e.glob {
            out.push(format!(
                "entrant glob {:?}: globs are taken in tournament files and ci opponents only",
                glob.get_ref()
            ));
        }
        match (&e.dir, &e.command) {
            (None, None) if e.glob.is_some() => {}
            (None, None) => out.push(format!("entrant {:?} needs a dir or a command", e.name)),
            (_, Some(c)) if c.first().is_none_or(|p| p.trim().is_empty()) => {
                out.push(format!("entrant {:?} has an empty command", e.name));
            }
            _ => {}
        }
        if e.options.is_some() && builtin {
            out.push(format!(
                "entrant {:?}: options are passed to an external game's judge; {} has none",
                e.name,
                spec.game.name()
            ));
        }
        if e.time_control.is_some() && builtin {
            out.push(format!(
                "entrant {:?}: a time_control per entrant is for an external game's players; \
                 {} takes one for all, under [limits]",
                e.name,
                spec.game.name()
            ));
        }
    }
    out
}

/// The problems only the game can tell: which keys it takes, and whether
/// its setup makes sense (an external game's file, Chomp's arrays).
fn game_problems(spec: &Spec, base: &Path, league: bool) -> Vec<String> {
    let options = spec.options.as_ref();
    let entrants = spec.entrants.len();
    let game = match crate::game::load(&spec.game, &spec.limits, options, entrants, base, false) {
        Err(e) => return vec![e],
        Ok(game) => game,
    };
    let mut out = Vec::new();
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
    let entrants = match game.seating() {
        crate::game::Seating::Table { seats } if league => entrants.max(seats),
        _ => entrants,
    };
    out.extend(game.problems(entrants));
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

/// Problems of `sprt` and `baseline`.
fn sprt_problems(spec: &Spec) -> Vec<String> {
    let mut out = vec![];
    match (&spec.sprt, &spec.baseline) {
        (None, None) => {}
        (None, Some(_)) => {
            out.push("baseline = \"NAME\" needs sprt = { elo0 = ..., elo1 = ... }".to_owned())
        }
        (Some(_), None) => out
            .push("sprt needs baseline = \"NAME\", the entrant that is the old version".to_owned()),
        (Some(sprt), Some(name)) => {
            for p in sprt.test().problems() {
                out.push(format!("sprt: {p}"));
            }
            if spec.entrants.len() != 2 {
                out.push(format!(
                    "sprt is a head-to-head test: it needs exactly two entrants, not {}",
                    spec.entrants.len()
                ));
            } else if !spec.entrants.iter().any(|e| &e.name == name) {
                out.push(format!("baseline = {name:?} is not an entrant's name"));
            }
            if spec.format == Format::Gauntlet {
                out.push(
                    "sprt plays the two entrants head to head: drop format = \"gauntlet\""
                        .to_owned(),
                );
            }
            if spec.games < 2 {
                out.push("sprt plays games in pairs: games must be at least 2".to_owned());
            }
        }
    }
    out
}

/// Replaces each `[[entrant]]` with a `glob` by one entrant per match, in
/// the order of their names, so that a run is the same wherever it runs.
///
/// The glob is a path relative to `base` whose last part may hold `*`
/// (any characters) and `?` (one character); a trailing `/` takes
/// directories only. Names starting with `.` match only a pattern that
/// starts with `.`. A directory becomes an entrant with that `dir` (built
/// with make when it has a makefile) and the entry's `command`; a file
/// becomes an entrant whose program is that file. Each is named after its
/// match's file name. A glob that matches nothing, or a name an explicit
/// entrant already has, is a problem named with the glob's line in `text`.
pub fn expand_globs(entrants: &mut Vec<EntrantSpec>, text: &str, base: &Path) -> Vec<String> {
    globs(entrants, text, base, false)
}

fn globs(entrants: &mut Vec<EntrantSpec>, text: &str, base: &Path, empty_ok: bool) -> Vec<String> {
    let mut expansion = Expansion::new(entrants, base);
    for e in std::mem::take(entrants) {
        let Some(glob) = &e.glob else {
            expansion.out.push(e);
            continue;
        };
        let line = text
            .get(..glob.span().start)
            .map_or(0, |t| t.matches('\n').count() + 1);
        let pattern = glob.get_ref();
        let at = format!("line {line}: glob {pattern:?}");
        expansion.expand(&e, pattern, &at, empty_ok);
    }
    *entrants = expansion.out;
    expansion.problems
}

/// The entrants of [`globs`] as they are expanded, and the problems found.
struct Expansion<'a> {
    base: &'a Path,
    /// The names of the entrants given without a glob.
    explicit: std::collections::HashSet<String>,
    /// Each matched folder as it resolves, with its name and its glob's
    /// place: two matches of one folder would be one submission twice.
    /// (Looked up, not searched: a class of 60,000 folders.)
    folders: std::collections::HashMap<PathBuf, (String, String)>,
    out: Vec<EntrantSpec>,
    problems: Vec<String>,
}

impl<'a> Expansion<'a> {
    fn new(entrants: &[EntrantSpec], base: &'a Path) -> Expansion<'a> {
        Expansion {
            base,
            explicit: entrants
                .iter()
                .filter(|e| e.glob.is_none())
                .map(|e| e.name.clone())
                .collect(),
            folders: std::collections::HashMap::new(),
            out: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// One entrant with a glob (`pattern`, at `at`): an entrant per match.
    fn expand(&mut self, e: &EntrantSpec, pattern: &str, at: &str, empty_ok: bool) {
        if !e.name.is_empty() || e.dir.is_some() {
            self.problems.push(format!(
                "{at}: names its entrants after its matches and builds each in its own directory; drop name and dir"
            ));
            return;
        }
        match glob_matches(pattern, self.base) {
            Err(why) => self.problems.push(format!("{at}: {why}")),
            Ok(matches) if matches.is_empty() && empty_ok => {}
            Ok(matches) if matches.is_empty() => self.problems.push(format!(
                "{at} matches nothing in {}",
                under(self.base, Path::new(pattern))
                    .parent()
                    .unwrap_or(self.base)
                    .display()
            )),
            Ok(matches) => {
                for (name, path, is_dir) in matches {
                    if let Some(problem) = self.refused(at, &name, &path, is_dir) {
                        self.problems.push(problem);
                        continue;
                    }
                    self.out.push(matched_entrant(e, name, path, is_dir));
                }
            }
        }
    }

    /// Why a match of the glob at `at` cannot enter, if it cannot: a file
    /// name that is not text, an explicit entrant's name, or a folder
    /// matched before (else the folder is noted).
    fn refused(&mut self, at: &str, name: &str, path: &Path, is_dir: bool) -> Option<String> {
        if !is_dir && path.to_str().is_none() {
            // A command is text: the file could not be named.
            return Some(format!(
                "{at} matches the file {name:?}, whose name is not UTF-8: rename it \
                 (a folder of such a name enters under its escaped name)"
            ));
        }
        if self.explicit.contains(name) {
            return Some(format!(
                "{at} matches {name:?}, which is also an explicit entrant's name"
            ));
        }
        if is_dir && let Ok(real) = std::fs::canonicalize(under(self.base, path)) {
            if let Some((first, first_at)) = self.folders.get(&real) {
                let also = if first_at == at {
                    String::new()
                } else {
                    format!(" ({first_at})")
                };
                return Some(format!(
                    "{at} matches {first:?}{also} and {name:?}, which are one folder, {}",
                    real.display()
                ));
            }
            self.folders.insert(real, (name.to_owned(), at.to_owned()));
        }
        None
    }
}

/// The entrant of one match of `e`'s glob: a folder with `e`'s command,
/// or a file as the program.
fn matched_entrant(e: &EntrantSpec, name: String, path: PathBuf, is_dir: bool) -> EntrantSpec {
    if is_dir {
        EntrantSpec {
            name,
            dir: Some(path),
            command: e.command.clone(),
            glob: None,
            env: e.env.clone(),
            options: e.options.clone(),
            time_control: e.time_control,
        }
    } else {
        // `./name` so that a match beside the file is not
        // looked up on the PATH.
        let program = Path::new(".").join(&path);
        EntrantSpec {
            name,
            dir: None,
            command: Some(vec![program.to_string_lossy().into_owned()]),
            glob: None,
            env: e.env.clone(),
            options: e.options.clone(),
            time_control: e.time_control,
        }
    }
}

fn under(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        base.join(path)
    }
}

/// The matches of `pattern` (relative to `base`): each one's name, its
/// path (relative when the pattern is), and whether it is a directory;
/// sorted by name.
fn glob_matches(pattern: &str, base: &Path) -> Result<Vec<(String, PathBuf, bool)>, String> {
    let dirs_only = pattern.ends_with('/');
    let trimmed = pattern.trim_end_matches('/');
    let (parent, last) = match trimmed.rsplit_once('/') {
        Some((parent, last)) => (parent, last),
        None => ("", trimmed),
    };
    if last.is_empty() {
        return Err("has no name to match after its last /".to_owned());
    }
    if parent.contains(['*', '?', '[']) {
        return Err("may hold * and ? in its last part only".to_owned());
    }
    let parent = if parent.is_empty() && trimmed.starts_with('/') {
        PathBuf::from("/")
    } else {
        PathBuf::from(parent)
    };
    let dir = under(base, &parent);
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let file_name = entry.file_name();
        let name = escaped_name(&file_name);
        if (name.starts_with('.') && !last.starts_with('.')) || !wildcard(last, &name) {
            continue;
        }
        // A link to a directory counts as a directory.
        let is_dir = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
        if dirs_only && !is_dir {
            continue;
        }
        out.push((name, parent.join(&file_name), is_dir));
    }
    out.sort();
    for (name, path, is_dir) in &out {
        if *is_dir {
            outside(&dir, path.file_name().unwrap_or_default(), name)?;
        }
    }
    Ok(out)
}

/// A file name as an entrant's name: as it is when it is UTF-8, else with
/// each byte that is not written `\xNN` (a folder named in Latin-1 by an
/// old archive tool enters, under a name every page and file can show,
/// rather than be skipped without a word).
fn escaped_name(file_name: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    if let Some(name) = file_name.to_str() {
        return name.to_owned();
    }
    let mut name = String::new();
    for chunk in file_name.as_bytes().utf8_chunks() {
        name.push_str(chunk.valid());
        for byte in chunk.invalid() {
            name.push_str(&format!("\\x{byte:02x}"));
        }
    }
    name
}

/// Why the folder `name` a glob matched in `dir` cannot be an entrant, if
/// it leads out of `dir`: a link to `/` would have its build write
/// there; to anywhere else, the sandbox would show that to it.
fn outside(dir: &Path, file_name: &std::ffi::OsStr, name: &str) -> Result<(), String> {
    let within = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let real = std::fs::canonicalize(dir.join(file_name))
        .map_err(|e| format!("{}: {e}", dir.join(file_name).display()))?;
    if real.starts_with(&within) && real != within {
        return Ok(());
    }
    Err(format!(
        "matches {name:?}, a link to {}, outside {}: a submission's folder must be in the glob's",
        real.display(),
        within.display()
    ))
}

/// Whether `name` matches `pattern`: `*` any characters, `?` one.
fn wildcard(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Greedy with backtracking to the last star: linear enough for names.
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
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
            ("time_margin", self.time_margin.is_some()),
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

/// An `env` table: `NAME = "value"` (or an integer) for each variable.
/// Names keep their place in the file, for errors.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(transparent)]
pub struct EnvTable(BTreeMap<toml::Spanned<String>, EnvValue>);

/// A variable's value: a string, or an integer written as a string would
/// be (`OMP_NUM_THREADS = 1`).
#[derive(Clone, Debug)]
pub struct EnvValue(String);

impl<'de> Deserialize<'de> for EnvValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<EnvValue, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = EnvValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string (or an integer) as a variable's value")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<EnvValue, E> {
                Ok(EnvValue(v.to_owned()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<EnvValue, E> {
                Ok(EnvValue(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<EnvValue, E> {
                Ok(EnvValue(v.to_string()))
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl EnvTable {
    /// The variables, in the order of their names.
    pub fn vars(&self) -> Vars {
        self.0
            .iter()
            .map(|(name, value)| (OsString::from(name.get_ref()), OsString::from(&value.0)))
            .collect()
    }

    /// Names and values no process could be given, each with its line in
    /// `text`, the file's.
    pub fn problems(&self, text: &str) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|(name, value)| {
                let why = environment::name_problem(name.get_ref().as_bytes())
                    .or_else(|| environment::value_problem(value.0.as_bytes()))?;
                let line = crate::units::line_at(text, name.span().start);
                Some(format!("line {line}: env: {:?}: {why}", name.get_ref()))
            })
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
        let options = format!(
            "{base}[[entrant]]\nname = \"a\"\ncommand = [\"x\"]\noptions = {{ Hash = 16 }}\n"
        );
        let error = parse(&options, Path::new(".")).unwrap_err();
        assert!(
            error.contains("entrant \"a\": options are passed to an external game's judge"),
            "{error}"
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
