// TCLIService: the HiveServer2 client protocol, as Kumiho speaks it.
//
// Written for Kumiho from the protocol's published field ids and types so that every
// HiveServer2 client (Hive JDBC, PyHive, impyla, ODBC drivers) reads our bytes as its own.
// Field ids, types and requiredness are the wire contract: never renumber a field.
// Rust code is generated from this file by scripts/gen-thrift.sh (thrift-compiler 0.17).

namespace rs tcli_service

enum TProtocolVersion {
  HIVE_CLI_SERVICE_PROTOCOL_V1,
  HIVE_CLI_SERVICE_PROTOCOL_V2,   // V1 + typed qualifiers (decimal precision/scale)
  HIVE_CLI_SERVICE_PROTOCOL_V3,   // V2 + char/varchar qualifiers
  HIVE_CLI_SERVICE_PROTOCOL_V4,   // V3 + date/decimal formatting
  HIVE_CLI_SERVICE_PROTOCOL_V5,   // V4 + interval types
  HIVE_CLI_SERVICE_PROTOCOL_V6,   // V5 + columnar row sets
  HIVE_CLI_SERVICE_PROTOCOL_V7,   // V6 + compressed columnar row sets (binaryColumns)
  HIVE_CLI_SERVICE_PROTOCOL_V8,   // V7 + timestamp with local time zone
  HIVE_CLI_SERVICE_PROTOCOL_V9,   // V8 + getting a statement's query id
  HIVE_CLI_SERVICE_PROTOCOL_V10,  // V9 + SetClientInfo
  HIVE_CLI_SERVICE_PROTOCOL_V11   // V10 + primary/foreign key metadata in results
}

enum TTypeId {
  BOOLEAN_TYPE,
  TINYINT_TYPE,
  SMALLINT_TYPE,
  INT_TYPE,
  BIGINT_TYPE,
  FLOAT_TYPE,
  DOUBLE_TYPE,
  STRING_TYPE,
  TIMESTAMP_TYPE,
  BINARY_TYPE,
  ARRAY_TYPE,
  MAP_TYPE,
  STRUCT_TYPE,
  UNION_TYPE,
  USER_DEFINED_TYPE,
  DECIMAL_TYPE,
  NULL_TYPE,
  DATE_TYPE,
  VARCHAR_TYPE,
  CHAR_TYPE,
  INTERVAL_YEAR_MONTH_TYPE,
  INTERVAL_DAY_TIME_TYPE,
  TIMESTAMPLOCALTZ_TYPE
}

// An index into TTypeDesc.types.
typedef i32 TTypeEntryPtr

// A type qualifier value: precision/scale of a decimal, length of a varchar.
union TTypeQualifierValue {
  1: optional i32 i32Value
  2: optional string stringValue
}

struct TTypeQualifiers {
  1: required map<string, TTypeQualifierValue> qualifiers
}

struct TPrimitiveTypeEntry {
  1: required TTypeId type
  2: optional TTypeQualifiers typeQualifiers
}

struct TArrayTypeEntry {
  1: required TTypeEntryPtr objectTypePtr
}

struct TMapTypeEntry {
  1: required TTypeEntryPtr keyTypePtr
  2: required TTypeEntryPtr valueTypePtr
}

struct TStructTypeEntry {
  1: required map<string, TTypeEntryPtr> nameToTypePtr
}

struct TUnionTypeEntry {
  1: required map<string, TTypeEntryPtr> nameToTypePtr
}

struct TUserDefinedTypeEntry {
  1: required string typeClassName
}

union TTypeEntry {
  1: TPrimitiveTypeEntry primitiveEntry
  2: TArrayTypeEntry arrayEntry
  3: TMapTypeEntry mapEntry
  4: TStructTypeEntry structEntry
  5: TUnionTypeEntry unionEntry
  6: TUserDefinedTypeEntry userDefinedTypeEntry
}

