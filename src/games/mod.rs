//! The games. Each has its rules as plain synchronous functions (usable by
//! the reference bots too) and an async driver that talks to bots through
//! [`crate::bot`].

pub mod acesup;
pub mod chess;
pub mod chomp;
pub mod evensteven;
pub mod external;
pub mod inside_judge;
pub mod septica;
pub mod shipped;

use std::io::{self, IsTerminal, Write};

use crate::bot::{Bot, Finished, Usage, UsageMark};
use crate::outcome::{Phase, Verdict};

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
    show_stderr_tail(
        &format!("referee {name}: the player's last lines on standard error:"),
        &bot.stderr(|t| t.last_lines(STDERR_TAIL_LINES)),
    );
    Ok(())
}

/// How many of a failed player's last lines on standard error are shown.
pub(crate) const STDERR_TAIL_LINES: usize = 10;

/// Shows `lines`, a failed player's last lines on standard error, under
/// `heading` (nothing when there are none). Each is escaped: what a bot
/// wrote must not act on the terminal (see [`crate::text`]).
pub(crate) fn show_stderr_tail(heading: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    eprintln!("{heading}");
    eprint!(
        "{}",
        crate::text::quoted_lines(lines.iter().map(String::as_str))
    );
}

/// Ends the bot of a single game (tournaments, ci): killed at once after a
/// failure, else given its grace period to exit. A bot that outstays the
/// grace period is a timeout of phase `exit_grace`, with the message: the
/// game's result stands, but the failure is recorded.
pub(crate) async fn end_single(bot: &mut Bot, failed: bool) -> Option<(Verdict, String)> {
    if failed {
        let _ = bot.kill().await;
        return None;
    }
    match bot.shutdown(None).await {
        // Killed for its memory after its last move: the limit decides.
        Ok(Finished {
            memory_overrun: Some(overrun),
            ..
        }) => {
            let error = crate::bot::BotError::MemoryLimit(overrun);
            Some((Verdict::from(&error), format!("limit: the player {error}")))
        }
        Ok(finished) if !finished.exited_in_grace => Some((
            Verdict::timeout(Phase::ExitGrace),
            "timeout: the player did not exit within the grace period after its input was closed"
                .to_owned(),
        )),
        _ => None,
    }
}

/// One game of a one-player game on its own, for tournaments and CI runs
/// (Even Steven's deals, Septica's matches).
#[derive(Clone, Debug)]
pub struct Single<P> {
    /// As in records: the game's own ending (`win`, `player`, ...), or the
    /// failure's status name.
    pub outcome: &'static str,
    pub verdict: Verdict,
    pub error: Option<String>,
    /// Each move's time (a timed-out move's wait included; the first
    /// reply, which includes the start-up, left out).
    pub micros: Vec<u64>,
    /// The first reply's time.
    pub startup_micros: Option<u64>,
    /// What the player wrote on standard error, where the game keeps it.
    pub stderr: String,
    /// Every play, as records keep them with `--record-moves`.
    pub plays: Vec<P>,
    /// What the player's processes used.
    pub usage: Usage,
}

impl<P> Single<P> {
    /// The game once its `bot` is ended ([`end_single`]): a failure on the
    /// way out replaces its verdict and error, and what the bot used is
    /// taken.
    pub(crate) async fn ended(mut self, bot: &mut Bot) -> Self {
        if let Some((late, message)) = end_single(bot, self.error.is_some()).await {
            self.verdict = late;
            self.error = Some(message);
        }
        self.usage = bot.usage_since(&mut UsageMark::default());
        self
    }
}
