//! The lambda syntax beside the syntax it could be mistaken for; answers checked against
//! Spark 3.5's for the same SQL.

use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

use crate::test_util::{engine, open, run};

#[tokio::test]
async fn lambdas_parse_beside_names_and_subqueries_they_could_be_mistaken_for() {
    let engine = engine().await;
    let session = open(&engine);
    for (sql, expected) in [
        // A column named `lambda`, the keyword of DuckDB's lambdas.
        ("SELECT lambda FROM (SELECT 1 AS lambda) t", "1"),
        ("SELECT transform(array(1), lambda -> lambda + 1)", "[2]"),
        // EXISTS of a subquery, and Spark's exists of an array, in one query.
        (
            "SELECT count(*) FROM tpch.nation \
             WHERE EXISTS (SELECT 1) AND exists(array(n_nationkey), x -> x < 3)",
            "3",
        ),
        (
            "SELECT count(*) FROM tpch.nation WHERE NOT EXISTS (SELECT 1 WHERE false)",
            "25",
        ),
        // A table's column by its qualified name inside a lambda; a variable's field.
        (
            "SELECT transform(array(1, 2), x -> x + t.n) FROM (SELECT 10 AS n) t",
            "[11, 12]",
        ),
        (
            "SELECT transform(array(named_struct('a', 1), named_struct('a', 2)), s -> s.a * 10)",
            "[10, 20]",
        ),
        // Without a lambda, array_sort is DataFusion's.
        ("SELECT array_sort(array(3, 1, 2))", "[1, 2, 3]"),
    ] {
        let batches = run(&engine, &session, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql} failed: {e}"));
        let options = FormatOptions::default().with_null("NULL");
        let formatter = ArrayFormatter::try_new(batches[0].column(0).as_ref(), &options).unwrap();
        assert_eq!(formatter.value(0).to_string(), expected, "{sql}");
    }
}
