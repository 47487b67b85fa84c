//! The league's live page (`--serve ADDR`), served by the referee itself
//! on a thread of its own: the leaderboard (`/`), which updates itself
//! as games finish (server-sent events at `/events`, then a fetch of
//! `/api/standings`); a page per entrant (`/entrant/NAME`: its versions
//! with their build logs, its rating over its games as an SVG plot, its
//! recent games); each game's replay (`/replay/ID`, the replay viewer);
//! and JSON (`/api/standings`, `/api/games`). Nothing is fetched from the
//! network; every name and message is escaped (HTML through
//! `replay::escape_html`, data through `textContent` in the page's
//! script).
//!
//! Every entrant still in the league has a row: the version that plays,
//! else its last that built, else (all its builds failed) a row after
//! everyone who played, with the compiler's first error. A row says which
//! version plays and why when a newer one did not build, and names the
//! other entrants whose sources are the same (a copy). The bots' stderr is
//! left out of the replays unless the file's `[league]` table says
//! `page_stderr = true`: the page is the whole class's.
//!
//! Whoever can reach the page must not be able to hurt the league: each
//! connection holds one of the referee's descriptors, which its games
//! need too. So the page has at most [`most_connections`] connections at
//! once (one beyond is closed as it is accepted), a connection that has
//! not sent a request's headers within [`TIMEOUT`] of opening or of its
//! last answer is closed, and a stream of events tells of games at most
//! every [`EVENTS_EVERY`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path as UrlPath, Query, State as Axum};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Shared;
use super::db::{Db, Location, VersionRow};
use super::page::{About, FailedBuild, url_segment};
use crate::replay::escape_html;

/// What the pages are made from: the league's state, and the database
/// read beside it.
#[derive(Clone)]
struct Board {
    shared: Arc<Shared>,
    db: Arc<Mutex<Db>>,
    /// Where the league file is (a judge's files, for replays).
    base: PathBuf,
    /// The replays show what the bots wrote on stderr
    /// (`page_stderr = true` in the file's `[league]` table); by default
    /// they do not, since the page
    /// is the whole class's.
    stderr: bool,
    /// Each failed version's reason and first error, by its id, read once
    /// from its log (a failed version is never built again).
    failed: Arc<Mutex<HashMap<i64, FailedBuild>>>,
}

/// How long a connection may take to send a request's headers, from its
/// opening or from its last answer (an idle keep-alive): then it is
/// closed. `REFEREE_PAGE_TIMEOUT` (`1s`, `500ms`) sets another, for tests.
const TIMEOUT: Duration = Duration::from_secs(10);

/// At most this many connections at once: room for a class of 200 open
/// pages (a page holds its stream of events and, while it fetches, one
/// more), with some to spare.
const MOST_CONNECTIONS: u64 = 512;

/// A stream of events tells of games at most this often: a page fetches
/// the standings after an event, and a league may finish a game every
/// few milliseconds.
const EVENTS_EVERY: Duration = Duration::from_millis(250);

/// The page's most connections: [`MOST_CONNECTIONS`], or half the
/// descriptors the referee may have if that is fewer, so that the other
/// half is the games'.
fn most_connections() -> usize {
    use nix::sys::resource::{Resource, getrlimit};
    let descriptors = getrlimit(Resource::RLIMIT_NOFILE).map_or(1024, |(soft, _)| soft);
    usize::try_from((descriptors / 2).clamp(1, MOST_CONNECTIONS)).unwrap_or(1)
}

/// [`TIMEOUT`], or `REFEREE_PAGE_TIMEOUT`'s.
fn timeout() -> Duration {
    std::env::var("REFEREE_PAGE_TIMEOUT")
        .ok()
        .and_then(|text| humantime::parse_duration(&text).ok())
        .filter(|t| !t.is_zero())
        .unwrap_or(TIMEOUT)
}

/// Where `--serve` listens: `PORT` alone is loopback's; an address binds
/// beyond loopback only when it says so (`0.0.0.0:8080`).
pub fn address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().map_err(|_| {
        format!("--serve {text:?}: not an address (PORT, or HOST:PORT such as 127.0.0.1:8080)")
    })
}

