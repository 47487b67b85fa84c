//! A league's look at its submissions' folders through the real binary
//! (issue 40, item 8): it never opens a special file (a FIFO blocked it
//! for ever), never copies more than is there (a sparse file was copied
//! whole), and says what it left out in the version's log.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use common::league::{QUICK, Running, run_args};
use common::{Marker, assert_has, fixture};

/// A folder under the target's own temporary folder.
fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// A duel player's folder at `folder`: `weak.sh` as its `pc2`.
fn submission(folder: &Path) {
    std::fs::create_dir_all(folder).unwrap();
    std::fs::copy(fixture("duel/weak.sh"), folder.join("pc2")).unwrap();
}

/// A league over `subs/*` in `dir`, a folder per name. Returns its file.
fn class(dir: &Path, names: &[&str]) -> PathBuf {
    for name in names {
        submission(&dir.join("subs").join(name));
    }
    common::league::duel_glob_file(dir)
}

/// The bytes the files under `dir` take on disk (their blocks), symbolic
/// links not followed.
fn on_disk(dir: &Path) -> u64 {
    let mut total = 0;
    let mut todo = vec![dir.to_owned()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let meta = entry.path().symlink_metadata().unwrap();
            if meta.is_dir() {
                todo.push(entry.path());
            }
            total += meta.blocks() * 512;
        }
    }
    total
}

/// A FIFO and a socket in a submission's folder: the league neither
/// blocks on them nor copies them. The version enters and plays, its log
/// names both; a folder added afterwards enters and plays too (before,
/// the scan opened the FIFO and waited for a writer for ever: no folder
/// or version entered again, and nothing said why).
#[test]
fn a_fifo_or_a_socket_in_a_submission_never_freezes_the_league() {
    let dir = tempdir();
    let file = class(dir.path(), &["ann", "bob"]);
    let db = dir.path().join("league.db");
    let marker = Marker::new();
    let mut running = Running::start(&file, &db, &QUICK, &marker);
    running.wait("a few games", |out, _| out.contains("game 2:"));

    // dan's folder arrives whole (a rename), with its FIFO and socket.
    let staged = dir.path().join("staged");
    submission(&staged);
    nix::unistd::mkfifo(
        &staged.join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(staged.join("sock")).unwrap();
    std::fs::rename(&staged, dir.path().join("subs/dan")).unwrap();
    running.wait("dan@v1 playing", |out, err| {
        err.contains("league: dan@v1 enters") && out.contains("dan@v1")
    });
    submission(&dir.path().join("subs/cat"));
    running.wait("cat@v1 playing", |out, err| {
        err.contains("league: cat@v1 enters") && out.contains("cat@v1")
    });
    assert_eq!(running.end(nix::sys::signal::Signal::SIGTERM), Some(130));
    marker.assert_none_left();

    let dan = common::league::build_log(&db, "dan", 1);
    assert!(
        dan.contains("pipe (a FIFO)") && dan.contains("sock (a socket)"),
        "{dan}"
    );
    let copy = std::fs::read_dir(dir.path().join("league.db.versions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("dan-"))
        .unwrap();
    assert!(copy.join("pc2").is_file());
    assert!(!copy.join("pipe").exists() && !copy.join("sock").exists());
}

/// A file of 2 GiB with only a few KiB written (its holes take no disk)
/// is copied as it is, sparse: the version's copy takes about what the
/// folder takes, not 2 GiB, and reads the same.
#[test]
fn a_sparse_file_is_copied_sparse() {
    use std::io::{Read, Seek, SeekFrom, Write};
    const SIZE: u64 = 2 << 30;
    let dir = tempdir();
    let file = class(dir.path(), &["ann", "bob"]);
    let data = dir.path().join("subs/ann/data.bin");
    {
        let mut f = std::fs::File::create(&data).unwrap();
        f.write_all(b"head").unwrap();
        f.set_len(SIZE).unwrap();
        f.seek(SeekFrom::Start(SIZE / 2)).unwrap();
        f.write_all(b"middle").unwrap();
        f.seek(SeekFrom::Start(SIZE - 4)).unwrap();
        f.write_all(b"tail").unwrap();
    }
    let folder = on_disk(&dir.path().join("subs/ann"));
    assert!(folder < 1 << 20, "{folder}");
    let db = dir.path().join("league.db");
    let started = Instant::now();
    let run = common::referee(run_args(&file, &db, &["--games", "4", "--jobs", "1"]), b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_has(&run.stderr, "league: ann@v1 enters");
    let copies = dir.path().join("league.db.versions");
    let taken = on_disk(&copies);
    assert!(
        taken < 16 << 20,
        "the copies take {taken} bytes on disk (the folder {folder}), in {:?}",
        started.elapsed()
    );
    let copy = std::fs::read_dir(&copies)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("ann-"))
        .unwrap()
        .join("data.bin");
    let mut f = std::fs::File::open(&copy).unwrap();
    assert_eq!(f.metadata().unwrap().len(), SIZE);
    let mut at = |offset: u64, len: usize| {
        let mut bytes = vec![0; len];
        f.seek(SeekFrom::Start(offset)).unwrap();
        f.read_exact(&mut bytes).unwrap();
        bytes
    };
    assert_eq!(at(0, 6), b"head\0\0");
    assert_eq!(at(SIZE / 2 - 2, 8), b"\0\0middle");
    assert_eq!(at(SIZE - 6, 6), b"\0\0tail");
    assert_eq!(at(SIZE / 4, 4), [0; 4]);
}
