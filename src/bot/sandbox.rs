//! The sandbox (`--sandbox`): what a sandboxed bot or build sees, and how
//! bubblewrap is started and left.
//!
//! What it sees is an allow-list, as isolate's: bubblewrap starts from an
//! empty root, and only what is named here is mounted in it (see
//! [`view`]). Nothing of the host that is not named exists inside: no
//! `/home`, no `/var`, no `/run`, no socket, no `/etc/shadow`.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

use super::BotSpec;
use super::program::{SpawnError, launcher, resolve};

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
    // Looked up once: the referee's `PATH` does not change while it runs.
    static BWRAP: OnceLock<Option<PathBuf>> = OnceLock::new();
    BWRAP
        .get_or_init(|| resolve(OsStr::new("bwrap")).ok())
        .clone()
        .ok_or(SpawnError::NoSandbox)
}

/// The command line that runs `path` (resolved) with `spec`'s arguments,
/// in `spec`'s working directory, under bubblewrap, as the uid `user` when
/// given (the referee is root: see [`super::boxes`]):
///
/// - namespaces of its own: no network (not even the host's loopback), no
///   other process (its own `/proc`), its own IPC; no capabilities; a
///   session of its own (no terminal to type into); killed with its parent;
/// - the file system of [`view`]: what the program needs, read-only, and
///   nothing else; private `/tmp` and `/dev/shm`, each at most `tmp_size`
///   bytes when given (they are memory);
/// - as `user`, which the launcher becomes inside, once the mounts are
///   made (see [`drop_main`]).
pub fn sandboxed(
    path: &Path,
    spec: &BotSpec,
    access: Access,
    tmp_size: Option<u64>,
    user: Option<u32>,
) -> Result<(PathBuf, Vec<OsString>), SpawnError> {
    let bwrap = check_sandbox()?;
    let dir = match &spec.dir {
        Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned()),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    };
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    // A folder that leads to / would make the whole system writable.
    if access == Access::Build && dir == Path::new("/") {
        return Err(SpawnError::RootFolder(dir));
    }
    let env = spec.env.vars(true);
    let needs = Needs::of(path, env.as_ref());
    let home = env_var(env.as_ref(), "HOME");
    let uid = user.unwrap_or_else(|| nix::unistd::getuid().as_raw());
    let etc =
        etc_folder(uid, Path::new(&home.unwrap_or_else(|| "/".into()))).map_err(|source| {
            SpawnError::SandboxEtc {
                dir: std::env::temp_dir(),
                source,
            }
        })?;
    let mounts = view(path, &needs, &dir, &spec.hide, access, &etc)?;
    let namespaces: &[&str] = match user {
        // Every namespace but the user's: a user namespace made by root
        // maps its root to the host's, and the uid becomes no other.
        Some(_) => &[
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ],
        None => &["--unshare-all"],
    };
    let mut wrapped: Vec<OsString> = namespaces
        .iter()
        .chain(&["--die-with-parent", "--new-session", "--cap-drop", "ALL"])
        .map(OsString::from)
        .collect();
    if user.is_some() {
        // Only to become the bot's uid: it then has none at all.
        wrapped.extend(["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"].map(OsString::from));
    }
    let size = tmp_size.filter(|_| bwrap_has_size(&bwrap));
    wrapped.extend(mount_arguments(&mounts, size));
    wrapped.push("--chdir".into());
    wrapped.push(dir.into_os_string());
    let program = runnable_path(path);
    let command = std::iter::once(program.into_os_string()).chain(spec.args.iter().cloned());
    // Through the launcher, bubblewrap is started by `__sandbox` (see
    // [`sandbox_main`]); without one (the library's unit tests) it holds
    // the pipes and shows its arguments, as it would on its own.
    let Some(launcher) = launcher() else {
        wrapped.push("--".into());
        wrapped.extend(command);
        return Ok((bwrap, wrapped));
    };
    let mut args: Vec<OsString> = vec![SANDBOX_COMMAND.into(), bwrap.into_os_string()];
    args.extend(wrapped);
    args.push("--".into());
    // By its real path: inside, `/proc/self/exe` is bubblewrap.
    args.push(inside(launcher).into_os_string());
    args.push(DROP_COMMAND.into());
    if let Some(uid) = user {
        args.push(uid.to_string().into());
    }
    args.push("--".into());
    args.extend(command);
    Ok((launcher.to_owned(), args))
}

/// The value of `name` in the process's environment `env` (the last one
/// set wins), or in the referee's own when `None`.
fn env_var(env: Option<&super::environment::Vars>, name: &str) -> Option<OsString> {
    match env {
        Some(vars) => vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone()),
        None => std::env::var_os(name),
    }
}

/// The launcher's real path, as the sandbox shows it (the referee's own
/// binary is named `/proc/self/exe`, which inside is bubblewrap).
fn inside(launcher: &Path) -> PathBuf {
    static REAL: OnceLock<PathBuf> = OnceLock::new();
    REAL.get_or_init(|| std::fs::canonicalize(launcher).unwrap_or_else(|_| launcher.to_owned()))
        .clone()
}

