//! Every expected value and type is Spark 4.3's (`spark.sql.ansi.enabled=false`).

use crate::test_util::{engine, open, value_rows};

/// The rows of `sql`, each cell as beeline shows it.
async fn rows(sql: &str) -> Vec<Vec<String>> {
    let engine = engine().await;
    let session = open(&engine);
    value_rows(&engine, &session, sql).await
}

#[tokio::test]
async fn an_integer_literal_is_an_int_when_it_fits_one() {
    assert_eq!(
        rows(
            "SELECT typeof(1), typeof(-2147483648), typeof(2147483648), typeof(1L), \
             typeof(5 % 2), typeof(1 div 2), typeof(sum(1)), typeof(max(1))"
        )
        .await,
        [["int", "int", "bigint", "bigint", "int", "bigint", "bigint", "int"]]
    );
    // An INT's arithmetic wraps, as Spark's does outside ANSI mode.
    assert_eq!(
        rows("SELECT 2147483647 + 1, 100000 * 100000, 2147483647 + 1L").await,
        [["-2147483648", "1410065408", "2147483648"]]
    );
}

#[tokio::test]
async fn an_int_column_beside_a_literal_stays_an_int() {
    assert_eq!(
        rows(
            "SELECT typeof(id + 1), typeof(coalesce(id, 0)), typeof(nvl(id, -1)), \
             typeof(if(id > 1, 1, 0)), typeof(CASE WHEN id > 1 THEN 1 ELSE 0 END), \
             typeof(sum(id + 1)), typeof(array(1, 2)), typeof(map(1, 'a')), \
             typeof(coalesce(1, 2L)) \
             FROM (SELECT CAST(1 AS INT) AS id) GROUP BY id"
        )
        .await,
        [[
            "int",
            "int",
            "int",
            "int",
            "int",
            "bigint",
            "array<int>",
            "map<int,string>",
            "bigint"
        ]]
    );
    assert_eq!(
        rows(
            "SELECT lag(x, 1, 0) OVER (ORDER BY x), typeof(lag(x, 1, 0) OVER (ORDER BY x)), \
             ntile(2) OVER (ORDER BY x) FROM VALUES (1), (2) AS t(x) ORDER BY x"
        )
        .await,
        [["0", "int", "1"], ["1", "int", "2"]]
    );
    assert_eq!(
        rows(
            "SELECT typeof(transform(array(1, 2), x -> x + 1)), \
             transform(array(1, 2), x -> x + 1)"
        )
        .await,
        [["array<int>", "[2, 3]"]]
    );
}

#[tokio::test]
async fn unions_and_values_lists_take_the_type_every_row_fits() {
    assert_eq!(
        rows("SELECT n, typeof(n) FROM (SELECT 1 AS n UNION SELECT 2) t ORDER BY n").await,
        [["1", "int"], ["2", "int"]]
    );
    assert_eq!(
        rows("SELECT n, typeof(n) FROM (SELECT 1 AS n UNION ALL SELECT 3000000000) t ORDER BY n")
            .await,
        [["1", "bigint"], ["3000000000", "bigint"]]
    );
    assert_eq!(
        rows("SELECT typeof(a), typeof(b) FROM VALUES (1, 3000000000), (NULL, 1) AS t(a, b)").await,
        [["int", "bigint"], ["int", "bigint"]]
    );
    // `aggregate`'s start, and so its accumulator and result (Spark 4.3: int, wrapping).
    assert_eq!(
        rows(
            "SELECT typeof(aggregate(array(1, 2, 3), 0, (acc, x) -> acc + x)), \
             aggregate(array(2147483647, 1), 0, (acc, x) -> acc + x), \
             typeof(aggregate(array(1L, 2L), 0, (acc, x) -> acc + x))"
        )
        .await,
        [["int", "-2147483648", "bigint"]]
    );
    // Values that are expressions, arrays and structs of literals alike; a cast the query
    // wrote stays (Spark 4.3's types).
    assert_eq!(
        rows(
            "SELECT typeof(arr), typeof(e), typeof(s), typeof(c), typeof(m), arr FROM VALUES \
             (array(10, 20), 1 + 1, named_struct('a', 1), CAST(1 AS BIGINT), map(1, 'a')), \
             (array(), 2, named_struct('a', 2), 2, map(2, 'b')) AS t(arr, e, s, c, m)"
        )
        .await,
        [
            [
                "array<int>",
                "int",
                "struct<a:int>",
                "bigint",
                "map<int,string>",
                "[10, 20]"
            ],
            [
                "array<int>",
                "int",
                "struct<a:int>",
                "bigint",
                "map<int,string>",
                "[]"
            ]
        ]
    );
    // A subquery reading an outer column that was a literal.
    assert_eq!(
        rows(
            "SELECT e.id, (SELECT count(*) FROM VALUES (1), (2), (2) AS s(k) WHERE s.k = e.id) \
             FROM (SELECT 2 AS id) e"
        )
        .await,
        [["2", "2"]]
    );
}

