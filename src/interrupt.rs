//! What to print when the run is interrupted (SIGINT, SIGTERM, SIGHUP).
//!
//! The signal thread (`main.rs`) kills every bot and exits at once, even
//! when the main thread is stuck. A tournament registers here how to
//! report the games finished so far, as cutechess does, and the signal
//! thread prints that report before it exits.

use std::sync::Mutex;
use std::time::{Duration, Instant};

type Report = Box<dyn Fn() -> String + Send>;

static REPORT: Mutex<Option<Report>> = Mutex::new(None);

/// Sets the report printed on an interrupt, replacing any earlier one.
pub fn set_report(report: impl Fn() -> String + Send + 'static) {
    if let Ok(mut slot) = REPORT.lock() {
        *slot = Some(Box::new(report));
    }
}

/// No report any more (the run has printed its own).
pub fn clear_report() {
    if let Ok(mut slot) = REPORT.lock() {
        *slot = None;
    }
}

/// The report, if one is set. Waits a moment at most for a lock another
/// thread holds: an interrupt must never hang.
pub fn report() -> Option<String> {
    let deadline = Instant::now() + Duration::from_millis(500);
    loop {
        match REPORT.try_lock() {
            Ok(slot) => return slot.as_ref().map(|f| f()),
            Err(std::sync::TryLockError::Poisoned(_)) => return None,
            Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(std::sync::TryLockError::WouldBlock) => return None,
        }
    }
}
