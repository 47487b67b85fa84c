//! A tournament on a real Slurm cluster, as `examples/slurm/submit.sh`
//! runs it: the entrants built once, a job array of four shards with one
//! task requeued while it plays (as Slurm does when a node fails or a job
//! is preempted), and the merge once the array is done. The merged
//! standings and games must be those of the same tournament on one
//! machine. And a league on PostgreSQL whose games a job array of
//! workers plays, as `examples/slurm/league-workers.sbatch` runs them.
//!
//! The cluster is Debian's Slurm (`slurm-wlm`, with `munge`) on this one
//! machine, started in a temporary directory (under /var/tmp: the
//! league's jobs have a private /tmp, as on many clusters): its own munge key and
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

use common::{Marker, assert_has, evensteven_bin, referee_bin, write_file};

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

/// What a job's /tmp is.
#[derive(Clone, Copy, PartialEq)]
enum JobTmp {
    /// The machine's.
    Machine,
    /// Its own, empty, gone with the job (job_container/tmpfs), as many
    /// clusters have. Not with requeues: Slurm 22.05 then fails a task's
    /// second run at times (`container_p_join: open failed for
    /// .../.ns`), when it starts the run without its prolog, which makes
    /// the container: a race with the credential's expiry
    /// (`cred_expire`), seen in the tournament's test.
    Private,
}

