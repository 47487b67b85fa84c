//! The games. Each has its rules as plain synchronous functions (usable by
//! the reference bots too) and an async driver that talks to bots through
//! [`crate::bot`].

pub mod acesup;
pub mod chomp;
pub mod evensteven;
pub mod septica;
