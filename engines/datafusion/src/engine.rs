//! The engine: its catalog, sessions and operations, and the flows of the HiveServer2 calls.
//!
//! [`Engine`] decides; `service.rs` only translates between Thrift and these methods,
//! so that tests drive the engine exactly as a client would, without encoding.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::DataFusionError;
use kumiho_thrift::cli::TOperationType;
use kumiho_thrift::cli::TStatus;
use kumiho_thrift::handle::HandleId;
use kumiho_thrift::session_conf::{self, SessionConfError};
use kumiho_thrift::status::{self, SQLSTATE_GENERAL};

use crate::catalog::{self, TableRegistrationError};
use crate::config::EngineConfig;
use crate::operation::{OpError, OpState, Operation, OperationManager};
use crate::session::{Session, SessionError, SessionManager};
use crate::statement::{self, Planned};
use crate::warehouse::{self, Warehouse};

/// Longest statement text written to an operation log; longer ones are cut.
const MAX_LOGGED_STATEMENT_CHARS: usize = 2_000;

/// Why a call failed, and whose fault it is.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The client sent a session handle this engine does not know (closed, or another
    /// engine's).
    #[error("invalid session handle: the session is closed or was opened on another server; open a new session")]
    UnknownSession,
    /// The client sent an operation handle this engine does not know.
    #[error("invalid operation handle: the operation is closed or unknown")]
    UnknownOperation,
    #[error(transparent)]
    Conf(#[from] SessionConfError),
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A statement or metadata call failed.
    #[error("{}", .0.message)]
    Operation(OpError),
}

impl EngineError {
    /// The status a client sees.
    pub fn to_status(&self) -> TStatus {
        match self {
            EngineError::UnknownSession | EngineError::UnknownOperation => {
                status::invalid_handle(self.to_string())
            }
            EngineError::Conf(_) | EngineError::Session(_) => {
                status::error(status::SQLSTATE_SYNTAX, self.to_string())
            }
            EngineError::Operation(error) => status::error(error.sql_state, error.message.clone()),
        }
    }
}

/// A failure while starting the engine.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Table(#[from] TableRegistrationError),
    #[error("cannot create the demo database: {0}")]
    Demo(DataFusionError),
    #[error("cannot open the warehouse at '{location}': {reason}")]
    Warehouse { location: String, reason: String },
    #[error("time zone '{zone}': {reason}")]
    TimeZone { zone: String, reason: String },
}

/// One engine: a shared catalog, its sessions, their operations.
pub struct Engine {
    sessions: SessionManager,
    operations: OperationManager,
}

impl Engine {
    /// Builds the catalog (demo data, configured tables) and an engine with no session.
    /// A table that cannot be registered stops the start, naming the table and location.
    pub async fn start(config: &EngineConfig) -> Result<Self, StartupError> {
        let warehouse = match &config.warehouse {
            Some(location) => {
                Some(
                    Warehouse::open(location).map_err(|e| StartupError::Warehouse {
                        location: location.clone(),
                        reason: e.strip_backtrace(),
                    })?,
                )
            }
            None => None,
        };
        let catalogs = match &warehouse {
            Some(warehouse) => warehouse::catalog::catalog_list(Arc::clone(warehouse)),
            None => catalog::new_catalog_list(),
        };
        if config.demo_enabled() {
            let parts = std::thread::available_parallelism().map_or(1, |n| n.get());
            catalog::register_demo_data(catalogs.as_ref(), config.tpch_scale, parts)
                .map_err(StartupError::Demo)?;
        }
        let time_zone = match &config.time_zone {
            Some(zone) => Some(crate::time_zones::session_setting(zone).map_err(|reason| {
                StartupError::TimeZone {
                    zone: zone.clone(),
                    reason,
                }
            })?),
            None => None,
        };
        let sessions = SessionManager::new(catalogs, time_zone.as_deref());
        let setup = sessions.new_context();
        if let Some(warehouse) = &warehouse {
            warehouse.set_planner(setup.state());
            tracing::info!(warehouse = %warehouse.root(), "warehouse opened");
        }
        for (name, table) in &config.tables {
            catalog::register_table(&setup, name, table).await?;
        }
        Ok(Self {
            sessions,
            operations: OperationManager::new(),
        })
    }

    pub fn sessions(&self) -> &SessionManager {
        &self.sessions
    }

    pub fn operations(&self) -> &OperationManager {
        &self.operations
    }

    /// OpenSession: normalises the client's configuration and opens a session.
    pub fn open_session(
        &self,
        user: String,
        connection_id: u64,
        configuration: &BTreeMap<String, String>,
    ) -> Result<Arc<Session>, EngineError> {
        let conf = session_conf::normalize(configuration)?;
        Ok(self.sessions.open(user, connection_id, &conf)?)
    }

    pub fn session(&self, id: &HandleId) -> Result<Arc<Session>, EngineError> {
        self.sessions.get(id).ok_or(EngineError::UnknownSession)
    }

