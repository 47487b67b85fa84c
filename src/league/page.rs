//! An entrant's page of the live league: its versions with their build
//! logs, its standing over its games as an SVG plot (a line per version,
//! its 95% band shaded), and its recent games with links to their
//! replays. Everything a submission wrote is escaped.

use std::fmt::Write;

use serde_json::Value;

use super::db::VersionRow;
use crate::replay::escape_html;
use crate::tournament::standings::Point;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 220.0;
const MARGIN: f64 = 36.0;

pub fn entrant(
    name: &str,
    versions: &[VersionRow],
    series: &[(String, Vec<Point>)],
    games: &[Value],
) -> String {
    let name = escape_html(name);
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{name} — league</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <p><a href=\"/\">← leaderboard</a></p>\n<h1 id=\"entrant\">{name}</h1>\n"
    );
    out += "<h2>Versions</h2>\n<table id=\"versions\">\n\
            <tr><th>version</th><th>built</th><th>build</th></tr>\n";
    for v in versions {
        let outcome = if v.build_ok { "ok" } else { "failed" };
        let build = match &v.build_log {
            Some(log) => format!("{outcome}<pre class=\"log\">{}</pre>", escape_html(log)),
            None => outcome.to_owned(),
        };
        let _ = writeln!(
            out,
            "<tr class=\"version\"><td>v{}</td><td>{}</td><td>{build}</td></tr>",
            v.version,
            escape_html(&v.built)
        );
    }
    out += "</table>\n<h2>Standing over its games</h2>\n";
    out += &plot(series);
    out += "<h2>Recent games</h2>\n<table id=\"games\">\n\
            <tr><th>game</th><th>finished</th><th>seats</th><th></th></tr>\n";
    for game in games {
        let id = game["game"].as_u64().unwrap_or(0);
        let seats: Vec<String> = game["seats"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                let how = match (s["status"].as_str(), &s["won"], &s["score"]) {
                    (Some("ok"), Value::Bool(won), _) => {
                        if *won { "won" } else { "lost" }.to_owned()
                    }
                    (Some("ok"), _, score) if !score.is_null() => score.to_string(),
                    (status, _, _) => status.unwrap_or("?").to_owned(),
                };
                format!(
                    "{} {}",
                    escape_html(s["entrant"].as_str().unwrap_or("?")),
                    escape_html(&how)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "<tr class=\"game\"><td>{id}</td><td>{}</td><td>{}</td>\
             <td><a class=\"replay\" href=\"/replay/{id}\">replay</a></td></tr>",
            escape_html(game["finished"].as_str().unwrap_or("")),
            seats.join(", ")
        );
    }
    out += "</table>\n</body>\n</html>\n";
    out
}

/// The versions' standings over the league's games, one line each, with
/// their 95% bands.
fn plot(series: &[(String, Vec<Point>)]) -> String {
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
    for (k, (name, points)) in series.iter().enumerate() {
        if points.is_empty() {
            continue;
        }
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
            "<g class=\"series s{}\"><title>{}</title><polygon class=\"band\" points=\"{}\"/>\
             <polyline class=\"line\" points=\"{}\"/></g>",
            k % 6,
            escape_html(name),
            band.join(" "),
            line.join(" ")
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
.s0 .band { fill: #1f77b4; } .s0 .line { stroke: #1f77b4; }
.s1 .band { fill: #d62728; } .s1 .line { stroke: #d62728; }
.s2 .band { fill: #2ca02c; } .s2 .line { stroke: #2ca02c; }
.s3 .band { fill: #9467bd; } .s3 .line { stroke: #9467bd; }
.s4 .band { fill: #ff7f0e; } .s4 .line { stroke: #ff7f0e; }
.s5 .band { fill: #8c564b; } .s5 .line { stroke: #8c564b; }
";
