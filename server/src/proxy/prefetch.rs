//! Requests sent to the engine before the client makes them, so that the engine works while
//! the client's reply and next request travel.
//!
//! Through the gateway every forwarded RPC crosses two hops in turn. For the RPCs whose next
//! request is known, the gateway writes that request to the engine at once, pipelined on the
//! session's engine connection, and reads the engine's reply only when the client asks:
//!
//! - after an async ExecuteStatement: its first GetOperationStatus (the engine waits for the
//!   statement as it would for the client's poll); with a query answered ahead
//!   ([`super::execute_ahead`]), also its metadata and first batches, on speculation, settled
//!   with that status;
//! - once a statement with a result set is FINISHED: its GetResultSetMetadata and its first
//!   two batches of rows in the fetch size the session's client last used, in one write;
//! - after each batch with rows, when none is on its way: the next batch ([`Rows`]), with the
//!   client's own request.
//!
//! No task runs for them: the requests are written by the RPC that knows them, and their
//! replies wait in the connection (kumiho-thrift's `Client::queue`/`reply`) until read. The
//! one exception is the batch after a large one (a long result streaming), which a task
//! fetches while the client reads the current one.
//!
//! What the client sees is unchanged. A status sent ahead answers the client's first poll if
//! it is final or the poll came less than [`FRESH_STATUS`] after it; an older RUNNING is
//! dropped and the poll forwarded. Row fetches of one operation run one at a time, and the
//! engine answers pipelined calls in order, so its cursor moves exactly as the client's
//! would: a kept batch is always the client's next one, a request that moves the cursor
//! elsewhere (FETCH_FIRST, a cancel) drops what was sent ahead first, and a batch larger
//! than the client's next `maxRows` is split, the rest kept for the fetch after.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kumiho_thrift::cli::{
    TFetchOrientation, TFetchResultsReq, TFetchResultsResp, TGetOperationStatusReq,
    TGetOperationStatusResp, TGetResultSetMetadataReq, TOperationHandle, TOperationState, TStatus,
};
use kumiho_thrift::client::Queued;
use kumiho_thrift::codec::{decode_result_body, encode_result_body};
use kumiho_thrift::rowset;
use kumiho_thrift::status;
use tokio::sync::{oneshot, Mutex};

use super::execute_ahead::EngineExecute;
use super::{engine_error, no_engine_session};
use crate::errors::GatewayError;
use crate::session::{EngineLink, GatewaySession};

/// Replies at least this long (bytes) are taken for batches with rows without decoding them.
pub const MIN_REPLY_WITH_ROWS: usize = 8 * 1024;

/// A status sent ahead that says RUNNING answers the client's poll only if the client asked
/// this soon after it was sent; for a later poll it is stale, and the poll is forwarded.
pub const FRESH_STATUS: Duration = Duration::from_millis(100);

/// What the gateway sent ahead for one operation.
#[derive(Debug, Default)]
pub struct Prefetched {
    /// ExecuteStatement itself, when the client was answered before the engine
    /// ([`super::execute_ahead`]).
    execute: EngineExecute,
    /// The first GetOperationStatus, sent right after an async ExecuteStatement, and when.
    status: std::sync::Mutex<Option<(Queued, Instant)>>,
    /// GetResultSetMetadata, once the statement finished; kept for every later call too.
    metadata: std::sync::Mutex<Option<Kept>>,
    /// Whether the metadata and first batches were asked for already.
    results_asked: AtomicBool,
    /// Whether they were sent with an ExecuteStatement answered ahead, before the statement
    /// was known to finish, and that is still to be settled ([`Self::take_status`]).
    speculative: AtomicBool,
    rows: Mutex<Rows>,
}

/// A reply on its way, or read.
#[derive(Debug)]
enum Kept {
    Sent(Queued),
    Read(Bytes),
}

