//! `referee septica` end to end: the real binary, scripted and reference
//! players.

mod common;

use std::time::Duration;

use common::{Run, Scratch, assert_has, assert_starts, fixture, referee};
use serde_json::Value;

/// The statement's sample opening: the player holds 14 9 7 10, the computer
/// 7 7 7 8; then the deck.
const SAMPLE_DECK: &str =
    "14 9 7 10 7 7 7 8 10 11 8 8 9 9 9 10 10 11 11 11 12 12 12 12 13 13 13 13 14 14 14 8\n";

fn bin(name: &str) -> String {
    match name {
        "septica" => env!("CARGO_BIN_EXE_septica").to_owned(),
        "septica-editorial" => env!("CARGO_BIN_EXE_septica-editorial").to_owned(),
        _ => unreachable!(),
    }
}

fn septica(args: &[&str]) -> Run {
    let mut all = vec!["septica"];
    all.extend_from_slice(args);
    referee(all, b"")
}

/// `referee septica --deal-file DECKS -v ... septica-script.sh COMMANDS`.
fn scripted(deck: &str, opts: &[&str], commands: &[&str]) -> Run {
    let area = Scratch::new();
    let deals = area.file("deals.txt", deck);
    let script = fixture("septica-script.sh");
    let mut args = vec!["--deal-file", deals.as_str(), "--seed", "5", "-v"];
    args.extend_from_slice(opts);
    args.push(&script);
    args.extend_from_slice(commands);
    septica(&args)
}

fn last_line(run: &Run) -> &str {
    run.stdout.lines().last().unwrap_or_default()
}

/// Fails the test unless the run ended with status `code` and its last
/// line, the verdict, ends with `verdict`.
#[track_caller]
fn assert_verdict(run: &Run, code: i32, verdict: &str) {
    assert_eq!(run.code, Some(code), "{run:?}");
    assert!(last_line(run).ends_with(verdict), "{}", run.stdout);
}

/// Fails the test unless the run ended with status 2 (incorrect output)
/// and the line saying what the player did wrong holds `says`.
#[track_caller]
fn assert_incorrect(run: &Run, says: &str) {
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(error_line(run).contains(says), "{}", run.stdout);
}

/// The line that says what the player did wrong.
fn error_line(run: &Run) -> &str {
    run.stdout
        .lines()
        .find(|l| l.starts_with("septica: match "))
        .unwrap_or_default()
}

#[test]
fn the_statements_sample_as_far_as_it_goes() {
    let run = scripted(SAMPLE_DECK, &[], &["7", "10", "0"]);
    let lines = run.stdout_lines();
    assert_eq!(
        lines[..10],
        [
            "septica: 1 match, 1 win needed, seed 5",
            "match 1",
            "  computer: 14 9 7 10",
            // The computer holds three 7s and nothing valuable: it leads a 7.
            "  computer: 7",
            "  player:   7",
            // The player cut and holds the trick; it draws first (the 10).
            "  computer: 3 1 10",
            "  player:   10",
            // The sample's computer answered 11 here; the binding policy
            // cuts a 10 with two potential cuts (it holds two 7s).
            "  computer: 7",
            "  player:   0",
            "  computer: 2 1 8",
        ]
    );
    // The script then sends `0` as an answer: illegal.
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        error_line(&run).starts_with("septica: match 1, trick 3: incorrect output: the player sent \"0\": only the leader can end a trick"),
        "{}",
        run.stdout
    );
}

