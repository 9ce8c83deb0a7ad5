//! Case 3: one large result (an id, a string and a double per row) fetched whole, as a JDBC
//! client does: rows/s and MB/s through kumiho and direct, and their ratio.

use std::time::Instant;

use crate::cases::{Sizes, Targets, FETCH_SIZE};
use crate::error::{BenchError, Result};
use crate::hs2::{Session, Target};
use crate::report::{Goal, Report};
use crate::stats::median;

/// Issue #5: throughput through kumiho is at least this share of the direct throughput.
pub const RATIO_TARGET: f64 = 0.90;

/// The result: `rows` rows of a BIGINT, a STRING of 10 to 16 characters and a DOUBLE,
/// computed by the engine (no table to load).
pub fn query(rows: u64) -> String {
    format!(
        "SELECT value AS id, concat('customer-', CAST(value AS VARCHAR)) AS name, \
         CAST(value AS DOUBLE) * 0.25 AS amount FROM generate_series(1, {rows})"
    )
}

/// Throughput of one target: rows/s and MB/s (median of the runs).
pub struct Throughput {
    pub rows_per_second: f64,
    pub megabytes_per_second: f64,
}

pub async fn run(targets: &Targets, sizes: &Sizes, report: &mut Report) -> Result<()> {
    let case = format!("3. large result, {} rows", sizes.large_rows);
    let sql = query(sizes.large_rows);
    let [kumiho, direct] =
        compare(targets.both(), &sql, sizes.large_rows, sizes.large_runs).await?;
    record(
        report,
        &case,
        &targets.kumiho.name,
        &targets.engine.name,
        &kumiho,
        &direct,
    );
    Ok(())
}

/// Runs `sql` on each target `runs` times (after one unmeasured run), alternating.
pub async fn compare(
    targets: [&Target; 2],
    sql: &str,
    expected_rows: u64,
    runs: usize,
) -> Result<[Throughput; 2]> {
    let mut sessions = Vec::new();
    for target in targets {
        let mut session = target.open_session().await?;
        fetch(&mut session, sql, expected_rows).await?;
        sessions.push(session);
    }
    let mut rows_per_second = [Vec::new(), Vec::new()];
    let mut megabytes_per_second = [Vec::new(), Vec::new()];
    for _ in 0..runs {
        for (i, session) in sessions.iter_mut().enumerate() {
            let started = Instant::now();
            let bytes = fetch(session, sql, expected_rows).await?;
            let seconds = started.elapsed().as_secs_f64();
            rows_per_second[i].push(expected_rows as f64 / seconds);
            megabytes_per_second[i].push(bytes as f64 / 1e6 / seconds);
        }
    }
    for session in sessions {
        session.close().await?;
    }
    let [r0, r1] = rows_per_second;
    let [m0, m1] = megabytes_per_second;
    Ok([
        Throughput {
            rows_per_second: median(r0),
            megabytes_per_second: median(m0),
        },
        Throughput {
            rows_per_second: median(r1),
            megabytes_per_second: median(m1),
        },
    ])
}

/// Runs the statement and fetches every row; returns the bytes received.
async fn fetch(session: &mut Session, sql: &str, expected_rows: u64) -> Result<usize> {
    let batch = session.run(sql, FETCH_SIZE).await?;
    if batch.rows as u64 != expected_rows {
        return Err(BenchError::Refused {
            rpc: "FetchResults",
            target: "large result".to_owned(),
            message: format!("fetched {} rows, expected {expected_rows}", batch.rows),
        });
    }
    Ok(batch.bytes)
}

/// Reports both throughputs and the ratio against [`RATIO_TARGET`] (shared with case 7).
pub fn record(
    report: &mut Report,
    case: &str,
    through: &str,
    direct_name: &str,
    through_figures: &Throughput,
    direct_figures: &Throughput,
) {
    for (name, t) in [(through, through_figures), (direct_name, direct_figures)] {
        report.add(
            case,
            &format!("rows/s, {name}"),
            t.rows_per_second,
            "rows/s",
            None,
        );
        report.add(
            case,
            &format!("MB/s, {name}"),
            t.megabytes_per_second,
            "MB/s",
            None,
        );
    }
    report.add(
        case,
        &format!("throughput ratio {through} / {direct_name}"),
        through_figures.rows_per_second / direct_figures.rows_per_second,
        "x",
        Some(Goal::AtLeast(RATIO_TARGET)),
    );
}
