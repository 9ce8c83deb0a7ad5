use super::*;
use kumiho_thrift::cli::{TColumn, TI64Column, TRowSet};

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

fn on_its_way(reply: TFetchResultsResp) -> Pending {
    spawned(async move { Ok(encode_result_body(&reply)) })
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
        status: status::ok(),
        operation_state: Some(state),
        sql_state: None,
        error_code: None,
        error_message: None,
        task_status: None,
        operation_started: None,
        operation_completed: None,
        has_result_set: Some(true),
        progress_update_response: None,
        num_modified_rows: None,
    })
}

#[tokio::test]
async fn a_batch_fetched_ahead_in_the_clients_size_is_served_whole() {
    let mut rows = Rows::default();
    let sent = encode_result_body(&batch_reply(1, 5));
    rows.keep(on_its_way(batch_reply(1, 5)), 5);
    let batch = rows.take(5).await.expect("kept").expect("arrived");
    assert_eq!(batch.reply, sent);
    assert!(batch.has_rows);
    assert!(rows.worth_reading_ahead(&batch));
    assert!(rows.take(5).await.is_none(), "served once");
}

#[tokio::test]
async fn a_larger_batch_is_split_at_the_clients_max_rows_and_the_rest_served_next() {
    let mut rows = Rows::default();
    rows.keep(on_its_way(batch_reply(1, 20)), 1000);

    let first = rows.take(7).await.expect("kept").expect("arrived");
    assert_eq!(ids(&first.reply), (1..=7).collect::<Vec<_>>());
    assert!(
        !rows.worth_reading_ahead(&first),
        "the rest is the next batch"
    );

    let second = rows.take(7).await.expect("rest kept").expect("rest");
    assert_eq!(ids(&second.reply), (8..=14).collect::<Vec<_>>());
    let third = rows.take(100).await.expect("rest kept").expect("rest");
    assert_eq!(ids(&third.reply), (15..=20).collect::<Vec<_>>());
    assert!(
        rows.worth_reading_ahead(&third),
        "the engine's next batch comes next"
    );
    assert!(rows.take(100).await.is_none());
}

#[tokio::test]
async fn an_empty_batch_is_not_followed_by_a_read_ahead() {
    let mut rows = Rows::default();
    let batch = rows.forwarded(encode_result_body(&batch_reply(1, 0)));
    assert!(!batch.has_rows);
    assert!(!rows.worth_reading_ahead(&batch));
    let batch = rows.forwarded(encode_result_body(&batch_reply(1, 1)));
    assert!(
        rows.worth_reading_ahead(&batch),
        "one row: the next batch may hold more"
    );
}

#[tokio::test]
async fn an_engine_error_in_a_batch_fetched_ahead_reaches_the_client_unsplit() {
    let mut rows = Rows::default();
    let failed = TFetchResultsResp {
        status: status::error("HY000", "disk gone"),
        has_more_rows: None,
        results: None,
    };
    rows.keep(on_its_way(failed), 1000);
    let batch = rows.take(10).await.expect("kept").expect("arrived");
    let resp: TFetchResultsResp = decode_result_body(&batch.reply).expect("reply");
    assert_eq!(resp.status.error_message.as_deref(), Some("disk gone"));
    assert!(!batch.has_rows);
}

#[tokio::test]
async fn discarding_waits_for_the_batch_on_its_way_and_drops_it() {
    let mut rows = Rows::default();
    let (release, arrival) = tokio::sync::oneshot::channel::<()>();
    rows.keep(
        spawned(async move {
            let _ = arrival.await;
            Ok(encode_result_body(&batch_reply(1, 3)))
        }),
        3,
    );
    let discarding = async { rows.discard().await };
    let _ = release.send(());
    discarding.await;
    assert!(rows.take(3).await.is_none());
    assert!(
        rows.client_fetched,
        "no first batch is fetched ahead after a discard"
    );
}

#[tokio::test]
async fn a_status_that_arrived_before_the_poll_is_served_only_when_final() {
    let prefetched = Prefetched::default();
    let arrived = |reply: Bytes| {
        let (sent, pending) = oneshot::channel();
        let _ = sent.send(Ok(reply));
        *prefetched.status.lock().unwrap() = Some(pending);
    };

    arrived(status_reply(TOperationState::RUNNING_STATE));
    assert!(
        prefetched.take_status().await.is_none(),
        "stale RUNNING: poll again"
    );

    arrived(status_reply(TOperationState::FINISHED_STATE));
    let served = prefetched.take_status().await.expect("final").expect("ok");
    assert_eq!(served, status_reply(TOperationState::FINISHED_STATE));
    assert!(prefetched.take_status().await.is_none(), "served once");
}

#[tokio::test]
async fn a_status_still_on_its_way_answers_the_poll_whatever_it_says() {
    let prefetched = Prefetched::default();
    let (sent, pending) = oneshot::channel();
    *prefetched.status.lock().unwrap() = Some(pending);
    tokio::spawn(async move {
        let _ = sent.send(Ok(status_reply(TOperationState::RUNNING_STATE)));
    });
    let served = prefetched.take_status().await.expect("kept").expect("ok");
    assert_eq!(served, status_reply(TOperationState::RUNNING_STATE));
}

#[tokio::test]
async fn batches_fetched_ahead_two_at_once_are_served_in_order_and_split_before_the_second() {
    let mut rows = Rows::default();
    rows.keep(on_its_way(batch_reply(1, 10)), 10);
    rows.keep(on_its_way(batch_reply(11, 10)), 10);

    let first = rows.take(4).await.expect("kept").expect("arrived");
    assert_eq!(ids(&first.reply), (1..=4).collect::<Vec<_>>());
    let rest = rows.take(10).await.expect("kept").expect("rest");
    assert_eq!(ids(&rest.reply), (5..=10).collect::<Vec<_>>());
    assert!(
        !rows.worth_reading_ahead(&rest),
        "the second batch is on its way"
    );
    let second = rows.take(10).await.expect("kept").expect("arrived");
    assert_eq!(ids(&second.reply), (11..=20).collect::<Vec<_>>());
    assert!(rows.worth_reading_ahead(&second));
}
