//! Replies fetched from the engine before the client asks for them, so that the gateway's hop
//! to the engine overlaps the client's hop to the gateway.
//!
//! Through the gateway every forwarded RPC crosses two hops in turn. For the RPCs whose next
//! request is known, the gateway sends it to the engine as soon as it can and keeps the
//! reply, per operation:
//!
//! - after an async ExecuteStatement: its first GetOperationStatus (the engine waits for the
//!   statement as it would for the client's poll);
//! - once a statement with a result set is FINISHED: its GetResultSetMetadata, and its first
//!   two batches of rows in the fetch size the session's client last used, pipelined (one
//!   write to the engine for the three calls);
//! - after each batch with rows, when none is fetched ahead: the next batch ([`Rows`]), with
//!   the client's own request.
//!
//! What the client sees is unchanged. A kept status is served to the client's first poll if
//! it arrived while the client waited, or if it is final; an older one that says RUNNING is
//! dropped and the poll forwarded. Row fetches of one operation run one at a time, so the
//! engine's cursor moves exactly as the client's would: a kept batch is always the client's
//! next one, a request that moves the cursor elsewhere (FETCH_FIRST, a cancel) waits for the
//! batch on its way and drops it, and a batch larger than the client's next `maxRows` is
//! split, the rest kept for the fetch after.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use kumiho_thrift::cli::{
    TFetchOrientation, TFetchResultsReq, TFetchResultsResp, TGetOperationStatusReq,
    TGetOperationStatusResp, TGetResultSetMetadataReq, TOperationHandle, TOperationState,
};
use kumiho_thrift::codec::{decode_result_body, encode_result_body};
use kumiho_thrift::rowset;
use kumiho_thrift::status;
use tokio::sync::{oneshot, Mutex};

use super::{engine_error, exchange};
use crate::errors::GatewayError;
use crate::session::GatewaySession;

/// Replies at least this long (bytes) are taken for batches with rows without decoding them.
pub const MIN_REPLY_WITH_ROWS: usize = 8 * 1024;

/// A reply on its way from the engine.
pub type Pending = oneshot::Receiver<Result<Bytes, GatewayError>>;

/// `exchange` run on a task of its own: its reply, on its way.
pub fn spawned(
    exchange: impl Future<Output = Result<Bytes, GatewayError>> + Send + 'static,
) -> Pending {
    let (reply, pending) = oneshot::channel();
    tokio::spawn(async move {
        // The receiver is gone when the operation was closed meanwhile.
        let _ = reply.send(exchange.await);
    });
    pending
}

/// What the gateway fetched ahead for one operation.
#[derive(Debug, Default)]
pub struct Prefetched {
    /// The first GetOperationStatus, sent right after an async ExecuteStatement.
    status: std::sync::Mutex<Option<Pending>>,
    /// GetResultSetMetadata, once the statement finished; kept for every later call too.
    metadata: std::sync::Mutex<Option<Kept>>,
    /// Whether the metadata and first batch were asked for already.
    results_asked: AtomicBool,
    rows: Mutex<Rows>,
}

/// A reply on its way, or arrived.
#[derive(Debug)]
enum Kept {
    Pending(Pending),
    Arrived(Bytes),
}

/// The operation's row cursor as the gateway sees it.
#[derive(Debug, Default)]
pub struct Rows {
    /// The client's next batches, fetched ahead, in order.
    ahead: VecDeque<Ahead>,
    /// Whether the client has fetched rows yet (a first batch fetched ahead would otherwise
    /// follow the client's own).
    client_fetched: bool,
}

#[derive(Debug)]
enum Ahead {
    /// A FETCH_NEXT of `max_rows` on its way.
    Fetching { reply: Pending, max_rows: i64 },
    /// The rows of a batch left over after the client took fewer than it held.
    Rest(TFetchResultsResp),
}

/// A batch for the client, and whether it held rows (so the next one is worth reading ahead).
pub struct Batch {
    pub reply: Bytes,
    pub has_rows: bool,
    /// Rows of the engine's batch beyond the client's `maxRows`, kept for its next fetch.
    rest_kept: bool,
}

impl Prefetched {
    /// The kept first status, if it answers the client's poll: it arrived while the client
    /// waited for it, or it is final. `None`: forward the poll.
    pub async fn take_status(&self) -> Option<Result<Bytes, GatewayError>> {
        let mut pending = locked(&self.status).take()?;
        match pending.try_recv() {
            // Arrived before the client asked: stale unless final.
            Ok(Ok(reply)) if !is_final(&reply) => None,
            Ok(result) => Some(result),
            Err(_) => Some(joined(pending).await),
        }
    }

    /// The kept metadata, if it was asked for (waiting for it while on its way).
    pub async fn metadata(&self) -> Option<Result<Bytes, GatewayError>> {
        let kept = locked(&self.metadata).take();
        let reply = match kept? {
            Kept::Arrived(reply) => reply,
            Kept::Pending(pending) => match joined(pending).await {
                Ok(reply) => reply,
                // Not kept: the client's next call asks the engine again.
                Err(error) => return Some(Err(error)),
            },
        };
        *locked(&self.metadata) = Some(Kept::Arrived(reply.clone()));
        Some(Ok(reply))
    }

