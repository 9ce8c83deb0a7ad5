//! `to_json` and `from_json` against what pyspark 3.5 (local, UTC session) answers to the
//! same SQL; each expected value is Spark's, noted beside it.

use std::collections::BTreeMap;

use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

use crate::engine::Engine;
use crate::session::Session;
use crate::test_util::{engine, error, open, run_with};

/// The first row of a query, each value as Arrow displays it (NULL as `NULL`), and the
/// columns' types.
async fn first_row(
    engine: &Engine,
    session: &Session,
    sql: &str,
    overlay: &BTreeMap<String, String>,
) -> (Vec<String>, Vec<DataType>) {
    let batches = run_with(engine, session, sql, overlay)
        .await
        .unwrap_or_else(|e| panic!("{sql} failed: {e}"));
    let batch = batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .unwrap_or_else(|| panic!("{sql} returned no rows"));
    let options = FormatOptions::default().with_null("NULL");
    let row = batch
        .columns()
        .iter()
        .map(|c| {
            ArrayFormatter::try_new(c.as_ref(), &options)
                .unwrap()
                .value(0)
                .to_string()
        })
        .collect();
    let types = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.data_type().clone())
        .collect();
    (row, types)
}

/// Asserts a query's first row, optimized (constants folded) and with the optimizer off
/// (the functions then run over their arguments as given).
async fn check(engine: &Engine, session: &Session, sql: &str, expected: &[&str]) {
    let (row, _) = first_row(engine, session, sql, &BTreeMap::new()).await;
    assert_eq!(row, expected, "{sql}");
    let off = BTreeMap::from([("datafusion.optimizer.max_passes".to_owned(), "0".to_owned())]);
    let (row, _) = first_row(engine, session, sql, &off).await;
    assert_eq!(row, expected, "{sql} without the optimizer");
}

