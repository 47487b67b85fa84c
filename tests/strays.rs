//! What a bot leaves behind dies with the run, also without cgroups (a
//! referee run by someone who is not root, or with `--no-cgroups`): the
//! stray kill of `src/bot/groups.rs`.

mod common;

use common::{evensteven_bin, fixture, referee, temp_path, write_file};

/// Issue 39: without cgroups a two-level `setsid` tree (`sh` → its child)
/// outlived the run in about half the runs: the last stray kill took the
/// `sh`, and its child was handed to the referee after the last scan.
/// 20 runs, none may leave a process (`referee` checks, through the
/// marker every bot process carries).
#[test]
fn without_cgroups_a_setsid_tree_does_not_outlive_the_run() {
    let tree = fixture("zoo/setsid-tree.sh");
    for _ in 0..20 {
        let run = referee(
            ["--no-cgroups", "dealer", tree.as_str(), evensteven_bin()],
            b"4 876390176\n",
        );
        assert_eq!(run.code, Some(0), "{run:?}");
    }
}

/// [`common::CHOMPER`] that first leaves a process holding 64 MiB in its
/// private `/tmp`, sleeping. Under `--sandbox` that process dies with the
/// sandbox, and the sandbox's first process takes the moment the memory
/// takes to free to exit.
fn leaves_a_sleeper() -> String {
    let (shebang, play) = common::CHOMPER.split_once('\n').unwrap();
    format!(
        "{shebang}\nhead -c 64M /dev/zero > /tmp/fill\n\
         sleep 1000 < /dev/null > /dev/null 2>&1 &\n{play}"
    )
}

/// Issue 49: a `--sandbox` class of 200 printed 79 warnings `process N
/// (bwrap) left its bot's cgroup for / (a bot run as root without
/// --sandbox can): killed as a stray`. Bubblewrap's outer process (the
/// bot's leader) exits as soon as the program has, while the sandbox's
/// first process (its init) is still on its way out: handed to the
/// referee meanwhile, every sandbox's init was taken for a stray and
/// killed (`--log debug` said so once per bot), and one still exiting is
/// shown by cgroup v1 at the hierarchy's root. Such a process is now only
/// reaped (`reaping process N (bwrap) of an ended bot, already dying`).
/// A class of 12 whose bots each leave a process holding memory in their
/// sandbox, which the init waits for as it exits: no warning, no process
/// killed as a stray, every seat `ok`.
#[test]
fn under_the_sandbox_no_process_of_the_sandbox_is_killed_as_a_stray() {
    common::need_bwrap();
    let dir = tempfile::tempdir().unwrap();
    let class = dir.path();
    std::fs::create_dir(class.join("arrays")).unwrap();
    write_file(class, "arrays/small.txt", "ABC\nDEF\n");
    for i in 1..=12 {
        let student = class.join(format!("submissions/student{i:02}"));
        std::fs::create_dir_all(&student).unwrap();
        let pc2 = write_file(&student, "pc2", leaves_a_sleeper());
        std::fs::set_permissions(&pc2, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    write_file(
        class,
        "class.toml",
        "game = \"chomp\"\ngames = 12\nseed = 2026\njobs = 2\n\
         [limits]\narrays = \"arrays\"\nseats = 3\nprep = \"0s\"\nstarve = \"5s\"\n\
         [[entrant]]\nglob = \"submissions/*/\"\n",
    );
    let out = class.join("out");
    let run = common::tournament(&[
        "--sandbox",
        "--log",
        "debug",
        class.join("class.toml").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let said = |what: &str| {
        run.stderr
            .lines()
            .filter(|line| line.contains(what))
            .collect::<Vec<_>>()
    };
    assert_eq!(said("left its bot's cgroup"), Vec::<&str>::new());
    assert_eq!(said("left behind by a bot"), Vec::<&str>::new());
    let records = common::jsonl(&out.join("records.jsonl"));
    assert_eq!(records.len(), 12);
    for record in &records {
        for seat in record["players"].as_array().unwrap() {
            assert_eq!(seat["status"], "ok", "{record}");
        }
    }
}

/// A process that names itself as the sandbox's own (`bwrap`) is no less
/// a stray for it: left behind in a session of its own by a bot run
/// without `--sandbox` (and without cgroups, so that only the stray kill
/// can take it), it is killed, and the log names it.
#[test]
fn a_stray_named_bwrap_is_killed_as_a_stray() {
    let (_dir, impostor) = temp_path("bwrap");
    std::os::unix::fs::symlink("/bin/sleep", &impostor).unwrap();
    let bot = fixture("bwrap-impostor.sh");
    let run = referee(
        [
            "--log",
            "debug",
            "--no-cgroups",
            "dealer",
            bot.as_str(),
            impostor.to_str().unwrap(),
            evensteven_bin(),
        ],
        b"4 876390176\n",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let killed = common::lines_holding(&run.stderr, "(bwrap) left behind by a bot");
    assert_eq!(killed.len(), 1, "{}", run.stderr);
}
