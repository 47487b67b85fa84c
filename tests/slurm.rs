//! A tournament on a real Slurm cluster, as `examples/slurm/submit.sh`
//! runs it: the entrants built once, a job array of four shards with one
//! task requeued while it plays (as Slurm does when a node fails or a job
//! is preempted), and the merge once the array is done. The merged
//! standings and games must be those of the same tournament on one
//! machine.
//!
//! The cluster is Debian's Slurm (`slurm-wlm`, with `munge`) on this one
//! machine, started in a temporary directory: its own munge key and
//! socket, its own `slurm.conf`, state, spool and logs, and ports nobody
//! else uses, so it never meets a cluster the machine may already run.
//! The daemons need root (slurmd starts every job as its user). Without
//! root, or where the packages cannot be installed or the daemons do not
//! start, the test says so and skips; once the cluster is up, anything
//! that goes wrong is a failure. Every process it started, daemons and
//! jobs, is gone when it ends, pass or fail.

mod common;

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{Marker, evensteven_bin, referee_bin};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The Slurm programs the test runs; all come with `slurm-wlm`.
const SLURM_COMMANDS: [&str; 6] = [
    "slurmctld",
    "slurmd",
    "sbatch",
    "squeue",
    "scontrol",
    "scancel",
];

/// How long the cluster may take to show its node idle, and a job to
/// end: generous, the jobs take seconds.
const START_LIMIT: Duration = Duration::from_secs(30);
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// Why the test cannot run here.
struct Skip(String);

/// Where `command` is: on PATH, or in the sbin folders a user's PATH
/// may lack (the daemons are there).
fn find(command: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|dir| dir.join(command))
        .find(|p| p.is_file())
}

/// `command` found as [`find`] finds it, to start.
fn program(command: &str) -> Command {
    Command::new(find(command).unwrap_or_else(|| command.into()))
}

