//! Every string a bot or a build produces is stored, and read back byte
//! for byte, on both back ends (issue 48): NUL and the other control
//! characters, any Unicode, as build logs, names, a game's stderr and
//! moves, a table's outcome, a failure's why, settings, a version's
//! player and what a worker says of itself. Then `league export` of the
//! SQLite and of the PostgreSQL league, which hold the same games, writes
//! the same files. PostgreSQL is a server of the test's own
//! (`common::postgres`), skipped, saying why, where it cannot start.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use referee::game::{GameRecord, Score, SeatResult};
use referee::league::db::{Claim, Db, Location, Meta, NewTable, NewVersion, TableState};
use serde_json::{Value, json};

const LEASE: Duration = Duration::from_secs(60);

/// A string of the characters that break text: NUL, SOH (the escape on
/// PostgreSQL) and what follows it there, other control characters, and
/// characters of 2, 3 and 4 bytes.
fn text() -> impl Strategy<Value = String> {
    let char = prop_oneof![
        3 => Just('\0'),
        2 => Just('\u{1}'),
        2 => prop::sample::select(vec!['0', '1']),
        2 => (0u8..0x20).prop_map(char::from),
        2 => prop::sample::select(vec!['é', '漢', '\u{1F600}', '\u{FEFF}', '\\', '"']),
        1 => any::<char>(),
        3 => prop::char::range('a', 'z'),
    ];
    prop::collection::vec(char, 0..24).prop_map(String::from_iter)
}

/// What one case stores.
#[derive(Clone, Debug)]
struct Case {
    name: String,
    log: String,
    why: String,
    setting: String,
    player: String,
    outcome: String,
    stderr: String,
    moves: Vec<String>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        (text(), text(), text(), text()),
        (text(), text(), text(), prop::collection::vec(text(), 0..4)),
    )
        .prop_map(
            |((name, log, why, setting), (player, outcome, stderr, moves))| Case {
                name,
                log,
                why,
                setting,
                player,
                outcome,
                stderr,
                moves,
            },
        )
}

/// Game `n`'s record: its seat's stderr and moves are the case's.
fn record(entrant: &str, case: &Case) -> GameRecord {
    let moves = json!(case.moves);
    GameRecord {
        game: "evensteven".into(),
        index: 0,
        seed: 1,
        setup: [("moves".to_owned(), moves.clone())].into_iter().collect(),
        judge_error: None,
        results: vec![SeatResult {
            entrant: Some(format!("{entrant}@v1")),
            score: Some(Score::Points(1.into())),
            stderr: Some(case.stderr.clone()),
            detail: [("said".to_owned(), moves)].into_iter().collect(),
            ..SeatResult::default()
        }],
        time: "2026-01-01T00:00:00Z".into(),
        referee: "test".into(),
        tournament: None,
        format: None,
    }
}

/// Stores case `n` in `db` and reads each string back: the same.
fn round_trip(db: &mut Db, n: u64, case: &Case) -> Result<(), TestCaseError> {
    // Unique in the league, whatever the case.
    let entrant = format!("{n}:{}", case.name);
    let worker = format!("w{n}:{}", case.name);
    let new = NewVersion {
        entrant: &entrant,
        fingerprint: &case.name,
        products: &[],
        build_ok: true,
        build_log: Some(&case.log),
    };
    let (id, _) = db.add_version(&new).unwrap();
    let version = |db: &Db, id| {
        db.versions()
            .unwrap()
            .into_iter()
            .find(|v| v.id == id)
            .unwrap()
    };
    let stored = version(db, id);
    prop_assert_eq!(&stored.entrant, &entrant);
    prop_assert_eq!(&stored.fingerprint, &case.name);
    prop_assert_eq!(stored.build_log.as_ref(), Some(&case.log));

    let mut game = record(&entrant, case);
    let number = db.add_game(&mut game, n, 0, &[id]).unwrap();
    let back = db.game(number).unwrap().unwrap();
    prop_assert_eq!(back, serde_json::to_value(&game).unwrap());
    let recent = db.recent_games(Some(&entrant), 1).unwrap();
    prop_assert_eq!(&recent[0]["game"], &json!(number));

    db.set_player(id, &case.player).unwrap();
    prop_assert_eq!(version(db, id).player, Some(case.player.clone()));
    // Another entrant fails (and leaves): its games would not be a run's.
    let leaver = format!("{n}!{}", case.name);
    let (failed, _) = db
        .add_version(&NewVersion {
            entrant: &leaver,
            ..new
        })
        .unwrap();
    db.fail_version(failed, &case.why).unwrap();
    db.retire(&leaver).unwrap();
    let stored = version(db, failed);
    prop_assert_eq!(stored.build_log.as_ref(), Some(&case.why));
    prop_assert!(stored.retired && !stored.build_ok);

    let key = format!("{n}:{}", case.name);
    db.set_setting(&key, &case.setting).unwrap();
    prop_assert_eq!(db.setting(&key).unwrap(), Some(case.setting.clone()));

    let table = db
        .deal_table(&NewTable {
            round: n,
            versions: &[id],
            rotations: &[0],
        })
        .unwrap();
    let claimed = db.claim_table(&worker, LEASE, &|_| true).unwrap().unwrap();
    prop_assert_eq!(claimed.id, table);
    let claim = Claim {
        table,
        claim: claimed.claim,
    };
    db.finish_table(claim, Some(&case.outcome)).unwrap();
    let outcome = Some(case.outcome.clone());
    prop_assert_eq!(
        db.table_states(&[table]).unwrap(),
        [(table, TableState::Done { outcome })]
    );

    worker_notes(db, &worker, id, case)
}

