//! Where this process's cgroups are: read from `/proc/self/mountinfo` and
//! `/proc/self/cgroup`, as pure functions of their text so that both
//! versions can be tested on any machine.

use std::path::{Path, PathBuf};

/// The cgroup v1 controllers the referee needs, each a hierarchy of its own
/// (or co-mounted with others): memory (limit, peak, OOM kills), pids (the
/// cap), cpuacct (CPU time) and freezer (a kill that nothing escapes).
pub const V1_CONTROLLERS: [&str; 4] = ["memory", "pids", "cpuacct", "freezer"];

/// The v2 controllers the referee needs enabled for its children. CPU time
/// (`cpu.stat`'s `usage_usec`) and `cgroup.kill` need no controller.
pub const V2_CONTROLLERS: [&str; 2] = ["memory", "pids"];

/// One cgroup file system mounted in this process's view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// Where it is mounted.
    pub point: PathBuf,
    /// Which cgroup of its hierarchy the mount shows as its root.
    pub root: String,
    /// `None` for cgroup v2; the controllers (and `name=...`) for v1.
    pub controllers: Option<Vec<String>>,
}

/// Parses `/proc/self/mountinfo` for cgroup mounts. Lines that are not
/// cgroup mounts, or that cannot be read, are skipped.
pub fn cgroup_mounts(mountinfo: &str) -> Vec<Mount> {
    mountinfo.lines().filter_map(parse_mount_line).collect()
}

/// One line: `ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE
/// SOURCE SUPER_OPTIONS`.
fn parse_mount_line(line: &str) -> Option<Mount> {
    let (before, after) = line.split_once(" - ")?;
    let fields: Vec<&str> = before.split(' ').collect();
    let root = unescape(fields.get(3)?);
    let point = PathBuf::from(unescape(fields.get(4)?));
    let mut after = after.split(' ');
    let fstype = after.next()?;
    let _source = after.next()?;
    let options = after.next().unwrap_or("");
    let controllers = match fstype {
        "cgroup2" => None,
        "cgroup" => Some(
            options
                .split(',')
                .filter(|o| *o != "rw" && *o != "ro" && !o.is_empty())
                .map(str::to_owned)
                .collect(),
        ),
        _ => return None,
    };
    Some(Mount {
        point,
        root,
        controllers,
    })
}

/// mountinfo writes a space, tab, newline and backslash in a path as
/// `\040`, `\011`, `\012` and `\134`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            let text = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's cgroup in each hierarchy, from `/proc/self/cgroup`:
/// `(controllers, path)`, the controllers empty for v2 (`0::/path`).
pub fn own_cgroups(text: &str) -> Vec<(Vec<String>, String)> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let _id = parts.next()?;
            let controllers = parts.next()?;
            let path = parts.next()?;
            let controllers = controllers
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect();
            Some((controllers, path.to_owned()))
        })
        .collect()
}

/// The directory of this process's own cgroup under `mount`: its path in
/// the hierarchy, made relative to what the mount shows as its root.
fn own_dir(mount: &Mount, path: &str) -> PathBuf {
    let relative = path
        .strip_prefix(mount.root.as_str())
        .unwrap_or(path)
        .trim_start_matches('/');
    if relative.is_empty() {
        mount.point.clone()
    } else {
        mount.point.join(relative)
    }
}

/// The directory of this process's v1 cgroup for `controller`, if that
/// controller is mounted.
pub fn v1_dir(
    mounts: &[Mount],
    own: &[(Vec<String>, String)],
    controller: &str,
) -> Option<PathBuf> {
    let mount = mounts.iter().find(|m| {
        m.controllers
            .as_ref()
            .is_some_and(|c| c.iter().any(|c| c == controller))
    })?;
    let (_, path) = own
        .iter()
        .find(|(controllers, _)| controllers.iter().any(|c| c == controller))?;
    Some(own_dir(mount, path))
}

/// The directory of this process's v2 cgroup, if a v2 hierarchy is
/// mounted.
pub fn v2_dir(mounts: &[Mount], own: &[(Vec<String>, String)]) -> Option<PathBuf> {
    let mount = mounts.iter().find(|m| m.controllers.is_none())?;
    let (_, path) = own.iter().find(|(controllers, _)| controllers.is_empty())?;
    Some(own_dir(mount, path))
}

/// Which of `wanted` a v2 cgroup's `cgroup.controllers` lacks.
pub fn v2_lacking<'a>(dir: &Path, wanted: &[&'a str]) -> Vec<&'a str> {
    let present = std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
    let present: Vec<&str> = present.split_whitespace().collect();
    wanted
        .iter()
        .copied()
        .filter(|c| !present.contains(c))
        .collect()
}

/// A `KEY VALUE` line's value in a flat-keyed cgroup file (`memory.events`,
/// `memory.oom_control`, `pids.events`, `cpu.stat`).
pub fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const OWN: &str = "\
9:name=systemd:/
8:pids:/
6:freezer:/
4:memory:/process_api/46f8
2:cpuacct:/
1:cpu:/
0::/
";

    #[test]
    fn finds_each_v1_controllers_own_cgroup() {
        let mounts = cgroup_mounts(HYBRID);
        let own = own_cgroups(OWN);
        assert_eq!(
            v1_dir(&mounts, &own, "memory").unwrap(),
            Path::new("/sys/fs/cgroup/memory/process_api/46f8")
        );
        assert_eq!(
            v1_dir(&mounts, &own, "pids").unwrap(),
            Path::new("/sys/fs/cgroup/pids")
        );
        assert_eq!(v1_dir(&mounts, &own, "blkio"), None);
        assert_eq!(
            v2_dir(&mounts, &own).unwrap(),
            Path::new("/sys/fs/cgroup/unified")
        );
    }

    #[test]
    fn a_v2_mount_rooted_inside_its_hierarchy() {
        // A container's cgroup namespace: the mount shows /ctr as its root.
        let mounts =
            cgroup_mounts("30 1 0:26 /ctr /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n");
        let own = own_cgroups("0::/ctr/app\n");
        assert_eq!(
            v2_dir(&mounts, &own).unwrap(),
            Path::new("/sys/fs/cgroup/app")
        );
        // Namespaced: the process sees its path from the namespace's root.
        let own = own_cgroups("0::/\n");
        assert_eq!(v2_dir(&mounts, &own).unwrap(), Path::new("/sys/fs/cgroup"));
    }

    #[test]
    fn mount_points_with_blanks_are_unescaped() {
        let mounts = cgroup_mounts("1 1 0:1 / /a\\040b rw - cgroup2 none rw\n");
        assert_eq!(mounts[0].point, Path::new("/a b"));
    }

    #[test]
    fn reads_keyed_files() {
        let text = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
        assert_eq!(keyed(text, "oom_kill"), Some(3));
        assert_eq!(keyed(text, "oom"), None);
        assert_eq!(keyed("max 12\n", "max"), Some(12));
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_read_without_panic(text in "\\PC{0,400}") {
            let mounts = cgroup_mounts(&text);
            let own = own_cgroups(&text);
            let _ = v2_dir(&mounts, &own);
            let _ = v1_dir(&mounts, &own, "memory");
            let _ = keyed(&text, "max");
        }
    }
}
