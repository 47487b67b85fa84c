//! Finding and starting a bot program, with errors that say exactly why a
//! program could not be started.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

use nix::sys::signal::{SigHandler, SigSet, Signal};
use nix::unistd::{AccessFlags, Pid, access};

use super::BotSpec;

/// Why a bot could not be started. Each case names the program.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("{}: no such file", .0.display())]
    NotFound(PathBuf),
    #[error("{0:?}: not found in the current directory or on PATH")]
    NotOnPath(OsString),
    #[error("{name:?}: not found in {} or on PATH", .dir.display())]
    NotBesideOrOnPath { name: OsString, dir: PathBuf },
    #[error("{}: is a directory, not a program", .0.display())]
    IsDirectory(PathBuf),
    #[error("{}: is not executable (mode {mode:o}); try `chmod +x`", .path.display())]
    NotExecutable { path: PathBuf, mode: u32 },
    #[error(
        "{}: its interpreter {interpreter:?} (from the #! line) does not exist{}",
        .path.display(),
        if .interpreter.ends_with('\r') { " (the script has Windows line endings)" } else { "" }
    )]
    MissingInterpreter { path: PathBuf, interpreter: String },
    #[error(
        "{}: cannot be run: the system lacks its program loader (built for another system?)",
        .0.display()
    )]
    MissingLoader(PathBuf),
    #[error(
        "{}: not a program this system can run (exec format error; a script needs a #! line)",
        .0.display()
    )]
    BadFormat(PathBuf),
    #[error("working directory {}: {source}", .dir.display())]
    BadDirectory { dir: PathBuf, source: io::Error },
    #[error("{}: cannot start: {source}", .path.display())]
    Other { path: PathBuf, source: io::Error },
    #[error("cannot make its cgroup: {0}")]
    Cgroup(io::Error),
    #[error("--sandbox cannot hide {}: {why}", .path.display())]
    CannotHide { path: PathBuf, why: String },
    #[error(
        "--sandbox runs bots under bubblewrap, but `bwrap` is not installed \
         (Debian and Ubuntu: apt-get install bubblewrap)"
    )]
    NoSandbox,
    #[error(
        "{}: a sandboxed build may write in its folder, and this folder is the whole \
         file system (/)",
        .0.display()
    )]
    RootFolder(PathBuf),
}

impl SpawnError {
    /// Whether the referee failed to start the program, not the program
    /// to start: its own descriptors, memory or processes ran out (making
    /// the pipes, the cgroup, the fork), or the bot's cgroup could not be
    /// made. A missing, unreadable or unrunnable program is the bot's.
    pub fn is_referees(&self) -> bool {
        match self {
            SpawnError::Cgroup(_) => true,
            SpawnError::Other { source, .. } | SpawnError::BadDirectory { source, .. } => {
                crate::outcome::is_referees_errno(source)
            }
            _ => false,
        }
    }

    /// How a program that could not be started is recorded: `internal`
    /// when the failure is the referee's, else `cannot_start`.
    pub fn verdict(&self) -> crate::outcome::Verdict {
        match self.is_referees() {
            true => crate::outcome::Verdict::of(crate::outcome::Status::Internal),
            false => crate::outcome::Verdict::of(crate::outcome::Status::CannotStart),
        }
    }

    /// The error a record gives for it: the referee's failure is said to
    /// be the referee's.
    pub fn recorded(&self) -> String {
        match self.is_referees() {
            true => format!(
                "the referee could not start it: {self} (the referee's own resources, \
                 not the bot's: the game is void)"
            ),
            false => format!("cannot start: {self}"),
        }
    }
}

/// Where a program named on the command line is. A name with a `/` is a
/// path (relative to the referee's working directory). A bare name is
/// looked for in the current directory first, as the statement's `dealer
/// evensteven` expects, and then on `PATH`, as a shell would. A bare name
/// found in both is used from the current directory, with a warning: a
/// `python3` there would otherwise silently stand in for the system's.
pub fn resolve(program: &OsStr) -> Result<PathBuf, SpawnError> {
    if let Some(path) = as_path(program)? {
        return Ok(path);
    }
    let here = Path::new(".").join(program);
    if !here.is_file() {
        let path = on_path(program).ok_or_else(|| SpawnError::NotOnPath(program.to_owned()))?;
        check_format(&path)?;
        return Ok(path);
    }
    let path = std::path::absolute(&here).unwrap_or(here);
    check_runnable(&path)?;
    if let Some(system) = on_path(program) {
        warn_shadowed(program, &path, &system);
    }
    Ok(path)
}

/// Where a program named in a file is (a judge in its game file, an
/// entrant in its tournament or ci file): a name with a `/` as given; a
/// bare name beside `dir` (the file's folder, or the entrant's), then on
/// `PATH`; never in the referee's current directory, which is wherever
/// the user ran it from.
pub fn resolve_beside(program: &OsStr, dir: &Path) -> Result<PathBuf, SpawnError> {
    if let Some(path) = as_path(program)? {
        return Ok(path);
    }
    let beside = dir.join(program);
    if beside.is_file() {
        let path = std::path::absolute(&beside).unwrap_or(beside);
        check_runnable(&path)?;
        return Ok(path);
    }
    let path = on_path(program).ok_or_else(|| SpawnError::NotBesideOrOnPath {
        name: program.to_owned(),
        dir: dir.to_owned(),
    })?;
    check_format(&path)?;
    Ok(path)
}

/// `program` as a path, checked, when it has a `/`.
fn as_path(program: &OsStr) -> Result<Option<PathBuf>, SpawnError> {
    if !program.as_encoded_bytes().contains(&b'/') {
        return Ok(None);
    }
    let as_path = Path::new(program);
    let path = std::path::absolute(as_path).map_err(|source| SpawnError::Other {
        path: as_path.to_owned(),
        source,
    })?;
    check_runnable(&path)?;
    Ok(Some(path))
}

/// The first executable file named `name` on `PATH`.
fn on_path(name: &OsStr) -> Option<PathBuf> {
    let search = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&search)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file() && access(candidate, AccessFlags::X_OK).is_ok())
}

/// Says, once per name in a run, that a program in the current directory
/// stands in for one on `PATH`.
fn warn_shadowed(name: &OsStr, used: &Path, system: &Path) {
    static WARNED: std::sync::Mutex<Vec<OsString>> = std::sync::Mutex::new(Vec::new());
    let mut warned = WARNED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if warned.iter().any(|n| n == name) {
        return;
    }
    warned.push(name.to_owned());
    tracing::warn!(
        "{}: the one in the current directory ({}) is used, not {} on PATH; \
         name it ./{} or by its full path to choose",
        crate::text::terminal(&name.to_string_lossy()),
        crate::text::terminal_path(used),
        crate::text::terminal_path(system),
        crate::text::terminal(&name.to_string_lossy()),
    );
}