/// `path` with its folders resolved (the sandbox mounts real paths: a
/// folder reached by a link is there under its real name), its own name
/// kept (a program may look at the name it was started by).
fn runnable_path(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|p| p.join(name))
            .unwrap_or_else(|_| path.to_owned()),
        _ => path.to_owned(),
    }
}

/// The hidden subcommand that starts bubblewrap for a sandboxed process:
/// `LAUNCHER __sandbox BWRAP [--as UID] OPTIONS... -- LAUNCHER __drop
/// [UID] -- PROGRAM ARGS...`, run by the launcher once the process is
/// ready (see [`sandbox_main`]).
pub const SANDBOX_COMMAND: &str = "__sandbox";

/// The hidden subcommand run inside the sandbox, as its program: puts the
/// game's pipes in place, becomes the bot's uid and then the program (see
/// [`drop_main`]).
pub const DROP_COMMAND: &str = "__drop";

/// Where the program's standard input and output wait, inside the sandbox,
/// until [`drop_main`] puts them in place.
const INNER_STDIN: i32 = 3;
const INNER_STDOUT: i32 = 4;
/// Where bubblewrap reads its options (`--args`).
const INNER_ARGS: i32 = 5;

/// A helper command's `main`: `into` turns this process into what the
/// arguments after the command say, or says on standard error why it
/// cannot start `what`, with status 127, as a shell's.
pub(crate) fn helper_main(
    what: &str,
    into: fn(&[OsString]) -> Result<std::convert::Infallible, String>,
) -> ! {
    let args: Vec<OsString> = std::env::args_os().skip(2).collect();
    let error = match into(&args) {
        Ok(never) => match never {},
        Err(error) => error,
    };
    eprintln!("referee: cannot start {what}: {error}");
    std::process::exit(127);
}

/// `LAUNCHER __sandbox BWRAP OPTIONS... -- COMMAND...`: becomes
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
    helper_main("the sandbox", enter_sandbox)
}

fn at(what: &str) -> impl Fn(nix::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
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
    // SAFETY: the launcher starts with descriptors 0, 1 and 2 only (it
    // became this through `prepare_bot`, which marks every other one
    // close-on-exec), so 3 to 5 have no other owner.
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
    let data = nul_ended(options);
    match data_pipe(&data, INNER_ARGS) {
        Some(fd) => argv.extend(["--args".into(), fd.to_string().into()]),
        // Too many to wait in a pipe: on the command line, as before.
        None => argv.extend(options.iter().cloned()),
    }
    argv.push("--".into());
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

/// `options`, each ended by a NUL, as bubblewrap's `--args` reads them.
fn nul_ended(options: &[OsString]) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut data = Vec::new();
    for option in options {
        data.extend_from_slice(option.as_bytes());
        data.push(0);
    }
    data
}

/// A pipe holding `data`, its reading end at descriptor `fd`, left open
/// across `exec`. `None` when it does not fit in a pipe (bubblewrap reads
/// it only after `exec`, and no process is left to write more).
fn data_pipe(data: &[u8], fd: i32) -> Option<i32> {
    use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};
    use std::os::fd::{AsRawFd, IntoRawFd};
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK).ok()?;
    // A pipe holds 64 KiB unless asked for more (up to
    // /proc/sys/fs/pipe-max-size, 1 MiB by default).
    if data.len() > 64 * 1024 {
        let _ = fcntl(&write, FcntlArg::F_SETPIPE_SZ(data.len().try_into().ok()?));
    }
    let mut rest = data;
    while !rest.is_empty() {
        let n = nix::unistd::write(&write, rest).ok()?;
        rest = &rest[n..];
    }
    drop(write);
    let read = if read.as_raw_fd() == fd {
        read
    } else {
        // SAFETY: `fd` has no other owner (see `enter_sandbox`).
        unsafe { nix::unistd::dup2_raw(&read, fd) }.ok()?
    };
    fcntl(&read, FcntlArg::F_SETFD(FdFlag::empty())).ok()?;
    fcntl(&read, FcntlArg::F_SETFL(OFlag::empty())).ok()?;
    Some(read.into_raw_fd())
}

/// `LAUNCHER __drop [UID] -- PROGRAM ARGS...`, the sandbox's first program:
/// gives PROGRAM the game's pipes as its standard input and output, closes
/// every other descriptor, becomes UID (its gid the same number, no other
/// group: it then holds no capability at all, and bubblewrap's
/// `no_new_privs` keeps a set-uid program from giving one back), and
/// becomes PROGRAM. A failure is said on standard error, status 127.
pub fn drop_main() -> ! {
    helper_main("the bot", drop_into)
}

