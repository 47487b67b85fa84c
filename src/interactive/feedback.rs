//! The validator's feedback files, read as what they may be: anything.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use crate::bot::usage::human_bytes;

/// Most of a feedback file read into a verdict.
pub(super) const MAX_FEEDBACK: usize = 64 * 1024;
/// Time to read the feedback files of a test case.
pub(super) const FEEDBACK_TIMEOUT: Duration = Duration::from_secs(2);

/// The feedback files of a test case, as read.
#[derive(Debug, Default)]
pub(super) struct Feedback {
    pub(super) judge_message: String,
    pub(super) team_message: String,
    /// `judgeerror.txt`: why the validator failed, in its words.
    pub(super) judge_error: String,
    /// Each file not read, or not read whole, and why.
    pub(super) notes: Vec<String>,
}

/// Reads the feedback files in `dir`, within [`FEEDBACK_TIMEOUT`]. The
/// validator made them, and so may have made them anything: a regular
/// file is read, [`MAX_FEEDBACK`] bytes of it at most; a FIFO, which would
/// block its reader for ever, or a symbolic link, which may lead out of
/// the directory, is not (nor is a directory that became a link). A read
/// that hangs all the same (a stuck file system) is left to its thread.
pub(super) async fn read_feedback(dir: &Path) -> Feedback {
    let owned = dir.to_owned();
    let reading = tokio::task::spawn_blocking(move || read_feedback_now(&owned));
    let failed = |note: String| Feedback {
        notes: vec![note],
        ..Feedback::default()
    };
    match tokio::time::timeout(FEEDBACK_TIMEOUT, reading).await {
        Ok(Ok(feedback)) => feedback,
        Ok(Err(e)) => failed(format!("the feedback files could not be read: {e}")),
        Err(_) => failed(format!(
            "the feedback files were not read within {}",
            crate::units::human_duration(FEEDBACK_TIMEOUT)
        )),
    }
}

/// [`read_feedback`]'s work, which may block.
pub(super) fn read_feedback_now(dir: &Path) -> Feedback {
    let mut feedback = Feedback::default();
    let dir_fd = match nix::fcntl::open(dir, FEEDBACK_OPEN | OFlag::O_DIRECTORY, Mode::empty()) {
        Ok(fd) => fd,
        // Removed by the validator: it left no feedback.
        Err(Errno::ENOENT) => return feedback,
        Err(e) => {
            let what = match std::fs::symlink_metadata(dir) {
                Ok(meta) if meta.is_symlink() => "is a symbolic link: not followed".to_string(),
                Ok(meta) if !meta.is_dir() => "is not a directory: not read".to_string(),
                _ => format!("could not be opened: {e}"),
            };
            feedback
                .notes
                .push(format!("the feedback directory {what}"));
            return feedback;
        }
    };
    let mut read = |name: &str| {
        let (text, note) = match feedback_file(&dir_fd, name) {
            Ok((bytes, None)) => (bytes, None),
            Ok((bytes, Some(size))) => (
                bytes,
                Some(format!(
                    "holds {}: only its first {} are read",
                    human_bytes(size),
                    human_bytes(MAX_FEEDBACK as u64)
                )),
            ),
            Err(why) => (vec![], Some(why)),
        };
        feedback
            .notes
            .extend(note.map(|note| format!("{name} {note}")));
        String::from_utf8_lossy(&text).trim().to_string()
    };
    let judge_message = read("judgemessage.txt");
    let team_message = read("teammessage.txt");
    let judge_error = read("judgeerror.txt");
    Feedback {
        judge_message,
        team_message,
        judge_error,
        ..feedback
    }
}

/// Opens without following a symbolic link, and without waiting for a
/// FIFO's writer.
pub(super) const FEEDBACK_OPEN: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_NONBLOCK)
    .union(OFlag::O_CLOEXEC);

/// Feedback file `name` in `dir` (nothing when missing), at most
/// [`MAX_FEEDBACK`] bytes of it, with the file's size when that was not
/// all of it; an `Err` says why it was not read.
pub(super) fn feedback_file(dir: &OwnedFd, name: &str) -> Result<(Vec<u8>, Option<u64>), String> {
    read_capped(dir, name, MAX_FEEDBACK)
}

/// Most of a `nextpass.in` taken as the next pass's input.
const MAX_NEXT_PASS: usize = 64 << 20;

/// Takes the `nextpass.in` the validator of a multi-pass problem left in
/// `dir`, read as safely as the other feedback files: `None` when there is
/// none; an error when it is not a regular file, or holds more than 64
/// MiB. It is removed, so that the next pass starts without one.
pub(super) fn take_next_pass(dir: &Path) -> Result<Option<Vec<u8>>, String> {
    const NAME: &str = "nextpass.in";
    let dir_fd = nix::fcntl::open(dir, FEEDBACK_OPEN | OFlag::O_DIRECTORY, Mode::empty())
        .map_err(|e| format!("the feedback directory could not be opened: {e}"))?;
    let (bytes, more) =
        read_capped(&dir_fd, NAME, MAX_NEXT_PASS).map_err(|e| format!("{NAME} {e}"))?;
    if let Some(size) = more {
        return Err(format!(
            "{NAME} holds {}, more than the {} a pass's input may",
            human_bytes(size),
            human_bytes(MAX_NEXT_PASS as u64)
        ));
    }
    match nix::unistd::unlinkat(&dir_fd, NAME, nix::unistd::UnlinkatFlags::NoRemoveDir) {
        Ok(()) => Ok(Some(bytes)),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(format!("{NAME} could not be removed: {e}")),
    }
}

/// File `name` in `dir` (nothing when missing), at most `max` bytes of
/// it, with the file's size when that was not all of it.
fn read_capped(dir: &OwnedFd, name: &str, max: usize) -> Result<(Vec<u8>, Option<u64>), String> {
    use std::io::Read;
    let fd = match nix::fcntl::openat(dir, name, FEEDBACK_OPEN, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Ok((vec![], None)),
        Err(Errno::ELOOP) => return Err("is a symbolic link: not followed".into()),
        Err(e) => return Err(format!("could not be opened: {e}")),
    };
    let file = std::fs::File::from(fd);
    let unread = |e: std::io::Error| format!("could not be read: {e}");
    let meta = file.metadata().map_err(unread)?;
    if !meta.is_file() {
        return Err(format!(
            "is {}, not a regular file: not read",
            file_kind(meta.file_type())
        ));
    }
    let mut bytes = Vec::new();
    file.take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unread)?;
    if bytes.len() > max {
        bytes.truncate(max);
        return Ok((bytes, Some(meta.len())));
    }
    Ok((bytes, None))
}

/// What a file that is not a regular one is, for a note.
pub(super) fn file_kind(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "of another kind"
    }
}

/// One line of a feedback message for the verdict line: its lines joined.
pub(super) fn one_line(text: &str) -> String {
    let joined = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    // A validator's words reach the terminal: escaped, as a bot's are.
    let joined = crate::text::terminal(&joined).into_owned();
    if joined.chars().count() > 300 {
        joined.chars().take(300).collect::<String>() + "..."
    } else {
        joined
    }
}
