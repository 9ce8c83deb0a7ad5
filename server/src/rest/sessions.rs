//! Kyuubi's REST sessions and operations (`/api/v1/sessions`, `/api/v1/operations`), each call made on the gateway's own HiveServer2 service.
//!
//! Nothing here routes, launches or proxies: every call becomes the Thrift request a
//! HiveServer2 client would send (OpenSession, ExecuteStatement, GetOperationStatus,
//! FetchResults, ...), made in-process on the [`Gateway`] the binary and HTTP frontends
//! serve (counted in its metrics as `frontend="rest"`), and its reply is translated into
//! Kyuubi's JSON ([`super::results`]). Cluster selection, share levels, engine launch, the
//! session-conf rules, impersonation and the idle timeouts are thus the gateway's own.
//!
//! Identifiers are the guids of the gateway's handles (a session's is the one the gateway
//! logs); the handles' secrets never leave the gateway. A session and its operations belong
//! to the user who opened it (or whom it runs as): another user gets 403, unless a super
//! user of its cluster acting as its user (`proxyUser`). `GET /sessions` lists every session
//! of this gateway the caller may use, whichever frontend opened it (binary, HTTP, REST);
//! the calls on one session and its operations reach those opened over REST. (Kyuubi lists
//! every user's sessions to anyone; here that is the admin API's, [`super::admin`].)
//!
//! A statement run with `runAsync` that the engine refuses outright (no operation created)
//! still gets an identifier: its `event` says ERROR with the engine's message, as Kyuubi's
//! server-side operations do. Run synchronously, the refusal is the answer (400).

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode};
use kumiho_thrift::cli::*;
use kumiho_thrift::codec::decode_result_body;
use kumiho_thrift::handle::HandleId;
use kumiho_thrift::server::text_response;
use kumiho_thrift::service::{CallContext, CliService, Reply, Transport};
use kumiho_thrift::status;
use thrift::protocol::TSerializable;
use uuid::Uuid;

use super::results::{
    self, Exception, InfoDetail, MetadataRequest, OpActionRequest, OperationData, OperationEvent,
    OperationHandle, SessionData, SessionEvent, SessionHandle, SessionOpenRequest,
    StatementRequest,
};
use super::servers::GatewayDirectory;
use super::{json, Query};
use crate::errors::GatewayError;
use crate::metrics::Metered;
use crate::operation::FETCH_TYPE_LOG;
use crate::proxy::{Gateway, MAX_PROTOCOL};
use crate::routing::keys::PROXY_USER;
use crate::session::{GatewaySession, SessionManager};

/// The service REST calls are made on: the one the Thrift frontends serve.
pub type Service = Metered<Gateway>;

/// Rows (or log lines) a fetch returns when `maxrows` is not given (Kyuubi's default).
pub const DEFAULT_FETCH_ROWS: i64 = 100;

/// Most rows (or log lines) one fetch returns; a larger `maxrows` is lowered to it.
pub const MAX_FETCH_ROWS: i64 = 10_000;

/// Kyuubi's session type of sessions that run statements.
const INTERACTIVE: &str = "INTERACTIVE";

/// Who makes a REST call.
pub struct Caller<'a> {
    /// The authenticated user.
    pub user: &'a str,
    /// `proxyUser` (or `hive.server2.proxy.user`) of the query: the user to act as.
    pub proxy: Option<&'a str>,
    pub peer: SocketAddr,
}

/// The REST sessions and operations of one gateway.
pub struct SessionsApi {
    service: Arc<Service>,
    sessions: Arc<SessionManager>,
    /// `host:port` of the REST API, Kyuubi's `kyuubiInstance`.
    instance: String,
    /// A std mutex, held for map lookups and inserts only, never across an await.
    known: Mutex<Known>,
    /// Where the gateways serving together are registered (`GET /admin/server`).
    directory: Option<GatewayDirectory>,
}

/// The sessions opened over REST and their operations, by identifier.
#[derive(Default)]
struct Known {
    sessions: HashMap<Uuid, RestSession>,
    operations: HashMap<Uuid, RestOperation>,
    /// How many operations make the next one recorded look for those the gateway has closed
    /// (a client that never closes its statements, whose operations the idle reaper ends).
    sweep_at: usize,
}

/// Operations recorded before the first look for closed ones.
const FIRST_SWEEP: usize = 1024;

#[derive(Clone)]
pub(super) struct RestSession {
    handle: TSessionHandle,
    /// The settings the client sent.
    conf: BTreeMap<String, String>,
    client_ip: String,
    protocol: i32,
    created: u64,
    operations: usize,
}

