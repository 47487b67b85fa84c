//! The replay pages in a real browser: headless Chromium driven over
//! WebDriver by chromedriver (Debian packages `chromium` and
//! `chromium-driver`; .ci/run installs them). Missing, they fail the test.
//!
//! One browser session serves every case: each page is opened from a
//! `file://` URL, must show no script error (the viewer's own collector
//! and the browser's log), is stepped forward with its buttons or its
//! scrubber, and the DOM must show the state the rules give at that step.
//! A screenshot of each lands in target/replay-screenshots/, or in the
//! directory `REFEREE_SCREENSHOTS` names (`scripts/replay-screenshots`
//! uses it for docs/img/).
//!
//! The WebDriver client is the few requests used here over a plain TCP
//! connection (HTTP/1.1, JSON bodies), so no HTTP stack is pulled in.

mod common;

use common::{assert_has, write_file};

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const CHROMIUM: &str = "/usr/bin/chromium";

fn find_program(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// chromedriver in its own process group, killed with its group (and so
/// with any browser it left) when dropped.
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Driver {
    fn start(marker: &common::Marker) -> Driver {
        let Some(program) = find_program("chromedriver") else {
            panic!(
                "chromedriver is not installed: the browser tests need the Debian packages \
                 `chromium` and `chromium-driver` (apt-get install -y chromium chromium-driver)"
            );
        };
        assert!(
            Path::new(CHROMIUM).is_file(),
            "{CHROMIUM} is not installed: apt-get install -y chromium chromium-driver"
        );
        let port = free_port();
        let mut cmd = Command::new(program);
        cmd.arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        marker.apply(&mut cmd);
        let child = cmd.spawn().expect("start chromedriver");
        let driver = Driver { child, port };
        let started = Instant::now();
        loop {
            if let Ok((200, body)) = driver.request("GET", "/status", None)
                && body["value"]["ready"] == true
            {
                return driver;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not answer on port {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One HTTP request; the status and the JSON body.
    fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .map_err(|e| e.to_string())?;
        let body = body.map(Value::to_string).unwrap_or_default();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        );
        stream
            .write_all(head.as_bytes())
            .and_then(|()| stream.write_all(body.as_bytes()))
            .map_err(|e| e.to_string())?;
        // chromedriver may keep the connection open: read the head, then
        // exactly the body its Content-Length gives (or chunks).
        let mut answer = Vec::new();
        let mut buf = [0u8; 65536];
        let split = loop {
            if let Some(i) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            let n = stream.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("the connection closed before the answer's head".into());
            }
            answer.extend_from_slice(&buf[..n]);
        };
        let head = String::from_utf8_lossy(&answer[..split]).into_owned();
        let mut rest = answer[split + 4..].to_vec();
        let status: u16 = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("a bad HTTP status line: {head}"))?;
        let lower = head.to_ascii_lowercase();
        let length = lower.lines().find_map(|l| {
            l.strip_prefix("content-length:")
                .and_then(|v| v.trim().parse::<usize>().ok())
        });
        let chunked = lower.contains("transfer-encoding: chunked")
            || lower.contains("transfer-encoding:chunked");
        loop {
            let done = match length {
                Some(n) => rest.len() >= n,
                None if chunked => rest.windows(5).any(|w| w == b"0\r\n\r\n"),
                None => false,
            };
            if done {
                break;
            }
            let n = stream.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            rest.extend_from_slice(&buf[..n]);
        }
        let rest = String::from_utf8_lossy(&rest).into_owned();
        let payload = if chunked { dechunk(&rest) } else { rest };
        let value = serde_json::from_str(&payload).unwrap_or(Value::Null);
        Ok((status, value))
    }
}

fn dechunk(mut text: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = text.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        text = rest[n..].trim_start_matches("\r\n");
    }
    out
}

struct Session<'a> {
    driver: &'a Driver,
    id: String,
}

