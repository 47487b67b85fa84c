//! A version's copy, as a worker on another machine finds it: the one
//! folder, under the league's versions' folder, that everything the
//! version runs of its own lies in (its sources and its program as
//! built), the manifest and digest it is sealed with when it enters,
//! and the checks a worker makes before its first game with it.
//!
//! Why a worker checks: it shares with its league only the versions'
//! folder (and the league's folder), and what it finds there may not be
//! what the league stored (a copy not yet seen through a network file
//! system's cache, pruned, changed since, or a path that leads out of the
//! folder). A version it cannot play as stored is its own failure, never
//! the version's: it declines the version's tables, and says which path
//! it was given and which it found.

use std::path::{Component, Path, PathBuf};

use super::work::Player;
use crate::manifest::{self, Listed, digest_of};
use crate::tournament::units::Entrant;

/// Folders left out of a copy's manifest: what an interpreter writes
/// beside the sources it runs (CPython's byte code, when the copy is
/// writable).
const NOT_LISTED: [&str; 1] = ["__pycache__"];

/// The file in a copy that lists what it held when it entered (see
/// [`seal`]).
pub const MANIFEST: &str = ".referee-manifest";

/// Seals the copy at `copy`: writes its manifest (each file, folder and
/// link: its kind, executable bit, size, and the SHA-256 of its contents
/// or its link's target, never followed; by path: [`crate::manifest`])
/// into it, and returns
/// its digest, the SHA-256 of the manifest, which the league stores.
/// `keep`: a manifest already there is kept (the same copy stored again
/// by a league started again), so that what a bot wrote since is not
/// taken for what it was built as.
///
/// Why a manifest and not one hash of the folder: a bot not sandboxed
/// writes in its folder, the copy (a log, a cache); files added since
/// are no change to what the version is, files changed or gone are.
pub fn seal(copy: &Path, keep: bool) -> std::io::Result<String> {
    let at = copy.join(MANIFEST);
    if keep && let Ok(manifest) = std::fs::read(&at) {
        return Ok(digest_of(&manifest));
    }
    let manifest = manifest_of(copy)?;
    std::fs::write(&at, &manifest)?;
    Ok(digest_of(&manifest))
}

/// `copy`'s manifest: every entry but the manifest itself and
/// [`NOT_LISTED`].
fn manifest_of(copy: &Path) -> std::io::Result<Vec<u8>> {
    manifest::of(copy, |rel| {
        rel == Path::new(MANIFEST)
            || rel
                .file_name()
                .is_some_and(|name| NOT_LISTED.iter().any(|n| name == *n))
    })
}

