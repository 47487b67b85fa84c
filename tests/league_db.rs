//! The league database's work methods, called directly (issue 42): the
//! contract every back end keeps. Tables are dealt, claimed once each
//! (two claimers at once get different tables), held by a lease that
//! another worker may take once it runs out (and then the first claim
//! records nothing), and each game of a table is recorded once, however
//! often it is committed.
//!
//! The same contract runs on SQLite (a temporary file) and on
//! PostgreSQL (a server of the test's own, `common::postgres`, skipped,
//! saying why, where it cannot start).

mod common;

use common::assert_has;

use std::collections::HashSet;
use std::time::Duration;

use referee::game::{GameRecord, SeatResult};
use referee::league::db::{
    Claim, Db, Location, Meta, NewTable, NewVersion, TableState, WorkerNote,
};

const LEASE: Duration = Duration::from_secs(60);

fn record(entrants: &[&str]) -> GameRecord {
    GameRecord {
        game: "evensteven".into(),
        index: 0,
        seed: 1,
        setup: serde_json::Map::new(),
        judge_error: None,
        results: entrants
            .iter()
            .map(|e| SeatResult {
                entrant: Some((*e).into()),
                ..SeatResult::default()
            })
            .collect(),
        time: "2026-01-01T00:00:00Z".into(),
        referee: "test".into(),
        tournament: None,
        format: None,
    }
}

fn version(entrant: &str) -> NewVersion<'_> {
    NewVersion {
        entrant,
        fingerprint: entrant,
        products: &[],
        build_ok: true,
        build_log: None,
    }
}

/// A league with two versions, and `tables` dealt between them.
fn league(coordinator: &mut Db, tables: usize) -> (Vec<i64>, Vec<i64>) {
    coordinator
        .set_meta(&Meta {
            game: "\"evensteven\"".into(),
            solo: false,
            seed: 1,
        })
        .unwrap();
    let a = coordinator.add_version(&version("ann")).unwrap().0;
    let b = coordinator.add_version(&version("bob")).unwrap().0;
    let dealt = (0..tables)
        .map(|round| {
            coordinator
                .deal_table(&NewTable {
                    round: round as u64 + 1,
                    versions: &[a, b],
                    rotations: &[0, 1],
                })
                .unwrap()
        })
        .collect();
    (vec![a, b], dealt)
}

/// Every table `db` can claim, until none is left.
fn claim_all(db: &mut Db, name: &str) -> Vec<Claim> {
    let mut claims = Vec::new();
    while let Some(table) = db.claim_table(name, LEASE, &|_| true).unwrap() {
        assert_eq!(table.played, Vec::<u64>::new());
        assert_eq!(table.rotations, [0, 1]);
        claims.push(Claim {
            table: table.id,
            claim: table.claim,
        });
    }
    claims
}

/// Two workers claim every table at once, each until none is left: no
/// table is claimed twice, none is left over.
fn claims_at_once(first: &mut Db, second: &mut Db, dealt: &[i64]) -> Vec<Claim> {
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| claim_all(first, "w1"));
        let b = s.spawn(|| claim_all(second, "w2"));
        (a.join().unwrap(), b.join().unwrap())
    });
    let ids: HashSet<i64> = a.iter().chain(&b).map(|c| c.table).collect();
    assert_eq!(ids.len(), a.len() + b.len(), "a table claimed twice");
    assert_eq!(ids, dealt.iter().copied().collect::<HashSet<_>>());
    a.into_iter().chain(b).collect()
}

