//! Gateway sessions: each one's route, LaunchEngine operation, engine connection and operations.
//!
//! A session is opened at once; its engine is found or launched by a background task (the
//! LaunchEngine operation), which then opens the engine session over one engine connection
//! kept for the session's life. The manager also knows which session owns each operation
//! handle, so that operation RPCs reach the right engine connection.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dashmap::DashMap;
use kumiho_engine_launcher::{
    get_or_create, stop_engine, EngineLaunchSpec, EngineRegistration, EngineSecret, EngineSettings,
    EngineType, LaunchError, LaunchLog, Launcher, Registry, ShareLevel,
};
use kumiho_thrift::cli::{
    TCloseOperationReq, TCloseOperationResp, TCloseSessionReq, TCloseSessionResp,
    TExecuteStatementReq, TExecuteStatementResp, TOpenSessionReq, TOpenSessionResp, TOperationType,
    TProtocolVersion, TSessionHandle,
};
use kumiho_thrift::client::{Client, ClientAuth};
use kumiho_thrift::error::WireError;
use kumiho_thrift::handle::HandleId;
use kumiho_thrift::service::{CallContext, Transport};
use kumiho_thrift::session_conf::{self, USE_DATABASE_KEY};
use kumiho_thrift::status;
use tokio::sync::Semaphore;
use tokio_util::task::TaskTracker;

pub mod admission;

use crate::errors::GatewayError;
use crate::metrics::Metrics;
use crate::operation::kyuubi_commands::Answered;
use crate::operation::launch_engine::{LaunchEngine, LaunchedEngine};
use crate::operation::observed::ObservedState;
use crate::proxy::prefetch::Prefetched;
use crate::routing::{Route, Router};
use admission::{Admission, SessionCounts};

/// How long closing a session's engine side may take before its connection is dropped.
const ENGINE_CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a CONNECTION-level engine gets to exit after SIGTERM before SIGKILL.
const ENGINE_STOP_GRACE: Duration = Duration::from_secs(10);

/// The gateway's end of one engine session.
pub struct EngineLink {
    pub client: Client,
    /// The engine's handle for this session; requests are rewritten to carry it.
    pub session_handle: TSessionHandle,
    /// The engine as errors name it: `ID at HOST:PORT`.
    pub address: String,
    /// Whether the engine creates statements under handles the gateway assigns
    /// ([`crate::proxy::execute_ahead`]).
    pub accepts_assigned_ids: bool,
}

/// One client session.
pub struct GatewaySession {
    pub id: HandleId,
    /// The binary connection that opened it, whose end closes it; `None` over HTTP, where
    /// a session outlives its TCP connections.
    pub connection_id: Option<u64>,
    pub route: Route,
    pub launch: Arc<LaunchEngine>,
    client_protocol: TProtocolVersion,
    /// Set by the launch; one engine call at a time, as a HiveServer2 client sends them.
    pub engine: tokio::sync::Mutex<Option<EngineLink>>,
    /// Until taken: the next statement's log begins with the launch log (for clients that
    /// ignore the launch handle).
    launch_log_unshown: AtomicBool,
    /// When a client last used the session, for the idle-session reaper.
    last_access: LastUse,
    /// `maxRows` of the client's last row fetch (0: none yet), the size of first batches
    /// fetched ahead of it.
    fetch_size: AtomicI64,
    /// Set when the client closes the session: a launch that has not opened the engine
    /// session yet does not open it.
    closed: AtomicBool,
    /// Its operations (but the launch's), so that closing it forgets them without looking
    /// at every operation of every session. A std mutex, never held across an await.
    operation_ids: std::sync::Mutex<HashSet<HandleId>>,
    /// The frontend the client came through (binary, HTTP, REST).
    pub transport: Transport,
    /// The client's IP address.
    pub client_ip: String,
    /// When it was opened, in milliseconds since the epoch.
    pub created_ms: u64,
    /// Operations created in it so far (statements and metadata calls).
    operations_created: AtomicUsize,
    /// Its place under the cluster's session caps, given back when it closes.
    admission: Admission,
}

impl GatewaySession {
    /// Whether this caller is the first statement, whose log shows the launch log.
    pub fn take_launch_log(&self) -> bool {
        self.launch_log_unshown.swap(false, Ordering::AcqRel)
    }

    /// The number of rows the client fetches at a time, once it has fetched.
    pub fn fetch_size(&self) -> Option<i64> {
        Some(self.fetch_size.load(Ordering::Relaxed)).filter(|&rows| rows > 0)
    }

    /// Notes the `maxRows` of a row fetch by the client.
    pub fn note_fetch_size(&self, max_rows: i64) {
        self.fetch_size.store(max_rows, Ordering::Relaxed);
    }

    fn operation_ids(&self) -> std::sync::MutexGuard<'_, HashSet<HandleId>> {
        self.operation_ids
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Notes a use of the session by its client.
    pub fn touch(&self) {
        self.last_access.touch();
    }