/// Whether the copy at `copy` holds what its manifest, whose digest the
/// league stored as `expected`, lists: every entry there and as it was.
fn verify(copy: &Path, expected: &str) -> Result<(), String> {
    let at = copy.join(MANIFEST);
    let manifest = std::fs::read(&at).map_err(|e| format!("cannot read {}: {e}", at.display()))?;
    let found = digest_of(&manifest);
    if found != expected {
        return Err(format!(
            "its manifest {} is not the one stored (digest {found}, stored {expected})",
            at.display()
        ));
    }
    let listed = manifest::parse(&manifest)
        .map_err(|n| format!("{} line {n}: not a manifest's line", at.display()))?;
    for (rel, listed) in listed {
        let path = copy.join(rel);
        match Listed::of(&path) {
            Ok(now) if now == listed => {}
            Ok(_) => return Err(format!("{} changed since it entered", path.display())),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    Ok(())
}

/// The name of the copy a version plays from, under the versions'
/// folder `root`, when its folder `dir` is one.
pub fn copy_name_of(dir: &Path, root: &Path) -> Option<String> {
    single_name(dir.strip_prefix(root).ok()?)?
        .to_str()
        .map(str::to_owned)
}

/// The one name `path` is, when it is a plain name (no `/`, `.`, `..`).
fn single_name(path: &Path) -> Option<&std::ffi::OsStr> {
    match path.components().collect::<Vec<_>>()[..] {
        [Component::Normal(name)] => Some(name),
        _ => None,
    }
}

/// Why a worker cannot play a version as stored.
pub type Unplayable = String;

/// The entrant of `player` on this worker, whose versions' folder is at
/// `to` (the league's at `from`), once its copy is found and is as it was
/// built, with where its copy is here (if it has one); or why not, naming
/// the stored path and the path it resolved.
pub fn check(
    player: &Player,
    from: &Path,
    to: &Path,
) -> Result<(Entrant, Option<PathBuf>), Unplayable> {
    let copy = match player.copy.clone().or_else(|| legacy_copy(player, from)) {
        Some(name) => Some(find_copy(&name, from, to)?),
        None => None,
    };
    let mut stored = player.clone();
    if let Some(copy) = &copy {
        stored.program = in_copy(&player.program, from, copy, true)?;
        if let Some(dir) = &player.dir {
            stored.dir = Some(in_copy(dir, from, copy, false)?);
        }
        if let Some(expected) = &player.digest {
            check_digest(copy, expected)?;
        }
    }
    let entrant = stored.entrant(from, to);
    if let Ok(spec) = &entrant.program {
        spec.locate().map_err(|e| {
            format!(
                "cannot start {} here (stored as {}): {e}",
                Path::new(&spec.program).display(),
                player.program
            )
        })?;
    }
    Ok((entrant, copy))
}

/// The copy of a version stored before copies were named (schema 2): the
/// folder its `dir` is, under the league's versions' folder.
fn legacy_copy(player: &Player, from: &Path) -> Option<String> {
    copy_name_of(Path::new(player.dir.as_deref()?), from)
}

/// The copy named `name` under this worker's versions' folder `to`: one
/// folder right in it, never a path that leads out of it (`..`, a link).
fn find_copy(name: &str, from: &Path, to: &Path) -> Result<PathBuf, Unplayable> {
    let stored = from.join(name);
    if single_name(Path::new(name)).is_none() {
        return Err(format!(
            "its copy is stored as {name:?}, which is not a folder of the versions' folder"
        ));
    }
    let here = to.join(name);
    let missing = |e: std::io::Error| {
        format!(
            "its copy (stored at {}) is not at {} on this machine: {e}",
            stored.display(),
            here.display()
        )
    };
    let real = std::fs::canonicalize(&here).map_err(missing)?;
    let root = std::fs::canonicalize(to).map_err(missing)?;
    if real.parent() != Some(root.as_path()) || !real.is_dir() {
        return Err(format!(
            "its copy at {} resolves to {}, outside the versions' folder {}",
            here.display(),
            real.display(),
            root.display()
        ));
    }
    Ok(here)
}

/// `stored` (a path of the league's machine) in `copy` on this one: a
/// path under the league's copy of the same name, with no `..`, that
/// resolves inside the copy. A program outside the versions' folder is a
/// program of the machine (an interpreter, a named engine) and is left
/// as it is; one in a run's temporary copies (a league before issue 48)
/// is the copy's own `pc2`.
fn in_copy(stored: &str, from: &Path, copy: &Path, program: bool) -> Result<String, Unplayable> {
    let path = Path::new(stored);
    let league_copy = from.join(copy.file_name().unwrap_or_default());
    let rest = match path.strip_prefix(&league_copy) {
        Ok(rest) => rest.to_owned(),
        Err(_) if program && is_run_copy(path) => PathBuf::from(crate::bot::build::PROGRAM),
        Err(_) if program && !path.starts_with(from) => return Ok(stored.to_owned()),
        Err(_) => {
            return Err(format!(
                "{stored} is not in its copy {}",
                league_copy.display()
            ));
        }
    };
    if rest
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(format!("{stored} leads out of its copy"));
    }
    let here = copy.join(&rest);
    if let (Ok(real), Ok(root)) = (std::fs::canonicalize(&here), std::fs::canonicalize(copy))
        && !real.starts_with(&root)
    {
        return Err(format!(
            "{stored} is {} here, which resolves to {}, outside its copy",
            here.display(),
            real.display()
        ));
    }
    Ok(league_copy.join(&rest).to_string_lossy().into_owned())
}

/// Whether `path` is in a run's temporary copies of the programs it built
/// (`/tmp/referee-snapshot-PID-N/K/pc2`): what a league stored for a
/// compiled entrant before its program went into the version's copy.
fn is_run_copy(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n == crate::bot::build::PROGRAM)
        && path.ancestors().any(|a| {
            a.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(crate::bot::build::SNAPSHOTS_PREFIX))
        })
}

fn check_digest(copy: &Path, expected: &str) -> Result<(), Unplayable> {
    verify(copy, expected).map_err(|why| {
        format!(
            "its copy at {} is not as it was built ({why}): changed since it entered, or not \
             yet all there",
            copy.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_copy_is_verified_and_sees_changes_but_not_additions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path();
        std::fs::write(copy.join("pc2"), "x").unwrap();
        std::fs::create_dir(copy.join("lib")).unwrap();
        std::fs::write(copy.join("lib/a"), "1").unwrap();
        std::os::unix::fs::symlink("/etc", copy.join("l")).unwrap();
        let digest = seal(copy, false).unwrap();
        assert!(digest.starts_with("sha256:"), "{digest}");
        assert_eq!(seal(copy, true).unwrap(), digest, "kept");
        verify(copy, &digest).unwrap();
        // What a bot adds (a log, byte code) is no change.
        std::fs::write(copy.join("log.txt"), "moves").unwrap();
        std::fs::create_dir(copy.join("__pycache__")).unwrap();
        verify(copy, &digest).unwrap();
        // What it changes is.
        std::fs::set_permissions(copy.join("pc2"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(verify(copy, &digest).unwrap_err().contains("pc2 changed"));
        std::fs::set_permissions(copy.join("pc2"), std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(copy.join("lib/a"), "2").unwrap();
        assert!(verify(copy, &digest).unwrap_err().contains("lib/a changed"));
        std::fs::write(copy.join("lib/a"), "1").unwrap();
        std::fs::remove_file(copy.join("l")).unwrap();
        std::os::unix::fs::symlink("/usr", copy.join("l")).unwrap();
        assert!(verify(copy, &digest).unwrap_err().contains("changed"));
        std::fs::remove_file(copy.join("l")).unwrap();
        assert!(verify(copy, &digest).is_err(), "gone");
        let wrong = verify(copy, "sha256:00").unwrap_err();
        assert!(wrong.contains("not the one stored"), "{wrong}");
    }

    #[test]
    fn a_run_copy_is_recognised_by_its_folder() {
        assert!(is_run_copy(Path::new(
            "/tmp/referee-snapshot-30583-17/0/pc2"
        )));
        assert!(!is_run_copy(Path::new("/tmp/other/0/pc2")));
        assert!(!is_run_copy(Path::new("/tmp/referee-snapshot-1/0/bot")));
    }
}
