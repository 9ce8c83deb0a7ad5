//! Operations: the state machine of one statement or metadata call, its result cursor and its log.
//!
//! An operation goes PENDING → RUNNING → FINISHED, or ends in ERROR, CANCELED, TIMEDOUT or
//! CLOSED. A query is FINISHED once its first batch exists, so execution errors surface as
//! ERROR rather than in the middle of a fetch; the rest of the result stays in DataFusion's
//! stream and is pulled as the client fetches, never materialised. Cancelling, closing or
//! timing out drops the stream, which stops DataFusion's work.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dashmap::DashMap;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::dataframe::DataFrame;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::{
    displayable, execute_stream, ExecutionPlanProperties, SendableRecordBatchStream,
};
use datafusion::prelude::SessionContext;
use futures::{FutureExt, StreamExt};
use kumiho_thrift::cli::{TOperationState, TOperationType};
use kumiho_thrift::handle::HandleId;
use kumiho_thrift::status::{
    SQLSTATE_CANCELED, SQLSTATE_GENERAL, SQLSTATE_INVALID_HANDLE, SQLSTATE_SYNTAX, SQLSTATE_TIMEOUT,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::session::Session;
use crate::statement::{self, Executed, Planned};

/// Most rows one FetchResults returns, whatever the client asks: bounds the memory one
/// request can make the engine hold.
pub const MAX_FETCH_ROWS: usize = 100_000;
/// Most lines an operation log keeps; a long fetch would otherwise grow it without end.
const MAX_LOG_LINES: usize = 10_000;
/// Most lines of a plan written to the log.
const MAX_PLAN_LINES: usize = 40;

/// Where an operation is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpState {
    Pending,
    Running,
    Finished,
    Canceled,
    Closed,
    Error,
    TimedOut,
}

impl OpState {
    pub fn to_thrift(self) -> TOperationState {
        match self {
            OpState::Pending => TOperationState::PENDING_STATE,
            OpState::Running => TOperationState::RUNNING_STATE,
            OpState::Finished => TOperationState::FINISHED_STATE,
            OpState::Canceled => TOperationState::CANCELED_STATE,
            OpState::Closed => TOperationState::CLOSED_STATE,
            OpState::Error => TOperationState::ERROR_STATE,
            OpState::TimedOut => TOperationState::TIMEDOUT_STATE,
        }
    }

    /// Whether the operation still works toward its result.
    pub fn is_active(self) -> bool {
        matches!(self, OpState::Pending | OpState::Running)
    }
}

/// Why an operation or one of its calls failed, as the client will see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpError {
    pub sql_state: &'static str,
    pub message: String,
}

impl OpError {
    pub fn new(sql_state: &'static str, message: impl Into<String>) -> Self {
        Self {
            sql_state,
            message: message.into(),
        }
    }

    /// SQLSTATE 42000 for statements DataFusion could not parse or plan (the user's to
    /// fix), 42S02 among them for a table that does not exist (Hive's state, which ODBC
    /// names "base table or view not found"), HY000 for failures while running.
    pub fn from_datafusion(error: &DataFusionError) -> Self {
        let sql_state = match error.find_root() {
            DataFusionError::Plan(message) if is_missing_table(message) => SQLSTATE_NO_SUCH_TABLE,
            DataFusionError::SQL(..)
            | DataFusionError::Plan(_)
            | DataFusionError::SchemaError(..)
            | DataFusionError::NotImplemented(_) => SQLSTATE_SYNTAX,
            _ => SQLSTATE_GENERAL,
        };
        Self::new(sql_state, error.strip_backtrace())
    }
}

/// SQLSTATE of a statement naming a table that does not exist, as Hive reports it.
const SQLSTATE_NO_SUCH_TABLE: &str = "42S02";

/// Whether a planning error says a table does not exist: DataFusion words it
/// "table 'x' not found" when planning SQL and "No table named 'x'" when a table is looked
/// up by name (DESCRIBE, SHOW COLUMNS).
fn is_missing_table(message: &str) -> bool {
    (message.starts_with("table '") && message.ends_with("' not found"))
        || message.starts_with("No table named '")
}

