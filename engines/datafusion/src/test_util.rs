//! Helpers for the crate's tests: an engine with small demo data, and running statements
//! as a client would (execute, fetch to the end, close).

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::logical_expr::Accumulator;
use kumiho_thrift::handle::HandleId;

use crate::config::EngineConfig;
use crate::engine::{Engine, EngineError};
use crate::session::Session;

/// An engine with TPC-H at scale 0.01 and no configured tables.
pub async fn engine() -> Engine {
    let config = EngineConfig {
        tpch_scale: 0.01,
        ..EngineConfig::default()
    };
    Engine::start(&config).await.expect("the engine starts")
}

/// A session of `alice` with no configuration.
pub fn open(engine: &Engine) -> Arc<Session> {
    engine
        .open_session("alice".into(), 1, &BTreeMap::new())
        .expect("the session opens")
}

/// Runs a statement synchronously and fetches every row, 1000 at a time.
pub async fn run(
    engine: &Engine,
    session: &Session,
    sql: &str,
) -> Result<Vec<RecordBatch>, EngineError> {
    run_with(engine, session, sql, &BTreeMap::new()).await
}

/// [`run`] with the statement's `confOverlay`.
pub async fn run_with(
    engine: &Engine,
    session: &Session,
    sql: &str,
    overlay: &BTreeMap<String, String>,
) -> Result<Vec<RecordBatch>, EngineError> {
    let op = engine
        .execute_as(HandleId::new(), &session.id, sql, overlay, false, None)
        .await?;
    let mut batches = Vec::new();
    loop {
        let fetched = op
            .fetch(false, 1000)
            .await
            .map_err(EngineError::Operation)?;
        let done = fetched.num_rows() == 0;
        batches.extend(fetched.batches);
        if done {
            break;
        }
    }
    engine.close_operation(&op.id)?;
    Ok(batches)
}

/// The operation log of a statement that succeeds, as a client following it reads it.
pub async fn operation_log(engine: &Engine, session: &Session, sql: &str) -> String {
    let op = engine
        .execute_as(
            HandleId::new(),
            &session.id,
            sql,
            &BTreeMap::new(),
            false,
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    op.wait_until_done().await;
    op.fetch_log(true, 100).join("\n")
}

/// The rows of a statement as lines of a table, as beeline would print them.
pub async fn lines(engine: &Engine, session: &Session, sql: &str) -> Vec<String> {
    let batches = run(engine, session, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql} failed: {e}"));
    pretty_format_batches(&batches)
        .unwrap()
        .to_string()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The rows of a statement, each value as beeline prints it (NULL as `NULL`).
pub async fn value_rows(engine: &Engine, session: &Session, sql: &str) -> Vec<Vec<String>> {
    let batches = run(engine, session, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql} failed: {e}"));
    formatted_rows(&batches)
}

/// The rows of batches, each value as beeline prints it (NULL as `NULL`).
pub fn formatted_rows(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in batches {
        let formatters: Vec<_> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for i in 0..batch.num_rows() {
            rows.push(formatters.iter().map(|f| f.value(i).to_string()).collect());
        }
    }
    rows
}

/// The error message of a statement that must fail.
pub async fn error(engine: &Engine, session: &Session, sql: &str) -> EngineError {
    match run(engine, session, sql).await {
        Ok(_) => panic!("{sql} succeeded"),
        Err(error) => error,
    }
}

/// Each statement fails with an error that says what is beside it.
pub async fn refusals(engine: &Engine, session: &Session, cases: &[(&str, &str)]) {
    for (sql, says) in cases {
        let message = error(engine, session, sql).await.to_string();
        assert!(message.contains(says), "{sql}: {message}");
    }
}

/// Merges `partial`'s state into `total`, as the final step of a two-phase aggregation does
/// with each partition's partial result.
pub fn merge_partial(total: &mut dyn Accumulator, partial: &mut dyn Accumulator) {
    let state: Vec<ArrayRef> = partial
        .state()
        .unwrap()
        .iter()
        .map(|value| value.to_array().unwrap())
        .collect();
    total.merge_batch(&state).unwrap();
}