    /// The session's engine as errors name it: `ID at HOST:PORT`.
    pub fn engine_name(&self, registration: &EngineRegistration) -> String {
        format!(
            "{} at {}",
            self.route.engine_ref.id(),
            registration.address()
        )
    }

    /// Whether a call holds the session's engine connection now (a synchronous statement
    /// that runs for hours, say): such a session is in use, however long ago the call came.
    pub fn is_busy(&self) -> bool {
        self.engine.try_lock().is_err()
    }

    /// Whether the session was closed (by its client, its connection's end, or the reaper).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// How long since the client last used the session.
    pub fn idle_for(&self) -> Duration {
        self.last_access.idle_for()
    }

    /// How many operations (statements and metadata calls) it has created.
    pub fn operations_created(&self) -> usize {
        self.operations_created.load(Ordering::Relaxed)
    }
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// When a client last used a session or an operation, for the idle reapers. A std mutex,
/// held for an assignment only.
#[derive(Debug)]
struct LastUse(std::sync::Mutex<tokio::time::Instant>);

impl LastUse {
    fn now() -> Self {
        Self(std::sync::Mutex::new(tokio::time::Instant::now()))
    }

    fn touch(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = tokio::time::Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).elapsed()
    }
}

/// What an operation handle refers to.
#[derive(Clone, Debug)]
pub enum OperationKind {
    /// An engine's operation, forwarded. `launch_log_first`: its log begins with the launch
    /// log, served on the first log fetch (cleared then).
    /// `prefetched`: replies fetched from the engine before the client asks for them.
    /// `state`: its state as the replies forwarded so far tell it.
    /// `statement`: the SQL of an ExecuteStatement, for the admin API's listing; `None` for
    /// the metadata calls.
    Engine {
        launch_log_first: Arc<AtomicBool>,
        prefetched: Arc<Prefetched>,
        state: Arc<ObservedState>,
        statement: Option<Arc<str>>,
    },
    /// The session's LaunchEngine operation.
    Launch,
    /// A statement that failed because the launch did; answered by the gateway.
    /// `log_served`: its log (the launch log) was sent once.
    LaunchFailed { log_served: Arc<AtomicBool> },
    /// One of Kyuubi's own statements, answered by the gateway.
    Answered(Arc<Answered>),
}

/// The owner and kind of an operation handle.
#[derive(Clone, Debug)]
pub struct OperationEntry {
    pub session: Arc<GatewaySession>,
    pub kind: OperationKind,
    /// When its client last used it, for the idle-operation reaper (shared by the entry's
    /// copies handed to calls).
    last_access: Arc<LastUse>,
    /// When it was created, in milliseconds since the epoch.
    pub created_ms: u64,
}

impl OperationEntry {
    fn new(session: Arc<GatewaySession>, kind: OperationKind) -> Self {
        Self {
            session,
            kind,
            last_access: Arc::new(LastUse::now()),
            created_ms: now_ms(),
        }
    }
}

/// Sessions and operations an operator closed, remembered so that their client's next call
/// is told so rather than that the handle is unknown.
const CLOSED_REMEMBERED: usize = 1024;

/// How the gateway's background work stands (the REST API's `execPool/statistic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackgroundWork {
    /// How many engine sessions may be opened at once (`engine-session-opens`).
    pub engine_session_opens: usize,
    /// Engine sessions being opened now.
    pub opening: usize,
    /// LaunchEngine operations and session cleanups in flight but not opening an engine
    /// session: looking up or launching an engine, waiting for a turn, closing.
    pub waiting: usize,
}

/// All sessions of this gateway.
pub struct SessionManager {
    sessions: DashMap<HandleId, Arc<GatewaySession>>,
    /// The open sessions of each binary connection, to close them when it ends without a
    /// scan of every session (a gateway holding 10,000 sessions sees connections end all the
    /// time).
    by_connection: DashMap<u64, Vec<HandleId>>,
    operations: DashMap<HandleId, OperationEntry>,
    pub router: Router,
    launcher: Arc<Launcher>,
    /// Bound on how long an RPC waits for its session's launch.
    pub launch_wait: Duration,
    /// Engine sessions being opened (connect, SASL, OpenSession), at most this many at once:
    /// a storm of new sessions would otherwise take the CPU from the clients' own calls
    /// (OpenSession is answered before its launch) and storm the engine too.
    engine_session_opens: Arc<Semaphore>,
    /// Launches and session cleanups, awaited on shutdown.
    tasks: TaskTracker,
    pub metrics: Arc<Metrics>,
    /// How many engine sessions may be opened at once.
    engine_session_opens_max: usize,
    /// Handles an operator closed, and why, oldest first (at most [`CLOSED_REMEMBERED`]). A
    /// std mutex, never held across an await.
    closed_by_operator: std::sync::Mutex<VecDeque<ClosedByOperator>>,
    /// Open sessions by user and client address, for the clusters' session caps.
    counts: Arc<SessionCounts>,
}