    /// Exclusive use of the operation's row cursor, for one fetch.
    pub async fn rows(&self) -> tokio::sync::MutexGuard<'_, Rows> {
        self.rows.lock().await
    }

    /// Waits for whatever is on its way and drops it all: for a cancel or a close, after
    /// which nothing fetched ahead is served.
    pub async fn discard(&self) {
        let status = locked(&self.status).take();
        if let Some(pending) = status {
            let _ = pending.await;
        }
        let metadata = locked(&self.metadata).take();
        if let Some(Kept::Pending(pending)) = metadata {
            let _ = pending.await;
        }
        self.rows.lock().await.discard().await;
    }
}

impl Rows {
    /// The client's next batch of at most `max_rows`: fetched ahead, or the rest of a larger
    /// batch, or `None` (forward the request). Marks the client's first fetch.
    pub async fn take(&mut self, max_rows: i64) -> Option<Result<Batch, GatewayError>> {
        self.client_fetched = true;
        let batch = match self.ahead.pop_front()? {
            Ahead::Fetching {
                reply,
                max_rows: asked,
            } => match joined(reply).await {
                Ok(reply) if asked <= max_rows => Ok(self.whole(reply)),
                Ok(reply) => Ok(self.split(reply, max_rows)),
                Err(error) => Err(error),
            },
            Ahead::Rest(resp) => Ok(self.split_decoded(resp, max_rows)),
        };
        Some(batch)
    }

    /// A batch the engine sent for the client's own request.
    pub fn forwarded(&mut self, reply: Bytes) -> Batch {
        self.whole(reply)
    }

    /// Keeps `reply` (a FETCH_NEXT of `max_rows`, already sent) as the batch after those
    /// already kept.
    pub fn keep(&mut self, reply: Pending, max_rows: i64) {
        self.ahead.push_back(Ahead::Fetching { reply, max_rows });
    }

    /// Whether the batch after `served` should be fetched ahead: it held rows, and nothing is
    /// kept already (the rest of the engine's batch, or batches on their way).
    pub fn worth_reading_ahead(&self, served: &Batch) -> bool {
        served.has_rows && !served.rest_kept && self.ahead.is_empty()
    }

    /// Waits for a batch on its way and drops it, with any rest: the engine's cursor is then
    /// where the next request expects it. Row fetches ahead are not sent after this.
    pub async fn discard(&mut self) {
        self.client_fetched = true;
        for ahead in std::mem::take(&mut self.ahead) {
            if let Ahead::Fetching { reply, .. } = ahead {
                let _ = reply.await;
            }
        }
    }

    fn whole(&mut self, reply: Bytes) -> Batch {
        let has_rows = reply.len() >= MIN_REPLY_WITH_ROWS
            || decode_result_body::<TFetchResultsResp>(&reply).is_ok_and(|resp| rows_in(&resp) > 0);
        Batch {
            reply,
            has_rows,
            rest_kept: false,
        }
    }

    fn split(&mut self, reply: Bytes, max_rows: i64) -> Batch {
        match decode_result_body::<TFetchResultsResp>(&reply) {
            Ok(resp) => self.split_decoded(resp, max_rows),
            // Not ours to judge: the client gets the engine's reply as it is.
            Err(_) => self.whole(reply),
        }
    }

    /// The first `max_rows` rows of `resp` for the client; the rest kept.
    fn split_decoded(&mut self, mut resp: TFetchResultsResp, max_rows: i64) -> Batch {
        let rows = resp.results.take();
        let (first, rest) = match rows {
            Some(rows) if status::is_ok(&resp.status) => {
                match rowset::split_rows(rows, usize::try_from(max_rows).unwrap_or(0)) {
                    Ok((first, rest)) => (Some(first), rest),
                    // A row set the gateway cannot split (compressed columns) goes whole.
                    Err(rows) => (Some(rows), None),
                }
            }
            rows => (rows, None),
        };
        let rest_kept = rest.is_some();
        if let Some(rest) = rest {
            self.ahead.push_front(Ahead::Rest(TFetchResultsResp {
                status: resp.status.clone(),
                has_more_rows: resp.has_more_rows,
                results: Some(rest),
            }));
        }
        resp.results = first;
        Batch {
            has_rows: rows_in(&resp) > 0,
            reply: encode_result_body(&resp),
            rest_kept,
        }
    }
}

/// After ExecuteStatement created `operation`: asks for what its client asks next.
pub fn after_execute(
    session: &Arc<GatewaySession>,
    prefetched: &Arc<Prefetched>,
    operation: &TOperationHandle,
    run_async: bool,
) {
    if !run_async {
        // A synchronous statement has finished when its reply comes.
        ask_results(session, prefetched, operation);
        return;
    }
    let (session, ahead, operation) = (session.clone(), prefetched.clone(), operation.clone());
    let mut status = locked(&prefetched.status);
    *status = Some(spawned(async move {
        let mut req = TGetOperationStatusReq {
            operation_handle: operation.clone(),
            get_progress_update: None,
        };
        let reply = exchange(&session, &mut req).await?;
        if is_finished(&reply) {
            ask_results(&session, &ahead, &operation);
        }
        Ok(reply)
    }));
}