fn drop_into(args: &[OsString]) -> Result<std::convert::Infallible, String> {
    use std::os::unix::ffi::OsStrExt;
    let usage = || format!("usage: referee {DROP_COMMAND} [UID] -- PROGRAM ARGS...");
    let separator = args.iter().position(|a| a == "--").ok_or_else(usage)?;
    let uid: Option<u32> = match &args[..separator] {
        [] => None,
        [uid] => Some(
            uid.to_str()
                .and_then(|u| u.parse().ok())
                .ok_or_else(usage)?,
        ),
        _ => return Err(usage()),
    };
    let command = &args[separator + 1..];
    if command.is_empty() {
        return Err(usage());
    }
    // SAFETY: 3 and 4 are the game's pipes, left by `enter_sandbox`;
    // standard input and output are bubblewrap's `/dev/null`, replaced.
    for (from, to, what) in [
        (INNER_STDIN, 0, "standard input"),
        (INNER_STDOUT, 1, "standard output"),
    ] {
        // SAFETY: a raw system call on descriptors this process owns.
        let done = unsafe { nix::libc::dup2(from, to) };
        nix::errno::Errno::result(done).map_err(at(what))?;
    }
    super::descriptors::close_inherited_on_exec().map_err(at("descriptors"))?;
    if let Some(uid) = uid {
        become_user(uid)?;
    }
    let argv: Vec<std::ffi::CString> = command
        .iter()
        .map(|a| std::ffi::CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let errno = match nix::unistd::execv(&argv[0], &argv) {
        Ok(never) => match never {},
        Err(errno) => errno,
    };
    Err(super::program::classify(Path::new(&command[0]), io::Error::from(errno)).to_string())
}

/// Becomes `uid`, with the gid of the same number and no other group;
/// checks that there is no way back.
pub(crate) fn become_user(uid: u32) -> Result<(), String> {
    use nix::unistd::{Gid, Uid};
    let gid = Gid::from_raw(uid);
    nix::unistd::setgroups(&[gid]).map_err(at("setgroups"))?;
    nix::unistd::setresgid(gid, gid, gid).map_err(at("setgid"))?;
    let id = Uid::from_raw(uid);
    nix::unistd::setresuid(id, id, id).map_err(at("setuid"))?;
    if nix::unistd::setuid(Uid::from_raw(0)).is_ok() {
        return Err(format!("uid {uid} could become root again"));
    }
    Ok(())
}

/// What a program needs to run, besides the system's own folders: the
/// folders of its program, of the links that lead to it, of its `#!`
/// interpreter (through `env`, on its `PATH`) and of its loader; the
/// folders on its `PATH`; the toolchains those belong to.
#[derive(Debug, Default)]
struct Needs {
    folders: Vec<PathBuf>,
}

/// The system's folders, read-only in every sandbox (a link, on a system
/// whose `/bin` is `/usr/bin`, is a link there too).
const SYSTEM: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// The entries of `/etc` a sandbox shows, copied (see [`etc_folder`];
/// besides its own `passwd` and `group`): the loader's cache and
/// configuration, the alternatives' links, the time zone (and a JDK's
/// configuration, `/etc/java-*`).
const ETC: [&str; 5] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
];

