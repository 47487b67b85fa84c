//! The external games that ship inside the referee, found by name
//! (`referee play chess ...`, `game = "chess"`) wherever the binary is
//! installed: `cargo install` copies the binary alone, so a game file named
//! by a path into the source tree would be missing there.
//!
//! A name is looked for, in order, in `$REFEREE_GAMES/NAME/game.toml` (an
//! organiser's own copy), in `share/referee/games/NAME/` beside the
//! binary's folder (a packaged install), and else in a copy of the files
//! compiled into the binary, written into the user's data folder
//! (`$XDG_DATA_HOME/referee/games/NAME-HASH`, or `~/.local/share/...`): the
//! hash of the files names the folder, so another build never reads a stale
//! copy. Chess's judge is built into the binary (`referee __chess-judge`,
//! [`super::chess`]): its copy is a game file and a book, and needs
//! nothing else installed.
//!
//! The judge runs as the organiser, outside any sandbox, and the game file
//! says which program it is, so that copy is checked before each use (each
//! run that names the game): the binary's files with their bytes and modes
//! and nothing beside them, everything the user's own and writable by no
//! one else. A copy that is not so (a bot run without `--sandbox` made
//! `game.toml` name a judge of its own) is named on the log and written
//! again beside it, then swapped into its place in one step. An
//! organiser's or a package's copy is theirs, used as found.
//! docs/chess.md says what this guards against and what it cannot.

use std::path::{Path, PathBuf};

/// A game compiled into the binary: its folder's files.
struct Shipped {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
}

const CHESS: Shipped = Shipped {
    name: "chess",
    files: &[
        ("game.toml", include_str!("../../games/chess/game.toml")),
        (
            "openings.epd",
            include_str!("../../games/chess/openings.epd"),
        ),
    ],
};

const SHIPPED: &[Shipped] = &[CHESS];

/// The names a game argument may use instead of a path.
pub fn names() -> impl Iterator<Item = &'static str> {
    SHIPPED.iter().map(|game| game.name)
}

/// Whether `text` names a shipped game rather than a file.
pub fn is_name(text: &str) -> bool {
    names().any(|name| name == text)
}

/// The game file for `game`: `game` itself unless it is a shipped game's
/// bare name (and no file of that name is in the current folder), then the
/// shipped game's `game.toml`, made ready to run.
pub fn resolve(game: &Path) -> Result<PathBuf, String> {
    match game.to_str() {
        Some(name) if is_name(name) && !game.is_file() => game_file(name),
        _ => Ok(game.to_owned()),
    }
}

/// The game file of the shipped game `name`, made ready to run.
pub fn game_file(name: &str) -> Result<PathBuf, String> {
    let shipped = find(name).ok_or_else(|| format!("{name:?} is not a shipped game"))?;
    let dir = match organisers_copy(shipped) {
        Some(dir) => dir,
        None => write_out(shipped)?,
    };
    Ok(dir.join("game.toml"))
}

fn find(name: &str) -> Option<&'static Shipped> {
    SHIPPED.iter().find(|game| game.name == name)
}

/// The folder that holds `game`'s files when an organiser or a package
/// put them there: used as it is found, theirs to keep.
fn organisers_copy(game: &Shipped) -> Option<PathBuf> {
    if let Some(root) = std::env::var_os("REFEREE_GAMES").filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(root).join(game.name);
        if dir.join("game.toml").is_file() {
            return Some(dir);
        }
    }
    beside_binary(game.name)
}

/// `PREFIX/share/referee/games/NAME` for a binary in `PREFIX/bin`.
fn beside_binary(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let prefix = exe.parent()?.parent()?;
    let dir = prefix.join("share/referee/games").join(name);
    dir.join("game.toml").is_file().then_some(dir)
}

/// The compiled-in files written out into the user's data folder, under a
/// name with their hash, checked before each use: a folder there that is
/// not as the binary would write it (see [`check`]) is said on the log and
/// written again.
fn write_out(game: &Shipped) -> Result<PathBuf, String> {
    let data = data_home().ok_or_else(|| {
        format!(
            "{}: the shipped game needs a folder to unpack into: set HOME, XDG_DATA_HOME \
             or REFEREE_GAMES",
            game.name
        )
    })?;
    let parent = games_folder(game.name, &data)?;
    let dir = parent.join(format!("{}-{:016x}", game.name, hash(game)));
    match check(game, &dir) {
        Found::AsShipped => return Ok(dir),
        Found::Absent => {}
        Found::Differs(problems) => {
            tracing::warn!(
                "{}: the unpacked game {} is not as the referee ships it ({}): unpacking it again",
                game.name,
                dir.display(),
                listed(&problems)
            );
        }
    }
    unpack(game, &parent, &dir)?;
    Ok(dir)
}

