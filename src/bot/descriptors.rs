//! A bot starts with descriptors 0, 1 and 2 and nothing else: not the
//! organiser's open log (`referee ... 9>>organiser.log`, which the shell
//! opens without close-on-exec, as it does every redirection), nor a lock
//! file, nor a pipe of the referee's own. The process that becomes the bot
//! (the launcher, or a fork of the referee) marks every other descriptor
//! close-on-exec just before `exec` (see `spawn::prepare_bot`); bubblewrap
//! then gets only what the sandbox's launcher opens for it, which the
//! sandbox's shell closes (see `spawn::sandbox_main`).

use nix::libc;

/// Marks every descriptor above standard error close-on-exec. Marked, not
/// closed: a failed `exec` is still reported through them (the standard
/// library's pipe for that is among them, and so is the launcher's
/// standard error, should it be moved). Only raw system calls, so that it
/// may run between fork and exec.
pub(super) fn close_inherited_on_exec() -> nix::Result<()> {
    // SAFETY: close_range(2) takes plain integers and touches no memory.
    let marked = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if marked == 0 {
        return Ok(());
    }
    // Before Linux 5.11 (no CLOSE_RANGE_CLOEXEC): one at a time, up to the
    // most this process may have open.
    let (most, _) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)?;
    let most = libc::c_int::try_from(most).unwrap_or(libc::c_int::MAX);
    for fd in 3..most {
        // SAFETY: fcntl(2) on a number: a closed one is EBADF, ignored.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};

    #[test]
    fn an_inherited_descriptor_is_marked_close_on_exec() {
        let file = std::fs::File::open("/dev/null").unwrap();
        // `dup` makes a descriptor without close-on-exec, as a shell's
        // redirection leaves it.
        let open = nix::unistd::dup(&file).unwrap();
        let flags = |fd| FdFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFD).unwrap());
        assert!(!flags(&open).contains(FdFlag::FD_CLOEXEC));
        super::close_inherited_on_exec().unwrap();
        assert!(flags(&open).contains(FdFlag::FD_CLOEXEC));
    }
}
