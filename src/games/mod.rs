//! The games. Each has its rules as plain synchronous functions (usable by
//! the reference bots too) and an async driver that talks to bots through
//! [`crate::bot`].

pub mod acesup;
pub mod chomp;
pub mod evensteven;
pub mod septica;

use std::io::{self, IsTerminal, Write};

use crate::bot::Bot;

/// Reports a player's fault the way every one-player referee does: on
/// standard output as `NAME: MESSAGE`, where a judge comparing outputs sees
/// it, and on standard error as `referee NAME: MESSAGE` (once only when
/// both go to the same terminal), followed by the player's last lines on
/// standard error.
pub(crate) fn report_fault(
    out: &mut impl Write,
    name: &str,
    bot: &Bot,
    message: &str,
) -> io::Result<()> {
    writeln!(out, "{name}: {message}")?;
    out.flush()?;
    if !(io::stdout().is_terminal() && io::stderr().is_terminal()) {
        eprintln!("referee {name}: {message}");
    }
    let tail = bot.stderr(|t| t.last_lines(10));
    if !tail.is_empty() {
        eprintln!("referee {name}: the player's last lines on standard error:");
        for line in tail {
            eprintln!("  | {line}");
        }
    }
    Ok(())
}
