//! The game file (`game.toml`) of an external game: its judge, how many
//! players it takes, its default limits and how a move is read.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::bot::clock::{MoveLimits, TimeControl};
use crate::bot::program;
use crate::units::TomlDuration;
use crate::units::toml_error;

/// How a player's move is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadUnit {
    /// One line (its `\n`, a trailing `\r` and trailing spaces removed).
    #[default]
    Line,
    /// One byte that is not whitespace (space, tab, `\r`, `\n`), as Chomp.
    Byte,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    judge: Vec<String>,
    #[serde(default)]
    protocol: Option<u32>,
    players: Players,
    #[serde(default)]
    read: ReadUnit,
    #[serde(default)]
    reuse: bool,
    #[serde(default)]
    keep_players: bool,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    options: Option<toml::Table>,
    #[serde(default)]
    path_options: Vec<String>,
    #[serde(default)]
    drop_long_lines: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Players {
    min: usize,
    max: usize,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Limits {
    timeout: Option<TomlDuration>,
    startup: Option<TomlDuration>,
    time_control: Option<TimeControl>,
    time_margin: Option<TomlDuration>,
    game_timeout: Option<TomlDuration>,
    max_frames: Option<usize>,
}

/// The judge program that names the referee itself (`judge = ["referee",
/// "__chess-judge"]`): a judge built into the binary runs wherever the
/// binary is installed, and the game file stays the same everywhere (its
/// fingerprint, which `--resume` and shards compare, too).
pub const OWN_PROGRAM: &str = "referee";

/// Default time per move when the game file gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Most replay frames kept of one game when the game file gives no
/// `limits.max_frames`: a frame costs the referee far more memory than its
/// line (a game of 10⁶ small frames took 700 MB).
pub const DEFAULT_MAX_FRAMES: usize = 100_000;

/// An external game, as its game file describes it.
#[derive(Clone, Debug)]
pub struct ExternalGame {
    /// The game's name, as records show it (`game`).
    pub name: String,
    /// The game file.
    pub file: PathBuf,
    /// The judge program (resolved) and its arguments. It runs in the game
    /// file's directory.
    pub judge: Vec<std::ffi::OsString>,
    /// The game file's directory: the judge's working directory.
    pub dir: PathBuf,
    /// The judge protocol's version (`protocol`, 1 unless the file says 2).
    pub protocol: u32,
    pub min_players: usize,
    pub max_players: usize,
    pub read: ReadUnit,
    /// One judge process plays successive games.
    pub reuse: bool,
    /// In `referee play`, where the seats are fixed for the run, each
    /// seat's player process is kept from game to game (the game's player
    /// protocol separates games in-band). Tournaments and ci runs, whose
    /// seats change from game to game, start fresh players regardless.
    pub keep_players: bool,
    /// Keep the judge's replay frames in the result (tournaments, which do
    /// not record them, turn this off and save the memory).
    pub keep_frames: bool,
    /// Time per move and time control, unless the command line says
    /// otherwise.
    pub time: MoveLimits,
    /// How far a move may overrun its clock without losing (`time_margin`,
    /// 0 unless given).
    pub time_margin: Duration,
    /// The start-up allowance of the game file, if it gives one.
    pub startup: Option<Duration>,
    /// The longest a whole game may take (`limits.game_timeout`); a game
    /// that is not over by then is the judge's failure.
    pub game_timeout: Option<Duration>,
    /// Most replay frames kept of one game; later ones are dropped.
    pub max_frames: usize,
    /// `[options]`, passed to the judge in `start` as a JSON object.
    pub options: serde_json::Value,
    /// The options whose values are paths (`path_options`): one given in
    /// a tournament file or on the command line is taken from there (see
    /// [`ExternalGame::set_options_from`]).
    pub path_options: Vec<String>,
    /// Kinds of lines, by their first word, that a player may write longer
    /// than the line cap within a move of several lines (chess's `info`):
    /// such a line is dropped as it comes instead of losing the game.
    pub drop_long_lines: Vec<String>,
}

impl ExternalGame {
    /// Reads and checks a game file. The error names the file and, for a
    /// TOML error, the line.
    pub fn load(path: &Path) -> Result<ExternalGame, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        ExternalGame::parse(&text, path, dir).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses a game file's text; relative paths are taken from `dir`.
    pub fn parse(text: &str, path: &Path, dir: &Path) -> Result<ExternalGame, String> {
        let file: File = toml::from_str(text).map_err(|e| toml_error(&e))?;
        let mut problems = file_problems(&file);
        let protocol = file.protocol.unwrap_or(1);
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
        let mut judge: Vec<std::ffi::OsString> = file.judge.iter().map(Into::into).collect();
        match file.judge.first() {
            None => problems
                .push("judge must name a program: judge = [\"python3\", \"judge.py\"]".to_owned()),
            // Found when the judge starts: see `judge_program`.
            Some(program) if program == OWN_PROGRAM => {}
            Some(program) => match resolve_judge(program, &dir) {
                Ok(resolved) => judge[0] = resolved.into_os_string(),
                Err(e) => problems.push(format!("judge: {e}")),
            },
        }
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        let options = match file.options {
            Some(table) => serde_json::to_value(table).map_err(|e| format!("options: {e}"))?,
            None => serde_json::Value::Object(Default::default()),
        };
        Ok(ExternalGame {
            name: file.name,
            file: path.to_owned(),
            judge,
            dir,
            protocol,
            min_players: file.players.min,
            max_players: file.players.max,
            read: file.read,
            reuse: file.reuse,
            keep_players: file.keep_players,
            keep_frames: true,
            time: MoveLimits {
                timeout: file.limits.timeout.map_or(DEFAULT_TIMEOUT, |t| t.0),
                control: file.limits.time_control,
            },
            time_margin: file.limits.time_margin.map_or(Duration::ZERO, |t| t.0),
            startup: file.limits.startup.map(|t| t.0),
            game_timeout: file.limits.game_timeout.map(|t| t.0),
            max_frames: file.limits.max_frames.unwrap_or(DEFAULT_MAX_FRAMES),
            options,
            path_options: file.path_options,
            drop_long_lines: file.drop_long_lines,
        })
    }
}

/// The problems of a game file that need nothing but the file: its
/// name, players, limits, protocol and word lists (its judge is found
/// where the file is).
fn file_problems(file: &File) -> Vec<String> {
    let mut problems = Vec::new();
    if file.name.trim().is_empty() {
        problems.push("name must not be empty".to_owned());
    }
    if file.players.min == 0 {
        problems.push("players.min must be at least 1".to_owned());
    }
    if file.players.max < file.players.min {
        problems.push(format!(
            "players.max ({}) is less than players.min ({})",
            file.players.max, file.players.min
        ));
    }
    if file.limits.timeout.is_some_and(|t| t.0.is_zero()) {
        problems.push("limits.timeout must be longer than zero".to_owned());
    }
    let protocol = file.protocol.unwrap_or(1);
    if !super::protocol::VERSIONS.contains(&protocol) {
        problems.push(format!(
            "protocol = {protocol}: the referee speaks protocol version 1 or 2"
        ));
    }
    problems.extend(words_problem(
        "path_options",
        "an option's name",
        &file.path_options,
    ));
    let first_word = "a line's first word";
    problems.extend(words_problem(
        "drop_long_lines",
        first_word,
        &file.drop_long_lines,
    ));
    if file.limits.game_timeout.is_some_and(|t| t.0.is_zero()) {
        problems.push("limits.game_timeout must be longer than zero".to_owned());
    }
    problems
}

impl ExternalGame {
    /// The program to start as the judge: the game file's, or for
    /// [`OWN_PROGRAM`] the referee's own binary as it runs now,
    /// `/proc/PID/exe` (the same binary even after a rebuild or an
    /// install replaced its file), else its path.
    pub fn judge_program(&self) -> std::ffi::OsString {
        if self.judge[0] != OWN_PROGRAM {
            return self.judge[0].clone();
        }
        let running = PathBuf::from(format!("/proc/{}/exe", std::process::id()));
        if running.exists() {
            return running.into_os_string();
        }
        std::env::current_exe()
            .map(PathBuf::into_os_string)
            .unwrap_or_else(|_| OWN_PROGRAM.into())
    }

    /// Sets judge-wide options over the game file's, key by key (a
    /// tournament file's `[options]`, `--game-option`), given in `folder`
    /// (the tournament file's, or the current one for the command line):
    /// its path options are taken from there (see [`ExternalGame::paths_from`]).
    pub fn set_options_from(&mut self, options: &toml::Table, folder: &Path) -> Result<(), String> {
        let options = self.paths_from(options, folder);
        let options = serde_json::to_value(options).map_err(|e| format!("options: {e}"))?;
        if let (Some(mine), serde_json::Value::Object(given)) =
            (self.options.as_object_mut(), options)
        {
            mine.extend(given);
        }
        Ok(())
    }
}

impl ExternalGame {
    /// `options` given in `folder`, each of the game's path options that
    /// is a relative path taken from there: made absolute when `folder`
    /// has it, or when the game's own folder does not (so that the judge's
    /// error names the file meant); left as given when only the game's
    /// folder has it, where the judge runs: the book a game ships is found
    /// by its name from anywhere, as it always was.
    pub fn paths_from(&self, options: &toml::Table, folder: &Path) -> toml::Table {
        let mut options = options.clone();
        for key in &self.path_options {
            let Some(toml::Value::String(given)) = options.get_mut(key) else {
                continue;
            };
            let path = Path::new(given.as_str());
            if given.is_empty() || path.is_absolute() {
                continue;
            }
            let here = folder.join(path);
            if !here.exists() && self.dir.join(path).exists() {
                continue;
            }
            let here = std::path::absolute(&here).unwrap_or(here);
            if let Some(here) = here.to_str() {
                *given = here.to_owned();
            }
        }
        options
    }
}

/// The problem with the game file's list `key`, if it has one: each of
/// its `words` must be a word (not empty, no space or tab), as `what` is.
fn words_problem(key: &str, what: &str, words: &[String]) -> Option<String> {
    let bad = words
        .iter()
        .find(|w| w.is_empty() || w.contains([' ', '\t']))?;
    Some(format!("{key}: {bad:?} is not a word (each is {what})"))
}

/// A command-line option's VALUE, read as a TOML value: `5000` an
/// integer, `true` a boolean, `1.5` a float, `"x"` or `[1, 2]` as TOML
/// writes them; anything else (a bare word, `Skill Level`'s `3 a`) is a
/// string, as written (a date too: JSON has none).
pub fn option_value(text: &str) -> toml::Value {
    match toml::from_str::<toml::Table>(&format!("v = {text}")) {
        Ok(mut table) if table.len() == 1 => match table.remove("v") {
            Some(toml::Value::Datetime(_)) | None => toml::Value::String(text.to_owned()),
            Some(value) => value,
        },
        _ => toml::Value::String(text.to_owned()),
    }
}

/// `KEY=VALUE` (`--game-option`, `--each-option`): the key, and the value
/// as [`option_value`] reads it.
pub fn key_value(text: &str) -> Result<(String, toml::Value), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => Ok((key.to_owned(), option_value(value))),
        _ => Err("expected KEY=VALUE, e.g. nodes=5000".to_owned()),
    }
}

