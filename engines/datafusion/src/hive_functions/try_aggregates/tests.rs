//! `try_sum` and `try_avg`, each expected value (and type) as pyspark 4.3 answers.

use crate::hive_functions::tests::check;
use crate::test_util::{engine, open};

#[tokio::test]
async fn try_sum_and_try_avg_are_null_where_the_sum_overflows() {
    let engine = engine().await;
    let s = open(&engine);
    let people = "VALUES (1, 100.5D, CAST(1000.25 AS DECIMAL(10,2))), \
                  (2, 80.0D, CAST(NULL AS DECIMAL(10,2))), (3, NULL, CAST(500.10 AS DECIMAL(10,2))) \
                  AS t(id, salary, bonus)";
    check(
        &engine,
        &s,
        &format!(
            "SELECT try_sum(id), try_avg(id), try_sum(salary), try_avg(salary), try_sum(bonus), \
             try_avg(bonus), typeof(try_sum(bonus)), typeof(try_avg(bonus)) FROM {people}"
        ),
        &[
            "6",
            "2.0",
            "180.5",
            "90.25",
            "1500.35",
            "750.175000",
            "decimal(20,2)",
            "decimal(14,6)",
        ],
    )
    .await;
    // Beyond a BIGINT (try_avg sums as DOUBLEs), beyond 38 digits, and no values at all.
    check(
        &engine,
        &s,
        "SELECT try_sum(x), try_avg(x) FROM VALUES (9223372036854775807), (1) AS t(x)",
        &["NULL", "4.611686018427388e18"],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT try_sum(x), try_avg(x) FROM VALUES \
         (CAST('99999999999999999999999999999999999999' AS DECIMAL(38,0))), \
         (CAST(1 AS DECIMAL(38,0))) AS t(x)",
        &["NULL", "NULL"],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT try_sum(x), try_avg(x) FROM VALUES (CAST(NULL AS INT)) AS t(x)",
        &["NULL", "NULL"],
    )
    .await;
}
