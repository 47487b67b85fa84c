//! A worker's own containment: what it lets a version stored in the
//! league's database run on its machine, and how.
//!
//! Why the worker decides: whoever can write the league's database (a bot
//! that reached it, anyone with its password) could otherwise choose how
//! every worker runs every bot. A worker took the bots' limits, each
//! version's program and its environment from the database, so that one
//! write turned the sandbox off on every worker started after it, and ran
//! the writer's program on each (issue 49). So the database says what to
//! play, and the league's rules (time and memory limits, the seed); the
//! worker's own command line and the league's file, as the worker reads
//! it, say how:
//!
//! - **the sandbox** is the worker's `--sandbox`: a league that asks for
//!   it refuses a worker without it, and a database that says otherwise
//!   never turns it off;
//! - **what the sandbox hides** is the worker's own list
//!   ([`Containment::hide`]), not the one stored with each version;
//! - **the environment** is the clean one, the variables the league's file
//!   sets (its `env` tables), and the worker's own `--env`; a variable
//!   stored for a version that the file does not set to that value (the
//!   coordinator's `--env`, or a writer's `LD_PRELOAD`) is left out, and
//!   said once;
//! - **the program** resolves inside the version's copy under the
//!   worker's versions' folder (links followed), or is a program the
//!   league's file names as an entrant's command (an interpreter, a named
//!   engine); anything else (a path elsewhere, a link out of the copy) is
//!   declined, never run. A folder to run in is the copy's, or none.
//!
//! A program's arguments are not checked: they are the version's own, as
//! its files are (`python3 -c ...` runs what it says), and what they make
//! the program do, it does inside the worker's containment, as any bot.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::bot::environment::Vars;
use crate::bot::{BotSpec, Environment};
use crate::tournament::spec::Spec;
use crate::tournament::units::{Entrant, under};

/// How a worker runs the versions it plays.
#[derive(Clone, Debug, Default)]
pub struct Containment {
    /// What its sandbox hides: its versions' folder (each bot's own copy is
    /// shown again), the league's folder and file, the database's
    /// password files (and files, for SQLite).
    pub hide: Vec<PathBuf>,
    /// Its own `--env`, set last.
    pub env: Vars,
    /// The variables the league's file sets (its `env` table and its
    /// entrants'), as name and value.
    file_env: Vars,
    /// The programs the league's file names: the first word of each
    /// entrant's command, as written and as the league resolves a
    /// relative one (beside the file).
    commands: Vec<OsString>,
}

impl Containment {
    /// The containment of a worker whose sandbox (when it has
    /// `--sandbox`) hides `hide`, with its `--env`, for the league of
    /// `spec`, read from a file in `base`.
    pub fn new(spec: &Spec, base: &Path, hide: Vec<PathBuf>, env: Vars) -> Self {
        let mut file_env = spec.env.vars();
        let mut commands = Vec::new();
        for e in &spec.entrants {
            file_env.extend(e.env.vars());
            if let Some(first) = e.command.as_ref().and_then(|c| c.first()) {
                commands.push(OsString::from(first));
                commands.push(under(base, Path::new(first)).into_os_string());
            }
        }
        Containment {
            hide,
            env,
            file_env,
            commands,
        }
    }

    /// `entrant`, as stored and found by [`super::copies::check`] (its
    /// copy at `copy` on this machine, if it has one), as this worker runs
    /// it; or why this worker does not. `left_out`: the names of stored
    /// variables left out.
    pub fn apply(&self, mut entrant: Entrant, copy: Option<&Path>) -> Result<Contained, String> {
        let Ok(spec) = entrant.program.as_mut() else {
            return Ok(Contained {
                entrant,
                left_out: Vec::new(),
            });
        };
        self.check_program(spec, copy)?;
        check_dir(spec, copy)?;
        let (kept, left_out) = self.kept_env(&spec.env);
        spec.env = Environment::Clean([kept, self.env.clone()].concat());
        spec.hide.clone_from(&self.hide);
        Ok(Contained { entrant, left_out })
    }

    /// Whether `spec`'s program may run here: inside its copy, or named
    /// by the league's file.
    fn check_program(&self, spec: &BotSpec, copy: Option<&Path>) -> Result<(), String> {
        let located = spec
            .locate()
            .map_err(|e| format!("cannot start {}: {e}", Path::new(&spec.program).display()))?;
        if let Some(copy) = copy
            && located.starts_with(copy)
        {
            let (real, root) = (canonical(&located)?, canonical(copy)?);
            if real.starts_with(&root) {
                return Ok(());
            }
            return Err(format!(
                "its program {} resolves to {}, outside its copy {}: a worker runs nothing \
                 a version's copy only points to",
                located.display(),
                real.display(),
                copy.display()
            ));
        }
        if self.commands.contains(&spec.program) {
            return Ok(());
        }
        Err(format!(
            "its program {} is not in its copy{}, and the league's file names no such command: \
             a worker runs a version's own program only from its copy in the versions' folder",
            located.display(),
            copy.map(|c| format!(" {}", c.display()))
                .unwrap_or_default()
        ))
    }