#[tokio::test]
async fn a_string_beside_an_int_literal_is_read_as_an_int() {
    assert_eq!(
        rows("SELECT map(1, 'a')['1'], map(1, 'a')['x'], '9999999999' = 1, '10' = 10").await,
        [["a", "NULL", "NULL", "true"]]
    );
}

#[tokio::test]
async fn tables_are_created_with_the_ints_and_inserts_keep_the_tables_types() {
    let engine = engine().await;
    let session = open(&engine);
    for sql in [
        "CREATE TABLE ints AS SELECT 1 AS a, CAST(2 AS INT) + 1 AS b, 3000000000 AS c",
        "CREATE TABLE longs (x BIGINT, y SMALLINT)",
        "INSERT INTO longs VALUES (1, 2), (3000000000, 3)",
        "INSERT INTO longs SELECT 4, 5",
    ] {
        value_rows(&engine, &session, sql).await;
    }
    assert_eq!(
        value_rows(
            &engine,
            &session,
            "SELECT typeof(a), typeof(b), typeof(c) FROM ints"
        )
        .await,
        [["int", "int", "bigint"]]
    );
    assert_eq!(
        value_rows(
            &engine,
            &session,
            "SELECT x, typeof(x), y, typeof(y) FROM longs ORDER BY x"
        )
        .await,
        [
            ["1", "bigint", "2", "smallint"],
            ["4", "bigint", "5", "smallint"],
            ["3000000000", "bigint", "3", "smallint"]
        ]
    );
}

#[tokio::test]
async fn warehouse_tables_and_views_record_the_types_their_rows_have() {
    let dir = tempfile::tempdir().unwrap();
    let engine = crate::warehouse::tests::engine_at(dir.path()).await;
    let session = open(&engine);
    for sql in [
        "CREATE TABLE made STORED AS PARQUET AS SELECT 1 AS a, CAST(2 AS INT) + 1 AS b, \
         3000000000 AS c",
        "CREATE VIEW shown AS SELECT a * 2 AS d, 1 AS e FROM made",
        "CREATE TEMPORARY VIEW mine AS SELECT 1 AS f",
        "INSERT INTO made VALUES (4, 5, 6)",
    ] {
        crate::warehouse::tests::ok(&engine, &session, sql).await;
    }
    for (table, columns) in [
        ("made", vec![["a", "int"], ["b", "int"], ["c", "bigint"]]),
        ("shown", vec![["d", "int"], ["e", "int"]]),
        ("mine", vec![["f", "int"]]),
    ] {
        let described = value_rows(&engine, &session, &format!("DESCRIBE {table}")).await;
        let described: Vec<[&str; 2]> = described
            .iter()
            .map(|row| [row[0].as_str(), row[1].as_str()])
            .collect();
        assert_eq!(described, columns, "{table}");
    }
    assert_eq!(
        value_rows(
            &engine,
            &session,
            "SELECT d, typeof(d) FROM shown ORDER BY d"
        )
        .await,
        [["2", "int"], ["8", "int"]]
    );
}

#[tokio::test]
async fn a_grouping_sets_keys_are_ints_and_grouping_still_finds_them() {
    let engine = engine().await;
    let session = open(&engine);
    let grouped = |sql: &'static str| {
        let (engine, session) = (&engine, &session);
        async move { value_rows(engine, session, sql).await }
    };
    assert_eq!(
        grouped(
            "SELECT k % 2 AS parity, typeof(k % 2), count(*) FROM VALUES (1), (2), (3) AS t(k) \
             GROUP BY ROLLUP(k % 2) ORDER BY parity"
        )
        .await,
        [["NULL", "int", "3"], ["0", "int", "1"], ["1", "int", "2"]]
    );
    // grouping() names the key as the set does; such an aggregate keeps its BIGINTs.
    assert_eq!(
        grouped(
            "SELECT k % 2 AS parity, grouping(k % 2), count(*) FROM VALUES (1), (2), (3) AS t(k) \
             GROUP BY CUBE(k % 2) HAVING count(*) > 1 ORDER BY parity"
        )
        .await,
        [["NULL", "1", "3"], ["1", "0", "2"]]
    );
}