#[derive(Clone)]
struct RestOperation {
    session: Uuid,
    /// `None`: a statement the engine refused outright, whose failure is `failure`.
    handle: Option<TOperationHandle>,
    failure: Option<Exception>,
    statement: String,
    run_async: bool,
    created: u64,
}

/// A metadata operation of `POST /sessions/{id}/operations/{kind}`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MetadataKind {
    TypeInfo,
    Catalogs,
    Schemas,
    Tables,
    TableTypes,
    Columns,
    Functions,
    PrimaryKeys,
    CrossReference,
}

impl MetadataKind {
    /// The kind a path names (Kyuubi's paths).
    pub fn parse(path: &str) -> Option<MetadataKind> {
        Some(match path {
            "typeInfo" => MetadataKind::TypeInfo,
            "catalogs" => MetadataKind::Catalogs,
            "schemas" => MetadataKind::Schemas,
            "tables" => MetadataKind::Tables,
            "tableTypes" => MetadataKind::TableTypes,
            "columns" => MetadataKind::Columns,
            "functions" => MetadataKind::Functions,
            "primaryKeys" => MetadataKind::PrimaryKeys,
            "crossReference" => MetadataKind::CrossReference,
            _ => return None,
        })
    }

    /// What the operation's event shows as its statement (Kyuubi's operation type).
    fn name(self) -> &'static str {
        match self {
            MetadataKind::TypeInfo => "GET_TYPE_INFO",
            MetadataKind::Catalogs => "GET_CATALOGS",
            MetadataKind::Schemas => "GET_SCHEMAS",
            MetadataKind::Tables => "GET_TABLES",
            MetadataKind::TableTypes => "GET_TABLE_TYPES",
            MetadataKind::Columns => "GET_COLUMNS",
            MetadataKind::Functions => "GET_FUNCTIONS",
            MetadataKind::PrimaryKeys => "GET_PRIMARY_KEYS",
            MetadataKind::CrossReference => "GET_CROSS_REFERENCE",
        }
    }
}

/// A part of an operation readable with GET.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OperationPart {
    Event,
    Log,
    ResultSetMetadata,
    RowSet,
}

impl OperationPart {
    pub fn parse(path: &str) -> Option<OperationPart> {
        Some(match path {
            "event" => OperationPart::Event,
            "log" => OperationPart::Log,
            "resultsetmetadata" => OperationPart::ResultSetMetadata,
            "rowset" => OperationPart::RowSet,
            _ => return None,
        })
    }
}

/// One call on the gateway's service: the request made in a context of the caller (as the
/// HTTP frontend makes it: a session outlives its connections), the work it leaves for
/// after its reply run, and the reply decoded.
macro_rules! call {
    ($api:expr, $caller:expr, $method:ident, $req:expr) => {{
        let ctx = $api.context($caller);
        let reply = $api.service.$method(&ctx, $req).await;
        ctx.after_reply.run().await;
        typed(reply)
    }};
}

impl SessionsApi {
    pub fn new(service: Arc<Service>, sessions: Arc<SessionManager>, instance: String) -> Self {
        Self {
            service,
            sessions,
            instance,
            known: Mutex::default(),
            directory: None,
        }
    }

    /// The API with the gateways' directory, for `GET /admin/server`.
    pub fn with_directory(self, directory: GatewayDirectory) -> Self {
        Self {
            directory: Some(directory),
            ..self
        }
    }

    /// Where the gateways serving together are registered.
    pub(super) fn directory(&self) -> Result<&GatewayDirectory, GatewayError> {
        self.directory.as_ref().ok_or_else(|| {
            GatewayError::Internal(
                "the REST API was started without the gateway's directory".to_owned(),
            )
        })
    }

    fn known(&self) -> MutexGuard<'_, Known> {
        // Holders only look up and insert: a panicking one leaves the maps consistent.
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn context(&self, caller: &Caller<'_>) -> CallContext {
        CallContext {
            connection_id: 0,
            peer: caller.peer,
            transport: Transport::Rest,
            user: Some(caller.user.to_owned()),
            after_reply: Default::default(),
        }
    }

