use std::collections::BTreeMap;

use datafusion::arrow::datatypes::DataType;

use super::datetime::java_pattern;
use crate::engine::Engine;
use crate::session::Session;
use crate::test_util::{engine, error, formatted_rows, open, refusals, run_with, value_rows};

/// The rows of a query, each value as beeline prints it (NULL as `NULL`), and the
/// columns' types.
pub(super) async fn rows_with(
    engine: &Engine,
    session: &Session,
    sql: &str,
    overlay: &BTreeMap<String, String>,
) -> (Vec<Vec<String>>, Vec<DataType>) {
    let batches = run_with(engine, session, sql, overlay)
        .await
        .unwrap_or_else(|e| panic!("{sql} failed: {e}"));
    let types = batches
        .last()
        .map(|batch| {
            batch
                .schema()
                .fields()
                .iter()
                .map(|f| f.data_type().clone())
                .collect()
        })
        .unwrap_or_default();
    (formatted_rows(&batches), types)
}

/// The one row of a query on an engine of its own, each value as beeline prints it, and
/// the columns' types.
pub(super) async fn only_row(sql: &str) -> (Vec<String>, Vec<DataType>) {
    let engine = engine().await;
    let session = open(&engine);
    let (mut rows, types) = rows_with(&engine, &session, sql, &BTreeMap::new()).await;
    assert_eq!(rows.len(), 1, "{sql}: {rows:?}");
    (rows.remove(0), types)
}

/// The first row of a query and the columns' types.
async fn row_with(
    engine: &Engine,
    session: &Session,
    sql: &str,
    overlay: &BTreeMap<String, String>,
) -> (Vec<String>, Vec<DataType>) {
    let (rows, types) = rows_with(engine, session, sql, overlay).await;
    let first = rows
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{sql} returned no rows"));
    (first, types)
}

pub(super) async fn row(engine: &Engine, session: &Session, sql: &str) -> Vec<String> {
    row_with(engine, session, sql, &BTreeMap::new()).await.0
}

/// Asserts a query's one row, both optimized and with the optimizer off (the calls then run
/// un-rewritten, through [`super::HiveFunction`]'s own evaluation).
pub(crate) async fn check(engine: &Engine, session: &Session, sql: &str, expected: &[&str]) {
    assert_eq!(row(engine, session, sql).await, expected, "{sql}");
    let off = BTreeMap::from([("datafusion.optimizer.max_passes".to_owned(), "0".to_owned())]);
    let (unoptimized, _) = row_with(engine, session, sql, &off).await;
    assert_eq!(unoptimized, expected, "{sql} without the optimizer");
}

#[tokio::test]
async fn if_evaluates_only_the_branch_it_takes_and_isnull_tests_nulls() {
    let engine = engine().await;
    let session = open(&engine);
    // A NULL condition takes the else branch; the branches share a type.
    check(
        &engine,
        &session,
        "SELECT if(1 > 0, 'yes', 'no'), if(NULL, 1, 2.5), isnull(NULL), isnotnull(0)",
        &["yes", "2.5", "true", "true"],
    )
    .await;
    // A remainder of division by zero fails the query; if() must not evaluate the branch it
    // skips.
    // (Only once rewritten: with the optimizer off, a call's arguments are all evaluated.)
    assert_eq!(
        row(
            &engine,
            &session,
            "SELECT sum(if(x = 0, NULL, 12 % x)) FROM (VALUES (0), (5)) t(x)"
        )
        .await,
        ["2"]
    );
    let (_, types) = row_with(
        &engine,
        &session,
        "SELECT if(true, 1, 2.5)",
        &BTreeMap::new(),
    )
    .await;
    assert_eq!(types, [DataType::Float64]);
    let wrong = error(&engine, &session, "SELECT if('x', 1, 2)").await;
    assert!(
        wrong.to_string().contains("if takes (boolean condition"),
        "{wrong}"
    );
}

#[tokio::test]
async fn date_fields_read_dates_timestamps_and_strings() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT year('2024-03-05 10:11:12'), quarter(DATE '2024-03-05'), month('2024-03-05'), \
         day(TIMESTAMP '2024-03-05 10:11:12'), dayofmonth('2024-03-05'), \
         hour('2024-03-05 10:11:12'), minute('2024-03-05 10:11:12'), \
         second('2024-03-05 10:11:12.9'), dayofyear('2024-03-05')",
        &["2024", "1", "3", "5", "5", "10", "11", "12", "65"],
    )
    .await;
    // Hive's dayofweek: 1 is Sunday; weekofyear: ISO weeks (2021-01-03 is in 2020's 53rd).
    check(
        &engine,
        &session,
        "SELECT dayofweek('2024-03-03'), dayofweek('2024-03-09'), weekofyear('2021-01-03'), \
         weekofyear('2024-01-01')",
        &["1", "7", "53", "1"],
    )
    .await;
    // A string that is no date is NULL, as in Hive, not an error.
    check(
        &engine,
        &session,
        "SELECT year('not a date'), month(NULL)",
        &["NULL", "NULL"],
    )
    .await;
    let (_, types) = row_with(
        &engine,
        &session,
        "SELECT year('2024-01-01')",
        &BTreeMap::new(),
    )
    .await;
    assert_eq!(types, [DataType::Int32]);
}

#[tokio::test]
async fn date_arithmetic_follows_hive() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT datediff('2024-03-05', '2024-02-01 23:59:59'), datediff(DATE '2024-01-01', DATE '2024-01-31'), \
         date_add('2024-02-28', 2), date_sub(DATE '2024-03-01', 1), date_add('2024-01-01', -1)",
        &["33", "-30", "2024-03-01", "2024-02-29", "2023-12-31"],
    )
    .await;
    // The month's last day when it is shorter; from a last day, the last day.
    check(
        &engine,
        &session,
        "SELECT add_months('2024-01-31', 1), add_months('2024-02-29', 1), \
         add_months('2024-01-15', -2), add_months(TIMESTAMP '2024-12-31 10:00:00', 2), \
         add_months('2024-03-30', 1)",
        &[
            "2024-02-29",
            "2024-03-31",
            "2023-11-15",
            "2025-02-28",
            "2024-04-30",
        ],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT last_day('2024-02-10'), last_day(DATE '2023-12-01'), last_day('nope')",
        &["2024-02-29", "2023-12-31", "NULL"],
    )
    .await;
}

#[tokio::test]
async fn date_format_and_unix_times_take_java_patterns() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT date_format(TIMESTAMP '2024-03-05 14:07:09.345', 'yyyy-MM-dd HH:mm:ss.SSS'), \
         date_format('2024-03-05', 'EEE, d MMM yy'), \
         date_format(DATE '2024-03-05', 'yyyyMMdd''T''HH'), \
         date_format('2024-03-05 14:07:09', 'h:mm a'), \
         date_format('2024-03-05 14:07:09', '%Y/%m/%d %H')",
        &[
            "2024-03-05 14:07:09.345",
            "Tue, 5 Mar 24",
            "20240305T00",
            "2:07 PM",
            // With a %, the pattern is DataFusion's strftime, as before.
            "2024/03/05 14",
        ],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT from_unixtime(0), from_unixtime(86400 * 366, 'yyyy/MM/dd'), \
         unix_timestamp('1970-01-02 00:00:00'), unix_timestamp('02/01/1970', 'dd/MM/yyyy'), \
         unix_timestamp(DATE '1970-01-02'), unix_timestamp() > 1700000000, \
         from_unixtime(86400.5D), from_unixtime(CAST(86400.9 AS DECIMAL(7,1)), 'HH:mm:ss')",
        &[
            "1970-01-01 00:00:00",
            "1971/01/02",
            "86400",
            "86400",
            "86400",
            "true",
            // A fraction of a second is dropped, as Spark's (1970-01-02 00:00:00).
            "1970-01-02 00:00:00",
            "00:00:00",
        ],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT from_utc_timestamp('2024-01-01 12:00:00', 'Asia/Seoul'), \
         to_utc_timestamp(TIMESTAMP '2024-01-01 12:00:00', 'Asia/Seoul'), \
         from_utc_timestamp('2024-07-01 12:00:00', 'America/New_York')",
        &[
            "2024-01-01T21:00:00",
            "2024-01-01T03:00:00",
            "2024-07-01T08:00:00",
        ],
    )
    .await;
    let unsupported = error(
        &engine,
        &session,
        "SELECT date_format('2024-01-01', 'kk:mm')",
    )
    .await;
    assert!(
        unsupported
            .to_string()
            .contains("pattern letter 'k' in 'kk:mm' is not supported"),
        "{unsupported}"
    );
}

#[test]
fn java_patterns_become_strftime() {
    let strftime = |p: &str| java_pattern("f", p.to_owned()).unwrap();
    assert_eq!(strftime("yyyy-MM-dd HH:mm:ss"), "%Y-%m-%d %H:%M:%S");
    assert_eq!(strftime("yy/M/d H:m:s"), "%y/%-m/%-d %-H:%-M:%-S");
    assert_eq!(strftime("MMM MMMM EEE EEEE"), "%b %B %a %A");
    assert_eq!(
        strftime("hh a, SSS, SSSSSS, Z, XXX"),
        "%I %p, %3f, %6f, %z, %:z"
    );
    // Quoted text is literal, '' is a quote, and strftime's % is escaped.
    assert_eq!(strftime("'at' HH 'o''clock' 5%"), "at %H o'clock 5%%");
    assert_eq!(strftime("''yyyy''"), "'%Y'");
    assert!(java_pattern("f", "G yyyy".to_owned()).is_err());
}

#[tokio::test]
async fn date_format_writes_quarters_and_fractions_as_java() {
    // Spark 4.3's answers.
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT date_format(DATE'2024-05-07', 'Q QQ qqq'), \
         date_format(TIMESTAMP'2024-11-07 10:00:00', 'yyyy-QQQQ HH'), \
         date_format(CAST(NULL AS DATE), 'yyyy Q'), date_format(DATE'2024-01-01', \"QQQ''yy\")",
        &["2 02 Q2", "2024-4th quarter 10", "NULL", "Q1'24"],
    )
    .await;
    let refused = error(&engine, &session, "SELECT to_date('2024 2', 'yyyy Q')")
        .await
        .to_string();
    assert!(refused.contains("quarter"), "{refused}");
    // A fraction of a second in any count of digits, cut as Java cuts it.
    check(
        &engine,
        &session,
        "SELECT date_format(TIMESTAMP '2024-07-04 15:06:07.089', 's.S'), \
         date_format(TIMESTAMP '2024-07-04 15:06:07.089', 'ss.SS'), \
         date_format(TIMESTAMP '2024-07-04 15:06:07.089123', 'SSSSS|SSSSSSS|SSSSSSSS'), \
         date_format(TIMESTAMP '2024-07-04 15:06:07', 'SS Q')",
        &["7.0", "07.08", "08912|0891230|08912300", "00 3"],
    )
    .await;
    let refused = error(
        &engine,
        &session,
        "SELECT to_timestamp('2024-07-04 15:06:07.1', 'yyyy-MM-dd HH:mm:ss.S')",
    )
    .await
    .to_string();
    assert!(refused.contains("3, 6 or 9 digits"), "{refused}");
}

