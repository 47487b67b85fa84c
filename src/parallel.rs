//! Independent games on several threads at once.
//!
//! One thread drives one game at a time on its own current-thread runtime,
//! like a lone `referee dealer`. Running the games of a tournament as
//! futures on one thread instead makes that thread the bottleneck: a
//! process spawn blocks its caller until the child has `exec`ed, and a
//! second game's moves wait while the first game's bot is being started.
//! With one thread per job, two jobs on two CPUs really run two games at
//! once (`docs/PERFORMANCE.md` has the numbers).
//!
//! A worker thread outlives every bot it starts (a game ends its bots
//! before it returns), which matters because a bot's parent-death signal
//! follows the thread that started it, not the process.
//!
//! With `pin`, worker `w` and the bots it starts are bound to the `w`-th
//! CPU (modulo their number) of those the referee may run on: a game's
//! referee and bots then share a CPU, where an exchange is cheapest,
//! concurrent games do not take each other's time, and the scheduler moves
//! other work off the CPUs that games hold (docs/PERFORMANCE.md, section
//! 15). A referee started under `taskset -c 2,3` pins to CPUs 2 and 3.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::sync::{mpsc, watch};

/// The games in flight. Results arrive through [`Games::next`] in the order
/// they finish. Dropping this stops the workers: games in flight are
/// abandoned (their bots killed) and no new ones start.
pub struct Games<R> {
    results: mpsc::UnboundedReceiver<Result<R, String>>,
    stop: watch::Sender<bool>,
    workers: Vec<JoinHandle<()>>,
}