/// What GetOperationStatus reports.
#[derive(Clone, Debug)]
pub struct OpStatus {
    pub state: OpState,
    pub error: Option<OpError>,
    /// Milliseconds since the epoch.
    pub started_ms: i64,
    pub completed_ms: Option<i64>,
    /// Rows an INSERT (or other DML) wrote.
    pub modified_rows: Option<i64>,
}

/// Rows for one FetchResults.
#[derive(Debug)]
pub struct Fetched {
    pub batches: Vec<RecordBatch>,
    /// The index of the first row of `batches` in the whole result.
    pub start_offset: i64,
    /// Whether rows may remain after these.
    pub has_more: bool,
}

impl Fetched {
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// Where the rows of a result come from, kept so that FETCH_FIRST can start over.
enum Source {
    /// A read-only query, executed again from its plan.
    Query(DataFrame),
    /// Rows computed once (commands, DDL and DML outcomes, metadata).
    Rows(Vec<RecordBatch>),
}

/// The read position in a result.
#[derive(Default)]
struct Cursor {
    source: Option<Source>,
    stream: Option<SendableRecordBatchStream>,
    /// Batches read from the stream (or slices of them) not yet returned.
    pending: VecDeque<RecordBatch>,
    /// Index of the next row to return.
    next_offset: i64,
    /// Whether the stream has ended.
    exhausted: bool,
    batches_read: u64,
    rows_read: u64,
}

impl Cursor {
    fn start(&mut self, source: Source, stream: Option<SendableRecordBatchStream>) {
        let (pending, exhausted) = match &source {
            Source::Rows(batches) => (batches.iter().cloned().collect::<VecDeque<_>>(), true),
            Source::Query(_) => (VecDeque::new(), false),
        };
        // Computed rows count as read already; a query's are counted as the stream yields.
        let batches_read = pending.len() as u64;
        let rows_read = pending.iter().map(|b| b.num_rows() as u64).sum();
        *self = Cursor {
            source: Some(source),
            stream,
            pending,
            exhausted,
            batches_read,
            rows_read,
            ..Cursor::default()
        };
    }

    /// Frees the stream and buffered rows; the operation can return nothing more.
    fn release(&mut self) {
        *self = Cursor::default();
    }
}

/// The lines an operation has logged and how far the client has read them.
#[derive(Default)]
struct OperationLog {
    lines: Vec<String>,
    /// Index of the first line FETCH_NEXT has not returned.
    next: usize,
    truncated: bool,
}

/// One operation: a statement or a metadata call, its status, result and log.
pub struct Operation {
    pub id: HandleId,
    pub session_id: HandleId,
    pub kind: TOperationType,
    status: watch::Sender<OpStatus>,
    /// Fires when the operation is cancelled, closed or timed out: work in progress stops.
    stop: CancellationToken,
    has_result_set: AtomicBool,
    /// The result's schema, known once the statement is planned. Never held across an await.
    schema: Mutex<Option<SchemaRef>>,
    /// Never held across an await.
    log: Mutex<OperationLog>,
    /// Held across awaits while a fetch pulls from the stream, hence tokio's.
    cursor: tokio::sync::Mutex<Cursor>,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl std::fmt::Debug for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operation")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("state", &self.status.borrow().state)
            .finish_non_exhaustive()
    }
}

impl Operation {
    /// A new PENDING operation of a session.
    pub fn new(session_id: HandleId, kind: TOperationType) -> Arc<Self> {
        Self::with_id(HandleId::new(), session_id, kind)
    }

    /// A new PENDING operation under a handle chosen by the caller (the gateway's).
    pub fn with_id(id: HandleId, session_id: HandleId, kind: TOperationType) -> Arc<Self> {
        let (status, _) = watch::channel(OpStatus {
            state: OpState::Pending,
            error: None,
            started_ms: now_ms(),
            completed_ms: None,
            modified_rows: None,
        });
        Arc::new(Self {
            id,
            session_id,
            kind,
            status,
            stop: CancellationToken::new(),
            has_result_set: AtomicBool::new(false),
            schema: Mutex::new(None),
            log: Mutex::new(OperationLog::default()),
            cursor: tokio::sync::Mutex::new(Cursor::default()),
        })
    }

