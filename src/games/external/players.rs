//! `referee play`'s BOT arguments and `--option`s: who plays, under which
//! name, with which settings for the judge.
//!
//! A BOT is `[NAME=]COMMAND`. COMMAND is a program path, or a program
//! and its arguments in one argument, split as a shell splits words
//! (`'stockfish --threads 1'`); an argument that names an existing file is
//! never split, so a path with a space still works. NAME is what the judge
//! (protocol 2) and the records call the entrant; without one it is
//! COMMAND as written, with ` #2`, ` #3`, ... for a repeated one (a bot
//! against itself). `--option NAME:KEY=VALUE` gives an entrant an option,
//! as a tournament file's `options = { KEY = VALUE }` does, over
//! `--each-option KEY=VALUE`, every entrant's (a tournament file's
//! `[each]`); `--time-control NAME:BASE+INC` gives it its own clock.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::Player;
use super::spec::option_value;
use crate::bot::BotSpec;
use crate::bot::clock::TimeControl;

/// What the command line sets for the bots, the most specific last.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// `--each-option KEY=VALUE`: every bot's options.
    pub each: Vec<(String, toml::Value)>,
    /// `--option NAME:KEY=VALUE`: one bot's, over `each`.
    pub options: Vec<String>,
    /// `--time-control NAME:BASE+INC`: one bot's own clock.
    pub clocks: Vec<(String, TimeControl)>,
}

/// The players of `bots` with `settings`; `spec` makes a program's spec
/// from its words. The error names the argument.
pub fn parse(
    bots: &[OsString],
    settings: &Settings,
    spec: impl Fn(&[OsString]) -> BotSpec,
) -> Result<Vec<Player>, String> {
    let each: serde_json::Map<String, serde_json::Value> = settings
        .each
        .iter()
        .map(|(key, value)| (key.clone(), json(value)))
        .collect();
    let mut players = Vec::new();
    let mut named = Vec::new();
    for (i, bot) in bots.iter().enumerate() {
        let (name, command) = split_name(bot);
        let words = command_words(command)?;
        named.push(name.is_some());
        let name = name.unwrap_or_else(|| command.to_string_lossy().into_owned());
        players.push(Player {
            name,
            spec: spec(&words),
            options: serde_json::Value::Object(each.clone()),
            time_control: None,
            bot: i,
        });
    }
    distinct_names(&mut players, &named)?;
    for option in &settings.options {
        set_option(&mut players, option)?;
    }
    for (name, control) in &settings.clocks {
        let flag = format!("--time-control {name}:{control}");
        let at = named_player(&players, name, &flag)?;
        players[at].time_control = Some(*control);
    }
    Ok(players)
}

/// An option's value as the judge gets it.
fn json(value: &toml::Value) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_else(|_| serde_json::Value::String(value.to_string()))
}

/// Where the bot named `name` is; the error names `flag` and the bots.
fn named_player(players: &[Player], name: &str, flag: &str) -> Result<usize, String> {
    players.iter().position(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = players.iter().map(|p| p.name.as_str()).collect();
        format!(
            "{flag}: no BOT is named {name:?} (the BOTs are {})",
            names.join(", ")
        )
    })
}

/// `NAME=COMMAND` into its name and command: a name is made of letters,
/// digits and `_ . @ + -`, so that a path with a `=` (`./a=b`) is not
/// taken for one.
fn split_name(bot: &OsStr) -> (Option<String>, &OsStr) {
    let bytes = bot.as_bytes();
    let Some(at) = bytes.iter().position(|&b| b == b'=') else {
        return (None, bot);
    };
    let name = &bytes[..at];
    let is_name = !name.is_empty()
        && name
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"_.@+-".contains(&b));
    if !is_name {
        return (None, bot);
    }
    let command = OsStr::from_bytes(&bytes[at + 1..]);
    (Some(String::from_utf8_lossy(name).into_owned()), command)
}

/// A command's words: an existing file as it is, else split as a shell
/// would.
fn command_words(command: &OsStr) -> Result<Vec<OsString>, String> {
    let text = command.to_string_lossy();
    if command.is_empty() {
        return Err("a BOT names no program (NAME= needs a command after it)".to_owned());
    }
    if Path::new(command).is_file() || !text.contains(char::is_whitespace) {
        return Ok(vec![command.to_owned()]);
    }
    match shlex::split(&text) {
        Some(words) if !words.is_empty() => Ok(words.into_iter().map(OsString::from).collect()),
        _ => Err(format!(
            "BOT {text:?}: its words cannot be split (an unclosed quote?)"
        )),
    }
}

