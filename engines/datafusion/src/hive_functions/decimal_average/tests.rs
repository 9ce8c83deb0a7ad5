//! `avg` of decimals, each answer (value and type) as Spark 4 gives it without ANSI mode.

use std::collections::BTreeMap;

use datafusion::arrow::datatypes::DataType;

use crate::hive_functions::tests::rows_with;
use crate::test_util::{engine, open};

/// A query's rows, each value as beeline prints it, and the columns' types.
async fn rows(sql: &str) -> (Vec<Vec<String>>, Vec<DataType>) {
    let engine = engine().await;
    let session = open(&engine);
    rows_with(&engine, &session, sql, &BTreeMap::new()).await
}

fn decimal(precision: u8, scale: i8) -> DataType {
    DataType::Decimal128(precision, scale)
}

/// Three prices, their mean 94.196666...
const PRICES: &str = "(VALUES (CAST(94.12 AS DECIMAL(10,2))), (CAST(94.23 AS DECIMAL(10,2))), \
                      (CAST(94.24 AS DECIMAL(10,2))))";

#[tokio::test]
async fn the_mean_of_decimals_is_rounded_half_up_with_four_more_decimals() {
    let (values, types) = rows(&format!(
        "SELECT avg(x), avg(-x), avg(DISTINCT x) FROM {PRICES} AS v(x)"
    ))
    .await;
    assert_eq!(values, [["94.196667", "-94.196667", "94.196667"]]);
    assert_eq!(types, vec![decimal(14, 6); 3]);
    // 1/32 is 0.03125: a half, rounded away from zero.
    let (values, types) = rows(
        "SELECT avg(CASE WHEN id = 0 THEN CAST(1 AS DECIMAL(1,0)) ELSE CAST(0 AS DECIMAL(1,0)) END), \
         avg(CASE WHEN id = 0 THEN CAST(-1 AS DECIMAL(1,0)) ELSE CAST(0 AS DECIMAL(1,0)) END) \
         FROM (SELECT value AS id FROM range(32)) AS r",
    )
    .await;
    assert_eq!(values, [["0.0313", "-0.0313"]]);
    assert_eq!(types, vec![decimal(5, 4); 2]);
}

#[tokio::test]
async fn the_result_type_is_capped_at_38_digits() {
    let (values, types) = rows(
        "SELECT avg(a), avg(b), avg(c), avg(d), avg(e), avg(i) FROM (VALUES \
         (CAST(0.001 AS DECIMAL(30,3)), CAST(1 AS DECIMAL(30,0)), CAST(1 AS DECIMAL(36,2)), \
          CAST(1 AS DECIMAL(5,0)), CAST(NULL AS DECIMAL(10,2)), 1), \
         (CAST(0.001 AS DECIMAL(30,3)), CAST(1 AS DECIMAL(30,0)), CAST(2 AS DECIMAL(36,2)), \
          CAST(2 AS DECIMAL(5,0)), CAST(NULL AS DECIMAL(10,2)), 2), \
         (CAST(0 AS DECIMAL(30,3)), CAST(0 AS DECIMAL(30,0)), CAST(NULL AS DECIMAL(36,2)), \
          CAST(2 AS DECIMAL(5,0)), CAST(NULL AS DECIMAL(10,2)), 2)) AS v(a, b, c, d, e, i)",
    )
    .await;
    assert_eq!(
        values,
        [[
            "0.0006667",
            "0.6667",
            "1.500000",
            "1.6667",
            "NULL",
            "1.6666666666666667"
        ]]
    );
    assert_eq!(
        types,
        [
            decimal(34, 7),
            decimal(34, 4),
            decimal(38, 6),
            decimal(9, 4),
            decimal(14, 6),
            DataType::Float64
        ]
    );
}

#[tokio::test]
async fn a_mean_beyond_its_type_is_null() {
    // DECIMAL(38,36) values average into DECIMAL(38,38), which cannot hold 1.5.
    let (values, types) = rows(
        "SELECT avg(x) FROM (VALUES (CAST(1 AS DECIMAL(38,36))), (CAST(2 AS DECIMAL(38,36)))) \
         AS v(x)",
    )
    .await;
    assert_eq!(values, [["NULL"]]);
    assert_eq!(types, [decimal(38, 38)]);
}

