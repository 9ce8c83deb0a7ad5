//! Operations the gateway answers itself: LaunchEngine, statements failed by their launch,
//! and Kyuubi's own statements (`KYUUBI DESC ENGINE`).
//!
//! Every other operation belongs to an engine and is forwarded; these exist before (or
//! instead of) an engine. Their results are small string tables built here.

pub mod kyuubi_commands;
pub mod launch_engine;
pub mod observed;

use kumiho_thrift::cli::{
    TColumn, TColumnDesc, TFetchResultsResp, TGetOperationStatusResp, TGetResultSetMetadataResp,
    TOperationState, TPrimitiveTypeEntry, TRowSet, TStatus, TStringColumn, TTableSchema, TTypeDesc,
    TTypeEntry, TTypeId,
};
use kumiho_thrift::status;

/// `fetchType` of FetchResults that asks for the operation log instead of results.
pub const FETCH_TYPE_LOG: i16 = 1;

/// GetOperationStatus of an operation the gateway answers, with a result set: `state`, and
/// the error when it failed.
pub fn operation_status(
    state: TOperationState,
    error: Option<TStatus>,
    started_ms: i64,
    completed_ms: Option<i64>,
) -> TGetOperationStatusResp {
    TGetOperationStatusResp {
        status: status::ok(),
        operation_state: Some(state),
        sql_state: error.as_ref().and_then(|s| s.sql_state.clone()),
        error_code: error.as_ref().and_then(|s| s.error_code),
        error_message: error.and_then(|s| s.error_message),
        task_status: None,
        operation_started: Some(started_ms),
        operation_completed: completed_ms,
        has_result_set: Some(true),
        progress_update_response: None,
        num_modified_rows: None,
    }
}

/// GetResultSetMetadata of string columns with these names.
pub fn string_metadata(names: &[&str]) -> TGetResultSetMetadataResp {
    TGetResultSetMetadataResp {
        status: status::ok(),
        schema: Some(string_schema(names)),
    }
}

/// A schema of string columns with these names.
pub fn string_schema(names: &[&str]) -> TTableSchema {
    let columns = names
        .iter()
        .enumerate()
        .map(|(position, name)| TColumnDesc {
            column_name: (*name).to_owned(),
            type_desc: TTypeDesc {
                types: vec![TTypeEntry::PrimitiveEntry(TPrimitiveTypeEntry {
                    type_: TTypeId::STRING_TYPE,
                    type_qualifiers: None,
                })],
            },
            position: position as i32 + 1,
            comment: None,
        })
        .collect();
    TTableSchema { columns }
}

/// A columnar row set of string columns, none null; `columns[i]` holds column i's values.
pub fn string_rows(start_row_offset: i64, columns: Vec<Vec<String>>) -> TRowSet {
    let columns = columns
        .into_iter()
        .map(|values| {
            TColumn::StringVal(TStringColumn {
                values,
                nulls: Vec::new(),
            })
        })
        .collect();
    TRowSet {
        start_row_offset,
        rows: Vec::new(),
        columns: Some(columns),
        binary_columns: None,
        column_count: None,
    }
}

/// A FetchResults reply carrying log lines (one string column), as beeline prints them.
pub fn log_reply(lines: Vec<String>) -> TFetchResultsResp {
    TFetchResultsResp {
        status: status::ok(),
        has_more_rows: Some(false),
        results: Some(string_rows(0, vec![lines])),
    }
}
