//! A version's copy, as a worker on another machine finds it: the one
//! folder, under the league's versions' folder, that everything the
//! version runs of its own lies in (its sources and its program as
//! built), its digest taken when it entered, and the checks a worker
//! makes before its first game with it.
//!
//! Why a worker checks: it shares with its league only the versions'
//! folder (and the league's folder), and what it finds there may not be
//! what the league stored (a copy not yet seen through a network file
//! system's cache, pruned, changed since, or a path that leads out of the
//! folder). A version it cannot play as stored is its own failure, never
//! the version's: it declines the version's tables, and says which path
//! it was given and which it found.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use super::work::Player;
use crate::tournament::units::Entrant;

/// Folders left out of a copy's digest: what an interpreter writes beside
/// the sources it runs (CPython's byte code, when the copy is writable),
/// which would make every later worker refuse a copy that is as built.
const NOT_DIGESTED: [&str; 1] = ["__pycache__"];

/// The digest of the copy at `copy`: SHA-256 over each entry's relative
/// path, kind, executable bit and contents (a link: its target, never
/// followed), in the order of their paths. Nothing outside the folder
/// counts (an interpreter, a library of the system).
pub fn digest(copy: &Path) -> std::io::Result<String> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let mut hash = Sha256::new();
    let mut entries = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(copy.join(&at))? {
            let entry = entry?;
            let rel = at.join(entry.file_name());
            let kind = entry.file_type()?;
            if kind.is_dir() {
                if !NOT_DIGESTED.iter().any(|n| entry.file_name() == *n) {
                    todo.push(rel.clone());
                }
                entries.push((rel, 'd'));
            } else if kind.is_symlink() {
                entries.push((rel, 'l'));
            } else {
                entries.push((rel, 'f'));
            }
        }
    }
    entries.sort();
    for (rel, kind) in entries {
        hash.update(rel.as_os_str().as_bytes());
        hash.update([0, kind as u8]);
        let path = copy.join(&rel);
        match kind {
            'l' => hash.update(std::fs::read_link(&path)?.as_os_str().as_bytes()),
            'f' => {
                let meta = std::fs::symlink_metadata(&path)?;
                let exec = meta.permissions().mode() & 0o111 != 0;
                hash.update([u8::from(exec)]);
                hash.update(meta.len().to_le_bytes());
                if meta.is_file() {
                    hash_file(&path, &mut hash)?;
                }
            }
            _ => {}
        }
        hash.update([0]);
    }
    Ok(format!("sha256:{}", hex(&hash.finalize())))
}

fn hash_file(path: &Path, hash: &mut Sha256) -> std::io::Result<()> {
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0; 64 << 10];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        hash.update(&buf[..n]);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The name of the copy a version plays from, under the versions'
/// folder `root`, when its folder `dir` is one.
pub fn copy_name_of(dir: &Path, root: &Path) -> Option<String> {
    let rest = dir.strip_prefix(root).ok()?;
    match rest.components().collect::<Vec<_>>()[..] {
        [Component::Normal(name)] => name.to_str().map(str::to_owned),
        _ => None,
    }
}

/// Why a worker cannot play a version as stored.
pub type Unplayable = String;

/// The entrant of `player` on this worker, whose versions' folder is at
/// `to` (the league's at `from`), once its copy is found and is as it was
/// built; or why not, naming the stored path and the path it resolved.
pub fn check(player: &Player, from: &Path, to: &Path) -> Result<Entrant, Unplayable> {
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
    Ok(entrant)
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
    let single = matches!(
        Path::new(name).components().collect::<Vec<_>>()[..],
        [Component::Normal(_)]
    );
    if !single {
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
    let found =
        digest(copy).map_err(|e| format!("cannot read its copy at {}: {e}", copy.display()))?;
    if found != expected {
        return Err(format!(
            "its copy at {} is not as it was built (digest {found}, stored {expected}): \
             changed since it entered, or not yet all there",
            copy.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_sees_contents_names_modes_and_links_but_not_byte_code() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path();
        std::fs::write(copy.join("pc2"), "x").unwrap();
        std::fs::create_dir(copy.join("lib")).unwrap();
        std::fs::write(copy.join("lib/a"), "1").unwrap();
        let first = digest(copy).unwrap();
        assert!(first.starts_with("sha256:"), "{first}");
        assert_eq!(digest(copy).unwrap(), first);
        std::fs::create_dir(copy.join("__pycache__")).unwrap();
        std::fs::write(copy.join("__pycache__/a.pyc"), "b").unwrap();
        let with_cache = digest(copy).unwrap();
        std::fs::write(copy.join("__pycache__/a.pyc"), "bc").unwrap();
        assert_eq!(digest(copy).unwrap(), with_cache);
        std::fs::set_permissions(copy.join("pc2"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let exec = digest(copy).unwrap();
        assert_ne!(exec, with_cache);
        std::fs::write(copy.join("lib/a"), "2").unwrap();
        assert_ne!(digest(copy).unwrap(), exec);
        std::os::unix::fs::symlink("/etc", copy.join("l")).unwrap();
        let link = digest(copy).unwrap();
        std::fs::remove_file(copy.join("l")).unwrap();
        std::os::unix::fs::symlink("/usr", copy.join("l")).unwrap();
        assert_ne!(digest(copy).unwrap(), link);
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
