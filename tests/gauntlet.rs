//! `format = "gauntlet"` in tournament files: one entrant meets every
//! other, seats checked in the records, through the real binary.

mod common;

use std::path::Path;

use common::{assert_has, referee, write_file};

/// A Chomp tournament in `dir` with `entrants` (all greedy bots but the
/// first, the strong one), `seats` a table, and `extra` lines.
fn chomp_file(dir: &Path, entrants: &[&str], seats: usize, games: u64, extra: &str) -> String {
    write_file(
        dir,
        "a.txt",
        "ABCDEFGHIJ\nKLMNOPQRST\nUVWXYZTHIS\nISNOTATEST\nITISASQUID\n",
    );
    let mut text = format!(
        "game = \"chomp\"\ngames = {games}\nseed = 5\n{extra}\n[limits]\nprep = \"0s\"\narrays = \"a.txt\"\nseats = {seats}\n"
    );
    for (i, name) in entrants.iter().enumerate() {
        let bot = if i == 0 {
            env!("CARGO_BIN_EXE_chomp")
        } else {
            env!("CARGO_BIN_EXE_chomp-greedy")
        };
        text.push_str(&format!(
            "[[entrant]]\nname = \"{name}\"\ncommand = [\"{bot}\"]\n"
        ));
    }
    let path = write_file(dir, "g.toml", text);
    path.to_str().unwrap().to_owned()
}