// A column's type, flattened: the root is types[0].
struct TTypeDesc {
  1: required list<TTypeEntry> types
}

struct TColumnDesc {
  1: required string columnName
  2: required TTypeDesc typeDesc
  // 1-based position of the column in the result.
  3: required i32 position
  4: optional string comment
}

struct TTableSchema {
  1: required list<TColumnDesc> columns
}

// Row-based values (protocol V1..V5).
struct TBoolValue {
  1: optional bool value
}

struct TByteValue {
  1: optional i8 value
}

struct TI16Value {
  1: optional i16 value
}

struct TI32Value {
  1: optional i32 value
}

struct TI64Value {
  1: optional i64 value
}

struct TDoubleValue {
  1: optional double value
}

struct TStringValue {
  1: optional string value
}

union TColumnValue {
  1: TBoolValue   boolVal
  2: TByteValue   byteVal
  3: TI16Value    i16Val
  4: TI32Value    i32Val
  5: TI64Value    i64Val
  6: TDoubleValue doubleVal
  7: TStringValue stringVal
}

struct TRow {
  1: required list<TColumnValue> colVals
}

// Columnar values (protocol V6+). `nulls` is a bitmap, LSB first: bit b of byte i
// marks row 8i+b as NULL.
struct TBoolColumn {
  1: required list<bool> values
  2: required binary nulls
}

struct TByteColumn {
  1: required list<i8> values
  2: required binary nulls
}

struct TI16Column {
  1: required list<i16> values
  2: required binary nulls
}

struct TI32Column {
  1: required list<i32> values
  2: required binary nulls
}

struct TI64Column {
  1: required list<i64> values
  2: required binary nulls
}

struct TDoubleColumn {
  1: required list<double> values
  2: required binary nulls
}

struct TStringColumn {
  1: required list<string> values
  2: required binary nulls
}

struct TBinaryColumn {
  1: required list<binary> values
  2: required binary nulls
}

union TColumn {
  1: TBoolColumn   boolVal
  2: TByteColumn   byteVal
  3: TI16Column    i16Val
  4: TI32Column    i32Val
  5: TI64Column    i64Val
  6: TDoubleColumn doubleVal
  7: TStringColumn stringVal
  8: TBinaryColumn binaryVal
}

struct TRowSet {
  1: required i64 startRowOffset
  2: required list<TRow> rows
  3: optional list<TColumn> columns
  4: optional binary binaryColumns
  5: optional i32 columnCount
}

enum TStatusCode {
  SUCCESS_STATUS,
  SUCCESS_WITH_INFO_STATUS,
  STILL_EXECUTING_STATUS,
  ERROR_STATUS,
  INVALID_HANDLE_STATUS
}

struct TStatus {
  1: required TStatusCode statusCode
  2: optional list<string> infoMessages
  3: optional string sqlState
  4: optional i32 errorCode
  5: optional string errorMessage
}

enum TOperationState {
  INITIALIZED_STATE,
  RUNNING_STATE,
  FINISHED_STATE,
  CANCELED_STATE,
  CLOSED_STATE,
  ERROR_STATE,
  UKNOWN_STATE,   // sic: the protocol's spelling
  PENDING_STATE,
  TIMEDOUT_STATE
}

typedef string TIdentifier
typedef string TPattern
typedef string TPatternOrIdentifier

struct THandleIdentifier {
  1: required binary guid
  2: required binary secret
}

struct TSessionHandle {
  1: required THandleIdentifier sessionId
}

enum TOperationType {
  EXECUTE_STATEMENT,
  GET_TYPE_INFO,
  GET_CATALOGS,
  GET_SCHEMAS,
  GET_TABLES,
  GET_TABLE_TYPES,
  GET_COLUMNS,
  GET_FUNCTIONS,
  UNKNOWN,
  PROCEDURAL_SQL
}

