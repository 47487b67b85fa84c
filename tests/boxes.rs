//! Issue 49: a bot never runs as the organiser. Run by root (as CI and
//! these tests are), a sandboxed bot was uid 0: it read `/etc/shadow`,
//! listed `/var/tmp` and `/home`, and connected to a PostgreSQL server's
//! socket in a folder the sandbox showed. Now it is a uid of its own and
//! sees an allow-list; `--unprivileged` gives the uid without the sandbox.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_has, assert_lacks, fixture, need_bwrap, write_file};

/// Whether this test runs as root: what is tested here is root's.
fn root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A class folder outside /tmp with one entrant whose `pc2` is the probe,
/// and a unix socket listening in a folder of its own (as a database's).
struct Class {
    _root: tempfile::TempDir,
    class: PathBuf,
    socket: PathBuf,
    _listener: std::os::unix::net::UnixListener,
}

fn class() -> Class {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // Open to the bots' uids, as a class folder is (a temporary one is not).
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let class = root.path().join("class");
    let alice = class.join("subs/alice");
    std::fs::create_dir_all(&alice).unwrap();
    std::fs::copy(fixture("box-probe.sh"), alice.join("pc2")).unwrap();
    write_file(
        &class,
        "t.toml",
        "game = \"evensteven\"\ngames = 2\nseed = 1\n\
         [[entrant]]\nname = \"alice\"\ndir = \"subs/alice\"\n",
    );
    let sockets = root.path().join("sockets");
    std::fs::create_dir(&sockets).unwrap();
    let socket = sockets.join(".s.PGSQL.5432");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    Class {
        _root: root,
        class,
        socket,
        _listener: listener,
    }
}

/// What the probe said in the run's first game.
fn probed(class: &Class, options: &[&str], sockets: &[&Path], env: &[(&str, &str)]) -> String {
    let sockets: Vec<&str> = sockets.iter().map(|p| p.to_str().unwrap()).collect();
    let out = class.class.join(format!("out-{}", options.join("")));
    let mut args = vec!["tournament", "--no-progress", "t.toml", "--out"];
    args.push(out.to_str().unwrap());
    args.extend(options);
    let vars = common::env_args(&[
        ("EVENSTEVEN", common::evensteven_bin()),
        ("SOCKETS", &sockets.join(":")),
    ]);
    args.extend(vars.iter().map(String::as_str));
    let run = common::referee_with(args, b"", env, Some(&class.class));
    assert_eq!(run.code, Some(0), "{run:?}");
    std::fs::read_to_string(out.join("stderr/alice.log")).unwrap()
}

fn uid_of(said: &str) -> u32 {
    let line = said.lines().find(|l| l.starts_with("uid: ")).unwrap();
    line["uid: ".len()..].trim().parse().unwrap()
}

/// Failure 1: without the sandbox, run by root, the probe is root and
/// reaches all (so it can tell); under it, it is a uid of 60000-60999,
/// reads no `/etc/shadow`, cannot list `/home`, `/var/tmp` or `/run`, and
/// cannot connect to a socket anywhere on the host.
#[test]
fn a_sandboxed_bot_run_by_root_is_a_user_of_its_own_and_sees_an_allow_list() {
    if !root() {
        eprintln!("not root: bots run as the referee's user, which is not root");
        return;
    }
    need_bwrap();
    let class = class();
    let said = probed(&class, &[], &[&class.socket], &[]);
    assert_eq!(uid_of(&said), 0, "{said}");
    assert_has(&said, "shadow: yes");
    assert_has(&said, "listed /var/tmp");
    assert_has(&said, ": yes");

    let said = probed(&class, &["--sandbox"], &[&class.socket], &[]);
    assert!((60000..=60999).contains(&uid_of(&said)), "{said}");
    assert_has(&said, "user: bot\n");
    assert_eq!(etc_of(&said), allowed_etc(&[]), "{said}");
    assert_has(&said, "ssl: absent");
    assert_has(&said, "shadow: no");
    assert_lacks(&said, "listed");
    assert_has(&said, &format!("socket {}: no", class.socket.display()));
    assert_lacks(&said, ": yes");
}

/// What the probe's `/etc` held.
fn etc_of(said: &str) -> Vec<String> {
    let line = said.lines().find(|l| l.starts_with("etc:")).unwrap();
    line["etc:".len()..]
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// The `/etc` a sandbox shows (of the listed entries, those this host
/// has), with `more`.
fn allowed_etc(more: &[&str]) -> Vec<String> {
    let listed = [
        "alternatives",
        "ld.so.cache",
        "ld.so.conf",
        "ld.so.conf.d",
        "localtime",
    ];
    let mut etc: Vec<String> = std::fs::read_dir("/etc")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| listed.contains(&n.as_str()) || n.starts_with("java-"))
        .chain(["passwd", "group"].map(str::to_owned))
        .chain(more.iter().map(|m| m.to_string()))
        .collect();
    etc.sort();
    etc
}