/// `$DATA/referee/games`, made if need be; each of its two folders must be
/// this user's and writable by no one else (a folder of ours that others
/// may write is closed to them; one of another user's is refused).
fn games_folder(name: &str, data: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let fail = |what: &Path, e: std::io::Error| format!("{name}: {}: {e}", what.display());
    std::fs::create_dir_all(data).map_err(|e| fail(data, e))?;
    let referee = data.join("referee");
    let games = referee.join("games");
    for folder in [&referee, &games] {
        match std::fs::DirBuilder::new().mode(0o755).create(folder) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(fail(folder, e)),
            _ => {}
        }
        let meta = std::fs::metadata(folder).map_err(|e| fail(folder, e))?;
        if meta.uid() != euid() {
            return Err(format!(
                "{name}: {} is owned by uid {}, not by this user (uid {}): a judge found there \
                 could be anyone's; remove it, or set XDG_DATA_HOME or REFEREE_GAMES",
                folder.display(),
                meta.uid(),
                euid()
            ));
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 {
            tracing::warn!(
                "{name}: {} was writable by others (mode {mode:04o}): made {:04o}",
                folder.display(),
                mode & !0o022
            );
            std::fs::set_permissions(folder, std::fs::Permissions::from_mode(mode & !0o022))
                .map_err(|e| fail(folder, e))?;
        }
    }
    Ok(games)
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { nix::libc::geteuid() }
}

/// What a shipped game's folder in the data folder is.
enum Found {
    Absent,
    AsShipped,
    /// What is not as shipped, each naming its path.
    Differs(Vec<String>),
}

/// Whether `dir` holds `game` as the binary would write it: every file the
/// binary carries, with its bytes and mode, and nothing else; every entry
/// this user's and writable by no one else.
fn check(game: &Shipped, dir: &Path) -> Found {
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::Absent,
        Err(e) => return Found::Differs(vec![format!("{}: {e}", dir.display())]),
        Ok(meta) if !meta.is_dir() => {
            return Found::Differs(vec![format!("{} is not a folder", dir.display())]);
        }
        Ok(_) => {}
    }
    let mut problems = Vec::new();
    open_to_others(dir, &mut problems);
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return Found::Differs(vec![format!("{}: {e}", dir.display())]),
    };
    for entry in entries {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        if !game.files.iter().any(|(file, _)| name == *file) {
            problems.push(format!("{} added", Path::new(&name).display()));
        }
    }
    for (file, text) in game.files {
        let path = dir.join(file);
        let meta = std::fs::symlink_metadata(&path);
        let as_shipped = meta.as_ref().is_ok_and(|meta| {
            meta.is_file()
                && meta.mode() & 0o7777 == mode_of(file)
                && std::fs::read(&path).is_ok_and(|bytes| bytes == text.as_bytes())
        });
        if !as_shipped {
            let how = if meta.is_ok() { "changed" } else { "gone" };
            problems.push(format!("{file} {how}"));
        }
    }
    if problems.is_empty() {
        Found::AsShipped
    } else {
        Found::Differs(problems)
    }
}

/// Adds to `problems` each entry under `dir` (not following links), and
/// `dir` itself, that is not this user's or that others may write.
fn open_to_others(dir: &Path, problems: &mut Vec<String>) {
    use std::os::unix::fs::MetadataExt;
    let me = euid();
    let mut todo = vec![dir.to_owned()];
    while let Some(at) = todo.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            continue;
        };
        let rel = at.strip_prefix(dir).unwrap_or(&at);
        let what = if rel.as_os_str().is_empty() {
            "its folder".to_owned()
        } else {
            rel.display().to_string()
        };
        let mode = meta.mode() & 0o7777;
        if meta.uid() != me {
            problems.push(format!("{what} is owned by uid {}", meta.uid()));
        } else if !meta.is_symlink() && mode & 0o022 != 0 {
            problems.push(format!("{what} is writable by others (mode {mode:04o})"));
        }
        if meta.is_dir() {
            todo.extend(
                std::fs::read_dir(&at)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path()),
            );
        }
    }
}

/// The first problems of `problems`, for one line of the log.
fn listed(problems: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut text = problems[..problems.len().min(SHOWN)].join("; ");
    if problems.len() > SHOWN {
        text.push_str(&format!("; and {} more", problems.len() - SHOWN));
    }
    text
}

/// A shipped file's mode: its scripts may run, the others are read.
fn mode_of(file: &str) -> u32 {
    if file.ends_with(".sh") { 0o755 } else { 0o644 }
}

