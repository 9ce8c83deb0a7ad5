//! Each expected value is the one Spark 4 gives with `spark.sql.ansi.enabled=false` and the
//! session time zone UTC.

use crate::engine::Engine;
use crate::session::Session;
use crate::test_util::{engine, lines, open};

/// The one value of a one-row, one-column query.
async fn value(engine: &Engine, session: &Session, sql: &str) -> String {
    let lines = lines(engine, session, sql).await;
    assert_eq!(lines.len(), 5, "{sql}: {lines:?}");
    lines[3].trim_matches(|c| c == '|' || c == ' ').to_owned()
}

#[tokio::test]
async fn arrays_maps_and_structs_cast_to_sparks_text() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("CAST(array(1, 2) AS STRING)", "[1, 2]"),
        ("string(array(1, 2))", "[1, 2]"),
        ("CAST(map('a', 1, 'b', 2) AS STRING)", "{a -> 1, b -> 2}"),
        // A struct's values only, strings unquoted.
        ("CAST(named_struct('a', 1, 'b', 'x') AS STRING)", "{1, x}"),
        ("string(named_struct('a', 1)) || '!'", "{1}!"),
        // A NULL inside is `null`.
        ("CAST(array(1, NULL, 3) AS STRING)", "[1, null, 3]"),
        ("CAST(array('a', NULL) AS STRING)", "[a, null]"),
        ("CAST(map('a', NULL) AS STRING)", "{a -> null}"),
        (
            "CAST(named_struct('a', NULL, 'b', 2) AS STRING)",
            "{null, 2}",
        ),
        (
            "CAST(array(array(CAST(NULL AS INT))) AS STRING)",
            "[[null]]",
        ),
        (
            "CAST(map(1, array(1, 2), 2, NULL) AS STRING)",
            "{1 -> [1, 2], 2 -> null}",
        ),
        // Nested alike.
        (
            "CAST(array(array(1, 2), array(3)) AS STRING)",
            "[[1, 2], [3]]",
        ),
        ("CAST(array(map('a', 1)) AS STRING)", "[{a -> 1}]"),
        (
            "CAST(map(named_struct('a', 1), array(1)) AS STRING)",
            "{{1} -> [1]}",
        ),
        (
            "CAST(named_struct('a', array(1, 2), 'b', named_struct('c', 'x', 'd', map(1, 'y'))) \
             AS STRING)",
            "{[1, 2], {x, {1 -> y}}}",
        ),
        ("CAST(array(' a ') AS STRING)", "[ a ]"),
        ("CAST(map('', '') AS STRING)", "{ -> }"),
        // Each value as Spark casts it to a string: doubles and floats as Java writes them,
        // decimals as Java's BigDecimal, timestamps without trailing zeros.
        (
            "CAST(array(1.5D, 1e20D, 1e-5D, 0.1D, 100.0D, 1e7D, 1e6D, 1234567.0D) AS STRING)",
            "[1.5, 1.0E20, 1.0E-5, 0.1, 100.0, 1.0E7, 1000000.0, 1234567.0]",
        ),
        (
            "CAST(array(CAST('NaN' AS DOUBLE), CAST('Infinity' AS DOUBLE), -0.0D) AS STRING)",
            "[NaN, Infinity, -0.0]",
        ),
        (
            "CAST(array(1.5F, 0.1F, 1e10F) AS STRING)",
            "[1.5, 0.1, 1.0E10]",
        ),
        (
            "CAST(array(1.50BD, CAST(2 AS DECIMAL(10,3))) AS STRING)",
            "[1.500, 2.000]",
        ),
        (
            "CAST(array(CAST(0 AS DECIMAL(20,10)), CAST(0.00000001 AS DECIMAL(20,10)), \
             CAST(-1.5 AS DECIMAL(5,1))) AS STRING)",
            "[0E-10, 1.00E-8, -1.5000000000]",
        ),
        ("CAST(array(DATE '2024-01-02') AS STRING)", "[2024-01-02]"),
        (
            "CAST(array(TIMESTAMP '2024-01-02 03:04:05') AS STRING)",
            "[2024-01-02 03:04:05]",
        ),
        (
            "CAST(array(TIMESTAMP '2024-01-02 03:04:05.100') AS STRING)",
            "[2024-01-02 03:04:05.1]",
        ),
        ("CAST(array(true, false) AS STRING)", "[true, false]"),
        ("CAST(array(X'4142') AS STRING)", "[AB]"),
        ("CAST(CAST(NULL AS ARRAY<INT>) AS STRING) IS NULL", "true"),
    ];
    for (expr, expected) in cases {
        assert_eq!(
            value(&engine, &session, &format!("SELECT {expr}")).await,
            expected,
            "{expr}"
        );
    }
    // A column's values, row by row.
    assert_eq!(
        lines(
            &engine,
            &session,
            "SELECT CAST(a AS STRING) AS a FROM (SELECT array(n_nationkey, n_regionkey) AS a \
             FROM tpch.nation ORDER BY n_nationkey LIMIT 2) t"
        )
        .await[3..5],
        ["| [0, 0] |", "| [1, 1] |"]
    );
}
