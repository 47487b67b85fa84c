//! `referee replay`: the HTML pages made from fixed records
//! (tests/fixtures/replay/), their structure, their escaping, and the
//! errors for bad input. tests/browser.rs opens them in a real browser.

mod common;

use common::{assert_has, assert_lacks, fixture, referee, referee_ok, temp_path, write_file};
use serde_json::Value;

/// Runs `referee replay FILE -o OUT` and returns the run and the page.
fn replay(name: &str, extra: &[&str]) -> (common::Run, Option<String>) {
    let (_dir, out) = temp_path("out.html");
    let mut args = vec![
        "replay".to_owned(),
        fixture(&format!("replay/{name}")),
        "-o".into(),
        out.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let run = referee(&args, b"");
    let page = std::fs::read_to_string(&out).ok();
    (run, page)
}

/// The page's data, parsed back from its JSON element.
fn data(page: &str) -> Value {
    let start = page
        .find("<script type=\"application/json\" id=\"replay-data\">")
        .expect("data element");
    let body = &page[start..];
    let open = body.find('>').unwrap() + 1;
    let close = body.find("</script>").unwrap();
    serde_json::from_str(&body[open..close]).expect("data is JSON")
}

fn ok_page(name: &str) -> String {
    let (run, page) = replay(name, &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    page.expect("page written")
}

#[test]
fn every_kind_of_record_makes_a_self_contained_page() {
    for (name, kind, games) in [
        ("dealer.jsonl", "evensteven", 3),
        ("septica.jsonl", "septica", 1),
        ("acesup.jsonl", "acesup", 2),
        ("chomp.jsonl", "chomp", 1),
        ("tron.jsonl", "frames", 1),
        ("tournament-chomp.jsonl", "chomp", 2),
        ("tournament-septica.jsonl", "septica", 2),
    ] {
        let page = ok_page(name);
        assert!(page.starts_with("<!DOCTYPE html>"), "{name}");
        // Nothing from the network: no external scripts, styles or links.
        for needle in ["src=", "href=", "http://", "https://", "@import"] {
            assert!(!page.contains(needle), "{name}: {needle}");
        }
        let d = data(&page);
        let list = d["games"].as_array().unwrap();
        assert_eq!(list.len(), games, "{name}");
        assert!(list.iter().all(|g| g["kind"] == kind), "{name}: {d}");
        assert!(page.len() < 200_000, "{name}: {} bytes", page.len());
    }
}

#[test]
fn the_default_output_is_next_to_the_records_and_game_picks_one() {
    let (dir, records) = temp_path("games.jsonl");
    std::fs::copy(fixture("replay/dealer.jsonl"), &records).unwrap();
    let run = referee(["replay", "--game", "2", records.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let page = std::fs::read_to_string(dir.path().join("games.html")).unwrap();
    let d = data(&page);
    assert_eq!(d["games"].as_array().unwrap().len(), 1);
    assert_eq!(d["games"][0]["index"], 2);
    assert_eq!(d["games"][0]["winnable"], true);
    assert_eq!(d["games"][0]["assignment"].as_array().unwrap().len(), 4);

    let run = referee(["replay", "--game", "9", records.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(64));
    assert_has(&run.stderr, "no game 9");
}

#[test]
fn a_script_end_in_the_data_does_not_end_the_script() {
    let page = ok_page("escaping.jsonl");
    // The viewer's own script and the data element: nothing else closes.
    assert_eq!(page.matches("</script>").count(), 2, "{page}");
    assert!(!page.contains("<script>window.pwned"));
    let d = data(&page);
    let seat = &d["games"][0]["seats"][0];
    assert!(seat["name"].as_str().unwrap().contains("</script>"));
    assert!(
        seat["stderr"]
            .as_str()
            .unwrap()
            .contains("</script><script>window.pwned=2</script> & \u{2028} done")
    );
}

/// A Chomp view's scores, applied as the viewer applies its steps
/// (src/replay/chomp.rs): a step to a neighbour moves by ±1 or ±M, a wrap
/// lands on the next of `wraps`, `C` scores the cell's letter, `X` the next
/// of `shares`.
fn chomp_scores(g: &Value) -> Vec<u64> {
    let m = g["cols"].as_i64().unwrap();
    let k = g["players"].as_array().unwrap().len();
    let board = g["board"].as_str().unwrap().as_bytes();
    let (mut wraps, mut shares) = (
        g["wraps"].as_array().unwrap().iter(),
        g["shares"].as_array().unwrap().iter(),
    );
    let mut pos = vec![g["start"].as_i64().unwrap(); k];
    let mut scores = vec![0; k];
    for word in g["steps"]
        .as_str()
        .unwrap()
        .split(' ')
        .filter(|w| !w.is_empty())
    {
        for (i, step) in word.bytes().enumerate() {
            match step {
                b'N' => pos[i] -= m,
                b'S' => pos[i] += m,
                b'E' => pos[i] += 1,
                b'W' => pos[i] -= 1,
                b'n' | b's' | b'e' | b'w' => pos[i] = wraps.next().unwrap().as_i64().unwrap(),
                b'C' => scores[i] += u64::from(board[pos[i] as usize] - b'A' + 1),
                b'X' => scores[i] += shares.next().unwrap().as_u64().unwrap(),
                _ => {}
            }
        }
    }
    assert!(wraps.next().is_none() && shares.next().is_none());
    scores
}

#[test]
fn chomp_rounds_are_computed_by_the_rules() {
    let page = ok_page("chomp-crafted.jsonl");
    let g = &data(&page)["games"][0];
    // 4x3 from (4,1): P1 and P2 share D (2 each) while P3 wraps East from
    // (4,1) to (1,3); then P3 eats I; then P3 wraps West back to (4,1).
    // A record of an earlier version: the moves are a list.
    assert_eq!(g["start"], 3);
    assert_eq!(g["steps"], "XXe SDC C-w");
    assert_eq!(g["wraps"], serde_json::json!([8, 3]));
    assert_eq!(g["shares"], serde_json::json!([2, 2]));
    assert_eq!(g["clock"]["budget"], 1000);
    assert_eq!(chomp_scores(g), [10, 2, 9]);

    // A real game: the replay's scores add up to the record's.
    let page = ok_page("chomp.jsonl");
    let g = &data(&page)["games"][0];
    let record: Value = serde_json::from_str(
        std::fs::read_to_string(fixture("replay/chomp.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let scores: Vec<u64> = (0..2)
        .map(|i| record["players"][i]["score"].as_u64().unwrap())
        .collect();
    assert_eq!(chomp_scores(g), scores);
}

#[test]
fn septica_is_replayed_with_both_hands_and_the_score() {
    let page = ok_page("septica.jsonl");
    let g = &data(&page)["games"][0];
    let record: Value = serde_json::from_str(
        std::fs::read_to_string(fixture("replay/septica.jsonl"))
            .unwrap()
            .trim(),
    )
    .unwrap();
    let steps = g["steps"].as_array().unwrap();
    // The deal: the player holds the deck's first four, the computer the next.
    let mut player: Vec<u64> = record["deck"].as_array().unwrap()[..4]
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    player.sort();
    assert_eq!(steps[0]["hands"][1], serde_json::json!(player));
    assert_eq!(steps[0]["stock"], 24);
    let last = steps.last().unwrap();
    assert_eq!(last["points"][0], record["score"]["computer"]);
    assert_eq!(last["points"][1], record["score"]["player"]);
    assert_eq!(
        g["tricks"].as_array().unwrap().len(),
        record["tricks"].as_array().unwrap().len()
    );
}

#[test]
fn aces_up_ends_as_the_engine_says() {
    let page = ok_page("acesup.jsonl");
    let g = &data(&page)["games"][0];
    let ops = g["ops"].as_array().unwrap();
    assert_eq!(ops.iter().filter(|o| *o == "d").count(), 52);
    let moves = ops.iter().filter(|o| *o != "d").count() as u64;
    assert_eq!(g["result"]["moves"].as_u64().unwrap(), moves);
}

/// A torn line (an interrupted run's, closed off by the next run) is
/// skipped with a warning naming it, as every reader of results does.
#[test]
fn a_torn_line_is_skipped_with_a_warning() {
    let (run, page) = replay("bad-line.jsonl", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_has(
        &run.stderr,
        "bad-line.jsonl, line 2: not a complete record; skipped",
    );
    let games = data(&page.unwrap())["games"].as_array().unwrap().len();
    assert_eq!(games, 2);
    // A torn last line, cut in the middle of a character.
    let (dir, torn) = temp_path("torn.jsonl");
    let mut bytes = std::fs::read(fixture("replay/dealer.jsonl")).unwrap();
    bytes.extend_from_slice("{\"game\":\"evensteven\",\"index\":9,\"x\":\"\u{e9}".as_bytes());
    bytes.pop();
    std::fs::write(&torn, bytes).unwrap();
    let out = dir.path().join("out.html");
    let run = common::replay(&torn, &out);
    assert_has(&run.stderr, "torn.jsonl, line ");
    assert!(out.exists());
}

#[test]
fn bad_input_is_an_error_naming_the_file_and_line() {
    for (name, line, what) in [
        ("other-tool.jsonl", 1, "not a record of the referee"),
        ("bad-chomp.jsonl", 2, "moves[1]"),
    ] {
        let (run, page) = replay(name, &[]);
        assert_eq!(run.code, Some(64), "{name}: {}", run.stderr);
        assert!(page.is_none(), "{name}: no page on error");
        let wanted = format!("{name}, line {line}: ");
        assert!(run.stderr.contains(&wanted), "{name}: {}", run.stderr);
        assert!(run.stderr.contains(what), "{name}: {}", run.stderr);
        assert_lacks(&run.stderr, "panicked");
    }
    let run = referee(["replay", "/nonexistent/records.jsonl"], b"");
    assert_eq!(run.code, Some(64));
    assert_has(&run.stderr, "/nonexistent/records.jsonl");
    // Binary garbage.
    let dir = tempfile::tempdir().unwrap();
    let junk = write_file(dir.path(), "junk.jsonl", [0xff, 0xfe, b'\n', 0]);
    let run = referee(["replay", junk.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(64));
    assert_has(&run.stderr, "junk.jsonl");
}

#[test]
fn an_unwritable_page_is_an_io_error() {
    let run = referee(
        [
            "replay",
            &fixture("replay/dealer.jsonl"),
            "-o",
            "/nonexistent/dir/out.html",
        ],
        b"",
    );
    assert_eq!(run.code, Some(74), "{}", run.stderr);
    assert_has(&run.stderr, "/nonexistent/dir/out.html");
}

/// A real `referee chomp --record-moves` game of scripted players: the
/// record keeps the letters, the budget and the turn times, and its replay
/// shows the shared chomp, the wrap and the starvation.
#[test]
fn a_recorded_chomp_game_replays_its_wrap_share_and_starvation() {
    let dir = tempfile::tempdir().unwrap();
    let player = |name: &str, moves: &str| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(fixture("chomp-script.sh"), d.join("pc2")).unwrap();
        write_file(&d, "moves", moves);
        d.to_str().unwrap().to_owned()
    };
    let one = player("one", "C\nE\nC\nD\n");
    let two = player("two", "C\nsleep 0.05 W\nhang\n");
    let array = write_file(dir.path(), "board.txt", "ABC\nDEF\n");
    let results = dir.path().join("r.jsonl");
    referee_ok([
        "chomp",
        "--prep",
        "0s",
        "--starve",
        "300ms",
        "--record-moves",
        "--results",
        results.to_str().unwrap(),
        "-start",
        "3",
        "1",
        array.to_str().unwrap(),
        &one,
        &two,
    ]);
    let record: Value =
        serde_json::from_str(std::fs::read_to_string(&results).unwrap().trim()).unwrap();
    assert_eq!(record["letters"], "ABCDEF");
    assert_eq!(record["starve_ms"], 300);
    // Text, a word per round (docs/results.md): four rounds, each
    // player's turn time in whole milliseconds.
    assert_eq!(record["moves"], "CC EW CD D-");
    let times: Vec<Vec<u64>> = record["times"]
        .as_str()
        .unwrap()
        .split(' ')
        .map(|round| round.split(',').map(|t| t.parse().unwrap()).collect())
        .collect();
    assert_eq!(times.len(), 4, "{record}");
    assert!(times[1][1] >= 50, "{record}");
    // It starved when its clock, 300 ms since its meal in round 1, ran out.
    let used = times[1][1] + times[2][1];
    assert!((298..=300).contains(&used), "{record}");

    // The array file is gone: the record is enough.
    std::fs::remove_file(&array).unwrap();
    let out = dir.path().join("r.html");
    common::replay(&results, &out);
    let g = &data(&std::fs::read_to_string(&out).unwrap())["games"][0];
    // Round 1: both chomp C (3 points): 2 each. Round 2: one wraps off the
    // right edge, (3,1) to (1,2); two steps West. Round 3: one eats D; two
    // starves.
    assert_eq!(g["steps"], "XX eW CD D-");
    assert_eq!(g["shares"], serde_json::json!([2, 2]));
    assert_eq!(g["wraps"], serde_json::json!([3]));
    assert_eq!(chomp_scores(g), [6, 2]);
    assert_eq!(g["players"][1]["fate"], "starved");
    assert_eq!(g["players"][1]["died_round"], 3);
    assert_eq!(g["clock"]["budget"], 300);
}

/// `referee replay OUT/records.jsonl --game GAME -o OUT/gameGAME.html`,
/// which must succeed: the page.
fn replay_game(out: &std::path::Path, game: u64) -> String {
    let page = out.join(format!("game{game}.html"));
    referee_ok([
        "replay",
        out.join("records.jsonl").to_str().unwrap(),
        "--game",
        &game.to_string(),
        "-o",
        page.to_str().unwrap(),
    ]);
    std::fs::read_to_string(&page).unwrap()
}

/// Issue 22, item 9: a Chomp tournament on the large shipped array with
/// `--record-moves` made a 50 MB report. 200 games of 1,000 rounds on the
/// 200×100 array (the reference bots, short games; 11 MB before): the
/// report stays under 10 MB, every game linked to its replay or told how
/// to make one, and any game is replayed on its own page.
#[test]
fn a_tournament_of_big_boards_makes_a_report_under_10_mb() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::big_chomp_tournament(dir.path(), "big", 200, 1000);
    let out = dir.path().join("out");
    common::tournament_with_moves(&file, "200", &out);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.len() < 10_000_000, "report.html: {} bytes", page.len());
    // Every game of the list links to its replay in the page, or says how
    // to make one; the page says where its replays stop.
    let shown = data(&page)["games"].as_array().unwrap().len();
    assert!(shown > 0);
    assert_eq!(page.matches("<a href=\"#game=").count(), shown);
    assert_eq!(page.matches("referee replay --game").count(), 200 - shown);
    assert_eq!(
        page.contains(&format!("Replays of the first {shown} of the 200 games")),
        shown < 200
    );
    let d = data(&replay_game(&out, 200));
    assert_eq!(d["games"][0]["index"], 200);
    assert_eq!(d["games"][0]["total_rounds"], 1000);
}

/// A run whose games' replays are more than a page should hold: the report
/// embeds the first games' up to its size cap, says so, and tells how to
/// replay the others, which `referee replay --game` does. The run is made
/// up (60 games of 40,000 rounds on a 200×100 array, as records of this
/// version), so that only the report is timed.
#[test]
fn a_report_embeds_replays_up_to_its_cap_and_says_so() {
    let (_dir, out) = temp_path("out");
    std::fs::create_dir(&out).unwrap();
    write_file(
        &out,
        "run.json",
        r#"{"game":"chomp","solo":false,"fingerprint":"f","seed":1,"games":60,"entrants":["a","b"],"shard":null}"#,
    );
    // Player 1 eats where it stands; player 2 walks East along the first
    // row, wrapping at its end.
    let letters: String = (0..200 * 100)
        .map(|i| char::from(b'A' + (i % 26) as u8))
        .collect();
    let moves = vec!["CE"; 40_000].join(" ");
    let mut records = String::new();
    for index in 1..=60 {
        let record = serde_json::json!({
            "game": "chomp", "index": index, "seed": 1, "array": "a.txt", "cols": 200,
            "rows": 100, "letters": letters, "start": [1, 1], "rounds": 40_000,
            "end": "round_limit", "moves": moves, "starve_ms": 45_000, "times": "0,0*40000",
            "results": [{"entrant": "a", "seat": 0, "score": 1, "status": "ok"},
                        {"entrant": "b", "seat": 1, "score": 0, "status": "ok"}],
            "tournament": "f"
        });
        records.push_str(&format!("{record}\n"));
    }
    write_file(&out, "records.jsonl", records);
    let run = referee(["report", out.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.len() < 10_000_000, "report.html: {} bytes", page.len());
    let shown = data(&page)["games"].as_array().unwrap().len();
    assert!((1..60).contains(&shown), "{shown} replays embedded");
    assert!(
        page.contains(&format!(
            "Replays of the first {shown} of the 60 games: a report embeds at most 500 games \
             and 6 MB of replays. <code>referee replay {}/records.jsonl --game K</code>",
            out.display()
        )),
        "the page says which games it replays"
    );
    assert!(page.contains("<a href=\"#game=1\">replay</a>"));
    assert!(page.contains(&format!("referee replay --game {}</span>", shown + 1)));

    let page = replay_game(&out, 60);
    assert!(page.len() < 250_000, "{} bytes", page.len());
    let g = &data(&page)["games"][0];
    assert_eq!(g["steps"].as_str().unwrap().split(' ').count(), 40_000);
    assert_eq!(g["wraps"].as_array().unwrap().len(), 200);
}

/// `dir`/records.jsonl: the first `games` records of the dealer's fixture,
/// each padded to `mib` MiB with a field the viewer does not read.
fn padded_records(dir: &std::path::Path, games: usize, mib: usize) -> std::path::PathBuf {
    let results = dir.join("records.jsonl");
    let padding = "x".repeat(mib << 20);
    let text: String = std::fs::read_to_string(fixture("replay/dealer.jsonl"))
        .unwrap()
        .lines()
        .take(games)
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            record["padding"] = Value::String(padding.clone());
            format!("{record}\n")
        })
        .collect();
    std::fs::write(&results, text).unwrap();
    results
}

#[test]
fn games_too_large_for_one_page_are_refused_saying_which() {
    // Eight games of 64 MiB of frames each took 3.2 GB and made a page of
    // 537 MB. A page shows at most 64 MiB of records.
    let dir = tempfile::tempdir().unwrap();
    let records = padded_records(dir.path(), 3, 30);
    let page = dir.path().join("page.html");
    let args = [
        "replay",
        records.to_str().unwrap(),
        "--out",
        page.to_str().unwrap(),
    ];
    let run = referee(args, b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(
        run.stderr
            .contains("the games to show hold 90 MiB of records (game ")
            && run
                .stderr
                .contains("more than a page shows (64 MiB): choose fewer with --game N"),
        "{run:?}"
    );
    assert!(!page.exists());
    // One of them fits.
    let mut one = args.to_vec();
    one.extend(["--game", "2"]);
    let run = referee(one, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(page.exists());
}

#[test]
fn a_judges_game_named_as_a_built_in_one_replays_from_its_frames() {
    // games/evensteven's judge names its game `evensteven`: its records
    // were taken for the dealer's and refused ("no \"n\" field").
    let (dir, results) = temp_path("records.jsonl");
    let game = format!("{}/games/evensteven/game.toml", env!("CARGO_MANIFEST_DIR"));
    referee_ok([
        "play",
        "--games",
        "2",
        "--results",
        results.to_str().unwrap(),
        &game,
        common::evensteven_bin(),
    ]);
    let page = dir.path().join("page.html");
    common::replay(&results, &page);
    let games = data(&std::fs::read_to_string(&page).unwrap());
    assert_eq!(games["games"][0]["kind"], "frames", "{games}");
}