impl Needs {
    /// What `program` (resolved) needs, with the environment `env` (the
    /// referee's own when `None`).
    ///
    /// Worked out once per program and environment (and again when the
    /// program's file changes): a tournament starts the same few programs
    /// thousands of times, and the rules' look at each `PATH` folder
    /// took a sandboxed game a tenth of its time (docs/PERFORMANCE.md §14).
    fn of(program: &Path, env: Option<&super::environment::Vars>) -> Needs {
        type Key = (PathBuf, Option<(u64, u64, i64, i64)>, [Option<OsString>; 3]);
        static KNOWN: OnceLock<std::sync::Mutex<HashMap<Key, Vec<PathBuf>>>> = OnceLock::new();
        let vars = ["PATH", "HOME", "RUSTUP_HOME"].map(|name| env_var(env, name));
        let file = std::fs::metadata(program).ok().map(|m| {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino(), m.mtime(), m.mtime_nsec())
        });
        let key: Key = (program.to_owned(), file, vars);
        let mut known = KNOWN
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let folders = known
            .entry(key)
            .or_insert_with_key(|key| Needs::worked_out(program, &key.2).folders);
        Needs {
            folders: folders.clone(),
        }
    }

    /// [`Needs::of`], looked at on the file system, with the values of
    /// `PATH`, `HOME` and `RUSTUP_HOME`.
    fn worked_out(program: &Path, [path_var, home, rustup]: &[Option<OsString>; 3]) -> Needs {
        let rustup = rustup
            .as_ref()
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| Path::new(h).join(".rustup")));
        let mut needs = Needs::default();
        let path_folders: Vec<PathBuf> =
            std::env::split_paths(path_var.as_deref().unwrap_or_default())
                .filter(|p| p.is_absolute())
                .collect();
        for folder in &path_folders {
            needs.folder(folder, rustup.as_deref());
        }
        needs.program(program, &path_folders, rustup.as_deref(), 0);
        needs.folders.sort();
        needs.folders.dedup();
        needs
    }

    /// The folders of `program`, of each link on the way to it, of its
    /// interpreter and loader (at most `depth` 4 interpreters deep).
    fn program(&mut self, program: &Path, path: &[PathBuf], rustup: Option<&Path>, depth: u8) {
        if depth > 4 {
            return;
        }
        let mut hop = program.to_owned();
        for _ in 0..16 {
            if let Some(folder) = hop.parent() {
                self.folder(folder, rustup);
            }
            match std::fs::read_link(&hop) {
                Ok(target) => hop = hop.parent().unwrap_or(Path::new("/")).join(target),
                Err(_) => break,
            }
        }
        let Some(head) = super::program::read_head(&hop) else {
            return;
        };
        let next = match super::program::shebang_words(&head).as_slice() {
            [env, rest @ ..] if env.ends_with("/env") => {
                self.program(Path::new(env), path, rustup, depth + 1);
                rest.iter()
                    .find(|w| !w.starts_with('-') && !w.contains('='))
                    .and_then(|name| path.iter().map(|p| p.join(name)).find(|p| p.is_file()))
            }
            [interpreter, ..] => Some(PathBuf::from(interpreter)),
            [] => super::program::elf_loader(&head).map(PathBuf::from),
        };
        if let Some(next) = next.filter(|n| n.is_absolute()) {
            self.program(&next, path, rustup, depth + 1);
        }
    }

    /// What shows `folder` (see [`toolchain`]), unless the system's
    /// folders do.
    fn folder(&mut self, folder: &Path, rustup: Option<&Path>) {
        let Ok(real) = std::fs::canonicalize(folder) else {
            return;
        };
        if in_system(&real) {
            return;
        }
        self.folders.extend(toolchain(&real, rustup));
    }
}

/// Whether `path` (real) lies in the system's folders.
fn in_system(path: &Path) -> bool {
    static REAL: OnceLock<Vec<PathBuf>> = OnceLock::new();
    REAL.get_or_init(|| {
        SYSTEM
            .iter()
            .map(|s| std::fs::canonicalize(s).unwrap_or_else(|_| PathBuf::from(s)))
            .collect()
    })
    .iter()
    .any(|real| path.starts_with(real))
}

/// What a folder of programs (real, outside the system's folders) needs
/// shown, by these rules, first that applies:
///
/// 1. inside a pyenv root (a folder holding `libexec/pyenv`: its shims, its
///    versions, its `version` file): the root;
/// 2. a `bin` of a JDK (beside `release` and `lib/modules`): the JDK;
/// 3. a `bin` (or `sbin`): itself, and of its install prefix (the folder
///    above) what a runtime keeps there: `lib`, `lib64`, `libexec`, a
///    virtualenv's `pyvenv.cfg`; and when it holds rustup's proxies
///    (`~/.cargo/bin`), rustup's home (`RUSTUP_HOME`, else `~/.rustup`);
/// 4. any other folder: itself.
///
/// Never a whole home folder: `~/.cargo/bin` shows neither `~/.cargo`'s
/// credentials nor `~`.
fn toolchain(folder: &Path, rustup: Option<&Path>) -> Vec<PathBuf> {
    if let Some(root) = folder
        .ancestors()
        .find(|a| a.join("libexec/pyenv").is_file())
    {
        return vec![root.to_owned()];
    }
    let is_bin = folder
        .file_name()
        .is_some_and(|n| n == "bin" || n == "sbin");
    let Some(prefix) = folder.parent().filter(|_| is_bin) else {
        return vec![folder.to_owned()];
    };
    if prefix.join("release").is_file() && prefix.join("lib/modules").exists() {
        return vec![prefix.to_owned()];
    }
    let mut shown = vec![folder.to_owned()];
    for part in ["lib", "lib64", "libexec", "pyvenv.cfg"] {
        let path = prefix.join(part);
        if path.exists() {
            shown.push(std::fs::canonicalize(&path).unwrap_or(path));
        }
    }
    if folder.join("rustup").is_file()
        && let Some(home) = rustup.and_then(|h| std::fs::canonicalize(h).ok())
    {
        shown.push(home);
    }
    shown
}

/// One mount of the sandbox, at a path inside it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mount {
    /// A link, as the host has it (`/bin` to `usr/bin`).
    Link(PathBuf),
    /// An empty directory, read-only once what is shown inside is there.
    Cover,
    /// A file hidden by an empty one (`/dev/null`, read-only).
    Blank,
    /// A private writable directory (memory), writable by all (sticky).
    Private,
    /// One of the host's devices.
    Device,
    /// The host's file or directory at the same path.
    Show { writable: bool },
    /// An empty directory, open to all, that holds what is mounted inside
    /// (bubblewrap would make it for root alone).
    Folder,
    /// A folder of the run's, read-only, in the host's folder's place (the
    /// sandbox's `/etc`: see [`etc_folder`]).
    Copy(PathBuf),
}

