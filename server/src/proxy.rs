//! The gateway's HiveServer2 service: each RPC resolved to its session, held until the engine
//! is up, rewritten, and forwarded as bytes.
//!
//! Forwarding runs as phases with one driver ([`Gateway::forward`]) and one error handler
//! ([`Gateway::reply_error`]):
//!
//! 1. resolve: the session handle (or the operation handle's owner) → gateway session;
//!    unknown → INVALID_HANDLE;
//! 2. wait: for the session's LaunchEngine (bounded); a failed launch → its reason and log;
//! 3. rewrite: the gateway's session handle → the engine's (operation handles pass as they
//!    are: the engine made them, and its guids are unique);
//! 4. forward: over the session's engine connection; the reply stays bytes (a FetchResults
//!    row set is never decoded);
//! 5. record: replies that create an operation (small) are decoded for its handle, so that
//!    later operation RPCs find their session.
//!
//! Where the client's next request is known, the gateway sends it ahead ([`prefetch`]): a
//! statement's first status, a finished statement's metadata and first batches, the batch
//! after one with rows. CloseOperation is answered at once and sent to the engine behind the
//! reply; CancelOperation goes on a connection of its own, never behind a call in flight.
//!
//! OpenSession, CloseSession, GetInfo's name and version (unless the engine is to give them),
//! and the gateway's own operations (LaunchEngine, statements failed by their launch) are
//! answered here.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use kumiho_thrift::cli::*;
use kumiho_thrift::client::ClientAuth;
use kumiho_thrift::codec::decode_result_body;
use kumiho_thrift::handle::HandleId;
use kumiho_thrift::service::{CallContext, CliService, Reply};
use kumiho_thrift::status::{self, FromStatus};
use thrift::protocol::TSerializable;

use crate::cluster::InfoProvider;
use crate::errors::GatewayError;
use crate::operation::kyuubi_commands::{self, Answered, KyuubiCommand};
use crate::operation::launch_engine::LaunchState;
use crate::operation::observed::ObservedState;
use crate::operation::{log_reply, FETCH_TYPE_LOG};
use crate::session::{GatewaySession, OperationEntry, OperationKind, SessionManager};
use prefetch::Prefetched;

pub(crate) mod execute_ahead;
pub(crate) mod prefetch;

/// Name the gateway gives in GetInfo (beeline prints "Connected to: Kumiho (version V)").
pub const SERVER_NAME: &str = "Kumiho";
/// Fetch size suggested to clients in the OpenSession reply.
pub const DEFAULT_FETCH_SIZE: u32 = 1000;
/// Highest protocol version the gateway speaks (Hive JDBC 2.3 accepts up to V10).
pub const MAX_PROTOCOL: TProtocolVersion = TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10;

/// OpenSession reply keys of the launch handle (Kyuubi's names).
pub mod launch_keys {
    pub const GUID: &str = "kyuubi.session.engine.launch.handle.guid";
    pub const SECRET: &str = "kyuubi.session.engine.launch.handle.secret";
    pub const SUPPORT_RESULT: &str = "kyuubi.session.engine.launch.support.result";
    pub const FETCH_SIZE: &str = "hive.server2.thrift.resultset.default.fetch.size";
}

/// The gateway's [`CliService`].
pub struct Gateway {
    pub sessions: Arc<SessionManager>,
}

/// What a forwarded request is addressed to.
enum Target<'a> {
    Session(&'a TSessionHandle),
    Operation(&'a TOperationHandle),
}

/// A request the gateway forwards to the engine, with what the driver needs to know of it.
trait Forwarded: TSerializable + Send + Sync + 'static {
    type Resp: TSerializable + FromStatus + Send + 'static;
    /// The RPC's wire name.
    const METHOD: &'static str;
    fn target(&self) -> Target<'_>;
    /// Puts the engine's session handle in place of the gateway's (session RPCs only).
    fn rewrite(&mut self, _engine_session: &TSessionHandle) {}
    /// The operation a successful reply creates, for the RPCs that create one.
    fn created_operation(_resp: &Self::Resp) -> Option<&TOperationHandle> {
        None
    }
    /// Whether replies must be decoded to record a created operation.
    const CREATES_OPERATION: bool = false;
}