/// Installs `slurm-wlm` and `munge` with apt-get when a command is missing,
/// as `scripts/test.sh` would have.
fn install_packages() -> Result<(), Skip> {
    let missing: Vec<&str> = SLURM_COMMANDS
        .iter()
        .chain(&["munged", "mungekey"])
        .copied()
        .filter(|c| find(c).is_none())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!(
        "tests/slurm.rs: {} missing; installing slurm-wlm and munge",
        missing.join(", ")
    );
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "slurm-wlm", "munge"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .output()
    };
    let mut done = install();
    if !done.as_ref().is_ok_and(|o| o.status.success()) {
        // A fresh machine may not have the package lists yet.
        let _ = Command::new("apt-get")
            .args(["update", "-qq"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .output();
        done = install();
    }
    match done {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(Skip(format!(
            "apt-get install slurm-wlm munge failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ))),
        Err(e) => Err(Skip(format!(
            "cannot run apt-get ({e}) to install slurm-wlm and munge"
        ))),
    }
}

/// A port free now on every address (Slurm's daemons listen on all).
fn free_port() -> u16 {
    TcpListener::bind("0.0.0.0:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A one-node Slurm cluster in a temporary directory. Dropping it stops
/// its jobs and its daemons, and kills whatever they left.
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
    /// munged, slurmctld, slurmd: in the foreground, so our children.
    daemons: Vec<(&'static str, Child)>,
    /// In the environment of the daemons and of every job (sbatch passes
    /// the submitter's environment on): a process carrying it is ours.
    marker: Marker,
}

impl Cluster {
    fn start() -> Result<Cluster, Skip> {
        let dir = tempfile::Builder::new()
            .prefix("referee-slurm-")
            .tempdir()
            .unwrap();
        let path = dir.path().to_owned();
        let mut cluster = Cluster {
            conf: path.join("slurm.conf"),
            dir,
            daemons: vec![],
            marker: Marker::new(),
        };
        for sub in ["munge", "socket", "state", "spool", "log"] {
            std::fs::create_dir(path.join(sub)).unwrap();
        }
        // munged checks permissions: its key private, its socket's folder
        // open to all (every user's job talks to it).
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path.join("munge"), std::fs::Permissions::from_mode(0o700))
            .unwrap();
        std::fs::set_permissions(path.join("socket"), std::fs::Permissions::from_mode(0o755))
            .unwrap();

        let key = path.join("munge/munge.key");
        let made = program("mungekey")
            .args(["--create", "--bits=1024", "--keyfile"])
            .arg(&key)
            .output()
            .map_err(|e| Skip(format!("cannot run mungekey: {e}")))?;
        if !made.status.success() {
            return Err(Skip(format!(
                "mungekey failed: {}",
                String::from_utf8_lossy(&made.stderr).trim()
            )));
        }
        let socket = path.join("socket/munge.socket");
        cluster.spawn(
            "munged",
            program("munged")
                .arg("--foreground")
                .arg(format!("--key-file={}", key.display()))
                .arg(format!("--socket={}", socket.display()))
                .arg(format!(
                    "--pid-file={}",
                    path.join("munge/munged.pid").display()
                ))
                .arg(format!(
                    "--log-file={}",
                    path.join("log/munged.log").display()
                ))
                .arg(format!(
                    "--seed-file={}",
                    path.join("munge/munged.seed").display()
                )),
        )?;
        cluster.wait_until("munged to create its socket", |_| socket.exists())?;

        std::fs::write(&cluster.conf, slurm_conf(&path, &socket)?).unwrap();
        let mut slurmctld = program("slurmctld");
        slurmctld.arg("-D");
        cluster.spawn("slurmctld", &mut slurmctld)?;
        let mut slurmd = program("slurmd");
        slurmd.args(["-D", "-N", NODE]);
        cluster.spawn("slurmd", &mut slurmd)?;
        cluster.wait_until("the node to be idle", |cluster| {
            cluster
                .slurm("sinfo", ["-h", "-N", "-o", "%T"])
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        })?;
        Ok(cluster)
    }

    /// Starts a daemon with our configuration, its output in `log/`.
    fn spawn(&mut self, name: &'static str, cmd: &mut Command) -> Result<(), Skip> {
        let log = File::create(self.dir.path().join(format!("log/{name}.out"))).unwrap();
        self.configure(cmd);
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .map_err(|e| Skip(format!("cannot start {name}: {e}")))?;
        self.daemons.push((name, child));
        Ok(())
    }

    /// Points `cmd` at this cluster, with the marker, and without any
    /// Slurm variable of a job this test may itself be running in.
    fn configure(&self, cmd: &mut Command) {
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            if key.starts_with("SLURM_") || key.starts_with("SBATCH_") {
                cmd.env_remove(key);
            }
        }
        cmd.env("SLURM_CONF", &self.conf);
        self.marker.apply(cmd);
    }

    /// Runs a Slurm client command against this cluster.
    fn slurm<const N: usize>(&self, program: &str, args: [&str; N]) -> std::io::Result<Output> {
        let mut cmd = self::program(program);
        self.configure(&mut cmd);
        cmd.args(args).stdin(Stdio::null()).output()
    }

    /// A Slurm client command that must succeed; its standard output.
    fn run<const N: usize>(&self, program: &str, args: [&str; N]) -> String {
        let out = self.slurm(program, args).unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.logs()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits for `ready`, or skips when the cluster does not come up (a
    /// daemon that exits says why in its log).
    fn wait_until(&mut self, what: &str, ready: impl Fn(&Cluster) -> bool) -> Result<(), Skip> {
        let deadline = Instant::now() + START_LIMIT;
        while !ready(self) {
            let exited = self
                .daemons
                .iter_mut()
                .find_map(|(name, child)| Some((*name, child.try_wait().ok()??)));
            if let Some((name, status)) = exited {
                return Err(Skip(format!(
                    "{name} exited ({status}) while waiting for {what}\n{}",
                    self.logs()
                )));
            }
            if Instant::now() > deadline {
                return Err(Skip(format!(
                    "gave up waiting for {what} after {START_LIMIT:?}\n{}",
                    self.logs()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    /// A job's fields as `scontrol show job -o` gives them, or None once
    /// the controller has forgotten it.
    fn job(&self, id: &str) -> Option<String> {
        let out = self.slurm("scontrol", ["show", "job", "-o", id]).ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Waits until job `id` (every task of an array) has ended; its
    /// `JobState`s.
    fn wait_for_job(&self, id: &str) -> Vec<String> {
        let deadline = Instant::now() + RUN_LIMIT;
        loop {
            let info = self.job(id).unwrap_or_default();
            let states: Vec<String> = info
                .lines()
                .filter_map(|line| field(line, "JobState"))
                .collect();
            if !states.is_empty() && info.lines().all(ended) {
                return states;
            }
            assert!(
                Instant::now() < deadline,
                "job {id} still not done after {RUN_LIMIT:?}: {info}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The daemons' logs, for a failure's message.
    fn logs(&self) -> String {
        let mut text = String::new();
        let Ok(entries) = std::fs::read_dir(self.dir.path().join("log")) else {
            return text;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let log = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(30)..].join("\n");
            text += &format!("--- {} (last lines)\n{tail}\n", path.display());
        }
        text
    }

    /// Processes still alive that this cluster started: any carrying the
    /// marker (the daemons, the jobs and what they started), and any
    /// holding a file in its directory (slurmd starts each job's
    /// slurmstepd with an environment of its own, but with slurmd's log
    /// open).
    fn survivors(&self) -> Vec<(i32, String)> {
        let me = std::process::id() as i32;
        let marked: Vec<i32> = self
            .marker
            .survivors()
            .iter()
            .filter_map(|s| s.split(':').next()?.parse().ok())
            .collect();
        let mut found = vec![];
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return found;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            if pid == me || is_zombie(pid) {
                continue;
            }
            let holds_ours = std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
                fds.flatten().any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|l| l.starts_with(self.dir.path()))
                })
            });
            if holds_ours || marked.contains(&pid) {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                found.push((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
            }
        }
        found
    }

    /// Cancels every job, stops the daemons, and kills what is left:
    /// nothing the cluster started outlives it.
    fn stop(&mut self) {
        let up = !self.daemons.is_empty()
            && (self.daemons.iter_mut()).all(|(_, c)| c.try_wait().is_ok_and(|s| s.is_none()));
        if up {
            let _ = self.slurm("scancel", ["--user=root"]);
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline
                && self
                    .slurm("squeue", ["-h"])
                    .is_ok_and(|o| !o.stdout.is_empty())
            {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        // slurmd, then slurmctld, then munged, which they need to talk.
        for (_, mut child) in std::mem::take(&mut self.daemons).into_iter().rev() {
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(5);
            while child.try_wait().is_ok_and(|s| s.is_none()) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = self.survivors();
            if left.is_empty() || Instant::now() > deadline {
                break;
            }
            for (pid, _) in left {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// Whether a job (a line of `scontrol show job -o`) has ended.
fn ended(line: &str) -> bool {
    field(line, "JobState").is_some_and(|state| {
        !matches!(
            state.as_str(),
            "PENDING" | "RUNNING" | "REQUEUED" | "COMPLETING" | "CONFIGURING" | "SUSPENDED"
        )
    })
}

/// The jobs' logs that submit.sh has them write in `OUT/slurm/`.
fn logs_of(out: &Path) -> String {
    let mut text = String::new();
    let Ok(entries) = std::fs::read_dir(out.join("slurm")) else {
        return text;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let log = std::fs::read_to_string(&path).unwrap_or_default();
        text += &format!("--- {}\n{log}\n", path.display());
    }
    text
}

/// `KEY=value` from one line of `scontrol show -o`.
fn field(line: &str, key: &str) -> Option<String> {
    line.split_whitespace()
        .find_map(|word| word.strip_prefix(key)?.strip_prefix('='))
        .map(str::to_owned)
}

const NODE: &str = "referee-node";

/// The cluster's configuration: everything in `dir`, this machine's CPUs
/// as `slurmd -C` finds them, and what a machine without cgroup support
/// for Slurm needs (process tracking by parent pid, no task plugin).
fn slurm_conf(dir: &Path, socket: &Path) -> Result<String, Skip> {
    let found = program("slurmd")
        .arg("-C")
        .output()
        .map_err(|e| Skip(format!("cannot run slurmd -C: {e}")))?;
    let found = String::from_utf8_lossy(&found.stdout);
    // `NodeName=HOST CPUs=2 Boards=1 ... RealMemory=...`: the hardware
    // fields as they are (slurmd refuses a node bigger than it finds), the
    // name and memory ours.
    let hardware: Vec<&str> = found
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .filter(|w| !w.starts_with("NodeName=") && !w.starts_with("RealMemory="))
        .collect();
    if !hardware.iter().any(|w| w.starts_with("CPUs=")) {
        return Err(Skip(format!("slurmd -C gave no CPUs: {found}")));
    }
    let d = dir.display();
    Ok(format!(
        "ClusterName=referee-test\n\
         SlurmctldHost=localhost(127.0.0.1)\n\
         SlurmctldPort={ctld}\n\
         SlurmdPort={slurmd}\n\
         SlurmUser=root\n\
         SlurmdUser=root\n\
         AuthType=auth/munge\n\
         CredType=cred/munge\n\
         # A requeued job waits cred_expire seconds (120 by default) to start again.\n\
         AuthInfo=socket={socket},cred_expire=5\n\
         ProctrackType=proctrack/linuxproc\n\
         TaskPlugin=task/none\n\
         JobAcctGatherType=jobacct_gather/none\n\
         AccountingStorageType=accounting_storage/none\n\
         JobCompType=jobcomp/none\n\
         MpiDefault=none\n\
         # Jobs share the node by CPU, so two tasks run at once on two CPUs.\n\
         SelectType=select/cons_tres\n\
         SelectTypeParameters=CR_CPU\n\
         SchedulerType=sched/builtin\n\
         SchedulerParameters=sched_interval=1\n\
         StateSaveLocation={d}/state\n\
         SlurmdSpoolDir={d}/spool\n\
         SlurmctldPidFile={d}/slurmctld.pid\n\
         SlurmdPidFile={d}/slurmd.pid\n\
         SlurmctldLogFile={d}/log/slurmctld.log\n\
         SlurmdLogFile={d}/log/slurmd.log\n\
         ReturnToService=2\n\
         # Finished jobs stay visible to scontrol for the checks.\n\
         MinJobAge=600\n\
         KillWait=5\n\
         MailProg=/bin/true\n\
         NodeName={NODE} NodeAddr=127.0.0.1 NodeHostname=localhost {hardware} RealMemory=1000 State=UNKNOWN\n\
         PartitionName=test Nodes={NODE} Default=YES MaxTime=INFINITE State=UP\n",
        ctld = free_port(),
        slurmd = free_port(),
        socket = socket.display(),
        hardware = hardware.join(" "),
    ))
}

/// An Even Steven tournament of 32 games whose shards take a few seconds
/// each: one entrant replies 50ms late on every move.
fn tournament_file(dir: &Path) -> PathBuf {
    let text = format!(
        "game = \"evensteven\"\ngames = 32\nseed = 22\n\
         [limits]\ntimeout = \"5s\"\n\
         [[entrant]]\nname = \"reference\"\ncommand = [\"{bot}\"]\n\
         [[entrant]]\nname = \"slow-reference\"\n\
         command = [\"{ROOT}/tests/fixtures/slow.py\", \"0\", \"0.05\", \"{bot}\"]\n\
         [[entrant]]\nname = \"in-order\"\n\
         command = [\"{ROOT}/tests/fixtures/misbehave.sh\", \"play\", \"0\"]\n",
        bot = evensteven_bin(),
    );
    let path = dir.join("evensteven.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A cluster for test `name`, or `None` when it cannot start here (the
/// test is skipped, saying why).
fn cluster_or_skip(name: &str) -> Option<Cluster> {
    if !is_root() {
        eprintln!("SKIPPED {name}: Slurm's daemons need root; run the tests as root");
        return None;
    }
    match install_packages().and_then(|()| Cluster::start()) {
        Ok(cluster) => Some(cluster),
        Err(Skip(why)) => {
            eprintln!("SKIPPED {name}: no Slurm cluster: {why}");
            None
        }
    }
}

/// Whether this process is root (Slurm's daemons must be).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

#[test]
fn a_job_array_with_a_requeued_task_merges_to_one_machines_standings() {
    const NAME: &str = "a_job_array_with_a_requeued_task_merges_to_one_machines_standings";
    let started = Instant::now();
    let Some(cluster) = cluster_or_skip(NAME) else {
        return;
    };
    eprintln!("tests/slurm.rs: cluster up in {:?}", started.elapsed());
    let dir = cluster.dir.path();
    let file = tournament_file(dir);
    let out = dir.join("runs");

    // The same tournament on one machine, while the cluster plays it.
    let whole = dir.join("whole");
    let one_machine = {
        let (file, whole) = (file.clone(), whole.clone());
        std::thread::spawn(move || {
            common::referee(
                [
                    "tournament".as_ref(),
                    "--no-progress".as_ref(),
                    file.as_os_str(),
                    "--out".as_ref(),
                    whole.as_os_str(),
                ],
                b"",
            )
        })
    };

    let mut submit = Command::new(format!("{ROOT}/examples/slurm/submit.sh"));
    cluster.configure(&mut submit);
    let submitted = submit
        .arg(&file)
        .arg(&out)
        .args(["4", "--seed", "22"])
        .args(common::MARKER_ENV)
        .env("REFEREE", referee_bin())
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&submitted.stdout);
    assert!(
        submitted.status.success(),
        "submit.sh: {stdout}{}",
        String::from_utf8_lossy(&submitted.stderr)
    );
    let id = |job: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(job)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {job} job id in {stdout}"))
            .to_owned()
    };
    let (build, array, merge) = (id("build"), id("tournament"), id("merge"));

    // Requeue task 2 once it has recorded a game: Slurm stops it (SIGTERM)
    // and runs the same command again, which must continue its shard.
    let records = out.join("shard-2/records.jsonl");
    let deadline = Instant::now() + RUN_LIMIT;
    while std::fs::read_to_string(&records).map_or(0, |t| t.lines().count()) == 0 {
        let info = cluster.job(&array).unwrap_or_default();
        assert!(
            Instant::now() < deadline && !info.lines().all(ended),
            "task 2 never recorded a game: {info}\n{}{}",
            logs_of(&out),
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let task2 = format!("{array}_2");
    cluster.run("scontrol", ["requeue", &task2]);

    let states = cluster.wait_for_job(&merge);
    let log =
        |name: &str| std::fs::read_to_string(out.join("slurm").join(name)).unwrap_or_default();
    let merge_log = log(&format!("merge-{merge}.out"));
    assert_eq!(
        states,
        ["COMPLETED"],
        "merge job:\n{}{}",
        logs_of(&out),
        cluster.logs()
    );
    assert_eq!(cluster.wait_for_job(&build), ["COMPLETED"]);
    assert_eq!(cluster.wait_for_job(&array), ["COMPLETED"; 4]);
    let task2_info = cluster.job(&task2).unwrap();
    assert_eq!(
        field(&task2_info, "Restarts").as_deref(),
        Some("1"),
        "{task2_info}"
    );

    // Task 2 was stopped mid-run and its second run went on from there.
    let task2_log = log(&format!("shard-2-{array}.out"));
    assert!(task2_log.contains("interrupted"), "{task2_log}");
    assert!(task2_log.contains("1 after requeues"), "{task2_log}");
    assert_eq!(common::jsonl(&records).len(), 8, "{task2_log}");
    assert!(merge_log.contains("32 of 32 games"), "{merge_log}");

    let run = one_machine.join().unwrap();
    assert_eq!(run.code, Some(0), "{run:?}");
    let merged = out.join("all");
    assert_eq!(
        common::timeless_standings(&merged),
        common::timeless_standings(&whole)
    );
    assert_eq!(
        common::timeless_records(&merged),
        common::timeless_records(&whole)
    );

    let mut cluster = cluster;
    cluster.stop();
    assert_eq!(cluster.survivors(), vec![]);
    eprintln!("tests/slurm.rs: done in {:?}", started.elapsed());
}

/// A league on PostgreSQL whose games a job array of workers plays
/// (`examples/slurm/league-workers.sbatch`), on the one-node cluster and a
/// server of the test's own: a worker killed outright mid-game and the
/// server restarted under the running league lose nothing recorded and
/// double nothing; the league goes on to its games, and the workers left
/// end by themselves.
#[test]
fn a_league_on_postgresql_plays_on_a_job_array_of_workers() {
    const NAME: &str = "a_league_on_postgresql_plays_on_a_job_array_of_workers";
    let started = Instant::now();
    let Some(cluster) = cluster_or_skip(NAME) else {
        return;
    };
    let dir = cluster.dir.path();
    let server = match common::postgres::Server::start(dir) {
        Ok(server) => server,
        Err(why) => {
            eprintln!("SKIPPED {NAME}: no PostgreSQL server: {why}");
            return;
        }
    };
    let url = server.url();
    let file = slow_duel_league(dir);
    let versions = dir.join("versions");
    let mut league = common::league::Running::start_in(
        dir,
        &[
            "league",
            "run",
            file.to_str().unwrap(),
            "--db",
            &url,
            "--versions",
            versions.to_str().unwrap(),
            "--jobs",
            "0",
            "--games",
            "40",
        ],
        &cluster.marker,
    );
    league.wait("the league to start", |_, err| err.contains("playing: "));

    let mut sbatch = program("sbatch");
    cluster.configure(&mut sbatch);
    let submitted = sbatch
        .args(["--parsable", "--array=1-3"])
        .arg(format!("--output={}/worker-%a.out", dir.display()))
        .arg(format!("{ROOT}/examples/slurm/league-workers.sbatch"))
        .args([url.as_str(), "--lease", "2s"])
        .env("REFEREE", referee_bin())
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let job = String::from_utf8_lossy(&submitted.stdout).trim().to_owned();
    assert!(
        submitted.status.success() && !job.is_empty(),
        "{submitted:?}"
    );

    // Task 1 killed outright (a lost node) once games are being played;
    // then the server restarted under the league.
    league.wait_games(6, "six games");
    cluster.run("scancel", ["--signal=KILL", "--full", &format!("{job}_1")]);
    league.wait_games(4, "four more games");
    server.restart().unwrap();
    assert_eq!(
        league.finish(),
        Some(0),
        "{}\n{}",
        league.stderr(),
        worker_logs(dir)
    );

    let states = cluster.wait_for_job(&job);
    assert_eq!(states.len(), 3, "{states:?}");
    assert_eq!(
        states.iter().filter(|s| *s == "COMPLETED").count(),
        2,
        "the workers left end by themselves: {states:?}\n{}",
        worker_logs(dir)
    );
    assert_eq!(common::league::games(&league.stdout()), 40);

    // Every game once, numbered as it finished, each at a dealt table
    // (two games a table of two, at most).
    let out = dir.join("export");
    let export = common::referee(["league", "export", &url, out.to_str().unwrap()], b"");
    assert_eq!(export.code, Some(0), "{export:?}");
    let records = common::jsonl(&out.join("records.jsonl"));
    assert_eq!(records.len(), 40);
    common::league::assert_numbered(&records);
    let db = referee::league::db::Db::read(&referee::league::db::Location::Url(url)).unwrap();
    let mut per_table = std::collections::HashMap::new();
    for (table, _) in db.games_after(0, 1000).unwrap() {
        *per_table
            .entry(table.expect("played at a table"))
            .or_insert(0) += 1;
    }
    assert!(per_table.values().all(|&n| n <= 2), "{per_table:?}");
    drop(db);
    drop(league);
    drop(server);

    let mut cluster = cluster;
    cluster.stop();
    assert_eq!(cluster.survivors(), vec![]);
    eprintln!("tests/slurm.rs: league done in {:?}", started.elapsed());
}

/// A league of four duel players in `dir/subs`, each 30 ms a move.
fn slow_duel_league(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    for name in ["ann", "bob", "cat", "dan"] {
        let folder = dir.join("subs").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let player = folder.join("pc2");
        std::fs::write(
            &player,
            "#!/bin/sh\nwhile read -r _ _; do sleep 0.03; echo 1; done\n",
        )
        .unwrap();
        std::fs::set_permissions(&player, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    common::league::duel_glob_file(dir)
}

/// The workers' logs, for a failure's message.
fn worker_logs(dir: &Path) -> String {
    (1..=3)
        .map(|k| {
            let log = std::fs::read_to_string(dir.join(format!("worker-{k}.out")));
            format!("worker {k}:\n{}\n", log.unwrap_or_default())
        })
        .collect()
}
