//! The environment of bots and builds (docs/bots.md, "Environment"): the
//! same short one whoever runs the referee, plus what `--env`, a file's
//! `env` table and an entrant's add; judges keep the referee's.
//!
//! Bots here write the environment they started with to a file
//! (`tests/fixtures/environment/envdump.sh`) and then play Even Steven.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use common::{
    Marker, Run, assert_has, assert_lacks, evensteven_bin, fixture, temp_path, write_file,
};

/// One game of Even Steven.
const GAME: &[u8] = b"4 876390176\n";

/// Variables the test puts in the referee's environment, which no bot may
/// see unless asked for.
const NOISE: [(&str, &str); 3] = [
    ("PYTHONUNBUFFERED", "1"),
    ("REFEREE_ENV_SECRET", "hunter2"),
    ("CLASSPATH", "/teacher/classes"),
];

/// `referee ARGS` with `set` added to and `remove` taken from the test's
/// own environment; checks that nothing is left running.
fn referee_env(args: &[&str], input: &[u8], set: &[(&str, &str)], remove: &[&str]) -> Run {
    let marker = Marker::new();
    let mut cmd = common::command(args, &marker);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in set {
        cmd.env(key, value);
    }
    for key in remove {
        cmd.env_remove(key);
    }
    let run = common::finish(cmd.spawn().expect("start referee"), input);
    marker.assert_none_left();
    run
}

/// The environment a bot wrote with envdump.sh, without the test's marker.
fn dumped(file: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}: the bot never ran", file.display()));
    text.lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| *k != "REFEREE_TEST_MARKER")
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// The command that dumps its environment to `out` and becomes `program`.
fn envdump_then(out: &Path, program: &str) -> [String; 3] {
    [
        fixture("environment/envdump.sh"),
        out.to_str().unwrap().to_owned(),
        program.to_owned(),
    ]
}

/// The command that dumps its environment to `out` and plays Even Steven.
fn envdump(out: &Path) -> [String; 3] {
    envdump_then(out, evensteven_bin())
}

/// Fails when a variable of [`NOISE`] reached `env`, `whose` it is.
fn assert_no_noise(env: &BTreeMap<String, String>, whose: &str) {
    for (noise, _) in NOISE {
        assert!(
            !env.contains_key(noise),
            "{noise} reached {whose}: {env:#?}"
        );
    }
}

/// `words` as the inside of a TOML array of strings.
fn toml_list(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("{w:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn names(env: &BTreeMap<String, String>) -> Vec<&str> {
    env.keys().map(String::as_str).collect()
}

// ------------------------------------------------------------ the verdict

/// The quoted failure: a Python bot that never flushes passed when the
/// teacher's shell had PYTHONUNBUFFERED=1, and starved without it. Now it
/// starves both ways, and passes when the run asks for it with --env.
#[test]
fn an_unflushed_python_bot_gets_the_same_verdict_whatever_the_shell_has() {
    let bot = fixture("environment/unflushed.py");
    let args = |extra: &'static [&'static str]| {
        let mut args = vec![
            "dealer",
            "--timeout",
            "1s",
            "--startup",
            "2s",
            "--grace",
            "200ms",
        ];
        args.extend(extra);
        args.push(bot.as_str());
        args
    };
    let with = std::thread::scope(|s| {
        let with = s.spawn(|| referee_env(&args(&[]), GAME, &[("PYTHONUNBUFFERED", "1")], &[]));
        let without = referee_env(&args(&[]), GAME, &[], &["PYTHONUNBUFFERED"]);
        assert_eq!(without.code, Some(3), "{without:?}");
        with.join().unwrap()
    });
    assert_eq!(
        with.code,
        Some(3),
        "PYTHONUNBUFFERED=1 of the referee's shell reached the bot: {with:?}"
    );
    assert_has(&with.stderr, "did not answer");

    let asked = referee_env(
        &args(&["--env", "PYTHONUNBUFFERED=1"]),
        GAME,
        &[],
        &["PYTHONUNBUFFERED"],
    );
    assert_eq!(asked.code, Some(0), "{asked:?}");
    assert_eq!(asked.stdout, "Game 1\nYOU LOSE NECESSARILY\n");
}

// ------------------------------------------------------------ what a bot sees