/// Who sat where in each game, in game order.
fn tables(file: &str, out: &Path) -> Vec<Vec<String>> {
    common::tournament(&[file, "--out", out.to_str().unwrap()]);
    common::timeless_records(out)
        .iter()
        .map(|r| {
            let results = r["players"].as_array().unwrap();
            for (s, x) in results.iter().enumerate() {
                assert_eq!(x["seat"].as_u64(), Some(s as u64), "{r}");
            }
            results
                .iter()
                .map(|x| x["entrant"].as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

#[test]
fn the_gauntlet_entrant_meets_each_other_entrant_in_each_seat() {
    let dir = tempfile::tempdir().unwrap();
    let file = chomp_file(
        dir.path(),
        &["strong", "greedy", "greedy-2"],
        2,
        6,
        "format = \"gauntlet\"\ngauntlet = \"greedy\"",
    );
    let seen = tables(&file, &dir.path().join("out"));
    // Rounds of two games on one setup, the seats swapped.
    let want: Vec<Vec<&str>> = vec![
        vec!["greedy", "strong"],
        vec!["strong", "greedy"],
        vec!["greedy", "greedy-2"],
        vec!["greedy-2", "greedy"],
        vec!["greedy", "strong"],
        vec!["strong", "greedy"],
    ];
    assert_eq!(seen, want);
}

#[test]
fn a_gauntlet_at_tables_of_three() {
    // Four entrants, three seats: the gauntlet entrant sits at every
    // table with two of the three others, a round robin of their pairs
    // in which no one is two tables ahead; each round of three games on
    // one setup rotates the table's seats.
    let dir = tempfile::tempdir().unwrap();
    let file = chomp_file(
        dir.path(),
        &["strong", "g1", "g2", "g3"],
        3,
        9,
        "format = \"gauntlet\"\ngauntlet = \"strong\"",
    );
    let seen = tables(&file, &dir.path().join("out"));
    let want: Vec<Vec<&str>> = vec![
        vec!["strong", "g1", "g3"],
        vec!["g1", "g3", "strong"],
        vec!["g3", "strong", "g1"],
        vec!["strong", "g2", "g3"],
        vec!["g2", "g3", "strong"],
        vec!["g3", "strong", "g2"],
        vec!["strong", "g1", "g2"],
        vec!["g1", "g2", "strong"],
        vec!["g2", "strong", "g1"],
    ];
    assert_eq!(seen, want);
}

#[test]
fn gauntlet_mistakes_are_named() {
    let dir = tempfile::tempdir().unwrap();
    for (extra, message) in [
        (
            "format = \"gauntlet\"\ngauntlet = \"nobody\"",
            "gauntlet = \"nobody\" is not an entrant's name",
        ),
        (
            "format = \"gauntlet\"",
            "format = \"gauntlet\" needs gauntlet = \"NAME\"",
        ),
        (
            "gauntlet = \"strong\"",
            "gauntlet = \"NAME\" needs format = \"gauntlet\"",
        ),
        ("format = \"swiss\"", "swiss"),
    ] {
        let file = chomp_file(dir.path(), &["strong", "greedy"], 2, 2, extra);
        let run = referee(["tournament", "--no-progress", &file], b"");
        assert_eq!(run.code, Some(64), "{extra}: {run:?}");
        assert!(run.stderr.contains(message), "{message} in {}", run.stderr);
    }
}

/// A ci case with `format = "gauntlet"`: the case's bot plays every game
/// of a Chomp case whose tables seat fewer than all the entrants; without
/// it, seats rotate and the bot sits out some games.
#[test]
fn a_ci_gauntlet_seats_the_case_bot_in_every_game() {
    let dir = tempfile::tempdir().unwrap();
    write_file(
        dir.path(),
        "a.txt",
        "ABCDEFGHIJ\nKLMNOPQRST\nUVWXYZTHIS\nISNOTATEST\nITISASQUID\n",
    );
    let suite = |format: &str| {
        let greedy = env!("CARGO_BIN_EXE_chomp-greedy");
        let text = format!(
            "[[case]]\nname = \"strong\"\ngame = \"chomp\"\ncommand = [\"{}\"]\ngames = 8\nseed = 3\n{format}\n\
             opponents = [{{ name = \"g1\", command = [\"{greedy}\"] }}, {{ name = \"g2\", command = [\"{greedy}\"] }}, {{ name = \"g3\", command = [\"{greedy}\"] }}]\n\
             [case.limits]\nprep = \"0s\"\narrays = \"a.txt\"\nseats = 2\n[case.expect]\nno_crash = true\n",
            env!("CARGO_BIN_EXE_chomp")
        );
        let path = write_file(dir.path(), "suite.toml", text);
        let run = referee(["ci", path.to_str().unwrap()], b"");
        assert_eq!(run.code, Some(0), "{run:?}");
        run.stdout
    };
    let gauntlet = suite("format = \"gauntlet\"");
    assert_has(&gauntlet, "8 games");
    let round_robin = suite("");
    assert_has(&round_robin, "4 games");
}

/// A round robin of four entrants at tables of two meets every pair, as
/// cutechess-cli's round robin does: six pairs, each a round of two games
/// with the seats swapped.
#[test]
fn a_round_robin_at_tables_of_two_meets_every_pair() {
    let dir = tempfile::tempdir().unwrap();
    let file = chomp_file(dir.path(), &["a", "b", "c", "d"], 2, 12, "");
    let seen = tables(&file, &dir.path().join("out"));
    let mut pairs = std::collections::BTreeSet::new();
    for round in seen.chunks(2) {
        assert_eq!(round[0][0], round[1][1], "{seen:?}");
        assert_eq!(round[0][1], round[1][0], "{seen:?}");
        let mut pair = round[0].clone();
        pair.sort();
        assert!(pairs.insert(pair), "a pair met twice: {seen:?}");
    }
    assert_eq!(pairs.len(), 6, "{seen:?}");
}

/// A tournament in `dir` of the echo judge's game (tests/fixtures/
/// game-options) for `players` (`min = 2, max = 2`), with `entrants` that
/// answer `ok` and `extra` lines, and no `seats`.
fn echo_file(dir: &Path, players: &str, entrants: &[&str], games: u64, extra: &str) -> String {
    let judge = common::fixture("game-options/judge.py");
    write_file(
        dir,
        "game.toml",
        format!(
            "name = \"echo\"\njudge = [\"python3\", {judge:?}]\nprotocol = 2\nplayers = {{ {players} }}\nreuse = true\n"
        ),
    );
    let answer = common::fixture("game-options/answer.sh");
    let mut text = format!("game = \"game.toml\"\ngames = {games}\nseed = 5\njobs = 1\n{extra}\n");
    for name in entrants {
        text.push_str(&format!(
            "[[entrant]]\nname = \"{name}\"\ncommand = [{answer:?}]\n"
        ));
    }
    let path = write_file(dir, "g.toml", text);
    path.to_str().unwrap().to_owned()
}

/// A gauntlet of a two-player game (chess) needs no `seats = 2`: a game
/// for exactly two players seats two. It was refused: "is for 2 to 2
/// players; this one seats 3".
#[test]
fn a_gauntlet_of_a_two_player_game_needs_no_seats() {
    let dir = tempfile::tempdir().unwrap();
    let gauntlet = "format = \"gauntlet\"\ngauntlet = \"new\"";
    let file = echo_file(
        dir.path(),
        "min = 2, max = 2",
        &["new", "old", "older"],
        4,
        gauntlet,
    );
    let seen = tables(&file, &dir.path().join("out"));
    let want: Vec<Vec<&str>> = vec![
        vec!["new", "old"],
        vec!["old", "new"],
        vec!["new", "older"],
        vec!["older", "new"],
    ];
    assert_eq!(seen, want);
    // A round robin of three at tables of two, too.
    let file = echo_file(dir.path(), "min = 2, max = 2", &["a", "b", "c"], 6, "");
    assert_eq!(tables(&file, &dir.path().join("out-rr")).len(), 6);
}

/// A game for two to four players and five entrants: no table holds them
/// all, and the game does not say how many to seat; the error says what
/// to write.
#[test]
fn seats_that_cannot_be_inferred_are_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["a", "b", "c", "d", "e"];
    let file = echo_file(dir.path(), "min = 2, max = 4", &names, 2, "");
    let run = referee(["tournament", "--no-progress", &file], b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(
        run.stderr.contains("is for 2 to 4 players") && run.stderr.contains("seats = N"),
        "{}",
        run.stderr
    );
}
