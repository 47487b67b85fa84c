//! Property tests: parsers take arbitrary bytes without panicking, and
//! accept exactly what they should.

use std::pin::Pin;
use std::task::{Context, Poll};

use proptest::prelude::*;
use referee::bot::{LineReader, Next};
use referee::games::chomp::protocol as chomp_protocol;
use referee::games::chomp::{Coord, array};
use referee::games::evensteven::Card;
use referee::games::evensteven::input::parse_line;
use referee::games::septica::protocol as septica_protocol;
use referee::games::septica::rules::{self as septica_rules, Action};
use tokio::io::{AsyncRead, ReadBuf};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn card_parser_never_panics_and_round_trips(text in any::<String>()) {
        if let Ok(card) = Card::parse(&text) {
            prop_assert_eq!(card.to_string(), text);
        }
    }

    #[test]
    fn card_parser_on_card_like_text(text in "[0-9JQKAjqka]{0,3}[cdhsCDHSx ]?") {
        let _ = Card::parse(&text);
    }

    #[test]
    fn dealer_input_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(Some(spec)) = parse_line(&bytes) {
            prop_assert!((1..=13).contains(&spec.n));
            prop_assert!((1..=2_147_483_646).contains(&spec.seed));
        }
    }

    #[test]
    fn dealer_input_parser_on_number_like_text(text in "[ \t]*[0-9+-]{0,12}[ \t]*[0-9a-z+-]{0,12}[ \t\r]*") {
        let _ = parse_line(text.as_bytes());
    }

    #[test]
    fn array_files_never_panic(bytes in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'A'), Just(b'Z'), any::<u8>()], 0..200)) {
        if let Ok(rows) = array::parse(&bytes) {
            prop_assert!(!rows.is_empty());
            prop_assert!(rows.iter().all(|r| r.len() == rows[0].len() && r.iter().all(u8::is_ascii_uppercase)));
        }
    }

    #[test]
    fn chomp_messages_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), players in 0usize..5) {
        let mut input = &bytes[..];
        let _ = chomp_protocol::read_header(&mut input);
        let mut seen = vec![];
        let _ = chomp_protocol::read_update(&mut input, players, &mut seen);
    }

    #[test]
    fn septica_texts_never_panic(text in any::<String>(), start in any::<bool>()) {
        if let Ok(Action::Card(c)) = septica_protocol::parse_command(&text) {
            prop_assert!((7..=14).contains(&c));
        }
        let _ = septica_protocol::parse_message(&text, start);
        let _ = septica_rules::parse_deck(&text);
    }

    #[test]
    fn numeric_texts_never_panic(text in "[0-9RrGiBMKk +-]{0,24}") {
        let _ = text.parse::<Coord>();
        let _ = septica_protocol::parse_command(&text);
        let _ = septica_protocol::parse_message(&text, false);
        let _ = referee::units::parse_size(&text);
        let _ = referee::units::parse_duration(&text);
    }

    #[test]
    fn tournament_files_never_panic(text in any::<String>()) {
        let _ = referee::tournament::spec::parse(&text, std::path::Path::new("."));
    }

    #[test]
    fn line_reader_matches_a_simple_model(
        bytes in proptest::collection::vec(prop_oneof![Just(b'\n'), any::<u8>()], 0..300),
        chunks in proptest::collection::vec(1usize..40, 1..20),
        max_line in 0usize..24,
    ) {
        let got = read_all(&bytes, &chunks, max_line);
        prop_assert_eq!(got, model(&bytes, max_line));
    }
}

#[derive(Debug, PartialEq)]
enum Event {
    Line(Vec<u8>),
    TooLong,
    Eof(Vec<u8>),
}

/// What the reader should report: each line in turn, stopping at the first
/// line longer than the cap.
fn model(bytes: &[u8], max_line: usize) -> Vec<Event> {
    let mut events = vec![];
    let mut rest = bytes;
    loop {
        match rest.iter().position(|&b| b == b'\n') {
            Some(i) if i > max_line => {
                events.push(Event::TooLong);
                return events;
            }
            Some(i) => {
                events.push(Event::Line(rest[..i].to_vec()));
                rest = &rest[i + 1..];
            }
            None if rest.len() > max_line => {
                events.push(Event::TooLong);
                return events;
            }
            None => {
                events.push(Event::Eof(rest.to_vec()));
                return events;
            }
        }
    }
}

/// Delivers `bytes` in chunks of the given sizes (cycled).
struct Chunked<'a> {
    bytes: &'a [u8],
    chunks: &'a [usize],
    next: usize,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let size = self.chunks[self.next % self.chunks.len()]
            .min(buf.remaining())
            .min(self.bytes.len());
        self.next += 1;
        let (now, later) = self.bytes.split_at(size);
        buf.put_slice(now);
        self.bytes = later;
        Poll::Ready(Ok(()))
    }
}

fn read_all(bytes: &[u8], chunks: &[usize], max_line: usize) -> Vec<Event> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let source = Chunked {
            bytes,
            chunks,
            next: 0,
        };
        let mut reader = LineReader::new(source, max_line);
        let mut events = vec![];
        loop {
            match reader.next().await.unwrap() {
                Next::Line(r) => events.push(Event::Line(reader.get(r).to_vec())),
                Next::TooLong => {
                    events.push(Event::TooLong);
                    return events;
                }
                Next::Eof { unterminated } => {
                    events.push(Event::Eof(reader.get(unterminated).to_vec()));
                    return events;
                }
            }
        }
    })
}
