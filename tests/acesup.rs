//! Aces Up: the rules engine against a second, deliberately naive
//! implementation written here from the statement; and `referee acesup`
//! judging real programs.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{
    Run, assert_ends, assert_has, assert_lacks, fixture, output_with_input, referee, temp_path,
    write_file,
};
use proptest::prelude::*;
use referee::games::acesup::{deck, engine};

/// The statement, followed literally: piles as vectors, every exposed card
/// compared with every other, the deck rotated by building a new vector.
mod naive {
    const RANKS: &str = "23456789TJQKA";
    const SUITS: &str = "CDHS";

    #[derive(Clone, Debug, PartialEq)]
    pub struct Game {
        pub sizes: Vec<usize>,
        pub moves: u32,
        pub won: bool,
        pub perfect: bool,
    }

    fn rank(card: &str) -> usize {
        RANKS.find(&card[..1]).unwrap()
    }

    fn suit(card: &str) -> usize {
        SUITS.find(&card[1..]).unwrap()
    }

    fn one_game(deck: &[String]) -> Game {
        let mut piles: Vec<Vec<String>> = vec![vec![], vec![], vec![], vec![]];
        let mut moves = 0;
        for (i, card) in deck.iter().enumerate() {
            piles[i % 4].push(card.clone());
            loop {
                // Every discardable exposed card.
                let mut candidates = vec![];
                for a in 0..4 {
                    for b in 0..4 {
                        if let (Some(x), Some(y)) = (piles[a].last(), piles[b].last())
                            && a != b
                            && suit(x) == suit(y)
                            && rank(x) < rank(y)
                        {
                            candidates.push((rank(x), suit(x), a));
                        }
                    }
                }
                if !candidates.is_empty() {
                    candidates.sort();
                    let pile = candidates[0].2;
                    piles[pile].pop();
                    moves += 1;
                    continue;
                }
                let empty = (0..4).find(|&p| piles[p].is_empty());
                let tall = (0..4).find(|&p| piles[p].len() >= 2);
                if let (Some(e), Some(t)) = (empty, tall) {
                    let card = piles[t].pop().unwrap();
                    piles[e].push(card);
                    moves += 1;
                    continue;
                }
                break;
            }
        }
        let left: Vec<&String> = piles.iter().flatten().collect();
        let won = left.len() == 4 && left.iter().all(|c| c.starts_with('A'));
        let perfect = won
            && piles[0] == ["AC"]
            && piles[1] == ["AD"]
            && piles[2] == ["AH"]
            && piles[3] == ["AS"];
        Game {
            sizes: piles.iter().map(Vec::len).collect(),
            moves,
            won,
            perfect,
        }
    }

    pub fn games(deck: &[String]) -> Vec<Game> {
        let mut deck = deck.to_vec();
        let mut out = vec![];
        for _ in 0..52 {
            let g = one_game(&deck);
            let won = g.won;
            out.push(g);
            if won {
                break;
            }
            let top = deck.remove(0);
            deck.push(top);
        }
        out
    }
}

fn as_strings(deck: &[engine::Card; 52]) -> Vec<String> {
    deck.iter().map(|c| c.to_string()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn engine_agrees_with_the_naive_implementation(order in Just((0..52usize).collect::<Vec<_>>()).prop_shuffle()) {
        let sorted = deck::random_deck(0, 0);
        let mut cards = sorted;
        let mut by_rank = sorted.to_vec();
        by_rank.sort();
        for (slot, &i) in cards.iter_mut().zip(&order) {
            *slot = by_rank[i];
        }
        let ours = engine::play_rotations(&cards);
        let theirs = naive::games(&as_strings(&cards));
        prop_assert_eq!(ours.len(), theirs.len());
        for (a, b) in ours.iter().zip(&theirs) {
            prop_assert_eq!(a.piles.to_vec(), b.sizes.clone());
            prop_assert_eq!(a.moves, b.moves);
            prop_assert_eq!(a.won, b.won);
            prop_assert_eq!(a.perfect, b.perfect);
        }
    }

    #[test]
    fn deck_parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = deck::read_input(&bytes, |_| {});
        let _ = deck::read_deck_file(&String::from_utf8_lossy(&bytes));
    }
}

