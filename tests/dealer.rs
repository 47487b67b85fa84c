//! `referee dealer` end to end: the real binary, real player processes.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{
    Marker, TestRng, assert_has, evensteven_bin, finish, fixture, naive_deal, output_with_input,
    referee, signal, start, temp_path, write_file,
};

const SAMPLE_INPUT: &[u8] = b"4 876390176\n4 653723903\n";
const SAMPLE_OUTPUT: &str = "Game 1\nYOU LOSE NECESSARILY\nGame 2\nYOU WIN\n";

/// `referee dealer [OPTS] misbehave.sh MODE MOVES [ARG]`, on the sample.
fn misbehaving(opts: &[&str], mode_args: &[&str], input: &[u8]) -> common::Run {
    let script = fixture("misbehave.sh");
    let mut args = vec!["dealer"];
    args.extend_from_slice(opts);
    args.push(&script);
    args.extend_from_slice(mode_args);
    referee(args, input)
}

/// [`misbehaving`] on the sample, which must end with status `code` and
/// say `says`.
fn misbehaves(opts: &[&str], mode_args: &[&str], code: i32, says: &str) -> common::Run {
    let run = misbehaving(opts, mode_args, SAMPLE_INPUT);
    run.expect_stdout(code, says);
    run
}

fn assert_bounded(run: &common::Run, limit: Duration) {
    assert!(
        run.elapsed < limit,
        "took {:?}, expected well under {limit:?}",
        run.elapsed
    );
}

#[test]
fn statement_sample_dealer_output() {
    let run = referee(["dealer", evensteven_bin()], SAMPLE_INPUT);
    assert_eq!(run.stdout, SAMPLE_OUTPUT);
    assert_eq!(run.stderr, "");
    assert_eq!(run.code, Some(0));
}

