//! `referee-launch __launch PID LIMITS -- PROGRAM ARGS...`: starts one bot
//! for the referee (see `bot::spawn::launch_main`). A program of its own
//! because it starts in less time than the referee's much larger binary,
//! which also launches bots, where this one is not installed beside it.

fn main() {
    referee::bot::launch_main();
}
