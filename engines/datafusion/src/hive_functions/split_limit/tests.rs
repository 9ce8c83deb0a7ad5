//! `split` with Spark's limit, each expected value as pyspark 4.3 (local, without ANSI
//! mode) answers the same SQL.

use crate::hive_functions::tests::check;
use crate::test_util::{engine, open};

#[tokio::test]
async fn a_positive_limit_keeps_the_rest_in_the_last_piece() {
    let engine = engine().await;
    let s = open(&engine);
    // Spark: [a, b2c3], [a, b, c, ''], [a, b, c, ''], [a1b2c3], [a, b, c, ''],
    // [a, b, '', '', ''], [a, b, ',,'].
    check(
        &engine,
        &s,
        "SELECT split('a1b2c3', '[0-9]', 2), split('a1b2c3', '[0-9]', 0), \
         split('a1b2c3', '[0-9]', -1), split('a1b2c3', '[0-9]', 1), \
         split('a1b2c3', '[0-9]', 10), split('a,b,,,', ',', 0), split('a,b,,,', ',', 3)",
        &[
            "[a, b2c3]",
            "[a, b, c, ]",
            "[a, b, c, ]",
            "[a1b2c3]",
            "[a, b, c, ]",
            "[a, b, , , ]",
            "[a, b, ,,]",
        ],
    )
    .await;
    // Spark: [''] (one piece), [a, bc], [a, b, c], NULL, NULL, NULL, [a, b, c].
    check(
        &engine,
        &s,
        "SELECT size(split('', ',', 2)), split('abc', '', 2), split('abc', '', -1), \
         split(NULL, ',', 2), split('a,b', ',', NULL), split('a,b', NULL, 2), \
         split('abc', '', 0)",
        &[
            "1",
            "[a, bc]",
            "[a, b, c]",
            "NULL",
            "NULL",
            "NULL",
            "[a, b, c]",
        ],
    )
    .await;
}
