//! Finding and starting a bot program, with errors that say exactly why a
//! program could not be started.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use nix::sys::signal::{SigHandler, SigSet, Signal};
use nix::unistd::{AccessFlags, Pid, access};

/// Why a bot could not be started. Each case names the program.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("{}: no such file", .0.display())]
    NotFound(PathBuf),
    #[error("{0:?}: not found in the current directory or on PATH")]
    NotOnPath(OsString),
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
    #[error(
        "--sandbox runs bots under bubblewrap, but `bwrap` is not installed \
         (Debian and Ubuntu: apt-get install bubblewrap)"
    )]
    NoSandbox,
}

/// Where `program` is. A name with a `/` is a path (relative to the
/// referee's working directory). A bare name is looked for in the current
/// directory first, as the statement's `dealer evensteven` expects, and then
/// on `PATH`, as a shell would.
pub fn resolve(program: &OsStr) -> Result<PathBuf, SpawnError> {
    let as_path = Path::new(program);
    if program.as_encoded_bytes().contains(&b'/') {
        let path = std::path::absolute(as_path).map_err(|source| SpawnError::Other {
            path: as_path.to_owned(),
            source,
        })?;
        check_runnable(&path)?;
        return Ok(path);
    }
    let here = Path::new(".").join(as_path);
    if here.is_file() {
        let path = std::path::absolute(&here).unwrap_or(here);
        check_runnable(&path)?;
        return Ok(path);
    }
    let search = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&search)
        .map(|dir| dir.join(as_path))
        .find(|candidate| candidate.is_file() && access(candidate, AccessFlags::X_OK).is_ok())
        .ok_or_else(|| SpawnError::NotOnPath(program.to_owned()))
}

/// The command line that runs `path` under bubblewrap: no network (a
/// network namespace of its own), the whole file system read-only, a
/// private writable `/tmp`, its own `/dev` and `/proc`, in its working
/// directory. None of the games needs a bot to write anywhere else. It dies
/// with its parent. bubblewrap must be on `PATH`.
///
/// The private `/tmp` would hide a bot that lives under `/tmp` (a checkout
/// in a temporary directory, a CI workspace): its working directory and its
/// program's directory are bound back in, read-only like the rest.
pub fn sandboxed(
    path: &Path,
    args: &[OsString],
    dir: Option<&Path>,
) -> Result<(PathBuf, Vec<OsString>), SpawnError> {
    let bwrap = resolve(OsStr::new("bwrap")).map_err(|_| SpawnError::NoSandbox)?;
    let dir = match dir {
        Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned()),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    };
    let mut wrapped: Vec<OsString> = [
        "--unshare-all",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    let program_dir = std::path::absolute(path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_owned));
    let mut under_tmp: Vec<PathBuf> = [Some(dir.clone()), program_dir]
        .into_iter()
        .flatten()
        .filter(|d| d.starts_with("/tmp") && d != Path::new("/tmp"))
        .collect();
    // Parents first, so that a deeper bind is not hidden by a shallower one.
    under_tmp.sort();
    under_tmp.dedup();
    for d in under_tmp {
        wrapped.extend([
            "--ro-bind".into(),
            d.clone().into_os_string(),
            d.into_os_string(),
        ]);
    }
    wrapped.push("--chdir".into());
    wrapped.push(dir.into_os_string());
    wrapped.push("--".into());
    wrapped.push(path.as_os_str().to_owned());
    wrapped.extend(args.iter().cloned());
    Ok((bwrap, wrapped))
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
    Ok(())
}

/// How much lower than the referee's a bot's scheduling priority is.
pub const BOT_NICENESS: i32 = 10;

/// Builds the command for a bot: its own process group, piped stdio, and a
/// parent-death signal so that it dies with the referee even when the
/// referee is killed with SIGKILL.
pub(crate) fn command(
    path: &Path,
    args: &[OsString],
    dir: Option<&Path>,
    resources: super::Resources,
) -> Result<tokio::process::Command, SpawnError> {
    let mut cmd = tokio::process::Command::new(path);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = dir {
        if let Err(source) = std::fs::read_dir(dir) {
            return Err(SpawnError::BadDirectory {
                dir: dir.to_owned(),
                source,
            });
        }
        cmd.current_dir(dir);
    }
    let referee = Pid::this();
    // SAFETY: the closure runs in the forked child before exec and only makes
    // raw system calls (sigprocmask, sigaction, prctl, getppid, _exit): no
    // allocation, no locks.
    unsafe {
        cmd.pre_exec(move || {
            // A bot starts with every signal deliverable and default
            // handling, whatever the referee blocked (its signal thread
            // blocks SIGINT, SIGTERM and SIGHUP) or inherited as ignored
            // (nohup, background jobs): the grace-then-SIGTERM shutdown
            // depends on it.
            SigSet::empty().thread_set_mask()?;
            for signal in [
                Signal::SIGHUP,
                Signal::SIGINT,
                Signal::SIGQUIT,
                Signal::SIGTERM,
                Signal::SIGPIPE,
            ] {
                nix::sys::signal::signal(signal, SigHandler::SigDfl)?;
            }
            use nix::sys::resource::{Resource, setrlimit};
            for (resource, limit) in [
                (Resource::RLIMIT_AS, resources.address_space),
                (Resource::RLIMIT_NPROC, resources.processes),
                (Resource::RLIMIT_FSIZE, resources.file_size),
                (Resource::RLIMIT_NOFILE, resources.open_files),
                (Resource::RLIMIT_CPU, resources.cpu_seconds),
            ] {
                if let Some(limit) = limit {
                    // At the soft CPU limit the kernel sends SIGXCPU; at
                    // the hard one SIGKILL, which would hide which limit
                    // it was. A second more of hard limit lets SIGXCPU
                    // (fatal by default) name it, and still stops a bot
                    // that catches it.
                    let hard = if resource == Resource::RLIMIT_CPU {
                        limit.saturating_add(1)
                    } else {
                        limit
                    };
                    setrlimit(resource, limit, hard)?;
                }
            }
            // Bots run at a lower priority than the referee (nice +10
            // from its own): when more bots than CPUs are busy, the
            // referee still gets a CPU at once when a deadline passes or
            // a reply comes, so a move's time is read when it happens,
            // not when the bots let the referee run. The referee uses
            // little CPU, so this costs the bots next to nothing. Errors
            // are ignored: a nice value cannot fail to be raised.
            // SAFETY: nice is a plain system call.
            let _ = nix::libc::nice(BOT_NICENESS);
            // PR_SET_PDEATHSIG is tied to the thread that forks. Bots are
            // spawned from the runtime's long-lived threads, never from a
            // blocking-pool thread that could exit early.
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            // The referee may have died between fork and prctl; then no
            // signal would ever come.
            if nix::unistd::getppid() != referee {
                nix::libc::_exit(1);
            }
            Ok(())
        });
    }
    Ok(cmd)
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
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
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