#[tokio::test]
async fn string_functions_follow_hive() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT split('a,b,,c,', ','), split('a1b22c', '[0-9]+'), split(NULL, ','), \
         split('a.b', '\\\\.'), size(split('', ','))",
        &["[a, b, , c, ]", "[a, b, c]", "NULL", "[a, b]", "1"],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT regexp_extract('foo123bar', '([a-z]+)([0-9]+)', 2), \
         regexp_extract('foo123bar', '[0-9]+', 0), regexp_extract('foo123', '([a-z]+)'), \
         regexp_extract('foo', '[0-9]+'), regexp_extract(NULL, 'x')",
        &["123", "123", "foo", "", "NULL"],
    )
    .await;
    // Every match, as in Hive; Spark's fourth argument is where the search starts. The
    // regexes are written as for Hive: '\\d' in SQL is the regex \d.
    check(
        &engine,
        &session,
        "SELECT regexp_replace('a1b2c3', '[0-9]', 'X'), \
         regexp_replace('2024-01-02', '(\\\\d+)-(\\\\d+)-(\\\\d+)', '$3/$2/$1'), \
         regexp_replace('a1b2', '[0-9]', 'X', 3), regexp_replace(NULL, 'a', 'b')",
        &["aXbXcX", "02/01/2024", "a1bX", "NULL"],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT sha2('abc', 256), sha2('abc', 0) = sha2('abc', 256), sha2('abc', 7), \
         concat('[', space(3), ']'), rlike('foobar', 'o+b')",
        &[
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "true",
            "NULL",
            "[   ]",
            "true",
        ],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT locate('b', 'abcb'), locate('b', 'abcb', 3), locate('z', 'abc'), \
         locate('b', 'abcb', 0), locate('b', NULL)",
        &["2", "4", "0", "0", "NULL"],
    )
    .await;
    check(
        &engine,
        &session,
        r#"SELECT get_json_object('{"a":{"b":[1,{"c":"x"}]}}', '$.a.b[1].c'),
                  get_json_object('{"a":{"b":[1,2]}}', '$.a'),
                  get_json_object('{"a":[{"b":1},{"b":2}]}', '$.a[*].b'),
                  get_json_object('{"k y":3}', '$[''k y'']'),
                  get_json_object('{"a":null}', '$.a'),
                  get_json_object('not json', '$.a'),
                  get_json_object('{"a":1}', 'a')"#,
        &["x", r#"{"b":[1,2]}"#, "[1,2]", "3", "NULL", "NULL", "NULL"],
    )
    .await;
}

#[tokio::test]
async fn collections_and_collecting_aggregates() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT size(array(1, 2, 3)), size(map(['a'], [1])), size(CAST(NULL AS ARRAY<INT>)), \
         size(array()), size(array(array(1, 2), array(3))), \
         sort_array(array(3, NULL, 1)), sort_array(array('b', NULL, 'a'), false)",
        &["3", "1", "-1", "0", "2", "[NULL, 1, 3]", "[b, a, NULL]"],
    )
    .await;
    // NULLs are skipped; a group with none collects an empty array; the set keeps the
    // first-read order.
    let sql = "SELECT k, collect_list(x), collect_set(x) \
               FROM (VALUES (1, 'b'), (1, 'a'), (1, 'b'), (1, NULL), (2, NULL)) t(k, x) \
               GROUP BY k ORDER BY k";
    for overlay in [
        BTreeMap::new(),
        BTreeMap::from([("datafusion.execution.target_partitions".into(), "4".into())]),
    ] {
        let (rows, types) = rows_with(&engine, &session, sql, &overlay).await;
        assert_eq!(
            rows,
            [["1", "[b, a, b]", "[b, a]"], ["2", "[]", "[]"]],
            "{overlay:?}"
        );
        assert_eq!(types[1], DataType::new_list(DataType::Utf8, true));
    }
    // Over a frame that slides, the frame's values (Spark 4.3's answers).
    assert_eq!(
        value_rows(
            &engine,
            &session,
            "SELECT a, concat_ws(',', collect_list(b) OVER (ORDER BY a ROWS BETWEEN 1 \
             PRECEDING AND 1 FOLLOWING)) AS l, concat_ws(',', collect_set(b) OVER (ORDER BY a \
             ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)) AS s FROM VALUES (1, 'x'), (2, NULL), \
             (3, 'x'), (4, 'z'), (5, 'y') AS t(a, b) ORDER BY a"
        )
        .await,
        [
            ["1", "x", "x"],
            ["2", "x,x", "x"],
            ["3", "x,z", "x"],
            ["4", "x,z,y", "x,z"],
            ["5", "z,y", "x,z,y"],
        ]
    );
    // The engine's other aggregates over a sliding frame, computed again as it moves
    // (Spark 4.3's answers).
    assert_eq!(
        value_rows(
            &engine,
            &session,
            "SELECT a, count_if(a > 1) OVER w AS c, max_by(b, a) OVER w AS m, \
             mode(a % 2) OVER w AS o, round(skewness(a) OVER w, 6) AS s, try_sum(a) OVER w AS t, \
             percentile_approx(a, 0.5) OVER w AS p FROM VALUES (1, 'x'), (2, 'y'), (4, 'z'), \
             (8, NULL) AS t(a, b) WINDOW w AS (ORDER BY a ROWS BETWEEN 2 PRECEDING AND CURRENT \
             ROW) ORDER BY a"
        )
        .await,
        [
            ["1", "0", "x", "1", "NULL", "1", "1"],
            ["2", "1", "y", "0", "0.0", "3", "1"],
            ["4", "2", "z", "0", "0.381802", "7", "2"],
            ["8", "3", "NULL", "0", "0.381802", "14", "4"],
        ]
    );
    // DataFusion's aggregates that cannot take rows back, over a sliding frame alike
    // (Spark 4.3's answers); `sum` still takes them back.
    assert_eq!(
        value_rows(
            &engine,
            &session,
            "SELECT a, bool_and(a > 1) OVER w AS ba, bool_or(a > 4) OVER w AS bo, \
             string_agg(b, ',') OVER w AS sa, approx_count_distinct(a % 3) OVER w AS ac, \
             any_value(a * 0) OVER w AS av, sum(a) OVER w AS s FROM VALUES (1, 'x'), (2, 'y'), \
             (4, 'z'), (8, NULL) AS t(a, b) WINDOW w AS (ORDER BY a ROWS BETWEEN 2 PRECEDING \
             AND CURRENT ROW) ORDER BY a"
        )
        .await,
        [
            ["1", "false", "false", "x", "1", "0", "1"],
            ["2", "false", "false", "x,y", "2", "0", "3"],
            ["4", "false", "false", "x,y,z", "2", "0", "7"],
            ["8", "true", "true", "y,z", "2", "0", "14"],
        ]
    );
}

#[tokio::test]
async fn pmod_and_hive_names_of_datafusion_functions() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT pmod(-7, 3), pmod(7, -3), pmod(7, 0), pmod(-7.5, 2)",
        &["2", "-2", "NULL", "0.5"],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT lcase('A'), ucase('a'), ceiling(1.2), array(1, 2)",
        &["a", "A", "2", "[1, 2]"],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT percentile_approx(x, 0.5), percentile(x, 0.5), approx_count_distinct(x), first(x), last(x) FROM (SELECT x FROM (VALUES (1), (2), (3)) t(x) ORDER BY x)",
        &["2", "2.0", "3", "1", "3"],
    )
    .await;
    // The sample's, as Spark's (Hive's are the population's).
    check(
        &engine,
        &session,
        "SELECT variance(x) = var_samp(x), std(x) = stddev_samp(x) FROM (VALUES (1.0), (2.0), (4.0)) t(x)",
        &["true", "true"],
    )
    .await;
}

#[tokio::test]
async fn show_functions_lists_the_hive_functions() {
    let engine = engine().await;
    let session = open(&engine);
    let listed = crate::test_util::lines(&engine, &session, "SHOW FUNCTIONS")
        .await
        .join("\n");
    for name in [
        "if",
        "isnull",
        "year",
        "dayofmonth",
        "date_format",
        "unix_timestamp",
        "collect_list",
        "collect_set",
        "get_json_object",
        "lcase",
        "percentile_approx",
    ] {
        assert!(
            listed.contains(&format!("| {name} ")),
            "{name} is not listed"
        );
    }
}

#[tokio::test]
async fn concat_and_substr_mean_what_they_mean_in_hive() {
    let engine = engine().await;
    let session = open(&engine);
    // concat is NULL with any NULL argument; concat_ws skips NULLs, as Hive's does.
    check(
        &engine,
        &session,
        "SELECT concat('a', NULL), concat('a', 1, DATE '2024-01-01'), concat('x'), \
         concat(array(1), array(2, 3)), concat_ws('-', 'a', NULL, 'b')",
        &["NULL", "a12024-01-01", "x", "[1, 2, 3]", "a-b"],
    )
    .await;
    // concat_ws joins an array's elements, as Hive's and Spark's (collect_list's report
    // idiom), skipping NULL elements and NULL arguments; a NULL separator gives NULL.
    check(
        &engine,
        &session,
        "SELECT concat_ws(',', array('a', 'b')), concat_ws('-', 'a', array('b', 'c'), 'd'), \
         concat_ws('-', array('x', NULL, 'y'), CAST(NULL AS ARRAY<STRING>), NULL, 'z'), \
         concat_ws(NULL, 'a', array('b')), concat_ws('/', array()), concat_ws('+', 1, array(2, 3))",
        &["a,b", "a-b-c-d", "x-y-z", "NULL", "", "1+2+3"],
    )
    .await;
    assert_eq!(
        rows_with(
            &engine,
            &session,
            "SELECT k, concat_ws(',', collect_list(v)) FROM (VALUES (1, 'a'), (1, 'b'), (2, NULL)) \
             t(k, v) GROUP BY k ORDER BY k",
            &BTreeMap::new(),
        )
        .await
        .0,
        [vec!["1", "a,b"], vec!["2", ""]]
    );
    // A negative start counts from the end; 0 is 1; beyond either end is ''.
    check(
        &engine,
        &session,
        "SELECT substr('hello', -3), substr('hello', 0), substr('hello', 2, 2), \
         substr('hello', -10), substr('hello', 6), substr('hello', 2, 0), \
         substring('héllo', -4, 2), substr(NULL, 1)",
        &["llo", "hello", "el", "", "", "", "él", "NULL"],
    )
    .await;
    // A binary value's bytes, alike (Spark's substr of a binary value is binary).
    check(
        &engine,
        &session,
        "SELECT hex(substr(X'010203', -2)), hex(substr(X'010203', 0, 1)), \
         hex(substring(X'010203', 2, 5)), hex(substr(X'010203', 4)), \
         typeof(substr(X'01', 1)), substr(CAST(NULL AS BINARY), 1)",
        &["0203", "01", "0203", "", "binary", "NULL"],
    )
    .await;
    // The SQL syntax means the same.
    assert_eq!(
        row(
            &engine,
            &session,
            "SELECT SUBSTRING('hello' FROM -2), SUBSTRING('hello' FROM 2 FOR 3)"
        )
        .await,
        ["lo", "ell"]
    );
    // A NULL position is NULL; a string where an integer is taken reads as Spark casts it
    // to an INT ('2.9' is 2, 'x' NULL). Answers from Spark 4.3.
    check(
        &engine,
        &session,
        "SELECT substr('hello', CAST(NULL AS INT)), substr('hello', s), substr('hello', '2', s), \
         repeat('ab', s), lpad('7', ' 3 ', '0'), left('hello', s), repeat('x', t) \
         FROM VALUES ('2.9', 'x') AS v(s, t)",
        &["NULL", "ello", "el", "abab", "007", "he", "NULL"],
    )
    .await;
}