    /// `POST /sessions`: OpenSession as the caller, `proxyUser` as the session's proxy user.
    pub(super) async fn open(
        &self,
        caller: &Caller<'_>,
        body: &[u8],
    ) -> Result<Response<Full<Bytes>>, GatewayError> {
        let request: SessionOpenRequest = match body.iter().all(u8::is_ascii_whitespace) {
            true => SessionOpenRequest::default(),
            false => parse(body, "SessionOpenRequest")?,
        };
        let mut configuration = request.configs.clone();
        if let Some(proxy) = caller.proxy {
            configuration.insert(PROXY_USER[0].to_owned(), proxy.to_owned());
        }
        let protocol = request
            .protocol_version
            .map_or(MAX_PROTOCOL, TProtocolVersion);
        let req = TOpenSessionReq {
            client_protocol: protocol,
            username: Some(caller.user.to_owned()),
            password: None,
            configuration: Some(configuration),
        };
        let resp: TOpenSessionResp = call!(self, caller, open_session, req)?;
        check(&resp.status, true)?;
        let handle = resp.session_handle.ok_or_else(|| {
            GatewayError::Internal("OpenSession succeeded without a session handle".to_owned())
        })?;
        let id = guid(&handle.session_id)?;
        self.forget_closed();
        self.known().sessions.insert(
            id,
            RestSession {
                handle,
                conf: request.configs,
                client_ip: caller.peer.ip().to_string(),
                protocol: resp.server_protocol_version.0,
                created: now_ms(),
                operations: 0,
            },
        );
        Ok(json(&SessionHandle {
            identifier: id.to_string(),
            kyuubi_instance: self.instance.clone(),
        }))
    }

    /// `GET /sessions`: the open sessions the caller may use, whichever frontend opened
    /// them, oldest first.
    pub(super) fn list(&self, caller: &Caller<'_>) -> Response<Full<Bytes>> {
        json(&self.sessions_data(|live| may_use(live, caller)))
    }

    /// Every open session of the gateway that `keep` keeps, as `SessionData`, oldest first.
    pub(super) fn sessions_data(&self, keep: impl Fn(&GatewaySession) -> bool) -> Vec<SessionData> {
        self.forget_closed();
        let known = self.known().sessions.clone();
        let mut list: Vec<SessionData> = self
            .sessions
            .snapshot()
            .into_iter()
            .filter(|live| keep(live))
            .map(|live| self.session_data(&live, known.get(&live.id.guid)))
            .collect();
        list.sort_by_key(|s| s.create_time);
        list
    }

    /// `GET /sessions/execPool/statistic`.
    pub(super) fn exec_pool(&self) -> Response<Full<Bytes>> {
        let work = self.sessions.background_work();
        json(&results::ExecPoolStatistic {
            exec_pool_size: work.engine_session_opens,
            exec_pool_active_count: work.opening,
            exec_pool_work_queue_size: work.waiting,
        })
    }

    /// The statement of a REST operation, if this is one.
    pub(super) fn statement_of(&self, id: &Uuid) -> Option<(String, bool)> {
        self.known()
            .operations
            .get(id)
            .map(|op| (op.statement.clone(), op.run_async))
    }

    /// `host:port` of this REST API.
    pub(super) fn instance(&self) -> &str {
        &self.instance
    }

    /// The admin calls, made by `user` ([`super::admin`]).
    pub(super) fn admin<'a>(&'a self, user: &'a str) -> super::admin::Admin<'a> {
        super::admin::Admin {
            api: self,
            sessions: &self.sessions,
            user,
        }
    }

    /// `GET /sessions/count`: sessions open on this gateway (all frontends).
    pub(super) fn count(&self) -> Response<Full<Bytes>> {
        json(&serde_json::json!({ "openSessionCount": self.sessions.len() }))
    }

    /// `GET /sessions/{id}`: the session as Kyuubi's `KyuubiSessionEvent`.
    pub(super) fn get(
        &self,
        id: &str,
        caller: &Caller<'_>,
    ) -> Result<Response<Full<Bytes>>, GatewayError> {
        let (_, known, live) = self.session(id, caller)?;
        let data = self.session_data(&live, Some(&known));
        Ok(json(&SessionEvent {
            session_id: data.identifier,
            client_version: known.protocol + 1,
            session_type: INTERACTIVE,
            session_name: String::new(),
            remote_session_id: data.remote_session_id,
            engine_id: data.engine_id,
            engine_name: data.engine_name,
            engine_url: data.engine_url,
            user: data.user,
            client_ip: known.client_ip.clone(),
            server_ip: self.instance.clone(),
            conf: known.conf.clone(),
            optimized_conf: live.route.conf.settings.clone().into_iter().collect(),
            event_time: now_ms(),
            opened_time: known.created,
            start_time: known.created,
            end_time: 0,
            total_operations: known.operations,
            exception: match live.launch.state() {
                crate::operation::launch_engine::LaunchState::Failed(error) => {
                    Some(Exception::new(error.to_string(), None, 0))
                }
                _ => None,
            },
        }))
    }

    /// `DELETE /sessions/{id}`: CloseSession; the engine session closes with it.
    pub(super) async fn close(
        &self,
        id: &str,
        caller: &Caller<'_>,
    ) -> Result<Response<Full<Bytes>>, GatewayError> {
        let (id, known, _) = self.session(id, caller)?;
        let req = TCloseSessionReq {
            session_handle: known.handle,
        };
        let resp: TCloseSessionResp = call!(self, caller, close_session, req)?;
        self.forget_session(id);
        check(&resp.status, false)?;
        Ok(empty())
    }

