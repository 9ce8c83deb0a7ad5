//! The HiveServer2 service of the engine: each RPC translated to an [`Engine`] call and back.
//!
//! Nothing is decided here: handles are read, the engine called, its answer or error put
//! into the response. Result rows are encoded straight from Arrow by [`crate::rowset`].

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use datafusion::arrow::datatypes::Schema;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::DataFusionError;
use datafusion::sql::sqlparser::keywords::ALL_KEYWORDS;
use kumiho_thrift::assigned_id;
use kumiho_thrift::cli::*;
use kumiho_thrift::handle::HandleId;
use kumiho_thrift::service::{CallContext, CliService, Reply};
use kumiho_thrift::status::{self, FromStatus};

use crate::engine::{Engine, EngineError};
use crate::operation::OpError;
use crate::session::Session;
use crate::{metadata, rowset, types};

/// The newest protocol this engine speaks; a client gets `min(its own, this)`.
pub const MAX_PROTOCOL: TProtocolVersion = TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V11;
/// The oldest protocol accepted: results are columnar, which V6 introduced.
pub const MIN_PROTOCOL: TProtocolVersion = TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V6;
/// The fetch size the OpenSession reply suggests (newer Hive JDBC drivers require one).
pub const DEFAULT_FETCH_SIZE: usize = 1000;
/// What GetInfo(CLI_DBMS_NAME) answers; beeline prints "Connected to: NAME (version V)".
pub const DBMS_NAME: &str = "Kumiho DataFusion Engine";
/// What GetInfo(CLI_SERVER_NAME) answers.
pub const SERVER_NAME: &str = "Kumiho";
/// How long GetOperationStatus waits for a running operation to finish before answering.
const STATUS_WAIT: Duration = Duration::from_millis(500);

/// `kumiho-engine`'s [`CliService`].
pub struct EngineService {
    engine: Engine,
}