#[test]
fn shipped_sample_file_reproduces_the_statement() {
    let input = std::fs::read(format!(
        "{}/tournaments/evensteven/sample.in",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let run = referee(["dealer", evensteven_bin()], &input);
    assert_eq!(run.stdout, SAMPLE_OUTPUT);
}

#[test]
fn statement_sample_player_lines() {
    // The statement's "Sample Input for Evensteven", fed to the player
    // directly, gives exactly its "Sample Output for Evensteven".
    let input = "4 4h 2d Qs Jc\n8c\nQc\n9s\nYOU LOSE\n4 Kd 8c As 5s\n3s\n6h\nKh\n5c\nYOU WIN\n";
    let output = output_with_input(&mut Command::new(evensteven_bin()), input.as_bytes());
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "Jc\nQs\n2d\n5s\n8c\nKd\nAs\n"
    );
}

#[test]
fn statement_sample_is_recorded() {
    let (_dir, results) = temp_path("results.jsonl");
    let results_arg = results.to_str().unwrap();
    let run = referee(
        ["dealer", "--results", results_arg, evensteven_bin()],
        SAMPLE_INPUT,
    );
    assert_eq!(run.code, Some(0));
    let records = common::jsonl(&results);
    assert_eq!(records.len(), 2);
    let one = &records[0];
    assert_eq!(one["game"], "evensteven");
    assert_eq!(one["index"], 1);
    assert_eq!(one["seed"], 876_390_176);
    assert_eq!(one["n"], 4);
    assert_eq!(one["hand"], serde_json::json!(["4h", "2d", "Qs", "Jc"]));
    let deal: Vec<String> = naive_deal(4, 876_390_176)
        .to_cover
        .into_iter()
        .map(|c| c.1)
        .collect();
    assert_eq!(&deal[..3], ["8c", "Qc", "9s"]);
    assert_eq!(one["deal"], serde_json::json!(deal));
    assert_eq!(one["outcome"], "lose_necessarily");
    assert_eq!(one["winnable"], false);
    let plays: Vec<String> = one["plays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert!(p["micros"].is_u64());
            format!(
                "{}>{}",
                p["played"].as_str().unwrap(),
                p["dealt"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(plays, ["Jc>8c", "Qs>Qc", "2d>9s"]);
    assert_eq!(records[1]["outcome"], "win");
    assert_eq!(records[1]["plays"].as_array().unwrap().len(), 4);

    // A second run appends.
    referee(
        ["dealer", "--results", results_arg, evensteven_bin()],
        b"1 5\n",
    );
    assert_eq!(
        std::fs::read_to_string(&results).unwrap().lines().count(),
        3
    );
}

#[test]
fn reference_player_debug_lines_are_relayed_in_order() {
    let run = referee(["dealer", evensteven_bin(), "debug"], SAMPLE_INPUT);
    assert_eq!(run.code, Some(0));
    assert_eq!(
        run.stdout,
        "Game 1\n\
         * read: 4 4h 2d Qs Jc\n\
         * read: 8c\n\
         * play: Jc covers 8c\n\
         * read: Qc\n\
         * play: Qs covers Qc\n\
         * read: 9s\n\
         * play: 2d cannot cover 9s\n\
         YOU LOSE NECESSARILY\n\
         Game 2\n\
         * read: YOU LOSE\n\
         * read: 4 Kd 8c As 5s\n\
         * read: 3s\n\
         * play: 5s covers 3s\n\
         * read: 6h\n\
         * play: 8c covers 6h\n\
         * read: Kh\n\
         * play: Kd covers Kh\n\
         * read: 5c\n\
         * play: As covers 5c\n\
         YOU WIN\n\
         * read: YOU WIN\n"
    );
}

#[test]
fn debug_lines_keep_their_place_around_moves() {
    // `* after K` is written after move K, so the dealer reads it when it
    // next listens: before move K+1, or while the player shuts down.
    let run = misbehaving(&[], &["chatty", "0"], SAMPLE_INPUT);
    assert_eq!(run.code, Some(0));
    assert_eq!(
        run.stdout,
        "Game 1\n* before 1\nYOU LOSE NECESSARILY\nGame 2\n* after 1\n* before 2\n\
         * after 2\n* before 3\n* after 3\n* before 4\n* after 4\n* before 5\nYOU WIN\n* after 5\n"
    );
}

/// A player's last debug lines are relayed even when it died before the
/// dealer could send it its hand: the dealer's write then fails, and the
/// lines still waiting in the pipe said why (tests/terminal.rs failed
/// now and then on this race; here the deal comes late, so the player has
/// always died first).
#[test]
fn a_players_last_debug_lines_are_relayed_when_it_dies_before_its_hand() {
    let marker = Marker::new();
    let player = fixture("terminal/debug.sh");
    let child = start(["dealer", player.as_str()], &marker);
    std::thread::sleep(Duration::from_millis(300));
    let run = finish(child, b"4 876390176\n");
    marker.assert_none_left();
    assert_eq!(run.code, Some(3), "{run:?}");
    let lines = run.stdout_lines();
    assert_eq!(lines.first(), Some(&"Game 1"), "{run:?}");
    assert!(
        lines.get(1).is_some_and(|l| l.starts_with("* look")),
        "{run:?}"
    );
    assert!(run.stdout.contains("program crashed"), "{run:?}");
}

#[test]
fn extra_arguments_go_to_the_player() {
    let run = misbehaving(&[], &["args", "0", "--timeout", "-x"], b"1 5\n");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout_lines()[1], "* args: args 0 --timeout -x");
}

/// Dealer input for `games` (`(N, seed)` pairs) and the output expected
/// when each game's verdict is `verdict(deal)`.
fn script(
    games: impl IntoIterator<Item = (usize, u32)>,
    verdict: impl Fn(&common::NaiveDeal) -> &'static str,
) -> (String, String) {
    let mut input = String::new();
    let mut expected = String::new();
    for (index, (n, seed)) in games.into_iter().enumerate() {
        input.push_str(&format!("{n} {seed}\n"));
        let verdict = verdict(&naive_deal(n, seed));
        expected.push_str(&format!("Game {}\n{verdict}\n", index + 1));
    }
    (input, expected)
}

#[test]
fn every_hand_size_with_the_reference_player() {
    let seeds = [1, 2, 1000, 65_535, 876_390_176, 2_147_483_646];
    let games = (1..=13).flat_map(|n| seeds.map(|seed| (n, seed)));
    let (input, expected) = script(games, common::NaiveDeal::optimal_verdict);
    let run = referee(["dealer", evensteven_bin()], input.as_bytes());
    assert_eq!(run.code, Some(0));
    assert_eq!(run.stdout, expected);
}

#[test]
fn a_bad_player_loses_unnecessarily() {
    let games = (1..=13).flat_map(|n| (1..=8).map(move |seed| (n, seed)));
    let (input, expected) = script(games, common::NaiveDeal::in_order_verdict);
    assert!(
        expected.matches("UNNECESSARILY").count() > 5,
        "the test input should exercise UNNECESSARILY"
    );
    let run = misbehaving(&[], &["play", "0"], input.as_bytes());
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, expected);
}

#[test]
fn random_games_are_never_lost_unnecessarily() {
    let mut rng = TestRng::new(20_261_121);
    let games: Vec<(usize, u32)> = (0..2_000)
        .map(|_| {
            let n = 1 + rng.below(13) as usize;
            (n, 1 + rng.below(2_147_483_646) as u32)
        })
        .collect();
    let (input, expected) = script(games, common::NaiveDeal::optimal_verdict);
    let run = referee(["dealer", evensteven_bin()], input.as_bytes());
    assert_eq!(run.code, Some(0));
    assert!(!run.stdout.contains("UNNECESSARILY"));
    assert_eq!(run.stdout, expected);
}

#[test]
fn blank_lines_and_crlf_in_dealer_input_are_fine() {
    let run = referee(
        ["dealer", evensteven_bin()],
        b"\n4 876390176\r\n   \n\t4   653723903  \n\n",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, SAMPLE_OUTPUT);
}

#[test]
fn a_last_line_without_newline_is_still_a_game() {
    let run = referee(["dealer", evensteven_bin()], b"4 876390176\n4 653723903");
    assert_eq!(run.stdout, SAMPLE_OUTPUT);
}

#[test]
fn bad_dealer_input_names_the_line() {
    for (line, what) in [
        ("0 5", "N must be"),
        ("14 5", "N must be"),
        ("4 0", "seed must be"),
        ("4 2147483647", "seed must be"),
        ("four 5", "N must be"),
        ("4 5x", "seed must be"),
        ("4 5 6", "expected `N seed`, found 3 fields"),
        ("4", "expected `N seed`, found only one field"),
    ] {
        let input = format!("1 5\n\n{line}\n4 876390176\n");
        let run = referee(["dealer", evensteven_bin()], input.as_bytes());
        assert_eq!(run.code, Some(64), "{line}: {run:?}");
        // The game before the bad line was played; nothing after it.
        assert_eq!(run.stdout_lines().len(), 2, "{line}: {run:?}");
        assert!(
            run.stderr
                .contains(&format!("standard input, line 3: {what}"))
                && run.stderr.contains(&format!("{line:?}")),
            "{line}: {}",
            run.stderr
        );
    }
}

#[test]
fn input_file_option_names_the_file_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    let games = write_file(dir.path(), "games.txt", "4 876390176\n4 x\n");
    let games = games.to_str().unwrap();
    let run = referee(["dealer", "--input", games, evensteven_bin()], b"");
    assert_eq!(run.code, Some(64));
    assert_has(&run.stderr, &format!("{games}, line 2: seed must be"));

    let run = referee(
        ["dealer", "--input", "/no/such/games", evensteven_bin()],
        b"",
    );
    assert_eq!(run.code, Some(64));
    assert_has(&run.stderr, "/no/such/games");
}

#[test]
fn every_bad_player_line_is_incorrect_output() {
    // Game 1 of the sample: hand 4h 2d Qs Jc, first dealt card 8c.
    for (says, shown) in [
        ("Zz\\n", "\"Zz\", which is not a card"),
        ("\\n", "\"\", which is not a card"),
        ("Jx\\n", "\"Jx\", which is not a card: unknown suit 'x'"),
        (
            "jc\\n",
            "\"jc\", which is not a card: unknown card value \"j\"",
        ),
        ("J c\\n", "\"J c\", which is not a card"),
        ("Jc Qs\\n", "\"Jc Qs\", which is not a card"),
        (
            "As\\n",
            "played As, which is not in its hand (it holds 4h 2d Qs Jc)",
        ),
    ] {
        let run = misbehaving(&["--timeout", "5s"], &["say", "0", says], SAMPLE_INPUT);
        assert_eq!(run.code, Some(2), "{says}: {run:?}");
        let last = run
            .stdout_lines()
            .last()
            .copied()
            .unwrap_or_default()
            .to_owned();
        assert!(
            last.starts_with("dealer: game 1, move 1 (dealt 8c): incorrect output: the player ")
                && last.contains(shown),
            "{says}: {last}"
        );
        assert_has(&run.stderr, &last["dealer: ".len()..]);
        assert_bounded(&run, Duration::from_secs(10));
    }
}

#[test]
fn a_card_played_twice_is_incorrect_output() {
    // Game 2, in order: Kd covers 3s (move 1); then Kd again on 6h.
    let run = misbehaving(&[], &["again", "2"], SAMPLE_INPUT);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(
        run.stdout_lines().last().unwrap(),
        &"dealer: game 2, move 2 (dealt 6h): incorrect output: the player played Kd again; it was already played on move 1"
    );
}

#[test]
fn crlf_and_trailing_spaces_are_accepted() {
    // Jc covers 8c; then the player hangs, which shows the move was taken.
    misbehaves(
        &["--timeout", "150ms"],
        &["say", "0", "Jc  \\r\\n"],
        3,
        "game 1, move 2 (dealt Qc): timeout: the player did not answer within 150ms",
    );
}

#[test]
fn invalid_utf8_is_incorrect_output() {
    misbehaves(&[], &["say", "0", "J\\xffc\\n"], 2, "not valid UTF-8");
}

#[test]
fn a_hung_player_is_a_crash_after_the_timeout() {
    let run = misbehaving(&["--timeout", "150ms"], &["hang", "1"], SAMPLE_INPUT);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_eq!(
        run.stdout,
        "Game 1\nYOU LOSE NECESSARILY\nGame 2\n\
         dealer: game 2, move 1 (dealt 3s): timeout: the player did not answer within 150ms\n"
    );
    assert!(run.elapsed >= Duration::from_millis(150));
    assert_bounded(&run, Duration::from_secs(5));
}

#[test]
fn a_player_that_never_reads_is_a_crash() {
    let run = misbehaves(
        &["--timeout", "150ms", "--startup", "0s"],
        &["deaf", "0"],
        3,
        "game 1, move 1 (dealt 8c): timeout: the player did not answer within 150ms",
    );
    assert_bounded(&run, Duration::from_secs(5));
}

#[test]
fn a_player_that_exits_early_is_a_crash() {
    let run = misbehaving(&[], &["exit", "1", "3"], SAMPLE_INPUT);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert!(run.stdout.ends_with(
        "dealer: game 2, move 1 (dealt 3s): program crashed: the player exited with status 3\n"
    ));
    assert_bounded(&run, Duration::from_secs(5));

    misbehaves(
        &[],
        &["exit", "0", "0"],
        3,
        "the player exited with status 0",
    );
}

#[test]
fn a_player_killed_by_a_signal_is_a_crash() {
    misbehaves(
        &[],
        &["segv", "1"],
        3,
        "the player was killed by signal 11 (SIGSEGV)",
    );
}

#[test]
fn a_player_that_closes_its_output_is_a_crash() {
    let run = misbehaves(
        &[],
        &["close", "0"],
        3,
        "the player closed its standard output but is still running",
    );
    assert_bounded(&run, Duration::from_secs(5));
}

#[test]
fn a_ten_megabyte_line_is_incorrect_output() {
    let run = misbehaves(
        &[],
        &["long", "0", "10000000"],
        2,
        "game 1, move 1 (dealt 8c): incorrect output: the player wrote a line longer than 65536 bytes",
    );
    assert_bounded(&run, Duration::from_secs(10));
}

#[test]
fn stderr_shows_in_messages_and_records_but_never_blocks() {
    let (_dir, results) = temp_path("r.jsonl");
    // 200 KB of stderr before every move: far more than a pipe holds.
    let run = misbehaving(
        &["--results", results.to_str().unwrap()],
        &["stderr", "0", "200000"],
        SAMPLE_INPUT,
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, SAMPLE_OUTPUT);
    let text = std::fs::read_to_string(&results).unwrap();
    for line in text.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let stderr = record["stderr"].as_str().unwrap();
        assert!(stderr.len() <= 64 * 1024 && stderr.len() > 1000);
        assert!(stderr.bytes().all(|b| b == b'e'));
        assert_eq!(record["stderr_truncated"], true);
    }
}

