//! An async query answered with the gateway's own operation handle, before the engine has
//! replied: the engine's work on the statement overlaps the client's round trip.
//!
//! Forwarded, an async ExecuteStatement costs the client the gateway's hop and the engine's
//! reply in turn, and the statement's first status poll can only be sent to the engine once
//! that reply names the operation. When the session's engine accepts handles the gateway
//! assigns ([`kumiho_thrift::assigned_id`]; kumiho-engine does, the Spark Thrift Server does
//! not), the gateway instead writes ExecuteStatement, carrying a fresh handle, and the first
//! GetOperationStatus for that handle to the engine in one write, then, on speculation, the
//! statement's metadata and first batches in a second
//! ([`super::prefetch::Prefetched::speculate`]), and answers the client with the handle at
//! once. The engine's reply is read on the way to the client's first poll.
//!
//! The client's handle must say, before the engine has looked at the statement, whether the
//! statement has a result set (PyHive reads nothing else). So only statements whose words
//! settle it take this path: queries and listings with no word that may make them write
//! ([`returns_rows`]). Everything else (DDL, DML, `SELECT ... INTO`, `SET k=v`, synchronous
//! statements) is forwarded and answered by the engine.
//!
//! An engine that refuses the statement outright (its session gone) is reported on the
//! client's next status poll, as the operation's ERROR with the engine's message, which is
//! where Hive JDBC and PyHive report a statement's failure anyway.

use std::sync::Arc;

use kumiho_thrift::assigned_id;
use kumiho_thrift::cli::{
    TExecuteStatementReq, TExecuteStatementResp, TGetOperationStatusResp, TOperationState,
    TOperationType, TStatus,
};
use kumiho_thrift::client::Queued;
use kumiho_thrift::codec::decode_result_body;
use kumiho_thrift::handle::HandleId;
use kumiho_thrift::status::{self, FromStatus};
use tokio::sync::Mutex;

use super::prefetch::{read, Prefetched};
use crate::session::GatewaySession;

/// First words of statements that always return rows, on every engine.
const ROW_STATEMENTS: &[&str] = &[
    "SELECT", "WITH", "VALUES", "SHOW", "DESC", "DESCRIBE", "EXPLAIN",
];

/// Words that make a query write instead of returning rows (`SELECT ... INTO t`, `WITH ...
/// INSERT INTO t ...`, Hive's `WITH ... INSERT OVERWRITE TABLE t ...`).
const WRITING_WORDS: &[&str] = &["INTO", "INSERT", "OVERWRITE", "UPDATE", "DELETE", "MERGE"];

/// Whether the statement's first word says it returns rows (comments and opening parentheses
/// skipped) and no word of it may make it write. `false` means "not known": the engine answers
/// for it. A writing word inside a string literal or a comment also answers `false`, which
/// costs that statement only the quicker path.
pub fn returns_rows(sql: &str) -> bool {
    starts_with_a_row_word(sql)
        && !sql
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|word| WRITING_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word)))
}

