//! The external games that ship inside the referee, found by name
//! (`referee play chess ...`, `game = "chess"`) wherever the binary is
//! installed: `cargo install` copies the binary alone, so a game file named
//! by a path into the source tree would be missing there.
//!
//! A name is looked for, in order, in `$REFEREE_GAMES/NAME/game.toml` (an
//! organiser's own copy), in `share/referee/games/NAME/` beside the
//! binary's folder (a packaged install), and else in a copy of the files
//! compiled into the binary, written once into the user's data folder
//! (`$XDG_DATA_HOME/referee/games/NAME-HASH`, or `~/.local/share/...`): the
//! hash of the files names the folder, so another build never reads a stale
//! copy. A shipped game that needs a Python environment gets it there on
//! first use, from the game's own `make-venv.sh`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A game compiled into the binary: its folder's files.
struct Shipped {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    /// The script that makes its Python environment, if it needs one.
    venv_script: Option<&'static str>,
}

const CHESS: Shipped = Shipped {
    name: "chess",
    files: &[
        ("game.toml", include_str!("../../games/chess/game.toml")),
        ("judge.py", include_str!("../../games/chess/judge.py")),
        (
            "openings.epd",
            include_str!("../../games/chess/openings.epd"),
        ),
        (
            "requirements.txt",
            include_str!("../../games/chess/requirements.txt"),
        ),
        (
            "make-venv.sh",
            include_str!("../../games/chess/make-venv.sh"),
        ),
    ],
    venv_script: Some("make-venv.sh"),
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
    let dir = locate(shipped)?;
    if let Some(script) = shipped.venv_script {
        make_venv(shipped.name, &dir, script)?;
    }
    Ok(dir.join("game.toml"))
}

fn find(name: &str) -> Option<&'static Shipped> {
    SHIPPED.iter().find(|game| game.name == name)
}

/// The folder that holds `game`'s files: an organiser's, a package's, or
/// the compiled-in copy written out.
fn locate(game: &Shipped) -> Result<PathBuf, String> {
    if let Some(root) = std::env::var_os("REFEREE_GAMES").filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(root).join(game.name);
        if dir.join("game.toml").is_file() {
            return Ok(dir);
        }
    }
    if let Some(dir) = beside_binary(game.name) {
        return Ok(dir);
    }
    write_out(game)
}

/// `PREFIX/share/referee/games/NAME` for a binary in `PREFIX/bin`.
fn beside_binary(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let prefix = exe.parent()?.parent()?;
    let dir = prefix.join("share/referee/games").join(name);
    dir.join("game.toml").is_file().then_some(dir)
}

/// Writes the compiled-in files once into the user's data folder, under a
/// name with their hash; a folder already there is used as it is.
fn write_out(game: &Shipped) -> Result<PathBuf, String> {
    let data = data_home().ok_or_else(|| {
        format!(
            "{}: the shipped game needs a folder to unpack into: set HOME, XDG_DATA_HOME \
             or REFEREE_GAMES",
            game.name
        )
    })?;
    let parent = data.join("referee/games");
    let dir = parent.join(format!("{}-{:016x}", game.name, hash(game)));
    if dir.join("game.toml").is_file() {
        return Ok(dir);
    }
    let fail = |what: &Path, e: std::io::Error| format!("{}: {}: {e}", game.name, what.display());
    std::fs::create_dir_all(&parent).map_err(|e| fail(&parent, e))?;
    // Written beside and renamed into place, so that two runs starting at
    // once never read a half-written folder.
    let staging = tempfile::tempdir_in(&parent).map_err(|e| fail(&parent, e))?;
    for (name, text) in game.files {
        let path = staging.path().join(name);
        std::fs::write(&path, text).map_err(|e| fail(&path, e))?;
        if name.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| fail(&path, e))?;
        }
    }
    match std::fs::rename(staging.path(), &dir) {
        Ok(()) => Ok(dir),
        // Another run unpacked it first: the same files, by their hash.
        Err(_) if dir.join("game.toml").is_file() => Ok(dir),
        Err(e) => Err(fail(&dir, e)),
    }
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

/// Runs the game's venv script in its folder once: a mark in the venv says
/// it succeeded (the script alone would start Python on every run to
/// check). Its output goes to standard error, so that the one slow first
/// run says what it is doing.
fn make_venv(name: &str, dir: &Path, script: &str) -> Result<(), String> {
    let mark = dir.join(".venv/.referee-ready");
    if mark.exists() {
        return Ok(());
    }
    let _ = writeln!(
        std::io::stderr(),
        "referee: {name}: making its Python environment in {} (once)",
        dir.join(".venv").display()
    );
    let status = Command::new("bash")
        .arg(dir.join(script))
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .status()
        .map_err(|e| format!("{name}: cannot run {}: {e}", dir.join(script).display()))?;
    if status.success() {
        // Without the mark the script runs again next time: no harm.
        let _ = std::fs::write(&mark, "");
        return Ok(());
    }
    Err(format!(
        "{name}: {} failed ({status}): it needs python3 with its venv module \
         (Debian: apt-get install python3-venv) and PyPI; run it by hand to see why",
        dir.join(script).display()
    ))
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
}
