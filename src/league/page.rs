//! An entrant's page of the live league: which version plays and why,
//! whose sources are the same as its (a copy), its versions with their
//! build logs, its standing over its games as an SVG plot (a line per
//! version, labelled, its 95% band shaded), and its recent games with
//! links to their replays; and a game's replay page with links back.
//! Everything a submission wrote is escaped.
//!
//! This file renders and [`super::serve`] routes: the server reads the
//! database and the league's state and hands what it read here; nothing
//! here knows of the server.

use std::fmt::Write;

use serde_json::{Value, json};

use super::db::VersionRow;
use crate::replay::escape_html;
use crate::tournament::standings::Point;

/// Why a version did not build, from its log: the log's first line (the
/// reason), and the compiler's first error when the log has one.
#[derive(Clone, Debug, Default)]
pub struct FailedBuild {
    pub message: String,
    pub first_error: Option<String>,
}

/// The longest first error quoted (a C++ template's can run to pages).
const ERROR_LONGEST: usize = 300;

/// A failed version's [`FailedBuild`], from its log (whose first lines
/// are the reason, then `first error: ...` when the build's output had
/// one, then the output).
pub fn failed_build(log: &str) -> FailedBuild {
    let mut lines = log.lines().map(str::trim).filter(|l| !l.is_empty());
    let message = lines.next().unwrap_or("").to_owned();
    let first_error = lines.find(|l| crate::text::is_error_line(l)).map(|l| {
        let l = l.strip_prefix("first error:").map_or(l, str::trim_start);
        crate::text::cut(l, ERROR_LONGEST).into_owned()
    });
    FailedBuild {
        message: crate::text::cut(&message, ERROR_LONGEST).into_owned(),
        first_error,
    }
}

/// What the league says of an entrant beside its versions.
#[derive(Clone, Debug, Default)]
pub struct About {
    /// The version that plays.
    pub playing: Option<u32>,
    /// Which version plays and why, when not simply its newest (`v1
    /// plays: v2 did not build`), or `did not build`.
    pub note: Option<String>,
    /// Its newest version, which did not build, and why.
    pub failed: Option<(u32, FailedBuild)>,
    /// Other entrants' versions with the same sources as the one shown.
    pub same_as: Vec<String>,
}

/// `name` as one segment of a URL's path.
pub(super) fn url_segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Game `id`'s replay (the replay viewer), with links back to the
/// leaderboard and to the pages of the entrants who played it.
pub(super) fn replay(id: u64, entrants: &[String], views: &[Value]) -> String {
    let links: String = entrants
        .iter()
        .map(|name| {
            format!(
                " · <a class=\"entrant\" href=\"/entrant/{}\">{}</a>",
                escape_html(&url_segment(name)),
                escape_html(name)
            )
        })
        .collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>game {id} — league</title>\n<style>\n{}\
         nav#back {{ margin: 0 0 .6em; }}\n</style>\n</head>\n<body>\n\
         <nav id=\"back\"><a href=\"/\">← leaderboard</a>{links}</nav>\n\
         <div id=\"replay\"></div>\n{}\n<script>\n{}</script>\n</body>\n</html>\n",
        crate::replay::STYLE,
        crate::replay::data_script("replay-data", &json!({ "games": views })),
        crate::replay::SCRIPT,
    )
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 220.0;
const MARGIN: f64 = 36.0;

/// An entrant's page: its note, its copies, its versions, its plot and
/// its recent games.
pub fn entrant(
    name: &str,
    versions: &[VersionRow],
    about: &About,
    series: &[(u32, Vec<Point>)],
    games: &[Value],
) -> String {
    let mut out = head(name);
    out += &note(about);
    out += &same_as(&about.same_as);
    out += &versions_table(versions, about.playing);
    out += "<h2>Standing over its games</h2>\n";
    out += &plot(series);
    out += &games_table(games);
    out += "</body>\n</html>\n";
    out
}

/// The page's head and title.
fn head(name: &str) -> String {
    let title = escape_html(name);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title} — league</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <p><a href=\"/\">← leaderboard</a></p>\n<h1 id=\"entrant\">{title}</h1>\n"
    )
}

/// Which version plays and why, with the failed build's first error and a
/// link to its log; nothing when there is no note.
fn note(about: &About) -> String {
    let Some(note) = &about.note else {
        return String::new();
    };
    let why = match &about.failed {
        Some((
            _,
            FailedBuild {
                first_error: Some(error),
                ..
            },
        )) => format!(": <code>{}</code>", escape_html(error)),
        Some((_, why)) => format!(": {}", escape_html(&why.message)),
        None => String::new(),
    };
    let log = match &about.failed {
        Some((n, _)) => format!(" (<a href=\"#v{n}\">its log</a>)"),
        None => String::new(),
    };
    format!(
        "<p class=\"note\" id=\"note\">{}{why}{log}</p>\n",
        escape_html(note)
    )
}

