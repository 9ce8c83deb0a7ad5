use super::*;
use kumiho_thrift::cli::{TColumn, TI64Column, TRowSet};
use kumiho_thrift::status::FromStatus;

fn batch_reply(first: i64, count: i64) -> TFetchResultsResp {
    TFetchResultsResp {
        status: status::ok(),
        has_more_rows: None,
        results: Some(TRowSet {
            start_row_offset: 0,
            rows: Vec::new(),
            columns: Some(vec![TColumn::I64Val(TI64Column {
                values: (first..first + count).collect(),
                nulls: Vec::new(),
            })]),
            binary_columns: None,
            column_count: Some(1),
        }),
    }
}

fn ids(reply: &Bytes) -> Vec<i64> {
    let resp: TFetchResultsResp = decode_result_body(reply).expect("a FetchResults reply");
    match resp.results.and_then(|rows| rows.columns).as_deref() {
        Some([TColumn::I64Val(column)]) => column.values.clone(),
        other => panic!("unexpected row set {other:?}"),
    }
}

fn status_reply(state: TOperationState) -> Bytes {
    encode_result_body(&TGetOperationStatusResp {
        operation_state: Some(state),
        has_result_set: Some(true),
        ..TGetOperationStatusResp::from_status(status::ok())
    })
}

/// The rest a split kept, taken as the client's next fetch would.
fn next_rest(rows: &mut Rows, max_rows: i64) -> Batch {
    match rows.ahead.pop_front() {
        Some(Ahead::Rest(resp)) => rows.split_decoded(resp, max_rows),
        other => panic!("expected the rest of a batch, found {other:?}"),
    }
}

#[test]
fn a_batch_larger_than_the_clients_max_rows_is_split_and_the_rest_served_next() {
    let mut rows = Rows::default();
    let first = rows.split(encode_result_body(&batch_reply(1, 20)), 7);
    assert_eq!(ids(&first.reply), (1..=7).collect::<Vec<_>>());
    assert!(
        !rows.worth_reading_ahead(&first),
        "the rest is the next batch"
    );

    let second = next_rest(&mut rows, 7);
    assert_eq!(ids(&second.reply), (8..=14).collect::<Vec<_>>());
    let third = next_rest(&mut rows, 100);
    assert_eq!(ids(&third.reply), (15..=20).collect::<Vec<_>>());
    assert!(rows.ahead.is_empty());
    assert!(
        rows.worth_reading_ahead(&third),
        "the engine's next batch comes next"
    );
}

#[test]
fn a_batch_within_the_clients_max_rows_goes_as_the_engine_sent_it() {
    let mut rows = Rows::default();
    let sent = encode_result_body(&batch_reply(1, 5));
    let batch = rows.split(sent.clone(), 5);
    assert_eq!(batch.reply, sent);
    assert!(rows.ahead.is_empty());
}

#[test]
fn an_empty_batch_is_not_followed_by_a_read_ahead_and_one_row_is() {
    let mut rows = Rows::default();
    let empty = rows.forwarded(encode_result_body(&batch_reply(1, 0)));
    assert!(!empty.has_rows);
    assert!(!rows.worth_reading_ahead(&empty));
    let one = rows.forwarded(encode_result_body(&batch_reply(1, 1)));
    assert!(
        rows.worth_reading_ahead(&one),
        "one row: the next batch may hold more"
    );
}

#[test]
fn an_engine_error_reaches_the_client_unsplit() {
    let mut rows = Rows::default();
    let failed = TFetchResultsResp {
        status: status::error("HY000", "disk gone"),
        has_more_rows: None,
        results: None,
    };
    let batch = rows.split(encode_result_body(&failed), 10);
    let resp: TFetchResultsResp = decode_result_body(&batch.reply).expect("reply");
    assert_eq!(resp.status.error_message.as_deref(), Some("disk gone"));
    assert!(!batch.has_rows);
    assert!(rows.ahead.is_empty());
}

#[test]
fn only_running_states_are_not_final() {
    for state in [
        TOperationState::INITIALIZED_STATE,
        TOperationState::RUNNING_STATE,
        TOperationState::PENDING_STATE,
    ] {
        assert!(!is_final(&status_reply(state)), "{state:?}");
    }
    for state in [
        TOperationState::FINISHED_STATE,
        TOperationState::ERROR_STATE,
        TOperationState::CANCELED_STATE,
        TOperationState::CLOSED_STATE,
    ] {
        assert!(is_final(&status_reply(state)), "{state:?}");
    }
    assert!(is_finished(&status_reply(TOperationState::FINISHED_STATE)));
    assert!(!is_finished(&status_reply(TOperationState::ERROR_STATE)));
}