/// The contract, on a coordinator's database and two workers that
/// `join` it once it is a league's.
fn contract(coordinator: &mut Db, join: impl Fn() -> Db) {
    let (versions, dealt) = league(coordinator, 8);
    let (first, second) = (&mut join(), &mut join());
    assert_eq!(coordinator.open_tables().unwrap().len(), 8);
    let claims = claims_at_once(first, second, &dealt);
    let claim = claims[0];

    // A game committed twice (a retry) is recorded once.
    let mut game = record(&["ann", "bob"]);
    let number = first
        .commit_game(&mut game, claim, 1, 0, &versions)
        .unwrap();
    assert_eq!(number, Some(1));
    assert_eq!(game.index, 1);
    let again = first.commit_game(&mut record(&["ann", "bob"]), claim, 1, 0, &versions);
    assert_eq!(again.unwrap(), None);
    assert_eq!(coordinator.games().unwrap(), 1);

    let none: [Claim; 0] = [];
    // Renewed: held. Released: back in the queue, claimed again with a
    // new claim, and the old one records nothing and is lost.
    assert_eq!(first.renew_claims("w1", &[claim], LEASE).unwrap(), none);
    first.release_table(claim).unwrap();
    let states = coordinator.table_states(&[claim.table]).unwrap();
    assert_eq!(states, [(claim.table, TableState::Queued)]);
    let retaken = second.claim_table("w2", LEASE, &|_| true).unwrap().unwrap();
    assert_eq!(retaken.id, claim.table);
    assert!(retaken.claim > claim.claim);
    assert_eq!(retaken.played, [0], "rotation 0 is recorded already");
    let stale = first.commit_game(&mut record(&["bob", "ann"]), claim, 1, 1, &versions);
    assert_eq!(stale.unwrap(), None, "a lost claim records nothing");
    assert_eq!(first.renew_claims("w1", &[claim], LEASE).unwrap(), [claim]);

    // A lease that runs out: another worker claims the table.
    let short = claims[1];
    assert_eq!(
        first.renew_claims("w1", &[short], Duration::ZERO).unwrap(),
        none
    );
    std::thread::sleep(Duration::from_millis(20));
    let expired = second.claim_table("w2", LEASE, &|_| true).unwrap().unwrap();
    assert_eq!(expired.id, short.table);
    assert_eq!(expired.claim, short.claim + 1);
    let late = first.commit_game(&mut record(&["ann", "bob"]), short, 2, 0, &versions);
    assert_eq!(late.unwrap(), None);

    // The new claim records, numbered on; games_after reads them on.
    let retaken = Claim {
        table: retaken.id,
        claim: retaken.claim,
    };
    let mut game = record(&["bob", "ann"]);
    let number = second.commit_game(&mut game, retaken, 1, 1, &versions);
    assert_eq!(number.unwrap(), Some(2));
    second.finish_table(retaken, None).unwrap();
    let after = coordinator.games_after(0, 10).unwrap();
    let numbers: Vec<(Option<i64>, u64)> = after.iter().map(|(t, r)| (*t, r.index)).collect();
    assert_eq!(numbers, [(Some(claim.table), 1), (Some(claim.table), 2)]);
    assert_eq!(coordinator.games_after(1, 10).unwrap().len(), 1);
    assert_eq!(
        coordinator.table_states(&[retaken.table]).unwrap(),
        [(retaken.table, TableState::Done { outcome: None })]
    );

    drop_queued(coordinator, first, &versions);
    notes(coordinator, second, &versions);
}

