//! The judge of a game, as the harness talks to it: a process on pipes
//! (any judge, in any language), or the chess judge built into the referee
//! run inside it, on the game thread ([`InsideJudge`]). Both speak the
//! same lines; the harness does not tell them apart beyond this file.
//!
//! The shipped chess game (`judge = ["referee", "__chess-judge"]`) runs
//! inside: a move then costs no process switch and no pipe between the
//! referee and its judge (docs/PERFORMANCE.md, section 15). Any other
//! judge command, the same binary named by its path included, runs as a
//! process.

use futures_util::FutureExt;
use tokio::time::Instant;

use super::spec::OWN_PROGRAM;
use super::{ExternalGame, JUDGE_LIMIT};
use crate::bot::{Bot, BotError, BotLimits, BotSpec, Environment, later};
use crate::games::chess;
use crate::games::inside_judge::{InsideJudge, Next};

pub enum Judge {
    /// Boxed: a bot is large, and a judge is moved between games.
    Process(Box<Bot>),
    Inside(InsideJudge),
}

impl Judge {
    /// Starts `game`'s judge: inside the referee when it is the chess
    /// judge named as the referee's own subcommand, else its process
    /// under `limits`.
    pub fn start(game: &ExternalGame, limits: BotLimits) -> Result<Judge, String> {
        if let [program, command] = &game.judge[..]
            && program == OWN_PROGRAM
            && command == chess::JUDGE_COMMAND
        {
            return Ok(Judge::Inside(chess::inside_judge(game.dir.clone())));
        }
        let spec = BotSpec {
            program: game.judge_program(),
            args: game.judge[1..].to_vec(),
            dir: Some(game.dir.clone()),
            hide: vec![],
            // The organiser's program: the referee's environment.
            env: Environment::Inherited,
        };
        Bot::spawn(&spec, limits)
            .map(|bot| Judge::Process(Box::new(bot)))
            .map_err(|e| format!("the judge cannot be started: {e}"))
    }

    /// The judge's next line when it is ready now, without waiting.
    pub fn line_now(&mut self) -> Option<Result<String, String>> {
        match self {
            Judge::Process(bot) => bot
                .recv_line(later(Instant::now(), JUDGE_LIMIT), None)
                .now_or_never()
                .map(|got| got.map(|reply| reply.text.to_owned()).map_err(failed)),
            Judge::Inside(judge) => Some(inside_line(judge)),
        }
    }

    /// The judge's next line, within [`JUDGE_LIMIT`] (and its process's
    /// start-up allowance on its first).
    pub async fn next_line(&mut self) -> Result<String, String> {
        match self {
            Judge::Process(bot) => {
                let limit = JUDGE_LIMIT + bot.startup_allowance();
                bot.recv_line(later(Instant::now(), limit), None)
                    .await
                    .map(|reply| reply.text.to_owned())
                    .map_err(failed)
            }
            Judge::Inside(judge) => inside_line(judge),
        }
    }

    /// A line the judge has written already, if any.
    pub fn written_line(&mut self) -> Option<String> {
        match self {
            Judge::Process(bot) => bot.ready_line()?.ok(),
            Judge::Inside(judge) => judge.written_line(),
        }
    }

    /// Writes `line` (one message, with its `\n`) to the judge.
    pub async fn send(&mut self, line: &[u8]) -> Result<(), String> {
        match self {
            Judge::Process(bot) => bot.send_within(line, JUDGE_LIMIT).await.map_err(failed),
            Judge::Inside(judge) => {
                judge.send(line);
                Ok(())
            }
        }
    }

    /// Closes the judge's input and lets it end (a process within its
    /// grace).
    pub async fn shutdown(mut self) {
        match &mut self {
            Judge::Process(bot) => {
                let _ = bot.shutdown(None).await;
            }
            Judge::Inside(judge) => {
                let _ = judge.close();
            }
        }
    }

    /// Ends the judge now: its last lines on standard error (for one run
    /// inside, why it failed).
    pub async fn kill(mut self) -> String {
        match &mut self {
            Judge::Process(bot) => {
                let _ = bot.kill().await;
                bot.stderr(|t| t.last_lines(20)).join("\n")
            }
            Judge::Inside(judge) => judge.close().err().unwrap_or_default(),
        }
    }
}

/// The next line of a judge run inside: it never waits for the harness
/// when the harness waits for it, unless it has a bug.
fn inside_line(judge: &mut InsideJudge) -> Result<String, String> {
    match judge.next_line() {
        Next::Line(line) => Ok(line),
        Next::Ended(Ok(())) => Err("the judge ended before its `end` message".to_owned()),
        Next::Ended(Err(_)) => {
            Err("the judge ended before its `end` message: it failed (see its message)".to_owned())
        }
        Next::Waiting => Err(
            "the judge waits for a message while the harness waits for its: a bug in the judge"
                .to_owned(),
        ),
    }
}

/// A judge process's failure in words: the bot layer's message, with what
/// it means.
fn failed(error: BotError) -> String {
    match error {
        BotError::Exited { .. } | BotError::ClosedOutput => {
            format!("the judge ended before its `end` message: {error}")
        }
        _ => format!("the judge {error}"),
    }
}
