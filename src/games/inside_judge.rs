//! A judge run inside the referee, on the game thread: the lines a judge
//! process would read and write, passed in memory. The judge is a future
//! that the harness polls when it waits for the judge's next message, and
//! that waits (is pending) only when it waits for the harness's: no
//! process, no pipe, no wake-up of another thread between a move and the
//! next `go` (docs/PERFORMANCE.md, section 15).
//!
//! The judge speaks the same protocol, in the same JSON lines, as it does
//! as a process (`referee __chess-judge`): one judge, two ways to run it.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// The lines between the harness and the judge.
#[derive(Default)]
struct Lines {
    /// What the harness wrote, whole lines; the judge has read up to `read`.
    to_judge: String,
    read: usize,
    /// The harness will write no more: the judge's input has ended.
    closed: bool,
    /// What the judge wrote; the harness has read up to `taken`.
    from_judge: Vec<u8>,
    taken: usize,
}

type Shared = Arc<Mutex<Lines>>;

fn lock(lines: &Shared) -> std::sync::MutexGuard<'_, Lines> {
    lines.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The judge's end: where it reads the harness's lines and writes its own.
pub struct JudgeEnd {
    lines: Shared,
}

impl JudgeEnd {
    /// Writes `bytes` for the harness (it reads them as lines).
    pub fn write(&mut self, bytes: &[u8]) {
        lock(&self.lines).from_judge.extend_from_slice(bytes);
    }

    /// Reads the harness's next line into `line` (with its `\n`): its
    /// length, or 0 once the harness has closed the judge's input. Waits
    /// until the harness has written one.
    pub async fn read_line(&mut self, line: &mut String) -> usize {
        std::future::poll_fn(|_| {
            let mut lines = lock(&self.lines);
            let lines = &mut *lines;
            let rest = &lines.to_judge[lines.read..];
            match rest.find('\n') {
                Some(end) => {
                    line.push_str(&rest[..=end]);
                    lines.read += end + 1;
                    if lines.read == lines.to_judge.len() {
                        lines.to_judge.clear();
                        lines.read = 0;
                    }
                    Poll::Ready(end + 1)
                }
                None if lines.closed => Poll::Ready(0),
                None => Poll::Pending,
            }
        })
        .await
    }
}

/// The judge as it runs: how it ended, once it has.
type Running = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// The harness's end of a judge run inside the referee.
pub struct InsideJudge {
    lines: Shared,
    judge: Option<Running>,
    ended: Option<Result<(), String>>,
}

/// What the harness gets when it asks for the judge's next line.
pub enum Next {
    Line(String),
    /// The judge waits for the harness's next line: it has nothing to say.
    Waiting,
    /// The judge has returned: `Err` with why when it failed.
    Ended(Result<(), String>),
}

impl InsideJudge {
    /// Starts the judge that `judge` makes of its end of the lines. It
    /// runs only when polled, by [`InsideJudge::next_line`].
    pub fn start<F>(judge: impl FnOnce(JudgeEnd) -> F) -> InsideJudge
    where
        F: Future<Output = Result<(), String>> + Send + 'static,
    {
        let lines = Shared::default();
        let end = JudgeEnd {
            lines: Arc::clone(&lines),
        };
        InsideJudge {
            lines,
            judge: Some(Box::pin(judge(end))),
            ended: None,
        }
    }

    /// Writes `line` (ending in `\n`) to the judge.
    pub fn send(&mut self, line: &[u8]) {
        lock(&self.lines)
            .to_judge
            .push_str(&String::from_utf8_lossy(line));
    }

    /// The judge's next line (without its line end): one it wrote already,
    /// or the first it writes when it runs on until it waits.
    pub fn next_line(&mut self) -> Next {
        if let Some(line) = self.written_line() {
            return Next::Line(line);
        }
        self.run_until_waiting();
        match (self.written_line(), &self.ended) {
            (Some(line), _) => Next::Line(line),
            (None, Some(ended)) => Next::Ended(ended.clone()),
            (None, None) => Next::Waiting,
        }
    }

    /// A line the judge wrote already, without running it.
    pub fn written_line(&mut self) -> Option<String> {
        let mut lines = lock(&self.lines);
        let lines = &mut *lines;
        let rest = &lines.from_judge[lines.taken..];
        let end = rest.iter().position(|&b| b == b'\n')?;
        let mut text = &rest[..end];
        if let Some(stripped) = text.strip_suffix(b"\r") {
            text = stripped;
        }
        let line = String::from_utf8_lossy(text).into_owned();
        lines.taken += end + 1;
        if lines.taken == lines.from_judge.len() {
            lines.from_judge.clear();
            lines.taken = 0;
        }
        Some(line)
    }

    /// Closes the judge's input and lets it end: how it ended.
    pub fn close(&mut self) -> Result<(), String> {
        lock(&self.lines).closed = true;
        self.run_until_waiting();
        self.ended.clone().unwrap_or_else(|| {
            self.judge = None;
            Err("it did not end when its input closed".to_owned())
        })
    }

    /// Runs the judge until it waits for the harness or returns. (A panic
    /// in it is the referee's: the binary's panic hook ends the run.)
    fn run_until_waiting(&mut self) {
        let Some(judge) = self.judge.as_mut() else {
            return;
        };
        let mut context = Context::from_waker(Waker::noop());
        if let Poll::Ready(ended) = judge.as_mut().poll(&mut context) {
            self.judge = None;
            self.ended = Some(ended);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Echoes each line back in capitals until its input ends.
    async fn shout(mut end: JudgeEnd) -> Result<(), String> {
        let mut line = String::new();
        loop {
            line.clear();
            if end.read_line(&mut line).await == 0 {
                return Ok(());
            }
            if line == "fail\n" {
                return Err("asked to".into());
            }
            end.write(line.to_uppercase().as_bytes());
        }
    }

    #[test]
    fn lines_go_both_ways_and_the_judge_waits_for_the_harness() {
        let mut judge = InsideJudge::start(shout);
        assert!(matches!(judge.next_line(), Next::Waiting));
        judge.send(b"hello\nworld\n");
        assert!(matches!(judge.next_line(), Next::Line(l) if l == "HELLO"));
        assert!(matches!(judge.next_line(), Next::Line(l) if l == "WORLD"));
        assert!(matches!(judge.next_line(), Next::Waiting));
        assert_eq!(judge.close(), Ok(()));
    }

    #[test]
    fn a_failure_is_the_judge_ending() {
        let mut judge = InsideJudge::start(shout);
        judge.send(b"fail\n");
        assert!(matches!(judge.next_line(), Next::Ended(Err(e)) if e == "asked to"));
        assert_eq!(judge.close(), Err("asked to".to_owned()));
    }
}
