use std::sync::Mutex as StdMutex;

use datafusion::arrow::array::Int64Array;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use tokio::sync::oneshot;

use super::*;
use crate::engine::{Engine, EngineError};
use crate::test_util::{engine, open};

/// A table whose scan never ends: busy (a batch whenever polled) or idle (never a batch).
/// Starting a scan fires `started`; dropping the scan's stream drops its `DropSignal`,
/// which tells the test the work stopped.
#[derive(Debug)]
struct EndlessPartition {
    schema: SchemaRef,
    busy: bool,
    started: StdMutex<Option<oneshot::Sender<()>>>,
    dropped: StdMutex<Option<oneshot::Sender<()>>>,
}

/// Dropped with the stream that owns it.
struct DropSignal(#[allow(dead_code)] Option<oneshot::Sender<()>>);

impl PartitionStream for EndlessPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        if let Some(started) = self.started.lock().unwrap().take() {
            let _ = started.send(());
        }
        let signal = DropSignal(self.dropped.lock().unwrap().take());
        let batch = RecordBatch::try_new(
            Arc::clone(&self.schema),
            vec![Arc::new(Int64Array::from_iter_values(0..1024))],
        )
        .unwrap();
        let stream: futures::stream::BoxStream<'static, _> = if self.busy {
            futures::stream::repeat_with(move || {
                let _keep = &signal;
                Ok(batch.clone())
            })
            .boxed()
        } else {
            futures::stream::pending::<Result<RecordBatch, DataFusionError>>()
                .map(move |b| {
                    let _keep = &signal;
                    b
                })
                .boxed()
        };
        Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            stream,
        ))
    }
}

/// What a test learns from table `endless`.
struct EndlessSignals {
    /// Resolves once a scan has started.
    started: oneshot::Receiver<()>,
    /// Resolves (with an error) once the scan's stream has been dropped.
    stopped: oneshot::Receiver<()>,
}

/// Registers table `endless` in the session's database.
fn register_endless(session: &Session, busy: bool) -> EndlessSignals {
    let (started_tx, started) = oneshot::channel();
    let (stopped_tx, stopped) = oneshot::channel();
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
    let partition = EndlessPartition {
        schema: Arc::clone(&schema),
        busy,
        started: StdMutex::new(Some(started_tx)),
        dropped: StdMutex::new(Some(stopped_tx)),
    };
    let table = StreamingTable::try_new(schema, vec![Arc::new(partition)]).unwrap();
    session
        .context()
        .register_table("endless", Arc::new(table))
        .unwrap();
    EndlessSignals { started, stopped }
}

/// The first column's values as text.
fn values(fetched: &Fetched) -> Vec<String> {
    use datafusion::arrow::util::display::array_value_to_string;
    fetched
        .batches
        .iter()
        .flat_map(|b| {
            (0..b.num_rows()).map(move |i| array_value_to_string(b.column(0), i).unwrap())
        })
        .collect()
}

async fn fetch_all(op: &Operation, chunk: usize) -> Vec<Fetched> {
    let mut all = Vec::new();
    loop {
        let fetched = op.fetch(false, chunk).await.unwrap();
        let done = fetched.num_rows() == 0;
        all.push(fetched);
        if done {
            return all;
        }
    }
}

async fn started(engine: &Engine, session: &Session, sql: &str) -> Arc<Operation> {
    engine.execute(&session.id, sql, true, None).await.unwrap()
}

#[tokio::test]
async fn a_query_runs_to_finished_and_fetches_in_slices() {
    let engine = engine().await;
    let s = open(&engine);
    // 25 nations in batches of 10: slices cross batch boundaries.
    run_set(&engine, &s, "SET datafusion.execution.batch_size=10").await;
    let op = started(
        &engine,
        &s,
        "SELECT n_nationkey FROM tpch.nation ORDER BY n_nationkey",
    )
    .await;
    assert!(op.has_result_set());
    let status = op.wait_until_done().await;
    assert_eq!(status.state, OpState::Finished);
    assert!(status.completed_ms.unwrap() >= status.started_ms);
    assert_eq!(op.schema().unwrap().field(0).name(), "n_nationkey");

    let fetched = fetch_all(&op, 7).await;
    let sizes: Vec<(i64, usize, bool)> = fetched
        .iter()
        .map(|f| (f.start_offset, f.num_rows(), f.has_more))
        .collect();
    // The fourth fetch reaches the end of the stream, so it already says no more rows.
    assert_eq!(
        sizes,
        [
            (0, 7, true),
            (7, 7, true),
            (14, 7, true),
            (21, 4, false),
            (25, 0, false)
        ]
    );
    let keys: Vec<i64> = fetched
        .iter()
        .flat_map(|f| &f.batches)
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    assert_eq!(keys, (0..25).collect::<Vec<i64>>());
}

