//! LaunchEngine: the operation that finds or starts a session's engine, followed by the client.
//!
//! OpenSession hands its handle out at once (`kyuubi.session.engine.launch.handle.*`); the
//! state goes PENDING, RUNNING, then FINISHED or ERROR; FetchResults(fetchType=1) streams
//! the launch log as it is written; the result set is key/value rows describing the engine.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kumiho_engine_launcher::{EngineRef, EngineRegistration, LaunchLog};
use kumiho_thrift::cli::{
    TFetchOrientation, TFetchResultsReq, TFetchResultsResp, TGetOperationStatusResp,
    TGetResultSetMetadataResp, TOperationState, TOperationType,
};
use kumiho_thrift::handle::HandleId;
use kumiho_thrift::status;
use tokio::sync::watch;

use super::{log_reply, operation_status, string_metadata, string_rows, FETCH_TYPE_LOG};
use crate::errors::{GatewayError, LAUNCH_LOG_TAIL};

/// Where a launch stands.
#[derive(Clone, Debug)]
pub enum LaunchState {
    Pending,
    Running,
    Finished(Arc<LaunchedEngine>),
    Failed(GatewayError),
}

impl LaunchState {
    /// FINISHED or ERROR.
    pub fn is_final(&self) -> bool {
        matches!(self, LaunchState::Finished(_) | LaunchState::Failed(_))
    }
}

/// The engine a launch found or started.
#[derive(Debug)]
pub struct LaunchedEngine {
    pub engine_ref: EngineRef,
    pub registration: EngineRegistration,
}

/// One session's LaunchEngine operation.
pub struct LaunchEngine {
    pub handle: HandleId,
    pub engine_ref: EngineRef,
    /// The launch's log, written by the launcher and read by clients.
    pub log: Arc<LaunchLog>,
    state: watch::Sender<LaunchState>,
    started_millis: i64,
    /// What this operation's own FetchResults calls have consumed (std Mutex: held briefly,
    /// never across an await).
    cursor: Mutex<Cursor>,
}

#[derive(Default)]
struct Cursor {
    log_lines_sent: usize,
    result_sent: bool,
}

impl LaunchEngine {
    pub fn new(engine_ref: EngineRef) -> Arc<Self> {
        Arc::new(Self {
            handle: HandleId::new(),
            engine_ref,
            log: Arc::new(LaunchLog::new()),
            state: watch::Sender::new(LaunchState::Pending),
            started_millis: now_millis(),
            cursor: Mutex::new(Cursor::default()),
        })
    }

    pub fn set_running(&self) {
        self.state.send_replace(LaunchState::Running);
    }

    pub fn finish(&self, engine: LaunchedEngine) {
        self.log.push(format!(
            "engine {} ready at {}",
            self.engine_ref.id(),
            engine.registration.address()
        ));
        self.state
            .send_replace(LaunchState::Finished(Arc::new(engine)));
    }

    /// Fails the launch; `reason` is shown to the client with the log's last lines.
    pub fn fail(&self, reason: String) {
        // A reason that quotes the engine's own log already says enough; repeating the
        // launch log's tail after it would only show the same lines twice.
        let log_tail = if reason.contains('\n') {
            Vec::new()
        } else {
            self.log.tail(LAUNCH_LOG_TAIL)
        };
        self.log.push(format!("launch failed: {reason}"));
        let error = GatewayError::Launch { reason, log_tail };
        self.state.send_replace(LaunchState::Failed(error));
    }

    pub fn state(&self) -> LaunchState {
        self.state.borrow().clone()
    }

    /// Waits up to `bound` for the launch to end; its engine, or why there is none.
    pub async fn wait(&self, bound: Duration) -> Result<Arc<LaunchedEngine>, GatewayError> {
        let mut states = self.state.subscribe();
        let waited = tokio::time::timeout(bound, states.wait_for(LaunchState::is_final)).await;
        match waited {
            Err(_) => Err(GatewayError::LaunchWait {
                waited: bound,
                log_tail: self.log.tail(LAUNCH_LOG_TAIL),
            }),
            // The sender lives in `self`, so the channel cannot close while we borrow it.
            Ok(Err(_)) => Err(GatewayError::Internal(
                "launch state channel closed".to_owned(),
            )),
            Ok(Ok(state)) => match &*state {
                LaunchState::Finished(engine) => Ok(engine.clone()),
                LaunchState::Failed(error) => Err(error.clone()),
                _ => Err(GatewayError::Internal(
                    "launch ended in a non-final state".to_owned(),
                )),
            },
        }
    }

    /// GetOperationStatus of this operation.
    pub fn status(&self) -> TGetOperationStatusResp {
        let (state, error) = match self.state() {
            LaunchState::Pending => (TOperationState::PENDING_STATE, None),
            LaunchState::Running => (TOperationState::RUNNING_STATE, None),
            LaunchState::Finished(_) => (TOperationState::FINISHED_STATE, None),
            LaunchState::Failed(error) => (TOperationState::ERROR_STATE, Some(error)),
        };
        let error = error.as_ref().map(GatewayError::to_status);
        operation_status(state, error, self.started_millis, None)
    }

    /// GetResultSetMetadata: two string columns, `key` and `value`.
    pub fn result_set_metadata(&self) -> TGetResultSetMetadataResp {
        string_metadata(&["key", "value"])
    }

