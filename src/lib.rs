//! `referee`: referees and tournament harness for programs that play games
//! over standard input and output.
//!
//! - [`bot`] owns bot processes: spawning, deadlines, caps, shutdown.
//! - [`games`] holds each game's rules and its driver.
//! - [`record`] writes the JSON Lines results.
//! - [`exit`] defines the exit statuses shared by every subcommand.
//! - [`manifest`] lists a folder's entries with their SHA-256 and says
//!   what changed, came or went since.
//! - [`text`] makes names others chose harmless in terminals, logs, CSV
//!   files and file names.

pub mod bot;
pub mod ci;
pub mod cli;
pub mod exit;
pub mod game;
pub mod games;
pub mod interactive;
pub mod interrupt;
pub mod league;
pub mod manifest;
pub mod outcome;
pub mod parallel;
pub mod record;
pub mod replay;
pub mod rng;
pub mod stats;
pub mod text;
pub mod tournament;
pub mod units;
