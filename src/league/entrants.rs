//! A league's entrants as their folders are now: each one's sources
//! fingerprinted apart from what its own build writes (so that a build
//! never calls for the next), and a new version built when they change.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::bot::build::{self, BuildOptions};
use crate::bot::{BotSpec, Environment};
use crate::outcome::Disqualified;
use crate::tournament::spec::EntrantSpec;
use crate::tournament::units::{entrant_program, located, under};

/// Files larger than this are fingerprinted by their size and time only.
const MOST_HASHED: u64 = 16 << 20;

/// The most of a build's log a version keeps (its end, where make stops).
const MOST_LOG: usize = 64 << 10;

/// What identifies an entrant's submission: its command, options and
/// environment, and the contents of its folder's files but `products`
/// (relative paths its last build wrote); for an entrant with only a
/// command, the program's file when it is one.
///
/// A folder none of whose files changed size or time since it was hashed,
/// and whose files were all older than [`SETTLED`] then, keeps the
/// fingerprint it had without being read again: a league scans every few
/// seconds, and reading a class's every file each time was the scan's
/// whole cost. (As `make` does, a change that keeps a file's size and
/// time is not seen; git's rule for "racily clean" files keeps one made
/// in the same tick as the hashing from being missed.)
pub fn fingerprint(e: &EntrantSpec, base: &Path, products: &[String]) -> String {
    let header = format!("{:?} {:?} {:?}", e.command, e.options, e.env.vars());
    let mut hash = Fnv::default();
    hash.text(&header);
    match &e.dir {
        Some(dir) => {
            let root = under(base, dir);
            let found = files(&root);
            let key = format!("{header}\0{}\0{products:?}", root.display());
            if let Some(known) = Hashed::known(&key, &found) {
                return known;
            }
            let hashed_at = SystemTime::now();
            for path in found.keys() {
                let rel = path
                    .strip_prefix(&root)
                    .unwrap_or(path)
                    .to_string_lossy()
                    .into_owned();
                if products.contains(&rel) {
                    continue;
                }
                hash.text(&rel);
                hash.file(path);
            }
            let fingerprint = hash.hex();
            Hashed::keep(key, found, hashed_at, &fingerprint);
            return fingerprint;
        }
        None => {
            if let Some(program) = e.command.as_ref().and_then(|c| c.first()) {
                let path = under(base, Path::new(program));
                if path.is_file() {
                    hash.file(&path);
                }
            }
        }
    }
    hash.hex()
}

/// How long before its hashing a file must have last changed for its size
/// and time to vouch for its contents afterwards: longer than any file
/// system's timestamp tick (FAT's is two seconds).
const SETTLED: std::time::Duration = std::time::Duration::from_secs(3);

/// The size and time of each file of a folder.
type Stamps = BTreeMap<PathBuf, (u64, Option<SystemTime>)>;

/// A folder's fingerprint as it was made, with what its files were then.
struct Hashed {
    stamps: Stamps,
    hashed_at: SystemTime,
    fingerprint: String,
}

impl Hashed {
    fn cache() -> std::sync::MutexGuard<'static, BTreeMap<String, Hashed>> {
        static CACHE: std::sync::Mutex<BTreeMap<String, Hashed>> =
            std::sync::Mutex::new(BTreeMap::new());
        CACHE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The fingerprint made for `key` when its files were as `found` says
    /// and had all settled.
    fn known(key: &str, found: &Stamps) -> Option<String> {
        let cache = Hashed::cache();
        let hashed = cache.get(key)?;
        let settled = |stamp: &(u64, Option<SystemTime>)| {
            stamp
                .1
                .and_then(|time| time.checked_add(SETTLED))
                .is_some_and(|time| time <= hashed.hashed_at)
        };
        (hashed.stamps == *found && found.values().all(settled)).then(|| hashed.fingerprint.clone())
    }

    fn keep(key: String, stamps: Stamps, hashed_at: SystemTime, fingerprint: &str) {
        Hashed::cache().insert(
            key,
            Hashed {
                stamps,
                hashed_at,
                fingerprint: fingerprint.to_owned(),
            },
        );
    }
}

/// An entrant's program once built: ready, or why it cannot play; the
/// files its build wrote; and what to show of the build: why it failed,
/// then its output.
pub struct Built {
    pub program: Result<BotSpec, Disqualified>,
    pub products: Vec<String>,
    pub log: Option<String>,
}

