//! A league's live page (`referee league run --serve 127.0.0.1:0`) seen
//! as a browser sees it: its address, once the league says it, and GETs.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

use super::league::Running;

/// The page of a running league.
pub struct Page(pub SocketAddr);

impl Page {
    /// Waits for the league to say where its page is.
    pub fn of(league: &mut Running) -> Page {
        Page(league.wait_for("the page's address", |l| address(&l.stderr())))
    }

    /// The body of a GET of `path`, which must answer 200.
    pub fn get(&self, path: &str) -> String {
        let (status, body) = get(self.0, path).unwrap();
        assert!(status.contains(" 200 "), "{path}: {status}\n{body}");
        body
    }

    pub fn standings(&self) -> Value {
        serde_json::from_str(&self.get("/api/standings")).unwrap()
    }

    /// The standings' row of entrant `name`.
    pub fn row(&self, name: &str) -> Value {
        let standings = self.standings();
        standings["entrants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no row for {name}: {standings:#}"))
    }

    /// The newest game `name` played.
    pub fn a_game_of(&self, name: &str) -> u64 {
        let games: Value =
            serde_json::from_str(&self.get(&format!("/api/games?entrant={name}&limit=1"))).unwrap();
        games["games"][0]["game"].as_u64().unwrap()
    }
}

/// The page's address in a league's standard error, once it is there.
pub fn address(stderr: &str) -> Option<SocketAddr> {
    stderr
        .lines()
        .find_map(|line| line.strip_prefix("league: live page at http://"))
        .and_then(|rest| rest.trim_end_matches('/').parse().ok())
}

/// A GET of `path`: the status line and the body (chunks joined), or why
/// not.
pub fn get(addr: SocketAddr, path: &str) -> Result<(String, String), String> {
    let mut stream =
        TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").ok_or(format!("{text:?}"))?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Ok((head.lines().next().unwrap_or("").to_owned(), body))
}

fn dechunk(mut text: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = text.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        text = rest[size..].trim_start_matches("\r\n");
    }
    out
}