/// The sandbox's `/etc` is one folder of the run's (a mount for each
/// entry cost a game a tenth of its time): a folder the organiser shows
/// inside it (`--sandbox-show /etc/ssl`) is there all the same, and
/// nothing else of the host's `/etc` is. The run removes its copies.
#[test]
fn a_folder_shown_inside_etc_is_there_beside_the_listed_entries() {
    if !Path::new("/etc/ssl/certs").is_dir() {
        eprintln!("this host has no /etc/ssl/certs");
        return;
    }
    need_bwrap();
    let class = class();
    let temp = tempfile::tempdir().unwrap();
    let env = [("TMPDIR", temp.path().to_str().unwrap())];
    let said = probed(
        &class,
        &["--sandbox", "--sandbox-show", "/etc/ssl"],
        &[],
        &env,
    );
    assert_has(&said, "ssl: shown");
    assert_eq!(etc_of(&said), allowed_etc(&["ssl"]), "{said}");
    // The run's copies went with it.
    let left: Vec<_> = std::fs::read_dir(temp.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Failure 2's first step: a PostgreSQL server's socket in a folder the
/// old sandbox showed (as the project's own tests set one up, with trust
/// authentication). A sandboxed bot cannot connect to it.
#[test]
fn a_sandboxed_bot_cannot_reach_a_postgresql_servers_socket() {
    need_bwrap();
    let class = class();
    let server = match common::postgres::Server::start(class._root.path()) {
        Ok(server) => server,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let socket = server.socket();
    let said = probed(&class, &[], &[&socket], &[]);
    assert_has(&said, &format!("socket {}: yes", socket.display()));
    let said = probed(&class, &["--sandbox"], &[&socket], &[]);
    assert_has(&said, &format!("socket {}: no", socket.display()));
}

/// Failure 3's first step, and item 1 without the sandbox: a bot run as
/// the organiser reads the referee's `PGPASSWORD` from its
/// `/proc/PID/environ`; with `--unprivileged` it runs as a uid of its own
/// and reads neither that nor `/etc/shadow`.
#[test]
fn an_unprivileged_bot_reads_neither_the_referees_environment_nor_the_system_secrets() {
    if !root() {
        eprintln!("not root: --unprivileged needs root");
        return;
    }
    let class = class();
    let password = [("PGPASSWORD", "hunter2")];
    let said = probed(&class, &[], &[], &password);
    assert_has(&said, "password: yes");
    let said = probed(&class, &["--unprivileged"], &[], &password);
    assert!((60000..=60999).contains(&uid_of(&said)), "{said}");
    assert_has(&said, "parent environ: no");
    assert_has(&said, "shadow: no");
    assert_lacks(&said, ": yes");
}

/// A program its uid cannot reach is refused, naming the folder that
/// stops it, rather than run as root.
#[test]
fn an_unprivileged_bot_whose_program_its_uid_cannot_reach_is_refused_by_name() {
    if !root() {
        return;
    }
    let class = class();
    use std::os::unix::fs::PermissionsExt;
    let alice = class.class.join("subs/alice");
    std::fs::set_permissions(&alice, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = class.class.join("out");
    let run = common::referee_with(
        [
            "tournament",
            "--no-progress",
            "--unprivileged",
            "t.toml",
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
        &[],
        Some(&class.class),
    );
    let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap_or_default();
    let said = format!("{}{records}", run.stderr);
    assert!(said.contains("cannot reach"), "{run:?}\n{records}");
    assert_has(&said, &format!("{} (mode 700", alice.display()));
}

/// A range whose uids belong to someone is passed over, and a run with
/// none left says so.
#[test]
fn uids_that_belong_to_users_are_never_used() {
    if !root() {
        return;
    }
    need_bwrap();
    let class = class();
    // uid 1 is `daemon` on every Debian.
    let run = common::referee_with(
        ["dealer", "--sandbox", "--bot-uids", "1-1", "/bin/true"],
        b"1 5\n",
        &[],
        Some(&class.class),
    );
    assert!(run.stderr.contains("no uid left"), "{run:?}");
    assert!(run.stderr.contains("daemon"), "{run:?}");
}