/// What a sandboxed process may do with its own directories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A bot: its working directory and its program's directory, read-only.
    Bot,
    /// A build: its working directory (the entrant's folder), writable.
    Build,
}

/// `bwrap`, or why `--sandbox` cannot be had: checked before anything runs.
pub fn check_sandbox() -> Result<PathBuf, SpawnError> {
    resolve(OsStr::new("bwrap")).map_err(|_| SpawnError::NoSandbox)
}

/// The command line that runs `path` (resolved) with `spec`'s arguments,
/// in `spec`'s working directory, under bubblewrap:
///
/// - namespaces of its own: no network (not even the host's loopback), no
///   other process (its own `/proc`), its own IPC; no capabilities (a root
///   bot could otherwise unmount what hides a directory); a session of its
///   own (no terminal to type into); killed with its parent;
/// - the system read-only, with the host's services (`/run`: sockets of
///   daemons, which a read-only file system does not stop) hidden;
/// - a private `/tmp` and `/dev/shm` (and the temporary directory, where
///   the referee keeps its own files), each at most `tmp_size` bytes when
///   given (they are memory);
/// - each directory of `spec.hide` covered by an empty read-only directory;
/// - its own directories shown again on top: for a bot, its working
///   directory and its program's directory, read-only; for a build, its
///   working directory, writable.
///
/// bubblewrap mounts in order, a later mount on top of an earlier one, so
/// the mounts go in path order: a directory shown inside a hidden one
/// comes after it, and a hidden one inside a shown one after that.
pub fn sandboxed(
    path: &Path,
    spec: &BotSpec,
    access: Access,
    tmp_size: Option<u64>,
) -> Result<(PathBuf, Vec<OsString>), SpawnError> {
    let bwrap = check_sandbox()?;
    let dir = match &spec.dir {
        Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned()),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    };
    // A folder that leads to / would make the whole system writable.
    if access == Access::Build && std::fs::canonicalize(&dir).is_ok_and(|d| d == Path::new("/")) {
        return Err(SpawnError::RootFolder(dir));
    }
    let mounts = mounts(path, &dir, &spec.hide, access)?;
    let mut wrapped: Vec<OsString> = [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    let size = tmp_size.filter(|_| bwrap_has_size(&bwrap));
    wrapped.extend(mount_arguments(&mounts, size));
    wrapped.push("--chdir".into());
    wrapped.push(dir.into_os_string());
    let command = std::iter::once(path.as_os_str().to_owned()).chain(spec.args.iter().cloned());
    // Through the launcher, bubblewrap is started by `__sandbox` (see
    // [`sandbox_main`]); without one (the library's unit tests) it holds
    // the pipes and shows its arguments, as it would on its own.
    let Some(launcher) = LAUNCHER.get() else {
        wrapped.push("--".into());
        wrapped.extend(command);
        return Ok((bwrap, wrapped));
    };
    let mut args: Vec<OsString> = vec![SANDBOX_COMMAND.into(), bwrap.into_os_string()];
    args.extend(wrapped);
    args.push("--".into());
    args.extend(command);
    Ok((launcher.clone(), args))
}

/// The hidden subcommand that starts bubblewrap for a sandboxed process:
/// `LAUNCHER __sandbox BWRAP OPTIONS... -- PROGRAM ARGS...`, run by the
/// launcher once the process is ready (see [`sandbox_main`]).
pub const SANDBOX_COMMAND: &str = "__sandbox";

/// Where the program's standard input and output wait, inside the sandbox,
/// until [`SHIM`] puts them in place.
const INNER_STDIN: i32 = 3;
const INNER_STDOUT: i32 = 4;
/// Where bubblewrap reads its options (`--args`); closed by [`SHIM`]
/// should bubblewrap leave it open, so that a bot has 0, 1 and 2 only.
const INNER_ARGS: i32 = 5;

/// Run by `/bin/sh` inside the sandbox, as `sh -c SHIM PROGRAM ARGS...`:
/// gives the program its standard input and output, and becomes it.
const SHIM: &str = "exec 0<&3 1>&4 3<&- 4>&- 5<&-; exec \"$0\" \"$@\"";

/// `LAUNCHER __sandbox BWRAP OPTIONS... -- PROGRAM ARGS...`: becomes
/// bubblewrap, such that
///
/// - bubblewrap's own standard input and output are `/dev/null`, and the
///   program's (the game's pipes) reach it as other descriptors, which
///   bubblewrap's two waiting processes close (its standard ones they
///   keep for as long as the sandbox lives). Otherwise a bot that closes
///   its output and keeps running is never seen to have closed it: it
///   would starve under `--sandbox` where it crashes without;
/// - bubblewrap reads OPTIONS from a pipe (`--args`): its command line,
///   which the sandbox's own processes see as `/proc/1/cmdline`, would
///   otherwise name every directory it hides (other entrants' folders).
///
/// Standard error stays bubblewrap's, for its own errors. A failure is
/// said on standard error (the bot's), with status 127.
pub fn sandbox_main() -> ! {
    let args: Vec<OsString> = std::env::args_os().skip(2).collect();
    let error = match enter_sandbox(&args) {
        Ok(never) => match never {},
        Err(error) => error,
    };
    eprintln!("referee: cannot start the sandbox: {error}");
    std::process::exit(127);
}

