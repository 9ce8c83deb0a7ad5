//! Spark's higher-order functions, each answer the one Spark 3.5 gives (`spark.sql` in local
//! mode, `spark.sql.ansi.enabled=false`) for the same SQL.

use crate::engine::Engine;
use crate::session::Session;
use crate::test_util::{engine, error, open, value_rows};

/// Spark's rows `(1, [1, 2, 3], 10)`, `(2, [4, NULL], 20)`, `(3, NULL, 30)`, `(4, [], 40)`
/// as `t(id, arr, n)`, for a query to read.
const T: &str = "WITH t AS (\
    SELECT 1 AS id, array(1, 2, 3) AS arr, 10 AS n \
    UNION ALL SELECT 2, array(4, NULL), 20 \
    UNION ALL SELECT 3, CAST(NULL AS ARRAY<INT>), 30 \
    UNION ALL SELECT 4, CAST(array() AS ARRAY<INT>), 40) ";

/// Asserts the one value of each `(query, value)`.
async fn check(engine: &Engine, session: &Session, cases: &[(&str, &str)]) {
    for (sql, expected) in cases {
        let rows = value_rows(engine, session, sql).await;
        assert_eq!(rows, vec![vec![expected.to_string()]], "{sql}");
    }
}

/// Asserts the rows of a query of [`T`].
async fn check_rows(engine: &Engine, session: &Session, sql: &str, expected: &[&[&str]]) {
    let sql = format!("{T}{sql}");
    let rows = value_rows(engine, session, &sql).await;
    assert_eq!(rows, expected, "{sql}");
}

#[tokio::test]
async fn transform_maps_each_element_with_its_position_and_the_rows_columns() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        &[
            ("SELECT transform(array(1, 2, 3), x -> x + 1)", "[2, 3, 4]"),
            ("SELECT transform(array(1, 2, 3), (x, i) -> x * 10 + i)", "[10, 21, 32]"),
            ("SELECT transform(CAST(NULL AS ARRAY<INT>), x -> x + 1)", "NULL"),
            ("SELECT transform(array(1, NULL, 3), x -> x IS NULL)", "[false, true, false]"),
            ("SELECT transform(array(1, 2), x -> x / 2)", "[0.5, 1.0]"),
            // Nested lambdas, the inner one reading the outer one's variable.
            (
                "SELECT transform(array(array(1, 2), array(3)), x -> transform(x, y -> y + 1))",
                "[[2, 3], [4]]",
            ),
            (
                "SELECT transform(array(array(1, 2), array(3)), x -> transform(x, y -> y + size(x)))",
                "[[3, 4], [4]]",
            ),
        ],
    )
    .await;
    // A column captured in the body; a variable named like a column hides it.
    check_rows(
        &engine,
        &session,
        "SELECT id, transform(arr, x -> x + n) FROM t ORDER BY id",
        &[
            &["1", "[11, 12, 13]"],
            &["2", "[24, NULL]"],
            &["3", "NULL"],
            &["4", "[]"],
        ],
    )
    .await;
    check_rows(
        &engine,
        &session,
        "SELECT id, transform(arr, n -> n * 2) FROM t ORDER BY id",
        &[
            &["1", "[2, 4, 6]"],
            &["2", "[8, NULL]"],
            &["3", "NULL"],
            &["4", "[]"],
        ],
    )
    .await;
}

#[tokio::test]
async fn filter_keeps_the_elements_the_predicate_is_true_for() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        &[
            ("SELECT filter(array(1, 2, 3, 4), x -> x % 2 = 0)", "[2, 4]"),
            // NULL is not true.
            ("SELECT filter(array(1, NULL, 3), x -> x > 1)", "[3]"),
            ("SELECT filter(array(5, 6, 7), (x, i) -> i > 0)", "[6, 7]"),
            ("SELECT filter(CAST(NULL AS ARRAY<INT>), x -> true)", "NULL"),
        ],
    )
    .await;
    // Spark refuses a lambda that gives no boolean.
    let number = error(&engine, &session, "SELECT filter(array(1, 2), x -> x + 1)").await;
    assert!(
        number.to_string().contains("must give a boolean"),
        "{number}"
    );
    check_rows(
        &engine,
        &session,
        "SELECT id, filter(arr, x -> x > n / 10) FROM t ORDER BY id",
        &[
            &["1", "[2, 3]"],
            &["2", "[4]"],
            &["3", "NULL"],
            &["4", "[]"],
        ],
    )
    .await;
}

