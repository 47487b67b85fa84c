//! What a bot leaves behind dies with the run, also without cgroups (a
//! referee run by someone who is not root, or with `--no-cgroups`): the
//! stray kill of `src/bot/groups.rs`.

mod common;

use common::{evensteven_bin, fixture, referee};

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
