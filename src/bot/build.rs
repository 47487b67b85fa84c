//! Building the entrants: `make` in each distinct directory, once, as many
//! at a time as there are CPUs; then `pc2` must be there and executable.
//!
//! Runs of the referee that build the same directory at the same time (the
//! shards of a tournament on one machine) never race: each build holds the
//! directory's build lock (see [`lock_dir`]), and each run then plays its
//! own private copy of the binary `pc2` it built (see [`Snapshots`]), so
//! another run's later build cannot change, or be refused by, what this
//! run runs. A script `pc2` runs in place (see [`is_script`]).

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use futures_util::stream::{self, StreamExt};
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use nix::unistd::{AccessFlags, access};

use super::command::{Completed, run_build};
use super::program::SpawnError;
use super::{BotSpec, Environment};
use crate::text;

/// The program every entrant must provide.
pub const PROGRAM: &str = "pc2";
/// How much of a build's output is kept.
const LOG_KEEP: usize = 64 * 1024;
/// How often a run waiting for another run's build tries the lock again.
const LOCK_POLL: Duration = Duration::from_millis(100);
/// The name of a run's directory of program copies starts with this, under
/// the system's temporary directory.
pub(crate) const SNAPSHOTS_PREFIX: &str = "referee-snapshot-";

#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Shell command run in each directory (`sh -c`).
    pub make: String,
    pub timeout: Duration,
    /// Where to write each build's log, if anywhere.
    pub logs: Option<PathBuf>,
    /// Build under bubblewrap (`--sandbox`): see [`spawn::sandboxed`].
    pub sandbox: bool,
    /// Directories a sandboxed build must not see, besides the other
    /// entrants' (the tournament's own files, its output).
    pub hide: Vec<PathBuf>,
    /// Build nothing: each directory's `pc2` must be there already, and
    /// newer than its sources (see [`check_prebuilt`]).
    pub prebuilt: bool,
    /// The environment of the builds, and of the programs built.
    pub env: Environment,
}

/// Time limit of each build.
pub const DEFAULT_BUILD_TIMEOUT: Duration = Duration::from_secs(300);

/// The default build command. With it, a directory without a makefile is
/// not built (its `pc2` is used as it is), as the statement allows.
pub const DEFAULT_MAKE: &str = "make";

/// One entrant's build: the program to run, or why it is disqualified.
pub type Built = Result<BotSpec, String>;

/// Why a folder's build gave no program: the entrant's doing, or the
/// referee's own resources failing it (issue 39: descriptors, memory or
/// processes the referee could not have while it started the build),
/// which no entrant may be disqualified for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// The build failed, timed out or left no program; the folder is
    /// not a directory.
    Entrant(String),
    /// The referee could not start the build for want of its own
    /// resources.
    Referee(String),
}

/// What stops a run (status 70) when one of `built` could not start for
/// want of the referee's own resources: no entrant is disqualified for
/// that.
pub fn referees_failure<T>(built: &[Result<T, BuildError>]) -> Option<String> {
    built.iter().find_map(|b| match b {
        Err(BuildError::Referee(why)) => Some(format!(
            "{why}: the referee's own resources failed it (give it more descriptors with \
             `ulimit -n`, memory or processes); no entrant is disqualified for that"
        )),
        _ => None,
    })
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Entrant(why) | BuildError::Referee(why) => f.write_str(why),
        }
    }
}

/// Builds every distinct directory once, several at once, and returns one
/// result per entrant (in the order of `dirs`): its `pc2`, ready to run.
/// Each program is given the other entrants' directories to hide.
pub async fn build_all(
    dirs: &[PathBuf],
    options: &BuildOptions,
) -> Vec<Result<BotSpec, BuildError>> {
    let built = build_folders(dirs, options).await;
    let mut hide: Vec<PathBuf> = built.iter().flatten().cloned().collect();
    hide.extend(options.hide.iter().cloned());
    built
        .into_iter()
        .zip(dirs)
        .map(|(built, given)| {
            let dir = built?;
            let mut spec = pc2_in(&dir)
                .map_err(|why| BuildError::Entrant(format!("{}: {why}", given.display())))?;
            spec.hide.clone_from(&hide);
            spec.env.clone_from(&options.env);
            Ok(spec)
        })
        .collect()
}

