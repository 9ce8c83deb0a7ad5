use std::net::SocketAddr;

use kumiho_thrift::service::Transport;
use thrift::protocol::TSerializable;
use thrift::protocol::{TBinaryInputProtocol, TInputProtocol, TType};

use super::*;
use crate::test_util::engine;

fn ctx(connection_id: u64) -> CallContext {
    CallContext {
        connection_id,
        peer: SocketAddr::from(([127, 0, 0, 1], 40000)),
        transport: Transport::Sasl,
        user: Some("alice".into()),
        after_reply: Default::default(),
    }
}

async fn service() -> EngineService {
    EngineService::new(engine().await)
}

fn typed<T: std::fmt::Debug>(reply: Reply<T>) -> T {
    match reply {
        Reply::Typed(value) => value,
        Reply::Encoded(_) => panic!("expected a typed reply"),
    }
}

/// Decodes an encoded FetchResults `_result` body, requiring that nothing follows it: a
/// stray byte would be read as the start of the client's next reply.
fn decode_fetch(reply: Reply<TFetchResultsResp>) -> TFetchResultsResp {
    let bytes = match reply {
        Reply::Encoded(bytes) => bytes,
        Reply::Typed(resp) => return resp,
    };
    let mut input: &[u8] = &bytes;
    let resp = {
        let mut protocol = TBinaryInputProtocol::new(&mut input, true);
        protocol.read_struct_begin().unwrap();
        let field = protocol.read_field_begin().unwrap();
        assert_eq!((field.field_type, field.id), (TType::Struct, Some(0)));
        let resp = TFetchResultsResp::read_from_in_protocol(&mut protocol).unwrap();
        protocol.read_field_end().unwrap();
        assert_eq!(protocol.read_field_begin().unwrap().field_type, TType::Stop);
        resp
    };
    assert!(
        input.is_empty(),
        "{} bytes follow the _result struct",
        input.len()
    );
    resp
}

async fn open(service: &EngineService, protocol: TProtocolVersion) -> TOpenSessionResp {
    typed(
        service
            .open_session(
                &ctx(1),
                TOpenSessionReq {
                    client_protocol: protocol,
                    username: None,
                    password: Some("secret-not-kept".into()),
                    configuration: None,
                },
            )
            .await,
    )
}

async fn execute(
    service: &EngineService,
    session: &TSessionHandle,
    sql: &str,
) -> TExecuteStatementResp {
    execute_with_overlay(service, session, sql, None).await
}

/// ExecuteStatement (async) with a `confOverlay`, as the gateway sends one.
async fn execute_with_overlay(
    service: &EngineService,
    session: &TSessionHandle,
    sql: &str,
    overlay: Option<BTreeMap<String, String>>,
) -> TExecuteStatementResp {
    typed(
        service
            .execute_statement(
                &ctx(1),
                TExecuteStatementReq {
                    session_handle: session.clone(),
                    statement: sql.into(),
                    conf_overlay: overlay,
                    run_async: Some(true),
                    query_timeout: None,
                },
            )
            .await,
    )
}

/// GetOperationStatus, as a client polls it (the engine holds it for its long-poll wait).
async fn poll_status(service: &EngineService, op: &TOperationHandle) -> TGetOperationStatusResp {
    typed(
        service
            .get_operation_status(
                &ctx(1),
                TGetOperationStatusReq {
                    operation_handle: op.clone(),
                    get_progress_update: None,
                },
            )
            .await,
    )
}

fn fetch_req(
    op: &TOperationHandle,
    orientation: TFetchOrientation,
    fetch_type: i16,
) -> TFetchResultsReq {
    TFetchResultsReq {
        operation_handle: op.clone(),
        orientation,
        max_rows: 100,
        fetch_type: Some(fetch_type),
    }
}

fn strings(resp: &TFetchResultsResp) -> Vec<String> {
    match &resp.results.as_ref().unwrap().columns.as_ref().unwrap()[0] {
        TColumn::StringVal(column) => column.values.clone(),
        other => panic!("not a string column: {other:?}"),
    }
}

#[tokio::test]
async fn protocol_is_the_lower_of_both_and_v6_at_least() {
    let service = service().await;
    let v = |n: i32| TProtocolVersion(n - 1);
    for (client, server) in [(10, 10), (6, 6), (11, 11), (12, 11)] {
        let resp = open(&service, v(client)).await;
        assert!(status::is_ok(&resp.status));
        assert_eq!(resp.server_protocol_version, v(server), "client V{client}");
        assert_eq!(
            resp.configuration.unwrap()["hive.server2.thrift.resultset.default.fetch.size"],
            "1000"
        );
    }
    let old = open(&service, v(5)).await;
    assert_eq!(old.status.status_code, TStatusCode::ERROR_STATUS);
    assert!(old.status.error_message.unwrap().contains("V6"));
    assert!(old.session_handle.is_none());
}