    /// A metadata operation whose rows are ready: FINISHED at once.
    pub fn with_rows(session_id: HandleId, kind: TOperationType, batch: RecordBatch) -> Arc<Self> {
        let op = Self::new(session_id, kind);
        op.set_has_result_set(true);
        op.set_schema(batch.schema());
        op.cursor
            .try_lock()
            .expect("nobody else holds a new operation's cursor")
            .start(Source::Rows(vec![batch]), None);
        op.transition(OpState::Finished, None);
        op
    }

    pub fn status(&self) -> OpStatus {
        self.status.borrow().clone()
    }

    /// The status once the operation has left PENDING and RUNNING, or after `max`,
    /// whichever comes first: GetOperationStatus holds the call briefly instead of making
    /// the client poll again.
    pub async fn wait_for_progress(&self, max: Duration) -> OpStatus {
        let mut updates = self.status.subscribe();
        let _ = tokio::time::timeout(max, updates.wait_for(|s| !s.state.is_active())).await;
        self.status()
    }

    /// The status once the operation has left PENDING and RUNNING.
    pub async fn wait_until_done(&self) -> OpStatus {
        let mut updates = self.status.subscribe();
        let _ = updates.wait_for(|s| !s.state.is_active()).await;
        self.status()
    }

    pub fn has_result_set(&self) -> bool {
        self.has_result_set.load(Ordering::Relaxed)
    }

    pub fn set_has_result_set(&self, has: bool) {
        self.has_result_set.store(has, Ordering::Relaxed);
    }

    /// The result's columns, known once the statement is planned.
    pub fn schema(&self) -> Option<SchemaRef> {
        self.schema
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Records the result's columns (known from the plan before it runs).
    pub fn set_schema(&self, schema: SchemaRef) {
        *self.schema.lock().unwrap_or_else(|p| p.into_inner()) = Some(schema);
    }

    /// Moves to `to` if allowed: from PENDING or RUNNING anywhere; from FINISHED (whose
    /// stream may still run) to CANCELED, ERROR or CLOSED; from anything but CLOSED to
    /// CLOSED. Returns whether the state changed.
    fn transition(&self, to: OpState, error: Option<OpError>) -> bool {
        self.status.send_if_modified(|status| {
            let allowed = match status.state {
                OpState::Pending | OpState::Running => to != status.state,
                OpState::Finished => {
                    matches!(to, OpState::Canceled | OpState::Error | OpState::Closed)
                }
                OpState::Closed => false,
                _ => to == OpState::Closed,
            };
            if allowed {
                status.state = to;
                if !to.is_active() && status.completed_ms.is_none() {
                    status.completed_ms = Some(now_ms());
                }
                if error.is_some() {
                    status.error = error;
                }
            }
            allowed
        })
    }

    /// Stops the operation's work and frees its result.
    fn stop_work(self: &Arc<Self>) {
        self.stop.cancel();
        // A fetch in progress holds the cursor; it sees the stop and returns, then the
        // stream is dropped here.
        let op = Arc::clone(self);
        tokio::spawn(async move { op.cursor.lock().await.release() });
    }

    /// CancelOperation: stops the work; CANCELED unless it had already ended.
    pub fn cancel(self: &Arc<Self>) -> OpStatus {
        if self.transition(
            OpState::Canceled,
            Some(OpError::new(
                SQLSTATE_CANCELED,
                "the operation was canceled",
            )),
        ) {
            self.log("Canceled by the client");
            self.stop_work();
        }
        self.status()
    }

    /// CloseOperation: stops the work and frees everything.
    pub fn close(self: &Arc<Self>) {
        self.transition(OpState::Closed, None);
        self.stop_work();
    }

    /// Appends a line to the operation log.
    pub fn log(&self, line: impl Into<String>) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if log.lines.len() < MAX_LOG_LINES {
            log.lines.push(line.into());
        } else if !log.truncated {
            log.truncated = true;
            log.lines
                .push("(log truncated: later lines are not kept)".to_owned());
        }
    }

    /// Log lines for FetchResults(fetchType=1): FETCH_NEXT those not yet returned,
    /// FETCH_FIRST from the beginning; at most `max_rows`.
    pub fn fetch_log(&self, from_start: bool, max_rows: usize) -> Vec<String> {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if from_start {
            log.next = 0;
        }
        let start = log.next;
        let end = log.lines.len().min(start.saturating_add(max_rows.max(1)));
        log.next = end;
        log.lines[start..end].to_vec()
    }

