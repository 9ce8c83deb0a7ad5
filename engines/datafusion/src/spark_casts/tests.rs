//! Each expected value is the one Spark 4 gives with `spark.sql.ansi.enabled=false` and the
//! session time zone UTC.

use crate::engine::Engine;
use crate::session::Session;
use crate::test_util::{engine, error, lines, open, value_rows};

/// The one value of a one-row, one-column query.
async fn value(engine: &Engine, session: &Session, sql: &str) -> String {
    let lines = lines(engine, session, sql).await;
    assert_eq!(lines.len(), 5, "{sql}: {lines:?}");
    lines[3].trim_matches(|c| c == '|' || c == ' ').to_owned()
}

/// Each expression's value is the one beside it (`SELECT expr`, one row, one column).
async fn answers(engine: &Engine, session: &Session, cases: &[(&str, &str)]) {
    for (expr, expected) in cases {
        assert_eq!(
            value(engine, session, &format!("SELECT {expr}")).await,
            *expected,
            "{expr}"
        );
    }
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
    answers(&engine, &session, &cases).await;
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

#[tokio::test]
async fn numbers_and_timestamps_cast_to_sparks_text() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("CAST(1e20D AS STRING)", "1.0E20"),
        ("CAST(1e-5D AS STRING)", "1.0E-5"),
        ("CAST(100.0D AS STRING)", "100.0"),
        ("CAST(1.5F AS STRING)", "1.5"),
        ("string(0.1F)", "0.1"),
        ("CAST(CAST(2 AS DECIMAL(10,3)) AS STRING)", "2.000"),
        ("CAST(CAST(0 AS DECIMAL(20,10)) AS STRING)", "0E-10"),
        (
            "CAST(TIMESTAMP '2024-01-02 03:04:05.100' AS STRING)",
            "2024-01-02 03:04:05.1",
        ),
        // The casts a string function's argument takes, as Spark's implicit ones.
        ("concat('a', 1e20D)", "a1.0E20"),
        ("'x' || 1e7D", "x1.0E7"),
        // `||` of values none of which is a string, as Spark's `concat`.
        ("1 || TRUE", "1true"),
        ("1 || 2", "12"),
        ("1.5D || DATE '2024-01-02'", "1.52024-01-02"),
        ("typeof(1 || 2)", "string"),
        ("(NULL || 1) IS NULL", "true"),
        (
            "concat('t', TIMESTAMP '2024-01-02 03:04:05')",
            "t2024-01-02 03:04:05",
        ),
        ("concat('d', CAST(0 AS DECIMAL(20,10)))", "d0E-10"),
        (
            "CAST(current_timestamp() AS STRING) LIKE '20__-__-__ __:__:__%'",
            "true",
        ),
    ];
    answers(&engine, &session, &cases).await;
}

#[tokio::test]
async fn a_string_casts_to_a_double_as_java_reads_it() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("CAST(' 7 ' AS DOUBLE)", "7.0"),
        ("CAST('1d' AS DOUBLE)", "1.0"),
        ("double(' 3 ')", "3.0"),
        ("CAST('Infinity' AS DOUBLE)", "inf"),
        ("CAST('inf' AS DOUBLE)", "inf"),
        ("CAST('1e400' AS DOUBLE)", "inf"),
        ("CAST('-nan' AS DOUBLE) IS NULL", "true"),
        ("CAST('abc' AS DOUBLE) IS NULL", "true"),
        ("CAST('1.5' AS FLOAT)", "1.5"),
        ("CAST(' 2 ' AS FLOAT)", "2.0"),
        ("arrow_typeof(CAST('2.5f' AS FLOAT))", "Float32"),
    ];
    answers(&engine, &session, &cases).await;
}

