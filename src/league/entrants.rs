//! A league's entrants as their folders are now: each one's sources
//! fingerprinted apart from what its own build writes (so that a build
//! never calls for the next), and a new version built when they change.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::copies;
use super::db::VersionRow;
use super::relocate::moved;
use crate::bot::build::{self, BuildOptions};
use crate::bot::usage::human_bytes;
use crate::bot::{BotSpec, Environment};
use crate::manifest::{self, Step};
use crate::outcome::Disqualified;
use crate::tournament::spec::{EntrantSpec, Spec};
use crate::tournament::units::{duration, entrant_program, located, under};

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
    let mut header = format!("{:?} {:?} {:?}", e.command, e.options, e.env.vars());
    // Only when given: the versions of leagues without one stay as they were.
    if let Some(control) = e.time_control {
        header.push_str(&format!(" time_control {control}"));
    }
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
    /// The referee could not start the build for want of its own
    /// resources: no version is recorded, and the next scan tries again.
    pub referees_failure: bool,
    /// Its copy's digest, once copied and sealed (see
    /// [`super::copies::seal`]).
    pub digest: Option<String>,
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
            build::build_folders(std::slice::from_ref(dir), &options)
                .await
                .into_iter()
                .next()
                .unwrap_or_else(|| Err(build::BuildError::Entrant("not built".into()))),
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
    let referees_failure = matches!(built, Some(Err(build::BuildError::Referee(_))));
    let built = built.map(|b| b.map_err(|e| e.to_string()));
    let output = logs.as_ref().and_then(|d| log_in(d.path()));
    let log = match (&built, output) {
        (Some(Err(why)), Some(output)) => Some(format!("{why}\n\n{output}")),
        (Some(Err(why)), None) => Some(why.clone()),
        (_, output) => output,
    };
    let program = match left_no_program(&built, e) {
        Some(why) => Err(Disqualified::build_failed(why)),
        None => entrant_program(built, e.command.as_deref(), base, env.with(&e.env.vars()))
            .and_then(located),
    };
    // Why it cannot play comes first: a log alone starts with the build's
    // command, which gives no reason.
    let log = match (&program, log) {
        (Err(why), Some(log)) if !log.starts_with(&why.why) => {
            Some(format!("{}\n\n{log}", why.why))
        }
        (_, log) => log,
    };
    Built {
        program,
        products,
        log,
        referees_failure,
        digest: None,
    }
}

/// Why a folder that built is no program: it has no `pc2` after its build
/// (an entrant given by a command runs that instead).
fn left_no_program(built: &Option<Result<PathBuf, String>>, e: &EntrantSpec) -> Option<String> {
    let Some(Ok(dir)) = built else {
        return None;
    };
    let pc2 = dir.join(build::PROGRAM);
    (e.command.is_none() && std::fs::symlink_metadata(&pc2).is_err()).then(|| {
        format!(
            "{}: no {} after its build (a folder needs a Makefile that makes {}, or a {} \
             of its own)",
            crate::text::terminal_path(dir),
            build::PROGRAM,
            build::PROGRAM,
            build::PROGRAM
        )
    })
}

/// The most disk a version's copy may take: the blocks its files have
/// (a sparse file's holes take none), build products included, for
/// which a Rust `target/` of a few hundred MiB leaves room. A folder
/// that takes more is not copied, and its version does not play, with
/// the reason (as a failed build).
pub const MOST_COPIED: u64 = 1 << 30;

/// The most files, folders and links a version's copy may have.
pub const MOST_ENTRIES: usize = 200_000;

/// Where the copy of entrant `name`'s version `fingerprint` is, under
/// `root` (see [`snapshot`]).
pub fn copy_of(root: &Path, name: &str, fingerprint: &str) -> PathBuf {
    root.join(copy_name(name, fingerprint))
}

/// The copy's folder name: the entrant's name, made safe for a path, and
/// the version's fingerprint.
fn copy_name(name: &str, fingerprint: &str) -> String {
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
    if safe.len() <= MOST_COPY_NAME {
        return format!("{safe}-{fingerprint}");
    }
    // Too long for a file name with its fingerprint and the `.partial`
    // of a copy being made (a 250-byte folder name never played): cut,
    // and told apart from other long names by a hash of the whole.
    let mut whole = Fnv::default();
    whole.text(name);
    format!(
        "{}~{}-{fingerprint}",
        &safe[..MOST_COPY_NAME - 17],
        whole.hex()
    )
}