fn enter_sandbox(args: &[OsString]) -> Result<std::convert::Infallible, String> {
    use std::os::unix::ffi::OsStrExt;
    let usage = || format!("usage: referee {SANDBOX_COMMAND} BWRAP OPTIONS... -- PROGRAM ARGS...");
    let (bwrap, rest) = args.split_first().ok_or_else(usage)?;
    let separator = rest.iter().position(|a| a == "--").ok_or_else(usage)?;
    let (options, command) = (&rest[..separator], &rest[separator + 1..]);
    if command.is_empty() {
        return Err(usage());
    }
    fn at(what: &str) -> impl Fn(nix::Error) -> String + '_ {
        move |e| format!("{what}: {e}")
    }
    // SAFETY: the launcher starts with descriptors 0, 1 and 2 only (it
    // became this through `prepare_bot`, which marks every other one
    // close-on-exec), so 3, 4 and 5 have no other owner.
    let inner = unsafe {
        (
            nix::unistd::dup2_raw(io::stdin(), INNER_STDIN).map_err(at("standard input"))?,
            nix::unistd::dup2_raw(io::stdout(), INNER_STDOUT).map_err(at("standard output"))?,
        )
    };
    // Left open (`dup2` made them so across `exec`) for bubblewrap.
    std::mem::forget(inner);
    use nix::fcntl::{OFlag, open};
    let null = open(
        "/dev/null",
        OFlag::O_RDWR | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(at("/dev/null"))?;
    nix::unistd::dup2_stdin(&null).map_err(at("/dev/null"))?;
    nix::unistd::dup2_stdout(&null).map_err(at("/dev/null"))?;
    drop(null);
    let mut argv: Vec<OsString> = vec!["bwrap".into()];
    match options_pipe(options) {
        Some(fd) => argv.extend(["--args".into(), fd.to_string().into()]),
        // Too many to wait in a pipe: on the command line, as before.
        None => argv.extend(options.iter().cloned()),
    }
    argv.extend(["--".into(), "/bin/sh".into(), "-c".into(), SHIM.into()]);
    argv.extend(command.iter().cloned());
    let c_strings: Vec<std::ffi::CString> = std::iter::once(bwrap)
        .chain(&argv)
        .map(|a| std::ffi::CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let errno = match nix::unistd::execv(&c_strings[0], &c_strings[1..]) {
        Ok(never) => match never {},
        Err(errno) => errno,
    };
    Err(format!("{}: {errno}", Path::new(bwrap).display()))
}

/// A pipe holding `options`, each ended by a NUL, as bubblewrap's
/// `--args` reads them; its reading end's number, left open across
/// `exec`. `None` when they do not fit in a pipe (bubblewrap reads them
/// only after `exec`, and no process is left to write more).
fn options_pipe(options: &[OsString]) -> Option<i32> {
    use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};
    use std::os::fd::IntoRawFd;
    use std::os::unix::ffi::OsStrExt;
    let mut data = Vec::new();
    for option in options {
        data.extend_from_slice(option.as_bytes());
        data.push(0);
    }
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK).ok()?;
    // A pipe holds 64 KiB unless asked for more (up to
    // /proc/sys/fs/pipe-max-size, 1 MiB by default).
    if data.len() > 64 * 1024 {
        let _ = fcntl(&write, FcntlArg::F_SETPIPE_SZ(data.len().try_into().ok()?));
    }
    let mut rest = data.as_slice();
    while !rest.is_empty() {
        let n = nix::unistd::write(&write, rest).ok()?;
        rest = &rest[n..];
    }
    drop(write);
    use std::os::fd::AsRawFd;
    let read = if read.as_raw_fd() == INNER_ARGS {
        read
    } else {
        // SAFETY: INNER_ARGS has no other owner (see `enter_sandbox`).
        unsafe { nix::unistd::dup2_raw(&read, INNER_ARGS) }.ok()?
    };
    fcntl(&read, FcntlArg::F_SETFD(FdFlag::empty())).ok()?;
    fcntl(&read, FcntlArg::F_SETFL(OFlag::empty())).ok()?;
    Some(read.into_raw_fd())
}

/// One mount of the sandbox, over the read-only system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mount {
    /// An empty directory, read-only once what is shown inside is there.
    Cover,
    /// A file hidden by an empty one (`/dev/null`, read-only).
    Blank,
    /// A private writable directory (memory).
    Private,
    /// The host's directory, shown again.
    Show { writable: bool },
}

/// The sandbox's mounts, in the order they are made: by path, parents
/// first; on one path, a directory shown after it is covered, so that a
/// process's own directory is never hidden from it.
fn mounts(
    path: &Path,
    dir: &Path,
    hide: &[PathBuf],
    access: Access,
) -> Result<Vec<(PathBuf, Mount)>, SpawnError> {
    let temp = std::env::temp_dir();
    let mut mounts: Vec<(PathBuf, Mount)> = vec![
        (PathBuf::from("/tmp"), Mount::Private),
        (PathBuf::from("/dev/shm"), Mount::Private),
    ];
    if !temp.starts_with("/tmp") && temp.is_dir() {
        mounts.push((temp, Mount::Private));
    }
    for h in hide.iter().map(PathBuf::as_path).chain([Path::new("/run")]) {
        mounts.extend(hidden_mount(h)?);
    }
    let own: Vec<PathBuf> = match access {
        Access::Build => vec![dir.to_owned()],
        Access::Bot => [Some(dir.to_owned()), path.parent().map(Path::to_owned)]
            .into_iter()
            .flatten()
            .collect(),
    };
    let writable = access == Access::Build;
    for d in own {
        let d = std::fs::canonicalize(&d).unwrap_or(d);
        // A read-only directory that nothing covers is seen as it is.
        let hidden = mounts.iter().any(|(m, _)| d.starts_with(m));
        if writable || hidden {
            mounts.push((d, Mount::Show { writable }));
        }
    }
    // A directory shown replaces its cover (whose later `--remount-ro`
    // would otherwise hit what is shown there).
    let shown: Vec<PathBuf> = mounts
        .iter()
        .filter(|(_, m)| matches!(m, Mount::Show { .. }))
        .map(|(p, _)| p.clone())
        .collect();
    mounts.retain(|(p, m)| *m != Mount::Cover || !shown.contains(p));
    mounts.sort();
    mounts.dedup();
    // A cover inside a covered directory, with nothing shown between,
    // hides nothing more; and every mount point is listed in the sandbox's
    // /proc/self/mountinfo: those of other entrants' folders (inside the
    // tournament's, which is hidden) would name them. (Inside a private
    // directory a cover stays: it is read-only, the private one is not.)
    // A file hidden inside a covered or private directory is not there to
    // be seen (and has no mount point there).
    let redundant: Vec<bool> = mounts
        .iter()
        .map(|(p, m)| {
            let around = mounts
                .iter()
                .filter(|(q, _)| q != p && p.starts_with(q))
                .max_by_key(|(q, _)| q.as_os_str().len())
                .map(|(_, around)| *around);
            match m {
                Mount::Cover => around == Some(Mount::Cover),
                Mount::Blank => matches!(around, Some(Mount::Cover | Mount::Private)),
                _ => false,
            }
        })
        .collect();
    let mut redundant = redundant.into_iter();
    mounts.retain(|_| !redundant.next().unwrap_or(false));
    Ok(mounts)
}

/// Whether the sandbox can hide each of `paths`: checked before a run
/// starts anything, so that a path it cannot hide stops the run with its
/// name rather than failing each bot.
pub fn check_hidden(paths: &[PathBuf]) -> Result<(), SpawnError> {
    paths.iter().try_for_each(|p| hidden_mount(p).map(|_| ()))
}

/// How the sandbox hides `path`: a directory under an empty one, a file
/// (or a socket, a pipe) under an empty file; nothing for a path that does
/// not exist (yet: it is hidden by the next bot's sandbox once it does)
/// or for the root. Symbolic links are followed here, since bubblewrap
/// would follow them inside the sandbox. A path that cannot be looked at
/// is an error that names it: a sandbox never silently shows what it was
/// asked to hide.
fn hidden_mount(path: &Path) -> Result<Option<(PathBuf, Mount)>, SpawnError> {
    let cannot = |why: String| SpawnError::CannotHide {
        path: path.to_owned(),
        why,
    };
    if !path.is_absolute() {
        return Err(cannot("not an absolute path".into()));
    }
    let real = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot(e.to_string())),
    };
    if real == Path::new("/") {
        return Ok(None);
    }
    let kind = match real.is_dir() {
        true => Mount::Cover,
        false => Mount::Blank,
    };
    Ok(Some((real, kind)))
}

