//! Kyuubi's REST shapes for sessions and operations, and their conversion from Thrift replies.
//!
//! Field names are those of Kyuubi's `kyuubi-rest-client` DTOs (`SessionOpenRequest`,
//! `StatementRequest`, `SessionHandle`, `OperationHandle`, `KyuubiOperationEvent`,
//! `OperationLog`, `ResultSetMetaData`, `ResultRowSet`, ...), so that a client written for
//! Kyuubi reads them unchanged. Row sets, columnar (V6+) or row-based, become rows of
//! `{"dataType", "value"}` fields: `dataType` names the Thrift column (`I32_VAL`,
//! `STRING_VAL`, ...), as Kyuubi's `OperationsResource` names it; a null is JSON `null`;
//! decimals, dates and timestamps are the engine's strings; binary is base64; a double
//! that is NaN or infinite is the string `NaN`, `Infinity` or `-Infinity` (as Jackson
//! writes it).

use std::collections::BTreeMap;

use base64::Engine as _;
use kumiho_thrift::cli::{
    TColumn, TColumnDesc, TColumnValue, TGetInfoType, TGetInfoValue, TOperationState, TRowSet,
    TTypeEntry, TTypeId, TTypeQualifierValue,
};
use kumiho_thrift::rowset::row_count;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// `POST /sessions`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionOpenRequest {
    /// The Thrift protocol the session speaks to its engine (default: the newest).
    pub protocol_version: Option<i32>,
    #[serde(default, deserialize_with = "string_map")]
    pub configs: BTreeMap<String, String>,
}

/// `POST /sessions/{id}/operations/statement`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatementRequest {
    pub statement: String,
    #[serde(default)]
    pub run_async: bool,
    /// Seconds; 0: none.
    #[serde(default)]
    pub query_timeout: i64,
    #[serde(default, deserialize_with = "string_map")]
    pub conf_overlay: BTreeMap<String, String>,
}

/// The bodies of the metadata operations (`schemas`, `tables`, `columns`, `functions`,
/// `primaryKeys`, `crossReference`): every field is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetadataRequest {
    pub catalog_name: Option<String>,
    pub schema_name: Option<String>,
    pub table_name: Option<String>,
    pub table_types: Option<Vec<String>>,
    pub column_name: Option<String>,
    pub function_name: Option<String>,
    pub primary_catalog: Option<String>,
    pub primary_schema: Option<String>,
    pub primary_table: Option<String>,
    pub foreign_catalog: Option<String>,
    pub foreign_schema: Option<String>,
    pub foreign_table: Option<String>,
}

/// `PUT /operations/{id}`.
#[derive(Debug, Deserialize)]
pub struct OpActionRequest {
    pub action: String,
}

/// A settings map whose values may be written as JSON strings, numbers or booleans (as
/// Jackson coerces them into Kyuubi's `Map<String, String>`); `null` leaves the key out.
fn string_map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let raw: Option<BTreeMap<String, Value>> = Option::deserialize(d)?;
    let mut map = BTreeMap::new();
    for (key, value) in raw.unwrap_or_default() {
        let text = match value {
            Value::Null => continue,
            Value::String(text) => text,
            Value::Bool(flag) => flag.to_string(),
            Value::Number(number) => number.to_string(),
            other => {
                return Err(serde::de::Error::custom(format!(
                    "setting `{key}` must be a string, number or boolean, not {other}"
                )))
            }
        };
        map.insert(key, text);
    }
    Ok(map)
}

/// `POST /sessions`' answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHandle {
    pub identifier: String,
    pub kyuubi_instance: String,
}

/// The answer of every call that creates an operation.
#[derive(Debug, Serialize)]
pub struct OperationHandle {
    pub identifier: String,
}

