//! Bounded capture of a bot's standard error.
//!
//! A task drains the pipe continuously, so a bot that writes a lot to stderr
//! never blocks on it, and only the last `keep` bytes are held in memory.

use std::collections::VecDeque;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;

/// The last `keep` bytes a bot wrote to stderr, and how many it wrote in all
/// (and, for a build's log, its first bytes too).
#[derive(Debug)]
pub struct Tail {
    keep: usize,
    bytes: VecDeque<u8>,
    total: u64,
    /// The first `head_keep` bytes.
    head: Vec<u8>,
    head_keep: usize,
}

impl Tail {
    pub fn new(keep: usize) -> Tail {
        Tail::with_head(keep, 0)
    }

    /// A tail that also keeps the first `head` bytes: a compiler's first
    /// error, which a long log of errors after it would push out.
    pub fn with_head(keep: usize, head: usize) -> Tail {
        Tail {
            keep,
            bytes: VecDeque::new(),
            total: 0,
            head: Vec::new(),
            head_keep: head,
        }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        let room = self.head_keep.saturating_sub(self.head.len());
        self.head.extend_from_slice(&chunk[..room.min(chunk.len())]);
        let chunk = &chunk[chunk.len().saturating_sub(self.keep)..];
        let overflow = (self.bytes.len() + chunk.len()).saturating_sub(self.keep);
        self.bytes.drain(..overflow);
        self.bytes.extend(chunk);
    }

    /// Bytes written in all, including those no longer kept.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// What was written after the first `mark` bytes, as far as it is still
    /// kept (lossy UTF-8), and whether older bytes of it were dropped.
    pub fn since(&self, mark: u64) -> (String, bool) {
        let new = self.total.saturating_sub(mark);
        let kept = (self.bytes.len() as u64).min(new) as usize;
        let (a, b) = self.bytes.as_slices();
        let mut text: Vec<u8> = a.iter().chain(b).copied().collect();
        text.drain(..self.bytes.len() - kept);
        (
            String::from_utf8_lossy(&text).into_owned(),
            kept as u64 != new,
        )
    }

    /// The first bytes kept by [`Tail::with_head`] (lossy UTF-8), when the
    /// tail no longer holds them; else empty.
    pub fn head(&self) -> String {
        if self.total <= self.bytes.len() as u64 {
            return String::new();
        }
        String::from_utf8_lossy(&self.head).into_owned()
    }

    /// The last `n` lines (lossy UTF-8), for error messages.
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        last_lines(&self.since(0).0, n)
    }
}

/// The last `n` lines of `text`, for error messages.
pub fn last_lines(text: &str, n: usize) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().rev().take(n).map(str::to_owned).collect();
    lines.reverse();
    lines
}

/// A running drain of one stderr pipe into a shared [`Tail`].
pub struct Capture {
    tail: Arc<Mutex<Tail>>,
    task: Option<JoinHandle<()>>,
    /// A second descriptor for the pipe, to read what is waiting in it on
    /// demand (see [`Capture::catch_up`]).
    fd: Option<OwnedFd>,
    echo: Option<Arc<Mutex<Echo>>>,
}

/// Where `--show-stderr` copies a bot's standard error as it arrives: the
/// referee's own, byte for byte to a file or a pipe; to a terminal with
/// every control character escaped (see [`crate::text::TerminalStream`]),
/// since nothing a bot writes may drive the terminal.
struct Echo {
    escape: Option<crate::text::TerminalStream>,
}

impl Echo {
    fn new() -> Echo {
        use std::io::IsTerminal;
        Echo {
            escape: std::io::stderr()
                .is_terminal()
                .then(crate::text::TerminalStream::default),
        }
    }

    fn write(&mut self, chunk: &[u8]) {
        use std::io::Write;
        let _ = match &mut self.escape {
            Some(stream) => std::io::stderr().write_all(stream.push(chunk).as_bytes()),
            None => std::io::stderr().write_all(chunk),
        };
    }
}