/// Session RPCs that create an operation: `Req => Resp`.
macro_rules! session_operation_rpcs {
    ($($method:literal: $req:ty => $resp:ident),* $(,)?) => {$(
        impl Forwarded for $req {
            type Resp = $resp;
            const METHOD: &'static str = $method;
            const CREATES_OPERATION: bool = true;
            fn target(&self) -> Target<'_> {
                Target::Session(&self.session_handle)
            }
            fn rewrite(&mut self, engine_session: &TSessionHandle) {
                self.session_handle = engine_session.clone();
            }
            fn created_operation(resp: &$resp) -> Option<&TOperationHandle> {
                resp.operation_handle.as_ref().filter(|_| status::is_ok(&resp.status))
            }
        }
    )*};
}

session_operation_rpcs! {
    "ExecuteStatement": TExecuteStatementReq => TExecuteStatementResp,
    "GetTypeInfo": TGetTypeInfoReq => TGetTypeInfoResp,
    "GetCatalogs": TGetCatalogsReq => TGetCatalogsResp,
    "GetSchemas": TGetSchemasReq => TGetSchemasResp,
    "GetTables": TGetTablesReq => TGetTablesResp,
    "GetTableTypes": TGetTableTypesReq => TGetTableTypesResp,
    "GetColumns": TGetColumnsReq => TGetColumnsResp,
    "GetFunctions": TGetFunctionsReq => TGetFunctionsResp,
    "GetPrimaryKeys": TGetPrimaryKeysReq => TGetPrimaryKeysResp,
    "GetCrossReference": TGetCrossReferenceReq => TGetCrossReferenceResp,
}

impl Forwarded for TGetInfoReq {
    type Resp = TGetInfoResp;
    const METHOD: &'static str = "GetInfo";
    fn target(&self) -> Target<'_> {
        Target::Session(&self.session_handle)
    }
    fn rewrite(&mut self, engine_session: &TSessionHandle) {
        self.session_handle = engine_session.clone();
    }
}

/// Operation RPCs: `Req => Resp`.
macro_rules! operation_rpcs {
    ($($method:literal: $req:ty => $resp:ident),* $(,)?) => {$(
        impl Forwarded for $req {
            type Resp = $resp;
            const METHOD: &'static str = $method;
            fn target(&self) -> Target<'_> {
                Target::Operation(&self.operation_handle)
            }
        }
    )*};
}

operation_rpcs! {
    "GetOperationStatus": TGetOperationStatusReq => TGetOperationStatusResp,
    "CancelOperation": TCancelOperationReq => TCancelOperationResp,
    "CloseOperation": TCloseOperationReq => TCloseOperationResp,
    "GetResultSetMetadata": TGetResultSetMetadataReq => TGetResultSetMetadataResp,
    "FetchResults": TFetchResultsReq => TFetchResultsResp,
}

impl Gateway {
    pub fn new(sessions: Arc<SessionManager>) -> Self {
        Self { sessions }
    }

    /// The driver: runs the phases in order and sends any failure to [`Self::reply_error`].
    async fn forward<R: Forwarded>(&self, req: R) -> Reply<R::Resp> {
        match self.try_forward(req).await {
            Ok(reply) => reply,
            Err(error) => self.reply_error::<R>(error),
        }
    }

    /// The one error handler: logs by whose fault it is and answers with the error status.
    fn reply_error<R: Forwarded>(&self, error: GatewayError) -> Reply<R::Resp> {
        if error.is_clients_fault() {
            tracing::debug!(rpc = R::METHOD, %error, "request refused");
        } else {
            tracing::warn!(rpc = R::METHOD, %error, "request failed");
        }
        Reply::Typed(R::Resp::from_status(error.to_status()))
    }

    async fn try_forward<R: Forwarded>(&self, req: R) -> Result<Reply<R::Resp>, GatewayError> {
        self.try_forward_bytes(req).await.map(Reply::Encoded)
    }

    /// The phases in order; the engine's reply as bytes.
    async fn try_forward_bytes<R: Forwarded>(&self, req: R) -> Result<Bytes, GatewayError> {
        // An operation created by a synchronous call's reply has done its work.
        self.try_forward_recorded(req, TOperationState::FINISHED_STATE, None)
            .await
            .map(|(bytes, _)| bytes)
    }