#[test]
fn a_crash_message_comes_with_the_last_stderr_lines() {
    let script = "#!/bin/sh\nread hand\nread card\necho 'Traceback: something broke' >&2\nexit 1\n";
    let dir = tempfile::tempdir().unwrap();
    let bot = write_file(dir.path(), "crash.sh", script);
    std::fs::set_permissions(&bot, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = referee(["dealer", bot.to_str().unwrap()], SAMPLE_INPUT);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_has(&run.stderr, "  | Traceback: something broke");
}

#[test]
fn a_player_that_does_not_exit_at_the_end_is_killed() {
    let run = misbehaving(&["--grace", "150ms"], &["linger", "0"], SAMPLE_INPUT);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert!(run.stdout.starts_with(SAMPLE_OUTPUT));
    assert!(
        run.stdout
            .contains("did not exit within 150ms after its input was closed; killed with SIGTERM"),
        "{run:?}"
    );
    assert_bounded(&run, Duration::from_secs(5));

    let run = misbehaves(
        &["--grace", "150ms"],
        &["stubborn", "0"],
        3,
        "killed with SIGKILL",
    );
    assert_bounded(&run, Duration::from_secs(5));
}

#[test]
fn programs_that_cannot_start_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let plain = write_file(dir.path(), "plain.txt", "not a program");
    let no_interp = write_file(dir.path(), "no-interp.sh", "#!/no/such/interpreter\n");
    std::fs::set_permissions(
        &no_interp,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let executable = |path: &std::path::Path| {
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap()
    };
    // Executable, but neither a script nor a program.
    let no_shebang = write_file(dir.path(), "no-shebang.py", "print('hello')\n");
    executable(&no_shebang);
    // A program built for a system with another loader: /bin/true whose
    // PT_INTERP names a loader this system lacks (as one built on Alpine).
    let other_loader = dir.path().join("other-loader");
    let mut elf = std::fs::read("/bin/true").unwrap();
    let at = elf
        .windows(3)
        .position(|w| w == b"ld-")
        .expect("/bin/true names its loader");
    elf[at..at + 3].copy_from_slice(b"lX-");
    std::fs::write(&other_loader, elf).unwrap();
    executable(&other_loader);
    let plain = plain.to_str().unwrap();
    let no_interp = no_interp.to_str().unwrap();
    let no_shebang = no_shebang.to_str().unwrap();
    let other_loader = other_loader.to_str().unwrap();
    let dir_arg = dir.path().to_str().unwrap();
    for (program, says) in [
        (
            "/no/such/player",
            "/no/such/player: no such file".to_string(),
        ),
        (
            "no-such-player-on-path",
            "\"no-such-player-on-path\": not found in the current directory or on PATH".into(),
        ),
        (plain, format!("{plain}: is not executable (mode 644)")),
        (dir_arg, format!("{dir_arg}: is a directory")),
        (
            no_interp,
            format!("{no_interp}: its interpreter \"/no/such/interpreter\""),
        ),
        (
            no_shebang,
            format!("{no_shebang}: not a program this system can run"),
        ),
        (
            other_loader,
            format!("{other_loader}: cannot be run: the system lacks its program loader"),
        ),
    ] {
        if program == no_shebang && binfmt_misc_in_use() {
            // A registered format might claim the file: then it is exec's.
            continue;
        }
        let run = referee(["dealer", program], SAMPLE_INPUT);
        assert_eq!(run.code, Some(64), "{program}: {run:?}");
        assert!(run.stderr.contains(&says), "{program}: {}", run.stderr);
        assert_eq!(run.stdout, "");
    }
}

/// An `exec` that fails after the checks (here: the program is open for
/// writing, as while a build still writes it) is told on the player's
/// standard error, and the player counts as crashed, not as a silent one.
#[test]
fn a_program_that_fails_to_exec_after_the_checks_says_why() {
    let (_dir, busy) = temp_path("busy-player");
    std::fs::copy("/bin/true", &busy).unwrap();
    let _writing = std::fs::OpenOptions::new().write(true).open(&busy).unwrap();
    let run = referee(["dealer", busy.to_str().unwrap()], SAMPLE_INPUT);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_has(&run.stderr, "exited with status 127");
    assert_has(
        &run.stderr,
        &format!(
            "referee: cannot start the bot: {}: cannot start: Text file busy",
            busy.display()
        ),
    );
}

/// Bots start through `referee-launch` beside the referee; a referee
/// copied on its own starts them through its own binary, and plays the
/// same.
#[test]
fn a_referee_without_referee_launch_beside_it_starts_bots_itself() {
    let (_dir, alone) = temp_path("referee");
    std::fs::copy(env!("CARGO_BIN_EXE_referee"), &alone).unwrap();
    assert!(
        std::path::Path::new(env!("CARGO_BIN_EXE_referee"))
            .with_file_name("referee-launch")
            .is_file()
    );
    for referee in [std::path::Path::new(env!("CARGO_BIN_EXE_referee")), &alone] {
        let run = output_with_input(
            Command::new(referee).args(["dealer", evensteven_bin()]),
            SAMPLE_INPUT,
        );
        assert!(run.status.success(), "{}: {run:?}", referee.display());
        assert_eq!(String::from_utf8_lossy(&run.stdout), SAMPLE_OUTPUT);
    }
}

fn binfmt_misc_in_use() -> bool {
    std::fs::read_dir("/proc/sys/fs/binfmt_misc").is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name() != "register" && e.file_name() != "status")
    })
}