struct TOperationHandle {
  1: required THandleIdentifier operationId
  2: required TOperationType operationType
  3: required bool hasResultSet
  4: optional double modifiedRowCount
}

struct TOpenSessionReq {
  1: required TProtocolVersion client_protocol = TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
  2: optional string username
  3: optional string password
  4: optional map<string, string> configuration
}

struct TOpenSessionResp {
  1: required TStatus status
  2: required TProtocolVersion serverProtocolVersion = TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
  3: optional TSessionHandle sessionHandle
  4: optional map<string, string> configuration
}

struct TSetClientInfoReq {
  1: required TSessionHandle sessionHandle
  2: optional map<string, string> configuration
}

struct TSetClientInfoResp {
  1: required TStatus status
}

struct TCloseSessionReq {
  1: required TSessionHandle sessionHandle
}

struct TCloseSessionResp {
  1: required TStatus status
}

enum TGetInfoType {
  CLI_MAX_DRIVER_CONNECTIONS =           0,
  CLI_MAX_CONCURRENT_ACTIVITIES =        1,
  CLI_DATA_SOURCE_NAME =                 2,
  CLI_FETCH_DIRECTION =                  8,
  CLI_SERVER_NAME =                      13,
  CLI_SEARCH_PATTERN_ESCAPE =            14,
  CLI_DBMS_NAME =                        17,
  CLI_DBMS_VER =                         18,
  CLI_ACCESSIBLE_TABLES =                19,
  CLI_ACCESSIBLE_PROCEDURES =            20,
  CLI_CURSOR_COMMIT_BEHAVIOR =           23,
  CLI_DATA_SOURCE_READ_ONLY =            25,
  CLI_DEFAULT_TXN_ISOLATION =            26,
  CLI_IDENTIFIER_CASE =                  28,
  CLI_IDENTIFIER_QUOTE_CHAR =            29,
  CLI_MAX_COLUMN_NAME_LEN =              30,
  CLI_MAX_CURSOR_NAME_LEN =              31,
  CLI_MAX_SCHEMA_NAME_LEN =              32,
  CLI_MAX_CATALOG_NAME_LEN =             34,
  CLI_MAX_TABLE_NAME_LEN =               35,
  CLI_SCROLL_CONCURRENCY =               43,
  CLI_TXN_CAPABLE =                      46,
  CLI_USER_NAME =                        47,
  CLI_TXN_ISOLATION_OPTION =             72,
  CLI_INTEGRITY =                        73,
  CLI_GETDATA_EXTENSIONS =               81,
  CLI_NULL_COLLATION =                   85,
  CLI_ALTER_TABLE =                      86,
  CLI_ORDER_BY_COLUMNS_IN_SELECT =       90,
  CLI_SPECIAL_CHARACTERS =               94,
  CLI_MAX_COLUMNS_IN_GROUP_BY =          97,
  CLI_MAX_COLUMNS_IN_INDEX =             98,
  CLI_MAX_COLUMNS_IN_ORDER_BY =          99,
  CLI_MAX_COLUMNS_IN_SELECT =            100,
  CLI_MAX_COLUMNS_IN_TABLE =             101,
  CLI_MAX_INDEX_SIZE =                   102,
  CLI_MAX_ROW_SIZE =                     104,
  CLI_MAX_STATEMENT_LEN =                105,
  CLI_MAX_TABLES_IN_SELECT =             106,
  CLI_MAX_USER_NAME_LEN =                107,
  CLI_OJ_CAPABILITIES =                  115,
  CLI_XOPEN_CLI_YEAR =                   10000,
  CLI_CURSOR_SENSITIVITY =               10001,
  CLI_DESCRIBE_PARAMETER =               10002,
  CLI_CATALOG_NAME =                     10003,
  CLI_COLLATION_SEQ =                    10004,
  CLI_MAX_IDENTIFIER_LEN =               10005,
  CLI_ODBC_KEYWORDS =                    10006
}

