//! Noticing that a bot has exited without reaping it.
//!
//! Reaping frees the bot's pid, and with it the number of its process
//! group; a later signal to that group could then reach an unrelated
//! process that got the number. So the bot layer first waits for the exit
//! here, kills what is left of the group while the leader is still a
//! zombie, and only then reaps it.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// How often to look when no pidfd is available (kernels before 5.3).
const POLL_INTERVAL: Duration = Duration::from_millis(5);

pub(crate) enum ExitWatch {
    /// A pidfd: readable once the process has exited.
    Pidfd(AsyncFd<OwnedFd>),
    /// `waitid(WNOWAIT)` polling.
    Poll(Pid),
}

impl ExitWatch {
    pub(crate) fn new(pid: i32) -> ExitWatch {
        let registered = pidfd_open(pid).and_then(|fd| {
            // SAFETY: an OwnedFd keeps its one fd open and unchanged for as
            // long as the AsyncFd owns it.
            unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
                .map_err(|e| e.into_parts().1)
        });
        match registered {
            Ok(fd) => ExitWatch::Pidfd(fd),
            Err(e) => {
                tracing::debug!("no pidfd ({e}); polling for exits");
                ExitWatch::Poll(Pid::from_raw(pid))
            }
        }
    }

    /// Resolves once the process has exited. It stays a zombie until
    /// reaped, and later calls resolve at once.
    pub(crate) async fn exited(&self) {
        match self {
            // The readiness is not cleared, so it stays set.
            ExitWatch::Pidfd(fd) => drop(fd.readable().await),
            ExitWatch::Poll(pid) => loop {
                let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
                match waitid(Id::Pid(*pid), flags) {
                    Ok(WaitStatus::StillAlive) => tokio::time::sleep(POLL_INTERVAL).await,
                    // Exited, or no longer ours to wait for: either way, done.
                    _ => return,
                }
            },
        }
    }
}

fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this fd to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}