/// After a status the client polled: once the statement finished, asks for its results.
pub fn after_status(
    session: &Arc<GatewaySession>,
    prefetched: &Arc<Prefetched>,
    operation: &TOperationHandle,
    reply: &[u8],
) {
    if is_finished(reply) {
        ask_results(session, prefetched, operation);
    }
}

/// Asks once for a finished statement's metadata and first two batches (in the fetch size
/// the session's client last used; no batch before the client has fetched once), pipelined.
fn ask_results(
    session: &Arc<GatewaySession>,
    prefetched: &Prefetched,
    operation: &TOperationHandle,
) {
    if !operation.has_result_set || prefetched.results_asked.swap(true, Ordering::AcqRel) {
        return;
    }
    let mut calls = Vec::new();
    {
        let mut metadata = locked(&prefetched.metadata);
        if metadata.is_none() {
            let (reply, pending) = oneshot::channel();
            *metadata = Some(Kept::Pending(pending));
            calls.push(Call::Metadata(reply));
        }
    }
    // Busy: the client is fetching already, and its fetch reads ahead for itself.
    if let (Some(max_rows), Ok(mut rows)) = (session.fetch_size(), prefetched.rows.try_lock()) {
        if !rows.client_fetched && rows.ahead.is_empty() {
            for _ in 0..2 {
                let (reply, pending) = oneshot::channel();
                rows.keep(pending, max_rows);
                calls.push(Call::Fetch(reply, max_rows));
            }
        }
    }
    if !calls.is_empty() {
        tokio::spawn(pipeline(session.clone(), operation.clone(), calls));
    }
}

/// A call sent ahead in a pipeline, and where its reply goes.
enum Call {
    Metadata(oneshot::Sender<Result<Bytes, GatewayError>>),
    Fetch(oneshot::Sender<Result<Bytes, GatewayError>>, i64),
}

/// Sends `calls` on the session's engine connection in one write, then hands out each reply
/// in turn as it arrives.
async fn pipeline(session: Arc<GatewaySession>, operation: TOperationHandle, calls: Vec<Call>) {
    let mut engine = session.engine.lock().await;
    let Some(link) = engine.as_mut() else {
        for call in calls {
            let (Call::Metadata(reply) | Call::Fetch(reply, _)) = call;
            let _ = reply.send(Err(GatewayError::Internal(
                "the launch finished without an engine session".to_owned(),
            )));
        }
        return;
    };
    let mut queued = Vec::with_capacity(calls.len());
    for call in calls {
        let operation_handle = operation.clone();
        let (sent, reply) = match call {
            Call::Metadata(reply) => (
                link.client.queue(
                    "GetResultSetMetadata",
                    &TGetResultSetMetadataReq { operation_handle },
                ),
                reply,
            ),
            Call::Fetch(reply, max_rows) => (
                link.client.queue(
                    "FetchResults",
                    &TFetchResultsReq {
                        operation_handle,
                        orientation: TFetchOrientation::FETCH_NEXT,
                        max_rows,
                        fetch_type: None,
                    },
                ),
                reply,
            ),
        };
        queued.push((sent, reply));
    }
    for (sent, reply) in queued {
        let _ = reply.send(
            link.client
                .reply(sent)
                .await
                .map_err(|e| engine_error(&link.address, e)),
        );
    }
}

/// The operation state in a GetOperationStatus reply.
fn state(reply: &[u8]) -> Option<TOperationState> {
    decode_result_body::<TGetOperationStatusResp>(reply)
        .ok()
        .filter(|resp| status::is_ok(&resp.status))
        .and_then(|resp| resp.operation_state)
}

fn is_finished(reply: &[u8]) -> bool {
    state(reply) == Some(TOperationState::FINISHED_STATE)
}

/// Whether a status reply is one that no later poll can change (or an error).
fn is_final(reply: &[u8]) -> bool {
    match state(reply) {
        Some(state) => !matches!(
            state,
            TOperationState::INITIALIZED_STATE
                | TOperationState::RUNNING_STATE
                | TOperationState::PENDING_STATE
        ),
        None => true,
    }
}

/// Rows in a FetchResults reply (a set the gateway cannot count counts as holding rows).
fn rows_in(resp: &TFetchResultsResp) -> usize {
    resp.results
        .as_ref()
        .map_or(0, |rows| rowset::row_count(rows).unwrap_or(1))
}

/// A std mutex's content, whether or not a panicking holder poisoned it (each holder only
/// swaps an `Option`).
fn locked<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

async fn joined(pending: Pending) -> Result<Bytes, GatewayError> {
    pending.await.unwrap_or_else(|_| {
        Err(GatewayError::Internal(
            "a request sent ahead to the engine was dropped".to_owned(),
        ))
    })
}

#[cfg(test)]
mod tests;