/// The sandbox's mounts, in the order they are made: by path, parents
/// first; on one path, a directory shown after it is covered, so that a
/// process's own directory is never hidden from it.
///
/// What a sandbox shows: the system's folders, read-only; the entries of
/// [`ETC`] and the JDKs' `/etc/java-*`; what its program needs ([`Needs`]);
/// what the organiser shows (`--sandbox-show`); its own directories (for a
/// bot its working directory and its program's, read-only; for a build
/// its working directory, writable); `/dev/null`, `zero`, `random`,
/// `urandom`; private `/tmp`, `/dev/shm` and temporary directory. Of what
/// it shows, each of `hide` is covered again (a database beside a
/// toolchain), unless it is the process's own.
fn view(
    program: &Path,
    needs: &Needs,
    dir: &Path,
    hide: &[PathBuf],
    access: Access,
    etc: &Path,
) -> Result<Vec<(PathBuf, Mount)>, SpawnError> {
    let mut mounts: Vec<(PathBuf, Mount)> = system_mounts().to_vec();
    mounts.push((PathBuf::from("/etc"), Mount::Copy(etc.to_owned())));
    let ro = Mount::Show { writable: false };
    // What is asked to be hidden stays hidden, whatever needs it: a
    // folder on the `PATH` inside the class's folder is not shown.
    let hidden: Vec<PathBuf> = hide
        .iter()
        .filter_map(|h| std::fs::canonicalize(h).ok())
        .collect();
    // The needs are real paths already (see [`toolchain`]).
    let shown = super::boxes::settings()
        .show
        .iter()
        .map(|path| std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()));
    for path in needs.folders.iter().cloned().chain(shown) {
        if !hidden.iter().any(|h| path.starts_with(h)) {
            mounts.push((path, ro.clone()));
        }
    }
    // The launcher becomes the bot's uid inside (see [`drop_main`]).
    if let Some(launcher) = launcher() {
        mounts.push((inside(launcher), ro.clone()));
    }
    for device in ["null", "zero", "random", "urandom"] {
        mounts.push((Path::new("/dev").join(device), Mount::Device));
    }
    let temp = std::env::temp_dir();
    for private in [Path::new("/tmp"), Path::new("/dev/shm"), &temp] {
        mounts.push((private.to_owned(), Mount::Private));
    }
    for h in hide {
        mounts.extend(hidden_mount(h)?);
    }
    mounts.extend(own(program, dir, access));
    mounts.sort();
    mounts.dedup();
    prune(&mut mounts);
    mounts.extend(folders(&mounts));
    mounts.sort();
    make_mount_points(etc, Path::new("/etc"), &mounts);
    Ok(mounts)
}

/// The system's folders, as every sandbox of the run shows them: looked
/// at once.
fn system_mounts() -> &'static [(PathBuf, Mount)] {
    static MOUNTS: OnceLock<Vec<(PathBuf, Mount)>> = OnceLock::new();
    MOUNTS.get_or_init(|| {
        let mut mounts = Vec::new();
        let ro = Mount::Show { writable: false };
        for system in SYSTEM.map(Path::new) {
            match std::fs::read_link(system) {
                Ok(target) => mounts.push((system.to_owned(), Mount::Link(target))),
                Err(_) if system.is_dir() => mounts.push((system.to_owned(), ro.clone())),
                Err(_) => {}
            }
        }
        mounts
    })
}

/// The sandbox's `/etc` for a process running as `uid` with the home
/// folder `home`: a folder of the run's holding copies of [`ETC`]'s
/// entries and of the JDKs' `/etc/java-*`, and a `passwd` and `group` that
/// name `uid` and no one of the host's (see [`super::boxes::passwd`]).
/// Made once per uid and home, and shown in one mount: a mount for each
/// entry cost a sandboxed game of short bots a tenth of its time, since
/// bubblewrap reads the whole mount table after each (docs/PERFORMANCE.md
/// §14). The copies are as the files were when the run first needed them.
fn etc_folder(uid: u32, home: &Path) -> io::Result<PathBuf> {
    let mut copies = ETC_COPIES.lock().unwrap_or_else(|e| e.into_inner());
    let copies = match &mut *copies {
        Some(copies) => copies,
        empty => empty.insert(EtcCopies {
            base: new_etc_base()?,
            made: HashMap::new(),
        }),
    };
    let key = (uid, home.to_owned());
    if let Some(folder) = copies.made.get(&key) {
        return Ok(folder.clone());
    }
    let folder = copies.base.path().join(copies.made.len().to_string());
    make_etc(&folder, uid, home)?;
    copies.made.insert(key, folder.clone());
    Ok(folder)
}