#[tokio::test]
async fn a_string_in_arithmetic_is_a_double() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("1 + '2'", "3.0"),
        ("'3' * '4'", "12.0"),
        ("10 / '4'", "2.5"),
        ("'5' - 1", "4.0"),
        ("'7' % 2", "1.0"),
        ("7.5 % '2'", "1.5"),
        ("arrow_typeof(1 + '2')", "Float64"),
        ("arrow_typeof(2Y + '1')", "Float64"),
        ("arrow_typeof(CAST(1 AS DECIMAL(10,2)) * '3')", "Float64"),
        ("arrow_typeof(NULL + '1')", "Float64"),
        ("1.5BD + '2'", "3.5"),
        ("2.5F + '1'", "3.5"),
        ("'1' + 2147483647", "2147483648.0"),
        // Not a number: NULL.
        ("('abc' + 1) IS NULL", "true"),
        ("('' + 1) IS NULL", "true"),
        ("('0x10' + 0) IS NULL", "true"),
        ("('1L' + 0) IS NULL", "true"),
        ("('-nan' + 0) IS NULL", "true"),
        // A zero divisor: NULL, as a number's.
        ("(10 / '0') IS NULL", "true"),
        ("('5' % '0') IS NULL", "true"),
        // Read as Java reads a double.
        ("'1.5' + '1'", "2.5"),
        ("'1e3' + 0", "1000.0"),
        ("' 7 ' + 0", "7.0"),
        ("'+1' + 0", "1.0"),
        ("'1.' + 0", "1.0"),
        ("'.5' + 0", "0.5"),
        ("'1d' + 0", "1.0"),
        ("'1.5e3d' + 0", "1500.0"),
        ("'Infinity' + 0", "inf"),
        ("'-Infinity' + 0", "-inf"),
        ("'INF' + 0", "inf"),
        ("'1e400' + 0", "inf"),
        ("'NaN' + 0", "NaN"),
    ];
    answers(&engine, &session, &cases).await;
    // A column of strings.
    assert_eq!(
        value(
            &engine,
            &session,
            "SELECT sum(x * 2) FROM (VALUES ('1'), ('2.5'), ('x')) t(x)"
        )
        .await,
        "7.0"
    );
}

#[tokio::test]
async fn a_string_compares_as_the_other_sides_type() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("'5' > 4", "true"),
        ("'5' > 40", "false"),
        // As numbers, not as strings.
        ("'10' > 9", "true"),
        ("'10' > '9'", "false"),
        // Read as an INT: the fraction is dropped.
        ("'5.5' > 5", "false"),
        ("'1.9' = 1", "true"),
        ("'-1.9' = -1", "true"),
        ("'5.0' = 5", "true"),
        ("' 5' = 5", "true"),
        ("'100' = 100Y", "true"),
        ("'2' >= 2", "true"),
        ("'2' <= 1", "false"),
        ("'2' <> 2", "false"),
        ("'5' != 4", "true"),
        ("1 > '0'", "true"),
        // Not a number of the type: NULL.
        ("('abc' = 5) IS NULL", "true"),
        ("('abc' > 5) IS NULL", "true"),
        ("(1 > 'a') IS NULL", "true"),
        ("('1e2' = 100) IS NULL", "true"),
        ("('1d' = 1) IS NULL", "true"),
        ("('300' = 44Y) IS NULL", "true"),
        ("'x' <=> 5", "false"),
        ("'5' <=> 5", "true"),
        // As a double beside a double, and beside a decimal.
        ("'1e2' = 100.0D", "true"),
        ("' 1 ' = 1.0D", "true"),
        ("'1.5' = 1.5F", "true"),
        ("'5' > 4.5", "true"),
        ("'4.50' = 4.5BD", "true"),
        ("'1.001' > CAST(1 AS DECIMAL(10,2))", "true"),
        // As a boolean beside a boolean.
        ("true = 't'", "true"),
        ("' true ' = true", "true"),
        ("'yes' = true", "true"),
        ("'TRUE' = true", "true"),
        ("'n' = false", "true"),
        ("true = '1'", "true"),
        ("('on' = true) IS NULL", "true"),
        ("(true = 'abc') IS NULL", "true"),
        // A dictionary of strings, as a partition's column, alike.
        ("arrow_cast('5.5', 'Dictionary(Int32, Utf8)') = 5", "true"),
        (
            "(arrow_cast('x', 'Dictionary(Int32, Utf8)') = 5) IS NULL",
            "true",
        ),
        ("arrow_cast('5', 'Dictionary(Int32, Utf8)') + 1", "6.0"),
        // Dates and timestamps read the string as before.
        ("'2024-01-02' = DATE '2024-01-02'", "true"),
        ("TIMESTAMP '2024-01-02 00:00:00' > '2024-01-01'", "true"),
    ];
    answers(&engine, &session, &cases).await;
    // A column compared with a string keeps its answer; a string column with a number no
    // longer fails on a name that is not one.
    assert_eq!(
        value(
            &engine,
            &session,
            "SELECT n_name FROM tpch.nation WHERE n_nationkey = '5'"
        )
        .await,
        "ETHIOPIA"
    );
    assert_eq!(
        value(
            &engine,
            &session,
            "SELECT count(*) FROM tpch.nation WHERE n_name > 5 OR n_name IS NULL"
        )
        .await,
        "0"
    );
}

