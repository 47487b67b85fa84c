//! What reaches the terminal from programs the referee does not trust: a
//! bot's standard error, a judge's (a validator's message: in
//! tests/interactive.rs). Each is shown escaped, as entrant names are:
//! before, `ESC ]0;PWNED BEL ESC [2J` retitled and cleared the user's
//! terminal and an OSC 8 link was live.

mod common;

use common::{Run, fixture, referee, write_file};

fn terminal(name: &str) -> String {
    fixture(&format!("terminal/{name}"))
}

/// Fails if `run` let a control character through, and unless it showed
/// the escaped `shown`.
fn assert_escaped(run: &Run, shown: &str) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            !text.contains(['\u{1b}', '\u{7}']),
            "a control character reached {stream}: {run:?}"
        );
    }
    assert!(
        run.stdout.contains(shown) || run.stderr.contains(shown),
        "expected {shown:?} in {run:?}"
    );
}

#[test]
fn a_bots_standard_error_reaches_the_terminal_escaped() {
    let noisy = terminal("noisy.sh");
    for game in ["dealer", "septica"] {
        let run = referee([game, noisy.as_str()], b"4 876390176\n");
        assert_eq!(run.code, Some(3), "{run:?}");
        assert_escaped(
            &run,
            r"  | boom \x1b]0;PWNED\x07\x1b[2J \x1b]8;;http://evil.example/",
        );
    }
    let run = referee(["acesup", "--random", "1", noisy.as_str(), "read"], b"");
    assert_escaped(&run, r"  | boom \x1b]0;PWNED\x07\x1b[2J");
}

#[test]
fn a_judges_standard_error_reaches_the_terminal_escaped() {
    let evensteven = common::evensteven_bin();
    let run = referee(
        ["play", "--games", "1", &terminal("noisy.toml"), evensteven],
        b"",
    );
    assert_eq!(run.code, Some(70), "{run:?}");
    assert_escaped(&run, r"  | judge \x1b]0;PWNED\x07\x1b[2J");
}

/// The debug line tests/fixtures/terminal/debug.sh writes, as it wrote it
/// and as a terminal is shown it.
const DEBUG_LINE: &str = "* look \u{1b}]0;PWNED\u{7}\u{1b}[2J \u{1b}]8;;http://evil.example/\u{1b}\\link\u{1b}]8;;\u{1b}\\\n";
const DEBUG_SHOWN: &str =
    r"* look \x1b]0;PWNED\x07\x1b[2J \x1b]8;;http://evil.example/\x1b\link\x1b]8;;\x1b\";
/// What it writes to its standard error, as written and as shown.
const STDERR_LINE: &str = "boom \u{1b}]0;PWNED\u{7}\u{1b}[2J\n";
const STDERR_SHOWN: &str = r"boom \x1b]0;PWNED\x07\x1b[2J";

/// `word` quoted for the shell.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Runs the shell command line `line` on a terminal of its own (a
/// pseudo-terminal, through util-linux's `script`), with the marker of
/// [`common::Marker`] in its environment; what reached the terminal, its
/// line ends as the program wrote them.
fn on_a_terminal(line: &str) -> String {
    let marker = common::Marker::new();
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec", line, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    marker.apply(&mut cmd);
    let run = common::finish(
        cmd.spawn().expect("this test needs util-linux's `script`"),
        b"",
    );
    marker.assert_none_left();
    assert!(run.stderr.is_empty(), "{run:?}");
    run.stdout.replace("\r\n", "\n")
}

/// `referee dealer --show-stderr debug.sh`, for a shell command line: its
/// input from `input` (a file), then `redirect`.
fn dealer_line(input: &std::path::Path, redirect: &str) -> String {
    let mut words = vec![common::referee_bin().to_owned()];
    words.extend(common::MARKER_ENV.map(str::to_owned));
    words.extend([
        "dealer".into(),
        "--show-stderr".into(),
        terminal("debug.sh"),
    ]);
    let words: Vec<String> = words.iter().map(|w| quote(w)).collect();
    format!(
        "{} <{} {redirect}",
        words.join(" "),
        quote(input.to_str().unwrap())
    )
}

/// Fails unless `shown` (what reached a terminal) holds no control
/// character, and holds `line` as a line of its own.
fn assert_shown(shown: &str, line: &str) {
    assert!(
        !shown.contains(['\u{1b}', '\u{7}']),
        "a control character reached the terminal: {shown:?}"
    );
    assert!(shown.lines().any(|l| l == line), "no {line:?} in {shown:?}");
}

/// A bot's debug lines (`*`, copied to the dealer's output) and, with
/// --show-stderr, its standard error reach a terminal escaped (issue 39,
/// failure 10: ESC and BEL bytes reached it): during a game, and after
/// the last one, as the bot shuts down.
#[test]
fn debug_lines_and_shown_stderr_reach_a_terminal_escaped() {
    let dir = tempfile::tempdir().unwrap();
    for input in ["4 876390176\n", ""] {
        let file = write_file(dir.path(), "input", input);
        let shown = on_a_terminal(&dealer_line(&file, ""));
        assert_shown(&shown, DEBUG_SHOWN);
        assert_shown(&shown, STDERR_SHOWN);
    }
}

/// To a file or a pipe, debug lines and the bot's standard error stay
/// byte for byte, each stream decided on its own.
#[test]
fn debug_lines_and_shown_stderr_stay_byte_for_byte_elsewhere() {
    let run = referee(
        ["dealer", "--show-stderr", terminal("debug.sh").as_str()],
        b"4 876390176\n",
    );
    assert_eq!(run.code, Some(3), "{run:?}");
    assert!(run.stdout.contains(DEBUG_LINE), "{run:?}");
    assert!(run.stderr.contains(STDERR_LINE), "{run:?}");
    let dir = tempfile::tempdir().unwrap();
    let (input, out, err) = (
        dir.path().join("input"),
        dir.path().join("out"),
        dir.path().join("err"),
    );
    std::fs::write(&input, "4 876390176\n").unwrap();
    let redirect = format!("2>{}", quote(err.to_str().unwrap()));
    let shown = on_a_terminal(&dealer_line(&input, &redirect));
    assert_shown(&shown, DEBUG_SHOWN);
    let err = std::fs::read_to_string(&err).unwrap();
    assert!(err.contains(STDERR_LINE), "{err:?}");
    let redirect = format!(">{}", quote(out.to_str().unwrap()));
    let shown = on_a_terminal(&dealer_line(&input, &redirect));
    assert_shown(&shown, STDERR_SHOWN);
    let out = std::fs::read_to_string(&out).unwrap();
    assert!(out.contains(DEBUG_LINE), "{out:?}");
}