#[tokio::test]
async fn trunc_to_date_and_months_between_follow_hive() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT trunc(DATE '2024-05-17', 'MM'), trunc('2024-05-17 10:00:00', 'YEAR'), \
         trunc('2024-05-17', 'Q'), trunc('2024-05-17', 'WEEK'), trunc('2024-05-17', 'DD'), \
         trunc(1.234, 1), trunc(5.7)",
        &[
            "2024-05-01",
            "2024-01-01",
            "2024-04-01",
            "2024-05-13",
            "NULL",
            "1.2",
            "5.0",
        ],
    )
    .await;
    // A decimal stays decimal through the numeric trunc, as with DataFusion's.
    let (_, types) = row_with(
        &engine,
        &session,
        "SELECT trunc(l_extendedprice, 1) FROM tpch.lineitem LIMIT 1",
        &BTreeMap::new(),
    )
    .await;
    assert!(matches!(types[0], DataType::Decimal128(..)), "{types:?}");
    // A string that is no date is NULL; patterns are Java's, or strftime with a %.
    check(
        &engine,
        &session,
        "SELECT to_date('2024-01-02 10:00:00'), to_date('garbage'), \
         to_date('02/01/2024', 'dd/MM/yyyy'), to_date('2024.01.02', '%Y.%m.%d')",
        &["2024-01-02", "NULL", "2024-01-02", "2024-01-02"],
    )
    .await;
    // A string the pattern cannot read is NULL, as in Hive, not a failed query; several
    // patterns are tried in order.
    check(
        &engine,
        &session,
        "SELECT to_date('garbage', 'dd/MM/yyyy'), unix_timestamp('garbage', 'dd/MM/yyyy'), \
         unix_timestamp('1970-01-02', 'yyyy-MM-dd HH:mm:ss'), \
         to_date('2024.01.02', 'dd/MM/yyyy', 'yyyy.MM.dd'), \
         unix_timestamp('1970-01-02 00:00:01.500', 'yyyy-MM-dd HH:mm:ss.SSS')",
        &["NULL", "NULL", "NULL", "2024-01-02", "86401"],
    )
    .await;
    // Hive's documented example; whole months for the same day or two last days.
    check(
        &engine,
        &session,
        "SELECT months_between('1997-02-28 10:30:00', '1996-10-30'), \
         months_between('2024-03-31', '2024-02-29'), \
         months_between('2024-03-15', '2024-01-15 10:00:00'), \
         months_between('2024-01-01', '2024-01-17', false)",
        &["3.94959677", "1.0", "2.0", "-0.5161290322580645"],
    )
    .await;
}

#[tokio::test]
async fn describe_function_gives_the_hive_functions_usage() {
    let engine = engine().await;
    let session = open(&engine);
    for (name, usage) in [
        (
            "year",
            "| year(date) - the year of a date, timestamp or date string |",
        ),
        ("dayofmonth", "| day(date) - the day of the month |"),
        (
            "collect_set",
            "| collect_set(x) - the group's distinct non-NULL values as an array |",
        ),
        (
            "get_json_object",
            "| get_json_object(json, '$.path') - the value at a JSONPath",
        ),
    ] {
        let lines =
            crate::test_util::lines(&engine, &session, &format!("DESCRIBE FUNCTION {name}")).await;
        assert!(lines[3].starts_with(usage), "{name}: {lines:?}");
    }
}

#[test]
fn every_hive_function_has_a_usage() {
    use super::*;
    let scalars = [
        aes::functions(),
        array_matches::functions(),
        arrays::functions(),
        assertions::functions(),
        bitmaps::functions(),
        bits::functions(),
        calendar_names::functions(),
        charsets::functions(),
        collections::functions(),
        conditional::functions(),
        csv_values::functions(),
        datetime::functions(),
        decimal_places::functions(),
        encoding::functions(),
        epochs::functions(),
        generators::functions(),
        hashes::functions(),
        java_regex::functions(),
        json::functions(),
        json_arrays::functions(),
        json_schemas::functions(),
        json_values::functions(),
        make_timestamp::functions(),
        maps::functions(),
        masking::functions(),
        math::functions(),
        number_formats::functions(),
        printf::functions(),
        quoting::functions(),
        reflect::functions(),
        row_ids::functions(),
        sentences::functions(),
        sequences::functions(),
        strings::functions(),
        timestamp_units::functions(),
        try_arithmetic::functions(),
        types_of::functions(),
        url_coding::functions(),
        xpath::functions(),
    ];
    let mut undescribed: Vec<String> = scalars
        .iter()
        .flatten()
        .filter(|udf| udf.documentation().is_none())
        .map(|udf| udf.name().to_owned())
        .collect();
    let aggregates = [
        bitmaps::aggregates(),
        collections::aggregates(),
        conditional::aggregates(),
        decimal_average::aggregates(),
        extremes::aggregates(),
        histogram::aggregates(),
        moments::aggregates(),
        most_frequent::aggregates(),
        ngrams::aggregates(),
        percentile_disc::aggregates(),
        quantile_summaries::aggregates(),
        try_aggregates::aggregates(),
    ];
    undescribed.extend(
        aggregates
            .iter()
            .flatten()
            .filter(|udaf| udaf.documentation().is_none())
            .map(|udaf| udaf.name().to_owned()),
    );
    assert!(undescribed.is_empty(), "no usage: {undescribed:?}");
}

#[test]
fn java_random_draws_javas_numbers() {
    use super::math::JavaRandom;
    // new java.util.Random(seed).nextDouble(), as Java prints them.
    let mut random = JavaRandom::new(42);
    assert_eq!(random.next_double(), 0.7275636800328681);
    assert_eq!(random.next_double(), 0.6832234717598454);
    assert_eq!(random.next_double(), 0.30871945533265976);
    assert_eq!(JavaRandom::new(0).next_double(), 0.730967787376657);
    assert_eq!(JavaRandom::new(-7).next_double(), 0.2691218093260761);
    // new java.util.Random(seed).nextGaussian(), as Java 21 prints them.
    let mut random = JavaRandom::new(42);
    assert_eq!(random.next_gaussian(), 1.1419053154730547);
    assert_eq!(random.next_gaussian(), 0.9194079489827879);
    assert_eq!(random.next_gaussian(), -0.9498666368908959);
    assert_eq!(JavaRandom::new(0).next_gaussian(), 0.8025330637390305);
}

#[tokio::test]
async fn randn_draws_normal_numbers() {
    let engine = engine().await;
    let session = open(&engine);
    // Seeded: java.util.Random(42)'s first nextGaussian; over many rows a mean near 0 and a
    // standard deviation near 1 (a fixed seed, so the same figures on every run).
    // (Optimized, as every query runs: a call left unsimplified restarts its sequence on each
    // batch, as the Rand documentation says.)
    assert_eq!(
        row(
            &engine,
            &session,
            "SELECT randn(42), abs(avg(x)) < 0.01, abs(stddev(x) - 1) < 0.01, \
             count(DISTINCT y) > 99990 \
             FROM (SELECT randn(7) AS x, randn() AS y FROM range(100000))",
        )
        .await,
        ["1.1419053154730547", "true", "true", "true"]
    );
}

#[tokio::test]
async fn rand_with_a_seed_repeats_hives_numbers() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT rand(42), rand(NULL), rand(-7) < 1",
        &["0.7275636800328681", "0.730967787376657", "true"],
    )
    .await;
    // One number per row, in order; each call draws its own, and every run the same.
    let three = "SELECT x, rand(42) AS a, rand(42) AS b FROM (VALUES (1), (2), (3)) t(x)";
    let expected = [
        ["1", "0.7275636800328681", "0.7275636800328681"],
        ["2", "0.6832234717598454", "0.6832234717598454"],
        ["3", "0.30871945533265976", "0.30871945533265976"],
    ];
    for _ in 0..2 {
        let (rows, types) = rows_with(&engine, &session, three, &BTreeMap::new()).await;
        assert_eq!(rows, expected);
        assert_eq!(types[1], DataType::Float64);
    }
    // A seed from a column: its first row's, as Hive reads it.
    let (rows, _) = rows_with(
        &engine,
        &session,
        "SELECT rand(s) FROM (VALUES (42), (0)) t(s)",
        &BTreeMap::new(),
    )
    .await;
    assert_eq!(rows, [["0.7275636800328681"], ["0.6832234717598454"]]);
    // A sample: the same rows on every run.
    let sample = "SELECT count(*), sum(n_nationkey) FROM tpch.nation WHERE rand(3) < 0.5";
    let first = row(&engine, &session, sample).await;
    assert_eq!(row(&engine, &session, sample).await, first);
    // Without a seed, DataFusion's random().
    check(
        &engine,
        &session,
        "SELECT count(DISTINCT rand()), min(rand()) >= 0, max(rand()) < 1 FROM tpch.nation",
        &["25", "true", "true"],
    )
    .await;
}

#[tokio::test]
async fn small_hive_functions_datafusion_lacks() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT e(), negative(2), positive(-2.5), sign(-3), shiftleft(1, 4), shiftright(-16, 2), ~5",
        &["2.718281828459045", "-2", "-2.5", "-1.0", "16", "-4", "-6"],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT hex(255), hex(-1), hex('Hi'), base64(CAST('ab' AS BINARY)), base64('abc'), hex(NULL)",
        &["FF", "FFFFFFFFFFFFFFFF", "4869", "YWI=", "YWJj", "NULL"],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT elt(2, 'a', 'b', 'c'), elt(0, 'a'), elt(4, 'a', 'b'), elt(-1, 'a', 'b'), elt(1, 5)",
        &["b", "NULL", "NULL", "NULL", "5"],
    )
    .await;
}

#[test]
fn url_parts_as_java_reads_them() {
    use super::strings::url_part;
    let url = "http://user:pw@Example.com:8080/a/b.html?k=1&x=2&k=3#top";
    let part = |p| url_part(url, p, None);
    assert_eq!(part("HOST").as_deref(), Some("Example.com"));
    assert_eq!(part("PATH").as_deref(), Some("/a/b.html"));
    assert_eq!(part("QUERY").as_deref(), Some("k=1&x=2&k=3"));
    assert_eq!(part("REF").as_deref(), Some("top"));
    assert_eq!(part("PROTOCOL").as_deref(), Some("http"));
    assert_eq!(part("FILE").as_deref(), Some("/a/b.html?k=1&x=2&k=3"));
    assert_eq!(
        part("AUTHORITY").as_deref(),
        Some("user:pw@Example.com:8080")
    );
    assert_eq!(part("USERINFO").as_deref(), Some("user:pw"));
    assert_eq!(part("host"), None);
    assert_eq!(url_part(url, "QUERY", Some("k")).as_deref(), Some("1"));
    assert_eq!(url_part(url, "QUERY", Some("x")).as_deref(), Some("2"));
    assert_eq!(url_part(url, "QUERY", Some("y")), None);
    // Parts a URL lacks; an IPv6 host; no URL at all.
    assert_eq!(url_part("http://a.com", "PATH", None).as_deref(), Some(""));
    assert_eq!(url_part("http://a.com", "QUERY", None), None);
    assert_eq!(url_part("http://a.com", "USERINFO", None), None);
    assert_eq!(
        url_part("http://[::1]:80/x", "HOST", None).as_deref(),
        Some("[::1]")
    );
    assert_eq!(url_part("no url", "HOST", None), None);
}

