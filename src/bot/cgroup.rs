//! What the machine offers for containing bots beyond process groups.
//!
//! cgroup v2 could account and cap a bot's memory and processes in the
//! kernel, with no sampling gap. The referee does not use it yet (the
//! machines it is developed and tested on have no v2 controllers): it
//! checks whether it is there and says, once, what contains the bots: the
//! memory watch of [`super::usage`], process groups, resource limits, a
//! subreaper and a watchdog.

use std::path::Path;

/// Why cgroup v2 cannot be used here, or `None` if it could.
pub fn v2_missing(root: &Path) -> Option<String> {
    let controllers = match std::fs::read_to_string(root.join("cgroup.controllers")) {
        Ok(text) => text,
        Err(_) => {
            return Some(format!(
                "no cgroup v2 hierarchy at {} (cgroup v1 or a hybrid layout)",
                root.display()
            ));
        }
    };
    let present: Vec<&str> = controllers.split_whitespace().collect();
    let missing: Vec<&str> = ["memory", "pids"]
        .into_iter()
        .filter(|c| !present.contains(c))
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "cgroup v2 at {} lacks the {} controller(s)",
            root.display(),
            missing.join(" and ")
        )
    })
}

/// Logs, once per run, how bots are contained.
pub fn log_containment() {
    let cgroup = v2_missing(Path::new("/sys/fs/cgroup"))
        .unwrap_or_else(|| "cgroup v2 is present, but the referee does not use it yet".into());
    tracing::info!(
        "containment: memory by use, all processes of each bot, sampled every {}ms ({cgroup}); \
         process groups, resource limits, a subreaper and a watchdog",
        super::usage::SAMPLE_INTERVAL.as_millis()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_controllers() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            v2_missing(dir.path())
                .unwrap()
                .contains("no cgroup v2 hierarchy")
        );
        std::fs::write(dir.path().join("cgroup.controllers"), "cpu io memory\n").unwrap();
        assert!(
            v2_missing(dir.path())
                .unwrap()
                .contains("lacks the pids controller")
        );
        std::fs::write(
            dir.path().join("cgroup.controllers"),
            "cpu io memory pids\n",
        )
        .unwrap();
        assert_eq!(v2_missing(dir.path()), None);
    }
}