#[tokio::test]
async fn dates_and_intervals_keep_their_arithmetic() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("DATE '2024-01-02' + INTERVAL 1 DAY", "2024-01-03"),
        ("DATE '2024-01-02' - DATE '2024-01-01'", "1"),
        ("DATE '2024-01-02' + 1", "2024-01-03"),
        // A string beside a day-time interval is a moment, and the answer its text (Spark 4.3).
        ("'2024-01-02' + INTERVAL 1 DAY", "2024-01-03 00:00:00"),
        ("typeof('2024-01-02' + INTERVAL 1 DAY)", "string"),
        ("INTERVAL 1 DAY + '2024-01-02'", "2024-01-03 00:00:00"),
        (
            "'2024-01-02 10:00:00' - INTERVAL 2 HOURS",
            "2024-01-02 08:00:00",
        ),
        (
            "'2024-01-02' + INTERVAL '1 2:03' DAY TO MINUTE",
            "2024-01-03 02:03:00",
        ),
        ("('abc' + INTERVAL 1 DAY) IS NULL", "true"),
        ("(CAST(NULL AS STRING) + INTERVAL 1 DAY) IS NULL", "true"),
    ];
    answers(&engine, &session, &cases).await;
    // A column of strings alike; months beside a string are refused, as Spark refuses them.
    assert_eq!(
        value(
            &engine,
            &session,
            "SELECT s + INTERVAL 3 DAYS FROM VALUES ('2024-03-05') AS t(s)"
        )
        .await,
        "2024-03-08 00:00:00"
    );
    let months = error(&engine, &session, "SELECT '2024-01-31' + INTERVAL 1 MONTH").await;
    assert!(
        months
            .to_string()
            .contains("cast it to a DATE or a TIMESTAMP first"),
        "{months}"
    );
}

#[tokio::test]
async fn between_compares_as_comparisons_do_and_in_as_strings() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("'10' BETWEEN 9 AND 11", "true"),
        ("'10' NOT BETWEEN 9 AND 11", "false"),
        // `'5.5'` read as an INT, 5.
        ("'5.5' BETWEEN 5 AND 5", "true"),
        ("10 BETWEEN '9' AND '11'", "true"),
        ("(10 BETWEEN '9' AND 'x') IS NULL", "true"),
        ("'5' IN (5, 6)", "true"),
        ("5 IN ('5', 'a')", "true"),
        ("'a' IN (1, 'a')", "true"),
        // Compared as strings.
        ("'5.0' IN (5)", "false"),
        ("5 IN ('5.0')", "false"),
        ("5.0D IN ('5')", "false"),
    ];
    answers(&engine, &session, &cases).await;
    let names = |sql: &'static str| {
        let (engine, session) = (&engine, &session);
        async move { lines(engine, session, sql).await[3..5].to_vec() }
    };
    assert_eq!(
        names("SELECT n_name FROM tpch.nation WHERE n_nationkey IN ('5', '6') ORDER BY 1").await,
        ["| ETHIOPIA |", "| FRANCE   |"]
    );
    assert_eq!(
        names("SELECT n_name FROM tpch.nation WHERE n_nationkey BETWEEN '5' AND '6' ORDER BY 1")
            .await,
        ["| ETHIOPIA |", "| FRANCE   |"]
    );
    assert_eq!(
        lines(
            &engine,
            &session,
            "SELECT n_name FROM tpch.nation WHERE n_nationkey IN ('5.0', 6)"
        )
        .await[3],
        "| FRANCE |"
    );
    assert_eq!(
        value(
            &engine,
            &session,
            "SELECT count(*) FROM tpch.nation WHERE n_name IN (1, 2)"
        )
        .await,
        "0"
    );
}

#[tokio::test]
async fn a_sign_before_a_string_reads_it_as_a_double() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("-'5'", "-5.0"),
        ("+'5'", "5.0"),
        ("-' 1.5e3d '", "-1500.0"),
        ("-'-0'", "0.0"),
        ("arrow_typeof(-'5')", "Float64"),
        ("(-'abc') IS NULL", "true"),
        // Other operands keep their sign and their type.
        ("-x FROM (SELECT 5 AS x) t", "-5"),
        ("-(2)", "-2"),
        ("typeof(-x) FROM (SELECT CAST(5 AS INT) AS x) t", "int"),
        (
            "-x FROM (SELECT CAST(2.50 AS DECIMAL(5,2)) AS x) t",
            "-2.50",
        ),
        ("-INTERVAL '1' DAY = INTERVAL '-1' DAY", "true"),
        ("-sum(x) FROM (SELECT 5 AS x) t", "-5"),
        // A string column: a DOUBLE.
        ("-s FROM (SELECT ' 3 ' AS s) t", "-3.0"),
        ("+s FROM (SELECT '12.5' AS s) t", "12.5"),
        ("(-s) IS NULL FROM (SELECT 'abc' AS s) t", "true"),
    ];
    answers(&engine, &session, &cases).await;
}