/// An entry of `GET /sessions` (Kyuubi's `SessionData`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionData {
    pub identifier: String,
    pub remote_session_id: String,
    pub user: String,
    pub ip_addr: String,
    pub conf: BTreeMap<String, String>,
    pub create_time: u64,
    pub duration: u64,
    pub idle_time: u64,
    pub exception: String,
    pub session_type: &'static str,
    pub kyuubi_instance: String,
    pub engine_id: String,
    pub engine_name: String,
    pub engine_url: String,
    pub session_name: String,
    pub total_operations: usize,
}

/// `GET /sessions/{id}` (Kyuubi's `KyuubiSessionEvent`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEvent {
    pub session_id: String,
    pub client_version: i32,
    pub session_type: &'static str,
    pub session_name: String,
    pub remote_session_id: String,
    pub engine_id: String,
    pub engine_name: String,
    pub engine_url: String,
    pub user: String,
    pub client_ip: String,
    pub server_ip: String,
    pub conf: BTreeMap<String, String>,
    pub optimized_conf: BTreeMap<String, String>,
    pub event_time: u64,
    pub opened_time: u64,
    pub start_time: u64,
    pub end_time: u64,
    pub total_operations: usize,
    pub exception: Option<Exception>,
}

/// `GET /operations/{id}/event` (Kyuubi's `KyuubiOperationEvent`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationEvent {
    pub statement_id: String,
    pub remote_id: String,
    pub statement: String,
    pub should_run_async: bool,
    pub state: &'static str,
    pub event_time: u64,
    pub create_time: u64,
    pub start_time: u64,
    pub complete_time: u64,
    pub exception: Option<Exception>,
    pub session_id: String,
    pub session_user: String,
    pub session_type: &'static str,
    pub kyuubi_instance: String,
    pub metrics: BTreeMap<String, String>,
}

/// An entry of `GET /sessions/{id}/operations` (Kyuubi's `OperationData`): an event, its
/// exception as text.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationData {
    pub identifier: String,
    pub remote_id: String,
    pub statement: String,
    pub state: &'static str,
    pub create_time: u64,
    pub start_time: u64,
    pub complete_time: u64,
    pub exception: String,
    pub session_id: String,
    pub session_user: String,
    pub session_type: &'static str,
    pub kyuubi_instance: String,
    pub metrics: BTreeMap<String, String>,
}

impl From<OperationEvent> for OperationData {
    fn from(event: OperationEvent) -> OperationData {
        OperationData {
            identifier: event.statement_id,
            remote_id: event.remote_id,
            statement: event.statement,
            state: event.state,
            create_time: event.create_time,
            start_time: event.start_time,
            complete_time: event.complete_time,
            exception: event.exception.map(|e| e.message).unwrap_or_default(),
            session_id: event.session_id,
            session_user: event.session_user,
            session_type: event.session_type,
            kyuubi_instance: event.kyuubi_instance,
            metrics: event.metrics,
        }
    }
}

/// An error as Jackson writes Kyuubi's `KyuubiSQLException`: what a client reads is
/// `message`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Exception {
    pub message: String,
    pub localized_message: String,
    #[serde(rename = "sqlstate")]
    pub sql_state: Option<String>,
    pub error_code: i32,
}

impl Exception {
    pub fn new(message: String, sql_state: Option<String>, error_code: i32) -> Exception {
        Exception {
            localized_message: message.clone(),
            message,
            sql_state,
            error_code,
        }
    }
}

/// `GET /sessions/execPool/statistic` (Kyuubi's `ExecPoolStatistic`), mapped onto the
/// gateway's own background work: Kyuubi's pool runs launches and async operations, whose
/// counterparts here are the LaunchEngine tasks and their turns at opening an engine session.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecPoolStatistic {
    /// How many engine sessions may be opened at once (`engine-session-opens`).
    pub exec_pool_size: usize,
    /// Engine sessions being opened now.
    pub exec_pool_active_count: usize,
    /// Launches and session cleanups in flight that are not opening an engine session now
    /// (looking up or starting an engine, waiting for a turn, closing).
    pub exec_pool_work_queue_size: usize,
}