/// A session or operation an operator closed.
struct ClosedByOperator {
    /// Its guid (an operation of a closed session is remembered with the session).
    guid: uuid::Uuid,
    /// What was closed: `session` or `operation`.
    what: &'static str,
    /// Who closed it, and how.
    reason: String,
}

impl std::fmt::Debug for GatewaySession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewaySession")
            .field("id", &self.id)
            .field("user", &self.route.user)
            .finish_non_exhaustive()
    }
}

impl SessionManager {
    pub fn new(
        router: Router,
        launcher: Arc<Launcher>,
        launch_wait: Duration,
        engine_session_opens: usize,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            sessions: DashMap::new(),
            by_connection: DashMap::new(),
            operations: DashMap::new(),
            router,
            launcher,
            launch_wait,
            engine_session_opens: Arc::new(Semaphore::new(engine_session_opens)),
            tasks: TaskTracker::new(),
            metrics,
            engine_session_opens_max: engine_session_opens,
            closed_by_operator: Default::default(),
            counts: Default::default(),
        }
    }

    /// Opens a session and starts its launch; waits for the launch when the session asked
    /// for `kyuubi.session.engine.launch.async=false`.
    pub async fn open(
        &self,
        ctx: &CallContext,
        req: &TOpenSessionReq,
    ) -> Result<Arc<GatewaySession>, GatewayError> {
        let empty = BTreeMap::new();
        let conf = session_conf::normalize(req.configuration.as_ref().unwrap_or(&empty))
            .map_err(|e| GatewayError::BadRequest(e.to_string()))?;
        let login_user = ctx
            .user
            .clone()
            .or_else(|| req.username.clone())
            .filter(|user| !user.is_empty())
            .unwrap_or_else(|| "anonymous".to_owned());
        let id = HandleId::new();
        let route = self
            .router
            .route(&login_user, &conf, &id.guid.simple().to_string())
            .await?;
        let admission =
            admission::check_deny_lists(&route.cluster, &login_user, &route.user, ctx.peer.ip())
                .and_then(|()| {
                    self.counts
                        .admit(&route.cluster, &route.user, ctx.peer.ip())
                })
                .map_err(|refused| {
                    self.metrics
                        .session_refused(&route.cluster.name, refused.reason);
                    GatewayError::from(refused)
                })?;
        let launch = LaunchEngine::new(route.engine_ref.clone());
        let session = Arc::new(GatewaySession {
            id,
            connection_id: ctx.transport.is_binary().then_some(ctx.connection_id),
            route,
            launch: launch.clone(),
            client_protocol: req.client_protocol,
            engine: tokio::sync::Mutex::new(None),
            launch_log_unshown: AtomicBool::new(true),
            last_access: LastUse::now(),
            fetch_size: AtomicI64::new(0),
            closed: AtomicBool::new(false),
            operation_ids: Default::default(),
            transport: ctx.transport,
            client_ip: ctx.peer.ip().to_string(),
            created_ms: now_ms(),
            operations_created: AtomicUsize::new(0),
            admission,
        });
        self.sessions.insert(id, session.clone());
        if let Some(connection) = session.connection_id {
            self.by_connection.entry(connection).or_default().push(id);
        }
        self.operations.insert(
            launch.handle,
            OperationEntry::new(session.clone(), OperationKind::Launch),
        );
        tracing::info!(
            session = %id, user = %session.route.user, cluster = %session.route.cluster.name,
            engine = %session.route.engine_ref.id(), "session opened"
        );
        self.metrics
            .session_opened(ctx, &session.route.cluster.name);
        self.tasks.spawn(run_launch(
            session.clone(),
            self.launcher.clone(),
            self.engine_session_opens.clone(),
            self.metrics.clone(),
        ));
        if !session.route.launch_async {
            if let Err(e) = launch.wait(self.launch_wait).await {
                self.close(&id).await;
                return Err(e);
            }
        }
        Ok(session)
    }

    /// The session of a handle (guid and secret must both match).
    pub fn session(&self, handle: &TSessionHandle) -> Result<Arc<GatewaySession>, GatewayError> {
        let id = HandleId::from_session(handle);
        let session = id
            .and_then(|id| self.sessions.get(&id).map(|s| s.clone()))
            .ok_or_else(|| self.unknown("session", id))?;
        session.touch();
        Ok(session)
    }

    /// The error for a handle this gateway does not hold: why, if an operator closed it.
    fn unknown(&self, what: &'static str, id: Option<HandleId>) -> GatewayError {
        match id.and_then(|id| self.closed_by_operator(&id.guid)) {
            Some(closed) => closed,
            None => GatewayError::InvalidHandle { what },
        }
    }

    /// The error for the session or operation `guid` if an operator closed it lately (an
    /// operation of a session an operator closed says the session was).
    pub fn closed_by_operator(&self, guid: &uuid::Uuid) -> Option<GatewayError> {
        self.closed_memory()
            .iter()
            .find(|closed| closed.guid == *guid)
            .map(|closed| GatewayError::Closed {
                what: closed.what,
                reason: closed.reason.clone(),
            })
    }

    fn closed_memory(&self) -> std::sync::MutexGuard<'_, VecDeque<ClosedByOperator>> {
        self.closed_by_operator
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn remember_closed(
        &self,
        guids: impl IntoIterator<Item = uuid::Uuid>,
        what: &'static str,
        reason: &str,
    ) {
        let mut memory = self.closed_memory();
        for guid in guids {
            if memory.len() >= CLOSED_REMEMBERED {
                memory.pop_front();
            }
            memory.push_back(ClosedByOperator {
                guid,
                what,
                reason: reason.to_owned(),
            });
        }
    }

    /// The open session whose handle has this guid (the REST API names sessions by guid).
    pub fn find(&self, guid: &uuid::Uuid) -> Option<Arc<GatewaySession>> {
        self.sessions
            .iter()
            .find(|s| s.id.guid == *guid)
            .map(|s| s.value().clone())
    }

    /// Closes a session for an operator (`reason` says who and how); its client's next call
    /// is told so. False if it is not open.
    pub async fn close_for_operator(&self, id: &HandleId, reason: String) -> bool {
        let Some(session) = self.sessions.get(id).map(|s| s.clone()) else {
            return false;
        };
        let operations: Vec<uuid::Uuid> =
            session.operation_ids().iter().map(|op| op.guid).collect();
        self.remember_closed(
            std::iter::once(id.guid)
                .chain(std::iter::once(session.launch.handle.guid))
                .chain(operations),
            "session",
            &reason,
        );
        self.close(id).await
    }

    /// The open client operations (sessions' LaunchEngine operations left out), oldest first.
    pub fn operations_snapshot(&self) -> Vec<(HandleId, OperationEntry)> {
        let mut operations: Vec<(HandleId, OperationEntry)> = self
            .operations
            .iter()
            .filter(|entry| {
                !matches!(entry.kind, OperationKind::Launch) && !entry.session.is_closed()
            })
            .map(|entry| (*entry.key(), entry.value().clone()))
            .collect();
        operations.sort_by_key(|(_, entry)| entry.created_ms);
        operations
    }

    /// Closes a client operation for an operator, here and in its engine; its client's next
    /// call on it is told so. False if it is not open.
    pub async fn close_operation_for_operator(&self, id: &HandleId, reason: String) -> bool {
        let Some(entry) = self.operations.get(id).map(|entry| entry.clone()) else {
            return false;
        };
        if matches!(entry.kind, OperationKind::Launch) {
            return false;
        }
        self.remember_closed([id.guid], "operation", &reason);
        self.close_operation(*id, entry).await
    }

    /// How the background work stands now.
    pub fn background_work(&self) -> BackgroundWork {
        let max = self.engine_session_opens_max;
        let opening = max.saturating_sub(self.engine_session_opens.available_permits());
        BackgroundWork {
            engine_session_opens: max,
            opening,
            waiting: self.tasks.len().saturating_sub(opening),
        }
    }

    /// The session of a handle without counting as a use of it (the REST API's listings).
    pub fn peek(&self, handle: &TSessionHandle) -> Option<Arc<GatewaySession>> {
        HandleId::from_session(handle).and_then(|id| self.sessions.get(&id).map(|s| s.clone()))
    }

    /// Whether an operation handle is open, without counting as a use of it (the REST API's
    /// bookkeeping).
    pub fn has_operation(&self, handle: &kumiho_thrift::cli::TOperationHandle) -> bool {
        HandleId::from_operation(handle).is_some_and(|id| {
            self.operations
                .get(&id)
                .is_some_and(|entry| !entry.session.is_closed())
        })
    }

    /// The owner and kind of an operation handle.
    pub fn operation(
        &self,
        handle: &kumiho_thrift::cli::TOperationHandle,
    ) -> Result<OperationEntry, GatewayError> {
        let entry = HandleId::from_operation(handle)
            .and_then(|id| self.operations.get(&id).map(|entry| entry.clone()))
            // Recorded by a call that ended after its session was closed.
            .filter(|entry| !entry.session.is_closed())
            .ok_or_else(|| self.unknown("operation", HandleId::from_operation(handle)))?;
        entry.last_access.touch();
        entry.session.touch();
        Ok(entry)
    }

    /// Remembers that `session` owns the operation `handle`.
    pub fn record_operation(
        &self,
        handle: HandleId,
        session: &Arc<GatewaySession>,
        kind: OperationKind,
    ) {
        self.operations
            .insert(handle, OperationEntry::new(session.clone(), kind));
        session.operation_ids().insert(handle);
        session.operations_created.fetch_add(1, Ordering::Relaxed);
        // Recorded by a call that ended after its session was closed: the close may have
        // taken the session's operations before this one was among them.
        if session.is_closed() {
            self.operations.remove(&handle);
        }
        self.metrics.operation_created();
    }

    /// Forgets an operation handle.
    pub fn forget_operation(&self, handle: &kumiho_thrift::cli::TOperationHandle) {
        if let Some(id) = HandleId::from_operation(handle) {
            if let Some((_, entry)) = self.operations.remove(&id) {
                entry.session.operation_ids().remove(&id);
            }
        }
    }

    /// Closes a session: forgets it and its operations, closes its engine session, and stops
    /// its engine if the engine was the session's alone (CONNECTION). If the launch is still
    /// running, the engine side is cleaned up in the background once it ends.
    pub async fn close(&self, id: &HandleId) -> bool {
        let Some((_, session)) = self.sessions.remove(id) else {
            return false;
        };
        session.closed.store(true, Ordering::Release);
        session.admission.release();
        if let Some(connection) = session.connection_id {
            self.by_connection.remove_if_mut(&connection, |_, ids| {
                ids.retain(|open| open != id);
                ids.is_empty()
            });
        }
        self.operations.remove(&session.launch.handle);
        let operations = std::mem::take(&mut *session.operation_ids());
        for operation in operations {
            self.operations.remove(&operation);
        }
        tracing::info!(session = %id, user = %session.route.user, "session closed");
        // A task of its own, so that it ends even if this call is dropped half-way (a client
        // that hangs up right after sending CloseSession): a CONNECTION engine still stops.
        let cleanup = self
            .tasks
            .spawn(close_engine_side(session.clone(), self.launch_wait));
        if session.launch.state().is_final() {
            let _ = cleanup.await;
        }
        true
    }

    /// Closes every session a binary connection opened (the client hung up without
    /// CloseSession).
    pub async fn close_connection(&self, connection_id: u64) {
        let Some((_, orphans)) = self.by_connection.remove(&connection_id) else {
            return;
        };
        for id in orphans {
            tracing::info!(session = %id, "client disconnected without closing its session; closing it");
            self.close(&id).await;
        }
    }

    /// Closes sessions no client has used for `timeout` (HTTP clients that vanished, or
    /// binary clients that keep a connection open and forget it); returns how many. A session
    /// with a call in flight is in use, and a call's end counts as a use.
    pub async fn close_idle(&self, timeout: Duration) -> usize {
        let idle: Vec<HandleId> = self
            .sessions
            .iter()
            .filter(|s| s.idle_for() >= timeout && !s.is_busy())
            .map(|s| s.id)
            .collect();
        for id in &idle {
            tracing::info!(session = %id, idle_timeout = %crate::duration::format(timeout), "closing idle session");
            self.close(id).await;
        }
        idle.len()
    }

    /// Closes the operations no client has used for `timeout`, here and in their engines
    /// (Kyuubi's `kyuubi.operation.idle.timeout`); returns how many. The client's next call on
    /// one is told it is unknown (closed or timed out). A session's LaunchEngine operation
    /// lives with the session, and a session with a call in flight is in use.
    pub async fn close_idle_operations(&self, timeout: Duration) -> usize {
        let idle: Vec<(HandleId, OperationEntry)> = self
            .operations
            .iter()
            .filter(|entry| {
                !matches!(entry.kind, OperationKind::Launch)
                    && entry.last_access.idle_for() >= timeout
                    && !entry.session.is_busy()
            })
            .map(|entry| (*entry.key(), entry.value().clone()))
            .collect();
        let mut closed = 0;
        for (id, entry) in idle {
            tracing::info!(
                session = %entry.session.id, operation = %id,
                idle_timeout = %crate::duration::format(timeout), "closing idle operation"
            );
            if self.close_operation(id, entry).await {
                closed += 1;
            }
        }
        closed
    }

    /// Forgets an operation and closes it in its engine; false if it was gone already.
    async fn close_operation(&self, id: HandleId, entry: OperationEntry) -> bool {
        if self.operations.remove(&id).is_none() {
            return false;
        }
        entry.session.operation_ids().remove(&id);
        if let OperationKind::Engine { prefetched, .. } = &entry.kind {
            let req = TCloseOperationReq {
                operation_handle: id.operation_handle(TOperationType::EXECUTE_STATEMENT, true),
            };
            let closing = crate::proxy::close_in_engine(&entry.session, prefetched, &req);
            if tokio::time::timeout(ENGINE_CLOSE_TIMEOUT, closing)
                .await
                .is_err()
            {
                tracing::warn!(session = %entry.session.id, operation = %id, "the engine did not take the close of an operation in time");
            }
        }
        true
    }

    /// The open sessions, for the metrics scraped from them.
    pub fn snapshot(&self) -> Vec<Arc<GatewaySession>> {
        self.sessions.iter().map(|s| s.value().clone()).collect()
    }

    /// Number of open client operations (sessions' LaunchEngine operations not counted).
    pub fn client_operations(&self) -> usize {
        self.operations
            .iter()
            .filter(|entry| !matches!(entry.kind, OperationKind::Launch))
            .count()
    }

    /// Number of open sessions.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Closes every session and waits (up to `grace`) for launches and cleanups to end.
    /// Shared engines keep running; CONNECTION engines stop with their sessions.
    pub async fn shutdown(&self, grace: Duration) {
        let ids: Vec<HandleId> = self.sessions.iter().map(|s| s.id).collect();
        for id in ids {
            self.close(&id).await;
        }
        self.tasks.close();
        if tokio::time::timeout(grace, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                tasks = self.tasks.len(),
                "shutdown grace over; abandoning unfinished launches and cleanups"
            );
        }
    }
}

