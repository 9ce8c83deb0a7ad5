//! Stopping an engine that has had no session for its idle timeout.
//!
//! A launched engine of a shared level (USER, GROUP, SERVER) outlives the sessions that
//! asked for it; without this it would hold its memory and its registration forever. The
//! gateway passes the cluster's `idle-timeout`; an engine started by hand has none.

use std::time::Duration;

use tokio::time::Instant;

use crate::session::SessionManager;

/// Resolves once `sessions` has been empty for `timeout` without a break.
///
/// Sessions are counted, not watched: the check runs at a tenth of the timeout (between
/// 100 ms and 5 s), which bounds how late past the timeout the engine stops and costs one
/// map length read per tick.
pub async fn idle_for(sessions: &SessionManager, timeout: Duration) {
    let tick = (timeout / 10).clamp(Duration::from_millis(100), Duration::from_secs(5));
    let mut interval = tokio::time::interval(tick);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut empty_since: Option<Instant> = None;
    loop {
        interval.tick().await;
        if !sessions.is_empty() {
            empty_since = None;
            continue;
        }
        let since = *empty_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= timeout {
            return;
        }
    }
}
