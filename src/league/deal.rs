//! The league's side of its tables: dealing them into the database as
//! the matchmaking chooses them, and following the games its workers (its
//! own jobs among them) commit, for the standings, the matchmaking and
//! the live page.
//!
//! The league learns of games by polling the games table, a query by
//! the primary key every [`FOLLOW_EVERY`] (at once after its own jobs
//! commit), rather than by PostgreSQL's LISTEN/NOTIFY: a poll survives a
//! restarted server and a lost connection with nothing to subscribe
//! again, works the same on SQLite, and costs one indexed query.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::db::{Db, NewTable, TableState, lock};
use super::work::{Refused, Seats};
use super::{Dealt, Failed, Shared, State, line, note_failures};
use crate::exit::Status;
use crate::tournament::units::Entrant;

/// How often the league looks for games committed by workers.
pub const FOLLOW_EVERY: Duration = Duration::from_millis(250);

use super::notes::WORKER_SEEN;

/// The most games read from the database at a time.
const FOLLOW_BATCH: u64 = 1000;

/// The league's own jobs seat versions as the league holds them.
pub struct LeagueSeats(pub Arc<Shared>);

impl Seats for LeagueSeats {
    fn entrants(&self, ids: &[i64]) -> Option<Vec<Entrant>> {
        let state = self.0.lock();
        ids.iter()
            .map(|&id| {
                let v = &state.versions[state.version_of(id)?];
                v.player.program.is_ok().then(|| v.player.clone())
            })
            .collect()
    }
}

/// Deals tables on a thread of its own while the league runs: enough for
/// every job there is, its own `jobs` and its workers'.
pub fn keep_dealing(
    db: Arc<Mutex<Db>>,
    shared: Arc<Shared>,
    jobs: usize,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut workers = (Instant::now(), 0usize);
        loop {
            if workers.0 <= Instant::now() {
                let remote = lock(&db).workers(WORKER_SEEN).unwrap_or_default();
                workers = (
                    Instant::now() + Duration::from_secs(1),
                    remote.iter().map(|(_, jobs)| jobs).sum(),
                );
                if jobs == 0 {
                    note_unplayable(&db, &shared);
                }
            }
            // A worker elsewhere hears of a new table only when it next
            // looks: one more queued for each of its jobs keeps it busy.
            let capacity = (jobs + 2 * workers.1).max(1);
            match deal_one(&db, &shared, capacity) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(e) => return shared.stop((Status::Io, e)),
            }
            let state = shared.lock();
            if state.done {
                return;
            }
            drop(shared.wait(state, FOLLOW_EVERY));
        }
    })
}

/// Versions no live worker can play on its machine, for a league that
/// plays none itself: dealt no more, and their tables waiting count for
/// no room, so that the others play on (a worker that takes none of them
/// would otherwise leave the queue full of them).
fn note_unplayable(db: &Mutex<Db>, shared: &Shared) {
    let Ok(notes) = lock(db).worker_notes(WORKER_SEEN) else {
        return;
    };
    let unplayable = super::notes::unplayable_ids(&notes);
    let mut state = shared.lock();
    if state.unplayable != unplayable {
        state.unplayable = unplayable;
        drop(state);
        shared.changed.notify_all();
    }
}

/// Deals the next table if there is room for one (`capacity` tables at
/// once, `--games`) and the matchmaking has one; whether it did.
fn deal_one(db: &Mutex<Db>, shared: &Shared, capacity: usize) -> Result<bool, String> {
    let (seats, round, rotations) = {
        let mut state = shared.lock();
        if state.done || state.waiting_tables() >= capacity {
            return Ok(false);
        }
        let room = match state.limit {
            Some(n) => n.saturating_sub(state.counted + state.outstanding()),
            None => u64::MAX,
        };
        if room == 0 {
            return Ok(false);
        }
        match state.next_table(room) {
            Ok(table) => {
                state.waiting = None;
                table
            }
            Err(what) => {
                if state.waiting.as_deref() != Some(&what) {
                    eprintln!("league: waiting for {what}");
                    state.waiting = Some(what);
                }
                return Ok(false);
            }
        }
    };
    let ids: Vec<i64> = {
        let state = shared.lock();
        seats.iter().map(|&v| state.versions[v].id).collect()
    };
    let id = lock(db).deal_table(&NewTable {
        round,
        versions: &ids,
        rotations: &rotations,
    })?;
    let mut state = shared.lock();
    state.dealt(id, seats, &rotations);
    drop(state);
    shared.changed.notify_all();
    Ok(true)
}