    /// `GET /sessions/{id}/info/{infoType}`: GetInfo.
    pub(super) async fn info(
        &self,
        id: &str,
        info_type: &str,
        caller: &Caller<'_>,
    ) -> Result<Response<Full<Bytes>>, GatewayError> {
        let (_, known, _) = self.session(id, caller)?;
        let Some((info_type, name)) = info_type.parse().ok().and_then(results::info_type) else {
            return Err(GatewayError::NotFound(format!(
                "unrecognized GetInfoType value `{info_type}`: use the number of a TGetInfoType (17: CLI_DBMS_NAME, 18: CLI_DBMS_VER, ...)"
            )));
        };
        let req = TGetInfoReq {
            session_handle: known.handle,
            info_type,
        };
        let resp: TGetInfoResp = call!(self, caller, get_info, req)?;
        check(&resp.status, false)?;
        Ok(json(&InfoDetail {
            info_type: name,
            info_value: results::info_value(&resp.info_value),
        }))
    }

    /// `POST /sessions/{id}/operations/statement`: ExecuteStatement.
    pub(super) async fn statement(
        &self,
        id: &str,
        caller: &Caller<'_>,
        body: &[u8],
    ) -> Result<Response<Full<Bytes>>, GatewayError> {
        let (session, known, _) = self.session(id, caller)?;
        let request: StatementRequest = parse(body, "StatementRequest")?;
        if request.statement.trim().is_empty() {
            return Err(GatewayError::BadRequest(
                "`statement` is empty: send the SQL to run".to_owned(),
            ));
        }
        if request.query_timeout < 0 {
            return Err(GatewayError::BadRequest(format!(
                "`queryTimeout` {} must be seconds, 0 for none",
                request.query_timeout
            )));
        }
        let req = TExecuteStatementReq {
            session_handle: known.handle,
            statement: request.statement.clone(),
            conf_overlay: Some(request.conf_overlay),
            run_async: Some(request.run_async),
            query_timeout: Some(request.query_timeout),
        };
        let resp: TExecuteStatementResp = call!(self, caller, execute_statement, req)?;
        let mut operation = RestOperation {
            session,
            handle: None,
            failure: None,
            statement: request.statement,
            run_async: request.run_async,
            created: now_ms(),
        };
        match (resp.operation_handle, check(&resp.status, false)) {
            (Some(handle), Ok(())) => operation.handle = Some(handle),
            // Refused outright: the failure is the operation's, read from its event.
            (_, Err(GatewayError::BadRequest(_)))
                if request.run_async && resp.status.error_message.is_some() =>
            {
                operation.failure = Some(exception(&resp.status));
            }
            (_, Err(error)) => return Err(error),
            (None, Ok(())) => {
                return Err(GatewayError::Internal(
                    "ExecuteStatement succeeded without an operation handle".to_owned(),
                ))
            }
        }
        Ok(self.record(operation))
    }