    /// The stored variables the league's file sets to the same value, in
    /// their order; and the names of the others.
    fn kept_env(&self, stored: &Environment) -> (Vars, Vec<OsString>) {
        let Environment::Clean(vars) = stored else {
            // The referee's own environment is never a bot's here.
            return (Vars::new(), Vec::new());
        };
        let (kept, left): (Vars, Vars) = vars
            .iter()
            .cloned()
            .partition(|var| self.file_env.contains(var));
        let mut left_out: Vec<OsString> = left
            .into_iter()
            .map(|(name, _)| name)
            // What the worker sets itself is no loss.
            .filter(|name| !self.env.iter().any(|(own, _)| own == name))
            .collect();
        left_out.sort();
        left_out.dedup();
        (kept, left_out)
    }
}

/// An entrant as a worker runs it, and the stored variables it left out.
pub struct Contained {
    pub entrant: Entrant,
    pub left_out: Vec<OsString>,
}

/// A folder to run in is the copy's (checked there already), or none.
fn check_dir(spec: &BotSpec, copy: Option<&Path>) -> Result<(), String> {
    match (&spec.dir, copy) {
        (None, _) => Ok(()),
        (Some(dir), Some(copy)) => {
            let (real, root) = (canonical(dir)?, canonical(copy)?);
            if real.starts_with(&root) {
                Ok(())
            } else {
                Err(format!(
                    "its folder {} resolves to {}, outside its copy {}",
                    dir.display(),
                    real.display(),
                    copy.display()
                ))
            }
        }
        (Some(dir), None) => Err(format!(
            "its folder {} is no copy in the versions' folder",
            dir.display()
        )),
    }
}

fn canonical(path: &Path) -> Result<PathBuf, String> {
    std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn spec(text: &str) -> Spec {
        crate::tournament::spec::league_spec(text).unwrap()
    }

    fn entrant(program: &Path, dir: Option<&Path>, env: Environment) -> Entrant {
        Entrant {
            name: "ann@v1".into(),
            program: Ok(BotSpec {
                program: program.as_os_str().to_owned(),
                args: vec![],
                dir: dir.map(Path::to_owned),
                hide: vec!["/stored".into()],
                env,
            }),
            options: serde_json::Value::Null,
            time_control: None,
        }
    }

    fn executable(path: &Path) {
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    const FILE: &str = "game = \"evensteven\"\nenv = { A = \"1\" }\n\
                        [[entrant]]\nglob = \"subs/*\"\nenv = { B = \"2\" }\n\
                        [[entrant]]\nname = \"engine\"\ncommand = [\"/opt/engine\", \"-q\"]\n";

    #[test]
    fn a_program_runs_from_its_copy_or_as_the_file_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("versions/ann-1");
        std::fs::create_dir_all(&copy).unwrap();
        executable(&copy.join("pc2"));
        let elsewhere = dir.path().join("evil.sh");
        executable(&elsewhere);
        std::os::unix::fs::symlink(&elsewhere, copy.join("link")).unwrap();
        let rules = Containment::new(&spec(FILE), dir.path(), vec![], vec![]);
        let clean = Environment::default();
        let ok = rules.apply(
            entrant(&copy.join("pc2"), Some(&copy), clean.clone()),
            Some(&copy),
        );
        assert!(ok.is_ok());
        let out = rules.apply(entrant(&elsewhere, None, clean.clone()), None);
        let why = out.err().unwrap();
        assert!(why.contains("names no such command"), "{why}");
        let linked = rules.apply(
            entrant(&copy.join("link"), Some(&copy), clean.clone()),
            Some(&copy),
        );
        let why = linked.err().unwrap();
        assert!(why.contains("outside its copy"), "{why}");
        let moved_out = rules.apply(
            entrant(&copy.join("pc2"), Some(dir.path()), clean),
            Some(&copy),
        );
        let why = moved_out.err().unwrap();
        assert!(why.contains("its folder"), "{why}");
    }

    #[test]
    fn only_what_the_file_sets_and_the_workers_own_env_reach_a_bot() {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("ann-1");
        std::fs::create_dir_all(&copy).unwrap();
        executable(&copy.join("pc2"));
        let own = vec![("JAVA_HOME".into(), "/here".into())];
        let rules = Containment::new(&spec(FILE), dir.path(), vec!["/mine".into()], own);
        let stored = Environment::Clean(vec![
            ("LD_PRELOAD".into(), "/x.so".into()),
            ("A".into(), "1".into()),
            ("B".into(), "changed".into()),
            ("B".into(), "2".into()),
            ("JAVA_HOME".into(), "/there".into()),
        ]);
        let contained = rules
            .apply(entrant(&copy.join("pc2"), Some(&copy), stored), Some(&copy))
            .unwrap();
        let spec = contained.entrant.program.unwrap();
        let expected: Vars = vec![
            ("A".into(), "1".into()),
            ("B".into(), "2".into()),
            ("JAVA_HOME".into(), "/here".into()),
        ];
        assert_eq!(spec.env, Environment::Clean(expected));
        assert_eq!(spec.hide, vec![PathBuf::from("/mine")]);
        assert_eq!(
            contained.left_out,
            vec![OsString::from("B"), "LD_PRELOAD".into()]
        );
        // The referee's own environment is never a bot's.
        let inherited = rules
            .apply(
                entrant(&copy.join("pc2"), Some(&copy), Environment::Inherited),
                Some(&copy),
            )
            .unwrap();
        let spec = inherited.entrant.program.unwrap();
        assert_eq!(
            spec.env,
            Environment::Clean(vec![("JAVA_HOME".into(), "/here".into())])
        );
    }
}
