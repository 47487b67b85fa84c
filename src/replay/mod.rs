//! Self-contained HTML replays of recorded games (`referee replay`).
//!
//! The rules stay in Rust: each record is turned into a *view*, a small
//! JSON value holding what the viewer draws, computed here with the games'
//! own rules code (Chomp's grid, Septica's table, the Aces Up engine, Even
//! Steven's deal). The viewer (`assets/viewer.js`, `assets/viewer.css`,
//! embedded) only applies the computed steps and draws them, so a replay
//! shows exactly what the referee did.
//!
//! Reusable pieces: [`view`] (one record), [`page`] (a whole page), and [`STYLE`], [`SCRIPT`] and
//! [`data_script`] to embed replays in another page (the viewer draws the
//! games of the `<script type="application/json" id="replay-data">` element
//! into the element with id `replay`).

mod chomp;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::exit::Status;
use crate::game::record::{OLD_SEATS, SEATS, seats_of};
use crate::games::acesup::engine::{self, Operation};
use crate::games::evensteven::{Card as EsCard, Deal, deal};
use crate::games::septica::rules::{Action, Phase, Side, Table};

/// The viewer's style sheet.
pub const STYLE: &str = include_str!("assets/viewer.css");
/// The viewer's script: draws the games of `#replay-data` into `#replay`.
pub const SCRIPT: &str = include_str!("assets/viewer.js");

/// A game record with where it came from, for error messages.
pub struct Numbered {
    pub line: usize,
    pub record: Value,
}

/// The viewer's data for one record. `base` is where relative paths in
/// the record (a Chomp array file) are looked up besides the current
/// directory. The error says what is missing or wrong.
pub fn view(record: &Value, base: &Path) -> Result<Value, String> {
    let game = record["game"]
        .as_str()
        .ok_or("no \"game\" field: not a record of the referee")?;
    let index = record["index"].as_u64().unwrap_or(0);
    // A judge may name its game as a built-in one (games/evensteven plays
    // the dealer's game): `play`'s records, whose players have seats and
    // commands, are the judge's, drawn from their frames. (A tournament's
    // seats have no command; `chomp`'s players no seat.)
    let judged = record[SEATS].as_array().is_some_and(|players| {
        players
            .iter()
            .any(|p| p.get("seat").is_some() && p["player"].is_array())
    });
    let mut v = match game {
        _ if judged => external(record),
        "evensteven" => evensteven(record),
        "chomp" => chomp::view(record, base),
        "septica" => septica(record),
        "acesup" => acesup(record),
        _ => external(record),
    }?;
    v["game"] = json!(game);
    v["index"] = json!(index);
    v["title"] = json!(format!("{game} #{index}"));
    Ok(v)
}

/// The views of one record: one per entrant for a one-player game of a
/// tournament whose entrants each kept their plays (`--record-moves`),
/// else one.
pub fn views(record: &Value, base: &Path) -> Result<Vec<Value>, String> {
    let results = seats_of(record);
    let per_entrant = record["plays"].is_null()
        && results.is_some_and(|r| r.iter().any(|x| x["plays"].is_array()));
    if !per_entrant {
        return Ok(vec![view(record, base)?]);
    }
    let mut out = Vec::new();
    for result in results.into_iter().flatten() {
        let mut one = record.clone();
        one["plays"] = result["plays"].clone();
        one["outcome"] = result["outcome"].clone();
        if let Some(one) = one.as_object_mut() {
            one.remove(OLD_SEATS);
        }
        one[SEATS] = json!([result]);
        let mut v = view(&one, base)?;
        if let Some(name) = result["entrant"].as_str() {
            v["title"] = json!(format!("{} — {name}", v["title"].as_str().unwrap_or("")));
        }
        out.push(v);
    }
    Ok(out)
}

fn field<'a>(record: &'a Value, name: &str) -> Result<&'a Value, String> {
    match &record[name] {
        Value::Null => Err(format!("no \"{name}\" field")),
        v => Ok(v),
    }
}

