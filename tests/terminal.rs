//! What reaches the terminal from programs the referee does not trust: a
//! bot's standard error, a judge's (a validator's message: in
//! tests/interactive.rs). Each is shown escaped, as entrant names are:
//! before, `ESC ]0;PWNED BEL ESC [2J` retitled and cleared the user's
//! terminal and an OSC 8 link was live.

mod common;

use common::{Run, fixture, referee};

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