#[test]
fn usage_errors_exit_64_and_help_exits_0() {
    let run = referee(["dealer"], b"");
    assert_eq!(run.code, Some(64));
    let run = referee(["dealer", "--timeout", "soon", evensteven_bin()], b"");
    assert_eq!(run.code, Some(64));
    assert_has(&run.stderr, "expected a duration");
    let run = referee(["dealer", "--help"], b"");
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.contains("Examples:") && run.stdout.contains("Exit status:"));
    let run = referee(["--help"], b"");
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.contains("dealer"));
}

#[test]
fn no_input_means_no_games() {
    // No verdict at all is not a pass (issue 12): a usage error.
    let run = referee(["dealer", evensteven_bin()], b"");
    assert_eq!(run.code, Some(64));
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("standard input has no games"),
        "{run:?}"
    );
}

/// Starts the dealer with a player that hangs on its first move and waits
/// until the game has started.
fn start_hanging(marker: &Marker) -> std::process::Child {
    let script = fixture("misbehave.sh");
    let mut child = start(["dealer", "--timeout", "60s", &script, "hang", "0"], marker);
    {
        use std::io::{BufRead, Write};
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(SAMPLE_INPUT).unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.as_mut().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert_eq!(line, "Game 1\n");
        child.stdin = Some(stdin);
    }
    // Let the player reach its `sleep`.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !marker.survivors().iter().any(|p| p.contains("sleep")) {
        assert!(
            std::time::Instant::now() < deadline,
            "the player never hung"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

#[test]
fn sigterm_and_sigint_kill_every_player_process() {
    for signal in [
        nix::sys::signal::Signal::SIGTERM,
        nix::sys::signal::Signal::SIGINT,
    ] {
        let marker = Marker::new();
        let child = start_hanging(&marker);
        common::signal(&child, signal);
        let run = finish(child, b"");
        assert_eq!(run.code, Some(130), "{signal}: {run:?}");
        assert_has(&run.stderr, &format!("interrupted by {signal}"));
        assert_bounded(&run, Duration::from_secs(5));
        marker.assert_none_left();
    }
}

#[test]
fn killing_the_referee_kills_its_player() {
    let marker = Marker::new();
    let child = start_hanging(&marker);
    signal(&child, nix::sys::signal::Signal::SIGKILL);
    let run = finish(child, b"");
    assert_eq!(run.code, None);
    // The player's `sleep` was exec'd by the script, so it is the process
    // the parent-death signal was set on.
    marker.assert_none_left();
}

#[test]
fn killing_the_referee_kills_its_players_children_too() {
    // The player leaves a background child in its group: the parent-death
    // signal reaches only the player itself; the watchdog gets the rest.
    let marker = Marker::new();
    let script = fixture("misbehave.sh");
    let mut child = start(
        ["dealer", "--timeout", "60s", &script, "family", "0"],
        &marker,
    );
    common::feed(&mut child, SAMPLE_INPUT);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while marker
        .survivors()
        .iter()
        .filter(|p| p.contains("sleep 1000"))
        .count()
        < 2
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the player never hung"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&child, nix::sys::signal::Signal::SIGKILL);
    finish(child, b"");
    marker.assert_none_left();
}

#[test]
fn a_player_that_leaves_its_group_is_still_killed() {
    let run = referee(
        [
            "dealer",
            "--timeout",
            "300ms",
            "--startup",
            "0s",
            &fixture("escape.py"),
        ],
        SAMPLE_INPUT,
    );
    run.expect_stdout(3, "did not answer within 300ms");
    assert_bounded(&run, Duration::from_secs(10));
}

#[test]
fn sigterm_works_while_the_output_is_blocked() {
    // Nobody reads the referee's output, and the player floods it with
    // debug lines: the referee is stuck writing, and must still obey.
    let marker = Marker::new();
    let script = fixture("misbehave.sh");
    let mut child = start(
        [
            "dealer",
            "--timeout",
            "60s",
            &script,
            "flood",
            "0",
            "100000000",
        ],
        &marker,
    );
    common::feed(&mut child, SAMPLE_INPUT);
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, nix::sys::signal::Signal::SIGTERM);
    let run = finish(child, b"");
    assert_eq!(run.code, Some(130), "{}", run.stderr);
    assert_bounded(&run, Duration::from_secs(5));
    marker.assert_none_left();
}

#[test]
fn a_long_last_line_at_the_end_does_not_blame_the_player() {
    let run = misbehaving(&[], &["bigtail", "0"], SAMPLE_INPUT);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, SAMPLE_OUTPUT);
}

