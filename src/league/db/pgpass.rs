//! The password file of PostgreSQL's own clients (`psql`, `pg_dump`, every
//! program on libpq): `PGPASSFILE`, else `~/.pgpass`. tokio-postgres
//! reads none, so the referee reads it here, as libpq does
//! (`passwordFromFile` in libpq's `fe-connect.c`), when neither the URL
//! nor `PGPASSWORD` gives a password.
//!
//! Why a file: a password in the URL is in the command line, which every
//! process of the machine may read (`ps`, `/proc/PID/cmdline`), and one
//! in `PGPASSWORD` is in the environment, which every process of the same
//! user may read (`/proc/PID/environ`): a bot not sandboxed is such a
//! process. A file can be hidden from a sandbox, and is read by nobody
//! the file's permissions do not let in.
//!
//! libpq's rules, kept as they are:
//!
//! - each line is `host:port:database:user:password`; a line that begins
//!   with `#` is a comment; a trailing carriage return and newline are
//!   not part of the line;
//! - a field that is `*` matches anything; otherwise it must equal the
//!   connection's, byte for byte, where `\` takes the next character as it
//!   is (`\:` a colon, `\\` a backslash; as libpq compares, an unescaped
//!   `:` ends the field only where the value compared with it ends);
//! - the first line whose four fields match gives the password, up to its
//!   next unescaped `:` (or the line's end), unescaped;
//! - the host is the connection's; with none, or the default socket folder
//!   ([`DEFAULT_SOCKET_FOLDER`]), it is `localhost`; another socket folder
//!   is matched by its path. The port is the connection's, 5432 when none.
//!   Without a database and a user there is no password;
//! - a file that is not a plain file, or that its group or others may
//!   read, write or run, is not read, and a warning says so; a file that
//!   is not there is no password, silently.

use std::path::{Path, PathBuf};

/// The folder of the server's socket that libpq takes for `localhost`:
/// Debian's (and the referee's own default, with no host given).
pub const DEFAULT_SOCKET_FOLDER: &str = "/var/run/postgresql";

/// The port when none is given.
pub const DEFAULT_PORT: u16 = 5432;

/// What a line's first four fields must match.
#[derive(Clone, Copy, Debug)]
pub struct Wanted<'a> {
    pub host: &'a str,
    pub port: &'a str,
    pub database: &'a str,
    pub user: &'a str,
}

/// The password file libpq would read: `PGPASSFILE` when set (and not
/// empty), else `.pgpass` in the home folder (`HOME`, else the user's
/// entry in the system's users).
pub fn file() -> Option<PathBuf> {
    if let Some(file) = std::env::var_os("PGPASSFILE").filter(|f| !f.is_empty()) {
        return Some(PathBuf::from(file));
    }
    home().map(|home| home.join(".pgpass"))
}

/// Every password file a process of this user might be pointed at:
/// `PGPASSFILE`'s and `~/.pgpass`, which a sandbox hides.
pub fn files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::env::var_os("PGPASSFILE")
        .filter(|f| !f.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .collect();
    files.extend(home().map(|home| home.join(".pgpass")));
    files.dedup();
    files
}

fn home() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(home));
    }
    nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .map(|user| user.dir)
}

/// The host as a line's first field is matched: `localhost` for none or
/// for [`DEFAULT_SOCKET_FOLDER`].
pub fn host_name(host: Option<&tokio_postgres::config::Host>) -> String {
    use tokio_postgres::config::Host;
    match host {
        None => "localhost".into(),
        Some(Host::Tcp(name)) if name.is_empty() => "localhost".into(),
        Some(Host::Tcp(name)) => name.clone(),
        Some(Host::Unix(folder)) if folder == Path::new(DEFAULT_SOCKET_FOLDER) => {
            "localhost".into()
        }
        Some(Host::Unix(folder)) => folder.to_string_lossy().into_owned(),
    }
}

/// What reading the password file `path` gave.
#[derive(Debug, PartialEq)]
pub enum Read {
    /// The password of the first line that matches.
    Found(Vec<u8>),
    /// No line matches, or there is no such file.
    None,
    /// The file was not read, for the reason said (libpq's warning).
    Refused(String),
}