/// A text table's numbers: strings, as Spark reads them where a function takes numbers.
const TEXT_NUMBERS: &str =
    "(SELECT * FROM VALUES (1, 'eng', '12.5'), (2, 'eng', '7'), (3, 'sales', NULL), \
     (4, 'sales', 'abc'), (5, NULL, ' 3 '), (6, 'hr', '-4e1') AS t(id, dept, amount))";

#[tokio::test]
async fn functions_of_numbers_read_a_string_as_a_double() {
    let engine = engine().await;
    let session = open(&engine);
    let rows = |sql: String| {
        let (engine, session) = (&engine, &session);
        async move { crate::test_util::value_rows(engine, session, &sql).await }
    };
    // Aggregates, a value that is not a number counting as NULL.
    assert_eq!(
        rows(format!(
            "SELECT sum(amount), avg(amount), typeof(sum(amount)), max(amount), \
             round(stddev(amount), 6), round(variance(amount), 4), count(amount) \
             FROM {TEXT_NUMBERS}"
        ))
        .await,
        [["-17.5", "-4.375", "double", "abc", "24.06718", "579.2292", "5"]]
    );
    assert_eq!(
        rows(format!(
            "SELECT dept, sum(amount) FROM {TEXT_NUMBERS} GROUP BY dept ORDER BY dept"
        ))
        .await,
        [
            ["NULL", "3.0"],
            ["eng", "19.5"],
            ["hr", "-40.0"],
            ["sales", "NULL"]
        ]
    );
    assert_eq!(
        rows(format!(
            "SELECT percentile(amount, 0.5), percentile_approx(amount, 0.5), median(amount), \
             sum(DISTINCT amount), round(corr(amount, id), 6), round(kurtosis(amount), 6) \
             FROM {TEXT_NUMBERS}"
        ))
        .await,
        [["5.0", "3.0", "5.0", "-17.5", "-0.79855", "-0.732768"]]
    );
    // Over a window.
    assert_eq!(
        rows(format!(
            "SELECT sum(amount) OVER (ORDER BY id), avg(amount) OVER (PARTITION BY dept) \
             FROM {TEXT_NUMBERS} ORDER BY id"
        ))
        .await,
        [
            ["12.5", "9.75"],
            ["19.5", "9.75"],
            ["19.5", "NULL"],
            ["19.5", "NULL"],
            ["22.5", "3.0"],
            ["-17.5", "-40.0"]
        ]
    );
    // Scalar functions.
    assert_eq!(
        rows(format!(
            "SELECT abs(amount), sqrt(amount) > 3.5, round(amount), ceil(amount), \
             pmod(amount, 2), typeof(abs(amount)) FROM {TEXT_NUMBERS} WHERE id = 1"
        ))
        .await,
        [["12.5", "true", "13.0", "13", "0.5", "double"]]
    );
    assert_eq!(
        rows(format!(
            "SELECT abs(amount) FROM {TEXT_NUMBERS} WHERE id IN (4, 6) ORDER BY id"
        ))
        .await,
        [["NULL"], ["40.0"]]
    );
    // A function that takes strings is left alone, and a number is still a number.
    assert_eq!(
        rows(format!(
            "SELECT typeof(max(amount)), typeof(sum(id)), typeof(max(abs(CAST(id AS INT)))) FROM {TEXT_NUMBERS}"
        ))
        .await,
        [["string", "bigint", "int"]]
    );
}

#[tokio::test]
async fn ranking_functions_are_ints() {
    let engine = engine().await;
    let session = open(&engine);
    let rows = crate::test_util::value_rows(
        &engine,
        &session,
        &format!(
            "SELECT id, row_number() OVER (PARTITION BY dept ORDER BY id), \
             rank() OVER (ORDER BY dept), dense_rank() OVER (ORDER BY dept), \
             ntile(3) OVER (ORDER BY id), typeof(row_number() OVER (ORDER BY id)), \
             typeof(rank() OVER (ORDER BY id)), typeof(dense_rank() OVER (ORDER BY id)), \
             typeof(ntile(2) OVER (ORDER BY id)) FROM {TEXT_NUMBERS} ORDER BY id"
        ),
    )
    .await;
    let int = "int";
    assert_eq!(
        rows,
        [
            ["1", "1", "2", "2", "1", int, int, int, int],
            ["2", "2", "2", "2", "1", int, int, int, int],
            ["3", "1", "5", "4", "2", int, int, int, int],
            ["4", "2", "5", "4", "2", int, int, int, int],
            ["5", "1", "1", "1", "3", int, int, int, int],
            ["6", "1", "4", "3", "3", int, int, int, int]
        ]
    );
    // A filter on a row number, which DataFusion may answer as a top-n.
    let rows = crate::test_util::value_rows(
        &engine,
        &session,
        &format!(
            "SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY dept ORDER BY id DESC) \
             AS rn FROM {TEXT_NUMBERS}) WHERE rn <= 1 ORDER BY id"
        ),
    )
    .await;
    assert_eq!(rows, [["2"], ["4"], ["5"], ["6"]]);
}

