//! Chess between UCI engines: the judge of the shipped game
//! (`games/chess/game.toml`), built into the referee's own binary and run
//! as its hidden subcommand [`JUDGE_COMMAND`], so that `game = "chess"`
//! needs nothing but the binary, after `cargo install` too. It speaks
//! judge protocol 2 as any external judge does (the referee starts it as
//! it starts `games/chess/judge.py`, the Python judge it replaced, kept
//! as the protocol's example), with the same behaviour, messages, PGN
//! and summary: docs/chess.md.
//!
//! The rules are `cozy-chess`'s move generation under python-chess's
//! rulings ([`board`]); the rest is plain functions over text and JSON,
//! no process, no clock of its own: the harness keeps the clocks.

pub mod board;
mod book;
mod judge;
mod options;
mod pgn;
mod py;

pub use judge::{inside as inside_judge, main as judge_main};

/// The referee's hidden subcommand that runs the chess judge:
/// `referee __chess-judge`, which `games/chess/game.toml` names as
/// `judge = ["referee", "__chess-judge"]`.
pub const JUDGE_COMMAND: &str = "__chess-judge";