/// The judge's program: a path with a `/` is relative to the game file's
/// directory; a bare name is looked for there first, then on `PATH`.
fn resolve_judge(program: &str, dir: &Path) -> Result<PathBuf, String> {
    let program = if program.contains('/') {
        dir.join(program).into_os_string()
    } else {
        program.into()
    };
    program::resolve_beside(&program, dir).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ExternalGame, String> {
        ExternalGame::parse(text, Path::new("game.toml"), Path::new("/"))
    }

    #[test]
    fn a_full_file_parses() {
        let game = parse(
            "name = \"x\"\njudge = [\"sh\", \"judge.sh\"]\nplayers = { min = 1, max = 4 }\n\
             read = \"byte\"\nreuse = true\nkeep_players = true\n[limits]\ntimeout = \"250ms\"\n\
             time_control = \"2s+10ms\"\n[options]\nsize = 3\n",
        )
        .unwrap();
        assert_eq!(game.read, ReadUnit::Byte);
        assert_eq!(game.time.timeout, Duration::from_millis(250));
        assert_eq!(game.options["size"], 3);
        assert!(game.reuse && game.judge[0].to_string_lossy().ends_with("/sh"));
        assert!(game.keep_players);
        let plain =
            parse("name = \"x\"\njudge = [\"sh\"]\nplayers = { min = 1, max = 1 }\n").unwrap();
        assert!(!plain.keep_players && !plain.reuse);
        assert_eq!(plain.protocol, 1);
        let two =
            parse("name = \"x\"\njudge = [\"sh\"]\nprotocol = 2\nplayers = { min = 1, max = 1 }\n")
                .unwrap();
        assert_eq!(two.protocol, 2);
        let three =
            parse("name = \"x\"\njudge = [\"sh\"]\nprotocol = 3\nplayers = { min = 1, max = 1 }\n")
                .unwrap_err();
        assert!(three.contains("protocol = 3"), "{three}");
    }

    #[test]
    fn path_options_are_taken_from_where_they_were_given() {
        let dir = tempfile::tempdir().unwrap();
        let (game_dir, here) = (dir.path().join("game"), dir.path().join("here"));
        std::fs::create_dir_all(&game_dir).unwrap();
        std::fs::create_dir_all(&here).unwrap();
        std::fs::write(game_dir.join("shipped.epd"), "").unwrap();
        std::fs::write(here.join("mine.epd"), "").unwrap();
        let game = ExternalGame::parse(
            "name = \"x\"\njudge = [\"sh\"]\nplayers = { min = 1, max = 1 }\n\
             path_options = [\"book\"]\ndrop_long_lines = [\"info\"]\n",
            Path::new("game.toml"),
            &game_dir,
        )
        .unwrap();
        assert_eq!(game.drop_long_lines, ["info"]);
        let from_here = |book: toml::Value| {
            let options =
                toml::Table::from_iter([("book".to_owned(), book), ("n".into(), 1.into())]);
            let got = game.paths_from(&options, &here);
            assert_eq!(got["n"], 1.into());
            got["book"].clone()
        };
        let at = |name: &str| toml::Value::from(here.join(name).to_str().unwrap());
        assert_eq!(from_here("mine.epd".into()), at("mine.epd"));
        assert_eq!(from_here("none.epd".into()), at("none.epd"));
        assert_eq!(from_here("shipped.epd".into()), "shipped.epd".into());
        assert_eq!(from_here("/a/b.epd".into()), "/a/b.epd".into());
        assert_eq!(from_here(3.into()), 3.into());
        let e = parse(
            "name = \"x\"\njudge = [\"sh\"]\nplayers = { min = 1, max = 1 }\n\
                       path_options = [\"a b\"]\ndrop_long_lines = [\"\"]\n",
        )
        .unwrap_err();
        assert!(
            e.contains("path_options: \"a b\"") && e.contains("drop_long_lines: \"\""),
            "{e}"
        );
    }

    #[test]
    fn option_values_are_toml_values_or_strings() {
        assert_eq!(option_value("5000"), toml::Value::Integer(5000));
        assert_eq!(option_value("true"), toml::Value::Boolean(true));
        assert_eq!(option_value("1.5"), toml::Value::Float(1.5));
        assert_eq!(option_value("\"a b\""), toml::Value::String("a b".into()));
        for text in ["sharp", "3 a", "", "1\nw = 2", "x]", "2024-01-01"] {
            assert_eq!(option_value(text), toml::Value::String(text.into()));
        }
        assert_eq!(
            key_value("Skill Level=3").unwrap(),
            ("Skill Level".to_owned(), toml::Value::Integer(3))
        );
        assert_eq!(
            key_value("book=a=b.epd").unwrap(),
            ("book".to_owned(), toml::Value::String("a=b.epd".into()))
        );
        let e = key_value("nodes").unwrap_err();
        assert!(e.contains("expected KEY=VALUE"), "{e}");
        assert!(key_value("=3").is_err());
    }

    #[test]
    fn errors_name_the_line() {
        let e =
            parse("name = \"x\"\njudge = [\"sh\"]\nplayers = { min = 1, max = 1 }\ncolour = 3\n")
                .unwrap_err();
        assert!(e.contains("line 4") && e.contains("colour"), "{e}");
        let e = parse(
            "name = \"x\"\njudge = [\"no-such-judge-xyz\"]\nplayers = { min = 2, max = 1 }\n",
        )
        .unwrap_err();
        assert!(
            e.contains("players.max") && e.contains("no-such-judge-xyz"),
            "{e}"
        );
    }
}