    /// Runs a planned statement, in the context it was planned in, to FINISHED (first batch
    /// ready) or a failed state, unless cancelled or closed first; `timeout` ends it as
    /// TIMEDOUT.
    pub async fn run(
        self: Arc<Self>,
        session: Arc<Session>,
        context: SessionContext,
        planned: Planned,
        timeout: Option<Duration>,
    ) {
        if !self.transition(OpState::Running, None) {
            return;
        }
        let deadline = async {
            match timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            biased;
            _ = self.stop.cancelled() => return,
            _ = deadline => {
                let limit = timeout.unwrap_or_default().as_secs();
                let message = format!(
                    "the statement ran longer than its query timeout of {limit} s and was stopped"
                );
                if self.transition(OpState::TimedOut, Some(OpError::new(SQLSTATE_TIMEOUT, message.clone()))) {
                    self.log(message);
                    self.stop_work();
                }
                return;
            }
            outcome = AssertUnwindSafe(self.execute(&session, &context, planned)).catch_unwind() => {
                outcome.unwrap_or_else(|panic| Err(panicked(panic)))
            }
        };
        match outcome {
            Ok(()) => {
                if self.transition(OpState::Finished, None) {
                    self.log("Finished: the result is ready to fetch");
                }
            }
            Err(error) => self.fail(&error),
        }
    }

    /// Marks the operation ERROR with DataFusion's error, logging it.
    pub fn fail(self: &Arc<Self>, error: &DataFusionError) {
        let error = OpError::from_datafusion(error);
        self.log(format!("Error: {}", error.message));
        if self.transition(OpState::Error, Some(error)) {
            self.stop_work();
        }
    }

    /// Logs a plan, a line per operator.
    pub fn log_plan(&self, plan: &LogicalPlan) {
        self.log("Logical plan:");
        let text = plan.display_indent().to_string();
        for line in text.lines().take(MAX_PLAN_LINES) {
            self.log(format!("  {line}"));
        }
    }

    async fn execute(
        &self,
        session: &Session,
        context: &SessionContext,
        planned: Planned,
    ) -> Result<(), DataFusionError> {
        match planned {
            Planned::Command(command) => match statement::run_command(session, &command).await? {
                Executed::Rows(schema, batches) => self.start_rows(schema, batches).await,
                Executed::NoResult => self.start_rows(Arc::new(Schema::empty()), vec![]).await,
                Executed::Noted(lines) => {
                    for line in lines {
                        self.log(line);
                    }
                    self.start_rows(Arc::new(Schema::empty()), vec![]).await
                }
                Executed::Written(count) => {
                    self.log(format!("{count} rows affected"));
                    let count = i64::try_from(count).unwrap_or(i64::MAX);
                    self.status.send_modify(|s| s.modified_rows = Some(count));
                    self.start_rows(Arc::new(Schema::empty()), vec![]).await
                }
            },
            Planned::Plan(plan) if statement::is_side_effect(&plan) => {
                // DDL and DML run exactly once; their (tiny) outcome is kept. What they change
                // (a `SET k TO v`, a function) is the session's, never a statement's copy.
                let frame = session.context().execute_logical_plan(plan).await?;
                let schema = Arc::clone(frame.schema().inner());
                let batches = frame.collect().await?;
                if let Some(count) = dml_count(&batches) {
                    self.log(format!("{count} rows affected"));
                    self.status.send_modify(|s| s.modified_rows = Some(count));
                }
                self.start_rows(schema, batches).await
            }
            Planned::Plan(plan) => {
                let frame = context.execute_logical_plan(plan).await?;
                let frame = crate::time_zones::shown_in_session_zone(frame)?;
                let mut stream = self.open_stream(&frame).await?;
                // The executed plan's schema, not the frame's: only analysis gives a UNION
                // of a BIGINT and a DOUBLE its common type, and the rows come in that type.
                self.set_schema(stream.schema());
                self.log("Waiting for the first batch");
                let first = stream.next().await.transpose()?;
                let mut cursor = self.cursor.lock().await;
                cursor.start(Source::Query(frame), Some(stream));
                match first {
                    Some(batch) => {
                        cursor.batches_read = 1;
                        cursor.rows_read = batch.num_rows() as u64;
                        cursor.pending.push_back(batch);
                    }
                    None => cursor.exhausted = true,
                }
                Ok(())
            }
        }
    }