async fn run_set(engine: &Engine, session: &Session, sql: &str) {
    let op = engine.execute(&session.id, sql, false, None).await.unwrap();
    assert!(!op.has_result_set());
    engine.close_operation(&op.id).unwrap();
}

#[tokio::test]
async fn fetch_first_runs_the_query_again() {
    let engine = engine().await;
    let s = open(&engine);
    let op = started(
        &engine,
        &s,
        "SELECT r_name FROM tpch.region ORDER BY r_regionkey",
    )
    .await;
    op.wait_until_done().await;
    // FETCH_FIRST before anything was read starts where the first batch waits.
    let first = op.fetch(true, 2).await.unwrap();
    assert_eq!((first.start_offset, first.num_rows()), (0, 2));
    let rest = op.fetch(false, 100).await.unwrap();
    assert_eq!((rest.start_offset, rest.num_rows()), (2, 3));
    let again = op.fetch(true, 100).await.unwrap();
    assert_eq!((again.start_offset, again.num_rows()), (0, 5));
    let mut once = values(&first);
    once.extend(values(&rest));
    assert_eq!(values(&again), once);
    assert_eq!(once[0], "AFRICA");
    assert!(op
        .fetch_log(true, 1000)
        .iter()
        .any(|l| l.contains("running the query again")));
}

#[tokio::test]
async fn fetch_first_does_not_repeat_side_effects() {
    let engine = engine().await;
    let s = open(&engine);
    run_set(&engine, &s, "CREATE TABLE t (x INT)").await;
    let insert = engine
        .execute(&s.id, "INSERT INTO t VALUES (1), (2)", false, None)
        .await
        .unwrap();
    assert_eq!(insert.status().modified_rows, Some(2));
    insert.fetch(false, 10).await.unwrap();
    insert.fetch(true, 10).await.unwrap();
    let count = started(&engine, &s, "SELECT count(*) FROM t").await;
    count.wait_until_done().await;
    let rows = count.fetch(false, 10).await.unwrap();
    let n = rows.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .value(0);
    assert_eq!(n, 2);
}

#[tokio::test]
async fn planning_errors_are_42000_and_execution_errors_hy000() {
    let engine = engine().await;
    let s = open(&engine);
    let op = started(&engine, &s, "SELEC 1").await;
    let status = op.wait_until_done().await;
    assert_eq!(status.state, OpState::Error);
    assert_eq!(status.error.as_ref().unwrap().sql_state, "42000");
    // A missing table has Hive's own state.
    let op = started(&engine, &s, "SELECT * FROM no_such_table").await;
    let status = op.wait_until_done().await;
    assert_eq!(status.error.unwrap().sql_state, "42S02");

    // `::` is DataFusion's strict cast (Hive's CAST gives NULL instead: crate::hive_syntax).
    let op = started(&engine, &s, "SELECT n_name::INT FROM tpch.nation").await;
    let status = op.wait_until_done().await;
    assert_eq!(status.state, OpState::Error);
    let error = status.error.unwrap();
    assert_eq!(error.sql_state, "HY000");
    assert!(error.message.contains("Cast"), "{}", error.message);
    // Fetching from a failed operation repeats its error.
    assert_eq!(op.fetch(false, 10).await.unwrap_err(), error);

    let sync = engine
        .execute(&s.id, "SELECT * FROM nope", false, None)
        .await;
    match sync {
        Err(EngineError::Operation(e)) => assert!(e.message.contains("nope"), "{}", e.message),
        other => panic!("expected an error, got {:?}", other.map(|op| op.status())),
    }
}

#[tokio::test]
async fn the_log_returns_new_lines_then_nothing() {
    let engine = engine().await;
    let s = open(&engine);
    let op = started(&engine, &s, "SELECT count(*) FROM tpch.orders").await;
    op.wait_until_done().await;
    fetch_all(&op, 1000).await;
    let log = op.fetch_log(false, 1000);
    let text = log.join("\n");
    assert!(
        text.contains("Statement: SELECT count(*) FROM tpch.orders"),
        "{text}"
    );
    assert!(text.contains("Logical plan:"), "{text}");
    assert!(text.contains("Executing the physical plan"), "{text}");
    assert!(text.contains("Finished"), "{text}");
    assert!(text.contains("Result complete: 1 rows"), "{text}");
    assert!(op.fetch_log(false, 1000).is_empty());
    assert_eq!(op.fetch_log(true, 1000), log);
    assert_eq!(op.fetch_log(true, 2), log[..2]);
    assert_eq!(op.fetch_log(false, 1000), log[2..]);
}