/// The operation's row cursor as the gateway sees it.
#[derive(Debug, Default)]
pub struct Rows {
    /// The client's next batches, sent ahead, in order.
    ahead: VecDeque<Ahead>,
    /// Whether the client has fetched rows yet (a first batch sent ahead would otherwise
    /// follow the client's own).
    client_fetched: bool,
}

#[derive(Debug)]
enum Ahead {
    /// A FETCH_NEXT of `max_rows`, sent; its reply waits in the connection.
    Sent { call: Queued, max_rows: i64 },
    /// A FETCH_NEXT of `max_rows`, sent; its reply being read by a task of its own.
    Reading {
        reply: oneshot::Receiver<Result<Bytes, GatewayError>>,
        max_rows: i64,
    },
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
    /// A statement answered ahead of the engine ([`super::execute_ahead`]): queues, behind its
    /// ExecuteStatement, its first status poll. The engine holds the poll until the statement
    /// ends (or its long-poll wait is over).
    pub fn executing(link: &mut EngineLink, execute: Queued, operation: &TOperationHandle) -> Self {
        Self {
            execute: EngineExecute::sent(execute),
            status: std::sync::Mutex::new(Some(queue_status(link, operation))),
            speculative: AtomicBool::new(true),
            ..Self::default()
        }
    }

    /// Queues, on speculation, the metadata and first batches of a statement sent with
    /// [`Self::executing`], to be written after it (the engine starts on the statement while
    /// these are made). A statement that finishes within its first poll has its results on
    /// their way before the client has even polled; one still running gets them refused, and
    /// they are settled with the status.
    pub fn speculate(
        &self,
        session: &GatewaySession,
        link: &mut EngineLink,
        operation: &TOperationHandle,
    ) {
        queue_results(session, link, self, operation);
    }

    /// Whether the engine took the statement (waiting for its reply if it is still to come);
    /// `Err` with its reason if it refused it, when the status sent behind it is dropped too.
    pub async fn executed(&self, session: &GatewaySession) -> Result<(), TStatus> {
        let refused = self.execute.outcome(session).await.err();
        match refused {
            None => Ok(()),
            Some(reason) => {
                drop(self.discard(session).await);
                Err(reason)
            }
        }
    }

    /// The status sent ahead, if it answers the client's poll: it is final, or fresh.
    /// `None`: forward the poll.
    pub async fn take_status(
        &self,
        session: &GatewaySession,
    ) -> Option<Result<Bytes, GatewayError>> {
        let (call, sent_at) = locked(&self.status).take()?;
        // Asked soon after it was sent: whatever the engine says (even after its long poll)
        // is as fresh as the answer to the client's own poll would be.
        let asked_late = sent_at.elapsed() > FRESH_STATUS;
        let reply = read(session, call).await;
        if self.speculative.swap(false, Ordering::AcqRel)
            && !matches!(&reply, Ok(status) if is_finished(status))
        {
            self.unwind_speculation(session).await;
        }
        match reply {
            Ok(reply) if asked_late && !is_final(&reply) => None,
            reply => Some(reply),
        }
    }

    /// Before the client's row fetch: a statement whose status nobody polled yet is not known
    /// to have finished, so what was sent on speculation is settled first (the status sent
    /// ahead is dropped, the client's own poll will be forwarded).
    pub async fn settle_before_fetch(&self, session: &GatewaySession) {
        if !self.speculative.swap(false, Ordering::AcqRel) {
            return;
        }
        let status = locked(&self.status).take();
        if let Some((call, _)) = status {
            if let Some(link) = session.engine.lock().await.as_mut() {
                link.client.forget(call);
            }
        }
        self.unwind_speculation(session).await;
    }