/// The program to run in a built directory: this run's copy of its `pc2`.
fn pc2_in(dir: &Path) -> Built {
    let program = program(dir);
    if !program.is_file() {
        return Err(format!("no {PROGRAM} in the directory after the build"));
    }
    if access(&program, AccessFlags::X_OK).is_err() {
        return Err(format!("{PROGRAM} is not executable"));
    }
    Ok(BotSpec {
        program: program.into_os_string(),
        args: vec![],
        dir: Some(dir.to_owned()),
        hide: vec![],
        env: Environment::default(),
    })
}

/// Builds every distinct directory once (`make` where there is a makefile,
/// or always with a custom build command), as many at once as there are
/// CPUs; one result per entry of `dirs`: the directory, canonical, or why
/// it cannot be used.
pub async fn build_dirs(dirs: &[PathBuf], options: &BuildOptions) -> Vec<Result<PathBuf, String>> {
    build_folders(dirs, options)
        .await
        .into_iter()
        .map(|built| built.map_err(|e| e.to_string()))
        .collect()
}

/// [`build_dirs`], saying whose failure each failed build is.
pub async fn build_folders(
    dirs: &[PathBuf],
    options: &BuildOptions,
) -> Vec<Result<PathBuf, BuildError>> {
    let canonical: Vec<Result<PathBuf, String>> = dirs
        .iter()
        .map(|dir| {
            std::fs::canonicalize(dir)
                .map_err(|e| format!("directory {}: {e}", dir.display()))
                .and_then(|c| {
                    if c.is_dir() {
                        Ok(c)
                    } else {
                        Err(format!("{} is not a directory", dir.display()))
                    }
                })
        })
        .collect();
    let mut distinct: Vec<&PathBuf> = canonical.iter().filter_map(|c| c.as_ref().ok()).collect();
    distinct.sort();
    distinct.dedup();
    // Each build is named in messages as its directory was first given.
    let named = distinct.iter().map(|dir| {
        let at = canonical.iter().position(|c| c.as_ref() == Ok(*dir));
        (*dir, at.map_or(dir.as_path(), |at| dirs[at].as_path()))
    });
    // A sandboxed build sees none of the others, nor the build logs.
    let mut hide: Vec<PathBuf> = distinct.iter().map(|d| d.to_path_buf()).collect();
    hide.extend(options.hide.iter().cloned());
    hide.extend(options.logs.iter().cloned());
    let logs = log_names(&distinct);
    // As many builds at once as there are CPUs: a class of 1,000 started
    // all at once would be 1,000 compilers, and their memory.
    let at_once = std::thread::available_parallelism().map_or(1, |n| n.get());
    let builds: Vec<Result<(), BuildError>> =
        stream::iter(named.zip(&logs).map(|((dir, given), log)| {
            build_one(Job {
                dir,
                given,
                log,
                options,
                hide: &hide,
            })
        }))
        .buffered(at_once)
        .collect()
        .await;
    canonical
        .iter()
        .zip(dirs)
        .map(|(canonical, given)| {
            let dir = canonical
                .as_ref()
                .map_err(|why| BuildError::Entrant(why.clone()))?;
            let at = distinct
                .binary_search(&dir)
                .expect("every directory was built");
            let named = |why: &String| format!("{}: {why}", given.display());
            builds[at]
                .clone()
                .map(|()| dir.clone())
                .map_err(|e| match e {
                    BuildError::Entrant(why) => BuildError::Entrant(named(&why)),
                    BuildError::Referee(why) => BuildError::Referee(named(&why)),
                })
        })
        .collect()
}