#[tokio::test]
async fn exists_and_forall_follow_three_valued_logic() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        &[
            ("SELECT exists(array(1, 2, 3), x -> x > 2)", "true"),
            ("SELECT exists(array(1, NULL, 3), x -> x > 5)", "NULL"),
            ("SELECT exists(array(1, NULL, 3), x -> x > 2)", "true"),
            ("SELECT exists(array(), x -> x > 2)", "false"),
            (
                "SELECT exists(CAST(NULL AS ARRAY<INT>), x -> x > 2)",
                "NULL",
            ),
            ("SELECT forall(array(1, 2, 3), x -> x > 0)", "true"),
            ("SELECT forall(array(1, NULL, 3), x -> x > 0)", "NULL"),
            ("SELECT forall(array(1, NULL, 3), x -> x > 2)", "false"),
            ("SELECT forall(array(), x -> x > 2)", "true"),
            (
                "SELECT forall(CAST(NULL AS ARRAY<INT>), x -> x > 2)",
                "NULL",
            ),
            // EXISTS of a subquery is still one.
            (
                "SELECT count(*) FROM tpch.nation WHERE EXISTS (SELECT 1)",
                "25",
            ),
        ],
    )
    .await;
    check_rows(
        &engine,
        &session,
        "SELECT id, exists(arr, x -> x > n / 10), forall(arr, x -> x < 4) FROM t ORDER BY id",
        &[
            &["1", "true", "true"],
            &["2", "true", "false"],
            &["3", "NULL", "NULL"],
            &["4", "false", "true"],
        ],
    )
    .await;
}

#[tokio::test]
async fn aggregate_folds_each_array_from_its_start() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        &[
            (
                "SELECT aggregate(array(1, 2, 3), 0, (acc, x) -> acc + x)",
                "6",
            ),
            (
                "SELECT aggregate(array(1, 2, 3), 0, (acc, x) -> acc + x, acc -> acc * 10)",
                "60",
            ),
            ("SELECT reduce(array(1, 2, 3), 0, (acc, x) -> acc + x)", "6"),
            (
                "SELECT aggregate(array(1, NULL, 3), 0, (acc, x) -> acc + x)",
                "NULL",
            ),
            (
                "SELECT aggregate(CAST(NULL AS ARRAY<INT>), 0, (acc, x) -> acc + x)",
                "NULL",
            ),
            ("SELECT aggregate(array(), 5, (acc, x) -> acc + x)", "5"),
            (
                "SELECT aggregate(array('a', 'b', 'c'), '', (acc, x) -> concat(acc, x))",
                "abc",
            ),
            (
                "SELECT aggregate(array(2, 3), 1, (acc, x) -> acc * x, acc -> acc / 4)",
                "1.5",
            ),
            (
                "SELECT aggregate(array(1, 2, 3, 4), named_struct('sum', 0, 'cnt', 0), \
                 (acc, x) -> named_struct('sum', acc.sum + x, 'cnt', acc.cnt + 1), \
                 acc -> acc.sum / acc.cnt)",
                "2.5",
            ),
        ],
    )
    .await;
    // Where Spark refuses a start of another type than the merge's result
    // (DATATYPE_MISMATCH), the start is cast to the merge's type: a sum of doubles from 0.
    check(
        &engine,
        &session,
        &[(
            "SELECT aggregate(array(1.5, 2.5), 0, (acc, x) -> acc + x)",
            "4.0",
        )],
    )
    .await;
    check_rows(
        &engine,
        &session,
        "SELECT id, aggregate(arr, n, (acc, x) -> acc + x) FROM t ORDER BY id",
        &[&["1", "16"], &["2", "NULL"], &["3", "NULL"], &["4", "40"]],
    )
    .await;
}