    /// Settles results sent on speculation for a statement not known to have finished: the
    /// metadata is dropped (it may predate the schema); each batch is read, a refusal
    /// ("not finished") dropped and rows kept: a statement that finished between its status
    /// and the fetch moved its cursor, and those rows are the client's first. With no rows
    /// kept, the results are sent for again once the statement finishes.
    async fn unwind_speculation(&self, session: &GatewaySession) {
        let mut rows = self.rows.lock().await;
        let mut engine = session.engine.lock().await;
        let Some(link) = engine.as_mut() else {
            return;
        };
        if let Some(Kept::Sent(call)) = locked(&self.metadata).take() {
            link.client.forget(call);
        }
        let mut kept_rows = false;
        for ahead in std::mem::take(&mut rows.ahead) {
            let Ahead::Sent { call, .. } = ahead else {
                rows.ahead.push_back(ahead);
                continue;
            };
            let Ok(reply) = link.client.reply(call).await else {
                // The connection broke: the client's next call says so.
                continue;
            };
            match decode_result_body::<TFetchResultsResp>(&reply) {
                Ok(resp) if status::is_ok(&resp.status) => {
                    rows.ahead.push_back(Ahead::Rest(resp));
                    kept_rows = true;
                }
                _ => {}
            }
        }
        if !kept_rows {
            self.results_asked.store(false, Ordering::Release);
        }
    }

    /// The metadata sent ahead, if any (read from the engine the first time).
    pub async fn metadata(&self, session: &GatewaySession) -> Option<Result<Bytes, GatewayError>> {
        let kept = locked(&self.metadata).take()?;
        let reply = match kept {
            Kept::Read(reply) => reply,
            Kept::Sent(call) => match read(session, call).await {
                Ok(reply) => reply,
                // Not kept: the client's next call asks the engine again.
                Err(error) => return Some(Err(error)),
            },
        };
        *locked(&self.metadata) = Some(Kept::Read(reply.clone()));
        Some(Ok(reply))
    }

    /// Exclusive use of the operation's row cursor, for one fetch.
    pub async fn rows(&self) -> tokio::sync::MutexGuard<'_, Rows> {
        self.rows.lock().await
    }

    /// Gives up every reply still to come (for a cancel or a close, after which nothing sent
    /// ahead is served); the engine answers them all the same, in order, before what comes
    /// next, so its cursor is where the next request expects it. Returns the session's
    /// engine connection, still locked, for the request that follows.
    pub async fn discard<'s>(
        &self,
        session: &'s GatewaySession,
    ) -> tokio::sync::MutexGuard<'s, Option<EngineLink>> {
        // The row cursor first, then the connection: the order every fetch takes them in.
        let mut rows = self.rows.lock().await;
        let row_calls = rows.settle().await;
        let mut engine = session.engine.lock().await;
        let execute = self.execute.unread();
        let status = locked(&self.status).take().map(|(call, _)| call);
        let metadata = match locked(&self.metadata).take() {
            Some(Kept::Sent(call)) => Some(call),
            _ => None,
        };
        if let Some(link) = engine.as_mut() {
            for call in execute
                .into_iter()
                .chain(status)
                .chain(metadata)
                .chain(row_calls)
            {
                link.client.forget(call);
            }
        }
        engine
    }
}

impl Rows {
    /// The client's next batch of at most `max_rows`: sent ahead, or the rest of a larger
    /// batch, or `None` (forward the request). Marks the client's first fetch.
    pub async fn take(
        &mut self,
        session: &GatewaySession,
        max_rows: i64,
    ) -> Option<Result<Batch, GatewayError>> {
        self.client_fetched = true;
        let (reply, asked) = match self.ahead.pop_front()? {
            Ahead::Sent { call, max_rows } => (read(session, call).await, max_rows),
            Ahead::Reading { reply, max_rows } => (
                reply.await.unwrap_or_else(|_| {
                    Err(GatewayError::Internal(
                        "reading a batch ahead stopped".to_owned(),
                    ))
                }),
                max_rows,
            ),
            Ahead::Rest(resp) => return Some(Ok(self.split_decoded(resp, max_rows))),
        };
        Some(reply.map(|reply| match asked <= max_rows {
            true => self.whole(reply),
            false => self.split(reply, max_rows),
        }))
    }