/// The other entrants' versions with the same sources (`name@vN`), each
/// a link to its entrant's page; nothing when there are none.
fn same_as(same_as: &[String]) -> String {
    if same_as.is_empty() {
        return String::new();
    }
    let others: Vec<String> = same_as
        .iter()
        .map(|full| {
            let entrant = full.rsplit_once("@v").map_or(full.as_str(), |(e, _)| e);
            format!(
                "<a href=\"/entrant/{}\">{}</a>",
                escape_html(&url_segment(entrant)),
                escape_html(full)
            )
        })
        .collect();
    format!(
        "<p class=\"copy\" id=\"same-as\">Same sources as {}: a copy, one way or the \
         other.</p>\n",
        others.join(", ")
    )
}

/// A row per version, with its build log, the one that plays marked.
fn versions_table(versions: &[VersionRow], playing: Option<u32>) -> String {
    let mut out = "<h2>Versions</h2>\n<table id=\"versions\">\n\
                   <tr><th>version</th><th>built</th><th>build</th></tr>\n"
        .to_owned();
    for v in versions {
        let outcome = if v.build_ok { "ok" } else { "did not build" };
        let build = match &v.build_log {
            Some(log) => format!("{outcome}<pre class=\"log\">{}</pre>", escape_html(log)),
            None => outcome.to_owned(),
        };
        let plays = if playing == Some(v.version) {
            " <strong class=\"plays\">plays</strong>"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<tr class=\"version\" id=\"v{n}\"><td>v{n}{plays}</td><td>{}</td><td>{build}</td></tr>",
            escape_html(&v.built),
            n = v.version,
        );
    }
    out += "</table>\n";
    out
}

/// A row per recent game: its seats and how each did, and a link to its
/// replay.
fn games_table(games: &[Value]) -> String {
    let mut out = "<h2>Recent games</h2>\n<table id=\"games\">\n\
                   <tr><th>game</th><th>finished</th><th>seats</th><th></th></tr>\n"
        .to_owned();
    for game in games {
        let id = game["game"].as_u64().unwrap_or(0);
        let seats: Vec<String> = game["seats"]
            .as_array()
            .into_iter()
            .flatten()
            .map(seat)
            .collect();
        let _ = writeln!(
            out,
            "<tr class=\"game\"><td>{id}</td><td>{}</td><td>{}</td>\
             <td><a class=\"replay\" href=\"/replay/{id}\">replay</a></td></tr>",
            escape_html(game["finished"].as_str().unwrap_or("")),
            seats.join(", ")
        );
    }
    out += "</table>\n";
    out
}

/// A seat of a game: who, and how it did (won, lost, its score, or how
/// it failed).
fn seat(s: &Value) -> String {
    let how = match (s["status"].as_str(), &s["won"], &s["score"]) {
        (Some("ok"), Value::Bool(won), _) => if *won { "won" } else { "lost" }.to_owned(),
        (Some("ok"), _, score) if !score.is_null() => score.to_string(),
        (status, _, _) => status.unwrap_or("?").to_owned(),
    };
    format!(
        "{} {}",
        escape_html(s["entrant"].as_str().unwrap_or("?")),
        escape_html(&how)
    )
}

/// The versions' standings over the league's games, one line each, with
/// their 95% bands, each labelled with its version at its last point.
fn plot(series: &[(u32, Vec<Point>)]) -> String {
    let points: Vec<&Point> = series.iter().flat_map(|(_, p)| p).collect();
    if points.is_empty() {
        return "<p id=\"plot\">No games yet.</p>\n".to_owned();
    }
    let (x0, x1) = points
        .iter()
        .fold((u64::MAX, 0), |(a, b), p| (a.min(p.index), b.max(p.index)));
    let (y0, y1) = points.iter().fold((f64::MAX, f64::MIN), |(a, b), p| {
        (a.min(p.low.min(p.value)), b.max(p.high.max(p.value)))
    });
    let (y0, y1) = if y1 - y0 < 1e-9 {
        (y0 - 1.0, y1 + 1.0)
    } else {
        (y0, y1)
    };
    let x = |i: u64| MARGIN + (i - x0) as f64 / (x1 - x0).max(1) as f64 * (WIDTH - 2.0 * MARGIN);
    let y = |v: f64| HEIGHT - MARGIN - (v - y0) / (y1 - y0) * (HEIGHT - 2.0 * MARGIN);
    let mut svg = format!(
        "<svg id=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\">\n\
         <text x=\"4\" y=\"14\">{y1:.2}</text><text x=\"4\" y=\"{:.0}\">{y0:.2}</text>\n\
         <text x=\"{MARGIN}\" y=\"{:.0}\">game {x0}</text>\
         <text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"end\">game {x1}</text>\n",
        HEIGHT - MARGIN,
        HEIGHT - 8.0,
        WIDTH - MARGIN,
        HEIGHT - 8.0
    );
    for (k, (version, points)) in series.iter().enumerate() {
        let Some(last) = points.last() else {
            continue;
        };
        let band: Vec<String> = points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.index), y(p.high)))
            .chain(
                points
                    .iter()
                    .rev()
                    .map(|p| format!("{:.1},{:.1}", x(p.index), y(p.low))),
            )
            .collect();
        let line: Vec<String> = points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.index), y(p.value)))
            .collect();
        let _ = writeln!(
            svg,
            "<g class=\"series s{}\"><title>v{version}</title><polygon class=\"band\" points=\"{}\"/>\
             <polyline class=\"line\" points=\"{}\"/>\
             <text class=\"label\" x=\"{:.1}\" y=\"{:.1}\">v{version}</text></g>",
            k % 6,
            band.join(" "),
            line.join(" "),
            x(last.index) + 4.0,
            y(last.value) + 4.0,
        );
    }
    svg += "</svg>\n";
    svg
}

