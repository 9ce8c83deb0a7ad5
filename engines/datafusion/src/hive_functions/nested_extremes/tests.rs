//! `max` and `min` of structs and arrays, each expected value as pyspark 4.3 (local,
//! without ANSI mode) answers the same SQL.

use crate::test_util::{engine, open, value_rows};

/// Spark's test table `emp`: Alice 120000.0, bob 95000.5, Carol 70000.0, Eve NULL.
const EMP: &str = "CREATE TABLE emp AS SELECT * FROM (SELECT 1 AS id, 'Alice' AS name, \
                   120000.0D AS salary UNION ALL SELECT 2, 'bob', 95000.5 \
                   UNION ALL SELECT 3, 'Carol', 70000.0 UNION ALL SELECT 5, 'Eve', NULL) x";

/// The rows of queries run in turn in one session, with `emp`.
async fn rows(sql: &str) -> Vec<Vec<String>> {
    let engine = engine().await;
    let session = open(&engine);
    value_rows(&engine, &session, EMP).await;
    value_rows(&engine, &session, sql).await
}

#[tokio::test]
async fn a_struct_is_compared_field_by_field_a_null_field_smallest() {
    // Spark: Alice, Eve, {120000.0, Alice}, {NULL, Eve}.
    assert_eq!(
        rows(
            "SELECT max(struct(salary, name)).name, min(struct(salary, name)).name, \
             max(struct(salary, name)), min(struct(salary, name)) FROM emp"
        )
        .await,
        [[
            "Alice",
            "Eve",
            "{salary: 120000.0, name: Alice}",
            "{salary: NULL, name: Eve}"
        ]]
    );
    // Spark: [0, bob, bob], [1, Alice, Eve].
    assert_eq!(
        rows(
            "SELECT id % 2 AS g, max(struct(salary, name)).name, min(struct(salary, name)).name \
             FROM emp GROUP BY id % 2 ORDER BY g"
        )
        .await,
        [["0", "bob", "bob"], ["1", "Alice", "Eve"]]
    );
    // Spark: {1, b} and {NULL, a}; a NULL struct skipped: {NULL} and {NULL}.
    assert_eq!(
        rows(
            "SELECT max(s), min(s) FROM (SELECT struct(CAST(NULL AS INT), 'a') AS s \
             UNION ALL SELECT struct(1, 'b')) t"
        )
        .await,
        [["{col1: 1, col2: b}", "{col1: NULL, col2: a}"]]
    );
}

#[tokio::test]
async fn an_array_is_compared_element_by_element_a_null_element_smallest() {
    // Spark: [120000.0], [NULL], [120000.0, 1.0], [1.0, 120000.0].
    assert_eq!(
        rows(
            "SELECT max(array(salary)), min(array(salary)), max(array(salary, id)), \
             min(array(id, salary)) FROM emp"
        )
        .await,
        [["[120000.0]", "[NULL]", "[120000.0, 1.0]", "[1.0, 120000.0]"]]
    );
    // Spark: [2] and [1, NULL]; [1, 2] and [1, NULL] (a NULL array skipped).
    assert_eq!(
        rows(
            "SELECT max(a), min(a) FROM (SELECT array(1, 2) AS a UNION ALL SELECT array(1, 2, 0) \
             UNION ALL SELECT array(1, NULL) UNION ALL SELECT array(2)) t"
        )
        .await,
        [["[2]", "[1, NULL]"]]
    );
    assert_eq!(
        rows(
            "SELECT max(a), min(a) FROM (SELECT array(1, 2) AS a UNION ALL SELECT array(1, NULL) \
             UNION ALL SELECT CAST(NULL AS ARRAY<INT>)) t"
        )
        .await,
        [["[1, 2]", "[1, NULL]"]]
    );
}

#[tokio::test]
async fn over_a_window_from_the_partitions_start_or_sliding() {
    // Spark: Alice on every row.
    assert_eq!(
        rows("SELECT id, max(struct(salary, name)) OVER (ORDER BY id) AS m FROM emp ORDER BY id")
            .await,
        [
            ["1", "{salary: 120000.0, name: Alice}"],
            ["2", "{salary: 120000.0, name: Alice}"],
            ["3", "{salary: 120000.0, name: Alice}"],
            ["5", "{salary: 120000.0, name: Alice}"]
        ]
    );
    // Over a frame that slides, as well (Spark: Eve's row last, a NULL salary the smallest).
    assert_eq!(
        rows(
            "SELECT id, min(struct(salary, name)) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING \
             AND CURRENT ROW) AS m FROM emp ORDER BY id",
        )
        .await,
        [
            ["1", "{salary: 120000.0, name: Alice}"],
            ["2", "{salary: 95000.5, name: bob}"],
            ["3", "{salary: 70000.0, name: Carol}"],
            ["5", "{salary: NULL, name: Eve}"]
        ]
    );
}