#[tokio::test]
async fn get_info_names_the_engine() {
    let service = service().await;
    let session = open(&service, TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10)
        .await
        .session_handle
        .unwrap();
    let info = |info_type| {
        let req = TGetInfoReq {
            session_handle: session.clone(),
            info_type,
        };
        async { typed(service.get_info(&ctx(1), req).await) }
    };
    let name = info(TGetInfoType::CLI_DBMS_NAME).await;
    assert_eq!(
        name.info_value,
        TGetInfoValue::StringValue(DBMS_NAME.into())
    );
    let version = info(TGetInfoType::CLI_DBMS_VER).await;
    assert_eq!(
        version.info_value,
        TGetInfoValue::StringValue(env!("CARGO_PKG_VERSION").into())
    );
    // Hive JDBC 3+ reads `getSQLKeywords` from here.
    let keywords = info(TGetInfoType::CLI_ODBC_KEYWORDS).await;
    assert!(status::is_ok(&keywords.status));
    let TGetInfoValue::StringValue(keywords) = keywords.info_value else {
        panic!("keywords are not a string: {:?}", keywords.info_value)
    };
    let keywords: Vec<&str> = keywords.split(',').collect();
    assert!(keywords.contains(&"SELECT") && keywords.contains(&"PARTITION"));
    let unknown = info(TGetInfoType(4242)).await;
    assert_eq!(unknown.status.status_code, TStatusCode::ERROR_STATUS);
    assert!(unknown.status.error_message.unwrap().contains("4242"));
}

#[tokio::test]
async fn a_statement_as_beeline_runs_it() {
    let service = service().await;
    let session = open(&service, TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10)
        .await
        .session_handle
        .unwrap();
    let executed = execute(
        &service,
        &session,
        "SELECT r_name FROM tpch.region ORDER BY r_regionkey",
    )
    .await;
    assert!(status::is_ok(&executed.status));
    let op = executed.operation_handle.unwrap();
    assert!(op.has_result_set);

    let status = poll_status(&service, &op).await;
    assert_eq!(
        status.operation_state,
        Some(TOperationState::FINISHED_STATE)
    );
    let metadata = typed(
        service
            .get_result_set_metadata(
                &ctx(1),
                TGetResultSetMetadataReq {
                    operation_handle: op.clone(),
                },
            )
            .await,
    );
    assert_eq!(metadata.schema.unwrap().columns[0].column_name, "r_name");

    let log = decode_fetch(
        service
            .fetch_results(&ctx(1), fetch_req(&op, TFetchOrientation::FETCH_NEXT, 1))
            .await,
    );
    assert!(strings(&log)[0].starts_with("Statement: SELECT r_name"));
    let rows = decode_fetch(
        service
            .fetch_results(&ctx(1), fetch_req(&op, TFetchOrientation::FETCH_NEXT, 0))
            .await,
    );
    assert_eq!(
        strings(&rows),
        ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
    );
    let end = decode_fetch(
        service
            .fetch_results(&ctx(1), fetch_req(&op, TFetchOrientation::FETCH_NEXT, 0))
            .await,
    );
    assert!(strings(&end).is_empty());
    let again = decode_fetch(
        service
            .fetch_results(&ctx(1), fetch_req(&op, TFetchOrientation::FETCH_FIRST, 0))
            .await,
    );
    assert_eq!(strings(&again).len(), 5);
    let prior = decode_fetch(
        service
            .fetch_results(&ctx(1), fetch_req(&op, TFetchOrientation::FETCH_PRIOR, 0))
            .await,
    );
    assert_eq!(prior.status.status_code, TStatusCode::ERROR_STATUS);

    let closed = typed(
        service
            .close_operation(
                &ctx(1),
                TCloseOperationReq {
                    operation_handle: op.clone(),
                },
            )
            .await,
    );
    assert!(status::is_ok(&closed.status));
    let gone = decode_fetch(
        service
            .fetch_results(&ctx(1), fetch_req(&op, TFetchOrientation::FETCH_NEXT, 0))
            .await,
    );
    assert_eq!(gone.status.status_code, TStatusCode::INVALID_HANDLE_STATUS);
}

#[tokio::test]
async fn a_failed_statement_reports_its_sqlstate() {
    let service = service().await;
    let session = open(&service, TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10)
        .await
        .session_handle
        .unwrap();
    let op = execute(&service, &session, "SELECT * FROM missing_table")
        .await
        .operation_handle
        .unwrap();
    let status = poll_status(&service, &op).await;
    assert_eq!(status.operation_state, Some(TOperationState::ERROR_STATE));
    // Hive's state for a table that does not exist; other planning errors are 42000.
    assert_eq!(status.sql_state.as_deref(), Some("42S02"));
    assert!(status.error_message.unwrap().contains("missing_table"));
    for (sql, state) in [
        ("DESCRIBE missing_table", "42S02"),
        ("SELECT no_such_column FROM tpch.nation", "42000"),
        ("SELEC 1", "42000"),
    ] {
        let op = execute(&service, &session, sql)
            .await
            .operation_handle
            .unwrap();
        let status = poll_status(&service, &op).await;
        assert_eq!(status.sql_state.as_deref(), Some(state), "{sql}");
    }
}