/// Reads the password for `wanted` from the file at `path`.
pub fn read(path: &Path, wanted: &Wanted) -> Read {
    use std::os::unix::fs::PermissionsExt;
    if wanted.database.is_empty() || wanted.user.is_empty() {
        return Read::None;
    }
    // libpq looks through links, as opening the file does.
    let Ok(meta) = std::fs::metadata(path) else {
        return Read::None;
    };
    if !meta.is_file() {
        return Read::Refused(format!(
            "password file \"{}\" is not a plain file",
            path.display()
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Read::Refused(format!(
            "password file \"{}\" has group or world access; permissions should be u=rw \
             (0600) or less",
            path.display()
        ));
    }
    match std::fs::read(path) {
        Ok(text) => lookup(&text, wanted).map_or(Read::None, Read::Found),
        // As libpq: a file that cannot be opened is no file.
        Err(_) => Read::None,
    }
}

/// The password of the first line of `text` whose fields match `wanted`.
pub fn lookup(text: &[u8], wanted: &Wanted) -> Option<Vec<u8>> {
    let fields = [wanted.host, wanted.port, wanted.database, wanted.user];
    text.split(|&b| b == b'\n').find_map(|line| {
        if line.first() == Some(&b'#') {
            return None;
        }
        let end = line
            .iter()
            .rposition(|&b| b != b'\r' && b != b'\n')
            .map_or(0, |i| i + 1);
        let mut rest = &line[..end];
        if rest.is_empty() {
            return None;
        }
        for field in fields {
            rest = matches(rest, field.as_bytes())?;
        }
        Some(unescape(rest))
    })
}

/// What follows a line's next field, when that field matches `token`:
/// `*`, or `token` itself, escapes taken as the characters they escape.
fn matches<'a>(line: &'a [u8], token: &[u8]) -> Option<&'a [u8]> {
    if line.starts_with(b"*:") {
        return Some(&line[2..]);
    }
    let (mut i, mut j) = (0, 0);
    while i < line.len() {
        let escaped = line[i] == b'\\';
        if escaped {
            i += 1;
        }
        let c = line.get(i)?;
        if *c == b':' && !escaped && j == token.len() {
            return Some(&line[i + 1..]);
        }
        if token.get(j) != Some(c) {
            return None;
        }
        i += 1;
        j += 1;
    }
    None
}