union TGetInfoValue {
  1: string stringValue
  2: i16 smallIntValue
  3: i32 integerBitmask
  4: i32 integerFlag
  5: i32 binaryValue
  6: i64 lenValue
}

struct TGetInfoReq {
  1: required TSessionHandle sessionHandle
  2: required TGetInfoType infoType
}

struct TGetInfoResp {
  1: required TStatus status
  2: required TGetInfoValue infoValue
}

struct TExecuteStatementReq {
  1: required TSessionHandle sessionHandle
  2: required string statement
  3: optional map<string, string> confOverlay
  4: optional bool runAsync = false
  // Seconds; 0 means no limit.
  5: optional i64 queryTimeout = 0
}

struct TExecuteStatementResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
}

struct TGetTypeInfoReq {
  1: required TSessionHandle sessionHandle
}

struct TGetTypeInfoResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
}

struct TGetCatalogsReq {
  1: required TSessionHandle sessionHandle
}

struct TGetCatalogsResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
}

struct TGetSchemasReq {
  1: required TSessionHandle sessionHandle
  2: optional TIdentifier catalogName
  3: optional TPatternOrIdentifier schemaName
}

struct TGetSchemasResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
}

struct TGetTablesReq {
  1: required TSessionHandle sessionHandle
  2: optional TPatternOrIdentifier catalogName
  3: optional TPatternOrIdentifier schemaName
  4: optional TPatternOrIdentifier tableName
  5: optional list<string> tableTypes
}

struct TGetTablesResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
}

struct TGetTableTypesReq {
  1: required TSessionHandle sessionHandle
}

struct TGetTableTypesResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
}

struct TGetColumnsReq {
  1: required TSessionHandle sessionHandle
  2: optional TIdentifier catalogName
  3: optional TPatternOrIdentifier schemaName
  4: optional TPatternOrIdentifier tableName
  5: optional TPatternOrIdentifier columnName
}

struct TGetColumnsResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
}

struct TGetFunctionsReq {
  1: required TSessionHandle sessionHandle
  2: optional TIdentifier catalogName
  3: optional TPatternOrIdentifier schemaName
  4: required TPatternOrIdentifier functionName
}

struct TGetFunctionsResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
}

struct TGetPrimaryKeysReq {
  1: required TSessionHandle sessionHandle
  2: optional TIdentifier catalogName
  3: optional TIdentifier schemaName
  4: optional TIdentifier tableName
}

struct TGetPrimaryKeysResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
}

struct TGetCrossReferenceReq {
  1: required TSessionHandle sessionHandle
  2: optional TIdentifier parentCatalogName
  3: optional TIdentifier parentSchemaName
  4: optional TIdentifier parentTableName
  5: optional TIdentifier foreignCatalogName
  6: optional TIdentifier foreignSchemaName
  7: optional TIdentifier foreignTableName
}

struct TGetCrossReferenceResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
}

struct TGetOperationStatusReq {
  1: required TOperationHandle operationHandle
  2: optional bool getProgressUpdate
}

enum TJobExecutionStatus {
  IN_PROGRESS,
  COMPLETE,
  NOT_AVAILABLE
}

struct TProgressUpdateResp {
  1: required list<string> headerNames
  2: required list<list<string>> rows
  3: required double progressedPercentage
  4: required TJobExecutionStatus status
  5: required string footerSummary
  6: required i64 startTime
}

struct TGetOperationStatusResp {
  1: required TStatus status
  2: optional TOperationState operationState
  3: optional string sqlState
  4: optional i32 errorCode
  5: optional string errorMessage
  6: optional string taskStatus
  // Milliseconds since the epoch.
  7: optional i64 operationStarted
  8: optional i64 operationCompleted
  9: optional bool hasResultSet
  10: optional TProgressUpdateResp progressUpdateResponse
  11: optional i64 numModifiedRows
}