const STYLE: &str = "
body { font: 15px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1em; }
td, th { border-bottom: 1px solid #ddd; padding: 3px 10px; text-align: left; vertical-align: top; }
pre.log { max-height: 14em; overflow: auto; background: #f6f6f6; padding: 6px; }
svg text { font-size: 11px; fill: #555; }
.band { fill-opacity: 0.15; stroke: none; }
.line { fill: none; stroke-width: 2; }
.note { color: #a33; font-weight: 600; }
.copy { color: #8a5a00; font-weight: 600; }
.plays { color: #2a7a2a; font-size: 13px; }
svg text.label { font-size: 12px; font-weight: 600; }
.s0 .band { fill: #1f77b4; } .s0 .line { stroke: #1f77b4; } .s0 .label { fill: #1f77b4; }
.s1 .band { fill: #d62728; } .s1 .line { stroke: #d62728; } .s1 .label { fill: #d62728; }
.s2 .band { fill: #2ca02c; } .s2 .line { stroke: #2ca02c; } .s2 .label { fill: #2ca02c; }
.s3 .band { fill: #9467bd; } .s3 .line { stroke: #9467bd; } .s3 .label { fill: #9467bd; }
.s4 .band { fill: #ff7f0e; } .s4 .line { stroke: #ff7f0e; } .s4 .label { fill: #ff7f0e; }
.s5 .band { fill: #8c564b; } .s5 .line { stroke: #8c564b; } .s5 .label { fill: #8c564b; }
";

#[cfg(test)]
mod tests {
    use super::*;

    fn version(version: u32, build_ok: bool, log: Option<&str>) -> VersionRow {
        VersionRow {
            id: i64::from(version),
            entrant: "ann <b>".into(),
            version,
            fingerprint: "f".into(),
            products: Vec::new(),
            built: format!("2026-01-0{version} 10:00"),
            build_ok,
            build_log: log.map(str::to_owned),
            retired: false,
            player: None,
        }
    }

    fn point(index: u64, value: f64) -> Point {
        Point {
            index,
            value,
            low: value - 1.0,
            high: value + 1.5,
        }
    }

    /// An entrant's page, byte for byte as it was rendered before it was
    /// written as its steps (`tests/fixtures/golden/league-entrant.html`;
    /// `REFEREE_BLESS=1` writes it again after a deliberate change).
    #[test]
    fn an_entrant_page_is_the_golden_one() {
        let versions = [
            version(1, true, Some("ok & fine")),
            version(
                2,
                false,
                Some("make failed\nfirst error: a.c:1: error: <x>"),
            ),
        ];
        let about = About {
            playing: Some(1),
            note: Some("v1 plays: v2 did not build".into()),
            failed: Some((2, failed_build(versions[1].build_log.as_deref().unwrap()))),
            same_as: vec!["bob/x@v3".into(), "cy@v1".into()],
        };
        let series = [
            (1, vec![point(1, 0.5), point(4, 2.0), point(9, 1.25)]),
            (2, Vec::new()),
        ];
        let games: Vec<Value> = serde_json::from_str(
            r#"[{"game": 9, "finished": "10:05", "seats": [
                  {"entrant": "ann <b>@v1", "status": "ok", "won": true},
                  {"entrant": "bob/x@v3", "status": "ok", "won": false}]},
                {"game": 4, "finished": "10:02", "seats": [
                  {"entrant": "ann <b>@v1", "status": "ok", "score": 12.5},
                  {"entrant": "cy@v1", "status": "timeout"}]},
                {"game": 1, "seats": [{"status": "crashed"}]}]"#,
        )
        .unwrap();
        // The style sheet is the page's own, not what is checked.
        let page = entrant("ann <b>", &versions, &about, &series, &games).replace(STYLE, "STYLE");
        let golden = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/golden/league-entrant.html"
        );
        if std::env::var_os("REFEREE_BLESS").is_some() {
            std::fs::write(golden, &page).unwrap();
        }
        assert_eq!(page, std::fs::read_to_string(golden).unwrap());
        let empty = entrant("cy", &versions[..1], &About::default(), &[], &[]);
        assert!(
            empty.contains("<p id=\"plot\">No games yet.</p>"),
            "{empty}"
        );
    }
}