/// An entry of `GET /admin/engine` (Kyuubi's `Engine`): one registration in a registry.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Engine {
    /// The version the engine registered with.
    pub version: String,
    /// The user whose engines were asked for.
    pub user: String,
    pub engine_type: &'static str,
    pub sharelevel: &'static str,
    /// The last component of its engine space (`default`, a pool member, a session id).
    pub subdomain: String,
    /// `host:port`.
    pub instance: String,
    /// Its engine space, `/{ns}_{version}_{SHARE}_{TYPE}/{user}/{subdomain}`.
    pub namespace: String,
    /// The registration's fields (`serviceUri`, `version`, `refId`, `sequence`).
    pub attributes: BTreeMap<String, String>,
}

/// An entry of `GET /admin/server` (Kyuubi's `ServerData`): one gateway registered for
/// ZooKeeper discovery.
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerData {
    /// Its node, `serverUri=HOST:PORT;version=V;sequence=N`.
    pub node_name: String,
    /// `/{ha-namespace}`; empty for a gateway that is not registered (no `ha-addresses`).
    pub namespace: String,
    /// `host:port` of its advertised Thrift frontend.
    pub instance: String,
    pub host: String,
    pub port: u16,
    /// The node name's fields (`serverUri`, `version`, `sequence`).
    pub attributes: BTreeMap<String, String>,
    /// `Running`: a registration lives only as long as its gateway.
    pub status: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InfoDetail {
    pub info_type: &'static str,
    pub info_value: String,
}

/// `GET /operations/{id}/log`.
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationLog {
    pub log_row_set: Vec<String>,
    pub row_count: usize,
}

/// `GET /operations/{id}/resultsetmetadata`.
#[derive(Debug, PartialEq, Serialize)]
pub struct ResultSetMetaData {
    pub columns: Vec<ColumnDesc>,
}

/// One result column.
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnDesc {
    pub column_name: String,
    /// The Thrift type's name: `INT_TYPE`, `DECIMAL_TYPE`, `TIMESTAMP_TYPE`, ...
    pub data_type: String,
    pub column_index: i32,
    pub precision: i32,
    pub scale: i32,
    pub comment: Option<String>,
}

/// `GET /operations/{id}/rowset`.
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultRowSet {
    pub rows: Vec<Row>,
    pub row_count: usize,
}

#[derive(Debug, PartialEq, Serialize)]
pub struct Row {
    pub fields: Vec<Field>,
}

#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Field {
    /// The Thrift column's kind: `BOOL_VAL`, `BYTE_VAL`, `I16_VAL`, `I32_VAL`, `I64_VAL`,
    /// `DOUBLE_VAL`, `STRING_VAL`, `BINARY_VAL`.
    pub data_type: &'static str,
    pub value: Value,
}

/// Kyuubi's name of an operation state (its `OperationState`).
pub fn state_name(state: TOperationState) -> &'static str {
    match state {
        TOperationState::INITIALIZED_STATE => "INITIALIZED",
        TOperationState::RUNNING_STATE => "RUNNING",
        TOperationState::FINISHED_STATE => "FINISHED",
        TOperationState::CANCELED_STATE => "CANCELED",
        TOperationState::CLOSED_STATE => "CLOSED",
        TOperationState::ERROR_STATE => "ERROR",
        TOperationState::PENDING_STATE => "PENDING",
        TOperationState::TIMEDOUT_STATE => "TIMEOUT",
        _ => "UNKNOWN",
    }
}