impl State {
    /// Tables dealt and not yet done that some worker can play.
    fn waiting_tables(&self) -> usize {
        self.tables
            .values()
            .filter(|t| {
                !t.seats
                    .iter()
                    .any(|&v| self.unplayable.contains(&self.versions[v].id))
            })
            .count()
    }

    /// Table `id` is dealt: its games are in flight.
    fn dealt(&mut self, id: i64, seats: Vec<usize>, rotations: &[u64]) {
        let k = seats.len();
        for &rotation in rotations {
            let seated: Vec<usize> = (0..k).map(|s| seats[(s + rotation as usize) % k]).collect();
            for &v in &seated {
                self.versions[v].in_flight += 1;
            }
            self.recent.deal(&seated);
        }
        let left = rotations.len() as u64;
        self.tables.insert(id, Dealt { seats, left });
    }

    /// `n` of table `id`'s games are no longer in flight; the table is
    /// forgotten when `all` (it is done).
    fn landed(&mut self, id: i64, n: u64, all: bool) {
        let Some(table) = self.tables.get_mut(&id) else {
            return;
        };
        let n = if all { table.left } else { n.min(table.left) };
        table.left -= n;
        let seats = table.seats.clone();
        if all {
            self.tables.remove(&id);
        }
        for v in seats {
            let v = &mut self.versions[v];
            v.in_flight = v.in_flight.saturating_sub(n);
        }
    }
}

/// The tables a league started again finds open in its database (dealt
/// by its last run, claimed by workers maybe): followed as its own, or,
/// when a version in them plays no more, taken off the queue.
pub fn adopt_open_tables(db: &Mutex<Db>, shared: &Shared, own: &str) -> Result<(), String> {
    lock(db).release_claims_of(own)?;
    let open = lock(db).open_tables()?;
    let mut stale = Vec::new();
    let mut state = shared.lock();
    for table in open {
        let seats: Option<Vec<usize>> = table
            .versions
            .iter()
            .map(|&id| state.version_of(id))
            .collect();
        match seats {
            Some(seats) if seats.iter().all(|&v| state.versions[v].active) => {
                let left: Vec<u64> = table
                    .rotations
                    .iter()
                    .copied()
                    .filter(|r| !table.played.contains(r))
                    .collect();
                state.next_round = state.next_round.max(table.round + 1);
                state.dealt(table.id, seats, &left);
            }
            _ => stale.push(table.id),
        }
    }
    drop(state);
    lock(db).drop_queued_tables(&stale)?;
    Ok(())
}

/// Follows the games committed and the tables done on a thread of its
/// own, until the league is done.
pub fn keep_following(db: Arc<Mutex<Db>>, shared: Arc<Shared>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        loop {
            if let Err(failed) = follow(&db, &shared) {
                return shared.stop(failed);
            }
            let state = shared.lock();
            if state.done {
                return;
            }
            drop(shared.wait(state, FOLLOW_EVERY));
        }
    })
}

/// One look: the games committed since the last, then the tables done;
/// the league is done once it has its `--games`.
fn follow(db: &Mutex<Db>, shared: &Shared) -> Result<(), Failed> {
    let io = |e: String| (Status::Io, e);
    // The tables' states first: a table done then had its games committed
    // before, so the games read next include them all, and its games are
    // counted before it is forgotten (or another game would be dealt in
    // its place, past --games).
    let ids: Vec<i64> = shared.lock().tables.keys().copied().collect();
    let states = lock(db).table_states(&ids).map_err(io)?;
    loop {
        let after = shared.lock().committed;
        let games = lock(db).games_after(after, FOLLOW_BATCH).map_err(io)?;
        let more = games.len() as u64 == FOLLOW_BATCH;
        for (table, record) in games {
            shared.take_game(table, record)?;
        }
        if !more {
            break;
        }
    }
    for (id, state) in states {
        if let TableState::Done { outcome } = state {
            shared.table_done(id, outcome.as_deref())?;
        }
    }
    drop_stale_tables(db, shared).map_err(io)?;
    let finished = {
        let state = shared.lock();
        state.limit.is_some_and(|n| state.counted >= n)
    };
    if finished {
        lock(db).set_setting("finished", "1").map_err(io)?;
        shared.finish();
    }
    Ok(())
}