    /// A batch the engine sent for the client's own request.
    pub fn forwarded(&mut self, reply: Bytes) -> Batch {
        self.whole(reply)
    }

    /// Whether the batch after `served` should be fetched ahead: it held rows, and nothing is
    /// kept already (the rest of the engine's batch, or batches on their way).
    pub fn worth_reading_ahead(&self, served: &Batch) -> bool {
        served.has_rows && !served.rest_kept && self.ahead.is_empty()
    }

    /// Sends `req` (a FETCH_NEXT) ahead: its reply is the batch after those kept. After a
    /// large batch (a long result streaming) a task sends it and reads the reply as it comes,
    /// so that the gateway takes in the next batch while the client reads this one, and the
    /// client's reply goes first; after a small one it is written now and its reply waits in
    /// the connection until the client asks.
    pub async fn send_ahead(
        &mut self,
        session: &Arc<GatewaySession>,
        req: &TFetchResultsReq,
        after: &Batch,
    ) -> Result<(), GatewayError> {
        let max_rows = req.max_rows;
        if after.reply.len() >= MIN_REPLY_WITH_ROWS {
            let (sent, reply) = oneshot::channel();
            let (session, mut req) = (Arc::clone(session), req.clone());
            tokio::spawn(async move {
                // The receiver is gone when the operation was closed meanwhile.
                let _ = sent.send(super::exchange(&session, &mut req).await);
            });
            self.ahead.push_back(Ahead::Reading { reply, max_rows });
            return Ok(());
        }
        let mut engine = session.engine.lock().await;
        let link = engine.as_mut().ok_or_else(|| no_engine_session(session))?;
        self.queue_fetch(link, req);
        link.client
            .flush()
            .await
            .map_err(|e| engine_error(&link.address, e))
    }

    fn queue_fetch(&mut self, link: &mut EngineLink, req: &TFetchResultsReq) {
        let call = link.client.queue("FetchResults", req);
        self.ahead.push_back(Ahead::Sent {
            call,
            max_rows: req.max_rows,
        });
    }

    /// Gives up the batches sent ahead, and any rest (the cursor moves elsewhere). Row
    /// fetches ahead are not sent after this.
    pub async fn discard(&mut self, session: &GatewaySession) {
        let calls = self.settle().await;
        if let Some(link) = session.engine.lock().await.as_mut() {
            for call in calls {
                link.client.forget(call);
            }
        }
    }

