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
pub use super::sandbox::{
    Access, DROP_COMMAND, SANDBOX_COMMAND, check_hidden, check_sandbox, drop_main, sandbox_main,
    sandboxed,
};

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
    #[error("cannot make the sandbox's /etc in {}: {source}", .dir.display())]
    SandboxEtc { dir: PathBuf, source: io::Error },
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
    #[error("cannot run it as a user of its own: {0}")]
    NoUser(String),
    #[error(
        "{what} {path}, which uid {uid} cannot reach: bots and builds run as uids of their \
         own ({why}; see docs/containment.md); stopped at {at}: make it readable by all \
         (chmod a+rX)",
        path = .path.display()
    )]
    Unreachable {
        what: &'static str,
        path: PathBuf,
        uid: u32,
        why: &'static str,
        at: String,
    },
}

impl SpawnError {
    /// Whether the referee failed to start the program, not the program
    /// to start: its own descriptors, memory or processes ran out (making
    /// the pipes, the cgroup, the fork), or the bot's cgroup could not be
    /// made. A missing, unreadable or unrunnable program is the bot's.
    pub fn is_referees(&self) -> bool {
        match self {
            SpawnError::Cgroup(_) | SpawnError::NoUser(_) | SpawnError::SandboxEtc { .. } => true,
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

/// Refuses a program that `uid` could not start: its working directory,
/// its program and, without the sandbox, its `#!` interpreter must be
/// reachable by it. Under the sandbox, a folder it is shown is where the
/// walk starts (the folders above are the sandbox's own, open to all).
pub fn check_reachable(
    path: &Path,
    spec: &BotSpec,
    uid: u32,
    sandboxed: bool,
) -> Result<(), SpawnError> {
    let why = match sandboxed {
        true => "--sandbox, run by root",
        false => "--unprivileged",
    };
    let from = |p: &Path| match sandboxed {
        true => p.parent().unwrap_or(Path::new("/")).to_owned(),
        false => PathBuf::from("/"),
    };
    let refuse = |what, path: &Path, at| SpawnError::Unreachable {
        what,
        path: path.to_owned(),
        uid,
        why,
        at,
    };
    if let Some(dir) = &spec.dir {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        let start = if sandboxed { dir.clone() } else { from(&dir) };
        if let Some(at) = super::boxes::unreachable(&dir, &start, uid, true) {
            return Err(refuse("its working directory", &dir, at));
        }
    }
    if let Some(at) = super::boxes::unreachable(path, &from(path), uid, true) {
        return Err(refuse("its program", path, at));
    }
    if !sandboxed
        && let Some(interpreter) = read_head(path).and_then(|head| shebang_of(&head))
        && Path::new(&interpreter).is_absolute()
        && let Some(at) =
            super::boxes::unreachable(Path::new(&interpreter), Path::new("/"), uid, true)
    {
        return Err(refuse("its interpreter", Path::new(&interpreter), at));
    }
    Ok(())
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
pub(crate) fn read_head(path: &Path) -> Option<Vec<u8>> {
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
pub(crate) fn elf_loader(head: &[u8]) -> Option<String> {
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
    /// The uid (and gid) it becomes last, when it runs as one of its own
    /// without the sandbox (see [`super::boxes`]); under the sandbox the
    /// launcher becomes it inside (see [`super::sandbox::drop_main`]).
    pub user: Option<u32>,
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
        if let Some(uid) = self.user {
            args.push(USER.into());
            args.push(uid.to_string().into());
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
                USER => enclosure.user = Some(value.to_str()?.parse().ok()?),
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
            user: self.user,
        })
    }
}

/// The launcher's option (and an instruction's field) naming the uid a bot
/// becomes.
const USER: &str = "--user";

/// An [`Enclosure`] ready to be entered between fork and exec.
#[derive(Default)]
struct PreparedEnclosure {
    cgroup_entry: Vec<std::ffi::CString>,
    shm_options: Option<std::ffi::CString>,
    user: Option<u32>,
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
    user: Option<u32>,
) -> Result<Option<Vec<u8>>, SpawnError> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut fields: Vec<OsString> = resources.to_args().into_iter().map(Into::into).collect();
    if let Some(uid) = user {
        fields.extend([USER.into(), uid.to_string().into()]);
    }
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
    // Last of what needs root, and before PR_SET_PDEATHSIG, which a change
    // of uid clears.
    if let Some(uid) = enclosure.user {
        become_user_raw(uid)?;
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

/// Becomes `uid`, with the gid of the same number and no other group.
/// Only raw system calls, so that it may run between fork and exec.
fn become_user_raw(uid: u32) -> nix::Result<()> {
    use nix::libc;
    let gid: libc::gid_t = uid;
    // SAFETY: raw system calls with valid arguments; `gid` outlives the call.
    unsafe {
        nix::errno::Errno::result(libc::setgroups(1, &gid))?;
        nix::errno::Errno::result(libc::setresgid(gid, gid, gid))?;
        nix::errno::Errno::result(libc::setresuid(uid, uid, uid))?;
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
    let mut user = None;
    let mut options = options.iter();
    while let Some(option) = options.next() {
        match option.to_str() {
            Some("--dir") => {
                let dir = options.next().ok_or_else(bad)?;
                std::env::set_current_dir(dir)
                    .map_err(|e| format!("working directory {}: {e}", Path::new(dir).display()))?;
            }
            Some(USER) => {
                let uid = options.next().and_then(|u| u.to_str()?.parse().ok());
                user = Some(uid.ok_or_else(bad)?);
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
    // Entered already, at its start; the uid is this bot's.
    let entered = PreparedEnclosure {
        user,
        ..PreparedEnclosure::default()
    };
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

/// The words of a `#!` line: the interpreter, then its arguments.
pub(crate) fn shebang_words(head: &[u8]) -> Vec<String> {
    let Some(line) = head.strip_prefix(b"#!") else {
        return Vec::new();
    };
    let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
    String::from_utf8_lossy(line)
        .split([' ', '\t'])
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
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
