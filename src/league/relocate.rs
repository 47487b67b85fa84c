//! A program's paths moved from one folder to another: a version's
//! program as built in its entrant's folder, played from its copy; and a
//! stored player, as a worker on another machine sees the versions'
//! folder. Below both the copies ([`super::entrants`]) and the workers
//! ([`super::work`]), which know nothing of each other.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::bot::BotSpec;

/// `program` with every path under `from` (its folder, its program, its
/// arguments) under `to` instead.
pub(super) fn moved(program: BotSpec, from: &Path, to: &Path) -> BotSpec {
    let under_to = |p: &OsStr| moved_path(p, from, to);
    BotSpec {
        program: under_to(&program.program),
        args: program.args.iter().map(|a| under_to(a)).collect(),
        dir: program
            .dir
            .as_deref()
            .map(|d| PathBuf::from(under_to(d.as_os_str()))),
        ..program
    }
}

/// `path` under `to` instead of `from`, if it is under `from`.
pub(super) fn moved_path(path: &OsStr, from: &Path, to: &Path) -> OsString {
    match Path::new(path).strip_prefix(from) {
        Ok(rest) => to.join(rest).into_os_string(),
        Err(_) => path.to_owned(),
    }
}