    /// The phases in order; the engine's reply as bytes, and the operation it created, in
    /// `state` as far as the gateway knows, running `statement` (ExecuteStatement's).
    async fn try_forward_recorded<R: Forwarded>(
        &self,
        mut req: R,
        state: TOperationState,
        statement: Option<Arc<str>>,
    ) -> Result<(Bytes, Option<Created>), GatewayError> {
        let session = self.resolve(req.target())?;
        self.wait_for_engine(&session).await?;
        let bytes = exchange(&session, &mut req).await?;
        let created = match R::CREATES_OPERATION {
            true => self.record::<R>(&session, &bytes, state, statement)?,
            false => None,
        };
        Ok((bytes, created))
    }

    /// Phase 1: the gateway session a request belongs to.
    fn resolve(&self, target: Target<'_>) -> Result<Arc<GatewaySession>, GatewayError> {
        match target {
            Target::Session(handle) => self.sessions.session(handle),
            Target::Operation(handle) => Ok(self.sessions.operation(handle)?.session),
        }
    }

    /// Phase 2: the session's engine is up (or why it is not).
    async fn wait_for_engine(&self, session: &GatewaySession) -> Result<(), GatewayError> {
        session
            .launch
            .wait(self.sessions.launch_wait)
            .await
            .map(drop)
    }

    /// Phase 5: remember which session owns the operation a reply created.
    fn record<R: Forwarded>(
        &self,
        session: &Arc<GatewaySession>,
        bytes: &[u8],
        state: TOperationState,
        statement: Option<Arc<str>>,
    ) -> Result<Option<Created>, GatewayError> {
        let resp: R::Resp = decode_result_body(bytes).map_err(|e| {
            GatewayError::EngineRefused(format!(
                "unreadable {} reply from the engine: {e}",
                R::METHOD
            ))
        })?;
        let Some(operation) = R::created_operation(&resp) else {
            return Ok(None);
        };
        let Some(handle) = HandleId::from_operation(operation) else {
            return Ok(None);
        };
        let prefetched =
            self.record_engine_operation(session, handle, statement, Prefetched::default(), state);
        Ok(Some(Created {
            operation: operation.clone(),
            prefetched,
        }))
    }

    /// Records an engine's operation as the session's, in `state`; a statement's (`statement`
    /// is its SQL) log begins with the launch log if it is the session's first.
    fn record_engine_operation(
        &self,
        session: &Arc<GatewaySession>,
        handle: HandleId,
        statement: Option<Arc<str>>,
        prefetched: Prefetched,
        state: TOperationState,
    ) -> Arc<Prefetched> {
        let launch_log_first = Arc::new(AtomicBool::new(
            statement.is_some() && session.take_launch_log(),
        ));
        let prefetched = Arc::new(prefetched);
        self.sessions.record_operation(
            handle,
            session,
            OperationKind::Engine {
                launch_log_first,
                prefetched: prefetched.clone(),
                state: Arc::new(ObservedState::new(state)),
                statement,
            },
        );
        prefetched
    }

    /// A row fetch of an engine operation: served from what was fetched ahead when the client
    /// asks for the next batch, else forwarded; a batch with rows starts the fetch of the one
    /// after it.
    async fn fetch_rows(
        &self,
        session: Arc<GatewaySession>,
        prefetched: &Prefetched,
        req: TFetchResultsReq,
    ) -> Result<Bytes, GatewayError> {
        prefetched.settle_before_fetch(&session).await;
        let mut rows = prefetched.rows().await;
        if req.orientation != TFetchOrientation::FETCH_NEXT {
            // The cursor moves elsewhere: a batch sent ahead is no longer the next one.
            rows.discard(&session).await;
            return self.try_forward_bytes(req).await;
        }
        session.note_fetch_size(req.max_rows);
        let batch = match rows.take(&session, req.max_rows).await {
            Some(batch) => batch?,
            None => rows.forwarded(self.try_forward_bytes(req.clone()).await?),
        };
        if rows.worth_reading_ahead(&batch) {
            if let Err(error) = rows.send_ahead(&session, &req, &batch).await {
                // The client's next fetch meets the same failure, and reports it.
                tracing::debug!(session = %session.id, %error, "reading ahead failed");
            }
        }
        Ok(batch.reply)
    }

