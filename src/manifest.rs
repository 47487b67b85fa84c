//! A folder's manifest: one line per file, folder and link under it, in
//! the order of their paths, `KIND EXEC SIZE HASH PATH` (`f`, `d` or `l`;
//! the executable bit; a file's size; the SHA-256 of a file's bytes or of
//! a link's target, never followed; the path in hex, so that any bytes,
//! newlines too, stay on one line).
//!
//! What uses one: a league's copy of a version, sealed when it enters and
//! checked by a worker before its first game (`league::copies`), and a
//! shipped game's Python environment, listed when it is made and checked
//! before each run (`games::shipped`). Why a list and not one hash of the
//! folder: a check can then say which path changed, came or went.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// An entry of a folder as its manifest lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct Listed {
    pub kind: char,
    pub exec: bool,
    pub size: u64,
    pub hash: String,
}

impl Listed {
    /// `path` as it is now, not following a link.
    pub fn of(path: &Path) -> std::io::Result<Listed> {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::symlink_metadata(path)?;
        let kind = meta.file_type();
        let (kind, hash) = if kind.is_dir() {
            ('d', "-".to_owned())
        } else if kind.is_symlink() {
            ('l', hex(std::fs::read_link(path)?.as_os_str().as_bytes()))
        } else {
            ('f', hash_file(path)?)
        };
        Ok(Listed {
            kind,
            exec: kind == 'f' && meta.permissions().mode() & 0o111 != 0,
            size: if kind == 'f' { meta.len() } else { 0 },
            hash,
        })
    }
}

/// What a [`walk`] does after an entry.
pub enum Step {
    /// Goes on, into the entry when it is a folder.
    On,
    /// Goes on past it: a folder is not entered.
    Past,
    /// Ends the walk.
    Stop,
}

/// Walks the folder `dir`, links not followed: `visit` is given each
/// entry, with its path under `dir`, and says what the walk does next.
/// A folder's entries come together, in the order the system lists them.
pub fn walk(
    dir: &Path,
    mut visit: impl FnMut(&Path, &std::fs::DirEntry) -> std::io::Result<Step>,
) -> std::io::Result<()> {
    let mut todo = vec![PathBuf::new()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(dir.join(&at))? {
            let entry = entry?;
            let rel = at.join(entry.file_name());
            match visit(&rel, &entry)? {
                Step::On if entry.file_type()?.is_dir() => todo.push(rel),
                Step::On | Step::Past => {}
                Step::Stop => return Ok(()),
            }
        }
    }
    Ok(())
}

/// The manifest of `dir`: every entry under it but those `skip` says of
/// (given the path under `dir`; a folder skipped is not entered).
pub fn of(dir: &Path, skip: impl Fn(&Path) -> bool) -> std::io::Result<Vec<u8>> {
    let mut entries = Vec::new();
    walk(dir, |rel, _| {
        if skip(rel) {
            return Ok(Step::Past);
        }
        entries.push(rel.to_owned());
        Ok(Step::On)
    })?;
    entries.sort();
    let mut manifest = Vec::new();
    for rel in entries {
        let line = Listed::of(&dir.join(&rel))?;
        let path = hex(rel.as_os_str().as_bytes());
        let (kind, exec, size, hash) = (line.kind, u8::from(line.exec), line.size, line.hash);
        manifest.extend_from_slice(format!("{kind} {exec} {size} {hash} {path}\n").as_bytes());
    }
    Ok(manifest)
}

/// The entries a manifest lists, by path; or the number (from 1) of its
/// first line that is not a manifest's.
pub fn parse(manifest: &[u8]) -> Result<BTreeMap<PathBuf, Listed>, usize> {
    let text = String::from_utf8_lossy(manifest);
    let mut entries = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [kind, exec, size, hash, path] = fields[..] else {
            return Err(n + 1);
        };
        let rel = unhex(path).ok_or(n + 1)?;
        let listed = Listed {
            kind: kind.chars().next().ok_or(n + 1)?,
            exec: exec == "1",
            size: size.parse().map_err(|_| n + 1)?,
            hash: hash.to_owned(),
        };
        entries.insert(PathBuf::from(std::ffi::OsStr::from_bytes(&rel)), listed);
    }
    Ok(entries)
}

/// How an entry differs between two manifests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    Changed,
    Added,
    Gone,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Changed => "changed",
            Change::Added => "added",
            Change::Gone => "gone",
        }
    }
}

/// The paths that differ from `was` to `now`, in the order of their paths.
pub fn changes(
    was: &BTreeMap<PathBuf, Listed>,
    now: &BTreeMap<PathBuf, Listed>,
) -> Vec<(PathBuf, Change)> {
    let mut found: Vec<(PathBuf, Change)> = was
        .iter()
        .filter_map(|(path, listed)| match now.get(path) {
            None => Some((path.clone(), Change::Gone)),
            Some(here) if here != listed => Some((path.clone(), Change::Changed)),
            Some(_) => None,
        })
        .chain(
            now.keys()
                .filter(|path| !was.contains_key(*path))
                .map(|path| (path.clone(), Change::Added)),
        )
        .collect();
    found.sort();
    found
}

/// The SHA-256 of `bytes`, as `sha256:HEX`.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

fn hash_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hash = Sha256::new();
    let mut buf = vec![0; 64 << 10];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(hex(&hash.finalize()));
        }
        hash.update(&buf[..n]);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_name_what_changed_came_and_went() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path();
        std::fs::write(at.join("a"), "1").unwrap();
        std::fs::create_dir(at.join("d")).unwrap();
        std::fs::write(at.join("d/b\nc"), "2").unwrap();
        std::fs::write(at.join("skip"), "").unwrap();
        let skip = |p: &Path| p == Path::new("skip");
        let was = parse(&of(at, skip).unwrap()).unwrap();
        assert_eq!(was.len(), 3, "{was:?}");
        std::fs::write(at.join("a"), "2").unwrap();
        std::fs::remove_file(at.join("d/b\nc")).unwrap();
        std::fs::write(at.join("d/new.pth"), "").unwrap();
        let now = parse(&of(at, skip).unwrap()).unwrap();
        assert_eq!(
            changes(&was, &now),
            [
                (PathBuf::from("a"), Change::Changed),
                (PathBuf::from("d/b\nc"), Change::Gone),
                (PathBuf::from("d/new.pth"), Change::Added),
            ]
        );
        assert_eq!(parse(b"f 0 1 ab 61\nnonsense\n"), Err(2));
    }
}
