//! Users of their own: under `--sandbox` run by root (and with
//! `--unprivileged` without it), each bot and each build runs as an
//! unprivileged uid and gid taken from a range (`--bot-uids`, 60000-60999
//! by default, as isolate's boxes), one per process tree at a time.
//!
//! Why a real host uid, and not a user namespace: a namespace whose root
//! is mapped to the host's root is root on every file it can reach, so the
//! bot would still read `/etc/shadow`, signal the referee, read its
//! `/proc/PID/environ`. The launcher becomes the uid itself (setgroups,
//! setgid, setuid) as its last step before the program: under bubblewrap,
//! after bubblewrap (as root) has made the mounts; without it, after the
//! cgroup and the limits.
//!
//! A uid is checked to be unused before its first bot: no user or group
//! has it (the system's user database), no process runs as it, and no
//! other referee on the machine holds it (a lock in `/run/referee/uids`,
//! held for as long as this referee lives). It then serves one bot or build
//! at a time, in turn, for this run.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use nix::fcntl::{Flock, FlockArg};

/// A range of uids (and gids: the same numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UidRange {
    pub first: u32,
    pub last: u32,
}

/// isolate's first box uid; a thousand boxes.
pub const DEFAULT_UIDS: UidRange = UidRange {
    first: 60000,
    last: 60999,
};

impl std::fmt::Display for UidRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.first, self.last)
    }
}

impl std::str::FromStr for UidRange {
    type Err = String;

    fn from_str(s: &str) -> Result<UidRange, String> {
        let (first, last) = s
            .split_once('-')
            .ok_or_else(|| format!("{s:?}: expected FIRST-LAST, e.g. 60000-60999"))?;
        let number = |n: &str| {
            n.trim()
                .parse::<u32>()
                .map_err(|e| format!("{s:?}: {n:?} is not a uid: {e}"))
        };
        let range = UidRange {
            first: number(first)?,
            last: number(last)?,
        };
        if range.first == 0 || range.first > range.last {
            return Err(format!(
                "{s:?}: the first uid must be above 0 and at most the last"
            ));
        }
        // 65534 is `nobody`, and uids past 2^31 upset many programs.
        if range.last >= 65534 && range.first < 65535 || range.last > i32::MAX as u32 {
            return Err(format!(
                "{s:?}: must leave out 65534 (nobody) and stay below 2^31"
            ));
        }
        Ok(range)
    }
}

/// How this process runs bots: set once, from the command line.
#[derive(Clone, Debug)]
pub struct Settings {
    pub uids: UidRange,
    /// Bots and builds as uids of their own without `--sandbox` too.
    pub unprivileged: bool,
    /// What the organiser shows a sandboxed bot beyond the rules
    /// (`--sandbox-show`), read-only.
    pub show: Vec<PathBuf>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            uids: DEFAULT_UIDS,
            unprivileged: false,
            show: Vec::new(),
        }
    }
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Sets how bots run, once, before any starts; refuses what this machine
/// cannot do.
pub fn configure(settings: Settings) -> Result<(), String> {
    if settings.unprivileged && !is_root() {
        return Err(
            "--unprivileged runs bots as other users, which only root can: run the referee \
             as root, or without --unprivileged (a bot then runs as you)"
                .into(),
        );
    }
    for path in &settings.show {
        if !path.is_absolute() {
            return Err(format!(
                "--sandbox-show {}: not an absolute path",
                path.display()
            ));
        }
        std::fs::metadata(path).map_err(|e| format!("--sandbox-show {}: {e}", path.display()))?;
    }
    if is_root() {
        check_mapped(settings.uids)?;
    }
    let _ = SETTINGS.set(settings);
    Ok(())
}

/// The settings of this run (the defaults until [`configure`]).
pub fn settings() -> &'static Settings {
    SETTINGS.get_or_init(Settings::default)
}

/// Whether the referee runs as root (and so must not run bots as itself).
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Whether a bot (sandboxed or not) runs as a uid of its own.
pub fn wanted(sandboxed: bool) -> bool {
    // Inside the sandbox only the launcher can become the uid: without one
    // (the library's unit tests) a sandboxed bot stays as it is.
    let can = !sandboxed || super::program::launcher().is_some();
    is_root() && (sandboxed || settings().unprivileged) && can
}