/// Writes `game` into a new folder beside `dir`, then puts it in `dir`'s
/// place in one step: a run starting meanwhile finds the old folder or the
/// new one, never a half-written one.
fn unpack(game: &Shipped, parent: &Path, dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let fail = |what: &Path, e: std::io::Error| format!("{}: {}: {e}", game.name, what.display());
    let staging = tempfile::Builder::new()
        .prefix(".unpacking-")
        .tempdir_in(parent)
        .map_err(|e| fail(parent, e))?;
    let new = staging.path();
    for (name, text) in game.files {
        let path = new.join(name);
        std::fs::write(&path, text).map_err(|e| fail(&path, e))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode_of(name)))
            .map_err(|e| fail(&path, e))?;
    }
    std::fs::set_permissions(new, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| fail(new, e))?;
    if std::fs::rename(new, dir).is_ok() {
        return Ok(());
    }
    // A folder is there: another run's, unpacked meanwhile, is used; any
    // other is swapped with ours, and goes with the staging folder.
    if matches!(check(game, dir), Found::AsShipped) {
        return Ok(());
    }
    let swapped = nix::fcntl::renameat2(
        nix::fcntl::AT_FDCWD,
        new,
        nix::fcntl::AT_FDCWD,
        dir,
        nix::fcntl::RenameFlags::RENAME_EXCHANGE,
    );
    match swapped {
        Ok(()) => {}
        // A file system that cannot swap (NFS): the old folder is moved
        // aside, then ours into its place; a run starting between the two
        // finds none and unpacks its own.
        Err(nix::errno::Errno::EINVAL | nix::errno::Errno::ENOSYS) => {
            let aside = tempfile::Builder::new()
                .prefix(".old-")
                .tempdir_in(parent)
                .map_err(|e| fail(parent, e))?;
            let old = aside.path().join("old");
            std::fs::rename(dir, &old).map_err(|e| fail(dir, e))?;
            std::fs::rename(new, dir).map_err(|e| fail(dir, e))?;
            let _ = aside.close();
            // Now `dir`: not to be removed.
            let _ = staging.keep();
            return Ok(());
        }
        Err(e) => return Err(fail(dir, e.into())),
    }
    if let Err(e) = staging.close() {
        tracing::warn!("{}: cannot remove the old copy: {e}", game.name);
    }
    Ok(())
}

fn data_home() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty());
    match xdg {
        Some(dir) => Some(PathBuf::from(dir)),
        None => std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .map(|home| PathBuf::from(home).join(".local/share")),
    }
}

fn hash(game: &Shipped) -> u64 {
    use std::hash::Hasher;
    let mut hasher = fnv::FnvHasher::default();
    for (name, text) in game.files {
        hasher.write(name.as_bytes());
        hasher.write(&[0]);
        hasher.write(text.as_bytes());
        hasher.write(&[0]);
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_or_an_unknown_name_is_left_as_it_is() {
        assert_eq!(
            resolve(Path::new("games/x/game.toml")).unwrap(),
            Path::new("games/x/game.toml")
        );
        assert_eq!(resolve(Path::new("tron")).unwrap(), Path::new("tron"));
    }

    #[test]
    fn the_hash_names_the_files() {
        assert_ne!(hash(&CHESS), 0);
        assert!(CHESS.files.iter().any(|(name, _)| *name == "game.toml"));
    }

    const TINY: Shipped = Shipped {
        name: "tiny",
        files: &[("game.toml", "name = 'tiny'\n"), ("run.sh", "echo\n")],
    };

    /// `TINY` written out by hand in `dir`.
    fn tiny(dir: &Path) {
        use std::os::unix::fs::PermissionsExt;
        for (name, text) in TINY.files {
            std::fs::write(dir.join(name), text).unwrap();
            let mode = std::fs::Permissions::from_mode(mode_of(name));
            std::fs::set_permissions(dir.join(name), mode).unwrap();
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn problems(dir: &Path) -> Vec<String> {
        match check(&TINY, dir) {
            Found::Differs(problems) => problems,
            Found::AsShipped => vec![],
            Found::Absent => vec!["absent".into()],
        }
    }

    #[test]
    fn a_copy_is_as_shipped_until_a_file_changes_comes_or_opens() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("tiny-1");
        assert!(matches!(check(&TINY, &dir), Found::Absent));
        std::fs::create_dir(&dir).unwrap();
        tiny(&dir);
        assert_eq!(problems(&dir), Vec::<String>::new());

        type Edit = fn(&Path);
        let edits: [(&str, Edit); 5] = [
            ("game.toml changed", |d| {
                std::fs::write(d.join("game.toml"), "name = 'x'\n").unwrap()
            }),
            ("run.sh changed", |d| {
                let mode = std::fs::Permissions::from_mode(0o700);
                std::fs::set_permissions(d.join("run.sh"), mode).unwrap()
            }),
            ("judge.py added", |d| {
                std::fs::write(d.join("judge.py"), "").unwrap()
            }),
            ("lib added", |d| std::fs::create_dir(d.join("lib")).unwrap()),
            ("its folder is writable by others (mode 0775)", |d| {
                let mode = std::fs::Permissions::from_mode(0o775);
                std::fs::set_permissions(d, mode).unwrap()
            }),
        ];
        for (want, edit) in edits {
            std::fs::remove_dir_all(&dir).unwrap();
            std::fs::create_dir(&dir).unwrap();
            tiny(&dir);
            edit(&dir);
            assert_eq!(problems(&dir), [want]);
        }
        std::fs::remove_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(parent.path(), &dir).unwrap();
        assert_eq!(
            problems(&dir),
            [format!("{} is not a folder", dir.display())]
        );
    }

    #[test]
    fn the_log_names_the_first_problems() {
        let many: Vec<String> = (0..10).map(|i| format!("f{i} added")).collect();
        assert_eq!(listed(&many[..2]), "f0 added; f1 added");
        assert!(listed(&many).ends_with("f7 added; and 2 more"));
    }
}