#[tokio::test]
async fn conditional_values_of_strings_and_numbers_are_strings() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("coalesce(1, 'a')", "1"),
        ("typeof(coalesce(1, 'a'))", "string"),
        ("coalesce(NULL, 1, 'a')", "1"),
        ("coalesce(1, 2L, 'a')", "1"),
        ("nvl(1, 'a')", "1"),
        ("ifnull(1, 'a')", "1"),
        ("nvl2(NULL, 1, 'a')", "a"),
        ("if(true, 1, 'a')", "1"),
        ("typeof(if(true, 1, 'a'))", "string"),
        ("if(false, 1.5, 'a')", "a"),
        ("CASE WHEN true THEN 1 ELSE 'a' END", "1"),
        ("typeof(CASE WHEN true THEN 1 ELSE 'a' END)", "string"),
        ("CASE WHEN true THEN 1.5D ELSE 'a' END", "1.5"),
        ("CASE 1 WHEN 1 THEN 'x' ELSE 2 END", "x"),
        // Spark's text of each value.
        ("coalesce(1.5D, 'a')", "1.5"),
        ("coalesce(1e20D, 'a')", "1.0E20"),
        ("coalesce(CAST(1 AS FLOAT), 'a')", "1.0"),
        ("coalesce(CAST(1.50 AS DECIMAL(5,2)), 'a')", "1.50"),
        ("if(true, DATE'2024-01-02', 'a')", "2024-01-02"),
        // A date or timestamp beside a string (DataFusion refused coalesce's; its nvl2 made
        // the string a NULL date). Spark 4.3's answers.
        ("coalesce(DATE'2024-01-02', 'a')", "2024-01-02"),
        ("coalesce(CAST(NULL AS DATE), 'unknown')", "unknown"),
        ("nvl(CAST(NULL AS TIMESTAMP), '-')", "-"),
        (
            "ifnull(TIMESTAMP'2024-01-02 03:04:05', '-')",
            "2024-01-02 03:04:05",
        ),
        ("nvl2(DATE'2024-01-02', 'y', DATE'2024-01-03')", "y"),
        (
            "nvl2(CAST(NULL AS DATE), 'y', DATE'2024-01-03')",
            "2024-01-03",
        ),
        ("typeof(coalesce(DATE'2024-01-02', 'a'))", "string"),
        (
            "CASE WHEN true THEN TIMESTAMP'2024-01-02 03:04:05' ELSE 'a' END",
            "2024-01-02 03:04:05",
        ),
        // `CASE x WHEN v` compares as `x = v`: `'a'` is no number.
        ("CASE 'a' WHEN 1 THEN 'x' ELSE 'y' END", "y"),
        ("CASE 1 WHEN '1' THEN 'x' ELSE 'y' END", "x"),
        // No string: the numbers' type, as before.
        ("typeof(if(true, 1, NULL))", "int"),
    ];
    answers(&engine, &session, &cases).await;
    let rows = crate::test_util::value_rows(
        &engine,
        &session,
        "SELECT coalesce(1, x), typeof(coalesce(1, x)) FROM VALUES ('a') AS t(x)",
    )
    .await;
    assert_eq!(rows, [["1", "string"]]);
}

#[tokio::test]
async fn sum_and_avg_of_null_are_a_null_double() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("sum(NULL)", "NULL"),
        ("typeof(sum(NULL))", "double"),
        ("avg(NULL)", "NULL"),
        ("typeof(avg(NULL))", "double"),
    ];
    for (expr, expected) in cases {
        let rows = crate::test_util::value_rows(&engine, &session, &format!("SELECT {expr}")).await;
        assert_eq!(rows, [[expected]], "{expr}");
    }
    let rows = crate::test_util::value_rows(
        &engine,
        &session,
        "SELECT sum(x), typeof(sum(x)), avg(x), typeof(avg(x)) \
         FROM (SELECT NULL AS x UNION ALL SELECT NULL)",
    )
    .await;
    assert_eq!(rows, [["NULL", "double", "NULL", "double"]]);
    let rows = crate::test_util::value_rows(
        &engine,
        &session,
        "SELECT sum(NULL) FROM VALUES (1), (2) AS t(a) GROUP BY a",
    )
    .await;
    assert_eq!(rows, [["NULL"], ["NULL"]]);
    let rows = crate::test_util::value_rows(
        &engine,
        &session,
        "SELECT sum(CASE WHEN false THEN NULL END), typeof(sum(CASE WHEN false THEN NULL END)), \
         sum(NULL) OVER (), avg(NULL) OVER ()",
    )
    .await;
    assert_eq!(rows, [["NULL", "double", "NULL", "NULL"]]);
}