fn starts_with_a_row_word(sql: &str) -> bool {
    let mut rest = sql;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        if let Some(comment) = rest.strip_prefix("--") {
            rest = comment.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(comment) = rest.strip_prefix("/*") {
            rest = comment.split_once("*/").map_or("", |(_, after)| after);
        } else {
            break;
        }
    }
    let word_end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let word = &rest[..word_end];
    ROW_STATEMENTS.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// Answers an async query at once with a handle of the gateway's, if the session's engine
/// accepts it (see the module doc); hands the request back otherwise, to be forwarded.
pub async fn answer(
    session: &Arc<GatewaySession>,
    mut req: TExecuteStatementReq,
    record: impl FnOnce(HandleId, Prefetched),
) -> Result<TExecuteStatementResp, TExecuteStatementReq> {
    if !req.run_async.unwrap_or(false) || !returns_rows(&req.statement) {
        return Err(req);
    }
    let mut engine = session.engine.lock().await;
    let Some(link) = engine.as_mut().filter(|link| link.accepts_assigned_ids) else {
        return Err(req);
    };
    let id = HandleId::new();
    let handle = id.operation_handle(TOperationType::EXECUTE_STATEMENT, true);
    req.session_handle = link.session_handle.clone();
    req.conf_overlay.get_or_insert_default().insert(
        assigned_id::OPERATION_ID_KEY.to_owned(),
        assigned_id::encode(&id),
    );
    let execute = link.client.queue("ExecuteStatement", &req);
    let prefetched = Prefetched::executing(link, execute, &handle);
    // The statement and its first poll go first, so that the engine starts on them while the
    // requests sent on speculation are made. Sent ahead: if a write fails, the client's first
    // poll reads why.
    let _ = link.client.flush().await;
    prefetched.speculate(session, link, &handle);
    let _ = link.client.flush().await;
    record(id, prefetched);
    Ok(TExecuteStatementResp {
        status: status::ok(),
        operation_handle: Some(handle),
    })
}

/// Removes the key the gateway reserves for itself from a client's statement overlay: the
/// engine's handles are the engine's, or the gateway's.
pub fn strip_assigned_id(req: &mut TExecuteStatementReq) {
    if let Some(overlay) = req.conf_overlay.as_mut() {
        overlay.remove(assigned_id::OPERATION_ID_KEY);
    }
}

/// What the engine said to an ExecuteStatement answered ahead of it.
#[derive(Debug, Default)]
pub struct EngineExecute(Mutex<Outcome>);

#[derive(Debug, Default)]
enum Outcome {
    /// Accepted; also a statement the engine answered itself.
    #[default]
    Accepted,
    /// Sent; the reply waits in the connection.
    Sent(Queued),
    /// Refused, with the reason the client is to see.
    Refused(TStatus),
}

impl EngineExecute {
    pub fn sent(call: Queued) -> Self {
        Self(Mutex::new(Outcome::Sent(call)))
    }

    /// Reads the engine's reply if it is still to come; `Err` with the engine's reason if it
    /// refused the statement (then and on every later call).
    pub async fn outcome(&self, session: &GatewaySession) -> Result<(), TStatus> {
        let mut outcome = self.0.lock().await;
        *outcome = match std::mem::take(&mut *outcome) {
            Outcome::Sent(call) => match read(session, call).await {
                Err(error) => Outcome::Refused(error.to_status()),
                Ok(reply) => match decode_result_body::<TExecuteStatementResp>(&reply) {
                    Ok(resp) if status::is_ok(&resp.status) => Outcome::Accepted,
                    Ok(resp) => Outcome::Refused(resp.status),
                    Err(e) => Outcome::Refused(status::error(
                        status::SQLSTATE_GENERAL,
                        format!(
                            "the engine's reply to the statement was unreadable ({e}); \
                             run it again, and report this if it recurs"
                        ),
                    )),
                },
            },
            settled => settled,
        };
        match &*outcome {
            Outcome::Refused(reason) => Err(reason.clone()),
            _ => Ok(()),
        }
    }

    /// The call, if its reply is still to come and nobody is reading it (a close forgets it).
    pub fn unread(&self) -> Option<Queued> {
        let mut outcome = self.0.try_lock().ok()?;
        match std::mem::take(&mut *outcome) {
            Outcome::Sent(call) => Some(call),
            other => {
                *outcome = other;
                None
            }
        }
    }
}

/// The status poll's answer for a statement the engine refused: ERROR, with its reason.
pub fn refused_status(reason: TStatus) -> TGetOperationStatusResp {
    TGetOperationStatusResp {
        operation_state: Some(TOperationState::ERROR_STATE),
        sql_state: reason.sql_state,
        error_code: reason.error_code,
        error_message: reason.error_message,
        ..TGetOperationStatusResp::from_status(status::ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_and_listings_return_rows() {
        for sql in [
            "SELECT 1",
            "select * from t",
            "  \n\tWith x as (select 1) select * from x",
            "(SELECT 1) UNION ALL (SELECT 2)",
            "-- the total\nSELECT sum(x) FROM t",
            "/* a hint */ values (1)",
            "/* one */ -- two\n /*three*/show tables",
            "DESC t",
            "describe formatted t",
            "EXPLAIN SELECT 1",
            "SELECT intotal, updated_at, insert_count FROM t",
        ] {
            assert!(returns_rows(sql), "{sql:?}");
        }
    }

    #[test]
    fn everything_else_is_left_to_the_engine() {
        for sql in [
            "",
            "   ",
            "-- only a comment",
            "/* unterminated SELECT",
            "INSERT INTO t SELECT 1",
            "SELECT * INTO t2 FROM t",
            "select a, b\ninto new_table from t",
            "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x",
            "with s as (select 1) insert overwrite table t select * from s",
            "CREATE TABLE t AS SELECT 1",
            "SET x=1",
            "USE db",
            "DROP TABLE t",
            "SELECTED",
            "selectx 1",
            "SHOWS",
        ] {
            assert!(!returns_rows(sql), "{sql:?}");
        }
    }

    #[test]
    fn a_client_cannot_choose_the_engines_handle() {
        let mut req = TExecuteStatementReq {
            session_handle: HandleId::new().session_handle(),
            statement: "SELECT 1".to_owned(),
            conf_overlay: Some(
                [
                    (assigned_id::OPERATION_ID_KEY.to_owned(), "x:y".to_owned()),
                    ("a".to_owned(), "b".to_owned()),
                ]
                .into(),
            ),
            run_async: Some(true),
            query_timeout: None,
        };
        strip_assigned_id(&mut req);
        assert_eq!(
            req.conf_overlay,
            Some([("a".to_owned(), "b".to_owned())].into())
        );
    }

    #[test]
    fn a_refusal_reads_as_the_statements_error() {
        let resp = refused_status(status::error("08S01", "the engine session is gone"));
        assert!(status::is_ok(&resp.status));
        assert_eq!(resp.operation_state, Some(TOperationState::ERROR_STATE));
        assert_eq!(resp.sql_state.as_deref(), Some("08S01"));
        assert_eq!(
            resp.error_message.as_deref(),
            Some("the engine session is gone")
        );
    }
}