    fn open_reply(
        &self,
        session: &GatewaySession,
        client_protocol: TProtocolVersion,
    ) -> TOpenSessionResp {
        let launch = &session.launch.handle;
        let base64 = base64::engine::general_purpose::STANDARD;
        let configuration = BTreeMap::from([
            (
                launch_keys::GUID.to_owned(),
                base64.encode(launch.guid.as_bytes()),
            ),
            (
                launch_keys::SECRET.to_owned(),
                base64.encode(launch.secret.as_bytes()),
            ),
            (launch_keys::SUPPORT_RESULT.to_owned(), "true".to_owned()),
            (
                launch_keys::FETCH_SIZE.to_owned(),
                DEFAULT_FETCH_SIZE.to_string(),
            ),
            (
                crate::routing::keys::CLUSTER.to_owned(),
                session.route.cluster.name.clone(),
            ),
        ]);
        TOpenSessionResp {
            status: status::ok(),
            server_protocol_version: TProtocolVersion(client_protocol.0.min(MAX_PROTOCOL.0)),
            session_handle: Some(session.id.session_handle()),
            configuration: Some(configuration),
        }
    }

    /// One of Kyuubi's own statements ([`kyuubi_commands`]), answered here as a finished
    /// operation of the session; `KYUUBI DESC ENGINE` waits for the launch, as a statement
    /// does.
    async fn kyuubi_command(
        &self,
        session: &Arc<GatewaySession>,
        command: KyuubiCommand,
        statement: &str,
    ) -> Reply<TExecuteStatementResp> {
        let answered = match command {
            KyuubiCommand::DescribeSession => Answered::session(statement, session),
            KyuubiCommand::DescribeEngine => {
                match session.launch.wait(self.sessions.launch_wait).await {
                    Ok(engine) => Answered::engine(statement, &engine),
                    Err(GatewayError::Launch { .. }) => {
                        return Reply::Typed(self.launch_failed_statement(session))
                    }
                    Err(error) => return self.reply_error::<TExecuteStatementReq>(error),
                }
            }
            KyuubiCommand::RestartEngine => {
                return self.reply_error::<TExecuteStatementReq>(kyuubi_commands::restart_refused())
            }
        };
        let handle = HandleId::new();
        self.sessions.record_operation(
            handle,
            session,
            OperationKind::Answered(Arc::new(answered)),
        );
        Reply::Typed(TExecuteStatementResp {
            status: status::ok(),
            operation_handle: Some(
                handle.operation_handle(TOperationType::EXECUTE_STATEMENT, true),
            ),
        })
    }

    /// A statement that cannot run because the launch failed: an operation in ERROR whose
    /// log is the launch log, so that beeline prints both.
    fn launch_failed_statement(&self, session: &Arc<GatewaySession>) -> TExecuteStatementResp {
        let handle = HandleId::new();
        self.sessions.record_operation(
            handle,
            session,
            OperationKind::LaunchFailed {
                log_served: Arc::new(AtomicBool::new(false)),
            },
        );
        TExecuteStatementResp {
            status: status::ok(),
            operation_handle: Some(
                handle.operation_handle(TOperationType::EXECUTE_STATEMENT, false),
            ),
        }
    }
}

impl CliService for Gateway {
    async fn open_session(
        &self,
        ctx: &CallContext,
        req: TOpenSessionReq,
    ) -> Reply<TOpenSessionResp> {
        match self.sessions.open(ctx, &req).await {
            Ok(session) => Reply::Typed(self.open_reply(&session, req.client_protocol)),
            Err(error) => {
                tracing::info!(peer = %ctx.peer, %error, "OpenSession refused");
                Reply::Typed(TOpenSessionResp {
                    status: error.to_status(),
                    server_protocol_version: TProtocolVersion(
                        req.client_protocol.0.min(MAX_PROTOCOL.0),
                    ),
                    session_handle: None,
                    configuration: None,
                })
            }
        }
    }