fn acesup_bin() -> &'static str {
    env!("CARGO_BIN_EXE_acesup")
}

fn tournament(name: &str) -> String {
    format!("{}/tournaments/acesup/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn judge(args: &[&str]) -> Run {
    let mut all = vec!["acesup"];
    all.extend_from_slice(args);
    referee(all, b"")
}

/// The judge on the four tournament decks: `ARGS` are the rest of its
/// options and the program.
fn on_the_decks(args: &[&str]) -> Run {
    let decks = tournament("decks.txt");
    let mut all = vec!["--decks", &decks];
    all.extend_from_slice(args);
    judge(&all)
}

/// Fails the test, showing the run's output, unless it ended with status
/// `code` and the first deck's verdict (its second line) starts with
/// `starts` and holds each of `holds`.
#[track_caller]
fn assert_first_deck(run: &Run, code: i32, starts: &str, holds: &[&str]) {
    assert_eq!(run.code, Some(code), "{run:?}");
    let first = run.stdout.lines().nth(1).unwrap();
    assert!(
        first.starts_with(starts) && holds.iter().all(|part| first.contains(part)),
        "{}",
        run.stdout
    );
}

#[test]
fn the_tournament_decks_show_every_kind_of_game() {
    let text = std::fs::read_to_string(tournament("decks.txt")).unwrap();
    let decks = deck::read_deck_file(&text).unwrap();
    let games: Vec<Vec<engine::Game>> = decks.iter().map(engine::play_rotations).collect();
    // Won on the first game, perfect, won after rotations, never won.
    assert!(games[0].len() == 1 && games[0][0].won && !games[0][0].perfect);
    assert!(games[1].len() == 1 && games[1][0].perfect);
    assert!(games[2].len() > 1 && games[2].last().unwrap().won);
    assert!(games[3].len() == 52 && !games[3].iter().any(|g| g.won));
    // deck1.txt is the first of them, as a program's input.
    let deck1 = std::fs::read(tournament("deck1.txt")).unwrap();
    assert_eq!(deck::read_input(&deck1, |_| {}).unwrap(), decks[0]);
}

#[test]
fn the_reference_program_is_accepted() {
    let run = on_the_decks(&[acesup_bin()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_ends(&run.stdout, "acesup: 4 of 4 decks accepted\n");
    let run = judge(&["--random", "200", "--seed", "7", acesup_bin()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stdout, "random decks, seed 7");
}

#[test]
fn the_reference_program_echoes_and_reports() {
    let input = std::fs::read(tournament("deck1.txt")).unwrap();
    let output = output_with_input(&mut Command::new(acesup_bin()), &input);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let deck = deck::read_input(&input, |_| {}).unwrap();
    assert_eq!(text, engine::expected_output(&deck));
    assert!(text.starts_with(std::str::from_utf8(&input).unwrap()));
    assert!(text.ends_with("Result: won\n"), "{text}");
}

#[test]
fn bad_input_is_refused_with_the_line() {
    let mut input = std::fs::read_to_string(tournament("deck1.txt")).unwrap();
    input.replace_range(9..11, "1X");
    let output = output_with_input(&mut Command::new(acesup_bin()), input.as_bytes());
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        "executeit: line 4: '1' is not a rank (2-9, T, J, Q, K, A)\n"
    );
    // The three good cards before it were echoed.
    assert_eq!(String::from_utf8(output.stdout).unwrap(), input[..9]);
}

#[test]
fn an_off_by_one_move_count_is_a_wrong_answer() {
    let run = on_the_decks(&[&fixture("acesup-off-by-one.sh"), acesup_bin()]);
    assert_first_deck(
        &run,
        1,
        "deck 1: WRONG ANSWER at line 56: expected \"Moves: ",
        &[", got \"Moves: "],
    );
    assert_ends(&run.stdout, "acesup: 0 of 4 decks accepted\n");
}

#[test]
fn a_crash_is_a_runtime_error() {
    let run = on_the_decks(&[&fixture("acesup-crash.sh")]);
    assert_first_deck(
        &run,
        1,
        "deck 1: RUNTIME ERROR: the program was killed by signal 11 (SIGSEGV)",
        &[],
    );
    assert_has(&run.stdout, "  | about to crash");
}

#[test]
fn a_slow_program_hits_the_time_limit() {
    let run = judge(&[
        "--timeout",
        "300ms",
        "--random",
        "2",
        "--seed",
        "1",
        &fixture("acesup-slow.sh"),
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_has(&run.stdout, "deck 1: TIME LIMIT (300ms limit)");
    assert_has(&run.stdout, "deck 2: TIME LIMIT");
    assert!(run.elapsed < Duration::from_secs(10));
}

#[test]
fn results_and_bad_deck_files() {
    let (dir, results) = temp_path("r.jsonl");
    let run = judge(&[
        "--random",
        "3",
        "--seed",
        "5",
        "--results",
        results.to_str().unwrap(),
        acesup_bin(),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = common::jsonl(&results);
    assert_eq!(records.len(), 3);
    assert_eq!(records[0]["verdict"], "accepted");
    assert_eq!(records[0]["seed"], 5);
    assert_eq!(records[0]["deck"].as_str().unwrap().split(' ').count(), 52);

    let bad = write_file(dir.path(), "bad.txt", "AS\nAS\n");
    let run = judge(&["--decks", bad.to_str().unwrap(), acesup_bin()]);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "line 1: the deck starting here has 2 cards");
}

fn skeleton() -> String {
    fixture("acesup/skeleton.sh")
}

#[test]
fn the_skeleton_fails_strict_mode_at_line_1_and_passes_figures_mode() {
    let run = on_the_decks(&[&skeleton(), acesup_bin()]);
    assert_first_deck(
        &run,
        1,
        "deck 1: WRONG ANSWER at line 1: expected \"",
        &[", got \"Just read "],
    );

    let run = on_the_decks(&["--mode", "figures", &skeleton(), acesup_bin()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_ends(&run.stdout, "acesup: 4 of 4 decks accepted\n");
    let run = judge(&[
        "--mode",
        "figures",
        "--random",
        "30",
        "--seed",
        "11",
        &skeleton(),
        acesup_bin(),
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn figures_mode_names_the_wrong_figure() {
    let run = on_the_decks(&[
        "--mode",
        "figures",
        &skeleton(),
        "--off-by-one",
        acesup_bin(),
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    // 52 cards, "Done ClearPiles", "Done Deck2Pile", then the game's lines:
    // its moves are line 58. Deck 1 takes 58 moves (docs/acesup.md).
    let first = run.stdout.lines().nth(1).unwrap();
    assert_eq!(
        first.split(" (").next().unwrap(),
        "deck 1: WRONG ANSWER at line 58: game 1 moves: expected 58, got 59 in \"Moves: 59\"",
        "{}",
        run.stdout
    );
    assert_ends(&run.stdout, "acesup: 0 of 4 decks accepted\n");
}

#[test]
fn ignored_lines_are_dropped_before_judging() {
    let decks = tournament("decks.txt");
    let chatty = [skeleton(), "--plain-echo".into(), acesup_bin().into()];
    let mut args: Vec<&str> = vec!["--decks", &decks];
    args.extend(chatty.iter().map(String::as_str));
    let run = judge(&args);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_has(
        &run.stdout,
        "deck 1: WRONG ANSWER at line 53: expected \"Game 1\", got \"Done ClearPiles\"",
    );
    let mut ignoring = vec!["--ignore", "^Done ClearPiles$", "--ignore", "Deck2Pile"];
    ignoring.extend(&args);
    let run = judge(&ignoring);
    assert_eq!(run.code, Some(0), "{run:?}");
    // Figures mode too; the line numbers are still the output's.
    let mut wrong = vec![
        "--mode",
        "figures",
        "--ignore",
        "^Just read",
        "--decks",
        &decks,
    ];
    let off = [
        skeleton(),
        "--plain-echo".into(),
        "--off-by-one".into(),
        acesup_bin().into(),
    ];
    wrong.extend(off.iter().map(String::as_str));
    let run = judge(&wrong);
    assert_has(
        &run.stdout,
        "deck 1: WRONG ANSWER at line 58: game 1 moves: expected 58, got 59",
    );
    // A bad pattern is a usage error that shows it.
    let run = judge(&["--ignore", "(", "--decks", &decks, acesup_bin()]);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(&run.stderr, "--ignore");
}

/// The judge, on two jobs, of a program too slow for every one of 50
/// random decks, stopped early by `stop`: it fails.
fn too_slow(stop: &[&str]) -> Run {
    let slow = fixture("acesup-slow.sh");
    let mut args = vec![
        "--random",
        "50",
        "--seed",
        "1",
        "--timeout",
        "150ms",
        "--jobs",
        "2",
    ];
    args.extend_from_slice(stop);
    args.push(&slow);
    let run = judge(&args);
    assert_eq!(run.code, Some(1), "{run:?}");
    run
}

#[test]
fn fail_fast_stops_a_hanging_program_at_once() {
    let run = too_slow(&["--fail-fast"]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[1..],
        [
            "deck 1: TIME LIMIT (150ms limit)",
            "acesup: stopped after the first deck not accepted; 49 decks not judged",
            "acesup: 0 of 50 decks accepted",
        ],
        "{}",
        run.stdout
    );
    assert!(run.elapsed < Duration::from_secs(60));
}

#[test]
fn time_limits_in_a_row_stop_the_run() {
    let run = too_slow(&["--max-timeouts-in-a-row", "3"]);
    assert_has(
        &run.stdout,
        "deck 3: TIME LIMIT (150ms limit)\n\
             acesup: stopped after 3 time limits in a row; 47 decks not judged\n\
             acesup: 0 of 50 decks accepted\n",
    );
    assert_lacks(&run.stdout, "deck 4:");
}

#[test]
fn max_failures_counts_decks_not_accepted() {
    let run = on_the_decks(&[
        "--max-failures",
        "2",
        &fixture("acesup-off-by-one.sh"),
        acesup_bin(),
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_has(
        &run.stdout,
        "acesup: stopped after 2 decks not accepted; 2 decks not judged\n",
    );
    assert_lacks(&run.stdout, "deck 3:");
}

/// The verdict lines and records without their times.
fn verdicts(jobs: &str, program: &[&str], results: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let mut args = vec![
        "--random",
        "40",
        "--seed",
        "9",
        "--jobs",
        jobs,
        "--results",
        results.to_str().unwrap(),
    ];
    args.extend_from_slice(program);
    let run = judge(&args);
    let lines = run
        .stdout
        .lines()
        .map(|l| l.split(" (").next().unwrap().to_string())
        .collect();
    let records = std::fs::read_to_string(results)
        .unwrap()
        .lines()
        .map(|l| {
            let r: serde_json::Value = serde_json::from_str(l).unwrap();
            format!(
                "{} {} {} {}",
                r["index"], r["deck"], r["verdict"], r["message"]
            )
        })
        .collect();
    (lines, records)
}

#[test]
fn several_jobs_give_the_same_verdicts_in_the_same_order() {
    let dir = tempfile::tempdir().unwrap();
    for program in [
        vec![acesup_bin()],
        vec![&*fixture("acesup-off-by-one.sh"), acesup_bin()],
    ] {
        let one = verdicts("1", &program, &dir.path().join("one.jsonl"));
        let two = verdicts("2", &program, &dir.path().join("two.jsonl"));
        assert_eq!(one, two);
        assert_eq!(one.1.len(), 40);
        std::fs::remove_file(dir.path().join("one.jsonl")).unwrap();
        std::fs::remove_file(dir.path().join("two.jsonl")).unwrap();
    }
}