#[tokio::test]
async fn a_string_casts_to_a_timestamp_as_spark_reads_it() {
    let engine = engine().await;
    let session = open(&engine);
    let timestamp = |text: &str| format!("CAST(CAST('{text}' AS TIMESTAMP) AS STRING)");
    let cases = [
        ("2024-01-05 10:11", "2024-01-05 10:11:00"),
        ("2024-01-05 10", "2024-01-05 10:00:00"),
        ("2024-01-05T10:11:12", "2024-01-05 10:11:12"),
        ("2024-01-05T10:11", "2024-01-05 10:11:00"),
        ("2024-01-05T10", "2024-01-05 10:00:00"),
        ("2024-01-05", "2024-01-05 00:00:00"),
        ("2024-01-05 ", "2024-01-05 00:00:00"),
        ("2024-1-5 1:2:3", "2024-01-05 01:02:03"),
        ("2024-01-05 1:2", "2024-01-05 01:02:00"),
        ("2024-01-05 10:11:1", "2024-01-05 10:11:01"),
        ("2024", "2024-01-01 00:00:00"),
        ("2024-01", "2024-01-01 00:00:00"),
        ("2024-1", "2024-01-01 00:00:00"),
        ("+2024-01-05 10:11:12", "2024-01-05 10:11:12"),
        (" 2024-01-05 10:11:12 ", "2024-01-05 10:11:12"),
        // Zones: the time in UTC.
        ("2024-01-05 10:11:12Z", "2024-01-05 10:11:12"),
        ("2024-01-05 10:11:12 Z", "2024-01-05 10:11:12"),
        ("2024-01-05 10:11:12+01:00", "2024-01-05 09:11:12"),
        ("2024-01-05 10:11:12 +01:00", "2024-01-05 09:11:12"),
        ("2024-01-05 10:11:12+0100", "2024-01-05 09:11:12"),
        ("2024-01-05 10:11:12+01", "2024-01-05 09:11:12"),
        ("2024-01-05 10:11:12+8", "2024-01-05 02:11:12"),
        ("2024-01-05 10:11:12+1:00", "2024-01-05 09:11:12"),
        ("2024-01-05 10:11:12-08:00", "2024-01-05 18:11:12"),
        ("2024-01-05T10:11:12-0800", "2024-01-05 18:11:12"),
        ("2024-01-05 10:11:12+08:00:30", "2024-01-05 02:10:42"),
        ("2024-01-05 10:11:12+18:00", "2024-01-04 16:11:12"),
        ("2024-01-05 10:11:12 UTC", "2024-01-05 10:11:12"),
        ("2024-01-05 10:11:12UTC+8", "2024-01-05 02:11:12"),
        ("2024-01-05 10:11:12GMT+01:00", "2024-01-05 09:11:12"),
        (
            "2024-01-05 10:11:12 America/Los_Angeles",
            "2024-01-05 18:11:12",
        ),
        ("2024-01-05 10:11:12CET", "2024-01-05 09:11:12"),
        ("2024-01-05 10:11:12 CET", "2024-01-05 09:11:12"),
        // Fractions: cut past the microsecond.
        ("2024-01-05 10:11:12.123456", "2024-01-05 10:11:12.123456"),
        ("2024-01-05 10:11:12.1234567", "2024-01-05 10:11:12.123456"),
        (
            "2024-01-05 10:11:12.123456789",
            "2024-01-05 10:11:12.123456",
        ),
        ("2024-01-05 10:11:12.", "2024-01-05 10:11:12"),
        ("2024-01-05 10:11:12.5Z", "2024-01-05 10:11:12.5"),
        ("2024-01-05 10:11:12.123+01:00", "2024-01-05 09:11:12.123"),
        ("2024-01-05T10:11:12.123Z", "2024-01-05 10:11:12.123"),
    ];
    for (text, expected) in cases {
        let sql = format!("SELECT {}", timestamp(text));
        assert_eq!(value(&engine, &session, &sql).await, expected, "{text}");
    }
    // NULL where Spark reads no timestamp.
    for text in [
        "2024-01-05T",
        "2024-01-05 10:11Z",
        "2024-01-05 10Z",
        "20240105",
        "2024-01-05 25:00:00",
        "2024-02-30 10:00:00",
        "2024-01-05 10:60:00",
        "2024-01-05 10:11:60",
        "024-01-05 10:11:12",
        "2024-01-05  10:11:12",
        "2024-01-05 001:02:03",
        "2024-01-05 10:11:12+19:00",
        "2024-01-05 10:11:12 x",
        "2024-01-05 10:11:",
        "2024-01-05 10:",
    ] {
        let sql = format!("SELECT CAST('{text}' AS TIMESTAMP) IS NULL");
        assert_eq!(value(&engine, &session, &sql).await, "true", "{text}");
    }
    // A time alone is today's.
    let sql = "SELECT CAST('10:11:12' AS TIMESTAMP) = \
               CAST(current_date() AS TIMESTAMP) + INTERVAL '10:11:12' HOUR TO SECOND";
    assert_eq!(value(&engine, &session, sql).await, "true");
}

