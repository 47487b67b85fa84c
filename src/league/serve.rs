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
//! Whoever can reach the page must not be able to hurt the league: each
//! connection holds one of the referee's descriptors, which its games
//! need too. So the page has at most [`most_connections`] connections at
//! once (one beyond is closed as it is accepted), a connection that has
//! not sent a request's headers within [`TIMEOUT`] of opening or of its
//! last answer is closed, and a stream of events tells of games at most
//! every [`EVENTS_EVERY`].

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
use super::db::Db;
use crate::replay::escape_html;

/// What the pages are made from: the league's state, and the database
/// read beside it.
#[derive(Clone)]
struct Board {
    shared: Arc<Shared>,
    db: Arc<Mutex<Db>>,
    /// Where the league file is (a judge's files, for replays).
    base: PathBuf,
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
    db: PathBuf,
    base: PathBuf,
) -> Result<SocketAddr, String> {
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|e| format!("--serve {addr}: cannot listen there: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let board = Board {
        shared,
        db: Arc::new(Mutex::new(Db::read(&db)?)),
        base,
    };
    std::thread::Builder::new()
        .name("league-page".into())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                eprintln!("league: the live page cannot start: no runtime");
                return;
            };
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
    json_response(&standings(&board))
}

fn json_response(value: &Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// An entrant's current version, as the standings show it.
struct Current {
    entrant: String,
    number: u32,
    /// `entrant@vN`.
    name: String,
    last: Option<super::LastFailure>,
}

/// `{"games": N, "solo": bool, "entrants": [...]}`: one row per entrant's
/// current version, best first.
fn standings(board: &Board) -> Value {
    let (games, solo, current, rows) = {
        let state = board.shared.lock();
        let current: Vec<Current> = state
            .versions
            .iter()
            .filter(|v| v.active)
            .map(|v| Current {
                entrant: v.entrant.clone(),
                number: v.number,
                name: v.player.name.clone(),
                last: v.last_failure.clone(),
            })
            .collect();
        (
            state.committed,
            state.seats.is_none(),
            current,
            // Ranked below, the games' lock released.
            state.tally.clone(),
        )
    };
    let rows = rows.into_rows();
    let entrants: Vec<Value> = rows
        .iter()
        .filter_map(|row| {
            let Current {
                entrant,
                number,
                last,
                ..
            } = current.iter().find(|c| c.name == row.entrant)?;
            let (rating, uncertainty) = if solo {
                let half = match (row.win_rate_low, row.win_rate_high) {
                    (Some(low), Some(high)) => Some((high - low) / 2.0),
                    _ => None,
                };
                (row.win_rate, half)
            } else {
                (row.rating, row.uncertainty)
            };
            Some(json!({
                "name": entrant,
                "version": number,
                "entrant": row.entrant,
                "games": row.games,
                "rating": rating,
                "uncertainty": uncertainty,
                "wins": row.wins,
                "win_share": if row.games == 0 { None } else { Some(row.wins / row.games as f64) },
                "failures": {
                    "timeout": row.timeouts,
                    "crashed": row.crashed,
                    "incorrect": row.incorrect,
                    "disqualified": row.disqualified,
                    "internal": row.internal,
                },
                "last_failure": last.as_ref().map(|(game, status, message)| json!({
                    "game": game, "status": status, "message": message,
                })),
            }))
        })
        .enumerate()
        .map(|(i, mut row)| {
            row["rank"] = json!(i + 1);
            row
        })
        .collect();
    json!({ "games": games, "solo": solo, "entrants": entrants })
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
    let series: Vec<(String, Vec<crate::tournament::standings::Point>)> = {
        let state = board.shared.lock();
        versions
            .iter()
            .map(|v| {
                let full = super::Version::name(&v.entrant, v.version);
                let points = state.tally.history_of(&full);
                (full, points)
            })
            .collect()
    };
    let games = {
        let db = super::db::lock(&board.db);
        db.recent_games(Some(&name), 30).unwrap_or_default()
    };
    Html(super::page::entrant(&name, &versions, &series, &games)).into_response()
}

async fn replay_page(Axum(board): Axum<Board>, UrlPath(id): UrlPath<u64>) -> Response {
    let record = {
        let db = super::db::lock(&board.db);
        db.game(id)
    };
    let record = match record {
        Ok(Some(record)) => record,
        Ok(None) => return (StatusCode::NOT_FOUND, format!("no game {id}")).into_response(),
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    };
    match crate::replay::views(&record, &board.base) {
        Ok(views) => Html(crate::replay::page(&format!("game {id}"), &views)).into_response(),
        Err(e) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("game {id} cannot be replayed: {}", escape_html(&e)),
        )
            .into_response(),
    }
}

const LEADERBOARD: &str = include_str!("leaderboard.html");