/// bubblewrap's arguments for `mounts` (in order), then the covers made
/// read-only (only the covers themselves: what is shown inside them keeps
/// its own access).
fn mount_arguments(mounts: &[(PathBuf, Mount)], size: Option<u64>) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    for (path, mount) in mounts {
        let path = path.as_os_str().to_owned();
        match mount {
            Mount::Cover => args.extend(["--tmpfs".into(), path]),
            Mount::Blank => args.extend(["--ro-bind".into(), "/dev/null".into(), path]),
            Mount::Private => {
                if let Some(size) = size {
                    args.extend(["--size".into(), size.to_string().into()]);
                }
                args.extend(["--tmpfs".into(), path]);
            }
            Mount::Show { writable } => {
                let how = if *writable { "--bind" } else { "--ro-bind" };
                args.extend([how.into(), path.clone(), path]);
            }
        }
    }
    for (path, mount) in mounts {
        if *mount == Mount::Cover {
            args.extend(["--remount-ro".into(), path.as_os_str().to_owned()]);
        }
    }
    args
}

/// Whether this bubblewrap takes `--size` (0.7.0 and later; Debian 12 has
/// 0.8.0). Without it a private directory is as large as the kernel's
/// default for tmpfs, half the memory; asked once per run.
fn bwrap_has_size(bwrap: &Path) -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        let has = std::process::Command::new(bwrap)
            .arg("--help")
            .stdin(Stdio::null())
            .output()
            .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("--size"));
        if !has {
            tracing::warn!(
                "this bubblewrap has no --size: a sandbox's private /tmp and /dev/shm are not bounded"
            );
        }
        has
    })
}

/// Checks what can be checked before `exec`, for precise messages.
fn check_runnable(path: &Path) -> Result<(), SpawnError> {
    let meta = std::fs::metadata(path).map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => SpawnError::NotFound(path.to_owned()),
        _ => SpawnError::Other {
            path: path.to_owned(),
            source,
        },
    })?;
    if meta.is_dir() {
        return Err(SpawnError::IsDirectory(path.to_owned()));
    }
    if access(path, AccessFlags::X_OK).is_err() {
        return Err(SpawnError::NotExecutable {
            path: path.to_owned(),
            mode: meta.permissions().mode() & 0o7777,
        });
    }
    check_format(path)
}

/// What `exec` would refuse in the program's first bytes: a `#!`
/// interpreter or an ELF program loader that does not exist, or a file that
/// is neither a script nor a program. Checked before starting, since a bot
/// started through the launcher learns of a failed `exec` only from its
/// standard error. A file that cannot be read (mode 111) is left to `exec`.
fn check_format(path: &Path) -> Result<(), SpawnError> {
    let Some(head) = read_head(path) else {
        return Ok(());
    };
    if head.starts_with(b"#!") {
        return match shebang_of(&head) {
            Some(interpreter)
                if interpreter.starts_with('/') && !Path::new(&interpreter).exists() =>
            {
                Err(SpawnError::MissingInterpreter {
                    path: path.to_owned(),
                    interpreter,
                })
            }
            _ => Ok(()),
        };
    }
    if head.starts_with(b"\x7fELF") {
        return match elf_loader(&head) {
            Some(loader) if !Path::new(&loader).exists() => {
                Err(SpawnError::MissingLoader(path.to_owned()))
            }
            _ => Ok(()),
        };
    }
    if binfmt_misc_in_use() {
        // The kernel may know this format (a registered interpreter).
        return Ok(());
    }
    Err(SpawnError::BadFormat(path.to_owned()))
}

/// The first 4 KiB of a file (enough for a `#!` line and an ELF program's
/// headers), if it can be read.
fn read_head(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_end(&mut head)
        .ok()?;
    Some(head)
}

/// The program loader an ELF program names (its `PT_INTERP`), when its
/// headers lie within `head`; `None` for a static program.
fn elf_loader(head: &[u8]) -> Option<String> {
    let wide = *head.get(4)? == 2;
    let little = *head.get(5)? == 1;
    let number = |at: usize, size: usize| -> Option<u64> {
        let bytes = head.get(at..at.checked_add(size)?)?;
        let mut value = 0u64;
        for i in 0..size {
            let byte = if little {
                bytes[size - 1 - i]
            } else {
                bytes[i]
            };
            value = value << 8 | u64::from(byte);
        }
        Some(value)
    };
    // ELF header fields (offset, size) for 64- and 32-bit programs.
    let (phoff, entsize, count) = if wide {
        (number(0x20, 8)?, number(0x36, 2)?, number(0x38, 2)?)
    } else {
        (number(0x1c, 4)?, number(0x2a, 2)?, number(0x2c, 2)?)
    };
    const PT_INTERP: u64 = 3;
    for i in 0..count {
        let header = usize::try_from(phoff.checked_add(i.checked_mul(entsize)?)?).ok()?;
        if number(header, 4)? != PT_INTERP {
            continue;
        }
        let (offset, size) = if wide {
            (number(header + 8, 8)?, number(header + 32, 8)?)
        } else {
            (number(header + 4, 4)?, number(header + 16, 4)?)
        };
        let start = usize::try_from(offset).ok()?;
        let name = head.get(start..start.checked_add(usize::try_from(size).ok()?)?)?;
        let name = name.split(|&b| b == 0).next()?;
        return Some(String::from_utf8_lossy(name).into_owned());
    }
    None
}

/// Whether the kernel has formats registered beyond its own (binfmt_misc:
/// Java archives, other machines' programs through an emulator), which
/// make a file that is neither script nor ELF runnable all the same.
fn binfmt_misc_in_use() -> bool {
    static IN_USE: OnceLock<bool> = OnceLock::new();
    *IN_USE.get_or_init(|| {
        std::fs::read_dir("/proc/sys/fs/binfmt_misc").is_ok_and(|entries| {
            entries.flatten().any(|entry| {
                let name = entry.file_name();
                name != "register" && name != "status"
            })
        })
    })
}

/// The launcher's first argument: `referee-launch __launch PID LIMITS --
/// PROGRAM ARGS...`, or the same hidden subcommand of the referee's own
/// binary (see [`launch_main`]).
pub const LAUNCH_COMMAND: &str = "__launch";

/// The program run as `LAUNCHER __launch ...` to start bots, when set.
static LAUNCHER: OnceLock<PathBuf> = OnceLock::new();

