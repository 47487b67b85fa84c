//! A tournament's runs as the tests start and check them: their
//! arguments, shards merged into one, and `referee ci`'s verdict lines.

use std::path::Path;

use super::{Run, referee};

/// The arguments of `referee tournament --no-progress OPTIONS FILE --out
/// OUT`.
pub fn tournament_args<'a>(file: &'a str, out: &'a Path, options: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["tournament", "--no-progress"];
    all.extend_from_slice(options);
    all.extend([file, "--out", out.to_str().unwrap()]);
    all
}

/// `DIR/c.toml`: a Chomp tournament of `games` games, seed 5, at tables
/// of two on `arrays` (a file or a folder of them), between `entrants`
/// (its name, its program). Its path.
pub fn chomp_file(dir: &Path, games: u64, arrays: &str, entrants: &[(&str, &str)]) -> String {
    let mut text = format!(
        "game = \"chomp\"\ngames = {games}\nseed = 5\n[limits]\nprep = \"0s\"\narrays = \"{arrays}\"\nseats = 2\n"
    );
    for (name, program) in entrants {
        text.push_str(&format!(
            "[[entrant]]\nname = \"{name}\"\ncommand = [\"{program}\"]\n"
        ));
    }
    let path = super::write_file(dir, "c.toml", text);
    path.to_str().unwrap().to_owned()
}

/// The `--out` folders `PREFIX1` to `PREFIXcount` of a run's shards.
pub fn shard_outs(prefix: &Path, count: usize) -> Vec<String> {
    (1..=count)
        .map(|k| format!("{}{k}", prefix.display()))
        .collect()
}

/// What GNU parallel is given after the referee's path to play the
/// `count` shards of `file` at once, as docs/tournaments.md says, into
/// [`shard_outs`]`(prefix, count)`.
pub fn parallel_shards(file: &str, prefix: &Path, count: usize) -> Vec<String> {
    let mut args: Vec<String> = [
        "tournament",
        "--no-progress",
        file,
        "--shard",
        &format!("{{}}/{count}"),
        "--out",
        &format!("{}{{}}", prefix.display()),
        ":::",
    ]
    .map(str::to_owned)
    .into();
    args.extend((1..=count).map(|k| k.to_string()));
    args
}

/// `referee merge OUTS... --out MERGED`, which must succeed.
#[track_caller]
pub fn merge(outs: &[String], merged: &Path) -> Run {
    let mut args = vec!["merge"];
    args.extend(outs.iter().map(String::as_str));
    args.extend(["--out", merged.to_str().unwrap()]);
    let run = referee(args, b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    run
}

/// Fails the test unless each line of `stdout`, from the first, starts as
/// its `(start, parts)` says and holds each of its parts: `referee ci`'s
/// verdict of each case, in order.
#[track_caller]
pub fn assert_verdicts(stdout: &str, verdicts: &[(&str, &[&str])]) {
    let lines: Vec<&str> = stdout.lines().collect();
    for (i, (start, parts)) in verdicts.iter().enumerate() {
        let line = lines.get(i).copied().unwrap_or_default();
        assert!(line.starts_with(start), "{stdout}");
        for part in *parts {
            assert!(line.contains(part), "{part} in {line}\n{stdout}");
        }
    }
}