/// The run's copies of `/etc` (see [`etc_folder`]), removed at its end
/// ([`finish`]).
struct EtcCopies {
    base: tempfile::TempDir,
    made: HashMap<(u32, PathBuf), PathBuf>,
}

static ETC_COPIES: std::sync::Mutex<Option<EtcCopies>> = std::sync::Mutex::new(None);

/// What names the run's `/etc` copies in the temporary folder, before its
/// pid: a run killed before it could remove them leaves them, and the
/// next run removes them.
const ETC_PREFIX: &str = "referee-etc-";

fn new_etc_base() -> io::Result<tempfile::TempDir> {
    let temp = std::env::temp_dir();
    let mine = std::process::id();
    for entry in std::fs::read_dir(&temp).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(ETC_PREFIX))
            .and_then(|n| n.split('-').next())
            .and_then(|n| n.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != mine
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    tempfile::Builder::new()
        .prefix(&format!("{ETC_PREFIX}{mine}-"))
        .tempdir_in(temp)
}

/// Fills `folder` (made here, open to all to read) with the sandbox's
/// `/etc` entries.
fn make_etc(folder: &Path, uid: u32, home: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir(folder)?;
    std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755))?;
    let java = std::fs::read_dir("/etc")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("java-"))
        });
    for entry in ETC.iter().map(PathBuf::from).chain(java) {
        if let Some(name) = entry.file_name() {
            copy_entry(&entry, &folder.join(name));
        }
    }
    for (name, text) in [
        ("passwd", super::boxes::passwd(uid, home)),
        ("group", super::boxes::group(uid)),
    ] {
        let file = folder.join(name);
        std::fs::write(&file, text)?;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644))?;
    }
    Ok(())
}

/// Copies `from` to `to`: a link as a link, a folder with what it holds.
/// What cannot be read is left out: the process could not read it either.
fn copy_entry(from: &Path, to: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(from) else {
        return;
    };
    if meta.file_type().is_symlink() {
        if let Ok(target) = std::fs::read_link(from) {
            let _ = std::os::unix::fs::symlink(target, to);
        }
    } else if meta.is_dir() {
        if std::fs::create_dir(to).is_ok() {
            let _ = std::fs::set_permissions(to, meta.permissions());
            for entry in std::fs::read_dir(from).into_iter().flatten().flatten() {
                copy_entry(&entry.path(), &to.join(entry.file_name()));
            }
        }
    } else if meta.is_file() {
        let _ = std::fs::copy(from, to);
    }
}

/// Makes, in `copy` (shown at `at`), the points where `mounts` mount
/// something inside it (a folder the organiser shows in `/etc`): the copy
/// is read-only once mounted.
fn make_mount_points(copy: &Path, at: &Path, mounts: &[(PathBuf, Mount)]) {
    for (path, mount) in mounts {
        let Ok(inside) = path.strip_prefix(at) else {
            continue;
        };
        if inside.as_os_str().is_empty() || copy.join(inside).symlink_metadata().is_ok() {
            continue;
        }
        let point = copy.join(inside);
        let is_dir = match mount {
            Mount::Show { .. } | Mount::Device | Mount::Blank => path.is_dir(),
            _ => true,
        };
        if let Some(parent) = point.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = match is_dir {
            true => std::fs::create_dir(&point),
            false => std::fs::write(&point, b"").map(|_| ()),
        };
    }
}

/// Removes the run's copies of `/etc`: at its end, with its cgroups. It
/// never waits for a thread that holds them (the panic hook calls it).
pub fn finish() {
    if let Ok(mut copies) = ETC_COPIES.try_lock() {
        copies.take();
    }
}

/// The folders that hold the mount points and that nothing mounts: `/etc`
/// around its entries, `/home` around a folder shown in it, a bot's folder's
/// parents in the private `/tmp`.
fn folders(mounts: &[(PathBuf, Mount)]) -> Vec<(PathBuf, Mount)> {
    let mut folders: Vec<(PathBuf, Mount)> = Vec::new();
    for (path, _) in mounts {
        for folder in path.ancestors().skip(1) {
            // Inside what is shown the host has it; inside a private or
            // covering directory it must be made.
            let mounted = mounts.iter().any(|(m, kind)| {
                folder.starts_with(m)
                    && matches!(kind, Mount::Show { .. } | Mount::Link(_) | Mount::Copy(_))
                    || folder == m
            });
            if folder == Path::new("/") || mounted {
                break;
            }
            folders.push((folder.to_owned(), Mount::Folder));
        }
    }
    folders.sort();
    folders.dedup();
    folders
}

