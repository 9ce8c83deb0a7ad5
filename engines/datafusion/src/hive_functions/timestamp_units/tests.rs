//! `timestampadd` and `timestampdiff`, each expected value as pyspark 4.3 answers the same
//! SQL.

use crate::hive_functions::tests::check;
use crate::test_util::{engine, error, open};

#[tokio::test]
async fn timestampadd_adds_units_keeping_the_day_where_the_month_has_it() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT timestampadd(HOUR, 3, TIMESTAMP '2024-01-01 22:00:00'), \
         timestampadd(MONTH, 1, TIMESTAMP '2024-01-31 10:00:00'), \
         timestampadd(YEAR, -1, DATE '2024-02-29'), \
         timestampadd(QUARTER, 2, TIMESTAMP '2024-08-31 00:00:00'), \
         timestampadd(DAY, -40, TIMESTAMP '2024-03-01 00:00:00'), \
         timestampadd(MICROSECOND, 1500, TIMESTAMP '2024-01-01 00:00:00'), \
         timestampadd(WEEK, 1, '2024-01-01 12:00:00'), \
         dateadd(MINUTE, 90, TIMESTAMP '2024-01-01 00:00:00'), \
         timestampadd(DAY, CAST(NULL AS INT), TIMESTAMP '2024-01-01 00:00:00')",
        &[
            "2024-01-02T01:00:00",
            "2024-02-29T10:00:00",
            "2023-02-28T00:00:00",
            "2025-02-28T00:00:00",
            "2024-01-21T00:00:00",
            "2024-01-01T00:00:00.001500",
            "2024-01-08T12:00:00",
            "2024-01-01T01:30:00",
            "NULL",
        ],
    )
    .await;
}

#[tokio::test]
async fn timestampdiff_counts_whole_units_as_java_does() {
    let engine = engine().await;
    let s = open(&engine);
    // A month counts once its day and time are reached; a negative span counts down.
    check(
        &engine,
        &s,
        "SELECT timestampdiff(DAY, TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-03 12:00:00'), \
         timestampdiff(MONTH, TIMESTAMP '2024-01-31 00:00:00', TIMESTAMP '2024-02-29 00:00:00'), \
         timestampdiff(MONTH, TIMESTAMP '2024-01-15 10:00:00', TIMESTAMP '2024-03-15 09:00:00'), \
         timestampdiff(YEAR, DATE '2020-02-29', DATE '2024-02-28'), \
         timestampdiff(HOUR, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-01 00:30:00'), \
         timestampdiff(WEEK, DATE '2024-01-01', DATE '2024-01-20'), \
         timestampdiff(QUARTER, DATE '2024-01-01', DATE '2024-12-31'), \
         timestampdiff(SECOND, '2024-01-01 00:00:00', '2024-01-01 00:01:30.9'), \
         datediff(DAY, DATE '2024-01-01', DATE '2024-03-01'), \
         date_diff(MONTH, DATE '2024-01-01', DATE '2024-03-01'), \
         datediff('2024-03-01', '2024-01-01'), \
         timestampdiff(MONTH, TIMESTAMP '2024-03-31 00:00:00', TIMESTAMP '2024-02-29 00:00:00')",
        &["2", "0", "1", "3", "-23", "2", "3", "90", "60", "2", "60", "-1"],
    )
    .await;
    let refused = error(
        &engine,
        &s,
        "SELECT timestampdiff('FORTNIGHT', DATE '2024-01-01', DATE '2024-02-01')",
    )
    .await
    .to_string();
    assert!(
        refused.contains("timestampdiff: 'FORTNIGHT' is not a unit; the units are YEAR"),
        "{refused}"
    );
}