#[test]
fn every_illegal_command_kind() {
    // Trick 1: the computer leads 7; the player holds 14 9 7 10.
    for (commands, says) in [
        (
            vec!["x"],
            "trick 1: incorrect output: the player sent \"x\": expected a card value from 7 to 14, or 0",
        ),
        (vec!["15"], "the player sent \"15\": expected a card value"),
        (vec![""], "the player sent \"\": expected a card value"),
        (vec!["8"], "the player sent \"8\": 8 is not in the hand"),
        (
            vec!["0"],
            "the player sent \"0\": only the leader can end a trick",
        ),
        // Trick 2: the player leads; `0` cannot start a trick.
        (
            vec!["7", "0"],
            "trick 2: incorrect output: the player sent \"0\": only the leader can end a trick",
        ),
        // Trick 2: the player leads 10, the computer cuts with a 7, the
        // player continues with its other 10, and the computer, left with
        // one 7 and no 10, throws a worthless card: the player may only end.
        (
            vec!["7", "10", "10", "14"],
            "trick 2: incorrect output: the player sent \"14\": the trick can only be continued after the answer cut",
        ),
    ] {
        let run = scripted(SAMPLE_DECK, &[], &commands);
        assert_eq!(run.code, Some(2), "{commands:?}: {run:?}");
        assert!(
            error_line(&run).contains(says),
            "{commands:?}: {}",
            run.stdout
        );
        assert!(
            last_line(&run).starts_with("septica: stopped after 0 complete matches"),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn a_continuation_must_cut() {
    // The computer (7 7 8 11 after trick 1) answers the player's 10 with a 7
    // (a cut); the player may continue only with a 10 or a 7: 14 is wrong.
    let run = scripted(SAMPLE_DECK, &[], &["7", "10", "14"]);
    assert_incorrect(
        &run,
        "the player sent \"14\": 14 does not cut a trick of 10 (only 10 or 7 do)",
    );
    // With its other 10 it may: the trick goes on, the computer answers.
    let run = scripted(SAMPLE_DECK, &[], &["7", "10", "10", "0"]);
    let lines = run.stdout_lines();
    assert_eq!(lines[8], "  player:   10");
    assert!(lines[9].starts_with("  computer: "), "{}", run.stdout);
}

#[test]
fn a_whole_match_plays_out_after_the_deck_is_empty() {
    let area = Scratch::new();
    let deals = area.file("deals.txt", SAMPLE_DECK);
    let run = septica(&[
        "--deal-file",
        &deals,
        "--seed",
        "5",
        "-v",
        &bin("septica-editorial"),
    ]);
    assert!(matches!(run.code, Some(0 | 1)), "{run:?}");
    let computer: Vec<&str> = run
        .stdout_lines()
        .into_iter()
        .filter_map(|l| l.strip_prefix("  computer: "))
        .collect();
    assert!(
        computer.iter().any(|l| *l == "2 0" || *l == "3 0"),
        "{}",
        run.stdout
    );
    let end = computer.last().unwrap();
    let scores: Vec<u8> = end.split(' ').skip(1).map(|s| s.parse().unwrap()).collect();
    assert!(
        end.starts_with("4 ") && scores.iter().sum::<u8>() == 8,
        "{end}"
    );
    // Every card was played: 16 by each side.
    let played = run
        .stdout_lines()
        .iter()
        .filter(|l| l.starts_with("  player:   ") && !l.ends_with(" 0"))
        .count();
    assert_eq!(played, 16);
}

#[test]
fn same_seed_same_matches() {
    let editorial = bin("septica-editorial");
    let one = septica(&["--seed", "77", "--matches", "20", "-v", &editorial]);
    let two = septica(&["--seed", "77", "--matches", "20", "-v", &editorial]);
    assert_eq!(one.stdout, two.stdout);
    let three = septica(&["--seed", "78", "--matches", "20", "-v", &editorial]);
    assert_ne!(one.stdout, three.stdout);
}

#[test]
fn a_recorded_match_replays_from_its_deck() {
    let area = Scratch::new();
    let results = area.path("r.jsonl");
    let editorial = bin("septica-editorial");
    let run = septica(&[
        "--seed",
        "9",
        "--matches",
        "30",
        "--results",
        &results,
        &editorial,
    ]);
    assert!(matches!(run.code, Some(0 | 1)), "{run:?}");
    let records = common::jsonl(results.as_ref());
    assert_eq!(records.len(), 30);
    let original = &records[17];
    let deck: Vec<String> = original["deck"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.to_string())
        .collect();
    let deals = area.file("one.txt", &format!("{}\n", deck.join(" ")));
    let replay_results = area.path("replay.jsonl");
    septica(&[
        "--seed",
        "9",
        "--deal-file",
        &deals,
        "--results",
        &replay_results,
        &editorial,
    ]);
    let replay: Value =
        serde_json::from_str(&std::fs::read_to_string(&replay_results).unwrap()).unwrap();
    assert_eq!(replay["plays"], original["plays"]);
    assert_eq!(replay["tricks"], original["tricks"]);
    assert_eq!(replay["score"], original["score"]);
    // Each record has who played what, the trick winners and the score.
    assert_eq!(original["plays"].as_array().unwrap().len(), 32);
    assert!(original["plays"][0]["by"] == "computer");
    let points: u64 = original["tricks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["points"].as_u64().unwrap())
        .sum();
    assert_eq!(points, 8);
}

#[test]
fn a_player_that_hangs_or_exits_is_a_crash() {
    let area = Scratch::new();
    let hang = area.file(
        "hang.sh",
        "#!/bin/sh\nread hand\nread card\nexec sleep 1000\n",
    );
    let exits = area.file("exits.sh", "#!/bin/sh\nread hand\nread card\nexit 4\n");
    for script in [&hang, &exits] {
        std::fs::set_permissions(script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let run = septica(&[
        "--timeout",
        "200ms",
        "--startup",
        "0s",
        "--seed",
        "1",
        &hang,
    ]);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_has(
        &run.stdout,
        "match 1, trick 1: timeout: the player did not answer within 200ms",
    );
    assert!(run.elapsed < Duration::from_secs(10));
    let run = septica(&["--seed", "1", &exits]);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_has(
        &run.stdout,
        "match 1, trick 1: program crashed: the player exited with status 4",
    );
}

#[test]
fn verdicts_and_exit_statuses() {
    let editorial = bin("septica-editorial");
    let run = septica(&["--seed", "3", "--matches", "50", "--need", "1", &editorial]);
    assert_verdict(&run, 0, "1 needed: ACCEPTED");
    // (More than --matches would be a usage error.)
    let run = septica(&["--seed", "3", "--matches", "50", "--need", "50", &editorial]);
    assert_verdict(&run, 1, "50 needed: REJECTED");
    assert!(last_line(&run).contains("95% CI"), "{}", run.stdout);
}

#[test]
fn bad_deal_files_name_the_line() {
    let area = Scratch::new();
    let deals = area.file("deals.txt", &format!("# two decks\n{SAMPLE_DECK}\n7 7 7\n"));
    let run = septica(&["--deal-file", &deals, &bin("septica-editorial")]);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(
        &run.stderr,
        &format!("{deals}, line 4: a deck has 32 cards, this one has 3"),
    );
}

#[test]
fn the_reference_player_wins_a_thousand_matches() {
    // A quick setting of the strong player; it must still clear 500.
    let run = septica(&[
        "--seed",
        "2026",
        &bin("septica"),
        "--guesses",
        "8",
        "--budget",
        "5ms",
    ]);
    assert_verdict(&run, 0, "500 needed: ACCEPTED");
}

#[test]
fn a_missing_decision_says_what_the_referee_was_waiting_for() {
    // The player wins the first trick (the computer's 8, cut with a 7),
    // leads 9, the computer answers without cutting, and the player must
    // now say `0` (end the trick): it never does.
    let area = Scratch::new();
    let deck = area.file(
        "deck.txt",
        "7 9 9 9 8 8 8 8 10 11 12 13 14 7 7 7 9 10 11 12 13 14 10 11 12 13 14 10 11 12 13 14\n",
    );
    let player = area.file(
        "silent-leader.sh",
        "#!/bin/sh\nread hand\nread card\necho 7\nread draw\necho 9\nread answer\nexec sleep 1000\n",
    );
    std::fs::set_permissions(&player, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = septica(&[
        "--timeout",
        "200ms",
        "--seed",
        "1",
        "--deal-file",
        &deck,
        &player,
    ]);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_has(
        &run.stdout,
        "match 1, trick 2: timeout: the player did not answer within 200ms; the referee was waiting for its decision as the trick's leader: a cutting card to continue it, or 0 to end it",
    );
}

/// Replaying decks with `--deal-file` (or playing `--matches N`) without
/// `--need` asked for the statement's 500 wins whatever the number of
/// matches: a replay of two decks was always REJECTED. The default is the
/// statement's share, half the matches played.
#[test]
fn without_need_half_the_matches_played_are_needed() {
    let area = Scratch::new();
    let deals = area.file("deals.txt", &format!("{SAMPLE_DECK}\n{SAMPLE_DECK}\n"));
    let run = septica(&["--deal-file", &deals, &bin("septica-editorial")]);
    assert_starts(&run.stdout, "septica: 2 matches, 1 win needed");
    assert!(
        last_line(&run).ends_with("1 needed: ACCEPTED")
            || last_line(&run).ends_with("1 needed: REJECTED"),
        "{}",
        run.stdout
    );
    let run = septica(&["--matches", "7", "--seed", "3", &bin("septica-editorial")]);
    assert_starts(&run.stdout, "septica: 7 matches, 4 wins needed");
}
