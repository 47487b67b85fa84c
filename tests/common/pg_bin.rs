//! Where Debian's `postgresql` keeps its programs: found once for the
//! tests' PostgreSQL servers (`postgres.rs`) and the bench's
//! (`benches/perf.rs`, which includes this file by its path).

use std::path::PathBuf;

/// The newest PostgreSQL's programs' folder there is
/// (`/usr/lib/postgresql/<version>/bin`, with its `initdb`).
pub fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}
