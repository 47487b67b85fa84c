//! Building the entrants: `make` in each distinct directory, once, all at
//! the same time; then `pc2` must be there and executable.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::future::join_all;
use nix::unistd::{AccessFlags, access};

use crate::bot::BotSpec;
use crate::bot::command::{Completed, run_to_end};

/// The program every entrant must provide.
pub const PROGRAM: &str = "pc2";
/// How much of a build's output is kept.
const LOG_KEEP: usize = 64 * 1024;

#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Shell command run in each directory (`sh -c`).
    pub make: String,
    pub timeout: Duration,
    /// Where to write each build's log, if anywhere.
    pub logs: Option<PathBuf>,
}

/// The default build command. With it, a directory without a makefile is
/// not built (its `pc2` is used as it is), as the statement allows.
pub const DEFAULT_MAKE: &str = "make";

/// One entrant's build: the program to run, or why it is disqualified.
pub type Built = Result<BotSpec, String>;

/// Builds every distinct directory once, in parallel, and returns one
/// result per entrant (in the order of `dirs`): its `pc2`, ready to run.
pub async fn build_all(dirs: &[PathBuf], options: &BuildOptions) -> Vec<Built> {
    build_dirs(dirs, options)
        .await
        .into_iter()
        .zip(dirs)
        .map(|(built, given)| {
            let dir = built?;
            pc2_in(&dir).map_err(|why| format!("{}: {why}", given.display()))
        })
        .collect()
}

/// The program to run in a built directory.
fn pc2_in(dir: &Path) -> Built {
    let program = dir.join(PROGRAM);
    if !program.is_file() {
        return Err(format!("no {PROGRAM} in the directory after the build"));
    }
    if access(&program, AccessFlags::X_OK).is_err() {
        return Err(format!("{PROGRAM} is not executable"));
    }
    Ok(BotSpec {
        program: program.into_os_string(),
        args: vec![],
        dir: Some(dir.to_owned()),
    })
}

/// Builds every distinct directory once (`make` where there is a makefile,
/// or always with a custom build command), in parallel; one result per
/// entry of `dirs`: the directory, canonical, or why it cannot be used.
pub async fn build_dirs(dirs: &[PathBuf], options: &BuildOptions) -> Vec<Result<PathBuf, String>> {
    let canonical: Vec<Result<PathBuf, String>> = dirs
        .iter()
        .map(|dir| {
            std::fs::canonicalize(dir)
                .map_err(|e| format!("directory {}: {e}", dir.display()))
                .and_then(|c| {
                    if c.is_dir() {
                        Ok(c)
                    } else {
                        Err(format!("{} is not a directory", dir.display()))
                    }
                })
        })
        .collect();
    let mut distinct: Vec<&PathBuf> = canonical.iter().filter_map(|c| c.as_ref().ok()).collect();
    distinct.sort();
    distinct.dedup();
    let builds = join_all(distinct.iter().map(|dir| build_one(dir, options))).await;
    canonical
        .iter()
        .zip(dirs)
        .map(|(canonical, given)| {
            let dir = canonical.as_ref().map_err(Clone::clone)?;
            let at = distinct
                .binary_search(&dir)
                .expect("every directory was built");
            builds[at]
                .clone()
                .map(|()| dir.clone())
                .map_err(|why| format!("{}: {why}", given.display()))
        })
        .collect()
}

async fn build_one(dir: &Path, options: &BuildOptions) -> Result<(), String> {
    let has_makefile = ["GNUmakefile", "makefile", "Makefile"]
        .iter()
        .any(|name| dir.join(name).is_file());
    if options.make != DEFAULT_MAKE || has_makefile {
        let spec = BotSpec {
            program: "sh".into(),
            args: vec![OsString::from("-c"), OsString::from(&options.make)],
            dir: Some(dir.to_owned()),
        };
        tracing::info!(dir = %dir.display(), command = %options.make, "building");
        let completed = run_to_end(&spec, options.timeout, LOG_KEEP)
            .await
            .map_err(|e| format!("cannot run `{}`: {e}", options.make))?;
        save_log(dir, &completed, options);
        check_build(&completed, options)?;
    }
    Ok(())
}

fn check_build(completed: &Completed, options: &BuildOptions) -> Result<(), String> {
    if completed.success() {
        return Ok(());
    }
    let what = match completed.ended {
        None => format!(
            "build timed out after {}",
            humantime::format_duration(options.timeout)
        ),
        Some(ended) => format!("build failed: `{}` {ended}", options.make),
    };
    let tail: Vec<&str> = completed.log.lines().rev().take(10).collect();
    let mut message = what;
    if !tail.is_empty() {
        message.push_str("; last lines of the build log:");
        for line in tail.iter().rev() {
            message.push_str("\n  | ");
            message.push_str(line);
        }
    }
    Err(message)
}

fn save_log(dir: &Path, completed: &Completed, options: &BuildOptions) {
    let Some(logs) = &options.logs else {
        return;
    };
    let name: String = dir
        .to_string_lossy()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = logs.join(format!("build{name}.log"));
    let written =
        std::fs::create_dir_all(logs).and_then(|()| std::fs::write(&path, &completed.log));
    if let Err(e) = written {
        eprintln!(
            "referee chomp: cannot save build log {}: {e}",
            path.display()
        );
    }
}
