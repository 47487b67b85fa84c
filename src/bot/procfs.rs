//! What `/proc` says of processes: their `stat`, their children, every
//! process on the machine; and how often the accounting looks. Below the
//! cgroups (`cgroup/`), the process groups (`groups.rs`) and the
//! accounting (`usage.rs`), which all read through it, it needs none of
//! them.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

/// How often every live bot's memory is looked at.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(10);

/// The children of `process` (`/proc/self`, `/proc/PID`) from each of its
/// threads' `children` file, and whether the lists are whole. `None` where
/// the kernel keeps no such files.
///
/// Each file is read in one read where it can be: the kernel makes each
/// read's list afresh from a position, so a child that leaves between two
/// reads can hide another from the second. Within one page it lists the
/// children in one pass; a longer list is read to its end (what the memory
/// watch wants), and is not whole.
pub(crate) fn listed_children(process: &Path) -> Option<(Vec<i32>, bool)> {
    static KEPT: OnceLock<bool> = OnceLock::new();
    // Not `/proc/thread-self`, which kernels before 3.17 lack: they may
    // have the children files.
    let kept = KEPT.get_or_init(|| {
        std::fs::read_dir("/proc/self/task")
            .ok()
            .and_then(|mut tasks| tasks.next()?.ok())
            .is_some_and(|task| task.path().join("children").exists())
    });
    if !*kept {
        return None;
    }
    let mut children = Vec::new();
    let mut whole = true;
    let mut listing = Vec::new();
    for task in std::fs::read_dir(process.join("task")).ok()?.flatten() {
        // A thread that ended meanwhile has no file, and no children.
        let Ok(mut file) = File::open(task.path().join("children")) else {
            continue;
        };
        listing.resize(CHILDREN_IN_ONE_READ, 0);
        let Ok(length) = file.read(&mut listing) else {
            continue;
        };
        listing.truncate(length);
        if length >= CHILDREN_IN_ONE_READ {
            whole = false;
            // The rest: the kernel first finishes a pid the read cut.
            let _ = file.read_to_end(&mut listing);
        }
        children.extend(
            std::str::from_utf8(&listing)
                .unwrap_or_default()
                .split_ascii_whitespace()
                .filter_map(|n| n.parse::<i32>().ok()),
        );
    }
    Some((children, whole))
}

/// The longest `children` list trusted from one read: under a page, which
/// the kernel fills in one pass (some 500 children).
const CHILDREN_IN_ONE_READ: usize = 4000;

/// Every process on the machine, from `/proc`.
pub(crate) fn every_process() -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// What `stat` says of a process (`/proc/PID`) or of one of its threads
/// (`/proc/PID/task/TID`).
pub(crate) struct Stat {
    pub(crate) ppid: i32,
    pub(crate) pgid: i32,
    pub(crate) sid: i32,
    state: char,
    flags: u64,
    pub(crate) threads: u64,
}

/// The kernel's flag of a thread that has begun to exit (`PF_EXITING`,
/// `include/linux/sched.h`), set for good.
const PF_EXITING: u64 = 0x4;

impl Stat {
    /// Whether the thread has begun to exit, or has exited (a zombie).
    /// Cgroup v1 shows such a thread at its hierarchy's root.
    pub(crate) fn exiting(&self) -> bool {
        self.flags & PF_EXITING != 0 || matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Reads `stat` in `task` (`/proc/PID` or `/proc/PID/task/TID`).
pub(crate) fn read_stat(task: &Path) -> Option<Stat> {
    let stat = std::fs::read_to_string(task.join("stat")).ok()?;
    // The command name is in parentheses and may hold anything: read after
    // the last ')'. Then: state, ppid, pgrp, session, tty_nr, tpgid, flags,
    // eight counts of faults and times, priority, nice, num_threads.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_ascii_whitespace().take(18).collect();
    fn number<T: std::str::FromStr>(fields: &[&str], at: usize) -> Option<T> {
        fields.get(at)?.parse().ok()
    }
    Some(Stat {
        state: fields.first()?.chars().next()?,
        ppid: number(&fields, 1)?,
        pgid: number(&fields, 2)?,
        sid: number(&fields, 3)?,
        flags: number(&fields, 6)?,
        threads: number(&fields, 17)?,
    })
}
