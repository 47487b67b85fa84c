//! `report.html`: a tournament's results as one self-contained page —
//! standings, each entrant's rating or win rate over the games with its
//! interval, score distributions, failures by kind, the slowest moves and
//! every game — made from the output directory's records alone, so that a
//! resumed run and merged shards get the same page (`referee report DIR`).
//!
//! The page loads nothing: tables, plots drawn here as inline SVG (a
//! polyline and a band per entrant need no library), and the replay viewer
//! of `referee replay` with the first games' data inline (up to
//! [`MOST_REPLAYS`] games and [`MOST_REPLAY_BYTES`]; the page says which),
//! so it opens from a laptop, a CI artifact or an e-mail. The replays go
//! move by move when the run kept the moves (`--record-moves`); otherwise
//! they show each game's setup and result.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::standings::{self, Point, Row};
use super::{RunInfo, read_run_info, records_path};
use crate::game::{GameRecord, SeatResult};
use crate::outcome::Status;
use crate::record;
use crate::units::human_micros;

/// The most games whose replays a report embeds; a longer run's games are
/// replayed with `referee replay DIR/records.jsonl --game N`.
pub const MOST_REPLAYS: usize = 500;
/// The most bytes of replay data a report embeds, whatever the count: the
/// browser parses it all when the page opens, and a Chomp game on the
/// 200×100 array is about 150 KB of it (200 such games made a 50 MB page).
pub const MOST_REPLAY_BYTES: usize = 6_000_000;
/// The games listed in full: the first this many, then as many again of
/// the rest where something went wrong. Every game stays in
/// `records.jsonl`; a list of 10⁵ rows would make the page too big to open.
pub const MOST_LISTED: usize = 1000;

/// The report's file in an output directory.
pub fn report_path(out: &Path) -> PathBuf {
    out.join("report.html")
}

/// Writes `OUT/report.html` (or `to`) from `OUT`'s `run.json` and records,
/// read one at a time: the page is made in memory that does not grow with
/// the games.
pub fn regenerate(out: &Path, to: Option<&Path>) -> Result<PathBuf, String> {
    let info = read_run_info(out)?;
    let mut gathered = Gathered::new(&info);
    let path = records_path(out);
    // As merge does: a record that cannot be one of the run's games would
    // put a game nobody played on the page.
    let mut check = super::FileCheck::for_report(&info, &path);
    for r in record::numbered_records::<GameRecord>(&path).map_err(|e| e.to_string())? {
        let (line, r) = r.map_err(|e| e.to_string())?;
        if r.tournament.as_deref() == Some(info.fingerprint.as_str()) {
            check.check(line, &r)?;
            gathered.add(r);
        }
    }
    let path = to.map_or_else(|| report_path(out), Path::to_owned);
    record::write_file(&path, gathered.render(&info, out).as_bytes())?;
    Ok(path)
}

/// The page for `records` (of the run `info`); `base` is where the
/// replays look for files the records name (Chomp's arrays).
pub fn render(info: &RunInfo, records: &[GameRecord], base: &Path) -> String {
    let mut gathered = Gathered::new(info);
    for r in records {
        gathered.add(r.clone());
    }
    gathered.render(info, base)
}

/// What the page shows, gathered one record at a time: the standings'
/// tally, counts, and a bounded number of games (the listed ones, the
/// replayed ones, the slowest moves), however long the run.
struct Gathered {
    entrants: Vec<String>,
    solo: bool,
    /// The records not taken yet, put in game order.
    order: standings::InOrder,
    /// The first [`MOST_REPLAYS`] games, whole (moves and all).
    replayed: BTreeMap<u64, GameRecord>,
    tally: standings::Tally,
    game: Option<String>,
    played: u64,
    outcomes: Vec<BTreeMap<String, u64>>,
    groups: BTreeMap<String, ScoreGroup>,
    failures: Failures,
    /// The ten slowest moves: (time, game, entrant).
    slowest: Vec<(u64, u64, String)>,
    listed: Vec<GameRecord>,
    listed_failed: usize,
}

/// The scores of one group of games (Chomp: one array), per entrant.
#[derive(Default)]
struct ScoreGroup {
    lo: f64,
    hi: f64,
    scores: BTreeMap<usize, ScoreCounts>,
}

/// Scores as counts of each value: the median and a histogram without
/// keeping a value per game (a game's scores take few values).
#[derive(Default)]
struct ScoreCounts {
    counts: BTreeMap<u64, u64>,
    n: u64,
    sum: f64,
}

impl ScoreCounts {
    /// A key whose order is the scores' order.
    fn key(x: f64) -> u64 {
        let bits = x.to_bits();
        if bits >> 63 == 1 {
            !bits
        } else {
            bits | 1 << 63
        }
    }

    fn value(key: u64) -> f64 {
        f64::from_bits(if key >> 63 == 1 {
            key & !(1 << 63)
        } else {
            !key
        })
    }

    fn add(&mut self, x: f64) {
        *self.counts.entry(Self::key(x)).or_default() += 1;
        self.n += 1;
        self.sum += x;
    }

