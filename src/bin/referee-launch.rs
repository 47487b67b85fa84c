//! `referee-launch __launch PID LIMITS -- PROGRAM ARGS...`: starts one bot
//! for the referee (see `bot::spawn::launch_main`). A program of its own
//! because it starts in less time than the referee's much larger binary,
//! which also launches bots, where this one is not installed beside it.
//! `referee-launch __sandbox ...` then starts a sandboxed one's bubblewrap
//! (see `bot::spawn::sandbox_main`), and `referee-launch __watchdog` the
//! run's watchdog (see `bot::groups::watchdog_main`).

use referee::bot::{self, groups};

fn main() {
    bot::run_helper(&[
        (groups::WATCHDOG_COMMAND, groups::watchdog_main),
        (bot::SANDBOX_COMMAND, bot::sandbox_main),
        (bot::DROP_COMMAND, bot::drop_main),
    ]);
    bot::launch_main();
}
