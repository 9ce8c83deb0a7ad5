//! `array_remove` and `array_contains`, each expected value as pyspark 4.3 (local, without
//! ANSI mode) answers the same SQL.

use crate::hive_functions::tests::check;
use crate::test_util::{engine, open};

#[tokio::test]
async fn array_remove_removes_every_equal_element() {
    let engine = engine().await;
    let s = open(&engine);
    // Spark: [null], [2, 3], NULL, NULL, ["b"], [], [1.0].
    check(
        &engine,
        &s,
        "SELECT array_remove(array(1, NULL, 1), 1), array_remove(array(1, 2, 1, 3, 1), 1), \
         array_remove(array(1, 2), NULL), array_remove(CAST(NULL AS ARRAY<INT>), 1), \
         array_remove(array('a', 'b', 'a'), 'a'), array_remove(array(1, 1), 1), \
         array_remove(array(CAST('NaN' AS DOUBLE), 1.0D), CAST('NaN' AS DOUBLE))",
        &["[NULL]", "[2, 3]", "NULL", "NULL", "[b]", "[]", "[1.0]"],
    )
    .await;
}

#[tokio::test]
async fn array_contains_is_null_when_a_null_element_might_match() {
    let engine = engine().await;
    let s = open(&engine);
    // Spark: NULL, true, NULL, false, NULL, true, NULL, true (Spark refuses a bare NULL
    // value; a NULL of the elements' type gives NULL).
    check(
        &engine,
        &s,
        "SELECT array_contains(array(1, 2, NULL), 3), array_contains(array(1, 2, NULL), 2), \
         array_contains(CAST(NULL AS ARRAY<INT>), 1), array_contains(array(1, 2), 3), \
         array_contains(array(CAST(NULL AS INT)), 1), \
         array_contains(array(CAST('NaN' AS DOUBLE)), CAST('NaN' AS DOUBLE)), \
         array_contains(array(1, 2), CAST(NULL AS INT)), array_contains(array(1, 2), 2.0D)",
        &[
            "NULL", "true", "NULL", "false", "NULL", "true", "NULL", "true",
        ],
    )
    .await;
}