    /// FetchResults: the log lines written since the last fetch (fetchType=1), or the
    /// engine's key/value rows once the launch has finished.
    pub fn fetch(&self, req: &TFetchResultsReq) -> TFetchResultsResp {
        let restart = req.orientation == TFetchOrientation::FETCH_FIRST;
        let mut cursor = self
            .cursor
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if req.fetch_type == Some(FETCH_TYPE_LOG) {
            if restart {
                cursor.log_lines_sent = 0;
            }
            let limit = usize::try_from(req.max_rows).unwrap_or(0).max(1);
            let mut lines = self.log.lines_since(cursor.log_lines_sent);
            lines.truncate(limit);
            cursor.log_lines_sent += lines.len();
            return log_reply(lines);
        }
        if restart {
            cursor.result_sent = false;
        }
        let rows = match self.state() {
            LaunchState::Finished(engine) if !cursor.result_sent => {
                cursor.result_sent = true;
                engine_rows(&engine)
            }
            LaunchState::Failed(error) => {
                return TFetchResultsResp {
                    status: error.to_status(),
                    has_more_rows: None,
                    results: None,
                }
            }
            _ => Vec::new(),
        };
        let (keys, values) = rows.into_iter().unzip();
        TFetchResultsResp {
            status: status::ok(),
            has_more_rows: Some(false),
            results: Some(string_rows(0, vec![keys, values])),
        }
    }

    /// The operation handle a client receives.
    pub fn operation_handle(&self) -> kumiho_thrift::cli::TOperationHandle {
        self.handle.operation_handle(TOperationType::UNKNOWN, true)
    }
}

/// The rows of a finished launch's result set.
fn engine_rows(engine: &LaunchedEngine) -> Vec<(String, String)> {
    let engine_ref = &engine.engine_ref;
    let registration = &engine.registration;
    vec![
        ("engine.id".to_owned(), engine_ref.id()),
        ("engine.ref.id".to_owned(), registration.ref_id.clone()),
        ("engine.address".to_owned(), registration.address()),
        (
            "engine.share.level".to_owned(),
            engine_ref.share_level.to_string(),
        ),
        ("engine.type".to_owned(), engine_ref.engine_type.to_string()),
        ("engine.subdomain".to_owned(), engine_ref.subdomain.clone()),
        ("engine.space".to_owned(), engine_ref.engine_space()),
        ("engine.version".to_owned(), registration.version.clone()),
        ("engine.state".to_owned(), "RUNNING".to_owned()),
    ]
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use kumiho_engine_launcher::{EngineType, ShareLevel};
    use kumiho_thrift::cli::{THandleIdentifier, TOperationHandle, TStatusCode};

    use super::*;
    use crate::operation::FETCH_TYPE_LOG;

    fn launch() -> Arc<LaunchEngine> {
        LaunchEngine::new(EngineRef {
            namespace: "kumiho".to_owned(),
            version: "0.1.0".to_owned(),
            share_level: ShareLevel::User,
            engine_type: EngineType::DataFusion,
            routing_user: "alice".to_owned(),
            subdomain: "default".to_owned(),
            session_user: "alice".to_owned(),
        })
    }

    fn fetch(launch: &LaunchEngine, fetch_type: i16) -> Vec<String> {
        let req = TFetchResultsReq {
            operation_handle: TOperationHandle {
                operation_id: THandleIdentifier {
                    guid: vec![],
                    secret: vec![],
                },
                operation_type: TOperationType::UNKNOWN,
                has_result_set: true,
                modified_row_count: None,
            },
            orientation: TFetchOrientation::FETCH_NEXT,
            max_rows: 100,
            fetch_type: Some(fetch_type),
        };
        let reply = launch.fetch(&req);
        assert_eq!(reply.status.status_code, TStatusCode::SUCCESS_STATUS);
        match &reply.results.unwrap().columns.unwrap()[0] {
            kumiho_thrift::cli::TColumn::StringVal(column) => column.values.clone(),
            other => panic!("not a string column: {other:?}"),
        }
    }

    #[test]
    fn the_log_is_served_as_it_is_written() {
        let launch = launch();
        launch.log.push("looking up engine");
        assert_eq!(fetch(&launch, FETCH_TYPE_LOG), ["looking up engine"]);
        assert!(fetch(&launch, FETCH_TYPE_LOG).is_empty());
        launch.log.push("starting engine");
        assert_eq!(fetch(&launch, FETCH_TYPE_LOG), ["starting engine"]);
        assert_eq!(
            launch.status().operation_state,
            Some(TOperationState::PENDING_STATE)
        );
    }

    #[tokio::test]
    async fn a_failure_reaches_waiters_and_status_with_its_reason() {
        let launch = launch();
        launch.set_running();
        assert_eq!(
            launch.status().operation_state,
            Some(TOperationState::RUNNING_STATE)
        );
        launch.log.push("starting engine");
        launch.fail("engine program not found".to_owned());
        let error = launch.wait(Duration::from_secs(1)).await.unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("engine program not found") && message.contains("starting engine"),
            "{message}"
        );
        let status = launch.status();
        assert_eq!(status.operation_state, Some(TOperationState::ERROR_STATE));
        assert!(status
            .error_message
            .unwrap()
            .contains("engine program not found"));
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_is_bounded() {
        let launch = launch();
        launch.set_running();
        let error = launch.wait(Duration::from_secs(300)).await.unwrap_err();
        assert!(matches!(error, GatewayError::LaunchWait { .. }), "{error}");
    }
}