    /// CloseSession: closes the session and every operation it still has.
    pub fn close_session(&self, id: &HandleId) -> Result<(), EngineError> {
        let session = self
            .sessions
            .remove(id)
            .ok_or(EngineError::UnknownSession)?;
        for op in session.operation_ids() {
            self.operations.close(&op);
        }
        tracing::debug!(session = %id, user = %session.user, "session closed");
        Ok(())
    }

    /// A binary connection ended: its sessions end with it.
    pub fn close_connection(&self, connection_id: u64) {
        for id in self.sessions.opened_on(connection_id) {
            let _ = self.close_session(&id);
        }
    }

    pub fn operation(&self, id: &HandleId) -> Result<Arc<Operation>, EngineError> {
        self.operations.get(id).ok_or(EngineError::UnknownOperation)
    }

    /// CloseOperation.
    pub fn close_operation(&self, id: &HandleId) -> Result<(), EngineError> {
        let op = self
            .operations
            .close(id)
            .ok_or(EngineError::UnknownOperation)?;
        if let Some(session) = self.sessions.get(&op.session_id) {
            session.remove_operation(&op.id);
        }
        Ok(())
    }

    fn register(&self, session: &Session, op: &Arc<Operation>) {
        self.operations.insert(Arc::clone(op));
        session.add_operation(op.id);
    }

    /// ExecuteStatement: plans the statement now (so the handle can say whether it has a
    /// result set), runs it in the background, and with `run_async` false waits for it.
    ///
    /// Asynchronously, any failure is the operation's ERROR state; synchronously it is the
    /// call's error and the operation is closed.
    pub async fn execute(
        &self,
        session_id: &HandleId,
        sql: &str,
        run_async: bool,
        timeout: Option<Duration>,
    ) -> Result<Arc<Operation>, EngineError> {
        let no_overlay = BTreeMap::new();
        self.execute_as(
            HandleId::new(),
            session_id,
            sql,
            &no_overlay,
            run_async,
            timeout,
        )
        .await
    }

    /// [`Self::execute`] under the operation handle `id` (the gateway's, which it gave its
    /// client before this engine answered; a handle in use already is refused), with the
    /// statement's `confOverlay` ([`crate::session::Session::statement_context`]).
    pub async fn execute_as(
        &self,
        id: HandleId,
        session_id: &HandleId,
        sql: &str,
        overlay: &BTreeMap<String, String>,
        run_async: bool,
        timeout: Option<Duration>,
    ) -> Result<Arc<Operation>, EngineError> {
        let session = self.session(session_id)?;
        let sql = session.substitute_variables(sql)?;
        let context = session.statement_context(overlay)?;
        let op = Operation::with_id(id, session.id, TOperationType::EXECUTE_STATEMENT);
        if !self.operations.insert_new(Arc::clone(&op)) {
            return Err(EngineError::Operation(OpError::new(
                SQLSTATE_GENERAL,
                format!("operation handle {id} is in use already"),
            )));
        }
        session.add_operation(op.id);
        op.log(format!("Statement: {}", abbreviate(&sql)));
        op.log("Parsing and planning");
        match statement::plan(&context, &sql).await {
            Err(error) => op.fail(&error),
            Ok(planned) => {
                op.set_has_result_set(planned.has_result_set());
                if let Planned::Plan(plan) = &planned {
                    op.set_schema(Arc::clone(plan.schema().inner()));
                    op.log_plan(plan);
                }
                tokio::spawn(Arc::clone(&op).run(session, context, planned, timeout));
            }
        }
        if run_async {
            return Ok(op);
        }
        let status = op.wait_until_done().await;
        match status.state {
            OpState::Finished => Ok(op),
            _ => {
                let _ = self.close_operation(&op.id);
                Err(EngineError::Operation(status.error.unwrap_or_else(|| {
                    OpError::new(SQLSTATE_GENERAL, "the statement did not finish")
                })))
            }
        }
    }

    /// A metadata call (GetTables, GetColumns, ...): computes its rows with `rows` and
    /// returns a FINISHED operation serving them, or the call's error.
    pub async fn metadata<F, Fut>(
        &self,
        session_id: &HandleId,
        kind: TOperationType,
        rows: F,
    ) -> Result<Arc<Operation>, EngineError>
    where
        F: FnOnce(Arc<Session>) -> Fut,
        Fut: Future<Output = Result<RecordBatch, DataFusionError>>,
    {
        let session = self.session(session_id)?;
        let batch = rows(Arc::clone(&session))
            .await
            .map_err(|e| EngineError::Operation(OpError::from_datafusion(&e)))?;
        let op = Operation::with_rows(session.id, kind, batch);
        self.register(&session, &op);
        Ok(op)
    }
}

/// The statement as logged: at most [`MAX_LOGGED_STATEMENT_CHARS`] characters.
fn abbreviate(sql: &str) -> String {
    let sql = sql.trim();
    match sql.char_indices().nth(MAX_LOGGED_STATEMENT_CHARS) {
        Some((cut, _)) => format!("{}...", &sql[..cut]),
        None => sql.to_owned(),
    }
}

#[cfg(test)]
mod tests;