fn u64_field(record: &Value, name: &str) -> Result<u64, String> {
    field(record, name)?
        .as_u64()
        .ok_or_else(|| format!("\"{name}\" is not a whole number"))
}

/// A record's seats: a tournament's (of either format), or a referee's
/// own players.
fn seats(record: &Value) -> Vec<Value> {
    seats_of(record).cloned().unwrap_or_default()
}

/// What is shown of each seat: its name, status and what it wrote on
/// standard error.
fn seat_summary(seat: &Value, fallback: &str) -> Value {
    let name = seat["entrant"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| seat["dir"].as_str().map(str::to_owned))
        .or_else(|| {
            seat["player"].as_array().map(|words| {
                words
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        })
        .unwrap_or_else(|| fallback.to_owned());
    let mut out = json!({"name": name, "status": seat["status"]});
    for key in [
        "score",
        "rank",
        "won",
        "outcome",
        "fate",
        "error",
        "stderr",
        "died_round",
    ] {
        if !seat[key].is_null() {
            out[key] = seat[key].clone();
        }
    }
    out
}

fn es_card(value: &Value, what: &str) -> Result<EsCard, String> {
    let text = value
        .as_str()
        .ok_or_else(|| format!("{what}: not a card"))?;
    EsCard::parse(text).map_err(|e| format!("{what}: {text:?}: {e}"))
}

fn es_cards(value: &Value, what: &str) -> Result<Vec<EsCard>, String> {
    value
        .as_array()
        .ok_or_else(|| format!("\"{what}\" is not a list of cards"))?
        .iter()
        .map(|c| es_card(c, what))
        .collect()
}

/// Even Steven: the hand, the cards to cover, each dealt card and the one
/// that covered it, and the winning assignment when there was one.
fn evensteven(record: &Value) -> Result<Value, String> {
    let (hand, to_cover) = if record["hand"].is_array() {
        (
            es_cards(&record["hand"], "hand")?,
            es_cards(field(record, "deal")?, "deal")?,
        )
    } else {
        // A tournament's record: the deal from its size and seed.
        let n = u64_field(record, "n")?;
        let seed = u64_field(record, "deal_seed")?;
        if !(1..=deal::MAX_HAND as u64).contains(&n)
            || !(1..=u64::from(deal::MAX_SEED)).contains(&seed)
        {
            return Err(format!("n {n} or deal_seed {seed} is out of range"));
        }
        let d = Deal::new(n as usize, seed as u32);
        (d.hand, d.to_cover)
    };
    let winnable = deal::winnable(&hand, &to_cover);
    // The winning assignment: the k-th lowest hand card covers the k-th
    // lowest dealt card.
    let assignment: Option<Vec<String>> = winnable.then(|| {
        let mut h: Vec<EsCard> = hand.clone();
        h.sort_by_key(|c| c.value());
        let mut order: Vec<usize> = (0..to_cover.len()).collect();
        order.sort_by_key(|&i| to_cover[i].value());
        let mut out = vec![String::new(); to_cover.len()];
        for (k, &i) in order.iter().enumerate() {
            out[i] = h[k].to_string();
        }
        out
    });
    let mut plays = Vec::new();
    for (i, p) in record["plays"].as_array().into_iter().flatten().enumerate() {
        let dealt = es_card(&p["dealt"], &format!("plays[{i}].dealt"))?;
        let played = es_card(&p["played"], &format!("plays[{i}].played"))?;
        plays.push(json!([
            dealt.to_string(),
            played.to_string(),
            played.covers(dealt)
        ]));
    }
    let seats: Vec<Value> = seats(record)
        .iter()
        .map(|s| seat_summary(s, "player"))
        .collect();
    let player = record["player"].as_array().map(|w| {
        w.iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    });
    let seats = if seats.is_empty() {
        vec![json!({
            "name": player.unwrap_or_else(|| "player".into()),
            "status": record["status"],
            "outcome": record["outcome"],
            "error": record["error"],
            "stderr": record["stderr"],
        })]
    } else {
        seats
    };
    Ok(json!({
        "kind": "evensteven",
        "hand": hand.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "deal": to_cover.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "winnable": winnable,
        "assignment": assignment,
        "plays": plays,
        "recorded": record["plays"].is_array(),
        "outcome": record["outcome"],
        "seats": seats,
    }))
}

/// Septica: the table after every card played and every trick taken.
fn septica(record: &Value) -> Result<Value, String> {
    let deck = septica_deck(record)?;
    let mut replay = SepticaReplay::new(&deck);
    let mut current = 1u64;
    let plays = record["plays"].as_array();
    for (i, p) in plays.into_iter().flatten().enumerate() {
        replay.play(i, p, &mut current)?;
    }
    if matches!(replay.table.phase, Phase::Decide(_)) && plays.is_some() {
        replay.end_trick();
    }
    let seats: Vec<Value> = seats(record)
        .iter()
        .map(|s| seat_summary(s, "player"))
        .collect();
    let seats = if seats.is_empty() {
        vec![
            json!({"name": "player", "status": record["status"], "outcome": record["outcome"],
            "score": record["score"], "error": record["error"], "stderr": record["stderr"]}),
        ]
    } else {
        seats
    };
    Ok(json!({
        "kind": "septica",
        "steps": replay.steps,
        "tricks": replay.tricks,
        "recorded": plays.is_some(),
        "seats": seats,
    }))
}

/// A Septica record's deck: the 32 cards, each 7 to 14 four times.
fn septica_deck(record: &Value) -> Result<Vec<u8>, String> {
    let deck: Vec<u8> = field(record, "deck")?
        .as_array()
        .ok_or("\"deck\" is not a list of cards")?
        .iter()
        .map(|c| c.as_u64().filter(|v| (7..=14).contains(v)).map(|v| v as u8))
        .collect::<Option<_>>()
        .ok_or("\"deck\" holds something that is not a card (7 to 14)")?;
    let mut counts = [0u8; 15];
    for &c in &deck {
        counts[usize::from(c)] += 1;
    }
    if deck.len() != 32 || (7..=14).any(|v| counts[v] != 4) {
        return Err("\"deck\" is not the 32 cards of Septica".into());
    }
    Ok(deck)
}

fn side_name(s: Side) -> &'static str {
    match s {
        Side::Computer => "computer",
        Side::Player => "player",
    }
}

/// A Septica game played again from its record's plays: the viewer's
/// steps, and each trick as it ends.
struct SepticaReplay<'d> {
    deck: &'d [u8],
    table: Table,
    steps: Vec<Value>,
    /// The cards of the trick being played.
    trick: Vec<Value>,
    tricks: Vec<Value>,
}