#[tokio::test]
async fn zip_with_pairs_elements_padding_the_shorter_array() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        &[
            (
                "SELECT zip_with(array(1, 2, 3), array(10, 20, 30), (x, y) -> x + y)",
                "[11, 22, 33]",
            ),
            (
                "SELECT zip_with(array(1, 2), array('a', 'b', 'c'), (x, y) -> concat(x, y))",
                "[1a, 2b, NULL]",
            ),
            (
                "SELECT zip_with(array(1, 2), CAST(NULL AS ARRAY<INT>), (x, y) -> x + y)",
                "NULL",
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn map_functions_filter_and_transform_entries() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        &[
            (
                "SELECT map_filter(map(1, 0, 2, 2, 3, -1), (k, v) -> k > v)",
                "{1: 0, 3: -1}",
            ),
            (
                "SELECT map_filter(map('a', 1, 'b', NULL), (k, v) -> v IS NULL)",
                "{b: NULL}",
            ),
            (
                "SELECT transform_keys(map(1, 'a', 2, 'b'), (k, v) -> k + 1)",
                "{2: a, 3: b}",
            ),
            (
                "SELECT transform_keys(map('a', 1, 'b', 2), (k, v) -> concat(k, v))",
                "{a1: 1, b2: 2}",
            ),
            (
                "SELECT transform_values(map(1, 'a', 2, 'b'), (k, v) -> concat(v, k))",
                "{1: a1, 2: b2}",
            ),
            (
                "SELECT transform_values(map('a', 1, 'b', 2), (k, v) -> v * 10)",
                "{a: 10, b: 20}",
            ),
            (
                "SELECT map_zip_with(map(1, 'a', 2, 'b'), map(1, 'x', 3, 'y'), \
                 (k, v1, v2) -> concat(v1, v2))",
                "{1: ax, 2: NULL, 3: NULL}",
            ),
            (
                "SELECT map_zip_with(map('a', 1, 'b', 2), map('b', 3, 'c', 4), \
                 (k, v1, v2) -> coalesce(v1, 0) + coalesce(v2, 0))",
                "{a: 1, b: 5, c: 4}",
            ),
            // Keys of two integer types are matched as the wider one's.
            (
                "SELECT map_zip_with(map(1, 'a'), map(CAST(1 AS INT), 'b', 2, 'c'), \
                 (k, v1, v2) -> concat(v1, v2))",
                "{1: ab, 2: NULL}",
            ),
        ],
    )
    .await;
    // Spark refuses a map with a key twice or a NULL key.
    let repeated = error(
        &engine,
        &session,
        "SELECT transform_keys(map(1, 'a', 2, 'b'), (k, v) -> 0)",
    )
    .await;
    assert!(
        repeated.to_string().contains("Duplicate map key 0"),
        "{repeated}"
    );
    let null = error(
        &engine,
        &session,
        "SELECT transform_keys(map(1, 'a', 2, 'b'), (k, v) -> CAST(NULL AS INT))",
    )
    .await;
    assert!(
        null.to_string().contains("Cannot use null as map key"),
        "{null}"
    );
}