/// The process's own directories, shown even where hidden: for a build
/// its working directory, writable; for a bot its working directory and
/// its program's, read-only.
fn own(program: &Path, dir: &Path, access: Access) -> Vec<(PathBuf, Mount)> {
    let writable = access == Access::Build;
    let mut own = vec![dir.to_owned()];
    if access == Access::Bot
        && let Some(folder) = program.parent()
    {
        own.push(std::fs::canonicalize(folder).unwrap_or(folder.to_owned()));
    }
    own.retain(|d| d.is_dir());
    own.into_iter()
        .map(|d| (d, Mount::Show { writable }))
        .collect()
}

/// Drops the mounts that change nothing, and the covers of what is not
/// shown anyway: every mount point is listed in the sandbox's
/// `/proc/self/mountinfo`, and a cover of another entrant's folder would
/// name it.
///
/// - a directory shown where a cover is replaces it;
/// - a cover or a blank inside no shown directory hides what is not there;
/// - a read-only directory shown inside one shown read-only (and not
///   covered between) is there already.
fn prune(mounts: &mut Vec<(PathBuf, Mount)>) {
    let shown: Vec<PathBuf> = mounts
        .iter()
        .filter(|(_, m)| matches!(m, Mount::Show { .. }))
        .map(|(p, _)| p.clone())
        .collect();
    mounts.retain(|(p, m)| *m != Mount::Cover || !shown.contains(p));
    loop {
        let redundant = mounts.iter().position(|(p, m)| {
            let around = mounts
                .iter()
                .filter(|(q, _)| q != p && p.starts_with(q))
                .max_by_key(|(q, _)| q.as_os_str().len())
                .map(|(_, around)| around);
            match (m, around) {
                (Mount::Cover | Mount::Blank, Some(Mount::Show { .. })) => false,
                (Mount::Cover | Mount::Blank, _) => true,
                (Mount::Show { writable: false }, Some(Mount::Show { writable: false })) => true,
                // Under a link the path is the link's target's: shown there.
                (_, Some(Mount::Link(_))) => true,
                _ => false,
            }
        });
        match redundant {
            Some(at) => {
                mounts.remove(at);
            }
            None => break,
        }
    }
}

/// Whether the sandbox can hide each of `paths`: checked before a run
/// starts anything, so that a path it cannot hide stops the run with its
/// name rather than failing each bot.
pub fn check_hidden(paths: &[PathBuf]) -> Result<(), SpawnError> {
    paths.iter().try_for_each(|p| hidden_mount(p).map(|_| ()))
}

