//! `explode_outer`, `posexplode_outer` and `inline_outer`, each expected row as pyspark 4.3
//! (local, without ANSI mode) answers the same SQL.

use crate::engine::Engine;
use crate::session::Session;
use crate::test_util::{engine, open, value_rows};

/// A session with Spark's test table `emp` (ids 1, 2, 3 and 5).
async fn with_emp() -> (Engine, std::sync::Arc<Session>) {
    let engine = engine().await;
    let session = open(&engine);
    value_rows(
        &engine,
        &session,
        "CREATE TABLE emp AS SELECT * FROM (SELECT 1 AS id, 'Alice' AS name, 120000.0D AS salary \
         UNION ALL SELECT 2, 'bob', 95000.5 UNION ALL SELECT 3, 'Carol', 70000.0 \
         UNION ALL SELECT 5, 'Eve', NULL) x",
    )
    .await;
    (engine, session)
}

/// A query's rows, each value as beeline prints it, sorted.
async fn rows(engine: &Engine, session: &Session, sql: &str) -> Vec<Vec<String>> {
    let mut rows = value_rows(engine, session, sql).await;
    rows.sort();
    rows
}

/// Rows as [`rows`] gives them, sorted alike.
fn table(rows: &[&[&str]]) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|v| (*v).to_owned()).collect())
        .collect();
    rows.sort();
    rows
}

#[tokio::test]
async fn explode_outer_gives_a_row_of_nulls_for_a_null_or_empty_array() {
    let (engine, s) = with_emp().await;
    // Spark: [1, 1], [1, 10], [2, 2], [2, 20], [3, NULL], [5, NULL].
    assert_eq!(
        rows(
            &engine,
            &s,
            "SELECT id, explode_outer(CASE WHEN id < 3 THEN array(id, id * 10) END) FROM emp"
        )
        .await,
        table(&[
            &["1", "1"],
            &["1", "10"],
            &["2", "2"],
            &["2", "20"],
            &["3", "NULL"],
            &["5", "NULL"]
        ])
    );
    // Spark: [1, 1], [1, 10], [2, NULL] (empty), [3, NULL], [5, NULL].
    assert_eq!(
        rows(
            &engine,
            &s,
            "SELECT id, explode_outer(CASE WHEN id = 1 THEN array(id, id * 10) \
             WHEN id = 2 THEN array() END) AS x FROM emp"
        )
        .await,
        table(&[
            &["1", "1"],
            &["1", "10"],
            &["2", "NULL"],
            &["3", "NULL"],
            &["5", "NULL"]
        ])
    );
    // Spark: [NULL, 1]; [1, 1], [2, 1].
    assert_eq!(
        rows(&engine, &s, "SELECT explode_outer(array()), 1").await,
        table(&[&["NULL", "1"]])
    );
    assert_eq!(
        rows(&engine, &s, "SELECT explode_outer(array(1, 2)), 1").await,
        table(&[&["1", "1"], &["2", "1"]])
    );
    // Spark: [1, 1], [1, 10], [2, 2], [2, 20], [3, NULL], [5, NULL], the column named y.
    assert_eq!(
        rows(
            &engine,
            &s,
            "SELECT id, y FROM (SELECT id, explode_outer(CASE WHEN id < 3 THEN \
             array(id, id * 10) END) AS (y) FROM emp) t"
        )
        .await,
        table(&[
            &["1", "1"],
            &["1", "10"],
            &["2", "2"],
            &["2", "20"],
            &["3", "NULL"],
            &["5", "NULL"]
        ])
    );
}

#[tokio::test]
async fn explode_outer_of_a_map_and_posexplode_outer() {
    let (engine, s) = with_emp().await;
    // Spark: [1, a, 1], [2, NULL, NULL], [3, NULL, NULL], [5, NULL, NULL].
    assert_eq!(
        rows(
            &engine,
            &s,
            "SELECT id, explode_outer(CASE WHEN id < 2 THEN map('a', id) END) FROM emp"
        )
        .await,
        table(&[
            &["1", "a", "1"],
            &["2", "NULL", "NULL"],
            &["3", "NULL", "NULL"],
            &["5", "NULL", "NULL"]
        ])
    );
    // Spark: the position NULL too: [3, NULL, NULL].
    let expected = table(&[
        &["1", "0", "1"],
        &["1", "1", "10"],
        &["2", "0", "2"],
        &["2", "1", "20"],
        &["3", "NULL", "NULL"],
        &["5", "NULL", "NULL"],
    ]);
    assert_eq!(
        rows(
            &engine,
            &s,
            "SELECT id, posexplode_outer(CASE WHEN id < 3 THEN array(id, id * 10) END) FROM emp"
        )
        .await,
        expected
    );
    assert_eq!(
        rows(
            &engine,
            &s,
            "SELECT id, p, y FROM (SELECT id, posexplode_outer(CASE WHEN id < 3 THEN \
             array(id, id * 10) END) AS (p, y) FROM emp) t"
        )
        .await,
        expected
    );
}

#[tokio::test]
async fn inline_outer_and_outer_generators_in_lateral_views() {
    let (engine, s) = with_emp().await;
    // Spark: [1, 1, Alice], [2, 2, bob], [3, NULL, NULL], [5, NULL, NULL].
    assert_eq!(
        rows(
            &engine,
            &s,
            "SELECT id, inline_outer(CASE WHEN id < 3 THEN array(struct(id AS a, name AS b)) \
             END) FROM emp"
        )
        .await,
        table(&[
            &["1", "1", "Alice"],
            &["2", "2", "bob"],
            &["3", "NULL", "NULL"],
            &["5", "NULL", "NULL"]
        ])
    );
    // Spark: [1, x], [2, y].
    assert_eq!(
        rows(
            &engine,
            &s,
            "SELECT inline_outer(array(struct(1, 'x'), struct(2, 'y')))"
        )
        .await,
        table(&[&["1", "x"], &["2", "y"]])
    );
    // Spark: [1, 1], [2, 2], [3, NULL], [5, NULL].
    assert_eq!(
        rows(
            &engine,
            &s,
            "SELECT id, x FROM emp LATERAL VIEW explode_outer(CASE WHEN id < 3 THEN array(id) \
             END) v AS x"
        )
        .await,
        table(&[&["1", "1"], &["2", "2"], &["3", "NULL"], &["5", "NULL"]])
    );
    // Spark: [1, 0, 1], [2, 0, 2], [3, NULL, NULL], [5, NULL, NULL].
    assert_eq!(
        rows(
            &engine,
            &s,
            "SELECT id, p, x FROM emp LATERAL VIEW posexplode_outer(CASE WHEN id < 3 THEN \
             array(id) END) v AS p, x"
        )
        .await,
        table(&[
            &["1", "0", "1"],
            &["2", "0", "2"],
            &["3", "NULL", "NULL"],
            &["5", "NULL", "NULL"]
        ])
    );
}
