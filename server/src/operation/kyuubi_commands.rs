//! Kyuubi's own statements, which the gateway answers and no engine sees: `KYUUBI DESC
//! SESSION` and `KYUUBI DESC ENGINE` (`DESCRIBE` too, and the `KYUUBIADMIN` prefix), each a
//! one-row result in Kyuubi's columns, so that a script or a user of beeline can ask which
//! engine serves the session. `KYUUBI RESTART ENGINE` is refused, saying how to get a new
//! engine: the engine may serve other sessions too.

use std::sync::atomic::{AtomicBool, Ordering};

use kumiho_thrift::cli::{
    TFetchOrientation, TFetchResultsReq, TFetchResultsResp, TGetOperationStatusResp,
    TGetResultSetMetadataResp, TOperationState,
};
use kumiho_thrift::status;

use super::launch_engine::LaunchedEngine;
use super::{log_reply, operation_status, string_metadata, string_rows, FETCH_TYPE_LOG};
use crate::errors::GatewayError;
use crate::session::GatewaySession;

/// A statement of Kyuubi's grammar (`KYUUBI` or `KYUUBIADMIN`, then the command).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KyuubiCommand {
    DescribeSession,
    DescribeEngine,
    RestartEngine,
}

/// The Kyuubi command `statement` is, in any case and spacing, a trailing `;` allowed; `None`
/// for any other statement, which goes to the engine.
pub fn recognise(statement: &str) -> Option<KyuubiCommand> {
    let statement = statement.trim().trim_end_matches(';');
    let mut words = statement.split_whitespace();
    let prefix = words.next()?;
    if !["kyuubi", "kyuubiadmin"]
        .iter()
        .any(|p| prefix.eq_ignore_ascii_case(p))
    {
        return None;
    }
    let command = words.collect::<Vec<_>>().join(" ").to_ascii_lowercase();
    match command.as_str() {
        "desc session" | "describe session" => Some(KyuubiCommand::DescribeSession),
        "desc engine" | "describe engine" => Some(KyuubiCommand::DescribeEngine),
        "restart engine" => Some(KyuubiCommand::RestartEngine),
        _ => None,
    }
}

/// Why `KYUUBI RESTART ENGINE` is not taken, and what to do instead.
pub fn restart_refused() -> GatewayError {
    GatewayError::BadRequest(
        "KYUUBI RESTART ENGINE is not taken here: the session's engine may serve other \
         sessions too. To get a new engine, stop this one through the REST admin API \
         (DELETE /api/v1/admin/engine) and open a new session, or use \
         kyuubi.engine.share.level=CONNECTION for an engine of the session's own"
            .to_owned(),
    )
}

/// A finished statement the gateway answered: one row of string columns.
#[derive(Debug)]
pub struct Answered {
    /// The statement, for the admin API's listing.
    pub statement: String,
    columns: &'static [&'static str],
    row: Vec<String>,
    /// Whether FetchResults has handed the row out (FETCH_FIRST hands it out again).
    sent: AtomicBool,
    pub created_ms: i64,
}

impl Answered {
    /// `KYUUBI DESC SESSION`: Kyuubi's `id`, `user`, `type`.
    pub fn session(statement: &str, session: &GatewaySession) -> Self {
        Self::new(
            statement,
            &["id", "user", "type"],
            vec![
                session.id.guid.to_string(),
                session.route.user.clone(),
                "INTERACTIVE".to_owned(),
            ],
        )
    }

    /// `KYUUBI DESC ENGINE`: Kyuubi's `ENGINE_ID` (the launch that started this engine
    /// instance), `ENGINE_NAME` (the engine the session's share level selects, as the admin
    /// API names it) and `ENGINE_URL` (where it listens).
    pub fn engine(statement: &str, engine: &LaunchedEngine) -> Self {
        Self::new(
            statement,
            &["ENGINE_ID", "ENGINE_NAME", "ENGINE_URL"],
            vec![
                engine.registration.ref_id.clone(),
                engine.engine_ref.id(),
                engine.registration.address(),
            ],
        )
    }

    fn new(statement: &str, columns: &'static [&'static str], row: Vec<String>) -> Self {
        Self {
            statement: statement.to_owned(),
            columns,
            row,
            sent: AtomicBool::new(false),
            created_ms: crate::session::now_ms() as i64,
        }
    }

    /// GetOperationStatus: finished when it was made.
    pub fn status(&self) -> TGetOperationStatusResp {
        let finished = TOperationState::FINISHED_STATE;
        operation_status(finished, None, self.created_ms, Some(self.created_ms))
    }

    pub fn result_set_metadata(&self) -> TGetResultSetMetadataResp {
        string_metadata(self.columns)
    }

    /// FetchResults: the row, once (again after FETCH_FIRST); an empty log.
    pub fn fetch(&self, req: &TFetchResultsReq) -> TFetchResultsResp {
        if req.fetch_type == Some(FETCH_TYPE_LOG) {
            return log_reply(Vec::new());
        }
        if req.orientation == TFetchOrientation::FETCH_FIRST {
            self.sent.store(false, Ordering::Release);
        }
        // `max_rows` 0 asks for nothing, and leaves the row to the next fetch.
        let wanted = req.max_rows > 0 && !self.sent.swap(true, Ordering::AcqRel);
        let columns = self
            .row
            .iter()
            .map(|value| {
                if wanted {
                    vec![value.clone()]
                } else {
                    Vec::new()
                }
            })
            .collect();
        TFetchResultsResp {
            status: status::ok(),
            has_more_rows: Some(false),
            results: Some(string_rows(0, columns)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kyuubis_statements_are_recognised_and_others_pass() {
        assert_eq!(
            recognise("KYUUBI DESC SESSION"),
            Some(KyuubiCommand::DescribeSession)
        );
        assert_eq!(
            recognise("  kyuubi   describe engine ;"),
            Some(KyuubiCommand::DescribeEngine)
        );
        assert_eq!(
            recognise("KYUUBIADMIN DESC ENGINE"),
            Some(KyuubiCommand::DescribeEngine)
        );
        assert_eq!(
            recognise("kyuubi restart engine"),
            Some(KyuubiCommand::RestartEngine)
        );
        assert_eq!(recognise("DESC ENGINE"), None);
        assert_eq!(recognise("SELECT 'KYUUBI DESC ENGINE'"), None);
        assert_eq!(recognise("KYUUBI DESC ENGINE x"), None);
        assert_eq!(recognise(""), None);
    }
}