impl EngineService {
    pub fn new(engine: Engine) -> Self {
        Self { engine }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// A metadata RPC's reply fields: the session its handle names computes the rows with
    /// `rows`, and the client gets a FINISHED operation serving them, or the error.
    async fn metadata_reply<F, Fut>(
        &self,
        session_handle: &TSessionHandle,
        kind: TOperationType,
        rows: F,
    ) -> (TStatus, Option<TOperationHandle>)
    where
        F: FnOnce(Arc<Session>) -> Fut,
        Fut: Future<Output = Result<RecordBatch, DataFusionError>>,
    {
        let result = match session_id(session_handle) {
            Ok(id) => self.engine.metadata(&id, kind, rows).await,
            Err(error) => Err(error),
        };
        op_reply(result)
    }
}

fn session_id(handle: &TSessionHandle) -> Result<HandleId, EngineError> {
    HandleId::from_session(handle).ok_or(EngineError::UnknownSession)
}

/// The operation handle the gateway assigned the statement, if it did.
fn assigned_operation(req: &TExecuteStatementReq) -> Result<Option<HandleId>, EngineError> {
    let Some(value) = req
        .conf_overlay
        .as_ref()
        .and_then(|overlay| overlay.get(assigned_id::OPERATION_ID_KEY))
    else {
        return Ok(None);
    };
    assigned_id::decode(value).map(Some).ok_or_else(|| {
        EngineError::Operation(OpError::new(
            status::SQLSTATE_SYNTAX,
            format!(
                "{} must be a guid and a secret, `guid:secret`",
                assigned_id::OPERATION_ID_KEY
            ),
        ))
    })
}

fn operation_id(handle: &TOperationHandle) -> Result<HandleId, EngineError> {
    HandleId::from_operation(handle).ok_or(EngineError::UnknownOperation)
}

/// The handle a client gets for an operation.
fn handle_of(op: &crate::operation::Operation) -> TOperationHandle {
    let mut handle = op.id.operation_handle(op.kind, op.has_result_set());
    handle.modified_row_count = op.status().modified_rows.map(|n| (n as f64).into());
    handle
}

/// The status of a call that returns an operation handle, or its error.
fn op_reply(
    result: Result<Arc<crate::operation::Operation>, EngineError>,
) -> (TStatus, Option<TOperationHandle>) {
    match result {
        Ok(op) => (status::ok(), Some(handle_of(&op))),
        Err(error) => (error.to_status(), None),
    }
}

fn fetch_error(error: EngineError) -> Reply<TFetchResultsResp> {
    Reply::Typed(TFetchResultsResp {
        status: error.to_status(),
        has_more_rows: None,
        results: None,
    })
}

/// The GetInfo answers; `None` for a type this engine does not report.
fn info_value(engine: &Engine, session: HandleId, info: TGetInfoType) -> Option<TGetInfoValue> {
    let text = |s: &str| Some(TGetInfoValue::StringValue(s.to_owned()));
    match info {
        TGetInfoType::CLI_DBMS_NAME => text(DBMS_NAME),
        TGetInfoType::CLI_DBMS_VER => text(env!("CARGO_PKG_VERSION")),
        TGetInfoType::CLI_SERVER_NAME => text(SERVER_NAME),
        TGetInfoType::CLI_USER_NAME => engine.session(&session).ok().and_then(|s| text(&s.user)),
        TGetInfoType::CLI_IDENTIFIER_QUOTE_CHAR => text("`"),
        TGetInfoType::CLI_SEARCH_PATTERN_ESCAPE => text("\\"),
        TGetInfoType::CLI_DATA_SOURCE_READ_ONLY => text("N"),
        TGetInfoType::CLI_CATALOG_NAME => text("Y"),
        TGetInfoType::CLI_ORDER_BY_COLUMNS_IN_SELECT => text("N"),
        TGetInfoType::CLI_MAX_COLUMN_NAME_LEN
        | TGetInfoType::CLI_MAX_SCHEMA_NAME_LEN
        | TGetInfoType::CLI_MAX_TABLE_NAME_LEN
        | TGetInfoType::CLI_MAX_CATALOG_NAME_LEN
        | TGetInfoType::CLI_MAX_IDENTIFIER_LEN => Some(TGetInfoValue::LenValue(128)),
        TGetInfoType::CLI_TXN_CAPABLE => Some(TGetInfoValue::SmallIntValue(0)),
        // Hive JDBC 3 and later answer `DatabaseMetaData.getSQLKeywords` with this; SQL
        // editors highlight and quote by it.
        TGetInfoType::CLI_ODBC_KEYWORDS => text(&ALL_KEYWORDS.join(",")),
        _ => None,
    }
}

impl CliService for EngineService {
    async fn open_session(
        &self,
        ctx: &CallContext,
        req: TOpenSessionReq,
    ) -> Reply<TOpenSessionResp> {
        let protocol = TProtocolVersion(req.client_protocol.0.min(MAX_PROTOCOL.0));
        let refuse = |status| {
            Reply::Typed(TOpenSessionResp {
                status,
                server_protocol_version: protocol,
                session_handle: None,
                configuration: None,
            })
        };
        if protocol.0 < MIN_PROTOCOL.0 {
            return refuse(status::error(
                status::SQLSTATE_NOT_SUPPORTED,
                format!(
                    "client protocol version {} is too old: Kumiho needs HIVE_CLI_SERVICE_PROTOCOL_V6 or later; upgrade the driver",
                    req.client_protocol.0 + 1
                ),
            ));
        }
        let user = ctx
            .user
            .clone()
            .or(req.username.clone())
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| "anonymous".to_owned());
        let configuration = req.configuration.unwrap_or_default();
        match self
            .engine
            .open_session(user.clone(), ctx.connection_id, &configuration)
        {
            Ok(session) => {
                tracing::info!(session = %session.id, %user, peer = %ctx.peer, "session opened");
                let reply_conf = BTreeMap::from([
                    (
                        "hive.server2.thrift.resultset.default.fetch.size".to_owned(),
                        DEFAULT_FETCH_SIZE.to_string(),
                    ),
                    (assigned_id::ACCEPTED_KEY.to_owned(), "true".to_owned()),
                ]);
                Reply::Typed(TOpenSessionResp {
                    status: status::ok(),
                    server_protocol_version: protocol,
                    session_handle: Some(session.id.session_handle()),
                    configuration: Some(reply_conf),
                })
            }
            Err(error) => refuse(error.to_status()),
        }
    }