struct TCancelOperationReq {
  1: required TOperationHandle operationHandle
}

struct TCancelOperationResp {
  1: required TStatus status
}

struct TCloseOperationReq {
  1: required TOperationHandle operationHandle
}

struct TCloseOperationResp {
  1: required TStatus status
}

struct TGetResultSetMetadataReq {
  1: required TOperationHandle operationHandle
}

struct TGetResultSetMetadataResp {
  1: required TStatus status
  2: optional TTableSchema schema
}

enum TFetchOrientation {
  FETCH_NEXT,
  FETCH_PRIOR,
  FETCH_RELATIVE,
  FETCH_ABSOLUTE,
  FETCH_FIRST,
  FETCH_LAST
}

struct TFetchResultsReq {
  1: required TOperationHandle operationHandle
  2: required TFetchOrientation orientation = TFetchOrientation.FETCH_NEXT
  3: required i64 maxRows
  // 0: the result; 1: the operation log.
  4: optional i16 fetchType = 0
}

struct TFetchResultsResp {
  1: required TStatus status
  2: optional bool hasMoreRows
  3: optional TRowSet results
}

struct TGetDelegationTokenReq {
  1: required TSessionHandle sessionHandle
  2: required string owner
  3: required string renewer
}

struct TGetDelegationTokenResp {
  1: required TStatus status
  2: optional string delegationToken
}

struct TCancelDelegationTokenReq {
  1: required TSessionHandle sessionHandle
  2: required string delegationToken
}

struct TCancelDelegationTokenResp {
  1: required TStatus status
}

struct TRenewDelegationTokenReq {
  1: required TSessionHandle sessionHandle
  2: required string delegationToken
}

struct TRenewDelegationTokenResp {
  1: required TStatus status
}

struct TGetQueryIdReq {
  1: required TOperationHandle operationHandle
}

struct TGetQueryIdResp {
  1: required string queryId
}

service TCLIService {
  TOpenSessionResp OpenSession(1: TOpenSessionReq req);
  TCloseSessionResp CloseSession(1: TCloseSessionReq req);
  TGetInfoResp GetInfo(1: TGetInfoReq req);
  TExecuteStatementResp ExecuteStatement(1: TExecuteStatementReq req);
  TGetTypeInfoResp GetTypeInfo(1: TGetTypeInfoReq req);
  TGetCatalogsResp GetCatalogs(1: TGetCatalogsReq req);
  TGetSchemasResp GetSchemas(1: TGetSchemasReq req);
  TGetTablesResp GetTables(1: TGetTablesReq req);
  TGetTableTypesResp GetTableTypes(1: TGetTableTypesReq req);
  TGetColumnsResp GetColumns(1: TGetColumnsReq req);
  TGetFunctionsResp GetFunctions(1: TGetFunctionsReq req);
  TGetPrimaryKeysResp GetPrimaryKeys(1: TGetPrimaryKeysReq req);
  TGetCrossReferenceResp GetCrossReference(1: TGetCrossReferenceReq req);
  TGetOperationStatusResp GetOperationStatus(1: TGetOperationStatusReq req);
  TCancelOperationResp CancelOperation(1: TCancelOperationReq req);
  TCloseOperationResp CloseOperation(1: TCloseOperationReq req);
  TGetResultSetMetadataResp GetResultSetMetadata(1: TGetResultSetMetadataReq req);
  TFetchResultsResp FetchResults(1: TFetchResultsReq req);
  TGetDelegationTokenResp GetDelegationToken(1: TGetDelegationTokenReq req);
  TCancelDelegationTokenResp CancelDelegationToken(1: TCancelDelegationTokenReq req);
  TRenewDelegationTokenResp RenewDelegationToken(1: TRenewDelegationTokenReq req);
  TGetQueryIdResp GetQueryId(1: TGetQueryIdReq req);
  TSetClientInfoResp SetClientInfo(1: TSetClientInfoReq req);
}