#[tokio::test]
async fn to_json_writes_structs_maps_and_arrays_as_spark_does() {
    let engine = engine().await;
    let session = open(&engine);
    // Spark: {"a":1,"b":"x"} -- the NULL field left out.
    check(
        &engine,
        &session,
        "SELECT to_json(named_struct('a', 1, 'b', 'x', 'c', CAST(NULL AS INT)))",
        &[r#"{"a":1,"b":"x"}"#],
    )
    .await;
    // Spark: {"a":{"x":1.5,"y":[1,2]},"m":{"k":1},"d":"2024-01-02"}
    check(
        &engine,
        &session,
        "SELECT to_json(named_struct('a', named_struct('x', CAST(1.5 AS DOUBLE), 'y', \
         array(1, 2)), 'm', map('k', 1), 'd', DATE '2024-01-02'))",
        &[r#"{"a":{"x":1.5,"y":[1,2]},"m":{"k":1},"d":"2024-01-02"}"#],
    )
    .await;
    // Spark: {"t":"2024-01-02T03:04:05.123Z","dec":1.50,"big":1.0E20,"b":true,"arr":[null,1]}
    check(
        &engine,
        &session,
        "SELECT to_json(named_struct('t', TIMESTAMP '2024-01-02 03:04:05.123', \
         'dec', CAST(1.50 AS DECIMAL(5,2)), 'big', CAST(1e20 AS DOUBLE), 'b', true, \
         'arr', array(CAST(NULL AS INT), 1)))",
        &[r#"{"t":"2024-01-02T03:04:05.123Z","dec":1.50,"big":1.0E20,"b":true,"arr":[null,1]}"#],
    )
    .await;
    // Spark: [{"a":1},{"a":2}], [1,2], {"a":{"x":1}}, {"1":2}, {}, NULL.
    check(
        &engine,
        &session,
        "SELECT to_json(array(named_struct('a', 1), named_struct('a', 2))), \
         to_json(array(1, 2)), to_json(map('a', named_struct('x', 1))), to_json(map(1, 2)), \
         to_json(named_struct('a', CAST(NULL AS INT))), \
         to_json(CAST(NULL AS STRUCT<a: INT>))",
        &[
            r#"[{"a":1},{"a":2}]"#,
            "[1,2]",
            r#"{"a":{"x":1}}"#,
            r#"{"1":2}"#,
            "{}",
            "NULL",
        ],
    )
    .await;
    // Spark: {"a":{"k":null}} and {"a":[{}]}: NULL map values are written, NULL struct
    // fields left out at any depth.
    check(
        &engine,
        &session,
        "SELECT to_json(named_struct('a', map('k', CAST(NULL AS INT)))), \
         to_json(named_struct('a', array(named_struct('x', CAST(NULL AS INT)))))",
        &[r#"{"a":{"k":null}}"#, r#"{"a":[{}]}"#],
    )
    .await;
    // Spark: {"s":"q\"\\","bin":"YWI="}
    check(
        &engine,
        &session,
        r#"SELECT to_json(named_struct('s', 'q"\\', 'bin', CAST('ab' AS BINARY)))"#,
        &[r#"{"s":"q\"\\","bin":"YWI="}"#],
    )
    .await;
}

#[tokio::test]
async fn from_json_reads_structs_arrays_and_maps_as_spark_does() {
    let engine = engine().await;
    let session = open(&engine);
    // Spark: Row(a=1, b='x'); Row(a=1, b=None) for a missing field.
    check(
        &engine,
        &session,
        r#"SELECT from_json('{"a":1,"b":"x"}', 'a INT, b STRING'),
                  from_json('{"a":1}', 'struct<a:int,b:string>')"#,
        &["{a: 1, b: x}", "{a: 1, b: NULL}"],
    )
    .await;
    // Spark: [1, 2, 3]; {'a': 1, 'b': 2}; [Row(a=1), Row(a=2)].
    check(
        &engine,
        &session,
        r#"SELECT from_json('[1,2,3]', 'array<int>'),
                  from_json('{"a":1,"b":2}', 'map<string,int>'),
                  from_json('[{"a":1},{"a":2}]', 'array<struct<a:int>>')"#,
        &["[1, 2, 3]", "{a: 1, b: 2}", "[{a: 1}, {a: 2}]"],
    )
    .await;
    // Spark: Row(a=None) for malformed text (PERMISSIVE); NULL for an array or a map;
    // NULL for '' and for NULL.
    check(
        &engine,
        &session,
        "SELECT from_json('{bad', 'a INT'), from_json('bad', 'array<int>'), \
         from_json('bad', 'map<string,int>'), from_json('', 'a INT'), \
         from_json(NULL, 'a INT')",
        &["{a: NULL}", "NULL", "NULL", "NULL", "NULL"],
    )
    .await;
    // Spark: values of another type are NULL: Row(a='x', b=None); Row(a=None) for "1",
    // 1.5, true and an INT overflow; [1,"x"] as array<int> is NULL; a nested object read
    // as a STRING is its text, a number read as a STRING its digits.
    check(
        &engine,
        &session,
        r#"SELECT from_json('{"a":"x","b":"y"}', 'a STRING, b INT'),
                  from_json('{"a":"1","b":1.5,"c":true,"d":12345678901}',
                            'a INT, b INT, c INT, d INT'),
                  from_json('[1,"x"]', 'array<int>'),
                  from_json('{"a":{"b":1},"c":5}', 'a STRING, c STRING')"#,
        &[
            "{a: x, b: NULL}",
            "{a: NULL, b: NULL, c: NULL, d: NULL}",
            "NULL",
            r#"{a: {"b":1}, c: 5}"#,
        ],
    )
    .await;
    // Spark: Row(a=1.0, b=None); Decimal('1.25'); a date and a timestamp
    // (2024-01-02 03:04:05); field names match case-sensitively (Row(a=None)).
    check(
        &engine,
        &session,
        r#"SELECT from_json('{"a":1}', 'a DOUBLE, b DATE'),
                  from_json('{"a":1.25}', 'a DECIMAL(5,2)'),
                  from_json('{"a":"2024-01-02","t":"2024-01-02T03:04:05.000Z"}',
                            'a DATE, t TIMESTAMP'),
                  from_json('{"A":1}', 'a INT')"#,
        &[
            "{a: 1.0, b: NULL}",
            "{a: 1.25}",
            "{a: 2024-01-02, t: 2024-01-02T03:04:05}",
            "{a: NULL}",
        ],
    )
    .await;
}

#[tokio::test]
async fn from_json_keeps_what_spark_keeps_of_a_bad_value() {
    let engine = engine().await;
    let session = open(&engine);
    // Spark: Row(a=None) (an array with a value of another type is NULL as a whole);
    // Row(m=None, n=1); Row(a=Row(b=None)) (a struct keeps the fields it could read);
    // None for an array holding a non-struct.
    check(
        &engine,
        &session,
        r#"SELECT from_json('{"a":[1,"x"]}', 'a array<int>'),
                  from_json('{"m":{"k":"x"},"n":1}', 'm map<string,int>, n int'),
                  from_json('{"a":{"b":"x"}}', 'a struct<b:int>'),
                  from_json('[{"a":1},"x"]', 'array<struct<a:int>>')"#,
        &["{a: NULL}", "{m: NULL, n: 1}", "{a: {b: NULL}}", "NULL"],
    )
    .await;
    // Spark: Row(a=None) for JSON null and for 5; Row(a=1) with text after the value;
    // Row(a=2) for a repeated key; Decimal('2.00') (half up) and None beyond the
    // precision; 100.0 and NaN; a number read as a TIMESTAMP is seconds since 1970
    // (2023-11-14 22:13:20 in a UTC session).
    check(
        &engine,
        &session,
        r#"SELECT from_json('null', 'a INT'), from_json('5', 'a INT'),
                  from_json('{"a":1} x', 'a INT'), from_json('{"a":1,"a":2}', 'a INT'),
                  from_json('{"a":1.999,"b":12345.5}', 'a DECIMAL(5,2), b DECIMAL(5,2)'),
                  from_json('{"a":1e2,"b":"NaN"}', 'a DOUBLE, b DOUBLE'),
                  from_json('{"a":1700000000}', 'a TIMESTAMP')"#,
        &[
            "{a: NULL}",
            "{a: NULL}",
            "{a: 1}",
            "{a: 2}",
            "{a: 2.00, b: NULL}",
            "{a: 100.0, b: NaN}",
            "{a: 2023-11-14T22:13:20}",
        ],
    )
    .await;
}

#[tokio::test]
async fn from_json_types_its_result_from_the_schema() {
    let engine = engine().await;
    let session = open(&engine);
    let (row, types) = first_row(
        &engine,
        &session,
        r#"SELECT from_json('{"a":{"x":[1,2]},"b":true}', 'a struct<x:array<int>>, b boolean'),
                  from_json('{"a":1}', 'a BIGINT, b SMALLINT')['a']"#,
        &BTreeMap::new(),
    )
    .await;
    // Spark: Row(a=Row(x=[1, 2]), b=True), struct<a:struct<x:array<int>>,b:boolean>; 1.
    assert_eq!(row, ["{a: {x: [1, 2]}, b: true}", "1"]);
    assert_eq!(types[1], DataType::Int64);
    let DataType::Struct(fields) = &types[0] else {
        panic!("from_json gave {:?}", types[0]);
    };
    assert_eq!(fields[0].name(), "a");
    assert_eq!(fields[1].data_type(), &DataType::Boolean);
}

#[tokio::test]
async fn from_json_reads_back_what_to_json_writes() {
    let engine = engine().await;
    let session = open(&engine);
    // Spark: Row(a=1, b=[1, 2], c={'k': datetime.date(2024, 1, 2)}).
    check(
        &engine,
        &session,
        "SELECT from_json(to_json(named_struct('a', 1, 'b', array(1, 2), 'c', \
         map('k', DATE '2024-01-02'))), 'a INT, b ARRAY<INT>, c MAP<STRING, DATE>')",
        &["{a: 1, b: [1, 2], c: {k: 2024-01-02}}"],
    )
    .await;
    // Over a table's rows, not constants.
    let (row, _) = first_row(
        &engine,
        &session,
        "SELECT from_json(to_json(s), 'x INT, y STRING')['y'] \
         FROM (VALUES (named_struct('x', 1, 'y', 'one'))) t(s)",
        &BTreeMap::new(),
    )
    .await;
    assert_eq!(row, ["one"]);
}

#[tokio::test]
async fn from_json_refuses_a_schema_it_cannot_read_at_planning() {
    let engine = engine().await;
    let session = open(&engine);
    let refused = error(
        &engine,
        &session,
        "SELECT from_json(j, s) FROM (VALUES ('{}', 'a INT')) t(j, s)",
    )
    .await
    .to_string();
    assert!(
        refused.contains("from_json takes its schema as a string literal"),
        "{refused}"
    );
    let refused = error(&engine, &session, "SELECT from_json('{}', 'a NOSUCHTYPE(')")
        .await
        .to_string();
    assert!(
        refused.contains("from_json cannot read the schema"),
        "{refused}"
    );
    let refused = error(
        &engine,
        &session,
        "SELECT from_json('{}', 'a INT', map('mode', 'FAILFAST'))",
    )
    .await
    .to_string();
    assert!(refused.contains("no options map"), "{refused}");
    let refused = error(&engine, &session, "SELECT to_json(1)")
        .await
        .to_string();
    assert!(refused.contains("to_json takes"), "{refused}");
}