/// The longest entrant's name a copy's folder keeps whole: with its
/// fingerprint and `.partial`, well within a file name's 255 bytes.
const MOST_COPY_NAME: usize = 200;

/// Where a version built from `dir` plays from: a copy of the folder made
/// when it entered, under `root`, named by its entrant and fingerprint
/// (the same sources, the same copy, a league started again included);
/// with what to add to the version's log when the copy left out what is
/// not a folder, file or link (see [`copy_tree`]).
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
) -> Result<(BotSpec, Option<String>), String> {
    let to = copy_of(root, name, fingerprint);
    // As the build names it (canonical): a base through a link or `..`
    // would leave the program's paths unmoved, in the live folder.
    let dir = &std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
    let built = built_program(&program, dir);
    let mut note = None;
    if !to.is_dir() {
        let partial = root.join(format!(".{}.partial", copy_name(name, fingerprint)));
        let _ = std::fs::remove_dir_all(&partial);
        let copied = copy_tree(dir, &partial, MOST_COPIED)
            .and_then(|left_out| match &built {
                Some(built) => put_program(built, &partial.join(build::PROGRAM)).map(|()| left_out),
                None => Ok(left_out),
            })
            .and_then(|left_out| std::fs::rename(&partial, &to).map(|()| left_out));
        match copied {
            Ok(left_out) => note = left_out_note(&left_out),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&partial);
                return Err(format!(
                    "cannot copy {} to {}: {e}",
                    dir.display(),
                    to.display()
                ));
            }
        }
    }
    let mut program = moved(program, dir, &to);
    if built.is_some() {
        program.program = to.join(build::PROGRAM).into_os_string();
    }
    Ok((program, note))
}

/// The program as built, when `program` is this run's copy of `dir`'s
/// `pc2` (a binary, see [`build::copied_from`]): the version's copy holds
/// it as its own `pc2`, so that nothing a version runs lies outside the
/// versions' folder. A worker on another machine has none of this one's
/// `/tmp` (issue 48: every game of a compiled entrant was lost there).
fn built_program(program: &BotSpec, dir: &Path) -> Option<PathBuf> {
    let from = build::copied_from(&program.program)?;
    let dir = std::fs::canonicalize(dir).ok()?;
    (from == dir).then(|| PathBuf::from(&program.program))
}

/// Puts the program `built` at `target` in a copy, in place of whatever
/// the folder had there (its own `pc2`, maybe changed since the build, or
/// a link, which is replaced, never written through).
fn put_program(built: &Path, target: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(target) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::fs::copy(built, target).map(drop)
}

/// What the version's log says of the files a copy left out, if any.
fn left_out_note(left_out: &[(PathBuf, &str)]) -> Option<String> {
    const MOST_NAMED: usize = 20;
    if left_out.is_empty() {
        return None;
    }
    let mut named: Vec<String> = left_out
        .iter()
        .take(MOST_NAMED)
        .map(|(path, kind)| format!("{} ({kind})", path.display()))
        .collect();
    if left_out.len() > MOST_NAMED {
        named.push(format!("and {} more", left_out.len() - MOST_NAMED));
    }
    Some(format!(
        "left out of this version's copy, never opened (not a file, folder or link): {}",
        named.join(", ")
    ))
}

/// Copies the tree at `from` to `to` (made): files with their
/// permissions (a sparse file sparse: its holes are not written),
/// symbolic links as links, never followed; returns what it left out,
/// never opened: FIFOs, sockets, devices (relative path, what it is).
/// Opening a FIFO would wait for a writer for ever, a device may be
/// anything.
///
/// A folder of more than [`MOST_ENTRIES`] entries, or whose files take
/// more than `most` bytes on disk, is refused before anything is
/// copied; a copy that would write more than `most` (files grown since
/// the look) stops there with an error.
fn copy_tree(from: &Path, to: &Path, most: u64) -> std::io::Result<Vec<(PathBuf, &'static str)>> {
    let survey = Survey::of(from)?;
    if survey.entries > MOST_ENTRIES {
        return Err(std::io::Error::other(format!(
            "it has more than {MOST_ENTRIES} files, folders and links, more than a version's copy may"
        )));
    }
    if survey.blocks > most {
        let largest: Vec<String> = survey
            .largest
            .iter()
            .map(|(path, bytes)| format!("{} ({})", path.display(), human_bytes(*bytes)))
            .collect();
        return Err(std::io::Error::other(format!(
            "its files take {} on disk, more than the {} a version's copy may take (the largest: {})",
            human_bytes(survey.blocks),
            human_bytes(most),
            largest.join(", ")
        )));
    }
    std::fs::create_dir_all(to)?;
    let mut left = most;
    let mut left_out = Vec::new();
    manifest::walk(from, |rel, entry| {
        let (source, target) = (from.join(rel), to.join(rel));
        // Not followed: the entry's own type.
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source)?, &target)?;
        } else if kind.is_dir() {
            std::fs::create_dir(&target)?;
        } else if !kind.is_file() {
            left_out.push((rel.to_owned(), what_is(kind)));
        } else if let Err(kind) = copy_file(&source, &target, &mut left, most)? {
            // Replaced since it was listed.
            left_out.push((rel.to_owned(), what_is(kind)));
        }
        Ok(Step::On)
    })?;
    left_out.sort();
    Ok(left_out)
}