/// Starts every bot and build from now on through `launcher`
/// (`referee-launch`, or the referee's own binary, which handles
/// [`LAUNCH_COMMAND`] first thing in `main`).
///
/// Why: a bot started by `fork` copies the referee's page tables, whose
/// cost grows with the referee's memory: late in a long tournament each
/// start took ten times as long, and the bots' clocks ran while the
/// referee stalled. `posix_spawn` (which the standard library uses when
/// no code has to run between fork and exec) costs the same at any size;
/// the launcher then does in a small fresh process what used to run
/// between fork and exec. Without a launcher (the library's unit tests),
/// bots are forked.
pub fn use_launcher(launcher: PathBuf) {
    let _ = LAUNCHER.set(launcher);
}

/// The launcher set by [`use_launcher`].
pub(crate) fn launcher() -> Option<&'static Path> {
    LAUNCHER.get().map(PathBuf::as_path)
}

/// What a bot is started inside, besides its resource limits: its cgroup,
/// and an IPC namespace and a `/dev/shm` of its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Enclosure {
    /// The files of its cgroup it writes itself to (one per v1
    /// hierarchy; [`super::cgroup::Cgroup::entry_files`]): it enters them
    /// before it becomes the program, so that everything it ever does is
    /// charged there.
    pub cgroup_entry: Vec<PathBuf>,
    /// Its own IPC namespace (SysV segments, message queues) and a private
    /// `/dev/shm` of at most this many bytes (`0`: the kernel's default,
    /// half the memory), both gone with it. Root only (see
    /// [`super::cgroup::private_ipc_available`]).
    pub private_ipc: Option<u64>,
}

impl Enclosure {
    /// The launcher's arguments for it, after the limits.
    fn to_args(&self) -> Vec<OsString> {
        let mut args = Vec::new();
        for file in &self.cgroup_entry {
            args.push("--cgroup".into());
            args.push(file.clone().into_os_string());
        }
        if let Some(size) = self.private_ipc {
            args.push("--private-ipc".into());
            args.push(size.to_string().into());
        }
        args
    }

    /// The enclosure from [`Enclosure::to_args`]'s arguments.
    fn from_args(args: &[OsString]) -> Option<Enclosure> {
        let mut enclosure = Enclosure::default();
        let mut args = args.iter();
        while let Some(option) = args.next() {
            let value = args.next()?;
            match option.to_str()? {
                "--cgroup" => enclosure.cgroup_entry.push(PathBuf::from(value)),
                "--private-ipc" => enclosure.private_ipc = Some(value.to_str()?.parse().ok()?),
                _ => return None,
            }
        }
        Some(enclosure)
    }

    /// Its paths and mount options as C strings, made before a fork: the
    /// child may not allocate.
    fn prepare(&self) -> io::Result<PreparedEnclosure> {
        use std::os::unix::ffi::OsStrExt;
        let c = |bytes: &[u8]| {
            std::ffi::CString::new(bytes)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
        };
        Ok(PreparedEnclosure {
            cgroup_entry: self
                .cgroup_entry
                .iter()
                .map(|p| c(p.as_os_str().as_bytes()))
                .collect::<io::Result<_>>()?,
            shm_options: self
                .private_ipc
                .map(|size| match size {
                    0 => c(b"mode=1777"),
                    n => c(format!("mode=1777,size={n}").as_bytes()),
                })
                .transpose()?,
        })
    }
}

/// An [`Enclosure`] ready to be entered between fork and exec.
#[derive(Default)]
struct PreparedEnclosure {
    cgroup_entry: Vec<std::ffi::CString>,
    shm_options: Option<std::ffi::CString>,
}

impl PreparedEnclosure {
    /// Enters the cgroup, then the namespaces. Only raw system calls.
    fn enter(&self) -> nix::Result<()> {
        use nix::libc;
        for file in &self.cgroup_entry {
            // SAFETY: a valid C string; the fd is closed before returning.
            let fd = unsafe { libc::open(file.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
            if fd < 0 {
                return Err(nix::errno::Errno::last());
            }
            // "0" is the writer itself (see `Cgroup::entry_files`).
            // SAFETY: writes from a live buffer of the given length.
            let written = unsafe { libc::write(fd, c"0".as_ptr().cast(), 1) };
            let error = nix::errno::Errno::last();
            // SAFETY: closes the fd opened above.
            unsafe { libc::close(fd) };
            if written < 0 {
                return Err(error);
            }
        }
        if let Some(options) = &self.shm_options {
            nix::sched::unshare(
                nix::sched::CloneFlags::CLONE_NEWIPC | nix::sched::CloneFlags::CLONE_NEWNS,
            )?;
            // Mounts made from here stay in this namespace.
            // SAFETY: valid C strings or null, as mount(2) takes them.
            let private = unsafe {
                libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                )
            };
            nix::errno::Errno::result(private)?;
            // SAFETY: as above.
            let shm = unsafe {
                libc::mount(
                    c"tmpfs".as_ptr(),
                    c"/dev/shm".as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    options.as_ptr().cast(),
                )
            };
            nix::errno::Errno::result(shm)?;
        }
        Ok(())
    }
}

/// Builds the command for a bot: its own process group, piped stdio, and a
/// parent-death signal so that it dies with the referee even when the
/// referee is killed with SIGKILL; it enters `enclosure` before it becomes
/// the program; the environment `env`, or the referee's own when `None`
/// (see [`super::environment`]).
pub(crate) fn command(
    path: &Path,
    args: &[OsString],
    dir: Option<&Path>,
    resources: super::Resources,
    enclosure: &Enclosure,
    env: Option<super::environment::Vars>,
) -> Result<tokio::process::Command, SpawnError> {
    let mut cmd = match LAUNCHER.get() {
        Some(launcher) => {
            let mut cmd = tokio::process::Command::new(launcher);
            cmd.arg(LAUNCH_COMMAND)
                .arg(std::process::id().to_string())
                .args(resources.to_args())
                .args(enclosure.to_args())
                .arg("--")
                .arg(path)
                .args(args);
            cmd
        }
        None => {
            let prepared = enclosure.prepare().map_err(|source| SpawnError::Other {
                path: path.to_owned(),
                source,
            })?;
            forked(path, args, resources, prepared)
        }
    };
    piped(&mut cmd);
    // The launcher passes its own environment on to the bot with exec.
    if let Some(vars) = env {
        cmd.env_clear().envs(vars);
    }
    if let Some(dir) = dir {
        check_directory(dir)?;
        cmd.current_dir(dir);
    }
    Ok(cmd)
}

/// What every bot process starts with: its standard streams piped to the
/// referee, a process group of its own, and death with its handle.
fn piped(cmd: &mut tokio::process::Command) {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
}

/// A bot's working directory, checked before it is started in it.
fn check_directory(dir: &Path) -> Result<(), SpawnError> {
    std::fs::read_dir(dir)
        .map(drop)
        .map_err(|source| SpawnError::BadDirectory {
            dir: dir.to_owned(),
            source,
        })
}

/// The command for a launcher on standby (see [`super::standby`]): it
/// enters `enclosure` at once, then waits for the program to become on its
/// standard input (see [`instruction`]). `None` without a launcher.
pub(crate) fn standby_command(enclosure: &Enclosure) -> Option<tokio::process::Command> {
    let launcher = LAUNCHER.get()?;
    let mut cmd = tokio::process::Command::new(launcher);
    cmd.arg(LAUNCH_COMMAND)
        .arg(std::process::id().to_string())
        .arg(STANDBY)
        .args(enclosure.to_args());
    piped(&mut cmd);
    Some(cmd)
}

/// The launcher's option that puts it on standby.
const STANDBY: &str = "--standby";

/// Longest instruction sent to a launcher on standby: it must fit in the
/// empty pipe at once (Linux's holds 64 KiB), since the referee does not
/// wait to write it. A longer one (a huge environment) starts a launcher
/// of its own.
const MOST_INSTRUCTION: usize = 60 << 10;

/// What a launcher on standby is told to become: its length (4 bytes,
/// little-endian), then NUL-terminated fields: the limits as
/// [`super::Resources::to_args`] gives them, `--dir DIR`, `--env NAME=VALUE`
/// for each variable of a clean environment (`--env-clear` first), `--`,
/// the program and its arguments. `None` when it would be too long.
pub(crate) fn instruction(
    path: &Path,
    args: &[OsString],
    dir: Option<&Path>,
    resources: super::Resources,
    env: Option<&super::environment::Vars>,
) -> Result<Option<Vec<u8>>, SpawnError> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut fields: Vec<OsString> = resources.to_args().into_iter().map(Into::into).collect();
    if let Some(dir) = dir {
        check_directory(dir)?;
        fields.extend(["--dir".into(), dir.as_os_str().to_owned()]);
    }
    if let Some(vars) = env {
        fields.push("--env-clear".into());
        for (name, value) in vars {
            let mut pair = name.clone();
            pair.push("=");
            pair.push(value);
            fields.extend(["--env".into(), pair]);
        }
    }
    fields.push("--".into());
    fields.push(path.as_os_str().to_owned());
    fields.extend(args.iter().cloned());
    if fields.iter().any(|f| f.as_bytes().contains(&0)) {
        return Ok(None);
    }
    let mut body = Vec::new();
    for field in fields {
        body.extend(field.into_vec());
        body.push(0);
    }
    if body.len() + 4 > MOST_INSTRUCTION {
        return Ok(None);
    }
    let mut message = (body.len() as u32).to_le_bytes().to_vec();
    message.extend(body);
    Ok(Some(message))
}

