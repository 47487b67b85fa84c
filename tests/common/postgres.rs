//! A PostgreSQL server of a test's own: Debian's `postgresql` (in
//! `/usr/lib/postgresql/<version>/bin`), a cluster made in a temporary
//! folder and started on a free port of 127.0.0.1, never the machine's
//! own cluster. `initdb` and `pg_ctl` refuse root, so they run as the
//! `postgres` user, which owns the folder. Without root, or without the
//! package, [`Server::start`] says why and the test skips.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::pg_bin::bin_dir;

/// The server's database and role (trust on 127.0.0.1: no password).
const DATABASE: &str = "league";
const ROLE: &str = "referee";

/// A running server, stopped and its files removed when dropped.
pub struct Server {
    bin: PathBuf,
    /// Owned by `postgres`: the cluster (`data`), its socket and log.
    dir: PathBuf,
    port: u16,
}

/// A port nobody listens on now.
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// Runs `program` of `bin` as the `postgres` user.
fn as_postgres(bin: &Path, program: &str, args: &[&str]) -> Result<Output, String> {
    Command::new("runuser")
        .args(["-u", "postgres", "--"])
        .arg(bin.join(program))
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))
}

fn check(program: &str, output: Output) -> Result<(), String> {
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{program} failed ({}): {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

impl Server {
    /// A server started in the tests' temporary folder, or `None` after
    /// saying why it cannot run here (the test then skips).
    pub fn or_skip() -> Option<Server> {
        match Server::start(Path::new(env!("CARGO_TARGET_TMPDIR"))) {
            Ok(server) => Some(server),
            Err(why) => {
                eprintln!("skipped: {why}");
                None
            }
        }
    }

    /// Makes a cluster in a new folder under `parent` and starts it, with
    /// a database and a role for the league. `Err`: why it cannot run
    /// here.
    pub fn start(parent: &Path) -> Result<Server, String> {
        Server::made(parent)
    }

    /// [`Server::start`], stopped: nobody answers on its port until
    /// [`Server::resume`] (a league's clients started before their
    /// server). Its database is made already.
    pub fn stopped(parent: &Path) -> Result<Server, String> {
        let server = Server::made(parent)?;
        server.stop()?;
        Ok(server)
    }

    fn made(parent: &Path) -> Result<Server, String> {
        if !super::is_root() {
            return Err("a PostgreSQL server of the test's own needs root".into());
        }
        let bin = bin_dir().ok_or("no /usr/lib/postgresql/*/bin/initdb (Debian's postgresql)")?;
        let dir = tempfile::Builder::new()
            .prefix("postgres.")
            .tempdir_in(parent)
            .map_err(|e| format!("{}: {e}", parent.display()))?
            .keep();
        // Made first: dropped, it removes the folder.
        let server = Server {
            bin,
            dir,
            port: free_port()?,
        };
        let out = Command::new("chown")
            .arg("postgres:postgres")
            .arg(&server.dir)
            .output()
            .map_err(|e| format!("cannot run chown: {e}"))?;
        check("chown (is there a postgres user?)", out)?;
        server.init()?;
        server.pg_ctl(&["start", "-w", "-t", "60"])?;
        server.make_database()?;
        Ok(server)
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    fn init(&self) -> Result<(), String> {
        let data = self.data();
        let out = as_postgres(
            &self.bin,
            "initdb",
            &["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync"],
        )?;
        check("initdb", out)?;
        let settings = format!(
            "\nlisten_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = '{}'\n\
             fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 50\n",
            self.port,
            self.dir.display()
        );
        let conf = self.dir.join("data/postgresql.conf");
        let mut text = std::fs::read_to_string(&conf).map_err(|e| format!("{e}"))?;
        text.push_str(&settings);
        std::fs::write(&conf, text).map_err(|e| format!("{}: {e}", conf.display()))
    }

    fn pg_ctl(&self, args: &[&str]) -> Result<(), String> {
        let data = self.data();
        let log = self.dir.join("log").display().to_string();
        let mut all = vec!["-D", &data, "-l", &log];
        all.extend_from_slice(args);
        let out = as_postgres(&self.bin, "pg_ctl", &all)?;
        check("pg_ctl", out).map_err(|e| format!("{e}\nlog: {}", self.log()))
    }

    /// Runs `sql` as the server's superuser, one statement per string
    /// (`CREATE DATABASE` cannot share a transaction).
    fn psql(&self, sql: &[&str]) -> Result<(), String> {
        let port = self.port.to_string();
        let host = self.dir.display().to_string();
        let mut args = vec!["-h", &host, "-p", &port, "-U", "postgres", "-d", "postgres"];
        args.extend(["-v", "ON_ERROR_STOP=1"]);
        for statement in sql {
            args.extend(["-c", statement]);
        }
        check("psql", as_postgres(&self.bin, "psql", &args)?)
    }

    /// Runs `sql` on the league's database as the server's superuser
    /// (a test that makes an older league's database by hand).
    pub fn psql_league(&self, sql: &str) -> Result<(), String> {
        let port = self.port.to_string();
        let host = self.dir.display().to_string();
        let args = [
            "-h",
            &host,
            "-p",
            &port,
            "-U",
            "postgres",
            "-d",
            DATABASE,
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ];
        check("psql", as_postgres(&self.bin, "psql", &args)?)
    }

    fn make_database(&self) -> Result<(), String> {
        self.psql(&[
            &format!("CREATE ROLE {ROLE} LOGIN"),
            &format!("CREATE DATABASE {DATABASE} OWNER {ROLE}"),
        ])
    }

    /// The league's database on it.
    pub fn url(&self) -> String {
        format!("postgres://{ROLE}@127.0.0.1:{}/{DATABASE}", self.port)
    }

    /// Its port on 127.0.0.1.
    /// Its unix socket, in a folder of the test's (not `/run` or `/tmp`).
    pub fn socket(&self) -> PathBuf {
        self.dir.join(format!(".s.PGSQL.{}", self.port))
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Another database on the same server, made now (empty).
    pub fn another(&self, name: &str) -> Result<String, String> {
        self.psql(&[&format!("CREATE DATABASE {name} OWNER {ROLE}")])?;
        Ok(format!("postgres://{ROLE}@127.0.0.1:{}/{name}", self.port))
    }

    /// A role `role` that logs in with `password` only (scram-sha-256
    /// over TCP, the server's others keep trust), with a database of its
    /// own named after it: its URL, without the password.
    pub fn password_role(&self, role: &str, password: &str) -> Result<String, String> {
        self.psql(&[
            "SET password_encryption = 'scram-sha-256'",
            &format!("CREATE ROLE {role} LOGIN PASSWORD '{password}'"),
            &format!("CREATE DATABASE {role} OWNER {role}"),
        ])?;
        // The first line that matches a connection decides: this one before
        // initdb's `trust` for everyone.
        let hba = self.dir.join("data/pg_hba.conf");
        let text = std::fs::read_to_string(&hba).map_err(|e| format!("{}: {e}", hba.display()))?;
        let line =
            format!("host all {role} 127.0.0.1/32 scram-sha-256\nlocal all {role} scram-sha-256\n");
        std::fs::write(&hba, format!("{line}{text}"))
            .map_err(|e| format!("{}: {e}", hba.display()))?;
        self.pg_ctl(&["reload"])?;
        // A reload is a signal: wait until the role is refused without
        // its password.
        let port = self.port.to_string();
        let args = [
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            role,
            "-d",
            role,
            "-w",
            "-c",
            "",
        ];
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while as_postgres(&self.bin, "psql", &args)?.status.success() {
            if std::time::Instant::now() > deadline {
                return Err(format!("{role} still gets in without its password"));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Ok(format!("postgres://{role}@127.0.0.1:{}/{role}", self.port))
    }

    /// Stops the server (its clients' connections are cut) and starts it
    /// again on the same port.
    pub fn restart(&self) -> Result<(), String> {
        self.pg_ctl(&["restart", "-m", "fast", "-w", "-t", "60"])
    }

    /// Stops the server for `down`, then starts it again on the same
    /// port: its clients find nobody there meanwhile.
    pub fn pause(&self, down: std::time::Duration) -> Result<(), String> {
        self.stop()?;
        std::thread::sleep(down);
        self.resume()
    }

    /// Stops the server (its clients' connections are cut).
    pub fn stop(&self) -> Result<(), String> {
        self.pg_ctl(&["stop", "-m", "fast", "-w", "-t", "60"])
    }

    /// Starts the stopped server again, on the same port.
    pub fn resume(&self) -> Result<(), String> {
        self.pg_ctl(&["start", "-w", "-t", "60"])
    }

    /// The server's log, for a failure's message.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["stop", "-m", "immediate", "-w"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