#[tokio::test]
async fn cancel_stops_the_running_plan() {
    let engine = engine().await;
    let s = open(&engine);
    let endless = register_endless(&s, true);
    let op = started(&engine, &s, "SELECT count(*) FROM endless").await;
    endless.started.await.unwrap();
    assert_eq!(op.status().state, OpState::Running);
    let status = op.cancel();
    assert_eq!(status.state, OpState::Canceled);
    assert_eq!(status.error.unwrap().sql_state, "HY008");
    // The scan's stream is dropped: DataFusion's work has stopped.
    assert!(endless.stopped.await.is_err());
    assert!(op.fetch(false, 10).await.is_err());
    assert!(op
        .fetch_log(true, 100)
        .iter()
        .any(|l| l.contains("Canceled")));
}

#[tokio::test]
async fn cancel_after_finished_frees_the_stream() {
    let engine = engine().await;
    let s = open(&engine);
    let endless = register_endless(&s, true);
    let op = started(&engine, &s, "SELECT v FROM endless").await;
    assert_eq!(op.wait_until_done().await.state, OpState::Finished);
    assert_eq!(op.fetch(false, 5000).await.unwrap().num_rows(), 5000);
    assert_eq!(op.cancel().state, OpState::Canceled);
    assert!(endless.stopped.await.is_err());
}

#[tokio::test]
async fn close_stops_the_running_plan() {
    let engine = engine().await;
    let s = open(&engine);
    let endless = register_endless(&s, true);
    let op = started(&engine, &s, "SELECT count(*) FROM endless").await;
    endless.started.await.unwrap();
    engine.close_operation(&op.id).unwrap();
    assert_eq!(op.status().state, OpState::Closed);
    assert!(endless.stopped.await.is_err());
}

#[tokio::test(start_paused = true)]
async fn query_timeout_ends_as_timedout() {
    let engine = engine().await;
    let s = open(&engine);
    let endless = register_endless(&s, false);
    let op = engine
        .execute(
            &s.id,
            "SELECT count(*) FROM endless",
            true,
            Some(Duration::from_secs(2)),
        )
        .await
        .unwrap();
    let status = op.wait_until_done().await;
    assert_eq!(status.state, OpState::TimedOut);
    let error = status.error.unwrap();
    assert_eq!(error.sql_state, "HYT00");
    assert!(error.message.contains("2 s"), "{}", error.message);
    assert!(endless.stopped.await.is_err());

    let sync = engine
        .execute(&s.id, "SELECT 1", false, Some(Duration::from_secs(2)))
        .await
        .unwrap();
    assert_eq!(sync.status().state, OpState::Finished);
}

#[tokio::test(start_paused = true)]
async fn status_waits_briefly_for_a_change() {
    let engine = engine().await;
    let s = open(&engine);
    let _endless = register_endless(&s, false);
    let op = started(&engine, &s, "SELECT count(*) FROM endless").await;
    // Nothing changes: the call answers RUNNING once its bound has passed.
    let status = op.wait_for_progress(Duration::from_millis(500)).await;
    assert_eq!(status.state, OpState::Running);

    let quick = started(&engine, &s, "SELECT 1").await;
    assert_eq!(
        quick
            .wait_for_progress(Duration::from_secs(3600))
            .await
            .state,
        OpState::Finished
    );
}

#[tokio::test]
async fn metadata_operations_serve_their_rows() {
    let engine = engine().await;
    let s = open(&engine);
    let schema = Arc::new(Schema::new(vec![Field::new(
        "TABLE_TYPE",
        DataType::Utf8,
        false,
    )]));
    let batch = RecordBatch::try_new(
        schema,
        vec![Arc::new(datafusion::arrow::array::StringArray::from(vec![
            "TABLE", "VIEW",
        ]))],
    )
    .unwrap();
    let op = engine
        .metadata(&s.id, TOperationType::GET_TABLE_TYPES, |_| async move {
            Ok(batch)
        })
        .await
        .unwrap();
    assert_eq!(op.status().state, OpState::Finished);
    assert_eq!(op.fetch(false, 1).await.unwrap().num_rows(), 1);
    let rest = op.fetch(false, 10).await.unwrap();
    assert_eq!(
        (rest.start_offset, rest.num_rows(), rest.has_more),
        (1, 1, false)
    );
}

#[tokio::test]
async fn a_union_is_described_in_the_type_its_rows_come_in() {
    // A BIGINT branch and a DOUBLE branch: the rows are DOUBLEs (1.0 and 2.5), and so must
    // the column be described, or a JDBC client reads 2.5 as a BIGINT.
    let engine = engine().await;
    let s = open(&engine);
    let op = started(&engine, &s, "SELECT 1 AS v UNION ALL SELECT 2.5D").await;
    assert_eq!(op.wait_until_done().await.state, OpState::Finished);
    let schema = op.schema().unwrap();
    assert_eq!(schema.field(0).name(), "v");
    assert_eq!(schema.field(0).data_type(), &DataType::Float64);
    let fetched = fetch_all(&op, 10).await;
    for batch in fetched.iter().flat_map(|f| &f.batches) {
        assert_eq!(batch.schema().field(0).data_type(), &DataType::Float64);
    }
}