/// The name of a Thrift type, as Java's `TTypeId.toString` gives it.
pub fn type_name(id: TTypeId) -> String {
    const NAMES: [&str; 23] = [
        "BOOLEAN_TYPE",
        "TINYINT_TYPE",
        "SMALLINT_TYPE",
        "INT_TYPE",
        "BIGINT_TYPE",
        "FLOAT_TYPE",
        "DOUBLE_TYPE",
        "STRING_TYPE",
        "TIMESTAMP_TYPE",
        "BINARY_TYPE",
        "ARRAY_TYPE",
        "MAP_TYPE",
        "STRUCT_TYPE",
        "UNION_TYPE",
        "USER_DEFINED_TYPE",
        "DECIMAL_TYPE",
        "NULL_TYPE",
        "DATE_TYPE",
        "VARCHAR_TYPE",
        "CHAR_TYPE",
        "INTERVAL_YEAR_MONTH_TYPE",
        "INTERVAL_DAY_TIME_TYPE",
        "TIMESTAMPLOCALTZ_TYPE",
    ];
    usize::try_from(id.0)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("TYPE_{}", id.0), |name| (*name).to_owned())
}

/// The GetInfo types by number, with Java's names (`TGetInfoType.toString`).
const INFO_TYPES: [(i32, &str); 48] = [
    (0, "CLI_MAX_DRIVER_CONNECTIONS"),
    (1, "CLI_MAX_CONCURRENT_ACTIVITIES"),
    (2, "CLI_DATA_SOURCE_NAME"),
    (8, "CLI_FETCH_DIRECTION"),
    (13, "CLI_SERVER_NAME"),
    (14, "CLI_SEARCH_PATTERN_ESCAPE"),
    (17, "CLI_DBMS_NAME"),
    (18, "CLI_DBMS_VER"),
    (19, "CLI_ACCESSIBLE_TABLES"),
    (20, "CLI_ACCESSIBLE_PROCEDURES"),
    (23, "CLI_CURSOR_COMMIT_BEHAVIOR"),
    (25, "CLI_DATA_SOURCE_READ_ONLY"),
    (26, "CLI_DEFAULT_TXN_ISOLATION"),
    (28, "CLI_IDENTIFIER_CASE"),
    (29, "CLI_IDENTIFIER_QUOTE_CHAR"),
    (30, "CLI_MAX_COLUMN_NAME_LEN"),
    (31, "CLI_MAX_CURSOR_NAME_LEN"),
    (32, "CLI_MAX_SCHEMA_NAME_LEN"),
    (34, "CLI_MAX_CATALOG_NAME_LEN"),
    (35, "CLI_MAX_TABLE_NAME_LEN"),
    (43, "CLI_SCROLL_CONCURRENCY"),
    (46, "CLI_TXN_CAPABLE"),
    (47, "CLI_USER_NAME"),
    (72, "CLI_TXN_ISOLATION_OPTION"),
    (73, "CLI_INTEGRITY"),
    (81, "CLI_GETDATA_EXTENSIONS"),
    (85, "CLI_NULL_COLLATION"),
    (86, "CLI_ALTER_TABLE"),
    (90, "CLI_ORDER_BY_COLUMNS_IN_SELECT"),
    (94, "CLI_SPECIAL_CHARACTERS"),
    (97, "CLI_MAX_COLUMNS_IN_GROUP_BY"),
    (98, "CLI_MAX_COLUMNS_IN_INDEX"),
    (99, "CLI_MAX_COLUMNS_IN_ORDER_BY"),
    (100, "CLI_MAX_COLUMNS_IN_SELECT"),
    (101, "CLI_MAX_COLUMNS_IN_TABLE"),
    (102, "CLI_MAX_INDEX_SIZE"),
    (104, "CLI_MAX_ROW_SIZE"),
    (105, "CLI_MAX_STATEMENT_LEN"),
    (106, "CLI_MAX_TABLES_IN_SELECT"),
    (107, "CLI_MAX_USER_NAME_LEN"),
    (115, "CLI_OJ_CAPABILITIES"),
    (10000, "CLI_XOPEN_CLI_YEAR"),
    (10001, "CLI_CURSOR_SENSITIVITY"),
    (10002, "CLI_DESCRIBE_PARAMETER"),
    (10003, "CLI_CATALOG_NAME"),
    (10004, "CLI_COLLATION_SEQ"),
    (10005, "CLI_MAX_IDENTIFIER_LEN"),
    (10006, "CLI_ODBC_KEYWORDS"),
];