/// What a worker named with the case's name says of itself.
fn worker_notes(db: &Db, worker: &str, id: i64, case: &Case) -> Result<(), TestCaseError> {
    db.worker_seen(worker, 1).unwrap();
    db.decline_version(worker, id, &case.why).unwrap();
    db.void_game(worker, &case.outcome).unwrap();
    let notes = db.worker_notes(LEASE).unwrap();
    let note = notes.iter().find(|w| w.name == worker);
    prop_assert!(note.is_some(), "{worker:?} not in {notes:?}");
    let note = note.unwrap();
    prop_assert_eq!(&note.declined, &vec![(id, case.why.clone())]);
    prop_assert_eq!(note.last_void.as_ref(), Some(&case.outcome));
    db.worker_gone(worker).unwrap();
    Ok(())
}

/// A new league's database at `at`.
fn league(at: &Location) -> Db {
    let db = Db::open(at, false).unwrap();
    db.set_meta(&Meta {
        game: "\"evensteven\"".into(),
        solo: false,
        seed: 1,
    })
    .unwrap();
    db
}

/// Every file `league export DB DIR/NAME` writes, by path, with the
/// database's own name (in the run's fingerprint) left out.
fn export(at: &Location, dir: &Path, name: &str) -> BTreeMap<String, Vec<u8>> {
    let out = dir.join(name);
    let db = match at {
        Location::File(path) => path.display().to_string(),
        Location::Url(url) => url.clone(),
    };
    common::league::export(&db, &out);
    let mut files = BTreeMap::new();
    let mut stack = vec![out.clone()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read(&path).unwrap();
            let text = String::from_utf8_lossy(&text).replace(&format!("league {db}"), "league DB");
            let key = path.strip_prefix(&out).unwrap().display().to_string();
            files.insert(key, text.into_bytes());
        }
    }
    files
}

#[test]
fn every_string_comes_back_the_same_on_both_back_ends() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tempfile::tempdir_in(tmp).unwrap();
    let file = Location::File(dir.path().join("league.db"));
    let server = common::postgres::Server::start(tmp)
        .map_err(|why| eprintln!("PostgreSQL skipped: {why}"))
        .ok();
    let url = server.as_ref().map(|s| Location::Url(s.url()));
    let dbs: Vec<Db> = std::iter::once(&file).chain(&url).map(league).collect();
    // The runner takes a `Fn`: the databases and the case's number are
    // the test's, across cases.
    let (dbs, n) = (std::cell::RefCell::new(dbs), std::cell::Cell::new(0));
    let config = Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new(config)
        .run(&case(), |case| {
            n.set(n.get() + 1);
            for db in dbs.borrow_mut().iter_mut() {
                round_trip(db, n.get(), &case)?;
            }
            Ok(())
        })
        .unwrap();
    drop(dbs);
    let Some(url) = url else { return };
    let (sqlite, postgres) = (
        export(&file, dir.path(), "sqlite"),
        export(&url, dir.path(), "postgres"),
    );
    assert_eq!(
        sqlite.keys().collect::<Vec<_>>(),
        postgres.keys().collect::<Vec<_>>()
    );
    for (path, text) in &sqlite {
        assert!(
            postgres[path] == *text,
            "{path} differs:\n{}\n{}",
            String::from_utf8_lossy(text),
            String::from_utf8_lossy(&postgres[path])
        );
    }
    assert!(sqlite.contains_key("records.jsonl"), "{:?}", sqlite.keys());
    let _: Vec<Value> = common::jsonl(&dir.path().join("postgres/records.jsonl"));
}