/// Starts serving on `addr`. The listener is bound before this returns,
/// so that a port in use is an error at the start; the page is served
/// until the process ends.
pub fn start(
    addr: SocketAddr,
    shared: Arc<Shared>,
    db: &Location,
    base: PathBuf,
    page_stderr: bool,
) -> Result<SocketAddr, String> {
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|e| format!("--serve {addr}: cannot listen there: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let board = Board {
        shared,
        db: Arc::new(Mutex::new(Db::read(db)?)),
        base,
        stderr: page_stderr,
        failed: Arc::default(),
    };
    let cannot = "league: the live page cannot start";
    crate::parallel::runtime_thread("league-page", cannot, move |runtime| {
        runtime.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                eprintln!("league: the live page cannot start: no listener");
                return;
            };
            serve(listener, router(board)).await;
        });
    })
    .map_err(|e| format!("cannot start the live page: {e}"))?;
    Ok(local)
}

/// Serves `app` on `listener`'s connections, [`most_connections`] at
/// once, each closed once idle for [`timeout`].
async fn serve(listener: tokio::net::TcpListener, app: Router) {
    let most = most_connections();
    let timeout = timeout();
    let slots = Arc::new(tokio::sync::Semaphore::new(most));
    let mut said = false;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of descriptors (the games' need comes first), or a
            // connection gone before it was accepted: a moment later.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            drop(stream);
            if !said {
                said = true;
                eprintln!(
                    "league: the live page has {most} connections open, its most: \
                     it closes new ones until some close (each idle one within {})",
                    humantime::format_duration(timeout)
                );
            }
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _slot = slot;
            // Header timeout: from the connection's start, and from each
            // answer to the next request (hyper starts it at every read of
            // a request's head). A stream of events is an answer, never
            // idle.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(timeout)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

fn router(board: Board) -> Router {
    Router::new()
        .route("/", get(leaderboard))
        .route("/api/standings", get(standings_json))
        .route("/api/games", get(games_json))
        .route("/events", get(events))
        .route("/entrant/{name}", get(entrant_page))
        .route("/replay/{id}", get(replay_page))
        .route("/favicon.ico", get(favicon))
        .with_state(board)
}

/// A browser asks for one; an empty icon, rather than a 404 in its log.
async fn favicon() -> Response {
    (
        [(header::CONTENT_TYPE, "image/svg+xml")],
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
    )
        .into_response()
}

async fn leaderboard() -> Html<&'static str> {
    Html(LEADERBOARD)
}

async fn standings_json(Axum(board): Axum<Board>) -> Response {
    match standings(&board) {
        Ok(value) => json_response(&value),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

fn json_response(value: &Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// An entrant still in the league, as the pages show it.
struct Shown {
    entrant: String,
    /// The version shown: the one that plays, else its last that built
    /// (`entrant@vN`, and N); `None` when none built.
    version: Option<(String, u32)>,
    playing: bool,
    last: Option<super::LastFailure>,
    /// Its newest version, when that one did not build and is newer than
    /// the one shown: its number, and why.
    failed: Option<(u32, FailedBuild)>,
    /// Other entrants' versions (`name@vN`) whose sources are the same as
    /// the shown version's (a copy, one way or the other).
    same_as: Vec<String>,
}

impl Shown {
    /// Which version plays and why, when that is not simply its newest.
    fn note(&self) -> Option<String> {
        match (&self.version, &self.failed) {
            (None, _) => Some("did not build".into()),
            (Some((_, n)), Some((m, _))) if self.playing => {
                Some(format!("v{n} plays: v{m} did not build"))
            }
            (Some((_, n)), Some((m, _))) => Some(format!("v{n} does not play: v{m} did not build")),
            (Some((_, n)), None) if !self.playing => Some(format!("v{n} does not play now")),
            _ => None,
        }
    }

    fn about(&self) -> About {
        About {
            playing: self.version.as_ref().filter(|_| self.playing).map(|v| v.1),
            note: self.note(),
            failed: self.failed.clone(),
            same_as: self.same_as.clone(),
        }
    }
}

/// The league as the pages show it: its games, whether each is played
/// alone, the tally (a copy), and every entrant still in it, in the order
/// they entered.
struct Class {
    games: u64,
    solo: bool,
    tally: crate::tournament::standings::Tally,
    shown: Vec<Shown>,
}

/// A version as the league's state has it.
struct Known {
    number: u32,
    active: bool,
    last: Option<super::LastFailure>,
}

/// [`Class`] now: the versions from the database (a failed one's reason
/// read from its log once), what plays from the league's state.
fn class(board: &Board) -> Result<Class, String> {
    let rows = super::db::lock(&board.db).versions_without_logs()?;
    let failed = failed_builds(board, &rows)?;
    let (games, solo, tally, known) = now(board);
    let versions = Versions::of(&rows);
    let shown = versions
        .order
        .iter()
        .filter_map(|name| versions.shown(name, &known, &failed))
        .collect();
    Ok(Class {
        games,
        solo,
        tally,
        shown,
    })
}

/// Each failed version's reason and first error, by its id: those of
/// `rows` not read yet are read from their logs, once.
fn failed_builds<'a>(
    board: &'a Board,
    rows: &[VersionRow],
) -> Result<std::sync::MutexGuard<'a, HashMap<i64, FailedBuild>>, String> {
    let mut failed = board.failed.lock().unwrap_or_else(|e| e.into_inner());
    if rows
        .iter()
        .any(|r| !r.build_ok && !failed.contains_key(&r.id))
    {
        let logs = super::db::lock(&board.db).versions()?;
        for r in logs.into_iter().filter(|r| !r.build_ok) {
            failed
                .entry(r.id)
                .or_insert_with(|| super::page::failed_build(r.build_log.as_deref().unwrap_or("")));
        }
    }
    Ok(failed)
}

/// What the league plays, by version id, as it is now: its games, whether
/// each is played alone, the tally (a copy) and the versions it knows.
fn now(
    board: &Board,
) -> (
    u64,
    bool,
    crate::tournament::standings::Tally,
    HashMap<i64, Known>,
) {
    let state = board.shared.lock();
    let known: HashMap<i64, Known> = state
        .versions
        .iter()
        .map(|v| {
            let known = Known {
                number: v.number,
                active: v.active,
                last: v.last_failure.clone(),
            };
            (v.id, known)
        })
        .collect();
    (
        state.committed,
        state.seats.is_none(),
        state.tally.clone(),
        known,
    )
}

/// The database's versions: each entrant's, oldest first, the entrants in
/// the order they entered; and who built what (a copy's sources are the
/// same).
struct Versions<'a> {
    order: Vec<&'a str>,
    by_entrant: HashMap<&'a str, Vec<&'a VersionRow>>,
    by_sources: HashMap<&'a str, Vec<&'a VersionRow>>,
}

impl<'a> Versions<'a> {
    fn of(rows: &'a [VersionRow]) -> Versions<'a> {
        let mut order: Vec<&str> = Vec::new();
        let mut by_entrant: HashMap<&str, Vec<&VersionRow>> = HashMap::new();
        let mut by_sources: HashMap<&str, Vec<&VersionRow>> = HashMap::new();
        for r in rows {
            by_entrant
                .entry(&r.entrant)
                .or_insert_with(|| {
                    order.push(&r.entrant);
                    Vec::new()
                })
                .push(r);
            if r.build_ok {
                by_sources.entry(&r.fingerprint).or_default().push(r);
            }
        }
        Versions {
            order,
            by_entrant,
            by_sources,
        }
    }

    /// Entrant `name` as the pages show it; `None` when it has left the
    /// league, or when its newest version built and is not in the league's
    /// state yet (it is entering: shown at the next look).
    fn shown(
        &self,
        name: &str,
        known: &HashMap<i64, Known>,
        failed: &HashMap<i64, FailedBuild>,
    ) -> Option<Shown> {
        let own = &self.by_entrant[name];
        let newest = *own.last()?;
        if newest.retired {
            return None;
        }
        let playing = own
            .iter()
            .rev()
            .find(|r| known.get(&r.id).is_some_and(|k| k.active));
        let current = playing.or_else(|| {
            own.iter()
                .rev()
                .find(|r| r.build_ok && known.contains_key(&r.id))
        });
        if current.is_none() && newest.build_ok {
            return None;
        }
        let failed_build = (!newest.build_ok && current.is_none_or(|c| c.version < newest.version))
            .then(|| {
                (
                    newest.version,
                    failed.get(&newest.id).cloned().unwrap_or_default(),
                )
            });
        let state = current.and_then(|c| known.get(&c.id));
        Some(Shown {
            entrant: name.to_owned(),
            version: state.map(|k| (super::Version::name(name, k.number), k.number)),
            playing: playing.is_some(),
            last: state.and_then(|k| k.last.clone()),
            failed: failed_build,
            same_as: self.same_as(name, current.copied()),
        })
    }

    /// Each other entrant's last version with the same sources as
    /// `current` (`name@vN`), sorted.
    fn same_as(&self, name: &str, current: Option<&VersionRow>) -> Vec<String> {
        let mut same_as: Vec<String> = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        let same = current.and_then(|c| self.by_sources.get(c.fingerprint.as_str()));
        for other in same.into_iter().flatten().rev() {
            if other.entrant != name && !seen.contains(&other.entrant.as_str()) {
                seen.push(&other.entrant);
                same_as.push(super::Version::name(&other.entrant, other.version));
            }
        }
        same_as.sort();
        same_as
    }
}

/// What the ranking is by, for people.
fn ranked_by(solo: bool) -> &'static str {
    if solo {
        "win rate; an entrant with no version that built comes last"
    } else {
        "rating − 3σ (the rating less three times its uncertainty σ): a version \
         ranks high once its games show it is strong, not on the luck of its first \
         few; an entrant with no version that built comes last"
    }
}

/// Where an entrant's version's build log is: its row on the entrant's
/// page.
fn log_link(entrant: &str, version: u32) -> String {
    format!("/entrant/{}#v{version}", url_segment(entrant))
}

/// `{"games": N, "solo": bool, "ranked_by": "...", "entrants": [...],
/// "unplayable": [...]}`: one row per entrant still in the league (its
/// version that plays), best first, then those with no version that
/// built; and the versions no live worker can play.
fn standings(board: &Board) -> Result<Value, String> {
    let Class {
        games,
        solo,
        tally,
        shown,
    } = class(board)?;
    let by_version: HashMap<&str, &Shown> = shown
        .iter()
        .filter_map(|s| Some((s.version.as_ref()?.0.as_str(), s)))
        .collect();
    let rows = tally.into_rows();
    let played = rows.iter().filter_map(|row| {
        let s = by_version.get(row.entrant.as_str())?;
        Some(played_row(s, row, solo))
    });
    // Those with no version that built: after everyone who played.
    let unbuilt = shown
        .iter()
        .filter(|s| s.version.is_none())
        .map(unbuilt_row);
    let entrants: Vec<Value> = played
        .chain(unbuilt)
        .enumerate()
        .map(|(i, mut row)| {
            row["rank"] = json!(i + 1);
            row
        })
        .collect();
    Ok(json!({
        "games": games,
        "solo": solo,
        "ranked_by": ranked_by(solo),
        "entrants": entrants,
        "unplayable": unplayable(board),
    }))
}

/// The standings' row of an entrant that played: its version that plays
/// (or played last) and its `row` of the tally.
fn played_row(s: &Shown, row: &crate::tournament::standings::Row, solo: bool) -> Value {
    let (rating, uncertainty, score) = if solo {
        let half = match (row.win_rate_low, row.win_rate_high) {
            (Some(low), Some(high)) => Some((high - low) / 2.0),
            _ => None,
        };
        (row.win_rate, half, row.win_rate)
    } else {
        (row.rating, row.uncertainty, row.conservative)
    };
    json!({
        "name": s.entrant,
        "version": s.version.as_ref().map(|v| v.1),
        "entrant": row.entrant,
        "built": true,
        "playing": s.playing,
        "games": row.games,
        "rating": rating,
        "uncertainty": uncertainty,
        "rank_score": score,
        "wins": row.wins,
        "win_share": if row.games == 0 { None } else { Some(row.wins / row.games as f64) },
        "failures": {
            "timeout": row.timeouts,
            "crashed": row.crashed,
            "incorrect": row.incorrect,
            "disqualified": row.disqualified,
            "internal": row.internal,
        },
        "last_failure": s.last.as_ref().map(|(game, status, message)| json!({
            "game": game, "status": status, "message": message,
        })),
        "note": s.note(),
        "failed_build": failed_build(s),
        "same_as": s.same_as,
    })
}

/// The standings' row of an entrant with no version that built.
fn unbuilt_row(s: &Shown) -> Value {
    let version = s.failed.as_ref().map_or(0, |f| f.0);
    json!({
        "name": s.entrant,
        "version": version,
        "entrant": super::Version::name(&s.entrant, version),
        "built": false,
        "playing": false,
        "games": 0,
        "rating": null,
        "uncertainty": null,
        "rank_score": null,
        "wins": 0,
        "win_share": null,
        "failures": {
            "timeout": 0, "crashed": 0, "incorrect": 0, "disqualified": 0, "internal": 0,
        },
        "last_failure": null,
        "note": s.note(),
        "failed_build": failed_build(s),
        "same_as": s.same_as,
    })
}

/// An entrant's newest version that did not build, and why, with a link
/// to its log.
fn failed_build(s: &Shown) -> Option<Value> {
    s.failed.as_ref().map(|(version, why)| {
        json!({
            "version": version,
            "message": why.message,
            "first_error": why.first_error,
            "log": log_link(&s.entrant, *version),
        })
    })
}

/// The versions that no live worker can play on its machine (see
/// [`super::notes`]): `[{"version": NAME, "declined": [[WORKER, WHY]]}]`.
fn unplayable(board: &Board) -> Value {
    let db = super::db::lock(&board.db);
    let (Ok(notes), Ok(versions)) = (
        db.worker_notes(super::notes::WORKER_SEEN),
        db.versions_without_logs(),
    ) else {
        return json!([]);
    };
    drop(db);
    json!(super::notes::unplayable(&notes, &versions))
}

#[derive(Deserialize)]
struct GamesQuery {
    entrant: Option<String>,
    limit: Option<u64>,
}

async fn games_json(Axum(board): Axum<Board>, Query(q): Query<GamesQuery>) -> Response {
    let limit = q.limit.unwrap_or(50).min(1000);
    let db = super::db::lock(&board.db);
    match db.recent_games(q.entrant.as_deref(), limit) {
        Ok(games) => json_response(&json!({ "games": games })),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

/// A message when games have finished (their count), at most every
/// [`EVENTS_EVERY`], for the page to fetch the standings again; a comment
/// every 15 s keeps a quiet stream open through proxies.
async fn events(Axum(board): Axum<Board>) -> impl IntoResponse {
    let updates = board.shared.updates.subscribe();
    let stream = futures_util::stream::unfold(
        (updates, None),
        |(mut updates, last): (_, Option<tokio::time::Instant>)| async move {
            if let Some(last) = last {
                tokio::time::sleep_until(last + EVENTS_EVERY).await;
            }
            updates.changed().await.ok()?;
            // The latest count: those finished meanwhile are one event.
            let games = *updates.borrow_and_update();
            Some((
                Ok::<_, std::convert::Infallible>(
                    Event::default().event("games").data(games.to_string()),
                ),
                (updates, Some(tokio::time::Instant::now())),
            ))
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

async fn entrant_page(Axum(board): Axum<Board>, UrlPath(name): UrlPath<String>) -> Response {
    let versions = {
        let db = super::db::lock(&board.db);
        match db.versions() {
            Ok(all) => all
                .into_iter()
                .filter(|v| v.entrant == name)
                .collect::<Vec<_>>(),
            Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
        }
    };
    if versions.is_empty() {
        return (
            StatusCode::NOT_FOUND,
            format!("no entrant {name:?} in this league"),
        )
            .into_response();
    }
    let class = match class(&board) {
        Ok(class) => class,
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    };
    let about = class
        .shown
        .iter()
        .find(|s| s.entrant == name)
        .map(Shown::about)
        .unwrap_or_default();
    let series: Vec<(u32, Vec<crate::tournament::standings::Point>)> = versions
        .iter()
        .map(|v| {
            let full = super::Version::name(&v.entrant, v.version);
            (v.version, class.tally.history_of(&full))
        })
        .collect();
    let games = {
        let db = super::db::lock(&board.db);
        db.recent_games(Some(&name), 30).unwrap_or_default()
    };
    Html(super::page::entrant(
        &name, &versions, &about, &series, &games,
    ))
    .into_response()
}

async fn replay_page(Axum(board): Axum<Board>, UrlPath(id): UrlPath<u64>) -> Response {
    let record = {
        let db = super::db::lock(&board.db);
        db.game(id)
    };
    let mut record = match record {
        Ok(Some(record)) => record,
        Ok(None) => return (StatusCode::NOT_FOUND, format!("no game {id}")).into_response(),
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    };
    if !board.stderr {
        without_stderr(&mut record);
    }
    // The entrants who played it, for the links back.
    let entrants: Vec<String> = crate::game::record::seats_of(&record)
        .into_iter()
        .flatten()
        .filter_map(|r| r["entrant"].as_str())
        .map(|full| match full.rsplit_once("@v") {
            Some((name, n)) if n.parse::<u32>().is_ok() => name.to_owned(),
            _ => full.to_owned(),
        })
        .fold(Vec::new(), |mut all, name| {
            if !all.contains(&name) {
                all.push(name);
            }
            all
        });
    match crate::replay::views(&record, &board.base) {
        Ok(mut views) => {
            if !board.stderr {
                for view in &mut views {
                    without_stderr(view);
                }
            }
            Html(super::page::replay(id, &entrants, &views)).into_response()
        }
        Err(e) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("game {id} cannot be replayed: {}", escape_html(&e)),
        )
            .into_response(),
    }
}

/// `value` (a record or a replay's view) without what the bots wrote on
/// stderr: the record's own, each seat's, each player's.
fn without_stderr(value: &mut Value) {
    if let Some(object) = value.as_object_mut() {
        object.remove("stderr");
    }
    for list in ["results", "players", "seats"] {
        for seat in value[list].as_array_mut().into_iter().flatten() {
            if let Some(seat) = seat.as_object_mut() {
                seat.remove("stderr");
            }
        }
    }
}

const LEADERBOARD: &str = include_str!("leaderboard.html");