/// Root in a user namespace (a container) can become only the uids mapped
/// into it: the range must be.
fn check_mapped(range: UidRange) -> Result<(), String> {
    let Ok(map) = std::fs::read_to_string("/proc/self/uid_map") else {
        return Ok(());
    };
    let covered = map.lines().any(|line| {
        let fields: Vec<u64> = line
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        matches!(fields[..], [inside, _, count]
            if inside <= u64::from(range.first) && u64::from(range.last) < inside + count)
    });
    match covered {
        true => Ok(()),
        false => Err(format!(
            "bots run as uids {range} (--bot-uids), which this user namespace does not map \
             (/proc/self/uid_map): give a range it maps, or run the referee as a real root"
        )),
    }
}

/// A uid (and the gid of the same number) lent to one bot or build, given
/// back when dropped (once its processes are gone).
#[derive(Debug)]
pub struct BoxUser {
    uid: u32,
}

impl BoxUser {
    pub fn uid(&self) -> u32 {
        self.uid
    }
}

impl Drop for BoxUser {
    fn drop(&mut self) {
        pool().free.push(self.uid);
    }
}

/// This run's uids: those free now, and the locks it holds on all it took.
struct Pool {
    free: Vec<u32>,
    next: u64,
    held: Vec<Flock<File>>,
    /// Uids passed over, and why: said once, and in the error when none
    /// is left.
    passed: Vec<String>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    free: Vec::new(),
    next: 0,
    held: Vec::new(),
    passed: Vec::new(),
});

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where referees on this machine lock the uids they use.
const LOCKS: &str = "/run/referee/uids";

/// A uid for a bot or build, when it runs as one of its own (see
/// [`wanted`]); `None` when it runs as the referee's user.
pub fn take(sandboxed: bool) -> Result<Option<BoxUser>, String> {
    if !wanted(sandboxed) {
        return Ok(None);
    }
    let range = settings().uids;
    let mut pool = pool();
    if let Some(uid) = pool.free.pop() {
        return Ok(Some(BoxUser { uid }));
    }
    while pool.next <= u64::from(range.last - range.first) {
        let uid = range.first + pool.next as u32;
        pool.next += 1;
        match claim(uid) {
            Ok(lock) => {
                pool.held.push(lock);
                return Ok(Some(BoxUser { uid }));
            }
            Err(why) => {
                if pool.passed.len() < 3 {
                    tracing::warn!("uid {uid} passed over for bots: {why}");
                }
                pool.passed.push(format!("{uid}: {why}"));
            }
        }
    }
    let held = pool.held.len();
    Err(format!(
        "no uid left for another bot in {range} (--bot-uids): this run holds {held}, \
         and {} are in use elsewhere{}; give a larger range",
        pool.passed.len(),
        pool.passed
            .first()
            .map(|p| format!(" (first: {p})"))
            .unwrap_or_default()
    ))
}

/// Locks `uid` for this referee, once it is checked to be unused.
fn claim(uid: u32) -> Result<Flock<File>, String> {
    let dir = Path::new(LOCKS);
    std::fs::create_dir_all(dir).map_err(|e| format!("{LOCKS}: {e}"))?;
    let path = dir.join(uid.to_string());
    let file = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let lock = Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map_err(|_| "another referee on this machine runs bots as it".to_owned())?;
    check_unused(uid)?;
    Ok(lock)
}

/// Why `uid` belongs to someone: a user, a group, a running process.
fn check_unused(uid: u32) -> Result<(), String> {
    if let Ok(Some(user)) = nix::unistd::User::from_uid(uid.into()) {
        return Err(format!("it is user {:?}'s", user.name));
    }
    if let Ok(Some(group)) = nix::unistd::Group::from_gid(uid.into()) {
        return Err(format!("it is group {:?}'s gid", group.name));
    }
    if let Some(pid) = process_of(uid) {
        return Err(format!("process {pid} runs as it"));
    }
    Ok(())
}

/// A process running as `uid` (a `/proc/PID` folder belongs to its
/// process's effective uid).
fn process_of(uid: u32) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            (entry.metadata().ok()?.uid() == uid).then_some(pid)
        })
}

/// The `/etc/passwd` a sandboxed bot running as `uid` sees: root, itself
/// (with `home`), and nobody.
pub fn passwd(uid: u32, home: &Path) -> String {
    format!(
        "root:x:0:0:root:/root:/usr/sbin/nologin\n\
         bot:x:{uid}:{uid}:referee bot:{}:/bin/sh\n\
         nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        home.display()
    )
}