/// The GetInfo type numbered `number` and its name; `None` for a number Thrift does not define.
pub fn info_type(number: i32) -> Option<(TGetInfoType, &'static str)> {
    INFO_TYPES
        .iter()
        .find(|(n, _)| *n == number)
        .map(|&(n, name)| (TGetInfoType(n), name))
}

/// A GetInfo value as text (Kyuubi's `getStringValue`; numbers written out).
pub fn info_value(value: &TGetInfoValue) -> String {
    match value {
        TGetInfoValue::StringValue(text) => text.clone(),
        TGetInfoValue::SmallIntValue(n) => n.to_string(),
        TGetInfoValue::IntegerBitmask(n)
        | TGetInfoValue::IntegerFlag(n)
        | TGetInfoValue::BinaryValue(n) => n.to_string(),
        TGetInfoValue::LenValue(n) => n.to_string(),
    }
}

/// The columns of a result schema.
pub fn metadata(columns: &[TColumnDesc]) -> ResultSetMetaData {
    let columns = columns
        .iter()
        .map(|column| {
            let (data_type, precision, scale) = match column.type_desc.types.first() {
                Some(TTypeEntry::PrimitiveEntry(entry)) => {
                    let qualifier = |key: &str| {
                        entry
                            .type_qualifiers
                            .as_ref()
                            .and_then(|q| q.qualifiers.get(key))
                            .and_then(|value| match value {
                                TTypeQualifierValue::I32Value(n) => Some(*n),
                                TTypeQualifierValue::StringValue(_) => None,
                            })
                            .unwrap_or(0)
                    };
                    (
                        type_name(entry.type_),
                        qualifier("precision"),
                        qualifier("scale"),
                    )
                }
                Some(TTypeEntry::ArrayEntry(_)) => ("ARRAY_TYPE".to_owned(), 0, 0),
                Some(TTypeEntry::MapEntry(_)) => ("MAP_TYPE".to_owned(), 0, 0),
                Some(TTypeEntry::StructEntry(_)) => ("STRUCT_TYPE".to_owned(), 0, 0),
                Some(TTypeEntry::UnionEntry(_)) => ("UNION_TYPE".to_owned(), 0, 0),
                Some(TTypeEntry::UserDefinedTypeEntry(_)) | None => {
                    ("USER_DEFINED_TYPE".to_owned(), 0, 0)
                }
            };
            ColumnDesc {
                column_name: column.column_name.clone(),
                data_type,
                column_index: column.position,
                precision,
                scale,
                comment: column.comment.clone(),
            }
        })
        .collect();
    ResultSetMetaData { columns }
}

/// The lines of an operation-log row set (its first column).
pub fn log_lines(rows: Option<TRowSet>) -> OperationLog {
    let lines: Vec<String> = match rows {
        None => Vec::new(),
        Some(rows) => match rows.columns {
            Some(columns) => match columns.into_iter().next() {
                Some(TColumn::StringVal(column)) => column.values,
                _ => Vec::new(),
            },
            None => rows
                .rows
                .into_iter()
                .filter_map(|row| match row.col_vals.into_iter().next() {
                    Some(TColumnValue::StringVal(value)) => value.value,
                    _ => None,
                })
                .collect(),
        },
    };
    OperationLog {
        row_count: lines.len(),
        log_row_set: lines,
    }
}