/// The command that forks the referee and prepares the bot in the child,
/// between fork and exec.
fn forked(
    path: &Path,
    args: &[OsString],
    resources: super::Resources,
    enclosure: PreparedEnclosure,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(path);
    cmd.args(args);
    let referee = Pid::this();
    // SAFETY: the closure runs in the forked child before exec and only makes
    // raw system calls (open, write, unshare, mount, sigprocmask, sigaction,
    // setrlimit, prctl, getppid, _exit): no allocation, no locks.
    unsafe {
        cmd.pre_exec(move || {
            prepare_bot(resources, referee, &enclosure)?;
            Ok(())
        });
    }
    cmd
}

/// Readies the calling process to become a bot: what a bot must start
/// with, whichever way it is started. Only raw system calls, so that it
/// may run between fork and exec.
fn prepare_bot(
    resources: super::Resources,
    referee: Pid,
    enclosure: &PreparedEnclosure,
) -> nix::Result<()> {
    // First, so that all it does from here is charged to its cgroup.
    enclosure.enter()?;
    // With descriptors 0, 1 and 2 only, whatever its caller left open.
    super::descriptors::close_inherited_on_exec()?;
    // A bot starts with every signal deliverable and default handling,
    // whatever the referee blocked (its signal thread blocks SIGINT,
    // SIGTERM and SIGHUP) or inherited as ignored (nohup, background jobs;
    // Rust ignores SIGPIPE): the grace-then-SIGTERM shutdown depends on it.
    SigSet::empty().thread_set_mask()?;
    for signal in [
        Signal::SIGHUP,
        Signal::SIGINT,
        Signal::SIGQUIT,
        Signal::SIGTERM,
        Signal::SIGPIPE,
    ] {
        // SAFETY: setting the default disposition installs no handler.
        unsafe { nix::sys::signal::signal(signal, SigHandler::SigDfl)? };
    }
    use nix::sys::resource::{Resource, setrlimit};
    for (resource, limit) in [
        (Resource::RLIMIT_AS, resources.address_space),
        (Resource::RLIMIT_FSIZE, resources.file_size),
        (Resource::RLIMIT_NOFILE, resources.open_files),
        (Resource::RLIMIT_CPU, resources.cpu_seconds),
    ] {
        if let Some(limit) = limit {
            // At the soft CPU limit the kernel sends SIGXCPU; at the hard
            // one SIGKILL, which would hide which limit it was. A second
            // more of hard limit lets SIGXCPU (fatal by default) name it,
            // and still stops a bot that catches it.
            let hard = if resource == Resource::RLIMIT_CPU {
                limit.saturating_add(1)
            } else {
                limit
            };
            // Never above the referee's own hard limit, which only root
            // may raise: a default (1024 descriptors) over a lower one
            // would fail every bot's start, the referee's shortage charged
            // to the bot. An option above it was refused at start.
            let (_, most) = nix::sys::resource::getrlimit(resource)?;
            let hard = hard.min(most);
            setrlimit(resource, limit.min(hard), hard)?;
        }
    }
    // PR_SET_PDEATHSIG is tied to the thread that starts the process. Bots
    // are spawned from the runtime's long-lived threads, never from a
    // blocking-pool thread that could exit early. It survives exec.
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
    // The referee may have died before prctl; then no signal would ever
    // come.
    if nix::unistd::getppid() != referee {
        // SAFETY: _exit ends the process at once, as between fork and exec.
        unsafe { nix::libc::_exit(1) };
    }
    Ok(())
}

/// `referee-launch __launch PID LIMITS -- PROGRAM ARGS...`: readies this process
/// as [`prepare_bot`] does and becomes PROGRAM. The referee checked that
/// PROGRAM can be run before starting this; should `exec` fail all the
/// same (the file changed since), the reason goes to standard error, which
/// the referee keeps as the bot's, and the status is 127, as a shell's.
pub fn launch_main() -> ! {
    let args: Vec<OsString> = std::env::args_os().skip(2).collect();
    let error = match launch(&args) {
        Ok(never) => match never {},
        Err(error) => error,
    };
    eprintln!("referee: cannot start the bot: {error}");
    std::process::exit(127);
}

