//! A line reader with a hard cap on line length.
//!
//! `tokio::io::AsyncBufReadExt::read_line` grows its buffer for as long as
//! the other side keeps writing, so a bot that writes one endless line would
//! make the referee allocate without bound. This reader keeps one buffer of
//! at most `max_line + 1` bytes (or [`INITIAL_CAPACITY`], if larger: reads
//! of short lines then come in chunks of that size) and reports a longer
//! line as such.
//!
//! `next` is cancel-safe: every byte read is kept in `self` before any await
//! point can be abandoned, so wrapping it in a timeout loses nothing.

use std::io;
use std::ops::Range;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Initial buffer size; the buffer grows up to `max_line + 1` only when a
/// long line needs it. Not smaller for a small `max_line`: the dealer's
/// input (lines of at most 1 KiB) was read a kilobyte at a time, each read
/// a trip through tokio's blocking pool.
const INITIAL_CAPACITY: usize = 8 * 1024;

/// What [`LineReader::next`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// A complete line; the range (for [`LineReader::get`]) excludes the
    /// `\n`.
    Line(Range<usize>),
    /// More than `max_line` bytes arrived without a `\n`. The reader is left
    /// where it was; the caller is expected to give up on this stream.
    TooLong,
    /// End of stream. `unterminated` holds any bytes after the last `\n`
    /// (empty when the stream ended cleanly).
    Eof { unterminated: Range<usize> },
}

pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// How many bytes after `start` are known to hold no `\n`, so a slow
    /// line is not rescanned from its beginning on every read.
    scanned: usize,
    max_line: usize,
    eof: bool,
    /// Dropping bytes up to and including the next `\n` (after
    /// [`LineReader::discard_line`]).
    skipping: bool,
    /// Bytes read from `inner` so far.
    total: u64,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R, max_line: usize) -> LineReader<R> {
        LineReader {
            inner,
            buf: vec![0; INITIAL_CAPACITY],
            start: 0,
            end: 0,
            scanned: 0,
            max_line,
            eof: false,
            skipping: false,
            total: 0,
        }
    }

    /// Drops the current (over-long) line: what is buffered of it now, and
    /// the rest of it as it arrives. Lets a caller keep reading a stream
    /// after [`Next::TooLong`].
    pub fn discard_line(&mut self) {
        self.skipping = true;
    }

    /// After [`Next::TooLong`]: the start of the over-long line, as much
    /// of it as is buffered (more than `max_line` bytes, unless a smaller
    /// cap's line ended within the first read).
    pub fn long_line_start(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// True when a complete line is already buffered, so that `next` would
    /// return it without reading.
    pub fn has_line(&self) -> bool {
        self.buf[self.start..self.end].contains(&b'\n')
    }

    /// How many bytes were read from the stream so far.
    pub fn bytes_read(&self) -> u64 {
        self.total
    }

    /// The bytes of a range returned by the latest call to `next`.
    pub fn get(&self, range: Range<usize>) -> &[u8] {
        &self.buf[range]
    }

    /// Reads until a complete line, a line too long, or the end of stream.
    pub async fn next(&mut self) -> io::Result<Next> {
        loop {
            if let Some(found) = self.take_buffered_line() {
                return Ok(found);
            }
            if self.eof {
                return Ok(self.take_rest());
            }
            self.make_room();
            let n = self.inner.read(&mut self.buf[self.end..]).await?;
            self.filled(n);
        }
    }

    /// Reads one byte, for protocols whose moves are single bytes. `None` at
    /// the end of the stream.
    pub async fn next_byte(&mut self) -> io::Result<Option<u8>> {
        if self.start == self.end && !self.eof {
            self.make_room();
            let n = self.inner.read(&mut self.buf[self.end..]).await?;
            self.filled(n);
        }
        Ok(self.take_byte())
    }

    /// The end of the stream, with what is left after the last `\n`.
    fn take_rest(&mut self) -> Next {
        let unterminated = self.start..self.end;
        self.start = self.end;
        self.scanned = 0;
        Next::Eof { unterminated }
    }

    /// Counts `n` bytes just read into `buf[end..]`; 0 is the end of the
    /// stream.
    fn filled(&mut self, n: usize) {
        self.total += n as u64;
        if n == 0 {
            self.eof = true;
        } else {
            self.end += n;
        }
    }

    /// The next buffered byte, if any.
    fn take_byte(&mut self) -> Option<u8> {
        if self.start == self.end {
            return None;
        }
        let byte = self.buf[self.start];
        self.start += 1;
        self.scanned = self.scanned.saturating_sub(1);
        Some(byte)
    }

    /// A complete or over-long line from what is already buffered.
    fn take_buffered_line(&mut self) -> Option<Next> {
        if self.skipping {
            match self.buf[self.start..self.end]
                .iter()
                .position(|&b| b == b'\n')
            {
                Some(offset) => {
                    self.start += offset + 1;
                    self.skipping = false;
                }
                None => self.start = self.end,
            }
            self.scanned = 0;
            if self.skipping {
                return None;
            }
        }
        let unscanned = &self.buf[self.start + self.scanned..self.end];
        match unscanned.iter().position(|&b| b == b'\n') {
            Some(offset) => {
                let line_end = self.start + self.scanned + offset;
                if line_end - self.start > self.max_line {
                    return Some(Next::TooLong);
                }
                let line = self.start..line_end;
                self.start = line_end + 1;
                self.scanned = 0;
                Some(Next::Line(line))
            }
            None => {
                self.scanned = self.end - self.start;
                (self.scanned > self.max_line).then_some(Next::TooLong)
            }
        }
    }

    /// Ensures `buf[end..]` is not empty: first by moving unconsumed bytes
    /// to the front, then by growing up to `max_line + 1`.
    fn make_room(&mut self) {
        if self.end < self.buf.len() {
            return;
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.end < self.buf.len() {
                return;
            }
        }
        // Full of one partial line of at most `max_line` bytes (otherwise
        // `take_buffered_line` would have said TooLong), so the cap is not
        // reached yet.
        let grown = (self.buf.len() * 2).min(self.max_line.saturating_add(1));
        // Never smaller: a buffer larger than a line's cap is not grown.
        self.buf.resize(grown.max(self.buf.len()), 0);
    }
}