#[tokio::test]
async fn a_string_casts_to_a_date_as_spark_reads_it() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("2024-1-5", "2024-01-05"),
        ("2024-01-5", "2024-01-05"),
        ("2024", "2024-01-01"),
        ("2024-01", "2024-01-01"),
        ("2024-1", "2024-01-01"),
        ("2024-01-05 10:00:00", "2024-01-05"),
        ("2024-01-05T00:00", "2024-01-05"),
        ("2024-01-05 garbage", "2024-01-05"),
        ("2024-01-05T", "2024-01-05"),
        ("2024-01-05Tjunk", "2024-01-05"),
        ("2024-01-05 ", "2024-01-05"),
        (" 2024-01-05 ", "2024-01-05"),
        ("02024-01-05", "2024-01-05"),
        ("+2024-01-05", "2024-01-05"),
    ];
    for (text, expected) in cases {
        let sql = format!("SELECT CAST(CAST('{text}' AS DATE) AS STRING)");
        assert_eq!(value(&engine, &session, &sql).await, expected, "{text}");
    }
    let sql = "SELECT CAST(CAST('\\t2024-01-05\\n' AS DATE) AS STRING)";
    assert_eq!(value(&engine, &session, sql).await, "2024-01-05");
    for text in [
        "20240105",
        "2024-01-05x",
        "2024-02-30",
        "2024-13-01",
        "24-01-05",
        "2024-001-05",
        "2024/01/05",
        "2024-01-05Z",
        "2024-01-",
        "2024-",
        "",
        "  ",
    ] {
        let sql = format!("SELECT CAST('{text}' AS DATE) IS NULL");
        assert_eq!(value(&engine, &session, &sql).await, "true", "{text}");
    }
}

#[tokio::test]
async fn a_double_cast_to_a_decimal_reads_its_shortest_text_as_spark() {
    // Answers from Spark 4.3: CAST(CAST(v AS DOUBLE) AS DECIMAL(p, s)).
    let engine = crate::test_util::engine().await;
    let session = crate::test_util::open(&engine);
    let rows = crate::test_util::value_rows(
        &engine,
        &session,
        "SELECT CAST(1.005D AS DECIMAL(10,2)), CAST(-2.675D AS DECIMAL(10,2)), \
         CAST(12345678901234567890.123D AS DECIMAL(38,3)), CAST(99.995D AS DECIMAL(4,2)), \
         CAST(CAST(123.456 AS FLOAT) AS DECIMAL(20,10)), CAST(CAST('NaN' AS DOUBLE) AS DECIMAL(5,2)), \
         CAST(x AS DECIMAL(10,2)) FROM (VALUES (1.005D), (NULL)) t(x)",
    )
    .await;
    assert_eq!(
        rows,
        [
            [
                "1.01",
                "-2.68",
                "12345678901234567000.000",
                "NULL",
                "123.4560012817",
                "NULL",
                "1.01"
            ],
            [
                "1.01",
                "-2.68",
                "12345678901234567000.000",
                "NULL",
                "123.4560012817",
                "NULL",
                "NULL"
            ],
        ]
    );
}