#[tokio::test]
async fn array_sort_with_a_comparator_sorts_stably() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        &[
            (
                "SELECT array_sort(array(5, 6, 1), \
                 (l, r) -> CASE WHEN l < r THEN 1 WHEN l > r THEN -1 ELSE 0 END)",
                "[6, 5, 1]",
            ),
            (
                "SELECT array_sort(array('bc', 'ab', 'dc'), (l, r) -> CASE WHEN l IS NULL THEN -1 \
                 WHEN r IS NULL THEN 1 WHEN l < r THEN 1 WHEN l > r THEN -1 ELSE 0 END)",
                "[dc, bc, ab]",
            ),
            // Equal elements keep their order.
            (
                "SELECT array_sort(array('b', 'dddd', 'cc', 'a'), (l, r) -> length(l) - length(r))",
                "[b, a, cc, dddd]",
            ),
            (
                "SELECT array_sort(array(3, 2, 1), (l, r) -> 0)",
                "[3, 2, 1]",
            ),
            (
                "SELECT array_sort(array(3, NULL, 1), \
                 (l, r) -> CASE WHEN l IS NULL THEN 1 WHEN r IS NULL THEN -1 ELSE l - r END)",
                "[1, 3, NULL]",
            ),
            (
                "SELECT array_sort(CAST(NULL AS ARRAY<INT>), (l, r) -> l - r)",
                "NULL",
            ),
        ],
    )
    .await;
    let null = error(
        &engine,
        &session,
        "SELECT array_sort(array(3, 2, 1), (l, r) -> CAST(NULL AS INT))",
    )
    .await;
    assert!(
        null.to_string()
            .contains("The comparator has returned a NULL for a comparison between"),
        "{null}"
    );
    let boolean = error(
        &engine,
        &session,
        "SELECT array_sort(array(1, 2), (l, r) -> l < r)",
    )
    .await;
    assert!(
        boolean.to_string().contains("must return an integer"),
        "{boolean}"
    );
}

#[tokio::test]
async fn the_lambdas_see_each_rows_columns_across_a_batch() {
    let engine = engine().await;
    let session = open(&engine);
    check_rows(
        &engine,
        &session,
        "SELECT id, transform(arr, (x, i) -> x * i + n) FROM t ORDER BY id",
        &[
            &["1", "[10, 12, 16]"],
            &["2", "[20, NULL]"],
            &["3", "NULL"],
            &["4", "[]"],
        ],
    )
    .await;
    check_rows(
        &engine,
        &session,
        "SELECT id, filter(arr, (x, i) -> i < id - 1) FROM t ORDER BY id",
        &[&["1", "[]"], &["2", "[4]"], &["3", "NULL"], &["4", "[]"]],
    )
    .await;
    check_rows(
        &engine,
        &session,
        "SELECT id, aggregate(arr, 0, (acc, x) -> acc + coalesce(x, 0) * id, acc -> acc + n) \
         FROM t ORDER BY id",
        &[&["1", "16"], &["2", "28"], &["3", "NULL"], &["4", "40"]],
    )
    .await;
    check_rows(
        &engine,
        &session,
        "SELECT id, zip_with(arr, array(n, n + 1), (x, y) -> x * y) FROM t ORDER BY id",
        &[
            &["1", "[10, 22, NULL]"],
            &["2", "[80, NULL]"],
            &["3", "NULL"],
            &["4", "[NULL, NULL]"],
        ],
    )
    .await;
    check_rows(
        &engine,
        &session,
        "SELECT id, array_sort(arr, (l, r) -> \
         CASE WHEN l IS NULL THEN -1 WHEN r IS NULL THEN 1 ELSE r - l END) FROM t ORDER BY id",
        &[
            &["1", "[3, 2, 1]"],
            &["2", "[NULL, 4]"],
            &["3", "NULL"],
            &["4", "[]"],
        ],
    )
    .await;
    check_rows(
        &engine,
        &session,
        "SELECT id, map_filter(map_from_arrays(array(1, 2, 3), array(n, 2 * n, 3 * n)), \
         (k, v) -> v > 20 + k) FROM t ORDER BY id",
        &[
            &["1", "{3: 30}"],
            &["2", "{2: 40, 3: 60}"],
            &["3", "{1: 30, 2: 60, 3: 90}"],
            &["4", "{1: 40, 2: 80, 3: 120}"],
        ],
    )
    .await;
    // A NULL map among the rows.
    check_rows(
        &engine,
        &session,
        "SELECT id, transform_values(CASE WHEN id = 3 THEN NULL \
         ELSE map_from_arrays(array('a'), array(n)) END, (k, v) -> v + 1) FROM t ORDER BY id",
        &[
            &["1", "{a: 11}"],
            &["2", "{a: 21}"],
            &["3", "NULL"],
            &["4", "{a: 41}"],
        ],
    )
    .await;
    check_rows(
        &engine,
        &session,
        "SELECT id, map_keys(transform_keys(map_from_arrays(array(1, 2), array('x', 'y')), \
         (k, v) -> k * id)) FROM t ORDER BY id",
        &[
            &["1", "[1, 2]"],
            &["2", "[2, 4]"],
            &["3", "[3, 6]"],
            &["4", "[4, 8]"],
        ],
    )
    .await;
    check_rows(
        &engine,
        &session,
        "SELECT id, map_zip_with(map_from_arrays(array(1, 2), array(id, n)), \
         map_from_arrays(array(2, 3), array(n, id)), \
         (k, v1, v2) -> coalesce(v1, 0) * 100 + coalesce(v2, 0) + k) FROM t ORDER BY id",
        &[
            &["1", "{1: 101, 2: 1012, 3: 4}"],
            &["2", "{1: 201, 2: 2022, 3: 5}"],
            &["3", "{1: 301, 2: 3032, 3: 6}"],
            &["4", "{1: 401, 2: 4042, 3: 7}"],
        ],
    )
    .await;
}