    /// Each value with its count, smallest first.
    fn values(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.counts.iter().map(|(&k, &n)| (Self::value(k), n))
    }

    /// The value at `rank` (from 0) in sorted order.
    fn at(&self, rank: u64) -> f64 {
        let mut seen = 0;
        for (value, n) in self.values() {
            seen += n;
            if rank < seen {
                return value;
            }
        }
        0.0
    }
}

/// Failures by entrant and kind, and the first ones with their messages.
#[derive(Default)]
struct Failures {
    counts: BTreeMap<(usize, String), u64>,
    /// (game, entrant, kind, message).
    examples: Vec<(u64, String, String, String)>,
}

const MOST_EXAMPLES: usize = 50;
const MOST_SLOWEST: usize = 10;
/// Points per entrant the plot draws.
const MOST_POINTS: usize = 400;

impl Gathered {
    fn new(info: &RunInfo) -> Gathered {
        let (first, step) = info.shard.unwrap_or((1, 1));
        Gathered {
            entrants: info.entrants.clone(),
            solo: info.solo,
            order: standings::InOrder::new(first, step),
            replayed: BTreeMap::new(),
            tally: standings::Tally::new(
                info.solo,
                &info.entrants,
                info.gauntlet.as_deref(),
                Some(MOST_POINTS),
            )
            .games_from(first, step),
            game: None,
            played: 0,
            outcomes: vec![BTreeMap::new(); info.entrants.len()],
            groups: BTreeMap::new(),
            failures: Failures::default(),
            slowest: Vec::new(),
            listed: Vec::new(),
            listed_failed: 0,
        }
    }

    fn add(&mut self, record: GameRecord) {
        self.keep_for_replay(&record);
        self.order.push(super::units::summary(&record));
        while let Some(record) = self.order.next_ready() {
            self.take(record);
        }
    }

    /// Keeps the first games whole for their replays; a game played to its
    /// end replaces a void record of it.
    fn keep_for_replay(&mut self, record: &GameRecord) {
        let replaces = self
            .replayed
            .get(&record.index)
            .is_some_and(|kept| kept.is_void() && !record.is_void());
        let first = !self.replayed.contains_key(&record.index);
        let early = self.replayed.len() < MOST_REPLAYS
            || self
                .replayed
                .last_key_value()
                .is_some_and(|(&last, _)| record.index < last);
        if replaces || (first && early) {
            self.replayed.insert(record.index, record.clone());
            if self.replayed.len() > MOST_REPLAYS {
                self.replayed.pop_last();
            }
        }
    }

    /// One game, in game order.
    fn take(&mut self, r: GameRecord) {
        self.game.get_or_insert_with(|| r.game.clone());
        self.played += 1;
        if !r.is_void() {
            self.count_distribution(&r);
        }
        self.count_failures(&r);
        for x in &r.results {
            if let Some(micros) = x.slowest_micros {
                let entrant = x.entrant.clone().unwrap_or_else(|| "?".to_owned());
                self.slowest.push((micros, r.index, entrant));
            }
        }
        self.slowest
            .sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        self.slowest.truncate(MOST_SLOWEST);
        self.list(&r);
        self.tally.add(r);
    }

    fn seat_of(&self, name: &str) -> Option<usize> {
        self.entrants.iter().position(|e| e == name)
    }

    fn count_distribution(&mut self, r: &GameRecord) {
        if self.solo {
            for x in &r.results {
                if let Some(i) = x.entrant.as_deref().and_then(|n| self.seat_of(n)) {
                    *self.outcomes[i].entry(outcome_word(x)).or_default() += 1;
                }
            }
            return;
        }
        // Scores per setup group (Chomp: per array), then per entrant.
        let key = r
            .setup
            .get("array")
            .and_then(|a| a.as_str())
            .unwrap_or("all games")
            .to_owned();
        let seats: Vec<(Option<usize>, f64)> = r
            .results
            .iter()
            .filter_map(|x| {
                Some((
                    x.entrant.as_deref().and_then(|n| self.seat_of(n)),
                    x.points()?,
                ))
            })
            .collect();
        let group = self.groups.entry(key).or_insert_with(|| ScoreGroup {
            lo: f64::MAX,
            hi: f64::MIN,
            scores: BTreeMap::new(),
        });
        for (seat, score) in seats {
            group.lo = group.lo.min(score);
            group.hi = group.hi.max(score);
            if let Some(i) = seat {
                group.scores.entry(i).or_default().add(score);
            }
        }
    }

    fn count_failures(&mut self, r: &GameRecord) {
        let failures = &mut self.failures;
        for result in &r.results {
            if result.status() == Status::Ok {
                continue;
            }
            let Some(name) = result.entrant.as_deref() else {
                continue;
            };
            let who = self
                .entrants
                .iter()
                .position(|e| e == name)
                .unwrap_or(usize::MAX);
            *failures
                .counts
                .entry((who, result.verdict.to_string()))
                .or_default() += 1;
            if failures.examples.len() < MOST_EXAMPLES {
                failures.examples.push((
                    r.index,
                    name.to_owned(),
                    result.verdict.to_string(),
                    result.error.clone().unwrap_or_default(),
                ));
            }
        }
        if let Some(e) = &r.judge_error
            && failures.examples.len() < MOST_EXAMPLES
        {
            failures.examples.push((
                r.index,
                "(judge)".to_owned(),
                "judge error".to_owned(),
                e.message.clone(),
            ));
        }
    }