    async fn close_session(
        &self,
        _ctx: &CallContext,
        req: TCloseSessionReq,
    ) -> Reply<TCloseSessionResp> {
        let result = session_id(&req.session_handle).and_then(|id| self.engine.close_session(&id));
        Reply::Typed(TCloseSessionResp {
            status: result.map_or_else(|e| e.to_status(), |()| status::ok()),
        })
    }

    async fn get_info(&self, _ctx: &CallContext, req: TGetInfoReq) -> Reply<TGetInfoResp> {
        let answer = session_id(&req.session_handle)
            .and_then(|id| self.engine.session(&id).map(|_| id))
            .map(|id| info_value(&self.engine, id, req.info_type));
        let (status, value) = match answer {
            Ok(Some(value)) => (status::ok(), value),
            Ok(None) => (
                status::error(
                    status::SQLSTATE_NOT_SUPPORTED,
                    format!(
                        "GetInfo type {} is not supported by this server",
                        req.info_type.0
                    ),
                ),
                TGetInfoValue::StringValue(String::new()),
            ),
            Err(error) => (error.to_status(), TGetInfoValue::StringValue(String::new())),
        };
        Reply::Typed(TGetInfoResp {
            status,
            info_value: value,
        })
    }

    async fn execute_statement(
        &self,
        _ctx: &CallContext,
        req: TExecuteStatementReq,
    ) -> Reply<TExecuteStatementResp> {
        let timeout = req
            .query_timeout
            .filter(|&seconds| seconds > 0)
            .map(|seconds| Duration::from_secs(seconds as u64));
        let run_async = req.run_async.unwrap_or(false);
        let result = match (session_id(&req.session_handle), assigned_operation(&req)) {
            (Ok(session), Ok(id)) => {
                let id = id.unwrap_or_default();
                let no_overlay = BTreeMap::new();
                let overlay = req.conf_overlay.as_ref().unwrap_or(&no_overlay);
                self.engine
                    .execute_as(id, &session, &req.statement, overlay, run_async, timeout)
                    .await
            }
            (Err(error), _) | (_, Err(error)) => Err(error),
        };
        let (status, operation_handle) = op_reply(result);
        Reply::Typed(TExecuteStatementResp {
            status,
            operation_handle,
        })
    }

    async fn get_type_info(
        &self,
        _ctx: &CallContext,
        req: TGetTypeInfoReq,
    ) -> Reply<TGetTypeInfoResp> {
        let (status, operation_handle) = self
            .metadata_reply(
                &req.session_handle,
                TOperationType::GET_TYPE_INFO,
                |_| async { metadata::type_info() },
            )
            .await;
        Reply::Typed(TGetTypeInfoResp {
            status,
            operation_handle,
        })
    }

    async fn get_catalogs(
        &self,
        _ctx: &CallContext,
        req: TGetCatalogsReq,
    ) -> Reply<TGetCatalogsResp> {
        let (status, operation_handle) = self
            .metadata_reply(
                &req.session_handle,
                TOperationType::GET_CATALOGS,
                |session| async move { metadata::catalogs(session.context()) },
            )
            .await;
        Reply::Typed(TGetCatalogsResp {
            status,
            operation_handle,
        })
    }

    async fn get_schemas(&self, _ctx: &CallContext, req: TGetSchemasReq) -> Reply<TGetSchemasResp> {
        let (status, operation_handle) = self
            .metadata_reply(
                &req.session_handle,
                TOperationType::GET_SCHEMAS,
                |session| async move {
                    metadata::schemas(
                        session.context(),
                        req.catalog_name.as_deref(),
                        req.schema_name.as_deref(),
                    )
                },
            )
            .await;
        Reply::Typed(TGetSchemasResp {
            status,
            operation_handle,
        })
    }