/// Builds `e` (`make` in its folder, when it has one) as a tournament
/// builds its entrants, noting the files the build wrote.
pub async fn build(
    e: &EntrantSpec,
    base: &Path,
    options: &BuildOptions,
    env: &Environment,
) -> Built {
    let dir = e.dir.as_ref().map(|d| under(base, d));
    let before = dir.as_deref().map(files).unwrap_or_default();
    // The build's output, kept for the entrant's page.
    let logs = tempfile::tempdir().ok();
    let options = BuildOptions {
        logs: logs.as_ref().map(|d| d.path().to_owned()),
        ..options.clone()
    };
    let built = match &dir {
        Some(dir) => Some(
            build::build_dirs(std::slice::from_ref(dir), &options)
                .await
                .into_iter()
                .next()
                .unwrap_or_else(|| Err("not built".into())),
        ),
        None => None,
    };
    let products = match &dir {
        Some(dir) => files(dir)
            .into_iter()
            .filter(|(path, stamp)| before.get(path) != Some(stamp))
            .filter_map(|(path, _)| {
                Some(path.strip_prefix(dir).ok()?.to_string_lossy().into_owned())
            })
            .collect(),
        None => Vec::new(),
    };
    let output = logs.as_ref().and_then(|d| log_in(d.path()));
    let log = match (&built, output) {
        (Some(Err(why)), Some(output)) => Some(format!("{why}\n\n{output}")),
        (Some(Err(why)), None) => Some(why.clone()),
        (_, output) => output,
    };
    let program = entrant_program(built, e.command.as_deref(), base, env.with(&e.env.vars()))
        .and_then(located);
    Built {
        program,
        products,
        log,
    }
}

/// Where a version built from `dir` plays from: a copy of the folder made
/// when it entered, under `root`, named by its entrant and fingerprint
/// (the same sources, the same copy, a league started again included).
///
/// Why: a league builds in the submission's own folder, which its author
/// keeps changing. Played from there, a game started between a change and
/// the scan that notices it would run the new program under the old
/// version's name, and a build of the next version would overwrite the
/// program a game is running. A copy is what CodinGame and psyleague keep
/// of a submission too.
pub fn snapshot(
    program: BotSpec,
    dir: &Path,
    root: &Path,
    name: &str,
    fingerprint: &str,
) -> Result<BotSpec, String> {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let to = root.join(format!("{safe}-{fingerprint}"));
    if !to.is_dir() {
        let partial = root.join(format!(".{safe}-{fingerprint}.partial"));
        let _ = std::fs::remove_dir_all(&partial);
        copy_tree(dir, &partial)
            .and_then(|()| std::fs::rename(&partial, &to))
            .map_err(|e| format!("cannot copy {} to {}: {e}", dir.display(), to.display()))?;
    }
    Ok(moved(program, dir, &to))
}

/// `program` with every path under `from` (its folder, its program, its
/// arguments) under `to` instead.
fn moved(program: BotSpec, from: &Path, to: &Path) -> BotSpec {
    let under_to = |p: &OsStr| -> OsString {
        match Path::new(p).strip_prefix(from) {
            Ok(rest) => to.join(rest).into_os_string(),
            Err(_) => p.to_owned(),
        }
    };
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

/// Copies the tree at `from` to `to` (made): files with their permissions,
/// symbolic links as links, never followed.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source)?, &target)?;
        } else if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
}

/// The build log in `dir` (the one file a build of one folder writes),
/// its end when it is long.
fn log_in(dir: &Path) -> Option<String> {
    let entry = std::fs::read_dir(dir).ok()?.flatten().next()?;
    let text = std::fs::read_to_string(entry.path()).ok()?;
    let start = text.len().saturating_sub(MOST_LOG);
    let start = (start..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    Some(text[start..].to_owned())
}

/// Every file under `dir` (symbolic links not followed), with its size and
/// time: what a build changes.
fn files(dir: &Path) -> Stamps {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(at) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                todo.push(entry.path());
            } else {
                out.insert(entry.path(), (meta.len(), meta.modified().ok()));
            }
        }
    }
    out
}

/// FNV-1a, 64 bits (the `fnv` crate's): a fingerprint, not a defence
/// against collisions made on purpose.
#[derive(Default)]
struct Fnv(fnv::FnvHasher);

impl Fnv {
    fn bytes(&mut self, bytes: &[u8]) {
        std::hash::Hasher::write(&mut self.0, bytes);
    }

    fn text(&mut self, text: &str) {
        self.bytes(text.as_bytes());
        self.bytes(b"\0");
    }