    /// The games the list shows: the first [`MOST_LISTED`], then as many
    /// again of the others that have a failure.
    fn list(&mut self, r: &GameRecord) {
        let failed = r.judge_error.is_some() || r.results.iter().any(|x| x.status() != Status::Ok);
        if self.played as usize <= MOST_LISTED {
            self.listed.push(r.clone());
        } else if failed && self.listed_failed < MOST_LISTED {
            self.listed_failed += 1;
            self.listed.push(r.clone());
        }
    }

    fn render(mut self, info: &RunInfo, base: &Path) -> String {
        while let Some(record) = self.order.pop() {
            self.take(record);
        }
        let entrants = &info.entrants;
        let rows = self.tally.rows();
        let history = self.tally.history();
        let game = self.game.clone().unwrap_or_else(|| info.game.name());
        let mut page = String::with_capacity(64 << 10);
        let _ = write!(
            page,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{title}</title><style>{REPLAY_STYLE}{STYLE}</style></head><body>\n\
             <h1>{title}</h1>\n<p class=\"meta\">{played} of {games} game{s}, seed {seed}, \
             {n} entrant{ns}{shard}. Made by referee {version} from the run's records; \
             <code>referee report DIR</code> makes it again.</p>\n",
            title = esc(&format!("Tournament: {game}")),
            played = self.played,
            games = info.games,
            s = plural(info.games),
            seed = info.seed,
            n = entrants.len(),
            ns = plural(entrants.len() as u64),
            shard = info
                .shard
                .map_or(String::new(), |(k, n)| format!(" (shard {k} of {n})")),
            version = record::REFEREE_VERSION,
            REPLAY_STYLE = crate::replay::STYLE,
        );
        let replayed: Vec<GameRecord> = std::mem::take(&mut self.replayed).into_values().collect();
        let replayed = replays(&replayed, base);
        section_standings(&mut page, info.solo, &rows);
        section_pairs(&mut page, &self.tally, &rows);
        section_plot(&mut page, info.solo, entrants, &history);
        if info.solo {
            section_outcomes(&mut page, entrants, &self.outcomes);
        } else {
            section_distribution(&mut page, entrants, &self.groups);
        }
        section_failures(&mut page, entrants, &self.failures);
        section_slowest(&mut page, &self.slowest);
        section_games(&mut page, info.solo, &self.listed, self.played, &replayed);
        section_replays(&mut page, &replayed, self.played as usize, base);
        page.push_str("</body></html>\n");
        page
    }
}

/// The replay viewer's data for the first games, within [`MOST_REPLAYS`]
/// and [`MOST_REPLAY_BYTES`], and why a game has none.
#[derive(Default)]
struct Replays {
    /// The views of the games embedded, as JSON.
    views: Vec<String>,
    /// The games embedded.
    shown: BTreeSet<u64>,
    /// Whether a game embedded kept its moves.
    recorded: bool,
    missing: BTreeMap<u64, String>,
    /// When a cap stopped the replays: how many games they cover.
    capped_at: Option<usize>,
}

fn replays(records: &[GameRecord], base: &Path) -> Replays {
    let mut out = Replays::default();
    let mut bytes = 0;
    for (i, r) in records.iter().enumerate() {
        if i == MOST_REPLAYS {
            out.capped_at = Some(i);
            break;
        }
        let value = serde_json::to_value(r).unwrap_or_default();
        let views = match crate::replay::views(&value, base) {
            Ok(views) => views,
            Err(e) => {
                out.missing.insert(r.index, e);
                continue;
            }
        };
        let json: Vec<String> = views.iter().map(serde_json::Value::to_string).collect();
        bytes += json.iter().map(String::len).sum::<usize>();
        if bytes > MOST_REPLAY_BYTES {
            out.capped_at = Some(i);
            break;
        }
        out.recorded |= views.iter().any(|v| v["recorded"] != false);
        out.shown.insert(r.index);
        out.views.extend(json);
    }
    out
}