#[test]
fn debug_lines_are_capped_per_game() {
    let run = misbehaving(
        &["--max-debug", "1000"],
        &["flood", "0", "500"],
        SAMPLE_INPUT,
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let flood = run.stdout.lines().filter(|l| *l == "* flood").count();
    // 1000 bytes of 8-byte lines per game, two games.
    assert_eq!(flood, 2 * 125);
    assert_eq!(
        run.stdout
            .matches("debug lines exceed the limit (--max-debug)")
            .count(),
        2
    );
    assert!(run.stdout.ends_with("YOU WIN\n"));
}

#[test]
fn stderr_is_recorded_with_the_game_it_belongs_to() {
    let (_dir, results) = temp_path("r.jsonl");
    let input = b"4 876390176\n4 653723903\n4 876390176\n4 653723903\n";
    let run = misbehaving(
        &["--results", results.to_str().unwrap()],
        &["tagged", "0"],
        input,
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let stderr: Vec<String> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| {
            let record: serde_json::Value = serde_json::from_str(l).unwrap();
            record["stderr"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        stderr,
        [
            "move 1\n",
            "move 2\nmove 3\nmove 4\nmove 5\n",
            "move 6\n",
            "move 7\nmove 8\nmove 9\nmove 10\n"
        ]
    );
}
