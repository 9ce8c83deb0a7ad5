//! Case 6: a session that finds no engine running: how fast OpenSession answers (the launch
//! runs behind it), and how long until its first statement returns its first row.
//!
//! Each start asks for a CONNECTION-level engine, so that every session launches an engine of
//! its own and that engine stops when the session closes: every start is cold.

use std::time::Instant;

use crate::cases::{ms, Sizes, FETCH_SIZE};
use crate::error::{BenchError, Result};
use crate::hs2::Target;
use crate::report::{Goal, Report};
use crate::stats::Samples;

const CASE: &str = "6. cold start, no engine running";
/// Issue #5: OpenSession reply p99 with no engine, in milliseconds.
pub const OPEN_P99_TARGET_MS: f64 = 5.0;
/// Issue #5: DataFusion cold start to the first row, in milliseconds.
pub const FIRST_ROW_TARGET_MS: f64 = 1000.0;

pub async fn run(kumiho: &Target, sizes: &Sizes, report: &mut Report) -> Result<()> {
    let target = kumiho
        .clone()
        .with_conf("kyuubi.engine.share.level", "CONNECTION");
    let mut open = Samples::with_capacity(sizes.cold_starts);
    let mut first_row = Samples::with_capacity(sizes.cold_starts);
    for _ in 0..sizes.cold_starts {
        let mut connection = target.connect().await?;
        let started = Instant::now();
        let (handle, _) = connection.open_session(&target).await?;
        open.push(started.elapsed());
        let (operation, _) = connection.execute(&handle, "SELECT 1").await?;
        connection.result_metadata(&operation).await?;
        let batch = connection.fetch(&operation, FETCH_SIZE).await?;
        first_row.push(started.elapsed());
        if batch.rows != 1 {
            return Err(BenchError::Refused {
                rpc: "FetchResults",
                target: target.name.clone(),
                message: format!("SELECT 1 on a cold engine returned {} rows", batch.rows),
            });
        }
        connection.close_operation(&operation).await?;
        connection.close_session(&handle).await?;
    }
    report.add(CASE, "OpenSession reply p50", ms(open.p50()), "ms", None);
    report.add(
        CASE,
        "OpenSession reply p99",
        ms(open.p99()),
        "ms",
        Some(Goal::AtMost(OPEN_P99_TARGET_MS)),
    );
    report.add(
        CASE,
        "OpenSession to first row p50",
        ms(first_row.p50()),
        "ms",
        Some(Goal::AtMost(FIRST_ROW_TARGET_MS)),
    );
    report.add(
        CASE,
        "OpenSession to first row p99",
        ms(first_row.p99()),
        "ms",
        None,
    );
    Ok(())
}