/// The name of each build's log, for directories `dirs` (canonical, all
/// different): the directory's own name (see [`text::file_name`]), or,
/// where two of them have the same name, that name with a hash of the
/// whole path.
fn log_names(dirs: &[&PathBuf]) -> Vec<String> {
    use std::os::unix::ffi::OsStrExt;
    let label = |dir: &Path| {
        dir.file_name()
            .map_or("build".into(), |n| n.to_string_lossy().into_owned())
    };
    let plain: Vec<String> = dirs.iter().map(|d| text::file_name(&label(d))).collect();
    dirs.iter()
        .zip(&plain)
        .map(|(dir, name)| {
            if plain.iter().filter(|other| *other == name).count() > 1 {
                text::file_name_keyed(&label(dir), dir.as_os_str().as_bytes())
            } else {
                name.clone()
            }
        })
        .collect()
}

/// One directory's build.
struct Job<'a> {
    /// The directory, canonical.
    dir: &'a Path,
    /// How to name it.
    given: &'a Path,
    /// Its build log's name.
    log: &'a str,
    options: &'a BuildOptions,
    /// What a sandboxed build does not see.
    hide: &'a [PathBuf],
}

/// Builds `job`'s directory under its build lock, and while still holding
/// the lock takes this run's copy of its `pc2`, if there is one.
async fn build_one(job: Job<'_>) -> Result<(), BuildError> {
    let Job {
        dir,
        given,
        options,
        ..
    } = job;
    let _lock = lock_dir(dir, given).await;
    // A prebuilt directory is checked by the caller, which knows the
    // program each entrant runs (`pc2`, or its own command).
    if !options.prebuilt {
        make(&job).await?;
    }
    let built = dir.join(PROGRAM);
    if built.is_file()
        && !is_script(&built)
        && let Err(e) = Snapshots::take(dir, &built)
    {
        eprintln!(
            "referee: cannot copy {} for this run ({e}); running it in place",
            text::terminal_path(&given.join(PROGRAM))
        );
    }
    Ok(())
}

/// The largest `pc2` a run copies for itself (see [`Snapshots::take`]).
const MOST_COPIED_PROGRAM: u64 = 1 << 30;

/// Whether `program` is a script (it starts with `#!`). A script runs in
/// place, not from this run's copy: it finds its files through its own
/// path (`exec "$(dirname "$0")/bot"`), which a copy would move away from
/// them; and its interpreter reads it, where the kernel maps a binary, so a
/// build that replaces it is never refused as `Text file busy`.
fn is_script(program: &Path) -> bool {
    use std::io::Read;
    let mut start = [0u8; 2];
    File::open(program)
        .and_then(|mut file| file.read_exact(&mut start))
        .is_ok_and(|()| &start == b"#!")
}

/// The program `program` of directory `dir` is there and no source of it
/// is newer: what a run that does not build (a cluster's array task,
/// after one build job) needs. A source is any file of the directory, at
/// any depth, except hidden ones, the program itself and what builds
/// leave (`*.o`, `*.class`, `*.pyc`, and `target/`, `build/`,
/// `__pycache__/`).
pub fn check_prebuilt(dir: &Path, program: &Path) -> Result<(), String> {
    let name = text::terminal_path(program.strip_prefix(dir).unwrap_or(program));
    let built = std::fs::metadata(program)
        .and_then(|m| m.modified())
        .map_err(|_| format!("no {name}: build it first (referee tournament FILE --build-only)"))?;
    if let Some(newer) = newest_source(dir, program, built) {
        return Err(format!(
            "{name} is older than {}: build it again (referee tournament FILE --build-only)",
            text::terminal_path(newer.strip_prefix(dir).unwrap_or(&newer))
        ));
    }
    Ok(())
}

