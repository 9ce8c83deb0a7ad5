//! Engine processes after launch: whether one is alive, and stopping it (SIGTERM, then SIGKILL).
//!
//! Engines run in their own process group (the launcher starts them as group leaders), so
//! signals go to the whole group: an engine's children (a JVM under `spark-submit`) stop too.

use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

/// How often `stop_engine` checks whether the engine has exited.
const EXIT_POLL: Duration = Duration::from_millis(50);

/// How an engine ended when asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// It was already gone.
    NotRunning,
    /// It exited after SIGTERM within the grace period.
    Terminated,
    /// It ignored SIGTERM for the whole grace period and was killed.
    Killed,
}

/// Whether a process with this id exists (a zombie not yet reaped by its parent counts).
pub fn is_alive(pid: u32) -> bool {
    let Some(pid) = to_pid(pid) else { return false };
    // Signal 0 checks existence only; EPERM means it exists but belongs to another user.
    matches!(kill(pid, None), Ok(()) | Err(Errno::EPERM))
}

/// Sends `signal` to the process group led by `pid`, or to `pid` alone if it leads none.
pub fn signal_engine(pid: u32, signal: Signal) -> Result<(), Errno> {
    let pid = to_pid(pid).ok_or(Errno::ESRCH)?;
    match killpg(pid, signal) {
        Err(Errno::ESRCH) => kill(pid, signal),
        other => other,
    }
}

/// Stops an engine: SIGTERM to its process group, then SIGKILL if it is still there after
/// `grace`. An engine that is not our child is only seen to exit once its parent reaps it,
/// which init does promptly for engines that outlived the gateway that launched them.
pub async fn stop_engine(pid: u32, grace: Duration) -> Stopped {
    // Delivered means it was running; whatever happens next, it was stopped by us.
    if signal_engine(pid, Signal::SIGTERM).is_err() {
        return Stopped::NotRunning;
    }
    let deadline = tokio::time::Instant::now() + grace;
    loop {
        if !is_alive(pid) {
            return Stopped::Terminated;
        }
        if tokio::time::Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(EXIT_POLL).await;
    }
    let _ = signal_engine(pid, Signal::SIGKILL);
    Stopped::Killed
}

/// A pid usable with `kill`: positive (0 and negatives would signal whole groups) and in range.
fn to_pid(pid: u32) -> Option<Pid> {
    i32::try_from(pid)
        .ok()
        .filter(|pid| *pid > 0)
        .map(Pid::from_raw)
}