#[tokio::test]
async fn parse_url_reads_a_column_of_urls() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT parse_url('https://a.com/p?q=1#f', 'HOST'), parse_url('https://a.com/p?q=1', 'QUERY', 'q'), parse_url('x', 'HOST'), parse_url(NULL, 'HOST')",
        &["a.com", "1", "NULL", "NULL"],
    )
    .await;
    let (rows, _) = rows_with(
        &engine,
        &session,
        "SELECT parse_url(u, 'PATH') FROM (VALUES ('http://a/b'), ('http://c/d?e')) t(u)",
        &BTreeMap::new(),
    )
    .await;
    assert_eq!(rows, [["/b"], ["/d"]]);
}

#[tokio::test]
async fn str_to_map_reads_pairs_as_hive() {
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT str_to_map('a:1,b:2')['b'], str_to_map('k=v;x', ';', '=')['x'] IS NULL, \
         size(str_to_map('a:1,a:2,')), str_to_map('a:1,a:2')['a'], str_to_map('a|1', ',', '\\\\|')['a'], \
         str_to_map(NULL) IS NULL",
        &["2", "true", "1", "2", "1", "true"],
    )
    .await;
    let (rows, types) = rows_with(
        &engine,
        &session,
        "SELECT str_to_map(s) FROM (VALUES ('x:1,y:2'), ('')) t(s)",
        &BTreeMap::new(),
    )
    .await;
    // "" is one pair, an empty key without a value, as Java splits it.
    assert_eq!(rows, [["{x: 1, y: 2}"], ["{: NULL}"]]);
    assert!(matches!(types[0], DataType::Map(..)));
    let refused = error(&engine, &session, "SELECT str_to_map('a1b', '[0-9]')")
        .await
        .to_string();
    assert!(refused.contains("is a regex"), "{refused}");
}

#[tokio::test]
async fn number_and_byte_conversions_follow_hive() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT conv('100', 2, 10), conv(-10, 16, -10), conv('ff', 16, 10), conv(255, 10, 16), \
         conv('-1', 10, 16), conv('12z', 10, 16), conv('1', 1, 10), conv(NULL, 10, 2)",
        &[
            "4",
            "-16",
            "255",
            "FF",
            "FFFFFFFFFFFFFFFF",
            "C",
            "NULL",
            "NULL",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT conv('18446744073709551616', 10, 16), conv('-9', 10, -2), bin(13), bin(-1), bin(0), \
         bin(' 5.9 '), bin('x') IS NULL, conv('abc', 10, 2)",
        &[
            "FFFFFFFFFFFFFFFF",
            "-1001",
            "1101",
            &"1".repeat(64),
            "0",
            "101",
            "true",
            "0",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT CAST(unhex('4869') AS STRING), CAST(unhex('F') AS STRING) = '\\u000f', \
         unhex('zz') IS NULL, CAST(unbase64('SGk=') AS STRING), CAST(unbase64('SGk') AS STRING), \
         CAST(unbase64(base64(CAST('abc' AS BINARY))) AS STRING)",
        &["Hi", "true", "true", "Hi", "Hi", "abc"],
    )
    .await;
    // Spark 4.3's base 32 and HMACs.
    check(
        &engine,
        &s,
        "SELECT to_base32('Spark SQL'), CAST(from_base32('KNYGC4TLEBJVCTA=') AS STRING), \
         CAST(from_base32('knyg C4TL') AS STRING), to_base32(X'00'), to_base32(''), \
         hex(from_base32('!!')), to_base32(NULL) IS NULL",
        &[
            "KNYGC4TLEBJVCTA=",
            "Spark SQL",
            "Spark",
            "AA======",
            "",
            "",
            "true",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT hex(hmac('key', 'msg')), hex(hmac('key', 'msg', 'sha-256')) = hex(hmac('key', \
         'msg', 'SHA256')), hex(hmac('key', 'msg', 'SHA-224')), hex(hmac('key', 'msg', 'MD5')), \
         hex(hmac(X'00ff', X'0102')), hmac(NULL, 'msg') IS NULL, hmac('k', 'm', NULL) IS NULL, \
         typeof(hmac('k', 'm'))",
        &[
            "2D93CBC1BE167BCB1637A4A23CBFF01A7878F0C50EE833954EA5221BB1B8C628",
            "true",
            "AFEA596463272CDA5A2A49FF64D8E2B7AFE35B3604E09A14793041FE",
            "18E3548C59AD40DD03907B7AEEE71D67",
            "2EA122EB2890AC45344D5C3F215FF94AFB34241C379FB06B32ED5B56DEEB70E4",
            "true",
            "true",
            "binary",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT hex(hmac('key', 'msg', 'SHA-512'))",
        &["1E4B55B925CCC28ED90D9D18FC2393FCBE164C0D84E67E173CC5AA486B7AFC106633C66BDC309076F5F8D9FDBBB62456F894F2C23377FBCC12F4AB2940EB6D70"],
    )
    .await;
    refusals(
        &engine,
        &s,
        &[
            ("SELECT hmac('', 'msg')", "the key is empty"),
            (
                "SELECT hmac('k', 'msg', 'SHA-3')",
                "'SHA-3' is not an HMAC algorithm",
            ),
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT sha1('abc'), sha('abc') = sha1(CAST('abc' AS BINARY)), sha1(''), crc32('ABC'), \
         crc32(''), sha1(NULL) IS NULL",
        &[
            "a9993e364706816aba3e25717850c26c9cd0d89d",
            "true",
            "da39a3ee5e6b4b0d3255bfef95601890afd80709",
            "2743272264",
            "0",
            "true",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT soundex('Miller'), soundex('Ashcraft'), soundex('Tymczak'), soundex('Pfister'), \
         soundex(''), soundex('a')",
        &["M460", "A261", "T522", "P236", "", "A000"],
    )
    .await;
    // Java's hashCode of each value, as Hive's hash.
    check(
        &engine,
        &s,
        "SELECT hash('abc'), hash('a', 'b'), hash(CAST(-1 AS INT)), hash(CAST(-1 AS BIGINT)), \
         hash(true), hash(NULL), hash(CAST(1.5 AS DOUBLE)), hash(CAST('é' AS STRING))",
        &["96354", "3105", "-1", "0", "1", "0", "1073217536", "-1978"],
    )
    .await;
}

#[tokio::test]
async fn rounding_and_formatting_numbers_follow_hive() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT bround(2.5), bround(3.5), bround(-2.5), bround(8.25, 1), bround(2.675, 2), \
         bround(15, -1), bround(25, -1), bround(1234, 2), bround(0.5), bround(NULL)",
        &[
            "2.0", "4.0", "-2.0", "8.2", "2.68", "20", "20", "1234", "0.0", "NULL",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT format_number(1234567.891, 2), format_number(12332.123456, 4), \
         format_number(0.5, 0), format_number(1.5, 0), format_number(-1234, 1), \
         format_number(CAST(2.345 AS DECIMAL(10,3)), 2), format_number(CAST(1234.5 AS DECIMAL(10,1)), 0), \
         format_number(5, -1) IS NULL, format_number(CAST(0.004 AS DECIMAL(5,3)), 2)",
        &[
            "1,234,567.89",
            "12,332.1235",
            "0",
            "2",
            "-1,234.0",
            "2.34",
            "1,234",
            "true",
            "0.00",
        ],
    )
    .await;
}

#[tokio::test]
async fn next_day_and_current_user() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT next_day('2015-01-14', 'TU'), next_day('2015-01-14', 'wed'), \
         next_day(DATE '2015-01-14', 'Wednesday'), next_day('2015-01-18', 'SUN'), \
         next_day('2015-01-14', 'x') IS NULL, next_day('nope', 'MO') IS NULL",
        &[
            "2015-01-20",
            "2015-01-21",
            "2015-01-21",
            "2015-01-25",
            "true",
            "true",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT current_user() AS a, current_user AS b, logged_in_user() AS c",
        &["alice", "alice", "alice"],
    )
    .await;
}

#[tokio::test]
async fn printf_writes_as_javas_string_format() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT printf('%s has %d items', 'cart', 3) AS a, printf('%.2f|%5d|%-4s|%05d', 2.675, 42, 'ab', -42) AS b, \
         printf('%,d %x %X %o %%', 1234567, 255, -1, 8) AS c, format_string('%2$s %1$s', 'a', 'b') AS d, \
         printf('%s %s %b', 1.5, NULL, true) AS e, printf(NULL, 1) IS NULL AS f, printf('%+.1f %.0f', 0.25, 2.5) AS g",
        &[
            "cart has 3 items",
            "2.68|   42|ab  |-0042",
            "1,234,567 ff FFFFFFFFFFFFFFFF 10 %",
            "b a",
            "1.5 null true",
            "true",
            "+0.3 3",
        ],
    )
    .await;
    let message = error(&engine, &s, "SELECT printf('%d', 1.5)")
        .await
        .to_string();
    assert!(message.contains("%d takes an integer"), "{message}");
    // Spark 4.3's answers.
    check(
        &engine,
        &s,
        "SELECT printf('%e|%.2e|%E|%.0e|%12.3e|%e|%e|%-12e|', 12345.678, 0.000123456, 1.5, \
         9.5, -2.5, 0.0, 1e300, 1D), printf('%e', CAST('NaN' AS DOUBLE)), printf('%+e', 5D), \
         printf('%e', 9.9999996)",
        &[
            "1.234568e+04|1.23e-04|1.500000E+00|1e+01|  -2.500e+00|0.000000e+00|1.000000e+300|1.000000e+00|",
            "NaN",
            "+5.000000e+00",
            "1.000000e+01",
        ],
    )
    .await;
    let message = error(&engine, &s, "SELECT printf('%g', 1.5)")
        .await
        .to_string();
    assert!(message.contains("%g is not supported"), "{message}");
}

#[test]
fn digests_and_conversions_of_known_values() {
    use super::encoding::{base64_decode, convert_base, crc32_of, sha1_digest, unhex_text};
    use super::math::{bround_double, bround_integer, format_decimal, format_double};
    let hex = |d: [u8; 20]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
    assert_eq!(
        hex(sha1_digest(
            b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        )),
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
    );
    assert_eq!(crc32_of(b"123456789"), 0xCBF4_3926);
    assert_eq!(base64_decode("SGVs\nbG8="), b"Hello");
    assert_eq!(unhex_text("abc"), Some(vec![0x0a, 0xbc]));
    assert_eq!(convert_base("zz", 36, 10).as_deref(), Some("1295"));
    assert_eq!(convert_base("", 10, 2), None);
    assert_eq!(bround_double(1e300, 2), 1e300);
    assert_eq!(bround_double(0.125, 2), 0.12);
    assert_eq!(bround_double(9.99, 1), 10.0);
    assert_eq!(bround_integer(-25, -1), -20);
    assert_eq!(bround_integer(-35, -1), -40);
    assert_eq!(format_double(-0.001, 2), "-0.00");
    assert_eq!(format_double(999.995, 2), "1,000.00");
    assert_eq!(format_decimal(99995, 2, 1), "1,000.0");
    assert_eq!(format_decimal(-5, 0, 3), "-5.000");
}

#[tokio::test]
async fn field_finds_a_value_among_its_arguments() {
    let engine = engine().await;
    let s = open(&engine);
    // From 1; 0 when absent or for a NULL value; a NULL candidate equals nothing.
    check(
        &engine,
        &s,
        "SELECT field('b', 'a', 'b', 'b'), field('z', 'a'), field(NULL, 'a', NULL), \
         field(2, 1, NULL, 2.0), field('a', NULL, 'a')",
        &["2", "0", "0", "3", "2"],
    )
    .await;
}

