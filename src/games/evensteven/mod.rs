//! Even Steven: a one-person card game, judged by the contest's `dealer`.
//! Statement: `../shared/seeds/001_909618e4b443d0cf.txt`; the project's
//! description of the rules and rulings: `docs/evensteven.md`.

pub mod cards;
pub mod deal;
pub mod dealer;
pub mod input;
pub mod record;
pub mod strategy;

pub use cards::{Card, CardError, Suit};
pub use deal::Deal;
