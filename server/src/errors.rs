//! The gateway's one error type: whose fault a failure is and what to do, mapped to `TStatus` here only.

use std::time::Duration;

use kumiho_thrift::cli::TStatus;
use kumiho_thrift::status;

/// Lines of the launch log quoted in a launch failure.
pub const LAUNCH_LOG_TAIL: usize = 15;

/// A failure the gateway reports to one client.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GatewayError {
    /// The client named a session or operation this gateway does not hold.
    #[error("{what} is unknown to this gateway (closed, timed out, or opened elsewhere); {}", match *what {
        "operation" => "run the statement again",
        _ => "open a new session",
    })]
    InvalidHandle { what: &'static str },

    /// The client named a session or operation an operator closed (`reason`: who, how).
    #[error("this {what} was closed {reason}; {}", match *what {
        "operation" => "run the statement again",
        _ => "open a new session",
    })]
    Closed { what: &'static str, reason: String },

    /// The client named something this gateway does not hold (a batch id), in words of its
    /// own.
    #[error("{0}")]
    NotFound(String),

    /// The client's request cannot be served as sent (a bad session setting, an unknown
    /// cluster); the message says which setting to fix.
    #[error("{0}")]
    BadRequest(String),

    /// The client is not allowed to do this (impersonation, a cluster it may not use).
    #[error("{0}")]
    Refused(String),

    /// The engine could not be found or started; `log_tail` is the end of the launch log.
    #[error("engine launch failed: {reason}{}", format_tail(log_tail))]
    Launch {
        reason: String,
        log_tail: Vec<String>,
    },

    /// The engine is still starting after the gateway's bound on waiting for it.
    #[error("the engine is still starting after {}; try again shortly, or ask an operator to raise launch-wait{}", crate::duration::format(*waited), format_tail(log_tail))]
    LaunchWait {
        waited: Duration,
        log_tail: Vec<String>,
    },

    /// The engine was reached once but the conversation with it failed (it died, or the
    /// connection broke). A new session gets a new engine. `engine`: its id and address.
    #[error("lost the connection to engine {engine}: {reason}; the engine may have stopped or been killed: reconnect to get a working engine")]
    EngineGone { engine: String, reason: String },

    /// The engine refused a call outright (a Thrift exception, an unreadable reply).
    #[error("the engine refused the call: {0}")]
    EngineRefused(String),

    /// The operator's configuration cannot serve this session (e.g. a registry kind this
    /// gateway does not support yet).
    #[error("server configuration problem: {0}; ask an operator to fix the cluster config")]
    Config(String),

    /// The registry of the session's cluster does not answer (its ZooKeeper ensemble is
    /// down or unreachable): the operator's to fix; other clusters are not affected.
    #[error("the engine registry of cluster `{cluster}` is unavailable: {reason}; ask an operator to check it, or use another cluster")]
    RegistryUnavailable { cluster: String, reason: String },

    /// A failure the gateway's HiveServer2 service reported in its own words that is nobody's
    /// input (a lost engine, a launch still running): how the REST API, which calls that
    /// service, passes such a reply on.
    #[error("{0}")]
    Upstream(String),

    /// A bug in the gateway.
    #[error("internal gateway error: {0}; please report it")]
    Internal(String),
}

fn format_tail(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    format!("\nlast launch log lines:\n{}", lines.join("\n"))
}

impl GatewayError {
    /// The status a client receives for this error: the one mapping of gateway errors onto
    /// HiveServer2 statuses and SQLSTATEs.
    pub fn to_status(&self) -> TStatus {
        let message = self.to_string();
        match self {
            GatewayError::InvalidHandle { .. } | GatewayError::Closed { .. } => {
                status::invalid_handle(message)
            }
            GatewayError::Refused(_) => status::error(status::SQLSTATE_SYNTAX, message),
            GatewayError::LaunchWait { .. } => status::error(status::SQLSTATE_TIMEOUT, message),
            // 08xxx: connection exceptions; JDBC tools treat the session as broken.
            GatewayError::EngineGone { .. } => status::error("08S01", message),
            GatewayError::BadRequest(_)
            | GatewayError::NotFound(_)
            | GatewayError::Launch { .. }
            | GatewayError::EngineRefused(_)
            | GatewayError::Config(_)
            | GatewayError::RegistryUnavailable { .. }
            | GatewayError::Upstream(_)
            | GatewayError::Internal(_) => status::error(status::SQLSTATE_GENERAL, message),
        }
    }

    /// Whether the client's own input caused it (logged at debug rather than warn).
    pub fn is_clients_fault(&self) -> bool {
        matches!(
            self,
            GatewayError::InvalidHandle { .. }
                | GatewayError::Closed { .. }
                | GatewayError::NotFound(_)
                | GatewayError::BadRequest(_)
                | GatewayError::Refused(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use kumiho_thrift::cli::TStatusCode;

    use super::*;

    #[test]
    fn unknown_handles_get_invalid_handle_status() {
        let status = GatewayError::InvalidHandle { what: "session" }.to_status();
        assert_eq!(status.status_code, TStatusCode::INVALID_HANDLE_STATUS);
        assert!(status.error_message.unwrap().contains("open a new session"));
        let operation = GatewayError::InvalidHandle { what: "operation" }.to_string();
        assert!(operation.contains("run the statement again"), "{operation}");
    }

    #[test]
    fn launch_failures_carry_the_reason_and_the_log_tail() {
        let error = GatewayError::Launch {
            reason: "engine exited with exit status: 1".to_owned(),
            log_tail: vec!["table trips: /nope does not exist".to_owned()],
        };
        let status = error.to_status();
        assert_eq!(status.status_code, TStatusCode::ERROR_STATUS);
        let message = status.error_message.unwrap();
        assert!(
            message.contains("exit status: 1") && message.contains("/nope does not exist"),
            "{message}"
        );
        assert_eq!(status.sql_state.as_deref(), Some("HY000"));
    }

    #[test]
    fn each_fault_has_its_sqlstate() {
        assert_eq!(
            GatewayError::Refused("no".into())
                .to_status()
                .sql_state
                .as_deref(),
            Some("42000")
        );
        let wait = GatewayError::LaunchWait {
            waited: Duration::from_secs(300),
            log_tail: vec![],
        };
        assert_eq!(wait.to_status().sql_state.as_deref(), Some("HYT00"));
        assert!(wait.to_string().contains("5m"));
        let gone = GatewayError::EngineGone {
            engine: "USER-DATAFUSION-alice-default at h:1".into(),
            reason: "reset".into(),
        };
        assert_eq!(gone.to_status().sql_state.as_deref(), Some("08S01"));
        assert!(GatewayError::BadRequest("x".into()).is_clients_fault());
        assert!(!GatewayError::Internal("x".into()).is_clients_fault());
    }
}