/// The password field: up to its first unescaped `:`, each `\` taking
/// the next character as it is (one at the very end stays).
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut password = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() && field[i] != b':' {
        if field[i] == b'\\' && i + 1 < field.len() {
            i += 1;
        }
        password.push(field[i]);
        i += 1;
    }
    password
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const WANTED: Wanted = Wanted {
        host: "db.example",
        port: "5432",
        database: "class",
        user: "league",
    };

    fn found(text: &str) -> Option<String> {
        lookup(text.as_bytes(), &WANTED).map(|p| String::from_utf8(p).unwrap())
    }

    #[test]
    fn the_first_line_whose_fields_match_gives_the_password() {
        assert_eq!(
            found("db.example:5432:class:league:secret\n"),
            Some("secret".into())
        );
        let lines = "other:5432:class:league:no\n\
                     db.example:5433:class:league:no\n\
                     db.example:5432:other:league:no\n\
                     db.example:5432:class:other:no\n\
                     db.example:5432:class:league:yes\n\
                     *:*:*:*:later\n";
        assert_eq!(found(lines), Some("yes".into()));
        assert_eq!(
            found("*:*:*:*:any"),
            Some("any".into()),
            "no newline at the end"
        );
        assert_eq!(found("*:5432:*:league:w\n"), Some("w".into()));
        assert_eq!(
            found("db.example:5432:class:league\n"),
            None,
            "no password field"
        );
        assert_eq!(found("db.example:5432:class:leaguer:x\n"), None);
        assert_eq!(found("db.example:5432:class:leagu:x\n"), None);
        assert_eq!(found(""), None);
    }

    #[test]
    fn comments_crlf_and_extra_fields_are_as_libpq_reads_them() {
        assert_eq!(
            found("#*:*:*:*:commented\n*:*:*:*:real\n"),
            Some("real".into())
        );
        assert_eq!(found(" #*:*:*:*:not a comment\n"), None);
        assert_eq!(found("*:*:*:*:pw\r\n"), Some("pw".into()));
        assert_eq!(found("*:*:*:*:pw:more:fields\n"), Some("pw".into()));
        assert_eq!(
            found("*:*:*:*:\n"),
            Some(String::new()),
            "empty: first match wins"
        );
        // Only a whole field is a wildcard.
        assert_eq!(found("db.*:*:*:*:x\n"), None);
        assert_eq!(found("**:*:*:*:x\n"), None);
    }

    #[test]
    fn escapes_take_the_next_character_as_it_is() {
        assert_eq!(found("*:*:*:*:a\\:b\\\\c\n"), Some("a:b\\c".into()));
        assert_eq!(found("*:*:*:*:end\\"), Some("end\\".into()));
        let wanted = Wanted {
            user: "we:ird\\",
            ..WANTED
        };
        let line = b"db.example:5432:class:we\\:ird\\\\:pw\n";
        assert_eq!(lookup(line, &wanted), Some(b"pw".to_vec()));
        // As libpq compares them, an unescaped colon still matches one of
        // the value it is compared with; it ends the field only after it.
        assert_eq!(
            lookup(b"db.example:5432:class:we:ird\\\\:pw\n", &wanted),
            Some(b"pw".to_vec())
        );
        assert_eq!(
            lookup(b"db.example:5432:class:we:ird:pw\n", &wanted),
            None,
            "a backslash is written \\\\"
        );
        // An escaped ordinary character is itself.
        assert_eq!(
            found("db\\.example:5432:class:league:pw\n"),
            Some("pw".into())
        );
    }

    #[test]
    fn without_a_database_or_a_user_there_is_no_password() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pgpass");
        std::fs::write(&path, "*:*:*:*:pw\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read(&path, &WANTED), Read::Found(b"pw".to_vec()));
        let no_user = Wanted { user: "", ..WANTED };
        assert_eq!(read(&path, &no_user), Read::None);
        let no_db = Wanted {
            database: "",
            ..WANTED
        };
        assert_eq!(read(&path, &no_db), Read::None);
    }

    #[test]
    fn a_file_others_may_read_is_refused_and_a_missing_one_is_none() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pgpass");
        assert_eq!(read(&path, &WANTED), Read::None);
        std::fs::write(&path, "*:*:*:*:pw\n").unwrap();
        for mode in [0o640, 0o604, 0o610, 0o644] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let Read::Refused(why) = read(&path, &WANTED) else {
                panic!("{mode:o} read");
            };
            assert!(why.contains("group or world access"), "{why}");
        }
        for mode in [0o600, 0o400] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(
                read(&path, &WANTED),
                Read::Found(b"pw".to_vec()),
                "{mode:o}"
            );
        }
        let Read::Refused(why) = read(dir.path(), &WANTED) else {
            panic!("a folder read");
        };
        assert!(why.contains("not a plain file"), "{why}");
    }

    #[test]
    fn a_socket_in_the_default_folder_or_no_host_is_localhost() {
        use tokio_postgres::config::Host;
        assert_eq!(host_name(None), "localhost");
        let default = Host::Unix(DEFAULT_SOCKET_FOLDER.into());
        assert_eq!(host_name(Some(&default)), "localhost");
        let other = Host::Unix("/tmp/pg".into());
        assert_eq!(host_name(Some(&other)), "/tmp/pg");
        let tcp = Host::Tcp("127.0.0.1".into());
        assert_eq!(host_name(Some(&tcp)), "127.0.0.1");
    }

    proptest! {
        #[test]
        fn any_bytes_are_read_without_a_panic(text in proptest::collection::vec(any::<u8>(), 0..512),
                                              user in "[a-z:\\\\*]{0,6}") {
            let wanted = Wanted { user: &user, ..WANTED };
            let _ = lookup(&text, &wanted);
        }

        #[test]
        fn a_line_written_escaped_gives_back_its_password(password in "[ -~]{0,24}",
                                                          user in "[ -~]{1,12}") {
            let escape = |s: &str| s.replace('\\', "\\\\").replace(':', "\\:");
            let wanted = Wanted { user: &user, ..WANTED };
            let line = format!("db.example:5432:class:{}:{}\n", escape(&user), escape(&password));
            prop_assert_eq!(lookup(line.as_bytes(), &wanted), Some(password.into_bytes()));
        }
    }
}