    async fn close_session(
        &self,
        _ctx: &CallContext,
        req: TCloseSessionReq,
    ) -> Reply<TCloseSessionResp> {
        match self.sessions.session(&req.session_handle) {
            Ok(session) => {
                self.sessions.close(&session.id).await;
            }
            Err(error) => {
                return Reply::Typed(TCloseSessionResp {
                    status: error.to_status(),
                })
            }
        }
        Reply::Typed(TCloseSessionResp {
            status: status::ok(),
        })
    }

    async fn get_info(&self, _ctx: &CallContext, req: TGetInfoReq) -> Reply<TGetInfoResp> {
        let session = match self.sessions.session(&req.session_handle) {
            Ok(session) => session,
            Err(error) => return self.reply_error::<TGetInfoReq>(error),
        };
        let answer = match (session.route.info_provider, req.info_type) {
            // Answered before the engine is up, so that beeline connects at once.
            (InfoProvider::Server, TGetInfoType::CLI_DBMS_NAME | TGetInfoType::CLI_SERVER_NAME) => {
                SERVER_NAME
            }
            (InfoProvider::Server, TGetInfoType::CLI_DBMS_VER) => env!("CARGO_PKG_VERSION"),
            // The engine's own answer, once its launch has finished.
            _ => return self.forward(req).await,
        };
        Reply::Typed(TGetInfoResp {
            status: status::ok(),
            info_value: TGetInfoValue::StringValue(answer.to_owned()),
        })
    }

    async fn execute_statement(
        &self,
        ctx: &CallContext,
        mut req: TExecuteStatementReq,
    ) -> Reply<TExecuteStatementResp> {
        let session = match self.sessions.session(&req.session_handle) {
            Ok(session) => session,
            Err(error) => return self.reply_error::<TExecuteStatementReq>(error),
        };
        if let Some(command) = kyuubi_commands::recognise(&req.statement) {
            return self.kyuubi_command(&session, command, &req.statement).await;
        }
        req.query_timeout = session.route.capped_query_timeout(req.query_timeout);
        match self.wait_for_engine(&session).await {
            Err(GatewayError::Launch { .. }) => {
                Reply::Typed(self.launch_failed_statement(&session))
            }
            Err(error) => self.reply_error::<TExecuteStatementReq>(error),
            Ok(()) => {
                let statement: Arc<str> = req.statement.as_str().into();
                // Answered ahead: the engine gets the statement after the client's reply.
                let record = |handle, prefetched| {
                    let pending = TOperationState::PENDING_STATE;
                    let statement = Some(statement.clone());
                    self.record_engine_operation(&session, handle, statement, prefetched, pending);
                };
                let mut req = match execute_ahead::answer(&session, req, record).await {
                    Ok(answered) => return Reply::Typed(answered),
                    Err(req) => req,
                };
                execute_ahead::strip_assigned_id(&mut req);
                let run_async = req.run_async.unwrap_or(false);
                let state = match run_async {
                    true => TOperationState::RUNNING_STATE,
                    false => TOperationState::FINISHED_STATE,
                };
                match self.try_forward_recorded(req, state, Some(statement)).await {
                    Ok((bytes, created)) => {
                        if let Some(created) = created {
                            ctx.after_reply.push(async move {
                                prefetch::after_execute(
                                    &session,
                                    &created.prefetched,
                                    &created.operation,
                                    run_async,
                                )
                                .await;
                            });
                        }
                        Reply::Encoded(bytes)
                    }
                    Err(error) => self.reply_error::<TExecuteStatementReq>(error),
                }
            }
        }
    }

    async fn get_type_info(
        &self,
        _ctx: &CallContext,
        req: TGetTypeInfoReq,
    ) -> Reply<TGetTypeInfoResp> {
        self.forward(req).await
    }

    async fn get_catalogs(
        &self,
        _ctx: &CallContext,
        req: TGetCatalogsReq,
    ) -> Reply<TGetCatalogsResp> {
        self.forward(req).await
    }

    async fn get_schemas(&self, _ctx: &CallContext, req: TGetSchemasReq) -> Reply<TGetSchemasResp> {
        self.forward(req).await
    }