    /// `POST /sessions/{id}/operations/{kind}`: a metadata operation.
    pub(super) async fn metadata(
        &self,
        id: &str,
        kind: MetadataKind,
        caller: &Caller<'_>,
        body: &[u8],
    ) -> Result<Response<Full<Bytes>>, GatewayError> {
        let (session, known, _) = self.session(id, caller)?;
        let r: MetadataRequest = match body.iter().all(u8::is_ascii_whitespace) {
            true => MetadataRequest::default(),
            false => parse(body, "request")?,
        };
        let session_handle = known.handle;
        // The status and operation handle of a metadata call's reply.
        macro_rules! created {
            ($method:ident, $req:expr) => {{
                let resp = call!(self, caller, $method, $req)?;
                (resp.status, resp.operation_handle)
            }};
        }
        let (status, handle) = match kind {
            MetadataKind::TypeInfo => created!(get_type_info, TGetTypeInfoReq { session_handle }),
            MetadataKind::Catalogs => created!(get_catalogs, TGetCatalogsReq { session_handle }),
            MetadataKind::Schemas => created!(
                get_schemas,
                TGetSchemasReq {
                    session_handle,
                    catalog_name: r.catalog_name,
                    schema_name: r.schema_name,
                }
            ),
            MetadataKind::Tables => created!(
                get_tables,
                TGetTablesReq {
                    session_handle,
                    catalog_name: r.catalog_name,
                    schema_name: r.schema_name,
                    table_name: r.table_name,
                    table_types: r.table_types,
                }
            ),
            MetadataKind::TableTypes => {
                created!(get_table_types, TGetTableTypesReq { session_handle })
            }
            MetadataKind::Columns => created!(
                get_columns,
                TGetColumnsReq {
                    session_handle,
                    catalog_name: r.catalog_name,
                    schema_name: r.schema_name,
                    table_name: r.table_name,
                    column_name: r.column_name,
                }
            ),
            MetadataKind::Functions => created!(
                get_functions,
                TGetFunctionsReq {
                    session_handle,
                    catalog_name: r.catalog_name,
                    schema_name: r.schema_name,
                    function_name: r.function_name.unwrap_or_else(|| "%".to_owned()),
                }
            ),
            MetadataKind::PrimaryKeys => created!(
                get_primary_keys,
                TGetPrimaryKeysReq {
                    session_handle,
                    catalog_name: r.catalog_name,
                    schema_name: r.schema_name,
                    table_name: r.table_name,
                }
            ),
            MetadataKind::CrossReference => created!(
                get_cross_reference,
                TGetCrossReferenceReq {
                    session_handle,
                    parent_catalog_name: r.primary_catalog,
                    parent_schema_name: r.primary_schema,
                    parent_table_name: r.primary_table,
                    foreign_catalog_name: r.foreign_catalog,
                    foreign_schema_name: r.foreign_schema,
                    foreign_table_name: r.foreign_table,
                }
            ),
        };
        check(&status, false)?;
        let handle = handle.ok_or_else(|| {
            GatewayError::Internal(format!(
                "{} succeeded without an operation handle",
                kind.name()
            ))
        })?;
        Ok(self.record(RestOperation {
            session,
            handle: Some(handle),
            failure: None,
            statement: kind.name().to_owned(),
            run_async: false,
            created: now_ms(),
        }))
    }

    /// `GET /operations/{id}/{part}`.
    pub(super) async fn read(
        &self,
        id: &str,
        part: OperationPart,
        caller: &Caller<'_>,
        query: &Query,
    ) -> Result<Response<Full<Bytes>>, GatewayError> {
        let (id, operation, live) = self.operation(id, caller)?;
        match part {
            OperationPart::Event => {
                let user = live.route.user.clone();
                Ok(json(&self.event(id, operation, user, caller).await?))
            }
            OperationPart::Log => {
                let orientation = orientation(query, true)?;
                let max_rows = max_rows(query)?;
                let Some(handle) = operation.handle else {
                    return Ok(json(&results::log_lines(None)));
                };
                let req = TFetchResultsReq {
                    operation_handle: handle,
                    orientation,
                    max_rows,
                    fetch_type: Some(FETCH_TYPE_LOG),
                };
                let resp: TFetchResultsResp = call!(self, caller, fetch_results, req)?;
                check(&resp.status, false)?;
                Ok(json(&results::log_lines(resp.results)))
            }
            OperationPart::ResultSetMetadata => {
                let handle = operation
                    .handle
                    .ok_or_else(|| refused(&operation.failure))?;
                let req = TGetResultSetMetadataReq {
                    operation_handle: handle,
                };
                let resp: TGetResultSetMetadataResp =
                    call!(self, caller, get_result_set_metadata, req)?;
                check(&resp.status, false)?;
                let columns = resp.schema.map(|s| s.columns).unwrap_or_default();
                Ok(json(&results::metadata(&columns)))
            }
            OperationPart::RowSet => {
                let orientation = orientation(query, false)?;
                let max_rows = max_rows(query)?;
                let handle = operation
                    .handle
                    .ok_or_else(|| refused(&operation.failure))?;
                let req = TFetchResultsReq {
                    operation_handle: handle,
                    orientation,
                    max_rows,
                    fetch_type: Some(0),
                };
                let resp: TFetchResultsResp = call!(self, caller, fetch_results, req)?;
                check(&resp.status, false)?;
                Ok(json(&results::rows(resp.results)))
            }
        }
    }

    /// The operation's state from GetOperationStatus, as Kyuubi's `KyuubiOperationEvent`.
    async fn event(
        &self,
        id: Uuid,
        operation: RestOperation,
        session_user: String,
        caller: &Caller<'_>,
    ) -> Result<OperationEvent, GatewayError> {
        let (state, exception, started, completed) = match &operation.handle {
            None => ("ERROR", operation.failure.clone(), 0, operation.created),
            Some(handle) => {
                let req = TGetOperationStatusReq {
                    operation_handle: handle.clone(),
                    get_progress_update: None,
                };
                let resp: TGetOperationStatusResp = call!(self, caller, get_operation_status, req)?;
                check(&resp.status, false)?;
                let state = resp
                    .operation_state
                    .unwrap_or(TOperationState::UKNOWN_STATE);
                let exception = (state == TOperationState::ERROR_STATE).then(|| {
                    Exception::new(
                        resp.error_message.clone().unwrap_or_default(),
                        resp.sql_state.clone(),
                        resp.error_code.unwrap_or(0),
                    )
                });
                let millis = |t: Option<i64>| t.map_or(0, |t| t.max(0) as u64);
                (
                    results::state_name(state),
                    exception,
                    millis(resp.operation_started),
                    millis(resp.operation_completed),
                )
            }
        };
        Ok(OperationEvent {
            statement_id: id.to_string(),
            remote_id: id.to_string(),
            statement: operation.statement,
            should_run_async: operation.run_async,
            state,
            event_time: now_ms(),
            create_time: operation.created,
            start_time: started,
            complete_time: completed,
            exception,
            session_id: operation.session.to_string(),
            session_user,
            session_type: INTERACTIVE,
            kyuubi_instance: self.instance.clone(),
            metrics: BTreeMap::new(),
        })
    }