fn section_replays(page: &mut String, replays: &Replays, games: usize, base: &Path) {
    page.push_str("<h2 id=\"replays\">Replays</h2>\n");
    if let Some(covered) = replays.capped_at {
        let _ = writeln!(
            page,
            "<p class=\"meta\" id=\"replays-capped\">Replays of the first {covered} of the \
             {games} games: a report embeds at most {MOST_REPLAYS} games and {} MB of replays. \
             <code>referee replay {}/records.jsonl --game K</code> makes a page replaying \
             game K.</p>",
            MOST_REPLAY_BYTES / 1_000_000,
            esc(&base.display().to_string()),
        );
    }
    if replays.views.is_empty() {
        page.push_str("<p class=\"meta\">No game can be replayed from these records.</p>\n");
        return;
    }
    if !replays.recorded {
        page.push_str(
            "<p class=\"meta\">The run did not keep its moves: each replay shows the game's \
             setup and result. Run the tournament with <code>--record-moves</code> to replay \
             every move.</p>\n",
        );
    }
    page.push_str("<div id=\"replay\"></div>\n");
    page.push_str(&crate::replay::games_script("replay-data", &replays.views));
    let _ = write!(
        page,
        "\n<script>\n{}</script>\n<script>\
         window.addEventListener('hashchange',function(){{if(/^#game=/.test(location.hash))\
         document.getElementById('replay').scrollIntoView();}});</script>\n",
        crate::replay::SCRIPT
    );
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:70em;\
padding:0 1em;color:#222}h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em;\
border-bottom:1px solid #ccc}table{border-collapse:collapse;margin:.5em 0}\
td,th{padding:.2em .6em;border-bottom:1px solid #eee;text-align:right}\
td:first-child,th:first-child,td.l,th.l{text-align:left}th{background:#f4f4f4}\
.meta{color:#555}.bad{color:#b00020}.ok{color:#0a7d32}.key span{display:inline-block;\
margin-right:1em}.key i{display:inline-block;width:1em;height:.6em;margin-right:.3em}\
svg text{font:11px system-ui,sans-serif;fill:#444}code{background:#f4f4f4;padding:0 .2em}\
details{margin:.3em 0}";

/// Colours for entrants, in order (repeating after ten).
const COLOURS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
    "#7f7f7f", "#bcbd22",
];

fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Text for HTML, attribute values included.
fn esc(text: &str) -> String {
    crate::replay::escape_html(text)
}

fn section_standings(page: &mut String, solo: bool, rows: &[Row]) {
    let with_elo = rows.iter().any(|r| r.elo.is_some());
    standings_head(page, solo, with_elo, rows);
    for row in rows {
        standings_row(page, solo, with_elo, row);
    }
    page.push_str("</table>\n");
    standings_notes(page, solo, rows);
}

/// The standings table's heading: its columns for one-player games or
/// for games between players.
fn standings_head(page: &mut String, solo: bool, with_elo: bool, rows: &[Row]) {
    page.push_str("<h2 id=\"standings\">Standings</h2>\n<table><tr><th>rank</th><th class=\"l\">entrant</th><th>games</th>");
    if solo {
        let vs = rows.first().and_then(|r| r.paired_vs.as_deref());
        let _ = write!(
            page,
            "<th>win rate</th><th>95% interval</th><th>vs {}</th>",
            vs.map_or("best".to_owned(), esc)
        );
    } else {
        page.push_str("<th>rating</th><th>± σ</th>");
        if with_elo {
            page.push_str("<th>Elo</th>");
        }
        page.push_str("<th>wins</th><th>mean score</th>");
    }
    for class in standings::FAILURES {
        let _ = write!(page, "<th>{class}</th>");
    }
    page.push_str("<th>slowest move</th><th>memory</th><th>CPU (most in a game)</th></tr>\n");
}

/// One entrant's line of the standings table.
fn standings_row(page: &mut String, solo: bool, with_elo: bool, row: &Row) {
    let _ = write!(
        page,
        "<tr><td>{}</td><td class=\"l\">{}</td><td>{}</td>",
        row.rank,
        esc(&row.entrant),
        row.games
    );
    if solo {
        let _ = write!(
            page,
            "<td>{:.1}%</td><td>{:.1}–{:.1}%</td><td>{:+.3} ± {:.3}</td>",
            100.0 * row.win_rate.unwrap_or(0.0),
            100.0 * row.win_rate_low.unwrap_or(0.0),
            100.0 * row.win_rate_high.unwrap_or(0.0),
            row.paired_diff.unwrap_or(0.0),
            row.paired_diff_ci.unwrap_or(0.0)
        );
    } else {
        let _ = write!(
            page,
            "<td>{:.2}</td><td>{:.2}</td>",
            row.rating.unwrap_or(0.0),
            row.uncertainty.unwrap_or(0.0)
        );
        if with_elo {
            let _ = write!(page, "<td>{}</td>", esc(&standings::elo_cell(row)));
        }
        let _ = write!(
            page,
            "<td>{}</td><td>{:.1} ± {:.1}</td>",
            trim_float(row.wins),
            row.mean_score.unwrap_or(0.0),
            row.mean_score_ci.unwrap_or(0.0)
        );
    }
    for count in row.failures() {
        let class = if count > 0 { " class=\"bad\"" } else { "" };
        let _ = write!(page, "<td{class}>{count}</td>");
    }
    let _ = writeln!(
        page,
        "<td>{}</td><td>{}</td><td>{}</td></tr>",
        human_micros(row.slowest_micros),
        standings::memory(row.max_memory_bytes),
        standings::cpu(row.max_cpu_micros)
    );
}

/// What is said under the standings table: why a crasher may rank high
/// (the same note as grades.csv's), shared wins, the Elo and the ratings.
fn standings_notes(page: &mut String, solo: bool, rows: &[Row]) {
    for row in rows {
        if let Some(note) = standings::crashed_every_game(row) {
            let _ = writeln!(
                page,
                "<p class=\"note\">{}: {}</p>",
                esc(&row.entrant),
                esc(note)
            );
        }
    }
    if !solo {
        let _ = writeln!(page, "<p>{}</p>", esc(standings::SHARED_WINS));
    }
    if let Some(line) = standings::elo_line(solo, rows) {
        let _ = writeln!(page, "<p>{}</p>", esc(&line));
    }
    if let Some(e) = rows.first().and_then(|r| r.elo.as_ref()) {
        let lines = crate::stats::match_lines(&e.estimate(), e.outcomes(), e.elo_pentanomial);
        let _ = writeln!(page, "<pre>{}</pre>", esc(&lines));
    }
    if !solo {
        page.push_str(RATING_NOTE);
    }
}

/// What the ratings of games between players come from: each game's
/// places, which are the judge's `ranking` where it sends one.
const RATING_NOTE: &str = "<p class=\"meta\">Ratings are Weng-Lin (OpenSkill), updated game \
    by game from each game's places: the judge's ranking when it sends one (<code>end.ranking\
    </code>), else the ranking of the scores (equal scores tie); a seat that never played places \
    last. The standings are ranked by rating − 3σ. A win shared by k players counts 1/k.</p>\n";

/// Every two entrants that met, with their Elo (three entrants or more:
/// two have theirs under the standings).
fn section_pairs(page: &mut String, tally: &standings::Tally, rows: &[Row]) {
    let pairs = tally.meetings(rows);
    let Some(text) = standings::pairs_heading(tally, rows, &pairs) else {
        return;
    };
    if pairs.is_empty() {
        let _ = writeln!(page, "<p>{}</p>", esc(&text));
        return;
    }
    page.push_str(
        "<h2 id=\"pairs\">Per pair</h2>\n<p>Each two entrants that met, from the first's side: \
         its games against the second, its Elo, normalised Elo and likelihood of superiority \
         against it, as fastchess prints them.</p>\n<table><tr><th class=\"l\">entrant</th>\
         <th class=\"l\">opponent</th><th>games</th><th>W-D-L</th><th>pentanomial</th>\
         <th>Elo (95%)</th><th>nElo (95%)</th><th>LOS</th></tr>\n",
    );
    for p in &pairs {
        let e = p.estimate();
        let penta = standings::pentanomial_cell(p);
        let _ = writeln!(
            page,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}-{}-{}</td>\
             <td>{penta}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.entrant),
            esc(&p.opponent),
            p.games,
            p.wins,
            p.draws,
            p.losses,
            esc(&e.fastchess_elo()),
            esc(&e.fastchess_nelo()),
            esc(&e.fastchess_los()),
        );
    }
    page.push_str("</table>\n");
}

/// A number without a trailing `.0` (wins can be fractions).
fn trim_float(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// At most `most` points, evenly spread, the last one kept: a plot of a
/// long run stays small.
fn thin(points: &[Point], most: usize) -> Vec<Point> {
    if points.len() <= most {
        return points.to_vec();
    }
    let step = points.len() as f64 / most as f64;
    let mut out: Vec<Point> = (0..most)
        .map(|k| points[(k as f64 * step) as usize])
        .collect();
    if let Some(last) = points.last() {
        out.push(*last);
    }
    out
}

fn section_plot(page: &mut String, solo: bool, entrants: &[String], history: &[Vec<Point>]) {
    let (title, what) = if solo {
        (
            "Win rate over the games",
            "each entrant's win rate so far, with Wilson's 95% interval shaded",
        )
    } else {
        (
            "Rating over the games",
            "each entrant's rating after each of its games, rating ± 2σ shaded",
        )
    };
    let _ = writeln!(
        page,
        "<h2 id=\"plot\">{title}</h2>\n<p class=\"meta\">{what}.</p>"
    );
    let series: Vec<Vec<Point>> = history.iter().map(|h| thin(h, MOST_POINTS)).collect();
    let frame = PlotFrame::around(&series, solo);
    frame.axes(page, title, solo);
    for (i, points) in series.iter().enumerate() {
        frame.series(page, points, colour(i), &entrants[i]);
    }
    page.push_str("</svg>\n<p class=\"key\">");
    for (i, name) in entrants.iter().enumerate() {
        let _ = write!(
            page,
            "<span><i style=\"background:{}\"></i>{}</span>",
            colour(i),
            esc(name)
        );
    }
    page.push_str("</p>\n");
}

/// The plot's box and scales: games from 1 to the last along x, the
/// values' range (a rate's 0 to 1) along y.
struct PlotFrame {
    x_max: u64,
    y_min: f64,
    y_max: f64,
}

impl PlotFrame {
    const WIDTH: f64 = 800.0;
    const HEIGHT: f64 = 300.0;
    const LEFT: f64 = 50.0;
    const BOTTOM: f64 = 25.0;
    const TOP: f64 = 10.0;
    const RIGHT: f64 = 10.0;

    fn around(series: &[Vec<Point>], solo: bool) -> PlotFrame {
        let (mut x_max, mut y_min, mut y_max) = (1u64, f64::MAX, f64::MIN);
        for p in series.iter().flatten() {
            x_max = x_max.max(p.index);
            y_min = y_min.min(p.low);
            y_max = y_max.max(p.high);
        }
        if solo || y_min > y_max {
            (y_min, y_max) = (0.0, 1.0);
        }
        if y_max - y_min < 1e-9 {
            y_max = y_min + 1.0;
        }
        PlotFrame {
            x_max,
            y_min,
            y_max,
        }
    }

    /// Game 1 at the left edge, the last game at the right one.
    fn x(&self, game: u64) -> f64 {
        let span = Self::WIDTH - Self::LEFT - Self::RIGHT;
        Self::LEFT + span * game.saturating_sub(1) as f64 / (self.x_max - 1).max(1) as f64
    }

    fn y(&self, value: f64) -> f64 {
        let span = Self::HEIGHT - Self::TOP - Self::BOTTOM;
        Self::TOP + span * (1.0 - (value - self.y_min) / (self.y_max - self.y_min))
    }

    /// The SVG's start: its box, five labels up the side, the first and
    /// last game along the bottom.
    fn axes(&self, page: &mut String, title: &str, solo: bool) {
        let (w, h, left, top, right) = (
            Self::WIDTH,
            Self::HEIGHT,
            Self::LEFT,
            Self::TOP,
            Self::RIGHT,
        );
        let _ = write!(
            page,
            "<svg id=\"plot-svg\" viewBox=\"0 0 {w} {h}\" width=\"100%\" role=\"img\" \
             aria-label=\"{title}\"><rect x=\"{left}\" y=\"{top}\" width=\"{}\" height=\"{}\" \
             fill=\"none\" stroke=\"#ccc\"/>",
            w - left - right,
            h - top - Self::BOTTOM
        );
        for k in 0..=4 {
            let v = self.y_min + (self.y_max - self.y_min) * k as f64 / 4.0;
            let label = if solo {
                format!("{:.0}%", 100.0 * v)
            } else {
                format!("{v:.1}")
            };
            let _ = write!(
                page,
                "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
                left - 4.0,
                self.y(v) + 4.0
            );
        }
        let _ = write!(
            page,
            "<text x=\"{left}\" y=\"{}\">game 1</text><text x=\"{}\" y=\"{}\" \
             text-anchor=\"end\">game {}</text>",
            h - 8.0,
            w - right,
            h - 8.0,
            self.x_max
        );
    }

    /// One entrant's line, with its interval as a shaded band.
    fn series(&self, page: &mut String, points: &[Point], colour: &str, name: &str) {
        if points.is_empty() {
            return;
        }
        let at = |p: &Point, v: f64| format!("{:.1},{:.1}", self.x(p.index), self.y(v));
        let band: Vec<String> = points
            .iter()
            .map(|p| at(p, p.high))
            .chain(points.iter().rev().map(|p| at(p, p.low)))
            .collect();
        let line: Vec<String> = points.iter().map(|p| at(p, p.value)).collect();
        let _ = write!(
            page,
            "<polygon points=\"{}\" fill=\"{colour}\" fill-opacity=\"0.12\"/>\
             <polyline class=\"series\" data-entrant=\"{}\" points=\"{}\" fill=\"none\" \
             stroke=\"{colour}\" stroke-width=\"1.5\"/>",
            band.join(" "),
            esc(name),
            line.join(" "),
        );
    }
}

/// A row of bars: how many values fall in each of `bins` equal ranges.
fn histogram(values: &ScoreCounts, lo: f64, hi: f64, colour: &str) -> String {
    const BINS: usize = 20;
    let mut counts = [0u64; BINS];
    for (v, n) in values.values() {
        let at = if hi > lo {
            (((v - lo) / (hi - lo)) * BINS as f64) as usize
        } else {
            0
        };
        counts[at.min(BINS - 1)] += n;
    }
    let most = counts.iter().copied().max().unwrap_or(0).max(1);
    let mut svg = String::from("<svg viewBox=\"0 0 200 40\" width=\"200\" height=\"40\">");
    for (k, &n) in counts.iter().enumerate() {
        let height = 38.0 * n as f64 / most as f64;
        let _ = write!(
            svg,
            "<rect x=\"{}\" y=\"{:.1}\" width=\"9\" height=\"{height:.1}\" fill=\"{colour}\"><title>{n}</title></rect>",
            k * 10,
            39.0 - height
        );
    }
    svg.push_str("</svg>");
    svg
}

/// One-player games: each entrant's outcomes, in the game's own words
/// where it has them.
fn section_outcomes(page: &mut String, entrants: &[String], outcomes: &[BTreeMap<String, u64>]) {
    page.push_str("<h2 id=\"distribution\">Outcomes</h2>\n<table><tr><th class=\"l\">entrant</th><th class=\"l\">outcome</th><th>games</th></tr>\n");
    for (name, counts) in entrants.iter().zip(outcomes) {
        for (word, n) in counts {
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td class=\"l\">{}</td><td>{n}</td></tr>",
                esc(name),
                esc(word)
            );
        }
    }
    page.push_str("</table>\n");
}

/// Games of several players: scores per setup group (Chomp: per array),
/// then per entrant.
fn section_distribution(
    page: &mut String,
    entrants: &[String],
    groups: &BTreeMap<String, ScoreGroup>,
) {
    page.push_str(
        "<h2 id=\"distribution\">Score distributions</h2>\n<table><tr><th class=\"l\">games</th>\
         <th class=\"l\">entrant</th><th>games</th><th>min</th><th>median</th><th>mean</th>\
         <th>max</th><th class=\"l\">distribution (min to max of the group)</th></tr>\n",
    );
    for (group, games) in groups {
        for (i, name) in entrants.iter().enumerate() {
            let Some(scores) = games.scores.get(&i).filter(|s| s.n > 0) else {
                continue;
            };
            let mean = scores.sum / scores.n as f64;
            let _ = writeln!(
                page,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{mean:.1}</td><td>{}</td><td class=\"l\">{}</td></tr>",
                esc(group),
                esc(name),
                scores.n,
                trim_float(scores.at(0)),
                trim_float(scores.at(scores.n / 2)),
                trim_float(scores.at(scores.n - 1)),
                histogram(scores, games.lo, games.hi, colour(i))
            );
        }
    }
    page.push_str("</table>\n");
}

/// How a result reads in one word or two.
fn outcome_word(r: &SeatResult) -> String {
    if r.status() != Status::Ok {
        return r.verdict.to_string();
    }
    match (&r.outcome, r.won) {
        (Some(word), _) => word.clone(),
        (None, Some(true)) => "won".into(),
        (None, Some(false)) => "lost".into(),
        (None, None) => "played".into(),
    }
}

fn section_failures(page: &mut String, entrants: &[String], failures: &Failures) {
    page.push_str("<h2 id=\"failures\">Failures by kind</h2>\n");
    let (counts, examples) = (&failures.counts, &failures.examples);
    if counts.is_empty() && examples.is_empty() {
        page.push_str("<p class=\"ok\">None: every entrant played every game to its end.</p>\n");
        return;
    }
    page.push_str(
        "<table><tr><th class=\"l\">entrant</th><th class=\"l\">kind</th><th>games</th></tr>\n",
    );
    for ((who, kind), n) in counts {
        let name = entrants.get(*who).map_or("?", String::as_str);
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td class=\"l bad\">{}</td><td>{n}</td></tr>",
            esc(name),
            esc(kind)
        );
    }
    page.push_str("</table>\n<details><summary>The first failures, with their messages</summary><table><tr><th>game</th><th class=\"l\">entrant</th><th class=\"l\">kind</th><th class=\"l\">message</th></tr>\n");
    for (index, name, kind, message) in examples {
        let _ = writeln!(
            page,
            "<tr><td><a href=\"#game-{index}\">{index}</a></td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(name),
            esc(kind),
            esc(message)
        );
    }
    page.push_str("</table></details>\n");
}