    async fn get_tables(&self, _ctx: &CallContext, req: TGetTablesReq) -> Reply<TGetTablesResp> {
        self.forward(req).await
    }

    async fn get_table_types(
        &self,
        _ctx: &CallContext,
        req: TGetTableTypesReq,
    ) -> Reply<TGetTableTypesResp> {
        self.forward(req).await
    }

    async fn get_columns(&self, _ctx: &CallContext, req: TGetColumnsReq) -> Reply<TGetColumnsResp> {
        self.forward(req).await
    }

    async fn get_functions(
        &self,
        _ctx: &CallContext,
        req: TGetFunctionsReq,
    ) -> Reply<TGetFunctionsResp> {
        self.forward(req).await
    }

    async fn get_primary_keys(
        &self,
        _ctx: &CallContext,
        req: TGetPrimaryKeysReq,
    ) -> Reply<TGetPrimaryKeysResp> {
        self.forward(req).await
    }

    async fn get_cross_reference(
        &self,
        _ctx: &CallContext,
        req: TGetCrossReferenceReq,
    ) -> Reply<TGetCrossReferenceResp> {
        self.forward(req).await
    }

    async fn get_operation_status(
        &self,
        _ctx: &CallContext,
        req: TGetOperationStatusReq,
    ) -> Reply<TGetOperationStatusResp> {
        match self.sessions.operation(&req.operation_handle) {
            Err(error) => self.reply_error::<TGetOperationStatusReq>(error),
            Ok(entry) => match entry.kind {
                OperationKind::Launch => Reply::Typed(entry.session.launch.status()),
                OperationKind::LaunchFailed { .. } => Reply::Typed(entry.session.launch.status()),
                OperationKind::Answered(answered) => Reply::Typed(answered.status()),
                OperationKind::Engine {
                    prefetched, state, ..
                } => {
                    if let Err(reason) = prefetched.executed(&entry.session).await {
                        let refused = execute_ahead::refused_status(reason);
                        state.note_status(&refused);
                        return Reply::Typed(refused);
                    }
                    let reply = match prefetched.take_status(&entry.session).await {
                        Some(kept) => kept,
                        None => self.try_forward_bytes(req.clone()).await,
                    };
                    match reply {
                        Ok(bytes) => {
                            // One decode serves the state the admin API lists and the
                            // read-ahead of results; a reply that is no status (the call
                            // failed) changes neither.
                            let resp = decode_result_body::<TGetOperationStatusResp>(&bytes).ok();
                            if let Some(resp) = &resp {
                                state.note_status(resp);
                            }
                            // Before the reply: the engine works on the results while
                            // the reply travels and the client asks for them.
                            let handle = &req.operation_handle;
                            if prefetch::results_due(&prefetched, handle, resp.as_ref()) {
                                prefetch::send_for_results(
                                    &entry.session,
                                    &prefetched,
                                    &req.operation_handle,
                                )
                                .await;
                            }
                            Reply::Encoded(bytes)
                        }
                        Err(error) => self.reply_error::<TGetOperationStatusReq>(error),
                    }
                }
            },
        }
    }

    async fn cancel_operation(
        &self,
        _ctx: &CallContext,
        req: TCancelOperationReq,
    ) -> Reply<TCancelOperationResp> {
        match self.sessions.operation(&req.operation_handle) {
            Err(error) => self.reply_error::<TCancelOperationReq>(error),
            // A launch serves every session of its engine; it is not cancelled for one.
            // A statement the gateway answered finished as it was made.
            Ok(OperationEntry {
                kind:
                    OperationKind::Launch
                    | OperationKind::LaunchFailed { .. }
                    | OperationKind::Answered(_),
                ..
            }) => Reply::Typed(TCancelOperationResp {
                status: status::ok(),
            }),
            Ok(OperationEntry {
                session,
                kind:
                    OperationKind::Engine {
                        prefetched, state, ..
                    },
                ..
            }) => {
                // The engine has the statement before the cancel is sent; one it refused
                // has nothing to cancel.
                if prefetched.executed(&session).await.is_err() {
                    return Reply::Typed(TCancelOperationResp {
                        status: status::ok(),
                    });
                }
                // Not on the session's engine connection, where a call in flight (a status
                // poll, which the engine holds until the statement ends or its long-poll
                // wait is over, up to seconds on Spark) would keep the cancel waiting.
                let reply = cancel_aside(&session, &req).await;
                // Cancelled: what was sent ahead comes back at once, and is dropped.
                drop(prefetched.discard(&session).await);
                match reply {
                    Ok(bytes) => {
                        let taken = decode_result_body::<TCancelOperationResp>(&bytes)
                            .is_ok_and(|resp| status::is_ok(&resp.status));
                        if taken {
                            state.note_cancelled();
                        }
                        Reply::Encoded(bytes)
                    }
                    Err(error) => self.reply_error::<TCancelOperationReq>(error),
                }
            }
        }
    }