/// What a folder holds, looked at without opening any of its files.
#[derive(Default)]
struct Survey {
    /// Files, folders and links (up to a little over [`MOST_ENTRIES`]).
    entries: usize,
    /// The bytes its files take on disk (their blocks).
    blocks: u64,
    /// Its largest files on disk, largest first (a few).
    largest: Vec<(PathBuf, u64)>,
}

impl Survey {
    fn of(dir: &Path) -> std::io::Result<Survey> {
        use std::os::unix::fs::MetadataExt;
        let mut survey = Survey::default();
        manifest::walk(dir, |rel, entry| {
            // Not followed (`lstat`).
            let meta = entry.metadata()?;
            survey.entries += 1;
            if meta.is_file() {
                let bytes = meta.blocks().saturating_mul(512);
                survey.blocks = survey.blocks.saturating_add(bytes);
                survey.largest.push((rel.to_owned(), bytes));
                survey
                    .largest
                    .sort_by_key(|&(_, bytes)| std::cmp::Reverse(bytes));
                survey.largest.truncate(3);
            }
            // More is refused, however much more.
            Ok(match survey.entries > MOST_ENTRIES {
                true => Step::Stop,
                false => Step::On,
            })
        })?;
        Ok(survey)
    }
}

/// What a thing that is not a file, folder or link is, for a log.
fn what_is(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "not a file"
    }
}

/// Opens `path` for reading if it is a file, never waiting (a FIFO put
/// in its place since it was looked at opens at once, and is not read)
/// nor following a link; otherwise what it is.
fn open_file(
    path: &Path,
) -> std::io::Result<Result<(std::fs::File, std::fs::Metadata), std::fs::FileType>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::File::options()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW | nix::libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    Ok(if meta.is_file() {
        Ok((file, meta))
    } else {
        Err(meta.file_type())
    })
}

/// Copies the file `source` to `target` (made, with its permissions),
/// its data only: where the file system tells its holes apart
/// (`SEEK_DATA`, `SEEK_HOLE`), they stay holes. Takes what it writes from
/// `left`, and fails rather than write more than that. Not a file (any
/// more): what it is, and nothing made.
fn copy_file(
    source: &Path,
    target: &Path,
    left: &mut u64,
    most: u64,
) -> std::io::Result<Result<(), std::fs::FileType>> {
    use nix::unistd::{Whence, lseek};
    use std::io::{Seek, SeekFrom};
    let (from, meta) = match open_file(source)? {
        Ok(opened) => opened,
        Err(kind) => return Ok(Err(kind)),
    };
    let to = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(target)?;
    let len = meta.len();
    let mut at = 0;
    while at < len {
        let offset = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let data = match lseek(&from, offset(at), Whence::SeekData) {
            Ok(data) => u64::try_from(data).unwrap_or(len),
            // Only holes after `at`.
            Err(nix::errno::Errno::ENXIO) => break,
            // Holes not told apart here: all data.
            Err(_) => at,
        };
        let hole = lseek(&from, offset(data), Whence::SeekHole)
            .ok()
            .and_then(|hole| u64::try_from(hole).ok())
            .unwrap_or(len)
            .min(len);
        if data >= hole {
            break;
        }
        let n = hole - data;
        if n > *left {
            return Err(std::io::Error::other(format!(
                "{} and the files before it take more than the {} a version's copy may take",
                source.display(),
                human_bytes(most)
            )));
        }
        *left -= n;
        (&from).seek(SeekFrom::Start(data))?;
        (&to).seek(SeekFrom::Start(data))?;
        let copied = std::io::copy(&mut std::io::Read::take(&from, n), &mut &to)?;
        if copied < n {
            // Cut short since it was looked at.
            break;
        }
        at = hole;
    }
    to.set_len(len)?;
    to.set_permissions(meta.permissions())?;
    Ok(Ok(()))
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

    /// Hashes the file at `path`: its contents, or its size and time when
    /// it is large; a link's target; what anything else is (a FIFO, a
    /// socket, a device: never opened, a FIFO would block the scan for
    /// ever).
    fn file(&mut self, path: &Path) {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                self.text(&format!("-> {:?}", std::fs::read_link(path).ok()));
            }
            Ok(meta) if !meta.is_file() && !meta.is_dir() => {
                self.text(what_is(meta.file_type()));
            }
            Ok(meta) if meta.len() > MOST_HASHED => {
                self.text(&format!("{} {:?}", meta.len(), meta.modified().ok()));
            }
            _ => match open_file(path) {
                Ok(Ok((mut file, _))) => {
                    let mut bytes = Vec::new();
                    match std::io::Read::read_to_end(&mut file, &mut bytes) {
                        Ok(_) => self.bytes(&bytes),
                        Err(e) => self.text(&e.to_string()),
                    }
                }
                Ok(Err(kind)) => self.text(what_is(kind)),
                Err(e) => self.text(&e.to_string()),
            },
        }
        self.bytes(b"\0");
    }

    fn hex(&self) -> String {
        format!("{:016x}", std::hash::Hasher::finish(&self.0))
    }
}