impl Capture {
    /// Starts draining `pipe`. With `echo`, every chunk is also copied to
    /// the referee's own stderr as it arrives (for watching a bot live),
    /// escaped should that be a terminal (see [`Echo`]).
    pub fn start<R: AsyncRead + AsFd + Unpin + Send + 'static>(
        pipe: R,
        tail: Tail,
        echo: bool,
    ) -> Capture {
        let fd = nonblocking_dup(&pipe);
        let echo = echo.then(|| Arc::new(Mutex::new(Echo::new())));
        let mut capture = Capture::into_shared(pipe, Arc::new(Mutex::new(tail)), echo);
        capture.fd = fd;
        capture
    }

    /// Reads whatever is waiting in the pipe right now, without waiting for
    /// the drain task to be scheduled, so that a snapshot taken next holds
    /// everything the bot wrote before this call.
    pub fn catch_up(&self) {
        let Some(fd) = &self.fd else {
            return;
        };
        let mut tail = lock(&self.tail);
        // Small: this runs after every game, mostly to find nothing.
        let mut chunk = [0u8; 4 * 1024];
        while let Ok(n @ 1..) = nix::unistd::read(fd, &mut chunk) {
            if let Some(echo) = &self.echo {
                lock(echo).write(&chunk[..n]);
            }
            tail.push(&chunk[..n]);
        }
    }

    /// Drains `pipe` into the same tail as `self` (for a build log that
    /// interleaves stdout and stderr). The returned capture must be finished
    /// too.
    pub fn also<R: AsyncRead + Unpin + Send + 'static>(&self, pipe: R) -> Capture {
        Capture::into_shared(pipe, Arc::clone(&self.tail), None)
    }

    fn into_shared<R: AsyncRead + Unpin + Send + 'static>(
        mut pipe: R,
        tail: Arc<Mutex<Tail>>,
        echo: Option<Arc<Mutex<Echo>>>,
    ) -> Capture {
        let shared = Arc::clone(&tail);
        let echoed = echo.clone();
        let task = tokio::spawn(async move {
            let mut chunk = vec![0u8; 16 * 1024];
            // Read errors end the capture like EOF: there is nothing useful
            // to do with them, and the bot must not be blocked.
            while let Ok(n @ 1..) = pipe.read(&mut chunk).await {
                if let Some(echo) = &echoed {
                    lock(echo).write(&chunk[..n]);
                }
                lock(&shared).push(&chunk[..n]);
            }
        });
        Capture {
            tail,
            task: Some(task),
            fd: None,
            echo,
        }
    }

    /// Runs `f` on the tail as captured so far.
    pub fn with<T>(&self, f: impl FnOnce(&Tail) -> T) -> T {
        f(&lock(&self.tail))
    }

    /// Waits up to `limit` for the pipe to reach EOF (all writers gone), so
    /// the tail is complete; then stops draining.
    pub async fn finish(&mut self, limit: std::time::Duration) {
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(limit, task).await.is_err() {
                // A process outside the bot's group still holds the pipe.
                abort.abort();
            }
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// A non-blocking duplicate of `pipe`'s descriptor, or `None` (then
/// [`Capture::catch_up`] does nothing).
fn nonblocking_dup(pipe: &impl AsFd) -> Option<OwnedFd> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let fd = nix::unistd::dup(pipe.as_fd()).ok()?;
    let flags = OFlag::from_bits_truncate(fcntl(&fd, FcntlArg::F_GETFL).ok()?);
    fcntl(&fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).ok()?;
    Some(fd)
}

fn lock<T>(shared: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The tail stays consistent even if a holder panicked; keep using it.
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_last_bytes() {
        let mut tail = Tail::new(5);
        tail.push(b"abc");
        tail.push(b"defg");
        assert_eq!(tail.since(0), ("cdefg".to_string(), true));
        assert_eq!(tail.total(), 7);
        tail.push(b"0123456789");
        assert_eq!(tail.since(0).0, "56789");
        assert_eq!(tail.since(15), ("89".to_string(), false));
        assert_eq!(tail.since(17), (String::new(), false));
        assert_eq!(tail.head(), "");
    }

    #[test]
    fn keeps_the_first_bytes_once_the_tail_has_lost_them() {
        let mut tail = Tail::with_head(5, 3);
        tail.push(b"ab");
        assert_eq!(tail.head(), "");
        tail.push(b"cdefg");
        assert_eq!(tail.head(), "abc");
        assert_eq!(tail.since(0).0, "cdefg");
    }

    #[test]
    fn last_lines() {
        let mut tail = Tail::new(100);
        tail.push(b"one\ntwo\nthree\n");
        assert_eq!(tail.last_lines(2), vec!["two", "three"]);
        assert_eq!(tail.last_lines(9), vec!["one", "two", "three"]);
    }
}