/// How the sandbox hides `path`, where it shows what holds it: a directory
/// under an empty one, a file (or a socket, a pipe) under an empty file;
/// nothing for a path that does not exist (yet: it is hidden by the next
/// bot's sandbox once it does) or for the root. Symbolic links are
/// followed here, since bubblewrap would follow them inside the sandbox. A
/// path that cannot be looked at is an error that names it: a sandbox
/// never silently shows what it was asked to hide.
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
    let mut args: Vec<OsString> = ["--proc", "/proc"].map(OsString::from).to_vec();
    for (path, mount) in mounts {
        let path = path.as_os_str().to_owned();
        match mount {
            Mount::Link(target) => {
                args.extend(["--symlink".into(), target.clone().into_os_string(), path])
            }
            Mount::Cover => args.extend(["--tmpfs".into(), path]),
            Mount::Blank => args.extend(["--ro-bind".into(), "/dev/null".into(), path]),
            Mount::Device => args.extend(["--dev-bind".into(), path.clone(), path]),
            Mount::Private => {
                if let Some(size) = size {
                    args.extend(["--size".into(), size.to_string().into()]);
                }
                args.extend(["--perms".into(), "1777".into(), "--tmpfs".into(), path]);
            }
            Mount::Show { writable } => {
                let how = if *writable { "--bind" } else { "--ro-bind" };
                args.extend([how.into(), path.clone(), path]);
            }
            Mount::Folder => args.extend(["--perms".into(), "0755".into(), "--dir".into(), path]),
            Mount::Copy(source) => {
                args.extend(["--ro-bind".into(), source.clone().into_os_string(), path])
            }
        }
    }
    for (link, target) in [
        ("/dev/fd", "/proc/self/fd"),
        ("/dev/stdin", "/proc/self/fd/0"),
        ("/dev/stdout", "/proc/self/fd/1"),
        ("/dev/stderr", "/proc/self/fd/2"),
    ] {
        args.extend(["--symlink".into(), target.into(), link.into()]);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A class's folder outside /tmp (which the sandbox replaces anyway).
    fn class() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        let class = root.path().canonicalize().unwrap();
        (root, class)
    }

    /// Another entrant's folder is not even a mount point: nothing shows
    /// the class's folder, so nothing in it needs covering, and a cover
    /// would name it in `/proc/self/mountinfo`. A build's folder that
    /// holds a hidden one still has it covered.
    #[test]
    fn what_is_not_shown_is_neither_there_nor_named() {
        let (_root, class) = class();
        let (alice, bob) = (class.join("subs/alice"), class.join("subs/bob"));
        for d in [&alice, &bob] {
            std::fs::create_dir_all(d).unwrap();
        }
        let hide = [class.clone(), alice.clone(), bob.clone()];
        let needs = Needs::default();
        let made = view(
            &alice.join("pc2"),
            &needs,
            &alice,
            &hide,
            Access::Bot,
            Path::new("/nonexistent/etc-copy"),
        )
        .unwrap();
        // The class's folder is at most an empty folder of the sandbox's
        // own around alice's, which names nothing.
        let named = |p: &PathBuf, m: &Mount| p == &bob || p == &class && *m != Mount::Folder;
        assert!(!made.iter().any(|(p, m)| named(p, m)), "{made:?}");
        assert!(made.contains(&(alice.clone(), Mount::Show { writable: false })));
        assert!(made.contains(&(PathBuf::from("/usr"), Mount::Show { writable: false })));
        // The host's /home and /var are not shown (the class's own folders
        // aside: a checkout under /var/tmp holds them).
        let host = |p: &PathBuf| !p.starts_with(&class) && !class.starts_with(p);
        assert!(
            !made
                .iter()
                .any(|(p, _)| host(p) && (p.starts_with("/home") || p.starts_with("/var"))),
            "{made:?}"
        );
        let subs = class.join("subs");
        let made = view(
            &subs.join("sh"),
            &needs,
            &subs,
            &hide,
            Access::Build,
            Path::new("/nonexistent/etc-copy"),
        )
        .unwrap();
        assert!(made.contains(&(bob.clone(), Mount::Cover)), "{made:?}");
        assert!(made.contains(&(subs.clone(), Mount::Show { writable: true })));
    }

    /// A file hidden inside a folder a rule shows is covered itself; a
    /// folder on the `PATH` inside a hidden one is not shown; a path that
    /// is not absolute is an error that names it.
    #[test]
    fn what_is_hidden_stays_hidden_inside_what_is_shown() {
        let (_root, here) = class();
        let (db, alice, tools) = (
            here.join("class.db"),
            here.join("alice"),
            here.join("tools"),
        );
        std::fs::write(&db, "x").unwrap();
        std::fs::create_dir(&alice).unwrap();
        std::fs::create_dir(&tools).unwrap();
        let needs = Needs {
            folders: vec![here.clone()],
        };
        let made = view(
            &alice.join("pc2"),
            &needs,
            &alice,
            std::slice::from_ref(&db),
            Access::Bot,
            Path::new("/nonexistent/etc-copy"),
        )
        .unwrap();
        assert!(made.contains(&(db.clone(), Mount::Blank)), "{made:?}");
        let needs = Needs {
            folders: vec![tools.clone()],
        };
        let made = view(
            &alice.join("pc2"),
            &needs,
            &alice,
            std::slice::from_ref(&here),
            Access::Bot,
            Path::new("/nonexistent/etc-copy"),
        )
        .unwrap();
        assert!(!made.iter().any(|(p, _)| p == &tools), "{made:?}");
        for bad in ["", "t.toml"] {
            let why = view(
                &alice.join("pc2"),
                &needs,
                &alice,
                &[PathBuf::from(bad)],
                Access::Bot,
                Path::new("/nonexistent/etc-copy"),
            )
            .unwrap_err()
            .to_string();
            assert!(
                why.contains("cannot hide") && why.contains("not an absolute path"),
                "{why}"
            );
        }
    }

    /// The toolchain rules: a pyenv root whole, a `bin` with its prefix's
    /// libraries but not the prefix, rustup's home beside its proxies.
    #[test]
    fn a_toolchain_is_shown_by_its_rules() {
        let (_root, home) = class();
        let pyenv = home.join(".pyenv");
        for d in ["libexec", "shims", "versions/3.12/bin"] {
            std::fs::create_dir_all(pyenv.join(d)).unwrap();
        }
        std::fs::write(pyenv.join("libexec/pyenv"), "").unwrap();
        assert_eq!(
            toolchain(&pyenv.join("shims"), None),
            std::slice::from_ref(&pyenv)
        );
        assert_eq!(toolchain(&pyenv.join("versions/3.12/bin"), None), [pyenv]);
        let local = home.join(".local");
        for d in ["bin", "lib", "share/keyrings"] {
            std::fs::create_dir_all(local.join(d)).unwrap();
        }
        assert_eq!(
            toolchain(&local.join("bin"), None),
            [local.join("bin"), local.join("lib")]
        );
        let (cargo, rustup) = (home.join(".cargo"), home.join(".rustup"));
        std::fs::create_dir_all(cargo.join("bin")).unwrap();
        std::fs::create_dir_all(&rustup).unwrap();
        std::fs::write(cargo.join("bin/rustup"), "").unwrap();
        std::fs::write(cargo.join("credentials.toml"), "secret").unwrap();
        assert_eq!(
            toolchain(&cargo.join("bin"), Some(&rustup)),
            [cargo.join("bin"), rustup]
        );
    }
}