#[tokio::test]
async fn width_bucket_numbers_equal_buckets_from_one() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT width_bucket(5.3, 0.2, 10.6, 5), width_bucket(-1, 0, 10, 5), \
         width_bucket(10, 0, 10, 5), width_bucket(8, 10, 0, 5), width_bucket(1, 0, 10, 0), \
         width_bucket(1, 5, 5, 3), width_bucket(NULL, 0, 1, 2)",
        &["3", "0", "6", "2", "NULL", "NULL", "NULL"],
    )
    .await;
}

#[tokio::test]
async fn masks_replace_letters_and_digits_as_hive_does() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT mask('AbC-d12 é'), mask('AbC-d12', 'U', 'l', '#'), mask('Ab1-', NULL, '', 'D', '*'), \
         mask(NULL), mask(1234)",
        &["XxX-xnn x", "UlU-l##", "XxD*", "NULL", "nnnn"],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT mask_first_n('1234-5678'), mask_last_n('1234-5678', 2), \
         mask_show_first_n('1234-5678'), mask_show_last_n('AbCd', 1, 'Q'), \
         mask_first_n('ab', -1), mask_last_n('abc', 9)",
        &["nnnn-5678", "1234-56nn", "1234-nnnn", "QxQd", "ab", "xxx"],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT mask_hash('abc'), mask_hash(NULL)",
        &[
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "NULL",
        ],
    )
    .await;
}

#[tokio::test]
async fn encode_and_decode_take_charsets_and_keep_hex_and_base64() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT hex(encode('é', 'UTF-16')), hex(encode('é', 'utf-16le')), \
         hex(encode('é', 'ISO-8859-1')), hex(encode('é', 'UTF-8')), hex(encode('', 'UTF-16')), \
         decode(unhex('FFFE6100'), 'UTF-16'), decode(unhex('00E9'), 'UTF-16BE'), \
         decode(unhex('E9'), 'latin1'), decode(encode('abc', 'US-ASCII'), 'US-ASCII'), \
         decode(NULL, 'UTF-8')",
        &[
            "FEFF00E9", "E900", "E9", "C3A9", "", "a", "é", "é", "abc", "NULL",
        ],
    )
    .await;
    // DataFusion's encodings are as they were.
    check(
        &engine,
        &s,
        "SELECT encode('ab', 'hex'), encode('ab', 'base64'), \
         CAST(decode('6162', 'hex') AS STRING), CAST(decode('YWI', 'base64') AS STRING)",
        &["6162", "YWI", "ab", "ab"],
    )
    .await;
    let message = error(&engine, &s, "SELECT encode('é', 'US-ASCII')")
        .await
        .to_string();
    assert!(
        message.contains("has a character that has no bytes in US-ASCII"),
        "{message}"
    );
    let message = error(&engine, &s, "SELECT decode(unhex('FF'), 'UTF-8')")
        .await
        .to_string();
    assert!(
        message.contains("holds bytes that are not text in UTF-8"),
        "{message}"
    );
    let message = error(&engine, &s, "SELECT encode('a', 'EBCDIC')")
        .await
        .to_string();
    assert!(message.contains("unknown charset 'EBCDIC'"), "{message}");
}

#[tokio::test]
async fn sentences_split_text_as_javas_break_iterator() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT sentences('Hello there! I am a UDF.'), sentences(''), sentences(NULL), \
         sentences('It costs $5.50, i.e. 3.5% of U.S.A.\\'s don\\'t-care budget. next one? Yes!!  Ok'), \
         sentences('Dr. Smith went home. the end', 'en', 'US')",
        &[
            "[[Hello, there], [I, am, a, UDF]]",
            "[]",
            "NULL",
            // Two marks in a row end a word; a period before a quote and a letter ends a
            // sentence, one before a space and a lower-case letter none.
            "[[It, costs, i.e, 3.5%, of, U.S.A], [s, don't-care, budget, next, one], [Yes], [Ok]]",
            "[[Dr], [Smith, went, home, the, end]]",
        ],
    )
    .await;
}

#[tokio::test]
async fn ngrams_counts_the_most_frequent_word_sequences() {
    let engine = engine().await;
    let s = open(&engine);
    let (rows, _) = rows_with(
        &engine,
        &s,
        "SELECT ngrams(sentences(lower(t)), 2, 3) FROM (VALUES ('The cat sat. The cat ran!'), \
         ('the cat sat'), (NULL)) v(t)",
        &BTreeMap::new(),
    )
    .await;
    // Most frequent first, then in the order of the words.
    assert_eq!(
        rows,
        [[
            "[{ngram: [the, cat], estfrequency: 3.0}, {ngram: [cat, sat], estfrequency: 2.0}, \
             {ngram: [cat, ran], estfrequency: 1.0}]"
        ]]
    );
    // Of arrays of words, and NULL for a group without an n-gram.
    check(
        &engine,
        &s,
        "SELECT ngrams(array('a', 'b', 'a', 'b'), 1, 1), ngrams(array('a'), 2, 1)",
        &["[{ngram: [a], estfrequency: 2.0}]", "NULL"],
    )
    .await; // In a context: the words in its NULLs where its words match; NULL words never match.
    let (rows, _) = rows_with(
        &engine,
        &s,
        "SELECT context_ngrams(sentences(lower(t)), array('i', 'love', NULL), 2), \
         context_ngrams(sentences(lower(t)), array(NULL, 'love', NULL), 5, 10) \
         FROM (VALUES ('I love cats. I love dogs! You love cats'), ('i love cats'), (NULL)) v(t)",
        &BTreeMap::new(),
    )
    .await;
    assert_eq!(
        rows,
        [[
            "[{ngram: [cats], estfrequency: 2.0}, {ngram: [dogs], estfrequency: 1.0}]",
            "[{ngram: [i, cats], estfrequency: 2.0}, {ngram: [i, dogs], estfrequency: 1.0}, \
             {ngram: [you, cats], estfrequency: 1.0}]"
        ]]
    );
    check(
        &engine,
        &s,
        "SELECT context_ngrams(array('a', 'b', 'a', 'c'), array('a', NULL), 3), \
         context_ngrams(array('a'), array('z', NULL), 1)",
        &[
            "[{ngram: [b], estfrequency: 1.0}, {ngram: [c], estfrequency: 1.0}]",
            "NULL",
        ],
    )
    .await;
    let e = error(
        &engine,
        &s,
        "SELECT context_ngrams(array('a'), array('a'), 1)",
    )
    .await
    .to_string();
    assert!(
        e.contains("context_ngrams: the context must hold a NULL"),
        "{e}"
    );
}

#[tokio::test]
async fn histogram_numeric_merges_the_closest_bins() {
    let engine = engine().await;
    let s = open(&engine);
    // Up to b distinct values: exact; NULLs skipped; NULL for a group without a value.
    check(
        &engine,
        &s,
        "SELECT histogram_numeric(x, 5), histogram_numeric(CASE WHEN x > 9 THEN x END, 3) \
         FROM (VALUES (1), (2), (2), (3), (NULL)) t(x)",
        &[
            "[{x: 1.0, y: 1.0}, {x: 2.0, y: 2.0}, {x: 3.0, y: 1.0}]",
            "NULL",
        ],
    )
    .await;
    // Beyond: the closest pair merged into its weighted mean (no ties here).
    check(
        &engine,
        &s,
        "SELECT histogram_numeric(x, 2) FROM (VALUES (1.0), (2.0), (2.5), (10.0)) t(x)",
        &["[{x: 1.8333333333333333, y: 3.0}, {x: 10.0, y: 1.0}]"],
    )
    .await;
}

#[tokio::test]
async fn json_values_are_written_as_hives_jackson_writes_them() {
    let engine = engine().await;
    let s = open(&engine);
    // Keys in the text's order, numbers as Java writes them, the last of a repeated key.
    check(
        &engine,
        &s,
        r#"SELECT get_json_object('{"o": {"z": 1, "a": [1.5, 12345678.9, 1e-4, true, null]}}', '$.o'), get_json_object('{"k": 1, "k": "two"}', '$.k'), get_json_object('{"a": [{"b": 1}, {"b": 2}]}', '$.a[*].b')"#,
        &[
            r#"{"z":1,"a":[1.5,1.23456789E7,1.0E-4,true,null]}"#,
            "two",
            "[1,2]",
        ],
    )
    .await;
}