/// An entrant's versions as files on this machine, and their one owner:
/// from what each is built (its folder, or the copy of the version that
/// plays), its build, its copy under the versions' folder (sealed), what
/// its program is kept from seeing, and when a copy goes. The league's
/// settings come down to it once, as the league starts; the roster asks
/// it and records its answers (in the database and the league's state),
/// and nothing here asks the roster.
pub struct Versions {
    /// The league file's folder, which entrants' paths are under.
    base: PathBuf,
    /// Where each version's folder is copied as it enters (see
    /// [`snapshot`]): `--versions`, else beside a SQLite database,
    /// `DB.versions`.
    root: PathBuf,
    build: BuildOptions,
    env: Environment,
    /// What every sandboxed entrant is kept from seeing: the league's own
    /// files and every entrant's folder (its own is shown again).
    hidden: Vec<PathBuf>,
}

/// What is to be built of an entrant.
pub enum Change {
    /// Sources never built, or changed since its last version.
    New(EntrantSpec),
    /// Its last version, not yet built by this run (a league started
    /// again): built as it is, the same version (its id, its fingerprint).
    Rebuild(EntrantSpec, i64, String),
}

impl Change {
    /// The entrant as built: its folder, or a version's copy.
    pub fn entrant(&self) -> &EntrantSpec {
        match self {
            Change::New(e) | Change::Rebuild(e, ..) => e,
        }
    }
}

/// A version made: built and, if it built, copied and sealed, its program
/// kept from what it may not see; and its fingerprint.
pub struct Made {
    pub built: Built,
    pub fingerprint: String,
}

impl Versions {
    /// The versions of `spec`'s entrants, under `base`, copied to `root`;
    /// built with `spec`'s limits and environment on top of `env`, in the
    /// sandbox when `sandbox`, where the league's `file` and
    /// `private` files are hidden with every entrant's folder.
    pub fn new(
        spec: &Spec,
        base: PathBuf,
        root: PathBuf,
        (file, private): (&Path, Vec<PathBuf>),
        env: &[(OsString, OsString)],
        sandbox: bool,
    ) -> Versions {
        let l = &spec.limits;
        let env = Environment::clean(env).with(&spec.env.vars());
        let mut hidden = vec![base.clone(), file.to_owned(), root.clone()];
        hidden.extend(private);
        for e in &spec.entrants {
            if let Some(glob) = &e.glob {
                let parent = Path::new(glob.get_ref()).parent().unwrap_or(Path::new(""));
                hidden.push(base.join(parent));
            }
            if let Some(dir) = &e.dir {
                hidden.push(base.join(dir));
            }
        }
        let build = BuildOptions {
            make: l.make.clone().unwrap_or_else(|| build::DEFAULT_MAKE.into()),
            timeout: duration(&l.build_timeout, build::DEFAULT_BUILD_TIMEOUT),
            logs: None,
            sandbox,
            hide: hidden.clone(),
            prebuilt: false,
            env: env.clone(),
        };
        Versions {
            base,
            root,
            build,
            env,
            hidden,
        }
    }