impl Cluster {
    fn start(tmp: JobTmp) -> Result<Cluster, Skip> {
        // Not under /tmp: with a private /tmp, a job would not see the
        // cluster's folder, nor the league's versions there, as a node
        // does not see the submitting machine's /tmp. Under /var/tmp, a
        // short path, for the sockets' 108 bytes.
        let dir = tempfile::Builder::new()
            .prefix("referee-slurm-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let path = dir.path().to_owned();
        let mut cluster = Cluster {
            conf: path.join("slurm.conf"),
            dir,
            daemons: vec![],
            marker: Marker::new(),
        };
        for sub in ["munge", "socket", "state", "spool", "log", "jobs-tmp"] {
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

        let mut conf = slurm_conf(&path, &socket)?;
        if tmp == JobTmp::Private {
            // A job's processes contained from its start, as the plugin
            // needs.
            conf += "JobContainerType=job_container/tmpfs\nPrologFlags=Contain\n";
            // Read from beside slurm.conf: each job's /tmp and /dev/shm
            // are its own, made under jobs-tmp/ and gone with the job.
            write_file(
                &path,
                "job_container.conf",
                format!("AutoBasePath=true\nBasePath={}/jobs-tmp\n", path.display()),
            );
        }
        std::fs::write(&cluster.conf, conf).unwrap();
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

    /// Submits a job that says whether it sees a file made now in this
    /// machine's /tmp, and what its own /tmp is.
    fn probe_tmp(&self) -> TmpProbe {
        let file = tempfile::Builder::new()
            .prefix("referee-slurm-probe-")
            .tempfile_in("/tmp")
            .unwrap();
        let out = self.dir.path().join("probe.out");
        let script = format!(
            "if test -e {f}; then echo sees {f}; fi; grep ' /tmp ' /proc/self/mountinfo",
            f = file.path().display()
        );
        let mut sbatch = program("sbatch");
        self.configure(&mut sbatch);
        let submitted = sbatch
            .args(["--parsable", "--wrap", &script])
            .arg(format!("--output={}", out.display()))
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let job = String::from_utf8_lossy(&submitted.stdout).trim().to_owned();
        assert!(submitted.status.success(), "{submitted:?}");
        TmpProbe {
            job,
            out,
            _file: file,
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
        // A job's private /tmp is mounted in the job's own namespace and
        // goes with it, but the plugin keeps that namespace open by a
        // mount under jobs-tmp/ on the host while the job lives: one left
        // by a job the daemons did not end is detached, so that the
        // folder can go.
        for mount in mounts_under(self.dir.path()) {
            let _ = nix::mount::umount2(&mount, nix::mount::MntFlags::MNT_DETACH);
        }
    }
}

/// The mount points at or under `dir`, deepest first.
fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut found: Vec<PathBuf> = info
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(PathBuf::from)
        .filter(|point| point.starts_with(dir))
        .collect();
    found.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    found
}

/// A job of [`Cluster::probe_tmp`], and the file it must not see.
struct TmpProbe {
    job: String,
    out: PathBuf,
    _file: tempfile::NamedTempFile,
}

impl TmpProbe {
    /// The job ended well, without seeing this machine's /tmp: its own
    /// was a folder of the cluster's `jobs-tmp/` (job_container/tmpfs).
    fn assert_private(self, cluster: &Cluster) {
        let states = cluster.wait_for_job(&self.job);
        let said = std::fs::read_to_string(&self.out).unwrap_or_default();
        assert!(
            states == ["COMPLETED"] && !said.contains("sees") && said.contains("/jobs-tmp/"),
            "a job's /tmp is not its own: {states:?}\n{said}\n{}",
            cluster.logs()
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A process's state letter from its stat (`R`, `S`, `T`, `Z`, ...), or
/// None once it is gone.
fn process_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Gone, or dead and not yet reaped.
fn is_zombie(pid: i32) -> bool {
    process_state(pid).is_none_or(|state| state == 'Z')
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

    write_file(dir, "evensteven.toml", text)
}

/// A cluster for test `name`, its jobs' /tmp `tmp`, or `None` when it
/// cannot start here (the test is skipped, saying why).
fn cluster_or_skip(name: &str, tmp: JobTmp) -> Option<Cluster> {
    if !common::is_root() {
        eprintln!("SKIPPED {name}: Slurm's daemons need root; run the tests as root");
        return None;
    }
    match install_packages().and_then(|()| Cluster::start(tmp)) {
        Ok(cluster) => Some(cluster),
        Err(Skip(why)) => {
            eprintln!("SKIPPED {name}: no Slurm cluster: {why}");
            None
        }
    }
}

#[test]
fn a_job_array_with_a_requeued_task_merges_to_one_machines_standings() {
    const NAME: &str = "a_job_array_with_a_requeued_task_merges_to_one_machines_standings";
    let started = Instant::now();
    let Some(cluster) = cluster_or_skip(NAME, JobTmp::Machine) else {
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
    assert_has(&task2_log, "interrupted");
    assert_has(&task2_log, "1 after requeues");
    assert_eq!(common::jsonl(&records).len(), 8, "{task2_log}");
    assert_has(&merge_log, "32 of 32 games");

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
/// (`examples/slurm/league-workers.sbatch`, its logs in the folder it
/// names), on the one-node cluster, whose jobs have a private /tmp each
/// as on real clusters, and a server of the test's own. The server is
/// restarted under the running league; then a worker is killed outright
/// mid-table, as docs/cluster.md says to (`scancel --signal=KILL --batch
/// --full`): it cannot give its table back, and another worker claims it
/// once its lease has run out. Nothing recorded is lost or doubled (every
/// game once, numbered without a gap). Two entrants are compiled (a
/// Makefile builds `pc2`) and two are scripts, and every game is played
/// by both seats: a worker plays what the coordinator built, from the
/// shared versions' folder, never from the coordinator's /tmp. The league
/// goes on to its games, and the workers left end by themselves.
#[test]
fn a_league_on_postgresql_plays_on_a_job_array_of_workers() {
    const NAME: &str = "a_league_on_postgresql_plays_on_a_job_array_of_workers";
    let started = Instant::now();
    let Some(cluster) = cluster_or_skip(NAME, JobTmp::Private) else {
        return;
    };
    let dir = cluster.dir.path();
    // Submitted first, so that it runs while the league builds.
    let probe = cluster.probe_tmp();
    let server = match common::postgres::Server::start(dir) {
        Ok(server) => server,
        Err(why) => {
            eprintln!("SKIPPED {NAME}: no PostgreSQL server: {why}");
            return;
        }
    };
    let url = server.url();
    let file = duel_league(dir);
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
            "60",
        ],
        &cluster.marker,
    );
    league.wait("the league to start", |_, err| err.contains("playing: "));
    probe.assert_private(&cluster);

    // As docs/cluster.md says: Slurm does not make the folder of a job's
    // log, and a job whose log cannot be opened fails without one.
    std::fs::create_dir(dir.join(WORKER_LOGS)).unwrap();
    let mut sbatch = program("sbatch");
    cluster.configure(&mut sbatch);
    // Two tasks at a time (`%2`), whatever the machine's CPUs: task 3
    // starts once task 1 is killed, and two workers bound the league's
    // pace (see duel_league).
    let submitted = sbatch
        .args(["--parsable", "--array=1-3%2"])
        .arg(format!("{ROOT}/examples/slurm/league-workers.sbatch"))
        .args([url.as_str(), "--lease", &format!("{}s", LEASE.as_secs())])
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
    let logs = || worker_logs(dir, &job);

    // The server restarted under the league, once games are being played
    // and tasks 1 and 2 are workers of it: none starts while the server is
    // down (task 3 waits until task 1 is killed).
    league.wait_games(4, "four games");
    assert_both_seats_played(&url);
    let deadline = Instant::now() + RUN_LIMIT;
    while !(1..=2).all(|k| {
        let name = format!(":slurm-{job}_{k}");
        psql(&url, "SELECT name FROM workers")
            .iter()
            .any(|row| row[0].ends_with(&name))
    }) {
        assert!(Instant::now() < deadline, "no workers\n{}", logs());
        std::thread::sleep(Duration::from_millis(50));
    }
    server.restart().unwrap();

    // Then task 1 killed outright (a lost node) while it holds a table.
    league.wait_games(4, "four more games");
    let task1 = format!("{job}_1");
    let (pid, held) = freeze_holding_a_table(&url, &task1, &logs);
    cluster.run("scancel", ["--signal=KILL", "--batch", "--full", &task1]);
    let deadline = Instant::now() + RUN_LIMIT;
    while !is_zombie(pid) {
        assert!(Instant::now() < deadline, "task 1 lives on\n{}", logs());
        std::thread::sleep(Duration::from_millis(10));
    }
    // Dead, it did not give its table back (as a stopped worker would):
    // the table is its own still, until its lease runs out.
    let left = table_row(&url, held.id);
    assert_eq!(
        (&left.state[..], &left.worker[..], left.claim),
        ("claimed", &held.worker[..], held.claim),
        "{}",
        logs()
    );
    let taken = loop {
        let now = table_row(&url, held.id);
        if now.claim != held.claim {
            break now;
        }
        assert_eq!(now.state, "claimed", "{}", logs());
        assert!(Instant::now() < deadline, "never claimed again\n{}", logs());
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        taken.claim == held.claim + 1
            && taken.worker != held.worker
            && taken.now >= left.lease_until,
        "{taken:?} after {left:?}"
    );
    eprintln!(
        "tests/slurm.rs: {}'s table {} claimed again by {} {} ms after its lease ran out, \
         {} games played",
        held.worker,
        held.id,
        taken.worker,
        taken.now - left.lease_until,
        common::league::games(&league.stdout())
    );

    assert_eq!(league.finish(), Some(0), "{}\n{}", league.stderr(), logs());

    let states = cluster.wait_for_job(&job);
    let state = |task: usize| {
        let info = cluster.job(&format!("{job}_{task}")).unwrap_or_default();
        field(&info, "JobState").unwrap_or_default()
    };
    assert_eq!(
        [state(1), state(2), state(3)],
        ["FAILED", "COMPLETED", "COMPLETED"],
        "task 1 killed, the workers left end by themselves: {states:?}\n{}",
        logs()
    );
    assert_eq!(common::league::games(&league.stdout()), 60);
    // Task 1 got no SIGTERM to act on (`interrupted by SIGTERM`).
    let log1 =
        std::fs::read_to_string(dir.join(WORKER_LOGS).join(format!("worker-{task1}.out"))).unwrap();
    assert!(
        log1.contains("referee-worker: job") && !log1.contains("interrupted"),
        "{log1}"
    );
    // The example's logs are in its folder, none where sbatch ran.
    let stray: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("slurm-"))
        .collect();
    assert_eq!(stray, Vec::<String>::new());

    // Every game once, numbered as it finished, each at a dealt table
    // (two games a table of two, at most), each played by both seats.
    let out = dir.join("export");
    common::league::export(&url, &out);
    let records = common::jsonl(&out.join("records.jsonl"));
    assert_eq!(records.len(), 60);
    common::league::assert_numbered(&records);
    assert_both_seats_played(&url);
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

/// Every game recorded so far was played by both seats: none has a seat
/// that `cannot_start`, as a worker's would that cannot see a version's
/// program (built on the coordinator's machine, in a folder not shared).
fn assert_both_seats_played(url: &str) {
    let db = referee::league::db::Db::read(&referee::league::db::Location::Url(url.into()));
    let games = db.unwrap().games_after(0, 1000).unwrap();
    let unplayed: Vec<String> = games
        .iter()
        .map(|(_, record)| serde_json::to_string(record).unwrap())
        .filter(|record| record.contains("cannot_start"))
        .collect();
    assert!(
        unplayed.is_empty(),
        "{} of {} games not played by both seats; the first: {}",
        unplayed.len(),
        games.len(),
        unplayed[0]
    );
}

/// The folder `examples/slurm/league-workers.sbatch` writes its logs to,
/// relative to where sbatch runs.
const WORKER_LOGS: &str = "referee-workers";

/// The workers' lease: long enough that a killed worker's table is seen
/// still its own after its death on a loaded machine (it renews every
/// third of it), short for the test.
const LEASE: Duration = Duration::from_secs(3);

/// A row of the league's `tables`, with the server's clock when read.
#[derive(Debug)]
struct TableRow {
    id: i64,
    claim: i64,
    worker: String,
    state: String,
    /// Milliseconds since the epoch, as `now`.
    lease_until: i64,
    now: i64,
}

/// The rows `query` reads, their fields as psql prints them.
fn psql(url: &str, query: &str) -> Vec<Vec<String>> {
    let out = Command::new("psql")
        .args([url, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", query])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "psql: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| line.split('|').map(str::to_owned).collect())
        .collect()
}

/// The rows of `tables` that `filter` picks.
fn tables(url: &str, filter: &str) -> Vec<TableRow> {
    let query = format!(
        "SELECT id, claim, coalesce(worker, ''), state, coalesce(lease_until, 0), \
         (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT FROM tables WHERE {filter}"
    );
    psql(url, &query)
        .into_iter()
        .map(|f| TableRow {
            id: f[0].parse().unwrap(),
            claim: f[1].parse().unwrap(),
            worker: f[2].clone(),
            state: f[3].clone(),
            lease_until: f[4].parse().unwrap(),
            now: f[5].parse().unwrap(),
        })
        .collect()
}

fn table_row(url: &str, id: i64) -> TableRow {
    tables(url, &format!("id = {id}")).pop().unwrap()
}

/// Freezes the worker of array task `task` (SIGSTOP) at a moment it holds
/// a table, and leaves it frozen: its process, and the table. Frozen, it
/// neither finishes the table nor claims another, so the table is the one
/// it holds when it is killed (it may be between two when first looked
/// at: then it is let go on, and looked at again).
fn freeze_holding_a_table(url: &str, task: &str, logs: &dyn Fn() -> String) -> (i32, TableRow) {
    use nix::sys::signal::{Signal, kill};
    let deadline = Instant::now() + RUN_LIMIT;
    loop {
        assert!(
            Instant::now() < deadline,
            "task {task}'s worker never held a table\n{}",
            logs()
        );
        std::thread::sleep(Duration::from_millis(50));
        let Some(pid) = worker_pid(task) else {
            continue;
        };
        let worker = nix::unistd::Pid::from_raw(pid);
        if kill(worker, Signal::SIGSTOP).is_err() {
            continue;
        }
        while process_state(pid).is_some_and(|state| state != 'T') {
            std::thread::sleep(Duration::from_millis(5));
        }
        let name = format!(":slurm-{task}");
        let held = tables(url, "state = 'claimed'")
            .into_iter()
            .find(|t| t.worker.ends_with(&name));
        match held {
            Some(table) => return (pid, table),
            None => {
                let _ = kill(worker, Signal::SIGCONT);
            }
        }
    }
}

/// The referee of array task `task` (`JOB_TASK`), found by its Slurm
/// variables: the batch script `exec`s it.
fn worker_pid(task: &str) -> Option<i32> {
    let (job, index) = task.split_once('_')?;
    let wanted = [
        format!("SLURM_ARRAY_JOB_ID={job}"),
        format!("SLURM_ARRAY_TASK_ID={index}"),
    ];
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            let has = |all: &[u8], item: &str| all.split(|&b| b == 0).any(|v| v == item.as_bytes());
            (has(&cmdline, "work") && wanted.iter().all(|w| has(&environ, w)) && !is_zombie(pid))
                .then_some(pid)
        })
}

/// A league of four duel players in `dir/subs`, each 200 ms a move: ann
/// and bob compiled by their Makefile, cat and dan scripts. A game is one
/// move, so two workers play 10 games a second at most, however fast the
/// machine: the league's 60 games cannot all be played before a killed
/// worker's table is free again (its lease, 3 s) and claimed (with 30 ms,
/// 58 were, once).
fn duel_league(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    for name in ["ann", "bob"] {
        let folder = dir.join("subs").join(name);
        write_file(&folder, "Makefile", "pc2: bot.c\n\tgcc -O2 -o pc2 bot.c\n");
        write_file(
            &folder,
            "bot.c",
            "#include <stdio.h>\n#include <unistd.h>\n\
             int main(void) {\n  char line[256];\n\
             while (fgets(line, sizeof line, stdin)) {\n\
             usleep(200000);\n    puts(\"1\");\n    fflush(stdout);\n  }\n  return 0;\n}\n",
        );
    }
    for name in ["cat", "dan"] {
        let folder = dir.join("subs").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let player = write_file(
            &folder,
            "pc2",
            "#!/bin/sh\nwhile read -r _ _; do sleep 0.2; echo 1; done\n",
        );
        std::fs::set_permissions(&player, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    common::league::duel_glob_file(dir)
}

/// The workers' logs, for a failure's message.
fn worker_logs(dir: &Path, job: &str) -> String {
    (1..=3)
        .map(|k| {
            let log = dir.join(WORKER_LOGS).join(format!("worker-{job}_{k}.out"));
            let log = std::fs::read_to_string(log);
            format!("worker {k}:\n{}\n", log.unwrap_or_default())
        })
        .collect()
}