/// Five rows of `(i, x)`, one `x` NULL-free set and one with NULLs.
const SERIES: &str = "(VALUES (1, CAST(1.00 AS DECIMAL(10,2))), (2, CAST(2.00 AS DECIMAL(10,2))), \
                      (3, CAST(2.00 AS DECIMAL(10,2))), (4, CAST(-5.00 AS DECIMAL(10,2))), \
                      (5, CAST(0.01 AS DECIMAL(10,2))))";

#[tokio::test]
async fn a_window_averages_its_frame_rounded_half_up() {
    let (values, types) = rows(&format!(
        "SELECT i, avg(x) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), \
         avg(x) OVER (ORDER BY i) FROM {SERIES} AS v(i, x) ORDER BY i"
    ))
    .await;
    assert_eq!(
        values,
        [
            ["1", "1.500000", "1.000000"],
            ["2", "1.666667", "1.500000"],
            ["3", "-0.333333", "1.666667"],
            ["4", "-0.996667", "0.000000"],
            ["5", "-2.495000", "0.002000"],
        ]
    );
    assert_eq!(types[1..], [decimal(14, 6), decimal(14, 6)]);
    // A frame of NULLs alone averages to NULL.
    let (values, _) = rows(
        "SELECT avg(x) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM (VALUES \
         (1, CAST(1.00 AS DECIMAL(10,2))), (2, CAST(NULL AS DECIMAL(10,2))), \
         (3, CAST(NULL AS DECIMAL(10,2))), (4, CAST(0.01 AS DECIMAL(10,2))), \
         (5, CAST(0.02 AS DECIMAL(10,2)))) AS v(i, x) ORDER BY i",
    )
    .await;
    assert_eq!(
        values,
        [
            ["1.000000"],
            ["1.000000"],
            ["NULL"],
            ["0.010000"],
            ["0.015000"]
        ]
    );
}

#[tokio::test]
async fn each_group_of_many_averages_rounded_half_up() {
    // 500 groups of 200 rows, each x a decimal(14,6) quotient.
    let (values, types) = rows(
        "SELECT count(*), sum(a), min(a), max(a) FROM (SELECT id % 500 AS g, \
         avg(CAST(id AS DECIMAL(10,2)) / 3) AS a \
         FROM (SELECT value AS id FROM range(1, 100001)) AS r GROUP BY id % 500) AS t",
    )
    .await;
    assert_eq!(
        values,
        [[
            "500",
            "8333416.6666666650",
            "16583.6666666650",
            "16750.0000000000"
        ]]
    );
    assert_eq!(types[2..], [decimal(18, 10), decimal(18, 10)]);
    let (values, _) = rows(
        "SELECT g, avg(CAST(id AS DECIMAL(10,2)) / 3) AS a \
         FROM (SELECT value AS id, value % 500 AS g FROM range(1, 100001)) AS r \
         GROUP BY g HAVING g IN (0, 1, 499) ORDER BY g",
    )
    .await;
    assert_eq!(
        values,
        [
            ["0", "16750.0000000000"],
            ["1", "16583.6666666650"],
            ["499", "16749.6666666650"]
        ]
    );
    // Negative means among 997 groups, and the mean of all rows.
    let (values, _) = rows(
        "SELECT count(*), sum(a), min(a), max(a) FROM (SELECT id % 997 AS g, \
         avg(CAST(id - 50000 AS DECIMAL(12,3)) / 7) AS a \
         FROM (SELECT value AS id FROM range(1, 100001)) AS r GROUP BY id % 997) AS t",
    )
    .await;
    assert_eq!(
        values,
        [["997", "71.2142857157", "-49.6428571400", "49.7857142900"]]
    );
    let (values, types) = rows(
        "SELECT avg(CAST(id - 50000 AS DECIMAL(12,3)) / 7) \
         FROM (SELECT value AS id FROM range(1, 100001)) AS r",
    )
    .await;
    assert_eq!(values, [["0.0714285714"]]);
    assert_eq!(types, [decimal(19, 10)]);
}