/// Tables still queued with a version that plays no more (a new version
/// entered, its entrant left, it failed) are taken off the queue.
fn drop_stale_tables(db: &Mutex<Db>, shared: &Shared) -> Result<(), String> {
    let stale: Vec<i64> = {
        let state = shared.lock();
        state
            .tables
            .iter()
            .filter(|(_, t)| t.seats.iter().any(|&v| !state.versions[v].active))
            .map(|(&id, _)| id)
            .collect()
    };
    if stale.is_empty() {
        return Ok(());
    }
    let dropped = lock(db).drop_queued_tables(&stale)?;
    let mut state = shared.lock();
    for id in dropped {
        state.landed(id, 0, true);
    }
    Ok(())
}

impl Shared {
    /// Waits for a change, `most` at the longest.
    pub(super) fn wait<'a>(
        &self,
        state: std::sync::MutexGuard<'a, State>,
        most: Duration,
    ) -> std::sync::MutexGuard<'a, State> {
        self.changed
            .wait_timeout(state, most)
            .unwrap_or_else(|e| e.into_inner())
            .0
    }

    /// The league stops, for `failed`.
    pub(super) fn stop(&self, failed: Failed) {
        let mut state = self.lock();
        state.stop.get_or_insert(failed);
        state.done = true;
        drop(state);
        self.changed.notify_all();
    }

    /// The league has its games.
    fn finish(&self) {
        self.lock().done = true;
        self.changed.notify_all();
    }

    /// A game committed, followed: counted, said, and in the standings.
    fn take_game(&self, table: Option<i64>, record: crate::game::GameRecord) -> Result<(), Failed> {
        println!("game {}: {}", record.index, line(&record));
        let mut state = self.lock();
        state.committed = state.committed.max(record.index);
        if let Some(table) = table {
            state.landed(table, 1, false);
        }
        if !record.is_void() {
            state.counted += 1;
        }
        // A game the referee failed itself is void: kept, counted for no
        // one; the matchmaking plays on. Too many in a row stop the league.
        let stop = state.referee_failures.note(&record);
        note_failures(&mut state.versions, &record);
        state.tally.add(record);
        let committed = state.committed;
        drop(state);
        self.changed.notify_all();
        self.updates.send_replace(committed);
        match stop {
            Some(stop) => Err((
                Status::Internal,
                format!("{stop}; run the league again to play on"),
            )),
            None => Ok(()),
        }
    }

    /// Table `id` is done. A version whose options the judge refused
    /// plays no more (the worker failed it in the database, as one that
    /// did not build); a refusal of the game's options stops the league.
    fn table_done(&self, id: i64, outcome: Option<&str>) -> Result<(), Failed> {
        self.lock().landed(id, 0, true);
        self.changed.notify_all();
        let Some(refused) = outcome.and_then(|o| serde_json::from_str::<Refused>(o).ok()) else {
            return Ok(());
        };
        let Some(version) = refused.version else {
            return Err((Status::Usage, refused.refused.describe()));
        };
        let mut state = self.lock();
        let Some(v) = state.version_of(version) else {
            return Ok(());
        };
        let why = format!("refused by the judge: {}", refused.refused.message);
        let v = &mut state.versions[v];
        if v.player.program.is_err() {
            return Ok(());
        }
        v.active = false;
        v.player.program = Err(crate::outcome::Disqualified::build_failed(why.clone()));
        eprintln!(
            "league: {} {}; it plays no more games",
            crate::text::terminal(&v.player.name),
            crate::text::terminal(&why)
        );
        drop(state);
        self.changed.notify_all();
        Ok(())
    }
}