    async fn close_operation(
        &self,
        ctx: &CallContext,
        req: TCloseOperationReq,
    ) -> Reply<TCloseOperationResp> {
        match self.sessions.operation(&req.operation_handle) {
            Err(error) => self.reply_error::<TCloseOperationReq>(error),
            Ok(entry) => {
                self.sessions.forget_operation(&req.operation_handle);
                if let OperationKind::Engine { prefetched, .. } = entry.kind {
                    let session = entry.session;
                    ctx.after_reply.push(async move {
                        close_in_engine(&session, &prefetched, &req).await;
                    });
                }
                Reply::Typed(TCloseOperationResp {
                    status: status::ok(),
                })
            }
        }
    }

    async fn get_result_set_metadata(
        &self,
        _ctx: &CallContext,
        req: TGetResultSetMetadataReq,
    ) -> Reply<TGetResultSetMetadataResp> {
        match self.sessions.operation(&req.operation_handle) {
            Err(error) => self.reply_error::<TGetResultSetMetadataReq>(error),
            Ok(entry) => match entry.kind {
                OperationKind::Launch => Reply::Typed(entry.session.launch.result_set_metadata()),
                OperationKind::LaunchFailed { .. } => {
                    self.reply_error::<TGetResultSetMetadataReq>(launch_error(&entry.session))
                }
                OperationKind::Answered(answered) => Reply::Typed(answered.result_set_metadata()),
                OperationKind::Engine { prefetched, .. } => {
                    match prefetched.metadata(&entry.session).await {
                        Some(Ok(bytes)) => Reply::Encoded(bytes),
                        Some(Err(error)) => self.reply_error::<TGetResultSetMetadataReq>(error),
                        None => self.forward(req).await,
                    }
                }
            },
        }
    }

    async fn fetch_results(
        &self,
        _ctx: &CallContext,
        req: TFetchResultsReq,
    ) -> Reply<TFetchResultsResp> {
        let entry = match self.sessions.operation(&req.operation_handle) {
            Ok(entry) => entry,
            Err(error) => return self.reply_error::<TFetchResultsReq>(error),
        };
        let wants_log = req.fetch_type == Some(FETCH_TYPE_LOG);
        match entry.kind {
            OperationKind::Launch => Reply::Typed(entry.session.launch.fetch(&req)),
            OperationKind::Answered(answered) => Reply::Typed(answered.fetch(&req)),
            OperationKind::LaunchFailed { log_served } if wants_log => {
                let again = req.orientation == TFetchOrientation::FETCH_FIRST;
                let unseen = !log_served.swap(true, Ordering::AcqRel);
                let lines = if again || unseen {
                    entry.session.launch.log.lines_since(0)
                } else {
                    Vec::new()
                };
                Reply::Typed(log_reply(lines))
            }
            OperationKind::LaunchFailed { .. } => {
                self.reply_error::<TFetchResultsReq>(launch_error(&entry.session))
            }
            OperationKind::Engine {
                launch_log_first, ..
            } if wants_log && launch_log_first.swap(false, Ordering::AcqRel) => {
                Reply::Typed(log_reply(entry.session.launch.log.lines_since(0)))
            }
            OperationKind::Engine { .. } if wants_log => self.forward(req).await,
            OperationKind::Engine { prefetched, .. } => {
                match self.fetch_rows(entry.session, &prefetched, req).await {
                    Ok(bytes) => Reply::Encoded(bytes),
                    Err(error) => self.reply_error::<TFetchResultsReq>(error),
                }
            }
        }
    }

