//! The bot-process layer on its own, with real processes: the parts no game
//! of the foundation exercises fully (write deadlines, working directories,
//! stderr bounds, shutdown reports).

use std::ffi::OsString;
use std::time::Duration;

use referee::bot::{Bot, BotError, BotLimits, BotSpec, Ended};
use tokio::time::Instant;

fn sh(script: &str) -> BotSpec {
    BotSpec {
        program: "sh".into(),
        args: vec![OsString::from("-c"), script.into()],
        dir: None,
        hide: vec![],
        env: Default::default(),
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// True while a process with this pid exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        })
        .unwrap_or(false)
}

#[test]
fn a_bot_that_never_reads_is_caught_by_the_write_deadline() {
    block_on(async {
        let mut bot = Bot::spawn(&sh("exec sleep 1000"), BotLimits::default()).unwrap();
        let pid = bot.pid().unwrap();
        // Far more than a pipe buffers.
        let message = vec![b'x'; 4 << 20];
        let started = Instant::now();
        let error = bot
            .send(&message, Instant::now() + Duration::from_millis(150))
            .await
            .unwrap_err();
        let waited = started.elapsed();
        assert!(matches!(error, BotError::WriteTimeout { .. }), "{error}");
        assert!(
            error.to_string().starts_with("did not read its input"),
            "{error}"
        );
        assert!(waited >= Duration::from_millis(150) && waited < Duration::from_secs(5));
        bot.kill().await.unwrap();
        assert!(!alive(pid));
    });
}

#[test]
fn exchanges_are_timed_and_run_in_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = sh("read x; pwd; read y; sleep 0.2; echo \"$y\"");
    spec.dir = Some(dir.path().to_owned());
    block_on(async {
        let mut bot = Bot::spawn(&spec, BotLimits::default()).unwrap();
        let reply = bot
            .exchange(b"go\n", Duration::from_secs(5), None)
            .await
            .unwrap();
        assert_eq!(
            std::path::Path::new(reply.text).canonicalize().unwrap(),
            dir.path().canonicalize().unwrap()
        );
        let reply = bot
            .exchange(b"slow\n", Duration::from_secs(5), None)
            .await
            .unwrap();
        assert_eq!(reply.text, "slow");
        assert!(
            reply.elapsed >= Duration::from_millis(200),
            "{:?}",
            reply.elapsed
        );
        let finished = bot.shutdown(None).await.unwrap();
        assert!(finished.exited_in_grace);
        assert_eq!(finished.ended, Ended::Exited(0));
    });
}

#[test]
fn a_missing_working_directory_is_named() {
    let mut spec = sh("true");
    spec.dir = Some("/no/such/dir".into());
    let error = block_on(async { Bot::spawn(&spec, BotLimits::default()).err().unwrap() });
    assert!(
        error
            .to_string()
            .starts_with("working directory /no/such/dir"),
        "{error}"
    );
}

#[test]
fn stderr_is_bounded_and_counted() {
    block_on(async {
        let mut bot = Bot::spawn(
            &sh("head -c 1000000 /dev/zero | tr '\\0' e >&2; echo tail >&2; echo done; read x"),
            BotLimits::default(),
        )
        .unwrap();
        bot.recv_line(Instant::now() + Duration::from_secs(5), None)
            .await
            .unwrap();
        // stderr is drained concurrently; give the drain a moment.
        let deadline = Instant::now() + Duration::from_secs(5);
        while bot.stderr(|t| t.total()) < 1_000_005 {
            assert!(Instant::now() < deadline, "stderr not drained");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (text, truncated) = bot.stderr(|t| t.since(0));
        assert!(truncated);
        assert_eq!(text.len(), 64 * 1024);
        assert!(text.ends_with("eeeetail\n"));
        let last = bot.stderr(|t| t.last_lines(1));
        assert!(last.len() == 1 && last[0].ends_with("eeetail"));
        bot.shutdown(None).await.unwrap();
    });
}

#[test]
fn debug_lines_are_relayed_only_when_asked() {
    block_on(async {
        let mut bot = Bot::spawn(
            &sh("echo '* hello\r'; echo move; echo '* x'; echo again"),
            BotLimits::default(),
        )
        .unwrap();
        let mut relayed = Vec::new();
        let reply = bot
            .recv_line(Instant::now() + Duration::from_secs(5), Some(&mut relayed))
            .await
            .unwrap();
        assert_eq!(reply.text, "move");
        assert_eq!(relayed, b"* hello\n");
        let reply = bot
            .recv_line(Instant::now() + Duration::from_secs(5), None)
            .await
            .unwrap();
        assert_eq!(reply.text, "* x");
        bot.shutdown(None).await.unwrap();
    });
}

#[test]
fn shutdown_reports_stray_lines_and_kills_the_whole_group() {
    block_on(async {
        // The bot leaves a background child in its group, then exits.
        let mut bot = Bot::spawn(
            &sh("sleep 1000 & echo $! ; echo extra; exit 0"),
            BotLimits::default(),
        )
        .unwrap();
        let reply = bot
            .recv_line(Instant::now() + Duration::from_secs(5), None)
            .await
            .unwrap();
        let background: u32 = reply.text.parse().unwrap();
        assert!(alive(background));
        let finished = bot.shutdown(None).await.unwrap();
        assert_eq!(finished.stray_lines, 1);
        assert_eq!(finished.first_stray.as_deref(), Some("extra"));
        assert_eq!(finished.ended, Ended::Exited(0));
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while alive(background) {
            assert!(
                std::time::Instant::now() < deadline,
                "background child survived"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    });
}

#[test]
fn grace_then_sigterm_then_sigkill() {
    block_on(async {
        let limits = BotLimits {
            grace: Duration::from_millis(100),
            ..BotLimits::default()
        };
        let mut bot = Bot::spawn(&sh("exec sleep 1000"), limits).unwrap();
        let finished = bot.shutdown(None).await.unwrap();
        assert!(!finished.exited_in_grace);
        assert_eq!(finished.forced, Some(nix::sys::signal::Signal::SIGTERM));
        assert_eq!(finished.ended, Ended::Signaled(15));

        let mut bot = Bot::spawn(&sh("trap '' TERM; exec sleep 1000"), limits).unwrap();
        let pid = bot.pid().unwrap();
        let finished = bot.shutdown(None).await.unwrap();
        assert_eq!(finished.forced, Some(nix::sys::signal::Signal::SIGKILL));
        assert_eq!(finished.ended, Ended::Signaled(9));
        assert!(!alive(pid));
    });
}

#[test]
fn dropping_a_bot_kills_its_group() {
    // Not `exec`: the bot is a shell with a child of its own in its group,
    // which killing the bot's pid alone would leave running.
    let (shell, child) = block_on(async {
        let mut bot = Bot::spawn(&sh("sleep 1000 & echo $!; wait"), BotLimits::default()).unwrap();
        let reply = bot
            .recv_line(Instant::now() + Duration::from_secs(5), None)
            .await
            .unwrap();
        let child: u32 = reply.text.parse().unwrap();
        (bot.pid().unwrap(), child)
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while alive(shell) || alive(child) {
        assert!(
            std::time::Instant::now() < deadline,
            "bot survived its drop"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
