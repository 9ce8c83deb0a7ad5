//! Case 7 (`--spark`): the Spark Thrift Server alone and through kumiho (`SELECT 1` cycle, a
//! large fetch), and TPC-H Q1 and Q6 on the DataFusion engine and on the Spark Thrift Server,
//! both reading the same Parquet files.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cases::{large_fetch, ms, select_one, Sizes};
use crate::error::Result;
use crate::hs2::{Session, Target};
use crate::report::Report;
use crate::stats::median;

const CASE_CYCLE: &str = "7a. Spark: SELECT 1 cycle";
const CASE_TPCH: &str = "7c. TPC-H on Parquet: DataFusion engine vs Spark Thrift Server";
/// The table both engines read, registered over the same Parquet directory.
const LINEITEM: &str = "lineitem_parquet";

/// TPC-H Q1 and Q6 with the specification's default substitution parameters (the end-to-end
/// tests' text, tests/harness/tpch.py, on the Parquet table).
const Q1: &str = "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, \
    sum(l_extendedprice) AS sum_base_price, sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, \
    sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, avg(l_quantity) AS avg_qty, \
    avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, count(*) AS count_order \
    FROM lineitem_parquet WHERE l_shipdate <= DATE '1998-09-02' \
    GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus";
const Q6: &str = "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem_parquet \
    WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
    AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

/// The large result on Spark: the same columns as case 3's.
fn spark_large_query(rows: u64) -> String {
    format!(
        "SELECT id, concat('customer-', CAST(id AS STRING)) AS name, \
         CAST(id AS DOUBLE) * 0.25 AS amount FROM range(1, {})",
        rows + 1
    )
}

/// `SELECT 1` cycle and the large fetch, Spark Thrift Server through kumiho vs alone.
pub async fn through_kumiho(
    kumiho_spark: &Target,
    spark: &Target,
    sizes: &Sizes,
    report: &mut Report,
) -> Result<()> {
    let (through, direct) =
        select_one::compare(kumiho_spark, spark, sizes.runs, sizes.spark_cycles).await?;
    select_one::record(
        report,
        CASE_CYCLE,
        &kumiho_spark.name,
        &spark.name,
        &through,
        &direct,
    );

    let case = format!("7b. Spark: large result, {} rows", sizes.spark_rows);
    let sql = spark_large_query(sizes.spark_rows);
    let [through, direct] = large_fetch::compare(
        [kumiho_spark, spark],
        &sql,
        sizes.spark_rows,
        sizes.large_runs,
    )
    .await?;
    large_fetch::record(
        report,
        &case,
        &kumiho_spark.name,
        &spark.name,
        &through,
        &direct,
    );
    Ok(())
}

/// TPC-H Q1 and Q6 on both engines, directly: the engines compared, not the gateway. The
/// DataFusion engine writes its TPC-H `lineitem` to Parquet first, and both read that.
pub async fn tpch(
    engine: &Target,
    spark: &Target,
    data_dir: &Path,
    sizes: &Sizes,
    report: &mut Report,
) -> Result<()> {
    let directory = data_dir.join("lineitem");
    let mut datafusion = engine.open_session().await?;
    if !directory.exists() {
        let copy = format!(
            "COPY (SELECT * FROM tpch.lineitem) TO '{}/' STORED AS PARQUET",
            directory.display()
        );
        update(&mut datafusion, &copy).await?;
    }
    update(
        &mut datafusion,
        &format!(
            "CREATE EXTERNAL TABLE IF NOT EXISTS {LINEITEM} STORED AS PARQUET LOCATION '{}/'",
            directory.display()
        ),
    )
    .await?;
    let mut spark_session = spark.open_session().await?;
    update(
        &mut spark_session,
        &format!(
            "CREATE TABLE IF NOT EXISTS {LINEITEM} USING parquet LOCATION '{}'",
            directory.display()
        ),
    )
    .await?;
    let mut sessions = [(engine, datafusion), (spark, spark_session)];
    for (query_name, sql) in [("Q1", Q1), ("Q6", Q6)] {
        let mut medians = Vec::new();
        for (target, session) in sessions.iter_mut() {
            let latency = query_latency(session, sql, sizes.large_runs).await?;
            report.add(
                CASE_TPCH,
                &format!(
                    "{query_name} at scale {}, {}",
                    sizes.tpch_scale, target.name
                ),
                ms(latency),
                "ms",
                None,
            );
            medians.push(latency.as_secs_f64());
        }
        report.add(
            CASE_TPCH,
            &format!("{query_name}: {} time / {} time", spark.name, engine.name),
            medians[1] / medians[0],
            "x",
            None,
        );
    }
    for (_, session) in sessions {
        session.close().await?;
    }
    Ok(())
}

/// Median latency of `runs` executions (after one unmeasured), fetching the whole result.
async fn query_latency(session: &mut Session, sql: &str, runs: usize) -> Result<Duration> {
    session.run(sql, crate::cases::FETCH_SIZE).await?;
    let mut seconds = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        session.run(sql, crate::cases::FETCH_SIZE).await?;
        seconds.push(started.elapsed().as_secs_f64());
    }
    Ok(Duration::from_secs_f64(median(seconds)))
}

/// A statement without a result set (DDL, COPY): execute, wait, close.
async fn update(session: &mut Session, sql: &str) -> Result<()> {
    let (operation, _) = session.connection.execute(&session.handle, sql).await?;
    session.connection.close_operation(&operation).await
}