#[tokio::test]
async fn xpath_functions_answer_as_hives_documentation_and_spark() {
    let engine = engine().await;
    let s = open(&engine);
    // Hive's examples (LanguageManual XPathUDF), answered as the Spark Thrift Server answers.
    check(
        &engine,
        &s,
        r#"SELECT xpath('<a><b>b1</b><b>b2</b></a>', 'a/*/text()'), xpath('<a><b id="foo">b1</b><b id="bar">b2</b></a>', '//@id'), xpath('<a><b class="bb">b1</b><b>b2</b><b>b3</b><c class="bb">c1</c><c>c2</c></a>', 'a/*[@class="bb"]/text()'), xpath('<a><b id="1"><c/></b><b id="2"><c/></b></a>', '/descendant::c/ancestor::b/@id'), xpath('<a><b>b1</b><b>b2</b></a>', 'a/*'), xpath('<a><b>b1</b><!--x--><?p q?></a>', 'a/node()')"#,
        &["[b1, b2]", "[foo, bar]", "[b1, c1]", "[1, 2]", "[]", "[x, q]"],
    )
    .await;
    check(
        &engine,
        &s,
        r#"SELECT xpath_string('<a><b>bb</b><c>cc</c></a>', 'a/b'), xpath_string('<a><b>bb</b><c>cc</c></a>', 'a'), xpath_string('<a><b>bb</b><c>cc</c></a>', 'a/d'), xpath_string('<a><b>b1</b><b>b2</b></a>', '//b'), xpath_string('<a><b>b1</b><b>b2</b></a>', 'a/b[2]'), xpath_string('<a><b>b1</b><b id="b_2">b2</b></a>', 'a/b[@id="b_2"]')"#,
        &["bb", "bbcc", "", "b1", "b2", "b2"],
    )
    .await;
    // Numbers written as XPath writes them.
    check(
        &engine,
        &s,
        "SELECT xpath_string('<a><b>3</b></a>', 'a/b div 2'), xpath_string('<a><b>3</b></a>', 'a/b * 2'), xpath_string('<a/>', '1 div 0'), xpath_string('<a/>', '0 div 0'), xpath_string('<a/>', '0.1 + 0.2'), xpath_string('<a/>', '1 = 1'), xpath_string('<a/>', '-0'), xpath_string('<a/>', '123456789012345678901234567890'), xpath_string('<a/>', '0.0000001')",
        &["1.5", "6", "Infinity", "NaN", "0.30000000000000004", "true", "0", "123456789012345680000000000000", "0.0000001"],
    )
    .await;
    check(
        &engine,
        &s,
        r#"SELECT xpath_boolean('<a><b>b</b></a>', 'a/b'), xpath_boolean('<a><b>b</b></a>', 'a/c'), xpath_boolean('<a><b>b</b></a>', 'a/b = "b"'), xpath_boolean('<a><b>b</b></a>', 'a/b = "c"'), xpath_boolean('<a><b>10</b></a>', 'a/b < 10'), xpath_boolean('<a><b>10</b></a>', 'a/b = 10')"#,
        &["true", "false", "true", "false", "false", "true"],
    )
    .await;
    // Java's narrowing: NaN is 0, a number out of range its bound, a short the int's bits.
    check(
        &engine,
        &s,
        r#"SELECT xpath_int('<a>b</a>', 'a = 10'), xpath_int('<a>this is not a number</a>', 'a'), xpath_int('<a>this 2 is not a number</a>', 'a'), xpath_int('<a><b>1</b><b>2</b><b>4</b><c>8</c></a>', 'sum(a/*)'), xpath_int('<a><b>1</b><b>2</b><b>4</b><c>8</c></a>', 'sum(a/b)'), xpath_int('<a><b class="odd">1</b><b class="even">2</b><b class="odd">4</b><c>8</c></a>', 'sum(a/b[@class="odd"])'), xpath_int('<a><b>2000000000</b><c>40000000000</c></a>', 'a/b * a/c'), xpath_long('<a><b>2000000000</b><c>40000000000</c></a>', 'a/b * a/c'), xpath_short('<a><b>2000000000</b><c>40000000000</c></a>', 'a/b * a/c'), xpath_short('<a><b>70000</b></a>', 'a/b'), xpath_long('<a><b>-3.7</b></a>', 'a/b')"#,
        &["0", "0", "0", "15", "7", "5", "2147483647", "9223372036854775807", "-1", "4464", "-3"],
    )
    .await;
    // A text is a number as Java's XPath reads one: no exponent, no plus sign.
    check(
        &engine,
        &s,
        "SELECT xpath_double('<a><b>2000000000</b><c>40000000000</c></a>', 'a/b * a/c'), xpath_double('<a>b</a>', 'a = 10'), xpath_double('<a>no</a>', 'a'), xpath_number('<a><b> 1.5 </b></a>', 'a/b'), xpath_double('<a><b>1e3</b></a>', 'a/b'), xpath_double('<a><b>+3</b></a>', 'a/b'), xpath_double('<a><b>.5</b></a>', 'a/b'), xpath_float('<a><b>0.5</b></a>', 'a/b')",
        &["8e19", "0.0", "NaN", "1.5", "NaN", "NaN", "0.5", "0.5"],
    )
    .await;
    // NULL or empty XML or path: NULL. Namespaces ignored, as Java's default parser does;
    // entities and CDATA read; attributes in the order of their names.
    check(
        &engine,
        &s,
        r#"SELECT xpath_int(NULL, 'a'), xpath_int('', 'a'), xpath_string('<a>x</a>', ''), xpath('', 'a'), xpath_string('<a xmlns="urn:x"><b>in ns</b></a>', '/a/b'), xpath_string('<p:a xmlns:p="urn:x"><p:b>pre</p:b></p:a>', '/a/b'), xpath_string('<a>&lt;&amp;&#65;<![CDATA[<x>]]></a>', 'a'), xpath('<a><b y="2" x="1" z="3"/></a>', 'a/b/@*'), xpath_string('<?xml version="1.0"?><!DOCTYPE a><a>d</a>', 'a')"#,
        &["NULL", "NULL", "NULL", "NULL", "in ns", "pre", "<&A<x>", "[1, 2, 3]", "d"],
    )
    .await;
    // A column of documents, and a path from a column.
    let (rows, types) = rows_with(
        &engine,
        &s,
        "SELECT xpath_int(x, p) FROM (VALUES ('<a>1</a>', 'a'), ('<a><b>2</b></a>', 'a/b'), (NULL, 'a'), ('<a>3</a>', 'a')) t(x, p)",
        &BTreeMap::new(),
    )
    .await;
    assert_eq!(rows, [["1"], ["2"], ["NULL"], ["3"]]);
    assert_eq!(types, [DataType::Int32]);
    // Malformed XML and an invalid path fail the query, saying what and where.
    let e = error(&engine, &s, "SELECT xpath_string('<a><b>1</b></aa>', 'a')")
        .await
        .to_string();
    assert!(
        e.contains(
            "xpath_string: the XML is malformed at line 1, column 14 (mismatched element end name)"
        ),
        "{e}"
    );
    let e = error(&engine, &s, "SELECT xpath('<a><b/></a>', 'count(a/b)')")
        .await
        .to_string();
    assert!(
        e.contains("xpath: the XPath expression gives a value ('1'), not nodes"),
        "{e}"
    );
    let e = error(&engine, &s, "SELECT xpath_int('<a>1</a>', 'a[')")
        .await
        .to_string();
    assert!(
        e.contains("xpath_int: 'a[' is not a valid XPath 1.0 expression"),
        "{e}"
    );
}

#[tokio::test]
async fn reflect_calls_the_java_methods_analysts_call() {
    let engine = engine().await;
    let s = open(&engine);
    // Hive's and Spark's documented examples, answered as the Spark Thrift Server answers.
    check(
        &engine,
        &s,
        "SELECT reflect('java.lang.String', 'valueOf', 1), reflect('java.lang.Math', 'max', 2, 3), \
         java_method('java.lang.Math', 'round', 2.5), reflect('java.lang.Math', 'exp', 1.0), \
         reflect('java.lang.Math', 'floor', 1.9), reflect('java.lang.Math', 'abs', -3), \
         reflect('java.lang.Math', 'pow', 2.0, 10.0), reflect('java.lang.Math', 'floorMod', -7, 3), \
         reflect('java.lang.Math', 'floorDiv', -7, 3), reflect('java.lang.Math', 'round', -2.5), \
         reflect('java.lang.Math', 'max', 2.0, 3.0), reflect('java.lang.Math', 'signum', -2.5)",
        &[
            "1", "3", "3", "2.718281828459045", "1.0", "3", "1024.0", "2", "-3", "-2", "3.0",
            "-1.0",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT reflect('java.util.UUID', 'fromString', 'A5CF6C42-0C85-418F-AF6C-3E4E5B1328F2'), \
         reflect('java.net.URLDecoder', 'decode', 'a%20b+c%C3%A9', 'UTF-8'), \
         reflect('java.net.URLEncoder', 'encode', 'a b&c=é~*._-', 'UTF-8'), \
         reflect('java.lang.Integer', 'parseInt', '42'), \
         reflect('java.lang.Integer', 'toHexString', -1), \
         reflect('java.lang.Long', 'toHexString', -1), \
         reflect('java.lang.Integer', 'toString', 255, 16), \
         reflect('java.lang.Double', 'parseDouble', '1e3'), \
         reflect('java.lang.Boolean', 'parseBoolean', 'TRUE'), \
         reflect('java.lang.String', 'valueOf', 1e20), reflect('java.lang.String', 'valueOf', true), \
         reflect('java.lang.Math', 'max', 2, CAST(NULL AS INT))",
        &[
            "a5cf6c42-0c85-418f-af6c-3e4e5b1328f2",
            "a b cé",
            "a+b%26c%3D%C3%A9%7E*._-",
            "42",
            "ffffffff",
            "ffffffffffffffff",
            "ff",
            "1000.0",
            "true",
            "1.0E20",
            "true",
            "NULL",
        ],
    )
    .await;
    // A value for each row, even of constant arguments.
    let (rows, _) = rows_with(
        &engine,
        &s,
        "SELECT count(DISTINCT reflect('java.util.UUID', 'randomUUID')), \
         max(CAST(reflect('java.lang.Math', 'random') AS DOUBLE)) < 1 \
         FROM (VALUES (1), (2), (3)) t(x)",
        &BTreeMap::new(),
    )
    .await;
    assert_eq!(rows, [["3", "true"]]);
    // Another method, and what Java throws, fail the query, naming the call.
    for (sql, expected) in [
        (
            "SELECT reflect('java.lang.Runtime', 'getRuntime')",
            "reflect: java.lang.Runtime.getRuntime() is not available in this engine",
        ),
        (
            "SELECT reflect('java.lang.Math', 'max', 'a', 1)",
            "reflect: java.lang.Math.max('a', 1) is not available in this engine",
        ),
        (
            "SELECT reflect('java.lang.Integer', 'parseInt', 'x')",
            "reflect: java.lang.Integer.parseInt('x') threw NumberFormatException: For input \
             string: \"x\"",
        ),
        (
            "SELECT reflect('java.lang.Math', 'floorMod', 1, 0)",
            "threw ArithmeticException: / by zero",
        ),
    ] {
        let e = error(&engine, &s, sql).await.to_string();
        assert!(e.contains(expected), "{sql}: {e}");
    }
}

#[tokio::test]
async fn url_encode_and_decode_as_javas_form_encoding() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT url_encode('a b&c=é~'), url_decode('a%20b+c%C3%A9'), try_url_decode('%zz'), \
         try_url_decode('ok%21'), url_decode(NULL), url_decode('%C3')",
        &[
            "a+b%26c%3D%C3%A9%7E",
            "a b cé",
            "NULL",
            "ok!",
            "NULL",
            "\u{fffd}",
        ],
    )
    .await;
    for (sql, expected) in [
        (
            "SELECT url_decode('%zz')",
            "url_decode: illegal hex characters in escape (%) pattern at index 0 of '%zz'",
        ),
        (
            "SELECT url_decode('a%2')",
            "url_decode: incomplete trailing escape (%) pattern in 'a%2'",
        ),
    ] {
        let e = error(&engine, &s, sql).await.to_string();
        assert!(e.contains(expected), "{sql}: {e}");
    }
}

#[tokio::test]
async fn sparks_common_functions_the_engine_lacked() {
    let engine = engine().await;
    let s = open(&engine);
    // Bits: Java's >>>, Long.bitCount, a bit by position. The literal -16 is an INT, so it
    // shifts as 32 bits.
    check(
        &engine,
        &s,
        "SELECT shiftrightunsigned(-16, 28), shiftrightunsigned(CAST(-16 AS BIGINT), 60), \
         shiftrightunsigned(CAST(-16 AS INT), 28), shiftrightunsigned(16, 2), bit_count(7), \
         bit_count(-1), bit_count(true), bit_get(11, 0), getbit(11, 2), bit_get(NULL, 1)",
        &["15", "15", "15", "4", "3", "64", "1", "1", "0", "NULL"],
    )
    .await;
    let e = error(&engine, &s, "SELECT bit_get(CAST(1 AS INT), 32)")
        .await
        .to_string();
    assert!(
        e.contains("bit_get: the bit position 32 is outside 0..31"),
        "{e}"
    );
    // Every match's group; '' for a group that took no part; [] without a match.
    check(
        &engine,
        &s,
        "SELECT regexp_extract_all('100-200, 300-400', '(\\\\d+)-(\\\\d+)'), \
         regexp_extract_all('100-200, 300-400', '(\\\\d+)-(\\\\d+)', 2), \
         regexp_extract_all('a1b', '[0-9]', 0), regexp_extract_all('ab', '(x)?b')[0] = '', \
         size(regexp_extract_all('abc', '([0-9])')), regexp_extract_all(NULL, 'a')",
        &["[100, 300]", "[200, 400]", "[1]", "true", "0", "NULL"],
    )
    .await;
    let e = error(&engine, &s, "SELECT regexp_extract_all('a', '(a)', 2)")
        .await
        .to_string();
    assert!(
        e.contains("regexp_extract_all: the regex '(a)' has 1 groups"),
        "{e}"
    );
    // Collections and division; Spark's names of DataFusion's functions.
    check(
        &engine,
        &s,
        "SELECT array_size(array(1, NULL, 3)), array_size(array()), \
         array_size(CAST(NULL AS INT[])), map_contains_key(map('a', 1), 'a'), \
         map_contains_key(map('a', 1), 'b'), try_divide(1, 2), try_divide(1, 0), \
         startswith('hello', 'he'), endswith('hello', 'lo'), len('héllo'), \
         date_diff('2024-03-05', '2024-03-01'), dateadd('2024-02-28', 2)",
        &[
            "3",
            "0",
            "NULL",
            "true",
            "false",
            "0.5",
            "NULL",
            "true",
            "true",
            "5",
            "4",
            "2024-03-01",
        ],
    )
    .await;
    // DataFusion's current_date answers only once simplified (the optimizer on).
    assert_eq!(
        row(&engine, &s, "SELECT curdate() = current_date()").await,
        ["true"]
    );
    check(
        &engine,
        &s,
        "SELECT regexp('foobar', 'o+b'), to_unix_timestamp('1970-01-02 00:00:00'), \
         to_unix_timestamp('02/01/1970', 'dd/MM/yyyy')",
        &["true", "86400", "86400"],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT istrue(NULL), isfalse(1 > 2), isnottrue(NULL), isnotfalse(1 > 2), \
         expm1(0), log1p(0), rint(2.5), rint(3.5), hypot(3, 4), expm1(NULL)",
        &[
            "false", "true", "true", "false", "0.0", "0.0", "2.0", "4.0", "5.0", "NULL",
        ],
    )
    .await;
    // count_if counts true rows (NULL as false): 0 for a group without one, or no rows.
    assert_eq!(
        row(
            &engine,
            &s,
            "SELECT count_if(x > 1) FROM (VALUES (1)) t(x) WHERE x > 5"
        )
        .await,
        ["0"]
    );
    check(
        &engine,
        &s,
        "SELECT every(x > 0), some(x > 2), any(x > 5), count_if(x > 1), \
         count_if(CASE WHEN x > 2 THEN NULL ELSE x > 1 END), count_if(x > 9) \
         FROM (VALUES (1), (2), (3)) t(x)",
        &["true", "true", "false", "2", "1", "0"],
    )
    .await;
}