fn launch(args: &[OsString]) -> Result<std::convert::Infallible, String> {
    let usage = || {
        format!(
            "usage: referee {LAUNCH_COMMAND} PID LIMITS [--cgroup FILE]... [--private-ipc SIZE] -- PROGRAM ARGS...\n\
             \x20      referee {LAUNCH_COMMAND} PID {STANDBY} [--cgroup FILE]... [--private-ipc SIZE]"
        )
    };
    let (referee, rest) = args.split_first().ok_or_else(usage)?;
    let referee: i32 = referee
        .to_str()
        .and_then(|p| p.parse().ok())
        .ok_or_else(usage)?;
    if rest.first().is_some_and(|a| a == STANDBY) {
        let enclosure = Enclosure::from_args(&rest[1..]).ok_or_else(usage)?;
        return stand_by(Pid::from_raw(referee), &enclosure);
    }
    let separator = rest.iter().position(|a| a == "--").ok_or_else(usage)?;
    let (limits, enclosure) = rest[..separator].split_at(5.min(separator));
    let resources = super::Resources::from_args(limits).ok_or_else(usage)?;
    let enclosure = Enclosure::from_args(enclosure)
        .ok_or_else(usage)?
        .prepare()
        .map_err(|e| e.to_string())?;
    let command = &rest[separator + 1..];
    if command.is_empty() {
        return Err(usage());
    }
    become_bot(resources, Pid::from_raw(referee), &enclosure, command, None)
}

/// Readies this process as [`prepare_bot`] does and becomes `command`
/// (with the environment `env`, else its own); the reason when it cannot.
fn become_bot(
    resources: super::Resources,
    referee: Pid,
    enclosure: &PreparedEnclosure,
    command: &[OsString],
    env: Option<&[std::ffi::CString]>,
) -> Result<std::convert::Infallible, String> {
    let argv: Vec<std::ffi::CString> = command.iter().map(c_string).collect::<Result<_, _>>()?;
    prepare_bot(resources, referee, enclosure).map_err(|e| e.to_string())?;
    let result = match env {
        Some(env) => nix::unistd::execve(&argv[0], &argv, env),
        None => nix::unistd::execv(&argv[0], &argv),
    };
    let errno = match result {
        Ok(never) => match never {},
        Err(errno) => errno,
    };
    Err(classify(Path::new(&command[0]), io::Error::from(errno)).to_string())
}

/// A launcher on standby: enters `enclosure` now (the slow part of a
/// start: the kernel's cgroup migration and the namespaces), then waits
/// for its [`instruction`] and becomes the program as [`launch`] does. A
/// closed standard input before it is the referee's "not needed": it
/// exits quietly.
fn stand_by(referee: Pid, enclosure: &Enclosure) -> Result<std::convert::Infallible, String> {
    let prepared = enclosure.prepare().map_err(|e| e.to_string())?;
    prepared.enter().map_err(|e| e.to_string())?;
    // Until the instruction comes, it must die with the referee too.
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(|e| e.to_string())?;
    if nix::unistd::getppid() != referee {
        std::process::exit(1);
    }
    let Some(fields) = read_instruction().map_err(|e| format!("reading its instruction: {e}"))?
    else {
        std::process::exit(0);
    };
    let bad = || "a malformed instruction".to_owned();
    let separator = fields.iter().position(|a| a == "--").ok_or_else(bad)?;
    let (limits, options) = fields[..separator].split_at(5.min(separator));
    let resources = super::Resources::from_args(limits).ok_or_else(bad)?;
    let mut env: Option<Vec<std::ffi::CString>> = None;
    let mut options = options.iter();
    while let Some(option) = options.next() {
        match option.to_str() {
            Some("--dir") => {
                let dir = options.next().ok_or_else(bad)?;
                std::env::set_current_dir(dir)
                    .map_err(|e| format!("working directory {}: {e}", Path::new(dir).display()))?;
            }
            Some("--env-clear") => env = Some(Vec::new()),
            Some("--env") => {
                let pair = c_string(options.next().ok_or_else(bad)?)?;
                env.get_or_insert_with(Vec::new).push(pair);
            }
            _ => return Err(bad()),
        }
    }
    let command = &fields[separator + 1..];
    if command.is_empty() {
        return Err(bad());
    }
    // Entered already, at its start.
    let entered = PreparedEnclosure::default();
    become_bot(resources, referee, &entered, command, env.as_deref())
}

fn c_string(s: &OsString) -> Result<std::ffi::CString, String> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(s.as_bytes()).map_err(|e| e.to_string())
}

/// Reads an [`instruction`] from standard input, exactly its bytes (what
/// follows is the bot's input): its fields, or `None` at the end of input.
fn read_instruction() -> io::Result<Option<Vec<OsString>>> {
    use std::io::Read;
    use std::os::unix::ffi::OsStringExt;
    // Not `io::stdin()`, which reads ahead into a buffer.
    // SAFETY: fd 0 is open, and this process owns it; ManuallyDrop keeps
    // it open for the bot.
    let mut input = std::mem::ManuallyDrop::new(unsafe {
        <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(0)
    });
    let mut length = [0u8; 4];
    match input.read_exact(&mut length) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    let length = u32::from_le_bytes(length) as usize;
    if length > MOST_INSTRUCTION {
        return Err(io::Error::other("an instruction longer than allowed"));
    }
    let mut body = vec![0u8; length];
    input.read_exact(&mut body)?;
    let mut fields: Vec<OsString> = body
        .split(|&b| b == 0)
        .map(|f| OsString::from_vec(f.to_vec()))
        .collect();
    // The last field's terminator leaves an empty piece.
    fields.pop();
    Ok(Some(fields))
}

/// Turns an `exec` failure into the most precise error available.
pub(crate) fn classify(path: &Path, source: io::Error) -> SpawnError {
    let path = path.to_owned();
    match source.raw_os_error() {
        // The file was there a moment ago, so a missing file now means the
        // #! interpreter, or a binary's loader, is missing.
        Some(e) if e == nix::errno::Errno::ENOENT as i32 => match shebang_interpreter(&path) {
            Some(interpreter) => SpawnError::MissingInterpreter { path, interpreter },
            None if path.is_file() => SpawnError::MissingLoader(path),
            None => SpawnError::NotFound(path),
        },
        Some(e) if e == nix::errno::Errno::ENOEXEC as i32 => SpawnError::BadFormat(path),
        Some(e) if e == nix::errno::Errno::EACCES as i32 => {
            let mode = std::fs::metadata(&path).map_or(0, |m| m.permissions().mode() & 0o7777);
            SpawnError::NotExecutable { path, mode }
        }
        _ => SpawnError::Other { path, source },
    }
}

fn shebang_interpreter(path: &Path) -> Option<String> {
    shebang_of(&read_head(path)?)
}

