//! Stopping an engine that has been unused for its idle timeout.
//!
//! A launched engine of a shared level (USER, GROUP, SERVER) outlives the sessions that
//! asked for it; without this it would hold its memory and its registration forever. The
//! gateway passes the cluster's idle timeout in the registry flags; each engine says what
//! "in use" means (open sessions, open gateway connections).

use std::time::Duration;

use tokio::time::Instant;

/// Resolves once `in_use` has answered false for `timeout` without a break.
///
/// Use is sampled, not watched: the check runs at a tenth of the timeout (between 100 ms and
/// 5 s), which bounds how late past the timeout the engine stops and costs one cheap call
/// per tick.
pub async fn idle_for(in_use: impl Fn() -> bool, timeout: Duration) {
    let tick = (timeout / 10).clamp(Duration::from_millis(100), Duration::from_secs(5));
    let mut interval = tokio::time::interval(tick);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut unused_since: Option<Instant> = None;
    loop {
        interval.tick().await;
        if in_use() {
            unused_since = None;
            continue;
        }
        let since = *unused_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= timeout {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn resolves_only_after_a_whole_timeout_unused() {
        let used = Arc::new(AtomicBool::new(true));
        let in_use = {
            let used = Arc::clone(&used);
            move || used.load(Ordering::SeqCst)
        };
        let idle = tokio::spawn(idle_for(in_use, Duration::from_secs(10)));
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert!(!idle.is_finished(), "in use all along");
        used.store(false, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(5)).await;
        used.store(true, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(8)).await;
        assert!(!idle.is_finished(), "used again before the timeout ran out");
        used.store(false, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(12)).await;
        assert!(idle.is_finished());
    }
}