#[test]
fn a_bot_sees_only_path_home_the_locale_tmpdir_and_what_env_adds() {
    let (dir, out) = temp_path("env");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let command = envdump(&out);
    let mut args = vec!["dealer"];
    args.extend([
        "--env",
        "GIVEN=a=b c",
        "--env",
        "PASSED",
        "--env",
        "NOT_SET_ANYWHERE",
        "--env",
        "LANG=overridden",
    ]);
    args.extend(command.iter().map(String::as_str));
    let mut set = NOISE.to_vec();
    set.extend([
        ("PASSED", "from the shell"),
        ("LANG", "C.UTF-8"),
        ("LANGUAGE", "en"),
        ("LC_TIME", "C"),
        ("TMPDIR", tmp.to_str().unwrap()),
    ]);
    let run = referee_env(&args, GAME, &set, &["NOT_SET_ANYWHERE", "LC_ALL"]);
    assert_eq!(run.code, Some(0), "{run:?}");

    let env = dumped(&out);
    assert_eq!(
        names(&env),
        [
            "GIVEN", "HOME", "LANG", "LANGUAGE", "LC_TIME", "PASSED", "PATH", "TMPDIR"
        ],
        "{env:#?}"
    );
    assert_eq!(env["PATH"], std::env::var("PATH").unwrap());
    assert_eq!(env["HOME"], std::env::var("HOME").unwrap());
    assert_eq!(env["LANGUAGE"], "en");
    assert_eq!(env["LC_TIME"], "C");
    assert_eq!(env["TMPDIR"], tmp.to_str().unwrap());
    assert_eq!(env["GIVEN"], "a=b c");
    assert_eq!(env["PASSED"], "from the shell");
    // --env comes after what is passed through, so it may replace it.
    assert_eq!(env["LANG"], "overridden");
}