#[tokio::test]
async fn unknown_handles_are_invalid_and_a_closed_connection_ends_its_sessions() {
    let service = service().await;
    let session = open(&service, TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10)
        .await
        .session_handle
        .unwrap();
    service.connection_closed(&ctx(1)).await;
    let after = execute(&service, &session, "SELECT 1").await;
    assert_eq!(after.status.status_code, TStatusCode::INVALID_HANDLE_STATUS);
    let garbage = TSessionHandle {
        session_id: THandleIdentifier {
            guid: vec![1, 2, 3],
            secret: vec![],
        },
    };
    let closed = typed(
        service
            .close_session(
                &ctx(1),
                TCloseSessionReq {
                    session_handle: garbage,
                },
            )
            .await,
    );
    assert_eq!(
        closed.status.status_code,
        TStatusCode::INVALID_HANDLE_STATUS
    );
}

#[tokio::test]
async fn metadata_calls_return_finished_operations() {
    let service = service().await;
    let session = open(&service, TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10)
        .await
        .session_handle
        .unwrap();
    let tables = typed(
        service
            .get_tables(
                &ctx(1),
                TGetTablesReq {
                    session_handle: session.clone(),
                    catalog_name: None,
                    schema_name: Some("tpch".into()),
                    table_name: Some("n%".into()),
                    table_types: None,
                },
            )
            .await,
    );
    assert!(status::is_ok(&tables.status));
    let op = tables.operation_handle.unwrap();
    let rows = decode_fetch(
        service
            .fetch_results(&ctx(1), fetch_req(&op, TFetchOrientation::FETCH_NEXT, 0))
            .await,
    );
    let columns = rows.results.unwrap().columns.unwrap();
    let TColumn::StringVal(names) = &columns[2] else {
        panic!("TABLE_NAME is not a string column")
    };
    assert_eq!(names.values, ["nation"]);
}

#[tokio::test]
async fn a_statement_runs_under_the_handle_the_gateway_assigned_once() {
    let service = service().await;
    let opened = open(&service, MAX_PROTOCOL).await;
    assert_eq!(
        opened
            .configuration
            .as_ref()
            .and_then(|conf| conf.get(assigned_id::ACCEPTED_KEY))
            .map(String::as_str),
        Some("true"),
        "the engine says it accepts assigned handles"
    );
    let session = opened.session_handle.unwrap();
    let id = HandleId::new();
    let overlay = BTreeMap::from([(
        assigned_id::OPERATION_ID_KEY.to_owned(),
        assigned_id::encode(&id),
    )]);

    let first =
        execute_with_overlay(&service, &session, "SELECT 41 + 1", Some(overlay.clone())).await;
    assert!(status::is_ok(&first.status), "{:?}", first.status);
    let handle = first.operation_handle.unwrap();
    assert_eq!(HandleId::from_operation(&handle), Some(id));
    // The gateway polls the handle it assigned, as its client will.
    let assigned = id.operation_handle(TOperationType::EXECUTE_STATEMENT, true);
    let polled = poll_status(&service, &assigned).await;
    assert_eq!(
        polled.operation_state,
        Some(TOperationState::FINISHED_STATE)
    );
    let fetched = decode_fetch(
        service
            .fetch_results(
                &ctx(1),
                fetch_req(&assigned, TFetchOrientation::FETCH_NEXT, 0),
            )
            .await,
    );
    match &fetched.results.unwrap().columns.unwrap()[0] {
        TColumn::I32Val(column) => assert_eq!(column.values, vec![42]),
        other => panic!("unexpected column {other:?}"),
    }

    let again = execute_with_overlay(&service, &session, "SELECT 2", Some(overlay)).await;
    assert!(!status::is_ok(&again.status));
    assert!(
        again
            .status
            .error_message
            .unwrap_or_default()
            .contains("in use"),
        "a handle in use is refused, not shared"
    );
}

#[tokio::test]
async fn a_malformed_assigned_handle_is_refused_with_its_expected_form() {
    let service = service().await;
    let session = open(&service, MAX_PROTOCOL).await.session_handle.unwrap();
    let overlay = BTreeMap::from([(
        assigned_id::OPERATION_ID_KEY.to_owned(),
        "not-a-handle".to_owned(),
    )]);
    let resp = execute_with_overlay(&service, &session, "SELECT 1", Some(overlay)).await;
    assert!(!status::is_ok(&resp.status));
    assert!(resp.operation_handle.is_none());
    assert!(resp
        .status
        .error_message
        .unwrap_or_default()
        .contains("guid:secret"));
}