impl Session<'_> {
    fn new(driver: &Driver) -> Session<'_> {
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1100,760",
                         "--hide-scrollbars", "--no-first-run"]
            },
            "goog:loggingPrefs": {"browser": "ALL"}
        }}});
        let (status, body) = driver.request("POST", "/session", Some(&caps)).unwrap();
        assert_eq!(status, 200, "cannot start a browser session: {body}");
        let id = body["value"]["sessionId"].as_str().unwrap().to_owned();
        Session { driver, id }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let full = format!("/session/{}{path}", self.id);
        let (status, value) = self
            .driver
            .request(method, &full, body.as_ref())
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        assert_eq!(status, 200, "{method} {path}: {value}");
        value["value"].clone()
    }

    fn open(&self, file: &Path) {
        self.open_at(file, "");
    }

    /// Opens `file` with a `#...` fragment (a link to a game and step).
    fn open_at(&self, file: &Path, fragment: &str) {
        let url = format!(
            "file://{}{fragment}",
            file.canonicalize().unwrap().display()
        );
        self.call("POST", "/url", Some(json!({ "url": url })));
    }

    fn js(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    fn click(&self, css: &str) {
        let found = self.call(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        let id = found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}"))
            .to_owned();
        self.call("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    fn text(&self, css: &str) -> String {
        let script = format!(
            "var e = document.querySelector({}); return e ? e.textContent : null;",
            json!(css)
        );
        match self.js(&script) {
            Value::String(s) => s,
            other => panic!("no element {css} ({other})"),
        }
    }

    fn has_class(&self, css: &str, class: &str) -> bool {
        let script = format!(
            "return document.querySelector({}).classList.contains({});",
            json!(css),
            json!(class)
        );
        self.js(&script) == true
    }

    /// Moves the scrubber to `step`, as a person dragging it would.
    fn scrub(&self, step: u64) {
        self.js(&format!(
            "var s = document.getElementById('scrub'); s.value = {step}; s.dispatchEvent(new Event('input'));"
        ));
    }

    /// Script errors: the viewer's collector and the browser's log.
    fn errors(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .js("return window.replayErrors || ['the viewer did not start'];")
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|v| v.to_string())
            .collect();
        let (status, log) = self
            .driver
            .request(
                "POST",
                &format!("/session/{}/se/log", self.id),
                Some(&json!({"type": "browser"})),
            )
            .unwrap();
        if status == 200 {
            for entry in log["value"].as_array().into_iter().flatten() {
                if entry["level"] == "SEVERE" {
                    out.push(entry["message"].to_string());
                }
            }
        }
        out
    }

    fn screenshot(&self, name: &str) {
        let data = self.call("GET", "/screenshot", None);
        let png = base64_decode(data.as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG"), "{name}: not a PNG");
        let dir = std::env::var_os("REFEREE_SCREENSHOTS")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("target/replay-screenshots")
            });
        write_file(&dir, format!("replay-{name}.png"), png);
    }

    fn end(self) {
        let path = format!("/session/{}", self.id);
        let _ = self.driver.request("DELETE", &path, None);
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for v in text.bytes().filter_map(value) {
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// `referee replay` of a fixture into `dir`.
fn page(dir: &Path, fixture: &str) -> PathBuf {
    let out = dir.join(fixture.replace(".jsonl", ".html"));
    common::replay(common::fixture(&format!("replay/{fixture}")), &out);
    out
}

fn record(fixture: &str, line: usize) -> Value {
    let text = std::fs::read_to_string(common::fixture(&format!("replay/{fixture}"))).unwrap();
    serde_json::from_str(text.lines().nth(line).unwrap()).unwrap()
}

fn chomp_crafted(s: &Session, dir: &Path) {
    s.open(&page(dir, "chomp-crafted.jsonl"));
    assert_eq!(s.text("#step"), "round 0 / 3");
    s.click("#next");
    assert_eq!(s.text("#step"), "round 1 / 3");
    // Round 1: players 1 and 2 share D at (4,1); player 3 leaves the right
    // edge at (4,1) and enters at (1,3).
    assert!(s.has_class("#c-4-1", "shared"));
    assert!(s.has_class("#c-4-1", "empty"));
    assert!(s.has_class("#c-4-1", "wrap-out"));
    assert!(s.has_class("#c-1-3", "wrap-in"));
    assert_eq!(s.text("#score-1"), "2");
    assert_eq!(s.text("#score-2"), "2");
    s.screenshot("chomp-wrap");
    s.click("#next");
    s.click("#next");
    assert_eq!(s.text("#step"), "round 3 / 3");
    assert_eq!(s.text("#score-1"), "10");
    assert_eq!(s.text("#score-3"), "9");
    assert!(s.text("#state-2").contains("decomposed (round 2)"));
    assert!(s.has_class("#c-4-2", "empty"));
    assert!(s.has_class("#c-1-3", "empty"));
    assert!(!s.has_class("#c-1-1", "empty"));
    assert!(s.text("#clock-3").contains("0.030 s of 1 s"));
    // Back one round: the cell eaten in round 3 is full again.
    s.click("#prev");
    assert!(!s.has_class("#c-4-2", "empty"));
    // A link straight to round 2.
    s.open_at(&dir.join("chomp-crafted.html"), "#game=1&step=2");
    assert_eq!(s.text("#step"), "round 2 / 3");
    assert!(s.has_class("#c-1-3", "empty"));
}

fn chomp_real(s: &Session, dir: &Path) {
    s.open(&page(dir, "chomp.jsonl"));
    let r = record("chomp.jsonl", 0);
    let rounds = r["rounds"].as_u64().unwrap();
    s.scrub(rounds / 2);
    assert_eq!(s.text("#step"), format!("round {} / {rounds}", rounds / 2));
    s.screenshot("chomp");
    s.click("#last");
    assert_eq!(s.text("#score-1"), r["players"][0]["score"].to_string());
    assert_eq!(s.text("#score-2"), r["players"][1]["score"].to_string());
    // The board is empty at the end.
    let full = s.js("return document.querySelectorAll('.grid .cell:not(.empty)').length;");
    assert_eq!(full, 0);
}

/// A game on the shipped 200×100 array, recorded by a tournament with
/// `--record-moves` (the records' text form) and replayed on a page of its
/// own: it draws, and its last round's scores are the record's.
fn chomp_big(s: &Session, dir: &Path) {
    let file = common::big_chomp_tournament(dir, "big", 1, 5000);
    let out = dir.join("big-run");
    common::tournament_with_moves(&file, "1", &out);
    let page = dir.join("big.html");
    common::replay(out.join("records.jsonl"), &page);
    let record = &common::jsonl(&out.join("records.jsonl"))[0];
    s.open(&page);
    assert_eq!(s.text("#step"), "round 0 / 5000");
    s.scrub(2500);
    assert_eq!(s.text("#step"), "round 2500 / 5000");
    s.screenshot("chomp-big");
    s.click("#last");
    for seat in 0..2 {
        assert_eq!(
            s.text(&format!("#score-{}", seat + 1)),
            record["players"][seat]["score"].to_string()
        );
    }
}

fn septica(s: &Session, dir: &Path) {
    s.open(&page(dir, "septica.jsonl"));
    let r = record("septica.jsonl", 0);
    // The deal: four cards each, 24 in the stock.
    assert_eq!(
        s.js("return document.querySelectorAll('#hand-player .card').length;"),
        4
    );
    assert_eq!(s.text("#stock"), "stock: 24 cards");
    s.click("#next");
    let first = r["plays"][0]["card"].to_string();
    assert_eq!(
        s.js("return document.querySelector('#table .card').getAttribute('data-card');"),
        Value::String(first)
    );
    s.scrub(8);
    s.screenshot("septica");
    s.click("#last");
    assert_eq!(
        s.text("#points"),
        format!(
            "computer {} \u{2013} player {}",
            r["score"]["computer"], r["score"]["player"]
        )
    );
    let tricks = r["tricks"].as_array().unwrap().len() as u64;
    assert_eq!(
        s.js("return document.querySelectorAll('#tricks li').length;"),
        tricks
    );
}

fn evensteven(s: &Session, dir: &Path) {
    s.open(&page(dir, "dealer.jsonl"));
    // Game 2 of the file (seed 653723903): winnable, won.
    s.js("var p = document.getElementById('picker'); p.value = 1; p.dispatchEvent(new Event('change'));");
    assert_eq!(s.text("#title"), "evensteven #2");
    s.click("#next");
    assert_eq!(
        s.js("return document.querySelectorAll('#pairs .pair.ok').length;"),
        1
    );
    assert!(s.has_class("#hand .card[data-card='5s']", "used"));
    s.click("#last");
    assert!(s.text("#note").contains("win"));
    // Game 1 lost necessarily: no assignment.
    s.js("var p = document.getElementById('picker'); p.value = 0; p.dispatchEvent(new Event('change'));");
    s.click("#last");
    assert!(s.text("#note").contains("lose_necessarily"));
    assert_eq!(
        s.js("return document.getElementById('assignment');"),
        Value::Null
    );
    assert_eq!(
        s.js("return document.querySelectorAll('#pairs .pair.bad').length;"),
        1
    );
    // Game 3: shown with the winning assignment when one exists.
    s.js("var p = document.getElementById('picker'); p.value = 2; p.dispatchEvent(new Event('change'));");
    s.click("#last");
    s.screenshot("evensteven");
}

fn acesup(s: &Session, dir: &Path) {
    s.open(&page(dir, "acesup.jsonl"));
    let deck: Vec<String> = record("acesup.jsonl", 0)["deck"]
        .as_str()
        .unwrap()
        .split(' ')
        .map(str::to_owned)
        .collect();
    // Step 1 deals the top card onto pile 1.
    s.click("#next");
    assert_eq!(
        s.js("return document.querySelector('#pile-1 .card').getAttribute('data-card');"),
        Value::String(deck[0].clone())
    );
    s.scrub(30);
    s.screenshot("acesup");
    s.click("#last");
    let left = s.js(
        "return [1,2,3,4].map(function (p) { return document.querySelectorAll('#pile-' + p + ' .card').length; });",
    );
    let data = s.js("return JSON.parse(document.getElementById('replay-data').textContent).games[0].result.piles;");
    assert_eq!(left, data);
    assert!(s.text("#result").starts_with("game 1: "));
}

fn tron(s: &Session, dir: &Path) {
    s.open(&page(dir, "tron.jsonl"));
    let r = record("tron.jsonl", 0);
    s.click("#next");
    s.click("#next");
    // Frame 2 is turn 1: seat 0's head is drawn where the frame says.
    let head = &r["frames"][1]["heads"][0];
    let css = format!("#f-{}-{}", head[0], head[1]);
    assert_eq!(
        s.js(&format!(
            "return document.querySelector('{css}').getAttribute('data-ch');"
        )),
        "A"
    );
    assert_eq!(s.text("#note"), "turn 1");
    assert!(s.text("#frame .legend").contains("seat 0"));
    s.scrub(12);
    s.screenshot("tron");
}

/// A tournament's report.html: Even Steven, the reference player against
/// the in-order one, with the moves kept; its standings, plot, game list
/// and embedded replays.
fn report(s: &Session, dir: &Path) {
    let out = dir.join("report-run");
    common::tournament_with_moves("tournaments/evensteven.toml", "6", &out);
    let records = common::timeless_records(&out);
    s.open(&out.join("report.html"));
    assert_eq!(
        s.js("return document.querySelectorAll('#standings + table tr').length;"),
        3,
        "a header and one row per entrant"
    );
    assert_eq!(
        s.js("return document.querySelectorAll('#plot-svg polyline.series').length;"),
        2
    );
    assert_eq!(
        s.js("return document.querySelectorAll('tr[id^=game-]').length;"),
        6
    );
    // Game 3's replay link opens the reference player's game 3.
    s.click("#game-3 a[href='#game=3']");
    // The viewer follows the link on the page's hashchange event, which
    // comes after the click returns.
    let asked = Instant::now();
    while s.text("#title") != "evensteven #3 — reference"
        && asked.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(s.text("#title"), "evensteven #3 — reference");
    let plays = records[2]["players"][0]["plays"].as_array().unwrap().len();
    s.click("#last");
    assert_eq!(
        s.js("return document.querySelectorAll('#pairs .pair').length;"),
        plays as u64
    );
    let outcome = records[2]["players"][0]["outcome"].as_str().unwrap();
    assert!(s.text("#note").contains(outcome), "{}", s.text("#note"));
    s.screenshot("report");
}

/// A local port that no page may reach: a page that fetched a judge's
/// `url(...)` would knock here.
struct Trap(TcpListener);

impl Trap {
    fn new() -> Trap {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Trap(listener)
    }

    fn url(&self, path: &str) -> String {
        format!(
            "http://127.0.0.1:{}/{path}",
            self.0.local_addr().unwrap().port()
        )
    }

    /// The first line of a request that came within `wait`, if one did.
    fn caught(&self, wait: Duration) -> Option<String> {
        let deadline = Instant::now() + wait;
        loop {
            match self.0.accept() {
                Ok((mut stream, _)) => {
                    let _ = stream.set_nonblocking(false);
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
                    let mut head = [0u8; 512];
                    let n = stream.read(&mut head).unwrap_or(0);
                    let head = String::from_utf8_lossy(&head[..n]).into_owned();
                    return Some(head.lines().next().unwrap_or("").to_owned());
                }
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(_) => return None,
            }
        }
    }
}

/// A judge's colours for frame 0 of a Tron record: seat 0's head a URL,
/// seat 1's a colour name, seat 0's trail `#rgb`.
fn hostile_colours(trap: &Trap, page: &str) -> Value {
    json!({"A": format!("url({})", trap.url(page)), "B": "red", "a": "#00f"})
}

/// Steps through a frames replay already open, and checks at each step
/// that the colour values were drawn and the URL was not.
fn frames_drawn_without_fetching(s: &Session, trap: &Trap) {
    for step in ["#next", "#next", "#last"] {
        s.click(step);
        let backgrounds = s.js(
            "return Array.from(document.querySelectorAll('#frame .cell')).map(function (c) { return c.style.background; }).join(' ');",
        );
        let backgrounds = backgrounds.as_str().unwrap_or_default();
        assert!(!backgrounds.contains("url"), "{step}: {backgrounds}");
        assert_eq!(
            s.js("return document.querySelector('#frame .grid [data-ch=B]').style.background;"),
            "red",
            "{step}"
        );
    }
    assert_eq!(trap.caught(Duration::from_millis(700)), None);
}

/// Red team: a judge frame's colour `url(http://...)` was given to
/// `style.background` as it was, and the browser fetched it.
fn judge_colours_in_a_replay(s: &Session, dir: &Path) {
    let trap = Trap::new();
    let mut r = record("tron.jsonl", 0);
    r["frames"][0]["colors"] = hostile_colours(&trap, "replay.png");
    let records = write_file(dir, "colours.jsonl", format!("{r}\n"));
    let out = dir.join("colours.html");
    common::replay(&records, &out);
    s.open(&out);
    frames_drawn_without_fetching(s, &trap);
}

/// The same colours in a tournament's records, and its report.html.
fn judge_colours_in_a_report(s: &Session, dir: &Path) {
    let trap = Trap::new();
    let out = dir.join("colours-run");
    common::tournament_with_moves("tournaments/tron.toml", "1", &out);
    // As a judge of an older referee could have written them.
    let records = out.join("records.jsonl");
    let mut lines = common::jsonl(&records);
    lines[0]["frames"][0]["colors"] = hostile_colours(&trap, "report.png");
    let text: String = lines.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&records, text).unwrap();
    let run = common::referee(["report", out.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    s.open_at(&out.join("report.html"), "#game=1");
    frames_drawn_without_fetching(s, &trap);
}

/// Red team: a link with a malformed escape (`#game=%E0%A4%A`) made the
/// viewer throw, and it drew nothing.
fn a_bad_fragment_is_ignored(s: &Session, dir: &Path) {
    let page = dir.join("chomp-crafted.html");
    if !page.exists() {
        chomp_crafted(s, dir);
    }
    s.open_at(&page, "#game=%E0%A4%A&step=2");
    assert_eq!(s.text("#step"), "round 2 / 3");
    s.open_at(&page, "#game=1&step=%E0%A4%A");
    assert_eq!(s.text("#step"), "round 0 / 3");
}

/// One kind of replay, checked in the shared session.
/// The live page of a league (`referee league run --serve`): the
/// leaderboard fills in and updates itself as games finish, without a
/// reload; a name with markup in it shows as text; a student whose build
/// failed has the last row, with the compiler's first error and a link to
/// the log; copies are flagged; the page says what it ranks by; an
/// entrant's page has its plot (its versions labelled) and its games,
/// whose replay opens in the viewer and links back.
fn league_live_page(s: &Session, dir: &Path) {
    let subs = dir.join("league/subs");
    let hostile = "<img id=owned src=x onerror=alert(1)>";
    for (name, bot) in [
        ("ann", "weak"),
        ("cat", "strong"),
        (hostile, "weak"),
        ("dan", "weak"),
    ] {
        std::fs::create_dir_all(subs.join(name)).unwrap();
        std::fs::copy(
            common::fixture(&format!("duel/{bot}.sh")),
            subs.join(name).join("pc2"),
        )
        .unwrap();
    }
    write_file(
        &subs,
        "dan/Makefile",
        "all:\n\t@echo 'dan.c:3:1: error: expected semicolon' >&2; exit 1\n",
    );
    let file = write_file(
        dir,
        "league/league.toml",
        format!(
            "game = \"{}\"\n[limits]\nseats = 2\n[[entrant]]\nglob = \"subs/*\"\n",
            common::fixture("duel/game.toml")
        ),
    );
    let port = free_port();
    let marker = common::Marker::new();
    let db = dir.join("league/league.db");
    let address = format!("127.0.0.1:{port}");
    // Killed if the case fails before its end: no league outlives it.
    let mut league = Reaped(Some(
        common::command(
            common::league::run_args(&file, &db, &["--jobs", "1", "--serve", &address]),
            &marker,
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap(),
    ));
    let up = Instant::now();
    while TcpStream::connect(&address).is_err() && up.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let url = |path: &str| json!({ "url": format!("http://{address}{path}") });
    s.call("POST", "/url", Some(url("/")));
    let count = || -> u64 { s.text("#games").parse().unwrap_or(0) };
    let waited = Instant::now();
    while s.js("return document.querySelectorAll('#board tr.entrant').length;") != 4
        && waited.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        s.js("return document.querySelectorAll('#board tr.entrant').length;"),
        4
    );
    // Dan, whose build failed, last: "did not build", the first error, a
    // link to the log.
    let last = s.js(
        "var r = document.querySelector('#board tr.entrant:last-child'); \
         return [r.className, r.textContent, r.querySelector('.note a').getAttribute('href')];",
    );
    assert_eq!(last[0], "entrant unbuilt", "{last}");
    let text = last[1].as_str().unwrap();
    assert!(text.starts_with("4dan"), "{text}");
    assert_has(text, "did not build");
    assert_has(text, "dan.c:3:1: error: expected semicolon");
    assert_eq!(last[2], "/entrant/dan#v1");
    // What the rank is by, said; the copy (ann's folder is the hostile
    // one's) flagged, its name as text.
    assert!(
        s.text("#ranked-by").contains("rating − 3σ"),
        "{}",
        s.text("#ranked-by")
    );
    let flags = s.js(
        "return Array.from(document.querySelectorAll('#board .copy')).map(function (f) { return f.textContent; }).sort();",
    );
    assert_eq!(
        flags,
        json!([format!("same as {hostile}@v1"), "same as ann@v1"]),
        "{flags}"
    );
    let first = count();
    std::thread::sleep(Duration::from_millis(600));
    assert!(count() > first, "no update without a reload: {first}");
    assert_eq!(s.text("#live"), "live");
    // The markup in a name is text, not an element.
    assert_eq!(
        s.js("return document.getElementById('owned');"),
        Value::Null
    );
    let names = s.js(
        "return Array.from(document.querySelectorAll('#board tr.entrant a')).map(function (a) { return a.textContent; });",
    );
    assert!(
        names.as_array().unwrap().contains(&json!(hostile)),
        "{names}"
    );
    assert_eq!(s.js("return window.leagueErrors;"), json!([]));
    s.screenshot("league");
    // The board is drawn again at every game: found and clicked at once.
    s.js("document.querySelector(\"#board a[href='/entrant/cat']\").click();");
    let opened = Instant::now();
    while s.js("return document.getElementById('entrant') && document.getElementById('entrant').textContent;") != "cat"
        && opened.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(s.text("#entrant"), "cat");
    assert_eq!(
        s.js("return document.querySelectorAll('#plot polyline.line').length;"),
        1
    );
    assert_eq!(
        s.js("return Array.from(document.querySelectorAll('#plot text.label')).map(function (t) { return t.textContent; });"),
        json!(["v1"])
    );
    assert!(
        s.js("return document.querySelectorAll('#games tr.game').length;")
            .as_u64()
            > Some(0)
    );
    s.screenshot("league-entrant");
    s.click("#games a.replay");
    let opened = Instant::now();
    while !s.text("#title").starts_with("duel #") && opened.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        s.text("#title").starts_with("duel #"),
        "{}",
        s.text("#title")
    );
    s.screenshot("league-replay");
    // The replay links back: to the entrants' pages and the leaderboard.
    assert!(
        s.js("return document.querySelector(\"#back a[href='/entrant/cat']\") !== null;") == true
    );
    s.click("#back a[href='/']");
    let opened = Instant::now();
    while s.js("return document.querySelectorAll('#board tr.entrant').length;") != 4
        && opened.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        s.js("return document.querySelectorAll('#board tr.entrant').length;"),
        4
    );
    // Back to the replay, whose viewer the case's end checks.
    s.js("history.back();");
    let title = || {
        s.js("var t = document.getElementById('title'); return t ? t.textContent : '';")
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    let opened = Instant::now();
    while !title().starts_with("duel #") && opened.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(title().starts_with("duel #"), "{}", title());
    let mut league = league.0.take().unwrap();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(league.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    assert_eq!(league.wait().unwrap().code(), Some(130));
    marker.assert_none_left();
}

/// A process killed (and reaped) when dropped, unless taken out first.
struct Reaped(Option<Child>);

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

type Case = fn(&Session, &Path);

#[test]
fn replays_in_headless_chromium() {
    let started = Instant::now();
    let marker = common::Marker::new();
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    {
        let driver = Driver::start(&marker);
        let session = Session::new(&driver);
        let cases: [(&str, Case); 12] = [
            ("chomp (crafted)", chomp_crafted),
            ("chomp", chomp_real),
            ("chomp on a large array", chomp_big),
            ("septica", septica),
            ("evensteven", evensteven),
            ("acesup", acesup),
            ("tron", tron),
            ("report", report),
            ("judge colours in a replay", judge_colours_in_a_replay),
            ("judge colours in a report", judge_colours_in_a_report),
            ("a bad fragment", a_bad_fragment_is_ignored),
            ("league live page", league_live_page),
        ];
        for (name, case) in cases {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                case(&session, dir.path())
            }));
            if let Err(e) = outcome {
                let why = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{name}: {why}"));
            }
            let errors = session.errors();
            if !errors.is_empty() {
                failures.push(format!("{name}: script errors: {errors:?}"));
            }
        }
        // The collector itself: an error thrown in the page is seen.
        session.js("setTimeout(function () { throw new Error('probe'); }, 0);");
        std::thread::sleep(Duration::from_millis(100));
        let probe = session.errors();
        if !probe.iter().any(|e| e.contains("probe")) {
            failures.push(format!("a thrown error was not collected: {probe:?}"));
        }
        session.end();
    }
    marker.assert_none_left();
    eprintln!("browser tests took {:.1?}", started.elapsed());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