/// A source file under `dir` modified after `built`, if any.
fn newest_source(dir: &Path, program: &Path, built: SystemTime) -> Option<PathBuf> {
    const OUTPUTS: [&str; 3] = ["target", "build", "__pycache__"];
    const OBJECTS: [&str; 3] = ["o", "class", "pyc"];
    let mut pending = vec![dir.to_owned()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if name.starts_with('.') || path == program {
                continue;
            }
            if kind.is_dir() {
                if !OUTPUTS.contains(&name.as_str()) {
                    pending.push(path);
                }
                continue;
            }
            let object = path
                .extension()
                .is_some_and(|x| OBJECTS.iter().any(|o| x == *o));
            let modified = entry.metadata().and_then(|m| m.modified());
            if kind.is_file() && !object && modified.is_ok_and(|m| m > built) {
                return Some(path);
            }
        }
    }
    None
}

/// Runs the build command in `job`'s directory (sandboxed, hiding what
/// it hides, when asked), saying so on stderr, with how long it took.
async fn make(job: &Job<'_>) -> Result<(), BuildError> {
    let &Job {
        dir,
        given,
        log,
        options,
        hide,
    } = job;
    let has_makefile = ["GNUmakefile", "makefile", "Makefile"]
        .iter()
        .any(|name| dir.join(name).is_file());
    if options.make != DEFAULT_MAKE || has_makefile {
        let cannot_run = |e: SpawnError| {
            let why = format!("cannot run `{}`: {e}", options.make);
            match e.is_referees() {
                true => BuildError::Referee(why),
                false => BuildError::Entrant(why),
            }
        };
        let spec = build_command(dir, options, hide);
        eprintln!(
            "referee: building {} with {} ...",
            text::terminal_path(given),
            options.make
        );
        let started = Instant::now();
        let completed = run_build(&spec, options.timeout, LOG_KEEP, options.sandbox)
            .await
            .map_err(cannot_run)?;
        let took = started.elapsed().as_secs_f64();
        if completed.success() {
            eprintln!(
                "referee: built {} in {took:.1}s",
                text::terminal_path(given)
            );
        } else {
            eprintln!(
                "referee: building {} failed after {took:.1}s",
                text::terminal_path(given)
            );
        }
        save_log(given, log, &completed, options);
        check_build(&completed, options).map_err(BuildError::Entrant)?;
    }
    Ok(())
}

/// The build command of `dir`: `sh -c MAKE` there (under bubblewrap when
/// sandboxed: see [`run_build`]).
fn build_command(dir: &Path, options: &BuildOptions, hide: &[PathBuf]) -> BotSpec {
    BotSpec {
        program: "sh".into(),
        args: vec![OsString::from("-c"), OsString::from(&options.make)],
        dir: Some(dir.to_owned()),
        hide: hide.to_vec(),
        env: build_environment(&options.env, options.sandbox),
    }
}

/// Waits for, and takes, the exclusive build lock of `dir`; the lock is
/// held until the returned value is dropped. `None` when the lock cannot be
/// had at all (the build then goes on without it, with a warning).
///
/// The lock is `flock` on the directory itself, opened read-only, rather
/// than a lock file under the temporary directory keyed by the canonical
/// path: nothing is ever written into the submission; the lock belongs to
/// the directory's inode, so every way of reaching the directory (symbolic
/// links, bind mounts, containers, users with different `TMPDIR`s) meets
/// the same lock; and the kernel releases it when the run ends, however it
/// ends (even `SIGKILL`), so no stale lock can ever block a later run. The
/// descriptor is close-on-exec: the build and the bots never inherit it.
/// On a file system without `flock` (some network file systems) the build
/// goes on unlocked; the atomic install of the reference Makefiles and this
/// run's private copy of `pc2` still protect the runs from each other.
async fn lock_dir(dir: &Path, given: &Path) -> Option<Flock<File>> {
    let unlocked = |e: &dyn std::fmt::Display| {
        eprintln!(
            "referee: cannot lock {} for its build ({e}); building without the lock",
            text::terminal_path(given)
        );
    };
    let mut file = match File::open(dir) {
        Ok(file) => file,
        Err(e) => {
            unlocked(&e);
            return None;
        }
    };
    let mut waiting = false;
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Some(lock),
            Err((again, Errno::EWOULDBLOCK)) => {
                if !waiting {
                    eprintln!(
                        "referee: waiting for another run to finish building {} ...",
                        text::terminal_path(given)
                    );
                    waiting = true;
                }
                file = again;
                // Polling, not a blocking flock on a thread of its own: the
                // other builds of this run go on meanwhile, and an interrupt
                // finds nothing stuck in the kernel.
                tokio::time::sleep(LOCK_POLL).await;
            }
            Err((_, e)) => {
                unlocked(&e);
                return None;
            }
        }
    }
}