    async fn get_tables(&self, _ctx: &CallContext, req: TGetTablesReq) -> Reply<TGetTablesResp> {
        let (status, operation_handle) = self
            .metadata_reply(
                &req.session_handle,
                TOperationType::GET_TABLES,
                |session| async move {
                    metadata::tables(
                        session.context(),
                        req.catalog_name.as_deref(),
                        req.schema_name.as_deref(),
                        req.table_name.as_deref(),
                        req.table_types.as_deref(),
                    )
                },
            )
            .await;
        Reply::Typed(TGetTablesResp {
            status,
            operation_handle,
        })
    }

    async fn get_table_types(
        &self,
        _ctx: &CallContext,
        req: TGetTableTypesReq,
    ) -> Reply<TGetTableTypesResp> {
        let (status, operation_handle) = self
            .metadata_reply(
                &req.session_handle,
                TOperationType::GET_TABLE_TYPES,
                |_| async { metadata::table_types() },
            )
            .await;
        Reply::Typed(TGetTableTypesResp {
            status,
            operation_handle,
        })
    }

    async fn get_columns(&self, _ctx: &CallContext, req: TGetColumnsReq) -> Reply<TGetColumnsResp> {
        let (status, operation_handle) = self
            .metadata_reply(
                &req.session_handle,
                TOperationType::GET_COLUMNS,
                |session| async move {
                    metadata::columns(
                        session.context(),
                        req.catalog_name.as_deref(),
                        req.schema_name.as_deref(),
                        req.table_name.as_deref(),
                        req.column_name.as_deref(),
                    )
                },
            )
            .await;
        Reply::Typed(TGetColumnsResp {
            status,
            operation_handle,
        })
    }

    async fn get_functions(
        &self,
        _ctx: &CallContext,
        req: TGetFunctionsReq,
    ) -> Reply<TGetFunctionsResp> {
        let (status, operation_handle) = self
            .metadata_reply(
                &req.session_handle,
                TOperationType::GET_FUNCTIONS,
                |session| async move {
                    metadata::functions(
                        session.context(),
                        req.catalog_name.as_deref(),
                        req.schema_name.as_deref(),
                        &req.function_name,
                    )
                },
            )
            .await;
        Reply::Typed(TGetFunctionsResp {
            status,
            operation_handle,
        })
    }

    async fn get_primary_keys(
        &self,
        _ctx: &CallContext,
        req: TGetPrimaryKeysReq,
    ) -> Reply<TGetPrimaryKeysResp> {
        // Hive files key listings under GET_FUNCTIONS; the IDL has no type of their own.
        let (status, operation_handle) = self
            .metadata_reply(
                &req.session_handle,
                TOperationType::GET_FUNCTIONS,
                |session| async move {
                    metadata::primary_keys(
                        session.context(),
                        req.catalog_name.as_deref(),
                        req.schema_name.as_deref(),
                        req.table_name.as_deref(),
                    )
                },
            )
            .await;
        Reply::Typed(TGetPrimaryKeysResp {
            status,
            operation_handle,
        })
    }

    async fn get_cross_reference(
        &self,
        _ctx: &CallContext,
        req: TGetCrossReferenceReq,
    ) -> Reply<TGetCrossReferenceResp> {
        let (status, operation_handle) = self
            .metadata_reply(
                &req.session_handle,
                TOperationType::GET_FUNCTIONS,
                |_| async { metadata::cross_reference() },
            )
            .await;
        Reply::Typed(TGetCrossReferenceResp {
            status,
            operation_handle,
        })
    }

    async fn get_operation_status(
        &self,
        _ctx: &CallContext,
        req: TGetOperationStatusReq,
    ) -> Reply<TGetOperationStatusResp> {
        let op = match operation_id(&req.operation_handle).and_then(|id| self.engine.operation(&id))
        {
            Ok(op) => op,
            Err(error) => {
                return Reply::Typed(TGetOperationStatusResp::from_status(error.to_status()))
            }
        };
        let current = op.wait_for_progress(STATUS_WAIT).await;
        let error = current.error.filter(|_| {
            !matches!(
                current.state,
                crate::operation::OpState::Finished | crate::operation::OpState::Closed
            )
        });
        Reply::Typed(TGetOperationStatusResp {
            status: status::ok(),
            operation_state: Some(current.state.to_thrift()),
            sql_state: error.as_ref().map(|e| e.sql_state.to_owned()),
            error_code: error.as_ref().map(|_| 0),
            error_message: error.map(|e| e.message),
            task_status: None,
            operation_started: Some(current.started_ms),
            operation_completed: current.completed_ms,
            has_result_set: Some(op.has_result_set()),
            progress_update_response: None,
            num_modified_rows: current.modified_rows,
        })
    }