/// Plays `play(item, cpu)` for every item on `jobs` threads. `cpu` is the
/// CPU the worker is pinned to (with `pin`); processes the game starts
/// inherit that binding. Items are taken from `items` one at a time, as
/// workers become free, so a run of any length holds only the games in
/// flight. A worker with no items left runs `end()` on its thread before
/// it stops (what it kept between games is ended there, by the thread
/// that started it); a stopped worker does not.
pub fn run<I, T, R, F, Fut, E, EndFut>(
    items: I,
    jobs: usize,
    pin: bool,
    play: F,
    end: E,
) -> Games<R>
where
    I: IntoIterator<Item = T>,
    I::IntoIter: Send + 'static,
    T: Send + 'static,
    R: Send + 'static,
    F: Fn(T, Option<usize>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R>,
    E: Fn() -> EndFut + Send + Sync + 'static,
    EndFut: Future<Output = ()>,
{
    let (sender, results) = mpsc::unbounded_channel();
    let (stop, stopped) = watch::channel(false);
    let items = items.into_iter();
    let most = items.size_hint().1.unwrap_or(usize::MAX);
    let items: Shared<_> = Arc::new(Mutex::new((items.fuse(), 0usize)));
    let (play, end) = (Arc::new(play), Arc::new(end));
    let allowed = allowed_cpus();
    let workers = (0..jobs.clamp(1, most.max(1)))
        .map(|w| {
            let (items, play, end) = (Arc::clone(&items), Arc::clone(&play), Arc::clone(&end));
            let (sender, failed) = (sender.clone(), sender.clone());
            let mut stopped = stopped.clone();
            let cpu = pin.then(|| allowed[w % allowed.len()]);
            // Built here, before any game starts: a runtime needs
            // descriptors, which the games in flight could have used up.
            let runtime = match game_runtime() {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = failed.send(Err(format!("cannot start a game thread: {e}")));
                    return None;
                }
            };
            std::thread::Builder::new()
                .name(format!("game-{}", w + 1))
                .spawn(move || {
                    if let Some(cpu) = cpu
                        && let Err(e) = pin_this_thread(cpu)
                    {
                        tracing::warn!("cannot pin worker {} to CPU {cpu}: {e}", w + 1);
                    }
                    work(runtime, &items, cpu, &*play, &*end, &sender, &mut stopped);
                })
                .map_err(|e| {
                    let _ = failed.send(Err(format!("cannot start a game thread: {e}")));
                })
                .ok()
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flatten()
        .collect();
    Games {
        results,
        stop,
        workers,
    }
}

/// The items, shared by the workers, and how many were taken (for
/// messages).
type Shared<I> = Arc<Mutex<(std::iter::Fuse<I>, usize)>>;

/// One worker: plays the items it takes, one after another on a runtime of
/// its own, sending each result; once none is left, runs `end`. A stop
/// abandons the game in flight (and `end`).
fn work<I, T, R, F, Fut, E, EndFut>(
    runtime: tokio::runtime::Runtime,
    items: &Shared<I>,
    cpu: Option<usize>,
    play: &F,
    end: &E,
    sender: &mpsc::UnboundedSender<Result<R, String>>,
    stopped: &mut watch::Receiver<bool>,
) where
    I: Iterator<Item = T>,
    F: Fn(T, Option<usize>) -> Fut,
    Fut: Future<Output = R>,
    E: Fn() -> EndFut,
    EndFut: Future<Output = ()>,
{
    while let Some((i, item)) = take(items) {
        let sent = match until_stopped(&runtime, stopped, play(item, cpu)) {
            Ok(Some(result)) => sender.send(Ok(result)),
            Ok(None) => return,
            Err(_) => sender.send(Err(format!("game {} of this run panicked", i + 1))),
        };
        if sent.is_err() {
            return;
        }
    }
    let _ = until_stopped(&runtime, stopped, end());
}

/// A game thread's runtime: one thread, its timers and its I/O.
fn game_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// Starts thread `name`, which runs `work` on a runtime of its own, as a
/// game thread's; when none can be made, it says so after `cannot` on
/// standard error, and ends.
pub fn runtime_thread(
    name: &str,
    cannot: &'static str,
    work: impl FnOnce(tokio::runtime::Runtime) + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || match game_runtime() {
            Ok(runtime) => work(runtime),
            Err(_) => eprintln!("{cannot}: no runtime"),
        })
}

/// Runs `future` on `runtime` until it ends (`Some` of its output) or the
/// run is stopped (`None`). A game that panics is reported, not silently
/// lost, and the worker goes on with the next one. (The referee binary's
/// panic hook ends the whole run first: there a panic is a bug, exit
/// status 70.)
fn until_stopped<O>(
    runtime: &tokio::runtime::Runtime,
    stopped: &mut watch::Receiver<bool>,
    future: impl Future<Output = O>,
) -> std::thread::Result<Option<O>> {
    std::panic::catch_unwind(AssertUnwindSafe(|| {
        runtime.block_on(async {
            tokio::select! {
                result = future => Some(result),
                _ = stopped.wait_for(|stop| *stop) => None,
            }
        })
    }))
}

/// The next item, with its number in the run (from 0).
fn take<I: Iterator>(items: &Shared<I>) -> Option<(usize, I::Item)> {
    let mut items = items.lock().unwrap_or_else(|e| e.into_inner());
    let (items, taken) = &mut *items;
    items.next().map(|item| {
        *taken += 1;
        (*taken - 1, item)
    })
}

impl<R> Games<R> {
    /// The next finished game; `None` when all are done. An `Err` means a
    /// worker could not run (its games would be missing).
    pub async fn next(&mut self) -> Option<Result<R, String>> {
        self.results.recv().await
    }
}

impl<R> Drop for Games<R> {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        self.results.close();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

/// The CPUs this process may use (its affinity mask and CPU quota, as
/// [`std::thread::available_parallelism`] reads them); 1 if unknown.
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Warns once, on standard error, when more bot processes may run at once
/// than there are CPUs: `jobs` games at once (`None` for commands that play
/// one game at a time; with the name of the setting, `--jobs`) times
/// `seats` bots per game.
///
/// A move's clock is wall-clock time, started before the message to the
/// bot is written (`docs/bots.md`, "The time model"). A bot that is ready
/// to run but waits for a CPU is charged for the wait, so on an
/// oversubscribed machine move times, timeouts and time controls depend on
/// the other bots as well as on this one. The run goes on (a user may mean
/// it, and bots that mostly wait for their input do not compete), but
/// says so once, as fastchess does for a concurrency above the hardware's.
pub fn warn_if_oversubscribed(command: &str, jobs: Option<(usize, &str)>, seats: usize) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if let Some(warning) = oversubscribed(jobs, seats, cpus()) {
        ONCE.call_once(|| eprintln!("referee {command}: warning: {warning}"));
    }
}

/// The warning's text, if `jobs` × `seats` is more than `cpus`.
fn oversubscribed(jobs: Option<(usize, &str)>, seats: usize, cpus: usize) -> Option<String> {
    let at_once = jobs.map_or(1, |(n, _)| n.max(1));
    let bots = at_once.saturating_mul(seats);
    if bots <= cpus {
        return None;
    }
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let (why, fix) = match jobs {
        Some((n, name)) if n > 1 && seats <= cpus => (
            format!("{name} {n} × {}", plural(seats, "seat")),
            format!(
                "run at most {} at once ({name} {}) for fair clocks",
                plural(cpus / seats, "game"),
                cpus / seats
            ),
        ),
        Some((n, name)) if n > 1 => (
            format!("{name} {n} × {}", plural(seats, "seat")),
            "run one game at a time with fewer seats, or use more CPUs, for fair clocks".into(),
        ),
        _ => (
            plural(seats, "seat"),
            "play with fewer seats, or use more CPUs, for fair clocks".into(),
        ),
    };
    Some(format!(
        "up to {bots} bot processes may run at once on {} ({why}): \
         move times will include waiting for a CPU; {fix}",
        plural(cpus, "CPU")
    ))
}

/// The CPUs this process may run on, in ascending order (never empty):
/// what `--pin` binds jobs to.
pub fn allowed_cpus() -> Vec<usize> {
    let allowed: Vec<usize> = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map(|set| {
            (0..nix::sched::CpuSet::count())
                .filter(|&cpu| set.is_set(cpu).unwrap_or(false))
                .collect()
        })
        .unwrap_or_default();
    if allowed.is_empty() {
        (0..cpus()).collect()
    } else {
        allowed
    }
}

/// Binds the calling thread, and the processes it starts from now on, to
/// the first CPU it may run on: `referee play --pin`, whose games run on
/// the calling thread. Says which CPU.
pub fn pin_to_first_cpu() -> nix::Result<usize> {
    let cpu = allowed_cpus()[0];
    pin_this_thread(cpu).map(|()| cpu)
}

/// Binds the calling thread (and the processes it starts later) to `cpu`.
fn pin_this_thread(cpu: usize) -> nix::Result<()> {
    let mut set = nix::sched::CpuSet::new();
    set.set(cpu)?;
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect<R>(mut games: Games<R>) -> Vec<Result<R, String>> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut all = vec![];
            while let Some(r) = games.next().await {
                all.push(r);
            }
            all
        })
    }

    async fn no_end() {}

    #[test]
    fn each_worker_ends_on_its_own_thread_after_its_last_game() {
        use std::collections::HashSet;
        let played = Arc::new(Mutex::new(HashSet::new()));
        let ended = Arc::new(Mutex::new(Vec::new()));
        let (p, e) = (Arc::clone(&played), Arc::clone(&ended));
        let results = collect(run(
            1..=10,
            2,
            false,
            move |_: u32, _| {
                let p = Arc::clone(&p);
                async move {
                    // Long enough that both workers take games.
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    p.lock().unwrap().insert(std::thread::current().id())
                }
            },
            move || {
                let e = Arc::clone(&e);
                async move { e.lock().unwrap().push(std::thread::current().id()) }
            },
        ));
        assert_eq!(results.len(), 10);
        let ended = ended.lock().unwrap().clone();
        assert_eq!(ended.len(), 2, "one end per worker");
        assert_ne!(ended[0], ended[1]);
        let played = played.lock().unwrap();
        assert!(
            ended.iter().all(|id| played.contains(id)),
            "on the worker's own thread"
        );
    }

    #[test]
    fn every_item_is_played_once_whatever_the_jobs() {
        for jobs in [1, 2, 5, 50] {
            let played = |i: u32, cpu| async move {
                assert_eq!(cpu, None);
                i * 10
            };
            let mut got: Vec<u32> = collect(run(1..=20, jobs, false, played, no_end))
                .into_iter()
                .map(Result::unwrap)
                .collect();
            got.sort_unstable();
            assert_eq!(
                got,
                (1..=20).map(|i| i * 10).collect::<Vec<_>>(),
                "jobs {jobs}"
            );
        }
    }

    #[test]
    fn items_are_taken_lazily() {
        // Far more items than memory could hold: only those played are made.
        let mut games = run(0..u64::MAX, 2, false, |i, _| async move { i }, no_end);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let got = runtime.block_on(async {
            let mut got = vec![];
            for _ in 0..100 {
                got.push(games.next().await.unwrap().unwrap());
            }
            got
        });
        drop(games);
        assert!(got.iter().all(|&i| i < 1000), "{got:?}");
    }

    #[test]
    fn no_items_no_results() {
        assert!(
            collect(run(
                Vec::<u32>::new(),
                2,
                false,
                |i, _| async move { i },
                no_end
            ))
            .is_empty()
        );
    }

    #[test]
    fn a_panicking_game_is_reported_and_the_others_still_play() {
        let played = |i: u32, _| async move {
            assert_ne!(i, 3, "game 3 fails on purpose");
            i
        };
        let results = collect(run(1..=6, 2, false, played, no_end));
        assert_eq!(results.len(), 6);
        let errors: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
        assert_eq!(errors, [&"game 3 of this run panicked".to_owned()]);
    }

    #[test]
    fn pinned_workers_are_told_their_cpu() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        for r in collect(run(
            vec![(); 8],
            2,
            true,
            |(), cpu| async move { cpu },
            no_end,
        )) {
            let cpu = r.unwrap().expect("a pinned worker has a CPU");
            assert!(cpu < cpus.min(2));
        }
    }

    #[test]
    fn dropping_the_games_stops_the_workers_promptly() {
        let started = std::time::Instant::now();
        let played = |_: u32, _| async move {
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        };
        let games = run(0..4, 2, false, played, no_end);
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(games);
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }

    #[test]
    fn more_bots_than_cpus_is_a_warning() {
        assert_eq!(oversubscribed(Some((1, "--jobs")), 1, 1), None);
        assert_eq!(oversubscribed(Some((2, "--jobs")), 1, 2), None);
        assert_eq!(oversubscribed(None, 2, 2), None);
        assert_eq!(
            oversubscribed(Some((2, "--jobs")), 5, 2).unwrap(),
            "up to 10 bot processes may run at once on 2 CPUs (--jobs 2 × 5 seats): move \
             times will include waiting for a CPU; run one game at a time with fewer seats, \
             or use more CPUs, for fair clocks"
        );
        assert_eq!(
            oversubscribed(Some((4, "--jobs")), 2, 4).unwrap(),
            "up to 8 bot processes may run at once on 4 CPUs (--jobs 4 × 2 seats): move \
             times will include waiting for a CPU; run at most 2 games at once (--jobs 2) \
             for fair clocks"
        );
        assert_eq!(
            oversubscribed(None, 5, 2).unwrap(),
            "up to 5 bot processes may run at once on 2 CPUs (5 seats): move times will \
             include waiting for a CPU; play with fewer seats, or use more CPUs, for fair clocks"
        );
    }
}