/// The `/etc/group` it sees.
pub fn group(uid: u32) -> String {
    format!("root:x:0:\nbot:x:{uid}:\nnogroup:x:65534:\n")
}

/// Why `uid` cannot reach `path` (every folder from `from` down searchable,
/// `path` itself readable, and executable when `execute`): the first
/// folder or file it is stopped at, with its mode and owner.
pub fn unreachable(path: &Path, from: &Path, uid: u32, execute: bool) -> Option<String> {
    let mut at = PathBuf::new();
    for part in path.components() {
        at.push(part);
        if !at.starts_with(from) || at == path {
            continue;
        }
        if let Some(why) = denied(&at, uid, 0o1) {
            return Some(why);
        }
    }
    let wanted = if execute { 0o5 } else { 0o4 };
    denied(path, uid, wanted)
}

/// Why `uid` lacks `bits` (of r=4, w=2, x=1) on `path`.
fn denied(path: &Path, uid: u32, bits: u32) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let mode = meta.mode();
    let granted = if meta.uid() == uid {
        mode >> 6
    } else if meta.gid() == uid {
        mode >> 3
    } else {
        mode
    } & 0o7;
    (granted & bits != bits).then(|| {
        format!(
            "{} (mode {:o}, owner uid {})",
            path.display(),
            mode & 0o7777,
            meta.uid()
        )
    })
}

/// A folder lent to a build's uid: its entries' owners as they were, put
/// back by [`Lent::give_back`] (what the build made goes to the folder's
/// owner).
pub struct Lent {
    dir: PathBuf,
    owners: Vec<(PathBuf, u32, u32)>,
}

impl Lent {
    /// Gives `dir` and everything in it to `uid`. A file with more than
    /// one hard link is left as it is: its other names may be anywhere.
    pub fn lend(dir: &Path, uid: u32) -> io::Result<Lent> {
        let mut owners = Vec::new();
        walk(dir, &mut |path, meta| {
            owners.push((path.to_owned(), meta.uid(), meta.gid()));
            if meta.is_dir() || meta.nlink() == 1 {
                chown(path, uid, uid)?;
            }
            Ok(())
        })?;
        Ok(Lent {
            dir: dir.to_owned(),
            owners,
        })
    }

    /// Puts the owners back; what is new goes to the folder's own owner.
    pub fn give_back(self) -> io::Result<()> {
        let (_, uid, gid) = self.owners[0].clone();
        let owners: std::collections::HashMap<PathBuf, (u32, u32)> = self
            .owners
            .into_iter()
            .map(|(p, u, g)| (p, (u, g)))
            .collect();
        walk(&self.dir, &mut |path, _| {
            let (u, g) = owners.get(path).copied().unwrap_or((uid, gid));
            chown(path, u, g)
        })
    }
}

/// `path`, then what is under it, without following links.
fn walk(
    path: &Path,
    visit: &mut dyn FnMut(&Path, &std::fs::Metadata) -> io::Result<()>,
) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    visit(path, &meta)?;
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            walk(&entry?.path(), visit)?;
        }
    }
    Ok(())
}

fn chown(path: &Path, uid: u32, gid: u32) -> io::Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_read_and_checked() {
        assert_eq!("60000-60999".parse::<UidRange>(), Ok(DEFAULT_UIDS));
        for bad in [
            "",
            "60000",
            "0-10",
            "10-5",
            "a-b",
            "60000-70000",
            "1-99999999999",
        ] {
            assert!(bad.parse::<UidRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_folder_is_searched_and_a_file_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pc2");
        std::fs::write(&file, "x").unwrap();
        use std::os::unix::fs::PermissionsExt;
        let set = |p: &Path, m| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
        set(&file, 0o755).unwrap();
        set(dir.path(), 0o700).unwrap();
        let from = dir.path().parent().unwrap();
        let why = unreachable(&file, from, 60000, true).unwrap();
        assert!(why.contains("mode 700"), "{why}");
        set(dir.path(), 0o755).unwrap();
        assert_eq!(unreachable(&file, from, 60000, true), None);
        set(&file, 0o644).unwrap();
        assert!(unreachable(&file, from, 60000, true).is_some());
        assert_eq!(unreachable(&file, from, 60000, false), None);
    }
}