    async fn cancel_operation(
        &self,
        _ctx: &CallContext,
        req: TCancelOperationReq,
    ) -> Reply<TCancelOperationResp> {
        let result = operation_id(&req.operation_handle).and_then(|id| self.engine.operation(&id));
        Reply::Typed(TCancelOperationResp {
            status: match result {
                Ok(op) => {
                    op.cancel();
                    status::ok()
                }
                Err(error) => error.to_status(),
            },
        })
    }

    async fn close_operation(
        &self,
        _ctx: &CallContext,
        req: TCloseOperationReq,
    ) -> Reply<TCloseOperationResp> {
        let result =
            operation_id(&req.operation_handle).and_then(|id| self.engine.close_operation(&id));
        Reply::Typed(TCloseOperationResp {
            status: result.map_or_else(|e| e.to_status(), |()| status::ok()),
        })
    }

    async fn get_result_set_metadata(
        &self,
        _ctx: &CallContext,
        req: TGetResultSetMetadataReq,
    ) -> Reply<TGetResultSetMetadataResp> {
        let op = match operation_id(&req.operation_handle).and_then(|id| self.engine.operation(&id))
        {
            Ok(op) => op,
            Err(error) => {
                return Reply::Typed(TGetResultSetMetadataResp::from_status(error.to_status()))
            }
        };
        let schema = op.schema().unwrap_or_else(|| Arc::new(Schema::empty()));
        Reply::Typed(TGetResultSetMetadataResp {
            status: status::ok(),
            schema: Some(types::table_schema(&schema)),
        })
    }

    async fn fetch_results(
        &self,
        _ctx: &CallContext,
        req: TFetchResultsReq,
    ) -> Reply<TFetchResultsResp> {
        let op = match operation_id(&req.operation_handle).and_then(|id| self.engine.operation(&id))
        {
            Ok(op) => op,
            Err(error) => return fetch_error(error),
        };
        let from_start = match req.orientation {
            TFetchOrientation::FETCH_NEXT => false,
            TFetchOrientation::FETCH_FIRST => true,
            other => {
                return Reply::Typed(TFetchResultsResp {
                    status: status::error(
                        status::SQLSTATE_NOT_SUPPORTED,
                        format!(
                            "fetch orientation {} is not supported: use FETCH_NEXT or FETCH_FIRST",
                            other.0
                        ),
                    ),
                    has_more_rows: None,
                    results: None,
                })
            }
        };
        let max_rows = usize::try_from(req.max_rows).unwrap_or(0);
        match req.fetch_type.unwrap_or(0) {
            0 => match op.fetch(from_start, max_rows).await {
                Ok(fetched) => Reply::Encoded(rowset::encode_fetch_result(
                    &fetched.batches,
                    fetched.start_offset,
                    fetched.has_more,
                )),
                Err(error) => fetch_error(EngineError::Operation(error)),
            },
            1 => {
                let lines = op.fetch_log(from_start, max_rows);
                Reply::Encoded(rowset::encode_string_rows(&lines, 0))
            }
            other => Reply::Typed(TFetchResultsResp {
                status: status::error(
                    status::SQLSTATE_NOT_SUPPORTED,
                    format!("fetch type {other} is not supported: 0 reads results, 1 the log"),
                ),
                has_more_rows: None,
                results: None,
            }),
        }
    }

    async fn connection_closed(&self, ctx: &CallContext) {
        self.engine.close_connection(ctx.connection_id);
    }
}

#[cfg(test)]
mod tests;