    fn file(&mut self, path: &Path) {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.len() > MOST_HASHED => {
                self.text(&format!("{} {:?}", meta.len(), meta.modified().ok()));
            }
            Ok(meta) if meta.file_type().is_symlink() => {
                self.text(&format!("-> {:?}", std::fs::read_link(path).ok()));
            }
            _ => match std::fs::read(path) {
                Ok(bytes) => self.bytes(&bytes),
                Err(e) => self.text(&e.to_string()),
            },
        }
        self.bytes(b"\0");
    }

    fn hex(&self) -> String {
        format!("{:016x}", std::hash::Hasher::finish(&self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entrant(dir: &Path) -> EntrantSpec {
        toml::from_str(&format!("name = \"a\"\ndir = \"{}\"\n", dir.display())).unwrap()
    }

    #[test]
    fn a_snapshot_copies_the_folder_links_as_links_and_moves_the_program() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (folder, root) = (dir.path().join("ann"), dir.path().join("db.versions"));
        std::fs::create_dir_all(folder.join("data")).unwrap();
        std::fs::write(folder.join("pc2"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(folder.join("pc2"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::write(folder.join("data/w.txt"), "1").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", folder.join("link")).unwrap();
        let program = BotSpec {
            program: folder.join("pc2").into_os_string(),
            args: vec![
                "--weights".into(),
                folder.join("data/w.txt").into_os_string(),
            ],
            dir: Some(folder.clone()),
            hide: vec![],
            env: Environment::clean(&[]),
        };
        let kept = snapshot(program, &folder, &root, "ann/x", "f00d").unwrap();
        let copy = root.join("ann_x-f00d");
        assert_eq!(kept.program, copy.join("pc2"));
        assert_eq!(kept.args[1], copy.join("data/w.txt"));
        assert_eq!(kept.dir.as_deref(), Some(copy.as_path()));
        let mode = std::fs::metadata(copy.join("pc2"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111);
        assert_eq!(
            std::fs::read_to_string(copy.join("data/w.txt")).unwrap(),
            "1"
        );
        assert!(
            copy.join("link")
                .symlink_metadata()
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // The same sources again: the same copy, not made twice.
        std::fs::write(copy.join("data/w.txt"), "kept").unwrap();
        let again = BotSpec {
            dir: Some(folder.clone()),
            ..kept.clone()
        };
        snapshot(again, &folder, &root, "ann/x", "f00d").unwrap();
        assert_eq!(
            std::fs::read_to_string(copy.join("data/w.txt")).unwrap(),
            "kept"
        );
    }

    #[test]
    fn the_hash_is_fnv_1a_64_as_databases_recorded_it() {
        let mut hash = Fnv::default();
        hash.bytes(b"a");
        assert_eq!(hash.hex(), "af63dc4c8601ec8c");
    }

    /// Writes `text` to `path` and gives it the time `at`.
    fn write_at(path: &Path, text: &str, at: SystemTime) {
        std::fs::write(path, text).unwrap();
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(at)
            .unwrap();
    }

    #[test]
    fn settled_files_are_not_read_again_and_fresh_ones_are() {
        let dir = tempfile::tempdir().unwrap();
        let e = entrant(dir.path());
        let bot = dir.path().join("bot.c");
        let old = SystemTime::now() - std::time::Duration::from_secs(3600);
        write_at(&bot, "int a;", old);
        let first = fingerprint(&e, dir.path(), &[]);
        // The same size and time: the kept fingerprint stands, unread (the
        // limit `make` has too).
        write_at(&bot, "int b;", old);
        assert_eq!(fingerprint(&e, dir.path(), &[]), first);
        // Any change of time is seen.
        write_at(&bot, "int b;", old + std::time::Duration::from_secs(1));
        let second = fingerprint(&e, dir.path(), &[]);
        assert_ne!(second, first);
        // A file changed just before its hashing is read again, even when
        // a second change keeps its size and time.
        let now = SystemTime::now();
        write_at(&bot, "int c;", now);
        let third = fingerprint(&e, dir.path(), &[]);
        write_at(&bot, "int d;", now);
        assert_ne!(fingerprint(&e, dir.path(), &[]), third);
    }

    #[test]
    fn a_source_changes_the_fingerprint_and_a_product_does_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bot.c"), "int main() {}").unwrap();
        let e = entrant(dir.path());
        let first = fingerprint(&e, dir.path(), &[]);
        std::fs::write(dir.path().join("pc2"), "built").unwrap();
        let products = vec!["pc2".to_owned()];
        let without = fingerprint(&e, dir.path(), &products);
        assert_eq!(first, without);
        std::fs::write(dir.path().join("pc2"), "built again").unwrap();
        assert_eq!(fingerprint(&e, dir.path(), &products), first);
        std::fs::write(dir.path().join("bot.c"), "int main() { return 1; }").unwrap();
        assert_ne!(fingerprint(&e, dir.path(), &products), first);
    }
}