#[tokio::test]
async fn date_trunc_takes_sparks_units() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT date_trunc('YEAR', '2024-07-04 13:05:09'), date_trunc('YYYY', '2024-07-04'), \
         date_trunc('QUARTER', '2024-08-04'), date_trunc('MON', '2024-07-04'), \
         date_trunc('WEEK', '2024-07-04 13:05:09'), date_trunc('DD', '2024-07-04 13:05:09'), \
         date_trunc('hour', DATE '2024-07-04'), date_trunc('MINUTE', '2024-07-04 13:05:09')",
        &[
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00",
            "2024-07-01T00:00:00",
            "2024-07-01T00:00:00",
            "2024-07-01T00:00:00",
            "2024-07-04T00:00:00",
            "2024-07-04T00:00:00",
            "2024-07-04T13:05:00",
        ],
    )
    .await;
    // A unit Spark does not know, or a text that is no timestamp: NULL.
    check(
        &engine,
        &s,
        "SELECT date_trunc('bogus', '2024-07-04') IS NULL, date_trunc('D', '2024-07-04') IS NULL, \
         date_trunc('year', 'x') IS NULL, date_trunc('SECOND', TIMESTAMP '2024-07-04 13:05:09.123')",
        &["true", "true", "true", "2024-07-04T13:05:09"],
    )
    .await;
}

#[tokio::test]
async fn split_by_the_empty_pattern_and_chr_answer_as_spark() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT split('Alice', ''), split('', ''), split('a,b,', ','), split(',a', ','), \
         char(321), chr(0) = '\\u0000', char(-1), chr(65.7)",
        &[
            "[A, l, i, c, e]",
            "[]",
            "[a, b, ]",
            "[, a]",
            "A",
            "true",
            "",
            "A",
        ],
    )
    .await;
}

/// Spark's functions computed value by value answer each row of a column for itself (NULL
/// rows, arrays of other lengths), as Spark does.
#[tokio::test]
async fn sparks_computed_functions_answer_row_by_row() {
    let engine = engine().await;
    let s = open(&engine);
    let (rows, _) = rows_with(
        &engine,
        &s,
        "SELECT slice(a, s, 2), array_insert(a, s, 0), sequence(s, e), map_from_arrays(a, a), \
         try_add(s, e), json_array_length(j) FROM (VALUES \
         (array(1, 2, 3), 1, 3, '[1]'), (NULL, 2, 1, NULL), (array(4, 5), -1, 2, '[]'), \
         (array(6), 3, 3, '[[1,2],3]')) t(a, s, e, j)",
        &BTreeMap::new(),
    )
    .await;
    assert_eq!(
        rows,
        [
            [
                "[1, 2]",
                "[0, 1, 2, 3]",
                "[1, 2, 3]",
                "{1: 1, 2: 2, 3: 3}",
                "4",
                "1"
            ],
            ["NULL", "NULL", "[2, 1]", "NULL", "3", "NULL"],
            [
                "[5]",
                "[4, 5, 0]",
                "[-1, 0, 1, 2]",
                "{4: 4, 5: 5}",
                "1",
                "0"
            ],
            ["[]", "[6, NULL, 0]", "[3]", "{6: 6}", "6", "2"],
        ]
    );
}

#[tokio::test]
async fn to_timestamp_unix_timestamp_and_make_date_answer_as_spark() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT to_timestamp('2024-01-05 10:11:12', 'yyyy-MM-dd HH:mm:ss'), \
         to_timestamp('05/01/2024 10:11', 'dd/MM/yyyy HH:mm'), \
         to_timestamp('x', 'yyyy-MM-dd') IS NULL, to_timestamp('2024-01-05 10:11:12'), \
         to_timestamp('bad') IS NULL",
        &[
            "2024-01-05T10:11:12",
            "2024-01-05T10:11:00",
            "true",
            "2024-01-05T10:11:12",
            "true",
        ],
    )
    .await;
    // A date or timestamp needs no pattern: the one given is passed over.
    check(
        &engine,
        &s,
        "SELECT unix_timestamp(TIMESTAMP '2024-01-15 09:30:00', 'yyyy-MM-dd'), \
         unix_timestamp(DATE '2024-01-15', 'yyyy')",
        &["1705311000", "1705276800"],
    )
    .await;
    // A day no calendar has is NULL, not a failed query.
    check(
        &engine,
        &s,
        "SELECT make_date(2024, 13, 1) IS NULL, make_date(2024, 2, 30) IS NULL, \
         make_date(2024, 2, 29), make_date(NULL, 1, 1) IS NULL",
        &["true", "true", "2024-02-29", "true"],
    )
    .await;
}

#[tokio::test]
async fn reverse_and_array_sort_of_arrays_answer_as_spark() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT reverse(array(1, 2, 3)), reverse('abc'), array_sort(array(3, 1, NULL, 2)), \
         array_sort(array('b', NULL, 'a'))",
        &["[3, 2, 1]", "cba", "[1, 2, 3, NULL]", "[a, b, NULL]"],
    )
    .await;
}

#[tokio::test]
async fn javas_three_letter_zones_are_taken_as_hive_and_spark_take_them() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT from_utc_timestamp(TIMESTAMP '2024-01-04 12:00:00', 'PST'), \
         from_utc_timestamp('2024-07-04 12:00:00', 'PST'), \
         to_utc_timestamp('2024-07-04 12:00:00', 'EST'), \
         from_utc_timestamp('2024-07-04 12:00:00', 'IST')",
        &[
            "2024-01-04T04:00:00",
            "2024-07-04T05:00:00",
            "2024-07-04T17:00:00",
            "2024-07-04T17:30:00",
        ],
    )
    .await;
}

#[tokio::test]
async fn roots_and_logarithms_outside_their_domain_answer_as_spark() {
    let engine = engine().await;
    let s = open(&engine);
    // sqrt of a negative number failed the query; the logarithms gave NaN and -Infinity.
    check(
        &engine,
        &s,
        "SELECT sqrt(-1), sqrt(4), ln(-1.0) IS NULL, log10(0) IS NULL, log2(-1) IS NULL, \
         log2(8), log(10), log(10, 100), log(-2, 8) IS NULL, log(0, 8) IS NULL, log(1, 8), ln(1)",
        &[
            "NaN",
            "2.0",
            "true",
            "true",
            "true",
            "3.0",
            "2.302585092994046",
            "2.0",
            "true",
            "true",
            "inf",
            "0.0",
        ],
    )
    .await;
}

#[tokio::test]
async fn element_at_initcap_and_date_from_unix_date_answer_as_spark() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT element_at(array(1, 2, 3), 1), element_at(array(1, 2, 3), -1), \
         element_at(array(1, 2, 3), 5) IS NULL, element_at(map('a', 1), 'a'), \
         element_at(map('a', 1), 'b') IS NULL, initcap('frank o''neil-x  hi'), \
         date_from_unix_date(1)",
        &[
            "1",
            "3",
            "true",
            "1",
            "true",
            "Frank O'neil-x  Hi",
            "1970-01-02",
        ],
    )
    .await;
}

#[tokio::test]
async fn replace_without_a_replacement_removes_as_spark() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT replace('abc', 'b'), replace('abc', 'b', 'x'), replace('abc', ''), \
         replace(NULL, 'a') IS NULL, replace('aaa', 'a', NULL) IS NULL",
        &["ac", "axc", "abc", "true", "true"],
    )
    .await;
}