    async fn start_rows(
        &self,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Result<(), DataFusionError> {
        self.set_schema(schema);
        self.cursor.lock().await.start(Source::Rows(batches), None);
        Ok(())
    }

    /// Plans and starts a query's physical execution.
    async fn open_stream(
        &self,
        frame: &DataFrame,
    ) -> Result<SendableRecordBatchStream, DataFusionError> {
        let task = Arc::new(frame.task_ctx());
        let plan = frame.clone().create_physical_plan().await?;
        self.log(format!(
            "Executing the physical plan on {} partitions:",
            plan.output_partitioning().partition_count()
        ));
        let text = displayable(plan.as_ref()).indent(false).to_string();
        for line in text.lines().take(MAX_PLAN_LINES) {
            self.log(format!("  {line}"));
        }
        execute_stream(plan, task)
    }

    /// The error for a call on an operation that was stopped.
    fn stopped_error(&self) -> OpError {
        let status = self.status();
        match status.state {
            OpState::Closed => OpError::new(SQLSTATE_INVALID_HANDLE, "the operation is closed"),
            _ => status
                .error
                .unwrap_or_else(|| OpError::new(SQLSTATE_GENERAL, "the operation was stopped")),
        }
    }

    /// FetchResults: up to `max_rows` rows (at most [`MAX_FETCH_ROWS`]) from the current
    /// position, or from the first row when `from_start` (which runs a query again).
    pub async fn fetch(&self, from_start: bool, max_rows: usize) -> Result<Fetched, OpError> {
        let max_rows = max_rows.clamp(1, MAX_FETCH_ROWS);
        self.expect_finished()?;
        let mut cursor = self.cursor.lock().await;
        self.expect_finished()?;
        if from_start && cursor.next_offset > 0 {
            self.restart(&mut cursor).await?;
        }
        let start_offset = cursor.next_offset;
        let mut batches = Vec::new();
        let mut rows = 0usize;
        while rows < max_rows {
            let batch = match cursor.pending.pop_front() {
                Some(batch) => batch,
                None if cursor.exhausted => break,
                None => match self.read_batch(&mut cursor).await? {
                    Some(batch) => batch,
                    None => break,
                },
            };
            let wanted = max_rows - rows;
            if batch.num_rows() > wanted {
                cursor
                    .pending
                    .push_front(batch.slice(wanted, batch.num_rows() - wanted));
                batches.push(batch.slice(0, wanted));
                rows += wanted;
            } else {
                rows += batch.num_rows();
                if batch.num_rows() > 0 {
                    batches.push(batch);
                }
            }
        }
        if batches.is_empty() {
            // An empty page still names its columns, as HiveServer2's do.
            if let Some(schema) = self.schema() {
                batches.push(RecordBatch::new_empty(schema));
            }
        }
        cursor.next_offset += rows as i64;
        let has_more = !(cursor.exhausted && cursor.pending.is_empty());
        if rows > 0 {
            self.log(format!(
                "Fetched rows {} to {}; {} rows in {} batches read so far",
                start_offset + 1,
                cursor.next_offset,
                cursor.rows_read,
                cursor.batches_read
            ));
        }
        Ok(Fetched {
            batches,
            start_offset,
            has_more,
        })
    }

    fn expect_finished(&self) -> Result<(), OpError> {
        let status = self.status();
        match status.state {
            OpState::Finished => Ok(()),
            OpState::Pending | OpState::Running => {
                Err(OpError::new(
                    SQLSTATE_GENERAL,
                    format!(
                    "the operation is {}; fetch its results once GetOperationStatus says FINISHED",
                    if status.state == OpState::Pending { "PENDING" } else { "RUNNING" }
                ),
                ))
            }
            _ => Err(self.stopped_error()),
        }
    }

    /// Reads the next batch from the stream; `None` at its end. A failure ends the
    /// operation as ERROR.
    async fn read_batch(&self, cursor: &mut Cursor) -> Result<Option<RecordBatch>, OpError> {
        let Some(stream) = cursor.stream.as_mut() else {
            cursor.exhausted = true;
            return Ok(None);
        };
        let next = tokio::select! {
            biased;
            _ = self.stop.cancelled() => return Err(self.stopped_error()),
            next = AssertUnwindSafe(stream.next()).catch_unwind() => {
                next.unwrap_or_else(|panic| Some(Err(panicked(panic))))
            }
        };
        match next {
            Some(Ok(batch)) => {
                cursor.batches_read += 1;
                cursor.rows_read += batch.num_rows() as u64;
                Ok(Some(batch))
            }
            Some(Err(error)) => {
                cursor.release();
                let error = OpError::from_datafusion(&error);
                self.log(format!("Error: {}", error.message));
                self.transition(OpState::Error, Some(error.clone()));
                self.stop.cancel();
                Err(error)
            }
            None => {
                cursor.stream = None;
                cursor.exhausted = true;
                self.log(format!(
                    "Result complete: {} rows in {} batches",
                    cursor.rows_read, cursor.batches_read
                ));
                Ok(None)
            }
        }
    }

    /// FETCH_FIRST after rows were returned: a query runs again, computed rows are reread.
    async fn restart(&self, cursor: &mut Cursor) -> Result<(), OpError> {
        match cursor.source.take() {
            Some(Source::Query(frame)) => {
                cursor.stream = None;
                self.log("FETCH_FIRST: running the query again from the start");
                let stream = tokio::select! {
                    biased;
                    _ = self.stop.cancelled() => return Err(self.stopped_error()),
                    stream = self.open_stream(&frame) => stream,
                };
                match stream {
                    Ok(stream) => {
                        cursor.start(Source::Query(frame), Some(stream));
                        Ok(())
                    }
                    Err(error) => {
                        let error = OpError::from_datafusion(&error);
                        self.transition(OpState::Error, Some(error.clone()));
                        Err(error)
                    }
                }
            }
            Some(rows @ Source::Rows(_)) => {
                cursor.start(rows, None);
                Ok(())
            }
            None => Err(self.stopped_error()),
        }
    }
}

/// The row count a DML plan returns (one row, one `count` column), if that is what these
/// batches are.
fn dml_count(batches: &[RecordBatch]) -> Option<i64> {
    use datafusion::arrow::array::{Array, UInt64Array};
    let [batch] = batches else { return None };
    if batch.num_columns() != 1
        || batch.num_rows() != 1
        || batch.schema().field(0).name() != "count"
    {
        return None;
    }
    let counts = batch.column(0).as_any().downcast_ref::<UInt64Array>()?;
    (!counts.is_null(0)).then(|| counts.value(0) as i64)
}

/// Every open operation of the engine, by handle.
#[derive(Default)]
pub struct OperationManager {
    operations: DashMap<HandleId, Arc<Operation>>,
}

impl OperationManager {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&self, op: Arc<Operation>) {
        self.operations.insert(op.id, op);
    }