impl<'d> SepticaReplay<'d> {
    fn new(deck: &'d [u8]) -> SepticaReplay<'d> {
        let mut replay = SepticaReplay {
            deck,
            table: Table::deal(deck),
            steps: Vec::new(),
            trick: Vec::new(),
            tricks: Vec::new(),
        };
        let dealt = replay.snapshot("dealt: the computer leads".into());
        replay.steps.push(dealt);
        replay
    }

    /// The table now, for the viewer.
    fn snapshot(&self, note: String) -> Value {
        let t = &self.table;
        json!({
            "hands": [t.hands[Side::Computer as usize].cards(), t.hands[Side::Player as usize].cards()],
            "table": self.trick,
            "stock": self.deck.len() - usize::from(t.drawn),
            "points": t.points,
            "note": note,
        })
    }

    /// Ends the trick being played: who takes it, and what each draws.
    fn end_trick(&mut self) {
        let end = self.table.apply(self.table.leader, Action::End, self.deck);
        if let Some(end) = end {
            let note = format!(
                "trick {} to the {} ({} point{}); {}",
                self.tricks.len() + 1,
                side_name(end.winner),
                end.points,
                if end.points == 1 { "" } else { "s" },
                if end.drawn[0].is_empty() && end.drawn[1].is_empty() {
                    "nothing to draw".to_owned()
                } else {
                    format!(
                        "the computer draws {:?}, the player {:?}",
                        end.drawn[0], end.drawn[1]
                    )
                }
            );
            self.tricks.push(json!({"winner": side_name(end.winner), "points": end.points, "cards": self.trick.clone()}));
            let mut step = self.snapshot(note);
            step["end"] = json!(true);
            self.steps.push(step);
            self.trick.clear();
        }
    }

    /// Play `i` of the record, `p`, in trick `current` (or the next).
    fn play(&mut self, i: usize, p: &Value, current: &mut u64) -> Result<(), String> {
        let bad = |why: &str| format!("plays[{i}]: {why}");
        let t = p["trick"].as_u64().ok_or_else(|| bad("no trick number"))?;
        let card = p["card"]
            .as_u64()
            .filter(|v| (7..=14).contains(v))
            .ok_or_else(|| bad("not a card"))? as u8;
        let by = match p["by"].as_str() {
            Some("computer") => Side::Computer,
            Some("player") => Side::Player,
            _ => return Err(bad("\"by\" is neither computer nor player")),
        };
        if t != *current {
            if !matches!(self.table.phase, Phase::Decide(_)) {
                return Err(bad("a new trick before the last one could end"));
            }
            self.end_trick();
            *current = t;
        }
        self.table
            .check(by, Action::Card(card))
            .map_err(|e| bad(&format!("{} plays {card}: {e}", side_name(by))))?;
        let value = if self.trick.is_empty() {
            card
        } else {
            self.table.value
        };
        let cut = !self.trick.is_empty() && crate::games::septica::rules::cuts(card, value);
        self.table.apply(by, Action::Card(card), self.deck);
        self.trick.push(json!([side_name(by), card, cut]));
        let note = format!(
            "trick {t}: the {} {} {card}{}",
            side_name(by),
            if self.trick.len() == 1 {
                "leads"
            } else {
                "plays"
            },
            if cut { ", cutting" } else { "" }
        );
        let step = self.snapshot(note);
        self.steps.push(step);
        Ok(())
    }
}

/// Aces Up: the rules engine's play of the deck as dealt, as operations
/// the viewer applies (`d`: the next card dealt onto pile `i % 4`; `x p`:
/// pile p's card discarded; `f a b`: pile a's card moved to empty pile b).
fn acesup(record: &Value) -> Result<Value, String> {
    let text = field(record, "deck")?
        .as_str()
        .ok_or("\"deck\" is not a string of cards")?;
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() != 52 {
        return Err(format!("\"deck\" has {} cards, not 52", words.len()));
    }
    let mut deck = [engine::Card { rank: 0, suit: 0 }; 52];
    for (i, w) in words.iter().enumerate() {
        deck[i] = match w.as_bytes() {
            [r, s] => engine::Card::from_chars(*r, *s),
            _ => None,
        }
        .ok_or_else(|| format!("\"deck\": card {} ({w:?}) is not a card", i + 1))?;
    }
    let ops: Vec<Value> = engine::trace(&deck)
        .into_iter()
        .map(|op| match op {
            None => json!("d"),
            Some(Operation::Discard(p)) => json!(["x", p]),
            Some(Operation::Fill { from, to }) => json!(["f", from, to]),
        })
        .collect();
    let games = engine::play_rotations(&deck);
    let first = games[0];
    let seats: Vec<Value> = seats(record)
        .iter()
        .map(|s| seat_summary(s, "program"))
        .collect();
    let seats = if seats.is_empty() {
        vec![
            json!({"name": "program", "status": record["status"], "verdict": record["verdict"],
            "error": record["message"], "stderr": record["stderr"]}),
        ]
    } else {
        seats
    };
    Ok(json!({
        "kind": "acesup",
        "deck": words,
        "ops": ops,
        "result": {"piles": first.piles, "moves": first.moves, "won": first.won, "perfect": first.perfect},
        "games": games.len(),
        "won": games.last().is_some_and(|g| g.won),
        "seats": seats,
    }))
}

/// A game of an external judge: its frames, drawn by the generic renderer.
fn external(record: &Value) -> Result<Value, String> {
    if seats_of(record).is_none() {
        return Err("neither \"players\" nor \"results\": not a game record".into());
    }
    let seats: Vec<Value> = seats(record)
        .iter()
        .enumerate()
        .map(|(i, s)| seat_summary(s, &format!("seat {i}")))
        .collect();
    Ok(json!({
        "kind": "frames",
        "frames": record["frames"].as_array().cloned().unwrap_or_default(),
        "recorded": record["frames"].is_array(),
        "summary": record["summary"],
        "judge_error": record["judge_error"],
        "seats": seats,
    }))
}

/// `text` safe inside HTML text and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `data` as a `<script type="application/json">` element with `id`. `<`,
/// `>` and `&` are written as JSON escapes, so no text in the data (a
/// `</script>` in a bot's stderr) can end the element early.
pub fn data_script(id: &str, data: &Value) -> String {
    json_script(id, &data.to_string())
}

/// [`data_script`] of `{"games": views}` for views already written as JSON
/// (a report weighs them as it goes).
pub fn games_script(id: &str, views: &[String]) -> String {
    json_script(id, &format!("{{\"games\":[{}]}}", views.join(",")))
}

fn json_script(id: &str, json: &str) -> String {
    let mut safe = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => safe.push_str("\\u003c"),
            '>' => safe.push_str("\\u003e"),
            '&' => safe.push_str("\\u0026"),
            '\u{2028}' => safe.push_str("\\u2028"),
            '\u{2029}' => safe.push_str("\\u2029"),
            c => safe.push(c),
        }
    }
    format!(
        "<script type=\"application/json\" id=\"{}\">{safe}</script>",
        escape_html(id)
    )
}