/// The program to run for the `pc2` of `dir` (canonical) built by this
/// run: this run's private copy of it, or the directory's own where it is
/// a script or no copy could be taken. The bot runs in `dir` either way.
pub fn program(dir: &Path) -> PathBuf {
    Snapshots::of(dir).unwrap_or_else(|| dir.join(PROGRAM))
}

/// The directory whose `pc2` `program` is this run's copy of, if it is one
/// (see [`Snapshots`]): a league puts the program as built into the
/// version's copy, beside the sources it was built from.
pub fn copied_from(program: &std::ffi::OsStr) -> Option<PathBuf> {
    Snapshots::dir_of(Path::new(program))
}

/// `spec` as the submission gives it: a program that is this run's copy of
/// a directory's `pc2` is named as that directory's `pc2`. What identifies
/// an entrant (fingerprints, records) goes through this, so that it does
/// not depend on where a run keeps its copies.
pub fn as_submitted(spec: &BotSpec) -> BotSpec {
    let mut spec = spec.clone();
    // Nor on what its sandbox hides (where this run writes, say), nor on
    // its environment, which `--env NAME` may take from the machine.
    spec.hide.clear();
    spec.env = Environment::default();
    if let Some(dir) = copied_from(&spec.program) {
        spec.program = dir.join(PROGRAM).into_os_string();
    }
    spec
}

/// This run's private copies of the programs it built, in a directory of
/// its own (see [`RunDir`]), one subdirectory per copy so that each keeps
/// the name `pc2`.
///
/// A copy, not a hard link: a build that writes over `pc2` in place would
/// write into a hard link too.
struct Snapshots {
    dir: RunDir,
    next: AtomicUsize,
    /// (canonical directory, its copy of `pc2`), latest last.
    taken: Mutex<Vec<(PathBuf, PathBuf)>>,
}

static SNAPSHOTS: OnceLock<Result<Snapshots, String>> = OnceLock::new();

/// Removes this run's directories (see [`RunDir`]).
extern "C" fn remove_run_dirs() {
    if let Some(Ok(snapshots)) = SNAPSHOTS.get() {
        let _ = std::fs::remove_dir_all(&snapshots.dir.path);
    }
    if let Some(Ok(dir)) = BUILD_TMP.get() {
        let _ = std::fs::remove_dir_all(&dir.path);
    }
}