/// The interpreter a `#!` line names.
fn shebang_of(head: &[u8]) -> Option<String> {
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    // Split on blanks only: a `\r` stays, since it is part of the name the
    // kernel looked for.
    let interpreter = String::from_utf8_lossy(line)
        .split([' ', '\t'])
        .find(|word| !word.is_empty())?
        .to_owned();
    Some(interpreter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_paths_and_names() {
        assert!(resolve(OsStr::new("sh")).unwrap().is_absolute());
        assert!(matches!(
            resolve(OsStr::new("no-such-program-anywhere")),
            Err(SpawnError::NotOnPath(_))
        ));
        assert!(matches!(
            resolve(OsStr::new("/no/such/file")),
            Err(SpawnError::NotFound(_))
        ));
        assert!(matches!(
            resolve(OsStr::new("/tmp/")),
            Err(SpawnError::IsDirectory(_))
        ));
    }

    #[test]
    fn a_folder_inside_a_hidden_one_is_not_covered_again() {
        let class = tempfile::tempdir().unwrap();
        let class = class.path().canonicalize().unwrap();
        let (alice, bob) = (class.join("subs/alice"), class.join("subs/bob"));
        for d in [&alice, &bob] {
            std::fs::create_dir_all(d).unwrap();
        }
        let hide = [class.clone(), alice.clone(), bob.clone()];
        let made = mounts(&alice.join("pc2"), &alice, &hide, Access::Bot).unwrap();
        let covers: Vec<&PathBuf> = made
            .iter()
            .filter(|(_, m)| *m == Mount::Cover)
            .map(|(p, _)| p)
            .collect();
        // The class is covered, bob inside it is not again: a mount point
        // would name him.
        assert!(!covers.contains(&&bob), "{made:?}");
        assert!(made.contains(&(alice.clone(), Mount::Show { writable: false })));
        // A build's folder holding a hidden one still has it covered.
        let made = mounts(&class.join("sh"), &class.join("subs"), &hide, Access::Build).unwrap();
        assert!(made.contains(&(bob.clone(), Mount::Cover)), "{made:?}");
    }

    /// Issue 39: a file is hidden itself, never its folder; a path that
    /// does not exist yet is no error; one that is not absolute (a bare
    /// `t.toml`'s parent is `""`) is an error that names it.
    #[test]
    fn files_are_hidden_themselves_and_bad_paths_are_named() {
        // Outside /tmp, which the sandbox replaces anyway.
        let here = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        let here = here.path().canonicalize().unwrap();
        let (db, alice) = (here.join("class.db"), here.join("alice"));
        std::fs::write(&db, "x").unwrap();
        std::fs::create_dir(&alice).unwrap();
        let hide = [db.clone(), here.join("class.db-wal")];
        let made = mounts(&alice.join("pc2"), &alice, &hide, Access::Bot).unwrap();
        assert!(made.contains(&(db.clone(), Mount::Blank)), "{made:?}");
        assert!(!made.iter().any(|(p, _)| p == &here), "{made:?}");
        assert!(
            !made.iter().any(|(p, _)| p.ends_with("class.db-wal")),
            "{made:?}"
        );
        for bad in ["", "t.toml"] {
            let why = mounts(
                &alice.join("pc2"),
                &alice,
                &[PathBuf::from(bad)],
                Access::Bot,
            )
            .unwrap_err()
            .to_string();
            assert!(
                why.contains("cannot hide") && why.contains("not an absolute path"),
                "{why}"
            );
        }
    }

    #[test]
    fn the_referees_resources_are_told_from_the_bots_program() {
        let other = |errno: nix::errno::Errno| SpawnError::Other {
            path: "bot".into(),
            source: std::io::Error::from_raw_os_error(errno as i32),
        };
        for errno in [
            nix::errno::Errno::EMFILE,
            nix::errno::Errno::ENFILE,
            nix::errno::Errno::ENOMEM,
            nix::errno::Errno::EAGAIN,
            nix::errno::Errno::ENOSPC,
        ] {
            assert_eq!(
                other(errno).verdict().status,
                crate::outcome::Status::Internal,
                "{errno}"
            );
        }
        for errno in [nix::errno::Errno::EACCES, nix::errno::Errno::ETXTBSY] {
            assert_eq!(
                other(errno).verdict().status,
                crate::outcome::Status::CannotStart
            );
        }
        assert_eq!(
            SpawnError::NotFound("bot".into()).verdict().status,
            crate::outcome::Status::CannotStart
        );
        let cgroup = SpawnError::Cgroup(std::io::Error::other("no"));
        assert_eq!(cgroup.verdict().status, crate::outcome::Status::Internal);
        assert!(cgroup.recorded().contains("the referee's own resources"));
    }

    #[test]
    fn an_elf_programs_loader_is_read_from_its_headers() {
        let head = read_head(Path::new("/bin/true")).unwrap();
        let loader = elf_loader(&head).expect("/bin/true is dynamically linked");
        assert!(Path::new(&loader).exists(), "{loader}");
        // Truncated or garbled headers give no loader, and no panic.
        for cut in [0, 5, 0x20, 0x40, 200] {
            let _ = elf_loader(&head[..cut.min(head.len())]);
        }
        let mut garbled = head.clone();
        garbled[0x20..0x28].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(elf_loader(&garbled), None);
    }

    proptest::proptest! {
        #[test]
        fn headers_of_any_bytes_are_read_without_panic(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
            wide in proptest::prelude::any::<bool>(),
        ) {
            let mut elf = vec![0x7f, b'E', b'L', b'F', if wide { 2 } else { 1 }, 1];
            elf.extend(&bytes);
            let _ = elf_loader(&elf);
            let _ = shebang_of(&bytes);
        }
    }

    #[test]
    fn the_launchers_limits_round_trip() {
        let resources = super::super::Resources {
            address_space: Some(1 << 30),
            processes: None,
            file_size: Some(0),
            open_files: Some(64),
            cpu_seconds: None,
        };
        let args: Vec<OsString> = resources.to_args().into_iter().map(Into::into).collect();
        assert_eq!(super::super::Resources::from_args(&args), Some(resources));
        assert_eq!(super::super::Resources::from_args(&args[..4]), None);
        let bad: Vec<OsString> = ["1", "x", "-", "-", "-"].map(Into::into).to_vec();
        assert_eq!(super::super::Resources::from_args(&bad), None);
    }

    #[test]
    fn windows_line_endings_are_named() {
        let dir = std::env::temp_dir().join(format!("referee-spawn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("crlf.sh");
        std::fs::write(&script, "#!/bin/sh\r\necho hi\r\n").unwrap();
        let error = classify(
            &script,
            io::Error::from_raw_os_error(nix::errno::Errno::ENOENT as i32),
        );
        assert_eq!(
            error.to_string(),
            format!(
                "{}: its interpreter \"/bin/sh\\r\" (from the #! line) does not exist (the script has Windows line endings)",
                script.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
