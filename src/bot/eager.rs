//! Reading a bot's reply without asking the event loop first.
//!
//! Tokio learns that a pipe has data from `epoll_wait`, and it forgets the
//! pipe's readiness after every short read, so each reply normally costs an
//! `epoll_wait` and a `read`. But when the referee and the bot share a CPU,
//! the referee's `write` of a message usually hands the CPU to the bot,
//! which answers before the `write` even returns: the reply is already in
//! the pipe. [`EagerRead`] then tries the `read` first and skips the
//! event-loop round entirely, which is what a blocking baseline does. The
//! bot layer makes that attempt without a future at all (as [`ReadNow`],
//! through `LineReader::next_now`), and waits through tokio only when it
//! finds nothing.
//! [`write_now`] does the same for messages, which a pipe with room takes
//! at once.
//!
//! When a direct attempt finds nothing (`EAGAIN`), the next read goes
//! through tokio as usual, so tokio's readiness bookkeeping stays right.
//! The reader then stays with tokio for [`REPROBE`] reads before trying
//! directly again, so a bot on another CPU, whose replies are never early,
//! costs one wasted `read` per [`REPROBE`] replies. (`docs/PERFORMANCE.md`
//! has the measurements.)

use std::io;
use std::os::fd::AsFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use nix::errno::Errno;
use tokio::io::{AsyncRead, ReadBuf};

use super::lines::ReadNow;

/// Reads through tokio after a direct attempt found nothing.
const REPROBE: u8 = 1;

pub struct EagerRead<R> {
    inner: R,
    /// Reads left to go through tokio before trying directly again.
    through_tokio: u8,
}

impl<R> EagerRead<R> {
    pub fn new(inner: R) -> EagerRead<R> {
        EagerRead {
            inner,
            through_tokio: 0,
        }
    }
}

impl<R: AsFd> ReadNow for EagerRead<R> {
    fn read_now(&mut self, buf: &mut [u8]) -> Option<io::Result<usize>> {
        if self.through_tokio > 0 {
            return None;
        }
        // The descriptor is non-blocking (tokio made it so), so this never
        // stalls the runtime.
        loop {
            match nix::unistd::read(self.inner.as_fd(), buf) {
                Ok(n) => return Some(Ok(n)),
                Err(Errno::EINTR) => continue,
                Err(Errno::EAGAIN) => {
                    self.through_tokio = REPROBE;
                    return None;
                }
                Err(e) => return Some(Err(e.into())),
            }
        }
    }
}

impl<R: AsyncRead + AsFd + Unpin> AsyncRead for EagerRead<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(read) = this.read_now(buf.initialize_unfilled()) {
            return Poll::Ready(read.map(|n| buf.advance(n)));
        }
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if polled.is_ready() {
            this.through_tokio -= 1;
        }
        polled
    }
}

/// Writes what a non-blocking pipe takes at once: the number of bytes
/// written, 0 when the pipe is full.
pub fn write_now(pipe: impl AsFd, bytes: &[u8]) -> io::Result<usize> {
    loop {
        match nix::unistd::write(&pipe, bytes) {
            Ok(n) => return Ok(n),
            Err(Errno::EINTR) => continue,
            Err(Errno::EAGAIN) => return Ok(0),
            Err(e) => return Err(e.into()),
        }
    }
}