/// A stream that can be read without waiting.
pub trait ReadNow {
    /// Reads what is there now: `None` when nothing is (the caller then
    /// waits through `AsyncRead`), `Some(Ok(0))` at the end of the stream.
    fn read_now(&mut self, buf: &mut [u8]) -> Option<io::Result<usize>>;
}

impl<R: AsyncRead + ReadNow + Unpin> LineReader<R> {
    /// What [`LineReader::next`] would return without waiting; `None` when
    /// no complete line is there yet. A bot that shares the referee's CPU
    /// has usually answered before the referee's write returned, and this
    /// takes its reply without the event loop, a timer or a future.
    pub fn next_now(&mut self) -> Option<io::Result<Next>> {
        loop {
            if let Some(found) = self.take_buffered_line() {
                return Some(Ok(found));
            }
            if self.eof {
                return Some(Ok(self.take_rest()));
            }
            self.make_room();
            match self.inner.read_now(&mut self.buf[self.end..])? {
                Ok(n) => self.filled(n),
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// A complete line that is here already (buffered, or readable from
    /// the stream without waiting); `None` otherwise. Unlike
    /// [`LineReader::next_now`] it leaves an over-long line and the end of
    /// the stream where they are, for the next [`LineReader::next`].
    pub fn complete_line_now(&mut self) -> Option<io::Result<Range<usize>>> {
        loop {
            match self.take_buffered_line() {
                Some(Next::Line(range)) => return Some(Ok(range)),
                Some(_) => return None,
                None if self.eof => return None,
                None => {}
            }
            self.make_room();
            match self.inner.read_now(&mut self.buf[self.end..])? {
                Ok(n) => self.filled(n),
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// What [`LineReader::next_byte`] would return without waiting.
    pub fn next_byte_now(&mut self) -> Option<io::Result<Option<u8>>> {
        if self.start == self.end && !self.eof {
            self.make_room();
            match self.inner.read_now(&mut self.buf[self.end..])? {
                Ok(n) => self.filled(n),
                Err(e) => return Some(Err(e)),
            }
        }
        Some(Ok(self.take_byte()))
    }
}

/// Strips what the rulings allow after a line's content: trailing spaces and
/// a carriage return, in any mix.
pub fn trim_line_end(line: &[u8]) -> &[u8] {
    let keep = line
        .iter()
        .rposition(|&b| b != b' ' && b != b'\r')
        .map_or(0, |i| i + 1);
    &line[..keep]
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(input: &[u8], max_line: usize) -> Vec<Result<Vec<u8>, &'static str>> {
        let mut reader = LineReader::new(input, max_line);
        let mut out = vec![];
        loop {
            match reader.next().await.unwrap() {
                Next::Line(r) => out.push(Ok(reader.get(r).to_vec())),
                Next::TooLong => {
                    out.push(Err("too long"));
                    return out;
                }
                Next::Eof { unterminated } => {
                    if !unterminated.is_empty() {
                        out.push(Ok(reader.get(unterminated).to_vec()));
                    }
                    out.push(Err("eof"));
                    return out;
                }
            }
        }
    }

    use crate::bot::block_on as run;

    #[test]
    fn splits_lines_and_reports_the_unterminated_tail() {
        let got = run(lines_of(b"ab\n\ncd\nef", 10));
        assert_eq!(
            got,
            vec![
                Ok(b"ab".to_vec()),
                Ok(vec![]),
                Ok(b"cd".to_vec()),
                Ok(b"ef".to_vec()),
                Err("eof")
            ]
        );
    }

    #[test]
    fn cap_is_inclusive() {
        assert_eq!(
            run(lines_of(b"12345\n", 5)),
            vec![Ok(b"12345".to_vec()), Err("eof")]
        );
        assert_eq!(run(lines_of(b"123456\n", 5)), vec![Err("too long")]);
        assert_eq!(run(lines_of(b"123456", 5)), vec![Err("too long")]);
    }

    #[test]
    fn long_lines_grow_the_buffer_only_to_the_cap() {
        let mut input = vec![b'x'; 100_000];
        input.push(b'\n');
        input.extend_from_slice(b"next\n");
        let got = run(lines_of(&input, 100_000));
        assert_eq!(got[0].as_ref().unwrap().len(), 100_000);
        assert_eq!(got[1], Ok(b"next".to_vec()));

        let big = vec![b'y'; 10_000_000];
        let mut reader = LineReader::new(&big[..], 65_536);
        assert_eq!(run(reader.next()).unwrap(), Next::TooLong);
        assert!(reader.buf.len() <= 65_537);
    }

    #[test]
    fn an_over_long_line_can_be_discarded() {
        let mut input = vec![b'x'; 50];
        input.extend_from_slice(b"\nnext\n");
        let mut reader = LineReader::new(&input[..], 10);
        assert_eq!(run(reader.next()).unwrap(), Next::TooLong);
        reader.discard_line();
        let Next::Line(r) = run(reader.next()).unwrap() else {
            panic!("expected a line")
        };
        assert_eq!(reader.get(r), b"next");
    }

    /// A line dropped after `TooLong` is dropped as it comes: however long
    /// it is, the buffer stays within the cap.
    #[test]
    fn a_discarded_line_is_never_buffered_whole() {
        let mut input = b"info ".to_vec();
        input.extend(vec![b'x'; 10_000_000]);
        input.extend_from_slice(b"\nnext\n");
        let mut reader = LineReader::new(&input[..], 65_536);
        assert_eq!(run(reader.next()).unwrap(), Next::TooLong);
        assert!(reader.long_line_start().starts_with(b"info x"));
        reader.discard_line();
        let Next::Line(r) = run(reader.next()).unwrap() else {
            panic!("expected a line")
        };
        assert_eq!(reader.get(r), b"next");
        assert!(reader.buf.len() <= 65_537);
    }

    #[test]
    fn bytes_and_lines_share_the_buffer() {
        let mut reader = LineReader::new(&b"NS\nline\n"[..], 16);
        assert_eq!(run(reader.next_byte()).unwrap(), Some(b'N'));
        assert_eq!(run(reader.next_byte()).unwrap(), Some(b'S'));
        assert_eq!(run(reader.next_byte()).unwrap(), Some(b'\n'));
        let Next::Line(r) = run(reader.next()).unwrap() else {
            panic!("expected a line")
        };
        assert_eq!(reader.get(r), b"line");
        assert_eq!(run(reader.next_byte()).unwrap(), None);
    }

    /// A pipe as the referee finds it: chunks that arrive over time, with
    /// moments (`None`) when nothing is there.
    struct Arrivals(std::collections::VecDeque<Option<Vec<u8>>>);

    impl ReadNow for Arrivals {
        fn read_now(&mut self, buf: &mut [u8]) -> Option<io::Result<usize>> {
            let chunk = match self.0.pop_front() {
                None => return Some(Ok(0)),
                Some(None) => return None,
                Some(Some(chunk)) => chunk,
            };
            let n = chunk.len().min(buf.len());
            buf[..n].copy_from_slice(&chunk[..n]);
            if n < chunk.len() {
                self.0.push_front(Some(chunk[n..].to_vec()));
            }
            Some(Ok(n))
        }
    }

    impl AsyncRead for Arrivals {
        fn poll_read(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            let this = self.get_mut();
            // Waiting ends when the next chunk comes.
            while this.0.front().is_some_and(Option::is_none) {
                this.0.pop_front();
            }
            let n = this.read_now(buf.initialize_unfilled()).unwrap_or(Ok(0));
            std::task::Poll::Ready(n.map(|n| buf.advance(n)))
        }
    }

    fn arrivals(chunks: &[Option<&[u8]>]) -> Arrivals {
        Arrivals(chunks.iter().map(|c| c.map(<[u8]>::to_vec)).collect())
    }

    #[test]
    fn a_line_is_taken_now_only_once_it_is_whole() {
        let mut reader = LineReader::new(
            arrivals(&[Some(b"ab"), None, Some(b"c\nd\n"), None, Some(b"e")]),
            16,
        );
        assert!(reader.next_now().is_none(), "half a line");
        let Some(Ok(Next::Line(r))) = reader.next_now() else {
            panic!("expected a line")
        };
        assert_eq!(reader.get(r), b"abc");
        let Some(Ok(Next::Line(r))) = reader.next_now() else {
            panic!("expected the buffered line")
        };
        assert_eq!(reader.get(r), b"d");
        assert!(reader.next_now().is_none(), "nothing there");
        let Some(Ok(Next::Eof { unterminated })) = reader.next_now() else {
            panic!("expected the end")
        };
        assert_eq!(reader.get(unterminated), b"e");
    }

    #[test]
    fn a_byte_is_taken_now_when_there_is_one() {
        let mut reader = LineReader::new(arrivals(&[None, Some(b"NS")]), 16);
        assert!(reader.next_byte_now().is_none());
        assert_eq!(reader.next_byte_now().unwrap().unwrap(), Some(b'N'));
        assert_eq!(reader.next_byte_now().unwrap().unwrap(), Some(b'S'));
        assert_eq!(reader.next_byte_now().unwrap().unwrap(), None);
        assert_eq!(reader.bytes_read(), 2);
    }

    proptest::proptest! {
        /// Taking lines as they arrive, waiting (`next`) only when nothing
        /// is there now, finds what reading the whole stream finds.
        #[test]
        fn lines_taken_now_are_the_lines_of_the_stream(
            chunks in proptest::collection::vec(
                proptest::option::of(proptest::collection::vec(
                    proptest::sample::select(b"ab\n\r ".to_vec()),
                    // A read of nothing is the end of a pipe.
                    1..12,
                )),
                0..12,
            ),
            max_line in 1usize..8,
        ) {
            let whole: Vec<u8> = chunks.iter().flatten().flatten().copied().collect();
            let expected = run(lines_of(&whole, max_line));
            let mut reader = LineReader::new(Arrivals(chunks.into_iter().collect()), max_line);
            let mut got = vec![];
            loop {
                let next = match reader.next_now() {
                    Some(next) => next.unwrap(),
                    None => run(reader.next()).unwrap(),
                };
                match next {
                    Next::Line(r) => got.push(Ok(reader.get(r).to_vec())),
                    Next::TooLong => {
                        got.push(Err("too long"));
                        break;
                    }
                    Next::Eof { unterminated } => {
                        if !unterminated.is_empty() {
                            got.push(Ok(reader.get(unterminated).to_vec()));
                        }
                        got.push(Err("eof"));
                        break;
                    }
                }
            }
            proptest::prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn trims_carriage_return_and_spaces() {
        assert_eq!(trim_line_end(b"Jc\r"), b"Jc");
        assert_eq!(trim_line_end(b"Jc  \r "), b"Jc");
        assert_eq!(trim_line_end(b" Jc"), b" Jc");
        assert_eq!(trim_line_end(b"\r\r"), b"");
    }
}
