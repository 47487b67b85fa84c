//! The environment a bot or a build starts with.
//!
//! Bots and builds get a short environment, the same whoever runs the
//! referee: a teacher's `PYTHONUNBUFFERED=1` must not decide whether a
//! student's Python bot, which never flushes, passes. They get:
//!
//! - `PATH` and `HOME`, as the referee has them, so that pyenv's shims,
//!   `~/.cargo/bin` and `/usr/games` go on working;
//! - the locale, `LANG`, `LANGUAGE` and every `LC_*`, as the referee has them;
//! - `TMPDIR`: the referee's temporary directory (its `TMPDIR`, else `/tmp`);
//!   under `--sandbox`, `/tmp`, the sandbox's private one (the referee's
//!   is hidden there); a build's outside the sandbox, a directory of the
//!   run's own in the referee's (see [`super::build::build_environment`]);
//! - then the variables the run adds, in order, a later one replacing an
//!   earlier one of the same name: `--env`, the file's `env` table, the
//!   entrant's own.
//!
//! Judges and validators, the organiser's own programs, keep the
//! referee's whole environment ([`Environment::Inherited`]).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Variables to set, in order: a later one replaces an earlier one of the
/// same name.
pub type Vars = Vec<(OsString, OsString)>;

/// The variables passed through as the referee has them.
const KEPT: [&str; 4] = ["PATH", "HOME", "LANG", "LANGUAGE"];

/// What a process's environment is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Environment {
    /// The short environment of the module's description, with these set on top.
    Clean(Vars),
    /// The referee's own, whole.
    Inherited,
}

impl Default for Environment {
    fn default() -> Environment {
        Environment::Clean(Vars::new())
    }
}

impl Environment {
    /// A clean environment with `vars` set on top.
    pub fn clean(vars: &[(OsString, OsString)]) -> Environment {
        Environment::Clean(vars.to_vec())
    }

    /// This environment with `more` set on top of what it sets (the
    /// referee's own stays as it is).
    pub fn with(&self, more: &[(OsString, OsString)]) -> Environment {
        match self {
            Environment::Clean(vars) => Environment::Clean([vars.as_slice(), more].concat()),
            Environment::Inherited => Environment::Inherited,
        }
    }

    /// This environment with `first` set before what it sets, which wins
    /// over it (the referee's own stays as it is).
    pub fn under(&self, first: &[(OsString, OsString)]) -> Environment {
        match self {
            Environment::Clean(vars) => Environment::Clean([first, vars.as_slice()].concat()),
            Environment::Inherited => Environment::Inherited,
        }
    }

    /// The variables a process starts with, `None` for the referee's own;
    /// `sandboxed` when it runs under bubblewrap.
    pub fn vars(&self, sandboxed: bool) -> Option<Vars> {
        let Environment::Clean(added) = self else {
            return None;
        };
        let mut vars: Vars = std::env::vars_os().filter(|(name, _)| kept(name)).collect();
        let tmp = if sandboxed {
            Path::new("/tmp").to_owned()
        } else {
            std::env::temp_dir()
        };
        vars.push(("TMPDIR".into(), tmp.into_os_string()));
        vars.extend(added.iter().cloned());
        Some(vars)
    }
}

fn kept(name: &OsStr) -> bool {
    KEPT.iter().any(|k| name == *k) || name.as_bytes().starts_with(b"LC_")
}

/// Why `name` cannot be a variable's name, if it cannot: an empty name, or
/// one with `=` or NUL, would not survive the trip through `exec`.
pub fn name_problem(name: &[u8]) -> Option<&'static str> {
    if name.is_empty() {
        Some("the name is empty")
    } else if name.contains(&b'=') {
        Some("a name cannot hold `=`")
    } else if name.contains(&0) {
        Some("a name cannot hold NUL")
    } else {
        None
    }
}

/// Why `value` cannot be a variable's value, if it cannot.
pub fn value_problem(value: &[u8]) -> Option<&'static str> {
    value.contains(&0).then_some("a value cannot hold NUL")
}

/// One `--env`: the variable it sets; `None` for `--env NAME` when the
/// referee has no NAME.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvArg(pub Option<(OsString, OsString)>);

/// The variables of the `--env` options, in order.
pub fn vars(args: &[EnvArg]) -> Vars {
    args.iter().filter_map(|arg| arg.0.clone()).collect()
}

/// `--env NAME=VALUE` (set NAME to VALUE) or `--env NAME` (pass the
/// referee's own NAME, when it has one).
pub fn parse_env(arg: OsString) -> Result<EnvArg, String> {
    parse_arg(&arg).map(EnvArg)
}

/// [`parse_env`]; `Ok(None)`: NAME, which the referee does not have.
fn parse_arg(arg: &OsStr) -> Result<Option<(OsString, OsString)>, String> {
    let bytes = arg.as_bytes();
    let (name, value) = match bytes.iter().position(|&b| b == b'=') {
        Some(at) => (&bytes[..at], Some(&bytes[at + 1..])),
        None => (bytes, None),
    };
    if let Some(why) = name_problem(name) {
        return Err(format!("NAME=VALUE or NAME expected: {why}"));
    }
    let name = OsStr::from_bytes(name).to_owned();
    Ok(match value {
        Some(value) => Some((name, OsStr::from_bytes(value).to_owned())),
        None => std::env::var_os(&name).map(|value| (name, value)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> OsString {
        s.into()
    }

    #[test]
    fn the_clean_environment_is_short_and_ends_with_what_is_added() {
        let vars = Environment::clean(&[(os("PATH"), os("/mine")), (os("X"), os("1"))])
            .vars(false)
            .unwrap();
        let names: Vec<&OsStr> = vars.iter().map(|(n, _)| n.as_os_str()).collect();
        assert!(names.iter().all(|n| kept(n) || *n == "TMPDIR" || *n == "X"));
        // Set last, so it is what the process gets.
        assert_eq!(vars[vars.len() - 2], (os("PATH"), os("/mine")));
        assert_eq!(Environment::Inherited.vars(false), None);
        // What is set under an environment's own loses to it.
        let under = Environment::clean(&[(os("TMPDIR"), os("/mine"))])
            .under(&[(os("TMPDIR"), os("/run")), (os("Y"), os("2"))])
            .vars(false)
            .unwrap();
        let tmp: Vec<&OsString> = under
            .iter()
            .filter(|(n, _)| n == "TMPDIR")
            .map(|(_, v)| v)
            .collect();
        assert_eq!(tmp[1..], [&os("/run"), &os("/mine")]);
        assert!(under.contains(&(os("Y"), os("2"))));
        let sandboxed = Environment::default().vars(true).unwrap();
        assert!(sandboxed.contains(&(os("TMPDIR"), os("/tmp"))));
    }

    #[test]
    fn env_arguments_are_read_or_refused() {
        assert_eq!(
            parse_arg(OsStr::new("A=b=c")),
            Ok(Some((os("A"), os("b=c"))))
        );
        assert_eq!(parse_arg(OsStr::new("A=")), Ok(Some((os("A"), os("")))));
        assert_eq!(
            parse_arg(OsStr::new("REFEREE_SURELY_UNSET_VARIABLE")),
            Ok(None)
        );
        for bad in ["", "=", "=x"] {
            assert!(parse_arg(OsStr::new(bad)).is_err(), "{bad:?}");
        }
        assert!(name_problem(b"A\0").is_some());
        assert!(value_problem(b"a\0").is_some());
    }
}