    /// `GET /sessions/{id}/operations`: the session's open operations, oldest first, each
    /// with its state (a GetOperationStatus each).
    pub(super) async fn operations(
        &self,
        id: &str,
        caller: &Caller<'_>,
    ) -> Result<Response<Full<Bytes>>, GatewayError> {
        let (session, _, live) = self.session(id, caller)?;
        let mut operations: Vec<(Uuid, RestOperation)> = self
            .known()
            .operations
            .iter()
            .filter(|(_, op)| op.session == session)
            .map(|(id, op)| (*id, op.clone()))
            .collect();
        operations.sort_by_key(|(_, op)| op.created);
        let mut list = Vec::with_capacity(operations.len());
        for (id, operation) in operations {
            match self
                .event(id, operation, live.route.user.clone(), caller)
                .await
            {
                Ok(event) => list.push(OperationData::from(event)),
                // Closed meanwhile.
                Err(GatewayError::NotFound(_)) => continue,
                Err(error) => return Err(error),
            }
        }
        Ok(json(&list))
    }

    /// `PUT /operations/{id}` with `{"action": "CANCEL" | "CLOSE"}`.
    pub(super) async fn act(
        &self,
        id: &str,
        caller: &Caller<'_>,
        body: &[u8],
    ) -> Result<Response<Full<Bytes>>, GatewayError> {
        let (id, operation, _) = self.operation(id, caller)?;
        let request: OpActionRequest = parse(body, "OpActionRequest")?;
        match request.action.to_ascii_lowercase().as_str() {
            "cancel" => {
                if let Some(handle) = operation.handle {
                    let req = TCancelOperationReq {
                        operation_handle: handle,
                    };
                    let resp: TCancelOperationResp = call!(self, caller, cancel_operation, req)?;
                    check(&resp.status, false)?;
                }
            }
            "close" => {
                self.known().operations.remove(&id);
                if let Some(handle) = operation.handle {
                    let req = TCloseOperationReq {
                        operation_handle: handle,
                    };
                    let resp: TCloseOperationResp = call!(self, caller, close_operation, req)?;
                    check(&resp.status, false)?;
                }
            }
            other => {
                return Err(GatewayError::BadRequest(format!(
                    "action `{other}` is not supported; use CANCEL or CLOSE"
                )))
            }
        }
        Ok(empty())
    }

    /// Remembers an operation of a REST session; answers with its identifier.
    fn record(&self, operation: RestOperation) -> Response<Full<Bytes>> {
        let id = operation
            .handle
            .as_ref()
            .and_then(HandleId::from_operation)
            .map_or_else(Uuid::new_v4, |h| h.guid);
        let mut known = self.known();
        if let Some(session) = known.sessions.get_mut(&operation.session) {
            session.operations += 1;
        }
        known.operations.insert(id, operation);
        if known.operations.len() >= known.sweep_at.max(FIRST_SWEEP) {
            self.sweep(&mut known);
            known.sweep_at = known.operations.len() * 2;
        }
        drop(known);
        json(&OperationHandle {
            identifier: id.to_string(),
        })
    }

    /// The REST session `id`, if the caller may use it and it is still open.
    fn session(
        &self,
        id: &str,
        caller: &Caller<'_>,
    ) -> Result<(Uuid, RestSession, Arc<GatewaySession>), GatewayError> {
        let unknown = || {
            GatewayError::NotFound(format!(
                "session `{id}` is unknown to this gateway (closed, timed out, or opened elsewhere); open a new session"
            ))
        };
        let uuid = parse_id(id, "session")?;
        if let Some(closed) = self.sessions.closed_by_operator(&uuid) {
            return Err(closed);
        }
        let Some(known) = self.known().sessions.get(&uuid).cloned() else {
            if self.sessions.find(&uuid).is_some() {
                return Err(GatewayError::NotFound(format!(
                    "session `{id}` was opened over Thrift (binary or HTTP), not over REST: it is listed here, and only its own client can use it"
                )));
            }
            return Err(unknown());
        };
        let Some(live) = self.sessions.peek(&known.handle) else {
            self.forget_session(uuid);
            return Err(unknown());
        };
        if !may_use(&live, caller) {
            return Err(GatewayError::Refused(format!(
                "session `{id}` belongs to user `{}`; `{}` may not use it",
                live.route.user, caller.user
            )));
        }
        Ok((uuid, known, live))
    }

