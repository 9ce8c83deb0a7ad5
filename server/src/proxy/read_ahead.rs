//! Read-ahead of result batches: while a client reads one batch, the gateway fetches the next.
//!
//! Through the gateway each FetchResults crosses two hops in turn (client to gateway, gateway
//! to engine), and a large result is hundreds of fetches. After forwarding a batch that looks
//! full, the gateway sends the same FETCH_NEXT to the engine at once and keeps its reply, one
//! per operation; the client's next FETCH_NEXT is answered with it. The engine's cursor moves
//! exactly as the client's would, so nothing is skipped or repeated: a kept batch is always
//! the client's next one, and a request that moves the cursor elsewhere (FETCH_FIRST) waits
//! for the batch on its way and drops it first.

use bytes::Bytes;
use tokio::sync::{Mutex, MutexGuard};
use tokio::task::JoinHandle;

use crate::errors::GatewayError;

/// Replies at least this long (bytes) are taken for full batches, worth reading ahead of.
/// The last batch of a result is empty and small results are short: after those the client
/// closes the operation, and a fetch read ahead would only delay that.
pub const MIN_REPLY_FOR_READ_AHEAD: usize = 8 * 1024;

/// A fetch of the next batch, running or done.
type Pending = JoinHandle<Result<Bytes, GatewayError>>;

/// The batch read ahead for one operation, if any.
#[derive(Debug, Default)]
pub struct ReadAhead {
    next: Mutex<Option<Pending>>,
}

impl ReadAhead {
    /// The operation's read-ahead for one fetch. Fetches of one operation run one at a time
    /// through it, so the batch kept is always the one after what the client has read.
    pub async fn lock(&self) -> Slot<'_> {
        Slot(self.next.lock().await)
    }

    /// Drops the batch read ahead, after it has arrived: the engine's cursor is then where
    /// the client's next request expects it (one batch past what the client read).
    pub async fn discard(&self) {
        let _ = self.lock().await.take().await;
    }
}

/// Exclusive use of an operation's read-ahead.
pub struct Slot<'a>(MutexGuard<'a, Option<Pending>>);

impl Slot<'_> {
    /// The batch read ahead (waiting for it if it is still on its way), or `None`.
    pub async fn take(&mut self) -> Option<Result<Bytes, GatewayError>> {
        let pending = self.0.take()?;
        Some(pending.await.unwrap_or_else(|e| {
            Err(GatewayError::Internal(format!(
                "reading the next batch ahead failed: {e}"
            )))
        }))
    }

    /// Keeps `fetch` (already running) as the next batch.
    pub fn keep(&mut self, fetch: Pending) {
        *self.0 = Some(fetch);
    }
}

/// Whether a forwarded FetchResults reply of this length is followed by a read-ahead.
pub fn worth_reading_ahead(reply: &[u8]) -> bool {
    reply.len() >= MIN_REPLY_FOR_READ_AHEAD
}