impl Snapshots {
    fn get() -> Result<&'static Snapshots, String> {
        SNAPSHOTS
            .get_or_init(Snapshots::create)
            .as_ref()
            .map_err(Clone::clone)
    }

    fn create() -> Result<Snapshots, String> {
        Ok(Snapshots {
            dir: RunDir::create(SNAPSHOTS_PREFIX)?,
            next: AtomicUsize::new(0),
            taken: Mutex::new(Vec::new()),
        })
    }

    /// Copies `built`, the `pc2` of `dir`, for this run.
    fn take(dir: &Path, built: &Path) -> Result<(), String> {
        // A sparse `pc2` of a terabyte takes no disk in its folder and
        // would fill the temporary one as a copy: none is taken of a
        // program that large (no real one is).
        let size = std::fs::metadata(built).map_or(0, |m| m.len());
        if size > MOST_COPIED_PROGRAM {
            return Err(format!(
                "it is {} (more than {}), too large to copy",
                crate::bot::usage::human_bytes(size),
                crate::bot::usage::human_bytes(MOST_COPIED_PROGRAM)
            ));
        }
        let snapshots = Snapshots::get()?;
        let n = snapshots.next.fetch_add(1, Ordering::Relaxed);
        let into = snapshots.dir.path.join(n.to_string());
        let copy = into.join(PROGRAM);
        std::fs::create_dir(&into)
            .and_then(|()| std::fs::copy(built, &copy))
            .map_err(|e| format!("{}: {e}", copy.display()))?;
        let mut taken = snapshots.taken.lock().unwrap_or_else(|e| e.into_inner());
        taken.push((dir.to_owned(), copy));
        Ok(())
    }

    /// The latest copy of `dir`'s `pc2`, if this run took one.
    fn of(dir: &Path) -> Option<PathBuf> {
        let snapshots = SNAPSHOTS.get()?.as_ref().ok()?;
        let taken = snapshots.taken.lock().unwrap_or_else(|e| e.into_inner());
        taken
            .iter()
            .rev()
            .find(|(d, _)| d == dir)
            .map(|(_, copy)| copy.clone())
    }

    /// The directory whose `pc2` `copy` is a copy of, if it is one.
    fn dir_of(copy: &Path) -> Option<PathBuf> {
        let snapshots = SNAPSHOTS.get()?.as_ref().ok()?;
        let taken = snapshots.taken.lock().unwrap_or_else(|e| e.into_inner());
        taken
            .iter()
            .find(|(_, c)| c == copy)
            .map(|(dir, _)| dir.clone())
    }
}

/// A directory of this run's own under the system's temporary directory
/// (mode 0700), named by a prefix, the pid and the time: this run's
/// copies of `pc2` ([`Snapshots`]), its builds' `TMPDIR`
/// ([`build_environment`]).
///
/// It is removed when the run ends, however it ends (see
/// [`crate::interrupt::adopt_own_dir`]: an interrupt too, once every
/// build and bot is killed; and by an `atexit` handler, for a process
/// that is not the referee's `main`, a test). To also clean up after
/// killed runs, each run holds a `flock` on its own directories while it
/// lives, and the first one a run makes of a kind removes every such
/// directory whose lock is free (its run is gone) and that is more than a
/// minute old (so that one just being created is left alone).
struct RunDir {
    path: PathBuf,
    /// Held until the process ends: the directory is in use.
    _alive: Flock<File>,
}

impl RunDir {
    fn create(prefix: &str) -> Result<RunDir, String> {
        use std::os::unix::fs::DirBuilderExt;
        let temp = std::env::temp_dir();
        sweep(&temp, prefix);
        let stamp = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let path = temp.join(format!("{prefix}{}-{stamp}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let alive = File::open(&path).map_err(|e| e.to_string()).and_then(|f| {
            Flock::lock(f, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| e.to_string())
        });
        let alive = match alive {
            Ok(alive) => alive,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&path);
                return Err(format!("{}: {e}", path.display()));
            }
        };
        crate::interrupt::adopt_own_dir(&path);
        static AT_EXIT: std::sync::Once = std::sync::Once::new();
        // SAFETY: registers a plain function with no arguments.
        AT_EXIT.call_once(|| unsafe {
            nix::libc::atexit(remove_run_dirs);
        });
        Ok(RunDir {
            path,
            _alive: alive,
        })
    }
}

