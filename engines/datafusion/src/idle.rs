//! Stopping an engine that has had no session for its idle timeout.
//!
//! A launched engine of a shared level (USER, GROUP, SERVER) outlives the sessions that
//! asked for it; without this it would hold its memory and its registration forever. The
//! gateway passes the cluster's `idle-timeout`; an engine started by hand has none. The
//! timing is shared with the Spark engine's supervisor ([`kumiho_engine_launcher::idle`]).

use std::time::Duration;

use crate::session::SessionManager;

/// Resolves once `sessions` has been empty for `timeout` without a break.
pub async fn idle_for(sessions: &SessionManager, timeout: Duration) {
    kumiho_engine_launcher::idle::idle_for(|| !sessions.is_empty(), timeout).await
}