    /// Inserts an operation unless one has its handle already; `false` then.
    pub fn insert_new(&self, op: Arc<Operation>) -> bool {
        match self.operations.entry(op.id) {
            dashmap::Entry::Occupied(_) => false,
            dashmap::Entry::Vacant(slot) => {
                slot.insert(op);
                true
            }
        }
    }

    pub fn get(&self, id: &HandleId) -> Option<Arc<Operation>> {
        self.operations
            .get(id)
            .map(|entry| Arc::clone(entry.value()))
    }

    /// Removes and closes an operation; `None` if it was not open.
    pub fn close(&self, id: &HandleId) -> Option<Arc<Operation>> {
        let (_, op) = self.operations.remove(id)?;
        op.close();
        Some(op)
    }

    pub fn len(&self) -> usize {
        self.operations.len()
    }

    pub fn is_empty(&self) -> bool {
        self.operations.is_empty()
    }
}

/// The error of a statement whose work panicked: the engine's fault, not the statement's.
/// The operation fails with it and the engine goes on serving; before, the client waited
/// for an answer that never came.
fn panicked(panic: Box<dyn std::any::Any + Send>) -> DataFusionError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    tracing::error!(%message, "a statement's work panicked");
    DataFusionError::Internal(format!(
        "the engine failed on this statement ({message}); this is a bug in the engine, please \
         report it with the statement"
    ))
}

#[cfg(test)]
mod tests;
