//! Starting a bot program: through the launcher, in its enclosure, as its
//! uid; what is found and checked before (where the program is, why it
//! cannot start) is in `program.rs`, below this.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use nix::sys::signal::{SigHandler, SigSet, Signal};
use nix::unistd::Pid;

use super::BotSpec;
// `crate::bot::spawn::resolve` is still how `interactive` names it.
pub use super::program::resolve;
use super::program::{SpawnError, classify, launcher, read_head, shebang_of};
pub use super::sandbox::{
    Access, DROP_COMMAND, SANDBOX_COMMAND, check_hidden, check_sandbox, drop_main, sandbox_main,
    sandboxed,
};

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

/// The launcher's first argument: `referee-launch __launch PID LIMITS --
/// PROGRAM ARGS...`, or the same hidden subcommand of the referee's own
/// binary (see [`launch_main`]).
pub const LAUNCH_COMMAND: &str = "__launch";

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
    let mut cmd = match launcher() {
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
    let launcher = launcher()?;
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
    super::sandbox::helper_main("the bot", launch)
}

/// Becomes the hidden helper command that this process's first argument
/// names, when it is one of `helpers` (a command and its `main`); returns
/// when it names none of them.
pub fn run_helper(helpers: &[(&str, fn() -> !)]) {
    let Some(first) = std::env::args_os().nth(1) else {
        return;
    };
    if let Some((_, main)) = helpers.iter().find(|(command, _)| first == **command) {
        main();
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