    async fn connection_closed(&self, ctx: &CallContext) {
        self.sessions.close_connection(ctx.connection_id).await;
    }
}

/// An operation an engine reply created, as recorded.
struct Created {
    operation: TOperationHandle,
    prefetched: Arc<Prefetched>,
}

/// CloseOperation written to the engine (after the client's reply, or by the idle-operation
/// reaper), without waiting for the engine's reply, which is read on the way to a later one:
/// the engine closes the operation while the client makes its next call. (A close the engine
/// refuses concerns nobody: the client was told the operation is closed, and the engine
/// frees it with the session.)
pub(crate) async fn close_in_engine(
    session: &GatewaySession,
    prefetched: &Prefetched,
    req: &TCloseOperationReq,
) {
    let mut engine = prefetched.discard(session).await;
    if let Some(link) = engine.as_mut() {
        link.client.queue_unanswered("CloseOperation", req);
        if let Err(e) = link.client.flush().await {
            tracing::debug!(session = %session.id, "closing an operation in the engine: {e}");
        }
    }
}

/// CancelOperation on a connection of its own to the session's engine, authenticated as the
/// session's user with the internal secret: engines (ours, and HiveServer2's operation
/// manager in the Spark Thrift Server) find an operation by its handle, whichever connection
/// asks.
async fn cancel_aside(
    session: &GatewaySession,
    req: &TCancelOperationReq,
) -> Result<Bytes, GatewayError> {
    let LaunchState::Finished(engine) = session.launch.state() else {
        return Err(GatewayError::Internal(
            "an operation exists on a session whose launch has not finished".to_owned(),
        ));
    };
    let address = session.engine_name(&engine.registration);
    let auth = ClientAuth::Plain {
        user: session.route.user.clone(),
        password: session.route.secret.expose().to_owned(),
    };
    let cancelling = async {
        let mut client = crate::engine_connect::connect(&engine.registration, auth).await?;
        client.call_encoded("CancelOperation", req).await
    };
    // A hung engine fails the cancel (with the session's next call to come) instead of
    // holding the client's cancel for ever.
    let login_timeout = session.route.login_timeout;
    match tokio::time::timeout(login_timeout, cancelling).await {
        Ok(reply) => reply.map_err(|e| engine_error(&address, e)),
        Err(_) => Err(GatewayError::EngineGone {
            engine: address,
            reason: crate::session::unanswered(login_timeout),
        }),
    }
}

/// Phases 3 and 4: rewrite the session handle and exchange the call with the engine.
async fn exchange<R: Forwarded>(
    session: &GatewaySession,
    req: &mut R,
) -> Result<Bytes, GatewayError> {
    let mut engine = session.engine.lock().await;
    let link = engine.as_mut().ok_or_else(|| no_engine_session(session))?;
    req.rewrite(&link.session_handle);
    let reply = link.client.call_encoded(R::METHOD, req).await;
    // The end of a long call (a synchronous statement) is a use of the session.
    session.touch();
    reply.map_err(|e| engine_error(&link.address, e))
}

/// A session without an engine session: closed meanwhile (the client's session is gone), or
/// a launch that finished without one (a bug).
fn no_engine_session(session: &GatewaySession) -> GatewayError {
    match session.is_closed() {
        true => GatewayError::InvalidHandle { what: "session" },
        false => GatewayError::Internal("the launch finished without an engine session".to_owned()),
    }
}

/// What a failed engine call means: the engine refused it, or the connection is gone.
fn engine_error(engine: &str, error: kumiho_thrift::error::WireError) -> GatewayError {
    match error {
        kumiho_thrift::error::WireError::Application { .. } => {
            GatewayError::EngineRefused(error.to_string())
        }
        other => GatewayError::EngineGone {
            engine: engine.to_owned(),
            reason: other.to_string(),
        },
    }
}

/// The launch's failure, for RPCs on a statement it failed.
fn launch_error(session: &GatewaySession) -> GatewayError {
    match session.launch.state() {
        crate::operation::launch_engine::LaunchState::Failed(error) => error,
        _ => GatewayError::Internal(
            "statement marked failed by a launch that did not fail".to_owned(),
        ),
    }
}