/// Names given twice are an error; names made from commands get ` #2`,
/// ` #3`, ... when repeated.
fn distinct_names(players: &mut [Player], named: &[bool]) -> Result<(), String> {
    for i in 0..players.len() {
        let earlier = players[..i]
            .iter()
            .filter(|p| p.name == players[i].name)
            .count();
        if earlier == 0 {
            continue;
        }
        if named[i] {
            return Err(format!(
                "two BOTs are named {:?}: names tell entrants apart",
                players[i].name
            ));
        }
        let mut n = earlier + 1;
        while players
            .iter()
            .any(|p| p.name == format!("{} #{n}", players[i].name))
        {
            n += 1;
        }
        players[i].name = format!("{} #{n}", players[i].name);
    }
    Ok(())
}

/// `NAME:KEY=VALUE`: VALUE is read as a TOML value (`3`, `true`,
/// `"x"`), else taken as the text it is ([`option_value`]).
fn set_option(players: &mut [Player], option: &str) -> Result<(), String> {
    let usage = || format!("--option {option:?}: expected NAME:KEY=VALUE");
    let (name, setting) = option.split_once(':').ok_or_else(usage)?;
    let (key, value) = setting.split_once('=').ok_or_else(usage)?;
    if key.trim().is_empty() {
        return Err(usage());
    }
    let at = named_player(players, name, &format!("--option {option:?}"))?;
    if let Some(options) = players[at].options.as_object_mut() {
        options.insert(key.to_owned(), json(&option_value(value)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(words: &[OsString]) -> BotSpec {
        BotSpec {
            program: words[0].clone(),
            args: words[1..].to_vec(),
            dir: None,
            hide: vec![],
            env: Default::default(),
        }
    }

    fn players(bots: &[&str], options: &[&str]) -> Result<Vec<Player>, String> {
        let bots: Vec<OsString> = bots.iter().map(OsString::from).collect();
        let settings = Settings {
            options: options.iter().map(|s| s.to_string()).collect(),
            ..Settings::default()
        };
        parse(&bots, &settings, spec)
    }

    #[test]
    fn a_bots_own_settings_win_over_every_bots() {
        let bots: Vec<OsString> = ["a=x", "b=y"].iter().map(OsString::from).collect();
        let settings = Settings {
            each: vec![
                ("Hash".to_owned(), toml::Value::Integer(16)),
                ("Threads".to_owned(), toml::Value::Integer(1)),
            ],
            options: vec!["b:Hash=64".to_owned()],
            clocks: vec![("b".to_owned(), "2s+50ms".parse().unwrap())],
        };
        let p = parse(&bots, &settings, spec).unwrap();
        assert_eq!(p[0].options, serde_json::json!({"Hash": 16, "Threads": 1}));
        assert_eq!(p[1].options, serde_json::json!({"Hash": 64, "Threads": 1}));
        assert_eq!(p[0].time_control, None);
        assert_eq!(p[1].time_control, Some("2s+50ms".parse().unwrap()));
        let settings = Settings {
            clocks: vec![("c".to_owned(), "2s".parse().unwrap())],
            ..Settings::default()
        };
        let e = parse(&bots, &settings, spec).unwrap_err();
        assert!(
            e.starts_with("--time-control c:") && e.contains("no BOT is named \"c\""),
            "{e}"
        );
    }

    #[test]
    fn bots_have_names_arguments_and_options() {
        let p = players(
            &["sf3=stockfish --threads 1", "sf8=stockfish", "./a=b"],
            &[
                "sf3:Skill Level=3",
                "sf8:Skill Level=8",
                "sf8:Ponder=false",
                "sf8:Style=sharp",
            ],
        )
        .unwrap();
        assert_eq!(p[0].name, "sf3");
        assert_eq!(p[0].spec.args, ["--threads", "1"]);
        assert_eq!(p[0].options["Skill Level"], 3);
        assert_eq!(p[1].options["Ponder"], false);
        assert_eq!(p[1].options["Style"], "sharp");
        assert_eq!(p[2].name, "./a=b");
        assert_eq!(p[2].spec.program, "./a=b");
        assert_eq!((p[0].bot, p[2].bot), (0, 2));
    }

    #[test]
    fn repeated_commands_are_numbered_and_repeated_names_refused() {
        let p = players(&["./x", "./x", "./x"], &[]).unwrap();
        let names: Vec<&str> = p.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["./x", "./x #2", "./x #3"]);
        let e = players(&["a=./x", "a=./y"], &[]).unwrap_err();
        assert!(e.contains("\"a\""), "{e}");
    }

    #[test]
    fn bad_arguments_are_named() {
        for (bots, options, words) in [
            (&["a="][..], &[][..], "no program"),
            (&["a=x 'y"][..], &[][..], "unclosed"),
            (&["a=x"][..], &["b:k=1"][..], "\"b\""),
            (&["a=x"][..], &["a-k=1"][..], "NAME:KEY=VALUE"),
            (&["a=x"][..], &["a:=1"][..], "NAME:KEY=VALUE"),
        ] {
            let e = players(bots, options).unwrap_err();
            assert!(e.contains(words), "{bots:?} {options:?}: {e}");
        }
    }
}