#[tokio::test]
async fn functions_of_strings_read_a_value_as_its_text() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("lpad(CAST(1 AS INT), 5, '0')", "00001"),
        ("rpad(CAST(1 AS INT), 3, 'x')", "1xx"),
        ("substr(123, 2, 1)", "2"),
        ("substring(123, 2)", "23"),
        ("length(12345)", "5"),
        ("instr(12345, '3')", "3"),
        ("upper(true)", "TRUE"),
        ("reverse(120)", "021"),
        // A double's text is Spark's: 80.0, not 80.
        ("split(80.0D, '\\\\.')[0]", "80"),
        ("locate('0', 80.0D)", "2"),
        ("replace(1.5D, '.', ',')", "1,5"),
        ("regexp_replace(2024, '2', 'x')", "x0x4"),
        ("substr(DATE '2024-01-05', 1, 4)", "2024"),
        ("length(TIMESTAMP '2024-01-05 10:00:00')", "19"),
        // Strings are still strings.
        ("length('abc')", "3"),
        ("substr('hello', 2, 3)", "ell"),
    ];
    answers(&engine, &session, &cases).await;
}

#[tokio::test]
async fn zeroifnull_and_nullifzero_answer_as_spark() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("zeroifnull(CAST(NULL AS INT))", "0"),
        ("typeof(zeroifnull(CAST(NULL AS INT)))", "int"),
        ("zeroifnull(2.5D)", "2.5"),
        ("nullifzero(CAST(0 AS INT)) IS NULL", "true"),
        ("nullifzero(3)", "3"),
    ];
    answers(&engine, &session, &cases).await;
}

#[tokio::test]
async fn a_string_with_an_exponent_casts_to_a_decimal_as_spark() {
    let engine = engine().await;
    let session = open(&engine);
    let cases = [
        ("CAST('1e3' AS DECIMAL(10,2))", "1000.00"),
        ("CAST('-4e1' AS DECIMAL(5,1))", "-40.0"),
        ("CAST('1.5e2' AS DECIMAL(6,1))", "150.0"),
        ("CAST('1E-2' AS DECIMAL(4,3))", "0.010"),
        ("CAST(' 12.345 ' AS DECIMAL(5,2))", "12.35"),
        ("CAST('abc' AS DECIMAL(5,2)) IS NULL", "true"),
        ("CAST('1e400' AS DECIMAL(5,2)) IS NULL", "true"),
    ];
    answers(&engine, &session, &cases).await;
    // A text column's amounts, `'-4e1'` among them (Spark's sum is -17.50).
    let rows = crate::test_util::value_rows(
        &engine,
        &session,
        &format!("SELECT sum(CAST(amount AS DECIMAL(10,2))) FROM {TEXT_NUMBERS}"),
    )
    .await;
    assert_eq!(rows, [["-17.50"]]);
}

#[tokio::test]
async fn numbers_and_timestamps_cast_as_seconds_since_1970() {
    let engine = engine().await;
    let session = open(&engine);
    // Spark 4.3's answers, as its text (its FLOAT left out: the engine writes a FLOAT's
    // shortest digits).
    let cases = [
        (
            "CAST(CAST(1704164645 AS TIMESTAMP) AS STRING)",
            "2024-01-02 03:04:05",
        ),
        (
            "CAST(CAST(1.5D AS TIMESTAMP) AS STRING)",
            "1970-01-01 00:00:01.5",
        ),
        (
            "CAST(CAST(-1.5D AS TIMESTAMP) AS STRING)",
            "1969-12-31 23:59:58.5",
        ),
        (
            "CAST(CAST(CAST(1704164645.123456 AS DECIMAL(16,6)) AS TIMESTAMP) AS STRING)",
            "2024-01-02 03:04:05.123456",
        ),
        (
            "CAST(CAST(TIMESTAMP '2024-01-02 03:04:05.678' AS DOUBLE) AS STRING)",
            "1.704164645678E9",
        ),
        (
            "CAST(TIMESTAMP '2024-01-02 03:04:05.678' AS BIGINT)",
            "1704164645",
        ),
        ("CAST(TIMESTAMP '1969-12-31 23:59:59.5' AS BIGINT)", "-1"),
        ("CAST(TIMESTAMP '2024-01-02 03:04:05' AS INT)", "1704164645"),
        ("CAST(CAST(NULL AS INT) AS TIMESTAMP) IS NULL", "true"),
        // Beyond DataFusion's nanosecond timestamps: NULL, where the query failed.
        ("CAST(1e12D AS TIMESTAMP) IS NULL", "true"),
    ];
    answers(&engine, &session, &cases).await;
    // In a VALUES list too, which reads no table.
    let rows = value_rows(
        &engine,
        &session,
        "SELECT * FROM (VALUES (CAST(TIMESTAMP '1970-01-01 00:00:01' AS DOUBLE), \
         CAST(CAST(60 AS TIMESTAMP) AS STRING)))",
    )
    .await;
    assert_eq!(rows, [["1.0", "1970-01-01 00:01:00"]]);
}