#[tokio::test]
async fn long_arrays_sort_and_fold_as_spark_does() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        &[
            (
                "SELECT array_sort(sequence(1, 100), (l, r) -> r - l) = sequence(100, 1, -1)",
                "true",
            ),
            (
                "SELECT slice(array_sort(transform(sequence(1, 37), x -> (x * 17) % 37), \
                 (l, r) -> l - r), 1, 10)",
                "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]",
            ),
            (
                "SELECT aggregate(sequence(1, 1000), 0, (acc, x) -> acc + x)",
                "500500",
            ),
            (
                "SELECT map_keys(map_zip_with(map(1, 'a', 2, 'b'), map(3, 'x', 1, 'y'), \
                 (k, v1, v2) -> concat(v1, v2)))",
                "[1, 2, 3]",
            ),
            (
                "SELECT map_values(map_zip_with(map(1, 'a', 2, 'b'), map(3, 'x', 1, 'y'), \
                 (k, v1, v2) -> concat(v1, v2)))",
                "[ay, NULL, NULL]",
            ),
            (
                "SELECT transform(array(1, 2), x -> array(x, x * 2))",
                "[[1, 2], [2, 4]]",
            ),
            (
                "SELECT filter(array('a', 'bb', NULL, 'ccc'), s -> length(s) > 1)",
                "[bb, ccc]",
            ),
            (
                "SELECT transform(array(named_struct('a', 1, 'b', 'x'), \
                 named_struct('a', 2, 'b', 'y')), s -> s.a)",
                "[1, 2]",
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn show_and_describe_function_know_the_lambda_functions() {
    let engine = engine().await;
    let session = open(&engine);
    let listed = value_rows(&engine, &session, "SHOW FUNCTIONS LIKE 'map_*'").await;
    for name in ["map_filter", "map_zip_with"] {
        assert!(
            listed.contains(&vec![name.to_owned()]),
            "{name}: {listed:?}"
        );
    }
    // The comparator sort is called as array_sort: its name of the engine's own is not listed.
    let sorts = value_rows(&engine, &session, "SHOW FUNCTIONS LIKE 'array_sort*'").await;
    assert_eq!(sorts, [vec!["array_sort".to_owned()]]);
    check(
        &engine,
        &session,
        &[(
            "DESCRIBE FUNCTION exists",
            "exists(array, x -> cond) - true when cond is true for an element; \
             else NULL when it is NULL for one, else false",
        )],
    )
    .await;
}