    /// The versions' folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the sandbox can hide every path of the league's.
    pub fn check_hidden(&self) -> Result<(), String> {
        crate::bot::spawn::check_hidden(&self.hidden).map_err(|e| e.to_string())
    }

    /// Whether the folder `dir` (under the league's folder) is in the
    /// versions' folder: a glob beside the database would match the
    /// versions' copies.
    pub fn holds(&self, dir: &Path) -> bool {
        under(&self.base, dir).starts_with(&self.root)
    }

    /// What is to be built of `e`, if anything, given the database's
    /// versions `rows`; `idle(id)`: whether version `id` is in the
    /// league's state and does not play.
    pub fn change(
        &self,
        e: &EntrantSpec,
        rows: &[VersionRow],
        idle: impl FnOnce(i64) -> bool,
    ) -> Option<Change> {
        let last = rows.iter().rev().find(|r| r.entrant == e.name);
        let products = last.map_or(&[][..], |r| &r.products[..]);
        let now = fingerprint(e, &self.base, products);
        match last {
            Some(last) if last.fingerprint == now => {
                // Its last version that built plays: built again when this
                // run has not built it, or when it left and is back. When
                // its last version did not build (a broken push before a
                // restart), that is an earlier one, built from its copy.
                let playing = match last.build_ok {
                    true => last,
                    false => rows
                        .iter()
                        .rev()
                        .find(|r| r.entrant == e.name && r.build_ok)?,
                };
                if !(idle(playing.id) || last.retired) {
                    return None;
                }
                let mut from = e.clone();
                if !last.build_ok {
                    from.dir = Some(copy_of(&self.root, &e.name, &playing.fingerprint));
                }
                Some(Change::Rebuild(
                    from,
                    playing.id,
                    playing.fingerprint.clone(),
                ))
            }
            _ => Some(Change::New(e.clone())),
        }
    }

    /// `change` built; or, when the referee could not build it for want
    /// of its own resources (not the entrant's fault: no version is
    /// recorded, and the next scan builds it again), the first line of
    /// why.
    pub async fn build(&self, change: &Change) -> Result<Built, String> {
        let built = build(change.entrant(), &self.base, &self.build, &self.env).await;
        if built.referees_failure {
            let log = built.log.as_deref().unwrap_or_default();
            return Err(log.lines().next().unwrap_or("").to_owned());
        }
        Ok(built)
    }

    /// `built`, of `change`, made a version: if it built, copied and
    /// sealed, its program kept from what it may not see; with its
    /// fingerprint.
    pub fn made(&self, change: &Change, built: Built) -> Made {
        let fingerprint = match change {
            Change::New(e) => fingerprint(e, &self.base, &built.products),
            Change::Rebuild(_, _, fingerprint) => fingerprint.clone(),
        };
        let mut built = self.kept(change.entrant(), built, &fingerprint);
        built.program = built.program.map(|mut program| {
            program.hide.clone_from(&self.hidden);
            program
        });
        Made { built, fingerprint }
    }

    /// `built` playing from a copy of its folder (see [`snapshot`]); a
    /// copy that cannot be made keeps it out, its reason first in the
    /// version's log, and what the copy left out (FIFOs, sockets,
    /// devices) is said there too.
    fn kept(&self, e: &EntrantSpec, built: Built, fingerprint: &str) -> Built {
        let (Ok(program), Some(dir)) = (&built.program, &e.dir) else {
            return built;
        };
        let dir = under(&self.base, dir);
        // Built in its copy (a league started again after a push that did
        // not build): the copy is as this build left it, sealed anew.
        let keep = !dir.starts_with(&self.root);
        let copied = snapshot(program.clone(), &dir, &self.root, &e.name, fingerprint).and_then(
            |(program, note)| {
                let copy = copy_of(&self.root, &e.name, fingerprint);
                let digest = copies::seal(&copy, keep)
                    .map_err(|e| format!("cannot seal {}: {e}", copy.display()))?;
                Ok((program, note, digest))
            },
        );
        let (program, note, digest) = match copied {
            Ok((program, note, digest)) => (Ok(program), note, Some(digest)),
            Err(why) => (
                Err(Disqualified::cannot_start(why.clone())),
                Some(why),
                None,
            ),
        };
        let log = match (note, built.log) {
            (Some(note), Some(log)) => Some(format!("{note}\n\n{log}")),
            (note, log) => note.or(log),
        };
        Built {
            program,
            log,
            digest,
            ..built
        }
    }