/// A row set as rows of fields; a columnar one is turned row by row, its nulls read from
/// each column's bitmap (LSB first: bit b of byte i marks row 8i+b). Its rows are those of
/// its first column (as [`kumiho_thrift::rowset::row_count`] counts them); a shorter column
/// reads as null where it has no value.
pub fn rows(rows: Option<TRowSet>) -> ResultRowSet {
    let rows = match rows {
        None => Vec::new(),
        Some(set) => match (row_count(&set), &set.columns) {
            (Some(count), Some(columns)) => (0..count)
                .map(|row| Row {
                    fields: columns
                        .iter()
                        .map(|column| column_field(column, row))
                        .collect(),
                })
                .collect(),
            // Compressed (binary) columns, which no HiveServer2 engine of ours writes.
            (None, _) => Vec::new(),
            (Some(_), None) => set
                .rows
                .into_iter()
                .map(|row| Row {
                    fields: row.col_vals.into_iter().map(value_field).collect(),
                })
                .collect(),
        },
    };
    ResultRowSet {
        row_count: rows.len(),
        rows,
    }
}

fn is_null(nulls: &[u8], row: usize) -> bool {
    nulls
        .get(row / 8)
        .is_some_and(|byte| byte & (1 << (row % 8)) != 0)
}

/// Field `row` of a column.
fn column_field(column: &TColumn, row: usize) -> Field {
    let (data_type, nulls, value) = match column {
        TColumn::BoolVal(c) => ("BOOL_VAL", &c.nulls, c.values.get(row).map(|&v| v.into())),
        TColumn::ByteVal(c) => ("BYTE_VAL", &c.nulls, c.values.get(row).map(|&v| v.into())),
        TColumn::I16Val(c) => ("I16_VAL", &c.nulls, c.values.get(row).map(|&v| v.into())),
        TColumn::I32Val(c) => ("I32_VAL", &c.nulls, c.values.get(row).map(|&v| v.into())),
        TColumn::I64Val(c) => ("I64_VAL", &c.nulls, c.values.get(row).map(|&v| v.into())),
        TColumn::DoubleVal(c) => (
            "DOUBLE_VAL",
            &c.nulls,
            c.values.get(row).map(|v| double(v.0)),
        ),
        TColumn::StringVal(c) => (
            "STRING_VAL",
            &c.nulls,
            c.values.get(row).map(|v| Value::from(v.as_str())),
        ),
        TColumn::BinaryVal(c) => (
            "BINARY_VAL",
            &c.nulls,
            c.values
                .get(row)
                .map(|v| base64::engine::general_purpose::STANDARD.encode(v).into()),
        ),
    };
    Field {
        data_type,
        value: value
            .filter(|_| !is_null(nulls, row))
            .unwrap_or(Value::Null),
    }
}

/// A row-based value (protocols before V6): an unset value is null.
fn value_field(value: TColumnValue) -> Field {
    let (data_type, value) = match value {
        TColumnValue::BoolVal(v) => ("BOOL_VAL", v.value.map(Value::from)),
        TColumnValue::ByteVal(v) => ("BYTE_VAL", v.value.map(Value::from)),
        TColumnValue::I16Val(v) => ("I16_VAL", v.value.map(Value::from)),
        TColumnValue::I32Val(v) => ("I32_VAL", v.value.map(Value::from)),
        TColumnValue::I64Val(v) => ("I64_VAL", v.value.map(Value::from)),
        TColumnValue::DoubleVal(v) => ("DOUBLE_VAL", v.value.map(|d| double(d.0))),
        TColumnValue::StringVal(v) => ("STRING_VAL", v.value.map(Value::from)),
    };
    Field {
        data_type,
        value: value.unwrap_or(Value::Null),
    }
}

/// A double as JSON; NaN and the infinities, which JSON numbers cannot hold, as Jackson
/// writes them (strings).
fn double(value: f64) -> Value {
    match serde_json::Number::from_f64(value) {
        Some(number) => Value::Number(number),
        None if value.is_nan() => Value::from("NaN"),
        None if value > 0.0 => Value::from("Infinity"),
        None => Value::from("-Infinity"),
    }
}

#[cfg(test)]
mod tests;