    /// Drops what is kept, after the batches being read by tasks have arrived: their
    /// requests are then on the engine's side of whatever comes next (a FETCH_FIRST sent
    /// before a task's FETCH_NEXT would have the engine skip a batch). Returns the calls
    /// whose replies wait in the connection, to be forgotten.
    async fn settle(&mut self) -> Vec<Queued> {
        self.client_fetched = true;
        let mut waiting = Vec::new();
        for ahead in std::mem::take(&mut self.ahead) {
            match ahead {
                Ahead::Sent { call, .. } => waiting.push(call),
                Ahead::Reading { reply, .. } => {
                    let _ = reply.await;
                }
                Ahead::Rest(_) => {}
            }
        }
        waiting
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

/// After ExecuteStatement created `operation`: sends what its client asks next.
pub async fn after_execute(
    session: &GatewaySession,
    prefetched: &Prefetched,
    operation: &TOperationHandle,
    run_async: bool,
) {
    let mut engine = session.engine.lock().await;
    let Some(link) = engine.as_mut() else {
        return;
    };
    if run_async {
        *locked(&prefetched.status) = Some(queue_status(link, operation));
    } else {
        // A synchronous statement has finished when its reply comes.
        queue_results(session, link, prefetched, operation);
    }
    // Sent ahead: if the write fails, the client's own next call says so.
    let _ = link.client.flush().await;
}

/// Whether a status the client polled (`reply`, decoded by the caller, which notes it too)
/// calls for sending for the statement's results: it finished, has a result set, and they
/// were not sent for yet. Cheap: runs on every poll.
pub fn results_due(
    prefetched: &Prefetched,
    operation: &TOperationHandle,
    reply: Option<&TGetOperationStatusResp>,
) -> bool {
    operation.has_result_set
        && !prefetched.results_asked.load(Ordering::Acquire)
        && reply.and_then(reported_state) == Some(TOperationState::FINISHED_STATE)
}

/// Sends for a finished statement's results (see [`results_due`]).
pub async fn send_for_results(
    session: &GatewaySession,
    prefetched: &Prefetched,
    operation: &TOperationHandle,
) {
    let mut engine = session.engine.lock().await;
    if let Some(link) = engine.as_mut() {
        queue_results(session, link, prefetched, operation);
        let _ = link.client.flush().await;
    }
}

/// Queues a statement's first GetOperationStatus, sent ahead of the client's poll, and when.
fn queue_status(link: &mut EngineLink, operation: &TOperationHandle) -> (Queued, Instant) {
    let req = TGetOperationStatusReq {
        operation_handle: operation.clone(),
        get_progress_update: None,
    };
    (
        link.client.queue("GetOperationStatus", &req),
        Instant::now(),
    )
}

/// Queues, once, a finished statement's metadata and first two batches (in the fetch size
/// the session's client last used; no batch before the client has fetched once).
fn queue_results(
    session: &GatewaySession,
    link: &mut EngineLink,
    prefetched: &Prefetched,
    operation: &TOperationHandle,
) {
    if !operation.has_result_set || prefetched.results_asked.swap(true, Ordering::AcqRel) {
        return;
    }
    {
        let mut metadata = locked(&prefetched.metadata);
        if metadata.is_none() {
            let req = TGetResultSetMetadataReq {
                operation_handle: operation.clone(),
            };
            *metadata = Some(Kept::Sent(link.client.queue("GetResultSetMetadata", &req)));
        }
    }
    // Busy: the client is fetching already, and its fetch reads ahead for itself.
    let (Some(max_rows), Ok(mut rows)) = (session.fetch_size(), prefetched.rows.try_lock()) else {
        return;
    };
    if rows.client_fetched || !rows.ahead.is_empty() {
        return;
    }
    let req = TFetchResultsReq {
        operation_handle: operation.clone(),
        orientation: TFetchOrientation::FETCH_NEXT,
        max_rows,
        fetch_type: None,
    };
    rows.queue_fetch(link, &req);
    rows.queue_fetch(link, &req);
}

/// The engine's reply to `call`, sent ahead on the session's engine connection.
pub(super) async fn read(session: &GatewaySession, call: Queued) -> Result<Bytes, GatewayError> {
    let mut engine = session.engine.lock().await;
    let link = engine.as_mut().ok_or_else(|| no_engine_session(session))?;
    link.client
        .reply(call)
        .await
        .map_err(|e| engine_error(&link.address, e))
}

/// The operation state in a GetOperationStatus reply.
fn state(reply: &[u8]) -> Option<TOperationState> {
    decode_result_body::<TGetOperationStatusResp>(reply)
        .ok()
        .as_ref()
        .and_then(reported_state)
}

/// The operation state a successful GetOperationStatus reply reports.
fn reported_state(resp: &TGetOperationStatusResp) -> Option<TOperationState> {
    resp.operation_state.filter(|_| status::is_ok(&resp.status))
}

fn is_finished(reply: &[u8]) -> bool {
    state(reply) == Some(TOperationState::FINISHED_STATE)
}

/// Whether a status reply is one that no later poll can change (or an error).
fn is_final(reply: &[u8]) -> bool {
    state(reply).is_none_or(crate::operation::observed::is_final)
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

#[cfg(test)]
mod tests;