#[test]
fn a_bot_without_tmpdir_in_the_shell_gets_tmp() {
    let (_dir, out) = temp_path("env");
    let mut args = vec!["dealer"];
    let command = envdump(&out);
    args.extend(command.iter().map(String::as_str));
    let run = referee_env(&args, GAME, &[], &["TMPDIR"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(dumped(&out)["TMPDIR"], "/tmp");
}

#[test]
fn a_sandboxed_bot_gets_its_private_tmp() {
    common::need_bwrap();
    let dir = tempfile::tempdir().unwrap();
    // The referee's own temporary directory is hidden in the sandbox: a
    // bot sent there could not write.
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // What it sees goes to its standard error, which --show-stderr copies:
    // a sandboxed bot cannot write outside its own folder.
    let script = executable(
        dir.path(),
        "bot.sh",
        &format!(
            "#!/bin/sh\necho \"TMPDIR=$TMPDIR\" >&2\ntouch \"$TMPDIR/x\" || echo UNWRITABLE >&2\nexec {}\n",
            evensteven_bin()
        ),
    );
    let run = referee_env(
        &["dealer", "--sandbox", "--show-stderr", &script],
        GAME,
        &[("TMPDIR", tmp.to_str().unwrap())],
        &[],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stderr, "TMPDIR=/tmp\n");
    assert_lacks(&run.stderr, "UNWRITABLE");
}

/// Writes an executable `dir/name` holding `text`; its path.
fn executable(dir: &Path, name: &str, text: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = write_file(dir, name, text);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_owned()
}

// ------------------------------------------------------------ files

#[test]
fn a_tournaments_env_tables_reach_its_entrants_and_builds_the_most_specific_winning() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.env"), dir.path().join("b.env"));
    // Entrant b has a folder whose build records its environment.
    let folder = dir.path().join("b");
    std::fs::create_dir(&folder).unwrap();
    write_file(
        &folder,
        "Makefile",
        "all:\n\ttr '\\0' '\\n' </proc/$$PPID/environ >../build.env\n",
    );
    let file = dir.path().join("t.toml");
    std::fs::write(
        &file,
        format!(
            "game = \"evensteven\"\ngames = 1\nseed = 1\n\
             env = {{ FROM_FILE = \"file\", LAYER = \"file\", THREADS = 1 }}\n\
             [[entrant]]\nname = \"a\"\ncommand = [{}]\nenv = {{ LAYER = \"entrant a\" }}\n\
             [[entrant]]\nname = \"b\"\ndir = \"b\"\ncommand = [{}]\n",
            toml_list(&envdump(&a)),
            toml_list(&envdump(&b)),
        ),
    )
    .unwrap();
    let run = referee_env(
        &[
            "tournament",
            "--no-progress",
            "--env",
            "LAYER=command line",
            "--env",
            "FROM_CLI=cli",
            file.to_str().unwrap(),
        ],
        b"",
        &NOISE,
        &[],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let (a, b) = (dumped(&a), dumped(&b));
    assert_eq!(a["LAYER"], "entrant a", "{a:#?}");
    assert_eq!(b["LAYER"], "file", "{b:#?}");
    for env in [&a, &b] {
        assert_eq!(env["FROM_FILE"], "file");
        assert_eq!(env["FROM_CLI"], "cli");
        assert_eq!(env["THREADS"], "1");
        assert_no_noise(env, "a bot");
    }
    // The build (make's environment) has the command line's and the file's,
    // and none of the shell's.
    let build = dumped(&dir.path().join("build.env"));
    assert_eq!(build["LAYER"], "file", "{build:#?}");
    assert_eq!(build["FROM_CLI"], "cli");
    assert_no_noise(&build, "the build");
}

#[test]
fn a_ci_suites_env_tables_reach_its_bots() {
    let dir = tempfile::tempdir().unwrap();
    let (bot, opponent) = (dir.path().join("bot.env"), dir.path().join("opp.env"));
    let file = write_file(
        dir.path(),
        "ci.toml",
        format!(
            "env = {{ SUITE = \"suite\", LAYER = \"suite\" }}\n\
             [[case]]\nname = \"plays\"\ngame = \"evensteven\"\ngames = 1\n\
             command = [{}]\nenv = {{ LAYER = \"case\" }}\n\
             [[case]]\nname = \"opposed\"\ngame = \"chomp\"\ngames = 1\n\
             command = [\"{}\"]\n\
             limits = {{ prep = \"0s\", arrays = \"{}/tournaments/chomp/statement.txt\" }}\n\
             [[case.opponents]]\nname = \"o\"\ncommand = [{}]\nenv = {{ LAYER = \"opponent\" }}\n",
            toml_list(&envdump(&bot)),
            env!("CARGO_BIN_EXE_chomp-greedy"),
            env!("CARGO_MANIFEST_DIR"),
            toml_list(&envdump_then(&opponent, env!("CARGO_BIN_EXE_chomp-greedy"))),
        ),
    );
    let run = referee_env(
        &["ci", "--env", "FROM_CLI=cli", file.to_str().unwrap()],
        b"",
        &NOISE,
        &[],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let (bot, opponent) = (dumped(&bot), dumped(&opponent));
    assert_eq!(bot["LAYER"], "case", "{bot:#?}");
    assert_eq!(opponent["LAYER"], "opponent", "{opponent:#?}");
    for env in [&bot, &opponent] {
        assert_eq!(env["SUITE"], "suite");
        assert_eq!(env["FROM_CLI"], "cli");
        assert_no_noise(env, "a bot");
    }
}

// ------------------------------------------------------------ the organiser's programs

#[test]
fn a_judge_keeps_the_referees_environment() {
    let dir = tempfile::tempdir().unwrap();
    let (judge_env, bot_env) = (dir.path().join("judge.env"), dir.path().join("bot.env"));
    let game = write_file(
        dir.path(),
        "game.toml",
        format!(
            "name = \"evensteven\"\njudge = [{:?}, {:?}, \"python3\", \"{}/games/evensteven/judge.py\"]\n\
             players = {{ min = 1, max = 1 }}\nread = \"line\"\n",
            fixture("environment/envdump.sh"),
            judge_env.to_str().unwrap(),
            env!("CARGO_MANIFEST_DIR"),
        ),
    );
    let bot = executable(
        dir.path(),
        "bot.sh",
        &format!(
            "#!/bin/sh\nexec {} {:?} {}\n",
            fixture("environment/envdump.sh"),
            bot_env.to_str().unwrap(),
            evensteven_bin()
        ),
    );
    let run = referee_env(
        &["play", "--env", "FOR_BOTS=1", game.to_str().unwrap(), &bot],
        b"",
        &NOISE,
        &[],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let (judge, bot) = (dumped(&judge_env), dumped(&bot_env));
    for (noise, value) in NOISE {
        assert_eq!(
            judge.get(noise).map(String::as_str),
            Some(value),
            "{judge:#?}"
        );
        assert!(!bot.contains_key(noise), "{bot:#?}");
    }
    // --env is for bots: the judge has the referee's environment as it is.
    assert!(!judge.contains_key("FOR_BOTS"), "{judge:#?}");
    assert_eq!(bot["FOR_BOTS"], "1");
}

// ------------------------------------------------------------ mistakes

#[test]
fn a_bad_env_option_is_a_usage_error_naming_it() {
    for bad in ["", "=1", "=", "=VALUE"] {
        let run = referee_env(&["dealer", "--env", bad, "true"], GAME, &[], &[]);
        assert_eq!(run.code, Some(64), "--env {bad:?}: {run:?}");
        assert_has(&run.stderr, "--env");
        assert_has(&run.stderr, &format!("'{bad}'"));
    }
}

#[test]
fn a_bad_env_table_is_named_with_its_file_and_line() {
    let (_dir, file) = temp_path("t.toml");
    let cases = [
        ("env = { \"\" = \"x\" }\n", "line 3", "empty"),
        ("env = { \"A=B\" = \"x\" }\n", "line 3", "\"A=B\""),
        ("env = { A = true }\n", "line 3", "a string"),
        ("env = { A = \"nul\\u0000\" }\n", "line 3", "NUL"),
        (
            "[[entrant]]\nname = \"x\"\ncommand = [\"true\"]\nenv = { \"\" = \"1\" }\n",
            "line 6",
            "empty",
        ),
    ];
    for (table, line, what) in cases {
        std::fs::write(
            &file,
            format!(
                "game = \"evensteven\"\ngames = 1\n{table}[[entrant]]\nname = \"a\"\ncommand = [\"true\"]\n"
            ),
        )
        .unwrap();
        let run = referee_env(
            &["tournament", "--no-progress", file.to_str().unwrap()],
            b"",
            &[],
            &[],
        );
        assert_eq!(run.code, Some(64), "{table}: {run:?}");
        assert!(
            run.stderr.contains(file.to_str().unwrap()),
            "{table}: {}",
            run.stderr
        );
        assert!(run.stderr.contains(line), "{table}: {}", run.stderr);
        assert!(run.stderr.contains(what), "{table}: {}", run.stderr);
    }
}