    /// Removes the copies that no version will play from again: all but
    /// those `in_use` plays from and each entrant's last version that
    /// built in `rows` (the database's versions), whether it plays now or
    /// not: after a broken push and a restart it is the version that
    /// plays, built again from that copy; and when the entrant has left
    /// and comes back, it plays as that version again, maybe through a
    /// player process kept between games (`keep_players`) and still
    /// working in that folder.
    pub fn prune(&self, rows: &[VersionRow], in_use: &[BotSpec]) {
        let mut seen = std::collections::HashSet::new();
        let last_built: Vec<PathBuf> = rows
            .iter()
            .rev()
            .filter(|r| r.build_ok && seen.insert(r.entrant.as_str()))
            .map(|r| copy_of(&self.root, &r.entrant, &r.fingerprint))
            .collect();
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return;
        };
        for entry in entries.flatten() {
            let copy = entry.path();
            let used = |spec: &BotSpec| {
                spec.dir.as_deref().is_some_and(|d| d.starts_with(&copy))
                    || Path::new(&spec.program).starts_with(&copy)
            };
            if in_use.iter().any(used) || last_built.contains(&copy) {
                continue;
            }
            // Not followed if it is a link: only what is under the copies'
            // folder goes.
            let removed = match entry.file_type() {
                Ok(kind) if kind.is_dir() => std::fs::remove_dir_all(&copy),
                _ => std::fs::remove_file(&copy),
            };
            match removed {
                Ok(()) => {
                    tracing::info!("league: removed {}, played by no version", copy.display())
                }
                Err(e) => eprintln!("league: cannot remove {}: {e}", copy.display()),
            }
        }
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
        let (kept, note) = snapshot(program, &folder, &root, "ann/x", "f00d").unwrap();
        assert_eq!(note, None);
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
    fn a_copy_leaves_out_what_is_not_a_file_and_keeps_holes() {
        use std::io::{Seek, SeekFrom, Write};
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let (folder, copy) = (dir.path().join("ann"), dir.path().join("copy"));
        std::fs::create_dir_all(folder.join("in")).unwrap();
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o644);
        nix::unistd::mkfifo(&folder.join("in/pipe"), mode).unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(folder.join("sock")).unwrap();
        let mut sparse = std::fs::File::create(folder.join("sparse")).unwrap();
        sparse.set_len(64 << 20).unwrap();
        sparse.seek(SeekFrom::Start(32 << 20)).unwrap();
        sparse.write_all(b"x").unwrap();
        drop(sparse);
        // Never opened: the fingerprint is made, not blocked.
        let e = entrant(&folder);
        assert_eq!(fingerprint(&e, &folder, &[]), fingerprint(&e, &folder, &[]));
        let left_out = copy_tree(&folder, &copy, 1 << 20).unwrap();
        assert_eq!(
            left_out,
            [
                (PathBuf::from("in/pipe"), "a FIFO"),
                (PathBuf::from("sock"), "a socket")
            ]
        );
        assert_eq!(
            left_out_note(&left_out).unwrap(),
            "left out of this version's copy, never opened (not a file, folder or link): \
             in/pipe (a FIFO), sock (a socket)"
        );
        let meta = std::fs::metadata(copy.join("sparse")).unwrap();
        assert_eq!(meta.len(), 64 << 20);
        assert!(meta.blocks() * 512 <= 1 << 20, "{}", meta.blocks());
        let bytes = std::fs::read(copy.join("sparse")).unwrap();
        assert_eq!(bytes[32 << 20], b'x');
        assert_eq!(bytes.iter().filter(|&&b| b != 0).count(), 1);
    }

    #[test]
    fn a_folder_larger_than_a_copy_may_take_is_refused_with_its_largest_files() {
        let dir = tempfile::tempdir().unwrap();
        let (folder, copy) = (dir.path().join("ann"), dir.path().join("copy"));
        std::fs::create_dir_all(folder.join("target")).unwrap();
        std::fs::write(folder.join("target/big"), vec![1; 300 << 10]).unwrap();
        std::fs::write(folder.join("small"), vec![1; 100 << 10]).unwrap();
        let e = copy_tree(&folder, &copy, 256 << 10)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "its files take 400 KiB on disk, more than the 256 KiB a version's copy may take \
             (the largest: target/big (300 KiB), small (100 KiB))"
        );
        assert!(!copy.exists(), "nothing copied");
        // Within the limit: copied.
        copy_tree(&folder, &copy, 1 << 20).unwrap();
        assert_eq!(
            std::fs::read(copy.join("target/big")).unwrap().len(),
            300 << 10
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