/// Removes the directories named `prefix...` left in `temp` by runs that
/// are gone (see [`RunDir`]).
fn sweep(temp: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(prefix))
        {
            continue;
        }
        let path = entry.path();
        let old = std::fs::symlink_metadata(&path)
            .ok()
            .filter(|m| m.is_dir())
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(60));
        if !old {
            continue;
        }
        let Ok(file) = File::open(&path) else {
            continue;
        };
        if let Ok(_gone) = Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// The name of a run's directory for its builds' temporary files starts
/// with this, under the system's temporary directory.
const BUILD_TMP_PREFIX: &str = "referee-build-tmp-";

static BUILD_TMP: OnceLock<Result<RunDir, String>> = OnceLock::new();

/// The environment of a build with `env`: outside the sandbox (which has
/// a private `/tmp`), its `TMPDIR` is a directory of the run's own (see
/// [`RunDir`]), so that what a compiler killed mid-build leaves (an
/// interrupt kills it with `SIGKILL`) goes with the run. A `TMPDIR` that
/// `env` sets itself still wins. Where the directory cannot be made, the
/// build keeps the referee's temporary directory, with a warning.
pub fn build_environment(env: &Environment, sandbox: bool) -> Environment {
    if sandbox {
        return env.clone();
    }
    match BUILD_TMP.get_or_init(|| RunDir::create(BUILD_TMP_PREFIX)) {
        Ok(dir) => env.under(&[("TMPDIR".into(), dir.path.clone().into_os_string())]),
        Err(e) => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                eprintln!(
                    "referee: cannot make a temporary directory for the builds ({e}); \
                     they use {}",
                    std::env::temp_dir().display()
                );
            });
            env.clone()
        }
    }
}

fn check_build(completed: &Completed, options: &BuildOptions) -> Result<(), String> {
    if completed.success() {
        return Ok(());
    }
    let what = match (completed.memory_overrun, completed.ended) {
        (Some(overrun), _) => format!(
            "build failed: `{}` {overrun} (a build's limit): killed",
            options.make
        ),
        (None, None) => format!(
            "build timed out after {}",
            crate::units::human_duration(options.timeout)
        ),
        (None, Some(ended)) => format!("build failed: `{}` {ended}", options.make),
    };
    let mut message = what;
    // The first error is the one to fix (the later ones often follow from
    // it), and the tail alone starts in the middle of a diagnostic.
    if let Some(first) = first_error(completed) {
        message.push_str("\nfirst error: ");
        message.push_str(&text::cut(first, FIRST_ERROR_LONGEST));
    }
    let tail: Vec<&str> = completed.log.lines().rev().take(10).collect();
    if !tail.is_empty() {
        message.push_str("\nlast lines of the build log:");
        for line in tail.iter().rev() {
            message.push_str("\n  | ");
            message.push_str(line);
        }
    }
    Err(message)
}

/// The longest first error a build's message quotes (a C++ template's
/// can run to pages).
const FIRST_ERROR_LONGEST: usize = 500;

/// The compiler's first error in a build's log, trimmed: its first line
/// that reads like one ([`text::is_error_line`]), from the beginning of a
/// long log if it was kept.
fn first_error(completed: &Completed) -> Option<&str> {
    [&completed.log_head, &completed.log]
        .into_iter()
        .find_map(|log| log.lines().map(str::trim).find(|l| text::is_error_line(l)))
}

/// Writes the build's output to `LOGS/LOG.log`, after a line that says
/// whose build it was.
fn save_log(given: &Path, log: &str, completed: &Completed, options: &BuildOptions) {
    let Some(logs) = &options.logs else {
        return;
    };
    let path = logs.join(format!("{log}.log"));
    let contents = format!(
        "build of {} with {}\n{}",
        text::terminal_path(given),
        options.make,
        completed.log
    );
    let written = std::fs::create_dir_all(logs).and_then(|()| std::fs::write(&path, contents));
    if let Err(e) = written {
        eprintln!("referee: cannot save build log {}: {e}", path.display());
    }
}