/// A whole page replaying `views` (from [`view`]): style, data and script
/// inline, nothing fetched.
pub fn page(title: &str, views: &[Value]) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <div id=\"replay\"></div>\n{}\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n",
        escape_html(title),
        data_script("replay-data", &json!({ "games": views })),
    )
}

/// What `referee replay` was asked.
pub struct ReplayConfig {
    pub records: PathBuf,
    pub game: Option<u64>,
    pub out: Option<PathBuf>,
}

/// The default output: the records' path with `.html` for its extension.
pub fn default_output(records: &Path) -> PathBuf {
    records.with_extension("html")
}

/// Builds the page of `config` and writes it: where, and how many games;
/// or the exit status and what was wrong (64 for the records, 74 for the
/// page).
pub fn build(config: &ReplayConfig) -> Result<(PathBuf, usize), (Status, String)> {
    let usage = |e: String| (Status::Usage, e);
    let chosen = read_chosen(&config.records, config.game).map_err(usage)?;
    let base = config
        .records
        .parent()
        .map(Path::to_owned)
        .unwrap_or_default();
    if chosen.is_empty() {
        return Err(usage(match config.game {
            Some(n) => format!("{}: no game {n}", config.records.display()),
            None => format!("{}: no game records", config.records.display()),
        }));
    }
    let mut shown = Vec::with_capacity(chosen.len());
    for r in &chosen {
        let v = views(&r.record, &base).map_err(|e| {
            usage(format!(
                "{}, line {}: {e}",
                config.records.display(),
                r.line
            ))
        })?;
        shown.extend(v);
    }
    let title = format!(
        "Replay: {}",
        config
            .records
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let out = config
        .out
        .clone()
        .unwrap_or_else(|| default_output(&config.records));
    crate::record::write_file(&out, page(&title, &shown).as_bytes())
        .map_err(|e| (Status::Io, e))?;
    Ok((out, shown.len()))
}

/// Most record text one page shows, bytes: the page holds it (as the
/// viewer's data), and the referee holds it parsed, several times over,
/// while it writes the page. Eight games of 64 MiB of frames each took
/// 3.2 GB and made a page of 537 MB that no browser opens well.
pub const MOST_PAGE_RECORDS: u64 = 64 << 20;

/// The records of `path` a page shows (game `game`, or all), read one at a
/// time; refused, saying which games are how large, when together they
/// pass [`MOST_PAGE_RECORDS`].
fn read_chosen(path: &Path, game: Option<u64>) -> Result<Vec<Numbered>, String> {
    use crate::bot::usage::human_bytes;
    if let Err(e) = std::fs::metadata(path) {
        return Err(format!("{}: {e}", path.display()));
    }
    let mut chosen = Vec::new();
    let (mut total, mut largest) = (0u64, Vec::new());
    for object in crate::record::sized_objects(path).map_err(|e| e.to_string())? {
        let (line, bytes, record) = object.map_err(|e| e.to_string())?;
        if game.is_some_and(|n| record["index"].as_u64() != Some(n)) {
            continue;
        }
        total += bytes as u64;
        largest.push((
            bytes as u64,
            record["index"].as_u64().unwrap_or(line as u64),
        ));
        if total > MOST_PAGE_RECORDS {
            // Counted on, not kept: only the sizes are needed to say so.
            chosen.clear();
            continue;
        }
        chosen.push(Numbered { line, record });
    }
    if total > MOST_PAGE_RECORDS {
        largest.sort_unstable_by(|a, b| b.cmp(a));
        let named: Vec<String> = largest
            .iter()
            .take(3)
            .map(|(bytes, index)| format!("game {index}: {}", human_bytes(*bytes)))
            .collect();
        let advice = if game.is_some() {
            "too large to show"
        } else {
            "choose fewer with --game N"
        };
        return Err(format!(
            "{}: the games to show hold {} of records ({}), more than a page shows ({}): {advice}",
            path.display(),
            human_bytes(total),
            named.join(", "),
            human_bytes(MOST_PAGE_RECORDS),
        ));
    }
    Ok(chosen)
}

/// Runs `referee replay`.
pub fn run(config: &ReplayConfig) -> Status {
    match build(config) {
        Ok((out, games)) => {
            println!(
                "replay: {} ({games} game{})",
                out.display(),
                if games == 1 { "" } else { "s" }
            );
            Status::Pass
        }
        Err((status, e)) => {
            eprintln!("referee replay: {e}");
            status
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_viewer_draws_the_colour_names_judges_may_give() {
        let names = crate::games::external::protocol::COLOUR_NAMES;
        let list = format!("\"{}\".split(\" \")", names.join(" "));
        assert!(SCRIPT.contains(&list), "viewer.js must list {list}");
    }

    #[test]
    fn data_cannot_end_its_script_element() {
        let s = data_script(
            "d",
            &json!({"stderr": "</script><script>alert(1)</script>&"}),
        );
        assert_eq!(s.matches("</script>").count(), 1, "{s}");
        assert!(s.ends_with("</script>"));
        let inner = &s[s.find('>').unwrap() + 1..s.len() - "</script>".len()];
        let back: Value = serde_json::from_str(inner).unwrap();
        assert_eq!(back["stderr"], "</script><script>alert(1)</script>&");
    }

    #[test]
    fn the_aces_up_trace_is_the_engine_s_play() {
        for i in 0..200 {
            let deck = crate::games::acesup::deck::random_deck(9, i);
            let trace = engine::trace(&deck);
            assert_eq!(trace.iter().filter(|s| s.is_none()).count(), 52);
            let moves = trace.iter().filter(|s| s.is_some()).count() as u32;
            assert_eq!(moves, engine::play(&deck).moves);
        }
    }

    #[test]
    fn the_winning_assignment_covers_every_card() {
        let record = json!({"game": "evensteven", "index": 2, "hand": ["Kd","8c","As","5s"],
            "deal": ["3s","6h","Kh","5c"], "plays": []});
        let v = view(&record, Path::new(".")).unwrap();
        assert_eq!(v["winnable"], true);
        assert_eq!(v["assignment"], json!(["5s", "Kd", "As", "8c"]));
    }
}