fn section_slowest(page: &mut String, moves: &[(u64, u64, String)]) {
    page.push_str("<h2 id=\"slowest\">Slowest moves</h2>\n<table><tr><th>time</th><th class=\"l\">entrant</th><th>game</th></tr>\n");
    for (micros, index, name) in moves {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td class=\"l\">{}</td><td><a href=\"#game-{index}\">{index}</a></td></tr>",
            human_micros(*micros),
            esc(name)
        );
    }
    page.push_str("</table>\n");
}

/// A game's setup in a few words.
fn setup_text(r: &GameRecord) -> String {
    // What replays read (moves, letters, frames) is not a setup to show.
    const KEPT_FOR_REPLAYS: [&str; 7] = [
        "moves",
        "letters",
        "times",
        "frames",
        "cols",
        "rows",
        "starve_ms",
    ];
    let mut parts = Vec::new();
    for (key, value) in &r.setup {
        if KEPT_FOR_REPLAYS.contains(&key.as_str()) {
            continue;
        }
        let text = match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let text = if text.chars().count() > 40 {
            format!("{}…", text.chars().take(40).collect::<String>())
        } else {
            text
        };
        parts.push(format!("{key} {text}"));
    }
    parts.join(", ")
}

fn section_games(
    page: &mut String,
    solo: bool,
    listed: &[GameRecord],
    played: u64,
    replays: &Replays,
) {
    let shown = match (listed.len() as u64) < played {
        true => format!(
            "{} of {played} games (the first {MOST_LISTED}, then the first {MOST_LISTED} of the \
             others with a failure; every game is in records.jsonl)",
            listed.len(),
        ),
        false => format!("{played} game{}", plural(played)),
    };
    let _ = writeln!(
        page,
        "<h2 id=\"games\">Games</h2>\n<details{}><summary>{shown}, each with its setup and \
         every entrant's result</summary><table><tr><th>game</th><th class=\"l\">setup</th>\
         <th class=\"l\">results</th><th class=\"l\">replay</th></tr>",
        if played <= 50 { " open" } else { "" },
    );
    for r in listed {
        let results: Vec<String> = r
            .results
            .iter()
            .map(|x| {
                let what = if solo {
                    outcome_word(x)
                } else {
                    let score = x.points().map_or("-".to_owned(), trim_float);
                    if x.status() == Status::Ok {
                        score
                    } else {
                        format!("{score} ({})", x.verdict)
                    }
                };
                let class = if x.status() == Status::Ok {
                    ""
                } else {
                    " class=\"bad\""
                };
                format!(
                    "<span{class}>{}: {}</span>",
                    esc(x.entrant.as_deref().unwrap_or("?")),
                    esc(&what)
                )
            })
            .collect();
        let judge = r.judge_error.as_ref().map_or(String::new(), |e| {
            format!(
                " <span class=\"bad\">judge error: {}</span>",
                esc(&e.message)
            )
        });
        let replay = match replays.missing.get(&r.index) {
            Some(why) => format!("<span class=\"meta\" title=\"{}\">none</span>", esc(why)),
            None if replays.shown.contains(&r.index) => {
                format!("<a href=\"#game={}\">replay</a>", r.index)
            }
            None => format!(
                "<span class=\"meta\" title=\"not in this page (see Replays)\">referee replay \
                 --game {}</span>",
                r.index
            ),
        };
        let _ = writeln!(
            page,
            "<tr id=\"game-{i}\"><td>{i}</td><td class=\"l\">{}</td><td class=\"l\">{}{judge}</td><td class=\"l\">{replay}</td></tr>",
            esc(&setup_text(r)),
            results.join(" · "),
            i = r.index
        );
    }
    page.push_str("</table></details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameRef;
    use serde_json::json;

    fn info(solo: bool, entrants: &[&str]) -> RunInfo {
        RunInfo {
            game: GameRef::try_from("chomp".to_owned()).unwrap(),
            solo,
            fingerprint: "f".into(),
            seed: 1,
            games: 3,
            entrants: entrants.iter().map(|s| s.to_string()).collect(),
            shard: None,
            gauntlet: None,
        }
    }

    fn record(value: serde_json::Value) -> GameRecord {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_long_runs_game_list_is_capped_and_says_so() {
        let records: Vec<GameRecord> = (1..=3000u64)
            .map(|i| {
                let status = if i % 100 == 0 { "crashed" } else { "ok" };
                record(json!({
                    "game": "evensteven", "index": i, "seed": 1, "n": 3,
                    "results": [{"entrant": "a", "won": true, "status": status}]
                }))
            })
            .collect();
        let page = render(&info(true, &["a"]), &records, Path::new("."));
        // The first 1,000, then the 20 crashed games after them.
        assert!(
            page.contains("1020 of 3000 games (the first 1000, then the first 1000 of the others with a failure"),
            "{}",
            &page[page.find("id=\"games\"").unwrap()..][..400]
        );
        assert!(page.contains("id=\"game-1000\""));
        assert!(!page.contains("id=\"game-1001\""));
        assert!(page.contains("id=\"game-2900\""));
    }

    #[test]
    fn names_and_messages_are_escaped() {
        let records = vec![record(json!({
            "game": "evensteven", "index": 1, "seed": 1, "n": 3,
            "results": [{"entrant": "</table><script>x</script>", "won": false,
                         "status": "crashed", "error": "<b>boom</b> & \"more\""}]
        }))];
        let page = render(
            &info(true, &["</table><script>x</script>"]),
            &records,
            Path::new("."),
        );
        assert!(!page.contains("<script>x"));
        assert!(!page.contains("<b>boom"));
        assert!(page.contains("&lt;b&gt;boom&lt;/b&gt; &amp; &quot;more&quot;"));
    }

    #[test]
    fn a_table_game_has_a_rating_plot_and_distributions_per_array() {
        let records: Vec<GameRecord> = (1..=3)
            .map(|i| {
                record(json!({
                    "game": "chomp", "index": i, "seed": 1,
                    "array": if i == 2 { "b.txt" } else { "a.txt" },
                    "results": [
                        {"entrant": "x", "seat": 0, "score": 10 * i, "status": "ok"},
                        {"entrant": "y", "seat": 1, "score": 5, "status": "timeout", "phase": "clock", "error": "slow"}
                    ]
                }))
            })
            .collect();
        let page = render(&info(false, &["x", "y"]), &records, Path::new("."));
        assert_eq!(page.matches("class=\"series\"").count(), 2);
        assert!(page.contains("<td class=\"l\">a.txt</td>"));
        assert!(page.contains("<td class=\"l\">b.txt</td>"));
        assert!(page.contains("timeout (clock)"));
        assert!(page.contains("id=\"game-3\""));
    }

    #[test]
    fn long_runs_are_thinned() {
        let points: Vec<Point> = (1..=10_000)
            .map(|i| Point {
                index: i,
                value: 0.0,
                low: 0.0,
                high: 0.0,
            })
            .collect();
        let thinned = thin(&points, 400);
        assert_eq!(thinned.len(), 401);
        assert_eq!(thinned.last().unwrap().index, 10_000);
    }
}
