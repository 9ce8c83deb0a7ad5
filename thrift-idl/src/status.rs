//! Building `TStatus` values.

use crate::cli::{TStatus, TStatusCode};

/// SQLSTATE for a general error, as HiveServer2 reports it.
pub const SQLSTATE_GENERAL: &str = "HY000";
/// SQLSTATE for an invalid session or operation handle.
pub const SQLSTATE_INVALID_HANDLE: &str = "HY010";
/// SQLSTATE for a syntax error or access rule violation.
pub const SQLSTATE_SYNTAX: &str = "42000";
/// SQLSTATE for a feature the server does not support.
pub const SQLSTATE_NOT_SUPPORTED: &str = "0A000";
/// SQLSTATE for a cancelled statement.
pub const SQLSTATE_CANCELED: &str = "HY008";
/// SQLSTATE for a statement that ran past its timeout.
pub const SQLSTATE_TIMEOUT: &str = "HYT00";

/// `SUCCESS_STATUS`.
pub fn ok() -> TStatus {
    TStatus {
        status_code: TStatusCode::SUCCESS_STATUS,
        info_messages: None,
        sql_state: None,
        error_code: None,
        error_message: None,
    }
}

/// `ERROR_STATUS` with a message and a SQLSTATE.
pub fn error(sql_state: &str, message: impl Into<String>) -> TStatus {
    TStatus {
        status_code: TStatusCode::ERROR_STATUS,
        info_messages: None,
        sql_state: Some(sql_state.to_owned()),
        error_code: Some(0),
        error_message: Some(message.into()),
    }
}

/// `INVALID_HANDLE_STATUS`: the session or operation is unknown (never opened, closed, or
/// opened on another server).
pub fn invalid_handle(message: impl Into<String>) -> TStatus {
    TStatus {
        status_code: TStatusCode::INVALID_HANDLE_STATUS,
        ..error(SQLSTATE_INVALID_HANDLE, message)
    }
}

/// `ERROR_STATUS` for an RPC of the protocol this server does not implement.
pub fn not_supported(rpc: &str) -> TStatus {
    error(
        SQLSTATE_NOT_SUPPORTED,
        format!("{rpc} is not supported by this server"),
    )
}

/// Whether a status reports success (with or without info).
pub fn is_ok(status: &TStatus) -> bool {
    matches!(
        status.status_code,
        TStatusCode::SUCCESS_STATUS | TStatusCode::SUCCESS_WITH_INFO_STATUS
    )
}

/// A response that carries nothing but its status: the reply to a call that failed (or, for
/// Cancel/Close, succeeded). Every response with a status implements it, so an error path
/// needs no per-type list of `None` fields.
pub trait FromStatus {
    fn from_status(status: TStatus) -> Self;
}

macro_rules! from_status {
    ($($resp:ident { $($field:ident: $value:expr),* }),* $(,)?) => {$(
        impl FromStatus for crate::cli::$resp {
            fn from_status(status: TStatus) -> Self {
                Self { status, $($field: $value),* }
            }
        }
    )*};
}

from_status! {
    TOpenSessionResp {
        server_protocol_version: crate::cli::TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10,
        session_handle: None,
        configuration: None
    },
    TCloseSessionResp {},
    TGetInfoResp { info_value: crate::cli::TGetInfoValue::StringValue(String::new()) },
    TExecuteStatementResp { operation_handle: None },
    TGetTypeInfoResp { operation_handle: None },
    TGetCatalogsResp { operation_handle: None },
    TGetSchemasResp { operation_handle: None },
    TGetTablesResp { operation_handle: None },
    TGetTableTypesResp { operation_handle: None },
    TGetColumnsResp { operation_handle: None },
    TGetFunctionsResp { operation_handle: None },
    TGetPrimaryKeysResp { operation_handle: None },
    TGetCrossReferenceResp { operation_handle: None },
    TGetOperationStatusResp {
        operation_state: None,
        sql_state: None,
        error_code: None,
        error_message: None,
        task_status: None,
        operation_started: None,
        operation_completed: None,
        has_result_set: None,
        progress_update_response: None,
        num_modified_rows: None
    },
    TCancelOperationResp {},
    TCloseOperationResp {},
    TGetResultSetMetadataResp { schema: None },
    TFetchResultsResp { has_more_rows: None, results: None },
    TGetDelegationTokenResp { delegation_token: None },
    TCancelDelegationTokenResp {},
    TRenewDelegationTokenResp {},
    TSetClientInfoResp {},
}