    /// The REST operation `id`, if the caller may use its session and it is still open.
    fn operation(
        &self,
        id: &str,
        caller: &Caller<'_>,
    ) -> Result<(Uuid, RestOperation, Arc<GatewaySession>), GatewayError> {
        let unknown = || {
            GatewayError::NotFound(format!(
                "operation `{id}` is unknown to this gateway (closed, timed out, or run elsewhere); run the statement again"
            ))
        };
        let uuid = parse_id(id, "operation")?;
        if let Some(closed) = self.sessions.closed_by_operator(&uuid) {
            return Err(closed);
        }
        let operation = self
            .known()
            .operations
            .get(&uuid)
            .cloned()
            .ok_or_else(unknown)?;
        // Closed by the gateway meanwhile (idle, or with its session).
        if let Some(handle) = &operation.handle {
            if !self.sessions.has_operation(handle) {
                self.known().operations.remove(&uuid);
                return Err(unknown());
            }
        }
        let session = operation.session.to_string();
        let (_, _, live) = self.session(&session, caller).map_err(|e| match e {
            GatewayError::NotFound(_) => unknown(),
            GatewayError::Refused(message) => {
                GatewayError::Refused(format!("operation `{id}` runs in {message}"))
            }
            other => other,
        })?;
        Ok((uuid, operation, live))
    }

    fn forget_session(&self, id: Uuid) {
        let mut known = self.known();
        known.sessions.remove(&id);
        known.operations.retain(|_, op| op.session != id);
    }

    /// Forgets the REST sessions the gateway has closed (idle, shut down) and the
    /// operations it has closed (with their session, or idle).
    fn forget_closed(&self) {
        self.sweep(&mut self.known());
    }

    fn sweep(&self, known: &mut Known) {
        known
            .sessions
            .retain(|_, s| self.sessions.peek(&s.handle).is_some());
        let Known {
            sessions,
            operations,
            ..
        } = known;
        operations.retain(|_, op| {
            sessions.contains_key(&op.session)
                && op
                    .handle
                    .as_ref()
                    .is_none_or(|handle| self.sessions.has_operation(handle))
        });
    }

    /// A session as Kyuubi's `SessionData`; `known`: what the REST API kept of it, if it was
    /// opened over REST (the settings as sent, rather than as the gateway kept them).
    pub(super) fn session_data(
        &self,
        live: &GatewaySession,
        known: Option<&RestSession>,
    ) -> SessionData {
        let (engine_url, exception) = match live.launch.state() {
            crate::operation::launch_engine::LaunchState::Finished(engine) => {
                (engine.registration.address(), String::new())
            }
            crate::operation::launch_engine::LaunchState::Failed(error) => {
                (String::new(), error.to_string())
            }
            _ => (String::new(), String::new()),
        };
        let remote_session_id = live
            .engine
            .try_lock()
            .ok()
            .and_then(|link| {
                link.as_ref()
                    .and_then(|link| HandleId::from_session(&link.session_handle))
            })
            .map(|h| h.guid.to_string())
            .unwrap_or_default();
        let idle = live.idle_for().as_millis() as u64;
        let now = now_ms();
        let conf = match known {
            Some(known) => known.conf.clone(),
            None => live.route.conf.settings.clone().into_iter().collect(),
        };
        SessionData {
            identifier: live.id.guid.to_string(),
            remote_session_id,
            user: live.route.user.clone(),
            ip_addr: live.client_ip.clone(),
            conf,
            create_time: live.created_ms,
            duration: now.saturating_sub(live.created_ms).saturating_sub(idle),
            idle_time: idle,
            exception,
            session_type: INTERACTIVE,
            kyuubi_instance: self.instance.clone(),
            engine_id: live.route.engine_ref.id(),
            engine_name: String::new(),
            engine_url,
            session_name: String::new(),
            total_operations: live.operations_created(),
        }
    }
}

/// Whether the caller may use `session`: it runs as them or they opened it, or they are a
/// super user of its cluster acting as its user.
pub(super) fn may_use(session: &GatewaySession, caller: &Caller<'_>) -> bool {
    let route = &session.route;
    route.user == caller.user
        || route.login_user == caller.user
        || caller.proxy.is_some_and(|proxy| {
            proxy == route.user && route.cluster.config.is_super_user(caller.user)
        })
}