/// The LaunchEngine operation's work: find or start the engine, then open the engine session.
async fn run_launch(
    session: Arc<GatewaySession>,
    launcher: Arc<Launcher>,
    opens: Arc<Semaphore>,
    metrics: Arc<Metrics>,
) {
    let launch = &session.launch;
    launch.set_running();
    match launch_and_connect(&session, &launcher, &opens, &metrics).await {
        Ok((registration, link)) => {
            *session.engine.lock().await = link;
            launch.finish(LaunchedEngine {
                engine_ref: session.route.engine_ref.clone(),
                registration,
            });
        }
        Err(reason) => {
            tracing::warn!(session = %session.id, engine = %session.route.engine_ref.id(), %reason, "engine launch failed");
            launch.fail(reason);
        }
    }
}

async fn launch_and_connect(
    session: &GatewaySession,
    launcher: &Launcher,
    opens: &Semaphore,
    metrics: &Metrics,
) -> Result<(EngineRegistration, Option<EngineLink>), String> {
    let route = &session.route;
    let log = &session.launch.log;
    let cluster = &route.cluster;
    let dir = &route.registry_dir;
    let secret = route.secret.clone();
    let engine = &cluster.config.engine;
    let spec = EngineLaunchSpec {
        engine_ref: route.engine_ref.clone(),
        cluster: cluster.name.clone(),
        bind_host: engine.bind_host.clone(),
        secret: secret.clone(),
        env: cluster.config.env.clone(),
        max_engines: cluster.config.limits.max_engines,
        settings: match route.engine_ref.engine_type {
            EngineType::DataFusion => {
                EngineSettings::DataFusion(engine.datafusion.to_launch_settings())
            }
            EngineType::SparkSql => {
                // The engine's owner: its user, its group, or (SERVER) the gateway itself.
                let engine_ref = &route.engine_ref;
                let runs_as = (engine_ref.share_level != ShareLevel::Server)
                    .then_some(engine_ref.routing_user.as_str());
                EngineSettings::Spark(
                    engine
                        .spark
                        .to_launch_settings(&route.conf.settings, runs_as),
                )
            }
        },
        idle_timeout: route.idle_timeout,
        initialize_timeout: route.initialize_timeout,
        log_path: EngineLaunchSpec::default_log_path(dir, &route.engine_ref),
    };
    log.push(format!(
        "session of {} on cluster {}: engine {} ({} level)",
        route.user,
        cluster.name,
        route.engine_ref.id(),
        route.engine_ref.share_level
    ));
    if !route.ignored_keys.is_empty() {
        log.push(format!(
            "settings ignored by cluster {} (session-conf.ignore): {}",
            cluster.name,
            route.ignored_keys.join(", ")
        ));
    }
    let registry = route.registry.as_ref();
    let mut registration = find_or_launch(registry, launcher, &spec, log, metrics)
        .await
        .map_err(|e| e.to_string())?;
    let mut looked_again = false;
    loop {
        let address = registration.address();
        log.push(format!("opening a session on engine {address}"));
        // Never closed, so acquiring cannot fail; waiting is in order of arrival.
        let turn = opens.acquire().await.map_err(|e| e.to_string())?;
        if session.is_closed() {
            // Closed while it waited (a client that connects and hangs up, a storm's end): an
            // engine session now would only be closed again. The launch still finishes, so
            // that a CONNECTION engine is stopped with the session.
            log.push("the session was closed before its engine session was opened".to_owned());
            return Ok((registration, None));
        }
        match open_engine_session(session, &registration, &secret).await {
            Ok(link) => return Ok((registration, Some(link))),
            // A registration outliving its engine (killed: ZooKeeper keeps its node until
            // its session times out): removed, so that this session and every later one get
            // a new engine instead of the same refusal, as Kyuubi's
            // `kyuubi.session.engine.open.onFailure=DEREGISTER_IMMEDIATELY` does. Once: an
            // engine launched now that is gone as well is a failed launch.
            Err(OpenError::EngineGone(reason)) if !looked_again => {
                drop(turn);
                looked_again = true;
                log.push(format!(
                    "nothing listens at {address} ({reason}): the engine is gone; removing its \
                     registration and looking again"
                ));
                tracing::warn!(
                    session = %session.id, engine = %route.engine_ref.id(), %address, %reason,
                    "registered engine is gone; removing its registration"
                );
                registry
                    .remove_dead_engine(&registration)
                    .await
                    .map_err(|e| format!("removing the registration of engine {address}: {e}"))?;
                registration = find_or_launch(registry, launcher, &spec, log, metrics)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Err(e) => return Err(format!("engine at {address}: {e}")),
        }
    }
}

/// [`get_or_create`], its launches counted and timed in the metrics.
async fn find_or_launch(
    registry: &dyn Registry,
    launcher: &Launcher,
    spec: &EngineLaunchSpec,
    log: &LaunchLog,
    metrics: &Metrics,
) -> Result<EngineRegistration, LaunchError> {
    let started = std::time::Instant::now();
    let result = get_or_create(registry, launcher, spec, log).await;
    metrics.engine_lookup_ended(
        &spec.cluster,
        spec.engine_ref.engine_type,
        &result,
        started.elapsed(),
    );
    result
}

/// Why an engine session could not be opened.
#[derive(Debug, thiserror::Error)]
enum OpenError {
    /// Nothing listens at the registered address: the engine is gone.
    #[error("{0}")]
    EngineGone(String),
    /// Anything else (authentication, the engine's refusal, a broken connection).
    #[error("{0}")]
    Failed(String),
}

impl From<String> for OpenError {
    fn from(reason: String) -> Self {
        OpenError::Failed(reason)
    }
}

/// Connects to the engine as the session's user with the internal secret and opens the
/// engine session with the client's (normalised) settings.
async fn open_engine_session(
    session: &GatewaySession,
    registration: &EngineRegistration,
    secret: &EngineSecret,
) -> Result<EngineLink, OpenError> {
    let auth = ClientAuth::Plain {
        user: session.route.user.clone(),
        password: secret.expose().to_owned(),
    };
    let connecting = crate::engine_connect::connect(registration, auth);
    // The route's login timeout (Kyuubi's `kyuubi.session.engine.login.timeout`): an engine
    // that accepts connections but answers nothing (hung, stopped) fails the session instead
    // of holding its launch, and a turn of `engine-session-opens`, for ever. OpenSession
    // itself gets the initialize timeout.
    let login_timeout = session.route.login_timeout;
    let Ok(connected) = tokio::time::timeout(login_timeout, connecting).await else {
        return Err(OpenError::Failed(unanswered(login_timeout)));
    };
    let mut client = match connected {
        Ok(client) => client,
        Err(e) if e.is_hang_up() || refused(&e) => {
            // Refused, or cut off by an engine on its way out (a connection it had not yet
            // accepted): gone if nothing listens there any more.
            return Err(match refused(&e) || nothing_listens(registration).await {
                true => OpenError::EngineGone(e.to_string()),
                false => OpenError::Failed(e.to_string()),
            });
        }
        Err(e) => return Err(OpenError::Failed(e.to_string())),
    };
    let mut configuration = session.route.conf.settings.clone();
    if let Some(database) = &session.route.conf.database {
        configuration.insert(USE_DATABASE_KEY.to_owned(), database.clone());
    }
    let req = TOpenSessionReq {
        client_protocol: session.client_protocol,
        username: Some(session.route.user.clone()),
        password: None,
        configuration: Some(configuration),
    };
    let opening = client.call::<_, TOpenSessionResp>("OpenSession", &req);
    let resp = tokio::time::timeout(session.route.initialize_timeout, opening)
        .await
        .map_err(|_| unanswered(session.route.initialize_timeout))?
        .map_err(|e| e.to_string())?;
    if !status::is_ok(&resp.status) {
        return Err(OpenError::Failed(resp.status.error_message.unwrap_or_else(
            || "OpenSession failed without a message".to_owned(),
        )));
    }
    let session_handle = resp.session_handle.ok_or_else(|| {
        OpenError::Failed("the engine's OpenSession reply has no session handle".to_owned())
    })?;
    let accepts_assigned_ids = resp
        .configuration
        .as_ref()
        .and_then(|conf| conf.get(kumiho_thrift::assigned_id::ACCEPTED_KEY))
        .is_some_and(|value| value == "true");
    if session.route.engine_ref.engine_type == EngineType::SparkSql {
        apply_spark_session_conf(session, &mut client, &session_handle).await?;
    }
    Ok(EngineLink {
        client,
        session_handle,
        address: session.engine_name(registration),
        accepts_assigned_ids,
    })
}

/// What a session is told of an engine that accepted its connection and then kept silent.
pub(crate) fn unanswered(waited: Duration) -> String {
    format!(
        "no answer within {}: the engine is hung or overloaded; ask an operator to check it \
         (once it is stopped, the next session launches a new one)",
        crate::duration::format(waited)
    )
}

fn refused(error: &WireError) -> bool {
    matches!(error, WireError::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused)
}

/// Whether a connection to the engine's address is refused: no process listens there.
async fn nothing_listens(registration: &EngineRegistration) -> bool {
    let connecting = tokio::net::TcpStream::connect(registration.address());
    matches!(
        tokio::time::timeout(Duration::from_secs(5), connecting).await,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused
    )
}

/// Applies the session's `spark.*` keys to its Spark engine session with `SET key=value`.
///
/// The Spark Thrift Server applies OpenSession keys only in the `set:hiveconf:` form, and
/// there it refuses the whole session for a key it cannot change at runtime (launch settings,
/// which a session also carries). So each key is set
/// on its own, as Kyuubi's Spark engine does: runtime settings (`spark.sql.shuffle.partitions`)
/// take effect, the ones Spark refuses (static settings such as `spark.sql.warehouse.dir`) are
/// noted in the launch log and skipped. Only a broken connection fails the session.
async fn apply_spark_session_conf(
    session: &GatewaySession,
    client: &mut Client,
    handle: &TSessionHandle,
) -> Result<(), String> {
    let log = &session.launch.log;
    for (key, value) in session
        .route
        .conf
        .settings
        .iter()
        .filter(|(k, _)| k.starts_with("spark."))
    {
        let req = TExecuteStatementReq {
            session_handle: handle.clone(),
            statement: format!("SET {key}={value}"),
            conf_overlay: None,
            run_async: Some(false),
            query_timeout: None,
        };
        let resp: TExecuteStatementResp = client
            .call("ExecuteStatement", &req)
            .await
            .map_err(|e| format!("setting {key} on the Spark session: {e}"))?;
        if let Some(operation_handle) = resp.operation_handle {
            let close = TCloseOperationReq { operation_handle };
            let _: TCloseOperationResp = client
                .call("CloseOperation", &close)
                .await
                .map_err(|e| format!("setting {key} on the Spark session: {e}"))?;
        }
        if status::is_ok(&resp.status) {
            log.push(format!("SET {key}: done"));
        } else {
            let reason = resp.status.error_message.unwrap_or_default();
            let reason = reason.lines().next().unwrap_or_default();
            log.push(format!(
                "SET {key}: refused by Spark, ignored (a launch setting takes effect only when a \
                 session launches the engine): {reason}"
            ));
        }
    }
    Ok(())
}

/// After a session is forgotten: close its engine session, and stop a CONNECTION engine.
async fn close_engine_side(session: Arc<GatewaySession>, launch_wait: Duration) {
    let Ok(engine) = session.launch.wait(launch_wait).await else {
        return;
    };
    let closing = async {
        let link = session.engine.lock().await.take();
        if link.as_ref().is_some_and(|link| link.client.is_cut_off()) {
            // A call was cut off when the client hung up (a synchronous query, a status poll
            // held by the engine): the engine answers in order, so a CloseSession would wait
            // for that call to end. Hanging up instead ends the engine session, and its
            // operations, at once: the engine closes the sessions of a connection that ends.
            tracing::debug!(session = %session.id, "closing the engine session by hanging up");
        } else if let Some(mut link) = link {
            let req = TCloseSessionReq {
                session_handle: link.session_handle.clone(),
            };
            match link
                .client
                .call::<_, TCloseSessionResp>("CloseSession", &req)
                .await
            {
                Ok(resp) if !status::is_ok(&resp.status) => {
                    tracing::debug!(session = %session.id, message = ?resp.status.error_message, "engine refused CloseSession")
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(session = %session.id, error = %e, "engine CloseSession failed")
                }
            }
        }
    };
    // A hung engine must not hold the client's CloseSession, the reaper or shutdown: past
    // the bound the connection is dropped, and the engine closes the session with it.
    if tokio::time::timeout(ENGINE_CLOSE_TIMEOUT, closing)
        .await
        .is_err()
    {
        tracing::warn!(
            session = %session.id, engine = %session.route.engine_ref.id(),
            "the engine did not close the session within {}; dropped its connection",
            crate::duration::format(ENGINE_CLOSE_TIMEOUT)
        );
    }
    if session.route.engine_ref.share_level == ShareLevel::Connection {
        if let Some(pid) = engine.registration.pid {
            let stopped = stop_engine(pid, ENGINE_STOP_GRACE).await;
            tracing::info!(engine = %session.route.engine_ref.id(), pid, ?stopped, "CONNECTION engine stopped with its session");
        }
    }
}
