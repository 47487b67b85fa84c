//! A bot's program: where it is, whether this system can run it, and why
//! it could not be started ([`SpawnError`]); and the launcher that starts
//! it. Below the rest of starting a bot: the uids (`boxes.rs`), the sandbox
//! (`sandbox.rs`) and the start itself (`spawn.rs`) use it, and it uses
//! none of them.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nix::unistd::{AccessFlags, access};

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

/// The program run as `LAUNCHER __launch ...` to start bots, when set.
static LAUNCHER: OnceLock<PathBuf> = OnceLock::new();

/// Starts every bot and build from now on through `launcher`
/// (`referee-launch`, or the referee's own binary, which handles
/// [`LAUNCH_COMMAND`](super::spawn::LAUNCH_COMMAND) first thing in `main`).
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
pub(crate) fn shebang_of(head: &[u8]) -> Option<String> {
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