/// A reply of the service, decoded when it was forwarded as bytes.
fn typed<T: TSerializable>(reply: Reply<T>) -> Result<T, GatewayError> {
    match reply {
        Reply::Typed(resp) => Ok(resp),
        Reply::Encoded(bytes) => decode_result_body(&bytes)
            .map_err(|e| GatewayError::EngineRefused(format!("its reply cannot be read: {e}"))),
    }
}

/// A reply's status as an answer: unknown handles are 404, a session the gateway refuses to
/// open is 403 (`refusal`: the OpenSession reply, where SQLSTATE 42000 means refused), the
/// engine's errors and the gateway's other refusals are the client's to fix (400), but for
/// a lost engine (08xxx) or a launch still running (HYT00), which are nobody's input.
fn check(status: &TStatus, refusal: bool) -> Result<(), GatewayError> {
    if status::is_ok(status) {
        return Ok(());
    }
    let message = status
        .error_message
        .clone()
        .unwrap_or_else(|| "the call failed without a message".to_owned());
    let state = status.sql_state.as_deref().unwrap_or("");
    Err(match status.status_code {
        TStatusCode::INVALID_HANDLE_STATUS => GatewayError::NotFound(message),
        _ if refusal && state == "42000" => GatewayError::Refused(message),
        _ if state.starts_with("08") || state == "HYT00" => GatewayError::Upstream(message),
        _ => GatewayError::BadRequest(message),
    })
}

fn exception(status: &TStatus) -> Exception {
    Exception::new(
        status.error_message.clone().unwrap_or_default(),
        status.sql_state.clone(),
        status.error_code.unwrap_or(0),
    )
}

/// Reading results of a statement the engine refused.
fn refused(failure: &Option<Exception>) -> GatewayError {
    let message = failure
        .as_ref()
        .map_or("", |failure| failure.message.as_str());
    GatewayError::BadRequest(format!(
        "the statement failed, it has no results: {message}"
    ))
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8], what: &str) -> Result<T, GatewayError> {
    serde_json::from_slice(body)
        .map_err(|e| GatewayError::BadRequest(format!("the {what} cannot be read: {e}")))
}

/// `fetchorientation` (FETCH_NEXT by default); the log reads on or from its start only.
fn orientation(query: &Query, log: bool) -> Result<TFetchOrientation, GatewayError> {
    let text = query.get("fetchorientation").unwrap_or("FETCH_NEXT");
    let orientation = match text.to_ascii_uppercase().as_str() {
        "FETCH_NEXT" => TFetchOrientation::FETCH_NEXT,
        "FETCH_FIRST" => TFetchOrientation::FETCH_FIRST,
        "FETCH_PRIOR" if !log => TFetchOrientation::FETCH_PRIOR,
        "FETCH_RELATIVE" if !log => TFetchOrientation::FETCH_RELATIVE,
        "FETCH_ABSOLUTE" if !log => TFetchOrientation::FETCH_ABSOLUTE,
        "FETCH_LAST" if !log => TFetchOrientation::FETCH_LAST,
        _ => {
            return Err(GatewayError::BadRequest(format!(
                "fetchorientation `{text}` is not supported{}; use FETCH_NEXT or FETCH_FIRST",
                if log { " for the operation log" } else { "" }
            )))
        }
    };
    Ok(orientation)
}

/// `maxrows`: 100 by default, at most [`MAX_FETCH_ROWS`].
fn max_rows(query: &Query) -> Result<i64, GatewayError> {
    let rows: i64 = query.number("maxrows", DEFAULT_FETCH_ROWS)?;
    if rows < 0 {
        return Err(GatewayError::BadRequest(format!(
            "`maxrows` {rows} must not be negative"
        )));
    }
    Ok(rows.min(MAX_FETCH_ROWS))
}

/// An identifier of the path: one that is no UUID is unknown (404), as in Kyuubi.
fn parse_id(id: &str, what: &str) -> Result<Uuid, GatewayError> {
    Uuid::parse_str(id).map_err(|_| {
        GatewayError::NotFound(format!("invalid {what} id `{id}`: {what} ids are UUIDs"))
    })
}

fn guid(id: &THandleIdentifier) -> Result<Uuid, GatewayError> {
    HandleId::from_thrift(id)
        .map(|h| h.guid)
        .ok_or_else(|| GatewayError::Internal("a handle that is not 16 bytes".to_owned()))
}

/// Kyuubi's answer to DELETE and PUT: 200, no body.
fn empty() -> Response<Full<Bytes>> {
    text_response(StatusCode::OK, String::new())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
