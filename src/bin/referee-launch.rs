//! `referee-launch __launch PID LIMITS -- PROGRAM ARGS...`: starts one bot
//! for the referee (see `bot::spawn::launch_main`). A program of its own
//! because it starts in less time than the referee's much larger binary,
//! which also launches bots, where this one is not installed beside it.
//! `referee-launch __sandbox ...` then starts a sandboxed one's bubblewrap
//! (see `bot::spawn::sandbox_main`), and `referee-launch __watchdog` the
//! run's watchdog (see `bot::groups::watchdog_main`).

fn main() {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == referee::bot::groups::WATCHDOG_COMMAND)
    {
        referee::bot::groups::watchdog_main();
    }
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == referee::bot::SANDBOX_COMMAND)
    {
        referee::bot::sandbox_main();
    }
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == referee::bot::DROP_COMMAND)
    {
        referee::bot::drop_main();
    }
    referee::bot::launch_main();
}
