//! `referee chomp` end to end: the real binary, scripted players
//! (`tests/fixtures/chomp-script.sh` as each player's `pc2`), short budgets.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Run, Scratch, assert_has, assert_lacks, fixture, referee, referee_ok, write_file};
use serde_json::Value;

/// A test's working area: arrays and player directories.
struct Arena(Scratch);

impl Arena {
    fn new() -> Arena {
        Arena(Scratch::new())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn array(&self, name: &str, text: &str) -> String {
        self.0.file(name, text)
    }

    /// A scripted player in `name/`, playing `moves` (one per round).
    fn player(&self, name: &str, moves: &[&str]) -> String {
        let dir = self.path(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(fixture("chomp-script.sh"), dir.join("pc2")).unwrap();
        let text: String = moves.iter().map(|m| format!("{m}\n")).collect();
        write_file(&dir, "moves", text);
        dir.to_str().unwrap().to_owned()
    }

    /// What the player in `name/` read, line by line.
    fn seen(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.path(name).join("seen"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn results(&self) -> String {
        self.path("results.jsonl").to_str().unwrap().to_owned()
    }

    fn records(&self) -> Vec<Value> {
        std::fs::read_to_string(self.path("results.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Runs `referee chomp --prep 0s --results ... ARGS`.
    fn chomp(&self, args: &[&str]) -> Run {
        let results = self.results();
        let mut all = vec!["chomp", "--prep", "0s", "--results", &results];
        all.extend_from_slice(args);
        referee(all, b"")
    }

    /// Runs `referee chomp ... --start COL ROW --max-rounds ROUNDS ARGS`,
    /// which must succeed.
    fn play(&self, [col, row]: [&str; 2], rounds: &str, args: &[&str]) -> Run {
        let mut all = vec!["--start", col, row, "--max-rounds", rounds];
        all.extend_from_slice(args);
        let run = self.chomp(&all);
        assert_eq!(run.code, Some(0), "{run:?}");
        run
    }
}

/// The updates (groups of K lines) in a player's `seen` log, after the
/// header of `header_lines` lines.
fn updates(seen: &[String], header_lines: usize) -> Vec<Vec<String>> {
    seen[header_lines..]
        .split(|l| l == "---")
        .map(<[String]>::to_vec)
        .filter(|u| !u.is_empty() && u != &["EOF".to_string()])
        .collect()
}

fn player_field(record: &Value, player: usize, field: &str) -> Value {
    record["players"][player - 1][field].clone()
}

const STATEMENT: &str = "ABCDEFGHIJ\nKLMNOPQRST\nUVWXYZTHIS\nISNOTATEST\nITISASQUID\n";

#[test]
fn the_statement_example_wraps_south_to_the_top() {
    let arena = Arena::new();
    let array = arena.array("a.txt", STATEMENT);
    let p1 = arena.player("p1", &["S", "C"]);
    let run = arena.chomp(&["-start", "7", "5", "--max-rounds", "2", &array, &p1]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let seen = arena.seen("p1");
    assert_eq!(
        &seen[..7],
        [
            "1 1",
            "10 5",
            "ABCDEFGHIJ",
            "KLMNOPQRST",
            "UVWXYZTHIS",
            "ISNOTATEST",
            "ITISASQUID"
        ]
    );
    assert_eq!(updates(&seen, 7), [vec!["7 5 -"], vec!["4 1 S"]]);
    // Then it chomped the D at (4,1): 4 points.
    assert_eq!(player_field(&arena.records()[0], 1, "score"), 4);
}

#[test]
fn every_edge_and_corner_wraps_to_the_opposite_cell() {
    // (start, move, where the next update must show the player)
    for (start, mv, lands) in [
        ((1, 1), "N", "10 5"),
        ((1, 1), "W", "10 5"),
        ((10, 5), "S", "1 1"),
        ((10, 5), "E", "1 1"),
        ((10, 1), "N", "1 5"),
        ((10, 1), "E", "1 5"),
        ((1, 5), "S", "10 1"),
        ((1, 5), "W", "10 1"),
        ((4, 1), "N", "7 5"),
        ((10, 2), "E", "1 4"),
        ((1, 4), "W", "10 2"),
        ((5, 3), "N", "5 2"),
    ] {
        let arena = Arena::new();
        let array = arena.array("a.txt", STATEMENT);
        let p1 = arena.player("p1", &[mv]);
        let (col, row) = (start.0.to_string(), start.1.to_string());
        arena.play([&col, &row], "2", &[&array, &p1]);
        let second = &updates(&arena.seen("p1"), 7)[1][0];
        assert_eq!(
            second,
            &format!("{lands} {mv}"),
            "from {start:?} moving {mv}"
        );
    }
}

#[test]
fn simultaneous_chomps_share_rounding_up() {
    // A Y (25) shared by three: 9 each; by two: 13 each.
    for (players, each) in [(3usize, 9u64), (2, 13), (1, 25)] {
        let arena = Arena::new();
        let array = arena.array("a.txt", "YA\n");
        let dirs: Vec<String> = (1..=players)
            .map(|i| arena.player(&format!("p{i}"), &["C", "E", "C"]))
            .collect();
        let mut args = vec![array.as_str()];
        args.extend(dirs.iter().map(String::as_str));
        arena.play(["1", "1"], "1", &args);
        let record = &arena.records()[0];
        for p in 1..=players {
            assert_eq!(player_field(record, p, "score"), each, "{players} players");
            assert_eq!(player_field(record, p, "eaten"), 1);
        }
    }
}

#[test]
fn chomping_an_empty_cell_gives_nothing() {
    let arena = Arena::new();
    let array = arena.array("a.txt", "ZA\n");
    let p1 = arena.player("p1", &["C", "C", "C"]);
    arena.play(["1", "1"], "3", &[&array, &p1]);
    let record = &arena.records()[0];
    assert_eq!(player_field(record, 1, "score"), 26);
    assert_eq!(player_field(record, 1, "eaten"), 1);
    assert_eq!(player_field(record, 1, "moves"), 3);
    assert_eq!(record["end"], "round_limit");
}

#[test]
fn starvation_at_the_budget_ignores_a_late_reply() {
    let arena = Arena::new();
    let array = arena.array("a.txt", "ABCDEFGHIJ\nABCDEFGHIJ\n");
    // 0.6s + 0.6s of turn time without eating exceeds the 1s budget in the
    // second round; its late `N` must not move it.
    let slow = arena.player("slow", &["sleep 0.6 E", "sleep 0.6 N", "C"]);
    let watcher = arena.player("watcher", &["W", "W", "W", "W"]);
    let run = arena.play(
        ["1", "1"],
        "4",
        &["--starve", "1s", &array, &slow, &watcher],
    );
    let record = &arena.records()[0];
    assert_eq!(player_field(record, 1, "fate"), "starved");
    assert_eq!(player_field(record, 1, "died_round"), 2);
    let ups = updates(&arena.seen("watcher"), 4);
    assert_eq!(ups[1][0], "2 1 E");
    // Round 3: the starved player did not move, and shows D.
    assert_eq!(ups[2][0], "2 1 D");
    assert_eq!(ups[3][0], "2 1 D");
    // The starved player got exactly one update after starving, then EOF.
    let slow_seen = arena.seen("slow");
    assert_eq!(updates(&slow_seen, 4).len(), 3);
    assert_eq!(slow_seen.last().unwrap(), "EOF");
    assert!(run.elapsed < Duration::from_secs(20));
}

#[test]
fn eating_resets_the_starvation_bank() {
    let arena = Arena::new();
    let array = arena.array("a.txt", "ABCDEFGHIJ\nABCDEFGHIJ\n");
    // Same pace as above, but the first move eats a full cell.
    let eater = arena.player("eater", &["sleep 0.6 C", "sleep 0.6 N", "C"]);
    arena.play(["1", "1"], "3", &["--starve", "1s", &array, &eater]);
    let record = &arena.records()[0];
    assert_eq!(player_field(record, 1, "fate"), "alive");
    // The A at (1,1), then the J at (10,2) across the top edge.
    assert_eq!(player_field(record, 1, "score"), 1 + 10);
}

#[test]
fn decomposing_gets_one_more_update_then_eof() {
    let arena = Arena::new();
    let array = arena.array("a.txt", STATEMENT);
    let quitter = arena.player("quitter", &["D"]);
    let stayer = arena.player("stayer", &["N", "N", "N"]);
    arena.play(["5", "3"], "3", &[&array, &quitter, &stayer]);
    let seen = arena.seen("quitter");
    let ups = updates(&seen, 7);
    assert_eq!(ups, [vec!["5 3 -", "5 3 -"], vec!["5 3 D", "5 2 N"]]);
    assert_eq!(seen.last().unwrap(), "EOF");
    let record = &arena.records()[0];
    assert_eq!(player_field(record, 1, "fate"), "decomposed");
    assert_eq!(player_field(record, 2, "fate"), "alive");
    assert_eq!(record["rounds"], 3);
}

#[test]
fn a_crash_mid_game_leaves_the_others_playing() {
    let arena = Arena::new();
    let array = arena.array("a.txt", STATEMENT);
    let crasher = arena.player("crasher", &["C", "exit 3"]);
    let stayer = arena.player("stayer", &["N", "N", "N", "N"]);
    let run = arena.play(["5", "3"], "4", &[&array, &crasher, &stayer]);
    let record = &arena.records()[0];
    assert_eq!(player_field(record, 1, "fate"), "crashed");
    assert_eq!(player_field(record, 1, "died_round"), 2);
    assert!(
        player_field(record, 1, "error")
            .as_str()
            .unwrap()
            .contains("exited with status 3")
    );
    assert_eq!(player_field(record, 1, "score"), 25);
    assert_eq!(player_field(record, 2, "fate"), "alive");
    assert_eq!(player_field(record, 2, "moves"), 4);
    assert_has(&run.stderr, "player 1");
    assert_has(&run.stdout, "crashed (round 2)");
}

#[test]
fn garbage_is_a_chomp_and_whitespace_is_skipped() {
    let arena = Arena::new();
    let array = arena.array("a.txt", STATEMENT);
    // `x` chomps the Y at (5,3); then ` \n\tE` is an E.
    let p1 = arena.player("p1", &["x", " \\n\\tE", "C"]);
    arena.play(["5", "3"], "3", &[&array, &p1]);
    let ups = updates(&arena.seen("p1"), 7);
    assert_eq!(ups[0], ["5 3 -"]);
    assert_eq!(ups[1], ["5 3 C"]);
    assert_eq!(ups[2], ["6 3 E"]);
    // Y (25) then Z (26).
    assert_eq!(player_field(&arena.records()[0], 1, "score"), 51);
}

#[test]
fn the_game_ends_when_every_cell_is_eaten() {
    let arena = Arena::new();
    let array = arena.array("a.txt", "Q\n");
    let p1 = arena.player("p1", &["C"]);
    let p2 = arena.player("p2", &["C"]);
    let run = arena.chomp(&[&array, &p1, &p2]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let record = &arena.records()[0];
    assert_eq!(record["end"], "board_empty");
    assert_eq!(record["rounds"], 1);
    assert_eq!(record["start"], serde_json::json!([1, 1]));
    assert_eq!(player_field(record, 1, "score"), 9);
    // No update after the last round: straight to EOF.
    let seen = arena.seen("p1");
    assert_eq!(updates(&seen, 3).len(), 1);
    assert_eq!(seen.last().unwrap(), "EOF");
}

#[test]
fn the_game_ends_when_every_player_is_decomposing() {
    let arena = Arena::new();
    let array = arena.array("a.txt", STATEMENT);
    let p1 = arena.player("p1", &["D"]);
    let p2 = arena.player("p2", &["N", "D"]);
    let run = arena.chomp(&[&array, &p1, &p2]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let record = &arena.records()[0];
    assert_eq!(record["end"], "all_dead");
    assert_eq!(record["rounds"], 2);
    assert_eq!(updates(&arena.seen("p1"), 7).len(), 2);
    assert_eq!(updates(&arena.seen("p2"), 7).len(), 2);
}

#[test]
fn start_forms() {
    let arena = Arena::new();
    let array = arena.array("a.txt", STATEMENT);
    let p1 = arena.player("p1", &[]);
    for (args, check) in [
        (vec!["-start", "3", "4"], (Some(3), Some(4))),
        (vec!["--start", "3", "4"], (Some(3), Some(4))),
        (vec!["-start", "R", "4"], (None, Some(4))),
        (vec!["--start", "2", "R"], (Some(2), None)),
        (vec!["--start", "R", "R"], (None, None)),
        (vec![], (None, None)),
    ] {
        let mut all = args.clone();
        all.extend(["--max-rounds", "1", array.as_str(), p1.as_str()]);
        let run = arena.chomp(&all);
        assert_eq!(run.code, Some(0), "{args:?}: {run:?}");
        let record = arena.records().pop().unwrap();
        let (col, row) = (
            record["start"][0].as_u64().unwrap(),
            record["start"][1].as_u64().unwrap(),
        );
        assert!((1..=10).contains(&col) && (1..=5).contains(&row));
        assert!(
            check.0.is_none_or(|c| c == col) && check.1.is_none_or(|r| r == row),
            "{args:?}: {col} {row}"
        );
    }
    // The seed is printed, and the same seed gives the same random start.
    let one = arena.chomp(&["--seed", "99", "--max-rounds", "1", &array, &p1]);
    let two = arena.chomp(&["--seed", "99", "--max-rounds", "1", &array, &p1]);
    assert!(one.stdout.contains("seed 99"));
    let records = arena.records();
    let n = records.len();
    assert_eq!(records[n - 1]["start"], records[n - 2]["start"]);
    assert_eq!(one.stdout.lines().nth(1), two.stdout.lines().nth(1));

    for bad in [
        ["--start", "11", "1"],
        ["--start", "1", "6"],
        ["--start", "0", "1"],
        ["--start", "x", "1"],
    ] {
        let mut all = bad.to_vec();
        all.extend([array.as_str(), p1.as_str()]);
        let run = arena.chomp(&all);
        assert_eq!(run.code, Some(64), "{bad:?}: {run:?}");
    }
}

#[test]
fn array_file_errors_name_the_place() {
    let arena = Arena::new();
    let p1 = arena.player("p1", &[]);
    for (text, says) in [
        (
            "ABC\nAB\n",
            "line 2: row has 2 letters, but the first row has 3",
        ),
        (
            "ABC\nAbC\n",
            "line 2, column 2: 'b' is not a capital letter A-Z",
        ),
        ("", "line 1: the file has no rows"),
        ("AB\n\nAB\n", "line 2: empty line inside the array"),
    ] {
        let array = arena.array("bad.txt", text);
        let run = arena.chomp(&[&array, &p1]);
        assert_eq!(run.code, Some(64), "{text:?}: {run:?}");
        assert!(
            run.stderr.contains(&format!("{array}: {says}")),
            "{text:?}: {}",
            run.stderr
        );
    }
    // Tolerated: no final newline, CRLF.
    let array = arena.array("ok.txt", "AB\r\nCD");
    let run = arena.chomp(&["--max-rounds", "1", &array, &p1]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let run = arena.chomp(&["/no/such/array.txt", &p1]);
    assert_eq!(run.code, Some(64));
    assert_has(&run.stderr, "/no/such/array.txt");
}

fn write_makefile(dir: &str, recipe: &str) {
    let makefile = format!(".PHONY: pc2\npc2:\n\t{recipe}\n");
    std::fs::write(Path::new(dir).join("Makefile"), makefile).unwrap();
}

#[test]
fn build_failures_disqualify_only_their_entrant() {
    let arena = Arena::new();
    let array = arena.array("a.txt", STATEMENT);
    let good = arena.player("good", &["C"]);
    let broken = arena.player("broken", &[]);
    write_makefile(&broken, "@echo 'error: cannot compile' >&2; false");
    let empty = arena.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let empty = empty.to_str().unwrap().to_owned();
    let slow = arena.player("slow", &[]);
    write_makefile(&slow, "sleep 100");
    let run = arena.chomp(&[
        "--build-timeout",
        "300ms",
        "--start",
        "5",
        "3",
        "--max-rounds",
        "2",
        &array,
        &good,
        &broken,
        &empty,
        &slow,
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains("entrant 2 disqualified")
            && run.stderr.contains("build failed")
            && run.stderr.contains("| error: cannot compile"),
        "{}",
        run.stderr
    );
    assert_has(&run.stderr, "entrant 3 disqualified");
    assert_has(&run.stderr, "no pc2");
    assert_has(&run.stderr, "entrant 4 disqualified");
    assert_has(&run.stderr, "build timed out after 300ms");
    assert!(run.elapsed < Duration::from_secs(20));
    let record = &arena.records()[0];
    assert_eq!(player_field(record, 1, "fate"), "alive");
    assert_eq!(player_field(record, 1, "score"), 25);
    for p in 2..=4 {
        assert_eq!(player_field(record, p, "fate"), "disqualified");
    }
    // The others appear dead (D) at the start cell in every update.
    let ups = updates(&arena.seen("good"), 7);
    assert_eq!(ups[0], ["5 3 -", "5 3 D", "5 3 D", "5 3 D"]);

    // Everyone disqualified: nothing to play.
    let run = arena.chomp(&[&array, &broken, &empty]);
    assert_eq!(run.code, Some(64), "{run:?}");
    assert!(run.stderr.contains("every entrant is disqualified"));
}

#[test]
fn a_directory_is_built_once_even_when_given_twice() {
    let arena = Arena::new();
    let array = arena.array("a.txt", STATEMENT);
    let p = arena.player("p", &["C"]);
    write_makefile(&p, "echo built >> builds.log");
    let run = arena.chomp(&["--max-rounds", "1", &array, &p, &p]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let builds = std::fs::read_to_string(Path::new(&p).join("builds.log")).unwrap();
    assert_eq!(builds, "built\n");
}

#[test]
fn many_games_rotate_seats_and_aggregate() {
    let arena = Arena::new();
    let arrays = arena.path("arrays");
    write_file(&arrays, "a.txt", "Z\n");
    write_file(&arrays, "b.txt", "AB\n");
    write_file(&arrays, "README.md", "not an array\n");
    let eater = arena.player("eater", &["C", "C", "C", "C"]);
    let quitter = arena.player("quitter", &["D", "D", "D", "D"]);
    let run = arena.chomp(&[
        "--games",
        "4",
        "--seed",
        "3",
        "--record-moves",
        "--max-rounds",
        "5",
        arrays.to_str().unwrap(),
        &eater,
        &quitter,
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let records = arena.records();
    assert_eq!(records.len(), 4);
    let seats: Vec<(u64, u64)> = records
        .iter()
        .map(|r| {
            (
                r["players"][0]["entrant"].as_u64().unwrap(),
                r["players"][1]["entrant"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(seats, [(0, 1), (1, 0), (0, 1), (1, 0)]);
    let arrays_used: Vec<bool> = records
        .iter()
        .map(|r| r["array"].as_str().unwrap().ends_with("a.txt"))
        .collect();
    assert_eq!(arrays_used, [true, false, true, false]);
    assert_eq!(records[0]["moves"], "CD");
    assert_has(&run.stdout, "standings after 4 games");
    let table_line = run
        .stdout
        .lines()
        .find(|l| l.starts_with('|') && l.contains("/eater "))
        .unwrap()
        .to_owned();
    assert_has(&table_line, "|     4 |");
}

#[test]
fn the_reference_bots_build_and_play_from_their_makefiles() {
    let root = env!("CARGO_MANIFEST_DIR");
    let array = format!("{root}/tournaments/chomp/statement.txt");
    let run = referee_ok([
        "chomp",
        "--prep",
        "0s",
        "--seed",
        "1",
        &array,
        &format!("{root}/bots/chomp"),
        &format!("{root}/bots/chomp-greedy"),
    ]);
    assert_has(&run.stdout, "every cell eaten");
    assert_lacks(&run.stdout, "disqualified");
}

/// A player in `name/` whose `pc2` is `script` (a shell script).
fn scripted_pc2(arena: &Arena, name: &str, script: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let dir = arena.path(name);
    std::fs::create_dir_all(&dir).unwrap();
    let pc2 = write_file(&dir, "pc2", script);
    std::fs::set_permissions(&pc2, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir.to_str().unwrap().to_owned()
}

#[test]
fn a_player_that_exits_shows_its_last_stderr_lines_escaped() {
    let arena = Arena::new();
    let array = arena.array("a.txt", "Z\n");
    // What a JVM says when its class is missing, then an escape sequence
    // that must not reach the terminal as one.
    let java = scripted_pc2(
        &arena,
        "java",
        "#!/bin/sh\nread p; read size; read row; read update\n\
         printf 'Error: Could not find or load main class Bot\\n\\033[31mCaused by: ClassNotFoundException\\n' >&2\n\
         exit 1\n",
    );
    let run = arena.chomp(&[&array, &java]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stderr, "exited with status 1");
    assert_has(
        &run.stderr,
        "  | Error: Could not find or load main class Bot\n",
    );
    assert_has(
        &run.stderr,
        "  | \\x1b[31mCaused by: ClassNotFoundException\n",
    );
    assert!(!run.stderr.contains('\x1b'), "{:?}", run.stderr);
}

#[test]
fn a_pc2_script_that_finds_its_files_through_its_own_path_plays() {
    let arena = Arena::new();
    let array = arena.array("a.txt", STATEMENT);
    // A wrapper as students write them: the real player lies beside it.
    let p = scripted_pc2(
        &arena,
        "wrapped",
        "#!/bin/sh\nexec \"$(dirname \"$0\")/player.sh\"\n",
    );
    std::fs::copy(fixture("chomp-script.sh"), Path::new(&p).join("player.sh")).unwrap();
    std::fs::write(Path::new(&p).join("moves"), "C\n").unwrap();
    let run = arena.play(["5", "3"], "1", &[&array, &p]);
    let record = &arena.records()[0];
    assert_eq!(player_field(record, 1, "fate"), "alive", "{run:?}");
    assert_eq!(player_field(record, 1, "score"), 25);
}

#[test]
fn the_first_reply_is_recorded_apart_as_the_start_up() {
    let arena = Arena::new();
    let array = arena.array("a.txt", STATEMENT);
    let p = arena.player("p", &["sleep 0.4 C", "C", "C"]);
    let run = arena.chomp(&[
        "--starve",
        "5s",
        "--start",
        "5",
        "3",
        "--max-rounds",
        "3",
        &array,
        &p,
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let record = &arena.records()[0];
    let startup = player_field(record, 1, "startup_micros").as_u64().unwrap();
    assert!(startup >= 400_000, "{record}");
    // Not a move time: the slowest move is one of the later two.
    assert!(
        player_field(record, 1, "slowest_micros").as_u64().unwrap() < startup,
        "{record}"
    );
    assert_eq!(player_field(record, 1, "moves"), 3);

    // A tournament's record keeps it too.
    let file = arena.path("t.toml");
    std::fs::write(
        &file,
        format!(
            "game = \"chomp\"\ngames = 1\nseed = 1\n[limits]\nprep = \"0s\"\nstarve = \"5s\"\n\
             max_rounds = 3\nstart = [\"5\", \"3\"]\narrays = \"a.txt\"\n\
             [[entrant]]\nname = \"p\"\ndir = \"{p}\"\n"
        ),
    )
    .unwrap();
    std::fs::write(Path::new(&p).join("moves"), "sleep 0.4 C\nC\nC\n").unwrap();
    let out = arena.path("out");
    common::tournament(&[file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let records = common::jsonl(&out.join("records.jsonl"));
    let result = &records[0]["players"][0];
    assert!(
        result["startup_micros"].as_u64().unwrap() >= 400_000,
        "{result}"
    );
}

#[test]
fn start_up_counts_against_the_starvation_clock_unless_the_preparation_covers_it() {
    // A player that takes 0.6s to start, as a JVM may, under a 300ms
    // starvation budget.
    let slow_start = |arena: &Arena| {
        let p = scripted_pc2(arena, "slow", "#!/bin/sh\nsleep 0.6\nexec ./player.sh\n");
        std::fs::copy(fixture("chomp-script.sh"), Path::new(&p).join("player.sh")).unwrap();
        std::fs::write(Path::new(&p).join("moves"), "").unwrap();
        p
    };
    let play = |prep: &str| {
        let arena = Arena::new();
        let array = arena.array("a.txt", STATEMENT);
        let p = slow_start(&arena);
        let results = arena.results();
        referee_ok([
            "chomp",
            "--prep",
            prep,
            "--starve",
            "300ms",
            "--max-rounds",
            "2",
            "--results",
            &results,
            &array,
            &p,
        ]);
        arena.records().remove(0)
    };
    let unprepared = play("0s");
    assert_eq!(
        player_field(&unprepared, 1, "fate"),
        "starved",
        "{unprepared}"
    );
    assert_eq!(player_field(&unprepared, 1, "died_round"), 1);
    let prepared = play("2s");
    assert_eq!(player_field(&prepared, 1, "fate"), "alive", "{prepared}");
    assert_eq!(player_field(&prepared, 1, "moves"), 2);
}

#[test]
fn long_runs_under_the_statements_limits_are_warned_about() {
    let arena = Arena::new();
    let array = arena.array("z.txt", "Z\n");
    let bot = |name: &str, binary: &str| {
        scripted_pc2(&arena, name, &format!("#!/bin/sh\nexec {binary}\n"))
    };
    let strong = bot("strong", env!("CARGO_BIN_EXE_chomp"));
    let greedy = bot("greedy", env!("CARGO_BIN_EXE_chomp-greedy"));
    let chomp = |games: &str| {
        referee_ok([
            "chomp", "--prep", "0s", "--games", games, "--seed", "1", &array, &strong, &greedy,
        ])
    };
    // 50 games one after the other: a bot that stops answering would
    // cost 45s in each, 37m 30s in all.
    let run = chomp("50");
    assert_has(
        &run.stderr,
        "referee chomp: warning: 50 Chomp games, one at a time, with prep 0s and \
             starve 45s (the statement's default) may spend up to 37m 30s only waiting",
    );
    assert_has(&run.stderr, "set --starve 5s (");
    assert!(!chomp("5").stderr.contains("warning"));

    // A tournament of 200 games, 2 at once, says what to set in its file.
    let file = arena.path("t.toml");
    std::fs::write(
        &file,
        format!(
            "game = \"chomp\"\ngames = 200\nseed = 1\njobs = 2\n[limits]\nprep = \"0s\"\n\
             arrays = \"z.txt\"\n\
             [[entrant]]\nname = \"strong\"\ncommand = [\"{}\"]\n\
             [[entrant]]\nname = \"greedy\"\ncommand = [\"{}\"]\n",
            env!("CARGO_BIN_EXE_chomp"),
            env!("CARGO_BIN_EXE_chomp-greedy"),
        ),
    )
    .unwrap();
    let run = referee(["tournament", "--no-progress", file.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(
        &run.stderr,
        "referee tournament: warning: 200 Chomp games, 2 at once, with prep 0s and \
             starve 45s (the statement's default) may spend up to 1h 15m only waiting",
    );
    assert_has(&run.stderr, "for a class, set starve = \"5s\" in [limits]");
}

/// The commands of the README's Chomp example: the lines of its Chomp
/// section's code blocks that run `referee chomp` (not its synopsis).
fn readme_chomp_commands() -> Vec<String> {
    let readme =
        std::fs::read_to_string(format!("{}/README.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Chomp\n"))
        .expect("the README has a Chomp section");
    let mut in_code = false;
    let mut commands = Vec::new();
    for line in section.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if in_code && line.contains("referee chomp ") && !line.contains("[OPTIONS]") {
            commands.push(line.to_owned());
        }
    }
    commands
}

#[test]
fn the_readme_chomp_example_runs_with_only_the_installed_programs() {
    // What `cargo install --path .` gives, and nothing else of Rust's:
    // no cargo, no target/ on the PATH.
    let bin = tempfile::tempdir().unwrap();
    for (name, path) in [
        ("referee", env!("CARGO_BIN_EXE_referee")),
        ("referee-launch", env!("CARGO_BIN_EXE_referee-launch")),
        ("chomp", env!("CARGO_BIN_EXE_chomp")),
        ("chomp-greedy", env!("CARGO_BIN_EXE_chomp-greedy")),
    ] {
        std::os::unix::fs::symlink(path, bin.path().join(name)).unwrap();
    }
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let commands = readme_chomp_commands();
    assert!(commands.len() >= 2, "{commands:?}");
    for command in &commands {
        let marker = common::Marker::new();
        let mut sh = std::process::Command::new("sh");
        sh.args(["-c", command])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("PATH", &path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        marker.apply(&mut sh);
        let run = common::finish(sh.spawn().unwrap(), b"");
        marker.assert_none_left();
        assert_eq!(run.code, Some(0), "{command}: {run:?}");
        // Nothing built, nobody failed: no player said anything.
        for word in ["building", "disqualified", "player 1", "player 2"] {
            assert!(!run.stderr.contains(word), "{command}: {run:?}");
        }
        assert!(
            run.stdout.contains("every cell eaten"),
            "{command}: {run:?}"
        );
    }
}

#[test]
fn a_resumed_record_with_an_entrant_the_run_lacks_is_refused() {
    let arena = Arena::new();
    let array = arena.array("z.txt", "Z\n");
    let p = arena.player("p", &[]);
    let results = arena.results();
    let resume = |games: &str| {
        referee(
            [
                "chomp",
                "--prep",
                "0s",
                "--seed",
                "3",
                "--games",
                games,
                "--resume",
                "--results",
                &results,
                &array,
                &p,
                &p,
            ],
            b"",
        )
    };
    assert_eq!(resume("1").code, Some(0));
    let text = std::fs::read_to_string(&results).unwrap();
    std::fs::write(&results, text.replace("\"entrant\":1", "\"entrant\":7")).unwrap();
    let run = resume("2");
    assert_eq!(run.code, Some(64), "{run:?}");
    assert_has(
        &run.stderr,
        "game 1 of this run does not have its 2 players, entrants 0 to 1",
    );
}

/// A game that waits a preparation time anyone would notice says so on
/// its line, before the wait: with the statement's 60s a run looked hung
/// (docs/chomp.md's example, issue 51). A short one is not mentioned.
#[test]
fn a_noticeable_preparation_time_is_said_before_it_is_waited() {
    use std::io::BufRead;
    let arena = Arena::new();
    let array = arena.array("z.txt", "Z\n");
    let p = arena.player("p", &["C"]);
    let marker = common::Marker::new();
    let mut child = common::start(["chomp", "--prep", "30s", &array, &p], &marker);
    let stdout = child.stdout.take().unwrap();
    let line = std::io::BufReader::new(stdout)
        .lines()
        .map(Result::unwrap)
        .find(|l| l.starts_with("game 1:"))
        .expect("a line for game 1");
    common::signal(&child, nix::sys::signal::Signal::SIGINT);
    let _ = child.wait();
    marker.assert_none_left();
    assert!(
        line.ends_with("; the players prepare for 30s (--prep) before the first round"),
        "{line}"
    );

    let quick = arena.chomp(&[&array, &p]);
    assert_eq!(quick.code, Some(0), "{quick:?}");
    assert_lacks(&quick.stdout, "prepare");
}