#[tokio::test]
async fn sparks_newer_scalars_answer_as_spark() {
    // Spark 4.3's answers.
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT regexp_instr('abc123def', '([a-z])([0-9])', 2), regexp_instr('h\u{e9}llo1', '[0-9]'), \
         regexp_instr('abc', 'x'), regexp_instr(NULL, 'x'), regexp_instr('abc', '(x)?b', 1), \
         typeof(regexp_instr('a', 'a')), get(array(1, 2), -1), get(array(1, 2), 0), \
         get(array(1, 2), 5), levenshtein('abc', NULL, 1), levenshtein('kitten', 'sitting', 3), \
         levenshtein('kitten', 'sitting', 2), levenshtein('kitten', 'sitting')",
        &[
            "3", "6", "0", "NULL", "2", "int", "NULL", "1", "NULL", "NULL", "3", "-1", "3",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT factorial(-1), factorial(20), factorial(21), csc(1), sec(1), \
         equal_null(1, NULL), equal_null(1, 1), equal_null(NULL, NULL), div(7.5, 2), \
         div(-7, 2), div(1, 0), typeof(div(7, 2)), 7 DIV 2, (9) div (2)",
        &[
            "NULL",
            "2432902008176640000",
            "NULL",
            "1.1883951057781212",
            "1.8508157176809255",
            "false",
            "true",
            "true",
            "3",
            "-3",
            "NULL",
            "bigint",
            "3",
            "4",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT make_valid_utf8(X'61ff62'), try_validate_utf8(X'ff'), validate_utf8('a'), \
         make_valid_utf8('b'), current_catalog(), current_catalog, user() = current_user(), \
         session_user() = current_user(), try_parse_url('http://h/p?q=1', 'QUERY', 'q')",
        &[
            "a\u{fffd}b",
            "NULL",
            "a",
            "b",
            "datafusion",
            "datafusion",
            "true",
            "true",
            "1",
        ],
    )
    .await;
    let failed = error(&engine, &s, "SELECT validate_utf8(X'ff')").await;
    assert!(
        failed.to_string().contains("X'FF' is not UTF-8"),
        "{failed}"
    );
    check(
        &engine,
        &s,
        "SELECT typeof(grouping(a)), typeof(regr_count(a, a)) FROM VALUES (1) AS t(a) \
         GROUP BY ROLLUP(a) ORDER BY 1 LIMIT 1",
        &["tinyint", "bigint"],
    )
    .await;
}

#[tokio::test]
async fn sparks_binary_texts_checks_and_row_ids() {
    // Spark 4.3's answers.
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT luhn_check('79927398713'), luhn_check('79927398710'), luhn_check(''), \
         luhn_check('1a'), luhn_check(NULL), is_valid_utf8('abc'), is_valid_utf8(X'80'), \
         position('b', 'abcb', 3), position('b', 'abcb'), position('z', 'abc', 1), \
         POSITION('c' IN 'abc')",
        &[
            "true", "false", "false", "false", "NULL", "true", "false", "4", "2", "0", "3",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT hex(to_binary('abc')), hex(to_binary('616263', 'hex')), \
         hex(to_binary('YWJj', 'base64')), hex(to_binary('YWJ', 'base64')), \
         hex(to_binary('héllo', 'utf-8')), try_to_binary('zz', 'hex'), \
         try_to_binary('a$', 'base64'), hex(to_binary('AbC', 'HEX'))",
        &[
            "0ABC",
            "616263",
            "616263",
            "6162",
            "68C3A96C6C6F",
            "NULL",
            "NULL",
            "0ABC",
        ],
    )
    .await;
    for (sql, expected) in [
        ("SELECT to_binary('zz', 'hex')", "'zz' is not hex text"),
        (
            "SELECT to_binary('x', 'octal')",
            "'hex', 'base64' or 'utf-8', not 'octal'",
        ),
    ] {
        let message = error(&engine, &s, sql).await.to_string();
        assert!(message.contains(expected), "{sql}: {message}");
    }
    // Unique, increasing within the one partition of a small input, a BIGINT.
    check(
        &engine,
        &s,
        "SELECT count(DISTINCT id), min(id) < max(id), typeof(min(id)) \
         FROM (SELECT monotonically_increasing_id() AS id FROM range(1000)) t",
        &["1000", "true", "bigint"],
    )
    .await;
}

#[tokio::test]
async fn date_functions_read_a_string_as_sparks_cast_reads_it() {
    // Spark 4.3's answers (Hive's documentation gives hour('12:58:59') = 12 too): a time
    // alone, one-digit months and days, a zone.
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT hour('12:58:59'), minute('12:58:59'), second('12:58:59'), \
         to_date('2024-3-5'), datediff('2024-3-5', '2024-03-01'), year(' 2024-03-05 '), \
         hour('2024-03-05T14:07:09Z'), month('2024-03'), hour('not a time')",
        &[
            "12",
            "58",
            "59",
            "2024-03-05",
            "4",
            "2024",
            "14",
            "3",
            "NULL",
        ],
    )
    .await;
    // A function of a day reads its string as a date: what follows the day is passed over.
    check(
        &engine,
        &s,
        "SELECT year('2024-03-05 junk'), dayofmonth('2024-03-05T10:00'), \
         dayofweek('2024-03-05 x'), weekofyear('2024-03-05abc'), quarter('2024-3-5'), \
         dayofyear('  2024-03-05'), month('junk')",
        &["2024", "5", "3", "NULL", "1", "65", "NULL"],
    )
    .await;
}

#[tokio::test]
async fn abs_and_negation_of_the_smallest_integer_wrap_as_in_spark() {
    // pyspark 4.3's answers (`spark.sql.ansi.enabled=false`); DataFusion failed the query.
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT abs(-2147483648), -(-2147483648), abs(CAST('-9223372036854775808' AS BIGINT)), \
         typeof(abs(-2147483648)), abs(CAST(-128 AS TINYINT)), typeof(abs(CAST(-1 AS SMALLINT))), \
         abs(-5), abs(-2.5), abs('-3'), abs(NULL)",
        &[
            "-2147483648",
            "-2147483648",
            "-9223372036854775808",
            "int",
            "-128",
            "smallint",
            "5",
            "2.5",
            "3.0",
            "NULL",
        ],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT abs(x), -x, negative(x), positive(x) FROM VALUES (-2147483648) AS t(x)",
        &["-2147483648", "-2147483648", "-2147483648", "-2147483648"],
    )
    .await;
}

#[tokio::test]
async fn length_counts_a_strings_characters_and_a_binary_values_bytes() {
    // pyspark 4.3's answers; DataFusion read a binary value as text, and one that is not
    // UTF-8 failed the query.
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT length(X'0102'), length('구미호'), char_length(X'00FF'), \
         character_length('ab'), len('abc'), length(123), length(1.5D), typeof(length('a'))",
        &["2", "3", "2", "2", "3", "3", "3", "int"],
    )
    .await;
}

#[tokio::test]
async fn every_name_of_an_aggregate_can_be_called_in_one_query() {
    // pyspark 4.3's answers; `bool_or(x), some(x)` failed the plan with a duplicate name.
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT bool_or(x), some(x), bool_and(x), every(x), any(x) \
         FROM VALUES (true), (false) AS t(x)",
        &["true", "true", "false", "false", "true"],
    )
    .await;
}

#[tokio::test]
async fn try_and_zoned_forms_of_the_timestamp_functions_answer_as_spark() {
    // pyspark 4.3's answers.
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT try_to_timestamp('nope'), try_to_timestamp('17/05/2024', 'dd/MM/yyyy'), \
         try_to_timestamp('2024-05-17 10:00:00'), try_to_date('x'), \
         try_to_date('17/05/2024', 'dd/MM/yyyy')",
        &[
            "NULL",
            "2024-05-17T00:00:00",
            "2024-05-17T10:00:00",
            "NULL",
            "2024-05-17",
        ],
    )
    .await;
    check(
        &engine,
        &session,
        "SELECT to_timestamp_ntz('2024-05-17 10:11:12'), to_timestamp_ltz('2024-05-17', \
         'yyyy-MM-dd'), make_timestamp_ntz(2024, 5, 17, 10, 11, 12.5), \
         make_timestamp_ltz(2024, 5, 17, 10, 11, 12), try_make_timestamp(2024, 13, 1, 0, 0, 0)",
        &[
            "2024-05-17T10:11:12",
            "2024-05-17T00:00:00",
            "2024-05-17T10:11:12.500",
            "2024-05-17T10:11:12",
            "NULL",
        ],
    )
    .await;
}

#[tokio::test]
async fn convert_timezone_reads_a_wall_clock_time_of_one_zone_in_another() {
    // pyspark 4.3's answers (a UTC session).
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT CAST(convert_timezone('Asia/Seoul', TIMESTAMP'2024-01-01 00:00:00') AS STRING), \
         CAST(convert_timezone('UTC', 'Asia/Seoul', TIMESTAMP'2024-01-01 00:00:00') AS STRING), \
         CAST(convert_timezone('America/Los_Angeles', 'UTC', '2024-03-10 02:30:00') AS STRING), \
         CAST(convert_timezone('UTC', '+05:30', TIMESTAMP'2024-01-01 00:00:00') AS STRING), \
         convert_timezone(NULL, 'UTC', TIMESTAMP'2024-01-01 00:00:00')",
        &[
            "2024-01-01 09:00:00",
            "2024-01-01 09:00:00",
            "2024-03-10 10:30:00",
            "2024-01-01 05:30:00",
            "NULL",
        ],
    )
    .await;
    let message = error(
        &engine,
        &session,
        "SELECT convert_timezone('Mars/X', 'UTC', TIMESTAMP'2024-01-01 00:00:00')",
    )
    .await
    .to_string();
    assert!(message.contains("'Mars/X' is not a time zone"), "{message}");
}

#[tokio::test]
async fn ltrim_rtrim_and_trim_of_two_arguments_take_the_characters_first_as_in_spark() {
    // pyspark 4.3's answers.
    let engine = engine().await;
    let session = open(&engine);
    check(
        &engine,
        &session,
        "SELECT ltrim('x', 'xxa'), rtrim('x', 'axx'), ltrim('xxa', 'x'), btrim('xxaxx', 'x'), \
         trim('xxaxx', 'x'), trim('x', 'xxaxx'), ltrim('  a'), TRIM(LEADING 'x' FROM 'xxa')",
        &["a", "a", "", "a", "", "a", "a", "a"],
    )
    .await;
}

#[tokio::test]
async fn window_time_is_a_windows_last_microsecond() {
    // Spark 4.3's answers.
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT window_time(window(TIMESTAMP '2024-01-01 10:07:00', '5 minutes')), \
         typeof(window_time(window(TIMESTAMP '2024-01-01 10:07:00', '5 minutes')))",
        &["2024-01-01T10:09:59.999999", "timestamp"],
    )
    .await;
    let refused = error(&engine, &s, "SELECT window_time(1)")
        .await
        .to_string();
    assert!(refused.contains("a time window"), "{refused}");
}

#[tokio::test]
async fn uniform_draws_within_its_bounds_the_same_numbers_for_a_seed() {
    let engine = engine().await;
    let s = open(&engine);
    // Spark's types: an INT of INT bounds, a DOUBLE when a bound is one.
    check(
        &engine,
        &s,
        "SELECT typeof(uniform(1, 10, 0)), typeof(uniform(1, 10)), typeof(uniform(1.0D, 2.0D, 3)), \
         typeof(uniform(1, 10.5D, 1)), typeof(uniform(1, 3000000000, 1))",
        &["int", "int", "double", "double", "bigint"],
    )
    .await;
    let draws = "SELECT min(u), max(u), count(DISTINCT u), sum(u) FROM (SELECT uniform(5, 15, 42) \
                 AS u FROM generate_series(1, 2000)) t";
    let first = value_rows(&engine, &s, draws).await;
    let [min, max, distinct, _] = &first[0][..] else {
        panic!("{first:?}")
    };
    assert!(
        min.parse::<i32>().unwrap() >= 5 && max.parse::<i32>().unwrap() < 15,
        "{first:?}"
    );
    assert_eq!(distinct, "10", "{first:?}");
    // The seed's numbers again, in another run.
    assert_eq!(value_rows(&engine, &s, draws).await, first);
    let doubles = value_rows(
        &engine,
        &s,
        "SELECT min(u) >= -1.0, max(u) < 1.0, count(DISTINCT u) > 1 FROM (SELECT \
         uniform(-1.0D, 1.0D) AS u FROM generate_series(1, 100)) t",
    )
    .await;
    assert_eq!(doubles, [["true", "true", "true"]]);
}

#[tokio::test]
async fn randstr_draws_letters_and_digits_the_same_strings_for_a_seed() {
    let engine = engine().await;
    let s = open(&engine);
    // Spark's shapes: the length asked for, '' of 0 or NULL, a STRING.
    check(
        &engine,
        &s,
        "SELECT length(randstr(5, 0)), randstr(5, 0) RLIKE '^[0-9a-zA-Z]{5}$', randstr(0, 1), \
         randstr(NULL, 0), typeof(randstr(3)), length(randstr(10))",
        &["5", "true", "", "", "string", "10"],
    )
    .await;
    // Over more rows than a batch holds, the seed's sequence goes on: no string repeats, and
    // another run draws the same ones.
    let draws = "SELECT count(DISTINCT r), min(length(r)), max(r) FROM (SELECT randstr(8, 7) r \
                 FROM generate_series(1, 20000)) t";
    let first = value_rows(&engine, &s, draws).await;
    assert_eq!(first[0][..2], ["20000", "8"], "{first:?}");
    assert_eq!(value_rows(&engine, &s, draws).await, first);
    refusals(
        &engine,
        &s,
        &[(
            "SELECT randstr(-1, 0)",
            "the length must be 0 or more; it is -1",
        )],
    )
    .await;
}