/// What workers say of themselves: a version declined again is replaced,
/// voids are counted (a worker not seen yet is made), and it all goes
/// with the worker.
fn notes(coordinator: &Db, worker: &Db, versions: &[i64]) {
    worker.worker_seen("w1", 3).unwrap();
    worker
        .decline_version("w1", versions[1], "no java")
        .unwrap();
    worker
        .decline_version("w1", versions[0], "no python")
        .unwrap();
    worker
        .decline_version("w1", versions[1], "no java 21")
        .unwrap();
    worker.void_game("w1", "out of disk").unwrap();
    worker.void_game("w1", "out of memory").unwrap();
    worker.void_game("w9", "cannot fork").unwrap();
    // Seen again: what it said stays.
    worker.worker_seen("w1", 4).unwrap();
    let note =
        |name: &str, jobs, void_games, last_void: &str, declined: &[(i64, &str)]| WorkerNote {
            name: name.into(),
            jobs,
            void_games,
            last_void: Some(last_void.into()),
            declined: declined
                .iter()
                .map(|(v, why)| (*v, (*why).into()))
                .collect(),
        };
    let declined = [(versions[0], "no python"), (versions[1], "no java 21")];
    assert_eq!(
        coordinator.worker_notes(LEASE).unwrap(),
        [
            note("w1", 4, 2, "out of memory", &declined),
            note("w9", 0, 1, "cannot fork", &[]),
        ]
    );
    assert!(coordinator.worker_notes(Duration::ZERO).unwrap().len() <= 2);
    worker.worker_gone("w1").unwrap();
    worker.worker_seen("w1", 1).unwrap();
    let notes = coordinator.worker_notes(LEASE).unwrap();
    assert_eq!(
        notes[0],
        WorkerNote {
            last_void: None,
            ..note("w1", 1, 0, "", &[])
        }
    );
    worker.worker_gone("w1").unwrap();
    worker.worker_gone("w9").unwrap();
    assert_eq!(coordinator.worker_notes(LEASE).unwrap(), []);
}

/// Tables still queued are dropped; claimed ones are not.
fn drop_queued(coordinator: &mut Db, worker: &mut Db, versions: &[i64]) {
    let queued: Vec<i64> = (0..2)
        .map(|_| {
            coordinator
                .deal_table(&NewTable {
                    round: 9,
                    versions,
                    rotations: &[0],
                })
                .unwrap()
        })
        .collect();
    let only_mine = |v: &[i64]| v == versions;
    let claimed = worker
        .claim_table("w1", LEASE, &only_mine)
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, queued[0]);
    let dropped = coordinator.drop_queued_tables(&queued).unwrap();
    assert_eq!(dropped, [queued[1]]);
    assert_eq!(
        coordinator.table_states(&queued).unwrap(),
        [
            (queued[0], TableState::Claimed),
            (
                queued[1],
                TableState::Done {
                    outcome: Some("\"dropped\"".into())
                }
            )
        ]
    );
    // A worker that cannot play the versions takes nothing.
    coordinator
        .deal_table(&NewTable {
            round: 10,
            versions,
            rotations: &[0],
        })
        .unwrap();
    assert!(
        worker
            .claim_table("w1", LEASE, &|_| false)
            .unwrap()
            .is_none()
    );
    worker.worker_seen("w1", 3).unwrap();
    assert_eq!(coordinator.workers(LEASE).unwrap(), [("w1".to_string(), 3)]);
    worker.worker_gone("w1").unwrap();
    assert!(coordinator.workers(LEASE).unwrap().is_empty());
}

#[test]
fn the_work_contract_on_sqlite() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let at = Location::File(dir.path().join("league.db"));
    let mut coordinator = Db::open(&at, false).unwrap();
    let err = Db::open(&at, false).err().unwrap();
    assert_has(&err, "one league per database");
    contract(&mut coordinator, || {
        Db::join(&at).unwrap().expect("a league in it")
    });
}

#[test]
fn the_work_contract_on_postgresql() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let server = match common::postgres::Server::start(tmp) {
        Ok(server) => server,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let at = Location::Url(server.url());
    let mut coordinator = Db::open(&at, false).unwrap();
    let err = Db::open(&at, false).err().unwrap();
    assert_has(&err, "one league per database");
    contract(&mut coordinator, || {
        Db::join(&at).unwrap().expect("a league in it")
    });

    // A database with no league in it is refused to a reader; a worker
    // waits for its league to start there.
    let empty = Location::Url(server.another("empty").unwrap());
    assert!(Db::join(&empty).unwrap().is_none());
    let err = Db::read(&empty).err().unwrap();
    assert_has(&err, "not a league's database");
}
